"""The ``ir_incomplete`` command line (also ``python -m ir_incomplete``).

Evaluation (the ``ir_measures`` command line with this package's measures loaded, plus several runs at
once)::

    ir_incomplete QRELS RUN [RUN ...] MEASURE [MEASURE ...] [-q] [-n] [-p PLACES] [-o tsv|jsonl]
                  [--negative pooled_unjudged|zero] [--score-precision float32|float64]
                  [--predictions FILE] [--interval LEVEL] [--header]

After ``QRELS``, the leading arguments that name existing files or directories are runs (a directory
stands for every non-hidden file in it; a run is named after its file, without ``.gz`` or ``.parquet``;
``*.parquet`` files hold ``query_id/doc_id/score`` or ``qid/docno/score`` columns, and with a ``run``
column one run per value); the remaining
arguments are measure strings. One argument may hold several measures separated by whitespace
(``'AP P@5'``), as with ``ir_measures``. With exactly one run the output is exactly ``ir_measures``'
(``measure<TAB>value``; with ``-q`` ``query_id<TAB>measure<TAB>value`` followed by the ``all`` summary
lines unless ``-n``); with several runs the run name comes first on each line (and as a ``"run"`` key
in ``jsonl``). Measures are printed in their canonical form (their ``repr``). ``--interval 0.9`` adds two
columns (tsv) or keys (jsonl), ``lo`` and ``hi``: the 90 % interval of every bootstrapped measure (per
query: percentiles of its replicates; summary lines: percentiles of the replicate means), empty (tsv)
or ``null`` (jsonl) for other measures. ``--header`` (tsv only) prints a first line naming the columns:
``[run] [query_id] measure value [extra columns] [lo hi]``. With ``--header`` or ``--interval`` every
tsv line has every column (those of ``evaluate``'s table), empty where a measure has no such number, so
that ``pandas.read_csv(sep="\t")`` and ``awk`` read one rectangular table. ``--predictions FILE``
passes predicted grades to the measures with ``prior=predicted`` that name no file themselves
(``BootAP(prior=predicted,predictions='FILE')@100`` reads its own).

Measures that report more than one number per query (their ``EXTRA_COLUMNS``, see
:mod:`ir_incomplete.measures.base`) print them after the value: ``RBPResidual`` lines read
``measure<TAB>value<TAB>residual<TAB>upper`` in tsv and carry ``"residual"`` and ``"upper"`` keys in
``jsonl``; the ``all`` lines hold their means over the queries, like the value. The lines of every other
measure are unchanged.

Subcommands::

    ir_incomplete measures [--format text|markdown]   every measure, its parameters and defaults
    ir_incomplete robustness ...                       judgment-degradation experiments
    ir_incomplete compare ...                          significance tests against a baseline or between
                                                       all pairs of runs (ir_incomplete.report)
    ir_incomplete pool --runs DIR --method depth ...   pools and stratified samples (ir_incomplete.judging)
    ir_incomplete agreement A B [--runs DIR]           agreement of two judgment sets
    ir_incomplete judge-next ...                       the (query, document) pairs to judge next
    ir_incomplete ppi QRELS PREDICTIONS RUN... MEASURE...  prediction-powered estimates and intervals

With ``-o jsonl`` every value must be a finite number (JSON has no NaN or infinity): a value that is
not is an error (exit 2) naming it, never ``NaN`` in the output; ``-o tsv`` prints it as ``nan``.

Exit codes: 0 success; 2 usage and data errors (bad options, a bad measure string, a missing file, an
unreadable, truncated or malformed qrels or run file, qrels with nothing to evaluate, a value that is
not finite with ``-o jsonl``, a failure of another ``ir_measures`` provider); 1 only when the
output could not be written (e.g. a closed pipe). Errors are one line on stderr, never a traceback:
``ir_incomplete: error: <message>``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ir_incomplete.data import NEGATIVE_POLICIES, SCORE_PRECISIONS
from ir_incomplete.measure_listing import measure_example, measure_rows, measures_main

if TYPE_CHECKING:
    import ir_measures

__all__ = [
    "main",
    "evaluation_main",
    "measures_main",
    "measure_example",
    "measure_rows",
    "robustness_main",
    "compare_main",
    "pool_main",
    "agreement_main",
    "judge_next_main",
    "SUBCOMMANDS",
    "split_measure_args",
    "measure_error_message",
]

PROG = "ir_incomplete"
DEFAULT_PLACES = 4
SUMMARY_QID = "all"
OUTPUT_FORMATS = ("tsv", "jsonl")
EXIT_DATA = 2  # unreadable or malformed input: reported like a usage error (documented exit code 2)
EXIT_USAGE = 2
EXIT_OUTPUT = 1  # the output could not be written (e.g. a closed pipe)


class CliError(Exception):
    """An error reported as one ``ir_incomplete: error: ...`` line (``usage`` also prints the usage)."""

    def __init__(self, message: str, code: int = EXIT_USAGE, usage: str | None = None):
        super().__init__(message)
        self.code = code
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that raises :class:`CliError` instead of exiting, so that :func:`main`
    returns the exit code."""

    def error(self, message):
        raise CliError(message, EXIT_USAGE, usage=self.format_usage())

    def exit(self, status=0, message=None):
        if message:
            sys.stderr.write(message)
        raise _Exit(status)


class _Exit(Exception):
    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


def _one_line(text) -> str:
    return " ".join(str(text).split())


#: errors of bad input (the grammar's MeasureSyntaxError is a ValueError) reported as one line, exit 2
_INPUT_ERRORS = (ValueError, TypeError, OSError, NameError, UnicodeDecodeError, RecursionError)
_MAX_MESSAGE = 500  # characters of an error message printed at most


def _as_cli_error(exc: BaseException) -> CliError:
    message = _one_line(exc) or type(exc).__name__
    if len(message) > _MAX_MESSAGE:
        message = message[: _MAX_MESSAGE - 3] + "..."
    return CliError(message, EXIT_USAGE)


def _report(error: CliError) -> int:
    if error.usage:
        sys.stderr.write(error.usage)
    sys.stderr.write(f"{PROG}: error: {_one_line(error)}\n")
    return error.code


# ---------------------------------------------------------------------------------------------------
# measure arguments
# ---------------------------------------------------------------------------------------------------
_OPEN = {"(": ")", "{": "}", "[": "]"}


def split_measure_args(args: Sequence[str]) -> list[str]:
    """Split measure arguments on whitespace that lies outside brackets and quotes.

    ``['AP P@5', 'infAP(c=1.5, eps=1e-4)']`` gives ``['AP', 'P@5', 'infAP(c=1.5, eps=1e-4)']`` (plain
    whitespace splitting, as ``ir_measures``' command line does, would cut the last one in two).
    """
    out: list[str] = []
    for arg in args:
        depth, quote, current = 0, None, []
        i = 0
        while i < len(arg):
            ch = arg[i]
            if quote:
                current.append(ch)
                if ch == "\\" and i + 1 < len(arg):
                    current.append(arg[i + 1])
                    i += 1
                elif ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
                current.append(ch)
            elif ch in _OPEN:
                depth += 1
                current.append(ch)
            elif ch in _OPEN.values():
                depth = max(depth - 1, 0)
                current.append(ch)
            elif ch.isspace() and depth == 0:
                if current:
                    out.append("".join(current))
                current = []
            else:
                current.append(ch)
            i += 1
        if current:
            out.append("".join(current))
    return out


def measure_error_message(token: str, error: BaseException) -> str:
    """The one-line message for the measure string ``token`` that could not be read: the error's text,
    led by ``measure '<token>': `` unless the text already quotes the token (the ``ir_measures`` command
    prints the same text when this package is loaded there)."""
    from ir_incomplete.grammar import excerpt

    message = _one_line(error) or type(error).__name__
    if token not in message and not message.startswith("cannot parse measure"):
        message = f"measure {excerpt(token, width=60)}: {message}"
    return message


def _parse_measures(args: Sequence[str]) -> list:
    """Measure objects of the measure arguments, without duplicates, in order (``CliError`` code 2)."""
    from ir_incomplete.grammar import parse
    from ir_incomplete.trec_names import trec_eval_equivalent, trec_eval_note

    tokens = split_measure_args(args)
    if not tokens:
        raise CliError("no measures given (e.g. 'AP' 'infAP(c=1.5)@10'); see 'ir_incomplete measures'")
    measures: list[ir_measures.Measure] = []
    for token in tokens:
        try:
            measure = parse(token)
        except (ValueError, NameError) as exc:
            trec = trec_eval_equivalent(token)  # trec_eval's names (P_5, ndcg_cut_10, map) are accepted
            if trec:
                sys.stderr.write(f"{PROG}: {trec_eval_note(token, trec)}\n")
                measures.extend(m for m in dict.fromkeys(trec) if m not in measures)
                continue
            message = measure_error_message(token, exc)
            if ("/" in token or os.sep in token) and "(" not in token:
                message += " (no file or directory of that name exists either)"
            raise CliError(message, EXIT_USAGE) from None
        if measure not in measures:
            measures.append(measure)
    return measures


# ---------------------------------------------------------------------------------------------------
# evaluation
# ---------------------------------------------------------------------------------------------------
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
"""

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


def _evaluation_parser() -> _Parser:
    parser = _Parser(
        prog=PROG,
        usage=f"{PROG} [options] QRELS RUN [RUN ...] MEASURE [MEASURE ...]\n"
        f"       {PROG} {{measures,robustness,compare,pool,agreement,judge-next,ppi}} ...",
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
        "every bootstrapped measure, per query and for the summary; empty (tsv) or null (jsonl) elsewhere",
    )
    parser.add_argument(
        "--header",
        action="store_true",
        help="tsv: print a first line naming the columns ([run] [query_id] measure value [extra columns] "
        "[lo hi]); every line then has all of them, empty where a measure has no such number",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    return parser


def _version() -> str:
    from ir_incomplete import __version__

    return __version__


def _collect_runs(paths: Sequence[str], read_run: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """``{run name: path}`` of run files and directories; two different files of one name are an error.
    A file read at once is there as its table: a parquet file with a ``run`` column (one run per value)
    or a file that can be read only once (a named pipe), read by ``read_run`` (default: the package's
    run reader)."""
    from ir_incomplete.api import _run_mapping

    runs: dict[str, Any] = {}
    origins: dict[str, str] = {}  # the file (or argument) each run comes from
    for path in paths:
        try:
            found = _run_mapping(path, read_run)
        except (ValueError, OSError) as exc:  # e.g. two files of one name in a directory
            raise CliError(_one_line(exc), EXIT_USAGE) from None
        if os.path.isdir(path) and not found:
            raise CliError(f"directory {path!r} holds no run files")
        for name, run in found.items():
            origin = run if isinstance(run, str) else path
            if name in runs:
                if isinstance(run, str) and isinstance(runs[name], str):
                    if os.path.realpath(runs[name]) == os.path.realpath(run):
                        continue
                raise CliError(
                    f"two runs are named {name!r} ({origins[name]!r} and {origin!r}); run names come from "
                    f"file names (or from the 'run' column of a parquet file), so rename one"
                )
            runs[name], origins[name] = run, origin
    return runs


def _read(reader, path: Any, what: str):
    """``reader(path)`` with its errors as one line (exit 2); a run already read (not a path) as it is."""
    if not isinstance(path, (str, os.PathLike)):
        return path
    try:
        return reader(path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        detail = _one_line(exc) or type(exc).__name__
        message = detail if os.fspath(path) in detail else f"cannot read {what} file {path!r}: {detail}"
        raise CliError(message, EXIT_DATA) from None


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
    spec = "" if args.places == -1 else f".{args.places}f"
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
    if args.places < -1:
        raise CliError(f"--places must be >= 0, or -1 for full precision (got {args.places})")
    if args.header and args.output_format != "tsv":
        raise CliError("--header only works with -o tsv (jsonl records name their fields)")
    check_input_file(args.qrels, "qrels")
    # the files are read in the background while the rest is imported and checked (see Prefetch);
    # _read_trec_any gives a pyarrow Table when pyarrow reads the file: no str object per line
    files = [(args.qrels, "qrels")] + [(p, "run") for p in regular_files(_leading_paths(args.items))]
    with Prefetch([(file, partial(_read_trec_any, *file)) for file in files]) as prefetch:

        def reader(kind: str) -> Callable[[str], Any]:  # reads a file of ``kind``, prefetched or not
            return lambda path: prefetch.take((path, kind), partial(_read_trec_any, path, kind))

        return _evaluate_read(args, reader("qrels"), reader("run"))


def _evaluate_read(args, read_trec_qrels, read_trec_run) -> list[str]:
    from ir_incomplete.api import DEFAULT_CHUNK_ROWS, _evaluate_with_intervals, extra_columns

    run_files, measures = runs_and_measures(args.items, "QRELS RUN [RUN ...] MEASURE ...", read_trec_run)
    if args.output_format == "jsonl" and args.places != DEFAULT_PLACES:
        sys.stderr.write("--places is ignored when using --output_format jsonl\n")

    qrels = _read(read_trec_qrels, args.qrels, "qrels")
    if len(qrels) == 0:
        raise CliError(f"qrels file {args.qrels!r} holds no judgments: nothing could be evaluated", EXIT_DATA)
    if args.interval is not None and not 0.0 < args.interval < 1.0:
        raise CliError(f"--interval must be strictly between 0 and 1, e.g. 0.9 (got {args.interval})")
    predictions = None
    if args.predictions is not None:
        from ir_incomplete.predictions import read_predictions

        if not os.path.isfile(args.predictions):
            raise CliError(f"predictions file {args.predictions!r} does not exist")
        predictions = _read(read_predictions, args.predictions, "predictions")
    runs = {name: _read(read_trec_run, path, "run") for name, path in run_files.items()}
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
            )
        except (ValueError, TypeError, NameError) as exc:
            raise CliError(_one_line(exc), EXIT_DATA) from None
    for warning in dict.fromkeys(_one_line(w.message) for w in caught):  # each once, in order
        sys.stderr.write(f"{PROG}: warning: {warning}\n")
    if per_query.empty:
        raise CliError("nothing could be evaluated (no query of the qrels has a judgment)", EXIT_DATA)
    names = list(runs)
    multi_run = len(names) > 1
    extras = extra_columns(measures)
    interval = ["lo", "hi"] if args.interval is not None else []
    per_query = per_query[["run", "query_id", "measure", "value", *_extra_names(extras), *interval]]

    def summarize(frame):
        summary = _aggregate(frame, measures)
        if args.interval is not None:  # the intervals of the replicate means, per run and measure
            keys = list(zip(summary["run"], summary["measure"], strict=True))
            summary["lo"] = [bounds.get(key, (float("nan"),) * 2)[0] for key in keys]
            summary["hi"] = [bounds.get(key, (float("nan"),) * 2)[1] for key in keys]
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


def _write(lines: list[str]) -> int:
    if not lines:
        return 0
    try:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. `ir_incomplete ... | head`: stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_OUTPUT
    return 0


def check_input_file(path: str, what: str) -> None:
    """``CliError`` unless ``path`` names an existing file (``what``: the file's role, for the message)."""
    if not os.path.exists(path):
        raise CliError(f"{what} file {path!r} does not exist")
    if os.path.isdir(path):
        raise CliError(f"{what} {path!r} is a directory, not a file")


def _leading_paths(items: Sequence[str]) -> list[str]:
    """The leading ``items`` that exist on disk: the runs of ``RUN ... MEASURE ...``."""
    n = 0
    while n < len(items) and os.path.exists(items[n]):
        n += 1
    return list(items[:n])


def runs_and_measures(
    items: Sequence[str], usage: str, read_run: Callable[[str], Any] | None = None
) -> tuple[dict[str, Any], list]:
    """The run files (``{name: path}``, or a table read at once: see :func:`_collect_runs`) and measures of
    the positional arguments ``RUN ... MEASURE ...``: the leading arguments that exist on disk are runs
    (files or directories), the rest measures (``usage``: the command's positional arguments, for the
    messages)."""
    items = list(items)
    n_runs = len(_leading_paths(items))
    if n_runs == 0:
        raise CliError(f"run file {items[0]!r} does not exist (give {usage})")
    if n_runs == len(items):
        raise CliError("no measures given after the runs (e.g. 'AP' 'infAP(c=1.5)@10'); see 'ir_incomplete measures'")
    return _collect_runs(items[:n_runs], read_run), _parse_measures(items[n_runs:])


def run_command(parser: argparse.ArgumentParser, body: Callable[[Any], list[str]], argv: Sequence[str]) -> int:
    """What every subcommand does with its arguments: parse ``argv``, run ``body(args)`` for the output
    lines and write them; a usage or input error is one line on stderr with its exit code, never a
    traceback. Returns the exit code."""
    try:
        args = parser.parse_intermixed_args(list(argv))
        lines = body(args)
    except _Exit as done:
        return done.status
    except CliError as error:
        return _report(error)
    except _INPUT_ERRORS as exc:  # anything else that bad input can raise: one line, never a traceback
        return _report(_as_cli_error(exc))
    return _write(lines)


def evaluation_main(argv: Sequence[str]) -> int:
    """``ir_incomplete QRELS RUN [RUN ...] MEASURE [MEASURE ...]``; returns the exit code."""
    return run_command(_evaluation_parser(), _evaluate, argv)


# ---------------------------------------------------------------------------------------------------
# ir_incomplete measures (implemented in ir_incomplete.measure_listing)
# ---------------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------------
# ir_incomplete robustness (implemented in ir_incomplete.robustness.cli)
# ---------------------------------------------------------------------------------------------------
def robustness_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.robustness.cli.main(argv)``."""
    import importlib

    try:
        module = importlib.import_module("ir_incomplete.robustness.cli")
    except ModuleNotFoundError as exc:
        if exc.name in ("ir_incomplete.robustness", "ir_incomplete.robustness.cli"):
            return _report(CliError("the 'robustness' subcommand is not available in this version of ir_incomplete"))
        return _report(
            CliError(f"the 'robustness' subcommand needs the module {exc.name!r}; install it first", EXIT_DATA)
        )
    return module.main(list(argv))


# ---------------------------------------------------------------------------------------------------
# ir_incomplete compare (implemented in ir_incomplete.report)
# ---------------------------------------------------------------------------------------------------
def compare_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.report.compare_main(argv)``."""
    from ir_incomplete.report import compare_main as report_main

    return report_main(list(argv))


def pool_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.judging.cli.pool_main(argv)``."""
    from ir_incomplete.judging.cli import pool_main as main

    return main(list(argv))


def agreement_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.judging.cli.agreement_main(argv)``."""
    from ir_incomplete.judging.cli import agreement_main as main

    return main(list(argv))


def judge_next_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.judging.mtc.main(argv)``."""
    from ir_incomplete.judging.mtc import main as judge_main

    return judge_main(list(argv))


def ppi_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.ppi_cli.main(argv)``."""
    from ir_incomplete.ppi_cli import main as ppi_cli_main

    return ppi_cli_main(list(argv))


SUBCOMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "measures": measures_main,
    "robustness": robustness_main,
    "compare": compare_main,
    "pool": pool_main,
    "agreement": agreement_main,
    "judge-next": judge_next_main,
    "ppi": ppi_main,
}


def main(argv: Sequence[str] | None = None) -> int:
    """The command line on ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        return SUBCOMMANDS[argv[0]](argv[1:])
    return evaluation_main(argv)


def console_main() -> int:
    """Entry point of the ``ir_incomplete`` command and ``python -m ir_incomplete``: :func:`main` in a
    process that ends right after it, so two costs of Python's cyclic garbage collector are skipped:

    - an evaluation (not a subcommand, some of which run for hours) runs with the collector off: its
      passes over the ~100,000 objects that importing pandas creates took about 0.05 s, and the
      evaluation itself makes no reference cycles worth collecting (peak memory is the same either way,
      e.g. 143 TREC-COVID runs × 6 measures);
    - at the end every object goes to the collector's permanent generation, so its last passes at
      interpreter exit do not walk them all again (about 0.08 s).

    An evaluation also asks numpy for ordinary pages instead of transparent huge pages
    (:func:`_small_pages`) and keeps freed memory for reuse (:func:`_reuse_freed_memory`).
    Atexit handlers and ``finally`` blocks still run."""
    import gc

    argv = sys.argv[1:]
    if not (argv and argv[0] in SUBCOMMANDS):
        gc.disable()
        _small_pages()
        _reuse_freed_memory()
    status = main(argv)
    gc.freeze()
    return status


def _small_pages() -> None:
    """Stop numpy from asking Linux for transparent huge pages for its large arrays (what
    ``NUMPY_MADVISE_HUGEPAGE=0`` does when set before numpy is imported). A short evaluation allocates
    and frees arrays of tens of MB once each; each huge page is zeroed whole when first touched, and
    finding free ones may make the kernel compact memory. At scale M from files, on a 2-core virtual
    machine, 10 alternating runs each way: median 0.90 s with ordinary pages, 1.10 s with huge pages
    (system time 0.21 s against 0.49 s). Values are not affected."""
    import numpy as np

    multiarray = getattr(getattr(np, "_core", None), "multiarray", None)
    set_hugepage = getattr(multiarray, "_set_madvise_hugepage", None)
    if set_hugepage is not None:
        set_hugepage(False)


def _reuse_freed_memory() -> None:
    """With glibc, serve allocations under 32 MiB from the heap and keep freed heap memory
    (``mallopt``), so that the temporaries of the evaluation's block-by-block loops (about a MiB each)
    reuse memory instead of each being mapped, zero-filled by the kernel when first touched, and
    unmapped again: glibc's default maps every allocation over 128 KiB until the first such one is freed,
    and then returns freed memory at the top of the heap to the kernel. At scale M from files, 10
    alternating runs each way: median 0.90 s against 0.95 s, system time 0.30 s against 0.31 s, the same
    peak memory. Elsewhere (no glibc) nothing changes."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # not glibc (macOS, Windows)
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's option numbers (malloc.h)
    mallopt(m_mmap_threshold, 32 << 20)
    mallopt(m_trim_threshold, 2**31 - 1)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console_main())
