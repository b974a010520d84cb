"""The README's measure table is checked against the registry: every measure has a row, every row names a
registered measure, and each row lists every parameter with the default the measure really has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ir_incomplete
from ir_incomplete.grammar import format_value
from ir_incomplete.measures.base import NOT_PROVIDED

README = Path(__file__).resolve().parents[1] / "README.md"


def _table_rows() -> dict[str, str]:
    """``{measure name: parameter cell}`` of the README's measure table (``as X`` resolved)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Measures\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"^\| `([^`]+)` \| (.*?) \| .* \|$", line)
        if match:
            rows[match.group(1)] = match.group(2)
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
