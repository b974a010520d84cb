"""Plain infAP from our provider equals pytrec_eval per query (1e-9) on real TREC data in ``../shared/data``.

Every test skips with a clear reason when the data are absent (fixtures of ``conftest.py``).
"""

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from conftest import pytrec_per_query

import ir_incomplete
from ir_incomplete import evaluate, read_trec_qrels, read_trec_run

OURS = ir_measures.providers.registry["ir_incomplete"]
INFAP = ir_incomplete.infAP
INFAP_REL2 = ir_incomplete.infAP(rel=2)


# ---------------------------------------------------------------------------------------------------------
# helpers: convert once, reuse for every pytrec_eval evaluator
# ---------------------------------------------------------------------------------------------------------
def qrels_dict(frame):
    out = {}
    for q, d, r in zip(frame["query_id"].astype(str), frame["doc_id"].astype(str), frame["relevance"], strict=True):
        out.setdefault(q, {})[d] = int(r)
    return out


def run_dict(frame):
    out = {}
    for q, d, s in zip(frame["query_id"].astype(str), frame["doc_id"].astype(str), frame["score"], strict=True):
        out.setdefault(q, {})[d] = float(s)
    return out


def ours_per_query(evaluator, run):
    """``{measure: {qid: value}}`` from one of our provider's evaluators."""
    out = {}
    for metric in evaluator.iter_calc(run):
        per_measure = out.setdefault(metric.measure, {})
        assert metric.query_id not in per_measure, (metric.measure, metric.query_id)
        per_measure[metric.query_id] = metric.value
    return out


def compare(ours, theirs, run_frame, qrels_frame, label):
    """Per query to 1e-9; pytrec_eval must see exactly the topics in both run and qrels; our evaluator
    reports every qrels topic (those the run misses as 0). Returns the number of compared values."""
    run_topics = set(run_frame["query_id"].astype(str))
    qrels_topics = set(qrels_frame["query_id"].astype(str))
    assert set(theirs) == run_topics & qrels_topics, label
    assert set(ours) == qrels_topics, label
    for qid in qrels_topics - run_topics:
        assert ours[qid] == 0.0, (label, qid)
    bad = {qid: (ours[qid], theirs[qid]) for qid in theirs if abs(ours[qid] - theirs[qid]) > 1e-9}
    assert not bad, (label, dict(list(bad.items())[:5]), len(bad))
    return len(theirs)


def half_unjudged(qrels_frame, seed=0):
    """A copy of the qrels in which a seeded random half (floor) of each topic's judgments becomes −1."""
    rng = np.random.default_rng(seed)
    keys = pd.Series(rng.random(len(qrels_frame)), index=qrels_frame.index)
    rank = keys.groupby(qrels_frame["query_id"]).rank(method="first")
    size = qrels_frame.groupby("query_id")["query_id"].transform("size")
    out = qrels_frame.copy()
    out.loc[rank <= size // 2, "relevance"] = -1
    return out


@pytest.fixture(scope="module")
def covid_dicts(covid_run_dicts):
    return covid_run_dicts


# ---------------------------------------------------------------------------------------------------------
# TREC-COVID round 1: 143 runs, shallow pool
# ---------------------------------------------------------------------------------------------------------
def test_covid_fixture_is_complete(covid):
    assert len(covid["runs"]) == 143
    assert len(covid["qrels"]) == 8691
    assert covid["qrels"]["query_id"].nunique() == 30


def _check_covid(covid, covid_dicts, qrels_frame, measures_levels):
    qrels = qrels_dict(qrels_frame)
    ours_eval = OURS.evaluator([m for m, _ in measures_levels], qrels_frame)
    theirs_evals = {
        m: pytrec_eval.RelevanceEvaluator(qrels, {"infAP"}, relevance_level=level) for m, level in measures_levels
    }
    compared = 0
    for name, frame in covid["runs"].items():
        ours = ours_per_query(ours_eval, frame)
        for measure, _ in measures_levels:
            theirs = {q: v["infAP"] for q, v in theirs_evals[measure].evaluate(covid_dicts[name]).items()}
            compared += compare(ours[measure], theirs, frame, qrels_frame, (name, repr(measure)))
    return compared


def test_covid_round1_plain_and_rel2(covid, covid_dicts):
    compared = _check_covid(covid, covid_dicts, covid["qrels"], [(INFAP, 1), (INFAP_REL2, 2)])
    assert compared >= 2 * 143 * 29  # nearly every run answers all 30 topics


def test_covid_round1_half_judgments_unjudged(covid, covid_dicts):
    degraded = half_unjudged(covid["qrels"])
    per_topic = covid["qrels"].groupby("query_id").size()
    unjudged = degraded[degraded["relevance"] == -1].groupby("query_id").size()
    assert (unjudged.reindex(per_topic.index, fill_value=0) == per_topic // 2).all()
    assert covid["qrels"]["relevance"].min() >= 0  # the fixture itself was not modified
    compared = _check_covid(covid, covid_dicts, degraded, [(INFAP, 1)])
    assert compared >= 143 * 29


def test_covid_evaluate_all_runs_at_once_equals_provider(covid):
    """The many-runs path (one ``evaluate`` call) gives the provider's per-run values."""
    frame = evaluate(covid["runs"], covid["qrels"], [INFAP, INFAP_REL2])
    assert len(frame) == 143 * 30 * 2
    ours_eval = OURS.evaluator([INFAP, INFAP_REL2], covid["qrels"])
    for name in list(covid["runs"])[::20]:
        expected = ours_per_query(ours_eval, covid["runs"][name])
        for measure in (INFAP, INFAP_REL2):
            got = frame[(frame["run"] == name) & (frame["measure"] == repr(measure))]
            got = dict(zip(got["query_id"].astype(str), got["value"], strict=True))
            assert got.keys() == expected[measure].keys()
            for qid, value in got.items():
                assert value == pytest.approx(expected[measure][qid], abs=1e-12), (name, qid)


# ---------------------------------------------------------------------------------------------------------
# Robust04: 10 runs, deep pools
# ---------------------------------------------------------------------------------------------------------
def test_robust04_runs(robust04, robust04_run_dicts):
    assert len(robust04["runs"]) == 10
    qrels_frame = robust04["qrels"]
    qrels = qrels_dict(qrels_frame)
    theirs_eval = pytrec_eval.RelevanceEvaluator(qrels, {"infAP"})
    ours_eval = OURS.evaluator([INFAP], qrels_frame)
    compared = 0
    for name, frame in robust04["runs"].items():
        ours = ours_per_query(ours_eval, frame)[INFAP]
        theirs = {q: v["infAP"] for q, v in theirs_eval.evaluate(robust04_run_dicts[name]).items()}
        compared += compare(ours, theirs, frame, qrels_frame, name)
    assert compared >= 10 * 249


# ---------------------------------------------------------------------------------------------------------
# trec_eval's own fixtures (qrels with −1 entries, expected output)
# ---------------------------------------------------------------------------------------------------------
def _judgment_groups(path):
    """``{iteration: qrels text}``: ``qrels.123`` holds three judgment groups (trec_eval ``-R qrels_jg``)
    in its second column; each group is a complete qrels on its own."""
    groups = {}
    for line in path.read_text().splitlines():
        if line.strip():
            groups.setdefault(line.split()[1], []).append(line)
    return {g: "\n".join(lines) + "\n" for g, lines in groups.items()}


def _trec_eval_cases(trec_eval_test):
    yield "qrels.test", read_trec_qrels(trec_eval_test / "qrels.test")
    yield "qrels.rel_level", read_trec_qrels(trec_eval_test / "qrels.rel_level")
    groups = _judgment_groups(trec_eval_test / "qrels.123")
    assert sorted(groups) == ["0", "1", "2"]
    for g, text in groups.items():
        yield f"qrels.123 group {g}", read_trec_qrels(text)


def test_trec_eval_fixtures_per_query(trec_eval_test):
    run_frame = read_trec_run(trec_eval_test / "results.test")
    assert len(run_frame) == 1500
    compared = 0
    for label, qrels_frame in _trec_eval_cases(trec_eval_test):
        if label != "qrels.test":
            assert (qrels_frame["relevance"] == -1).sum() == 304, label  # pooled-but-unjudged entries
        theirs = {q: v["infAP"] for q, v in pytrec_per_query(qrels_frame, run_frame, {"infAP"}).items()}
        ours = ours_per_query(OURS.evaluator([INFAP], qrels_frame), run_frame)[INFAP]
        compared += compare(ours, theirs, run_frame, qrels_frame, label)
    assert compared == 5 * 3


def test_trec_eval_qrels_123_as_one_qrels_is_refused(trec_eval_test):
    """Read as a plain qrels, ``qrels.123`` judges each document three times; trec_eval refuses that
    ("duplicate docs"), and so do we, naming the document and the query."""
    qrels_frame = read_trec_qrels(trec_eval_test / "qrels.123")
    run_frame = read_trec_run(trec_eval_test / "results.test")
    with pytest.raises(ValueError, match=r"CR93E-10279.*'301'|'301'.*CR93E-10279"):
        OURS.calc_aggregate([INFAP], qrels_frame, run_frame)


def _trec_eval_lines(path, measure):
    """``{query_id: value}`` of ``measure`` lines in a trec_eval output file (``all`` included)."""
    out = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == measure:
            out[parts[1]] = parts[2]
    return out


def test_trec_eval_expected_output(trec_eval_test):
    """``out.test.a`` (and per query ``out.test.aq``): infAP of ``results.test`` with ``qrels.test``."""
    expected_all = _trec_eval_lines(trec_eval_test / "out.test.a", "infAP")["all"]
    assert expected_all == "0.1785"
    expected_q = _trec_eval_lines(trec_eval_test / "out.test.aq", "infAP")
    assert expected_q["all"] == expected_all and set(expected_q) == {"301", "302", "303", "all"}
    qrels_path = trec_eval_test / "qrels.test"
    run_path = trec_eval_test / "results.test"

    mean = OURS.calc_aggregate([INFAP], read_trec_qrels(qrels_path), read_trec_run(run_path))[INFAP]
    assert f"{mean:.4f}" == expected_all

    frame = evaluate({"results.test": run_path}, qrels_path, ["infAP"], per_query=False)
    assert f"{float(frame['value'].iloc[0]):.4f}" == expected_all

    per_query = evaluate({"results.test": run_path}, qrels_path, ["infAP"])
    got = {str(q): f"{v:.4f}" for q, v in zip(per_query["query_id"], per_query["value"], strict=True)}
    assert got == {q: v for q, v in expected_q.items() if q != "all"}
