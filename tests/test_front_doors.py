"""The front doors agree: what ``evaluate`` accepts, ``prepare_runs`` and the plots accept too; one way to
give an interval's level everywhere; predicted grades named in a measure string; tsv headers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(7)
    qids = np.repeat([f"q{i}" for i in range(5)], 20)
    docs = np.array([f"d{i}" for i in range(len(qids))])
    grades = rng.choice([0, 0, 1, 2], len(qids))
    judged = rng.random(len(qids)) < 0.5
    qrels = pd.DataFrame({"query_id": qids[judged], "doc_id": docs[judged], "relevance": grades[judged]})
    predictions = pd.DataFrame({"query_id": qids, "doc_id": docs, "relevance": grades})
    runs = {
        name: pd.DataFrame({"query_id": qids, "doc_id": docs, "score": rng.random(len(qids))})
        for name in ("a", "b", "c")
    }
    return qrels, runs, predictions


def _write_run(path, run):
    with open(path, "w") as handle:
        for row in run.itertuples():
            handle.write(f"{row.query_id} Q0 {row.doc_id} 0 {row.score!r} x\n")


def _write_qrels(path, qrels):
    with open(path, "w") as handle:
        for row in qrels.itertuples():
            handle.write(f"{row.query_id} 0 {row.doc_id} {row.relevance}\n")


# ---------------------------------------------------------------------------------------------------
# prepare_runs accepts what evaluate accepts
# ---------------------------------------------------------------------------------------------------
def test_prepare_runs_takes_a_directory_like_evaluate(tmp_path, small):
    import ir_incomplete
    from ir_incomplete.data import prepare_runs

    qrels, runs, _ = small
    folder = tmp_path / "runs"
    folder.mkdir()
    for name, run in runs.items():
        _write_run(folder / name, run)
    prepared = prepare_runs(str(folder))
    assert list(prepared.run_names) == ["a", "b", "c"]
    direct = ir_incomplete.evaluate(str(folder), qrels, ["AP", "infAP"])
    via = ir_incomplete.evaluate(prepared, qrels, ["AP", "infAP"])
    pd.testing.assert_frame_equal(direct, via)
    both = pd.concat([run.assign(run=name) for name, run in runs.items()], ignore_index=True)
    assert list(prepare_runs(both).run_names) == ["a", "b", "c"]  # a DataFrame with a run column
    assert list(prepare_runs(runs["a"]).run_names) == ["run"]  # a single run, named as evaluate names it
    assert list(prepare_runs([str(folder / "b"), str(folder / "a")]).run_names) == ["b", "a"]


# ---------------------------------------------------------------------------------------------------
# plot_intervals(reference=) takes evaluate's table
# ---------------------------------------------------------------------------------------------------
def test_plot_intervals_reference_from_evaluate(small):
    pytest.importorskip("matplotlib")
    import ir_incomplete

    qrels, runs, _ = small
    table = ir_incomplete.evaluate(runs, qrels, "BootNDCG(b=50)@10", per_query=False, interval=0.9)
    complete = ir_incomplete.evaluate(runs, qrels, ["nDCG@10"], per_query=False)
    ax = ir_incomplete.plot_intervals(table, reference=complete, sort=False)
    (crosses,) = [line for line in ax.get_lines() if line.get_label() == "reference"]
    assert crosses.get_xdata().tolist() == pytest.approx(complete["value"].tolist(), abs=1e-12)
    per_query = ir_incomplete.evaluate(runs, qrels, ["nDCG@10"])  # per query: averaged per run
    ax = ir_incomplete.plot_intervals(table, reference=per_query, sort=False)
    (crosses,) = [line for line in ax.get_lines() if line.get_label() == "reference"]
    assert crosses.get_xdata().tolist() == pytest.approx(complete["value"].tolist(), abs=1e-12)
    both = ir_incomplete.evaluate(runs, qrels, ["nDCG@10", "AP"], per_query=False)
    with pytest.raises(
        ValueError,
        match=r"^the reference table holds 2 measures \(nDCG@10, AP\) and not BootNDCG\(b=50\)@10: pass the rows "
        r"of one of them, e.g. reference=ref\[ref\['measure'\] == 'nDCG@10'\]$",
    ):
        ir_incomplete.plot_intervals(table, reference=both)
    same = ir_incomplete.evaluate(runs, qrels, ["BootNDCG(b=50)@10", "AP"], per_query=False)
    ax = ir_incomplete.plot_intervals(table, reference=same, sort=False)  # the plotted measure's own rows
    (crosses,) = [line for line in ax.get_lines() if line.get_label() == "reference"]
    assert crosses.get_xdata().tolist() == pytest.approx(table["value"].tolist(), abs=1e-12)


# ---------------------------------------------------------------------------------------------------
# tsv: --header and one column set per output
# ---------------------------------------------------------------------------------------------------
@pytest.fixture()
def files(tmp_path, small):
    qrels, runs, predictions = small
    qrels_path = tmp_path / "qrels.txt"
    _write_qrels(qrels_path, qrels)
    paths = []
    for name, run in runs.items():
        _write_run(tmp_path / name, run)
        paths.append(str(tmp_path / name))
    pred_path = tmp_path / "pred.tsv"
    predictions.to_csv(pred_path, sep="\t", index=False)
    return str(qrels_path), paths, str(pred_path)


def test_tsv_header_gives_one_rectangular_table(files, small, capsys):
    import io

    import ir_incomplete
    from ir_incomplete.cli import main

    qrels_path, paths, _ = files
    qrels, runs, _ = small
    measures = ["BootNDCG(b=50)@10", "RBPResidual", "P@5"]
    assert main([qrels_path, *paths, *measures, "--interval", "0.9", "--header", "-p", "-1", "-q", "-n"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "run\tquery_id\tmeasure\tvalue\tresidual\tupper\tlo\thi"
    assert {line.count("\t") for line in out.splitlines()} == {7}
    table = pd.read_csv(io.StringIO(out), sep="\t", dtype={"query_id": str})
    expected = ir_incomplete.evaluate(runs, qrels, measures, interval=0.9)
    keys = ["run", "query_id", "measure"]
    pd.testing.assert_frame_equal(
        table.sort_values(keys).reset_index(drop=True),
        expected.sort_values(keys).reset_index(drop=True),
        check_exact=True,
    )
    # without --header: the same columns (--interval asks for extra columns), no header line
    assert main([qrels_path, paths[0], *measures, "--interval", "0.9"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == measures
    assert [line.count("\t") for line in lines] == [5, 5, 5]
    assert lines[2].split("\t")[2:] == ["", "", "", ""]  # P@5: no residual, upper, lo, hi
    # --header alone: the header of exactly the columns printed
    assert main([qrels_path, paths[0], "P@5", "AP", "--header"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "measure\tvalue" and len(lines) == 3
    assert main([qrels_path, paths[0], "P@5", "RBPResidual", "--header", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "query_id\tmeasure\tvalue\tresidual\tupper"
    assert lines[1].split("\t")[1:] == ["P@5", lines[1].split("\t")[2], "", ""]
    # without --header and --interval: ir_measures' lines, unchanged
    assert main([qrels_path, paths[0], "P@5", "AP"]) == 0
    assert [line.count("\t") for line in capsys.readouterr().out.splitlines()] == [1, 1]


def test_tsv_header_refused_with_jsonl(files, capsys):
    from ir_incomplete.cli import main

    qrels_path, paths, _ = files
    assert main([qrels_path, paths[0], "P@5", "--header", "-o", "jsonl"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "ir_incomplete: error: --header only works with -o tsv (jsonl records name their fields)"
    )


# ---------------------------------------------------------------------------------------------------
# interval= everywhere; percentiles= and alpha= are its aliases
# ---------------------------------------------------------------------------------------------------
def test_bootstrap_functions_take_interval(small):
    from ir_incomplete import bootstrap_measure, bootstrap_ndcg

    qrels, runs, _ = small
    measure = "BootAP(b=60)@10"
    by_interval = bootstrap_measure(runs, qrels, measure, interval=0.9, keep_replicates=False).summary
    by_percentiles = bootstrap_measure(runs, qrels, measure, percentiles=(5, 95), keep_replicates=False).summary
    pd.testing.assert_frame_equal(by_interval, by_percentiles)
    assert {"p5", "p95"} <= set(by_interval.columns)
    wide = bootstrap_ndcg(runs, qrels, b=60, interval=0.95, keep_replicates=False).summary
    assert {"p2.5", "p97.5"} <= set(wide.columns) and "p5" not in wide.columns
    same = bootstrap_ndcg(runs, qrels, b=60, interval=0.95, percentiles=[2.5, 97.5], keep_replicates=False)
    pd.testing.assert_frame_equal(same.summary, wide)
    with pytest.raises(
        ValueError,
        match=r"^interval=0\.9 and percentiles=\(2\.5, 97\.5\) disagree: interval=0\.9 means percentiles=\(5, 95\); "
        r"give only one of them$",
    ):
        bootstrap_measure(runs, qrels, measure, interval=0.9, percentiles=(2.5, 97.5))
    with pytest.raises(ValueError, match=r"^interval=1\.5 must be strictly between 0 and 1"):
        bootstrap_ndcg(runs, qrels, interval=1.5)


def test_add_bootstrap_intervals_takes_interval():
    pytest.importorskip("pyterrier")
    from ir_incomplete.bootstrap import add_bootstrap_intervals, bootstrap_ndcg

    qrels = pd.DataFrame({"qid": ["q1"] * 4, "docno": ["a", "b", "c", "d"], "label": [1, 0, 2, 0]})
    results = {"x": pd.DataFrame({"qid": ["q1"] * 4, "docno": ["a", "u", "c", "v"], "score": [4.0, 3.0, 2.0, 1.0]})}
    value = bootstrap_ndcg(results, qrels, k=5, b=200).summary["mode"].iloc[0]
    table = pd.DataFrame({"name": ["x"], "BootNDCG(b=200)@5": [value]})
    out = add_bootstrap_intervals(table, results, qrels, interval=0.8)
    assert list(out.columns) == ["name", "BootNDCG(b=200)@5", "BootNDCG(b=200)@5 p10", "BootNDCG(b=200)@5 p90"]
    pd.testing.assert_frame_equal(out, add_bootstrap_intervals(table, results, qrels, percentiles=(10, 90)))
    with pytest.raises(ValueError, match=r"^interval=0\.8 and percentiles=\(5, 95\) disagree"):
        add_bootstrap_intervals(table, results, qrels, interval=0.8, percentiles=(5, 95))


def test_ppi_takes_interval(small, files, capsys):
    from ir_incomplete.cli import main
    from ir_incomplete.ppi import ppi_evaluate, ppi_mean

    qrels, runs, predictions = small
    labelled = ["q0", "q1", "q2"]
    by_alpha = ppi_evaluate(runs, qrels, predictions, ["AP"], labelled, alpha=0.1)
    pd.testing.assert_frame_equal(ppi_evaluate(runs, qrels, predictions, ["AP"], labelled, interval=0.9), by_alpha)
    pd.testing.assert_frame_equal(ppi_evaluate(runs, qrels, predictions, ["AP"], labelled), by_alpha)
    pd.testing.assert_frame_equal(
        ppi_evaluate(runs, qrels, predictions, ["AP"], labelled, alpha=0.1, interval=0.9), by_alpha
    )
    with pytest.raises(
        ValueError,
        match=r"^interval=0\.9 and alpha=0\.2 disagree: interval=0\.9 means alpha=0\.1 \(a 1 - alpha interval\); "
        r"give only one of them$",
    ):
        ppi_evaluate(runs, qrels, predictions, ["AP"], labelled, alpha=0.2, interval=0.9)
    y, yhat, unl = np.array([0.2, 0.4, 0.5]), np.array([0.3, 0.3, 0.6]), np.array([0.1, 0.5, 0.7, 0.2])
    assert ppi_mean(y, yhat, unl, interval=0.8) == ppi_mean(y, yhat, unl, alpha=0.2)
    # the command line: --interval, or --alpha as its alias
    qrels_path, paths, _ = files
    pred_path = paths[0] + ".pred"
    _write_qrels(pred_path, predictions)
    argv = ["ppi", qrels_path, pred_path, *paths, "AP", "--labelled-queries", "q0,q1,q2", "-p", "-1"]
    assert main([*argv, "--interval", "0.8"]) == 0
    by_interval = capsys.readouterr().out
    assert main([*argv, "--alpha", "0.2"]) == 0
    assert capsys.readouterr().out == by_interval
    assert main(argv) == 0
    assert main([*argv, "--interval", "0.9"]) == 0
    default, ninety = capsys.readouterr().out.split("run\t")[1:]
    assert default == ninety != by_interval.split("run\t")[1]
    assert main([*argv, "--interval", "0.9", "--alpha", "0.2"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "ir_incomplete: error: --interval 0.9 and --alpha 0.2 disagree: --interval 0.9 means --alpha 0.1; "
        "give only one of them"
    )


# ---------------------------------------------------------------------------------------------------
# prior=predicted from measure strings: predictions='FILE' names the predictions in the measure
# ---------------------------------------------------------------------------------------------------
def _with_file(measure: str, path) -> str:
    """``measure`` (``Name(params)@k``) with ``predictions='path'`` added to its parameters."""
    head, at = measure.split("@")
    return f"{head[:-1]},predictions='{path}')@{at}"


def test_predictions_file_in_the_measure_string(small, files, monkeypatch, tmp_path):
    import ir_measures

    import ir_incomplete

    qrels, runs, _ = small
    _, _, pred_path = files
    plain = "BootAP(prior=predicted,b=60)@10"
    named = _with_file(plain, pred_path)
    measure = ir_incomplete.parse(named)
    assert repr(measure) == named and " " not in repr(measure)
    assert ir_incomplete.parse(repr(measure)) == measure == ir_measures.parse_measure(named)
    expected = ir_incomplete.evaluate(runs, qrels, plain, predictions=pred_path)
    got = ir_incomplete.evaluate(runs, qrels, named)
    assert got["measure"].unique().tolist() == [named]
    np.testing.assert_array_equal(got["value"].to_numpy(), expected["value"].to_numpy())
    # the file named in the measure comes first: other predictions passed along are not used for it
    elsewhere = ir_incomplete.evaluate(runs, qrels, named, predictions=small[2].assign(relevance=0))
    np.testing.assert_array_equal(elsewhere["value"].to_numpy(), expected["value"].to_numpy())
    # a relative path is read from the working directory; spaces are written \x20 in the canonical form
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my labels.tsv").write_bytes(Path(pred_path).read_bytes())
    spaced = ir_incomplete.parse("BootNDCG(prior=predicted,b=60,predictions='my labels.tsv')@5")
    assert repr(spaced) == "BootNDCG(prior=predicted,b=60,predictions='my\\x20labels.tsv')@5"
    assert ir_incomplete.parse(repr(spaced)) == spaced
    pd.testing.assert_frame_equal(
        ir_incomplete.evaluate(runs, qrels, spaced).drop(columns="measure"),
        ir_incomplete.evaluate(runs, qrels, "BootNDCG(prior=predicted,b=60)@5", predictions=pred_path).drop(
            columns="measure"
        ),
    )


def test_predictions_file_in_the_measure_errors(small, tmp_path):
    import ir_incomplete

    qrels, runs, _ = small
    with pytest.raises(
        ValueError,
        match=r"^BootAP: predictions='p\.tsv' is only read with prior=predicted, but prior is pool\+run; add "
        r"prior=predicted or drop predictions=$",
    ):
        ir_incomplete.parse("BootAP(predictions='p.tsv')@10")
    with pytest.raises(ValueError, match=r"^BootNDCG: predictions= names no file"):
        ir_incomplete.BootNDCG(prior="predicted", predictions="")
    missing = tmp_path / "missing.tsv"
    with pytest.raises(
        ValueError, match=rf"^predictions file '{missing}' does not exist \(named by predictions= of the measure\)$"
    ):
        ir_incomplete.evaluate(runs, qrels, _with_file("BootP(prior=predicted,b=10)@5", missing))
    with pytest.raises(
        ValueError,
        match=r"^BootAP\(prior=predicted\)@10 needs predicted grades: pass predictions= to ir_incomplete\.evaluate "
        r"\(or the bootstrap functions\) or --predictions FILE to the ir_incomplete command, or name a file in the "
        r"measure \(BootAP\(prior=predicted,predictions='labels\.tsv'\)@10\); or choose prior=pool\+run$",
    ):
        ir_incomplete.evaluate(runs, qrels, "BootAP(prior=predicted)@10")


def test_predictions_file_in_compare(small, files):
    import ir_incomplete

    qrels, runs, _ = small
    _, _, pred_path = files
    named = _with_file("BootNDCG(prior=predicted,b=60)@10", pred_path)
    table = ir_incomplete.compare(runs, qrels, [named], baseline="a")
    expected = ir_incomplete.evaluate(
        runs, qrels, "BootNDCG(prior=predicted,b=60)@10", predictions=pred_path, per_query=False
    )
    assert set(table["measure"]) == {named}
    assert table["run"].tolist() == ["a", "b", "c"]
    assert table["value"].tolist() == pytest.approx(expected["value"].tolist(), abs=1e-12)


def test_predictions_file_in_pt_experiment_and_ir_measures(small, files):
    import ir_measures

    import ir_incomplete

    pt = pytest.importorskip("pyterrier")
    qrels, runs, _ = small
    _, _, pred_path = files
    plain = "BootAP(prior=predicted,b=60)@10"
    named = _with_file(plain, pred_path)
    expected = ir_incomplete.evaluate(runs, qrels, plain, predictions=pred_path, per_query=False)
    pt_qrels = qrels.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    systems = [
        pt.Transformer.from_df(run.rename(columns={"query_id": "qid", "doc_id": "docno"})) for run in runs.values()
    ]
    topics = pd.DataFrame({"qid": sorted(qrels["query_id"].unique()), "query": "q"})
    table = pt.Experiment(systems, topics, pt_qrels, eval_metrics=[named], names=list(runs))
    assert table[named].tolist() == pytest.approx(expected["value"].tolist(), abs=1e-12)
    # ir_measures' own functions, with the measure string or the object
    for measure in (ir_measures.parse_measure(named), ir_incomplete.parse(named)):
        result = ir_measures.calc_aggregate([measure], qrels, runs["a"])
        assert result[measure] == pytest.approx(expected["value"].iloc[0], abs=1e-12)


def test_predictions_file_in_the_command_lines(small, files, capsys):
    import subprocess
    import sys

    import ir_incomplete
    from ir_incomplete.cli import main

    qrels, runs, _ = small
    qrels_path, paths, pred_path = files
    plain = "BootNDCG(prior=predicted,b=60)@10"
    named = _with_file(plain, pred_path)
    expected = ir_incomplete.evaluate({"a": runs["a"]}, qrels, plain, predictions=pred_path, per_query=False)
    proc = subprocess.run(
        [sys.executable, "-m", "ir_measures", qrels_path, paths[0], named, "-p", "-1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{named}\t{float(expected['value'].iloc[0])!r}\n"
    assert main([qrels_path, paths[0], named, "-p", "-1"]) == 0
    assert capsys.readouterr().out == proc.stdout
    # the ir_measures command cannot pass predictions: a measure that names none is one line, exit 2
    proc = subprocess.run(
        [sys.executable, "-m", "ir_measures", qrels_path, paths[0], "BootAP(prior=predicted)@100"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "ir_measures: error: BootAP(prior=predicted)@100 needs predicted grades, which the ir_measures command "
        "cannot pass: name a predictions file in the measure, e.g. "
        "\"BootAP(prior=predicted,predictions='labels.tsv')@100\", or use the ir_incomplete command with "
        "--predictions FILE\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "ir_measures", qrels_path, paths[0], _with_file(plain, "nope.tsv")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        f"ir_measures: error: {_with_file(plain, 'nope.tsv')}: predictions file 'nope.tsv' does not exist "
        "(named by predictions= of the measure)"
    ]


def test_ir_measures_command_reports_our_errors_in_one_line(files, tmp_path):
    import subprocess
    import sys

    qrels_path, paths, _ = files
    elsewhere = tmp_path / "elsewhere.tsv"
    elsewhere.write_text("query_id\tdoc_id\trelevance\n" + "".join(f"q{i}\tnowhere{i}\t1\n" for i in range(5)))
    measure = f"BootAP(prior=predicted,b=20,predictions='{elsewhere}')@10"
    proc = subprocess.run(
        [sys.executable, "-m", "ir_measures", qrels_path, paths[0], measure],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"ir_measures: error: {measure}: run 'run' has ")
    assert line.endswith(
        "but a prediction for none of them; prior=predicted would silently use the pool+run prior "
        "for all of them. Check that the predictions' query and document ids match the run's, or use "
        "prior=pool+run for it"
    )
