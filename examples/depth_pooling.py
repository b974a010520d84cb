"""Shallow pools on TREC-COVID: the depth-pool experiment of Yilmaz & Aslam (KAIS 2008, §4.5.5).

The 143 TREC-COVID round-1 runs and every judgment made for topics 1–30 over rounds 1–5 (the "complete"
judgments). For each pool depth k, only the documents some run ranks in its top k keep their judgment;
the other judged documents stay as pooled but unjudged (−1: the full pool is known, as in the paper).
AP, infAP, induced AP, subcollection AP and bpref are computed with these judgments and compared with AP
on the complete judgments: Kendall τ of the system rankings and RMS error of the per-run means (and
every other statistic the study reports, e.g. τ_AP when available), as curves over k.

Run from the project folder (the data live in ``../shared/data/trec-covid-round1``)::

    python examples/depth_pooling.py [--levels 1,2,4,10,20,50,100] [--out depth_pooling.png] [--docs]
                                     [--no-png] [--quick]

writes the PNG to ``--out`` (default ``depth_pooling.png`` in the current folder; ``--docs`` writes
``docs/depth_pooling.png`` for the manual). About 25 s on 2 busy cores; ``--quick`` (the first 20 runs,
depths 1 and 10, no figure) a few seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trec-covid-round1"
LEVELS = (1, 2, 4, 10, 20, 50, 100)
MEASURES = ("AP", "infAP", "indAP", "subAP", "Bpref")
REFERENCE = "AP"


def load(data: Path = DATA):
    """``runs`` (name → DataFrame) and the complete judgments of topics 1–30."""
    import ir_incomplete

    if not data.exists():
        raise SystemExit(f"{data} not found: the TREC-COVID round-1 data live in ../shared/data/trec-covid-round1")
    runs = {p.name[:-3]: ir_incomplete.read_trec_run(p) for p in sorted((data / "runs").glob("*.gz"))}
    return runs, ir_incomplete.read_trec_qrels(data / "qrels.complete-topics1-30.txt.gz")


def depth_study(runs, complete, levels=LEVELS, measures=MEASURES, n_jobs: int = 1):
    """``robustness_study(method="depth")`` against AP on the complete judgments."""
    from ir_incomplete.robustness import robustness_study

    return robustness_study(
        runs,
        complete,
        list(measures),
        method="depth",
        levels=list(levels),
        reference=REFERENCE,
        n_jobs=n_jobs,
    )


def plot(stats: pd.DataFrame, path) -> None:
    """τ (and τ_AP when the study reports it) and RMSE against the pool depth, side by side."""
    from matplotlib.figure import Figure

    from ir_incomplete.robustness import plot_robustness

    panels = [s for s in ("tau", "tau_ap", "rmse") if s in stats.columns]
    fig = Figure(figsize=(3.8 * len(panels), 3.4), layout="constrained")
    for ax, stat in zip(fig.subplots(1, len(panels), squeeze=False)[0], panels, strict=True):
        try:
            plot_robustness(stats, stat, ax=ax, logx=True, title=f"{stat} vs AP on complete judgments")
        except ValueError:  # a statistic the plotting function does not know
            for measure, sub in stats.groupby("measure", sort=False):
                ax.plot(sub["level"], sub[stat], marker="o", markersize=4, label=measure)
            ax.set_xscale("log")
            ax.set_xlabel("pool depth")
            ax.set_ylabel(stat)
            ax.legend(fontsize=7)
    fig.suptitle("TREC-COVID round-1 runs, depth-k pools of the complete topics 1–30 judgments", fontsize=9)
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--levels", default=",".join(map(str, LEVELS)), help="pool depths, comma-separated")
    p.add_argument("--out", default="depth_pooling.png", help="PNG file (default: depth_pooling.png here)")
    p.add_argument("--docs", action="store_true", help="write docs/depth_pooling.png (for the manual)")
    p.add_argument("--n-jobs", type=int, default=1)
    p.add_argument("--no-png", dest="png", action="store_false", help="do not draw the figure")
    p.add_argument("--quick", action="store_true", help="the first 20 runs, depths 1 and 10, no figure")
    args = p.parse_args(argv)
    if args.quick:
        args.levels, args.png = "1,10", False
    levels = [int(v) for v in args.levels.split(",") if v.strip()]
    runs, complete = load()
    if args.quick:
        runs = dict(list(runs.items())[:20])
    start = time.perf_counter()
    result = depth_study(runs, complete, levels, n_jobs=args.n_jobs)
    print(f"{len(runs)} runs, {len(complete)} judgments, depths {levels}: {time.perf_counter() - start:.1f} s")
    stats = result.stats.drop(columns="repeat")
    for stat in [c for c in stats.columns if c not in ("measure", "level")]:
        print(f"\n{stat}:")
        print(stats.pivot(index="measure", columns="level", values=stat).loc[list(MEASURES)].round(4).to_string())
    path = ROOT / "docs" / "depth_pooling.png" if args.docs else Path(args.out)
    if not args.png:
        return 0
    try:
        plot(result.stats, path)
        print(f"\nwrote {path}")
    except ImportError:
        print("matplotlib is not installed: no plot")
    return 0


if __name__ == "__main__":
    sys.exit(main())
