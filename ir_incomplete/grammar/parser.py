"""The recursive-descent parser of measure strings: ``(name, params, at)`` without looking the name up."""

from __future__ import annotations

from typing import Any

from ir_incomplete.grammar.errors import MAX_NESTING, MeasureSyntaxError
from ir_incomplete.grammar.tokenizer import Token, tokenize

__all__ = ["parse_parts"]


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
