"""Inputs shared by the bootstrap measures: grade priors from counts (``pool``/``run``/``pool+run``) and the
per-ranking setup of the sampler that completes the judgments (:mod:`ir_incomplete.kernels.bootstrap`),
with predicted grades for ``prior=predicted``."""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from ir_incomplete.kernels import ndcg as ndcg_kernels
from ir_incomplete.kernels.bootstrap import dense_grades
from ir_incomplete.measures.base import Param
from ir_incomplete.predictions import (  # noqa: F401  (needs_predictions: part of this module's names)
    _MAX_FRAMES,
    Predictions,
    _file_key,
    is_pipe,
    needs_predictions,
    read_predictions_file,
)

__all__ = [
    "grade_priors",
    "judged_counts",
    "modelled_levels",
    "completion_setup",
    "levels_of",
    "PREDICTIONS_PARAM",
    "check_predictions_param",
    "needs_predictions",
    "measure_predictions",
]

#: the ``predictions`` parameter of the bootstrapped measures: a predictions file named in the measure
#: string, for ``prior=predicted`` where only measure strings can be given (``compare``, ``pt.Experiment``,
#: ``ir_measures``' functions and command)
PREDICTIONS_PARAM = Param(
    str,
    default=None,
    allow_none=True,
    desc="prior=predicted: a predictions file, quoted (predictions='labels.tsv'), read when the measure is "
    "computed (a relative path from the working directory); a predictions argument, if also given, is not used",
)


def check_predictions_param(measure) -> None:
    """``ValueError`` when ``measure`` names a predictions file without ``prior=predicted`` (it would be
    ignored) or names an empty path."""
    path = measure.params.get("predictions")
    if path is None:
        return
    name = measure.NAME
    if not path.strip():
        raise ValueError(f"{name}: predictions= names no file (an empty path); e.g. predictions='labels.tsv'")
    if measure.get("prior") != "predicted":
        raise ValueError(
            f"{name}: predictions={path!r} is only read with prior=predicted, but prior is {measure.get('prior')}; "
            f"add prior=predicted or drop predictions="
        )


_CACHE_LOCK = threading.Lock()
#: (file key, id of the Qrels) -> (weak reference to that Qrels, its Predictions): the last few validated
_ALIGNED: dict[tuple[tuple[str, int, int], int], tuple[Any, Predictions]] = {}


def measure_predictions(measure, qrels) -> Predictions | None:
    """The predictions of the file that ``measure`` names (``predictions=``) aligned with ``qrels``, or
    ``None`` when it names none; validated once per file and qrels."""
    path = (getattr(measure, "params", None) or {}).get("predictions")
    if path is None:
        return None
    key = _file_key(path)
    pipe = is_pipe(key)  # a named pipe: read once per evaluation, its frame not kept beyond it
    with _CACHE_LOCK:
        hit = None if pipe else _ALIGNED.get((key, id(qrels)))
    if hit is not None and hit[0]() is qrels:
        return hit[1]
    frame = read_predictions_file(path)
    try:
        aligned = Predictions.from_any(frame, qrels)
    except ValueError as exc:
        raise type(exc)(f"predictions file {path!r}: {exc}") from None
    if pipe:
        return aligned
    with _CACHE_LOCK:
        if len(_ALIGNED) >= _MAX_FRAMES:
            _ALIGNED.pop(next(iter(_ALIGNED)))
        _ALIGNED[(key, id(qrels))] = (weakref.ref(qrels), aligned)
    return aligned


def levels_of(counts: np.ndarray, levels: int) -> np.ndarray:
    """``counts`` (``[n × grades]``) cut or zero-padded to ``levels`` columns."""
    counts = np.asarray(counts)
    if counts.shape[1] >= levels:
        return counts[:, :levels]
    out = np.zeros((counts.shape[0], levels), dtype=counts.dtype)
    out[:, : counts.shape[1]] = counts
    return out


def judged_counts(codes: np.ndarray, n_grades: int) -> np.ndarray:
    """``[rows × n_grades]`` judged documents of each grade in each row of ``codes``."""
    judged = codes >= 0
    rows = np.nonzero(judged)[0]
    return np.bincount(rows * n_grades + codes[judged], minlength=codes.shape[0] * n_grades).reshape(
        codes.shape[0], n_grades
    )


def modelled_levels(topic_counts: np.ndarray, levels: int, every_level: bool) -> np.ndarray:
    """``[topics × levels]`` levels a prior may put weight on: ``0 ..`` the topic's highest judged grade,
    or every level (``every_level``: collection scope, ECIR-23 compatibility)."""
    n_topics, n_grades = topic_counts.shape
    if every_level:
        return np.ones((n_topics, levels), dtype=bool)
    has = topic_counts > 0
    top = np.where(has.any(axis=1), n_grades - 1 - np.argmax(has[:, ::-1], axis=1), 0)
    return np.arange(levels)[None, :] <= top[:, None]


def grade_priors(
    ranked,
    topic_counts: np.ndarray,
    row_counts: np.ndarray,
    levels: int,
    kind: str,
    collection: bool,
    modelled_topic: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(prior [rows × levels], judged documents per row)`` for ``kind`` ``pool`` | ``run`` | ``pool+run``
    ([FGPH] §3.4; spec §5.4): ``run`` = grades of the row's judged covered documents, ``pool`` = grades of
    the topic's judgments (or of the whole qrels with ``collection``), ``pool+run`` their average; each
    floored at 1e−6 on the modelled levels and renormalised; a row without judged covered documents uses
    the pool prior for ``run`` (the run prior is undefined there)."""
    rows = row_counts.shape[0]
    if collection:
        pool_topic = ndcg_kernels.count_prior(
            levels_of(topic_counts.sum(axis=0, keepdims=True), levels),
            np.array([topic_counts.sum()]),
            modelled_topic[:1],
        )
        pool = np.repeat(pool_topic, rows, axis=0)
    else:
        pool = ranked.per_topic(
            ndcg_kernels.count_prior(levels_of(topic_counts, levels), topic_counts.sum(axis=1), modelled_topic)
        )
    n_judged = row_counts.sum(axis=1)
    if kind == "pool":
        return pool, n_judged
    modelled = ranked.per_topic(modelled_topic)
    run = ndcg_kernels.count_prior(levels_of(row_counts, levels), n_judged, modelled)
    run = np.where((n_judged == 0)[:, None], pool, run)  # no judged covered document: the pool prior
    return (run if kind == "run" else (pool + run) / 2.0), n_judged


def _predicted_index(ranked, cell_row, cell_col, p_topic, p_docs) -> np.ndarray:
    """For each cell, the index of its (topic, document) among the predictions ``(p_topic, p_docs)``, or −1."""
    import pandas as pd

    if not len(cell_row) or not len(p_docs):
        return np.full(len(cell_row), -1, dtype=np.int64)
    if ranked.doc_ids is None or ranked.row_starts is None:
        raise ValueError("prior=predicted needs the document ids of the rankings (use ir_incomplete.data.rank_runs)")
    doc_index = pd.Index(pd.unique(p_docs))
    n_docs = len(doc_index)
    pred_keys = p_topic.astype(np.int64) * n_docs + doc_index.get_indexer(p_docs)
    dids = ranked.doc_ids[ranked.row_starts[cell_row] + cell_col]
    codes = doc_index.get_indexer(dids)
    found = codes >= 0
    keys = np.where(found, ranked.topic_of_row[cell_row].astype(np.int64) * n_docs + codes, -1)
    out = np.full(len(cell_row), -1, dtype=np.int64)
    if found.any():
        out[found] = pd.Index(pred_keys).get_indexer(keys[found])
    return out


def completion_setup(
    measure,
    ranked,
    qrels,
    cutoff: int | None,
    kind: str,
    collection: bool,
    predictions: Any = None,
    min_count: float = 10,
    alpha: float = 1.0,
) -> dict[str, Any]:
    """The inputs of :func:`ir_incomplete.kernels.bootstrap.bootstrap_replicates` for ``ranked`` (see
    there), with ``codes`` (the covered ranks), ``unjudged`` and ``cutoff`` added.

    Covered: the first ``cutoff`` ranks (the whole ranking for ``None``). Unjudged covered documents draw
    from the ``kind`` prior; with ``kind="predicted"`` those with a prediction draw from their calibrated
    prior (:mod:`ir_incomplete.predictions`), those without from the pool+run prior, and every predicted
    unjudged document of the topic is drawn, retrieved or not. ``ValueError`` when ``predicted`` has no
    predictions, or when a run has unjudged covered documents but a prediction for none of them.
    """
    codes = ranked.truncated(cutoff)
    unjudged = ndcg_kernels.unjudged_mask(codes)
    topic_counts = qrels.grade_counts
    n_grades = topic_counts.shape[1]
    counts = judged_counts(codes, n_grades)
    modelled_topic = modelled_levels(topic_counts, n_grades, collection)
    base_kind = "pool+run" if kind == "predicted" else kind
    prior, _ = grade_priors(ranked, topic_counts, counts, n_grades, base_kind, collection, modelled_topic)
    draw = unjudged.copy()
    predicted = np.full(codes.shape, -1, dtype=np.int64)
    pred_start = pred_cdf = None
    if kind == "predicted":
        own = measure_predictions(measure, qrels)  # a file named in the measure string comes first
        if own is None and predictions is None:
            raise ValueError(
                f"{measure!r} needs predicted grades: pass predictions= to ir_incomplete.evaluate (or the "
                f"bootstrap functions) or --predictions FILE to the ir_incomplete command, or name a file in "
                f"the measure ({_with_file_example(measure)}); or choose prior=pool+run"
            )
        pred = own if own is not None else Predictions.from_any(predictions, qrels)
        keep = pred.unjudged
        priors = pred.priors(min_count, alpha)[keep]
        p_topic, p_docs = pred.topic[keep], pred.doc_ids[keep]
        pred_start = np.searchsorted(p_topic, np.arange(qrels.n_topics + 1)).astype(np.int64)
        pred_cdf = np.cumsum(priors, axis=1)
        cell_row, cell_col = np.nonzero(unjudged)
        index = _predicted_index(ranked, cell_row, cell_col, p_topic, p_docs)
        hit = index >= 0
        predicted[cell_row[hit], cell_col[hit]] = index[hit]
        draw[cell_row[hit], cell_col[hit]] = False
        _check_runs(measure, ranked, unjudged, predicted >= 0)
    return {
        "codes": codes,
        "unjudged": unjudged,
        "cutoff": cutoff,
        "grades": dense_grades(codes),
        "draw": draw,
        "cdf": np.cumsum(prior, axis=1),
        "prior": prior,
        "predicted": predicted,
        "topic": ranked.topic_of_row,
        "topic_counts": topic_counts,
        "pred_start": pred_start,
        "pred_cdf": pred_cdf,
    }


def _check_runs(measure, ranked, unjudged: np.ndarray, has_prediction: np.ndarray) -> None:
    """A run whose unjudged covered documents have no prediction at all: refused, never a silent fallback."""
    n_runs = len(ranked.run_names)
    open_cells = np.bincount(ranked.run_of_row, weights=unjudged.sum(axis=1), minlength=n_runs)
    predicted = np.bincount(ranked.run_of_row, weights=has_prediction.sum(axis=1), minlength=n_runs)
    bad = np.flatnonzero((open_cells > 0) & (predicted == 0) & np.isin(np.arange(n_runs), ranked.run_of_row))
    if len(bad):
        run = bad[0]
        raise ValueError(
            f"{measure!r}: run {ranked.run_names[run]!r} has {int(open_cells[run])} unjudged documents in the "
            f"ranks the bootstrap covers but a prediction for none of them; prior=predicted would silently use "
            f"the pool+run prior for all of them. Check that the predictions' query and document ids match the "
            f"run's, or use prior=pool+run for it"
        )


def _with_file_example(measure) -> str:
    """``measure``'s string with ``predictions='labels.tsv'`` added, as an example."""
    try:
        return repr(measure(predictions="labels.tsv"))
    except (ValueError, TypeError):  # only an example in a message
        return f"{measure.NAME}(prior=predicted,predictions='labels.tsv')"
