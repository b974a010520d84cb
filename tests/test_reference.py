"""Native reference measures (AP, nDCG, P, R, RR, Rprec, Judged, NumRet, NumRel): values by hand,
parity with pytrec_eval on synthetic data full of edge cases, and the routing (evaluate and robustness
studies compute them natively; ir_measures' default pipeline keeps its built-in providers; our provider
computes them when asked directly)."""

from __future__ import annotations

import math

import ir_measures
import numpy as np
import pandas as pd
import pytest

import ir_incomplete
from ir_incomplete import api, evaluate
from ir_incomplete.data import PAD, POOLED_UNJUDGED, UNPOOLED
from ir_incomplete.incomplete_provider import as_incomplete, computable
from ir_incomplete.kernels import reference as kernels
from ir_incomplete.measures import REFERENCE_MEASURES

OURS = ir_measures.providers.registry["ir_incomplete"]
PYTREC = ir_measures.providers.registry["pytrec_eval"]
TOL = 1e-9

# one topic by hand: grades a2 b-1 c1 d0 e3 f-2 (e never retrieved); ranking a b x c d y f
# (x, y unjudged). R = 3 (a, c, e); judged-only list: a c d. Topic z: judged, nothing relevant.
QRELS = {"q": {"a": 2, "b": -1, "c": 1, "d": 0, "e": 3, "f": -2}, "z": {"a": 0}, "w": {"a": 1}}
RUN = {"q": {"a": 5, "b": 4, "x": 3.5, "c": 3, "d": 2, "y": 1, "f": 0.5}, "z": {"b": 1.0}, "other": {"a": 1.0}}
L2 = math.log2
IDCG = 3 + 2 / L2(3) + 1 / L2(4)
HAND = {
    "AP": (1 / 1 + 2 / 4) / 3,
    "AP@2": (1 / 1) / 3,
    "AP(judged_only=True)": (1 / 1 + 2 / 2) / 3,
    "AP(rel=2)": (1 / 1) / 2,
    "nDCG": (2 + 1 / L2(5)) / IDCG,
    "nDCG@3": 2 / (3 + 2 / L2(3) + 1 / L2(4)),
    "nDCG@2": 2 / (3 + 2 / L2(3)),
    "nDCG(judged_only=True)": (2 + 1 / L2(3)) / IDCG,
    "nDCG(judged_only=True)@1": 2 / 3,
    "nDCG@100": (2 + 1 / L2(5)) / IDCG,
    "P@3": 1 / 3,
    "P@10": 2 / 10,
    "P(judged_only=True)@3": 2 / 3,
    "P(rel=2)@4": 1 / 4,
    "R@4": 2 / 3,
    "R(rel=3)@100": 0.0,
    "R(judged_only=True)@2": 2 / 3,
    "RR": 1.0,
    "RR(rel=3)": 0.0,
    "RR@1": 1.0,
    "RR(rel=2)@5": 1.0,
    "Rprec": 1 / 3,
    "Rprec(judged_only=True)": 2 / 3,
    "Rprec(rel=2)": 1 / 2,
    "Judged@3": 2 / 3,
    "Judged@10": 5 / 7,
    "Judged": 5 / 7,
    "NumRet": 7.0,
    "NumRelRet": 2.0,
    "NumRet(rel=3)": 0.0,
    "NumRel": 3.0,
    "NumRel(rel=2)": 2.0,
}


def _per_query(frame):
    return frame.set_index(["query_id", "measure"])["value"]


# ---------------------------------------------------------------------------------------------------
# values by hand
# ---------------------------------------------------------------------------------------------------
def test_values_by_hand():
    measures = [ir_incomplete.parse(s) for s in HAND]
    assert all(computable(m) for m in measures)
    got = _per_query(evaluate({"r": RUN}, QRELS, measures))
    for text, measure in zip(HAND, measures, strict=True):
        assert got[("q", repr(measure))] == pytest.approx(HAND[text], abs=1e-12), text
        # z: nothing relevant (R = 0); w: not answered by the run; both 0 except the counts
        assert got[("w", repr(measure))] == 0.0, text
        expected_z = {"NumRet": 1.0, "Judged@3": 0.0}.get(text, 0.0)
        assert got[("z", repr(measure))] == expected_z, text
    assert set(got.index.get_level_values("query_id")) == {"q", "z", "w"}  # "other" is not in the qrels


def test_hand_values_equal_pytrec_eval():
    """The same topic through ir_measures' pytrec_eval provider (Judged through its own provider)."""
    measures = [ir_incomplete.parse(s) for s in HAND]
    builtin = [m for m in measures if m.NAME != "Judged" and not (m.NAME == "RR" and "cutoff" in m.params)]
    builtin = [m for m in builtin if not (m.NAME == "NumRel" and m.params.get("rel", 1) != 1)]
    expected = {(r.query_id, repr(r.measure)): r.value for r in PYTREC.iter_calc(builtin, QRELS, RUN)}
    got = _per_query(evaluate({"r": RUN}, QRELS, builtin))
    assert len(expected) == 3 * len(builtin)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=TOL), key


# ---------------------------------------------------------------------------------------------------
# parity with pytrec_eval on synthetic data with every edge case
# ---------------------------------------------------------------------------------------------------
def _synthetic(seed):
    """Qrels with grades −1..3 (topic t0 without relevant documents, t1 only −1 entries), a run with
    float32 score ties, ties of exact scores, a topic the run does not answer (t2), a topic the qrels
    do not have, rankings of 1 to 40 documents."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(9):
        docs = [f"d{i:03d}" for i in rng.choice(120, size=40, replace=False)]
        for d in docs[:25]:
            grade = int(rng.choice([-1, 0, 0, 1, 1, 2, 3]))
            if t == 0:
                grade = min(grade, 0)
            if t == 1:
                grade = -1
            qrels.append((f"t{t}", d, grade))
        if t == 2:
            continue
        n = int(rng.integers(1, 41))
        pool = [f"d{i:03d}" for i in rng.choice(120, size=n, replace=False)]
        base = rng.integers(0, 6, size=n).astype(np.float64)
        jitter = np.where(rng.random(n) < 0.3, 1e-9, 0.0)  # equal in float32, not in float64
        for d, s in zip(pool, base + jitter, strict=True):
            run.append((f"t{t}", d, float(s)))
    run += [("unjudged-topic", "d001", 1.0), ("unjudged-topic", "d002", 2.0)]
    q = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    r = pd.DataFrame(run, columns=["query_id", "doc_id", "score"])
    return q, r


def _builtin_measures(rel, judged_only):
    kw = {"rel": rel, "judged_only": judged_only}
    out = [ir_measures.AP(**kw), ir_measures.nDCG(judged_only=judged_only), ir_measures.RR(**kw)]
    out += [ir_measures.Rprec(**kw), ir_measures.NumRet(rel=rel)]
    if not judged_only:  # ir_measures puts plain NumRet in whichever pytrec_eval call comes first (maybe -J)
        out.append(ir_measures.NumRet)
    for k in (1, 3, 10, 50):
        out += [ir_measures.AP(**kw) @ k, ir_measures.nDCG(judged_only=judged_only) @ k]
        out += [ir_measures.P(**kw) @ k, ir_measures.R(**kw) @ k]
    if rel == 1:
        out.append(ir_measures.NumRel)
    # custom gains: grade 1 to a negative gain (pooled but unjudged for trec_eval), grade 0 to a positive one
    for gains in ({0: 0, 1: 1, 2: 5, 3: 20}, {0: 1, 1: -1, 3: 2}):
        out += [ir_measures.nDCG(gains=gains, judged_only=judged_only)]
        out += [ir_measures.nDCG(gains=gains, judged_only=judged_only) @ k for k in (1, 5, 50)]
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(("rel", "judged_only"), [(1, False), (1, True), (2, False), (3, True)])
def test_synthetic_parity_with_pytrec_eval(seed, rel, judged_only):
    qrels, run = _synthetic(seed)
    measures = _builtin_measures(rel, judged_only)
    expected = {(r.query_id, repr(r.measure)): r.value for r in PYTREC.iter_calc(measures, qrels, run)}
    got = _per_query(evaluate({"r": run}, qrels, measures))
    assert len(got) == len(expected) == 9 * len(measures)
    for key, value in expected.items():
        assert abs(got[key] - value) <= TOL, (key, got[key], value)
    # the direct route gives the same
    direct = {(r.query_id, repr(r.measure)): r.value for r in OURS.iter_calc(measures, qrels, run)}
    assert direct == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("seed", [1, 2])
def test_synthetic_rr_at_k_num_rel_and_judged(seed):
    """RR@k is pytrec_eval's recip_rank when the first relevant document lies within k; NumRel(rel=r)
    is its num_rel at relevance level r; Judged@k counts documents of the qrels (any grade) like
    pytrec_eval's P@k with every qrels entry made relevant, over min(k, retrieved)."""
    import pytrec_eval

    qrels, run = _synthetic(seed)
    run_dict = {}
    for q, d, s in run.itertuples(index=False):
        run_dict.setdefault(q, {})[d] = s
    measures = [ir_measures.RR @ k for k in (1, 2, 5)] + [ir_measures.RR(rel=2) @ 3, ir_measures.NumRel(rel=2)]
    measures += [ir_measures.Judged @ k for k in (1, 5, 60)] + [ir_measures.Judged]
    got = _per_query(evaluate({"r": run}, qrels, measures))

    def pytrec(values, names, level=1):
        qd = {}
        for q, d, g in zip(qrels["query_id"], qrels["doc_id"], values, strict=True):
            qd.setdefault(q, {})[d] = int(g)
        return pytrec_eval.RelevanceEvaluator(qd, names, relevance_level=level).evaluate(run_dict)

    graded = pytrec(qrels["relevance"], {"recip_rank", "num_rel"})
    strict = pytrec(qrels["relevance"], {"recip_rank", "num_rel"}, level=2)
    in_qrels = pytrec(np.ones(len(qrels)), {"P_1", "P_5", "P_60", "num_ret", "num_rel_ret"})
    for qid in sorted(set(qrels["query_id"])):
        answered = qid in graded
        for k in (1, 2, 5):
            rr = graded[qid]["recip_rank"] if answered else 0.0
            assert got[(qid, f"RR@{k}")] == pytest.approx(rr if rr >= 1 / k else 0.0, abs=TOL)
        rr2 = strict[qid]["recip_rank"] if answered else 0.0
        assert got[(qid, "RR(rel=2)@3")] == pytest.approx(rr2 if rr2 >= 1 / 3 else 0.0, abs=TOL)
        assert got[(qid, "NumRel(rel=2)")] == (strict[qid]["num_rel"] if answered else 0.0)
        assert got[(qid, "NumRel(rel=2)")] == (answered and (qrels[qrels["query_id"] == qid]["relevance"] >= 2).sum())
        v = in_qrels.get(qid)
        for k in (1, 5, 60):
            want = v[f"P_{k}"] * k / min(k, v["num_ret"]) if answered else 0.0
            assert got[(qid, f"Judged@{k}")] == pytest.approx(want, abs=TOL)
        want = v["num_rel_ret"] / v["num_ret"] if answered else 0.0
        assert got[(qid, "Judged")] == pytest.approx(want, abs=TOL)


def test_judged_equals_the_judged_provider_without_ties():
    """Without score ties ir_measures' judged provider and ours agree, negative qrels counting as judged."""
    qrels, run = _synthetic(4)
    run = run.assign(score=np.arange(len(run), 0, -1, dtype=np.float64))  # distinct scores
    measures = [ir_measures.Judged @ k for k in (1, 3, 10, 100)] + [ir_measures.Judged]
    provider = ir_measures.providers.registry["judged"]
    expected = {(r.query_id, repr(r.measure)): r.value for r in provider.iter_calc(measures, qrels, run)}
    got = _per_query(evaluate({"r": run}, qrels, measures))
    assert len(expected) == 9 * len(measures)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=TOL), key


def test_judged_breaks_ties_like_trec_eval():
    """Tied documents are ranked by document id descending (trec_eval), as for every other measure."""
    qrels = {"q": {"a": 0}}
    run = {"q": {"a": 1.0, "b": 1.0}}  # trec_eval order: b, a
    got = _per_query(evaluate({"r": run}, qrels, ["Judged@1"]))
    assert got[("q", "Judged@1")] == 0.0
    provider = ir_measures.providers.registry["judged"]
    assert provider.calc_aggregate([ir_measures.Judged @ 1], qrels, run)[ir_measures.Judged @ 1] == 1.0


def test_cutoff_longer_than_every_ranking_and_empty_condensed_lists():
    qrels = {"q": {"a": 1, "b": 2}, "u": {"a": 1}}
    run = {"q": {"a": 2.0, "x": 1.0}, "u": {"x": 1.0, "y": 0.5}}  # u: nothing judged retrieved
    measures = ["P@5", "R@5", "AP@5", "nDCG@5", "Judged@5", "P(judged_only=True)@5", "nDCG(judged_only=True)"]
    measures += ["AP(judged_only=True)", "RR(judged_only=True)", "Rprec(judged_only=True)", "NumRet"]
    got = _per_query(evaluate({"r": run}, qrels, measures))
    assert got[("q", "P@5")] == pytest.approx(1 / 5)
    assert got[("q", "R@5")] == pytest.approx(1 / 2)
    assert got[("q", "Judged@5")] == pytest.approx(1 / 2)
    assert got[("q", "nDCG@5")] == pytest.approx(1 / (2 + 1 / math.log2(3)))
    assert got[("u", "Judged@5")] == 0.0 and got[("u", "NumRet")] == 2.0
    for m in measures[5:10]:
        assert got[("u", repr(ir_incomplete.parse(m)))] == 0.0
    expected = {
        (r.query_id, repr(r.measure)): r.value
        for r in PYTREC.iter_calc([ir_incomplete.parse(m) for m in measures if not m.startswith("Judged")], qrels, run)
    }
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=TOL), key


# ---------------------------------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------------------------------
def test_condense_keeps_judged_documents_in_order():
    codes = np.array([[UNPOOLED, 2, POOLED_UNJUDGED, 0, 1], [UNPOOLED, UNPOOLED, PAD, PAD, PAD]], dtype=np.int32)
    out = kernels.condense(codes)
    assert out.tolist() == [[2, 0, 1], [PAD, PAD, PAD]]
    assert kernels.condense(np.zeros((0, 4), np.int32)).shape == (0, 0)


def test_ideal_dcg_uses_every_positive_grade_highest_first():
    counts = np.array([[5, 2, 1], [3, 0, 0]])  # topic 0: grades 2, 1, 1; topic 1: nothing relevant
    full = kernels.ideal_dcg(counts)
    assert full[0] == pytest.approx(2 + 1 / math.log2(3) + 1 / math.log2(4))
    assert full[1] == 0.0
    assert kernels.ideal_dcg(counts, 2)[0] == pytest.approx(2 + 1 / math.log2(3))
    assert kernels.ideal_dcg(counts, 1)[0] == 2.0


@pytest.mark.parametrize("level", [-1, 1.5, True])
def test_kernels_refuse_invalid_relevance_levels(level):
    with pytest.raises(ValueError, match="rel_level"):
        kernels.precision(np.zeros((1, 3), np.int32), 3, level)


def test_float64_score_precision_changes_ties_consistently():
    """Scores equal in float32 but not in float64: the order (and P@1) follows ``score_precision``."""
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0 + 1e-12, "b": 1.0}}  # float32: tie, b first (id descending)
    assert evaluate({"r": run}, qrels, "P@1")["value"].tolist() == [0.0]
    assert evaluate({"r": run}, qrels, "P@1", score_precision="float64")["value"].tolist() == [1.0]


# ---------------------------------------------------------------------------------------------------
# routing
# ---------------------------------------------------------------------------------------------------
SUPPORTED = ["AP", "AP@10", "AP(rel=2,judged_only=True)@5", "nDCG", "nDCG@10", "nDCG(judged_only=True)@10"]
SUPPORTED += ["nDCG(gains={0:0,1:1,2:3})@10"]
SUPPORTED += ["P@5", "R(rel=2)@100", "RR", "RR@10", "Rprec(judged_only=True)", "Judged@10", "Judged"]
SUPPORTED += ["NumRet", "NumRelRet", "NumRet(rel=2)", "NumRel", "NumRel(rel=2)"]
NOT_SUPPORTED = [ir_measures.nDCG(gains={0: 0, 1: 1.5}) @ 10, ir_measures.nDCG(gains={-1: 1}), ir_measures.P @ 0]
NOT_SUPPORTED += [ir_measures.nDCG(dcg="exp-log2")]
NOT_SUPPORTED += [ir_measures.AP(rel=0), ir_measures.ERR @ 10, ir_measures.SetP]


def test_every_reference_measure_is_claimed_by_name():
    assert {cls.NAME for cls in REFERENCE_MEASURES} == {
        "AP", "nDCG", "P", "R", "RR", "Rprec", "Judged", "NumRet", "NumRel"
    }  # fmt: skip
    for cls in REFERENCE_MEASURES:
        builtin = ir_measures.measures.registry[cls.NAME]
        assert set(cls.SUPPORTED_PARAMS) == set(builtin.SUPPORTED_PARAMS), cls.NAME
        for name, spec in cls.SUPPORTED_PARAMS.items():
            assert spec.default == builtin.SUPPORTED_PARAMS[name].default, (cls.NAME, name)
            assert spec.required == builtin.SUPPORTED_PARAMS[name].required, (cls.NAME, name)


@pytest.mark.parametrize("text", SUPPORTED)
def test_supported_measures_are_computed_here(text):
    measure = ir_incomplete.parse(text)
    assert computable(measure)
    ours = as_incomplete(measure)
    assert ours.NAME == measure.NAME and ours.params == measure.params


@pytest.mark.parametrize("measure", NOT_SUPPORTED, ids=repr)
def test_unsupported_parameter_values_are_not_claimed(measure):
    assert not computable(measure)
    with pytest.raises(ValueError, match="does not compute"):
        as_incomplete(measure)


def test_evaluate_computes_reference_measures_without_ir_measures(monkeypatch):
    asked = []

    def elsewhere(run_map, judged, measures, **options):
        asked.extend(measures)
        return api._evaluate_elsewhere.__wrapped__(run_map, judged, measures, **options)

    elsewhere.__wrapped__ = api._evaluate_elsewhere
    monkeypatch.setattr(api, "_evaluate_elsewhere", elsewhere)
    foreign = [ir_measures.SetP, ir_measures.Success @ 5]
    measures = [ir_incomplete.parse(s) for s in SUPPORTED] + foreign
    qrels, run = _synthetic(5)
    frame = evaluate({"r": run}, qrels, measures)
    assert asked == foreign  # only measures we do not compute went to ir_measures
    assert list(dict.fromkeys(frame["measure"])) == [repr(m) for m in measures]
    expected = {(r.query_id, repr(r.measure)): r.value for r in PYTREC.iter_calc(foreign, qrels, run)}
    got = _per_query(frame)
    assert len(expected) == 2 * 9
    for key, value in expected.items():
        assert got[key] == value


def _mixing_quirk(text: str) -> bool:
    """Measures that make ir_measures' pytrec_eval provider compute plain NumRet / nDCG of the same call
    under other settings (see test_aggregates_equal_ir_measures)."""
    return "judged_only" in text or "gains" in text


def test_aggregates_equal_ir_measures():
    """Means over every qrels query (0 for unanswered ones) and sums for NumRet/NumRel, as ir_measures."""
    qrels, run = _synthetic(6)
    # no judged_only and no gains here: ir_measures computes plain NumRet and plain nDCG in whichever
    # pytrec_eval call comes first, which may be a -J call or one with the qrels rewritten by some
    # other nDCG's gains (the order of its measure set decides)
    skip = ("Judged", "NumRel(rel=2)", "RR@")
    measures = [ir_incomplete.parse(s) for s in SUPPORTED if not s.startswith(skip) and not _mixing_quirk(s)]
    expected = ir_measures.calc_aggregate(measures, qrels, run)
    got = evaluate({"r": run}, qrels, measures, per_query=False).set_index("measure")["value"]
    for measure in measures:
        assert got[repr(measure)] == pytest.approx(expected[measure], abs=TOL), repr(measure)
    assert got["NumRet"] == len(run[run["query_id"] != "unjudged-topic"])


@pytest.mark.parametrize("text", SUPPORTED)
def test_default_pipeline_keeps_builtin_providers(text):
    measure = ir_measures.parse_measure(text)
    assert not OURS.supports(measure)
    assert not OURS.supports(as_incomplete(measure))
    first = next((p for p in ir_measures.DefaultPipeline.providers if p.is_available() and p.supports(measure)), None)
    if text == "NumRel(rel=2)":  # no built-in provider computes it; we do not claim it there either
        assert first is None
    else:
        assert first.NAME in ("pytrec_eval", "judged", "msmarco")


def test_default_pipeline_never_asks_our_provider(monkeypatch):
    qrels, run = _synthetic(7)
    measures = [ir_measures.parse_measure(s) for s in SUPPORTED if s != "NumRel(rel=2)" and not _mixing_quirk(s)]
    ours = OURS.calc_aggregate(measures, qrels, run)

    def refuse(*args, **kwargs):
        raise RuntimeError("the default pipeline must not ask ir_incomplete for built-in measures")

    monkeypatch.setattr(OURS, "_evaluator", refuse)
    monkeypatch.setattr(OURS, "evaluator", refuse)
    builtin = ir_measures.calc_aggregate(measures, qrels, run)
    for measure in measures:
        if measure.NAME != "Judged" and not (measure.NAME == "RR" and "cutoff" in measure.params):
            assert ours[measure] == pytest.approx(builtin[measure], abs=TOL), repr(measure)


def test_our_provider_computes_them_when_asked_directly():
    measures = [ir_measures.AP, ir_measures.nDCG @ 3, ir_measures.P @ 3, ir_measures.NumRelRet, ir_measures.Rprec]
    ours = OURS.calc_aggregate(measures, QRELS, RUN)
    assert ours[ir_measures.AP] == pytest.approx(HAND["AP"] / 3)
    assert ours[ir_measures.nDCG @ 3] == pytest.approx(HAND["nDCG@3"] / 3)
    assert ours[ir_measures.NumRelRet] == 2.0  # summed
    expected = PYTREC.calc_aggregate(measures, QRELS, RUN)
    for measure in measures:
        assert ours[measure] == pytest.approx(expected[measure], abs=TOL)
    metrics = list(OURS.iter_calc([ir_measures.AP], QRELS, RUN))
    assert sorted((m.query_id, m.value) for m in metrics) == [("q", pytest.approx(HAND["AP"])), ("w", 0.0), ("z", 0.0)]


def test_robustness_study_uses_native_reference_measures(monkeypatch):
    from ir_incomplete.robustness import robustness_study

    qrels, base = _synthetic(8)
    rng = np.random.default_rng(0)
    runs = {f"r{i}": base.assign(score=rng.random(len(base))) for i in range(4)}

    def refuse(*args, **kwargs):
        raise RuntimeError("reference measures must not go to ir_measures")

    monkeypatch.setattr(api, "_evaluate_elsewhere", refuse)
    result = robustness_study(runs, qrels, ["AP", "nDCG@10", "P@5"], levels=[0.5], repeats=2, seed=1, progress=False)
    assert set(result.stats["measure"]) == {"AP", "nDCG@10", "P@5"}
    full = result.reference.set_index(["measure", "run"])["value"]
    expected = ir_measures.calc_aggregate([ir_measures.nDCG @ 10], qrels, runs["r2"])[ir_measures.nDCG @ 10]
    assert full[("nDCG@10", "r2")] == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize("judged_only", [False, True])
def test_negative_zero_policy_equals_pytrec_eval_on_clipped_qrels(judged_only):
    """``negative="zero"``: negative grades are judged nonrelevant, i.e. pytrec_eval on qrels with them set to 0."""
    qrels, run = _synthetic(9)
    measures = _builtin_measures(1, judged_only)
    clipped = qrels.assign(relevance=qrels["relevance"].clip(lower=0))
    expected = {(r.query_id, repr(r.measure)): r.value for r in PYTREC.iter_calc(measures, clipped, run)}
    got = _per_query(evaluate({"r": run}, qrels, measures, negative="zero"))
    default = _per_query(evaluate({"r": run}, qrels, measures))
    assert len(expected) == len(got) == 9 * len(measures)
    for key, value in expected.items():
        assert abs(got[key] - value) <= TOL, (key, got[key], value)
    assert (got - default).abs().max() > 0.01  # the policy matters on these qrels
    # Judged counts negative entries as judged under both policies
    judged = [ir_measures.Judged @ 5, ir_measures.Judged]
    same = _per_query(evaluate({"r": run}, qrels, judged, negative="zero"))
    assert same.equals(_per_query(evaluate({"r": run}, qrels, judged)))
