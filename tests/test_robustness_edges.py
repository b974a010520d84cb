"""Robustness toolkit on bad or unusual input: each case gives the right value or a clear error."""

from __future__ import annotations

import os
import re
import signal
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import calls_into_c

from ir_incomplete.robustness import (
    agreement,
    bias,
    kendall_tau,
    pearson,
    rmse,
    spearman,
    swap_rate,
    swap_rates,
    tau_ap,
)

# ---------------------------------------------------------------------------------------------------
# agreement statistics take mappings, paired by run name
# ---------------------------------------------------------------------------------------------------
REFERENCE = {"a": 0.4, "b": 0.1, "c": 0.3, "d": 0.2}
ESTIMATE = {"d": 0.25, "c": 0.05, "b": 0.15, "a": 0.5}  # another key order: pairing is by name


@pytest.mark.parametrize("function", [kendall_tau, tau_ap, spearman, pearson, rmse, bias])
def test_statistics_pair_dicts_by_run_name(function):
    as_series = function(pd.Series(REFERENCE), pd.Series(ESTIMATE))
    assert function(REFERENCE, ESTIMATE) == as_series
    assert function(REFERENCE, pd.Series(ESTIMATE)) == as_series
    ordered = [ESTIMATE[k] for k in REFERENCE]
    assert function(list(REFERENCE.values()), ordered) == as_series


def test_dict_statistics_values():
    # estimate order a > d > b > c, reference a > c > d > b: 6 pairs, (c, d) and (c, b) discordant
    assert kendall_tau(REFERENCE, ESTIMATE) == pytest.approx((4 - 2) / 6)
    assert rmse(REFERENCE, ESTIMATE) == pytest.approx(np.sqrt((0.1**2 + 0.05**2 + 0.25**2 + 0.05**2) / 4))
    assert bias(REFERENCE, ESTIMATE) == pytest.approx((0.1 + 0.05 - 0.25 + 0.05) / 4)
    assert agreement(REFERENCE, ESTIMATE)["tau"] == kendall_tau(REFERENCE, ESTIMATE)


@pytest.mark.parametrize("function", [kendall_tau, tau_ap, spearman, pearson, rmse, bias, agreement])
def test_statistics_refuse_dicts_of_other_runs(function):
    with pytest.raises(ValueError, match=r"different runs: only in x \['b'\], only in y \['e'\]"):
        function({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 1.0, "e": 2.0, "c": 3.0})
    with pytest.raises(ValueError, match="x maps runs to scores but y is a plain sequence"):
        function({"a": 1.0, "b": 2.0}, [1.0, 2.0])
    with pytest.raises(ValueError, match="x is not a vector of scores"):
        function(["0.1", "high"], [1.0, 2.0])


# ---------------------------------------------------------------------------------------------------
# swap rates: the bin width is checked
# ---------------------------------------------------------------------------------------------------
PER_TOPIC = np.random.default_rng(2).random((4, 12))


@pytest.mark.parametrize("width", [1e-300, float("inf"), float("nan"), 0.0, -0.1, "0.1", True])
def test_swap_rates_refuse_bad_bin_widths(width):
    with pytest.raises(ValueError, match=rf"bin_width={width!r} is (not valid|not a number|too small)"):
        swap_rates(PER_TOPIC, 3, trials=10, bin_width=width)


def test_swap_rates_bin_limit_message_says_the_smallest_width():
    from ir_incomplete.robustness.compare import MAX_SWAP_BINS

    largest = float(np.ptp(PER_TOPIC))
    smallest = largest / (MAX_SWAP_BINS - 1)
    with pytest.raises(ValueError, match=f"limit of 1,000,000; use bin_width >= {smallest:.3g}"):
        swap_rates(PER_TOPIC, 3, trials=10, bin_width=largest / MAX_SWAP_BINS)
    fine = swap_rates(PER_TOPIC, 3, trials=10, bin_width=smallest * 1.01)
    assert fine["comparisons"].sum() == 6 * 10
    relative = swap_rates(PER_TOPIC, 3, trials=10, bin_width=0.01, relative=True)
    assert relative["comparisons"].sum() == 6 * 10


@pytest.mark.parametrize("minimum", [float("inf"), float("nan"), -1.0])
def test_swap_rate_refuses_bad_minimum(minimum):
    with pytest.raises(ValueError, match="min_difference=.* is not valid"):
        swap_rate(PER_TOPIC, 3, trials=10, min_difference=minimum)


def test_swap_rate_with_a_tiny_minimum_counts_every_nonzero_difference():
    everything = swap_rate(PER_TOPIC, 3, trials=50, seed=1)
    assert swap_rate(PER_TOPIC, 3, trials=50, seed=1, min_difference=1e-300) == everything
    table = swap_rates(PER_TOPIC, 3, trials=50, seed=1)
    assert everything == table["swaps"].sum() / table["comparisons"].sum()


# ---------------------------------------------------------------------------------------------------
# bootstrap test: resamples drawn block by block
# ---------------------------------------------------------------------------------------------------
SCORES = np.random.default_rng(11).random((4, 15))


def test_bootstrap_memory_does_not_grow_with_b(monkeypatch):
    import tracemalloc

    from ir_incomplete.robustness import pairwise_tests, significance

    monkeypatch.setattr(significance, "_CHUNK_ELEMENTS", 20_000)
    tracemalloc.start()
    try:
        pairwise_tests(SCORES, "bootstrap", B=100_000, seed=3)  # all resample indices at once: 12 MB
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3_000_000


@pytest.mark.parametrize(
    "chunk, B", [(90, 2000), (7_000, 2000), (2_000_000, 2000), (50_000, 100_000), (2_000_000, 100_000)]
)
def test_bootstrap_p_values_do_not_depend_on_the_block_size(monkeypatch, chunk, B):
    from ir_incomplete.robustness import pairwise_tests, significance

    monkeypatch.setattr(significance, "_CHUNK_ELEMENTS", chunk)
    # the p-values of drawing every resample at once (as earlier versions did), for this seed
    expected = {
        2000: [0.1015, 0.9175, 0.8695, 0.216, 0.1185, 0.8105],
        100_000: [0.10032, 0.91994, 0.87516, 0.19779, 0.11594, 0.79671],
    }
    assert pairwise_tests(SCORES, "bootstrap", B=B, seed=3)["p_value"].tolist() == expected[B]


# ---------------------------------------------------------------------------------------------------
# samples that must hold min_relevant relevant documents
# ---------------------------------------------------------------------------------------------------
def _qrels(spec):
    """``spec``: {topic: (relevant, nonrelevant)} → qrels with ``r…`` relevant and ``n…`` other documents."""
    rows = [(t, f"r{i:04d}", 1) for t, (r, _) in spec.items() for i in range(r)]
    rows += [(t, f"n{i:04d}", 0) for t, (_, n) in spec.items() for i in range(n)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def test_sample_with_a_rare_constraint_is_drawn_directly():
    from ir_incomplete.robustness import sample_judgments

    qrels = _qrels({"q": (5, 2995), "easy": (50, 50)})
    # counted in steps, not seconds (a busy machine): about 2,500 calls into numpy and pandas; 100,000
    # rejection rounds (more than 200,000 calls, 26 s) before, and then an error
    out, steps = calls_into_c(lambda: sample_judgments(qrels, 0.01, 7, min_relevant=5, unjudged="drop"), 50_000)
    assert steps < 50_000
    q = out[out["query_id"] == "q"]
    assert len(q) == 30 and (q["relevance"] == 1).sum() == 5  # k = 30 of 3,000; every relevant one
    assert len(out[out["query_id"] == "easy"]) == 5
    again = sample_judgments(qrels, 0.01, 7, min_relevant=5, unjudged="drop")
    pd.testing.assert_frame_equal(out, again)  # seeded
    other = sample_judgments(qrels, 0.01, 8, min_relevant=5, unjudged="drop")
    assert set(other.loc[other["query_id"] == "q", "doc_id"]) != set(q["doc_id"])


def _exact_conditional(n, r, k, m):
    from scipy.stats import hypergeom

    x = np.arange(m, min(r, k) + 1)
    p = hypergeom(n, r, k).pmf(x)
    return x, p / p.sum()


@pytest.mark.parametrize("rounds", [0, 100])
def test_sample_distribution_is_the_conditioned_uniform_sample(monkeypatch, rounds):
    """Many identical topics in one call: the number of relevant documents kept follows the
    hypergeometric law truncated to X ≥ min_relevant, whether drawn by rejection or directly (rounds=0),
    and every document of a class is equally likely."""
    from scipy.stats import chisquare

    from ir_incomplete.robustness import degrade, sample_judgments

    monkeypatch.setattr(degrade, "_REJECTION_ROUNDS", rounds)
    topics = 4000
    qrels = _qrels({f"t{i:04d}": (4, 16) for i in range(topics)})  # n = 20, r = 4
    out = sample_judgments(qrels, 0.25, 11, min_relevant=2, unjudged="drop")  # k = 5, m = 2
    assert (out.groupby("query_id").size() == 5).all()
    x, p = _exact_conditional(20, 4, 5, 2)
    got = out.groupby("query_id")["relevance"].sum().value_counts().reindex(x, fill_value=0)
    assert chisquare(got.to_numpy(), p * topics).pvalue > 1e-4
    per_doc = out.groupby("doc_id").size()
    relevant_mean = topics * float((x * p).sum()) / 4  # expected draws of each relevant document
    np.testing.assert_allclose(per_doc[[f"r{i:04d}" for i in range(4)]], relevant_mean, rtol=0.05)
    nonrelevant_mean = topics * float(((5 - x) * p).sum()) / 16
    np.testing.assert_allclose(per_doc[[f"n{i:04d}" for i in range(16)]], nonrelevant_mean, rtol=0.12)


def _rejection_only(qrels, fraction, seed, min_relevant):
    """Earlier versions' draw: rejection only, without a bound on the rounds (``unjudged="drop"``)."""
    from ir_incomplete.robustness import degrade

    judg = degrade._judgments(qrels)
    rng = np.random.default_rng(seed)
    idx = np.flatnonzero(judg.grades >= 0)
    t = judg.topic[idx]
    relevant = judg.grades[idx] >= 1
    n_t = np.bincount(t, minlength=judg.n_topics)
    r_t = np.bincount(t[relevant], minlength=judg.n_topics)
    k_t = np.minimum(n_t, np.maximum(degrade.round_half_up(fraction * n_t), min_relevant))
    feasible = (r_t >= min_relevant) & (k_t >= min_relevant)
    keys = rng.random(len(idx))
    chosen = degrade._rank_within(t, keys) < k_t[t]
    rounds = 0
    while True:
        got = np.bincount(t[chosen & relevant], minlength=judg.n_topics)
        bad = feasible & (got < min_relevant)
        if not bad.any():
            break
        rounds += 1
        redo = np.flatnonzero(bad[t])
        keys[redo] = rng.random(len(redo))
        chosen[redo] = degrade._rank_within(t[redo], keys[redo]) < k_t[t[redo]]
    kept = np.zeros(len(judg.grades), dtype=bool)
    kept[idx[chosen]] = True
    return judg.result(kept, kept, "drop"), rounds


def test_sample_is_unchanged_where_rejection_settles_within_100_rounds():
    from ir_incomplete.robustness import sample_judgments

    qrels = _qrels({"a": (3, 97), "b": (1, 60), "c": (10, 10), "d": (0, 20), "e": (2, 300)})
    compared = 0
    for seed in range(40):
        for fraction, minimum in ((0.05, 1), (0.1, 2), (0.3, 1)):
            old, rounds = _rejection_only(qrels, fraction, seed, minimum)
            if rounds <= 100:
                new = sample_judgments(qrels, fraction, seed, min_relevant=minimum, unjudged="drop")
                pd.testing.assert_frame_equal(new, old)
                compared += 1
    assert compared >= 100


# ---------------------------------------------------------------------------------------------------
# leave one group out: every run needs a group name
# ---------------------------------------------------------------------------------------------------
def _tiny_runs():
    rows = lambda shift: pd.DataFrame(  # noqa: E731
        {"query_id": ["1"] * 4, "doc_id": ["a", "b", "c", "d"], "score": [4.0 - shift, 3.0, 2.0 + shift, 1.0]}
    )
    runs = {f"r{i}": rows(i * 0.6) for i in range(3)}
    qrels = pd.DataFrame({"query_id": "1", "doc_id": ["a", "b", "c", "d"], "relevance": [1, 0, 1, 0]})
    return runs, qrels


@pytest.mark.parametrize("missing", [None, float("nan"), pd.NA, "", "  "])
def test_logo_refuses_a_missing_group_naming_the_run(missing):
    from ir_incomplete.robustness import leave_one_group_out, robustness_study

    runs, qrels = _tiny_runs()
    groups = {"r0": "A", "r1": missing, "r2": "B"}
    with pytest.raises(ValueError, match=r"no group name \(a missing or empty value\) for runs \['r1'\]"):
        leave_one_group_out(qrels, runs, groups, "A", 2)
    with pytest.raises(ValueError, match=r"for runs \['r1'\]"):
        robustness_study(runs, qrels, ["AP"], method="logo", options={"groups": groups}, progress=False)
    frame = pd.DataFrame({"run": ["r0", "r1", "r2"], "group": ["A", missing, "B"]})
    with pytest.raises(ValueError, match=r"for runs \['r1'\]"):
        leave_one_group_out(qrels, runs, frame, "A", 2)
    with pytest.raises(ValueError, match="without a run name"):
        leave_one_group_out(qrels, runs, pd.Series(["A", "B"], index=["r0", missing]), "A", 2)


def test_logo_refuses_two_groups_for_one_run():
    from ir_incomplete.robustness import leave_one_group_out

    runs, qrels = _tiny_runs()
    frame = pd.DataFrame({"run": ["r0", "r1", "r2", "r1"], "group": ["A", "A", "B", "B"]})
    with pytest.raises(ValueError, match="run 'r1' two groups: 'A' and 'B'"):
        leave_one_group_out(qrels, runs, frame, "A", 2)


def _write(tmp_path, runs, qrels):
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels.itertuples(index=False)))
    run_dir = tmp_path / "runs"
    run_dir.mkdir()
    for name, run in runs.items():
        lines = [f"{q} Q0 {d} {i} {s!r} {name}\n" for i, (q, d, s) in enumerate(run.itertuples(index=False))]
        (run_dir / name).write_text("".join(lines))
    return qrels_path, run_dir


@pytest.mark.parametrize(
    "csv, message",
    [
        ("run,team\nr0,A\nr1,\nr2,B\n", r"no group \('team'\) for runs \['r1'\] \(empty cell in data row 2\)"),
        ("run,team\nr0,A\n,B\nr1,A\nr2,B\n", r"no run name \(empty cell in data row 2\)"),
        ("run,team\nr0,A\nr1,A\nr2,B\nr1,B\n", "gives run 'r1' two groups: 'A' and 'B'"),
    ],
)
def test_cli_logo_refuses_missing_groups(tmp_path, capsys, csv, message):
    from ir_incomplete.cli.robustness import main

    qrels_path, run_dir = _write(tmp_path, *_tiny_runs())
    groups = tmp_path / "groups.csv"
    groups.write_text(csv)
    args = ["--qrels", str(qrels_path), "--runs", str(run_dir), "--measures", "AP", "--method", "logo"]
    args += ["--groups", str(groups), "--group-column", "team", "--out", str(tmp_path / "o"), "--no-progress"]
    assert main(args) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("ir_incomplete robustness: error: --groups:")
    assert sum("error" in line for line in err) == 1  # the usage, then one error line
    assert re.search(message, err[-1])
    assert not (tmp_path / "o").exists()


def test_cli_logo_keeps_a_team_called_na(tmp_path):
    from ir_incomplete.cli.robustness import main

    qrels_path, run_dir = _write(tmp_path, *_tiny_runs())
    groups = tmp_path / "groups.csv"
    groups.write_text("run,group\nr0,NA\nr1,NA\nr2,B\n")
    args = ["--qrels", str(qrels_path), "--runs", str(run_dir), "--measures", "AP", "--method", "logo"]
    args += ["--groups", str(groups), "--out", str(tmp_path / "o"), "--no-progress", "--no-plots"]
    assert main(args) == 0
    import json

    assert json.loads((tmp_path / "o" / "manifest.json").read_text())["groups"] == {"r0": "NA", "r1": "NA", "r2": "B"}


# ---------------------------------------------------------------------------------------------------
# study parameters
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "method, levels, shown",
    [("sample", [0.5, 0.5], "0.5"), ("sample", [0.5, 1, 0.50, 1.0], "0.5, 1.0"), ("depth", [5, 5], "5")],
)
def test_study_refuses_duplicate_levels(method, levels, shown):
    from ir_incomplete.robustness import robustness_study

    runs, qrels = _tiny_runs()
    with pytest.raises(ValueError, match=f"levels lists {shown} more than once"):
        robustness_study(runs, qrels, ["AP"], method=method, levels=levels, repeats=1, progress=False)


def test_cli_refuses_duplicate_levels(tmp_path, capsys):
    from ir_incomplete.cli.robustness import main

    qrels_path, run_dir = _write(tmp_path, *_tiny_runs())
    args = ["--qrels", str(qrels_path), "--runs", str(run_dir), "--measures", "AP", "--levels", "0.5,0.3,0.5"]
    assert main([*args, "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    assert "error: levels lists 0.5 more than once" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_study_compares_both_sides_on_the_topics_the_degradation_keeps():
    """unjudged='drop' with min_relevant=0 removes topic t0 (5 judgments at 5 % → 0 kept): NumRet, which
    ignores the judgments, must then agree exactly with its full-judgment value on the kept topics."""
    from ir_incomplete import evaluate
    from ir_incomplete.robustness import robustness_study

    qrels = pd.DataFrame(
        [(f"t{t}", f"d{d}", d % 2) for t in range(3) for d in range(5 if t == 0 else 40)],
        columns=["query_id", "doc_id", "relevance"],
    )
    runs = {
        f"r{i}": pd.DataFrame(
            [(f"t{t}", f"d{d}", float(-d)) for t in range(3) for d in range(10 + 3 * i + 7 * i * (t == 0))],
            columns=["query_id", "doc_id", "score"],
        )
        for i in range(3)
    }
    options = {"unjudged": "drop", "min_relevant": 0}
    result = robustness_study(runs, qrels, ["NumRet", "P@5"], levels=[0.05], repeats=1, progress=False, options=options)
    numret = result.stats.set_index("measure").loc["NumRet"]
    assert numret["rmse"] == 0.0 and numret["bias"] == 0.0 and numret["tau"] == 1.0 and numret["rmse_topic"] == 0.0
    scores = result.scores.set_index(["measure", "run"])
    assert scores.loc["NumRet", "value"].tolist() == [20.0, 26.0, 32.0]  # t1 and t2: 10 + 3i each
    assert scores.loc["NumRet", "reference"].tolist() == [20.0, 26.0, 32.0]
    full = evaluate(runs, qrels, ["NumRet", "P@5"], per_query=True)
    kept = full[full["query_id"] != "t0"].groupby(["measure", "run"])["value"]
    np.testing.assert_array_equal(scores.loc["P@5", "reference"], kept.mean().loc["P@5"])  # mean over t1, t2
    reference = result.reference.set_index(["measure", "run"])["value"]
    assert reference.loc["NumRet"].tolist() == [30.0, 46.0, 62.0]  # the full-judgment frame: all topics


# ---------------------------------------------------------------------------------------------------
# command line outputs
# ---------------------------------------------------------------------------------------------------
@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_cli_outputs_get_the_umask_permissions(tmp_path, umask):
    from ir_incomplete.cli.robustness import main

    qrels_path, run_dir = _write(tmp_path, *_tiny_runs())
    out = tmp_path / "o"
    old = os.umask(umask)
    try:
        args = ["--qrels", str(qrels_path), "--runs", str(run_dir), "--measures", "AP", "--levels", "0.5"]
        assert main([*args, "--repeats", "1", "--out", str(out), "--no-progress"]) == 0
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()}
    assert "robustness_tau.png" in modes and "stats.csv" in modes and "manifest.json" in modes
    assert set(modes.values()) == {0o666 & ~umask}, modes


# ---------------------------------------------------------------------------------------------------
# interrupted studies, resumed
# ---------------------------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _ctrl_c_raises():
    """The Ctrl-C tests need Python's own SIGINT handler: a process started in the background by a
    non-interactive shell (``cmd &``) inherits SIGINT ignored, and Python then leaves it ignored, so a
    SIGINT would be lost and the tests would fail for a reason that is not the code's."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _sigint_default_in_child() -> None:
    """``preexec_fn`` of a child that must react to Ctrl-C however its parent was started."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="module")
def collection():
    """5 runs × 6 topics over 60 documents, graded judgments of 40 documents per topic."""
    rng = np.random.default_rng(7)
    qrels = pd.DataFrame(
        [(f"t{t}", f"doc{d:02d}", int(rng.choice([0, 0, 0, 1, 2]))) for t in range(6) for d in range(40)],
        columns=["query_id", "doc_id", "relevance"],
    )
    runs = {}
    for r in range(5):
        rows = [
            (f"t{t}", f"doc{d:02d}", float(100 - k - r * 0.1 * (d % 3)))
            for t in range(6)
            for k, d in enumerate(rng.permutation(60)[:45])
        ]
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs, qrels


STUDIES = [
    dict(method="sample", levels=[0.2, 0.5, 1.0], repeats=3, seed=4, reference="AP"),
    dict(
        method="logo", levels=[5], options={"groups": {"run0": "a", "run1": "a", "run2": "b", "run3": "c", "run4": "c"}}
    ),
]


def _interrupt_after(monkeypatch, cells):
    """Make the grid stop with Ctrl-C after ``cells`` cells (sequential grid)."""
    from ir_incomplete.robustness import study

    real, calls = study._run_task, []

    def run_task(ctx, task):
        if len(calls) == cells:
            raise KeyboardInterrupt
        calls.append(task)
        return real(ctx, task)

    monkeypatch.setattr(study, "_run_task", run_task)
    return calls


@pytest.mark.parametrize("kwargs", STUDIES, ids=["sample", "logo"])
def test_study_interrupted_and_resumed_equals_an_uninterrupted_one(tmp_path, monkeypatch, collection, kwargs):
    from ir_incomplete.robustness import StudyInterrupted, robustness_study

    runs, qrels = collection
    measures = ["AP", "infAP", "NumRet"]
    whole = robustness_study(runs, qrels, measures, progress=False, **kwargs)
    cells = tmp_path / "cells"
    _interrupt_after(monkeypatch, 2)
    with pytest.raises(StudyInterrupted) as caught:
        robustness_study(runs, qrels, measures, progress=False, checkpoint=cells, **kwargs)
    total = 7 if kwargs["method"] == "sample" else 3  # fraction 1 is one cell; logo: one cell per group
    assert (caught.value.finished, caught.value.total, caught.value.checkpoint) == (2, total, str(cells))
    assert isinstance(caught.value, KeyboardInterrupt)
    assert len(list(cells.glob("cell-*.npz"))) == 2 and (cells / "study.json").exists()
    monkeypatch.undo()
    calls = _interrupt_after(monkeypatch, 1000)
    resumed = robustness_study(runs, qrels, measures, progress=False, resume=cells, **kwargs)
    assert len(calls) == total - 2  # only the missing cells
    for got, expected in zip(resumed, whole, strict=True):
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert resumed.stats.attrs == whole.stats.attrs
    assert len(list(cells.glob("cell-*.npz"))) == total
    calls.clear()
    again = robustness_study(runs, qrels, measures, progress=False, resume=cells, **kwargs)
    assert calls == []  # everything on disk
    pd.testing.assert_frame_equal(again.stats, whole.stats, check_exact=True)


def test_study_interrupted_in_worker_processes_keeps_finished_cells(tmp_path, monkeypatch, collection):
    """Ctrl-C while two worker processes run: the study stops the workers and raises at once."""
    import threading
    import time

    from ir_incomplete.robustness import StudyInterrupted, robustness_study, study

    runs, qrels = collection
    cells = tmp_path / "cells"
    real_save = study._execute
    sent = threading.Event()
    saved_after = []  # cells whose saving began once the Ctrl-C had been sent

    def ctrl_c():
        time.sleep(0.05)  # lands while the study waits for its workers
        os.kill(os.getpid(), signal.SIGINT)
        sent.set()

    def interrupt_when_a_cell_is_saved(*args, done=None, **kwargs):
        def save(i, result):
            if sent.is_set():
                saved_after.append(i)
            done(i, result)
            if len(list(cells.glob("cell-*.npz"))) == 1:
                threading.Thread(target=ctrl_c).start()

        return real_save(*args, done=save, **kwargs)

    monkeypatch.setattr(study, "_execute", interrupt_when_a_cell_is_saved)
    with pytest.raises(StudyInterrupted) as caught:
        robustness_study(runs, qrels, ["AP"], levels=[0.3], repeats=400, n_jobs=2, progress=False, checkpoint=cells)
    finished = caught.value.finished
    assert 1 <= finished < 400 and len(list(cells.glob("cell-*.npz"))) == finished
    # it stopped at once, not after the cells still queued: at most the cells the two workers handed in
    # before the interrupt reached the waiting study (counted in cells, not seconds: a busy machine)
    assert len(saved_after) <= 2, saved_after
    assert not [p for p in cells.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(levels=[0.2, 0.5]), r"levels \(\[0.2, 0.5, 1.0\] there, \[0.2, 0.5\] here\)"),
        (dict(seed=5), r"seed \(4 there, 5 here\)"),
        (dict(repeats=2), r"repeats \(3 there, 2 here\)"),
        (dict(measures=["AP"]), r'measures \(\["AP", "infAP", "NumRet"\] there, \["AP"\] here\)'),
        (dict(reference=None), r'reference \("AP" there, null here\)'),
        (dict(options={"unjudged": "drop"}), r'options \(\{\} there, \{"unjudged": "drop"\} here\)'),
        (dict(qrels="other"), r"qrels \(other judgments\)"),
        (dict(runs="fewer"), r"runs \(only there: \['run4'\]\)"),
        (dict(runs="changed"), r"runs \(changed: \['run1'\]\)"),
        (dict(negative="pooled_unjudged", score_precision="float64"), r'score_precision \("float32" there'),
    ],
)
def test_resume_refuses_other_parameters(tmp_path, monkeypatch, collection, change, message):
    from ir_incomplete.robustness import StudyInterrupted, robustness_study

    runs, qrels = collection
    kwargs = dict(STUDIES[0], measures=["AP", "infAP", "NumRet"])
    cells = tmp_path / "cells"
    _interrupt_after(monkeypatch, 1)
    with pytest.raises(StudyInterrupted):
        robustness_study(runs, qrels, progress=False, checkpoint=cells, **kwargs)
    monkeypatch.undo()
    kwargs.update(change)
    if change.get("qrels") == "other":
        kwargs["qrels"] = qrels.assign(relevance=qrels["relevance"].iloc[::-1].to_numpy())
    if change.get("runs") == "fewer":
        kwargs["runs"] = {k: v for k, v in runs.items() if k != "run4"}
    if change.get("runs") == "changed":
        kwargs["runs"] = dict(runs, run1=runs["run1"].assign(score=runs["run1"]["score"] + 1))
    kwargs.setdefault("runs", runs)
    kwargs.setdefault("qrels", qrels)
    with pytest.raises(ValueError, match="holds a study run with other parameters.*" + message):
        robustness_study(progress=False, resume=cells, **kwargs)
    assert len(list(cells.glob("cell-*.npz"))) == 1  # untouched


def test_resume_and_checkpoint_misuse(tmp_path, monkeypatch, collection):
    from ir_incomplete.robustness import StudyInterrupted, robustness_study

    runs, qrels = collection
    with pytest.raises(ValueError, match="holds no study to resume"):
        robustness_study(runs, qrels, ["AP"], progress=False, resume=tmp_path)
    with pytest.raises(ValueError, match="no such folder"):
        robustness_study(runs, qrels, ["AP"], progress=False, resume=tmp_path / "none")
    _interrupt_after(monkeypatch, 1)
    with pytest.raises(StudyInterrupted):
        robustness_study(runs, qrels, ["AP"], levels=[0.5], repeats=2, progress=False, checkpoint=tmp_path / "c")
    monkeypatch.undo()
    with pytest.raises(ValueError, match="already holds cells of a study: pass resume= to continue it"):
        robustness_study(runs, qrels, ["AP"], levels=[0.5], repeats=2, progress=False, checkpoint=tmp_path / "c")
    # a cell file that cannot be read is computed again
    cell = next((tmp_path / "c").glob("cell-*.npz"))
    cell.write_bytes(b"PK\x03\x04 truncated")
    whole = robustness_study(runs, qrels, ["AP"], levels=[0.5], repeats=2, progress=False)
    again = robustness_study(runs, qrels, ["AP"], levels=[0.5], repeats=2, progress=False, resume=tmp_path / "c")
    pd.testing.assert_frame_equal(again.stats, whole.stats, check_exact=True)


# ---------------------------------------------------------------------------------------------------
# command line: interrupt, resume, validation before the study
# ---------------------------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[1]


def _cli(qrels_path, run_dir, out, *extra):
    args = ["--qrels", str(qrels_path), "--runs", str(run_dir), "--measures", "AP", "infAP", "--levels", "0.2,0.5"]
    return [*args, "--repeats", "3", "--seed", "4", "--out", str(out), "--no-progress", *extra]


def _outputs(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "manifest.json"}


def test_cli_interrupted_then_resumed_gives_the_same_files(tmp_path, monkeypatch, capsys, collection):
    import json
    import shlex

    from ir_incomplete.cli.robustness import main

    qrels_path, run_dir = _write(tmp_path, *collection)
    whole = tmp_path / "whole"
    assert main(_cli(qrels_path, run_dir, whole)) == 0
    capsys.readouterr()
    out = tmp_path / "out"
    _interrupt_after(monkeypatch, 2)
    assert main(_cli(qrels_path, run_dir, out, "--overwrite")) == 130
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert len(err) == 1 and captured.out == ""
    assert err[0].startswith(f"ir_incomplete robustness: interrupted; 2 of 6 grid cells saved in {out / 'cells'}")
    command = err[0].split("; resume with: ", 1)[1]
    assert command == shlex.join(["ir_incomplete", "robustness", *_cli(qrels_path, run_dir, out), "--resume"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is False and manifest["cells"] == {"folder": "cells", "finished": 2, "total": 6}
    assert len(list((out / "cells").glob("cell-*.npz"))) == 2
    monkeypatch.undo()
    calls = _interrupt_after(monkeypatch, 1000)
    assert main(shlex.split(command)[2:]) == 0
    assert len(calls) == 4  # only the missing cells
    assert _outputs(out) == _outputs(whole)  # byte for byte: CSV files and plots
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is True and len(manifest["resumed"]) == 1 and "cells" not in manifest


def test_cli_resume_refuses_other_options_or_data(tmp_path, monkeypatch, capsys, collection):
    from ir_incomplete.cli.robustness import main

    qrels_path, run_dir = _write(tmp_path, *collection)
    out = tmp_path / "out"
    _interrupt_after(monkeypatch, 1)
    assert main(_cli(qrels_path, run_dir, out)) == 130
    monkeypatch.undo()
    capsys.readouterr()
    before = _outputs(out / "cells")
    assert main(_cli(qrels_path, run_dir, out, "--resume", "--seed", "5", "--method", "stratified")) == 2
    err = capsys.readouterr().err
    assert "the study in" in err and '--method ("sample" there, "stratified" here); --seed (4 there, 5 here)' in err
    assert main(_cli(qrels_path, run_dir, out)) == 2  # no --resume: the folder is not empty
    assert "it holds an unfinished study: add --resume to continue it, or --overwrite" in capsys.readouterr().err
    qrels_path.write_text(qrels_path.read_text().replace(" 0\n", " 1\n", 5))
    assert main(_cli(qrels_path, run_dir, out, "--resume")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "other parameters" in err and "qrels (other judgments)" in err
    assert main(_cli(qrels_path, run_dir, out, "--resume", "--overwrite")) == 2
    assert "give one of them" in capsys.readouterr().err
    assert main(_cli(qrels_path, run_dir, tmp_path / "none", "--resume")) == 2
    assert "nothing to resume" in capsys.readouterr().err
    assert _outputs(out / "cells") == before  # untouched


@pytest.mark.parametrize("measure", ["nDCG@x", "NoSuchMeasure", "AP@0"])
def test_cli_bad_measure_stops_before_touching_out(tmp_path, capsys, collection, measure):
    """A measure that fails to parse: one line, exit 2, and the previous study in --out is left whole,
    even with --overwrite."""
    import json

    from ir_incomplete.cli.robustness import main

    qrels_path, run_dir = _write(tmp_path, *collection)
    out = tmp_path / "out"
    assert main(_cli(qrels_path, run_dir, out, "--no-plots")) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    args = _cli(qrels_path, run_dir, out, "--overwrite")
    args[args.index("infAP")] = measure
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ir_incomplete robustness: error:")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert json.loads(before["manifest.json"])["complete"] is True
    args = _cli(qrels_path, run_dir, tmp_path / "new", "--reference", measure)
    assert main(args) == 2
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("measure", ["SDCG@10", "INST(T=1)", "BPM(T=1,min_rel=1)"])
def test_cli_measure_another_provider_cannot_evaluate(tmp_path, capsys, monkeypatch, collection, measure):
    """Measures handed to other providers without a parameter they need: one line naming the measure,
    exit 2, no manifest left, and no grid cell computed."""
    from ir_incomplete.cli.robustness import main

    qrels_path, run_dir = _write(tmp_path, *collection)
    calls = _interrupt_after(monkeypatch, 1000)
    args = _cli(qrels_path, run_dir, tmp_path / "o", "--reference", "AP")
    args[args.index("infAP")] = measure
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ir_incomplete robustness: error:")
    assert "measure" in err and ("SDCG" in err or "INST" in err or "BPM" in err)
    assert calls == [] and not (tmp_path / "o").exists()


def _children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_cli_ctrl_c_with_worker_processes(tmp_path, collection):
    """SIGINT to ``python -m ir_incomplete robustness ... --n-jobs 2``: exit 130 without finishing the grid,
    one line on stderr saying how to resume, the finished cells on disk, the workers gone."""
    import json
    import subprocess
    import sys
    import time

    qrels_path, run_dir = _write(tmp_path, *collection)
    out = tmp_path / "out"
    args = _cli(qrels_path, run_dir, out, "--n-jobs", "2", "--no-plots")
    args[args.index("--repeats") + 1] = "3000"  # far longer than the test waits
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-m", "ir_incomplete", "robustness", *args]
    study = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_sigint_default_in_child,
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and study.poll() is None:
            if (out / "cells").is_dir() and any((out / "cells").glob("cell-*.npz")):
                break
            time.sleep(0.05)
        assert study.poll() is None, study.communicate()
        workers = _children(study.pid)
        assert len(workers) >= 2
        study.send_signal(signal.SIGINT)
        # a generous deadline, not a measured duration (a busy machine): a study that went on with its grid
        # would miss it, or exit 0 with all 6000 cells on disk
        stdout, stderr = study.communicate(timeout=120)
    finally:
        if study.poll() is None:
            study.kill()
            study.wait()
    assert study.returncode == 130, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("ir_incomplete robustness: interrupted; ")
    assert (
        lines[0].endswith(" --n-jobs 2 --no-plots --resume")
        and "resume with: ir_incomplete robustness --qrels" in lines[0]
    )
    on_disk = len(list((out / "cells").glob("cell-*.npz")))
    assert 1 <= on_disk < 6000
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is False and manifest["cells"]["finished"] == on_disk
    assert manifest["cells"]["total"] == 6000
    assert f"{on_disk} of 6000 grid cells saved in" in lines[0]
    assert not [w for w in workers if _alive(w)], "worker processes outlived the interrupted study"


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------------
# tau_ap of tied runs
# ---------------------------------------------------------------------------------------------------
def test_tied_runs_give_tau_ap_below_one_and_the_summary_says_why(tmp_path, capsys, collection):
    import json

    from ir_incomplete.cli.robustness import main
    from ir_incomplete.robustness import robustness_study

    runs, qrels = collection
    runs = dict(runs, copy=runs["run0"].copy())  # a run tied with run0 under every measure
    result = robustness_study(runs, qrels, ["AP"], levels=[1.0], repeats=1, progress=False)
    row = result.stats.iloc[0]
    assert row["tau"] == 1.0
    # 6 runs, one tie: the tied pair counts 1/2 wherever it is walked, so tau_ap = tau_ap(x, x) < 1
    reference = result.reference.set_index("run")["value"]
    assert row["tau_ap"] == pytest.approx(tau_ap(reference, reference), abs=1e-15)
    assert 0.9 < row["tau_ap"] < 1.0
    qrels_path, run_dir = _write(tmp_path, runs, qrels)
    args = ["--qrels", str(qrels_path), "--runs", str(run_dir), "--measures", "AP", "--levels", "1", "--repeats", "1"]
    assert main([*args, "--out", str(tmp_path / "o"), "--no-progress", "--no-plots"]) == 0
    out = capsys.readouterr().out
    note = "note: tied runs on the full judgments (2 runs under AP): tau_ap < 1 even where the rankings agree"
    assert note in out and "Kendall's tau (tau-b) discounts ties and can still be 1" in out
    assert json.loads((tmp_path / "o" / "manifest.json").read_text())["notes"][0].startswith(note)
    (run_dir / "copy").unlink()  # no tie: no note
    assert main([*args, "--out", str(tmp_path / "p"), "--no-progress", "--no-plots"]) == 0
    assert "note:" not in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------------
# plot axes
# ---------------------------------------------------------------------------------------------------
def _stats(levels, method, repeats=1):
    rows = [
        {"measure": m, "level": level, "repeat": r, "tau": 0.5 + 0.01 * i + 0.001 * r}
        for m in ("AP", "infAP")
        for i, level in enumerate(levels)
        for r in range(repeats)
    ]
    stats = pd.DataFrame(rows)
    stats.attrs["method"] = method
    return stats


def _axis(fig):
    ax = fig.axes[0]
    fig.canvas.draw()  # the locators run when the figure is drawn
    return list(ax.get_xticks()), ax.get_xlim(), [t.get_text() for t in ax.get_xticklabels()]


@pytest.mark.parametrize("method", ["depth", "mixed", "logo"])
def test_plot_single_integer_level(method):
    pytest.importorskip("matplotlib")
    from ir_incomplete.robustness import plot_robustness

    ticks, limits, labels = _axis(plot_robustness(_stats([10], method)))
    assert ticks == [10.0] and labels == ["10"]
    assert limits == (5.0, 15.0)  # not 9.6 to 10.4
    ticks, limits, _ = _axis(plot_robustness(_stats([1], method)))
    assert ticks == [1.0] and limits == (0.0, 2.0)


def test_plot_integer_depths_get_integer_ticks():
    pytest.importorskip("matplotlib")
    from ir_incomplete.robustness import plot_robustness

    ticks, limits, labels = _axis(plot_robustness(_stats([1, 5, 10], "depth")))
    assert ticks == [1.0, 5.0, 10.0] and labels == ["1", "5", "10"]  # no tick at 2.5
    assert limits[0] < 1 and limits[1] > 10
    many = list(range(1, 31, 2))  # 15 depths: matplotlib's integer ticks
    ticks, limits, _ = _axis(plot_robustness(_stats(many, "depth")))
    inside = [t for t in ticks if limits[0] <= t <= limits[1]]
    assert len(inside) >= 3 and all(float(t).is_integer() for t in inside)
    ticks, _, labels = _axis(plot_robustness(_stats([1, 10, 100], "depth"), logx=True))
    assert ticks == [1.0, 10.0, 100.0] and labels == ["1", "10", "100"]


def test_plot_single_fraction_level():
    pytest.importorskip("matplotlib")
    from ir_incomplete.robustness import plot_robustness

    ticks, limits, labels = _axis(plot_robustness(_stats([0.3], "sample", repeats=3)))
    assert ticks == [30.0] and limits == (15.0, 45.0) and labels == ["30"]
    ticks, limits, _ = _axis(plot_robustness(_stats([0.05, 0.1, 0.3, 1.0], "sample")))
    assert limits[0] < 5 and limits[1] > 100  # several fractions: matplotlib's own ticks


@pytest.mark.parametrize("twice", [["infAP", "infAP"], ["NumRel", "NumRel(rel=1)"]])
def test_cli_refuses_a_measure_listed_twice(tmp_path, capsys, collection, twice):
    """Two spellings of one canonical measure would be two columns of one key: refused before --out."""
    from ir_incomplete.cli.robustness import main

    qrels_path, run_dir = _write(tmp_path, *collection)
    args = _cli(qrels_path, run_dir, tmp_path / "o", "--reference", "AP")
    at = args.index("infAP")
    args[at : at + 1] = twice
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "lists a measure twice" in err
    assert not (tmp_path / "o").exists()


def test_a_cell_is_saved_and_counted_together_even_when_ctrl_c_lands_inside(tmp_path, monkeypatch):
    """A SIGINT raised while a cell is written waits until the cell is on disk and counted, so the count
    that an interrupted study reports equals the cell files on disk."""
    import os as os_module

    from ir_incomplete.robustness import _cells

    store = _cells.CellStore(tmp_path / "cells", {"study": 1}, resume=False, name="checkpoint")
    real_replace = os_module.replace

    def replace_then_interrupt(src, dst):
        real_replace(src, dst)
        os_module.kill(os_module.getpid(), signal.SIGINT)  # Ctrl-C right after the rename

    monkeypatch.setattr(_cells.os, "replace", replace_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        store.save((0, 1, None), 7, (np.zeros((2, 3)), np.zeros((2, 3, 4))))
    assert store.saved == 1
    assert len(list((tmp_path / "cells").glob("cell-*.npz"))) == 1
