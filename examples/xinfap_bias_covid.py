"""The finite-sample bias of xinfAP: 200 seeded stratified samples of the TREC-COVID round-1 pool against AP@100
on the full round-1 judgments.

    python examples/xinfap_bias_covid.py [DATA_FOLDER] [SAMPLES]   (default ../shared/data beside the project, 200)

Each sample pools the 143 round-1 runs to depth 100, judges ranks 1–10 fully and ranks 11–100 at 20 %
(``stratified_sample``'s defaults, seeds 0 .. SAMPLES−1), and takes the judgments of the sampled
documents from the round-1 qrels (a sampled document without a judgment is nonrelevant). xinfAP@100 is
averaged over the samples per (run, topic) and compared with AP@100 on the full judgments: the largest
difference of a run's mean over the topics and of one (run, topic). With 200 samples: 0.0032 and 0.022
(about 15 minutes on one core). xinfAP is a ratio estimator, unbiased only asymptotically.
"""

import sys
from pathlib import Path

import numpy as np

import ir_incomplete
from ir_incomplete.data import prepare_runs, read_trec_qrels
from ir_incomplete.judging import Candidates
from ir_incomplete.judging.sampling import stratified_sample, to_prels

DATA = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1].parent / "shared" / "data"
SAMPLES = int(sys.argv[2]) if len(sys.argv) > 2 else 200
COVID = DATA / "trec-covid-round1"

if not COVID.exists():
    sys.exit(f"{COVID} is absent (the TREC-COVID data lives in ../shared/data beside the project)")

qrels = read_trec_qrels(COVID / "qrels.round1.txt.gz")
runs = {path.name[:-3]: str(path) for path in sorted((COVID / "runs").glob("*.gz"))}
prepared = prepare_runs(runs)
candidates = Candidates(runs)


def grid(table):
    return table.pivot(index="run", columns="query_id", values="value")


reference = grid(ir_incomplete.evaluate(prepared, qrels, ["AP@100"]))
total = np.zeros(reference.shape)
for seed in range(SAMPLES):
    prels = to_prels(stratified_sample(candidates, seed=seed), qrels, missing="nonrelevant")
    total += grid(ir_incomplete.evaluate(prepared, prels, ["xinfAP@100"])).reindex_like(reference).to_numpy()
difference = total / SAMPLES - reference.to_numpy()
print(f"{len(runs)} runs, {reference.shape[1]} topics, {SAMPLES} samples")
print(f"largest |mean xinfAP@100 - AP@100| of a run (mean over topics): {np.abs(difference.mean(axis=1)).max():.4f}")
print(f"largest |mean xinfAP@100 - AP@100| of one (run, topic):          {np.abs(difference).max():.4f}")
