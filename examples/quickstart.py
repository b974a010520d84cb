"""Quick start on data this script makes: two runs, judgments with pooled-but-unjudged entries.

    python examples/quickstart.py

Shows ``ir_incomplete.evaluate`` (many runs, tidy DataFrame), the same measures through
``ir_measures``, and how plain AP and infAP rank the runs when judgments are incomplete.
"""

import ir_measures
import numpy as np
import pandas as pd

import ir_incomplete


def make_data(seed: int = 0, topics: int = 20, depth: int = 100):
    rng = np.random.default_rng(seed)
    qrels_rows, runs = [], {"bm25": [], "dense": []}
    for t in range(topics):
        qid = str(t + 1)
        docs = [f"d{t}_{i}" for i in range(300)]
        grades = rng.choice([0, 1, 2], size=300, p=[0.8, 0.15, 0.05])
        pooled = rng.random(300) < 0.6  # the pool
        judged = pooled & (rng.random(300) < 0.5)  # half of the pool was judged
        for doc, grade, p, j in zip(docs, grades, pooled, judged, strict=True):
            if j:
                qrels_rows.append((qid, doc, int(grade)))
            elif p:
                qrels_rows.append((qid, doc, -1))  # pooled but unjudged
        for name, quality in (("bm25", 1.0), ("dense", 1.3)):
            scores = quality * grades + rng.normal(0, 1.0, 300)
            top = np.argsort(-scores)[:depth]
            runs[name] += [(qid, docs[i], float(scores[i])) for i in top]
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    runs = {k: pd.DataFrame(v, columns=["query_id", "doc_id", "score"]) for k, v in runs.items()}
    return qrels, runs


def main():
    qrels, runs = make_data()
    measures = ["AP", "infAP", "infAP(c=1.5)", "infAP(variant=uniform)", "infAP@10"]
    table = ir_incomplete.evaluate(runs, qrels, measures, per_query=False)
    print("Mean over topics (ir_incomplete.evaluate):")
    print(table.pivot(index="run", columns="measure", values="value")[measures].round(4).to_string())

    print("\nThe same through ir_measures (strings parse once ir_incomplete is imported):")
    for name, run in runs.items():
        agg = ir_measures.calc_aggregate([ir_measures.parse_measure(m) for m in measures], qrels, run)
        print(f"  {name}: " + ", ".join(f"{m}={v:.4f}" for m, v in agg.items()))


if __name__ == "__main__":
    main()
