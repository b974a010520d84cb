"""Does spreading the random judgments topic by topic help? ``sample(allocation="global")`` against ``"topics"``.

    python examples/allocation_evidence.py [DATA_FOLDER] [--seeds N] [--only TEXT] [--min-per-topic N]

For each setting and allocation, seeds 0..N−1 (default 10) draw a Poisson design with
:func:`ir_incomplete.judging.sample` on top of the judgments made already (certainty stratum, π = 1),
judge it from the complete judgments and estimate AP@100 and nDCG@10 with :func:`ir_incomplete.estimate`
(90 % intervals, run means and every pair of runs):

* **Robust04** (10 runs, 249 topics): the runs' depth-10 pool judged from the complete qrels, + 2,000
  (about 8 random judgments per topic) and + 10,000 (about 40);
* **TREC-COVID round 1** (143 runs, 30 topics): the round-1 judgments, + 2,000; and + 2,000 from none.

Universe: the runs' top 100 (and the certainty pairs); truth: the complete qrels restricted to the
universe (unjudged = 0) scored by :func:`ir_incomplete.evaluate`. Printed per setting, allocation and
measure (means over seeds): the share of topics that draw no relevant pair at random ("no rel."), the
judgments drawn, coverage of run means and of pairs, bias, RMSE of run means and of pair differences,
mean width and Kendall τ. About 2.5 minutes of one core for everything.
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

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MEASURES = ["AP@100", "nDCG@10"]
#: (name, collection, budget, certainty stratum)
SETTINGS = [
    ("Robust04 depth-10 + 2,000", "robust04", 2000, "depth 10"),
    ("Robust04 depth-10 + 10,000", "robust04", 10000, "depth 10"),
    ("COVID round 1 + 2,000", "covid", 2000, "round 1"),
    ("COVID none + 2,000", "covid", 2000, "none"),
]


def load(data: Path, collection: str):
    """Prepared runs, the universe, its pairs with their true grades, and each run's true means."""
    if collection == "robust04":
        prepared = prepare_runs(sorted(str(p) for p in (data / "robust04" / "runs").glob("*")))
        complete = data / "robust04" / "qrels.robust04.txt.gz"
    else:
        files = sorted((data / "trec-covid-round1" / "runs").glob("*.gz"))
        prepared = prepare_runs({p.name[:-3]: str(p) for p in files})
        complete = data / "trec-covid-round1" / "qrels.complete-topics1-30.txt.gz"
    space = Universe(prepared, 100)
    pairs = space.frame(np.arange(space.n_units))
    grades = Qrels.from_any(complete).to_frame()
    grades = grades.assign(query_id=grades["query_id"].astype(str), doc_id=grades["doc_id"].astype(str))
    truth = pairs.merge(grades, on=["query_id", "doc_id"], how="left")
    truth["relevance"] = truth["relevance"].fillna(0).clip(lower=0).astype(int)
    values = ir_incomplete.evaluate(prepared, truth[["query_id", "doc_id", "relevance"]], MEASURES)
    means = values.groupby(["measure", "run"])["value"].mean().unstack("run")
    return prepared, space, truth, means


def certainty(data: Path, space: Universe, truth: pd.DataFrame, start: str):
    if start == "none":
        return None
    if start == "round 1":
        return data / "trec-covid-round1" / "qrels.round1.txt.gz"
    known = np.unique(space.item_unit[(space.item_rank < 10) & (space.item_unit >= 0)])  # the depth-10 pool
    return truth.iloc[known][["query_id", "doc_id", "relevance"]]


def one_repeat(prepared, truth, means, budget, qrels, seed, allocation, minimum):
    design = sample(prepared, budget, qrels=qrels, seed=seed, allocation=allocation, min_per_topic=minimum)
    grade = truth.set_index(["query_id", "doc_id"])["relevance"]
    judged = design[["query_id", "doc_id"]].copy()
    judged["relevance"] = grade.reindex(pd.MultiIndex.from_frame(judged)).fillna(0).astype(int).to_numpy()
    drawn = (design["stratum"] == "sampled").to_numpy()
    hit = pd.Series(drawn & (judged["relevance"].to_numpy() >= 1)).groupby(design["query_id"].to_numpy()).any()
    no_relevant = 1.0 - hit.reindex(design.attrs["topics"], fill_value=False).mean()
    runs_table, pairs_table = ir_incomplete.estimate(prepared, judged, design, MEASURES, pairs="both")
    rows = []
    for m in MEASURES:
        est = runs_table[runs_table["measure"] == m].set_index("run")
        t = means.loc[m].reindex(est.index)
        pm = pairs_table[pairs_table["measure"] == m]
        diff = t.loc[pm["run_a"]].to_numpy() - t.loc[pm["run_b"]].to_numpy()
        rows.append(
            {
                "measure": m,
                "no rel.": no_relevant,
                "judged": int(drawn.sum()),
                "coverage": float(((est["lo"] <= t) & (t <= est["hi"])).mean()),
                "pair coverage": float(((pm["lo"] <= diff) & (diff <= pm["hi"])).mean()),
                "bias": float((est["value"] - t).mean()),
                "rmse": float(np.sqrt(((est["value"] - t) ** 2).mean())),
                "pair rmse": float(np.sqrt(((pm["value"].to_numpy() - diff) ** 2).mean())),
                "width": float((est["hi"] - est["lo"]).mean()),
                "tau": kendalltau(est["value"], t)[0],
            }
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seeds", type=int, default=10, help="seeded repeats per setting (default 10)")
    parser.add_argument("--only", default=None, help="only the settings whose name contains this text")
    parser.add_argument("--min-per-topic", type=int, default=10, help="sample(min_per_topic=) (default 10)")
    args = parser.parse_args(argv)
    settings = [s for s in SETTINGS if args.only is None or args.only in s[0]]
    for _, collection, _, _ in settings:
        folder = args.data / ("robust04" if collection == "robust04" else "trec-covid-round1")
        if not folder.is_dir():
            sys.exit(f"{folder} is absent (the TREC data lives in ../shared/data beside the project)")
    warnings.simplefilter("ignore")  # the zero-width warnings of the starved settings are what is measured
    started = time.time()
    loaded: dict = {}
    rows = []
    for name, collection, budget, start in settings:
        if collection not in loaded:
            loaded[collection] = load(args.data, collection)
        prepared, space, truth, means = loaded[collection]
        qrels = certainty(args.data, space, truth, start)
        for allocation in ("global", "topics"):
            for seed in range(args.seeds):
                for row in one_repeat(prepared, truth, means, budget, qrels, seed, allocation, args.min_per_topic):
                    rows.append({"setting": name, "allocation": allocation, "seed": seed, **row})
            print(f"  {name}, {allocation} ({time.time() - started:.0f} s)", file=sys.stderr)
    table = pd.DataFrame(rows)
    columns = ["no rel.", "judged", "coverage", "pair coverage", "bias", "rmse", "pair rmse", "width", "tau"]
    summary = table.groupby(["setting", "allocation", "measure"], sort=False)[columns].mean().reset_index()
    print(f"{args.seeds} seeds per setting; 90 % intervals; min_per_topic={args.min_per_topic}")
    with pd.option_context("display.width", 220, "display.max_columns", 20):
        print(summary.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    print(f"({time.time() - started:.0f} s)")
    return summary


if __name__ == "__main__":
    main()
