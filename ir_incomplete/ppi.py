"""Prediction-powered inference (PPI and PPI++) for the mean of a measure over queries.

A few queries carry human judgments (the *labelled* queries); automatic relevance labels (an LLM or a
classifier: the *predictions*) exist for every query. Scoring the runs on the predictions alone is biased;
scoring them on the labelled queries alone is unbiased but noisy. PPI (Angelopoulos, Bates, Fannjiang,
Jordan & Zrnic, *Prediction-powered inference*, Science 382, 2023) combines both: it scores every query on
the predictions and corrects the bias with the labelled queries, giving an unbiased estimate of the mean
and a confidence interval valid whatever the quality of the predictions, provided the labelled queries
are a random sample of enough queries (a normal approximation: on TREC-COVID, 90 % intervals from 10
random labelled topics covered 87.7 %, from 80 topics 90 %). PPI++ (Angelopoulos, Duchi &
Zrnic, *PPI++: Efficient Prediction-Powered Inference*, arXiv:2311.01453, 2023) weighs the predictions
by a tuned λ, so that poor predictions never make the interval wider than the human-only one (to first
order). Oosterhuis, Jagerman, Qin, Wang & Bendersky (*Reliable Confidence Intervals for Information
Retrieval Evaluation Using Generative A.I.*, KDD 2024) apply it to IR evaluation with queries as units.

* :func:`ppi_mean` — the estimator on arrays of per-query values, vectorized over any leading axes.
* :func:`ppi_evaluate` — runs × measures: the measures scored on the human qrels (labelled queries) and
  on the predictions (every query), then :func:`ppi_mean` for every (run, measure) in one call.

The formulas are those of ``ppi_py`` (``ppi_mean_pointestimate`` / ``ppi_mean_ci``, version 0.2.3),
implemented here with numpy: importing ``ppi_py`` costs about 0.9 s (it loads numba, statsmodels and
scikit-learn; measured with ``python -X importtime -c "import ppi_py"``: 0.88–0.95 s cumulative), this
module about nothing beyond numpy and pandas. The tests check equality with ``ppi_py`` to 1e-9.
"""

from __future__ import annotations

from collections.abc import Iterable
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ir_incomplete.data.columns import _ids, _plain

if TYPE_CHECKING:
    import pandas as pd

    from ir_incomplete.api import MeasureSpec
else:
    from ir_incomplete._lazy import pandas as pd


__all__ = ["PPIEstimate", "ppi_mean", "ppi_evaluate", "PPI_COLUMNS"]

#: the columns of :func:`ppi_evaluate`'s result
PPI_COLUMNS = ("run", "measure", "value", "lo", "hi", "lam", "n_labelled", "n_unlabelled")

#: at most this many offending ids are listed in an error message
_LISTED = 10


class PPIEstimate(NamedTuple):
    """What :func:`ppi_mean` returns: arrays of the leading shape of its inputs.

    ``value``: the point estimate; ``lo``/``hi``: the two-sided ``1 - alpha`` confidence interval;
    ``lam``: the λ used (1 for plain PPI; the tuned, clipped value for PPI++).
    """

    value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    lam: np.ndarray


def _check_alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)):
        raise TypeError(f"alpha must be a number strictly between 0 and 1, not {type(alpha).__name__}")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha={alpha!r} is not valid: the error level must lie strictly between 0 and 1 (e.g. 0.1)")
    return float(alpha)


def _normal_quantile(alpha: float) -> float:
    """``z = Φ⁻¹(1 − alpha/2)``. For a small alpha, ``1 − alpha/2`` loses alpha's digits (below alpha ≈
    2.2e-16 it is 1 and the quantile infinite): from alpha/2 < 1e-8 on, z is taken as ``−Φ⁻¹(alpha/2)``,
    the same number computed where it is representable; an alpha whose half is 0 is refused naming
    alpha."""
    if alpha / 2.0 >= 1e-8:
        return NormalDist().inv_cdf(1.0 - alpha / 2.0)
    if alpha / 2.0 > 0.0:
        return -NormalDist().inv_cdf(alpha / 2.0)
    raise ValueError(
        f"alpha={alpha!r} is too small: alpha/2 rounds to 0, so the normal quantile of 1 - alpha/2 is infinite "
        f"(give alpha >= 1e-300)"
    )


def _as_values(values, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 0:
        raise ValueError(f"{what} must be an array of per-query values (last axis: queries), not a scalar")
    bad = np.argwhere(~np.isfinite(arr))
    if len(bad):
        raise ValueError(
            f"{what} holds a non-finite value {float(arr[tuple(bad[0])])!r} at index {tuple(bad[0].tolist())}"
        )
    return arr


def ppi_mean(
    y: Any,
    yhat: Any,
    yhat_unlabelled: Any,
    alpha: float | None = None,
    lam: float | None = 1.0,
    *,
    interval: float | None = None,
) -> PPIEstimate:
    """The prediction-powered estimate of a mean and its two-sided CLT confidence interval.

    The last axis of each array holds queries: ``y`` the true values on the ``n`` labelled queries,
    ``yhat`` the predicted values on the same queries (same shape), ``yhat_unlabelled`` the predicted
    values on the ``N`` other queries; leading axes (e.g. runs × measures) are independent problems
    computed together. With ``m(·)`` the mean over queries and ``s(·)`` the standard deviation with
    divisor ``n`` (resp. ``N``; ``ddof=0``, as ``ppi_py``)::

        value = m(λ·ŷ_u) + m(y − λ·ŷ)
        se    = sqrt( s(λ·ŷ_u)² / N + s(y − λ·ŷ)² / n )
        lo, hi = value ∓ z·se,   z = Φ⁻¹(1 − alpha/2)

    ``lam=1`` is PPI (Angelopoulos et al., Science 2023), ``lam=0`` the classical interval from the
    labelled queries alone, ``lam=None`` PPI++ (Angelopoulos, Duchi & Zrnic 2023, the mean-estimation
    case) with λ chosen per problem to minimise the variance::

        λ = cov(y, ŷ) / ((1 + n/N) · var(ŷ ∪ ŷ_u)),   clipped to [0, 1]

    where ``cov`` has divisor ``n`` and ``var`` is the sample variance (divisor ``n + N − 1``) of the
    predictions on all ``n + N`` queries: exactly ``ppi_py``'s ``_calc_lam_glm(..., clip=True)`` for a
    one-dimensional mean. Where the predictions are constant over all queries the formula is 0/0
    (``ppi_py`` returns NaN): λ is then 0, and every λ gives the same value and interval there.
    ``z`` is the standard normal quantile (``statistics.NormalDist``; equal to ``scipy.stats.norm.ppf``
    to 1e-15; for alpha/2 < 1e-8 computed as −Φ⁻¹(alpha/2), so that alpha may be as small as 1e-300).
    The interval is symmetric and not clipped to the measure's range.

    Raises ``ValueError`` for fewer than 2 labelled or no unlabelled queries, mismatched shapes,
    non-finite values, ``alpha`` outside (0, 1) or ``lam`` outside [0, 1]. ``interval=0.9`` is the same
    as ``alpha=0.1`` (the default), as in :func:`ir_incomplete.evaluate`; giving both, they must agree.
    """
    from ir_incomplete.bootstrap import interval_or_alpha

    alpha = _check_alpha(interval_or_alpha(interval, alpha))
    y = _as_values(y, "y")
    yhat = _as_values(yhat, "yhat")
    unl = _as_values(yhat_unlabelled, "yhat_unlabelled")
    if y.shape != yhat.shape:
        raise ValueError(f"y and yhat must have the same shape (one value per labelled query): {y.shape}, {yhat.shape}")
    if unl.shape[:-1] != y.shape[:-1]:
        raise ValueError(
            f"yhat_unlabelled must have the leading shape of y: {unl.shape[:-1]} != {y.shape[:-1]} (last axis: queries)"
        )
    n, big_n = y.shape[-1], unl.shape[-1]
    if n < 2:
        raise ValueError(f"PPI needs at least 2 labelled queries (got {n}): the rectifier's variance is undefined")
    if big_n < 1:
        raise ValueError("PPI needs at least 1 unlabelled query (got 0): there is nothing for the predictions to add")
    if lam is None:
        y_c = y - y.mean(axis=-1, keepdims=True)
        yhat_c = yhat - yhat.mean(axis=-1, keepdims=True)
        cov = (y_c * yhat_c).mean(axis=-1)
        var = np.concatenate([yhat, unl], axis=-1).var(axis=-1, ddof=1)
        denominator = (1.0 + n / big_n) * var
        with np.errstate(divide="ignore", invalid="ignore"):
            lams = np.where(denominator > 0, cov / np.where(denominator > 0, denominator, 1.0), 0.0)
        lams = np.clip(lams, 0.0, 1.0)
    else:
        if isinstance(lam, bool) or not isinstance(lam, (int, float, np.integer, np.floating)):
            raise TypeError(f"lam must be a number in [0, 1] or None (tuned), not {type(lam).__name__}")
        if not 0.0 <= float(lam) <= 1.0:
            raise ValueError(f"lam={lam!r} is not valid: expected a number in [0, 1], or None to tune it (PPI++)")
        lams = np.full(y.shape[:-1], float(lam))
    weight = lams[..., None]
    imputed = weight * unl
    rectifier = y - weight * yhat
    value = imputed.mean(axis=-1) + rectifier.mean(axis=-1)
    se = np.sqrt(imputed.var(axis=-1) / big_n + rectifier.var(axis=-1) / n)
    z = _normal_quantile(alpha)
    return PPIEstimate(value=value, lo=value - z * se, hi=value + z * se, lam=lams)


# ---------------------------------------------------------------------------------------------------
# runs × measures
# ---------------------------------------------------------------------------------------------------
_QUERY_COLUMNS = ("query_id", "qid")
_DOC_COLUMNS = ("doc_id", "docno")
_GRADE_COLUMNS = ("relevance", "label")


def _prediction_frame(predictions) -> pd.DataFrame:
    """``query_id, doc_id, relevance`` of the predictions, checked: no duplicate (query, doc), grades ≥ 0."""
    from ir_incomplete.predictions import read_predictions

    frame = read_predictions(predictions)
    names = []
    for choices in (_QUERY_COLUMNS, _DOC_COLUMNS, _GRADE_COLUMNS):
        found = next((c for c in choices if c in frame.columns), None)
        if found is None:
            raise ValueError(
                f"predictions are missing column {choices[0]!r} (found columns {list(map(str, frame.columns))}; "
                f"expected query_id/doc_id/relevance or qid/docno/label)"
            )
        names.append(found)
    out = pd.DataFrame(
        {"query_id": frame[names[0]].to_numpy(), "doc_id": frame[names[1]].to_numpy(), "relevance": frame[names[2]]}
    )
    out["query_id"] = _ids(out["query_id"], "predictions query_id")  # as every input's ids: 1.0 is "1"
    out["doc_id"] = _ids(out["doc_id"], "predictions doc_id")
    twice = np.flatnonzero(out.duplicated(["query_id", "doc_id"], keep="first").to_numpy())
    if len(twice):
        i = int(twice[0])
        raise ValueError(
            f"predictions give document {out['doc_id'].iloc[i]!r} of query {out['query_id'].iloc[i]!r} twice "
            f"(row {i}; {len(twice)} duplicate row(s)); give one predicted grade per (query, document)"
        )
    grades = pd.to_numeric(out["relevance"], errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(grades) | (grades != np.round(grades)) | (grades < 0))
    if len(bad):
        i = int(bad[0])
        raise ValueError(
            f"predicted grade {_plain(out['relevance'].iloc[i])!r} of document {out['doc_id'].iloc[i]!r}, query "
            f"{out['query_id'].iloc[i]!r} (row {i}) is not valid: predicted grades are integers >= 0"
        )
    out["relevance"] = grades.astype(np.int64)
    return out


def _listing(ids: Iterable[Any]) -> str:
    ids = [str(i) for i in ids]
    shown = ", ".join(repr(i) for i in ids[:_LISTED])
    return shown + (f", … ({len(ids)} in all)" if len(ids) > _LISTED else "")


def _labelled(labelled_queries, human_topics: np.ndarray) -> list[str]:
    """The labelled query ids, checked against the queries of the human qrels."""
    if labelled_queries is None:
        labelled = [str(q) for q in human_topics]
    else:
        if isinstance(labelled_queries, (str, bytes)) or not isinstance(labelled_queries, Iterable):
            raise TypeError(
                f"labelled_queries must be a list of query ids (or None: the queries of the qrels), "
                f"not {type(labelled_queries).__name__}"
            )
        # as every input's ids: 1, 1.0 and "1" name one query
        labelled = list(_ids(np.array(list(labelled_queries), dtype=object), "labelled_queries"))
        seen: set[str] = set()
        repeated = [q for q in labelled if q in seen or seen.add(q)]  # type: ignore[func-returns-value]
        if repeated:
            raise ValueError(f"labelled_queries names query {repeated[0]!r} twice")
        known = {str(q) for q in human_topics}
        unknown = [q for q in labelled if q not in known]
        if unknown:
            raise ValueError(
                f"labelled_queries {_listing(unknown)} are not in the qrels: a labelled query needs human "
                f"judgments; the qrels judge the queries {_listing(sorted(known))}"
            )
    if len(labelled) < 2:
        raise ValueError(
            f"PPI needs at least 2 labelled queries, got {len(labelled)} ({_listing(labelled) or 'none'}): "
            f"the variance of the correction cannot be estimated from fewer"
        )
    return labelled


def _check_mean_measures(measures) -> None:
    from ir_measures.measures.base import MeanAgg

    for measure in measures:
        if type(measure.aggregator()) is not MeanAgg:
            raise ValueError(
                f"measure {measure!r} is not aggregated by the mean over queries, which is what PPI estimates; "
                f"use a measure whose summary is a mean (AP, nDCG@10, P@10, infAP, BootNDCG@10, …)"
            )


def _grid(frame: pd.DataFrame, runs: list[str], names: list[str], queries: list[str], what: str) -> np.ndarray:
    """``values[run, measure, query]`` from a per-query ``evaluate`` table (missing values refused)."""
    index = pd.MultiIndex.from_product([runs, names, queries], names=["run", "measure", "query_id"])
    values = frame.set_index(["run", "measure", "query_id"])["value"].reindex(index).to_numpy(dtype=np.float64)
    missing = np.flatnonzero(~np.isfinite(values))
    if len(missing):
        run, name, query = index[int(missing[0])]
        raise ValueError(
            f"{name} of run {run!r} on query {query!r} has no finite value on the {what} ({len(missing)} such "
            f"values); PPI needs the measure on every query"
        )
    return values.reshape(len(runs), len(names), len(queries))


def ppi_evaluate(
    runs: Any,
    qrels: Any,
    predictions: Any,
    measures: MeasureSpec,
    labelled_queries: Iterable[Any] | None = None,
    alpha: float | None = None,
    power_tuning: bool = False,
    *,
    negative: str = "pooled_unjudged",
    score_precision: str = "float32",
    interval: float | None = None,
) -> pd.DataFrame:
    """Prediction-powered estimates and ``1 - alpha`` confidence intervals of each run's mean measure.

    For every (run, measure): ``y`` = the measure on the human ``qrels`` for each labelled query,
    ``ŷ`` = the measure on the ``predictions`` (used as qrels) for the same queries, ``ŷ_u`` = the measure on
    the predictions for every other query of the predictions; then :func:`ppi_mean` with ``lam=1`` (PPI,
    Angelopoulos et al., Science 2023) or, with ``power_tuning=True``, ``lam=None`` (PPI++, Angelopoulos,
    Duchi & Zrnic 2023: λ tuned per run and measure). The estimate and interval equal ``ppi_py``'s
    ``ppi_mean_pointestimate`` / ``ppi_mean_ci`` (two-sided) on those arrays. Queries are the units, as
    in Oosterhuis et al. (KDD 2024).

    The target is the mean of the measure under human judgments over the population the queries are
    drawn from: the labelled and the unlabelled queries must be samples of the same population (e.g. the
    labelled queries drawn at random from all queries). Queries chosen for being easy or already well
    judged break that assumption, and the interval with it.

    Parameters
    ----------
    runs
        Any form :func:`ir_incomplete.evaluate` takes (``{name: run}``, run files, a directory, …),
        including :class:`ir_incomplete.data.PreparedRuns` (runs converted once, for repeated calls).
    qrels
        Human judgments (any qrels form); they define the truth on the labelled queries.
    predictions
        Predicted grades, qrels-like: a DataFrame with ``query_id, doc_id, relevance`` (or
        ``qid, docno, label``; other columns, e.g. per-grade probabilities, are ignored) or any other
        form :func:`ir_incomplete.predictions.read_predictions` reads (a pyarrow Table, a TREC qrels
        file, a table file with a header line, parquet, a dict of dicts or ``Qrel`` tuples). Grades are
        integers ≥ 0, one per (query, document).
        They must cover every labelled query; the queries they cover besides are the unlabelled ones.
    measures
        Measures or measure strings (anything :func:`ir_incomplete.evaluate` computes) whose summary is
        the mean over queries (counting measures such as ``NumRet`` are refused).
    labelled_queries
        The labelled query ids (default: every query of ``qrels``); each must be in ``qrels`` and at
        least 2 are needed. Queries of ``qrels`` not listed are not used as labelled.
    alpha, interval
        The intervals' level: ``interval=0.9`` (as in :func:`ir_incomplete.evaluate`), or its alias the
        error level ``alpha=0.1``; the intervals target coverage ``interval = 1 - alpha`` (default: 90 %
        intervals). Giving both, they must agree (``ValueError`` naming both otherwise).
    power_tuning
        ``False``: λ = 1 (PPI); ``True``: λ tuned (PPI++).
    negative, score_precision
        As in :func:`ir_incomplete.evaluate` (``negative`` applies to ``qrels``; predicted grades are ≥ 0).

    Returns
    -------
    DataFrame, one row per (run, measure) in the order given, with the columns of :data:`PPI_COLUMNS`
    (``run``, ``measure``, ``value``, ``lo``, ``hi``, ``lam``, ``n_labelled``, ``n_unlabelled``).
    ``measure`` is the measure's string, as in :func:`ir_incomplete.evaluate`.
    A query that a run does not answer counts with the measure's default (0), on both judgments.
    """
    from ir_incomplete.api import as_measures, as_run_mapping, evaluate
    from ir_incomplete.data import PreparedRuns, Qrels, prepare_runs

    if not isinstance(power_tuning, (bool, np.bool_)):
        raise TypeError(f"power_tuning must be True or False, not {power_tuning!r}")
    from ir_incomplete.bootstrap import interval_or_alpha

    alpha = _check_alpha(interval_or_alpha(interval, alpha))
    measures = as_measures(measures)
    _check_mean_measures(measures)
    human = Qrels.from_any(qrels, negative=negative)
    labelled = _labelled(labelled_queries, human.topic_ids)
    predicted = Qrels.from_any(_prediction_frame(predictions), negative=negative)
    covered = {str(q) for q in predicted.topic_ids}
    without = [q for q in labelled if q not in covered]
    if without:
        raise ValueError(
            f"the predictions hold no grade for the labelled queries {_listing(without)}: PPI compares "
            f"human and predicted values on every labelled query"
        )
    chosen = set(labelled)
    unlabelled = [str(q) for q in predicted.topic_ids if str(q) not in chosen]
    if not unlabelled:
        raise ValueError(
            "the predictions cover no query besides the labelled ones: PPI needs unlabelled queries "
            "(queries with predictions but no human judgments used)"
        )
    if isinstance(runs, PreparedRuns):
        prepared = runs  # evaluate() checks that its score_precision is the one asked for
    else:
        prepared = prepare_runs(as_run_mapping(runs), score_precision=score_precision)
    names = [str(name) for name in prepared.run_names]
    labels = [repr(m) for m in measures]
    on_human = evaluate(prepared, human, measures, score_precision=score_precision, negative=negative)
    on_predicted = evaluate(prepared, predicted, measures, score_precision=score_precision, negative=negative)
    y = _grid(on_human, names, labels, labelled, "human qrels")
    yhat = _grid(on_predicted, names, labels, labelled, "predictions")
    yhat_u = _grid(on_predicted, names, labels, unlabelled, "predictions")
    estimate = ppi_mean(y, yhat, yhat_u, alpha=alpha, lam=None if power_tuning else 1.0)
    n_runs, n_measures = len(names), len(labels)
    return pd.DataFrame(
        {
            "run": np.repeat(np.array(names, dtype=object), n_measures),
            "measure": np.tile(np.array(labels, dtype=object), n_runs),
            "value": estimate.value.ravel(),
            "lo": estimate.lo.ravel(),
            "hi": estimate.hi.ravel(),
            "lam": estimate.lam.ravel(),
            "n_labelled": len(labelled),
            "n_unlabelled": len(unlabelled),
        },
        columns=list(PPI_COLUMNS),
    )
