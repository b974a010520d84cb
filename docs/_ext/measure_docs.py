"""Sphinx directive ``.. measure-reference::``: the reference of every measure, generated from the
measure definitions themselves (``ir_incomplete.ALL_MEASURES``), the same source as
``ir_incomplete measures``.

One section per measure family (the module that defines the measure, in registry order), one
subsection per measure: its one-line description, a parameter table (name, default, allowed values,
meaning), an example string, and the definition's docstring (formula, paper, conventions).
"""

from __future__ import annotations

import inspect
import sys

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from sphinx.util.nodes import nested_parse_with_titles


def _family_title(module) -> str:
    doc = inspect.getdoc(module) or module.__name__
    first = doc.split("\n\n")[0].replace("\n", " ").strip()
    return first.split(" (")[0].rstrip(".")


class MeasureReference(Directive):
    has_content = False

    def run(self):
        import ir_incomplete
        from ir_incomplete.cli.measures import measure_example, measure_rows

        families: dict[str, list] = {}
        for measure in ir_incomplete.ALL_MEASURES:
            families.setdefault(type(measure).__module__, []).append(measure)
        lines: list[str] = []
        for module_name, measures in families.items():
            title = _family_title(sys.modules[module_name])
            lines += [title, "=" * len(title), "", f"Defined in :mod:`{module_name}`.", ""]
            for measure in measures:
                name = measure.NAME
                lines += [f".. _measure-{name}:", "", f"``{name}``", "-" * (len(name) + 4), ""]
                short = getattr(measure, "SHORT_DESC", "") or ""
                if short:
                    lines += [short, ""]
                lines += [".. list-table::", "   :header-rows: 1", "   :widths: 12 14 30 44", ""]
                lines += ["   * - parameter", "     - default", "     - allowed", "     - meaning"]
                for label, default, allowed, desc in measure_rows(measure):
                    lines += [
                        f"   * - ``{label}``",
                        f"     - {_literal(default)}",
                        f"     - {_escape(allowed)}",
                        f"     - {_escape(desc) or '..'}",
                    ]
                lines += ["", f"Example: ``{measure_example(measure)}``", ""]
                doc = inspect.getdoc(type(measure)) or ""
                lines += doc.splitlines() + [""]
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, StringList(lines, source="ir_incomplete.ALL_MEASURES"), node)
        return node.children


def _escape(text) -> str:
    return str(text).replace("\\", "\\\\").replace("*", "\\*").replace("|", "\\|").replace("`", "\\`")


def _literal(text) -> str:
    return "required" if text == "required" else f"``{text}``"


def setup(app):
    app.add_directive("measure-reference", MeasureReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
