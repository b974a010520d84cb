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

if TYPE_CHECKING:
    import pandas as pd

    from ir_incomplete.api import MeasureSpec
    from ir_incomplete.robustness.degrade import Seed
else:
    from ir_incomplete._lazy import pandas as pd

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


def _measure_block(wide: pd.DataFrame, name: str, names: list[str], topics: str) -> pd.DataFrame:
    """runs × topics scores of one measure, restricted to the topics every run has a (finite) value for."""
    block = wide.loc[name].reindex(index=names)
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
    ``value / se`` with estimate()'s ``df`` (1 when both are 0) and ``p_adjusted`` that p after ``correction``;
    ``significant`` is estimate()'s: that interval excludes 0 (with no correction or Bonferroni's the same as
    ``p_adjusted < alpha``; with Holm's the Bonferroni intervals, so it can be False where ``p_adjusted < alpha``;
    with ``fdr_bh`` the level ``1 − R·alpha/m``); ``effect_size``
    stays Cohen's d_z of the per-topic estimates; ``value``, ``value_a``, ``value_b`` are the
    estimated means. ``table.attrs["design_measures"]`` lists them (:func:`format_report` says so in
    its notes). ``topics="run"`` is refused for them.

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
    summed = _summed(measures)
    position = {run: k for k, run in enumerate(names)}
    frames = []
    for measure in measures:
        name = repr(measure)
        block = _measure_block(wide, name, names, topics)
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
        if name in design:  # sampled documents, fixed topics: the design-based intervals of estimate()
            p, adjusted, significant, level, ci_low, ci_high = _design_differences(
                design[name], runs, judged, score_precision, names, i, j, alpha, correction
            )
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
    """``(p, p_adjusted, significant, level, low, high)`` of the comparisons ``names[i] − names[j]`` of a
    design-based measure, from ``ir_incomplete.estimate(..., pairs=True)`` over every run: p two-sided
    Student's t from value / se with estimate()'s ``df``, adjusted by ``correction``; ``significant``,
    ``low`` and ``high`` are estimate()'s (its interval at the level :func:`ci_level` gives excludes 0)."""
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
        return np.where(flip, -value, value), se, df, low, high, table["significant"].to_numpy(bool)[rows]

    m = len(i)
    first = ci_level(alpha, correction, m)
    value, se, df, low, high, significant = at(first)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, 2.0 * student.sf(np.abs(value) / se, np.maximum(df, 1.0)), np.where(value == 0, 1.0, 0.0))
    adjusted = adjust_p_values(p, correction)
    level = ci_level(alpha, correction, m, int((adjusted < alpha).sum()))
    if level != first:  # fdr_bh: the level depends on the comparisons rejected
        value, se, df, low, high, significant = at(level)
    return p, adjusted, significant, level, low, high


# ---------------------------------------------------------------------------------------------------
# markdown, LaTeX and TSV
# ---------------------------------------------------------------------------------------------------
def _labels(n: int) -> tuple[list[str], str]:
    """The run labels of a pairwise report and the separator of several labels in one superscript:
    the letters a … z for at most 26 runs (written together, ``ace``), else the numbers 1 … n (written
    with commas, ``3,12,27``)."""
    if n <= 26:
        return [chr(ord("a") + k) for k in range(n)], ""
    return [str(k + 1) for k in range(n)], ","


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def _markdown_escape(text: str) -> str:
    out = str(text).replace("\n", " ")
    for ch in ("\\", "|", "*", "_", "`", "<", ">"):
        out = out.replace(ch, "\\" + ch)
    return out


def _order(attr, present: list[str]) -> list[str]:
    """``attr`` (the order recorded by compare) restricted to ``present``, then the rest of ``present``."""
    recorded = [x for x in (attr or []) if x in present]
    return recorded + [x for x in present if x not in recorded]


def _grid(table: pd.DataFrame):
    """``(mode, runs, measures, values, marks)``: values runs × measures; marks[r][m] a list of marks."""
    columns = set(table.columns)
    if set(_BASELINE_COLUMNS) <= columns:
        mode = "baseline"
        present = list(dict.fromkeys(table["run"].astype(str)))
    elif set(_PAIR_COLUMNS) <= columns:
        mode = "pairs"
        present = list(dict.fromkeys(list(table["run_a"].astype(str)) + list(table["run_b"].astype(str))))
    else:
        raise ValueError(
            "table is not a compare() result: expected the columns "
            f"{', '.join(_BASELINE_COLUMNS)} (with a baseline) or {', '.join(_PAIR_COLUMNS)} (pairs); "
            f"got {', '.join(map(str, table.columns))}"
        )
    if table.empty:
        raise ValueError("table is empty: nothing to report")
    runs = _order(table.attrs.get("runs"), present)
    measures = _order(table.attrs.get("measures"), list(dict.fromkeys(table["measure"].astype(str))))
    r_of = {r: k for k, r in enumerate(runs)}
    m_of = {m: k for k, m in enumerate(measures)}
    values = np.full((len(runs), len(measures)), np.nan)
    marks: list[list[list[int]]] = [[[] for _ in measures] for _ in runs]
    mi = table["measure"].astype(str).map(m_of).to_numpy()
    significant = table["significant"].to_numpy(dtype=bool)
    if mode == "baseline":
        ri = table["run"].astype(str).map(r_of).to_numpy()
        values[ri, mi] = table["value"].to_numpy(dtype=np.float64)
        for r, m in zip(ri[significant], mi[significant], strict=True):
            marks[r][m].append(-1)
        return mode, runs, measures, values, marks
    ai = table["run_a"].astype(str).map(r_of).to_numpy()
    bi = table["run_b"].astype(str).map(r_of).to_numpy()
    values[ai, mi] = table["value_a"].to_numpy(dtype=np.float64)
    values[bi, mi] = table["value_b"].to_numpy(dtype=np.float64)
    difference = table["difference"].to_numpy(dtype=np.float64)
    for a, b, m, d in zip(ai[significant], bi[significant], mi[significant], difference[significant], strict=True):
        if d > 0:
            marks[a][m].append(b)
        elif d < 0:
            marks[b][m].append(a)
    return mode, runs, measures, values, marks


def _note(table: pd.DataFrame, mode: str, baseline: str, latex: bool) -> str:
    """The sentence that explains the marks (from ``table.attrs``; generic when they are missing)."""
    attrs = table.attrs
    test = attrs.get("test")
    how = ""
    if test in _TEST_NAMES:
        how = f"two-sided {_TEST_NAMES[test]}"
        if attrs.get("B"):
            how += f" with B = {attrs['B']} resamples" + (
                f", seed {attrs['seed']}" if attrs.get("seed") is not None else ""
            )
        if "correction" in attrs:
            family = attrs.get("comparisons")
            how += f", {_CORRECTION_NAMES.get(attrs['correction'], str(attrs['correction']))}"
            if attrs["correction"] is not None and family:
                kind = "comparisons with the baseline" if mode == "baseline" else "pairs of runs"
                how += f" over the {family} {kind} per measure"
    alpha = attrs.get("alpha")
    if not isinstance(alpha, float):
        level = "the table's significant column"
    elif "correction" in attrs and attrs["correction"] is None:
        level = f"p < {alpha:g}"
    elif "correction" in attrs:
        level = f"adjusted p < {alpha:g}"
    else:
        level = f"p_adjusted < {alpha:g}"
    counts = sorted(set(table["topics"].astype(int)))
    topic_text = f"{counts[0]} topics" if len(counts) == 1 else f"{counts[0]}–{counts[-1]} topics per measure"
    if mode == "baseline":
        mark = r"$^{\dagger}$" if latex else BASELINE_MARK
        name = _latex_escape(baseline) if latex else _markdown_escape(baseline)
        what = f"{mark} significantly different from the baseline {name}"
    else:
        kind = "letters" if len(set(table["run_a"]) | set(table["run_b"])) <= 26 else "numbers"
        what = (
            f"superscript {kind}: significantly higher than the run of that {kind[:-1]}"
            if latex
            else f"<sup>{kind}</sup>: significantly higher than the run of that {kind[:-1]}"
        )
    detail = f" ({level}; {how})" if how else f" ({level})"
    design = attrs.get("design_measures")
    if design:  # their marks come from the design-based intervals of the differences
        names = ", ".join(_latex_escape(m) if latex else _markdown_escape(m) for m in design)
        detail += (
            f"; for {names}: the design-based interval of the difference at the level of the intervals "
            "excludes 0 (ir_incomplete.estimate)"
        )
    return f"{what}{detail}; bold: the highest value per measure; {topic_text}."


def _check_text(value, name: str, allow_none: bool) -> str | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, str) or not value.strip() or "\n" in value:
        raise ValueError(f"{name}={value!r} is not valid; expected a non-empty text of one line")
    return value


def _signed(value: float, digits: int, minus: str) -> str:
    text = f"{value:+.{digits}f}"
    return text.replace("-", minus, 1) if text.startswith("-") else text


def _difference_rows(table: pd.DataFrame, mode: str, runs: list[str], measures: list[str], digits: int, latex: bool):
    """``(row labels, cells, levels)`` of the differences table: one row per comparison (with a baseline:
    each other run minus the baseline; else each pair run_a − run_b), one cell per measure reading
    ``+0.0123 [−0.0012, +0.0258], d_z 0.41``; ``levels`` the distinct CI levels."""
    if "ci_low" not in table.columns or "effect_size" not in table.columns:
        raise ValueError(
            "differences=True needs the columns ci_low, ci_high, ci_level and effect_size of compare(); "
            f"the table has {', '.join(map(str, table.columns))}"
        )
    escape = _latex_escape if latex else _markdown_escape
    minus = "$-$" if latex else "−"
    if mode == "baseline":
        rows = table[table["run"].astype(str) != str(table["baseline"].iloc[0])]
        keys = [str(r) for r in rows["run"]]
        order = [r for r in runs if r in set(keys)]
        label = {r: f"{escape(r)} {minus} {escape(str(table['baseline'].iloc[0]))}" for r in order}
    else:
        rows = table
        keys = [f"{a}\x00{b}" for a, b in zip(rows["run_a"].astype(str), rows["run_b"].astype(str), strict=True)]
        order = list(dict.fromkeys(keys))
        label = {k: f"{escape(k.split(chr(0))[0])} {minus} {escape(k.split(chr(0))[1])}" for k in order}
    cells = {k: {m: "—" for m in measures} for k in order}
    for key, measure, difference, low, high, effect in zip(
        keys,
        rows["measure"].astype(str),
        rows["difference"].to_numpy(dtype=np.float64),
        rows["ci_low"].to_numpy(dtype=np.float64),
        rows["ci_high"].to_numpy(dtype=np.float64),
        rows["effect_size"].to_numpy(dtype=np.float64),
        strict=True,
    ):
        if key in cells and measure in cells[key] and not np.isnan(difference):
            d = _signed(difference, digits, minus)
            lo, hi = _signed(low, digits, minus), _signed(high, digits, minus)
            dz = "$d_z$" if latex else "d_z"
            size = f"{effect:.2f}".replace("-", minus, 1) if np.isfinite(effect) else str(effect).replace("-", minus)
            cells[key][measure] = f"{d} [{lo}, {hi}], {dz} {size}"
    levels = sorted(set(table["ci_level"].dropna().astype(float)))
    return [label[k] for k in order], [[cells[k][m] for m in measures] for k in order], levels


def _difference_note(table: pd.DataFrame, levels: list[float], latex: bool) -> str:
    percent = "\\%" if latex else "%"
    if len(levels) == 1:
        level = f"{100 * levels[0]:.4g}{percent}"
    else:
        level = f"{100 * levels[0]:.4g}–{100 * levels[-1]:.4g}{percent} (per measure: the ci_level column)"
    correction = table.attrs.get("correction")
    why = ""
    if correction in ("bonferroni", "holm"):
        why = f", the Bonferroni level 1 − alpha/{table.attrs.get('comparisons', 'm')} of the family"
    elif correction == "fdr_bh":
        why = ", the false-coverage-rate level 1 − R·alpha/m of Benjamini & Yekutieli"
    dz = "$d_z$" if latex else "d_z"
    design = table.attrs.get("design_measures")
    interval = "paired t confidence interval"
    if design:
        escape = _latex_escape if latex else _markdown_escape
        interval += (
            f" (for {', '.join(escape(m) for m in design)}: the design-based interval of ir_incomplete.estimate)"
        )
    return (
        f"Difference of the means with its {level} {interval}{why}; "
        f"{dz}: Cohen's effect size, the mean per-topic difference divided by the standard deviation of the "
        "per-topic differences."
    )


def format_report(
    table: pd.DataFrame,
    fmt: str = "markdown",
    *,
    digits: int = 4,
    differences: bool = False,
    caption: str | None = None,
    label: str = "tab:compare",
) -> str:
    """A :func:`compare` table as text: ``"markdown"``, ``"latex"`` or ``"tsv"``.

    Markdown and LaTeX give one row per run and one column per measure (the given orders), values
    rounded to ``digits`` decimals, and a note stating the test, correction, level and number of
    topics (markdown: a paragraph under the table; LaTeX: a footnote-size paragraph under the tabular,
    inside the table). Marks:

    * **bold**: the highest value of each measure (every run that has it, compared unrounded);
    * with a baseline: ``†`` (LaTeX ``$^{\\dagger}$``) after a value significantly different from the
      baseline's (``significant``: p_adjusted < alpha), higher or lower: compare with the baseline's
      row, marked "(baseline)";
    * without a baseline: every run gets a label (column ``#``): the letters a … z for at most 26 runs,
      else the numbers 1 … n; a value carries as superscript (markdown ``<sup>…</sup>``, LaTeX
      ``$^{…}$``) the labels of the runs it is significantly higher than, letters written together
      (``ac``), numbers separated by commas (``3,12,27``); a significant pair with equal values marks
      neither run.

    The note reads "p < alpha" without a correction and "adjusted p < alpha" with one.

    ``differences=True`` adds a second table (markdown: under the note; LaTeX: a second ``table``
    labelled ``label + ":differences"``): one row per comparison (each run minus the baseline, or
    run_a − run_b for every pair), one cell per measure with the difference of the means, its
    confidence interval and Cohen's d_z (the ``difference``, ``ci_low``/``ci_high`` and
    ``effect_size`` columns of :func:`compare`), and a note giving the interval's level.

    LaTeX: ``caption`` (default: "Comparison of the runs with the baseline NAME." or "Pairwise
    comparison of the runs.", escaped; a given caption is used as it is) and ``\\label{label}``
    (default ``tab:compare``); the table uses ``booktabs`` rules (``\\usepackage{booktabs}``).
    ``"tsv"``: the table itself, tab-separated with a header line, values at full precision, NaN as an
    empty field (``differences``, ``caption`` and ``label`` do not apply). Run and measure names are
    escaped for markdown and LaTeX.
    """
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise ValueError(f"fmt={fmt!r} is not valid; choices: {', '.join(FORMATS)}")
    digits = _check_digits(digits)
    if not isinstance(differences, (bool, np.bool_)):
        raise ValueError(f"differences={differences!r} is not valid; expected True or False")
    caption = _check_text(caption, "caption", True)
    label = str(_check_text(label, "label", False))
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be the DataFrame compare() returns, not {type(table).__name__}")
    mode, runs, measures, values, marks = _grid(table)
    if fmt == "tsv":
        return table.to_csv(sep="\t", index=False, na_rep="", lineterminator="\n")
    latex = fmt == "latex"
    baseline = str(table["baseline"].iloc[0]) if mode == "baseline" else ""
    letters, joiner = _labels(len(runs))
    with np.errstate(invalid="ignore"):
        best = values == np.nanmax(values, axis=0, keepdims=True)
    cells = []
    for r in range(len(runs)):
        row = []
        for m in range(len(measures)):
            value = values[r, m]
            text = "—" if np.isnan(value) else f"{value:.{digits}f}"
            if best[r, m]:
                text = rf"\textbf{{{text}}}" if latex else f"**{text}**"
            found = marks[r][m]
            if mode == "baseline" and found:
                text += r"$^{\dagger}$" if latex else BASELINE_MARK
            elif found:
                sup = joiner.join(letters[k] for k in sorted(found))
                text += f"$^{{{sup}}}$" if latex else f"<sup>{sup}</sup>"
            row.append(text)
        cells.append(row)
    escape = _latex_escape if latex else _markdown_escape
    names = [escape(r) + (" (baseline)" if mode == "baseline" and r == baseline else "") for r in runs]
    head = (["\\#"] if latex else ["#"]) if mode == "pairs" else []
    header = head + ["Run"] + [escape(m) for m in measures]
    body = [([letters[k]] if mode == "pairs" else []) + [names[k]] + cells[k] for k in range(len(runs))]
    note = _note(table, mode, baseline, latex)
    extra = _difference_rows(table, mode, runs, measures, digits, latex) if differences else None
    if not latex:
        lines = _markdown_table(header, body, len(measures))
        text = "\n".join(lines) + "\n\n" + note + "\n"
        if extra is not None:
            rows, diff_cells, levels = extra
            diff_header = ["Comparison"] + [escape(m) for m in measures]
            diff_lines = _markdown_table(
                diff_header, [[r, *c] for r, c in zip(rows, diff_cells, strict=True)], len(measures)
            )
            text += "\n" + "\n".join(diff_lines) + "\n\n" + _difference_note(table, levels, False) + "\n"
        return text
    if caption is None:
        caption = (
            f"Comparison of the runs with the baseline {escape(baseline)}."
            if mode == "baseline"
            else "Pairwise comparison of the runs."
        )
    lines = _latex_table(header, body, len(measures), caption, label, note)
    if extra is not None:
        rows, diff_cells, levels = extra
        diff_header = ["Comparison"] + [escape(m) for m in measures]
        lines += _latex_table(
            diff_header,
            [[r, *c] for r, c in zip(rows, diff_cells, strict=True)],
            len(measures),
            "Differences of the means, with confidence intervals and effect sizes.",
            f"{label}:differences",
            _difference_note(table, levels, True),
        )
    return "\n".join(lines) + "\n"


def _markdown_table(header: list[str], body: list[list[str]], n_values: int) -> list[str]:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * (len(header) - n_values) + ["---:"] * n_values) + "|",
    ]
    return lines + ["| " + " | ".join(row) + " |" for row in body]


def _latex_table(header: list[str], body: list[list[str]], n_values: int, caption: str, label: str, note: str):
    spec = "l" * (len(header) - n_values) + "r" * n_values
    lines = [
        "\\begin{table}",
        "\\centering",
        f"\\caption{{{caption}}}",
        f"\\label{{{label}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(header) + " \\\\",
        "\\midrule",
    ]
    lines += [" & ".join(row) + " \\\\" for row in body]
    lines += ["\\bottomrule", "\\end{tabular}", "", "\\smallskip", f"{{\\footnotesize {note}\\par}}", "\\end{table}"]
    return lines


def __getattr__(name: str):
    """``compare_main``, the ``ir_incomplete compare`` command, lives in :mod:`ir_incomplete.cli.compare`
    (``main``); the old name is kept, found when it is asked for (the library does not import the
    command line)."""
    if name == "compare_main":
        import importlib

        return importlib.import_module("ir_incomplete.cli.compare").main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
