"""Simulated relevance labelers and their agreement with human judges.

To study estimators that use automatic relevance labels (an LLM judge, a classifier) without running one,
a labeler is simulated from complete human judgments and a stated confusion matrix: the predicted grade
of a document with human grade ``h`` is drawn from row ``h`` of the matrix. Its agreement with the human
judges is measured as published LLM-judge studies do, by Cohen's κ.

* :func:`simulate_labels` — seeded predicted grades for a set of documents.
* :func:`retrieved_documents` — the (query, document) pairs in the top ``depth`` of any run: what a labeler
  is asked to grade.
* :func:`cohen_kappa` — Cohen's κ of two label arrays (unweighted, linear or quadratic weights).
* :func:`expected_kappa` — the κ a confusion matrix gives on a population with given human grades.
* :func:`judged_kappa` — κ between predicted grades and human qrels on the documents both grade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ir_incomplete.data.columns import _ids, _plain

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd


__all__ = ["simulate_labels", "retrieved_documents", "cohen_kappa", "expected_kappa", "judged_kappa", "KAPPA_WEIGHTS"]

#: the ``weights`` that :func:`cohen_kappa` accepts (as ``sklearn.metrics.cohen_kappa_score``)
KAPPA_WEIGHTS = (None, "linear", "quadratic")

_ROW_SUM_TOLERANCE = 1e-9


def _confusion(confusion) -> np.ndarray:
    """The confusion matrix as a float array, checked: 2-D, finite, ≥ 0, every row sums to 1."""
    try:
        matrix = np.array(confusion, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            "confusion must be a matrix of probabilities (rows: human grades 0..G-1, columns: predicted grades)"
        ) from None
    if matrix.ndim != 2 or matrix.shape[0] < 1 or matrix.shape[1] < 1:
        raise ValueError(
            f"confusion must be a 2-D matrix (rows: human grades 0..G-1, columns: predicted grades), "
            f"got shape {matrix.shape}"
        )
    bad = np.argwhere(~np.isfinite(matrix) | (matrix < 0))
    if len(bad):
        h, p = bad[0]
        raise ValueError(
            f"confusion[{h}][{p}] = {float(matrix[h, p])!r} is not a probability (finite and >= 0); row {h} is "
            f"P(predicted grade | human grade {h})"
        )
    sums = matrix.sum(axis=1)
    off = np.flatnonzero(np.abs(sums - 1.0) > _ROW_SUM_TOLERANCE)
    if len(off):
        h = int(off[0])
        raise ValueError(
            f"row {h} of the confusion matrix sums to {float(sums[h])!r}, not 1: row h is the distribution of the "
            f"predicted grade of a document with human grade {h}"
        )
    return matrix


def _frame(table, what: str, need_grade: bool) -> pd.DataFrame:
    """``query_id, doc_id[, relevance]`` of a qrels-like table, ids as ``str``."""
    from ir_incomplete.data import Qrels, read_trec_qrels

    if isinstance(table, Qrels):
        table = table.to_frame()
    elif isinstance(table, str) or hasattr(table, "__fspath__"):
        table = read_trec_qrels(table)
    elif not isinstance(table, pd.DataFrame):
        table = Qrels.from_any(table).to_frame()
    columns = [("query_id", "qid"), ("doc_id", "docno")] + ([("relevance", "label")] if need_grade else [])
    out = {}
    for choices in columns:
        found = next((c for c in choices if c in table.columns), None)
        if found is None:
            raise ValueError(
                f"{what} is missing column {choices[0]!r} (found columns {list(map(str, table.columns))}; "
                f"expected {'/'.join(c[0] for c in columns)} or {'/'.join(c[1] for c in columns)})"
            )
        out[choices[0]] = table[found].to_numpy()
    frame = pd.DataFrame(out)
    frame["query_id"] = _ids(frame["query_id"], f"{what} query_id")  # as every input's ids: 1.0 is "1"
    frame["doc_id"] = _ids(frame["doc_id"], f"{what} doc_id")
    return frame


def simulate_labels(
    qrels_complete: Any,
    confusion: Any,
    seed: int,
    docs: Any = None,
) -> pd.DataFrame:
    """Predicted grades drawn from a confusion matrix applied to the human grades of complete judgments.

    ``confusion[h][p]`` is the probability that a document of human grade ``h`` is labelled ``p``
    (rows: human grades ``0 .. G-1``, each summing to 1; columns: predicted grades ``0 .. P-1``).
    The documents labelled are ``docs`` (any table with ``query_id, doc_id`` or ``qid, docno``: e.g.
    :func:`retrieved_documents` of the runs; duplicates are labelled once), by default every document the
    complete qrels judge. A document's human grade is its grade in ``qrels_complete``; a document that
    the complete qrels do not judge, or judge with a negative grade (pooled but unjudged), is
    nonrelevant in the truth and is labelled as human grade 0 (drawn from row 0). A human grade ≥ G is
    refused, naming the document.

    Draws: the documents are sorted by (query id, document id) as strings, then one uniform number per
    document from ``numpy.random.default_rng(seed)`` in that order; the predicted grade is the first ``p``
    whose cumulative row probability exceeds it. So the labels of a (seed, set of documents) are the same
    whatever order the documents come in, bit for bit.

    Returns a DataFrame ``query_id, doc_id, relevance`` (the predicted grade) sorted by query and
    document id, with the human grade used in ``human``.
    """
    matrix = _confusion(confusion)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer (the labels are reproducible from it), not {seed!r}")
    truth = _frame(qrels_complete, "qrels_complete", need_grade=True)
    grades = pd.to_numeric(truth["relevance"], errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(grades) | (grades != np.round(grades)))
    if len(bad):
        i = int(bad[0])
        raise ValueError(
            f"qrels_complete grade {_plain(truth['relevance'].iloc[i])!r} of document {truth['doc_id'].iloc[i]!r}, "
            f"query {truth['query_id'].iloc[i]!r} is not an integer"
        )
    truth["relevance"] = np.maximum(grades, 0).astype(np.int64)
    twice = np.flatnonzero(truth.duplicated(["query_id", "doc_id"]).to_numpy())
    if len(twice):
        i = int(twice[0])
        raise ValueError(
            f"qrels_complete judges document {truth['doc_id'].iloc[i]!r} of query {truth['query_id'].iloc[i]!r} twice"
        )
    if docs is None:
        wanted = truth[["query_id", "doc_id"]]
    else:
        wanted = _frame(docs, "docs", need_grade=False).drop_duplicates(ignore_index=True)
    wanted = wanted.sort_values(["query_id", "doc_id"], kind="stable", ignore_index=True)
    human = wanted.merge(truth, on=["query_id", "doc_id"], how="left")["relevance"]
    human = human.fillna(0).to_numpy(dtype=np.int64)
    over = np.flatnonzero(human >= matrix.shape[0])
    if len(over):
        i = int(over[0])
        raise ValueError(
            f"document {wanted['doc_id'].iloc[i]!r} of query {wanted['query_id'].iloc[i]!r} has human grade "
            f"{int(human[i])}, but the confusion matrix has rows for grades 0..{matrix.shape[0] - 1} only"
        )
    cumulative = np.cumsum(matrix, axis=1)[:, :-1]  # the last boundary is 1: the last grade takes the rest
    uniform = np.random.default_rng(int(seed)).random(len(wanted))
    predicted = (uniform[:, None] >= cumulative[human]).sum(axis=1)
    return pd.DataFrame(
        {
            "query_id": wanted["query_id"].to_numpy(),
            "doc_id": wanted["doc_id"].to_numpy(),
            "relevance": predicted.astype(np.int64),
            "human": human,
        }
    )


def retrieved_documents(runs: Any, depth: int | None = 100, score_precision: str = "float32") -> pd.DataFrame:
    """The distinct ``query_id, doc_id`` pairs ranked in the top ``depth`` of at least one run.

    ``runs``: any form :func:`ir_incomplete.evaluate` takes. Ranks are trec_eval's (score descending,
    compared in ``score_precision``; ties by document id descending), not the file's rank column.
    ``depth=None``: every retrieved document. Sorted by query and document id.
    """
    from ir_incomplete.api import as_run_mapping
    from ir_incomplete.data import run_columns, trec_order

    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
        raise ValueError(f"depth={depth!r} is not valid; expected an integer >= 1, or None for whole rankings")
    parts = []
    for run in as_run_mapping(runs).values():
        qids, dids, scores = run_columns(run)
        if not len(qids):
            continue
        codes = pd.factorize(qids)[0].astype(np.int64)
        order = trec_order(codes, scores, dids, score_precision)
        ranked_codes = codes[order]
        starts = np.flatnonzero(np.r_[True, ranked_codes[1:] != ranked_codes[:-1]])
        lengths = np.diff(np.r_[starts, len(order)])
        rank = np.arange(len(order)) - np.repeat(starts, lengths)
        keep = order if depth is None else order[rank < depth]
        parts.append(pd.DataFrame({"query_id": qids[keep], "doc_id": dids[keep]}))
    if not parts:
        return pd.DataFrame({"query_id": pd.Series(dtype=object), "doc_id": pd.Series(dtype=object)})
    out = pd.concat(parts, ignore_index=True).drop_duplicates(ignore_index=True)
    return out.sort_values(["query_id", "doc_id"], kind="stable", ignore_index=True)


def cohen_kappa(a: Any, b: Any, labels: Any = None, weights: str | None = None) -> float:
    """Cohen's κ between two raters' labels of the same items (Cohen 1960; weighted: Cohen 1968).

    κ = 1 − Σ w·O / Σ w·E, with ``O`` the observed joint distribution of (a, b) and ``E`` the product of
    its marginals; ``w`` = 1 off the diagonal (unweighted), ``|i − j|`` (``"linear"``) or ``(i − j)²``
    (``"quadratic"``), ``i, j`` the positions of the labels in ``labels`` (default: the sorted labels
    that occur). Equals ``sklearn.metrics.cohen_kappa_score`` (tested); NaN when ``E`` puts all its mass
    where ``w`` = 0 (both raters give one same label throughout), as sklearn.
    """
    if weights not in KAPPA_WEIGHTS:
        raise ValueError(f"weights={weights!r} is not valid; choices: None, 'linear', 'quadratic'")
    x, y = np.asarray(a), np.asarray(b)
    if x.ndim != 1 or y.ndim != 1 or len(x) != len(y):
        raise ValueError(f"a and b must be 1-D arrays of the same length (got shapes {x.shape} and {y.shape})")
    if not len(x):
        raise ValueError("a and b are empty: κ needs labelled items")
    levels = np.unique(np.concatenate([x, y])) if labels is None else np.asarray(labels)
    index = {v: i for i, v in enumerate(levels.tolist())}
    if len(index) != len(levels):
        raise ValueError(f"labels {levels.tolist()} has duplicates")
    k = len(levels)
    keep = np.isin(x, levels) & np.isin(y, levels)
    if not keep.any():
        raise ValueError(f"no item has both labels among labels={levels.tolist()}")
    xi = np.searchsorted(levels, x[keep]) if labels is None else np.array([index[v] for v in x[keep].tolist()])
    yi = np.searchsorted(levels, y[keep]) if labels is None else np.array([index[v] for v in y[keep].tolist()])
    observed = np.bincount(xi * k + yi, minlength=k * k).reshape(k, k).astype(np.float64)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    i, j = np.indices((k, k))
    w = (i != j).astype(np.float64) if weights is None else np.abs(i - j) if weights == "linear" else (i - j) ** 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(1.0 - (w * observed).sum() / (w * expected).sum())


def expected_kappa(confusion: Any, human_distribution: Any) -> float:
    """The unweighted Cohen's κ of a labeler with this confusion matrix on documents whose human grades
    follow ``human_distribution`` (proportions of grades ``0 .. G-1``; normalised to sum 1): with
    ``J = diag(p)·C`` the joint distribution, ``κ = (Σ_g J[g,g] − e) / (1 − e)`` with
    ``e = Σ_g (Σ_j J[g,j])·(Σ_i J[i,g])``, the agreement expected by chance.
    The κ of :func:`simulate_labels` converges to it as the number of documents grows."""
    matrix = _confusion(confusion)
    p = np.asarray(human_distribution, dtype=np.float64)
    if p.shape != (matrix.shape[0],) or not np.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
        raise ValueError(
            f"human_distribution must hold {matrix.shape[0]} non-negative proportions (one per row of the "
            f"confusion matrix), got {p.tolist()}"
        )
    p = p / p.sum()
    size = max(matrix.shape)
    joint = np.zeros((size, size))
    joint[: matrix.shape[0], : matrix.shape[1]] = p[:, None] * matrix
    chance = float(joint.sum(axis=1) @ joint.sum(axis=0))
    return (float(np.trace(joint)) - chance) / (1.0 - chance)


def judged_kappa(predictions: Any, qrels: Any, weights: str | None = None) -> float:
    """Cohen's κ (:func:`cohen_kappa`) between predicted grades and human grades on the (query, document)
    pairs that both grade (negative human grades, pooled but unjudged, are left out), the way LLM-judge
    agreement is published. Raises ``ValueError`` when they share no pair."""
    pred = _frame(predictions, "predictions", need_grade=True)
    human = _frame(qrels, "qrels", need_grade=True)
    both = pred.merge(human, on=["query_id", "doc_id"], suffixes=("_predicted", "_human"))
    both = both[pd.to_numeric(both["relevance_human"]) >= 0]
    if both.empty:
        raise ValueError("the predictions and the qrels share no judged (query, document) pair")
    human_grades = both["relevance_human"].to_numpy(dtype=np.int64)
    return cohen_kappa(human_grades, both["relevance_predicted"].to_numpy(dtype=np.int64), weights=weights)
