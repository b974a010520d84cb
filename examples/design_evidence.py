"""Do design-based intervals hold? Coverage, RMSE and ranking of probability samples on TREC-COVID and Robust04.

    python examples/design_evidence.py [DATA_FOLDER] [--full | --quick] [--repeats N] [--out DIR] [--docs]
        [--design poisson|stratified]

By default (about a minute on two cores): TREC-COVID, 2,000 judgments from none, 10 repeats, without
labels and with the κ ≈ 0.2 labeler. ``--full`` (every setting below, 50 repeats, three labelers: about
45 minutes of one core; ``--only`` splits it over processes) is what the manual's table reports (docs/measured.rst).

For each setting, ``--repeats`` seeded repeats (seeds 0, 1, ...) draw a Poisson sample with
:func:`ir_incomplete.judging.sample` (AP-prior, 10 % uniform floor), judge it from the complete
judgments and estimate AP@100 and nDCG@10 with :func:`ir_incomplete.estimate` (90 % intervals, the
default control variate: the runs' fusion model, with the labels when a labeler is given).

* **TREC-COVID round 1** (143 runs, 30 topics): universe = the runs' top-100 union; truth = the complete
  qrels of topics 1–30 restricted to the universe (unjudged = 0). Budgets 1,000 / 2,000 / 4,000 from no
  judgments, and the round-1 judgments (certainty stratum, π = 1) + 2,000.
* **Robust04** (10 runs, 249 topics): a depth-10 pool of the runs judged with π = 1, + 2,000 sampled
  (about 8 per topic) and + 10,000 (about 40 per topic).
* Labelers: none; the simulated labeler of ``predicted_labels_covid.py`` (κ ≈ 0.42); and a harder one
  (κ ≈ 0.2) whose false positives concentrate on documents that many runs rank high (its chance of
  calling a nonrelevant document relevant grows with the cube of the document's fusion percentile in its
  topic), as real LLM judges' errors follow the systems.

Reported per setting (means over repeats): Kendall τ of the run ranking against the truth, RMSE and bias of
the run means, coverage of the 90 % intervals of run means and of all pairs' differences, mean interval width,
and the same-budget priority pool (Σ over runs of 1/(1 + rank), ranks from 1; plain measure, unjudged =
nonrelevant) for τ and RMSE. ``--quick``: 3 repeats, 40 runs, no labels, no figure. The figure is saved as
``design_evidence.png`` in ``--out`` (default: the current folder; ``--docs`` writes
``docs/design_evidence.png`` for the manual), beside ``design_evidence.csv`` (every repeat's row). ``--only
TEXT`` runs the settings whose name contains TEXT, and ``--summarize CSV...`` prints (and draws) the summary
of such files, so that the settings of ``--full`` can run in parallel processes. ``--design stratified`` draws
the fixed-size design instead (``sample(..., design="stratified")``: exactly the budget in every repeat).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

import ir_incomplete
from ir_incomplete.data import Qrels, prepare_runs
from ir_incomplete.estimation import Universe
from ir_incomplete.judging import sample
from ir_incomplete.labelers import cohen_kappa, simulate_labels

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MEASURES = ["AP@100", "nDCG@10"]
#: the simulated labeler of predicted_labels_covid.py (rows: human grade 0, 1, 2)
CONFUSION = [[0.85, 0.10, 0.05], [0.35, 0.35, 0.30], [0.15, 0.30, 0.55]]


def universe_truth(prepared, qrels_complete, depth=100):
    """The universe's pairs with their true grades (unjudged = 0) and each run's true means."""
    space = Universe(prepared, depth)
    frame = space.frame(np.arange(space.n_units))
    complete = Qrels.from_any(qrels_complete).to_frame()
    complete = complete.assign(query_id=complete["query_id"].astype(str), doc_id=complete["doc_id"].astype(str))
    truth = frame.merge(complete, on=["query_id", "doc_id"], how="left")
    truth["in_qrels"] = truth["relevance"].notna()
    truth["relevance"] = truth["relevance"].fillna(0).clip(lower=0).astype(int)
    values = ir_incomplete.evaluate(prepared, truth[["query_id", "doc_id", "relevance"]], MEASURES)
    means = values.groupby(["measure", "run"])["value"].mean().unstack("run")
    return space, truth, means


def hard_labels(space, truth, seed):
    """κ ≈ 0.2 labels whose false positives follow the systems (see the module docstring)."""
    rng = np.random.default_rng(seed)
    pct = pd.Series(space.rrf).groupby(space.unit_topic).rank(pct=True).to_numpy()
    human = truth["relevance"].to_numpy()
    u = rng.random(len(human))
    v = rng.random(len(human))
    pred = np.zeros(len(human), dtype=int)
    false_pos = (human == 0) & (u < 0.6 * pct**3)
    pred[false_pos] = np.where(v[false_pos] < 0.6, 1, 2)
    rel = human > 0
    pred[rel & (u < 0.4)] = 0
    keep = rel & (u >= 0.4)
    pred[keep] = np.where(v[keep] < 0.6, human[keep], 3 - human[keep])
    return truth[["query_id", "doc_id"]].assign(relevance=pred)


#: labelers draw from their own seeds (LABEL_SEED + repeat), not the design's: the same uniform numbers
#: would tie a pair's label to whether it is sampled
LABEL_SEED = 1_000_003


def labels_for(kind, space, truth, seed):
    seed = LABEL_SEED + seed
    if kind == "none":
        return None
    if kind == "kappa 0.42":
        return simulate_labels(truth, CONFUSION, seed=seed, docs=truth[["query_id", "doc_id"]])[
            ["query_id", "doc_id", "relevance"]
        ]
    return hard_labels(space, truth, seed)


def priority_pool(space, budget, known_units):
    """Units of a priority pool (Σ 1/(1 + rank)) of ``budget`` more judgments beyond ``known_units``."""
    ok = space.item_unit >= 0
    priority = np.bincount(space.item_unit[ok], weights=1.0 / (2.0 + space.item_rank[ok]), minlength=space.n_units)
    open_units = np.setdiff1d(np.arange(space.n_units), known_units)
    top = open_units[np.lexsort((open_units, -priority[open_units]))[:budget]]
    return np.union1d(known_units, top)


def pool_scores(prepared, truth, units, means):
    judged = truth.iloc[units]
    values = ir_incomplete.evaluate(prepared, judged[["query_id", "doc_id", "relevance"]], MEASURES)
    pooled = values.groupby(["measure", "run"])["value"].mean().unstack("run")
    out = {}
    for m in MEASURES:
        t, p = means.loc[m], pooled.loc[m].reindex(means.columns).fillna(0.0)
        out[m] = (kendalltau(p, t)[0], float(np.sqrt(((p - t) ** 2).mean())))
    return out


def one_repeat(prepared, space, truth, means, budget, certain_qrels, labels, seed, kind="poisson"):
    # labels shape pi only where judgments calibrate them (a certainty stratum); from none, sample would warn
    shaping = labels if certain_qrels is not None else None
    design = sample(prepared, budget, qrels=certain_qrels, predictions=shaping, seed=seed, design=kind)
    grade = truth.set_index(["query_id", "doc_id"])["relevance"]
    judged = design[["query_id", "doc_id"]].copy()
    judged["relevance"] = grade.reindex(pd.MultiIndex.from_frame(judged)).fillna(0).astype(int).to_numpy()
    runs_table, pairs_table = ir_incomplete.estimate(
        prepared, judged, design, MEASURES, predictions=labels, pairs="both"
    )
    rows = []
    for m in MEASURES:
        est = runs_table[runs_table["measure"] == m].set_index("run")
        t = means.loc[m].reindex(est.index)
        pm = pairs_table[pairs_table["measure"] == m]
        td = t.loc[pm["run_a"]].to_numpy() - t.loc[pm["run_b"]].to_numpy()
        rows.append(
            {
                "measure": m,
                "tau": kendalltau(est["value"], t)[0],
                "rmse": float(np.sqrt(((est["value"] - t) ** 2).mean())),
                "bias": float((est["value"] - t).mean()),
                "coverage": float(((est["lo"] <= t) & (t <= est["hi"])).mean()),
                "pair coverage": float(((pm["lo"] <= td) & (td <= pm["hi"])).mean()),
                "width": float((est["hi"] - est["lo"]).mean()),
                "pair width": float((pm["hi"] - pm["lo"]).mean()),
                "judged": int((design["stratum"] == "sampled").sum()),
            }
        )
    return rows


def run_setting(name, prepared, space, truth, means, budget, certain_qrels, labeler, repeats, kind="poisson"):
    rows = []
    kappas = []
    for seed in range(repeats):
        labels = labels_for(labeler, space, truth, seed)
        if labels is not None and seed == 0:
            judged = truth["in_qrels"].to_numpy()
            paired = truth[judged].merge(labels, on=["query_id", "doc_id"], suffixes=("", "_label"))
            kappas.append(cohen_kappa(paired["relevance"], paired["relevance_label"]))
        for row in one_repeat(prepared, space, truth, means, budget, certain_qrels, labels, seed, kind):
            rows.append({"setting": name, "labeler": labeler, "seed": seed, **row})
    return rows, kappas


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Means over the repeats per setting, labeler and measure (the pool's columns are per setting)."""
    columns = ["tau", "rmse", "bias", "coverage", "pair coverage", "width", "pair width", "judged"]
    columns += ["pool tau", "pool rmse"]
    return table.groupby(["setting", "labeler", "measure"], sort=False)[columns].mean().reset_index()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeats", type=int, default=None, help="seeded repeats (default 10; --full 50)")
    parser.add_argument("--quick", action="store_true", help="3 repeats, 40 runs, no labels, no figure")
    parser.add_argument(
        "--full", action="store_true", help="every setting, 50 repeats, three labelers (about 45 min of one core)"
    )
    parser.add_argument("--out", type=Path, default=Path("."), help="folder for design_evidence.png and .csv")
    parser.add_argument("--docs", action="store_true", help="write docs/design_evidence.png (for the manual)")
    parser.add_argument("--labelers", default=None, help="comma-separated: none, kappa 0.42, kappa 0.2 (systems)")
    parser.add_argument("--design", choices=["poisson", "stratified"], default="poisson", help="the sampling design")
    parser.add_argument("--only", default=None, help="only the settings whose name contains this text")
    parser.add_argument(
        "--summarize", type=Path, nargs="+", default=None, help="print (and --figure) the rows of earlier --out CSVs"
    )
    args = parser.parse_args(argv)
    figure = Path(__file__).resolve().parents[1] / "docs" / "design_evidence.png" if args.docs else None
    figure = figure or (None if args.quick else args.out / "design_evidence.png")
    if args.summarize:
        summary = summarize(pd.concat([pd.read_csv(p) for p in args.summarize], ignore_index=True))
        with pd.option_context("display.width", 220, "display.max_columns", 20):
            print(summary.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        if figure:
            figure.parent.mkdir(parents=True, exist_ok=True)
            draw(summary, figure)
        return summary
    covid = args.data / "trec-covid-round1"
    if not covid.exists():
        sys.exit(f"{covid} is absent (the TREC-COVID data lives in ../shared/data beside the project)")
    warnings.simplefilter("ignore", RuntimeWarning)
    repeats = args.repeats or (3 if args.quick else 50 if args.full else 10)
    default_labelers = "none" if args.quick else "none,kappa 0.42,kappa 0.2 (systems)" if args.full else None
    labelers = (args.labelers or default_labelers or "none,kappa 0.2 (systems)").split(",")
    started = time.time()
    round1 = covid / "qrels.round1.txt.gz"
    settings = [("COVID 2,000", 2000, "round 0")]
    if args.full:
        settings = [
            ("COVID 1,000", 1000, "round 0"),
            ("COVID 2,000", 2000, "round 0"),
            ("COVID 4,000", 4000, "round 0"),
            ("COVID round 1 + 2,000", 2000, "round 1"),
            ("Robust04 depth-10 + 2,000", 2000, "depth 10"),
            ("Robust04 depth-10 + 10,000", 10000, "depth 10"),
        ]
    if args.only:
        settings = [s for s in settings if args.only in s[0]]
    rows, kappa_note, loaded = [], {}, {}
    for name, budget, start in settings:
        collection = "robust04" if name.startswith("Robust04") else "covid"
        if collection not in loaded:
            if collection == "covid":
                run_files = sorted((covid / "runs").glob("*.gz"))[: 40 if args.quick else None]
                prepared = prepare_runs({p.name[:-3]: str(p) for p in run_files})
                qrels = covid / "qrels.complete-topics1-30.txt.gz"
            else:
                prepared = prepare_runs(sorted(str(p) for p in (args.data / "robust04" / "runs").glob("*")))
                qrels = args.data / "robust04" / "qrels.robust04.txt.gz"
            loaded[collection] = (prepared, *universe_truth(prepared, qrels))
        prepared, space, truth, means = loaded[collection]
        if start == "round 0":
            known, certain = np.zeros(0, dtype=np.int64), None
        elif start == "round 1":
            r1 = Qrels.from_any(round1).to_frame()
            known = space.lookup(
                space.topic_codes(r1["query_id"].astype(str)), r1["doc_id"].astype(str).to_numpy(object)
            )
            known, certain = np.unique(known[known >= 0]), round1
        else:  # the runs' depth-10 pool, judged
            known = np.unique(space.item_unit[(space.item_rank < 10) & (space.item_unit >= 0)])
            certain = truth.iloc[known][["query_id", "doc_id", "relevance"]]
        pool = pool_scores(prepared, truth, priority_pool(space, budget, known), means)
        for labeler in labelers:
            found, kappas = run_setting(
                name, prepared, space, truth, means, budget, certain, labeler, repeats, args.design
            )
            for row in found:
                row["pool tau"], row["pool rmse"] = pool[row["measure"]]
            rows += found
            if kappas:
                kappa_note[labeler] = kappas[0]
            print(f"  {name}, labels: {labeler} ({time.time() - started:.0f} s)", file=sys.stderr)
    table = pd.DataFrame(rows)
    if not args.quick:
        args.out.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out / "design_evidence.csv", index=False)
    summary = summarize(table)
    print(
        f"{repeats} repeats per setting; 90 % intervals; labeler kappa (repeat 0, on the pairs the complete "
        "qrels judge): " + ", ".join(f"{k} {v:.2f}" for k, v in kappa_note.items())
    )
    with pd.option_context("display.width", 220, "display.max_columns", 20):
        print(summary.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"({time.time() - started:.0f} s)")
    if figure:
        figure.parent.mkdir(parents=True, exist_ok=True)
        draw(summary, figure)
    return summary


def draw(summary, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    labels = [f"{s}\n{lab}" for s, lab in zip(summary["setting"], summary["labeler"], strict=True)]
    for ax, m in zip(axes[:2], MEASURES, strict=True):
        part = summary[summary["measure"] == m]
        y = np.arange(len(part))
        ax.axvspan(0.87, 0.93, color="0.9", label="goal 0.87–0.93")
        ax.scatter(part["coverage"], y, marker="o", label="run means")
        ax.scatter(part["pair coverage"], y, marker="x", label="pairs")
        ax.axvline(0.9, color="0.5", lw=0.8)
        ax.set_yticks(y, [lab for lab, s in zip(labels, summary["measure"], strict=True) if s == m], fontsize=6)
        ax.set_xlim(0.0, 1.0)
        ax.set_title(f"{m}: coverage of 90 % intervals", fontsize=9)
        ax.legend(fontsize=6, loc="lower left")
    ax = axes[2]
    for m, marker in zip(MEASURES, ("o", "s"), strict=True):
        part = summary[summary["measure"] == m]
        ax.scatter(part["pool tau"], part["tau"], marker=marker, label=m)
    lim = [0.6, 1.0]
    ax.plot(lim, lim, color="0.5", lw=0.8)
    ax.set_xlabel("priority pool τ (same budget)", fontsize=8)
    ax.set_ylabel("design-based estimate τ", fontsize=8)
    ax.set_title("ranking: τ against complete judgments", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
