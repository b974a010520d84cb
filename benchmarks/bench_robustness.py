"""Timing of a robustness study, and the share of it spent in the agreement statistics.

Grid: the 10 Robust04 runs (249 topics), ``method="sample"``, levels 30/10/5 % × 5 repeats, measures
AP, Bpref and infAP compared with themselves on the full judgments, one process. The whole study is
timed (best of ``--repeats``, wall clock and the CPU time of this process, which depends less on other
load of the machine); the statistics are timed by wrapping the ``agreement`` function the
study calls for every (cell, measure). The statistics of the robustness toolkit that a study does not
compute (discriminative power with each test, preference agreement) are timed once on the full
judgments' per-topic AP for reference.

Usage: python benchmarks/bench_robustness.py [--data FOLDER] [--repeats N] [--n-jobs N]
(default data: ../shared/data/robust04 beside the project)
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "robust04"
MEASURES = ["AP", "Bpref", "infAP"]
LEVELS = [0.3, 0.1, 0.05]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder with qrels.robust04.txt.gz and runs/")
    parser.add_argument("--repeats", type=int, default=3, help="time the study this many times, keep the best")
    parser.add_argument("--grid-repeats", type=int, default=5, help="random samples per level (default 5)")
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"{args.data} is absent: nothing to time (the Robust04 data lives in ../shared/data/robust04)")
        return 0

    import ir_incomplete
    from ir_incomplete.robustness import study as study_module

    qrels = ir_incomplete.read_trec_qrels(args.data / "qrels.robust04.txt.gz")
    runs = {
        p.name.split(".gz")[0].replace("input.", ""): ir_incomplete.read_trec_run(p)
        for p in sorted((args.data / "runs").iterdir())
    }
    original = study_module.agreement
    spent = {"seconds": 0.0, "calls": 0}

    def timed_agreement(x, y):
        start = time.perf_counter()
        try:
            return original(x, y)
        finally:
            spent["seconds"] += time.perf_counter() - start
            spent["calls"] += 1

    def study():
        return study_module.robustness_study(
            runs,
            qrels,
            MEASURES,
            method="sample",
            levels=LEVELS,
            repeats=args.grid_repeats,
            seed=1,
            n_jobs=args.n_jobs,
            progress=False,
        )

    study_module.agreement = timed_agreement
    try:
        study_module.robustness_study(
            dict(list(runs.items())[:2]), qrels, ["AP"], levels=[0.5], repeats=1, progress=False
        )
        best = None
        for _ in range(args.repeats):
            gc.collect()
            spent.update(seconds=0.0, calls=0)
            start, cpu = time.perf_counter(), time.process_time()
            result = study()
            total, cpu = time.perf_counter() - start, time.process_time() - cpu
            if best is None or total < best[0]:
                best = (total, cpu, spent["seconds"], spent["calls"])
    finally:
        study_module.agreement = original
    total, cpu, statistics, calls = best
    print(
        f"Robust04: {len(runs)} runs × {qrels['query_id'].nunique()} topics; method=sample, levels "
        f"{'/'.join(f'{v:.0%}' for v in LEVELS)} × {args.grid_repeats} repeats; {', '.join(MEASURES)}; "
        f"n_jobs={args.n_jobs}; best of {args.repeats}"
    )
    print(
        f"statistics columns: {', '.join(c for c in result.stats.columns if c not in ('measure', 'level', 'repeat'))}"
    )
    print(
        f"study: {total:.2f} s ({cpu:.2f} s CPU); agreement statistics: {statistics * 1000:.1f} ms "
        f"in {calls} calls ({statistics / total:.2%})"
    )

    try:
        from ir_incomplete.robustness import discriminative_power, preference_agreement
    except ImportError:  # statistics of later versions
        return 0
    from ir_incomplete.robustness import sample_judgments

    full = ir_incomplete.evaluate(runs, qrels, ["AP"])
    degraded = ir_incomplete.evaluate(runs, sample_judgments(qrels, 0.1, 1), ["AP"])
    for test in ("t", "bootstrap", "randomized_tukey"):
        start = time.perf_counter()
        power = discriminative_power(full, test=test, B=1000, seed=1)
        print(
            f"discriminative_power(test={test!r}, B=1000): {power:.4f} in {(time.perf_counter() - start) * 1000:.1f} ms"
        )
    start = time.perf_counter()
    pref = preference_agreement(full, degraded)
    print(f"preference_agreement (10 % sample): F1 {pref['f1']:.4f} in {(time.perf_counter() - start) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
