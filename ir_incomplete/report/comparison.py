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

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ir_incomplete.data.named_files import read_once_per_call

if TYPE_CHECKING:
    import pandas as pd

    from ir_incomplete.api import MeasureSpec
    from ir_incomplete.robustness.degrade import Seed
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = [
    "compare",
    "adjust_p_values",
    "ci_level",
    "TESTS",
    "CORRECTIONS",
    "FORMATS",
    "BASELINE_MARK",
    "DEFAULT_B",
    "DEFAULT_SEED",
]

#: the significance tests (those of :mod:`ir_incomplete.robustness.significance`)
TESTS = ("t", "wilcoxon", "bootstrap", "randomized_tukey")
#: multiple-comparison corrections (``None``: none)
CORRECTIONS = ("bonferroni", "holm", "fdr_bh")
#: output formats of :func:`format_report`
FORMATS = ("markdown", "latex", "tsv")
#: the mark of a value significantly different from the baseline's (LaTeX: ``$^{\dagger}$``)
BASELINE_MARK = "†"
#: resamples of the bootstrap and randomised Tukey HSD tests
DEFAULT_B = 1000
#: seed of the bootstrap and randomised Tukey HSD tests
DEFAULT_SEED = 0

_TEST_NAMES = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "bootstrap": "paired bootstrap test",
    "randomized_tukey": "randomised Tukey HSD test",
}
_CORRECTION_NAMES = {
    None: "no correction",
    "bonferroni": "Bonferroni correction",
    "holm": "Holm correction",
    "fdr_bh": "Benjamini–Hochberg false discovery rate correction",
}
_BASELINE_COLUMNS = (
    "measure",
    "run",
    "baseline",
    "value",
    "baseline_value",
    "difference",
    "p_value",
    "p_adjusted",
    "significant",
    "topics",
)
_PAIR_COLUMNS = (
    "measure",
    "run_a",
    "run_b",
    "value_a",
    "value_b",
    "difference",
    "p_value",
    "p_adjusted",
    "significant",
    "topics",
)


# ---------------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------------
def _check_test(test) -> str:
    if not isinstance(test, str) or test not in TESTS:
        raise ValueError(f"test={test!r} is not valid; choices: {', '.join(TESTS)}")
    return test


def _check_correction(correction) -> str | None:
    if correction is not None and (not isinstance(correction, str) or correction not in CORRECTIONS):
        raise ValueError(f"correction={correction!r} is not valid; choices: None, {', '.join(CORRECTIONS)}")
    return correction


def _check_digits(digits) -> int:
    if isinstance(digits, (bool, np.bool_)) or not isinstance(digits, (int, np.integer)) or not 0 <= digits <= 17:
        raise ValueError(f"digits={digits!r} is not valid; expected an integer from 0 to 17")
    return int(digits)


def adjust_p_values(p_values: Sequence[float] | np.ndarray, correction: str | None) -> np.ndarray:
    """p-values adjusted for multiple comparisons over one family (all of ``p_values``).

    ``correction``: ``None`` (returned unchanged, as a new array), ``"bonferroni"`` (min(1, m · p)),
    ``"holm"`` (Holm's step-down: with p₍₁₎ ≤ … ≤ p₍ₘ₎, the adjusted p₍ₖ₎ = min(1, max over j ≤ k of
    (m − j + 1) · p₍ⱼ₎)) or ``"fdr_bh"`` (Benjamini & Hochberg 1995, the false discovery rate: the
    adjusted p₍ₖ₎ = min(1, min over j ≥ k of m · p₍ⱼ₎ / j); "significant" then controls the expected share
    of false discoveries among the significant comparisons, not the family-wise error), equal to
    ``statsmodels.stats.multitest.multipletests(p, method=...)[1]``.
    ``m`` counts the p-values that are not NaN; a NaN p-value stays NaN.
    """
    correction = _check_correction(correction)
    p = np.array(p_values, dtype=np.float64).reshape(-1)
    known = ~np.isnan(p)
    m = int(known.sum())
    if correction is None or m == 0:
        return p
    q = p[known]
    if correction == "bonferroni":
        adjusted = q * float(m)
    else:
        order = np.argsort(q, kind="stable")
        if correction == "holm":
            stepped = np.maximum.accumulate(q[order] * np.arange(m, 0, -1))
        else:  # fdr_bh: step-up, the running minimum from the largest p-value down
            stepped = np.minimum.accumulate((q[order] * (m / np.arange(1, m + 1)))[::-1])[::-1]
        adjusted = np.empty(m)
        adjusted[order] = stepped
    p[known] = np.minimum(adjusted, 1.0)
    return p


def ci_level(alpha: float, correction: str | None, comparisons: int, rejected: int = 0) -> float:
    """Confidence level of the intervals of the mean differences that :func:`compare` reports: ``1 − alpha``
    without a correction; ``1 − alpha / m`` (m = ``comparisons``, the family) with ``"bonferroni"`` and
    with ``"holm"`` (Holm's step-down test has no intervals of its own: these are the simultaneous
    Bonferroni intervals, which Holm's rejections can exceed); with ``"fdr_bh"`` the false-coverage-rate
    adjusted level ``1 − R · alpha / m`` of Benjamini & Yekutieli (JASA 100, 2005), R = the ``rejected``
    comparisons (``1 − alpha / m`` when R = 0)."""
    m = max(int(comparisons), 1)
    if correction is None:
        return 1.0 - alpha
    if correction == "fdr_bh":
        return 1.0 - max(int(rejected), 1) * alpha / m
    return 1.0 - alpha / m


def _difference_intervals(differences: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(low, high, effect size)`` per row of ``differences`` (comparisons × topics): the paired t
    interval of the mean difference at ``level`` (mean ± t_{n−1} · sd / √n, as
    ``scipy.stats.ttest_rel(a, b).confidence_interval(level)``) and Cohen's d_z = mean / sd (sd with
    n − 1; 0 when every difference is 0, ±inf when every topic differs by the same nonzero amount)."""
    from scipy import stats

    n = differences.shape[1]
    mean = differences.mean(axis=1)
    sd = differences.std(axis=1, ddof=1)
    half = stats.t.ppf(0.5 + level / 2.0, n - 1) * sd / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = np.where(sd > 0, mean / sd, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)))
    return mean - half, mean + half, effect


# ---------------------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------------------
def _run_names(runs) -> tuple[Any, list[str]]:
    """The runs as :func:`evaluate` takes them (a name → run mapping, or PreparedRuns) and their names."""
    from ir_incomplete.api import as_run_mapping
    from ir_incomplete.data import PreparedRuns

    if isinstance(runs, PreparedRuns):
        return runs, [str(name) for name in runs.run_names]
    mapping = as_run_mapping(runs)
    return mapping, list(mapping)


def _baseline_name(baseline, names: list[str]) -> str:
    """The run name ``baseline`` stands for: runs are named by the text of their keys (a key ``1`` is the
    run ``"1"``), so a number names the run of its text, an integral float also that of its integer
    (``1.0`` as ``"1"``, as query ids); anything else, or no such run, is a ``ValueError`` listing the runs."""
    value = baseline.item() if isinstance(baseline, np.generic) else baseline
    texts: list[str] = []
    if isinstance(value, str):
        texts = [value]
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        texts = [str(value)]
        if isinstance(value, float) and value.is_integer():
            texts.append(str(int(value)))
    found = next((t for t in texts if t in names), None)
    if found is None:
        raise ValueError(f"baseline={baseline!r} is not a run; runs: {', '.join(names)}")
    return found


def _summed(measures) -> set[str]:
    """Names of the counting measures (``NumRet``, …) whose value is the sum over topics, as in evaluate."""
    from ir_measures.measures import SumAgg

    return {repr(m) for m in measures if isinstance(m.aggregator(), SumAgg)}


def _measure_block(wide: pd.DataFrame, name: str, names: list[str], topics: str, reported: Any = None) -> pd.DataFrame:
    """runs × topics scores of one measure, restricted to the topics every run has a (finite) value for.
    ``reported``: the topics the evaluation reports for this measure (a design-based measure reports the
    design's queries, also those the qrels do not judge; the other measures the qrels' queries), so
    that one measure's topics are not taken for another's missing values."""
    block = wide.loc[name].reindex(index=names)
    if reported is not None:
        block = block.loc[:, block.columns.isin(reported)]
    present = np.isfinite(block.to_numpy(dtype=np.float64))
    complete = present.all(axis=0)
    if not complete.all() and topics == "qrels":
        run_index, topic_index = np.nonzero(~present)
        warnings.warn(
            f"{name}: {int((~complete).sum())} of {len(complete)} topics are left out of the comparison because "
            f"some run has no finite value for them (first: run {names[run_index[0]]!r}, topic "
            f"{block.columns[topic_index[0]]!r})",
            stacklevel=3,
        )
    block = block.loc[:, complete]
    if block.shape[1] < 2:
        raise ValueError(
            f"{name}: {block.shape[1]} topic(s) are scored for every run; paired tests need at least 2 common topics"
        )
    return block


@read_once_per_call  # a file named in a measure string (design=, predictions=) is read once: a named pipe works
def compare(
    runs: Any,
    qrels: Any,
    measures: MeasureSpec,
    baseline: str | None = None,
    test: str = "t",
    correction: str | None = None,
    alpha: float = 0.05,
    *,
    B: int = DEFAULT_B,  # noqa: N803
    seed: Seed = DEFAULT_SEED,
    negative: str = "pooled_unjudged",
    score_precision: str = "float32",
    topics: str = "qrels",
) -> pd.DataFrame:
    """Compare runs per measure with paired significance tests, against a baseline or pair by pair.

    Parameters
    ----------
    runs
        At least 2 runs, in any form :func:`ir_incomplete.evaluate` takes: ``{name: run}``, a DataFrame
        with a ``run`` column, a directory of run files, a list of run files, or PreparedRuns. Rows come
        in this order of the runs.
    qrels, measures, negative, score_precision
        As for :func:`ir_incomplete.evaluate`.
    baseline
        The name of one run: each other run is compared with it. ``None``: every pair of runs.
    test
        Two-sided paired test on the per-topic scores (see
        :mod:`ir_incomplete.robustness.significance`): ``"t"`` (Student's paired t-test, p-values of
        ``scipy.stats.ttest_rel``), ``"wilcoxon"`` (signed-rank test, p-values of
        ``scipy.stats.wilcoxon`` with its defaults), ``"bootstrap"`` (Sakai's paired bootstrap test,
        ``B`` resamples) or ``"randomized_tukey"`` (randomised Tukey HSD, ``B`` permutations of the
        scores among *all* runs, also with a baseline).
    correction
        ``None``, ``"bonferroni"``, ``"holm"`` or ``"fdr_bh"`` (Benjamini–Hochberg; :func:`adjust_p_values`).
        The family is one measure's
        comparisons: the runs − 1 comparisons with the baseline, or the runs · (runs − 1) / 2 pairs.
        The randomised Tukey HSD p-values already control the family-wise error over all pairs: a
        correction on top of them is allowed but only makes them more conservative.
    alpha
        Significance level, 0 < alpha < 1: a comparison is significant when ``p_adjusted < alpha``.
    B, seed
        Resamples and seed of the bootstrap and randomised Tukey HSD tests (default 1000 and 0). Each
        measure's test starts afresh from ``seed`` (an integer seed gives the same resamples for every
        measure), so the same call gives the same p-values bit for bit.
    topics
        Passed to :func:`ir_incomplete.evaluate`. ``"qrels"`` (default): every topic of the qrels, a
        topic a run does not answer scores 0 (as ``ir_measures`` and trec_eval ``-c``); ``"run"``: the
        topics every run answers. Per measure, the comparison is on the topics where every run has a
        finite score (with ``"qrels"`` that is every qrels topic for the measures computed here; a
        topic left out is reported in a warning); fewer than 2 is a ``ValueError``.

    Returns
    -------
    DataFrame. With a baseline, one row per measure × run (measures in the given order, runs in the
    given order, the baseline's own row included): ``measure``; ``run``; ``baseline`` (its name);
    ``value`` (the run's mean over the compared topics, the sum for counting measures such as
    ``NumRet``, as ``evaluate(per_query=False)``); ``baseline_value``; ``difference`` (value −
    baseline_value); ``ci_low``, ``ci_high``: the confidence interval of the difference, the paired t
    interval of the mean per-topic difference (mean ± t_{n−1} · sd / √n over the n compared topics,
    equal to ``scipy.stats.ttest_rel(run, baseline).confidence_interval(ci_level)``; n times that for
    counting measures, whose difference is a sum), whatever the ``test``; ``ci_level``: its level,
    ``1 − alpha`` without a correction and ``1 − alpha / m`` (m = the family size) with ``"bonferroni"``
    or ``"holm"`` (:func:`ci_level`; with ``test="t"`` and no correction or Bonferroni's, the interval
    excludes 0 exactly when the comparison is significant); ``effect_size``: Cohen's d_z, the mean
    per-topic difference divided by the standard deviation of the differences (divisor n − 1; 0 for
    runs equal on every topic, ±inf when every topic differs by the same nonzero amount);
    ``p_value`` (two-sided, unadjusted); ``p_adjusted`` (after ``correction``; equal
    to ``p_value`` without one); ``significant`` (``p_adjusted < alpha``); ``topics`` (the number of
    topics compared). The baseline's row has NaN p-values, intervals and effect size and ``significant``
    False.

    Without a baseline, one row per measure × unordered pair of runs (run_a before run_b in the given
    order), with the columns ``measure``, ``run_a``, ``run_b``, ``value_a``, ``value_b``, ``difference``
    (value_a − value_b), ``ci_low``, ``ci_high``, ``ci_level``, ``effect_size`` (of run_a − run_b),
    ``p_value``, ``p_adjusted``, ``significant`` and ``topics``.

    Design-based measures (``StatAP``, ``StatNDCG``, ``StatP``, ``StatRBP``, ``StatR``;
    :mod:`ir_incomplete.measures.design_based`): there the topics are fixed and the error comes from
    judging a sample of documents, so their comparisons do not use ``test`` but
    ``ir_incomplete.estimate(runs, qrels, design, ..., pairs=True)`` over every run: ``difference`` is
    the difference of the estimated means (estimate()'s ``value``, to rounding); ``ci_low``/``ci_high``
    are estimate()'s ``lo``/``hi`` at ``interval=ci_level`` (the design-based interval of the difference, signs
    flipped where a run is compared with an earlier one); ``p_value`` is the two-sided Student's t p of
    ``value / se`` with estimate()'s ``df``, ``se`` the interval's own (``√(se² + b̂²)``, widened by the
    ratio-bias correction; 1 when both are 0) and ``p_adjusted`` that p after ``correction``;
    ``significant`` is estimate()'s: that interval excludes 0 (with no correction or Bonferroni's the same as
    ``p_adjusted < alpha``; with Holm's the Bonferroni intervals, so it can be False where ``p_adjusted < alpha``;
    with ``fdr_bh`` the level ``1 − R·alpha/m``); ``effect_size``
    stays Cohen's d_z of the per-topic estimates; ``value``, ``value_a``, ``value_b`` are the
    estimated means, over the design's queries (``topics``: their number, also counting a query where no
    pair was sampled, which the qrels need not hold). A column ``reliable`` is added (pandas' nullable
    boolean): estimate()'s flag of whether the design can back the difference's interval for their rows,
    ``<NA>`` for the other measures' rows (and the baseline's own). ``table.attrs["design_measures"]`` lists
    them (:func:`format_report` says so in its notes). ``topics="run"`` is refused for them.

    Two runs with the same score on every compared topic get p = 1 (scipy's t and Wilcoxon tests give
    NaN there, 0/0). ``table.attrs`` records ``test, correction, alpha, B, seed`` (None for the t and
    Wilcoxon tests), ``baseline, runs, measures, topics, comparisons`` (the family size), which
    :func:`format_report` uses.

    Raises
    ------
    ValueError
        An unknown test, correction or baseline (the message lists the choices or the run names), alpha
        outside (0, 1), fewer than 2 runs, fewer than 2 common topics for a measure, B < 100, a bad seed,
        and whatever :func:`ir_incomplete.evaluate` rejects.
    """
    from ir_incomplete.api import TOPIC_SETS, as_measures, evaluate
    from ir_incomplete.robustness.degrade import _rng
    from ir_incomplete.robustness.significance import _check_alpha, _check_b, pairwise_tests

    test = _check_test(test)
    correction = _check_correction(correction)
    alpha = _check_alpha(alpha)
    B = _check_b(B)  # noqa: N806
    resampling = test in ("bootstrap", "randomized_tukey")
    if resampling:
        _rng(seed)  # a bad seed fails before the evaluation
    if topics not in TOPIC_SETS:
        raise ValueError(f"topics={topics!r} is not valid; choices: {', '.join(TOPIC_SETS)}")
    measures = list({repr(m): m for m in as_measures(measures)}.values())
    if not measures:
        raise ValueError("no measures given (e.g. 'AP', 'nDCG@10', 'infAP(c=1.5)@10')")
    runs, names = _run_names(runs)
    if len(names) < 2:
        raise ValueError(f"compare needs at least 2 runs; got {len(names)}: {', '.join(map(repr, names)) or 'none'}")
    if baseline is not None:
        baseline = _baseline_name(baseline, names)

    design = _design_measures(measures)
    judged = _judged(qrels, negative) if design else None
    per_query = evaluate(
        runs,
        qrels,
        measures,
        per_query=True,
        negative=negative,
        score_precision=score_precision,
        topics=topics,
    )
    wide = per_query.set_index(["measure", "run", "query_id"])["value"].unstack("query_id")
    reported = per_query.groupby("measure", sort=False)["query_id"].unique() if design else None
    summed = _summed(measures)
    position = {run: k for k, run in enumerate(names)}
    frames = []
    for measure in measures:
        name = repr(measure)
        block = _measure_block(wide, name, names, topics, None if reported is None else reported[name])
        values = block.to_numpy(dtype=np.float64)
        n_topics = values.shape[1]
        run_values = values.sum(axis=1) if name in summed else values.mean(axis=1)
        tests = pairwise_tests(block, test=test, B=B, seed=seed, against=baseline)
        i = tests["run_a"].map(position).to_numpy(dtype=np.int64)
        j = tests["run_b"].map(position).to_numpy(dtype=np.int64)
        p = tests["p_value"].to_numpy(dtype=np.float64).copy()
        p[(values[i] == values[j]).all(axis=1)] = 1.0
        adjusted = adjust_p_values(p, correction)
        significant = adjusted < alpha  # NaN: False
        level = ci_level(alpha, correction, int((~np.isnan(p)).sum()), int(significant.sum()))
        ci_low, ci_high, effect = _difference_intervals(values[i] - values[j], level)
        if name in summed:  # the difference of sums over the topics: n times the mean difference
            ci_low, ci_high = ci_low * n_topics, ci_high * n_topics
        # whether the interval can be trusted: estimate()'s flag for a design-based measure, <NA> for the others
        reliable = pd.array([pd.NA] * len(i), dtype="boolean")
        if name in design:  # sampled documents, fixed topics: the design-based intervals of estimate()
            p, adjusted, significant, level, ci_low, ci_high, flags = _design_differences(
                design[name], runs, judged, score_precision, names, i, j, alpha, correction
            )
            reliable = pd.array(flags, dtype="boolean")
        if baseline is None:
            frames.append(
                pd.DataFrame(
                    {
                        "measure": name,
                        "run_a": np.asarray(names, dtype=object)[i],
                        "run_b": np.asarray(names, dtype=object)[j],
                        "value_a": run_values[i],
                        "value_b": run_values[j],
                        "difference": run_values[i] - run_values[j],
                        "ci_low": ci_low,
                        "ci_high": ci_high,
                        "ci_level": level,
                        "effect_size": effect,
                        "p_value": p,
                        "p_adjusted": adjusted,
                        "significant": significant,
                        "topics": n_topics,
                        **({"reliable": reliable} if design else {}),
                    }
                )
            )
            continue
        b = position[baseline]
        full_p = np.full(len(names), np.nan)
        full_adjusted = np.full(len(names), np.nan)
        full_significant = np.zeros(len(names), dtype=bool)
        full_p[i], full_adjusted[i], full_significant[i] = p, adjusted, significant
        full_low, full_high, full_effect = (
            np.full(len(names), np.nan),
            np.full(len(names), np.nan),
            np.full(len(names), np.nan),
        )
        full_low[i], full_high[i], full_effect[i] = ci_low, ci_high, effect
        full_reliable = pd.array([pd.NA] * len(names), dtype="boolean")
        full_reliable[i] = reliable
        frames.append(
            pd.DataFrame(
                {
                    "measure": name,
                    "run": np.asarray(names, dtype=object),
                    "baseline": baseline,
                    "value": run_values,
                    "baseline_value": run_values[b],
                    "difference": run_values - run_values[b],
                    "ci_low": full_low,
                    "ci_high": full_high,
                    "ci_level": level,
                    "effect_size": full_effect,
                    "p_value": full_p,
                    "p_adjusted": full_adjusted,
                    "significant": full_significant,
                    "topics": n_topics,
                    **({"reliable": full_reliable} if design else {}),
                }
            )
        )
    table = pd.concat(frames, ignore_index=True)
    n = len(names)
    table.attrs.update(
        {
            "test": test,
            "correction": correction,
            "alpha": alpha,
            "B": B if resampling else None,
            "seed": seed if resampling and isinstance(seed, (int, np.integer)) else None,
            "baseline": baseline,
            "runs": names,
            "measures": [repr(m) for m in measures],
            "topics": topics,
            "comparisons": n - 1 if baseline is not None else n * (n - 1) // 2,
        }
    )
    if design:
        table.attrs["design_measures"] = list(design)
    return table


def _design_measures(measures) -> dict[str, Any]:
    """``{repr(measure): our measure}`` of the design-based measures among ``measures`` (``StatAP``, …)."""
    from ir_incomplete.incomplete_provider import as_incomplete, computable, is_design_based

    out = {}
    for measure in measures:
        if computable(measure):
            ours = as_incomplete(measure)
            if is_design_based(ours):
                out[repr(measure)] = ours
    return out


def _judged(qrels, negative: str):
    from ir_incomplete.data import Qrels

    return Qrels.from_any(qrels, negative=negative)


def _design_differences(measure, runs, judged, score_precision: str, names: list[str], i, j, alpha, correction):
    """``(p, p_adjusted, significant, level, low, high, reliable)`` of the comparisons ``names[i] − names[j]`` of a
    design-based measure, from ``ir_incomplete.estimate(..., pairs=True)`` over every run: p two-sided
    Student's t from value / se with estimate()'s ``df``, ``se`` the interval's (``√(se² + b̂²)``, the
    standard error widened by the ratio-bias correction: its half-width over the t quantile), adjusted by
    ``correction``; ``significant``,
    ``low`` and ``high`` are estimate()'s (its interval at the level :func:`ci_level` gives excludes 0), and
    so is ``reliable`` (whether the design can back that interval)."""
    from scipy.stats import t as student

    from ir_incomplete.incomplete_provider import design_estimates

    def at(level: float):
        table = design_estimates(
            [measure], runs, judged, universe="runs", pairs=True, interval=level, score_precision=score_precision
        )[repr(measure)]
        row = {(a, b): k for k, (a, b) in enumerate(zip(table["run_a"], table["run_b"], strict=True))}
        a, b = np.asarray(names, dtype=object)[i], np.asarray(names, dtype=object)[j]
        forward = np.array([row.get((x, y), -1) for x, y in zip(a, b, strict=True)], dtype=np.int64)
        backward = np.array([row.get((y, x), -1) for x, y in zip(a, b, strict=True)], dtype=np.int64)
        flip = forward < 0  # estimate() gives each unordered pair once: b − a is −(a − b)
        rows = np.where(flip, backward, forward)
        value, se = table["value"].to_numpy(np.float64)[rows], table["se"].to_numpy(np.float64)[rows]
        lo, hi = table["lo"].to_numpy(np.float64)[rows], table["hi"].to_numpy(np.float64)[rows]
        low, high = np.where(flip, -hi, lo), np.where(flip, -lo, hi)
        df = table["df"].to_numpy(np.float64)[rows]
        reliable = table["reliable"].to_numpy(bool)[rows]
        return np.where(flip, -value, value), se, df, low, high, table["significant"].to_numpy(bool)[rows], reliable

    m = len(i)
    first = ci_level(alpha, correction, m)
    value, se, df, low, high, significant, reliable = at(first)
    # the interval's own standard error, √(se² + b̂²) (estimate() widens it by the ratio-bias correction it
    # applies): its half-width over the t quantile, so that p < 1 − level exactly when the interval excludes 0
    quantile = student.ppf(0.5 + first / 2.0, np.maximum(df, 1.0))
    se = (high - low) / (2.0 * quantile)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, 2.0 * student.sf(np.abs(value) / se, np.maximum(df, 1.0)), np.where(value == 0, 1.0, 0.0))
    adjusted = adjust_p_values(p, correction)
    level = ci_level(alpha, correction, m, int((adjusted < alpha).sum()))
    if level != first:  # fdr_bh: the level depends on the comparisons rejected
        value, se, df, low, high, significant, reliable = at(level)
    return p, adjusted, significant, level, low, high, reliable
