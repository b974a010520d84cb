"""``evaluate``: many runs × many measures in one vectorized call, as a tidy DataFrame."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ir_incomplete import _progress
from ir_incomplete.data.runs import (  # noqa: F401  (the run-mapping normalisation, in the data layer)
    _add_file,
    _add_path,
    _looks_like_single_dict_run,
    _reusable,
    _run_mapping,
    _run_name,
    _Runs,
    _split_run_column,
    _split_run_table,
    _split_runs,
    as_run_mapping,
)

if TYPE_CHECKING:
    import ir_measures
    import pandas as pd

    #: measures as :func:`evaluate` takes them: a measure or a string, or an iterable of them
    MeasureSpec = str | ir_measures.Measure | Iterable[str | ir_measures.Measure]
else:
    from ir_incomplete._lazy import pandas as pd
from ir_incomplete.data import PreparedRuns, Qrels, _prepare, _run_columns, read_trec_run, run_columns
from ir_incomplete.data.columns import _single_run
from ir_incomplete.incomplete_provider import as_incomplete, computable, design_estimates, is_design_based

__all__ = ["evaluate", "as_measures", "as_run_mapping", "extra_columns", "TOPIC_SETS"]

#: which queries ``evaluate`` reports and averages: every query of the qrels, or those the run answers
TOPIC_SETS = ("qrels", "run")

#: default ``chunk_rows`` of :func:`evaluate`: run rows converted and scored together
DEFAULT_CHUNK_ROWS = 2_000_000


def as_measures(measures) -> list[Any]:
    """A list of ``ir_measures.Measure`` from measure objects and/or strings in our grammar, each canonical
    measure once (``NumRel`` and ``NumRel(rel=1)`` are one measure: the first spelling is kept), in order.

    Strings go through :func:`ir_incomplete.grammar.parse`, objects through
    :func:`ir_incomplete.grammar.check_measure`: a measure that cannot be computed (a built-in missing a
    required parameter, such as ``SDCG@10`` without ``max_rel``) is a ``ValueError`` naming it.
    """
    import ir_measures

    from ir_incomplete.grammar import check_measure, parse

    if isinstance(measures, (str, ir_measures.Measure)):
        measures = [measures]
    out = []
    for m in measures:
        if isinstance(m, str):
            out.append(parse(m))
        elif isinstance(m, ir_measures.Measure):
            out.append(check_measure(m))  # e.g. ir_measures.SDCG@10 lacks max_rel: refused here, clearly
        else:
            raise ValueError(f"{m!r} is not a measure (give a Measure object or a string such as 'infAP(c=1.5)@10')")
    if not out:
        raise ValueError("no measures given")
    return list(dict.fromkeys(out))  # one of each canonical measure (NumRel = NumRel(rel=1)), in order


def evaluate(
    runs: Any,
    qrels: Any,
    measures: MeasureSpec,
    *,
    per_query: bool = True,
    negative: str = "pooled_unjudged",
    score_precision: str = "float32",
    topics: str = "qrels",
    chunk_rows: int | None = DEFAULT_CHUNK_ROWS,
    predictions: Any = None,
    interval: float | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Evaluate one or many runs with many measures, converting the qrels once.

    Parameters
    ----------
    runs
        ``{name: run}`` (each a DataFrame with ``query_id/doc_id/score`` or ``qid/docno/score``, a
        dict of dicts, an iterable of ``ScoredDoc`` or a TREC run path), a DataFrame with a ``run``
        column, a single run, a directory of run files or a list of run files; or
        :class:`ir_incomplete.data.PreparedRuns` (:func:`ir_incomplete.data.prepare_runs`): runs converted
        once, evaluated here against ``qrels`` at the cost of a grade look-up (robustness studies do this).
    qrels
        DataFrame (``query_id/doc_id/relevance`` or ``qid/docno/label``), dict of dicts, iterable of
        ``Qrel``, TREC qrels path, or a :class:`ir_incomplete.data.Qrels`.
    measures
        Measure objects and/or strings (``"infAP(c=1.5)@10"``). Design-based measures
        (``"StatAP(design='design.tsv')@100"``) are estimated by :func:`ir_incomplete.estimate` from
        the design they name, ``qrels`` as its judgments, all runs at once (they need every run the
        design was drawn from; ``topics="run"`` is refused for them), with control variate ``none``
        unless the measure names one: the values of ``estimate(..., control="none")``, not of
        ``estimate()``'s default (the fitted model). Their rows are the design's queries: also a query
        where no pair was sampled, which the qrels may not hold (estimated as estimate() does, 0 without
        a control variate), so that their means are estimate()'s. The built-in ``AP``, ``nDCG``, ``P``,
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
    topics
        ``"qrels"`` (default): every query of the qrels, a query the run does not answer gets the
        measure's default (0), as ``ir_measures`` and trec_eval ``-c``; ``"run"``: only the queries of
        the qrels that the run answers, as trec_eval without ``-c`` and NIST's ``sample_eval`` (its
        ``all`` line averages over these); a run that answers none of them is a ``ValueError``.
    chunk_rows
        Memory bound: runs are converted a group of whole runs at a time, each group holding at most this
        many run rows (retrieved documents) in all, or one run when a single run is larger; the measures
        score at most this many ranked documents at a time.
        Peak memory grows with this number, not with the number of runs; the results do not depend on
        it. Default 2,000,000 (about 0.2 GB of working memory); ``None``: all runs at once.
    predictions
        Predicted grades for the bootstrapped measures with ``prior=predicted`` (``BootAP``, ``BootNDCG``,
        …): a qrels-like DataFrame, dict of dicts or file (``query_id, doc_id, relevance``, optional
        ``p0, p1, …`` probability columns; :mod:`ir_incomplete.predictions`). Validated once; other
        measures ignore them, and so does a measure that names its own file
        (``"BootAP(prior=predicted,predictions='labels.tsv')@100"``), which reads that file.
    interval
        A central interval (e.g. ``0.9``) for every bootstrapped measure: columns ``lo`` and ``hi`` are
        added. Per query they are the percentiles ``50·(1−interval)`` and ``100 − 50·(1−interval)`` of the
        query's b replicates; aggregated (``per_query=False``) the same percentiles of the b replicate
        means over the averaged queries (as :func:`ir_incomplete.add_bootstrap_intervals`; with
        ``topics="qrels"`` an unanswered query counts with every replicate 0). Each interval is extended
        to its row's value where the value lies outside it, so ``lo <= value <= hi`` always holds: the
        value is the ``stat`` of each query's replicates (mean of these over the queries), which need not
        lie between those percentiles (:func:`ir_incomplete.bootstrap.value_interval`). That is the spread
        of the replicates under the prior, not an error bar for the complete-judgment value (90 %
        intervals of ``BootNDCG@10`` / ``BootAP@100`` contained it for 12 % / 0 % of the TREC-COVID
        round-1 runs; see :mod:`ir_incomplete.bootstrap`). The design-based measures (``StatAP``, …) get
        the design-based interval of each run mean that :func:`ir_incomplete.estimate` gives (every run
        estimated together), aggregated rows only (per query NaN): error bars for the value complete
        judgments of the design's universe would give. NaN for other measures.
    progress
        A ``tqdm`` progress bar on stderr, counting the (run, query, measure) scores computed (the
        bootstrapped measures move it as they go): ``None`` (default) shows it when stderr is a terminal
        and the call is still running after 2 s, ``True`` always, ``False`` never
        (:mod:`ir_incomplete._progress`). The values do not depend on it.

    Returns
    -------
    DataFrame with columns ``run, query_id, measure, value`` (``run, measure, value`` when
    ``per_query=False``), plus ``lo, hi`` with ``interval``. As in ``ir_measures``, every query of the
    qrels is reported; a query a run does not answer gets the measure's default (0). A design-based
    measure also reports the design's queries that the qrels do not hold (see ``measures``).

    Measures that report more than one number per query add columns after ``value``, one per field
    they declare in ``EXTRA_COLUMNS`` (see :mod:`ir_incomplete.measures.base`), NaN on the rows of the
    other measures: ``RBPResidual`` adds ``residual`` and ``upper`` (a query the run does not answer:
    value 0, residual 1, upper 1). With ``per_query=False`` they are aggregated like ``value``: the
    mean over the queries. Without such measures (and without ``interval``) the columns are exactly
    ``run, query_id, measure, value``.
    """
    measures = as_measures(measures)  # read once: a generator of measure strings is read here only
    result, bounds = _evaluate_with_intervals(
        runs, qrels, measures, negative, score_precision, topics, chunk_rows, predictions, interval, progress
    )
    if not per_query:
        result = _aggregate(result, measures)
        if interval is not None:
            result = _with_run_intervals(result, bounds)
    return result


def _with_run_intervals(summary: pd.DataFrame, bounds: dict[tuple[str, str], tuple[float, float]]) -> pd.DataFrame:
    """``summary`` (aggregated rows) with ``lo``/``hi`` from ``bounds`` (percentiles of the replicate
    means, per (run, measure)), each extended to the row's value where the value lies outside it
    (:func:`ir_incomplete.bootstrap.value_interval`); NaN for measures without an interval."""
    from ir_incomplete.bootstrap import value_interval

    keys = list(zip(summary["run"], summary["measure"], strict=True))
    lo = np.array([bounds.get(key, (np.nan, np.nan))[0] for key in keys], dtype=np.float64)
    hi = np.array([bounds.get(key, (np.nan, np.nan))[1] for key in keys], dtype=np.float64)
    summary["lo"], summary["hi"] = value_interval(summary["value"].to_numpy(dtype=np.float64), lo, hi)
    return summary


def _evaluate_with_intervals(
    runs: Any,
    qrels: Any,
    measures: Any,
    negative: str,
    score_precision: str,
    topics: str,
    chunk_rows: int | None,
    predictions: Any,
    interval: float | None,
    progress: bool | None = None,
) -> tuple[pd.DataFrame, dict[tuple[str, str], tuple[float, float]]]:
    """:func:`evaluate` per query (with ``lo``/``hi`` when ``interval`` is given) and the aggregated
    interval ``{(run, measure): (lo, hi)}`` of each bootstrapped measure, with a progress bar (see
    :func:`evaluate`)."""
    from ir_incomplete.data.named_files import evaluation_scope

    # a file named in a measure string (design=, predictions=) is read once (a named pipe works)
    with evaluation_scope(), _progress.task(_progress.check_progress(progress), "evaluate", unit="score"):
        return _scores_and_intervals(
            runs, qrels, measures, negative, score_precision, topics, chunk_rows, predictions, interval
        )


def _scores_and_intervals(
    runs: Any,
    qrels: Any,
    measures: Any,
    negative: str,
    score_precision: str,
    topics: str,
    chunk_rows: int | None,
    predictions: Any,
    interval: float | None,
) -> tuple[pd.DataFrame, dict[tuple[str, str], tuple[float, float]]]:
    """The work of :func:`_evaluate_with_intervals`, moving the progress bar of its task."""
    from ir_incomplete.bootstrap import interval_percentiles, is_bootstrapped, replicate_intervals
    from ir_incomplete.predictions import Predictions

    if interval is not None:
        interval_percentiles(interval)  # refuse a bad interval before any work
    if topics not in TOPIC_SETS:
        raise ValueError(f"topics={topics!r} is not valid; choices: {', '.join(TOPIC_SETS)}")
    measures = as_measures(measures)
    if chunk_rows is not None and (
        isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1
    ):
        raise ValueError(f"chunk_rows={chunk_rows!r} is not valid; expected an integer >= 1 or None (all runs at once)")
    prepared = runs if isinstance(runs, PreparedRuns) else None
    if prepared is not None:
        if prepared.score_precision != score_precision:
            raise ValueError(
                f"these PreparedRuns were ordered with score_precision={prepared.score_precision!r}, "
                f"not {score_precision!r}"
            )
        run_map = None
        names = list(prepared.run_names)
    else:
        run_map = as_run_mapping(runs)
        names = list(run_map)
    judged = Qrels.from_any(qrels, negative=negative)
    pred = None if predictions is None else Predictions.from_any(predictions, judged)
    frames = []
    ours = [(m, as_incomplete(m)) for m in measures if computable(m)]
    # intervals of bootstrapped measures: per query (an unanswered query: every replicate 0) and the
    # per-run sums of each replicate over the queries
    n_runs, n_topics = len(names), judged.n_topics
    boot = [interval is not None and is_bootstrapped(impl) for _, impl in ours]
    stat = [is_design_based(impl) for _, impl in ours]  # estimated over all runs at once, after the chunks
    if any(stat) and topics == "run":
        first = next(m for (m, _), s in zip(ours, stat, strict=True) if s)
        raise ValueError(
            f"{first!r}: topics='run' is not valid for a design-based measure: its estimate (and interval) is "
            f"of the mean over the design's queries, a query the run does not answer counting 0; use "
            f"topics='qrels'"
        )
    lows = [np.zeros((n_runs, n_topics)) for _ in ours]
    highs = [np.zeros((n_runs, n_topics)) for _ in ours]
    sums = [np.zeros((n_runs, impl.get("b") if b else 0)) for b, (_, impl) in zip(boot, ours, strict=True)]
    answered = np.zeros((n_runs, n_topics), dtype=bool)  # (run, query) pairs the runs answer
    others = [m for m in measures if not computable(m)]
    _progress.set_total(n_runs * n_topics * (len(ours) + len(others)))  # (run, query, measure) scores
    if ours and (others or any(stat)) and run_map is not None:  # read every run twice: read files once
        run_map = {
            name: _single_run(read_trec_run(run), run) if isinstance(run, (str, os.PathLike)) else run
            for name, run in run_map.items()
        }
    if ours:
        # per measure: {"value": grid, extra column: grid}, filled with the values of unanswered queries
        grids = [
            {
                name: np.full((n_runs, n_topics), float(default))
                for name, default in {"value": measure.DEFAULT, **impl.EXTRA_COLUMNS}.items()
            }
            for measure, impl in ours
        ]
        chunks = (
            _prepared_chunks(prepared, judged, chunk_rows)
            if prepared is not None
            else _run_chunks(run_map, judged, score_precision, chunk_rows)
        )
        for first, ranked in chunks:
            cells = (first + ranked.run_of_row, ranked.topic_of_row)
            answered[cells] = True
            for i, ((_, impl), grid) in enumerate(zip(ours, grids, strict=True)):
                done = _progress.completed() + ranked.n_rows  # bootstrapped measures advance as they go
                if stat[i]:
                    pass
                elif boot[i] and interval is not None:
                    values, lo, hi, run_sums = replicate_intervals(impl, ranked, judged, pred, interval)
                    lows[i][cells], highs[i][cells] = lo, hi
                    sums[i][first : first + len(run_sums)] += run_sums
                    grid["value"][cells] = values
                elif is_bootstrapped(impl):
                    grid["value"][cells] = cast(Any, impl).compute(ranked, judged, predictions=pred)
                elif impl.EXTRA_COLUMNS:
                    details = cast(Any, impl).compute_details(ranked, judged)  # set with EXTRA_COLUMNS
                    for name, values in grid.items():
                        values[cells] = details[name]
                else:
                    grid["value"][cells] = impl.compute(ranked, judged)
                _progress.advance(done - _progress.completed())
            del ranked
        design_bounds, design_extra = _design_values(
            [impl for (_, impl), s in zip(ours, stat, strict=True) if s],
            [grid for grid, s in zip(grids, stat, strict=True) if s],
            prepared if prepared is not None else run_map,
            names,
            judged,
            interval,
            score_precision,
        )
        run_col = np.repeat(np.array(names, dtype=object), n_topics)
        qid_col = np.tile(judged.topic_ids, n_runs)
        for i, ((measure, _), grid) in enumerate(zip(ours, grids, strict=True)):
            columns = {"run": run_col, "query_id": qid_col, "measure": repr(measure)}
            frame = pd.DataFrame({**columns, **{name: values.ravel() for name, values in grid.items()}})
            if boot[i]:
                frame["lo"], frame["hi"] = lows[i].ravel(), highs[i].ravel()
            if stat[i] and repr(ours[i][1]) in design_extra:  # design queries the qrels do not judge
                frame = pd.concat([frame, design_extra[repr(ours[i][1])].assign(measure=repr(measure))])
            if stat[i] and interval is not None:  # design-based intervals are of run means only
                frame["lo"], frame["hi"] = np.nan, np.nan
            frames.append(frame)
    if run_map is None and prepared is not None and (others or (topics == "run" and not ours)):
        run_map = prepared.frames()  # the converted runs as frames, for ir_measures and answered pairs
    if others:
        for frame in _evaluate_elsewhere(run_map, judged, others, warn_empty=not ours):  # run by run
            frames.append(frame)
            _progress.advance(n_topics * len(others))
    result = pd.concat(frames, ignore_index=True)
    if topics == "run":
        if ours:
            run_index, topic_index = np.nonzero(answered)
            pairs = pd.MultiIndex.from_arrays([np.array(names, dtype=object)[run_index], judged.topic_ids[topic_index]])
        else:
            pairs = _answered_pairs(run_map)
            pairs = pairs[pairs.get_level_values(1).isin(judged.topic_index)]
        silent = [name for name in names if name not in set(pairs.get_level_values(0))]
        if silent:
            raise ValueError(
                f"run {silent[0]!r} answers none of the qrels' {judged.n_topics} queries"
                + (f" (nor do {len(silent) - 1} other runs)" if len(silent) > 1 else "")
                + "; with topics='run' it has no query to be evaluated on (trec_eval: 'No queries with both "
                "results and relevance info'); check its query ids, or use topics='qrels' to score it 0"
            )
        result = _answered_only(result, pairs)
    order = {repr(m): i for i, m in enumerate(measures)}
    result["_m"] = result["measure"].map(order)
    result["_r"] = result["run"].map({n: i for i, n in enumerate(names)})
    result = result.sort_values(["_r", "_m"], kind="stable").drop(columns=["_m", "_r"]).reset_index(drop=True)
    extras = list(dict.fromkeys(name for _, impl in ours for name in impl.EXTRA_COLUMNS))
    if interval is not None:
        extras += ["lo", "hi"]
        for name in ("lo", "hi"):
            if name not in result.columns:
                result[name] = np.nan
    result = result[["run", "query_id", "measure", "value", *extras]]  # pd.concat may reorder them
    bounds: dict[tuple[str, str], tuple[float, float]] = dict(design_bounds) if ours else {}
    if interval is not None:
        q_lo, q_hi = interval_percentiles(interval)
        for i, (measure, _) in enumerate(ours):
            if not boot[i]:
                continue
            # the queries averaged: every query of the qrels, or those each run answers (topics="run")
            n_queries = answered.sum(axis=1) if topics == "run" else np.full(len(names), judged.n_topics)
            for run_no, name in enumerate(names):
                if n_queries[run_no] == 0:
                    continue
                means = sums[i][run_no] / n_queries[run_no]
                bounds[(name, repr(measure))] = (
                    float(_percentile(means, q_lo)),
                    float(_percentile(means, q_hi)),
                )
    return result, bounds


def _design_values(
    impls: list[Any],
    grids: list[dict[str, np.ndarray]],
    runs: Any,
    names: list[str],
    judged: Qrels,
    interval: float | None,
    score_precision: str,
) -> tuple[dict[tuple[str, str], tuple[float, float]], dict[str, pd.DataFrame]]:
    """Fill the value grids (runs × qrels queries) of the design-based measures ``impls`` with
    :func:`ir_incomplete.estimate`'s per-query estimates, every run at once (``universe="runs"``).

    Returns ``({(run, measure): (lo, hi)}, {measure: rows})``: with ``interval``, estimate()'s interval
    of each run mean (else empty); and, per measure, the rows ``run, query_id, value`` of the design's
    queries that the qrels do not judge (a query of a Poisson design where no pair was sampled: its
    estimate is what estimate() gives, 0 without a control variate). estimate()'s run means average over
    every query of the design, so these rows are reported beside the qrels' queries: the mean of a
    design-based measure's rows is estimate()'s run mean."""
    if not impls:
        return {}, {}
    tables = design_estimates(impls, runs, judged, universe="runs", per_query=True, score_precision=score_precision)
    run_index = {name: i for i, name in enumerate(names)}
    extra: dict[str, pd.DataFrame] = {}
    for impl, grid in zip(impls, grids, strict=True):
        table = tables[repr(impl)]
        cols = judged.topic_index.get_indexer(table["query_id"])
        known = cols >= 0
        rows = table["run"].map(run_index).to_numpy(dtype=np.int64)
        grid["value"][rows[known], cols[known]] = table["value"].to_numpy(dtype=np.float64)[known]
        if not known.all():
            extra[repr(impl)] = table.loc[~known, ["run", "query_id", "value"]].reset_index(drop=True)
    if interval is None:
        return {}, extra
    means = design_estimates(impls, runs, judged, universe="runs", interval=interval, score_precision=score_precision)
    bounds = {
        (str(run), name): (float(lo), float(hi))
        for name, table in means.items()
        for run, lo, hi in zip(table["run"], table["lo"], table["hi"], strict=True)
    }
    return bounds, extra


def _percentile(values: np.ndarray, q: float) -> float:
    from ir_incomplete.kernels.ndcg import percentile

    return float(percentile(values, q))


def extra_columns(measures) -> dict[str, tuple[str, ...]]:
    """``{repr(measure): its extra result columns}`` (see ``EXTRA_COLUMNS`` in
    :mod:`ir_incomplete.measures.base`) for the measures that have any; measures given as in
    :func:`evaluate`."""
    out = {}
    for measure in as_measures(measures):
        if computable(measure):
            names = tuple(as_incomplete(measure).EXTRA_COLUMNS)
            if names:
                out[repr(measure)] = names
    return out


def _run_chunks(run_map, judged: Qrels, score_precision: str, chunk_rows: int | None):
    """``(index of the first run, RankedLists)`` of consecutive groups of whole runs of at most
    ``chunk_rows`` rows (or one run), each group in blocks of rows of similar length
    (:meth:`PreparedRuns.rank_blocks`); each run is read when its group is converted."""
    chunk: list[tuple[str, tuple[Any, Any, np.ndarray]]] = []
    size, first = 0, 0
    for i, (name, run) in enumerate(run_map.items()):
        columns = _run_columns(run)
        if len(columns[0]) == 0:
            _warn_empty(name)
        if chunk and chunk_rows is not None and size + len(columns[0]) > chunk_rows:
            for ranked in _prepare(chunk, score_precision, judged.topic_index).rank_blocks(judged, None, chunk_rows):
                yield first, ranked
            chunk, size, first = [], 0, i
        chunk.append((name, columns))
        size += len(columns[0])
        del columns
    if chunk:
        for ranked in _prepare(chunk, score_precision, judged.topic_index).rank_blocks(judged, None, chunk_rows):
            yield first, ranked


def _prepared_chunks(prepared: PreparedRuns, judged: Qrels, chunk_rows: int | None):
    """:func:`_run_chunks` for runs converted once (row indices of runs are already global)."""
    sizes = prepared.run_sizes()
    for name in np.asarray(prepared.run_names, dtype=object)[sizes == 0]:
        _warn_empty(name)
    start = 0
    while start < len(sizes):
        stop = start + 1
        if chunk_rows is None:
            stop = len(sizes)
        else:
            total = sizes[start]
            while stop < len(sizes) and total + sizes[stop] <= chunk_rows:
                total += sizes[stop]
                stop += 1
        for ranked in prepared.rank_blocks(judged, runs=slice(start, stop), max_items=chunk_rows):
            yield 0, ranked
        start = stop


def _warn_empty(name) -> None:
    """Warn that the run ``name`` has no rows (an empty file or table: valid, but rarely meant)."""
    warnings.warn(
        f"run {str(name)!r} retrieves nothing: it has no rows, so every query is scored as answered by no document",
        UserWarning,
        stacklevel=5,
    )


def _answered_pairs(run_map) -> pd.MultiIndex:
    """The (run, query) pairs that the runs of ``run_map`` answer."""
    pairs = [(name, qid) for name, run in run_map.items() for qid in pd.unique(run_columns(run)[0])]
    return pd.MultiIndex.from_tuples(pairs) if pairs else pd.MultiIndex.from_arrays([[], []])


def _answered_only(result: pd.DataFrame, answered: pd.MultiIndex) -> pd.DataFrame:
    """The rows of ``result`` whose (run, query) is among ``answered``."""
    keep = pd.MultiIndex.from_arrays([result["run"], result["query_id"]]).isin(answered)
    return result[keep].reset_index(drop=True)


def _aggregate(per_query: pd.DataFrame, measures) -> pd.DataFrame:
    """Mean over queries, or the sum for counting measures (``NumRet``, ``NumQ``, …), as ir_measures."""
    from ir_measures.measures import SumAgg

    summed = {repr(m) for m in measures if isinstance(m.aggregator(), SumAgg)}
    columns = [c for c in per_query.columns if c not in ("run", "query_id", "measure")]  # value, extras
    grouped = per_query.groupby(["run", "measure"], sort=False)
    out = grouped[columns].mean().reset_index()
    if summed:
        totals = grouped["value"].sum().reset_index()["value"]
        use_sum = out["measure"].isin(summed)
        out.loc[use_sum, "value"] = totals[use_sum]
    return out


def _evaluate_elsewhere(run_map, judged: Qrels, measures, warn_empty: bool = False) -> Iterable[pd.DataFrame]:
    """Measures we do not compute, by ``ir_measures``' providers (one evaluator per provider); a
    provider's failure is a :class:`ir_incomplete.other_providers.ProviderError` naming it.
    ``warn_empty``: warn of a run without rows (when no measure of ours did)."""
    from ir_incomplete.other_providers import iter_metrics, provider_groups

    groups = provider_groups(measures)
    qrels_frame = judged.to_frame()
    qrels = _dict_of_dicts(
        qrels_frame["query_id"].to_numpy(object),
        qrels_frame["doc_id"].to_numpy(object),
        qrels_frame["relevance"].to_numpy(),
    )
    for name, run in run_map.items():
        qids, dids, scores = run_columns(run)
        if warn_empty and len(qids) == 0:
            _warn_empty(name)
        rows = [
            (name, m.query_id, repr(m.measure), float(m.value))
            for _, m in iter_metrics(groups, qrels, [(name, _dict_of_dicts(qids, dids, scores))])
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
