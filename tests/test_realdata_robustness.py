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


def test_covid_depth_pools_mark_the_full_pool(covid, tmp_path):
    """Yilmaz & Aslam's shallow-pool setup on TREC-COVID round-1 runs (complete judgments of topics
    1–30, reference AP on the full judgments), as ``examples/depth_pooling.py`` runs it: with the
    documents outside the depth-4 pool kept as pooled-but-unjudged, infAP and subAP rank the runs
    clearly better than AP (τ ≈ 0.93 vs 0.88); dropping them made every estimator equal to AP."""
    example = _example("depth_pooling")
    result = example.depth_study(covid["runs"], covid["complete"], levels=[1, 4])
    stats = result.stats.set_index(["measure", "level"])
    tau, rmse = stats["tau"], stats["rmse"]
    assert tau["AP", 4] == pytest.approx(0.88, abs=0.02)
    assert tau["infAP", 4] == pytest.approx(0.93, abs=0.02)
    assert tau["subAP", 4] == pytest.approx(0.93, abs=0.02)
    assert min(tau["infAP", 4], tau["subAP", 4]) > tau["AP", 4] + 0.03
    # the manual's measured values (docs/measured.rst)
    for (measure, level), value in {
        ("AP", 1): 0.8187,
        ("infAP", 1): 0.8914,
        ("indAP", 1): 0.8410,
        ("subAP", 1): 0.8975,
        ("Bpref", 1): 0.8193,
        ("AP", 4): 0.8829,
        ("infAP", 4): 0.9302,
        ("indAP", 4): 0.9007,
        ("subAP", 4): 0.9358,
        ("Bpref", 4): 0.8242,
    }.items():
        assert tau[measure, level] == pytest.approx(value, abs=5e-4), (measure, level)
    assert rmse["AP", 4] == pytest.approx(0.1389, abs=5e-4) and rmse["infAP", 4] == pytest.approx(0.1949, abs=5e-4)
    assert (stats["rmse_topic"] >= stats["rmse"]).all()
    degraded = depth_pool(covid["complete"], covid["runs"], 4)
    assert len(degraded) == len(covid["complete"])
    dropped = depth_pool(covid["complete"], covid["runs"], 4, unjudged="drop")
    assert (degraded["relevance"] >= 0).sum() == len(dropped) < len(covid["complete"])
    if importlib.util.find_spec("matplotlib") is not None:
        example.plot(result.stats, tmp_path / "depth.png")
        assert (tmp_path / "depth.png").read_bytes()[:4] == b"\x89PNG"


def test_covid_leave_one_group_out(covid):
    """``examples/leave_one_group_out.py``: every TREC-COVID round-1 run scored without the round-1
    judgments only its own team's contributing run put into the top-10 pool, against nDCG@10 on all
    round-1 judgments (the manual's table, docs/measured.rst)."""
    example = _example("leave_one_group_out")
    board = pd.read_csv(ROOT.parent / "shared" / "data" / "trec-covid-round1" / "leaderboard.csv", dtype=str)
    table, result = example.logo_table(covid["runs"], covid["qrels"], board)
    assert len(result.reference) == 143 and result.reference["measure"].unique().tolist() == ["nDCG@10"]
    got = table.set_index("estimator")
    measured = {  # tau, rmse, rmse_topic
        "naive lower": (0.9162, 0.0376, 0.0706),
        "condensed": (0.7987, 0.1330, 0.1817),
        "BootNDCG pool": (0.9101, 0.0506, 0.0989),
        "BootNDCG run": (0.7689, 0.1362, 0.2164),
        "BootNDCG pool+run": (0.8726, 0.0822, 0.1450),
        "naive upper": (-0.3052, 0.4758, 0.5212),
    }
    for name, (tau, rmse, rmse_topic) in measured.items():
        assert got.loc[name, "tau"] == pytest.approx(tau, abs=5e-4), name
        assert got.loc[name, "rmse"] == pytest.approx(rmse, abs=5e-4), name
        assert got.loc[name, "rmse_topic"] == pytest.approx(rmse_topic, abs=5e-4), name
    # scored without its own team's judgments, no run gains naive nDCG@10 on this data; most lose
    scores = result.scores[result.scores["measure"] == "nDCG@10"].set_index("run")
    assert (scores["value"] <= scores["reference"] + 1e-12).all()
    assert (scores["value"] < scores["reference"] - 1e-9).sum() > 100
