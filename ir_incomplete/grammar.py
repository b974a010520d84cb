"""Measure strings: tokenizer, recursive-descent parser and canonical formatter.

The grammar is a superset of the one ``ir_measures.parse_measure`` accepts, read by a small hand-written
parser (never ``eval`` and never the Python ``ast`` module)::

    measure := NAME [ '(' [ param (',' param)* [','] ] ')' ] [ '@' NUMBER ]
    param   := NAME '=' value
    value   := scalar (',' scalar)*                       -- comma continuation, see below
             | '(' [ scalar (',' scalar)* [','] ] ')'     -- explicit tuple
    scalar  := NUMBER | STRING | WORD ('+' WORD)* | dict
    dict    := '{' [ scalar ':' scalar (',' scalar ':' scalar)* [','] ] '}'

    NUMBER  := [+-] digits [ '.' digits ] [ exponent ]  (also '.5', '1.', '1e-5');
               an int unless it has a '.' or an exponent, then a float
    STRING  := '...' or "..." with backslash escapes (\\\\ \\' \\" \\n \\t \\r \\xNN \\uNNNN \\UNNNNNNNN)
    WORD    := a letter or '_' (any script), then letters, digits, '_' and inner '-': uniform, exp-log2

*Comma continuation*: after a value, a ``,`` that is not followed by ``NAME '='`` (nor by the closing
``)``) continues a tuple, so ``xGAP(g=0.1,0.9,unjudged=condensed)`` gives ``g=(0.1, 0.9)`` and
``unjudged='condensed'``. The words ``True``, ``False`` and ``None`` are the Python constants; ``pool+run``
is the one string ``'pool+run'``; every other bare word is a string. Whitespace between tokens is ignored.

:func:`format_measure` writes the canonical, space-free form that reads back to the same value
(``parse_parts(format_measure(n, items, at)) == (n, dict(items), at)``); ``None`` is written ``none``.

:func:`install_parsers` makes ``ir_measures.parse_measure`` and ``ir_measures.parse_trec_measure`` try
their original implementation first and fall back to :func:`parse`.
"""

from __future__ import annotations

import math
import numbers
import re
import sys
import threading
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import ir_measures

__all__ = [
    "MeasureSyntaxError",
    "UnknownMeasureError",
    "MAX_MEASURE_LENGTH",
    "MAX_TOKEN_LENGTH",
    "MAX_NESTING",
    "excerpt",
    "Token",
    "tokenize",
    "parse_parts",
    "format_value",
    "format_measure",
    "parse",
    "parse_measure",
    "check_measure",
    "install_parsers",
    "uninstall_parsers",
    "parsers_installed",
]


#: the longest measure string accepted (longer input is refused before it is tokenized)
MAX_MEASURE_LENGTH = 10_000
#: the longest single word, number or quoted string accepted
MAX_TOKEN_LENGTH = 100
#: the deepest nesting of dicts and tuples accepted (``c={1:{2:...}}`` is nesting 2)
MAX_NESTING = 32
#: the most characters of the input that an error message quotes
MAX_QUOTED = 160


def excerpt(text: str, position: int = 0, width: int = MAX_QUOTED) -> str:
    """``repr`` of ``text``, or for a text longer than ``width`` (default :data:`MAX_QUOTED`) ``width``
    characters of it around ``position`` with ``…`` marking what is left out and the total length:
    error messages stay one short line whatever the input."""
    if len(text) <= width:
        return repr(text)
    start = min(max(0, int(position) - width // 2), len(text) - width)
    stop = start + width
    return f"{'…' if start else ''}{text[start:stop]!r}{'…' if stop < len(text) else ''} ({len(text)} characters)"


def _clip_message(message: str, limit: int = 240) -> str:
    """A message cut to ``limit`` characters (error texts of other layers may quote long values)."""
    message = " ".join(str(message).split())
    return message if len(message) <= limit else f"{message[: limit - 40]}… ({len(message)} characters)"


# ---------------------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------------------
class MeasureSyntaxError(ValueError):
    """A measure string that does not follow the grammar.

    The message names the input, the offending token and its 0-based position, and what was expected
    there, e.g. ``cannot parse measure 'infAP(c=1.5': expected ',' or ')' at position 11 (end of
    input)``; it is one line and quotes at most :data:`MAX_QUOTED` characters of a long input (around
    the position, see :func:`excerpt`). The parts are also available as attributes: ``text`` (the whole
    input), ``position``, ``token`` (the offending token's text, ``None`` at the end of the input) and
    ``expected`` (or ``None``).
    """

    def __init__(self, text: str, position: int, detail: str, token: str | None = None, expected: str | None = None):
        self.text = text
        self.position = position
        self.detail = detail
        self.token = token
        self.expected = expected
        super().__init__(f"cannot parse measure {excerpt(text, position)}: {detail}")

    def __reduce__(self):  # keep the error picklable (e.g. across worker processes)
        return (type(self), (self.text, self.position, self.detail, self.token, self.expected))


class UnknownMeasureError(NameError, ValueError):
    """A measure name that is not in ``ir_measures.measures.registry``.

    It is a ``NameError`` (what ``ir_measures.parse_measure`` raises for unknown names) and also a
    ``ValueError``, so callers that catch ``ValueError`` for unusable measure strings (as
    ``ir_measures.parse_trec_measure`` does for its nicknames) keep working. ``name`` holds the unknown
    name and ``suggestions`` the close matches.
    """

    def __init__(self, message: str, name: str | None = None, suggestions: Sequence[str] = ()):
        super().__init__(message)
        self.name = name
        self.suggestions = tuple(suggestions)

    def __reduce__(self):
        return (type(self), (str(self), self.name, self.suggestions))


# ---------------------------------------------------------------------------------------------------------
# tokenizer
# ---------------------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------------------
# parser
# ---------------------------------------------------------------------------------------------------------
def _is_hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


class _Parser:
    """Recursive descent over the token list of one measure string."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.index = 0
        self.depth = 0

    def enter(self) -> None:
        """One level deeper into a dict or tuple; refused beyond :data:`MAX_NESTING` (before Python's own
        recursion limit could be reached)."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            tok = self.peek()
            raise MeasureSyntaxError(
                self.text,
                tok.pos,
                f"dicts and tuples nested deeper than {MAX_NESTING} levels at position {tok.pos}",
                token=tok.text,
                expected=f"at most {MAX_NESTING} levels of nesting",
            )

    # -- helpers ---------------------------------------------------------------------------------------
    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def is_op(self, op: str, ahead: int = 0) -> bool:
        tok = self.peek(ahead)
        return tok.kind == "OP" and tok.text == op

    def advance(self) -> Token:
        tok = self.peek()
        if tok.kind != "END":
            self.index += 1
        return tok

    def fail(self, expected: str, tok: Token | None = None):
        tok = tok or self.peek()
        if tok.kind == "END":
            detail = f"expected {expected} at position {tok.pos} (end of input)"
            raise MeasureSyntaxError(self.text, tok.pos, detail, token=None, expected=expected)
        detail = f"expected {expected}, got {tok.text!r} at position {tok.pos}"
        raise MeasureSyntaxError(self.text, tok.pos, detail, token=tok.text, expected=expected)

    def expect_op(self, op: str, expected: str | None = None) -> Token:
        if not self.is_op(op):
            self.fail(expected or repr(op))
        return self.advance()

    def starts_param(self, ahead: int = 0) -> bool:
        return self.peek(ahead).kind == "WORD" and self.is_op("=", ahead + 1)

    # -- grammar ---------------------------------------------------------------------------------------
    def measure(self) -> tuple[str, dict[str, Any], Any]:
        name_tok = self.peek()
        if name_tok.kind != "WORD":
            self.fail("a measure name")
        self.advance()
        params: dict[str, Any] = {}
        after_name = "'(', '@' or end of input"
        if self.is_op("("):
            self.advance()
            after_name = "'@' or end of input"
            if self.is_op(")"):
                self.advance()
            else:
                while True:
                    self.param(params)
                    if self.is_op(","):
                        self.advance()
                        if self.is_op(")"):  # trailing comma
                            self.advance()
                            break
                        if not self.starts_param():
                            self.fail("a parameter (name=value) or ')'")
                        continue
                    if self.is_op(")"):
                        self.advance()
                        break
                    self.fail("',' or ')'")
        at = None
        if self.is_op("@"):
            self.advance()
            tok = self.peek()
            if tok.kind != "NUMBER":
                self.fail("a number after '@'")
            self.advance()
            at = tok.value
            after_name = "end of input"
        if self.peek().kind != "END":
            self.fail(after_name)
        return name_tok.text, params, at

    def param(self, params: dict[str, Any]) -> None:
        name_tok = self.peek()
        if name_tok.kind != "WORD":
            self.fail("a parameter name" if params else "a parameter name or ')'")
        if name_tok.text in params:
            raise MeasureSyntaxError(
                self.text,
                name_tok.pos,
                f"duplicate parameter {name_tok.text!r} at position {name_tok.pos}",
                token=name_tok.text,
                expected="each parameter at most once",
            )
        self.advance()
        self.expect_op("=", f"'=' after parameter {name_tok.text!r}")
        params[name_tok.text] = self.value()

    def value(self) -> Any:
        if self.is_op("("):
            return self.explicit_tuple()
        items = [self.scalar()]
        # comma continuation: ',' not followed by `NAME '='` (a new parameter) nor by ')' (trailing comma)
        while self.is_op(",") and not self.starts_param(1) and not self.is_op(")", 1):
            self.advance()
            items.append(self.scalar("a value or a parameter (name=value)"))
        return items[0] if len(items) == 1 else tuple(items)

    def explicit_tuple(self) -> tuple:
        self.enter()
        self.expect_op("(")
        items: list[Any] = []
        if self.is_op(")"):
            self.advance()
            self.depth -= 1
            return ()
        while True:
            items.append(self.scalar())
            if self.is_op(","):
                self.advance()
                if self.is_op(")"):
                    self.advance()
                    break
                continue
            if self.is_op(")"):
                self.advance()
                break
            self.fail("',' or ')'")
        self.depth -= 1
        return tuple(items)

    def scalar(self, expected: str = "a value") -> Any:
        tok = self.peek()
        if tok.kind in ("NUMBER", "STRING"):
            self.advance()
            return tok.value
        if tok.kind == "WORD":
            self.advance()
            if not self.is_op("+"):
                return tok.value
            words = [tok.text]
            while self.is_op("+"):
                self.advance()
                nxt = self.peek()
                if nxt.kind != "WORD":
                    self.fail("a word after '+'")
                self.advance()
                words.append(nxt.text)
            return "+".join(words)
        if self.is_op("{"):
            return self.dictionary()
        self.fail(expected)

    def dictionary(self) -> dict:
        self.enter()
        self.expect_op("{")
        out: dict[Any, Any] = {}
        if self.is_op("}"):
            self.advance()
            self.depth -= 1
            return out
        while True:
            key_tok = self.peek()
            key = self.scalar("a key")
            if not _is_hashable(key):
                raise MeasureSyntaxError(
                    self.text,
                    key_tok.pos,
                    f"a dict cannot be a key (position {key_tok.pos})",
                    token=key_tok.text,
                    expected="a number, word or string key",
                )
            if key in out:
                raise MeasureSyntaxError(
                    self.text,
                    key_tok.pos,
                    f"duplicate key {key!r} at position {key_tok.pos}",
                    token=key_tok.text,
                    expected="each key at most once",
                )
            self.expect_op(":", "':'")
            out[key] = self.scalar()
            if self.is_op(","):
                self.advance()
                if self.is_op("}"):
                    self.advance()
                    break
                continue
            if self.is_op("}"):
                self.advance()
                break
            self.fail("',' or '}'")
        self.depth -= 1
        return out


def parse_parts(text: str) -> tuple[str, dict[str, Any], Any]:
    """Parse a measure string into ``(name, params, at)`` without looking the name up.

    ``params`` keeps the order of the string; ``at`` is the number after ``@`` or ``None``.
    ``parse_parts("xGAP(g=0.1,0.9)@5") == ('xGAP', {'g': (0.1, 0.9)}, 5)``.
    Raises :class:`MeasureSyntaxError` (a ``ValueError``) for malformed input and for a parameter given
    twice.
    """
    return _Parser(text).measure()


# ---------------------------------------------------------------------------------------------------------
# formatter
# ---------------------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------------------
# measure objects
# ---------------------------------------------------------------------------------------------------------
def _registry() -> dict:
    return ir_measures.measures.registry


def _unknown_measure(name: str, registry: dict) -> UnknownMeasureError:
    import difflib  # only needed on this error path

    from ir_incomplete.trec_names import trec_eval_equivalent, trec_eval_message

    trec = trec_eval_message(name)  # P_5, ndcg_cut_10, map: point to the ir_measures name
    if trec:
        return UnknownMeasureError(trec, name=name, suggestions=[str(m) for m in trec_eval_equivalent(name) or ()])
    names = sorted(registry)
    folded = [n for n in names if n.lower() == name.lower()]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    suggestions = folded + [n for n in close if n not in folded]
    message = f"unknown measure {name!r}"
    if suggestions:
        message += f"; did you mean {' or '.join(repr(s) for s in suggestions)}?"
    message += f"; valid measures: {', '.join(names)}"
    return UnknownMeasureError(message, name=name, suggestions=suggestions)


def _param_names(measure) -> str:
    names = [f"{n} (@)" if n == measure.AT_PARAM else n for n in measure.SUPPORTED_PARAMS]
    return ", ".join(names) if names else "none"


def _describe(info) -> str:
    choices = getattr(info, "choices", None)
    if choices is not None and choices is not _not_provided():
        return "one of " + ", ".join(str(c) for c in choices)
    dtype = getattr(info, "dtype", None)
    if dtype is bool:
        return "True or False"
    if dtype is int:
        return "an integer"
    if dtype is float:
        return "a number"
    if isinstance(dtype, type):
        return f"a {dtype.__name__}"
    return "a value"


def _not_provided():
    return ir_measures.measures.base._NOT_PROVIDED


#: the largest cut-off passed to ``ir_measures``' own measures (trec_eval's providers take C integers)
_MAX_BUILTIN_CUTOFF = 2**31 - 1


def _coerce_builtin(name: str, key: str, value: Any, info) -> Any:
    """Check (and convert) one parameter value of an ``ir_measures`` built-in measure."""

    def fail(reason: str):
        desc = getattr(info, "desc", None)
        about = f" ({desc})" if desc else ""
        raise ValueError(
            f"{name}: invalid value {value!r} for parameter {key!r}{about}: {reason}; expected {_describe(info)}"
        )

    dtype = getattr(info, "dtype", None)
    if dtype is bool:
        if not isinstance(value, bool):
            fail("not True or False")
    elif dtype is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            fail("not an integer")
    elif dtype is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            fail("not a number")
        value = float(value)
        if not math.isfinite(value):
            fail("not finite")
    elif isinstance(dtype, type) and not isinstance(value, dtype):
        fail(f"not a {dtype.__name__}")
    if key == "cutoff" and isinstance(value, int) and not 1 <= value <= _MAX_BUILTIN_CUTOFF:
        fail(f"a cut-off must be between 1 and {_MAX_BUILTIN_CUTOFF}")
    choices = getattr(info, "choices", _not_provided())
    if choices is not _not_provided() and choices is not None and value not in choices:
        fail("not a valid choice")
    return value


def _required_params(measure) -> list[str]:
    """The parameters of an ``ir_measures`` built-in that are required and have no default."""
    supported = getattr(measure, "SUPPORTED_PARAMS", {}) or {}
    return [
        key
        for key, info in supported.items()
        if getattr(info, "required", False) and getattr(info, "default", _not_provided()) is _not_provided()
    ]


def _missing_message(name: str, measure, missing: Sequence[str]) -> str:
    """``SDCG: missing required parameter max_rel (maximum relevance score; an integer); SDCG needs
    cutoff (written @k) and max_rel``: what is missing, what it means and all that the measure needs."""
    supported = measure.SUPPORTED_PARAMS
    at_param = getattr(measure, "AT_PARAM", "cutoff")
    at_token = "@k" if at_param == "cutoff" else f"@{at_param}"

    def about(key: str) -> str:
        info = supported[key]
        parts = [p for p in (getattr(info, "desc", None), _describe(info)) if p]
        text = "; ".join(parts)
        if key == at_param:
            text += f", written {getattr(measure, 'NAME', name)}{at_token}"
        return f"{key} ({text})"

    plural = "s" if len(missing) > 1 else ""
    message = f"{name}: missing required parameter{plural} {' and '.join(about(k) for k in missing)}"
    required = _required_params(measure)
    if len(required) > len(missing):
        names = [f"{k} (written {at_token})" if k == at_param else k for k in required]
        message += f"; {getattr(measure, 'NAME', name)} needs {' and '.join(names)}"
    return message


def _validate_builtin(name: str, measure, params: dict[str, Any], at_given: bool) -> dict[str, Any]:
    supported = getattr(measure, "SUPPORTED_PARAMS", {}) or {}
    clean: dict[str, Any] = {}
    for key, value in params.items():
        info = supported.get(key)
        if info is None:
            if at_given and key == measure.AT_PARAM:
                raise ValueError(
                    f"{name} takes no @ value (it has no parameter {key!r}); valid parameters: {_param_names(measure)}"
                )
            raise ValueError(f"{name} has no parameter {key!r}; valid parameters: {_param_names(measure)}")
        clean[key] = _coerce_builtin(name, key, value, info)
    missing = [key for key in _required_params(measure) if key not in clean]
    if missing:  # ir_measures' providers would fail on it with an AssertionError while computing
        raise ValueError(_missing_message(name, measure, missing))
    return clean


def check_measure(measure: ir_measures.Measure) -> ir_measures.Measure:
    """A measure that its providers can compute: ``measure`` itself, or for an ``ir_measures`` built-in
    given an int where it wants a float (``INST(T=2,max_rel=3)``, which its providers refuse) the same
    measure with that float, as :func:`parse` reads it; else a ``ValueError`` naming the measure and the
    offending parameter.

    Measures of this package validate their parameters when built. An ``ir_measures`` built-in (e.g.
    ``ir_measures.SDCG@10`` built in Python, which ``ir_measures`` accepts until a provider fails with an
    ``AssertionError``) is checked as :func:`parse` checks one: no unknown parameter, values of the
    parameter's type and choices, and every required parameter without a default given.
    """
    if not isinstance(measure, ir_measures.Measure):
        raise TypeError(f"{measure!r} is not a measure (give a Measure object or a string such as 'infAP(c=1.5)@10')")
    if getattr(measure, "_ir_incomplete", False):
        return measure
    params = dict(getattr(measure, "params", None) or {})
    try:
        label = repr(measure)
    except Exception:  # ir_measures' repr fails on a parameter the measure does not have
        label = str(getattr(measure, "NAME", None) or type(measure).__name__)
    clean = _validate_builtin(label, measure, params, at_given=False)
    if any(type(clean[key]) is not type(value) for key, value in params.items()):
        measure = type(measure)(**clean)
    return measure


def parse(text: str | ir_measures.Measure) -> ir_measures.Measure:
    """Parse a measure string into an ``ir_measures.Measure`` (a ``Measure`` is returned unchanged).

    The name is looked up in ``ir_measures.measures.registry`` at call time; an unknown name raises
    :class:`UnknownMeasureError` (a ``NameError``) with close matches and the list of valid names. The
    measure is built as ``registry[name](**params)``, with ``@x`` setting the measure's ``AT_PARAM``.
    Measures of this package validate their parameters themselves (their ``ValueError`` propagates);
    ``ir_measures`` built-ins are checked here: an unknown parameter or a value of the wrong type or
    outside the choices raises ``ValueError`` naming the measure and the parameter (ints are accepted
    where floats are expected, and integral floats where ints are), and so does a required parameter
    without a default that is not given (``SDCG@10`` without ``max_rel``, ``P`` without a cut-off:
    ``ir_measures`` would accept them and its providers fail while computing).
    """
    if isinstance(text, ir_measures.Measure):
        return text
    if not isinstance(text, str):
        raise TypeError(f"a measure string must be a str, not {type(text).__name__}")
    name, params, at = parse_parts(text)
    registry = _registry()
    measure = registry.get(name)
    if measure is None:
        raise _unknown_measure(name, registry)
    at_param = getattr(measure, "AT_PARAM", "cutoff")
    if at is not None:
        if at_param in params:
            raise ValueError(f"{name}: parameter {at_param!r} given twice (as {at_param}= and as @{at})")
        params[at_param] = at
    try:
        if not getattr(measure, "_ir_incomplete", False):
            params = _validate_builtin(name, measure, params, at is not None)
        return measure(**params)
    except ValueError as exc:  # a message quoting a long value (a big tuple or dict) is cut short
        message = str(exc)
        if len(message) <= 240 and "\n" not in message:
            raise
        raise ValueError(_clip_message(message)) from exc


parse_measure = parse


# ---------------------------------------------------------------------------------------------------------
# patching ir_measures' parsers: original first, then ours
# ---------------------------------------------------------------------------------------------------------
#: (module name, attribute) -> the function that was bound there before :func:`install_parsers`
_ORIGINALS: dict[tuple[str, str], Any] = {}
_TARGETS = (
    ("ir_measures", "parse_measure", "measure"),
    ("ir_measures.util", "parse_measure", "measure"),
    ("ir_measures", "parse_trec_measure", "trec"),
    ("ir_measures.util", "parse_trec_measure", "trec"),
)
_LOCK = threading.Lock()
_WRAPPER_FLAG = "_ir_incomplete_wrapper"


def _module(name: str):
    return ir_measures if name == "ir_measures" else ir_measures.util


_LONG_TOKEN = re.compile(rf"[^\s()\[\]{{}},=@:+]{{{MAX_TOKEN_LENGTH + 1},}}")


def _hostile(measure) -> bool:
    """True for a string that ``ir_measures``' own (``ast``-based) parser should not be given: longer than
    :data:`MAX_MEASURE_LENGTH`, with a token longer than :data:`MAX_TOKEN_LENGTH` or with brackets nested
    deeper than :data:`MAX_NESTING` (Python's parser can exhaust the recursion limit or memory on such
    input, or spend its time converting a huge number); :func:`parse` refuses it cleanly."""
    if not isinstance(measure, str):
        return False
    if len(measure) > MAX_MEASURE_LENGTH or _LONG_TOKEN.search(measure):
        return True
    depth = deepest = 0
    for ch in measure:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest > MAX_NESTING + 1  # the measure's own '(' is one level


def _check_upstream(measure):
    """Refuse what ``ir_measures``' own parser accepts but :func:`parse` does not: a cut-off below 1
    (``nDCG@-1``), a parameter that is not a finite number (``RBP(p=1e999)``) and, for ``ir_measures``
    built-ins, everything :func:`parse` refuses (an unknown parameter, a missing required one such as
    ``max_rel`` of ``SDCG@10``). An int written where a built-in wants a float (``INST(T=1,max_rel=3)``,
    which ``ir_measures``' providers refuse) is read as that float, as :func:`parse` reads it."""
    params = getattr(measure, "params", None) or {}
    cutoff = params.get("cutoff")
    if (
        isinstance(cutoff, numbers.Integral)
        and not isinstance(cutoff, bool)
        and not 1 <= int(cutoff) <= _MAX_BUILTIN_CUTOFF
    ):
        raise ValueError(f"invalid cut-off {cutoff}: a cut-off must be an integer between 1 and {_MAX_BUILTIN_CUTOFF}")
    for key, value in params.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{measure!r}: invalid value {value!r} for parameter {key!r}: not finite")
    return check_measure(measure)


#: where the ``ir_measures`` command reads its measure arguments: ``_get_measures`` of ``ir_measures.__main__``
#: (run as the console script, or as ``python -m ir_measures``, whose ``__spec__`` has the same name)
_COMMAND_MODULE = "ir_measures.__main__"
_COMMAND_FUNCTION = "_get_measures"


def _called_by_ir_measures_command(frame) -> bool:
    """True when ``frame`` is the ``ir_measures`` command's function that reads the measure arguments."""
    if frame is None or frame.f_code.co_name != _COMMAND_FUNCTION:
        return False
    return getattr(frame.f_globals.get("__spec__"), "name", None) == _COMMAND_MODULE


def _answer_ir_measures_command(token, error: Exception):
    """What ``ir_measures.parse_measure`` does for the ``ir_measures`` command with a measure string that
    neither parser reads.

    That command turns any ``ValueError`` into ``syntax error: <token>`` and any ``NameError`` into
    ``unknown measure: <token>``, dropping the message. Instead it gets what the ``ir_incomplete`` command
    does: a trec_eval name of one measure (``P_5``) is read as that measure with a note on stderr;
    anything else prints ``ir_measures: error: <message>`` (the message the ``ir_incomplete`` command
    prints) and exits with status 2.
    """
    from ir_incomplete.cli import measure_error_message
    from ir_incomplete.trec_names import trec_eval_equivalent, trec_eval_note

    trec = trec_eval_equivalent(token) if isinstance(token, str) else None
    if trec is not None and len(trec) == 1:
        sys.stderr.write(f"ir_measures: {trec_eval_note(token, trec)}\n")
        return trec[0]
    sys.stderr.write(f"ir_measures: error: {measure_error_message(str(token), error)}\n")
    sys.stderr.flush()
    raise SystemExit(2)


def _wrap_parse_measure(original):
    def read(measure):
        if _hostile(measure):
            return parse(measure)
        try:
            result = original(measure)
        except Exception as upstream:  # including RecursionError and MemoryError of the ast parser
            try:
                return parse(measure)
            except Exception as ours:
                raise ours from upstream
        try:
            return _check_upstream(result)
        except ValueError:  # what ours refuses too (SDCG@10): raise the error of parse, as our command
            return parse(measure)

    def parse_measure(measure):
        try:
            return read(measure)
        except Exception as error:
            if _called_by_ir_measures_command(sys._getframe(1)):
                return _answer_ir_measures_command(measure, error)
            raise

    parse_measure.__doc__ = (
        "Parse a measure string: ``ir_measures``' own ``parse_measure`` first and, when it fails, the "
        "grammar of :mod:`ir_incomplete.grammar` (whose error is raised if both fail)."
    )
    return parse_measure


def _wrap_parse_trec_measure(original):
    def parse_trec_measure(measure):
        if _hostile(measure):
            return [parse(measure)]
        try:
            return original(measure)
        except Exception as upstream:
            try:
                return [parse(measure)]
            except Exception as ours:
                raise ours from upstream

    parse_trec_measure.__doc__ = (
        "Parse a trec_eval measure name into a list of measures: ``ir_measures``' own "
        "``parse_trec_measure`` first (so ``map``, ``P``, ``ndcg_cut_10`` keep their meaning) and, when it "
        "fails, ``[parse(measure)]`` with :mod:`ir_incomplete.grammar` (whose error is raised if both fail)."
    )
    return parse_trec_measure


def install_parsers() -> None:
    """Rebind ``ir_measures.parse_measure``, ``ir_measures.util.parse_measure``,
    ``ir_measures.parse_trec_measure`` and ``ir_measures.util.parse_trec_measure`` to wrappers that call
    the original function first and fall back to :func:`parse` when it raises.

    Idempotent: attributes that already hold one of our wrappers are left alone. The wrappers carry the
    original as ``__wrapped__``; :func:`uninstall_parsers` puts the originals back.
    """
    with _LOCK:
        wrappers: dict[int, Any] = {}  # one wrapper per original, so aliases stay identical
        for module_name, attr, kind in _TARGETS:
            module = _module(module_name)
            current = getattr(module, attr)
            if getattr(current, _WRAPPER_FLAG, False):
                continue
            wrapper = wrappers.get(id(current))
            if wrapper is None:
                factory = _wrap_parse_measure if kind == "measure" else _wrap_parse_trec_measure
                wrapper = factory(current)
                wrapper.__wrapped__ = current
                setattr(wrapper, _WRAPPER_FLAG, True)
                wrappers[id(current)] = wrapper
            _ORIGINALS[(module_name, attr)] = current
            setattr(module, attr, wrapper)


def uninstall_parsers() -> None:
    """Restore the parser functions that :func:`install_parsers` replaced (no-op when not installed)."""
    with _LOCK:
        for (module_name, attr), original in list(_ORIGINALS.items()):
            module = _module(module_name)
            if getattr(getattr(module, attr), _WRAPPER_FLAG, False):
                setattr(module, attr, original)
            del _ORIGINALS[(module_name, attr)]


def parsers_installed() -> bool:
    """True when all four ``ir_measures`` parser attributes hold the wrappers of :func:`install_parsers`."""
    return all(getattr(getattr(_module(m), a), _WRAPPER_FLAG, False) for m, a, _ in _TARGETS)
