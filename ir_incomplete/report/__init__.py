"""Comparison reports: runs against a baseline, or every pair of runs, with paired significance tests.

:func:`compare` evaluates every run with every measure per topic (:func:`ir_incomplete.evaluate`), tests
each comparison on the paired per-topic scores with one of the tests of
:mod:`ir_incomplete.robustness.significance` (:data:`TESTS`: paired t, Wilcoxon signed-rank, paired
bootstrap, randomised Tukey HSD), corrects the p-values for multiple comparisons per measure (Bonferroni,
Holm or Benjamini–Hochberg, as ``statsmodels.stats.multitest.multipletests``) and returns a tidy DataFrame.
:func:`format_report` writes that table as a markdown or LaTeX table (runs × measures, the best value per
measure in bold, significance marks) or as TSV. The ``ir_incomplete compare`` command line
(:mod:`ir_incomplete.cli.compare`) does both.
"""

from __future__ import annotations

from ir_incomplete.report.comparison import (
    BASELINE_MARK,
    CORRECTIONS,
    DEFAULT_B,
    DEFAULT_SEED,
    FORMATS,
    TESTS,
    adjust_p_values,
    ci_level,
    compare,
)
from ir_incomplete.report.formatting import format_report

__all__ = [
    "compare",
    "format_report",
    "adjust_p_values",
    "ci_level",
    "TESTS",
    "CORRECTIONS",
    "FORMATS",
    "BASELINE_MARK",
    "DEFAULT_B",
    "DEFAULT_SEED",
]
