"""Stratified samples and sample_eval prels (ir_incomplete.judging.sampling): strata checks, cell sizes,
seeds, and the round trip sample → judgments → xinfAP@100 ≈ AP@100 of the full pool."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ir_incomplete import evaluate
from ir_incomplete.judging import Candidates, stratified_sample, to_prels
from ir_incomplete.judging.sampling import check_strata


def _runs(n_runs=4, n_topics=3, depth=30, n_docs=60, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for r in range(n_runs):
        rows = []
        for t in range(n_topics):
            docs = rng.permutation(n_docs)[:depth]
            rows += [(str(t + 1), f"D{d}", float(depth - i)) for i, d in enumerate(docs)]
        out[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return out


# ---------------------------------------------------------------------------------------------------
# strata
# ---------------------------------------------------------------------------------------------------
def test_valid_strata():
    assert check_strata([(1, 10, 1), (11, 100, 0.2), (101, None, 0.05)]) == [
        (1, 10, 1.0),
        (11, 100, 0.2),
        (101, None, 0.05),
    ]


@pytest.mark.parametrize(
    ("strata", "message"),
    [
        ([(1, 10, 1.0), (10, 100, 0.2)], r"stratum 2 \(10, 100, 0.2\) overlaps stratum 1 \(ranks 1–10\)"),
        ([(1, 10, 1.0), (12, 100, 0.2)], r"leaves a gap after stratum 1 \(ranks 11–11"),
        ([(2, 10, 1.0)], "must start at rank 1"),
        ([(1, 10, 0.0)], r"rate 0.0 is out of range; expected 0 < rate <= 1"),
        ([(1, 10, 1.5)], r"rate 1.5 is out of range"),
        ([(1, 10, -0.2)], r"rate -0.2 is out of range"),
        ([(1, 10, "all")], "is not a number"),
        ([(1, 5, 1.0), (6, 3, 0.5)], "last_rank 3 is before first_rank 6"),
        ([(1, None, 1.0), (11, 20, 0.5)], "only the last stratum may be open-ended"),
        ([], "strata is empty"),
        ([(1, 10)], "is not a"),
    ],
)
def test_bad_strata_are_refused(strata, message):
    with pytest.raises(ValueError, match=message):
        check_strata(strata)
    with pytest.raises(ValueError, match=message):
        stratified_sample(_runs(), strata, seed=0)


# ---------------------------------------------------------------------------------------------------
# samples
# ---------------------------------------------------------------------------------------------------
def test_strata_come_from_the_best_rank():
    runs = {
        "A": pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["x", "y", "z"], "score": [3.0, 2.0, 1.0]}),
        "B": pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["z", "w", "x"], "score": [3.0, 2.0, 1.0]}),
    }
    sample = stratified_sample(runs, [(1, 1, 1.0), (2, 2, 1.0)], seed=0)
    got = dict(zip(sample["doc_id"], zip(sample["stratum"], sample["rank"], strict=True), strict=True))
    assert got == {"w": (2, 2), "x": (1, 1), "y": (2, 2), "z": (1, 1)}  # z: rank 3 in A, 1 in B
    assert sample["sampled"].all()


def test_cell_sizes_are_rounded_half_up_and_at_least_min_sampled():
    runs = _runs()
    c = Candidates(runs)
    sample = stratified_sample(c, [(1, 5, 1.0), (6, 30, 0.25)], seed=1)
    for (_, stratum), cell in sample.groupby(["query_id", "stratum"]):
        n = len(cell)
        want = n if stratum == 1 else max(1, int(np.floor(0.25 * n + 0.5)))
        assert int(cell["sampled"].sum()) == want
    assert sample["rank"].max() <= 30


def test_same_seed_same_sample_whatever_the_run_order():
    runs = _runs()
    a = stratified_sample(runs, [(1, 3, 1.0), (4, 20, 0.3)], seed=42)
    b = stratified_sample(dict(reversed(list(runs.items()))), [(1, 3, 1.0), (4, 20, 0.3)], seed=42)
    pd.testing.assert_frame_equal(a, b)
    c = stratified_sample(runs, [(1, 3, 1.0), (4, 20, 0.3)], seed=43)
    assert not a["sampled"].equals(c["sampled"])


def test_seed_is_required():
    with pytest.raises(ValueError, match="seed=None would not be reproducible"):
        stratified_sample(_runs(), [(1, 10, 1.0)])


def test_pool_runs_restrict_the_pool():
    runs = _runs()
    sample = stratified_sample(runs, [(1, 5, 1.0)], seed=0, pool_runs=["run0"])
    assert len(sample) == 5 * 3  # run0's top 5 of 3 topics


# ---------------------------------------------------------------------------------------------------
# prels
# ---------------------------------------------------------------------------------------------------
def test_to_prels_marks_unsampled_documents_and_writes_five_columns(tmp_path):
    runs = _runs()
    sample = stratified_sample(runs, [(1, 5, 1.0), (6, 30, 0.2)], seed=3)
    judgments = sample.loc[sample["sampled"], ["query_id", "doc_id"]].assign(relevance=1)
    path = tmp_path / "prels.txt"
    prels = to_prels(sample, judgments, path, header="# sample seed=3")
    assert (prels["relevance"] == np.where(sample["sampled"], 1, -1)).all()
    lines = path.read_text().splitlines()
    assert lines[0] == "# sample seed=3"
    assert all(len(line.split()) == 5 for line in lines[1:])
    from ir_incomplete.data import read_trec_prels

    back = read_trec_prels("\n".join(lines[1:]) + "\n")
    assert len(back) == len(sample)


def test_to_prels_refuses_unjudged_sampled_documents():
    sample = stratified_sample(_runs(), [(1, 5, 1.0)], seed=0)
    judgments = sample.iloc[1:][["query_id", "doc_id"]].assign(relevance=0)
    first = sample.iloc[0]
    with pytest.raises(ValueError, match=f"query '{first['query_id']}', document '{first['doc_id']}'"):
        to_prels(sample, judgments)
    prels = to_prels(sample, judgments, missing="nonrelevant")
    assert prels["relevance"].iloc[0] == 0


def test_full_sample_xinfap_equals_ap_of_the_pool():
    runs = _runs(n_runs=5, n_topics=3, depth=40, n_docs=80, seed=7)
    rng = np.random.default_rng(0)
    qrels = pd.DataFrame(
        [(str(t), f"D{d}", int(rng.integers(0, 3))) for t in (1, 2, 3) for d in range(80) if rng.random() < 0.4],
        columns=["query_id", "doc_id", "relevance"],
    )
    sample = stratified_sample(runs, [(1, 10, 1.0), (11, 100, 1.0)], seed=0)
    prels = to_prels(sample, qrels, missing="nonrelevant")
    ap = evaluate(runs, prels[["query_id", "doc_id", "relevance"]], ["AP@100"], per_query=True)["value"].to_numpy()
    xinf = evaluate(runs, prels, ["xinfAP@100"], per_query=True)["value"].to_numpy()
    # equal up to sample_eval's smoothing constants (ε₁ = 1e-5, ε₃ = 3e-5 in ρ/s)
    np.testing.assert_allclose(xinf, ap, atol=2e-5)


# ---------------------------------------------------------------------------------------------------
# the round trip on real data: xinfAP@100 over many samples averages to AP@100 of the full pool
# ---------------------------------------------------------------------------------------------------
def test_round_trip_covid_xinfap_is_unbiased_within_monte_carlo_error(covid):
    from ir_incomplete.data import prepare_runs

    names = sorted(covid["runs"])[::24]  # 6 runs
    topics = {"1", "2", "3", "4", "5", "6"}
    runs = {n: covid["runs"][n][covid["runs"][n]["query_id"].astype(str).isin(topics)] for n in names}
    oracle = covid["complete"][covid["complete"]["query_id"].astype(str).isin(topics)]
    c = Candidates(runs)
    prepared = prepare_runs(runs)
    full = to_prels(stratified_sample(c, [(1, 100, 1.0)], seed=0), oracle, missing="nonrelevant")
    reference = evaluate(prepared, full[["query_id", "doc_id", "relevance"]], ["AP@100"], per_query=False)
    reference = reference.set_index("run")["value"]
    values = []
    for seed in range(60):
        sample = stratified_sample(c, [(1, 10, 1.0), (11, 100, 0.2)], seed=seed)
        prels = to_prels(sample, oracle, missing="nonrelevant")
        values.append(evaluate(prepared, prels, ["xinfAP@100"], per_query=False).set_index("run")["value"])
    draws = pd.concat(values, axis=1)
    mean = draws.mean(axis=1)
    error = draws.std(axis=1, ddof=1) / np.sqrt(draws.shape[1])
    assert (error > 0).all()
    z = (mean - reference) / error
    assert (np.abs(z) < 4.5).all(), z  # each run within Monte Carlo error
    # the mean over runs (MAP) too, with its own Monte Carlo error
    map_error = draws.mean(axis=0).std(ddof=1) / np.sqrt(draws.shape[1])
    assert abs(mean.mean() - reference.mean()) < 4 * map_error
