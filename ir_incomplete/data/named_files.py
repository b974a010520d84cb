"""Files named inside measure strings (``design='design.tsv'``, ``predictions='labels.tsv'``), read once per
evaluation.

One evaluation may need such a file several times (the per-query estimates and the intervals of the run
means, the pairs of a comparison, the check of the ``ir_measures`` command and the evaluation itself).
Inside :func:`evaluation_scope` :func:`read_named_file` reads each file once and gives the same object
to every later call: a named pipe (``mkfifo``, ``<(zcat labels.gz)``), which can be read only once, then
works, and a regular file is not read again. A regular file is known by its path, inode, size and
modification time (a file changed during the evaluation is read again); a named pipe or a character
device by its path and inode (its modification time changes as it is written). Nothing is kept once the
outermost scope ends, so the next evaluation reads the files afresh (a named pipe: the next writer's
content). Outside a scope every call reads the file.
"""

from __future__ import annotations

import functools
import os
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

__all__ = ["evaluation_scope", "hold_evaluation_scope", "read_named_file", "read_once_per_call"]

_P = ParamSpec("_P")
_T = TypeVar("_T")

_LOCK = threading.RLock()
_DEPTH = 0
_HELD = False
_READ: dict[tuple, Any] = {}


@contextmanager
def evaluation_scope() -> Iterator[None]:
    """While the outermost of nested scopes lasts, :func:`read_named_file` reads each file once."""
    global _DEPTH
    with _LOCK:
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0:
                _READ.clear()


def read_once_per_call(func: Callable[_P, _T]) -> Callable[_P, _T]:
    """``func`` run inside an :func:`evaluation_scope` (a decorator)."""

    @functools.wraps(func)
    def scoped(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        with evaluation_scope():
            return func(*args, **kwargs)

    return scoped


def hold_evaluation_scope() -> None:
    """Enter a scope that lasts as long as the process: for a command that evaluates once and exits (the
    ``ir_measures`` command, which reads a measure's files when it parses the measure and again when it
    evaluates)."""
    global _DEPTH, _HELD
    with _LOCK:
        if not _HELD:
            _HELD = True
            _DEPTH += 1


def _identity(path: Any) -> tuple | None:
    """What tells the file ``path`` from another (see the module docstring); ``None`` when it cannot be
    examined (the reader then reports why)."""
    try:
        full = os.path.abspath(os.fspath(path))
        info = os.stat(full)
    except (OSError, TypeError, ValueError):
        return None
    if stat.S_ISREG(info.st_mode):
        return (full, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    return (full, info.st_dev, info.st_ino)


def read_named_file(path: Any, kind: str, reader: Callable[[Any], Any]) -> Any:
    """``reader(path)``, once per :func:`evaluation_scope` for each ``kind`` (what ``reader`` makes of the
    file, e.g. ``"design"``) and file; outside a scope, every call reads. An error is not kept: the next
    call reads again."""
    identity = _identity(path)
    if identity is None:
        return reader(path)
    key = (kind, *identity)
    with _LOCK:
        if _DEPTH == 0:
            scoped = False
        elif key in _READ:
            return _READ[key]
        else:
            scoped = True
    if not scoped:
        return reader(path)
    with _LOCK:  # held while reading: two threads of one evaluation must not both open a named pipe
        if key not in _READ:
            value = reader(path)
            if _DEPTH == 0:  # the scope ended meanwhile (another thread's): keep nothing
                return value
            _READ[key] = value
        return _READ[key]
