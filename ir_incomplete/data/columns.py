"""Every run and qrels input form → columns: query ids, document ids and the numeric field.

DataFrames (ir_measures or PyTerrier column names), dicts of dicts, iterables of named tuples and TREC
files all become numpy arrays here; ids become ``str`` (numbers as their decimal text), and every
missing or inexact id is refused with its row. Ids are hashed here too (:func:`_hash_ids`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    #: a TREC file: a path (``.gz`` allowed) or the text itself (a string with a newline)
    TrecSource = str | os.PathLike[str]
else:
    from ir_incomplete._lazy import pandas as pd

from ir_incomplete.data.ids import (
    DocIds,
    _take_objects,
    arrow_strings,
    first_null,
    hash_ids,
    is_arrow,
    is_arrow_table,
    to_objects,
)
from ir_incomplete.data.readers import RUN_COLUMN, _read_trec_any

_QREL_COLUMNS = (("query_id", "qid"), ("doc_id", "docno"), ("relevance", "label"))
_RUN_COLUMNS = (("query_id", "qid"), ("doc_id", "docno"), ("score", "score"))

_EXACT_FLOAT_IDS = 2**53  # integral floats below this are exactly their integer


def _float_ids(arr: np.ndarray, what: str, rows: np.ndarray | None = None) -> np.ndarray:
    """Float ids as the text of their integer (``1.0`` → ``"1"``, as ``qid`` columns read as numbers
    mean); a non-integral or inexact float is refused rather than matched against nothing."""
    bad = np.flatnonzero((arr != np.round(arr)) | (np.abs(arr) >= _EXACT_FLOAT_IDS))
    if len(bad):
        row = int(bad[0] if rows is None else rows[bad[0]])
        raise ValueError(
            f"{what} {float(arr[bad[0]])!r} (row {row}) is a float that is not an exact integer, so it "
            f"cannot name an id; give ids as strings (e.g. frame[column].astype(str))"
        )
    return arr.astype(np.int64).astype(str).astype(object)


def _ids(values, what: str) -> np.ndarray:
    """An object array of ``str`` ids (numbers are turned into their decimal text; integral floats into
    the text of their integer, so that ``1.0`` matches ``"1"`` and ``1``)."""
    arr, checked = _id_array(values, what)
    if is_arrow(arr):
        return to_objects(arr)
    return arr if checked else _object_ids(arr, what)


def _doc_ids(values, what: str) -> DocIds:
    """:func:`_ids` as :class:`DocIds`: Arrow strings stay Arrow strings (no ``str`` object per id)."""
    arr, checked = _id_array(values, what)
    return DocIds(arr if is_arrow(arr) or checked else _object_ids(arr, what))


def _id_array(values, what: str):
    """Ids as an object array (or an Arrow ``large_string`` array when they are Arrow strings, checked
    for nulls), and whether they are checked: ``True`` when converted (numbers), Arrow or empty;
    ``False`` for an object array as given, to be checked by :func:`_object_ids` (the run conversion
    checks query ids only where they change: see :func:`_query_segments`)."""
    strings = arrow_strings(values)
    if strings is not None:
        null = first_null(strings)
        if null is not None:
            raise ValueError(f"{what} contains missing values (row {null})")
        return strings, True
    if is_arrow(values):  # Arrow numbers (or other types): through numpy
        values = values.to_numpy(zero_copy_only=False)
    arr = np.asarray(values) if not isinstance(values, (pd.Series, pd.Index)) else values.to_numpy()
    if arr.dtype != object:
        if arr.dtype.kind == "S":  # numpy bytes: UTF-8 text
            return _utf8_ids(arr, what, np.arange(len(arr))), True
        if arr.dtype.kind == "c":
            raise ValueError(f"{what} holds complex numbers (dtype {arr.dtype}), which cannot name ids")
        if arr.dtype.kind == "f":
            if np.isnan(arr).any():
                raise ValueError(f"{what} contains missing values (row {int(np.flatnonzero(np.isnan(arr))[0])})")
            return _float_ids(arr, what), True
        return arr.astype(str).astype(object), True
    return arr, len(arr) == 0


def _object_ids(arr: np.ndarray, what: str) -> np.ndarray:
    """:func:`_ids` of an object array: itself when every element is a ``str`` (one C pass)."""
    if len(arr) == 0 or pd.api.types.infer_dtype(arr, skipna=False) == "string":
        return arr
    missing = pd.isna(arr)
    if missing.any():
        raise ValueError(f"{what} contains missing values (row {int(np.flatnonzero(missing)[0])})")
    floats = np.fromiter((isinstance(v, (float, np.floating)) for v in arr), dtype=bool, count=len(arr))
    raw = np.fromiter((isinstance(v, (bytes, bytearray)) for v in arr), dtype=bool, count=len(arr))
    out = np.array([str(v) for v in arr], dtype=object)
    if floats.any():
        out[floats] = _float_ids(arr[floats].astype(np.float64), what, np.flatnonzero(floats))
    if raw.any():  # bytes (also numpy.bytes_): their UTF-8 text, not "b'd1'"
        out[raw] = _utf8_ids(arr[raw], what, np.flatnonzero(raw))
    return out


def _utf8_ids(arr: np.ndarray, what: str, rows: np.ndarray) -> np.ndarray:
    """Byte-string ids decoded as UTF-8 (an object array of ``str``); bytes that are not UTF-8 are refused
    with their row (``rows``: the row of each element)."""
    out = np.empty(len(arr), dtype=object)
    for i, value in enumerate(arr.tolist()):
        try:
            out[i] = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(
                f"{what} {bytes(value)!r} (row {int(rows[i])}) is a byte string that is not UTF-8 text; "
                f"decode the ids first (e.g. frame[column].str.decode('latin-1'))"
            ) from None
    return out


def _frame_columns(frame, spec, kind: str):
    """The columns of a DataFrame or a pyarrow Table named by ``spec`` (each: the accepted names)."""
    table = is_arrow_table(frame)
    names_found = list(frame.column_names) if table else list(frame.columns)
    cols = []
    for names in spec:
        found = next((n for n in names if n in names_found), None)
        if found is None:
            expected = " or ".join("/".join(n[i] for n in spec) for i in range(2))
            raise ValueError(
                f"{kind} {'Arrow table' if table else 'DataFrame'} is missing column {names[0]!r} "
                f"(found columns {list(map(str, names_found))}; expected {expected})"
            )
        if table:
            if names_found.count(found) > 1:
                raise ValueError(f"{kind} Arrow table has {names_found.count(found)} columns named {found!r}; keep one")
            cols.append(frame.column(found))
            continue
        column = frame[found]
        if isinstance(column, pd.DataFrame):  # the label names several columns
            raise ValueError(
                f"{kind} DataFrame has {column.shape[1]} columns named {found!r}; keep one "
                f"(e.g. frame.loc[:, ~frame.columns.duplicated()])"
            )
        cols.append(column)
    return cols


def _values(values) -> np.ndarray:
    """Scores or grades from Python values: numeric when all are numbers, else objects (checked later)."""
    arr = np.asarray(values)
    return arr if arr.dtype.kind in "iufb" else np.array(values, dtype=object)


def _tuples_columns(items, spec, kind: str):
    items = list(items)
    if not items:
        return [np.array([], dtype=object), np.array([], dtype=object), np.array([], dtype=float)]
    first = items[0]
    fields = getattr(first, "_fields", None)
    if fields is not None:
        idx = []
        for names in spec:
            found = next((n for n in names if n in fields), None)
            if found is None:
                raise ValueError(f"{kind} tuples are missing field {names[0]!r} (found fields {list(fields)})")
            idx.append(fields.index(found))
    elif isinstance(first, (tuple, list)) and len(first) >= 3:
        idx = [0, 1, 2]
    else:
        raise ValueError(
            f"{kind} must be a DataFrame, a dict of dicts, an iterable of named tuples "
            f"({'ScoredDoc' if kind == 'run' else 'Qrel'}), or a TREC file path; got {type(first).__name__} items"
        )
    cols = list(zip(*[(it[idx[0]], it[idx[1]], it[idx[2]]) for it in items], strict=True))
    return [np.array(cols[0], dtype=object), np.array(cols[1], dtype=object), _values(cols[2])]


def _columns(data, spec, kind: str, reader):
    if isinstance(data, pd.DataFrame) or is_arrow_table(data):
        return _frame_columns(data, spec, kind)
    if isinstance(data, (str, os.PathLike)):
        return _frame_columns(reader(data), spec, kind)
    if isinstance(data, Mapping):
        qids: list[Any] = []
        dids: list[Any] = []
        vals: list[Any] = []
        for qid, docs in data.items():
            if not isinstance(docs, Mapping):
                raise ValueError(
                    f"{kind} dict must map query ids to dicts of doc_id -> value; "
                    f"query {qid!r} maps to {type(docs).__name__}"
                )
            qids.extend([qid] * len(docs))
            dids.extend(docs.keys())
            vals.extend(docs.values())
        return [np.array(qids, dtype=object), np.array(dids, dtype=object), _values(vals)]
    if hasattr(data, "__iter__"):
        return _tuples_columns(data, spec, kind)
    raise ValueError(
        f"cannot read {kind} of type {type(data).__name__}: expected a DataFrame "
        f"(query_id/doc_id/{spec[2][0]} or qid/docno/{spec[2][1]}), a pyarrow Table with those columns, "
        f"a dict of dicts, an iterable of named tuples, a TREC file path or a parquet file path"
    )


def _plain(value):
    """A numpy scalar as the Python value it holds, for messages (``1``, not ``np.int64(1)``)."""
    return value.item() if isinstance(value, np.generic) else value


def _first_complex(values: np.ndarray) -> int | None:
    """Position of the first complex number in an object array of values (``None``: there is none)."""
    return next((i for i, v in enumerate(values.tolist()) if isinstance(v, (complex, np.complexfloating))), None)


def _row_label(qids, dids, i) -> str:
    """``row i (query_id='q', doc_id='d')`` with the ids as Python values, whether the columns hold
    Python objects, numpy scalars or pyarrow scalars."""
    return f"row {int(i)} (query_id={_id_value(qids[i])!r}, doc_id={_id_value(dids[i])!r})"


def _id_value(value):
    """An id of a column as the Python value it holds, for messages (pyarrow and numpy scalars unwrapped)."""
    as_py = getattr(value, "as_py", None)
    return as_py() if callable(as_py) else _plain(value)


def run_columns(run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(query_ids, doc_ids, scores)`` of any run form: object arrays of ``str`` and ``float64``."""
    qids, dids, scores = _run_columns(run)
    qids = to_objects(qids) if is_arrow(qids) else _object_ids(qids, "run query_id")
    return qids, dids.to_numpy(), scores


def _has_run_column(data) -> bool:
    if isinstance(data, pd.DataFrame):
        return RUN_COLUMN in data.columns
    return is_arrow_table(data) and RUN_COLUMN in data.column_names


def _single_run(run, key) -> Any:
    """``run``, refused when it is a table whose ``run`` column names several runs: given as one run
    (the value of ``key``), they would be scored as one merged run."""
    if not _has_run_column(run):
        return run
    if isinstance(run, pd.DataFrame):
        column = run[RUN_COLUMN]
        values = column.iloc[:, 0].to_numpy() if isinstance(column, pd.DataFrame) else column.to_numpy()
        several = len(values) > 1 and bool((values[1:] != values[:-1]).any())
        distinct = list(pd.unique(values)) if several else []
    else:
        import pyarrow.compute as pc

        distinct = pc.unique(run.column(RUN_COLUMN)).to_pylist()
    distinct = [v for v in distinct if not pd.isna(v)]
    if len(distinct) > 1:
        shown = ", ".join(repr(_plain(v)) for v in distinct[:3]) + (", ..." if len(distinct) > 3 else "")
        raise ValueError(
            f"run {_plain(key)!r} has a 'run' column with {len(distinct)} values ({shown}): it holds several "
            f"runs, which would be scored as one; give the table itself as the runs (one run per value of "
            f"'run'), or one run per key"
        )
    return run


def _run_columns(run) -> tuple[Any, DocIds, np.ndarray]:
    """:func:`run_columns`, except that query ids given as an object array are returned unchecked (the
    run conversion checks them where they change: :func:`_query_segments`, which is enough there),
    Arrow query ids stay an Arrow array, and document ids are :class:`DocIds`. Scores that may be the
    caller's memory are returned read-only (writeable scores are this call's own)."""
    if isinstance(run, (str, os.PathLike)):  # a parquet file with a 'run' column may hold several runs
        run = _single_run(_read_run(run), run)
    q, d, s = _columns(run, _RUN_COLUMNS, "run", _read_run)
    qids, _ = _id_array(q, "run query_id")
    dids = _doc_ids(d, "run doc_id")
    fresh = is_arrow(s)  # scores this conversion made (its own to reorder in place) or the caller's
    if fresh:
        s = to_objects(s)
        fresh = s.flags.owndata and s.flags.writeable
    raw = s.to_numpy() if isinstance(s, pd.Series) else np.asarray(s)
    if raw.dtype == bool or not (np.issubdtype(raw.dtype, np.number) or raw.dtype == object):
        raise ValueError(f"run scores must be numbers (got dtype {raw.dtype})")
    if raw.dtype.kind == "c":
        raise ValueError(f"run scores are complex numbers (dtype {raw.dtype}); scores must be real numbers")
    if raw.dtype == object:
        complex_at = _first_complex(raw)
        if complex_at is not None:
            raise ValueError(
                f"run score {raw[complex_at]!r} is a complex number at {_row_label(qids, dids, complex_at)}; "
                f"scores must be real numbers"
            )
    if raw.dtype == object:
        numeric = pd.to_numeric(pd.Series(raw), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(np.isnan(numeric) & ~pd.isna(raw))
        if len(bad):
            raise ValueError(f"run score {raw[bad[0]]!r} is not a number at {_row_label(qids, dids, bad[0])}")
        scores = numeric
    else:
        scores = raw.astype(np.float64, copy=False)
        if not fresh and np.shares_memory(scores, raw) and scores.flags.writeable:
            scores = scores.view()
            scores.flags.writeable = False  # the caller's: copied before any reordering in place
    nan = np.flatnonzero(~np.isfinite(scores)) if len(scores) else np.zeros(0, dtype=np.int64)
    if len(nan):
        raise ValueError(
            f"run score {float(scores[nan[0]])!r} is not a finite number at "
            f"{_row_label(qids, dids, nan[0])} ({len(nan)} such rows)"
        )
    return qids, dids, scores


def _query_segments(qids) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(codes, names, starts)`` of a run's query id column: the start offsets of its runs of equal
    adjacent ids (segments), the distinct ids (``str``, first-seen order) and the index in ``names`` of
    each segment's id; ids checked as :func:`_ids` does. Arrow ids are encoded in Arrow (no ``str``
    object per row).

    Only the first id of each run of equal ids is checked: adjacent ids are compared first (one pass
    that the conversion needs anyway); when every first id is a ``str``, every id is one (a ``str``
    equals only a ``str``; a missing value equals nothing, so it starts a run). Otherwise the whole
    column is checked or converted (numbers to their text), and compared again."""
    if is_arrow(qids):
        return _arrow_query_segments(qids)
    try:
        starts = _segments(qids)
    except (TypeError, ValueError):  # e.g. pd.NA, whose comparisons have no truth value
        starts = None
    if starts is None or not (len(qids) == 0 or pd.api.types.infer_dtype(qids[starts], skipna=False) == "string"):
        qids = _object_ids(qids, "run query_id")
        starts = _segments(qids)
    codes, names = pd.factorize(qids[starts]) if len(starts) else (np.zeros(0, np.int64), [])
    return codes.astype(np.int64), np.asarray(names, dtype=object), starts


def _arrow_query_segments(qids) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_query_segments` of Arrow strings: adjacent ids compared in Arrow; when there are few
    segments (query ids grouped, as in TREC files) only their first ids become ``str``; otherwise the
    column is dictionary-encoded in Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(qids)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, dtype=object), np.zeros(0, np.int64)
    change = to_objects(pc.not_equal(qids.slice(1), qids.slice(0, n - 1)))
    starts = np.concatenate(([0], np.flatnonzero(change) + 1)).astype(np.int64)
    del change
    if len(starts) <= max(n // 16, 1):  # taken chunk by chunk: the column's strings are not copied
        codes, names = pd.factorize(_take_objects(qids, starts))
        return codes.astype(np.int64), np.asarray(names, dtype=object), starts
    combined = qids.combine_chunks() if isinstance(qids, pa.ChunkedArray) else qids
    encoded = pc.dictionary_encode(combined)
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return codes[starts], to_objects(encoded.dictionary), starts


def _read_run(source):
    """A run file (TREC or parquet) as a pyarrow Table (read by pyarrow) or a DataFrame."""
    return _read_trec_any(source, "run")


def _hash_ids(ids) -> np.ndarray:
    """64-bit hashes of ids (see :func:`ir_incomplete.data.ids.hash_ids`)."""
    return hash_ids(ids)


def _segments(qids: np.ndarray):
    """Start offsets of runs of equal adjacent query ids."""
    if len(qids) == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(qids[1:] != qids[:-1]) + 1
    return np.concatenate(([0], change)).astype(np.int64)
