"""Timing of BootNDCG@10 with b = 1000 (the ECIR-23 reference code needs 2.84 s per topic for 4 runs),
and of the bootstrap family beyond nDCG.

Cases: 4 Robust04 runs x 50 topics (deep pools: few unjudged documents), 4 synthetic runs x 50 topics
with half of every top 10 unjudged, and all 143 TREC-COVID round-1 runs x 30 topics. "measure" times
BootNDCG.compute on ranked lists; "end to end" adds turning the run DataFrames into ranked lists.

Family (TREC-COVID round 1, 143 runs x 30 topics, @100, b = 1000): BootAP@100 end to end (goal: at
most 30 s on a 2-core machine) and each of BootAP, BootP, BootRBP, BootQ and BootNDCG(prior=predicted)
against BootNDCG@100 in time per covered unjudged document (goal: within 2x). Measures are timed in
turns, best of the repeats, so that load on a shared machine affects them alike.
Usage: python benchmarks/bench_bootstrap.py [DATA_FOLDER]  (default ../shared/data beside the project)
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from timing import best_of

import ir_incomplete  # noqa: F401
from ir_incomplete.data import Qrels, rank_runs, read_trec_qrels, read_trec_run
from ir_incomplete.grammar import parse

REFERENCE = 2.84  # seconds per topic for 4 runs, b = 1000
DATA = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1].parent / "shared" / "data"
MEASURE = parse("BootNDCG@10")


def best(func, repeat):
    return best_of(repeat, func)[0]


def report(label, runs, qrels, repeat=5):
    judged = Qrels.from_any(qrels)
    ranked = rank_runs(runs, judged)
    unjudged = MEASURE.setup(ranked, judged)["unjudged"].sum() / max(ranked.n_rows, 1)
    measure = best(lambda: MEASURE.compute(ranked, judged), repeat)
    total = best(lambda: MEASURE.compute(rank_runs(runs, judged), judged), repeat)
    reference = REFERENCE * judged.n_topics * len(runs) / 4
    print(
        f"{label}: {len(runs)} runs x {judged.n_topics} topics, {unjudged:.1f} unjudged per top 10 | "
        f"measure {measure:.3f} s, end to end {total:.3f} s | reference {reference:,.0f} s | "
        f"speed-up {reference / total:,.0f}x (measure only {reference / measure:,.0f}x)"
    )


def synthetic(n_runs=4, n_topics=50, depth=1000, seed=0):
    rng = np.random.default_rng(seed)
    qrels, runs = [], {}
    for t in range(n_topics):
        judged_docs = [f"t{t}-d{i}" for i in range(200)]
        qrels += [
            (f"q{t}", d, int(g)) for d, g in zip(judged_docs, rng.choice(3, 200, p=[0.6, 0.25, 0.15]), strict=True)
        ]
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    for r in range(n_runs):
        rows = []
        for t in range(n_topics):
            docs = np.array([f"t{t}-d{i}" for i in rng.permutation(200)] + [f"t{t}-x{i}" for i in range(depth - 200)])
            docs = rng.permutation(docs)  # about 20% judged anywhere; half of every top 10 unjudged below
            top = (
                list(rng.choice([d for d in docs if "-d" in d], 5, replace=False)) + [d for d in docs if "-x" in d][:5]
            )
            rest = [d for d in docs if d not in set(top)]
            order = top + rest
            rows += [(f"q{t}", d, float(depth - i)) for i, d in enumerate(order)]
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs, qrels


FAMILY = ["BootNDCG@100", "BootAP@100", "BootP@100", "BootRBP@100", "BootQ@100", "BootNDCG(prior=predicted)@100"]


def family(runs, qrels, repeat=3):
    judged = Qrels.from_any(qrels)
    ranked = rank_runs(runs, judged)
    # predictions for the unjudged documents of every top 100 and for the judged ones (calibration):
    # a labeler that says 1 for documents of runs' top 20 and 0 otherwise
    frames = [
        frame.assign(rank=frame.groupby("query_id")["score"].rank(method="first", ascending=False))
        for frame in runs.values()
    ]
    top = pd.concat(frames)
    top = top[top["rank"] <= 100].sort_values("rank").drop_duplicates(["query_id", "doc_id"])
    predictions = pd.DataFrame(
        {"query_id": top["query_id"], "doc_id": top["doc_id"], "relevance": (top["rank"] <= 20).astype(int)}
    )
    measures = [parse(m) for m in FAMILY]
    covered = [int(m.setup(ranked, judged, predictions)["unjudged"].sum()) for m in measures]
    best_times = [float("inf")] * len(measures)
    for _ in range(repeat):
        for i, m in enumerate(measures):
            best_times[i] = min(best_times[i], best(lambda m=m: m.compute(ranked, judged, predictions), 1))
    base = best_times[0] / covered[0]
    for m, t, c in zip(measures, best_times, covered, strict=True):
        ratio = t / c / base
        print(f"  {m!r}: {t:.2f} s, {c:,} covered unjudged, {t / c * 1e6:.2f} us each, {ratio:.2f}x BootNDCG@100")
    total = best(lambda: parse("BootAP@100").compute(rank_runs(runs, judged), judged), 1)
    print(f"  BootAP@100 end to end (ranking included): {total:.2f} s (goal <= 30 s)")


if __name__ == "__main__":
    rob = DATA / "robust04"
    if rob.exists():
        qrels = read_trec_qrels(rob / "qrels.robust04.txt.gz")
        topics = list(dict.fromkeys(qrels["query_id"]))[:50]
        qrels = qrels[qrels["query_id"].isin(topics)]
        runs = {p.name.split(".gz")[0]: read_trec_run(p) for p in sorted((rob / "runs").iterdir())[:4]}
        runs = {n: r[r["query_id"].isin(topics)] for n, r in runs.items()}
        report("Robust04", runs, qrels)
    report("synthetic", *synthetic())
    cov = DATA / "trec-covid-round1"
    if cov.exists():
        runs = {p.name[:-3]: read_trec_run(p) for p in sorted((cov / "runs").glob("*.gz"))}
        qrels = read_trec_qrels(cov / "qrels.round1.txt.gz")
        report("TREC-COVID round 1", runs, qrels, repeat=3)
        print("TREC-COVID round 1, bootstrap family, b = 1000:")
        family(runs, qrels)
