"""The bootstrapped nDCG distribution itself: replicates and summaries as DataFrames, and intervals for
``pt.Experiment`` tables.

* :func:`bootstrap_ndcg` — the b replicates of every (run, query) and a summary table (most likely
  value, mean, median, percentiles, naive lower and upper bounds).
* :func:`add_bootstrap_intervals` — adds percentile columns (``p5``/``p95`` by default) for every
  ``BootNDCG`` measure of a ``pt.Experiment`` result table, per-query or aggregate.

The measure definition (formula, priors, conventions, random numbers) is
:class:`ir_incomplete.measures.ndcg.BootstrappedNDCG`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ir_incomplete._lazy import pandas as pd
from ir_incomplete.data import Qrels, rank_runs
from ir_incomplete.kernels import ndcg as kernels
from ir_incomplete.measures.ndcg import BootNDCG, BootstrappedNDCG, canonical_stat, summarize

__all__ = ["BootstrapResult", "bootstrap_ndcg", "add_bootstrap_intervals"]


class BootstrapResult(NamedTuple):
    """What :func:`bootstrap_ndcg` returns.

    ``replicates``: DataFrame indexed by ``(run, query_id)`` with one column per replicate
    (``0 .. b-1``). ``summary``: one row per (run, query_id) with ``mode`` (the most likely value, the
    default point estimate), ``mean``, ``median``, one ``pNN`` column per requested percentile,
    ``naive_lower`` (``nDCG@k``) and ``naive_upper`` (``NDCGUpper@k``). ``measure``: the
    ``BootNDCG`` object whose settings produced them (its string names the configuration).
    """

    replicates: pd.DataFrame
    summary: pd.DataFrame
    measure: BootstrappedNDCG


def _percentile_names(percentiles: Sequence[float]) -> list[str]:
    names = []
    for q in percentiles:
        name = canonical_stat(f"p{float(q)!r}") if isinstance(q, (int, float)) and not isinstance(q, bool) else None
        if name is None:
            raise ValueError(f"percentiles: {q!r} is not a number between 0 and 100")
        names.append(name)
    return names


def bootstrap_ndcg(
    run,
    qrels,
    k: int = 10,
    prior: str = "pool+run",
    b: int = 1000,
    seed: int | None = 42,
    gain: str = "linear",
    order: str | None = None,
    pool_scope: str | None = None,
    compat: str | None = None,
    percentiles: Sequence[float] = (5, 95),
    negative: str = "pooled_unjudged",
    score_precision: str = "float32",
) -> BootstrapResult:
    """Bootstrapped nDCG@k replicates and their summary for one or many runs.

    Parameters
    ----------
    run
        One run (DataFrame ``query_id/doc_id/score`` or ``qid/docno/score``, dict of dicts, iterable of
        ``ScoredDoc``, TREC run file) or many (``{name: run}``, a DataFrame with a ``run`` column, a
        directory or list of run files); a single run is named ``"run"``.
    qrels
        Any qrels form (DataFrame, dict of dicts, ``Qrel`` iterable, TREC file, ``Qrels``).
    k, prior, b, seed, gain, order, pool_scope, compat
        The parameters of ``BootNDCG`` (see :class:`~ir_incomplete.measures.ndcg.BootstrappedNDCG`):
        ``order``/``pool_scope`` ``None`` mean their default (rank/topic; docid/collection under
        ``compat="ecir23"``). ``seed=None`` draws fresh entropy: results are then not reproducible.
    percentiles
        Percentiles (0–100) reported as ``pNN`` columns of the summary (linear interpolation).
    negative, score_precision
        As in :func:`ir_incomplete.evaluate`.

    Returns
    -------
    :class:`BootstrapResult` ``(replicates, summary, measure)``. Every query of the qrels is reported
    for every run; a query that a run does not answer has b replicates of 0, like ``ir_measures``.
    Replicates of a (run, query) do not depend on the other runs or queries of the call.
    """
    from ir_incomplete.api import as_run_mapping

    params: dict[str, Any] = {"prior": prior, "b": b, "seed": seed, "gain": gain, "compat": compat, "cutoff": k}
    if order is not None:
        params["order"] = order
    if pool_scope is not None:
        params["pool_scope"] = pool_scope
    measure = BootNDCG(**params)
    names_pct = _percentile_names(percentiles)
    run_map = as_run_mapping(run)
    judged = Qrels.from_any(qrels, negative=negative)
    ranked = rank_runs(run_map, judged, score_precision)
    setup = measure.setup(ranked, judged)
    reps = measure.replicates(ranked, judged, setup)
    stats = summarize(reps, percentiles=[float(n[1:]) for n in names_pct])
    stats["naive_lower"] = kernels.ndcg(setup["codes"], setup["idcg"], setup["gains"])
    stats["naive_upper"] = measure._upper(
        setup["codes"], setup["unjudged"], setup["full_reservoir"], setup["gains"], setup["idcg"]
    )

    names = list(run_map)
    n_runs, n_topics = len(names), judged.n_topics
    slot = ranked.run_of_row * n_topics + ranked.topic_of_row
    grid = np.zeros((n_runs * n_topics, measure.get("b")), dtype=np.float64)
    grid[slot] = reps
    index = pd.MultiIndex.from_arrays(
        [np.repeat(np.array(names, dtype=object), n_topics), np.tile(judged.topic_ids, n_runs)],
        names=["run", "query_id"],
    )
    replicates = pd.DataFrame(grid, index=index, columns=pd.RangeIndex(grid.shape[1], name="replicate"))
    columns: dict[str, Any] = {"run": index.get_level_values(0), "query_id": index.get_level_values(1)}
    for name in ["mode", "mean", "median", *names_pct, "naive_lower", "naive_upper"]:
        values = np.zeros(n_runs * n_topics, dtype=np.float64)
        values[slot] = stats[name]
        columns[name] = values
    summary = pd.DataFrame(columns)
    return BootstrapResult(replicates=replicates, summary=summary, measure=measure)


# ---------------------------------------------------------------------------------------------------
# pt.Experiment tables
# ---------------------------------------------------------------------------------------------------
def _as_boot(label) -> BootstrappedNDCG | None:
    from ir_incomplete.grammar import parse

    if isinstance(label, BootstrappedNDCG):
        return label
    if not isinstance(label, str):
        return None
    try:
        measure = parse(label)
    except Exception:  # any column that is not a measure string (name, mrt, "AP +", ...)
        return None
    return measure if isinstance(measure, BootstrappedNDCG) else None


def _system_results(systems, names: list[str], topics) -> dict[str, Any]:
    if isinstance(systems, dict):
        missing = [n for n in names if n not in systems]
        if missing:
            raise ValueError(f"systems has no results for {missing[0]!r} (table names: {names})")
        items = [(n, systems[n]) for n in names]
    else:
        systems = list(systems)
        if len(systems) != len(names):
            raise ValueError(
                f"systems: got {len(systems)} systems for {len(names)} table names {names}; "
                f"pass them in the order given to pt.Experiment, or as {{name: results}}"
            )
        items = list(zip(names, systems, strict=True))
    out = {}
    for name, system in items:
        if not isinstance(system, (pd.DataFrame, dict, str)) and hasattr(system, "transform"):
            if topics is None:
                raise ValueError(
                    f"system {name!r} is a transformer: pass topics= to run it, or pass its results DataFrame instead"
                )
            system = system.transform(topics)
        out[name] = system
    return out


def add_bootstrap_intervals(
    table: pd.DataFrame,
    systems,
    qrels,
    topics=None,
    percentiles: Sequence[float] = (5, 95),
    negative: str = "pooled_unjudged",
    score_precision: str = "float32",
) -> pd.DataFrame:
    """A copy of a ``pt.Experiment`` table with bootstrap percentile columns for its ``BootNDCG`` measures.

    ``table`` is what ``pt.Experiment(..., eval_metrics=[..., "BootNDCG@10"])`` returned:

    * aggregate (``name`` plus one column per measure): after each ``BootNDCG`` column ``c`` come
      ``"c p5"`` and ``"c p95"``: percentiles of the bootstrap distribution of the *mean over queries*
      (replicate r's mean over the queries the system answered, the queries ``pt.Experiment`` averages);
    * per query (``perquery=True``: ``name, qid, measure, value``): columns ``p5`` and ``p95`` hold each
      query's percentiles on the ``BootNDCG`` rows (NaN on the rows of other measures).

    ``systems``: the retrieved results per system, ``{name: results DataFrame}`` or a list in the order
    given to ``pt.Experiment`` (transformers are run on ``topics``); ``qrels`` as given to it. Uses the
    measure's own seed and settings, so the replicates are those behind the table's values.
    """
    if not isinstance(table, pd.DataFrame) or "name" not in table.columns:
        raise ValueError("table must be a pt.Experiment result DataFrame with a 'name' column")
    pct = _percentile_names(percentiles)
    per_query = {"qid", "measure", "value"} <= set(table.columns)
    if per_query:
        labels = list(dict.fromkeys(table["measure"].tolist()))
    else:
        labels = [c for c in table.columns if c != "name"]
    boots = [(label, m) for label, m in ((label, _as_boot(label)) for label in labels) if m is not None]
    out = table.copy()
    if not boots:
        return out
    names = [str(n) for n in dict.fromkeys(table["name"].tolist())]
    judged = Qrels.from_any(qrels, negative=negative)
    ranked = rank_runs(_system_results(systems, names, topics), judged, score_precision)
    run_names = np.array(ranked.run_names, dtype=object)
    qids = judged.topic_ids
    if per_query:
        for name in pct:
            out[name] = np.nan
    for label, measure in boots:
        reps = measure.replicates(ranked, judged)
        if per_query:
            values = {name: kernels.percentile(reps, float(name[1:])) for name in pct}
            keys = pd.MultiIndex.from_arrays([run_names[ranked.run_of_row], qids[ranked.topic_of_row]])
            rows = np.flatnonzero((out["measure"] == label).to_numpy())
            where = keys.get_indexer(
                pd.MultiIndex.from_arrays(
                    [out["name"].iloc[rows].astype(str).to_numpy(), out["qid"].iloc[rows].astype(str).to_numpy()]
                )
            )
            found = where >= 0
            for name in pct:
                column = out[name].to_numpy(copy=True)
                column[rows[found]] = values[name][where[found]]
                out[name] = column
        else:
            means = np.full((len(names), reps.shape[1]), np.nan)
            for i in range(len(names)):
                mine = ranked.run_of_row == i
                if mine.any():
                    means[i] = reps[mine].mean(axis=0)
            by_name = dict(zip(names, range(len(names)), strict=True))
            position = list(out.columns).index(label) + 1
            for offset, name in enumerate(pct):
                bound = kernels.percentile(means, float(name[1:]))
                column = out["name"].astype(str).map(lambda n, bound=bound, by_name=by_name: bound[by_name[n]])
                out.insert(position + offset, f"{label} {name}", column.to_numpy(dtype=np.float64))
    return out
