"""Measure strings: tokenizer, recursive-descent parser and canonical formatter.

Modules: :mod:`~ir_incomplete.grammar.errors` (limits and errors), :mod:`~ir_incomplete.grammar.tokenizer`,
:mod:`~ir_incomplete.grammar.parser`, :mod:`~ir_incomplete.grammar.formatting`,
:mod:`~ir_incomplete.grammar.registry` (names looked up, built-in measures' parameters checked: :func:`parse`)
and :mod:`~ir_incomplete.grammar.ir_measures_parsers` (``ir_measures``' parsers and command). Every name
is importable from :mod:`ir_incomplete.grammar`.

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

from ir_incomplete.grammar.errors import (
    MAX_MEASURE_LENGTH,
    MAX_NESTING,
    MAX_TOKEN_LENGTH,
    MeasureSyntaxError,
    UnknownMeasureError,
    excerpt,
    measure_error_message,
)
from ir_incomplete.grammar.errors import MAX_QUOTED as MAX_QUOTED
from ir_incomplete.grammar.formatting import format_measure, format_value
from ir_incomplete.grammar.ir_measures_parsers import install_parsers, parsers_installed, uninstall_parsers
from ir_incomplete.grammar.parser import parse_parts
from ir_incomplete.grammar.registry import _describe as _describe  # used by the command line
from ir_incomplete.grammar.registry import _not_provided as _not_provided
from ir_incomplete.grammar.registry import check_measure, parse, parse_measure
from ir_incomplete.grammar.tokenizer import Token, tokenize

__all__ = [
    "MeasureSyntaxError",
    "UnknownMeasureError",
    "MAX_MEASURE_LENGTH",
    "MAX_TOKEN_LENGTH",
    "MAX_NESTING",
    "excerpt",
    "measure_error_message",
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
