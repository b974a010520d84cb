"""What ``ir_incomplete robustness`` prints and draws: a short summary by default (the full table on
request and in summary.csv), and a plot legend that says what the shaded band is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ir_incomplete.cli.robustness import main
from ir_incomplete.robustness import plot_robustness
from ir_incomplete.robustness.plot import BAND_LABEL

SHORT = ["measure", "level", "repeats", "tau", "tau_std", "tau_ap", "rmse", "rmse_std", "rmse_topic"]


def _files(tmp_path):
    rng = np.random.default_rng(5)
    qrels_lines, paths = [], []
    for t in range(1, 6):
        qrels_lines += [f"{t} 0 d{d} {int(rng.integers(0, 3))}\n" for d in range(0, 40, 2)]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(qrels_lines))
    for r in range(4):
        path = tmp_path / f"run{r}"
        path.write_text("".join(f"{t} Q0 d{d} 0 {rng.normal()!r} run{r}\n" for t in range(1, 6) for d in range(30)))
        paths.append(str(path))
    return str(qrels), paths


def _run(capsys, tmp_path, *extra):
    qrels, runs = _files(tmp_path)
    out = tmp_path / ("out" + "".join(extra))
    args = ["--qrels", qrels, "--runs", *runs, "--measures", "AP", "infAP", "--levels", "0.3,0.6"]
    code = main([*args, "--repeats", "3", "--no-plots", "--no-progress", "--out", str(out), *extra])
    printed = capsys.readouterr().out
    assert code == 0
    return printed.splitlines(), pd.read_csv(out / "summary.csv")


def test_default_summary_is_short_and_readable(capsys, tmp_path):
    lines, full = _run(capsys, tmp_path)
    assert lines[0].split() == SHORT
    assert max(len(line) for line in lines[:5]) <= 100
    assert "summary.csv" in lines[5] and "--full-summary" in lines[5]
    assert len(full.columns) == 17  # the file keeps every statistic and its standard deviation


def test_full_summary_prints_every_column(capsys, tmp_path):
    lines, full = _run(capsys, tmp_path, "--full-summary")
    assert lines[0].split() == list(full.columns)
    assert len(lines[0].split()) == 17


def _stats(repeats: int):
    rows = [
        {"measure": m, "level": level, "repeat": r, "tau": 0.5 + level / 2 - 0.05 * r, "pearson": 0.9, "rmse": 0.1}
        for m in ("AP", "infAP")
        for level in (0.1, 0.5)
        for r in range(repeats)
    ]
    stats = pd.DataFrame(rows)
    stats.attrs["method"] = "sample"
    return stats


def test_plot_legend_explains_the_shaded_band():
    pytest.importorskip("matplotlib")
    fig = plot_robustness(_stats(3), "tau")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["AP", "infAP", BAND_LABEL]
    assert BAND_LABEL == "shaded: mean ± 1 s.d. over repeats"
    fig = plot_robustness(_stats(1), "tau")  # one repeat: no band, nothing to explain
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["AP", "infAP"]
