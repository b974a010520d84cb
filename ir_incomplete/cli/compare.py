"""``ir_incomplete compare``: runs against a baseline or pair by pair with significance tests, as a
markdown, LaTeX or TSV table (the library: :func:`ir_incomplete.compare` and
:func:`ir_incomplete.format_report` of :mod:`ir_incomplete.report`)."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from ir_incomplete.cli.common import (
    EXIT_DATA,
    PROG,
    CliError,
    Parser,
    check_input_file,
    read_input,
    run_command,
    runs_and_measures,
)
from ir_incomplete.data import NEGATIVE_POLICIES, SCORE_PRECISIONS
from ir_incomplete.report import CORRECTIONS, DEFAULT_B, DEFAULT_SEED, FORMATS, TESTS, compare, format_report
from ir_incomplete.report.comparison import _check_digits
from ir_incomplete.report.formatting import _check_text

__all__ = ["main"]

_DESCRIPTION = """\
Compare runs per measure with paired significance tests: every run against --baseline, or every pair
of runs, with a multiple-comparison correction per measure. After QRELS, every argument that names an
existing file or directory is a run (a directory stands for all files in it); the remaining arguments
are measure strings. Output: a markdown or LaTeX table (runs x measures, best value in bold; with a
baseline, a dagger marks a value significantly different from the baseline's; without one, superscript
letters (numbers beyond 26 runs) name the runs a value is significantly higher than) or the full table
as TSV, whose columns include the difference of the means, its paired t confidence interval (ci_low,
ci_high at ci_level: 1 - alpha, or 1 - alpha/m with a correction over m comparisons) and Cohen's d_z
(effect_size); --differences adds these to the markdown and LaTeX output.
"""


def _parser():
    parser = Parser(
        prog=f"{PROG} compare",
        usage=f"{PROG} compare [options] QRELS RUN RUN [RUN ...] MEASURE [MEASURE ...]",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("qrels", metavar="QRELS", help="TREC qrels file (.gz allowed)")
    parser.add_argument(
        "items", nargs="+", metavar="RUN... MEASURE", help="run files or directories of run files, then measure strings"
    )
    parser.add_argument(
        "--baseline", metavar="NAME", help="the run (file name without .gz) every other run is compared with"
    )
    parser.add_argument("--test", choices=TESTS, default="t", help="paired two-sided test (default t)")
    parser.add_argument(
        "--correction",
        choices=("none",) + CORRECTIONS,
        default="none",
        help="multiple-comparison correction over each measure's comparisons: bonferroni, holm, fdr_bh "
        "(Benjamini-Hochberg false discovery rate) or none (default)",
    )
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--format", choices=FORMATS, default="markdown", help="output format (default markdown)")
    parser.add_argument("--digits", type=int, default=4, help="decimals of markdown and LaTeX values (default 4)")
    parser.add_argument(
        "--differences",
        action="store_true",
        help="markdown and LaTeX: add a table of the differences of the means with their confidence intervals "
        "and effect sizes (the tsv output always has the columns ci_low, ci_high, ci_level, effect_size)",
    )
    parser.add_argument("--caption", default=None, help="LaTeX: the table's caption (default: one naming the baseline)")
    parser.add_argument("--label", default="tab:compare", help="LaTeX: the table's \\label (default tab:compare)")
    parser.add_argument(
        "-B",
        "--resamples",
        type=int,
        default=DEFAULT_B,
        help=f"resamples of bootstrap / randomized_tukey (default {DEFAULT_B})",
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"seed of bootstrap / randomized_tukey (default {DEFAULT_SEED})"
    )
    parser.add_argument("--negative", choices=NEGATIVE_POLICIES, default="pooled_unjudged", help="as for evaluation")
    parser.add_argument(
        "--score-precision",
        dest="score_precision",
        choices=SCORE_PRECISIONS,
        default="float32",
        help="as for evaluation",
    )
    parser.add_argument(
        "--topics",
        choices=("qrels", "run"),
        default="qrels",
        help="every qrels topic, unanswered = 0 (default), or the topics every run answers",
    )
    return parser


def _compare_text(args) -> str:
    from ir_incomplete.data import read_trec_qrels, read_trec_run
    from ir_incomplete.robustness.significance import _check_alpha, _check_b

    try:  # before the runs are read
        _check_alpha(args.alpha)
        _check_b(args.resamples)
        _check_digits(args.digits)
        _check_text(args.caption, "caption", True)
        _check_text(args.label, "label", False)
    except ValueError as exc:
        raise CliError(
            str(exc)
            .replace("alpha=", "--alpha ")
            .replace("B=", "-B ")
            .replace("digits=", "--digits ")
            .replace("caption=", "--caption ")
            .replace("label=", "--label ")
        ) from None

    check_input_file(args.qrels, "qrels")
    run_files, measures = runs_and_measures(args.items, "QRELS RUN RUN [RUN ...] MEASURE ...")
    if len(run_files) < 2:
        raise CliError(f"compare needs at least 2 runs; got {len(run_files)}: {', '.join(run_files)}")
    if args.baseline is not None and args.baseline not in run_files:
        raise CliError(f"--baseline {args.baseline!r} is not a run; runs: {', '.join(run_files)}")
    qrels = read_input(read_trec_qrels, args.qrels, "qrels")
    if len(qrels) == 0:
        raise CliError(f"qrels file {args.qrels!r} holds no judgments: nothing could be compared", EXIT_DATA)
    runs = {name: read_input(read_trec_run, path, "run") for name, path in run_files.items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            table = compare(
                runs,
                qrels,
                measures,
                baseline=args.baseline,
                test=args.test,
                correction=None if args.correction == "none" else args.correction,
                alpha=args.alpha,
                B=args.resamples,
                seed=args.seed,
                negative=args.negative,
                score_precision=args.score_precision,
                topics=args.topics,
            )
            text = format_report(
                table,
                args.format,
                digits=args.digits,
                differences=args.differences,
                caption=args.caption,
                label=args.label,
            )
        except (ValueError, TypeError) as exc:
            raise CliError(" ".join(str(exc).split()), EXIT_DATA) from None
    for warning in caught:
        sys.stderr.write(f"ir_incomplete compare: warning: {' '.join(str(warning.message).split())}\n")
    return text


def main(argv: Sequence[str]) -> int:
    """``ir_incomplete compare QRELS RUN RUN [RUN ...] MEASURE [MEASURE ...] [--baseline NAME] [--test t]
    [--correction none|bonferroni|holm|fdr_bh] [--alpha 0.05] [--format markdown|latex|tsv]``; returns the exit
    code (0 success, 2 usage or data error, 1 output not written), as the other subcommands."""
    return run_command(_parser(), lambda args: _compare_text(args).rstrip("\n").split("\n"), argv)
