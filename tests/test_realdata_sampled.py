"""TREC 2017 Precision Medicine (abstracts), judged by a stratified sample: parity with NIST's official
``sample_eval`` outputs, and the estimators on complete judgments against pytrec_eval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import DATA, _need, pytrec_per_query

from ir_incomplete import evaluate, parse
from ir_incomplete.cli import main as cli_main
from ir_incomplete.data import read_trec_qrels, read_trec_run

PM = DATA / "trec-pm2017-sampled"
RUNS = ["mugpubbase", "mugpubboost", "mugpubdiseas", "mugpubgene", "mugpubshould"]
#: our measure → the name in sample_eval's output (cut-off 100 = its max result size)
OFFICIAL = {
    "xinfAP@100": "infAP",
    "infNDCG@100": "infNDCG",
    "iP@10": "iP10",
    "iP@15": "iP15",
    "iP@50": "iP50",
    "iP@100": "iP100",
}
IPREC = {repr(parse(f"iPrec(cutoff=100)@{lv / 10}")): f"iprec@rec{lv / 10:.2f}" for lv in range(11)}


def read_output(path) -> pd.DataFrame:
    return pd.read_csv(path, sep=r"\s+", header=None, names=["measure", "query_id", "value"], dtype={"query_id": str})


@pytest.fixture(scope="module")
def pm():
    _need(PM)
    prels = PM / "prels.abstracts.2017.txt.gz"
    runs = {name: str(PM / "runs" / f"{name}.gz") for name in RUNS}
    per_query = evaluate(runs, prels, list(OFFICIAL) + list(IPREC), topics="run")
    return {"prels": prels, "runs": runs, "per_query": per_query}


@pytest.mark.parametrize("run", RUNS)
def test_per_topic_parity_17_digits(pm, run):
    hp = read_output(PM / "nist-output" / "hp" / f"{run}.txt")
    ours = pm["per_query"][pm["per_query"]["run"] == run]
    for measure, name in OFFICIAL.items():
        official = hp[(hp["measure"] == name) & (hp["query_id"] != "all")].set_index("query_id")["value"]
        got = ours[ours["measure"] == measure].set_index("query_id")["value"]
        assert len(official) == 30
        assert sorted(got.index) == sorted(official.index)
        diff = (got.reindex(official.index) - official.astype(float)).abs().max()
        assert diff <= 1e-9, (run, measure, diff)


@pytest.mark.parametrize("run", RUNS)
def test_official_four_decimals_and_all_lines(pm, run):
    official = read_output(PM / "nist-output" / f"{run}.sampleval")
    hp = read_output(PM / "nist-output" / "hp" / f"{run}.txt")
    ours = pm["per_query"][pm["per_query"]["run"] == run]
    means = ours.groupby("measure")["value"].mean()
    for measure, name in OFFICIAL.items():
        rows = official[official["measure"] == name]
        per_topic = rows[rows["query_id"] != "all"].set_index("query_id")["value"].astype(float)
        got = ours[ours["measure"] == measure].set_index("query_id")["value"].reindex(per_topic.index)
        assert (got - per_topic).abs().max() <= 5e-5
        assert abs(means[measure] - float(rows[rows["query_id"] == "all"]["value"].iloc[0])) <= 5e-5
        assert (
            abs(means[measure] - float(hp[(hp["measure"] == name) & (hp["query_id"] == "all")]["value"].iloc[0])) < 1e-9
        )
    for measure, name in IPREC.items():  # the program prints interpolated precision only as a mean
        assert abs(means[measure] - float(hp[hp["measure"] == name]["value"].iloc[0])) < 1e-9, measure
        assert abs(means[measure] - float(official[official["measure"] == name]["value"].iloc[0])) <= 5e-5


def test_all_tsv_and_program_aggregate(pm):
    table = pd.read_csv(PM / "nist-output" / "all.tsv", sep="\t")
    names = {"infAP": "xinfAP@100", "infNDCG": "infNDCG@100", "iP10": "iP@10", "iP100": "iP@100"}
    means = evaluate(pm["runs"], pm["prels"], list(names.values()), per_query=False, topics="run")
    means = means.set_index(["run", "measure"])["value"]
    for run, name, value in table.itertuples(index=False):
        assert abs(means[(run, names[name])] - value) <= 5e-5


def test_program_aggregate_leaves_out_unanswered_topics(pm):
    run = read_trec_run(pm["runs"]["mugpubbase"])
    run = run[~run["query_id"].isin(["1", "2", "3"])]
    both = evaluate({"r": run}, pm["prels"], ["xinfAP@100"], per_query=False, topics="run")["value"].iloc[0]
    every = evaluate({"r": run}, pm["prels"], ["xinfAP@100"], per_query=False)["value"].iloc[0]
    per_query = evaluate({"r": run}, pm["prels"], ["xinfAP@100"])
    answered = per_query[~per_query["query_id"].isin(["1", "2", "3"])]["value"]
    assert both == pytest.approx(answered.mean(), abs=1e-15)
    assert every == pytest.approx(answered.sum() / 30, abs=1e-15)


def test_cli_prints_the_official_all_line(pm, capsys):
    assert cli_main([str(pm["prels"]), pm["runs"]["mugpubboost"], "xinfAP@100", "infNDCG@100", "--topics", "run"]) == 0
    out = capsys.readouterr().out.split("\n")
    assert out[:2] == ["xinfAP@100\t0.1179", "infNDCG@100\t0.4158"]


def test_plain_qrels_of_nist_are_the_judged_lines(pm):
    prels = read_trec_qrels(pm["prels"])
    plain = read_trec_qrels(PM / "qrels-treceval.abstracts.2017.txt.gz")
    judged = prels[prels["relevance"] >= 0][["query_id", "doc_id", "relevance"]]
    key = ["query_id", "doc_id"]
    assert judged.sort_values(key).to_numpy().tolist() == plain.sort_values(key).to_numpy().tolist()


# ---------------------------------------------------------------------------------------------------
# complete judgments (every pooled document judged, one stratum): the estimators are the measures
# ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def robust(robust04):
    qrels = robust04["qrels"]
    assert (qrels["relevance"] >= 0).all()  # no pooled-but-unjudged entries
    names = list(robust04["runs"])[:4]
    return qrels, {n: robust04["runs"][n] for n in names}


def test_complete_judgments_infndcg_is_ndcg(robust):
    qrels, runs = robust
    ours = evaluate(runs, qrels, ["infNDCG", "infNDCG(idcg=exact)@10", "infNDCG(idcg=exact)@100"])
    for name, run in runs.items():
        ref = pytrec_per_query(qrels, run, {"ndcg", "ndcg_cut.10,100"})
        sub = ours[ours["run"] == name]
        for measure, key in [("infNDCG", "ndcg"), ("infNDCG(idcg=exact)@10", "ndcg_cut_10")]:
            got = sub[sub["measure"] == measure].set_index("query_id")["value"]
            diff = max(abs(got[q] - v[key]) for q, v in ref.items())
            assert diff < 1e-9, (name, measure, diff)
        got = sub[sub["measure"] == "infNDCG(idcg=exact)@100"].set_index("query_id")["value"]
        assert max(abs(got[q] - v["ndcg_cut_100"]) for q, v in ref.items()) < 1e-9


def test_complete_judgments_xinfap_is_ap_and_ip_is_p(robust):
    qrels, runs = robust
    ours = evaluate(runs, qrels, ["xinfAP", "infAP(c=3)", "iP@10", "iP@100", "xinfAP@100"])
    largest = {"xinfAP": 0.0, "iP": 0.0}
    for name, run in runs.items():
        ref = pytrec_per_query(qrels, run, {"map", "P.10,100", "map_cut.100"})
        sub = ours[ours["run"] == name].pivot(index="query_id", columns="measure", values="value")
        # one stratum, fully judged: the pool variant of infAP with c = 3, exactly
        assert (sub["xinfAP"] - sub["infAP(c=3)"]).abs().max() < 1e-12
        # and AP / P@k up to the smoothing terms: |Δ| ≤ 3ε = 3e-5 (SAMPLED.md, ε₁ = 1e-5, ε₃ = 3e-5)
        for q, v in ref.items():
            for ours_name, key, kind in [
                ("xinfAP", "map", "xinfAP"),
                ("xinfAP@100", "map_cut_100", "xinfAP"),
                ("iP@10", "P_10", "iP"),
                ("iP@100", "P_100", "iP"),
            ]:
                diff = abs(sub.loc[q, ours_name] - v[key])
                largest[kind] = max(largest[kind], diff)
    assert largest["xinfAP"] < 3e-5
    assert largest["iP"] < 3e-5
    assert largest["xinfAP"] > 0  # the ε terms are there: the estimator is not AP by construction


def test_complete_judgments_on_pm_plain_qrels(pm):
    plain = read_trec_qrels(PM / "qrels-treceval.abstracts.2017.txt.gz")
    run = read_trec_run(pm["runs"]["mugpubgene"])
    ours = evaluate({"r": run}, plain, ["infNDCG", "iP@10", "xinfAP"]).pivot(
        index="query_id", columns="measure", values="value"
    )
    ref = pytrec_per_query(plain, run, {"ndcg", "P.10", "map"})
    assert np.max([abs(ours.loc[q, "infNDCG"] - v["ndcg"]) for q, v in ref.items()]) < 1e-9
    assert np.max([abs(ours.loc[q, "iP@10"] - v["P_10"]) for q, v in ref.items()]) < 3e-5
    assert np.max([abs(ours.loc[q, "xinfAP"] - v["map"]) for q, v in ref.items()]) < 3e-5
