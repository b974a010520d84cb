"""The command line, fourth round: every command reports output it cannot write (a full disk) and Ctrl-C
as one line with exit codes 1 and 130; ``sample`` and ``estimate`` take ``--progress``; ``estimate``
prints 4 decimals as the evaluation command (``-p -1``: every digit) and estimates the pairs of a
subset of the runs (``--pairs-top N``, ``--pairs-of RUN``, ``pair_runs=``)."""

from __future__ import annotations

import errno
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_cli_design import write_collection  # the same small collection, other seed and run count

import ir_incomplete
from ir_incomplete.cli import main
from ir_incomplete.judging import sample, write_design

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ["AP@10", "nDCG@5"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Five runs of 20 documents on three queries (a directory), complete qrels of every document, the
    qrels of the first five documents of each query, predicted grades (:func:`write_collection`), and a
    design (depth 10)."""
    made = write_collection(tmp_path_factory.mktemp("round4cli"), 5, 11)
    root, grades, folder, some = made["root"], made["grades"], Path(made["runs"]), made["some"]
    human = root / "human.qrels"  # the judgments of two queries (ppi: the third is unlabelled)
    human.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in grades.items() if q != "3"))
    design = root / "design.tsv"
    write_design(sample(str(folder), 25, depth=10, seed=3, qrels=some), design)
    return {
        "root": root,
        "runs": str(folder),
        "run0": str(folder / "run0"),
        "run1": str(folder / "run1"),
        "run2": str(folder / "run2"),
        "full": made["full"],
        "some": some,
        "human": str(human),
        "labels": made["labels"],
        "design": str(design),
    }


def _env(**more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout buffered, as usual
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(more)
    return env


#: every command with small, valid arguments (placeholders: names of the ``files`` fixture; OUT: a new folder)
COMMANDS = {
    "evaluate": ["full", "run0", "run1", "AP", "P@5"],
    "measures": ["measures"],
    "compare": ["compare", "full", "run0", "run1", "run2", "AP"],
    "pool": ["pool", "--runs", "runs", "--method", "depth", "--depth", "5"],
    "agreement": ["agreement", "full", "labels"],
    "judge-next": ["judge-next", "--runs", "runs", "--qrels", "some", "--budget", "5"],
    "ppi": ["ppi", "human", "labels", "run0", "run1", "AP@10"],
    "sample": ["sample", "runs", "--budget", "10", "--depth", "10"],
    "estimate": ["estimate", "full", "design", "runs", "AP@10", "--control", "model"],
    "robustness": [
        "robustness",
        *("--qrels", "full", "--runs", "runs", "--measures", "AP", "--method", "depth", "--levels", "5"),
        *("--out", "OUT", "--no-plots"),
    ],
    "evaluate --help": ["--help"],
    "sample --help": ["sample", "--help"],
    "robustness --help": ["robustness", "--help"],
}


def _argv(files, tmp_path, args: list[str]) -> list[str]:
    return [str(tmp_path / "out") if a == "OUT" else files.get(a, a) if a in files else a for a in args]


def _prefix(args: list[str]) -> str:
    return "ir_incomplete" if args[0] not in ir_incomplete.cli.SUBCOMMANDS else f"ir_incomplete {args[0]}"


def _run(argv: list[str], stdout, env=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ir_incomplete", *argv],
        cwd=ROOT,
        env=env or _env(),
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_works_with_these_arguments(files, tmp_path, capsys, name):
    """The arguments of the full-disk test are valid: each command succeeds and prints something."""
    assert main(_argv(files, tmp_path, COMMANDS[name])) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    assert out.strip() and "Traceback" not in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_full_disk_is_one_line_and_exit_1_in_every_command(files, tmp_path, name):
    """``ir_incomplete ... > /dev/full``: the output fits Python's buffer, so the error comes when stdout
    is flushed (Python would report it at exit with exit code 120 and 'Exception ignored'): one line,
    naming the command, exit 1."""
    args = COMMANDS[name]
    with open("/dev/full", "w") as full:
        done = _run(_argv(files, tmp_path, args), full)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1:] == [f"{_prefix(args)}: error: cannot write output: No space left on device"]
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    if name == "robustness":  # the study's files are written; only the printed summary is lost
        assert (tmp_path / "out" / "summary.csv").exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("name", ["evaluate", "estimate", "sample --help", "robustness --help"])
def test_a_full_disk_unbuffered_is_one_line_and_exit_1(files, tmp_path, name):
    """With ``PYTHONUNBUFFERED=1`` the write itself fails (argparse's help would swallow it and exit 0)."""
    args = COMMANDS[name]
    with open("/dev/full", "w") as full:
        done = _run(_argv(files, tmp_path, args), full, env=_env(PYTHONUNBUFFERED="1"))
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"{_prefix(args)}: error: cannot write output: No space left on device\n"


def test_a_closed_pipe_stays_quiet(files):
    """``ir_incomplete ... | head``: no message, exit 1 (the output could not be written)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ir_incomplete", "measures"],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.stdout.close()  # the reader is gone before anything is written
    stderr = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=300) == 1, stderr
    assert stderr == ""


# ---------------------------------------------------------------------------------------------------
# Ctrl-C
# ---------------------------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _ctrl_c_raises():
    """Python's own SIGINT handler in this process (a test process started in the background by a
    non-interactive shell inherits SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _sigint_default_in_child() -> None:
    """``preexec_fn`` of a child that must react to Ctrl-C however its parent was started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


#: each command reading a named pipe (FIFO) that never gets data: it waits there until interrupted
INTERRUPTED = {
    "evaluate": ["FIFO", "run0", "AP"],  # the qrels are read in a background thread
    "compare": ["compare", "FIFO", "run0", "run1", "AP"],
    "pool": ["pool", "--runs", "runs", "--qrels", "FIFO"],
    "agreement": ["agreement", "FIFO", "labels"],
    "judge-next": ["judge-next", "--runs", "runs", "--qrels", "FIFO", "--budget", "5"],
    "ppi": ["ppi", "FIFO", "labels", "run0", "AP@10"],
    "sample": ["sample", "runs", "FIFO", "--budget", "10"],  # a run that is a named pipe
    "estimate": ["estimate", "FIFO", "design", "runs", "AP@10"],
}


@pytest.mark.skipif(not hasattr(os, "mkfifo") or sys.platform == "win32", reason="needs named pipes")
@pytest.mark.parametrize("name", list(INTERRUPTED))
def test_ctrl_c_is_one_line_and_exit_130_in_every_command(files, tmp_path, name):
    """SIGINT while the command waits for its input: ``ir_incomplete <command>: interrupted``, exit 130,
    no traceback. The signal is sent once the command has opened the named pipe (a writer can then open
    it without blocking), whatever the machine's load."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    args = INTERRUPTED[name]
    argv = [str(fifo) if a == "FIFO" else a for a in _argv(files, tmp_path, args)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ir_incomplete", *argv],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_sigint_default_in_child,
    )
    writer = None
    try:
        deadline = time.monotonic() + 300
        while writer is None:
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # succeeds once the command reads it
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the command never opened its input"
                time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        # the pipe stays open and empty: the command must stop without waiting for its input to end
        # (the evaluation reads it in a background thread)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if writer is not None:
            os.close(writer)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert stderr == f"{_prefix(args)}: interrupted\n"
    assert stdout == ""


def test_ctrl_c_in_process_returns_130(files, capsys, monkeypatch):
    """The dispatcher turns a KeyboardInterrupt raised anywhere in a command into one line and 130."""
    import ir_incomplete.estimation as estimation

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(estimation, "estimate", interrupted)
    try:
        status = main(["estimate", files["full"], files["design"], files["runs"], "AP@10"])
    except KeyboardInterrupt:  # not caught: would stop the test session
        pytest.fail("KeyboardInterrupt escaped the command line")
    assert status == 130
    out, err = capsys.readouterr()
    assert (out, err) == ("", "ir_incomplete estimate: interrupted\n")


# ---------------------------------------------------------------------------------------------------
# --progress
# ---------------------------------------------------------------------------------------------------
def test_sample_takes_progress_and_the_design_does_not_change(files, tmp_path, capsys):
    base = ["sample", files["runs"], "--budget", "12", "--depth", "10", "--seed", "2", "--qrels", files["some"]]
    assert main([*base, "--no-progress"]) == 0
    quiet, err = capsys.readouterr()
    assert err == ""
    assert main([*base, "--progress"]) == 0
    shown, err = capsys.readouterr()
    assert _without_arguments(shown) == _without_arguments(quiet)
    assert "read runs" in err and "sample" in err and "4/4" in err  # the bars: files read, steps of the draw
    assert main(base) == 0  # default: no bar when stderr is not a terminal
    default, err = capsys.readouterr()
    assert _without_arguments(default) == _without_arguments(quiet) and err == ""


def _without_arguments(design: str) -> list[str]:
    """A design file's lines but its second, which records the command's arguments."""
    lines = design.splitlines()
    assert lines[1].startswith("# ir_incomplete ")
    return lines[:1] + lines[2:]


def test_estimate_takes_progress_and_the_values_do_not_change(files, capsys):
    base = ["estimate", files["full"], files["design"], files["runs"], *MEASURES, "-p", "-1", "--control", "model"]
    assert main([*base, "--no-progress"]) == 0
    quiet, err = capsys.readouterr()
    assert err == ""
    assert main([*base, "--progress"]) == 0
    shown, err = capsys.readouterr()
    assert shown == quiet
    assert "read runs" in err and "estimate" in err and "3/3" in err  # the universe and two measures


def test_library_progress_gives_the_same_values(files, capsys):
    one = ir_incomplete.estimate(files["runs"], files["full"], files["design"], MEASURES, pairs=True, progress=True)
    two = ir_incomplete.estimate(files["runs"], files["full"], files["design"], MEASURES, pairs=True, progress=False)
    pd.testing.assert_frame_equal(one, two, check_exact=True)
    assert "estimate" in capsys.readouterr().err
    drawn = sample(files["runs"], 12, depth=10, seed=4, progress=True)
    pd.testing.assert_frame_equal(drawn, sample(files["runs"], 12, depth=10, seed=4, progress=False), check_exact=True)
    assert drawn.attrs == sample(files["runs"], 12, depth=10, seed=4).attrs
    with pytest.raises(TypeError, match="progress='yes' is not valid"):
        sample(files["runs"], 12, depth=10, progress="yes")
    with pytest.raises(TypeError, match="progress=1 is not valid"):
        ir_incomplete.estimate(files["runs"], files["full"], files["design"], MEASURES, progress=1)


# ---------------------------------------------------------------------------------------------------
# estimate: the pairs of some runs
# ---------------------------------------------------------------------------------------------------
def _key(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.set_index(["run_a", "run_b", "measure"])


def test_pair_runs_by_name_gives_those_pairs_as_among_all(files):
    args = (files["runs"], files["full"], files["design"], MEASURES)
    every = ir_incomplete.estimate(*args, pairs=True)
    some = ir_incomplete.estimate(*args, pairs=True, pair_runs=["run3", "run0", "run4"])
    expected = [("run0", "run3"), ("run0", "run4"), ("run3", "run4")]  # in the runs' order
    assert list(zip(some["run_a"], some["run_b"], strict=True)) == expected * 2
    assert some["measure"].tolist() == ["AP@10"] * 3 + ["nDCG@5"] * 3
    pd.testing.assert_frame_equal(_key(some), _key(every).loc[_key(some).index], check_exact=True)
    assert some.attrs == every.attrs


def test_pair_runs_top_n_takes_the_runs_of_largest_first_measure(files):
    args = (files["runs"], files["full"], files["design"], MEASURES)
    means = ir_incomplete.estimate(*args)
    first = means[means["measure"] == "AP@10"].set_index("run")["value"]
    top = set(first.sort_values(ascending=False, kind="stable").index[:3])
    some = ir_incomplete.estimate(*args, pairs=True, pair_runs=3)
    assert set(some["run_a"]) | set(some["run_b"]) == top and len(some) == 3 * 2
    every = ir_incomplete.estimate(*args, pairs=True)
    pd.testing.assert_frame_equal(_key(some), _key(every).loc[_key(some).index], check_exact=True)
    # more than there are runs: every pair; the "both" form keeps every run's mean
    pd.testing.assert_frame_equal(ir_incomplete.estimate(*args, pairs=True, pair_runs=50), every, check_exact=True)
    runs_table, pairs_table = ir_incomplete.estimate(*args, pairs="both", pair_runs=["run1", "run2"])
    pd.testing.assert_frame_equal(runs_table, means, check_exact=True)
    assert pairs_table[["run_a", "run_b"]].drop_duplicates().values.tolist() == [["run1", "run2"]]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(pair_runs=3), "pair_runs= chooses the runs whose pairs are estimated: give pairs=True too"),
        (dict(pairs=True, pair_runs=1), "pair_runs=1 is not valid; a pair needs two runs"),
        (dict(pairs=True, pair_runs=True), "pair_runs=True is not valid; give a number of top runs"),
        (dict(pairs=True, pair_runs="run1"), "pair_runs='run1' is not valid; give a number of top runs"),
        (dict(pairs=True, pair_runs=["run1", "run1"]), "names fewer than two runs"),
        (
            dict(pairs=True, pair_runs=["run1", "nope"]),
            "pair_runs: run 'nope' is not among the runs given; runs: 'run0'",
        ),
    ],
)
def test_pair_runs_errors(files, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ir_incomplete.estimate(files["runs"], files["full"], files["design"], MEASURES, **kwargs)


def _table(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), sep="\t", dtype={"run": str, "run_a": str, "run_b": str, "query_id": str})


def test_estimate_pairs_top_and_pairs_of_on_the_command_line(files, capsys):
    base = ["estimate", files["full"], files["design"], files["runs"], "-m", "AP@10", "-m", "nDCG@5", "-p", "-1"]
    args = (files["runs"], files["full"], files["design"], MEASURES)
    assert main([*base, "--pairs-top", "3"]) == 0
    got = _table(capsys.readouterr().out)
    expected = ir_incomplete.estimate(*args, pairs=True, pair_runs=3)
    assert got[["run_a", "run_b", "measure"]].values.tolist() == expected[["run_a", "run_b", "measure"]].values.tolist()
    np.testing.assert_array_equal(got["value"].to_numpy(), expected["value"].to_numpy())  # -p -1 reads back exactly
    assert main([*base, "--pairs-of", "run4", "--pairs", "--pairs-of", "run1"]) == 0
    got = _table(capsys.readouterr().out)
    expected = ir_incomplete.estimate(*args, pairs=True, pair_runs=["run1", "run4"])
    assert got[["run_a", "run_b"]].values.tolist() == [["run1", "run4"]] * 2
    np.testing.assert_array_equal(got["lo"].to_numpy(), expected["lo"].to_numpy())


@pytest.mark.parametrize(
    "more, message",
    [
        (["--pairs-top", "3", "--pairs-of", "run1"], "--pairs-top and --pairs-of exclude each other"),
        (["--pairs-top", "1"], "--pairs-top 1 is not valid; a pair needs two runs: give N >= 2"),
        (["--pairs-of", "run1"], "--pairs-of names 1 run(s); a pair needs two"),
        (["--pairs-of", "run1", "--pairs-of", "run9"], "--pairs-of 'run9' is not among the runs given (run names: "),
        (["--pairs-top", "3", "--per-query"], "--pairs and --per-query exclude each other"),
        (["-p", "-2"], "--places must be >= 0, or -1 for full precision (got -2)"),
    ],
)
def test_estimate_pair_and_places_errors_are_one_line(files, capsys, more, message):
    assert main(["estimate", files["full"], files["design"], files["runs"], "AP@10", *more]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("ir_incomplete: error: ") and message in err and "Traceback" not in err


# ---------------------------------------------------------------------------------------------------
# estimate: the evaluation command's places
# ---------------------------------------------------------------------------------------------------
def test_estimate_prints_four_places_as_evaluate_and_every_digit_with_p_minus_1(files, capsys):
    base = ["estimate", files["full"], files["design"], files["runs"], *MEASURES]
    expected = ir_incomplete.estimate(files["runs"], files["full"], files["design"], MEASURES)
    assert main(base) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "run\tmeasure\tvalue\tlo\thi\tse\tdf\toutside\tseen\tdelta\treliable"
    numbers = ("value", "lo", "hi", "se", "df", "outside", "seen", "delta")
    for line, (_, row) in zip(lines[1:], expected.iterrows(), strict=True):
        cells = line.split("\t")
        assert cells[:2] == [row["run"], row["measure"]]
        assert cells[2:10] == [f"{row[c]:.4f}" for c in numbers]
        assert cells[10] == str(bool(row["reliable"]))
    # the evaluation command's default is the same 4 places, and -p -1 its every digit
    assert main([files["full"], files["run0"], "AP"]) == 0
    four = capsys.readouterr().out
    assert main([files["full"], files["run0"], "AP", "-p", "-1"]) == 0
    every = float(capsys.readouterr().out.split("\t")[1])
    assert four == f"AP\t{every:.4f}\n"
    assert main([*base, "-p", "-1"]) == 0
    full = _table(capsys.readouterr().out)
    for column in ("value", "lo", "hi", "se", "df", "outside", "seen", "delta"):
        np.testing.assert_array_equal(full[column].to_numpy(), expected[column].to_numpy())
    assert main([*base, "-p", "2"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t")[2] == f"{expected['value'].iloc[0]:.2f}"


# ---------------------------------------------------------------------------------------------------
# speed: the same numbers
# ---------------------------------------------------------------------------------------------------
def test_the_t_quantile_is_scipy_stats_t_ppf_bit_for_bit():
    """estimate's quantile comes from scipy.special (importing scipy.stats took about 0.6 s of every
    estimate): the very numbers scipy.stats.t.ppf gives, including infinite degrees of freedom."""
    from scipy.stats import t

    from ir_incomplete.estimation import _quantile

    rng = np.random.default_rng(5)
    df = np.r_[0.2, 1.0, 1.5, 2.0, 3.0, 29.14, 1e6, 1e300, np.inf, rng.uniform(1, 1000, 20000), rng.uniform(1, 3, 2000)]
    for level in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 1e-9, 1 - 1e-12):
        expected = np.asarray(t.ppf(0.5 + level / 2.0, np.maximum(df, 1.0)))
        assert _quantile(level, df).tobytes() == expected.tobytes(), level
