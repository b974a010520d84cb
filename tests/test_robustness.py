"""Robustness toolkit: degradation rules, agreement statistics, studies, plots and the command line."""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ir_incomplete
from ir_incomplete.data import Qrels, rank_runs
from ir_incomplete.robustness import (
    RunPool,
    agreement,
    depth_pool,
    kendall_tau,
    leave_one_group_out,
    mixed_pool,
    pearson,
    plot_robustness,
    plot_scatter,
    rmse,
    robustness_study,
    round_half_up,
    sample_judgments,
    stratified_sample,
    summarize,
    swap_rate,
    swap_rates,
)
from ir_incomplete.robustness import study as study_module

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------------------
# synthetic data
# ---------------------------------------------------------------------------------------------------
def make_qrels(spec):
    """``spec``: {topic: list of grades}; doc ids ``d000``, ``d001``, … per topic."""
    rows = [(t, f"d{i:03d}", g) for t, grades in spec.items() for i, g in enumerate(grades)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def frame_rows(frame):
    return sorted(
        (str(q), str(d), int(r)) for q, d, r in zip(frame["query_id"], frame["doc_id"], frame["relevance"], strict=True)
    )


def per_topic_counts(frame, condition):
    sel = frame[condition(frame["relevance"])]
    return sel.groupby("query_id").size().to_dict()


@pytest.fixture(scope="module")
def small_collection():
    """5 runs × 6 topics over 60 documents, graded judgments of 40 documents per topic."""
    rng = np.random.default_rng(7)
    qrels_rows, runs = [], {}
    for t in range(6):
        for d in range(40):
            grade = int(rng.choice([0, 0, 0, 1, 2]))
            qrels_rows.append((f"t{t}", f"doc{d:02d}", grade))
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    for r in range(5):
        rows = []
        for t in range(6):
            docs = rng.permutation(60)[:45]
            for rank, d in enumerate(docs):
                rows.append((f"t{t}", f"doc{d:02d}", float(100 - rank - r * 0.1 * (d % 3))))
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs, qrels


# ---------------------------------------------------------------------------------------------------
# rounding
# ---------------------------------------------------------------------------------------------------
def test_round_half_up():
    assert round_half_up([0.5, 1.5, 2.5, 0.7 * 5, 0.1 * 15, 0.49, 0.0, 3.51]).tolist() == [1, 2, 3, 4, 2, 0, 0, 4]


# ---------------------------------------------------------------------------------------------------
# random samples
# ---------------------------------------------------------------------------------------------------
def test_sample_fractions_per_topic():
    qrels = make_qrels({"a": [1] * 3 + [0] * 7, "b": [2] * 5 + [0] * 20, "c": [1, 0, 0, 0, 0, 0, 0]})
    out = sample_judgments(qrels, 0.3, seed=1)
    # k = round_half_up(0.3 n): 10 → 3, 25 → 7.5 → 8, 7 → 2.1 → 2
    assert per_topic_counts(out, lambda r: r >= 0) == {"a": 3, "b": 8, "c": 2}
    assert per_topic_counts(out, lambda r: r < 0) == {"a": 7, "b": 17, "c": 5}  # marked, not removed
    original = {(q, d): g for q, d, g in frame_rows(qrels)}
    for q, d, g in frame_rows(out):
        assert g == -1 or g == original[(q, d)]
    assert len(out) == len(qrels)
    dropped = sample_judgments(qrels, 0.3, seed=1, unjudged="drop")
    assert frame_rows(dropped) == [r for r in frame_rows(out) if r[2] >= 0]
    assert list(out.columns) == ["query_id", "doc_id", "relevance"]


def test_sample_small_fraction_keeps_at_least_min_relevant_docs():
    qrels = make_qrels({"a": [1] + [0] * 9})
    out = sample_judgments(qrels, 0.01, seed=3, unjudged="drop")  # round(0.1) = 0 → raised to 1
    assert frame_rows(out) == [("a", "d000", 1)]
    assert len(sample_judgments(qrels, 0.01, seed=3, min_relevant=0, unjudged="drop")) == 0


def test_sample_resamples_until_a_relevant_document_is_kept():
    qrels = make_qrels({"a": [1] + [0] * 99, "z": [0] * 30})  # one relevant among 100; topic z has none
    kept_relevant_free, others = 0, set()
    for seed in range(200):
        free = sample_judgments(qrels, 0.05, seed, min_relevant=0, unjudged="drop")
        forced = sample_judgments(qrels, 0.05, seed, unjudged="drop")
        kept_relevant_free += int(((free["query_id"] == "a") & (free["relevance"] == 1)).sum())
        a = forced[forced["query_id"] == "a"]
        assert len(a) == 5 and (a["relevance"] == 1).sum() == 1
        assert len(forced[forced["query_id"] == "z"]) == 2  # drawn once, no relevant to find
        others.update(a.loc[a["relevance"] == 0, "doc_id"])
    assert 1 <= kept_relevant_free <= 30  # expected 200 × 5 % = 10 without the rule
    assert len(others) >= 80  # the nonrelevant part is still a random draw


def test_sample_min_relevant_two():
    qrels = make_qrels({"a": [1, 1, 1] + [0] * 97})
    for seed in range(20):
        out = sample_judgments(qrels, 0.05, seed, min_relevant=2, unjudged="drop")
        assert len(out) == 5 and (out["relevance"] == 1).sum() >= 2


def test_sample_is_seeded_and_independent_of_input_form_and_order():
    qrels = make_qrels({"a": [1, 0, 2, 0, 0, 1, 0, 0, 0, 0], "b": [0, 1, 0, 0, 2, 0]})
    first = sample_judgments(qrels, 0.5, seed=11)
    assert frame_rows(first) == frame_rows(sample_judgments(qrels, 0.5, seed=11))
    shuffled = qrels.sample(frac=1.0, random_state=5)
    assert frame_rows(first) == frame_rows(sample_judgments(shuffled, 0.5, seed=11))
    as_dict = {q: dict(zip(g["doc_id"], g["relevance"], strict=True)) for q, g in qrels.groupby("query_id")}
    assert frame_rows(first) == frame_rows(sample_judgments(as_dict, 0.5, seed=11))
    differs = [frame_rows(sample_judgments(qrels, 0.5, seed=s)) != frame_rows(first) for s in range(12, 20)]
    assert any(differs)


def test_sample_full_fraction_is_the_qrels():
    qrels = make_qrels({"a": [1, 0, 2, -1], "b": [0, 1]})
    assert frame_rows(sample_judgments(qrels, 1.0, seed=0)) == frame_rows(qrels)
    assert frame_rows(sample_judgments(qrels, 1.0, seed=0, unjudged="drop")) == [
        r for r in frame_rows(qrels) if r[2] >= 0
    ]


def test_stratified_rounding_and_minimums():
    qrels = make_qrels(
        {
            "a": [2] * 5 + [1] * 15 + [0] * 30,  # 10 %: 0.5→1, 1.5→2, 3 → raised to 10
            "b": [1] * 3 + [0] * 4,  # 0.3→0 → 1 relevant; 0.4→0 → all 4 nonrel
            "c": [0] * 200 + [1] * 25,
        }
    )  # 20 → 20 nonrel; 2.5→3 rel
    out = stratified_sample(qrels, 0.1, seed=2, unjudged="drop")
    counts = out.groupby(["query_id", "relevance"]).size().to_dict()
    assert counts == {("a", 0): 10, ("a", 1): 2, ("a", 2): 1, ("b", 0): 4, ("b", 1): 1, ("c", 0): 20, ("c", 1): 3}
    marked = stratified_sample(qrels, 0.1, seed=2)
    assert (marked["relevance"] == -1).sum() == len(qrels) - len(out)
    none = stratified_sample(qrels, 0.1, seed=2, min_relevant=0, min_nonrelevant=0, unjudged="drop")
    assert none.groupby(["query_id", "relevance"]).size().to_dict() == {
        ("a", 0): 3,
        ("a", 1): 2,
        ("a", 2): 1,
        ("c", 0): 20,
        ("c", 1): 3,
    }


def test_stratified_rel_level_two():
    qrels = make_qrels({"a": [2] * 4 + [1] * 30 + [0] * 6})
    out = stratified_sample(qrels, 0.1, seed=0, rel=2, unjudged="drop")
    # strata by grade: 0.4 → 0 (grade 2, raised to 1 relevant), 3 (grade 1), 0.6 → 1 (grade 0);
    # nonrelevant (grades 0 and 1) raised from 4 to 10
    counts = out.groupby("relevance").size().to_dict()
    assert counts.get(2) == 1 and counts.get(0, 0) + counts.get(1, 0) == 10
    assert counts.get(1) >= 3 and counts.get(0) >= 1


# ---------------------------------------------------------------------------------------------------
# pools
# ---------------------------------------------------------------------------------------------------
@pytest.fixture()
def pool_example():
    runs = {
        "A": pd.DataFrame(
            [
                ("1", "a", 3.0),
                ("1", "b", 2.0),
                ("1", "c", 2.0),
                ("1", "d", 1.0),
                ("2", "p", 1.0 + 1e-9),
                ("2", "q", 1.0),
                ("3", "k", 1.0),
            ],
            columns=["query_id", "doc_id", "score"],
        ),
        "B": pd.DataFrame(
            [("1", "x", 5.0), ("1", "b", 4.0), ("1", "a", 1.0), ("2", "r", 0.5)],
            columns=["query_id", "doc_id", "score"],
        ),
    }
    qrels = pd.DataFrame(
        [
            ("1", "a", 1),
            ("1", "b", 0),
            ("1", "c", 1),
            ("1", "d", 1),
            ("1", "x", -1),
            ("1", "y", 1),
            ("2", "p", 1),
            ("2", "q", 0),
            ("2", "r", 1),
            ("2", "s", 0),
            ("4", "w", 1),
        ],
        columns=["query_id", "doc_id", "relevance"],
    )
    return runs, qrels


def test_depth_pool_hand_built(pool_example):
    runs, qrels = pool_example
    # run A, topic 1: a (3.0), then the tie b/c by doc id descending: c, b; then d. Run B: x, b, a.
    # topic 2: p and q tie in single precision → q before p (doc id descending); B: r.
    # "mark": the full pool (the qrels) is known, documents outside the depth-2 pool stay as −1
    assert frame_rows(depth_pool(qrels, runs, 2)) == [
        ("1", "a", 1),
        ("1", "b", 0),
        ("1", "c", 1),
        ("1", "d", -1),
        ("1", "x", -1),
        ("1", "y", -1),
        ("2", "p", 1),
        ("2", "q", 0),
        ("2", "r", 1),
        ("2", "s", -1),
        ("4", "w", -1),
    ]
    assert frame_rows(depth_pool(qrels, runs, 2, unjudged="drop")) == [
        ("1", "a", 1),
        ("1", "b", 0),
        ("1", "c", 1),
        ("2", "p", 1),
        ("2", "q", 0),
        ("2", "r", 1),
    ]
    assert [r for r in frame_rows(depth_pool(qrels, runs, 1)) if r[2] >= 0] == [
        ("1", "a", 1),
        ("2", "q", 0),
        ("2", "r", 1),
    ]
    assert len(depth_pool(qrels, runs, 1)) == len(qrels)
    assert frame_rows(depth_pool(qrels, runs, 1, unjudged="drop")) == [("1", "a", 1), ("2", "q", 0), ("2", "r", 1)]
    assert frame_rows(depth_pool(qrels, runs, 1, unjudged="drop", score_precision="float64")) == [
        ("1", "a", 1),
        ("2", "p", 1),
        ("2", "r", 1),
    ]
    # the whole runs: y, s (never retrieved) and topic 4 (no run) leave
    assert frame_rows(depth_pool(qrels, runs, 1000, unjudged="drop")) == [
        ("1", "a", 1),
        ("1", "b", 0),
        ("1", "c", 1),
        ("1", "d", 1),
        ("2", "p", 1),
        ("2", "q", 0),
        ("2", "r", 1),
    ]


def test_depth_pool_keeps_the_full_pool_for_pool_aware_estimators():
    """qrels {a:1, b:0, c:1}, runs X = a b c and Y = c a b, depth 1: b is pooled but unjudged, so
    infAP, indAP and subAP of X see the full pool (1.0), while AP stays 0.8333; dropping b loses it."""
    qrels = make_qrels({"1": [1, 0, 1]})
    qrels["doc_id"] = ["a", "b", "c"]
    runs = {
        "X": pd.DataFrame({"query_id": "1", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]}),
        "Y": pd.DataFrame({"query_id": "1", "doc_id": ["c", "a", "b"], "score": [3.0, 2.0, 1.0]}),
    }
    marked = depth_pool(qrels, runs, 1)
    assert frame_rows(marked) == [("1", "a", 1), ("1", "b", -1), ("1", "c", 1)]
    measures = ["AP", "infAP", "indAP", "subAP"]
    got = ir_incomplete.evaluate(runs, marked, measures, per_query=False).set_index(["run", "measure"])["value"]
    assert got["X", "AP"] == pytest.approx(5 / 6, abs=1e-12)
    for m in ("infAP", "indAP", "subAP"):
        assert got["X", m] == pytest.approx(1.0, abs=1e-5)  # infAP: ε-smoothing, 0.999997
    dropped = depth_pool(qrels, runs, 1, unjudged="drop")
    old = ir_incomplete.evaluate(runs, dropped, measures, per_query=False).set_index(["run", "measure"])["value"]
    for m in measures:
        assert old["X", m] == pytest.approx(5 / 6, abs=1e-5)
    # the study uses the same judgments
    study = robustness_study(runs, qrels, measures, method="depth", levels=[1], progress=False)
    values = study.scores.set_index(["measure", "run"])["value"]
    for m in measures:
        assert values[m, "X"] == pytest.approx(got["X", m], abs=1e-12)


def test_run_pool_listing(pool_example):
    runs, _ = pool_example
    pool = RunPool(runs)
    assert sorted(map(tuple, pool.pool(2).to_numpy().tolist())) == [
        ("1", "a"),
        ("1", "b"),
        ("1", "c"),
        ("1", "x"),
        ("2", "p"),
        ("2", "q"),
        ("2", "r"),
        ("3", "k"),
    ]
    assert sorted(map(tuple, pool.pool(1, runs=["A"]).to_numpy().tolist())) == [("1", "a"), ("2", "q"), ("3", "k")]
    with pytest.raises(ValueError, match="'C'.*choices: A, B"):
        pool.pool(1, runs=["C"])


def test_run_pool_order_is_trec_eval_order():
    """The pool helper ranks documents exactly as rank_runs (trec_eval order, float32 ties, docid desc)."""
    rng = np.random.default_rng(5)
    runs, qrels_rows = {}, []
    for t in range(8):
        for d in range(30):
            qrels_rows.append((f"q{t}", f"doc{d}", int(d % 3 == 0)))
    for r in range(4):
        rows = []
        for t in range(8):
            docs = rng.permutation(30)[:25]
            base = np.round(rng.random(25) * 4) / 4  # many exact ties
            base[:4] = 0.5 + np.array([0.0, 1e-10, 2e-10, 3e-10])  # ties only in single precision
            rows += [(f"q{t}", f"doc{d}", float(s)) for d, s in zip(docs, base, strict=True)]
        runs[f"r{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    ranked = rank_runs(runs, Qrels.from_any(pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])))
    pool = RunPool(runs)
    for row in range(ranked.n_rows):
        run_no, topic = ranked.run_of_row[row], ranked.qrels.topic_ids[ranked.topic_of_row[row]]
        start = ranked.row_starts[row]
        expected = list(ranked.doc_ids[start : start + ranked.lengths[row]])
        sel = (pool.run == run_no) & (pool.topic_ids[pool.topic] == topic)
        got = pool.doc_ids[pool.doc[sel]][np.argsort(pool.rank[sel])]
        assert list(got) == expected


def test_mixed_pool():
    qrels = make_qrels({"1": [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]})
    runs = {
        "A": pd.DataFrame(
            [("1", "d000", 3.0), ("1", "d001", 2.0), ("1", "nojudge", 1.0)], columns=["query_id", "doc_id", "score"]
        ),
        "B": pd.DataFrame([("1", "d002", 3.0), ("1", "d000", 2.0)], columns=["query_id", "doc_id", "score"]),
    }
    base = {"d000", "d001", "d002"}  # depth-2 pool: 3 judged documents
    out = mixed_pool(qrels, runs, 2, 1.0, seed=4)
    kept = out[out["relevance"] >= 0]
    assert base <= set(kept["doc_id"]) and len(kept) == 6  # 3 + round(1.0 · 3)
    assert (out["relevance"] == -1).sum() == 14  # the rest of the full pool stays, unjudged
    assert len(mixed_pool(qrels, runs, 2, 1.0, seed=4, unjudged="drop")) == 6
    assert len(mixed_pool(qrels, runs, 2, 0.5, seed=4, unjudged="drop")) == 5  # 1.5 → 2 extra
    assert set(mixed_pool(qrels, runs, 2, 0, seed=4, unjudged="drop")["doc_id"]) == base
    assert len(mixed_pool(qrels, runs, 2, 10, seed=4, unjudged="drop")) == 20  # capped: everything
    extras = {frozenset(mixed_pool(qrels, runs, 2, 1.0, seed=s, unjudged="drop")["doc_id"]) - base for s in range(10)}
    assert len(extras) > 1


def test_leave_one_group_out_two_groups():
    runs = {
        "A1": pd.DataFrame(
            [("1", "d1", 2.0), ("1", "d2", 1.0), ("2", "e1", 1.0)], columns=["query_id", "doc_id", "score"]
        ),
        "A2": pd.DataFrame(
            [("1", "d2", 2.0), ("1", "d3", 1.0), ("1", "d9", 0.5)], columns=["query_id", "doc_id", "score"]
        ),
        "B1": pd.DataFrame(
            [("1", "d3", 2.0), ("1", "d4", 1.0), ("1", "d1", 0.1), ("2", "e2", 1.0)],
            columns=["query_id", "doc_id", "score"],
        ),
    }
    groups = {"A1": "A", "A2": "A", "B1": "B"}
    qrels = pd.DataFrame(
        [
            ("1", "d1", 1),
            ("1", "d2", 0),
            ("1", "d3", 1),
            ("1", "d4", 0),
            ("1", "d5", 1),
            ("1", "d9", -1),
            ("2", "e1", 1),
            ("2", "e2", 0),
        ],
        columns=["query_id", "doc_id", "relevance"],
    )
    # depth 2: group A pools d1, d2, d3 (topic 1) and e1; group B pools d3, d4 and e2 (d1 is B1's 3rd)
    assert frame_rows(leave_one_group_out(qrels, runs, groups, "A", 2)) == [
        ("1", "d3", 1),
        ("1", "d4", 0),
        ("1", "d5", 1),
        ("1", "d9", -1),
        ("2", "e2", 0),
    ]
    assert frame_rows(leave_one_group_out(qrels, runs, groups, "B", 2)) == [
        ("1", "d1", 1),
        ("1", "d2", 0),
        ("1", "d3", 1),
        ("1", "d5", 1),
        ("1", "d9", -1),
        ("2", "e1", 1),
    ]
    # whole rankings: B1 also retrieved d1, so d1 stays when A leaves; d9 (A2 only) leaves
    assert frame_rows(leave_one_group_out(qrels, runs, groups, "A", None, unjudged="drop")) == [
        ("1", "d1", 1),
        ("1", "d3", 1),
        ("1", "d4", 0),
        ("1", "d5", 1),
        ("2", "e2", 0),
    ]
    series = pd.Series(groups)
    assert frame_rows(leave_one_group_out(qrels, runs, series, "A", 2)) == frame_rows(
        leave_one_group_out(qrels, runs, groups, "A", 2)
    )
    with pytest.raises(ValueError, match="group='C'.*choices: A, B"):
        leave_one_group_out(qrels, runs, groups, "C", 2)
    with pytest.raises(ValueError, match=r"no group for runs \['B1'\]"):
        leave_one_group_out(qrels, runs, {"A1": "A", "A2": "A"}, "A", 2)


def test_minus_one_marking_keeps_input_negatives_and_feeds_pool_aware_measures():
    qrels = make_qrels({"q": [1, 0, 1, 0, 0, 1, 0, 0, -1, -1]})
    marked = sample_judgments(qrels, 0.5, seed=0)
    dropped = sample_judgments(qrels, 0.5, seed=0, unjudged="drop")
    assert set(marked.loc[marked["doc_id"].isin(["d008", "d009"]), "relevance"]) == {-1}
    assert not dropped["doc_id"].isin(["d008", "d009"]).any()
    assert (marked["relevance"] == -1).sum() == 10 - len(dropped)
    # infAP counts the marked documents as pooled (d); AP treats them as nonrelevant either way
    run = pd.DataFrame(
        {"query_id": "q", "doc_id": [f"d{i:03d}" for i in range(10)][::-1], "score": np.arange(10, 0, -1, dtype=float)}
    )
    with_marks = ir_incomplete.evaluate({"r": run}, marked, ["AP", "infAP"], per_query=False)
    without = ir_incomplete.evaluate({"r": run}, dropped, ["AP", "infAP"], per_query=False)
    assert with_marks["value"].iloc[0] == pytest.approx(without["value"].iloc[0], abs=1e-12)
    assert with_marks["value"].iloc[1] != pytest.approx(without["value"].iloc[1], abs=1e-6)


def test_inputs_are_not_mutated(pool_example):
    runs, qrels = pool_example
    q0 = qrels.copy(deep=True)
    r0 = {k: v.copy(deep=True) for k, v in runs.items()}
    sample_judgments(qrels, 0.5, 1)
    stratified_sample(qrels, 0.5, 1)
    depth_pool(qrels, runs, 1)
    mixed_pool(qrels, runs, 1, 1.0, 1)
    leave_one_group_out(qrels, runs, {"A": "g1", "B": "g2"}, "g1", 1)
    pd.testing.assert_frame_equal(qrels, q0)
    for k in runs:
        pd.testing.assert_frame_equal(runs[k], r0[k])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda q, r: sample_judgments(q, 0, 1), "fraction=0.0 is out of range"),
        (lambda q, r: sample_judgments(q, 1.5, 1), "fraction=1.5 is out of range"),
        (lambda q, r: sample_judgments(q, "half", 1), "fraction='half' is not a number"),
        (
            lambda q, r: sample_judgments(q, 0.5, 1, unjudged="keep"),
            "unjudged='keep' is not valid; choices: mark, drop",
        ),
        (lambda q, r: sample_judgments(q, 0.5, 1, min_relevant=-1), "min_relevant=-1 is out of range"),
        (lambda q, r: sample_judgments(q, 0.5, "abc"), "seed='abc' is not a valid seed"),
        (lambda q, r: stratified_sample(q, 0.5, 1, min_nonrelevant=1.5), "min_nonrelevant=1.5 is not an integer"),
        (lambda q, r: depth_pool(q, r, 0), "depth=0 is out of range"),
        (lambda q, r: depth_pool(q, r, 2, score_precision="half"), "score_precision='half' is not valid"),
        (lambda q, r: mixed_pool(q, r, 2, -1, 1), "extra=-1 is not valid"),
        (lambda q, r: leave_one_group_out(q, r, ["A"], "A", 2), "groups must map run names"),
    ],
)
def test_degrade_validation(pool_example, call, message):
    runs, qrels = pool_example
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(qrels, runs)


# ---------------------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------------------
def test_agreement_statistics():
    assert kendall_tau([1, 2, 3, 4], [1, 2, 4, 3]) == pytest.approx(4 / 6)
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)
    assert rmse([0, 0], [3, 4]) == pytest.approx(math.sqrt(12.5))
    x = pd.Series({"a": 0.1, "b": 0.2, "c": 0.3})
    y = pd.Series({"c": 0.3, "a": 0.1, "b": 0.25})  # aligned by run name, not position
    assert agreement(x, y) == pytest.approx(
        {
            "tau": 1.0,
            "pearson": pearson([0.1, 0.2, 0.3], [0.1, 0.25, 0.3]),
            "rmse": math.sqrt(0.05**2 / 3),
            "tau_ap": 1.0,
            "spearman": 1.0,
            "bias": 0.05 / 3,
        }
    )
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ValueError, match="different runs"):
        kendall_tau(x, pd.Series({"a": 1.0, "b": 2.0, "d": 3.0}))
    with pytest.raises(ValueError, match="same length"):
        rmse([1, 2, 3], [1, 2])


def test_swap_rates_disjoint_topic_sets():
    # run A beats B by 1 on topics t0, t1 and loses by 1 on t2, t3. Two disjoint sets of 2 topics cover
    # all 4, so d2 = -d1: a swap whenever d1 != 0, i.e. when one set is {t0, t1} (probability 1/3).
    per_topic = pd.DataFrame(
        {
            "run": ["A"] * 4 + ["B"] * 4,
            "query_id": ["t0", "t1", "t2", "t3"] * 2,
            "value": [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0],
        }
    )
    table = swap_rates(per_topic, 2, trials=3000, seed=1)
    assert table["comparisons"].sum() == 3000
    by_bin = {round(b, 2): row for b, row in zip(table["bin_low"], table.itertuples(), strict=True)}
    assert by_bin[0.0].swaps == 0  # d1 = 0: no swap
    assert by_bin[1.0].swap_rate == 1.0  # |d1| = 1: always swapped
    assert by_bin[1.0].comparisons / 3000 == pytest.approx(1 / 3, abs=0.03)
    assert swap_rate(per_topic, 2, trials=3000, seed=1) == pytest.approx(1 / 3, abs=0.03)
    assert swap_rate(per_topic, 2, trials=3000, seed=1, min_difference=0.5) == 1.0
    consistent = per_topic.assign(value=[1.0, 0.9, 0.8, 0.7, 0.0, 0.1, 0.2, 0.3])  # A always better
    assert swap_rate(consistent, 2, trials=200, seed=0) == 0.0
    with pytest.raises(ValueError, match="needs 2 × 3 = 6 topics"):
        swap_rates(per_topic, 3)


# ---------------------------------------------------------------------------------------------------
# study
# ---------------------------------------------------------------------------------------------------
MEASURES = ["AP", "infAP", "Bpref"]


def test_study_full_level_agrees_with_itself(small_collection):
    runs, qrels = small_collection
    result = robustness_study(runs, qrels, MEASURES, levels=[1.0], repeats=3, seed=1, progress=False)
    # every statistic agreement() returns, then the per-topic RMSE
    keys = list(agreement([0.1, 0.2, 0.4], [0.1, 0.3, 0.2]))
    assert list(result.stats.columns) == ["measure", "level", "repeat", *keys, "rmse_topic"]
    assert {"tau", "pearson", "rmse"} <= set(keys)
    np.testing.assert_allclose(result.stats["tau_ap"], 1.0, atol=1e-12)
    np.testing.assert_allclose(result.stats["spearman"], 1.0, atol=1e-12)
    assert (result.stats["bias"].abs() < 1e-12).all()
    assert len(result.stats) == 3 * 3
    np.testing.assert_allclose(result.stats["tau"], 1.0, atol=1e-12)
    np.testing.assert_allclose(result.stats["pearson"], 1.0, atol=1e-12)
    assert (result.stats["rmse"] < 1e-12).all()
    assert (result.stats["rmse_topic"] < 1e-12).all()
    assert set(result.scores.columns) == {"measure", "level", "repeat", "run", "value", "reference"}
    assert len(result.scores) == 3 * 3 * 5


def test_study_cells_match_direct_evaluation(small_collection):
    runs, qrels = small_collection
    result = robustness_study(
        runs, qrels, MEASURES, levels=[0.2, 0.5], repeats=2, seed=9, reference="AP", progress=False
    )
    full_ap = ir_incomplete.evaluate(runs, qrels, ["AP"], per_query=False).set_index("run")["value"]
    full_topic = ir_incomplete.evaluate(runs, qrels, ["AP"]).set_index(["run", "query_id"])["value"]
    for li, level in enumerate([0.2, 0.5]):
        for r in range(2):
            degraded = sample_judgments(qrels, level, study_module._task_seed(9, li, r))
            direct = ir_incomplete.evaluate(runs, degraded, MEASURES, per_query=False)
            per_topic = ir_incomplete.evaluate(runs, degraded, MEASURES)
            for m in MEASURES:
                est = direct[direct["measure"] == m].set_index("run")["value"]
                row = result.stats[
                    (result.stats["measure"] == m) & (result.stats["level"] == level) & (result.stats["repeat"] == r)
                ].iloc[0]
                assert row["tau"] == pytest.approx(kendall_tau(full_ap, est))
                assert row["pearson"] == pytest.approx(pearson(full_ap, est))
                assert row["rmse"] == pytest.approx(rmse(full_ap, est))
                pairs = per_topic[per_topic["measure"] == m].set_index(["run", "query_id"])["value"]
                assert len(pairs) == 5 * 6
                expected = math.sqrt(((pairs - full_topic.reindex(pairs.index)) ** 2).mean())
                assert row["rmse_topic"] == pytest.approx(expected, rel=1e-12)
                assert row["rmse_topic"] >= row["rmse"]  # Jensen: errors partly cancel in the means
    summary = summarize(result.stats)
    assert summary["repeats"].tolist() == [2] * 6
    first = result.stats[(result.stats["measure"] == "AP") & (result.stats["level"] == 0.2)]
    assert summary.iloc[0]["tau"] == pytest.approx(first["tau"].mean())
    assert summary.iloc[0]["tau_std"] == pytest.approx(first["tau"].std(ddof=1))


class _FakeClient:
    """The part of the dask.distributed Client API the study uses, on threads."""

    def __init__(self):
        self.executor = ThreadPoolExecutor(2)
        self.scattered = 0

    def scatter(self, data, broadcast=False):
        self.scattered += 1
        return data

    def submit(self, fn, *args, pure=True):
        return self.executor.submit(fn, *args)


def test_study_results_do_not_depend_on_how_the_grid_runs(small_collection):
    runs, qrels = small_collection
    kwargs = dict(levels=[0.3, 0.6], repeats=2, seed=5, progress=False)
    local = robustness_study(runs, qrels, MEASURES, **kwargs)
    procs = robustness_study(runs, qrels, MEASURES, n_jobs=2, **kwargs)
    client = _FakeClient()
    remote = robustness_study(runs, qrels, MEASURES, client=client, **kwargs)
    assert client.scattered == 1
    pd.testing.assert_frame_equal(local.stats, procs.stats)
    pd.testing.assert_frame_equal(local.stats, remote.stats)
    pd.testing.assert_frame_equal(local.scores, remote.scores)


def test_study_with_dask(small_collection):
    distributed = pytest.importorskip("dask.distributed")
    runs, qrels = small_collection
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        remote = robustness_study(runs, qrels, ["AP"], levels=[0.5], repeats=2, seed=5, progress=False, client=client)
    local = robustness_study(runs, qrels, ["AP"], levels=[0.5], repeats=2, seed=5, progress=False)
    pd.testing.assert_frame_equal(local.stats, remote.stats)


def test_study_pool_methods(small_collection):
    runs, qrels = small_collection
    depth = robustness_study(runs, qrels, ["AP"], method="depth", levels=[1, 5], repeats=10, progress=False)
    assert depth.stats["repeat"].tolist() == [0, 0]  # deterministic: one repeat
    degraded = depth_pool(qrels, runs, 5)
    est = ir_incomplete.evaluate(runs, degraded, ["AP"], per_query=False).set_index("run")["value"]
    full = ir_incomplete.evaluate(runs, qrels, ["AP"], per_query=False).set_index("run")["value"]
    assert depth.stats.iloc[1]["rmse"] == pytest.approx(rmse(full, est))
    groups = {"run0": "g1", "run1": "g1", "run2": "g2", "run3": "g3", "run4": "g3"}
    logo = robustness_study(runs, qrels, ["AP"], method="logo", progress=False, options={"groups": groups, "depth": 3})
    assert logo.stats["level"].tolist() == [3]  # one row: every run scored once
    est = pd.concat(
        [
            ir_incomplete.evaluate(
                {r: runs[r] for r in runs if groups[r] == g},
                leave_one_group_out(qrels, runs, groups, g, 3),
                ["AP"],
                per_query=False,
            ).set_index("run")["value"]
            for g in ("g1", "g2", "g3")
        ]
    )
    assert logo.stats.iloc[0]["tau"] == pytest.approx(kendall_tau(full, est))
    assert logo.stats.iloc[0]["rmse"] == pytest.approx(rmse(full, est))
    np.testing.assert_allclose(logo.scores.set_index("run")["value"].reindex(est.index), est, atol=1e-15)
    assert (est < full.reindex(est.index) + 1e-12).all() and (est < full.reindex(est.index) - 1e-6).any()
    mixed = robustness_study(
        runs,
        qrels,
        ["AP"],
        method="mixed",
        levels=[2],
        repeats=2,
        progress=False,
        options={"extra": 0.5, "pool_runs": ["run0", "run1"]},
    )
    assert len(mixed.stats) == 2


def test_study_logo_scores_each_run_without_its_own_group():
    """Zobel's protocol by hand: A1 and A2 (group A) are scored on the judgments without the documents only
    group A pooled, B1 on those without B's; depth 2 (see test_leave_one_group_out_two_groups)."""
    runs = {
        "A1": pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["d1", "d2", "e1"], "score": [2.0, 1.0, 1.0]}),
        "A2": pd.DataFrame({"query_id": "1", "doc_id": ["d2", "d3", "d9"], "score": [2.0, 1.0, 0.5]}),
        "B1": pd.DataFrame(
            {"query_id": ["1", "1", "1", "2"], "doc_id": ["d3", "d4", "d1", "e2"], "score": [2.0, 1.0, 0.1, 1.0]}
        ),
    }
    groups = {"A1": "A", "A2": "A", "B1": "B"}
    qrels = pd.DataFrame(
        {
            "query_id": ["1"] * 6 + ["2", "2"],
            "doc_id": ["d1", "d2", "d3", "d4", "d5", "d9", "e1", "e2"],
            "relevance": [1, 0, 1, 0, 1, -1, 1, 0],
        }
    )
    result = robustness_study(
        runs, qrels, ["AP"], method="logo", levels=[2], options={"groups": groups}, progress=False
    )
    got = result.scores.set_index("run")
    # A1 without A's documents (d1, d2, e1): topic 1 has R = 2 (d3, d5), neither retrieved; topic 2 R = 0
    assert got.loc["A1", "value"] == 0.0
    assert got.loc["A1", "reference"] == pytest.approx((1 / 3 + 1) / 2)  # full: d1 at rank 1 of R = 3; e1
    # A2 without A's documents: d3 (also pooled by B) stays: rank 2 of R = 2
    assert got.loc["A2", "value"] == pytest.approx((1 / 2 / 2 + 0) / 2)
    # B1 without B's documents (d4, e2): nothing it found relevant leaves; d3 1st, d1 3rd of R = 3
    assert got.loc["B1", "value"] == pytest.approx((1 + 2 / 3) / 3 / 2)
    assert got.loc["B1", "value"] == pytest.approx(got.loc["B1", "reference"])
    row = result.stats.iloc[0]
    assert row["rmse"] == pytest.approx(rmse(got["reference"], got["value"]))
    per_topic_err = [(1 / 3) ** 2, 1.0, (1 / 4 - 1 / 6) ** 2, 0.0, 0.0, 0.0]  # (A1, A2, B1) × (topic 1, 2)
    assert row["rmse_topic"] == pytest.approx(math.sqrt(np.mean(per_topic_err)))
    # a group that contributed nothing to the pool keeps every judgment
    alone = robustness_study(
        runs,
        qrels,
        ["AP"],
        method="logo",
        options={"groups": groups, "depth": 2, "pool_runs": ["A1", "A2"]},
        progress=False,
    )
    b1 = alone.scores.set_index("run").loc["B1"]
    assert b1["value"] == b1["reference"]
    with pytest.raises(ValueError, match="either as levels or as options"):
        robustness_study(runs, qrels, ["AP"], method="logo", levels=[2], options={"groups": groups, "depth": 2})
    with pytest.raises(ValueError, match=r"no group for runs \['B1'\]"):
        robustness_study(runs, qrels, ["AP"], method="logo", options={"groups": {"A1": "A", "A2": "A"}})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(method="random"), "method='random' is not valid; choices: sample, stratified, depth, mixed, logo"),
        (dict(levels=[0]), "levels=0.0 is out of range"),
        (dict(method="depth", levels=[0.5]), "levels=0.5 is not an integer"),
        (dict(options={"extra": 1}), r"options \['extra'\] do not apply to method='sample'"),
        (dict(method="logo"), "needs options="),
        (dict(n_jobs=0), "n_jobs=0 is not valid"),
        (dict(repeats=0), "repeats=0 is out of range"),
        (dict(method="depth", options={"pool_runs": ["nope"]}), "pool_runs.*nope"),
    ],
)
def test_study_validation(small_collection, kwargs, message):
    runs, qrels = small_collection
    with pytest.raises(ValueError, match=message):
        robustness_study(runs, qrels, ["AP"], progress=False, **kwargs)


def test_study_needs_two_runs(small_collection):
    runs, qrels = small_collection
    with pytest.raises(ValueError, match="at least 2 runs"):
        robustness_study({"run0": runs["run0"]}, qrels, ["AP"], progress=False)


# ---------------------------------------------------------------------------------------------------
# plots
# ---------------------------------------------------------------------------------------------------
def test_plot_robustness_curves(tmp_path, small_collection):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    runs, qrels = small_collection
    result = robustness_study(runs, qrels, ["AP", "infAP"], levels=[0.2, 0.5, 1.0], repeats=2, seed=3, progress=False)
    path = tmp_path / "tau.png"
    fig = plot_robustness(result.stats, "tau", path=path)
    assert isinstance(fig, Figure)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["AP", "infAP"]
    expected = result.stats[result.stats["measure"] == "AP"].groupby("level")["tau"].mean()
    np.testing.assert_allclose(lines[0].get_xdata(), [20, 50, 100])
    np.testing.assert_allclose(lines[0].get_ydata(), expected.to_numpy())
    assert ax.get_ylabel() == "Kendall τ"
    with pytest.raises(ValueError, match="statistic='mae' is not valid"):
        plot_robustness(result.stats, "mae")
    for statistic in ("tau_ap", "spearman", "bias", "rmse_topic"):  # every column a study reports plots
        fig = plot_robustness(result.stats, statistic)
        expected = result.stats[result.stats["measure"] == "infAP"].groupby("level")[statistic].mean()
        np.testing.assert_allclose(fig.axes[0].get_lines()[1].get_ydata(), expected.to_numpy())


def test_plot_scatter(tmp_path):
    pytest.importorskip("matplotlib")
    actual = pd.Series({"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4})
    estimated = pd.Series({"a": 0.12, "b": 0.18, "c": 0.35, "d": 0.41})
    path = tmp_path / "scatter.png"
    fig = plot_scatter(actual, estimated, title="infAP", path=path)
    title = fig.axes[0].get_title()
    assert title.startswith("infAP\n")
    assert f"RMS = {rmse(actual, estimated):.4f}" in title
    assert "τ = 1.0000" in title and f"ρ = {pearson(actual, estimated):.4f}" in title
    diagonal = fig.axes[0].get_lines()[0]
    assert list(diagonal.get_xdata()) == list(diagonal.get_ydata())
    assert path.stat().st_size > 1000


# ---------------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------------
def _write_collection(tmp_path, runs, qrels):
    qrels_path = tmp_path / "qrels.txt"
    with open(qrels_path, "w") as handle:
        for q, d, r in zip(qrels["query_id"], qrels["doc_id"], qrels["relevance"], strict=True):
            handle.write(f"{q} 0 {d} {r}\n")
    run_dir = tmp_path / "runs"
    run_dir.mkdir()
    for name, run in runs.items():
        with open(run_dir / name, "w") as handle:
            for i, (q, d, s) in enumerate(zip(run["query_id"], run["doc_id"], run["score"], strict=True)):
                handle.write(f"{q} Q0 {d} {i} {s!r} {name}\n")
    return qrels_path, run_dir


def test_cli_writes_csv_and_png(tmp_path, small_collection, capsys):
    from ir_incomplete.cli.robustness import main

    runs, qrels = small_collection
    qrels_path, run_dir = _write_collection(tmp_path, runs, qrels)
    out = tmp_path / "out"
    code = main(
        [
            "--qrels",
            str(qrels_path),
            "--runs",
            str(run_dir),
            "--measures",
            "AP",
            "infAP",
            "Bpref",
            "--method",
            "sample",
            "--levels",
            "0.3,1",
            "--repeats",
            "2",
            "--seed",
            "4",
            "--reference",
            "AP",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    stats = pd.read_csv(out / "stats.csv")
    assert len(stats) == 3 * 2 * 2
    direct = robustness_study(
        runs, qrels, ["AP", "infAP", "Bpref"], levels=[0.3, 1.0], repeats=2, seed=4, reference="AP", progress=False
    ).stats
    np.testing.assert_allclose(stats["tau"].to_numpy(), direct["tau"].to_numpy())
    np.testing.assert_allclose(stats["rmse"].to_numpy(), direct["rmse"].to_numpy(), rtol=1e-9)
    for name in ("summary.csv", "scores.csv", "reference.csv", "robustness_tau.png", "robustness_rmse.png"):
        assert (out / name).stat().st_size > 0
    printed = capsys.readouterr().out
    assert "infAP" in printed and "wrote stats.csv" in printed


def test_cli_logo_with_groups_file(tmp_path, small_collection):
    from ir_incomplete.cli.robustness import main

    runs, qrels = small_collection
    qrels_path, run_dir = _write_collection(tmp_path, runs, qrels)
    groups = tmp_path / "groups.csv"
    groups.write_text("run,team\nrun0,g1\nrun1,g1\nrun2,g2\nrun3,g2\nrun4,g3\n")
    code = main(
        [
            "--qrels",
            str(qrels_path),
            "--runs",
            str(run_dir),
            "--measures",
            "AP",
            "--method",
            "logo",
            "--groups",
            str(groups),
            "--group-column",
            "team",
            "--pool-depth",
            "5",
            "--out",
            str(tmp_path / "o"),
            "--no-progress",
            "--no-plots",
        ]
    )
    assert code == 0
    assert pd.read_csv(tmp_path / "o" / "stats.csv")["level"].tolist() == [5]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--method", "random"], "invalid choice: 'random'"),
        (["--levels", "a,b"], "--levels: 'a' is not a fraction"),
        (["--method", "logo"], "--method logo needs --groups"),
        (["--extra", "1"], "--extra does not apply to --method sample"),
        (["--levels", "2"], "levels=2.0 is out of range"),
    ],
)
def test_cli_usage_errors(tmp_path, small_collection, capsys, extra, message):
    from ir_incomplete.cli.robustness import main

    runs, qrels = small_collection
    qrels_path, run_dir = _write_collection(tmp_path, runs, qrels)
    code = main(
        [
            "--qrels",
            str(qrels_path),
            "--runs",
            str(run_dir),
            "--measures",
            "AP",
            "--out",
            str(tmp_path / "o"),
            "--no-progress",
        ]
        + extra
    )
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "ir_incomplete robustness: error:" in err


def test_cli_missing_qrels(tmp_path, capsys):
    from ir_incomplete.cli.robustness import main

    assert (
        main(
            [
                "--qrels",
                str(tmp_path / "none.txt"),
                "--runs",
                str(tmp_path),
                "--measures",
                "AP",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert "--qrels: no such file" in capsys.readouterr().err


def test_cli_data_error_exits_2_and_leaves_no_output(tmp_path, small_collection, capsys):
    from ir_incomplete.cli.robustness import main

    runs, qrels = small_collection
    qrels_path, run_dir = _write_collection(tmp_path, runs, qrels)
    qrels_path.write_text("t0 0 doc01 high\n")
    assert main(_cli_args(qrels_path, run_dir, tmp_path / "o")) == 2
    err = capsys.readouterr().err
    assert err.startswith("ir_incomplete robustness: error:") and "'high'" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_cli_help_returns_zero(capsys):
    from ir_incomplete.cli.robustness import main

    assert main(["--help"]) == 0
    assert "--method {sample,stratified,depth,mixed,logo}" in capsys.readouterr().out


def _cli_args(qrels_path, run_dir, out, *extra):
    return [
        "--qrels",
        str(qrels_path),
        "--runs",
        str(run_dir),
        "--measures",
        "AP",
        "--levels",
        "0.5",
        "--repeats",
        "2",
        "--out",
        str(out),
        "--no-progress",
        "--no-plots",
        *extra,
    ]


def test_cli_checks_out_before_the_study(tmp_path, small_collection, capsys, monkeypatch):
    from ir_incomplete.cli import robustness as cli

    runs, qrels = small_collection
    qrels_path, run_dir = _write_collection(tmp_path, runs, qrels)

    def never(*args, **kwargs):
        raise AssertionError("the study ran before --out was checked")

    monkeypatch.setattr(study_module, "robustness_study", never)
    a_file = tmp_path / "taken.csv"
    a_file.write_text("x\n")
    assert cli.main(_cli_args(qrels_path, run_dir, a_file)) == 2
    assert "taken.csv exists and is not a folder" in capsys.readouterr().err
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    assert cli.main(_cli_args(qrels_path, run_dir, busy)) == 2
    err = capsys.readouterr().err
    assert "is not empty (notes.txt)" in err and "--overwrite" in err
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]


def test_cli_manifest_and_overwrite(tmp_path, small_collection, capsys):
    import json

    import ir_incomplete
    from ir_incomplete.cli import robustness as cli

    runs, qrels = small_collection
    qrels_path, run_dir = _write_collection(tmp_path, runs, qrels)
    out = tmp_path / "out"
    assert cli.main(_cli_args(qrels_path, run_dir, out, "--seed", "3")) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is True and manifest["version"] == ir_incomplete.__version__
    assert manifest["seed"] == 3 and manifest["parameters"]["levels"] == "0.5"
    assert manifest["parameters"]["method"] == "sample" and manifest["runs"] == sorted(runs)
    assert manifest["files"] == ["stats.csv", "summary.csv", "scores.csv", "reference.csv"]
    assert sorted(p.name for p in out.iterdir()) == sorted(manifest["files"] + ["manifest.json"])
    assert cli.main(_cli_args(qrels_path, run_dir, out)) == 2  # not empty
    capsys.readouterr()
    # --overwrite: the previous study's files go first; a file of the user stays
    (out / "notes.txt").write_text("mine")
    args = _cli_args(qrels_path, run_dir, out, "--overwrite", "--levels", "0.3,0.6", "--filters", "top75")
    assert cli.main(args) == 0
    again = json.loads((out / "manifest.json").read_text())
    assert again["complete"] is True and again["parameters"]["levels"] == "0.3,0.6"
    assert again["parameters"]["filters"] == ["top75"] and len(again["runs"]) == 4
    assert len(again["runs_removed_by_filters"]) == 1
    assert len(pd.read_csv(out / "stats.csv")) == 4
    assert (out / "notes.txt").read_text() == "mine"
    # a bad parameter found by the study leaves a new folder as it was: absent
    assert cli.main(_cli_args(qrels_path, run_dir, tmp_path / "new", "--levels", "2")) == 2
    assert not (tmp_path / "new").exists()


def test_cli_outputs_are_atomic(tmp_path, small_collection, monkeypatch, capsys):
    """A study interrupted while writing leaves no truncated file under a final name, its manifest says
    it is incomplete, and --resume finishes it from the saved cells."""
    import json

    from ir_incomplete.cli import robustness as cli

    runs, qrels = small_collection
    qrels_path, run_dir = _write_collection(tmp_path, runs, qrels)
    real = pd.DataFrame.to_csv

    def dies_half_way(self, path, **kwargs):
        if "scores.csv" in str(path):
            with open(path, "w") as handle:
                handle.write("measure,level,rep")  # a partial header, then the process "dies"
            raise KeyboardInterrupt
        return real(self, path, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", dies_half_way)
    out = tmp_path / "out"
    assert cli.main(_cli_args(qrels_path, run_dir, out)) == 130
    assert "interrupted; all 2 grid cells saved in" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["cells", "manifest.json", "stats.csv", "summary.csv"]
    assert json.loads((out / "manifest.json").read_text())["complete"] is False
    monkeypatch.setattr(pd.DataFrame, "to_csv", real)
    assert cli.main(_cli_args(qrels_path, run_dir, out, "--resume")) == 0
    assert json.loads((out / "manifest.json").read_text())["complete"] is True
    assert not (out / "cells").exists()  # removed once the study is complete
    assert cli.main(_cli_args(qrels_path, run_dir, out, "--overwrite")) == 0
    assert json.loads((out / "manifest.json").read_text())["complete"] is True


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def _threads(pid: int) -> int:
    """Number of threads of process ``pid`` (Linux /proc; 0 once it is gone)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_cli_workers_exit_when_the_study_is_killed(tmp_path, small_collection, sig):
    runs, qrels = small_collection
    qrels_path, run_dir = _write_collection(tmp_path, runs, qrels)
    args = _cli_args(qrels_path, run_dir, tmp_path / "out", "--n-jobs", "2")
    args[args.index("--repeats") + 1] = "2000"  # far longer than the test waits
    code = "import sys; from ir_incomplete.cli.robustness import main; sys.exit(main(sys.argv[1:]))"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    parent = subprocess.Popen([sys.executable, "-c", code, *args], env=env, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        # wait (generous deadlines, not fixed sleeps: a busy machine) until two workers have started the
        # thread that watches their parent, so that the signal finds them set up
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and parent.poll() is None:
            workers = _children(parent.pid)
            if len([w for w in workers if _threads(w) >= 2]) >= 2:
                break
            time.sleep(0.1)
        assert len([w for w in workers if _threads(w) >= 2]) >= 2, "the workers never started"
        parent.send_signal(sig)
        parent.wait(timeout=60)
        deadline = time.monotonic() + 60
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [w for w in workers if _alive(w)], "worker processes outlived the killed study"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        for w in workers:
            with contextlib.suppress(OSError):
                if _alive(w):
                    os.kill(w, signal.SIGKILL)


# ---------------------------------------------------------------------------------------------------
# run filters
# ---------------------------------------------------------------------------------------------------
def test_run_filters():
    from ir_incomplete.robustness import RUN_FILTERS, filter_runs, runs_above_quartile, runs_retrieving, top_runs

    assert RUN_FILTERS == ("top75", "retrieved95", "above_q1")
    scores = pd.Series({"a": 0.5, "b": 0.1, "c": 0.3, "d": 0.2, "e": 0.4, "f": 0.3, "g": 0.05, "h": 0.6})
    # 8 runs: round_half_up(6) = 6 best: h, a, e, c/f (tied), d
    assert top_runs(scores) == ["a", "c", "d", "e", "f", "h"]
    # 5 runs, 0.75 · 5 = 3.75 → 4; the 4th best ties with a 5th: both kept
    assert top_runs({"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0, "e": 1.0}) == ["a", "b", "c", "d", "e"]
    assert top_runs({"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0, "e": 0.0}) == ["a", "b", "c", "d"]
    # first quartile of the 8 scores (numpy linear): 0.175; strictly above it
    assert np.quantile(scores.to_numpy(), 0.25) == pytest.approx(0.175)
    assert runs_above_quartile(scores) == ["a", "c", "d", "e", "f", "h"]
    assert runs_above_quartile({"a": 1.0, "b": 1.0, "c": 1.0}) == []  # nothing lies above a constant
    qrels = make_qrels({"t1": [1, 0], "t2": [0, 1]})

    def run(n1, n2, extra_topic=0):
        rows = [("t1", f"x{i}", -float(i)) for i in range(n1)] + [("t2", f"y{i}", -float(i)) for i in range(n2)]
        rows += [("t9", f"z{i}", 1.0) for i in range(extra_topic)]
        return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])

    runs = {"full": run(10, 10), "short": run(10, 8), "just": run(10, 9), "other": run(9, 9, extra_topic=50)}
    # depth 10 over 2 topics: 95 % of 20 = 19 documents needed; topics outside the qrels do not count
    assert runs_retrieving(runs, qrels, depth=10) == ["full", "just"]
    assert runs_retrieving({"deep": run(30, 0)}, qrels, depth=10) == []  # at most depth per topic counts
    assert filter_runs(runs, qrels, ["retrieved95"]) == []  # the default depth is 1000
    tied = pd.Series({"full": 1.0, "short": 1.0, "just": 2.0, "other": 1.0})
    assert filter_runs(runs, qrels, ["top75"], scores=tied) == list(runs)  # the 3rd best ties with the 4th
    assert filter_runs(runs, qrels, ["above_q1"], scores=tied) == ["just"]  # q1 = 1
    assert filter_runs(runs, qrels, ["top75", "above_q1"], scores=tied) == ["just"]  # a run must pass both
    ap = ir_incomplete.evaluate(runs, qrels, ["AP"], per_query=False).set_index("run")["value"]
    assert filter_runs(runs, qrels, ["above_q1"]) == runs_above_quartile(ap)  # scored with AP by default
    for bad, message in (
        (
            lambda: filter_runs(runs, qrels, ["top50"]),
            "unknown run filter 'top50'; choices: top75, retrieved95, above_q1",
        ),
        (lambda: top_runs(scores, 0), "fraction=0 is out of range"),
        (lambda: top_runs(pd.Series({"a": np.nan})), "score of run 'a' is not a finite number"),
        (lambda: runs_above_quartile(scores, 1.5), "q=1.5 is not valid"),
        (lambda: runs_retrieving(runs, qrels, depth=0), "depth=0 is out of range"),
    ):
        with pytest.raises(ValueError, match=message):
            bad()


def test_study_filters(small_collection):
    runs, qrels = small_collection
    full = ir_incomplete.evaluate(runs, qrels, ["infAP"], per_query=False).set_index("run")["value"]
    kept = sorted(full.sort_values(ascending=False).index[:4])  # round_half_up(0.75 · 5) = 4
    result = robustness_study(
        runs, qrels, ["AP", "infAP"], levels=[0.5], repeats=1, reference="infAP", filters=["top75"], progress=False
    )
    assert sorted(result.reference["run"]) == kept and sorted(result.scores["run"].unique()) == kept
    assert result.stats.attrs["runs_removed"] == sorted(set(runs) - set(kept))
    direct = robustness_study(
        {r: runs[r] for r in kept}, qrels, ["AP", "infAP"], levels=[0.5], repeats=1, reference="infAP", progress=False
    )
    pd.testing.assert_frame_equal(result.stats, direct.stats)  # the judgments do not depend on the filter
    with pytest.raises(ValueError, match="unknown run filter 'best'; choices: top75, retrieved95, above_q1"):
        robustness_study(runs, qrels, ["AP"], filters=["best"], progress=False)
    with pytest.raises(ValueError, match=r"keep 0 of 5 runs"):
        robustness_study(runs, qrels, ["AP"], filters=["retrieved95"], progress=False)  # 45 of 1000 documents


def test_plot_into_a_subfigure_refuses_path(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    actual = pd.Series({"a": 0.1, "b": 0.2, "c": 0.3})
    estimate = pd.Series({"a": 0.2, "b": 0.1, "c": 0.3})
    sub = Figure().subfigures(1, 2)[0]
    ax = sub.subplots()
    with pytest.raises(ValueError, match="ax= lies in a subfigure"):
        plot_scatter(actual, estimate, ax=ax, path=tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()
    assert plot_scatter(actual, estimate, ax=ax) is sub  # drawing without a path still works
