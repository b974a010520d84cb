"""Robustness toolkit on real TREC data (skips when ``../shared/data`` is absent)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ir_incomplete.data import Qrels, rank_runs
from ir_incomplete.robustness import RunPool, depth_pool, round_half_up, sample_judgments

ROOT = Path(__file__).resolve().parents[1]


def _example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_covid_round1_kendall_tau_reproduces_leaderboard_study(covid):
    """143 TREC-COVID round-1 runs, round-1 vs complete judgments: τ 0.895 (MAP), 0.791 (bpref),
    0.946 (nDCG@10), the values measured with pytrec_eval."""
    example = _example("covid_round1")
    table, shallow, deep = example.agreement_table(
        covid["runs"], covid["qrels"], covid["complete"], ["AP", "Bpref", "nDCG@10"]
    )
    assert len(shallow) == len(deep) == 143
    taus = dict(zip(table["measure"], table["tau"], strict=True))
    assert taus["AP"] == pytest.approx(0.895, abs=0.001)
    assert taus["Bpref"] == pytest.approx(0.791, abs=0.001)
    assert taus["nDCG@10"] == pytest.approx(0.946, abs=0.001)
    # the round-1 scores are the official leaderboard's (map, bpref, ndcg@10 to 5e-5)
    board = pd.read_csv(ROOT.parent / "shared" / "data" / "trec-covid-round1" / "leaderboard.csv").set_index("run")
    for ours, theirs in (("AP", "MAP"), ("Bpref", "bpref"), ("nDCG@10", "ndcg@10")):
        np.testing.assert_allclose(shallow[ours].to_numpy(), board.loc[shallow.index, theirs].to_numpy(), atol=5e-5)


def test_pool_order_on_real_runs_matches_rank_runs(covid):
    """The pooling helper orders real TREC-COVID runs (with score ties) exactly as rank_runs."""
    names = sorted(covid["runs"])[:25]
    runs = {n: covid["runs"][n] for n in names}
    qrels = Qrels.from_any(covid["qrels"])
    ranked = rank_runs(runs, qrels)
    pool = RunPool(runs)
    key_pool = pool.run * len(pool.topic_ids) + pool.topic
    order = np.lexsort((pool.rank, key_pool))
    sorted_docs = pool.doc_ids[pool.doc[order]]
    sorted_keys = key_pool[order]
    topic_code = pd.Index(pool.topic_ids).get_indexer(qrels.topic_ids[ranked.topic_of_row])
    starts = np.searchsorted(sorted_keys, ranked.run_of_row * len(pool.topic_ids) + topic_code)
    for row in range(ranked.n_rows):
        n = ranked.lengths[row]
        expected = ranked.doc_ids[ranked.row_starts[row] : ranked.row_starts[row] + n]
        assert (sorted_docs[starts[row] : starts[row] + n] == expected).all()


def test_robust04_sample_counts(robust04):
    qrels = robust04["qrels"]
    out = sample_judgments(qrels, 0.1, seed=2008, unjudged="drop")
    n = qrels[qrels["relevance"] >= 0].groupby("query_id").size()
    k = out.groupby("query_id").size().reindex(n.index, fill_value=0)
    np.testing.assert_array_equal(k.to_numpy(), np.maximum(round_half_up(0.1 * n.to_numpy()), 1))
    relevant = out[out["relevance"] >= 1].groupby("query_id").size().reindex(n.index, fill_value=0)
    assert (relevant >= 1).all()


def test_robust04_depth_pool_of_ten_runs(robust04):
    """Depth pools of the 10 Robust04 runs: the judged share of their top-k positions matches the data
    notes (95 % of the top 100, 44 % of the top 1000), and every kept judgment is in the pool."""
    qrels = robust04["qrels"]
    pool = RunPool(robust04["runs"])
    judged_keys = pool.keys_of(qrels["query_id"].to_numpy(object), qrels["doc_id"].to_numpy(object))
    entry_keys = pool.topic * len(pool.doc_ids) + pool.doc
    assert np.isin(entry_keys[pool.rank < 100], judged_keys).mean() == pytest.approx(0.94, abs=0.01)
    assert np.isin(entry_keys[pool.rank < 1000], judged_keys).mean() == pytest.approx(0.44, abs=0.01)
    deep = depth_pool(qrels, pool, 100, unjudged="drop")
    shallow = depth_pool(qrels, pool, 10, unjudged="drop")
    assert 0 < len(shallow) < len(deep) < len(qrels)
    listed = pool.pool(100)
    assert len(listed.merge(qrels, on=["query_id", "doc_id"])) == len(deep)
    assert len(deep.merge(listed, on=["query_id", "doc_id"])) == len(deep)


def test_covid_depth4_pool_marks_the_full_pool(covid):
    """Yilmaz & Aslam's shallow-pool setup on TREC-COVID round-1 runs (complete judgments of topics
    1–30, depth-4 pool, reference AP on the full judgments): with the documents outside the depth-4 pool
    kept as pooled-but-unjudged, infAP and subAP rank the runs clearly better than AP (τ ≈ 0.93 vs 0.88);
    dropping them makes every estimator equal to AP."""
    from ir_incomplete.robustness import robustness_study

    measures = ["AP", "infAP", "subAP"]
    marked = robustness_study(
        covid["runs"], covid["complete"], measures, method="depth", levels=[4], reference="AP", progress=False
    )
    tau = dict(zip(marked.stats["measure"], marked.stats["tau"], strict=True))
    assert tau["AP"] == pytest.approx(0.883, abs=0.02)
    assert tau["infAP"] == pytest.approx(0.930, abs=0.02)
    assert tau["subAP"] == pytest.approx(0.936, abs=0.02)
    assert min(tau["infAP"], tau["subAP"]) > tau["AP"] + 0.03
    degraded = depth_pool(covid["complete"], covid["runs"], 4)
    assert len(degraded) == len(covid["complete"])
    dropped = depth_pool(covid["complete"], covid["runs"], 4, unjudged="drop")
    assert (degraded["relevance"] >= 0).sum() == len(dropped) < len(covid["complete"])
