"""Ids without one Python object per item: Arrow string columns, their hashes, and :class:`DocIds`.

When pyarrow is installed, document ids are hashed from their UTF-8 bytes by a vectorized 64-bit hash
(:func:`utf8_hashes`), the same in every process; ids given as Arrow strings (pyarrow tables, parquet,
pandas ``str`` columns, TREC files read by pyarrow) are never turned into ``str`` objects on the way from
file to code matrix. Without pyarrow, ids are ``str`` objects hashed by Python's ``hash``. pyarrow is
imported lazily, only when it is used.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import numpy as np

_HASH_PROBE = "ir_incomplete.data: hash seed probe"  # hash() of str differs between processes: detect it
_UTF8_HASH_PROBE = 0x5EED  # the UTF-8 hash is the same in every process
_ARROW: bool | None = None

# constants of the UTF-8 hash: a multiply-and-mix over 8-byte words (murmur3's 64-bit finalizer)
_K_WORD = np.uint64(0x9E3779B97F4A7C15)
_K_LENGTH = np.uint64(0xC2B2AE3D27D4EB4F)
_FMIX1 = np.uint64(0xFF51AFD7ED558CCD)
_FMIX2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_S29 = np.uint64(29)
_BYTE_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [2**64 - 1], dtype=np.uint64)


def arrow_available() -> bool:
    """Whether pyarrow can be imported (checked once, without importing it)."""
    global _ARROW
    if _ARROW is None:
        _ARROW = importlib.util.find_spec("pyarrow") is not None
    return _ARROW


def hash_probe() -> int:
    """A number that changes exactly when document hashes of this process differ from those of a process
    that computed another number (Python's ``str`` hash is salted per process; the UTF-8 hash is not)."""
    return _UTF8_HASH_PROBE if arrow_available() else hash(_HASH_PROBE)


def is_arrow(values: Any) -> bool:
    """Whether ``values`` is a pyarrow ``Array`` or ``ChunkedArray`` (never imports pyarrow)."""
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(values, (pa.Array, pa.ChunkedArray))


def is_arrow_table(data: Any) -> bool:
    """Whether ``data`` is a pyarrow ``Table`` (never imports pyarrow)."""
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(data, pa.Table)


def arrow_strings(values: Any):
    """``values`` as one pyarrow ``large_string`` array when they are Arrow-backed strings (a pyarrow array,
    a pandas ``str``/``string[pyarrow]``/``ArrowDtype`` string column), else ``None``. No copy of the
    characters; nulls are kept (the caller refuses them)."""
    pa = sys.modules.get("pyarrow")
    if pa is None:
        return None
    if not is_arrow(values):
        dtype = getattr(values, "dtype", None)
        storage = getattr(dtype, "storage", None)
        arrow_dtype = getattr(dtype, "pyarrow_dtype", None)
        if storage != "pyarrow" and arrow_dtype is None:
            return None
        values = pa.array(getattr(values, "array", values))
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        return None
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
        if isinstance(values, pa.ChunkedArray):  # pyarrow < 12 without chunks
            values = pa.array([], type=values.type)
    return values.cast(pa.large_string()) if pa.types.is_string(values.type) else values


def first_null(values) -> int | None:
    """Row of the first null of an Arrow array (``None``: no null)."""
    if values.null_count == 0:
        return None
    return int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])


def utf8_hashes(values) -> np.ndarray:
    """64-bit hashes (``int64``) of the UTF-8 bytes of each string of an Arrow string array: 8-byte words
    read straight from the array's buffers, mixed one word at a time; the same string gives the same
    hash in any array and any process. Equal hashes are candidates only: callers compare the ids."""
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    import pyarrow as pa

    buffers = values.buffers()
    offset_type = np.int64 if pa.types.is_large_string(values.type) else np.int32
    offsets = np.frombuffer(buffers[1], dtype=offset_type)[values.offset : values.offset + n + 1].astype(np.int64)
    lo, hi = int(offsets[0]), int(offsets[-1])
    padded = np.zeros((hi - lo + 23) // 8 * 8, dtype=np.uint8)  # ≥ 16 zero bytes after the last string
    if hi > lo:
        padded[: hi - lo] = np.frombuffer(buffers[2], dtype=np.uint8)[lo:hi]
    words = padded.view("<u8")
    starts = offsets[:-1] - lo
    lengths = offsets[1:] - offsets[:-1]
    shift = ((starts & 7) << 3).astype(np.uint64)  # the same for every word of a string
    half = np.uint64(32) - (shift >> np.uint64(1))  # x << (64 - shift) as two shifts: never a shift by 64
    at = starts >> 3
    h = _word(words, at, shift, half, lengths)
    h *= _K_WORD
    h ^= h >> _S29
    rows, chunk = np.flatnonzero(lengths > 8), 1
    while len(rows):  # the strings longer than 8 * chunk bytes: one more word each
        at_rows = at[rows] + chunk
        word = _word(words, at_rows, shift[rows], half[rows], lengths[rows] - 8 * chunk)
        word ^= h[rows]
        word *= _K_WORD
        word ^= word >> _S29
        h[rows] = word
        chunk += 1
        rows = rows[lengths[rows] > 8 * chunk]
    h ^= lengths.astype(np.uint64) * _K_LENGTH
    return _fmix(h).view(np.int64)


def _word(words: np.ndarray, at: np.ndarray, shift: np.ndarray, half: np.ndarray, left: np.ndarray) -> np.ndarray:
    """The (up to) 8 bytes of each string at word ``at`` (shifted by ``shift`` bits), its bytes past the
    string's end (``left``: bytes left from here) zeroed."""
    word = words[at]
    word >>= shift
    high = words[at + 1]
    high <<= half
    high <<= half
    word |= high
    word &= _BYTE_MASKS[np.minimum(left, 8)]
    return word


def _fmix(h: np.ndarray) -> np.ndarray:
    h ^= h >> _S33
    h *= _FMIX1
    h ^= h >> _S33
    h *= _FMIX2
    h ^= h >> _S33
    return h


def hash_ids(ids) -> np.ndarray:
    """64-bit hashes of ids (:class:`DocIds`, an object array of ``str`` or Arrow strings): the UTF-8 hash
    when pyarrow is installed, else Python's ``hash``."""
    if isinstance(ids, DocIds):
        return ids.hashes()
    if is_arrow(ids):
        return utf8_hashes(ids)
    if arrow_available() and len(ids):
        import pyarrow as pa

        return utf8_hashes(pa.array(ids, type=pa.large_string()))
    return np.fromiter(map(hash, ids), dtype=np.int64, count=len(ids))


class DocIds:
    """Document ids of ranked items: an object array of ``str`` or an Arrow string array (``source``), read
    through a permutation (``index``, ``None`` = as stored), so that ordering items never moves strings.

    Indexing with an integer array, a boolean mask or a slice gives an object array of ``str`` (only those
    ids become Python objects); ``np.asarray(ids)`` gives all of them (built once)."""

    def __init__(self, source, index: np.ndarray | None = None):
        self.source = source
        self.index = index
        self._hashes: np.ndarray | None = None  # of the source, in source order
        self._objects: np.ndarray | None = None

    @property
    def is_arrow(self) -> bool:
        return not isinstance(self.source, np.ndarray)

    def __len__(self) -> int:
        return len(self.source) if self.index is None else len(self.index)

    def __repr__(self) -> str:
        return f"DocIds({len(self)} ids{', Arrow' if self.is_arrow else ''})"

    def __getstate__(self):
        return {"source": self.source, "index": self.index, "_hashes": None, "_objects": None}

    def _positions(self, key) -> np.ndarray | slice:
        if isinstance(key, slice):
            return key if self.index is None else self.index[key]
        key = np.asarray(key)
        if key.dtype == bool:
            key = np.flatnonzero(key)
        return key if self.index is None else self.index[key]

    def _take(self, positions) -> np.ndarray:
        if not self.is_arrow:
            return self.source[positions]
        if isinstance(positions, slice):
            start, stop, step = positions.indices(len(self.source))
            if step == 1:
                return self.source.slice(start, max(stop - start, 0)).to_numpy(zero_copy_only=False)
            positions = np.arange(start, stop, step)
        import pyarrow as pa

        return self.source.take(pa.array(np.asarray(positions, dtype=np.int64))).to_numpy(zero_copy_only=False)

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            i = int(key) + (len(self) if key < 0 else 0)
            return self._take(np.array([i]))[0] if self.index is None else self._take(self.index[[i]])[0]
        if self._objects is not None:
            return self._objects[key]
        return self._take(self._positions(key))

    def __iter__(self):
        return iter(self.to_numpy())

    def __array__(self, dtype=None, copy=None):
        out = self.to_numpy()
        return out if dtype is None else out.astype(dtype)

    def to_numpy(self) -> np.ndarray:
        """All ids, an object array of ``str`` (built once)."""
        if self._objects is None:
            self._objects = self._take(slice(None)) if self.index is None else self._take(self.index)
        return self._objects

    def permuted(self, order: np.ndarray) -> DocIds:
        """The ids at positions ``order`` (integer array or boolean mask), without moving any string."""
        order = np.asarray(order)
        if order.dtype == bool:
            order = np.flatnonzero(order)
        out = DocIds(self.source, order if self.index is None else self.index[order])
        out._hashes = self._hashes
        return out

    def hashes(self) -> np.ndarray:
        """:func:`hash_ids` of these ids (the source is hashed once, in its own order)."""
        if self._hashes is None:
            self._hashes = hash_ids(self.source)
        return self._hashes if self.index is None else self._hashes[self.index]

    def equal_to(self, positions: np.ndarray) -> bool:
        """Whether the id at ``positions[i]`` equals the id at ``i``, for every ``i``."""
        if not self.is_arrow:
            return bool(np.all(self[positions] == self.to_numpy()))
        import pyarrow as pa
        import pyarrow.compute as pc

        mine = np.arange(len(self)) if self.index is None else self.index
        theirs = mine[positions]
        same = pc.equal(self.source.take(pa.array(theirs)), self.source.take(pa.array(mine)))
        return bool(pc.all(same).as_py() is not False)

    @staticmethod
    def concat(parts: list[DocIds]) -> DocIds:
        """One :class:`DocIds` of several, in order (Arrow when any part is)."""
        if len(parts) == 1:
            return parts[0]
        if not any(p.is_arrow for p in parts):
            return DocIds(np.concatenate([p.to_numpy() if p.index is not None else p.source for p in parts]))
        import pyarrow as pa

        arrays = []
        for p in parts:
            if not p.is_arrow:
                arrays.append(pa.array(p.to_numpy(), type=pa.large_string()))
            elif p.index is None:
                arrays.append(p.source)
            else:
                arrays.append(p.source.take(pa.array(p.index)))
        return DocIds(pa.concat_arrays(arrays) if arrays else pa.array([], type=pa.large_string()))
