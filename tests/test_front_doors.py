"""The front doors agree: what ``evaluate`` accepts, ``prepare_runs`` and the plots accept too; one way to
give an interval's level everywhere; predicted grades named in a measure string; tsv headers."""

from __future__ import annotations

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
