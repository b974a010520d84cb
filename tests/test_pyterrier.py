"""PyTerrier: the ``pyterrier.modules`` entry point and ``pt.Experiment`` with our measures, without Java."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

pt = pytest.importorskip("pyterrier", reason="pyterrier is not installed (extras 'test' or 'pyterrier')")

import ir_measures  # noqa: E402

import ir_incomplete  # noqa: E402
from ir_incomplete import evaluate  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]

TOPICS = pd.DataFrame({"qid": ["q1", "q2", "q3"], "query": ["covid masks", "vaccine trials", "long covid"]})
QRELS = pd.DataFrame(
    {
        "qid": ["q1", "q1", "q1", "q1", "q2", "q2", "q2", "q3", "q3"],
        "docno": ["a", "b", "c", "d", "a", "f", "g", "h", "i"],
        "label": [1, 0, -1, 2, 0, 1, -1, 1, 0],
    }
)
RUN_A = pd.DataFrame(
    {
        "qid": ["q1"] * 5 + ["q2"] * 4 + ["q3"] * 2,
        "docno": ["c", "x", "b", "a", "d", "g", "y", "f", "a", "i", "h"],
        "score": [9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.5, 3.0, 2.0, 2.0, 2.0],
    }
)
RUN_B = pd.DataFrame(
    {  # does not answer q3
        "qid": ["q1", "q1", "q1", "q2", "q2"],
        "docno": ["u", "d", "a", "f", "g"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
METRICS = ["map", "infAP(c=1.5)", ir_incomplete.infAP(c=1.5) @ 10]
NAMES = ["A", "B"]


def _experiment(**kwargs):
    return pt.Experiment(
        [pt.Transformer.from_df(RUN_A), pt.Transformer.from_df(RUN_B)],
        TOPICS,
        QRELS,
        eval_metrics=METRICS,
        names=NAMES,
        **kwargs,
    )


def _ours(per_query):
    return evaluate({"A": RUN_A, "B": RUN_B}, QRELS, ["infAP(c=1.5)", "infAP(c=1.5)@10"], per_query=per_query)


def test_entry_point_loads_the_plugin_with_pyterrier():
    code = textwrap.dedent("""
        import sys
        import pyterrier as pt
        assert "ir_incomplete" in sys.modules, "import pyterrier did not load ir_incomplete"
        import ir_incomplete, ir_measures
        assert pt.ir_incomplete is ir_incomplete
        assert ir_measures.DefaultPipeline.providers[1] is ir_incomplete.provider
        assert repr(ir_measures.parse_trec_measure("infAP(c=1.5)")[0]) == "infAP(c=1.5)"
        assert not pt.java.started()
        print("ok")
    """)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(REPO_ROOT.parent), timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_pt_attribute_in_this_process():
    assert pt.ir_incomplete is ir_incomplete


def test_experiment_means():
    result = _experiment()
    assert list(result["name"]) == NAMES
    assert {"map", "infAP(c=1.5)", "infAP(c=1.5)@10"} <= set(result.columns)
    ours = _ours(per_query=False)
    for name in NAMES:
        row = result[result["name"] == name].iloc[0]
        for measure in ("infAP(c=1.5)", "infAP(c=1.5)@10"):
            expected = ours[(ours["run"] == name) & (ours["measure"] == measure)]["value"]
            assert len(expected) == 1
            assert row[measure] == pytest.approx(float(expected.iloc[0]), abs=1e-9), (name, measure)
    # "map" keeps its trec_eval meaning (AP through pytrec_eval), and differs from infAP(c=1.5) here
    run_a = RUN_A.rename(columns={"qid": "query_id", "docno": "doc_id"})
    qrels = QRELS.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"})
    ap = ir_measures.calc_aggregate([ir_measures.AP], qrels, run_a)[ir_measures.AP]
    a = result[result["name"] == "A"].iloc[0]
    assert a["map"] == pytest.approx(ap, abs=1e-9)
    assert abs(a["map"] - a["infAP(c=1.5)"]) > 1e-3


def test_experiment_hand_value_of_run_b():
    """B: q1 u(NP) d(R, grade 2) a(R) → d@2 = 1/2, a@3 (r=1, n=0, d=1) = 1/3 + (1/3)(1+ε)/(1+1.5ε), R=2;
    q2 f@1 → 1 (R=1); q3 unanswered → 0."""
    eps = 1e-5
    q1 = (0.5 + 1 / 3 + (1 / 3) * (1 + eps) / (1 + 1.5 * eps)) / 2
    expected = (q1 + 1.0 + 0.0) / 3
    result = _experiment()
    b = result[result["name"] == "B"].iloc[0]
    assert b["infAP(c=1.5)"] == pytest.approx(expected, abs=1e-9)
    assert b["infAP(c=1.5)@10"] == pytest.approx(expected, abs=1e-9)


def test_experiment_per_query():
    result = _experiment(perquery=True)
    assert {"name", "qid", "measure", "value"} <= set(result.columns)
    ours = _ours(per_query=True)
    for name in NAMES:
        for measure in ("infAP(c=1.5)", "infAP(c=1.5)@10"):
            got = result[(result["name"] == name) & (result["measure"] == measure)]
            got = dict(zip(got["qid"].astype(str), got["value"], strict=True))
            expected = ours[(ours["run"] == name) & (ours["measure"] == measure)]
            expected = dict(zip(expected["query_id"].astype(str), expected["value"], strict=True))
            assert got.keys() == expected.keys() == {"q1", "q2", "q3"}
            for qid in got:
                assert got[qid] == pytest.approx(expected[qid], abs=1e-9), (name, measure, qid)
    b3 = result[(result["name"] == "B") & (result["qid"] == "q3") & (result["measure"] == "infAP(c=1.5)")]
    assert list(b3["value"]) == [0.0]


def test_experiment_with_uniform_and_cutoff_strings():
    metrics = ["infAP(variant=uniform)", "infAP@2", "infAP"]
    result = pt.Experiment([pt.Transformer.from_df(RUN_A)], TOPICS, QRELS, eval_metrics=metrics, names=["A"])
    ours = evaluate({"A": RUN_A}, QRELS, metrics, per_query=False)
    for measure in metrics:
        expected = float(ours[ours["measure"] == measure]["value"].iloc[0])
        assert result.iloc[0][measure] == pytest.approx(expected, abs=1e-9), measure
    assert result.iloc[0]["infAP(variant=uniform)"] != pytest.approx(result.iloc[0]["infAP"], abs=1e-6)


def test_java_was_never_started():
    _experiment()
    assert not pt.java.started()


def test_experiment_on_covid_subset(covid):
    names = sorted(covid["runs"])[:4]
    runs = {n: covid["runs"][n].rename(columns={"query_id": "qid", "doc_id": "docno"}) for n in names}
    qrels = covid["qrels"].rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    topics = pd.DataFrame({"qid": sorted(qrels["qid"].unique(), key=int)}).assign(query="covid")
    result = pt.Experiment(
        [pt.Transformer.from_df(runs[n]) for n in names],
        topics,
        qrels,
        eval_metrics=["infAP(c=1.5)", "infAP", ir_incomplete.infAP(variant="uniform") @ 10],
        names=names,
    )
    ours = evaluate(
        {n: covid["runs"][n] for n in names},
        covid["qrels"],
        ["infAP(c=1.5)", "infAP", "infAP(variant=uniform)@10"],
        per_query=False,
    )
    assert list(result["name"]) == names
    for name in names:
        row = result[result["name"] == name].iloc[0]
        for measure in ("infAP(c=1.5)", "infAP", "infAP(variant=uniform)@10"):
            expected = float(ours[(ours["run"] == name) & (ours["measure"] == measure)]["value"].iloc[0])
            assert row[measure] == pytest.approx(expected, abs=1e-9), (name, measure)
    # round-1 qrels have no negative grades, so d = r + n and c only acts through eps: tiny but nonzero
    # differences prove infAP(c=1.5) was not computed as plain infAP
    gap = (result["infAP(c=1.5)"] - result["infAP"]).abs()
    assert (gap > 0).all() and (gap < 1e-4).all()
