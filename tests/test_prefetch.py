"""Files read in the background (``ir_incomplete.data.prefetch``) and the command line's use of them: each
file read once, the same values and the same errors as a read on the spot, no reader left running."""

from __future__ import annotations

import gzip
import threading

import pytest

from ir_incomplete import cli
from ir_incomplete.data import readers
from ir_incomplete.data.prefetch import Prefetch, regular_files


def _prefetch_threads():
    return [t for t in threading.enumerate() if t.name == "ir_incomplete-prefetch"]


def test_take_hands_out_each_result_in_any_order_and_reads_unknown_keys_on_the_spot():
    calls = []

    def job(value):
        def read():
            calls.append(value)
            return value * 10

        return read

    with Prefetch([("a", job(1)), ("b", job(2))]) as prefetch:
        assert prefetch.take("b", job(-1)) == 20  # taken before "a": "a" is still there afterwards
        assert prefetch.take("a", job(-1)) == 10
        assert prefetch.take("a", job(3)) == 30  # taken already: read again, now
        assert prefetch.take("c", job(4)) == 40  # never prefetched
    assert calls == [1, 2, 3, 4]
    assert not _prefetch_threads()


def test_a_failed_read_raises_its_own_exception_when_taken():
    def bad():
        raise ValueError("malformed run line: x.txt line 3")

    with Prefetch([("bad", bad), ("good", lambda: 5)]) as prefetch:
        assert prefetch.take("good", lambda: -1) == 5
        with pytest.raises(ValueError, match=r"^malformed run line: x.txt line 3$"):
            prefetch.take("bad", lambda: -1)


def test_leaving_the_block_stops_after_the_current_read_and_waits_for_it():
    started, done = [], []
    reading, opened = threading.Event(), threading.Event()
    prefetch = []

    def slow(key):
        def read():
            started.append(key)
            reading.set()
            # "a" is still being read when the block is left: it finishes only once close() has begun
            # (conditions with generous deadlines, not fixed sleeps: a busy machine)
            assert opened.wait(60) and prefetch[0]._stop.wait(60)
            done.append(key)
            return key

        return read

    with pytest.raises(RuntimeError):
        with Prefetch([(k, slow(k)) for k in "abc"]) as reader:
            prefetch.append(reader)
            opened.set()
            assert reading.wait(60)  # "a" is being read
            raise RuntimeError("e.g. a bad measure string")
    assert started == done == ["a"]  # "a" finished, "b" and "c" never started
    assert not _prefetch_threads()


def test_regular_files_lists_files_and_the_visible_files_of_directories(tmp_path):
    (tmp_path / "runs").mkdir()
    for name in ("b.txt", "a.txt", ".hidden"):
        (tmp_path / "runs" / name).write_text("x")
    (tmp_path / "runs" / "sub").mkdir()
    (tmp_path / "one.txt").write_text("x")
    items = [str(tmp_path / "one.txt"), str(tmp_path / "runs"), "AP", str(tmp_path / "missing")]
    assert regular_files(items) == [
        str(tmp_path / "one.txt"),
        str(tmp_path / "runs" / "a.txt"),
        str(tmp_path / "runs" / "b.txt"),
    ]


QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\n"
RUN = "q1 Q0 d1 1 3.0 t\nq1 Q0 d9 2 2.0 t\nq1 Q0 d3 3 1.0 t\nq2 Q0 d2 1 1.0 t\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r1").write_text(RUN)
    (tmp_path / "runs" / "r2").write_text(RUN.replace("d9", "d2"))
    return tmp_path


@pytest.fixture
def counted_reads(monkeypatch):
    """Every call of the TREC reader, as (path, kind)."""
    calls = []
    original = readers._read_trec_any

    def counting(source, kind):
        calls.append((str(source), kind))
        return original(source, kind)

    monkeypatch.setattr(readers, "_read_trec_any", counting)
    return calls


def test_the_command_reads_each_file_once_and_prints_what_a_read_on_the_spot_gives(capsys, files, counted_reads):
    argv = [str(files / "qrels.txt"), str(files / "runs"), "AP", "P@2"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert sorted(counted_reads) == sorted(
        [(str(files / "qrels.txt"), "qrels"), (str(files / "runs" / "r1"), "run"), (str(files / "runs" / "r2"), "run")]
    )
    # AP: r1 (1/1 + 2/3) / 2 for q1, 0 for q2; r2 (1/1 + 2/3) / 2 for q1 (d2 is judged 0), 0 for q2
    assert out.splitlines() == ["r1\tAP\t0.4167", "r1\tP@2\t0.2500", "r2\tAP\t0.4167", "r2\tP@2\t0.2500"]
    assert not _prefetch_threads()


@pytest.mark.parametrize("use_pyarrow", [True, False], ids=["pyarrow", "pandas"])
@pytest.mark.parametrize("broken", ["qrels", "run"])
def test_a_malformed_file_read_in_the_background_is_the_same_one_line_error(
    capsys, monkeypatch, files, broken, use_pyarrow
):
    monkeypatch.setattr(readers, "USE_PYARROW", use_pyarrow)
    target = files / ("qrels.txt" if broken == "qrels" else "runs/r2")
    target.write_text(target.read_text() + "q3 only three\n")
    assert cli.main([str(files / "qrels.txt"), str(files / "runs"), "AP"]) == 2
    fields = (
        "4 fields (query_id iteration doc_id relevance)"
        if broken == "qrels"
        else "6 fields (query_id q0 doc_id rank score tag)"
    )
    assert capsys.readouterr().err == (
        f"ir_incomplete: error: malformed {broken} line: {target}:5: expected {fields}, found 3: 'q3 only three'\n"
    )
    assert not _prefetch_threads()


def test_a_bad_measure_leaves_no_reader_running(capsys, files, counted_reads):
    assert cli.main([str(files / "qrels.txt"), str(files / "runs"), "NoSuchMeasure"]) == 2
    assert "unknown measure 'NoSuchMeasure'" in capsys.readouterr().err
    assert not _prefetch_threads()


def test_a_truncated_gz_run_read_in_the_background_is_a_clear_error(capsys, files):
    whole = gzip.compress(RUN.encode() * 200)
    (files / "runs" / "r2").unlink()
    (files / "runs" / "r2.gz").write_bytes(whole[: len(whole) // 2])
    assert cli.main([str(files / "qrels.txt"), str(files / "runs"), "AP"]) == 2
    assert capsys.readouterr().err == (
        f"ir_incomplete: error: cannot read run file {files / 'runs' / 'r2.gz'}: truncated or corrupt "
        "(Compressed file ended before the end-of-stream marker was reached)\n"
    )
    assert not _prefetch_threads()


def test_two_runs_of_one_name_are_refused_while_their_files_are_read_in_the_background(capsys, files):
    (files / "runs" / "r1.gz").write_bytes(gzip.compress(RUN.encode()))
    assert cli.main([str(files / "qrels.txt"), str(files / "runs"), "AP"]) == 2
    err = capsys.readouterr().err
    assert "two runs are named 'r1'" in err
    assert not _prefetch_threads()
