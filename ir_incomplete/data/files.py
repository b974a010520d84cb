"""Files the package writes: atomically (a temporary file in the same folder, flushed to disk, renamed
into place), with the permissions a plain ``open()`` gives; ``.gz`` paths as gzip data, which every
reader of the package (:func:`~ir_incomplete.data.readers._open_text`) reads back."""

from __future__ import annotations

import contextlib
import errno
import gzip
import os
import secrets
from collections.abc import Callable

__all__ = ["atomic_write", "write_text"]


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
        except OSError as exc:  # a folder that does not exist or cannot be written: name the file asked for
            raise type(exc)(exc.errno, exc.strerror, path) from None
        os.close(fd)
        return tmp
    raise FileExistsError(f"cannot create a temporary file beside {path}")  # pragma: no cover


def atomic_write(path: str, write: Callable[[str], object]) -> None:
    """Write ``path`` atomically: ``write(temporary path)`` in the same folder, flush to disk, rename
    (``os.replace``). Until the rename, ``path`` keeps its earlier content; on any error (also
    ``KeyboardInterrupt``) the temporary file is removed and ``path`` is untouched. The file gets the
    permissions a plain ``open()`` gives (0666 less the umask)."""
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


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8, line ends as given) to ``path`` with :func:`atomic_write`; a path ending in
    ``.gz`` gets gzip data (header time 0, so the same text gives the same bytes). A path that exists
    and is not a regular file (``/dev/stdout``, a named pipe) is written directly: there is no
    earlier content to keep and maybe no folder to put a temporary file in. A folder is an
    ``IsADirectoryError``."""
    path = os.fspath(path)
    data = text.encode("utf-8")
    if path.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if os.path.exists(path) and not os.path.isfile(path):
        with open(path, "wb") as handle:
            handle.write(data)
        return

    def write(tmp: str) -> None:
        with open(tmp, "wb") as handle:
            handle.write(data)

    atomic_write(path, write)
