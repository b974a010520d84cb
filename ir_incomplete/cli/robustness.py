"""``ir_incomplete robustness``: a judgment-degradation study from the command line.

Example::

    ir_incomplete robustness --qrels qrels.txt --runs runs/ --measures AP infAP Bpref \\
        --method sample --levels 0.05,0.1,0.3,1 --repeats 10 --reference AP --out results/

writes to ``--out``: ``stats.csv`` (measure, level, repeat, tau, pearson, rmse, …, rmse_topic),
``summary.csv`` (mean and standard deviation over repeats), ``scores.csv`` (per-run scores with degraded
judgments and the reference values), ``reference.csv`` (full-judgment scores), when matplotlib is
installed ``robustness_tau.png`` and ``robustness_rmse.png``, and ``manifest.json``. The summary is also
printed.

Outputs you can trust: ``--out`` is checked before the study starts (it must be a folder, empty unless
``--overwrite``); ``manifest.json`` is written first with ``"complete": false`` and rewritten with
``"complete": true`` and the list of files when everything is written; it records the package version,
every parameter and the seed. Each file is written to a temporary file in the same folder and renamed
into place, so a killed study never leaves a truncated file under a final name. With ``--overwrite``
the files of the previous study are removed first. Worker processes (``--n-jobs``) exit when this
process dies.

Interrupt and resume: every finished grid cell is saved at once in ``--out``'s ``cells`` folder
(atomically; the folder is removed when the study is complete). Ctrl-C cancels the queued cells, stops
the workers, records the interruption in the manifest and prints one line with the command that resumes
the study (the same arguments with ``--resume``). ``--resume`` computes only the missing cells (the
files equal an uninterrupted run's byte for byte) and refuses options, judgments or runs that differ,
naming them. Measures and levels are checked before ``--out`` is touched.

Exit codes: 0 success; 2 errors (bad options or parameters, a missing, unreadable or malformed file, an
output folder that cannot be used); 1 the printed summary could not be written (the files are written);
130 interrupted (Ctrl-C). Errors are one line on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import sys
import zlib
from collections.abc import Sequence
from datetime import datetime, timezone

from ir_incomplete.cli.common import Parser, write_lines
from ir_incomplete.data import NEGATIVE_POLICIES, SCORE_PRECISIONS
from ir_incomplete.data.files import atomic_write

__all__ = ["main", "build_parser"]

PROG = "ir_incomplete robustness"
EXIT_OK, EXIT_DATA, EXIT_USAGE = 0, 2, 2
MANIFEST = "manifest.json"
#: every file a study may write into ``--out`` (removed first under ``--overwrite``)
OUTPUT_FILES = (
    "stats.csv",
    "summary.csv",
    "scores.csv",
    "reference.csv",
    "robustness_tau.png",
    "robustness_rmse.png",
    MANIFEST,
)
CELLS = "cells"  # the finished grid cells of an unfinished study (removed once the study is complete)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C
#: parameters that do not change the results: a study may be resumed with other values
_RUNTIME = (
    "n_jobs",
    "progress",
    "no_progress",
    "no_plots",
    "full_summary",
    "overwrite",
    "resume",
    "out",
    "qrels",
    "runs",
    "groups",
)


class _UsageError(Exception):
    pass


class _OutError(Exception):
    """``--out`` cannot be written."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would exit; report instead
        raise _UsageError(message)

    _print_message = Parser._print_message  # help that cannot be written is one line, exit 1


def build_parser() -> argparse.ArgumentParser:
    from ir_incomplete.robustness.filters import RUN_FILTERS
    from ir_incomplete.robustness.study import METHODS

    p = _Parser(
        prog=PROG,
        description="Degrade the judgments (random samples, shallow pools, "
        "leave-one-group-out), re-evaluate every run and compare the system rankings with those "
        "of the full judgments (Kendall tau, Pearson rho, RMS error).",
    )
    p.add_argument("--qrels", required=True, help="full judgments: TREC qrels file (.gz allowed)")
    p.add_argument(
        "--runs",
        required=True,
        nargs="+",
        metavar="RUN",
        help="run files and/or directories of run files (at least 2 runs)",
    )
    p.add_argument(
        "--measures",
        required=True,
        nargs="+",
        metavar="MEASURE",
        help="measure strings, e.g. AP infAP Bpref 'nDCG@10' 'infAP(c=1.5)'",
    )
    p.add_argument(
        "--method",
        default="sample",
        choices=METHODS,
        help="degradation: sample, stratified (levels = fractions), depth, mixed (levels = pool "
        "depths), logo (leave one group out: every run scored without the documents only its group "
        "pooled; levels = pool depths, default 10; needs --groups); default sample",
    )
    p.add_argument(
        "--levels", default=None, help="comma-separated levels, e.g. 0.05,0.1,0.3,1 (default depends on --method)"
    )
    p.add_argument("--repeats", type=int, default=10, help="random draws per level (default 10)")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument(
        "--reference",
        default=None,
        metavar="MEASURE",
        help="compare every measure with this measure on the full judgments (default: each measure with itself)",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output folder (created if needed; must be empty unless --overwrite)",
    )
    p.add_argument(
        "--overwrite", action="store_true", help="use a non-empty --out folder: remove the previous study's files first"
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the interrupted study in --out (same options): compute only the grid cells it has not saved",
    )
    p.add_argument(
        "--filters",
        nargs="+",
        default=None,
        choices=RUN_FILTERS,
        metavar="FILTER",
        help="compare only the runs that pass these filters: top75 (best 75%% by the reference measure), "
        "retrieved95 (at least 95%% of 1000 documents per topic retrieved), above_q1 (above the first "
        "quartile of the reference measure)",
    )
    p.add_argument("--n-jobs", type=int, default=1, help="local worker processes (-1: one per CPU)")
    p.add_argument(
        "--unjudged",
        choices=("mark", "drop"),
        default="mark",
        help="removed judgments that stay in the pool: kept as -1 (mark, default) or removed",
    )
    p.add_argument(
        "--min-relevant",
        type=int,
        default=None,
        help="sample/stratified: relevant documents each topic keeps (default 1)",
    )
    p.add_argument(
        "--min-nonrelevant",
        type=int,
        default=None,
        help="stratified: nonrelevant documents each topic keeps (default 10)",
    )
    p.add_argument(
        "--extra",
        type=float,
        default=None,
        help="mixed: random extra judgments per topic, as a multiple of the depth pool (default 1)",
    )
    p.add_argument(
        "--pool-runs",
        nargs="+",
        default=None,
        metavar="NAME",
        help="depth/mixed/logo: names of the runs that form the pools (default: all runs)",
    )
    p.add_argument(
        "--groups",
        default=None,
        metavar="CSV",
        help="logo: CSV file with a 'run' column and a group column (see --group-column)",
    )
    p.add_argument(
        "--group-column", default="group", help="column of --groups naming the group (default 'group'; e.g. 'team')"
    )
    p.add_argument("--pool-depth", type=int, default=None, help="logo: pool depth (default 10; or use --levels)")
    p.add_argument(
        "--negative",
        choices=NEGATIVE_POLICIES,
        default="pooled_unjudged",
        help="meaning of negative qrels grades (default pooled_unjudged, as trec_eval)",
    )
    p.add_argument(
        "--score-precision",
        choices=SCORE_PRECISIONS,
        default="float32",
        help="score comparison precision (default float32, as trec_eval 9)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on stderr, one step per grid cell (default: when stderr is a terminal and the "
        "study takes more than 2 s)",
    )
    p.add_argument("--no-plots", action="store_true", help="write no PNG files")
    p.add_argument(
        "--full-summary",
        action="store_true",
        help="print every statistic with its standard deviation (as summary.csv) instead of the short summary",
    )
    return p


def _levels(text: str | None, method: str) -> list | None:
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise _UsageError("--levels is empty")
    out = []
    for item in items:
        try:
            if method in ("sample", "stratified"):
                out.append(float(item))
            else:
                out.append(int(item))
        except ValueError:
            kind = "a fraction" if method in ("sample", "stratified") else "an integer depth"
            raise _UsageError(f"--levels: {item!r} is not {kind}") from None
    return out


def _groups(path: str, column: str):
    import pandas as pd

    if not os.path.isfile(path):
        raise _UsageError(f"--groups: no such file: {path}")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)  # a team called "NA" stays "NA"
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # incl. pandas' ParserError, EmptyDataError
        raise _UsageError(f"--groups: cannot read {path}: {' '.join(str(exc).split())}") from None
    for col in ("run", column):
        if col not in frame.columns:
            raise _UsageError(f"--groups: {path} has no column {col!r} (columns: {', '.join(frame.columns)})")
    runs, names = frame["run"], frame[column]
    for values, what in ((runs, "run name"), (names, f"group ({column!r})")):
        empty = values.isna() | (values.str.strip() == "")
        if empty.any():
            rows = (empty[empty].index + 1).tolist()
            which = "" if what == "run name" else f" for runs {runs[empty].tolist()[:10]}"
            raise _UsageError(
                f"--groups: {path} has no {what}{which} (empty cell in data row{'s' if len(rows) > 1 else ''} "
                f"{', '.join(map(str, rows[:10]))}{' …' if len(rows) > 10 else ''}); every run needs its group"
            )
    mapping: dict[str, str] = {}
    for run, name in zip(runs, names, strict=True):
        if mapping.setdefault(run, name) != name:
            raise _UsageError(f"--groups: {path} gives run {run!r} two groups: {mapping[run]!r} and {name!r}")
    return mapping


def _run_files(items: Sequence[str]) -> list[str]:
    for item in items:
        if not os.path.exists(item):
            raise _UsageError(f"--runs: no such file or directory: {item}")
    return list(items)


def _options(args) -> dict:
    opts = {}
    if args.unjudged != "mark":
        opts["unjudged"] = args.unjudged
    pairs = {
        "sample": [("min_relevant", args.min_relevant)],
        "stratified": [("min_relevant", args.min_relevant), ("min_nonrelevant", args.min_nonrelevant)],
        "depth": [("pool_runs", args.pool_runs)],
        "mixed": [("pool_runs", args.pool_runs), ("extra", args.extra)],
        "logo": [("pool_runs", args.pool_runs), ("depth", args.pool_depth)],
    }[args.method]
    flags = {
        "min_relevant": "--min-relevant",
        "min_nonrelevant": "--min-nonrelevant",
        "extra": "--extra",
        "pool_runs": "--pool-runs",
        "depth": "--pool-depth",
    }
    allowed = {k for k, _ in pairs}
    for key, flag in flags.items():
        value = getattr(args, "pool_depth" if key == "depth" else key)
        if value is not None and key not in allowed:
            raise _UsageError(f"{flag} does not apply to --method {args.method}")
    opts.update({k: v for k, v in pairs if v is not None})
    if args.method == "logo":
        if args.groups is None:
            raise _UsageError("--method logo needs --groups CSV (columns 'run' and the group column)")
        opts["groups"] = _groups(args.groups, args.group_column)
    elif args.groups is not None:
        raise _UsageError(f"--groups does not apply to --method {args.method}")
    return opts


def _check_out(path: str, overwrite: bool) -> tuple[list[str], bool]:
    """Validate ``--out`` before the study: a folder (created if needed), empty unless ``overwrite``.
    Returns the previous study's files to remove, and whether the folder was created."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise _UsageError(f"--out: {path} exists and is not a folder")
    if os.path.isdir(path):
        present = sorted(os.listdir(path))
        if present and not overwrite:
            shown = ", ".join(present[:5]) + (" …" if len(present) > 5 else "")
            unfinished = _read_manifest(path).get("complete") is False
            raise _UsageError(
                f"--out: folder {path} is not empty ({shown}); "
                + (
                    "it holds an unfinished study: add --resume to continue it, or --overwrite to replace it"
                    if unfinished
                    else "use --overwrite to replace the study in it"
                )
            )
        if not os.access(path, os.W_OK | os.X_OK):
            raise _UsageError(f"--out: folder {path} is not writable")
        old = set(OUTPUT_FILES)
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
            with open(os.path.join(path, MANIFEST), encoding="utf-8") as handle:
                old.update(os.path.basename(str(f)) for f in json.load(handle).get("files", []))
        return [f for f in present if f in old or f == CELLS or (f.startswith(".") and f.endswith(".tmp"))], False
    try:
        os.makedirs(path)
    except OSError as exc:
        raise _UsageError(f"--out: cannot create folder {path}: {exc.strerror or exc}") from None
    return [], True


def _read_manifest(out: str) -> dict:
    """The manifest of the study in ``out`` ({} when there is none or it cannot be read)."""
    try:
        with open(os.path.join(out, MANIFEST), encoding="utf-8") as handle:
            manifest = json.load(handle)
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def _check_resume(args) -> dict:
    """Validate ``--resume``: ``--out`` holds an unfinished study run with the same options. Returns its
    manifest. (The judgments' and runs' contents are compared by the study itself.)"""
    out = args.out
    if args.overwrite:
        raise _UsageError("--resume continues the study in --out and --overwrite replaces it: give one of them")
    if not os.path.isdir(out):
        raise _UsageError(f"--resume: no folder {out} (nothing to resume)")
    manifest = _read_manifest(out)
    if not manifest:
        raise _UsageError(f"--resume: {out} holds no study ({MANIFEST} is missing or unreadable)")
    if manifest.get("complete") is True:
        raise _UsageError(f"--resume: the study in {out} is complete; nothing to resume")
    there = manifest.get("parameters") or {}
    here = vars(args)
    differ = [
        f"--{key.replace('_', '-')} ({json.dumps(there.get(key), default=str)} there, "
        f"{json.dumps(here.get(key), default=str)} here)"
        for key in sorted(set(there) | set(here))
        if key not in _RUNTIME and there.get(key) != _plain(here.get(key))
    ]
    if differ:
        raise _UsageError(
            f"--resume: the study in {out} was run with other options; resume it with the same ones: "
            + "; ".join(differ)
        )
    if not os.access(out, os.W_OK | os.X_OK):
        raise _UsageError(f"--out: folder {out} is not writable")
    return manifest


def _plain(value):
    return json.loads(json.dumps(value, default=str))


def _remove_cells(out: str) -> None:
    """Remove the cell folder of ``out``: the study's own files in it, then the folder if it is empty."""
    folder = os.path.join(out, CELLS)
    if not os.path.isdir(folder):
        return
    for name in os.listdir(folder):
        if (name.startswith("cell-") and name.endswith(".npz")) or name == "study.json" or name.endswith(".tmp"):
            os.unlink(os.path.join(folder, name))
    with contextlib.suppress(OSError):
        os.rmdir(folder)


def _resume_command(argv: Sequence[str]) -> str:
    """The command line that resumes this study: the same arguments, without --overwrite, with --resume."""
    import shlex

    args = [a for a in argv if a != "--overwrite"]
    if "--resume" not in args:
        args.append("--resume")
    return shlex.join(["ir_incomplete", "robustness", *args])


def _write_manifest(out: str, manifest: dict) -> None:
    text = json.dumps(manifest, indent=2, default=str) + "\n"

    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)

    atomic_write(os.path.join(out, MANIFEST), write)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _manifest(args, argv: Sequence[str], options: dict, levels) -> dict:
    from ir_incomplete._version import __version__

    parameters = {k: v for k, v in sorted(vars(args).items())}
    return {
        "program": PROG,
        "package": "ir_incomplete",
        "version": __version__,
        "python": sys.version.split()[0],
        "argv": list(argv),
        "parameters": parameters,
        "levels": levels,
        "options": {k: v for k, v in options.items() if k != "groups"},
        "groups": options.get("groups"),
        "seed": args.seed,
        "started": _now(),
        "complete": False,
        "files": [],
    }


def _check_study(args, levels, options) -> None:
    """What the study would refuse, checked before ``--out`` is touched: every measure string (and the
    reference) parses, no measure is listed twice, the levels are valid and distinct."""
    from ir_incomplete.api import as_measures
    from ir_incomplete.robustness.study import _check_levels

    labels = []
    for token in [*args.measures, *([] if args.reference is None else [args.reference])]:
        try:
            labels.append(repr(as_measures([token])[0]))
        except (ValueError, NameError) as exc:
            raise ValueError(f"measure {token!r}: {exc}") from None
    labels = labels[: len(args.measures)]  # the reference may repeat a measure
    if len(set(labels)) != len(labels):
        raise ValueError(f"measures lists a measure twice: {labels}")
    _check_levels(args.method, levels, options.get("depth"))


def _interrupted(out: str, manifest: dict | None, argv: Sequence[str], exc: BaseException, grid_done: bool) -> int:
    """Ctrl-C: record it in the manifest and say, in one line, how to resume."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the manifest short
    try:
        if manifest is None:  # nothing was started
            sys.stderr.write(f"{PROG}: interrupted before the study started; nothing was written\n")
            return EXIT_INTERRUPTED
        cells = os.path.join(out, CELLS)
        finished = getattr(exc, "finished", None)
        total = getattr(exc, "total", None)
        if finished is None:  # interrupted outside the grid: count what is on disk
            with contextlib.suppress(OSError):
                finished = sum(n.startswith("cell-") and n.endswith(".npz") for n in os.listdir(cells))
        manifest.update(
            complete=False, interrupted=_now(), cells={"folder": CELLS, "finished": finished, "total": total}
        )
        with contextlib.suppress(OSError):
            _write_manifest(out, manifest)
        if total is not None:
            saved = f"{finished} of {total} grid cells"
        else:
            saved = f"{'all ' if grid_done else ''}{finished or 0} grid cells"
        sys.stderr.write(f"{PROG}: interrupted; {saved} saved in {cells}; resume with: {_resume_command(argv)}\n")
        return EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGINT, previous)


def _tie_note(reference) -> str | None:
    """A note for the summary when runs tie on the full judgments (τ_AP then stays below 1)."""
    tied = [
        (measure, int(group["value"].duplicated(keep=False).sum()))
        for measure, group in reference.groupby("measure", sort=False)
    ]
    tied = [(m, n) for m, n in tied if n]
    if not tied:
        return None
    which = ", ".join(f"{n} runs under {m}" for m, n in tied[:5])
    return (
        f"note: tied runs on the full judgments ({which}): tau_ap < 1 even where the rankings agree, since "
        f"tau_ap counts each tied pair as half right (its expected value over random orders of the tie); "
        f"Kendall's tau (tau-b) discounts ties and can still be 1"
    )


class _Run:
    """What an interrupt needs to know: the output folder and, once the grid started, the manifest."""

    out = ""
    created = False
    manifest: dict | None = None
    grid_done = False  # every grid cell is computed (and saved)


def main(argv: Sequence[str] | None = None) -> int:
    """Run a robustness study; returns the exit code (0 success, 2 usage or data error, 130 interrupted)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    run = _Run()
    try:
        return _main(build_parser(), argv, run)
    except KeyboardInterrupt as exc:
        if run.manifest is None and run.created:  # interrupted before the grid: leave no empty folder
            with contextlib.suppress(OSError):
                if not os.listdir(run.out):
                    os.rmdir(run.out)
        return _interrupted(run.out, run.manifest, argv, exc, run.grid_done)


def _main(parser, argv: list[str], run: _Run) -> int:
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as done:  # --help
            return int(done.code or 0)
        if args.resume and args.overwrite:
            raise _UsageError("--resume continues the study in --out and --overwrite replaces it: give one of them")
        if not os.path.isfile(args.qrels):
            raise _UsageError(f"--qrels: no such file: {args.qrels}")
        runs = _run_files(args.runs)
        levels = _levels(args.levels, args.method)
        options = _options(args)
    except _UsageError as exc:
        sys.stderr.write(parser.format_usage())
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return EXIT_USAGE
    try:
        _check_study(args, levels, options)
        stale: list[str] = []
        created = False
        if args.resume:
            previous = _check_resume(args)
        else:
            previous = None
            stale, created = _check_out(args.out, args.overwrite)
    except (_UsageError, ValueError, TypeError) as exc:  # incl. the grammar's MeasureSyntaxError
        sys.stderr.write(f"{PROG}: error: {' '.join(str(exc).split())}\n")
        return EXIT_USAGE

    import pandas as pd

    from ir_incomplete.robustness.study import robustness_study

    out = run.out = args.out
    run.created = created
    manifest = _manifest(args, argv, options, levels)
    if previous is not None:
        manifest["started"] = previous.get("started", manifest["started"])
        manifest["resumed"] = [*previous.get("resumed", []), _now()]
    started = False

    def start() -> None:  # the study is validated and about to run its grid: now --out changes
        nonlocal started
        try:
            for name in stale:
                if name == CELLS:
                    _remove_cells(out)
                else:
                    os.unlink(os.path.join(out, name))
            _write_manifest(out, manifest)
        except OSError as exc:
            raise _OutError(f"cannot write to --out folder {out}: {exc.strerror or exc}") from None
        started = True
        run.manifest = manifest

    def fail(exc, code):
        sys.stderr.write(f"{PROG}: error: {' '.join(str(exc).split())}\n")
        if not args.resume:
            with contextlib.suppress(OSError):  # nothing was computed: leave the folder as it was
                if started:
                    os.unlink(os.path.join(out, MANIFEST))
                    _remove_cells(out)
                if created and not os.listdir(out):
                    os.rmdir(out)
        return code

    cells = os.path.join(out, CELLS)
    try:
        from ir_incomplete.api import as_run_mapping

        run_map = as_run_mapping(runs)  # refuses two runs of one name, naming both files
        result = robustness_study(
            run_map,
            args.qrels,
            args.measures,
            method=args.method,
            levels=levels,
            repeats=args.repeats,
            seed=args.seed,
            reference=args.reference,
            n_jobs=args.n_jobs,
            progress=args.progress,
            options=options,
            filters=args.filters,
            negative=args.negative,
            score_precision=args.score_precision,
            checkpoint=None if args.resume else cells,
            resume=cells if args.resume else None,
            _before_grid=start,
        )
    except _OutError as exc:
        return fail(exc, EXIT_USAGE)
    except (ValueError, TypeError) as exc:  # incl. the grammar's MeasureSyntaxError
        return fail(exc, EXIT_USAGE)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError, EOFError, zlib.error, RecursionError) as exc:
        return fail(exc, EXIT_DATA)

    run.grid_done = True
    return _write_outputs(args, out, result, manifest)


#: the columns of the printed summary unless --full-summary (the means; the standard deviations of τ and RMSE)
SHORT_SUMMARY = ("measure", "level", "repeats", "tau", "tau_std", "tau_ap", "rmse", "rmse_std", "rmse_topic")


def short_summary(summary):
    """The printed summary: :data:`SHORT_SUMMARY`'s columns of ``summary`` (those it has), without the
    standard deviations when every cell has one repeat (they are all 0)."""
    columns = [c for c in SHORT_SUMMARY if c in summary.columns]
    if "repeats" in summary.columns and (summary["repeats"] <= 1).all():
        columns = [c for c in columns if not c.endswith("_std")]
    return summary[columns]


def _write_outputs(args, out: str, result, manifest: dict) -> int:
    import pandas as pd

    from ir_incomplete.robustness.study import summarize

    summary = summarize(result.stats)
    tables = {
        "stats.csv": result.stats,
        "summary.csv": summary,
        "scores.csv": result.scores,
        "reference.csv": result.reference,
    }
    note = _tie_note(result.reference)
    written = []
    try:
        for name, frame in tables.items():
            atomic_write(os.path.join(out, name), functools.partial(frame.to_csv, index=False))
            written.append(name)
        if not args.no_plots:
            try:
                import matplotlib  # noqa: F401

                from ir_incomplete.robustness.plot import plot_robustness
            except ImportError:
                sys.stderr.write(
                    f"{PROG}: matplotlib is not installed; no plots written (pip install ir_incomplete[plot])\n"
                )
            else:
                for stat in ("tau", "rmse"):
                    name = f"robustness_{stat}.png"
                    fig = plot_robustness(result.stats, stat)  # a bare Figure: no pyplot state to close
                    atomic_write(os.path.join(out, name), functools.partial(fig.savefig, format="png"))
                    written.append(name)
        manifest.update(
            complete=True,
            files=written,
            runs=list(pd.unique(result.reference["run"])),
            runs_removed_by_filters=result.stats.attrs.get("runs_removed", []),
            finished=_now(),
        )
        manifest.pop("cells", None)
        if note:
            manifest["notes"] = [note]
        _write_manifest(out, manifest)
        _remove_cells(out)  # the results are written: the cells are not needed any more
    except OSError as exc:
        sys.stderr.write(f"{PROG}: error: cannot write to --out folder {out}: {exc.strerror or exc}\n")
        return EXIT_USAGE
    with pd.option_context("display.width", 250, "display.max_rows", 500):
        shown = summary if args.full_summary else short_summary(summary)
        lines = [shown.to_string(index=False, float_format=lambda v: f"{v:.4f}")]
    if not args.full_summary:
        lines.append(
            "(means over the repeats; every statistic with its standard deviation is in summary.csv, "
            "--full-summary prints it)"
        )
    if note:
        lines.append(note)
    lines.append(f"wrote {', '.join(written + [MANIFEST])} to {out}")
    # the study is on disk either way; a summary that cannot be printed is exit 1 (one line, as every command)
    return write_lines(lines)
