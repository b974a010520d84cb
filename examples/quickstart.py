"""Quick start on data this script makes: four runs, judgments with pooled-but-unjudged entries.

    python examples/quickstart.py

Shows ``ir_incomplete.evaluate`` (many runs, tidy DataFrame), the same measures through
``ir_measures``, and how plain AP and infAP rank the runs when half of the pool is left unjudged:
the script knows every document's grade, so it also prints AP on the complete judgments, the runs in
the order each measure puts them, Kendall τ against the complete-judgment order and each measure's
distance from the complete AP. Takes a few seconds.
"""

import ir_measures
import numpy as np
import pandas as pd

import ir_incomplete
from ir_incomplete.robustness import kendall_tau

#: the runs and how strongly their scores follow the grades
QUALITY = {"bm25": 1.0, "dense": 1.3, "hybrid": 1.15, "sparse": 0.9}


def make_data(seed: int = 0, topics: int = 20, depth: int = 100):
    """``(qrels, runs, complete)``: incomplete qrels (half of a 60 % pool judged, the rest of the pool
    −1), ``{name: run}`` and the complete judgments of every document."""
    rng = np.random.default_rng(seed)
    qrels_rows, complete_rows, runs = [], [], {name: [] for name in QUALITY}
    for t in range(topics):
        qid = str(t + 1)
        docs = [f"d{t}_{i}" for i in range(300)]
        grades = rng.choice([0, 1, 2], size=300, p=[0.8, 0.15, 0.05])
        pooled = rng.random(300) < 0.6  # the pool
        judged = pooled & (rng.random(300) < 0.5)  # half of the pool was judged
        for doc, grade, p, j in zip(docs, grades, pooled, judged, strict=True):
            complete_rows.append((qid, doc, int(grade)))
            if j:
                qrels_rows.append((qid, doc, int(grade)))
            elif p:
                qrels_rows.append((qid, doc, -1))  # pooled but unjudged
        for name, quality in QUALITY.items():
            scores = quality * grades + rng.normal(0, 1.0, 300)
            top = np.argsort(-scores)[:depth]
            runs[name] += [(qid, docs[i], float(scores[i])) for i in top]
    columns = ["query_id", "doc_id", "relevance"]
    qrels, complete = pd.DataFrame(qrels_rows, columns=columns), pd.DataFrame(complete_rows, columns=columns)
    runs = {k: pd.DataFrame(v, columns=["query_id", "doc_id", "score"]) for k, v in runs.items()}
    return qrels, runs, complete


def main():
    qrels, runs, complete = make_data()
    measures = ["AP", "infAP", "infAP(c=1.5)", "infAP(variant=uniform)", "infAP@10"]
    table = ir_incomplete.evaluate(runs, qrels, measures, per_query=False)
    wide = table.pivot(index="run", columns="measure", values="value")[measures]
    print("Mean over topics (ir_incomplete.evaluate):")
    print(wide.round(4).to_string())

    print("\nThe same through ir_measures (strings parse once ir_incomplete is imported):")
    for name, run in runs.items():
        agg = ir_measures.calc_aggregate([ir_measures.parse_measure(m) for m in measures], qrels, run)
        print(f"  {name}: " + ", ".join(f"{m}={v:.4f}" for m, v in agg.items()))

    truth = ir_incomplete.evaluate(runs, complete, ["AP"], per_query=False).set_index("run")["value"]
    truth = truth.reindex(wide.index)
    print("\nRanking the runs with half of the pool unjudged, against AP on the complete judgments:")
    print(f"  {'complete AP':<24} {' > '.join(truth.sort_values(ascending=False).index)}")
    for measure in ("AP", "infAP"):
        estimate = wide[measure]
        order = " > ".join(estimate.sort_values(ascending=False).index)
        error = float(np.sqrt(np.mean((estimate - truth) ** 2)))
        print(
            f"  {measure + ' (incomplete)':<24} {order}   Kendall tau {kendall_tau(truth, estimate):+.3f}, "
            f"RMS error {error:.4f}"
        )
    print(
        "Plain AP counts every unjudged document as nonrelevant; infAP estimates the relevance of the unjudged\n"
        "pooled documents from the judged ones, so it comes closer to the complete value (documents outside\n"
        "the pool, 40 % here, count as nonrelevant for both)."
    )


if __name__ == "__main__":
    main()
