"""Induced AP, subcollection AP, bpref, bpref-10 and RankEff: spec vectors, parameters, routing in
``ir_measures``, kernels against straightforward per-query references, and properties."""

from __future__ import annotations

import math

import ir_measures
import numpy as np
import pytest
from conftest import spec_cases, spec_topic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ir_incomplete
from ir_incomplete import evaluate, parse
from ir_incomplete.data import PAD, POOLED_UNJUDGED, UNPOOLED
from ir_incomplete.kernels import ap_family as kernels
from ir_incomplete.measures import ALL_MEASURES, BPref, Bpref, Bpref10, RankEff, indAP, subAP

OURS = ir_measures.providers.registry["ir_incomplete"]

MEASURES = {"indAP", "subAP", "bpref", "bpref10", "RankEff"}
CASES = spec_cases(MEASURES)


# ---------------------------------------------------------------------------------------------------
# spec vectors
# ---------------------------------------------------------------------------------------------------
def test_spec_vectors_cover_every_measure_and_variant(spec):
    strings = {s for _, s, _ in CASES}
    assert {
        "indAP",
        "indAP(variant=original)",
        "subAP",
        "subAP(p=0.5)",
        "Bpref",
        "Bpref(variant=paper)",
        "Bpref10",
        "Bpref10(variant=paper)",
        "RankEff",
    } <= strings
    topics = {t for t, _, _ in CASES}
    assert {"A", "B", "C", "D1", "D2", "G1", "G2", "E", "F", "S", "T1", "T2", "N0"} <= topics
    assert len(CASES) == 117


@pytest.mark.parametrize("topic,measure_string,expected", CASES)
def test_spec_vector_evaluate(spec, topic, measure_string, expected):
    run, qrels = spec_topic(spec, topic)
    frame = evaluate({"r": run}, qrels, [measure_string])
    assert len(frame) == 1
    assert frame["value"].iloc[0] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("topic,measure_string,expected", CASES)
def test_spec_vector_ir_measures(spec, topic, measure_string, expected):
    run, qrels = spec_topic(spec, topic)
    measure = ir_measures.parse_measure(measure_string)
    assert repr(measure) == measure_string
    value = ir_measures.calc_aggregate([measure], qrels, run)[measure]
    assert value == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("topic,measure_string,expected", CASES)
def test_spec_vector_our_provider_directly(spec, topic, measure_string, expected):
    """Our provider computes every string itself, plain ``Bpref`` included."""
    run, qrels = spec_topic(spec, topic)
    measure = parse(measure_string)
    value = OURS.calc_aggregate([measure], qrels, run)[measure]
    assert value == pytest.approx(expected, abs=1e-9)


def test_topics_together_equal_topics_alone(spec):
    """Per-topic quantities (R, N, the default p of subAP) are taken per topic in one call."""
    topics = ["A", "E", "F", "N0", "S"]
    run, qrels = {}, {}
    for t in topics:
        r, q = spec_topic(spec, t)
        run[t], qrels[t] = r["q"], q["q"]
    strings = [
        "indAP",
        "indAP(variant=original)",
        "subAP",
        "subAP(p=0.5)@4",
        "Bpref",
        "Bpref10(variant=paper)",
        "RankEff@3",
    ]
    together = evaluate({"r": run}, qrels, strings)
    for t in topics:
        r, q = spec_topic(spec, t)
        alone = evaluate({"r": r}, q, strings)
        got = together[together["query_id"] == t]["value"].to_numpy()
        np.testing.assert_array_equal(got, alone["value"].to_numpy())


def test_subap_default_p_is_per_topic(spec):
    """Topic A: J = 6 judged, U = 2 negative → p = 0.75 (D6); topic E has no negative entries → p = 1."""
    run, qrels = spec_topic(spec, "A")
    assert (
        evaluate({"r": run}, qrels, ["subAP"])["value"].iloc[0]
        == evaluate({"r": run}, qrels, ["subAP(p=0.75)"])["value"].iloc[0]
    )
    run, qrels = spec_topic(spec, "E")
    assert (
        evaluate({"r": run}, qrels, ["subAP"])["value"].iloc[0]
        == evaluate({"r": run}, qrels, ["indAP"])["value"].iloc[0]
    )


# ---------------------------------------------------------------------------------------------------
# hand-checked cut-offs and edge cases
# ---------------------------------------------------------------------------------------------------
def _one(measure_string, run, qrels):
    frame = evaluate({"r": {"q": run}}, {"q": qrels}, [measure_string])
    return frame["value"].iloc[0]


def test_indap_condense_then_cut():
    """Spec §1.4 / D2: qrels {a:1, c:0}, run u > c > a. indAP(original)@2 condenses to [c, a] first: 1/2.
    Cutting first would leave [u, c] → [c] and give 0."""
    run, qrels = {"u": 3.0, "c": 2.0, "a": 1.0}, {"a": 1, "c": 0}
    assert _one("indAP(variant=original)@2", run, qrels) == pytest.approx(0.5, abs=1e-12)
    assert _one("indAP@2", run, qrels) == 0.0  # pool keeps the unpooled u: [u, c]
    assert _one("indAP@3", run, qrels) == pytest.approx(1 / 3, abs=1e-12)
    # subAP@2: a is at reduced rank 2 + i; only i = 0 (u dropped, probability 1 − p) fits the cut-off
    assert _one("subAP(p=0.25)@2", run, qrels) == pytest.approx(0.75 * 0.5, abs=1e-12)
    assert _one("subAP(p=0.25)", run, qrels) == pytest.approx(0.75 * 0.5 + 0.25 / 3, abs=1e-12)


def test_topic_a_cutoffs(spec):
    """Topic A by hand. @5 keeps d1 R, d4 U, x1 NP, d2 N, d3 R."""
    run, qrels = spec_topic(spec, "A")
    values = evaluate(
        {"r": run},
        qrels,
        [
            "Bpref@5",
            "Bpref(variant=paper)@5",
            "Bpref10@5",
            "RankEff@5",
            "RankEff@1",
            "indAP@3",
            "indAP(variant=original)@3",
            "subAP(p=0.5)@3",
        ],
    )["value"].tolist()
    expected = [
        (1 + (1 - 1 / 3)) / 3,  # d6 past the cut-off contributes 0; R and N unchanged
        (1 + (1 - 1 / 3)) / 3,
        (1 + (1 - 1 / 3)) / 3,  # trec_eval variant: min(N, R+10) = 3
        (3 / 3 + 2 / 3) / 3,  # d2 retrieved above d3; d5, d7 count as unretrieved
        (3 / 3) / 3,
        (1 / 1) / 3,  # pool list d1 x1 d2 | d3 ...: only d1 in the first 3
        (1 + 2 / 3) / 3,  # original list d1 d2 d3
        (1 + 0.5 * 2 / 3) / 3,  # d3: r+n = 3, nd = 1: only i = 0 fits
    ]
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12)


def test_no_relevant_and_no_nonrelevant():
    # R = 0 → 0 for every measure
    for m in ["indAP", "subAP", "subAP(p=0.3)", "Bpref", "Bpref10(variant=paper)", "RankEff"]:
        assert _one(m, {"a": 2.0, "b": 1.0}, {"a": 0, "b": 0}) == 0.0
    # N = 0 → R_ret / R (D4; bpref as trec_eval)
    run, qrels = {"a": 3.0, "x": 2.0, "b": 1.0}, {"a": 1, "b": 1, "c": 1, "u": -1}
    for m in ["Bpref", "Bpref(variant=paper)", "Bpref10", "Bpref10(variant=paper)", "RankEff"]:
        assert _one(m, run, qrels) == pytest.approx(2 / 3, abs=1e-12), m


def test_query_without_run_gets_zero():
    frame = evaluate(
        {"r": {"q1": {"a": 1.0}}},
        {"q1": {"a": 1}, "q2": {"b": 1, "c": 0}},
        ["indAP", "subAP", "Bpref@5", "Bpref10", "RankEff"],
    )
    assert frame[frame["query_id"] == "q2"]["value"].tolist() == [0.0] * 5
    assert frame[frame["query_id"] == "q1"]["value"].tolist() == [1.0] * 5


def test_rel_level_two(spec):
    """Topic E at rel=2: relevant a, e (R=2); judged nonrelevant b, c, d, f (N=4)."""
    run, qrels = spec_topic(spec, "E")  # 1 b(1) · 2 a(2) · 3 d(0) · 4 x NP · 5 e(2) · 6 c(1)
    values = evaluate(
        {"r": run},
        qrels,
        [
            "Bpref(rel=2)",
            "Bpref(rel=2,variant=paper)",
            "RankEff(rel=2)",
            "indAP(rel=2,variant=original)",
            "indAP(rel=2)",
            "subAP(p=0.5,rel=2)",
        ],
    )["value"].tolist()
    expected = [
        ((1 - 1 / 2) + (1 - 2 / 2)) / 2,  # n_a = 1, n_e = 2 (b, d); min(R, N) = 2
        ((1 - 1 / 2) + (1 - 2 / 2)) / 2,
        ((4 - 1) / 4 + (4 - 2) / 4) / 2,
        (1 / 2 + 2 / 4) / 2,  # b a d e c
        (1 / 2 + 2 / 5) / 2,
        (1 / 2 + 0.5 * 2 / 4 + 0.5 * 2 / 5) / 2,
    ]
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12)


def test_negative_zero_policy(spec):
    """Under negative="zero" a negative grade is a judged nonrelevant document: U = 0, so subAP = indAP
    and topic A's d4, d8 join N."""
    run, qrels = spec_topic(spec, "A")
    frame = evaluate({"r": run}, qrels, ["subAP", "indAP", "RankEff"], negative="zero")
    sub, ind, rankeff = frame["value"].tolist()
    assert sub == ind
    # list d1 d4 x1 d2 d3 x2 d5 d6, judged nonrelevant now d2 d4 d5 d7 d8 (N = 5)
    assert ind == pytest.approx((1 + 2 / 5 + 3 / 8) / 3, abs=1e-12)
    assert rankeff == pytest.approx((5 / 5 + 3 / 5 + 2 / 5) / 3, abs=1e-12)


# ---------------------------------------------------------------------------------------------------
# parameters, names, registry
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,name,choices",
    [
        ("subAP(p=1.5)", "p", "<= 1.0"),
        ("subAP(p=-0.1)", "p", ">= 0.0"),
        ("indAP(variant=foo)", "variant", "pool, original"),
        ("Bpref(variant=foo)", "variant", "trec_eval, paper"),
        ("Bpref10(variant=old)", "variant", "trec_eval, paper"),
        ("RankEff(rel=-1)", "rel", ">= 0"),
        ("Bpref@0", "cutoff", ">= 1"),
    ],
)
def test_bad_parameters_name_parameter_and_choices(text, name, choices):
    with pytest.raises(ValueError) as info:
        parse(text)
    message = str(info.value)
    assert f"'{name}'" in message and choices in message
    with pytest.raises(ValueError):
        ir_measures.parse_measure(text)


def test_bad_parameters_in_constructors():
    with pytest.raises(ValueError, match=r"'p'.*between|'p'.*<= 1"):
        subAP(p=1.5)
    with pytest.raises(ValueError, match=r"'variant'.*trec_eval, paper"):
        Bpref(variant="foo")
    with pytest.raises(ValueError, match=r"no parameter 'c'.*valid parameters: rel, variant, cutoff"):
        Bpref10(c=2)
    with pytest.raises(ValueError, match=r"'variant'.*pool, original"):
        ir_measures.measures.registry["indAP"](variant="uniform")


@pytest.mark.parametrize(
    "text",
    [
        "indAP",
        "indAP(variant=original)@10",
        "indAP(rel=2)",
        "subAP",
        "subAP(p=0.5)",
        "subAP(p=0)@5",
        "subAP(p=1,rel=2)@20",
        "Bpref",
        "Bpref(variant=paper)",
        "Bpref@10",
        "Bpref(rel=2,variant=paper)@5",
        "Bpref10",
        "Bpref10(variant=paper)@100",
        "RankEff",
        "RankEff(rel=2)@10",
    ],
)
def test_canonical_strings_round_trip(text):
    measure = parse(text)
    assert repr(measure) == text
    assert parse(repr(measure)) == measure
    assert ir_measures.parse_measure(text) == measure


def test_defaults_are_omitted_and_ints_are_floats():
    assert repr(subAP(p=1)) == "subAP(p=1)" and subAP(p=1)["p"] == 1.0
    assert repr(Bpref(variant="trec_eval")) == "Bpref"
    assert repr(indAP(variant="pool", rel=1)) == "indAP"
    assert repr(Bpref10(cutoff=10, variant="paper")) == "Bpref10(variant=paper)@10"


def test_registry_and_aliases():
    registry = ir_measures.measures.registry
    for m in (indAP, subAP, Bpref, Bpref10, RankEff):
        assert m in ALL_MEASURES
        assert registry[m.NAME] is m
    assert registry["BPref"] is Bpref and BPref is Bpref
    assert ir_measures.Bpref is Bpref and ir_measures.BPref is Bpref
    assert ir_measures.measures.Bpref is Bpref and ir_measures.measures.BPref is Bpref
    assert parse("BPref(variant=paper)") == Bpref(variant="paper")
    # plain Bpref still equals the built-in object
    from ir_measures.measures.bpref import _Bpref

    assert Bpref == _Bpref() and isinstance(Bpref, _Bpref)
    assert ir_incomplete.integration._names(Bpref) == ("Bpref", "BPref")


def test_registration_is_idempotent():
    ir_incomplete.activate()
    ir_incomplete.activate()
    assert ir_measures.measures.registry["BPref"] is Bpref
    assert sum(p is OURS for p in ir_measures.DefaultPipeline.providers) == 1


def test_short_descriptions_and_docstrings():
    for m in (indAP, subAP, Bpref, Bpref10, RankEff):
        assert m.SHORT_DESC and len(m.SHORT_DESC) < 140
        doc = type(m).__doc__
        assert "Conventions" in doc and "R = 0 gives 0" in doc and "ties" in doc
        for name, param in m.SUPPORTED_PARAMS.items():
            assert param.desc, (m.NAME, name)


# ---------------------------------------------------------------------------------------------------
# routing in ir_measures' default pipeline
# ---------------------------------------------------------------------------------------------------
def _raise(*args, **kwargs):
    raise AssertionError("this provider must not be asked")


def test_extended_bpref_goes_to_our_provider(spec, monkeypatch):
    pytrec = ir_measures.providers.registry["pytrec_eval"]
    assert pytrec in ir_measures.DefaultPipeline.providers
    monkeypatch.setattr(pytrec, "_evaluator", _raise)
    run, qrels = spec_topic(spec, "B")
    measures = [
        ir_measures.parse_measure(s)
        for s in ("Bpref(variant=paper)", "Bpref@10", "BPref@3", "Bpref10", "RankEff", "indAP", "subAP(p=0.5)")
    ]
    result = ir_measures.calc_aggregate(measures, qrels, run)
    # B: n1 N · r1 R · r2 R · r3 R, R = 3, N = 1
    assert result[measures[0]] == pytest.approx(2 / 3, abs=1e-12)
    assert result[measures[1]] == 0.0
    assert result[measures[2]] == 0.0
    assert result[measures[3]] == 0.0  # min(N, R+10) = 1
    assert result[measures[4]] == 0.0
    assert result[measures[5]] == pytest.approx((1 / 2 + 2 / 3 + 3 / 4) / 3, abs=1e-12)
    assert result[measures[6]] == result[measures[5]]  # nothing unpooled
    with pytest.raises(AssertionError, match="must not be asked"):
        ir_measures.calc_aggregate([ir_measures.parse_measure("Bpref")], qrels, run)


def test_plain_bpref_goes_to_pytrec_eval(spec, monkeypatch):
    pytrec = ir_measures.providers.registry["pytrec_eval"]
    asked = []
    original = pytrec._evaluator

    def spy(measures, qrels):
        asked.append(sorted(map(repr, measures)))
        return original(measures, qrels)

    monkeypatch.setattr(pytrec, "_evaluator", spy)
    monkeypatch.setattr(OURS, "_evaluator", _raise)
    run, qrels = spec_topic(spec, "A")
    for text in ("Bpref", "BPref", "Bpref(rel=1)", "Bpref(variant=trec_eval)"):
        measure = ir_measures.parse_measure(text)
        assert ir_measures.calc_aggregate([measure], qrels, run)[measure] == pytest.approx(2 / 3, abs=1e-12)
    assert asked == [["Bpref"]] * 4
    assert not OURS.supports(Bpref)
    assert OURS.supports(Bpref(variant="paper"))
    assert OURS.supports(Bpref @ 10)
    assert OURS.supports(Bpref10) and OURS.supports(RankEff)


# ---------------------------------------------------------------------------------------------------
# kernels against per-query references written from the spec formulas
# ---------------------------------------------------------------------------------------------------
def ref_indap(codes, R, rel, variant, cutoff):
    kept = [c for c in codes if c >= 0 or (variant == "pool" and c == UNPOOLED)]
    if cutoff is not None:
        kept = kept[:cutoff]
    total, r = 0.0, 0
    for i, c in enumerate(kept, 1):
        if c >= rel:
            r += 1
            total += r / i
    return total / R if R else 0.0


def ref_subap(codes, R, rel, p, cutoff):
    total, r, n, nd = 0.0, 0, 0, 0
    for c in codes:
        if c == UNPOOLED:
            nd += 1
        elif c >= rel:
            r += 1
            for i in range(nd + 1):
                if cutoff is None or r + n + i <= cutoff:
                    total += math.comb(nd, i) * p**i * (1 - p) ** (nd - i) * r / (r + n + i)
        elif c >= 0:
            n += 1
    return total / R if R else 0.0


def ref_bpref(codes, R, N, rel, variant, extra, cutoff):
    codes = codes if cutoff is None else codes[:cutoff]
    cap, total, n = R + extra, 0.0, 0
    for c in codes:
        if 0 <= c < rel:
            n += 1
        elif c >= rel:
            if variant == "paper":
                total += 1 - min(n, cap) / cap
            else:
                total += 1 - min(n, cap) / min(cap, N) if n else 1.0
    return total / R if R else 0.0


def ref_rankeff(codes, R, N, rel, cutoff):
    codes = codes if cutoff is None else codes[:cutoff]
    total, n = 0.0, 0
    for c in codes:
        if 0 <= c < rel:
            n += 1
        elif c >= rel:
            below = N - n  # retrieved below + unretrieved (incl. past the cut-off)
            total += below / N if N else 1.0
    return total / R if R else 0.0


CODE = st.sampled_from([POOLED_UNJUDGED, UNPOOLED, 0, 0, 1, 2])
ROW = st.tuples(st.lists(CODE, max_size=25), st.integers(0, 4), st.integers(0, 4))


def _matrix(rows, rel):
    """Padded code matrix, R and N per row (unretrieved relevant/nonrelevant docs added as extras)."""
    depth = max([len(c) for c, _, _ in rows] + [1])
    codes = np.full((len(rows), depth), PAD, dtype=np.int32)
    R, N = [], []
    for i, (c, extra_r, extra_n) in enumerate(rows):
        codes[i, : len(c)] = c
        R.append(sum(x >= rel for x in c) + extra_r)
        N.append(sum(0 <= x < rel for x in c) + extra_n)
    return codes, np.array(R), np.array(N)


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(
    rows=st.lists(ROW, min_size=1, max_size=6),
    rel=st.integers(0, 2),
    cutoff=st.one_of(st.none(), st.integers(1, 30)),
    p=st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1)),
)
def test_kernels_match_references(rows, rel, cutoff, p):
    codes, R, N = _matrix(rows, rel)
    cut = codes if cutoff is None else codes[:, :cutoff]
    for variant in kernels.INDUCED_VARIANTS:
        got = kernels.induced_ap(codes, R, rel, variant, cutoff)
        want = [ref_indap(c, r, rel, variant, cutoff) for (c, _, _), r in zip(rows, R, strict=True)]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    got = kernels.subcollection_ap(codes, R, p, rel, cutoff)
    want = [ref_subap(c, r, rel, p, cutoff) for (c, _, _), r in zip(rows, R, strict=True)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    for variant in kernels.BPREF_VARIANTS:
        for extra in (0, 10):
            got = kernels.bpref(cut, R, N, rel, variant, extra)
            want = [ref_bpref(c, r, n, rel, variant, extra, cutoff) for (c, _, _), r, n in zip(rows, R, N, strict=True)]
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    got = kernels.rank_effectiveness(cut, R, N, rel)
    want = [ref_rankeff(c, r, n, rel, cutoff) for (c, _, _), r, n in zip(rows, R, N, strict=True)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@FAST
@given(
    rows=st.lists(ROW, min_size=1, max_size=6),
    cutoff=st.one_of(st.none(), st.integers(1, 30)),
    p=st.lists(st.floats(0, 1), min_size=6, max_size=6),
)
def test_subap_limits_and_monotonicity(rows, cutoff, p):
    """p = 1 / p = 0 are indAP pool / original bit for bit; per-row p works; subAP falls as p grows."""
    codes, R, _ = _matrix(rows, 1)
    p_rows = np.array(p[: len(rows)])
    np.testing.assert_array_equal(
        kernels.subcollection_ap(codes, R, 1.0, 1, cutoff), kernels.induced_ap(codes, R, 1, "pool", cutoff)
    )
    np.testing.assert_array_equal(
        kernels.subcollection_ap(codes, R, 0.0, 1, cutoff), kernels.induced_ap(codes, R, 1, "original", cutoff)
    )
    mixed = kernels.subcollection_ap(codes, R, p_rows, 1, cutoff)
    for i in range(len(rows)):
        alone = kernels.subcollection_ap(codes[i : i + 1], R[i : i + 1], p_rows[i], 1, cutoff)
        assert mixed[i] == pytest.approx(alone[0], abs=1e-14)
    lower = kernels.subcollection_ap(codes, R, np.minimum(p_rows + 0.25, 1.0), 1, cutoff)
    assert np.all(lower <= mixed + 1e-12)


@settings(max_examples=200, deadline=None)
@given(m=st.integers(1, 40), nd=st.integers(0, 60), p=st.floats(0, 1), limit=st.one_of(st.none(), st.integers(1, 80)))
def test_binomial_inverse_expectation_both_methods(m, nd, p, limit):
    want = sum(
        math.comb(nd, i) * p**i * (1 - p) ** (nd - i) / (m + i)
        for i in range(nd + 1)
        if limit is None or m + i <= limit
    )
    got = kernels.binomial_inverse_expectation(np.array([m]), np.array([nd]), np.array([p]), limit)[0]
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)
    if 0 < p < 1 and (limit is None or m <= limit):
        a = kernels._binomial_recurrence(np.array([m]), np.array([nd]), np.array([p]), np.array([0]), limit)
        b = kernels._binomial_direct(np.array([m]), np.array([nd]), np.array([p]), limit)
        assert a[0] == pytest.approx(want, rel=1e-12, abs=1e-15)
        assert b[0] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_binomial_inverse_expectation_long_rankings():
    """No overflow for long rankings: C(20000, 10000) has ~6000 digits. Both methods agree, and the value
    lies between 1/(m+nd) and 1/m; for large nd it approaches 1/(m + nd·p)."""
    m = np.array([1, 5, 100, 3, 7, 2000])
    nd = np.array([5000, 20000, 3000, 0, 12000, 8000])
    p = np.array([0.5, 0.01, 0.999, 0.3, 0.73, 0.5])
    a = kernels._binomial_recurrence(m, nd, *np.unique(p, return_inverse=True), None)
    b = kernels._binomial_direct(m, nd, p, None)
    # the log-space terms carry ~eps·lgamma(nd) relative error, the recurrence ~eps·sqrt(nd)
    np.testing.assert_allclose(a, b, rtol=1e-10)
    assert np.all((a >= 1 / (m + nd)) & (a <= 1 / m))
    np.testing.assert_allclose(a[[0, 4]], 1 / (m[[0, 4]] + nd[[0, 4]] * p[[0, 4]]), rtol=1e-3)
    # m = 1 has a closed form: E[1/(1+X)] = (1 − (1−p)^(nd+1)) / ((nd+1)·p)
    first = np.array([0])
    closed = (1 - 0.5**5001) / (5001 * 0.5)
    assert a[first][0] == pytest.approx(closed, rel=1e-14)
    assert b[first][0] == pytest.approx(closed, rel=1e-11)
    # the public function: exact limits, and the choice of method changes nothing beyond rounding
    full = kernels.binomial_inverse_expectation(np.r_[m, 4, 4], np.r_[nd, 10, 10], np.r_[p, 0.0, 1.0])
    np.testing.assert_allclose(full[:6], a, rtol=1e-10)
    assert full[6] == 1 / 4 and full[7] == 1 / 14


def test_binomial_inverse_expectation_rejects_bad_input():
    with pytest.raises(ValueError, match="p must lie in"):
        kernels.binomial_inverse_expectation(np.array([1]), np.array([2]), np.array([1.5]))
    with pytest.raises(ValueError, match="m must be >= 1"):
        kernels.binomial_inverse_expectation(np.array([0]), np.array([2]), np.array([0.5]))
    with pytest.raises(ValueError, match="p must lie in"):
        kernels.subcollection_ap(np.zeros((1, 2), np.int32), np.array([1]), np.nan)
    with pytest.raises(ValueError, match="variant='x'.*pool, original"):
        kernels.induced_ap(np.zeros((1, 2), np.int32), np.array([1]), variant="x")
    with pytest.raises(ValueError, match="rel_level"):
        kernels.bpref(np.zeros((1, 2), np.int32), np.array([1]), np.array([1]), rel_level=-1)


def test_kernels_on_empty_input():
    empty = np.zeros((0, 0), dtype=np.int32)
    none = np.zeros(0, dtype=np.int64)
    assert kernels.induced_ap(empty, none).shape == (0,)
    assert kernels.subcollection_ap(empty, none, 0.5).shape == (0,)
    assert kernels.bpref(empty, none, none).shape == (0,)
    assert kernels.rank_effectiveness(empty, none, none).shape == (0,)
    pad_only = np.full((2, 3), PAD, dtype=np.int32)
    np.testing.assert_array_equal(kernels.subcollection_ap(pad_only, np.array([1, 0]), 0.5), [0.0, 0.0])


# ---------------------------------------------------------------------------------------------------
# properties from the papers
# ---------------------------------------------------------------------------------------------------
@FAST
@given(data=st.data())
def test_rankeff_swap(data):
    """SWAP ([AG08] App.): swapping a retrieved relevant document with a judged nonrelevant one ranked
    above it strictly increases RankEff."""
    codes = data.draw(st.lists(st.sampled_from([POOLED_UNJUDGED, UNPOOLED, 0, 1]), min_size=2, max_size=30))
    rel_pos = [i for i, c in enumerate(codes) if c == 1]
    non_pos = [i for i, c in enumerate(codes) if c == 0]
    pairs = [(i, j) for i in non_pos for j in rel_pos if i < j]
    if not pairs:
        codes = [0] + codes + [1]
        pairs = [(0, len(codes) - 1)]
    i, j = data.draw(st.sampled_from(pairs))
    swapped = list(codes)
    swapped[i], swapped[j] = swapped[j], swapped[i]
    extra_r, extra_n = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    before, R, N = _matrix([(codes, extra_r, extra_n)], 1)
    after, _, _ = _matrix([(swapped, extra_r, extra_n)], 1)
    assert kernels.rank_effectiveness(after, R, N)[0] > kernels.rank_effectiveness(before, R, N)[0]


def test_bpref10_violates_swap_where_rankeff_does_not(spec):
    """D2 is D1 with r swapped above the 14th nonrelevant document: RankEff rises 0.30 → 0.35, bpref-10
    (both variants; R + 10 = 11 ≤ 13 nonrelevant above r either way) stays 0."""
    values = {}
    for topic in ("D1", "D2"):
        run, qrels = spec_topic(spec, topic)
        values[topic] = evaluate({"r": run}, qrels, ["RankEff", "Bpref10", "Bpref10(variant=paper)"])["value"].tolist()
    assert values["D1"][0] == pytest.approx(0.30, abs=1e-12)
    assert values["D2"][0] == pytest.approx(0.35, abs=1e-12)
    assert values["D1"][1:] == values["D2"][1:] == [0.0, 0.0]


@FAST
@given(
    codes=st.lists(st.sampled_from([POOLED_UNJUDGED, UNPOOLED, 0, 1]), max_size=25),
    extra=st.integers(0, 6),
    cutoff=st.one_of(st.none(), st.integers(1, 25)),
)
def test_rankeff_equals_bpref_when_r_equals_n(codes, extra, cutoff):
    """[AG08] §5: with R = N, RankEff = bpref (both variants: min(R, N) = R)."""
    retrieved_r = sum(c == 1 for c in codes)
    retrieved_n = sum(c == 0 for c in codes)
    size = max(retrieved_r, retrieved_n) + extra
    matrix, R, N = _matrix([(codes, size - retrieved_r, size - retrieved_n)], 1)
    assert R[0] == N[0]
    cut = matrix if cutoff is None else matrix[:, :cutoff]
    rankeff = kernels.rank_effectiveness(cut, R, N)[0]
    for variant in kernels.BPREF_VARIANTS:
        assert kernels.bpref(cut, R, N, 1, variant)[0] == pytest.approx(rankeff, abs=1e-12)


def test_rankeff_equals_bpref_on_topic_a(spec):
    run, qrels = spec_topic(spec, "A")
    values = evaluate({"r": run}, qrels, ["RankEff", "Bpref", "Bpref(variant=paper)"])["value"].tolist()
    assert values == pytest.approx([2 / 3] * 3, abs=1e-12)


@FAST
@given(
    rows=st.lists(ROW, min_size=1, max_size=5),
    rel=st.integers(0, 2),
    cutoff=st.one_of(st.none(), st.integers(1, 30)),
    p=st.floats(0, 1),
)
def test_every_value_in_unit_interval(rows, rel, cutoff, p):
    codes, R, N = _matrix(rows, rel)
    cut = codes if cutoff is None else codes[:, :cutoff]
    values = [kernels.induced_ap(codes, R, rel, v, cutoff) for v in kernels.INDUCED_VARIANTS]
    values.append(kernels.subcollection_ap(codes, R, p, rel, cutoff))
    values += [kernels.bpref(cut, R, N, rel, v, e) for v in kernels.BPREF_VARIANTS for e in (0, 10)]
    values.append(kernels.rank_effectiveness(cut, R, N, rel))
    for v in values:
        assert np.all((v >= 0.0) & (v <= 1.0 + 1e-15))


def test_bpref_bug_example():
    """The example of trec_eval's ``bpref_bug`` note: 5 judged documents retrieved, the first nonrelevant,
    then 4 relevant; 3 nonrelevant and 2 relevant not retrieved → bpref 0.5 (topic C)."""
    run = {"n1": 5.0, "r1": 4.0, "r2": 3.0, "r3": 2.0, "r4": 1.0}
    qrels = {**{f"r{i}": 1 for i in range(1, 7)}, **{f"n{i}": 0 for i in range(1, 5)}}
    assert _one("Bpref", run, qrels) == pytest.approx((4 * (3 / 4) + 2 * 0) / 6, abs=1e-12)
    assert OURS.calc_aggregate([Bpref], {"q": qrels}, {"q": run})[Bpref] == 0.5
