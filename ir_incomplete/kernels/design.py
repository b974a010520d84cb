"""Design-based estimators of AP@k, nDCG@k, P@k, RBP and R from a probability sample of judgments.

The setting (:func:`ir_incomplete.estimation.estimate` builds it): a *universe* of units, the
(topic, document) pairs of the runs' top ``depth``; a sample of them judged, unit ``u`` included with a
known probability ``π_u`` (``π_u = 1``: a certainty unit, judged whatever the draw). The target is the
value complete judgments of the universe would give (documents outside it count as nonrelevant).

**Pseudo-judgments.** With a control variate ``f_u`` (a number fixed for each unit: a predicted
probability of relevance, a predicted gain, or 0), each unit's relevance ``y_u`` is estimated by the
difference estimator

    ŷ_u = f_u + S_u · (y_u − f_u) / π_u          (S_u = 1 when u is sampled)

which is unbiased for ``y_u`` whatever ``f``; with ``f = 0`` it is the Horvitz–Thompson weight
``S_u y_u / π_u``. Under Poisson sampling the ``ŷ_u`` are independent, with variance
``(1 − π_u)/π_u · (y_u − f_u)²``, estimated by ``S_u (1 − π_u)(y_u − f_u)² / π_u²``.

**Measures** (``y`` = relevance ≥ 1 for AP, P, RBP and R; ``g`` = the grade as gain for nDCG; ranks
``i`` from 1; trec_eval's definitions with the universe's judgments):

* ``P@k = (1/k) Σ_{i≤k} ŷ_i`` and ``RBP(p)@k = (1 − p) Σ_{i≤k} p^{i−1} ŷ_i`` (linear: unbiased);
* ``R = Σ_{u∈U} ŷ_u`` per topic;
* ``AP@k = N̂ / R̂`` with ``N̂ = Σ_{i≤k} (ŷ_i / i)(1 + Σ_{j<i} ŷ_j)``: statAP (Aslam, Pavlu & Yilmaz,
  SIGIR 2006) written with pseudo-judgments; ``N̂`` is unbiased for AP's numerator under Poisson
  sampling (``ŷ_i ŷ_j`` is unbiased for ``y_i y_j`` when ``i ≠ j`` because the units are drawn
  independently, and ``ŷ_i`` for ``y_i² = y_i``); the ratio is a ratio estimator;
* ``nDCG@k = DCĜ / IDCĜ`` with ``DCĜ = Σ_{i≤k} ĝ_i / log2(i + 1)`` and the ideal DCG computed from the
  estimated number of documents of each grade ``n̂_g = Σ_{u∈U} (f_{u,g} + S_u (1[y_u = g] − f_{u,g}) / π_u)``
  (clipped at 0) placed in grade order, a fractional count filling its last position in proportion, as
  NIST's infNDCG estimates the ideal ranking from estimated counts.

**Variance** by linearisation (Taylor): ``θ̂ ≈ θ + Σ_u (S_u − π_u) a_u e_u / π_u`` with ``a_u`` the
derivative of the estimate with respect to ``ŷ_u`` and ``e_u = y_u − f_u``; under Poisson sampling
``Var θ̂ ≈ Σ_u π_u (1 − π_u) (a_u e_u / π_u)²``, estimated by summing ``(1 − π_u) z_u²`` over the sampled
units, ``z_u = a_u e_u / π_u``. :func:`influence` returns ``z`` for every run and every sampled unit
(runs × units), so the covariance of all run means is one product ``Z diag(1 − π) Zᵀ`` and every pair of
runs' difference comes from it.

**Fixed-size designs** (``Units.stratum`` given: stratified simple random sampling without replacement,
``n_h`` of the ``N_h`` units of stratum ``h``, ``π_u = f_h = n_h/N_h``). The pseudo-judgments are
unbiased as they are, so the linear measures (P, RBP, R, the numerator of nDCG) need no change. What
changes:

* the variance: ``Σ_h (1 − f_h) n_h/(n_h − 1) Σ_{u∈S_h} (z_u − z̄_h)²`` (``z̄_h`` the mean of ``z`` over the
  stratum's sampled units, per run), the unbiased estimator of the linear term's variance under
  SRSWOR; covariances of runs likewise from the centred ``Z`` (:meth:`Units.covariance`);
* AP's numerator: two units of the same stratum are drawn together with ``π_uv = n_h(n_h − 1) /
  (N_h(N_h − 1))``, not ``π_u π_v``, so the part ``S_u S_v e_u e_v/(π_u π_v)`` of ``ŷ_u ŷ_v`` is multiplied
  by ``κ_h = π_u π_v/π_uv = n_h(N_h − 1)/(N_h(n_h − 1))``; ``N̂`` stays exactly unbiased (with ``f``
  fixed). Its derivative, and so ``z``, includes the correction;
* AP's second-order term (:func:`_product_terms`): the Poisson form with each same-stratum pair's term
  multiplied by ``κ_h`` (the plug-in of ``Var ŷ_u Var ŷ_v`` weighted by ``1/π_uv``); the negative
  covariance of SRSWOR draws within this term is ignored (approximate; the term is small);
* the ratio bias correction: the covariance of numerator and denominator in the same without-replacement
  form, ``Σ_h (1 − f_h) n_h/(n_h − 1) Σ_{S_h} (z_u − z̄_h)(w_u − w̄_h)`` per topic.

A control variate fitted on the sample is treated as fixed in both designs (as the Poisson formulas do).

**Ratio bias.** A ratio ``N̂/D̂`` has bias ``≈ (θ Var D̂ − Cov(N̂, D̂)) / D²``, which does not shrink when
topics are averaged while the standard error does. It is estimated from the same sample,
``Σ_u (1 − π_u) z_u (d_u e_u / π_u) / D̂`` with ``d_u`` the derivative of the denominator, and
subtracted (:func:`ratio_correction`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "Units",
    "Items",
    "MeasureEstimate",
    "estimate_measure",
    "ideal_dcg",
    "anticipated_variance",
    "MEASURE_KINDS",
]

#: the measure families estimated here
MEASURE_KINDS = ("P", "RBP", "R", "AP", "nDCG")


@dataclass
class Units:
    """The universe: one entry per (topic, document) unit.

    ``topic`` (int, 0..T-1), ``pi`` (inclusion probability; any value > 0 for units not sampled),
    ``sampled`` (bool), ``grade`` (the judged grade, an index into ``levels``; ignored where not sampled),
    ``levels`` (the distinct grades, ascending, starting with 0), ``f_level`` ``[units × levels]`` (the
    control variate: a predicted probability of each grade; rows of zeros = no control variate).
    """

    topic: np.ndarray
    pi: np.ndarray
    sampled: np.ndarray
    grade: np.ndarray
    levels: np.ndarray
    f_level: np.ndarray
    n_topics: int
    #: fixed-size designs: the stratum of each unit (``-1``: certainty or not in the design) and
    #: ``[strata × 2]`` ``N_h, n_h``; ``None`` for Poisson sampling
    stratum: np.ndarray | None = None
    strata: np.ndarray | None = None
    #: a relevance model ``[units × levels]`` (probability of each grade, pooled over topics) for the
    #: anticipated variance (:func:`anticipated_variance`); ``None``: not computed
    p_model: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.n_units = len(self.topic)
        # the judged indicator of each grade, as a units × levels matrix (0 rows for unsampled units)
        onehot = np.zeros((self.n_units, len(self.levels)))
        s = np.flatnonzero(self.sampled)
        onehot[s, self.grade[s]] = 1.0
        self.onehot = onehot
        #: the sampled units whose draw was random (π < 1): the only ones that carry variance
        self.random = np.flatnonzero(self.sampled & (self.pi < 1.0))
        self.random_topic = self.topic[self.random]
        self.w = np.zeros(self.n_units)
        self.w[s] = 1.0 / self.pi[s]
        if self.stratum is not None and self.strata is not None:
            size, n = np.asarray(self.strata, dtype=float).reshape(-1, 2).T
            two = (n >= 2) & (n < size)
            #: per stratum: (1 − f_h) n_h/(n_h − 1), and κ_h = π_u π_v / π_uv for two of its units
            self.srs_scale = np.where(two, (1.0 - n / np.maximum(size, 1.0)) * n / np.maximum(n - 1.0, 1.0), 0.0)
            self.kappa = np.where(two, n * (size - 1.0) / (np.maximum(size, 1.0) * np.maximum(n - 1.0, 1.0)), 1.0)
            self.random_stratum = np.asarray(self.stratum, dtype=np.int64)[self.random]

    def covariance(self, z: np.ndarray, other: np.ndarray | None = None) -> np.ndarray:
        """The estimated covariance matrix of the linear terms ``Σ_u z_u`` of the rows of ``z``
        ``[rows × random units]`` (with the rows of ``other``, if given): ``Z diag(1 − π) Zᵀ`` under
        Poisson sampling, ``Σ_h (1 − f_h) n_h/(n_h − 1) Σ_{S_h} (z − z̄_h)(z − z̄_h)ᵀ`` under a fixed-size one."""
        other = z if other is None else other
        if self.stratum is None:
            scale = 1.0 - self.pi[self.random]
            return (z * scale[None, :]) @ other.T
        return self._centred(z) @ (self._centred(other) * self.srs_scale[self.random_stratum][None, :]).T

    def _centred(self, z: np.ndarray) -> np.ndarray:
        """``z`` minus its mean over the sampled units of each unit's stratum (per row)."""
        from scipy import sparse

        h = self.random_stratum
        count = np.bincount(h, minlength=len(self.srs_scale)).astype(float)
        member = sparse.csr_matrix((np.ones(len(h)), (np.arange(len(h)), h)), shape=(len(h), len(count)))
        sums = np.asarray((member.T @ z.T).T)
        return z - (sums / np.maximum(count, 1.0))[:, h]

    def pseudo(self, values: np.ndarray) -> np.ndarray:
        """``ŷ = f + S (y − f) / π`` for a per-level value vector (gain of each grade): one value per unit."""
        f = self.f_level @ values
        y = self.onehot @ values
        return f + self.w * (y - f)

    def error(self, values: np.ndarray) -> np.ndarray:
        """``e_u / π_u = (y_u − f_u) / π_u`` of the random units for a per-level value vector."""
        r = self.random
        return (self.onehot[r] @ values - self.f_level[r] @ values) / self.pi[r]


@dataclass
class Items:
    """Rankings cut at their largest needed depth: item ``j`` is unit ``unit[j]`` at 0-based ``rank[j]``
    of ranking ``ranking[j]`` = ``run · T + topic``; items of a ranking are contiguous, in rank order."""

    ranking: np.ndarray
    rank: np.ndarray
    unit: np.ndarray
    n_runs: int
    n_topics: int


@dataclass
class MeasureEstimate:
    """Per run and topic: ``value`` ``[runs × topics]`` (bias-corrected for ratios), ``raw`` (without the
    correction), and ``z`` ``[runs × random units]`` (see the module docstring)."""

    value: np.ndarray
    raw: np.ndarray
    z: np.ndarray
    #: AP only: ``[runs × unit pairs]`` (scipy sparse) whose Gram matrix is the second-order covariance of
    #: the runs' estimates summed over topics (the product terms of AP's numerator), else ``None``
    second: object | None = None
    #: ratios only: the numerator ``[runs × topics]`` (AP's ``N̂``, nDCG's ``DCĜ``)
    numerator: np.ndarray | None = None
    #: the anticipated (model-based) variance of each run's sum over topics ``[runs]``, or ``None``
    anticipated: np.ndarray | None = None
    #: ratios only: the estimated first-order ratio bias of ``raw`` ``[runs × topics]`` (``value`` is ``raw``
    #: minus it)
    bias: np.ndarray | None = None


def _seg_exclusive_cumsum(x: np.ndarray, ranking: np.ndarray) -> np.ndarray:
    """Per item, the sum of ``x`` over the earlier items of its ranking (items grouped by ranking)."""
    c = np.cumsum(x)
    start = np.r_[True, ranking[1:] != ranking[:-1]]
    base = np.maximum.accumulate(np.where(start, np.arange(len(x)), 0)) if len(x) else np.zeros(0, np.int64)
    return c - x - (c[base] - x[base])


def _seg_total(x: np.ndarray, ranking: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(ranking, weights=x, minlength=n)


def ideal_dcg(counts: np.ndarray, gains: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """IDCG@k and its derivative with respect to each count, per topic.

    ``counts`` ``[topics × G]`` estimated numbers of documents of each positive grade, ``gains`` ``[G]``
    their gains (any order); fractional counts fill their last position in proportion. Returns
    ``(idcg [topics], d_idcg [topics × G])``.
    """
    positive = counts > 0  # a negative estimated count is clipped at 0: IDCG does not move with it
    counts = np.clip(counts, 0.0, None)
    order = np.argsort(-gains, kind="stable")
    g = gains[order].astype(float)
    c = np.cumsum(counts[:, order], axis=1)  # C_l: documents of the l best grades
    step = g - np.r_[g[1:], 0.0]  # gain_l − gain_{l+1}
    disc = 1.0 / np.log2(np.arange(2, k + 2))
    cum = np.r_[0.0, np.cumsum(disc)]  # D(n) for integer n = 0..k

    def D(x: np.ndarray) -> np.ndarray:
        x = np.minimum(x, k)
        n = np.floor(x).astype(np.int64)
        frac = x - n
        nxt = np.where(n < k, disc[np.minimum(n, k - 1)], 0.0)
        return cum[n] + frac * nxt

    idcg = (D(c) * step).sum(axis=1)
    n = np.floor(c).astype(np.int64)
    slope = np.where(c < k, disc[np.minimum(n, k - 1)], 0.0) * step  # ∂IDCG/∂C_l
    # ∂/∂n_m = Σ_{l ≥ m} ∂IDCG/∂C_l (a count feeds every cumulative count from its grade down)
    d_sorted = np.cumsum(slope[:, ::-1], axis=1)[:, ::-1]
    d = np.empty_like(d_sorted)
    d[:, order] = d_sorted
    return idcg, d * positive


def estimate_measure(
    kind: str, k: int, units: Units, items: Items, rel_from: int = 1, p: float = 0.8
) -> MeasureEstimate:
    """Estimate one measure for every run and topic (see the module docstring for the formulas).

    ``kind``: one of :data:`MEASURE_KINDS`; ``k``: the cut-off (ranks beyond it are ignored);
    ``rel_from``: the smallest grade counted relevant by the binary measures (1, as trec_eval);
    ``p``: RBP's persistence.
    """
    R, T = items.n_runs, items.n_topics
    n_rank = R * T
    keep = items.rank < k
    ranking, rank, unit = items.ranking[keep], items.rank[keep], items.unit[keep]
    levels = units.levels
    rand = units.random
    n_rand = len(rand)
    col = np.full(units.n_units, -1, dtype=np.int64)
    col[rand] = np.arange(n_rand)
    item_col = col[unit]
    on = item_col >= 0
    run_of_item = ranking // T
    z = np.zeros((R, n_rand))
    binary = (levels >= rel_from).astype(float)

    def add_items(target: np.ndarray, coef: np.ndarray, err_rand: np.ndarray, scale: np.ndarray | None) -> None:
        # target[run, unit] += coef_item · e_u/π_u · scale (scale per ranking [runs × topics], or none)
        sc = 1.0 if scale is None else scale.reshape(-1)[ranking[on]]
        flat = run_of_item[on] * n_rand + item_col[on]
        target.reshape(-1)[:] += np.bincount(flat, weights=coef[on] * err_rand[item_col[on]] * sc, minlength=R * n_rand)

    if kind in ("P", "RBP"):
        yhat = units.pseudo(binary)
        coef = np.full(len(rank), 1.0 / k) if kind == "P" else (1.0 - p) * p ** rank.astype(float)
        value = _seg_total(coef * yhat[unit], ranking, n_rank).reshape(R, T)
        add_items(z, coef, units.error(binary), None)
        out = MeasureEstimate(value, value, z)
        out.anticipated = anticipated_variance(
            units, ranking, rank, unit, R, T, coef, np.zeros((R, T)), np.zeros((T, len(levels))), binary
        )
        return out
    if kind == "R":
        yhat = units.pseudo(binary)
        r_hat = np.bincount(units.topic, weights=yhat, minlength=T)
        value = np.broadcast_to(r_hat, (R, T)).copy()
        z[:, :] = units.error(binary)[None, :]
        out = MeasureEstimate(value, value, z)
        out.anticipated = anticipated_variance(
            units,
            ranking,
            rank,
            unit,
            R,
            T,
            np.zeros(len(rank)),
            -np.ones((R, T)),
            np.broadcast_to(binary, (T, len(levels))),
            binary,
        )
        return out
    if kind == "AP":
        yhat = units.pseudo(binary)
        e = units.error(binary)
        x = yhat[unit]
        m = rank + 1.0
        before = _seg_exclusive_cumsum(x, ranking)
        num = _seg_total(x * (1.0 + before) / m, ranking, n_rank).reshape(R, T)
        after = _seg_total(x / m, ranking, n_rank)[ranking] - _seg_exclusive_cumsum(x / m, ranking) - x / m
        dnum = (1.0 + before) / m + after
        if units.stratum is not None:
            # fixed size: e_u e_v/(π_u π_v) of two units of a stratum is reweighted by κ_h = π_u π_v/π_uv
            eps = np.zeros(units.n_units)
            eps[rand] = e
            h_unit = np.asarray(units.stratum, dtype=np.int64)
            random_unit = np.zeros(units.n_units, dtype=bool)
            random_unit[rand] = True
            is_rand = random_unit[unit]
            h_item = np.where(is_rand, h_unit[unit], 0)
            xe = eps[unit]
            n_h = len(units.kappa)
            key = ranking * n_h + h_item
            order = np.argsort(key, kind="stable")  # items of a ranking and stratum, still in rank order
            ks, xs, ms = key[order], xe[order], m[order]
            before_h = np.empty(len(xs))
            after_h = np.empty(len(xs))
            before_h[order] = _seg_exclusive_cumsum(xs, ks)
            after_h[order] = _seg_total(xs / ms, ks, n_rank * n_h)[ks] - _seg_exclusive_cumsum(xs / ms, ks) - xs / ms
            extra = np.where(is_rand, units.kappa[h_item] - 1.0, 0.0)
            num = num + _seg_total(extra * xe * before_h / m, ranking, n_rank).reshape(R, T)
            dnum = dnum + extra * (before_h / m + after_h)
        den = np.bincount(units.topic, weights=yhat, minlength=T)  # R̂ per topic
        d_err = e  # the denominator's derivative is 1 for every unit
        # R̂ is at least the relevant pairs judged: where it is less, it is that and does not move
        judged = np.bincount(units.topic, weights=units.onehot @ binary, minlength=T)
        held = den < judged
        den = np.where(held, judged, den)
        d_err = np.where(held[units.random_topic], 0.0, d_err)
        v = np.zeros(units.n_units)
        v[rand] = (1.0 - units.pi[rand]) * e**2
        slope_levels = binary[None, :] * (~held)[:, None]
        num_levels = binary
    elif kind == "nDCG":
        gains = np.where(levels > 0, levels, 0).astype(float)
        ghat = units.pseudo(gains)
        e = units.error(gains)
        disc = 1.0 / np.log2(rank + 2.0)
        num = _seg_total(disc * ghat[unit], ranking, n_rank).reshape(R, T)
        dnum = disc
        pos = np.flatnonzero(gains > 0)
        counts = np.zeros((T, len(pos)))
        judged = np.zeros_like(counts)  # each grade's count is at least its judged pairs
        for j, lev in enumerate(pos):  # a few grades
            counts[:, j] = np.bincount(units.topic, weights=units.pseudo(np.eye(len(levels))[lev]), minlength=T)
            judged[:, j] = np.bincount(units.topic, weights=units.onehot[:, lev], minlength=T)
        held = counts < judged
        counts = np.where(held, judged, counts)
        den, d_idcg = ideal_dcg(counts, gains[pos], k)
        d_idcg = d_idcg * ~held
        # the denominator's error of each random unit: Σ_g ∂IDCG/∂n_g (1[y=g] − f_g) / π
        r = rand
        ind = units.onehot[r][:, pos] - units.f_level[r][:, pos]
        d_err = (ind * d_idcg[units.random_topic]).sum(axis=1) / units.pi[r]
        slope_levels = np.zeros((T, len(levels)))
        slope_levels[:, pos] = d_idcg
        num_levels = gains
    else:
        raise ValueError(f"unknown measure kind {kind!r}; choices: {', '.join(MEASURE_KINDS)}")
    safe = np.where(den > 0, den, 1.0)
    raw = np.where(den[None, :] > 0, num / safe[None, :], 0.0)
    # z = (∂N_u e_u/π_u − θ d_u e_u/π_u) / D
    inv = np.where(den > 0, 1.0 / safe, 0.0)
    add_items(z, dnum, e, np.broadcast_to(inv[None, :], (R, T)))
    t_r = units.random_topic
    z -= raw[:, t_r] * (d_err * inv[t_r])[None, :]
    # bias of the ratio: Σ_u (1 − π_u) z_u d_u e_u/π_u / D, per topic
    if units.stratum is None:
        weight = (1.0 - units.pi[rand]) * d_err * inv[t_r]
        for_topic = np.zeros((n_rand, T))
        for_topic[np.arange(n_rand), t_r] = weight
        correction = z @ for_topic
    else:
        correction = _srs_cross(z, d_err * inv[t_r], t_r, units, T)
    second = (
        _product_terms(v, ranking, rank, unit, R, T, inv, units.n_units, units.stratum, getattr(units, "kappa", None))
        if kind == "AP"
        else None
    )
    out = MeasureEstimate(raw + correction, raw, z, second, num, None, -correction)
    out.anticipated = anticipated_variance(
        units, ranking, rank, unit, R, T, dnum * inv[ranking % T], raw * inv[None, :], slope_levels, num_levels
    )
    return out


def anticipated_variance(
    units: Units,
    ranking: np.ndarray,
    rank: np.ndarray,
    unit: np.ndarray,
    R: int,
    T: int,
    c_item: np.ndarray,
    c_den: np.ndarray,
    slope: np.ndarray,
    value_levels: np.ndarray,
) -> np.ndarray | None:
    """The anticipated (model-based) variance of each run's estimate summed over topics ``[runs]``:
    ``Σ_t Σ_u (1 − π_u)/π_u · Var_p(h_{s,t,u}(y_u))`` over every unit drawn at random or not (``π < 1``),
    ``y_u`` distributed as the relevance model ``units.p_model`` says, and ``h`` the linearised effect of
    unit ``u``'s grade on run ``s``'s topic-``t`` estimate: ``c_item · value(y) − c_den[s,t] · slope[t, y]``
    for a unit in the run's top ``k`` (``c_item``: the item's coefficient; ``value``: the grade's value
    in the numerator), ``−c_den[s,t] · slope[t, y]`` for the others (``slope``: the denominator's
    derivative with respect to the unit's grade). Unlike the design-based variance, it sees the pairs the
    sample did not draw (a relevant document nobody drew moves the estimate; Särndal, Swensson & Wretman
    1992, §6.7's anticipated variance). ``None`` without a model."""
    pm = units.p_model
    if pm is None:
        return None
    w = np.where(units.pi < 1.0, (1.0 - units.pi) / units.pi, 0.0)
    slope = np.asarray(slope, dtype=float)
    s_u = slope[units.topic]  # [units × levels]
    mean_s = (pm * s_u).sum(axis=1)
    var_s = (pm * s_u**2).sum(axis=1) - mean_s**2
    base = np.bincount(units.topic, weights=w * var_s, minlength=T)  # Σ_u w Var(slope) per topic
    total = (c_den**2 * base[None, :]).sum(axis=1)
    on = w[unit] > 0
    if on.any():
        r_i, t_i, u_i = ranking[on] // T, ranking[on] % T, unit[on]
        cd = c_den[r_i, t_i]
        h = c_item[on][:, None] * value_levels[None, :] - cd[:, None] * s_u[u_i]
        mh = (pm[u_i] * h).sum(axis=1)
        var_h = (pm[u_i] * h**2).sum(axis=1) - mh**2
        total = total + np.bincount(r_i, weights=w[u_i] * (var_h - cd**2 * var_s[u_i]), minlength=R)
    return np.clip(total, 0.0, None)


def _srs_cross(z: np.ndarray, w: np.ndarray, t_r: np.ndarray, units: Units, T: int) -> np.ndarray:
    """Per run and topic, the without-replacement covariance estimate of ``Σ z`` and ``Σ w`` restricted to
    the topic's units: ``Σ_h c_h (Σ_{S_h,t} z_u w_u − Z_{h,t} W_{h,t} / n_h)`` with ``c_h = (1 − f_h) n_h/(n_h − 1)``,
    ``Z_{h,t}``, ``W_{h,t}`` the sums over the stratum's sampled units of topic ``t`` and ``n_h`` the
    stratum's sampled units (of every topic)."""
    from scipy import sparse

    h = units.random_stratum
    H = len(units.srs_scale)
    c = units.srs_scale[h]
    n_rand = len(h)
    for_topic = sparse.csr_matrix((c * w, (np.arange(n_rand), t_r)), shape=(n_rand, T))
    first = np.asarray((for_topic.T @ z.T).T)
    count = np.bincount(h, minlength=H).astype(float)
    key = t_r * H + h
    cell = sparse.csr_matrix((np.ones(n_rand), (np.arange(n_rand), key)), shape=(n_rand, T * H))
    z_sum = np.asarray((cell.T @ z.T).T).reshape(z.shape[0], T, H)
    w_sum = np.bincount(key, weights=w, minlength=T * H).reshape(T, H)
    factor = units.srs_scale / np.maximum(count, 1.0)
    return first - (z_sum * (w_sum * factor[None, :])[None, :, :]).sum(axis=2)


def _product_terms(
    v: np.ndarray,
    ranking: np.ndarray,
    rank: np.ndarray,
    unit: np.ndarray,
    R: int,
    T: int,
    inv: np.ndarray,
    n_units: int,
    stratum: np.ndarray | None = None,
    kappa: np.ndarray | None = None,
):
    """The second-order part of AP's variance: its numerator's products ``ŷ_i ŷ_j / m_j`` (``i`` ranked
    before ``j``, ``m_j`` the later rank) vary by ``Var ŷ_i Var ŷ_j / m_j²`` beyond the linear terms
    (the deviations of independent units are uncorrelated with their products). Returns the sparse
    ``[runs × unit pairs]`` matrix ``M`` with ``M[s, (i, j)] = sqrt(v_i v_j) / (m_j R̂_t)``: ``M Mᵀ`` is
    the covariance of every pair of runs' sums over topics, ``v`` being ``(1 − π)(y − f)²/π²``.
    With a fixed-size design (``stratum``, ``kappa`` per stratum), a pair of the same stratum counts
    ``κ_h`` times (its entry times ``sqrt(κ_h)``): approximate, see the module docstring."""
    from scipy import sparse

    keep = v[unit] > 0
    rk, rnk, un = ranking[keep], rank[keep], unit[keep]
    n = len(rk)
    if n < 2:
        return sparse.csr_matrix((R, 0))
    start = np.r_[True, rk[1:] != rk[:-1]]
    first = np.maximum.accumulate(np.where(start, np.arange(n), 0))
    count = np.arange(n) - first  # earlier items of the same ranking
    later = np.repeat(np.arange(n), count)
    offset = np.arange(len(later)) - np.repeat(np.cumsum(count) - count, count)
    earlier = first[later] + offset
    ui, uj = un[earlier], un[later]
    key = np.minimum(ui, uj) * n_units + np.maximum(ui, uj)
    cols, col = np.unique(key, return_inverse=True)
    topic = rk[later] % T
    data = np.sqrt(v[ui] * v[uj]) / (rnk[later] + 1.0) * inv[topic]
    if stratum is not None and kappa is not None:
        hi, hj = stratum[ui], stratum[uj]
        same = (hi == hj) & (hi >= 0)
        data = data * np.where(same, np.sqrt(kappa[np.maximum(hi, 0)]), 1.0)
    return sparse.csr_matrix((data, (rk[later] // T, col.reshape(-1))), shape=(R, len(cols)))
