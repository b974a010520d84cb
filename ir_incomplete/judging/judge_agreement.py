"""Agreement between two judgment sets: two assessors, or human and automatic (LLM) judges.

:func:`agreement` compares the grades two qrels give the (query, document) pairs they both judge —
Cohen's κ (unweighted, linear, quadratic), Krippendorff's α (ordinal, interval), the confusion matrix —
and, with runs, the two leaderboards they produce, as TREC AutoJudge reports them (Kendall τ, τ_AP,
Spearman, RMSE; :mod:`ir_incomplete.robustness` statistics). :func:`cohen_kappa` and
:func:`krippendorff_alpha` are the statistics on two label vectors.

Both statistics are computed here with numpy; they equal scikit-learn's ``cohen_kappa_score`` and the
``krippendorff`` package's ``alpha`` (checked in the tests), neither of which is needed at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ir_incomplete.judging._candidates import _judgment_frame
from ir_incomplete.labelers import KAPPA_WEIGHTS
from ir_incomplete.labelers import cohen_kappa as labelled_kappa

__all__ = ["agreement", "cohen_kappa", "krippendorff_alpha", "KAPPA_WEIGHTS", "ALPHA_LEVELS", "LEADERBOARD_STATISTICS"]

ALPHA_LEVELS = ("nominal", "ordinal", "interval")
LEADERBOARD_STATISTICS = ("tau", "tau_ap", "spearman", "rmse")


def _labels(a: np.ndarray, b: np.ndarray, labels: Sequence[Any] | None) -> np.ndarray:
    observed = np.unique(np.concatenate([a, b]))
    if labels is None:
        return observed
    scale = np.asarray(list(labels))
    if len(np.unique(scale)) != len(scale):
        raise ValueError(f"labels={list(labels)!r} lists a label twice")
    unknown = np.setdiff1d(observed, scale)
    if len(unknown):
        raise ValueError(f"grade {unknown[0].item()!r} is not among labels={list(labels)!r}")
    return np.sort(scale)


def _pairs(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a).reshape(-1)
    y = np.asarray(b).reshape(-1)
    if x.shape != y.shape:
        raise ValueError(f"the two label vectors have different lengths ({len(x)} and {len(y)})")
    if len(x) == 0:
        raise ValueError("no labels to compare (both vectors are empty)")
    return x, y


def confusion(a: Any, b: Any, labels: Sequence[Any] | None = None) -> pd.DataFrame:
    """Confusion matrix of two label vectors: rows = labels of ``a``, columns = labels of ``b``."""
    x, y = _pairs(a, b)
    scale = _labels(x, y, labels)
    i = np.searchsorted(scale, x)
    j = np.searchsorted(scale, y)
    counts = np.bincount(i * len(scale) + j, minlength=len(scale) ** 2).reshape(len(scale), len(scale))
    return pd.DataFrame(counts, index=pd.Index(scale, name="a"), columns=pd.Index(scale, name="b"))


def cohen_kappa(a: Any, b: Any, weights: str | None = None, labels: Sequence[Any] | None = None) -> float:
    """Cohen's κ of two label vectors (Cohen 1960; weighted: Cohen 1968): :func:`ir_incomplete.labelers.cohen_kappa`
    on the sorted labels (the observed ones, or ``labels`` when given; a grade outside ``labels`` is an
    error here, not an item left out).

    κ = 1 − Σ w·O / Σ w·E with O the confusion matrix and E = outer(row sums, column sums) / N, where
    w_ij = [i ≠ j] (``weights=None``), |i − j| (``"linear"``) or (i − j)² (``"quadratic"``), i and j being
    *positions* in the sorted list of labels — scikit-learn's ``cohen_kappa_score`` definition, which it
    equals. So with grades 0 and 2 only, linear weights see them one step apart; pass ``labels=[0, 1, 2]``
    to use the full scale. NaN when Σ w·E = 0 (both judges give one and the same label to everything).
    """
    if weights not in KAPPA_WEIGHTS:
        raise ValueError(f"weights={weights!r} is not valid; choices: None, linear, quadratic")
    x, y = _pairs(a, b)
    return labelled_kappa(x, y, labels=_labels(x, y, labels), weights=weights)


def krippendorff_alpha(a: Any, b: Any, level: str = "ordinal", labels: Sequence[Any] | None = None) -> float:
    """Krippendorff's α of two coders who both label every unit (Krippendorff, *Content Analysis*, 2004,
    §11.3; Krippendorff 2011, "Computing Krippendorff's alpha-reliability").

    Coincidence matrix o = C + Cᵀ (C the confusion matrix over the value domain: the sorted observed
    values, or ``labels``), n_c its marginals, n = 2N; α = 1 − (n − 1) · Σ o_ck δ²_ck / Σ n_c n_k δ²_ck.
    Distances: nominal δ² = [c ≠ k]; interval δ² = (c − k)² on the values; ordinal
    δ² = (Σ_{g=c..k} n_g − (n_c + n_k)/2)² over the value domain in order. Equals the ``krippendorff``
    package's ``alpha(reliability_data=[a, b], level_of_measurement=level)`` (its value domain is the
    observed values unless given). NaN when every value is the same (no expected disagreement).
    """
    if level not in ALPHA_LEVELS:
        raise ValueError(f"level={level!r} is not valid; choices: {', '.join(ALPHA_LEVELS)}")
    table = confusion(a, b, labels)
    values = table.index.to_numpy()
    counts = table.to_numpy(dtype=np.float64)
    o = counts + counts.T
    n_c = o.sum(axis=1)
    n = n_c.sum()
    k = len(values)
    if level == "nominal":
        d2 = 1.0 - np.eye(k)
    elif level == "interval":
        v = np.asarray(values, dtype=np.float64)
        d2 = (v[:, None] - v[None, :]) ** 2
    else:
        cum = np.cumsum(n_c)  # Σ_{g ≤ c} n_g
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        between = cum[hi] - np.where(lo > 0, cum[np.maximum(lo - 1, 0)], 0.0)  # Σ_{g=lo..hi} n_g
        d2 = (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    expected = float(np.sum(np.outer(n_c, n_c) * d2))
    if expected == 0:
        return float("nan")
    return float(1.0 - (n - 1.0) * np.sum(o * d2) / expected)


def agreement(
    qrels_a: Any,
    qrels_b: Any,
    runs: Any = None,
    measures: Sequence[Any] | None = None,
    *,
    labels: Sequence[int] | None = None,
    score_precision: str = "float32",
) -> pd.Series:
    """Agreement of two judgment sets on the (query, document) pairs both judge.

    Judgments are entries with a grade ≥ 0 (negative grades are "pooled but unjudged", not judgments).
    Both sets are read as :func:`ir_incomplete.evaluate` reads qrels: ids are text (``1``, ``1.0`` and
    ``"1"`` name one query) and a set that judges a (query, document) pair twice is refused.
    On the common pairs: ``kappa``, ``kappa_linear``, ``kappa_quadratic`` (:func:`cohen_kappa`),
    ``alpha_ordinal``, ``alpha_interval`` (:func:`krippendorff_alpha`), ``n_common``, ``only_a`` and
    ``only_b`` (pairs judged by one set only), ``accuracy`` (share of identical grades) and
    ``n_queries`` (queries with a common pair). ``labels``: the grade scale (default: the grades
    observed in the common pairs).

    With ``runs`` (anything :func:`ir_incomplete.evaluate` accepts, at least 2 runs), every run is scored
    with each measure (default ``nDCG@10`` and ``AP``) on each whole judgment set, over the queries both
    sets judge (a query a run does not answer scores 0 there, as trec_eval ``-c``), and the two
    leaderboards (per-run means; A is the reference) are compared:
    ``tau[m]`` (Kendall τ-b), ``tau_ap[m]``, ``spearman[m]`` and ``rmse[m]`` for each measure m.

    Returns a ``pandas.Series`` (object dtype: the statistics are floats, the counts ``n_common``,
    ``only_a``, ``only_b`` and ``n_queries`` integers, shown as such); ``attrs["confusion"]`` holds the
    confusion matrix (rows: A's grades, columns: B's) and, with runs, ``attrs["leaderboards"]`` the per-run scores
    (``run, measure, a, b``). No common pair is a ``ValueError``.
    """
    a = _judgment_frame(qrels_a, "qrels_a")
    b = _judgment_frame(qrels_b, "qrels_b")
    a = a[a["relevance"] >= 0]
    b = b[b["relevance"] >= 0]
    merged = a.merge(b, on=["query_id", "doc_id"], how="outer", suffixes=("_a", "_b"), indicator=True)
    both = merged[merged["_merge"] == "both"]
    if len(both) == 0:
        raise ValueError(
            f"the two judgment sets have no (query, document) pair in common (A judges {len(a)} pairs over "
            f"{a['query_id'].nunique()} queries, B {len(b)} over {b['query_id'].nunique()}); check that the "
            f"query and document ids match"
        )
    ga = both["relevance_a"].to_numpy(dtype=np.int64)
    gb = both["relevance_b"].to_numpy(dtype=np.int64)
    table = confusion(ga, gb, labels)
    out: dict[str, float | int] = {
        "kappa": cohen_kappa(ga, gb, None, labels),
        "kappa_linear": cohen_kappa(ga, gb, "linear", labels),
        "kappa_quadratic": cohen_kappa(ga, gb, "quadratic", labels),
        "alpha_ordinal": krippendorff_alpha(ga, gb, "ordinal", labels),
        "alpha_interval": krippendorff_alpha(ga, gb, "interval", labels),
        "accuracy": float(np.mean(ga == gb)),
        "n_common": int(len(both)),
        "only_a": int((merged["_merge"] == "left_only").sum()),
        "only_b": int((merged["_merge"] == "right_only").sum()),
        "n_queries": int(both["query_id"].nunique()),
    }
    attrs: dict[str, Any] = {"confusion": table}
    if runs is not None:
        stats, boards = _leaderboards(a, b, runs, measures, score_precision)
        out.update(stats)
        attrs["leaderboards"] = boards
    elif measures is not None:
        raise ValueError("measures are used to compare leaderboards: give runs=... too")
    series = pd.Series(out, dtype=object)  # counts stay integers (7878, not 7878.0)
    series.attrs.update(attrs)
    return series


def _leaderboards(
    a: pd.DataFrame, b: pd.DataFrame, runs: Any, measures: Sequence[Any] | None, score_precision: str
) -> tuple[dict[str, float], pd.DataFrame]:
    from ir_incomplete.api import as_measures, as_run_mapping, evaluate
    from ir_incomplete.robustness.compare import kendall_tau, rmse, spearman, tau_ap

    measure_objs = as_measures(["nDCG@10", "AP"] if measures is None else measures)
    run_map = as_run_mapping(runs)
    if len(run_map) < 2:
        raise ValueError(f"comparing leaderboards needs at least 2 runs (got {len(run_map)})")
    common = sorted(set(a["query_id"]) & set(b["query_id"]))
    if not common:
        raise ValueError("the two judgment sets judge no query in common; leaderboards cannot be compared")
    keep = set(common)
    scores = {}
    for label, frame in (("a", a), ("b", b)):
        part = frame[frame["query_id"].isin(keep)]
        result = evaluate(run_map, part, measure_objs, per_query=False, score_precision=score_precision)
        scores[label] = result.set_index(["run", "measure"])["value"]
    boards = pd.DataFrame({"a": scores["a"], "b": scores["b"]}).reset_index()
    stats: dict[str, float] = {}
    for m in measure_objs:
        name = repr(m)
        part = boards[boards["measure"] == name].set_index("run")
        stats[f"tau[{name}]"] = kendall_tau(part["a"], part["b"])
        stats[f"tau_ap[{name}]"] = tau_ap(part["a"], part["b"])
        stats[f"spearman[{name}]"] = spearman(part["a"], part["b"])
        stats[f"rmse[{name}]"] = rmse(part["a"], part["b"])
    return stats, boards
