"""The design-based measures by name (``StatAP``, ``StatNDCG``, ``StatP``, ``StatRBP``, ``StatR``): every
front door (evaluate, the command line, ir_measures, pt.Experiment, compare, pivot) gives the numbers of
``ir_incomplete.estimate`` for the design the measure names."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest

import ir_incomplete
from ir_incomplete import compare, estimate, evaluate, pivot
from ir_incomplete.cli import main
from ir_incomplete.judging import sample, write_design

ROOT = Path(__file__).resolve().parents[1]
COVID = ROOT.parent / "shared" / "data" / "trec-covid-round1"

#: (measure in the grammar, without the design, what estimate() reads)
KINDS = [
    ("StatAP({})@10", "AP@10"),
    ("StatNDCG({})@10", "nDCG@10"),
    ("StatP({})@5", "P@5"),
    ("StatRBP({},p=0.9)@20", "RBP(p=0.9)@20"),
    ("StatR({})", "R"),
]


def _synthetic(n_runs=4, n_topics=6, n_docs=40, seed=1):
    rng = np.random.default_rng(seed)
    runs = {}
    for r in range(n_runs):
        rows = []
        for t in range(n_topics):
            docs = rng.choice(n_docs, size=25, replace=False)
            rows += [(f"q{t}", f"d{d}", float(100 - i)) for i, d in enumerate(docs)]
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    grades = rng.choice([0, 0, 0, 1, 2], size=(n_topics, n_docs))
    qrels = pd.DataFrame(
        [(f"q{t}", f"d{d}", int(grades[t, d])) for t in range(n_topics) for d in range(n_docs)],
        columns=["query_id", "doc_id", "relevance"],
    )
    # automatic labels: the true grade, wrong for about a third of the pairs
    noisy = np.where(rng.random(grades.shape) < 0.35, rng.choice([0, 1, 2], size=grades.shape), grades)
    labels = qrels.assign(relevance=noisy.reshape(-1))
    return runs, qrels, labels


def synthetic_files(folder) -> dict:
    """The synthetic runs, qrels and labels (:func:`_synthetic`), a design of them written to ``folder``
    (60 judgments, depth 20, seed 3) and the labels as a file."""
    runs, qrels, labels = _synthetic()
    design = sample(runs, 60, depth=20, seed=3)
    path = folder / "design.tsv"
    write_design(design, path)
    labels_path = folder / "labels.tsv"
    labels.to_csv(labels_path, sep="\t", index=False)
    return {"runs": runs, "qrels": qrels, "design": str(path), "labels": str(labels_path), "folder": folder}


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    return synthetic_files(tmp_path_factory.mktemp("design"))


def _name(template: str, design: str, extra: str = "") -> str:
    return template.format(f"design={design!r}" + extra)


def _by_key(frame, *keys):
    return {tuple(row[:-1]): row[-1] for row in frame[[*keys, "value"]].itertuples(index=False)}


# ---------------------------------------------------------------------------------------------------
# evaluate
# ---------------------------------------------------------------------------------------------------
def test_evaluate_per_query_and_means_equal_estimate(synth):
    measures = [_name(t, synth["design"]) for t, _ in KINDS]
    estimands = [e for _, e in KINDS]
    got = evaluate(synth["runs"], synth["qrels"], [*measures, "P@5"])
    assert list(got.columns) == ["run", "query_id", "measure", "value"]
    want = estimate(synth["runs"], synth["qrels"], synth["design"], estimands, per_query=True, control="none")
    means = evaluate(synth["runs"], synth["qrels"], measures, per_query=False)
    run_means = estimate(synth["runs"], synth["qrels"], synth["design"], estimands, control="none")
    for measure, estimand in zip(measures, estimands, strict=True):
        ours = _by_key(got[got["measure"] == measure], "run", "query_id")
        theirs = _by_key(want[want["measure"] == estimand], "run", "query_id")
        assert ours.keys() == theirs.keys() and len(ours) == 4 * 6
        assert max(abs(ours[k] - theirs[k]) for k in ours) <= 1e-12, measure
        ours = _by_key(means[means["measure"] == measure], "run")
        theirs = _by_key(run_means[run_means["measure"] == estimand], "run")
        assert ours.keys() == theirs.keys()
        assert max(abs(ours[k] - theirs[k]) for k in ours) <= 1e-12, measure
    # not the plain P@5 on the same qrels: the estimate reads only the design's sampled pairs
    p5 = got[got["measure"] == "P@5"]["value"].to_numpy()
    stat_p5 = got[got["measure"] == measures[2]]["value"].to_numpy()
    assert np.abs(p5 - stat_p5).max() > 0.05


@pytest.mark.parametrize("control", [None, "model", "labels+model"])
def test_evaluate_with_predictions_uses_every_run_and_the_control(synth, control):
    extra = f",predictions={synth['labels']!r}" + (f",control={control}" if control else "")
    measure = _name("StatAP({})@10", synth["design"], extra)
    got = evaluate(synth["runs"], synth["qrels"], measure, per_query=False, interval=0.9)
    want = estimate(
        synth["runs"],
        synth["qrels"],
        synth["design"],
        "AP@10",
        predictions=synth["labels"],
        control=control or "labels",
    )
    assert want.attrs["control"] == (control or "labels")
    for column in ("value", "lo", "hi"):
        assert np.abs(got[column].to_numpy() - want[column].to_numpy()).max() <= 1e-12, column
    plain = estimate(synth["runs"], synth["qrels"], synth["design"], "AP@10", control="none")
    assert np.abs(got["hi"].to_numpy() - plain["hi"].to_numpy()).max() > 1e-6  # the control changes the estimate


def test_evaluate_interval_is_the_design_based_interval_of_the_run_mean(synth):
    measures = [_name(t, synth["design"]) for t, _ in KINDS]
    got = evaluate(synth["runs"], synth["qrels"], [*measures, "P@5"], per_query=False, interval=0.8)
    want = estimate(synth["runs"], synth["qrels"], synth["design"], [e for _, e in KINDS], interval=0.8, control="none")
    for measure, (_, estimand) in zip(measures, KINDS, strict=True):
        ours = got[got["measure"] == measure].reset_index(drop=True)
        theirs = want[want["measure"] == estimand].reset_index(drop=True)
        assert list(ours["run"]) == list(theirs["run"])
        for column in ("value", "lo", "hi"):
            assert np.abs(ours[column].to_numpy() - theirs[column].to_numpy()).max() <= 1e-12, (measure, column)
        assert (ours["hi"] - ours["lo"] > 0).all()
    assert got[got["measure"] == "P@5"][["lo", "hi"]].isna().all().all()
    # per query: the estimate's interval is of run means only, so no per-query interval
    per_query = evaluate(synth["runs"], synth["qrels"], measures[:1], interval=0.8)
    assert per_query[["lo", "hi"]].isna().all().all()
    # pivot shows them as it shows the bootstrap intervals
    table = pivot(got)
    row = want[(want["measure"] == "AP@10") & (want["run"] == "run2")].iloc[0]
    assert table.loc["run2", measures[0]] == f"{row['value']:.4f} [{row['lo']:.4f}, {row['hi']:.4f}]"


def test_evaluate_refuses_topics_run_and_foreign_queries(synth):
    measure = _name("StatAP({})@10", synth["design"])
    with pytest.raises(ValueError, match=r"StatAP\(design=.*\)@10: topics='run' is not valid for a design-based"):
        evaluate(synth["runs"], synth["qrels"], measure, topics="run")
    extra = pd.DataFrame({"query_id": ["q99"], "doc_id": ["d1"], "relevance": [1]})
    with pytest.raises(ValueError, match=r"the qrels judge 1 queries the design .* does not sample \(e.g. 'q99'\)"):
        evaluate(synth["runs"], pd.concat([synth["qrels"], extra]), measure)


def test_missing_and_unreadable_design(synth, tmp_path):
    with pytest.raises(ValueError, match=r"^StatAP needs parameter 'design' \(a str\), e.g. StatAP\(design="):
        ir_incomplete.parse("StatAP@10")
    with pytest.raises(ValueError, match=r"^StatP: design= names no file"):
        ir_incomplete.parse("StatP(design=' ')@10")
    with pytest.raises(ValueError, match=r"^StatNDCG: control=labels needs automatic labels"):
        ir_incomplete.parse("StatNDCG(design='d.tsv',control=labels)@10")
    missing = str(tmp_path / "nothing.tsv")
    message = rf"^StatAP\(design='{missing}'\)@10: cannot read the design file '{missing}': No such file or directory$"
    with pytest.raises(ValueError, match=message):
        evaluate(synth["runs"], synth["qrels"], f"StatAP(design={missing!r})@10")
    with pytest.raises(ValueError, match=message):
        ir_measures.calc_aggregate(
            [ir_incomplete.parse(f"StatAP(design={missing!r})@10")], synth["qrels"], synth["runs"]["run0"]
        )
    bad = tmp_path / "bad.tsv"
    bad.write_text("query_id\tdoc_id\nq0\td1\n", encoding="utf-8")
    with pytest.raises(
        ValueError, match=rf"^StatR\(design='{bad}'\): design file '{bad}': the design has no 'pi' column"
    ):
        evaluate(synth["runs"], synth["qrels"], f"StatR(design={str(bad)!r})")


# ---------------------------------------------------------------------------------------------------
# ir_measures and PyTerrier: one run at a time, from the design alone
# ---------------------------------------------------------------------------------------------------
def test_ir_measures_equals_estimate(synth):
    measures = [ir_incomplete.parse(_name(t, synth["design"])) for t, _ in KINDS]
    want = estimate(
        synth["runs"], synth["qrels"], synth["design"], [e for _, e in KINDS], per_query=True, control="none"
    )
    for run_name, run in synth["runs"].items():
        means = ir_measures.calc_aggregate(measures, synth["qrels"], run)
        rows = list(ir_measures.iter_calc(measures, synth["qrels"], run))
        assert len(rows) == len(measures) * 6
        for measure, (_, estimand) in zip(measures, KINDS, strict=True):
            theirs = want[(want["run"] == run_name) & (want["measure"] == estimand)]
            per_query = {m.query_id: m.value for m in rows if m.measure == measure}
            expected = dict(zip(theirs["query_id"], theirs["value"], strict=True))
            assert per_query.keys() == expected.keys()
            assert max(abs(per_query[q] - expected[q]) for q in expected) <= 1e-12
            assert abs(means[measure] - theirs["value"].mean()) <= 1e-12


def test_ir_measures_refuses_predictions_and_control(synth):
    run = synth["runs"]["run0"]
    for extra, what in ((f",predictions={synth['labels']!r}", "labels"), (",control=model", "model")):
        measure = ir_incomplete.parse(_name("StatAP({})@10", synth["design"], extra))
        with pytest.raises(ValueError) as caught:
            ir_measures.calc_aggregate([measure], synth["qrels"], run)
        message = str(caught.value)
        assert message.startswith(f"{measure!r}: control='{what}' needs the whole universe"), message
        assert "ir_measures and pt.Experiment give one run at a time" in message


def test_pyterrier_experiment_equals_estimate(synth):
    pt = pytest.importorskip("pyterrier", reason="pyterrier is not installed")
    measures = [_name(t, synth["design"]) for t, _ in KINDS[:3]]
    names = list(synth["runs"])
    frames = [r.rename(columns={"query_id": "qid", "doc_id": "docno"}) for r in synth["runs"].values()]
    topics = pd.DataFrame({"qid": [f"q{t}" for t in range(6)], "query": ["x"] * 6})
    qrels = synth["qrels"].rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    systems = [pt.Transformer.from_df(f) for f in frames]
    means = pt.Experiment(systems, topics, qrels, eval_metrics=measures, names=names)
    per_query = pt.Experiment(systems, topics, qrels, eval_metrics=measures, names=names, perquery=True)
    want = estimate(synth["runs"], synth["qrels"], synth["design"], [e for _, e in KINDS[:3]], control="none")
    want_q = estimate(
        synth["runs"], synth["qrels"], synth["design"], [e for _, e in KINDS[:3]], per_query=True, control="none"
    )
    for measure, (_, estimand) in zip(measures, KINDS[:3], strict=True):
        for run in names:
            row = want[(want["run"] == run) & (want["measure"] == estimand)]
            assert abs(means[means["name"] == run][measure].iloc[0] - row["value"].iloc[0]) <= 1e-12
            got = per_query[(per_query["name"] == run) & (per_query["measure"] == measure)]
            exp = want_q[(want_q["run"] == run) & (want_q["measure"] == estimand)]
            got_v = dict(zip(got["qid"], got["value"], strict=True))
            exp_v = dict(zip(exp["query_id"], exp["value"], strict=True))
            assert got_v.keys() == exp_v.keys()
            assert max(abs(got_v[q] - exp_v[q]) for q in exp_v) <= 1e-12


# ---------------------------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------------------------
def _write_files(synth):
    folder = synth["folder"] / "files"
    folder.mkdir(exist_ok=True)
    for name, run in synth["runs"].items():
        (folder / name).write_text("".join(f"{q} Q0 {d} 0 {s} {name}\n" for q, d, s in run.itertuples(index=False)))
    qrels = folder / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in synth["qrels"].itertuples(index=False)))
    return qrels, [folder / name for name in synth["runs"]]


def test_command_line_values_and_intervals(synth):
    qrels, runs = _write_files(synth)
    measures = [_name("StatAP({})@10", synth["design"]), _name("StatRBP({},p=0.9)@20", synth["design"])]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ir_incomplete",
            str(qrels),
            *map(str, runs),
            *measures,
            "--interval",
            "0.9",
            "-p",
            "-1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))},
    )
    assert done.returncode == 0, done.stderr
    lines = [line.split("\t") for line in done.stdout.splitlines()]
    want = estimate(
        synth["runs"], synth["qrels"], synth["design"], ["AP@10", "RBP(p=0.9)@20"], interval=0.9, control="none"
    )
    assert len(lines) == len(want) == 8
    for run, measure, value, lo, hi in lines:
        estimand = "AP@10" if measure == measures[0] else "RBP(p=0.9)@20"
        row = want[(want["run"] == run) & (want["measure"] == estimand)].iloc[0]
        assert abs(float(value) - row["value"]) <= 1e-12
        assert abs(float(lo) - row["lo"]) <= 1e-12 and abs(float(hi) - row["hi"]) <= 1e-12


def test_command_line_errors(synth, capsys, tmp_path):
    qrels, runs = _write_files(synth)
    missing = str(tmp_path / "none.tsv")
    code = main([str(qrels), *map(str, runs), f"StatAP(design={missing!r})@10"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [
        f"ir_incomplete: error: StatAP(design={missing!r})@10: cannot read the design file {missing!r}: "
        "No such file or directory"
    ]
    code = main([str(qrels), *map(str, runs), "StatAP@10"])
    err = capsys.readouterr().err
    assert code == 2 and "StatAP needs parameter 'design'" in err
    code = main([str(qrels), str(runs[0]), _name("StatAP({})@10", synth["design"])])  # not every run of the design
    err = capsys.readouterr().err
    assert code == 2 and "the design was drawn from run 'run1', which is not among the runs given" in err


# ---------------------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("correction", [None, "bonferroni", "fdr_bh"])
def test_compare_pairs_use_the_design_based_pair_intervals(synth, correction):
    from scipy.stats import t as student

    from ir_incomplete.report import ci_level

    measure = _name("StatAP({})@10", synth["design"])
    table = compare(synth["runs"], synth["qrels"], [measure, "P@5"], correction=correction, alpha=0.8)
    rows = table[table["measure"] == measure].reset_index(drop=True)
    level = float(rows["ci_level"].iloc[0])
    first = ci_level(0.8, correction, 6)
    rejected = int((rows["p_adjusted"] < 0.8).sum())
    assert level == ci_level(0.8, correction, 6, rejected)
    assert level == first if correction != "fdr_bh" else level < first  # 1 − R·alpha/m, R ≥ 2 here
    want = estimate(synth["runs"], synth["qrels"], synth["design"], "AP@10", pairs=True, interval=level, control="none")
    assert list(zip(rows["run_a"], rows["run_b"], strict=True)) == list(zip(want["run_a"], want["run_b"], strict=True))
    assert np.abs(rows["difference"].to_numpy() - want["value"].to_numpy()).max() <= 1e-12
    assert (rows["ci_low"].to_numpy() == want["lo"].to_numpy()).all()
    assert (rows["ci_high"].to_numpy() == want["hi"].to_numpy()).all()
    assert (rows["significant"].to_numpy() == want["significant"].to_numpy()).all()
    # p from the interval's own standard error √(se² + b̂²), b̂ = delta·se (the ratio-bias correction it allows for)
    se, delta = want["se"].to_numpy(), want["delta"].to_numpy()
    assert np.isfinite(delta).all()
    p = 2 * student.sf(np.abs(want["value"].to_numpy()) / (se * np.sqrt(1 + delta**2)), want["df"].to_numpy())
    assert np.abs(rows["p_value"].to_numpy() - p).max() <= 1e-12
    if correction is None:  # the test and the interval agree: p < 1 − level exactly when the interval excludes 0
        assert ((rows["p_value"] < 1 - level) == rows["significant"]).all()
    assert rows["significant"].any() and not rows["significant"].all()
    assert table.attrs["design_measures"] == [measure]
    # the design's flag of each difference's interval, as estimate() gives it
    assert (rows["reliable"].to_numpy(dtype=bool) == want["reliable"].to_numpy(dtype=bool)).all()
    # every other measure keeps its paired t-test (its rows' reliable: <NA>; no such column without a design)
    plain = compare(synth["runs"], synth["qrels"], ["P@5"], correction=correction, alpha=0.8)
    others = table[table["measure"] == "P@5"].reset_index(drop=True)
    assert others["reliable"].isna().all() and str(others["reliable"].dtype) == "boolean"
    pd.testing.assert_frame_equal(others.drop(columns="reliable"), plain)
    assert "design_measures" not in plain.attrs and "reliable" not in plain.columns


def test_compare_with_a_baseline_flips_the_pairs(synth):
    measure = _name("StatP({})@5", synth["design"])
    table = compare(synth["runs"], synth["qrels"], measure, baseline="run2")
    want = estimate(synth["runs"], synth["qrels"], synth["design"], "P@5", pairs=True, interval=0.95, control="none")
    pair = {(a, b): row for a, b, row in zip(want["run_a"], want["run_b"], want.itertuples(), strict=True)}
    for row in table.itertuples():
        if row.run == "run2":
            assert np.isnan(row.ci_low) and not row.significant
            continue
        forward = pair.get((row.run, "run2"))
        if forward is not None:
            assert (row.ci_low, row.ci_high) == (forward.lo, forward.hi)
            assert abs(row.difference - forward.value) <= 1e-12
            assert row.significant == forward.significant
        else:
            back = pair[("run2", row.run)]
            assert (row.ci_low, row.ci_high) == (-back.hi, -back.lo)
            assert abs(row.difference + back.value) <= 1e-12
            assert row.significant == back.significant
    text = ir_incomplete.format_report(table, differences=True)
    assert "the design-based interval of ir_incomplete.estimate" in text


# ---------------------------------------------------------------------------------------------------
# real runs: TREC-COVID round 1
# ---------------------------------------------------------------------------------------------------
def test_trec_covid_runs_equal_estimate(tmp_path):
    if not COVID.is_dir():
        pytest.skip("../shared/data/trec-covid-round1 is absent")
    names = ["BBGhelani1", "BERT", "10x10.prf.unipd.it"]
    runs = {name: str(COVID / "runs" / f"{name}.gz") for name in names}
    design = sample(runs, 400, depth=20, seed=5)
    path = tmp_path / "design.tsv"
    write_design(design, path)
    with gzip.open(COVID / "qrels.complete-topics1-30.txt.gz", "rt") as handle:
        complete = pd.read_csv(handle, sep=r"\s+", header=None, names=["query_id", "it", "doc_id", "relevance"])
    complete = complete.astype({"query_id": str, "doc_id": str})[["query_id", "doc_id", "relevance"]]
    # the judgments of the design: the complete qrels' grade, 0 for a sampled pair they never judged
    judged = design[["query_id", "doc_id"]].merge(complete, how="left", on=["query_id", "doc_id"])
    judged["relevance"] = judged["relevance"].fillna(0).astype(int)
    measures = [f"StatAP(design={str(path)!r})@20", f"StatNDCG(design={str(path)!r})@10"]
    got = evaluate(runs, judged, measures, per_query=False, interval=0.9)
    want = estimate(runs, judged, str(path), ["AP@20", "nDCG@10"], interval=0.9, control="none")
    want["measure"] = want["measure"].map(dict(zip(["AP@20", "nDCG@10"], measures, strict=True)))
    both = got.merge(want, on=["run", "measure"], suffixes=("", "_want"))
    assert len(both) == len(got) == 6
    for column in ("value", "lo", "hi"):
        assert np.abs(both[column] - both[f"{column}_want"]).max() <= 1e-12, column
    assert (both["hi"] - both["lo"]).min() > 0.01
    one = ir_measures.calc_aggregate([ir_incomplete.parse(measures[0])], judged, runs["BERT"])
    bert = both[(both["run"] == "BERT") & (both["measure"] == measures[0])]["value_want"].iloc[0]
    assert abs(one[ir_incomplete.parse(measures[0])] - bert) <= 1e-12
