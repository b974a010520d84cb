"""The limits of measure strings and the errors of reading them (one line each, quoting a long input
in part).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "MAX_MEASURE_LENGTH",
    "MAX_TOKEN_LENGTH",
    "MAX_NESTING",
    "MAX_QUOTED",
    "excerpt",
    "measure_error_message",
    "MeasureSyntaxError",
    "UnknownMeasureError",
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


def measure_error_message(token: str, error: BaseException) -> str:
    """The one-line message for the measure string ``token`` that could not be read: the error's text,
    led by ``measure '<token>': `` unless the text already quotes the token (the ``ir_measures`` command
    prints the same text when this package is loaded there)."""
    message = " ".join(str(error).split()) or type(error).__name__
    if token not in message and not message.startswith("cannot parse measure"):
        message = f"measure {excerpt(token, width=60)}: {message}"
    return message


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
