"""Fast from files and from any row order: pyarrow's CSV reader against pandas' on the same files,
parquet files and Arrow tables as inputs, ids hashed from their UTF-8 bytes, and unsorted runs giving
exactly the values of the same runs in ranking order."""

from __future__ import annotations

import gzip
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ir_incomplete
from ir_incomplete.cli import main
from ir_incomplete.data import Qrels, prepare_runs, read_trec_prels, read_trec_qrels, read_trec_run, readers
from ir_incomplete.data.ids import DocIds, hash_ids, utf8_hashes
from ir_incomplete.data.ranking import _descending_score_keys, _stable_key_order

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

REPO_ROOT = Path(__file__).resolve().parents[1]
MEASURES = ["infAP", "Bpref", "AP", "nDCG@10", "P@5", "BootNDCG@10", "RankEff"]


def _frame_values(frame: pd.DataFrame) -> dict:
    """Columns as plain lists (ids as ``str``, numbers bit for bit)."""
    out = {}
    for column in frame.columns:
        values = frame[column].to_numpy()
        out[column] = values.view(np.int64).tolist() if values.dtype.kind == "f" else [str(v) for v in values]
    return out


def _both(monkeypatch, reader, path):
    monkeypatch.setattr(readers, "USE_PYARROW", True)
    fast = reader(path)
    monkeypatch.setattr(readers, "USE_PYARROW", False)
    slow = reader(path)
    monkeypatch.setattr(readers, "USE_PYARROW", True)
    return fast, slow


# ---------------------------------------------------------------------------------------------------------
# the two readers on the same files
# ---------------------------------------------------------------------------------------------------------
RUN_LINES = [("1", "Q0", "d1", "1", "3.25", "t"), ("1", "Q0", "d2", "2", "2", "t"), ("2", "Q0", "é", "1", "-1e-3", "t")]


@pytest.mark.parametrize(
    "layout, fast_path",
    [
        ("single spaces", True),
        ("tabs", True),
        ("several spaces", False),
        ("spaces and tabs", False),
        ("leading and trailing blanks", False),
        ("CRLF line ends", True),
        ("blank lines", True),
        ("several spaces after the first line", False),
    ],
)
@pytest.mark.parametrize("gz", [False, True])
def test_both_readers_give_identical_runs(tmp_path, monkeypatch, layout, fast_path, gz):
    joins = {"single spaces": " ", "tabs": "\t", "several spaces": "   ", "spaces and tabs": " \t "}
    sep = joins.get(layout, " ")
    lines = [sep.join(fields) for fields in RUN_LINES]
    if layout == "leading and trailing blanks":
        lines = ["  " + line + " \t" for line in lines]
    if layout == "several spaces after the first line":
        lines[1] = lines[1].replace(" ", "  ")
    end = "\r\n" if layout == "CRLF line ends" else "\n"
    text = end.join(lines) + end
    if layout == "blank lines":
        text = "\n" + text.replace("\n", "\n\n")
    path = tmp_path / ("run.gz" if gz else "run")
    if gz:
        with gzip.open(path, "wt", newline="") as handle:
            handle.write(text)
    else:
        path.write_bytes(text.encode())
    fast, slow = _both(monkeypatch, read_trec_run, path)
    assert _frame_values(fast) == _frame_values(slow)
    assert fast["doc_id"].tolist() == ["d1", "d2", "é"] and fast["score"].tolist() == [3.25, 2.0, -0.001]
    assert isinstance(readers._read_trec_any(path, "run"), pa.Table) == fast_path


def test_both_readers_give_identical_values_on_real_files(monkeypatch):
    from conftest import COVID, _need

    covid = _need(COVID)
    runs = sorted((covid / "runs").iterdir())[:12]
    for path in runs:
        fast, slow = _both(monkeypatch, read_trec_run, path)
        assert _frame_values(fast) == _frame_values(slow), path
    for path in [covid / "qrels.round1.txt.gz", covid / "qrels.complete-topics1-30.txt.gz"]:
        fast, slow = _both(monkeypatch, read_trec_qrels, path)
        assert _frame_values(fast) == _frame_values(slow), path


def test_both_readers_give_identical_qrels_and_prels(tmp_path, monkeypatch):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n1 0 b -1\n2 0 c 0\n")
    prels = tmp_path / "prels"
    prels.write_text("1 0 a s1 1\n1 0 b s2 -1\n2 0 c s1 0\n")
    for reader, path in [(read_trec_qrels, qrels), (read_trec_qrels, prels), (read_trec_prels, prels)]:
        fast, slow = _both(monkeypatch, reader, path)
        assert _frame_values(fast) == _frame_values(slow)
        assert fast["relevance"].dtype == slow["relevance"].dtype == np.int64
    assert isinstance(readers._read_trec_any(prels, "qrels"), pa.Table)


def test_a_double_quote_is_an_ordinary_character_as_in_trec_eval(tmp_path, monkeypatch):
    path = tmp_path / "run"
    path.write_text('1 Q0 "d1" 1 2.0 tag\n1 Q0 d2 2 1.0 "t"\n')
    fast, slow = _both(monkeypatch, read_trec_run, path)
    assert fast["doc_id"].tolist() == slow["doc_id"].tolist() == ['"d1"', "d2"]


def test_scores_are_parsed_bit_for_bit_alike(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.normal(0, 1e3, 3000), rng.random(1000) * 1e-300, [0.1, 1 / 3, 2.0**-1074]])
    texts = [repr(float(v)) for v in values] + [
        "1.00000000000000011102230246251565404236316680908203125",
        ".5",
        "5.",
        "+3",
    ]
    path = tmp_path / "run"
    path.write_text("".join(f"1 Q0 d{i} {i} {t} x\n" for i, t in enumerate(texts)))
    fast, slow = _both(monkeypatch, read_trec_run, path)
    assert np.array_equal(fast["score"].to_numpy().view(np.int64), slow["score"].to_numpy().view(np.int64))
    assert np.array_equal(fast["score"].to_numpy(), np.array([float(t) for t in texts]))


# ---------------------------------------------------------------------------------------------------------
# parquet and Arrow tables
# ---------------------------------------------------------------------------------------------------------
def _toy():
    qrels = pd.DataFrame(
        {"query_id": ["1", "1", "1", "2", "2"], "doc_id": ["a", "b", "c", "a", "d"], "relevance": [1, 0, -1, 2, 0]}
    )
    run = pd.DataFrame(
        {"query_id": ["1", "1", "1", "2", "2", "2"], "doc_id": list("abcdae"), "score": [3, 2, 2, 5, 4, 1.0]}
    )
    return qrels, run


def test_parquet_and_arrow_inputs_equal_dataframes(tmp_path):
    qrels, run = _toy()
    expected = ir_incomplete.evaluate({"r": run}, qrels, MEASURES)
    pyterrier_run = run.rename(columns={"query_id": "qid", "doc_id": "docno"}).assign(rank=range(6), query="q")
    run_path, qrels_path = tmp_path / "r.parquet", tmp_path / "q.parquet"
    pq.write_table(pa.Table.from_pandas(pyterrier_run, preserve_index=False), run_path)
    pq.write_table(pa.Table.from_pandas(qrels, preserve_index=False), qrels_path)
    for runs, judged in [
        ({"r": pa.Table.from_pandas(run)}, pa.Table.from_pandas(qrels)),
        ({"r": run_path}, qrels_path),
        (str(run_path), str(qrels_path)),
    ]:
        got = ir_incomplete.evaluate(runs, judged, MEASURES)
        got["run"] = "r"
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
    frame = read_trec_run(run_path)
    assert list(frame.columns) == ["query_id", "doc_id", "score"] and frame["doc_id"].tolist() == list("abcdae")
    assert read_trec_qrels(qrels_path)["relevance"].tolist() == [1, 0, -1, 2, 0]


def test_parquet_sampled_qrels_keep_their_strata(tmp_path):
    prels = pd.DataFrame(
        {"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "stratum": ["s1", "s2", "s1"], "relevance": [1, -1, 0]}
    )
    path = tmp_path / "p.parquet"
    pq.write_table(pa.Table.from_pandas(prels, preserve_index=False), path)
    assert Qrels.from_any(path).is_sampled and Qrels.from_any(pa.Table.from_pandas(prels)).is_sampled
    assert read_trec_prels(path)["stratum"].tolist() == ["s1", "s2", "s1"]


def test_parquet_and_arrow_errors_name_the_column_or_row(tmp_path):
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"qid": ["1"], "doc": ["a"], "score": [1.0]}), path)
    with pytest.raises(
        ValueError, match=r"bad.parquet has no column 'doc_id'.*query_id/doc_id/score or qid/docno/score"
    ):
        read_trec_run(path)
    not_parquet = tmp_path / "text.parquet"
    not_parquet.write_text("1 Q0 a 1 1.0 t\n")
    with pytest.raises(ValueError, match="text.parquet as parquet"):
        read_trec_run(not_parquet)
    qrels, _ = _toy()
    table = pa.table({"query_id": ["1", "1"], "doc_id": ["a", None], "score": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"run doc_id contains missing values \(row 1\)"):
        ir_incomplete.evaluate(table, qrels, ["infAP"])
    with pytest.raises(ValueError, match="run Arrow table is missing column 'score'"):
        ir_incomplete.evaluate(table.drop_columns(["score"]), qrels, ["infAP"])


def test_command_line_reads_parquet_runs_and_directories(tmp_path, capsys):
    qrels, run = _toy()
    folder = tmp_path / "runs"
    folder.mkdir()
    pq.write_table(pa.Table.from_pandas(run, preserve_index=False), folder / "a.parquet")
    text = "".join(f"{q} Q0 {d} 1 {s!r} t\n" for q, d, s in run.itertuples(index=False))
    (folder / "b.gz").write_bytes(gzip.compress(text.encode()))
    qrels_path = tmp_path / "qrels.parquet"
    pq.write_table(pa.Table.from_pandas(qrels, preserve_index=False), qrels_path)
    assert main([str(qrels_path), str(folder), "infAP", "AP", "-p", "-1"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    by_run: dict[str, list[str]] = {}
    for line in lines:
        name, measure, value = line.split("\t")
        by_run.setdefault(name, []).append(f"{measure}={value}")
    assert set(by_run) == {"a", "b"} and by_run["a"] == by_run["b"] and len(by_run["a"]) == 2


# ---------------------------------------------------------------------------------------------------------
# ids: hashes and DocIds
# ---------------------------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=60), st.integers(0, 5))
def test_utf8_hashes_depend_on_the_string_alone(words, cut):
    whole = utf8_hashes(pa.array(words, type=pa.string()))
    assert np.array_equal(whole, utf8_hashes(pa.array(words, type=pa.large_string())))
    cut = min(cut, len(words))
    assert np.array_equal(whole[cut:], utf8_hashes(pa.array(words).slice(cut)))
    chunked = pa.chunked_array([pa.array(words[:cut], type=pa.string()), pa.array(words[cut:], type=pa.string())])
    assert np.array_equal(whole, utf8_hashes(chunked))
    assert np.array_equal(whole, hash_ids(np.array(words, dtype=object)))
    by_word = dict(zip(words, whole.tolist(), strict=True))
    assert len(set(by_word.values())) == len(by_word)  # distinct strings, distinct hashes (64 bits)


def test_utf8_hashes_of_many_ids_do_not_collide():
    rng = np.random.default_rng(0)
    for prefix in ["", "d", "clueweb12-0000tw-"]:
        ids = np.unique(np.char.add(prefix, rng.integers(0, 10**9, 200_000).astype(str)))
        assert len(np.unique(utf8_hashes(pa.array(ids)))) == len(ids)


@pytest.mark.parametrize("arrow", [False, True])
def test_doc_ids_index_like_an_object_array(arrow):
    words = np.array([f"d{i}" for i in range(10)], dtype=object)
    chunked = pa.chunked_array([pa.array(words[:4].tolist()), pa.array(words[4:].tolist())])
    ids = DocIds(chunked if arrow else words.copy())
    order = np.array([9, 3, 5, 1, 0, 2, 4, 6, 7, 8])
    moved = ids.permuted(order).moved(np.array([1, 2]), np.array([2, 1]))
    expected = words[order]
    expected[[1, 2]] = expected[[2, 1]]
    for got in [moved, pickle.loads(pickle.dumps(moved))]:
        assert got[:].tolist() == expected.tolist() and list(got) == expected.tolist()
        assert got[np.array([4, 1])].tolist() == expected[[4, 1]].tolist() and got[3] == expected[3]
        assert got[2:5].tolist() == expected[2:5].tolist() and got[expected == "d5"].tolist() == ["d5"]
        assert np.array_equal(got.hashes(), hash_ids(expected))
    base = DocIds(chunked if arrow else words.copy()).moved(np.array([0]), np.array([3]))
    assert np.array_equal(base.hashes(), hash_ids(np.array(["d3", "d1", "d2", "d3", *words[4:]], dtype=object)))


# ---------------------------------------------------------------------------------------------------------
# any row order
# ---------------------------------------------------------------------------------------------------------
@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), min_size=2, max_size=300), st.booleans())
def test_packed_order_is_the_stable_argsort(items, grouped):
    ranking = np.array([r for r, _ in items], dtype=np.int64)
    scores = np.array([s for _, s in items], dtype=np.float64)
    if grouped:
        ranking = np.sort(ranking)
    key = (ranking << 32) | _descending_score_keys(scores)
    order, sorted_key = _stable_key_order(ranking, key)
    expected = np.argsort(key, kind="stable")
    assert np.array_equal(order, expected) and np.array_equal(sorted_key, key[expected])


def _unsorted_case(seed: int, n_queries: int = 40, depth: int = 60):
    rng = np.random.default_rng(seed)
    qids = np.array([f"q{i}" for i in range(n_queries)])
    frame = pd.DataFrame(
        {
            "query_id": np.repeat(qids, depth),
            "doc_id": np.char.add("d", rng.integers(0, 400, n_queries * depth).astype(str)),
            "score": rng.integers(0, 25, n_queries * depth) / 4.0,  # many ties: doc ids break them
        }
    ).drop_duplicates(["query_id", "doc_id"], ignore_index=True)
    judged = frame.sample(frac=0.3, random_state=seed)
    qrels = pd.DataFrame(
        {
            "query_id": judged["query_id"].to_numpy(),
            "doc_id": judged["doc_id"].to_numpy(),
            "relevance": rng.integers(-1, 3, len(judged)),
        }
    )
    ranked = frame.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False], ignore_index=True)
    return frame, ranked, qrels


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("layout", ["candidate order", "shuffled", "arrow shuffled"])
def test_unsorted_rows_give_the_values_of_ranked_rows(seed, layout):
    frame, ranked, qrels = _unsorted_case(seed)
    if layout != "candidate order":
        frame = frame.sample(frac=1.0, random_state=seed, ignore_index=True)
    run = pa.Table.from_pandas(frame, preserve_index=False) if layout == "arrow shuffled" else frame
    expected = ir_incomplete.evaluate({"r": ranked}, qrels, MEASURES)
    got = ir_incomplete.evaluate({"r": run}, qrels, MEASURES)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)

    def rankings(runs):  # query -> (doc ids, scores) in ranking order
        prepared = prepare_runs({"r": runs})
        out = {}
        for row, query in enumerate(prepared.row_query):
            start, stop = prepared.row_starts[row], prepared.row_starts[row] + prepared.lengths[row]
            out[query] = (prepared.doc_ids[start:stop].tolist(), prepared.scores[start:stop].tolist())
        return out

    assert rankings(run) == rankings(ranked)


def test_the_callers_scores_are_never_reordered():
    frame, _, qrels = _unsorted_case(3)
    ties = frame.sort_values(["query_id", "score"], ascending=[True, False], ignore_index=True)
    ties["doc_id"] = ties["doc_id"].astype(object)
    scores = ties["score"].to_numpy(copy=True)
    as_dict = {"query_id": ties["query_id"].tolist(), "doc_id": ties["doc_id"].tolist(), "score": scores}
    before = ties.copy(deep=True)
    ir_incomplete.evaluate({"a": ties, "b": pd.DataFrame(as_dict)}, qrels, ["infAP"])
    pd.testing.assert_frame_equal(ties, before, check_exact=True)
    assert np.array_equal(scores, before["score"].to_numpy())


def test_import_does_not_import_pyarrow():
    code = "import sys, ir_incomplete; print('pyarrow' in sys.modules, 'pyarrow.csv' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        check=True,
    ).stdout.split()
    assert out[1] == "False"
