"""Measures computed by ``ir_measures``' other providers: a measure they cannot compute is refused when it
is read (not with an ``AssertionError`` while computing), and a provider's failure is one clear line
naming the measure, the provider and the reason, through every front door."""

from __future__ import annotations

import shutil

import ir_measures
import pandas as pd
import pytest

import ir_incomplete
from ir_incomplete import evaluate
from ir_incomplete.cli import main
from ir_incomplete.grammar import check_measure, parse
from ir_incomplete.other_providers import ProviderError, provider_groups


def qrels_frame(prefix="q"):
    return pd.DataFrame(
        {
            "query_id": [f"{prefix}1", f"{prefix}1", f"{prefix}1", f"{prefix}2", f"{prefix}2"],
            "doc_id": ["a", "b", "c", "a", "d"],
            "relevance": [1, 0, -1, 2, 0],
        }
    )


def run_frame(prefix="q"):
    return pd.DataFrame(
        {
            "query_id": [f"{prefix}1", f"{prefix}1", f"{prefix}1", f"{prefix}2", f"{prefix}2"],
            "doc_id": ["a", "b", "x", "d", "a"],
            "score": [3.0, 2.0, 1.0, 5.0, 4.0],
        }
    )


def write_files(tmp_path, prefix="q", qrels=None):
    qrels = qrels_frame(prefix) if qrels is None else qrels
    run = run_frame(prefix)
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels.itertuples(index=False)))
    run_path.write_text(
        "".join(f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(run.itertuples(index=False), start=1))
    )
    return str(qrels_path), str(run_path)


def one_error_line(err, prog="ir_incomplete"):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{prog}: error: "), err
    return lines[0]


# ---------------------------------------------------------------------------------------------------
# required parameters of ir_measures' measures
# ---------------------------------------------------------------------------------------------------
MISSING = [
    ("SDCG@10", "SDCG", ["max_rel"]),
    ("INST(T=1)", "INST", ["max_rel"]),
    ("BPM(T=1,min_rel=1)", "BPM", ["cutoff", "max_rel"]),
    ("NERR8(max_rel=3)", "NERR8", ["cutoff"]),
    ("P", "P", ["cutoff"]),
    ("IPrec(rel=2)", "IPrec", ["recall"]),
]


@pytest.mark.parametrize("text, name, missing", MISSING)
@pytest.mark.parametrize("parser", [parse, ir_measures.parse_measure], ids=["grammar", "ir_measures"])
def test_missing_required_parameter_is_refused_when_read(parser, text, name, missing):
    with pytest.raises(ValueError) as err:
        parser(text)
    message = str(err.value)
    assert message.startswith(f"{name}: missing required parameter"), message
    for param in missing:
        assert f" {param} (" in message, (param, message)
    assert "\n" not in message


def test_missing_parameter_message_says_what_is_needed():
    with pytest.raises(ValueError) as err:
        parse("SDCG@10")
    assert str(err.value) == (
        "SDCG: missing required parameter max_rel (maximum relevance score; an integer); "
        "SDCG needs cutoff (written @k) and max_rel"
    )
    with pytest.raises(ValueError) as err:
        parse("P")
    assert str(err.value) == "P: missing required parameter cutoff (ranking cutoff threshold; an integer, written P@k)"


@pytest.mark.parametrize("text, name, missing", MISSING)
def test_evaluate_refuses_strings_and_objects(text, name, missing):
    with pytest.raises(ValueError, match=f"{name}: missing required parameter.* {missing[0]} \\("):
        evaluate(run_frame(), qrels_frame(), ["AP", text])
    built = ir_measures.parse_measure.__wrapped__(text)  # ir_measures' own parser accepts it
    with pytest.raises(ValueError, match=f"missing required parameter.* {missing[0]} \\(") as err:
        evaluate(run_frame(), qrels_frame(), [built])
    assert str(err.value).startswith(repr(built))


def test_objects_get_the_float_ir_measures_wants():
    """``INST(T=2,max_rel=3)`` built in Python holds the int 2, which ir_measures' providers refuse; it is
    read as ``T=2.0``, as the grammar reads the string."""
    built = ir_measures.INST(T=2, max_rel=3)
    checked = check_measure(built)
    assert checked.params == {"T": 2.0, "max_rel": 3} and type(checked.params["T"]) is float
    assert checked.validate_params() is None  # no AssertionError any more
    assert built.params == {"T": 2, "max_rel": 3}  # the caller's object is unchanged
    assert parse("INST(T=2,max_rel=3)") == checked
    assert type(ir_measures.parse_measure("INST(T=2,max_rel=3)").params["T"]) is float
    assert check_measure(ir_measures.P @ 5) is not None
    plain = ir_measures.nDCG @ 10
    assert check_measure(plain) is plain


def test_unknown_parameter_from_ir_measures_parser_is_refused():
    with pytest.raises(ValueError, match="AP has no parameter 'foo'; valid parameters: cutoff"):
        ir_measures.parse_measure("AP(foo=1)")


@pytest.mark.parametrize("text, name, missing", MISSING[:3])
def test_cli_exits_2_naming_measure_and_parameter(tmp_path, capsys, text, name, missing):
    qrels, run = write_files(tmp_path, prefix="")
    code = main([qrels, run, "AP", text])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert f"measure {text!r}: {name}: missing required parameter" in line
    assert all(f" {p} (" in line for p in missing)


def test_cli_reads_bare_P_as_trec_eval_family(tmp_path, capsys):
    """``P`` alone cannot be computed; the command line reads it as trec_eval's P (P@5 … P@1000)."""
    qrels, run = write_files(tmp_path, prefix="")
    code = main([qrels, run, "P"])
    out, err = capsys.readouterr()
    assert code == 0
    assert err == "ir_incomplete: note: reading trec_eval's P as P@5 P@10 P@15 P@20 P@30 P@100 P@200 P@500 P@1000\n"
    assert [line.split("\t")[0] for line in out.splitlines()][:2] == ["P@5", "P@10"]


def test_robustness_cli_exits_2(tmp_path, capsys):
    from ir_incomplete.cli.robustness import main as robustness_main

    qrels, _ = write_files(tmp_path, prefix="")
    runs = tmp_path / "runs"
    runs.mkdir()
    for i in range(3):
        (runs / f"r{i}").write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n2 Q0 d 1 5 r\n")
    args = ["--qrels", qrels, "--runs", str(runs), "--measures", "AP", "SDCG@10", "--levels", "0.5"]
    args += ["--repeats", "1", "--out", str(tmp_path / "out"), "--no-progress", "--no-plots"]
    assert robustness_main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "SDCG: missing required parameter max_rel" in err


# ---------------------------------------------------------------------------------------------------
# failures of other providers
# ---------------------------------------------------------------------------------------------------
needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="the gdeval provider needs perl")


@needs_perl
def test_gdeval_non_numeric_query_ids():
    with pytest.raises(ProviderError) as err:
        evaluate(run_frame(), qrels_frame(), ["AP", "ERR@10"])
    assert str(err.value) == (
        "ERR@10: ir_measures' provider 'gdeval' failed: gdeval requires numeric query ids (digits only); "
        "got 'q1' in the qrels"
    )
    assert err.value.provider == "gdeval" and [repr(m) for m in err.value.measures] == ["ERR@10"]
    assert isinstance(err.value, ValueError)


@needs_perl
def test_gdeval_run_query_ids_and_grades(capfd):
    qrels = qrels_frame(prefix="")
    run = pd.concat([run_frame(prefix=""), pd.DataFrame({"query_id": ["x9"], "doc_id": ["z"], "score": [0.5]})])
    with pytest.raises(ProviderError, match="got 'x9' in the run"):
        evaluate(run, qrels, "ERR@10")
    high = qrels.assign(relevance=[1, 0, -1, 5, 0])
    expected = "gdeval allows relevance grades up to 4; got 5 \\(query '2', document 'a'\\)"
    with pytest.raises(ProviderError, match=expected):
        evaluate(run_frame(prefix=""), high, "ERR@10")
    # gdeval.pl reads 'topic-1' as '1': its values would be dropped and 'topic-1' get 0, silently
    with pytest.raises(ProviderError, match="got 'topic-1' in the qrels \\(gdeval.pl would report it as '1'"):
        evaluate(run_frame(prefix="topic-"), qrels_frame(prefix="topic-"), "ERR@10")
    assert capfd.readouterr().err == ""  # refused before gdeval.pl ran (it writes its own message to stderr)
    four = qrels.assign(relevance=[1, 0, -1, 4, 0])  # what gdeval.pl accepts is computed, as ir_measures does
    ours = evaluate(run_frame(prefix=""), four, "ERR@10", per_query=False)["value"].iloc[0]
    theirs = ir_measures.calc_aggregate([ir_measures.ERR @ 10], four, run_frame(prefix=""))[ir_measures.ERR @ 10]
    assert ours == pytest.approx(theirs, abs=1e-12) and ours > 0


@needs_perl
def test_cli_gdeval_error_is_one_line_exit_2(tmp_path, capfd):
    qrels, run = write_files(tmp_path)
    code = main([qrels, run, "AP", "ERR@10"])
    out, err = capfd.readouterr()
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert "ERR@10" in line and "'gdeval'" in line and "numeric query ids" in line and "'q1'" in line


def test_any_provider_exception_becomes_one_line(monkeypatch, tmp_path, capsys):
    provider = ir_measures.providers.registry["pytrec_eval"]
    evaluator_type = type(provider.evaluator([ir_measures.P @ 5], {"1": {"a": 1}}))

    def broken(self, run):
        raise RuntimeError("boom\nsecond line")
        yield  # a generator, as the real one

    monkeypatch.setattr(evaluator_type, "_iter_calc", broken)
    with pytest.raises(ProviderError) as err:
        evaluate(run_frame(), qrels_frame(), ["AP", ir_measures.Success @ 1])
    expected = "Success@1: ir_measures' provider 'pytrec_eval' failed: RuntimeError: boom second line"
    assert str(err.value) == expected
    assert isinstance(err.value.__cause__, RuntimeError)
    qrels, run = write_files(tmp_path)
    assert main([qrels, run, "Success@1"]) == 2
    assert "provider 'pytrec_eval' failed: RuntimeError: boom" in one_error_line(capsys.readouterr().err)


def test_provider_groups_follow_the_default_pipeline():
    err, p5 = parse("ERR@10"), ir_measures.Success @ 1
    groups = [(provider.NAME, measures) for provider, measures in provider_groups([err, p5, err])]
    assert groups == [("pytrec_eval", [p5]), ("gdeval", [err])]


def test_unsupported_measure_names_the_missing_provider():
    cwl = ir_incomplete.parse("SDCG(max_rel=2)@10")
    available = {p.NAME for p in ir_measures.DefaultPipeline.providers if p.is_available()}
    if "cwl_eval" in available:
        pytest.skip("cwl_eval is installed here")
    expected = r"no available ir_measures provider computes SDCG\(max_rel=2\)@10; .*cwl_eval"
    with pytest.raises(ValueError, match=expected):
        evaluate(run_frame(), qrels_frame(), cwl)
