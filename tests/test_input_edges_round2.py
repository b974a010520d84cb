"""The second round of bad inputs at the data layer and in ``evaluate``: each either gives the right value
or a clear error naming the offending column, row, run or file."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from ir_incomplete import evaluate
from ir_incomplete.cli import main

QRELS = pd.DataFrame(
    [("1", "a", 1), ("1", "b", 0), ("1", "c", 1), ("2", "a", 2), ("2", "d", 0)],
    columns=["query_id", "doc_id", "relevance"],
)
RUN = pd.DataFrame(
    [("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0), ("2", "d", 5.0), ("2", "a", 4.0)],
    columns=["query_id", "doc_id", "score"],
)
# AP of RUN: query 1 (1/1 + 2/3) / 2, query 2 (1/2) / 1
AP = {"1": (1 + 2 / 3) / 2, "2": 0.5}


def ap_values(table) -> dict:
    return dict(zip(table["query_id"], table["value"], strict=True))


# -- the same measure twice -------------------------------------------------------------------------------
TWICE = [["NumRet", "NumRet"], ["NumRel", "NumRel(rel=1)"], ["nDCG@10", "nDCG(cutoff=10)"]]


@pytest.mark.parametrize("measures", TWICE)
def test_a_measure_given_twice_is_computed_once(measures):
    per_query = evaluate(RUN, QRELS, measures)
    assert len(per_query) == 2  # one row per query, not two
    assert per_query["measure"].nunique() == 1
    summary = evaluate(RUN, QRELS, measures, per_query=False)
    assert len(summary) == 1
    expected = {"NumRet": 5.0, "NumRel": 3.0}.get(summary["measure"].iloc[0])
    if expected is not None:  # counting measures are summed over queries: never doubled
        assert summary["value"].iloc[0] == expected


def test_duplicates_keep_the_order_of_first_mention():
    table = evaluate(RUN, QRELS, ["AP", "NumRet", "AP", "P@1"], per_query=False)
    assert table["measure"].tolist() == ["AP", "NumRet", "P@1"]


# -- byte-string ids ---------------------------------------------------------------------------------------
def test_python_bytes_ids_are_read_as_utf8_text():
    run = RUN.assign(
        query_id=[q.encode() for q in RUN["query_id"]],
        doc_id=[d.encode() for d in RUN["doc_id"]],
    )
    assert ap_values(evaluate(run, QRELS, ["AP"])) == pytest.approx(AP, abs=1e-15)
    qrels = QRELS.assign(doc_id=[d.encode() for d in QRELS["doc_id"]])
    assert ap_values(evaluate(RUN, qrels, ["AP"])) == pytest.approx(AP, abs=1e-15)


def test_numpy_bytes_ids_with_non_ascii_utf8_text_match():
    qrels = QRELS.assign(doc_id=["é" + d for d in QRELS["doc_id"]])
    run = RUN.assign(doc_id=np.array([("é" + d).encode() for d in RUN["doc_id"]], dtype="S"))
    assert ap_values(evaluate(run, qrels, ["AP"])) == pytest.approx(AP, abs=1e-15)


def test_bytes_ids_in_a_dict_of_dicts():
    run = {b"1": {b"a": 3.0, b"b": 2.0, b"c": 1.0}, b"2": {b"d": 5.0, b"a": 4.0}}
    assert ap_values(evaluate(run, QRELS, ["AP"])) == pytest.approx(AP, abs=1e-15)


def test_bytes_that_are_not_utf8_are_refused_with_their_row():
    run = RUN.assign(doc_id=[b"a", b"b", b"\xff\xfe", b"d", b"a"])
    with pytest.raises(ValueError, match=r"run doc_id b'\\xff\\xfe' \(row 2\) is a byte string that is not UTF-8"):
        evaluate(run, QRELS, ["AP"])


# -- complex numbers ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "scores",
    [np.array([3, 2, 1, 5, 4], dtype=complex), np.array([3.0, 2.0, 1j, 5.0, 4.0], dtype=object)],
    ids=["complex-dtype", "complex-object"],
)
def test_complex_scores_are_refused(scores):
    with pytest.raises(ValueError, match="complex"):
        evaluate(RUN.assign(score=scores), QRELS, ["AP"])


def test_complex_scores_are_refused_without_a_warning(recwarn):
    with pytest.raises(ValueError, match="scores must be real numbers"):
        evaluate(RUN.assign(score=np.array([3, 2, 1, 5, 4], dtype=complex)), QRELS, ["AP"])
    assert not [w for w in recwarn if "complex" in str(w.message).lower()]


def test_complex_grades_are_refused():
    grades = np.array([1, 0, complex(1, 0), 2, 0], dtype=object)
    with pytest.raises(ValueError, match=r"qrels relevance \(?1\+0j\)? is a complex number at row 2"):
        evaluate(RUN, QRELS.assign(relevance=grades), ["AP"])


# -- duplicated column names ------------------------------------------------------------------------------
@pytest.mark.parametrize("column", ["query_id", "doc_id", "score"])
def test_a_run_frame_with_a_duplicated_column_is_refused_naming_it(column):
    frame = pd.concat([RUN, RUN[[column]]], axis=1)
    with pytest.raises(ValueError, match=rf"run DataFrame has 2 columns named '{column}'"):
        evaluate(frame, QRELS, ["AP"])


@pytest.mark.parametrize("column", ["query_id", "doc_id", "relevance"])
def test_a_qrels_frame_with_a_duplicated_column_is_refused_naming_it(column):
    frame = pd.concat([QRELS, QRELS[[column]]], axis=1)
    with pytest.raises(ValueError, match=rf"qrels DataFrame has 2 columns named '{column}'"):
        evaluate(RUN, frame, ["AP"])


def test_pyterrier_names_duplicated_are_refused_too():
    frame = RUN.rename(columns={"query_id": "qid", "doc_id": "docno"})
    frame = pd.concat([frame, frame[["docno"]]], axis=1)
    with pytest.raises(ValueError, match="2 columns named 'docno'"):
        evaluate(frame, QRELS, ["AP"])


# -- runs lost without a word -------------------------------------------------------------------------------
def test_topics_run_refuses_a_run_that_answers_no_qrels_query():
    stray = RUN.assign(query_id="99")
    with pytest.raises(ValueError, match=r"run 'stray' answers none of the qrels' 2 queries"):
        evaluate({"good": RUN, "stray": stray}, QRELS, ["AP"], topics="run")
    with pytest.raises(ValueError, match=r"run 'stray' answers none"):  # the ir_measures route too
        evaluate({"good": RUN, "stray": stray}, QRELS, ["ERR@10"], topics="run")
    # by default (topics="qrels") the run is kept and scores 0 on every query
    table = evaluate({"good": RUN, "stray": stray}, QRELS, ["AP"])
    assert table[table["run"] == "stray"]["value"].tolist() == [0.0, 0.0]


def _write_runs(folder):
    folder.mkdir()
    text = "".join(f"{q} Q0 {d} {i} {s} tag\n" for i, (q, d, s) in enumerate(RUN.itertuples(index=False), 1))
    (folder / "run1").write_text(text)
    (folder / "run2").write_text(text)
    return text


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_a_dangling_link_in_a_run_directory_is_an_error(tmp_path, capsys):
    runs = tmp_path / "runs"
    _write_runs(runs)
    os.symlink(tmp_path / "gone", runs / "run3")
    with pytest.raises(ValueError, match=r"holds 'run3', a link to .*gone.*not a readable file"):
        evaluate(str(runs), QRELS, ["AP"])
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS.itertuples(index=False)))
    code = main([str(qrels), str(runs), "AP"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert "run3" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_a_link_to_a_run_file_is_a_run(tmp_path):
    runs = tmp_path / "runs"
    _write_runs(runs)
    os.symlink(runs / "run1", runs / "run3")
    table = evaluate(str(runs), QRELS, ["AP"], per_query=False)
    assert table["run"].tolist() == ["run1", "run2", "run3"]
    assert table["value"].nunique() == 1
