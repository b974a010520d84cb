"""Progress bars of long work (evaluate, simulate, robustness studies, the commands): tqdm on stderr,
shown when asked or, by default, when stderr is a terminal and the work is long; never in the values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ir_incomplete
from ir_incomplete import _progress

ROOT = Path(__file__).resolve().parents[1]


def _data(n_runs: int = 3, n_topics: int = 4, seed: int = 3):
    rng = np.random.default_rng(seed)
    qrels, runs = [], {}
    for t in range(1, n_topics + 1):
        for d in range(30):
            if d % 2 == 0:
                qrels.append((str(t), f"d{d}", int(rng.integers(0, 3))))
    qrels_df = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    for r in range(n_runs):
        rows = [(str(t), f"d{d}", float(rng.normal())) for t in range(1, n_topics + 1) for d in range(25)]
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs, qrels_df


MEASURES = ["AP", "nDCG@10", "BootAP(b=50)", "BootNDCG(b=50)@10", "infAP"]


def test_evaluate_progress_shows_a_bar_and_leaves_the_values_alone(capsys):
    runs, qrels = _data()
    shown = ir_incomplete.evaluate(runs, qrels, MEASURES, progress=True)
    bar = capsys.readouterr()
    assert bar.out == ""
    # 3 runs × 4 queries × 5 measures; the bar ends full
    assert "evaluate" in bar.err and "60/60" in bar.err
    hidden = ir_incomplete.evaluate(runs, qrels, MEASURES, progress=False)
    assert capsys.readouterr().err == ""
    pd.testing.assert_frame_equal(shown, hidden)
    default = ir_incomplete.evaluate(runs, qrels, MEASURES, interval=0.9, per_query=False)
    assert capsys.readouterr().err == ""  # stderr is not a terminal here: no bar by default
    with_bar = ir_incomplete.evaluate(runs, qrels, MEASURES, interval=0.9, per_query=False, progress=True)
    pd.testing.assert_frame_equal(default, with_bar)


def test_bootstrapped_measures_move_the_bar_as_they_go(monkeypatch):
    """Each block of rankings of a bootstrapped measure advances the bar (not one jump per measure)."""
    runs, qrels = _data(n_runs=4, n_topics=6)
    steps: list[float] = []
    original = _progress._Task.advance

    def spy(self, n):
        if n > 0:
            steps.append(n)
        original(self, n)

    monkeypatch.setattr(_progress._Task, "advance", spy)
    monkeypatch.setattr("ir_incomplete.measures.ndcg.ROW_BLOCK_CELLS", 200)  # 4 rankings a block at b = 50
    ir_incomplete.evaluate(runs, qrels, ["BootAP(b=50)"], progress=False)
    assert steps == [4] * 6  # 24 rankings in blocks of 4
    steps.clear()
    ir_incomplete.evaluate(runs, qrels, ["AP"], progress=False)
    assert steps == [24]


def test_automatic_progress_needs_a_terminal_and_a_long_job(monkeypatch, capsys):
    runs, qrels = _data()
    monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(_progress, "DELAY", 1000.0)  # a short job: the bar never appears
    ir_incomplete.evaluate(runs, qrels, MEASURES)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(_progress, "DELAY", 0.0)  # "long" from the start
    ir_incomplete.evaluate(runs, qrels, MEASURES)
    assert "60/60" in capsys.readouterr().err
    ir_incomplete.evaluate(runs, qrels, MEASURES, progress=False)  # off, even on a terminal
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("bad", ["yes", 1, 0.5])
def test_progress_must_be_none_true_or_false(bad):
    runs, qrels = _data()
    with pytest.raises(TypeError, match=r"progress=.* is not valid; expected None .*True .*False"):
        ir_incomplete.evaluate(runs, qrels, ["AP"], progress=bad)


def test_simulate_progress_leaves_the_curve_alone(capsys):
    from ir_incomplete.judging import simulate

    runs, qrels = _data()
    shown = simulate(runs, qrels, "depth", budget=40, step=20, progress=True)
    err = capsys.readouterr().err
    assert "simulate" in err and "2/2" in err
    hidden = simulate(runs, qrels, "depth", budget=40, step=20, progress=False)
    assert capsys.readouterr().err == ""
    default = simulate(runs, qrels, "depth", budget=40, step=20)
    assert capsys.readouterr().err == ""
    columns = [c for c in shown.columns if c != "seconds"]
    pd.testing.assert_frame_equal(shown[columns], hidden[columns])
    pd.testing.assert_frame_equal(shown[columns], default[columns])


def test_robustness_study_progress_leaves_the_results_alone(capsys):
    from ir_incomplete.robustness import robustness_study

    runs, qrels = _data()
    kwargs = dict(levels=[0.5], repeats=2, seed=1)
    shown = robustness_study(runs, qrels, ["AP", "BootAP(b=20)"], progress=True, **kwargs)
    err = capsys.readouterr().err
    assert "robustness" in err and "2/2" in err and "evaluate" not in err  # one bar: the cells
    hidden = robustness_study(runs, qrels, ["AP", "BootAP(b=20)"], progress=False, **kwargs)
    default = robustness_study(runs, qrels, ["AP", "BootAP(b=20)"], **kwargs)
    assert capsys.readouterr().err == ""
    for a, b, c in zip(shown, hidden, default, strict=True):
        pd.testing.assert_frame_equal(a, b)
        pd.testing.assert_frame_equal(a, c)


def _write_trec(tmp_path: Path):
    runs, qrels = _data()
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels.itertuples(index=False)))
    paths = []
    for name, run in runs.items():
        path = tmp_path / name
        lines = [f"{q} Q0 {d} 0 {s!r} {name}\n" for q, d, s in run.itertuples(index=False)]
        path.write_text("".join(lines))
        paths.append(str(path))
    return str(qrels_path), paths


def _command(capsys, main, *args: str) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_command_line_progress_flags(tmp_path, capsys):
    from ir_incomplete.cli import main

    qrels, runs = _write_trec(tmp_path)
    plain = _command(capsys, main, qrels, *runs, "AP", "BootAP(b=50)")
    on = _command(capsys, main, qrels, *runs, "AP", "BootAP(b=50)", "--progress")
    off = _command(capsys, main, qrels, *runs, "AP", "BootAP(b=50)", "--no-progress")
    assert plain[0] == on[0] == off[0] == 0, (plain[2], on[2])
    assert plain[1] == on[1] == off[1] and plain[1].count("\n") == 6
    assert plain[2] == "" and off[2] == ""  # stderr is not a terminal: no bar unless asked
    assert "evaluate" in on[2] and "24/24" in on[2]


def test_robustness_command_progress_flags(tmp_path, capsys):
    from ir_incomplete.cli.robustness import main

    qrels, runs = _write_trec(tmp_path)
    common = ["--qrels", qrels, "--runs", *runs, "--measures", "AP", "--levels", "0.5", "--repeats", "2"]
    common += ["--no-plots"]
    on = _command(capsys, main, *common, "--out", tmp_path / "on", "--progress")
    off = _command(capsys, main, *common, "--out", tmp_path / "off", "--no-progress")
    auto = _command(capsys, main, *common, "--out", tmp_path / "auto")
    assert on[0] == off[0] == auto[0] == 0, on[2]
    assert "robustness (sample)" in on[2] and "2/2" in on[2]
    assert off[2] == "" and auto[2] == ""
    for name in ("stats.csv", "summary.csv", "scores.csv"):
        assert (tmp_path / "on" / name).read_bytes() == (tmp_path / "off" / name).read_bytes()
