"""Run conversion: trec_eval's ranking order with and without the already-ordered fast path, runs
converted once (:func:`prepare_runs`) and evaluated against many qrels, and chunked evaluation — all
bit-identical to converting everything at once."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import ir_incomplete
from ir_incomplete.data import PreparedRuns, Qrels, prepare_runs, rank_runs, trec_order

MEASURES = [
    "infAP",
    "Bpref",
    "indAP",
    "subAP",
    "RankEff",
    "GAP(g=0.5,0.5)",
    "BootNDCG(b=50)@10",
    "BootNDCG(b=50,order=docid)@10",
    "P@5",
]


def _world(seed=3, n_runs=6, n_topics=7):
    """Runs with many float32 score ties, in shuffled row order, one query the qrels do not judge,
    and qrels with grades −1..2."""
    rng = np.random.default_rng(seed)
    qrels_rows, runs = [], {}
    for t in range(n_topics - 1):
        for d in rng.choice(80, size=30, replace=False):
            qrels_rows.append((f"q{t}", f"d{d:03d}", int(rng.choice([-1, 0, 0, 1, 2]))))
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    for r in range(n_runs):
        rows = []
        for t in range(n_topics):
            n = int(rng.integers(1, 40))
            for d in rng.choice(80, size=n, replace=False):
                score = float(rng.integers(0, 6)) + (1e-9 if rng.random() < 0.2 else 0.0)  # float32 ties
                rows.append((f"q{t}", f"d{d:03d}", score))
        frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
        if r % 2:
            frame = frame.sample(frac=1.0, random_state=r)  # not in ranking order
        runs[f"run{r}"] = frame.reset_index(drop=True)
    return runs, qrels


def _reference_order(ranking, scores, doc_ids, score_precision):
    """trec_eval's order by a plain Python sort (ranking asc, score desc, doc id desc)."""
    cmp = np.asarray(scores, dtype=np.float32 if score_precision == "float32" else np.float64).tolist()
    items = sorted(range(len(ranking)), key=lambda i: doc_ids[i], reverse=True)
    items.sort(key=lambda i: cmp[i], reverse=True)
    items.sort(key=lambda i: ranking[i])
    return np.array(items, dtype=np.int64)


@pytest.mark.parametrize("score_precision", ["float32", "float64"])
@pytest.mark.parametrize("presorted", [True, False])
def test_trec_order_matches_a_plain_sort(score_precision, presorted):
    rng = np.random.default_rng(11)
    n = 400
    ranking = np.sort(rng.integers(0, 9, size=n))
    scores = rng.integers(0, 5, size=n) + np.where(rng.random(n) < 0.3, 1e-10, 0.0)
    doc_ids = np.array([f"d{i}" for i in rng.permutation(n)], dtype=object)
    ref = _reference_order(ranking, scores, doc_ids, score_precision)
    if presorted:  # already in ranking and score order, ties in random doc id order
        cmp = scores.astype(np.float32) if score_precision == "float32" else scores
        first = np.lexsort((-cmp, ranking))
        ranking, scores, doc_ids = ranking[first], scores[first], doc_ids[first]
        ref = _reference_order(ranking, scores, doc_ids, score_precision)
    order = trec_order(ranking, scores, doc_ids, score_precision)
    np.testing.assert_array_equal(order, ref)
    # in order already: the identity
    again = trec_order(ranking[order], scores[order], doc_ids[order], score_precision)
    np.testing.assert_array_equal(again, np.arange(n))


@pytest.mark.parametrize("score_precision", ["float32", "float64"])
def test_prepared_runs_give_the_same_rankings_as_rank_runs(score_precision):
    runs, qrels = _world()
    judged = Qrels.from_any(qrels)
    direct = rank_runs(runs, judged, score_precision)
    prepared = prepare_runs(runs, score_precision)
    via = prepared.rank(judged)
    np.testing.assert_array_equal(direct.codes, via.codes)
    np.testing.assert_array_equal(direct.lengths, via.lengths)
    np.testing.assert_array_equal(direct.run_of_row, via.run_of_row)
    np.testing.assert_array_equal(direct.topic_of_row, via.topic_of_row)
    for row in range(direct.n_rows):
        a = direct.doc_ids[direct.row_starts[row] : direct.row_starts[row] + direct.lengths[row]]
        b = via.doc_ids[via.row_starts[row] : via.row_starts[row] + via.lengths[row]]
        assert a.tolist() == b.tolist()
    # rows are ordered by run, then topic code
    key = direct.run_of_row * judged.n_topics + direct.topic_of_row
    assert np.all(np.diff(key) > 0)


def test_prepared_runs_against_many_qrels_match_fresh_conversions():
    runs, qrels = _world()
    prepared = prepare_runs(runs)
    rng = np.random.default_rng(5)
    for keep in (1.0, 0.5, 0.1):
        sub = qrels[rng.random(len(qrels)) < keep]
        expected = ir_incomplete.evaluate(runs, sub, MEASURES)
        got = ir_incomplete.evaluate(prepared, sub, MEASURES)
        pd.testing.assert_frame_equal(expected, got, check_exact=True)
    with pytest.raises(ValueError, match="score_precision='float32', not 'float64'"):
        ir_incomplete.evaluate(prepared, qrels, ["infAP"], score_precision="float64")


@pytest.mark.parametrize("chunk_rows", [1, 50, 120, 10**9, None])
def test_chunked_evaluation_is_identical(chunk_rows):
    runs, qrels = _world()
    whole = ir_incomplete.evaluate(runs, qrels, MEASURES, chunk_rows=None)
    chunked = ir_incomplete.evaluate(runs, qrels, MEASURES, chunk_rows=chunk_rows)
    pd.testing.assert_frame_equal(whole, chunked, check_exact=True)
    prepared = ir_incomplete.evaluate(prepare_runs(runs), qrels, MEASURES, chunk_rows=chunk_rows)
    pd.testing.assert_frame_equal(whole, prepared, check_exact=True)
    means = ir_incomplete.evaluate(runs, qrels, MEASURES, per_query=False, chunk_rows=chunk_rows)
    pd.testing.assert_frame_equal(ir_incomplete.evaluate(runs, qrels, MEASURES, per_query=False), means)


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "100"])
def test_chunk_rows_is_checked(bad):
    runs, qrels = _world()
    with pytest.raises(ValueError, match="chunk_rows=.* is not valid; expected an integer >= 1 or None"):
        ir_incomplete.evaluate(runs, qrels, ["infAP"], chunk_rows=bad)


def test_duplicates_raise_only_for_judged_queries():
    run = pd.DataFrame(
        {
            "query_id": ["q0", "q0", "q0", "zz", "zz"],
            "doc_id": ["a", "b", "a", "c", "c"],
            "score": [3.0, 2.0, 1.0, 2.0, 1.0],
        }
    )
    qrels = pd.DataFrame({"query_id": ["q0", "q1"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    prepared = prepare_runs({"r": run})  # no qrels yet: nothing to refuse
    with pytest.raises(ValueError, match="run 'r' lists document 'a' more than once for query 'q0'"):
        ir_incomplete.evaluate(prepared, qrels, ["infAP"])
    with pytest.raises(ValueError, match="run 'r' lists document 'a' more than once for query 'q0'"):
        ir_incomplete.evaluate({"r": run}, qrels, ["infAP"], chunk_rows=1)
    # query zz lists c twice, but no qrels judge zz: ignored, as by trec_eval
    only_zz_dup = run.iloc[[0, 1, 3, 4]]
    out = ir_incomplete.evaluate(prepare_runs({"r": only_zz_dup}), qrels, ["P@1"])
    assert out["value"].tolist() == [1.0, 0.0]


def test_prepared_runs_survive_another_process_with_other_string_hashes(tmp_path):
    """Workers hash strings differently (PYTHONHASHSEED): pickled runs re-hash there, same numbers."""
    runs, qrels = _world()
    prepared = prepare_runs(runs)
    expected = ir_incomplete.evaluate(prepared, qrels, MEASURES)
    path = tmp_path / "prepared.pkl"
    path.write_bytes(pickle.dumps((prepared, qrels, Qrels.from_any(qrels))))
    out = tmp_path / "out.pkl"
    code = (
        "import pickle, sys, ir_incomplete\n"
        "prepared, qrels, judged = pickle.load(open(sys.argv[1], 'rb'))\n"
        f"a = ir_incomplete.evaluate(prepared, qrels, {MEASURES!r})\n"
        f"b = ir_incomplete.evaluate(prepared, judged, {MEASURES!r})\n"
        "pickle.dump((a, b), open(sys.argv[2], 'wb'))\n"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345")
    subprocess.run([sys.executable, "-c", code, str(path), str(out)], check=True, env=env)
    from_fresh_qrels, from_pickled_qrels = pickle.loads(out.read_bytes())
    pd.testing.assert_frame_equal(expected, from_fresh_qrels, check_exact=True)
    pd.testing.assert_frame_equal(expected, from_pickled_qrels, check_exact=True)


def test_prepared_runs_round_trip_to_frames():
    runs, _ = _world()
    prepared = prepare_runs(runs)
    assert isinstance(prepared, PreparedRuns)
    frames = prepared.frames()
    assert list(frames) == list(runs)
    for name, frame in runs.items():
        key = ["query_id", "doc_id"]
        a = frame.sort_values(key, ignore_index=True)
        b = frames[name].sort_values(key, ignore_index=True)
        pd.testing.assert_frame_equal(a, b, check_dtype=False)
    assert prepared.run_sizes().tolist() == [len(r) for r in runs.values()]


def _layout(frame: pd.DataFrame, layout: str, score_precision: str, rng) -> pd.DataFrame:
    """The rows of a run rearranged: by query and score with ties in random doc id order (the grouped
    path that only reorders tied neighbours), grouped but unsorted, one query split in two blocks, or
    shuffled (the sort path)."""
    cmp = frame["score"].to_numpy().astype(np.float32 if score_precision == "float32" else np.float64)
    tie_noise = rng.random(len(frame))
    by_score = frame.iloc[np.lexsort((tie_noise, -cmp, frame["query_id"].to_numpy()))]
    if layout == "sorted":
        return by_score.reset_index(drop=True)
    if layout == "grouped_unsorted":
        return frame.iloc[np.lexsort((tie_noise, frame["query_id"].to_numpy()))].reset_index(drop=True)
    if layout == "split_query":
        first = by_score["query_id"].iloc[0]
        block = by_score[by_score["query_id"] == first]
        rest = by_score[by_score["query_id"] != first]
        half = len(block) // 2
        return pd.concat([block.iloc[:half], rest, block.iloc[half:]], ignore_index=True)
    return frame.sample(frac=1.0, random_state=int(rng.integers(1 << 30))).reset_index(drop=True)


@pytest.mark.parametrize("score_precision", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["sorted", "grouped_unsorted", "split_query", "shuffled"])
def test_conversion_orders_every_layout_like_a_plain_sort_and_leaves_the_input_alone(score_precision, layout):
    runs, qrels = _world(seed=8)
    rng = np.random.default_rng(4)
    laid = {name: _layout(frame, layout, score_precision, rng) for name, frame in runs.items()}
    before = {name: frame.copy(deep=True) for name, frame in laid.items()}
    doc_arrays = {name: frame["doc_id"].to_numpy() for name, frame in laid.items()}
    single = next(iter(laid))
    for given in (laid, {single: laid[single]}):  # many runs (concatenated) and one run (the caller's arrays)
        prepared = prepare_runs(given, score_precision)
        for row in range(prepared.n_rows):
            name = prepared.run_names[prepared.row_run[row]]
            frame = laid[name]
            mine = frame[frame["query_id"] == prepared.row_query[row]]
            ref = _reference_order(
                np.zeros(len(mine), np.int64), mine["score"].to_numpy(), mine["doc_id"].to_numpy(), score_precision
            )
            start = prepared.row_starts[row]
            got = prepared.doc_ids[start : start + prepared.lengths[row]]
            assert got.tolist() == mine["doc_id"].to_numpy()[ref].tolist()
            scores = prepared.scores[start : start + prepared.lengths[row]]
            np.testing.assert_array_equal(scores, mine["score"].to_numpy()[ref])
        expected = ir_incomplete.evaluate(runs, qrels, MEASURES, score_precision=score_precision)
        got_values = ir_incomplete.evaluate(given, qrels, MEASURES, score_precision=score_precision)
        pd.testing.assert_frame_equal(expected[expected["run"].isin(list(given))].reset_index(drop=True), got_values)
    for name, frame in laid.items():  # nothing reordered in place
        pd.testing.assert_frame_equal(frame, before[name])
        assert frame["doc_id"].to_numpy().tolist() == doc_arrays[name].tolist()


@pytest.mark.parametrize("dtype", [object, "str", "string"])
def test_a_missing_query_id_inside_a_block_is_found(dtype):
    """Query ids are checked where they change: a missing id must still be found where it sits."""
    qids = pd.Series(["q1", "q1", None, "q1", "q2"], dtype=dtype)
    run = pd.DataFrame({"query_id": qids, "doc_id": list("abcde"), "score": [5.0, 4, 3, 2, 1]})
    qrels = pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(ValueError, match=r"run query_id contains missing values \(row 2\)"):
        ir_incomplete.evaluate(run, qrels, ["infAP"])
    with pytest.raises(ValueError, match=r"run query_id contains missing values \(row 2\)"):
        prepare_runs({"r": run})


def test_query_ids_of_mixed_types_are_converted_before_blocks_are_cut():
    """Equal-valued ids of different types (1, 1.0, '1') are one query; non-str ids are converted."""
    run = pd.DataFrame(
        {
            "query_id": pd.Series([1, 1.0, "1", 2, "2"], dtype=object),
            "doc_id": list("abcde"),
            "score": [5.0, 4, 3, 2, 1],
        }
    )
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["c", "e"], "relevance": [1, 1]})
    out = ir_incomplete.evaluate(run, qrels, ["RR", "NumRet"])
    assert out.set_index(["query_id", "measure"])["value"].to_dict() == {
        ("1", "RR"): 1 / 3,
        ("2", "RR"): 1 / 2,
        ("1", "NumRet"): 3.0,
        ("2", "NumRet"): 2.0,
    }


def test_selected_runs_score_as_if_converted_alone():
    runs, qrels = _world()
    dup = runs["run3"]
    runs["run3"] = pd.concat([dup, dup.iloc[:1]], ignore_index=True)  # lists a document twice
    prepared = prepare_runs(runs)
    for names in (["run4", "run1"], ["run0"], ["run5", "run2", "run0"]):
        got = ir_incomplete.evaluate(prepared.select(names), qrels, MEASURES)
        expected = ir_incomplete.evaluate({n: runs[n] for n in names}, qrels, MEASURES)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
    picked = prepared.select(["run3", "run1"])
    assert picked.run_names == ["run3", "run1"]
    assert picked.run_sizes().tolist() == [len(runs["run3"]), len(runs["run1"])]
    query = dup["query_id"].iloc[0]
    assert query in set(qrels["query_id"])  # judged: the duplicate must be refused
    with pytest.raises(ValueError, match=f"run 'run3' lists document .* more than once for query '{query}'"):
        ir_incomplete.evaluate(picked, qrels, ["infAP"])
    with pytest.raises(ValueError, match="no run named 'nope' here"):
        prepared.select(["nope"])
    with pytest.raises(ValueError, match="must be distinct"):
        prepared.select(["run1", "run1"])


@pytest.mark.parametrize("unsorted_at", ["first query", "last query", "nowhere"])
@pytest.mark.parametrize("score_precision", ["float32", "float64"])
def test_large_grouped_runs_are_put_in_trec_order_wherever_a_query_is_unsorted(unsorted_at, score_precision):
    """150,000 items, each query's rows together: more than the first look at whether rankings are
    sorted (65,536 items) takes in. One swapped pair in the first or the last query must be sorted;
    many score ties are broken by document id descending."""
    rng = np.random.default_rng(11)
    n_queries, depth = 300, 500
    query = np.repeat(np.arange(n_queries), depth)
    docs = np.array([f"d{j:06d}" for j in rng.permutation(n_queries * depth)], dtype=object)
    scores = rng.integers(0, 40, len(query)).astype(np.float64) + rng.choice([0.0, 1e-9], len(query))
    cmp = scores.astype(np.float32 if score_precision == "float32" else np.float64)
    expected = np.lexsort((-np.unique(docs, return_inverse=True)[1], -cmp, query))
    laid = expected.copy()
    if unsorted_at != "nowhere":
        at = 10 if unsorted_at == "first query" else len(laid) - depth + 10
        while cmp[laid[at]] == cmp[laid[at + 1]]:  # a pair whose scores differ: swapped, it is unsorted
            at += 1
        laid[[at, at + 1]] = laid[[at + 1, at]]
    frame = pd.DataFrame({"query_id": [f"q{q:03d}" for q in query[laid]], "doc_id": docs[laid], "score": scores[laid]})
    prepared = prepare_runs({"r": frame}, score_precision)
    assert prepared.lengths.tolist() == [depth] * n_queries
    assert prepared.doc_ids.to_numpy().tolist() == docs[expected].tolist()
    np.testing.assert_array_equal(prepared.scores, scores[expected])
