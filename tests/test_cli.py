"""The ``ir_incomplete`` command line: evaluation (one and several runs), options, errors, subcommands,
and parity with the ``ir_measures`` command line."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import types

import numpy as np
import pytest
from conftest import spec_topic

import ir_incomplete
from ir_incomplete import cli
from ir_incomplete.cli import main
from ir_incomplete.measures import ALL_MEASURES

INFAP_A = 0.6458333333333334
INFAP_UNIFORM_A = 0.7208333333333333
AP_A = 0.5916666666666667


# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------
def write_qrels(path, qrels, gz=False):
    text = "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    _write(path, text, gz)
    return str(path)


def write_run(path, run, gz=False, tag="tag"):
    lines = []
    for q, docs in run.items():
        for rank, (d, s) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), start=1):
            lines.append(f"{q} Q0 {d} {rank} {s!r} {tag}\n")
    _write(path, "".join(lines), gz)
    return str(path)


def _write(path, text, gz):
    if gz:
        with gzip.open(path, "wt") as handle:
            handle.write(text)
    else:
        with open(path, "w") as handle:
            handle.write(text)


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def rows(out):
    return [line.split("\t") for line in out.splitlines()]


def one_error_line(err):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ir_incomplete: error: "), err
    assert "Traceback" not in err
    return lines[0]


def synthetic(seed=7, n_topics=6, depth=25):
    """Graded qrels with negative grades, a qrels topic the run misses, a run topic the qrels miss,
    and score ties (so the tie-breaking order matters)."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for t in range(n_topics):
        q = f"t{t}"
        docs = [f"D{t}-{i:03d}" for i in range(40)]
        judged = rng.choice(40, size=22, replace=False)
        qrels[q] = {docs[i]: int(rng.choice([-1, 0, 0, 1, 2])) for i in judged}
        qrels[q][docs[judged[0]]] = 1  # every topic has a relevant document
        if t == n_topics - 1:
            continue  # in the qrels, absent from the run
        retrieved = rng.choice(40, size=depth, replace=False)
        scores = np.round(rng.normal(size=depth), 1)  # rounding makes ties
        run[q] = {docs[i]: float(s) for i, s in zip(retrieved, scores, strict=True)}
    run["unjudged-topic"] = {"x": 1.0, "y": 0.5}
    return qrels, run


@pytest.fixture
def topic_a(spec, tmp_path):
    run, qrels = spec_topic(spec, "A")
    return write_qrels(tmp_path / "qrels.A", qrels), write_run(tmp_path / "run.A", run)


@pytest.fixture
def synth(tmp_path):
    qrels, run = synthetic()
    _, run2 = synthetic(seed=8)
    return {
        "qrels": write_qrels(tmp_path / "qrels.txt", qrels),
        "run": write_run(tmp_path / "sys1.run", run),
        "run2": write_run(tmp_path / "sys2.run", run2),
        "run_gz": write_run(tmp_path / "sys1gz.run.gz", run, gz=True),
        "qrels_dict": qrels,
        "run_dict": run,
        "run2_dict": run2,
    }


# ---------------------------------------------------------------------------------------------------
# one run: values and formats
# ---------------------------------------------------------------------------------------------------
def test_topic_a_infap_aggregate(capsys, topic_a):
    qrels, run = topic_a
    code, out, err = run_cli(capsys, qrels, run, "infAP", "infAP(variant=uniform)", "AP")
    assert code == 0 and err == ""
    assert out == f"infAP\t{INFAP_A:.4f}\ninfAP(variant=uniform)\t{INFAP_UNIFORM_A:.4f}\nAP\t{AP_A:.4f}\n"


def test_topic_a_places(capsys, topic_a):
    qrels, run = topic_a
    code, out, _ = run_cli(capsys, qrels, run, "infAP infAP(variant=uniform)", "-p", "6")
    assert code == 0
    assert out == "infAP\t0.645833\ninfAP(variant=uniform)\t0.720833\n"
    code, out, _ = run_cli(capsys, qrels, run, "infAP", "-p", "-1")
    assert code == 0
    assert rows(out) == [["infAP", repr(INFAP_A)]]
    code, out, _ = run_cli(capsys, qrels, run, "infAP", "-p", "0")
    assert rows(out) == [["infAP", "1"]]


def test_topic_a_by_query(capsys, topic_a):
    qrels, run = topic_a
    code, out, _ = run_cli(capsys, "-q", qrels, run, "infAP(variant=uniform)", "AP")
    assert code == 0
    assert rows(out) == [
        ["q", "infAP(variant=uniform)", "0.7208"],
        ["q", "AP", "0.5917"],
        ["all", "infAP(variant=uniform)", "0.7208"],
        ["all", "AP", "0.5917"],
    ]
    code, out, _ = run_cli(capsys, qrels, run, "infAP", "-q", "-n")
    assert code == 0
    assert rows(out) == [["q", "infAP", "0.6458"]]


def test_canonical_measure_names_and_dedup(capsys, topic_a):
    qrels, run = topic_a
    code, out, _ = run_cli(
        capsys,
        qrels,
        run,
        "infAP(c=2.0, variant='pool', eps=1e-5)",
        "infAP(c=1.5,variant=uniform)@5",
        "infAP",
        "AP(rel=1)",
    )
    assert code == 0
    # defaults are dropped, parameters come in canonical order; equal measures are printed once
    assert [r[0] for r in rows(out)] == ["infAP", "infAP(c=1.5,variant=uniform)@5", "AP"]


def test_gz_run_equals_plain(capsys, synth):
    _, plain, _ = run_cli(capsys, synth["qrels"], synth["run"], "infAP AP P@5", "-q", "-p", "-1")
    code, gz, _ = run_cli(capsys, synth["qrels"], synth["run_gz"], "infAP AP P@5", "-q", "-p", "-1")
    assert code == 0 and gz == plain
    # every qrels topic is reported (the missing one with 0), topics only in the run are not
    qids = {r[0] for r in rows(plain)}
    assert qids == set(synth["qrels_dict"]) | {"all"}
    assert ["t5", "infAP", "0.0"] in rows(plain)


def test_values_equal_evaluate(capsys, synth):
    code, out, _ = run_cli(capsys, synth["qrels"], synth["run"], "infAP(c=1.5)@10", "AP", "-q", "-n", "-p", "-1")
    assert code == 0
    frame = ir_incomplete.evaluate({"sys1": synth["run_dict"]}, synth["qrels_dict"], ["infAP(c=1.5)@10", "AP"])
    expected = {(q, m): v for q, m, v in zip(frame["query_id"], frame["measure"], frame["value"], strict=True)}
    got = {(q, m): float(v) for q, m, v in rows(out)}
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12)


def test_jsonl(capsys, synth, topic_a):
    qrels, run = topic_a
    code, out, err = run_cli(capsys, qrels, run, "infAP", "-o", "jsonl")
    assert code == 0 and err == ""
    records = [json.loads(line) for line in out.splitlines()]
    assert records == [{"measure": "infAP", "value": pytest.approx(INFAP_A, abs=1e-12)}]
    assert list(records[0]) == ["measure", "value"]
    code, out, _ = run_cli(capsys, qrels, run, "infAP AP", "-q", "-o", "jsonl")
    records = [json.loads(line) for line in out.splitlines()]
    assert [list(r) for r in records] == [["query_id", "measure", "value"]] * 4
    assert [(r["query_id"], r["measure"]) for r in records] == [
        ("q", "infAP"),
        ("q", "AP"),
        ("all", "infAP"),
        ("all", "AP"),
    ]
    assert records[1]["value"] == pytest.approx(AP_A, abs=1e-12)
    # several runs: a "run" key first
    code, out, _ = run_cli(capsys, synth["qrels"], synth["run"], synth["run2"], "AP", "-o", "jsonl")
    records = [json.loads(line) for line in out.splitlines()]
    assert [list(r) for r in records] == [["run", "measure", "value"]] * 2
    assert [r["run"] for r in records] == ["sys1.run", "sys2.run"]
    # --places is ignored (with a warning) in jsonl
    code, out, err = run_cli(capsys, qrels, run, "infAP", "-o", "jsonl", "-p", "2")
    assert code == 0 and json.loads(out)["value"] == pytest.approx(INFAP_A, abs=1e-12)
    assert "ignored" in err


def _strict_json(line):
    """``json.loads`` that refuses ``NaN``/``Infinity`` (not JSON, though Python's json reads them)."""

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(line, parse_constant=refuse)


def test_jsonl_of_extreme_infap_smoothing_is_json(capsys, synth):
    """``infAP(c=1e-200,eps=1e-200)`` was NaN for every query, written as ``NaN`` in ``-o jsonl``."""
    code, out, err = run_cli(capsys, synth["qrels"], synth["run"], "infAP(c=1e-200,eps=1e-200)", "-q", "-o", "jsonl")
    assert code == 0 and err == ""
    records = [_strict_json(line) for line in out.splitlines()]
    assert len(records) == 7 and all(np.isfinite(r["value"]) for r in records)
    code, out, err = run_cli(capsys, synth["qrels"], synth["run"], "infAP(c=1e-320)", "-o", "jsonl")
    assert code == 2 and out == ""
    assert "for parameter 'c'" in one_error_line(err) and ">= 1e-300" in err


def test_jsonl_refuses_values_that_are_not_finite(capsys, synth, monkeypatch):
    import ir_incomplete.api

    real = ir_incomplete.api._evaluate_with_intervals  # what the command line evaluates with

    def with_nan(*args, **kwargs):
        frame, bounds = real(*args, **kwargs)
        frame.loc[(frame["query_id"] == "t2") & (frame["measure"] == "AP"), "value"] = float("nan")
        frame.loc[(frame["query_id"] == "t3") & (frame["measure"] == "AP"), "value"] = float("inf")
        return frame, bounds

    monkeypatch.setattr(ir_incomplete.api, "_evaluate_with_intervals", with_nan)
    args = [synth["qrels"], synth["run"], synth["run2"], "infAP", "AP"]
    code, out, err = run_cli(capsys, *args, "-q", "-o", "jsonl")
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert "cannot write 6 value(s) that are not finite numbers as JSON" in line  # 2 runs: t2, t3, all
    assert "the first is AP (run 'sys1.run', query 't2') = nan; use -o tsv" in line
    code, out, err = run_cli(capsys, *args, "-o", "jsonl")  # the summary: NaN too
    assert code == 2 and out == "" and "AP (run 'sys1.run') = nan" in one_error_line(err)
    code, out, err = run_cli(capsys, *args, "-q")  # tsv shows them, as ir_measures does
    assert code == 0 and "\tt2\tAP\tnan\n" in out and "\tt3\tAP\tinf\n" in out


def test_summary_uses_measure_aggregator(capsys, synth):
    """NumRet is summed over queries (ir_measures' SumAgg), AP averaged."""
    code, out, _ = run_cli(capsys, synth["qrels"], synth["run"], "NumRet AP", "-p", "-1")
    assert code == 0
    values = dict((m, float(v)) for m, v in rows(out))
    assert values["NumRet"] == 25 * 5  # five qrels topics answered, 25 documents each
    frame = ir_incomplete.evaluate(synth["run"], synth["qrels"], "AP")
    assert values["AP"] == pytest.approx(frame["value"].mean(), abs=1e-12)


# ---------------------------------------------------------------------------------------------------
# several runs
# ---------------------------------------------------------------------------------------------------
def test_several_runs(capsys, synth):
    code, out, _ = run_cli(capsys, synth["qrels"], synth["run"], synth["run2"], synth["run_gz"], "infAP AP")
    assert code == 0
    got = rows(out)
    assert [r[:2] for r in got] == [
        ["sys1.run", "infAP"],
        ["sys1.run", "AP"],
        ["sys2.run", "infAP"],
        ["sys2.run", "AP"],
        ["sys1gz.run", "infAP"],
        ["sys1gz.run", "AP"],
    ]
    assert got[0][2] == got[4][2] and got[1][2] == got[5][2]  # the same run, plain and gzipped
    for name, run in (("sys1.run", synth["run"]), ("sys2.run", synth["run2"])):
        single = main([synth["qrels"], run, "infAP", "AP"])
        single_out = capsys.readouterr().out
        assert single == 0
        assert [[name] + r for r in rows(single_out)] == [r for r in got if r[0] == name]


def test_several_runs_by_query(capsys, synth):
    code, out, _ = run_cli(capsys, "-q", synth["qrels"], synth["run"], synth["run2"], "AP")
    assert code == 0
    got = rows(out)
    assert all(len(r) == 4 for r in got)
    n_topics = len(synth["qrels_dict"])
    assert len(got) == 2 * (n_topics + 1)
    assert got[n_topics][:3] == ["sys1.run", "all", "AP"] and got[-1][:3] == ["sys2.run", "all", "AP"]
    means = {}
    for name in ("sys1.run", "sys2.run"):
        per_q = [float(r[3]) for r in got if r[0] == name and r[1] != "all"]
        assert len(per_q) == n_topics
        means[name] = np.mean(per_q)
    code, out, _ = run_cli(capsys, "-q", "-n", "-p", "-1", synth["qrels"], synth["run"], synth["run2"], "AP")
    got = rows(out)
    assert len(got) == 2 * n_topics and "all" not in {r[1] for r in got}
    for name, mean in means.items():
        assert np.mean([float(r[3]) for r in got if r[0] == name]) == pytest.approx(mean, abs=1e-4)


def test_directory_of_runs(capsys, synth, tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    write_run(runs / "b.run", synth["run2_dict"])
    write_run(runs / "a.run.gz", synth["run_dict"], gz=True)
    (runs / ".hidden").write_text("not a run\n")
    code, out, _ = run_cli(capsys, synth["qrels"], runs, "infAP")
    assert code == 0
    got = rows(out)
    assert [r[0] for r in got] == ["a.run", "b.run"]
    code, ref, _ = run_cli(capsys, synth["qrels"], synth["run"], synth["run2"], "infAP")
    assert [r[1:] for r in got] == [r[1:] for r in rows(ref)]
    # a directory and a file together
    code, out, _ = run_cli(capsys, synth["qrels"], runs, synth["run"], "infAP")
    assert code == 0 and [r[0] for r in rows(out)] == ["a.run", "b.run", "sys1.run"]


def test_run_name_clash(capsys, synth, tmp_path):
    for sub in ("x", "y"):
        (tmp_path / sub).mkdir()
        write_run(tmp_path / sub / "same.run", synth["run_dict"])
    code, out, err = run_cli(capsys, synth["qrels"], tmp_path / "x" / "same.run", tmp_path / "y" / "same.run", "AP")
    assert code == 2 and out == ""
    assert "same.run" in one_error_line(err)


def test_negative_and_score_precision_options(capsys, spec, tmp_path, topic_a):
    qrels, run = topic_a
    _, default, _ = run_cli(capsys, qrels, run, "infAP", "-p", "-1")
    code, zero, _ = run_cli(capsys, qrels, run, "infAP", "-p", "-1", "--negative", "zero")
    assert code == 0
    run_d, qrels_d = spec_topic(spec, "A")
    expected = ir_incomplete.evaluate(run_d, qrels_d, "infAP", negative="zero")["value"].iloc[0]
    assert float(rows(zero)[0][1]) == pytest.approx(expected, abs=1e-12)
    assert float(rows(default)[0][1]) == pytest.approx(INFAP_A, abs=1e-12)
    assert abs(expected - INFAP_A) > 1e-3  # the option changes the value on topic A

    # two scores equal in float32, different in float64: the order (and AP) depends on the precision
    qrels_p = write_qrels(tmp_path / "qrels.p", {"q": {"a": 1, "b": 0}})
    run_p = tmp_path / "run.p"
    run_p.write_text("q Q0 a 1 1.0000000001 t\nq Q0 b 2 1.0 t\n")
    _, f32, _ = run_cli(capsys, qrels_p, run_p, "infAP")
    _, f64, _ = run_cli(capsys, qrels_p, run_p, "infAP", "--score-precision", "float64")
    assert rows(f32) == [["infAP", "0.5000"]]  # tie in float32: docid descending puts b first
    assert rows(f64) == [["infAP", "1.0000"]]


def test_measures_with_spaces_inside_one_argument(capsys, topic_a):
    qrels, run = topic_a
    code, out, _ = run_cli(capsys, qrels, run, "infAP(variant = uniform, c=2) AP")
    assert code == 0
    assert rows(out) == [["infAP(variant=uniform)", "0.7208"], ["AP", "0.5917"]]
    assert cli.split_measure_args(["AP P@5", " infAP(c=1.5, eps=1e-4)@10  x(s='a b') "]) == [
        "AP",
        "P@5",
        "infAP(c=1.5, eps=1e-4)@10",
        "x(s='a b')",
    ]


# ---------------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------------
def test_no_summary_without_by_query(capsys, topic_a):
    qrels, run = topic_a
    code, out, err = run_cli(capsys, qrels, run, "infAP", "-n")
    assert code == 2 and out == ""
    assert "--no_summary" in one_error_line(err)


@pytest.mark.parametrize(
    "bad, token",
    [
        ("infAP(c=1.5", "infAP(c=1.5"),
        ("AP P@", "P@"),
        ("infAP(c=0)", "'c'"),
        ("infAP(variant=deep)", "deep"),
        ("infAP(cc=1)", "cc"),
    ],
)
def test_bad_measure_string(capsys, topic_a, bad, token):
    qrels, run = topic_a
    code, out, err = run_cli(capsys, qrels, run, "AP", bad)
    assert code == 2 and out == ""
    assert token in one_error_line(err)


def test_unknown_measure(capsys, topic_a):
    qrels, run = topic_a
    code, out, err = run_cli(capsys, qrels, run, "infAPP")
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert "unknown measure 'infAPP'" in line and "infAP" in line


def test_missing_files(capsys, synth, tmp_path):
    code, out, err = run_cli(capsys, tmp_path / "nope", synth["run"], "AP")
    assert code == 2 and out == "" and "nope" in one_error_line(err)
    code, out, err = run_cli(capsys, synth["qrels"], tmp_path / "missing.run", "AP")
    assert code == 2 and out == "" and "missing.run" in one_error_line(err)
    code, out, err = run_cli(capsys, synth["qrels"], synth["run"])
    assert code == 2 and "measure" in one_error_line(err)
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    code, out, err = run_cli(capsys, synth["qrels"], empty, "AP")
    assert code == 2 and "empty_dir" in one_error_line(err)


def test_bad_data(capsys, synth, tmp_path):
    bad_run = tmp_path / "bad.run"
    bad_run.write_text("t0 Q0 d1 1 high tag\n")
    code, out, err = run_cli(capsys, synth["qrels"], bad_run, "AP")
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert "bad.run" in line and "high" in line
    bad_qrels = tmp_path / "bad.qrels"
    bad_qrels.write_text("t0 0 d1 1.5\n")
    code, out, err = run_cli(capsys, bad_qrels, synth["run"], "AP")
    assert code == 2 and out == "" and "1.5" in one_error_line(err)
    dup = tmp_path / "dup.run"
    dup.write_text("t0 Q0 d1 1 2.0 tag\nt0 Q0 d1 2 1.0 tag\n")
    code, out, err = run_cli(capsys, synth["qrels"], dup, "infAP")
    assert code == 2 and out == "" and "d1" in one_error_line(err)


def test_usage_errors_and_help(capsys):
    code, out, err = run_cli(capsys)
    assert code == 2 and out == "" and err.splitlines()[-1].startswith("ir_incomplete: error: ")
    code, out, err = run_cli(capsys, "--help")
    assert code == 0
    assert "measures" in out and "robustness" in out and "--score-precision" in out
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out.strip() == f"ir_incomplete {ir_incomplete.__version__}"


# ---------------------------------------------------------------------------------------------------
# subcommands
# ---------------------------------------------------------------------------------------------------
def test_measures_text(capsys):
    code, out, err = run_cli(capsys, "measures")
    assert code == 0 and err == ""
    for measure in ALL_MEASURES:
        assert any(line.startswith(f"{measure.NAME}  ") for line in out.splitlines()), measure.NAME
        assert measure.SHORT_DESC in out
    block = out.split("infAP  ", 1)[1].split("\n\n")[0]
    for name, default in (("rel", "1"), ("c", "2"), ("eps", "1e-05"), ("variant", "pool")):
        assert any(line.split()[:3] == [name, "default", default + ";"] for line in block.splitlines()), name
    assert "one of pool, uniform" in block and "a number > 0" in block
    assert "@k" in block and "example: " in block


def test_measure_examples_parse():
    for measure in ALL_MEASURES:
        example = cli.measure_example(measure)
        assert ir_incomplete.parse(example).NAME == measure.NAME
    assert cli.measure_example(ir_incomplete.infAP) == "infAP(variant=uniform)@10"


def test_measures_markdown(capsys):
    code, out, _ = run_cli(capsys, "measures", "--format", "markdown")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "| Measure | Parameters (defaults) | Description |"
    assert lines[1] == "|---|---|---|"
    assert len(lines) == 2 + len(ALL_MEASURES)
    row = next(line for line in lines if line.startswith("| `infAP` |"))
    assert row.count(" | ") == 2
    for part in ("`rel=1`", "`c=2`", "`eps=1e-05`", "`variant=pool`", "`@k`"):
        assert part in row
    code, _, err = run_cli(capsys, "measures", "--format", "html")
    assert code == 2 and "html" in err


def test_robustness_dispatch(capsys, monkeypatch):
    seen = []
    fake = types.ModuleType("ir_incomplete.cli.robustness")
    fake.main = lambda argv: seen.append(argv) or 3
    monkeypatch.setitem(sys.modules, "ir_incomplete.cli.robustness", fake)
    assert main(["robustness", "degrade", "--x"]) == 3
    assert seen == [["degrade", "--x"]]


def test_robustness_missing(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ir_incomplete.cli.robustness", None)
    code, out, err = run_cli(capsys, "robustness", "--help")
    assert code == 2 and out == ""
    assert "robustness" in one_error_line(err)


# ---------------------------------------------------------------------------------------------------
# processes: python -m, console script, parity with the ir_measures command line
# ---------------------------------------------------------------------------------------------------
def _env():
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_python_m_and_console_script(capsys):
    direct = main(["measures"])
    expected = capsys.readouterr().out
    assert direct == 0
    proc = subprocess.run(
        [sys.executable, "-m", "ir_incomplete", "measures"], capture_output=True, text=True, env=_env(), timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected
    proc = subprocess.run(
        [sys.executable, "-m", "ir_incomplete", "measures", "--format", "pdf"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    script = shutil.which("ir_incomplete")
    if script is None:
        pytest.skip("the ir_incomplete console script is not on PATH (package not installed)")
    proc = subprocess.run([script, "measures"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected


def _ir_measures_cli(*args):
    proc = subprocess.run(
        [sys.executable, "-m", "ir_measures", *map(str, args)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_parity_with_ir_measures_cli(capsys, synth):
    # ir_measures' CLI splits each measure argument on whitespace: 'AP P@5' is two measures
    measures = ("AP P@5", "infAP", "NumRet")
    theirs = _ir_measures_cli(synth["qrels"], synth["run"], *measures)
    code, ours, _ = run_cli(capsys, synth["qrels"], synth["run"], *measures)
    assert code == 0
    assert [r[0] for r in rows(ours)] == ["AP", "P@5", "infAP", "NumRet"]
    assert ours == theirs
    theirs_q = _ir_measures_cli(synth["qrels"], synth["run"], *measures, "-q")
    code, ours_q, _ = run_cli(capsys, synth["qrels"], synth["run"], *measures, "-q")
    assert code == 0
    # the same lines (ir_measures orders a query's measures by provider, we by argument) ...
    assert sorted(ours_q.splitlines()) == sorted(theirs_q.splitlines())
    # ... and the summary lines come last, in argument order, in both
    assert ours_q.splitlines()[-4:] == theirs_q.splitlines()[-4:]


def test_parity_with_ir_measures_cli_topic_a(capsys, topic_a):
    qrels, run = topic_a
    theirs = _ir_measures_cli(qrels, run, "infAP", "AP", "-p", "6")
    code, ours, _ = run_cli(capsys, qrels, run, "infAP", "AP", "-p", "6")
    assert code == 0 and ours == theirs
    assert rows(ours)[0] == ["infAP", "0.645833"]
    # per query, ir_measures lists the measures in its provider's order; we keep the argument order
    theirs = _ir_measures_cli(qrels, run, "infAP", "AP", "-q", "-p", "6")
    code, ours, _ = run_cli(capsys, qrels, run, "infAP", "AP", "-q", "-p", "6")
    assert code == 0 and sorted(ours.splitlines()) == sorted(theirs.splitlines())
    assert rows(ours)[:2] == [["q", "infAP", "0.645833"], ["q", "AP", "0.591667"]]
    assert ours.splitlines()[-2:] == theirs.splitlines()[-2:]


# ---------------------------------------------------------------------------------------------------
# extra columns (RBPResidual's residual and upper)
# ---------------------------------------------------------------------------------------------------
def test_residual_columns_in_tsv(capsys, synth):
    from ir_incomplete import evaluate

    measures = ["P@5", "RBPResidual(p=0.5,gain=graded)@10"]
    code, out, _ = run_cli(capsys, synth["qrels"], synth["run"], *measures, "-p", "-1")
    assert code == 0
    lines = rows(out)
    assert lines[0][0] == "P@5" and len(lines[0]) == 2  # other measures keep ir_measures' format
    name, value, residual, upper = lines[1]
    means = evaluate({"r": synth["run_dict"]}, synth["qrels_dict"], measures[1:], per_query=False).iloc[0]
    assert name == measures[1]
    assert [float(value), float(residual), float(upper)] == [means["value"], means["residual"], means["upper"]]
    # per query: the topic the run does not answer (t5) is value 0, residual 1, upper 1
    code, out, _ = run_cli(capsys, synth["qrels"], synth["run"], *measures, "-q")
    assert code == 0
    lines = rows(out)
    assert ["t5", "P@5", "0.0000"] in lines
    assert ["t5", measures[1], "0.0000", "1.0000", "1.0000"] in lines
    summary = [line for line in lines if line[0] == "all"]
    assert [len(line) for line in summary] == [3, 5]
    assert summary[1][2:] == [f"{means['value']:.4f}", f"{means['residual']:.4f}", f"{means['upper']:.4f}"]


def test_residual_columns_in_jsonl_and_several_runs(capsys, synth):
    code, out, _ = run_cli(
        capsys, synth["qrels"], synth["run"], synth["run2"], "RBPResidual", "AP", "-q", "-n", "-o", "jsonl"
    )
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    rbp = [r for r in records if r["measure"] == "RBPResidual"]
    ap = [r for r in records if r["measure"] == "AP"]
    assert len(rbp) == len(ap) == 12  # 2 runs x 6 topics of the qrels
    assert all(list(r) == ["run", "query_id", "measure", "value", "residual", "upper"] for r in rbp)
    assert all(list(r) == ["run", "query_id", "measure", "value"] for r in ap)
    assert all(r["upper"] == pytest.approx(r["value"] + r["residual"], abs=1e-15) for r in rbp)
    missing = [r for r in rbp if r["query_id"] == "t5"]
    assert [(r["value"], r["residual"], r["upper"]) for r in missing] == [(0.0, 1.0, 1.0)] * 2
    code, out, _ = run_cli(capsys, synth["qrels"], synth["run"], synth["run2"], "RBPResidual")
    assert code == 0
    assert [len(line) for line in rows(out)] == [5, 5]  # run, measure, value, residual, upper


@pytest.mark.parametrize(("command", "collector_on"), [(["measures"], True), (["QRELS", "RUN", "AP"], False)])
def test_the_console_entry_keeps_the_collector_on_for_subcommands_and_off_for_one_evaluation(
    tmp_path, command, collector_on
):
    """``console_main`` turns Python's cyclic collector off only for an evaluation (a subcommand may run
    for hours); the exit code and the output are main()'s."""
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1.0 t\n")
    argv = [str(tmp_path / "qrels") if a == "QRELS" else str(tmp_path / "run") if a == "RUN" else a for a in command]
    code = (
        "import gc, sys\nfrom ir_incomplete import cli\nsys.argv = ['ir_incomplete', *sys.argv[1:]]\n"
        "status = cli.console_main()\nprint('collector', gc.isenabled())\nsys.exit(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"collector {collector_on}"
    if not collector_on:
        assert done.stdout.splitlines()[0] == "AP\t1.0000"
