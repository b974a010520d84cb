"""Measure strings split into tokens (words, numbers, quoted strings, operators); see :mod:`ir_incomplete.grammar`
for the grammar.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ir_incomplete.grammar.errors import MAX_MEASURE_LENGTH, MAX_TOKEN_LENGTH, MeasureSyntaxError

__all__ = ["Token", "tokenize"]


class Token(NamedTuple):
    """One token of a measure string.

    ``kind`` is ``'WORD'``, ``'NUMBER'``, ``'STRING'``, ``'OP'`` (one of ``( ) , = @ { } : +``) or
    ``'END'``; ``text`` is the token as written, ``value`` its meaning (the number, the decoded string, the
    word, or ``True``/``False``/``None`` for those words; the operator itself for ``OP``; ``None`` for
    ``END``) and ``pos`` the 0-based position of its first character.
    """

    kind: str
    text: str
    value: Any
    pos: int


_WORD_RE = r"[^\W\d]\w*(?:-\w+)*"
_WORD = re.compile(_WORD_RE)
_WORDS_FULL = re.compile(rf"{_WORD_RE}(?:\+{_WORD_RE})*\Z")
_NAME_FULL = re.compile(rf"{_WORD_RE}\Z")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SPACE = re.compile(r"\s+")
_OPERATORS = frozenset("(),=@{}:+")
_KEYWORDS = {"True": True, "False": False, "None": None}
_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def _read_string(text: str, start: int) -> tuple[str, int]:
    """Decode the quoted string that starts at ``start``; return it and the index after its closing quote."""
    quote = text[start]
    out: list[str] = []
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == quote:
            return "".join(out), i + 1
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= n:
            break
        code = text[i + 1]
        if code in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[code])
            i += 2
            continue
        width = _HEX_ESCAPES.get(code)
        digits = text[i + 2 : i + 2 + width] if width else ""
        if (
            width
            and len(digits) == width
            and all(c in "0123456789abcdefABCDEF" for c in digits)
            and int(digits, 16) <= 0x10FFFF
        ):
            out.append(chr(int(digits, 16)))
            i += 2 + width
            continue
        bad = text[i : i + 2 + (width or 0)]
        raise MeasureSyntaxError(
            text,
            i,
            f"invalid escape {bad!r} at position {i}",
            token=bad,
            expected="one of \\\\ \\' \\\" \\n \\t \\r \\xNN \\uNNNN \\UNNNNNNNN",
        )
    raise MeasureSyntaxError(
        text,
        start,
        f"unterminated string starting at position {start}",
        token=text[start:],
        expected=f"closing {quote}",
    )


def tokenize(text: str) -> list[Token]:
    """Split a measure string into :class:`Token` objects, ending with one ``END`` token.

    Raises :class:`MeasureSyntaxError` for a character that starts no token (``unexpected '%' at position
    5``), an unterminated string or an invalid escape.
    """
    if not isinstance(text, str):
        raise TypeError(f"a measure string must be a str, not {type(text).__name__}")
    if len(text) > MAX_MEASURE_LENGTH:
        raise MeasureSyntaxError(
            text,
            0,
            f"the input has {len(text)} characters, more than the {MAX_MEASURE_LENGTH} a measure string may have",
            expected=f"at most {MAX_MEASURE_LENGTH} characters",
        )
    tokens: list[Token] = []
    i = 0
    n = len(text)

    def check_length(kind: str, start: int, end: int) -> None:
        if end - start > MAX_TOKEN_LENGTH:
            raise MeasureSyntaxError(
                text,
                start,
                f"{kind} of {end - start} characters at position {start} is longer than {MAX_TOKEN_LENGTH} characters",
                token=text[start : start + MAX_TOKEN_LENGTH],
                expected=f"a {kind} of at most {MAX_TOKEN_LENGTH} characters",
            )

    while i < n:
        space = _SPACE.match(text, i)
        if space:
            i = space.end()
            continue
        ch = text[i]
        number = _NUMBER.match(text, i)
        if number:
            raw = number.group()
            check_length("number", i, number.end())
            is_float = any(c in raw for c in ".eE")
            tokens.append(Token("NUMBER", raw, float(raw) if is_float else int(raw), i))
            i = number.end()
            continue
        word = _WORD.match(text, i)
        if word:
            raw = word.group()
            check_length("word", i, word.end())
            tokens.append(Token("WORD", raw, _KEYWORDS.get(raw, raw), i))
            i = word.end()
            continue
        if ch in "'\"":
            value, end = _read_string(text, i)
            check_length("string", i, end)
            tokens.append(Token("STRING", text[i:end], value, i))
            i = end
            continue
        if ch in _OPERATORS:
            tokens.append(Token("OP", ch, ch, i))
            i += 1
            continue
        raise MeasureSyntaxError(text, i, f"unexpected {ch!r} at position {i}", token=ch)
    tokens.append(Token("END", "", None, n))
    return tokens
