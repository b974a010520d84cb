"""Every interval of a bootstrapped measure contains the value printed with it: per query and aggregated,
in ``evaluate(..., interval=)``, on the command line (``--interval``) and in
``add_bootstrap_intervals``, for every measure of the family, many stats, seeds, runs and levels, and on
TREC-COVID's ``UIowaS_Run3``, whose ``BootNDCG@10`` (0.5397, the mean of the queries' most likely
values) lies below the 5th percentile of its replicate means (0.5409)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import COVID, _need

from ir_incomplete import evaluate, parse
from ir_incomplete.bootstrap import add_bootstrap_intervals, bootstrap_measure, value_interval
from ir_incomplete.cli import main

STATS = ("mode", "mean", "median", "p1", "p5", "p50", "p95", "p99")
FAMILY = ("BootNDCG({})@5", "BootAP({})@10", "BootP({})@5", "BootRBP({})@10", "BootQ({})@10")


def collection(seed: int) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """A seeded random collection: 4 topics (one without relevant documents), 3 runs, one of which skips a
    topic; grades 0..3, about half the retrieved documents unjudged, some pooled but unjudged (−1)."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], {}
    for t in range(4):
        top = (0, 1, 2, 3)[t]
        for d in range(30):
            u = rng.random()
            if u < 0.5:
                qrels.append((f"q{t}", f"d{d}", int(rng.integers(0, top + 1))))
            elif u < 0.6:
                qrels.append((f"q{t}", f"d{d}", -1))
    for r in range(3):
        rows = []
        for t in range(4 if r else 3):
            docs = rng.permutation(30)[: 12 + 4 * r]
            rows += [(f"q{t}", f"d{d}", float(s)) for d, s in zip(docs, rng.random(len(docs)), strict=True)]
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs, pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])


def _contained(table: pd.DataFrame) -> pd.DataFrame:
    boot = table[table["lo"].notna()]
    assert len(boot)
    assert (boot["lo"] <= boot["value"]).all() and (boot["value"] <= boot["hi"]).all(), boot[
        (boot["lo"] > boot["value"]) | (boot["value"] > boot["hi"])
    ]
    return boot


@pytest.mark.parametrize("seed", range(8))
def test_evaluate_intervals_contain_the_value(seed):
    runs, qrels = collection(seed)
    level = (0.5, 0.8, 0.9, 0.95)[seed % 4]
    measures = [form.format(f"b={40 + 7 * seed},seed={seed},stat={stat}") for form in FAMILY for stat in STATS]
    for topics in ("qrels", "run"):
        per_query = _contained(evaluate(runs, qrels, measures, interval=level, topics=topics))
        aggregated = _contained(evaluate(runs, qrels, measures, per_query=False, interval=level, topics=topics))
        assert len(per_query) == len(runs) * (4 if topics == "qrels" else 11 / 3) * len(measures)
        assert len(aggregated) == len(runs) * len(measures)


def test_outside_values_extend_the_percentiles_and_nothing_else():
    runs, qrels = collection(3)
    measure = "BootQ(b=60,stat=p99)@10"  # the 99th percentile lies above the 95th
    reps = bootstrap_measure(runs, qrels, measure).replicates
    table = evaluate(runs, qrels, [measure], interval=0.9)
    lo, hi = np.percentile(reps.to_numpy(), 5, axis=1), np.percentile(reps.to_numpy(), 95, axis=1)
    value = table["value"].to_numpy()
    np.testing.assert_array_equal(table["lo"].to_numpy(), lo)
    np.testing.assert_array_equal(table["hi"].to_numpy(), np.maximum(hi, value))
    assert (value > hi).any()


def test_value_interval():
    lo, hi = value_interval(np.array([0.5, 0.2, 0.9, 0.4]), np.array([0.3, 0.3, 0.3, np.nan]), [0.6, 0.6, 0.6, np.nan])
    np.testing.assert_array_equal(lo, [0.3, 0.2, 0.3, np.nan])
    np.testing.assert_array_equal(hi, [0.6, 0.6, 0.9, np.nan])


@pytest.mark.parametrize("seed", range(4))
def test_add_bootstrap_intervals_contain_the_table_value(seed):
    runs, qrels = collection(seed)
    measures = [f"BootNDCG(b=50,stat={stat})@5" for stat in ("mode", "p99", "p1")] + ["BootAP(b=50,stat=mode)@10"]
    measures = [repr(parse(m)) for m in measures]
    aggregate = evaluate(runs, qrels, measures, per_query=False)
    table = aggregate.pivot(index="run", columns="measure", values="value")[measures].reset_index()
    table = table.rename(columns={"run": "name"})
    table.columns.name = None
    out = add_bootstrap_intervals(table, runs, qrels)
    for label in measures:
        assert (out[f"{label} p5"] <= out[label]).all() and (out[label] <= out[f"{label} p95"]).all(), label
    per_query = evaluate(runs, qrels, measures).rename(columns={"run": "name", "query_id": "qid"})
    out = add_bootstrap_intervals(per_query, runs, qrels)
    assert out["p5"].notna().all()
    assert (out["p5"] <= out["value"]).all() and (out["value"] <= out["p95"]).all()
    # the same bounds as evaluate(interval=0.9)
    both = evaluate(runs, qrels, measures, interval=0.9)
    np.testing.assert_array_equal(out["p5"].to_numpy(), both["lo"].to_numpy())
    np.testing.assert_array_equal(out["p95"].to_numpy(), both["hi"].to_numpy())


COVID_RUNS = ("UIowaS_Run3", "BBGhelani1", "BM25R2", "BERT")


@pytest.fixture(scope="module")
def uiowas():
    qrels = _need(COVID / "qrels.round1.txt.gz")
    return str(qrels), {name: str(_need(COVID / "runs" / f"{name}.gz")) for name in COVID_RUNS}


def test_uiowas_run3_value_lies_in_its_interval(uiowas, capsys):
    qrels, paths = uiowas
    run = paths["UIowaS_Run3"]
    table = evaluate({"UIowaS_Run3": run}, qrels, ["BootNDCG@10"], per_query=False, interval=0.9)
    row = table.iloc[0]
    means = bootstrap_measure({"UIowaS_Run3": run}, qrels, "BootNDCG@10").replicates.to_numpy().mean(axis=0)
    assert round(row["value"], 4) == 0.5397 and round(np.percentile(means, 5), 4) == 0.5409
    assert row["lo"] == row["value"] and row["hi"] == pytest.approx(np.percentile(means, 95), abs=1e-12)
    assert main([qrels, run, "BootNDCG@10", "--interval", "0.9"]) == 0
    assert capsys.readouterr().out == "BootNDCG@10\t0.5397\t0.5397\t0.5562\n"


@pytest.mark.parametrize("stat", ["mode", "mean", "p95"])
def test_covid_runs_values_lie_in_their_intervals_in_python_and_on_the_command_line(uiowas, capsys, stat):
    qrels, paths = uiowas
    measures = [f"BootNDCG(b=200,seed=11,stat={stat})@10", f"BootAP(b=200,seed=5,stat={stat})@100"]
    per_query = _contained(evaluate(paths, qrels, measures, interval=0.9))
    aggregated = _contained(evaluate(paths, qrels, measures, per_query=False, interval=0.9))
    assert len(per_query) == len(COVID_RUNS) * 30 * len(measures)
    assert main([qrels, *paths.values(), *measures, "-q", "--interval", "0.9", "-p", "-1"]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == len(per_query) + len(aggregated)
    for _run, _qid, _measure, value, lo, hi in lines:
        assert float(lo) <= float(value) <= float(hi)
    summary = {(r, m): (float(v), float(lo), float(hi)) for r, q, m, v, lo, hi in lines if q == "all"}
    for row in aggregated.itertuples():
        assert summary[(row.run, row.measure)] == pytest.approx((row.value, row.lo, row.hi), abs=1e-12)
