"""TREC-COVID round 1: the official leaderboard's RBP(p=.5) is graded RBP (gain grade / 2) over the
round-1 qrels, every run's whole ranking, unjudged documents counting 0, averaged over the 30 topics."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import COVID, _need

from ir_incomplete import evaluate


@pytest.fixture(scope="module")
def scores(covid):
    leaderboard = pd.read_csv(_need(COVID / "leaderboard.csv")).set_index("run")
    measures = ["RBPResidual(p=0.5,gain=graded)", "RBPResidual(p=0.5)"]
    ours = evaluate(covid["runs"], covid["qrels"], measures, per_query=False)
    table = ours.pivot(index="run", columns="measure", values="value")
    return table, leaderboard.loc[table.index, "RBP(p=.5)"]


def test_graded_rbp_reproduces_the_leaderboard(scores):
    table, official = scores
    assert len(table) == 143
    diff = (table["RBPResidual(p=0.5,gain=graded)"] - official).abs()
    assert diff.max() <= 5e-5 + 1e-12  # the leaderboard prints 4 decimals


def test_binary_rbp_is_not_what_the_leaderboard_reports(scores):
    table, official = scores
    diff = (table["RBPResidual(p=0.5)"] - official).abs()
    assert diff.max() > 0.15
