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


# -- memory: one very long ranking among many short ones --------------------------------------------------
def _ragged(n_short=3000, depth_short=10, long=100_000):
    q = np.concatenate([np.repeat(np.arange(n_short).astype(str), depth_short), np.full(long, "L")])
    d = np.concatenate([np.tile([f"d{i}" for i in range(depth_short)], n_short), [f"d{i}" for i in range(long)]])
    s = np.concatenate(
        [np.tile(np.arange(depth_short, 0, -1, dtype=float), n_short), np.arange(long, 0, -1, dtype=float)]
    )
    run = pd.DataFrame({"query_id": q, "doc_id": d, "score": s})
    qq = np.concatenate([np.repeat(np.arange(n_short).astype(str), 3), ["L"] * 50])
    qd = np.concatenate([np.tile(["d0", "d3", "d99"], n_short), [f"d{i}" for i in range(0, long, long // 50)]])
    qrels = pd.DataFrame({"query_id": qq, "doc_id": qd, "relevance": np.arange(len(qq)) % 3})
    return run, qrels


def test_one_long_ranking_among_short_ones_takes_memory_in_proportion_to_the_rows():
    import tracemalloc

    run, qrels = _ragged()
    measures = ["AP", "infAP", "Bpref", "nDCG@10", "nDCG", "P@10", "RankEff", "indAP"]
    tracemalloc.start()
    try:
        table = evaluate(run, qrels, measures)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 150e6  # a matrix padded to the longest ranking alone: 3,001 × 100,000 int32 = 1.2 GB
    # each query's values are those of the query evaluated apart from the others
    long_alone = evaluate(run[run["query_id"] == "L"], qrels[qrels["query_id"] == "L"], measures)
    short_alone = evaluate(run[run["query_id"] != "L"], qrels[qrels["query_id"] != "L"], measures)
    expected = pd.concat([long_alone, short_alone]).set_index(["query_id", "measure"])["value"]
    got = table.set_index(["query_id", "measure"])["value"]
    pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_exact=True)


def test_ragged_rankings_through_ir_measures_give_the_same_values():
    import ir_measures

    run, qrels = _ragged(n_short=200, long=40_000)
    ours = evaluate(run, qrels, ["infAP(c=1.5)", "Bpref"])  # the first through our provider, Bpref pytrec_eval's
    through = {
        (m.query_id, repr(m.measure)): m.value
        for m in ir_measures.iter_calc([ir_measures.parse_measure("infAP(c=1.5)"), ir_measures.Bpref], qrels, run)
    }
    assert len(through) == len(ours)
    for qid, measure, value in ours[["query_id", "measure", "value"]].itertuples(index=False):
        assert through[(qid, measure)] == pytest.approx(value, abs=1e-12)


def test_duplicate_documents_are_found_in_every_length_class():
    run, qrels = _ragged(n_short=500, long=20_000)
    doubled = pd.concat([run, run.iloc[[len(run) - 5]]], ignore_index=True)  # a document of the long ranking again
    with pytest.raises(ValueError, match=r"lists document 'd19995' more than once for query 'L'"):
        evaluate(doubled, qrels, ["AP"])
    doubled = pd.concat([run, run.iloc[[7]]], ignore_index=True)  # one of a short ranking
    with pytest.raises(ValueError, match=r"lists document 'd7' more than once for query '0'"):
        evaluate(doubled, qrels, ["AP"])


# -- ids of predicted grades and second judgment sets: read as every other input's ids -------------------
PREDICTED = pd.DataFrame(
    [("1", "a", 1), ("1", "b", 1), ("1", "c", 0), ("1", "x", 2), ("2", "a", 2), ("2", "d", 1), ("2", "y", 0)],
    columns=["query_id", "doc_id", "relevance"],
)


def _odd_ids(frame, how):
    if how == "float":  # a query_id column read as numbers: 1.0 names query "1"
        return frame.assign(query_id=frame["query_id"].astype(float))
    return frame.assign(doc_id=[d.encode() for d in frame["doc_id"]])  # bytes: UTF-8 text


@pytest.mark.parametrize("how", ["float", "bytes"])
def test_agreement_and_judged_kappa_read_odd_ids_as_every_input(how):
    from ir_incomplete.judging import agreement
    from ir_incomplete.labelers import judged_kappa

    expected = agreement(QRELS, PREDICTED)
    got = agreement(QRELS, _odd_ids(PREDICTED, how))
    assert got["n_common"] == expected["n_common"] == 5  # every judged pair is predicted
    assert got["kappa"] == expected["kappa"]
    assert judged_kappa(_odd_ids(PREDICTED, how), QRELS) == judged_kappa(PREDICTED, QRELS)


@pytest.mark.parametrize("how", ["float", "bytes"])
def test_ppi_and_predicted_priors_read_odd_ids_as_every_input(how):
    from ir_incomplete import ppi_evaluate

    runs = {"r1": RUN, "r2": RUN.assign(score=RUN["score"][::-1].to_numpy())}
    qrels = pd.concat([QRELS, pd.DataFrame([("3", "a", 1), ("3", "d", 0)], columns=QRELS.columns)])
    predicted = pd.concat([PREDICTED, pd.DataFrame([("3", "a", 1), ("3", "d", 1)], columns=QRELS.columns)])
    expected = ppi_evaluate(runs, qrels, predicted, ["P@2"], labelled_queries=["1", "2"])
    got = ppi_evaluate(runs, qrels, _odd_ids(predicted, how), ["P@2"], labelled_queries=["1", "2"])
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    measure = ["BootNDCG(prior=predicted,b=50,seed=1)@3"]
    expected = evaluate(runs, QRELS, measure, predictions=PREDICTED)
    got = evaluate(runs, QRELS, measure, predictions=_odd_ids(PREDICTED, how))
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_predicted_ids_that_name_nothing_are_refused():
    from ir_incomplete.judging import agreement

    odd = PREDICTED.assign(query_id=[1.5, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match=r"query_id 1.5 \(row 0\) is a float that is not an exact integer"):
        agreement(QRELS, odd)
    with pytest.raises(ValueError, match=r"query_id 1.5 \(row 0\) is a float that is not an exact integer"):
        evaluate(RUN, QRELS, ["BootNDCG(prior=predicted,b=50)@3"], predictions=odd)


def test_measures_given_as_a_one_shot_iterable_are_read_once():
    expected = evaluate(RUN, QRELS, ["AP", "P@2"], per_query=False)
    got = evaluate(RUN, QRELS, (m for m in ["AP", "P@2"]), per_query=False)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
