"""Significance tests between runs: discriminative power and preference reconstruction.

Every function takes per-topic scores of one measure: a tidy ``evaluate(per_query=True)`` table
(columns ``run, query_id, measure, value``, one measure) or a runs × topics matrix
(see :func:`~ir_incomplete.robustness.per_topic_matrix`). Each unordered pair of runs (A, B) is tested
on the paired per-topic differences d_t = A_t − B_t, two-sided; a pair is significantly different when
its p-value is strictly below α.

* :func:`pairwise_tests`: the p-value of every pair of runs with one of four tests (:data:`TESTS`):

  - ``"t"``: Student's paired t-test (``scipy.stats.ttest_rel``; p is NaN when the two runs score
    the same on every topic, which is never significant);
  - ``"wilcoxon"``: the Wilcoxon signed-rank test, exactly ``scipy.stats.wilcoxon(a, b)`` with its
    defaults for each pair on its own (zero differences dropped, no continuity correction; scipy's
    ``method="auto"``: the exact null distribution for at most 50 topics without zero or tied
    differences, else the normal approximation with tie correction, or for at most 13 topics with
    zeros or ties the exact permutation distribution); p is NaN when the two runs score the same on
    every topic;
  - ``"bootstrap"``: the paired bootstrap test of Sakai (SIGIR 2006) (Efron & Tibshirani's Algorithm
    16.2): t = mean(d) / (sd(d)/√T); the differences are shifted to the null, w_t = d_t − mean(d); B
    bootstrap samples of T topics drawn with replacement (the same topic samples for every pair) give
    t*_b from the w of the sample; the achieved significance level is p = #{b : |t*_b| ≥ |t|} / B;
  - ``"randomized_tukey"``: the randomised Tukey HSD test (Carterette, TOIS 2012; Sakai): B times,
    the scores of every topic are permuted at random among the runs, and the largest difference
    between two runs' means is recorded; p = #{b : max_b ≥ |mean(A) − mean(B)|} / B, which controls
    the family-wise error over all pairs.

  Comparisons "≥" are made up to rounding (1e-12 relative to the magnitudes compared: sums taken in
  different orders); a bootstrap sample whose standard deviation is zero (up to 1e-12 of the pair's
  largest |d_t|) has t* = 0 when its mean is zero too and ±∞ otherwise; identical runs get p = 1 with
  the resampling tests.

* :func:`discriminative_power`: the fraction of run pairs significantly different (Sakai, SIGIR 2006).
* :func:`preference_agreement`: how many of the significant run preferences of the full judgments are
  recovered with degraded judgments (Fröbe, Gienapp, Potthast & Hagen, ECIR 2023).

Resampling is vectorized over B with a seeded ``numpy.random.Generator``: the same seed gives the same
p-values. Resamples are drawn and used a block at a time (about 2 million values per block), so memory
does not grow with B; the blocks continue one random stream, so the p-values are those of drawing all B
resamples at once.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ir_incomplete.robustness.compare import PerTopic
    from ir_incomplete.robustness.degrade import Seed

from ir_incomplete.robustness.compare import per_topic_matrix

__all__ = ["TESTS", "pairwise_tests", "discriminative_power", "preference_agreement"]

TESTS = ("t", "bootstrap", "randomized_tukey", "wilcoxon")
_TOLERANCE = 1e-12
_CHUNK_ELEMENTS = 2_000_000  # floats per vectorized block of resamples


def _check_alpha(alpha) -> float:
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, (int, float, np.integer, np.floating)):
        raise ValueError(f"alpha={alpha!r} is not a number; expected a significance level 0 < alpha < 1")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha={alpha!r} is out of range; expected a significance level 0 < alpha < 1")
    return float(alpha)


def _check_test(test) -> str:
    if not isinstance(test, str) or test not in TESTS:
        raise ValueError(f"test={test!r} is not valid; choices: {', '.join(TESTS)}")
    return test


def _check_b(B) -> int:
    if isinstance(B, (bool, np.bool_)) or not isinstance(B, (int, np.integer)):
        raise ValueError(f"B={B!r} is not an integer; expected an integer number of resamples >= 100")
    if B < 100:
        raise ValueError(f"B={B!r} is too small; expected an integer number of resamples >= 100")
    return int(B)


def _matrix(per_topic, name: str = "per_topic") -> pd.DataFrame:
    wide = per_topic_matrix(per_topic)
    if wide.shape[0] < 2:
        raise ValueError(f"{name} holds {wide.shape[0]} run(s); significance tests compare at least 2 runs")
    if wide.shape[1] < 2:
        raise ValueError(f"{name} holds {wide.shape[1]} topic(s); paired tests need at least 2 topics")
    if not np.isfinite(wide.to_numpy()).all():
        raise ValueError(f"{name} holds NaN or infinite scores")
    if not wide.index.is_unique:
        raise ValueError(f"{name} lists a run more than once")
    return wide


def _t_test(values: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # identical runs: 0/0
        return np.asarray(stats.ttest_rel(values[i], values[j], axis=1).pvalue, dtype=np.float64)


def _wilcoxon_test(values: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``scipy.stats.wilcoxon(values[i], values[j])`` pair by pair, vectorized: scipy's ``method="auto"``
    decides for a whole call whether any difference is zero or tied, so the pairs with and without zero
    or tied differences are tested in two calls, each getting the method it would get on its own."""
    from scipy import stats

    d = values[i] - values[j]
    magnitudes = np.sort(np.abs(d), axis=1)
    irregular = (magnitudes[:, 0] == 0) | (np.diff(magnitudes, axis=1) == 0).any(axis=1)
    p = np.full(len(i), np.nan)
    for group in (~irregular, irregular):
        if group.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # identical runs: 0/0
                p[group] = stats.wilcoxon(values[i[group]], values[j[group]], axis=1).pvalue
    return p


def _studentized(w: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """t = mean / (sd / √T) along the last axis, with the zero-sd convention of the module docstring."""
    n = w.shape[-1]
    mean = w.mean(axis=-1)
    sd = w.std(axis=-1, ddof=1)
    flat = sd <= tol
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    return np.where(flat, np.where(np.abs(mean) <= tol, 0.0, np.copysign(np.inf, mean)), t)


def _bootstrap_test(values: np.ndarray, i: np.ndarray, j: np.ndarray, B: int, rng) -> np.ndarray:
    d = values[i] - values[j]  # pairs × topics
    n_pairs, n_topics = d.shape
    tol = _TOLERANCE * np.maximum(np.abs(d).max(axis=1), np.finfo(np.float64).tiny)
    t0 = np.abs(_studentized(d, tol))
    w = d - d.mean(axis=1, keepdims=True)
    count = np.zeros(n_pairs, dtype=np.int64)
    step = max(1, _CHUNK_ELEMENTS // (n_pairs * n_topics))
    for start in range(0, B, step):
        # the topic samples of this chunk only: drawn in row order, they continue the generator's stream
        # exactly as one (B × topics) draw would, so the p-values do not depend on the chunk size
        samples = rng.integers(0, n_topics, size=(min(step, B - start), n_topics))
        star = w[:, samples]  # pairs × b × topics
        t_star = np.abs(_studentized(star, tol[:, None]))
        count += (t_star >= t0[:, None] * (1 - _TOLERANCE)).sum(axis=1)
    return count / B


def _tukey_test(values: np.ndarray, i: np.ndarray, j: np.ndarray, B: int, rng) -> np.ndarray:
    n_runs, n_topics = values.shape
    observed = np.abs(values.mean(axis=1)[i] - values.mean(axis=1)[j])
    topics = np.arange(n_topics)
    largest = np.empty(B)
    step = max(1, _CHUNK_ELEMENTS // (n_runs * n_topics))
    for start in range(0, B, step):
        b = min(step, B - start)
        order = np.argsort(rng.random((b, n_runs, n_topics)), axis=1)  # a random permutation per topic
        means = values[order, topics].mean(axis=2)  # b × runs
        largest[start : start + b] = means.max(axis=1) - means.min(axis=1)
    scale = max(float(np.abs(values).max()), np.finfo(np.float64).tiny)
    largest.sort()
    # #{b : largest_b >= observed (up to rounding)} for every pair at once
    below = np.searchsorted(largest, observed - _TOLERANCE * scale, side="left")
    return (B - below) / B


def pairwise_tests(
    per_topic: PerTopic, test: str = "t", B: int = 1000, seed: Seed = 0, *, against: str | None = None
) -> pd.DataFrame:
    """The p-value of every pair of runs with ``test`` (see the module docstring).

    Returns one row per unordered pair, in the order of the runs in the matrix
    (:func:`~ir_incomplete.robustness.per_topic_matrix`; a tidy table gives the runs sorted by name):
    ``run_a, run_b, mean_a, mean_b, difference`` (= mean_a − mean_b) ``, p_value``. ``B`` and ``seed``
    only matter to the resampling tests (``B`` is checked for every test).

    ``against``: a run of the matrix; only the pairs (other run, ``against``) are tested, one row per
    other run in matrix order with ``run_b = against``. Each pair's p-value is the one it gets among
    all pairs (the randomised Tukey HSD test still permutes the scores among all runs).
    """
    test = _check_test(test)
    B = _check_b(B)
    wide = _matrix(per_topic)
    values = wide.to_numpy(dtype=np.float64)
    if against is None:
        i, j = np.triu_indices(len(values), k=1)
    else:
        if against not in wide.index:
            raise ValueError(f"against={against!r} is not a run; runs: {', '.join(map(str, wide.index))}")
        i = np.flatnonzero(wide.index != against)
        j = np.full(len(i), wide.index.get_loc(against))
    if test == "t":
        p = _t_test(values, i, j)
    elif test == "wilcoxon":
        p = _wilcoxon_test(values, i, j)
    else:
        from ir_incomplete.robustness.degrade import _rng

        rng = _rng(seed)
        p = (_bootstrap_test if test == "bootstrap" else _tukey_test)(values, i, j, B, rng)
    means = values.mean(axis=1)
    runs = np.asarray(wide.index, dtype=object)
    table = pd.DataFrame(
        {
            "run_a": runs[i],
            "run_b": runs[j],
            "mean_a": means[i],
            "mean_b": means[j],
            "difference": means[i] - means[j],
            "p_value": p,
        }
    )
    table.attrs.update({"test": test, "B": B if test != "t" else None, "topics": values.shape[1]})
    return table


def discriminative_power(
    per_topic: PerTopic,
    alpha: float = 0.05,
    test: str = "t",
    B: int = 1000,
    seed: Seed = 0,
    *,
    return_table: bool = False,
) -> float | tuple[float, pd.DataFrame]:
    """Discriminative power (Sakai, SIGIR 2006): the fraction of run pairs whose difference is
    significant at level ``alpha`` (p < α) with ``test`` (``"t"``, ``"bootstrap"``,
    ``"randomized_tukey"`` or ``"wilcoxon"``; see the module docstring), ``B`` resamples and ``seed``.

    ``per_topic``: per-topic scores of one measure, a tidy ``evaluate(per_query=True)`` table or a
    runs × topics matrix. With ``test="t"`` the count of significant pairs is exactly the count of
    pairs with ``scipy.stats.ttest_rel(a, b).pvalue < alpha``.

    Returns the fraction (a float); with ``return_table=True``, ``(fraction, table)`` where ``table`` is
    :func:`pairwise_tests`'s with a ``significant`` column added.
    """
    alpha = _check_alpha(alpha)
    table = pairwise_tests(per_topic, test=test, B=B, seed=seed)
    significant = (table["p_value"] < alpha).to_numpy()
    power = float(significant.mean())
    if not return_table:
        return power
    table = table.assign(significant=significant)
    table.attrs.update({"alpha": alpha})
    return power, table


def preference_agreement(
    full_per_topic: PerTopic, degraded_per_topic: PerTopic, alpha: float = 0.05, *, return_table: bool = False
) -> dict[str, float] | tuple[dict[str, float], pd.DataFrame]:
    """How well degraded judgments reproduce the significant run preferences of the full judgments
    (Fröbe, Gienapp, Potthast & Hagen, ECIR 2023: precision, recall and F1 of the pairwise preferences,
    with significance from a paired t-test and Bonferroni correction).

    Definition implemented: for each unordered pair of runs (A, B) of the P pairs, a paired t-test
    (``scipy.stats.ttest_rel``) on the per-topic scores; the pair is *significant* when p · P < α
    (Bonferroni over all pairs), and its *preference* is the sign of mean(A) − mean(B). This is done on
    the full and on the degraded per-topic scores separately (same runs, same topics).

    * full preferences F: the significant pairs under the full judgments, with their direction;
    * degraded preferences D: the significant pairs under the degraded judgments, with their direction;
    * recovered = |F ∩ D| (significant in both, same direction);
    * precision = recovered / |D| (a significant degraded preference that is not significant under the
      full judgments, or points the other way, is an error), recall = recovered / |F|,
      F1 = 2 · recovered / (|F| + |D|) (the harmonic mean of the two). An empty denominator gives NaN.

    Returns a dict: ``precision, recall, f1, pairs`` (P), ``full_significant`` (|F|),
    ``degraded_significant`` (|D|), ``recovered``, ``reversed`` (significant in both, opposite
    direction) and ``spurious`` (in D, not significant under the full judgments); with
    ``return_table=True``, ``(dict, table)`` with one row per pair: ``run_a, run_b, difference_full,
    p_full, significant_full, difference_degraded, p_degraded, significant_degraded, recovered``.
    """
    alpha = _check_alpha(alpha)
    full = _matrix(full_per_topic, "full_per_topic")
    degraded = _matrix(degraded_per_topic, "degraded_per_topic")
    for axis, what in ((0, "runs"), (1, "topics")):
        a, b = full.axes[axis], degraded.axes[axis]
        if len(a.difference(b)) or len(b.difference(a)):
            raise ValueError(
                f"full_per_topic and degraded_per_topic cover different {what}: only in full "
                f"{list(a.difference(b))[:5]}, only in degraded {list(b.difference(a))[:5]}"
            )
    degraded = degraded.reindex(index=full.index, columns=full.columns)
    f_values = full.to_numpy(dtype=np.float64)
    d_values = degraded.to_numpy(dtype=np.float64)
    i, j = np.triu_indices(len(f_values), k=1)
    n_pairs = len(i)
    p_full = _t_test(f_values, i, j)
    p_deg = _t_test(d_values, i, j)
    diff_full = f_values.mean(axis=1)[i] - f_values.mean(axis=1)[j]
    diff_deg = d_values.mean(axis=1)[i] - d_values.mean(axis=1)[j]
    sig_full = p_full * n_pairs < alpha
    sig_deg = p_deg * n_pairs < alpha
    same = np.sign(diff_full) == np.sign(diff_deg)
    recovered = sig_full & sig_deg & same
    n_full, n_deg, n_rec = int(sig_full.sum()), int(sig_deg.sum()), int(recovered.sum())
    result = {
        "precision": n_rec / n_deg if n_deg else float("nan"),
        "recall": n_rec / n_full if n_full else float("nan"),
        "f1": 2 * n_rec / (n_full + n_deg) if n_full + n_deg else float("nan"),
        "pairs": n_pairs,
        "full_significant": n_full,
        "degraded_significant": n_deg,
        "recovered": n_rec,
        "reversed": int((sig_full & sig_deg & ~same).sum()),
        "spurious": int((sig_deg & ~sig_full).sum()),
    }
    if not return_table:
        return result
    runs = np.asarray(full.index, dtype=object)
    table = pd.DataFrame(
        {
            "run_a": runs[i],
            "run_b": runs[j],
            "difference_full": diff_full,
            "p_full": p_full,
            "significant_full": sig_full,
            "difference_degraded": diff_deg,
            "p_degraded": p_deg,
            "significant_degraded": sig_deg,
            "recovered": recovered,
        }
    )
    table.attrs.update({"alpha": alpha, "correction": "bonferroni"})
    return result, table
