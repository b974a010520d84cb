"""Judge-next against an oracle: how many judgments until the runs are ranked as with complete qrels?

Replay loop (the conventions of the judge-next goal): start from EMPTY qrels; in each round ask the
method for the next ``step`` pairs (500 for AP, 250 for nDCG@10), take their grades from the oracle
qrels (a pair the oracle does not judge counts nonrelevant, grade 0; every pair costs one judgment),
evaluate the plain measure (AP or nDCG@10) of every run with :func:`ir_incomplete.evaluate` on the
judgments acquired so far, and report Kendall's τ (``scipy.stats.kendalltau``, τ-b) between those
values and the oracle's values over all runs.

Methods: ``judge-next`` (:class:`ir_incomplete.judging.mtc.JudgeNext`, default parameters) and,
for comparison, ``rrf`` (static priority: each topic's documents by Σ_runs 1/(2 + rank), judged
round-robin across topics, the i-th document of every topic before any (i+1)-th) and ``oracle``: the
judge-next criterion with the relevance probability replaced by the oracle's own relevance (1 for a
relevant document, 0 otherwise), so it judges only relevant documents, in the criterion's order. No
method can know relevance before judging: ``oracle`` is a bound on what a better relevance model
could give, and it shows how many relevant documents τ ≥ 0.9 needs under this protocol (plain AP and
nDCG@10 change only when a judged document is relevant).

Usage::

    python benchmarks/judge_next_goal.py                      # TREC-COVID round 1 and Robust04, both measures
    python benchmarks/judge_next_goal.py --collection covid --measure AP --methods judge-next rrf

Prints, per collection/measure/method, the curve (judgments → τ, relevant documents found, seconds per
call) and the judgments needed to reach τ ≥ 0.9. Data: ``../shared/data`` (see its README).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ir_incomplete import evaluate  # noqa: E402
from ir_incomplete.data import prepare_runs, read_trec_qrels, read_trec_run  # noqa: E402
from ir_incomplete.judging.mtc import JudgeNext  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
COLLECTIONS = {
    "covid": ("trec-covid-round1/runs", "trec-covid-round1/qrels.complete-topics1-30.txt.gz"),
    "robust04": ("robust04/runs", "robust04/qrels.robust04.txt.gz"),
}
#: measure → (round size, judgments at most)
SETTINGS = {"AP": (500, 16_000), "nDCG@10": (250, 6_000)}
GOAL = 0.9


def load(data: Path, name: str):
    runs_dir, qrels_file = COLLECTIONS[name]
    runs = {p.name.removesuffix(".gz"): read_trec_run(p) for p in sorted((data / runs_dir).iterdir())}
    return prepare_runs(runs), read_trec_qrels(data / qrels_file)


class RRFPriority:
    """Static reciprocal-rank-fusion priority (k = 2), round-robin across topics."""

    name = "rrf"

    def start(self, runs, qrels=None):
        frames = runs.frames()
        table = pd.concat(
            [
                f.assign(rank=f.groupby("query_id", sort=False).cumcount() + 1)[["query_id", "doc_id", "rank"]]
                for f in frames.values()
            ],
            ignore_index=True,
        )
        table["w"] = 1.0 / (2.0 + table["rank"])
        fused = table.groupby(["query_id", "doc_id"], sort=True)["w"].sum().reset_index()
        fused = fused.sort_values(["query_id", "w", "doc_id"], ascending=[True, False, True], kind="stable")
        fused["position"] = fused.groupby("query_id", sort=False).cumcount()
        order = fused.sort_values(["position", "query_id"], kind="stable")
        return {"queue": order[["query_id", "doc_id"]].reset_index(drop=True), "next": 0}

    def next_batch(self, state, n):
        batch = state["queue"].iloc[state["next"] : state["next"] + n]
        state["next"] += len(batch)
        return batch.reset_index(drop=True)

    def update(self, state, judgments):
        pass


class OracleJudgeNext(JudgeNext):
    """The judge-next criterion with ``p(d)`` = the oracle's relevance (a bound, not a method)."""

    name = "oracle"

    def __init__(self, measure, oracle: pd.DataFrame):
        super().__init__(measure)
        self._oracle = oracle

    def relevance_probability(self, state):
        candidates = state.candidates
        oracle = self._oracle[self._oracle["relevance"] >= 1]
        found = candidates.pair_index(
            oracle["query_id"].astype(str).to_numpy(object), oracle["doc_id"].astype(str).to_numpy(object)
        )
        p = np.zeros(candidates.n_pairs)
        p[found[found >= 0]] = 1.0
        return p


def oracle_grades(oracle: pd.DataFrame, batch: pd.DataFrame) -> pd.DataFrame:
    """The batch with the oracle's grades (0 where the oracle has no judgment; negative grades → 0)."""
    merged = batch[["query_id", "doc_id"]].merge(oracle, on=["query_id", "doc_id"], how="left")
    merged["relevance"] = merged["relevance"].fillna(0).clip(lower=0).astype(np.int64)
    return merged


def replay(strategy, runs, oracle: pd.DataFrame, measure: str, step: int, limit: int, reference: pd.Series):
    """Yield ``(judgments, tau, relevant documents found, seconds of the next_batch call)`` round after round."""
    state = strategy.start(runs, None)
    acquired = pd.DataFrame({"query_id": [], "doc_id": [], "relevance": []}).astype(
        {"query_id": object, "doc_id": object, "relevance": np.int64}
    )
    while len(acquired) < limit:
        started = time.perf_counter()
        batch = strategy.next_batch(state, step)
        seconds = time.perf_counter() - started
        if batch.empty:
            return
        judged = oracle_grades(oracle, batch)
        strategy.update(state, judged)
        acquired = pd.concat([acquired, judged], ignore_index=True)
        values = evaluate(runs, acquired, measure, per_query=False).set_index("run")["value"]
        tau = kendalltau(values.reindex(reference.index).to_numpy(), reference.to_numpy())[0]
        yield len(acquired), float(tau), int((acquired["relevance"] >= 1).sum()), seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", nargs="+", choices=sorted(COLLECTIONS), default=["covid", "robust04"])
    parser.add_argument("--measure", nargs="+", choices=sorted(SETTINGS), default=["AP", "nDCG@10"])
    parser.add_argument("--methods", nargs="+", choices=["judge-next", "rrf", "oracle"], default=["judge-next", "rrf"])
    parser.add_argument("--limit", type=int, help="judgments at most (default 16,000 for AP, 6,000 for nDCG@10)")
    parser.add_argument("--extra-rounds", type=int, default=2, help="rounds shown after the goal is reached")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder (default ../shared/data)")
    args = parser.parse_args(argv)
    for name in args.collection:
        runs, oracle = load(args.data, name)
        for measure in args.measure:
            step, limit = SETTINGS[measure]
            limit = args.limit or limit
            reference = evaluate(runs, oracle, measure, per_query=False).set_index("run")["value"]
            for method in args.methods:
                if method == "judge-next":
                    strategy = JudgeNext(measure)
                elif method == "oracle":
                    strategy = OracleJudgeNext(measure, oracle)
                else:
                    strategy = RRFPriority()
                print(f"\n{name} {measure} {method} (rounds of {step}, {len(reference)} runs)", flush=True)
                reached, after = None, 0
                for spent, tau, relevant, seconds in replay(strategy, runs, oracle, measure, step, limit, reference):
                    print(f"  {spent:6d}  tau {tau:.4f}  relevant {relevant:5d}  ({seconds:.2f} s)", flush=True)
                    if reached is None and tau >= GOAL:
                        reached = spent
                    after += reached is not None
                    if after > args.extra_rounds:
                        break
                print(f"  -> tau >= {GOAL} after {reached if reached else f'more than {limit}'} judgments")
    return 0


if __name__ == "__main__":
    sys.exit(main())
