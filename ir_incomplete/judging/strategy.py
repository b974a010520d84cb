"""The shared contract of adaptive judging methods: ``state = start(runs, qrels)``, then rounds of
``batch = next_batch(state, n)``, judge the batch, ``update(state, judgments)``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd


class Strategy(Protocol):
    name: str

    # runs: anything evaluate() accepts; qrels may be None/empty
    def start(self, runs, qrels=None) -> Any: ...

    # columns query_id, doc_id (+ optional 'priority'), at most n unjudged pairs, most useful first
    def next_batch(self, state, n: int) -> pd.DataFrame: ...

    # columns query_id, doc_id, relevance
    def update(self, state, judgments: pd.DataFrame) -> None: ...
