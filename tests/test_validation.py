"""Bad input gets a clear error that names the problem (also under ``python -O``); inputs stay unchanged."""

import copy
import os
import subprocess
import sys
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest

import ir_incomplete
from ir_incomplete import evaluate
from ir_incomplete.grammar import parse

REPO_ROOT = Path(__file__).resolve().parents[1]


def qrels_frame():
    return pd.DataFrame(
        {"query_id": ["q1", "q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "c", "a", "d"], "relevance": [1, 0, -1, 2, 0]}
    )


def run_frame():
    return pd.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q2", "q2", "q2"],
            "doc_id": ["a", "b", "x", "d", "a", "y"],
            "score": [3.0, 2.0, 1.0, 5.0, 4.0, 4.0],
        }
    )


def _frames_for_all_doors():
    """Callables that evaluate (run, qrels) with an ``ir_incomplete`` measure through every front door."""
    smoothed = ir_incomplete.infAP(c=1.5)
    return {
        "evaluate": lambda run, qrels: evaluate(run, qrels, ["infAP(c=1.5)"]),
        "ir_measures": lambda run, qrels: ir_measures.calc_aggregate([smoothed], qrels, run),
        "provider": lambda run, qrels: ir_incomplete.provider.calc_aggregate([smoothed], qrels, run),
    }


DOORS = _frames_for_all_doors()


# ---------------------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("door", DOORS)
def test_run_missing_score_column(door):
    run = run_frame().drop(columns="score").assign(rank=1)
    with pytest.raises(ValueError) as info:
        DOORS[door](run, qrels_frame())
    message = str(info.value)
    assert "'score'" in message
    assert "query_id" in message and "doc_id" in message and "rank" in message  # the columns found
    assert "run" in message


def test_run_missing_doc_column_pyterrier_names():
    run = run_frame().rename(columns={"query_id": "qid", "doc_id": "id"})
    with pytest.raises(ValueError) as info:
        evaluate(run, qrels_frame(), "infAP")
    assert "doc_id" in str(info.value) and "'id'" in str(info.value) and "docno" in str(info.value)


def test_qrels_missing_relevance_column():
    qrels = qrels_frame().rename(columns={"relevance": "grade"})
    with pytest.raises(ValueError) as info:
        evaluate(run_frame(), qrels, "infAP")
    message = str(info.value)
    assert "qrels" in message and "'relevance'" in message and "grade" in message


@pytest.mark.parametrize("door", DOORS)
def test_nan_score_names_the_row(door):
    run = run_frame()
    run.loc[4, "score"] = np.nan
    with pytest.raises(ValueError) as info:
        DOORS[door](run, qrels_frame())
    message = str(info.value)
    assert "score" in message and "'q2'" in message and "'a'" in message


def test_infinite_score_is_refused():
    run = run_frame()
    run.loc[0, "score"] = np.inf
    with pytest.raises(ValueError, match=r"score.*'q1'.*'a'"):
        evaluate(run, qrels_frame(), "infAP")


def test_non_numeric_score_string():
    run = run_frame().astype({"score": object})
    run.loc[1, "score"] = "high"
    with pytest.raises(ValueError) as info:
        evaluate(run, qrels_frame(), "infAP")
    message = str(info.value)
    assert "'high'" in message and "'q1'" in message and "'b'" in message


def test_non_numeric_score_in_string_dtype_column():
    run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": ["1.0", "high"]})
    with pytest.raises(ValueError, match=r"'high'.*'q1'.*'b'"):
        evaluate(run, qrels_frame(), "infAP")


def test_non_numeric_score_in_dict_run():
    run = {"q1": {"a": 1.0, "b": "x"}}
    with pytest.raises(ValueError, match=r"'x'.*'q1'.*'b'"):
        evaluate(run, qrels_frame(), "infAP")


@pytest.mark.parametrize("door", DOORS)
def test_duplicate_document_in_run(door):
    run = pd.concat([run_frame(), run_frame().iloc[[3]].assign(score=0.5)], ignore_index=True)
    with pytest.raises(ValueError) as info:
        DOORS[door](run, qrels_frame())
    message = str(info.value)
    assert "'q2'" in message and "'d'" in message


# ---------------------------------------------------------------------------------------------------------
# the qrels
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("door", DOORS)
def test_non_integer_grade(door):
    qrels = qrels_frame().astype({"relevance": float})
    qrels.loc[3, "relevance"] = 1.5
    with pytest.raises(ValueError) as info:
        DOORS[door](run_frame(), qrels)
    message = str(info.value)
    assert "1.5" in message and "'q2'" in message and "'a'" in message and "integer" in message


def test_integral_float_grades_are_fine():
    qrels = qrels_frame().astype({"relevance": float})
    as_int = evaluate(run_frame(), qrels_frame(), "infAP")
    as_float = evaluate(run_frame(), qrels, "infAP")
    pd.testing.assert_frame_equal(as_int, as_float)


def test_non_numeric_grade():
    qrels = qrels_frame().astype({"relevance": object})
    qrels.loc[0, "relevance"] = "yes"
    with pytest.raises(ValueError, match=r"'yes'.*'q1'.*'a'"):
        evaluate(run_frame(), qrels, "infAP")


def test_non_numeric_grade_in_dict_qrels():
    qrels = {"q1": {"a": 1, "b": "yes"}}
    with pytest.raises(ValueError, match=r"'yes'.*'q1'.*'b'"):
        evaluate(run_frame(), qrels, "infAP")


def test_nan_grade():
    qrels = qrels_frame().astype({"relevance": float})
    qrels.loc[1, "relevance"] = np.nan
    with pytest.raises(ValueError, match=r"'q1'.*'b'"):
        evaluate(run_frame(), qrels, "infAP")


@pytest.mark.parametrize("door", DOORS)
def test_duplicate_judgment_in_qrels(door):
    qrels = pd.concat([qrels_frame(), qrels_frame().iloc[[1]].assign(relevance=1)], ignore_index=True)
    with pytest.raises(ValueError) as info:
        DOORS[door](run_frame(), qrels)
    message = str(info.value)
    assert "'q1'" in message and "'b'" in message


# ---------------------------------------------------------------------------------------------------------
# measures and options
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "parser", [parse, ir_measures.parse_measure, lambda s: evaluate(run_frame(), qrels_frame(), [s])]
)
def test_unknown_measure(parser):
    with pytest.raises(NameError) as info:
        parser("infAPP(c=1.5)")
    assert "'infAPP'" in str(info.value)
    assert "infAP" in str(info.value).replace("'infAPP'", "")  # the valid name is suggested/listed


@pytest.mark.parametrize(
    "make",
    [
        lambda: parse("infAP(cc=1)"),
        lambda: ir_measures.parse_measure("infAP(cc=1)"),
        lambda: ir_incomplete.infAP(cc=1),
        lambda: ir_measures.infAP(cc=1),
    ],
)
def test_unknown_parameter(make):
    with pytest.raises(ValueError) as info:
        make()
    message = str(info.value)
    assert "'cc'" in message
    valid = message.split("valid parameters:")[-1]
    assert "valid parameters" in message
    assert {"rel", "c", "eps", "variant", "cutoff"} <= {w.strip(" ,()@k") for w in valid.split(",")}


@pytest.mark.parametrize(
    "text,param,allowed",
    [
        ("infAP(c=0)", "c", ">= 1e-300"),
        ("infAP(c=-1)", "c", ">= 1e-300"),
        ("infAP(c=-0.5)", "c", ">= 1e-300"),
        ("infAP(eps=0)", "eps", "> 0"),
        ("infAP(eps=-1e-5)", "eps", "> 0"),
        ("infAP(variant=foo)", "variant", "pool, uniform"),
        ("infAP(c=pool)", "c", "number"),
        ("infAP(rel=1.5)", "rel", "integer"),
        ("infAP@0", "cutoff", ">= 1"),
        ("infAP@-3", "cutoff", ">= 1"),
    ],
)
def test_bad_parameter_values(text, param, allowed):
    for make in (parse, ir_measures.parse_measure):
        with pytest.raises(ValueError) as info:
            make(text)
        message = str(info.value)
        assert f"'{param}'" in message, message
        assert allowed in message, message


def test_bad_parameter_values_on_objects():
    for kwargs, param in [
        ({"c": 0}, "c"),
        ({"c": -1}, "c"),
        ({"eps": 0.0}, "eps"),
        ({"variant": "foo"}, "variant"),
        ({"cutoff": 0}, "cutoff"),
    ]:
        with pytest.raises(ValueError, match=f"'{param}'"):
            ir_incomplete.infAP(**kwargs)
    with pytest.raises(ValueError, match="'cutoff'"):
        ir_incomplete.infAP @ 0


@pytest.mark.parametrize("door", ["evaluate", "provider"])
def test_bad_negative_policy(door):
    with pytest.raises(ValueError) as info:
        if door == "evaluate":
            evaluate(run_frame(), qrels_frame(), "infAP", negative="ignore")
        else:
            ir_incomplete.IncompleteProvider(negative="ignore").calc_aggregate(
                [ir_incomplete.infAP], qrels_frame(), run_frame()
            )
    message = str(info.value)
    assert "negative" in message and "'ignore'" in message
    assert "pooled_unjudged" in message and "zero" in message


def test_bad_score_precision():
    with pytest.raises(ValueError) as info:
        evaluate(run_frame(), qrels_frame(), "infAP", score_precision="half")
    message = str(info.value)
    assert "score_precision" in message and "'half'" in message
    assert "float32" in message and "float64" in message


def test_not_a_measure():
    with pytest.raises(ValueError, match="42"):
        evaluate(run_frame(), qrels_frame(), [42])
    with pytest.raises(ValueError):
        evaluate(run_frame(), qrels_frame(), [])


# ---------------------------------------------------------------------------------------------------------
# python -O: validation does not rely on assert
# ---------------------------------------------------------------------------------------------------------
OPTIMIZED_CHECKS = r"""
assert False, "this script must run under python -O"
"""

OPTIMIZED_SCRIPT = r"""
import numpy as np, pandas as pd
import ir_measures, ir_incomplete
from ir_incomplete import evaluate

qrels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, 0]})
run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})

def expect(exc, needle, fn):
    try:
        fn()
    except exc as e:
        if needle not in str(e):
            raise SystemExit(f"message {e!s} does not mention {needle!r}")
        return
    raise SystemExit(f"no {exc.__name__} mentioning {needle!r}")

expect(ValueError, "'c'", lambda: ir_incomplete.infAP(c=0))
expect(ValueError, "'c'", lambda: ir_measures.parse_measure("infAP(c=-1)"))
expect(ValueError, "'cc'", lambda: ir_incomplete.parse("infAP(cc=1)"))
expect(NameError, "'infAPP'", lambda: ir_incomplete.parse("infAPP"))
expect(ValueError, "'score'", lambda: evaluate(run.drop(columns="score"), qrels, "infAP"))
expect(ValueError, "'b'", lambda: evaluate(run.assign(score=[1.0, np.nan]), qrels, "infAP"))
expect(ValueError, "'b'", lambda: evaluate(pd.concat([run, run.iloc[[1]]]), qrels, "infAP(c=1.5)"))
expect(ValueError, "1.5", lambda: evaluate(run, qrels.assign(relevance=[1.5, 0]), "infAP"))
expect(ValueError, "'a'", lambda: ir_measures.calc_aggregate([ir_incomplete.infAP(c=1.5)],
                                                             pd.concat([qrels, qrels.iloc[[0]]]), run))
expect(ValueError, "zero", lambda: evaluate(run, qrels, "infAP", negative="bogus"))
# registering does not depend on assert either: the measure is ours, plain infAP is still the built-in
assert ir_measures.measures.registry["infAP"] is ir_incomplete.infAP  # (skipped under -O)
if ir_measures.measures.registry["infAP"] is not ir_incomplete.infAP:
    raise SystemExit("registry entry lost under -O")
print("ok")
"""


def test_validation_under_python_O():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    probe = subprocess.run(
        [sys.executable, "-O", "-c", OPTIMIZED_CHECKS], capture_output=True, text=True, env=env, timeout=60
    )
    assert probe.returncode == 0, "python -O did not strip assert statements"
    done = subprocess.run(
        [sys.executable, "-O", "-c", OPTIMIZED_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(REPO_ROOT),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert done.stdout.strip() == "ok"


# ---------------------------------------------------------------------------------------------------------
# inputs are never modified
# ---------------------------------------------------------------------------------------------------------
def _pyterrier_names(run, qrels):
    return (
        run.rename(columns={"query_id": "qid", "doc_id": "docno"}),
        qrels.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"}),
    )


def _shuffled_with_odd_index(run, qrels):
    """Out of ranking order, int query ids, a non-default index and an extra column."""
    run = run.sample(frac=1.0, random_state=3).set_index(pd.Index([10, 7, 3, 99, 5, 1]))
    run = run.assign(query_id=run["query_id"].str[1:].astype(int), tag="x")
    qrels = qrels.assign(query_id=qrels["query_id"].str[1:].astype(int), iteration=0)
    return run, qrels


@pytest.mark.parametrize("variant", ["ir_measures_names", "pyterrier_names", "shuffled"])
def test_dataframes_unchanged(variant):
    run, qrels = run_frame(), qrels_frame()
    if variant == "pyterrier_names":
        run, qrels = _pyterrier_names(run, qrels)
    elif variant == "shuffled":
        run, qrels = _shuffled_with_odd_index(run, qrels)
    run_copy, qrels_copy = run.copy(deep=True), qrels.copy(deep=True)
    measures = ["infAP", "infAP(c=1.5)@2", "infAP(variant=uniform)"]

    result = evaluate(run, qrels, measures)
    assert len(result) == 2 * 3
    evaluate({"a": run, "b": run}, qrels, measures, per_query=False, negative="zero")
    pd.testing.assert_frame_equal(run, run_copy)
    pd.testing.assert_frame_equal(qrels, qrels_copy)

    if variant != "pyterrier_names":  # ir_measures itself reads ir_measures' column names
        # (only our measures through the pipeline: pytrec_eval itself refuses int query ids)
        parsed = [ir_measures.parse_measure(m) for m in measures if m != "infAP"]
        ir_measures.calc_aggregate(parsed, qrels, run)
        list(ir_measures.iter_calc(parsed, qrels, run))
        ir_incomplete.provider.calc_aggregate([ir_incomplete.infAP] + parsed, qrels, run)
        pd.testing.assert_frame_equal(run, run_copy)
        pd.testing.assert_frame_equal(qrels, qrels_copy)


def test_dataframe_with_run_column_unchanged():
    runs = pd.concat(
        [run_frame().assign(run="a"), run_frame().assign(run="b", score=lambda f: -f["score"])], ignore_index=True
    )
    runs_copy = runs.copy(deep=True)
    qrels = qrels_frame()
    qrels_copy = qrels.copy(deep=True)
    evaluate(runs, qrels, ["infAP(c=1.5)"])
    pd.testing.assert_frame_equal(runs, runs_copy)
    pd.testing.assert_frame_equal(qrels, qrels_copy)


def test_dicts_unchanged():
    run = {"q1": {"a": 3.0, "b": 2.0, "x": 1.0}, "q2": {"d": 5.0, "a": 4.0, "y": 4.0}}
    qrels = {"q1": {"a": 1, "b": 0, "c": -1}, "q2": {"a": 2, "d": 0}}
    run_copy, qrels_copy = copy.deepcopy(run), copy.deepcopy(qrels)
    evaluate(run, qrels, ["infAP", "infAP(c=1.5)@2"], negative="zero")
    evaluate({"r": run}, qrels, ["infAP(variant=uniform)"])
    m = ir_measures.parse_measure("infAP(c=1.5)")
    ir_measures.calc_aggregate([m, ir_measures.infAP], qrels, run)
    ir_incomplete.provider.calc_aggregate([ir_incomplete.infAP], qrels, run)
    assert run == run_copy and qrels == qrels_copy
    assert list(run["q2"]) == ["d", "a", "y"]  # key order too
