"""Layer 1: every qrels/run input form → one columnar data model.

Qrels become a :class:`Qrels` (topic and document ids interned to integers once, per-topic judgment
counts per grade). Runs — one or many at once — become a :class:`RankedLists`: a padded
``[rankings × depth]`` matrix of *codes*, one row per (run, topic) pair, in trec_eval's ranking order.

Codes (``int32``):

* ``g >= 0``           judged, with grade ``g``
* ``POOLED_UNJUDGED``  in the qrels with a negative grade (trec_eval's "pooled but unjudged", spec D1)
* ``UNPOOLED``         not in the qrels of that topic
* ``PAD``              past the end of the ranking

Ranking order (spec §1.3, D19): score descending, compared as single-precision floats by default (what
trec_eval 9.x, pytrec_eval and ir_measures do), ties broken by document id descending, byte-wise.
A document twice in one ranking is an error that names it.

Everything here is vectorized: document ids are hashed once; runs already in ranking order (as TREC
runs usually are) are recognised in one pass and not sorted; only documents the qrels mention are looked
up. :func:`prepare_runs` does the qrels-independent part once, for runs evaluated against many qrels.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    #: a TREC file: a path (``.gz`` allowed) or the text itself (a string with a newline)
    TrecSource = str | os.PathLike[str]
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = [
    "POOLED_UNJUDGED",
    "UNPOOLED",
    "PAD",
    "NEGATIVE_POLICIES",
    "SCORE_PRECISIONS",
    "Qrels",
    "RankedLists",
    "read_trec_qrels",
    "read_trec_prels",
    "read_trec_run",
    "PreparedRuns",
    "prepare_runs",
    "rank_runs",
    "run_columns",
    "trec_order",
]

_DENSE_LOOKUP_CELLS = 4_000_000  # qrels look-up through a dense [topics × judged docs] table up to this size
_FIXED_WIDTH_CHARS = 64  # tie-breaking sorts ids as fixed-width strings when none is longer
_HASH_PROBE = "ir_incomplete.data: hash seed probe"  # hash() of str differs between processes: detect it
_FILTER_BLOCK = 1 << 20  # documents checked against the qrels' hash table per step (bounds temporaries)

POOLED_UNJUDGED = -2
UNPOOLED = -1
PAD = -3

NEGATIVE_POLICIES = ("pooled_unjudged", "zero")
SCORE_PRECISIONS = ("float32", "float64")

_QREL_COLUMNS = (("query_id", "qid"), ("doc_id", "docno"), ("relevance", "label"))
_RUN_COLUMNS = (("query_id", "qid"), ("doc_id", "docno"), ("score", "score"))


# ---------------------------------------------------------------------------------------------------
# reading files
# ---------------------------------------------------------------------------------------------------
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
#: grades (qrels relevance values) must lie in this range: the code matrix holds them as int32
GRADE_RANGE = (-(2**31) + 1, 2**31 - 1)
#: the largest grade that measures indexing grades by value (nDCG and GAP families) accept
MAX_INDEXED_GRADE = 4096
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


# ---------------------------------------------------------------------------------------------------
# columns of any input form
# ---------------------------------------------------------------------------------------------------
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
    return arr if checked else _object_ids(arr, what)


def _id_array(values, what: str) -> tuple[np.ndarray, bool]:
    """Ids as an object array, and whether they are checked: ``True`` when converted (numbers) or
    empty; ``False`` for an object array as given, to be checked by :func:`_object_ids` (the run
    conversion checks query ids only where they change: see :func:`_query_segments`)."""
    arr = np.asarray(values) if not isinstance(values, (pd.Series, pd.Index)) else values.to_numpy()
    if arr.dtype != object:
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
    out = np.array([str(v) for v in arr], dtype=object)
    if floats.any():
        out[floats] = _float_ids(arr[floats].astype(np.float64), what, np.flatnonzero(floats))
    return out


def _frame_columns(frame: pd.DataFrame, spec, kind: str):
    cols = []
    for names in spec:
        found = next((n for n in names if n in frame.columns), None)
        if found is None:
            expected = " or ".join("/".join(n[i] for n in spec) for i in range(2))
            raise ValueError(
                f"{kind} DataFrame is missing column {names[0]!r} "
                f"(found columns {list(map(str, frame.columns))}; expected {expected})"
            )
        cols.append(frame[found])
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
            f"({'Qrel' if kind == 'qrels' else 'ScoredDoc'}), or a TREC file path; got {type(first).__name__} items"
        )
    cols = list(zip(*[(it[idx[0]], it[idx[1]], it[idx[2]]) for it in items], strict=True))
    return [np.array(cols[0], dtype=object), np.array(cols[1], dtype=object), _values(cols[2])]


def _columns(data, spec, kind: str, reader):
    if isinstance(data, pd.DataFrame):
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
        f"(query_id/doc_id/{spec[2][0]} or qid/docno/{spec[2][1]}), a dict of dicts, "
        f"an iterable of named tuples or a TREC file path"
    )


def _row_label(qids, dids, i) -> str:
    return f"row {int(i)} (query_id={qids[i]!r}, doc_id={dids[i]!r})"


def run_columns(run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(query_ids, doc_ids, scores)`` of any run form: object arrays of ``str`` and ``float64``."""
    qids, dids, scores = _run_columns(run)
    return _object_ids(qids, "run query_id"), dids, scores


def _run_columns(run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`run_columns`, except that query ids given as an object array are returned unchecked: the
    run conversion checks them where they change (:func:`_query_segments`), which is enough there."""
    q, d, s = _columns(run, _RUN_COLUMNS, "run", read_trec_run)
    qids, _ = _id_array(q, "run query_id")
    dids = _ids(d, "run doc_id")
    raw = s.to_numpy() if isinstance(s, pd.Series) else np.asarray(s)
    if raw.dtype == bool or not (np.issubdtype(raw.dtype, np.number) or raw.dtype == object):
        raise ValueError(f"run scores must be numbers (got dtype {raw.dtype})")
    if raw.dtype == object:
        numeric = pd.to_numeric(pd.Series(raw), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(np.isnan(numeric) & ~pd.isna(raw))
        if len(bad):
            raise ValueError(f"run score {raw[bad[0]]!r} is not a number at {_row_label(qids, dids, bad[0])}")
        scores = numeric
    else:
        scores = raw.astype(np.float64, copy=False)
    nan = np.flatnonzero(~np.isfinite(scores)) if len(scores) else np.zeros(0, dtype=np.int64)
    if len(nan):
        raise ValueError(
            f"run score {float(scores[nan[0]])!r} is not a finite number at "
            f"{_row_label(qids, dids, nan[0])} ({len(nan)} such rows)"
        )
    return qids, dids, scores


def _query_segments(qids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, starts)``: the query ids of a run column checked as :func:`_ids` does, and the start
    offsets of its runs of equal adjacent ids.

    Only the first id of each run of equal ids is checked: adjacent ids are compared first (one pass
    that the conversion needs anyway); when every first id is a ``str``, every id is one (a ``str``
    equals only a ``str``; a missing value equals nothing, so it starts a run). Otherwise the whole
    column is checked or converted (numbers to their text), and compared again."""
    try:
        starts = _segments(qids)
    except (TypeError, ValueError):  # e.g. pd.NA, whose comparisons have no truth value
        starts = None
    if starts is not None and (len(qids) == 0 or pd.api.types.infer_dtype(qids[starts], skipna=False) == "string"):
        return qids, starts
    qids = _object_ids(qids, "run query_id")
    return qids, _segments(qids)


def _hash_ids(ids: np.ndarray) -> np.ndarray:
    return np.fromiter(map(hash, ids), dtype=np.int64, count=len(ids))


# ---------------------------------------------------------------------------------------------------
# qrels
# ---------------------------------------------------------------------------------------------------
@dataclass
class Qrels:
    """Judgments of all topics, interned once and shared by every run and measure of a call.

    Attributes: ``topic_ids`` (object array, first-seen order), ``doc_ids`` (unique judged doc ids),
    ``keys``/``grades`` (sorted ``topic * n_docs + doc`` keys and their grade codes),
    ``grade_levels`` (the distinct grades ≥ 0, ascending, always with 0), ``level_counts``
    (``[topics × levels]`` count of each of those grades) and ``n_unjudged`` (negative entries per
    topic: pooled but unjudged; 0 under ``negative="zero"``). Memory depends on the number of distinct
    grades, not on their values; :attr:`grade_counts` (indexed by grade value) is built on demand for the
    measures that index by value, up to :data:`MAX_INDEXED_GRADE`.
    """

    topic_ids: np.ndarray
    doc_ids: np.ndarray
    keys: np.ndarray
    grades: np.ndarray
    grade_levels: np.ndarray
    level_counts: np.ndarray
    n_unjudged: np.ndarray
    negative: str = "pooled_unjudged"
    topic_index: pd.Index = field(repr=False, default=None)
    #: sampled qrels only (``None`` otherwise): the stratum of each entry of ``keys`` as a code local to
    #: its topic (0, 1, …, in label order), and the labels as ``[topics × strata]`` (``None`` = unused)
    strata: np.ndarray | None = field(repr=False, default=None)
    stratum_labels: np.ndarray | None = field(repr=False, default=None)
    _stratum_summary: tuple | None = field(repr=False, default=None)
    #: hashes of the judged doc ids (``None``: not built yet; ``False``: they collide, look strings up)
    _doc_hash_index: pd.Index | bool | None = field(repr=False, default=None)
    _dense: np.ndarray | None = field(repr=False, default=None)
    _grade_counts: np.ndarray | None = field(repr=False, default=None)
    _filter: np.ndarray | None = field(repr=False, default=None)
    _doc_hashes: np.ndarray | None = field(repr=False, default=None)
    _key_index: pd.Index | None = field(repr=False, default=None)
    _hash_probe: int = field(repr=False, default=0)

    @classmethod
    def from_any(cls, qrels, negative: str = "pooled_unjudged") -> Qrels:
        """Build from a DataFrame (``query_id/doc_id/relevance`` or ``qid/docno/label``), a dict of
        dicts, an iterable of ``Qrel``, a TREC qrels path (``.gz`` allowed) or an existing ``Qrels``."""
        if isinstance(qrels, Qrels):
            if qrels.negative != negative:
                raise ValueError(f"these Qrels were built with negative={qrels.negative!r}, not {negative!r}")
            return qrels
        if negative not in NEGATIVE_POLICIES:
            raise ValueError(f"negative={negative!r} is not a valid policy; choices: {', '.join(NEGATIVE_POLICIES)}")
        if isinstance(qrels, (str, os.PathLike)):
            qrels = read_trec_qrels(qrels)
        stratum = _stratum_column(qrels)
        if stratum is not None and not isinstance(qrels, pd.DataFrame):
            stratum, qrels = _split_strata(qrels)
        q, d, r = _columns(qrels, _QREL_COLUMNS, "qrels", read_trec_qrels)
        qids, dids = _ids(q, "qrels query_id"), _ids(d, "qrels doc_id")
        grades = _integer_grades(r.to_numpy() if isinstance(r, pd.Series) else np.asarray(r), qids, dids)
        if negative == "zero":
            grades = np.where(grades < 0, 0, grades)
        topic_codes, topic_ids = pd.factorize(qids)
        doc_codes, doc_ids = pd.factorize(dids)
        topic_ids = np.asarray(topic_ids, dtype=object)
        doc_ids = np.asarray(doc_ids, dtype=object)
        n_topics, n_docs = len(topic_ids), max(len(doc_ids), 1)
        keys = topic_codes.astype(np.int64) * n_docs + doc_codes
        order = np.argsort(keys, kind="stable")
        keys, grades_sorted = keys[order], grades[order]
        dup = np.flatnonzero(keys[1:] == keys[:-1])
        if len(dup):
            i = order[dup[0]]
            raise ValueError(f"qrels judge document {dids[i]!r} twice for query {qids[i]!r}")
        codes = np.where(grades_sorted < 0, POOLED_UNJUDGED, grades_sorted).astype(np.int32)
        judged = grades >= 0
        levels, level_of = np.unique(np.concatenate(([0], grades[judged])), return_inverse=True)
        counts = np.bincount(
            topic_codes[judged] * len(levels) + level_of.reshape(-1)[1:], minlength=n_topics * len(levels)
        ).reshape(n_topics, len(levels))
        n_unjudged = np.bincount(topic_codes[~judged], minlength=n_topics).astype(np.int64)
        strata = labels = None
        if stratum is not None:
            strata, labels = _local_strata(_ids(stratum, "qrels stratum"), topic_codes, n_topics)
            strata = strata[order]
        return cls(
            topic_ids=topic_ids,
            doc_ids=doc_ids,
            keys=keys,
            grades=codes,
            grade_levels=levels.astype(np.int64),
            level_counts=counts.astype(np.int64),
            n_unjudged=n_unjudged,
            negative=negative,
            topic_index=pd.Index(topic_ids),
            strata=strata,
            stratum_labels=labels,
        )

    # -- summaries --------------------------------------------------------------------------------------
    @property
    def n_topics(self) -> int:
        return len(self.topic_ids)

    @property
    def max_grade(self) -> int:
        return int(self.grade_levels[-1])

    @property
    def grade_counts(self) -> np.ndarray:
        """``[topics × (max_grade+1)]``: judged documents of each grade value 0 .. max_grade (built once, on
        demand, for measures that index by grade value); ``ValueError`` above :data:`MAX_INDEXED_GRADE`."""
        if self._grade_counts is None:
            if self.max_grade > MAX_INDEXED_GRADE:
                topic = int(np.flatnonzero(self.level_counts[:, -1])[0])
                raise ValueError(
                    f"qrels grade {self.max_grade} (query {self.topic_ids[topic]!r}) is above "
                    f"{MAX_INDEXED_GRADE}, the largest grade that measures indexing grades by value "
                    f"(nDCG, GAP and sampled-judgment families) accept; the AP family and bpref take any grade"
                )
            dense = np.zeros((self.n_topics, self.max_grade + 1), dtype=np.int64)
            dense[:, self.grade_levels] = self.level_counts
            self._grade_counts = dense
        return self._grade_counts

    def n_relevant(self, rel_level: int = 1) -> np.ndarray:
        """R per topic: judged documents with grade ≥ ``rel_level``."""
        return self.level_counts[:, self.grade_levels >= rel_level].sum(axis=1)

    def n_nonrelevant(self, rel_level: int = 1) -> np.ndarray:
        """N per topic: judged documents with 0 ≤ grade < ``rel_level`` (negative entries excluded)."""
        return self.level_counts[:, self.grade_levels < rel_level].sum(axis=1)

    def n_judged(self) -> np.ndarray:
        return self.level_counts.sum(axis=1)

    def to_frame(self) -> pd.DataFrame:
        """The judgments as a ``query_id/doc_id/relevance`` DataFrame (pooled-but-unjudged as −1), with a
        ``stratum`` column (the labels) for sampled qrels."""
        n_docs = max(len(self.doc_ids), 1)
        grades = np.where(self.grades == POOLED_UNJUDGED, -1, self.grades)
        topics = self.keys // n_docs
        columns = {"query_id": self.topic_ids[topics], "doc_id": self.doc_ids[self.keys % n_docs]}
        if self.strata is not None and self.stratum_labels is not None:
            columns["stratum"] = self.stratum_labels[topics, self.strata]
        columns["relevance"] = grades
        return pd.DataFrame(columns)

    # -- strata (sampled qrels) ---------------------------------------------------------------------------
    @property
    def is_sampled(self) -> bool:
        """True for sampled qrels (a stratum per judgment); plain qrels are one stratum per topic."""
        return self.strata is not None

    def stratum_summary(self) -> tuple[np.ndarray, np.ndarray]:
        """``(strata, counts)`` where ``strata`` is the stratum code of each entry of ``keys`` (all 0 for
        plain qrels) and ``counts`` is ``[topics × strata × (max_grade+2)]``: column 0 counts the pooled
        but unsampled entries (negative grade), column ``g + 1`` the entries judged with grade ``g``."""
        if self._stratum_summary is not None:
            return self._stratum_summary
        self.grade_counts  # noqa: B018 -- refuses grades above MAX_INDEXED_GRADE before sizing by grade value
        strata = self.strata if self.strata is not None else np.zeros(len(self.keys), dtype=np.int32)
        n_strata = int(strata.max()) + 1 if len(strata) else 1
        n_docs = max(len(self.doc_ids), 1)
        topics = self.keys // n_docs
        column = np.where(self.grades == POOLED_UNJUDGED, 0, self.grades + 1)
        n_cols = self.max_grade + 2
        flat = (topics * n_strata + strata) * n_cols + column
        counts = np.bincount(flat, minlength=self.n_topics * n_strata * n_cols)
        self._stratum_summary = (strata, counts.reshape(self.n_topics, n_strata, n_cols))
        return self._stratum_summary

    # -- look-up ------------------------------------------------------------------------------------------
    def _check_hashes(self) -> None:
        """Drop hash tables built by another process (``str`` hashes differ between processes)."""
        probe = hash(_HASH_PROBE)
        if self._hash_probe != probe:
            self._doc_hash_index = self._filter = self._doc_hashes = None
            self._hash_probe = probe

    def doc_hashes(self) -> np.ndarray:
        """64-bit hashes of ``doc_ids`` in this process (computed once)."""
        self._check_hashes()
        if self._doc_hashes is None:
            self._doc_hashes = _hash_ids(self.doc_ids)
        return self._doc_hashes

    def mentioned(self, hashes: np.ndarray) -> np.ndarray:
        """Positions of the document hashes that may be those of judged documents: a superset (a
        bit table of the judged documents' hashes), to be confirmed by :meth:`doc_codes`."""
        self._check_hashes()
        if self._filter is None:
            # ≥ 256 bits per judged document, at most 2 MiB: few false candidates, a table that stays in cache
            bits = int(np.clip(np.ceil(np.log2(max(len(self.doc_ids), 1) * 256)), 12, 21))
            table = np.zeros(1 << bits, dtype=bool)
            table[self.doc_hashes() & ((1 << bits) - 1)] = True
            self._filter = table
        mask = len(self._filter) - 1
        parts = [
            np.flatnonzero(self._filter[hashes[start : start + _FILTER_BLOCK] & mask]) + start
            for start in range(0, len(hashes), _FILTER_BLOCK)
        ]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def doc_codes(self, dids: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        """Index of each doc id in ``doc_ids`` (−1 when never judged), via 64-bit hashes, verified."""
        self._check_hashes()
        if self._doc_hash_index is None:
            qh = self.doc_hashes()
            self._doc_hash_index = pd.Index(qh) if pd.Index(qh).is_unique else None
            if self._doc_hash_index is None:  # colliding hashes among judged ids: exact string look-up
                self._doc_hash_index = False
        index = self._doc_hash_index
        if not isinstance(index, pd.Index):  # colliding hashes
            return pd.Index(self.doc_ids).get_indexer(dids)
        codes = index.get_indexer(hashes)
        hit = np.flatnonzero(codes >= 0)
        if len(hit):
            same = self.doc_ids[codes[hit]] == dids[hit]
            codes[hit[~same]] = -1
        return codes

    def lookup(self, topic_codes: np.ndarray, doc_codes: np.ndarray) -> np.ndarray:
        """Grade codes of (topic, doc) pairs: the judged grade, ``POOLED_UNJUDGED`` or ``UNPOOLED``."""
        out = np.full(len(topic_codes), UNPOOLED, dtype=np.int32)
        known = np.flatnonzero(doc_codes >= 0)
        n_docs = max(len(self.doc_ids), 1)
        if len(known) and len(self.keys) and self.n_topics * n_docs <= _DENSE_LOOKUP_CELLS:
            if self._dense is None:  # a [topics × judged docs] table: one gather instead of a search
                dense = np.full(self.n_topics * n_docs, UNPOOLED, dtype=np.int32)
                dense[self.keys] = self.grades
                self._dense = dense
            out[known] = self._dense[topic_codes[known].astype(np.int64) * n_docs + doc_codes[known]]
        elif len(known) and len(self.keys):
            if self._key_index is None:
                self._key_index = pd.Index(self.keys)  # unique (topic, doc) keys: a hash look-up
            at = self._key_index.get_indexer(topic_codes[known].astype(np.int64) * n_docs + doc_codes[known])
            found = at >= 0
            out[known[found]] = self.grades[at[found]]
        return out


def _stratum_column(qrels):
    """The stratum values of sampled qrels (a DataFrame column ``stratum``, or a dict of dicts whose values
    are ``(stratum, relevance)`` pairs), else ``None``."""
    if isinstance(qrels, pd.DataFrame):
        return qrels["stratum"] if "stratum" in qrels.columns else None
    if isinstance(qrels, Mapping):
        for docs in qrels.values():
            if isinstance(docs, Mapping):
                for value in docs.values():
                    return True if isinstance(value, (tuple, list)) else None
    return None


def _split_strata(qrels: Mapping) -> tuple[np.ndarray, dict]:
    """The strata and ``{qid: {doc: relevance}}`` of ``{qid: {doc: (stratum, relevance)}}``."""
    out, strata = {}, []
    for qid, docs in qrels.items():
        if not isinstance(docs, Mapping):
            raise ValueError(f"qrels dict must map query ids to dicts; query {qid!r} maps to {type(docs).__name__}")
        inner = {}
        for doc, value in docs.items():
            if not isinstance(value, (tuple, list)) or len(value) != 2:
                raise ValueError(
                    f"sampled qrels dict must map every doc_id to a (stratum, relevance) pair; "
                    f"query {qid!r}, document {doc!r} maps to {value!r}"
                )
            strata.append(value[0])
            inner[doc] = value[1]
        out[qid] = inner
    return np.array(strata, dtype=object), out


def _local_strata(labels: np.ndarray, topic_codes: np.ndarray, n_topics: int):
    """Stratum codes local to each topic (0, 1, … in label order) and the ``[topics × strata]`` labels."""
    label_codes, uniques = pd.factorize(labels, sort=True)
    n_labels = max(len(uniques), 1)
    pair = topic_codes.astype(np.int64) * n_labels + label_codes
    pairs, pair_of_entry = np.unique(pair, return_inverse=True)
    pair_topic = pairs // n_labels
    first = np.searchsorted(pair_topic, pair_topic, side="left")
    local = (np.arange(len(pairs)) - first).astype(np.int32)
    n_strata = int(local.max()) + 1 if len(local) else 1
    table = np.full((n_topics, n_strata), None, dtype=object)
    table[pair_topic, local] = np.asarray(uniques, dtype=object)[pairs % n_labels]
    return local[pair_of_entry.reshape(-1)], table


def _stratum_lookup(qrels: Qrels, topic_codes: np.ndarray, doc_codes: np.ndarray) -> np.ndarray:
    """Stratum code of (topic, doc) pairs of sampled qrels; −1 when the pair is not in the qrels."""
    out = np.full(len(topic_codes), -1, dtype=np.int32)
    known = np.flatnonzero(doc_codes >= 0)
    if len(known) and len(qrels.keys) and qrels.strata is not None:
        key = topic_codes[known].astype(np.int64) * max(len(qrels.doc_ids), 1) + doc_codes[known]
        pos = np.minimum(np.searchsorted(qrels.keys, key), len(qrels.keys) - 1)
        found = qrels.keys[pos] == key
        out[known[found]] = qrels.strata[pos[found]]
    return out


def _integer_grades(raw: np.ndarray, qids, dids) -> np.ndarray:
    if raw.dtype == bool:
        raise ValueError("qrels relevance must be integer grades, not booleans")
    if raw.dtype == object:
        numeric = pd.to_numeric(pd.Series(raw), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(np.isnan(numeric))
        if len(bad):
            raise ValueError(
                f"qrels relevance {raw[bad[0]]!r} is not an integer grade at {_row_label(qids, dids, bad[0])}"
            )
        raw = numeric
    if np.issubdtype(raw.dtype, np.floating):
        bad = np.flatnonzero(~np.isfinite(raw) | (raw != np.round(raw)))
        if len(bad):
            raise ValueError(
                f"qrels relevance {float(raw[bad[0]])!r} is not an integer grade at {_row_label(qids, dids, bad[0])}"
            )
    if np.issubdtype(raw.dtype, np.integer) or np.issubdtype(raw.dtype, np.floating):
        out = np.flatnonzero((raw < GRADE_RANGE[0]) | (raw > GRADE_RANGE[1]))
        if len(out):
            value = raw[out[0]]
            value = int(value) if np.issubdtype(raw.dtype, np.integer) else float(value)
            raise ValueError(
                f"qrels relevance {value!r} at {_row_label(qids, dids, out[0])} is outside the supported "
                f"grade range {GRADE_RANGE[0]}..{GRADE_RANGE[1]}"
            )
        return raw.astype(np.int64)
    raise ValueError(f"qrels relevance must be integer grades (got dtype {raw.dtype})")


# ---------------------------------------------------------------------------------------------------
# runs → ranked code matrix
# ---------------------------------------------------------------------------------------------------
@dataclass
class RankedLists:
    """Rankings of one or more runs against one :class:`Qrels`.

    Row ``i`` is the ranking of run ``run_names[run_of_row[i]]`` for topic
    ``qrels.topic_ids[topic_of_row[i]]``; rows are ordered by run, then topic code.
    ``codes[i, j]`` is the code of the document at rank ``j + 1`` (``PAD`` after ``lengths[i]``).
    """

    codes: np.ndarray
    lengths: np.ndarray
    run_of_row: np.ndarray
    topic_of_row: np.ndarray
    run_names: list[str]
    qrels: Qrels
    #: document ids in ranking order: row ``i`` is ``doc_ids[row_starts[i] : row_starts[i] + lengths[i]]``
    #: (the array may hold other rows too); ``None`` when not kept. Used by measures that order documents
    #: by id (``BootNDCG(order=docid)``).
    doc_ids: np.ndarray | None = field(default=None, repr=False)
    row_starts: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_rows(self) -> int:
        return self.codes.shape[0]

    def truncated(self, cutoff: int | None) -> np.ndarray:
        """The code matrix cut after rank ``cutoff`` (a view; the whole matrix for ``None``)."""
        if cutoff is None:
            return self.codes
        return self.codes[:, :cutoff]

    def per_topic(self, values: np.ndarray) -> np.ndarray:
        """Broadcast a per-topic array (indexed by topic code) to the rows."""
        return values[self.topic_of_row]

    def strata(self, cutoff: int | None = None) -> np.ndarray:
        """``[rows × depth]`` stratum code (local to the topic, see :attr:`Qrels.strata`) of each ranked
        document cut after rank ``cutoff``: ≥ 0 for documents in the qrels (judged or pooled but
        unjudged), −1 for unpooled documents and padding. Plain qrels have the one stratum 0. The look-up
        is done once per cut-off width and kept."""
        codes = self.truncated(cutoff)
        cached = self.__dict__.get("_strata")
        if cached is not None and cached.shape[1] >= codes.shape[1]:
            return cached[:, : codes.shape[1]]
        if not self.qrels.is_sampled:
            return np.where((codes >= 0) | (codes == POOLED_UNJUDGED), 0, -1).astype(np.int32)
        if self.doc_ids is None or self.row_starts is None:
            raise ValueError("these RankedLists were built without document ids; strata cannot be looked up")
        depth = codes.shape[1]
        in_pool = np.nonzero((codes >= 0) | (codes == POOLED_UNJUDGED))
        out = np.full(codes.shape, -1, dtype=np.int32)
        if len(in_pool[0]) and depth:
            items = self.row_starts[in_pool[0]] + in_pool[1]
            dids = self.doc_ids[items]
            doc_codes = self.qrels.doc_codes(dids, _hash_ids(dids))
            out[in_pool] = _stratum_lookup(self.qrels, self.topic_of_row[in_pool[0]], doc_codes)
        self.__dict__["_strata"] = out
        return out


def _check_score_precision(score_precision) -> None:
    if score_precision not in SCORE_PRECISIONS:
        raise ValueError(f"score_precision={score_precision!r} is not valid; choices: {', '.join(SCORE_PRECISIONS)}")


def _descending_score_keys(scores: np.ndarray) -> np.ndarray:
    """uint32-ranged int64 keys whose ascending order is the descending order of float32 scores."""
    s32 = scores.astype(np.float32) + np.float32(0.0)  # −0.0 → +0.0: equal scores tie, as in C
    bits = s32.view(np.int32).astype(np.int64)
    ordered = np.where(bits < 0, bits ^ 0x7FFFFFFF, bits)  # monotone in the float value
    return np.int64(0x7FFFFFFF) - ordered  # 0 .. 2^32-1, smaller = higher score


def _segments(qids: np.ndarray):
    """Start offsets of runs of equal adjacent query ids."""
    if len(qids) == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(qids[1:] != qids[:-1]) + 1
    return np.concatenate(([0], change)).astype(np.int64)


def trec_order(
    ranking: np.ndarray, scores: np.ndarray, doc_ids: np.ndarray, score_precision: str = "float32"
) -> np.ndarray:
    """The permutation that puts items in trec_eval's order: grouped by ``ranking`` (an int64 id per
    item, ascending), then score descending (compared as ``float32`` by default, as trec_eval 9 does),
    ties broken by document id descending, byte-wise (code-point order of the ``str`` ids).

    Items already in this order are recognised in one vectorized pass and not sorted; otherwise one
    stable sort. Only tied items are compared by document id.
    """
    order = _trec_order(ranking, scores, doc_ids, score_precision)
    return np.arange(len(scores), dtype=np.int64) if order is None else order


def _trec_order(ranking, scores, doc_ids, score_precision) -> np.ndarray | None:
    """:func:`trec_order`, or ``None`` when the items already are in that order."""
    _check_score_precision(score_precision)
    ranking = np.asarray(ranking, dtype=np.int64)
    n = len(ranking)
    order = None
    if score_precision == "float32":
        key = (ranking << 32) | _descending_score_keys(scores)  # one int64: ranking, then score descending
        if n > 1 and not bool(np.all(key[1:] >= key[:-1])):
            order = np.argsort(key, kind="stable")
            key = key[order]
        tied = np.flatnonzero(key[1:] == key[:-1])
        del key
    else:
        if n > 1:
            step = ranking[1:] - ranking[:-1]
            if not bool(np.all((step > 0) | ((step == 0) & (scores[1:] <= scores[:-1])))):
                order = np.lexsort((-scores, ranking))
        ranked = ranking if order is None else ranking[order]
        sorted_scores = scores if order is None else scores[order]
        tied = np.flatnonzero((ranked[1:] == ranked[:-1]) & (sorted_scores[1:] == sorted_scores[:-1]))
    moves = _tie_moves(tied, doc_ids, order)
    if moves is None:
        return order
    if order is None:
        order = np.arange(n, dtype=np.int64)
    to, source = moves
    order[to] = order[source]
    return order


def _grouped_tie_moves(starts: np.ndarray, scores: np.ndarray, doc_ids: np.ndarray, score_precision: str):
    """For items already grouped into rankings (``starts``: where each begins, rankings in ascending
    order), the :func:`_tie_moves` that complete trec_eval's order; ``()`` when none is needed, ``None``
    when some ranking is not sorted by score descending (a sort is needed). Scores are compared as
    :func:`trec_order` compares them; only the tied neighbours are looked at again."""
    if len(scores) < 2:
        return ()
    if score_precision == "float32":
        with np.errstate(over="ignore"):  # beyond float32's range: ±inf, as the sort keys have it
            scores = scores.astype(np.float32)
    across = starts[1:] - 1  # neighbour pairs (p, p + 1) that straddle two rankings
    rising = scores[1:] > scores[:-1]
    rising[across] = False
    if bool(rising.any()):
        return None
    del rising
    equal = scores[1:] == scores[:-1]  # −0.0 equals +0.0, as in trec_eval
    equal[across] = False
    moves = _tie_moves(np.flatnonzero(equal), doc_ids, None)
    return () if moves is None else moves


def _tie_moves(tied: np.ndarray, doc_ids: np.ndarray, order: np.ndarray | None):
    """Ties broken by document id descending (byte-wise): ``(to, source)`` such that
    ``order[to] = order[source]`` (``order``: the items sorted by ranking and score, ``None`` = as
    given; ``tied``: positions ``p`` whose item ties with ``p + 1`` there), or ``None`` when the tied
    items are already in that order. Only tied items are compared."""
    if len(tied) == 0:
        return None
    first = tied if order is None else order[tied]
    second = tied + 1 if order is None else order[tied + 1]
    if bool(np.all(np.greater(doc_ids[first], doc_ids[second]))):  # ties already by doc id descending
        return None
    lo = int(tied[0])
    in_tie = np.zeros(int(tied[-1]) + 2 - lo, dtype=bool)  # the tied positions (p and p + 1), ascending
    in_tie[tied - lo] = True
    in_tie[tied + 1 - lo] = True
    pos = np.flatnonzero(in_tie) + lo
    del in_tie
    sub_ids = doc_ids[pos if order is None else order[pos]]
    if max(map(len, sub_ids)) <= _FIXED_WIDTH_CHARS:
        sub_ids = sub_ids.astype(str)  # fixed-width: same code-point order, sorted in C
    _, doc_rank = np.unique(sub_ids, return_inverse=True)
    # tie groups: consecutive tied positions (each adjacent tied pair shares ranking and score)
    pair = np.zeros(int(pos[-1]) + 1, dtype=bool)
    pair[tied] = True  # position p ties with p + 1
    group = np.cumsum(np.concatenate(([True], ~(pair[pos[:-1]] & (pos[1:] == pos[:-1] + 1)))))
    within = np.lexsort((-doc_rank.reshape(-1), group))
    moved = np.flatnonzero(within != np.arange(len(pos)))
    return pos[moved], pos[within[moved]]


_PAD32 = np.iinfo(np.int32).max


@dataclass
class PreparedRuns:
    """Runs converted once, whatever the qrels: the documents of every (run, query) pair in trec_eval's
    ranking order, their ids hashed once and checked for duplicates. :meth:`rank` then only looks up
    grades against given qrels, so the same runs are evaluated against many qrels (robustness studies,
    :func:`ir_incomplete.evaluate` called repeatedly) at the cost of a look-up, not of a conversion.

    Build with :func:`prepare_runs`. Row ``i`` is the ranking of run ``run_names[row_run[i]]`` for query
    ``row_query[i]``: documents ``doc_ids[row_starts[i] : row_starts[i] + lengths[i]]`` (scores alike),
    best first. ``duplicate_rows`` are rows that list a document twice (``duplicate_docs``: the first such
    document); ranking one of them against qrels that judge its query raises, as trec_eval refuses it.
    Picklable: worker processes receive it once (document hashes are recomputed there when the process
    hashes strings differently).
    """

    run_names: list[str]
    score_precision: str
    row_run: np.ndarray
    row_query: np.ndarray
    row_starts: np.ndarray
    lengths: np.ndarray
    doc_ids: np.ndarray
    scores: np.ndarray
    duplicate_rows: np.ndarray
    duplicate_docs: np.ndarray
    _hashes: np.ndarray | None = field(repr=False, default=None)
    _hash_probe: int = field(repr=False, default=0)
    _uses: int = field(repr=False, default=0)
    # (document number of each item, distinct ids, row of each item), once evaluated twice; False: hashes collide
    _docs: tuple | bool | None = field(repr=False, default=None)
    _docs_index: pd.Index | None = field(repr=False, default=None)  # hashes of the distinct ids
    _docs_probe: int = field(repr=False, default=0)
    _frames: dict | None = field(repr=False, default=None)
    _judged: tuple | None = field(repr=False, default=None)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_frames"] = state["_judged"] = None  # rebuilt where needed rather than shipped
        return state

    @property
    def n_rows(self) -> int:
        return len(self.row_run)

    @property
    def hashes(self) -> np.ndarray:
        """64-bit hashes of ``doc_ids`` in this process (recomputed once after unpickling elsewhere)."""
        probe = hash(_HASH_PROBE)
        if self._hashes is None or self._hash_probe != probe:
            self._hashes = _hash_ids(self.doc_ids)
            self._hash_probe = probe
        return self._hashes

    def run_sizes(self) -> np.ndarray:
        """Number of documents of each run (all its queries)."""
        return np.bincount(self.row_run, weights=self.lengths, minlength=len(self.run_names)).astype(np.int64)

    def frames(self) -> dict[str, pd.DataFrame]:
        """Each run as a ``query_id/doc_id/score`` DataFrame (ranking order; built once, shared: do not
        modify them)."""
        if self._frames is not None:
            return dict(self._frames)
        out = {}
        for run_no, name in enumerate(self.run_names):
            rows = np.flatnonzero(self.row_run == run_no)
            items = _row_items(self.row_starts[rows], self.lengths[rows])
            out[name] = pd.DataFrame(
                {
                    "query_id": pd.Series(np.repeat(self.row_query[rows], self.lengths[rows]), dtype=object),
                    "doc_id": pd.Series(self.doc_ids[items], dtype=object),
                    "score": self.scores[items],
                }
            )
        self._frames = out
        return dict(out)

    def select(self, names) -> PreparedRuns:
        """These runs restricted to ``names`` (in that order), converted nothing again: their rankings
        are gathered, not re-ordered or re-hashed (a robustness study scores one group's runs this way)."""
        names = [str(n) for n in names]
        position = {name: i for i, name in enumerate(self.run_names)}
        unknown = [n for n in names if n not in position]
        if unknown:
            raise ValueError(f"no run named {unknown[0]!r} here; the runs are {', '.join(map(repr, self.run_names))}")
        if len(set(names)) != len(names):
            raise ValueError(f"run names to select must be distinct (got {names})")
        new_run = np.full(len(self.run_names), -1, dtype=np.int64)
        new_run[[position[n] for n in names]] = np.arange(len(names))
        row_run = new_run[self.row_run]
        rows = np.flatnonzero(row_run >= 0)
        rows = rows[np.argsort(row_run[rows], kind="stable")]  # by new run number, queries as they were
        lengths = self.lengths[rows]
        items = _row_items(self.row_starts[rows], lengths)
        new_row = np.full(self.n_rows, -1, dtype=np.int64)
        new_row[rows] = np.arange(len(rows))
        dup = new_row[self.duplicate_rows] >= 0
        dup_rows = new_row[self.duplicate_rows[dup]]
        dup_order = np.argsort(dup_rows, kind="stable")
        hashes = self._hashes if self._hash_probe == hash(_HASH_PROBE) else None  # hashed in this process
        return PreparedRuns(
            run_names=names,
            score_precision=self.score_precision,
            row_run=row_run[rows],
            row_query=self.row_query[rows],
            row_starts=np.cumsum(lengths) - lengths,
            lengths=lengths,
            doc_ids=self.doc_ids[items],
            scores=self.scores[items],
            duplicate_rows=dup_rows[dup_order],
            duplicate_docs=self.duplicate_docs[dup][dup_order],
            _hashes=None if hashes is None else hashes[items],
            _hash_probe=0 if hashes is None else self._hash_probe,
        )

    def rank(self, qrels: Qrels, runs: slice | None = None) -> RankedLists:
        """The :class:`RankedLists` of these runs (or of ``run_names[runs]``) against ``qrels``: rows of
        the queries ``qrels`` judges, ordered by run, then topic code. Raises ``ValueError`` when such a
        row lists a document twice."""
        row_topic = qrels.topic_index.get_indexer(self.row_query) if self.n_rows else np.zeros(0, np.int64)
        keep = row_topic >= 0
        if runs is not None:
            start, stop, _ = runs.indices(len(self.run_names))
            keep &= (self.row_run >= start) & (self.row_run < stop)
        kept = np.flatnonzero(keep)
        sel = kept[np.lexsort((row_topic[kept], self.row_run[kept]))]
        if len(self.duplicate_rows):
            bad = np.flatnonzero(np.isin(sel, self.duplicate_rows))
            if len(bad):
                row = sel[bad[0]]
                doc = self.duplicate_docs[np.flatnonzero(self.duplicate_rows == row)[0]]
                raise ValueError(
                    f"run {self.run_names[self.row_run[row]]!r} lists document {doc!r} more than once for "
                    f"query {self.row_query[row]!r}; trec_eval refuses such runs (remove the duplicates "
                    f"first, e.g. run.drop_duplicates(['query_id', 'doc_id']))"
                )
        lengths = self.lengths[sel]
        depth = int(lengths.max()) if len(lengths) else 0
        if bool(np.all(lengths == depth)):
            codes = np.full((len(sel), depth), UNPOOLED, dtype=np.int32)
        else:
            codes = np.where(np.arange(depth) < lengths[:, None], np.int32(UNPOOLED), np.int32(PAD))
        self._uses += 1
        if self._uses > 1 and self._docs is None:
            self._index_documents()  # evaluated again: index the distinct documents once
        docs = self._docs  # read once: worker threads may share this object
        if len(sel) and len(qrels.keys):
            # only documents the qrels mention can have a grade: find them, then look up their
            # (topic, doc) pairs exactly
            lo = int(self.row_starts[sel].min())  # the selected runs' items are one contiguous range
            hi = int((self.row_starts[sel] + self.lengths[sel]).max())
            if isinstance(docs, tuple):
                doc_of_item, ids, row_of_item = docs
                judged = self._judged_by_index(qrels, ids)
                cand = np.flatnonzero(judged.any_topic[doc_of_item[lo:hi]]) + lo
                item_row = row_of_item[cand]
            else:
                cand = qrels.mentioned(self.hashes[lo:hi]) + lo
                item_row = np.searchsorted(self.row_starts, cand, side="right") - 1
            new_row = np.full(self.n_rows, -1, dtype=np.int64)
            new_row[sel] = np.arange(len(sel))
            out_row = new_row[item_row]
            ok = out_row >= 0
            cand, item_row, out_row = cand[ok], item_row[ok], out_row[ok]
            if docs:
                grades = judged.grades(row_topic[item_row], doc_of_item[cand])
            else:
                doc_codes = qrels.doc_codes(self.doc_ids[cand], self.hashes[cand])
                grades = qrels.lookup(row_topic[item_row], doc_codes)
            codes[out_row, cand - self.row_starts[item_row]] = grades
        return RankedLists(
            codes=codes,
            lengths=lengths,
            run_of_row=self.row_run[sel],
            topic_of_row=row_topic[sel].astype(np.int64),
            run_names=list(self.run_names),
            qrels=qrels,
            doc_ids=self.doc_ids,
            row_starts=self.row_starts[sel],
        )

    def _index_documents(self) -> None:
        """Number the distinct documents of all rows once (hash, then checked on the ids themselves), so
        that each later look-up checks the qrels' documents against them instead of every item."""
        item_doc, distinct = pd.factorize(self.hashes)
        some = np.empty(len(distinct), dtype=np.int64)
        some[item_doc] = np.arange(len(item_doc))  # an item of each document (any one: all are checked)
        ids = self.doc_ids[some]
        if not bool(np.all(ids[item_doc] == self.doc_ids)):  # two ids share a hash: keep the other path
            self._docs = False
            return
        row_of_item = np.repeat(np.arange(self.n_rows, dtype=np.int64), self.lengths)
        self._docs_index, self._docs_probe = pd.Index(distinct), hash(_HASH_PROBE)
        self._docs = (item_doc.astype(np.int64), ids, row_of_item)

    def _judged_by_index(self, qrels: Qrels, ids: np.ndarray) -> _JudgedDocs:
        """The judgments of ``qrels`` in terms of the distinct documents ``ids`` of these runs (kept for
        the last qrels: chunks of one evaluation share it)."""
        cached = self._judged
        if cached is not None and cached[0] is qrels:
            return cached[1]
        index = self._docs_index
        if index is None or self._docs_probe != hash(_HASH_PROBE):  # new here, or hashed differently
            index = pd.Index(_hash_ids(ids))
            self._docs_index, self._docs_probe = index, hash(_HASH_PROBE)
        of_judged = index.get_indexer(qrels.doc_hashes())
        hit = np.flatnonzero(of_judged >= 0)
        same = ids[of_judged[hit]] == qrels.doc_ids[hit]
        of_judged[hit[~same]] = -1
        n_docs = max(len(qrels.doc_ids), 1)
        doc = of_judged[qrels.keys % n_docs]
        valid = doc >= 0
        judged = _JudgedDocs(qrels.keys[valid] // n_docs, doc[valid], qrels.grades[valid], len(ids))
        self._judged = (qrels, judged)
        return judged


class _JudgedDocs:
    """Judgments ``(topic, document number, grade code)`` with a grade look-up that is one gather for
    documents judged for one topic only (most of them) and a hash look-up for the others."""

    def __init__(self, topic: np.ndarray, doc: np.ndarray, grade: np.ndarray, n_docs: int):
        self.n_docs = max(n_docs, 1)
        count = np.bincount(doc, minlength=self.n_docs)
        self.any_topic = count > 0
        self.single_topic = np.full(self.n_docs, -1, dtype=np.int64)
        self.single_grade = np.full(self.n_docs, UNPOOLED, dtype=np.int32)
        once = count[doc] == 1
        self.single_topic[doc[once]] = topic[once]
        self.single_grade[doc[once]] = grade[once]
        self.multi = count > 1
        self.keys = pd.Index(topic[~once].astype(np.int64) * self.n_docs + doc[~once])  # unique pairs
        self.key_grades = grade[~once]

    def grades(self, topic: np.ndarray, doc: np.ndarray) -> np.ndarray:
        """Grade codes of (topic, document number) pairs (``UNPOOLED`` when not judged)."""
        out = np.where(self.single_topic[doc] == topic, self.single_grade[doc], np.int32(UNPOOLED))
        several = np.flatnonzero(self.multi[doc])
        if len(several) and len(self.keys):
            at = self.keys.get_indexer(topic[several].astype(np.int64) * self.n_docs + doc[several])
            found = at >= 0
            out[several[found]] = self.key_grades[at[found]]
        return out.astype(np.int32, copy=False)


def _row_items(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Item indices of rows given by their starts and lengths, concatenated."""
    total = int(lengths.sum())
    out_starts = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(starts - out_starts, lengths)


def prepare_runs(runs: Mapping[str, Any], score_precision: str = "float32", topics=None) -> PreparedRuns:
    """Convert runs (name → any run form) once, independently of any qrels (see :class:`PreparedRuns`).

    ``topics`` (optional, query ids): keep only these queries (trec_eval ignores queries its qrels do not
    judge). Raises ``ValueError`` on missing columns and non-numeric or non-finite scores.
    """
    _check_score_precision(score_precision)
    return _prepare([(name, _run_columns(run)) for name, run in runs.items()], score_precision, topics)


def _prepare(columns, score_precision: str, topics=None) -> PreparedRuns:
    """:func:`prepare_runs` from ``[(name, (query_ids, doc_ids, scores)), ...]`` (see :func:`run_columns`;
    query ids may be unchecked, as :func:`_run_columns` gives them).

    Each run is cut into segments of equal adjacent query ids. When every query of a run is one
    segment and each segment is sorted by score (as TREC runs are), the items stay where they are and
    only tied neighbours are reordered; otherwise one sort puts everything in order."""
    _check_score_precision(score_precision)
    names = [name for name, _ in columns]
    topic_index = None if topics is None else (topics if isinstance(topics, pd.Index) else pd.Index(topics))
    seg_row_parts, seg_len_parts, did_parts, score_parts, query_parts, run_parts = [], [], [], [], [], []
    n_rows = 0
    owned = len(columns) > 1  # the item arrays are ours (concatenated), not the caller's
    for run_no, (_name, (qids, dids, scores)) in enumerate(columns):
        qids, starts = _query_segments(qids)
        seg_query = qids[starts]
        seg_len = np.diff(np.append(starts, len(qids)))
        if topic_index is not None and len(starts):
            keep = topic_index.get_indexer(seg_query) >= 0
            if not keep.all():
                items = np.repeat(keep, seg_len)
                dids, scores, owned = dids[items], scores[items], True
                seg_query, seg_len = seg_query[keep], seg_len[keep]
        # one row per distinct query of the run, numbered in first-seen order
        seg_row, row_query = pd.factorize(seg_query) if len(seg_query) else (np.zeros(0, np.int64), [])
        seg_row_parts.append(seg_row.astype(np.int64) + n_rows)
        seg_len_parts.append(seg_len.astype(np.int64))
        query_parts.append(np.asarray(row_query, dtype=object))
        run_parts.append(np.full(len(row_query), run_no, dtype=np.int64))
        did_parts.append(dids)
        score_parts.append(scores)
        n_rows += len(row_query)

    def joined(parts, dtype):
        if not parts:
            return np.zeros(0, dtype=dtype)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    seg_rows, seg_lens = joined(seg_row_parts, np.int64), joined(seg_len_parts, np.int64)
    dids = joined(did_parts, object)
    scores = joined(score_parts, np.float64)
    del did_parts, score_parts
    grouped = bool(np.all(seg_rows[1:] > seg_rows[:-1]))  # each query one segment: segment i is row i
    moves = _grouped_tie_moves(np.cumsum(seg_lens) - seg_lens, scores, dids, score_precision) if grouped else None
    if moves is None:  # not in ranking order: one sort
        ranking = np.repeat(seg_rows, seg_lens)
        order = _trec_order(ranking, scores, dids, score_precision)
        if order is not None:
            dids, scores = dids[order], scores[order]
            ranking = ranking[order]
            del order
        lengths = np.bincount(ranking, minlength=n_rows).astype(np.int64)
        del ranking
    else:
        lengths = seg_lens
        if moves:
            to, source = moves
            if not owned:
                dids, scores = dids.copy(), scores.copy()
            dids[to], scores[to] = dids[source], scores[source]
    row_starts = np.cumsum(lengths) - lengths
    hashes = _hash_ids(dids)
    dup_rows, dup_docs = _find_duplicates(hashes, dids, row_starts, lengths)
    return PreparedRuns(
        run_names=names,
        score_precision=score_precision,
        row_run=joined(run_parts, np.int64),
        row_query=joined(query_parts, object),
        row_starts=row_starts,
        lengths=lengths,
        doc_ids=dids,
        scores=scores,
        duplicate_rows=dup_rows,
        duplicate_docs=dup_docs,
        _hashes=hashes,
        _hash_probe=hash(_HASH_PROBE),
    )


def rank_runs(runs: Mapping[str, Any], qrels: Qrels, score_precision: str = "float32") -> RankedLists:
    """Convert runs (name → any run form) into one :class:`RankedLists` against ``qrels``.

    Only topics present in ``qrels`` are kept (trec_eval ignores the others). Raises ``ValueError`` on
    missing columns, non-numeric or non-finite scores and on a document listed twice for one query.
    """
    return prepare_runs(runs, score_precision, topics=qrels.topic_index).rank(qrels)


def _find_duplicates(hashes, dids, row_starts, lengths) -> tuple[np.ndarray, np.ndarray]:
    """Rows listing a document twice, and the first such document of each (by rank).

    Each row's 32 low bits of the hashes are sorted in one ``[rows × depth]`` matrix; equal neighbours
    are candidates, confirmed by comparing the ids themselves."""
    none = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object))
    n_rows = len(lengths)
    if n_rows == 0:
        return none
    depth = int(lengths.max())
    low = hashes.astype(np.int32)  # the low 32 bits
    np.minimum(low, _PAD32 - 1, out=low)  # no document takes the padding value
    if bool(np.all(lengths == depth)):
        matrix = low.reshape(n_rows, depth)
    else:
        matrix = np.full((n_rows, depth), _PAD32, dtype=np.int32)
        row_of_item = np.repeat(np.arange(n_rows), lengths)
        matrix[row_of_item, np.arange(len(low)) - row_starts[row_of_item]] = low
        del row_of_item
    matrix.sort(axis=1)
    same = (matrix[:, 1:] == matrix[:, :-1]) & (matrix[:, 1:] != _PAD32)
    candidates = np.flatnonzero(same.any(axis=1))
    if len(candidates) == 0:
        return none
    rows, docs = [], []
    for row in candidates.tolist():
        start, stop = int(row_starts[row]), int(row_starts[row] + lengths[row])
        seen = set()
        for doc in dids[start:stop].tolist():
            if doc in seen:
                rows.append(row)
                docs.append(doc)
                break
            seen.add(doc)
    return np.array(rows, dtype=np.int64), np.array(docs, dtype=object)
