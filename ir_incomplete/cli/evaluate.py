"""``ir_incomplete QRELS RUN [RUN ...] MEASURE [MEASURE ...]``: the evaluation command (see
:mod:`ir_incomplete.cli` for its output)."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from ir_incomplete.cli.common import (
    DEFAULT_PLACES,
    EXIT_DATA,
    OUTPUT_FORMATS,
    PROG,
    SUMMARY_QID,
    CliError,
    Parser,
    check_input_file,
    leading_paths,
    one_line,
    places_format,
    read_input,
    run_command,
    runs_and_measures,
    version,
)
from ir_incomplete.data import NEGATIVE_POLICIES, SCORE_PRECISIONS

__all__ = ["evaluation_main"]


_DESCRIPTION = """\
Evaluate one or several TREC runs with ir_measures' measures and ir_incomplete's measures for incomplete
judgments (e.g. infAP(c=1.5)@10). After QRELS, every argument that names an existing file or directory
is a run (a directory stands for all files in it); the remaining arguments are measure strings (one
argument may hold several, separated by spaces: 'AP P@5').

subcommands:
  ir_incomplete measures [--format text|markdown]
                        list every ir_incomplete measure with its parameters, defaults and a description
  ir_incomplete robustness ...
                        judgment-degradation experiments (see 'ir_incomplete robustness --help')
  ir_incomplete compare ...
                        runs against a baseline or pair by pair, with significance tests, as a
                        markdown, LaTeX or TSV table (see 'ir_incomplete compare --help')
  ir_incomplete pool --runs DIR --method depth --depth 10
                        a pool or a stratified sample (see 'ir_incomplete pool --help')
  ir_incomplete agreement A B [--runs DIR]
                        agreement of two judgment sets (kappa, alpha, leaderboard tau)
  ir_incomplete ppi QRELS PREDICTIONS RUN... MEASURE...
                        prediction-powered estimates and intervals (see 'ir_incomplete ppi --help')
  ir_incomplete sample RUN... --budget N
                        a probability sample of pairs to judge, with inclusion probabilities
  ir_incomplete estimate QRELS DESIGN RUN... MEASURE...
                        design-based estimates with confidence intervals from the judged sample
"""


#: what the intervals of the bootstrapped measures are: in --interval's help, and on stderr when they are
#: printed (the manual's TREC-COVID table, docs/measured.rst, "Automatic labels on TREC-COVID, measured")
BOOT_INTERVAL_NOTE = (
    "the intervals of bootstrapped measures (BootNDCG, BootAP, BootP, BootRBP, BootQ) are the spread of the "
    "measure under its prior's model of the unjudged documents, not error bars for the value on complete "
    "judgments: on TREC-COVID round 1, 90% intervals of BootNDCG@10 / BootAP@100 contained the "
    "complete-judgment value for 12% / 0% of the runs with the pool+run prior (27% / 16% with "
    "prior=predicted); for error bars, judge a probability sample: 'ir_incomplete sample' and "
    "'ir_incomplete estimate'"
)


_EPILOG = """\
With one run the output is that of the ir_measures command line (measure, value; with -q:
query_id, measure, value and the 'all' summary lines); with several runs the run name comes first.
Measures with more than one number per query add them after the value: RBPResidual lines end in
value, residual, upper (tsv columns; "residual" and "upper" keys in jsonl). --header (tsv) prints a
first line naming the columns; with --header or --interval every line has all of them (empty where a
measure has no such number).
Exit codes: 0 success; 2 usage or data error (bad option or measure string, missing, unreadable or
malformed qrels/run, nothing to evaluate); 1 output not written (closed pipe). A qrels file named like
a subcommand can be given as ./measures.
"""


def _evaluation_parser() -> Parser:
    parser = Parser(
        prog=PROG,
        usage=f"{PROG} [options] QRELS RUN [RUN ...] MEASURE [MEASURE ...]\n"
        f"       {PROG} {{measures,robustness,compare,pool,agreement,judge-next,ppi,sample,estimate}} ...",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "qrels", metavar="QRELS", help="TREC qrels file, or sampled qrels with a stratum column (.gz allowed)"
    )
    parser.add_argument(
        "items", nargs="+", metavar="RUN... MEASURE", help="run files or directories of run files, then measure strings"
    )
    parser.add_argument("-q", "--by_query", action="store_true", help="output one line per query")
    parser.add_argument("-n", "--no_summary", action="store_true", help="with -q: omit the 'all' summary lines")
    parser.add_argument(
        "-p",
        "--places",
        type=int,
        default=DEFAULT_PLACES,
        help="decimal places of tsv output (default 4; -1: full precision)",
    )
    parser.add_argument(
        "-o", "--output_format", choices=OUTPUT_FORMATS, default="tsv", help="output format (default tsv)"
    )
    parser.add_argument(
        "--negative",
        choices=NEGATIVE_POLICIES,
        default="pooled_unjudged",
        help="meaning of negative qrels grades: pooled but unjudged (default, as trec_eval) or nonrelevant",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on stderr (default: when stderr is a terminal and the evaluation takes more than 2 s)",
    )
    parser.add_argument(
        "--score-precision",
        dest="score_precision",
        choices=SCORE_PRECISIONS,
        default="float32",
        help="precision in which run scores are compared when ranking for "
        "ir_incomplete's measures (default float32, as trec_eval 9 / pytrec_eval; "
        "measures computed by ir_measures always use their provider's ranking)",
    )
    parser.add_argument(
        "--topics",
        choices=("qrels", "run"),
        default="qrels",
        help="queries reported and averaged: every query of the qrels, unanswered = 0 (default, as "
        "ir_measures and trec_eval -c), or only those the run answers (trec_eval without -c, sample_eval)",
    )
    parser.add_argument(
        "--predictions",
        metavar="FILE",
        default=None,
        help="predicted grades for prior=predicted (a qrels file, a table with a header: query_id doc_id "
        "relevance [p0 p1 ...], or parquet); a measure that names its own file (predictions='FILE') reads that one",
    )
    parser.add_argument(
        "--interval",
        type=float,
        default=None,
        metavar="LEVEL",
        help="add lo and hi columns (tsv) or keys (jsonl): the central interval of this level (e.g. 0.9) of "
        "every bootstrapped measure, per query and for the summary, extended to the value where the value lies "
        "outside it; empty (tsv) or null (jsonl) elsewhere. Note: " + BOOT_INTERVAL_NOTE.replace("%", "%%"),
    )
    parser.add_argument(
        "--header",
        action="store_true",
        help="tsv: print a first line naming the columns ([run] [query_id] measure value [extra columns] "
        "[lo hi]); every line then has all of them, empty where a measure has no such number",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    return parser


def _aggregate(per_query, measures):
    """``run, measure, value`` summaries with each measure's ``ir_measures`` aggregator (the mean for
    most measures, the sum for ``NumRet``, ``NumRel``, ``NumQ``)."""
    import numpy as np
    import pandas as pd
    from ir_measures.measures.base import MeanAgg, SumAgg

    keys = [per_query["run"], per_query["measure"]]
    grouped = per_query["value"].groupby(keys, sort=False)
    summary = grouped.agg(["sum", "size"]).reset_index()
    summary.columns = ["run", "measure", "sum", "count"]
    # as in ir_measures' aggregators, one NaN value makes the summary NaN
    has_nan = per_query["value"].isna().groupby(keys, sort=False).any().to_numpy()
    summary.loc[has_nan, "sum"] = float("nan")
    by_name = {repr(m): m for m in measures}
    kinds = {}
    for name, measure in by_name.items():
        agg = measure.aggregator()
        kinds[name] = "mean" if type(agg) is MeanAgg else "sum" if type(agg) is SumAgg else "other"
    kind = summary["measure"].map(kinds)
    values = (summary["sum"] / summary["count"]).where(kind == "mean", summary["sum"])
    summary["value"] = values.astype(float)
    extras = [c for c in per_query.columns if c not in ("run", "query_id", "measure", "value")]
    for name in extras:  # a measure's extra columns are aggregated as its value (RBPResidual: the mean)
        grouped_extra = per_query[name].groupby(keys, sort=False)
        mean, total = grouped_extra.mean().to_numpy(), grouped_extra.sum(min_count=1).to_numpy()
        summary[name] = np.where(kind == "mean", mean, np.where(kind == "sum", total, np.nan))
    others = summary.index[kind == "other"]
    for i in others:  # measures with a custom aggregator: feed it the per-query values
        run, name = summary.at[i, "run"], summary.at[i, "measure"]
        agg = by_name[name].aggregator()
        for value in per_query.loc[(per_query["run"] == run) & (per_query["measure"] == name), "value"]:
            agg.add(float(value))
        summary.at[i, "value"] = float(agg.result())
    columns = {"run": summary["run"], "query_id": SUMMARY_QID, "measure": summary["measure"]}
    return pd.DataFrame({**columns, **{name: summary[name] for name in ["value", *extras]}})


def _order_per_query(frame, measures, run_names):
    """Rows ordered run by run, query by query (first-appearance order), measures in argument order."""
    import numpy as np

    m_rank = frame["measure"].map({repr(m): i for i, m in enumerate(measures)}).to_numpy()
    r_rank = frame["run"].map({n: i for i, n in enumerate(run_names)}).to_numpy()
    q_rank = frame["query_id"].factorize()[0]
    order = np.lexsort((m_rank, q_rank, r_rank))
    return frame.iloc[order].reset_index(drop=True)


def _check_json_values(values: list[float], runs, qids, names, multi_run: bool, by_query: bool) -> None:
    """``-o jsonl`` writes only finite values: JSON has no NaN or infinity (Python's ``json`` would write
    ``NaN``, which JSON readers reject), so a value that is not finite is a ``CliError`` (exit 2) naming
    the first one; ``-o tsv`` prints it (``nan``, ``inf``), as ``ir_measures`` does."""
    import numpy as np

    bad = np.flatnonzero(~np.isfinite(np.asarray(values, dtype=float)))
    if not len(bad):
        return
    i = int(bad[0])
    where = ([f"run {runs[i]!r}"] if multi_run else []) + ([f"query {qids[i]!r}"] if by_query else [])
    place = f" ({', '.join(where)})" if where else ""
    raise CliError(
        f"cannot write {len(bad)} value(s) that are not finite numbers as JSON, which has no NaN or "
        f"infinity: the first is {names[i]}{place} = {values[i]}; use -o tsv to see them",
        EXIT_DATA,
    )


def _lines(frame, args, multi_run: bool, by_query: bool, extras: dict[str, tuple[str, ...]]) -> list[str]:
    """Output lines of ``frame``; ``extras``: the extra columns of each measure that has any
    (:func:`ir_incomplete.api.extra_columns`), printed after its value."""
    import json

    values = frame["value"].astype(float).tolist()
    bounds = None
    if "lo" in frame.columns:  # --interval
        bounds = list(zip(frame["lo"].astype(float).tolist(), frame["hi"].astype(float).tolist(), strict=True))
    runs = frame["run"].astype(str).tolist()
    qids = frame["query_id"].astype(str).tolist()
    names = frame["measure"].astype(str).tolist()
    columns = {c: frame[c].astype(float).tolist() for c in _extra_names(extras)}
    more = [[(c, columns[c][i]) for c in extras.get(name, ())] for i, name in enumerate(names)]
    if args.output_format == "jsonl":
        _check_json_values(values, runs, qids, names, multi_run, by_query)
        out: list[str] = []
        for run, qid, name, value, fields in zip(runs, qids, names, values, more, strict=True):
            record = {"run": run} if multi_run else {}
            if by_query:
                record["query_id"] = qid
            record["measure"] = name
            record["value"] = value
            record.update((key, None if x != x else x) for key, x in fields)  # NaN: null
            if bounds is not None:
                lo, hi = bounds[len(out)]
                record["lo"] = None if lo != lo else lo  # NaN: no interval for this measure
                record["hi"] = None if hi != hi else hi
            out.append(json.dumps(record, allow_nan=False))
        return out
    spec = places_format(args.places)
    if _fixed_columns(args):  # every line has every extra column, empty where the measure has none
        every = _extra_names(extras)
        more = [
            [(c, columns[c][i]) if c in extras.get(name, ()) else (c, None) for c in every]
            for i, name in enumerate(names)
        ]
    texts = [
        "\t".join([format(v, spec), *("" if x is None else format(x, spec) for _, x in fields)])
        for v, fields in zip(values, more, strict=True)
    ]
    parts = ([runs] if multi_run else []) + ([qids] if by_query else []) + [names, texts]
    if bounds is not None:  # every line ends in lo, hi (empty for measures without an interval)
        parts.append(["" if lo != lo else format(lo, spec) for lo, _ in bounds])
        parts.append(["" if hi != hi else format(hi, spec) for _, hi in bounds])
    lines = ["\t".join(line) for line in zip(*parts, strict=True)]
    if args.header:
        interval = ["lo", "hi"] if bounds is not None else []
        head = (["run"] if multi_run else []) + (["query_id"] if by_query else [])
        lines.insert(0, "\t".join([*head, "measure", "value", *_extra_names(extras), *interval]))
    return lines


def _fixed_columns(args) -> bool:
    """True when every tsv line carries the same columns (``--header`` or ``--interval``): the extra
    columns of every measure, empty on the lines of measures without them, then ``lo``/``hi``."""
    return bool(args.header) or args.interval is not None


def _extra_names(extras: dict[str, tuple[str, ...]]) -> list[str]:
    """Every extra column name of ``extras``, once, in order of first appearance."""
    return list(dict.fromkeys(c for names in extras.values() for c in names))


def _evaluate(args) -> list[str]:
    from ir_incomplete.data.prefetch import Prefetch, regular_files
    from ir_incomplete.data.readers import _read_trec_any

    if args.no_summary and not args.by_query:
        raise CliError("--no_summary (-n) only works together with --by_query (-q)")
    places_format(args.places)  # checked before the work
    if args.header and args.output_format != "tsv":
        raise CliError("--header only works with -o tsv (jsonl records name their fields)")
    check_input_file(args.qrels, "qrels")
    # the files are read in the background while the rest is imported and checked (see Prefetch);
    # _read_trec_any gives a pyarrow Table when pyarrow reads the file: no str object per line
    files = [(args.qrels, "qrels")] + [(p, "run") for p in regular_files(leading_paths(args.items))]
    with Prefetch([(file, partial(_read_trec_any, *file)) for file in files]) as prefetch:

        def reader(kind: str) -> Callable[[str], Any]:  # reads a file of ``kind``, prefetched or not
            return lambda path: prefetch.take((path, kind), partial(_read_trec_any, path, kind))

        return _evaluate_read(args, reader("qrels"), reader("run"))


def _evaluate_read(args, read_trec_qrels, read_trec_run) -> list[str]:
    from ir_incomplete.api import DEFAULT_CHUNK_ROWS, _evaluate_with_intervals, _with_run_intervals, extra_columns

    run_files, measures = runs_and_measures(args.items, "QRELS RUN [RUN ...] MEASURE ...", read_trec_run)
    if args.output_format == "jsonl" and args.places != DEFAULT_PLACES:
        sys.stderr.write("--places is ignored when using --output_format jsonl\n")

    qrels = read_input(read_trec_qrels, args.qrels, "qrels")
    if len(qrels) == 0:
        raise CliError(f"qrels file {args.qrels!r} holds no judgments: nothing could be evaluated", EXIT_DATA)
    if args.interval is not None and not 0.0 < args.interval < 1.0:
        raise CliError(f"--interval must be strictly between 0 and 1, e.g. 0.9 (got {args.interval})")
    predictions = None
    if args.predictions is not None:
        from ir_incomplete.predictions import read_predictions

        check_input_file(args.predictions, "predictions")  # a named pipe is read once, as runs are
        predictions = read_input(read_predictions, args.predictions, "predictions")
    # trec_eval evaluates only the queries its qrels judge, and so do our measures: when every measure is
    # ours, the rows of other queries are dropped as each run is read (see _judged_rows)
    queries = _judged_queries(qrels, measures)
    runs = {
        name: read_input(partial(_read_judged_run, read_trec_run, queries), path, "run")
        for name, path in run_files.items()
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            per_query, bounds = _evaluate_with_intervals(
                runs,
                qrels,
                measures,
                args.negative,
                args.score_precision,
                args.topics,
                DEFAULT_CHUNK_ROWS,
                predictions,
                args.interval,
                progress=args.progress,
            )
        except (ValueError, TypeError, NameError) as exc:
            raise CliError(one_line(exc), EXIT_DATA) from None
    for warning in dict.fromkeys(one_line(w.message) for w in caught):  # each once, in order
        sys.stderr.write(f"{PROG}: warning: {warning}\n")
    if args.interval is not None and _bootstrapped(measures):  # stdout stays one table: the note is on stderr
        sys.stderr.write(f"{PROG}: note: {BOOT_INTERVAL_NOTE}\n")
    if per_query.empty:
        raise CliError("nothing could be evaluated (no query of the qrels has a judgment)", EXIT_DATA)
    names = list(runs)
    multi_run = len(names) > 1
    extras = extra_columns(measures)
    interval = ["lo", "hi"] if args.interval is not None else []
    per_query = per_query[["run", "query_id", "measure", "value", *_extra_names(extras), *interval]]

    def summarize(frame):
        summary = _aggregate(frame, measures)
        if args.interval is not None:  # the intervals of the replicate means, extended to the value
            summary = _with_run_intervals(summary, bounds)
        return summary

    if not args.by_query:
        return _lines(summarize(per_query), args, multi_run, False, extras)
    per_query = _order_per_query(per_query, measures, names)
    if args.no_summary:
        return _lines(per_query, args, multi_run, True, extras)
    import pandas as pd

    summary = summarize(per_query)
    blocks = []
    for name in names:  # per run: its per-query lines, then its summary lines
        blocks.append(per_query[per_query["run"] == name])
        blocks.append(summary[summary["run"] == name])
    return _lines(pd.concat(blocks, ignore_index=True), args, multi_run, True, extras)


def _bootstrapped(measures) -> bool:
    """Whether any of ``measures`` is a bootstrapped one (whose ``--interval`` is a prior's spread)."""
    from ir_incomplete.bootstrap import is_bootstrapped

    return any(is_bootstrapped(m) for m in measures)


def _judged_queries(qrels, measures):
    """The distinct query ids of ``qrels`` as an Arrow string array when the rows of a run's other
    queries can be dropped as soon as it is read: every measure is computed here (``ir_measures``' other
    providers get every row, as they always did) and the qrels were read by pyarrow with string query
    ids. ``None`` otherwise (the runs are kept whole; the evaluation drops those rows itself), and with a
    design-based measure (``StatAP``, …): its estimate reads the runs' top ``depth`` of every query of the
    design, also of a query the qrels do not judge, as :func:`ir_incomplete.estimate` does."""
    from ir_incomplete.incomplete_provider import as_incomplete, computable, is_design_based

    if not (_string_query_table(qrels) and all(computable(m) for m in measures)):
        return None
    if any(is_design_based(as_incomplete(m)) for m in measures):
        return None
    import pyarrow.compute as pc

    return pc.unique(qrels.column("query_id"))


def _read_judged_run(read_trec_run: Callable[[str], Any], queries, path: str) -> Any:
    """The run file ``path`` read by ``read_trec_run``, without the rows of queries outside ``queries``
    (:func:`_judged_rows`) when it is a TREC text file: its reader has checked every row already (ids
    present, scores finite). A parquet file is returned whole, so that the evaluation checks every row
    and names the bad one as it always did."""
    from ir_incomplete.data.readers import _is_parquet

    if not isinstance(path, (str, os.PathLike)):  # read already (a table of a parquet file or a pipe)
        return read_trec_run(path)
    return _judged_rows(partial(read_trec_run, path), None if _is_parquet(path) else queries)


def _judged_rows(read: Callable[[], Any], queries) -> Any:
    """``read()`` (a run as :func:`~ir_incomplete.data.readers._read_trec_any` gives it) without the rows
    of queries outside ``queries`` (:func:`_judged_queries`; ``None``: as read) when it is a pyarrow Table
    with string query ids; anything else is returned as read.

    Every measure's value of a judged query depends on that query's rows alone, and the evaluation drops
    the rows of unjudged queries anyway (reporting every query of the qrels), so the output is the same;
    dropping them here, before the conversion, saves converting, hashing and ordering them. The rows
    kept stay in file order. The table is filtered one record batch at a time, each batch released once
    filtered (``read`` is called here so that no caller holds the whole table): the peak is the table
    read plus one batch, not two tables."""
    table = read()
    if queries is None or not _string_query_table(table):
        return table
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = table.schema
    value_set = queries.cast(schema.field("query_id").type)
    position = schema.get_field_index("query_id")
    batches = table.to_batches()
    del table
    # a run none of whose queries is judged keeps its first row: it is scored as it always was (zeros,
    # or refused with --topics run), not taken for a run that retrieves nothing
    first = batches[0].slice(0, 1) if batches else None
    kept = []
    for i in range(len(batches)):
        batch, batches[i] = batches[i], None
        mask = pc.is_in(batch.column(position), value_set=value_set)
        n_kept = pc.sum(mask).as_py() or 0
        if n_kept == batch.num_rows:
            kept.append(batch)
        elif n_kept:
            kept.append(batch.filter(mask))
        del batch, mask
    if not kept and first is not None and first.num_rows:
        kept.append(first)
    return pa.Table.from_batches(kept, schema=schema)


def _string_query_table(table) -> bool:
    """Whether ``table`` is a pyarrow Table with a ``query_id`` column of strings."""
    from ir_incomplete.data.ids import is_arrow_table

    if not is_arrow_table(table) or table.schema.get_field_index("query_id") < 0:
        return False
    import pyarrow as pa

    kind = table.schema.field("query_id").type
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def evaluation_main(argv: Sequence[str]) -> int:
    """``ir_incomplete QRELS RUN [RUN ...] MEASURE [MEASURE ...]``; returns the exit code."""
    return run_command(_evaluation_parser(), _evaluate, argv)
