"""``ir_incomplete.evaluate``: many runs at once, input forms, aggregation, mixing with ir_measures' measures,
ranking conventions (spec §1.3) and the negative-grade policy (spec D1)."""

import gzip

import ir_measures
import numpy as np
import pandas as pd
import pytest
from conftest import spec_topic

import ir_incomplete
from ir_incomplete import evaluate

EPS = 1e-5

QRELS = pd.DataFrame(
    [
        ("q1", "a", 1),
        ("q1", "b", 0),
        ("q1", "c", 1),
        ("q1", "d", -1),
        ("q1", "e", 2),
        ("q2", "a", 0),
        ("q2", "f", 1),
        ("q2", "g", 0),
        ("q3", "h", 1),
        ("q3", "i", 0),
    ],
    columns=["query_id", "doc_id", "relevance"],
)


def _run(rows):
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


def _random_run(seed):
    rng = np.random.default_rng(seed)
    rows = []
    pool = list("abcdefghi") + [f"u{i}" for i in range(12)]
    for q in ("q1", "q2", "q3"):
        docs = rng.choice(pool, size=12, replace=False)
        scores = rng.integers(0, 6, size=12).astype(float)  # many ties
        rows += [(q, d, s) for d, s in zip(docs, scores, strict=True)]
    return _run(rows)


RUNS = {
    "A": _run(
        [
            ("q1", "a", 5),
            ("q1", "x", 4),
            ("q1", "b", 3),
            ("q1", "c", 2),
            ("q1", "d", 1.5),
            ("q1", "e", 1),
            ("q2", "f", 3),
            ("q2", "g", 2),
            ("q2", "a", 1),
            ("q2", "y", 0.5),
            ("q3", "i", 2),
            ("q3", "h", 1),
        ]
    ),
    # B does not answer q3 and answers q9, which has no judgments
    "B": _run([("q1", "e", 3), ("q1", "d", 2), ("q1", "c", 1), ("q2", "z", 1), ("q2", "f", 0.5), ("q9", "a", 1)]),
    "C": _random_run(0),
    "D": _random_run(1),
}
OUR_MEASURES = ["infAP", "infAP(c=1.5)", "infAP(variant=uniform)@3"]


def _per_query(frame, run, measure):
    sub = frame[(frame["run"] == run) & (frame["measure"] == measure)]
    return dict(zip(sub["query_id"].astype(str), sub["value"], strict=True))


def _ir_measures_per_query(measure_string, run):
    measure = ir_measures.parse_measure(measure_string)
    return {m.query_id: m.value for m in ir_measures.iter_calc([measure], QRELS, run)}


def _assert_close(got, expected, tol=1e-9):
    assert got, "nothing to compare"
    assert got.keys() == expected.keys()
    for key in got:
        assert got[key] == pytest.approx(expected[key], abs=tol), key


# ---------------------------------------------------------------------------------------------------------
# many runs at once
# ---------------------------------------------------------------------------------------------------------
def test_mapping_of_runs_matches_ir_measures_run_by_run():
    frame = evaluate(RUNS, QRELS, OUR_MEASURES)
    assert list(frame.columns) == ["run", "query_id", "measure", "value"]
    assert len(frame) == len(RUNS) * 3 * len(OUR_MEASURES)
    # grouped by run in the given order, measures in the given order, every qrels topic reported
    assert list(dict.fromkeys(frame["run"])) == list(RUNS)
    first = frame[frame["run"] == "A"]
    assert list(dict.fromkeys(first["measure"])) == OUR_MEASURES
    assert set(frame["query_id"].astype(str)) == {"q1", "q2", "q3"}
    for name, run in RUNS.items():
        for measure in OUR_MEASURES:  # plain infAP: pytrec_eval; the others: our provider
            _assert_close(_per_query(frame, name, measure), _ir_measures_per_query(measure, run))


def test_hand_values_of_run_a_and_b():
    frame = evaluate({"A": RUNS["A"], "B": RUNS["B"]}, QRELS, ["infAP"])
    a = _per_query(frame, "A", "infAP")
    # q1 (R=3): a@1 → 1; c@4 (r=1, n=1, d=2) → 1/4 + (2/4)(1+ε)/(2+2ε) = 1/2; e@6 (r=2, n=1, U=1, d=4)
    e = 1 / 6 + (4 / 6) * (2 + EPS) / (3 + 2 * EPS)
    assert a["q1"] == pytest.approx((1 + 0.5 + e) / 3, abs=1e-9)
    assert a["q2"] == pytest.approx(1.0, abs=1e-9)
    assert a["q3"] == pytest.approx((1 / 2 + (1 / 2) * EPS / (1 + 2 * EPS)) / 1, abs=1e-9)
    b = _per_query(frame, "B", "infAP")
    # q1: e@1 → 1; c@3 (r=1, n=0, U=1 → d=2) → 1/3 + (2/3)(1+ε)/(1+2ε)
    c = 1 / 3 + (2 / 3) * (1 + EPS) / (1 + 2 * EPS)
    assert b["q1"] == pytest.approx((1 + c) / 3, abs=1e-9)
    # q2: z unpooled @1, f@2 with nothing pooled above → 1/2
    assert b["q2"] == pytest.approx(0.5, abs=1e-9)
    assert b["q3"] == 0.0  # not answered
    assert "q9" not in b  # no judgments: not reported


def test_dataframe_with_run_column():
    stacked = pd.concat([run.assign(run=name) for name, run in RUNS.items()], ignore_index=True)
    by_column = evaluate(stacked, QRELS, OUR_MEASURES)
    by_mapping = evaluate(RUNS, QRELS, OUR_MEASURES)
    pd.testing.assert_frame_equal(by_column, by_mapping)
    shuffled = stacked.sample(frac=1.0, random_state=7)
    again = evaluate(shuffled, QRELS, OUR_MEASURES)
    key = ["run", "query_id", "measure"]
    pd.testing.assert_frame_equal(
        again.sort_values(key).reset_index(drop=True), by_mapping.sort_values(key).reset_index(drop=True)
    )


def _write_trec_run(path, run, tag):
    lines = [
        f"{q} Q0 {d} {i} {s!r} {tag}"
        for i, (q, d, s) in enumerate(zip(run["query_id"], run["doc_id"], run["score"], strict=True))
    ]
    text = "\n".join(lines) + "\n"
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt") as handle:
            handle.write(text)
    else:
        path.write_text(text)


def _write_trec_qrels(path, qrels):
    path.write_text(
        "".join(
            f"{q} 0 {d} {r}\n" for q, d, r in zip(qrels["query_id"], qrels["doc_id"], qrels["relevance"], strict=True)
        )
    )


def test_directory_and_files_of_trec_runs(tmp_path):
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    _write_trec_run(runs_dir / "A.txt", RUNS["A"], "A")
    _write_trec_run(runs_dir / "B.run.gz", RUNS["B"], "B")
    _write_trec_run(runs_dir / "C", RUNS["C"], "C")
    qrels_path = tmp_path / "qrels.txt"
    _write_trec_qrels(qrels_path, QRELS)
    expected = evaluate({"A.txt": RUNS["A"], "B.run": RUNS["B"], "C": RUNS["C"]}, QRELS, OUR_MEASURES)
    from_dir = evaluate(runs_dir, qrels_path, OUR_MEASURES)
    assert sorted(set(from_dir["run"])) == ["A.txt", "B.run", "C"]
    key = ["run", "query_id", "measure"]

    def norm(frame):
        frame = frame.assign(query_id=frame["query_id"].astype(str))
        return frame.sort_values(key).reset_index(drop=True)

    pd.testing.assert_frame_equal(norm(from_dir), norm(expected))
    from_str_dir = evaluate(str(runs_dir), str(qrels_path), OUR_MEASURES)
    pd.testing.assert_frame_equal(norm(from_str_dir), norm(expected))
    from_files = evaluate([runs_dir / "B.run.gz", runs_dir / "A.txt"], qrels_path, OUR_MEASURES)
    assert list(dict.fromkeys(from_files["run"])) == ["B.run", "A.txt"]
    pd.testing.assert_frame_equal(norm(from_files), norm(expected[expected["run"] != "C"]))
    single = evaluate(runs_dir / "B.run.gz", qrels_path, ["infAP(c=1.5)"])
    assert set(single["run"]) == {"B.run"}
    _assert_close(_per_query(single, "B.run", "infAP(c=1.5)"), _per_query(expected, "B.run", "infAP(c=1.5)"))


def test_per_query_false_is_the_mean_over_qrels_topics():
    per_query = evaluate(RUNS, QRELS, OUR_MEASURES)
    means = evaluate(RUNS, QRELS, OUR_MEASURES, per_query=False)
    assert list(means.columns) == ["run", "measure", "value"]
    assert len(means) == len(RUNS) * len(OUR_MEASURES)
    for name, run in RUNS.items():
        for measure in OUR_MEASURES:
            got = means[(means["run"] == name) & (means["measure"] == measure)]["value"]
            assert len(got) == 1
            values = _per_query(per_query, name, measure)
            assert float(got.iloc[0]) == pytest.approx(sum(values.values()) / 3, abs=1e-12)
            parsed = ir_measures.parse_measure(measure)
            reference = ir_measures.calc_aggregate([parsed], QRELS, run)[parsed]
            assert float(got.iloc[0]) == pytest.approx(reference, abs=1e-9), (name, measure)
    # B misses q3: its mean counts q3 as 0
    b = _per_query(per_query, "B", "infAP")
    assert b["q3"] == 0.0
    b_mean = float(means[(means["run"] == "B") & (means["measure"] == "infAP")]["value"].iloc[0])
    assert b_mean == pytest.approx((b["q1"] + b["q2"]) / 3, abs=1e-12)


def test_mixing_with_measures_computed_by_ir_measures():
    measures = ["infAP(c=1.5)", "nDCG@10", "P@5", "infAP"]
    frame = evaluate(RUNS, QRELS, measures)
    assert list(dict.fromkeys(frame[frame["run"] == "C"]["measure"])) == measures
    for name, run in RUNS.items():
        parsed = [ir_measures.parse_measure(m) for m in measures]
        aggregated, metrics = ir_measures.calc(parsed, QRELS, run)
        for m in parsed:
            expected = {x.query_id: x.value for x in metrics if x.measure == m}
            _assert_close(_per_query(frame, name, repr(m)), expected)
        means = evaluate({name: run}, QRELS, measures, per_query=False)
        for m in parsed:
            got = float(means[means["measure"] == repr(m)]["value"].iloc[0])
            assert got == pytest.approx(aggregated[m], abs=1e-9), (name, m)


def test_measure_objects_and_strings_mix():
    objects = [ir_incomplete.infAP(c=1.5), ir_measures.nDCG @ 10, ir_measures.infAP(variant="uniform") @ 3]
    strings = ["infAP(c=1.5)", "nDCG@10", "infAP(variant=uniform)@3"]
    pd.testing.assert_frame_equal(evaluate(RUNS, QRELS, objects), evaluate(RUNS, QRELS, strings))
    single = evaluate(RUNS["A"], QRELS, "infAP(c=1.5)")
    assert set(single["measure"]) == {"infAP(c=1.5)"} and len(single) == 3


# ---------------------------------------------------------------------------------------------------------
# ranking conventions (spec §1.3)
# ---------------------------------------------------------------------------------------------------------
def _value(run, qrels, measure="infAP", **kwargs):
    frame = evaluate({"r": run}, qrels, [measure], **kwargs)
    assert len(frame) == 1
    return float(frame["value"].iloc[0])


SECOND = 1 / 2 + (1 / 2) * EPS / (1 + 2 * EPS)  # the only relevant doc at rank 2 below one nonrelevant


def test_ties_t1_t2(spec):
    run, qrels = spec_topic(spec, "T1")
    assert _value(run, qrels) == pytest.approx(1.0, abs=1e-9)  # b above a
    run, qrels = spec_topic(spec, "T2")
    assert _value(run, qrels) == pytest.approx(SECOND, abs=1e-9)  # c above b
    # the input order does not matter
    reversed_run = {"q": dict(reversed(list(run["q"].items())))}
    assert _value(reversed_run, qrels) == pytest.approx(SECOND, abs=1e-9)


def test_ties_are_byte_wise_docid_descending():
    # "D9" > "D10" byte-wise, so D9 ranks first
    assert _value({"q": {"D10": 1.0, "D9": 1.0}}, {"q": {"D9": 1, "D10": 0}}) == pytest.approx(1.0, abs=1e-9)
    assert _value({"q": {"D9": 1.0, "D10": 1.0}}, {"q": {"D10": 1, "D9": 0}}) == pytest.approx(SECOND, abs=1e-9)
    # upper case sorts below lower case ('B' < 'b'), and a prefix below its extensions ('b' < 'b1')
    assert _value({"q": {"B": 2.0, "b": 2.0}}, {"q": {"b": 1, "B": 0}}) == pytest.approx(1.0, abs=1e-9)
    assert _value({"q": {"b": 2.0, "b1": 2.0}}, {"q": {"b1": 1, "b": 0}}) == pytest.approx(1.0, abs=1e-9)
    # a tie only among equal scores: higher score still wins
    assert _value({"q": {"D9": 1.0, "D10": 1.5}}, {"q": {"D10": 1, "D9": 0}}) == pytest.approx(1.0, abs=1e-9)


def test_float32_ties():
    high, low = 1.0 + 1e-9, 1.0
    assert high != low and np.float32(high) == np.float32(low)
    run = {"q": {"a": high, "b": low}}
    qrels = {"q": {"a": 1, "b": 0}}
    # default: compared as float32 → tie → docid descending: b, a
    assert _value(run, qrels) == pytest.approx(SECOND, abs=1e-9)
    assert _value(run, qrels, score_precision="float32") == pytest.approx(SECOND, abs=1e-9)
    # float64: a (higher score) first
    assert _value(run, qrels, score_precision="float64") == pytest.approx(1.0, abs=1e-9)
    # the default agrees with pytrec_eval (through ir_measures)
    assert ir_measures.calc_aggregate([ir_measures.infAP], qrels, run)[ir_measures.infAP] == pytest.approx(
        SECOND, abs=1e-9
    )
    # scores that differ in float32 are not tied
    assert _value({"q": {"a": 1.0 + 1e-6, "b": 1.0}}, qrels) == pytest.approx(1.0, abs=1e-9)


# ---------------------------------------------------------------------------------------------------------
# negative grades (spec D1)
# ---------------------------------------------------------------------------------------------------------
def test_negative_zero_on_topic_s(spec):
    run, qrels = spec_topic(spec, "S")
    assert _value(run, qrels) == pytest.approx(2 / 3, abs=1e-9)
    # u1, u2 judged nonrelevant: r at rank 3 with r=0, n=2, d=2 above
    zero = 1 / 3 + (2 / 3) * EPS / (2 + 2 * EPS)
    assert _value(run, qrels, negative="zero") == pytest.approx(zero, abs=1e-9)
    assert _value(run, qrels, "infAP(c=1.5)", negative="zero") == pytest.approx(
        1 / 3 + (2 / 3) * EPS / (2 + 1.5 * EPS), abs=1e-9
    )
    # the same as making the grades 0 in the qrels
    zeroed = {"q": {d: max(g, 0) for d, g in qrels["q"].items()}}
    assert _value(run, zeroed) == pytest.approx(zero, abs=1e-9)
    provider = ir_incomplete.IncompleteProvider(negative="zero")
    assert provider.calc_aggregate([ir_incomplete.infAP], qrels, run)[ir_incomplete.infAP] == pytest.approx(
        zero, abs=1e-9
    )


# ---------------------------------------------------------------------------------------------------------
# input forms
# ---------------------------------------------------------------------------------------------------------
def test_pyterrier_column_names():
    run = RUNS["A"].rename(columns={"query_id": "qid", "doc_id": "docno"})
    qrels = QRELS.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    expected = evaluate(RUNS["A"], QRELS, OUR_MEASURES)
    pd.testing.assert_frame_equal(evaluate(run, qrels, OUR_MEASURES), expected)
    pd.testing.assert_frame_equal(evaluate(run, QRELS, OUR_MEASURES), expected)
    pd.testing.assert_frame_equal(evaluate(RUNS["A"], qrels, OUR_MEASURES), expected)
    # PyTerrier results carry more columns (query text, rank)
    extra = run.assign(query="some words", rank=np.arange(len(run)), docid=np.arange(len(run)))
    pd.testing.assert_frame_equal(evaluate(extra, qrels, OUR_MEASURES), expected)


def test_int_query_ids_in_qrels_match_str_in_run():
    qrels = QRELS.assign(query_id=QRELS["query_id"].str[1:].astype(int))
    run = RUNS["A"].assign(query_id=RUNS["A"]["query_id"].str[1:])
    got = evaluate(run, qrels, OUR_MEASURES)
    expected = evaluate(RUNS["A"], QRELS, OUR_MEASURES)
    assert sorted(set(got["query_id"].astype(str))) == ["1", "2", "3"]
    assert np.allclose(got["value"].to_numpy(), expected["value"].to_numpy(), atol=1e-12, rtol=0)
    # and the other way round, and as dicts of dicts
    run_int = RUNS["A"].assign(query_id=RUNS["A"]["query_id"].str[1:].astype(int))
    qrels_str = QRELS.assign(query_id=QRELS["query_id"].str[1:])
    assert np.allclose(
        evaluate(run_int, qrels_str, OUR_MEASURES)["value"].to_numpy(), expected["value"].to_numpy(), atol=1e-12, rtol=0
    )
    run_dict = {1: {"a": 5.0, "x": 4.0, "b": 3.0, "c": 2.0, "d": 1.5, "e": 1.0}}
    qrels_dict = {"1": {"a": 1, "b": 0, "c": 1, "d": -1, "e": 2}}
    q1 = _per_query(expected, "run", "infAP")["q1"]
    assert _value(run_dict, qrels_dict) == pytest.approx(q1, abs=1e-12)


def test_named_tuples_and_dicts():
    qrels = [ir_measures.Qrel(q, d, int(r)) for q, d, r in QRELS.itertuples(index=False)]
    run = [ir_measures.ScoredDoc(q, d, float(s)) for q, d, s in RUNS["A"].itertuples(index=False)]
    run_dict = {}
    for q, d, s in RUNS["A"].itertuples(index=False):
        run_dict.setdefault(q, {})[d] = float(s)
    expected = evaluate(RUNS["A"], QRELS, OUR_MEASURES)
    pd.testing.assert_frame_equal(evaluate(run, qrels, OUR_MEASURES), expected)
    pd.testing.assert_frame_equal(evaluate(run_dict, QRELS, OUR_MEASURES), expected)
    pd.testing.assert_frame_equal(evaluate({"run": run_dict}, qrels, OUR_MEASURES), expected)
