"""Judging strategies as sampling designs: a strategy's priorities as the ``prior`` of a probability sample.

A :class:`~ir_incomplete.judging.strategy.Strategy` *picks* the pairs to judge; :func:`strategy_prior`
turns the same knowledge into weights, so that :func:`ir_incomplete.judging.sample` can *set*
inclusion probabilities from it (``pi ∝ prior``, with the sample's uniform floor) and the design-based
:func:`ir_incomplete.estimate` stays unbiased whatever the strategy believes. The prior of each method,
for an unjudged candidate pair ``d`` of topic ``q``:

* ``depth`` (:class:`~ir_incomplete.judging.DepthPool`): ``1 / best rank`` (1-based) of any
  contributing run; 0 below the pool's ``depth``;
* ``budget`` (:class:`~ir_incomplete.judging.BudgetPool`): ``1 / place`` in its topic's round-robin
  order; 0 beyond the pool's ``budget``;
* ``rrf``, ``rbp`` (:class:`~ir_incomplete.judging.RRFPool`, :class:`~ir_incomplete.judging.RBPPool`):
  the fused score ``Σ_runs w(rank)`` (``1/(k + rank)``, ``(1 − p) p^(rank − 1)``); 0 beyond the pool's
  ``budget``;
* ``movetofront`` (:class:`~ir_incomplete.judging.MoveToFront`): ``Σ_s w_sq / r'_s(d)``: every run ``s``
  retrieving the pair votes with its arm's weight ``w_sq = 1 / (1 + not relevant)`` over ``r'_s(d)``,
  the 1-based place of the pair among the run's unjudged documents of the topic;
* ``bandit`` (:class:`~ir_incomplete.judging.MaxMeanBandit`): the same with the arm's posterior mean
  ``w_sq = (1 + r) / (2 + r + n)``;
* ``judge_next`` (:class:`~ir_incomplete.judging.JudgeNext`): its criterion, the expected change of the
  measure differences between runs, ``p(d) · W(d) /`` normaliser (:mod:`~ir_incomplete.judging.mtc`);
* any other strategy: ``1 / place`` of the pair in its topic, in the order in which one ``next_batch``
  asking for every candidate hands the pairs out.

Judged pairs get 0 (they are in the design's certainty stratum anyway); a pair with prior 0 is drawn
only through the sample's uniform floor (``uniform``).

The arms of ``movetofront`` and ``bandit`` count every judgment given (``qrels``) of a document the
run retrieves; with none, every arm has its starting weight (the arm scores at start). The adaptive
strategies are adaptive as designs through rounds: :func:`~ir_incomplete.judging.sample_rounds` (or
``sample(previous=..., judgments=...)``) recomputes the prior from the judgments so far.

By name, ``sample(prior=...)`` takes its own priors ``"ap"``, ``"rrf"`` (Σ 1/(60 + rank)) and
``"uniform"``, and the judging methods ``"depth"``, ``"budget"``, ``"rbp"``, ``"movetofront"``,
``"bandit"`` and ``"judge_next"`` with their default options; the RRF pool (``k = 2``) is
``prior=RRFPool()``.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import pandas as pd

from ir_incomplete.judging._candidates import Candidates, is_empty_qrels
from ir_incomplete.judging.pools import ADAPTIVE_METHODS, POOL_METHODS, make_strategy

__all__ = ["strategy_prior", "STRATEGY_PRIORS", "is_strategy"]

#: judging methods :func:`ir_incomplete.judging.sample` takes by name as ``prior=`` (``"rrf"`` is the
#: design's own prior there)
STRATEGY_PRIORS = tuple(m for m in (*POOL_METHODS, *ADAPTIVE_METHODS, "judge_next") if m != "rrf")

_CANDIDATES: weakref.WeakKeyDictionary[Any, dict[str, Candidates]] = weakref.WeakKeyDictionary()


def is_strategy(value: Any) -> bool:
    """``value`` has the :class:`~ir_incomplete.judging.strategy.Strategy` methods."""
    return all(callable(getattr(value, m, None)) for m in ("start", "next_batch", "update"))


def _resolve(strategy: Any) -> Any:
    if isinstance(strategy, str):
        return make_strategy(strategy)
    if not is_strategy(strategy):
        raise TypeError(
            f"strategy {strategy!r} is not a judging strategy (start/next_batch/update); give a Strategy object "
            f"or a method name: {', '.join((*POOL_METHODS, *ADAPTIVE_METHODS, 'judge_next'))}"
        )
    return strategy


def _candidates(runs: Any, score_precision: str) -> Candidates:
    """The :class:`Candidates` of ``runs``, built once per prepared runs object (rounds reuse it)."""
    if isinstance(runs, Candidates) and runs.score_precision == score_precision:
        return runs
    try:
        cached = _CANDIDATES.get(runs)
    except TypeError:  # not weakly referenceable (a dict, a path): build every time
        return Candidates(runs, score_precision)
    if cached is not None and score_precision in cached:
        return cached[score_precision]
    made = Candidates(runs, score_precision)
    _CANDIDATES.setdefault(runs, {})[score_precision] = made
    return made


def _ours(strategy: Any) -> bool:
    from ir_incomplete.judging.mtc import JudgeNext
    from ir_incomplete.judging.pools import _ArmPool, _StaticPool

    return isinstance(strategy, (_ArmPool, _StaticPool, JudgeNext))


def _by_order(strategy: Any, state: Any, candidates: Candidates) -> np.ndarray:
    """``1 / place in its topic`` of the pairs one ``next_batch`` of every candidate hands out."""
    batch = strategy.next_batch(state, max(candidates.n_pairs, 1))
    out = np.zeros(candidates.n_pairs)
    if len(batch) == 0:
        return out
    pair = candidates.pair_index(batch["query_id"].to_numpy(), batch["doc_id"].to_numpy())
    pair = pair[pair >= 0]
    pair = pair[~pd.Series(pair).duplicated().to_numpy()]
    topic = candidates.pair_topic[pair]
    place = pd.Series(topic).groupby(topic).cumcount().to_numpy() + 1
    out[pair] = 1.0 / place
    return out


def strategy_prior(strategy: Any, runs: Any, qrels: Any = None, *, score_precision: str = "float32") -> pd.DataFrame:
    """The prior a judging strategy gives every candidate pair: ``query_id, doc_id, prior`` for every
    (query, document) some run retrieves, the table :func:`ir_incomplete.judging.sample` takes as
    ``prior=`` (see the module docstring for each strategy's prior).

    ``strategy``: a :class:`~ir_incomplete.judging.strategy.Strategy` object or a method name
    (``"depth"``, ``"budget"``, ``"rrf"``, ``"rbp"``, ``"movetofront"``, ``"bandit"``, ``"judge_next"``,
    default options); ``runs``: anything :func:`ir_incomplete.evaluate` accepts; ``qrels``: the
    judgments so far (their pairs get prior 0; the adaptive strategies learn from them). A strategy of
    this package gives its prior through its ``design_prior(state)`` method; another strategy through
    the order of its ``next_batch``. Priors are ``>= 0``; a pair with prior 0 is drawn only through the
    sample's uniform floor.
    """
    strategy = _resolve(strategy)
    candidates = _candidates(runs, score_precision)
    start = None if is_empty_qrels(qrels) else qrels
    if _ours(strategy):
        state = strategy.start(candidates, start)
    else:  # as simulate() hands them the runs: {name: run frame}
        from ir_incomplete.data.prepared import PreparedRuns

        state = strategy.start(runs.frames() if isinstance(runs, PreparedRuns) else runs, start)
    method = getattr(strategy, "design_prior", None)
    values = np.asarray(method(state) if callable(method) else _by_order(strategy, state, candidates), dtype=float)
    name = getattr(strategy, "name", type(strategy).__name__)
    if values.shape != (candidates.n_pairs,):
        raise ValueError(
            f"strategy {name!r}: design_prior gave {values.shape} values for {candidates.n_pairs} candidate pairs"
        )
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
    if len(bad):
        i = int(bad[0])
        raise ValueError(f"strategy {name!r}: prior {values[i]!r} of pair {i} is not a number >= 0")
    return candidates.frame(np.arange(candidates.n_pairs), prior=values)
