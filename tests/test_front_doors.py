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
