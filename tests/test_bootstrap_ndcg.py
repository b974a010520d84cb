"""Bootstrapped nDCG (``BootNDCG``), its summaries, and the naive upper bound (``NDCGUpper``).

Expected values come from the spec (``../shared/spec/test_vectors.json`` and MEASURES.md §5.3–5.4).
"""

from __future__ import annotations

import math

import ir_measures
import numpy as np
import pandas as pd
import pytest
from conftest import spec_cases, spec_topic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ir_incomplete
from ir_incomplete.bootstrap import add_bootstrap_intervals, bootstrap_ndcg
from ir_incomplete.data import Qrels, RankedLists, rank_runs
from ir_incomplete.grammar import parse
from ir_incomplete.kernels import ndcg as K
from ir_incomplete.measures.ndcg import BootNDCG, BootstrapMetric, NDCGUpper, statistic

F_VALUES = {  # topic F, k = 5 (spec §5.4 example 2)
    (0, 0): 0.569310023839,
    (0, 1): 0.672034616156,
    (1, 0): 0.71979883151,
    (0, 2): 0.774759208473,
    (2, 0): 0.870287639181,
    (1, 2): 0.925248016144,
    (2, 1): 0.973012231498,
}


def ranked_of(run, qrels, **kw):
    judged = Qrels.from_any(qrels, **kw)
    return rank_runs({"r": run}, judged), judged


def topic_f(spec):
    run, qrels = spec_topic(spec, "F")
    return ranked_of(run, qrels)


def replicates_with_prior(measure, ranked, judged, prior_row):
    """Replicates of ``measure`` with its prior replaced by ``prior_row`` for every row."""
    setup = measure.setup(ranked, judged)
    setup["prior"] = np.tile(np.asarray(prior_row, dtype=float), (ranked.n_rows, 1))
    return measure.replicates(ranked, judged, setup)


# ---------------------------------------------------------------------------------------------------
# measure objects
# ---------------------------------------------------------------------------------------------------
def test_canonical_strings_and_defaults():
    assert repr(BootNDCG) == "BootNDCG@10"
    assert repr(parse("BootNDCG(prior=pool+run)@10")) == "BootNDCG@10"
    assert parse("BootNDCG") == parse("BootNDCG@10")
    m = parse("BootNDCG(prior=pool,b=500,stat=p95,seed=7,gain=exp,order=docid,pool_scope=collection)@5")
    assert repr(m) == "BootNDCG(prior=pool,b=500,stat=p95,seed=7,gain=exp,order=docid,pool_scope=collection)@5"
    assert parse(repr(m)) == m
    assert repr(parse("BootNDCG(stat='p97.50')")) == "BootNDCG(stat='p97.5')@10"
    assert repr(parse("BootNDCG(stat='p95.0')")) == "BootNDCG(stat=p95)@10"
    assert parse("BootNDCG(seed=none)").get("seed") is None
    assert repr(parse("BootNDCG(seed=none)")) == "BootNDCG(seed=none)@10"
    assert repr(NDCGUpper) == "NDCGUpper@10" and repr(parse("NDCGUpper(gain=exp)@3")) == "NDCGUpper(gain=exp)@3"
    assert ir_measures.measures.registry["BootNDCG"] is BootNDCG


def test_compat_sets_defaults_that_explicit_values_override():
    compat = parse("BootNDCG(compat=ecir23)")
    assert (compat.get("order"), compat.get("pool_scope"), compat.get("gain")) == ("docid", "collection", "linear")
    # an explicit value equal to compat's default is not repeated; one that differs is kept
    assert repr(parse("BootNDCG(order=docid,pool_scope=collection,compat=ecir23)")) == "BootNDCG(compat=ecir23)@10"
    mixed = parse("BootNDCG(order=rank,compat=ecir23)")
    assert repr(mixed) == "BootNDCG(order=rank,compat=ecir23)@10" and mixed.get("order") == "rank"
    assert parse(repr(mixed)).get("order") == "rank"


@pytest.mark.parametrize(
    "text, param",
    [
        ("BootNDCG(stat=p101)", "stat"),
        ("BootNDCG(stat=foo)", "stat"),
        ("BootNDCG(prior=both)", "prior"),
        ("BootNDCG(b=0)", "b"),
        ("BootNDCG(seed=-1)", "seed"),
        ("BootNDCG(compat=ecir24)", "compat"),
        ("BootNDCG(order=score)", "order"),
        ("BootNDCG(pool_scope=all)", "pool_scope"),
        ("BootNDCG(gain=log)", "gain"),
        ("BootNDCG@0", "cutoff"),
        ("NDCGUpper(prior=pool)", "prior"),
    ],
)
def test_invalid_parameters_name_the_parameter(text, param):
    with pytest.raises(ValueError, match=repr(param)):
        parse(text)


# ---------------------------------------------------------------------------------------------------
# DCG machinery (naive lower bound) against the spec's nDCG vectors
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("topic, measure_string, expected", spec_cases({"nDCG"}))
def test_ndcg_kernel_matches_spec(spec, topic, measure_string, expected):
    run, qrels = spec_topic(spec, topic)
    ranked, judged = ranked_of(run, qrels)
    measure = parse(measure_string)
    cutoff = measure["cutoff"] if "cutoff" in measure.params else None
    gains = K.gain_table(judged.max_grade + 1, "exp" if "exp" in measure_string else "linear")
    idcg = ranked.per_topic(K.ideal_dcg(judged.grade_counts, cutoff, gains))
    value = K.ndcg(ranked.truncated(cutoff), idcg, gains)[0]
    assert value == pytest.approx(expected, abs=1e-12)


# ---------------------------------------------------------------------------------------------------
# NDCGUpper (spec §5.3)
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("topic, measure_string, expected", spec_cases({"naive_upper_nDCG"}))
def test_naive_upper_matches_spec(spec, topic, measure_string, expected):
    run, qrels = spec_topic(spec, topic)
    ranked, judged = ranked_of(run, qrels)
    assert parse(measure_string).compute(ranked, judged)[0] == pytest.approx(expected, abs=1e-12)


def test_naive_upper_named_examples(spec):
    ranked, judged = topic_f(spec)
    assert NDCGUpper(cutoff=5).compute(ranked, judged)[0] == pytest.approx(0.973012, abs=5e-7)
    run, qrels = spec_topic(spec, "A")
    ranked, judged = ranked_of(run, qrels)
    assert NDCGUpper(cutoff=5).compute(ranked, judged)[0] == pytest.approx(0.946902, abs=5e-7)
    # judged documents retrieved below k stay in the reservoir: A@3 (d1, d4:U, x1:NP) takes d3 and d6
    expected = (1 + 1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    assert NDCGUpper(cutoff=3).compute(ranked, judged)[0] == pytest.approx(expected, abs=1e-12)


def test_naive_upper_through_ir_measures(spec):
    run, qrels = spec_topic(spec, "F")
    assert ir_measures.calc_aggregate([parse("NDCGUpper@5")], qrels, run)[parse("NDCGUpper@5")] == pytest.approx(
        0.973012231497734, abs=1e-12
    )


# ---------------------------------------------------------------------------------------------------
# priors (spec §5.4 example 1; test vectors 'bootstrap_prior')
# ---------------------------------------------------------------------------------------------------
def _vector(spec, name, **params):
    hits = [
        e for e in spec["expected"] if e["measure"] == name and all(e["params"].get(k) == v for k, v in params.items())
    ]
    assert len(hits) == 1, (name, params)
    return hits[0]["value"]


@pytest.mark.parametrize("kind", ["run", "pool", "pool+run"])
def test_prior_kernel_reproduces_vector_with_levels_0_to_3(spec, kind):
    expected = _vector(spec, "bootstrap_prior", kind=kind, pool_scope="topic")
    expected = np.array([expected[str(level)] for level in range(4)])
    run_counts, pool_counts = np.array([[1, 1, 1, 0]]), np.array([[3, 2, 2, 0]])  # F, top 5: a(2) c(0) b(1)
    run = K.count_prior(run_counts, np.array([3]))
    pool = K.count_prior(pool_counts, np.array([7]))
    prior = {"run": run, "pool": pool, "pool+run": (run + pool) / 2}[kind][0]
    np.testing.assert_allclose(prior, expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("kind", ["run", "pool", "pool+run"])
def test_measure_prior_models_the_topics_grades(spec, kind):
    """Decision D12: levels 0 .. the topic's highest grade (2 for F), so the vector's level-3 floor drops."""
    expected = _vector(spec, "bootstrap_prior", kind=kind, pool_scope="topic")
    expected = np.array([expected[str(level)] for level in range(3)])
    ranked, judged = topic_f(spec)
    prior = BootNDCG(prior=kind, cutoff=5).setup(ranked, judged)["prior"][0]
    np.testing.assert_allclose(prior, expected / expected.sum(), rtol=0, atol=1e-14)


def test_collection_wide_pool_prior(spec):
    run, qrels = spec_topic(spec, "F")
    qrels["q2"] = {"p": 3, "q": 0, "r": 0, "s": 0}
    ranked, judged = ranked_of(run, qrels)
    pool = BootNDCG(prior="pool", pool_scope="collection", cutoff=5).setup(ranked, judged)["prior"][0]
    np.testing.assert_allclose(pool, [6 / 11, 2 / 11, 2 / 11, 1 / 11], rtol=0, atol=1e-15)
    mixed = BootNDCG(pool_scope="collection", cutoff=5).setup(ranked, judged)["prior"][0]
    np.testing.assert_allclose(mixed, [0.439394, 0.257576, 0.257576, 0.045455], rtol=0, atol=5e-7)
    compat = BootNDCG(compat="ecir23", cutoff=5).setup(ranked, judged)["prior"][0]
    np.testing.assert_array_equal(compat, mixed)


def test_all_top_k_unjudged(spec):
    """Spec §5.4 example 5: run x1, x2, x3 against F's qrels at k = 3."""
    _, qrels = spec_topic(spec, "F")
    ranked, judged = ranked_of({"q": {"x1": 3, "x2": 2, "x3": 1}}, qrels)
    run_prior = BootNDCG(prior="run", cutoff=3).setup(ranked, judged)["prior"][0]
    np.testing.assert_allclose(run_prior, np.array([3, 2, 2]) / 7, rtol=0, atol=1e-15)  # D13: pool prior
    compat = BootNDCG(prior="run", compat="ecir23", cutoff=3)
    np.testing.assert_array_equal(compat.setup(ranked, judged)["prior"][0], [1.0, 0, 0, 0])
    np.testing.assert_array_equal(compat.replicates(ranked, judged), 0.0)
    assert BootNDCG(prior="run", stat="mean", cutoff=3).compute(ranked, judged)[0] > 0.2


# ---------------------------------------------------------------------------------------------------
# the distribution (test vectors 'bootstrap_exact_distribution'), degenerate priors, order
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["pool", "run", "pool+run"])
@pytest.mark.parametrize("order", ["docid", "rank"])
def test_empirical_pmf_matches_exact_pmf(spec, kind, order):
    exact = _vector(spec, "bootstrap_exact_distribution", kind=kind)
    ranked, judged = topic_f(spec)
    reps = BootNDCG(prior=kind, b=200_000, order=order, cutoff=5).replicates(ranked, judged)[0]
    values, counts = np.unique(np.round(reps, 9), return_counts=True)
    empirical = dict(zip(np.round(values, 6).tolist(), (counts / len(reps)).tolist(), strict=True))
    assert set(empirical) == {round(float(v), 6) for v in exact}
    for value, probability in exact.items():
        assert abs(empirical[round(float(value), 6)] - probability) <= 0.005, (value, probability)


def test_pool_prior_pmf_by_hand(spec):
    """The hand-derived table of spec §5.4 example 2 (per-topic pool prior)."""
    ranked, judged = topic_f(spec)
    reps = BootNDCG(prior="pool", b=200_000, cutoff=5).replicates(ranked, judged)[0]
    by_hand = {
        (0, 0): 9 / 49,
        (0, 1): 6 / 49,
        (1, 0): 10 / 49,
        (0, 2): 6 / 49,
        (2, 0): 6 / 49,
        (1, 2): 4 / 49,
        (2, 1): 8 / 49,
    }
    for pair, probability in by_hand.items():
        share = np.mean(np.abs(reps - F_VALUES[pair]) < 1e-9)
        assert abs(share - probability) <= 0.005, pair
    assert reps.mean() == pytest.approx(0.769579, abs=0.002)


def test_degenerate_priors_give_the_naive_bounds(spec):
    ranked, judged = topic_f(spec)
    measure = BootNDCG(cutoff=5, b=50)
    lower = K.ndcg(
        ranked.truncated(5), ranked.per_topic(K.ideal_dcg(judged.grade_counts, 5, K.gain_table(3))), K.gain_table(3)
    )
    zero = replicates_with_prior(measure, ranked, judged, [1, 0, 0])
    np.testing.assert_array_equal(zero, lower[0])
    assert zero[0, 0] == pytest.approx(0.569310, abs=5e-7)
    top = replicates_with_prior(measure, ranked, judged, [0, 0, 1])
    np.testing.assert_array_equal(top, NDCGUpper(cutoff=5).compute(ranked, judged)[0])
    assert top[0, 0] == pytest.approx(0.973012, abs=5e-7)


def test_docid_order_versus_rank_order(spec):
    """Spec §5.4 example 3: u1 renamed z1 (still rank 2); π = δ_top, so the reservoir {2, 1} runs out."""
    run, qrels = spec_topic(spec, "F")
    run["q"]["z1"] = run["q"].pop("u1")
    ranked, judged = ranked_of(run, qrels)
    docid = replicates_with_prior(BootNDCG(order="docid", cutoff=5, b=20), ranked, judged, [0, 0, 1])
    rank = replicates_with_prior(BootNDCG(cutoff=5, b=20), ranked, judged, [0, 0, 1])
    assert np.unique(docid).tolist() == [pytest.approx(0.925248, abs=5e-7)]
    assert np.unique(rank).tolist() == [pytest.approx(0.973012, abs=5e-7)]
    ecir = replicates_with_prior(BootNDCG(compat="ecir23", cutoff=5, b=20), ranked, judged, [0, 0, 0, 1])
    assert np.unique(ecir).tolist() == [pytest.approx(0.925248, abs=5e-7)]


def test_order_docid_needs_document_ids(spec):
    ranked, judged = topic_f(spec)
    bare = RankedLists(
        ranked.codes, ranked.lengths, ranked.run_of_row, ranked.topic_of_row, ranked.run_names, ranked.qrels
    )
    with pytest.raises(ValueError, match="order=docid"):
        BootNDCG(order="docid", cutoff=5).compute(bare, judged)


# ---------------------------------------------------------------------------------------------------
# point estimate and percentiles (test vectors 'bootstrap_mode', 'percentile')
# ---------------------------------------------------------------------------------------------------
def _most_likely_reference(values):
    """The spec's two-pass 20-bin rule, written out with plain Python lists."""
    borders = [
        0.05,
        0.1,
        0.15,
        0.2,
        0.25,
        0.3,
        0.35,
        0.4,
        0.45,
        0.5,
        0.55,
        0.6,
        0.65,
        0.7,
        0.75,
        0.8,
        0.85,
        0.9,
        0.95,
        1.0,
    ]

    def densest(points):
        lo, hi = min(points), max(points)
        if hi - lo <= 1e-4:
            return list(points)
        bins = {}
        for p in points:
            z = (p - lo) / (hi - lo)
            border = next(b for b in borders if z <= b)
            bins.setdefault(border, []).append(p)
        most = max(len(v) for v in bins.values())
        return [p for v in bins.values() if len(v) == most for p in v]

    return max(densest(densest(list(values))))


def test_mode_vectors(spec):
    cases = [(e["params"]["values"], e["value"]) for e in spec["expected"] if e["measure"] == "bootstrap_mode"]
    assert len(cases) == 5
    for values, expected in cases:
        assert K.most_likely(np.array(values)) == expected
        assert _most_likely_reference(values) == expected


def test_mode_agrees_with_the_rule_on_random_lists():
    rng = np.random.default_rng(2023)
    rows = []
    for i in range(300):
        n = int(rng.integers(1, 40))
        values = rng.random(n) if i % 3 else rng.integers(0, 6, n) / 5.0
        assert K.most_likely(values) == _most_likely_reference(values.tolist())
        rows.append(rng.choice([0.1, 0.25, 0.3, 0.7, 0.71], 25))
    matrix = np.array(rows)
    np.testing.assert_array_equal(K.most_likely(matrix), [_most_likely_reference(r.tolist()) for r in matrix])


def test_percentile_vectors(spec):
    cases = [
        (e["params"]["values"], e["params"]["q"], e["value"]) for e in spec["expected"] if e["measure"] == "percentile"
    ]
    assert len(cases) == 3
    for values, q, expected in cases:
        assert K.percentile(np.array(values), 100 * q) == pytest.approx(expected, abs=1e-15)
    assert K.percentile(np.array([0, 0.25, 0.5, 1]), 95) == pytest.approx(0.925, abs=1e-15)


def test_percentile_and_median_equal_numpy_bit_for_bit():
    rng = np.random.default_rng(5)
    for _ in range(100):
        values = rng.random((3, int(rng.integers(1, 50))))
        for q in (0, 5, 50, 75, 90, 95, 97.5, 100, float(rng.random() * 100)):
            np.testing.assert_array_equal(K.percentile(values, q), np.percentile(values, q, axis=1))
        np.testing.assert_array_equal(K.median(values), np.median(values, axis=1))


def test_stat_picks_the_statistic_of_the_replicates(spec):
    ranked, judged = topic_f(spec)
    reps = BootNDCG(cutoff=5).replicates(ranked, judged)
    assert BootNDCG(cutoff=5).compute(ranked, judged)[0] == K.most_likely(reps[0])
    assert BootNDCG(cutoff=5, stat="mean").compute(ranked, judged)[0] == reps[0].mean()
    assert BootNDCG(cutoff=5, stat="median").compute(ranked, judged)[0] == np.median(reps[0])
    assert BootNDCG(cutoff=5, stat="p95").compute(ranked, judged)[0] == np.percentile(reps[0], 95)
    assert BootNDCG(cutoff=5, stat="p97.5").compute(ranked, judged)[0] == np.percentile(reps[0], 97.5)
    # the exact pool+run pmf: P(0.569310) = 0.145 and P(< 0.719799) = 0.263, so p5 is the lower bound
    assert BootNDCG(cutoff=5, stat="p5").compute(ranked, judged)[0] == pytest.approx(0.569310, abs=5e-7)
    assert BootNDCG(cutoff=5, stat="p95").compute(ranked, judged)[0] == pytest.approx(0.973012, abs=5e-7)
    # most likely value: P(0.719799) = 0.214 beats P(0.973012) = 0.192 (b large enough to tell them apart)
    assert BootNDCG(cutoff=5, b=20_000).compute(ranked, judged)[0] == pytest.approx(0.719799, abs=5e-7)


# ---------------------------------------------------------------------------------------------------
# [FGPH] Table 1 (exp gain)
# ---------------------------------------------------------------------------------------------------
def test_seed_paper_table_1_with_exp_gain():
    gains = K.gain_table(4, "exp")
    # row 1: ranking [grade 1, unjudged whose true grade is 2]
    actual = K.ndcg(np.array([[1, 2]]), K.ideal_dcg(np.array([[0, 1, 1, 0]]), 2, gains), gains)[0]
    assert actual == pytest.approx(0.796708, abs=5e-7) and round(actual, 2) == 0.80
    rbp_upper = K.ndcg(np.array([[1, 3]]), K.ideal_dcg(np.array([[0, 1, 0, 1]]), 2, gains), gains)[0]
    assert rbp_upper == pytest.approx(0.709810, abs=5e-7) and round(rbp_upper, 2) == 0.71
    linear = K.gain_table(4)
    assert round(K.ndcg(np.array([[1, 2]]), K.ideal_dcg(np.array([[0, 1, 1, 0]]), 2, linear), linear)[0], 2) == 0.86
    # row 2: [unjudged, grade 1], nothing left in the reservoir: lower = upper = every replicate
    run, qrels = {"q": {"u": 2.0, "a": 1.0}}, {"q": {"a": 1}}
    ranked, judged = ranked_of(run, qrels)
    lower = K.ndcg(ranked.truncated(2), ranked.per_topic(K.ideal_dcg(judged.grade_counts, 2, gains)), gains)[0]
    upper = NDCGUpper(gain="exp", cutoff=2).compute(ranked, judged)[0]
    boot = BootNDCG(gain="exp", cutoff=2, b=100).replicates(ranked, judged)
    assert lower == upper == pytest.approx(1 / math.log2(3), abs=1e-15) and round(upper, 2) == 0.63
    np.testing.assert_array_equal(boot, upper)
    # guaranteed lower: DCG(unjudged = 0) / DCG(k × maximum grade)
    guaranteed = K.dcg(np.array([[1, -1]]), gains)[0] / K.dcg(np.array([[3, 3]]), gains)[0]
    assert guaranteed == pytest.approx(0.087592, abs=5e-7) and round(guaranteed, 2) == 0.09
    # with exp gain the bootstrap samples 2^g - 1: F@5 under δ_top
    # (2^2-1 + (2^1-1)/log2 6) / (3 + 3/log2 3 + 1/2 + 1/log2 5) = naive lower with exp gain
    ranked, judged = ranked_of(*_f_like())
    exp_lower = BootNDCG(gain="exp", cutoff=5, b=10)
    zero = replicates_with_prior(exp_lower, ranked, judged, [1, 0, 0])
    assert zero[0, 0] == pytest.approx(0.5815871360157758, abs=1e-12)  # nDCG(dcg='exp-log2')@5 of F


def _f_like():
    qrels = {"q": {"a": 2, "b": 1, "c": 0, "d": 0, "e": 2, "f": 1, "g": 0}}
    run = {"q": {"a": 10, "u1": 9, "c": 8, "u2": 7, "b": 6, "e": 5, "u3": 4, "d": 3}}
    return run, qrels


# ---------------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------------
@st.composite
def judged_world(draw):
    n_topics = draw(st.integers(1, 3))
    qrels, runs = {}, {"r1": {}, "r2": {}}
    for t in range(n_topics):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 12)))]
        grades = draw(st.lists(st.integers(-1, 3), min_size=len(docs), max_size=len(docs)))
        qrels[f"t{t}"] = dict(zip(docs, grades, strict=True))
        pool = docs + [f"x{i}" for i in range(draw(st.integers(0, 8)))]
        for name in runs:
            chosen = draw(st.lists(st.sampled_from(pool), unique=True, max_size=len(pool)))
            if chosen:
                runs[name][f"t{t}"] = {d: float(len(chosen) - i) for i, d in enumerate(chosen)}
    return runs, qrels


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    world=judged_world(),
    k=st.integers(1, 8),
    prior=st.sampled_from(["pool", "run", "pool+run"]),
    gain=st.sampled_from(["linear", "exp"]),
    order=st.sampled_from(["rank", "docid"]),
    compat=st.sampled_from([None, "ecir23"]),
)
def test_replicates_lie_between_the_naive_bounds(world, k, prior, gain, order, compat):
    runs, qrels = world
    runs = {n: r for n, r in runs.items() if r}
    if not runs:
        return
    judged = Qrels.from_any(qrels)
    ranked = rank_runs(runs, judged)
    measure = BootNDCG(prior=prior, b=64, gain=gain, order=order, compat=compat, cutoff=k, seed=3)
    setup = measure.setup(ranked, judged)
    idcg_before = setup["idcg"].copy()
    reps = measure.replicates(ranked, judged, setup)
    details = measure.compute_details(ranked, judged)
    lower, upper = details["naive_lower"], details["naive_upper"]
    assert reps.shape == (ranked.n_rows, 64)
    assert (reps <= 1.0).all() and (reps >= 0.0).all()
    assert (reps >= lower[:, None]).all()
    assert (reps <= upper[:, None]).all()
    # the ideal DCG is that of the judgments, never changed by sampling
    gains = K.gain_table(max(judged.max_grade + 1, 4), gain)
    np.testing.assert_array_equal(setup["idcg"], idcg_before)
    np.testing.assert_array_equal(setup["idcg"], ranked.per_topic(K.ideal_dcg(judged.grade_counts, k, gains)))
    nonzero = setup["idcg"] > 0
    dcg = reps[nonzero] * setup["idcg"][nonzero, None]
    assert (dcg <= setup["idcg"][nonzero, None] * (1 + 1e-12)).all()
    # summaries are consistent
    assert (details["p5"] <= details["median"]).all() and (details["median"] <= details["p95"]).all()
    assert ((details["mode"] >= reps.min(axis=1)) & (details["mode"] <= reps.max(axis=1))).all()
    if compat is None and order == "rank":
        np.testing.assert_array_equal(upper, NDCGUpper(gain=gain, cutoff=k).compute(ranked, judged))


def test_fallback_never_assigns_more_documents_than_the_reservoir_holds():
    """One relevant document outside the top k and three unjudged documents: at most one gets grade 1."""
    qrels = {"q": {"r": 1, "n1": 0, "n2": 0}}
    run = {"q": {"u1": 5, "u2": 4, "u3": 3, "n1": 2, "r": 1}}
    ranked, judged = ranked_of(run, qrels)
    measure = BootNDCG(b=2000, cutoff=4)
    reps = replicates_with_prior(measure, ranked, judged, [0.0, 1.0])
    # every draw asks for grade 1; the first unjudged document in rank order gets it
    np.testing.assert_array_equal(reps, 1.0)
    reps = replicates_with_prior(measure, ranked, judged, [0.5, 0.5])
    values = set(np.round(np.unique(reps), 12).tolist())
    assert values == {0.0, 1.0, round(1 / math.log2(3), 12), round(0.5, 12)}


# ---------------------------------------------------------------------------------------------------
# seeds and independence of the batch
# ---------------------------------------------------------------------------------------------------
def _world():
    rng = np.random.default_rng(11)
    qrels, runs = {}, {f"run{r}": {} for r in range(4)}
    for t in range(6):
        docs = [f"t{t}d{i}" for i in range(30)]
        qrels[f"q{t}"] = {d: int(g) for d, g in zip(docs, rng.integers(0, 3, 30), strict=True) if rng.random() < 0.5}
        for name in runs:
            chosen = rng.choice(docs, 15, replace=False)
            runs[name][f"q{t}"] = {d: float(s) for d, s in zip(chosen, rng.random(15), strict=True)}
    return runs, qrels


def test_same_seed_is_bit_identical_whatever_is_evaluated_together():
    runs, qrels = _world()
    measure = BootNDCG(b=300)
    judged = Qrels.from_any(qrels)
    together = rank_runs(runs, judged)
    all_reps = measure.replicates(together, judged)
    for r, name in enumerate(runs):
        alone = rank_runs({"solo": runs[name]}, judged)
        mine = together.run_of_row == r
        np.testing.assert_array_equal(measure.replicates(alone, judged), all_reps[mine])
    # a subset of topics (other qrels) and a renamed run: the same replicates per (run, topic)
    sub_qrels = {q: qrels[q] for q in ("q4", "q1")}
    sub_judged = Qrels.from_any(sub_qrels)
    sub = rank_runs({"x": runs["run2"]}, sub_judged)
    sub_reps = measure.replicates(sub, sub_judged)
    for i, topic in enumerate(sub_judged.topic_ids[sub.topic_of_row]):
        row = np.flatnonzero((together.run_of_row == 2) & (judged.topic_ids[together.topic_of_row] == topic))
        np.testing.assert_array_equal(sub_reps[i], all_reps[row[0]])
    # the same for every summary
    np.testing.assert_array_equal(measure.compute(together, judged), measure.compute(together, judged))


def test_different_seeds_differ_and_seed_none_is_fresh():
    runs, qrels = _world()
    judged = Qrels.from_any(qrels)
    ranked = rank_runs(runs, judged)
    a = BootNDCG(b=300, seed=1).replicates(ranked, judged)
    b = BootNDCG(b=300, seed=2).replicates(ranked, judged)
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, BootNDCG(b=300, seed=1).replicates(ranked, judged))
    fresh1 = BootNDCG(b=300, seed=None).replicates(ranked, judged)
    fresh2 = BootNDCG(b=300, seed=None).replicates(ranked, judged)
    assert not np.array_equal(fresh1, fresh2)
    # fresh draws come from the same distribution: compare means over everything
    assert abs(fresh1.mean() - a.mean()) < 0.02


def test_runs_of_one_topic_share_uniforms():
    """Two identical runs give identical replicates (common random numbers), whatever their names."""
    runs, qrels = _world()
    judged = Qrels.from_any(qrels)
    ranked = rank_runs({"a": runs["run0"], "b": runs["run0"]}, judged)
    reps = BootNDCG(b=200).replicates(ranked, judged)
    np.testing.assert_array_equal(reps[ranked.run_of_row == 0], reps[ranked.run_of_row == 1])


# ---------------------------------------------------------------------------------------------------
# compat=ecir23 specifics
# ---------------------------------------------------------------------------------------------------
def test_compat_negative_grades_are_judged_zero_and_grade_4_is_never_sampled():
    qrels = {"q": {"a": 1, "m": -1, "r4": 4, "n": 0}}
    run = {"q": {"m": 3.0, "a": 2.0, "u": 1.0}}
    ranked, judged = ranked_of(run, qrels)
    default = BootNDCG(b=500, cutoff=3)
    compat = BootNDCG(b=500, cutoff=3, compat="ecir23")
    s_default, s_compat = default.setup(ranked, judged), compat.setup(ranked, judged)
    assert s_default["unjudged"][0].tolist() == [True, False, True]  # m is pooled but unjudged
    assert s_compat["unjudged"][0].tolist() == [False, False, True]  # m is a judged 0
    assert s_compat["prior"].shape[1] == 4 and s_default["prior"].shape[1] == 5
    # grade 4 (r4) is the only relevant document outside the top k: compat never samples it
    lower = K.ndcg(ranked.truncated(3), s_compat["idcg"], s_compat["gains"])[0]
    np.testing.assert_array_equal(compat.replicates(ranked, judged), lower)
    assert (default.replicates(ranked, judged) > lower).any()


# ---------------------------------------------------------------------------------------------------
# provider, ir_measures and the bootstrap API
# ---------------------------------------------------------------------------------------------------
def test_provider_yields_bootstrap_metrics(spec):
    run, qrels = spec_topic(spec, "F")
    measure = parse("BootNDCG@5")
    metrics = list(ir_measures.iter_calc([measure, parse("NDCGUpper@5")], qrels, run))
    boot = [m for m in metrics if m.measure == measure]
    assert len(boot) == 1 and isinstance(boot[0], BootstrapMetric)
    m = boot[0]
    assert m.query_id == "q" and m.value == m.mode == pytest.approx(0.719799, abs=5e-7)
    assert m.naive_lower == pytest.approx(0.569310, abs=5e-7) and m.naive_upper == pytest.approx(0.973012, abs=5e-7)
    assert m.p5 <= m.median <= m.p95 and m.naive_lower <= m.mean <= m.naive_upper
    upper = [x for x in metrics if x.measure == parse("NDCGUpper@5")]
    assert type(upper[0]) is ir_measures.Metric
    # ir_incomplete.evaluate gives the same point estimate
    table = ir_incomplete.evaluate({"F": run}, qrels, ["BootNDCG@5"])
    assert table["value"].tolist() == [m.value]


def test_bootstrap_ndcg_api(spec):
    run, qrels = spec_topic(spec, "F")
    qrels["empty"] = {"z": 1}
    result = bootstrap_ndcg(run, qrels, k=5, b=400, percentiles=(5, 50, 97.5))
    assert repr(result.measure) == "BootNDCG(b=400)@5"
    assert result.replicates.shape == (2, 400)
    assert list(result.replicates.index.names) == ["run", "query_id"]
    assert list(result.summary.columns) == [
        "run",
        "query_id",
        "mode",
        "mean",
        "median",
        "p5",
        "p50",
        "p97.5",
        "naive_lower",
        "naive_upper",
    ]
    row = result.summary.set_index("query_id").loc["q"]
    reps = result.replicates.loc[("run", "q")].to_numpy()
    assert row["mode"] == K.most_likely(reps) and row["p97.5"] == np.percentile(reps, 97.5)
    assert row["naive_upper"] == pytest.approx(0.973012, abs=5e-7)
    empty = result.summary.set_index("query_id").loc["empty"]
    assert (empty[["mode", "mean", "naive_lower", "naive_upper"]] == 0).all()
    # same seed, same replicates as the measure
    ranked, judged = ranked_of(run, qrels)
    np.testing.assert_array_equal(BootNDCG(b=400, cutoff=5).replicates(ranked, judged)[0], reps)
    with pytest.raises(ValueError, match="percentiles"):
        bootstrap_ndcg(run, qrels, percentiles=(120,))
    with pytest.raises(ValueError, match="'prior'"):
        bootstrap_ndcg(run, qrels, prior="both")


def test_statistic_rejects_unknown_stat():
    with pytest.raises(ValueError, match="stat"):
        statistic(np.zeros((1, 3)), "max")


def _experiment_inputs(spec):
    qrels, results = [], {"sysA": [], "sysB": []}
    for topic in ("A", "E", "F"):
        data = spec["topics"][topic]
        qrels += [(topic, d, g) for d, g in data["qrels"].items()]
        for d, s in data["run"].items():
            results["sysA"].append((topic, d, float(s)))
            results["sysB"].append((topic, d, -float(s)))
    qrels = pd.DataFrame(qrels, columns=["qid", "docno", "label"])
    results = {n: pd.DataFrame(v, columns=["qid", "docno", "score"]) for n, v in results.items()}
    return qrels, results


def test_pyterrier_experiment_and_intervals(spec):
    pt = pytest.importorskip("pyterrier")
    qrels, results = _experiment_inputs(spec)
    topics = pd.DataFrame({"qid": ["A", "E", "F"], "query": ["a", "e", "f"]})
    table = pt.Experiment(
        list(results.values()), topics, qrels, names=list(results), eval_metrics=["nDCG@5", "BootNDCG@5", "NDCGUpper@5"]
    )
    judged = Qrels.from_any(qrels)
    ranked = rank_runs(results, judged)
    reps = BootNDCG(cutoff=5).replicates(ranked, judged)
    per_system = [BootNDCG(cutoff=5).compute(ranked, judged)[ranked.run_of_row == r].mean() for r in range(2)]
    assert table.set_index("name")["BootNDCG@5"].tolist() == pytest.approx(per_system, abs=1e-12)

    wide = add_bootstrap_intervals(table, results, qrels)
    assert list(wide.columns).index("BootNDCG@5 p5") == list(wide.columns).index("BootNDCG@5") + 1
    means = np.array([reps[ranked.run_of_row == r].mean(axis=0) for r in range(2)])
    assert wide["BootNDCG@5 p5"].tolist() == pytest.approx(np.percentile(means, 5, axis=1).tolist(), abs=1e-12)
    assert wide["BootNDCG@5 p95"].tolist() == pytest.approx(np.percentile(means, 95, axis=1).tolist(), abs=1e-12)
    assert "nDCG@5 p5" not in wide.columns and list(table.columns) == [c for c in wide.columns if " p" not in c]

    long = pt.Experiment(
        list(results.values()), topics, qrels, names=list(results), perquery=True, eval_metrics=["nDCG@5", "BootNDCG@5"]
    )
    tall = add_bootstrap_intervals(long, list(results.values()), qrels, names=list(results))
    boot = tall[tall["measure"] == "BootNDCG@5"]
    assert boot["p5"].notna().all() and tall[tall["measure"] == "nDCG@5"]["p5"].isna().all()
    row = boot[(boot["name"] == "sysA") & (boot["qid"] == "F")].iloc[0]
    f_row = np.flatnonzero((ranked.run_of_row == 0) & (judged.topic_ids[ranked.topic_of_row] == "F"))[0]
    assert row["p95"] == np.percentile(reps[f_row], 95) and row["p5"] == np.percentile(reps[f_row], 5)
    assert (boot["p5"] <= boot["p95"]).all()
    with pytest.raises(ValueError, match="systems"):
        add_bootstrap_intervals(table, [results["sysA"]], qrels)
