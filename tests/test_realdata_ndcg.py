"""Bootstrapped nDCG and the naive bounds on real TREC-COVID round-1 runs (skipped without ../shared/data).

The round-1 qrels (a shallow pool) are the incomplete judgments; nDCG@10 on the complete qrels of topics
1–30 is the reference (what ``examples/bootstrap_covid.py`` prints).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import pytrec_per_query
from scipy.stats import kendalltau

import ir_incomplete  # noqa: F401  (registers the measures)
from ir_incomplete.data import Qrels, rank_runs
from ir_incomplete.kernels import ndcg as K
from ir_incomplete.measures.ndcg import BootNDCG, NDCGUpper


def naive_lower(ranked, judged, k=10):
    gains = K.gain_table(judged.max_grade + 1)
    return K.ndcg(ranked.truncated(k), ranked.per_topic(K.ideal_dcg(judged.grade_counts, k, gains)), gains)


def grid(ranked, judged, values):
    """``[runs × topics]`` of per-row values, 0 where a run does not answer a topic (ir_measures' default)."""
    out = np.zeros((len(ranked.run_names), judged.n_topics))
    out[ranked.run_of_row, ranked.topic_of_row] = values
    return out


@pytest.fixture(scope="module")
def covid_ranked(covid):
    round1 = Qrels.from_any(covid["qrels"])
    complete = Qrels.from_any(covid["complete"])
    return {
        "round1": round1,
        "complete": complete,
        "ranked": rank_runs(covid["runs"], round1),
        "ranked_complete": rank_runs(covid["runs"], complete),
    }


def test_naive_lower_kernel_equals_pytrec_eval(covid, covid_ranked):
    names = sorted(covid["runs"])[::6]  # 24 runs
    for qrels_key, ranked_key, frame in (
        ("round1", "ranked", covid["qrels"]),
        ("complete", "ranked_complete", covid["complete"]),
    ):
        judged, ranked = covid_ranked[qrels_key], covid_ranked[ranked_key]
        ours = naive_lower(ranked, judged)
        for name in names:
            expected = pytrec_per_query(frame, covid["runs"][name], {"ndcg_cut.10"})
            rows = np.flatnonzero(np.array(ranked.run_names)[ranked.run_of_row] == name)
            assert len(rows) == len(expected)
            for row in rows:
                qid = judged.topic_ids[ranked.topic_of_row[row]]
                assert ours[row] == pytest.approx(expected[qid]["ndcg_cut_10"], abs=1e-12), (name, qid)


def test_replicates_lie_between_the_bounds_on_real_runs(covid_ranked):
    judged, ranked = covid_ranked["round1"], covid_ranked["ranked"]
    lower = naive_lower(ranked, judged)
    upper = NDCGUpper.compute(ranked, judged)
    assert (upper >= lower).all() and (upper > lower).mean() > 0.5  # most top-10s hold unjudged documents
    for prior in ("pool", "run", "pool+run"):
        reps = BootNDCG(prior=prior).replicates(ranked, judged)
        assert (reps >= lower[:, None]).all() and (reps <= upper[:, None]).all() and (reps <= 1).all()


def test_bit_identical_whatever_is_evaluated_together(covid, covid_ranked):
    judged, ranked = covid_ranked["round1"], covid_ranked["ranked"]
    measure = BootNDCG(prior="pool+run", b=500)
    together = measure.replicates(ranked, judged)
    names = list(ranked.run_names)
    for name in names[::40]:
        alone = rank_runs({"renamed": covid["runs"][name]}, judged)
        mine = np.flatnonzero(ranked.run_of_row == names.index(name))
        np.testing.assert_array_equal(measure.replicates(alone, judged), together[mine])
    # fewer topics in the qrels: the remaining topics keep their replicates
    subset = covid["qrels"][covid["qrels"]["query_id"].isin(["3", "17", "29"])]
    sub_judged = Qrels.from_any(subset)
    name = names[7]
    sub = rank_runs({name: covid["runs"][name]}, sub_judged)
    sub_reps = measure.replicates(sub, sub_judged)
    for i, qid in enumerate(sub_judged.topic_ids[sub.topic_of_row]):
        row = np.flatnonzero((ranked.run_of_row == 7) & (judged.topic_ids[ranked.topic_of_row] == qid))[0]
        np.testing.assert_array_equal(sub_reps[i], together[row])


def test_against_the_complete_judgments(covid_ranked):
    """The numbers ``examples/bootstrap_covid.py`` prints (seed 42, b = 1000), as measured."""
    judged, ranked = covid_ranked["round1"], covid_ranked["ranked"]
    reference = grid(
        covid_ranked["ranked_complete"],
        covid_ranked["complete"],
        naive_lower(covid_ranked["ranked_complete"], covid_ranked["complete"]),
    )
    order = [list(covid_ranked["complete"].topic_ids).index(t) for t in judged.topic_ids]
    reference = reference[:, order]
    ref_system = reference.mean(axis=1)

    def score(values):
        per_query = grid(ranked, judged, values)
        system = per_query.mean(axis=1)
        return (float(np.sqrt(np.mean((system - ref_system) ** 2))), float(kendalltau(system, ref_system).statistic))

    measured = {
        "naive lower": score(naive_lower(ranked, judged)),
        "BootNDCG pool": score(BootNDCG(prior="pool").compute(ranked, judged)),
        "BootNDCG run": score(BootNDCG(prior="run").compute(ranked, judged)),
        "BootNDCG pool+run": score(BootNDCG.compute(ranked, judged)),
        "naive upper": score(NDCGUpper.compute(ranked, judged)),
    }
    expected = {  # (RMSE over systems, Kendall tau)
        "naive lower": (0.0197, 0.9456),  # tau 0.946 in the data README (pytrec_eval)
        "BootNDCG pool": (0.0338, 0.9310),
        "BootNDCG run": (0.0752, 0.8470),
        "BootNDCG pool+run": (0.0471, 0.9054),
        "naive upper": (0.3117, 0.2481),
    }
    for label, (rmse, tau) in expected.items():
        assert measured[label][0] == pytest.approx(rmse, abs=5e-5), label
        assert measured[label][1] == pytest.approx(tau, abs=5e-5), label
