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


#: how the control variate scales the pooled cells per topic (switch kept for measurement; see
#: :func:`_control_variate`): ``"shrunk"`` (empirical Bayes) or ``"ratio"`` (the π-weighted ratio)
_TOPIC_SCALE = "ratio"
#: whether the cells are split by the tercile of the topic's relevant share among its certainty pairs
_CERTAINTY_TERCILE = False


def _cells(
    universe: Universe,
    control: str,
    predicted: np.ndarray | None,
    certain: np.ndarray | None = None,
    relevant: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(cells, coarse)`` of every unit: ``coarse`` the fusion-score bin (× the predicted grade with
    labels), ``cells`` the same split by the tercile of each topic's relevant share among its certainty
    pairs (``certain``: bool per unit; ``relevant``: bool per unit, judged relevant), a fourth group for
    topics without certainty pairs; ``cells == coarse`` when no topic has certainty pairs."""
    cells = np.zeros(universe.n_units, dtype=np.int64)
    if "model" in control:
        score = np.log(universe.rrf + 1e-12)
        edges = np.quantile(score, np.linspace(0, 1, _MODEL_BINS + 1)[1:-1]) if len(score) else np.zeros(0)
        cells = np.searchsorted(np.unique(edges), score, side="right")
    if "labels" in control and predicted is not None:
        cells = cells * (int(predicted.max(initial=0)) + 2) + (predicted + 1)
    coarse = cells
    if _CERTAINTY_TERCILE and certain is not None and relevant is not None and certain.any():
        topic = universe.unit_topic
        n_topics = len(universe.topic_ids)
        judged = np.bincount(topic[certain], minlength=n_topics)
        rel = np.bincount(topic[certain & relevant], minlength=n_topics)
        has = judged > 0
        share = np.where(has, rel / np.maximum(judged, 1), 0.0)
        edges = np.quantile(share[has], [1 / 3, 2 / 3])
        group = np.where(has, np.searchsorted(edges, share, side="right"), 3)
        cells = coarse * 4 + group[topic]
    return cells, coarse


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


def _shrunk_scale(observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Per topic, the empirical-Bayes (Gamma–Poisson) scale of a pooled relevance model: the topic's
    count of sampled pairs of a grade ``n_t`` is taken as Poisson with mean ``β_t m_t`` (``m_t`` the
    model's expected count over the same pairs), ``β_t ~ Gamma(a, a)`` (mean 1, variance ``1/a``), so
    the posterior mean is ``β_t = (n_t + a)/(m_t + a)``: never negative, near 1 where a topic's sample
    says little, near ``n_t/m_t`` where it says much. ``a`` by moments, ``1/a = Σ_t ((n_t − m_t)² −
    n_t) / Σ_t m_t²`` (the over-dispersion beyond Poisson's), at least 0.5; no over-dispersion: ``β = 1``."""
    excess = float(((observed - expected) ** 2 - observed).sum())
    spread = float((expected**2).sum())
    if excess <= 0 or spread <= 0:
        return np.ones(len(observed))
    a = max(spread / excess, 0.5)
    return (observed + a) / (expected + a)


def _shrunk_ratio(
    judged: np.ndarray, predicted: np.ndarray, t: np.ndarray, y: np.ndarray, f: np.ndarray, pi: np.ndarray
) -> np.ndarray:
    """Per topic, the π-weighted ratio ``r_t = Σ_S y/π / Σ_S f/π`` shrunk toward 1 (the pooled model) by
    its precision: ``β_t = 1 + (r_t − 1) τ²/(τ² + v_t)``, ``v_t = Σ_S (1 − π)(y − r_t f)²/π² / (Σ_S f/π)²``
    the ratio's estimated sampling variance and ``τ²`` the spread of the true ratios across topics, by
    moments: the mean over topics of ``(r_t − 1)² − v_t``, at least 0 (Fay–Herriot's combination of a
    direct and a synthetic estimate). A topic whose sample measures its ratio well keeps it; one whose
    sample holds few relevant pairs takes the pooled model's rate. Never negative."""
    n_topics = len(judged)
    ok = predicted > 0
    r = np.where(ok, judged / np.where(ok, predicted, 1.0), 1.0)
    resid = (1.0 - pi) * ((y - r[t] * f) / pi) ** 2
    v = np.where(ok, np.bincount(t, weights=resid, minlength=n_topics) / np.where(ok, predicted, 1.0) ** 2, np.inf)
    finite = ok & np.isfinite(v)
    if not finite.any():
        return np.ones(n_topics)
    tau2 = max(float(np.mean((r[finite] - 1.0) ** 2 - v[finite])), 0.0)
    weight = np.where(finite, tau2 / np.where(tau2 + v > 0, tau2 + v, 1.0), 0.0)
    return 1.0 + (r - 1.0) * weight


def _control_variate(
    cells: np.ndarray | tuple[np.ndarray, np.ndarray],
    rand: np.ndarray,
    grade: np.ndarray,
    pi: np.ndarray,
    n_levels: int,
    min_cell: int,
    topic: np.ndarray | None = None,
) -> np.ndarray:
    """``f_level`` [units × levels]: the π-weighted share of each grade among the random sampled pairs of
    the unit's cell (``cells``, or ``(cells, coarse)``: a cell with fewer than ``min_cell`` random pairs
    uses its coarse cell's share, and one with fewer there all random pairs'), scaled per topic
    (``topic`` given) by :func:`_shrunk_scale` of the topic's sampled count of the grade against the
    model's."""
    fine, coarse = cells if isinstance(cells, tuple) else (cells, cells)
    f = np.zeros((len(fine), n_levels))
    if len(rand) == 0:
        return f
    w = 1.0 / pi[rand]
    overall = np.bincount(grade[rand], weights=w, minlength=n_levels) / w.sum()
    share_c, count_c, of_c = _cell_shares(coarse, rand, grade, w, n_levels)
    coarse_share = np.where((count_c >= min_cell)[:, None], share_c, overall[None, :])[of_c]
    share_f, count_f, of_f = _cell_shares(fine, rand, grade, w, n_levels)
    f = np.where((count_f >= min_cell)[of_f][:, None], share_f[of_f], coarse_share)
    if topic is None:
        return f
    n_topics = int(topic.max(initial=-1)) + 1
    t = topic[rand]
    for lev in range(1, n_levels):
        if _TOPIC_SCALE == "ratio":  # β_t = Σ_S 1[y = g]/π / Σ_S p_c/π
            judged = np.bincount(t, weights=w * (grade[rand] == lev), minlength=n_topics)
            predicted = np.bincount(t, weights=w * f[rand, lev], minlength=n_topics)
            beta = np.where(predicted > 0, judged / np.where(predicted > 0, predicted, 1.0), 0.0)
        elif _TOPIC_SCALE == "fh":
            y = (grade[rand] == lev).astype(float)
            judged = np.bincount(t, weights=w * y, minlength=n_topics)
            predicted = np.bincount(t, weights=w * f[rand, lev], minlength=n_topics)
            beta = _shrunk_ratio(judged, predicted, t, y, f[rand, lev], pi[rand])
        else:
            observed = np.bincount(t, weights=(grade[rand] == lev).astype(float), minlength=n_topics)
            expected = np.bincount(t, weights=f[rand, lev], minlength=n_topics)
            beta = _shrunk_scale(observed, expected)
        f[:, lev] *= beta[topic]
    return f
