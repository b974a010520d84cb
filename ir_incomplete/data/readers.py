"""Readers of TREC text files: runs, qrels and sampled qrels ("prels").

Every line must have exactly the fields of its format and a valid numeric field; a malformed line is a
``ValueError`` naming the file and the line, a truncated or corrupt ``.gz`` file one naming the file.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    #: a TREC file: a path (``.gz`` allowed) or the text itself (a string with a newline)
    TrecSource = str | os.PathLike[str]
else:
    from ir_incomplete._lazy import pandas as pd

from ir_incomplete.data.codes import GRADE_RANGE

#: the fields of each TREC text format, in line order: the one place that says how many fields a line
#: of each format has (a line with another number of fields is refused with its file name and number)
TREC_FIELDS = {
    "run": ("query_id", "q0", "doc_id", "rank", "score", "tag"),
    "qrels": ("query_id", "iteration", "doc_id", "relevance"),
    "prels": ("query_id", "iteration", "doc_id", "stratum", "relevance"),
}
#: the columns of each format that are kept, and the numeric one among them
_TREC_KEEP = {
    "run": ("query_id", "doc_id", "score"),
    "qrels": ("query_id", "doc_id", "relevance"),
    "prels": ("query_id", "doc_id", "stratum", "relevance"),
}
_TREC_NUMERIC = {"run": "score", "qrels": "relevance", "prels": "relevance"}
#: the formats whose numeric field is a grade (an integer in GRADE_RANGE)
_GRADED = ("qrels", "prels")
#: errors of a truncated or corrupt compressed file, or of bytes that are not text
_DECODE_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile, UnicodeDecodeError)


def _open_text(source):
    if isinstance(source, str) and "\n" in source:
        return io.StringIO(source)
    path = os.fspath(source)
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt")
    return open(path)


def _source_name(source) -> str:
    if isinstance(source, str) and "\n" in source:
        return "<text>"
    return os.fspath(source) if not isinstance(source, bytes) else source.decode(errors="replace")


def _numeric_problem(kind: str, value: float) -> str | None:
    """Why ``value`` is not acceptable in the numeric field of ``kind`` (``None`` when it is)."""
    if not np.isfinite(value):
        return "is not a finite number"
    if kind in _GRADED:
        if value != np.round(value):
            return "is not an integer grade"
        if not GRADE_RANGE[0] <= value <= GRADE_RANGE[1]:
            return f"is outside the supported grade range {GRADE_RANGE[0]}..{GRADE_RANGE[1]}"
    return None


def _bad_line(source, kind: str) -> str | None:
    """The first malformed line of a TREC file, described with file name and line number (the slow path,
    taken only after the vectorized checks of :func:`_read_trec` failed)."""
    fields = TREC_FIELDS[kind]
    numeric = fields.index(_TREC_NUMERIC[kind])
    name = _source_name(source)
    with _open_text(source) as handle:
        for number, line in enumerate(handle, 1):
            parts = line.split()
            if not parts:
                continue
            shown = line.strip()
            shown = shown if len(shown) <= 120 else shown[:117] + "..."
            if len(parts) != len(fields):
                return (
                    f"{name}:{number}: expected {len(fields)} fields ({' '.join(fields)}), "
                    f"found {len(parts)}: {shown!r}"
                )
            text = parts[numeric]
            try:
                value = float(text)
            except ValueError:
                return f"{name}:{number}: {fields[numeric]} {text!r} is not a number: {shown!r}"
            problem = _numeric_problem(kind, value)
            if problem:
                return f"{name}:{number}: {fields[numeric]} {text!r} {problem}: {shown!r}"
    return None


def _valid_frame(frame, kind: str) -> bool:
    """Vectorized check of a parsed TREC table: field count, no short line, numeric field as required."""
    fields = TREC_FIELDS[kind]
    if frame.shape[1] != len(fields):
        return False
    frame.columns = list(fields)
    last = frame[fields[-1]]
    if last.dtype == object and (last.to_numpy() == "").any():  # a line with fewer fields
        return False
    values = frame[_TREC_NUMERIC[kind]]
    if not (pd.api.types.is_integer_dtype(values) or pd.api.types.is_float_dtype(values)):
        return False
    if kind in _GRADED and pd.api.types.is_integer_dtype(values):
        arr = values.to_numpy()
        return len(arr) == 0 or bool(GRADE_RANGE[0] <= arr.min() and arr.max() <= GRADE_RANGE[1])
    arr = values.to_numpy(dtype=np.float64)
    if not np.isfinite(arr).all():
        return False
    if kind in _GRADED:
        return len(arr) == 0 or bool(
            (arr == np.round(arr)).all() and GRADE_RANGE[0] <= arr.min() and arr.max() <= GRADE_RANGE[1]
        )
    return True


def _read_trec(source, kind: str) -> pd.DataFrame:
    """Read a whitespace-separated TREC file of ``kind`` (see :data:`TREC_FIELDS`) with one C pass;
    ``kind="qrels"`` also reads sampled qrels ("prels"), recognised by the five fields of the first line.

    Every line must have exactly the format's fields and a valid numeric field; otherwise ``ValueError``
    names the file and the line. A truncated or corrupt ``.gz`` file is a ``ValueError`` naming the file.
    """
    name = _source_name(source)
    try:
        with _open_text(source) as handle:
            if kind == "qrels" and _first_line_fields(handle) == len(TREC_FIELDS["prels"]):
                kind = "prels"
            handle.seek(0)
            fields = TREC_FIELDS[kind]
            numeric = fields.index(_TREC_NUMERIC[kind])
            dtype: dict[int, Any] = {i: object for i in range(len(fields)) if i != numeric}
            if kind == "run":
                dtype[numeric] = np.float64
            try:
                frame = pd.read_csv(handle, sep=r"\s+", header=None, dtype=dtype, na_filter=False, engine="c")
                valid = _valid_frame(frame, kind)
            except pd.errors.EmptyDataError:
                frame, valid = pd.DataFrame({f: pd.Series(dtype=object) for f in fields}), True
            except (ValueError, TypeError, OverflowError):  # e.g. a word where a number belongs
                frame, valid = None, False
        problem = None if valid else _bad_line(source, kind)
    except _DECODE_ERRORS as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise ValueError(f"cannot read {kind} file {name}: truncated or corrupt ({detail})") from None
    if problem is not None:
        raise ValueError(f"malformed {kind} line: {problem}")
    if not valid:  # the parser refused something the line-by-line scan accepts
        raise ValueError(f"cannot parse {kind} file {name} as {len(fields)} whitespace-separated fields")
    out = frame[list(_TREC_KEEP[kind])]
    if kind in _GRADED and len(out) == 0:
        out = out.astype({"relevance": np.int64})
    if kind == "run" and len(out) == 0:
        out = out.astype({"score": np.float64})
    return out.reset_index(drop=True)


def read_trec_qrels(source: TrecSource) -> pd.DataFrame:
    """Read a TREC qrels file (``qid iter docid grade``, ``.gz`` allowed) into ``query_id/doc_id/relevance``.
    A file whose first line has five fields is sampled qrels, read by :func:`read_trec_prels`.

    Every line needs exactly the fields of its format and an integer grade in :data:`GRADE_RANGE`; a
    malformed line (also a file mixing 4- and 5-field lines) or a truncated ``.gz`` file is a
    ``ValueError`` naming the file (and line)."""
    return _read_trec(source, "qrels")


def _first_line_fields(handle) -> int:
    """Number of whitespace-separated fields on the first non-blank line of an open file (0: none)."""
    for line in handle:
        if line.strip():
            return len(line.split())
    return 0


def read_trec_prels(source: TrecSource) -> pd.DataFrame:
    """Read sampled qrels ("prels": ``qid iter docid stratum grade``, ``.gz`` allowed; NIST ``sample_eval``)
    into ``query_id/doc_id/stratum/relevance``. Grade −1 = pooled in that stratum but not sampled; the
    stratum is a label, kept as text. Malformed lines are refused as by :func:`read_trec_qrels`."""
    return _read_trec(source, "prels")


def read_trec_run(source: TrecSource) -> pd.DataFrame:
    """Read a TREC run file (``qid Q0 docid rank score tag``, ``.gz`` allowed) into
    ``query_id/doc_id/score``. The rank column is ignored, as trec_eval does. Every line needs exactly
    six fields and a finite numeric score; a malformed line or a truncated ``.gz`` file is a
    ``ValueError`` naming the file (and line)."""
    return _read_trec(source, "run")
