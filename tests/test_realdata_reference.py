"""Native reference measures (AP, nDCG, P, R, RR, Rprec, Judged, NumRet, NumRel) on real TREC data
(``../shared/data``; skipped when absent): equal to pytrec_eval per query to 1e-9 on all 143 TREC-COVID
round-1 runs (round-1 and complete qrels), Robust04's 10 runs and trec_eval's own fixtures, with and
without ``judged_only`` and at relevance levels 1 and 2."""

from __future__ import annotations

import ir_measures
import numpy as np
import pandas as pd
import pytest
from conftest import judgment_group

from ir_incomplete import evaluate
from ir_incomplete.data import read_trec_qrels, read_trec_run

TOL = 1e-9
CUTOFFS = (5, 10, 100, 1000, 2000)  # 2000: longer than every ranking


# ---------------------------------------------------------------------------------------------------
# pytrec_eval, straight from its dicts
# ---------------------------------------------------------------------------------------------------
def _qrels_dict(frame, value=None):
    """pytrec_eval's qrels; ``value`` replaces every grade (also the negative ones)."""
    out = {}
    grades = frame["relevance"].astype(int).tolist() if value is None else [value] * len(frame)
    for q, d, g in zip(frame["query_id"].astype(str), frame["doc_id"].astype(str), grades, strict=True):
        out.setdefault(q, {})[d] = g
    return out


def _run_dict(frame):
    out = {}
    for q, d, s in zip(frame["query_id"].astype(str), frame["doc_id"].astype(str), frame["score"], strict=True):
        out.setdefault(q, {})[d] = float(s)
    return out


def _reference_table(qrels_frame, run_dicts, rel, judged_only):
    """Our measures and the pytrec_eval value each must equal: ``(measures, {run: {qid: [values]}})``.

    RR@k is pytrec_eval's ``recip_rank`` where the first relevant document lies within k (1/rank ≥ 1/k);
    Judged@k is pytrec_eval's ``P_k`` with every qrels entry made relevant, times k / min(k, num_ret)."""
    import pytrec_eval

    measures, recipes = [], []

    def add(measure, recipe):
        measures.append(measure)
        recipes.append(recipe)

    kw = {"rel": rel, "judged_only": judged_only}
    add(ir_measures.AP(**kw), lambda v: v["map"])
    add(ir_measures.nDCG(judged_only=judged_only), lambda v: v["ndcg"])
    add(ir_measures.RR(**kw), lambda v: v["recip_rank"])
    add(ir_measures.Rprec(**kw), lambda v: v["Rprec"])
    add(ir_measures.NumRel(rel=rel), lambda v: v["num_rel"])
    add(ir_measures.NumRet(rel=rel), lambda v: v["num_rel_ret"])
    names = {"map", "ndcg", "recip_rank", "Rprec", "num_rel", "num_rel_ret", "num_ret"}
    for k in CUTOFFS:
        add(ir_measures.AP(**kw) @ k, lambda v, k=k: v[f"map_cut_{k}"])
        add(ir_measures.nDCG(judged_only=judged_only) @ k, lambda v, k=k: v[f"ndcg_cut_{k}"])
        add(ir_measures.P(**kw) @ k, lambda v, k=k: v[f"P_{k}"])
        add(ir_measures.R(**kw) @ k, lambda v, k=k: v[f"recall_{k}"])
        add(ir_measures.RR(**kw) @ k, lambda v, k=k: v["recip_rank"] if v["recip_rank"] >= 1.0 / k else 0.0)
        names |= {f"map_cut_{k}", f"ndcg_cut_{k}", f"P_{k}", f"recall_{k}"}
    plain = not judged_only and rel == 1
    if plain:  # measures without rel / judged_only: once
        add(ir_measures.NumRet, lambda v: v["num_ret"])
        add(ir_measures.Judged, lambda v: v["judged_rel_ret"] / v["num_ret"] if v["num_ret"] else 0.0)
        for k in CUTOFFS:
            add(
                ir_measures.Judged @ k,
                lambda v, k=k: v[f"judged_P_{k}"] * k / min(k, v["num_ret"]) if v["num_ret"] else 0.0,
            )

    evaluator = pytrec_eval.RelevanceEvaluator(
        _qrels_dict(qrels_frame), names, relevance_level=rel, judged_docs_only_flag=judged_only
    )
    in_qrels = None
    if plain:
        in_qrels = pytrec_eval.RelevanceEvaluator(
            _qrels_dict(qrels_frame, value=1), {"num_rel_ret", "num_ret"} | {f"P_{k}" for k in CUTOFFS}
        )
    table = {}
    for name, run in run_dicts.items():
        per_query = evaluator.evaluate(run)
        if in_qrels is not None:
            for qid, values in in_qrels.evaluate(run).items():
                per_query[qid]["judged_rel_ret"] = values["num_rel_ret"]
                for k in CUTOFFS:
                    per_query[qid][f"judged_P_{k}"] = values[f"P_{k}"]
        table[name] = {qid: [recipe(v) for recipe in recipes] for qid, v in per_query.items()}
    return measures, table


def _assert_parity(runs, run_dicts, qrels_frame, rel, judged_only, label):
    """Every (run, query, measure) of ``evaluate`` equals pytrec_eval to TOL; queries pytrec_eval does
    not report (not answered by the run) are 0. Returns the number of values compared."""
    measures, table = _reference_table(qrels_frame, run_dicts, rel, judged_only)
    frame = evaluate(runs, qrels_frame, measures)
    labels = [repr(m) for m in measures]
    wide = frame.pivot_table(index=["run", "query_id"], columns="measure", values="value", sort=False)[labels]
    reported = {(run, qid): values for run, per_query in table.items() for qid, values in per_query.items()}
    assert reported and set(reported) <= set(wide.index)
    expected = pd.DataFrame.from_dict(reported, orient="index", columns=labels)
    expected.index = pd.MultiIndex.from_tuples(expected.index)
    expected = expected.reindex(wide.index, fill_value=0.0)
    diff = np.abs(wide.to_numpy() - expected.to_numpy())
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape)
    assert diff.max() <= TOL, (
        f"{label}: {wide.index[worst[0]]} {labels[worst[1]]}: ours {wide.iloc[worst]!r}, "
        f"pytrec_eval {expected.iloc[worst]!r}"
    )
    assert set(frame["query_id"]) == set(qrels_frame["query_id"].astype(str))
    return diff.size


@pytest.fixture(scope="module")
def covid_dicts(covid_run_dicts):
    return covid_run_dicts


@pytest.fixture(scope="module")
def robust_dicts(robust04_run_dicts):
    return robust04_run_dicts


# ---------------------------------------------------------------------------------------------------
# TREC-COVID round 1: 143 runs, shallow round-1 qrels and the complete qrels
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("rel", "judged_only"), [(1, False), (1, True), (2, False), (2, True)])
def test_covid_round1_qrels_match_pytrec_eval(covid, covid_dicts, rel, judged_only):
    assert len(covid["runs"]) == 143
    compared = _assert_parity(covid["runs"], covid_dicts, covid["qrels"], rel, judged_only, "covid round 1")
    assert compared >= 143 * 30 * 30


@pytest.mark.parametrize(("rel", "judged_only"), [(1, False), (2, True)])
def test_covid_complete_qrels_match_pytrec_eval(covid, covid_dicts, rel, judged_only):
    _assert_parity(covid["runs"], covid_dicts, covid["complete"], rel, judged_only, "covid complete")


# ---------------------------------------------------------------------------------------------------
# Robust04: 10 runs, 249 topics, deep pools
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("rel", "judged_only"), [(1, False), (2, True)])
def test_robust04_matches_pytrec_eval(robust04, robust_dicts, rel, judged_only):
    compared = _assert_parity(robust04["runs"], robust_dicts, robust04["qrels"], rel, judged_only, "robust04")
    assert compared >= 10 * 249 * 30


# ---------------------------------------------------------------------------------------------------
# trec_eval's fixtures (qrels.123 and qrels.rel_level have -1 entries: pooled but unjudged)
# ---------------------------------------------------------------------------------------------------
def _fixture_qrels(trec_eval_test, name):
    """``qrels.123#g`` is judgment group g of ``qrels.123`` (trec_eval ``-R qrels_jg``: the second column
    names the group; each group judges the same documents, with −1 entries and grades up to 6)."""
    if "#" not in name:
        return read_trec_qrels(trec_eval_test / name)
    name, group = name.split("#")
    return judgment_group(trec_eval_test / name, int(group))


@pytest.mark.parametrize("qrels_name", ["qrels.test", "qrels.rel_level", "qrels.123#0", "qrels.123#1", "qrels.123#2"])
@pytest.mark.parametrize(("rel", "judged_only"), [(1, False), (1, True), (2, False), (2, True), (4, True)])
def test_trec_eval_fixtures_match_pytrec_eval(trec_eval_test, qrels_name, rel, judged_only):
    qrels = _fixture_qrels(trec_eval_test, qrels_name)
    assert len(qrels) > 1000
    run = read_trec_run(trec_eval_test / "results.test")
    _assert_parity({"test": run}, {"test": _run_dict(run)}, qrels, rel, judged_only, qrels_name)


def _official_name(name: str) -> str | None:
    """Our measure for a trec_eval output name (``None``: not one of ours)."""
    fixed = {
        "map": "AP",
        "Rprec": "Rprec",
        "recip_rank": "RR",
        "ndcg": "nDCG",
        "num_ret": "NumRet",
        "num_rel": "NumRel",
        "num_rel_ret": "NumRet(rel=1)",
    }
    if name in fixed:
        return fixed[name]
    for prefix, measure in (("P_", "P"), ("recall_", "R"), ("ndcg_cut_", "nDCG"), ("map_cut_", "AP")):
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            return f"{measure}@{name[len(prefix) :]}"
    return None


def test_trec_eval_fixture_official_output(trec_eval_test):
    """trec_eval's own expected output for ``qrels.test`` + ``results.test`` (``out.test.aq``: per query
    and ``all``, 4 decimals): every reference measure in it, per query and as the aggregate."""
    official = {}
    for line in (trec_eval_test / "out.test.aq").read_text().splitlines():
        name, qid, value = line.split()
        measure = _official_name(name)
        if measure is not None:
            official[(qid, measure)] = float(value)
    measures = sorted({m for _, m in official})
    assert len(measures) >= 40 and len(official) == 4 * len(measures)
    run = read_trec_run(trec_eval_test / "results.test")
    per_query = evaluate(run, trec_eval_test / "qrels.test", measures).set_index(["query_id", "measure"])["value"]
    means = evaluate(run, trec_eval_test / "qrels.test", measures, per_query=False).set_index("measure")["value"]
    for (qid, measure), expected in official.items():
        got = means[measure] if qid == "all" else per_query[(qid, measure)]
        assert abs(got - expected) <= 5e-5 + 1e-12, (qid, measure, got, expected)
