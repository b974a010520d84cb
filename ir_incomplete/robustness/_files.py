"""Files that a study writes: atomically (a temporary file in the same folder, flushed to disk, renamed
into place), with the permissions a plain ``open()`` gives."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable

__all__ = ["atomic_write"]


def _temporary(path: str) -> str:
    """Create a new empty file beside ``path`` (``.NAME.XXXXXXXX.tmp``) with the permissions a plain
    ``open(path, "w")`` gives (0666 less the umask; ``tempfile.mkstemp`` would make it 0600) and return
    its path."""
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(100):
        tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:  # pragma: no cover - 32 random bits
            continue
        os.close(fd)
        return tmp
    raise FileExistsError(f"cannot create a temporary file beside {path}")  # pragma: no cover


def atomic_write(path: str, write: Callable[[str], object]) -> None:
    """Write ``path`` atomically: ``write(temporary path)`` in the same folder, flush to disk, rename.
    The file gets the permissions a plain ``open()`` gives (0666 less the umask)."""
    tmp = _temporary(path)
    try:
        write(tmp)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
