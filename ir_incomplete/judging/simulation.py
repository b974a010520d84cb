"""Replay a judging method against an oracle qrels and measure how fast the system ranking converges.

:func:`simulate` asks a strategy for batches of documents, takes their grades from the oracle (a
document the oracle does not judge counts as not relevant, grade 0; each document handed out costs one
judgment) and, after each batch, scores every run with the judgments acquired so far. The curve
compares these scores with the scores on the whole oracle: Kendall's τ, τ_AP and the RMS error
(:mod:`ir_incomplete.robustness` statistics). :func:`plot_simulation` draws the curves.

:func:`simulate_design` (or ``simulate(runs, oracle, design=dict(budget=..., prior=..., rounds=...))``)
replays a *sampling design* instead: each repeat draws a probability sample in rounds
(:func:`~ir_incomplete.judging.sample_rounds`, the oracle judging), estimates every run and every pair of
runs with :func:`ir_incomplete.estimate`, and reports τ, RMSE and bias against the value with the whole
universe judged (:func:`~ir_incomplete.estimation.truth.design_truth`: the runs' top depth and the
judgments made before), the coverage of the intervals (run means and pair differences), their mean width and
the judgments spent: whether the intervals hold, and what they cost.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ir_incomplete._progress import check_progress, progress_bar
from ir_incomplete.judging._candidates import (
    Candidates,
    _judgment_frame,
    check_budget,
    check_positive_int,
    is_empty_qrels,
)

__all__ = ["simulate", "simulate_design", "plot_simulation", "DEFAULT_MEASURES", "CURVE_STATISTICS", "DESIGN_KEYS"]

DEFAULT_MEASURES = ("AP", "nDCG@10")
#: the statistics of each point of the curve
CURVE_STATISTICS = ("tau", "tau_ap", "rmse")
#: the settings of a sampling design that :func:`simulate_design` replays (:func:`~ir_incomplete.judging.sample_rounds`)
DESIGN_KEYS = (
    "budget",
    "rounds",
    "prior",
    "depth",
    "uniform",
    "certain",
    "design",
    "strata",
    "allocation",
    "min_per_topic",
)


def _read_runs(runs: Any) -> dict[str, pd.DataFrame]:
    """``{name: run frame}``: files read once, so that strategies and evaluation share them."""
    from ir_incomplete.api import as_run_mapping
    from ir_incomplete.data import run_columns

    out = {}
    for name, run in as_run_mapping(runs).items():
        q, d, s = run_columns(run)
        out[name] = pd.DataFrame(
            {"query_id": pd.Series(q, dtype=object).astype(str), "doc_id": pd.Series(d, dtype=object), "score": s}
        )
    if len(out) < 2:
        raise ValueError(f"simulate compares system rankings: give at least 2 runs (got {len(out)})")
    return out


def _resolve(strategy: Any) -> Any:
    from ir_incomplete.judging.pools import make_strategy

    if isinstance(strategy, str):
        return make_strategy(strategy)
    for method in ("start", "next_batch", "update"):
        if not callable(getattr(strategy, method, None)):
            raise TypeError(
                f"strategy {strategy!r} has no {method}() method; give a Strategy (start/next_batch/update) or a "
                f"method name (depth, budget, rrf, rbp, movetofront, bandit, judge_next)"
            )
    return strategy


def _checkpoints(budget: int, step: int | Sequence[int]) -> list[int]:
    if isinstance(step, (int, np.integer)) and not isinstance(step, (bool, np.bool_)):
        size = check_budget(step, "step")
        points = list(range(size, budget, size)) + [budget]
        return points
    if isinstance(step, (str, bytes)) or not hasattr(step, "__iter__"):
        raise ValueError(
            f"step={step!r} is not valid; expected an integer >= 1 or an increasing list of judgment counts"
        )
    points = [check_budget(s, "step") for s in step]
    if not points:
        raise ValueError("step is an empty list; give judgment counts such as [500, 1000, 2000]")
    if any(b <= a for a, b in zip(points, points[1:], strict=False)):
        raise ValueError(f"step={list(step)!r} must be strictly increasing judgment counts")
    if points[-1] > budget:
        raise ValueError(f"step lists {points[-1]} judgments, more than budget={budget}")
    return points


def _oracle_grades(oracle: pd.DataFrame) -> pd.Series:
    frame = oracle[oracle["relevance"] >= 0]
    index = pd.MultiIndex.from_arrays([frame["query_id"].astype(str), frame["doc_id"].astype(str)])
    return pd.Series(frame["relevance"].to_numpy(dtype=np.int64), index=index)


def _oracle_of(run_map: dict[str, pd.DataFrame], oracle_qrels: Any) -> tuple[pd.DataFrame, np.ndarray]:
    """The oracle's judgments of the runs' queries and those queries; ``ValueError`` when the oracle judges
    none of some query the runs answer."""
    from ir_incomplete.estimation.truth import check_oracle

    oracle = _judgment_frame(oracle_qrels, "oracle_qrels")
    topics = pd.unique(np.concatenate([f["query_id"].to_numpy(dtype=object) for f in run_map.values()]))
    check_oracle(oracle, topics)
    return oracle[oracle["query_id"].isin(set(topics))].reset_index(drop=True), topics


def simulate(
    runs: Any,
    oracle_qrels: Any,
    strategy: Any = None,
    budget: int | None = None,
    step: int | Sequence[int] | None = None,
    start: Any = None,
    measures: Sequence[Any] = DEFAULT_MEASURES,
    *,
    score_precision: str = "float32",
    progress: bool | None = None,
    design: Mapping[str, Any] | None = None,
    repeats: int | None = None,
    seed: int | None = None,
    predictions: Any = None,
    interval: float | None = None,
    control: str | None = None,
) -> pd.DataFrame:
    """Replay ``strategy`` against ``oracle_qrels``: judgments spent → τ, τ_AP, RMSE of every measure.

    With ``design=`` instead of ``strategy``, ``budget`` and ``step``: replay a sampling design
    (:func:`simulate_design`, which takes ``repeats``, ``seed``, ``predictions``, ``interval`` and
    ``control``): per repeat and measure the design-based estimates' τ, RMSE, bias and the coverage
    and width of their intervals.

    Parameters
    ----------
    runs
        Anything :func:`ir_incomplete.evaluate` accepts (at least 2 runs). Files are read once.
    oracle_qrels
        The complete judgments (any qrels form). A document the oracle does not judge (absent, or a
        negative grade) counts as not relevant, grade 0. The oracle must judge every query the runs
        answer (``ValueError`` naming the missing ones); oracle queries no run answers are ignored.
    strategy
        A :class:`~ir_incomplete.judging.strategy.Strategy` object, or a method name: ``"depth"``,
        ``"budget"``, ``"rrf"``, ``"rbp"``, ``"movetofront"``, ``"bandit"`` (default options) or
        ``"judge_next"`` (:mod:`~ir_incomplete.judging.mtc`, when installed).
    budget
        Judgments to spend (an integer ≥ 1); the simulation stops earlier when the strategy has nothing
        more to hand out.
    step
        Judgments per round (an integer: a point of the curve after every ``step`` judgments and at
        ``budget``), or the increasing judgment counts at which to measure (each round spends up to the
        next count: e.g. the sizes of depth-k pools).
    start
        Judgments made before the simulation (any qrels form, graded as given, not taken from the
        oracle); they do not count as spent, and the reference takes their grades where the oracle
        grades them otherwise (so that judging every pair reaches it). They may judge only queries the
        runs answer (``ValueError`` naming the others). ``None``: start from nothing.
    measures
        Measures to score the runs with (default ``AP`` and ``nDCG@10``; any measure
        :func:`ir_incomplete.evaluate` computes).
    progress
        A ``tqdm`` bar on stderr, one step per point of the curve: ``None`` (default) when stderr is a
        terminal and the replay is still running after 2 s, ``True`` always, ``False`` never. The values
        do not depend on it.

    Returns
    -------
    DataFrame, one row per (point, measure): ``judgments`` (spent so far), ``judged`` (judgments known,
    with ``start``), ``measure``, ``tau`` (Kendall τ-b), ``tau_ap`` (τ_AP of the estimate against the
    oracle's ranking), ``rmse`` (of the per-run means), ``relevant`` (relevant documents found, grade ≥ 1)
    and ``seconds`` (the strategy's time so far, excluding scoring). The scores are the mean over the
    queries the runs answer; a query without any judgment yet scores the measure's default value for no
    relevant document (0). ``attrs``: ``strategy`` (its name), ``reference`` (the per-run means with the
    oracle's judgments and ``start``'s, a runs × measures DataFrame), ``budget``.
    """
    from ir_incomplete.api import as_measures, evaluate
    from ir_incomplete.data import prepare_runs
    from ir_incomplete.robustness.compare import kendall_tau, rmse, tau_ap

    design_options = {
        "repeats": repeats,
        "seed": seed,
        "predictions": predictions,
        "interval": interval,
        "control": control,
    }
    if design is not None:
        given = [
            name for name, value in (("strategy", strategy), ("budget", budget), ("step", step)) if value is not None
        ]
        if given:
            raise ValueError(
                f"design= replays a sampling design (its budget is design['budget']); {given[0]}= belongs to the "
                f"replay of a judging strategy: give design= or strategy, budget and step"
            )
        options = {k: v for k, v in design_options.items() if v is not None}
        return simulate_design(
            runs,
            oracle_qrels,
            design,
            measures=measures,
            start=start,
            score_precision=score_precision,
            progress=progress,
            **options,
        )
    if strategy is None or budget is None or step is None:
        lacking = [n for n, v in (("strategy", strategy), ("budget", budget), ("step", step)) if v is None]
        raise TypeError(
            f"simulate() needs strategy, budget and step (the replay of a judging strategy) or design= (the "
            f"replay of a sampling design); {lacking[0]} is missing"
        )
    extra = [name for name, value in design_options.items() if value is not None]
    if extra:
        raise ValueError(f"{extra[0]}= belongs to the replay of a sampling design (design=...), not of a strategy")
    budget = check_budget(budget)
    check_progress(progress)
    points = _checkpoints(budget, step)
    strategy = _resolve(strategy)
    measure_objs = as_measures(list(measures) if not isinstance(measures, str) else [measures])
    names = [repr(m) for m in measure_objs]
    run_map = _read_runs(runs)
    oracle, topics = _oracle_of(run_map, oracle_qrels)
    grades = _oracle_grades(oracle)
    prepared = prepare_runs(run_map, score_precision)
    run_names = list(run_map)
    topic_index = pd.Index(topics)

    def means(qrels: pd.DataFrame) -> pd.DataFrame:
        frame = evaluate(prepared, qrels, measure_objs, per_query=True, score_precision=score_precision, progress=False)
        frame = frame[frame["query_id"].astype(str).isin(topic_index)]
        wide = frame.pivot_table(index=["measure", "run"], columns="query_id", values="value", aggfunc="first")
        wide = wide.reindex(columns=topic_index, fill_value=0.0).fillna(0.0)
        out = wide.mean(axis=1).unstack("measure")
        return out.reindex(index=run_names, columns=names, fill_value=0.0)

    start_frame = None if is_empty_qrels(start) else _start_of(start, topics)
    # the complete judgments: what judging every pair gives, the start judgments graded as given
    reference = means(_graded(oracle, start_frame))
    candidates = Candidates(run_map, score_precision)
    t0 = time.perf_counter()
    state = strategy.start(candidates if _takes_candidates(strategy) else run_map, start_frame)
    elapsed = time.perf_counter() - t0
    acquired: list[pd.DataFrame] = [] if start_frame is None else [start_frame[start_frame["relevance"] >= 0]]
    n_start = 0 if start_frame is None else int((start_frame["relevance"] >= 0).sum())
    spent, found = 0, 0
    rows = []
    label = getattr(strategy, "name", type(strategy).__name__)
    bar = progress_bar(len(points), progress, f"simulate {label}", "round")
    for point in points:
        exhausted = False
        while spent < point:
            t0 = time.perf_counter()
            batch = strategy.next_batch(state, point - spent)
            elapsed += time.perf_counter() - t0
            if len(batch) == 0:
                exhausted = True
                break
            if len(batch) > point - spent:
                raise ValueError(f"strategy {strategy!r} returned {len(batch)} pairs when asked for {point - spent}")
            keys = pd.MultiIndex.from_arrays([batch["query_id"].astype(str), batch["doc_id"].astype(str)])
            rel = grades.reindex(keys).fillna(0).to_numpy(dtype=np.int64)
            judged = pd.DataFrame(
                {
                    "query_id": batch["query_id"].astype(str).to_numpy(dtype=object),
                    "doc_id": batch["doc_id"].astype(str).to_numpy(dtype=object),
                    "relevance": rel,
                }
            )
            t0 = time.perf_counter()
            strategy.update(state, judged)
            elapsed += time.perf_counter() - t0
            acquired.append(judged)
            spent += len(judged)
            found += int((rel >= 1).sum())
        if acquired:
            qrels = pd.concat(acquired, ignore_index=True)
            if qrels.duplicated(["query_id", "doc_id"]).any():
                raise ValueError(f"strategy {strategy!r} handed out a (query, document) pair twice")
            estimate = means(qrels)
        else:
            estimate = pd.DataFrame(0.0, index=run_names, columns=names)
        for name in names:
            ref, est = reference[name], estimate[name]
            rows.append(
                {
                    "judgments": spent,
                    "judged": spent + n_start,
                    "measure": name,
                    "tau": kendall_tau(ref, est),
                    "tau_ap": tau_ap(ref, est),
                    "rmse": rmse(ref, est),
                    "relevant": found,
                    "seconds": elapsed,
                }
            )
        bar.update(1)
        if exhausted:
            break
    bar.close()
    curve = pd.DataFrame(rows)
    curve.attrs.update(
        {"strategy": getattr(strategy, "name", type(strategy).__name__), "reference": reference, "budget": budget}
    )
    return curve


def _check_design(design: Any) -> dict[str, Any]:
    if not isinstance(design, Mapping):
        raise TypeError(
            f"design={design!r} is not valid; expected a dict of sample_rounds settings, e.g. "
            f"dict(budget=500, prior='judge_next', rounds=2)"
        )
    unknown = [str(k) for k in design if k not in DESIGN_KEYS]
    if unknown:
        raise ValueError(f"design has no setting {unknown[0]!r}; settings: {', '.join(DESIGN_KEYS)}")
    if "budget" not in design:
        raise ValueError("design needs a budget (the expected number of judgments), e.g. dict(budget=500)")
    out = {"rounds": 1, **dict(design)}
    check_budget(out["budget"])
    return out


def _start_of(start: Any, topics: np.ndarray) -> pd.DataFrame:
    """The judgments made before a design replay, ``ValueError`` when they judge a query no run answers
    (as :func:`simulate` refuses them: a design draws from the runs' queries only, and dropping them would
    hide a mismatch of query ids)."""
    frame = _judgment_frame(start, "start")
    stray = pd.unique(frame.loc[~frame["query_id"].isin(set(topics)), "query_id"].to_numpy(dtype=object))
    if len(stray):
        raise ValueError(
            f"start judges {len(stray)} quer{'y' if len(stray) == 1 else 'ies'} that no run answers (first: "
            f"{', '.join(map(repr, stray[:5]))}); a design draws from the runs' queries, so give judgments of "
            f"the runs' queries only (e.g. start[start.query_id.isin(...)])"
        )
    return frame


def _graded(oracle: pd.DataFrame, start: pd.DataFrame | None) -> pd.DataFrame:
    """The complete judgments of a replay: the start judgments graded as given (grade ≥ 0), every other pair
    as the oracle grades it."""
    if start is None:
        return oracle
    given = start[start["relevance"] >= 0]
    keys = pd.MultiIndex.from_arrays([given["query_id"].astype(str), given["doc_id"].astype(str)])
    rest = oracle[~pd.MultiIndex.from_arrays([oracle["query_id"].astype(str), oracle["doc_id"].astype(str)]).isin(keys)]
    return pd.concat([rest, given], ignore_index=True)


def _covers(lo: np.ndarray, hi: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """``lo <= truth <= hi``, up to rounding (1e-12 relative): a complete design's zero-width interval
    covers the value computed the same way."""
    slack = 1e-12 * np.maximum(np.abs(truth), 1.0)
    return (lo - slack <= truth) & (truth <= hi + slack)


def simulate_design(
    runs: Any,
    oracle_qrels: Any,
    design: Mapping[str, Any],
    *,
    repeats: int = 10,
    seed: int = 0,
    measures: Sequence[Any] = DEFAULT_MEASURES,
    start: Any = None,
    predictions: Any = None,
    interval: float = 0.9,
    control: str = "auto",
    score_precision: str = "float32",
    progress: bool | None = None,
) -> pd.DataFrame:
    """Replay a sampling design against ``oracle_qrels``: per repeat and measure, how close the
    design-based estimates come to the complete judgments and how often their intervals hold.

    Every repeat draws and judges a design with :func:`~ir_incomplete.judging.sample_rounds` (``design``:
    its settings ``budget``, ``rounds`` (default 1), ``prior`` (default ``"judge_next"``), ``depth``
    (default 100), ``uniform``, ``certain``, ``design`` (``"poisson"`` or ``"stratified"``), ``strata``,
    each checked by :func:`~ir_incomplete.judging.sample` as it checks its own arguments; the oracle
    judges, a pair it does not judge counts 0; repeat ``r`` (from 0) has seed ``seed + r``), then
    estimates every run's mean and every pair of runs' difference with :func:`ir_incomplete.estimate`
    (``pairs=False`` and ``pairs=True``; ``control``, ``interval``; ``predictions``, automatic labels, go
    to both the sample and the estimate). The truth is what the estimates target,
    :func:`~ir_incomplete.estimation.truth.design_truth`: each measure with every pair of the design's
    universe judged — the runs' top ``depth`` and the ``start`` pairs (graded as given; every other pair
    by the oracle), which count in R also where no run retrieves them — and every other document
    nonrelevant, over all the runs' queries. A census (a budget that judges every pair) therefore has
    bias 0 and coverage 1.

    Parameters
    ----------
    runs
        Anything :func:`ir_incomplete.evaluate` accepts (at least 2 runs). Files are read once.
    oracle_qrels
        The complete judgments (any qrels form); it must judge every query the runs answer (ids compared
        as text: ``'01'`` is not ``'1'``; ``ValueError`` naming the queries it misses).
    measures
        Measures :func:`ir_incomplete.estimate` knows (``AP@k``, ``nDCG@k``, ``P@k``, ``RBP(p=..)@k``,
        ``R``; ``AP`` and ``nDCG`` are cut at the design's depth). Default ``AP`` and ``nDCG@10``.
    start
        Judgments made before (any qrels form, graded as given, also where the oracle grades them
        otherwise): the certainty stratum of round 1, not counted as spent, part of the universe also
        outside the runs' top ``depth``. They may judge only queries the runs answer (``ValueError``
        naming the others).
    progress
        A ``tqdm`` bar on stderr, one step per repeat (``None``: automatic).

    Returns
    -------
    DataFrame, one row per (repeat, measure): ``repeat``, ``seed``, ``measure``, ``judgments`` (pairs the
    oracle judged), ``relevant`` (of them, grade ≥ 1), ``tau`` (Kendall τ-b of the estimates against the
    truth), ``tau_ap``, ``rmse`` and ``bias`` (mean of estimate − truth) over the runs, ``coverage``
    (share of the runs whose interval holds the truth), ``pair_coverage`` (share of the pairs of runs
    whose difference's interval holds the true difference), ``width`` and ``pair_width`` (mean interval
    widths). ``attrs``: ``reference`` (the truth, runs × measures), ``design`` (the settings),
    ``repeats``, ``seed``, ``interval``.
    """
    from ir_incomplete.data import prepare_runs
    from ir_incomplete.estimation import estimate
    from ir_incomplete.estimation.truth import design_truth
    from ir_incomplete.judging.rounds import sample_rounds
    from ir_incomplete.robustness.compare import kendall_tau, tau_ap

    settings = _check_design(design)
    repeats = check_positive_int(repeats, "repeats", " (draws of the design to simulate)")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed={seed!r} is not valid; expected an integer >= 0")
    check_progress(progress)
    measure_list = [measures] if isinstance(measures, str) else list(measures)
    run_map = _read_runs(runs)
    oracle, topics = _oracle_of(run_map, oracle_qrels)
    start_frame = None if is_empty_qrels(start) else _start_of(start, topics)
    prepared = prepare_runs(run_map, score_precision)
    run_names = list(run_map)
    reference = pd.DataFrame()
    names: list[str] = []
    rows = []
    bar = progress_bar(repeats, progress, "simulate design", "repeat")
    for r in range(repeats):
        # every setting of the design is checked by sample() itself, with its messages
        drawn = sample_rounds(
            prepared,
            settings["budget"],
            settings["rounds"],
            oracle,
            qrels=start_frame,
            predictions=predictions,
            seed=int(seed) + r,
            score_precision=score_precision,
            progress=False,
            **{k: v for k, v in settings.items() if k not in ("budget", "rounds")},
        )
        if r == 0:
            # the truth, on the universe the estimates target: the runs' top depth and the start pairs, the
            # same in every repeat; the start pairs graded as given (as the estimates read them), the rest by
            # the oracle
            truth = design_truth(
                prepared, _graded(oracle, start_frame), drawn.design, measure_list, score_precision=score_precision
            )
            names = list(pd.unique(truth["measure"]))
            reference = truth.pivot(index="run", columns="measure", values="value").reindex(
                index=run_names, columns=names
            )
        common = dict(predictions=predictions, interval=interval, control=control, score_precision=score_precision)
        means = estimate(prepared, drawn.judgments, drawn.design, measure_list, **common)
        diffs = estimate(prepared, drawn.judgments, drawn.design, measure_list, pairs=True, **common)
        spent = int(drawn.rounds["judged"].sum())
        relevant = int(drawn.rounds["relevant"].sum())
        for name in names:
            part = means[means["measure"] == name].set_index("run").reindex(run_names)
            ref = reference[name].to_numpy(dtype=float)
            est = part["value"].to_numpy(dtype=float)
            pair = diffs[diffs["measure"] == name]
            true_diff = (
                reference[name].reindex(pair["run_a"]).to_numpy() - reference[name].reindex(pair["run_b"]).to_numpy()
            )
            lo, hi = part["lo"].to_numpy(dtype=float), part["hi"].to_numpy(dtype=float)
            plo, phi = pair["lo"].to_numpy(dtype=float), pair["hi"].to_numpy(dtype=float)
            rows.append(
                {
                    "repeat": r,
                    "seed": int(seed) + r,
                    "measure": name,
                    "judgments": spent,
                    "relevant": relevant,
                    "tau": kendall_tau(pd.Series(ref, index=run_names), pd.Series(est, index=run_names)),
                    "tau_ap": tau_ap(pd.Series(ref, index=run_names), pd.Series(est, index=run_names)),
                    "rmse": float(np.sqrt(np.mean((est - ref) ** 2))),
                    "bias": float(np.mean(est - ref)),
                    "coverage": float(np.mean(_covers(lo, hi, ref))),
                    "pair_coverage": float(np.mean(_covers(plo, phi, true_diff))) if len(pair) else np.nan,
                    "width": float(np.mean(hi - lo)),
                    "pair_width": float(np.mean(phi - plo)) if len(pair) else np.nan,
                }
            )
        bar.update(1)
    bar.close()
    out = pd.DataFrame(rows)
    shown = dict(settings)
    if not isinstance(shown.get("prior", ""), str):
        shown["prior"] = getattr(shown["prior"], "name", type(shown["prior"]).__name__)
    out.attrs.update(
        {"reference": reference, "design": shown, "repeats": repeats, "seed": int(seed), "interval": interval}
    )
    return out


def _takes_candidates(strategy: Any) -> bool:
    """The strategies of this package start from the one :class:`Candidates` table built here (at
    ``score_precision``); others receive the runs (``{name: run frame}``, as the protocol says)."""
    from ir_incomplete.judging.mtc import JudgeNext
    from ir_incomplete.judging.pools import _ArmPool, _StaticPool

    return isinstance(strategy, (_ArmPool, _StaticPool, JudgeNext))


def plot_simulation(
    curves: pd.DataFrame | dict[str, pd.DataFrame],
    statistic: str = "tau",
    *,
    measures: Sequence[str] | None = None,
    path: str | os.PathLike | None = None,
    ax: Any = None,
    targets: Sequence[float] = (),
):
    """Plot simulation curves: judgments spent (x) against ``statistic`` (``"tau"``, ``"tau_ap"`` or
    ``"rmse"``), one panel per measure, one line per strategy.

    ``curves``: one :func:`simulate` result, ``{label: result}``, or a DataFrame with a ``strategy``
    column. ``targets``: horizontal reference lines (e.g. ``(0.9,)``). ``path``: save the figure there.
    Draws on a new ``matplotlib.figure.Figure`` (no pyplot state) or on the given axes (one per
    measure); returns the ``Figure``.
    """
    from matplotlib.figure import Figure

    if statistic not in CURVE_STATISTICS:
        raise ValueError(f"statistic={statistic!r} is not valid; choices: {', '.join(CURVE_STATISTICS)}")
    if isinstance(curves, pd.DataFrame):
        if "strategy" in curves.columns:
            curves = {str(k): v for k, v in curves.groupby("strategy", sort=False)}
        else:
            curves = {str(curves.attrs.get("strategy", "strategy")): curves}
    if not curves:
        raise ValueError("no curves to plot")
    all_measures = list(dict.fromkeys(m for c in curves.values() for m in c["measure"]))
    chosen = list(measures) if measures is not None else all_measures
    unknown = [m for m in chosen if m not in all_measures]
    if unknown:
        raise ValueError(f"no curve for measure {unknown[0]!r}; measures: {', '.join(all_measures)}")
    if ax is None:
        fig = Figure(figsize=(5.2 * len(chosen), 3.8), layout="constrained")
        axes = fig.subplots(1, len(chosen), squeeze=False)[0]
    else:
        axes = np.atleast_1d(ax)
        fig = axes[0].get_figure()
        if len(axes) != len(chosen):
            raise ValueError(f"ax holds {len(axes)} axes for {len(chosen)} measures")
    labels = {"tau": "Kendall τ", "tau_ap": "τ_AP", "rmse": "RMSE"}
    for axis, measure in zip(axes, chosen, strict=True):
        for label, curve in curves.items():
            part = curve[curve["measure"] == measure]
            axis.plot(part["judgments"], part[statistic], marker=".", label=label)
        for target in targets:
            axis.axhline(target, color="grey", linewidth=0.8, linestyle="--")
        axis.set_title(measure)
        axis.set_xlabel("judgments")
        axis.set_ylabel(labels[statistic])
        axis.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
