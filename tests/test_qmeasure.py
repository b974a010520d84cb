"""Sakai's Q-measure (``Q``): hand-computed vectors (ties, cut-off, condensed list, β, norm) and the
relations to AP that Sakai states."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ir_incomplete  # noqa: F401
from ir_incomplete import evaluate
from ir_incomplete.grammar import parse

# R = 4 (a, d: grade 2; b, e: grade 1), f pooled but unjudged; ideal grades 2,2,1,1 -> cg* = 2,4,5,6,6,...
QRELS = {"q": {"a": 2, "b": 1, "c": 0, "d": 2, "e": 1, "f": -1}}
# a, c, b tie at 2.0: document id descending puts c, b, a -> x(NP) c(0) b(1) a(2) f(U) d(2) e(1)
RUN = {"q": {"x": 3.0, "a": 2.0, "c": 2.0, "b": 2.0, "f": 1.5, "d": 1.0, "e": 0.5}}

HAND = {
    # relevant ranks 3, 4, 6, 7: (C + cg)/(r + cg*) = 2/8, 5/10, 8/12, 10/13
    "Q": (2 / 8 + 5 / 10 + 8 / 12 + 10 / 13) / 4,
    "Q@4": (2 / 8 + 5 / 10) / 4,
    "Q@3": (2 / 8) / 4,
    "Q(norm=min)@3": (2 / 8) / 3,  # NTCIREVAL: divided by min(3, R)
    "Q(norm=min)@4": (2 / 8 + 5 / 10) / 4,
    "Q(norm=min)": (2 / 8 + 5 / 10 + 8 / 12 + 10 / 13) / 4,
    # beta = 2: (C + 2 cg)/(r + 2 cg*)
    "Q(beta=2)@4": ((1 + 2) / (3 + 10) + (2 + 6) / (4 + 12)) / 4,
    # beta = 0 is AP: C(r)/r
    "Q(beta=0)": (1 / 3 + 2 / 4 + 3 / 6 + 4 / 7) / 4,
    # condensed list c b a d e (x and f removed): relevant at 2, 3, 4, 5
    "Q(judged_only=True)": (2 / 6 + 5 / 8 + 8 / 10 + 10 / 11) / 4,
    "Q(judged_only=True)@3": (2 / 6 + 5 / 8) / 4,
}


@pytest.mark.parametrize("measure", list(HAND))
def test_hand_computed_vectors(measure):
    value = evaluate(RUN, QRELS, [measure])["value"].iloc[0]
    assert value == pytest.approx(HAND[measure], abs=1e-12)


def test_canonical_strings():
    assert repr(parse("Q")) == "Q"
    assert repr(parse("Q(beta=1.0,norm=R)@10")) == "Q@10"
    assert repr(parse("Q(beta=0.5,norm=min)@10")) == "Q(beta=0.5,norm=min)@10"
    with pytest.raises(ValueError, match="beta"):
        parse("Q(beta=-1)")
    with pytest.raises(ValueError, match="norm"):
        parse("Q(norm=k)")


def test_no_relevant_document_and_unanswered_query_give_zero():
    qrels = {"q": {"a": 0}, "r": {"b": 1}}
    table = evaluate({"q": {"a": 1.0}}, qrels, ["Q"])
    assert table["value"].tolist() == [0.0, 0.0]


def test_gain_is_the_grade_and_ideal_counts_every_judged_document():
    # one grade-3 document retrieved at rank 1, one grade-1 document not retrieved: R = 2, cg* = 3, 4
    qrels = {"q": {"a": 3, "b": 1}}
    value = evaluate({"q": {"a": 1.0}}, qrels, ["Q"])["value"].iloc[0]
    assert value == pytest.approx(((1 + 3) / (1 + 3)) / 2, abs=1e-15)


rankings = st.lists(st.integers(min_value=-1, max_value=1), min_size=1, max_size=25)


def _binary_case(grades, extra_relevant):
    qrels = {"q": {"zz": 0, **{f"d{i:02d}": g for i, g in enumerate(grades) if g >= 0}}}
    for j in range(extra_relevant):
        qrels["q"][f"z{j}"] = 1
    run = {"q": {f"d{i:02d}": float(len(grades) - i) for i in range(len(grades))}}
    return run, qrels


@settings(max_examples=60, deadline=None)
@given(rankings, st.integers(min_value=0, max_value=3))
def test_beta_to_zero_is_ap(grades, extra):
    run, qrels = _binary_case(grades, extra)
    table = evaluate(run, qrels, ["Q(beta=1e-12)", "AP"])
    q, ap = table["value"].tolist()
    assert q == pytest.approx(ap, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(rankings, st.integers(min_value=0, max_value=3))
def test_binary_q_relations_to_ap(grades, extra):
    """Binary grades: Q ≥ AP, equal when every retrieved relevant document is in the top R, and as β grows
    Q tends to (1/R)[Σ_{r≤R} isrel·C(r)/r + Σ_{r>R} isrel·C(r)/R] (Sakai 2004)."""
    run, qrels = _binary_case(grades, extra)
    table = evaluate(run, qrels, ["Q", "AP", "Q(beta=1e9)"])
    q, ap, q_large = table["value"].tolist()
    rel = [g == 1 for g in grades]
    big_r = sum(1 for g in qrels["q"].values() if g >= 1)
    assert q >= ap - 1e-15
    last_relevant = max((i + 1 for i, r in enumerate(rel) if r), default=0)
    if last_relevant <= big_r:
        assert q == pytest.approx(ap, abs=1e-15)
    limit = 0.0
    hits = 0
    for rank, r in enumerate(rel, start=1):
        if r:
            hits += 1
            limit += hits / rank if rank <= big_r else hits / big_r
    limit = limit / big_r if big_r else 0.0
    assert q_large == pytest.approx(limit, abs=1e-6)


def test_matches_a_direct_loop_on_real_graded_data(covid):
    """Q@100 on TREC-COVID round 1 (grades 0–2) against a plain loop over the definition."""
    qrels = covid["qrels"]
    names = sorted(covid["runs"])[:3]
    runs = {n: covid["runs"][n] for n in names}
    ours = evaluate(runs, qrels, ["Q@100"]).set_index(["run", "query_id"])["value"]
    judged = {}
    for q, d, g in zip(qrels["query_id"], qrels["doc_id"], qrels["relevance"], strict=True):
        judged.setdefault(str(q), {})[str(d)] = int(g)
    worst = 0.0
    for name in names:
        frame = runs[name]
        for qid, docs in judged.items():
            part = frame[frame["query_id"].astype(str) == qid]
            scores = part["score"].to_numpy(dtype=np.float32)
            ids = part["doc_id"].astype(str).tolist()
            ranking = [d for _, d in sorted(zip(scores.tolist(), ids, strict=True), key=lambda x: (-x[0], _neg(x[1])))]
            ideal = sorted((g for g in docs.values() if g >= 1), reverse=True)
            big_r = len(ideal)
            total = hits = cg = 0.0
            for rank, doc in enumerate(ranking[:100], start=1):
                grade = max(docs.get(doc, 0), 0)
                cg += grade
                if grade >= 1:
                    hits += 1
                    total += (hits + cg) / (rank + sum(ideal[:rank]))
            expected = total / big_r if big_r else 0.0
            worst = max(worst, abs(ours[(name, qid)] - expected))
    assert worst < 1e-12


def _neg(doc_id: str):
    """Sort key putting larger document ids first (trec_eval: ties by document id descending)."""
    return [-b for b in doc_id.encode()] + [math.inf]
