"""Robustness toolkit: degrade complete judgments, re-evaluate, compare system rankings, plot.

The seed papers show their measures robust by degrading complete judgments and checking how each
measure's system ranking and values hold. This package does that for any measure ``ir_incomplete`` or
``ir_measures`` computes:

* **degrade** (:mod:`~ir_incomplete.robustness.degrade`): :func:`sample_judgments` (uniform samples,
  at least one relevant document kept), :func:`stratified_sample` (the same fraction of every grade),
  :func:`depth_pool`, :func:`mixed_pool` (depth pool plus random extra judgments) and
  :func:`leave_one_group_out`; all seeded, all returning new qrels DataFrames;
* **filters** (:mod:`~ir_incomplete.robustness.filters`): the papers' run filters :func:`top_runs`,
  :func:`runs_retrieving`, :func:`runs_above_quartile` and :func:`filter_runs`;
* **compare** (:mod:`~ir_incomplete.robustness.compare`): Kendall τ, τ_AP, Spearman, Pearson ρ, RMS
  error, bias, swap rates (absolute or relative to the best score);
* **significance** (:mod:`~ir_incomplete.robustness.significance`): paired t, Wilcoxon, bootstrap and
  randomised Tukey HSD tests between runs, :func:`discriminative_power`, :func:`preference_agreement`;
* **study** (:mod:`~ir_incomplete.robustness.study`): :func:`robustness_study` runs the whole grid
  (levels × repeats), locally, in processes or on a dask cluster, including leave-one-group-out
  (``method="logo"``: every run scored without its own group's pool contributions); with
  ``checkpoint=DIR`` every finished cell is saved, and ``resume=DIR`` continues an interrupted study
  (:class:`StudyInterrupted`);
* **plot** (:mod:`~ir_incomplete.robustness.plot`, needs matplotlib): robustness curves and
  actual-vs-estimated scatter plots;
* the ``ir_incomplete robustness`` command line is :mod:`ir_incomplete.cli.robustness`.

Example::

    from ir_incomplete.robustness import robustness_study, summarize, plot_robustness
    result = robustness_study("runs/", "qrels.txt", ["AP", "Bpref", "infAP"], method="sample",
                              levels=[0.05, 0.1, 0.3], repeats=10, seed=1, reference="AP")
    print(summarize(result.stats))
    plot_robustness(result.stats, "tau", path="tau.png")
"""

from ir_incomplete.robustness.compare import (
    agreement,
    bias,
    kendall_tau,
    pearson,
    per_topic_matrix,
    rmse,
    spearman,
    swap_rate,
    swap_rates,
    tau_ap,
)
from ir_incomplete.robustness.degrade import (
    UNJUDGED_POLICIES,
    RunPool,
    depth_pool,
    leave_one_group_out,
    mixed_pool,
    round_half_up,
    sample_judgments,
    stratified_sample,
)
from ir_incomplete.robustness.filters import RUN_FILTERS, filter_runs, runs_above_quartile, runs_retrieving, top_runs
from ir_incomplete.robustness.plot import plot_robustness, plot_scatter
from ir_incomplete.robustness.significance import TESTS, discriminative_power, pairwise_tests, preference_agreement
from ir_incomplete.robustness.study import (
    DEFAULT_LEVELS,
    METHODS,
    StudyInterrupted,
    StudyResult,
    robustness_study,
    summarize,
)

__all__ = [
    "UNJUDGED_POLICIES",
    "RunPool",
    "sample_judgments",
    "stratified_sample",
    "depth_pool",
    "mixed_pool",
    "leave_one_group_out",
    "round_half_up",
    "kendall_tau",
    "tau_ap",
    "spearman",
    "pearson",
    "rmse",
    "bias",
    "agreement",
    "swap_rates",
    "swap_rate",
    "per_topic_matrix",
    "RUN_FILTERS",
    "top_runs",
    "runs_above_quartile",
    "runs_retrieving",
    "filter_runs",
    "TESTS",
    "pairwise_tests",
    "discriminative_power",
    "preference_agreement",
    "METHODS",
    "DEFAULT_LEVELS",
    "StudyResult",
    "StudyInterrupted",
    "robustness_study",
    "summarize",
    "plot_robustness",
    "plot_scatter",
]
