"""The third round of bad inputs at the input layer: tables holding several runs, empty and cut-off files,
pipes, very long ids and predictions files; each gives the right value or one clear error naming the file."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from ir_incomplete import evaluate, read_trec_run
from ir_incomplete.cli import main
from ir_incomplete.data import ids

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

_MASK = (1 << 64) - 1


def _reference_hash(text: str) -> int:
    """The UTF-8 hash of :mod:`ir_incomplete.data.ids` written word by word, in plain Python."""
    data = text.encode()
    words = [int.from_bytes(data[i : i + 8].ljust(8, b"\0"), "little") for i in range(0, max(len(data), 1), 8)]
    k_word, k_length = int(ids._K_WORD), int(ids._K_LENGTH)
    h = (words[0] * k_word) & _MASK
    h ^= h >> 29
    for word in words[1:]:
        x = ((word ^ h) * k_word) & _MASK
        h = x ^ (x >> 29)
    h ^= (len(data) * k_length) & _MASK
    for mult in (int(ids._FMIX1), int(ids._FMIX2)):
        h ^= h >> 33
        h = (h * mult) & _MASK
    h ^= h >> 33
    return h - (1 << 64) if h >= 1 << 63 else h


# -- hashing ids: time in proportion to their bytes, the same hashes -----------------------------------------
@pytest.mark.parametrize("n_long", [1, 63, 64, 200])
def test_long_ids_hash_as_the_word_by_word_definition(n_long):
    rng = np.random.default_rng(n_long)
    texts = ["", "a", "é" * 5, "x" * 8, "y" * 9]
    texts += ["".join(map(chr, rng.integers(32, 0x3000, int(rng.integers(9, 400))))) for _ in range(n_long)]
    array = pa.array(texts, type=pa.large_string())
    expected = [_reference_hash(t) for t in texts]
    for values in (array, array.slice(3), pa.chunked_array([array.slice(0, 4), array.slice(4)])):
        start = len(texts) - len(values)
        assert ids.utf8_hashes(values).tolist() == expected[start:]


def test_a_megabyte_id_is_hashed_in_time_proportional_to_its_size():
    # each word of the longest id was one numpy step: 6.5-8 s for a 1 MB id, minutes for 9 MB
    text = "d" + "x" * 4_000_000
    array = pa.array([text, "a", "b" * 20], type=pa.large_string())
    start = time.perf_counter()
    hashes = ids.utf8_hashes(array)
    assert time.perf_counter() - start < 5.0  # about 0.6 s; 30 s and more before
    assert hashes[0] == _reference_hash(text)


# -- tables holding several runs: one run per value of 'run', whatever the table's form -----------------------


QRELS = pd.DataFrame({"query_id": ["1"] * 4, "doc_id": ["a", "b", "c", "d"], "relevance": [1, 0, 1, 0]})
# A ranks a (rel), b, d: AP (1/1) / 2 = 0.5; B ranks b, d, c (rel): AP (1/3) / 2 = 1/6
STACKED = pd.DataFrame(
    {
        "run": ["A", "A", "A", "B", "B", "B"],
        "query_id": ["1"] * 6,
        "doc_id": ["a", "b", "d", "b", "d", "c"],
        "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0],
    }
)
EXPECTED = {("A", "AP"): 0.5, ("A", "NumRet"): 3.0, ("B", "AP"): 1 / 6, ("B", "NumRet"): 3.0}


def summary(table) -> dict:
    return {(r, m): v for r, m, v in zip(table["run"], table["measure"], table["value"], strict=True)}


def _qrels_file(path) -> str:
    path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS.itertuples(index=False)))
    return str(path)


def test_a_dataframe_with_a_run_column_is_one_run_per_value():
    assert summary(evaluate(STACKED, QRELS, ["AP", "NumRet"], per_query=False)) == pytest.approx(EXPECTED)


@pytest.mark.parametrize("interleaved", [False, True])
def test_a_pyarrow_table_with_a_run_column_is_one_run_per_value(interleaved):
    frame = STACKED.iloc[[0, 3, 1, 4, 2, 5]] if interleaved else STACKED
    table = pa.Table.from_pandas(frame, preserve_index=False)
    got = evaluate(table, QRELS, ["AP", "NumRet"], per_query=False)  # was one merged run: AP 0.583, NumRet 6
    assert summary(got) == pytest.approx(EXPECTED)
    assert list(got["run"].unique()) == ["A", "B"]


def test_a_parquet_file_with_a_run_column_is_one_run_per_value(tmp_path):
    pq.write_table(pa.Table.from_pandas(STACKED, preserve_index=False), tmp_path / "both.parquet")
    path = str(tmp_path / "both.parquet")
    assert summary(evaluate(path, QRELS, ["AP", "NumRet"], per_query=False)) == pytest.approx(EXPECTED)
    assert summary(evaluate(str(tmp_path), QRELS, ["AP", "NumRet"], per_query=False)) == pytest.approx(EXPECTED)
    assert summary(evaluate([path], QRELS, ["AP", "NumRet"], per_query=False)) == pytest.approx(EXPECTED)
    assert list(read_trec_run(path).columns) == ["query_id", "doc_id", "score", "run"]


def test_the_command_line_scores_a_parquet_file_with_a_run_column_as_one_run_per_value(tmp_path, capsys):
    pq.write_table(pa.Table.from_pandas(STACKED, preserve_index=False), tmp_path / "both.parquet")
    code = main([_qrels_file(tmp_path / "qrels"), str(tmp_path / "both.parquet"), "AP", "NumRet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.splitlines() == ["A\tAP\t0.5000", "A\tNumRet\t3.0000", "B\tAP\t0.1667", "B\tNumRet\t3.0000"]


def test_two_parquet_files_naming_the_same_run_are_refused(tmp_path, capsys):
    for name in ("one", "two"):
        pq.write_table(pa.Table.from_pandas(STACKED, preserve_index=False), tmp_path / f"{name}.parquet")
    code = main([_qrels_file(tmp_path / "qrels"), str(tmp_path / "one.parquet"), str(tmp_path / "two.parquet"), "AP"])
    _, err = capsys.readouterr()
    assert code == 2
    assert f"two runs are named 'A' ('{tmp_path / 'one.parquet'}' and '{tmp_path / 'two.parquet'}')" in err


@pytest.mark.parametrize("form", ["frame", "table"])
def test_a_table_of_several_runs_given_as_one_run_is_refused(form):
    run = STACKED if form == "frame" else pa.Table.from_pandas(STACKED, preserve_index=False)
    with pytest.raises(ValueError, match=r"run 'x' has a 'run' column with 2 values \('A', 'B'\): it holds several"):
        evaluate({"x": run}, QRELS, ["AP"])
    one = STACKED[STACKED["run"] == "A"]
    one = one if form == "frame" else pa.Table.from_pandas(one, preserve_index=False)
    assert summary(evaluate({"x": one}, QRELS, ["AP"], per_query=False)) == pytest.approx({("x", "AP"): 0.5})


def test_a_table_whose_run_column_has_a_missing_value_is_refused():
    table = pa.Table.from_pandas(STACKED.assign(run=["A", "A", None, "B", "B", "B"]), preserve_index=False)
    with pytest.raises(ValueError, match=r"the 'run' column has 1 missing value\(s\), first at row 2"):
        evaluate(table, QRELS, ["AP"])


# -- empty and cut-off files ----------------------------------------------------------------------------------
def test_an_empty_gz_run_is_refused_as_a_truncated_one(tmp_path, capsys):
    (tmp_path / "cut.gz").write_bytes(b"")
    path = str(tmp_path / "cut.gz")
    message = f"cannot read run file {path}: truncated or corrupt (an empty file, not gzip data)"
    with pytest.raises(ValueError, match=re.escape(message)):
        evaluate(path, QRELS, ["AP"])
    code = main([_qrels_file(tmp_path / "qrels"), path, "AP"])
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", f"ir_incomplete: error: {message}\n")


def test_an_empty_gz_qrels_file_is_refused(tmp_path):
    (tmp_path / "qrels.gz").write_bytes(b"")
    with pytest.raises(ValueError, match=r"cannot read qrels file .*qrels\.gz: truncated or corrupt \(an empty"):
        evaluate(STACKED[STACKED["run"] == "A"], str(tmp_path / "qrels.gz"), ["AP"])


EMPTY_MEASURES = [["AP"], ["P@1"], ["AP", "P@1"]]  # ours, another provider's, both


@pytest.mark.parametrize("measures", EMPTY_MEASURES)
@pytest.mark.parametrize("form", ["text", "parquet"])
def test_an_empty_run_is_scored_with_one_warning(tmp_path, measures, form):
    if form == "text":
        (tmp_path / "empty").write_text("")
    else:
        pq.write_table(
            pa.Table.from_pandas(STACKED.iloc[:0], preserve_index=False).drop(["run"]), tmp_path / "empty.parquet"
        )
    path = str(tmp_path / ("empty" if form == "text" else "empty.parquet"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = evaluate({"empty": path}, QRELS, measures)
    assert [str(w.message) for w in caught] == [
        "run 'empty' retrieves nothing: it has no rows, so every query is scored as answered by no document"
    ]
    assert got["value"].tolist() == [0.0] * len(measures)


def test_the_command_line_warns_once_of_an_empty_run(tmp_path, capsys):
    (tmp_path / "empty").write_text("")
    code = main([_qrels_file(tmp_path / "qrels"), str(tmp_path / "empty"), "AP", "P@1"])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.splitlines() == ["AP\t0.0000", "P@1\t0.0000"]
    assert err == (
        "ir_incomplete: warning: run 'empty' retrieves nothing: it has no rows, so every query is scored as "
        "answered by no document\n"
    )


# -- named pipes: read once -----------------------------------------------------------------------------------
RUN_TEXT = "1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 d 3 1 t\n"


def _feed(path, data: bytes) -> threading.Thread:
    """Write ``data`` into the named pipe ``path`` (in a thread: opening a pipe waits for its reader)."""

    def write():
        with open(path, "wb") as handle:
            handle.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def _unblock(path) -> None:
    """Give a reader still waiting on the pipe ``path`` an end of file (after a failed test)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # no reader waiting
        return
    os.close(fd)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("compressed", [False, True])
def test_a_named_pipe_run_and_qrels_are_read_once_from_python(tmp_path, compressed):
    run, qrels = str(tmp_path / "run"), str(tmp_path / "qrels")
    os.mkfifo(run)
    os.mkfifo(qrels)
    data = RUN_TEXT.encode()
    _feed(run, gzip.compress(data) if compressed else data)  # <(cat run.gz): gzip data without .gz
    _feed(qrels, "".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS.itertuples(index=False)).encode())
    result: dict = {}

    def work():
        try:
            result["table"] = evaluate(run, qrels, ["AP", "P@1"], topics="run", per_query=False)
        except BaseException as exc:  # reported by the test
            result["error"] = exc

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(60)
    alive = worker.is_alive()
    for path in (run, qrels):
        _unblock(path)
    assert not alive, "evaluate waited for a second reading of a named pipe"
    assert "error" not in result, result.get("error")
    assert summary(result["table"]) == pytest.approx({("run", "AP"): 0.5, ("run", "P@1"): 1.0})


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_run_and_qrels_are_read_once_on_the_command_line(tmp_path):
    run, qrels = str(tmp_path / "run"), str(tmp_path / "qrels")
    os.mkfifo(run)
    os.mkfifo(qrels)
    _feed(run, RUN_TEXT.encode())
    _feed(qrels, "".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS.itertuples(index=False)).encode())
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ir_incomplete", qrels, run, "AP", "P@1"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
    finally:
        for path in (run, qrels):
            _unblock(path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["AP\t0.5000", "P@1\t1.0000"]
