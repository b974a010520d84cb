"""Hostile measure strings: deep nesting, huge numbers, negative cut-offs, very long input.

Each must end with the grammar's ``MeasureSyntaxError`` or a ``ValueError`` whose message is one line
and quotes only a short part of the input — from ``parse``, from ``ir_measures.parse_measure`` (whose own
``ast``-based parser runs first) and from the command line (exit 2, no traceback)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ir_measures
import pytest

import ir_incomplete
from ir_incomplete.cli import main
from ir_incomplete.grammar import MAX_NESTING, MeasureSyntaxError, excerpt, parse, parse_parts

REPO_ROOT = Path(__file__).resolve().parents[1]

HOSTILE = {
    "nested dicts": "infAP(c=" + "{1:" * 1000 + "1" + "}" * 1000 + ")",
    "nested tuples": "infAP(c=" + "(" * 1000 + "1" + ")" * 1000 + ")",
    "5000 digits": "infAP(c=" + "9" * 5000 + ")",
    "5000 digits after @": "nDCG@" + "9" * 5000,
    "5000 decimals": "infAP(c=1." + "9" * 5000 + ")",
    "negative cut-off": "nDCG@-1",
    "zero cut-off": "P@0",
    "20-digit cut-off": "nDCG@99999999999999999999",
    "100 kB word": "infAP(c=" + "x" * 100_000 + ")",
    "100 kB name": "a" * 100_000,
    "100 kB of tokens": "xGAP(g=" + ",".join(["0.0001"] * 14_000) + ")",
    "long tuple value": "infAP(c=" + ",".join(["0.5"] * 2000) + ")",
    "infinite float": "RBP(p=1e999)",
}

# at most this many characters of the message (a fixed text plus at most ~200 characters of the input)
MESSAGE_LIMIT = 360


def _check_message(exc: BaseException, text: str):
    message = str(exc)
    assert "\n" not in message
    assert len(message) <= MESSAGE_LIMIT, message[:500]
    if len(text) > 250:
        assert text[:250] not in message


@pytest.mark.parametrize("name", list(HOSTILE))
def test_parse_refuses_with_a_short_message(name):
    text = HOSTILE[name]
    with pytest.raises(ValueError) as info:
        parse(text)
    assert not isinstance(info.value, RecursionError)
    _check_message(info.value, text)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_ir_measures_parse_measure_refuses_with_a_short_message(name):
    text = HOSTILE[name]
    assert ir_incomplete.grammar.parsers_installed()
    with pytest.raises(ValueError) as info:
        ir_measures.parse_measure(text)
    _check_message(info.value, text)


@pytest.mark.parametrize("name", ["nested dicts", "5000 digits", "100 kB word", "100 kB of tokens"])
def test_ir_measures_parse_trec_measure_refuses_with_a_short_message(name):
    text = HOSTILE[name]
    with pytest.raises(ValueError) as info:
        ir_measures.parse_trec_measure(text)
    _check_message(info.value, text)


def test_syntax_errors_name_the_limit_and_position():
    with pytest.raises(MeasureSyntaxError, match=rf"nested deeper than {MAX_NESTING} levels at position") as info:
        parse(HOSTILE["nested dicts"])
    assert info.value.text == HOSTILE["nested dicts"]  # the whole input stays available
    with pytest.raises(MeasureSyntaxError, match=r"number of 5000 characters at position 8"):
        parse(HOSTILE["5000 digits"])
    with pytest.raises(MeasureSyntaxError, match=r"100009 characters, more than the 10000"):
        parse(HOSTILE["100 kB word"])
    with pytest.raises(ValueError, match=r"cut-off must be between 1 and"):
        parse("nDCG@-1")
    with pytest.raises(ValueError, match=r"cut-off"):
        ir_measures.parse_measure("nDCG@-1")
    with pytest.raises(ValueError, match=r"between 1 and 2147483647"):
        ir_measures.parse_measure("P@99999999999999999999")
    assert parse("P@2147483647") == ir_measures.P @ 2147483647
    with pytest.raises(ValueError, match=r"not finite"):
        parse("RBP(p=1e999)")


def test_ordinary_strings_are_unaffected():
    assert parse("nDCG@1") == ir_measures.nDCG @ 1
    assert ir_measures.parse_measure("nDCG@10") == ir_measures.nDCG @ 10
    assert parse("IPrec@0").params["recall"] == 0  # its @ value is a recall level, not a cut-off
    nested = "{1:" * MAX_NESTING + "1" + "}" * MAX_NESTING
    assert parse_parts(f"X(c={nested})")[1]["c"] is not None
    with pytest.raises(MeasureSyntaxError, match="nested deeper"):
        parse_parts("X(c={1:" + nested + "})")
    assert parse("infAP(c=" + "1" * 100 + ")").params["c"] == float("1" * 100)
    assert parse("infAP(c=1." + "5" * 98 + ")").params["c"] == pytest.approx(1.5555555555555556)


def test_excerpt_is_short_and_marks_what_is_left_out():
    assert excerpt("abc") == "'abc'"
    text = "x" * 1000 + "HERE" + "y" * 1000
    short = excerpt(text, 1000)
    assert "HERE" in short and short.startswith("…'") and short.endswith("(2004 characters)") and len(short) < 200


@pytest.fixture
def tiny_files(tmp_path):
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    run.write_text("1 Q0 a 1 2.0 r\n1 Q0 c 2 1.0 r\n")
    return qrels, run


@pytest.mark.parametrize(
    "name", ["nested dicts", "5000 digits", "negative cut-off", "20-digit cut-off", "100 kB word", "long tuple value"]
)
def test_cli_exits_2_with_one_short_line(capsys, tiny_files, name):
    qrels, run = tiny_files
    code = main([str(qrels), str(run), HOSTILE[name]])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert len(err) <= MESSAGE_LIMIT + 40, err[:500]


def test_cli_process_has_no_traceback(tiny_files):
    qrels, run = tiny_files
    done = subprocess.run(
        [sys.executable, "-m", "ir_incomplete", str(qrels), str(run), HOSTILE["nested dicts"]],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and "nested deeper" in done.stderr
