"""Pools and judging strategies (ir_incomplete.judging.pools) on hand-made runs, checked by hand, and the
depth-k pool sizes of TREC-COVID round 1."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from ir_incomplete.judging import (
    Candidates,
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


def _run(rows):
    """``[(query, doc), ...]`` best first → a run DataFrame with descending scores."""
    n = len(rows)
    return pd.DataFrame(
        {"query_id": [q for q, _ in rows], "doc_id": [d for _, d in rows], "score": np.arange(n, 0, -1.0)}
    )


@pytest.fixture
def runs():
    return {
        "A": _run([("1", "d1"), ("1", "d2"), ("1", "d3"), ("2", "e1"), ("2", "e2")]),
        "B": _run([("1", "d2"), ("1", "d4"), ("1", "d1"), ("2", "e3"), ("2", "e1")]),
        "C": _run([("1", "d5"), ("1", "d1"), ("1", "d6"), ("2", "e2"), ("2", "e3")]),
    }


def _pairs(frame):
    return sorted(zip(frame["query_id"], frame["doc_id"], strict=True))


# ---------------------------------------------------------------------------------------------------
# static pools
# ---------------------------------------------------------------------------------------------------
def test_depth_pool_is_the_union_of_top_k(runs):
    assert _pairs(pool(runs, "depth", depth=1)) == [
        ("1", "d1"),
        ("1", "d2"),
        ("1", "d5"),
        ("2", "e1"),
        ("2", "e2"),
        ("2", "e3"),
    ]
    two = _pairs(pool(runs, "depth", depth=2))
    assert two == [("1", "d1"), ("1", "d2"), ("1", "d4"), ("1", "d5"), ("2", "e1"), ("2", "e2"), ("2", "e3")]


def test_depth_pool_of_some_runs(runs):
    assert _pairs(pool(runs, "depth", depth=2, pool_runs=["B"])) == [("1", "d2"), ("1", "d4"), ("2", "e1"), ("2", "e3")]


def test_depth_pool_ranks_by_score_not_by_row_order(runs):
    shuffled = {name: run.sample(frac=1.0, random_state=3) for name, run in runs.items()}
    assert _pairs(pool(shuffled, "depth", depth=1)) == _pairs(pool(runs, "depth", depth=1))


def test_budget_pool_round_robin_in_rank_order(runs):
    # topic 1 visits A:d1, B:d2, C:d5, A:d2 (seen), B:d4 ...; topic 2 visits A:e1, B:e3, C:e2
    assert _pairs(pool(runs, "budget", budget=2)) == [("1", "d1"), ("1", "d2"), ("2", "e1"), ("2", "e3")]
    four = _pairs(pool(runs, "budget", budget=4))
    assert four == [("1", "d1"), ("1", "d2"), ("1", "d4"), ("1", "d5"), ("2", "e1"), ("2", "e2"), ("2", "e3")]


def test_rrf_scores_by_hand(runs):
    c = Candidates(runs)
    scores = RRFPool(k=2).scores(c)
    got = dict(zip(_pairs(c.frame(np.arange(c.n_pairs))), scores, strict=True))
    # d1: A rank 1, B rank 3, C rank 2; d4: B rank 2; e3: B rank 1, C rank 2
    assert got[("1", "d1")] == pytest.approx(1 / 3 + 1 / 5 + 1 / 4, abs=1e-15)
    assert got[("1", "d4")] == pytest.approx(1 / 4, abs=1e-15)
    assert got[("2", "e3")] == pytest.approx(1 / 3 + 1 / 4, abs=1e-15)


def test_rrf_pool_takes_the_best_scores_across_topics(runs):
    # scores: d1 1/3+1/5+1/4 = .783; d2, e1, e2, e3 all 1/3+1/4 = .583 (ties: topic, then doc id); d5 .333
    got = _pairs(pool(runs, "rrf", budget=3))
    assert got == [("1", "d1"), ("1", "d2"), ("2", "e1")]
    per_topic = _pairs(pool(runs, "rrf", budget=1, per_topic=True))
    assert per_topic == [("1", "d1"), ("2", "e1")]


def test_rbp_scores_by_hand(runs):
    c = Candidates(runs)
    scores = RBPPool(p=0.5).scores(c)
    got = dict(zip(_pairs(c.frame(np.arange(c.n_pairs))), scores, strict=True))
    # weight (1 - p) p^(rank - 1): ranks 1, 2, 3 → .5, .25, .125
    assert got[("1", "d1")] == pytest.approx(0.5 + 0.125 + 0.25, abs=1e-15)
    assert got[("1", "d6")] == pytest.approx(0.125, abs=1e-15)


def test_pool_leaves_out_judged_pairs_and_counts_new_judgments(runs):
    judged = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["d1", "e3"], "relevance": [1, 0]})
    assert _pairs(pool(runs, "rrf", budget=3, qrels=judged)) == [("1", "d2"), ("2", "e1"), ("2", "e2")]
    assert _pairs(pool(runs, "rrf", budget=3)) == [("1", "d1"), ("1", "d2"), ("2", "e1")]
    depth = _pairs(pool(runs, "depth", depth=1, qrels=judged))
    assert depth == [("1", "d2"), ("1", "d5"), ("2", "e1"), ("2", "e2")]


def test_budget_pool_counts_new_judgments_per_topic(runs):
    judged = pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"], "relevance": [0]})
    # topic 1 without d1: d2, d5, d4, ...; topic 2 unchanged: e1, e3
    got = _pairs(pool(runs, "budget", budget=2, qrels=judged))
    assert got == [("1", "d2"), ("1", "d5"), ("2", "e1"), ("2", "e3")]


def test_pooled_but_unjudged_entries_stay_in_the_pool(runs):
    marked = pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"], "relevance": [-1]})
    assert ("1", "d1") in _pairs(pool(runs, "depth", depth=1, qrels=marked))


def test_pool_does_not_modify_inputs(runs):
    before = {k: v.copy() for k, v in runs.items()}
    judged = pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"], "relevance": [1]})
    judged_before = judged.copy()
    pool(runs, "rrf", budget=3, qrels=judged)
    for name, run in runs.items():
        pd.testing.assert_frame_equal(run, before[name])
    pd.testing.assert_frame_equal(judged, judged_before)


# ---------------------------------------------------------------------------------------------------
# static orders as strategies
# ---------------------------------------------------------------------------------------------------
def test_depth_strategy_order_is_depth_by_depth(runs):
    strategy = DepthPool()
    state = strategy.start(runs)
    first = strategy.next_batch(state, 6)
    assert _pairs(first) == _pairs(pool(runs, "depth", depth=1))
    assert list(first["priority"]) == [1.0] * 6
    second = strategy.next_batch(state, 100)
    assert set(_pairs(second)) == set(_pairs(pool(runs, "depth", depth=3))) - set(_pairs(first))
    assert len(strategy.next_batch(state, 5)) == 0  # exhausted


def test_static_strategy_skips_judged_and_issued_pairs(runs):
    strategy = RRFPool()
    state = strategy.start(runs, pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"], "relevance": [2]}))
    batch = strategy.next_batch(state, 2)
    assert _pairs(batch) == [("1", "d2"), ("2", "e1")]
    again = strategy.next_batch(state, 1)  # handed out, not judged yet: not handed out again
    assert _pairs(again) == [("2", "e2")]


# ---------------------------------------------------------------------------------------------------
# adaptive strategies, one judgment at a time against an oracle
# ---------------------------------------------------------------------------------------------------
@pytest.fixture
def two_runs():
    return {
        "A": _run([("1", "a1"), ("1", "a2"), ("1", "a3"), ("1", "a4")]),
        "B": _run([("1", "b1"), ("1", "b2"), ("1", "b3")]),
    }


ORACLE = {"a1": 1, "a4": 1, "b2": 1, "b3": 2}


def _replay(strategy, runs, step=1):
    state = strategy.start(runs)
    order = []
    while True:
        batch = strategy.next_batch(state, step)
        if len(batch) == 0:
            return order
        order.extend(batch["doc_id"])
        judged = batch[["query_id", "doc_id"]].assign(relevance=[ORACLE.get(d, 0) for d in batch["doc_id"]])
        strategy.update(state, judged)


def test_movetofront_sequential_order_by_hand(two_runs):
    # A: a1 relevant (keeps the turn), a2 not (A -1); B: b1 not (B -1); all at -1, back to A: a3 not
    # (A -2); B: b2, b3 relevant (B keeps the turn) and is exhausted; A: a4
    assert _replay(MoveToFront(), two_runs) == ["a1", "a2", "b1", "a3", "b2", "b3", "a4"]


def test_bandit_sequential_order_by_hand(two_runs):
    # posterior means (1 + r)/(2 + r + n): A .5 (tie, A first) → a1 rel: A 2/3 → a2 not: A 2/4 = .5 = B,
    # A first → a3 not: A 2/5; B .5 → b1 not: B 1/3; A .4 → a4 rel: A 3/6; A exhausted → b2, b3
    assert _replay(MaxMeanBandit(), two_runs) == ["a1", "a2", "a3", "b1", "a4", "b2", "b3"]


def test_pending_documents_spread_a_round_over_runs(two_runs):
    for strategy in (MoveToFront(), MaxMeanBandit()):
        state = strategy.start(two_runs)
        assert list(strategy.next_batch(state, 2)["doc_id"]) == ["a1", "b1"]


def test_adaptive_strategies_skip_judged_documents(two_runs):
    start = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a1", "b1"], "relevance": [1, 0]})
    strategy = MoveToFront()
    state = strategy.start(two_runs, start)
    assert list(strategy.next_batch(state, 1)["doc_id"]) == ["a2"]


def test_adaptive_strategies_share_rounds_among_topics(runs):
    strategy = MaxMeanBandit()
    state = strategy.start(runs)
    batch = strategy.next_batch(state, 4)
    assert list(batch["query_id"]).count("1") == 2
    assert list(batch["query_id"]).count("2") == 2


def test_make_strategy_names_and_options():
    assert isinstance(make_strategy("rrf", k=60), RRFPool)
    assert make_strategy("rbp", p=0.95).p == 0.95
    assert make_strategy("budget", budget=5).budget == 5
    with pytest.raises(ValueError, match="choices: depth, budget, rrf, rbp, movetofront, bandit, judge_next"):
        make_strategy("mtf")
    with pytest.raises(TypeError, match="method 'depth'"):
        make_strategy("depth", k=2)


def test_strategies_follow_the_protocol():
    for name in ("depth", "budget", "rrf", "rbp", "movetofront", "bandit"):
        strategy = make_strategy(name)
        assert strategy.name == name
        for method in ("start", "next_batch", "update"):
            assert callable(getattr(strategy, method))


# ---------------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("budget", [0, -3, 2.5, True])
def test_budget_below_one_is_refused(runs, budget):
    with pytest.raises(ValueError, match="budget="):
        pool(runs, "rrf", budget=budget)
    with pytest.raises(ValueError, match="budget="):
        pool(runs, "budget", budget=budget)


def test_batch_size_below_one_is_refused(runs):
    strategy = DepthPool()
    with pytest.raises(ValueError, match="n=0"):
        strategy.next_batch(strategy.start(runs), 0)


def test_depth_below_one_is_refused(runs):
    with pytest.raises(ValueError, match="depth=0"):
        pool(runs, "depth", depth=0)


def test_qrels_with_queries_no_run_answers_are_refused(runs):
    qrels = pd.DataFrame({"query_id": ["1", "99", "98"], "doc_id": ["d1", "x", "y"], "relevance": [1, 0, 1]})
    with pytest.raises(ValueError, match=r"2 queries that no run answers \(first: '99', '98'\)"):
        pool(runs, "depth", depth=1, qrels=qrels)


def test_unknown_and_adaptive_methods_in_pool(runs):
    with pytest.raises(ValueError, match="choices: depth, budget, rrf, rbp"):
        pool(runs, "random", budget=3)
    with pytest.raises(ValueError, match="adaptive"):
        pool(runs, "movetofront", budget=3)
    with pytest.raises(ValueError, match="needs budget"):
        pool(runs, "rrf")


def test_unknown_pool_run_is_named(runs):
    with pytest.raises(ValueError, match="no run named 'Z'"):
        pool(runs, "depth", depth=1, pool_runs=["Z"])


@pytest.mark.parametrize(("options", "message"), [({"k": -1}, "k=-1"), ({"p": 1.0}, "p=1.0"), ({"p": 0}, "p=0")])
def test_fusion_parameters_out_of_range(runs, options, message):
    method = "rrf" if "k" in options else "rbp"
    with pytest.raises(ValueError, match=message):
        pool(runs, method, budget=3, **options)


def test_negative_grades_in_updates_are_refused(runs):
    strategy = MoveToFront()
    state = strategy.start(runs)
    batch = strategy.next_batch(state, 1)
    with pytest.raises(ValueError, match="grades >= 0"):
        strategy.update(state, batch.assign(relevance=-1))


# ---------------------------------------------------------------------------------------------------
# pool files
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["pairs", "qrels"])
def test_pool_file_round_trip_with_header(runs, fmt):
    frame = pool(runs, "depth", depth=2)
    handle = io.StringIO()
    write_pool(frame, handle, fmt, header="# made by a test")
    text = handle.getvalue()
    assert text.startswith("# made by a test\n")
    back = read_pool(text)
    assert _pairs(back) == _pairs(frame)


def test_qrels_format_without_header_is_read_by_read_trec_qrels(runs, tmp_path):
    from ir_incomplete import read_trec_qrels

    frame = pool(runs, "depth", depth=1)
    path = tmp_path / "pool.txt"
    with open(path, "w") as handle:
        write_pool(frame, handle, "qrels")
    qrels = read_trec_qrels(path)
    assert _pairs(qrels) == _pairs(frame)
    assert set(qrels["relevance"]) == {-1}


# ---------------------------------------------------------------------------------------------------
# real data
# ---------------------------------------------------------------------------------------------------
def test_covid_depth_pool_sizes(covid):
    c = Candidates(covid["runs"])
    sizes = [len(pool(c, "depth", depth=k)) for k in (1, 2, 5, 7, 10)]
    assert sizes == [2256, 4081, 9064, 12187, 16720]  # the judgment counts of the issue's table


def test_prepared_runs_pool_and_sample_as_their_runs(runs):
    from ir_incomplete.data import prepare_runs
    from ir_incomplete.judging import stratified_sample

    prepared = prepare_runs(runs)
    everything = np.arange(Candidates(runs).n_pairs)
    pd.testing.assert_frame_equal(Candidates(prepared).frame(everything), Candidates(runs).frame(everything))
    for method, options in (("depth", {"depth": 2}), ("budget", {"budget": 2}), ("rrf", {"budget": 4})):
        pd.testing.assert_frame_equal(pool(prepared, method, **options), pool(runs, method, **options))
    strata = [(1, 1, 1.0), (2, 3, 0.5)]
    pd.testing.assert_frame_equal(stratified_sample(prepared, strata, seed=3), stratified_sample(runs, strata, seed=3))
