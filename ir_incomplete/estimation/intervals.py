"""The interval stage of :func:`ir_incomplete.estimate`: the covariance of the run means and pairs
(:class:`_Variance`, Satterthwaite's degrees of freedom, Student's quantile) and whether the design can back
each interval (:class:`_Diagnostics`, the limits :data:`DELTA_MAX`, :data:`SEEN_MIN`, :data:`STARVED_MAX`
and the one warning of :func:`_warn_unreliable`); see :mod:`ir_incomplete.estimation`."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ir_incomplete.estimation.universe import Estimand
from ir_incomplete.kernels.design import MeasureEstimate, Units

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DELTA_MAX", "SEEN_MIN", "STARVED_MAX"]


def _quantile(interval: float, df: np.ndarray) -> np.ndarray:
    """The two-sided ``interval`` quantile of Student's t with ``df`` degrees of freedom (normal where
    ``df`` is infinite): ``scipy.special.stdtrit``, the function ``scipy.stats.t.ppf`` evaluates (the same
    numbers, bit for bit), without importing ``scipy.stats`` (about 0.6 s)."""
    from scipy.special import stdtrit

    return np.asarray(stdtrit(np.maximum(df, 1.0), 0.5 + interval / 2.0))


def _warn_unreliable(tables: list[pd.DataFrame], diagnostics: dict[str, _Diagnostics]) -> None:
    """One warning when rows of the tables are not reliable (column ``reliable``): how many, why, and
    about how many random judgments per topic would back them (:meth:`_Diagnostics.needed`)."""
    flagged = [t.loc[~t["reliable"].to_numpy(dtype=bool)] for t in tables if "reliable" in t.columns]
    n_bad = sum(len(t) for t in flagged)
    if not n_bad:
        return
    n_all = sum(len(t) for t in tables if "reliable" in t.columns)
    reasons, need, have = [], 0.0, 0.0
    for name, diag in diagnostics.items():
        deltas = np.concatenate([np.abs(t.loc[t["measure"] == name, "delta"].to_numpy(dtype=float)) for t in flagged])
        if not len(deltas):
            continue
        reasons += diag.reasons(name, deltas)
        need, have = max(need, diag.needed(deltas)), diag.per_topic
    why = "; ".join(dict.fromkeys(reasons))
    warnings.warn(
        f"{n_bad} of {n_all} rows have intervals this design cannot back (column 'reliable' is False): {why}. "
        f"Where these diagnostics fire, 90 % intervals were measured to cover the complete-judgment value less "
        f"than 85 % of the time; about {need:,.0f} random judgments per topic (this design: {have:,.0f}) would be "
        f"needed (sample a larger budget, or on top of the judgments made: a new round)",
        stacklevel=4,
    )


@dataclass
class _Variance:
    """Stage 6 for one measure: the covariance of the run means and what Satterthwaite's df needs."""

    cov: np.ndarray  # [runs × runs], of the means over topics
    zw: np.ndarray  # [runs × random units]: zw zwᵀ is the first-order covariance of the sums over topics
    gram: np.ndarray  # zw zwᵀ
    c4: np.ndarray  # zw⁴
    total: np.ndarray  # Σ_u zw², per run

    @classmethod
    def of(cls, result: MeasureEstimate, units: Units, n_topics: int) -> _Variance:
        if units.stratum is None:
            zw = result.z * np.sqrt(1.0 - units.pi[units.random])[None, :]
        else:  # centred within strata and scaled: zw zwᵀ is the without-replacement covariance
            zw = units._centred(result.z) * np.sqrt(units.srs_scale[units.random_stratum])[None, :]
        gram = zw @ zw.T  # the first-order covariance, kept apart for Satterthwaite's df
        cov = gram.copy()
        if result.second is not None:
            m2 = result.second
            cov = cov + (m2 @ m2.T).toarray()  # type: ignore[attr-defined]
        cov /= n_topics**2
        return cls(cov, zw, gram, (zw**2) ** 2, (zw**2).sum(axis=1))

    def run_df(self) -> np.ndarray:
        """Satterthwaite's effective degrees of freedom of each run's variance (a sum of one-unit terms):
        few dominant units (rare relevant documents with large weights) make it small and the interval a t's."""
        s4 = self.c4.sum(axis=1)
        return np.where(s4 > 0, self.total**2 / np.where(s4 > 0, s4, 1.0), np.inf)

    def pair_se_df(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The standard error and df of each difference ``a − b``: Σ_u (z_a − z_b)⁴ from powers of z (no
        [pairs × units] array), the products over all runs whatever ``pair_runs`` is, so that a pair's row
        is the same either way."""
        cov = self.cov
        se = np.sqrt(np.clip(cov[a, a] + cov[b, b] - 2.0 * cov[a, b], 0.0, None))
        zw = self.zw
        w2 = zw**2
        cube = (zw**3) @ zw.T
        s4 = self.c4.sum(axis=1)[a] + self.c4.sum(axis=1)[b] - 4.0 * cube[a, b] - 4.0 * cube[b, a]
        s4 = s4 + 6.0 * (w2 @ w2.T)[a, b]
        s2 = self.total[a] + self.total[b] - 2.0 * self.gram[a, b]
        return se, np.where(s4 > 0, s2**2 / np.where(s4 > 0, s4, 1.0), np.inf)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with ``0`` where both are 0 and ``±inf`` where only ``den`` is."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.where(num == 0, 0.0, np.sign(num) * np.inf))


#: the reliability flag's limits (measured: docs/intervals.rst, examples/design_evidence.py): a row whose
#: estimated ratio bias exceeds its standard error; a measure whose design-based variance is below the
#: anticipated one for most runs (it does not see what the sample did not draw); a measure for which the
#: random sample drew no relevant pair in more than 15 % of the topics left to judge
DELTA_MAX = 1.0
SEEN_MIN = 1.0
STARVED_MAX = 0.15


@dataclass
class _Diagnostics:
    """Stage 6b for one measure: whether the design can back its intervals (column ``reliable``).

    ``bias`` per run: the estimated first-order ratio bias of the mean over topics (``Σ_t b̂_t / T``; 0
    for the linear measures), which the estimate has subtracted; ``seen`` per run: the design-based
    first-order variance over the anticipated (model-based) one
    (:func:`~ir_incomplete.kernels.design.anticipated_variance`, the fitted relevance model over every
    pair not judged with certainty); ``starved``: the share of the topics with pairs left to sample where
    the random sample drew no relevant pair (for nDCG: none with a positive gain); ``per_topic``: random
    draws per topic with pairs left to sample.

    A row is reliable when ``|delta| <= DELTA_MAX`` (the first-order correction is small against the
    standard error, so its own error is too), the median ``seen`` over the runs is at least ``SEEN_MIN``
    (the sample has drawn enough to see the variance a model of relevance anticipates) and ``starved`` is
    at most ``STARVED_MAX``; the last two are properties of the design and the measure: they flag every
    row of the measure."""

    bias: np.ndarray
    seen: np.ndarray
    starved: float
    per_topic: float

    @classmethod
    def of(cls, result: MeasureEstimate, units: Units, est: Estimand, var: _Variance) -> _Diagnostics:
        n_topics = units.n_topics
        bias = np.zeros(result.value.shape[0]) if result.bias is None else result.bias.mean(axis=1)
        rand = units.random
        level = units.levels[units.grade[rand]]
        hit = level >= est.rel if est.kind != "nDCG" else level > 0
        open_topic = np.bincount(units.topic[units.pi < 1.0], minlength=n_topics) > 0
        found = np.bincount(units.random_topic[hit], minlength=n_topics) > 0
        n_open = max(int(open_topic.sum()), 1)
        starved = float((open_topic & ~found).sum() / n_open) if open_topic.any() else 0.0
        seen = np.ones(len(bias))
        if result.anticipated is not None:
            seen = _ratio(np.diag(var.gram), result.anticipated)
            seen = np.where(np.isfinite(seen), seen, 1.0)  # nothing anticipated: nothing to see
        return cls(bias, seen, starved, len(rand) / n_open)

    @property
    def seen_median(self) -> float:
        return float(np.median(self.seen)) if len(self.seen) else 1.0

    def measure_ok(self) -> bool:
        """The measure's flags (every row): the variance is seen, no more than ``STARVED_MAX`` starved."""
        return self.seen_median >= SEEN_MIN and self.starved <= STARVED_MAX

    def reliable(self, delta: np.ndarray) -> np.ndarray:
        return (np.abs(delta) <= DELTA_MAX) & self.measure_ok()

    def reasons(self, name: str, deltas: np.ndarray) -> list[str]:
        """Why rows of this measure (the ``|delta|`` of its flagged rows) are flagged, in words."""
        out = []
        if self.seen_median < SEEN_MIN:
            out.append(
                f"{name}: for most runs the design-based variance is {self.seen_median:.2g} of what a model of "
                f"relevance anticipates over the pairs not drawn (column 'seen' below {SEEN_MIN:g})"
            )
        if self.starved > STARVED_MAX:
            out.append(
                f"{name}: the random sample drew no relevant pair in {self.starved:.0%} of the topics with pairs "
                f"left to judge (more than {STARVED_MAX:.0%})"
            )
        if (deltas > DELTA_MAX).any():
            out.append(f"{name}: estimated ratio bias above {DELTA_MAX:g} standard error (|delta| > {DELTA_MAX:g})")
        return out

    def needed(self, deltas: np.ndarray) -> float:
        """About how many random judgments per topic would clear the flags (a rough guide): ``|delta|``
        shrinks as ``1/√n``, so its 80th percentile over the flagged rows needs ``n (|delta|/DELTA_MAX)²``;
        a topic draws no relevant pair with probability about ``exp(−λ n)``, so a starved share ``s`` needs
        ``n ln(STARVED_MAX)/ln(s)``; a variance seen at a share ``r`` of the anticipated one, ``n/r``."""
        n = max(self.per_topic, 1.0)
        need = n
        finite = deltas[np.isfinite(deltas)]
        if len(finite) and np.quantile(finite, 0.8) > DELTA_MAX:
            need = max(need, n * (np.quantile(finite, 0.8) / DELTA_MAX) ** 2)
        if self.starved > STARVED_MAX:
            need = max(need, n * np.log(STARVED_MAX) / np.log(self.starved) if self.starved < 1 else 10 * n)
        if self.seen_median < SEEN_MIN:
            need = max(need, n * SEEN_MIN / max(self.seen_median, 0.01))
        return float(need)
