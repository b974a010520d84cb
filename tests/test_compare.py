"""``ir_incomplete.compare``: runs against a baseline or pair by pair with paired significance tests,
multiple-comparison corrections, markdown / LaTeX / TSV reports and the ``ir_incomplete compare``
command line; the Wilcoxon test and the ``against`` pairs added to the robustness significance tests."""

from __future__ import annotations

import copy
import io
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from conftest import COVID, _need
from scipy import stats
from statsmodels.stats.multitest import multipletests

import ir_incomplete
from ir_incomplete import compare, format_report
from ir_incomplete.cli import main
from ir_incomplete.data import prepare_runs
from ir_incomplete.report import adjust_p_values
from ir_incomplete.robustness import pairwise_tests

TESTS = ("t", "wilcoxon", "bootstrap", "randomized_tukey")


# ---------------------------------------------------------------------------------------------------
# a tiny example: 6 topics, one relevant document "r" and one non-relevant "n" each
# ---------------------------------------------------------------------------------------------------
TOPICS = [f"q{k}" for k in range(1, 7)]
QRELS = pd.DataFrame(
    {
        "query_id": np.repeat(TOPICS, 2),
        "doc_id": ["r", "n"] * 6,
        "relevance": [1, 0] * 6,
    }
)


def _run(relevant_first: set[str]) -> pd.DataFrame:
    """A run ranking "r" above "n" on the topics of ``relevant_first`` and below elsewhere."""
    rows = []
    for q in TOPICS:
        first = q in relevant_first
        rows += [(q, "r", 2.0 if first else 1.0), (q, "n", 1.0 if first else 2.0)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


#: P@1 per topic: base (0,0,0,0,0,1), good (1,1,1,1,1,1), mixed (1,1,0,0,0,1); AP = (1 + P@1) / 2
RUNS = {"base": _run({"q6"}), "good": _run(set(TOPICS)), "mixed": _run({"q1", "q2", "q6"})}


def test_hand_computed_t_test_against_the_baseline():
    table = compare(RUNS, QRELS, ["P@1", "AP"], baseline="base", correction="holm")
    assert list(table.columns) == [
        "measure",
        "run",
        "baseline",
        "value",
        "baseline_value",
        "difference",
        "ci_low",
        "ci_high",
        "ci_level",
        "effect_size",
        "p_value",
        "p_adjusted",
        "significant",
        "topics",
    ]
    assert table["measure"].tolist() == ["P@1"] * 3 + ["AP"] * 3
    assert table["run"].tolist() == ["base", "good", "mixed"] * 2
    p1 = table[table["measure"] == "P@1"].set_index("run")
    assert p1["value"].tolist() == pytest.approx([1 / 6, 1.0, 0.5], abs=1e-15)
    # good − base: d = (1,1,1,1,1,0): mean 5/6, sd √(1/6), t = (5/6) / (√(1/6)/√6) = 5, 5 degrees of freedom
    p_good = 2 * stats.t.sf(5.0, 5)
    # mixed − base: d = (1,1,0,0,0,0): mean 1/3, sd √(4/15), t = (1/3) / (√(4/15)/√6) = √(5/2)
    p_mixed = 2 * stats.t.sf(math.sqrt(2.5), 5)
    assert p1.at["good", "p_value"] == pytest.approx(p_good, rel=1e-12)
    assert p1.at["mixed", "p_value"] == pytest.approx(p_mixed, rel=1e-12)
    # Holm over the 2 comparisons: 2 · p_good, then max(2 · p_good, 1 · p_mixed)
    assert p1.at["good", "p_adjusted"] == pytest.approx(2 * p_good, rel=1e-12)
    assert p1.at["mixed", "p_adjusted"] == pytest.approx(p_mixed, rel=1e-12)
    assert p1["significant"].tolist() == [False, True, False]
    assert np.isnan(p1.at["base", "p_value"])
    assert np.isnan(p1.at["base", "p_adjusted"])
    assert p1.at["base", "difference"] == 0.0
    assert (p1["baseline"] == "base").all()
    assert (p1["topics"] == 6).all()
    # AP = (1 + P@1) / 2 per topic: the t-test is scale-free, the p-values are the same
    ap = table[table["measure"] == "AP"].set_index("run")
    assert ap["p_value"].to_numpy()[1:] == pytest.approx(p1["p_value"].to_numpy()[1:], rel=1e-12)
    assert ap["value"].tolist() == pytest.approx([7 / 12, 1.0, 0.75], abs=1e-15)


def test_attrs_record_the_settings():
    table = compare(RUNS, QRELS, "P@1", test="bootstrap", correction="bonferroni", alpha=0.1, B=200, seed=3)
    assert table.attrs == {
        "test": "bootstrap",
        "correction": "bonferroni",
        "alpha": 0.1,
        "B": 200,
        "seed": 3,
        "baseline": None,
        "runs": ["base", "good", "mixed"],
        "measures": ["P@1"],
        "topics": "qrels",
        "comparisons": 3,
    }
    assert compare(RUNS, QRELS, "P@1", baseline="good").attrs["B"] is None
    assert compare(RUNS, QRELS, "P@1", baseline="good").attrs["comparisons"] == 2


# ---------------------------------------------------------------------------------------------------
# parity with scipy and statsmodels
# ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def random_runs():
    """8 runs over 25 topics: random rankings of 30 documents, graded judgments of 20 of them."""
    rng = np.random.default_rng(5)
    topics = [f"t{k}" for k in range(25)]
    docs = [f"d{k}" for k in range(30)]
    qrels = pd.DataFrame(
        [(t, d, int(rng.integers(0, 3))) for t in topics for d in docs[:20]],
        columns=["query_id", "doc_id", "relevance"],
    )
    runs = {}
    for r in range(8):
        skill = r / 8
        rows = []
        for t in topics:
            grade = qrels[qrels["query_id"] == t].set_index("doc_id")["relevance"].reindex(docs, fill_value=0)
            score = skill * grade.to_numpy() + rng.random(30)
            rows += [(t, d, float(s)) for d, s in zip(docs, score, strict=True)]
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    runs["copy"] = runs["run3"].copy()  # identical to run3
    return runs, qrels


def _per_topic(runs, qrels, measure):
    per_query = ir_incomplete.evaluate(runs, qrels, [measure])
    return per_query.pivot(index="run", columns="query_id", values="value").reindex(list(runs))


@pytest.mark.parametrize("correction", [None, "bonferroni", "holm"])
@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_p_values_equal_scipy_and_statsmodels_against_a_baseline(random_runs, test, correction):
    runs, qrels = random_runs
    table = compare(runs, qrels, ["nDCG@10", "AP"], baseline="run2", test=test, correction=correction)
    scipy_test = stats.ttest_rel if test == "t" else stats.wilcoxon
    for measure in ("nDCG@10", "AP"):
        wide = _per_topic(runs, qrels, measure)
        rows = table[(table["measure"] == measure) & (table["run"] != "run2")]
        expected = np.array([scipy_test(wide.loc[r], wide.loc["run2"]).pvalue for r in rows["run"]])
        np.testing.assert_allclose(rows["p_value"], expected, rtol=0, atol=1e-12)
        adjusted = expected if correction is None else multipletests(expected, alpha=0.05, method=correction)[1]
        np.testing.assert_allclose(rows["p_adjusted"], adjusted, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(rows["significant"], adjusted < 0.05)
        means = wide.mean(axis=1)
        np.testing.assert_allclose(rows["value"], means[rows["run"]], rtol=0, atol=1e-12)
        np.testing.assert_allclose(rows["difference"], means[rows["run"]] - means["run2"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("correction", ["bonferroni", "holm"])
@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_p_values_equal_scipy_and_statsmodels_for_all_pairs(random_runs, test, correction):
    runs, qrels = random_runs
    runs = {k: v for k, v in runs.items() if k != "copy"}  # identical runs: scipy gives NaN, we give 1
    table = compare(runs, qrels, "nDCG@10", test=test, correction=correction)
    names = list(runs)
    assert list(zip(table["run_a"], table["run_b"], strict=True)) == list(itertools.combinations(names, 2))
    wide = _per_topic(runs, qrels, "nDCG@10")
    scipy_test = stats.ttest_rel if test == "t" else stats.wilcoxon
    expected = np.array([scipy_test(wide.loc[a], wide.loc[b]).pvalue for a, b in itertools.combinations(names, 2)])
    np.testing.assert_allclose(table["p_value"], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(table["p_adjusted"], multipletests(expected, method=correction)[1], rtol=0, atol=1e-12)
    assert table["significant"].any()
    assert not table["significant"].all()


def test_adjust_p_values_equals_statsmodels():
    rng = np.random.default_rng(0)
    for size in (1, 2, 5, 40):
        p = rng.random(size) ** 3
        p[: size // 3] = p[-1]  # ties
        for method in ("bonferroni", "holm"):
            np.testing.assert_allclose(
                adjust_p_values(p, method), multipletests(p, method=method)[1], rtol=0, atol=1e-12
            )
        assert (adjust_p_values(p, None) == p).all()
    with_nan = adjust_p_values([0.01, np.nan, 0.04], "holm")
    assert np.isnan(with_nan[1])
    assert with_nan[[0, 2]].tolist() == pytest.approx([0.02, 0.04], abs=1e-15)
    with pytest.raises(ValueError, match="correction='sidak' is not valid; choices: None, bonferroni, holm, fdr_bh"):
        adjust_p_values([0.1], "sidak")


# ---------------------------------------------------------------------------------------------------
# resampling tests: seeded, reproducible, sane
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("test", ["bootstrap", "randomized_tukey"])
def test_resampling_tests_are_reproducible_bit_for_bit(random_runs, test):
    runs, qrels = random_runs
    first = compare(runs, qrels, ["nDCG@10", "P@5"], baseline="run0", test=test, correction="holm", B=500, seed=11)
    again = compare(runs, qrels, ["nDCG@10", "P@5"], baseline="run0", test=test, correction="holm", B=500, seed=11)
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    other = compare(runs, qrels, ["nDCG@10", "P@5"], baseline="run0", test=test, correction="holm", B=500, seed=12)
    assert not first["p_value"].equals(other["p_value"])
    # the default seed is fixed (0): two calls without a seed agree
    pd.testing.assert_frame_equal(
        compare(runs, qrels, "P@5", test=test, B=200), compare(runs, qrels, "P@5", test=test, B=200, seed=0)
    )
    # each measure starts from the seed afresh: a measure's p-values do not depend on the others
    alone = compare(runs, qrels, "P@5", baseline="run0", test=test, correction="holm", B=500, seed=11)
    np.testing.assert_array_equal(first[first["measure"] == "P@5"]["p_value"], alone["p_value"])
    # with a baseline, the bootstrap p-values are those of the same pairs among all pairs
    if test == "bootstrap":
        pairs = compare(runs, qrels, "P@5", test=test, B=500, seed=11)
        pairs = pairs[pairs["run_a"] == "run0"].set_index("run_b")["p_value"]
        np.testing.assert_array_equal(alone.set_index("run")["p_value"].drop("run0"), pairs.reindex(list(runs)[1:]))


@pytest.mark.parametrize("test", TESTS)
def test_identical_runs_have_p_one_and_a_dominating_run_small_p(test):
    rng = np.random.default_rng(3)
    topics = [f"q{k}" for k in range(20)]
    qrels = pd.DataFrame({"query_id": topics, "doc_id": "r", "relevance": 1})
    rank = rng.integers(1, 9, size=20)  # rank of the relevant document: AP = 1 / rank

    def run(ranks):
        rows = [(t, f"n{k}", float(100 - k)) for t in topics for k in range(10)]
        frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
        frame = frame[frame["doc_id"] != "n0"]
        extra = pd.DataFrame({"query_id": topics, "doc_id": "r", "score": [100.5 - r for r in ranks]})
        return pd.concat([frame, extra], ignore_index=True)

    runs = {"weak": run(rank + 1), "twin": run(rank + 1), "strong": run(np.ones(20, dtype=int))}
    table = compare(runs, qrels, "AP", baseline="weak", test=test, B=2000).set_index("run")
    assert table.at["twin", "p_value"] == 1.0
    assert not table.at["twin", "significant"]
    assert (table.at["strong", "value"] == 1.0) and (table.at["weak", "value"] < 0.5)
    assert table.at["strong", "p_value"] < 0.001
    assert table.at["strong", "significant"]


# ---------------------------------------------------------------------------------------------------
# the significance module: Wilcoxon and `against`
# ---------------------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # scipy on identical runs: 0/0
def test_wilcoxon_equals_scipy_pair_by_pair():
    # scipy's method="auto" depends on zeros, ties and the number of topics: exact distribution,
    # permutation distribution (at most 13 topics with zeros or ties) or normal approximation (> 50)
    rng = np.random.default_rng(1)
    cases = [
        (6, None),
        (6, 1),
        (9, 2),
        (10, None),
        (14, None),
        (14, 1),
        (30, None),
        (30, 2),
        (50, 1),
        (51, None),
        (80, 2),
    ]
    for n_topics, decimals in cases:
        values = rng.random((6, n_topics))
        if decimals:
            values = np.round(values, decimals)  # ties
        values[3] = values[2]  # identical
        values[4] = values[1] + 0.01 * np.arange(n_topics)  # one zero difference, no ties
        table = pairwise_tests(values, "wilcoxon")
        for row in table.itertuples():
            expected = stats.wilcoxon(values[row.run_a], values[row.run_b]).pvalue
            if np.isnan(expected):
                assert np.isnan(row.p_value)
            else:
                assert row.p_value == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("test", TESTS)
def test_pairwise_tests_against_one_run(random_runs, test):
    runs, qrels = random_runs
    wide = _per_topic(runs, qrels, "P@5")
    everything = pairwise_tests(wide, test, B=300, seed=4)
    against = pairwise_tests(wide, test, B=300, seed=4, against="run5")
    assert against["run_b"].eq("run5").all()
    assert against["run_a"].tolist() == [r for r in runs if r != "run5"]
    for row in against.itertuples():
        same = everything[
            ((everything["run_a"] == row.run_a) & (everything["run_b"] == "run5"))
            | ((everything["run_a"] == "run5") & (everything["run_b"] == row.run_a))
        ]
        assert row.p_value == same["p_value"].item() or (np.isnan(row.p_value) and np.isnan(same["p_value"].item()))
    with pytest.raises(ValueError, match="against='nope' is not a run; runs: run0, run1"):
        pairwise_tests(wide, test, against="nope")


# ---------------------------------------------------------------------------------------------------
# topics and values
# ---------------------------------------------------------------------------------------------------
def test_values_follow_evaluate_and_counting_measures_sum(random_runs):
    runs, qrels = random_runs
    table = compare(runs, qrels, ["AP", "NumRet", "Success@5"], baseline="run0")
    summary = ir_incomplete.evaluate(runs, qrels, ["AP", "NumRet", "Success@5"], per_query=False)
    merged = table.merge(summary, on=["run", "measure"], suffixes=("", "_evaluate"))
    assert len(merged) == len(table)
    np.testing.assert_allclose(merged["value"], merged["value_evaluate"], rtol=0, atol=1e-12)
    assert table[table["measure"] == "NumRet"]["value"].eq(25 * 30).all()


def test_topics_run_compares_the_topics_every_run_answers():
    runs = {name: frame[frame["query_id"] != "q1"] if name == "mixed" else frame for name, frame in RUNS.items()}
    by_run = compare(runs, QRELS, "P@1", baseline="base", topics="run").set_index("run")
    assert (by_run["topics"] == 5).all()
    assert by_run.at["good", "value"] == 1.0
    assert by_run.at["base", "value"] == pytest.approx(1 / 5, abs=1e-15)
    d = np.array([1.0, 1, 1, 1, 0])  # good − base on q2, …, q6
    expected = stats.ttest_rel(d, np.zeros(5)).pvalue
    assert by_run.at["good", "p_value"] == pytest.approx(expected, rel=1e-12)
    # every qrels topic by default: mixed scores 0 on q1
    by_qrels = compare(runs, QRELS, "P@1", baseline="base").set_index("run")
    assert (by_qrels["topics"] == 6).all()
    assert by_qrels.at["mixed", "value"] == pytest.approx(2 / 6, abs=1e-15)


def test_a_topic_without_a_finite_value_is_left_out_with_a_warning(monkeypatch):
    from ir_incomplete import api

    real = api.evaluate

    def with_a_gap(*args, **kwargs):
        table = real(*args, **kwargs)
        table.loc[(table["run"] == "good") & (table["query_id"] == "q2"), "value"] = np.nan
        return table

    monkeypatch.setattr(api, "evaluate", with_a_gap)
    with pytest.warns(UserWarning, match=r"P@1: 1 of 6 topics are left out .* run 'good', topic 'q2'"):
        table = compare(RUNS, QRELS, "P@1", baseline="base")
    assert (table["topics"] == 5).all()
    assert table.set_index("run").at["base", "value"] == pytest.approx(1 / 5, abs=1e-15)


# ---------------------------------------------------------------------------------------------------
# input forms and errors
# ---------------------------------------------------------------------------------------------------
def test_every_form_of_runs_gives_the_same_table(tmp_path):
    expected = compare(RUNS, QRELS, ["P@1", "AP"], baseline="base")
    stacked = pd.concat([frame.assign(run=name) for name, frame in RUNS.items()], ignore_index=True)
    folder = tmp_path / "runs"
    folder.mkdir()
    for name, frame in RUNS.items():
        lines = [f"{q} Q0 {d} 0 {s} tag\n" for q, d, s in frame.itertuples(index=False)]
        (folder / name).write_text("".join(lines))
    qrels_file = tmp_path / "qrels"
    qrels_file.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS.itertuples(index=False)))
    for runs in (stacked, str(folder), [str(folder / n) for n in RUNS]):
        pd.testing.assert_frame_equal(compare(runs, str(qrels_file), ["P@1", "AP"], baseline="base"), expected)
    prepared = prepare_runs(RUNS)  # runs converted once, as robustness studies do
    pd.testing.assert_frame_equal(compare(prepared, QRELS, ["P@1", "AP"], baseline="base"), expected)


def test_inputs_are_not_modified():
    runs = {name: frame.copy() for name, frame in RUNS.items()}
    qrels = QRELS.copy()
    before = copy.deepcopy((runs, qrels))
    compare(runs, qrels, "AP", test="bootstrap", B=100)
    for name in runs:
        pd.testing.assert_frame_equal(runs[name], before[0][name])
    pd.testing.assert_frame_equal(qrels, before[1])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"baseline": "bm25"}, ValueError, "baseline='bm25' is not a run; runs: base, good, mixed"),
        ({"test": "sign"}, ValueError, "test='sign' is not valid; choices: t, wilcoxon, bootstrap, randomized_tukey"),
        (
            {"correction": "sidak"},
            ValueError,
            "correction='sidak' is not valid; choices: None, bonferroni, holm, fdr_bh",
        ),
        ({"alpha": 0.0}, ValueError, "alpha=0.0 is out of range; expected a significance level 0 < alpha < 1"),
        ({"alpha": 1}, ValueError, "alpha=1 is out of range"),
        ({"alpha": "0.05"}, ValueError, "alpha='0.05' is not a number"),
        ({"test": "bootstrap", "B": 10}, ValueError, "B=10 is too small"),
        ({"test": "bootstrap", "seed": "x"}, ValueError, "seed='x' is not a valid seed"),
        ({"topics": "all"}, ValueError, "topics='all' is not valid; choices: qrels, run"),
    ],
)
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        compare(RUNS, QRELS, "P@1", **kwargs)


def test_too_few_runs_or_topics():
    with pytest.raises(ValueError, match="compare needs at least 2 runs; got 1: 'base'"):
        compare({"base": RUNS["base"]}, QRELS, "P@1")
    with pytest.raises(ValueError, match="compare needs at least 2 runs; got 1: 'run'"):
        compare(RUNS["base"], QRELS, "P@1")
    with pytest.raises(ValueError, match="P@1: 1 topic\\(s\\) are scored for every run; paired tests need at least 2"):
        compare(RUNS, QRELS[QRELS["query_id"] == "q1"], "P@1")
    runs = {"a": RUNS["base"][RUNS["base"]["query_id"] == "q1"], "b": RUNS["good"][RUNS["good"]["query_id"] == "q2"]}
    with pytest.raises(ValueError, match="P@1: 0 topic"):
        compare(runs, QRELS, "P@1", topics="run")


def test_format_report_rejects_bad_input():
    table = compare(RUNS, QRELS, "P@1", baseline="base")
    with pytest.raises(ValueError, match="fmt='html' is not valid; choices: markdown, latex, tsv"):
        format_report(table, "html")
    with pytest.raises(ValueError, match="digits=-1 is not valid"):
        format_report(table, digits=-1)
    with pytest.raises(ValueError, match="table is not a compare\\(\\) result: expected the columns measure, run"):
        format_report(table.drop(columns="p_adjusted"))
    with pytest.raises(TypeError, match="not dict"):
        format_report({"a": 1})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------
# reports
# ---------------------------------------------------------------------------------------------------
BASELINE_MARKDOWN = """\
| Run | P@1 | AP |
|---|---:|---:|
| base (baseline) | 0.167 | 0.583 |
| good | **1.000**† | **1.000**† |
| mixed | 0.500 | 0.750 |

† significantly different from the baseline base (adjusted p < 0.05; two-sided paired t-test, Holm \
correction over the 2 comparisons with the baseline per measure); bold: the highest value per measure; 6 topics.
"""

PAIRS_LATEX = "\n".join(
    [
        r"\begin{table}",
        r"\centering",
        r"\caption{Pairwise comparison of the runs.}",
        r"\label{tab:compare}",
        r"\begin{tabular}{llrr}",
        r"\toprule",
        r"\# & Run & P@1 & AP \\",
        r"\midrule",
        r"a & base & 0.1667 & 0.5833 \\",
        r"b & good & \textbf{1.0000}$^{a}$ & \textbf{1.0000}$^{a}$ \\",
        r"c & mixed & 0.5000 & 0.7500 \\",
        r"\bottomrule",
        r"\end{tabular}",
        "",
        r"\smallskip",
        r"{\footnotesize superscript letters: significantly higher than the run of that letter (adjusted $p < 0.05$; "
        r"two-sided paired t-test, Bonferroni correction over the 3 pairs of runs per measure); bold: the highest "
        r"value per measure; 6 topics.\par}",
        r"\end{table}",
        "",
    ]
)


def test_reports_of_the_tiny_example():
    table = compare(RUNS, QRELS, ["P@1", "AP"], baseline="base", correction="holm")
    assert format_report(table, "markdown", digits=3) == BASELINE_MARKDOWN
    pairs = compare(RUNS, QRELS, ["P@1", "AP"], correction="bonferroni")
    assert format_report(pairs, "latex") == PAIRS_LATEX
    # good − mixed: t = √5, p = 0.076 (not significant); bonferroni: good − base 3 · 0.0041 < 0.05
    assert pairs["significant"].tolist() == [True, False, False] * 2
    markdown = format_report(pairs)
    assert "| b | good | **1.0000**<sup>a</sup> | **1.0000**<sup>a</sup> |" in markdown
    latex = format_report(table, "latex")
    assert r"good & \textbf{1.0000}$^{\dagger}$ & \textbf{1.0000}$^{\dagger}$ \\" in latex


def test_report_marks_a_significantly_lower_run_and_ties_for_best():
    # against "good", base is significantly lower: the dagger marks any significant difference
    table = compare(RUNS, QRELS, "P@1", baseline="good")
    text = format_report(table, digits=2)
    assert "| good (baseline) | **1.00** |" in text
    assert "| base | 0.17† |" in text
    assert "| mixed | 0.50 |" in text
    twins = compare({"x": RUNS["good"], "y": RUNS["good"], "z": RUNS["base"]}, QRELS, "P@1")
    text = format_report(twins, digits=1)
    assert "| a | x | **1.0**<sup>c</sup> |" in text
    assert "| b | y | **1.0**<sup>c</sup> |" in text
    assert "| c | z | 0.2 |" in text


def test_report_escapes_names():
    runs = {"bm25_rm3|x": RUNS["good"], "50%&$#": RUNS["base"]}
    table = compare(runs, QRELS, "P@1", baseline="50%&$#")
    assert "| bm25\\_rm3\\|x | **1.0000**† |" in format_report(table)
    latex = format_report(table, "latex")
    assert r"bm25\_rm3|x & \textbf{1.0000}$^{\dagger}$ \\" in latex
    assert r"50\%\&\$\# (baseline) & 0.1667 \\" in latex
    assert "baseline 50\\%\\&\\$\\# ($p < 0.05$; two-sided paired t-test, no correction)" in latex
    assert r"\caption{Comparison of the runs with the baseline 50\%\&\$\#.}" in latex


def test_tsv_is_the_table_at_full_precision():
    table = compare(RUNS, QRELS, ["P@1", "AP"], baseline="base", correction="holm")
    back = pd.read_csv(io.StringIO(format_report(table, "tsv")), sep="\t")
    pd.testing.assert_frame_equal(back, table, check_exact=True)


# ---------------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------------
@pytest.fixture()
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS.itertuples(index=False)))
    paths = []
    for name, frame in RUNS.items():
        path = tmp_path / name
        path.write_text("".join(f"{q} Q0 {d} 0 {s} tag\n" for q, d, s in frame.itertuples(index=False)))
        paths.append(str(path))
    return str(qrels), paths


def _cli(capsys, *argv):
    code = main(["compare", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_markdown_and_latex(files, capsys):
    qrels, runs = files
    code, out, err = _cli(
        capsys, qrels, *runs, "P@1", "AP", "--baseline", "base", "--correction", "holm", "--digits", "3"
    )
    assert (code, err) == (0, "")
    assert out == BASELINE_MARKDOWN
    code, out, err = _cli(capsys, qrels, *runs, "P@1 AP", "--correction", "bonferroni", "--format", "latex")
    assert (code, err) == (0, "")
    assert out == PAIRS_LATEX


def test_cli_tsv_equals_the_api(files, capsys):
    qrels, runs = files
    argv = [qrels, *runs, "P@1", "--test", "bootstrap", "-B", "300", "--seed", "5", "--format", "tsv", "--alpha", "0.1"]
    code, out, _ = _cli(capsys, *argv)
    assert code == 0
    expected = compare(RUNS, QRELS, "P@1", test="bootstrap", B=300, seed=5, alpha=0.1)
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(out), sep="\t"), expected, check_exact=True)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--baseline", "bm25"], "--baseline 'bm25' is not a run; runs: base, good, mixed"),
        (["--alpha", "1.5"], "--alpha 1.5 is out of range"),
        (["--test", "sign"], "argument --test: invalid choice: 'sign'"),
        (["--correction", "fdr"], "argument --correction: invalid choice: 'fdr'"),
        (["--format", "html"], "argument --format: invalid choice: 'html'"),
        (["--test", "bootstrap", "-B", "5"], "-B 5 is too small"),
    ],
)
def test_cli_errors(files, capsys, extra, message):
    qrels, runs = files
    code, out, err = _cli(capsys, qrels, *runs, "P@1", *extra)
    assert code == 2
    assert out == ""
    assert message in err
    assert "Traceback" not in err


def test_cli_needs_two_runs_and_a_measure(files, capsys):
    qrels, runs = files
    code, _, err = _cli(capsys, qrels, runs[0], "P@1")
    assert code == 2
    assert "compare needs at least 2 runs; got 1: base" in err
    code, _, err = _cli(capsys, qrels, *runs)
    assert code == 2
    assert "no measures given after the runs" in err


# ---------------------------------------------------------------------------------------------------
# real data: TREC-COVID round 1
# ---------------------------------------------------------------------------------------------------
def test_covid_round1_against_pytrec_eval_scipy_and_statsmodels():
    import pytrec_eval

    from ir_incomplete.data import read_trec_qrels, read_trec_run

    _need(COVID)
    names = ["BBGhelani1", "CSIROmed_RF", "UIowaS_Run1", "sab20.1.meta.docs", "udel_fang_run1"]
    runs = {name: read_trec_run(COVID / "runs" / f"{name}.gz") for name in names}
    qrels = read_trec_qrels(COVID / "qrels.round1.txt.gz")
    table = compare(runs, qrels, ["AP", "nDCG@10"], baseline="UIowaS_Run1", correction="holm")
    # per-topic values from trec_eval (pytrec_eval), every qrels topic (a topic a run misses scores 0)
    qrels_dict: dict[str, dict[str, int]] = {}
    for q, d, g in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False):
        qrels_dict.setdefault(str(q), {})[str(d)] = int(g)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, {"map", "ndcg_cut.10"})
    topics = sorted(qrels_dict)
    scores = {}
    for name, frame in runs.items():
        run_dict: dict[str, dict[str, float]] = {}
        for q, d, s in frame[["query_id", "doc_id", "score"]].itertuples(index=False):
            run_dict.setdefault(str(q), {})[str(d)] = float(s)
        result = evaluator.evaluate(run_dict)
        scores[name] = {
            "AP": np.array([result.get(t, {}).get("map", 0.0) for t in topics]),
            "nDCG@10": np.array([result.get(t, {}).get("ndcg_cut_10", 0.0) for t in topics]),
        }
    assert (table["topics"] == 30).all()
    for measure in ("AP", "nDCG@10"):
        rows = table[(table["measure"] == measure) & (table["run"] != "UIowaS_Run1")]
        base = scores["UIowaS_Run1"][measure]
        p = np.array([stats.ttest_rel(scores[r][measure], base).pvalue for r in rows["run"]])
        np.testing.assert_allclose(rows["p_value"], p, rtol=0, atol=1e-9)
        np.testing.assert_allclose(rows["p_adjusted"], multipletests(p, method="holm")[1], rtol=0, atol=1e-9)
        np.testing.assert_allclose(rows["value"], [scores[r][measure].mean() for r in rows["run"]], rtol=0, atol=1e-9)
    assert table["significant"].any()
    assert not table["significant"].all()
    text = format_report(table, "markdown")
    assert text.count("(baseline)") == 1
    assert text.count("|\n") == 2 + len(names)
