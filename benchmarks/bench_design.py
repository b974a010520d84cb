"""Timing of the design-based estimates on TREC-COVID round 1 (143 runs x 30 topics).

A 4,000-judgment Poisson sample of the runs' top 100 (``ir_incomplete.judging.sample(runs, 4000,
seed=0)``), judged from ``qrels.complete-topics1-30`` (a pair it does not judge is nonrelevant, grade 0);
then ``estimate(runs, judgments, design, ["AP@100", "nDCG@10"])`` for the 143 run means plus the same
call with ``pairs=True`` for the 10,153 pairs of runs, timed together (goal: at most 5 s), once from runs
already read (``ir_incomplete.data.prepare_runs``, reading not timed) and once from the run files
(reading included). ``sample`` is timed too. Every time is the median of ``--repeats`` calls (default 3),
garbage collected before each.

Usage::

    python benchmarks/bench_design.py [--data DATA_FOLDER] [--repeats N]

Skipped, with a message, when ``../shared/data/trec-covid-round1`` is absent. Exit code 1 when a check
of the output fails (row counts; an estimate that is not finite; estimates from files that differ from
those from runs already read).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import ir_incomplete
from ir_incomplete import estimate
from ir_incomplete.data import prepare_runs, read_trec_qrels
from ir_incomplete.judging import sample

BUDGET = 4000
MEASURES = ["AP@100", "nDCG@10"]
GOAL = 5.0  # seconds for the run means and every pair, from runs already read


def median_of(repeats: int, thunk: Callable[[], Any]) -> tuple[float, Any]:
    """The median wall-clock time of ``repeats`` calls of ``thunk`` and the result of the last call."""
    times, result = [], None
    for _ in range(max(repeats, 1)):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = thunk()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def judgments_for(design: pd.DataFrame, complete: pd.DataFrame) -> pd.DataFrame:
    """The grade of every design pair from the complete qrels; a pair they do not judge gets 0."""
    grades = complete[["query_id", "doc_id", "relevance"]].astype({"query_id": str, "doc_id": str})
    out = design[["query_id", "doc_id"]].merge(grades, on=["query_id", "doc_id"], how="left")
    out["relevance"] = out["relevance"].fillna(0).clip(lower=0).astype(int)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    covid = Path(args.data) / "trec-covid-round1"
    if not (covid / "runs").is_dir() or not (covid / "qrels.complete-topics1-30.txt.gz").exists():
        print(f"{covid} is absent: nothing to time")
        return 0
    run_dir = str(covid / "runs")
    start = time.perf_counter()
    runs = prepare_runs(run_dir)
    read = time.perf_counter() - start
    complete = read_trec_qrels(str(covid / "qrels.complete-topics1-30.txt.gz"))
    n_runs = len(runs.run_names)
    n_pairs = n_runs * (n_runs - 1) // 2

    sample(runs, BUDGET, seed=0)  # warm-up: imports, first calls
    t_sample, design = median_of(args.repeats, lambda: sample(runs, BUDGET, seed=0))
    judgments = judgments_for(design, complete)

    def both(source: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
        return estimate(source, judgments, design, MEASURES), estimate(source, judgments, design, MEASURES, pairs=True)

    both(runs)  # warm-up
    t_prepared, (means, pairs) = median_of(args.repeats, lambda: both(runs))
    t_files, (means_f, pairs_f) = median_of(args.repeats, lambda: both(run_dir))

    ok = len(means) == n_runs * len(MEASURES) and len(pairs) == n_pairs * len(MEASURES)
    ok &= bool(np.isfinite(means[["value", "se"]].to_numpy()).all() and np.isfinite(pairs["se"]).all())
    ok &= means.equals(means_f) and pairs.equals(pairs_f)
    sampled = int((design["stratum"] == "sampled").sum())
    width = (means["hi"] - means["lo"]).groupby(means["measure"]).mean()
    significant = pairs.groupby("measure")["significant"].mean()

    print(f"ir_incomplete {ir_incomplete.__version__}: TREC-COVID round 1, {n_runs} runs x 30 topics, depth 100")
    print(
        f"  design: {len(design):,} pairs drawn ({sampled:,} sampled; expected "
        f"{design.attrs['expected_judgments']:,.0f}) from a universe of {design.attrs['universe']:,} pairs"
    )
    print(f"  sample(runs, {BUDGET}, seed=0), runs already read: {t_sample:.3f} s (median of {args.repeats})")
    print(f"  reading and preparing the 143 run files once (not in the times below): {read:.2f} s")
    print(
        f"  estimate {', '.join(MEASURES)}: {n_runs} run means + {n_pairs:,} pairs, median of {args.repeats}: "
        f"{t_prepared:.3f} s from runs already read, {t_files:.3f} s from the run files (goal: <= {GOAL:g} s)"
    )
    for m in MEASURES:
        print(f"    {m}: mean 90% interval width {width[m]:.4f}; {significant[m]:.1%} of the pairs significant")
    met = t_prepared <= GOAL
    print(f"  goal (<= {GOAL:g} s from runs already read): {'met' if met else 'missed'}")
    if not ok:
        print("output check failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
