"""Leave one group out on TREC-COVID round 1: how well do the nDCG@10 estimators score a run whose group
did not contribute to the judgments?

The protocol of Zobel (SIGIR 1998) and Fröbe et al. (ECIR 2023, §4.1), as ``robustness_study(method=
"logo")`` runs it: the pool is the union of the top-10 documents of the runs that contributed to the
official round-1 judgments (``contributed judgments`` in ``leaderboard.csv``); every one of the 143 runs
is scored once, on the round-1 judgments without the documents that only the pool runs of its own
team put into that pool; these scores are compared with nDCG@10 of the same runs on all round-1
judgments: Kendall τ of the system rankings, RMSE of the per-run means and RMSE over all (run, topic)
pairs. Estimators: the naive lower bound ``nDCG@10`` (unjudged = nonrelevant), condensed lists
``nDCG(judged_only=True)@10``, ``BootNDCG@10`` with each prior and the naive upper bound
``NDCGUpper@10``. No run filter is applied (Fröbe et al. also filtered runs: ``--filters top75``).

Run from the project folder (the data live in ``../shared/data/trec-covid-round1``)::

    python examples/leave_one_group_out.py [--depth 10] [--filters top75] [--csv logo.csv] [--quick]

About 20 s on 2 busy cores; ``--quick`` (the first 30 runs, the naive bounds and BootNDCG@10) a few
seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trec-covid-round1"

ESTIMATORS = {
    "naive lower": "nDCG@10",
    "condensed": "nDCG(judged_only=True)@10",
    "BootNDCG pool": "BootNDCG(prior=pool)@10",
    "BootNDCG run": "BootNDCG(prior=run)@10",
    "BootNDCG pool+run": "BootNDCG@10",
    "naive upper": "NDCGUpper@10",
}
REFERENCE = "nDCG@10"


def load(data: Path = DATA):
    """``runs`` (name → DataFrame), the round-1 qrels and the leaderboard (run, team, contributed)."""
    import ir_incomplete

    if not data.exists():
        raise SystemExit(f"{data} not found: the TREC-COVID round-1 data live in ../shared/data/trec-covid-round1")
    runs = {p.name[:-3]: ir_incomplete.read_trec_run(p) for p in sorted((data / "runs").glob("*.gz"))}
    board = pd.read_csv(data / "leaderboard.csv", dtype=str)
    return runs, ir_incomplete.read_trec_qrels(data / "qrels.round1.txt.gz"), board


def logo_table(runs, qrels, board: pd.DataFrame, depth: int = 10, filters=None, estimators=None, n_jobs: int = 1):
    """The study and one row per estimator: ``estimator, measure, tau, rmse, rmse_topic`` (and every
    other statistic the study reports), against nDCG@10 on the full judgments."""
    from ir_incomplete.robustness import robustness_study

    estimators = dict(ESTIMATORS if estimators is None else estimators)
    groups = dict(zip(board["run"], board["team"], strict=True))
    pool_runs = [r for r, c in zip(board["run"], board["contributed judgments"], strict=True) if c == "yes"]
    result = robustness_study(
        runs,
        qrels,
        list(estimators.values()),
        method="logo",
        levels=[depth],
        reference=REFERENCE,
        options={"groups": groups, "pool_runs": [r for r in pool_runs if r in runs]},
        filters=filters,
        n_jobs=n_jobs,
    )
    stats = result.stats.drop(columns=["level", "repeat"])
    names = {m: e for e, m in estimators.items()}
    import ir_incomplete

    canonical = {repr(ir_incomplete.api.as_measures([m])[0]): m for m in estimators.values()}
    stats.insert(0, "estimator", [names[canonical[m]] for m in stats["measure"]])
    return stats.reset_index(drop=True), result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--depth", type=int, default=10, help="pool depth (default 10, as Fröbe et al.)")
    p.add_argument("--filters", nargs="+", default=None, help="run filters, e.g. top75")
    p.add_argument("--csv", default=None, help="also write the table as CSV")
    p.add_argument("--n-jobs", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="the first 30 runs, three estimators: a few seconds")
    args = p.parse_args(argv)
    runs, qrels, board = load()
    estimators = None
    if args.quick:
        runs = dict(list(runs.items())[:30])
        board = board[board["run"].isin(runs)]
        keep = ("naive lower", "BootNDCG pool+run", "naive upper")
        estimators = {k: v for k, v in ESTIMATORS.items() if k in keep}
    start = time.perf_counter()
    table, result = logo_table(runs, qrels, board, args.depth, args.filters, estimators=estimators, n_jobs=args.n_jobs)
    changed = (result.scores["value"] != result.scores["reference"]).groupby(result.scores["run"]).any()
    print(
        f"{len(result.reference)} runs of {board['team'].nunique()} teams; pool: top {args.depth} of the "
        f"{(board['contributed judgments'] == 'yes').sum()} contributing runs; "
        f"{int(changed.sum())} runs lose judgments; {time.perf_counter() - start:.1f} s"
    )
    columns = ["estimator", "measure"] + [c for c in table.columns if c not in ("estimator", "measure")]
    print(_markdown(table[columns]))
    if args.csv:
        table.to_csv(args.csv, index=False)
    return 0


def _markdown(table: pd.DataFrame) -> str:
    """A Markdown table, numbers to 4 decimals."""
    cells = [
        [f"{v:.4f}" if isinstance(v, float) else f"`{v}`" if k == "measure" else str(v) for k, v in row.items()]
        for row in table.to_dict("records")
    ]
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    return "\n".join(lines + ["| " + " | ".join(c) + " |" for c in cells])


if __name__ == "__main__":
    sys.exit(main())
