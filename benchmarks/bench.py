#!/usr/bin/env python
"""Speed record: ``ir_incomplete`` against ``ir_measures`` (pytrec_eval) and pytrec_eval directly.

Everything runs in one process, on the same in-memory data, end to end from pandas DataFrames, and
every contender's aggregate values are checked to agree (|diff| < 1e-9) before any time is printed.
Tests never assert timings; this script is where speed is recorded. See ``benchmarks/README.md``.

    python benchmarks/bench.py [--scales S,M,MR,MU,COVID] [--families infAP,...] [--repeats N]
                               [--repeats-m N] [--markdown] [--profile]

Scales
    S      50 topics × 1000 documents, ~1500 judgments per topic (grades 0–2, ~5% −1).
    M      7000 topics × 1000 documents, ~1.1 judgments per topic (MS MARCO-like).
    MR     7000 topics × 1000 random doc ids ``d<int>``, uniform scores, rows in ranking order.
    MU     the same rows as MR, not sorted by score (a reranker's candidate order: each query's rows
           together, in random order); MU / MR is the cost of unsorted input.
    COVID  the 143 TREC-COVID round-1 runs with the round-1 qrels (``../shared/data``; skipped when
           absent). Reading the files is not timed.

Adding a measure family: one entry in :data:`FAMILIES` (see its comment).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
import pandas as pd
import pytrec_eval
from timing import best_of

import ir_incomplete
from ir_incomplete.data import _descending_score_keys

SEED = 20240607
TOLERANCE = 1e-9
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
COVID_DIR = SHARED / "data" / "trec-covid-round1"


# ---------------------------------------------------------------------------------------------------
# measure families
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reference:
    """Reference implementations of a family's measures, in the same order as the family's measures.

    ``ir_measures``: measure strings computed with ``ir_measures.pytrec_eval.calc_aggregate``;
    ``pytrec_eval``: pytrec_eval measure names for ``RelevanceEvaluator`` (with ``relevance_level``);
    ``ranx``: ranx metric names (timed only when ranx is installed; it is no dependency).
    Any may be empty. A family whose reference is neither (e.g. a paper's own code) can instead give
    a callable ``f(qrels_frame, run_frame) -> [mean value per measure]`` (mean over the qrels' topics,
    0 for a topic the run does not answer); it is timed once per run.
    """

    ir_measures: Sequence[str] = ()
    pytrec_eval: Sequence[str] = ()
    relevance_level: int = 1
    ranx: Sequence[str] = ()


ReferenceSpec = Reference | Callable[[pd.DataFrame, pd.DataFrame], Sequence[float]] | None

# name -> (our measures as strings in ir_incomplete's grammar, evaluated together in one call;
#          reference: a Reference, a callable (see Reference) or None = timed as ours only and
#          reported relative to our time for BASELINE_FAMILY, the "within 2× of infAP" target).
FAMILIES: dict[str, tuple[Sequence[str], ReferenceSpec]] = {
    "infAP": (("infAP",), Reference(ir_measures=("infAP",), pytrec_eval=("infAP",))),
    "infAP-variants": (("infAP(c=1.5)", "infAP(variant=uniform)@100"), None),
    "Bpref": (("Bpref",), Reference(ir_measures=("Bpref",), pytrec_eval=("bpref",), ranx=("bpref",))),
    "AP-family": (("indAP", "indAP(variant=original)", "subAP", "Bpref(variant=paper)", "Bpref10", "RankEff"), None),
    "graded-AP": (("GAP(g=0.5,0.5)", "xGAP(g=0.5,0.5)", "eGAP(g=0.5,0.5)"), None),
    "BootNDCG": (("BootNDCG@10", "NDCGUpper@10"), None),
    # built-in measures computed natively (ir_incomplete.measures.reference), alone and mixed with ours
    "reference": (
        ("AP", "AP@100", "nDCG", "nDCG@10", "P@10", "R@100", "RR", "Rprec"),
        Reference(
            ir_measures=("AP", "AP@100", "nDCG", "nDCG@10", "P@10", "R@100", "RR", "Rprec"),
            pytrec_eval=("map", "map_cut_100", "ndcg", "ndcg_cut_10", "P_10", "recall_100", "recip_rank", "Rprec"),
        ),
    ),
    "AP+nDCG@10+Bpref+infAP": (
        ("AP", "nDCG@10", "Bpref", "infAP"),
        Reference(
            ir_measures=("AP", "nDCG@10", "Bpref", "infAP"), pytrec_eval=("map", "ndcg_cut_10", "bpref", "infAP")
        ),
    ),
}
BASELINE_FAMILY = "infAP"


# ---------------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------------
@dataclass
class Scale:
    name: str
    description: str
    runs: dict[str, pd.DataFrame]
    qrels: pd.DataFrame
    repeats: int


def _distinct_per_row(rng: np.random.Generator, rows: int, per_row: int, universe: int) -> np.ndarray:
    """``rows × per_row`` integers, distinct within each row, from ``0 .. universe-1``, in random order."""
    base = np.sort(rng.integers(0, universe - per_row + 1, size=(rows, per_row)), axis=1)
    return rng.permuted(base + np.arange(per_row), axis=1)


def _run_frame(
    qids: np.ndarray, docs: np.ndarray, rng: np.random.Generator, prefix: str, loc: float, scale: float
) -> pd.DataFrame:
    """A run with ``docs[t]`` (rank order) for topic ``qids[t]``; float64 scores, descending."""
    n_topics, depth = docs.shape
    scores = -np.sort(-rng.normal(loc, scale, size=(n_topics, depth)), axis=1)
    return pd.DataFrame(
        {
            "query_id": np.repeat(qids, depth),
            "doc_id": np.char.add(prefix, docs.ravel().astype(str)),
            "score": scores.ravel(),
        }
    )


def make_scale_s(repeats: int) -> Scale:
    """50 topics × 1000 docs; judgments pooled from the run's documents (more at the top) and from
    documents the run does not retrieve; grades 0–2, about 5% −1 (pooled but unjudged)."""
    rng = np.random.default_rng(SEED)
    n_topics, depth, n_extra, collection = 50, 1000, 1000, 528_155
    qids = np.array([str(301 + t) for t in range(n_topics)])
    docs = _distinct_per_row(rng, n_topics, depth + n_extra, collection)
    run_docs = docs[:, :depth]
    run = _run_frame(qids, run_docs, rng, "D", 12.0, 3.0)

    rank = np.broadcast_to(np.arange(depth), (n_topics, depth))
    judged_in_run = rng.random((n_topics, depth)) < 0.95 - 0.5 * rank / depth  # ~700 per topic
    judged_extra = np.zeros((n_topics, n_extra), dtype=bool)
    judged_extra[:, :800] = True  # 800 per topic
    p_rel = np.concatenate([0.05 + 0.45 * np.exp(-rank / 150.0), np.full((n_topics, n_extra), 0.03)], axis=1)
    judged = np.concatenate([judged_in_run, judged_extra], axis=1)
    topic = np.broadcast_to(np.arange(n_topics)[:, None], judged.shape)[judged]
    doc = docs[judged]
    relevant = rng.random(len(doc)) < p_rel[judged]
    grade = np.where(relevant, np.where(rng.random(len(doc)) < 0.35, 2, 1), 0)
    grade[rng.random(len(doc)) < 0.05] = -1
    qrels = pd.DataFrame(
        {"query_id": qids[topic], "doc_id": np.char.add("D", doc.astype(str)), "relevance": grade.astype(np.int64)}
    )
    return Scale("S", f"{n_topics} topics × {depth} docs", {"run": run}, qrels, repeats)


def make_scale_m(repeats: int) -> Scale:
    """7000 topics × 1000 docs, MS MARCO-like: decimal doc ids from 0..8.8M, ~1.1 judgments per topic
    (all grade 1), 80% of them retrieved by the run (mostly near the top)."""
    rng = np.random.default_rng(SEED + 1)
    n_topics, depth, collection = 7000, 1000, 8_841_823
    qids = rng.choice(1_200_000, size=n_topics, replace=False).astype(str)
    docs = _distinct_per_row(rng, n_topics, depth, collection)
    run = _run_frame(qids, docs, rng, "", 20.0, 4.0)

    per_topic = 1 + rng.poisson(0.1, size=n_topics)
    topic = np.repeat(np.arange(n_topics), per_topic)
    from_run = rng.random(len(topic)) < 0.8
    rank = np.minimum((depth * rng.random(len(topic)) ** 3).astype(np.int64), depth - 1)
    doc = np.where(from_run, docs[topic, rank], rng.integers(0, collection, size=len(topic)))
    order = np.argsort(qids[topic], kind="stable")  # a qrels file sorted by query id
    qrels = pd.DataFrame(
        {
            "query_id": qids[topic][order],
            "doc_id": doc[order].astype(str),
            "relevance": np.ones(len(topic), dtype=np.int64),
        }
    )
    qrels = qrels.drop_duplicates(["query_id", "doc_id"], ignore_index=True)
    return Scale("M", f"{n_topics} topics × {depth} docs", {"run": run}, qrels, repeats)


def make_scale_unsorted(repeats: int, ranked: bool) -> Scale:
    """7000 topics × 1000 random doc ids ``d<int>`` (from 0..8.8M, duplicates within a topic dropped),
    uniform random scores; the qrels as at scale M (~1.1 judgments per topic, 80% of them retrieved,
    grade 1). ``ranked``: rows in ranking order (MR); else each topic's rows together in the order they
    were drawn, not sorted by score (MU: a reranker's candidate list with its scores appended)."""
    rng = np.random.default_rng(SEED + 2)
    n_topics, depth, collection = 7000, 1000, 8_841_823
    qids = rng.choice(1_200_000, size=n_topics, replace=False).astype(str)
    run = pd.DataFrame(
        {
            "query_id": np.repeat(qids, depth),
            "doc_id": np.char.add("d", rng.integers(0, collection, n_topics * depth).astype(str)),
            "score": rng.random(n_topics * depth),
        }
    ).drop_duplicates(["query_id", "doc_id"], ignore_index=True)
    topic = np.repeat(np.arange(n_topics), 1 + rng.poisson(0.1, size=n_topics))
    starts = np.flatnonzero(np.r_[True, run["query_id"].to_numpy()[1:] != run["query_id"].to_numpy()[:-1]])
    sizes = np.diff(np.r_[starts, len(run)])
    pick = starts[topic] + (rng.random(len(topic)) * sizes[topic]).astype(np.int64)
    from_run = rng.random(len(topic)) < 0.8
    docs = np.where(
        from_run, run["doc_id"].to_numpy()[pick], np.char.add("d", rng.integers(0, collection, len(topic)).astype(str))
    )
    order = np.argsort(qids[topic], kind="stable")
    qrels = pd.DataFrame(
        {"query_id": qids[topic][order], "doc_id": docs[order], "relevance": np.ones(len(topic), dtype=np.int64)}
    ).drop_duplicates(["query_id", "doc_id"], ignore_index=True)
    if ranked:
        ranks = run.groupby("query_id", sort=False).ngroup().to_numpy()
        run = run.iloc[np.lexsort((-run["score"].to_numpy(), ranks))].reset_index(drop=True)
    name, layout = ("MR", "rows in ranking order") if ranked else ("MU", "rows not sorted by score")
    return Scale(
        name, f"{n_topics} topics × {depth} random docs, uniform scores, {layout}", {"run": run}, qrels, repeats
    )


def make_scale_covid(repeats: int) -> Scale | None:
    runs_dir = COVID_DIR / "runs"
    qrels_path = COVID_DIR / "qrels.round1.txt.gz"
    if not runs_dir.is_dir() or not qrels_path.is_file():
        return None
    runs = {}
    for path in sorted(runs_dir.iterdir()):
        if path.name.startswith("."):
            continue
        name = path.name[:-3] if path.name.endswith(".gz") else path.name
        runs[name] = ir_incomplete.read_trec_run(path)
    qrels = ir_incomplete.read_trec_qrels(qrels_path)
    return Scale("COVID", f"{len(runs)} TREC-COVID round-1 runs", runs, qrels, repeats)


# ---------------------------------------------------------------------------------------------------
# contenders
# ---------------------------------------------------------------------------------------------------
Values = dict[str, list[float]]  # run name -> mean value per measure (family order)


def _ours_evaluate(scale: Scale, measures) -> Values:
    arg = scale.runs if len(scale.runs) > 1 else scale.runs["run"]
    frame = ir_incomplete.evaluate(arg, scale.qrels, measures, per_query=False)
    by = {(r, m): v for r, m, v in zip(frame["run"], frame["measure"], frame["value"], strict=True)}
    return {name: [by[(name, repr(m))] for m in measures] for name in scale.runs}


def _via_provider(provider, scale: Scale, measures) -> Values:
    out = {}
    for name, run in scale.runs.items():
        agg = provider.calc_aggregate(measures, scale.qrels, run)
        out[name] = [agg[m] for m in measures]
    return out


def _dict_of_dicts(frame: pd.DataFrame, value_column: str, dtype) -> dict[str, dict[str, Any]]:
    """pytrec_eval's input, built as fast as plain Python allows (one ``dict(zip())`` per query)."""
    qids = frame["query_id"].to_numpy(dtype=object)
    codes, uniques = pd.factorize(qids)
    order = np.argsort(codes, kind="stable")
    ends = np.cumsum(np.bincount(codes, minlength=len(uniques))).tolist()
    docs = frame["doc_id"].to_numpy(dtype=object)[order].tolist()
    values = frame[value_column].to_numpy().astype(dtype)[order].tolist()
    out, start = {}, 0
    for qid, end in zip(uniques.tolist(), ends, strict=True):
        out[qid] = dict(zip(docs[start:end], values[start:end], strict=True))
        start = end
    return out


def _pytrec_dicts(scale: Scale):
    qrels = _dict_of_dicts(scale.qrels, "relevance", np.int64)
    runs = {name: _dict_of_dicts(run, "score", np.float64) for name, run in scale.runs.items()}
    return qrels, runs


def _pytrec_evaluate(qrels_dict, run_dicts, names: Sequence[str], relevance_level: int) -> Values:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, set(names), relevance_level=relevance_level)
    n_topics = len(qrels_dict)
    out = {}
    for run_name, run in run_dicts.items():
        result = evaluator.evaluate(run)
        out[run_name] = [sum(result[q][m] for q in result if q in qrels_dict) / n_topics for m in names]
    return out


def _callable_reference(function, scale: Scale) -> Values:
    return {name: [float(v) for v in function(scale.qrels, run)] for name, run in scale.runs.items()}


# ---------------------------------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------------------------------


@dataclass
class Row:
    scale: str
    family: str
    contender: str
    seconds: float
    ratio: float | None = None  # seconds / our evaluate time (reference rows, our provider row)
    vs_baseline: float | None = None  # our time / our BASELINE_FAMILY time (ours-only families)
    kind: str = "ours"  # ours | reference | conversion | floor
    memory_mb: float | None = None  # peak memory growth during one call (MB), when measured


def _max_diff(a: Values, b: Values) -> float:
    worst = 0.0
    for name, values in a.items():
        other = b[name]
        for x, y in zip(values, other, strict=True):
            if np.isnan(x) or np.isnan(y):
                if not (np.isnan(x) and np.isnan(y)):
                    return float("inf")
            else:
                worst = max(worst, abs(x - y))
    return worst


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def bench_family(
    scale: Scale,
    family: str,
    rows: list[Row],
    checks: list[tuple[str, bool]],
    baseline: dict[str, float],
    profiles: list[str] | None,
    memory: bool = False,
) -> None:
    """Time every contender of ``family`` on ``scale``; append rows, value checks (and profiles).
    With ``memory``, each main contender runs once more, untimed, for its peak memory growth."""
    strings, reference = FAMILIES[family]
    measures = [ir_incomplete.parse(s) for s in strings]
    single = len(scale.runs) == 1
    reps = scale.repeats
    ours_provider = ir_measures.providers.registry["ir_incomplete"]

    def peak(thunk):
        return peak_memory_mb(thunk) if memory else None

    log(f"[{scale.name}] {family}: ours (evaluate)")
    t_ours, ours = best_of(reps, lambda: _ours_evaluate(scale, measures))
    if family == BASELINE_FAMILY:
        baseline[scale.name] = t_ours
    label = "ours: ir_incomplete.evaluate" + ("" if single else f" (one call, {len(scale.runs)} runs)")
    ours_row = Row(scale.name, family, label, t_ours, memory_mb=peak(lambda: _ours_evaluate(scale, measures)))
    rows.append(ours_row)
    if profiles is not None:
        profiles.append(_profile(scale, family, measures))
    if family == BASELINE_FAMILY:
        log(f"[{scale.name}] {family}: numpy floor")
        t_floor = numpy_floor(scale)
        rows.append(
            Row(
                scale.name,
                family,
                "numpy floor: hash doc ids + one argsort + cumsum (inputs prepared outside the timer)",
                t_floor,
                ratio=t_floor / t_ours,
                kind="floor",
            )
        )

    log(f"[{scale.name}] {family}: ours (provider via ir_measures)")
    t_prov, prov = best_of(reps, lambda: _via_provider(ours_provider, scale, measures))
    checks.append(_check(scale, family, "ours via provider", ours, prov))
    rows.append(
        Row(
            scale.name,
            family,
            "ours: ir_measures provider 'ir_incomplete'" + ("" if single else " (loop per run)"),
            t_prov,
            ratio=t_prov / t_ours,
        )
    )

    if reference is None:
        base = baseline.get(scale.name)
        if base is not None and family != BASELINE_FAMILY:
            ours_row.vs_baseline = t_ours / base
        return
    if isinstance(reference, Reference):
        if reference.ir_measures:
            ref_measures = [ir_measures.parse_measure(s) for s in reference.ir_measures]
            log(f"[{scale.name}] {family}: ir_measures + pytrec_eval")
            t_ref, ref = best_of(reps, lambda: _via_provider(ir_measures.pytrec_eval, scale, ref_measures))
            checks.append(_check(scale, family, "ir_measures + pytrec_eval", ours, ref))
            rows.append(
                Row(
                    scale.name,
                    family,
                    "ir_measures.pytrec_eval.calc_aggregate" + ("" if single else " (loop per run)"),
                    t_ref,
                    ratio=t_ref / t_ours,
                    kind="reference",
                    memory_mb=peak(lambda: _via_provider(ir_measures.pytrec_eval, scale, ref_measures)),
                )
            )
        if reference.pytrec_eval:
            log(f"[{scale.name}] {family}: pytrec_eval directly")
            t_dicts, (qrels_dict, run_dicts) = best_of(reps, lambda: _pytrec_dicts(scale))
            names, level = reference.pytrec_eval, reference.relevance_level
            t_eval, ref = best_of(reps, lambda: _pytrec_evaluate(qrels_dict, run_dicts, names, level))
            mem_eval = peak(lambda: _pytrec_evaluate(qrels_dict, run_dicts, names, level))
            del qrels_dict, run_dicts
            checks.append(_check(scale, family, "pytrec_eval", ours, ref))
            rows.append(Row(scale.name, family, "pytrec_eval: DataFrames → dict of dicts", t_dicts, kind="conversion"))
            rows.append(
                Row(
                    scale.name,
                    family,
                    "pytrec_eval alone: RelevanceEvaluator + evaluate (dicts prepared outside the timer)"
                    + ("" if single else " (one evaluator, loop per run)"),
                    t_eval,
                    ratio=t_eval / t_ours,
                    kind="reference",
                    memory_mb=mem_eval,
                )
            )
            rows.append(
                Row(
                    scale.name,
                    family,
                    "pytrec_eval: total (dicts + evaluate)",
                    t_dicts + t_eval,
                    ratio=(t_dicts + t_eval) / t_ours,
                    kind="reference",
                )
            )
        if reference.ranx and _ranx() is not None:
            log(f"[{scale.name}] {family}: ranx")
            metrics = reference.ranx
            t_ranx, ref = best_of(reps, lambda: _ranx_evaluate(scale, metrics))
            text, ok = _check(scale, family, "ranx", ours, ref)
            checks.append((text + ("" if ok else " (ranx's own conventions: informative only)"), True))
            rows.append(
                Row(
                    scale.name,
                    family,
                    "ranx: Qrels/Run.from_df + evaluate"
                    + ("" if single else " (loop per run)")
                    + ("" if ok else " [values differ from trec_eval]"),
                    t_ranx,
                    ratio=t_ranx / t_ours,
                    kind="reference",
                    memory_mb=peak(lambda: _ranx_evaluate(scale, metrics)),
                )
            )
    else:
        log(f"[{scale.name}] {family}: reference callable")
        t_ref, ref = best_of(reps, lambda: _callable_reference(reference, scale))
        checks.append(_check(scale, family, "reference", ours, ref))
        rows.append(
            Row(
                scale.name,
                family,
                f"reference {getattr(reference, '__name__', 'callable')}",
                t_ref,
                ratio=t_ref / t_ours,
                kind="reference",
            )
        )


def peak_memory_mb(thunk: Callable[[], Any]) -> float | None:
    """Peak extra memory (MB) of one call of ``thunk``: the larger of tracemalloc's peak (every Python
    and numpy allocation, even in memory the process already holds) and the growth of the resident set
    over the call (its high-water mark is reset just before; this catches C/C++ allocations such as
    pytrec_eval's, which tracemalloc does not see). Linux; ``None`` elsewhere."""
    gc.collect()
    try:
        before = _proc_status_mb("VmRSS")
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except (OSError, ValueError):
        return None
    tracemalloc.start()
    try:
        result = thunk()
        _, traced = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    resident = _proc_status_mb("VmHWM") - before
    del result
    return max(traced / 2**20, resident, 0.0)


def _proc_status_mb(key: str) -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
    raise ValueError(f"{key} not in /proc/self/status")


def numpy_floor(scale: Scale) -> float:
    """The least work any evaluation from these DataFrames does, in numpy: hash every document id once
    (``np.fromiter(map(hash, ids))``), one stable argsort of the (query, float32 score) keys, one cumsum
    over the ranked relevance. The query codes, sort keys and relevance matrix are prepared outside the
    timer; each step is timed best of the scale's repeats and the times are added."""
    total = 0.0
    for run in scale.runs.values():
        doc_ids = run["doc_id"].to_numpy(dtype=object)
        codes, _ = pd.factorize(run["query_id"].to_numpy(dtype=object))
        key = (codes.astype(np.int64) << 32) | _descending_score_keys(run["score"].to_numpy(dtype=np.float64))
        depth = max(int(np.bincount(codes).max()) if len(codes) else 1, 1)
        relevance = np.zeros((int(codes.max()) + 1 if len(codes) else 1, depth), dtype=np.float64)
        t_hash, _ = best_of(scale.repeats, lambda ids=doc_ids: np.fromiter(map(hash, ids), np.int64, count=len(ids)))
        t_sort, _ = best_of(scale.repeats, lambda key=key: np.argsort(key, kind="stable"))
        t_cumsum, _ = best_of(scale.repeats, lambda rel=relevance: np.cumsum(rel, axis=1))
        total += t_hash + t_sort + t_cumsum
    return total


def _ranx():
    try:
        import ranx
    except ImportError:
        return None
    return ranx


def _ranx_evaluate(scale: Scale, metrics: Sequence[str]) -> Values:
    """ranx from the same DataFrames (its ``from_df`` needs ``object`` id columns: converted inside the
    timer): ``Qrels.from_df`` once, ``Run.from_df`` + ``evaluate`` per run (``make_comparable``: every
    qrels query counts), mean over the qrels' queries (a NaN query counts 0)."""
    ranx = _ranx()
    ids = {"query_id": object, "doc_id": object}
    qrels = ranx.Qrels.from_df(scale.qrels.astype(ids), q_id_col="query_id", doc_id_col="doc_id", score_col="relevance")
    n_topics = scale.qrels["query_id"].nunique()
    out = {}
    for name, frame in scale.runs.items():
        run = ranx.Run.from_df(frame.astype(ids), q_id_col="query_id", doc_id_col="doc_id", score_col="score")
        per_query = ranx.evaluate(qrels, run, list(metrics), return_mean=False, make_comparable=True)
        if not isinstance(per_query, dict):
            per_query = {metrics[0]: per_query}
        out[name] = [float(np.nansum(per_query[m])) / n_topics for m in metrics]
    return out


def _check(scale: Scale, family: str, who: str, ours: Values, ref: Values) -> tuple[str, bool]:
    diff = _max_diff(ours, ref)
    ok = diff < TOLERANCE
    n = sum(len(v) for v in ours.values())
    first = np.array([v[0] for v in ours.values()])
    shown = f"{first[0]:.4f}" if len(first) == 1 else f"{first.min():.4f}..{first.max():.4f} over the runs"
    text = (
        f"[{scale.name}] {family}: ours vs {who}: max |diff| = {diff:.2e} over {n} run×measure "
        f"means (first measure = {shown}) "
        f"{'ok, < 1e-9' if ok else '— MISMATCH: the times compare different numbers'}"
    )
    log(text)
    return text, ok


def _profile(scale: Scale, family: str, measures) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    _ours_evaluate(scale, measures)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(18)
    return f"### cProfile of ours ({scale.name}, {family}), sorted by own time\n{out.getvalue().strip()}"


def _warm_up(families: Sequence[str]) -> None:
    """Load every lazily imported module once, on tiny data, so that no timing pays for it."""
    run = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "c", "a"], "relevance": [1, 0, -1]})
    tiny = Scale("warm-up", "", {"run": run}, qrels, 1)
    for family in families:
        strings, _ = FAMILIES[family]
        measures = [ir_incomplete.parse(s) for s in strings]
        _ours_evaluate(tiny, measures)
        _via_provider(ir_measures.providers.registry["ir_incomplete"], tiny, measures)
    _via_provider(ir_measures.pytrec_eval, tiny, [ir_measures.parse_measure("infAP")])
    q, r = _pytrec_dicts(tiny)
    _pytrec_evaluate(q, r, ["infAP"], 1)
    if _ranx() is not None:  # numba compiles on first use
        _ranx_evaluate(tiny, ["bpref"])


# ---------------------------------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------------------------------
def _ratio_text(row: Row) -> str:
    if row.vs_baseline is not None:
        return f"{row.vs_baseline:.2f}× our {BASELINE_FAMILY}"
    if row.ratio is None:
        return ""
    if row.kind == "floor":
        return f"ours = {1 / row.ratio:.2f}× the floor"
    if row.kind == "reference":
        return f"ours {_speed(row.ratio)}"
    return f"{row.ratio:.2f}× ours"


def _speed(ratio: float) -> str:
    """``reference / ours`` as words: "6.3× faster", "1.15× slower"."""
    factor = ratio if ratio >= 1 else 1 / ratio
    text = f"{factor:.2f}" if factor < 2 else f"{factor:.1f}"
    return f"{text}× {'faster' if ratio >= 1 else 'slower'}"


def _seconds(s: float) -> str:
    return f"{s:.3f}" if s >= 0.01 else f"{s:.4f}"


def _megabytes(row: Row) -> str:
    return "" if row.memory_mb is None else f"{row.memory_mb:,.0f}"


def print_text(rows: list[Row], headers: dict[str, str]) -> None:
    width = max(len(r.contender) for r in rows) + 2
    fam_w = max(len(r.family) for r in rows) + 2
    current = None
    for row in rows:
        if row.scale != current:
            current = row.scale
            print(f"\n== {headers[row.scale]}")
            print(f"{'family':<{fam_w}}{'contender':<{width}}{'time (s)':>10}{'peak MB':>9}   ratio (reference / ours)")
        print(
            f"{row.family:<{fam_w}}{row.contender:<{width}}{_seconds(row.seconds):>10}{_megabytes(row):>9}   "
            f"{_ratio_text(row)}"
        )


def print_markdown(rows: list[Row], headers: dict[str, str]) -> None:
    print("| scale | family | contender | time (s) | peak memory (MB) | reference / ours |")
    print("|---|---|---|---:|---:|---|")
    for row in rows:
        print(
            f"| {row.scale} | {row.family} | {row.contender} | {_seconds(row.seconds)} | {_megabytes(row)} "
            f"| {_ratio_text(row)} |"
        )
    print()
    for name in dict.fromkeys(r.scale for r in rows):
        print(f"- {headers[name]}")


def summary(rows: list[Row]) -> list[str]:
    lines = []
    by_scale: dict[str, list[Row]] = {}
    for row in rows:
        by_scale.setdefault(row.scale, []).append(row)
    for scale, items in by_scale.items():
        for row in items:
            if row.kind == "reference" and row.ratio is not None:
                lines.append(f"{scale} {row.family}: ours is {_speed(row.ratio)} than {row.contender}")
            if row.kind == "floor" and row.ratio is not None:
                lines.append(
                    f"{scale} {row.family}: ours takes {1 / row.ratio:.2f}× the numpy floor (hash + sort + cumsum; "
                    f"target at scale M: ≤ 2×)"
                )
            if row.vs_baseline is not None:
                target = "within" if row.vs_baseline <= 2 else "NOT within"
                lines.append(
                    f"{scale} {row.family}: {row.vs_baseline:.2f}× our {BASELINE_FAMILY} time ({target} the 2× target)"
                )
    ours = {(row.scale, row.family): row.seconds for row in rows if row.kind == "ours" and row.ratio is None}
    for (scale, family), seconds in ours.items():
        if scale == "MU" and ("MR", family) in ours:  # the cost of unsorted input: the same rows, sorted
            ratio = seconds / ours[("MR", family)]
            verdict = "met" if ratio <= 1.5 else "MISSED"
            lines.append(
                f"MU {family}: unsorted input takes {ratio:.2f}× the sorted input's time (MR; goal ≤ 1.5×: {verdict})"
            )
    return lines


def _rss_mb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return kb / 1024.0


# ---------------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------------
def _names(text: str, valid: Sequence[str], what: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [n for n in names if n not in valid]
    if unknown or not names:
        raise SystemExit(f"--{what}: unknown {', '.join(unknown) or '(empty)'}; choices: {', '.join(valid)}")
    return names


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--scales", default="S,M,MR,MU,COVID", help="comma-separated: S, M, MR, MU, COVID (default: all)"
    )
    parser.add_argument(
        "--families",
        default=",".join(FAMILIES),
        help=f"comma-separated measure families (default: all = {','.join(FAMILIES)})",
    )
    parser.add_argument("--repeats", type=int, default=3, help="best of N for S and COVID (default 3)")
    parser.add_argument("--repeats-m", type=int, default=1, help="best of N for M (default 1)")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table (for the manual's speed page)")
    parser.add_argument("--profile", action="store_true", help="also cProfile our evaluate call per scale")
    parser.add_argument(
        "--no-memory",
        action="store_true",
        help="skip the peak-memory column (each main contender otherwise runs once more, untimed)",
    )
    args = parser.parse_args(argv)
    scales = _names(args.scales, ("S", "M", "MR", "MU", "COVID"), "scales")
    families = _names(args.families, list(FAMILIES), "families")
    if BASELINE_FAMILY in families:  # the baseline is timed first: the others are reported against it
        families = [BASELINE_FAMILY] + [f for f in families if f != BASELINE_FAMILY]

    _warm_up(families)
    rows: list[Row] = []
    checks: list[tuple[str, bool]] = []
    notes: list[str] = []
    headers: dict[str, str] = {}
    baseline: dict[str, float] = {}
    profiles: list[str] | None = [] if args.profile else None
    for name in scales:
        log(f"[{name}] preparing data (not timed)")
        start = time.perf_counter()
        if name == "S":
            scale = make_scale_s(args.repeats)
        elif name == "M":
            scale = make_scale_m(args.repeats_m)
        elif name in ("MR", "MU"):
            scale = make_scale_unsorted(args.repeats_m, ranked=name == "MR")
        else:
            scale = make_scale_covid(args.repeats)
            if scale is None:
                notes.append(
                    "COVID skipped: ../shared/data/trec-covid-round1 (the shared folder next to the "
                    "repository) is absent"
                )
                log(notes[-1])
                continue
        n_run_rows = sum(len(r) for r in scale.runs.values())
        per_topic = len(scale.qrels) / max(scale.qrels["query_id"].nunique(), 1)
        headers[name] = (
            f"{name}: {scale.description} ({n_run_rows:,} run rows, {len(scale.qrels):,} "
            f"judgments, {per_topic:.1f}/topic; best of {scale.repeats})"
        )
        log(f"[{name}] data ready in {time.perf_counter() - start:.1f} s: {headers[name]}")
        if BASELINE_FAMILY not in families:  # ours-only families are reported against it
            measures = [ir_incomplete.parse(s) for s in FAMILIES[BASELINE_FAMILY][0]]
            log(f"[{name}] {BASELINE_FAMILY}: ours (evaluate), as the baseline of ours-only families")
            baseline[name], _ = best_of(
                scale.repeats, lambda scale=scale, measures=measures: _ours_evaluate(scale, measures)
            )
        for family in families:
            bench_family(scale, family, rows, checks, baseline, profiles, memory=not args.no_memory)
        notes.append(
            f"peak RSS of the process after {name}: {_rss_mb():,.0f} MB (ru_maxrss: includes the "
            f"data and every contender so far)"
        )
        del scale
        gc.collect()

    if not args.no_memory:
        notes.append(
            "peak memory: extra memory of one more, untimed call of the contender: the larger of "
            "tracemalloc's peak (Python and numpy allocations) and the growth of the resident set (C/C++ "
            "allocations such as pytrec_eval's); the loaded data are not counted"
        )
    if not rows:
        for note in notes:
            print(note)
        return 0
    if args.markdown:
        print_markdown(rows, headers)
        print()
        for line in summary(rows):
            print(f"- {line}")
        print()
        for text, _ok in checks:
            print(f"- {text}")
        print()
        print(
            f"- machine: {_cores()} cores; ours = `ir_incomplete.evaluate(..., per_query=False)`, end to end "
            f"from DataFrames"
        )
        for note in notes:
            print(f"- {note}")
    else:
        print_text(rows, headers)
        print("\nvalue checks (aggregate means, |diff| < 1e-9 required):")
        for text, _ok in checks:
            print(f"  {text}")
        print("\nsummary:")
        for line in summary(rows):
            print(f"  {line}")
        print("\nnotes:")
        print(
            f"  machine: {_cores()} cores; ours = ir_incomplete.evaluate(..., per_query=False), end to end "
            f"from DataFrames"
        )
        for note in notes:
            print(f"  {note}")
    for text in profiles or []:
        print(f"\n{text}")
    return 0 if all(ok for _, ok in checks) else 1


def _cores() -> str:
    import os

    return str(len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else str(os.cpu_count())


if __name__ == "__main__":
    sys.exit(main())
