"""Design-based estimates with intervals that hold: AP@k, nDCG@k, P@k, RBP and R from a probability sample.

:func:`estimate` reads a *design* (the judged pairs and each one's inclusion probability π, as
:func:`ir_incomplete.judging.sample` draws it), the judgments of those pairs and the runs, and returns
every run's mean over the topics (or every pair of runs' difference) with an interval.

**What is estimated.** The *universe* is the set of (topic, document) pairs in the top ``depth`` of the
runs the design was drawn from (``design.attrs["runs"]``, else every run given), plus the certainty pairs
(π = 1) of the design: the pairs judged already (the ``qrels`` given to ``sample``, earlier rounds), even
where they lie outside those runs' top ``depth``, so that every known relevant document counts in R, as
in trec_eval's R. The target of every estimate is the value that judging the whole universe would
give on the design's topics, documents outside the universe counting as nonrelevant; the mean over
topics counts a topic a run does not answer as 0 (trec_eval's ``-c``). A run whose top ``k`` reaches
outside the universe (a run evaluated later) gets the share of its top-``k`` rows that lie outside in
the ``outside`` column and a warning: those documents count as nonrelevant, so its estimate is of a
different quantity.

**Estimators** (:mod:`ir_incomplete.kernels.design`): Horvitz–Thompson pseudo-judgments
``ŷ = f + S (y − f)/π`` (statAP's estimator of AP for ``f = 0``; Aslam, Pavlu & Yilmaz, SIGIR 2006) and
the difference estimator with a control variate ``f`` (model-assisted; Särndal, Swensson & Wretman,
1992, ch. 6): ``control="labels"`` uses automatic labels (``predictions=``) through their calibration,
the share of each predicted grade's sampled pairs judged with each grade (π-weighted, the pairs of the
random part of the sample); ``control="model"`` does the same with cells of the runs' reciprocal-rank
fusion score (10 quantile bins) — a relevance model fitted on the judged sample; ``"labels+model"`` their
product cells. A cell with fewer than ``min_cell`` random pairs uses all of them. ``control="none"``
is plain Horvitz–Thompson. Any ``f`` keeps the estimator (nearly) unbiased: poor labels cost width,
never coverage.

**Intervals.** Linearised variance under Poisson sampling (every pair drawn independently; the
fixed-size stratified design uses the without-replacement variance within its strata), plus AP's
second-order term (its numerator's products of two pseudo-judgments), with the ratio estimators (AP,
nDCG) corrected for their first-order bias. The quantile is Student's t with Satterthwaite's effective
degrees of freedom of the variance, ``(Σ_u c_u)² / Σ_u c_u²`` over the per-pair terms ``c_u = (1 − π_u)
z_u²`` (column ``df``): when a few sampled relevant documents with large weights carry the variance, the
variance is itself uncertain and a normal interval is too short (measured on TREC-COVID with round-1
judgments + 2,000 sampled, 6 seeds: normal intervals covered 0.78 (AP@100) and 0.73 (nDCG@10) of the
runs, these 0.82 and 0.87; from no judgments 0.91 / 0.90 become 0.93 / 0.94). The half-width is
``t·√(se² + b̂²)``, ``b̂`` the ratio-bias correction subtracted from the value (column ``delta`` = ``b̂/se``):
the correction is itself estimated, with an error of its own size where it matters (TREC-COVID round 1 +
2,000, AP@100 run means: 0.83 without this allowance, 0.87 with it). Topics are fixed: the interval covers
the error from judging a sample rather than the universe, not topic sampling.

**Where the design cannot back the interval** (column ``reliable``, see :class:`_Diagnostics`): with few
random draws per topic beyond a certainty stratum, or sparse relevant documents in a large universe, most
samples miss some relevant documents; a topic's R̂ (nDCG's ideal DCG) is then too low, the ratio too high,
and the design-based variance cannot see what was not drawn. A row is flagged when ``|delta| > 1``, when
the design-based variance is below the *anticipated* one (a pooled relevance model's expectation over
every pair not judged with certainty, :func:`~ir_incomplete.kernels.design.anticipated_variance`; column
``seen``) for most runs, or when more than 15 % of the topics drew no relevant pair at random; one
warning names how many rows, why, and about how many random judgments per topic would be needed. Measured
(``examples/design_evidence.py --full``, 20 seeds, 10 settings, 3 labelers): reliable rows covered
0.82–0.97 (most 0.86–0.95); every setting whose intervals failed (Robust04 with a depth-10 pool, nDCG@10 on
a judged depth-10 pool, a sparse synthetic collection's AP) is flagged.

Default control variate (``control="auto"``): the fitted relevance model (``model``; ``labels+model`` with
predictions), each cell's rate scaled per topic (``f_u = β_t p_c(u)``, ``β_t`` the π-weighted ratio of the
topic's judged to predicted relevant pairs): topics differ in how many relevant documents they have, and
cells pooled over topics made the estimated R negative on small topics. The measure names (``StatAP``, …)
default to ``none`` so that every front door, including ``ir_measures`` which sees one run at a time,
gives the same number.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ir_incomplete import _progress
from ir_incomplete.data.columns import _ids
from ir_incomplete.estimation.control import CONTROLS, _cells, _pooled_shares, _predicted, _scaled_per_topic
from ir_incomplete.estimation.design_file import (
    DESIGN_COLUMNS,
    DESIGN_KINDS,
    _grades,
    _plain_value,
    check_design,
    design_text,
    read_design,
    read_judgments,
    write_design,
)
from ir_incomplete.estimation.intervals import (
    DELTA_MAX,
    SEEN_MIN,
    STARVED_MAX,
    _Diagnostics,
    _quantile,
    _ratio,
    _Variance,
    _warn_unreliable,
)
from ir_incomplete.estimation.universe import Estimand, Universe, _natural, check_universe, parse_estimand
from ir_incomplete.kernels.design import Items, Units, estimate_measure

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = [
    "estimate",
    "Universe",
    "Estimand",
    "read_design",
    "write_design",
    "design_text",
    "read_judgments",
    "check_design",
    "parse_estimand",
    "CONTROLS",
    "DELTA_MAX",
    "SEEN_MIN",
    "STARVED_MAX",
    "DESIGN_COLUMNS",
    "DESIGN_KINDS",
    "_grades",
    "_natural",
    "_plain_value",
]


#: the name of a run given without one (:func:`ir_incomplete.api.as_run_mapping`; the ``ir_measures`` provider)
_UNNAMED_RUN = "run"


def _warn_outside(names: list[str], share: np.ndarray, est: Estimand) -> None:
    """Warn about the runs whose top ``k`` reaches outside the universe (with any form of the output)."""
    flagged = [names[i] for i in np.flatnonzero(share > 0)]
    if flagged:
        warnings.warn(
            f"{len(flagged)} run(s) retrieve documents outside the design's universe in their top "
            f"{est.k} (e.g. {flagged[0]!r}: {share[names.index(flagged[0])]:.1%}); those count as "
            f"nonrelevant, so their {est.name} estimates another quantity (column 'outside')",
            stacklevel=4,
        )


def _warn_unbacked(blind: list[tuple[str, str]]) -> None:
    """Warn about run means whose interval the sample cannot back: an interval of width 0 although the
    run's top k holds pairs nobody judged (too few random pairs were drawn, or none relevant, to see the
    variance there). The value is still the design-based estimate; its interval does not hold."""
    if blind:
        run, measure = blind[0]
        warnings.warn(
            f"{len(blind)} run mean(s) have an interval of width 0 although their top k holds pairs nobody judged "
            f"(e.g. {run!r}, {measure}): the sample drew too few random pairs to estimate the variance there, so "
            f"the interval does not hold; judge more pairs (a larger budget)",
            stacklevel=4,
        )


def _check_depth(depth: Any, recorded: Any) -> int:
    """The universe's depth: ``depth=`` (an integer >= 1, at most the design's) or the design's own."""
    if depth is not None and (
        isinstance(depth, (bool, np.bool_)) or not isinstance(depth, (int, np.integer)) or depth < 1
    ):
        raise ValueError(f"depth={depth!r} is not an integer >= 1 (the ranks per run and query of the universe)")
    if recorded is None:
        if depth is None:
            raise ValueError(
                "the design records no depth (a DataFrame whose attrs were lost, or a file without its '# design' "
                "line): give depth= (the ranks per run and query it was drawn from)"
            )
        return int(depth)
    if isinstance(recorded, bool) or not isinstance(recorded, (int, np.integer)) or recorded < 1:
        raise ValueError(f"the design's recorded depth {recorded!r} is not an integer >= 1")
    if depth is not None and depth > recorded:
        raise ValueError(
            f"depth={depth} is deeper than the design's depth {recorded}: the pairs below rank {recorded} were never "
            f"sampled, so they cannot be estimated; leave depth= out (cut-offs up to {recorded} are estimated)"
        )
    if depth is not None and depth < recorded:
        raise ValueError(
            f"depth={depth} differs from the design's depth {recorded}: the universe is the runs' top {recorded}; "
            f"leave depth= out and ask for the cut-off you need (e.g. P@{depth})"
        )
    return int(recorded)


def estimate(
    runs: Any,
    judgments: Any,
    design: Any,
    measures: Any,
    *,
    predictions: Any = None,
    interval: float = 0.9,
    pairs: bool | str = False,
    pair_runs: Any = None,
    per_query: bool = False,
    control: str = "auto",
    depth: int | None = None,
    universe: str = "runs",
    min_cell: int = 20,
    score_precision: str = "float32",
    progress: bool | None = None,
) -> pd.DataFrame:
    """Design-based estimates and intervals of run means (or, ``pairs=True``, of every pair's difference).

    ``runs``: anything :func:`ir_incomplete.evaluate` accepts; ``judgments``: qrels with a grade for every
    design pair (more are ignored), or a list of qrels combined (:func:`read_judgments`); ``design``:
    the DataFrame or file of :func:`ir_incomplete.judging.sample` (``query_id, doc_id, pi``);
    ``measures``: ``AP@k``, ``nDCG@k``, ``P@k``, ``RBP(p=..)@k``, ``R``.
    ``predictions``: automatic labels (any form :func:`ir_incomplete.predictions.read_predictions`
    reads), used only as a control variate; ``control``: ``auto`` (``labels+model`` with predictions, else
    ``model``; ``none`` with ``universe="design"``),
    ``none``, ``labels``, ``model``, ``labels+model`` (see the module docstring). ``interval``: the
    level of the two-sided interval (Student's t with Satterthwaite's ``df``, see the module
    docstring). ``depth``: the universe's depth (default: the design's).
    ``universe``: ``"runs"`` (the top ``depth`` of the runs the design was drawn from, all of which must
    be given, plus the design's certainty pairs: see the module docstring) or ``"design"`` (the design's
    pairs plus the top ``depth`` of the runs given: for evaluating runs one at a time, as ``ir_measures``
    does; only ``control="none"``, whose estimates do not depend on the unsampled pairs, and identical to
    ``"runs"`` then; a run whose name is not among the design's runs gets a warning, one given without a
    name, called ``run``, does not: the design does not list the documents of its universe, so nothing
    tells whether such a run retrieves outside it).

    Returns ``run, measure, value, lo, hi, se, df, outside, seen, delta, reliable`` (``outside``: share
    of the run's top-k rows outside the universe; ``df``: Satterthwaite's effective degrees of freedom
    of the first-order variance, ``(Σ_u c_u)² / Σ_u c_u²`` over its per-pair terms, ``c_u = (1 − π_u)
    z_u²`` under Poisson sampling, within-stratum terms for the stratified design; ``inf`` when that
    variance is 0; ``lo``/``hi`` = ``value ∓ t √(se² + b̂²)``, ``t`` Student's with ``max(df, 1)``
    degrees of freedom and ``b̂`` the estimated ratio bias the value has had subtracted; ``delta`` =
    ``b̂ / se``; ``seen``: the design-based first-order variance over the anticipated one; ``reliable``:
    whether the design can back the interval, see the module docstring), or with ``pairs=True``
    ``run_a, run_b, measure, value, lo, hi, se, df, significant, delta, reliable`` (value = a − b, every
    unordered pair once, in the runs' order; ``df`` of the difference's terms); ``per_query=True``
    gives ``run, query_id, measure, value`` instead. ``attrs``: ``interval``, ``control`` (the control
    variate used: ``auto`` resolved), ``depth``, ``topics`` (the number of topics averaged),
    ``diagnostics`` (per measure: the median ``seen``, the share of ``starved`` topics, random draws
    ``per_topic``). Rows that are not reliable get one warning.

    ``pair_runs`` (with ``pairs=True``): the runs whose pairs are estimated, every pair among them
    (default ``None``: all runs): a list of run names, or an integer ``N``, the ``N`` runs with the largest
    estimate of the first measure (ties in the runs' order; all runs when there are fewer). Every run is
    still estimated (the universe and the control variate are the same), only the pairs are fewer; a
    pair's row is the one it has among all pairs (in the runs' order, ``value`` = a − b).

    ``progress``: a ``tqdm`` bar on stderr counting the steps (the universe, then each measure):
    ``None`` (default) when stderr is a terminal and the work takes more than 2 s, ``True`` always,
    ``False`` never (:mod:`ir_incomplete._progress`). The values do not depend on it.
    """
    with _progress.task(_progress.check_progress(progress), "estimate", unit="step"):
        req = _checked(
            design,
            measures,
            interval=interval,
            pairs=pairs,
            pair_runs=pair_runs,
            per_query=per_query,
            control=control,
            depth=depth,
            universe=universe,
            min_cell=min_cell,
            score_precision=score_precision,
            predictions=predictions,
        )
        return _estimate(runs, judgments, predictions, req)


def _check_pair_runs(pair_runs: Any, pairs: Any) -> int | list[str] | None:
    """``pair_runs`` checked (see :func:`estimate`): ``None``, a number of top runs >= 2, or run names."""
    if pair_runs is None:
        return None
    if not pairs:
        raise ValueError("pair_runs= chooses the runs whose pairs are estimated: give pairs=True too")
    if isinstance(pair_runs, (int, np.integer)) and not isinstance(pair_runs, (bool, np.bool_)):
        if pair_runs < 2:
            raise ValueError(f"pair_runs={pair_runs!r} is not valid; a pair needs two runs: give an integer >= 2")
        return int(pair_runs)
    if isinstance(pair_runs, (str, bytes)) or not hasattr(pair_runs, "__iter__"):
        raise ValueError(
            f"pair_runs={pair_runs!r} is not valid; give a number of top runs (e.g. 10) or a list of run names"
        )
    names = list(dict.fromkeys(str(name) for name in pair_runs))
    if len(names) < 2:
        raise ValueError(f"pair_runs={list(pair_runs)!r} names fewer than two runs; a pair needs two")
    return names


def _pair_selection(chosen: int | list[str] | None, names: list[str], value: np.ndarray) -> np.ndarray:
    """Indices of the runs whose pairs are estimated, in the runs' order: all, the named ones, or the top
    ``chosen`` by ``value`` (the first measure's estimates; ties in the runs' order)."""
    if chosen is None:
        return np.arange(len(names))
    if isinstance(chosen, int):
        return np.sort(np.argsort(-value, kind="stable")[:chosen])
    where = {name: i for i, name in enumerate(names)}
    unknown = [name for name in chosen if name not in where]
    if unknown:
        shown = ", ".join(repr(n) for n in names[:10]) + (f", ... ({len(names)} runs)" if len(names) > 10 else "")
        raise ValueError(f"pair_runs: run {unknown[0]!r} is not among the runs given; runs: {shown}")
    return np.sort(np.array([where[name] for name in chosen], dtype=np.int64))


@dataclass
class _Request:
    """:func:`estimate`'s arguments, checked: what every stage reads."""

    frame: pd.DataFrame  # the design, read
    interval: float
    control: str
    depth: int
    per_query: bool
    pairs: bool | str
    chosen: int | list[str] | None
    min_cell: int
    estimands: list[Estimand]
    by_design: bool
    score_precision: str


def _checked(
    design: Any,
    measures: Any,
    *,
    interval: float,
    pairs: bool | str,
    pair_runs: Any,
    per_query: bool,
    control: str,
    depth: int | None,
    universe: str,
    min_cell: int,
    score_precision: str,
    predictions: Any,
) -> _Request:
    """Stage 1: read the design and check every argument against it (``ValueError`` naming the first
    wrong one)."""
    frame = read_design(design)
    if not (isinstance(interval, (int, float)) and 0 < interval < 1):
        raise ValueError(f"interval={interval!r} is not a level in (0, 1), e.g. 0.9")
    if control not in CONTROLS:
        raise ValueError(f"control={control!r} is not valid; choices: {', '.join(CONTROLS)}")
    depth = _check_depth(depth, frame.attrs.get("depth"))
    drawn_precision = frame.attrs.get("score_precision")
    if drawn_precision is not None and drawn_precision != score_precision:
        raise ValueError(
            f"score_precision={score_precision!r} differs from the design's {drawn_precision!r}: tied scores would "
            f"rank differently and the runs' top {depth} would not be the universe the design was drawn from; give "
            f"score_precision={drawn_precision!r}"
        )
    if not isinstance(per_query, (bool, np.bool_)):
        raise ValueError(f"per_query={per_query!r} is not True or False")
    if not (isinstance(pairs, (bool, np.bool_)) or (isinstance(pairs, str) and pairs == "both")):
        raise ValueError(f"pairs={pairs!r} is not True or False")
    if pairs and per_query:
        raise ValueError("pairs=True and per_query=True cannot be combined: pairs are of run means; choose one")
    chosen = _check_pair_runs(pair_runs, pairs)
    if isinstance(min_cell, (bool, np.bool_)) or not isinstance(min_cell, (int, np.integer)) or min_cell < 0:
        raise ValueError(
            f"min_cell={min_cell!r} is not an integer >= 0 (random pairs a cell needs to use its own share)"
        )
    measure_list = [measures] if isinstance(measures, str) or not hasattr(measures, "__iter__") else list(measures)
    if not measure_list:
        raise ValueError("no measures given")
    estimands = [parse_estimand(m, depth) for m in measure_list]
    if not len(frame):
        raise ValueError("the design has no pairs")
    if universe not in ("runs", "design"):
        raise ValueError(f"universe={universe!r} is not valid; choices: runs, design")
    by_design = universe == "design"
    if by_design and control not in ("auto", "none"):
        raise ValueError(
            f"control={control!r} needs the whole universe (the sum of the control variate over every unsampled "
            f"pair): estimate all the design's runs together (universe='runs'); with universe='design' only "
            f"control='none' is valid"
        )
    if by_design and predictions is not None:
        raise ValueError(
            "predictions= need the whole universe (the sum of the control variate over every unsampled pair): "
            "estimate all the design's runs together (universe='runs'), not one run at a time"
        )
    if control == "auto":
        control = "none" if by_design else "labels+model" if predictions is not None else "model"
    if "labels" in control and predictions is None:
        raise ValueError(f"control={control!r} needs predictions=")
    return _Request(
        frame,
        interval,
        control,
        depth,
        bool(per_query),
        pairs,
        chosen,
        int(min_cell),
        estimands,
        by_design,
        score_precision,
    )


def _universe(runs: Any, req: _Request) -> Universe:
    """Stage 2: the universe of the design's runs (checked against the design's record), or with
    ``universe="design"`` the design's pairs plus the runs given (a run foreign to the design warned of)."""
    frame, by_design = req.frame, req.by_design
    universe_runs = None if by_design else frame.attrs.get("runs")
    # the mean is over the universe's topics, also those where no pair happened to be sampled (their
    # estimate is 0): as sample records them, else every topic the universe's runs answer
    topics = pd.unique(frame["query_id"].to_numpy())
    recorded_topics = frame.attrs.get("topics")
    if recorded_topics is not None:
        topics = pd.unique(np.r_[_ids(np.asarray(list(recorded_topics), dtype=object), "design topics"), topics])
    from_runs = recorded_topics is None and not by_design
    space = Universe(runs, req.depth, universe_runs, req.score_precision, topics=None if from_runs else topics)
    if from_runs:
        more = topics[pd.Index(space.topic_ids).get_indexer(topics) < 0]
        if len(more):
            space.set_topics(np.r_[space.topic_ids, more])
    if not by_design:  # runs changed since the design was drawn make another universe: refused
        check_universe(space, frame.attrs)
    drawn_from = frame.attrs.get("runs")
    if by_design and isinstance(drawn_from, list) and drawn_from:
        # a run given without a name (alone, or by ir_measures and pt.Experiment, which see one run at a time)
        # is called "run": its name tells nothing, and the design does not list its universe's documents, so
        # it cannot be told from the design's runs and is not flagged
        strangers = [name for name in space.run_names if name not in drawn_from and name != _UNNAMED_RUN]
        if strangers:
            warnings.warn(
                f"run {strangers[0]!r} is not among the runs the design was drawn from ({len(strangers)} such "
                f"run(s)): the documents it retrieves that those runs do not could never be sampled and count as "
                f"nonrelevant, so its estimates are of another quantity",
                stacklevel=4,
            )
    return space


def _units(space: Universe, judgments: Any, predictions: Any, req: _Request) -> Units:
    """Stage 3: the design's pairs placed in the universe (π, judged grade) and the control variate
    ``f`` of every unit (:mod:`ir_incomplete.estimation.control`)."""
    frame = req.frame
    grades = _grades(judgments, frame)
    topic = space.topic_codes(frame["query_id"])
    unit = space.lookup(topic, frame["doc_id"].to_numpy(dtype=object))
    pi = frame["pi"].to_numpy(dtype=float)
    outside = np.flatnonzero((unit < 0) & (pi < 1.0) & (not req.by_design))
    if len(outside):
        i = int(outside[0])
        raise ValueError(
            f"the design's pair ({frame['query_id'].iloc[i]}, {frame['doc_id'].iloc[i]}) with pi={pi[i]:g} is not "
            f"in the top {req.depth} of the runs it was drawn from ({len(outside)} such pairs): the design's universe "
            f"disagrees with the runs given"
        )
    if (unit < 0).any():
        unit = space.add_units(topic, frame["doc_id"].to_numpy(dtype=object))
    levels = np.unique(np.r_[0, grades])
    unit_pi = np.ones(space.n_units)
    sampled = np.zeros(space.n_units, dtype=bool)
    unit_grade = np.zeros(space.n_units, dtype=np.int64)
    unit_pi[unit] = pi
    sampled[unit] = True
    unit_grade[unit] = np.searchsorted(levels, grades)
    f_level = np.zeros((space.n_units, len(levels)))
    predicted = None  # checked against the judged scale whatever was drawn
    if req.control != "none" and predictions is not None:
        predicted = _predicted(space, predictions, levels)
    rand = np.flatnonzero(sampled & (unit_pi < 1.0))
    p_model = None
    if len(rand):
        # the pooled relevance model of the fusion-score cells: the anticipated variance's, and with
        # control="model" the control variate's before its per-topic scaling
        p_model = _pooled_shares(_cells(space, "model", None), rand, unit_grade, unit_pi, len(levels), req.min_cell)
        if req.control != "none":
            pooled = p_model
            if req.control != "model":
                cells = _cells(space, req.control, predicted)
                pooled = _pooled_shares(cells, rand, unit_grade, unit_pi, len(levels), req.min_cell)
            f_level = _scaled_per_topic(pooled, rand, unit_grade, unit_pi, space.unit_topic)
            f_level[sampled & (unit_pi >= 1.0)] = 0.0  # certainty pairs are known exactly
    unit_stratum, strata_table = None, None
    if frame.attrs.get("design") == "stratified":
        unit_stratum = np.full(space.n_units, -1, dtype=np.int64)
        unit_stratum[unit] = frame["stratum_id"].to_numpy(dtype=np.int64)
        strata_table = np.asarray(frame.attrs["strata"], dtype=np.int64).reshape(-1, 2)
    return Units(
        space.unit_topic,
        unit_pi,
        sampled,
        unit_grade,
        levels.astype(float),
        f_level,
        len(space.topic_ids),
        unit_stratum,
        strata_table,
        p_model,
    )


def _items(space: Universe) -> Items:
    """Stage 4: the runs' rankings as kernel items (rows inside the universe, by run, topic and rank)."""
    n_topics = len(space.topic_ids)
    order = np.lexsort((space.item_rank, space.item_topic, space.item_run))
    rows = order[space.item_unit[order] >= 0]
    return Items(
        space.item_run[rows] * n_topics + space.item_topic[rows],
        space.item_rank[rows],
        space.item_unit[rows],
        len(space.run_names),
        n_topics,
    )


def _estimate(runs: Any, judgments: Any, predictions: Any, req: _Request) -> pd.DataFrame:
    """The work of :func:`estimate` after its arguments are checked (:func:`_checked`), in its progress
    task, stage by stage: the universe (:func:`_universe`) → the units and their control variate
    (:func:`_units`) → the rankings (:func:`_items`) → per measure the kernel
    (:func:`~ir_incomplete.kernels.design.estimate_measure`), the variance and interval (:class:`_Variance`)
    and the diagnostics (:class:`_Diagnostics`) → the tables."""
    space = _universe(runs, req)
    units = _units(space, judgments, predictions, req)
    items = _items(space)
    names = space.run_names
    n_runs, n_topics = len(names), len(space.topic_ids)
    out = []
    _progress.set_total(1 + len(req.estimands))  # the universe, then each measure
    _progress.advance(1)
    # the runs whose pairs are estimated (pairs=True); the top N by the first measure's estimates once known
    selected = None if isinstance(req.chosen, int) else _pair_selection(req.chosen, list(names), np.zeros(0))
    blind: list[tuple[str, str]] = []  # run means whose interval the sample cannot back (see _warn_unbacked)
    diagnostics: dict[str, _Diagnostics] = {}
    for est in req.estimands:
        result = estimate_measure(est.kind, est.k, units, items, rel_from=est.rel, p=est.p)
        cut = space.item_rank < est.k
        share = np.bincount(space.item_run[cut & (space.item_unit < 0)], minlength=n_runs) / np.maximum(
            np.bincount(space.item_run[cut], minlength=n_runs), 1
        )
        _warn_outside(names, share, est)
        if req.per_query:
            out.append(
                pd.DataFrame(
                    {
                        "run": np.repeat(names, n_topics),
                        "query_id": np.tile(space.topic_ids, n_runs),
                        "measure": est.name,
                        "value": result.value.reshape(-1),
                    }
                )
            )
            _progress.advance(1)
            continue
        value = result.value.mean(axis=1)
        var = _Variance.of(result, units, n_topics)
        diag = _Diagnostics.of(result, units, est, var)
        diagnostics[est.name] = diag
        if req.pairs:  # True, or "both" (run means, then pairs: one pass for callers that want both tables)
            if selected is None:  # chosen at the first measure (pair_runs=N: by its estimates)
                selected = _pair_selection(req.chosen, list(names), value)
            first, second = np.triu_indices(len(selected), k=1)
            a, b = selected[first], selected[second]
            out.append(_pair_table(names, est, value, var, diag, a, b, req.interval))
        if req.pairs != True:  # noqa: E712 (pairs is True, False or "both")
            table = _run_table(names, est, value, var, diag, share, req.interval)
            known = cut & (space.item_unit >= 0)
            unjudged = np.bincount(  # top-k rows of each run whose pair nobody judged
                space.item_run[known][~units.sampled[space.item_unit[known]]], minlength=n_runs
            )
            se = table["se"].to_numpy()
            blind += [(names[i], est.name) for i in np.flatnonzero((se == 0) & (unjudged > 0))]
            out.append(table)
        _progress.advance(1)
    _warn_unbacked(blind)
    if not req.per_query:
        _warn_unreliable(out, diagnostics)
    attrs = {
        "interval": req.interval,
        "control": req.control,
        "depth": req.depth,
        "topics": n_topics,
        "diagnostics": {
            name: {"seen": d.seen_median, "starved": d.starved, "per_topic": d.per_topic}
            for name, d in diagnostics.items()
        },
    }
    if req.pairs == "both" and not req.per_query:
        tables = []
        for kind in ("run", "run_a"):
            frame = pd.concat([o for o in out if kind in o.columns], ignore_index=True)
            frame.attrs = dict(attrs)
            tables.append(frame)
        return tables
    result_frame = pd.concat(out, ignore_index=True)
    result_frame.attrs = attrs
    return result_frame


def _run_table(
    names: list[str],
    est: Estimand,
    value: np.ndarray,
    var: _Variance,
    diag: _Diagnostics,
    share: np.ndarray,
    interval: float,
) -> pd.DataFrame:
    """Stage 7: the run means' rows of one measure."""
    se = np.sqrt(np.clip(np.diag(var.cov), 0.0, None))
    df = var.run_df()
    half = _quantile(interval, df) * np.sqrt(se**2 + diag.bias**2)
    delta = _ratio(diag.bias, se)
    return pd.DataFrame(
        {
            "run": names,
            "measure": est.name,
            "value": value,
            "lo": value - half,
            "hi": value + half,
            "se": se,
            "df": df,
            "outside": share,
            "seen": diag.seen,
            "delta": delta,
            "reliable": diag.reliable(delta),
        }
    )


def _pair_table(
    names: list[str],
    est: Estimand,
    value: np.ndarray,
    var: _Variance,
    diag: _Diagnostics,
    a: np.ndarray,
    b: np.ndarray,
    interval: float,
) -> pd.DataFrame:
    """Stage 7: the rows of the differences ``a − b`` of one measure."""
    diff = value[a] - value[b]
    se, df = var.pair_se_df(a, b)
    bias = diag.bias[a] - diag.bias[b]
    half = _quantile(interval, df) * np.sqrt(se**2 + bias**2)
    lo, hi = diff - half, diff + half
    delta = _ratio(bias, se)
    return pd.DataFrame(
        {
            "run_a": np.asarray(names, dtype=object)[a],
            "run_b": np.asarray(names, dtype=object)[b],
            "measure": est.name,
            "value": diff,
            "lo": lo,
            "hi": hi,
            "se": se,
            "df": df,
            "significant": (lo > 0) | (hi < 0),
            "delta": delta,
            "reliable": diag.reliable(delta),
        }
    )
