"""The bootstrapped nDCG distribution itself: replicates and summaries as DataFrames, and intervals for
``pt.Experiment`` tables.

* :func:`bootstrap_ndcg` — the b replicates of every (run, query) and a summary table (most likely
  value, mean, median, percentiles, naive lower and upper bounds).
* :func:`add_bootstrap_intervals` — adds percentile columns (``p5``/``p95`` by default) for every
  ``BootNDCG`` measure of a ``pt.Experiment`` result table, per-query or aggregate.

The measure definition (formula, priors, conventions, random numbers) is
:class:`ir_incomplete.measures.ndcg.BootstrappedNDCG`.

**What the intervals are.** A bootstrap interval (``interval=``, the ``pNN`` columns, ``--interval``)
is the spread of the replicates: how much the value moves *if the prior's model of the unjudged
documents is right*. It is not an error bar for the value that complete judgments would give: on
TREC-COVID round 1 (the manual, docs/measured.rst) 90 % intervals of
``BootNDCG@10`` / ``BootAP@100`` contained the complete-judgment value for 12 % / 0 % of the runs with
the pool+run prior, and for 27 % / 16 % with ``prior=predicted``. For error bars that hold, judge a
probability sample and estimate from it: :func:`ir_incomplete.judging.sample` and
:func:`ir_incomplete.estimate` (``ir_incomplete sample`` / ``ir_incomplete estimate``; docs/intervals.rst).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ir_incomplete.data import Qrels, rank_runs
from ir_incomplete.kernels import ndcg as kernels
from ir_incomplete.measures.ndcg import MAX_REPLICATE_CELLS, BootNDCG, BootstrappedNDCG, canonical_stat, statistic

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = [
    "BootstrapResult",
    "bootstrap_ndcg",
    "bootstrap_measure",
    "add_bootstrap_intervals",
    "is_bootstrapped",
    "interval_percentiles",
    "interval_or_percentiles",
    "interval_or_alpha",
    "replicate_intervals",
    "value_interval",
]


def is_bootstrapped(measure) -> bool:
    """True for the measures whose values summarise bootstrap replicates (``BootNDCG``, ``BootAP``, …)."""
    from ir_incomplete.measures.bootstrap import BootstrapMeasure

    return isinstance(measure, (BootstrappedNDCG, BootstrapMeasure))


def interval_percentiles(interval: float) -> tuple[float, float]:
    """The percentiles ``(50·(1 − interval), 100 − 50·(1 − interval))`` of a central ``interval``
    (0.9 → 5 and 95; rounded to 10 decimals so that 0.9 gives exactly 5); ``ValueError`` unless
    0 < interval < 1."""
    if isinstance(interval, bool) or not isinstance(interval, (int, float, np.integer, np.floating)):
        raise ValueError(f"interval={interval!r} must be a number between 0 and 1 (e.g. 0.9 for a 90% interval)")
    if not 0.0 < float(interval) < 1.0:
        raise ValueError(f"interval={interval!r} must be strictly between 0 and 1 (e.g. 0.9 for a 90% interval)")
    tail = round(50.0 * (1.0 - float(interval)), 10)  # 0.9 gives 5.0, not 4.999999999999999
    return tail, 100.0 - tail


#: percentiles of an interval when neither ``interval=`` nor ``percentiles=`` is given (a 90 % interval)
DEFAULT_PERCENTILES = (5.0, 95.0)


def interval_or_percentiles(interval: float | None, percentiles: Sequence[float] | None) -> Sequence[float]:
    """The percentiles to report, from ``interval=`` (0.9 → 5, 95) or its alias ``percentiles=`` (any
    percentiles 0–100); neither: :data:`DEFAULT_PERCENTILES`. Both given: they must name the same two
    percentiles, else a ``ValueError`` naming both."""
    if interval is None:
        return DEFAULT_PERCENTILES if percentiles is None else percentiles
    pair = interval_percentiles(interval)
    if percentiles is not None:
        given = [float(q) for q in percentiles] if _numbers(percentiles) else None
        if given is None or len(given) != 2 or not np.allclose(given, pair, rtol=0.0, atol=1e-9):
            raise ValueError(
                f"interval={interval!r} and percentiles={tuple(percentiles)!r} disagree: interval={interval!r} "
                f"means percentiles=({pair[0]:g}, {pair[1]:g}); give only one of them"
            )
    return pair


def interval_or_alpha(interval: float | None, alpha: float | None, default_alpha: float = 0.1) -> float:
    """The error level ``alpha`` of a ``1 − alpha`` interval, from ``interval=`` (0.9 → alpha 0.1,
    exactly) or its alias ``alpha=``; neither: ``default_alpha``. Both given: ``alpha`` must be
    ``1 − interval`` (to 1e-9), else a ``ValueError`` naming both."""
    if interval is None:
        return default_alpha if alpha is None else alpha
    interval_percentiles(interval)  # 0 < interval < 1, else the same message as everywhere
    implied = round(1.0 - float(interval), 12)  # 0.9 gives 0.1, not 0.09999999999999998
    if alpha is not None and not (
        isinstance(alpha, (int, float, np.integer, np.floating))
        and not isinstance(alpha, bool)
        and abs(float(alpha) - implied) <= 1e-9
    ):
        raise ValueError(
            f"interval={interval!r} and alpha={alpha!r} disagree: interval={interval!r} means alpha={implied:g} "
            f"(a 1 - alpha interval); give only one of them"
        )
    return implied


def _numbers(values) -> bool:
    try:
        return all(isinstance(q, (int, float, np.integer, np.floating)) and not isinstance(q, bool) for q in values)
    except TypeError:
        return False


def value_interval(value, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """``(min(lo, value), max(hi, value))`` elementwise: a central percentile interval ``[lo, hi]`` of
    replicates (or of replicate means) extended to the printed ``value`` where the value lies outside it,
    so that an interval always contains its own value. It then holds at least the interval's share of
    the replicates. NaN bounds (no interval) stay NaN.

    The value of a bootstrapped measure is a statistic (``stat``) of each query's replicates, averaged
    over the queries; the interval describes the replicates themselves (per query) or their means over
    the queries (aggregated). The two summarise different things: the most likely value (``stat=mode``)
    or a percentile stat (``stat=p95``) of a query need not lie between the query's central percentiles,
    and the mean of the queries' most likely values need not lie between the percentiles of the
    replicate means (``BootNDCG@10`` of TREC-COVID's ``UIowaS_Run3``: 0.5397 against [0.5409, 0.5562]
    at 90 %, printed [0.5397, 0.5562]). A value at an end of its interval says so."""
    value = np.asarray(value, dtype=np.float64)
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    return np.where(np.isnan(lo), lo, np.fmin(lo, value)), np.where(np.isnan(hi), hi, np.fmax(hi, value))


def replicate_intervals(
    measure, ranked, qrels: Qrels, predictions: Any, interval: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(values, lo, hi, sums)`` of a bootstrapped ``measure`` in one pass over its replicates:
    per ranking the value (the measure's ``stat``) and its interval (:func:`value_interval`: the lower
    and upper percentiles of the replicates for a central ``interval``, extended to the value where it
    lies outside them), and per run (``ranked.run_of_row`` index) the sum over its rankings of each
    replicate, ``[len(ranked.run_names) × b]`` (divided by the number of queries: the replicate means
    whose percentiles, extended to the run's value, are the run's aggregated interval)."""
    q_lo, q_hi = interval_percentiles(interval)
    stat = measure.get("stat")
    setup = measure.setup(ranked, qrels, predictions)
    values = np.zeros(ranked.n_rows, dtype=np.float64)
    lo = np.zeros(ranked.n_rows, dtype=np.float64)
    hi = np.zeros(ranked.n_rows, dtype=np.float64)
    sums = np.zeros((len(ranked.run_names), measure.get("b")), dtype=np.float64)
    for rows, block in measure.replicate_blocks(ranked, qrels, setup):
        ordered = np.sort(block, axis=1)
        values[rows] = statistic(block if stat == "mean" else ordered, stat, presorted=stat != "mean")
        lo[rows], hi[rows] = value_interval(
            values[rows],
            kernels.percentile(ordered, q_lo, presorted=True),
            kernels.percentile(ordered, q_hi, presorted=True),
        )
        np.add.at(sums, ranked.run_of_row[rows], block)
    return values, lo, hi, sums


class BootstrapResult(NamedTuple):
    """What :func:`bootstrap_ndcg` returns.

    ``replicates``: DataFrame indexed by ``(run, query_id)`` with one column per replicate
    (``0 .. b-1``), or ``None`` with ``keep_replicates=False``.
    ``summary``: one row per (run, query_id) with ``mode`` (the most likely value, the
    default point estimate), ``mean``, ``median``, one ``pNN`` column per requested percentile,
    ``naive_lower`` (``nDCG@k``) and ``naive_upper`` (``NDCGUpper@k``). ``measure``: the
    ``BootNDCG`` object whose settings produced them (its string names the configuration).
    """

    replicates: pd.DataFrame | None
    summary: pd.DataFrame
    measure: Any


def _percentile_names(percentiles: Sequence[float]) -> list[str]:
    names = []
    for q in percentiles:
        name = canonical_stat(f"p{float(q)!r}") if isinstance(q, (int, float)) and not isinstance(q, bool) else None
        if name is None:
            raise ValueError(f"percentiles: {q!r} is not a number between 0 and 100")
        names.append(name)
    return names


def bootstrap_ndcg(
    run: Any,
    qrels: Any,
    k: int = 10,
    prior: str = "pool+run",
    b: int = 1000,
    seed: int | None = 42,
    gain: str = "linear",
    order: str | None = None,
    pool_scope: str | None = None,
    compat: str | None = None,
    percentiles: Sequence[float] | None = None,
    negative: str = "pooled_unjudged",
    score_precision: str = "float32",
    keep_replicates: bool = True,
    predictions: Any = None,
    min_count: int = 10,
    alpha: float = 1.0,
    *,
    interval: float | None = None,
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
        ``b`` is at most :data:`~ir_incomplete.measures.ndcg.MAX_B` (10 000 000).
    percentiles, interval
        The central ``interval`` (e.g. ``0.9``) reported as two ``pNN`` columns of the summary (``p5``,
        ``p95``; linear interpolation), as ``interval=`` of :func:`ir_incomplete.evaluate`; or, as its
        alias, any ``percentiles`` (0–100). Neither: ``p5`` and ``p95``. Both: they must agree
        (``ValueError`` otherwise). ``alpha`` here is the calibration's smoothing, not an error level.
        The interval is the replicates' spread under the prior, not an error bar for the
        complete-judgment value (see the module docstring: 12 % / 0 % coverage on TREC-COVID).
    negative, score_precision
        As in :func:`ir_incomplete.evaluate`.
    keep_replicates
        Return the replicates table. It holds runs × queries × b values and is refused (``ValueError``)
        above :data:`~ir_incomplete.measures.ndcg.MAX_REPLICATE_CELLS` (2^25 values, 256 MiB); with
        ``keep_replicates=False`` ``replicates`` is ``None`` and the summary is computed a few rankings
        at a time, in memory independent of b.
    predictions, min_count, alpha
        Predicted grades for ``prior="predicted"`` and the calibration's parameters
        (:mod:`ir_incomplete.predictions`).

    Returns
    -------
    :class:`BootstrapResult` ``(replicates, summary, measure)``. Every query of the qrels is reported
    for every run; a query that a run does not answer has b replicates of 0, like ``ir_measures``.
    Replicates of a (run, query) do not depend on the other runs or queries of the call.
    """
    params: dict[str, Any] = {"prior": prior, "b": b, "seed": seed, "gain": gain, "compat": compat, "cutoff": k}
    params.update(min_count=min_count, alpha=alpha)
    if order is not None:
        params["order"] = order
    if pool_scope is not None:
        params["pool_scope"] = pool_scope
    return bootstrap_measure(
        run,
        qrels,
        BootNDCG(**params),
        predictions=predictions,
        percentiles=percentiles,
        negative=negative,
        score_precision=score_precision,
        keep_replicates=keep_replicates,
        interval=interval,
    )


def bootstrap_measure(
    run: Any,
    qrels: Any,
    measure: Any,
    predictions: Any = None,
    percentiles: Sequence[float] | None = None,
    negative: str = "pooled_unjudged",
    score_precision: str = "float32",
    keep_replicates: bool = True,
    *,
    interval: float | None = None,
) -> BootstrapResult:
    """Replicates and their summary for any bootstrapped measure (``"BootAP(prior=predicted)@100"``,
    ``BootNDCG``, ``BootQ``, …; a string or a measure object), for one or many runs.

    ``run``, ``qrels``, ``interval`` (or its alias ``percentiles``), ``negative``, ``score_precision`` and
    ``keep_replicates`` as in :func:`bootstrap_ndcg`; ``predictions`` the predicted grades that
    ``prior=predicted`` needs (:mod:`ir_incomplete.predictions`). The summary has ``mode``, ``mean``,
    ``median``, the ``pNN`` columns, and ``naive_lower``/``naive_upper`` (``BootNDCG``) or ``plain`` (the
    measure on the human judgments alone; the other bootstrapped measures).

    The ``pNN`` columns are the replicates' spread under the measure's prior, not an error bar for the
    complete-judgment value (see the module docstring: on TREC-COVID round 1, 90 % intervals of
    ``BootNDCG@10`` / ``BootAP@100`` covered it for 12 % / 0 % of the runs); for error bars use
    :func:`ir_incomplete.judging.sample` and :func:`ir_incomplete.estimate`.
    """
    from ir_incomplete.data.runs import as_run_mapping
    from ir_incomplete.grammar import parse
    from ir_incomplete.predictions import Predictions

    measure = parse(measure) if isinstance(measure, str) else measure
    if not is_bootstrapped(measure):
        raise ValueError(f"{measure!r} is not a bootstrapped measure (BootNDCG, BootAP, BootP, BootRBP, BootQ)")
    names_pct = _percentile_names(interval_or_percentiles(interval, percentiles))
    run_map = as_run_mapping(run)
    judged = Qrels.from_any(qrels, negative=negative)
    pred = None if predictions is None else Predictions.from_any(predictions, judged)
    names = list(run_map)
    n_runs, n_topics, b = len(names), judged.n_topics, measure.get("b")
    if keep_replicates and n_runs * n_topics * b > MAX_REPLICATE_CELLS:
        raise ValueError(
            f"bootstrap: {n_runs} runs × {n_topics} queries × b={b} replicates is more than "
            f"{MAX_REPLICATE_CELLS} values to return; pass keep_replicates=False for the summary only, "
            f"or use a smaller b"
        )
    ranked = rank_runs(run_map, judged, score_precision)
    setup = measure.setup(ranked, judged, pred)
    slot = ranked.run_of_row * n_topics + ranked.topic_of_row
    index = pd.MultiIndex.from_arrays(
        [np.repeat(np.array(names, dtype=object), n_topics), np.tile(judged.topic_ids, n_runs)],
        names=["run", "query_id"],
    )
    replicates = None
    if keep_replicates:
        grid = np.zeros((n_runs * n_topics, b), dtype=np.float64)
        grid[slot] = measure.replicates(ranked, judged, setup)
        replicates = pd.DataFrame(grid, index=index, columns=pd.RangeIndex(b, name="replicate"))
    stats = measure.summaries(ranked, judged, [float(n[1:]) for n in names_pct], setup)
    columns: dict[str, Any] = {"run": index.get_level_values(0), "query_id": index.get_level_values(1)}
    extra = ["naive_lower", "naive_upper"] if isinstance(measure, BootstrappedNDCG) else ["plain"]
    for name in ["mode", "mean", "median", *names_pct, *extra]:
        values = np.zeros(n_runs * n_topics, dtype=np.float64)
        values[slot] = stats[name]
        columns[name] = values
    summary = pd.DataFrame(columns)
    return BootstrapResult(replicates=replicates, summary=summary, measure=measure)


# ---------------------------------------------------------------------------------------------------
# pt.Experiment tables
# ---------------------------------------------------------------------------------------------------
def _as_boot(label) -> Any:
    from ir_incomplete.grammar import parse

    if is_bootstrapped(label):
        return label
    if not isinstance(label, str):
        return None
    try:
        measure = parse(label)
    except Exception:  # any column that is not a measure string (name, mrt, "AP +", ...)
        return None
    return measure if is_bootstrapped(measure) else None


def _pair_systems(systems, table_names: list[str], per_query: bool, names) -> list[tuple[str, Any]]:
    """``(table name, results)`` for every name of the table (see :func:`add_bootstrap_intervals`)."""
    if isinstance(systems, dict):
        if names is not None:
            raise ValueError("names= pairs a list of systems with their names; systems is already a dict")
        by_name = {}
        for key, value in systems.items():
            if str(key) in by_name:
                raise ValueError(f"systems: two keys read as the name {str(key)!r}")
            by_name[str(key)] = value
        missing = [n for n in table_names if n not in by_name]
        if missing:
            raise ValueError(f"systems has no results for {missing[0]!r} (table names: {table_names})")
        return [(n, by_name[n]) for n in table_names]
    if isinstance(systems, (str, pd.DataFrame)) or not isinstance(systems, Iterable):
        raise TypeError(
            f"systems must be {{name: results}} or a list of results/transformers, not {type(systems).__name__}"
        )
    systems = list(systems)
    if names is not None:
        if isinstance(names, str):
            raise TypeError("names must be a list of system names, not a string")
        given = [str(n) for n in names]
        if len(given) != len(systems):
            raise ValueError(f"names: got {len(given)} names for {len(systems)} systems")
        if len(set(given)) != len(given):
            raise ValueError(f"names: {given} has duplicates")
        missing = [n for n in table_names if n not in given]
        if missing:
            raise ValueError(f"names: the table's system {missing[0]!r} is not in names={given}")
        pairs = dict(zip(given, systems, strict=True))
        return [(n, pairs[n]) for n in table_names]
    if per_query and len(table_names) > 1:
        raise ValueError(
            "systems is a list but the table is per query: pt.Experiment sorts per-query rows by name, so the "
            "order in which the systems were given cannot be read from it; pass names=[...] (the names given to "
            "pt.Experiment) or systems as {name: results}"
        )
    if len(systems) != len(table_names):
        raise ValueError(
            f"systems: got {len(systems)} systems for {len(table_names)} table names {table_names}; "
            f"pass them in the order given to pt.Experiment, or as {{name: results}}"
        )
    return list(zip(table_names, systems, strict=True))


def _system_results(pairs: list[tuple[str, Any]], topics) -> dict[str, Any]:
    out = {}
    for name, system in pairs:
        if not isinstance(system, (pd.DataFrame, dict, str)) and hasattr(system, "transform"):
            if topics is None:
                raise ValueError(
                    f"system {name!r} is a transformer: pass topics= to run it, or pass its results DataFrame instead"
                )
            system = system.transform(topics)
        out[name] = system
    return out


def _check_value(label: str, name: str, where: str, table_value, ours: float) -> None:
    """Refuse intervals for results that do not give the table's value (wrong pairing or other inputs)."""
    if table_value is None or not np.isfinite(table_value):
        return
    close = abs(float(table_value) - float(ours)) <= 1e-9
    # pt.Experiment(round=d) rounds the table to d decimals
    if not close and not any(abs(float(np.round(ours, d)) - float(table_value)) <= 1e-12 for d in range(16)):
        raise ValueError(
            f"{label} of system {name!r}{where} is {float(table_value)!r} in the table but {float(ours)!r} for the "
            f"results paired with it: the systems (or qrels, topics) are not those of the table; pass "
            f"systems as {{name: results}} or names= as given to pt.Experiment"
        )


def add_bootstrap_intervals(
    table: pd.DataFrame,
    systems: dict[str, Any] | Iterable[Any],
    qrels: Any,
    topics: pd.DataFrame | None = None,
    percentiles: Sequence[float] | None = None,
    negative: str = "pooled_unjudged",
    score_precision: str = "float32",
    names: Sequence[str] | None = None,
    *,
    interval: float | None = None,
) -> pd.DataFrame:
    """A copy of a ``pt.Experiment`` table with bootstrap percentile columns for its bootstrapped measures
    (``BootNDCG``, ``BootAP``, ``BootP``, ``BootRBP``, ``BootQ``; not ``prior=predicted``, which needs
    predictions that ``pt.Experiment`` cannot pass: use :func:`ir_incomplete.evaluate` with ``interval=``).

    ``table`` is what ``pt.Experiment(..., eval_metrics=[..., "BootNDCG@10"])`` returned:

    * aggregate (``name`` plus one column per measure): after each ``BootNDCG`` column ``c`` come
      ``"c p5"`` and ``"c p95"``. With ``M_r`` = the mean over the evaluated queries of replicate ``r``
      (the queries ``pt.Experiment`` averages: those of the qrels, restricted to the qids of ``topics``
      when given; a query the system does not answer counts with every replicate 0), they are
      percentiles of ``M_1 .. M_b``: the bootstrap distribution of the system's mean. The column ``c`` itself is what
      ``pt.Experiment`` reports, the mean over queries of each query's statistic (``stat``, by default
      the per-query most likely value) — a different quantity, which can lie outside the percentiles
      of ``M_1 .. M_b``; the lowest and the highest percentile columns are therefore extended to the
      table's value where it lies outside them (:func:`value_interval`), so that
      ``"c p5" <= c <= "c p95"`` always holds (the other percentile columns are the plain percentiles).
    * per query (``perquery=True``: ``name, qid, measure, value``): columns ``p5`` and ``p95`` hold each
      query's percentiles of its b replicates on the ``BootNDCG`` rows (NaN on the rows of other
      measures), the lowest and highest extended to the row's value in the same way; the row's value is
      a statistic of the same replicates.

    ``systems``: the retrieved results of each system, as ``{name: results}``, or as a list in the order
    given to ``pt.Experiment``. A list is paired with ``names`` when given (the ``names=`` given to
    ``pt.Experiment``); without ``names`` it is paired with the names in the order of an aggregate table
    as ``pt.Experiment`` returned it, and refused for a per-query table of several systems (those rows
    are sorted by name, so the given order is lost). Results are DataFrames (or any run form);
    transformers (``pt.Transformer``) are run on ``topics``, which they then need. ``qrels`` as given to
    ``pt.Experiment``. The measure's own seed and settings are used, so the replicates are those behind
    the table's values; as a check that the pairing and inputs are right, each system's recomputed value
    must equal the table's to 1e-9 (or rounded as with ``pt.Experiment(round=...)``), otherwise a
    ``ValueError`` names the system (not checked with ``seed=none``, whose values are not reproducible).

    ``interval`` (e.g. ``0.9``, as in :func:`ir_incomplete.evaluate`) chooses the two percentile columns
    (``p5``/``p95`` for 0.9, ``p2.5``/``p97.5`` for 0.95); ``percentiles`` is its alias for any
    percentiles (0–100); neither: ``p5``/``p95``; both: they must agree (``ValueError`` otherwise).
    These columns are the spread of the replicates under the measure's prior, not an error bar for the
    complete-judgment value (module docstring: 12 % / 0 % coverage of 90 % intervals of ``BootNDCG@10`` /
    ``BootAP@100`` on TREC-COVID round 1); for error bars use :func:`ir_incomplete.judging.sample` and
    :func:`ir_incomplete.estimate`.

    Memory does not grow with b beyond one system's ``M_1 .. M_b`` (aggregate tables). A table without
    any ``BootNDCG`` column (aggregate) or ``measure`` value (per query) is a ``ValueError`` that lists
    what the table holds.
    """
    if not isinstance(table, pd.DataFrame) or "name" not in table.columns:
        raise ValueError("table must be a pt.Experiment result DataFrame with a 'name' column")
    pct = _percentile_names(interval_or_percentiles(interval, percentiles))
    per_query = {"qid", "measure", "value"} <= set(table.columns)
    if per_query:
        labels = list(dict.fromkeys(table["measure"].tolist()))
    else:
        labels = [c for c in table.columns if c != "name"]
    boots = [(label, m) for label, m in ((label, _as_boot(label)) for label in labels) if m is not None]
    if not boots:
        shown = ", ".join(repr(str(label)) for label in labels[:12]) + (", ..." if len(labels) > 12 else "")
        where = "per-query table's 'measure' values" if per_query else "aggregate table's measure columns"
        raise ValueError(
            f"add_bootstrap_intervals: no BootNDCG measure to add intervals to; the {where} are [{shown}]. "
            "It looks for measure names that parse as BootNDCG (e.g. 'BootNDCG@10', as pt.Experiment names "
            "the measure when eval_metrics holds BootNDCG@10)"
        )
    out = table.copy()
    table_names = [str(n) for n in dict.fromkeys(table["name"].tolist())]
    pairs = _pair_systems(systems, table_names, per_query, names)
    judged = Qrels.from_any(qrels, negative=negative)
    ranked = rank_runs(_system_results(pairs, topics), judged, score_precision)
    run_names = np.array(ranked.run_names, dtype=object)
    qids = judged.topic_ids
    # the queries pt.Experiment evaluates: those of the qrels (filtered to the topics when given); a query
    # that a system does not answer counts with value 0 (every replicate 0), as in ir_measures
    if isinstance(topics, pd.DataFrame) and "qid" in topics.columns:
        evaluated = np.isin(qids, topics["qid"].astype(str).to_numpy())
    else:
        evaluated = np.ones(len(qids), dtype=bool)
    if per_query:
        for name in pct:
            out[name] = np.nan
    # the lowest and the highest percentile bound the interval that is extended to the value
    pct_low = min(pct, key=lambda n: float(n[1:]))
    pct_high = max(pct, key=lambda n: float(n[1:]))
    for label, measure in boots:
        setup = measure.setup(ranked, judged)
        stat = measure.get("stat")
        check = measure.get("seed") is not None
        if per_query:
            values = {name: np.zeros(ranked.n_rows + 1) for name in [*pct, stat]}  # last: unanswered query
            for rows, block in measure.replicate_blocks(ranked, judged, setup):
                ordered = np.sort(block, axis=1)
                for name in values:
                    values[name][rows] = statistic(block if name == "mean" else ordered, name, presorted=True)
            keys = pd.MultiIndex.from_arrays([run_names[ranked.run_of_row], qids[ranked.topic_of_row]])
            rows = np.flatnonzero((out["measure"] == label).to_numpy())
            table_names_rows = out["name"].iloc[rows].astype(str).to_numpy()
            table_qids = out["qid"].iloc[rows].astype(str).to_numpy()
            where = keys.get_indexer(pd.MultiIndex.from_arrays([table_names_rows, table_qids]))
            unanswered = (where < 0) & np.isin(table_qids, qids) & np.isin(table_names_rows, run_names)
            where[unanswered] = ranked.n_rows
            found = where >= 0
            if check:
                table_values = pd.to_numeric(out["value"].iloc[rows], errors="coerce").to_numpy(dtype=np.float64)
                for i in np.flatnonzero(found):
                    _check_value(
                        label,
                        table_names_rows[i],
                        f" on query {table_qids[i]!r}",
                        table_values[i],
                        values[stat][where[i]],
                    )
            if len(pct) > 1:  # the interval's ends reach the row's value (value_interval)
                low, high = values[pct_low], values[pct_high]
                low[:], high[:] = value_interval(values[stat], low, high)
            for name in pct:
                column = out[name].to_numpy(dtype=np.float64, copy=True)
                column[rows[found]] = values[name][where[found]]
                out[name] = column
        else:
            bounds = {name: np.full(len(table_names), np.nan) for name in pct}
            table_values = {}
            for name, value in zip(out["name"].astype(str), out[label], strict=True):
                table_values.setdefault(name, value)
            n_queries = int(evaluated.sum())
            for run_no, name in enumerate(ranked.run_names):
                if not n_queries:
                    continue
                mine = np.flatnonzero((ranked.run_of_row == run_no) & evaluated[ranked.topic_of_row])
                total = np.zeros(measure.get("b"), dtype=np.float64)
                point = 0.0
                for _rows, block in measure.replicate_blocks(ranked, judged, setup, rows=mine):
                    total += block.sum(axis=0)
                    point += float(statistic(block, stat).sum())
                if check:
                    value = pd.to_numeric(pd.Series([table_values.get(name)]), errors="coerce").iloc[0]
                    _check_value(label, name, "", value, point / n_queries)
                means = total / n_queries
                at = table_names.index(name)
                for pname in pct:
                    bounds[pname][at] = kernels.percentile(means, float(pname[1:]))
                if len(pct) > 1:  # extended to the value shown in the table (value_interval)
                    in_table = float(pd.to_numeric(pd.Series([table_values.get(name)]), errors="coerce").iloc[0])
                    value_shown = in_table if np.isfinite(in_table) else point / n_queries
                    low, high = value_interval(value_shown, bounds[pct_low][at], bounds[pct_high][at])
                    bounds[pct_low][at], bounds[pct_high][at] = float(low), float(high)
            position = list(out.columns).index(label) + 1
            index_of = {n: j for j, n in enumerate(table_names)}
            which = np.array([index_of[n] for n in out["name"].astype(str)], dtype=np.intp)
            for offset, pname in enumerate(pct):
                out.insert(position + offset, f"{label} {pname}", bounds[pname][which])
    return out
