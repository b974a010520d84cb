"""The command line from files on the shapes of ``benchmarks/bench_files.py``: runs answering queries the
qrels do not judge (their rows are dropped as each run is read, when every measure is ours), judged
documents at every rank, qrels lines in any order. The output is exactly that of the evaluation of the
whole runs, bit for bit; measures computed by other ``ir_measures`` providers still get every row."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import COVID, _need

import ir_incomplete
from ir_incomplete import api, cli
from ir_incomplete.cli import evaluate as cli_evaluate
from ir_incomplete.data import readers

pa = pytest.importorskip("pyarrow")

#: ours, as the brief check of the command line uses them (bootstrap and extra columns included)
MEASURES = ["infAP", "AP", "nDCG@10", "P@10", "Bpref", "BootNDCG@10", "RBPResidual(p=0.8)@20"]


def _write_run(path, frame: pd.DataFrame) -> None:
    rank = frame.groupby("query_id", sort=False).cumcount() + 1
    lines = [
        f"{q} Q0 {d} {r} {s!r} tag"
        for q, d, r, s in zip(frame["query_id"], frame["doc_id"], rank, frame["score"], strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")


def _write_qrels(path, frame: pd.DataFrame) -> None:
    lines = [f"{q} 0 {d} {r}" for q, d, r in zip(frame["query_id"], frame["doc_id"], frame["relevance"], strict=True)]
    path.write_text("\n".join(lines) + "\n")


def _shapes(seed: int):
    """A run of 12 queries (ties, one query's rows in two places, the runs of unjudged queries between
    them) and qrels judging 7 of them, documents at every rank, grades −1..2, lines shuffled."""
    rng = np.random.default_rng(seed)
    queries = [f"q{i}" for i in range(12)]
    rows = []
    for q in queries:
        n = int(rng.integers(1, 60))
        docs = rng.choice(400, size=n, replace=False)
        scores = np.round(rng.normal(size=n), 1)  # many ties
        rows.append(pd.DataFrame({"query_id": q, "doc_id": [f"d{d}" for d in docs], "score": scores}))
    run = pd.concat(rows, ignore_index=True)
    # q3's rows in two places: its second half after the rows of q4..q6
    q3 = run.index[run["query_id"] == "q3"]
    moved = q3[len(q3) // 2 :]
    after = run.index[run["query_id"] == "q6"][-1]
    order = [i for i in run.index[: after + 1] if i not in set(moved)] + list(moved) + list(run.index[after + 1 :])
    run = run.loc[order].reset_index(drop=True)
    judged = ["q0", "q3", "q5", "q8", "q9", "q11", "q99"]  # q99: judged, never answered
    qrels = []
    for q in judged:
        answered = run.loc[run["query_id"] == q, "doc_id"].to_numpy()
        picked = list(rng.choice(answered, size=min(len(answered), 15), replace=False)) if len(answered) else []
        picked += [f"x{i}" for i in range(3)]  # judged, never retrieved
        grades = rng.choice([-1, 0, 0, 1, 2], size=len(picked))
        qrels.append(pd.DataFrame({"query_id": q, "doc_id": picked, "relevance": grades}))
    qrels = pd.concat(qrels, ignore_index=True)
    qrels = qrels.iloc[rng.permutation(len(qrels))].reset_index(drop=True)
    return run, qrels


def _cli(capsys, *args) -> str:
    assert cli.main(list(args)) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    assert "retrieves nothing" not in captured.err, captured.err  # no run here is empty
    return captured.out


def _frame(text: str) -> pd.DataFrame:
    return pd.DataFrame([json.loads(line) for line in text.splitlines()])


@pytest.fixture
def evaluated_runs(monkeypatch):
    """The number of rows of each run handed to the evaluation (captured, not changed)."""
    seen: list[dict[str, int]] = []
    original = api._evaluate_with_intervals

    def spy(runs, *args, **kwargs):
        seen.append({name: len(run) for name, run in runs.items()})
        return original(runs, *args, **kwargs)

    monkeypatch.setattr(api, "_evaluate_with_intervals", spy)
    return seen


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("topics", ["qrels", "run"])
def test_unjudged_queries_are_dropped_and_the_output_is_bit_identical(tmp_path, capsys, monkeypatch, seed, topics):
    run, qrels = _shapes(seed)
    run_path, other_path, qrels_path = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "qrels.txt"
    _write_run(run_path, run)
    _write_run(other_path, run.assign(score=-run["score"]))  # a second run, the same documents reversed
    _write_qrels(qrels_path, qrels)
    args = [str(qrels_path), str(run_path), str(other_path), *MEASURES, "-q", "-o", "jsonl", "--topics", topics]
    out = _frame(_cli(capsys, *args))

    # the same files, every row kept (the evaluation drops the unjudged queries' rows itself) ...
    monkeypatch.setattr(cli_evaluate, "_judged_queries", lambda qrels, measures: None)
    whole = _frame(_cli(capsys, *args))
    # ... and the Python API on the frames
    expected = ir_incomplete.evaluate(
        {"a.txt": run, "b.txt": run.assign(score=-run["score"])}, qrels, MEASURES, topics=topics
    )
    pd.testing.assert_frame_equal(out, whole, check_exact=True)
    judged = {"q0", "q3", "q5", "q8", "q9", "q11"} | ({"q99"} if topics == "qrels" else set())  # q99: unanswered
    assert set(out["query_id"]) == judged | {"all"}
    _assert_same_values(out[out["query_id"] != "all"], expected)


def _assert_same_values(out: pd.DataFrame, expected: pd.DataFrame) -> None:
    """The same (run, query, measure) cells with the same values and extra columns, bit for bit."""
    keys = ["run", "query_id", "measure"]
    out = out.sort_values(keys).reset_index(drop=True)
    expected = expected.sort_values(keys).reset_index(drop=True)
    assert len(out) == len(expected)
    for column in [*keys, "value", "residual", "upper"]:
        mine, theirs = out[column].astype(object), expected[column].astype(object)
        assert mine.where(mine.notna(), None).tolist() == theirs.where(theirs.notna(), None).tolist(), column


def test_the_evaluation_gets_only_the_rows_of_judged_queries(tmp_path, capsys, evaluated_runs):
    run, qrels = _shapes(0)
    _write_run(tmp_path / "run.txt", run)
    _write_qrels(tmp_path / "qrels.txt", qrels)
    _cli(capsys, str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "infAP", "P@10")
    judged = run["query_id"].isin(set(qrels["query_id"]))
    assert 0 < judged.sum() < len(run)
    assert evaluated_runs == [{"run.txt": int(judged.sum())}]


def test_a_measure_of_another_provider_gets_every_row(tmp_path, capsys, evaluated_runs):
    run, qrels = _shapes(0)
    _write_run(tmp_path / "run.txt", run)
    _write_qrels(tmp_path / "qrels.txt", qrels)
    out = _cli(capsys, str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "infAP", "Success@10", "-q")
    assert evaluated_runs == [{"run.txt": len(run)}]
    assert {line.split("\t")[0] for line in out.splitlines()} == set(qrels["query_id"]) - {"q99"} | {"q99", "all"}


def test_the_pandas_reader_and_other_files_keep_every_row(tmp_path, capsys, monkeypatch, evaluated_runs):
    run, qrels = _shapes(1)
    _write_run(tmp_path / "run.txt", run)
    _write_qrels(tmp_path / "qrels.txt", qrels)
    args = [str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), *MEASURES, "-q", "-p", "-1"]
    fast = _cli(capsys, *args)
    monkeypatch.setattr(readers, "USE_PYARROW", False)  # DataFrames: kept whole, the same output
    slow = _cli(capsys, *args)
    assert fast == slow
    assert evaluated_runs == [
        {"run.txt": int(run["query_id"].isin(set(qrels["query_id"])).sum())},
        {"run.txt": len(run)},
    ]


def test_a_run_answering_no_judged_query(tmp_path, capsys, monkeypatch):
    run, qrels = _shapes(2)
    unjudged = run[~run["query_id"].isin(set(qrels["query_id"]))]
    _write_run(tmp_path / "run.txt", unjudged)
    _write_qrels(tmp_path / "qrels.txt", qrels)
    args = [str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), *MEASURES, "-q", "-p", "-1"]
    out = _cli(capsys, *args)
    monkeypatch.setattr(cli_evaluate, "_judged_queries", lambda qrels, measures: None)
    assert out == _cli(capsys, *args)
    assert {line.split("\t")[0] for line in out.splitlines()} == set(qrels["query_id"]) | {"all"}
    monkeypatch.undo()
    code = cli.main([*args, "--topics", "run"])
    assert code == 2
    assert capsys.readouterr().err == (
        f"ir_incomplete: error: run 'run.txt' answers none of the qrels' {qrels['query_id'].nunique()} queries; with "
        "topics='run' it has no query to be evaluated on (trec_eval: 'No queries with both results and relevance "
        "info'); check its query ids, or use topics='qrels' to score it 0\n"
    )


def test_judged_rows_keeps_file_order_and_releases_the_read_table():
    table = pa.table({"query_id": ["b", "a", "c", "a", "b"], "doc_id": list("vwxyz"), "score": [5.0, 4, 3, 2, 1]})
    table = pa.concat_tables([table.slice(0, 2), table.slice(2)])  # two record batches
    kept = cli_evaluate._judged_rows(lambda: table, pa.array(["a", "b", "zz"]))
    assert kept.to_pydict() == {"query_id": ["b", "a", "a", "b"], "doc_id": list("vwyz"), "score": [5.0, 4, 2, 1]}
    assert cli_evaluate._judged_rows(lambda: table, None) is table
    frame = table.to_pandas()
    assert cli_evaluate._judged_rows(lambda: frame, pa.array(["a"])) is frame  # not a pyarrow Table: as read
    numbers = pa.table({"query_id": [1, 2], "doc_id": ["x", "y"], "score": [1.0, 2.0]})
    assert cli_evaluate._judged_rows(lambda: numbers, pa.array(["1"])) is numbers  # ids not strings: as read
    # a run none of whose queries is judged keeps its first row, so that it is not taken for an empty run
    none = cli_evaluate._judged_rows(lambda: table, pa.array(["zz"]))
    assert none.to_pydict() == {"query_id": ["b"], "doc_id": ["v"], "score": [5.0]} and none.schema == table.schema


@pytest.mark.parametrize("topics", ["qrels", "run"])
def test_forty_covid_runs_against_qrels_of_some_of_their_queries(tmp_path, capsys, topics):
    """40 TREC-COVID round-1 runs (30 queries each) against the round-1 qrels of 20 queries: the command
    line (unjudged rows dropped as read) equals the Python API on the whole runs, bit for bit."""
    runs = sorted((_need(COVID) / "runs").glob("*.gz"))[:40]
    qrels = ir_incomplete.read_trec_qrels(COVID / "qrels.round1.txt.gz")
    keep = (
        qrels["query_id"].drop_duplicates().iloc[::3].tolist() + qrels["query_id"].drop_duplicates().iloc[1::3].tolist()
    )
    part = qrels[qrels["query_id"].isin(keep)]
    _write_qrels(tmp_path / "qrels.txt", part)
    out = _frame(
        _cli(
            capsys,
            str(tmp_path / "qrels.txt"),
            *map(str, runs),
            *MEASURES,
            "-q",
            "-n",
            "-o",
            "jsonl",
            "--topics",
            topics,
        )
    )
    expected = ir_incomplete.evaluate(
        {p.name[:-3]: ir_incomplete.read_trec_run(p) for p in runs}, part, MEASURES, topics=topics
    )
    assert len(out) == 40 * len(MEASURES) * len(keep)
    _assert_same_values(out, expected)


@pytest.mark.parametrize(
    "column, bad, message",
    [
        ("doc_id", None, "run doc_id contains missing values (row 3)\n"),
        ("score", float("nan"), "run score nan is not a finite number at row 3 (query_id='qx', doc_id='d9')"),
    ],
)
def test_a_bad_row_of_an_unjudged_query_in_a_parquet_run_is_still_refused(tmp_path, capsys, column, bad, message):
    pq = pytest.importorskip("pyarrow.parquet")
    rows = {"query_id": ["q0", "q0", "qx", "qx"], "doc_id": ["d1", "d2", "d8", "d9"], "score": [2.0, 1.0, 2.0, 1.0]}
    rows[column][3] = bad
    pq.write_table(pa.table(rows), tmp_path / "run.parquet")
    _write_qrels(tmp_path / "qrels.txt", pd.DataFrame({"query_id": ["q0"], "doc_id": ["d1"], "relevance": [1]}))
    assert cli.main([str(tmp_path / "qrels.txt"), str(tmp_path / "run.parquet"), "infAP"]) == 2
    assert capsys.readouterr().err.startswith(f"ir_incomplete: error: {message}")
