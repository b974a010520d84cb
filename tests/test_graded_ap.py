"""GAP, xGAP and eGAP: spec values, the paper's properties, a brute-force reference, validation."""

import math
from fractions import Fraction

import ir_measures
import numpy as np
import pytest
from conftest import spec_cases, spec_topic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ir_incomplete  # noqa: F401  (registers the measures)
from ir_incomplete import evaluate, parse
from ir_incomplete.data import PAD, POOLED_UNJUDGED, UNPOOLED
from ir_incomplete.grammar import format_value
from ir_incomplete.kernels import graded_ap as kernels
from ir_incomplete.measures import ALL_MEASURES, GAP, eGAP, xGAP
from ir_incomplete.measures.graded_ap import ExpectedGradedAP, ExtendedGradedAP, GradedAP

NAMES = ("GAP", "xGAP", "eGAP")
TOPIC_E_RUN = {"q": {"b": 6, "a": 5, "d": 4, "x": 3, "e": 2, "c": 1}}
TOPIC_E_QRELS = {"q": {"a": 2, "b": 1, "c": 1, "d": 0, "e": 2, "f": 1}}


def value_of(measure_string, run, qrels, **kwargs):
    frame = evaluate(run, qrels, [measure_string], **kwargs)
    assert len(frame) == len(qrels)
    return float(frame["value"].iloc[0])


def aggregate(measure_string, run, qrels):
    measure = parse(measure_string)
    return ir_measures.calc_aggregate([measure], qrels, run)[measure]


# ---------------------------------------------------------------------------------------------------
# spec values (MEASURES.md §4, test_vectors.json)
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("topic,measure_string,expected", spec_cases(set(NAMES)))
def test_spec_vectors(spec, topic, measure_string, expected):
    run, qrels = spec_topic(spec, topic)
    assert value_of(measure_string, run, qrels) == pytest.approx(expected, abs=1e-9)
    assert aggregate(measure_string, run, qrels) == pytest.approx(expected, abs=1e-9)


def test_spec_vectors_cover_all_measures(spec):
    cases = spec_cases(set(NAMES))
    assert {parse(s).NAME for _, s, _ in cases} == set(NAMES)
    assert len(cases) >= 14


# Topic E by hand (§4 worked example): R(1)=3, R(2)=2; ranks 1 b:1, 2 a:2, 3 d:0, 4 x:NP, 5 e:2, 6 c:1.
# Σ_{m≤n} Δ_{m,n} at the relevant ranks: G1, G1+1, G1+2, 4·G1. A/G factors: .2, .35 (g=.5,.5); .2, .44 (.2,.8).
# AP_1 = (1+1+3/5+4/6)/5, AP_2 = (1/2+2/5)/2; @5: AP_1 = 2.6/5, AP_2 = .45;
# condensed (b a d e c): AP_1 = (1+1+3/4+4/5)/5 = .71, AP_2 = (1/2+2/4)/2 = .5.
HAND_E = {
    "GAP(g=0.5,0.5)": 25 / 42,
    "GAP(g=0.2,0.8)": (0.2 + 0.6 + 0.44 + 0.8 / 6) / 2.6,
    "xGAP(g=0.5,0.5)": 29 / 48,
    "xGAP(g=0.2,0.8)": 0.04 + 0.264 + 0.1936 + 0.2 * 0.8 / 6,
    "eGAP(g=0.5,0.5)": 0.5 * (3.2666666666666666 / 5) + 0.5 * 0.45,
    "eGAP(g=0.2,0.8)": 0.2 * (3.2666666666666666 / 5) + 0.8 * 0.45,
    "GAP(g=0.5,0.5)@5": 1.75 / 3.5,
    "GAP(g=0.2,0.8)@5": 1.24 / 2.6,
    "xGAP(g=0.5,0.5)@5": 0.1 + 0.2625 + 0.175,
    "xGAP(g=0.2,0.8)@5": 0.04 + 0.264 + 0.1936,
    "eGAP(g=0.5,0.5)@5": 0.5 * 0.52 + 0.5 * 0.45,
    "eGAP(g=0.2,0.8)@5": 0.2 * 0.52 + 0.8 * 0.45,
    "GAP(g=0.5,0.5,unjudged=condensed)": 2.275 / 3.5,
    "GAP(g=0.2,0.8,unjudged=condensed)": 1.51 / 2.6,
    "xGAP(g=0.5,0.5,unjudged=condensed)": 0.1 + 0.2625 + 0.21875 + 0.08,
    "xGAP(g=0.2,0.8,unjudged=condensed)": 0.04 + 0.264 + 0.242 + 0.032,
    "eGAP(g=0.5,0.5,unjudged=condensed)": 0.5 * 0.71 + 0.5 * 0.5,
    "eGAP(g=0.2,0.8,unjudged=condensed)": 0.2 * 0.71 + 0.8 * 0.5,
    "GAP(g=0.5,0.5,unjudged=condensed)@5": 2.275 / 3.5,
    "eGAP(g=0.2,0.8,unjudged=condensed)@5": 0.2 * 0.71 + 0.8 * 0.5,
    # condense, then cut (D2): @4 keeps b a d e; cutting first would keep only b a d
    "GAP(g=0.5,0.5,unjudged=condensed)@4": 1.875 / 3.5,
    "GAP(g=0.5,0.5,unjudged=condensed)@3": 1.25 / 3.5,
    "GAP(g=1,0)": 0.6533333333333333,
    "xGAP(g=0,1)": 0.45,
}


@pytest.mark.parametrize("measure_string,expected", sorted(HAND_E.items()))
def test_topic_e_by_hand(measure_string, expected):
    assert value_of(measure_string, TOPIC_E_RUN, TOPIC_E_QRELS) == pytest.approx(expected, abs=1e-9)
    assert aggregate(measure_string, TOPIC_E_RUN, TOPIC_E_QRELS) == pytest.approx(expected, abs=1e-9)


def test_spec_worked_example_numbers():
    # the bold numbers of §4, as printed
    printed = {
        "GAP(g=0.5,0.5)": 0.595238,
        "GAP(g=0.2,0.8)": 0.528205,
        "xGAP(g=0.5,0.5)": 0.604167,
        "xGAP(g=0.2,0.8)": 0.524267,
        "eGAP(g=0.5,0.5)": 0.551667,
        "eGAP(g=0.2,0.8)": 0.490667,
        "GAP(g=0.5,0.5)@5": 0.5,
        "GAP(g=0.5,0.5,unjudged=condensed)": 0.65,
    }
    for text, expected in printed.items():
        assert value_of(text, TOPIC_E_RUN, TOPIC_E_QRELS) == pytest.approx(expected, abs=5e-7), text


def test_all_three_in_one_call_and_per_query_false():
    strings = ["GAP(g=0.5,0.5)", "xGAP(g=0.5,0.5)", "eGAP(g=0.5,0.5)"]
    run = {"A": TOPIC_E_RUN, "B": {"q": {"f": 3, "a": 2, "b": 1}}}
    qrels = {"q": TOPIC_E_QRELS["q"], "empty": {"z": 0}}
    frame = evaluate(run, qrels, strings)
    assert list(frame.columns) == ["run", "query_id", "measure", "value"]
    got = {(r, q, m): v for r, q, m, v in frame.itertuples(index=False)}
    assert got[("A", "q", "GAP(g=0.5,0.5)")] == pytest.approx(25 / 42, abs=1e-12)
    assert got[("A", "q", "xGAP(g=0.5,0.5)")] == pytest.approx(29 / 48, abs=1e-12)
    assert got[("A", "q", "eGAP(g=0.5,0.5)")] == pytest.approx(0.551666666666667, abs=1e-12)
    assert got[("A", "empty", "GAP(g=0.5,0.5)")] == 0.0
    # run B: f(1) a(2) b(1): ΣΔ = .5, .5+1, .5·3 → GAP = (.5 + .75 + .5)/3.5
    assert got[("B", "q", "GAP(g=0.5,0.5)")] == pytest.approx(1.75 / 3.5, abs=1e-12)
    means = evaluate(run, qrels, strings, per_query=False)
    assert len(means) == 6
    mean_a = means[(means.run == "A") & (means.measure == "GAP(g=0.5,0.5)")]["value"].iloc[0]
    assert mean_a == pytest.approx(25 / 42 / 2, abs=1e-12)


# ---------------------------------------------------------------------------------------------------
# the paper's claims
# ---------------------------------------------------------------------------------------------------
def limit_case(n):
    """n grade-1 documents, then one grade-2 document: all relevant documents retrieved."""
    qrels = {"q": {**{f"d{i:05d}": 1 for i in range(n)}, "top": 2}}
    run = {"q": {**{f"d{i:05d}": float(n + 1 - i) for i in range(n)}, "top": 0.5}}
    return run, qrels


def test_limit_claims_n_2000():
    run, qrels = limit_case(2000)
    frame = evaluate(run, qrels, ["GAP(g=0.3,0.7)", "xGAP(g=0.3,0.7)", "eGAP(g=0.3,0.7)"])
    gap, xgap, egap = frame["value"].tolist()
    assert round(gap, 4) == 0.9988
    assert round(xgap, 4) == 0.5101
    assert round(egap, 4) == 0.3003
    n, g1, g2 = 2000, 0.3, 0.7  # closed forms for this ranking
    assert gap == pytest.approx((n * g1 + g1 + g2 / (n + 1)) / (n * g1 + 1), abs=1e-12)
    assert xgap == pytest.approx(n * g1 / (n + 1) + (g1 / (n + 1) + g2) * (g1 + g2 / (n + 1)), abs=1e-12)
    assert egap == pytest.approx(g1 + g2 / (n + 1), abs=1e-12)


@pytest.mark.parametrize("g1", [0.3, 0.5, 0.9])
def test_limit_claims_analytic(g1):
    g2 = 1 - g1
    text = f"(g={g1!r},{g2!r})"
    previous = None
    for n in (100, 1000, 20000):
        run, qrels = limit_case(n)
        gap, xgap, egap = evaluate(run, qrels, ["GAP" + text, "xGAP" + text, "eGAP" + text])["value"].tolist()
        err = (abs(gap - 1), abs(xgap - (1 - g2**2)), abs(egap - g1))
        assert max(err) < 1.0 / (g1 * n)  # errors are O(1/n): GAP ≈ g2/(n·g1), eGAP = g2/(n+1)
        if previous is not None:
            assert all(e < p for e, p in zip(err, previous, strict=True))  # approaching the limits
        previous = err


def selection_value(measure, n_grade1, n_grade2, retrieved_grade, g):
    """The measure for a run that retrieves a single document of ``retrieved_grade``: for GAP and xGAP
    this is the probability that the measure selects that document ([FFM] §3)."""
    qrels = {"q": {**{f"a{i}": 1 for i in range(n_grade1)}, **{f"b{i}": 2 for i in range(n_grade2)}}}
    doc = "a0" if retrieved_grade == 1 else "b0"
    return value_of(f"{measure}(g={g[0]!r},{g[1]!r})", {"q": {doc: 1.0}}, qrels)


def test_selection_probabilities():
    # R(1) = 10, R(2) = 1
    assert selection_value("GAP", 10, 1, 1, (0.5, 0.5)) == pytest.approx(1 / 12, abs=1e-12)
    assert selection_value("GAP", 10, 1, 2, (0.5, 0.5)) == pytest.approx(1 / 6, abs=1e-12)
    assert selection_value("xGAP", 10, 1, 1, (0.5, 0.5)) == pytest.approx(1 / 22, abs=1e-12)
    assert selection_value("xGAP", 10, 1, 2, (0.5, 0.5)) == pytest.approx(12 / 22, abs=1e-12)
    assert selection_value("GAP", 10, 1, 2, (0.1, 0.9)) == pytest.approx(1 / 2, abs=1e-12)
    assert selection_value("xGAP", 10, 1, 2, (0.1, 0.9)) == pytest.approx(100 / 110, abs=1e-12)
    # the selection probabilities of all relevant documents sum to 1
    for measure, g in (("GAP", (0.5, 0.5)), ("xGAP", (0.5, 0.5)), ("GAP", (0.1, 0.9)), ("xGAP", (0.1, 0.9))):
        total = 10 * selection_value(measure, 10, 1, 1, g) + selection_value(measure, 10, 1, 2, g)
        assert total == pytest.approx(1.0, abs=1e-12)


# ---------------------------------------------------------------------------------------------------
# references written from the formulas, and the random experiments of [FFM] §4
# ---------------------------------------------------------------------------------------------------
def ranking(run_topic):
    """Score descending, ties by document id descending (code point order)."""
    return sorted(sorted(run_topic, reverse=True), key=lambda d: -run_topic[d])


def ranked_grades(run_topic, qrels_topic, condensed, cutoff):
    order = ranking(run_topic)
    grades = []
    for doc in order:
        grade = qrels_topic.get(doc)
        if grade is None or grade < 0:
            if condensed:
                continue
            grade = 0
        grades.append(grade)
    return grades[:cutoff] if cutoff else grades


def reference(name, run_topic, qrels_topic, g, condensed=False, cutoff=None):
    """O(n²) sums straight from eqs. (4)–(6), in exact rational arithmetic."""
    g = [Fraction(x) for x in g]
    c = len(g)
    big_g = [Fraction(0)] + [sum(g[:j]) for j in range(1, c + 1)]
    counts = [sum(1 for v in qrels_topic.values() if v == j) for j in range(c + 1)]
    rb = [sum(counts[j:]) for j in range(c + 1)]
    r = ranked_grades(run_topic, qrels_topic, condensed, cutoff)
    if name == "GAP":
        norm = sum(counts[j] * big_g[j] for j in range(1, c + 1))
        if norm == 0:
            return Fraction(0)
        total = sum(
            Fraction(1, n) * sum(big_g[min(r[m - 1], r[n - 1])] for m in range(1, n + 1)) for n in range(1, len(r) + 1)
        )
        return total / norm
    if name == "xGAP":
        a = [sum((g[k - 1] / rb[k] for k in range(1, j + 1) if rb[k]), Fraction(0)) for j in range(c + 1)]
        total = Fraction(0)
        for n in range(1, len(r) + 1):
            j = r[n - 1]
            if big_g[j] == 0:
                continue
            total += Fraction(1, n) * (a[j] / big_g[j]) * sum(big_g[min(r[m - 1], j)] for m in range(1, n + 1))
        return total
    tau = max([j for j in range(c + 1) if counts[j] > 0], default=0)
    total = Fraction(0)
    for n in range(1, len(r) + 1):
        for k in range(1, tau + 1):
            if r[n - 1] >= k:
                total += Fraction(1, n) * g[k - 1] / rb[k] * sum(1 for m in range(n) if r[m] >= k)
    return total


def random_experiment(name, run_topic, qrels_topic, g, condensed=False, cutoff=None):
    """The expectation of the random experiments of [FFM] §3–4, computed exactly: select a relevant
    document (GAP: with probability G(r)/Σ R(j)G(j); xGAP: draw a user k ~ g, then a document uniformly
    among the RB(k) of grade ≥ k), draw a threshold K' ~ g restricted to K' ≤ its grade, draw m uniformly
    among the ranks down to the selected document's, and score [r_m ≥ K']. Unretrieved documents score 0."""
    g = [Fraction(x) for x in g]
    c = len(g)
    big_g = [Fraction(0)] + [sum(g[:j]) for j in range(1, c + 1)]
    r = ranked_grades(run_topic, qrels_topic, condensed, cutoff)
    rank_of = {}
    order = ranking(run_topic)
    position = 0
    for doc in order:
        grade = qrels_topic.get(doc)
        if condensed and (grade is None or grade < 0):
            continue
        position += 1
        if cutoff is None or position <= cutoff:
            rank_of[doc] = position
    relevant = {d: v for d, v in qrels_topic.items() if v > 0}

    def score(doc):
        n = rank_of.get(doc)
        j = relevant[doc]
        if n is None or big_g[j] == 0:
            return Fraction(0)
        return sum(g[k - 1] / big_g[j] * Fraction(sum(1 for m in range(n) if r[m] >= k), n) for k in range(1, j + 1))

    if name == "GAP":
        norm = sum(big_g[v] for v in relevant.values())
        return sum((big_g[v] / norm * score(d) for d, v in relevant.items()), Fraction(0)) if norm else Fraction(0)
    total = Fraction(0)
    for k in range(1, c + 1):
        pool = [d for d, v in relevant.items() if v >= k]
        for doc in pool:
            total += g[k - 1] / len(pool) * score(doc)
    return total


@st.composite
def graded_topic(draw, max_grade=3):
    c = draw(st.integers(1, max_grade))
    weights = draw(st.lists(st.integers(0, 10), min_size=c, max_size=c).filter(lambda w: sum(w) > 0))
    g = tuple(Fraction(w, sum(weights)) for w in weights)
    n_docs = draw(st.integers(0, 14))
    qrels = {}
    run = {}
    for i in range(n_docs):
        doc = f"d{i}"
        kind = draw(st.sampled_from(["judged", "judged", "judged", "unpooled", "pooled_unjudged"]))
        if kind == "judged":
            qrels[doc] = draw(st.integers(0, c))
        elif kind == "pooled_unjudged":
            qrels[doc] = -1
        if draw(st.booleans()) or kind == "unpooled":
            run[doc] = float(draw(st.integers(0, 5)))  # ties broken by doc id descending
    if not qrels:
        qrels["only"] = 0
    condensed = draw(st.booleans())
    cutoff = draw(st.one_of(st.none(), st.integers(1, 8)))
    return g, qrels, run, condensed, cutoff


def evaluate_topic(run, qrels, strings):
    """``evaluate({"q": run}, {"q": qrels}, strings)``: one topic ``q``. A run that retrieves no document
    (``{"q": {}}``) reads as a run named ``q`` without rows, which is scored 0 on every query and warns
    that it retrieves nothing (asserted)."""
    if run:
        return evaluate({"q": run}, {"q": qrels}, strings)
    with pytest.warns(UserWarning, match="run 'q' retrieves nothing"):
        return evaluate({"q": run}, {"q": qrels}, strings)


def measure_text(name, g, condensed, cutoff):
    measure = {"GAP": GAP, "xGAP": xGAP, "eGAP": eGAP}[name](
        g=tuple(float(x) for x in g), **({"unjudged": "condensed"} if condensed else {})
    )
    return repr(measure @ cutoff if cutoff else measure)


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(case=graded_topic())
def test_matches_reference_and_random_experiment(case):
    g, qrels, run, condensed, cutoff = case
    strings = [measure_text(name, g, condensed, cutoff) for name in NAMES]
    frame = evaluate_topic(run, qrels, strings)
    got = dict(zip(frame["measure"], frame["value"], strict=True))
    for name, text in zip(NAMES, strings, strict=True):
        expected = reference(name, run, qrels, g, condensed, cutoff)
        assert got[text] == pytest.approx(float(expected), abs=1e-12), text
        assert 0.0 <= got[text] <= 1.0 + 1e-12
        if name != "eGAP":
            assert random_experiment(name, run, qrels, g, condensed, cutoff) == expected


@settings(deadline=None, max_examples=60)
@given(case=graded_topic())
def test_egap_is_weighted_binary_ap(case):
    g, qrels, run, condensed, cutoff = case
    strings = [measure_text("eGAP", g, condensed, cutoff)]
    strings += [
        measure_text("GAP", tuple(1 if i == k else 0 for i in range(len(g))), condensed, cutoff) for k in range(len(g))
    ]
    values = evaluate_topic(run, qrels, strings)["value"].tolist()
    assert values[0] == pytest.approx(sum(float(w) * v for w, v in zip(g, values[1:], strict=True)), abs=1e-12)


@settings(deadline=None, max_examples=60)
@given(case=graded_topic())
def test_one_hot_g_gives_binary_ap_for_all_three(case):
    g, qrels, run, condensed, cutoff = case
    c = len(g)
    for k in range(1, c + 1):
        one_hot = tuple(1 if i == k - 1 else 0 for i in range(c))
        values = evaluate_topic(run, qrels, [measure_text(n, one_hot, condensed, cutoff) for n in NAMES])[
            "value"
        ].tolist()
        r = ranked_grades(run, qrels, condensed, cutoff)
        n_rel = sum(1 for v in qrels.values() if v >= k)
        hits, ap = 0, 0.0
        for i, grade in enumerate(r, start=1):
            if grade >= k:
                hits += 1
                ap += hits / i
        ap = ap / n_rel if n_rel else 0.0
        assert values == pytest.approx([ap] * 3, abs=1e-12)


def test_ideal_ranking():
    qrels = {"q": {"a": 3, "b": 2, "c": 2, "d": 1, "e": 0, "f": 1}}
    run = {"q": {"a": 9, "b": 8, "c": 7, "d": 6, "f": 5, "e": 4}}
    for g in ((0.1, 0.2, 0.7), (0.5, 0, 0.5), (0, 0, 1), (0.2, 0.2, 0.2, 0.4)):
        text = "(g=" + ",".join(map(str, g)) + ")"
        gap, xgap, egap = evaluate(run, qrels, ["GAP" + text, "xGAP" + text, "eGAP" + text])["value"].tolist()
        assert gap == pytest.approx(1.0, abs=1e-12)
        # xGAP and eGAP of a perfect ranking are G(τ): users whose threshold no document reaches score 0
        assert xgap == pytest.approx(sum(g[:3]), abs=1e-12)
        assert egap == pytest.approx(sum(g[:3]), abs=1e-12)


def test_nu_above_tau_and_nothing_relevant_retrieved_give_zero():
    qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    run = {"q": {"a": 3, "b": 2, "c": 1}}
    for name in NAMES:
        assert value_of(f"{name}(g=0,1)", run, qrels) == 0.0  # ν = 2 > τ = 1
        assert value_of(f"{name}(g=0.5,0.5)", {"q": {"c": 1, "x": 2}}, qrels) == 0.0
        assert value_of(f"{name}(g=0.5,0.5)", {"q": {"a": 1}}, {"q": {"a": 0}}) == 0.0
        assert value_of(f"{name}(g=0.5,0.5)", {"other": {"a": 1}}, qrels) == 0.0  # query not answered


# ---------------------------------------------------------------------------------------------------
# unjudged documents and grades by value (D8)
# ---------------------------------------------------------------------------------------------------
def test_unjudged_documents_are_grade_zero_or_removed():
    qrels = {"q": {"a": 2, "b": 1, "u": -1, "n": 0}}
    run = {"q": {"u": 5, "x": 4, "a": 3, "n": 2, "b": 1}}  # u pooled-unjudged, x unpooled
    plain = {"q": {"z1": 5, "z2": 4, "a": 3, "n": 2, "b": 1}}  # same grades, both unpooled
    zeros = {"q": {"n0": 5, "n1": 4, "a": 3, "n": 2, "b": 1}}
    judged_zero = {"q": {"a": 2, "b": 1, "n": 0, "n0": 0, "n1": 0}}
    for name in NAMES:
        text = f"{name}(g=0.4,0.6)"
        v = value_of(text, run, qrels)
        assert v == pytest.approx(value_of(text, plain, qrels), abs=1e-15)
        assert v == pytest.approx(value_of(text, zeros, judged_zero), abs=1e-15)
        cond = value_of(text.replace(")", ",unjudged=condensed)"), run, qrels)
        # condensed: a n b at ranks 1..3
        assert cond == pytest.approx(value_of(text, {"q": {"a": 3, "n": 2, "b": 1}}, qrels), abs=1e-15)
        assert cond > v
        # negative="zero": u becomes judged nonrelevant and stays in the condensed list (u a n b)
        zero_cond = value_of(text.replace(")", ",unjudged=condensed)"), run, qrels, negative="zero")
        assert zero_cond == pytest.approx(
            value_of(text, {"q": {"u": 4, "a": 3, "n": 2, "b": 1}}, qrels, negative="zero"), abs=1e-15
        )
        assert zero_cond < cond


def test_grades_are_used_by_value():
    # no grade-1 document at all: grade 2 still takes g_2 (MATTERS would use g_1 for it)
    qrels = {"q": {"a": 2, "b": 2, "n": 0}}
    run = {"q": {"n": 3, "a": 2, "b": 1}}
    # G(2) = 1, R(2) = 2: GAP = (1/2 + 2/3)/2; one-hot (1,0) and (0,1) both give AP = 7/12 here
    assert value_of("GAP(g=0.3,0.7)", run, qrels) == pytest.approx(7 / 12, abs=1e-12)
    assert value_of("xGAP(g=0.3,0.7)", run, qrels) == pytest.approx(7 / 12, abs=1e-12)
    # eGAP: AP_1 = AP_2 = 7/12; g_3 = 0.5 belongs to grade 3, which no document reaches
    assert value_of("eGAP(g=0.2,0.3,0.5)", run, qrels) == pytest.approx(0.5 * 7 / 12, abs=1e-12)
    assert value_of("GAP(g=0.2,0.3,0.5)", run, qrels) == pytest.approx(7 / 12, abs=1e-12)


def test_grade_above_len_g_is_an_error():
    qrels = {"q1": {"a": 1}, "q7": {"a": 3, "b": 2}}
    run = {"q1": {"a": 1.0}}
    for name in NAMES:
        with pytest.raises(ValueError) as err:
            evaluate(run, qrels, [f"{name}(g=0.5,0.5)"])
        message = str(err.value)
        assert "grade 3" in message and "'q7'" in message and "len(g) = 2" in message
        assert name in message
    assert value_of("GAP(g=0.2,0.3,0.5)", run, qrels) == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError, match="grade 3"):
        ir_measures.calc_aggregate([xGAP(g=(0.5, 0.5))], qrels, run)


# ---------------------------------------------------------------------------------------------------
# measure objects, grammar, validation
# ---------------------------------------------------------------------------------------------------
def test_canonical_repr_and_python_api():
    assert repr(parse("xGAP(g=(0.1,0.9))")) == "xGAP(g=0.1,0.9)"
    assert repr(parse("xGAP(g=0.1,0.9)")) == "xGAP(g=0.1,0.9)"
    assert repr(xGAP(g=(0.1, 0.9))) == "xGAP(g=0.1,0.9)"
    assert xGAP(g=(0.1, 0.9)) == parse("xGAP(g=0.1,0.9)")
    assert repr(GAP(g=[0.5, 0.5], unjudged="condensed") @ 5) == "GAP(g=0.5,0.5,unjudged=condensed)@5"
    assert repr(parse("eGAP(unjudged=condensed, g=(1,0))@10")) == "eGAP(g=1,0,unjudged=condensed)@10"
    assert repr(eGAP(g=(0.5, 0.5), unjudged="nonrelevant")) == "eGAP(g=0.5,0.5)"
    assert repr(parse("GAP(g=1)")) == "GAP(g=(1,))"
    single = parse("GAP(g=1)")
    assert single["g"] == (1.0,) and parse(repr(single)) == single
    assert xGAP(g=(0.1, 0.9))["g"] == (0.1, 0.9)
    assert isinstance(parse("xGAP(g=0.1,0.9)"), ExtendedGradedAP)
    assert isinstance(parse("GAP(g=0.1,0.9)"), GradedAP)
    assert isinstance(parse("eGAP(g=0.1,0.9)"), ExpectedGradedAP)
    for name, obj in (("GAP", GAP), ("xGAP", xGAP), ("eGAP", eGAP)):
        assert obj in ALL_MEASURES
        assert ir_measures.measures.registry[name] is obj
        assert repr(obj) == name
    assert ir_measures.parse_measure("xGAP(g=0.1,0.9)@10") == xGAP(g=(0.1, 0.9), cutoff=10)


def test_missing_g_message():
    for name, obj in (("GAP", GAP), ("xGAP", xGAP), ("eGAP", eGAP)):
        expected = f"{name} needs g, e.g. {name}(g=0.1,0.9)"
        for make in (
            lambda name=name: parse(name),
            lambda name=name: parse(f"{name}@5"),
            lambda obj=obj: obj(unjudged="condensed"),
            lambda obj=obj: obj @ 5,
            lambda obj=obj: obj(g=None),
        ):
            with pytest.raises(ValueError) as err:
                make()
            assert str(err.value).startswith(expected)
        with pytest.raises(ValueError, match=f"{name} needs g"):
            evaluate(TOPIC_E_RUN, TOPIC_E_QRELS, [obj])


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("xGAP(g=-0.1,1.1)", "negative"),
        ("xGAP(g=0.5,0.6)", "sum to"),
        ("xGAP(g=0.5,0.49)", "sum to"),
        ("xGAP(g=0.5,abc)", "not a number"),
        ("xGAP(g=0.5,0.5,unjudged=skip)", "nonrelevant, condensed"),
        ("xGAP(g=0.5,0.5,rel=2)", "no parameter 'rel'"),
        ("xGAP(g=0.5,0.5)@0", "cutoff"),
        ("GAP(g=())", "empty"),
        ("GAP(g=none)", "not a number"),
    ],
)
def test_invalid_parameters(text, fragment):
    with pytest.raises(ValueError) as err:
        parse(text)
    assert fragment in str(err.value)


def test_sum_tolerance():
    assert parse("GAP(g=0.5,0.5000005)")["g"] == (0.5, 0.5000005)
    with pytest.raises(ValueError, match="sum to"):
        parse("GAP(g=0.5,0.500002)")


@st.composite
def distributions(draw):
    weights = draw(
        st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=5).filter(lambda w: math.fsum(w) > 1e-3)
    )
    total = math.fsum(weights)
    return tuple(w / total for w in weights)


@settings(deadline=None, max_examples=200)
@given(
    g=distributions(),
    name=st.sampled_from(NAMES),
    condensed=st.booleans(),
    cutoff=st.one_of(st.none(), st.integers(1, 1000)),
)
def test_round_trip(g, name, condensed, cutoff):
    obj = {"GAP": GAP, "xGAP": xGAP, "eGAP": eGAP}[name]
    measure = obj(g=g, **({"unjudged": "condensed"} if condensed else {}))
    if cutoff:
        measure = measure @ cutoff
    text = repr(measure)
    assert " " not in text
    assert parse(text) == measure
    assert repr(parse(text)) == text
    assert parse(text)["g"] == tuple(float(x) for x in g)
    g_text = format_value(measure["g"])
    if not g_text.startswith("("):  # the explicit tuple form reads back to the same measure
        explicit = text.replace(f"g={g_text}", f"g=({g_text})", 1)
        assert explicit != text and parse(explicit) == measure


def test_docstrings_state_formulas_and_conventions():
    for cls, formula in (
        (GradedAP, "Σ_{j=1}^{c} R(j)·G(j)"),
        (ExtendedGradedAP, "A(r_n) / G(r_n)"),
        (ExpectedGradedAP, "g_k · AP_k"),
    ):
        doc = cls.__doc__
        assert formula in doc
        assert "Ferrante, Ferro & Maistro" in doc
        for convention in ("by value", "unjudged=condensed", "@k", "ν", "Ties"):
            assert convention in doc, (cls.__name__, convention)
    assert "eq. 4" in GradedAP.__doc__ and "eq. 5" in ExtendedGradedAP.__doc__ and "eq. 6" in ExpectedGradedAP.__doc__


# ---------------------------------------------------------------------------------------------------
# kernels directly
# ---------------------------------------------------------------------------------------------------
def test_condense_kernel():
    codes = np.array(
        [[2, UNPOOLED, 0, POOLED_UNJUDGED, 1, PAD], [UNPOOLED, UNPOOLED, PAD, PAD, PAD, PAD], [0, 1, 2, 1, 0, 1]],
        dtype=np.int32,
    )
    out = kernels.condense(codes)
    assert out.tolist() == [[2, 0, 1, PAD, PAD, PAD], [PAD] * 6, [0, 1, 2, 1, 0, 1]]
    assert kernels.condense(np.zeros((0, 4), dtype=np.int32)).shape == (0, 0)


def test_kernels_many_rows_at_once():
    # rows: topic E's ranking, an empty ranking and a reversed copy, with R per row
    e = [1, 2, 0, UNPOOLED, 2, 1]
    codes = np.array([e, [PAD] * 6, e[::-1]], dtype=np.int32)
    counts = np.array([[1, 3, 2], [5, 0, 0], [1, 3, 2]])
    g = (0.5, 0.5)
    assert kernels.graded_ap(codes, counts, g)[:2] == pytest.approx([25 / 42, 0.0], abs=1e-12)
    assert kernels.extended_graded_ap(codes, counts, g)[:2] == pytest.approx([29 / 48, 0.0], abs=1e-12)
    assert kernels.expected_graded_ap(codes, counts, g)[:2] == pytest.approx([0.551666666666667, 0.0], abs=1e-12)
    single = kernels.graded_ap(codes[2:], counts[2:], g)
    assert kernels.graded_ap(codes, counts, g)[2] == pytest.approx(single[0], abs=1e-15)
    with pytest.raises(ValueError, match="grade 2"):
        kernels.graded_ap(codes, counts, (1.0,))
    with pytest.raises(ValueError, match="grade 3"):
        kernels.expected_graded_ap(codes, np.array([[0, 0, 0, 1]] * 3), g)
    empty = np.zeros((0, 0), dtype=np.int32)
    assert kernels.extended_graded_ap(empty, np.zeros((0, 3)), g).shape == (0,)
