"""Replays of designs and rounds: one universe for estimates and their truth (design_truth), oracles whose
query ids do not match the runs, the design settings of simulate_design, and judgments made before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_design_strategies import RUNS, _run  # the same three small runs

from ir_incomplete import estimate, evaluate, read_trec_qrels, read_trec_run
from ir_incomplete.judging import design_truth, sample, sample_rounds, simulate, simulate_design
from ir_incomplete.judging.simulation import DESIGN_KEYS

ROOT = Path(__file__).resolve().parents[1]
COVID = ROOT.parent / "shared" / "data" / "trec-covid-round1"


#: d9 and e9 are retrieved by no run; the oracle judges d9 nonrelevant
ORACLE = pd.DataFrame(
    {
        "query_id": ["1", "1", "1", "2", "2", "2"],
        "doc_id": ["d1", "d5", "d9", "e2", "e3", "e9"],
        "relevance": [1, 2, 0, 1, 1, 0],
    }
)
#: judgments made before: two pairs outside the runs' top 4 (d9, e9), one inside (d2) that the oracle does
#: not judge, all graded as given (d9 and e9 otherwise than the oracle)
START = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["d9", "d2", "e9"], "relevance": [1, 1, 2]})
UNIVERSE = 12  # distinct (query, document) pairs of the runs' top 4
MEASURES = ["AP@4", "nDCG@2", "P@2", "R", "RBP(p=0.5)@4"]


def _census(**kwargs) -> pd.DataFrame:
    with pytest.warns(UserWarning, match="every pair is judged"):
        return sample(RUNS, 100, depth=4, prior="ap", **kwargs)


def _graded(design: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    out = design[["query_id", "doc_id"]].merge(qrels, how="left", on=["query_id", "doc_id"])
    return out.assign(relevance=out["relevance"].fillna(0).astype(int))


# -- design_truth: the target of estimate(), the same universe ----------------------------------------


def test_design_truth_counts_the_judgments_made_before_as_estimate_does():
    complete = pd.concat([ORACLE[~ORACLE["doc_id"].isin(["d9", "e9"])], START], ignore_index=True)
    design = _census(qrels=START)
    assert len(design) == UNIVERSE + 2 and (design["pi"] == 1.0).all()
    truth = design_truth(RUNS, complete, design, MEASURES)
    assert list(truth.columns) == ["run", "measure", "value"]
    assert truth.attrs["universe"] == UNIVERSE + 2 and truth.attrs["relevant"] == 7
    got = estimate(RUNS, _graded(design, complete), design, MEASURES)
    assert list(got["run"]) == list(truth["run"]) and list(got["measure"]) == list(truth["measure"])
    assert np.abs(got["value"].to_numpy() - truth["value"].to_numpy()).max() <= 1e-12
    value = truth.set_index(["measure", "run"])["value"]
    # by hand: relevant d1, d2 (start), d5 (grade 2), d9 (start) of topic 1; e2, e3, e9 (start, grade 2) of
    # topic 2. R counts d9 and e9 though no run retrieves them (as trec_eval's R counts every relevant
    # document of the qrels)
    assert value["R"].to_dict() == pytest.approx({"a": 3.5, "b": 3.5, "c": 3.5}, abs=1e-12)
    # AP@4 of run a: topic 1 d1, d2 relevant at ranks 1, 2 -> (1 + 1) / 4; topic 2 e2, e3 at 2, 3 ->
    # (1/2 + 2/3) / 3
    assert value["AP@4", "a"] == pytest.approx((2 / 4 + (1 / 2 + 2 / 3) / 3) / 2, abs=1e-12)
    # the runs' top 4 alone (what simulate_design took for the truth) gives other numbers
    alone = design_truth(RUNS, complete, sample(RUNS, 12, depth=4, prior="ap"), ["R"])
    assert alone["value"].to_numpy() == pytest.approx([2.5, 2.5, 2.5], abs=1e-12)


def test_design_truth_equals_the_evaluation_with_the_universe_judged():
    """An independent computation: evaluate() (trec_eval's definitions) with the complete judgments
    restricted to the universe, averaged over the design's topics."""
    complete = pd.concat([ORACLE[~ORACLE["doc_id"].isin(["d9", "e9"])], START], ignore_index=True)
    design = _census(qrels=START)
    measures = ["AP@4", "nDCG@2", "P@2", "NumRel"]
    truth = design_truth(RUNS, complete, design, ["AP@4", "nDCG@2", "P@2", "R"])
    judged = complete.merge(design[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    per_query = evaluate(RUNS, judged, measures, per_query=True)
    want = per_query.groupby(["run", "measure"])["value"].sum() / 2  # the design's 2 topics
    for ours, theirs in zip(["AP@4", "nDCG@2", "P@2", "R"], measures, strict=True):
        part = truth[truth["measure"] == ours].set_index("run")["value"]
        assert part.to_numpy() == pytest.approx(want.xs(theirs, level="measure")[part.index].to_numpy(), abs=1e-12)


def test_design_truth_on_trec_covid_with_round_one_judgments_outside_the_top_depth():
    if not COVID.is_dir():
        pytest.skip("../shared/data/trec-covid-round1 is absent")
    topics = {"1", "2", "3", "4", "5"}
    runs = {}
    for name in ["BBGhelani1", "BERT", "10x10.prf.unipd.it"]:
        run = read_trec_run(COVID / "runs" / f"{name}.gz")
        runs[name] = run[run["query_id"].isin(topics)]
    round1 = read_trec_qrels(COVID / "qrels.round1.txt.gz")
    complete = read_trec_qrels(COVID / "qrels.complete-topics1-30.txt.gz")
    round1, complete = round1[round1["query_id"].isin(topics)], complete[complete["query_id"].isin(topics)]
    with pytest.warns(UserWarning, match="every pair is judged"):
        census = sample(runs, 5000, depth=100, qrels=round1, seed=1)
        top = sample(runs, 5000, depth=100, seed=1)[["query_id", "doc_id"]]  # the runs' top 100 alone
    outside = census.merge(top, how="left", indicator=True)
    outside = outside[outside["_merge"] == "left_only"]
    relevant_outside = outside.merge(complete[complete["relevance"] >= 1], on=["query_id", "doc_id"])
    assert len(relevant_outside) > 50  # round-1 relevant documents none of the three runs ranks in its top 100
    measures = ["AP@100", "nDCG@10", "P@10", "R", "RBP(p=0.8)@100"]
    truth = design_truth(runs, complete, census, measures)
    got = estimate(runs, _graded(census, complete), census, measures)
    assert np.abs(got["value"].to_numpy() - truth["value"].to_numpy()).max() <= 1e-12
    judged = complete.merge(census[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    per_query = evaluate(runs, judged, ["AP@100", "nDCG@10", "P@10", "NumRel"], per_query=True)
    want = per_query.groupby(["run", "measure"])["value"].sum() / len(topics)
    for ours, theirs in zip(["AP@100", "nDCG@10", "P@10", "R"], ["AP@100", "nDCG@10", "P@10", "NumRel"], strict=True):
        part = truth[truth["measure"] == ours].set_index("run")["value"]
        assert part.to_numpy() == pytest.approx(want.xs(theirs, level="measure")[part.index].to_numpy(), abs=1e-12)


def test_design_truth_per_query_other_runs_and_refusals():
    design = _census()
    truth = design_truth(RUNS, ORACLE, design, ["P@2"], per_query=True)
    assert list(truth.columns) == ["run", "query_id", "measure", "value"] and len(truth) == 6
    # a run not among those the design was drawn from: its documents outside the universe count 0
    later = {**RUNS, "z": _run({"1": ["d9", "d5"], "2": ["e3", "e8"]})}
    value = design_truth(later, ORACLE, design, ["P@2"]).set_index("run")["value"]
    assert value["z"] == pytest.approx((0.5 + 0.5) / 2, abs=1e-12)  # d9 is outside the universe: 0
    bare = design.copy()
    bare.attrs = {}
    with pytest.raises(ValueError, match="the design records no depth .*give depth="):
        design_truth(RUNS, ORACLE, bare, ["P@2"])
    assert design_truth(RUNS, ORACLE, bare, ["P@2"], depth=4)["value"].to_numpy() == pytest.approx(
        design_truth(RUNS, ORACLE, design, ["P@2"])["value"].to_numpy(), abs=1e-12
    )
    # complete judgments whose ids differ in form would make the truth 0 without a word
    with pytest.raises(ValueError, match=r"the qrels judge no document for 2 queries .*query '01' differs only"):
        design_truth(RUNS, ORACLE.assign(query_id=ORACLE["query_id"].str.zfill(2)), design, ["P@2"])
    stray = sample(RUNS, 6, depth=4, prior="ap", seed=2)
    row = stray.index[stray["pi"] < 1][0]
    stray.loc[row, "doc_id"] = "x99"
    with pytest.raises(ValueError, match=r"pair \(\d, x99\) with pi=0.\d+ is not in the top 4 of the runs"):
        design_truth(RUNS, ORACLE, stray, ["P@2"])


# -- simulate_design: estimates and truth on one universe ---------------------------------------------


@pytest.mark.parametrize("rounds", [1, 2])
def test_a_census_replay_with_judgments_outside_the_top_depth_is_exact(rounds):
    with pytest.warns(UserWarning, match="every pair is judged"):
        out = simulate_design(
            RUNS, ORACLE, dict(budget=40, depth=4, prior="ap", rounds=rounds), repeats=2, measures=MEASURES, start=START
        )
    assert out[["bias", "rmse", "width", "pair_width"]].to_numpy() == pytest.approx(0.0, abs=1e-12)
    assert (out["coverage"] == 1.0).all() and (out["pair_coverage"] == 1.0).all()
    reference = out.attrs["reference"]
    assert reference["R"].to_dict() == pytest.approx({"a": 3.5, "b": 3.5, "c": 3.5}, abs=1e-12)
    assert (out["judgments"] == UNIVERSE - 1).all()  # d2 was judged before


def test_simulate_with_design_uses_the_same_truth():
    with pytest.warns(UserWarning, match="every pair is judged"):
        out = simulate(
            RUNS, ORACLE, design=dict(budget=40, depth=4, prior="ap"), repeats=1, measures=["R"], start=START
        )
    assert out["bias"].iloc[0] == pytest.approx(0.0, abs=1e-12) and out["coverage"].iloc[0] == 1.0


def test_a_stratified_census_replay_is_exact_and_rounds_take_the_design():
    with pytest.warns(UserWarning, match="every pair is judged"):
        out = simulate_design(
            RUNS, ORACLE, dict(budget=40, depth=4, design="stratified", strata=2), repeats=1, measures=MEASURES
        )
    assert out["bias"].to_numpy() == pytest.approx(0.0, abs=1e-12) and (out["coverage"] == 1.0).all()
    assert out.attrs["design"]["design"] == "stratified"
    drawn = sample_rounds(RUNS, 6, [3, 3], ORACLE, depth=4, prior="ap", design="stratified", strata=2, seed=1)
    assert list(drawn.rounds["judged"]) == [3, 3]  # a fixed size in every round
    assert drawn.design.attrs["design"] == "stratified"


def test_start_judging_a_query_no_run_answers_is_refused():
    extra = pd.concat([START, pd.DataFrame({"query_id": ["7"], "doc_id": ["x"], "relevance": [1]})])
    with pytest.raises(ValueError, match=r"start judges 1 query that no run answers \(first: '7'\)"):
        simulate_design(RUNS, ORACLE, dict(budget=4, depth=4), repeats=1, start=extra)


# -- oracles whose query ids do not match -------------------------------------------------------------


def test_sample_rounds_refuses_an_oracle_whose_ids_differ_in_form():
    padded = ORACLE.assign(query_id=ORACLE["query_id"].str.zfill(2))
    message = (
        r"the oracle qrels \(judge=\) judge no document for 2 queries the runs answer \(first: '1', '2'\).*"
        r"their query '01' differs only in form from the runs' '1'"
    )
    with pytest.raises(ValueError, match=message):
        sample_rounds(RUNS, 5, 1, padded, depth=4)
    with pytest.raises(ValueError, match=r"judge no document for 2 queries .*'01' differs only in form"):
        simulate_design(RUNS, padded, dict(budget=5, depth=4), repeats=1)


def test_an_oracle_missing_a_query_is_refused_by_both():
    partial = ORACLE[ORACLE["query_id"] == "1"]
    with pytest.raises(ValueError, match=r"judge no document for 1 query the runs answer \(first: '2'\)"):
        sample_rounds(RUNS, 5, 1, partial, depth=4)
    with pytest.raises(ValueError, match=r"judge no document for 1 query the runs answer \(first: '2'\)"):
        simulate_design(RUNS, partial, dict(budget=5, depth=4), repeats=1)
    # only pooled-unjudged entries (-1) for a query are no judgments either
    unjudged = pd.concat([partial, pd.DataFrame({"query_id": ["2"], "doc_id": ["e1"], "relevance": [-1]})])
    with pytest.raises(ValueError, match=r"judge no document for 1 query the runs answer \(first: '2'\)"):
        sample_rounds(RUNS, 5, 1, unjudged, depth=4)
    # a callable judge is the caller's business, and an oracle's extra queries are ignored
    assert len(sample_rounds(RUNS, 5, 1, lambda pairs: np.zeros(len(pairs), int), depth=4).judgments)
    more = pd.concat([ORACLE, pd.DataFrame({"query_id": ["9"], "doc_id": ["x"], "relevance": [1]})])
    assert len(sample_rounds(RUNS, 5, 1, more, depth=4).judgments)


# -- the settings of a design replay -------------------------------------------------------------------


@pytest.mark.parametrize("depth", [0, -1, 2.5, "10", True, None, np.float64(4.0)])
def test_a_bad_depth_is_refused_naming_it(depth):
    with pytest.raises(ValueError, match=r"^depth=.* (is not an integer|is out of range); expected an integer >= 1"):
        simulate_design(RUNS, ORACLE, dict(budget=5, depth=depth), repeats=1)
    with pytest.raises(ValueError, match=r"^depth="):
        simulate(RUNS, ORACLE, design=dict(budget=5, depth=depth), repeats=1)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (dict(budget=0), r"^budget=0 is out of range"),
        (dict(budget="5"), r"^budget='5' is not an integer"),
        (dict(budget=5, rounds=0), r"^rounds=0 is out of range"),
        (dict(budget=5, rounds="2"), r"^rounds='2' is not valid"),
        (dict(budget=5, uniform=2), r"^uniform=2 is not a share in \[0, 1\]"),
        (dict(budget=5, uniform="0.1"), r"^uniform='0.1' is not a share"),
        (dict(budget=5, certain=-1), r"^certain=-1 is not a number of judgments >= 0"),
        (dict(budget=5, certain=1.5), r"^certain=1.5 is not a number of judgments"),
        (dict(budget=5, prior="nope"), r"^prior='nope' is not valid; choices: ap\+rbp"),
        (dict(budget=5, design="cluster"), r"^design='cluster' is not valid; choices: poisson, stratified"),
        (dict(budget=5, design="stratified", strata=0), r"^strata=0 is out of range"),
    ],
)
def test_every_design_setting_is_checked_as_sample_checks_it(setting, message):
    with pytest.raises(ValueError, match=message):
        simulate_design(RUNS, ORACLE, setting, repeats=1)


def test_an_unknown_design_setting_lists_the_settings():
    assert DESIGN_KEYS == (
        *("budget", "rounds", "prior", "depth", "uniform", "certain", "design", "strata"),
        *("allocation", "min_per_topic"),
    )
    with pytest.raises(ValueError, match="design has no setting 'seed'; settings: " + ", ".join(DESIGN_KEYS)):
        simulate_design(RUNS, ORACLE, dict(budget=5, seed=3), repeats=1)


def test_the_strategy_replay_reaches_its_reference_with_start_judgments_graded_otherwise():
    """simulate(): START grades d9 and e9 otherwise than the oracle; with every pair judged the scores are
    the reference (before: the reference ignored the start grades, RMSE 0.20 of P@2 at the end)."""
    curve = simulate(RUNS, ORACLE, "depth", 12, 12, measures=["P@2", "AP"], start=START)
    assert curve["rmse"].to_numpy() == pytest.approx([0.0, 0.0], abs=1e-12)
    # P@2 with d2 relevant (start): a = (1 + 1/2) / 2, b = (1 + 1/2) / 2, c = (1 + 1/2) / 2
    assert curve.attrs["reference"]["P@2"].to_dict() == pytest.approx({"a": 0.75, "b": 0.75, "c": 0.75})
    extra = pd.concat([START, pd.DataFrame({"query_id": ["7"], "doc_id": ["x"], "relevance": [1]})])
    with pytest.raises(ValueError, match=r"start judges 1 query that no run answers \(first: '7'\)"):
        simulate(RUNS, ORACLE, "depth", 12, 12, start=extra)


def test_design_truth_refuses_another_score_precision_as_estimate_does():
    design = _census()
    with pytest.raises(ValueError, match=r"score_precision='float64' differs from the design's 'float32'"):
        estimate(RUNS, _graded(design, ORACLE), design, ["P@2"], score_precision="float64")
    with pytest.raises(ValueError, match=r"score_precision='float64' differs from the design's 'float32'"):
        design_truth(RUNS, ORACLE, design, ["P@2"], score_precision="float64")


def test_certain_beyond_the_first_round_names_the_round_budget():
    with pytest.raises(
        ValueError, match=r"certain=4 is more than round 1's budget 3 \(budget=6 in 2 rounds \[3, 3\]\)"
    ):
        sample_rounds(RUNS, 6, 2, ORACLE, depth=4, certain=4)
    with pytest.raises(ValueError, match=r"certain=4 is more than round 1's budget 3"):
        simulate_design(RUNS, ORACLE, dict(budget=6, rounds=2, depth=4, certain=4), repeats=1)
    drawn = sample_rounds(RUNS, 6, [5, 1], ORACLE, depth=4, certain=4)  # round 1 takes the 4 and draws 1
    assert drawn.rounds["judged"].iloc[0] >= 4 and (drawn.design["round"] == 1).sum() >= 4
