"""The canonical, space-free text of measures and parameter values, which :func:`parse_parts
<ir_incomplete.grammar.parser.parse_parts>` reads back to the same value.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

from ir_incomplete.grammar.tokenizer import _KEYWORDS, _NAME_FULL, _WORDS_FULL

__all__ = ["format_value", "format_measure"]


def _quote(text: str) -> str:
    out = ["'"]
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("\\'")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch.isspace() or not ch.isprintable():
            code = ord(ch)
            if code <= 0xFF:
                out.append(f"\\x{code:02x}")
            elif code <= 0xFFFF:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append("'")
    return "".join(out)


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _format_scalar(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "True" if value else "False"
    dtype = getattr(value, "dtype", None)
    if dtype is not None and getattr(dtype, "kind", None) == "b":  # numpy booleans
        return "True" if bool(value) else "False"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isfinite(number) and number.is_integer() and abs(number) < 1e15:
            return str(int(number))
        return repr(number)
    if isinstance(value, str):
        if _WORDS_FULL.match(value) and value not in _KEYWORDS and not _looks_numeric(value):
            return value
        return _quote(value)
    if isinstance(value, dict):
        items = list(value.items())
        try:
            items.sort(key=lambda kv: kv[0])
        except TypeError:
            items.sort(key=lambda kv: _format_key(kv[0]))
        return "{" + ",".join(f"{_format_key(k)}:{_format_scalar(v)}" for k, v in items) + "}"
    if isinstance(value, (tuple, list)):
        raise ValueError(f"cannot write the nested sequence {value!r} in a measure string")
    raise TypeError(f"cannot write a value of type {type(value).__name__} in a measure string: {value!r}")


def _format_key(key: Any) -> str:
    if isinstance(key, dict):
        raise ValueError(f"cannot write the dict key {key!r} in a measure string")
    return _format_scalar(key)


def format_value(value: Any) -> str:
    """The canonical, space-free text of one parameter value; :func:`parse_parts` reads it back.

    * ``True``/``False``; ``None`` is written ``none`` (it reads back as the string ``'none'``, which
      ``Param.coerce`` turns into ``None`` for parameters that allow it);
    * ints as decimal; floats as ``3`` when finite, integral and ``abs < 1e15``, else ``repr`` (``2.5``,
      ``1e-05``; non-finite floats give ``inf``/``nan``, which read back as words);
    * strings as a bare word when they match ``WORD('+'WORD)*`` and are neither ``True``/``False``/``None``
      nor number-like (``inf``), else single-quoted with backslash escapes; whitespace and unprintable
      characters are escaped too (``'a\\x20b'``) so that the result never contains a space;
    * tuples/lists: 2+ items comma-joined (``0.1,0.9``), one item ``(x,)``, none ``()``; items must be
      scalars (nested sequences raise ``ValueError``);
    * dicts as ``{k:v,...}`` sorted by key.

    Other types raise ``TypeError``.
    """
    if isinstance(value, (tuple, list)):
        parts = [_format_scalar(item) for item in value]
        if not parts:
            return "()"
        if len(parts) == 1:
            return f"({parts[0]},)"
        return ",".join(parts)
    return _format_scalar(value)


def format_measure(name: str, items: Iterable[tuple[str, Any]] = (), at: Any = None) -> str:
    """The canonical string of a measure: ``name``, ``(k=v,...)`` when ``items`` is non-empty (in the
    given order) and ``@at`` when ``at`` is not ``None``; no spaces anywhere.

    ``format_measure('xGAP', [('g', (0.1, 0.9))], 5) == 'xGAP(g=0.1,0.9)@5'``. Names and keys must be
    words (``ValueError`` otherwise).
    """
    if not isinstance(name, str) or not _NAME_FULL.match(name):
        raise ValueError(f"invalid measure name {name!r}")
    parts = []
    for key, value in items:
        if not isinstance(key, str) or not _NAME_FULL.match(key):
            raise ValueError(f"{name}: invalid parameter name {key!r}")
        parts.append(f"{key}={format_value(value)}")
    result = name
    if parts:
        result += "(" + ",".join(parts) + ")"
    if at is not None:
        result += "@" + format_value(at)
    return result
