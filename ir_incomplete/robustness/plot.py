"""Plots of robustness studies (matplotlib, extra ``[plot]``; imported inside the functions).

* :func:`plot_robustness`: a statistic (τ, ρ or RMSE) against the degradation level, one line per
  measure, mean over repeats with a ±1 standard deviation band (Yilmaz & Aslam, KAIS 2008, Fig. 23).
* :func:`plot_scatter`: estimated against actual per-run scores with the line y = x and RMS error,
  Kendall τ and Pearson ρ in the title (Fig. 15).

Both draw on a new ``matplotlib.figure.Figure`` (no pyplot state, any backend) or on a given ``ax``,
return the ``Figure`` and save a PNG when ``path`` is given.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, overload

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure
    from numpy.typing import ArrayLike

__all__ = ["plot_robustness", "plot_scatter", "STATISTICS"]

STATISTICS = {
    "tau": "Kendall τ",
    "tau_ap": "τ_AP (AP correlation)",
    "spearman": "Spearman ρ",
    "pearson": "Pearson ρ",
    "rmse": "RMS error",
    "bias": "bias (estimate − reference)",
    "rmse_topic": "RMS error per (run, topic)",
}
_LEVEL_LABELS = {
    "sample": "fraction of judgments kept",
    "stratified": "fraction of judgments kept (per grade)",
    "depth": "pool depth",
    "mixed": "pool depth (+ random extra judgments)",
    "logo": "pool depth (each run without its own group's documents)",
}


def _figure(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure | SubFigure, Axes]:
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _save(fig: Figure | SubFigure, path: str | os.PathLike[str] | None, dpi: int) -> None:
    if path is None:
        return
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise ValueError(
            "path= saves a whole figure, but ax= lies in a subfigure; save the figure that holds it instead "
            "(ax.get_figure(root=True).savefig(...))"
        )
    fig.savefig(path, dpi=dpi)


#: the legend entry of the shaded bands of :func:`plot_robustness`
BAND_LABEL = "shaded: mean ± 1 s.d. over repeats"


@overload
def plot_robustness(
    stats: pd.DataFrame,
    statistic: str = ...,
    *,
    measures: Sequence[str] | None = ...,
    ax: None = None,
    title: str | None = ...,
    xlabel: str | None = ...,
    logx: bool = ...,
    band: bool = ...,
    path: str | os.PathLike[str] | None = ...,
    dpi: int = ...,
    figsize: tuple[float, float] = ...,
) -> Figure: ...
@overload
def plot_robustness(
    stats: pd.DataFrame,
    statistic: str = ...,
    *,
    measures: Sequence[str] | None = ...,
    ax: Axes,
    title: str | None = ...,
    xlabel: str | None = ...,
    logx: bool = ...,
    band: bool = ...,
    path: str | os.PathLike[str] | None = ...,
    dpi: int = ...,
    figsize: tuple[float, float] = ...,
) -> Figure | SubFigure: ...
def plot_robustness(
    stats: pd.DataFrame,
    statistic: str = "tau",
    *,
    measures: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    logx: bool = False,
    band: bool = True,
    path: str | os.PathLike[str] | None = None,
    dpi: int = 100,
    figsize: tuple[float, float] = (5.0, 3.6),
) -> Figure | SubFigure:
    """Robustness curves: ``statistic`` (``"tau"``, ``"pearson"`` or ``"rmse"``) of ``stats`` (from
    :func:`ir_incomplete.robustness.robustness_study`) against the level, one line per measure.

    Numeric levels are placed on a numeric axis (fractions are shown as percentages); other levels
    (groups) as categories. Integer levels (pool depths) get integer ticks (at the levels when there
    are at most 10); a single level gets one tick and an axis from half to 1.5 times it. With ``band``
    and more than one repeat, a shaded band around each line spans its mean ± one standard deviation
    over the repeats (the legend says so). Returns the ``Figure``; ``path`` saves it (PNG by extension).
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic={statistic!r} is not valid; choices: {', '.join(STATISTICS)}")
    needed = {"measure", "level", statistic}
    if not needed <= set(stats.columns):
        raise ValueError(f"stats must have columns {sorted(needed)} (found {list(stats.columns)})")
    if measures is None:
        measures = list(pd.unique(stats["measure"]))
    else:
        unknown = [m for m in measures if m not in set(stats["measure"])]
        if unknown:
            raise ValueError(f"measures {unknown} are not in stats; choices: {', '.join(pd.unique(stats['measure']))}")
    method = stats.attrs.get("method")
    fig, ax = _figure(ax, figsize)
    levels = list(pd.unique(stats["level"]))
    numeric = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in levels)
    fractions = numeric and method in ("sample", "stratified")
    banded = False
    for measure in measures:
        sub = stats[stats["measure"] == measure]
        grouped = sub.groupby("level", sort=numeric)[statistic]
        mean, std = grouped.mean(), grouped.std(ddof=1).fillna(0.0)
        if numeric:
            x = mean.index.to_numpy(dtype=float) * (100.0 if fractions else 1.0)
        else:
            mean = mean.reindex(levels)
            std = std.reindex(levels)
            x = np.arange(len(levels))
        (line,) = ax.plot(x, mean.to_numpy(), marker="o", markersize=4, label=measure)
        if band and (std.to_numpy() > 0).any():
            banded = True
            ax.fill_between(
                x,
                mean.to_numpy() - std.to_numpy(),
                mean.to_numpy() + std.to_numpy(),
                color=line.get_color(),
                alpha=0.15,
                linewidth=0,
            )
    if not numeric:
        ax.set_xticks(np.arange(len(levels)))
        ax.set_xticklabels([str(v) for v in levels], rotation=60, ha="right", fontsize=7)
    if logx and numeric:
        ax.set_xscale("log")
    if numeric:
        _level_axis(
            ax, np.array(levels, dtype=float) * (100.0 if fractions else 1.0), integers=not fractions, logx=logx
        )
    ax.set_xlabel(xlabel or (_LEVEL_LABELS.get(method, "level") + (" (%)" if fractions else "")))
    ax.set_ylabel(STATISTICS[statistic])
    reference = stats.attrs.get("reference")
    if title is None:
        title = STATISTICS[statistic] + (
            f" vs {reference} on full judgments" if reference else " vs the same measure on full judgments"
        )
    ax.set_title(title, fontsize=9)
    ax.grid(True, alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if banded:
        from matplotlib.patches import Patch

        handles.append(Patch(facecolor="gray", alpha=0.3, linewidth=0))
        labels.append(BAND_LABEL)
    ax.legend(handles, labels, fontsize=7)
    _save(fig, path, dpi)
    return fig


def _level_axis(ax: Axes, x: np.ndarray, *, integers: bool, logx: bool) -> None:
    """Ticks and limits of a numeric level axis. Integer levels (pool depths) get integer ticks: at the
    levels themselves when there are at most 10 of them, else integer ticks chosen by matplotlib. A single
    level gets one tick at it and an axis from half to 1.5 times it (¼ to 4 times on a log axis; at least
    ±1 around an integer level), instead of matplotlib's ±0.4 around the point."""
    from matplotlib.ticker import MaxNLocator, NullLocator, ScalarFormatter

    x = np.unique(x[np.isfinite(x)])
    if len(x) == 0:
        return
    if len(x) == 1:
        (x0,) = x
        if logx and x0 > 0:
            ax.set_xlim(x0 / 4, x0 * 4)
        else:
            half = max(abs(x0) * 0.5, 1.0 if integers else 0.0) or 1.0
            ax.set_xlim(x0 - half, x0 + half)
        ax.set_xticks([x0])
    elif integers and len(x) <= 10:
        ax.set_xticks(x)
    elif integers:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        return
    if logx:
        ax.xaxis.set_minor_locator(NullLocator())
    formatter = ScalarFormatter()
    formatter.set_scientific(False)
    formatter.set_useOffset(False)
    ax.xaxis.set_major_formatter(formatter)


@overload
def plot_scatter(
    actual: pd.Series | ArrayLike,
    estimated: pd.Series | ArrayLike,
    *,
    ax: None = None,
    title: str | None = ...,
    xlabel: str = ...,
    ylabel: str = ...,
    labels: Sequence[str] | None = ...,
    path: str | os.PathLike[str] | None = ...,
    dpi: int = ...,
    figsize: tuple[float, float] = ...,
) -> Figure: ...
@overload
def plot_scatter(
    actual: pd.Series | ArrayLike,
    estimated: pd.Series | ArrayLike,
    *,
    ax: Axes,
    title: str | None = ...,
    xlabel: str = ...,
    ylabel: str = ...,
    labels: Sequence[str] | None = ...,
    path: str | os.PathLike[str] | None = ...,
    dpi: int = ...,
    figsize: tuple[float, float] = ...,
) -> Figure | SubFigure: ...
def plot_scatter(
    actual: pd.Series | ArrayLike,
    estimated: pd.Series | ArrayLike,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str = "actual",
    ylabel: str = "estimated",
    labels: Sequence[str] | None = None,
    path: str | os.PathLike[str] | None = None,
    dpi: int = 100,
    figsize: tuple[float, float] = (3.6, 3.6),
) -> Figure | SubFigure:
    """Estimated against actual per-run scores, with y = x and "RMS = …, τ = …, ρ = …" in the title.

    ``actual``/``estimated``: per-run score vectors (``pandas.Series`` indexed by run are aligned by run).
    ``title`` is put above the statistics line. Returns the ``Figure``.
    """
    from ir_incomplete.robustness.compare import _pair, kendall_tau, pearson, rmse

    a, e = _pair(actual, estimated)
    fig, ax = _figure(ax, figsize)
    ax.scatter(a, e, s=12, alpha=0.8, edgecolors="none")
    lo = float(min(a.min(), e.min(), 0.0))
    hi = float(max(a.max(), e.max()))
    pad = 0.03 * (hi - lo if hi > lo else 1.0)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="0.4", linewidth=0.8, linestyle="--")
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_aspect("equal", adjustable="box")
    if labels is not None:
        for x, y, text in zip(a, e, labels, strict=True):
            ax.annotate(str(text), (x, y), fontsize=6, xytext=(2, 2), textcoords="offset points")
    stats_line = f"RMS = {rmse(a, e):.4f}, τ = {kendall_tau(a, e):.4f}, ρ = {pearson(a, e):.4f}"
    ax.set_title(stats_line if not title else f"{title}\n{stats_line}", fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    _save(fig, path, dpi)
    return fig
