"""``BootRBP(gain=graded)``: the graded gain of ``RBPResidual(gain=graded)`` (grade / largest grade of the
qrels) in the bootstrap; the default (binary) values are unchanged bit for bit. And the predicted prior of
the bootstrap is used unfloored, as its docstring says."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ir_incomplete import evaluate, parse
from ir_incomplete.bootstrap import bootstrap_measure
from ir_incomplete.data import Qrels, rank_runs
from ir_incomplete.predictions import Predictions


def fixture():
    """5 topics, grades 0..3 (about half the documents judged, some pooled but unjudged), 3 runs with ties."""
    rng = np.random.default_rng(7)
    qrels, runs = [], {f"run{r}": [] for r in range(3)}
    for t in range(5):
        for d in range(30):
            u = rng.random()
            if u < 0.55:
                qrels.append((f"q{t}", f"d{d}", int(rng.integers(0, 4))))
            elif u < 0.65:
                qrels.append((f"q{t}", f"d{d}", -1))
        for r, rows in enumerate(runs.values()):
            docs = rng.permutation(30)[: 15 + 3 * r]
            scores = np.round(rng.random(len(docs)) * 4) / 4
            rows += [(f"q{t}", f"d{d}", float(s)) for d, s in zip(docs, scores, strict=True)]
    return (
        {k: pd.DataFrame(v, columns=["query_id", "doc_id", "score"]) for k, v in runs.items()},
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
    )


def complete(runs, qrels):
    """The qrels with every retrieved document judged (unjudged ones get seeded grades 0..3)."""
    rng = np.random.default_rng(11)
    known = {(q, d) for q, d, g in qrels.itertuples(index=False) if g >= 0}
    kept = qrels[qrels["relevance"] >= 0]
    extra = {(q, d) for run in runs.values() for q, d in zip(run["query_id"], run["doc_id"], strict=True)} - known
    added = pd.DataFrame(
        [(q, d, int(rng.integers(0, 4))) for q, d in sorted(extra)], columns=["query_id", "doc_id", "relevance"]
    )
    return pd.concat([kept, added], ignore_index=True)


@pytest.mark.parametrize("params, cut", [("p=0.8", ""), ("p=0.5", "@10"), ("p=0.95,rel=2", "@20"), ("p=0.3", "@3")])
def test_graded_equals_rbp_residual_graded_with_complete_judgments(params, cut):
    runs, qrels = fixture()
    full = complete(runs, qrels)
    boot, residual = f"BootRBP({params},gain=graded,b=30){cut}", f"RBPResidual({params},gain=graded){cut}"
    table = evaluate(runs, full, [boot, residual])
    ours = table[table["measure"] == repr(parse(boot))]["value"].to_numpy()
    theirs = table[table["measure"] == repr(parse(residual))]["value"].to_numpy()
    assert len(ours) == 15 and np.abs(ours - theirs).max() <= 1e-12
    assert np.abs(ours - evaluate(runs, full, [boot.replace("gain=graded", "gain=binary")])["value"]).max() > 0.05
    reps = bootstrap_measure(runs, full, boot).replicates.to_numpy()
    assert np.abs(reps - theirs[:, None]).max() <= 1e-12  # every replicate is the plain measure


def test_graded_replicates_are_completions_with_gain_grade_over_the_largest_grade():
    """One topic, grades up to 2, one unjudged document at rank 2: each replicate is the judged part plus
    (1 − p)·p·g/2 for a drawn grade g in 0..2, and every grade is drawn."""
    qrels = pd.DataFrame(
        [("q", "a", 2), ("q", "b", 1), ("q", "c", 0), ("q", "d", 2), ("q", "e", 1)],
        columns=["query_id", "doc_id", "relevance"],
    )
    run = pd.DataFrame({"query_id": "q", "doc_id": ["a", "u", "b"], "score": [3.0, 2.0, 1.0]})
    reps = bootstrap_measure(run, qrels, "BootRBP(p=0.5,gain=graded,b=400,prior=pool)").replicates.to_numpy()[0]
    judged = 0.5 * (2 / 2) + 0.5 * 0.25 * (1 / 2)
    drawn = np.round((reps - judged) / (0.5 * 0.5 * 0.5), 12)
    assert set(drawn) == {0.0, 1.0, 2.0}
    np.testing.assert_allclose(reps, judged + 0.125 * drawn, rtol=0, atol=1e-15)


# seeded values of the default (binary) BootRBP, computed before gain= existed, in evaluate's row order
# (run0: each measure's 5 topics, then run1, run2): they must not move
FROZEN_MEASURES = [
    "BootRBP(b=50,seed=3)@10",
    "BootRBP(p=0.5,stat=mean,b=40)",
    "BootRBP(rel=2,stat=p90,b=30,prior=pool)@20",
]
FROZEN = [
    0.44598323199999995, 0.6926258176000001, 0.7326258176, 0.6926258176000001, 0.8270898176,
    0.6348976135253906, 0.46422271728515624, 0.631402587890625, 0.4936248779296875, 0.8360870361328125,
    0.23017279325470724, 0.38620346187776, 0.7050348134727679, 0.6342406424494079, 0.728991965544448,
    0.8926258176, 0.7042425856000001, 0.7582770176, 0.4303179776, 0.7646258176,
    0.8606095314025879, 0.6703250885009766, 0.8071859359741211, 0.38575267791748047, 0.7370800971984863,
    0.4057585731987046, 0.7056416137347071, 0.5490466952857517, 0.5451704553187573, 0.631806454541425,
    0.823839232, 0.6990898176, 0.8506827776, 0.4427698176, 0.813353472,
    0.7488171100616455, 0.7375954151153564, 0.970272445678711, 0.3951923131942749, 0.9605964183807373,
    0.3797293490835973, 0.6711900531591155, 0.5702923927487449, 0.6930252305640352, 0.8196524222454851,
]  # fmt: skip


def test_default_is_binary_and_bit_identical():
    runs, qrels = fixture()
    table = evaluate(runs, qrels, FROZEN_MEASURES)
    assert table["value"].tolist() == FROZEN
    binary = [m.replace("BootRBP(", "BootRBP(gain=binary,") for m in FROZEN_MEASURES]
    assert [repr(parse(m)) for m in binary] == [repr(parse(m)) for m in FROZEN_MEASURES]
    assert evaluate(runs, qrels, binary)["value"].tolist() == FROZEN


def test_bad_gain_is_refused_with_the_choices():
    with pytest.raises(ValueError, match=r"gain.*binary, graded"):
        parse("BootRBP(gain=exp)")


def test_predicted_prior_is_used_without_the_floor():
    """Ten judged documents all predicted 0 and judged 0 (min_count=10: the query's own row, δ₀): an unjudged
    document predicted 0 has the prior (1, 0) exactly — grade 1 is never drawn, as documented."""
    qrels = pd.DataFrame(
        [("q", f"j{i}", 0) for i in range(10)] + [("q", "r", 1)], columns=["query_id", "doc_id", "relevance"]
    )
    predictions = pd.DataFrame(
        [("q", f"j{i}", 0) for i in range(10)] + [("q", "u", 0)], columns=["query_id", "doc_id", "relevance"]
    )
    run = pd.DataFrame({"query_id": "q", "doc_id": ["u", "r"], "score": [2.0, 1.0]})
    judged = Qrels.from_any(qrels)
    ranked = rank_runs({"x": run}, judged)
    measure = parse("BootAP(prior=predicted)")
    setup = measure.setup(ranked, judged, Predictions.from_any(predictions, judged))
    np.testing.assert_array_equal(setup["pred_cdf"], [[1.0, 1.0]])  # P(grade 0) = 1, P(grade 1) = 0
    assert not (np.diff(setup["cdf"][0]) == 0).any()  # the pool+run prior of the other positions is floored
