"""Control variates of the difference estimator: automatic labels and the fitted relevance model, as
cells whose π-weighted grade shares (scaled per topic) give every unit its ``f``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ir_incomplete.estimation.design_file import _plain_value
from ir_incomplete.estimation.universe import Universe, examples

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = ["CONTROLS"]

#: the control variates :func:`ir_incomplete.estimate` knows
CONTROLS = ("auto", "none", "labels", "model", "labels+model")
_MODEL_BINS = 10


def unit_predictions(universe: Universe, predictions: Any) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """The predictions (any form :func:`ir_incomplete.predictions.read_predictions` reads), their grades as
    floats and the universe unit of each row (``-1``: outside the universe)."""
    from ir_incomplete.predictions import read_predictions

    frame = read_predictions(predictions)
    if "relevance" not in frame.columns:
        raise ValueError("predictions need a relevance column (the predicted grade)")
    grade = pd.to_numeric(frame["relevance"], errors="coerce").to_numpy(dtype=float)
    topic = universe.topic_codes(frame["query_id"].astype(str))
    unit = universe.lookup(topic, frame["doc_id"].astype(str).to_numpy(dtype=object))
    return frame, grade, unit


def check_scale(frame: pd.DataFrame, grade: np.ndarray, unit: np.ndarray, levels: np.ndarray) -> None:
    """``ValueError`` naming the first prediction of a universe pair whose grade is not one of ``levels``
    (the judgments' scale)."""
    bad = np.flatnonzero((unit >= 0) & ~np.isin(grade, levels))
    if len(bad):
        i = int(bad[0])
        raise ValueError(
            f"predictions: grade {_plain_value(frame['relevance'].iloc[i])!r} of ({frame['query_id'].iloc[i]}, "
            f"{frame['doc_id'].iloc[i]}) is not on the judgments' scale ({', '.join(str(int(v)) for v in levels)})"
        )


def _predicted(universe: Universe, predictions: Any, levels: np.ndarray) -> np.ndarray:
    """The predicted grade of every unit (``-1``: none), checked against the judged scale. ``ValueError``
    when no prediction is of a universe pair (other query or document ids, e.g. ``'01'`` against ``'1'``):
    the labels would be left out of the control variate without a word."""
    frame, grade, unit = unit_predictions(universe, predictions)
    if not (unit >= 0).any():
        example = (
            f" (e.g. ({frame['query_id'].iloc[0]}, {frame['doc_id'].iloc[0]}); the predictions' queries "
            f"{examples(frame['query_id'])}, the universe's {examples(universe.topic_ids)})"
            if len(frame)
            else ""
        )
        raise ValueError(
            f"predictions: none of their {len(frame)} rows is a pair of the design's universe (the runs' top depth "
            f"and the pairs judged already){example}: they would not enter the control variate; check the query "
            f"and document ids (e.g. '01' against '1'), or leave predictions out"
        )
    check_scale(frame, grade, unit, levels)
    out = np.full(universe.n_units, -1, dtype=np.int64)
    ok = unit >= 0
    out[unit[ok]] = np.searchsorted(levels, grade[ok])
    return out


def _cells(universe: Universe, control: str, predicted: np.ndarray | None) -> np.ndarray:
    """The cell of every unit: the bin of its fusion score (``model``: 10 quantile bins of the log
    reciprocal-rank-fusion score), × its predicted grade (``labels``)."""
    cells = np.zeros(universe.n_units, dtype=np.int64)
    if "model" in control:
        score = np.log(universe.rrf + 1e-12)
        edges = np.quantile(score, np.linspace(0, 1, _MODEL_BINS + 1)[1:-1]) if len(score) else np.zeros(0)
        cells = np.searchsorted(np.unique(edges), score, side="right")
    if "labels" in control and predicted is not None:
        cells = cells * (int(predicted.max(initial=0)) + 2) + (predicted + 1)
    return cells


def _cell_shares(
    cells: np.ndarray, rand: np.ndarray, grade: np.ndarray, w: np.ndarray, n_levels: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell code (``np.unique(cells)``): the π-weighted share of each grade among its random pairs and
    their number; and each unit's index into the codes."""
    codes, cell_of = np.unique(cells, return_inverse=True)
    c = cell_of[rand]
    total = np.bincount(c, weights=w, minlength=len(codes))
    count = np.bincount(c, minlength=len(codes))
    share = np.zeros((len(codes), n_levels))
    for lev in range(n_levels):
        share[:, lev] = np.bincount(c, weights=w * (grade[rand] == lev), minlength=len(codes))
    return share / np.where(total > 0, total, 1.0)[:, None], count, cell_of


def _pooled_shares(
    cells: np.ndarray, rand: np.ndarray, grade: np.ndarray, pi: np.ndarray, n_levels: int, min_cell: int
) -> np.ndarray:
    """``[units × levels]``: the π-weighted share of each grade among the random sampled pairs (``rand``,
    not empty) of the unit's cell, all random pairs' when the cell has fewer than ``min_cell``: a
    relevance model pooled over topics."""
    w = 1.0 / pi[rand]
    overall = np.bincount(grade[rand], weights=w, minlength=n_levels) / w.sum()
    share, count, cell_of = _cell_shares(cells, rand, grade, w, n_levels)
    return np.where((count >= min_cell)[:, None], share, overall[None, :])[cell_of]


def _scaled_per_topic(
    pooled: np.ndarray, rand: np.ndarray, grade: np.ndarray, pi: np.ndarray, topic: np.ndarray
) -> np.ndarray:
    """The control variate ``f_level`` [units × levels]: the pooled shares (:func:`_pooled_shares`, not
    changed) scaled within each topic so that the π-weighted sums over the topic's random pairs agree
    (``f_u = β_t p_c(u)``, ``β_t = Σ_S 1[y = g]/π / Σ_S p_c/π``): topics differ in how many relevant
    documents they have, which cells pooled over topics cannot know."""
    f = pooled.copy()
    w = 1.0 / pi[rand]
    n_topics = int(topic.max(initial=-1)) + 1
    t = topic[rand]
    for lev in range(1, f.shape[1]):
        judged = np.bincount(t, weights=w * (grade[rand] == lev), minlength=n_topics)
        predicted = np.bincount(t, weights=w * f[rand, lev], minlength=n_topics)
        beta = np.where(predicted > 0, judged / np.where(predicted > 0, predicted, 1.0), 0.0)
        f[:, lev] *= beta[topic]
    return f
