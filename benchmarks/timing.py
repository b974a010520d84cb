"""Timing helper shared by the benchmark scripts (run them as ``python benchmarks/<script>.py``)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any


def best_of(repeats: int, thunk: Callable[[], Any]) -> tuple[float, Any]:
    """The best wall-clock time of ``repeats`` calls of ``thunk`` (garbage collected before each) and
    the result of the last call."""
    best, result = float("inf"), None
    for _ in range(max(repeats, 1)):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = thunk()
        best = min(best, time.perf_counter() - start)
    return best, result
