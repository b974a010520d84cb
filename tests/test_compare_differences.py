"""``compare``: the difference of the means with its confidence interval and Cohen's d_z (equal to
``scipy.stats`` to 1e-12), and the layout of the reports (run labels beyond 26 runs, the note's wording
without a correction, the LaTeX caption, label and note)."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ir_incomplete.cli import main
from ir_incomplete.report import ci_level, compare, format_report


def collection(n_runs: int = 5, n_topics: int = 12, seed: int = 0):
    """Graded qrels and runs of different quality: run k ranks each topic's documents by a noisy score."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], {f"r{k}": [] for k in range(n_runs)}
    for t in range(n_topics):
        grades = rng.integers(0, 3, 20)
        qrels += [(f"q{t}", f"d{d}", int(g)) for d, g in enumerate(grades)]
        for k in range(n_runs):
            scores = grades * (1.0 - k / n_runs) + rng.random(20) * (0.5 + k)
            runs[f"r{k}"] += [(f"q{t}", f"d{d}", float(s)) for d, s in enumerate(scores)]
    columns = ["query_id", "doc_id", "score"]
    return (
        {name: pd.DataFrame(rows, columns=columns) for name, rows in runs.items()},
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
    )


def per_topic(runs, qrels, measure):
    from ir_incomplete import evaluate

    table = evaluate(runs, qrels, [measure])
    return table.pivot(index="run", columns="query_id", values="value").reindex(list(runs))


@pytest.mark.parametrize("correction", [None, "bonferroni", "holm"])
@pytest.mark.parametrize("baseline", [None, "r2"])
def test_interval_and_effect_size_equal_scipy(correction, baseline):
    runs, qrels = collection()
    alpha = 0.1
    table = compare(runs, qrels, ["AP", "nDCG@10"], baseline=baseline, correction=correction, alpha=alpha)
    m = len(runs) - 1 if baseline else len(runs) * (len(runs) - 1) // 2
    level = 1 - alpha if correction is None else 1 - alpha / m
    rows = table if baseline is None else table[table["run"] != baseline]
    assert len(rows) == 2 * m
    for measure in ("AP", "nDCG@10"):
        scores = per_topic(runs, qrels, measure)
        n = scores.shape[1]
        for row in rows[rows["measure"] == measure].itertuples():
            a, b = (row.run_a, row.run_b) if baseline is None else (row.run, baseline)
            result = stats.ttest_rel(scores.loc[a].to_numpy(), scores.loc[b].to_numpy())
            interval = result.confidence_interval(confidence_level=level)
            assert row.ci_level == level
            assert row.ci_low == pytest.approx(interval.low, abs=1e-12)
            assert row.ci_high == pytest.approx(interval.high, abs=1e-12)
            assert row.effect_size == pytest.approx(result.statistic / math.sqrt(n), abs=1e-12)
            diffs = scores.loc[a].to_numpy() - scores.loc[b].to_numpy()
            assert row.effect_size == pytest.approx(diffs.mean() / diffs.std(ddof=1), abs=1e-12)
            assert row.p_value == pytest.approx(result.pvalue, abs=1e-12)
            if correction != "holm":  # the t interval excludes 0 exactly when the t test is significant
                assert row.significant == (row.ci_low > 0 or row.ci_high < 0)
    if baseline:
        own = table[table["run"] == baseline]
        assert own[["ci_low", "ci_high", "effect_size"]].isna().all().all()


def test_counting_measure_interval_is_of_the_sum_and_equal_runs_give_zero():
    runs, qrels = collection(3, 6)
    runs["r1"] = runs["r1"][runs["r1"]["doc_id"] != "d3"]  # r1 retrieves one document fewer per topic
    runs["twin"] = runs["r0"]
    table = compare(runs, qrels, ["NumRet", "AP"], baseline="r0")
    numret = table[table["measure"] == "NumRet"].set_index("run")
    # every topic differs by −1: the difference of the sums is −6 with a zero-width interval, d_z −inf
    assert (numret.at["r1", "difference"], numret.at["r1", "ci_low"], numret.at["r1", "ci_high"]) == (-6.0, -6.0, -6.0)
    assert numret.at["r1", "effect_size"] == -np.inf
    twin = table[table["run"] == "twin"]
    assert (twin["ci_low"] == 0).all() and (twin["ci_high"] == 0).all() and (twin["effect_size"] == 0).all()
    assert (twin["p_value"] == 1).all()


def test_ci_level():
    assert ci_level(0.05, None, 10) == 0.95
    assert ci_level(0.05, "bonferroni", 10) == 1 - 0.005
    assert ci_level(0.05, "holm", 4) == 1 - 0.0125
    assert ci_level(0.05, "fdr_bh", 10, rejected=4) == pytest.approx(0.98, abs=1e-15)
    assert ci_level(0.05, "fdr_bh", 10, rejected=0) == 1 - 0.005


def test_tsv_has_the_new_columns_and_equals_the_api(tmp_path, capsys):
    runs, qrels = collection(3, 6)
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels.itertuples(index=False)))
    paths = []
    for name, run in runs.items():
        path = tmp_path / name
        path.write_text("".join(f"{q} Q0 {d} 0 {s!r} x\n" for q, d, s in run.itertuples(index=False)))
        paths.append(str(path))
    assert main(["compare", str(qrels_path), *paths, "AP", "--format", "tsv", "--correction", "holm"]) == 0
    back = pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t")
    expected = compare(runs, qrels, "AP", correction="holm")
    assert ["difference", "ci_low", "ci_high", "ci_level", "effect_size"] == list(back.columns[5:10])
    pd.testing.assert_frame_equal(back, expected, check_exact=False, rtol=0, atol=1e-15)
    assert main(["compare", str(qrels_path), *paths, "AP", "--differences", "--baseline", "r0"]) == 0
    out = capsys.readouterr().out
    assert out == format_report(compare(runs, qrels, "AP", baseline="r0"), differences=True)
    assert "| Comparison | AP |" in out and "| r1 − r0 | " in out
    assert "Difference of the means with its 95% paired t confidence interval; d_z: Cohen's effect size" in out
    latex = ["--format", "latex", "--caption", "My runs.", "--label", "tab:mine"]
    assert main(["compare", str(qrels_path), *paths, "AP", *latex]) == 0
    out = capsys.readouterr().out
    assert "\\caption{My runs.}\n\\label{tab:mine}\n" in out
    assert main(["compare", str(qrels_path), *paths, "AP", "--label", ""]) == 2
    assert "--label '' is not valid; expected a non-empty text of one line" in capsys.readouterr().err


def test_differences_table_cells():
    runs, qrels = collection(3, 8)
    table = compare(runs, qrels, ["AP"], baseline="r0", correction="bonferroni")
    row = table[table["run"] == "r2"].iloc[0]
    text = format_report(table, differences=True, digits=3)
    cell = f"{row.difference:+.3f} [{row.ci_low:+.3f}, {row.ci_high:+.3f}], d_z {row.effect_size:.2f}".replace("-", "−")
    assert f"| r2 − r0 | {cell} |" in text
    assert "97.5% paired t confidence interval, the Bonferroni level 1 − alpha/2 of the family" in text
    latex = format_report(table, "latex", differences=True)
    assert "\\label{tab:compare:differences}" in latex and "$d_z$" in latex
    with pytest.raises(ValueError, match="differences=True needs the columns ci_low"):
        format_report(table.drop(columns=["ci_low"]), differences=True)
    with pytest.raises(ValueError, match="differences='yes' is not valid; expected True or False"):
        format_report(table, differences="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="caption='a\\\\nb' is not valid"):
        format_report(table, "latex", caption="a\nb")


def test_note_says_adjusted_only_with_a_correction_and_latex_keeps_it_out_of_the_caption():
    runs, qrels = collection(3, 8)
    plain = format_report(compare(runs, qrels, "AP"))
    assert "(p < 0.05; two-sided paired t-test, no correction)" in plain and "adjusted" not in plain
    holm = format_report(compare(runs, qrels, "AP", correction="holm"))
    assert "(adjusted p < 0.05; two-sided paired t-test, Holm correction over the 3 pairs of runs per measure)" in holm
    latex = format_report(compare(runs, qrels, "AP", baseline="r1"), "latex").splitlines()
    assert latex[:4] == [
        "\\begin{table}",
        "\\centering",
        "\\caption{Comparison of the runs with the baseline r1.}",
        "\\label{tab:compare}",
    ]
    assert latex[-2].startswith(
        "{\\footnotesize $^{\\dagger}$ significantly different from the baseline r1 ($p < 0.05$"
    )
    assert latex[-1] == "\\end{table}"


def ladder(n_runs: int, n_topics: int = 8):
    """Run k ranks the relevant document at rank k + 1 + (t mod 2) on topic t: run k beats every run after it."""
    qrels = pd.DataFrame(
        [(f"q{t}", d, 1 if d == "rel" else 0) for t in range(n_topics) for d in ["rel", *(f"n{i}" for i in range(3))]],
        columns=["query_id", "doc_id", "relevance"],
    )
    runs = {}
    for k in range(n_runs):
        rows = []
        for t in range(n_topics):
            rank = k + 1 + t % 2
            docs = [f"x{i}" for i in range(rank - 1)] + ["rel"]
            rows += [(f"q{t}", d, float(100 - i)) for i, d in enumerate(docs)]
        runs[f"run{k:02d}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs, qrels


def test_more_than_26_runs_are_numbered_with_commas():
    runs, qrels = ladder(30)
    text = format_report(compare(runs, qrels, "RR"))
    lines = text.splitlines()
    assert lines[0] == "| # | Run | RR |"
    assert lines[2].startswith("| 1 | run00 | **0.7500**<sup>2,3,4,") and lines[2].endswith(",29,30</sup> |")
    assert lines[31] == "| 30 | run29 | " + f"{np.mean([1 / 30, 1 / 31]):.4f}" + " |"
    assert "<sup>numbers</sup>: significantly higher than the run of that number (p < 0.05;" in text
    assert "aa" not in text
    latex = format_report(compare(runs, qrels, "RR"), "latex")
    assert "$^{29,30}$" in latex and "superscript numbers: significantly higher than the run of that number" in latex
    few = format_report(compare(dict(list(runs.items())[:26]), qrels, "RR"))
    assert "| a | run00 | **0.7500**<sup>bcdefghijklmnopqrstuvwxyz</sup> |" in few
    assert "<sup>letters</sup>: significantly higher than the run of that letter" in few
