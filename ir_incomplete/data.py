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

Everything here is vectorized: text ids are hashed once, joined with integer look-ups, ordered with one
stable sort that is linear when the input is already in ranking order.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

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
    "rank_runs",
    "run_columns",
    "trec_order",
]

_DENSE_LOOKUP_CELLS = 4_000_000  # qrels look-up through a dense [topics × judged docs] table up to this size
_FIXED_WIDTH_CHARS = 64  # tie-breaking sorts ids as fixed-width strings when none is longer

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
    """Read a whitespace-separated TREC file of ``kind`` (see :data:`TREC_FIELDS`) with one C pass.

    Every line must have exactly the format's fields and a valid numeric field; otherwise ``ValueError``
    names the file and the line. A truncated or corrupt ``.gz`` file is a ``ValueError`` naming the file.
    """
    fields = TREC_FIELDS[kind]
    numeric = fields.index(_TREC_NUMERIC[kind])
    dtype = {i: object for i in range(len(fields)) if i != numeric}
    if kind == "run":
        dtype[numeric] = np.float64
    name = _source_name(source)
    try:
        with _open_text(source) as handle:
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


def read_trec_qrels(source) -> pd.DataFrame:
    """Read a TREC qrels file (``qid iter docid grade``, ``.gz`` allowed) into ``query_id/doc_id/relevance``.
    A file whose first line has five fields is sampled qrels, read by :func:`read_trec_prels`.

    Every line needs exactly the fields of its format and an integer grade in :data:`GRADE_RANGE`; a
    malformed line (also a file mixing 4- and 5-field lines) or a truncated ``.gz`` file is a
    ``ValueError`` naming the file (and line)."""
    if _first_line_fields(source) == len(TREC_FIELDS["prels"]):
        return read_trec_prels(source)
    return _read_trec(source, "qrels")


def _first_line_fields(source) -> int:
    """Number of whitespace-separated fields on the first non-blank line (0 for an empty file)."""
    try:
        with _open_text(source) as handle:
            for line in handle:
                if line.strip():
                    return len(line.split())
    except _DECODE_ERRORS as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise ValueError(f"cannot read qrels file {_source_name(source)}: truncated or corrupt ({detail})") from None
    return 0


def read_trec_prels(source) -> pd.DataFrame:
    """Read sampled qrels ("prels": ``qid iter docid stratum grade``, ``.gz`` allowed; NIST ``sample_eval``)
    into ``query_id/doc_id/stratum/relevance``. Grade −1 = pooled in that stratum but not sampled; the
    stratum is a label, kept as text. Malformed lines are refused as by :func:`read_trec_qrels`."""
    return _read_trec(source, "prels")


def read_trec_run(source) -> pd.DataFrame:
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
    arr = np.asarray(values) if not isinstance(values, (pd.Series, pd.Index)) else values.to_numpy()
    if arr.dtype != object:
        if arr.dtype.kind == "f":
            if np.isnan(arr).any():
                raise ValueError(f"{what} contains missing values (row {int(np.flatnonzero(np.isnan(arr))[0])})")
            return _float_ids(arr, what)
        return arr.astype(str).astype(object)
    if len(arr) == 0 or pd.api.types.infer_dtype(arr, skipna=False) == "string":
        return arr  # all str, none missing: one C pass
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
        qids, dids, vals = [], [], []
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
    q, d, s = _columns(run, _RUN_COLUMNS, "run", read_trec_run)
    qids, dids = _ids(q, "run query_id"), _ids(d, "run doc_id")
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
    nan = np.flatnonzero(~np.isfinite(scores)) if len(scores) else []
    if len(nan):
        raise ValueError(
            f"run score {float(scores[nan[0]])!r} is not a finite number at "
            f"{_row_label(qids, dids, nan[0])} ({len(nan)} such rows)"
        )
    return qids, dids, scores


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
    _doc_hash_index: pd.Index | None = field(repr=False, default=None)
    _dense: np.ndarray | None = field(repr=False, default=None)
    _grade_counts: np.ndarray | None = field(repr=False, default=None)

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
        if self.strata is not None:
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
    def doc_codes(self, dids: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        """Index of each doc id in ``doc_ids`` (−1 when never judged), via 64-bit hashes, verified."""
        if self._doc_hash_index is None:
            qh = _hash_ids(self.doc_ids)
            self._doc_hash_index = pd.Index(qh) if pd.Index(qh).is_unique else None
            if self._doc_hash_index is None:  # colliding hashes among judged ids: exact string look-up
                self._doc_hash_index = False
        if self._doc_hash_index is False:
            return pd.Index(self.doc_ids).get_indexer(dids)
        codes = self._doc_hash_index.get_indexer(hashes)
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
            key = topic_codes[known].astype(np.int64) * max(len(self.doc_ids), 1) + doc_codes[known]
            pos = np.searchsorted(self.keys, key)
            pos_c = np.minimum(pos, len(self.keys) - 1)
            found = self.keys[pos_c] == key
            out[known[found]] = self.grades[pos_c[found]]
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
    if len(known) and len(qrels.keys):
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
    #: document ids of every row in ranking order, concatenated (row ``i`` starts at ``row_starts[i]``);
    #: ``None`` when not kept. Used by measures that order documents by id (``BootNDCG(order=docid)``).
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

    One stable sort, linear when the input is already in this order; only tied items are re-sorted.
    """
    if score_precision not in SCORE_PRECISIONS:
        raise ValueError(f"score_precision={score_precision!r} is not valid; choices: {', '.join(SCORE_PRECISIONS)}")
    ranking = np.asarray(ranking, dtype=np.int64)
    if score_precision == "float32":
        order = np.argsort((ranking << 32) | _descending_score_keys(scores), kind="stable")
        cmp_scores = scores[order].astype(np.float32)
    else:
        order = np.lexsort((-scores, ranking))
        cmp_scores = scores[order]
    ranked = ranking[order]
    tied = np.flatnonzero((ranked[1:] == ranked[:-1]) & (cmp_scores[1:] == cmp_scores[:-1]))
    if len(tied):
        pos = np.unique(np.concatenate((tied, tied + 1)))
        sub_ids = doc_ids[order[pos]]
        if max(map(len, sub_ids)) <= _FIXED_WIDTH_CHARS:
            sub_ids = sub_ids.astype(str)  # fixed-width: same code-point order, sorted in C
        _, doc_rank = np.unique(sub_ids, return_inverse=True)
        group = np.cumsum(
            np.concatenate(
                (
                    [True],
                    ~(
                        (ranked[pos[1:]] == ranked[pos[:-1]])
                        & (cmp_scores[pos[1:]] == cmp_scores[pos[:-1]])
                        & (pos[1:] == pos[:-1] + 1)
                    ),
                )
            )
        )
        within = np.lexsort((-doc_rank.reshape(-1), group))
        order[pos] = order[pos[within]]
    return order


def rank_runs(runs: Mapping[str, Any], qrels: Qrels, score_precision: str = "float32") -> RankedLists:
    """Convert runs (name → any run form) into one :class:`RankedLists` against ``qrels``.

    Only topics present in ``qrels`` are kept (trec_eval ignores the others). Raises ``ValueError`` on
    missing columns, non-numeric or non-finite scores and on a document listed twice for one query.
    """
    if score_precision not in SCORE_PRECISIONS:
        raise ValueError(f"score_precision={score_precision!r} is not valid; choices: {', '.join(SCORE_PRECISIONS)}")
    names = list(runs.keys())
    n_topics = qrels.n_topics
    topic_parts, score_parts, run_parts, did_parts = [], [], [], []
    for run_no, name in enumerate(names):
        qids, dids, scores = run_columns(runs[name])
        starts = _segments(qids)
        seg_topic = qrels.topic_index.get_indexer(qids[starts]) if len(starts) else np.zeros(0, np.int64)
        lengths = np.diff(np.append(starts, len(qids)))
        topic = np.repeat(seg_topic, lengths)
        keep = topic >= 0
        if not keep.all():
            topic, dids, scores = topic[keep], dids[keep], scores[keep]
        topic_parts.append(topic.astype(np.int64))
        did_parts.append(dids)
        score_parts.append(scores)
        run_parts.append(np.full(len(topic), run_no, dtype=np.int64))
    if names:
        topic = np.concatenate(topic_parts)
        dids = np.concatenate(did_parts) if len(did_parts) > 1 else did_parts[0]
        scores = np.concatenate(score_parts)
        run_no = np.concatenate(run_parts)
    else:
        topic = run_no = np.zeros(0, np.int64)
        dids = np.zeros(0, object)
        scores = np.zeros(0)

    ranking = run_no * max(n_topics, 1) + topic
    order = trec_order(ranking, scores, dids, score_precision)
    ranking = ranking[order]
    dids = dids[order]
    hashes = _hash_ids(dids)

    # rows = distinct rankings
    n = len(ranking)
    if n:
        row_start = np.flatnonzero(np.concatenate(([True], ranking[1:] != ranking[:-1])))
    else:
        row_start = np.zeros(0, np.int64)
    lengths = np.diff(np.append(row_start, n)).astype(np.int64)
    row_of_item = np.repeat(np.arange(len(row_start)), lengths)
    rank_pos = np.arange(n) - np.repeat(row_start, lengths)
    row_ranking = ranking[row_start] if n else ranking
    depth = int(lengths.max()) if len(lengths) else 0

    _check_duplicates(hashes, dids, row_of_item, rank_pos, len(row_start), depth, row_ranking, qrels, names, n_topics)

    doc_codes = qrels.doc_codes(dids, hashes)
    grade_codes = qrels.lookup(ranking % max(n_topics, 1), doc_codes)
    codes = np.full((len(row_start), depth), PAD, dtype=np.int32)
    codes[row_of_item, rank_pos] = grade_codes
    return RankedLists(
        codes=codes,
        lengths=lengths,
        run_of_row=row_ranking // max(n_topics, 1),
        topic_of_row=row_ranking % max(n_topics, 1),
        run_names=names,
        qrels=qrels,
        doc_ids=dids,
        row_starts=row_start,
    )


_HASH_PAD = np.iinfo(np.int64).max


def _check_duplicates(hashes, dids, row_of_item, rank_pos, n_rows, depth, row_ranking, qrels, names, n_topics):
    if n_rows == 0:
        return
    matrix = np.full((n_rows, depth), _HASH_PAD, dtype=np.int64)
    matrix[row_of_item, rank_pos] = hashes
    matrix.sort(axis=1)
    same = (matrix[:, 1:] == matrix[:, :-1]) & (matrix[:, 1:] != _HASH_PAD)
    if not same.any():
        return
    for row, col in zip(*np.nonzero(same), strict=True):
        h = matrix[row, col]
        items = np.flatnonzero((row_of_item == row) & (hashes == h))
        docs = dids[items]
        if len(set(docs.tolist())) < len(docs):  # not merely a hash collision
            ranking = row_ranking[row]
            run = names[ranking // max(n_topics, 1)]
            qid = qrels.topic_ids[ranking % max(n_topics, 1)]
            raise ValueError(
                f"run {run!r} lists document {docs[0]!r} more than once for query {qid!r}; "
                f"trec_eval refuses such runs (remove the duplicates first, e.g. "
                f"run.drop_duplicates(['query_id', 'doc_id']))"
            )
