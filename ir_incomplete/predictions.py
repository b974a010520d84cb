"""Predicted relevance grades (an automatic labeler, an LLM judge) and their calibration against the human
judgments, for the bootstrap's ``prior=predicted``.

A prediction table is qrels-like: ``query_id, doc_id, relevance`` (also ``qid/docno/label``), one row per
(query, document), ``relevance`` the predicted grade on the human scale ``0 .. G`` (G = the highest grade
of the qrels). It may instead, or as well, carry per-grade probability columns ``p0, p1, …, pM``
(M ≤ G, each row summing to 1): then the probabilities are the prediction and ``relevance``, when
present, is only checked to be a valid grade.

**Calibration** (a confusion matrix learnt on the documents both judges saw). For query q, predicted
grade ℓ and human grade h::

    C_q[ℓ, h] = Σ_{d judged in q and predicted} P(ℓ | d) · [human grade of d = h]

where ``P(ℓ | d)`` is 1 for the predicted grade and 0 otherwise (or the probability columns: then C is
the expected confusion matrix). With ``n_q(ℓ) = Σ_h C_q[ℓ, h]`` the (expected) number of judged
documents of q predicted ℓ::

    P_q(h | ℓ) = C_q[ℓ, h] / n_q(ℓ)                                     when n_q(ℓ) ≥ min_count and > 0
               = (Σ_q' C_q'[ℓ, h] + α) / (Σ_q' n_q'(ℓ) + α · (G + 1))   otherwise (pooled, additive smoothing)

and the prior over human grades of an unjudged document d of q is ``π_d(h) = Σ_ℓ P(ℓ | d) · P_q(h | ℓ)``
(for a single predicted grade ℓ: the row ``P_q(· | ℓ)``). Defaults: ``min_count = 10``, ``α = 1``.
Judged documents keep their human grade; their predictions only calibrate. Predictions for queries
that the qrels do not have are ignored (those queries are not evaluated).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ir_incomplete.data import POOLED_UNJUDGED, UNPOOLED, Qrels
from ir_incomplete.data.columns import _QREL_COLUMNS, _ids, _plain, _tuples_columns
from ir_incomplete.data.ids import is_arrow_table
from ir_incomplete.data.named_files import read_named_file
from ir_incomplete.data.readers import (
    _DECODE_ERRORS,
    _arrow_frame,
    _is_parquet,
    _native,
    _open_text,
    _read_once,
    _read_trec,
    _source_name,
    read_once,
)

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = [
    "Predictions",
    "PredictionError",
    "read_predictions",
    "calibration",
    "DEFAULT_MIN_COUNT",
    "DEFAULT_ALPHA",
    "PROBABILITY_TOLERANCE",
]

#: judged documents of a query with a predicted grade needed before that query's own confusion row is used
DEFAULT_MIN_COUNT = 10
#: additive smoothing of the pooled confusion rows
DEFAULT_ALPHA = 1.0
#: how far from 1 a row of probability columns may sum
PROBABILITY_TOLERANCE = 1e-6

_ID_COLUMNS = (("query_id", "qid"), ("doc_id", "docno"))
_GRADE_COLUMNS = ("relevance", "label")
_PROBABILITY = re.compile(r"p(\d+)\Z")


class PredictionError(ValueError):
    """Predictions that cannot be used: the message names the offending row, column or value."""


def read_predictions(source: Any) -> pd.DataFrame:
    """Predictions as a DataFrame with ``query_id, doc_id`` (``str``), ``relevance`` and/or ``p0 .. pM``:
    the one reader of predicted grades, for ``evaluate(predictions=)``, ``--predictions``,
    :func:`ir_incomplete.ppi.ppi_evaluate` (``ir_incomplete ppi``) and
    :func:`ir_incomplete.judging.judge_next` (``ir_incomplete judge-next``).

    ``source``: a DataFrame or a pyarrow Table (``query_id/doc_id/relevance`` or ``qid/docno/label``,
    optional ``pN`` columns), a dict of dicts ``{query_id: {doc_id: grade}}``, an iterable of ``Qrel``
    (or ``(query_id, doc_id, grade)`` tuples), a :class:`~ir_incomplete.data.Qrels`, or a file path
    (``.gz`` allowed; also a named pipe, read once): a parquet file (columns as a table), a TREC qrels
    file (``query_id 0 doc_id grade``), or a delimited text file (tab, comma or whitespace) whose first
    line names the columns (``query_id doc_id relevance p0 p1 p2``); a UTF-8 byte order mark is skipped.
    Errors name the "predictions file" (and line). The input is never modified.
    """
    if isinstance(source, Qrels):
        frame = source.to_frame()
    elif isinstance(source, pd.DataFrame):
        frame = source.copy()
    elif is_arrow_table(source):
        frame = _arrow_frame(source)
    elif isinstance(source, Mapping):
        rows = []
        for qid, docs in source.items():
            if not isinstance(docs, Mapping):
                raise PredictionError(
                    f"predictions: {{query_id: {{doc_id: grade}}}} expected; query {qid!r} maps to a "
                    f"{type(docs).__name__}"
                )
            rows += [(str(qid), str(doc), grade) for doc, grade in docs.items()]
        frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    elif isinstance(source, (str, os.PathLike)):
        frame = _read_file(source)
    elif hasattr(source, "__iter__") and not isinstance(source, (bytes, str)):
        try:
            qids, dids, grades = _tuples_columns(source, _QREL_COLUMNS, "predictions")
        except ValueError as exc:
            raise PredictionError(str(exc)) from None
        frame = pd.DataFrame({"query_id": qids, "doc_id": dids, "relevance": grades})
    else:
        raise PredictionError(
            f"predictions must be a DataFrame, a pyarrow Table, a dict of dicts, an iterable of Qrel or a file "
            f"path (TREC qrels, a table with a header line, or parquet), not {type(source).__name__}"
        )
    for name, alias in _ID_COLUMNS:
        if name not in frame.columns and alias in frame.columns:
            frame = frame.rename(columns={alias: name})
    if "relevance" not in frame.columns and "label" in frame.columns:
        frame = frame.rename(columns={"label": "relevance"})
    missing = [name for name, _ in _ID_COLUMNS if name not in frame.columns]
    if missing:
        raise PredictionError(
            f"predictions have no {missing[0]!r} column (columns: {list(frame.columns)}); expected "
            f"query_id, doc_id, relevance (or qid, docno, label) and optional p0, p1, ... probability columns"
        )
    if "relevance" not in frame.columns and not any(_PROBABILITY.match(str(c)) for c in frame.columns):
        raise PredictionError(
            f"predictions are missing column 'relevance' and have no probability columns p0, p1, ... "
            f"(columns: {list(frame.columns)})"
        )
    for name, _ in _ID_COLUMNS:
        values = frame[name]
        if values.isna().any():
            row = int(np.flatnonzero(values.isna().to_numpy())[0])
            raise PredictionError(f"predictions row {row}: {name} is missing")
        try:  # the ids of every other input: numbers as their text, 1.0 as "1", bytes as UTF-8
            frame[name] = _ids(values, f"predictions {name}")
        except ValueError as exc:
            raise PredictionError(str(exc)) from None
    return frame.reset_index(drop=True)


def needs_predictions(measure) -> bool:
    """True for a bootstrapped measure with ``prior=predicted`` that names no predictions file (it needs
    predictions passed to the function that computes it)."""
    params = getattr(measure, "params", None) or {}
    return (
        "predictions" in getattr(measure, "SUPPORTED_PARAMS", {})
        and params.get("prior") == "predicted"
        and params.get("predictions") is None
    )


_FILE_LOCK = threading.Lock()
_FRAMES: dict[tuple[str, int, int], Any] = {}  # (absolute path, mtime_ns, size) -> read_predictions' frame
_MAX_FRAMES = 4


def _file_key(path: str) -> tuple[str, int, int]:
    full = os.path.abspath(path)
    try:
        info = os.stat(full)
    except FileNotFoundError:
        raise ValueError(f"predictions file {path!r} does not exist (named by predictions= of the measure)") from None
    except OSError as exc:
        raise ValueError(f"cannot read predictions file {path!r}: {exc.strerror or exc}") from None
    if os.path.isdir(full):
        raise ValueError(f"predictions {path!r} is a directory, not a file (named by predictions= of the measure)")
    return full, info.st_mtime_ns, info.st_size


def _read_predictions_path(path: str):
    """:func:`read_predictions` of file ``path``; a file that cannot be read is a ``ValueError`` naming it."""
    try:
        return read_predictions(path)
    except UnicodeDecodeError as exc:
        raise ValueError(f"cannot read predictions file {path!r}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ValueError(f"cannot read predictions file {path!r}: {exc.strerror or exc}") from None


def is_pipe(key: tuple[str, int, int]) -> bool:
    """Whether the file of :func:`_file_key`'s ``key`` can be read only once (a named pipe, a character
    device): its content is kept for one evaluation only (:mod:`ir_incomplete.data.named_files`)."""
    return read_once(key[0])


def read_predictions_file(path: str):
    """The predictions of file ``path`` (:func:`ir_incomplete.predictions.read_predictions`), read once
    while the file is unchanged (same size and modification time); a named pipe is read once per
    evaluation (:mod:`ir_incomplete.data.named_files`: inside an evaluation the same frame, the next
    evaluation the next writer's content). A file that cannot be read is a ``ValueError`` naming it."""
    key = _file_key(path)
    if is_pipe(key):  # its modification time changes as it is written: never kept beyond one evaluation
        return read_named_file(path, "predictions", _read_predictions_path)
    with _FILE_LOCK:
        frame = _FRAMES.get(key)
    if frame is None:
        frame = _read_predictions_path(path)
        with _FILE_LOCK:
            if len(_FRAMES) >= _MAX_FRAMES:
                _FRAMES.pop(next(iter(_FRAMES)))
            _FRAMES[key] = frame
    return frame


def _read_file(path) -> pd.DataFrame:
    """A predictions file: parquet, a table whose first line names the columns, or TREC qrels (the
    first field of the first line decides); read once, so a named pipe works; errors name the file."""
    source = _read_once(path, "predictions")
    name = _source_name(source)
    if _is_parquet(source):
        import pyarrow.parquet as pq

        try:
            return _arrow_frame(pq.read_table(_native(source)))
        except Exception as exc:  # pyarrow's own errors: not a parquet file, unreadable
            raise PredictionError(
                f"cannot read predictions file {name} as parquet: {' '.join(str(exc).split())}"
            ) from None
    try:
        with _open_text(source, encoding="utf-8-sig") as handle:  # a byte order mark skipped
            first = next((line for line in handle if line.strip()), "")
            head = re.split(r"[\t, ]+", first.strip())[0] if first.strip() else ""
            if head not in ("query_id", "qid"):  # no header line: a TREC qrels file
                return _read_trec(source, "qrels", "predictions")
            handle.seek(0)
            sep = "\t" if "\t" in first else "," if "," in first else r"\s+"
            return pd.read_csv(handle, sep=sep, dtype={"query_id": str, "qid": str, "doc_id": str, "docno": str})
    except _DECODE_ERRORS as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise PredictionError(f"cannot read predictions file {name}: truncated or corrupt ({detail})") from None
    except pd.errors.ParserError as exc:
        raise PredictionError(f"malformed predictions file {name}: {' '.join(str(exc).split())}") from None


@dataclass
class Predictions:
    """Validated predictions aligned with one :class:`~ir_incomplete.data.Qrels`.

    ``topic``: topic code of each prediction (rows of queries the qrels do not have are dropped);
    ``doc_ids``: its document id; ``dist``: ``[n × (G+1)]`` predicted-grade distribution (one-hot for a
    single predicted grade); ``human``: the human grade code (≥ 0 judged; ``POOLED_UNJUDGED`` or
    ``UNPOOLED`` for unjudged documents). Rows are sorted by topic, then document id (code point order).
    """

    topic: np.ndarray
    doc_ids: np.ndarray
    dist: np.ndarray
    human: np.ndarray
    qrels: Qrels

    @property
    def n_levels(self) -> int:
        return self.dist.shape[1]

    @classmethod
    def from_any(cls, predictions: Any, qrels: Qrels) -> Predictions:
        """Read (:func:`read_predictions`) and validate predictions against ``qrels``.

        Raises :class:`PredictionError` (a ``ValueError``) naming the row for a grade that is not an
        integer in ``0 .. G`` (G = the qrels' highest grade), a probability column beyond ``pG`` or a gap
        in ``p0 .. pM``, a probability outside [0, 1] or a row not summing to 1 (± 1e-6), and a
        (query_id, doc_id) pair given twice.
        """
        if isinstance(predictions, Predictions):
            if predictions.qrels is not qrels:
                return cls.from_any(predictions.to_frame(), qrels)
            return predictions
        frame = read_predictions(predictions)
        top = qrels.max_grade
        levels = top + 1
        valid = f"the qrels' grades are 0..{top}"
        prob_columns = sorted(
            ((int(m.group(1)), c) for c in frame.columns if (m := _PROBABILITY.match(str(c)))), key=lambda x: x[0]
        )
        n = len(frame)
        if prob_columns:
            numbers = [i for i, _ in prob_columns]
            if numbers[-1] > top:
                raise PredictionError(
                    f"predictions column {prob_columns[-1][1]!r} is the probability of grade {numbers[-1]}, an "
                    f"unknown grade: {valid} (columns p0..p{top} allowed)"
                )
            if numbers != list(range(len(numbers))):
                gap = next(i for i, j in enumerate(numbers) if i != j)
                raise PredictionError(
                    f"predictions probability columns must be p0, p1, ... without gaps; p{gap} is missing"
                )
            probs = np.zeros((n, levels), dtype=np.float64)
            for i, column in prob_columns:
                values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64)
                bad = ~np.isfinite(values) | (values < 0) | (values > 1)
                if bad.any():
                    row = int(np.flatnonzero(bad)[0])
                    raise PredictionError(
                        f"predictions row {row} (query {frame['query_id'].iloc[row]!r}, doc "
                        f"{frame['doc_id'].iloc[row]!r}): {column}={_plain(frame[column].iloc[row])!r} is not a "
                        f"probability in [0, 1]"
                    )
                probs[:, i] = values
            total = probs.sum(axis=1)
            off = np.abs(total - 1.0) > PROBABILITY_TOLERANCE
            if off.any():
                row = int(np.flatnonzero(off)[0])
                raise PredictionError(
                    f"predictions row {row} (query {frame['query_id'].iloc[row]!r}, doc "
                    f"{frame['doc_id'].iloc[row]!r}): probabilities p0..p{numbers[-1]} sum to "
                    f"{float(total[row])!r}, not 1 (tolerance {PROBABILITY_TOLERANCE})"
                )
        if "relevance" in frame.columns:
            raw = frame["relevance"]
            grades = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
            bad = ~np.isfinite(grades) | (grades != np.round(grades)) | (grades < 0) | (grades > top)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise PredictionError(
                    f"predictions row {row} (query {frame['query_id'].iloc[row]!r}, doc "
                    f"{frame['doc_id'].iloc[row]!r}): predicted grade {_plain(raw.iloc[row])!r} is unknown; "
                    f"{valid}, so a predicted grade must be an integer in 0..{top}"
                )
            if not prob_columns:
                probs = np.zeros((n, levels), dtype=np.float64)
                probs[np.arange(n), grades.astype(np.int64)] = 1.0
        qids = frame["query_id"].to_numpy(dtype=object)
        dids = frame["doc_id"].to_numpy(dtype=object)
        dup = pd.MultiIndex.from_arrays([qids, dids]).duplicated(keep=False)
        if dup.any():
            rows = np.flatnonzero(dup)
            first = rows[0]
            second = next(r for r in rows[1:] if qids[r] == qids[first] and dids[r] == dids[first])
            raise PredictionError(
                f"predictions rows {first} and {second} both predict query {qids[first]!r}, doc {dids[first]!r}; "
                f"give one prediction per (query_id, doc_id)"
            )
        topic = qrels.topic_index.get_indexer(qids)
        keep = topic >= 0
        topic, dids, probs = topic[keep].astype(np.int64), dids[keep], probs[keep]
        order = np.lexsort((dids.astype(str), topic)) if len(dids) else np.zeros(0, dtype=np.int64)
        topic, dids, probs = topic[order], dids[order], probs[order]
        doc_codes = pd.Index(qrels.doc_ids).get_indexer(dids) if len(dids) else np.zeros(0, dtype=np.int64)
        human = qrels.lookup(topic, doc_codes) if len(dids) else np.zeros(0, dtype=np.int32)
        return cls(topic=topic, doc_ids=dids, dist=probs, human=human.astype(np.int64), qrels=qrels)

    def to_frame(self) -> pd.DataFrame:
        """``query_id, doc_id, p0 .. pG`` of the predictions kept."""
        columns: dict[str, Any] = {"query_id": self.qrels.topic_ids[self.topic], "doc_id": self.doc_ids}
        for level in range(self.n_levels):
            columns[f"p{level}"] = self.dist[:, level]
        return pd.DataFrame(columns)

    @property
    def judged(self) -> np.ndarray:
        """Mask of the predictions whose document has a human grade."""
        return self.human >= 0

    @property
    def unjudged(self) -> np.ndarray:
        """Mask of the predictions whose document is unjudged (absent or pooled but unjudged)."""
        return (self.human == UNPOOLED) | (self.human == POOLED_UNJUDGED)

    def confusion(self) -> np.ndarray:
        """``[topics × (G+1) × (G+1)]`` (expected) counts ``C_q[ℓ, h]`` over the judged documents."""
        levels = self.n_levels
        out = np.zeros((self.qrels.n_topics, levels, levels), dtype=np.float64)
        judged = self.judged
        for h in range(levels):
            mine = judged & (self.human == h)
            if mine.any():
                np.add.at(out[:, :, h], self.topic[mine], self.dist[mine])
        return out

    def calibrate(
        self, min_count: float = DEFAULT_MIN_COUNT, alpha: float = DEFAULT_ALPHA
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(P, mass, pooled, from_query)``: ``P[q, ℓ, h] = P_q(h | ℓ)`` (module docstring), ``mass[q, ℓ] =
        n_q(ℓ)``, the smoothed pooled rows ``[(G+1) × (G+1)]`` and whether each ``(q, ℓ)`` uses its own row."""
        _check_calibration(min_count, alpha)
        counts = self.confusion()
        levels = self.n_levels
        mass = counts.sum(axis=2)
        pooled = (counts.sum(axis=0) + alpha) / (mass.sum(axis=0) + alpha * levels)[:, None]
        own = (mass >= min_count) & (mass > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_query = counts / np.where(mass > 0, mass, 1.0)[:, :, None]
        table = np.where(own[:, :, None], per_query, pooled[None, :, :])
        return table, mass, pooled, own

    def priors(self, min_count: float = DEFAULT_MIN_COUNT, alpha: float = DEFAULT_ALPHA) -> np.ndarray:
        """``[n × (G+1)]`` prior over human grades of every prediction (meaningful for unjudged ones):
        ``π_d = Σ_ℓ P(ℓ | d) · P_q(· | ℓ)``."""
        table = self.calibrate(min_count, alpha)[0]
        return np.einsum("nl,nlh->nh", self.dist, table[self.topic])


def _check_calibration(min_count, alpha) -> None:
    if isinstance(min_count, bool) or not isinstance(min_count, (int, float, np.integer, np.floating)):
        raise ValueError(f"min_count={min_count!r} must be a number >= 0")
    if not np.isfinite(min_count) or min_count < 0:
        raise ValueError(f"min_count={min_count!r} must be a number >= 0")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)):
        raise ValueError(f"alpha={alpha!r} must be a number > 0")
    if not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"alpha={alpha!r} must be a number > 0 (additive smoothing of the pooled rows)")


def calibration(
    qrels: Any,
    predictions: Any,
    min_count: float = DEFAULT_MIN_COUNT,
    alpha: float = DEFAULT_ALPHA,
    negative: str = "pooled_unjudged",
) -> pd.DataFrame:
    """The calibration that ``prior=predicted`` uses, as a table to inspect.

    One row per (query, predicted grade ℓ), preceded by the pooled rows (``query_id`` NA): columns
    ``query_id``, ``predicted`` (ℓ), ``judged`` (n_q(ℓ): judged documents of the query predicted ℓ, an
    integer; the expected count, a float, with probability columns), ``source`` (``"query"`` when the
    query's own row is used, ``"pooled"`` when it falls back to the smoothed pooled row), and ``h0 .. hG``:
    ``P_q(h | ℓ)``, the prior over human grades of an unjudged document predicted ℓ. Definitions in
    :mod:`ir_incomplete.predictions`.
    """
    judged = Qrels.from_any(qrels, negative=negative)
    pred = Predictions.from_any(predictions, judged)
    table, mass, pooled, own = pred.calibrate(min_count, alpha)
    levels = pred.n_levels
    counts = pred.confusion()
    # single predicted grades (one-hot rows): judged documents are counted, shown as integers
    hard = bool(np.all((pred.dist == 0.0) | (pred.dist == 1.0)))
    if hard:
        counts, mass = np.rint(counts).astype(np.int64), np.rint(mass).astype(np.int64)
    frames = [
        pd.DataFrame(
            {
                "query_id": pd.array([pd.NA] * levels, dtype=object),
                "predicted": np.arange(levels),
                "judged": counts.sum(axis=(0, 2)),
                "source": "pooled",
                **{f"h{h}": pooled[:, h] for h in range(levels)},
            }
        )
    ]
    n_topics = judged.n_topics
    frames.append(
        pd.DataFrame(
            {
                "query_id": np.repeat(judged.topic_ids, levels),
                "predicted": np.tile(np.arange(levels), n_topics),
                "judged": mass.ravel(),
                "source": np.where(own.ravel(), "query", "pooled"),
                **{f"h{h}": table[:, :, h].ravel() for h in range(levels)},
            }
        )
    )
    return pd.concat(frames, ignore_index=True)
