"""Bootstrapped nDCG on TREC-COVID round 1: how close do the estimates from shallow judgments come to a
deeper reference?

The 143 round-1 runs are scored with the round-1 qrels (a shallow pool, about depth 7: the incomplete
judgments) by the naive lower bound ``nDCG@10``, the condensed list ``nDCG(judged_only=True)@10``,
``BootNDCG@10`` with each prior and the naive upper bound ``NDCGUpper@10``. The reference is nDCG@10
on the complete qrels of topics 1–30 (all judgments of rounds 1–5). For each estimator the script prints

* RMSE over systems of the mean nDCG@10 (and over the 143 × 30 per-query values),
* Kendall's τ between the system ranking it induces and the reference ranking (``scipy.stats.kendalltau``),
* for ``BootNDCG``: the share of per-query reference values inside the bootstrap range [p5, p95].

It also draws ``BootNDCG@10`` per run with the [p5, p95] bootstrap interval of its mean over the
queries (:func:`ir_incomplete.plot_intervals`) for the 25 runs best on the complete judgments, whose
nDCG@10 is marked as the reference: ``bootstrap_covid_intervals.png`` in the current folder, or in
``--out DIR``; ``--docs`` regenerates the project's ``docs/bootstrap_covid_intervals.png``.

Run from the project root (the data live in ``../shared/data``, or pass its folder)::

    python examples/bootstrap_covid.py [DATA_FOLDER] [--out DIR | --docs] [--runs N] [--quick]

About 30 s on 2 busy cores; ``--quick`` (the first 10 runs, no figure) a few seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

import ir_incomplete
from ir_incomplete.bootstrap import bootstrap_ndcg, value_interval
from ir_incomplete.data import read_trec_qrels, read_trec_run

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
FIGURE = "bootstrap_covid_intervals.png"

ESTIMATORS = [
    ("naive lower", "nDCG@10"),
    ("condensed", "nDCG(judged_only=True)@10"),
    ("BootNDCG pool", "BootNDCG(prior=pool)@10"),
    ("BootNDCG run", "BootNDCG(prior=run)@10"),
    ("BootNDCG pool+run", "BootNDCG@10"),
    ("naive upper", "NDCGUpper@10"),
]


def load(data: Path):
    folder = data / "trec-covid-round1"
    if not folder.exists():
        raise SystemExit(f"{folder} not found: pass the folder that holds trec-covid-round1/")
    runs = {p.name[:-3]: read_trec_run(p) for p in sorted((folder / "runs").glob("*.gz"))}
    return (
        runs,
        read_trec_qrels(folder / "qrels.round1.txt.gz"),
        read_trec_qrels(folder / "qrels.complete-topics1-30.txt.gz"),
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA, help="folder holding trec-covid-round1/")
    parser.add_argument("--out", type=Path, default=Path("."), help="folder for the figure (default: current)")
    parser.add_argument("--docs", action="store_true", help=f"regenerate docs/{FIGURE} of the project")
    parser.add_argument("--no-png", dest="png", action="store_false", help="do not draw the figure")
    parser.add_argument("--runs", type=int, default=None, help="only the first N runs (a quick try)")
    parser.add_argument("--quick", action="store_true", help="the first 10 runs and no figure: a few seconds")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.png = args.runs or 10, False
    runs, round1, complete = load(args.data)
    if args.runs is not None:
        runs = dict(list(runs.items())[: args.runs])
    print(f"{len(runs)} runs; round-1 qrels: {len(round1)} judgments; complete qrels: {len(complete)}")

    reference = ir_incomplete.evaluate(runs, complete, ["nDCG@10"])
    reference = reference.set_index(["run", "query_id"])["value"]
    topics = sorted(set(round1["query_id"]))
    reference = reference[reference.index.get_level_values("query_id").isin(topics)]

    start = time.perf_counter()
    scores = ir_incomplete.evaluate(runs, round1, [m for _, m in ESTIMATORS])
    elapsed = time.perf_counter() - start
    scores = scores.set_index(["measure", "run", "query_id"])["value"]
    ref_system = reference.groupby(level="run").mean()

    rows = []
    for label, measure in ESTIMATORS:
        per_query = scores.loc[repr(ir_incomplete.parse(measure))].reindex(reference.index)
        system = per_query.groupby(level="run").mean().reindex(ref_system.index)
        tau = kendalltau(system.to_numpy(), ref_system.to_numpy()).statistic
        rows.append(
            {
                "estimator": label,
                "measure": measure,
                "mean": system.mean(),
                "RMSE (systems)": float(np.sqrt(np.mean((system - ref_system) ** 2))),
                "RMSE (queries)": float(np.sqrt(np.mean((per_query - reference) ** 2))),
                "Kendall tau": tau,
            }
        )
    table = pd.DataFrame(rows)

    coverage = {}
    for label, prior in (("BootNDCG pool", "pool"), ("BootNDCG run", "run"), ("BootNDCG pool+run", "pool+run")):
        result = bootstrap_ndcg(runs, round1, k=10, prior=prior)
        summary = result.summary.set_index(["run", "query_id"])
        summary = summary.reindex(reference.index)
        inside = (reference >= summary["p5"] - 1e-12) & (reference <= summary["p95"] + 1e-12)
        coverage[label] = float(inside.mean())
    table["ref in [p5,p95]"] = table["estimator"].map(coverage)
    if args.png:
        path = (ROOT / "docs" if args.docs else args.out) / FIGURE
        _figure(result.replicates, scores.loc[repr(ir_incomplete.parse("BootNDCG@10"))], ref_system, len(topics), path)

    print(
        f"reference: nDCG@10 on the complete qrels, mean {ref_system.mean():.4f} over {len(ref_system)} runs, "
        f"{len(topics)} topics"
    )
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4f}".format):
        print(table.to_string(index=False, na_rep="-"))
    print(f"(all six estimators for {len(runs)} runs x {len(topics)} topics evaluated in {elapsed:.1f} s)")
    return 0


def _figure(replicates: pd.DataFrame, boot: pd.Series, reference: pd.Series, n_topics: int, path: Path) -> None:
    """BootNDCG@10 (pool+run prior) of the 25 runs best on the complete judgments, with the [p5, p95]
    interval of the bootstrap distribution of each run's mean over queries, extended to the run's value
    (the mean of its queries' most likely values) where that lies outside (as ``evaluate(interval=0.9)``)."""
    best = reference.sort_values(ascending=False).index[:25]
    means = replicates.groupby(level="run").mean().loc[best]  # replicate r's mean over the run's queries
    value = boot.groupby(level="run").mean().loc[best].to_numpy()
    p5, p95 = value_interval(
        value, np.percentile(means.to_numpy(), 5, axis=1), np.percentile(means.to_numpy(), 95, axis=1)
    )
    table = pd.DataFrame({"run": best, "measure": "BootNDCG@10", "value": value, "p5": p5, "p95": p95})
    path.parent.mkdir(parents=True, exist_ok=True)
    ir_incomplete.plot_intervals(
        table,
        reference=reference,
        path=path,
        dpi=80,
        figsize=(7.0, 6.5),
        title=f"TREC-COVID round 1 ({n_topics} topics): BootNDCG@10 [p5, p95]; x = complete nDCG@10",
    )
    print(f"saved {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    sys.exit(main())
