"""``add_bootstrap_intervals`` on real ``pt.Experiment`` tables: systems paired by name, never by position
in a re-sorted table; the columns are what the docstring says they are."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ir_incomplete.bootstrap import add_bootstrap_intervals, bootstrap_ndcg

pt = pytest.importorskip("pyterrier", reason="python-terrier is not installed (extra 'pyterrier')")

TOPICS = pd.DataFrame({"qid": ["q1", "q2", "q3"], "query": ["masks", "vaccine", "long covid"]})
QRELS = pd.DataFrame(
    {
        "qid": ["q1"] * 6 + ["q2"] * 4 + ["q3"] * 3,
        "docno": ["a", "b", "c", "d", "e", "f", "a", "f", "g", "h", "h", "i", "j"],
        "label": [1, 0, 2, 2, 1, 0, 0, 1, 2, 1, 1, 0, 2],
    }
)
# "zeta" retrieves judged relevant documents, "alpha" mostly unjudged ones and skips q3: their intervals differ
ZETA = pd.DataFrame(
    {
        "qid": ["q1"] * 5 + ["q2"] * 4 + ["q3"] * 3,
        "docno": ["c", "d", "x1", "a", "y1", "g", "h", "x2", "f", "j", "x3", "h"],
        "score": [9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.5, 3.0, 2.0, 3.0, 2.0, 1.0],
    }
)
ALPHA = pd.DataFrame(
    {
        "qid": ["q1"] * 4 + ["q2"] * 3,
        "docno": ["u1", "u2", "b", "u3", "v1", "a", "v2"],
        "score": [4.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0],
    }
)
NAMES = ["zeta", "alpha"]  # given order; pt.Experiment's per-query rows come sorted: alpha, zeta
RESULTS = {"zeta": ZETA, "alpha": ALPHA}
MEASURE = "BootNDCG(b=400)@5"


def _systems():
    return [pt.Transformer.from_df(ZETA), pt.Transformer.from_df(ALPHA)]


def _experiment(**kwargs):
    return pt.Experiment(_systems(), TOPICS, QRELS, eval_metrics=["nDCG@5", MEASURE], names=NAMES, **kwargs)


def _truth():
    """Per-(run, query) replicates of the table's measure, straight from bootstrap_ndcg."""
    reps, summary, _ = bootstrap_ndcg(RESULTS, QRELS, k=5, b=400)
    return reps, summary


def test_per_query_list_with_names_pairs_by_name():
    table = _experiment(perquery=True)
    assert table["name"].drop_duplicates().tolist() == sorted(NAMES)  # the trap: not the given order
    out = add_bootstrap_intervals(table, _systems(), QRELS, topics=TOPICS, names=NAMES)
    _, summary = _truth()
    expected = summary.set_index(["run", "query_id"])
    boot = out[out["measure"] == MEASURE]
    assert len(boot) == 6 and boot["p5"].notna().all()
    for _, row in boot.iterrows():
        want = expected.loc[(row["name"], row["qid"])]
        assert row["p5"] == want["p5"] and row["p95"] == want["p95"], (row["name"], row["qid"])
        assert row["value"] == pytest.approx(want["mode"], abs=1e-12)
        assert row["p5"] <= row["p95"]
    # alpha does not answer q3: all replicates 0, so is its interval
    q3 = boot[(boot["name"] == "alpha") & (boot["qid"] == "q3")].iloc[0]
    assert (q3["p5"], q3["p95"], q3["value"]) == (0.0, 0.0, 0.0)
    # the same with systems as a dict
    by_dict = add_bootstrap_intervals(table, RESULTS, QRELS)
    pd.testing.assert_frame_equal(by_dict, out)


def test_per_query_list_without_names_is_refused():
    table = _experiment(perquery=True)
    with pytest.raises(ValueError, match=r"sorts per-query rows by name.*names="):
        add_bootstrap_intervals(table, _systems(), QRELS, topics=TOPICS)


def test_aggregate_list_pairs_in_given_order_and_columns_are_percentiles_of_the_mean():
    table = _experiment()
    assert table["name"].tolist() == NAMES
    out = add_bootstrap_intervals(table, _systems(), QRELS, topics=TOPICS)
    reps, _ = _truth()
    for name in NAMES:
        # M_r: the mean over the three evaluated queries of replicate r (alpha's q3 counts as 0)
        means = reps.loc[name].to_numpy().mean(axis=0)
        row = out[out["name"] == name].iloc[0]
        assert row[f"{MEASURE} p5"] == pytest.approx(np.percentile(means, 5), abs=1e-12)
        assert row[f"{MEASURE} p95"] == pytest.approx(np.percentile(means, 95), abs=1e-12)
        assert row[f"{MEASURE} p5"] <= row[f"{MEASURE} p95"]
    # names given explicitly, or a dict, give the same table
    pd.testing.assert_frame_equal(add_bootstrap_intervals(table, _systems(), QRELS, topics=TOPICS, names=NAMES), out)
    pd.testing.assert_frame_equal(add_bootstrap_intervals(table, RESULTS, QRELS), out)
    # the two systems really differ, so a swap could not go unnoticed
    assert out[f"{MEASURE} p95"].iloc[1] < out[f"{MEASURE} p5"].iloc[0]


def test_results_that_do_not_give_the_tables_values_are_refused():
    table = _experiment()
    swapped = {"zeta": ALPHA, "alpha": ZETA}
    with pytest.raises(ValueError, match=r"system 'zeta'.*not those of the table"):
        add_bootstrap_intervals(table, swapped, QRELS)
    long = _experiment(perquery=True)
    with pytest.raises(ValueError, match=r"on query"):
        add_bootstrap_intervals(long, _systems()[::-1], QRELS, topics=TOPICS, names=NAMES)
    with pytest.raises(ValueError, match="names"):
        add_bootstrap_intervals(long, _systems(), QRELS, topics=TOPICS, names=["zeta", "other"])
    with pytest.raises(ValueError, match="transformer: pass topics="):
        add_bootstrap_intervals(long, _systems(), QRELS, names=NAMES)


def test_stat_mean_value_is_the_mean_of_the_distribution_of_means():
    measure = "BootNDCG(b=400,stat=mean)@5"
    table = pt.Experiment(_systems(), TOPICS, QRELS, eval_metrics=[measure], names=NAMES)
    out = add_bootstrap_intervals(table, _systems(), QRELS, topics=TOPICS, percentiles=(0, 5, 95, 100))
    reps, _ = _truth()
    for name in NAMES:
        row = out[out["name"] == name].iloc[0]
        assert row[measure] == pytest.approx(reps.loc[name].to_numpy().mean(axis=0).mean(), abs=1e-12)
        assert row[f"{measure} p0"] <= row[measure] <= row[f"{measure} p100"]
        assert row[f"{measure} p0"] <= row[f"{measure} p5"] <= row[f"{measure} p95"] <= row[f"{measure} p100"]


def test_rounded_tables_are_accepted():
    table = _experiment(round=3)
    out = add_bootstrap_intervals(table, _systems(), QRELS, topics=TOPICS)
    exact = add_bootstrap_intervals(_experiment(), _systems(), QRELS, topics=TOPICS)
    np.testing.assert_array_equal(out[f"{MEASURE} p5"], exact[f"{MEASURE} p5"])
    long = _experiment(perquery=True, round=2)
    assert add_bootstrap_intervals(long, RESULTS, QRELS)["p95"].notna().sum() == 6


def test_a_table_without_bootndcg_is_an_error():
    aggregate = pd.DataFrame({"name": ["a", "b"], "map": [0.1, 0.2], "nDCG@10": [0.3, 0.4]})
    with pytest.raises(ValueError, match=r"no BootNDCG.*measure columns are \['map', 'nDCG@10'\].*BootNDCG@10"):
        add_bootstrap_intervals(aggregate, RESULTS, QRELS)
    per_query = pd.DataFrame({"name": ["a"], "qid": ["1"], "measure": ["AP"], "value": [0.5]})
    with pytest.raises(ValueError, match=r"no BootNDCG.*'measure' values are \['AP'\]"):
        add_bootstrap_intervals(per_query, RESULTS, QRELS)
