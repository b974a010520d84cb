"""Compact views of result tables for notebooks and papers.

* :func:`pivot` — runs × measures. A bootstrap interval is shown in the cell as ``0.4100 [0.3700, 0.4600]``
  when the table carries one (the ``"BootNDCG@10 p5"``/``"BootNDCG@10 p95"`` columns that
  :func:`ir_incomplete.add_bootstrap_intervals` adds, the ``lo``/``hi`` columns of
  ``evaluate(..., per_query=False, interval=0.9)``, or ``pNN`` columns of a tidy table); RBP with its
  residual as ``0.4100 +0.1200`` (value, then the residual: the RBP of any completion of the judgments
  lies between 0.41 and 0.53).
* :func:`plot_intervals` — per-run point estimates with their bootstrap intervals (matplotlib, imported
  when called), optionally with a reference value per run.

Both read the tables this package and PyTerrier make, none of which they modify:

* :func:`ir_incomplete.evaluate` results, per query (``run, query_id, measure, value``; the values are
  aggregated as ``evaluate(per_query=False)`` does) or aggregated (``run, measure, value``), optionally
  with ``lo``/``hi`` (``evaluate(..., interval=...)``) or two ``pNN`` interval columns on aggregated rows,
  and with the extra columns that measures declare
  (``residual``, ``upper`` of ``RBPResidual``; see "Extra columns" in :mod:`ir_incomplete.measures.base`):
  a measure's ``INTERVAL`` names the columns that bound its interval (``RBPResidual``: ``value`` and
  ``upper``) and its ``CELL_FORMAT`` how :func:`pivot` writes its cells (``{value} +{residual}``);
* ``pt.Experiment`` aggregate tables (``name`` and one column per measure), with the interval columns
  of :func:`ir_incomplete.add_bootstrap_intervals`, and its per-query tables (``name, qid, measure,
  value``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping

    import pandas as pd
    from matplotlib.axes import Axes
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = ["pivot", "plot_intervals", "long_form"]

_PCT = re.compile(r"p(\d+(?:\.\d+)?)")
_WIDE_PCT = re.compile(r"(.+) p(\d+(?:\.\d+)?)")


def _interval_pair(names: Sequence[str]) -> tuple[str, str] | None:
    """The lowest and highest of the ``pNN`` names in ``names`` (``None`` when fewer than two)."""
    found = sorted((float(match.group(1)), n) for n in names if (match := _PCT.fullmatch(str(n))))
    return (found[0][1], found[-1][1]) if len(found) >= 2 else None


def _declared(names) -> dict[str, Any]:
    """``{name: our measure object}`` for the names in ``names`` that are measures ``ir_incomplete``
    computes and that declare extra columns, an interval or a cell format."""
    from ir_incomplete.grammar import parse
    from ir_incomplete.incomplete_provider import as_incomplete, computable

    out = {}
    for name in dict.fromkeys(str(n) for n in names):
        try:
            measure = parse(name)
        except (ValueError, NameError):  # not a measure string
            continue
        if computable(measure):
            ours = as_incomplete(measure)
            if ours.EXTRA_COLUMNS or ours.INTERVAL or ours.CELL_FORMAT:
                out[name] = ours
    return out


def _extra_names(table, declared: dict[str, Any]) -> list[str]:
    """The declared extra columns that ``table`` holds, in declaration order."""
    names = dict.fromkeys(c for m in declared.values() for c in m.EXTRA_COLUMNS)
    return [c for c in names if c in table.columns]


def long_form(table) -> pd.DataFrame:
    """``table`` as one row per (run, measure): columns ``run, measure, value, lower, upper`` (NaN bounds
    where there is no interval), then the extra columns of the table's measures that are not among these
    (``residual``), runs and measures in their order of appearance. ``lower``/``upper`` are the ``pNN``
    interval columns, or the columns named by a measure's ``INTERVAL`` (``RBPResidual``: its value and
    ``upper``)."""
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"expected a DataFrame of results, not {type(table).__name__}")
    columns = [str(c) for c in table.columns]
    if {"run", "measure", "value"} <= set(columns):
        return _from_tidy(table)
    if {"name", "qid", "measure", "value"} <= set(columns) and not {"run", "query_id"} & set(columns):
        return _from_tidy(table.rename(columns={"name": "run", "qid": "query_id"}))  # pt.Experiment(perquery=True)
    if "name" in columns and not {"qid", "measure", "value"} <= set(columns):
        return _from_experiment(table)
    raise ValueError(
        f"cannot read a results table with columns {columns[:12]}: expected ir_incomplete.evaluate's "
        "(run, [query_id,] measure, value) or a pt.Experiment table (name, one column per measure; or "
        "name, qid, measure, value)"
    )


def _from_tidy(table) -> pd.DataFrame:
    pair = _interval_pair([c for c in table.columns if isinstance(c, str)])
    if {"lo", "hi"} <= set(table.columns):  # evaluate(..., interval=...)
        pair = ("lo", "hi")
    declared = _declared(table["measure"].astype(str))
    extras = _extra_names(table, declared)
    if "query_id" in table.columns:
        if pair is not None:
            raise ValueError(
                f"per-query interval columns {pair[0]}/{pair[1]} cannot be averaged into a run's interval; "
                "pass an aggregated table (one row per run and measure, e.g. evaluate(..., per_query=False, "
                "interval=0.9))"
            )
        from ir_incomplete.api import _aggregate
        from ir_incomplete.grammar import parse

        names = list(dict.fromkeys(table["measure"].astype(str)))
        measures = []
        for name in names:
            try:
                measures.append(parse(name))
            except (ValueError, NameError):  # not a measure string: a plain mean
                pass
        frame = table[["run", "query_id", "measure", "value", *extras]].assign(measure=table["measure"].astype(str))
        return _with_intervals(_aggregate(frame, measures), None, declared, extras)
    duplicated = table.duplicated(["run", "measure"])
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[0])
        raise ValueError(
            f"row {row}: run {table['run'].iloc[row]!r} and measure {table['measure'].iloc[row]!r} appear twice "
            "(a per-query table needs its query_id column)"
        )
    out = pd.DataFrame(
        {
            "run": table["run"].to_numpy(),
            "measure": table["measure"].astype(str).to_numpy(),
            "value": table["value"].to_numpy(dtype=np.float64),
            **{name: table[name].to_numpy(dtype=np.float64) for name in extras},
        }
    )
    bounds = (table[pair[0]].to_numpy(dtype=np.float64), table[pair[1]].to_numpy(dtype=np.float64)) if pair else None
    return _with_intervals(out, bounds, declared, extras)


def _with_intervals(frame, bounds, declared: dict[str, Any], extras: list[str]) -> pd.DataFrame:
    """``run, measure, value, lower, upper, *extras`` from aggregated rows: the bounds are the ``pNN``
    columns (``bounds``) or, on the rows of a measure with an ``INTERVAL``, the columns it names."""
    out = frame.reset_index(drop=True)
    lower = np.full(len(out), np.nan) if bounds is None else np.array(bounds[0], dtype=np.float64)
    upper = np.full(len(out), np.nan) if bounds is None else np.array(bounds[1], dtype=np.float64)
    for name, measure in declared.items():
        fields = measure.INTERVAL
        if fields is None or not all(f in out.columns for f in fields):
            continue
        rows = (out["measure"] == name).to_numpy()
        lower[rows] = out.loc[rows, fields[0]].to_numpy(dtype=np.float64)
        upper[rows] = out.loc[rows, fields[1]].to_numpy(dtype=np.float64)
    columns = {c: out[c].to_numpy() for c in ("run", "measure", "value")}
    rest = {c: out[c].to_numpy(dtype=np.float64) for c in extras if c not in ("value", "lower", "upper")}
    return pd.DataFrame({**columns, "lower": lower, "upper": upper, **rest})


def _from_experiment(table) -> pd.DataFrame:
    columns = [c for c in table.columns if c != "name"]
    bounds: dict[str, list[str]] = {}
    for c in columns:
        match = _WIDE_PCT.fullmatch(str(c))
        if match and match.group(1) in columns:
            bounds.setdefault(match.group(1), []).append(f"p{match.group(2)}")
    # interval columns and pt.Experiment's baseline columns ("map +", "map p-value", ...) follow a measure
    measures = [c for c in columns if not any(str(c).startswith(f"{m} ") for m in columns if m != c)]
    frames = []
    for measure in measures:
        pair = _interval_pair(bounds.get(measure, []))
        frame = pd.DataFrame(
            {
                "run": table["name"].to_numpy(),
                "measure": str(measure),
                "value": pd.to_numeric(table[measure], errors="coerce").to_numpy(dtype=np.float64),
                "lower": table[f"{measure} {pair[0]}"].to_numpy(dtype=np.float64) if pair else np.nan,
                "upper": table[f"{measure} {pair[1]}"].to_numpy(dtype=np.float64) if pair else np.nan,
            }
        )
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    order = {run: i for i, run in enumerate(dict.fromkeys(table["name"].tolist()))}
    return out.sort_values("run", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


DEFAULT_CELL_FORMAT = "{value} [{lower}, {upper}]"
#: decimal places of text cells when ``pivot(decimals=None)``
TEXT_DECIMALS = 4


def pivot(table: pd.DataFrame, decimals: int | None = None) -> pd.DataFrame:
    """Runs × measures view of a results table (rows: runs, columns: measures, in order of appearance).

    Without interval or extra columns the cells are the numbers themselves (a float DataFrame, which
    Jupyter shows as an HTML table), rounded to ``decimals`` places when given (``None``: unrounded).
    With them, every cell is text with ``decimals`` places (default 4): a measure with an interval reads
    ``value [lower, upper]``, e.g. ``0.4100 [0.3700, 0.4600]``, unless it declares its own ``CELL_FORMAT``:
    ``RBPResidual`` reads ``value +residual``, e.g. ``0.4100 +0.1200`` (its value is a lower bound, and
    ``value + residual`` the upper one). A cell whose fields are missing shows the value alone.

    The bracket of a bootstrapped measure (``BootNDCG``, ``BootAP``, …) is the spread of its replicates
    under the prior, not an error bar for the complete-judgment value: on TREC-COVID round 1, 90 %
    intervals of ``BootNDCG@10`` / ``BootAP@100`` contained it for 12 % / 0 % of the runs with the pool+run
    prior and 27 % / 16 % with ``prior=predicted`` (the manual, docs/measured.rst).
    For error bars, :func:`ir_incomplete.estimate` on a probability sample drawn by
    :func:`ir_incomplete.judging.sample` (its ``lo``/``hi`` columns can be shown the same way).
    """
    if decimals is not None and (isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0):
        raise ValueError(f"decimals must be an integer >= 0 or None, not {decimals!r}")
    long = long_form(table)
    runs = list(dict.fromkeys(long["run"].tolist()))
    measures = list(dict.fromkeys(long["measure"].tolist()))

    def wide(column: str) -> pd.DataFrame:
        grid = long.pivot(index="run", columns="measure", values=column).reindex(index=runs, columns=measures)
        grid.columns.name = "measure"
        return grid

    values = wide("value")
    fields = [c for c in long.columns if c not in ("run", "measure")]
    if all(long[c].isna().all() for c in fields if c != "value"):
        return values if decimals is None else values.round(decimals)
    places = TEXT_DECIMALS if decimals is None else decimals
    grids = {c: wide(c) for c in fields}
    declared = _declared(measures)
    text = pd.DataFrame(index=values.index, columns=values.columns, dtype=object)
    for measure in measures:
        ours = declared.get(measure)
        layout = ours.CELL_FORMAT if ours is not None and ours.CELL_FORMAT else DEFAULT_CELL_FORMAT
        used = [name for _, name, _, _ in string.Formatter().parse(layout) if name]
        cells = []
        for run in runs:
            numbers = {c: grids[c].at[run, measure] for c in fields}
            if pd.isna(numbers["value"]):
                cells.append("")
            elif all(c in numbers and pd.notna(numbers[c]) for c in used):
                cells.append(layout.format(**{c: f"{x:.{places}f}" for c, x in numbers.items()}))
            else:
                cells.append(f"{numbers['value']:.{places}f}")
        text[measure] = cells
    return text


def plot_intervals(
    table: pd.DataFrame,
    measure: str | None = None,
    *,
    reference: pd.Series | pd.DataFrame | Mapping[str, float] | None = None,
    sort: bool = True,
    ax: Axes | None = None,
    title: str | None = None,
    path: str | os.PathLike[str] | None = None,
    dpi: int = 100,
    figsize: tuple[float, float] | None = None,
) -> Axes:
    """Per-run point estimates of ``measure`` with their bootstrap intervals, one row per run.

    ``measure``: a measure of ``table`` (default: the first one with an interval, else the first).
    ``reference``: optional values per run, drawn as crosses: a ``Series``/dict indexed by run name, or a
    results table as ``table`` may be (e.g. what :func:`ir_incomplete.evaluate` returns for the complete
    judgments, per query or not): of one measure, or holding ``measure`` itself, whose values are taken
    (a table of several other measures is a ``ValueError`` listing them). ``sort``: order runs by their
    point estimate. Draws on ``ax`` or on a new ``matplotlib.figure.Figure`` (no pyplot state), writes a
    PNG to ``path`` when given and returns the ``Axes``.

    The bars of a bootstrapped measure are the spread of its replicates under the prior, not error bars
    for the complete-judgment value (the crosses of ``reference``): on TREC-COVID round 1, 90 % intervals
    of ``BootNDCG@10`` / ``BootAP@100`` contained it for 12 % / 0 % of the runs with the pool+run prior and
    27 % / 16 % with ``prior=predicted`` (the manual, docs/measured.rst). For error
    bars, plot the table of :func:`ir_incomplete.estimate` (a probability sample drawn by
    :func:`ir_incomplete.judging.sample`).
    """
    long = long_form(table)
    measures = list(dict.fromkeys(long["measure"].tolist()))
    if measure is None:
        with_interval = long.loc[long["lower"].notna(), "measure"]
        measure = with_interval.iloc[0] if len(with_interval) else measures[0]
    elif str(measure) not in measures:
        raise ValueError(f"measure {str(measure)!r} is not in the table; its measures: {', '.join(measures)}")
    rows = long[long["measure"] == str(measure)].reset_index(drop=True)
    if sort:
        rows = rows.sort_values("value", kind="stable").reset_index(drop=True)
    if ax is None:
        from matplotlib.figure import Figure

        size = figsize or (6.0, 1.0 + 0.22 * len(rows))
        fig = Figure(figsize=size, layout="constrained")
        ax = fig.add_subplot()
    y = np.arange(len(rows))
    has = rows["lower"].notna() & rows["upper"].notna()
    if has.any():
        err = np.vstack([(rows["value"] - rows["lower"])[has], (rows["upper"] - rows["value"])[has]])
        ax.errorbar(
            rows["value"][has],
            y[has],
            xerr=np.clip(err, 0, None),
            fmt="o",
            ms=4,
            capsize=2,
            label="estimate [interval]",
        )
    if (~has).any():
        ax.plot(rows["value"][~has], y[~has], "o", ms=4, label="estimate")
    if reference is not None:
        ref = _reference_values(reference, str(measure)).reindex(rows["run"].to_numpy())
        ax.plot(ref.to_numpy(), y, "x", color="black", ms=5, label="reference")
    ax.set_yticks(y)
    ax.set_yticklabels([str(r) for r in rows["run"]], fontsize=7)
    ax.set_xlabel(str(measure))
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title if title is not None else f"{measure} per run", fontsize=9)
    if reference is not None or has.any():
        ax.legend(fontsize=7, loc="lower right")
    if path is not None:
        from matplotlib.figure import Figure

        root = ax.figure
        while not isinstance(root, Figure):  # an Axes in a subfigure: save the whole figure that holds it
            root = root.figure
        root.savefig(path, dpi=dpi)
    return ax


def _reference_values(reference, measure: str) -> pd.Series:
    """The reference value of each run (a ``Series`` indexed by run name) from what :func:`plot_intervals`
    accepts as ``reference``."""
    if not isinstance(reference, pd.DataFrame):
        try:
            return pd.Series(reference, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"reference must be a Series or dict of values by run name, or a results table (DataFrame); "
                f"got {type(reference).__name__}: {exc}"
            ) from None
    long = long_form(reference)
    measures = list(dict.fromkeys(long["measure"].tolist()))
    if measure in measures:
        chosen = measure
    elif len(measures) == 1:
        chosen = measures[0]
    else:
        raise ValueError(
            f"the reference table holds {len(measures)} measures ({', '.join(measures)}) and not {measure}: "
            f"pass the rows of one of them, e.g. reference=ref[ref['measure'] == {measures[0]!r}]"
        )
    picked = long[long["measure"] == chosen]
    return pd.Series(picked["value"].to_numpy(dtype=np.float64), index=picked["run"].to_numpy())
