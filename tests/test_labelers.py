"""Simulated labelers: determinism, the stated confusion matrix, unjudged documents, Cohen's κ (against
scikit-learn), expected κ, retrieved documents, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ir_incomplete.labelers import (
    cohen_kappa,
    expected_kappa,
    judged_kappa,
    retrieved_documents,
    simulate_labels,
)

CONFUSION = [[0.85, 0.10, 0.05], [0.35, 0.35, 0.30], [0.15, 0.30, 0.55]]


def complete_qrels(n_queries=20, n_docs=500, seed=0):
    rng = np.random.default_rng(seed)
    rows = [(f"q{q}", f"d{d}", int(rng.choice(3, p=[0.7, 0.2, 0.1]))) for q in range(n_queries) for d in range(n_docs)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def test_same_seed_same_labels_whatever_the_order_of_documents():
    qrels = complete_qrels(5, 200)
    first = simulate_labels(qrels, CONFUSION, seed=3)
    again = simulate_labels(qrels.sample(frac=1.0, random_state=1), CONFUSION, seed=3)
    pd.testing.assert_frame_equal(first, again)
    docs = qrels[["query_id", "doc_id"]]
    shuffled = pd.concat([docs.iloc[::-1], docs.iloc[:50]])  # reversed, with duplicates
    pd.testing.assert_frame_equal(first, simulate_labels(qrels, CONFUSION, seed=3, docs=shuffled))
    other = simulate_labels(qrels, CONFUSION, seed=4)
    assert (other["relevance"] != first["relevance"]).mean() > 0.1
    assert list(first.columns) == ["query_id", "doc_id", "relevance", "human"]
    assert first[["query_id", "doc_id"]].equals(first[["query_id", "doc_id"]].sort_values(["query_id", "doc_id"]))


def test_labels_follow_the_confusion_matrix():
    qrels = complete_qrels()
    labels = simulate_labels(qrels, CONFUSION, seed=11)
    observed = pd.crosstab(labels["human"], labels["relevance"], normalize="index").to_numpy()
    # 10 000 documents: each row holds ≥ 1 000 draws, standard error ≤ 0.016
    np.testing.assert_allclose(observed, CONFUSION, atol=0.04)
    assert labels["human"].tolist() == qrels.sort_values(["query_id", "doc_id"])["relevance"].tolist()


def test_identity_confusion_copies_the_human_grades_and_unjudged_documents_are_grade_0():
    qrels = pd.DataFrame({"query_id": ["1", "1", "1", "2"], "doc_id": ["a", "b", "c", "a"], "relevance": [2, -1, 1, 0]})
    docs = pd.DataFrame({"query_id": ["1", "1", "1", "2", "2"], "doc_id": ["a", "b", "z", "a", "b"]})
    labels = simulate_labels(qrels, np.eye(3), seed=0, docs=docs)
    assert labels["doc_id"].tolist() == ["a", "b", "z", "a", "b"]
    assert labels["human"].tolist() == [2, 0, 0, 0, 0]  # b: −1 (pooled, unjudged); z, (2, b): not judged
    assert labels["relevance"].tolist() == [2, 0, 0, 0, 0]
    always_one = [[0, 1, 0], [0, 1, 0], [0, 1, 0]]
    assert set(simulate_labels(qrels, always_one, seed=0, docs=docs)["relevance"]) == {1}


@pytest.mark.parametrize(
    ("confusion", "match"),
    [
        ([[0.5, 0.4], [0.0, 1.0]], r"row 0 of the confusion matrix sums to 0.9"),
        ([[1.2, -0.2], [0.0, 1.0]], r"confusion\[0\]\[1\] = -0.2 is not a probability"),
        ([0.5, 0.5], "2-D matrix"),
        ([[1.0, 0.0], [0.0, 1.0]], r"document 'a' of query '1' has human grade 2, .* grades 0..1 only"),
    ],
)
def test_bad_confusion(confusion, match):
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [2]})
    with pytest.raises(ValueError, match=match):
        simulate_labels(qrels, confusion, seed=0)


def test_bad_seed_and_duplicate_judgments():
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "a"], "relevance": [1, 0]})
    with pytest.raises(TypeError, match="seed must be an integer"):
        simulate_labels(qrels.iloc[:1], CONFUSION, seed=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="judges document 'a' of query '1' twice"):
        simulate_labels(qrels, CONFUSION, seed=0)


# ---------------------------------------------------------------------------------------------------
# κ
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cohen_kappa_equals_sklearn(weights, seed):
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, 300)
    b = np.where(rng.random(300) < 0.5, a, rng.integers(0, 4, 300))
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(cohen_kappa_score(a, b, weights=weights), abs=1e-12)
    labels = [3, 0, 2, 1]
    assert cohen_kappa(a, b, labels=labels, weights=weights) == pytest.approx(
        cohen_kappa_score(a, b, labels=labels, weights=weights), abs=1e-12
    )
    subset = [0, 1]  # items with a label outside `labels` are left out, as sklearn does
    assert cohen_kappa(a, b, labels=subset, weights=weights) == pytest.approx(
        cohen_kappa_score(a, b, labels=subset, weights=weights), abs=1e-12
    )


def test_cohen_kappa_by_hand_and_bad_input():
    # 2×2 table [[2, 1], [0, 1]]: p_o = 3/4, p_e = (3·2 + 1·2)/16 = 1/2 → κ = 1/2
    assert cohen_kappa([0, 0, 0, 1], [0, 0, 1, 1]) == pytest.approx(0.5, abs=1e-15)
    assert cohen_kappa([1, 2, 0], [1, 2, 0]) == 1.0
    with pytest.raises(ValueError, match="weights='cubic'"):
        cohen_kappa([0, 1], [0, 1], weights="cubic")
    with pytest.raises(ValueError, match="same length"):
        cohen_kappa([0, 1], [0])
    with pytest.raises(ValueError, match="empty"):
        cohen_kappa([], [])


def test_expected_kappa():
    p = [0.75, 0.13, 0.12]
    assert expected_kappa(np.eye(3), p) == pytest.approx(1.0, abs=1e-15)
    assert expected_kappa([p, p, p], p) == pytest.approx(0.0, abs=1e-15)  # labels independent of the truth
    # by hand for two grades: J = [[0.8·0.9, 0.8·0.1], [0.2·0.3, 0.2·0.7]] = [[.72, .08], [.06, .14]]
    # p_o = 0.86, p_e = 0.8·0.78 + 0.2·0.22 = 0.668, κ = 0.192 / 0.332
    assert expected_kappa([[0.9, 0.1], [0.3, 0.7]], [0.8, 0.2]) == pytest.approx(0.192 / 0.332, abs=1e-12)
    qrels = complete_qrels(40, 500, seed=5)
    labels = simulate_labels(qrels, CONFUSION, seed=2)
    share = np.bincount(labels["human"], minlength=3)
    assert cohen_kappa(labels["human"], labels["relevance"]) == pytest.approx(
        expected_kappa(CONFUSION, share), abs=0.01
    )
    with pytest.raises(ValueError, match="3 non-negative proportions"):
        expected_kappa(CONFUSION, [0.5, 0.5])


def test_judged_kappa_uses_the_pairs_both_grade():
    qrels = pd.DataFrame({"query_id": ["1"] * 5, "doc_id": list("abcde"), "relevance": [0, 0, 0, 1, -1]})
    predicted = pd.DataFrame({"query_id": ["1"] * 5, "doc_id": list("abdez"), "relevance": [0, 0, 1, 1, 1]})
    # both grade a, b, d (e is −1 in the qrels, z unknown): human (0, 0, 1), predicted (0, 0, 1)
    assert judged_kappa(predicted, qrels) == 1.0
    predicted.loc[2, "relevance"] = 0
    assert judged_kappa(predicted, qrels) == pytest.approx(cohen_kappa([0, 0, 1], [0, 0, 0]), abs=1e-15)
    with pytest.raises(ValueError, match="share no judged"):
        judged_kappa(predicted.assign(query_id="2"), qrels)


# ---------------------------------------------------------------------------------------------------
# retrieved documents
# ---------------------------------------------------------------------------------------------------
def test_retrieved_documents_top_depth_in_trec_order():
    run_a = pd.DataFrame(
        {"query_id": ["1"] * 4 + ["2"], "doc_id": ["a", "b", "c", "d", "a"], "score": [3.0, 2.0, 2.0, 5.0, 1.0]}
    )
    run_b = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["e", "a"], "score": [9.0, 1.0]})
    # run A on query 1: d (5), a (3), then the tie b/c broken by doc id descending: c before b
    got = retrieved_documents({"A": run_a, "B": run_b}, depth=3)
    assert list(zip(got["query_id"], got["doc_id"], strict=True)) == [
        ("1", "a"),
        ("1", "c"),
        ("1", "d"),
        ("1", "e"),
        ("2", "a"),
    ]
    assert len(retrieved_documents({"A": run_a, "B": run_b}, depth=None)) == 6
    with pytest.raises(ValueError, match="depth=0"):
        retrieved_documents(run_a, depth=0)


def test_covid_labeler_kappa(covid):
    """The example's labeler on TREC-COVID: κ on the judged documents near the stated 0.42."""
    runs = {name: covid["runs"][name] for name in sorted(covid["runs"])[:20]}
    docs = retrieved_documents(runs, depth=100)
    labels = simulate_labels(covid["complete"], CONFUSION, seed=0, docs=docs)
    assert len(labels) == len(docs)
    judged = labels.merge(covid["complete"][["query_id", "doc_id"]], on=["query_id", "doc_id"])
    share = np.bincount(judged["human"], minlength=3)
    kappa = judged_kappa(labels, covid["complete"])
    assert kappa == pytest.approx(expected_kappa(CONFUSION, share), abs=0.03)
    assert 0.35 < kappa < 0.5
