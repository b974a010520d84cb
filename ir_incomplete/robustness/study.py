"""Robustness studies: degrade the judgments level by level, re-evaluate every run, compare rankings.

:func:`robustness_study` runs the grid (level × repeat) of one degradation method, evaluates all runs
with all measures in one :func:`ir_incomplete.evaluate` call per grid cell, and compares each measure's
per-run mean scores with a reference computed on the full judgments (Kendall τ, Pearson ρ, RMS error).
The two robustness definitions of Yilmaz & Aslam (KAIS 2008, §2) are both available:

* ``reference=None``: each measure against *itself* on the full judgments (does the measure keep its
  own ranking and values when judgments go missing?);
* ``reference="AP"`` (any measure string): each measure against that measure on the full judgments
  (does the estimate approach the value we would get with complete judgments?).

The grid runs sequentially, in local processes (``n_jobs``) or on a ``dask.distributed`` cluster
(``client``); every cell has its own seed derived from ``seed``, so results do not depend on how the
grid was run.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ir_incomplete.robustness import degrade as _degrade
from ir_incomplete.robustness.compare import agreement

__all__ = ["METHODS", "DEFAULT_LEVELS", "StudyResult", "robustness_study", "summarize"]

METHODS = ("sample", "stratified", "depth", "mixed", "logo")
DEFAULT_LEVELS = {
    "sample": (0.05, 0.1, 0.3, 1.0),
    "stratified": (0.05, 0.1, 0.3, 1.0),
    "depth": (1, 5, 10, 20, 50, 100),
    "mixed": (1, 5, 10, 20, 50),
}
_OPTIONS = {
    "sample": ("min_relevant", "rel", "unjudged"),
    "stratified": ("min_relevant", "min_nonrelevant", "rel", "unjudged"),
    "depth": ("pool_runs", "unjudged"),
    "mixed": ("pool_runs", "extra", "unjudged"),
    "logo": ("pool_runs", "groups", "depth", "unjudged"),
}
_RANDOM = ("sample", "stratified", "mixed")


class StudyResult(NamedTuple):
    """Result of :func:`robustness_study` (unpacks as ``stats, scores, reference``).

    * ``stats``: one row per (measure, level, repeat): ``measure, level, repeat, tau, pearson, rmse``;
    * ``scores``: per-run mean scores with degraded judgments: ``measure, level, repeat, run, value,
      reference`` (``reference`` = the value it is compared with, from the full judgments);
    * ``reference``: the full-judgment scores used as references: ``measure, run, value``.
    """

    stats: pd.DataFrame
    scores: pd.DataFrame
    reference: pd.DataFrame


@dataclass
class _Context:
    """Everything a grid cell needs; shipped to each worker once. ``runs`` are converted once (ordered,
    document ids hashed, duplicates checked): a cell only looks their grades up in its own qrels."""

    runs: Any  # ir_incomplete.data.PreparedRuns
    judgments: Any
    measures: list[str]
    method: str
    options: dict[str, Any]
    pool: Any = None
    negative: str = "pooled_unjudged"
    score_precision: str = "float32"
    run_names: list[str] = field(default_factory=list)


_WORKER_CONTEXT: _Context | None = None


def _canonical_runs(runs) -> dict[str, pd.DataFrame]:
    from ir_incomplete.api import as_run_mapping
    from ir_incomplete.data import run_columns

    out = {}
    for name, run in as_run_mapping(runs).items():
        q, d, s = run_columns(run)
        out[name] = pd.DataFrame(
            {"query_id": pd.Series(q, dtype=object), "doc_id": pd.Series(d, dtype=object), "score": s}
        )
    if len(out) < 2:
        raise ValueError(f"a robustness study compares system rankings: give at least 2 runs (got {len(out)})")
    return out


def _check_levels(method: str, levels, groups: Sequence[str] | None) -> list[Any]:
    if levels is None:
        if method == "logo":
            return list(groups)
        return list(DEFAULT_LEVELS[method])
    if isinstance(levels, (str, bytes)) or not hasattr(levels, "__iter__"):
        levels = [levels]
    levels = list(levels)
    if not levels:
        raise ValueError("levels is empty")
    if method in ("sample", "stratified"):
        return [_degrade._check_fraction(v, "levels") for v in levels]
    if method in ("depth", "mixed"):
        return [_degrade._check_int(v, "levels", 1) for v in levels]
    levels = [str(v) for v in levels]
    unknown = [v for v in levels if v not in groups]
    if unknown:
        raise ValueError(f"levels {unknown} are not groups of the pooled runs; choices: {', '.join(groups)}")
    return levels


def _task_seed(seed: int, level_index: int, repeat: int) -> int:
    return int(np.random.SeedSequence([seed, level_index, repeat]).generate_state(1, dtype=np.uint64)[0])


def _degraded(ctx: _Context, level, seed: int) -> pd.DataFrame:
    o = ctx.options
    unjudged = o.get("unjudged", "mark")
    if ctx.method == "sample":
        return _degrade.sample_judgments(
            ctx.judgments, level, seed, o.get("min_relevant", 1), rel=o.get("rel", 1), unjudged=unjudged
        )
    if ctx.method == "stratified":
        return _degrade.stratified_sample(
            ctx.judgments,
            level,
            seed,
            min_relevant=o.get("min_relevant", 1),
            min_nonrelevant=o.get("min_nonrelevant", 10),
            rel=o.get("rel", 1),
            unjudged=unjudged,
        )
    if ctx.method == "depth":
        return _degrade.depth_pool(
            ctx.judgments, ctx.pool, level, unjudged=unjudged, score_precision=ctx.score_precision
        )
    if ctx.method == "mixed":
        return _degrade.mixed_pool(
            ctx.judgments,
            ctx.pool,
            level,
            o.get("extra", 1.0),
            seed,
            unjudged=unjudged,
            score_precision=ctx.score_precision,
        )
    return _degrade.leave_one_group_out(
        ctx.judgments,
        ctx.pool,
        o["groups"],
        level,
        o.get("depth", 100),
        unjudged=unjudged,
        score_precision=ctx.score_precision,
    )


def _mean_scores(ctx: _Context, qrels, measures: list[str]) -> np.ndarray:
    """``[measures × runs]`` mean scores of every run (one ``evaluate`` call on the converted runs)."""
    from ir_incomplete.api import evaluate

    frame = evaluate(
        ctx.runs, qrels, measures, per_query=False, negative=ctx.negative, score_precision=ctx.score_precision
    )
    wide = frame.pivot(index="measure", columns="run", values="value")
    return wide.reindex(index=measures, columns=ctx.run_names).to_numpy(dtype=np.float64)


def _run_task(ctx: _Context, task) -> np.ndarray:
    level_index, level, repeat, seed = task
    return _mean_scores(ctx, _degraded(ctx, level, seed), ctx.measures)


def _init_worker(ctx: _Context) -> None:
    global _WORKER_CONTEXT
    _WORKER_CONTEXT = ctx


def _worker_task(task) -> np.ndarray:
    return _run_task(_WORKER_CONTEXT, task)


def _progress_bar(total: int, enabled: bool, desc: str):
    if enabled:
        try:
            from tqdm.auto import tqdm

            return tqdm(total=total, desc=desc, unit="cell")
        except ImportError:  # pragma: no cover - tqdm is optional
            pass

    class _Silent:
        def update(self, n=1):
            return None

        def close(self):
            return None

    return _Silent()


def _execute(ctx: _Context, tasks, n_jobs: int, client, progress: bool, desc: str) -> list[np.ndarray]:
    bar = _progress_bar(len(tasks), progress, desc)
    results: list[np.ndarray | None] = [None] * len(tasks)
    try:
        if client is not None:
            shared = client.scatter(ctx, broadcast=True)
            futures = [client.submit(_run_task, shared, task, pure=False) for task in tasks]
            for i, fut in enumerate(futures):
                results[i] = fut.result()
                bar.update(1)
        elif n_jobs == 1 or len(tasks) <= 1:
            for i, task in enumerate(tasks):
                results[i] = _run_task(ctx, task)
                bar.update(1)
        else:
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(
                max_workers=min(n_jobs, len(tasks)), initializer=_init_worker, initargs=(ctx,)
            ) as pool:
                futures = {pool.submit(_worker_task, task): i for i, task in enumerate(tasks)}
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.update(1)
    finally:
        bar.close()
    return results


def robustness_study(
    runs,
    qrels,
    measures,
    method: str = "sample",
    levels=None,
    repeats: int = 10,
    seed: int = 0,
    reference: str | None = None,
    n_jobs: int = 1,
    client=None,
    progress: bool = True,
    *,
    options: dict[str, Any] | None = None,
    negative: str = "pooled_unjudged",
    score_precision: str = "float32",
) -> StudyResult:
    """Degrade ``qrels`` with ``method`` at each of ``levels``, ``repeats`` times, and compare rankings.

    Parameters
    ----------
    runs
        At least two runs, in any form :func:`ir_incomplete.evaluate` accepts (mapping name → run,
        directory of run files, …).
    qrels
        The full judgments (any qrels form).
    measures
        Measure strings or objects (``"AP"``, ``"infAP"``, ``"Bpref"``, ``"nDCG@10"``, ``"indAP"``, …).
    method, levels
        ``"sample"`` (:func:`~ir_incomplete.robustness.sample_judgments`; levels are fractions),
        ``"stratified"`` (:func:`~ir_incomplete.robustness.stratified_sample`; fractions),
        ``"depth"`` (:func:`~ir_incomplete.robustness.depth_pool`; pool depths), ``"mixed"``
        (:func:`~ir_incomplete.robustness.mixed_pool`; pool depths) or ``"logo"``
        (:func:`~ir_incomplete.robustness.leave_one_group_out`; levels are the groups left out, all of
        them by default). Default levels: ``DEFAULT_LEVELS[method]``.
    repeats
        Random draws per level (``"depth"`` and ``"logo"`` are deterministic and use one).
    seed
        Base seed (int ≥ 0); cell (level i, repeat r) uses ``SeedSequence([seed, i, r])``.
    reference
        ``None``: compare each measure with itself on the full qrels; a measure string: compare every
        measure with that measure on the full qrels.
    n_jobs
        Local worker processes (``-1``: one per CPU).
    client
        A ``dask.distributed.Client`` (extra ``[dask]``): the grid runs on its cluster.
    progress
        Show a ``tqdm`` progress bar.
    options
        Method options: ``unjudged`` (``"mark"``/``"drop"``, all methods); ``min_relevant``, ``rel``
        (sample, stratified); ``min_nonrelevant`` (stratified); ``pool_runs`` (names of the runs that
        form pools; all runs by default; depth, mixed, logo); ``extra`` (mixed, default 1);
        ``groups`` (run → group mapping, required for logo) and ``depth`` (logo pool depth, default 100).
    negative, score_precision
        Passed to :func:`ir_incomplete.evaluate`.

    Returns
    -------
    :class:`StudyResult` ``(stats, scores, reference)``.
    """
    from ir_incomplete.api import as_measures
    from ir_incomplete.data import prepare_runs
    from ir_incomplete.robustness.degrade import RunPool, _check_int, _group_map, _judgments

    if method not in METHODS:
        raise ValueError(f"method={method!r} is not valid; choices: {', '.join(METHODS)}")
    options = dict(options or {})
    unknown = sorted(set(options) - set(_OPTIONS[method]))
    if unknown:
        raise ValueError(f"options {unknown} do not apply to method={method!r}; choices: {', '.join(_OPTIONS[method])}")
    if method == "logo" and "groups" not in options:
        raise ValueError("method='logo' needs options={'groups': {run name: group name, ...}}")
    repeats = _check_int(repeats, "repeats", 1)
    seed = _check_int(seed, "seed", 0)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or (n_jobs < 1 and n_jobs != -1):
        raise ValueError(f"n_jobs={n_jobs!r} is not valid; expected an integer >= 1, or -1 for one per CPU")
    n_jobs = (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)

    labels = [repr(m) for m in as_measures(measures)]
    if len(set(labels)) != len(labels):
        raise ValueError(f"measures lists a measure twice: {labels}")
    ref_label = repr(as_measures([reference])[0]) if reference is not None else None

    run_map = _canonical_runs(runs)
    run_names = list(run_map)
    judgments = _judgments(qrels)

    pool = None
    groups: list[str] = []
    if method in ("depth", "mixed", "logo"):
        pool_runs = options.get("pool_runs")
        if pool_runs is None:
            pool_runs = run_names
        pool_runs = list(pool_runs)
        missing = [r for r in pool_runs if r not in run_map]
        if missing:
            raise ValueError(f"options['pool_runs'] names runs that are not given: {missing[:10]}")
        pool = RunPool({r: run_map[r] for r in pool_runs}, score_precision)
        if method == "logo":
            mapping = _group_map(options["groups"], pool.run_names)
            options["groups"] = {r: mapping[r] for r in pool.run_names}
            groups = sorted(set(options["groups"].values()))
    options.pop("pool_runs", None)
    levels = _check_levels(method, levels, groups)
    n_repeats = repeats if method in _RANDOM else 1

    ctx = _Context(
        runs=prepare_runs(run_map, score_precision),
        judgments=judgments,
        measures=labels,
        method=method,
        options=options,
        pool=pool,
        negative=negative,
        score_precision=score_precision,
        run_names=run_names,
    )

    # reference scores on the full judgments
    ref_measures = labels if ref_label is None else [ref_label]
    full = _mean_scores(ctx, judgments_frame(judgments), ref_measures)
    reference_frame = pd.DataFrame(
        {
            "measure": np.repeat(ref_measures, len(run_names)),
            "run": np.tile(np.array(run_names, dtype=object), len(ref_measures)),
            "value": full.ravel(),
        }
    )

    tasks = [(li, level, r, _task_seed(seed, li, r)) for li, level in enumerate(levels) for r in range(n_repeats)]
    # a full-size sample (fraction 1) keeps every judgment whatever the seed: evaluate it once
    same = [method in ("sample", "stratified") and level == 1.0 and r > 0 for _, level, r, _ in tasks]
    unique_tasks = [t for t, dup in zip(tasks, same, strict=True) if not dup]
    unique_results = _execute(ctx, unique_tasks, n_jobs, client, progress, desc=f"robustness ({method})")
    by_level = {t[0]: res for t, res in zip(unique_tasks, unique_results, strict=True) if t[2] == 0}
    it = iter(unique_results)
    results = [by_level[t[0]] if dup else next(it) for t, dup in zip(tasks, same, strict=True)]

    stat_rows, score_parts = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant score vectors give NaN correlations
        for (_, level, r, _), values in zip(tasks, results, strict=True):
            for mi, label in enumerate(labels):
                ref = full[mi] if ref_label is None else full[0]
                est = values[mi]
                stat = agreement(ref, est)
                stat_rows.append((label, level, r, stat["tau"], stat["pearson"], stat["rmse"]))
                score_parts.append(
                    pd.DataFrame(
                        {
                            "measure": label,
                            "level": [level] * len(run_names),
                            "repeat": r,
                            "run": run_names,
                            "value": est,
                            "reference": ref,
                        }
                    )
                )
    stats = pd.DataFrame(stat_rows, columns=["measure", "level", "repeat", "tau", "pearson", "rmse"])
    stats.attrs.update({"method": method, "reference": ref_label})
    scores = pd.concat(score_parts, ignore_index=True)
    scores.attrs.update({"method": method, "reference": ref_label})
    return StudyResult(stats=stats, scores=scores, reference=reference_frame)


def judgments_frame(judgments) -> pd.DataFrame:
    """The full judgments as a qrels DataFrame (all rows, grades as given, negatives as −1)."""
    return judgments.frame(np.ones(len(judgments.grades), dtype=bool), judgments.grades)


def summarize(stats: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over repeats of τ, ρ and RMSE per (measure, level), in the order
    the measures and levels first appear: columns ``measure, level, repeats, tau, tau_std, pearson,
    pearson_std, rmse, rmse_std``."""
    needed = {"measure", "level", "repeat", "tau", "pearson", "rmse"}
    if not needed <= set(stats.columns):
        raise ValueError(f"stats must have columns {sorted(needed)} (found {list(stats.columns)})")
    grouped = stats.groupby(["measure", "level"], sort=False)
    out = grouped[["tau", "pearson", "rmse"]].mean()
    std = grouped[["tau", "pearson", "rmse"]].std(ddof=1).fillna(0.0)
    out = pd.concat([out, std.add_suffix("_std")], axis=1)
    out.insert(0, "repeats", grouped.size())
    out = out.reset_index()
    return out[["measure", "level", "repeats", "tau", "tau_std", "pearson", "pearson_std", "rmse", "rmse_std"]]
