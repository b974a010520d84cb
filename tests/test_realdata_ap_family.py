"""indAP, subAP, bpref, bpref-10 and RankEff on real TREC data (``../shared/data``; skipped when absent):
parity with pytrec_eval per query, and the exact limits of subAP on judgments with pooled-but-unjudged
entries."""

from __future__ import annotations

import itertools
import math

import ir_measures
import numpy as np
import pandas as pd
import pytest
from conftest import judgment_group

from ir_incomplete import evaluate, parse
from ir_incomplete.data import Qrels, read_trec_qrels, read_trec_run
from ir_incomplete.kernels import ap_family as kernels

TOL = 1e-9
OURS = ir_measures.providers.registry["ir_incomplete"]


# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------
def _qrels_dict(frame):
    out = {}
    for qid, group in frame.groupby("query_id", sort=False):
        out[str(qid)] = dict(zip(group["doc_id"].astype(str), group["relevance"].astype(int).tolist(), strict=True))
    return out


def _run_dict(frame):
    out = {}
    for qid, group in frame.groupby("query_id", sort=False):
        out[str(qid)] = dict(zip(group["doc_id"].astype(str), group["score"].astype(float).tolist(), strict=True))
    return out


def _pytrec(qrels, runs, names, relevance_level=1, judged_only=False):
    """pytrec_eval per query: ``{run: {qid: {name: value}}}``. ``qrels`` and the runs may be DataFrames
    or already pytrec_eval's dicts (convert once when evaluating several times)."""
    import pytrec_eval

    qrels = _qrels_dict(qrels) if isinstance(qrels, pd.DataFrame) else qrels
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, set(names), relevance_level=relevance_level, judged_docs_only_flag=judged_only
    )
    return {
        name: evaluator.evaluate(_run_dict(run) if isinstance(run, pd.DataFrame) else run) for name, run in runs.items()
    }


def _ours(runs, qrels, strings, **kwargs):
    """Our per-query values: ``{measure string: Series indexed by (run, query_id)}``."""
    frame = evaluate(runs, qrels, strings, **kwargs)
    return {m: g.set_index(["run", "query_id"])["value"] for m, g in frame.groupby("measure", sort=False)}


def _assert_matches(ours, theirs, name, label):
    """Every (run, query) pytrec_eval reports agrees to TOL; returns the number of values compared."""
    keys, expected = [], []
    for run, per_query in theirs.items():
        for qid, values in per_query.items():
            keys.append((run, qid))
            expected.append(values[name])
    got = ours.loc[keys].to_numpy()
    expected = np.array(expected)
    worst = int(np.argmax(np.abs(got - expected))) if len(keys) else 0
    assert len(keys) > 0
    assert np.abs(got - expected).max() <= TOL, (
        f"{label}: {keys[worst]} ours {got[worst]!r} pytrec_eval {name} {expected[worst]!r}"
    )
    return len(keys)


def _seeded(qrels, seed=20240607, fraction=0.5):
    """A copy of ``qrels`` with a seeded random half of the judgments turned into −1 (pooled but
    unjudged); the input frame is not modified."""
    rng = np.random.default_rng(seed)
    out = qrels.copy()
    out.loc[rng.random(len(out)) < fraction, "relevance"] = -1
    return out


# ---------------------------------------------------------------------------------------------------
# TREC-COVID round 1: 143 runs, shallow pool
# ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def covid_pytrec(covid, covid_run_dicts):
    """pytrec_eval on the round-1 qrels: bpref, map, map_cut_10; and map/map_cut_10 with -J."""
    qrels = _qrels_dict(covid["qrels"])
    runs = covid_run_dicts
    plain = _pytrec(qrels, runs, ["bpref", "map", "map_cut_10"])
    judged = _pytrec(qrels, runs, ["map", "map_cut_10"], judged_only=True)
    return plain, judged


def test_covid_has_no_pooled_unjudged_entries(covid):
    assert (covid["qrels"]["relevance"] >= 0).all()
    assert len(covid["runs"]) == 143


def test_covid_matches_pytrec_eval(covid, covid_pytrec):
    plain, judged = covid_pytrec
    ours = _ours(
        covid["runs"],
        covid["qrels"],
        ["Bpref", "indAP(variant=original)", "indAP(variant=original)@10", "indAP", "subAP", "indAP@10", "subAP@10"],
    )
    n = _assert_matches(ours["Bpref"], plain, "bpref", "Bpref")
    assert n == 143 * 30
    _assert_matches(ours["indAP(variant=original)"], judged, "map", "indAP(variant=original)")
    _assert_matches(ours["indAP(variant=original)@10"], judged, "map_cut_10", "indAP(variant=original)@10")
    # no −1 entries: nothing pooled-but-unjudged to drop, so pool indAP and subAP (p = 1) are AP
    _assert_matches(ours["indAP"], plain, "map", "indAP")
    _assert_matches(ours["subAP"], plain, "map", "subAP")
    _assert_matches(ours["indAP@10"], plain, "map_cut_10", "indAP@10")
    _assert_matches(ours["subAP@10"], plain, "map_cut_10", "subAP@10")
    np.testing.assert_array_equal(ours["subAP"].to_numpy(), ours["indAP"].to_numpy())
    # the shallow pool makes the estimators differ from each other on real runs
    assert not np.allclose(ours["indAP"].to_numpy(), ours["indAP(variant=original)"].to_numpy())


def test_covid_plain_bpref_from_our_provider(covid, covid_pytrec):
    """Plain ``Bpref`` asked directly of our provider (``ir_measures`` would route it to pytrec_eval)."""
    plain, _ = covid_pytrec
    names = sorted(covid["runs"])[::12]
    evaluator = OURS.evaluator([parse("Bpref")], covid["qrels"])
    compared = 0
    for name in names:
        for metric in evaluator.iter_calc(covid["runs"][name]):
            assert metric.value == pytest.approx(plain[name][metric.query_id]["bpref"], abs=TOL)
            compared += 1
    assert compared == len(names) * 30


def test_covid_seeded_unjudged_matches_pytrec_eval(covid):
    """With half the judgments turned into −1: bpref ignores them (not in N), -J drops them."""
    qrels = _seeded(covid["qrels"])
    names = sorted(covid["runs"])[::7]
    runs = {n: covid["runs"][n] for n in names}
    plain = _pytrec(qrels, runs, ["bpref", "infAP"])
    judged = _pytrec(qrels, runs, ["map"], judged_only=True)
    ours = _ours(runs, qrels, ["Bpref", "indAP(variant=original)", "infAP"])
    _assert_matches(ours["Bpref"], plain, "bpref", "Bpref seeded")
    _assert_matches(ours["indAP(variant=original)"], judged, "map", "indAP(variant=original) seeded")
    _assert_matches(ours["infAP"], plain, "infAP", "infAP seeded")


def test_covid_seeded_subap_limits_are_exact(covid):
    """subAP(p=1) = indAP(pool) and subAP(p=0) = indAP(original), bit for bit, with and without a cut-off;
    the default p = |J|/(|J|+U) lies strictly between, and subAP falls as p grows."""
    qrels = _seeded(covid["qrels"])
    judged = Qrels.from_any(qrels)
    assert (judged.n_unjudged > 0).all()
    strings = [
        "subAP(p=1)",
        "indAP",
        "subAP(p=0)",
        "indAP(variant=original)",
        "subAP(p=1)@10",
        "indAP@10",
        "subAP(p=0)@10",
        "indAP(variant=original)@10",
        "subAP",
        "subAP(p=0.3)",
        "subAP(p=0.7)",
        "subAP@10",
    ]
    ours = {m: v.to_numpy() for m, v in _ours(covid["runs"], judged, strings).items()}
    np.testing.assert_array_equal(ours["subAP(p=1)"], ours["indAP"])
    np.testing.assert_array_equal(ours["subAP(p=0)"], ours["indAP(variant=original)"])
    np.testing.assert_array_equal(ours["subAP(p=1)@10"], ours["indAP@10"])
    np.testing.assert_array_equal(ours["subAP(p=0)@10"], ours["indAP(variant=original)@10"])
    chain = [ours[m] for m in ("subAP(p=0)", "subAP(p=0.3)", "subAP(p=0.7)", "subAP(p=1)")]
    for higher, lower in itertools.pairwise(chain):
        assert np.all(lower <= higher + 1e-12)
    assert np.all(ours["subAP(p=1)"] <= ours["subAP"] + 1e-12)
    assert np.all(ours["subAP"] <= ours["subAP(p=0)"] + 1e-12)
    assert np.all(ours["subAP(p=1)@10"] <= ours["subAP@10"] + 1e-12)
    assert np.all(ours["subAP@10"] <= ours["subAP(p=0)@10"] + 1e-12)
    assert (ours["subAP"] < ours["subAP(p=0)"] - 1e-6).mean() > 0.5  # strictly between, mostly


def _reference_subap(qrels_topic, ranking, p):
    """subAP of one ranked list of doc ids, straight from the formula (log-space binomial terms)."""
    total, r, n, nd = 0.0, 0, 0, 0
    for doc in ranking:
        grade = qrels_topic.get(doc)
        if grade is None:
            nd += 1
        elif grade >= 1:
            r += 1
            lc = math.lgamma(nd + 1)
            total += sum(
                math.exp(
                    lc - math.lgamma(i + 1) - math.lgamma(nd - i + 1) + i * math.log(p) + (nd - i) * math.log1p(-p)
                )
                * r
                / (r + n + i)
                for i in range(nd + 1)
            )
        elif grade >= 0:
            n += 1
    relevant = sum(g >= 1 for g in qrels_topic.values())
    return total / relevant if relevant else 0.0


def test_covid_seeded_subap_long_rankings(covid, monkeypatch):
    """Up to ~1000 unpooled documents above a relevant one: both evaluation methods of the binomial
    expectation agree with each other and with a per-query reference."""
    qrels = _seeded(covid["qrels"])
    names = sorted(covid["runs"])[:3]
    runs = {n: covid["runs"][n] for n in names}
    strings = ["subAP(p=0.3)", "subAP", "subAP(p=0.6)@50"]
    chosen = {m: v.to_numpy() for m, v in _ours(runs, qrels, strings).items()}
    monkeypatch.setattr(kernels, "_DIRECT_TERM_COST", 0.0)  # every p by the direct log-space sum
    direct_frame = _ours(runs, qrels, strings)
    monkeypatch.setattr(kernels, "_DIRECT_TERM_COST", math.inf)  # every p by the recurrence
    recurrence = {m: v.to_numpy() for m, v in _ours(runs, qrels, strings).items()}
    for m in strings:
        assert recurrence[m].max() > 0.1
        np.testing.assert_allclose(direct_frame[m].to_numpy(), recurrence[m], rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(chosen[m], recurrence[m], rtol=1e-10, atol=1e-13)

    truth = _qrels_dict(qrels)
    run = covid["runs"][names[0]]
    checked = 0
    for qid, group in run.groupby("query_id", sort=False):
        qid = str(qid)
        if qid not in truth:
            continue
        scores = group["score"].to_numpy().astype(np.float32)
        docs = group["doc_id"].astype(str).to_numpy()
        by_doc = sorted(range(len(docs)), key=lambda i: docs[i].encode(), reverse=True)  # ties: docid desc
        order = sorted(by_doc, key=lambda i: -scores[i])  # stable
        ranking = [docs[i] for i in order]
        unpooled = sum(d not in truth[qid] for d in ranking)
        assert unpooled > 300
        want = _reference_subap(truth[qid], ranking, 0.3)
        assert direct_frame["subAP(p=0.3)"].loc[(names[0], qid)] == pytest.approx(want, abs=TOL)
        row = list(direct_frame["subAP(p=0.3)"].index).index((names[0], qid))
        assert recurrence["subAP(p=0.3)"][row] == pytest.approx(want, abs=TOL)
        checked += 1
        if checked == 6:
            break
    assert checked == 6


# ---------------------------------------------------------------------------------------------------
# Robust04: deep pools, 249 topics
# ---------------------------------------------------------------------------------------------------
def test_robust04_matches_pytrec_eval(robust04, robust04_run_dicts):
    qrels, runs = robust04["qrels"], robust04["runs"]
    assert (qrels["relevance"] >= 0).all()
    qrels_dict = _qrels_dict(qrels)
    run_dicts = robust04_run_dicts
    plain = _pytrec(qrels_dict, run_dicts, ["bpref", "map"])
    judged = _pytrec(qrels_dict, run_dicts, ["map"], judged_only=True)
    strict = _pytrec(qrels_dict, run_dicts, ["bpref"], relevance_level=2)
    ours = _ours(runs, qrels, ["Bpref", "indAP(variant=original)", "indAP", "subAP", "Bpref(rel=2)"])
    assert _assert_matches(ours["Bpref"], plain, "bpref", "Bpref") > 2000
    _assert_matches(ours["indAP(variant=original)"], judged, "map", "indAP(variant=original)")
    _assert_matches(ours["indAP"], plain, "map", "indAP")
    _assert_matches(ours["subAP"], plain, "map", "subAP")
    _assert_matches(ours["Bpref(rel=2)"], strict, "bpref", "Bpref(rel=2)")


# ---------------------------------------------------------------------------------------------------
# trec_eval's own fixtures
# ---------------------------------------------------------------------------------------------------
def _fixture_qrels(trec_eval_test, name):
    """``qrels.123`` is in trec_eval's judgment-group format (``-R qrels_jg``): the second column is the
    judgment group (0, 1, 2), each judging the same documents. Group 0 is an ordinary qrels with −1
    entries and grades up to 6."""
    if name != "qrels.123":
        return read_trec_qrels(trec_eval_test / name)
    return judgment_group(trec_eval_test / name, 0)


@pytest.mark.parametrize("qrels_name", ["qrels.test", "qrels.123", "qrels.rel_level"])
@pytest.mark.parametrize("rel", [1, 2])
def test_trec_eval_fixtures_match_pytrec_eval(trec_eval_test, qrels_name, rel):
    qrels = _fixture_qrels(trec_eval_test, qrels_name)
    runs = {"STANDARD": read_trec_run(trec_eval_test / "results.test")}
    plain = _pytrec(qrels, runs, ["bpref", "map"], relevance_level=rel)
    judged = _pytrec(qrels, runs, ["map"], relevance_level=rel, judged_only=True)
    ours = _ours(runs, qrels, [f"Bpref(rel={rel})", f"indAP(rel={rel},variant=original)"])
    assert _assert_matches(ours[repr(parse(f"Bpref(rel={rel})"))], plain, "bpref", "Bpref") == 3
    _assert_matches(ours[repr(parse(f"indAP(rel={rel},variant=original)"))], judged, "map", "indAP original")
    if (qrels["relevance"] >= 0).all():
        sub = _ours(runs, qrels, [f"subAP(rel={rel})"])[repr(parse(f"subAP(rel={rel})"))]
        _assert_matches(sub, plain, "map", "subAP")


def _trec_eval_output(path):
    out = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3:
            out[(parts[0], parts[1])] = parts[2]
    return out


def test_trec_eval_expected_output(trec_eval_test):
    """trec_eval's recorded output for qrels.test + results.test (4 decimals): bpref per query and mean,
    and map_cut_k = indAP@k = subAP@k (no −1 entries, so nothing is condensed)."""
    expected = _trec_eval_output(trec_eval_test / "out.test.aq")
    qrels = read_trec_qrels(trec_eval_test / "qrels.test")
    run = read_trec_run(trec_eval_test / "results.test")
    ours = _ours({"STANDARD": run}, qrels, ["Bpref", "indAP@10", "subAP@100", "indAP"])
    for qid in ("301", "302", "303"):
        assert ours["Bpref"].loc[("STANDARD", qid)] == pytest.approx(float(expected[("bpref", qid)]), abs=5e-5)
        assert ours["indAP@10"].loc[("STANDARD", qid)] == pytest.approx(float(expected[("map_cut_10", qid)]), abs=5e-5)
        assert ours["subAP@100"].loc[("STANDARD", qid)] == pytest.approx(
            float(expected[("map_cut_100", qid)]), abs=5e-5
        )
    assert ours["Bpref"].mean() == pytest.approx(float(expected[("bpref", "all")]), abs=5e-5)
    assert ours["indAP"].mean() == pytest.approx(float(expected[("map", "all")]), abs=5e-5)


def test_trec_eval_bpref_bug_note(trec_eval_test):
    """``bpref_bug.txt`` is prose, not a qrels/run pair. Its worked example: a run retrieving 5 judged
    documents, the first nonrelevant and then 4 relevant, with 3 nonrelevant and 2 relevant documents not
    retrieved, "should be 0.5" under the corrected bpref (trec_eval ≥ 8), and the buggy old one gave 0."""
    text = (trec_eval_test / "bpref_bug.txt").read_text()
    assert "should be 0.5.  (= ((4 * (3/4)) + 2 * (0/4)) / 6)" in text
    qrels = pd.DataFrame(
        {
            "query_id": "1",
            "doc_id": [f"r{i}" for i in range(1, 7)] + [f"n{i}" for i in range(1, 5)],
            "relevance": [1] * 6 + [0] * 4,
        }
    )
    run = pd.DataFrame({"query_id": "1", "doc_id": ["n1", "r1", "r2", "r3", "r4"], "score": [5.0, 4.0, 3.0, 2.0, 1.0]})
    ours = _ours({"r": run}, qrels, ["Bpref", "Bpref(variant=paper)", "RankEff"])
    theirs = _pytrec(qrels, {"r": run}, ["bpref"])["r"]["1"]["bpref"]
    assert ours["Bpref"].iloc[0] == theirs == 0.5
    assert ours["RankEff"].iloc[0] == 0.5  # every retrieved relevant doc is above the 3 unretrieved
    assert ours["Bpref(variant=paper)"].iloc[0] == pytest.approx(4 * (1 - 1 / 6) / 6, abs=1e-12)
