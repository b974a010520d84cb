"""How :func:`ir_incomplete.judging.sample` spreads the random part of the budget over topics with
``allocation="topics"``: a minimum per topic and Neyman shares of the rest (the rule is in
:mod:`ir_incomplete.judging.designs`' docstring, "Allocation over topics")."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ir_incomplete.estimation import Universe
from ir_incomplete.estimation.universe import ALLOCATIONS, MIN_PER_TOPIC

__all__ = ["split_budget", "topic_budgets", "neyman_weights", "RATE_PRIOR", "TYPICAL_AP", "TOP"]


def split_budget(total: float, weight: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Real shares ``n_t = clip(λ · weight_t, low_t, high_t)`` with ``Σ n_t = total``, ``λ ≥ 0`` (``0 ≤ low ≤
    high``, ``weight ≥ 0``, ``Σ low ≤ total ≤ Σ high``): the share of each group proportional to its weight
    where that lies between its bounds. ``Σ n_t`` is piecewise linear in ``λ``; ``λ`` is found exactly on the
    segment where it reaches ``total``. When the groups of weight > 0 at their ``high`` and the others at
    their ``low`` still fall short, the rest goes to the groups of weight 0 in equal shares (``λ`` with
    weight 1 for them, clipped the same way)."""
    weight = np.asarray(weight, dtype=float)
    low = np.asarray(low, dtype=float)
    high = np.asarray(high, dtype=float)
    pos = weight > 0
    most = float(high[pos].sum() + low[~pos].sum())
    if total >= most:
        out = np.where(pos, high, low)
        if total > most and (~pos).any():
            out[~pos] = split_budget(total - float(high[pos].sum()), np.ones(int((~pos).sum())), low[~pos], high[~pos])
        return out
    # λ at which each group's share starts to grow (low/w) and stops (high/w); the slope of Σ n_t in λ
    # rises by w at the first and falls by w at the second
    w = weight[pos]
    at = np.r_[low[pos] / w, high[pos] / w]
    step = np.r_[w, -w]
    order = np.argsort(at, kind="stable")
    at, step = at[order], step[order]
    slope = np.cumsum(step)  # the slope right after each event
    level = float(low.sum()) + np.r_[0.0, np.cumsum(slope[:-1] * np.diff(at))]  # Σ n_t at each event
    k = int(np.searchsorted(level, total, side="right")) - 1  # the last event whose level is ≤ total
    k = max(k, 0)
    lam = at[k] + ((total - level[k]) / slope[k] if slope[k] > 0 else 0.0)
    return np.where(pos, np.clip(lam * np.where(pos, weight, 0.0), low, high), low)


#: the shape of the Gamma prior that shrinks each topic's relevant documents per unit of AP-prior mass
#: toward the pooled rate in the Neyman allocation (one pseudo relevant document)
RATE_PRIOR = 1.0
#: the AP that scales a topic's relative error of R in the Neyman allocation (∂AP/∂R = −AP/R)
TYPICAL_AP = 0.25
#: the ranks of nDCG@10, whose per-run discounts enter the Neyman allocation
TOP = 10


def _check_allocation(allocation: Any, min_per_topic: Any, design: str) -> int:
    """The checked ``min_per_topic`` (``ValueError`` for a bad ``allocation``, ``min_per_topic`` or a
    combination :func:`sample` does not draw)."""
    if not isinstance(allocation, str) or allocation not in ALLOCATIONS:
        raise ValueError(f"allocation={allocation!r} is not valid; choices: {', '.join(ALLOCATIONS)}")
    if (
        isinstance(min_per_topic, (bool, np.bool_))
        or not isinstance(min_per_topic, (int, np.integer))
        or min_per_topic < 0
    ):
        raise ValueError(
            f"min_per_topic={min_per_topic!r} is not valid; expected an integer >= 0 (the random judgments each "
            f"topic expects at least with allocation='topics', e.g. {MIN_PER_TOPIC})"
        )
    if allocation == "topics" and design != "poisson":
        raise ValueError(
            f"allocation='topics' is not drawn with design={design!r}: it sets pi topic by topic in the Poisson "
            f"design; use design='poisson' with allocation='topics', or design={design!r} with allocation='global'"
        )
    return int(min_per_topic)


def topic_budgets(
    universe: Universe,
    open_units: np.ndarray,
    q_within: np.ndarray,
    known: np.ndarray,
    known_grade: np.ndarray,
    rest: float,
    min_per_topic: int,
) -> np.ndarray:
    """``n_t``, the random judgments each topic expects with ``allocation="topics"``: one real number per
    topic of ``universe.topic_ids``, ``Σ n_t = min(rest, N)`` (``N`` the open pairs); the rule is the module
    docstring's.

    ``open_units``: the pairs outside the certainty stratum; ``q_within``: their selection weights, summing
    to 1 within each topic; ``known``/``known_grade``: the pairs judged already and their grades."""
    topics = len(universe.topic_ids)
    topic = universe.unit_topic[open_units]
    size = np.bincount(topic, minlength=topics).astype(float)
    if rest >= size.sum():
        return size
    low = np.minimum(float(min_per_topic), size)
    if low.sum() >= rest:  # the minimum does not fit: equal shares, none above its topic's minimum
        return split_budget(rest, (size > 0).astype(float), np.zeros(topics), low)
    return split_budget(rest, neyman_weights(universe, open_units, q_within, known, known_grade), low, size)


def neyman_weights(
    universe: Universe, open_units: np.ndarray, q_within: np.ndarray, known: np.ndarray, known_grade: np.ndarray
) -> np.ndarray:
    """``sqrt(V_t)`` per topic, the weight of :func:`topic_budgets`' Neyman share (module docstring; 0 for a
    topic without open pairs)."""
    topics = len(universe.topic_ids)
    topic = universe.unit_topic[open_units]
    f = universe.ap_prior
    judged_topic = universe.unit_topic[known]
    relevant = np.bincount(judged_topic, weights=(known_grade >= 1).astype(float), minlength=topics)
    judged_mass = np.bincount(judged_topic, weights=f[known], minlength=topics)
    if relevant.sum() > 0 and judged_mass.sum() > 0:
        pooled = relevant.sum() / judged_mass.sum()
        rate = (relevant + RATE_PRIOR) / (judged_mass + RATE_PRIOR / pooled)
    else:  # nothing to learn the rate from: a pair every run ranks first is relevant
        rate = np.full(topics, 1.0 / max(float(f[open_units].max()), 1e-300))
    p = np.minimum(1.0, rate[topic] * f[open_units])  # each open pair's relevance
    r_hat = relevant + np.bincount(topic, weights=p, minlength=topics)
    # the ideal DCG@10 of r_hat relevant documents (a fraction of one at the last)
    ideal = np.zeros(topics)
    for i in range(TOP):
        ideal += np.clip(r_hat - i, 0.0, 1.0) / math.log2(i + 2.0)
    ranks = np.arange(universe.depth)
    discount = np.where(ranks < TOP, 1.0 / np.log2(ranks + 2.0), 0.0)
    top = universe.rank_sum(discount**2)[open_units] / max(len(universe.universe_runs), 1)
    scale = (TYPICAL_AP / np.maximum(r_hat, 1e-300)) ** 2
    per_pair = (p / q_within) * (scale[topic] + top / np.maximum(ideal, 1e-300)[topic] ** 2)
    return np.sqrt(np.bincount(topic, weights=per_pair, minlength=topics))
