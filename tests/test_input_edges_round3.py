"""The third round of bad inputs at the input layer: tables holding several runs, empty and cut-off files,
pipes, very long ids and predictions files; each gives the right value or one clear error naming the file."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import threading
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import calls_into_c

from ir_incomplete import evaluate, read_trec_run
from ir_incomplete.cli import main
from ir_incomplete.data import ids
from ir_incomplete.judging import judge_next
from ir_incomplete.ppi import ppi_evaluate

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
    # counted in steps, not seconds (a busy machine): 31 calls into numpy and pyarrow; more than 200,000
    # before (one numpy step per 8 bytes of the longest id)
    hashes, steps = calls_into_c(lambda: ids.utf8_hashes(array), limit=10_000)
    assert steps < 10_000
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


EMPTY_MEASURES = [["AP"], ["P@1"], ["AP", "P@1"]]  # ours, another provider's, both


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


@pytest.mark.parametrize("measures", EMPTY_MEASURES)
def test_a_parquet_file_of_several_runs_given_as_one_run_is_refused(tmp_path, measures):
    pq.write_table(pa.Table.from_pandas(STACKED, preserve_index=False), tmp_path / "both.parquet")
    path = str(tmp_path / "both.parquet")
    with pytest.raises(ValueError, match=rf"run '{re.escape(path)}' has a 'run' column with 2 values \('A', 'B'\)"):
        evaluate({"x": path}, QRELS, measures)
    pq.write_table(pa.Table.from_pandas(STACKED.iloc[:3], preserve_index=False), tmp_path / "one.parquet")
    got = evaluate({"x": str(tmp_path / "one.parquet")}, QRELS, ["AP"], per_query=False)
    assert summary(got) == pytest.approx({("x", "AP"): 0.5})


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


def _reading_pipes(call, pipes: list[str], what: str):
    """``call()``'s result, run in a thread that may wait at most 60 s: a call that opens one of the named
    ``pipes`` a second time waits for a writer that never comes, and fails the test instead of hanging."""
    result: dict = {}

    def work():
        try:
            result["value"] = call()
        except BaseException as exc:  # reported by the test
            result["error"] = exc

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(60)
    alive = worker.is_alive()
    for path in pipes:
        _unblock(path)
    assert not alive, f"{what} waited for a second reading of a named pipe"
    assert "error" not in result, result.get("error")
    return result["value"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("compressed", [False, True])
def test_a_named_pipe_run_and_qrels_are_read_once_from_python(tmp_path, compressed):
    run, qrels = str(tmp_path / "run"), str(tmp_path / "qrels")
    os.mkfifo(run)
    os.mkfifo(qrels)
    data = RUN_TEXT.encode()
    _feed(run, gzip.compress(data) if compressed else data)  # <(cat run.gz): gzip data without .gz
    _feed(qrels, "".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS.itertuples(index=False)).encode())
    table = _reading_pipes(
        lambda: evaluate(run, qrels, ["AP", "P@1"], topics="run", per_query=False), [run, qrels], "evaluate"
    )
    assert summary(table) == pytest.approx({("run", "AP"): 0.5, ("run", "P@1"): 1.0})


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


# -- predictions: one reader, one meaning, errors naming the predictions file ----------------------------------

PRED_QRELS = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "c"], "relevance": [1, 1]})
PREDICTIONS = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["b", "d"], "relevance": [1, 0]})
PRED_RUN = STACKED[STACKED["run"] == "A"].drop(columns="run")  # a, b, d


def _header_table(path, frame=PREDICTIONS, bom=False) -> str:
    text = "query_id\tdoc_id\trelevance\n" + "".join(f"{q}\t{d}\t{r}\n" for q, d, r in frame.itertuples(index=False))
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return str(path)


def _prediction_forms(tmp_path) -> dict:
    pq.write_table(pa.Table.from_pandas(PREDICTIONS, preserve_index=False), tmp_path / "pred.parquet")
    return {
        "frame": PREDICTIONS,
        "table": pa.Table.from_pandas(PREDICTIONS, preserve_index=False),
        "parquet": str(tmp_path / "pred.parquet"),
        "header": _header_table(tmp_path / "pred.tsv"),
        "bom": _header_table(tmp_path / "bom.tsv", bom=True),
    }


@pytest.mark.parametrize("form", ["table", "parquet", "header", "bom"])
def test_predictions_in_every_form_give_the_values_of_a_dataframe(tmp_path, form):
    given = _prediction_forms(tmp_path)[form]
    measure = ["BootAP(prior=predicted, b=50)"]
    expected = evaluate({"A": PRED_RUN}, PRED_QRELS, measure, predictions=PREDICTIONS)
    pd.testing.assert_frame_equal(evaluate({"A": PRED_RUN}, PRED_QRELS, measure, predictions=given), expected)
    pd.testing.assert_frame_equal(
        judge_next({"A": PRED_RUN, "B": PRED_RUN.iloc[::-1]}, None, budget=3, predictions=given),
        judge_next({"A": PRED_RUN, "B": PRED_RUN.iloc[::-1]}, None, budget=3, predictions=PREDICTIONS),
    )


PPI_HUMAN = pd.DataFrame(
    {"query_id": ["q0", "q0", "q1", "q1", "q2", "q2"], "doc_id": ["a", "b"] * 3, "relevance": [1, 0, 0, 1, 1, 1]}
)
PPI_PRED = pd.DataFrame(
    {"query_id": [q for q in ("q0", "q1", "q2", "q3", "q4") for _ in "ab"], "doc_id": ["a", "b"] * 5}
).assign(relevance=[1, 0, 1, 1, 1, 0, 0, 1, 1, 1])
PPI_RUN = pd.DataFrame(
    {"query_id": [q for q in ("q0", "q1", "q2", "q3", "q4") for _ in "ab"], "doc_id": ["a", "b"] * 5, "score": 1.0}
).assign(score=lambda f: [2.0, 1.0] * 5)


@pytest.mark.parametrize("form", ["table", "parquet", "header", "bom"])
def test_ppi_reads_predictions_in_every_form(tmp_path, form):
    pq.write_table(pa.Table.from_pandas(PPI_PRED, preserve_index=False), tmp_path / "pred.parquet")
    given = {
        "table": pa.Table.from_pandas(PPI_PRED, preserve_index=False),
        "parquet": str(tmp_path / "pred.parquet"),
        "header": _header_table(tmp_path / "pred.tsv", PPI_PRED),
        "bom": _header_table(tmp_path / "bom.tsv", PPI_PRED, bom=True),
    }[form]
    expected = ppi_evaluate({"A": PPI_RUN}, PPI_HUMAN, PPI_PRED, ["AP"])
    pd.testing.assert_frame_equal(ppi_evaluate({"A": PPI_RUN}, PPI_HUMAN, given, ["AP"]), expected)


def _truncated_gz(path) -> str:
    data = gzip.compress(("query_id\tdoc_id\trelevance\n" + "1\tb\t1\n" * 2000).encode())
    path.write_bytes(data[: len(data) // 2])
    return str(path)


def test_a_truncated_gz_predictions_file_is_one_error_naming_it(tmp_path):
    path = _truncated_gz(tmp_path / "pred.gz")
    with pytest.raises(ValueError, match=rf"^cannot read predictions file {re.escape(path)}: truncated or corrupt \("):
        evaluate({"A": PRED_RUN}, PRED_QRELS, ["BootAP(prior=predicted)"], predictions=path)


def _cli_files(tmp_path) -> tuple[str, str]:
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in PPI_HUMAN.itertuples(index=False)))
    run = tmp_path / "A"
    run.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, d, s in PPI_RUN.itertuples(index=False)))
    return str(qrels), str(run)


def _commands(qrels: str, run: str, predictions: str) -> list[list[str]]:
    return [
        [qrels, run, "BootAP(prior=predicted)", "--predictions", predictions],
        ["ppi", qrels, predictions, run, "AP"],
        ["judge-next", "--runs", run, "--qrels", qrels, "--budget", "2", "--predictions", predictions],
    ]


def test_the_command_line_reports_a_truncated_predictions_file_in_one_line(tmp_path, capsys):
    path = _truncated_gz(tmp_path / "pred.gz")
    for argv in _commands(*_cli_files(tmp_path), path):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 2, argv
        assert err.startswith(f"ir_incomplete: error: cannot read predictions file {path}: truncated or corrupt ("), err
        assert err.count("\n") == 1 and "Traceback" not in err


def test_errors_in_a_predictions_file_call_it_a_predictions_file(tmp_path, capsys):
    bad = tmp_path / "pred"
    bad.write_text("q0 0 a 1\nq0 0 b x\n")
    for argv in _commands(*_cli_files(tmp_path), str(bad)):
        code = main(argv)
        _, err = capsys.readouterr()
        assert code == 2, argv
        assert err == (
            f"ir_incomplete: error: malformed predictions line: {bad}:2: relevance 'x' is not a number: 'q0 0 b x'\n"
        )


def test_every_command_takes_a_predictions_table_with_a_header(tmp_path, capsys):
    qrels, run = _cli_files(tmp_path)
    header = _header_table(tmp_path / "pred.tsv", PPI_PRED)
    trec = tmp_path / "pred.qrels"
    trec.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in PPI_PRED.itertuples(index=False)))
    for with_header, as_qrels in zip(_commands(qrels, run, header), _commands(qrels, run, str(trec)), strict=True):
        code = main(with_header)
        out, err = capsys.readouterr()
        assert code == 0, err
        assert main(as_qrels) == 0
        expected, _ = capsys.readouterr()
        assert out.replace(header, str(trec)) == expected


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_every_command_reads_predictions_from_a_named_pipe_once(tmp_path, capsys):
    """``--predictions <(zcat labels.gz)``: the evaluation command and judge-next took only regular files
    ("does not exist"); each command reads the pipe once and prints what it prints for the file."""
    qrels, run = _cli_files(tmp_path)
    text = "".join(f"{q} 0 {d} {r}\n" for q, d, r in PPI_PRED.itertuples(index=False))
    plain = tmp_path / "pred.qrels"
    plain.write_text(text)
    for i, from_file in enumerate(_commands(qrels, run, str(plain))):
        pipe = str(tmp_path / f"pipe{i}")
        from_pipe = _commands(qrels, run, pipe)[i]
        os.mkfifo(pipe)
        _feed(pipe, text.encode())
        code = _reading_pipes(lambda argv=from_pipe: main(argv), [pipe], from_pipe[0])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert main(from_file) == 0
        expected, _ = capsys.readouterr()
        assert out.replace(pipe, str(plain)) == expected, from_pipe
