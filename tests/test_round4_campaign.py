"""A fifth campaign of bad and odd inputs against the design-based and judging surfaces: a new round drawn
with the seed of the round before, output files that are inputs of the same command, hand-edited designs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ir_incomplete.judging import sample

QUERIES = [str(q) for q in range(1, 9)]
DOCS = [f"d{i:03d}" for i in range(120)]


def _runs(seed: int = 0, n_runs: int = 4, length: int = 40) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    runs = {}
    for r in range(n_runs):
        rows = [(q, str(d), 100.0 - i) for q in QUERIES for i, d in enumerate(rng.permutation(DOCS)[:length])]
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs


def _grades(design: pd.DataFrame) -> pd.DataFrame:
    grade = [(int(d[1:]) * 7 + int(q)) % 3 for q, d in zip(design["query_id"], design["doc_id"], strict=True)]
    return pd.DataFrame({"query_id": design["query_id"], "doc_id": design["doc_id"], "relevance": grade})


@pytest.mark.parametrize("seed", [0, 5])
def test_a_new_round_with_the_seed_of_the_round_before_draws_its_budget(seed: int) -> None:
    # the same seed dealt each pair the same random number u in both rounds: every pair left has
    # u >= pi_1, so with a round-2 pi below pi_1 almost nothing was drawn (0 of 100 expected on TREC-COVID)
    runs = _runs()
    first = sample(runs, 60, depth=20, seed=seed)
    second = sample(runs, 60, depth=20, seed=seed, previous=first, judgments=_grades(first))
    new = second[second["stratum"] == "sampled"]
    expected = second.attrs["expected_judgments"]
    assert abs(expected - 60) < 1e-6
    assert abs(len(new) - expected) < 4 * np.sqrt(expected)
    # the round's pi: pairs of the first round are not drawn again, every other pair with its own chance
    assert not set(zip(new["query_id"], new["doc_id"], strict=True)) & set(
        zip(first["query_id"], first["doc_id"], strict=True)
    )


def test_qrels_of_an_earlier_design_with_its_seed_draw_the_budget() -> None:
    # the same reuse through qrels= (the earlier design's judgments given as judgments made before)
    runs = _runs()
    first = sample(runs, 60, depth=20, seed=0)
    second = sample(runs, 60, depth=20, seed=0, qrels=_grades(first))
    new = second[second["stratum"] == "sampled"]
    assert abs(len(new) - 60) < 4 * np.sqrt(60)

