"""Pools: which documents to judge, from the runs (static pools) or as judgments come in (adaptive).

Static pools (:func:`pool`, and the same orders as :class:`~ir_incomplete.judging.strategy.Strategy`
objects for :func:`~ir_incomplete.judging.simulate`):

* ``depth`` (:class:`DepthPool`): the union of every run's top-k documents per topic (TREC pooling,
  Spärck Jones & van Rijsbergen 1975); optionally only some runs contribute;
* ``budget`` (:class:`BudgetPool`): a fixed number of documents per topic, filled round-robin in rank
  order (rank 1 of every run, then rank 2, …; within a rank, runs in the order given);
* ``rrf`` (:class:`RRFPool`): documents by reciprocal-rank fusion over all runs, Σ_runs 1/(k + rank);
* ``rbp`` (:class:`RBPPool`): documents by summed rank-biased-precision weight, Σ_runs (1 − p)·p^(rank−1)
  (Moffat, Webber & Zobel, SIGIR 2007).

Adaptive methods, which need the judgments as they go (rounds of ``start``/``next_batch``/``update``):

* ``movetofront`` (:class:`MoveToFront`): Cormack, Palmer & Clarke (SIGIR 1998);
* ``bandit`` (:class:`MaxMeanBandit`): the maximum-mean Bayesian bandit "MM" of Losada, Parapar &
  Barreiro (IP&M 2017).

Ranks are 1-based in every formula; each run is ordered as trec_eval orders it (score descending,
compared as float32 by default, ties by document id descending), whatever its rank column says.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ir_incomplete.judging._candidates import (
    Candidates,
    JudgeState,
    _judgment_frame,
    check_budget,
    check_positive_int,
)

__all__ = [
    "POOL_METHODS",
    "ADAPTIVE_METHODS",
    "pool",
    "DepthPool",
    "BudgetPool",
    "RRFPool",
    "RBPPool",
    "MoveToFront",
    "MaxMeanBandit",
    "make_strategy",
    "write_pool",
    "read_pool",
    "pool_lines",
    "POOL_FORMATS",
]

#: methods of :func:`pool` (static pools)
POOL_METHODS = ("depth", "budget", "rrf", "rbp")
#: adaptive methods (strategies only: they need judgments as they go)
ADAPTIVE_METHODS = ("movetofront", "bandit")
#: how rrf and rbp spread a total budget over topics
ACROSS_CHOICES = ("priority", "round_robin")


def _check_number(value: object, name: str, low: float, high: float, low_open: bool, high_open: bool) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}={value!r} is not a number")
    v = float(value)
    lo_ok = v > low if low_open else v >= low
    hi_ok = v < high if high_open else v <= high
    if not (np.isfinite(v) or high == np.inf) or not (lo_ok and hi_ok):
        lb = "(" if low_open else "["
        hb = ")" if high_open else "]"
        raise ValueError(f"{name}={value!r} is out of range; expected a number in {lb}{low}, {high}{hb}")
    return v


def _check_across(across: str) -> str:
    if across not in ACROSS_CHOICES:
        raise ValueError(f"across={across!r} is not valid; choices: {', '.join(ACROSS_CHOICES)}")
    return across


# ---------------------------------------------------------------------------------------------------
# static orders
# ---------------------------------------------------------------------------------------------------
class _StaticState(JudgeState):
    """Judging state of a static order: the pairs in judging order and how far the order was walked."""

    def __init__(self, candidates: Candidates, qrels: Any, order: np.ndarray, priority: np.ndarray) -> None:
        super().__init__(candidates, qrels)
        self.order = order
        self.priority = priority
        self.position = 0


class _StaticPool:
    """A static judging order as a strategy: ``next_batch`` walks the order, skipping judged pairs;
    ``update`` only records the judgments (the order does not depend on them)."""

    name = "static"

    def _order(self, candidates: Candidates) -> tuple[np.ndarray, np.ndarray]:
        """``(pairs in judging order, their priority)``; pairs left out are never judged."""
        raise NotImplementedError

    def start(self, runs: Any, qrels: Any = None) -> _StaticState:
        """The judging state over ``runs`` (anything :func:`ir_incomplete.evaluate` accepts, or
        :class:`~ir_incomplete.judging.Candidates`) with the judgments already made (``qrels``, may be
        ``None``)."""
        candidates = runs if isinstance(runs, Candidates) else Candidates(runs)
        order, priority = self._order(candidates)
        return _StaticState(candidates, qrels, order, priority)

    def next_batch(self, state: _StaticState, n: int) -> pd.DataFrame:
        """The next at most ``n`` pairs of the order that are neither judged nor handed out, with their
        ``priority``; fewer (or none) when the order is exhausted."""
        n = check_budget(n, "n")
        taken: list[np.ndarray] = []
        got = 0
        available = state.available
        while got < n and state.position < len(state.order):
            chunk = state.order[state.position : state.position + max(4 * (n - got), 1024)]
            free = chunk[available[chunk]]
            need = n - got
            if len(free) > need:
                last = free[need - 1]
                state.position += int(np.flatnonzero(chunk == last)[0]) + 1
                free = free[:need]
            else:
                state.position += len(chunk)
            taken.append(free)
            got += len(free)
        pairs = np.concatenate(taken) if taken else np.zeros(0, dtype=np.int64)
        state.issued[pairs] = True
        np.add.at(state.n_issued, state.candidates.pair_topic[pairs], 1)
        return state.candidates.frame(pairs, priority=state.priority[pairs])

    def update(self, state: _StaticState, judgments: pd.DataFrame) -> None:
        """Record ``judgments`` (``query_id/doc_id/relevance``, grades ≥ 0)."""
        state.record(_judgment_frame(judgments, "judgments"))

    def _prior_values(self, priority: np.ndarray) -> np.ndarray:
        """The design prior of pairs of the order from their ``priority`` (a score: as it is)."""
        return priority

    def design_prior(self, state: _StaticState) -> np.ndarray:
        """Per candidate pair, the weight :func:`ir_incomplete.judging.sample` draws it with (``prior=``):
        from the pool's priority for the pairs of its order (see the class), 0 for pairs it never
        judges and for pairs judged already."""
        out = np.zeros(state.candidates.n_pairs)
        out[state.order] = self._prior_values(state.priority[state.order])
        out[~state.available] = 0.0
        return out


def _ordered(keys: list[np.ndarray], pairs: np.ndarray) -> np.ndarray:
    """``pairs`` sorted by ``keys`` (most significant first), ties by pair number (topic, document id)."""
    if len(pairs) == 0:
        return pairs
    return pairs[np.lexsort(tuple([pairs, *[k[pairs] for k in reversed(keys)]]))]


class DepthPool(_StaticPool):
    """Depth-k pooling: per topic, the union of the top ``depth`` documents of every contributing run.

    As a judging order: all documents at best rank 1, then those first reached at rank 2, …; within a
    rank, topics in natural order, then document ids. After as many judgments as the depth-k pool holds,
    exactly the depth-k pool is judged. ``depth=None``: the whole rankings. ``pool_runs``: the runs that
    contribute (all by default). ``priority`` = the best rank (1-based) any contributing run gives.
    Design prior (:func:`~ir_incomplete.judging.strategy_prior`): ``1 / priority`` within the pool, 0 outside.
    """

    name = "depth"

    def __init__(self, depth: int | None = None, pool_runs: Iterable[str] | None = None) -> None:
        self.depth = None if depth is None else check_positive_int(depth, "depth", " (documents per run)")
        self.pool_runs = None if pool_runs is None else [str(r) for r in pool_runs]

    def _order(self, candidates: Candidates) -> tuple[np.ndarray, np.ndarray]:
        best = candidates.best_rank(candidates.run_mask(self.pool_runs))
        keep = best >= 0
        if self.depth is not None:
            keep &= best < self.depth
        pairs = _ordered([best, candidates.pair_topic], np.flatnonzero(keep))
        return pairs, (best + 1).astype(np.float64)

    def _prior_values(self, priority: np.ndarray) -> np.ndarray:
        return 1.0 / priority  # design prior: 1 / best rank


class BudgetPool(_StaticPool):
    """A fixed number of documents per topic, filled round-robin in rank order.

    Per topic the documents are visited rank by rank: rank 1 of every contributing run (runs in the
    order given), then rank 2, …; a document already visited is skipped. The first ``budget`` distinct
    documents form the topic's pool (all of them when fewer). As a judging order: the first document of
    every topic, then the second, … (``priority`` = the document's 1-based place in its topic's order).
    Design prior (:func:`~ir_incomplete.judging.strategy_prior`): ``1 / priority`` within the pool, 0 outside.
    """

    name = "budget"

    def __init__(self, budget: int | None = None, pool_runs: Iterable[str] | None = None) -> None:
        self.budget = None if budget is None else check_budget(budget, "budget")
        self.pool_runs = None if pool_runs is None else [str(r) for r in pool_runs]

    def _order(self, candidates: Candidates) -> tuple[np.ndarray, np.ndarray]:
        rows = np.flatnonzero(candidates.run_mask(self.pool_runs))
        # visiting order within a topic: rank, then run
        visit = rows[np.lexsort((candidates.row_run[rows], candidates.row_rank[rows], candidates.row_topic[rows]))]
        pair = candidates.row_pair[visit]
        _, first = np.unique(pair, return_index=True)
        first_rows = np.sort(first)  # first visit of each pair, in visiting order (topic-major)
        pairs = pair[first_rows]
        topic = candidates.pair_topic[pairs]
        start = np.concatenate(([True], topic[1:] != topic[:-1])) if len(topic) else np.zeros(0, bool)
        begin = np.maximum.accumulate(np.where(start, np.arange(len(topic)), 0)) if len(topic) else topic
        place = np.full(candidates.n_pairs, -1, dtype=np.int64)
        place[pairs] = np.arange(len(pairs)) - begin
        keep = place >= 0
        if self.budget is not None:
            keep &= place < self.budget
        ordered = _ordered([place, candidates.pair_topic], np.flatnonzero(keep))
        return ordered, (place + 1).astype(np.float64)

    def _prior_values(self, priority: np.ndarray) -> np.ndarray:
        return 1.0 / priority  # design prior: 1 / place in the topic's order


class _FusionPool(_StaticPool):
    """Documents by a fused score Σ_runs w(rank); judged in descending score, either across topics
    (``across="priority"``: one global order, so topics whose documents the runs agree on get more) or
    topic by topic in turns (``"round_robin"``: the best document of every topic, then the second, …).
    ``budget``: total judgments (``per_topic=True``: judgments per topic). Design prior
    (:func:`~ir_incomplete.judging.strategy_prior`): the fused score within the pool (the budget's cut),
    0 outside."""

    def __init__(
        self,
        budget: int | None = None,
        *,
        per_topic: bool = False,
        across: str = "priority",
        pool_runs: Iterable[str] | None = None,
    ) -> None:
        self.budget = None if budget is None else check_budget(budget, "budget")
        if not isinstance(per_topic, (bool, np.bool_)):
            raise ValueError(f"per_topic={per_topic!r} is not valid; expected True or False")
        self.per_topic = bool(per_topic)
        self.across = _check_across(across)
        self.pool_runs = None if pool_runs is None else [str(r) for r in pool_runs]

    def _weights(self, rank: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def scores(self, candidates: Candidates) -> np.ndarray:
        """The fused score of every pair (0 for pairs no contributing run retrieves)."""
        rows = candidates.run_mask(self.pool_runs)
        return candidates.pair_sum(self._weights(candidates.row_rank[rows] + 1), rows)

    def _order(self, candidates: Candidates) -> tuple[np.ndarray, np.ndarray]:
        score = self.scores(candidates)
        rows = candidates.run_mask(self.pool_runs)
        pooled = np.zeros(candidates.n_pairs, dtype=bool)
        pooled[candidates.row_pair[rows]] = True
        pairs = np.flatnonzero(pooled)
        by_topic = _ordered([candidates.pair_topic, -score], pairs)
        topic = candidates.pair_topic[by_topic]
        start = np.concatenate(([True], topic[1:] != topic[:-1])) if len(topic) else np.zeros(0, bool)
        begin = np.maximum.accumulate(np.where(start, np.arange(len(topic)), 0)) if len(topic) else topic
        place = np.full(candidates.n_pairs, -1, dtype=np.int64)
        place[by_topic] = np.arange(len(by_topic)) - begin
        if self.per_topic or self.across == "round_robin":
            order = _ordered([place, candidates.pair_topic], pairs)
        else:
            order = _ordered([-score], pairs)
        if self.budget is not None:
            if self.per_topic:
                order = order[place[order] < self.budget]
            else:
                order = order[: self.budget]
        return order, score


class RRFPool(_FusionPool):
    """Reciprocal-rank-fusion priority: score(d) = Σ_runs 1/(k + rank_run(d)) (Cormack, Clarke & Büttcher,
    SIGIR 2009, used as a judging order), ranks 1-based, a run that does not retrieve d adds nothing.
    ``k=2`` is the best on TREC-COVID round 1 (see the manual, docs/measured.rst). Ties: topic, then document id."""

    name = "rrf"

    def __init__(
        self,
        budget: int | None = None,
        *,
        k: float = 2.0,
        per_topic: bool = False,
        across: str = "priority",
        pool_runs: Iterable[str] | None = None,
    ) -> None:
        super().__init__(budget, per_topic=per_topic, across=across, pool_runs=pool_runs)
        self.k = _check_number(k, "k", 0.0, np.inf, False, True)

    def _weights(self, rank: np.ndarray) -> np.ndarray:
        return 1.0 / (self.k + rank)


class RBPPool(_FusionPool):
    """RBP-weighted priority (Moffat, Webber & Zobel, "Strategic system comparisons via targeted relevance
    judgments", SIGIR 2007): each run gives the document at rank i its rank-biased-precision weight
    (1 − p)·p^(i−1); score(d) = Σ_runs of these weights, the expected contribution of d to the runs'
    RBP. Documents are judged in decreasing score (the static, summed-weight ordering of the paper; its
    adaptive variants, which re-weight by the runs' residuals as judgments arrive, are not implemented).
    ``p=0.8`` (0 < p < 1). Ties: topic, then document id."""

    name = "rbp"

    def __init__(
        self,
        budget: int | None = None,
        *,
        p: float = 0.8,
        per_topic: bool = False,
        across: str = "priority",
        pool_runs: Iterable[str] | None = None,
    ) -> None:
        super().__init__(budget, per_topic=per_topic, across=across, pool_runs=pool_runs)
        self.p = _check_number(p, "p", 0.0, 1.0, True, True)

    def _weights(self, rank: np.ndarray) -> np.ndarray:
        return (1.0 - self.p) * np.power(self.p, rank - 1.0)


# ---------------------------------------------------------------------------------------------------
# adaptive methods: arms = runs, per topic
# ---------------------------------------------------------------------------------------------------
class _ArmState(JudgeState):
    """Per (run, topic): how far the run's ranking was walked (``pointer``), the documents drawn from it
    that were judged relevant / not relevant, and those drawn and not judged yet (``pending``)."""

    def __init__(self, candidates: Candidates, qrels: Any) -> None:
        super().__init__(candidates, qrels)
        shape = (candidates.n_runs, candidates.n_topics)
        self.pointer = np.zeros(shape, dtype=np.int64)
        self.relevant = np.zeros(shape, dtype=np.int64)
        self.nonrelevant = np.zeros(shape, dtype=np.int64)
        self.pending = np.zeros(shape, dtype=np.int64)
        self.drawn_by = np.full(candidates.n_pairs, -1, dtype=np.int64)
        self.exhausted = np.zeros(candidates.n_topics, dtype=bool)


class _ArmPool:
    """An adaptive method whose arms are the runs, one game per topic.

    ``next_batch(state, n)`` spreads ``n`` over the topics (each draw goes to a topic with the fewest
    documents handed out so far, ties by topic order), and in each topic draws from the run with the
    highest :meth:`scores` (ties: the run given first): the run's next document that is neither judged
    nor handed out (judged documents are skipped at no cost). A document handed out and not judged yet
    counts as *pending* in the scores; ``update`` turns pending documents into relevant (grade ≥ ``rel``)
    or not relevant ones of the run that drew them. With one document per topic per round this is the
    sequential method; with larger rounds the runs' scores change only when the judgments come back.
    """

    name = "arms"

    def __init__(self, rel: int = 1, pool_runs: Iterable[str] | None = None) -> None:
        self.rel = check_positive_int(rel, "rel", " (the smallest relevant grade)")
        self.pool_runs = None if pool_runs is None else [str(r) for r in pool_runs]

    def scores(self, state: _ArmState) -> np.ndarray:
        """``[runs × topics]`` score of each arm (higher = drawn first)."""
        raise NotImplementedError

    def start(self, runs: Any, qrels: Any = None) -> _ArmState:
        """The judging state over ``runs`` with the judgments already made (``qrels``, may be ``None``)."""
        candidates = runs if isinstance(runs, Candidates) else Candidates(runs)
        state = _ArmState(candidates, qrels)
        state.allowed = np.zeros(candidates.n_runs, dtype=bool)  # type: ignore[attr-defined]
        rows = candidates.run_mask(self.pool_runs)
        state.allowed[np.unique(candidates.row_run[rows])] = True  # type: ignore[attr-defined]
        return state

    def next_batch(self, state: _ArmState, n: int) -> pd.DataFrame:
        """At most ``n`` pairs to judge next (fewer when every run is exhausted), in the order drawn,
        with ``priority`` = the drawing arm's score (higher first within a round)."""
        n = check_budget(n, "n")
        c = state.candidates
        out_pairs: list[np.ndarray] = []
        out_scores: list[np.ndarray] = []
        remaining = n
        while remaining > 0:
            live = np.flatnonzero(~state.exhausted)
            if len(live) == 0:
                break
            live = live[np.argsort(state.n_issued[live], kind="stable")][:remaining]
            pairs, scores = self._draw(state, live)
            ok = pairs >= 0
            state.exhausted[live[~ok]] = True
            out_pairs.append(pairs[ok])
            out_scores.append(scores[ok])
            remaining -= int(ok.sum())
        pairs = np.concatenate(out_pairs) if out_pairs else np.zeros(0, dtype=np.int64)
        scores = np.concatenate(out_scores) if out_scores else np.zeros(0)
        return c.frame(pairs, priority=scores)

    def _draw(self, state: _ArmState, topics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One document for each topic of ``topics`` (``-1`` where every run is exhausted)."""
        c = state.candidates
        result = np.full(len(topics), -1, dtype=np.int64)
        result_score = np.zeros(len(topics))
        available = state.available
        allowed = state.allowed  # type: ignore[attr-defined]
        todo = np.arange(len(topics))
        while len(todo):
            t = topics[todo]
            score = self.scores(state)[:, t].astype(np.float64)  # runs × these topics
            score[~((state.pointer[:, t] < c.seg_len[:, t]) & allowed[:, None])] = -np.inf
            arm = np.argmax(score, axis=0)
            best = score[arm, np.arange(len(t))]
            has = np.isfinite(best)
            todo, t, arm, best = todo[has], t[has], arm[has], best[has]
            rechoose = []
            # walk each chosen run past documents judged or handed out already
            while len(todo):
                end = state.pointer[arm, t] >= c.seg_len[arm, t]
                at = np.minimum(c.seg_start[arm, t] + state.pointer[arm, t], len(c.row_pair) - 1)
                pair = c.row_pair[at]
                free = ~end & available[pair]
                f = np.flatnonzero(free)
                if len(f):
                    p, a, tt = pair[f], arm[f], t[f]
                    result[todo[f]], result_score[todo[f]] = p, best[f]
                    state.pointer[a, tt] += 1
                    state.pending[a, tt] += 1
                    state.drawn_by[p] = a
                    state.issued[p] = True
                    available[p] = False
                    np.add.at(state.n_issued, tt, 1)
                rechoose.append(todo[end])  # this run ran out: choose another run for the topic
                skip = ~end & ~free
                state.pointer[arm[skip], t[skip]] += 1
                todo, t, arm, best = todo[skip], t[skip], arm[skip], best[skip]
            todo = np.concatenate(rechoose) if rechoose else np.zeros(0, dtype=np.int64)
        return result, result_score

    def arm_weights(self, relevant: np.ndarray, nonrelevant: np.ndarray) -> np.ndarray:
        """``[runs × topics]`` positive weight of each arm after ``relevant``/``nonrelevant`` documents
        (what :meth:`design_prior` spreads over the arm's documents)."""
        raise NotImplementedError

    def design_prior(self, state: _ArmState) -> np.ndarray:
        """Per candidate pair, the weight :func:`ir_incomplete.judging.sample` draws it with (``prior=``):
        ``Σ_s w_sq / r'_s(d)`` over the contributing runs ``s`` that retrieve ``d`` unjudged, ``w_sq`` the
        arm's weight (:meth:`arm_weights`) and ``r'_s(d)`` the 1-based place of ``d`` among the unjudged
        documents of run ``s`` for topic ``q`` (the arm hands out its unjudged documents in that order).
        The arms count the judgments known to ``state`` of every document the run retrieves, initial
        qrels included (in a design every earlier round's pair was asked for); without judgments every
        arm has the weight it starts with. Judged pairs get 0."""
        c = state.candidates
        judged_row = state.grade[c.row_pair] >= 0
        rel_row = judged_row & (state.grade[c.row_pair] >= self.rel)
        size = c.n_runs * c.n_topics
        relevant = np.bincount(c.row_ranking, weights=rel_row, minlength=size).reshape(c.n_runs, c.n_topics)
        nonrelevant = np.bincount(c.row_ranking, weights=judged_row & ~rel_row, minlength=size).reshape(
            c.n_runs, c.n_topics
        )
        weight = np.asarray(self.arm_weights(relevant, nonrelevant), dtype=np.float64)
        open_row = ~judged_row
        done = np.cumsum(open_row)
        first = c.seg_start[c.row_run, c.row_topic]
        place = done - (done[first] - open_row[first])  # 1-based among the ranking's unjudged rows
        use = open_row & state.allowed[c.row_run]  # type: ignore[attr-defined]
        values = weight[c.row_run[use], c.row_topic[use]] / place[use]
        return c.pair_sum(values, use)

    def update(self, state: _ArmState, judgments: pd.DataFrame) -> None:
        """Record ``judgments`` (``query_id/doc_id/relevance``, grades ≥ 0) and credit the runs that drew them."""
        pairs, grades = state.record(_judgment_frame(judgments, "judgments"))
        drawn = state.drawn_by[pairs]
        mine = drawn >= 0
        p, g, r = pairs[mine], grades[mine], drawn[mine]
        t = state.candidates.pair_topic[p]
        np.add.at(state.pending, (r, t), -1)
        np.add.at(state.relevant, (r[g >= self.rel], t[g >= self.rel]), 1)
        np.add.at(state.nonrelevant, (r[g < self.rel], t[g < self.rel]), 1)
        state.drawn_by[p] = -1


class MoveToFront(_ArmPool):
    """MoveToFront pooling (Cormack, Palmer & Clarke, "Efficient construction of large test collections",
    SIGIR 1998), local (per topic) form.

    Every run has a priority, initially the same for all. The run with the highest priority (ties: the
    run given first) hands out its next unjudged document; while its documents are relevant it keeps
    the turn; each document judged not relevant (grade < ``rel``) lowers its priority by one, so the
    turn passes to the next run of highest priority and, once every run has missed, returns to the
    first. Here priority = −(not relevant + pending documents drawn from the run): a document handed
    out and not yet judged counts as a miss until its judgment arrives, so a round of several documents
    per topic visits the runs in turn instead of emptying one run. With one document per topic per round
    this is exactly the sequential method. Judgments the method did not ask for (initial qrels) do not
    change priorities; judged documents are skipped at no cost. Design prior
    (:func:`~ir_incomplete.judging.strategy_prior`): :meth:`~_ArmPool.design_prior` with arm weight
    ``1 / (1 + not relevant)``.
    """

    name = "movetofront"

    def scores(self, state: _ArmState) -> np.ndarray:
        return -(state.nonrelevant + state.pending).astype(np.float64)

    def arm_weights(self, relevant: np.ndarray, nonrelevant: np.ndarray) -> np.ndarray:
        """``1 / (1 + not relevant)``: the arm's priority made positive (every arm 1 at the start)."""
        return 1.0 / (1.0 + nonrelevant)


class MaxMeanBandit(_ArmPool):
    """Bandit pooling, "MM" (maximum mean) of Losada, Parapar & Barreiro ("Multi-armed bandits for
    adjudicating documents in pooling-based evaluation of information retrieval systems", IP&M 53(5),
    2017; "Feeling lucky?", SAC 2016): a Bayesian bandit per topic whose arms are the runs.

    Each run's probability of handing out a relevant document has a Beta(1, 1) prior; after r relevant
    and n not relevant documents drawn from the run, the posterior mean is (1 + r) / (2 + r + n). The run
    with the largest posterior mean draws next (ties: the run given first), its next document neither
    judged nor handed out. This is the stationary MM rule; the paper's non-stationary variant MM-NS is
    not implemented. Documents handed out and not judged yet count as not relevant until their
    judgments arrive (so a round of several documents per topic spreads over runs); judgments the method
    did not ask for (initial qrels) do not update the arms. Deterministic: no seed. Design prior
    (:func:`~ir_incomplete.judging.strategy_prior`): :meth:`~_ArmPool.design_prior` with arm weight the
    posterior mean.
    """

    name = "bandit"

    def scores(self, state: _ArmState) -> np.ndarray:
        r = state.relevant.astype(np.float64)
        return (1.0 + r) / (2.0 + r + state.nonrelevant + state.pending)

    def arm_weights(self, relevant: np.ndarray, nonrelevant: np.ndarray) -> np.ndarray:
        """The posterior mean ``(1 + r) / (2 + r + n)`` (every arm ½ at the start)."""
        return (1.0 + relevant) / (2.0 + relevant + nonrelevant)


# ---------------------------------------------------------------------------------------------------
# pool(): the static pools as query_id/doc_id tables
# ---------------------------------------------------------------------------------------------------
_STRATEGY_CLASSES: dict[str, Any] = {
    "depth": DepthPool,
    "budget": BudgetPool,
    "rrf": RRFPool,
    "rbp": RBPPool,
    "movetofront": MoveToFront,
    "bandit": MaxMeanBandit,
}


def make_strategy(method: str, **options: Any) -> Any:
    """The strategy object of a method name (``"depth"``, ``"budget"``, ``"rrf"``, ``"rbp"``,
    ``"movetofront"``, ``"bandit"``; ``"judge_next"`` when :mod:`~ir_incomplete.judging.mtc` is
    installed) with its options."""
    if method == "judge_next":
        import importlib

        try:
            module = importlib.import_module("ir_incomplete.judging.mtc")
        except ModuleNotFoundError as exc:
            if exc.name != "ir_incomplete.judging.mtc":
                raise
            raise ValueError("method 'judge_next' is not available in this version of ir_incomplete") from None
        factory = getattr(module, "JudgeNext", None)
        if factory is None:
            raise ValueError("ir_incomplete.judging.mtc has no JudgeNext strategy class")
        return factory(**options)
    if method not in _STRATEGY_CLASSES:
        choices = ", ".join([*_STRATEGY_CLASSES, "judge_next"])
        raise ValueError(f"method={method!r} is not a judging method; choices: {choices}")
    try:
        return _STRATEGY_CLASSES[method](**options)
    except TypeError as exc:
        raise TypeError(f"method {method!r}: {exc}") from None


def pool(
    runs: Any,
    method: str = "depth",
    *,
    depth: int | None = None,
    budget: int | None = None,
    k: float = 2.0,
    p: float = 0.8,
    per_topic: bool | None = None,
    across: str = "priority",
    pool_runs: Iterable[str] | None = None,
    qrels: Any = None,
    score_precision: str = "float32",
) -> pd.DataFrame:
    """A static pool: the ``query_id, doc_id`` pairs to judge, sorted by query (natural order) and
    document id, the content of a TREC pool file.

    Parameters
    ----------
    runs
        Anything :func:`ir_incomplete.evaluate` accepts as runs (a directory of run files, ``{name: run}``, …).
    method
        ``"depth"`` (``depth``, default 10: each run's top ``depth`` documents per topic), ``"budget"``
        (``budget`` documents per topic, round-robin in rank order), ``"rrf"`` (``budget`` documents by
        reciprocal-rank fusion, ``k``), ``"rbp"`` (``budget`` documents by summed RBP weight, ``p``).
        See :class:`DepthPool`, :class:`BudgetPool`, :class:`RRFPool`, :class:`RBPPool`. The adaptive
        methods (``"movetofront"``, ``"bandit"``) need judgments as they go: use their strategy objects
        (:class:`MoveToFront`, :class:`MaxMeanBandit`) or :func:`~ir_incomplete.judging.simulate`.
    per_topic
        rrf/rbp: ``budget`` is per topic (``True``) or in total (``False``, default); for ``"budget"``
        it is always per topic.
    across
        rrf/rbp with a total budget: ``"priority"`` (default: one order by score across all topics) or
        ``"round_robin"`` (topics take turns).
    pool_runs
        Names of the runs that contribute (default: all).
    qrels
        Judgments already made: these pairs are left out of the pool (the budget counts new judgments
        only). Qrels judging a query no run answers are an error.
    score_precision
        ``"float32"`` (trec_eval 9 ties, default) or ``"float64"``.
    """
    if method in ADAPTIVE_METHODS:
        raise ValueError(
            f"method {method!r} is adaptive: it chooses documents from the judgments as they come in. Use "
            f"make_strategy({method!r}) with start/next_batch/update, or simulate(); pool() methods: "
            f"{', '.join(POOL_METHODS)}"
        )
    if method not in POOL_METHODS:
        raise ValueError(f"method={method!r} is not a pool method; choices: {', '.join(POOL_METHODS)}")
    strategy: _StaticPool
    total: int | None = None  # a total budget, cut after the judged pairs are left out
    topic_budget: int | None = None  # a per-topic budget, likewise
    if method == "depth":
        if budget is not None:
            raise ValueError("method 'depth' takes depth=..., not budget (use method='budget' for a per-topic budget)")
        strategy = DepthPool(10 if depth is None else depth, pool_runs)
    else:
        if depth is not None:
            raise ValueError(f"method {method!r} takes budget=..., not depth")
        if budget is None:
            raise ValueError(f"method {method!r} needs budget=... (a number of judgments)")
        budget = check_budget(budget)
        if method == "budget":
            if per_topic is False:
                raise ValueError("method 'budget' is a per-topic budget; per_topic=False is not valid here")
            strategy, topic_budget = BudgetPool(None, pool_runs), budget
        else:
            if method == "rrf":
                strategy = RRFPool(None, k=k, per_topic=bool(per_topic), across=across, pool_runs=pool_runs)
            else:
                strategy = RBPPool(None, p=p, per_topic=bool(per_topic), across=across, pool_runs=pool_runs)
            if per_topic:
                topic_budget = budget
            else:
                total = budget
    candidates = runs if isinstance(runs, Candidates) else Candidates(runs, score_precision)
    state = strategy.start(candidates, qrels)
    chosen = state.order[state.available[state.order]]  # the judging order without the judged pairs
    if total is not None:
        chosen = chosen[:total]
    if topic_budget is not None:
        topic = candidates.pair_topic[chosen]
        by_topic = np.argsort(topic, kind="stable")
        first = np.searchsorted(topic[by_topic], topic[by_topic], side="left")
        place = np.empty(len(chosen), dtype=np.int64)
        place[by_topic] = np.arange(len(chosen)) - first
        chosen = chosen[place < topic_budget]
    return candidates.frame(np.sort(chosen))


# ---------------------------------------------------------------------------------------------------
# pool files
# ---------------------------------------------------------------------------------------------------
POOL_FORMATS = ("pairs", "qrels", "sample")
#: the columns of a ``sample`` pool file (a :func:`~ir_incomplete.judging.stratified_sample`), in order
SAMPLE_COLUMNS = ("query_id", "doc_id", "stratum", "rank", "sampled")


def pool_lines(frame: pd.DataFrame, fmt: str = "pairs") -> list[str]:
    """The lines (without newlines) of a pool file: ``pairs`` = ``query_id doc_id``; ``qrels`` =
    ``query_id 0 doc_id -1``; ``sample`` = ``query_id doc_id stratum rank sampled`` (a
    :func:`~ir_incomplete.judging.stratified_sample`, ``sampled`` as 1 or 0)."""
    if fmt not in POOL_FORMATS:
        raise ValueError(f"format {fmt!r} is not valid; choices: {', '.join(POOL_FORMATS)}")
    q = frame["query_id"].astype(str).to_numpy()
    d = frame["doc_id"].astype(str).to_numpy()
    if fmt == "pairs":
        return [f"{a} {b}" for a, b in zip(q, d, strict=True)]
    if fmt == "qrels":
        return [f"{a} 0 {b} -1" for a, b in zip(q, d, strict=True)]
    missing = [c for c in SAMPLE_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(
            f"format 'sample' writes a stratified_sample() table; this one has no column {missing[0]!r} "
            f"(found {list(map(str, frame.columns))})"
        )
    stratum = frame["stratum"].to_numpy(dtype=np.int64)
    rank = frame["rank"].to_numpy(dtype=np.int64)
    sampled = frame["sampled"].to_numpy(dtype=bool).astype(np.int64)
    return [f"{a} {b} {c} {r} {x}" for a, b, c, r, x in zip(q, d, stratum, rank, sampled, strict=True)]


def write_pool(frame: pd.DataFrame, handle: Any, fmt: str = "pairs", header: str | None = None) -> None:
    """Write a pool to an open text handle, one line per pair (:func:`pool_lines`): ``pairs`` =
    ``query_id doc_id``; ``qrels`` = ``query_id 0 doc_id -1`` (pooled but unjudged, a qrels file that
    :func:`ir_incomplete.read_trec_qrels` reads); ``sample`` = ``query_id doc_id stratum rank sampled``
    (a :func:`~ir_incomplete.judging.stratified_sample`). ``header``: a first line starting with ``#``.
    :func:`read_pool` reads every format back."""
    lines = pool_lines(frame, fmt)
    if header is not None:
        handle.write(header if header.endswith("\n") else header + "\n")
    handle.writelines(line + "\n" for line in lines)


def read_pool(source: Any) -> pd.DataFrame:
    """Read a pool file written by :func:`write_pool` or ``ir_incomplete pool``, in any of its formats
    (lines starting with ``#`` are comments; ``source``: a path, ``.gz`` allowed, or the text itself):

    * ``query_id doc_id`` (``pairs``) and ``query_id 0 doc_id -1`` (``qrels``) → ``query_id, doc_id``;
    * ``query_id doc_id stratum rank sampled`` (``sample``, the default output of ``ir_incomplete pool
      --method stratified``) → ``query_id, doc_id, stratum, rank, sampled`` (``sampled`` as bool): the
      table :func:`~ir_incomplete.judging.stratified_sample` returns, which
      :func:`~ir_incomplete.judging.to_prels` takes.

    Every line must have the same number of fields; ``ValueError`` names the file and line of a field
    that is not valid."""
    import os

    from ir_incomplete.data import read_trec_qrels

    if isinstance(source, str) and "\n" in source:
        text = source
        name = "<text>"
    else:
        path = os.fspath(source)
        name = str(path)
        if str(path).endswith(".gz"):
            import gzip

            with gzip.open(path, "rt") as fh:
                text = fh.read()
        else:
            with open(path) as fh:
                text = fh.read()
    numbered = [
        (no, line) for no, line in enumerate(text.splitlines(), 1) if line.strip() and not line.lstrip().startswith("#")
    ]
    lines = [line for _, line in numbered]
    if not lines:
        return pd.DataFrame({"query_id": pd.Series(dtype=object), "doc_id": pd.Series(dtype=object)})
    width = {len(line.split()) for line in lines}
    if width == {2}:
        parts = [line.split() for line in lines]
        return pd.DataFrame(
            {
                "query_id": pd.Series([p[0] for p in parts], dtype=object),
                "doc_id": pd.Series([p[1] for p in parts], dtype=object),
            }
        )
    if width == {4}:
        frame = read_trec_qrels("\n".join(lines) + "\n")
        return frame[["query_id", "doc_id"]]
    if width == {5}:
        return _read_sample([no for no, _ in numbered], [line.split() for line in lines], name)
    raise ValueError(
        f"cannot read pool file {name if len(name) < 80 else '<text>'}: lines must have 2 fields (query_id doc_id), "
        f"4 (query_id 0 doc_id -1) or 5 (query_id doc_id stratum rank sampled); found {sorted(width)}"
    )


def _read_sample(numbers: list[int], parts: list[list[str]], name: str) -> pd.DataFrame:
    """The ``sample`` pool format: ``query_id doc_id stratum rank sampled`` per line (``numbers``: the
    line number of each), checked: stratum and rank integers ≥ 1, sampled 0 or 1."""
    columns = list(zip(*parts, strict=True))
    out: dict[str, Any] = {
        "query_id": pd.Series(columns[0], dtype=object),
        "doc_id": pd.Series(columns[1], dtype=object),
    }
    for at, field in ((2, "stratum"), (3, "rank"), (4, "sampled")):
        values = pd.to_numeric(pd.Series(columns[at], dtype=object), errors="coerce").to_numpy(dtype=np.float64)
        if field == "sampled":
            bad = ~np.isin(values, (0.0, 1.0))
            expected = "0 or 1"
        else:
            bad = ~(np.isfinite(values) & (values == np.round(values)) & (values >= 1))
            expected = "an integer >= 1"
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"pool file {name if len(name) < 80 else '<text>'}, line {numbers[i]}: {field} {columns[at][i]!r} "
                f"is not valid; expected {expected} (format: query_id doc_id stratum rank sampled)"
            )
        out[field] = values.astype(bool) if field == "sampled" else values.astype(np.int64)
    return pd.DataFrame(out)
