"""Tests of the measure-string grammar: tokenizer, parser, formatter, parse() and the parser patching."""

import json
import math
import subprocess
import sys
from pathlib import Path

import ir_measures
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ir_incomplete import grammar
from ir_incomplete.grammar import (
    MeasureSyntaxError,
    Token,
    UnknownMeasureError,
    format_measure,
    format_value,
    parse,
    parse_measure,
    parse_parts,
    tokenize,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
TEST_VECTORS = SHARED / "spec" / "test_vectors.json"


# ---------------------------------------------------------------------------------------------------------
# tokenizer
# ---------------------------------------------------------------------------------------------------------
def test_tokenize_exact():
    assert tokenize("infAP(c=1.5, eps=1e-4)@10") == [
        Token("WORD", "infAP", "infAP", 0),
        Token("OP", "(", "(", 5),
        Token("WORD", "c", "c", 6),
        Token("OP", "=", "=", 7),
        Token("NUMBER", "1.5", 1.5, 8),
        Token("OP", ",", ",", 11),
        Token("WORD", "eps", "eps", 13),
        Token("OP", "=", "=", 16),
        Token("NUMBER", "1e-4", 1e-4, 17),
        Token("OP", ")", ")", 21),
        Token("OP", "@", "@", 22),
        Token("NUMBER", "10", 10, 23),
        Token("END", "", None, 25),
    ]


def test_tokenize_words_strings_and_signs():
    toks = tokenize("""X(a=-1,b=+2,c=.5,d=1.,e=exp-log2,f=pool+run,g=True,h='it\\'s',i="q\\"",j=α_nDCG)""")
    values = [(t.kind, t.value) for t in toks if t.kind not in ("OP", "END")]
    assert values == [
        ("WORD", "X"),
        ("WORD", "a"),
        ("NUMBER", -1),
        ("WORD", "b"),
        ("NUMBER", 2),
        ("WORD", "c"),
        ("NUMBER", 0.5),
        ("WORD", "d"),
        ("NUMBER", 1.0),
        ("WORD", "e"),
        ("WORD", "exp-log2"),
        ("WORD", "f"),
        ("WORD", "pool"),
        ("WORD", "run"),
        ("WORD", "g"),
        ("WORD", True),
        ("WORD", "h"),
        ("STRING", "it's"),
        ("WORD", "i"),
        ("STRING", 'q"'),
        ("WORD", "j"),
        ("WORD", "α_nDCG"),
    ]
    assert type(toks[4].value) is int and type(toks[12].value) is float
    assert [t.text for t in toks if t.kind == "OP" and t.text == "+"] == ["+"]


def test_tokenize_types():
    assert [type(t.value) for t in tokenize("1 1. .5 1e5 -3 +4")[:-1]] == [int, float, float, float, int, int]
    assert tokenize("None False")[:2] == [Token("WORD", "None", None, 0), Token("WORD", "False", False, 5)]


def test_tokenize_error_positions():
    with pytest.raises(MeasureSyntaxError) as err:
        tokenize("AP(a%")
    assert err.value.position == 4
    assert str(err.value) == "cannot parse measure 'AP(a%': unexpected '%' at position 4"
    with pytest.raises(TypeError):
        tokenize(None)


# ---------------------------------------------------------------------------------------------------------
# parse_parts
# ---------------------------------------------------------------------------------------------------------
PARTS = [
    ("AP", ("AP", {}, None)),
    ("AP@10", ("AP", {}, 10)),
    ("P(rel=2)@5", ("P", {"rel": 2}, 5)),
    ("nDCG(dcg='exp-log2')@10", ("nDCG", {"dcg": "exp-log2"}, 10)),
    ("nDCG(dcg=exp-log2)@10", ("nDCG", {"dcg": "exp-log2"}, 10)),
    ("nDCG(gains={0:0,1:1,2:3})", ("nDCG", {"gains": {0: 0, 1: 1, 2: 3}}, None)),
    ("nDCG(judged_only=True)@5", ("nDCG", {"judged_only": True}, 5)),
    ("IPrec@0.5", ("IPrec", {}, 0.5)),
    ("SetF(beta=0.5)", ("SetF", {"beta": 0.5}, None)),
    ("infAP(c=1.5)", ("infAP", {"c": 1.5}, None)),
    ("infAP(c=1.5)@10", ("infAP", {"c": 1.5}, 10)),
    ("infAP(variant=uniform)", ("infAP", {"variant": "uniform"}, None)),
    ("infAP(c=1.5, eps=1e-4)", ("infAP", {"c": 1.5, "eps": 1e-4}, None)),
    ("  infAP ( c = 1.5 ,eps= 1e-4 ) @ 10 ", ("infAP", {"c": 1.5, "eps": 1e-4}, 10)),
    ("BootNDCG(prior=pool+run)@10", ("BootNDCG", {"prior": "pool+run"}, 10)),
    ("BootNDCG(prior=pool + run)", ("BootNDCG", {"prior": "pool+run"}, None)),
    ("xGAP(g=0.1,0.9)", ("xGAP", {"g": (0.1, 0.9)}, None)),
    ("xGAP(g=(0.1,0.9))", ("xGAP", {"g": (0.1, 0.9)}, None)),
    ("xGAP(g=0.1,0.9,unjudged=condensed)@5", ("xGAP", {"g": (0.1, 0.9), "unjudged": "condensed"}, 5)),
    ("xGAP(unjudged=condensed,g=0.1,0.9)", ("xGAP", {"unjudged": "condensed", "g": (0.1, 0.9)}, None)),
    ("GAP(g=0,1)", ("GAP", {"g": (0, 1)}, None)),
    ("X(a=-1)", ("X", {"a": -1}, None)),
    ("X(a=+2,b=.5,c=1.,d=-1e-5)", ("X", {"a": 2, "b": 0.5, "c": 1.0, "d": -1e-5}, None)),
    ("α_nDCG(alpha=0.5)@20", ("α_nDCG", {"alpha": 0.5}, 20)),
    ("X()", ("X", {}, None)),
    ("X(a=1,)", ("X", {"a": 1}, None)),
    ("X(a=(1,),b=(),c=(2))", ("X", {"a": (1,), "b": (), "c": (2,)}, None)),
    ("X(a=None,b=False,c=none)", ("X", {"a": None, "b": False, "c": "none"}, None)),
    ("X(a='a b',b=\"x\\\\y\")", ("X", {"a": "a b", "b": "x\\y"}, None)),
    ("X(a='\\x20\\u00e9\\U0001F600\\n')", ("X", {"a": " é\U0001f600\n"}, None)),
    ("X(a={},b={'k':v,1:{2:3}})", ("X", {"a": {}, "b": {"k": "v", 1: {2: 3}}}, None)),
    ("X(a=x,y,b=1)", ("X", {"a": ("x", "y"), "b": 1}, None)),
    ("X(a={1:2},{3:4})", ("X", {"a": ({1: 2}, {3: 4})}, None)),
    ("X@-1", ("X", {}, -1)),
]


@pytest.mark.parametrize("text,expected", PARTS, ids=[p[0] for p in PARTS])
def test_parse_parts(text, expected):
    got = parse_parts(text)
    assert got == expected
    # exact types too (1 == 1.0 == True would hide a wrong type)
    assert _types(got) == _types(expected)
    assert list(got[1]) == list(expected[1])  # parameter order is kept


def _types(value):
    if isinstance(value, dict):
        return ("dict", tuple((_types(k), _types(v)) for k, v in value.items()))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_types(v) for v in value))
    return type(value).__name__


def _spec_measure_strings():
    if not TEST_VECTORS.exists():
        return None
    data = json.loads(TEST_VECTORS.read_text(encoding="utf-8"))
    found = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "measure_string":
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(data)
    return sorted(set(found))


def test_spec_measure_strings_parse():
    strings = _spec_measure_strings()
    if strings is None:
        pytest.skip(f"spec test vectors not found next to the repository ({TEST_VECTORS.name} under ../shared/spec)")
    assert strings
    for text in strings:
        name, params, at = parse_parts(text)
        assert name and " " not in text
        # our canonical form of the same parts reads back to the same parts
        assert parse_parts(format_measure(name, params.items(), at)) == (name, params, at)
    assert ("GAP", {"g": (0.5, 0.5), "unjudged": "condensed"}, None) == parse_parts("GAP(g=0.5,0.5,unjudged=condensed)")


# ---------------------------------------------------------------------------------------------------------
# syntax errors
# ---------------------------------------------------------------------------------------------------------
SYNTAX_ERRORS = [
    ("infAP(c=1.5", 11, "cannot parse measure 'infAP(c=1.5': expected ',' or ')' at position 11 (end of input)"),
    ("AP@", 3, "cannot parse measure 'AP@': expected a number after '@' at position 3 (end of input)"),
    ("AP(rel=)", 7, "cannot parse measure 'AP(rel=)': expected a value, got ')' at position 7"),
    ("AP(=2)", 3, "cannot parse measure 'AP(=2)': expected a parameter name or ')', got '=' at position 3"),
    ("AP)", 2, "cannot parse measure 'AP)': expected '(', '@' or end of input, got ')' at position 2"),
    ("AP(rel=1,rel=2)", 9, "cannot parse measure 'AP(rel=1,rel=2)': duplicate parameter 'rel' at position 9"),
    ("AP(a='x)", 5, 'cannot parse measure "AP(a=\'x)": unterminated string starting at position 5'),
    ('AP(a="x', 5, "cannot parse measure 'AP(a=\"x': unterminated string starting at position 5"),
    ("AP(a='\\q')", 6, None),
    ("AP(a=b+)", 7, None),
    ("AP(a=1 2)", 7, None),
    ("AP(rel=1,", 9, None),
    ("AP(rel=1,2", 10, None),
    ("AP(g=(1,2),3)", 11, None),
    ("AP(a={1:2)", 9, None),
    ("AP(a={{1:2}:3})", 6, None),
    ("AP(a={1:2,1:3})", 10, None),
    ("AP@x", 3, None),
    ("AP@10@5", 5, None),
    ("AP@10abc", 5, None),
    ("", 0, "cannot parse measure '': expected a measure name at position 0 (end of input)"),
    ("@5", 0, None),
    ("AP(rel 2)", 7, None),
    ("AP(a=-)", 5, None),
    ("AP(a=x-)", 6, "cannot parse measure 'AP(a=x-)': unexpected '-' at position 6"),
]


@pytest.mark.parametrize("text,position,message", SYNTAX_ERRORS, ids=[e[0] or "<empty>" for e in SYNTAX_ERRORS])
def test_syntax_errors(text, position, message):
    for func in (parse_parts, parse):
        with pytest.raises(MeasureSyntaxError) as err:
            func(text)
        assert isinstance(err.value, ValueError)
        assert err.value.position == position
        assert f"at position {position}" in str(err.value) or f"(position {position})" in str(err.value)
        assert repr(text) in str(err.value)
        if message is not None:
            assert str(err.value) == message


def test_syntax_error_attributes_and_pickle():
    import pickle

    with pytest.raises(MeasureSyntaxError) as err:
        parse_parts("infAP(c=1.5")
    assert (err.value.text, err.value.position, err.value.token, err.value.expected) == (
        "infAP(c=1.5",
        11,
        None,
        "',' or ')'",
    )
    again = pickle.loads(pickle.dumps(err.value))
    assert type(again) is MeasureSyntaxError and str(again) == str(err.value) and again.position == 11
    with pytest.raises(MeasureSyntaxError) as err:
        parse_parts("AP(rel=1,rel=2)")
    assert err.value.token == "rel" and "'rel'" in str(err.value)


# ---------------------------------------------------------------------------------------------------------
# formatting
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value,text",
    [
        (True, "True"),
        (False, "False"),
        (None, "none"),
        (0, "0"),
        (-7, "-7"),
        (10**20, "100000000000000000000"),
        (3.0, "3"),
        (-2.0, "-2"),
        (2.5, "2.5"),
        (0.1, "0.1"),
        (1e-05, "1e-05"),
        (1e15, "1000000000000000.0"),
        (1e16, "1e+16"),
        (123456789012345.0, "123456789012345"),
        (-0.0, "0"),
        (float("inf"), "inf"),
        ("uniform", "uniform"),
        ("exp-log2", "exp-log2"),
        ("pool+run", "pool+run"),
        ("α_nDCG", "α_nDCG"),
        ("True", "'True'"),
        ("None", "'None'"),
        ("none", "none"),
        ("inf", "'inf'"),
        ("nan", "'nan'"),
        ("a b", "'a\\x20b'"),
        ("it's", "'it\\'s'"),
        ("back\\slash", "'back\\\\slash'"),
        ("", "''"),
        ("1abc", "'1abc'"),
        ("-x", "'-x'"),
        ("x-", "'x-'"),
        ("a+", "'a+'"),
        ("tab\t", "'tab\\t'"),
        ((0.1, 0.9), "0.1,0.9"),
        ([0.5, 0.25, 0.25], "0.5,0.25,0.25"),
        ((1.0, 0.0), "1,0"),
        ((0.5,), "(0.5,)"),
        ((), "()"),
        (("a", "b c"), "a,'b\\x20c'"),
        ({2: 3, 0: 0, 1: 1}, "{0:0,1:1,2:3}"),
        ({}, "{}"),
        ({"b": 1, "a": "x y"}, "{a:'x\\x20y',b:1}"),
    ],
)
def test_format_value(value, text):
    assert format_value(value) == text
    assert " " not in format_value(value)


def test_format_value_rejects_unwritable():
    with pytest.raises(ValueError):
        format_value(((1, 2), 3))
    with pytest.raises(TypeError):
        format_value(object())
    with pytest.raises(TypeError):
        format_value({1, 2})


def test_format_measure():
    assert format_measure("AP") == "AP"
    assert format_measure("AP", [], 10) == "AP@10"
    assert format_measure("IPrec", (), 0.5) == "IPrec@0.5"
    assert (
        format_measure("xGAP", [("g", (0.1, 0.9)), ("unjudged", "condensed")], 5)
        == "xGAP(g=0.1,0.9,unjudged=condensed)@5"
    )
    assert format_measure("infAP", [("c", 1.5), ("eps", 1e-4)]) == "infAP(c=1.5,eps=0.0001)"
    assert (
        format_measure("nDCG", [("dcg", "exp-log2"), ("judged_only", True)], 10)
        == "nDCG(dcg=exp-log2,judged_only=True)@10"
    )
    assert format_measure("X", [("b", 1), ("a", 2)]) == "X(b=1,a=2)"  # given order
    assert format_measure("X", [("a", None)], 3.0) == "X(a=none)@3"
    with pytest.raises(ValueError):
        format_measure("bad name", [])
    with pytest.raises(ValueError):
        format_measure("X", [("1a", 1)])


_WORD = r"[A-Za-z_αβ][A-Za-z0-9_αβ]{0,6}(-[A-Za-z0-9_]{1,3}){0,2}"
names = st.from_regex(rf"\A{_WORD}\Z")
bare_words = st.from_regex(rf"\A{_WORD}(\+{_WORD}){{0,2}}\Z")
finite_floats = st.floats(allow_nan=False, allow_infinity=False)
scalars = st.one_of(
    bare_words,
    st.text(max_size=12),  # quotes, spaces, backslashes, control characters, anything
    st.sampled_from(["it's", 'say "hi"', "a b", "back\\slash", "\\'", "True", "none", "1.5", "-x", ""]),
    st.integers(),
    st.integers(max_value=-1),
    finite_floats,
    st.floats(max_value=-1e-300, allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.dictionaries(st.integers(), st.integers(), max_size=4),
)
values = st.one_of(
    scalars,
    st.tuples(finite_floats, finite_floats),
    st.lists(finite_floats, max_size=4).map(tuple),
)
ats = st.one_of(st.none(), st.integers(), finite_floats)


@given(name=names, params=st.dictionaries(names, values, max_size=5), at=ats)
def test_format_parse_round_trip(name, params, at):
    items = list(params.items())
    text = format_measure(name, items, at)
    assert " " not in text
    assert parse_parts(text) == (name, dict(items), at)
    # formatting is canonical: the parsed parts print the same way again
    again = parse_parts(text)
    assert format_measure(again[0], again[1].items(), again[2]) == text


@given(value=values)
def test_format_value_round_trip(value):
    assert parse_parts(f"X(v={format_value(value)})")[1]["v"] == value


# ---------------------------------------------------------------------------------------------------------
# parse(): built-in measures
# ---------------------------------------------------------------------------------------------------------
def test_parse_builtins():
    assert parse("AP@10") == ir_measures.AP @ 10
    assert parse("nDCG(dcg='exp-log2')@10") == ir_measures.nDCG(dcg="exp-log2") @ 10
    assert parse("nDCG(dcg=exp-log2)@10") == ir_measures.nDCG(dcg="exp-log2") @ 10
    assert parse("AP(rel=2)") == ir_measures.AP(rel=2)
    assert parse("IPrec@0.5") == ir_measures.IPrec @ 0.5
    assert parse("IPrec@1").params["recall"] == 1.0 and type(parse("IPrec@1").params["recall"]) is float
    assert parse("SetF(beta=0.5)") == ir_measures.SetF(beta=0.5)
    assert parse("P(rel=2)@5") == ir_measures.P(rel=2) @ 5
    assert parse("nDCG(gains={0:0,1:1,2:3})") == ir_measures.nDCG(gains={0: 0, 1: 1, 2: 3})
    assert parse("nDCG(judged_only=True)@5") == ir_measures.nDCG(judged_only=True) @ 5
    assert parse("α_nDCG(alpha=0.25)@20") == ir_measures.alpha_nDCG(alpha=0.25) @ 20
    assert parse("AP@10.0").params["cutoff"] == 10 and type(parse("AP@10.0").params["cutoff"]) is int
    assert parse("NumRelRet") == ir_measures.measures.registry["NumRelRet"]
    assert parse_measure is parse
    measure = ir_measures.AP @ 5
    assert parse(measure) is measure
    with pytest.raises(TypeError):
        parse(42)


def test_unknown_measure():
    with pytest.raises(NameError) as err:
        parse("NoSuchMeasure@10")
    message = str(err.value)
    assert "NoSuchMeasure" in message and "AP" in message and "nDCG" in message
    assert isinstance(err.value, UnknownMeasureError) and isinstance(err.value, ValueError)
    with pytest.raises(NameError) as err:
        parse("ndcg@10")
    assert "did you mean" in str(err.value) and "'nDCG'" in str(err.value)
    assert "nDCG" in err.value.suggestions


@pytest.mark.parametrize(
    "text,parts",
    [
        ("AP(foo=1)", ["AP", "'foo'", "rel", "judged_only", "cutoff"]),
        ("nDCG(dcg=bogus)", ["nDCG", "bogus", "'dcg'", "log2", "exp-log2"]),
        ("AP(rel=1.5)", ["AP", "'rel'", "integer"]),
        ("AP(rel=True)", ["AP", "'rel'", "integer"]),
        ("AP(judged_only=1)", ["AP", "'judged_only'", "True or False"]),
        ("SetF(beta=x)", ["SetF", "'beta'", "number"]),
        ("nDCG(gains=3)", ["nDCG", "'gains'", "dict"]),
        ("Rprec@10", ["Rprec", "@", "rel"]),
        ("P(cutoff=5)@10", ["P", "'cutoff'", "twice"]),
    ],
)
def test_builtin_validation_errors(text, parts):
    with pytest.raises(ValueError) as err:
        parse(text)
    assert not isinstance(err.value, MeasureSyntaxError)
    for part in parts:
        assert part in str(err.value)


def test_errors_without_asserts_under_python_O():
    code = (
        "from ir_incomplete.grammar import parse, MeasureSyntaxError\n"
        "for text in ('AP(foo=1)', 'nDCG(dcg=bogus)', 'infAP(c=1.5', 'AP(rel=1,rel=2)'):\n"
        "    try:\n"
        "        parse(text)\n"
        "    except ValueError as exc:\n"
        "        print(type(exc).__name__)\n"
        "    else:\n"
        "        print('accepted', text)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-O", "-c", code], cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ValueError", "ValueError", "MeasureSyntaxError", "MeasureSyntaxError"]


# ---------------------------------------------------------------------------------------------------------
# patching ir_measures' parsers
# ---------------------------------------------------------------------------------------------------------
@pytest.fixture
def parser_state():
    """Leave the ir_measures parsers installed or not, as they were found."""
    was_installed = grammar.parsers_installed()
    grammar.uninstall_parsers()
    originals = (
        ir_measures.parse_measure,
        ir_measures.util.parse_measure,
        ir_measures.parse_trec_measure,
        ir_measures.util.parse_trec_measure,
    )
    yield originals
    grammar.uninstall_parsers()
    if was_installed:
        grammar.install_parsers()


def test_install_and_uninstall(parser_state):
    pm, util_pm, trec, util_trec = parser_state
    assert not grammar.parsers_installed()
    assert not hasattr(pm, "_ir_incomplete_wrapper")
    grammar.install_parsers()
    assert grammar.parsers_installed()
    wrapped_pm, wrapped_trec = ir_measures.parse_measure, ir_measures.parse_trec_measure
    assert wrapped_pm is not pm and wrapped_pm.__wrapped__ is pm and wrapped_pm.__doc__
    assert wrapped_trec.__wrapped__ is trec and wrapped_trec.__doc__
    assert ir_measures.util.parse_measure.__wrapped__ is util_pm
    assert ir_measures.util.parse_trec_measure.__wrapped__ is util_trec
    grammar.install_parsers()  # idempotent: no second layer
    assert ir_measures.parse_measure is wrapped_pm and ir_measures.parse_trec_measure is wrapped_trec
    assert ir_measures.parse_measure.__wrapped__ is pm
    grammar.uninstall_parsers()
    assert not grammar.parsers_installed()
    assert ir_measures.parse_measure is pm and ir_measures.util.parse_measure is util_pm
    assert ir_measures.parse_trec_measure is trec and ir_measures.util.parse_trec_measure is util_trec
    grammar.uninstall_parsers()  # no-op
    assert ir_measures.parse_measure is pm


def test_patched_parsers(parser_state):
    original_trec = parser_state[2]
    grammar.install_parsers()
    # trec names keep their meaning
    assert ir_measures.parse_trec_measure("map") == [ir_measures.AP]
    assert ir_measures.parse_trec_measure("ndcg_cut_10") == [ir_measures.nDCG @ 10]
    assert ir_measures.parse_trec_measure("P") == original_trec("P") and len(original_trec("P")) == 9
    assert ir_measures.parse_trec_measure("infAP") == [ir_measures.measures.registry["infAP"]]
    assert ir_measures.parse_trec_measure("official") == original_trec("official")
    # the nickname expansion catches ValueError for unsupported sub-names: ours must be one too
    assert ir_measures.parse_trec_measure("all_trec") == original_trec("all_trec")
    # strings the original rejects reach our grammar
    assert ir_measures.parse_measure("nDCG(dcg=exp-log2)@10") == ir_measures.nDCG(dcg="exp-log2") @ 10
    assert ir_measures.util.parse_measure("AP(rel=-1)") == ir_measures.AP(rel=-1)
    assert ir_measures.parse_trec_measure("nDCG(dcg=exp-log2)@10") == [ir_measures.nDCG(dcg="exp-log2") @ 10]
    assert ir_measures.parse_trec_measure("nDCG@10") == [ir_measures.nDCG @ 10]
    assert ir_measures.parse_measure("AP@10") == ir_measures.AP @ 10
    # when both fail, our error is raised, chained from the original one
    with pytest.raises(MeasureSyntaxError) as err:
        ir_measures.parse_measure("nDCG(dcg=exp-log2")
    assert err.value.__cause__ is not None
    with pytest.raises(NameError) as err:
        ir_measures.parse_measure("NoSuchMeasure(a=pool+run)")
    assert "NoSuchMeasure" in str(err.value)
    with pytest.raises(ValueError):
        ir_measures.parse_trec_measure("NoSuchMeasure(a=pool+run)")


def test_wrappers_call_the_original_first(parser_state):
    calls = []
    sentinel_measure = ir_measures.AP @ 3

    def stub_parse_measure(measure):
        calls.append(("measure", measure))
        if measure == "stub":
            return sentinel_measure
        raise RuntimeError("stub rejects")

    def stub_parse_trec_measure(measure):
        calls.append(("trec", measure))
        if measure == "stub":
            return [sentinel_measure]
        raise KeyError("stub rejects")

    saved = {
        (m, a): getattr(m, a) for m in (ir_measures, ir_measures.util) for a in ("parse_measure", "parse_trec_measure")
    }
    try:
        for module in (ir_measures, ir_measures.util):
            module.parse_measure = stub_parse_measure
            module.parse_trec_measure = stub_parse_trec_measure
        grammar.install_parsers()
        assert ir_measures.parse_measure("stub") is sentinel_measure
        assert ir_measures.parse_trec_measure("stub") == [sentinel_measure]
        assert ir_measures.parse_measure("AP@5") == ir_measures.AP @ 5
        assert ir_measures.util.parse_trec_measure("AP@5") == [ir_measures.AP @ 5]
        assert calls == [("measure", "stub"), ("trec", "stub"), ("measure", "AP@5"), ("trec", "AP@5")]
        grammar.uninstall_parsers()
        assert ir_measures.parse_measure is stub_parse_measure
        assert ir_measures.util.parse_trec_measure is stub_parse_trec_measure
    finally:
        grammar.uninstall_parsers()
        for (module, attr), func in saved.items():
            setattr(module, attr, func)


# ---------------------------------------------------------------------------------------------------------
# round trip over this package's measures
# ---------------------------------------------------------------------------------------------------------
def _all_measures():
    try:
        import ir_incomplete  # noqa: F401  (registers the measures)
        from ir_incomplete.measures import ALL_MEASURES
    except (ImportError, AttributeError) as exc:
        pytest.skip(f"ir_incomplete.measures.ALL_MEASURES is not available yet: {exc}")
    if not ALL_MEASURES:
        pytest.skip("ir_incomplete.measures.ALL_MEASURES is empty")
    return list(ALL_MEASURES)


def _distribution():
    return (
        st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=4)
        .filter(lambda xs: math.fsum(xs) > 1e-9)
        .map(lambda xs: tuple(x / math.fsum(xs) for x in xs))
        .filter(lambda xs: abs(math.fsum(xs) - 1.0) <= 1e-9)
    )


def param_strategy(name, spec, at_param):
    """A hypothesis strategy of valid values for one ``Param`` of one of our measures."""
    not_provided = grammar._not_provided()
    if name == at_param and (spec.choices is not_provided or spec.choices is None):
        base = st.integers(min_value=1, max_value=1000)
    elif getattr(spec, "kind", "scalar") == "distribution":
        base = _distribution()
    elif spec.choices is not not_provided and spec.choices is not None:
        base = st.sampled_from(list(spec.choices))
    elif spec.dtype is bool:
        base = st.booleans()
    elif spec.dtype is float:
        minimum, maximum = getattr(spec, "minimum", None), getattr(spec, "maximum", None)
        base = st.floats(
            min_value=None if minimum is None else float(minimum),
            max_value=None if maximum is None else float(maximum),
            exclude_min=minimum is not None and not getattr(spec, "min_inclusive", True),
            exclude_max=maximum is not None and not getattr(spec, "max_inclusive", True),
            allow_nan=False,
            allow_infinity=False,
        )
    elif spec.dtype is int:
        minimum, maximum = getattr(spec, "minimum", None), getattr(spec, "maximum", None)
        low = -10000 if minimum is None else math.ceil(minimum)
        if minimum is not None and low == minimum and not getattr(spec, "min_inclusive", True):
            low += 1
        high = max(low, 10000) if maximum is None else math.floor(maximum)
        if maximum is not None and high == maximum and not getattr(spec, "max_inclusive", True):
            high -= 1
        base = st.integers(min_value=low, max_value=high)
    elif spec.dtype is str:
        base = bare_words
    else:
        raise AssertionError(f"no strategy for parameter {name!r} of dtype {spec.dtype!r}")
    if getattr(spec, "allow_none", False):
        base = st.one_of(st.none(), base)
    return base


def measure_params_strategy(measure):
    """Random valid keyword arguments of ``measure``: required parameters always, the others sometimes.
    A predictions file is only valid with ``prior=predicted`` (in the measures that have a prior), which is
    then set; a control variate of labels (design-based measures) needs a predictions file, which is then
    named."""
    required, optional = {}, {}
    for name, spec in measure.SUPPORTED_PARAMS.items():
        strategy = param_strategy(name, spec, measure.AT_PARAM)
        (required if getattr(spec, "required", False) else optional)[name] = strategy

    def consistent(params):
        if params.get("predictions") is not None and "prior" in measure.SUPPORTED_PARAMS:
            params = {**params, "prior": "predicted"}
        if "labels" in str(params.get("control")) and params.get("predictions") is None:
            params = {**params, "predictions": "labels.tsv"}
        return params

    return st.fixed_dictionaries(required, optional=optional).map(consistent)


@given(data=st.data())
def test_param_strategy_sanity(data):
    from ir_incomplete.measures.base import Param

    spec = Param(int, minimum=0, min_inclusive=False)
    value = data.draw(param_strategy("x", spec, "cutoff"))
    assert value >= 1 and spec.coerce("X", "x", value) == value
    spec = Param(float, minimum=0.0, maximum=1.0, max_inclusive=False)
    value = data.draw(param_strategy("y", spec, "cutoff"))
    assert 0.0 <= value < 1.0 and spec.coerce("X", "y", value) == value
    spec = Param(float, kind="distribution")
    dist = data.draw(param_strategy("g", spec, "cutoff"))
    assert abs(math.fsum(dist) - 1) < 1e-9 and all(x >= 0 for x in dist)
    assert spec.coerce("X", "g", dist) == dist
    assert 1 <= data.draw(param_strategy("cutoff", Param(int), "cutoff")) <= 1000


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_our_measures_round_trip(data):
    measures = _all_measures()
    measure = data.draw(st.sampled_from(measures), label="measure")
    params = data.draw(measure_params_strategy(measure), label="params")
    made = measure(**params)
    text = repr(made)
    assert " " not in text
    assert parse(text) == made
    assert repr(parse(text)) == text
    assert parse_parts(text)[0] == measure.NAME


def test_our_measures_are_registered_under_their_names():
    for measure in _all_measures():
        required = [n for n, spec in measure.SUPPORTED_PARAMS.items() if spec.required]
        if required:  # the registered object is a template: its bare name is incomplete
            with pytest.raises(ValueError, match=required[0]):
                parse(repr(measure))
        else:
            assert parse(repr(measure)) == measure
