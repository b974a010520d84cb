"""infAP (spec §3.7): the spec vectors three ways, smoothing, cut-off, and properties against pytrec_eval."""

import math
from fractions import Fraction

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from conftest import spec_cases, spec_topic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ir_incomplete
from ir_incomplete import evaluate
from ir_incomplete.grammar import parse

OURS = ir_measures.providers.registry["ir_incomplete"]
CASES = spec_cases({"infAP"})
PLAIN = {"infAP"}


def _only_value(frame):
    assert len(frame) == 1, frame
    return float(frame["value"].iloc[0])


# ---------------------------------------------------------------------------------------------------------
# the spec vectors
# ---------------------------------------------------------------------------------------------------------
def test_all_infap_vectors_are_collected(spec):
    expected = [e for e in spec["expected"] if e["measure"] == "infAP"]
    assert len(expected) == 29
    assert len(CASES) == 29


@pytest.mark.parametrize("topic,measure_string,value", CASES)
def test_spec_vector_evaluate(spec, topic, measure_string, value):
    run, qrels = spec_topic(spec, topic)
    got = evaluate(run, qrels, [measure_string])
    assert list(got["query_id"]) == ["q"]
    assert list(got["measure"]) == [repr(parse(measure_string))]
    assert _only_value(got) == pytest.approx(value, abs=1e-9)


@pytest.mark.parametrize("topic,measure_string,value", CASES)
def test_spec_vector_our_provider(spec, topic, measure_string, value):
    run, qrels = spec_topic(spec, topic)
    measure = parse(measure_string)
    result = OURS.calc_aggregate([measure], qrels, run)
    assert result[measure] == pytest.approx(value, abs=1e-9)


@pytest.mark.parametrize("topic,measure_string,value", CASES)
def test_spec_vector_ir_measures_pipeline(spec, topic, measure_string, value):
    """Through ``ir_measures.parse_measure`` and the default pipeline (plain infAP goes to pytrec_eval)."""
    run, qrels = spec_topic(spec, topic)
    measure = ir_measures.parse_measure(measure_string)
    if measure_string not in PLAIN:
        assert OURS.supports(measure)
    result = ir_measures.calc_aggregate([measure], qrels, run)
    assert result[measure] == pytest.approx(value, abs=1e-9)


def test_smoothing_changes_topic_s(spec):
    run, qrels = spec_topic(spec, "S")
    plain = OURS.calc_aggregate([ir_incomplete.infAP], qrels, run)[ir_incomplete.infAP]
    smoothed_measure = ir_measures.parse_measure("infAP(c=1.5)")
    smoothed = ir_measures.calc_aggregate([smoothed_measure], qrels, run)[smoothed_measure]
    assert plain == pytest.approx(2 / 3, abs=1e-9)
    assert smoothed == pytest.approx(1 / 3 + (2 / 3) / 1.5, abs=1e-9)
    assert abs(smoothed - plain) > 0.1
    assert _only_value(evaluate(run, qrels, "infAP(c=1.5)")) == pytest.approx(7 / 9, abs=1e-9)


def test_cutoff_on_topic_a(spec):
    """infAP@5 on A: only d1 (rank 1 → 1) and d3 (rank 5: r=1, n=1, U=1, d=3) count; still divided by R=3."""
    run, qrels = spec_topic(spec, "A")
    eps = 1e-5
    d3 = 1 / 5 + (3 / 5) * (1 + eps) / (2 + 2 * eps)
    expected = (1.0 + d3) / 3
    assert expected == pytest.approx(0.5, abs=1e-12)
    measure = ir_measures.parse_measure("infAP@5")
    assert ir_measures.calc_aggregate([measure], qrels, run)[measure] == pytest.approx(expected, abs=1e-9)
    assert _only_value(evaluate(run, qrels, "infAP@5")) == pytest.approx(expected, abs=1e-9)
    # @4 drops d3 (rank 5) and keeps only d1; a cut-off past the run changes nothing
    assert _only_value(evaluate(run, qrels, "infAP@4")) == pytest.approx(1 / 3, abs=1e-9)
    assert _only_value(evaluate(run, qrels, "infAP@100")) == pytest.approx(0.6458333333333334, abs=1e-9)


# ---------------------------------------------------------------------------------------------------------
# properties on random small inputs
# ---------------------------------------------------------------------------------------------------------
DOCS = [f"d{i}" for i in range(10)]
SCORES = st.one_of(st.integers(0, 4).map(float), st.floats(-50, 50, allow_nan=False, allow_infinity=False))


@st.composite
def topics(draw, grades, min_topics=1, max_topics=3):
    """``(run, qrels)`` dicts of dicts: every topic is judged at least once and retrieves at least one doc
    (some judged docs stay unretrieved, some retrieved docs stay unjudged)."""
    n = draw(st.integers(min_topics, max_topics))
    run, qrels = {}, {}
    for t in range(n):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=len(DOCS), unique=True))
        retrieved = draw(st.lists(st.booleans(), min_size=len(docs), max_size=len(docs)))
        judged = draw(st.lists(st.one_of(st.none(), st.sampled_from(grades)), min_size=len(docs), max_size=len(docs)))
        if not any(retrieved):
            retrieved[0] = True
        if all(g is None for g in judged):
            judged[-1] = grades[-1]
        qid = f"q{t}"
        run[qid] = {d: draw(SCORES) for d, r in zip(docs, retrieved, strict=True) if r}
        qrels[qid] = {d: g for d, g in zip(docs, judged, strict=True) if g is not None}
    return run, qrels


@st.composite
def fully_judged_topics(draw):
    """Every retrieved document is judged 0 or 1 (no −1); some judged documents are not retrieved."""
    run, qrels = draw(topics(grades=(0, 1)))
    for qid, docs in run.items():
        for d in docs:
            if d not in qrels[qid]:
                qrels[qid][d] = draw(st.sampled_from((0, 1)))
    return run, qrels


def _ours_per_query(measure, qrels, run):
    values = {}
    for metric in OURS.iter_calc([measure], qrels, run):
        assert metric.query_id not in values
        values[metric.query_id] = metric.value
    return values


def _pytrec(qrels, run, name, relevance_level=1):
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {name}, relevance_level=relevance_level)
    return {q: v[name] for q, v in evaluator.evaluate(run).items()}


PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(fully_judged_topics())
def test_fully_judged_infap_is_ap(data):
    run, qrels = data
    ap = _pytrec(qrels, run, "map")
    assert set(ap) == set(run)
    near_ap = _ours_per_query(ir_incomplete.infAP(eps=1e-12), qrels, run)
    pool = _ours_per_query(ir_incomplete.infAP, qrels, run)
    uniform = _ours_per_query(ir_incomplete.infAP(variant="uniform"), qrels, run)
    assert set(near_ap) == set(pool) == set(uniform) == set(qrels)
    for qid in ap:
        assert near_ap[qid] == pytest.approx(ap[qid], abs=1e-9), qid
        assert uniform[qid] == pytest.approx(pool[qid], abs=1e-12), qid


@PROPERTY
@given(topics(grades=(-1, 0, 1, 2)), st.sampled_from([1.0, 1.5, 2.0, 2.5, 3.0]))
def test_uniform_is_pool_with_unpooled_marked_unjudged(data, c):
    run, qrels = data
    marked = {qid: dict(judged) for qid, judged in qrels.items()}
    for qid, docs in run.items():
        for d in docs:
            marked[qid].setdefault(d, -1)
    uniform = _ours_per_query(ir_incomplete.infAP(c=c, variant="uniform"), qrels, run)
    pool_marked = _ours_per_query(ir_incomplete.infAP(c=c), marked, run)
    assert set(uniform) == set(pool_marked) == set(qrels)
    for qid in uniform:
        assert uniform[qid] == pytest.approx(pool_marked[qid], abs=1e-12), qid


@PROPERTY
@given(
    topics(grades=(-1, 0, 1, 2)),
    st.sampled_from([1.0, 1.5, 2.0, 3.0, 10.0]),
    st.sampled_from([1e-12, 1e-5, 0.1, 1.0]),
    st.sampled_from(["pool", "uniform"]),
    st.one_of(st.none(), st.integers(1, 12)),
    st.sampled_from([1, 2]),
)
def test_values_in_unit_interval(data, c, eps, variant, cutoff, rel):
    run, qrels = data
    params = dict(c=c, eps=eps, variant=variant, rel=rel)
    if cutoff is not None:
        params["cutoff"] = cutoff
    measure = ir_incomplete.infAP(**params)
    values = _ours_per_query(measure, qrels, run)
    assert set(values) == set(qrels)
    for qid, value in values.items():
        assert 0.0 <= value <= 1.0, (qid, value)


@PROPERTY
@given(topics(grades=(-1, 0, 1, 2), max_topics=4))
def test_plain_infap_equals_pytrec_eval(data):
    run, qrels = data
    for rel in (1, 2):
        expected = _pytrec(qrels, run, "infAP", relevance_level=rel)
        measure = ir_incomplete.infAP if rel == 1 else ir_incomplete.infAP(rel=2)
        ours = _ours_per_query(measure, qrels, run)
        assert set(expected) == set(run) & set(qrels)
        assert set(ours) == set(qrels)
        for qid in expected:
            assert ours[qid] == pytest.approx(expected[qid], abs=1e-9), (rel, qid)


# ---------------------------------------------------------------------------------------------------------
# smoothing constants at the limits of double precision
# ---------------------------------------------------------------------------------------------------------
def _reference_infap(ranking, grades, c, eps):
    """infAP of one ranking (documents in rank order) by the formula, term by term, in the order of
    operations of trec_eval; with ``Fraction`` arguments the exact value."""
    one = type(c)(1)
    total, rel_above, nonrel_above, pooled_above = 0 * one, 0, 0, 0
    for i, doc in enumerate(ranking):
        k = one * (i + 1)
        grade = grades.get(doc)
        if grade is not None and grade >= 1:
            if i == 0:
                total += one
            else:
                total += one / k + (pooled_above / k) * ((rel_above + eps) / (rel_above + nonrel_above + c * eps))
        if grade is not None:
            pooled_above += 1
            rel_above += grade >= 1
            nonrel_above += 0 <= grade < 1
    n_relevant = sum(g >= 1 for g in grades.values())
    return total / n_relevant if n_relevant else 0 * one


def _random_topics(seed=3, n=40):
    """Rankings of distinct scores with unpooled, pooled-but-unjudged (−1), nonrelevant and relevant
    documents; ``(run frame, qrels frame, {qid: (ranking, grades)})``."""
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows, topics = [], [], {}
    for t in range(n):
        qid = f"t{t}"
        depth = int(rng.integers(1, 15))
        ranking = [f"d{i}" for i in rng.permutation(30)[:depth]]
        grades = {}
        for doc in ranking + [f"d{i}" for i in range(30, 33)]:
            grade = rng.choice([None, -1, 0, 1, 2], p=[0.25, 0.2, 0.25, 0.15, 0.15])
            if grade is not None:
                grades[doc] = int(grade)
        run_rows += [(qid, doc, float(depth - i)) for i, doc in enumerate(ranking)]
        qrels_rows += [(qid, doc, g) for doc, g in grades.items()]
        topics[qid] = (ranking, grades)
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels, topics


def _per_query(run, qrels, measure):
    frame = evaluate(run, qrels, [measure])
    return dict(zip(frame["query_id"], frame["value"], strict=True))


@pytest.mark.parametrize("c", [1.0, 1.5, 2.0, 2.5, 3.0, 10.0, 1e-3])
@pytest.mark.parametrize("eps", [1e-5, 1e-12, 1e-3, 0.5])
def test_usual_smoothing_is_the_formula_bit_for_bit(c, eps):
    run, qrels, topics = _random_topics()
    ours = _per_query(run, qrels, ir_incomplete.infAP(c=c, eps=eps))
    for qid, (ranking, grades) in topics.items():
        assert ours[qid] == _reference_infap(ranking, grades, c, eps), qid  # equal, not approximately


@pytest.mark.parametrize(
    "c, eps",
    [
        (1e-200, 1e-200),  # c·eps underflows to 0: eps/(c·eps) was 1e-200/0
        (1e-300, 1e-300),
        (1e-300, 1e-5),  # c·eps normal, 1/c = 1e300: large but finite
        (1.5, 1e-320),  # subnormal eps: c·eps rounded to a few bits
        (2.0, 1e300),
        (1e10, 1e300),  # c·eps overflows to inf: (r+eps)/inf was 0
        (1e300, 10.0),
    ],
)
def test_extreme_smoothing_is_finite_and_exact(c, eps):
    run, qrels, topics = _random_topics()
    ours = _per_query(run, qrels, ir_incomplete.infAP(c=c, eps=eps))
    for qid, (ranking, grades) in topics.items():
        exact = float(_reference_infap(ranking, grades, Fraction(c), Fraction(eps)))
        assert math.isfinite(ours[qid]), (qid, ours[qid])
        assert ours[qid] == pytest.approx(exact, rel=1e-12, abs=1e-300), qid
    assert max(ours.values()) > 1e100 if c < 1e-100 else max(ours.values()) <= 1.0


@pytest.mark.parametrize("text", ["infAP(c=1e-320)", "infAP(c=1e-301,eps=1)", "infAP(c=0)"])
def test_smoothing_below_the_minimum_is_refused(text):
    with pytest.raises(ValueError, match=r"infAP: invalid value .* for parameter 'c'.*>= 1e-300"):
        parse(text)
    assert parse("infAP(c=1e-300)").get("c") == 1e-300
