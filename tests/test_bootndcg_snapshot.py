"""Seeded ``BootNDCG`` and ``NDCGUpper`` values are frozen: every prior, stat, gain, order, pool scope and
the ECIR-23 compatibility mode, on a synthetic fixture with ties, unpooled and pooled-but-unjudged
documents, topics without relevant documents and a reservoir that runs out.

The expected values (``data/bootndcg_snapshot.json``) are exact float reprs written by the code as it
was before the bootstrap family grew beyond nDCG; any change to the sampler, its random streams or the
summaries shows up here bit for bit. Regenerate only on purpose:
``python tests/test_bootndcg_snapshot.py --write``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

SNAPSHOT = Path(__file__).resolve().parent / "data" / "bootndcg_snapshot.json"

MEASURES = [
    f"BootNDCG(prior={prior},stat={stat})@{k}"
    for prior in ("pool+run", "pool", "run")
    for stat in ("mode", "mean", "median", "p5", "p95")
    for k in (3, 10)
] + [
    "BootNDCG(b=37,seed=7)@5",
    "BootNDCG(gain=exp)@10",
    "BootNDCG(order=docid)@10",
    "BootNDCG(pool_scope=collection)@10",
    "BootNDCG(prior=run,order=docid,pool_scope=collection,stat=p90)@20",
    "BootNDCG(compat=ecir23)@10",
    "BootNDCG(compat=ecir23,prior=pool,stat=mean)@5",
    "NDCGUpper@5",
    "NDCGUpper@10",
    "NDCGUpper(gain=exp)@20",
]
REPLICATES = "BootNDCG(b=25,prior=pool+run)@10"


def fixture() -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Three runs × seven topics of a seeded random collection (grades 0..3, −1 = pooled but unjudged)."""
    rng = np.random.default_rng(20240518)
    qrels, runs = [], {f"run{r}": [] for r in range(3)}
    for t in range(7):
        n_docs = 40
        top = [1, 2, 3, 3, 0, 2, 3][t]  # topic 4 has no relevant document
        grades = rng.integers(0, top + 1, n_docs)
        judged = rng.random(n_docs) < [0.3, 0.5, 0.7, 0.9, 0.5, 0.15, 0.5][t]
        for d in range(n_docs):
            if judged[d]:
                qrels.append((f"q{t}", f"d{d}", int(grades[d])))
            elif d % 7 == 0:
                qrels.append((f"q{t}", f"d{d}", -1))
        for r, rows in enumerate(runs.values()):
            depth = 25 + 5 * r
            order = rng.permutation(n_docs)[:depth]
            scores = np.round(rng.random(depth) * 4) / 4  # many ties
            rows += [(f"q{t}", f"d{d}", float(s)) for d, s in zip(order, scores, strict=True)]
    frames = {name: pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]) for name, rows in runs.items()}
    return frames, pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])


def current() -> dict[str, list[str]]:
    from ir_incomplete import evaluate
    from ir_incomplete.bootstrap import bootstrap_ndcg

    runs, qrels = fixture()
    table = evaluate(runs, qrels, MEASURES)
    out = {m: [repr(float(v)) for v in part["value"]] for m, part in table.groupby("measure", sort=False)}
    result = bootstrap_ndcg(runs, qrels, k=10, b=25)
    out[REPLICATES] = [repr(float(v)) for v in result.replicates.to_numpy().ravel()]
    for column in ("mode", "mean", "median", "p5", "p95", "naive_lower", "naive_upper"):
        out[f"summary {column}"] = [repr(float(v)) for v in result.summary[column]]
    return out


def test_seeded_values_unchanged_bit_for_bit():
    expected = json.loads(SNAPSHOT.read_text())
    got = current()
    assert list(got) == list(expected)
    for name, values in expected.items():
        assert got[name] == values, name


if __name__ == "__main__" and "--write" in sys.argv:
    SNAPSHOT.parent.mkdir(exist_ok=True)
    SNAPSHOT.write_text(json.dumps(current(), indent=0) + "\n")
