"""Yilmaz & Aslam (KAIS 2008) sampling experiment on Robust04.

Each topic's complete judgments are replaced by a uniform random sample of 30 %, 10 % and 5 % of them
(at least one relevant document kept; the documents left out stay in the pool as pooled-but-unjudged,
qrels grade −1), 10 times per level. All 10 runs are scored with AP, bpref, infAP and induced AP (indAP,
when this version of ir_incomplete ships it) on every sample and compared with AP on the complete
judgments: Kendall τ of the system rankings, Pearson ρ and RMS error of the MAP values (means over the
10 samples, ± standard deviation). Prints its own run time and saves ``robust04_sampling.png`` in the
current folder, or in ``--out DIR``; ``--docs`` regenerates the project's ``docs/robust04_sampling.png``.

Run from the project folder (the data lives in ``../shared/data/robust04``)::

    python examples/robust04_sampling.py [--n-jobs 2] [--repeats 10] [--out DIR | --docs] [--quick]

About 45 s on 2 busy cores; ``--quick`` (2 repeats in this process, no figure) a few seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "robust04"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder with qrels.robust04.txt.gz and runs/")
    parser.add_argument("--n-jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2008)
    parser.add_argument("--out", type=Path, default=Path("."), help="folder for the figure (default: current)")
    parser.add_argument("--docs", action="store_true", help="regenerate docs/robust04_sampling.png of the project")
    parser.add_argument("--no-png", dest="png", action="store_false", help="do not draw the figure")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (default: on a terminal)")
    parser.add_argument("--quick", action="store_true", help="2 repeats in this process, no figure: a few seconds")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.n_jobs, args.png = 2, 1, False
    if args.png:
        args.png = (ROOT / "docs" if args.docs else args.out) / "robust04_sampling.png"

    start = time.perf_counter()
    if not args.data.exists():
        print(f"{args.data} is absent: nothing to do (the Robust04 data lives in ../shared/data/robust04)")
        return 0
    import ir_measures

    import ir_incomplete
    from ir_incomplete.robustness import plot_robustness, robustness_study, summarize

    qrels = ir_incomplete.read_trec_qrels(args.data / "qrels.robust04.txt.gz")
    runs = {
        p.name.split(".gz")[0].replace("input.", ""): ir_incomplete.read_trec_run(p)
        for p in sorted((args.data / "runs").iterdir())
    }
    measures = ["AP", "Bpref", "infAP"]
    if "indAP" in ir_measures.measures.registry:
        measures.append("indAP")
    else:
        print("indAP is not available in this version of ir_incomplete: left out")
    print(
        f"Robust04: {len(runs)} runs, {qrels['query_id'].nunique()} topics, {len(qrels)} judgments; "
        f"measures {', '.join(measures)}; samples of 30/10/5 % × {args.repeats}; reference AP on full qrels"
    )

    result = robustness_study(
        runs,
        qrels,
        measures,
        method="sample",
        levels=[0.3, 0.1, 0.05],
        repeats=args.repeats,
        seed=args.seed,
        reference="AP",
        n_jobs=args.n_jobs,
        progress=False if args.no_progress else None,
    )
    summary = summarize(result.stats)
    print()
    print(f"{'measure':<8} {'sample':>6}  {'Kendall tau':>15}  {'Pearson rho':>15}  {'RMS error':>15}")
    for row in summary.itertuples(index=False):
        print(
            f"{row.measure:<8} {row.level * 100:>5.0f}%  {row.tau:>7.4f} ± {row.tau_std:.4f}  "
            f"{row.pearson:>7.4f} ± {row.pearson_std:.4f}  {row.rmse:>7.4f} ± {row.rmse_std:.4f}"
        )

    if args.png:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(8.0, 3.2), layout="constrained")
        left, right = fig.subplots(1, 2)
        plot_robustness(result.stats, "tau", ax=left, title="Kendall τ vs AP (full qrels)")
        plot_robustness(result.stats, "rmse", ax=right, title="RMS error vs AP (full qrels)")
        for ax in (left, right):
            ax.set_xticks([5, 10, 30])
        fig.suptitle(f"Robust04, {len(runs)} runs: random samples of the judgments ({args.repeats} each)", fontsize=9)
        args.png.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.png, dpi=90)
        print(f"\nsaved {args.png.relative_to(ROOT) if args.png.is_relative_to(ROOT) else args.png}")
    print(f"run time: {time.perf_counter() - start:.1f} s (n_jobs={args.n_jobs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
