"""The README read in five minutes and the manual that holds the rest, checked against the code: the
README's length, its four examples and its links; the claims that the documentation used to get wrong
(the universe, Student's t, the ``df`` column, the default control variate, ``add_bootstrap_intervals``
returning a copy, infAP without pooled-unjudged documents); and the LaTeX note of the comparison report,
whose inequality is set in math mode."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_compare_differences import collection

import ir_incomplete
from ir_incomplete.report import compare, format_report

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _flat(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


# ---------------------------------------------------------------------------------------------------
# the LaTeX note of format_report: mathematics in math mode
# ---------------------------------------------------------------------------------------------------
def _collection():
    """Three runs of different quality on eight topics (the compare tests' collection)."""
    return collection(n_runs=3, n_topics=8)


def _notes(latex: str) -> list[str]:
    """The footnote-size paragraphs under the tabulars."""
    return [line for line in latex.splitlines() if line.startswith("{\\footnotesize")]


def _text_mode(note: str) -> str:
    """The note without its math-mode segments ``$...$``."""
    return re.sub(r"\$[^$]*\$", "", note)


def test_latex_note_sets_the_p_value_level_in_math_mode():
    runs, qrels = _collection()
    plain = format_report(compare(runs, qrels, "AP", baseline="r1"), "latex")
    (note,) = _notes(plain)
    assert "significantly different from the baseline r1 ($p < 0.05$; two-sided paired t-test" in note
    holm = format_report(compare(runs, qrels, "AP", correction="holm"), "latex")
    (note,) = _notes(holm)
    assert "(adjusted $p < 0.05$; two-sided paired t-test, Holm correction over the 3 pairs of runs" in note
    table = compare(runs, qrels, "AP", baseline="r1", alpha=0.1)
    table.attrs.pop("correction")  # a table whose attrs lost the correction: only p_adjusted is known
    (note,) = _notes(format_report(table, "latex"))
    assert "($p_{\\mathrm{adjusted}} < 0.1$" in note
    # markdown keeps the plain text
    assert "(p < 0.05; two-sided paired t-test, no correction)" in format_report(
        compare(runs, qrels, "AP", baseline="r1")
    )


@pytest.mark.parametrize("correction", [None, "bonferroni", "holm", "fdr_bh"])
def test_latex_notes_hold_no_text_mode_mathematics(correction):
    """Outside ``$...$`` a note has no ``<``, no unescaped ``_`` or ``&`` and no Unicode minus: each of
    them is a wrong glyph or an error under pdflatex."""
    runs, qrels = _collection()
    table = compare(runs, qrels, ["AP", "nDCG@10"], baseline="r0", correction=correction)
    notes = _notes(format_report(table, "latex", differences=True))
    assert len(notes) == 2
    for note in notes:
        text = _text_mode(note)
        assert "<" not in text and "−" not in text, note
        assert not re.search(r"(?<!\\)[_&]", text), note
    if correction in ("bonferroni", "holm"):
        assert "the Bonferroni level $1 - \\alpha/2$ of the family" in notes[1]
    if correction == "fdr_bh":
        assert "the false-coverage-rate level $1 - R\\alpha/m$ of Benjamini \\& Yekutieli" in notes[1]


# ---------------------------------------------------------------------------------------------------
# infAP without pooled-but-unjudged documents is AP, as its description says
# ---------------------------------------------------------------------------------------------------
def _unpooled_collection(seed: int = 3, negative: bool = False):
    """Qrels judging part of each topic's documents (no grade −1 unless ``negative``) and runs that also
    retrieve documents the qrels do not mention."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], {f"r{k}": [] for k in range(4)}
    for t in range(6):
        judged = rng.choice(40, 25, replace=False)
        for d in judged:
            grade = int(rng.integers(0, 3))
            qrels.append((f"q{t}", f"d{d}", -1 if negative and rng.random() < 0.3 else grade))
        for name in runs:
            docs = rng.choice(40, 30, replace=False)
            runs[name] += [(f"q{t}", f"d{d}", float(s)) for d, s in zip(docs, rng.random(30), strict=True)]
    return (
        {name: pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]) for name, rows in runs.items()},
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
    )


@pytest.mark.parametrize(("c", "eps"), [(2.0, 1e-5), (3.0, 0.01), (0.5, 0.01), (1.5, 0.05)])
def test_infap_equals_ap_up_to_the_smoothing_without_pooled_unjudged_documents(c, eps):
    from ir_incomplete import evaluate

    runs, qrels = _unpooled_collection()
    measure = repr(ir_incomplete.infAP(c=c, eps=eps))
    table = evaluate(runs, qrels, ["AP", measure, "AP@10", f"{measure}@10"])
    wide = table.pivot_table(index=["run", "query_id"], columns="measure", values="value")
    bound = eps * max(1.0, c - 1.0)
    for ap, inf in (("AP", measure), ("AP@10", f"{measure}@10")):
        gap = (wide[ap] - wide[inf]).abs()
        assert gap.max() < bound and gap.max() > 0, (ap, gap.max(), bound)
    # with pooled-but-unjudged documents infAP is another number
    runs, qrels = _unpooled_collection(negative=True)
    table = evaluate(runs, qrels, ["AP", measure])
    wide = table.pivot_table(index=["run", "query_id"], columns="measure", values="value")
    assert (wide["AP"] - wide[measure]).abs().max() > max(bound, 0.05)


def test_infap_description_says_it_equals_ap_without_pooled_unjudged_documents():
    measure = ir_incomplete.infAP
    assert "equals AP (up to eps) when no grade is -1" in measure.SHORT_DESC
    doc = " ".join((type(measure).__doc__ or "").split())
    assert "infAP equals AP (variant=pool) up to the smoothing" in doc
    assert "differ by less than eps·max(1, c − 1)" in doc


# ---------------------------------------------------------------------------------------------------
# the README: at most 250 lines, four examples, links to the manual, the interval table
# ---------------------------------------------------------------------------------------------------
README = ROOT / "README.md"


def _code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def test_readme_is_a_five_minute_read():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    # the two set-up commands: install with the test extra, run the tests in parallel (pytest-xdist)
    assert "python -m pip install -e '.[test]'\npython -m pytest -n auto\n" in text


def test_readme_has_one_example_per_front_door():
    text = README.read_text(encoding="utf-8")
    python = "\n".join(_code_blocks(text, "python"))
    shell = "\n".join(_code_blocks(text, "bash"))
    assert "ir_incomplete.evaluate(" in python and "ir_measures.calc_aggregate(" in python
    assert re.search(r"^ir_incomplete qrels\.txt runs/ .*BootNDCG@10", shell, flags=re.M)
    # pt.Experiment with our qrels as they are, beside runs read by PyTerrier
    assert 'qrels = ir_incomplete.read_trec_qrels("qrels.txt")' in python
    assert 'pt.io.read_results("bm25.run")' in python and "pt.Experiment(" in python
    # the judging round trip, command line and Python, exactly these interfaces
    for line in (
        "ir_incomplete sample runs/ --budget 2000 --qrels round1.qrels --seed 0 -o design.tsv --to-judge to_judge.tsv",
        "# assessors judge only the pairs in to_judge.tsv (query_id<TAB>doc_id, with a header line) -> new.qrels",
        "ir_incomplete estimate round1.qrels design.tsv runs/ -j new.qrels -m AP@100 -m nDCG@10",
    ):
        assert line in shell.splitlines(), line
    for call in (
        "design = ir_incomplete.judging.sample(runs, 2000, qrels=round1, seed=0)",
        "ir_incomplete.judging.to_judge(design)",
        'ir_incomplete.estimate(runs, [round1, new_judgments], design, ["AP@100", "nDCG@10"])',
    ):
        assert call in python, call
    flat = " ".join(text.split())
    assert "The design (`design.tsv`) holds the already-judged pairs (π = 1) beside the new ones" in flat
    assert "Only the pairs of `to_judge.tsv` go to assessors." in flat
    assert "`estimate` takes the old and the new judgments" in flat
    assert "`ir_incomplete.estimation.write_design` / `read_design`" in flat


def test_readme_links_every_manual_page_and_every_page_is_in_the_toctree():
    text = README.read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(docs/(\w+)\.rst\)", text))
    pages = {path.stem for path in DOCS.glob("*.rst")} - {"index"}
    assert linked == pages
    index = (DOCS / "index.rst").read_text(encoding="utf-8")
    in_toctree = set(re.findall(r"^   (\w+)$", index, flags=re.M))
    assert in_toctree == pages


def _measured_rows() -> dict[str, list[str]]:
    import csv

    page = (DOCS / "measured.rst").read_text(encoding="utf-8")
    lines = [line[3:] for line in page.splitlines() if line.startswith("   ") and not line.startswith("   :")]
    return {cells[0]: [cell.strip() for cell in cells[1:]] for cells in csv.reader(lines) if cells}


def _percent(value: str) -> str:
    return f"{round(float(value) * 100)} %"


def test_readme_interval_table_quotes_the_measured_page():
    rows = _measured_rows()
    text = " ".join(README.read_text(encoding="utf-8").split())
    pool_run = rows["``BootNDCG@10`` / ``BootAP@100`` (pool+run)"]
    predicted = rows["the same with ``prior=predicted``"]
    assert (
        f"`BootNDCG@10` {_percent(pool_run[3])}, `BootAP@100` {_percent(pool_run[8])}; with `prior=predicted` "
        f"{_percent(predicted[3])} and {_percent(predicted[8])}"
    ) in text
    iid = rows["PPI, i.i.d."]
    sweep = rows["PPI, nDCG@10 / AP@100"]
    assert iid[3] == iid[8]
    assert f"{float(iid[3]) * 100:.1f} % with 10 labelled topics drawn at random, " in text
    assert f"{round(float(sweep[-1].split(' / ')[0]) * 100)} % with 80" in text
    fpc = rows["difference estimator + finite-population correction, split"]
    assert f"{_percent(fpc[3])} / {_percent(fpc[8])} with 10 of 30 topics judged" in text
    # design-based: the coverage of the rows flagged reliable, run means and differences, over every setting
    import csv

    page = (DOCS / "measured.rst").read_text(encoding="utf-8")
    section = page.split("Design-based estimates on TREC-COVID, Robust04 and a sparse collection, measured", 1)[1]
    table = section.split(".. csv-table::", 1)[1].split("\n\n", 2)[1]
    cells = list(csv.reader(line[3:] for line in table.splitlines()))
    header, body = cells[0], cells[1:]
    assert len(body) >= 60  # 10 settings × 3 labelers × 2–3 measures
    column = header.index("reliable rows: coverage runs / pairs")
    covered = [row[column].split(" / ") for row in body if not row[column].startswith("–")]
    runs = [float(c[0]) for c in covered]
    pairs = [float(c[1]) for c in covered]
    claim = (
        f"{min(runs) * 100:.0f}–{max(runs) * 100:.0f} % of run means, {min(pairs) * 100:.0f}–"
        f"{max(pairs) * 100:.0f} % of differences"
    )
    assert f"rows flagged reliable: {claim}" in text
    flat = _flat(DOCS / "intervals.rst")
    assert f"rows flagged reliable: {claim.replace(' of run means,', ' of run means and')}" in flat


# ---------------------------------------------------------------------------------------------------
# the documentation agrees with the code
# ---------------------------------------------------------------------------------------------------
def test_add_bootstrap_intervals_returns_a_copy_and_every_example_keeps_it():
    qrels = pd.DataFrame(
        [("q1", "a", 1), ("q1", "b", 0), ("q1", "c", 1), ("q2", "a", 2), ("q2", "x", 0)],
        columns=["query_id", "doc_id", "relevance"],
    )
    run = pd.DataFrame(
        [("q1", "a", 3.0), ("q1", "d", 2.0), ("q1", "c", 1.0), ("q2", "x", 2.0), ("q2", "a", 1.0)],
        columns=["query_id", "doc_id", "score"],
    )
    value = ir_incomplete.evaluate({"bm25": run}, qrels, ["BootNDCG@10"], per_query=False)["value"].iloc[0]
    table = pd.DataFrame({"name": ["bm25"], "BootNDCG@10": [value]})
    out = ir_incomplete.add_bootstrap_intervals(table, {"bm25": run}, qrels)
    assert out is not table and list(table.columns) == ["name", "BootNDCG@10"]
    assert list(out.columns) == ["name", "BootNDCG@10", "BootNDCG@10 p5", "BootNDCG@10 p95"]
    # an example that calls it keeps the result
    calls = 0
    for path in [README, *DOCS.glob("*.rst")]:
        for line in path.read_text(encoding="utf-8").splitlines():
            code = line.strip()
            if code.startswith(("ir_incomplete.add_bootstrap_intervals(", "add_bootstrap_intervals(")) or re.search(
                r"=\s*(ir_incomplete\.)?add_bootstrap_intervals\(", code
            ):
                calls += 1
                assert re.match(r"^\w+ = (ir_incomplete\.)?add_bootstrap_intervals\(", code), (path.name, line)
    assert calls >= 1


def test_the_universe_is_defined_one_way_everywhere():
    """No text defines the universe as the runs' top depth alone; the definition with the pairs judged
    already is in the README, the manual and the docstrings of estimate, sample and the Stat* measures."""
    from ir_incomplete import estimation
    from ir_incomplete.judging import designs
    from ir_incomplete.measures import design_based

    texts = {path.name: _flat(path) for path in [README, *DOCS.glob("*.rst")]}
    texts.update(
        {
            "estimation": " ".join((estimation.__doc__ or "").split()),
            "judging.designs": " ".join((designs.__doc__ or "").split()),
            "measures.design_based": " ".join((design_based.__doc__ or "").split()),
            "StatR": " ".join((design_based.DesignR.__doc__ or "").split()),
        }
    )
    for name, text in texts.items():
        # a parenthesised definition, "universe (the runs' top depth)", that stops at the runs
        assert not re.search(r"universe,? \((the )?(union of the )?runs' top `*depth`*\)", text), name
        assert not re.search(r"universe, the runs' top `*depth`*,", text), name
    for name, phrase in (
        ("README.md", "the top `depth` (100) of the runs the design was drawn from plus the pairs judged already"),
        ("design.rst", "the top ``depth`` (100 by default) of the runs the design was drawn from, **plus the pairs"),
        ("intervals.rst", "the union of the runs' top ``depth`` (100 by default) plus the pairs judged already"),
        ("estimation", "plus the certainty pairs (π = 1) of the design: the pairs judged already"),
        ("judging.designs", "the runs' top ``depth`` plus the pairs judged already"),
        ("measures.design_based", "the top ``depth`` of the runs the design was drawn from, plus the pairs judged"),
        ("StatR", "the runs' top ``depth`` plus the pairs judged already"),
    ):
        assert phrase in texts[name], name
    for name in ("README.md", "design.rst", "estimation"):
        assert "every known relevant document counts in R" in texts[name], name


def test_design_based_intervals_are_documented_as_student_t():
    intervals = _flat(DOCS / "intervals.rst")
    assert "a normal confidence interval under the sampling design" not in intervals
    assert "a Student's t confidence interval (Satterthwaite's degrees of freedom, column ``df``) under" in intervals
    assert "**Student's t** from the linearised variance" in _flat(DOCS / "design.rst")


def _tiny_design(tmp_path):
    """Four runs over five topics, a Poisson design of 60 judgments at depth 20 and its judgments."""
    from ir_incomplete.judging import sample, write_design

    rng = np.random.default_rng(5)
    oracle, runs = [], {f"r{k}": [] for k in range(4)}
    for t in range(5):
        grades = (rng.random(60) < 0.25).astype(int)
        oracle += [(f"q{t}", f"d{d}", int(g)) for d, g in enumerate(grades)]
        for name in runs:
            scores = grades * rng.random() + rng.random(60)
            runs[name] += [(f"q{t}", f"d{d}", float(s)) for d, s in enumerate(scores)]
    frames = {name: pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]) for name, rows in runs.items()}
    truth = pd.DataFrame(oracle, columns=["query_id", "doc_id", "relevance"])
    design = sample(frames, 60, depth=20, seed=0)
    judged = design[["query_id", "doc_id"]].merge(truth, how="left").fillna({"relevance": 0})
    judged["relevance"] = judged["relevance"].astype(int)
    path = tmp_path / "design.tsv"
    write_design(design, str(path))
    return frames, judged, design, path


def _documented_columns() -> list[str]:
    page = (DOCS / "design.rst").read_text(encoding="utf-8")
    table = page.split("The columns of the table:", 1)[1].split("``per_query=True``", 1)[0]
    columns = []
    for cell in re.findall(r"^   \* - (.+)$", table, flags=re.M):
        columns += re.findall(r"``(\w+)``", cell)
    return columns


def test_estimate_columns_and_df_are_as_documented(tmp_path):
    """Every column ``estimate`` returns is in the manual's table and in its docstring, ``df`` among them,
    and ``df`` and ``se`` are the documented formulas: for P@10 without a control variate the per-pair
    terms are c_u = (1 − π_u)(y_u / (10 π_u))² over the run's sampled top-10 pairs."""
    runs, judged, design, _ = _tiny_design(tmp_path)
    means = ir_incomplete.estimate(runs, judged, design, ["P@10"], control="none")
    pairs = ir_incomplete.estimate(runs, judged, design, ["P@10"], control="none", pairs=True)
    documented = _documented_columns()
    for column in [*means.columns, *pairs.columns]:
        assert column in documented, column
    doc = " ".join((ir_incomplete.estimate.__doc__ or "").split())
    assert "Returns ``run, measure, value, lo, hi, se, df, outside, seen, delta, reliable``" in doc
    assert "``run_a, run_b, measure, value, lo, hi, se, df, significant, delta, reliable``" in doc
    run_columns = ["run", "measure", "value", "lo", "hi", "se", "df", "outside", "seen", "delta", "reliable"]
    assert list(means.columns) == run_columns
    pair_columns = ["run_a", "run_b", "measure", "value", "lo", "hi", "se", "df", "significant", "delta", "reliable"]
    assert list(pairs.columns) == pair_columns
    sampled = design.merge(judged)
    sampled = sampled[sampled["pi"] < 1]
    n_topics = design["query_id"].nunique()
    for name, run in runs.items():
        top = run.sort_values(["query_id", "score"], ascending=[True, False]).groupby("query_id").head(10)
        mine = sampled.merge(top[["query_id", "doc_id"]])
        c = (1 - mine["pi"]) * ((mine["relevance"] >= 1) / (10 * mine["pi"])) ** 2
        row = means[means["run"] == name].iloc[0]
        assert row["df"] == pytest.approx(c.sum() ** 2 / (c**2).sum(), rel=1e-9)
        assert row["se"] == pytest.approx(np.sqrt(c.sum()) / n_topics, rel=1e-9)
        assert row["hi"] - row["value"] > 1.6449 * row["se"]  # Student's t: wider than the normal 90 %


def test_stat_measures_equal_estimate_with_control_none_as_documented(tmp_path):
    runs, judged, design, path = _tiny_design(tmp_path)
    measures = ["AP@20", "P@10"]
    none = ir_incomplete.estimate(runs, judged, design, measures, control="none")
    default = ir_incomplete.estimate(runs, judged, design, measures)
    stat = ir_incomplete.evaluate(
        runs, judged, [f"StatAP(design='{path}')@20", f"StatP(design='{path}')@10"], per_query=False
    )
    model = ir_incomplete.evaluate(
        runs,
        judged,
        [f"StatAP(design='{path}',control=model)@20", f"StatP(design='{path}',control=model)@10"],
        per_query=False,
    )
    for frame in (stat, model):
        frame["measure"] = frame["measure"].str.replace(r"^Stat(\w+)\(.*\)@", r"\1@", regex=True)
    key = ["run", "measure"]

    def values(frame):
        return frame.set_index(key)["value"].sort_index()

    assert np.allclose(values(stat), values(none), rtol=0, atol=1e-12)
    assert np.allclose(values(model), values(default), rtol=0, atol=1e-12)
    assert not np.allclose(values(stat), values(default), rtol=0, atol=1e-6)
    page = _flat(DOCS / "measures.rst")
    assert 'are those of ``ir_incomplete.estimate(..., control="none")``' in page
    assert '**not** those of :func:`ir_incomplete.estimate`\'s default ``control="auto"``' in page
    assert "are those of :func:`ir_incomplete.estimate` (the qrels" not in page
    design_page = _flat(DOCS / "design.rst")
    assert 'default to ``control="auto"``: the fitted relevance model (``model``; ``labels+model`` with' in (
        design_page
    )
    assert "``StatAP(design='design.tsv')@100`` therefore equals ``estimate(..., control=\"none\")``" in design_page
