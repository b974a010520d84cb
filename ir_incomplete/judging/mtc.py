"""Judge next: which unjudged (query, document) pairs to judge next so that a measure ranks the runs
as it would with complete judgments, with as few judgments as possible.

Criterion (MTC-style expected change in the measure differences between runs)
-----------------------------------------------------------------------------
It follows the minimal-test-collection idea of Carterette, Allan & Sitaraman (SIGIR 2006, "Minimal
test collections for retrieval evaluation", §3-4): judge the documents whose relevance changes the
differences between systems' measure values the most, weighted by the probability that the document
is relevant. Because the judgments will be used by the *plain* measure (an unjudged document counts
nonrelevant), a judgment changes the measure only when the document turns out relevant; the
criterion is therefore the expected change of the measure differences, summed over all pairs of runs.

For a topic ``q``, a candidate ``d`` (a document some run retrieves for ``q``; only the top ``k``
for a measure with cut-off ``@k``) and a run ``s`` ranking ``d`` at rank ``r_s(d)`` (1-based, trec_eval
order: score descending, ties by document id descending), ``g_s(d)`` is the derivative of the
measure's numerator with respect to ``d``'s relevance ``x_d``, taken at the expected relevances
``e`` (``e = 1/0`` for judged relevant/nonrelevant documents, ``e = p`` for unjudged ones):

* AP: the numerator is ``R·AP_s = Σ_i x_i · (Σ_{j≤i} x_j) / i`` over ranks ``i``, so
  ``g_s(d) = (1 + Σ_{j<r} e_j) / r + Σ_{i>r} e_i / i`` with ``r = r_s(d)`` (precision at ``d``'s rank
  if relevant, plus what ``d`` adds to the precision of every later relevant document);
* nDCG@k: ``g_s(d) = 1 / log2(1 + r)`` for ``r ≤ k`` (the DCG discount; the gain enters below);
* P@k: ``g_s(d) = 1 / k`` for ``r ≤ k``.

``g_s(d) = 0`` when ``s`` does not retrieve ``d`` (or ranks it below the cut-off, or does not answer
``q``). With ``n`` runs, the mean absolute change of the pairwise differences is

    ``W(d) = 2 / (n (n − 1)) · Σ_{s<t} |g_s(d) − g_t(d)|``,

computed exactly per document from its sorted values (``Σ_{s<t} |a_s − a_t| = Σ_k a_(k) (2k − n − 1)``).
A document all runs rank alike (rank 1 in every run) has ``W ≈ 0``: it cannot reorder runs. The
criterion divides by the measure's expected normaliser for the topic, so a judgment is worth what it
moves the *mean* over topics (topics with few relevant documents weigh more per document, and
judgments flow to the topics where the runs' values are still uncertain):

* AP: ``criterion(d) = p(d) · W(d) / R̂_q``, ``R̂_q`` = judged relevant documents of ``q`` (also those
  no run retrieves) + ``Σ p`` over its unjudged candidates;
* nDCG@k: ``criterion(d) = p(d) · ĝain · W(d) / IDCĜ_q``, ``ĝain`` = the mean grade of the judged
  relevant documents (1 before any), ``IDCĜ_q`` = the ideal DCG@k of the expected gains of ``q``;
* P@k: ``criterion(d) = p(d) · W(d)``.

The batch is the ``n`` unjudged candidates of largest criterion (ties in a seeded random order).
The criterion is recomputed from all judgments at every call: judging in rounds (``update``) is what
makes it adaptive.

Relevance probability ``p(d)``
------------------------------
A logistic model ``logit p(d) = α_q + β · z(d)`` with ``z(d) = log(RRF(d) / RRF_max)``, where
``RRF(d) = Σ_s 1 / (k_rrf + r_s(d))`` over the runs retrieving ``d`` (reciprocal-rank fusion,
``k_rrf = 2``) and ``RRF_max = n / (k_rrf + 1)`` (every run at rank 1). Once some candidates are
judged, each run's vote is weighted by its estimated precision on the topic,
``z(d) = log(Σ_s π_sq / (k_rrf + r_s(d)) / RRF_max)`` with ``π_sq = (k_sq + 4 π_s) / (n_sq + 4)``
(``k_sq`` relevant among the ``n_sq`` judged candidates run ``s`` retrieves for ``q``), shrunk to
``π_s = (k_s + 4 π) / (n_s + 4)`` over all its topics and ``π = (relevant + 1) / (judged + 2)``.
Topic intercepts ``α_q`` share a Gaussian prior ``α_q ~ N(μ, 1)``, ``μ ~ N(0, 2²)``, ``β ~ N(1, 1)``;
the maximum a posteriori fit (Newton's method, 20 steps at most) uses every judged candidate
(relevant = grade ≥ 1). So a topic where judgments found many relevant documents raises its ``α_q``
(like MoveToFront or a bandit rewarding productive topics), a topic with none lowers it, and with no
judgments at all ``p = σ(z)`` (a document ranked first by every run has ``p = ½``).

With ``predictions`` (a qrels-like table of predicted grades, e.g. from an LLM judge), a candidate
with a prediction ``ĝ`` gets instead ``p = (n₊(ĝ) + 4 m(ĝ)) / (n(ĝ) + 4)``: the share of relevant
documents among the judged candidates predicted ``ĝ``, shrunk to ``m(ĝ) = 0.8`` for ``ĝ ≥ 1`` and
``0.2`` for ``ĝ ≤ 0`` with the weight of 4 judgments (so the predictions are calibrated by the human
judgments as they come in); candidates without a prediction keep the model's ``p``.

Cost
----
One call costs ``O(N log N)`` for ``N`` retrieved (run, query, document) rows (one sort of the rows
by candidate and ``g``; every other step is a vectorized pass), plus ``O(J·Q + Q³)`` for the model fit
with ``J`` judged candidates and ``Q`` topics. :meth:`JudgeNext.start` converts the runs once into
the :class:`~ir_incomplete.judging.Candidates` table that pools and samples use (a sort of the rows
into trec_eval's ranking order and of the distinct document ids). On TREC-COVID round 1 (143 runs, 30 topics,
3.5 M rows) a whole judge_next call took 7-11 s on 2 busy cores, of which next_batch 1-3 s.

Measured
--------
``python benchmarks/judge_next_goal.py`` (from empty qrels, a document the oracle does not judge counts
nonrelevant, plain measure, Kendall τ against the oracle's values). TREC-COVID round 1 (143 runs,
oracle: complete topics 1-30 qrels): τ nDCG@10 .888 after 1,500 judgments and .907 after 2,000 (rounds
of 250; RRF priority .874 / .888); τ AP .882 after 4,000 and .903 after 6,000 (rounds of 500; RRF
.889 / .902). The goals (τ ≥ 0.9 with ≤ 1,500 judgments for nDCG@10, ≤ 4,000 for AP) are not met.
Both measures change only when a judged document is relevant: the same criterion told the oracle's
relevance (``--methods oracle``, it judges relevant documents only) needs 1,250 relevant documents for
τ nDCG@10 ≥ 0.9 and 2,000 for AP, while judge-next finds 938 relevant in 1,500 judgments and 1,996 in
4,000. Robust04 (10 runs, 249 topics): see the manual's table (docs/measured.rst, "Judge next, measured").

Bad input: a budget below 1, an unknown measure (the choices are listed), qrels or predictions
without the needed columns or with non-integer grades raise :class:`ValueError`. Judgments of queries
that no run answers cannot change any run's value and nothing of theirs can be proposed: they are
ignored, with a :class:`UserWarning` that names them. A negative grade (trec_eval's "pooled but
unjudged") leaves the document unjudged.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ir_incomplete.judging._candidates import Candidates, check_budget

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = ["JudgeNext", "JudgeNextState", "judge_next", "MEASURE_CHOICES"]

#: measures judge-next optimises for (``k`` any positive integer)
MEASURE_CHOICES = ("AP", "AP@k", "nDCG", "nDCG@k", "P@k")

RRF_K = 2.0
PRIOR_MU, PRIOR_MU_SD = 0.0, 2.0
PRIOR_ALPHA_SD = 1.0
PRIOR_BETA, PRIOR_BETA_SD = 1.0, 1.0
PREDICTION_PRIOR = {True: 0.8, False: 0.2}
PREDICTION_WEIGHT = 4.0
NEWTON_STEPS = 20


@dataclass(frozen=True)
class _Target:
    """The measure optimised: ``kind`` in ``ap/ndcg/p``, ``cutoff`` (``None``: whole ranking)."""

    kind: str
    cutoff: int | None
    text: str


def _target(measure) -> _Target:
    import ir_measures

    from ir_incomplete.grammar import parse

    choices = ", ".join(MEASURE_CHOICES)
    if isinstance(measure, str):
        try:
            parsed = parse(measure)
        except (ValueError, NameError) as exc:
            message = f"measure {measure!r} is not supported by judge-next ({exc}); choices: {choices}"
            raise ValueError(message) from None
    elif isinstance(measure, ir_measures.Measure):
        parsed = measure
    else:
        raise TypeError(f"measure must be a string or an ir_measures Measure, not {type(measure).__name__}")
    name = getattr(parsed, "NAME", None)
    params = dict(parsed.params)
    cutoff = params.pop("cutoff", None)
    if params.get("rel", 1) == 1:
        params.pop("rel", None)
    kinds = {"AP": "ap", "nDCG": "ndcg", "P": "p"}
    if name not in kinds or params:
        raise ValueError(f"measure {str(measure)!r} is not supported by judge-next; choices: {choices}")
    if name == "P" and cutoff is None:
        raise ValueError(f"measure {str(measure)!r} needs a cut-off (P@k); choices: {choices}")
    return _Target(kinds[name], None if cutoff is None else int(cutoff), repr(parsed))


def _fusion(candidates: Candidates) -> np.ndarray:
    """``z = log(RRF / RRF_max)`` of every candidate pair: ``RRF(d) = Σ_s 1 / (k_rrf + r_s(d))``."""
    rrf = candidates.pair_sum(1.0 / (RRF_K + (candidates.row_rank + 1)))
    return np.log(rrf / (candidates.n_runs / (RRF_K + 1.0)))


def _judgment_columns(frame, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(query_ids, doc_ids, grades)`` of a qrels-like input (``str``, ``str``, ``int64``)."""
    from ir_incomplete.data import Qrels

    try:
        judged = Qrels.from_any(frame, negative="pooled_unjudged")
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"{what}: {exc}") from None
    table = judged.to_frame()
    qids = np.array([str(q) for q in table["query_id"]], dtype=object)
    dids = np.array([str(d) for d in table["doc_id"]], dtype=object)
    grades = table["relevance"].to_numpy().astype(np.int64)
    return qids, dids, grades


def _check_scale(qids: np.ndarray, dids: np.ndarray, grades: np.ndarray, qrels: Any) -> None:
    """Refuse predicted grades outside the qrels' scale ``0..G`` (G: the qrels' highest grade; any grade
    ≥ 0 when there are no judgments yet), as :func:`ir_incomplete.evaluate` refuses them."""
    top = None
    if qrels is not None and not (isinstance(qrels, pd.DataFrame) and qrels.empty):
        judged = _judgment_columns(qrels, "qrels")[2]
        judged = judged[judged >= 0]
        top = int(judged.max()) if len(judged) else None
    bad = np.flatnonzero((grades < 0) | (grades > top if top is not None else False))
    if len(bad) == 0:
        return
    i = int(bad[0])
    scale = f"the qrels' grades are 0..{top}" if top is not None else "predicted grades are integers >= 0"
    grade = f"{int(grades[i])}" if grades[i] >= 0 else "a negative grade (pooled but unjudged)"
    raise ValueError(
        f"predictions: predicted grade {grade} of document {dids[i]!r}, query {qids[i]!r} is outside the qrels' "
        f"scale: {scale} ({len(bad)} such prediction(s)); give predictions on the qrels' scale"
    )


def _pairs(candidates: Candidates, pairs: np.ndarray, **columns: np.ndarray) -> pd.DataFrame:
    """``query_id, doc_id`` of candidate ``pairs`` (columns of ids inferred by pandas, as judge-next has
    always returned them), plus ``columns``."""
    frame = pd.DataFrame(
        {
            "query_id": candidates.topic_ids[candidates.pair_topic[pairs]],
            "doc_id": candidates.doc_ids[candidates.pair_doc[pairs]],
        }
    )
    for name, values in columns.items():
        frame[name] = values
    return frame


@dataclass
class JudgeNextState:
    """What :class:`JudgeNext` knows: the candidate pairs and the judgments so far.

    ``candidates`` is the :class:`~ir_incomplete.judging.Candidates` table of the runs (the one pools
    and samples use; a candidate is a pair number); ``z`` its reciprocal-rank fusion ``log(RRF /
    RRF_max)`` per candidate; ``grade`` holds the judged grade of each candidate (``NaN``: unjudged);
    ``outside`` the judgments of documents no run retrieves (they count for the normalisers R and IDCG);
    ``ignored_queries`` the judged queries that no run answers; ``predicted`` the predicted grade per
    candidate (``NaN``: none)."""

    candidates: Candidates
    z: np.ndarray
    grade: np.ndarray
    predicted: np.ndarray
    outside: dict[tuple[str, str], int] = field(default_factory=dict)
    ignored_queries: list[str] = field(default_factory=list)

    @property
    def n_judged(self) -> int:
        """Judged candidates (documents some run retrieves)."""
        return int(np.count_nonzero(~np.isnan(self.grade)))

    def judgments(self) -> pd.DataFrame:
        """All judgments known (``query_id, doc_id, relevance``), candidates first, then the others."""
        judged = np.flatnonzero(~np.isnan(self.grade))
        frame = _pairs(self.candidates, judged, relevance=self.grade[judged].astype(np.int64))
        if self.outside:
            keys = list(self.outside)
            extra = pd.DataFrame(
                {
                    "query_id": [k[0] for k in keys],
                    "doc_id": [k[1] for k in keys],
                    "relevance": np.array(list(self.outside.values()), dtype=np.int64),
                }
            )
            frame = pd.concat([frame, extra], ignore_index=True)
        return frame


class JudgeNext:
    """Choose the unjudged (query, document) pairs whose judgments change the measure differences
    between runs the most (see the module docstring for the exact criterion, prior and cost).

    Implements the :class:`ir_incomplete.judging.strategy.Strategy` protocol::

        strategy = JudgeNext("AP")
        state = strategy.start(runs, qrels)          # qrels may be None or empty
        batch = strategy.next_batch(state, 500)      # query_id, doc_id, priority (the criterion)
        strategy.update(state, judged_batch)         # query_id, doc_id, relevance

    Parameters
    ----------
    measure
        The measure whose run ranking the judgments should get right: ``"AP"``, ``"AP@k"``,
        ``"nDCG"``, ``"nDCG@k"`` or ``"P@k"`` (string or ``ir_measures`` measure).
    predictions
        Optional qrels-like table (``query_id, doc_id, relevance``) of predicted grades, used as the
        relevance prior where present (calibrated against the judgments made).
    seed
        Orders candidates of equal criterion; the same seed gives identical batches.
    """

    name = "judge-next"

    def __init__(self, measure: Any = "AP", *, predictions: Any = None, seed: int = 0):
        self.target = _target(measure)
        self.predictions = predictions
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an integer, not {seed!r}")
        if seed < 0:
            raise ValueError(f"seed={seed!r} is not valid; expected an integer >= 0")
        self.seed = int(seed)

    def __repr__(self) -> str:
        return f"JudgeNext(measure={self.target.text!r}, seed={self.seed})"

    # -- protocol ---------------------------------------------------------------------------------------
    def start(self, runs: Any, qrels: Any = None) -> JudgeNextState:
        """Convert the runs once (anything :func:`ir_incomplete.evaluate` accepts, or
        :class:`~ir_incomplete.judging.Candidates`) and take the judgments made so far (``None`` or empty:
        none)."""
        candidates = runs if isinstance(runs, Candidates) else Candidates(runs)
        state = JudgeNextState(
            candidates=candidates,
            z=_fusion(candidates),
            grade=np.full(candidates.n_pairs, np.nan),
            predicted=np.full(candidates.n_pairs, np.nan),
        )
        if self.predictions is not None:
            from ir_incomplete.predictions import read_predictions

            qids, dids, grades = _judgment_columns(read_predictions(self.predictions), "predictions")
            _check_scale(qids, dids, grades, qrels)
            cand = candidates.pair_index(qids, dids)
            found = (cand >= 0) & (grades >= 0)
            state.predicted[cand[found]] = grades[found]
        if qrels is not None and not (isinstance(qrels, pd.DataFrame) and qrels.empty):
            self.update(state, qrels)
        return state

    def update(self, state: JudgeNextState, judgments: Any) -> None:
        """Add judgments (``query_id, doc_id, relevance``; any qrels form). A pair judged again takes
        the new grade; a negative grade leaves the pair unjudged."""
        if isinstance(judgments, pd.DataFrame) and judgments.empty:
            return
        qids, dids, grades = _judgment_columns(judgments, "judgments")
        candidates = state.candidates
        answered = candidates.topic_of_query(qids) >= 0
        if not answered.all():
            missing = sorted(set(qids[~answered].tolist()) - set(state.ignored_queries))
            if missing:
                state.ignored_queries.extend(missing)
                shown = ", ".join(map(repr, missing[:5])) + (", ..." if len(missing) > 5 else "")
                warnings.warn(
                    f"{len(missing)} judged quer{'y' if len(missing) == 1 else 'ies'} ({shown}) answered by no "
                    f"run: their judgments cannot change any run's value and are ignored",
                    UserWarning,
                    stacklevel=2,
                )
        keep = answered & (grades >= 0)
        qids, dids, grades = qids[keep], dids[keep], grades[keep]
        cand = candidates.pair_index(qids, dids)
        inside = cand >= 0
        state.grade[cand[inside]] = grades[inside]
        for q, d, g in zip(qids[~inside].tolist(), dids[~inside].tolist(), grades[~inside].tolist(), strict=True):
            state.outside[(q, d)] = int(g)

    def next_batch(self, state: JudgeNextState, n: int) -> pd.DataFrame:
        """At most ``n`` unjudged pairs, largest criterion first: ``query_id, doc_id, priority``."""
        n = check_budget(n, "n")
        value = self.criterion(state)
        candidates = state.candidates
        open_ = np.flatnonzero(np.isnan(state.grade))
        if len(open_) == 0:
            return pd.DataFrame({"query_id": [], "doc_id": [], "priority": []}).astype(
                {"query_id": object, "doc_id": object, "priority": float}
            )
        tiebreak = np.random.default_rng(self.seed).permutation(candidates.n_pairs)[open_]
        order = np.lexsort((tiebreak, -value[open_]))[:n]
        chosen = open_[order]
        return _pairs(candidates, chosen, priority=value[chosen])

    def design_prior(self, state: JudgeNextState) -> np.ndarray:
        """Per candidate pair, the weight :func:`ir_incomplete.judging.sample` draws it with (``prior=``):
        the criterion (:meth:`criterion`) from the judgments known to ``state``, 0 for judged pairs."""
        value = np.nan_to_num(self.criterion(state), nan=0.0, posinf=0.0, neginf=0.0)
        value[~np.isnan(state.grade)] = 0.0
        return np.maximum(value, 0.0)

    # -- the criterion ----------------------------------------------------------------------------------
    def relevance_probability(self, state: JudgeNextState) -> np.ndarray:
        """``p(d)`` of every candidate (judged ones: 1 or 0), see the module docstring."""
        candidates = state.candidates
        judged = ~np.isnan(state.grade)
        rel = np.where(judged, state.grade >= 1, False)
        z = _weighted_fusion(candidates, state.z, judged, rel) if RUN_WEIGHTS else state.z
        alpha, beta = _fit_prior(z, candidates.pair_topic, candidates.n_topics, judged, rel)
        p = _sigmoid(alpha[candidates.pair_topic] + beta * z)
        has_pred = ~np.isnan(state.predicted)
        if has_pred.any():
            predicted_rel = state.predicted >= 1
            for level in (True, False):
                here = has_pred & (predicted_rel == level)
                seen = here & judged
                p[here] = (np.count_nonzero(rel[seen]) + PREDICTION_WEIGHT * PREDICTION_PRIOR[level]) / (
                    np.count_nonzero(seen) + PREDICTION_WEIGHT
                )
        return np.where(judged, rel.astype(float), p)

    def criterion(self, state: JudgeNextState) -> np.ndarray:
        """The criterion of every candidate (judged candidates included; see the module docstring)."""
        c = state.candidates
        target = self.target
        p = self.relevance_probability(state)
        keep = slice(None) if target.cutoff is None else c.row_rank < target.cutoff
        cand = c.row_pair[keep]
        rank = (c.row_rank[keep] + 1).astype(np.float64)  # 1-based
        if target.kind == "ap":
            g = _ap_gradient(p[cand], rank, c.row_ranking[keep])
        elif target.kind == "ndcg":
            g = 1.0 / np.log2(1.0 + rank)
        else:
            g = np.full(len(rank), 1.0 / float(target.cutoff or 1))
        spread = _pairwise_spread(cand, g, c.n_pairs, c.n_runs)
        judged = ~np.isnan(state.grade)
        if target.kind == "ap":
            expected_rel = np.bincount(c.pair_topic, weights=p, minlength=c.n_topics)
            expected_rel += self._outside_per_topic(state, lambda g: float(g >= 1))
            return p * spread / np.maximum(expected_rel, 1.0)[c.pair_topic]
        if target.kind == "ndcg":
            mean_gain = _mean_relevant_grade(state)
            gain = np.where(judged, np.nan_to_num(state.grade), p * mean_gain)
            ideal = self._ideal_dcg(state, np.maximum(gain, 0.0))
            return p * mean_gain * spread / np.maximum(ideal, 1.0)[c.pair_topic]
        return p * spread

    def _outside_per_topic(self, state: JudgeNextState, value) -> np.ndarray:
        out = np.zeros(state.candidates.n_topics)
        if state.outside:
            topics = state.candidates.topic_of_query(np.array([q for q, _ in state.outside], dtype=object))
            for t, g in zip(topics.tolist(), state.outside.values(), strict=True):
                out[t] += value(g)
        return out

    def _ideal_dcg(self, state: JudgeNextState, gain: np.ndarray) -> np.ndarray:
        """Per topic, DCG@k of the expected gains sorted descending (judged documents no run retrieves
        included)."""
        c = state.candidates
        topics, gains = c.pair_topic, gain
        if state.outside:
            extra_t = c.topic_of_query(np.array([q for q, _ in state.outside], dtype=object))
            extra_g = np.array([max(g, 0) for g in state.outside.values()], dtype=np.float64)
            topics, gains = np.concatenate([topics, extra_t]), np.concatenate([gains, extra_g])
        order = np.lexsort((-gains, topics))
        topics, gains = topics[order], gains[order]
        first = np.searchsorted(topics, np.arange(c.n_topics))
        position = np.arange(len(topics)) - first[topics] + 1
        cutoff = self.target.cutoff
        use = position <= cutoff if cutoff is not None else np.ones(len(topics), dtype=bool)
        return np.bincount(topics[use], weights=gains[use] / np.log2(1.0 + position[use]), minlength=c.n_topics).astype(
            float
        )


RUN_WEIGHTS = True
RUN_PRIOR = 4.0


def _weighted_fusion(c: Candidates, z: np.ndarray, judged: np.ndarray, rel: np.ndarray) -> np.ndarray:
    """``log(Σ_s π_sq / (k + r_s(d)) / RRF_max)``: reciprocal-rank fusion with each run's vote weighted by
    its estimated precision on the topic (judged documents it retrieves, shrunk to its precision over
    all topics, itself shrunk to the overall rate); ``z`` (the unweighted fusion) before any judgment."""
    if not judged.any():
        return z
    j = judged[c.row_pair]
    y = rel[c.row_pair] & j
    overall = (np.count_nonzero(rel) + 1.0) / (np.count_nonzero(judged) + 2.0)
    n_s = np.bincount(c.row_run, weights=j, minlength=c.n_runs)
    k_s = np.bincount(c.row_run, weights=y, minlength=c.n_runs)
    pi_s = (k_s + RUN_PRIOR * overall) / (n_s + RUN_PRIOR)
    n_rankings = c.n_runs * c.n_topics  # ranking r is run r // n_topics on topic r % n_topics
    n_sq = np.bincount(c.row_ranking, weights=j, minlength=n_rankings)
    k_sq = np.bincount(c.row_ranking, weights=y, minlength=n_rankings)
    pi_sq = (k_sq + RUN_PRIOR * np.repeat(pi_s, c.n_topics)) / (n_sq + RUN_PRIOR)
    votes = pi_sq[c.row_ranking] / (RRF_K + (c.row_rank + 1))
    fused = c.pair_sum(votes)
    return np.log(np.maximum(fused, 1e-300) / (c.n_runs / (RRF_K + 1.0)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -x))


def _mean_relevant_grade(state: JudgeNextState) -> float:
    grades = state.grade[~np.isnan(state.grade)]
    rel = grades[grades >= 1]
    return float((rel.sum() + 1.0) / (len(rel) + 1.0))


def _ap_gradient(e: np.ndarray, rank: np.ndarray, row: np.ndarray) -> np.ndarray:
    """``g = (1 + Σ_{j<r} e_j) / r + Σ_{i>r} e_i / i`` of every item, rows contiguous and in rank order."""
    total = np.cumsum(e)
    row_first = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    row_id = np.cumsum(np.r_[True, row[1:] != row[:-1]]) - 1
    before = total - e - (total[row_first] - e[row_first])[row_id]
    contrib = e / rank
    rcum = np.cumsum(contrib[::-1])[::-1]  # Σ_{i≥r} over the whole array
    row_last = np.r_[row_first[1:] - 1, len(e) - 1]
    after_row = rcum[row_last] - contrib[row_last]  # Σ over items after the row's last item
    after = rcum - contrib - after_row[row_id]
    return (1.0 + before) / rank + after


def _pairwise_spread(cand: np.ndarray, g: np.ndarray, n_candidates: int, n_runs: int) -> np.ndarray:
    """``2/(n(n−1)) Σ_{s<t} |g_s − g_t|`` per candidate, the runs that do not retrieve it counting 0."""
    if n_runs < 2:
        return np.zeros(n_candidates)
    order = np.lexsort((g, cand))
    c, v = cand[order], g[order]
    count = np.bincount(c, minlength=n_candidates)
    first = np.cumsum(count) - count
    k = np.arange(len(c)) - first[c] + 1  # 1-based position among the retrieving runs, ascending
    m = count[c]
    total = np.bincount(c, weights=v * (2 * k + n_runs - 2 * m - 1), minlength=n_candidates)
    return total * 2.0 / (n_runs * (n_runs - 1))


def _fit_prior(
    z: np.ndarray, topic: np.ndarray, n_topics: int, judged: np.ndarray, rel: np.ndarray
) -> tuple[np.ndarray, float]:
    """MAP fit of ``logit p = α_q + β z`` with ``α_q ~ N(μ, σα²)``, ``μ ~ N(μ0, σμ²)``, ``β ~ N(β0, σβ²)``.

    Returns ``(α per topic, β)``; parameters ``θ = (α_1..α_Q, μ, β)``, Newton's method."""
    q = n_topics
    theta = np.concatenate([np.full(q, PRIOR_MU), [PRIOR_MU, PRIOR_BETA]])
    idx = np.flatnonzero(judged)
    if len(idx) == 0:
        return theta[:q], float(theta[-1])
    zt, tt, y = z[idx], topic[idx], rel[idx].astype(float)
    a_var, mu_var, b_var = PRIOR_ALPHA_SD**2, PRIOR_MU_SD**2, PRIOR_BETA_SD**2

    def objective(th: np.ndarray) -> float:
        alpha, mu, beta = th[:q], th[q], th[q + 1]
        eta = alpha[tt] + beta * zt
        nll = np.sum(np.logaddexp(0.0, eta) - y * eta)
        prior = np.sum((alpha - mu) ** 2) / a_var + (mu - PRIOR_MU) ** 2 / mu_var + (beta - PRIOR_BETA) ** 2 / b_var
        return float(nll + 0.5 * prior)

    current = objective(theta)
    for _ in range(NEWTON_STEPS):
        alpha, mu, beta = theta[:q], theta[q], theta[q + 1]
        p = _sigmoid(alpha[tt] + beta * zt)
        w = p * (1.0 - p)
        r = p - y
        grad = np.zeros(q + 2)
        grad[:q] = np.bincount(tt, weights=r, minlength=q) + (alpha - mu) / a_var
        grad[q] = -np.sum(alpha - mu) / a_var + (mu - PRIOR_MU) / mu_var
        grad[q + 1] = np.sum(r * zt) + (beta - PRIOR_BETA) / b_var
        hess = np.zeros((q + 2, q + 2))
        hess[np.arange(q), np.arange(q)] = np.bincount(tt, weights=w, minlength=q) + 1.0 / a_var
        hess[:q, q] = hess[q, :q] = -1.0 / a_var
        hess[q, q] = q / a_var + 1.0 / mu_var
        hess[:q, q + 1] = hess[q + 1, :q] = np.bincount(tt, weights=w * zt, minlength=q)
        hess[q + 1, q + 1] = np.sum(w * zt * zt) + 1.0 / b_var
        step = np.linalg.solve(hess, grad)
        for _halving in range(30):  # damped Newton: halve the step until the objective decreases
            trial = theta - step
            value = objective(trial)
            if value <= current:
                break
            step = step / 2.0
        else:
            break
        theta, current = trial, value
        if np.max(np.abs(step)) < 1e-8:
            break
    return theta[:q], float(theta[q + 1])


def judge_next(
    runs: Any,
    qrels: Any = None,
    measure: Any = "AP",
    budget: int = 100,
    predictions: Any = None,
    seed: int = 0,
) -> pd.DataFrame:
    """The ``budget`` unjudged (query, document) pairs to judge next, most useful first.

    Parameters
    ----------
    runs
        Anything :func:`ir_incomplete.evaluate` accepts (``{name: run}``, a directory of run files, ...).
    qrels
        The judgments made so far (any qrels form), or ``None``/empty to start from nothing.
    measure
        ``"AP"`` (default), ``"AP@k"``, ``"nDCG"``, ``"nDCG@k"`` or ``"P@k"``: the measure whose ranking
        of the runs the judgments should get right.
    budget
        Number of pairs to return (fewer when fewer candidates remain unjudged); an integer ≥ 1.
    predictions
        Optional predicted grades (``query_id, doc_id, relevance``; any form
        :func:`ir_incomplete.predictions.read_predictions` reads), used as the relevance prior.
    seed
        Orders candidates of equal criterion (identical output for the same arguments and seed).

    Returns
    -------
    DataFrame ``query_id, doc_id, priority``: the criterion, the MTC-style expected change of the
    measure differences between runs (module docstring), descending; the same table as
    :meth:`JudgeNext.next_batch` (``priority`` is the score column of every judging strategy). Judged
    queries that no run answers are ignored with a ``UserWarning``. Predicted grades outside the qrels'
    scale (0 to the qrels' highest grade; any grade ≥ 0 without judgments) are a ``ValueError``.
    """
    budget = check_budget(budget)
    strategy = JudgeNext(measure, predictions=predictions, seed=seed)
    state = strategy.start(runs, qrels)
    return strategy.next_batch(state, budget)
