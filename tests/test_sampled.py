"""Estimators for stratified samples of judgments (xinfAP, infNDCG, iP, iPrec): the spec's worked
examples, an independent rank-by-rank reference on random data, input forms and errors."""

from __future__ import annotations

import gzip
import math

import ir_measures
import numpy as np
import pandas as pd
import pytest

import ir_incomplete
from ir_incomplete import evaluate, parse
from ir_incomplete.data import Qrels, read_trec_qrels

E1, E3 = 1e-5, 3e-5


def prels_frame(rows):
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "stratum", "relevance"])


def run_frame(ranking, qid="q"):
    n = len(ranking)
    return pd.DataFrame({"query_id": qid, "doc_id": list(ranking), "score": np.arange(n, 0, -1, dtype=float)})


def values(run, qrels, measures, **kw):
    res = evaluate({"r": run}, qrels, measures, **kw)
    return {(m, q): v for m, q, v in zip(res["measure"], res["query_id"], res["value"], strict=True)}


# ---------------------------------------------------------------------------------------------------
# worked examples of the spec (MEASURES.md §7)
# ---------------------------------------------------------------------------------------------------
EXAMPLE_X = [("X", "a", "s1", 1), ("X", "b", "s1", 0), ("X", "c", "s2", 1), ("X", "d", "s2", -1)]
EXAMPLE_X += [("X", "e", "s2", 0), ("X", "f", "s2", -1)]


def test_spec_example_two_strata():
    got = values(run_frame("bdaecxf", "X"), prels_frame(EXAMPLE_X), ["xinfAP", "infNDCG"])
    e = E1
    xinf = (1 / 3) * (1 / 3 + (2 / 3) * (0.5 * e / (1 + 3 * e) + 0.5 * e / (3 * e))) + (2 / 3) * (
        1 / 5 + (4 / 5) * (0.5 * (1 + e) / (2 + 3 * e) + 0.5 * e / (1 + 3 * e))
    )
    ndcg = (1 / math.log2(4) + 2 / math.log2(6)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    assert got[("xinfAP", "X")] == pytest.approx(xinf, abs=1e-12)
    assert got[("xinfAP", "X")] == pytest.approx(0.414818, abs=5e-7)
    assert got[("infNDCG", "X")] == pytest.approx(ndcg, abs=1e-12)
    assert got[("infNDCG", "X")] == pytest.approx(0.597723, abs=5e-7)


def test_spec_example_one_stratum_equals_infap_c3(spec):
    topic = spec["topics"]["A"]
    qrels = {"q": dict(topic["qrels"])}
    run = {"q": dict(topic["run"])}
    got = values(run, qrels, ["xinfAP", "infNDCG", "infAP(c=3)"])
    ndcg = (1 + 1 / math.log2(6) + 1 / math.log2(9)) * (6 / 5) / (1 + 1 / math.log2(3) + 0.5 + 1 / math.log2(5))
    assert got[("infNDCG", "q")] == pytest.approx(ndcg, abs=1e-12)
    assert got[("xinfAP", "q")] == pytest.approx(0.645833, abs=5e-7)
    assert got[("xinfAP", "q")] == pytest.approx(got[("infAP(c=3)", "q")], abs=1e-12)


# ---------------------------------------------------------------------------------------------------
# an independent reference: SAMPLED.md read rank by rank, one topic at a time
# ---------------------------------------------------------------------------------------------------
def reference(prels, ranking, cutoff=None, rel=1, idcg="sample_eval", ks=(10,)):
    """``prels``: {doc: (stratum, grade)} of one topic; ``ranking``: doc ids in rank order."""
    strata = sorted({s for s, _ in prels.values()})
    big_n = {c: sum(1 for s, _ in prels.values() if s == c) for c in strata}
    small_n = {c: sum(1 for s, g in prels.values() if s == c and g >= 0) for c in strata}
    r = {c: sum(1 for s, g in prels.values() if s == c and g >= rel) for c in strata}
    r_hat = sum(r[c] * big_n[c] / small_n[c] for c in strata if small_n[c])
    ranked = list(ranking if cutoff is None else ranking[:cutoff])
    d = dict.fromkeys(strata, 0)
    s = dict.fromkeys(strata, 0)
    rho = dict.fromkeys(strata, 0)
    sap = dict.fromkeys(strata, 0.0)
    gain = dict.fromkeys(strata, 0.0)
    expected = []
    for k, doc in enumerate(ranked, start=1):
        c, g = prels.get(doc, (None, -1))
        if c is not None and g >= rel:
            depth = sum(d.values())
            above = sum(d[x] / depth * (rho[x] + E1) / (s[x] + E3) for x in strata if depth and d[x])
            sap[c] += 1 / k + depth / k * above
            gain[c] += g / math.log2(k + 1)
            rho[c] += 1
        if c is not None:
            d[c] += 1
            s[c] += g >= 0
        expected.append(sum(d[x] * (rho[x] + E1) / (s[x] + E3) for x in strata))
    xinf = 0.0
    for c in strata:
        if small_n[c] and r_hat > 0 and r[c]:
            xinf += (r[c] * big_n[c] / small_n[c]) / r_hat * sap[c] / r[c]
    depth = sum(d.values())
    dcg = depth * sum(d[c] / depth * gain[c] / s[c] for c in strata if depth and s[c])
    grades = sorted({g for _, g in prels.values() if g >= rel}, key=str if idcg == "sample_eval" else int)
    ideal, start = 0.0, 0
    for g in reversed(grades):
        m = math.floor(sum(sum(1 for x, y in prels.values() if x == c and y == g) * big_n[c] / small_n[c]
                           for c in strata if small_n[c]) + 0.5)  # fmt: skip
        for rank in range(start + 1, start + m + 1):
            if idcg == "exact" and cutoff is not None and rank > cutoff:
                break
            ideal += g / math.log2(rank + 1)
            if idcg == "sample_eval" and cutoff is not None and rank >= cutoff:
                break
        start += m
    ndcg = dcg / ideal if ideal else 0.0
    ip = {k: (expected[min(k, len(expected)) - 1] / k if expected else 0.0) for k in ks}
    # interpolated precision, walking the ranks from the bottom (at most one level per rank)
    iprec = [0.0] * 11
    if expected:
        cuts = [lv / 10 * r_hat for lv in range(11)]
        cur = 10
        while cur >= 0 and cuts[cur] > expected[-1]:
            cur -= 1
        best = 0.0
        for k in range(len(expected), 0, -1):
            best = max(best, expected[k - 1] / k)
            if cur >= 0 and cuts[cur] > expected[k - 1]:
                iprec[cur] = best
                cur -= 1
        while cur >= 0:
            iprec[cur] = best
            cur -= 1
    return {"xinfAP": xinf, "infNDCG": ndcg, "iP": ip, "iPrec": iprec}


def random_case(rng, n_topics=12, n_strata=3, grades=(0, 1, 2, 3)):
    prels, runs = {}, {}
    for t in range(n_topics):
        topic = f"t{t}"
        pool = [f"d{i}" for i in range(int(rng.integers(1, 40)))]
        rates = rng.uniform(0, 1, n_strata)
        rates[rng.integers(n_strata)] = 0.0 if rng.random() < 0.3 else rates[0]  # sometimes a stratum unsampled
        docs = {}
        for doc in pool:
            c = int(rng.integers(n_strata))
            g = int(rng.choice(grades)) if rng.random() < rates[c] else -1
            docs[doc] = (f"S{c}", g)
        prels[topic] = docs
        candidates = pool + [f"u{i}" for i in range(20)]
        size = int(rng.integers(0, len(candidates) + 1))
        chosen = list(rng.choice(candidates, size=size, replace=False)) if size else []
        scores = rng.integers(0, 6, size).astype(float)  # many ties: broken by doc id descending
        runs[topic] = dict(zip(chosen, scores.tolist(), strict=True))
    return prels, runs


def trec_ranking(scores: dict) -> list:
    return [d for d, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("cutoff", [None, 5, 12])
def test_matches_reference_on_random_prels(seed, cutoff):
    rng = np.random.default_rng(seed)
    prels, runs = random_case(rng)
    frame = prels_frame([(t, d, s, g) for t, docs in prels.items() for d, (s, g) in docs.items()])
    run = pd.DataFrame(
        [(t, d, sc) for t, docs in runs.items() for d, sc in docs.items()], columns=["query_id", "doc_id", "score"]
    )
    at = f"@{cutoff}" if cutoff else ""
    names = [f"xinfAP{at}", f"infNDCG{at}", f"infNDCG(idcg=exact){at}", "iP@3", "iP@10", "xinfAP(rel=2)" + at]
    names += [f"iPrec(cutoff={cutoff})@{lv / 10}" if cutoff else f"iPrec@{lv / 10}" for lv in range(11)]
    got = values(run, frame, names)
    for topic, docs in prels.items():
        ranking = trec_ranking(runs[topic])
        ref = reference(docs, ranking, cutoff, ks=(3, 10))
        exact = reference(docs, ranking, cutoff, idcg="exact")
        ref2 = reference(docs, ranking, cutoff, rel=2)
        if not ranking:  # a topic the run does not answer gets 0
            ref = {"xinfAP": 0.0, "infNDCG": 0.0, "iP": {3: 0.0, 10: 0.0}, "iPrec": [0.0] * 11}
            exact = ref2 = ref
        assert got[(f"xinfAP{at}", topic)] == pytest.approx(ref["xinfAP"], abs=1e-12)
        assert got[("xinfAP(rel=2)" + at, topic)] == pytest.approx(ref2["xinfAP"], abs=1e-12)
        assert got[(f"infNDCG{at}", topic)] == pytest.approx(ref["infNDCG"], abs=1e-12)
        assert got[(f"infNDCG(idcg=exact){at}", topic)] == pytest.approx(exact["infNDCG"], abs=1e-12)
        assert got[("iP@3", topic)] == pytest.approx(reference(docs, ranking, 3, ks=(3,))["iP"][3], abs=1e-12)
        assert got[("iP@10", topic)] == pytest.approx(reference(docs, ranking, 10)["iP"][10], abs=1e-12)
        for lv, name in enumerate(names[6:]):
            assert got[(repr(parse(name)), topic)] == pytest.approx(ref["iPrec"][lv], abs=1e-12), (topic, name)


# ---------------------------------------------------------------------------------------------------
# conventions
# ---------------------------------------------------------------------------------------------------
def test_idcg_quirk_adds_one_term_per_lower_grade_past_the_cutoff():
    # stratum fully judged: grade 2 x3, grade 1 x2; the run retrieves one grade-2 document
    rows = [("q", f"a{i}", "1", 2) for i in range(3)] + [("q", f"b{i}", "1", 1) for i in range(2)]
    run = run_frame(["a0", "z"])
    got = values(run, prels_frame(rows), ["infNDCG@2", "infNDCG(idcg=exact)@2"])
    quirk_ideal = 2 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(5)  # grade 1 starts at rank 4
    exact_ideal = 2 / math.log2(2) + 2 / math.log2(3)
    assert got[("infNDCG@2", "q")] == pytest.approx(2 / quirk_ideal, abs=1e-12)
    assert got[("infNDCG(idcg=exact)@2", "q")] == pytest.approx(2 / exact_ideal, abs=1e-12)


def test_unsampled_stratum_contributes_nothing_and_no_relevant_gives_zero():
    rows = [("q", "a", "1", 1), ("q", "b", "1", 0), ("q", "c", "2", -1), ("q", "d", "2", -1)]
    rows += [("n", "a", "1", 0), ("n", "c", "2", -1)]
    run = pd.concat([run_frame("cab"), run_frame("ca", "n")])
    got = values(run, prels_frame(rows), ["xinfAP", "infNDCG", "iP@2"])
    # stratum 2 has n = 0: R̂ = 1 from stratum 1 only; at rank 2, d = {2: 1}, nothing judged in it
    assert got[("xinfAP", "q")] == pytest.approx(1 / 2 + (1 / 2) * (0 + E1) / (0 + E3), abs=1e-12)
    assert got[("xinfAP", "n")] == 0.0
    assert got[("infNDCG", "n")] == 0.0
    assert got[("iP@2", "n")] == pytest.approx((1 * E1 / E3 + 1 * E1 / (1 + E3)) / 2, abs=1e-12)


def test_strata_are_per_topic_labels():
    rows = [("q1", "a", "top", 1), ("q1", "b", "rest", 0), ("q2", "a", "x", 1), ("q2", "c", "y", -1)]
    qrels = Qrels.from_any(prels_frame(rows))
    assert qrels.is_sampled
    assert qrels.stratum_labels.tolist() == [["rest", "top"], ["x", "y"]]
    assert qrels.to_frame().sort_values(["query_id", "doc_id"])["stratum"].tolist() == ["top", "rest", "x", "y"]


# ---------------------------------------------------------------------------------------------------
# input forms
# ---------------------------------------------------------------------------------------------------
PRELS_TEXT = "X 0 a s1 1\nX 0 b s1 0\nX 0 c s2 1\n\nX 0 d s2 -1\nX 0 e s2 0\nX 0 f s2 -1\n"


def test_input_forms_agree(tmp_path):
    run = run_frame("bdaecxf", "X")
    path = tmp_path / "prels.txt.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(PRELS_TEXT)
    as_dict = {"X": {d: (s, g) for _, d, s, g in EXAMPLE_X}}
    forms = [prels_frame(EXAMPLE_X), PRELS_TEXT, str(path), path, as_dict]
    results = [values(run, form, ["xinfAP", "infNDCG"]) for form in forms]
    for other in results[1:]:
        assert other == pytest.approx(results[0], abs=0)
    frame = read_trec_qrels(path)
    assert list(frame.columns) == ["query_id", "doc_id", "stratum", "relevance"]
    assert frame["relevance"].dtype == np.int64


def test_mixed_lines_are_an_error_naming_the_line(tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_text("X 0 a s1 1\nX 0 b s1 0\nX 0 c 1\n")
    with pytest.raises(ValueError, match=r"mixed\.txt:3: expected 5 fields"):
        read_trec_qrels(path)
    path.write_text("X 0 a 1\nX 0 b s1 0\n")  # a plain qrels file with a prels line
    with pytest.raises(ValueError, match=r"mixed\.txt:2: expected 4 fields"):
        read_trec_qrels(path)
    path.write_text("X 0 a s1 1\nX 0 b s1 high\n")
    with pytest.raises(ValueError, match=r"mixed\.txt:2: relevance 'high' is not a number"):
        read_trec_qrels(path)
    path.write_text("X 0 a s1 1\nX 0 b s1 1.5\n")
    with pytest.raises(ValueError, match=r"mixed\.txt:2: relevance '1.5' is not an integer grade"):
        read_trec_qrels(path)


def test_bad_dict_values():
    with pytest.raises(ValueError, match=r"\(stratum, relevance\) pair; query 'X', document 'b'"):
        Qrels.from_any({"X": {"a": ("s1", 1), "b": 0}})


def test_plain_qrels_are_one_stratum():
    qrels = {"q": {"a": 1, "b": 0, "c": -1, "d": 1}}
    one = {"q": {d: ("all", g) for d, g in qrels["q"].items()}}
    run = run_frame("acxbd")
    assert values(run, qrels, ["xinfAP", "infNDCG", "iP@3"]) == pytest.approx(
        values(run, one, ["xinfAP", "infNDCG", "iP@3"]), abs=1e-15
    )


def test_ir_measures_with_stratum_column():
    frame = prels_frame(EXAMPLE_X)
    run = run_frame("bdaecxf", "X")
    agg = ir_measures.calc_aggregate([parse("xinfAP"), parse("infNDCG")], frame, run)
    assert agg[parse("xinfAP")] == pytest.approx(0.414818, abs=5e-7)
    per_query = list(ir_measures.evaluator([parse("iP@2")], frame).iter_calc(run))
    # top 2: b (s1, judged nonrelevant), d (s2, not sampled)
    expected = (E1 / (1 + E3) + E1 / E3) / 2
    assert [(m.query_id, round(m.value, 12)) for m in per_query] == [("X", round(expected, 12))]


def test_topics_run_averages_over_answered_topics_only():
    qrels = {"q": {"a": ("1", 1)}, "n": {"a": ("1", 1)}}
    run = run_frame("a")
    assert values(run, qrels, ["xinfAP"]) == {("xinfAP", "q"): 1.0, ("xinfAP", "n"): 0.0}
    assert values(run, qrels, ["xinfAP"], topics="run") == {("xinfAP", "q"): 1.0}
    mean = evaluate({"r": run}, qrels, ["xinfAP"], per_query=False, topics="run")
    assert mean["value"].tolist() == [1.0]
    # measures computed by ir_measures only follow the same rule
    assert values(run, {"q": {"a": 1}, "n": {"a": 1}}, ["P@1"], topics="run") == {("P@1", "q"): 1.0}
    with pytest.raises(ValueError, match="topics='all' is not valid; choices: qrels, run"):
        evaluate({"r": run}, qrels, ["xinfAP"], topics="all")


# ---------------------------------------------------------------------------------------------------
# measure objects
# ---------------------------------------------------------------------------------------------------
NEW = ["xinfAP", "infNDCG", "iP", "iPrec", "RBPResidual", "PUpper", "APUpper"]


@pytest.mark.parametrize("name", NEW)
def test_names_do_not_collide_with_ir_measures(name):
    assert getattr(ir_measures, name, None) is None  # no built-in of that name was replaced
    assert ir_measures.measures.registry[name] in ir_incomplete.measures.ALL_MEASURES


@pytest.mark.parametrize(
    "text", ["xinfAP@100", "infNDCG(idcg=exact)@100", "iP(rel=2)@10", "iPrec(cutoff=100)@0.5", "xinfAP(rel=2)"]
)
def test_round_trip(text):
    assert repr(parse(text)) == text
    assert parse(repr(parse(text))) == parse(text)


@pytest.mark.parametrize(
    "text, message",
    [
        ("infNDCG(idcg=ideal)", "one of sample_eval, exact"),
        ("iP(rel=2)", "iP needs parameter 'cutoff'"),
        ("iPrec@0.55", r"one of 0.0, 0.1"),
        ("xinfAP(rel=0)", ">= 1"),
    ],
)
def test_bad_parameters(text, message):
    with pytest.raises(ValueError, match=message):
        parse(text)


def test_family_object_cannot_be_computed():
    with pytest.raises(ValueError, match="iP needs a cut-off, e.g. iP@10"):
        evaluate({"r": run_frame("a")}, {"q": {"a": 1}}, [ir_incomplete.measures.iP])
