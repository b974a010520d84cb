"""Claims of the reference manual that a user checks first, checked against the code and against each
other: which measures ``evaluate`` computes natively, what the ``ir_measures`` command prints without the
plugin, and the page on intervals (its numbers are the measured ones of the page "Measured on TREC
data", which holds every measured table that the README held before it became a five-minute read)."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ir_incomplete

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def _flat(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


def test_builtin_measures_are_computed_natively_as_both_manuals_say(monkeypatch):
    import pandas as pd

    def refuse(*args, **kwargs):
        raise AssertionError("handed to ir_measures")

    monkeypatch.setattr(ir_incomplete.api, "_evaluate_elsewhere", refuse)
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    table = ir_incomplete.evaluate(run, qrels, ["nDCG@10", "P@5"], per_query=False)
    assert table["value"].round(4).tolist() == [0.6309, 0.2]
    guide, measures = _flat(ROOT / "docs" / "guide.rst"), _flat(ROOT / "docs" / "measures.rst")
    assert "(``nDCG@10``, ``P@5``, …) are computed natively" in guide
    assert "(``nDCG@10``, ``P@5``, …) are computed natively by :func:`ir_incomplete.evaluate`" in measures
    assert "are computed by ``ir_measures``" not in measures


def test_guide_states_what_ir_measures_prints_without_the_plugin():
    qrels = DATA / "trec_eval-test" / "qrels.test"
    if not qrels.is_file():
        pytest.skip("../shared/data/trec_eval-test is absent")
    env = {**os.environ, "IR_INCOMPLETE_AUTOLOAD": "0", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "ir_measures", str(qrels), str(qrels.parent / "results.test"), "infap"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stderr.strip().splitlines()
    assert lines == ["error parsing measures", "unknown measure: infap"] and done.returncode == 255
    guide = _flat(ROOT / "docs" / "guide.rst")
    claim = (
        "``ir_measures`` prints its own two lines ``error parsing measures`` and ``unknown measure: infap`` "
        "and exits with code 255"
    )
    assert claim in guide


def measured_row(label: str) -> list[str]:
    """The cells after the label of the row ``label`` (rst markup, e.g. ``PPI, i.i.d.``) of a csv-table
    of docs/measured.rst."""
    page = (ROOT / "docs" / "measured.rst").read_text(encoding="utf-8")
    lines = [line[3:] for line in page.splitlines() if line.startswith("   ") and not line.startswith("   :")]
    rows = [cells for cells in csv.reader(lines) if cells and cells[0] == label]
    assert len(rows) == 1, (label, rows)
    return [cell.strip() for cell in rows[0][1:]]


def _percent(value: str) -> str:
    return f"{round(float(value) * 100)} %"


def test_intervals_page_quotes_the_measured_page():
    page = _flat(ROOT / "docs" / "intervals.rst")
    assert "intervals" in (ROOT / "docs" / "index.rst").read_text().split()
    # nDCG@10: tau, RMSE, bias, coverage, width; then the same for AP@100
    pool_run = measured_row("``BootNDCG@10`` / ``BootAP@100`` (pool+run)")
    predicted = measured_row("the same with ``prior=predicted``")
    iid = measured_row("PPI, i.i.d.")
    assert f"``BootNDCG@10`` {_percent(pool_run[3])}, ``BootAP@100`` {_percent(pool_run[8])}" in page
    assert f"with ``prior=predicted`` {_percent(predicted[3])} and {_percent(predicted[8])}" in page
    assert f"{float(iid[3]) * 100:.1f} % for nDCG@10 and AP@100 with 10 labelled topics" in page
    assert iid[3] == iid[8] == "0.877"
    sweep = " ".join(measured_row("PPI, nDCG@10 / AP@100"))
    for pair in re.findall(r"(0\.\d+) / (0\.\d+)", sweep)[1:]:
        assert " / ".join(f"{float(v) * 100:.1f} %" for v in pair) in page


@pytest.mark.parametrize("path", ["docs/labels.rst", "ir_incomplete/ppi.py", "docs/intervals.rst"])
def test_ppi_validity_carries_its_condition(path):
    text = _flat(ROOT / path)
    spots = [m.start() for m in re.finditer("whatever the quality", text)]
    assert spots
    for at in spots:
        assert "random sample" in text[at : at + 200], text[at : at + 200]
