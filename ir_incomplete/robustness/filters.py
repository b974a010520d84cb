"""Run filters the robustness papers apply before comparing system rankings.

Each filter returns the names of the runs it keeps, in the order given; :func:`filter_runs` applies
several at once (a run must pass every filter, each computed on all runs given) and is what
``robustness_study(filters=…)`` uses. The filters by name (:data:`RUN_FILTERS`):

* ``"top75"`` (:func:`top_runs`): the best 75 % of the runs by the reference measure on the full
  judgments (Fröbe et al., ECIR 2023, §4.1);
* ``"retrieved95"`` (:func:`runs_retrieving`): runs that retrieve at least 95 % of the documents the
  track asked for (Ahlgren & Grönqvist, IP&M 2008, §6.1). Read here as: a run's number of retrieved
  documents over the topics of the qrels must reach 95 % of (number of topics × requested depth),
  requested depth 1000 by default; runs with short result lists on many topics are dropped;
* ``"above_q1"`` (:func:`runs_above_quartile`): runs whose reference score lies strictly above the
  first quartile of all runs' scores (Ferrante et al.).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ir_measures.measures import Measure

__all__ = ["RUN_FILTERS", "top_runs", "runs_above_quartile", "runs_retrieving", "filter_runs"]

RUN_FILTERS = ("top75", "retrieved95", "above_q1")


def _scores(scores) -> pd.Series:
    if isinstance(scores, pd.Series):
        series = scores.astype(np.float64)
    elif isinstance(scores, dict):
        series = pd.Series(scores, dtype=np.float64)
    else:
        raise ValueError(f"scores must be a pandas Series or a dict run name → score (got {type(scores).__name__})")
    if not series.index.is_unique:
        raise ValueError("scores list a run more than once")
    if len(series) == 0:
        raise ValueError("scores is empty: no run to filter")
    if not np.isfinite(series.to_numpy()).all():
        bad = series.index[~np.isfinite(series.to_numpy())][0]
        raise ValueError(f"score of run {bad!r} is not a finite number ({series[bad]!r})")
    return series


def _fraction(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}={value!r} is not a number; expected 0 < {name} <= 1")
    if not (0.0 < float(value) <= 1.0):
        raise ValueError(f"{name}={value!r} is out of range; expected 0 < {name} <= 1")
    return float(value)


def top_runs(scores: pd.Series | dict[str, float], fraction: float = 0.75) -> list[str]:
    """The best ``fraction`` of the runs by ``scores`` (Series or dict run → score; higher is better).

    k = round_half_up(fraction · n) runs are kept (at least 1), plus every run tied with the k-th best
    score, so that no tie is broken arbitrarily. Returned in the order of ``scores``.
    """
    from ir_incomplete.robustness.degrade import round_half_up

    series = _scores(scores)
    fraction = _fraction(fraction, "fraction")
    k = max(1, int(round_half_up(fraction * len(series))))
    threshold = np.sort(series.to_numpy())[::-1][k - 1]
    return [str(r) for r in series.index[series.to_numpy() >= threshold]]


def runs_above_quartile(scores: pd.Series | dict[str, float], q: float = 0.25) -> list[str]:
    """Runs whose score is strictly above the ``q`` quantile of all scores (``numpy.quantile``, linear
    interpolation; ``q=0.25``: the first quartile). Returned in the order of ``scores``."""
    series = _scores(scores)
    if isinstance(q, bool) or not isinstance(q, (int, float, np.integer, np.floating)) or not (0.0 <= q < 1.0):
        raise ValueError(f"q={q!r} is not valid; expected a quantile 0 <= q < 1")
    values = series.to_numpy()
    return [str(r) for r in series.index[values > np.quantile(values, float(q))]]


def runs_retrieving(runs: Any, qrels: Any, depth: int = 1000, fraction: float = 0.95) -> list[str]:
    """Runs that retrieve at least ``fraction`` of the documents requested: the number of (topic,
    document) entries of a run on the topics of ``qrels`` must be ≥ fraction · n_topics · ``depth``.
    Entries beyond ``depth`` per topic do not count. ``runs``: anything :func:`ir_incomplete.evaluate`
    accepts; returned in the order of the runs."""
    from ir_incomplete.api import as_run_mapping
    from ir_incomplete.data import run_columns
    from ir_incomplete.robustness.degrade import _check_int, _judgments

    depth = _check_int(depth, "depth", 1)
    fraction = _fraction(fraction, "fraction")
    topics = pd.Index(_judgments(qrels).topic_ids)
    if len(topics) == 0:
        raise ValueError("qrels has no topics: cannot count the documents the runs retrieve")
    needed = fraction * len(topics) * depth
    kept = []
    for name, run in as_run_mapping(runs).items():
        qids, _, _ = run_columns(run)
        code = topics.get_indexer(qids)
        per_topic = np.bincount(code[code >= 0], minlength=len(topics))
        if np.minimum(per_topic, depth).sum() >= needed - 1e-9:
            kept.append(str(name))
    return kept


def filter_runs(
    runs: Any,
    qrels: Any,
    filters: Sequence[str],
    measure: str | Measure = "AP",
    *,
    scores: pd.Series | dict[str, float] | None = None,
    negative: str = "pooled_unjudged",
    score_precision: str = "float32",
) -> list[str]:
    """Names of the runs that pass every filter of ``filters`` (names from :data:`RUN_FILTERS`), each
    computed on all runs given. ``measure``: the reference measure of ``"top75"`` and ``"above_q1"``,
    evaluated on ``qrels`` unless ``scores`` (Series run → score) is given."""
    filters = _check_filters(filters)
    from ir_incomplete.api import as_run_mapping

    run_map = as_run_mapping(runs)
    names = [str(n) for n in run_map]
    if any(f in ("top75", "above_q1") for f in filters) and scores is None:
        from ir_incomplete.api import evaluate

        frame = evaluate(
            run_map,
            qrels,
            [measure],
            per_query=False,
            negative=negative,
            score_precision=score_precision,
            progress=False,
        )
        scores = frame.set_index("run")["value"]
    keep = set(names)
    for name in filters:
        if name == "top75":
            keep &= set(top_runs(scores, 0.75))
        elif name == "above_q1":
            keep &= set(runs_above_quartile(scores, 0.25))
        else:
            keep &= set(runs_retrieving(run_map, qrels, 1000, 0.95))
    return [n for n in names if n in keep]


def _check_filters(filters) -> list[str]:
    if filters is None:
        return []
    if isinstance(filters, str):
        filters = [filters]
    filters = list(filters)
    unknown = [f for f in filters if f not in RUN_FILTERS]
    if unknown:
        raise ValueError(f"unknown run filter {unknown[0]!r}; choices: {', '.join(RUN_FILTERS)}")
    return list(dict.fromkeys(filters))
