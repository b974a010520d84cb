"""Finished grid cells of a robustness study on disk, so that an interrupted study can be resumed.

A *cell folder* holds ``study.json`` (what the study was run with: every parameter and a digest of the
judgments and of every run) and one ``cell-L<level index>-R<repeat>[-G<group index>].npz`` per finished
cell: the cell's ``[measures × runs]`` aggregates and ``[measures × runs × topics]`` per-topic scores,
exactly (float64), with the cell's key. Every file is written atomically (a temporary file, flushed to
disk, renamed), so a file under a final name is always complete; a cell file that cannot be read is
computed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import threading
import zipfile
from typing import Any

import numpy as np
import pandas as pd

from ir_incomplete.data.files import atomic_write

__all__ = ["CellStore", "fingerprint"]

STUDY = "study.json"
FORMAT = 1


def _digest(frame: pd.DataFrame) -> str:
    """Digest of a table's rows, independent of their order (pandas' stable row hashes, sorted)."""
    rows = np.sort(pd.util.hash_pandas_object(frame, index=False).to_numpy())
    return hashlib.sha256(rows.tobytes()).hexdigest()


def _plain(value: Any) -> Any:
    """``value`` as JSON would give it back (tuples as lists, numpy numbers as numbers, keys as strings)."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def fingerprint(run_map: dict[str, pd.DataFrame], qrels: pd.DataFrame, parameters: dict[str, Any]) -> dict[str, Any]:
    """What a study's results depend on: ``parameters`` and digests of the judgments and every run."""
    from ir_incomplete._version import __version__

    return _plain(
        {
            "format": FORMAT,
            "version": __version__,
            **parameters,
            "qrels": _digest(qrels),
            "runs": {name: _digest(run) for name, run in run_map.items()},
        }
    )


def _differences(there: dict[str, Any], here: dict[str, Any]) -> list[str]:
    out = []
    for key in sorted(set(there) | set(here), key=lambda k: list(here).index(k) if k in here else len(here)):
        a, b = there.get(key), here.get(key)
        if a == b:
            continue
        if key == "qrels":
            out.append("qrels (other judgments)")
        elif key == "runs" and isinstance(a, dict) and isinstance(b, dict):
            only_there = sorted(set(a) - set(b))
            only_here = sorted(set(b) - set(a))
            changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])
            parts = [
                f"{what} {names[:5]}"
                for what, names in (("only there:", only_there), ("only here:", only_here), ("changed:", changed))
                if names
            ]
            out.append(f"runs ({'; '.join(parts)})")
        else:
            out.append(f"{key} ({json.dumps(a)} there, {json.dumps(b)} here)")
    return out


class CellStore:
    """The cell folder of one study (see the module docstring).

    ``resume=False``: a new study; the folder is created if needed and must not hold a study yet.
    ``resume=True``: the folder must hold a study run with the same ``fingerprint`` (else a ValueError
    names every difference); its finished cells are loaded instead of computed.
    """

    def __init__(self, folder: str | os.PathLike[str], fingerprint: dict[str, Any], resume: bool, name: str) -> None:
        self.folder = os.fspath(folder)
        self.saved = 0
        study = os.path.join(self.folder, STUDY)
        if resume:
            if not os.path.isdir(self.folder):
                raise ValueError(f"{name}={self.folder!r}: no such folder (nothing to resume)")
            try:
                with open(study, encoding="utf-8") as handle:
                    there = json.load(handle)
            except FileNotFoundError:
                raise ValueError(f"{name}={self.folder!r} holds no study to resume (no {STUDY})") from None
            except (OSError, ValueError) as exc:
                raise ValueError(f"{name}={self.folder!r}: cannot read {STUDY}: {exc}") from None
            differ = _differences(there, fingerprint) if isinstance(there, dict) else ["everything"]
            if differ:
                raise ValueError(
                    f"{name}={self.folder!r} holds a study run with other parameters; it cannot be resumed "
                    f"with these: {'; '.join(differ)}"
                )
            return
        if os.path.exists(study) or (os.path.isdir(self.folder) and any(_is_cell(f) for f in os.listdir(self.folder))):
            raise ValueError(
                f"checkpoint={self.folder!r} already holds cells of a study: pass resume= to continue it, or "
                f"give an empty folder"
            )
        os.makedirs(self.folder, exist_ok=True)
        text = json.dumps(fingerprint, indent=2, sort_keys=False) + "\n"

        def write(tmp: str) -> None:
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.write(text)

        atomic_write(study, write)

    def path(self, key: tuple[int, int, int | None]) -> str:
        level_index, repeat, group_index = key
        group = "" if group_index is None else f"-G{group_index}"
        return os.path.join(self.folder, f"cell-L{level_index}-R{repeat}{group}.npz")

    def load(self, key: tuple[int, int, int | None], seed: int, n_measures: int, n_topics: int):
        """The finished cell ``key`` as ``(means, per_topic)``, or None when it is not on disk (or not
        readable, or not this cell)."""
        try:
            # the file is opened here, not by np.load, which leaves it open when it is not a zip file
            with open(self.path(key), "rb") as handle, np.load(handle, allow_pickle=False) as data:
                means, per_topic = data["means"], data["per_topic"]
                stored, stored_seed = data["key"], data["seed"]
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return None
        if (
            stored.shape != (3,)
            or stored.tolist() != _key_array(key).tolist()
            or stored_seed.tolist() != [seed]
            or means.ndim != 2
            or means.shape[0] != n_measures
            or per_topic.shape != means.shape + (n_topics,)
        ):
            return None
        return means.astype(np.float64, copy=False), per_topic.astype(np.float64, copy=False)

    def save(self, key: tuple[int, int, int | None], seed: int, result) -> None:
        means, per_topic = result

        def write(tmp: str) -> None:
            with open(tmp, "wb") as handle:
                np.savez(
                    handle, means=means, per_topic=per_topic, key=_key_array(key), seed=np.array([seed], np.uint64)
                )

        with _interrupt_deferred():  # Ctrl-C lands before or after: the cell is on disk and counted, or neither
            atomic_write(self.path(key), write)
            self.saved += 1


@contextlib.contextmanager
def _interrupt_deferred():
    """Hold a Ctrl-C back while the block runs and deliver it when the block ends. Python runs signal
    handlers in the main thread whichever thread the signal reaches, so the handler is swapped there for
    one that only records the signal (elsewhere the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if pending:
            if callable(previous):  # the default one raises KeyboardInterrupt
                previous(signal.SIGINT, None)
            elif previous == signal.SIG_DFL:
                raise KeyboardInterrupt


def _key_array(key: tuple[int, int, int | None]) -> np.ndarray:
    return np.array([key[0], key[1], -1 if key[2] is None else key[2]], dtype=np.int64)


def _is_cell(name: str) -> bool:
    return name.startswith("cell-") and name.endswith(".npz")
