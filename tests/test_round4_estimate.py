"""Design-based measures by name at every front door (fourth round of daily use): two spellings of one
estimate, a design query without a sampled pair, no false warning one run at a time, the default control
variate said out loud, named pipes in measure strings, and the frames of our readers in PyTerrier."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest
from conftest import UNRELIABLE_ALLOWED, ZERO_WIDTH_ALLOWED
from test_design_measures import synthetic_files  # the same synthetic runs, qrels and labels

import ir_incomplete
from ir_incomplete import compare, estimate, evaluate
from ir_incomplete.cli import main
from ir_incomplete.judging import sample, write_design

ROOT = Path(__file__).resolve().parents[1]
COVID = ROOT.parent / "shared" / "data" / "trec-covid-round1"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
N_TOPICS = 6


def _write_trec(folder: Path, runs, qrels) -> tuple[Path, list[Path]]:
    for name, run in runs.items():
        (folder / name).write_text("".join(f"{q} Q0 {d} 0 {s} {name}\n" for q, d, s in run.itertuples(index=False)))
    path = folder / "qrels"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels.itertuples(index=False)))
    return path, [folder / name for name in runs]


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    made = synthetic_files(tmp_path_factory.mktemp("round4"))  # the design measures' tests' files
    qrels_path, run_paths = _write_trec(made["folder"], made["runs"], made["qrels"])
    return {**made, "qrels_path": qrels_path, "run_paths": run_paths}


def _cli(*argv, timeout=60, cwd=None):
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, timeout=timeout, env=ENV, cwd=cwd or str(ROOT)
    )


def _values(frame, *keys):
    return {tuple(row[:-1]): row[-1] for row in frame[[*keys, "value"]].itertuples(index=False)}


def _close(a: dict, b: dict, tol=1e-12) -> bool:
    return a.keys() == b.keys() and max(abs(a[k] - b[k]) for k in a) <= tol


# ---------------------------------------------------------------------------------------------------
# 1. StatAP(design=d) beside StatAP(design=d,control=none): one estimate, two names
# ---------------------------------------------------------------------------------------------------
def test_two_spellings_of_one_estimate_at_every_front_door(synth):
    plain = f"StatAP(design={synth['design']!r})@10"
    spelled = f"StatAP(design={synth['design']!r},control=none)@10"
    want = estimate(synth["runs"], synth["qrels"], synth["design"], "AP@10", control="none", interval=0.9)
    want_q = estimate(synth["runs"], synth["qrels"], synth["design"], "AP@10", control="none", per_query=True)
    means = dict(zip(want["run"], want["value"], strict=True))
    # evaluate: per query, means and the design-based intervals, both names
    got = evaluate(synth["runs"], synth["qrels"], [plain, spelled, "P@5"], per_query=False, interval=0.9)
    per_query = evaluate(synth["runs"], synth["qrels"], [plain, spelled])
    theirs = {(r, q): v for r, q, v in want_q[["run", "query_id", "value"]].itertuples(index=False)}
    for name in (plain, spelled):
        rows = got[got["measure"] == name]
        assert _close({(r,): v for (r,), v in _values(rows, "run").items()}, {(r,): v for r, v in means.items()})
        assert np.abs(rows["lo"].to_numpy() - want["lo"].to_numpy()).max() <= 1e-12
        assert np.abs(rows["hi"].to_numpy() - want["hi"].to_numpy()).max() <= 1e-12
        assert _close(_values(per_query[per_query["measure"] == name], "run", "query_id"), theirs)
    # equal values: the default control variate of a Stat* measure is none
    a = got[got["measure"] == plain]["value"].to_numpy()
    b = got[got["measure"] == spelled]["value"].to_numpy()
    assert (a == b).all() and len(a) == 4
    # ir_measures, one run at a time
    measures = [ir_incomplete.parse(plain), ir_incomplete.parse(spelled)]
    for run_name, run in synth["runs"].items():
        agg = ir_measures.calc_aggregate(measures, synth["qrels"], run)
        assert abs(agg[measures[0]] - means[run_name]) <= 1e-12 and agg[measures[0]] == agg[measures[1]]
        rows = list(ir_measures.iter_calc(measures, synth["qrels"], run))
        assert len(rows) == 2 * N_TOPICS
    # compare: both measures with the design-based intervals of the differences
    table = compare(synth["runs"], synth["qrels"], [plain, spelled])
    first = table[table["measure"] == plain].drop(columns="measure").reset_index(drop=True)
    second = table[table["measure"] == spelled].drop(columns="measure").reset_index(drop=True)
    pd.testing.assert_frame_equal(first, second)
    assert table.attrs["design_measures"] == [plain, spelled]


def test_two_spellings_on_the_command_line(synth, capsys):
    plain = f"StatAP(design={synth['design']!r})@10"
    spelled = f"StatAP(design={synth['design']!r},control=none)@10"
    paths = [str(synth["qrels_path"]), *map(str, synth["run_paths"])]
    assert main([*paths, plain, spelled, "--interval", "0.9", "-p", "-1"]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 8
    by_name = {}
    for run, measure, value, lo, hi in lines:
        by_name.setdefault(measure, {})[run] = (float(value), float(lo), float(hi))
    assert len(by_name) == 2
    one, two = by_name.values()
    assert one == two
    want = estimate(synth["runs"], synth["qrels"], synth["design"], "AP@10", control="none", interval=0.9)
    for run, value, lo, hi in want[["run", "value", "lo", "hi"]].itertuples(index=False):
        assert np.allclose(one[run], (value, lo, hi), rtol=0, atol=1e-12)
    assert main(["compare", *paths, plain, spelled, "--format", "tsv"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.count(plain) == out.count(spelled) == 6  # a row per pair of runs


# ---------------------------------------------------------------------------------------------------
# 2. a Poisson design in which a topic got no sampled pair
# ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sparse(synth):
    """A Poisson design of 8 expected judgments over 6 topics in which some topic got none."""
    for seed in range(50):
        design = sample(synth["runs"], 8, depth=20, seed=seed, uniform=1.0)
        missing = sorted(set(design.attrs["topics"]) - set(design["query_id"]))
        if missing:
            break
    else:
        pytest.fail("no seed in 0..49 leaves a topic unsampled")
    path = synth["folder"] / "sparse.tsv"
    write_design(design, path)
    # the judgments of the design's pairs only: the unsampled topic has no line
    judged = design[["query_id", "doc_id"]].merge(synth["qrels"], on=["query_id", "doc_id"])
    assert len(judged) == len(design) and missing[0] not in set(judged["query_id"])
    return {"design": str(path), "judged": judged, "missing": missing[0]}


@UNRELIABLE_ALLOWED
@pytest.mark.parametrize("which", ["judged", "full"])
@ZERO_WIDTH_ALLOWED
def test_unsampled_topic_evaluate_equals_estimate(synth, sparse, which):
    qrels = sparse["judged"] if which == "judged" else synth["qrels"]
    measures = [f"StatAP(design={sparse['design']!r})@10", f"StatP(design={sparse['design']!r})@5"]
    estimands = ["AP@10", "P@5"]
    want = estimate(synth["runs"], qrels, sparse["design"], estimands, control="none", interval=0.9)
    want_q = estimate(synth["runs"], qrels, sparse["design"], estimands, control="none", per_query=True)
    assert want.attrs["topics"] == N_TOPICS
    got = evaluate(synth["runs"], qrels, [*measures, "P@5"], per_query=False, interval=0.9)
    per_query = evaluate(synth["runs"], qrels, [*measures, "P@5"])
    for measure, estimand in zip(measures, estimands, strict=True):
        ours = got[got["measure"] == measure].reset_index(drop=True)
        theirs = want[want["measure"] == estimand].reset_index(drop=True)
        assert list(ours["run"]) == list(theirs["run"])
        for column in ("value", "lo", "hi"):
            assert np.abs(ours[column].to_numpy() - theirs[column].to_numpy()).max() <= 1e-12, (measure, column)
        rows = per_query[per_query["measure"] == measure]
        expected = want_q[want_q["measure"] == estimand]
        assert _close(_values(rows, "run", "query_id"), _values(expected, "run", "query_id"))
        assert len(rows) == 4 * N_TOPICS and sparse["missing"] in set(rows["query_id"])
    # the plain P@5 beside them keeps the qrels' queries
    plain = per_query[per_query["measure"] == "P@5"]
    assert set(plain["query_id"]) == set(qrels["query_id"])


@UNRELIABLE_ALLOWED
@ZERO_WIDTH_ALLOWED
def test_unsampled_topic_ir_measures_equals_estimate(synth, sparse):
    measure = ir_incomplete.parse(f"StatAP(design={sparse['design']!r})@10")
    want = estimate(synth["runs"], sparse["judged"], sparse["design"], "AP@10", control="none")
    for run_name, run in synth["runs"].items():
        got = ir_measures.calc_aggregate([measure], sparse["judged"], run)[measure]
        assert abs(got - want[want["run"] == run_name]["value"].iloc[0]) <= 1e-12


@UNRELIABLE_ALLOWED
@pytest.mark.parametrize("correction", [None, "fdr_bh"])
@ZERO_WIDTH_ALLOWED
def test_unsampled_topic_compare_equals_estimate(synth, sparse, correction):
    measure = f"StatAP(design={sparse['design']!r})@10"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # P@5 beside it: its topics are the qrels', none is "left out"
        # (the tiny design's intervals are flagged: that warning of its own is allowed)
        warnings.filterwarnings("ignore", message=".*rows have intervals this design cannot back")
        table = compare(synth["runs"], sparse["judged"], [measure, "P@5"], correction=correction, alpha=0.5)
    rows = table[table["measure"] == measure].reset_index(drop=True)
    level = float(rows["ci_level"].iloc[0])
    want = estimate(
        synth["runs"], sparse["judged"], sparse["design"], "AP@10", pairs=True, interval=level, control="none"
    )
    means = estimate(synth["runs"], sparse["judged"], sparse["design"], "AP@10", control="none")
    mean = dict(zip(means["run"], means["value"], strict=True))
    assert list(zip(rows["run_a"], rows["run_b"], strict=True)) == list(zip(want["run_a"], want["run_b"], strict=True))
    assert np.abs(rows["difference"].to_numpy() - want["value"].to_numpy()).max() <= 1e-12
    assert np.abs(rows["value_a"].to_numpy() - rows["run_a"].map(mean).to_numpy()).max() <= 1e-12
    assert (rows["ci_low"].to_numpy() == want["lo"].to_numpy()).all()
    assert (rows["ci_high"].to_numpy() == want["hi"].to_numpy()).all()
    assert (rows["topics"] == N_TOPICS).all()
    plain = table[table["measure"] == "P@5"]
    assert (plain["topics"] == N_TOPICS - 1).all()


@UNRELIABLE_ALLOWED
@ZERO_WIDTH_ALLOWED
def test_unsampled_topic_on_the_command_line(synth, sparse, tmp_path, capsys):
    qrels = tmp_path / "judged"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in sparse["judged"].itertuples(index=False)))
    measure = f"StatAP(design={sparse['design']!r})@10"
    runs = list(map(str, synth["run_paths"]))
    assert main([str(qrels), *runs, measure, "--interval", "0.9", "-p", "-1"]) == 0
    want = estimate(synth["runs"], sparse["judged"], sparse["design"], "AP@10", control="none", interval=0.9)
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 4
    for run, _, value, lo, hi in lines:
        row = want[want["run"] == run].iloc[0]
        assert np.allclose([float(value), float(lo), float(hi)], row[["value", "lo", "hi"]].to_list(), atol=1e-12)
    assert main([str(qrels), *runs, measure, "-q", "-p", "-1"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    per_query = [row for row in rows if row[1] != "all"]
    assert len(per_query) == 4 * N_TOPICS
    assert {q for _, q, _, _ in per_query} == {f"q{t}" for t in range(N_TOPICS)}
    assert main(["compare", str(qrels), *runs, measure, "--format", "tsv"]) == 0
    out = capsys.readouterr().out
    table = pd.read_csv(io.StringIO(out), sep="\t")
    pairs = estimate(
        synth["runs"], sparse["judged"], sparse["design"], "AP@10", control="none", pairs=True, interval=0.95
    )
    assert np.abs(table["difference"].to_numpy() - pairs["value"].to_numpy()).max() <= 1e-4  # 4 places


# ---------------------------------------------------------------------------------------------------
# 3. one run at a time: no false warning for the design's own runs
# ---------------------------------------------------------------------------------------------------
def test_no_warning_for_the_designs_own_runs_through_ir_measures(synth):
    measures = [ir_incomplete.parse(f"StatAP(design={synth['design']!r})@10")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for run in synth["runs"].values():
            ir_measures.calc_aggregate(measures, synth["qrels"], run)
            list(ir_measures.iter_calc(measures, synth["qrels"], run))
        estimate(synth["runs"]["run0"], synth["qrels"], synth["design"], "AP@10", universe="design")
    # the tiny design's intervals are flagged (a warning of its own); no other warning, none of a foreign run
    assert [str(w.message) for w in caught if "rows have intervals this design cannot back" not in str(w.message)] == []


def test_no_warning_for_the_designs_own_runs_through_pt_experiment(synth):
    pt = pytest.importorskip("pyterrier", reason="pyterrier is not installed")
    measure = f"StatAP(design={synth['design']!r})@10"
    names = list(synth["runs"])
    systems = [pt.Transformer.from_df(ir_incomplete.to_pyterrier(r)) for r in synth["runs"].values()]
    topics = pd.DataFrame({"qid": [f"q{t}" for t in range(N_TOPICS)], "query": "x"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        means = pt.Experiment(systems, topics, synth["qrels"], eval_metrics=[measure], names=names)
    assert [str(w.message) for w in caught if "design" in str(w.message)] == []
    want = estimate(synth["runs"], synth["qrels"], synth["design"], "AP@10", control="none")
    for run, value in zip(want["run"], want["value"], strict=True):
        assert abs(means[means["name"] == run][measure].iloc[0] - value) <= 1e-12


@UNRELIABLE_ALLOWED
@ZERO_WIDTH_ALLOWED
def test_a_foreign_run_is_still_flagged(synth):
    foreign = synth["runs"]["run0"].assign(doc_id=lambda f: "x" + f["doc_id"])  # documents no run retrieves
    with pytest.warns(UserWarning, match=r"run 'foreign' is not among the runs the design was drawn from"):
        estimate({"foreign": foreign}, synth["qrels"], synth["design"], "AP@10", universe="design")
    measure = f"StatAP(design={synth['design']!r})@10"
    with pytest.warns(UserWarning, match=r"retrieve documents outside the design's universe .*'foreign'"):
        evaluate({**synth["runs"], "foreign": foreign}, synth["qrels"], measure, per_query=False)


# ---------------------------------------------------------------------------------------------------
# 4. the default control variate: the measures' none, estimate()'s model, said on stderr
# ---------------------------------------------------------------------------------------------------
def test_estimate_command_says_which_control_variate(synth, capsys):
    runs = list(map(str, synth["run_paths"]))
    base = ["estimate", str(synth["qrels_path"]), synth["design"], *runs, "AP@10", "-p", "-1"]
    assert main(base) == 0
    out, err = capsys.readouterr()
    assert err == (
        "ir_incomplete estimate: note: control variate 'model' (the default; --control none gives StatAP's "
        "Horvitz-Thompson values)\n"
    )
    default = pd.read_csv(io.StringIO(out), sep="\t")
    assert main([*base, "--control", "none"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    none = pd.read_csv(io.StringIO(out), sep="\t")
    stat = evaluate(synth["runs"], synth["qrels"], f"StatAP(design={synth['design']!r})@10", per_query=False)
    assert np.abs(none["value"].to_numpy() - stat["value"].to_numpy()).max() <= 1e-12
    assert np.abs(default["value"].to_numpy() - stat["value"].to_numpy()).max() > 1e-6  # the visible difference
    assert main([*base, "--universe", "design"]) == 0
    assert capsys.readouterr().err == "ir_incomplete estimate: note: control variate 'none' (the default)\n"


def test_help_and_descriptions_state_the_defaults(capsys):
    assert main(["estimate", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "auto (default: model, labels+model with --predictions; none with --universe design)" in text
    assert "labels with --predictions, else none" not in text
    desc = ir_incomplete.StatAP.SUPPORTED_PARAMS["control"].desc
    assert "the default without predictions=" in desc and "estimate(..., control='none')" in desc
    assert "fitted model" in desc


# ---------------------------------------------------------------------------------------------------
# 5. named pipes named in a measure string: read once per evaluation
# ---------------------------------------------------------------------------------------------------
class _Writer:
    """Writes ``data`` once into the named pipe ``path`` from a thread (the reader opens it once)."""

    def __init__(self, path: Path, data: bytes):
        self.path = path
        os.mkfifo(path)
        self.thread = threading.Thread(target=self._write, args=(data,), daemon=True)
        self.thread.start()

    def _write(self, data: bytes) -> None:
        with open(self.path, "wb") as handle:  # blocks until the reader opens the pipe
            handle.write(data)

    def close(self) -> None:
        if self.thread.is_alive():  # the reader never came: open the other end so the thread ends
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            self.thread.join(5)
            os.close(fd)


@pytest.fixture
def pipe(tmp_path):
    writers = []

    def make(source: str) -> str:
        writer = _Writer(tmp_path / f"pipe{len(writers)}", Path(source).read_bytes())
        writers.append(writer)
        return str(writer.path)

    yield make
    for writer in writers:
        writer.close()


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")


@needs_fifo
def test_design_from_a_named_pipe_in_evaluate_with_interval(synth, pipe):
    runs = list(map(str, synth["run_paths"]))
    fifo = pipe(synth["design"])
    args = [str(synth["qrels_path"]), *runs, "--interval", "0.9", "-p", "-1"]
    done = _cli("-m", "ir_incomplete", *args[:5], f"StatAP(design={fifo!r})@10", *args[5:])
    assert done.returncode == 0, done.stderr
    plain = _cli("-m", "ir_incomplete", *args[:5], f"StatAP(design={synth['design']!r})@10", *args[5:])
    strip = [line.split("\t")[:1] + line.split("\t")[2:] for line in done.stdout.splitlines()]
    assert strip == [line.split("\t")[:1] + line.split("\t")[2:] for line in plain.stdout.splitlines()]
    assert len(strip) == 4


@needs_fifo
def test_predictions_from_a_named_pipe_in_a_stat_measure(synth, pipe):
    runs = list(map(str, synth["run_paths"]))
    fifo = pipe(synth["labels"])
    measure = f"StatAP(design={synth['design']!r},predictions={fifo!r})@10"
    done = _cli("-m", "ir_incomplete", str(synth["qrels_path"]), *runs, measure, "--interval", "0.9", "-p", "-1")
    assert done.returncode == 0, done.stderr
    want = estimate(
        synth["runs"], synth["qrels"], synth["design"], "AP@10", predictions=synth["labels"], control="labels"
    )
    lines = [line.split("\t") for line in done.stdout.splitlines()]
    for run, _, value, lo, hi in lines:
        row = want[want["run"] == run].iloc[0]
        assert np.allclose([float(value), float(lo), float(hi)], row[["value", "lo", "hi"]].to_list(), atol=1e-12)


@needs_fifo
def test_design_from_a_named_pipe_in_compare(synth, pipe):
    runs = list(map(str, synth["run_paths"]))
    fifo = pipe(synth["design"])
    done = _cli("-m", "ir_incomplete", "compare", str(synth["qrels_path"]), *runs, f"StatAP(design={fifo!r})@10")
    assert done.returncode == 0, done.stderr
    assert "the design-based interval of the difference" in done.stdout
    # in Python too, through evaluate's per-query and interval passes and compare's pairs
    fifo = pipe(synth["design"])
    code = (
        "import sys, pandas as pd, ir_incomplete\n"
        "runs = {p.rsplit('/', 1)[-1]: p for p in sys.argv[3:]}\n"
        "t = ir_incomplete.compare(runs, sys.argv[1], f'StatAP(design={sys.argv[2]!r})@10', correction='fdr_bh')\n"
        "print(len(t))\n"
    )
    done = _cli("-c", code, str(synth["qrels_path"]), fifo, *runs)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "6"


@needs_fifo
def test_predictions_from_a_named_pipe_in_the_ir_measures_command(synth, pipe):
    run = str(synth["run_paths"][0])
    measure = "BootNDCG(prior=predicted,b=50,predictions={!r})@10"
    plain = _cli("-m", "ir_measures", str(synth["qrels_path"]), run, measure.format(synth["labels"]))
    assert plain.returncode == 0, plain.stderr
    fifo = pipe(synth["labels"])
    done = _cli("-m", "ir_measures", str(synth["qrels_path"]), run, measure.format(fifo))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\t")[-1] == plain.stdout.split("\t")[-1]


def test_named_files_read_once_per_scope(tmp_path):
    from ir_incomplete.data.named_files import evaluation_scope, read_named_file

    path = tmp_path / "f.txt"
    path.write_text("one")
    reads = []

    def reader(p):
        reads.append(p)
        return Path(p).read_text()

    assert read_named_file(str(path), "x", reader) == "one"
    assert read_named_file(str(path), "x", reader) == "one"
    assert len(reads) == 2  # outside a scope every call reads
    with evaluation_scope():
        with evaluation_scope():
            assert read_named_file(str(path), "x", reader) == "one"
        assert read_named_file(str(path), "x", reader) == "one"
        assert len(reads) == 3
        path.write_text("a changed file is read again")
        assert read_named_file(str(path), "x", reader) == "a changed file is read again"
        assert len(reads) == 4
    assert read_named_file(str(path), "x", reader) == "a changed file is read again"
    assert len(reads) == 5  # the scope ended: nothing kept


# ---------------------------------------------------------------------------------------------------
# 6. PyTerrier: the frames of our readers
# ---------------------------------------------------------------------------------------------------
def _covid_frames():
    if not COVID.is_dir():
        pytest.skip("../shared/data/trec-covid-round1 is absent")
    pt = pytest.importorskip("pyterrier", reason="pyterrier is not installed")
    qrels_path = str(COVID / "qrels.round1.txt.gz")
    names = ["BBGhelani1", "BERT"]
    paths = [str(COVID / "runs" / f"{name}.gz") for name in names]
    return pt, qrels_path, names, paths


def test_our_qrels_work_in_pt_experiment_as_they_are():
    pt, qrels_path, names, paths = _covid_frames()
    ours = ir_incomplete.read_trec_qrels(qrels_path)
    assert list(ours.columns) == ["query_id", "doc_id", "relevance"]
    theirs = pt.io.read_qrels(qrels_path)
    systems = [pt.Transformer.from_df(pt.io.read_results(p)) for p in paths]
    topics = pd.DataFrame({"qid": sorted(theirs["qid"].unique(), key=int)}).assign(query="covid")
    metrics = ["map", "P@10", "ndcg_cut_10", "infAP(c=1.5)@10"]
    before = ours.copy()
    for perquery in (False, True):
        got = pt.Experiment(systems, topics, ours, eval_metrics=metrics, names=names, perquery=perquery)
        want = pt.Experiment(systems, topics, theirs, eval_metrics=metrics, names=names, perquery=perquery)
        pd.testing.assert_frame_equal(got, want)
    pd.testing.assert_frame_equal(ours, before)  # not modified
    assert got["value"].gt(0).any()


def test_our_runs_in_pyterrier_through_to_pyterrier():
    pt, qrels_path, names, paths = _covid_frames()
    theirs_q = pt.io.read_qrels(qrels_path)
    topics = pd.DataFrame({"qid": sorted(theirs_q["qid"].unique(), key=int)}).assign(query="covid")
    metrics = ["map", "P@10", "ndcg_cut_10", "infAP(c=1.5)@10"]
    ours = [ir_incomplete.read_trec_run(p) for p in paths]
    with pytest.raises(AssertionError):  # PyTerrier's own check: from_df needs qid
        pt.Transformer.from_df(ours[0])
    frames = [ir_incomplete.to_pyterrier(r) for r in ours]
    theirs = [pt.io.read_results(p) for p in paths]
    for frame, their in zip(frames, theirs, strict=True):
        assert list(frame.columns) == ["qid", "docno", "score", "rank"]
        assert frame[["qid", "docno"]].astype(str).equals(their[["qid", "docno"]].astype(str))
        assert (frame["score"].to_numpy() == their["score"].to_numpy()).all()
        assert (frame["rank"].to_numpy() == their["rank"].to_numpy() - 1).all()  # 0-based, as pt.model.add_ranks
    want = pt.Experiment([pt.Transformer.from_df(t) for t in theirs], topics, theirs_q, metrics, names=names)
    got = pt.Experiment([pt.Transformer.from_df(f) for f in frames], topics, theirs_q, metrics, names=names)
    pd.testing.assert_frame_equal(got, want)
    # a run frame of ours given as results to pt.Experiment, and our qrels: as they are
    direct = pt.Experiment(ours, topics, ir_incomplete.read_trec_qrels(qrels_path), metrics, names=names)
    pd.testing.assert_frame_equal(direct, want)


def test_to_pyterrier_conversions_and_errors():
    run = pd.DataFrame({"query_id": [1, 1, 2], "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, 2.0]})
    frame = ir_incomplete.to_pyterrier(run)
    assert list(frame.columns) == ["qid", "docno", "score", "rank"]
    assert frame["qid"].tolist() == ["1", "1", "2"] and frame["rank"].tolist() == [1, 0, 0]
    assert list(run.columns) == ["query_id", "doc_id", "score"]  # not modified
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [2]})
    assert list(ir_incomplete.to_pyterrier(qrels).columns) == ["qid", "docno", "label"]
    already = pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1.0], "rank": [0]})
    pd.testing.assert_frame_equal(ir_incomplete.to_pyterrier(already), already)
    with pytest.raises(ValueError, match=r"to_pyterrier takes a DataFrame .* not dict"):
        ir_incomplete.to_pyterrier({"1": {"a": 1.0}})
    with pytest.raises(ValueError, match=r"no 'docno' column \(nor 'doc_id'\); columns: \['query_id', 'score'\]"):
        ir_incomplete.to_pyterrier(pd.DataFrame({"query_id": ["1"], "score": [1.0]}))


@pytest.mark.parametrize("order", ["ir_incomplete first", "pyterrier alone"])
def test_pt_experiment_takes_our_qrels_whatever_the_import_order(order, tmp_path):
    pytest.importorskip("pyterrier", reason="pyterrier is not installed")
    imports = {
        "ir_incomplete first": "import ir_incomplete\nimport pyterrier as pt\n",
        "pyterrier alone": "import pyterrier as pt\nimport ir_incomplete\n",
    }[order]
    code = imports + (
        "import pandas as pd\n"
        "qrels = pd.DataFrame({'query_id': ['1', '1'], 'doc_id': ['a', 'b'], 'relevance': [1, 0]})\n"
        "run = pd.DataFrame({'qid': ['1', '1'], 'docno': ['b', 'a'], 'score': [2.0, 1.0]})\n"
        "topics = pd.DataFrame({'qid': ['1'], 'query': ['x']})\n"
        "r = pt.Experiment([pt.Transformer.from_df(run)], topics, qrels, ['map'], names=['r'])\n"
        "print(r['map'].iloc[0])\n"
    )
    done = _cli("-c", code, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == 0.5
