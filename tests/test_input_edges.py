"""Every input path gives the right number or a clear error: one-shot iterables, run names, huge
grades, float ids, TREC files (malformed lines, truncated ``.gz``), empty qrels and the exit codes of
the command lines."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tracemalloc
import warnings
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ir_incomplete
from ir_incomplete import evaluate
from ir_incomplete.cli import main
from ir_incomplete.data import GRADE_RANGE, MAX_INDEXED_GRADE, Qrels, read_trec_qrels, read_trec_run
from ir_incomplete.grammar import MeasureSyntaxError

REPO_ROOT = Path(__file__).resolve().parents[1]

QRELS = [("1", "a", 1), ("1", "b", 0), ("1", "c", 1), ("2", "a", 2), ("2", "d", 0)]
RUN = [("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0), ("2", "d", 5.0), ("2", "a", 4.0)]
MIXED = ["infAP", "Bpref", "AP", "P@1", "nDCG@10"]  # ours and ir_measures' (pytrec_eval) in one call


def qrels_frame(rows=QRELS):
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def run_frame(rows=RUN):
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


def values(table) -> dict:
    cols = [c for c in ("run", "query_id", "measure") if c in table.columns]
    return {tuple(k): v for *k, v in table[cols + ["value"]].itertuples(index=False)}


def run_text(rows=RUN) -> str:
    return "".join(f"{q} Q0 {d} {i} {s!r} tag\n" for i, (q, d, s) in enumerate(rows, 1))


def qrels_text(rows=QRELS) -> str:
    return "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows)


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ir_incomplete: error: "), err
    assert "Traceback" not in err
    return lines[0]


# ---------------------------------------------------------------------------------------------------------
# one-shot iterables
# ---------------------------------------------------------------------------------------------------------
def test_generator_run_is_read_once_for_every_measure():
    expected = values(evaluate(run_frame(), qrels_frame(), MIXED))
    assert expected[("run", "1", "AP")] == pytest.approx(5 / 6)  # ir_measures' share is not empty
    generator = (ir_measures.ScoredDoc(*row) for row in RUN)
    assert values(evaluate(generator, qrels_frame(), MIXED)) == expected
    named = {"x": (ir_measures.ScoredDoc(*row) for row in RUN)}
    got = values(evaluate(named, qrels_frame(), MIXED))
    assert got == {("x",) + k[1:]: v for k, v in expected.items()}


def test_generator_qrels_and_run_together():
    expected = values(evaluate(run_frame(), qrels_frame(), MIXED))
    qrels = (ir_measures.Qrel(*row) for row in QRELS)
    run = (ir_measures.ScoredDoc(*row) for row in RUN)
    assert values(evaluate(run, qrels, MIXED)) == expected


def test_generator_through_ir_measures_and_provider():
    measures = [ir_incomplete.infAP(c=1.5), ir_measures.AP, ir_measures.P @ 1]
    expected = ir_measures.calc_aggregate(measures, qrels_frame(), run_frame())
    got = ir_measures.calc_aggregate(
        measures, (ir_measures.Qrel(*r) for r in QRELS), (ir_measures.ScoredDoc(*r) for r in RUN)
    )
    assert got == expected and got[ir_measures.AP] > 0
    ours = ir_incomplete.provider.calc_aggregate(
        [ir_incomplete.infAP(c=1.5)], (ir_measures.Qrel(*r) for r in QRELS), (ir_measures.ScoredDoc(*r) for r in RUN)
    )
    assert ours[ir_incomplete.infAP(c=1.5)] == expected[ir_incomplete.infAP(c=1.5)]


# ---------------------------------------------------------------------------------------------------------
# run names
# ---------------------------------------------------------------------------------------------------------
def test_directory_with_run_and_run_gz_is_refused(tmp_path):
    (tmp_path / "run1").write_text(run_text())
    with gzip.open(tmp_path / "run1.gz", "wt") as handle:
        handle.write(run_text(RUN[:2]))
    with pytest.raises(ValueError) as info:
        evaluate(tmp_path, qrels_frame(), ["infAP"])
    message = str(info.value)
    assert "'run1'" in message and str(tmp_path / "run1") in message and str(tmp_path / "run1.gz") in message


def test_same_file_name_in_two_directories_is_refused(tmp_path):
    for folder in ("A", "B"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "run1").write_text(run_text())
    paths = [str(tmp_path / "A" / "run1"), str(tmp_path / "B" / "run1")]
    with pytest.raises(ValueError) as info:
        evaluate(paths, qrels_frame(), ["infAP"])
    assert paths[0] in str(info.value) and paths[1] in str(info.value)
    # the same file twice is one run
    table = evaluate([paths[0], paths[0]], qrels_frame(), ["infAP"])
    assert set(table["run"]) == {"run1"}


def test_keys_that_become_the_same_name_are_refused():
    with pytest.raises(ValueError) as info:
        evaluate({1: run_frame(), "1": run_frame(RUN[:2])}, qrels_frame(), ["infAP"])
    assert "key 1" in str(info.value) and "key '1'" in str(info.value)


def test_run_column_values_that_become_the_same_name_are_refused():
    frame = pd.concat([run_frame().assign(run=1), run_frame().assign(run="1")], ignore_index=True)
    with pytest.raises(ValueError) as info:
        evaluate(frame, qrels_frame(), ["infAP"])
    assert "'run' value 1" in str(info.value) and "'run' value '1'" in str(info.value)


def test_run_column_with_missing_values_names_the_row():
    frame = run_frame().assign(run=["x", "x", None, "x", "x"])
    frame.index = [10, 11, 12, 13, 14]
    before = frame.copy()
    with pytest.raises(ValueError) as info:
        evaluate(frame, qrels_frame(), ["infAP"])
    assert "'run' column" in str(info.value) and "row 2" in str(info.value) and "index 12" in str(info.value)
    pd.testing.assert_frame_equal(frame, before)


def test_cli_refuses_two_runs_of_one_name_in_a_directory(capsys, tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "run1").write_text(run_text())
    with gzip.open(tmp_path / "runs" / "run1.gz", "wt") as handle:
        handle.write(run_text())
    qrels = tmp_path / "qrels"
    qrels.write_text(qrels_text())
    code, out, err = run_cli(capsys, qrels, tmp_path / "runs", "AP")
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert "run1.gz" in line and "'run1'" in line


# ---------------------------------------------------------------------------------------------------------
# grades
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("grade", [1e20, -1e20, 2.0**31, float(2**63), 2**31, -(2**40)])
def test_grade_outside_the_range_is_refused(grade):
    qrels = qrels_frame([("1", "a", grade), ("1", "b", 0)])
    with pytest.raises(ValueError) as info:
        evaluate(run_frame(), qrels, ["infAP"])
    message = str(info.value)
    assert "'1'" in message and "'a'" in message and "range" in message


def test_huge_object_grade_is_refused():
    with pytest.raises(ValueError, match="range"):
        Qrels.from_any({"1": {"a": 10**30, "b": 0}})


def test_largest_grade_costs_no_memory_and_counts_as_relevant():
    top = GRADE_RANGE[1]
    small = qrels_frame([("1", "a", 1), ("1", "b", 0), ("1", "c", 5), ("2", "a", 1)])
    huge = qrels_frame([("1", "a", top), ("1", "b", 0), ("1", "c", 5), ("2", "a", top)])
    measures = ["infAP", "indAP", "subAP", "Bpref", "Bpref10", "RankEff", "infAP(c=1.5)@2"]
    expected = evaluate(run_frame(), small, measures)
    tracemalloc.start()
    try:
        got = evaluate(run_frame(), huge, measures)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20  # a table indexed by grade value would take gigabytes
    pd.testing.assert_frame_equal(got, expected)
    judged = Qrels.from_any(huge)
    assert judged.max_grade == top and list(judged.grade_levels) == [0, 5, top]
    np.testing.assert_array_equal(judged.n_relevant(6), [1, 1])


def test_grades_above_the_indexed_limit_are_refused_by_value_indexed_measures():
    qrels = qrels_frame([("1", "a", MAX_INDEXED_GRADE + 1), ("1", "b", 0)])
    for measure in ("BootNDCG@5", "NDCGUpper@5"):
        with pytest.raises(ValueError) as info:
            evaluate(run_frame(), qrels, [measure])
        assert str(MAX_INDEXED_GRADE + 1) in str(info.value) and "'1'" in str(info.value)
    with pytest.raises(ValueError, match="exceeds len"):  # GAP's own message, without a wide table
        evaluate(run_frame(), qrels, ["GAP(g=0.5,0.5)"])
    assert evaluate(run_frame(), qrels, ["infAP"], per_query=False)["value"].iloc[0] > 0


def test_grade_counts_by_value_for_value_indexed_measures():
    qrels = qrels_frame([("1", "a", 3), ("1", "b", 0), ("1", "c", 1), ("2", "a", 3), ("2", "d", 0), ("2", "x", -1)])
    judged = Qrels.from_any(qrels)
    assert list(judged.grade_levels) == [0, 1, 3] and judged.max_grade == 3
    np.testing.assert_array_equal(judged.grade_counts, [[1, 1, 0, 1], [1, 0, 0, 1]])
    np.testing.assert_array_equal(judged.n_unjudged, [0, 1])
    np.testing.assert_array_equal(judged.n_relevant(2), [1, 1])
    np.testing.assert_array_equal(judged.n_nonrelevant(2), [2, 1])
    np.testing.assert_array_equal(judged.n_judged(), [3, 2])
    only_negative = Qrels.from_any(qrels_frame([("1", "a", -1)]))
    assert only_negative.max_grade == 0 and only_negative.grade_counts.tolist() == [[0]]


# ---------------------------------------------------------------------------------------------------------
# ids
# ---------------------------------------------------------------------------------------------------------
def test_integral_float_query_ids_match_integer_ids():
    expected = values(evaluate(run_frame(), qrels_frame(), MIXED))
    as_floats = run_frame().assign(query_id=lambda f: f["query_id"].astype(float))
    assert values(evaluate(as_floats, qrels_frame(), MIXED)) == expected
    qrels_floats = qrels_frame().assign(query_id=lambda f: f["query_id"].astype(float))
    assert values(evaluate(run_frame(), qrels_floats, MIXED)) == expected
    as_ints = run_frame().assign(query_id=lambda f: f["query_id"].astype(int))
    assert values(evaluate(as_ints, qrels_floats, MIXED)) == expected


def test_integral_float_doc_ids_match_integer_ids():
    qrels = qrels_frame([("1", "5", 1), ("1", "7", 0)])
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": [7.0, 5.0], "score": [2.0, 1.0]})
    assert values(evaluate(run, qrels, ["AP"])) == {("run", "1", "AP"): 0.5}
    infap = values(evaluate({"1": {5.0: 1.0, 7.0: 2.0}}, qrels, ["infAP"]))[("run", "1", "infAP")]
    assert infap == pytest.approx(1 / 2 + (1 / 2) * 1e-5 / (1 + 2e-5), abs=1e-15)


@pytest.mark.parametrize("bad", [1.5, 2.0**60])
def test_non_integral_float_ids_are_refused(bad):
    run = pd.DataFrame({"query_id": [bad, 1.0], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    with pytest.raises(ValueError) as info:
        evaluate(run, qrels_frame(), ["infAP"])
    assert "row 0" in str(info.value) and "query_id" in str(info.value) and "string" in str(info.value)
    with pytest.raises(ValueError, match="row 1"):
        evaluate({"1": {"a": 1.0, bad: 2.0}}, qrels_frame(), ["infAP"])


def test_dict_run_whose_first_query_is_empty():
    qrels = qrels_frame([("q1", "a", 1), ("q2", "b", 1)])
    table = evaluate({"q1": {}, "q2": {"b": 1.0}}, qrels, ["infAP", "AP"])
    assert values(table) == {
        ("run", "q1", "infAP"): 0.0,
        ("run", "q2", "infAP"): 1.0,
        ("run", "q1", "AP"): 0.0,
        ("run", "q2", "AP"): 1.0,
    }


# ---------------------------------------------------------------------------------------------------------
# TREC files
# ---------------------------------------------------------------------------------------------------------
GOOD_RUN = "1 Q0 a 1 3.0 tag\n1 Q0 b 2 2.0 tag\n"


@pytest.fixture(params=["pyarrow", "pandas"])
def reader(request, monkeypatch):
    """Each TREC file test runs twice: files read by pyarrow's CSV reader (when installed) and by pandas'."""
    from ir_incomplete.data import readers

    if request.param == "pyarrow":
        pytest.importorskip("pyarrow")
    monkeypatch.setattr(readers, "USE_PYARROW", request.param == "pyarrow")
    return request.param


@pytest.mark.parametrize(
    "text, line, needle",
    [
        (GOOD_RUN + "1 Q0 c 3 1.0 tag extra\n", 3, "found 7"),
        ("1 Q0 c 3 1.0 tag extra\n" + GOOD_RUN, 1, "found 7"),
        (GOOD_RUN + "1 Q0 c 3 1.0\n", 3, "found 5"),
        (GOOD_RUN + "\n1 Q0 c\n", 4, "found 3"),
        ("query_id Q0 doc_id rank score tag\n" + GOOD_RUN, 1, "'score' is not a number"),
        (GOOD_RUN + "1 Q0 c 3 high tag\n", 3, "'high' is not a number"),
        (GOOD_RUN + "1 Q0 c 3 nan tag\n", 3, "not a finite number"),
        (GOOD_RUN + "1 Q0 c 3 -inf tag\n", 3, "not a finite number"),
    ],
)
def test_malformed_run_lines_name_file_and_line(reader, tmp_path, text, line, needle):
    for gz in (False, True):
        path = tmp_path / ("bad.run.gz" if gz else "bad.run")
        if gz:
            with gzip.open(path, "wt") as handle:
                handle.write(text)
        else:
            path.write_text(text)
        with pytest.raises(ValueError) as info:
            read_trec_run(path)
        assert f"{path}:{line}:" in str(info.value) and needle in str(info.value)


@pytest.mark.parametrize(
    "text, line, needle",
    [
        ("1 0 a 1\n1 0 b\n", 2, "found 3"),
        ("1 0 a 1\n1 0 b 1 x y\n", 2, "found 6"),
        ("1 0 a 1\n1 0 b one\n", 2, "'one' is not a number"),
        ("1 0 a 1\n1 0 b 1.5\n", 2, "not an integer grade"),
        ("1 0 a 1\n1 0 b 1e20\n", 2, "range"),
        ("1 0 a 1\n1 0 b 2147483648\n", 2, "range"),
        ("1 0 a 1\n1 0 b 99999999999999999999999\n", 2, "range"),
    ],
)
def test_malformed_qrels_lines_name_file_and_line(reader, tmp_path, text, line, needle):
    path = tmp_path / "bad.qrels"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        read_trec_qrels(path)
    assert f"{path}:{line}:" in str(info.value) and needle in str(info.value)


def test_well_formed_files_read_as_before(reader, tmp_path):
    path = tmp_path / "ok.run"
    path.write_text("1 Q0 NA 1 3.0 null\n\n1 Q0 b 2 2 tag\n")  # ids that pandas would take for missing
    run = read_trec_run(path)
    assert run["doc_id"].tolist() == ["NA", "b"] and run["score"].tolist() == [3.0, 2.0]
    assert run["score"].dtype == np.float64
    qrels = tmp_path / "ok.qrels"
    qrels.write_text("1 0 NA 1\n1 0 b -1\n1 0 c 2.0\n")
    frame = read_trec_qrels(qrels)
    assert frame["doc_id"].tolist() == ["NA", "b", "c"] and frame["relevance"].tolist() == [1, -1, 2]
    empty = tmp_path / "empty"
    empty.write_text("")
    assert len(read_trec_run(empty)) == 0 and len(read_trec_qrels(empty)) == 0


def _truncated_gz(path, text):
    data = gzip.compress(text.encode())
    path.write_bytes(data[: len(data) // 2])


def _corrupt_gz(path, text):
    data = bytearray(gzip.compress(text.encode()))
    data[len(data) // 2 : len(data) // 2 + 8] = b"\xff" * 8
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [_truncated_gz, _corrupt_gz, lambda p, t: p.write_bytes(b"not gzip at all")])
def test_damaged_gz_files_are_a_value_error_naming_the_file(reader, tmp_path, damage):
    run = tmp_path / "run.gz"
    damage(run, run_text() * 2000)
    with pytest.raises(ValueError) as info:
        read_trec_run(run)
    assert str(run) in str(info.value) and "truncated or corrupt" in str(info.value)
    qrels = tmp_path / "qrels.gz"
    damage(qrels, qrels_text() * 2000)
    with pytest.raises(ValueError) as info:
        evaluate(run_frame(), qrels, ["infAP"])
    assert str(qrels) in str(info.value)


def test_cli_damaged_gz_is_one_line_exit_2(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text(qrels_text())
    run = tmp_path / "run.gz"
    _truncated_gz(run, run_text() * 2000)
    proc = subprocess.run(
        [sys.executable, "-m", "ir_incomplete", str(qrels), str(run), "AP", "infAP"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        cwd=tmp_path,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ir_incomplete: error: ") and str(run) in lines[0]
    assert "Traceback" not in proc.stderr


def test_cli_malformed_line_exit_2(capsys, tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text(qrels_text())
    run = tmp_path / "bad.run"
    run.write_text(GOOD_RUN + "1 Q0 c 3 1.0 tag extra\n")
    code, out, err = run_cli(capsys, qrels, run, "AP")
    assert code == 2 and out == ""
    assert f"{run}:3:" in one_error_line(err)


@pytest.mark.parametrize("content", ["", "\n\n"])
def test_cli_empty_qrels_says_nothing_could_be_evaluated(capsys, tmp_path, content):
    qrels = tmp_path / "qrels"
    qrels.write_text(content)
    run = tmp_path / "run"
    run.write_text(run_text())
    code, out, err = run_cli(capsys, qrels, run, "AP", "infAP")
    assert code == 2 and out == ""
    assert "nothing could be evaluated" in one_error_line(err)


def test_cli_bad_input_never_prints_a_traceback(capsys, tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text(qrels_text())
    run = tmp_path / "run"
    run.write_text(run_text())
    big = tmp_path / "big.qrels"
    big.write_text("1 0 a 5000\n")
    for argv in ([big, run, "BootNDCG@5"], [qrels, run, "GAP(g=0.5,0.5"], [qrels, run, "infAP(c=0)"]):
        code, out, err = run_cli(capsys, *argv)
        assert code == 2 and out == "", argv
        one_error_line(err)


# ---------------------------------------------------------------------------------------------------------
# robustness command line: documented exit codes
# ---------------------------------------------------------------------------------------------------------
def _robustness_args(tmp_path, qrels_content=None, runs=None):
    qrels = tmp_path / "qrels"
    qrels.write_text(qrels_content if qrels_content is not None else qrels_text())
    if runs is None:
        (tmp_path / "runs").mkdir(exist_ok=True)
        (tmp_path / "runs" / "r1").write_text(run_text())
        (tmp_path / "runs" / "r2").write_text(run_text(RUN[::-1]))
        runs = [tmp_path / "runs"]
    return ["--qrels", qrels, "--runs", *runs, "--out", tmp_path / "out", "--no-progress", "--no-plots"]


@pytest.mark.parametrize(
    "case",
    ["malformed_run", "truncated_qrels", "bad_measure", "duplicate_names"],
)
def test_robustness_cli_data_errors_exit_2(tmp_path, capsys, case):
    from ir_incomplete.cli.robustness import main as robustness_main

    measures = ["--measures", "AP"]
    if case == "malformed_run":
        args = _robustness_args(tmp_path)
        (tmp_path / "runs" / "r2").write_text(GOOD_RUN + "1 Q0 c 3 high tag\n")
        needle = "r2:3:"
    elif case == "truncated_qrels":
        args = _robustness_args(tmp_path)
        _truncated_gz(tmp_path / "qrels.gz", qrels_text() * 2000)
        args[1] = tmp_path / "qrels.gz"
        needle = "qrels.gz"
    elif case == "bad_measure":
        args = _robustness_args(tmp_path)
        measures = ["--measures", "infAP(c="]
        needle = "infAP(c="
    else:
        (tmp_path / "A").mkdir()
        (tmp_path / "B").mkdir()
        (tmp_path / "A" / "r1").write_text(run_text())
        (tmp_path / "B" / "r1").write_text(run_text())
        args = _robustness_args(tmp_path, runs=[tmp_path / "A" / "r1", tmp_path / "B" / "r1"])
        needle = "two runs are named 'r1'"
    code = robustness_main([str(a) for a in args + measures + ["--levels", "0.5", "--repeats", "1"]])
    err = capsys.readouterr().err
    assert code == 2, err
    assert needle in err and "Traceback" not in err
    assert not (tmp_path / "out" / "stats.csv").exists()


# ---------------------------------------------------------------------------------------------------------
# property-based: a reference value or a clear error, never NaN, order-free, inputs unchanged
# ---------------------------------------------------------------------------------------------------------
EPS = 1e-5


def _ranked(docs: dict) -> list:
    """trec_eval's order: score descending compared in single precision, ties by doc id descending."""
    by_id = sorted(docs, reverse=True)
    return sorted(by_id, key=lambda d: -float(np.float32(docs[d])))


def reference_ap(ranking, grades) -> float:
    relevant = sum(g >= 1 for g in grades.values())
    if relevant == 0:
        return 0.0
    found, total = 0, 0.0
    for rank, doc in enumerate(ranking, 1):
        if grades.get(doc, -1) >= 1:
            found += 1
            total += found / rank
    return total / relevant


def reference_infap(ranking, grades, c=2.0) -> float:
    """Spec §3.7, pool variant: 1 at rank 1, else 1/k + (d/k)(r+ε)/(r+n+cε) with d = r + n + pooled above."""
    relevant = sum(g >= 1 for g in grades.values())
    if relevant == 0:
        return 0.0
    r = n = pooled = 0
    total = 0.0
    for k, doc in enumerate(ranking, 1):
        grade = grades.get(doc)
        if grade is not None and grade >= 1:
            total += 1.0 if k == 1 else 1 / k + ((r + n + pooled) / k) * (r + EPS) / (r + n + c * EPS)
            r += 1
        elif grade is not None and grade == 0:
            n += 1
        elif grade is not None:
            pooled += 1
    return total / relevant


def reference_bpref(ranking, grades) -> float:
    """Spec §3.2, trec_eval variant: (1/R) Σ_r [1 − min(n_r, R)/min(R, N)], a term of 1 when n_r = 0."""
    big_r = sum(g >= 1 for g in grades.values())
    big_n = sum(g == 0 for g in grades.values())
    if big_r == 0:
        return 0.0
    above, total = 0, 0.0
    for doc in ranking:
        grade = grades.get(doc)
        if grade is not None and grade >= 1:
            total += 1.0 if above == 0 else 1 - min(above, big_r) / min(big_r, big_n)
        elif grade == 0:
            above += 1
    return total / big_r


REFERENCES = {
    "AP": reference_ap,
    "infAP": reference_infap,
    "infAP(c=1.5)": lambda ranking, grades: reference_infap(ranking, grades, c=1.5),
    "Bpref": reference_bpref,
}
OTHER_MEASURES = ["indAP", "RankEff", "P@2", "nDCG@3", "GAP(g=0.5,0.3,0.2)", "NDCGUpper@3", "subAP(p=0.5)"]
BAD_MEASURES = ["infAP(c=0)", "Bpref(variant=nope)", "nope", "infAP(", "P@-1", "GAP(g=0.5,0.6)", "infAP(c=1e999)"]


def _measure_list(parts) -> list:
    """Every measure with a reference, some others and now and then a bad string, in random order."""
    others, bad, rnd = parts
    measures = list(REFERENCES) + others + ([bad] if bad else [])
    rnd.shuffle(measures)
    return measures


QIDS = ["1", "2", "q3"]
DOCS = ["d1", "d2", "d3", "D9", "D10", "d0"]  # "D9" ranks above "D10" on a tie (byte-wise, descending)
CELLS = [(q, d) for q in QIDS for d in DOCS]


def _frames():
    """Dense random collections: each (query, doc) cell is judged or not (grades incl. negatives) and
    retrieved or not (scores with many ties); rows in random order, now and then a row twice."""
    grade = st.sampled_from([None, None, -2, -1, 0, 0, 1, 1, 2, 3])
    score = st.one_of(st.none(), st.integers(-2, 3).map(float), st.floats(-10, 10, width=32))
    grid = st.tuples(
        st.lists(grade, min_size=len(CELLS), max_size=len(CELLS)),
        st.lists(score, min_size=len(CELLS), max_size=len(CELLS)),
    )
    others = st.lists(st.sampled_from(OTHER_MEASURES), max_size=3, unique=True)
    bad = st.sampled_from([None] * 16 + BAD_MEASURES)  # mostly valid strings
    measures = st.tuples(others, bad, st.randoms(use_true_random=False)).map(_measure_list)
    duplicate = st.sampled_from([None] * 12 + ["run", "qrels"])  # now and then a row listed twice
    return st.tuples(grid, measures, duplicate, st.randoms(use_true_random=False))


def _evaluate_warned(run, qrels, measures):
    """``evaluate(run, qrels, measures)`` when it returns a table: a run without rows gives its one
    warning (it retrieves nothing), any other run none."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = evaluate(run, qrels, measures)
    expected = ["run 'run' retrieves nothing: it has no rows"] if run.empty else []
    assert [str(w.message).split(",")[0] for w in caught] == expected
    assert all(w.category is UserWarning for w in caught)
    return table


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_frames())
def test_fuzz_value_or_clear_error(case):
    """Random runs and qrels (ties, negative grades, duplicates, shuffled rows) and measure strings."""
    (grades, scores), measures, duplicate, rnd = case
    qrels_rows = [(q, d, g) for (q, d), g in zip(CELLS, grades, strict=True) if g is not None]
    run_rows = [(q, d, s) for (q, d), s in zip(CELLS, scores, strict=True) if s is not None]
    rnd.shuffle(qrels_rows)
    rnd.shuffle(run_rows)
    if duplicate == "run" and run_rows:
        run_rows = run_rows + [run_rows[0]]
    if duplicate == "qrels" and qrels_rows:
        qrels_rows = qrels_rows + [qrels_rows[-1]]
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"]).astype({"score": float})
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"]).astype({"relevance": int})
    run_copy, qrels_copy = run.copy(), qrels.copy()
    try:
        table = _evaluate_warned(run, qrels, measures)
    except (ValueError, TypeError, MeasureSyntaxError) as exc:
        assert str(exc)  # a message, and a legitimate reason for it:
        bad_input = (
            run.duplicated(["query_id", "doc_id"]).any()
            or qrels.duplicated(["query_id", "doc_id"]).any()
            or any(m in BAD_MEASURES for m in measures)
        )
        assert bad_input, (measures, str(exc))
        return
    finally:
        pd.testing.assert_frame_equal(run, run_copy)
        pd.testing.assert_frame_equal(qrels, qrels_copy)
    assert not any(m in BAD_MEASURES for m in measures), measures
    assert np.isfinite(table["value"].to_numpy(dtype=float)).all(), table
    got = {(q, m): v for q, m, v in table[["query_id", "measure", "value"]].itertuples(index=False)}
    grades_of = {q: dict(zip(g["doc_id"], g["relevance"], strict=True)) for q, g in qrels.groupby("query_id")}
    assert {q for q, _ in got} == set(grades_of)
    for measure in measures:
        reference = REFERENCES.get(measure)
        if reference is None:
            continue
        for qid, judged in grades_of.items():
            docs = run[run["query_id"] == qid]
            ranking = _ranked(dict(zip(docs["doc_id"], docs["score"], strict=True)))
            assert got[(qid, measure)] == pytest.approx(reference(ranking, judged), rel=1e-12, abs=1e-12), (
                qid,
                measure,
            )
    # the same values whatever the order of the rows
    shuffled_run = run.sample(frac=1.0, random_state=rnd.randrange(2**31)).reset_index(drop=True)
    shuffled_qrels = qrels.sample(frac=1.0, random_state=rnd.randrange(2**31))
    again = _evaluate_warned(shuffled_run, shuffled_qrels, measures)
    again = {(q, m): v for q, m, v in again[["query_id", "measure", "value"]].itertuples(index=False)}
    assert again.keys() == got.keys()
    for key, value in got.items():
        assert again[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("fields", [4, 5])
def test_qrels_file_is_opened_once_whatever_its_format(reader, tmp_path, monkeypatch, gz, fields):
    from ir_incomplete import data
    from ir_incomplete.data import readers

    text = "\n1 0 a 1\n1 0 b 0\n2 0 c 2\n" if fields == 4 else "\n1 0 a s1 1\n1 0 b s2 -1\n2 0 c s1 2\n"
    path = tmp_path / ("q.gz" if gz else "q")
    if gz:
        with gzip.open(path, "wt") as handle:
            handle.write(text)
    else:
        path.write_text(text)
    opened = []
    real = readers._open_text
    monkeypatch.setattr(readers, "_open_text", lambda source: opened.append(source) or real(source))
    frame = data.read_trec_qrels(path)
    assert len(opened) == 1
    assert frame["doc_id"].tolist() == ["a", "b", "c"]
    assert frame["relevance"].tolist() == [1, 0 if fields == 4 else -1, 2]
    assert ("stratum" in frame.columns) == (fields == 5)
