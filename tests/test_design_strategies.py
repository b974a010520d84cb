"""Judging strategies as sampling designs: strategy_prior, sample(prior=strategy), sample_rounds and the
design replay of simulate, on three tiny runs whose values are worked out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import UNRELIABLE_ALLOWED, ZERO_WIDTH_ALLOWED

from ir_incomplete.judging import (
    BudgetPool,
    DepthPool,
    JudgeNext,
    MaxMeanBandit,
    MoveToFront,
    RBPPool,
    RRFPool,
    sample,
    sample_rounds,
    simulate,
    simulate_design,
    strategy_prior,
)


def _run(docs: dict[str, list[str]]) -> pd.DataFrame:
    rows = [(q, d, float(len(ds) - i)) for q, ds in docs.items() for i, d in enumerate(ds)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


RUNS = {
    "a": _run({"1": ["d1", "d2", "d3", "d4"], "2": ["e1", "e2", "e3"]}),
    "b": _run({"1": ["d2", "d1", "d5", "d6"], "2": ["e2", "e4", "e1"]}),
    "c": _run({"1": ["d1", "d5", "d2", "d7"], "2": ["e1", "e3", "e5"]}),
}
ORACLE = pd.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["d1", "d5", "e2", "e3"], "relevance": [1, 2, 1, 1]})
UNIVERSE = 12  # distinct (query, document) pairs of the runs


def _prior(strategy, qrels=None, runs=RUNS) -> dict[tuple[str, str], float]:
    table = strategy_prior(strategy, runs, qrels)
    assert list(table.columns) == ["query_id", "doc_id", "prior"]
    return {(q, d): p for q, d, p in zip(table["query_id"], table["doc_id"], table["prior"], strict=True)}


# -- strategy_prior ---------------------------------------------------------------------------------------


def test_static_pools_prior_is_their_priority():
    depth = _prior(DepthPool())
    assert depth[("1", "d1")] == depth[("1", "d2")] == 1.0  # best rank 1
    assert depth[("1", "d5")] == 0.5 and depth[("1", "d3")] == pytest.approx(1 / 3)
    assert depth[("1", "d4")] == depth[("1", "d6")] == depth[("1", "d7")] == 0.25
    assert depth[("2", "e4")] == 0.5 and depth[("2", "e5")] == pytest.approx(1 / 3)
    cut = _prior(DepthPool(2))  # pairs below the pool's depth: 0
    assert cut[("1", "d5")] == 0.5 and cut[("1", "d3")] == 0.0 and cut[("1", "d7")] == 0.0
    # round-robin places in topic 1: d1, d2, d5 (c's rank 2), d3, d4, d6, d7
    budget = _prior(BudgetPool())
    places = {"d1": 1, "d2": 2, "d5": 3, "d3": 4, "d4": 5, "d6": 6, "d7": 7}
    for doc, place in places.items():
        assert budget[("1", doc)] == pytest.approx(1 / place)
    assert _prior(BudgetPool(2))[("1", "d5")] == 0.0
    rrf = _prior(RRFPool(k=2))
    assert rrf[("1", "d1")] == pytest.approx(1 / 3 + 1 / 4 + 1 / 3)  # ranks 1, 2, 1
    assert rrf[("1", "d6")] == pytest.approx(1 / 6)
    rbp = _prior(RBPPool(p=0.8))
    assert rbp[("1", "d2")] == pytest.approx(0.2 * 0.8 + 0.2 + 0.2 * 0.8**2)  # ranks 2, 1, 3


def test_arm_strategies_prior_is_the_arm_weight_over_the_unjudged_place():
    start = _prior(MoveToFront())  # every arm weighs 1 at the start
    assert start[("1", "d1")] == pytest.approx(1 + 1 / 2 + 1)
    assert start[("1", "d5")] == pytest.approx(1 / 3 + 1 / 2)
    bandit = _prior(MaxMeanBandit())  # every arm 1/2 at the start
    assert bandit == pytest.approx({k: v / 2 for k, v in start.items()})
    # d3 judged relevant: only run a retrieves it, its arm on topic 1 becomes (1+1)/(2+1) = 2/3
    judged = pd.DataFrame({"query_id": ["1"], "doc_id": ["d3"], "relevance": [1]})
    after = _prior(MaxMeanBandit(), judged)
    assert after[("1", "d3")] == 0.0
    assert after[("1", "d4")] == pytest.approx(2 / 3 / 3)  # a's third unjudged document
    assert after[("1", "d2")] == pytest.approx(2 / 3 / 2 + 1 / 2 / 1 + 1 / 2 / 3)
    assert after[("2", "e1")] == bandit[("2", "e1")]  # another topic: unchanged
    # d4 judged not relevant: run a's weight 1 / (1 + 1)
    miss = _prior(MoveToFront(), judged.assign(doc_id="d4", relevance=0))
    assert miss[("1", "d1")] == pytest.approx(1 / 2 + 1 / 2 + 1)
    assert miss[("1", "d4")] == 0.0


def test_judge_next_prior_is_its_criterion():
    runs = {name: pd.concat([run, _run({"3": ["f1", "f2"]})]) for name, run in RUNS.items()}
    strategy = JudgeNext("AP")
    prior = _prior(strategy, runs=runs)
    state = strategy.start(runs)
    criterion = strategy.criterion(state)
    table = strategy_prior("judge_next", runs)
    assert table["prior"].to_numpy() == pytest.approx(criterion)
    # every run ranks f1 first and f2 second: no judgment of topic 3 can reorder the runs
    assert prior[("3", "f1")] == pytest.approx(0.0, abs=1e-12) and prior[("3", "f2")] == pytest.approx(0.0, abs=1e-12)
    assert min(v for (q, _), v in prior.items() if q != "3") > 0
    judged = pd.DataFrame({"query_id": ["1"], "doc_id": ["d2"], "relevance": [0]})
    after = _prior(strategy, judged, runs)
    assert after[("1", "d2")] == 0.0 and after[("1", "d1")] != prior[("1", "d1")]


class _Reverse:
    """A strategy of another package: hands out every run's documents in reverse id order."""

    name = "reverse"

    def start(self, runs, qrels=None):
        frame = pd.concat(runs.values())[["query_id", "doc_id"]].drop_duplicates()
        return frame.sort_values(["query_id", "doc_id"], ascending=[True, False])

    def next_batch(self, state, n):
        return state.head(n)

    def update(self, state, judgments):
        return None


def test_another_strategy_prior_is_one_over_its_place_in_the_topic():
    prior = _prior(_Reverse())
    assert prior[("1", "d7")] == 1.0 and prior[("1", "d6")] == 0.5 and prior[("1", "d1")] == pytest.approx(1 / 7)
    assert prior[("2", "e5")] == 1.0 and prior[("2", "e1")] == pytest.approx(1 / 5)


def test_strategy_prior_refuses_what_is_no_strategy():
    with pytest.raises(TypeError, match="is not a judging strategy"):
        strategy_prior(object(), RUNS)
    with pytest.raises(ValueError, match="method='best' is not a judging method"):
        strategy_prior("best", RUNS)


# -- sample(prior=strategy) -------------------------------------------------------------------------------


def test_sample_takes_a_strategy_as_its_prior_seeded():
    one = sample(RUNS, 5, depth=4, prior=MaxMeanBandit(), seed=7)
    assert one.equals(sample(RUNS, 5, depth=4, prior=MaxMeanBandit(), seed=7))
    assert one.attrs["prior"] == "bandit"
    table = strategy_prior(MaxMeanBandit(), RUNS)
    assert one.equals(sample(RUNS, 5, depth=4, prior=table, seed=7))
    by_name = sample(RUNS, 5, depth=4, prior="judge_next", seed=7)
    assert by_name.equals(sample(RUNS, 5, depth=4, prior=JudgeNext("AP"), seed=7))
    assert not by_name.equals(sample(RUNS, 5, depth=4, prior="judge_next", seed=8))
    # without the uniform share and below the cap, pi = budget · prior / Σ prior (depth: 1 / best rank)
    drawn = sample(RUNS, 3, depth=4, prior=DepthPool(), seed=0, uniform=0.0)
    prior = _prior(DepthPool())
    total = sum(prior.values())
    assert len(drawn) > 0
    for q, d, pi in zip(drawn["query_id"], drawn["doc_id"], drawn["pi"], strict=True):
        assert pi == pytest.approx(3 * prior[(q, d)] / total)


def test_sample_strategy_prior_follows_the_judgments_of_the_previous_round():
    first = sample(RUNS, 4, depth=4, prior="judge_next", seed=1)
    grades = first[["query_id", "doc_id"]].assign(relevance=1)
    second = sample(RUNS, 4, depth=4, prior="judge_next", seed=2, previous=first, judgments=grades)
    flipped = sample(RUNS, 4, depth=4, prior="judge_next", seed=2, previous=first, judgments=grades.assign(relevance=0))
    new = second["round"] == 2
    assert (second.loc[~new, "pi"] == 1.0).all()
    # both draws deal the same random numbers (same seed, round and judged pairs): rows of another number, or
    # other pi, come from other inclusion probabilities
    a, b = second.loc[new, "pi"].to_numpy(), flipped.loc[flipped["round"] == 2, "pi"].to_numpy()
    assert len(a) != len(b) or not np.allclose(a, b)


def test_sample_refuses_an_unknown_prior_name():
    with pytest.raises(ValueError) as info:
        sample(RUNS, 4, prior="best")
    assert str(info.value) == (
        "prior='best' is not valid; choices: ap+rbp, ap, rbp-fusion, rrf, uniform, a judging method (depth, "
        "budget, rbp, movetofront, bandit, judge_next), a Strategy object or a table query_id, doc_id, prior"
    )


# -- sample_rounds ----------------------------------------------------------------------------------------


def test_sample_rounds_spends_the_budget_round_by_round():
    result = sample_rounds(RUNS, 6, 3, ORACLE, prior="judge_next", depth=4, seed=3)
    design, judgments, rounds = result
    assert list(rounds["round"]) == [1, 2, 3] and list(rounds["budget"]) == [2, 2, 2]
    assert rounds["expected"].to_numpy() == pytest.approx([2.0, 2.0, 2.0])  # Σ pi of each round = its budget
    assert design.attrs["budget"] == 6 and design.attrs["round_budgets"] == [2, 2, 2]
    assert rounds["total"].iloc[-1] == len(design) == len(judgments) == rounds["judged"].sum()
    assert set(design["round"]) <= {1, 2, 3}
    earlier = design["round"] < 3
    assert (design.loc[earlier, "pi"] == 1.0).all() and (design.loc[earlier, "stratum"] == "judged").all()
    assert (design.loc[~earlier, "stratum"] == "sampled").all()
    # the judgments are the oracle's (0 where it has none) and the round counts match
    merged = judgments.merge(ORACLE, on=["query_id", "doc_id"], how="left", suffixes=("", "_oracle"))
    assert (merged["relevance"] == merged["relevance_oracle"].fillna(0)).all()
    assert list(design["round"].value_counts().sort_index()) == list(rounds["judged"][rounds["judged"] > 0])
    assert rounds["relevant"].sum() == int((judgments["relevance"] >= 1).sum())
    again = sample_rounds(RUNS, 6, 3, ORACLE, prior="judge_next", depth=4, seed=3)
    assert again.design.equals(design) and again.judgments.equals(judgments)


def test_one_round_is_sample_itself_and_a_callable_judges():
    result = sample_rounds(RUNS, 5, 1, lambda pairs: np.ones(len(pairs), dtype=int), prior="ap", depth=4, seed=9)
    assert result.design.equals(sample(RUNS, 5, depth=4, prior="ap", seed=9))
    assert (result.judgments["relevance"] == 1).all()
    with pytest.warns(UserWarning, match=r"budget=12 is more than the 0 pairs of the universe not judged already"):
        everything = sample_rounds(RUNS, 24, [12, 12], ORACLE, depth=4)  # round 1 judges every pair
    assert len(everything.design) == UNIVERSE and list(everything.rounds["judged"]) == [UNIVERSE, 0]


def test_sample_rounds_refuses_bad_rounds_and_bad_grades():
    with pytest.raises(ValueError, match=r"rounds=\[2, 2\] sum to 4, not budget=5"):
        sample_rounds(RUNS, 5, [2, 2], ORACLE)
    with pytest.raises(ValueError, match="rounds=6 is more than budget=5"):
        sample_rounds(RUNS, 5, 6, ORACLE)
    with pytest.raises(ValueError, match=r"the judge returned 1 grades for \d+ pairs; return one per pair"):
        sample_rounds(RUNS, 5, 1, lambda pairs: [1], depth=4)
    with pytest.raises(ValueError, match=r"the judge's grade -1 for \(1, d\d\) is not an integer >= 0"):
        sample_rounds(RUNS, 5, 1, lambda pairs: [-1] * len(pairs), depth=4)


# -- simulate(design=...) ---------------------------------------------------------------------------------

# with every pair judged (relevant: d1, d5 of topic 1, e2, e3 of topic 2): AP@4 of a = mean(1/2,
# (1/2 + 2/3)/2), b = mean((1/2 + 2/3)/2, 1/2), c = mean((1 + 1)/2, (1/2)/2); P@2 of a = mean(1/2, 1/2),
# b = mean(1/2, 1/2), c = mean(1, 1/2)
TRUTH = {
    "AP@4": {"a": (0.5 + 7 / 12) / 2, "b": (7 / 12 + 0.5) / 2, "c": (1.0 + 0.25) / 2},
    "P@2": {"a": 0.5, "b": 0.5, "c": 0.75},
}


def test_a_complete_design_is_exact():
    out = simulate(RUNS, ORACLE, design=dict(budget=UNIVERSE, depth=4, prior="ap"), repeats=2, measures=["AP@4", "P@2"])
    assert list(out.columns) == [
        "repeat", "seed", "measure", "judgments", "relevant", "tau", "tau_ap", "rmse", "bias",
        "coverage", "pair_coverage", "width", "pair_width",
    ]  # fmt: skip
    assert list(out["repeat"]) == [0, 0, 1, 1] and list(out["measure"]) == ["AP@4", "P@2"] * 2
    reference = out.attrs["reference"]
    for measure, values in TRUTH.items():
        assert reference[measure].to_dict() == pytest.approx(values, abs=1e-12)
    assert (out["judgments"] == UNIVERSE).all() and (out["relevant"] == 4).all()
    assert out["tau"].to_numpy() == pytest.approx(1.0)
    assert out[["rmse", "bias", "width", "pair_width"]].to_numpy() == pytest.approx(0.0, abs=1e-12)
    assert (out["coverage"] == 1.0).all() and (out["pair_coverage"] == 1.0).all()


@UNRELIABLE_ALLOWED
@ZERO_WIDTH_ALLOWED
def test_a_sampled_design_replay_equals_estimating_it_directly():
    from ir_incomplete import estimate

    design = dict(budget=6, depth=4, rounds=2, prior="bandit", uniform=0.2)
    out = simulate_design(RUNS, ORACLE, design, repeats=2, seed=4, measures=["P@2"], interval=0.8)
    assert list(out["seed"]) == [4, 5] and out.attrs["design"]["prior"] == "bandit"
    for row in out.itertuples():
        drawn = sample_rounds(RUNS, 6, 2, ORACLE, depth=4, prior="bandit", uniform=0.2, seed=row.seed)
        means = estimate(RUNS, drawn.judgments, drawn.design, ["P@2"], interval=0.8).set_index("run")
        diffs = estimate(RUNS, drawn.judgments, drawn.design, ["P@2"], interval=0.8, pairs=True)
        truth = pd.Series(TRUTH["P@2"])
        error = means["value"] - truth
        assert row.judgments == len(drawn.judgments)
        assert row.rmse == pytest.approx(float(np.sqrt((error**2).mean())))
        assert row.bias == pytest.approx(float(error.mean()))
        assert row.coverage == pytest.approx(float(((means["lo"] <= truth) & (truth <= means["hi"])).mean()))
        true_diff = truth[diffs["run_a"]].to_numpy() - truth[diffs["run_b"]].to_numpy()
        held = (diffs["lo"].to_numpy() <= true_diff) & (true_diff <= diffs["hi"].to_numpy())
        assert row.pair_coverage == pytest.approx(held.mean())
        assert row.width == pytest.approx(float((means["hi"] - means["lo"]).mean()))


def test_simulate_keeps_its_strategy_replay_and_refuses_mixing_the_two():
    curve = simulate(RUNS, ORACLE, "depth", 4, 2, measures=["P@2"])
    assert list(curve["judgments"]) == [2, 4]
    with pytest.raises(ValueError, match="design= replays a sampling design .*; strategy= belongs"):
        simulate(RUNS, ORACLE, "depth", design=dict(budget=4))
    with pytest.raises(TypeError, match="simulate\\(\\) needs strategy, budget and step .*; budget is missing"):
        simulate(RUNS, ORACLE, "depth")
    with pytest.raises(ValueError, match="repeats= belongs to the replay of a sampling design"):
        simulate(RUNS, ORACLE, "depth", 4, 2, repeats=3)
    with pytest.raises(ValueError, match="design has no setting 'step'; settings: budget, rounds, prior"):
        simulate(RUNS, ORACLE, design=dict(budget=4, step=2))
    with pytest.raises(ValueError, match="design needs a budget"):
        simulate_design(RUNS, ORACLE, dict(rounds=2))
