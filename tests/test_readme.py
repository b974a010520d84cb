"""The manual's table of all measures (docs/measures.rst, "All measures at a glance"; it was the README's
until the README became a five-minute read) is checked against the registry: every measure has a row,
every row names a registered measure, and each row lists every parameter with the default the measure
really has."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

import ir_incomplete
from ir_incomplete.grammar import format_value
from ir_incomplete.measures.base import NOT_PROVIDED

MEASURES_PAGE = Path(__file__).resolve().parents[1] / "docs" / "measures.rst"


def _table_rows() -> dict[str, str]:
    """``{measure name: parameter cell}`` of the manual's measure table (a csv-table, one line per
    measure; ``as X`` resolved)."""
    text = MEASURES_PAGE.read_text(encoding="utf-8")
    section = text.split("\nAll measures at a glance\n", 1)[1].split(".. measure-reference::", 1)[0]
    table = section.split(".. csv-table::", 1)[1]
    lines = [line[3:] for line in table.splitlines() if line.startswith("   ") and not line.startswith("   :")]
    rows = {}
    for cells in csv.reader(lines):
        match = re.fullmatch(r"``([^`]+)``", cells[0])
        if match:
            assert len(cells) == 3, cells
            rows[match.group(1)] = cells[1]
    for name, cell in rows.items():
        alias = re.fullmatch(r"as (\w+)", cell.strip())
        if alias:
            rows[name] = rows[alias.group(1)]
    return rows


def test_every_measure_has_a_row_and_every_row_a_measure():
    rows = _table_rows()
    names = [m.NAME for m in ir_incomplete.ALL_MEASURES]
    assert list(rows) == names  # same measures, in registry order


@pytest.mark.parametrize("measure", ir_incomplete.ALL_MEASURES, ids=lambda m: m.NAME)
def test_row_lists_every_parameter_with_its_default(measure):
    cell = _table_rows()[measure.NAME]
    for name, param in measure.SUPPORTED_PARAMS.items():
        if name == measure.AT_PARAM:
            token = "@k" if name == "cutoff" else f"@{name}"
            assert f"`{token}`" in cell, (measure.NAME, token)
            continue
        assert re.search(rf"`{re.escape(name)}[`=]", cell), (measure.NAME, name)
        default = getattr(param, "default", NOT_PROVIDED)
        if default not in (NOT_PROVIDED, None):
            assert f"`{name}={format_value(default)}`" in cell, (measure.NAME, name, format_value(default))
