"""Robustness studies: degrade the judgments level by level, re-evaluate every run, compare rankings.

:func:`robustness_study` runs the grid (level × repeat) of one degradation method, evaluates all runs
with all measures in one :func:`ir_incomplete.evaluate` call per grid cell, and compares each measure's
per-run mean scores with a reference computed on the full judgments (every statistic of
:func:`~ir_incomplete.robustness.agreement`: Kendall τ, Pearson ρ, RMS error, …), and the per-topic
scores over all (run, topic) pairs (``rmse_topic``).
The two robustness definitions of Yilmaz & Aslam (KAIS 2008, §2) are both available:

* ``reference=None``: each measure against *itself* on the full judgments (does the measure keep its
  own ranking and values when judgments go missing?);
* ``reference="AP"`` (any measure string): each measure against that measure on the full judgments
  (does the estimate approach the value we would get with complete judgments?).

The grid runs sequentially, in local processes (``n_jobs``) or on a ``dask.distributed`` cluster
(``client``); every cell has its own seed derived from ``seed``, so results do not depend on how the
grid was run.

``method="logo"`` is the leave-one-group-out protocol of Zobel (SIGIR 1998) and Fröbe et al. (ECIR 2023,
§4.1): every run is scored once, on the judgments without the documents that only its own group
contributed to the pool, and these scores of all runs are compared with their full-judgment scores.
Run filters of the papers (:mod:`~ir_incomplete.robustness.filters`) select the runs compared.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ir_incomplete.robustness import degrade as _degrade
from ir_incomplete.robustness.compare import agreement
from ir_incomplete.robustness.filters import _check_filters, filter_runs

__all__ = ["METHODS", "DEFAULT_LEVELS", "StudyResult", "StudyInterrupted", "robustness_study", "summarize"]

METHODS = ("sample", "stratified", "depth", "mixed", "logo")
DEFAULT_LEVELS = {
    "sample": (0.05, 0.1, 0.3, 1.0),
    "stratified": (0.05, 0.1, 0.3, 1.0),
    "depth": (1, 5, 10, 20, 50, 100),
    "mixed": (1, 5, 10, 20, 50),
    "logo": (10,),
}
_OPTIONS = {
    "sample": ("min_relevant", "rel", "unjudged"),
    "stratified": ("min_relevant", "min_nonrelevant", "rel", "unjudged"),
    "depth": ("pool_runs", "unjudged"),
    "mixed": ("pool_runs", "extra", "unjudged"),
    "logo": ("pool_runs", "groups", "depth", "unjudged"),
}
_STAT_KEYS = ("measure", "level", "repeat")
_RANDOM = ("sample", "stratified", "mixed")


class StudyResult(NamedTuple):
    """Result of :func:`robustness_study` (unpacks as ``stats, scores, reference``).

    * ``stats``: one row per (measure, level, repeat): ``measure, level, repeat``, every statistic
      :func:`~ir_incomplete.robustness.agreement` returns for the per-run means (``tau, pearson, rmse,
      tau_ap, spearman, bias``) and ``rmse_topic``, the RMS error over all (run, topic) pairs of per-topic
      scores (topics of the full judgments that the degraded judgments keep; NaN when no pair exists);
    * ``scores``: per-run mean scores with degraded judgments: ``measure, level, repeat, run, value,
      reference`` (``reference`` = the value it is compared with, from the full judgments);
    * ``reference``: the full-judgment scores used as references: ``measure, run, value``.

    Tied runs: where two runs score the same on the full judgments, ``tau_ap`` stays below 1 even for a
    degraded ranking identical to the reference (e.g. 0.999 at level 1.0 while ``tau`` is 1). τ_AP
    (:func:`~ir_incomplete.robustness.tau_ap`) is the expected value over random orders of each tie, so
    a tied pair counts as half right; Kendall's τ-b leaves tied pairs out. The command line prints a
    note when this happens.

    One topic set for both sides: a run's degraded and full-judgment scores are aggregated (averaged,
    or summed for measures ``ir_measures`` sums, e.g. ``NumRet``) over the *same* topics, those that
    have a per-topic score under both judgments. Usually that is every topic of the full judgments;
    but a degradation can remove a topic (``unjudged="drop"`` with ``min_relevant=0`` leaves a small
    topic without any judgment), and then that topic leaves both sides of that cell: ``scores.reference``
    is the full-judgment aggregate over the kept topics and can differ from the ``reference`` frame,
    which is over all topics.

    ``stats.attrs`` and ``scores.attrs`` hold ``method``, ``reference``, ``filters`` and
    ``runs_removed`` (the runs the filters left out). For ``method="logo"`` the level is the pool depth.
    """

    stats: pd.DataFrame
    scores: pd.DataFrame
    reference: pd.DataFrame


class StudyInterrupted(KeyboardInterrupt):
    """A study stopped by Ctrl-C (``KeyboardInterrupt``) while its grid ran.

    Queued cells were cancelled and worker processes stopped. ``finished`` of the ``total`` grid cells
    are saved in ``checkpoint`` (None when the study was not given a cell folder: then nothing is kept);
    ``robustness_study(..., resume=checkpoint)`` with the same arguments computes only the others.
    """

    def __init__(self, finished: int, total: int, checkpoint: str | None) -> None:
        self.finished, self.total, self.checkpoint = finished, total, checkpoint
        where = f"saved in {checkpoint}" if checkpoint else "not saved (give checkpoint=DIR to keep them)"
        super().__init__(f"study interrupted: {finished} of {total} grid cells finished, {where}")


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
    topic_ids: Any = None


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


def _check_levels(method: str, levels, depth_option=None) -> list[Any]:
    if method == "logo" and depth_option is not None:
        if levels is not None:
            raise ValueError("method='logo': give the pool depth either as levels or as options['depth'], not both")
        levels = [depth_option]
    if levels is None:
        return list(DEFAULT_LEVELS[method])
    if isinstance(levels, (str, bytes)) or not hasattr(levels, "__iter__"):
        levels = [levels]
    levels = list(levels)
    if not levels:
        raise ValueError("levels is empty")
    if method in ("sample", "stratified"):
        checked: list[Any] = [_degrade._check_fraction(v, "levels") for v in levels]
    else:
        checked = [_degrade._check_int(v, "levels", 1) for v in levels]
    twice = sorted({v for i, v in enumerate(checked) if v in checked[:i]})
    if twice:
        raise ValueError(
            f"levels lists {', '.join(map(repr, twice))} more than once (levels={checked}); each level is one "
            f"set of grid cells, keyed by its value: give it once and raise repeats for more draws"
        )
    return checked


def _task_seed(seed: int, level_index: int, repeat: int) -> int:
    return int(np.random.SeedSequence([seed, level_index, repeat]).generate_state(1, dtype=np.uint64)[0])


class _Task(NamedTuple):
    level_index: int
    level: Any
    repeat: int
    seed: int
    group: str | None = None  # logo: the group whose runs are scored (and whose contributions leave)


def _degraded(ctx: _Context, level, seed: int, group: str | None = None) -> pd.DataFrame:
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
    if group is None:
        raise ValueError("leave-one-group-out needs the group of the runs to score")
    if group not in o["pool_groups"]:  # the group contributed nothing to the pool: all judgments stay
        every = np.ones(len(ctx.judgments.grades), dtype=bool)
        return ctx.judgments.result(every, every, unjudged)
    return _degrade.leave_one_group_out(
        ctx.judgments, ctx.pool, o["groups"], group, level, unjudged=unjudged, score_precision=ctx.score_precision
    )


def _mean_scores(ctx: _Context, qrels, measures: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``[measures × runs]`` mean scores of every run and ``[measures × runs × topics]`` per-topic scores
    (topics of the full judgments, NaN where the qrels lack the topic); one ``evaluate`` call on the converted runs."""
    from ir_incomplete.api import evaluate

    frame = evaluate(
        ctx.runs,
        qrels,
        measures,
        per_query=True,
        negative=ctx.negative,
        score_precision=ctx.score_precision,
        progress=False,  # the study's bar counts cells
    )
    m = pd.Index(measures).get_indexer(frame["measure"])
    r = pd.Index(ctx.run_names).get_indexer(frame["run"])
    t = pd.Index(ctx.topic_ids).get_indexer(frame["query_id"].astype(str))
    values = frame["value"].to_numpy(dtype=np.float64)
    shape = (len(measures), len(ctx.run_names))
    cell = np.ravel_multi_index((m, r), shape)
    total = np.bincount(cell, weights=values, minlength=shape[0] * shape[1]).reshape(shape)
    count = np.bincount(cell, minlength=shape[0] * shape[1]).reshape(shape)
    summed = _summed(measures)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(summed[:, None], total, total / count)
    per_topic = np.full(shape + (len(ctx.topic_ids),), np.nan)
    known = t >= 0
    per_topic[m[known], r[known], t[known]] = values[known]
    return means, per_topic


def _probe(measures: list[str], ctx: _Context, judgments, only_first_topic: bool) -> None:
    """Evaluate ``measures`` (on the first topic only, or on all), and when that fails with anything but
    a ValueError/TypeError (bad input explains itself), raise a ValueError naming the measure that fails
    alone. Measures are checked this way before the first grid cell, so a measure that cannot be
    evaluated stops the study before any cell is computed."""
    if not measures or not len(judgments.topic_ids):
        return
    rows = judgments.topic == 0 if only_first_topic else np.ones(len(judgments.grades), dtype=bool)
    qrels = judgments.frame(rows, judgments.grades)

    def attempt(chosen: list[str]) -> BaseException | None:
        try:
            _mean_scores(ctx, qrels, chosen)
        except (ValueError, TypeError):
            return None  # e.g. nothing to evaluate on one topic: the full judgments decide
        except Exception as exc:  # noqa: BLE001 - any other failure of a measure is reported with its name
            return exc
        return None

    if attempt(measures) is None:
        return
    for measure in measures:
        failure = attempt([measure])
        if failure is not None:
            detail = " ".join(str(failure).split()) or "no message"
            raise ValueError(
                f"measure {measure!r} cannot be evaluated ({type(failure).__name__}: {detail}); "
                f"check its parameters (ir_incomplete measures lists them)"
            ) from failure


def _run_task(ctx: _Context, task) -> tuple[np.ndarray, np.ndarray]:
    task = _Task(*task)
    if task.group is not None:  # logo: score the group's own runs only
        names = [n for n in ctx.run_names if ctx.options["groups"][n] == task.group]
        ctx = replace(ctx, runs=ctx.runs.select(names), run_names=names)  # gathered, not converted again
    return _mean_scores(ctx, _degraded(ctx, task.level, task.seed, task.group), ctx.measures)


def _watch_parent(parent: int, interval: float = 0.2) -> None:
    """Exit this worker process as soon as its parent process has gone (SIGKILL included): the worker is
    then re-parented, and ``os.getppid()`` changes."""
    import time

    while True:
        time.sleep(interval)
        if os.getppid() != parent:
            os._exit(1)


def _init_worker(ctx: _Context) -> None:
    global _WORKER_CONTEXT
    _WORKER_CONTEXT = ctx
    import signal

    # Ctrl-C reaches every process of the terminal's process group: the study process stops the workers
    # itself (and saves what they finished); a worker must not die half-way through a pipe message.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.name == "posix":
        import threading

        threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True, name="watch-parent").start()


def _worker_task(task) -> tuple[np.ndarray, np.ndarray]:
    if _WORKER_CONTEXT is None:  # pragma: no cover - the pool's initializer sets it
        raise RuntimeError("worker process without a study context (started without _init_worker)")
    return _run_task(_WORKER_CONTEXT, task)


def _progress_bar(total: int, progress: bool | None, desc: str):
    from ir_incomplete._progress import progress_bar

    return progress_bar(total, progress, desc, unit="cell")


def _stop(pool) -> None:
    """Cancel the queued cells of a ``ProcessPoolExecutor`` and terminate its workers (now, not after the
    cells they are computing)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(5)
    pool.shutdown(wait=True)


def _execute(
    ctx: _Context, tasks, n_jobs: int, client, progress: bool | None, desc: str, done=None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(means, per_topic)`` of every task (:func:`_run_task`), in the order of ``tasks``; ``done(i,
    result)`` is called in this process as soon as task ``i`` is finished. On any error or interrupt,
    queued tasks are cancelled and worker processes terminated before the exception propagates."""
    bar = _progress_bar(len(tasks), progress, desc)
    results: list[Any] = [None] * len(tasks)

    def finished(i: int, result) -> None:
        results[i] = result
        if done is not None:
            done(i, result)
        bar.update(1)

    try:
        if client is not None:
            shared = client.scatter(ctx, broadcast=True)
            futures = [client.submit(_run_task, shared, task, pure=False) for task in tasks]
            try:
                for i, fut in enumerate(futures):
                    finished(i, fut.result())
            except BaseException:
                cancel = getattr(client, "cancel", None)
                if cancel is not None:
                    with contextlib.suppress(Exception):  # the first error is the one to report
                        cancel(futures)
                raise
        elif n_jobs == 1 or len(tasks) <= 1:
            for i, task in enumerate(tasks):
                finished(i, _run_task(ctx, task))
        else:
            from concurrent.futures import ProcessPoolExecutor, as_completed

            pool = ProcessPoolExecutor(max_workers=min(n_jobs, len(tasks)), initializer=_init_worker, initargs=(ctx,))
            try:
                index_of = {pool.submit(_worker_task, task): i for i, task in enumerate(tasks)}
                for fut in as_completed(index_of):
                    finished(index_of[fut], fut.result())
            except BaseException:
                _stop(pool)
                raise
            pool.shutdown(wait=True)
    except KeyboardInterrupt:
        bar.leave = False  # tqdm: clear the bar instead of leaving a half-full one above the message
        raise
    finally:
        bar.close()
    return results


def robustness_study(
    runs: Any,
    qrels: Any,
    measures: Sequence[str],
    method: str = "sample",
    levels: Sequence[Any] | None = None,
    repeats: int = 10,
    seed: int = 0,
    reference: str | None = None,
    n_jobs: int = 1,
    client: Any = None,
    progress: bool | None = None,
    *,
    options: dict[str, Any] | None = None,
    filters: Sequence[str] | None = None,
    negative: str = "pooled_unjudged",
    score_precision: str = "float32",
    checkpoint: str | os.PathLike[str] | None = None,
    resume: str | os.PathLike[str] | None = None,
    _before_grid: Callable[[], object] | None = None,
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
        (:func:`~ir_incomplete.robustness.mixed_pool`; pool depths) or ``"logo"`` (leave one group out;
        levels are pool depths, or give one as ``options["depth"]``). Default levels:
        ``DEFAULT_LEVELS[method]``.

        ``"logo"`` (Zobel, SIGIR 1998; Fröbe et al., ECIR 2023, §4.1): the pool is the union of the
        top-k documents (k = level) of the pool runs; every run is scored once, on the judgments without
        the documents that only the pool runs of its own group put into that pool
        (:func:`~ir_incomplete.robustness.leave_one_group_out`), and all runs' scores are compared with
        their full-judgment scores: one row per measure and depth. The default depth 10 is the top-10
        pool of Fröbe et al. (who also filtered runs, see ``filters``); Zobel used TREC's depth-100
        pools. Choose the depth the judgments were pooled to.
    repeats
        Random draws per level (``"depth"`` and ``"logo"`` are deterministic and use one).
    seed
        Base seed (int ≥ 0); cell (level i, repeat r) uses ``SeedSequence([seed, i, r])``.
    reference
        ``None``: compare each measure with itself on the full qrels; a measure string: compare every
        measure with that measure on the full qrels.
    n_jobs
        Local worker processes (``-1``: one per CPU). Workers exit when this process dies.
    client
        A ``dask.distributed.Client`` (extra ``[dask]``): the grid runs on its cluster.
    progress
        A ``tqdm`` progress bar on stderr, one step per grid cell: ``None`` (default) when stderr is a
        terminal and the study is still running after 2 s, ``True`` always, ``False`` never. The
        results do not depend on it.
    options
        Method options: ``unjudged`` (``"mark"``/``"drop"``, all methods); ``min_relevant``, ``rel``
        (sample, stratified); ``min_nonrelevant`` (stratified); ``pool_runs`` (names of the runs that
        form pools; all runs by default; depth, mixed, logo); ``extra`` (mixed, default 1);
        ``groups`` (run → group mapping for every run, required for logo) and ``depth`` (logo pool
        depth, instead of ``levels``; default 10).
    filters
        Run filters (:data:`~ir_incomplete.robustness.RUN_FILTERS`): ``"top75"`` (Fröbe et al.),
        ``"retrieved95"`` (Ahlgren & Grönqvist), ``"above_q1"`` (Ferrante et al.); see
        :mod:`~ir_incomplete.robustness.filters`. ``"top75"`` and ``"above_q1"`` rank the runs by
        ``reference`` (by the first measure when ``reference`` is None) on the full judgments. Only
        the runs that pass every filter are scored and compared; pools are still formed from all runs
        (or ``pool_runs``), since filtering must not change the judgments.
    negative, score_precision
        Passed to :func:`ir_incomplete.evaluate`.
    checkpoint
        A folder (created if needed, holding no study yet) where every grid cell is saved as soon as it
        is finished, atomically: ``study.json`` (the parameters and digests of the judgments and runs)
        and one ``cell-*.npz`` per cell (its scores, exactly). An interrupted study (Ctrl-C raises
        :class:`StudyInterrupted`, a ``KeyboardInterrupt``, after cancelling the queued cells and
        stopping the workers) keeps its finished cells there.
    resume
        The ``checkpoint`` folder of an interrupted study: its finished cells are loaded and only the
        others are computed (and saved there). The results equal those of an uninterrupted study bit
        for bit, since every cell has its own seed. A ValueError names every difference when the study
        in the folder was run with other parameters, judgments or runs (or another version of
        ``ir_incomplete``).

    Returns
    -------
    :class:`StudyResult` ``(stats, scores, reference)``.

    Raises
    ------
    StudyInterrupted
        On Ctrl-C while the grid runs (see ``checkpoint``).
    """
    from ir_incomplete.api import as_measures
    from ir_incomplete.data import prepare_runs
    from ir_incomplete.robustness.degrade import RunPool, _check_int, _group_map, _judgments

    if method not in METHODS:
        raise ValueError(f"method={method!r} is not valid; choices: {', '.join(METHODS)}")
    if resume is not None and checkpoint is not None and os.path.abspath(resume) != os.path.abspath(checkpoint):
        raise ValueError(f"checkpoint={checkpoint!r} and resume={resume!r} differ: resume= continues in its folder")
    given_options = dict(options or {})
    options = dict(options or {})
    unknown = sorted(set(options) - set(_OPTIONS[method]))
    if unknown:
        raise ValueError(f"options {unknown} do not apply to method={method!r}; choices: {', '.join(_OPTIONS[method])}")
    if method == "logo" and "groups" not in options:
        raise ValueError("method='logo' needs options={'groups': {run name: group name, ...}}")
    filters = _check_filters(filters)
    repeats = _check_int(repeats, "repeats", 1)
    seed = _check_int(seed, "seed", 0)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or (n_jobs < 1 and n_jobs != -1):
        raise ValueError(f"n_jobs={n_jobs!r} is not valid; expected an integer >= 1, or -1 for one per CPU")
    n_jobs = (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)
    levels = _check_levels(method, levels, options.pop("depth", None))

    labels = [repr(m) for m in as_measures(measures)]
    if len(set(labels)) != len(labels):
        raise ValueError(f"measures lists a measure twice: {labels}")
    ref_label = repr(as_measures([reference])[0]) if reference is not None else None

    run_map = _canonical_runs(runs)
    run_names = list(run_map)
    judgments = _judgments(qrels)

    pool = None
    if method in ("depth", "mixed", "logo"):
        pool_runs = options.pop("pool_runs", None)
        pool_runs = run_names if pool_runs is None else list(pool_runs)
        missing = [r for r in pool_runs if r not in run_map]
        if missing:
            raise ValueError(f"options['pool_runs'] names runs that are not given: {missing[:10]}")
        pool = RunPool({r: run_map[r] for r in pool_runs}, score_precision)
        if method == "logo":
            mapping = _group_map(options["groups"], run_names)
            options["groups"] = {r: mapping[r] for r in run_names}
            options["pool_groups"] = frozenset(mapping[r] for r in pool.run_names)
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
        topic_ids=judgments.topic_ids,
    )

    # reference scores on the full judgments (and the filter measure's)
    ref_measures = labels if ref_label is None else [ref_label]
    _probe([m for m in labels if m not in ref_measures], ctx, judgments, only_first_topic=True)
    try:
        full, full_topic = _mean_scores(ctx, judgments_frame(judgments), ref_measures)
    except (ValueError, TypeError):
        raise
    except Exception:  # e.g. a provider's AssertionError on a parameter it lacks: name the measure
        _probe(ref_measures, ctx, judgments, only_first_topic=False)
        raise
    removed: list[str] = []
    if filters:
        kept = filter_runs(run_map, judgments_frame(judgments), filters, scores=pd.Series(full[0], index=run_names))
        if len(kept) < 2:
            raise ValueError(
                f"filters {filters} keep {len(kept)} of {len(run_names)} runs; a study compares at least 2"
            )
        removed = [r for r in run_names if r not in kept]
        keep = np.isin(np.array(run_names, dtype=object), kept)
        full, full_topic = full[:, keep], full_topic[:, keep]
        run_names = kept
        ctx = replace(ctx, runs=prepare_runs({r: run_map[r] for r in kept}, score_precision), run_names=kept)
    reference_frame = pd.DataFrame(
        {
            "measure": np.repeat(ref_measures, len(run_names)),
            "run": np.tile(np.array(run_names, dtype=object), len(ref_measures)),
            "value": full.ravel(),
        }
    )

    tasks = [_Task(li, level, r, _task_seed(seed, li, r)) for li, level in enumerate(levels) for r in range(n_repeats)]
    cells = tasks
    groups: list[str] = []
    if method == "logo":  # one task per (depth, group): each group's runs on their own judgments
        groups = sorted({options["groups"][r] for r in run_names})
        tasks = [t._replace(group=g) for t in cells for g in groups]
    # a full-size sample (fraction 1) keeps every judgment whatever the seed: evaluate it once
    same = [method in ("sample", "stratified") and t.level == 1.0 and t.repeat > 0 for t in tasks]
    unique_tasks = [t for t, dup in zip(tasks, same, strict=True) if not dup]
    # everything is checked, and the measures evaluated on the full judgments: the grid starts now
    if _before_grid is not None and resume is None:
        _before_grid()
    store = None
    if checkpoint is not None or resume is not None:
        from ir_incomplete.robustness._cells import CellStore, fingerprint

        parameters = {
            "method": method,
            "levels": levels,
            "repeats": n_repeats,
            "seed": seed,
            "measures": labels,
            "reference": ref_label,
            "options": {k: (options["groups"] if k == "groups" else v) for k, v in given_options.items()},
            "filters": filters,
            "negative": negative,
            "score_precision": score_precision,
        }
        store = CellStore(
            resume if resume is not None else checkpoint,  # type: ignore[arg-type]
            fingerprint(run_map, judgments_frame(judgments), parameters),
            resume=resume is not None,
            name="resume" if resume is not None else "checkpoint",
        )
    if _before_grid is not None and resume is not None:
        _before_grid()
    group_index = {g: i for i, g in enumerate(groups)}

    def key(task: _Task) -> tuple[int, int, int | None]:
        return task.level_index, task.repeat, None if task.group is None else group_index[task.group]

    loaded: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if store is not None and resume is not None:
        for k, task in enumerate(unique_tasks):
            cell = store.load(key(task), task.seed, len(labels), len(ctx.topic_ids))
            if cell is not None:
                loaded[k] = cell
    todo = [k for k in range(len(unique_tasks)) if k not in loaded]

    def save(i: int, result) -> None:
        if store is not None:
            task = unique_tasks[todo[i]]
            store.save(key(task), task.seed, result)

    try:
        computed = _execute(
            ctx, [unique_tasks[k] for k in todo], n_jobs, client, progress, desc=f"robustness ({method})", done=save
        )
    except KeyboardInterrupt:
        saved = store.saved if store is not None else 0
        raise StudyInterrupted(len(loaded) + saved, len(unique_tasks), store.folder if store else None) from None
    by_index = dict(loaded)
    by_index.update(zip(todo, computed, strict=True))
    unique_results = [by_index[k] for k in range(len(unique_tasks))]
    if method == "logo":
        results = _merge_groups(ctx, cells, unique_tasks, unique_results)
    else:
        by_level = {t.level_index: res for t, res in zip(unique_tasks, unique_results, strict=True) if t.repeat == 0}
        it = iter(unique_results)
        results = [by_level[t.level_index] if dup else next(it) for t, dup in zip(tasks, same, strict=True)]

    summed = _summed(labels)
    summed_ref = summed if ref_label is None else _summed(ref_measures)
    stat_rows, score_parts = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant score vectors give NaN correlations
        for task, (values, per_topic) in zip(cells, results, strict=True):
            for mi, label in enumerate(labels):
                ri = mi if ref_label is None else 0
                ref, est = _on_common_topics(
                    (full[ri], full_topic[ri], summed_ref[ri]), (values[mi], per_topic[mi], summed[mi])
                )
                row = {"measure": label, "level": task.level, "repeat": task.repeat}
                row.update(agreement(ref, est))
                row["rmse_topic"] = _rmse_pairs(full_topic[ri], per_topic[mi])
                stat_rows.append(row)
                score_parts.append(
                    pd.DataFrame(
                        {
                            "measure": label,
                            "level": [task.level] * len(run_names),
                            "repeat": task.repeat,
                            "run": run_names,
                            "value": est,
                            "reference": ref,
                        }
                    )
                )
    stats = pd.DataFrame(stat_rows)
    attrs = {"method": method, "reference": ref_label, "filters": filters, "runs_removed": removed}
    stats.attrs.update(attrs)
    scores = pd.concat(score_parts, ignore_index=True)
    scores.attrs.update(attrs)
    return StudyResult(stats=stats, scores=scores, reference=reference_frame)


def _summed(measures: list[str]) -> np.ndarray:
    """Which measures sum over topics (``ir_measures``' SumAgg, e.g. NumRet) rather than average."""
    from ir_measures.measures import SumAgg

    from ir_incomplete.api import as_measures

    return np.array([isinstance(x.aggregator(), SumAgg) for x in as_measures(measures)], dtype=bool)


def _on_common_topics(reference, estimate) -> tuple[np.ndarray, np.ndarray]:
    """Per-run aggregates of the reference and the estimate over one topic set: for each run, the topics
    both have a per-topic score for. Each side is ``(per-run aggregate, [runs × topics] scores, summed?)``;
    an aggregate whose topics already are the common ones is returned as it is (bit for bit)."""
    out = []
    present = [~np.isnan(side[1]) for side in (reference, estimate)]
    common = present[0] & present[1]
    for (aggregate, per_topic, summed), mine in zip((reference, estimate), present, strict=True):
        if np.array_equal(mine, common):
            out.append(aggregate)
            continue
        total = np.where(common, per_topic, 0.0).sum(axis=1)
        count = common.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(total if summed else total / count)
    return out[0], out[1]


def _merge_groups(ctx: _Context, cells, tasks, results) -> list[tuple[np.ndarray, np.ndarray]]:
    """Logo: assemble each cell's ``[measures × runs]`` means and per-topic scores from its groups."""
    n_m, n_t = len(ctx.measures), len(ctx.topic_ids)
    merged = [
        (np.full((n_m, len(ctx.run_names)), np.nan), np.full((n_m, len(ctx.run_names), n_t), np.nan)) for _ in cells
    ]
    position = {name: i for i, name in enumerate(ctx.run_names)}
    for task, (means, per_topic) in zip(tasks, results, strict=True):
        cols = [position[n] for n in ctx.run_names if ctx.options["groups"][n] == task.group]
        merged[task.level_index][0][:, cols] = means
        merged[task.level_index][1][:, cols] = per_topic
    return merged


def _rmse_pairs(reference: np.ndarray, estimate: np.ndarray) -> float:
    """RMS error over the (run, topic) pairs where both per-topic scores exist (NaN if none)."""
    both = np.isfinite(reference) & np.isfinite(estimate)
    if not both.any():
        return float("nan")
    return float(np.sqrt(np.mean((estimate[both] - reference[both]) ** 2)))


def judgments_frame(judgments) -> pd.DataFrame:
    """The full judgments as a qrels DataFrame (all rows, grades as given, negatives as −1)."""
    return judgments.frame(np.ones(len(judgments.grades), dtype=bool), judgments.grades)


def summarize(stats: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over repeats of every statistic (τ, ρ, RMSE, …) per (measure, level),
    in the order the measures and levels first appear: columns ``measure, level, repeats`` and, for each
    statistic column of ``stats`` (e.g. ``tau``), the mean (``tau``) and the standard deviation
    (``tau_std``, 0 for one repeat)."""
    needed = {"measure", "level", "repeat", "tau", "pearson", "rmse"}
    if not needed <= set(stats.columns):
        raise ValueError(f"stats must have columns {sorted(needed)} (found {list(stats.columns)})")
    columns = [c for c in stats.columns if c not in _STAT_KEYS]
    grouped = stats.groupby(["measure", "level"], sort=False)
    out = grouped[columns].mean()
    std = grouped[columns].std(ddof=1).fillna(0.0)
    out = pd.concat([out, std.add_suffix("_std")], axis=1)
    out.insert(0, "repeats", grouped.size())
    out = out.reset_index()
    return out[["measure", "level", "repeats"] + [c for col in columns for c in (col, f"{col}_std")]]
