"""Which documents to judge: depth pooling, RRF priority, MoveToFront, a bandit and judge-next on TREC-COVID.

The 143 TREC-COVID round-1 runs; the oracle is every judgment made for topics 1–30 over rounds 1–5 (a
document the oracle does not judge counts as not relevant; each document handed out costs one
judgment). Every method starts from no judgments and judges in rounds of ``--step`` documents; after
each round all runs are scored with AP and nDCG@10 on the judgments acquired, and their ranking is
compared with the one on the whole oracle (Kendall τ, τ_AP, RMSE): :func:`ir_incomplete.judging.simulate`.

Methods: depth pooling (judged depth by depth), reciprocal-rank-fusion priority (k = 2, one order across
topics), MoveToFront (Cormack et al. 1998), the maximum-mean bandit (Losada et al. 2017) and judge-next
(``ir_incomplete.judging.mtc``, once optimising AP and once nDCG@10; skipped with a message when
it is not installed).

By default the four methods judge in rounds of 1,000 (about a minute on 2 busy cores). ``--full``
reproduces the project's measured tables: rounds of 500, judge-next too, and the depth-k and RRF points
(depth 1/2/5/7/10 and RRF 2,000 / 4,000 / 6,500 judgments); measured 520 s on 2 busy cores, of which
judge-next 325 s and the table points 75 s. ``--quick``: 20 runs, 2,000 judgments in rounds of 1,000,
no figure (a few seconds).

Run from the project folder (the data live in ``../shared/data/trec-covid-round1``)::

    python examples/judging_covid.py [--data DIR] [--quick | --full] [--budget 12000] [--step N]
                                     [--out DIR] [--docs]

saves ``judging_covid.png`` in ``--out`` (default: the current folder; ``--docs`` writes
``docs/judging_covid.png`` for the manual).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trec-covid-round1"
MEASURES = ("nDCG@10", "AP")
DEPTHS = (1, 2, 5, 7, 10)
RRF_POINTS = (2000, 4000, 6500)


def load(data: Path = DATA):
    """``runs`` (name → DataFrame) and the complete judgments of topics 1–30."""
    import ir_incomplete

    if not data.exists():
        raise SystemExit(f"{data} not found: the TREC-COVID round-1 data live in ../shared/data/trec-covid-round1")
    runs = {p.name[:-3]: ir_incomplete.read_trec_run(p) for p in sorted((data / "runs").glob("*.gz"))}
    return runs, ir_incomplete.read_trec_qrels(data / "qrels.complete-topics1-30.txt.gz")


def strategies(judge_next: bool = True) -> dict[str, object]:
    """The methods compared, by label (judge-next when asked and its module is installed)."""
    from ir_incomplete.judging import DepthPool, MaxMeanBandit, MoveToFront, RRFPool, make_strategy

    out: dict[str, object] = {
        "depth pooling": DepthPool(),
        "RRF priority (k=2)": RRFPool(k=2),
        "MoveToFront": MoveToFront(),
        "bandit (MM)": MaxMeanBandit(),
    }
    if not judge_next:
        return out
    if importlib.util.find_spec("ir_incomplete.judging.mtc") is not None:
        out["judge-next (AP)"] = make_strategy("judge_next", measure="AP")
        out["judge-next (nDCG@10)"] = make_strategy("judge_next", measure="nDCG@10")
    else:
        print("ir_incomplete.judging.mtc is not installed: judge-next is skipped")
    return out


def table_points(runs, complete, budget: int) -> pd.DataFrame:
    """τ at the depth-k pool sizes and at the RRF budgets of the measured table (those within the
    pooled documents)."""
    from ir_incomplete.judging import DepthPool, RRFPool, pool, simulate

    sizes = sorted({len(pool(runs, "depth", depth=k)) for k in DEPTHS})
    depth = simulate(runs, complete, DepthPool(), sizes[-1], sizes, measures=list(MEASURES))
    names = {len(pool(runs, "depth", depth=k)): k for k in reversed(DEPTHS)}
    depth["method"] = [f"depth {names[j]}" for j in depth["judgments"]]
    points = [p for p in RRF_POINTS if p <= budget] or [budget]
    rrf = simulate(runs, complete, RRFPool(k=2), points[-1], points, measures=list(MEASURES))
    rrf["method"] = "RRF k=2"
    both = pd.concat([depth, rrf], ignore_index=True)
    return both.pivot_table(index=["method", "judgments"], columns="measure", values="tau", sort=False)[list(MEASURES)]


def plot(curves: dict[str, pd.DataFrame], path) -> None:
    """τ and τ_AP against judgments, one panel per measure and statistic."""
    from matplotlib.figure import Figure

    from ir_incomplete.judging import plot_simulation

    fig = Figure(figsize=(10.5, 7.2), layout="constrained")
    axes = fig.subplots(2, len(MEASURES), squeeze=False)
    for row, statistic in enumerate(("tau", "tau_ap")):
        plot_simulation(curves, statistic, measures=list(MEASURES), ax=axes[row], targets=(0.9,))
    fig.suptitle(
        "TREC-COVID round 1 (143 runs): judgments acquired from nothing vs agreement with the complete judgments",
        fontsize=9,
    )
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(DATA), help="the TREC-COVID round-1 folder (default ../shared/data/...)")
    p.add_argument("--budget", type=int, default=None, help="judgments per method (default 12000)")
    p.add_argument("--step", type=int, default=None, help="judgments per round (default 1000; 500 with --full)")
    p.add_argument(
        "--full",
        action="store_true",
        help="the measured tables: rounds of 500, judge-next and the depth-k/RRF points (measured 520 s on 2 "
        "busy cores)",
    )
    p.add_argument("--quick", action="store_true", help="20 runs, 2000 judgments in rounds of 1000, no figure")
    p.add_argument("--out", default=".", help="folder for judging_covid.png (default: the current folder)")
    p.add_argument("--docs", action="store_true", help="write docs/judging_covid.png (for the manual)")
    args = p.parse_args(argv)
    budget, step = (2000, 1000) if args.quick else (12000, 500 if args.full else 1000)
    args.budget = budget if args.budget is None else args.budget
    args.step = step if args.step is None else args.step
    from ir_incomplete.judging import simulate

    runs, complete = load(Path(args.data))
    if args.quick:
        runs = dict(list(runs.items())[:20])
    start = time.perf_counter()
    if args.full:
        print("Kendall τ against the complete judgments (the measured table):")
        print(table_points(runs, complete, args.budget).round(3).to_string())
    curves = {}
    for label, strategy in strategies(judge_next=args.full).items():
        t0 = time.perf_counter()
        curve = simulate(runs, complete, strategy, args.budget, args.step, measures=list(MEASURES))
        curves[label] = curve
        reach = {}
        for measure in MEASURES:
            part = curve[(curve["measure"] == measure) & (curve["tau"] >= 0.9)]
            reach[measure] = int(part["judgments"].iloc[0]) if len(part) else None
        print(
            f"{label}: {time.perf_counter() - t0:.1f} s (choosing {curve['seconds'].iloc[-1]:.2f} s); "
            f"{int(curve['relevant'].iloc[-1])} relevant found; first round with τ ≥ 0.9: "
            + ", ".join(f"{m} {'not within ' + str(args.budget) if v is None else v}" for m, v in reach.items())
        )
    table = pd.concat({k: v.set_index(["judgments", "measure"])["tau"] for k, v in curves.items()}, axis=1)
    print("\nKendall τ by judgments:")
    print(table.unstack("measure").round(3).to_string())
    print(f"\nall simulations: {time.perf_counter() - start:.1f} s")
    if args.quick:
        return 0
    path = ROOT / "docs" / "judging_covid.png" if args.docs else Path(args.out) / "judging_covid.png"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        plot(curves, path)
        print(f"\nsaved {path}")
    except ImportError:
        print("matplotlib is not installed: no plot")
    return 0


if __name__ == "__main__":
    sys.exit(main())
