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
query: percentiles of its replicates; summary lines: percentiles of the replicate means; either
extended to the printed value where the value lies outside, so that ``lo <= value <= hi``, see
:func:`ir_incomplete.bootstrap.value_interval`), empty (tsv) or ``null`` (jsonl) for other measures.
``--header`` (tsv only) prints a first line naming the columns:
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
    ir_incomplete sample RUN... --budget N             a probability sample of pairs to judge (a design)
    ir_incomplete estimate QRELS DESIGN RUN... MEASURE...  design-based estimates and intervals

With ``-o jsonl`` every value must be a finite number (JSON has no NaN or infinity): a value that is
not is an error (exit 2) naming it, never ``NaN`` in the output; ``-o tsv`` prints it as ``nan``.

Exit codes: 0 success; 2 usage and data errors (bad options, a bad measure string, a missing file, an
unreadable, truncated or malformed qrels or run file, qrels with nothing to evaluate, a value that is
not finite with ``-o jsonl``, a failure of another ``ir_measures`` provider); 1 only when the
output could not be written (a closed pipe, quietly; any other write error, e.g. a full disk, with
``ir_incomplete: error: cannot write output: <reason>``, the subcommand's name after
``ir_incomplete``); 130 interrupted (Ctrl-C: ``ir_incomplete: interrupted``, likewise), in every
command. Errors are one line on stderr, never a traceback: ``ir_incomplete: error: <message>``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from ir_incomplete.cli.common import EXIT_DATA, CliError, dispatch, report_error, split_measure_args
from ir_incomplete.cli.evaluate import evaluation_main
from ir_incomplete.cli.measures import measure_example, measure_rows, measures_main
from ir_incomplete.grammar.errors import measure_error_message

__all__ = [
    "main",
    "console_main",
    "evaluation_main",
    "measures_main",
    "measure_example",
    "measure_rows",
    "robustness_main",
    "compare_main",
    "pool_main",
    "agreement_main",
    "judge_next_main",
    "ppi_main",
    "sample_main",
    "estimate_main",
    "SUBCOMMANDS",
    "split_measure_args",
    "measure_error_message",
]


def robustness_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.cli.robustness.main(argv)``."""
    import importlib

    try:
        module = importlib.import_module("ir_incomplete.cli.robustness")
    except ModuleNotFoundError as exc:
        if exc.name in ("ir_incomplete.robustness", "ir_incomplete.cli.robustness"):
            return report_error(
                CliError("the 'robustness' subcommand is not available in this version of ir_incomplete")
            )
        return report_error(
            CliError(f"the 'robustness' subcommand needs the module {exc.name!r}; install it first", EXIT_DATA)
        )
    return module.main(list(argv))


def compare_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.cli.compare.main(argv)``."""
    from ir_incomplete.cli.compare import main as compare_command

    return compare_command(list(argv))


def pool_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.cli.judging.pool_main(argv)``."""
    from ir_incomplete.cli.judging import pool_main as main

    return main(list(argv))


def agreement_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.cli.judging.agreement_main(argv)``."""
    from ir_incomplete.cli.judging import agreement_main as main

    return main(list(argv))


def judge_next_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.cli.judging.judge_next_main(argv)``."""
    from ir_incomplete.cli.judging import judge_next_main as judge_main

    return judge_main(list(argv))


def ppi_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.cli.ppi.main(argv)``."""
    from ir_incomplete.cli.ppi import main as ppi_cli_main

    return ppi_cli_main(list(argv))


def sample_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.cli.design.sample_main(argv)``."""
    from ir_incomplete.cli.design import sample_main as main

    return main(list(argv))


def estimate_main(argv: Sequence[str]) -> int:
    """Hand over to ``ir_incomplete.cli.design.estimate_main(argv)``."""
    from ir_incomplete.cli.design import estimate_main as main

    return main(list(argv))


SUBCOMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "measures": measures_main,
    "robustness": robustness_main,
    "compare": compare_main,
    "pool": pool_main,
    "agreement": agreement_main,
    "judge-next": judge_next_main,
    "ppi": ppi_main,
    "sample": sample_main,
    "estimate": estimate_main,
}


def main(argv: Sequence[str] | None = None) -> int:
    """The command line on ``argv`` (default ``sys.argv[1:]``); returns the exit code. Every command runs
    through :func:`ir_incomplete.cli.common.dispatch`: Ctrl-C is one line (``ir_incomplete <command>:
    interrupted``, exit 130) and output that cannot be written one line (``ir_incomplete <command>:
    error: cannot write output: <reason>``, exit 1), never a traceback."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        return dispatch(SUBCOMMANDS[argv[0]], argv[1:], argv[0])
    return dispatch(evaluation_main, argv)


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
    Atexit handlers and ``finally`` blocks still run, except after Ctrl-C while a background thread (a
    file read ahead, a named pipe waited for) is still at work: the process then ends at once with exit
    130 (``os._exit``, stdout and stderr flushed first), because finalising the interpreter under a
    thread that runs inside pandas or pyarrow can crash it (SIGSEGV instead of 130)."""
    import gc
    import os
    import threading

    from ir_incomplete.cli.common import EXIT_INTERRUPTED

    argv = sys.argv[1:]
    if not (argv and argv[0] in SUBCOMMANDS):
        gc.disable()
        _small_pages()
        _reuse_freed_memory()
    status = main(argv)
    if status == EXIT_INTERRUPTED and threading.active_count() > 1:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        os._exit(status)
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
