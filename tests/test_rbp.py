"""RBP with residual and the naive upper bounds of P@k and AP@k, against brute force."""

from __future__ import annotations

import itertools

import ir_measures
import numpy as np
import pandas as pd
import pytest

from ir_incomplete import evaluate, parse
from ir_incomplete.measures.base import IncompleteMeasure
from ir_incomplete.measures.sampled import ResidualMetric


def random_topics(rng, n_topics=25):
    """``(qrels, run)`` dicts: judged grades 0–2, some pooled-but-unjudged (−1), unjudged run documents."""
    qrels, run = {}, {}
    for t in range(n_topics):
        judged = {f"d{i}": int(rng.choice([-1, 0, 0, 1, 2])) for i in range(int(rng.integers(0, 15)))}
        qrels[f"q{t}"] = judged if judged else {"nothing": 0}
        docs = list(judged) + [f"u{i}" for i in range(8)]
        size = int(rng.integers(1, len(docs) + 1))
        chosen = rng.choice(docs, size=size, replace=False)
        run[f"q{t}"] = {d: float(size - i) for i, d in enumerate(chosen)}
    return qrels, run


def ranking(scores):
    return [d for d, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def status(qrels, doc, rel):
    """1 relevant, 0 judged nonrelevant, None unjudged (absent or negative grade)."""
    g = qrels.get(doc)
    if g is None or g < 0:
        return None
    return int(g >= rel)


def ap_at_k(flags, n_relevant):
    hits, total = 0, 0.0
    for i, f in enumerate(flags, start=1):
        if f:
            hits += 1
            total += hits / i
    return total / n_relevant if n_relevant else 0.0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [None, 1, 5, 10])
def test_against_brute_force(seed, k):
    rng = np.random.default_rng(seed)
    qrels, run = random_topics(rng)
    at = f"@{k}" if k else ""
    measures = [f"RBPResidual(p=0.7){at}", f"RBPResidual(rel=2){at}", f"APUpper{at}", "PUpper@5", "PUpper(rel=2)@3"]
    res = evaluate({"r": run}, qrels, measures)
    got = {(m, q): v for m, q, v in zip(res["measure"], res["query_id"], res["value"], strict=True)}
    ev = ir_measures.evaluator([parse(f"RBPResidual(p=0.7){at}")], qrels)
    details = {m.query_id: m for m in ev.iter_calc(run)}
    for qid, scores in run.items():
        ranked = ranking(scores)
        top = ranked if k is None else ranked[:k]
        judged = qrels[qid]
        for p, rel, name in [(0.7, 1, f"RBPResidual(p=0.7){at}"), (0.8, 2, f"RBPResidual(rel=2){at}")]:
            value = sum((1 - p) * p**i for i, d in enumerate(top) if status(judged, d, rel) == 1)
            residual = sum((1 - p) * p**i for i, d in enumerate(top) if status(judged, d, rel) is None)
            residual += p ** len(top)
            assert got[(name, qid)] == pytest.approx(value, abs=1e-12)
            if p == 0.7:
                m = details[qid]
                assert isinstance(m, ResidualMetric)
                assert (m.value, m.residual, m.upper) == pytest.approx((value, residual, value + residual), abs=1e-12)
        for kk, rel in [(5, 1), (3, 2)]:
            flags = [status(judged, d, rel) in (1, None) for d in ranked[:kk]]
            name = "PUpper@5" if rel == 1 else "PUpper(rel=2)@3"
            assert got[(name, qid)] == pytest.approx(sum(flags) / kk, abs=1e-12)
        # APUpper: the maximum of AP@k over every relevance of the unjudged documents in the top k
        n_rel = sum(1 for g in judged.values() if g >= 1)
        unjudged = [i for i, d in enumerate(top) if status(judged, d, 1) is None]
        best = 0.0
        for choice in itertools.product([False, True], repeat=len(unjudged)):
            flags = [status(judged, d, 1) == 1 for d in top]
            for i, on in zip(unjudged, choice, strict=True):
                flags[i] = on
            best = max(best, ap_at_k(flags, n_rel + sum(choice)))
        assert got[(f"APUpper{at}", qid)] == pytest.approx(best, abs=1e-12), (qid, top)


def test_all_unjudged_relevant_is_not_an_upper_bound_of_ap():
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 2.0, **{f"x{i}": 1.0 - i / 1000 for i in range(99)}}}
    value = evaluate({"r": run}, qrels, ["APUpper@100"])["value"].iloc[0]
    assert value == 1.0  # AP with only a relevant: 1; all 100 relevant would give 1 too, but with x99 only:
    flags = [True] + [False] * 98 + [True]
    assert ap_at_k(flags, 2) == pytest.approx(0.51)


def test_bounds_enclose_the_complete_value(robust04):
    """Robust04 judgments cut to a shallow pool (the top 5 of one run): every bound computed from the
    shallow qrels encloses the value from the full qrels (one completion of the shallow judgments)."""
    qrels = robust04["qrels"]
    runs = dict(list(robust04["runs"].items())[:3])
    first = next(iter(runs.values()))
    top5 = first.sort_values(["query_id", "score"], ascending=[True, False]).groupby("query_id").head(5)
    shallow = qrels.merge(top5[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    full = evaluate(runs, qrels, ["AP@20", "P@10", "RBPResidual@20"])
    low = evaluate(runs, shallow, ["AP@20", "P@10"])
    up = evaluate(runs, shallow, ["APUpper@20", "PUpper@10"])
    full_v = full.pivot_table(index=["run", "query_id"], columns="measure", values="value")
    up_v = up.pivot_table(index=["run", "query_id"], columns="measure", values="value")
    low_v = low.pivot_table(index=["run", "query_id"], columns="measure", values="value").reindex(up_v.index)
    full_v = full_v.reindex(up_v.index)
    assert (up_v["PUpper@10"] >= full_v["P@10"] - 1e-12).all()
    assert (low_v["P@10"] <= full_v["P@10"] + 1e-12).all()
    assert (up_v["APUpper@20"] >= full_v["AP@20"] - 1e-12).all()
    assert (up_v["APUpper@20"] > full_v["AP@20"] + 0.01).any()  # not trivially tight
    ev = ir_measures.evaluator([parse("RBPResidual(p=0.8)@20")], shallow)
    checked = 0
    for name, run in runs.items():
        for m in ev.iter_calc(run):
            complete = full_v.loc[(name, m.query_id), "RBPResidual@20"]
            assert m.value - 1e-12 <= complete <= m.upper + 1e-12
            checked += 1
    assert checked > 500


def test_apupper_is_ap_when_nothing_is_unjudged():
    qrels = {"q": {"a": 1, "b": 0, "c": 2, "d": 1, "e": 0}}
    run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "e": 2.0}}
    got = evaluate({"r": run}, qrels, ["APUpper@3", "AP@3", "APUpper", "AP", "PUpper@4", "P@4"])
    v = dict(zip(got["measure"], got["value"], strict=True))
    assert v["APUpper@3"] == pytest.approx(v["AP@3"], abs=1e-12)
    assert v["APUpper"] == pytest.approx(v["AP"], abs=1e-12)
    assert v["PUpper@4"] == pytest.approx(v["P@4"], abs=1e-12)


def test_builtin_rbp_is_untouched_and_agrees_when_available():
    rbp = ir_measures.measures.registry["RBP"]
    assert type(rbp).__module__.startswith("ir_measures")  # the built-in, not a measure of ours
    assert not isinstance(rbp, IncompleteMeasure)
    assert parse("RBP(p=0.8)@10") == ir_measures.RBP(p=0.8) @ 10
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = {"q": {"a": 3.0, "x": 2.0, "c": 1.0}}
    try:
        theirs = ir_measures.calc_aggregate([ir_measures.RBP(p=0.8) @ 10], qrels, run)[ir_measures.RBP(p=0.8) @ 10]
    except ValueError:
        pytest.skip("no ir_measures provider for RBP is installed (cwl_eval or trectools)")
    ours = evaluate({"r": run}, qrels, ["RBPResidual(p=0.8)@10"])["value"].iloc[0]
    assert ours == pytest.approx(theirs, abs=1e-9)


def test_residual_metric_fields_through_pandas():
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "x"], "score": [2.0, 1.0]})
    (m,) = list(ir_measures.evaluator([parse("RBPResidual@2")], qrels).iter_calc(run))
    assert m._fields == ("query_id", "measure", "value", "residual", "upper")
    assert (m.value, m.residual, m.upper) == pytest.approx((0.2, 0.16 + 0.64, 1.0), abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [None, 3])
@pytest.mark.parametrize("rel", [1, 2])
def test_graded_gain_against_brute_force(seed, k, rel):
    """gain=graded: grade / (the largest grade of the whole qrels) for grade >= rel, 0 below rel; unjudged
    documents (absent or negative grade) have gain 0 and count in the residual."""
    rng = np.random.default_rng(100 + seed)
    qrels, run = random_topics(rng)
    qrels["q0"] = {**qrels["q0"], "top": 4}  # one topic holds the largest grade: G = 4 for every topic
    at = f"@{k}" if k else ""
    name = f"RBPResidual(p=0.6,rel={rel},gain=graded){at}"
    res = evaluate({"r": run}, qrels, [name])
    got = dict(zip(res["query_id"], res["value"], strict=True))
    details = {m.query_id: m for m in ir_measures.evaluator([parse(name)], qrels).iter_calc(run)}
    for qid, scores in run.items():
        top = ranking(scores)[:k] if k else ranking(scores)
        judged = qrels[qid]
        value = sum(0.4 * 0.6**i * judged[d] / 4 for i, d in enumerate(top) if judged.get(d, -1) >= rel)
        residual = sum(0.4 * 0.6**i for i, d in enumerate(top) if status(judged, d, rel) is None) + 0.6 ** len(top)
        assert got[qid] == pytest.approx(value, abs=1e-12)
        m = details[qid]
        assert (m.value, m.residual, m.upper) == pytest.approx((value, residual, value + residual), abs=1e-12)


def test_graded_gain_by_hand():
    """Grades 2, 1, unjudged, 0 at ranks 1-4, largest grade 2, p = 0.5: value = .5·1 + .25·.5 = 0.625;
    residual = .5·.5² (rank 3) + .5⁴ (after rank 4) = 0.1875. Binary RBP counts grade 1 as 1: 0.75."""
    qrels = {"q": {"a": 2, "b": 1, "c": -1, "d": 0}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    got = evaluate({"r": run}, qrels, ["RBPResidual(p=0.5,gain=graded)", "RBPResidual(p=0.5)"])
    assert got["value"].tolist() == [0.625, 0.75]
    assert got["residual"].tolist() == [0.1875, 0.1875]
    assert got["upper"].tolist() == [0.8125, 0.9375]
    # negative="zero": the pooled-but-unjudged document is judged nonrelevant, the residual shrinks
    zero = evaluate({"r": run}, qrels, ["RBPResidual(p=0.5,gain=graded)"], negative="zero")
    assert zero["value"].tolist() == [0.625]
    assert zero["residual"].tolist() == [0.0625]


def test_graded_gain_without_relevant_grades_is_zero():
    qrels = {"q": {"a": 0, "b": -1}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    got = evaluate({"r": run}, qrels, ["RBPResidual(gain=graded)"])
    assert got["value"].tolist() == [0.0]
    assert got["residual"].tolist() == pytest.approx([0.2 * 0.8 + 0.8**2], abs=1e-15)


def test_gain_parameter_string_and_errors():
    assert repr(parse("RBPResidual(gain=binary)")) == "RBPResidual"
    assert repr(parse("RBPResidual(p=0.5, gain=graded)")) == "RBPResidual(p=0.5,gain=graded)"
    with pytest.raises(ValueError, match="'gain'.*one of binary, graded"):
        parse("RBPResidual(gain=exp)")


def small_case():
    """q1: relevant, unjudged; q2: judged nonrelevant only; q3 (in the qrels): not answered by the run."""
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 0}, "q3": {"d": 1}}
    run = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"c": 1.0}}
    return qrels, run


def test_evaluate_carries_residual_and_upper_per_query():
    qrels, run = small_case()
    got = evaluate({"r": run}, qrels, ["P@1", "RBPResidual(p=0.5)", "Success@2"])
    assert list(got.columns) == ["run", "query_id", "measure", "value", "residual", "upper"]
    rbp = got[got["measure"] == "RBPResidual(p=0.5)"].set_index("query_id")
    # q1: value .5, residual .25 (rank 2 unjudged) + .25 (after rank 2); q2: .5 after rank 1; q3: unanswered
    assert rbp.loc[["q1", "q2", "q3"], "value"].tolist() == [0.5, 0.0, 0.0]
    assert rbp.loc[["q1", "q2", "q3"], "residual"].tolist() == [0.5, 0.5, 1.0]
    assert rbp.loc[["q1", "q2", "q3"], "upper"].tolist() == [1.0, 0.5, 1.0]
    others = got[got["measure"] != "RBPResidual(p=0.5)"]
    assert len(others) == 6
    assert others[["residual", "upper"]].isna().all().all()
    # the same numbers as the ResidualMetric objects of iter_calc
    metrics = {m.query_id: m for m in ir_measures.evaluator([parse("RBPResidual(p=0.5)")], qrels).iter_calc(run)}
    for qid in ("q1", "q2"):
        assert (metrics[qid].residual, metrics[qid].upper) == tuple(rbp.loc[qid, ["residual", "upper"]])


def test_evaluate_aggregates_residual_and_upper_as_means():
    qrels, run = small_case()
    got = evaluate({"r": run}, qrels, ["RBPResidual(p=0.5)", "NumRet"], per_query=False)
    assert list(got.columns) == ["run", "measure", "value", "residual", "upper"]
    row = got.set_index("measure").loc["RBPResidual(p=0.5)"]
    assert row[["value", "residual", "upper"]].tolist() == pytest.approx([0.5 / 3, 2 / 3, 2.5 / 3], abs=1e-15)
    assert np.isnan(got.set_index("measure").loc["NumRet", "residual"])
    # topics="run": the unanswered q3 is left out of the rows and of the means
    only = evaluate({"r": run}, qrels, ["RBPResidual(p=0.5)"], per_query=False, topics="run")
    assert only[["value", "residual", "upper"]].iloc[0].tolist() == pytest.approx([0.25, 0.5, 0.75], abs=1e-15)


def test_evaluate_without_residual_measures_keeps_its_columns():
    qrels, run = small_case()
    assert list(evaluate({"r": run}, qrels, ["P@1", "AP"]).columns) == ["run", "query_id", "measure", "value"]
    assert list(evaluate({"r": run}, qrels, ["AP"], per_query=False).columns) == ["run", "measure", "value"]


def test_residual_columns_do_not_depend_on_chunks():
    rng = np.random.default_rng(7)
    qrels, run_a = random_topics(rng)
    _, run_b = random_topics(rng)
    runs = {"a": run_a, "b": run_b}
    whole = evaluate(runs, qrels, ["RBPResidual(gain=graded)@5"], chunk_rows=None)
    chunked = evaluate(runs, qrels, ["RBPResidual(gain=graded)@5"], chunk_rows=3)
    pd.testing.assert_frame_equal(whole, chunked)
