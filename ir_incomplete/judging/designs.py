"""Probability samples of judgments with known inclusion probabilities: what design-based estimates read.

:func:`sample` draws the (query, document) pairs to judge from the *universe*, the runs' top ``depth``
plus the pairs judged already (``qrels``, earlier rounds: the certainty stratum below, even where they
lie outside the runs' top ``depth``, so that every known relevant document counts in R), and gives each
its inclusion probability ``pi``; :func:`ir_incomplete.estimate` turns their judgments into
estimates with intervals.

**The design** (Poisson sampling, each pair drawn independently; Särndal, Swensson & Wretman 1992, §3.5):

* a *certainty stratum*, judged with ``pi = 1``: the pairs of ``qrels`` (judgments you already have,
  e.g. TREC-COVID round 1 or a depth-10 pool) and of an earlier round (``previous=``), judged already
  (``stratum`` ``judged``), and the top ``certain`` pairs of a priority pool (Σ over runs of
  1/(1 + rank), ranks from 1), which count against the budget and are to judge (``stratum``
  ``certain``); ``certain`` equal to the budget is refused while other pairs remain (they would get
  ``pi = 0``);
* every other pair with ``pi_u = min(1, c · q_u)``, ``c`` chosen so that ``Σ pi_u`` equals the rest of the
  budget exactly: the expected number of judgments is the budget, and the realised number differs by
  about ``±sqrt(Σ pi (1 − pi))`` (~1 % at 4,000);
* ``q_u = (1 − uniform) · prior_u / Σ prior + uniform / N``: proportional to a ``prior`` (``"ap+rbp"``, the
  default: half Aslam & Pavlu's AP-prior, half an RBP fusion, each normalised to sum 1 — the AP-prior,
  statAP's sampling distribution, spreads π over the whole top 100 and the RBP(0.8) fusion ``Σ over runs of
  0.2 · 0.8^(rank − 1)`` (averaged over the runs) puts it on the top ranks that nDCG@10 reads: on
  TREC-COVID round 1, 2,000 judgments, 8 seeds, τ of AP@100 0.857 → 0.870 and of nDCG@10 0.791 → 0.842,
  RMSE 0.017 → 0.015 and 0.062 → 0.046 against the AP-prior alone; ``"ap"``; ``"rbp-fusion"``;
  ``"rrf"``: Σ 1/(60 + rank);
  ``"uniform"``; a judging strategy, by name (``"depth"``, ``"budget"``, ``"rbp"``, ``"movetofront"``,
  ``"bandit"``, ``"judge_next"``) or as a :class:`~ir_incomplete.judging.strategy.Strategy` object, whose
  priorities over the pairs, from the judgments so far, :func:`~ir_incomplete.judging.strategy_prior`
  gives; or a table ``query_id, doc_id, prior``) with a share ``uniform`` of the budget spread
  evenly, so that no pair has ``pi`` below ``min(1, uniform · (budget − certain) / N)``, ``N`` the pairs
  outside the certainty stratum (``c ≥ budget − certain`` because ``Σ q = 1``; a floor keeps the weights
  1/pi bounded); a pair that would get ``pi`` below ``1e-12`` of that even share (``uniform`` below
  ``1e-12`` and a prior that nearly vanishes, or 0) is refused: it could (practically) never be drawn;
* with automatic labels (``predictions=``) and judgments to calibrate them on (``qrels`` or an earlier
  round), ``prior_u`` is multiplied by ``sqrt(p_u (1 − p_u))``, ``p_u`` the calibrated probability that a
  pair with that predicted grade is relevant: pi grows where the labels are unsure (active inference,
  Zrnic & Candès, ICML 2024: the variance of ``y − f`` is what the sample must pay for);
* **rounds**: ``previous=`` (an earlier design) with ``judgments=`` (its judgments) starts a new round:
  the pairs judged so far join the certainty stratum, and this round's pi is set from them. Conditional
  on the earlier rounds the new round is an ordinary Poisson design, so estimates from the last design
  stay unbiased and its intervals hold, however the earlier rounds chose what to judge.

**Allocation over topics** (``allocation=``; Poisson design only):

* ``"global"`` (default): one ``c`` over all open pairs, as above, so each topic's share of the random
  judgments is its share of ``Σ q``: a topic with few relevant documents left may get a handful of draws
  and none relevant (Robust04, 249 topics, the runs' depth-10 pool judged + 2,000: 42 % of the topics draw
  no relevant pair beyond the certainty stratum);
* ``"topics"``: the random part of the budget, ``rest = budget − certain``, is first split over the topics
  into expected sizes ``n_t`` (real numbers, ``Σ n_t = rest``: a Poisson design's sizes are expectations,
  so nothing is rounded), then each topic gets ``pi_u = min(1, c_t · q_u)`` with ``c_t`` such that
  ``Σ_{u ∈ O_t} pi_u = n_t`` (:func:`inclusion_probabilities` with one sum per topic). ``O_t``: the
  topic's open pairs, ``N_t = |O_t|``; ``q`` is normalised within the topic, ``q_u = (1 − uniform) ·
  prior_u / Σ_{O_t} prior + uniform / N_t`` (uniform in a topic whose prior is 0 throughout), so that no pair
  has ``pi`` below ``min(1, uniform · n_t / N_t)``. The split, with ``m_t = min(min_per_topic, N_t)``:

  - when ``Σ m_t ≥ rest`` (the minimum does not fit), equal shares: ``n_t = min(λ, m_t)``;
  - else ``n_t = clip(λ · sqrt(V_t), m_t, N_t)``, ``λ`` such that ``Σ n_t = rest`` (found exactly: ``Σ n_t``
    is piecewise linear in ``λ``, :func:`split_budget`): Neyman's allocation (``n_h ∝ N_h S_h``, Cochran 1977,
    §5.5) with a floor, where ``V_t = Σ_{u ∈ O_t} (p_u / q_u) · ((0.25 / R̂_t)² + D_u / I_t²)`` is the
    anticipated variance per judgment of the topic's errors in AP and nDCG@10: with ``pi_u ≈ n_t q_u`` the
    variance of a Horvitz–Thompson total ``Σ a_u y_u`` is about ``(1/n_t) Σ a_u² y_u / q_u``, whose mean over
    ``y_u ~ Bernoulli(p_u)`` is ``V_t / n_t`` for the sensitivities ``a_u`` below, and ``Σ_t V_t / n_t`` is
    least, for a fixed ``Σ n_t``, at ``n_t ∝ sqrt(V_t)``. In it:

    * ``f_u`` is the pair's AP-prior (Aslam & Pavlu's, averaged over the runs: the universe's, whatever
      ``prior`` is), ``r_t`` the topic's pairs judged relevant (grade ≥ 1) in ``qrels`` and earlier rounds,
      ``F_t`` their judged pairs' ``Σ f_u``;
    * ``ρ_t = (r_t + 1) / (F_t + 1/ρ̄)``, ``ρ̄ = Σ_t r_t / Σ_t F_t``: relevant documents per unit of AP-prior
      mass, the topic's own shrunk toward the pooled rate (a Gamma prior of mean ``ρ̄`` and shape 1: one
      pseudo relevant document; without a judged relevant pair ``ρ_t = 1 / max f``, a pair every run ranks
      first being relevant). On Robust04's depth-10 pool this predicts each topic's relevant documents
      left with Pearson correlation 0.69 (their total: 5,309 against 7,293), where the topic's judged share
      (shrunk toward the pooled one) times ``N_t`` reaches 0.50 and overstates the total 3.7 times;
    * ``p_u = min(1, ρ_t f_u)``, the pair's chance of being relevant; ``R̂_t = r_t + Σ_{O_t} p_u``;
    * ``0.25 / R̂_t``: AP's sensitivity to one relevant pair more through its ``R`` (``∂AP/∂R = −AP/R``, AP
      taken as 0.25): the topic's relative error of ``R``, whose square is of the order of its AP's ratio
      bias (Kish) and which is large in topics with few relevant documents left;
    * ``D_u / I_t²``: nDCG@10's sensitivity, squared and averaged over the runs: ``D_u`` the mean over the
      runs of ``(1 / log2(1 + rank))²`` where the run ranks the pair within its top 10 (0 elsewhere),
      ``I_t = Σ_{i=1}^{10} clip(R̂_t − i + 1, 0, 1) / log2(1 + i)`` the ideal DCG@10 of ``R̂_t`` relevant
      documents. It keeps the unjudged top-10 pairs of topics with many relevant documents from losing
      judgments; it is 0 where a depth-10 pool is judged.

  The allocation depends on the runs and the judgments made before the round, not on the draw, so every
  estimate stays as unbiased as with ``"global"`` (``pi`` is all :func:`ir_incomplete.estimate` reads).
  ``attrs`` record ``allocation``, ``min_per_topic`` and ``topic_budgets`` (``n_t`` per topic with open
  pairs); a design without ``allocation`` (written before it existed) was drawn ``"global"``.

  Measured (``examples/allocation_evidence.py``: 10 seeds each, 90 % intervals of ``estimate(..., pairs="both")``,
  truth the complete qrels on the universe; ``global`` → ``topics``): Robust04, depth-10 pool + 10,000 (~40 per
  topic): topics drawing no relevant pair 0.12 → 0.10, bias AP@100 +0.0108 → +0.0102 and nDCG@10 +0.0091 → +0.0074,
  RMSE 0.0118 → 0.0112 and 0.0092 → 0.0075 (of pair differences AP 0.0049 → 0.0054, nDCG 0.0019 → 0.0017), coverage of
  run means AP 0.32 → 0.40 (nDCG 0.00 both), of pairs AP 0.82 → 0.81 and nDCG 0.38 → 0.43, τ AP 0.947 → 0.951; + 2,000
  (~8 per topic: the minimum of 10 does not fit, equal shares): 0.42 → 0.41, AP bias +0.042 → +0.040, coverage of run
  means 0 both — no allocation rescues 8 draws per topic. TREC-COVID round 1 + 2,000: AP@100 coverage 0.84 / 0.86 →
  0.86 / 0.86, RMSE 0.0081 → 0.0080; nDCG@10 0.89 / 0.95 both, RMSE 0.0166 → 0.0164; from no judgments + 2,000
  unchanged (AP 0.88 / 0.89, nDCG 0.92 / 0.93). Variants, with the same harness: without the nDCG term (``V_t`` of the
  ratio alone) TREC-COVID's AP reached 0.88 / 0.88 but its nDCG@10 RMSE rose to 0.0192; Neyman's shares without the
  ratio (``sqrt`` of ``Σ p_u / q_u``) lowered Robust04's coverage (AP runs 0.12 at 10,000); AP taken as 0.5 instead of
  0.25 moved TREC-COVID toward the ratio alone (AP RMSE 0.0076, nDCG@10 0.0174). The default minimum of 10: at ~8 per
  topic the Neyman shares did worse than equal ones (min 0 or 4: AP bias +0.045 and 0.45 of the topics without a
  relevant draw), and at ~40 per topic it hardly binds (min 0 and 10 gave the same results, 20 coverage 0.37 / 0.81
  for AP).

Why Poisson rather than a fixed-size design: the pairs are independent, so every measure's estimator
(AP's numerator is a sum over pairs of pairs) is unbiased with ``pi_uv = pi_u pi_v`` and its variance
has a closed form; a fixed-size design needs joint inclusion probabilities. The budget is exact in
expectation, not in each draw; ``design="stratified"`` (below) is the fixed-size alternative, whose
joint probabilities are known in closed form.

**Fixed size** (``design="stratified"``): stratified simple random sampling without replacement, for
when the number of judgments must be the budget in every draw (a paid batch, a fixed assessor time),
not only in expectation:

* the certainty stratum as above; the open pairs are cut into ``strata`` groups (default 10) at the
  quantiles of the same ``q`` *weighted by the Poisson design's* ``min(1, c·q)``, so that each group
  expects about the same number of judgments; pairs with equal ``q`` at a boundary are split by their
  canonical order (below). Weighted, not equal-count, because ``q`` is skewed: equal-count groups put
  the pairs that many runs rank high together with ten times as many rarely-ranked ones at one rate
  (measured on TREC-COVID round 1, 143 runs, 2,000 judgments, 10 seeds: AP@100 RMSE 0.024 and 90 %
  coverage 0.82 with equal-count groups, 0.0165 and 0.88 weighted, 0.0159 and 0.88 for the Poisson
  design). Global over all topics, not per topic: strata of topic × ``q`` band measured no better
  (RMSE 0.0169, coverage 0.87, bias 0.005 against 0.003), and with ~2,000 judgments over 30 topics
  per-topic strata hold a few pairs each, so the minimum of 2 per stratum pulls the allocation away
  from ``q``;
* ``n_h`` proportional to ``Σ_{u∈h} min(1, c·q_u)`` (the Poisson design's expected count in the
  stratum: ``Σ q`` with the same cap at 1), at most ``N_h``, at least 2 where ``N_h ≥ 2`` (a stratum's
  variance needs two), rounded by largest remainder so that ``Σ n_h`` is ``budget − certain`` exactly
  (all open pairs when there are fewer);
* ``n_h`` pairs drawn uniformly without replacement in each stratum, each with ``pi = n_h / N_h``.

The rows carry ``stratum_id`` (the stratum, ``-1`` for the certainty stratum) and ``attrs`` carry
``design="stratified"`` and ``strata`` (``[N_h, n_h]`` per stratum), which :func:`ir_incomplete.estimate`
reads: HT estimates of linear measures stay unbiased, their variance becomes the without-replacement
one, and AP's products of two pairs of the same stratum are reweighted by ``pi_u pi_v / pi_uv`` (see
:mod:`ir_incomplete.kernels.design`).

Seeded: the same inputs and seed give the same design, bit for bit. The uniform random numbers are dealt
to the pairs in the *canonical pair order* — topics in natural order (``2`` before ``10``), then document
ids in string order — and every tie (the priority pool, the strata's boundaries) and every sum follows
it, so the design depends on the set of runs, not on their order nor on the order of their rows
(``attrs["runs"]`` lists them sorted). They come from ``numpy.random.default_rng(seed)``; a design with
pairs judged already (``qrels``, ``previous``) takes them from
``numpy.random.SeedSequence([seed, round, number of judged pairs])`` instead, so that a new round drawn
with the seed of the design its judgments came from draws each pair independently of that design.

**The universe record.** ``attrs`` hold ``universe_hash``, the SHA-256 of the lines
``"{query_id}\\t{doc_id}\\n"`` of the runs' top-``depth`` pairs in the canonical order (certainty pairs
from ``qrels``/``previous`` outside it not included), and ``universe_topics``, per topic the number of
those pairs and the first 16 hex digits of the SHA-256 of its lines
(:meth:`ir_incomplete.estimation.Universe.fingerprint`). :func:`ir_incomplete.estimate` refuses runs
that make another universe (changed under the same names: deeper lists, other documents), naming a
topic that differs; a design without the record is not checked.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from ir_incomplete.estimation import Universe, read_design, read_judgments, write_design
from ir_incomplete.estimation.universe import ALLOCATIONS, MIN_PER_TOPIC, PRIORS, examples
from ir_incomplete.judging._candidates import check_budget, check_positive_int
from ir_incomplete.judging.allocation import _check_allocation, split_budget, topic_budgets

__all__ = [
    "sample",
    "to_judge",
    "write_design",
    "PRIORS",
    "ALLOCATIONS",
    "MIN_PER_TOPIC",
    "inclusion_probabilities",
    "split_budget",
    "topic_budgets",
]

#: the designs :func:`sample` draws
DESIGNS = ("poisson", "stratified")


def inclusion_probabilities(q: np.ndarray, n: Any, group: np.ndarray | None = None) -> np.ndarray:
    """``min(1, c · q)`` with ``c`` such that the probabilities sum to ``n`` (``q > 0``; ``n ≤ len(q)``).

    With ``group`` (a code ``0..G−1`` per element) ``n`` is a sequence of ``G`` sums, and each group gets its
    own ``c_g``: ``pi = min(1, c_g · q)`` with ``Σ_{group g} pi = n_g`` (every element of a group with
    ``n_g ≥`` its size gets 1, of a group with ``n_g ≤ 0`` gets 0). ``c_g`` is found by capping: start with
    none at 1, set ``c_g = (n_g − capped_g) / Σ_{uncapped of g} q``, cap the elements with ``c_g · q ≥ 1``
    and repeat until no more are capped (the same ``c_g`` as one group alone gives, found with sums over
    each group's elements only, so that no group's sum loses digits to another's)."""
    if group is not None:
        return _grouped_inclusion(np.asarray(q, dtype=float), np.asarray(group), np.asarray(n, dtype=float))
    q = np.asarray(q, dtype=float)
    if n >= len(q):
        return np.ones(len(q))
    if n <= 0:
        return np.zeros(len(q))
    order = np.argsort(-q, kind="stable")
    sq = q[order]
    tail = np.cumsum(sq[::-1])[::-1]  # Σ_{j ≥ i} sq_j
    # with the first m pairs capped at 1: c = (n − m) / tail[m]; take the smallest m with c·sq[m] ≤ 1
    m = np.arange(len(q))
    c = (n - m) / tail
    ok = np.flatnonzero(c * sq <= 1.0)
    first = int(ok[0]) if len(ok) else len(q)
    pi = np.ones(len(q))
    if first < len(q):
        pi[order[first:]] = np.minimum(1.0, c[first] * sq[first:])
    return pi


def _grouped_inclusion(q: np.ndarray, group: np.ndarray, n: np.ndarray) -> np.ndarray:
    """:func:`inclusion_probabilities` with a sum ``n[g]`` per group (see there)."""
    groups = len(n)
    size = np.bincount(group, minlength=groups)
    capped = (n >= size)[group]
    empty = (n <= 0)[group]
    while True:
        free = np.bincount(group, weights=np.where(capped | empty, 0.0, q), minlength=groups)
        taken = np.bincount(group, weights=capped.astype(float), minlength=groups)
        c = np.where(free > 0, (n - taken) / np.where(free > 0, free, 1.0), 0.0)
        more = ~capped & ~empty & (c[group] * q >= 1.0)
        if not more.any():
            break
        capped |= more
    return np.where(capped, 1.0, np.where(empty, 0.0, np.minimum(1.0, c[group] * q)))


def stratum_sizes(target: np.ndarray, size: np.ndarray, total: int) -> np.ndarray:
    """Integer sample sizes ``n_h`` with ``min(2, N_h) ≤ n_h ≤ N_h`` and ``Σ n_h = min(total, Σ N_h)``:
    ``floor(target)`` within those bounds, then one more (or one fewer) for the strata with the largest
    remainder (over-allocation), ties in stratum order. ``total`` must reach ``Σ min(2, N_h)``."""
    target = np.asarray(target, dtype=float)
    size = np.asarray(size, dtype=np.int64)
    low = np.minimum(2, size)
    total = int(min(total, size.sum()))
    if total < low.sum():
        raise ValueError(f"{total} judgments cannot give each of {len(size)} strata its minimum of 2")
    n = np.clip(np.floor(target), low, size).astype(np.int64)
    while n.sum() < total:
        room = n < size
        order = np.argsort(-np.where(room, target - n, -np.inf), kind="stable")
        n[order[: min(total - int(n.sum()), int(room.sum()))]] += 1
    while n.sum() > total:
        room = n > low
        order = np.argsort(-np.where(room, n - target, -np.inf), kind="stable")
        n[order[: min(int(n.sum()) - total, int(room.sum()))]] -= 1
    return n


def _strata_of(q: np.ndarray, pi: np.ndarray, rest: int, strata: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stratum (0..H−1, ascending ``q``) of each open pair, ``N_h`` and ``n_h`` (see the module docstring)."""
    count = len(q)
    if count >= 2 and rest < 2:
        raise ValueError(
            f"design='stratified' needs at least 2 judgments beyond the certainty stratum (budget − certain = "
            f"{rest}); raise the budget or use design='poisson'"
        )
    groups = max(1, min(strata, count // 2, rest // 2))
    order = np.argsort(q, kind="stable")
    stratum = np.empty(count, dtype=np.int64)
    if count:
        # quantiles of q weighted by pi (the Poisson design's probabilities): each stratum holds about
        # 1/groups of the expected sample; a pair's midpoint of cumulated pi decides its stratum
        cum = np.cumsum(pi[order])
        share = (cum - pi[order] / 2.0) / cum[-1]
        cut = np.minimum((share * groups).astype(np.int64), groups - 1)
        stratum[order] = np.unique(cut, return_inverse=True)[1].reshape(-1)
        groups = int(stratum.max()) + 1
    size = np.bincount(stratum, minlength=groups)
    target = np.bincount(stratum, weights=pi, minlength=groups)
    return stratum, size, stratum_sizes(target, size, rest)


def to_judge(design: Any) -> pd.DataFrame:
    """The pairs of a design that this round sends to assessors: ``query_id, doc_id`` of every row whose
    ``stratum`` is not ``judged`` — the sampled pairs and this round's top-priority certainty pairs
    (``certain``) — in the design's order (index ``0..n-1``). Pairs judged before this round (``qrels=``,
    earlier rounds: stratum ``judged``) are left out; so are, in a design written before that stratum
    existed, the rows of an earlier ``round`` than the design's. ``design``: a DataFrame or file
    :func:`sample` made (anything :func:`ir_incomplete.estimation.read_design` reads); without a
    ``stratum`` column every pair is to judge."""
    frame = read_design(design)
    keep = np.ones(len(frame), dtype=bool)
    if "stratum" in frame.columns:
        keep &= (frame["stratum"].astype(str) != "judged").to_numpy()
    if "round" in frame.columns and len(frame):
        rounds = pd.to_numeric(frame["round"], errors="coerce").to_numpy(dtype=float)
        latest = frame.attrs.get("round", np.nanmax(rounds) if np.isfinite(rounds).any() else None)
        if latest is not None:
            keep &= ~(rounds < float(latest))
    return frame.loc[keep, ["query_id", "doc_id"]].reset_index(drop=True)


def _check_qrels_topics(query_ids: np.ndarray, topic: np.ndarray, universe: Universe) -> None:
    """``ValueError`` when no query of ``qrels=`` is answered by the runs (another collection, or ids spelt
    otherwise: ``'01'`` against ``'1'``): the judgments would be ignored and the budget spent on pairs judged
    already; a warning naming how many when only some are (their judgments are left out)."""
    if not len(query_ids):
        return
    names, first = np.unique(query_ids.astype(str), return_index=True)
    missing = names[topic[first] < 0]
    if len(missing) == len(names):
        raise ValueError(
            f"qrels=: none of its {len(names)} queries is answered by the runs (the qrels' {examples(names)}; the "
            f"runs' {examples(universe.topic_ids)}): its judgments would be ignored; check the query ids (e.g. '01' "
            f"against '1') or that the qrels are of the runs' collection"
        )
    if len(missing):
        warnings.warn(
            f"qrels=: {len(missing)} of its {len(names)} queries are answered by no run (e.g. {examples(missing)}); "
            f"their judgments are left out of the design",
            stacklevel=4,
        )


def _refuse_tiny(
    pi: np.ndarray,
    units: np.ndarray,
    rest: float,
    uniform: float,
    universe: Universe,
    per_topic: np.ndarray | None = None,
) -> None:
    """``ValueError`` when an open pair's ``pi`` is below ``1e-12`` of an even share of the sample,
    ``min(1, rest / N)`` (``allocation="topics"``: of its topic's, ``min(1, n_t / N_t)``, ``per_topic`` the
    ``n_t`` of each topic): it would (almost) never be drawn, and drawn it would weigh ``1/pi``. Only a uniform
    share below ``1e-12`` with a prior that nearly vanishes leads there (``pi ≥ uniform · rest / N``)."""
    if not len(pi):
        return
    if per_topic is None:
        even = np.full(len(pi), min(1.0, rest / len(pi)))
    else:
        topic = universe.unit_topic[units]
        size = np.bincount(topic, minlength=len(per_topic))
        even = np.minimum(1.0, per_topic[topic] / np.maximum(size[topic], 1))
    tiny = np.flatnonzero(pi < 1e-12 * even)
    if len(tiny):
        i = int(tiny[0])
        u = units[i]
        t = int(universe.unit_topic[u])
        if per_topic is None:
            share = f"({rest:g} judgments over {len(pi)} pairs)"
        else:
            count = int(np.sum(universe.unit_topic[units] == t))
            share = f"(its topic's {float(per_topic[t]):g} judgments over its {count} pairs)"
        raise ValueError(
            f"uniform={uniform:g} leaves {len(tiny)} pairs of the universe with pi below 1e-12 of an even share "
            f"{share}, e.g. ({universe.topic_ids[t]}, "
            f"{universe.doc_ids[universe.unit_doc[u]]}) with pi={float(pi[i]):.3g}: they would practically never be "
            f"drawn, and one drawn would weigh 1/pi; give uniform > 0 (e.g. 0.1) or every pair a larger prior"
        )


def _check_share(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not 0 <= value <= 1:
        raise ValueError(f"{name}={value!r} is not a share in [0, 1]")
    return float(value)


def _prior(
    universe: Universe, prior: Any, judged: pd.DataFrame | None = None, score_precision: str = "float32"
) -> np.ndarray:
    """The prior of every unit; a judging strategy (object or method name) gives its
    :func:`~ir_incomplete.judging.strategy_prior` from the runs and the judgments so far (``judged``)."""
    from ir_incomplete.judging.priors import STRATEGY_PRIORS, is_strategy, strategy_prior

    if isinstance(prior, str):
        if prior == "ap+rbp":
            ap, rbp = universe.ap_prior, universe.rbp_prior  # exactly rounded sums: free of the units' order
            return 0.5 * ap / max(math.fsum(ap), 1e-300) + 0.5 * rbp / max(math.fsum(rbp), 1e-300)
        if prior == "ap":
            return universe.ap_prior.copy()
        if prior == "rbp-fusion":
            return universe.rbp_prior.copy()
        if prior == "rrf":
            return universe.rrf.copy()
        if prior == "uniform":
            return np.ones(universe.n_units)
        if prior not in STRATEGY_PRIORS:
            raise ValueError(
                f"prior={prior!r} is not valid; choices: {', '.join(PRIORS)}, a judging method "
                f"({', '.join(STRATEGY_PRIORS)}), a Strategy object or a table query_id, doc_id, prior"
            )
    if isinstance(prior, str) or is_strategy(prior):
        prior = strategy_prior(prior, universe.prepared, judged, score_precision=score_precision)
    frame = pd.DataFrame(prior)
    for column in ("query_id", "doc_id", "prior"):
        if column not in frame.columns:
            raise ValueError(f"prior table has no {column!r} column; give query_id, doc_id, prior")
    values = pd.to_numeric(frame["prior"], errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
    if len(bad):
        raise ValueError(f"prior row {int(bad[0])}: {frame['prior'].iloc[int(bad[0])]!r} is not a number >= 0")
    from ir_incomplete.data.columns import _ids

    unit = universe.lookup(
        universe.topic_codes(_ids(frame["query_id"], "prior query_id")), _ids(frame["doc_id"], "prior doc_id")
    )
    if len(frame) and not (unit >= 0).any():
        raise ValueError(
            f"prior table: none of its {len(frame)} pairs is in the universe (the runs' top {universe.depth}), e.g. "
            f"({frame['query_id'].iloc[0]}, {frame['doc_id'].iloc[0]}); check its query and document ids"
        )
    out = np.zeros(universe.n_units)
    out[unit[unit >= 0]] = values[unit >= 0]
    return out


def _uncertainty(universe: Universe, predictions: Any, known: np.ndarray, known_grade: np.ndarray) -> np.ndarray | None:
    """``sqrt(p (1 − p))`` per unit from labels calibrated on the judged units, or ``None`` (nothing to
    calibrate on)."""
    from ir_incomplete.estimation.control import check_scale, unit_predictions

    frame, grade, unit = unit_predictions(universe, predictions)
    bad = np.flatnonzero(~np.isfinite(grade))
    if len(bad):
        i = int(bad[0])
        raise ValueError(
            f"predictions: grade {frame['relevance'].iloc[i]!r} of ({frame['query_id'].iloc[i]}, "
            f"{frame['doc_id'].iloc[i]}) is not a number"
        )
    predicted = np.full(universe.n_units, np.nan)
    predicted[unit[unit >= 0]] = grade[unit >= 0]
    levels = np.unique(np.r_[0, known_grade])
    if len(known):
        check_scale(frame, grade, unit, levels)
    labelled = known[np.isfinite(predicted[known])]
    if len(labelled) == 0:
        return None
    rel = (known_grade[np.isfinite(predicted[known])] >= 1).astype(float)
    classes = np.unique(predicted[labelled])
    overall = (rel.sum() + 1.0) / (len(rel) + 2.0)
    p = np.full(universe.n_units, overall)
    for g in classes:
        mask = predicted[labelled] == g
        p[predicted == g] = (rel[mask].sum() + overall) / (mask.sum() + 1.0)
    return np.sqrt(p * (1.0 - p))


def sample(
    runs: Any,
    budget: int,
    *,
    depth: int = 100,
    qrels: Any = None,
    predictions: Any = None,
    seed: int = 0,
    prior: Any = "ap+rbp",
    uniform: float = 0.1,
    certain: int = 0,
    previous: Any = None,
    judgments: Any = None,
    score_precision: str = "float32",
    design: str = "poisson",
    strata: int = 10,
    allocation: str = "global",
    min_per_topic: int = MIN_PER_TOPIC,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Draw the pairs to judge (see the module docstring for the design).

    ``budget``: the expected number of new judgments (``certain`` of them the top of a priority pool);
    ``qrels``: judgments already made (one qrels or a list of them; certainty stratum, not counted;
    refused when no run answers any of its queries, e.g. ``'01'`` against ``'1'``, warned about when
    some are not answered: their judgments are left out); ``previous``/``judgments``: an earlier
    round's design and its judgments (a new round; a list of qrels is combined, as
    :func:`~ir_incomplete.estimation.read_judgments` does).
    Returns ``query_id, doc_id, pi, stratum, round`` for every pair to judge and every certainty pair,
    ``stratum`` ``judged`` (``pi = 1``, judged before this round: ``qrels`` and earlier rounds),
    ``certain`` (``pi = 1``, this round's top priority pairs) or ``sampled``, in the canonical pair order
    (query, then document); :func:`to_judge` gives the pairs to send to assessors (``certain`` and
    ``sampled``). ``attrs`` (and :func:`write_design`'s header) record ``depth``, ``runs`` (sorted),
    ``seed``, every setting and the universe (``universe_hash``, ``universe_topics``).

    ``design``: ``"poisson"`` (each pair drawn independently; the number of judgments is the budget in
    expectation) or ``"stratified"`` (``strata`` groups of pairs by ``q``, a fixed number drawn without
    replacement from each: exactly ``budget`` judgments; rows get a ``stratum_id`` column and ``attrs``
    ``strata``, ``[N_h, n_h]`` per stratum).

    ``allocation``: how the random part of the budget (``budget − certain``) is spread over the topics:
    ``"global"`` (default; one ``c`` over all open pairs, each topic's share of the judgments its share of
    ``Σ q``, the prior's mass with the uniform share) or ``"topics"`` (each topic expects ``n_t`` random
    judgments, at least ``min(min_per_topic, its open pairs)`` and beyond that Neyman's share from its
    estimated relevant documents left and their spread; ``pi`` set within each topic so that its
    ``Σ pi = n_t``: the module docstring gives the rule). ``allocation="topics"`` needs
    ``design="poisson"``. ``min_per_topic``: an integer ≥ 0 (default :data:`MIN_PER_TOPIC`, 10), used with
    ``"topics"`` only; where the minimum does not fit in the budget the topics get equal shares. Recorded
    in ``attrs`` (``allocation``, and with ``"topics"`` ``min_per_topic`` and ``topic_budgets``, ``n_t`` per
    topic).

    ``progress``: a ``tqdm`` bar on stderr over the :data:`SAMPLE_STEPS` steps (the universe, the
    judgments so far, the prior, the draw): ``None`` (default) when stderr is a terminal and the work
    takes more than 2 s, ``True`` always, ``False`` never (:mod:`ir_incomplete._progress`). The design
    does not depend on it.
    """
    from ir_incomplete._progress import check_progress, task

    with task(check_progress(progress), "sample", unit="step", total=len(SAMPLE_STEPS)):
        return _sample(
            runs,
            budget,
            depth=depth,
            qrels=qrels,
            predictions=predictions,
            seed=seed,
            prior=prior,
            uniform=uniform,
            certain=certain,
            previous=previous,
            judgments=judgments,
            score_precision=score_precision,
            design=design,
            strata=strata,
            allocation=allocation,
            min_per_topic=min_per_topic,
        )


#: the steps of :func:`sample`'s progress bar
SAMPLE_STEPS = ("universe", "judged pairs", "prior", "draw")


def _sample(
    runs: Any,
    budget: int,
    *,
    depth: int,
    qrels: Any,
    predictions: Any,
    seed: int,
    prior: Any,
    uniform: float,
    certain: int,
    previous: Any,
    judgments: Any,
    score_precision: str,
    design: str,
    strata: int,
    allocation: str,
    min_per_topic: int,
) -> pd.DataFrame:
    """The work of :func:`sample` (its arguments), in its progress task."""
    from ir_incomplete._progress import advance
    from ir_incomplete.judging.sampling import _check_seed

    budget = check_budget(budget)
    depth = check_positive_int(depth, "depth", " (ranks per run and query)")
    if isinstance(certain, bool) or not isinstance(certain, (int, np.integer)) or certain < 0:
        raise ValueError(f"certain={certain!r} is not a number of judgments >= 0")
    if certain > budget:
        raise ValueError(
            f"budget={budget} is below the certainty stratum certain={certain}: the top {certain} pairs are judged "
            f"with pi = 1 out of the budget; raise the budget or lower certain"
        )
    uniform = _check_share(uniform, "uniform")
    if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(
            f"seed={seed!r} is not an integer >= 0; a design records its seed (attrs, write_design), so give an "
            f"integer (e.g. seed=0)"
        )
    if design not in DESIGNS:
        raise ValueError(f"design={design!r} is not valid; choices: {', '.join(DESIGNS)}")
    if design == "stratified":
        strata = check_positive_int(strata, "strata", " (groups of pairs for design='stratified')")
    min_per_topic = _check_allocation(allocation, min_per_topic, design)
    rng = _check_seed(seed)
    seed = int(seed)
    universe = Universe(runs, depth, None, score_precision)
    advance(1)
    record = universe.fingerprint()  # the runs' top depth, before the certainty pairs join
    round_no = 1
    if judgments is not None and previous is None:
        raise ValueError(
            "judgments= are the judgments of an earlier round's design: give that design as previous= too "
            "(judgments you had before sampling are qrels=)"
        )
    # the pairs judged before this round: the earlier rounds' (first, so their grades win), then the qrels';
    # added to the universe in one call (adding renumbers the units)
    judged_topic: list[np.ndarray] = []
    judged_doc: list[np.ndarray] = []
    judged_grade: list[np.ndarray] = []
    if previous is not None:
        if judgments is None:
            raise ValueError("previous= needs judgments= (the judgments of the earlier round's pairs)")
        from ir_incomplete.estimation import _grades

        prev = read_design(previous)
        round_no = int(pd.to_numeric(prev.get("round", pd.Series([1])), errors="coerce").max()) + 1
        grades = _grades(judgments, prev)
        topic = universe.topic_codes(prev["query_id"])
        lost = np.flatnonzero(topic < 0)
        if len(lost):
            i = int(lost[0])
            raise ValueError(
                f"the earlier design's query {prev['query_id'].iloc[i]!r} is not answered by any run given"
            )
        judged_topic.append(topic)
        judged_doc.append(prev["doc_id"].to_numpy(dtype=object))
        judged_grade.append(grades)
    if qrels is not None:
        frame = read_judgments(qrels)
        topic = universe.topic_codes(frame["query_id"].astype(str))
        _check_qrels_topics(frame["query_id"].astype(str).to_numpy(dtype=object), topic, universe)
        keep = (topic >= 0) & (frame["relevance"].to_numpy() >= 0)
        judged_topic.append(topic[keep])
        judged_doc.append(frame["doc_id"].astype(str).to_numpy(dtype=object)[keep])
        judged_grade.append(frame["relevance"].to_numpy()[keep].astype(np.int64))
    if judged_topic:
        units = universe.add_units(np.concatenate(judged_topic), np.concatenate(judged_doc))
        known, first = np.unique(units, return_index=True)
        known_grade = np.concatenate(judged_grade)[first]
    else:
        known, known_grade = np.zeros(0, np.int64), np.zeros(0, np.int64)
    n = universe.n_units
    advance(1)
    # every unit in the canonical pair order (topic, then document id): the random numbers, the ties of the
    # priority pool and of the strata and every sum follow it, so the design depends on the set of runs only
    canon = universe.canonical_order()
    pi = np.zeros(n)
    pi[known] = 1.0
    stratum = np.full(n, "", dtype=object)
    stratum[known] = "judged"
    open_units = canon[pi[canon] < 1.0]
    if certain > len(open_units):
        raise ValueError(
            f"certain={certain} is more than the {len(open_units)} pairs of the universe not judged already (the "
            f"runs' top {depth}, less the judged pairs); lower certain"
        )
    if budget > len(open_units):
        warnings.warn(
            f"budget={budget} is more than the {len(open_units)} pairs of the universe not judged already (the runs' "
            f"top {depth}, less the judged pairs): every pair is judged (pi = 1), {len(open_units)} judgments expected",
            stacklevel=3,
        )
    if certain:
        priority = universe.rank_sum(1.0 / (1.0 + (np.arange(depth) + 1.0)))
        top = open_units[np.argsort(-priority[open_units], kind="stable")[:certain]]
        pi[top] = 1.0
        stratum[top] = "certain"
        open_units = canon[pi[canon] < 1.0]
    rest = budget - certain
    if rest == 0 and len(open_units):
        raise ValueError(
            f"certain={certain} is the whole budget={budget}: the {len(open_units)} other pairs of the universe (the "
            f"runs' top {depth}, less the judged pairs) would get pi = 0, never be drawn and count as nonrelevant in "
            f"every estimate, with intervals of width 0; raise the budget above certain (the part beyond it is "
            f"sampled) or lower certain"
        )
    judged = universe.frame(known, relevance=known_grade) if len(known) else None
    weight = _prior(universe, prior, judged, score_precision)
    if predictions is not None:
        h = _uncertainty(universe, predictions, known, known_grade)
        if h is not None:
            weight = weight * h
        else:
            warnings.warn(
                "predictions= are not used: no judged pair of the universe has a predicted grade to calibrate them on "
                "(give qrels= or previous= with judgments=)",
                stacklevel=3,
            )
    advance(1)
    q = np.zeros(n)
    per_topic = None  # n_t of allocation="topics"
    if len(open_units):
        w = weight[open_units]
        if allocation == "topics":
            # q within each topic: the prior normalised in the topic, with the uniform share of the topic's
            # open pairs; a topic whose prior vanishes is uniform
            topic = universe.unit_topic[open_units]
            topics = len(universe.topic_ids)
            mass = np.bincount(topic, weights=w, minlength=topics)
            count = np.bincount(topic, minlength=topics)
            spread = (1.0 - uniform) * w / np.where(mass > 0, mass, 1.0)[topic] + uniform / count[topic]
            q_open = np.where(mass[topic] > 0, spread, 1.0 / count[topic])
        else:
            total = w.sum()
            if total > 0:
                q_open = (1.0 - uniform) * w / total + uniform / len(w)
            else:
                q_open = np.full(len(w), 1.0 / len(w))
        never = np.flatnonzero(q_open <= 0)
        if len(never) and rest > 0:
            u = open_units[never[0]]
            raise ValueError(
                f"uniform={uniform:g} leaves {len(never)} pairs of the universe with prior 0, e.g. "
                f"({universe.topic_ids[universe.unit_topic[u]]}, {universe.doc_ids[universe.unit_doc[u]]}): they could "
                f"never be drawn (pi = 0) and every estimate would count them as nonrelevant; give uniform > 0 or "
                f"every pair a prior > 0"
            )
        q[open_units] = q_open
        if allocation == "topics":
            per_topic = topic_budgets(universe, open_units, q_open, known, known_grade, rest, min_per_topic)
            pi[open_units] = inclusion_probabilities(q_open, per_topic, universe.unit_topic[open_units])
        else:
            pi[open_units] = inclusion_probabilities(q_open, rest)
        _refuse_tiny(pi[open_units], open_units, rest, uniform, universe, per_topic)
    if len(known):
        # a design on top of judged pairs deals its own random numbers: with the stream of the seed alone,
        # a new round drawn with the seed of the round its judged pairs came from would reuse each pair's
        # number (u >= pi_1 for every pair left), draw a pair with probability (pi - pi_1)/(1 - pi_1), not pi
        rng = np.random.default_rng(np.random.SeedSequence([seed, round_no, len(known)]))
    draw = np.empty(n)
    draw[canon] = rng.random(n)
    if design == "stratified":
        stratum_id = np.full(n, -1, dtype=np.int64)
        of, size_h, n_h = _strata_of(q[open_units], pi[open_units], rest, strata)
        stratum_id[open_units] = of
        pi[open_units] = (n_h / np.maximum(size_h, 1))[of]
        # the n_h pairs of smallest uniform draw in each stratum: a simple random sample without replacement
        order = np.lexsort((draw[open_units], of))
        starts = np.r_[0, np.cumsum(size_h)[:-1]]
        within = np.arange(len(order)) - starts[of[order]]
        taken = np.zeros(n, dtype=bool)
        taken[open_units[order[within < n_h[of[order]]]]] = True
        chosen = np.flatnonzero((stratum != "") | taken)
    else:
        chosen = np.flatnonzero((stratum != "") | (draw < pi))
    stratum[chosen[stratum[chosen] == ""]] = "sampled"
    kept = np.zeros(n, dtype=bool)
    kept[chosen] = True
    chosen = canon[kept[canon]]  # in the canonical order: by query, then document
    out = universe.frame(chosen, pi=pi[chosen], stratum=stratum[chosen])
    out["round"] = round_no
    if design == "stratified":
        out["stratum_id"] = stratum_id[chosen]
    if previous is not None:
        was = pd.MultiIndex.from_arrays([prev["query_id"], prev["doc_id"]])
        old = pd.MultiIndex.from_arrays([out["query_id"], out["doc_id"]]).isin(was)
        if "round" in prev.columns:
            rounds = pd.Series(prev["round"].to_numpy(), index=was)
            out.loc[old, "round"] = rounds.reindex(
                pd.MultiIndex.from_arrays([out["query_id"][old], out["doc_id"][old]])
            ).to_numpy()
    out.attrs = {
        "design": "poisson",
        "depth": depth,
        "seed": seed,
        "budget": budget,
        "certain": int(certain),
        "prior": prior if isinstance(prior, str) else str(getattr(prior, "name", "table")),
        "uniform": uniform,
        "allocation": allocation,
        "round": round_no,
        "expected_judgments": float(pi[open_units].sum()) + int(certain),
        "universe": int(n),
        "runs": sorted(universe.run_names),
        "topics": [str(t) for t in universe.topic_ids],
        "score_precision": score_precision,
        # what shaped pi beyond the prior: certainty pairs from qrels and earlier rounds, labels
        "certainty_pairs": int(len(known)),
        "previous_round": previous is not None,
        "predictions": predictions is not None,
        # the runs' top depth the design was drawn from, which estimate checks the runs given against
        **record,
    }
    if allocation == "topics":
        out.attrs["min_per_topic"] = min_per_topic
        # each topic's expected random judgments n_t (the topics with open pairs)
        shares = np.zeros(0) if per_topic is None else per_topic
        out.attrs["topic_budgets"] = {str(universe.topic_ids[t]): float(shares[t]) for t in np.flatnonzero(shares > 0)}
    if design == "stratified":
        out.attrs["design"] = "stratified"
        out.attrs["strata"] = [[int(a), int(b)] for a, b in zip(size_h, n_h, strict=True)]
        out.attrs["expected_judgments"] = int(n_h.sum()) + int(certain)
    return out
