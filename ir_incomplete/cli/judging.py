"""``ir_incomplete pool`` and ``ir_incomplete agreement``: judgment sets from the command line.

Pools (one line per pooled pair, sorted by query and document id)::

    ir_incomplete pool --runs runs/ --method depth --depth 10 > pool.txt
    ir_incomplete pool --runs runs/ --method rrf --budget 5000 --qrels judged.txt > next.txt
    ir_incomplete pool --runs runs/ --method stratified --strata 1-10:1,11-100:0.2 --seed 7 > sample.txt

The first line is a comment (``# ir_incomplete <version> pool ...``) with every argument and the seed,
so that the file says how to reproduce it; ``--no-header`` leaves it out. Formats: ``pairs``
(``query_id doc_id``, default), ``qrels`` (``query_id 0 doc_id -1``: pooled but unjudged, read by
:func:`ir_incomplete.read_trec_qrels` once the comment line is removed, e.g. ``grep -v '^#'``, or written
with ``--no-header``); for ``--method stratified`` ``sample`` (``query_id doc_id stratum rank sampled``,
default, the input of :func:`ir_incomplete.judging.to_prels`) or ``pairs`` (the sampled documents only:
what to judge). :func:`ir_incomplete.judging.read_pool` reads every pool format back and skips comments
(``to_prels(read_pool("sample.txt"), judgments)`` makes the prels of a sample file).

Agreement of two judgment sets (``statistic<TAB>value`` lines, then the confusion matrix as comments)::

    ir_incomplete agreement human.qrels llm.qrels [--runs runs/] [--measures 'nDCG@10' AP]

Exit codes: 0 success; 2 usage and data errors (one line on stderr); 1 output not written.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import warnings
from collections.abc import Sequence

from ir_incomplete.cli.common import (
    EXIT_USAGE,
    INPUT_ERRORS,
    CliError,
    Exit,
    Parser,
    as_cli_error,
    check_input_file,
    collect_runs,
    places_format,
    read_input,
    report_error,
    split_measure_args,
    version,
    write_lines,
)

__all__ = ["pool_main", "agreement_main", "judge_next_main", "parse_strata", "header_line"]

PROG = "ir_incomplete"
CLI_METHODS = ("depth", "budget", "rrf", "rbp", "stratified")


def header_line(command: str, argv: Sequence[str], **resolved: object) -> str:
    """The comment line that starts an output file: program, version, the arguments as given and the
    values they resolved to (e.g. the seed)."""
    given = " ".join(shlex.quote(a) for a in argv)
    extra = " ".join(f"{k}={v}" for k, v in resolved.items())
    return f"# {PROG} {version()} {command} {given}" + (f" ({extra})" if extra else "")


def parse_strata(text: str) -> list[tuple[int, int | None, float]]:
    """``"1-10:1,11-100:0.2"`` → ``[(1, 10, 1.0), (11, 100, 0.2)]``; ``"101-:0.05"`` = ranks 101 and
    deeper. The strata are then checked by :func:`ir_incomplete.judging.sampling.check_strata`."""
    from ir_incomplete.judging.sampling import check_strata

    out: list[tuple[int, int | None, float]] = []
    for part in text.split(","):
        token = part.strip()
        try:
            ranks, rate = token.split(":")
            lo, hi = ranks.split("-")
            out.append((int(lo), int(hi) if hi.strip() else None, float(rate)))
        except ValueError:
            raise ValueError(
                f"stratum {token!r} is not FIRST-LAST:RATE (e.g. --strata 1-10:1,11-100:0.2; LAST may be empty "
                f"for the deepest stratum: 101-:0.05)"
            ) from None
    return check_strata(out)


def _pool_parser() -> Parser:
    p = Parser(
        prog=f"{PROG} pool",
        description="Build a pool (depth, budget, rrf, rbp) or a stratified sample of it from TREC runs; "
        "writes one line per pooled (query, document) pair to stdout or --output.",
    )
    p.add_argument("--runs", required=True, nargs="+", metavar="RUN", help="run files and/or directories of run files")
    p.add_argument("--method", default="depth", choices=CLI_METHODS, help="pooling method (default depth)")
    p.add_argument("--depth", type=int, default=None, help="depth: documents per run and topic (default 10)")
    p.add_argument(
        "--budget",
        type=int,
        default=None,
        help="budget: documents per topic; rrf/rbp: in total (per topic with --per-topic)",
    )
    p.add_argument("--k", type=float, default=2.0, help="rrf: the constant of 1/(k + rank) (default 2)")
    p.add_argument(
        "--p", type=float, default=0.8, help="rbp: persistence p of the weight (1-p)p^(rank-1) (default 0.8)"
    )
    p.add_argument("--per-topic", action="store_true", help="rrf/rbp: --budget is per topic")
    p.add_argument(
        "--across",
        default="priority",
        choices=("priority", "round_robin"),
        help="rrf/rbp with a total budget: one order across topics (priority, default) or topics in turns",
    )
    p.add_argument("--pool-runs", nargs="+", default=None, metavar="NAME", help="only these runs contribute")
    p.add_argument("--qrels", default=None, help="judgments already made: their pairs are left out of the pool")
    p.add_argument("--strata", default=None, help="stratified: FIRST-LAST:RATE,... e.g. 1-10:1,11-100:0.2")
    p.add_argument("--seed", type=int, default=None, help="stratified: the random seed (required)")
    p.add_argument("--min-sampled", type=int, default=1, help="stratified: at least this many per cell (default 1)")
    p.add_argument(
        "--format", default=None, choices=("pairs", "qrels", "sample"), help="output format (see the module help)"
    )
    p.add_argument(
        "--score-precision",
        default="float32",
        choices=("float32", "float64"),
        help="score comparison (default float32)",
    )
    p.add_argument("--output", "-o", default=None, metavar="FILE", help="write here instead of stdout")
    p.add_argument("--no-header", action="store_true", help="leave out the first comment line")
    return p


def pool_main(argv: Sequence[str]) -> int:
    """``ir_incomplete pool ...``; returns the exit code."""
    try:
        args = _pool_parser().parse_args(list(argv))
        lines = _pool_lines(args, list(argv))
    except Exit as done:  # --help, --version: printed, nothing else to do
        return done.status
    except CliError as error:
        return report_error(error)
    except INPUT_ERRORS as exc:
        return report_error(as_cli_error(exc))
    return _emit(lines, args.output)


def _emit(lines: list[str], output: str | None) -> int:
    if output is None:
        return write_lines(lines)
    try:
        with open(output, "w") as handle:
            handle.write("\n".join(lines) + ("\n" if lines else ""))
    except OSError as exc:
        return report_error(CliError(f"cannot write {output!r}: {exc}", 1))
    return 0


def _runs(paths: Sequence[str]):
    from ir_incomplete.data import read_trec_run

    files = collect_runs(paths)
    if not files:
        raise CliError("no run files given")
    return {name: read_input(read_trec_run, path, "run") for name, path in files.items()}


def _qrels(path: str):
    from ir_incomplete.data import read_trec_qrels

    return read_input(read_trec_qrels, path, "qrels")


def _pool_lines(args: argparse.Namespace, argv: list[str]) -> list[str]:
    from ir_incomplete.judging.pools import pool, pool_lines
    from ir_incomplete.judging.sampling import stratified_sample

    method = args.method
    stratified_only = {"--strata": args.strata, "--seed": args.seed}
    if method != "stratified":
        given = [flag for flag, value in stratified_only.items() if value is not None]
        if given:
            raise CliError(f"{given[0]} is for --method stratified only", EXIT_USAGE)
        fmt = args.format or "pairs"
        if fmt == "sample":
            raise CliError("--format sample is for --method stratified; choose pairs or qrels", EXIT_USAGE)
    else:
        if args.strata is None or args.seed is None:
            raise CliError("--method stratified needs --strata (e.g. 1-10:1,11-100:0.2) and --seed", EXIT_USAGE)
        if args.seed < 0:
            raise CliError(f"--seed {args.seed} is not valid; expected an integer >= 0", EXIT_USAGE)
        fmt = args.format or "sample"
        if fmt == "qrels":
            raise CliError("--format qrels is not for --method stratified; choose sample or pairs", EXIT_USAGE)
        if args.qrels is not None:
            raise CliError("--qrels is not used by --method stratified (a sample is drawn from the whole pool)")
    runs = _runs(args.runs)
    header = [] if args.no_header else [header_line("pool", argv, seed=args.seed if args.seed is not None else "none")]
    if method == "stratified":
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            sample = stratified_sample(
                runs,
                parse_strata(args.strata),
                seed=args.seed,
                pool_runs=args.pool_runs,
                min_sampled=args.min_sampled,
                score_precision=args.score_precision,
            )
        for caught in warned:
            sys.stderr.write(f"{PROG} pool: warning: {' '.join(str(caught.message).split())}\n")
        if fmt == "pairs":
            return header + pool_lines(sample[sample["sampled"]], "pairs")
        return header + pool_lines(sample, "sample")
    qrels = _qrels(args.qrels) if args.qrels is not None else None
    frame = pool(
        runs,
        method,
        depth=args.depth,
        budget=args.budget,
        k=args.k,
        p=args.p,
        per_topic=True if args.per_topic else None,
        across=args.across,
        pool_runs=args.pool_runs,
        qrels=qrels,
        score_precision=args.score_precision,
    )
    return header + pool_lines(frame, fmt)


# ---------------------------------------------------------------------------------------------------
# agreement
# ---------------------------------------------------------------------------------------------------
def _agreement_parser() -> Parser:
    p = Parser(
        prog=f"{PROG} agreement",
        description="Agreement of two judgment sets on the pairs both judge: Cohen's kappa (unweighted, linear, "
        "quadratic), Krippendorff's alpha (ordinal, interval), the confusion matrix; with --runs the agreement "
        "of the two leaderboards (Kendall tau, tau_AP, Spearman, RMSE).",
    )
    p.add_argument("qrels_a", metavar="A", help="first qrels (the reference for tau_AP)")
    p.add_argument("qrels_b", metavar="B", help="second qrels")
    p.add_argument("--runs", nargs="+", default=None, metavar="RUN", help="run files and/or directories")
    p.add_argument("--measures", nargs="+", default=None, metavar="MEASURE", help="leaderboard measures (nDCG@10 AP)")
    p.add_argument("--labels", default=None, help="the grade scale, e.g. 0,1,2 (default: grades observed)")
    p.add_argument("-p", "--places", type=int, default=4, help="decimal places (default 4; -1: full precision)")
    p.add_argument("--no-header", action="store_true", help="leave out the first comment line")
    return p


def agreement_main(argv: Sequence[str]) -> int:
    """``ir_incomplete agreement A B [--runs DIR]``; returns the exit code."""
    try:
        args = _agreement_parser().parse_args(list(argv))
        lines = _agreement_lines(args, list(argv))
    except Exit as done:  # --help: printed, nothing else to do
        return done.status
    except CliError as error:
        return report_error(error)
    except INPUT_ERRORS as exc:
        return report_error(as_cli_error(exc))
    return write_lines(lines)


def _agreement_lines(args: argparse.Namespace, argv: list[str]) -> list[str]:
    from ir_incomplete.judging.judge_agreement import agreement

    places_format(args.places)  # checked before the work
    labels = None
    if args.labels is not None:
        try:
            labels = [int(v) for v in args.labels.split(",")]
        except ValueError:
            raise CliError(f"--labels {args.labels!r} is not a comma-separated list of integer grades") from None
    if args.measures is not None and args.runs is None:
        raise CliError("--measures compare leaderboards: give --runs too")
    a, b = _qrels(args.qrels_a), _qrels(args.qrels_b)
    runs = _runs(args.runs) if args.runs is not None else None
    measures = split_measure_args(args.measures) if args.measures is not None else None
    result = agreement(a, b, runs=runs, measures=measures, labels=labels)
    lines = [] if args.no_header else [header_line("agreement", argv)]
    spec = places_format(args.places)  # -1: full precision, as the evaluation command
    for key, value in result.items():
        lines.append(f"{key}\t{value}" if isinstance(value, int) else f"{key}\t{format(float(value), spec)}")
    table = result.attrs["confusion"]
    lines.append("# confusion matrix (rows: grades of A, columns: grades of B)")
    lines.append("# a\\b\t" + "\t".join(str(c) for c in table.columns))
    for grade, row in table.iterrows():
        lines.append(f"# {grade}\t" + "\t".join(str(int(v)) for v in row))
    return lines


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - thin wrapper
    """``pool ...`` or ``agreement ...`` (``argv``, default ``sys.argv[1:]``): the command it names."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "agreement":
        return agreement_main(argv[1:])
    if argv and argv[0] == "pool":
        return pool_main(argv[1:])
    return report_error(CliError("usage: ir_incomplete pool ... | ir_incomplete agreement A B ...", EXIT_USAGE))


# ---------------------------------------------------------------------------------------------------
# ir_incomplete judge-next (the library: ir_incomplete.judging.mtc)
# ---------------------------------------------------------------------------------------------------
def _judge_next_parser():
    import argparse

    from ir_incomplete.judging.mtc import MEASURE_CHOICES

    parser = Parser(
        prog="ir_incomplete judge-next",
        description="Print the unjudged (query, document) pairs to judge next, most useful first, as "
        "'query_id<TAB>doc_id<TAB>priority' lines after a '#' header line that records the arguments "
        "and the seed. Criterion: the expected change of the measure differences between runs "
        "(Carterette, Allan & Sitaraman, SIGIR 2006), see ir_incomplete.judging.mtc.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--runs", required=True, nargs="+", metavar="RUN", help="run files or directories of runs")
    parser.add_argument("--qrels", help="judgments made so far (TREC qrels; omit to start from none)")
    parser.add_argument("--measure", default="AP", help=f"measure to rank runs by; one of {', '.join(MEASURE_CHOICES)}")
    parser.add_argument("--budget", required=True, type=int, help="number of pairs to print (>= 1)")
    parser.add_argument("--seed", type=int, default=0, help="orders pairs of equal criterion (default 0)")
    parser.add_argument(
        "--predictions",
        help="predicted grades (a qrels file, a table with a header line, or parquet), used as the relevance prior",
    )
    return parser


def judge_next_main(argv: Sequence[str] | None = None) -> int:
    """``ir_incomplete judge-next --runs DIR --budget 500 [--qrels Q] [--measure AP] [--seed S]
    [--predictions P]``: the pairs to judge next as ``query_id<TAB>doc_id<TAB>priority`` lines after a
    ``#`` header recording the arguments and the seed; returns the exit code (0 ok, 2 bad input)."""
    import os
    import sys

    from ir_incomplete._version import __version__
    from ir_incomplete.data import read_trec_qrels
    from ir_incomplete.judging.mtc import _target, check_budget, judge_next
    from ir_incomplete.predictions import read_predictions

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _judge_next_parser().parse_args(argv)
        check_budget(args.budget, "--budget")
        if args.seed < 0:
            raise CliError(f"--seed {args.seed} is not valid; expected an integer >= 0")
        for path in args.runs:
            if not os.path.exists(path):
                raise CliError(f"run file or directory {path!r} does not exist")
        for option, path in (("--qrels", args.qrels), ("--predictions", args.predictions)):
            if path is not None:  # a file or a named pipe (read once)
                check_input_file(path, option)
        qrels = None if args.qrels is None else read_input(read_trec_qrels, args.qrels, "qrels")
        predictions = (
            None if args.predictions is None else read_input(read_predictions, args.predictions, "predictions")
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            batch = judge_next(
                list(args.runs), qrels, args.measure, args.budget, predictions=predictions, seed=args.seed
            )
        for w in caught:
            sys.stderr.write(f"ir_incomplete judge-next: warning: {w.message}\n")
    except Exit as done:
        return done.status
    except CliError as error:
        return report_error(error)
    except INPUT_ERRORS as exc:
        return report_error(as_cli_error(exc))
    header = (
        f"# ir_incomplete {__version__} judge-next measure={_target(args.measure).text} budget={args.budget} "
        f"seed={args.seed} qrels={args.qrels or '-'} predictions={args.predictions or '-'} "
        f"runs={' '.join(args.runs)}"
    )
    columns = (batch["query_id"].tolist(), batch["doc_id"].tolist(), batch["priority"].tolist())
    lines = [header] + [f"{q}\t{d}\t{c:.9g}" for q, d, c in zip(*columns, strict=True)]
    return write_lines(lines)
