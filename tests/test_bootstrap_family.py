"""The bootstrap beyond nDCG (``BootAP``, ``BootP``, ``BootRBP``, ``BootQ``), ``prior=predicted`` (also for
``BootNDCG``), the calibration of predicted grades and intervals in ``evaluate`` tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_bootndcg_snapshot import fixture

import ir_incomplete  # noqa: F401
from ir_incomplete import evaluate
from ir_incomplete.bootstrap import bootstrap_measure, bootstrap_ndcg
from ir_incomplete.data import Qrels, rank_runs
from ir_incomplete.grammar import parse
from ir_incomplete.kernels import bootstrap as K
from ir_incomplete.measures.ndcg import topic_streams
from ir_incomplete.predictions import PredictionError, calibration

PRIORS = ("pool+run", "pool", "run")
PAIRS = [  # (bootstrapped, plain) that must agree when every covered document is judged
    ("BootAP@10", "AP@10"),
    ("BootAP", "AP"),
    ("BootAP(rel=2)@20", "AP(rel=2)@20"),
    ("BootP@5", "P@5"),
    ("BootP(rel=2)@10", "P(rel=2)@10"),
    ("BootRBP@10", "RBPResidual@10"),
    ("BootRBP(p=0.5)", "RBPResidual(p=0.5)"),
    ("BootQ@10", "Q@10"),
    ("BootQ(beta=0.5,norm=min)@5", "Q(beta=0.5,norm=min)@5"),
    ("BootQ", "Q"),
]


def complete_fixture():
    """The snapshot fixture's runs with every retrieved document judged (unjudged ones graded by a rule)."""
    runs, qrels = fixture()
    graded = {(q, d): g for q, d, g in qrels.itertuples(index=False) if g >= 0}
    rows = dict(graded)
    for frame in runs.values():
        for q, d in zip(frame["query_id"], frame["doc_id"], strict=True):
            rows.setdefault((q, d), int(d[1:]) % 3)
    complete = pd.DataFrame([(q, d, g) for (q, d), g in rows.items()], columns=["query_id", "doc_id", "relevance"])
    return runs, complete


# ---------------------------------------------------------------------------------------------------
# exactness: nothing to draw -> the plain measure
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("prior", PRIORS)
@pytest.mark.parametrize("stat", ["mode", "mean", "p5"])
def test_every_covered_document_judged_gives_the_plain_measure(prior, stat):
    runs, complete = complete_fixture()
    measures = [parse(boot)(prior=prior, stat=stat) for boot, _ in PAIRS]
    boot = evaluate(runs, complete, measures)
    plain = evaluate(runs, complete, [p for _, p in PAIRS])
    assert len(boot) == len(plain)
    diff = np.abs(boot["value"].to_numpy() - plain["value"].to_numpy())
    assert diff.max() < 1e-12


def test_exactness_with_predictions_for_judged_documents_only():
    runs, complete = complete_fixture()
    predictions = complete.assign(relevance=1)  # every prediction is of a judged document: nothing drawn
    boot = evaluate(runs, complete, [parse(b)(prior="predicted") for b, _ in PAIRS], predictions=predictions)
    plain = evaluate(runs, complete, [p for _, p in PAIRS])
    assert np.abs(boot["value"].to_numpy() - plain["value"].to_numpy()).max() < 1e-12


def test_exactness_on_trec_covid(covid):
    """TREC-COVID round 1 against the complete topics 1–30 qrels, every run restricted to its judged
    documents: each bootstrapped measure equals its plain measure to 1e-12 for every (run, query)."""
    judged = covid["complete"]
    keys = set(zip(judged["query_id"].astype(str), judged["doc_id"].astype(str), strict=True))
    names = sorted(covid["runs"])[::12]
    runs = {}
    for name in names:
        frame = covid["runs"][name]
        mask = [(q, d) in keys for q, d in zip(frame["query_id"].astype(str), frame["doc_id"].astype(str), strict=True)]
        runs[name] = frame[mask]
    pairs = [("BootAP@100", "AP@100"), ("BootP@10", "P@10"), ("BootRBP(p=0.9)@100", "RBPResidual(p=0.9)@100")]
    pairs += [("BootQ@100", "Q@100"), ("BootNDCG(prior=predicted)@20", "nDCG@20")]
    predictions = judged[["query_id", "doc_id"]].assign(relevance=0)
    boot = evaluate(runs, judged, [b for b, _ in pairs], predictions=predictions)
    plain = evaluate(runs, judged, [p for _, p in pairs])
    assert np.abs(boot["value"].to_numpy() - plain["value"].to_numpy()).max() < 1e-12


# ---------------------------------------------------------------------------------------------------
# what a replicate is
# ---------------------------------------------------------------------------------------------------
def _uniforms(topic, n_positions, b=50, seed=42, stream=0):
    return topic_streams(np.array([topic], dtype=object), seed, b, stream=stream)(0, n_positions)


def test_replicate_draws_rank_stream_and_r_counts_drawn_relevant_documents():
    """Run u (unjudged) > r (relevant); qrels r:1, n:0. Pool prior (1/2, 1/2): u is relevant when its
    uniform (row 0 of the topic's stream) is ≥ 1/2; then R = 2 and AP = (1/1 + 2/2)/2 = 1, else R = 1 and
    AP = (1/2)/1 = 1/2."""
    run = {"t": {"u": 2.0, "r": 1.0}}
    qrels = {"t": {"r": 1, "n": 0}}
    judged = Qrels.from_any(qrels)
    ranked = rank_runs({"x": run}, judged)
    measure = parse("BootAP(prior=pool,b=50)")
    reps = measure.replicates(ranked, judged)
    u = _uniforms("t", 1)[0]
    expected = np.where(u >= 0.5, 1.0, 0.5)
    assert reps.shape == (1, 50)
    assert np.array_equal(reps[0], expected)
    assert 0 < (expected == 1.0).sum() < 50  # the draw really varies


def test_unjudged_below_the_cutoff_is_not_covered():
    run = {"t": {"r": 3.0, "n": 2.0, "u": 1.0}}
    qrels = {"t": {"r": 1, "n": 0}}
    reps = bootstrap_measure(run, qrels, "BootAP(prior=pool,b=20)@2").replicates.to_numpy()
    assert np.all(reps == 1.0)  # u at rank 3 is outside @2: R stays 1


def test_priors_and_levels():
    """Run prior: the judged covered documents' grades; a covered judged-relevant-only run has run prior
    (≈1 on grade 1): every unjudged covered document drawn relevant."""
    run = {"t": {"r": 3.0, "u": 2.0}}
    qrels = {"t": {"r": 1, "n1": 0, "n2": 0, "n3": 0}}
    reps = bootstrap_measure(run, qrels, "BootP(prior=run,b=200)@2").replicates.to_numpy()
    assert np.mean(reps == 1.0) > 0.99  # run prior (1e-6, 1) floored
    reps = bootstrap_measure(run, qrels, "BootP(prior=pool,b=2000)@2").replicates.to_numpy()
    assert abs(np.mean(reps == 1.0) - 0.25) < 0.03  # pool prior: 1 of 4 judged documents relevant


def test_q_replicates_see_drawn_grades_in_the_ideal_ranking():
    # u is drawn 2 (prior run: the judged covered document has grade 2), so the ideal grades become 2, 2
    run = {"t": {"a": 2.0, "u": 1.0}}
    qrels = {"t": {"a": 2}}
    reps = bootstrap_measure(run, qrels, "BootQ(prior=run,b=30)").replicates.to_numpy()
    # ranks 1, 2 relevant with grades 2, 2; cg* = 2, 4: ((1+2)/(1+2) + (2+4)/(2+4)) / 2 = 1
    assert np.allclose(reps[(reps > 0.99)], 1.0)
    assert np.mean(reps > 0.99) > 0.99


def test_replicates_do_not_depend_on_chunking_or_other_runs():
    runs, qrels = fixture()
    judged = Qrels.from_any(qrels)
    ranked = rank_runs(runs, judged)
    measure = parse("BootAP(b=37,prior=run)@20")
    setup = measure.setup(ranked, judged)
    draws = topic_streams(judged.topic_ids, 42, 37)
    full = K.bootstrap_replicates(setup, np.arange(ranked.n_rows), measure.definition(setup), draws, None, 37)
    tiny = K.bootstrap_replicates(
        setup, np.arange(ranked.n_rows), measure.definition(setup), draws, None, 37, budget=50
    )
    assert np.array_equal(full, tiny)
    alone = evaluate({"run1": runs["run1"]}, qrels, ["BootAP(b=37,prior=run)@20"])
    together = evaluate(runs, qrels, ["BootAP(b=37,prior=run)@20"])
    assert np.array_equal(alone["value"].to_numpy(), together[together["run"] == "run1"]["value"].to_numpy())


# ---------------------------------------------------------------------------------------------------
# prior=predicted
# ---------------------------------------------------------------------------------------------------
PERFECT = pd.DataFrame(
    [("t", "a", 1), ("t", "b", 0), ("t", "c", 1), ("t", "d", 0), ("t", "u1", 1), ("t", "u2", 1)],
    columns=["query_id", "doc_id", "relevance"],
)
QRELS_T = {"t": {"a": 1, "b": 0, "c": 1, "d": 0}}


def test_predicted_documents_are_drawn_also_when_not_retrieved():
    """The labeler agrees with every judged document (min_count=0: the query's own confusion rows are
    δ), so u1 (retrieved) and u2 (not retrieved) are relevant in every replicate: R = 2 + 2."""
    run = {"t": {"u1": 3.0, "a": 2.0, "b": 1.0}}
    out = evaluate(run, QRELS_T, ["BootAP(prior=predicted,min_count=0,b=20)", "AP"], predictions=PERFECT)
    boot, plain = out["value"].tolist()
    assert boot == pytest.approx((1 / 1 + 2 / 2) / 4, abs=1e-15)
    assert plain == pytest.approx((1 / 2) / 2, abs=1e-15)


def test_predicted_ndcg_ideal_counts_drawn_grades():
    run = {"t": {"u1": 3.0, "a": 2.0}}
    out = evaluate(run, QRELS_T, ["BootNDCG(prior=predicted,min_count=0,b=10)@2"], predictions=PERFECT)
    # grades 1, 1 at ranks 1, 2 and four relevant documents: DCG@2 = IDCG@2
    assert out["value"].iloc[0] == pytest.approx(1.0, abs=1e-15)


def test_unjudged_without_prediction_uses_pool_run_prior():
    """x (rank 1, no prediction) draws from the pool+run prior with rank 1's uniforms; u1 (rank 2) is
    predicted relevant and always drawn 1: P@2 = (x + 1)/2 with x exactly BootP(prior=pool+run)@1's draw."""
    run = {"t": {"x": 3.0, "u1": 2.0}}
    boot = bootstrap_measure(
        run, QRELS_T, "BootP(prior=predicted,min_count=0,b=400)@2", predictions=PERFECT
    ).replicates.to_numpy()
    pool_run = bootstrap_measure(run, QRELS_T, "BootP(prior=pool+run,b=400)@1").replicates.to_numpy()
    assert np.array_equal(boot, (pool_run + 1.0) / 2.0)
    assert 0 < pool_run.mean() < 1


def test_predicted_draws_are_shared_by_runs():
    """One replicate is one completion of the qrels: two runs retrieving the same predicted document see
    the same drawn grade (here via P@1 with the document at rank 1 in both)."""
    noisy = pd.DataFrame(
        [("t", d, g) for d, g in [("a", 1), ("b", 1), ("c", 0), ("d", 0), ("u1", 1)]],
        columns=["query_id", "doc_id", "relevance"],
    )
    runs = {"r1": {"t": {"u1": 2.0, "a": 1.0}}, "r2": {"t": {"u1": 5.0, "d": 1.0, "c": 0.5}}}
    result = bootstrap_measure(runs, QRELS_T, "BootP(prior=predicted,min_count=0,b=300)@1", predictions=noisy)
    reps = result.replicates.to_numpy()
    assert np.array_equal(reps[0], reps[1])
    assert 0.3 < reps[0].mean() < 0.7  # predicted 1: judged documents predicted 1 are half relevant


def test_calibration_table_fallback_and_smoothing():
    qrels = {"t": {"a": 1, "b": 0, "c": 1, "d": 0}, "s": {"e": 2, "f": 0}}
    predictions = pd.DataFrame(
        [("t", "a", 1), ("t", "b", 1), ("t", "c", 1), ("t", "d", 0), ("s", "e", 2), ("s", "f", 2), ("s", "g", 1)],
        columns=["query_id", "doc_id", "relevance"],
    )
    table = calibration(qrels, predictions, min_count=3, alpha=1.0)
    pooled = table[table["source"].eq("pooled") & table["query_id"].isna()].set_index("predicted")
    # pooled counts: predicted 1 -> human (0:1, 1:2, 2:0); smoothed over 3 levels: (1+1, 2+1, 0+1)/(3+3)
    assert pooled.loc[1, ["h0", "h1", "h2"]].tolist() == pytest.approx([2 / 6, 3 / 6, 1 / 6])
    assert pooled.loc[1, "judged"] == 3
    rows = table[table["query_id"].eq("t")].set_index("predicted")
    assert rows.loc[1, "source"] == "query"  # 3 judged documents of t predicted 1 >= min_count
    assert rows.loc[1, ["h0", "h1", "h2"]].tolist() == pytest.approx([1 / 3, 2 / 3, 0.0])
    assert rows.loc[0, "source"] == "pooled"  # one judged document predicted 0 < 3
    assert rows.loc[0, ["h0", "h1", "h2"]].tolist() == pytest.approx([2 / 4, 1 / 4, 1 / 4])
    s_rows = table[table["query_id"].eq("s")].set_index("predicted")
    assert s_rows.loc[2, "source"] == "pooled"
    assert s_rows.loc[2, ["h0", "h1", "h2"]].tolist() == pytest.approx([2 / 5, 1 / 5, 2 / 5])


def test_probability_columns_recalibrate_as_expected_confusion():
    qrels = {"t": {"a": 1, "b": 0}}
    predictions = pd.DataFrame(
        {"query_id": ["t", "t", "t"], "doc_id": ["a", "b", "u"], "p0": [0.2, 0.6, 0.5], "p1": [0.8, 0.4, 0.5]}
    )
    original = predictions.copy()
    table = calibration(qrels, predictions, min_count=0)
    rows = table[table["query_id"].eq("t")].set_index("predicted")
    # C[0] = 0.2·onehot(1) + 0.6·onehot(0) -> (0.6, 0.2)/0.8 ; C[1] = 0.8·onehot(1) + 0.4·onehot(0) -> (0.4, 0.8)/1.2
    assert rows.loc[0, ["h0", "h1"]].tolist() == pytest.approx([0.75, 0.25])
    assert rows.loc[1, ["h0", "h1"]].tolist() == pytest.approx([1 / 3, 2 / 3])
    pd.testing.assert_frame_equal(predictions, original)  # the caller's table is left alone
    # u's prior = 0.5·(0.75, 0.25) + 0.5·(1/3, 2/3): P(relevant) = 11/24
    run = {"t": {"u": 1.0}}
    reps = bootstrap_measure(
        run, qrels, "BootP(prior=predicted,min_count=0,b=4000)@1", predictions=predictions
    ).replicates.to_numpy()
    assert abs(reps.mean() - 11 / 24) < 0.03


# ---------------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------------
RUN_T = {"t": {"u1": 3.0, "a": 2.0}}
BAD = [
    (PERFECT.assign(relevance=[1, 0, 1, 0, 3, 1]), r"row 4 .*'u1'.*grade 3 is unknown.*0\.\.1"),
    (PERFECT.assign(relevance=[1, 0, 1, 0, 0.5, 1]), r"row 4 .*grade 0\.5 is unknown"),
    (PERFECT.assign(relevance=[1, 0, 1, 0, -1, 1]), r"row 4 .*grade -1 is unknown"),
    (pd.concat([PERFECT, PERFECT.iloc[[2]]], ignore_index=True), r"rows 2 and 6 both predict query 't', doc 'c'"),
    (PERFECT.assign(p0=0.5, p1=0.6), r"row 0 .*sum to 1\.1"),
    (PERFECT.assign(p0=0.5, p2=0.5), r"column 'p2'.*unknown grade"),
    (PERFECT.assign(p1=1.0).drop(columns="relevance"), r"p0 is missing"),
    (PERFECT.assign(p0=1.5, p1=-0.5), r"row 0 .*p0=1\.5 is not a probability"),
    (PERFECT.drop(columns="doc_id"), r"no 'doc_id' column"),
]


@pytest.mark.parametrize("predictions,message", BAD)
def test_bad_predictions_are_refused_naming_the_row(predictions, message):
    with pytest.raises(PredictionError, match=message):
        evaluate(RUN_T, QRELS_T, ["BootAP(prior=predicted)"], predictions=predictions)


def test_prior_predicted_without_predictions_is_refused():
    with pytest.raises(ValueError, match=r"needs predicted grades: pass predictions="):
        evaluate(RUN_T, QRELS_T, ["BootAP(prior=predicted)"])
    with pytest.raises(ValueError, match=r"needs predicted grades"):
        evaluate(RUN_T, QRELS_T, ["BootNDCG(prior=predicted)"])


def test_run_without_any_prediction_is_refused():
    runs = {"good": RUN_T, "other": {"t": {"zz1": 2.0, "zz2": 1.0}}}
    with pytest.raises(ValueError, match=r"run 'other' has 2 unjudged documents .* prediction for none"):
        evaluate(runs, QRELS_T, ["BootP(prior=predicted)@2"], predictions=PERFECT)


def test_compat_and_predicted_are_refused_together():
    with pytest.raises(ValueError, match="compat=ecir23"):
        evaluate(RUN_T, QRELS_T, ["BootNDCG(prior=predicted,compat=ecir23)"], predictions=PERFECT)


# ---------------------------------------------------------------------------------------------------
# intervals in tables
# ---------------------------------------------------------------------------------------------------
def test_interval_columns_per_query_and_aggregated():
    runs, qrels = fixture()
    measure = "BootAP(b=200)@10"
    result = bootstrap_measure(runs, qrels, measure)
    per_query = evaluate(runs, qrels, [measure, "AP@10"], interval=0.9)
    boot = per_query[per_query["measure"] == measure]
    reps = result.replicates.to_numpy()
    # the percentiles of the replicates, extended to the value (the most likely replicate) where it lies outside
    value = boot["value"].to_numpy()
    assert np.array_equal(boot["lo"].to_numpy(), np.minimum(np.percentile(reps, 5, axis=1), value))
    assert np.array_equal(boot["hi"].to_numpy(), np.maximum(np.percentile(reps, 95, axis=1), value))
    assert per_query.loc[per_query["measure"] == "AP@10", ["lo", "hi"]].isna().all().all()
    aggregated = evaluate(runs, qrels, [measure, "AP@10"], per_query=False, interval=0.8)
    for run in runs:
        means = result.replicates.loc[run].to_numpy().mean(axis=0)
        row = aggregated[(aggregated["run"] == run) & (aggregated["measure"] == measure)].iloc[0]
        assert row["lo"] == pytest.approx(min(np.percentile(means, 10), row["value"]), abs=1e-12)
        assert row["hi"] == pytest.approx(max(np.percentile(means, 90), row["value"]), abs=1e-12)
    plain = evaluate(runs, qrels, [measure, "AP@10"], per_query=False)
    assert np.array_equal(plain["value"].to_numpy(), aggregated["value"].to_numpy())


def test_interval_values_equal_those_without_interval_bit_for_bit():
    runs, qrels = fixture()
    measures = ["BootNDCG@10", "BootNDCG(stat=mean)@5", "BootQ(stat=p90)@10", "BootRBP(stat=mean)"]
    with_interval = evaluate(runs, qrels, measures, interval=0.5)
    without = evaluate(runs, qrels, measures)
    assert np.array_equal(with_interval["value"].to_numpy(), without["value"].to_numpy())


@pytest.mark.parametrize("interval", [0, 1, 1.5, -0.1, "0.9", True])
def test_bad_interval_is_refused(interval):
    with pytest.raises(ValueError, match="interval"):
        evaluate(RUN_T, QRELS_T, ["BootAP"], interval=interval)


def test_bootstrap_ndcg_accepts_predictions():
    out = bootstrap_ndcg(RUN_T, QRELS_T, k=2, prior="predicted", b=10, predictions=PERFECT, min_count=0)
    assert out.summary["mode"].iloc[0] == pytest.approx(1.0)
    assert out.summary["naive_lower"].iloc[0] == pytest.approx(1 / np.log2(3) / (1 + 1 / np.log2(3)))
    assert repr(out.measure) == "BootNDCG(prior=predicted,b=10,min_count=0)@2"


def test_pivot_shows_evaluate_intervals():
    from ir_incomplete import pivot

    runs, qrels = fixture()
    table = evaluate(runs, qrels, ["BootAP(b=100)@10", "AP@10"], per_query=False, interval=0.9)
    view = pivot(table, decimals=2)
    row = table[(table["run"] == "run0") & (table["measure"] == "BootAP(b=100)@10")].iloc[0]
    assert view.loc["run0", "BootAP(b=100)@10"] == f"{row['value']:.2f} [{row['lo']:.2f}, {row['hi']:.2f}]"
    assert view.loc["run0", "AP@10"] == f"{table.loc[1, 'value']:.2f}"
    with pytest.raises(ValueError, match="per_query=False"):
        pivot(evaluate(runs, qrels, ["BootAP(b=100)@10"], interval=0.9))


def _write_trec(tmp_path, runs, qrels):
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels.itertuples(index=False)))
    paths = []
    for name, frame in runs.items():
        path = tmp_path / name
        path.write_text("".join(f"{q} Q0 {d} 0 {s!r} x\n" for q, d, s in frame.itertuples(index=False)))
        paths.append(str(path))
    return str(qrels_path), paths


def test_command_line_interval_and_predictions(tmp_path, capsys):
    import json

    from ir_incomplete.cli import main

    runs, qrels = fixture()
    qrels_path, paths = _write_trec(tmp_path, runs, qrels)
    measure = "BootAP(b=50)@10"
    assert main([qrels_path, *paths, measure, "AP@10", "--interval", "0.9", "-p", "-1"]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    table = evaluate(runs, qrels, [measure, "AP@10"], per_query=False, interval=0.9)
    assert len(lines) == len(table)
    for (run, name, value, lo, hi), row in zip(lines, table.itertuples(index=False), strict=True):
        assert (run, name) == (row.run, row.measure)
        assert float(value) == row.value
        if name == measure:
            assert (float(lo), float(hi)) == (row.lo, row.hi)
        else:
            assert lo == hi == ""
    assert main([qrels_path, paths[0], measure, "-q", "-o", "jsonl", "--interval", "0.8"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    per_query = evaluate({"run0": runs["run0"]}, qrels, [measure], interval=0.8)
    assert [r["lo"] for r in records[:-1]] == per_query["lo"].tolist()
    assert records[-1]["query_id"] == "all" and records[-1]["lo"] is not None
    # predictions from a file with a header line; a run without any is refused with exit code 2
    predictions = tmp_path / "pred.tsv"
    predictions.write_text("query_id\tdoc_id\trelevance\n" + "".join(f"q0\tzz{i}\t1\n" for i in range(40)))
    assert main([qrels_path, paths[0], "BootP(prior=predicted,b=20)@5", "--predictions", str(predictions)]) == 2
    assert "prediction for none" in capsys.readouterr().err
    full = tmp_path / "full.tsv"
    full.write_text(
        "query_id\tdoc_id\trelevance\n" + "".join(f"q{t}\td{i}\t{i % 2}\n" for t in range(7) for i in range(40))
    )
    assert main([qrels_path, paths[0], "BootP(prior=predicted,b=20)@5", "--predictions", str(full)]) == 0
    out = capsys.readouterr().out.split("\t")
    expected = evaluate(
        {"run0": runs["run0"]}, qrels, ["BootP(prior=predicted,b=20)@5"], per_query=False, predictions=str(full)
    )
    assert out[1].strip() == f"{expected['value'].iloc[0]:.4f}"
    assert main([qrels_path, paths[0], measure, "--interval", "1.5"]) == 2
    assert "--interval" in capsys.readouterr().err
