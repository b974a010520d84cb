"""Judgment sets: build pools and samples, replay judging methods, measure judge agreement.

* pools (:mod:`~ir_incomplete.judging.pools`): :func:`pool` (``depth``, ``budget``, ``rrf``, ``rbp``) and
  the same methods plus the adaptive :class:`MoveToFront` and :class:`MaxMeanBandit` as strategies
  (:class:`~ir_incomplete.judging.strategy.Strategy`: ``start``, ``next_batch``, ``update``);
* samples (:mod:`~ir_incomplete.judging.sampling`): :func:`stratified_sample` and :func:`to_prels`, the
  sampled qrels that ``xinfAP``, ``infNDCG`` and ``iP`` read;
* designs (:mod:`~ir_incomplete.judging.designs`): :func:`sample` draws a probability sample of pairs to
  judge, each with its inclusion probability, for the design-based :func:`ir_incomplete.estimate`, and
  :func:`to_judge` the pairs of it that this round sends to assessors;
  :func:`strategy_prior` turns any judging strategy into the design's prior
  (:mod:`~ir_incomplete.judging.priors`); :func:`sample_rounds` draws and judges a design in rounds,
  each round's prior updated with the judgments so far (:mod:`~ir_incomplete.judging.rounds`);
* simulation (:mod:`~ir_incomplete.judging.simulation`): :func:`simulate` replays any strategy against an
  oracle qrels (judgments spent → τ, τ_AP, RMSE), :func:`plot_simulation` draws the curves;
  :func:`simulate_design` replays a sampling design (τ, RMSE, bias, coverage and width of the intervals)
  against the truth :func:`design_truth` builds (the value complete judgment of the design's universe
  gives, what :func:`ir_incomplete.estimate` targets);
* agreement (:mod:`~ir_incomplete.judging.judge_agreement`): :func:`agreement` of two judgment sets (Cohen's κ,
  Krippendorff's α, confusion matrix, leaderboard τ);
* judge next (:mod:`~ir_incomplete.judging.mtc`): :func:`judge_next` and the :class:`JudgeNext`
  strategy choose the unjudged pairs whose judgments most change the measure differences between runs;
* the ``ir_incomplete pool``, ``agreement`` and ``judge-next`` command lines are :mod:`ir_incomplete.cli.judging`.
"""

from ir_incomplete.estimation.truth import design_truth
from ir_incomplete.judging._candidates import Candidates
from ir_incomplete.judging.designs import sample, to_judge, write_design
from ir_incomplete.judging.judge_agreement import agreement, cohen_kappa, krippendorff_alpha
from ir_incomplete.judging.mtc import JudgeNext, judge_next
from ir_incomplete.judging.pools import (
    ADAPTIVE_METHODS,
    POOL_METHODS,
    BudgetPool,
    DepthPool,
    MaxMeanBandit,
    MoveToFront,
    RBPPool,
    RRFPool,
    make_strategy,
    pool,
    read_pool,
    write_pool,
)
from ir_incomplete.judging.priors import strategy_prior
from ir_incomplete.judging.rounds import DesignRounds, sample_rounds
from ir_incomplete.judging.sampling import stratified_sample, to_prels
from ir_incomplete.judging.simulation import plot_simulation, simulate, simulate_design
from ir_incomplete.judging.strategy import Strategy

__all__ = [
    "Candidates",
    "sample",
    "to_judge",
    "write_design",
    "strategy_prior",
    "sample_rounds",
    "DesignRounds",
    "Strategy",
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
    "read_pool",
    "write_pool",
    "stratified_sample",
    "to_prels",
    "simulate",
    "simulate_design",
    "design_truth",
    "plot_simulation",
    "agreement",
    "cohen_kappa",
    "krippendorff_alpha",
    "judge_next",
    "JudgeNext",
]
