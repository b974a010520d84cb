"""Read input files in a background thread while the caller does other work.

The command line spends about as long importing pandas and the measures as pyarrow's CSV reader spends
on a large run file. Parsing releases the GIL, so the two overlap: :class:`Prefetch` starts reading the
files at once, in order, and :meth:`Prefetch.take` hands out each result when the caller gets to it, or
raises the very exception the read raised, so a prefetched file behaves exactly like one read on the
spot. A file never asked for is dropped. Use it as a context manager: leaving the block stops the
reading after the current file and waits for the thread, so no reader is left running when the program
ends (e.g. after an error). Leaving it by Ctrl-C (``KeyboardInterrupt``) does not wait: the file being
read may be a named pipe that never ends (``<(zcat run.gz)`` of a stopped producer), and the command must
stop at once; the thread is a daemon thread, so it does not hold the program open.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from ir_incomplete.data.readers import run_directory_entries


class Prefetch:
    """Run the ``(key, read)`` jobs one after the other in a background thread (``read()`` reads one
    file; keys are distinct).

    :meth:`take` ``(key, read)`` waits for that job and returns what its ``read`` returned (or raises
    what it raised); a key that was not prefetched, or was taken already, is read now with ``read``, in
    the calling thread. :meth:`close` (also on leaving a ``with`` block, unless by ``KeyboardInterrupt``)
    starts no further job and waits for the thread."""

    def __init__(self, jobs: Sequence[tuple[Hashable, Callable[[], Any]]]):
        self._jobs = list(dict(jobs).items())
        self._results: dict[Hashable, tuple[bool, Any]] = {}
        self._ready = {key: threading.Event() for key, _ in self._jobs}
        self._untaken = set(self._ready)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="ir_incomplete-prefetch", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        for key, read in self._jobs:
            if self._stop.is_set():
                return
            try:
                self._results[key] = (True, read())
            except BaseException as exc:  # handed to the caller of take(), raised there
                self._results[key] = (False, exc)
            self._ready[key].set()

    def take(self, key: Hashable, read: Callable[[], Any]) -> Any:
        """The result of the job ``key``: prefetched when it was, else ``read()`` now."""
        if key not in self._untaken:
            return read()
        self._untaken.discard(key)
        self._ready[key].wait()
        ok, value = self._results.pop(key)
        if not ok:
            raise value
        return value

    def close(self) -> None:
        """Start no further job, wait for the one running, and drop what was not taken."""
        self._stop.set()
        self._thread.join()
        self._results.clear()
        self._untaken.clear()

    def __enter__(self) -> Prefetch:
        return self

    def __exit__(self, kind, *exc_info) -> None:
        if kind is not None and issubclass(kind, KeyboardInterrupt):  # Ctrl-C: stop now, do not wait
            self._stop.set()
            return
        self.close()


def regular_files(items: Sequence[str]) -> list[str]:
    """The regular files among ``items`` and, for a directory, the regular files among its
    :func:`~ir_incomplete.data.readers.run_directory_entries`: the files the command line will probably
    read."""
    files: list[str] = []
    for item in items:
        if os.path.isdir(item):
            try:
                entries = run_directory_entries(item)
            except OSError:  # reported when the runs are listed for real
                continue
            files.extend(full for full in entries if os.path.isfile(full))
        elif os.path.isfile(item):
            files.append(item)
    return files
