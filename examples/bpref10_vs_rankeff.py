"""Ahlgren & Grönqvist (IP&M 2008) stratified reduction experiment on Robust04: bpref-10 vs RankEff.

Each topic's judgments are reduced to 50, 25, 10 and 5 % of every relevance grade
(:func:`ir_incomplete.robustness.stratified_sample`: at least 1 relevant and 10 nonrelevant documents
kept per topic where available; the documents left out stay in the pool as −1), ``--repeats`` times per
level. All 10 runs are scored with AP, bpref, bpref-10 (the paper's R+10 denominator), RankEff and infAP
on every reduced set, and each measure is compared with *itself* on the full judgments:

* Kendall τ and τ_AP of the system rankings, RMS error and bias of the mean scores (mean over repeats);
* swap rates (Voorhees & Buckley) of two disjoint sets of ``--subset`` topics, ``--trials`` draws, in
  bins of the difference relative to the best run's score (as the paper does to compare measures with
  different ranges), on the full judgments and on the first reduced set of each level;
* discriminative power: the fraction of the 45 run pairs significantly different (α = 0.05) with the
  paired t-test (mean over repeats) and with Sakai's paired bootstrap test (B = ``--B``, first reduced
  set of each level).

Prints the tables and its run time and saves ``bpref10_vs_rankeff.png`` in ``--out`` (the current
folder by default; ``--docs`` saves it in the project's ``docs/`` folder instead).

Run from the project folder (the data lives in ``../shared/data/robust04``)::

    python examples/bpref10_vs_rankeff.py [--levels 50,25,10,5] [--repeats 5] [--out FOLDER | --docs] [--no-png]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "robust04"
MEASURES = {  # display name -> measure string
    "AP": "AP",
    "bpref": "Bpref",
    "bpref-10": "Bpref10(variant=paper)",
    "RankEff": "RankEff",
    "infAP": "infAP",
}
LEVELS = (0.5, 0.25, 0.1, 0.05)
SWAP_BINS = (0.0, 0.05, 0.1, 0.2, np.inf)  # differences relative to the best score


def load(data: Path):
    import ir_incomplete

    qrels = ir_incomplete.read_trec_qrels(data / "qrels.robust04.txt.gz")
    runs = {
        p.name.split(".gz")[0].replace("input.", ""): ir_incomplete.read_trec_run(p)
        for p in sorted((data / "runs").iterdir())
    }
    return runs, qrels


def _per_topic(runs, qrels, measures) -> dict[str, pd.DataFrame]:
    """``{display name: runs × topics matrix}`` from one ``evaluate`` call."""
    import ir_incomplete
    from ir_incomplete.api import as_measures

    frame = ir_incomplete.evaluate(runs, qrels, list(measures.values()), per_query=True)
    labels = frame["measure"].map(lambda m: m if isinstance(m, str) else repr(m))
    out = {}
    for name, measure in measures.items():
        sub = frame[labels == repr(as_measures([measure])[0])]
        out[name] = sub.pivot(index="run", columns="query_id", values="value").reindex(list(runs))
    return out


def _swap_bins(matrix: pd.DataFrame, subset: int, trials: int, seed: int) -> list[float]:
    """Swap rate in each relative-difference bin of ``SWAP_BINS`` (NaN for an empty bin), then overall."""
    from ir_incomplete.robustness import swap_rates

    table = swap_rates(matrix, subset, trials=trials, seed=seed, bin_width=0.01, relative=True)
    rates = []
    for low, high in zip(SWAP_BINS[:-1], SWAP_BINS[1:], strict=True):
        inside = table[(table["bin_low"] >= low - 1e-9) & (table["bin_low"] < high - 1e-9)]
        n = inside["comparisons"].sum()
        rates.append(inside["swaps"].sum() / n if n else float("nan"))
    rates.append(table["swaps"].sum() / table["comparisons"].sum())
    return rates


def experiment(
    runs,
    qrels,
    levels=LEVELS,
    repeats: int = 5,
    seed: int = 2008,
    measures=None,
    subset: int = 50,
    trials: int = 1000,
    B: int = 1000,  # noqa: N803
    progress=None,
):
    """The whole experiment. Returns three DataFrames:

    * ``agreement``: one row per (measure, level): mean over repeats of τ, τ_AP, RMSE, bias, and the
      t-test discriminative power; ``level`` 1.0 is the full judgments;
    * ``swaps``: one row per (measure, level): swap rate per relative-difference bin and overall;
    * ``power``: one row per (measure, level): discriminative power with the t-test and the bootstrap
      test on the first reduced set (the full judgments at level 1.0).
    """
    from ir_incomplete.robustness import agreement, discriminative_power, stratified_sample

    measures = dict(MEASURES if measures is None else measures)
    full = _per_topic(runs, qrels, measures)
    agree_rows, swap_rows, power_rows = [], [], []

    def powers(name, level, matrix):
        swap_rows.append((name, level, *_swap_bins(matrix, subset, trials, seed)))
        power_rows.append(
            (
                name,
                level,
                discriminative_power(matrix, test="t"),
                discriminative_power(matrix, test="bootstrap", B=B, seed=seed),
            )
        )

    for name, matrix in full.items():
        powers(name, 1.0, matrix)
        stat = agreement(matrix.mean(axis=1), matrix.mean(axis=1))
        agree_rows.append((name, 1.0, 0, *stat.values(), power_rows[-1][2]))
    for level in levels:
        for r in range(repeats):
            # seeded by the level itself (in parts per million): a level gives the same reductions
            # whichever other levels are run
            cell_seed = int(np.random.SeedSequence([seed, round(level * 1e6), r]).generate_state(1)[0])
            degraded = _per_topic(runs, stratified_sample(qrels, level, cell_seed), measures)
            for name, matrix in degraded.items():
                stat = agreement(full[name].mean(axis=1), matrix.mean(axis=1))
                agree_rows.append((name, level, r, *stat.values(), discriminative_power(matrix, test="t")))
                if r == 0:
                    powers(name, level, matrix)
            if progress:
                progress(f"level {level:.0%}, repeat {r + 1}/{repeats}")
    keys = list(agreement([0.0, 1.0], [0.0, 1.0]))
    cells = pd.DataFrame(agree_rows, columns=["measure", "level", "repeat", *keys, "power_t"])
    agreement_table = (
        cells.groupby(["measure", "level"], sort=False)[["tau", "tau_ap", "rmse", "bias", "power_t"]]
        .mean()
        .reset_index()
    )
    agreement_table.attrs["cells"] = cells
    bins = [
        f"{lo:.0%}-{hi:.0%}" if np.isfinite(hi) else f">={lo:.0%}"
        for lo, hi in zip(SWAP_BINS[:-1], SWAP_BINS[1:], strict=True)
    ]
    swaps = pd.DataFrame(swap_rows, columns=["measure", "level", *bins, "all"])
    power = pd.DataFrame(power_rows, columns=["measure", "level", "power_t", "power_bootstrap"])
    return agreement_table, swaps, power


def _print_tables(agreement_table, swaps, power, repeats, subset, trials, B) -> None:  # noqa: N803
    def level(v):
        return "full" if v == 1.0 else f"{v:.0%}"

    print(f"\nAgreement with the same measure on the full judgments (mean of {repeats} reductions)")
    print(f"{'measure':<9} {'level':>5}  {'tau':>6}  {'tau_AP':>6}  {'RMSE':>6}  {'bias':>7}  {'power (t)':>9}")
    for row in agreement_table.itertuples(index=False):
        print(
            f"{row.measure:<9} {level(row.level):>5}  {row.tau:>6.3f}  {row.tau_ap:>6.3f}  {row.rmse:>6.4f}  "
            f"{row.bias:>+7.4f}  {row.power_t:>9.3f}"
        )
    bins = [c for c in swaps.columns if c not in ("measure", "level")]
    print(
        f"\nSwap rates: two disjoint sets of {subset} topics, {trials} draws; bins of the difference relative "
        f"to the best run's score (first reduction of each level)"
    )
    print(f"{'measure':<9} {'level':>5}  " + "  ".join(f"{b:>8}" for b in bins))
    for row in swaps.itertuples(index=False):
        print(f"{row[0]:<9} {level(row[1]):>5}  " + "  ".join(f"{v:>8.4f}" for v in row[2:]))
    print(f"\nDiscriminative power, alpha = 0.05 (45 run pairs; first reduction of each level; bootstrap B = {B})")
    print(f"{'measure':<9} {'level':>5}  {'t-test':>7}  {'bootstrap':>9}")
    for row in power.itertuples(index=False):
        print(f"{row.measure:<9} {level(row.level):>5}  {row.power_t:>7.3f}  {row.power_bootstrap:>9.3f}")


def _plot(agreement_table, swaps, path: Path, n_runs: int, repeats: int) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10.5, 3.2), layout="constrained")
    axes = fig.subplots(1, 3)
    for name in pd.unique(agreement_table["measure"]):
        sub = agreement_table[agreement_table["measure"] == name].sort_values("level")
        x = sub["level"].to_numpy() * 100
        axes[0].plot(x, sub["tau"], marker="o", markersize=4, label=name)
        axes[1].plot(x, sub["tau_ap"], marker="o", markersize=4, label=name)
        sw = swaps[swaps["measure"] == name].sort_values("level")
        axes[2].plot(sw["level"].to_numpy() * 100, sw["all"], marker="o", markersize=4, label=name)
    titles = ("Kendall τ vs full judgments", "τ_AP vs full judgments", "swap rate, all differences (1st reduction)")
    for ax, title in zip(axes, titles, strict=True):
        ax.set_xscale("log")
        ax.set_xticks([5, 10, 25, 50, 100])
        ax.set_xticklabels(["5", "10", "25", "50", "100"])
        ax.set_xlabel("judgments kept (%)")
        ax.set_title(title, fontsize=9)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Robust04, {n_runs} runs: stratified reductions of the judgments ({repeats} each)", fontsize=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)


def run(argv=None):
    """Parse the command line, run the experiment, print the tables, save the PNG; return the tables
    (``None`` when the data are absent)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder with qrels.robust04.txt.gz and runs/")
    parser.add_argument(
        "--levels", default=",".join(f"{v * 100:g}" for v in LEVELS), help="percentages kept (default 50,25,10,5)"
    )
    parser.add_argument("--repeats", type=int, default=5, help="reductions per level (default 5)")
    parser.add_argument("--seed", type=int, default=2008)
    parser.add_argument("--subset", type=int, default=50, help="topics per set for the swap rates (default 50)")
    parser.add_argument("--trials", type=int, default=1000, help="draws for the swap rates (default 1000)")
    parser.add_argument("--B", type=int, default=1000, help="bootstrap samples (default 1000)")
    parser.add_argument("--out", type=Path, default=Path("."), help="folder for the PNG (default: current folder)")
    parser.add_argument("--docs", action="store_true", help="save the PNG in the project's docs/ folder")
    parser.add_argument("--no-png", action="store_true")
    args = parser.parse_args(argv)
    try:
        levels = [float(v) / 100 for v in args.levels.split(",")]
    except ValueError:
        parser.error(f"--levels {args.levels!r}: expected comma-separated percentages such as 50,25,10,5")

    start = time.perf_counter()
    if not args.data.exists():
        print(f"{args.data} is absent: nothing to do (the Robust04 data lives in ../shared/data/robust04)")
        return None
    runs, qrels = load(args.data)
    print(
        f"Robust04: {len(runs)} runs, {qrels['query_id'].nunique()} topics, {len(qrels)} judgments; "
        f"stratified reductions to {'/'.join(f'{v:.0%}' for v in levels)} × {args.repeats}; "
        f"each measure against itself on the full judgments"
    )
    tables = experiment(
        runs,
        qrels,
        levels=levels,
        repeats=args.repeats,
        seed=args.seed,
        subset=args.subset,
        trials=args.trials,
        B=args.B,
        progress=lambda msg: print(f"  {msg}", file=sys.stderr),
    )
    _print_tables(*tables, repeats=args.repeats, subset=args.subset, trials=args.trials, B=args.B)
    if not args.no_png:
        path = (ROOT / "docs" if args.docs else args.out) / "bpref10_vs_rankeff.png"
        _plot(tables[0], tables[1], path, len(runs), args.repeats)
        print(f"\nsaved {path}")
    print(f"run time: {time.perf_counter() - start:.1f} s")
    return tables


def main(argv=None) -> int:
    run(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
