"""Every form of the ``runs`` argument of :func:`ir_incomplete.evaluate` → an ordered ``{name: run}``
(:func:`as_run_mapping`, also importable from :mod:`ir_incomplete.api`): run files and directories of them,
tables with a ``run`` column, mappings, single runs."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ir_incomplete.data.columns import _has_run_column, _plain, _read_run, _single_run
from ir_incomplete.data.ids import first_null, is_arrow_table
from ir_incomplete.data.readers import RUN_COLUMN, parquet_run_column, read_once, run_directory_entries

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = ["as_run_mapping"]


def _run_name(path) -> str:
    name = os.path.basename(os.fspath(path))
    for suffix in (".gz", ".parquet"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _looks_like_single_dict_run(runs: Mapping) -> bool:
    """``{query_id: {doc_id: score}}`` rather than ``{name: run}``: decided by the first non-empty inner
    dict (a query without documents comes first in some runs)."""
    for value in runs.values():
        if not isinstance(value, Mapping):
            return False
        for inner in value.values():
            return not isinstance(inner, Mapping)
    return False


def _reusable(run):
    """A one-shot iterator (e.g. a generator of ``ScoredDoc``) read once into a list, so that every
    measure, ours and ``ir_measures``', sees all of it; any other form unchanged."""
    return list(run) if isinstance(run, Iterator) else run


class _Runs:
    """``{name: run}`` that refuses a second run under a name already taken, naming both sources."""

    def __init__(self):
        self.runs: dict[str, Any] = {}
        self.sources: dict[str, str] = {}

    def add(self, name, run, source: str) -> None:
        key = str(name)
        if key in self.runs:
            first = self.runs[key]
            if isinstance(run, (str, os.PathLike)) and isinstance(first, (str, os.PathLike)):
                if os.path.realpath(first) == os.path.realpath(run):
                    return  # the same file given twice
            raise ValueError(
                f"two runs are named {key!r}: {self.sources[key]} and {source}; run names must be unique "
                f"(rename one, or pass a dict {{name: run}} with distinct names)"
            )
        self.runs[key] = _reusable(run)
        self.sources[key] = source


def _add_path(out: _Runs, path, read=None) -> None:
    """Add a run file, or every run file of a directory (hidden files and sub-directories are skipped; a
    link that leads nowhere, or to something that is not a file, is an error naming it). ``read``: the
    reader of the files read now (:func:`_add_file`; default :func:`ir_incomplete.data.columns._read_run`)."""
    if os.path.isdir(path):
        for full in run_directory_entries(path):
            f = os.path.basename(full)
            if os.path.isfile(full):
                _add_file(out, full, read)
            elif os.path.islink(full) and not os.path.isdir(full):
                raise ValueError(
                    f"run directory {os.fspath(path)!r} holds {f!r}, a link to {os.readlink(full)!r}, "
                    f"which is not a readable file (a dangling link?); remove or fix it"
                )
            elif not os.path.isdir(full):
                raise ValueError(
                    f"run directory {os.fspath(path)!r} holds {f!r}, which is not a regular file; remove it"
                )
    else:
        _add_file(out, path, read)


def _add_file(out: _Runs, path, read=None) -> None:
    """Add a run file under its name, to be read when it is evaluated; read it now when it can be read
    only once (a named pipe, ``<(zcat run.gz)``: read once, kept in memory) or when it is a parquet file
    with a ``run`` column, which holds one run per value of that column, as a DataFrame with that column
    does."""
    where = f"file {os.fspath(path)!r}"
    if not (read_once(path) or parquet_run_column(path)):
        out.add(_run_name(path), path, where)
        return
    table = (read or _read_run)(path)
    if _has_run_column(table):
        for name, part in _split_runs(table).items():
            out.add(name, part, f"'run' value {name!r} of {where}")
    else:
        out.add(_run_name(path), table, where)


def _split_runs(table) -> dict[str, Any]:
    """``{name: run}`` of a DataFrame or pyarrow Table with a ``run`` column: one run per value, in order
    of first appearance."""
    if isinstance(table, pd.DataFrame):
        return _split_run_column(table)
    return _split_run_table(table)


def _split_run_column(frame: pd.DataFrame) -> dict[str, Any]:
    missing = frame["run"].isna().to_numpy()
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise ValueError(
            f"the 'run' column has {int(missing.sum())} missing value(s), first at row {row} "
            f"(index {_plain(frame.index[row])!r}); every row must name its run"
        )
    out = _Runs()
    for name, part in frame.groupby("run", sort=False):
        out.add(name, part, f"'run' value {_plain(name)!r}")
    return out.runs


def _split_run_table(table) -> dict[str, Any]:
    """:func:`_split_run_column` of a pyarrow Table: the rows of each run taken in Arrow (no ``str``
    object per id); runs whose rows are already together are slices, not copies."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if table.column_names.count(RUN_COLUMN) > 1:
        raise ValueError(f"run Arrow table has {table.column_names.count(RUN_COLUMN)} columns named 'run'; keep one")
    column = table.column(RUN_COLUMN)
    missing = first_null(column)
    if missing is not None:
        raise ValueError(
            f"the 'run' column has {column.null_count} missing value(s), first at row {missing}; every row "
            f"must name its run"
        )
    encoded = pc.dictionary_encode(column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column)
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    names = encoded.dictionary.to_pylist()
    counts = np.bincount(codes, minlength=len(names))
    if len(codes) and not (codes[1:] >= codes[:-1]).all():  # the rows of some run are not together
        table = table.take(pa.array(np.argsort(codes, kind="stable")))
    out = _Runs()
    start = 0
    for name, count in zip(names, counts.tolist(), strict=True):
        out.add(name, table.slice(start, count), f"'run' value {name!r}")
        start += count
    return out.runs


def as_run_mapping(runs) -> dict[str, Any]:
    """Normalise the ``runs`` argument of :func:`evaluate` to an ordered ``{name: run}``.

    Accepted: a mapping name → run (any run form); a DataFrame, a pyarrow Table or a parquet file
    with a ``run`` column (one run per value, in order of first appearance; also in a directory or a
    list of files); a single run (DataFrame, pyarrow Table, dict of dicts, iterable of ``ScoredDoc``);
    a TREC run file; a directory of run files; a list of run files. A table given as one run (the
    value of a mapping) whose ``run`` column holds several values is refused. A file that can be read
    only once (a named pipe, ``<(zcat run.gz)``) is read here, once. One-shot iterators (generators) are read once into
    lists. Names are ``str``; two different runs whose names coincide (``1`` and ``'1'``, files
    ``run1`` and ``run1.gz``, ``A/run1`` and ``B/run1``) are a ``ValueError`` naming both.
    """
    return _run_mapping(runs)


def _run_mapping(runs, read=None) -> dict[str, Any]:
    """:func:`as_run_mapping`; ``read``: the reader of the run files read at once (see :func:`_add_file`;
    the command line's reads files in the background)."""
    if isinstance(runs, pd.DataFrame) or is_arrow_table(runs):
        if _has_run_column(runs):
            return _split_runs(runs)
        return {"run": runs}
    if isinstance(runs, Mapping):
        if _looks_like_single_dict_run(runs):
            return {"run": runs}
        out = _Runs()
        for key, run in runs.items():
            out.add(key, _single_run(run, key), f"key {_plain(key)!r}")
        return out.runs
    if isinstance(runs, (str, os.PathLike)):
        if isinstance(runs, str) and "\n" in runs:
            return {"run": runs}
        out = _Runs()
        _add_path(out, runs, read)
        return out.runs
    if isinstance(runs, (list, tuple)) and runs and all(isinstance(r, (str, os.PathLike)) for r in runs):
        out = _Runs()
        for path in runs:
            if isinstance(path, str) and "\n" in path:
                raise ValueError("a list of runs must hold file or directory paths, not run text")
            _add_path(out, path, read)
        return out.runs
    return {"run": _reusable(runs)}
