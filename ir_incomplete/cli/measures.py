"""The ``ir_incomplete measures`` listing: every measure with its parameters (default; allowed values),
a one-line description and an example string, as text or as a markdown table (the
reference manual's measure pages use :func:`measure_rows` and :func:`measure_example` too)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ir_incomplete.cli.common import PROG, Parser, run_command

__all__ = ["measures_main", "measure_example", "measure_rows"]


def _default_text(measure, name, param) -> str:
    from ir_incomplete.grammar import format_value
    from ir_incomplete.measures.base import NOT_PROVIDED

    default = getattr(param, "default", NOT_PROVIDED)
    if default is NOT_PROVIDED:
        if getattr(param, "required", False):
            return "required"
        return "none (whole ranking)" if name == measure.AT_PARAM else "none"
    try:
        return format_value(default)
    except (TypeError, ValueError):
        return str(default)


def _allowed_text(param) -> str:
    describe = getattr(param, "describe_allowed", None)
    if describe is not None:
        return describe()
    from ir_incomplete.grammar import _describe

    return _describe(param)


def measure_example(measure) -> str:
    """``EXAMPLE`` of the measure when it has one; else a valid string setting one parameter to a
    non-default choice (and a cut-off when the measure has one)."""
    explicit = getattr(measure, "EXAMPLE", None)
    if explicit:
        return str(explicit)
    from ir_incomplete.grammar import parse
    from ir_incomplete.measures.base import NOT_PROVIDED

    params: dict[str, Any] = {}
    for name, param in measure.SUPPORTED_PARAMS.items():
        if name == measure.AT_PARAM:
            params[name] = 10
        elif getattr(param, "kind", "scalar") == "distribution" and getattr(param, "required", False):
            params[name] = (0.5, 0.5)
    for name, param in measure.SUPPORTED_PARAMS.items():
        choices = getattr(param, "choices", NOT_PROVIDED)
        if name != measure.AT_PARAM and choices not in (NOT_PROVIDED, None):
            alternatives = [c for c in choices if c != param.default]
            if alternatives:
                params[name] = alternatives[0]
                break
    for candidate in (params, {k: v for k, v in params.items() if k == measure.AT_PARAM}, {}):
        try:
            text = repr(type(measure)(**candidate))
            parse(text)
            return text
        except Exception:  # a combination the measure rejects: try a simpler one
            continue
    return measure.NAME


def measure_rows(measure):
    """``(label, default, allowed, description)`` of each parameter; the cut-off as ``@k``."""
    rows = []
    for name, param in measure.SUPPORTED_PARAMS.items():
        label = ("@k" if name == "cutoff" else f"@{name}") if name == measure.AT_PARAM else name
        rows.append(
            (label, _default_text(measure, name, param), _allowed_text(param), getattr(param, "desc", "") or "")
        )
    return rows


def _measures_text(measures) -> list[str]:
    lines = []
    for measure in measures:
        lines.append(f"{measure.NAME}  {getattr(measure, 'SHORT_DESC', '') or ''}".rstrip())
        rows = measure_rows(measure)
        width = max((len(label) for label, *_ in rows), default=0)
        for label, default, allowed, desc in rows:
            given = "required" if default == "required" else f"default {default}"
            head = f"    {label:<{width}}  {given}; {allowed}"
            lines.append(head)
            if desc:
                lines.append(f"    {'':<{width}}  {desc}")
        lines.append(f"    example: {measure_example(measure)}")
        lines.append("")
    if lines:
        lines.pop()
    return lines


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _measures_markdown(measures) -> list[str]:
    lines = ["| Measure | Parameters (defaults) | Description |", "|---|---|---|"]
    for measure in measures:
        params = []
        for label, default, allowed, _desc in measure_rows(measure):
            if label.startswith("@"):
                kind = "required" if default == "required" else "optional cut-off" if label == "@k" else "optional"
                params.append(f"`{label}` ({kind}: {allowed})")
            elif default == "required":
                params.append(f"`{label}` (required: {allowed})")
            else:
                params.append(f"`{label}={default}` ({allowed})")
        desc = getattr(measure, "SHORT_DESC", "") or ""
        description = f"{desc} Example: `{measure_example(measure)}`".strip()
        lines.append(f"| `{_md(measure.NAME)}` | {_md('; '.join(params)) or '—'} | {_md(description)} |")
    return lines


def measures_main(argv: Sequence[str]) -> int:
    """``ir_incomplete measures [--format text|markdown]``; returns the exit code."""
    parser = Parser(
        prog=f"{PROG} measures",
        description="List every measure of ir_incomplete with its parameters (default; "
        "allowed values), a one-line description and an example string.",
    )
    parser.add_argument(
        "--format", choices=("text", "markdown"), default="text", help="plain text (default) or a markdown table"
    )
    return run_command(parser, _listing, argv)


def _listing(args) -> list[str]:
    from ir_incomplete.measures import ALL_MEASURES

    return _measures_markdown(ALL_MEASURES) if args.format == "markdown" else _measures_text(ALL_MEASURES)
