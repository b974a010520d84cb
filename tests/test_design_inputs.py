"""Bad input to the design-based estimates (:func:`ir_incomplete.estimate`, :func:`ir_incomplete.judging.sample`):
each refused with one clear line naming the row or value, or warned about; never a silent estimate."""

from __future__ import annotations

import re
import warnings

import ir_measures
import numpy as np
import pandas as pd
import pytest
from conftest import UNRELIABLE_ALLOWED, ZERO_WIDTH_ALLOWED

from ir_incomplete.estimation import estimate
from ir_incomplete.judging.designs import sample, write_design

DOCS = [f"d{i}" for i in range(12)]


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(1)
    runs = {}
    for r in range(3):
        rows = []
        for q in ("1", "2"):
            for i, d in enumerate(rng.permutation(DOCS)[:8]):
                rows.append((q, d, 100.0 - i))
        runs[f"r{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    pairs = pd.concat(runs.values())[["query_id", "doc_id"]].drop_duplicates().reset_index(drop=True)
    qrels = pairs.assign(relevance=rng.integers(0, 3, len(pairs)))
    qrels.loc[0, "relevance"] = 2
    design = sample(runs, 10, depth=5, seed=0)
    assert (design["pi"] < 1).sum() >= 6
    return runs, qrels, design


def _copy(design: pd.DataFrame) -> pd.DataFrame:
    out = design.copy()
    out.attrs = dict(design.attrs)
    return out


def _pair(design: pd.DataFrame, i: int = 0) -> str:
    return re.escape(f"({design['query_id'].iloc[i]}, {design['doc_id'].iloc[i]})")


# -- the design ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1.5, -0.1, np.nan, None, "abc", "", True])
def test_pi_outside_zero_one_or_not_a_number(setup, value):
    runs, qrels, design = setup
    bad = _copy(design)
    bad["pi"] = bad["pi"].astype(object)
    bad.loc[2, "pi"] = value
    with pytest.raises(
        ValueError, match=rf"^design row 2: pi={re.escape(repr(value))} for {_pair(design, 2)} .*\(0, 1\]"
    ):
        estimate(runs, qrels, bad, ["P@5"])


def test_pi_column_missing(setup):
    runs, qrels, design = setup
    with pytest.raises(ValueError, match=r"^the design has no 'pi' column; a design has columns query_id, doc_id, pi"):
        estimate(runs, qrels, design.drop(columns="pi"), ["P@5"])


def test_sampled_pair_without_a_grade(setup):
    runs, qrels, design = setup
    q, d = design["query_id"].iloc[3], design["doc_id"].iloc[3]
    missing = qrels[~((qrels["query_id"] == q) & (qrels["doc_id"] == d))]
    with pytest.raises(ValueError, match=rf"^the design's pair {_pair(design, 3)} has no judgment \(1 of its"):
        estimate(runs, missing, design, ["P@5"])
    unjudged = qrels.copy()
    unjudged.loc[(unjudged["query_id"] == q) & (unjudged["doc_id"] == d), "relevance"] = -1
    with pytest.raises(ValueError, match=rf"^the design's pair {_pair(design, 3)} has grade -1"):
        estimate(runs, unjudged, design, ["P@5"])


def test_duplicate_design_pairs_also_across_id_types(setup):
    runs, qrels, design = setup
    dup = pd.concat([design, design.iloc[[1]]], ignore_index=True)
    dup.attrs = dict(design.attrs)
    with pytest.raises(ValueError, match=rf"^design row {len(design)}: the pair {_pair(design, 1)} is listed twice"):
        estimate(runs, qrels, dup, ["P@5"])
    mixed = dup.copy()
    mixed["query_id"] = mixed["query_id"].astype(object)
    mixed.loc[len(design), "query_id"] = int(design["query_id"].iloc[1])  # 1 and "1" are one query
    mixed.attrs = dict(design.attrs)
    with pytest.raises(ValueError, match="is listed twice"):
        estimate(runs, qrels, mixed, ["P@5"])


def test_certainty_rows_need_pi_one(setup):
    runs, qrels, design = setup
    bad = _copy(design)
    bad.loc[0, "stratum"] = "certain"
    pi = float(design["pi"].iloc[0])
    with pytest.raises(
        ValueError, match=rf"^design row 0: {_pair(design)} is in the certainty stratum with pi={pi!r};"
    ):
        estimate(runs, qrels, bad, ["P@5"])


def test_design_drawn_from_a_run_not_given(setup):
    runs, qrels, design = setup
    with pytest.raises(ValueError, match=r"^the design was drawn from run 'r1', which is not among the runs given"):
        estimate({k: v for k, v in runs.items() if k != "r1"}, qrels, design, ["P@5"])


def test_design_pair_below_the_runs_top_depth(setup):
    runs, qrels, design = setup
    bad = _copy(design)
    i = int(np.flatnonzero(design["pi"] < 1)[0])
    bad.loc[i, "doc_id"] = "elsewhere"
    more = pd.concat(
        [qrels, pd.DataFrame({"query_id": [bad["query_id"][i]], "doc_id": ["elsewhere"], "relevance": [1]})]
    )
    with pytest.raises(
        ValueError, match=r"^the design's pair \(\w+, elsewhere\) with pi=0\.\d+ is not in the top 5 of"
    ):
        estimate(runs, more, bad, ["P@5"])
    # a certainty pair may lie outside (judgments made before the design)
    bad.loc[i, "pi"] = 1.0
    estimate(runs, more, bad, ["P@5"])


def test_empty_design(setup, tmp_path):
    runs, qrels, design = setup
    empty = design.iloc[:0]
    with pytest.raises(ValueError, match=r"^the design has no pairs"):
        estimate(runs, qrels, empty, ["P@5"])
    header_only = tmp_path / "header.tsv"
    write_design(empty, header_only)
    with pytest.raises(ValueError, match=r"^the design has no pairs"):
        estimate(runs, qrels, str(header_only), ["P@5"])
    # a design's file cut after its column line has lost its rows: refused as cut off
    write_design(design, header_only)
    header_only.write_text("".join(header_only.read_text().splitlines(keepends=True)[:2]))
    with pytest.raises(ValueError, match=rf"holds 0 rows, but it was written with {len(design)} .*cut off"):
        estimate(runs, qrels, str(header_only), ["P@5"])
    nothing = tmp_path / "empty.tsv"
    nothing.write_text("")
    with pytest.raises(ValueError, match=rf"^design file {re.escape(repr(str(nothing)))} is empty"):
        estimate(runs, qrels, str(nothing), ["P@5"])


# -- depth, measures, options ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "measure,message",
    [
        ("foo", r"^measure 'foo' is not one estimate\(\) knows; choices: AP@k, nDCG@k, P@k, RBP\(p=..\)@k, R"),
        ("ERR@5", r"^measure 'ERR@5': ERR cannot be estimated from a sample; choices: AP@k"),
        ("P", r"^measure 'P' is not one estimate\(\) knows"),
        ("AP@6", r"^measure 'AP@6': cut-off 6 is deeper than the design's depth 5"),
        ("RBP(p=0.5)@6", r"^measure 'RBP\(p=0.5\)@6': cut-off 6 is deeper than the design's depth 5"),
        ("RBP(p=1.5)@5", r"^measure 'RBP\(p=1.5\)@5': p=1.5 is not a persistence; expected a number > 0 and < 1"),
        ("RBP(p=1)@5", r"^measure 'RBP\(p=1\)@5': p=1.0 is not a persistence"),
        ("RBP(p=0)@5", r"^measure 'RBP\(p=0\)@5': p=0.0 is not a persistence"),
        ("RBP(p=-0.5)@5", r"^measure 'RBP\(p=-0.5\)@5': p=-0.5 is not a persistence"),
        ("nDCG(judged_only=True)@5", r"^measure 'nDCG\(judged_only=True\)@5': parameter judged_only= is not supported"),
    ],
)
def test_bad_measures(setup, measure, message):
    runs, qrels, design = setup
    with pytest.raises(ValueError, match=message):
        estimate(runs, qrels, design, [measure])


def test_recall_object_is_not_read_as_the_number_of_relevant(setup):
    """ir_measures' ``R`` is recall; its measure object prints as ``R`` and was estimated as the number of
    relevant documents."""
    runs, qrels, design = setup
    with pytest.raises(ValueError, match=r"^measure 'R': ir_measures' R is recall, which cannot be estimated"):
        estimate(runs, qrels, design, [ir_measures.R])
    number = estimate(runs, qrels, design, ["R"])
    pd.testing.assert_frame_equal(
        number.drop(columns="measure"), estimate(runs, qrels, design, [ir_measures.NumRel]).drop(columns="measure")
    )


@UNRELIABLE_ALLOWED
@ZERO_WIDTH_ALLOWED
def test_depth_deeper_than_the_design_is_refused(setup):
    """Ranks below the design's depth were never in its universe: a deeper depth= would count them as known
    nonrelevant (P@8 of 0.82 with an interval, no warning) instead of refusing."""
    runs, qrels, design = setup
    with pytest.raises(ValueError, match=r"^depth=8 is deeper than the design's depth 5: .*never sampled"):
        estimate(runs, qrels, design, ["P@8"], depth=8)
    with pytest.raises(ValueError, match=r"^depth=3 differs from the design's depth 5: .* \(e.g. P@3\)"):
        estimate(runs, qrels, design, ["P@3"], depth=3)
    pd.testing.assert_frame_equal(
        estimate(runs, qrels, design, ["P@3"], depth=5), estimate(runs, qrels, design, ["P@3"])
    )


@pytest.mark.parametrize("depth", [0, -1, 2.5, "5", True])
def test_depth_not_a_positive_integer(setup, depth):
    runs, qrels, design = setup
    with pytest.raises(ValueError, match=rf"^depth={re.escape(repr(depth))} is not an integer >= 1"):
        estimate(runs, qrels, design, ["P@1"], depth=depth)


def test_score_precision_of_the_design(setup):
    """The universe is the runs' top depth in the order of the scores at the design's precision: another
    precision can rank ties differently and change the universe."""
    runs, qrels, design = setup
    assert design.attrs["score_precision"] == "float32"
    with pytest.raises(ValueError, match=r"^score_precision='float64' differs from the design's 'float32'"):
        estimate(runs, qrels, design, ["P@5"], score_precision="float64")
    d64 = sample(runs, 10, depth=5, seed=0, score_precision="float64")
    pd.testing.assert_frame_equal(
        estimate(runs, qrels, d64, ["P@5"], score_precision="float64"), estimate(runs, qrels, design, ["P@5"])
    )


def test_design_without_a_recorded_depth_needs_depth(setup):
    runs, qrels, design = setup
    bare = design.copy()
    bare.attrs = {}
    with pytest.raises(ValueError, match=r"^the design records no depth .* give depth="):
        estimate(runs, qrels, bare, ["P@5"])
    with_depth = estimate(runs, qrels, bare, ["P@5"], depth=5)
    pd.testing.assert_frame_equal(with_depth, estimate(runs, qrels, design, ["P@5"]))


@pytest.mark.parametrize("option,value", [("pairs", "yes"), ("per_query", 1), ("min_cell", -1), ("min_cell", 2.5)])
def test_bad_options(setup, option, value):
    runs, qrels, design = setup
    with pytest.raises(ValueError, match=rf"^{option}={re.escape(repr(value))} is not"):
        estimate(runs, qrels, design, ["P@5"], **{option: value})


def test_pairs_per_query_together(setup):
    runs, qrels, design = setup
    with pytest.raises(ValueError, match=r"^pairs=True and per_query=True cannot be combined"):
        estimate(runs, qrels, design, ["P@5"], pairs=True, per_query=True)


# -- runs ------------------------------------------------------------------------------------------------


def test_run_listing_a_document_twice(setup):
    """A document twice in a run's top depth would be counted twice (P@5 1.28 instead of refused)."""
    runs, qrels, design = setup
    bad = dict(runs)
    r0 = runs["r0"].copy()
    r0.loc[1, "doc_id"] = r0.loc[0, "doc_id"]
    bad["r0"] = r0
    message = rf"^run 'r0' lists document '{r0.loc[0, 'doc_id']}' more than once for query '1'"
    with pytest.raises(ValueError, match=message):
        estimate(bad, qrels, design, ["P@5"])
    with pytest.raises(ValueError, match=message):
        sample(bad, 10, depth=5)


@UNRELIABLE_ALLOWED
def test_query_ids_as_int_float_and_text_match(setup):
    runs, qrels, design = setup
    want = estimate(runs, qrels, design, ["P@5", "AP@5", "nDCG@5", "R"])
    as_int = {k: v.assign(query_id=v["query_id"].astype(int)) for k, v in runs.items()}
    as_float = {k: v.assign(query_id=v["query_id"].astype(float)) for k, v in runs.items()}
    qrels_int = qrels.assign(query_id=qrels["query_id"].astype(int))
    qrels_float = qrels.assign(query_id=qrels["query_id"].astype(float))
    design_int = design.assign(query_id=design["query_id"].astype(int))
    design_float = design.assign(query_id=design["query_id"].astype(float))
    for r, q, d in [(as_int, qrels, design), (runs, qrels_float, design_int), (as_float, qrels_int, design_float)]:
        d.attrs = dict(design.attrs)
        got = estimate(r, q, d, ["P@5", "AP@5", "nDCG@5", "R"])
        pd.testing.assert_frame_equal(got, want)
    # predictions with float ids match too (a control variate that is used changes the estimate)
    labels = qrels.assign(relevance=(qrels["relevance"] >= 1).astype(int))
    with_labels = estimate(runs, qrels, design, ["P@5"], predictions=labels, min_cell=1)
    float_labels = estimate(
        runs, qrels, design, ["P@5"], predictions=labels.assign(query_id=qrels_float["query_id"]), min_cell=1
    )
    pd.testing.assert_frame_equal(with_labels, float_labels)
    assert not np.allclose(with_labels["value"], want[want["measure"] == "P@5"]["value"])
    # sample: the same design from int, float and text query ids
    for r in (as_int, as_float):
        got = sample(r, 10, depth=5, seed=0)
        pd.testing.assert_frame_equal(got, design)


def test_runs_from_a_generator_are_read_once(setup):
    runs, qrels, _ = setup

    def scored():
        for row in runs["r0"].itertuples():
            yield ir_measures.ScoredDoc(row.query_id, row.doc_id, row.score)

    design = sample(scored(), 6, depth=5, seed=0)
    pd.testing.assert_frame_equal(design, sample(list(scored()), 6, depth=5, seed=0))
    got = estimate(scored(), qrels, design, ["P@5", "AP@5"])
    pd.testing.assert_frame_equal(got, estimate(list(scored()), qrels, design, ["P@5", "AP@5"]))


def test_run_outside_the_design_is_flagged_in_every_form(setup):
    runs, qrels, design = setup
    new = pd.DataFrame(
        {
            "query_id": ["1"] * 5 + ["2"] * 5,
            "doc_id": [f"x{i}" for i in range(5)] + DOCS[:5],
            "score": [5.0, 4, 3, 2, 1] * 2,
        }
    )
    more = {**runs, "new": new}
    with pytest.warns(UserWarning, match=r"1 run\(s\) retrieve documents outside the design's universe .*'new'"):
        means = estimate(more, qrels, design, ["P@5"])
    assert means.set_index("run")["outside"]["new"] > 0
    assert (means.set_index("run")["outside"].drop("new") == 0).all()
    with pytest.warns(UserWarning, match=r"outside the design's universe .*'new'"):
        estimate(more, qrels, design, ["P@5"], pairs=True)
    with pytest.warns(UserWarning, match=r"outside the design's universe .*'new'"):
        estimate(more, qrels, design, ["P@5"], per_query=True)
    with pytest.warns(UserWarning, match=r"run 'new' is not among the runs the design was drawn from"):
        estimate({"new": new}, qrels, design, ["P@5"], universe="design")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        estimate({"r1": runs["r1"]}, qrels, design, ["P@5"], universe="design")


def test_shuffled_design_rows_give_identical_estimates(setup):
    runs, qrels, design = setup
    shuffled = design.sample(frac=1, random_state=3).reset_index(drop=True)
    shuffled.attrs = dict(design.attrs)
    labels = qrels.assign(relevance=(qrels["relevance"] >= 1).astype(int))
    for kwargs in ({}, {"pairs": True}, {"control": "model", "min_cell": 2}, {"predictions": labels, "min_cell": 2}):
        a = estimate(runs, qrels, design, ["P@5", "AP@5", "nDCG@5", "RBP(p=0.8)@5", "R"], **kwargs)
        b = estimate(runs, qrels, shuffled, ["P@5", "AP@5", "nDCG@5", "RBP(p=0.8)@5", "R"], **kwargs)
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_inputs_are_not_mutated(setup, tmp_path):
    runs, qrels, design = setup
    before = (design.copy(deep=True), dict(design.attrs), qrels.copy(deep=True))
    before_runs = {k: v.copy(deep=True) for k, v in runs.items()}
    labels = qrels.assign(relevance=(qrels["relevance"] >= 1).astype(int))
    labels_before = labels.copy(deep=True)
    estimate(runs, qrels, design, ["P@5", "AP@5", "nDCG@5"], predictions=labels, control="labels+model", pairs=True)
    sample(runs, 10, depth=5, seed=1, previous=design, judgments=qrels, predictions=labels)
    write_design(design, tmp_path / "d.tsv")
    pd.testing.assert_frame_equal(design, before[0], check_exact=True)
    assert design.attrs == before[1]
    pd.testing.assert_frame_equal(qrels, before[2], check_exact=True)
    pd.testing.assert_frame_equal(labels, labels_before, check_exact=True)
    for k, v in runs.items():
        pd.testing.assert_frame_equal(v, before_runs[k], check_exact=True)


# -- sample ----------------------------------------------------------------------------------------------


def test_predictions_off_the_judgments_scale(setup):
    runs, qrels, design = setup
    off = qrels.assign(relevance=5)
    row = off.iloc[0]
    message = (
        rf"^predictions: grade 5 of \({row['query_id']}, {row['doc_id']}\) is not on the judgments' scale \(0, 1, 2\)"
    )
    with pytest.raises(ValueError, match=message):
        estimate(runs, qrels, design, ["P@5"], predictions=off)
    with pytest.raises(ValueError, match=message):
        sample(runs, 10, depth=5, qrels=qrels.iloc[:6], predictions=off)
    with pytest.warns(UserWarning, match=r"^predictions= are not used: no judged pair"):
        sample(runs, 10, depth=5, predictions=off)


def test_prior_table_ids_as_int_float_and_text_match(setup):
    """A prior table with float query ids (1.0) used to match no pair (its text '1.0' is not '1'), so every
    prior was 0 and the design silently uniform."""
    runs, _, design = setup
    table = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["d4", "d7", "d0"], "prior": [5.0, 3.0, 4.0]})
    want = sample(runs, 10, depth=5, prior=table, seed=0)
    assert not want["pi"].equals(sample(runs, 10, depth=5, prior="uniform", seed=0)["pi"])
    for ids in (table["query_id"].astype(int), table["query_id"].astype(float)):
        got = sample(runs, 10, depth=5, prior=table.assign(query_id=ids), seed=0)
        pd.testing.assert_frame_equal(got, want)
    with pytest.raises(ValueError, match=r"^prior table: none of its 3 pairs is in the universe .* \(q1, d4\)"):
        sample(runs, 10, depth=5, prior=table.assign(query_id="q" + table["query_id"]), seed=0)


def test_pairs_that_could_never_be_drawn(setup):
    """uniform=0 with a prior table that leaves pairs at 0 gave them pi = 0: never judged, silently counted
    as nonrelevant by every estimate."""
    runs, _, _ = setup
    table = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["d4", "d7", "d0"], "prior": [5.0, 3.0, 4.0]})
    with pytest.raises(ValueError, match=r"^uniform=0 leaves 17 pairs of the universe with prior 0, e\.g\. \(1, d"):
        sample(runs, 3, depth=5, prior=table, uniform=0.0, seed=0)
    full = sample(runs, 3, depth=5, prior="uniform", seed=0, uniform=0.0)
    assert full.attrs["expected_judgments"] == pytest.approx(3.0, abs=1e-12)


def test_budget_below_the_certainty_stratum(setup):
    runs, _, _ = setup
    with pytest.raises(ValueError, match=r"^budget=3 is below the certainty stratum certain=4"):
        sample(runs, 3, depth=5, certain=4)


def test_budget_beyond_the_universe(setup):
    runs, _, _ = setup
    n = sample(runs, 1, depth=5).attrs["universe"]
    with pytest.raises(ValueError, match=rf"^certain={n + 1} is more than the {n} pairs"):
        sample(runs, n + 5, depth=5, certain=n + 1)
    with pytest.warns(UserWarning, match=rf"^budget={n + 5} is more than the {n} pairs .* every pair is judged"):
        design = sample(runs, n + 5, depth=5)
    assert design.attrs["expected_judgments"] == n and (design["pi"] == 1).all()


@pytest.mark.parametrize("seed", [None, -1, 1.5, "0", True, np.random.default_rng(0)])
def test_bad_seed(setup, seed):
    runs, _, _ = setup
    with pytest.raises(ValueError, match=r"^seed=.* (would not be reproducible|is not an integer >= 0)"):
        sample(runs, 10, depth=5, seed=seed)


def test_numpy_integer_seed_is_recorded_as_an_int(setup, tmp_path):
    runs, _, design = setup
    got = sample(runs, 10, depth=5, seed=np.int64(0))
    pd.testing.assert_frame_equal(got, design)
    assert got.attrs["seed"] == 0 and type(got.attrs["seed"]) is int
    write_design(got, tmp_path / "d.tsv")
    # the file gives the same estimates as the frame (settings, topics and precision read back)
    qrels = setup[1]
    measures = ["P@5", "AP@5", "nDCG@5", "R"]
    from_file = estimate(runs, qrels, str(tmp_path / "d.tsv"), measures, pairs=True)
    pd.testing.assert_frame_equal(from_file, estimate(runs, qrels, design, measures, pairs=True), check_exact=True)


def test_a_design_file_keeps_ids_that_start_with_a_hash_and_names_file_lines(tmp_path):
    """Only the lines before the column line are settings or comments: a document id '#a' is data, and
    a bad row is named by its line in the file."""
    from ir_incomplete.estimation import read_design

    path = tmp_path / "d.tsv"
    path.write_text('# design {"depth": 5}\n# a comment\nquery_id\tdoc_id\tpi\n1\t#a\t0.5\n1\tb\t1\n')
    frame = read_design(str(path))
    assert frame["doc_id"].tolist() == ["#a", "b"] and frame.attrs == {"depth": 5}
    path.write_text('# design {"depth": 5}\nquery_id\tdoc_id\tpi\n1\t#a\t0.5\n1\tb\t1.5\n')
    with pytest.raises(ValueError, match=r"^design file '.*d\.tsv' line 4: pi=1\.5 for \(1, b\)"):
        read_design(str(path))


def test_sample_refuses_judgments_without_their_design_and_records_what_shaped_pi(setup):
    runs, qrels, _ = setup
    with pytest.raises(ValueError, match=r"^judgments= are the judgments of an earlier round's design"):
        sample(runs, 5, depth=5, judgments=qrels, seed=0)
    design = sample(runs, 5, depth=5, seed=0)
    assert (design.attrs["certainty_pairs"], design.attrs["previous_round"], design.attrs["predictions"]) == (
        0,
        False,
        False,
    )
