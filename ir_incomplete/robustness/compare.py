"""Agreement between two system rankings, and the swap rate of a measure.

* :func:`kendall_tau`, :func:`tau_ap`, :func:`spearman`, :func:`pearson`, :func:`rmse`, :func:`bias`,
  :func:`agreement`: two per-run score vectors, a *reference* (e.g. mean AP of every run with complete
  judgments) and an *estimate* (the same runs scored with degraded judgments). ``pandas.Series``
  indexed by run and other mappings (``dict``) run → score are paired by run name (both must cover the
  same runs); plain sequences must have the same length and order. A Series paired with a sequence is
  paired by position; a ``dict`` paired with a sequence is refused (its order is not a ranking). Only
  τ_AP and the bias depend on which vector is the reference.
* :func:`swap_rates` / :func:`swap_rate`: the swap (error) rate of Voorhees & Buckley (SIGIR 2002),
  used by Ahlgren & Grönqvist (IP&M 2008, §6.1) to compare bpref-10 and RankEff: how often two disjoint
  topic sets of the same size order a pair of runs differently.

``scipy`` is imported when a function needs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TypeAlias

    from ir_incomplete.robustness.degrade import Seed

    #: one score per run: a Series indexed by run name (aligned by name), a mapping, or a sequence
    Scores: TypeAlias = pd.Series | Mapping[str, float] | Sequence[float] | np.ndarray
    #: per-topic scores of one measure: a tidy ``run/query_id/value`` table or a runs × topics matrix
    PerTopic: TypeAlias = pd.DataFrame | np.ndarray

__all__ = [
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
]


def _keyed(x) -> pd.Series | None:
    """``x`` as a Series keyed by run when it is one (a Series or any other Mapping), else None."""
    if isinstance(x, pd.Series):
        return x
    if isinstance(x, Mapping):
        return pd.Series(list(x.values()), index=pd.Index(list(x.keys()), dtype=object), dtype=object)
    return None


def _pair(x, y) -> tuple[np.ndarray, np.ndarray]:
    kx, ky = _keyed(x), _keyed(y)
    if (kx is None) != (ky is None) and not (isinstance(x, pd.Series) or isinstance(y, pd.Series)):
        keyed, plain = ("x", "y") if kx is not None else ("y", "x")
        raise ValueError(
            f"{keyed} maps runs to scores but {plain} is a plain sequence: give both as mappings (paired by "
            f"run name) or both as sequences (paired by position)"
        )
    if kx is not None and ky is not None:
        if not kx.index.is_unique or not ky.index.is_unique:
            raise ValueError("the score vectors list a run more than once (index must be unique)")
        only_x = kx.index.difference(ky.index)
        only_y = ky.index.difference(kx.index)
        if len(only_x) or len(only_y):
            raise ValueError(
                f"the two score vectors cover different runs: only in x {list(only_x)[:5]}, "
                f"only in y {list(only_y)[:5]}"
            )
        x, y = kx, ky.reindex(kx.index)
    a = _floats(x, "x")
    b = _floats(y, "y")
    if a.shape != b.shape:
        raise ValueError(f"x and y must have the same length (got {len(a)} and {len(b)})")
    if len(a) < 2:
        raise ValueError(f"need scores of at least 2 runs to compare rankings (got {len(a)})")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("scores must be finite numbers (found NaN or infinity)")
    return a, b


def _floats(x, name: str) -> np.ndarray:
    try:
        return np.asarray(x, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} is not a vector of scores ({type(x).__name__}: {exc}); give a Series or mapping run → score, "
            f"or a sequence of numbers"
        ) from None


def _kendall_tau(a: np.ndarray, b: np.ndarray) -> float:
    from scipy import stats

    return float(stats.kendalltau(a, b).statistic)


def _tau_ap(reference: np.ndarray, estimate: np.ndarray) -> float:
    n = len(reference)
    # [j, k]: is run k above run j? In the estimate strictly (above) or tied (tied); in the reference
    # 1 when above, 1/2 when tied (the expected value over random orderings of the tie), 0 below.
    above = estimate[None, :] > estimate[:, None]
    tied = estimate[None, :] == estimate[:, None]
    np.fill_diagonal(tied, False)
    correct = (reference[None, :] > reference[:, None]) + 0.5 * (reference[None, :] == reference[:, None])
    s = above.sum(axis=1)  # runs strictly above j in the estimate
    g = tied.sum(axis=1) + 1  # size of j's tie group in the estimate
    c = (correct * above).sum(axis=1)  # correct runs among those strictly above j
    m = (correct * tied).sum(axis=1)  # correct runs among j's tie-mates
    share = np.divide(m, g - 1, out=np.zeros(n), where=g > 1)
    # j falls on each of the g places of its tie group with probability 1/g; at place u (0-based) the
    # runs above it are the s strictly above plus u random tie-mates, u · share of them correct.
    u = np.arange(n, dtype=np.float64)[None, :]
    rank_above = s[:, None] + u
    terms = np.divide(
        c[:, None] + u * share[:, None], rank_above, out=np.zeros((n, n)), where=(u < g[:, None]) & (rank_above > 0)
    )
    return float(2.0 / (n - 1) * (terms.sum(axis=1) / g).sum() - 1.0)


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    from scipy import stats

    return float(stats.spearmanr(a, b).statistic)


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    from scipy import stats

    return float(stats.pearsonr(a, b).statistic)


def kendall_tau(x: Scores, y: Scores) -> float:
    """Kendall's τ between the rankings the two score vectors induce (``scipy.stats.kendalltau``,
    τ-b: ties in either vector are accounted for). NaN when a vector is constant."""
    return _kendall_tau(*_pair(x, y))


def tau_ap(reference: Scores, estimate: Scores) -> float:
    """AP correlation τ_AP of Yilmaz, Aslam & Robertson (SIGIR 2008) of ``estimate`` against ``reference``.

    Walk the ranking of the runs by ``estimate`` (best first). For the run at rank i > 1, C(i) is the
    number of the i − 1 runs above it that ``reference`` also ranks above it; then

        τ_AP = 2 / (N − 1) · Σ_{i=2..N} C(i) / (i − 1) − 1,

    1 for identical rankings, −1 for reversed ones, 0 in expectation for a random ranking. Unlike
    Kendall's τ, a misordered pair costs more near the top of the estimate's ranking, and τ_AP is
    asymmetric: ``tau_ap(x, y) != tau_ap(y, x)`` in general.

    Ties (equal scores, compared exactly) make the walk undefined; the value returned is the *expected*
    τ_AP when the runs of every tie, in either vector, are put in a uniformly random order. Without ties
    this is the formula above. In closed form: a run tied with a run in ``reference`` counts 1/2 in
    C(i); a run j in a tie group of g runs in ``estimate``, with s runs strictly above the group, takes
    each of the ranks s + 1, …, s + g with probability 1/g, and at rank s + 1 + u has above it the s
    runs and u of its g − 1 tie-mates chosen at random. So a constant ``estimate`` gives 0 (where
    Kendall's τ is NaN), and so does a constant ``reference``.
    """
    return _tau_ap(*_pair(reference, estimate))


def spearman(x: Scores, y: Scores) -> float:
    """Spearman's rank correlation of the two score vectors (``scipy.stats.spearmanr``: Pearson's ρ of
    the ranks, ties get their average rank). NaN when a vector is constant."""
    return _spearman(*_pair(x, y))


def pearson(x: Scores, y: Scores) -> float:
    """Pearson's linear correlation ρ of the two score vectors (NaN when a vector is constant)."""
    return _pearson(*_pair(x, y))


def rmse(x: Scores, y: Scores) -> float:
    """Root mean squared difference sqrt(mean((x − y)²)): how far the values (not only the ranking)
    move; Yilmaz & Aslam's RMS error when x holds the actual and y the estimated values."""
    a, b = _pair(x, y)
    return float(np.sqrt(np.mean((a - b) ** 2)))


def bias(reference: Scores, estimate: Scores) -> float:
    """Mean signed error mean(estimate − reference): positive when the estimate overrates the runs on
    average (e.g. a condensed-list measure), negative when it underrates them."""
    a, b = _pair(reference, estimate)
    return float(np.mean(b - a))


def agreement(x: Scores, y: Scores) -> dict[str, float]:
    """All agreement statistics of two per-run score vectors, ``x`` the reference and ``y`` the
    estimate: ``{"tau": …, "pearson": …, "rmse": …, "tau_ap": …, "spearman": …, "bias": …}``
    (:func:`kendall_tau`, :func:`pearson`, :func:`rmse`, :func:`tau_ap`, :func:`spearman`, :func:`bias`;
    :func:`~ir_incomplete.robustness.robustness_study` reports every key as a column of its ``stats``)."""
    a, b = _pair(x, y)
    return {
        "tau": _kendall_tau(a, b),
        "pearson": _pearson(a, b),
        "rmse": float(np.sqrt(np.mean((a - b) ** 2))),
        "tau_ap": _tau_ap(a, b),
        "spearman": _spearman(a, b),
        "bias": float(np.mean(b - a)),
    }


def per_topic_matrix(per_topic: PerTopic) -> pd.DataFrame:
    """Runs × topics matrix from a tidy ``run/query_id/value`` DataFrame (or return a wide one as is).
    A run without a value for some topic is an error (give complete evaluations, e.g. from
    :func:`ir_incomplete.evaluate`, which reports every topic of the qrels)."""
    if isinstance(per_topic, pd.DataFrame) and {"run", "query_id", "value"} <= set(per_topic.columns):
        frame = per_topic
        if "measure" in frame.columns and frame["measure"].nunique() > 1:
            raise ValueError(
                f"per_topic holds several measures ({sorted(frame['measure'].unique())}); select one first"
            )
        if frame.duplicated(["run", "query_id"]).any():
            raise ValueError("per_topic lists a (run, query_id) pair more than once")
        wide = frame.pivot(index="run", columns="query_id", values="value")
    elif isinstance(per_topic, pd.DataFrame):
        wide = per_topic
    else:
        wide = pd.DataFrame(np.asarray(per_topic, dtype=np.float64))
    if wide.isna().to_numpy().any():
        rows, cols = np.nonzero(wide.isna().to_numpy())
        raise ValueError(
            f"no value for run {wide.index[rows[0]]!r} on topic {wide.columns[cols[0]]!r} ({len(rows)} missing values)"
        )
    return wide.astype(np.float64)


#: the most difference bins :func:`swap_rates` makes (the table and its counters hold one entry per bin)
MAX_SWAP_BINS = 1_000_000


def _number(value, name: str, condition: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}={value!r} is not a number; expected a finite number {condition}")
    return float(value)


def _swap_setup(per_topic: PerTopic, subset_size: int, trials: int, relative: bool) -> tuple[np.ndarray, float, float]:
    """Validated ``(runs × topics values, best mean score, scale of the differences)``."""
    from ir_incomplete.robustness.degrade import _check_int

    wide = per_topic_matrix(per_topic)
    values = wide.to_numpy()
    n_runs, n_topics = values.shape
    subset_size = _check_int(subset_size, "subset_size", 1)
    _check_int(trials, "trials", 1)
    if 2 * subset_size > n_topics:
        raise ValueError(
            f"subset_size={subset_size} needs 2 × {subset_size} = {2 * subset_size} topics for "
            f"two disjoint sets, but there are {n_topics}"
        )
    if n_runs < 2:
        raise ValueError(f"need at least 2 runs (got {n_runs})")
    if not isinstance(relative, (bool, np.bool_)):
        raise ValueError(f"relative={relative!r} is not valid; expected True or False")
    best_score = float(values.mean(axis=1).max())
    scale = 1.0
    if relative:
        if not best_score > 0:
            raise ValueError(f"relative=True needs a best mean score > 0 to divide by (got {best_score!r})")
        scale = best_score
    return values, best_score, scale


def _swap_trials(values: np.ndarray, subset_size: int, trials: int, seed: Seed, scale: float):
    """Yield ``(|d₁| / scale, swapped)`` (flat arrays over pairs × trials) chunk by chunk."""
    from ir_incomplete.robustness.degrade import _rng

    rng = _rng(seed)
    n_runs, n_topics = values.shape
    i, j = np.triu_indices(n_runs, k=1)
    chunk = max(1, min(trials, 2_000_000 // max(len(i), 1)))
    done = 0
    while done < trials:
        m = min(chunk, trials - done)
        perm = np.argsort(rng.random((m, n_topics)), axis=1)
        first = values[:, perm[:, :subset_size]].mean(axis=2)  # runs × m
        second = values[:, perm[:, subset_size : 2 * subset_size]].mean(axis=2)
        d1 = first[i] - first[j]  # pairs × m
        d2 = second[i] - second[j]
        yield (np.abs(d1) / scale).ravel(), (d1 * d2 < 0).ravel()
        done += m


def swap_rates(
    per_topic: PerTopic,
    subset_size: int,
    trials: int = 1000,
    seed: Seed = 0,
    bin_width: float = 0.01,
    *,
    relative: bool = False,
) -> pd.DataFrame:
    """Swap rates by difference bin (Voorhees & Buckley, SIGIR 2002; Ahlgren & Grönqvist 2008, §6.1).

    ``per_topic``: per-topic scores of one measure, a tidy ``run/query_id/value`` DataFrame or a
    runs × topics matrix. Each trial draws two *disjoint* random topic sets of ``subset_size`` topics
    (so ``2 · subset_size`` ≤ number of topics). For every pair of runs (A, B), d₁ and d₂ are the
    differences of their mean scores on the two sets. The pair is a *swap* when the sets disagree on
    the order: d₁ · d₂ < 0 (a zero difference is no swap). Pairs are binned by |d₁| in bins of
    ``bin_width`` ([0, w), [w, 2w), …). Returns one row per non-empty bin: ``bin_low, bin_high,
    comparisons, swaps, swap_rate`` (= swaps / comparisons).

    ``bin_width`` must be a finite number > 0 that makes at most :data:`MAX_SWAP_BINS` (1 000 000)
    bins over the largest possible difference (the range of the per-topic scores, divided by the best
    score when ``relative``); the error message gives the smallest width allowed.

    ``relative=True`` bins the differences relative to the best score, as Ahlgren & Grönqvist do to
    compare measures whose values have different ranges: |d₁| / M, where M is the highest mean score of
    any run over all topics (the best run's score), so ``bin_width=0.01`` makes bins of 1 % of the best
    score. M is in ``table.attrs["best_score"]``. Whether a pair swaps does not depend on the binning.
    """
    values, best_score, scale = _swap_setup(per_topic, subset_size, trials, relative)
    width = _number(bin_width, "bin_width", "> 0")
    if not (np.isfinite(width) and width > 0):
        raise ValueError(f"bin_width={bin_width!r} is not valid; expected a finite number > 0")
    largest = float(np.ptp(values)) / scale  # no mean difference can exceed the range of the scores
    if largest / width >= MAX_SWAP_BINS:
        raise ValueError(
            f"bin_width={bin_width!r} is too small: differences up to {largest:.6g} would need "
            f"{largest / width:.3g} bins, more than the limit of {MAX_SWAP_BINS:,}; use bin_width >= "
            f"{largest / (MAX_SWAP_BINS - 1):.3g}"
        )
    n_bins = int(np.floor(largest / width + 1e-12)) + 1
    comparisons = np.zeros(n_bins, dtype=np.int64)
    swaps = np.zeros(n_bins, dtype=np.int64)
    for diff, swapped in _swap_trials(values, subset_size, trials, seed, scale):
        bins = np.minimum(np.floor(diff / width + 1e-12).astype(np.int64), n_bins - 1)
        comparisons += np.bincount(bins, minlength=n_bins)
        swaps += np.bincount(bins[swapped], minlength=n_bins)
    nonempty = np.flatnonzero(comparisons)
    table = pd.DataFrame(
        {
            "bin_low": nonempty * width,
            "bin_high": (nonempty + 1) * width,
            "comparisons": comparisons[nonempty],
            "swaps": swaps[nonempty],
            "swap_rate": swaps[nonempty] / comparisons[nonempty],
        }
    )
    table.attrs.update({"relative": bool(relative), "best_score": best_score})
    return table


def swap_rate(
    per_topic: PerTopic,
    subset_size: int,
    trials: int = 1000,
    seed: Seed = 0,
    min_difference: float = 0.0,
    *,
    relative: bool = False,
) -> float:
    """Overall swap rate: swaps / comparisons over all run pairs whose |d₁| ≥ ``min_difference``
    (up to a relative rounding tolerance of 1e-12; see :func:`swap_rates`; with ``relative=True`` the
    difference is a fraction of the best score). NaN when no pair differs that much."""
    minimum = _number(min_difference, "min_difference", ">= 0")
    if not (np.isfinite(minimum) and minimum >= 0):
        raise ValueError(f"min_difference={min_difference!r} is not valid; expected a finite number >= 0")
    values, _, scale = _swap_setup(per_topic, subset_size, trials, relative)
    comparisons = swaps = 0
    threshold = minimum * (1 - 1e-12)
    for diff, swapped in _swap_trials(values, subset_size, trials, seed, scale):
        counted = diff >= threshold
        comparisons += int(counted.sum())
        swaps += int((counted & swapped).sum())
    return swaps / comparisons if comparisons else float("nan")
