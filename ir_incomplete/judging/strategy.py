"""The contract of judging methods: start, ask for the next batch, report the judgments.

Every method of :mod:`ir_incomplete.judging` (static pools and adaptive ones) has this form, so that
:func:`ir_incomplete.judging.simulate` can replay any of them against an oracle qrels. The methods of
this package also have ``design_prior(state)``: a weight ``>= 0`` per candidate pair, what
:func:`ir_incomplete.judging.strategy_prior` turns into the prior of a probability sample (a strategy
without it gets one from the order of its ``next_batch``).
"""

from __future__ import annotations

from typing import Any, Protocol

import pandas as pd

__all__ = ["Strategy"]


class Strategy(Protocol):
    """A judging method that works in rounds: ``state = start(runs, qrels)``, ``batch = next_batch(state,
    n)``, then ``update(state, judgments)``."""

    name: str

    # runs: anything evaluate() accepts; qrels may be None/empty
    def start(self, runs, qrels=None) -> Any: ...

    # columns query_id, doc_id (+ optional 'priority'), at most n unjudged pairs, most useful first
    def next_batch(self, state, n: int) -> pd.DataFrame: ...

    # columns query_id, doc_id, relevance
    def update(self, state, judgments: pd.DataFrame) -> None: ...
