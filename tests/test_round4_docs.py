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

import ir_incomplete
from ir_incomplete.report import compare, format_report

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _flat(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


# ---------------------------------------------------------------------------------------------------
# the LaTeX note of format_report: mathematics in math mode
# ---------------------------------------------------------------------------------------------------
def _collection(n_runs: int = 3, n_topics: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    qrels, runs = [], {f"r{k}": [] for k in range(n_runs)}
    for t in range(n_topics):
        grades = rng.integers(0, 3, 20)
        qrels += [(f"q{t}", f"d{d}", int(g)) for d, g in enumerate(grades)]
        for k in range(n_runs):
            scores = grades * (1.0 - k / n_runs) + rng.random(20) * (0.5 + k)
            runs[f"r{k}"] += [(f"q{t}", f"d{d}", float(s)) for d, s in enumerate(scores)]
    return (
        {name: pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]) for name, rows in runs.items()},
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
    )


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
