"""A seeded synthetic test collection with sparse graded relevance, shaped like collections where design-based
intervals were seen to fail: many runs whose top 100s overlap only partly (a union of several thousand
documents per topic), few relevant documents per topic with counts that vary a lot across topics, and
grades 0–3 of which only 2 and 3 count as relevant for a graded AP (``AP(rel=2)@100``).

    from synthetic_collection import make_collection
    runs, qrels = make_collection(seed=0)      # 60 runs × 50 topics × top 100; complete qrels

The model (every draw from one ``numpy.random.default_rng(seed)``, in the order listed, so one seed gives
one collection, bit for bit):

1. **Topics** ``t = 1 .. topics`` (query ids ``"1"``, ``"2"``, ...), each with ``docs_per_topic`` documents
   of its own (ids ``q<t>-d<j>``, ``j`` from 0).
2. **Grades.** Topic ``t`` has ``R_t = max(1, round(docs_per_topic · s_t))`` relevant documents (grade ≥ 2),
   ``s_t = min(0.08, relevant_share · exp(spread · z_t − spread² / 2))`` with ``z_t`` standard normal: a
   log-normal share whose mean (before the cap) is ``relevant_share`` (default 1.5 %), so counts vary about
   ``e^spread``-fold (default ``spread=1.1``: 3×) either way across topics and a few topics have only a
   handful. Each relevant document is grade 3 with the topic's probability ``h_t ~ Beta(2, 4)`` (mean 1/3),
   else grade 2. ``round(marginal · R_t)`` more documents are marginal (grade 1; default ``marginal=1.5``);
   the rest are grade 0. Which documents get which grade: a random permutation of the topic's documents.
3. **A latent match** per document, seen by every system: ``x = signal · e_t · μ_g · f + shared_noise · ε``
   with ``μ = (0, 2.0, 3.6, 4.8)`` for grades 0–3 (:data:`GRADE_MEANS`), ``e_t ~ Uniform(0.6, 1.4)`` the
   topic's easiness, ``f = 2 · Beta(findability, findability)`` the document's findability (mean 1;
   default uniform on [0, 2], so some relevant documents are easy for every system and some for none;
   ``findability=0``: ``f = 1``) and ``ε`` standard normal (nonrelevant documents that look relevant to
   every system).
4. **Runs** ``run01 .. run<runs>`` in ``families`` families (0-based run ``r`` in family ``r mod
   families``): quality ``q_r ~ Uniform(0.2, 1.4)``, then a standard normal view ``η_f`` per family and
   document, then for each run in turn its own standard normal ``ν_r`` per document; run ``r`` scores
   ``q_r · x + family_noise · η_f(r) + run_noise · ν_r`` (defaults 1.0 and 2.0) and returns its top
   ``depth`` documents per topic with the score ``depth − rank`` (ranks from 0: integers, no ties). Runs
   of one family overlap more than runs of different families, and weak runs reach deep into the
   nonrelevant documents.

With the defaults (60 runs, 50 topics, 4,000 documents per topic; seeds 0–4) the union of the runs' top
100s has about 2,500 documents per topic (1,500–2,900); 2.0–2.6 % of them are relevant on average over
topics (grade ≥ 2; median 1.0–1.4 %, from 0.1 % to 12–20 % by topic; 1–3 relevant documents in the
sparsest topic, 250–280 in the densest); the runs' depth-10 pool has about 330 documents per topic and
holds 58–63 % of the union's relevant documents. Run means against the union's grades (seed 0): AP@100
0.01–0.27, ``AP(rel=2)@100`` 0.015–0.42, nDCG@10 0.11–0.76. :func:`make_collection` takes under a second.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: mean latent match of grades 0, 1, 2, 3 (before the topic's easiness and the document's findability)
GRADE_MEANS = (0.0, 2.0, 3.6, 4.8)


def make_collection(
    seed: int = 0,
    topics: int = 50,
    runs: int = 60,
    docs_per_topic: int = 4000,
    depth: int = 100,
    relevant_share: float = 0.015,
    spread: float = 1.1,
    marginal: float = 1.5,
    families: int = 10,
    family_noise: float = 1.0,
    run_noise: float = 2.0,
    signal: float = 1.0,
    shared_noise: float = 0.5,
    findability: float = 1.0,
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Runs and complete qrels of a synthetic collection (the model is the module docstring's).

    Returns ``(runs, qrels)``: ``runs`` maps ``run01 ..`` to a DataFrame ``query_id, doc_id, score`` with
    ``depth`` rows per topic (sorted by topic, then score descending); ``qrels`` is a DataFrame
    ``query_id, doc_id, relevance`` with every document of every topic (grades 0–3; complete judgments).
    Raises ``ValueError`` when a count is not a positive integer, ``families`` is not in 1..``runs``,
    ``depth`` exceeds ``docs_per_topic``, ``relevant_share`` is outside (0, 1) or a scale is negative.
    """
    for name, value in (("topics", topics), ("runs", runs), ("docs_per_topic", docs_per_topic), ("depth", depth)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name}={value!r} must be a positive integer")
    if families < 1 or families > runs:
        raise ValueError(f"families={families!r} must be between 1 and runs={runs}")
    if depth > docs_per_topic:
        raise ValueError(f"depth={depth} exceeds docs_per_topic={docs_per_topic}")
    if not 0 < relevant_share < 1:
        raise ValueError(f"relevant_share={relevant_share!r} must be above 0 and below 1")
    if min(spread, marginal, family_noise, run_noise, signal, shared_noise, findability) < 0:
        raise ValueError(
            "spread, marginal, family_noise, run_noise, signal, shared_noise and findability must not be negative"
        )
    rng = np.random.default_rng(seed)
    n_docs = docs_per_topic

    # 2. grades
    z = rng.standard_normal(topics)
    share = np.minimum(0.08, relevant_share * np.exp(spread * z - spread**2 / 2))
    n_rel = np.maximum(1, np.rint(n_docs * share)).astype(np.int64)
    n_marginal = np.minimum(np.rint(marginal * n_rel).astype(np.int64), n_docs - n_rel)
    top_share = rng.beta(2.0, 4.0, topics)
    position = rng.permuted(np.tile(np.arange(n_docs), (topics, 1)), axis=1)  # document j's place in line
    is_rel = position < n_rel[:, None]
    is_marginal = ~is_rel & (position < (n_rel + n_marginal)[:, None])
    grade = np.where(is_rel, 2, np.where(is_marginal, 1, 0))
    grade[is_rel & (rng.random((topics, n_docs)) < top_share[:, None])] = 3

    # 3. latent match
    easiness = rng.uniform(0.6, 1.4, topics)
    found = 2.0 * rng.beta(findability, findability, (topics, n_docs)) if findability > 0 else 1.0
    x = signal * easiness[:, None] * np.asarray(GRADE_MEANS)[grade] * found
    x = x + shared_noise * rng.standard_normal((topics, n_docs))

    # 4. runs
    quality = rng.uniform(0.2, 1.4, runs)
    family_view = rng.standard_normal((families, topics, n_docs))
    query_ids = np.array([str(t + 1) for t in range(topics)], dtype=object)
    doc_names = _doc_ids(np.repeat(np.arange(topics), n_docs), np.tile(np.arange(n_docs), topics))
    out: dict[str, pd.DataFrame] = {}
    width = len(str(runs))
    for r in range(runs):
        scores = (
            quality[r] * x
            + family_noise * family_view[r % families]
            + run_noise * rng.standard_normal((topics, n_docs))
        )
        top = np.argpartition(-scores, depth - 1, axis=1)[:, :depth]
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1, kind="stable")
        top = np.take_along_axis(top, order, axis=1)
        topic_rows = np.repeat(np.arange(topics), depth)
        out[f"run{r + 1:0{width}d}"] = pd.DataFrame(
            {
                "query_id": query_ids[topic_rows],
                "doc_id": doc_names[topic_rows * n_docs + top.ravel()],
                "score": np.tile(np.arange(depth, 0, -1), topics).astype(float),
            }
        )
    all_topics = np.repeat(np.arange(topics), n_docs)
    qrels = pd.DataFrame(
        {
            "query_id": query_ids[all_topics],
            "doc_id": doc_names,
            "relevance": grade.ravel().astype(np.int64),
        }
    )
    return out, qrels


def _doc_ids(topic_rows: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """``q<topic + 1>-d<doc>`` for each (0-based topic row, document number)."""
    return np.char.add(np.char.add("q", (topic_rows + 1).astype(str)), np.char.add("-d", docs.astype(str))).astype(
        object
    )


def describe(runs: dict[str, pd.DataFrame], qrels: pd.DataFrame, depth: int = 10) -> pd.DataFrame:
    """Per topic: documents in the union of the runs' lists (``universe``), relevant ones among them (grade
    ≥ 2: ``relevant``, and their ``share``), marginal ones (grade 1), the runs' depth-``depth`` pool
    (``pool``) and the relevant documents it holds (``pool_relevant``). Runs must be sorted as
    :func:`make_collection` gives them (by topic, then score descending)."""
    items = pd.concat(
        [run.assign(rank=run.groupby("query_id").cumcount() + 1) for run in runs.values()], ignore_index=True
    )
    keys = ["query_id", "doc_id"]
    universe = items[keys].drop_duplicates().merge(qrels, on=keys, how="left").fillna({"relevance": 0})
    pool = items[items["rank"] <= depth][keys].drop_duplicates()
    pool = pool.merge(qrels, on=keys, how="left").fillna({"relevance": 0})
    table = universe.groupby("query_id", sort=False)["relevance"].agg(
        universe="size", relevant=lambda g: int((g >= 2).sum()), marginal=lambda g: int((g == 1).sum())
    )
    table["share"] = table["relevant"] / table["universe"]
    pooled = pool.groupby("query_id", sort=False)["relevance"].agg(
        pool="size", pool_relevant=lambda g: int((g >= 2).sum())
    )
    return table.join(pooled)
