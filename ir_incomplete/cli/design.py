"""``ir_incomplete sample`` and ``ir_incomplete estimate``: design-based estimates from the command line.

Draw a probability sample of (query, document) pairs to judge, each with its inclusion probability
(:func:`ir_incomplete.judging.sample`), then estimate every run's mean, or every pair's difference, with
an interval from their judgments (:func:`ir_incomplete.estimate`)::

    ir_incomplete sample runs/ --budget 4000 --depth 100 --seed 0 -o design.tsv
    ir_incomplete estimate judged.qrels design.tsv runs/ AP@100 nDCG@10 --interval 0.9
    ir_incomplete estimate judged.qrels design.tsv runs/ -m AP@100 --pairs

``sample RUN... --budget N``: runs as files or directories (``--runs`` also takes them, as in ``pool``);
the design goes to stdout, or to ``-o FILE`` (``.gz``: gzip), written as
:func:`ir_incomplete.estimation.write_design` writes it: to a temporary file beside FILE renamed over it
once complete, so that a failed write leaves FILE's earlier content (``-o design.tsv --previous
design.tsv`` writes a new round over the earlier one). A first line ``# design {json}`` records the depth,
the seed, the runs, every setting and the number of rows (:func:`ir_incomplete.estimation.read_design`
reads the settings back into ``attrs`` and refuses a file whose rows differ), a second comment line with
the program, its version and the arguments (the input file names; ``-o`` left out, so the same command
gives the same bytes wherever it writes), then the tab-separated table ``query_id, doc_id, pi, stratum,
round`` (and ``stratum_id`` with ``--design stratified``, the fixed-size design: exactly ``--budget``
judgments, drawn without replacement from ``--strata`` groups). ``--allocation topics`` (Poisson design
only) gives each topic its own expected number of random judgments, at least ``--min-per-topic`` (default
10) and beyond that a Neyman share (``allocation="topics"`` of :func:`ir_incomplete.judging.sample`); the
settings line records it. Judge every pair of it: the pairs of
stratum ``judged`` (``--qrels``, ``--previous``) have their judgments already; ``--to-judge FILE`` writes
the others, the pairs to send to assessors, as a tab-separated ``query_id, doc_id`` table with a header.

``estimate QRELS DESIGN RUN... MEASURE...``: as the evaluation command, the leading arguments after the
design that name existing files or directories are runs and the rest measures (``AP@k``, ``nDCG@k``,
``P@k``, ``RBP(p=..)@k``, ``R``); with ``-m MEASURE`` (repeatable) every argument after the design is a
run. ``-j/--judgments FILE`` (repeatable) adds judgment files to QRELS, e.g. QRELS the judgments made
before the design and FILE those of its sampled pairs (a pair graded differently by two files is an
error); ``sample --judgments`` repeats the same way. The output is a tab-separated table with a header
line, the columns of :func:`ir_incomplete.estimate`: ``run, measure, value, lo, hi, se, df, outside``;
with ``--pairs`` ``run_a, run_b, measure, value, lo, hi, se, df, significant``; with ``--per-query``
``run, query_id, measure, value``. ``--pairs-top N`` gives only the pairs among the ``N`` runs with the
largest estimate of the first measure, ``--pairs-of RUN`` (repeatable) only those among the runs named
(``pair_runs=`` of :func:`ir_incomplete.estimate`; each pair's line is the one it has among all pairs).
Numbers are printed to 4 decimal places, as the evaluation command prints them; ``-p PLACES`` sets the
places, ``-p -1`` prints every digit (Python's shortest repr, which reads back to the same float);
``pandas.read_csv(path, sep="\\t")`` reads the table.

Both commands take ``--progress`` / ``--no-progress``: bars on stderr over the run files read and the
steps of the work (neither: a bar only when stderr is a terminal and the work takes more than 2 s).

Exit codes: 0 success; 2 usage and data errors (one line on stderr, e.g. an unreadable design, a design
pair without a judgment, ``pi`` outside (0, 1], a budget below ``--certain``); 1 output not written;
130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from functools import partial
from typing import Any

from ir_incomplete.cli.common import (
    DEFAULT_PLACES,
    EXIT_DATA,
    EXIT_OUTPUT,
    PROG,
    CliError,
    Parser,
    check_input_file,
    collect_runs,
    leading_paths,
    one_line,
    places_format,
    read_input,
    report_error,
    run_command,
    split_measure_args,
    version,
    write_lines,
)

# the choices of --prior, --allocation and --control: those of ir_incomplete.judging.sample and ir_incomplete.estimate
from ir_incomplete.estimation.control import CONTROLS  # noqa: E402
from ir_incomplete.estimation.universe import ALLOCATIONS, MIN_PER_TOPIC, PRIORS  # noqa: E402

__all__ = ["sample_main", "estimate_main", "PRIORS", "CONTROLS"]


#: the run files being read in the background (:func:`_prefetched_runs`), which :func:`_runs` takes
_PREFETCH: ContextVar[Any] = ContextVar("ir_incomplete_cli_prefetch", default=None)


@contextlib.contextmanager
def _prefetched_runs(paths: Sequence[str]) -> Iterator[None]:
    """Within the block, the regular run files among ``paths`` (directories: their files) are read in a
    background thread while the command imports and checks the rest, as the evaluation command does
    (:class:`ir_incomplete.data.prefetch.Prefetch`: the same tables, the same errors); :func:`_runs`
    takes them. Leaving the block (also by an error) waits for the file being read; Ctrl-C does not."""
    from ir_incomplete.data.prefetch import Prefetch, regular_files
    from ir_incomplete.data.readers import read_trec_run

    with Prefetch([(path, partial(read_trec_run, path)) for path in regular_files(paths)]) as prefetch:
        token = _PREFETCH.set(prefetch)
        try:
            yield
        finally:
            _PREFETCH.reset(token)


def _runs(paths: Sequence[str], progress: bool | None = None) -> dict[str, Any]:
    """``{name: run}`` of run files and directories, each read (its errors one line, exit 2), with a
    progress bar over the files (``progress``: see :mod:`ir_incomplete._progress`)."""
    from ir_incomplete._progress import advance, task
    from ir_incomplete.data import read_trec_run

    for path in paths:
        if not os.path.exists(path):
            raise CliError(f"run file or directory {path!r} does not exist")
    files = collect_runs(paths)
    if not files:
        raise CliError("no run files given")
    prefetch = _PREFETCH.get()

    def read(path: str) -> Any:
        return read_trec_run(path) if prefetch is None else prefetch.take(path, partial(read_trec_run, path))

    runs = {}
    with task(progress, "read runs", unit="run", total=len(files)):
        for name, path in files.items():
            runs[name] = read_input(read, path, "run")
            advance(1)
    return runs


def _qrels(path: str, option: str) -> Any:
    from ir_incomplete.data import read_trec_qrels

    check_input_file(path, option)
    return read_input(read_trec_qrels, path, "qrels")


def _judgment_files(paths: Sequence[str], option: str, first: Any = None) -> Any:
    """The qrels files ``paths`` (after ``first``, a qrels already read), each read and named by its
    path (messages name the file); one table, or a list of them that the library combines
    (:func:`ir_incomplete.estimation.read_judgments`)."""
    tables = [] if first is None else [first]
    for path in paths:
        table = _qrels(path, option)
        table.attrs["source"] = path
        tables.append(table)
    return tables[0] if len(tables) == 1 else tables


def _predictions(path: str) -> Any:
    from ir_incomplete.predictions import read_predictions

    check_input_file(path, "predictions")
    return read_input(read_predictions, path, "predictions")


def _design(path: str, what: str = "design") -> Any:
    from ir_incomplete.estimation import read_design

    check_input_file(path, what)
    return read_input(read_design, path, "design")


def _warnings(caught: list, command: str) -> None:
    for message in dict.fromkeys(one_line(w.message) for w in caught):  # each once, in order
        sys.stderr.write(f"{PROG} {command}: warning: {message}\n")


# ---------------------------------------------------------------------------------------------------
# ir_incomplete sample
# ---------------------------------------------------------------------------------------------------
def _sample_parser() -> Parser:
    p = Parser(
        prog=f"{PROG} sample",
        usage=f"{PROG} sample RUN [RUN ...] --budget N [options] [-o FILE]",
        description="Draw a probability sample of the (query, document) pairs of the runs' top --depth to "
        "judge, each with its inclusion probability pi (Poisson sampling; ir_incomplete.judging.sample). "
        "Writes the design (a '# design {json}' line recording depth, seed, runs and every setting, then "
        "query_id, doc_id, pi, stratum, round) to stdout or -o FILE; judge the pairs to judge (--to-judge "
        "FILE: those not judged before) and give the design, the earlier and the new judgments to "
        "'ir_incomplete estimate'.",
        epilog="Exit codes: 0 success; 2 usage or data error (one line on stderr); 1 output not written.",
    )
    p.add_argument("runs", nargs="*", metavar="RUN", help="run files and/or directories of run files")
    p.add_argument(
        "--runs", dest="more_runs", nargs="+", default=[], metavar="RUN", help="more runs (as in 'pool --runs')"
    )
    p.add_argument("--budget", type=int, required=True, help="expected number of new judgments (>= 1)")
    p.add_argument(
        "--depth",
        type=int,
        default=100,
        help="the universe: every run's top DEPTH (default 100), plus the pairs judged already",
    )
    p.add_argument(
        "--qrels", default=None, metavar="FILE", help="judgments already made: judged with pi = 1, not counted"
    )
    p.add_argument(
        "--predictions",
        default=None,
        metavar="FILE",
        help="automatic labels: pi grows where they are unsure (calibrated on --qrels or --judgments)",
    )
    p.add_argument("--seed", type=int, default=0, help="the random seed (default 0); the same seed, the same file")
    p.add_argument(
        "--prior",
        default="ap+rbp",
        choices=PRIORS,
        help="pi proportional to: ap+rbp (default: half the AP-prior, half an RBP(0.8) fusion, each normalised), "
        "ap (Aslam & Pavlu's AP-prior), rbp-fusion, rrf (sum of 1/(60 + rank)) or uniform",
    )
    p.add_argument(
        "--uniform",
        type=float,
        default=0.1,
        metavar="SHARE",
        help="share of the budget spread evenly over the universe, in [0, 1] (default 0.1)",
    )
    p.add_argument(
        "--certain",
        type=int,
        default=0,
        metavar="N",
        help="judge the top N pairs of a priority pool with pi = 1, out of the budget (default 0)",
    )
    p.add_argument(
        "--design",
        default="poisson",
        choices=("poisson", "stratified"),
        help="poisson (each pair drawn independently: the budget in expectation, default) or stratified "
        "(a fixed number drawn without replacement from each of --strata groups: the budget exactly)",
    )
    p.add_argument(
        "--strata", type=int, default=10, metavar="H", help="with --design stratified: groups of pairs (default 10)"
    )
    p.add_argument(
        "--allocation",
        default="global",
        choices=ALLOCATIONS,
        help="how the random part of the budget (--budget minus --certain) is spread over topics: global "
        "(default: pi = min(1, c*q) with one c over all pairs not judged, so each topic gets its share of the "
        "prior's mass) or topics (each topic expects its own number of random judgments, at least "
        "--min-per-topic, beyond that a Neyman share from its estimated relevant documents left; pi = "
        "min(1, c_t*q) within the topic; --design poisson only)",
    )
    p.add_argument(
        "--min-per-topic",
        dest="min_per_topic",
        type=int,
        default=MIN_PER_TOPIC,
        metavar="N",
        help=f"with --allocation topics: random judgments each topic expects at least (default {MIN_PER_TOPIC}; "
        "fewer where a topic has fewer pairs not judged; equal shares when the budget cannot give every topic N)",
    )
    p.add_argument("--previous", default=None, metavar="DESIGN", help="an earlier round's design: start a new round")
    p.add_argument(
        "--judgments",
        action="append",
        default=None,
        metavar="QRELS",
        help="with --previous: the judgments of its pairs (repeatable: several files are combined)",
    )
    p.add_argument(
        "--score-precision",
        dest="score_precision",
        default="float32",
        choices=("float32", "float64"),
        help="precision in which run scores are compared when ranking (default float32, as trec_eval)",
    )
    p.add_argument("--output", "-o", default=None, metavar="FILE", help="write the design here instead of stdout")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars on stderr, over the run files read and the steps of the sample (default: when "
        "stderr is a terminal and the work takes more than 2 s)",
    )
    p.add_argument(
        "--to-judge",
        dest="to_judge",
        default=None,
        metavar="FILE",
        help="also write the pairs to send to assessors (sampled, and --certain's; not those judged before: "
        "--qrels, --previous) to FILE, tab-separated with a header line query_id, doc_id",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    return p


def _to_judge_text(design: Any) -> str:
    """The pairs of ``design`` to judge (:func:`ir_incomplete.judging.to_judge`) as a tab-separated table
    with a header line ``query_id<TAB>doc_id``."""
    from ir_incomplete.judging import to_judge

    pairs = to_judge(design)
    rows = [f"{q}\t{d}\n" for q, d in zip(pairs["query_id"].tolist(), pairs["doc_id"].tolist(), strict=True)]
    return "query_id\tdoc_id\n" + "".join(rows)


def _provenance(argv: Sequence[str]) -> str:
    """The second comment line of a design file: program, version and the arguments, without ``-o``."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("-o", "--output"):
            skip = True
            continue
        if arg.startswith("--output=") or (arg.startswith("-o") and arg != "-o"):
            continue
        kept.append(arg)
    return f"# {PROG} {version()} sample " + " ".join(shlex.quote(a) for a in kept)


def _design_text(design: Any, argv: Sequence[str]) -> str:
    """The design as :func:`ir_incomplete.estimation.write_design` writes it, with the provenance line
    after its first (settings) line."""
    from ir_incomplete.estimation import design_text

    return design_text(design, comments=[_provenance(argv)])


def _same_file(a: str, b: str) -> bool:
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


def _refuse_inputs_as_outputs(args: argparse.Namespace, runs: Sequence[str]) -> None:
    """``CliError`` when ``-o`` or ``--to-judge`` names a file the command reads (a run, a run inside a
    folder of runs, ``--qrels``, ``--predictions``, ``--judgments``; ``--previous`` for ``--to-judge``):
    writing it would replace judgments or runs by the design. ``-o`` may name ``--previous``: the new
    design holds the earlier round's pairs (judged, pi = 1) and replaces it once written."""
    inputs = [(f"run {p!r}", p) for p in runs]
    inputs += [("--qrels", args.qrels), ("--predictions", args.predictions), ("--previous", args.previous)]
    inputs += [("--judgments", p) for p in args.judgments or []]
    for flag, out in (("-o", args.output), ("--to-judge", args.to_judge)):
        if out is None or not os.path.exists(out):
            continue
        for name, path in inputs:
            if path is None or (flag == "-o" and name == "--previous"):
                continue
            inside = os.path.isdir(path) and os.path.samefile(os.path.dirname(os.path.abspath(out)), path)
            if inside or _same_file(out, path):
                what = f"a file in the folder of {name}" if inside else f"the file of {name}"
                raise CliError(
                    f"{flag} {out!r} is {what}, which this command reads: writing it would replace it; "
                    f"give {flag} another file"
                )


def _sample(args: argparse.Namespace, argv: Sequence[str]) -> tuple[str, str | None]:
    from ir_incomplete.judging import sample

    paths = [*args.runs, *args.more_runs]
    if not paths:
        raise CliError("no runs given: give run files or directories (ir_incomplete sample runs/ --budget N)")
    if args.budget < 1:
        raise CliError(f"--budget {args.budget} is not valid; expected a number of judgments >= 1")
    if args.depth < 1:
        raise CliError(f"--depth {args.depth} is not valid; expected a number of ranks >= 1")
    if args.seed < 0:
        raise CliError(f"--seed {args.seed} is not valid; expected an integer >= 0")
    if args.certain < 0:
        raise CliError(f"--certain {args.certain} is not valid; expected a number of judgments >= 0")
    if args.certain > args.budget:
        raise CliError(
            f"--budget {args.budget} is below --certain {args.certain}: the top {args.certain} pairs are judged "
            f"with pi = 1 out of the budget; raise --budget or lower --certain"
        )
    if not 0.0 <= args.uniform <= 1.0:
        raise CliError(f"--uniform {args.uniform} is not a share in [0, 1] (e.g. 0.1)")
    if args.strata < 1:
        raise CliError(f"--strata {args.strata} is not valid; expected a number of groups >= 1")
    if args.min_per_topic < 0:
        raise CliError(
            f"--min-per-topic {args.min_per_topic} is not valid; expected a number of judgments >= 0 (with "
            f"--allocation topics)"
        )
    if args.allocation == "topics" and args.design != "poisson":
        raise CliError(
            f"--allocation topics is not drawn with --design {args.design}: it sets pi topic by topic in the Poisson "
            f"design; use --design poisson with --allocation topics, or --design {args.design} with --allocation global"
        )
    _refuse_inputs_as_outputs(args, paths)
    if args.to_judge is not None:
        if args.output is not None and _same_file(args.to_judge, args.output):
            raise CliError(
                f"--to-judge {args.to_judge!r} is the design's -o file; give the pairs to judge another file"
            )
        folder = os.path.dirname(os.path.abspath(args.to_judge))
        if not os.path.isdir(folder):
            raise CliError(f"--to-judge {args.to_judge!r}: its folder {folder!r} does not exist")
    if (args.previous is None) != (args.judgments is None):
        raise CliError(
            "--previous DESIGN and --judgments QRELS go together: a new round needs the earlier design and the "
            "judgments of its pairs"
        )
    runs = _runs(paths, args.progress)
    qrels = None if args.qrels is None else _qrels(args.qrels, "qrels")
    predictions = None if args.predictions is None else _predictions(args.predictions)
    previous = None if args.previous is None else _design(args.previous, "--previous design")
    judgments = None if args.judgments is None else _judgment_files(args.judgments, "judgments")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            design = sample(
                runs,
                args.budget,
                depth=args.depth,
                qrels=qrels,
                predictions=predictions,
                seed=args.seed,
                prior=args.prior,
                uniform=args.uniform,
                certain=args.certain,
                previous=previous,
                judgments=judgments,
                score_precision=args.score_precision,
                design=args.design,
                strata=args.strata,
                allocation=args.allocation,
                min_per_topic=args.min_per_topic,
                progress=args.progress,
            )
        except (ValueError, TypeError) as exc:
            raise CliError(one_line(exc), EXIT_DATA) from None
    _warnings(caught, "sample")
    return _design_text(design, argv), None if args.to_judge is None else _to_judge_text(design)


def sample_main(argv: Sequence[str]) -> int:
    """``ir_incomplete sample RUN... --budget N [...] [-o FILE]``; returns the exit code."""
    from ir_incomplete.cli.common import INPUT_ERRORS, Exit, as_cli_error

    argv = list(argv)
    try:
        args = _sample_parser().parse_intermixed_args(argv)
        with _prefetched_runs([*args.runs, *args.more_runs]):
            text, pairs = _sample(args, argv)
    except Exit as done:  # --help, --version: printed, nothing else to do
        return done.status
    except CliError as error:
        return report_error(error)
    except INPUT_ERRORS as exc:
        return report_error(as_cli_error(exc))
    from ir_incomplete.data.files import write_text

    if args.output is None:
        status = write_lines([text[:-1]] if text.endswith("\n") else [text])
    else:
        try:  # as write_design writes: a temporary file renamed over FILE once complete
            write_text(args.output, text)
        except OSError as exc:
            return report_error(CliError(f"cannot write {args.output!r}: {one_line(exc)}", EXIT_OUTPUT))
        status = 0
    if status or pairs is None:
        return status
    try:
        write_text(args.to_judge, pairs)
    except OSError as exc:
        return report_error(CliError(f"cannot write --to-judge {args.to_judge!r}: {one_line(exc)}", EXIT_OUTPUT))
    return 0


# ---------------------------------------------------------------------------------------------------
# ir_incomplete estimate
# ---------------------------------------------------------------------------------------------------
def _estimate_parser() -> Parser:
    p = Parser(
        prog=f"{PROG} estimate",
        usage=f"{PROG} estimate [options] QRELS DESIGN RUN [RUN ...] MEASURE [MEASURE ...]\n"
        f"       {PROG} estimate [options] QRELS DESIGN RUN [RUN ...] -m MEASURE [-m MEASURE ...]",
        description="Design-based estimates (ir_incomplete.estimate): every run's mean over the design's "
        "topics, or with --pairs every pair's difference, with a confidence interval for the value that "
        "judging the whole universe (the runs' top depth and the pairs judged already) would give. QRELS: the "
        "judgments of every pair of "
        "DESIGN (written by 'ir_incomplete sample'). Measures: AP@k, nDCG@k, P@k, RBP(p=..)@k, R.",
        epilog="Output: a tab-separated table with a header line: run, measure, value, lo, hi, se, df (the "
        "t quantile's degrees of freedom), outside; with --pairs run_a, run_b, measure, value, lo, hi, se, df, "
        "significant (value = a - b); with --per-query run, query_id, measure, value. Exit codes: 0 success; "
        "2 usage or data error; 1 output not written; 130 interrupted.",
    )
    p.add_argument(
        "qrels",
        metavar="QRELS",
        help="judgments of the design's pairs (TREC qrels; .gz allowed); more files with -j/--judgments",
    )
    p.add_argument("design", metavar="DESIGN", help="the design file of 'ir_incomplete sample'")
    p.add_argument(
        "items",
        nargs="+",
        metavar="RUN... MEASURE",
        help="run files or directories of run files, then measure strings (or give measures with -m)",
    )
    p.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        default=None,
        metavar="MEASURE",
        help="a measure (repeatable); then every argument after DESIGN is a run",
    )
    p.add_argument(
        "-j",
        "--judgments",
        action="append",
        default=[],
        metavar="FILE",
        help="more judgments (TREC qrels; repeatable), combined with QRELS: e.g. QRELS the judgments made "
        "before the design, -j FILE those of its sampled pairs; a pair graded differently by two is an error",
    )
    p.add_argument(
        "--predictions",
        default=None,
        metavar="FILE",
        help="automatic labels, used only as a control variate (a qrels file, a table with a header, or parquet)",
    )
    p.add_argument(
        "--control",
        default="auto",
        choices=CONTROLS,
        help="control variate: auto (default: model, labels+model with --predictions; none with --universe "
        "design), none (Horvitz-Thompson: the values of the StatAP, StatNDCG, ... measures, which default to "
        "it), labels, model (cells of the runs' fusion score), labels+model; the one used is noted on stderr "
        "when not given",
    )
    p.add_argument(
        "--interval",
        type=float,
        default=0.9,
        metavar="LEVEL",
        help="level of the two-sided confidence interval (default 0.9; Student's t with Satterthwaite's df): for "
        "the value on the whole universe's judgments, from the sampling design",
    )
    p.add_argument("--pairs", action="store_true", help="every pair of runs' difference (a - b) instead of run means")
    p.add_argument(
        "--pairs-top",
        dest="pairs_top",
        type=int,
        default=None,
        metavar="N",
        help="--pairs among the N runs with the largest estimate of the first measure only (every run is "
        "still estimated; a pair's line is the one it has among all pairs)",
    )
    p.add_argument(
        "--pairs-of",
        dest="pairs_of",
        action="append",
        default=None,
        metavar="RUN",
        help="--pairs among these runs only (a run name; repeatable, at least two)",
    )
    p.add_argument("--per-query", dest="per_query", action="store_true", help="per-query estimates (no intervals)")
    p.add_argument("--depth", type=int, default=None, help="the universe's depth (default: the design's)")
    p.add_argument(
        "--universe",
        default="runs",
        choices=("runs", "design"),
        help="runs: the top depth of the runs the design was drawn from, all given, and the pairs judged already "
        "(default); design: the "
        "design's pairs, for runs given one at a time (only --control none)",
    )
    p.add_argument(
        "--min-cell",
        dest="min_cell",
        type=int,
        default=20,
        help="control variates: a cell with fewer random pairs uses all of them (default 20)",
    )
    p.add_argument(
        "-p",
        "--places",
        type=int,
        default=DEFAULT_PLACES,
        help=f"decimal places, as the evaluation command (default {DEFAULT_PLACES}; -1: full precision, every "
        "digit, so that the numbers read back exactly)",
    )
    p.add_argument(
        "--score-precision",
        dest="score_precision",
        default="float32",
        choices=("float32", "float64"),
        help="precision in which run scores are compared when ranking (default float32, as trec_eval)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars on stderr, over the run files read and the measures estimated (default: when "
        "stderr is a terminal and the work takes more than 2 s)",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    return p


def _table_lines(table: Any, places: int) -> list[str]:
    """The table as tab-separated lines, a header line first; floats to ``places`` decimals, or in full
    (``repr``) with -1 (:func:`ir_incomplete.cli.common.places_format`, as the evaluation command)."""
    import numpy as np

    columns = list(table.columns)
    spec = places_format(places)
    cells: list[list[str]] = []
    for column in columns:
        values = table[column]
        if values.dtype.kind == "f":
            cells.append([format(float(v), spec) for v in values.to_numpy(dtype=float)])
        elif values.dtype.kind == "b":
            cells.append(["True" if v else "False" for v in values.to_numpy(dtype=np.bool_)])
        else:
            cells.append([str(v) for v in values.tolist()])
    return ["\t".join(columns)] + ["\t".join(row) for row in zip(*cells, strict=True)]


def _estimate(args: argparse.Namespace) -> list[str]:
    from ir_incomplete.estimation import estimate

    places_format(args.places)  # checked before the work
    if not 0.0 < args.interval < 1.0:
        raise CliError(f"--interval must be strictly between 0 and 1, e.g. 0.9 (got {args.interval})")
    pair_runs = _pair_runs(args)
    if (args.pairs or pair_runs is not None) and args.per_query:
        raise CliError("--pairs and --per-query exclude each other: give one of them")
    if args.depth is not None and args.depth < 1:
        raise CliError(f"--depth {args.depth} is not valid; expected a number of ranks >= 1")
    if args.min_cell < 1:
        raise CliError(f"--min-cell {args.min_cell} is not valid; expected a number of pairs >= 1")
    items = list(args.items)
    if args.measures is not None:
        paths, measures = items, split_measure_args(args.measures)
    else:
        paths = leading_paths(items)
        if not paths:
            raise CliError(f"run file {items[0]!r} does not exist (give QRELS DESIGN RUN [RUN ...] MEASURE ...)")
        measures = split_measure_args(items[len(paths) :])
        if not measures:
            raise CliError("no measures given after the runs (e.g. AP@100 nDCG@10, or -m AP@100)")
    if not measures:
        raise CliError("no measures given (e.g. -m AP@100 -m nDCG@10)")
    judgments = _qrels(args.qrels, "qrels")
    judgments.attrs["source"] = args.qrels
    judgments = _judgment_files(args.judgments, "--judgments", judgments)
    design = _design(args.design)
    runs = _runs(paths, args.progress)
    unknown = [name for name in args.pairs_of or () if name not in runs]
    if unknown:
        shown = ", ".join(list(runs)[:10]) + (f", ... ({len(runs)} runs)" if len(runs) > 10 else "")
        raise CliError(f"--pairs-of {unknown[0]!r} is not among the runs given (run names: {shown})")
    predictions = None if args.predictions is None else _predictions(args.predictions)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            table = estimate(
                runs,
                judgments,
                design,
                measures,
                predictions=predictions,
                interval=args.interval,
                pairs=args.pairs or pair_runs is not None,
                pair_runs=pair_runs,
                per_query=args.per_query,
                control=args.control,
                depth=args.depth,
                universe=args.universe,
                min_cell=args.min_cell,
                score_precision=args.score_precision,
                progress=args.progress,
            )
        except (ValueError, TypeError) as exc:
            raise CliError(one_line(exc), EXIT_DATA) from None
    _warnings(caught, "estimate")
    if args.control == "auto":  # the default differs from the Stat* measures': say which one was used
        used = table.attrs.get("control")
        why = "; --control none gives StatAP's Horvitz-Thompson values" if used != "none" else ""
        sys.stderr.write(f"{PROG} estimate: note: control variate {used!r} (the default{why})\n")
    return _table_lines(table, args.places)


def _pair_runs(args: argparse.Namespace) -> int | list[str] | None:
    """``pair_runs=`` of :func:`ir_incomplete.estimate` from ``--pairs-top N`` or ``--pairs-of RUN ...``."""
    if args.pairs_top is not None and args.pairs_of is not None:
        raise CliError("--pairs-top and --pairs-of exclude each other: give one of them")
    if args.pairs_top is not None:
        if args.pairs_top < 2:
            raise CliError(f"--pairs-top {args.pairs_top} is not valid; a pair needs two runs: give N >= 2")
        return int(args.pairs_top)
    if args.pairs_of is not None:
        names = list(dict.fromkeys(args.pairs_of))
        if len(names) < 2:
            raise CliError(
                f"--pairs-of names {len(names)} run(s); a pair needs two: give --pairs-of RUN at least twice"
            )
        return names
    return None


def _estimate_runs(args: argparse.Namespace) -> list[str]:
    """The arguments of ``estimate`` that are probably runs (every item with ``-m``, else the leading paths)."""
    return list(args.items) if args.measures is not None else leading_paths(list(args.items))


def _estimate_prefetched(args: argparse.Namespace) -> list[str]:
    with _prefetched_runs(_estimate_runs(args)):
        return _estimate(args)


def estimate_main(argv: Sequence[str]) -> int:
    """``ir_incomplete estimate QRELS DESIGN RUN... MEASURE...``; returns the exit code."""
    return run_command(_estimate_parser(), _estimate_prefetched, argv)
