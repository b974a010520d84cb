"""Progress bars of long work: ``tqdm`` bars on stderr, never part of the values.

Every long-running function (:func:`ir_incomplete.evaluate`, :func:`ir_incomplete.judging.simulate`,
:func:`ir_incomplete.robustness.robustness_study`) takes ``progress``:

* ``None`` (the default): automatic. A bar appears only when stderr is a terminal and the work is
  still running after :data:`DELAY` seconds (tqdm's ``delay``): short calls, pipes and log files get
  none.
* ``True``: a bar from the start, wherever stderr goes (a notebook gets tqdm's widget).
* ``False``: never.

The commands take ``--progress`` / ``--no-progress`` with the same meaning (neither: automatic).
Without tqdm installed there is no bar. A function runs its long work in a :func:`task`; computations
inside report what they have done through :func:`advance` (e.g. the bootstrapped measures after each
block of rankings), which does nothing outside a task.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["DELAY", "check_progress", "progress_bar", "task", "set_total", "advance", "completed"]

#: seconds an automatic bar (``progress=None``) waits before it appears: a shorter job shows none
DELAY = 2.0


def check_progress(progress: Any) -> bool | None:
    """``progress`` itself when it is ``None``, ``True`` or ``False``; otherwise a ``TypeError``."""
    if progress is None or isinstance(progress, bool):
        return progress
    raise TypeError(
        f"progress={progress!r} is not valid; expected None (a bar for long work when stderr is a terminal), "
        f"True (always) or False (never)"
    )


class _Silent:
    """The bar when none is shown: every call does nothing."""

    n = 0
    total = 0
    leave = True

    def update(self, n: float = 1) -> None:
        return None

    def close(self) -> None:
        return None


def _stderr_is_terminal() -> bool:
    try:
        return bool(sys.stderr is not None and sys.stderr.isatty())
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def progress_bar(total: float | None, progress: bool | None, desc: str, unit: str = "it") -> Any:
    """A ``tqdm`` bar on stderr, or an object with the same ``update``/``close`` that shows nothing
    (``progress=False``; ``None`` when stderr is not a terminal; tqdm not installed)."""
    progress = check_progress(progress)
    if progress is False or (progress is None and not _stderr_is_terminal()):
        return _Silent()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency, but the bar is optional
        return _Silent()
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, delay=DELAY if progress is None else 0.0)


class _Task:
    """The work of one :func:`task` block: its bar and the units done so far."""

    def __init__(self, bar: Any):
        self.bar = bar
        self.done: float = 0

    def advance(self, n: float) -> None:
        if n > 0:
            self.done += n
            self.bar.update(n)


_TASK: ContextVar[_Task | None] = ContextVar("ir_incomplete_progress", default=None)


@contextlib.contextmanager
def task(progress: bool | None, desc: str, unit: str = "it", total: float | None = None) -> Iterator[_Task]:
    """A block of long work with one bar (:func:`progress_bar`); :func:`advance` within it moves the
    bar, also from functions called inside. A block with ``progress=False`` hides the bars of the
    blocks around it (work inside another task's unit is not counted twice). A block that finishes
    fills its bar; Ctrl-C clears it."""
    bar = progress_bar(total, progress, desc, unit)
    current = _Task(bar)
    token = _TASK.set(current)
    try:
        yield current
        if bar.total:
            current.advance(bar.total - current.done)
    except KeyboardInterrupt:
        bar.leave = False  # tqdm: clear the bar instead of leaving a half-full one above the message
        raise
    finally:
        _TASK.reset(token)
        bar.close()


def set_total(total: float) -> None:
    """Set the total of the enclosing :func:`task`'s bar (when it is known only after the work starts)."""
    current = _TASK.get()
    if current is not None:
        current.bar.total = total


def advance(n: float) -> None:
    """Report ``n`` units of work done to the enclosing :func:`task`, if any."""
    current = _TASK.get()
    if current is not None:
        current.advance(n)


def completed() -> float:
    """The units the enclosing :func:`task` has done so far (0 outside one)."""
    current = _TASK.get()
    return 0 if current is None else current.done
