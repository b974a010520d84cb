"""TREC 2017 Precision Medicine (abstracts), judged by a stratified random sample: our numbers beside
NIST's official ``sample_eval`` output.

    python examples/sampled_pm2017.py [DATA_FOLDER]   (default ../shared/data beside the project)

Reads the sampled qrels ("prels": ``topic iteration doc_id stratum relevance``) and the 5 runs, computes
the official measures (``sample_eval`` cuts every ranking at 100) and prints them next to the official
'all' values, then the bounds that plain judgments give for the same runs.
"""

import sys
from pathlib import Path

import pandas as pd

import ir_incomplete

DATA = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1].parent / "shared" / "data"
PM = DATA / "trec-pm2017-sampled"
OFFICIAL = {"xinfAP@100": "infAP", "infNDCG@100": "infNDCG", "iP@10": "iP10", "iP@100": "iP100"}

if not PM.exists():
    sys.exit(f"{PM} is absent (the TREC PM 2017 data lives in ../shared/data beside the project)")

runs = {path.name[:-3]: str(path) for path in sorted((PM / "runs").glob("*.gz"))}
prels = PM / "prels.abstracts.2017.txt.gz"

# sample_eval averages over the topics that the run answers: topics="run"
ours = ir_incomplete.evaluate(runs, prels, list(OFFICIAL), per_query=False, topics="run")
nist = pd.read_csv(PM / "nist-output" / "all.tsv", sep="\t")
nist["measure"] = nist["measure"].map({v: k for k, v in OFFICIAL.items()})
table = ours.merge(nist, on=["run", "measure"], suffixes=("", "_nist"))
table["|diff|"] = (table["value"] - table["value_nist"]).abs()
print("ir_incomplete vs NIST sample_eval ('all' lines, 4 decimals):")
print(table.pivot(index="run", columns="measure", values=["value", "value_nist"]).round(4).to_string())
print(f"largest |diff| = {table['|diff|'].max():.1e}\n")

# per topic with NIST's high-precision output for one run
hp = pd.read_csv(PM / "nist-output" / "hp" / "mugpubbase.txt", sep=r"\s+", header=None, names=["m", "q", "v"])
hp = hp[(hp["m"] == "infAP") & (hp["q"] != "all")].astype({"q": str, "v": float}).set_index("q")["v"]
per_topic = ir_incomplete.evaluate({"mugpubbase": runs["mugpubbase"]}, prels, ["xinfAP@100"])
per_topic = per_topic.set_index("query_id")["value"]
print(f"mugpubbase xinfAP@100 per topic: largest |ours - NIST 17 digits| = {(per_topic - hp).abs().max():.1e}\n")

# the estimates beside what the judged sample alone gives: P@100 (unjudged = nonrelevant) and
# PUpper@100 (unjudged = relevant) enclose the true P@100; APUpper@100 is the largest AP@100 any
# relevance of the unjudged documents could give. AP@100 from the sample is no lower bound of the true
# AP@100 (the unjudged relevant documents also raise R): xinfAP@100, which estimates R, is below it.
measures = ["P@100", "iP@100", "PUpper@100", "AP@100", "xinfAP@100", "APUpper@100"]
bounds = ir_incomplete.evaluate(runs, prels, measures, per_query=False, topics="run")
print("estimates beside the values from the judged sample alone:")
print(bounds.pivot(index="run", columns="measure", values="value")[measures].round(4).to_string())
