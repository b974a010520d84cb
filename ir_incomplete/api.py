"""``evaluate``: many runs × many measures in one vectorized call, as a tidy DataFrame."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ir_incomplete._lazy import pandas as pd
from ir_incomplete.data import Qrels, rank_runs, read_trec_run, run_columns
from ir_incomplete.provider import as_incomplete, computable

__all__ = ["evaluate", "as_measures", "as_run_mapping"]


def as_measures(measures) -> list[Any]:
    """A list of ``ir_measures.Measure`` from measure objects and/or strings in our grammar."""
    import ir_measures

    from ir_incomplete.grammar import parse

    if isinstance(measures, (str, ir_measures.Measure)):
        measures = [measures]
    out = []
    for m in measures:
        if isinstance(m, str):
            out.append(parse(m))
        elif isinstance(m, ir_measures.Measure):
            out.append(m)
        else:
            raise ValueError(f"{m!r} is not a measure (give a Measure object or a string such as 'infAP(c=1.5)@10')")
    if not out:
        raise ValueError("no measures given")
    return out


def _run_name(path) -> str:
    name = os.path.basename(os.fspath(path))
    for suffix in (".gz",):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def _looks_like_single_dict_run(runs: Mapping) -> bool:
    for value in runs.values():
        if isinstance(value, Mapping):
            for inner in value.values():
                return not isinstance(inner, Mapping)
            return False
        return False
    return False


def as_run_mapping(runs) -> dict[str, Any]:
    """Normalise the ``runs`` argument of :func:`evaluate` to an ordered ``{name: run}``.

    Accepted: a mapping name → run (any run form); a DataFrame with a ``run`` column (one run per
    value); a single run (DataFrame, dict of dicts, iterable of ``ScoredDoc``); a TREC run file; a
    directory of run files; a list of run files.
    """
    if isinstance(runs, pd.DataFrame):
        if "run" in runs.columns:
            return {str(name): frame for name, frame in runs.groupby("run", sort=False)}
        return {"run": runs}
    if isinstance(runs, Mapping):
        if _looks_like_single_dict_run(runs):
            return {"run": runs}
        return {str(k): v for k, v in runs.items()}
    if isinstance(runs, (str, os.PathLike)):
        if isinstance(runs, str) and "\n" in runs:
            return {"run": runs}
        if os.path.isdir(runs):
            files = sorted(f for f in os.listdir(runs) if not f.startswith("."))
            return {_run_name(f): os.path.join(runs, f) for f in files if os.path.isfile(os.path.join(runs, f))}
        return {_run_name(runs): runs}
    if isinstance(runs, (list, tuple)) and runs and all(isinstance(r, (str, os.PathLike)) for r in runs):
        out: dict[str, Any] = {}
        for path in runs:
            out.update(as_run_mapping(path))
        return out
    return {"run": runs}


def evaluate(
    runs,
    qrels,
    measures,
    *,
    per_query: bool = True,
    negative: str = "pooled_unjudged",
    score_precision: str = "float32",
) -> pd.DataFrame:
    """Evaluate one or many runs with many measures, converting the qrels once.

    Parameters
    ----------
    runs
        ``{name: run}`` (each a DataFrame with ``query_id/doc_id/score`` or ``qid/docno/score``, a
        dict of dicts, an iterable of ``ScoredDoc`` or a TREC run path), a DataFrame with a ``run``
        column, a single run, a directory of run files or a list of run files.
    qrels
        DataFrame (``query_id/doc_id/relevance`` or ``qid/docno/label``), dict of dicts, iterable of
        ``Qrel``, TREC qrels path, or a :class:`ir_incomplete.data.Qrels`.
    measures
        Measure objects and/or strings (``"infAP(c=1.5)@10"``). The built-in ``AP``, ``nDCG``, ``P``,
        ``R``, ``RR``, ``Rprec``, ``Judged``, ``NumRet`` and ``NumRel`` (``"nDCG@10"``, …) are computed
        natively, equal to pytrec_eval (:mod:`ir_incomplete.measures.reference`); measures that
        ``ir_incomplete`` does not compute (e.g. ``"ERR@10"``) go to ``ir_measures``, run by run.
    per_query
        ``True``: one row per (run, query_id, measure); ``False``: the mean over queries per
        (run, measure) (the sum for counting measures such as ``NumRet``, as in ir_measures).
    negative
        ``"pooled_unjudged"`` (trec_eval: negative grades are pooled but unjudged) or ``"zero"``.
    score_precision
        ``"float32"`` (trec_eval 9 / pytrec_eval ties) or ``"float64"`` (trec_eval 10).

    Returns
    -------
    DataFrame with columns ``run, query_id, measure, value`` (``run, measure, value`` when
    ``per_query=False``). As in ``ir_measures``, every query of the qrels is reported; a query a run
    does not answer gets the measure's default (0).
    """
    measures = as_measures(measures)
    run_map = as_run_mapping(runs)
    judged = Qrels.from_any(qrels, negative=negative)
    names = list(run_map)
    frames = []
    ours = [(m, as_incomplete(m)) for m in measures if computable(m)]
    others = [m for m in measures if not computable(m)]
    if ours and others:  # both paths read every run: read files once
        run_map = {
            name: read_trec_run(run) if isinstance(run, (str, os.PathLike)) else run for name, run in run_map.items()
        }
    if ours:
        ranked = rank_runs(run_map, judged, score_precision)
        n_runs, n_topics = len(names), judged.n_topics
        run_col = np.repeat(np.array(names, dtype=object), n_topics)
        qid_col = np.tile(judged.topic_ids, n_runs)
        for measure, impl in ours:
            grid = np.full((n_runs, n_topics), float(measure.DEFAULT))
            grid[ranked.run_of_row, ranked.topic_of_row] = impl.compute(ranked, judged)
            frames.append(
                pd.DataFrame({"run": run_col, "query_id": qid_col, "measure": repr(measure), "value": grid.ravel()})
            )
    if others:
        frames.extend(_evaluate_elsewhere(run_map, judged, others))
    result = pd.concat(frames, ignore_index=True)
    order = {repr(m): i for i, m in enumerate(measures)}
    result["_m"] = result["measure"].map(order)
    result["_r"] = result["run"].map({n: i for i, n in enumerate(names)})
    result = result.sort_values(["_r", "_m"], kind="stable").drop(columns=["_m", "_r"]).reset_index(drop=True)
    if not per_query:
        result = _aggregate(result, measures)
    return result


def _aggregate(per_query: pd.DataFrame, measures) -> pd.DataFrame:
    """Mean over queries, or the sum for counting measures (``NumRet``, ``NumQ``, …), as ir_measures."""
    from ir_measures.measures import SumAgg

    summed = {repr(m) for m in measures if isinstance(m.aggregator(), SumAgg)}
    grouped = per_query.groupby(["run", "measure"], sort=False)["value"]
    out = grouped.mean().reset_index()
    if summed:
        totals = grouped.sum().reset_index()["value"]
        use_sum = out["measure"].isin(summed)
        out.loc[use_sum, "value"] = totals[use_sum]
    return out


def _evaluate_elsewhere(run_map, judged: Qrels, measures) -> Iterable[pd.DataFrame]:
    import ir_measures

    qrels_frame = judged.to_frame()
    evaluator = ir_measures.evaluator(
        measures,
        _dict_of_dicts(
            qrels_frame["query_id"].to_numpy(object),
            qrels_frame["doc_id"].to_numpy(object),
            qrels_frame["relevance"].to_numpy(),
        ),
    )
    for name, run in run_map.items():
        qids, dids, scores = run_columns(run)
        rows = [
            (name, m.query_id, repr(m.measure), float(m.value))
            for m in evaluator.iter_calc(_dict_of_dicts(qids, dids, scores))
        ]
        yield pd.DataFrame(rows, columns=["run", "query_id", "measure", "value"])


def _dict_of_dicts(qids: np.ndarray, dids: np.ndarray, values: np.ndarray) -> dict[str, dict[str, Any]]:
    """``{query_id: {doc_id: value}}``, the form ir_measures passes to its providers unchanged (a
    DataFrame is converted row by row, about four times slower); built with one sort, a dict per topic."""
    if len(qids) == 0:
        return {}
    codes, topics = pd.factorize(qids)
    order = np.argsort(codes, kind="stable")
    cuts = np.flatnonzero(np.diff(codes[order])) + 1
    starts = [0] + cuts.tolist()
    ends = cuts.tolist() + [len(order)]
    docs, vals = dids[order].tolist(), values[order].tolist()
    first = codes[order][starts].tolist()
    return {
        topics[c]: dict(zip(docs[a:b], vals[a:b], strict=True)) for c, a, b in zip(first, starts, ends, strict=True)
    }
