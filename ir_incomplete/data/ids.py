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
_HASH_BLOCK = 1 << 18  # strings hashed per step: temporaries of a few MiB
#: long strings hashed together, one word each per numpy step, while at least this many are left; the
#: last few are finished one at a time (their words extracted at once, mixed in a loop over Python ints),
#: so that hashing costs time in proportion to the bytes hashed, whatever the longest id
_VECTOR_ROWS = 64
_WORD_MASK = (1 << 64) - 1
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
    """``values`` as a pyarrow (chunked) string array when they are Arrow-backed strings (a pyarrow array,
    a pandas ``str``/``string[pyarrow]``/``ArrowDtype`` string column), else ``None``. No copy; nulls are
    kept (the caller refuses them)."""
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
    if isinstance(values, pa.ChunkedArray) and values.num_chunks == 1:
        return values.chunk(0)
    return values


def to_objects(values) -> np.ndarray:
    """An Arrow (chunked) array as a numpy array (strings: an object array of ``str``)."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 0:
            return np.zeros(0, dtype=object)
        return np.concatenate([chunk.to_numpy(zero_copy_only=False) for chunk in values.chunks])
    return values.to_numpy(zero_copy_only=False)


def _take_objects(values, positions: np.ndarray) -> np.ndarray:
    """``values[positions]`` of an Arrow (chunked) string array as an object array: taken chunk by chunk
    (pyarrow's take of a chunked array may first join all its chunks)."""
    import pyarrow as pa

    chunks = getattr(values, "chunks", None)
    if chunks is None or len(chunks) == 1:
        source = values if chunks is None else chunks[0]
        return source.take(pa.array(positions)).to_numpy(zero_copy_only=False)
    ends = np.cumsum([len(c) for c in chunks])
    chunk_of = np.searchsorted(ends, positions, side="right")
    out = np.empty(len(positions), dtype=object)
    for c in np.unique(chunk_of).tolist():
        at = np.flatnonzero(chunk_of == c)
        local = positions[at] - (ends[c] - len(chunks[c]))
        out[at] = chunks[c].take(pa.array(local)).to_numpy(zero_copy_only=False)
    return out


def first_null(values) -> int | None:
    """Row of the first null of an Arrow (chunked) array (``None``: no null)."""
    if values.null_count == 0:
        return None
    return int(np.flatnonzero(to_objects(values.is_null()))[0])


def utf8_hashes(values) -> np.ndarray:
    """64-bit hashes (``int64``) of the UTF-8 bytes of each string of an Arrow (chunked) string array:
    8-byte words read straight from the array's buffers, mixed one word at a time; the same string gives
    the same hash in any array and any process. Equal hashes are candidates only: callers compare the
    ids. Computed in blocks of :data:`_HASH_BLOCK` strings (small temporaries)."""
    out = np.empty(len(values), dtype=np.int64)
    at = 0
    for chunk in getattr(values, "chunks", [values]):
        for start in range(0, len(chunk), _HASH_BLOCK):
            block = chunk.slice(start, _HASH_BLOCK)
            out[at : at + len(block)] = _block_hashes(block)
            at += len(block)
    return out


def _block_hashes(values) -> np.ndarray:
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
    while len(rows) >= _VECTOR_ROWS:  # the strings longer than 8 * chunk bytes: one more word each
        at_rows = at[rows] + chunk
        word = _word(words, at_rows, shift[rows], half[rows], lengths[rows] - 8 * chunk)
        word ^= h[rows]
        word *= _K_WORD
        word ^= word >> _S29
        h[rows] = word
        chunk += 1
        rows = rows[lengths[rows] > 8 * chunk]
    for row in rows.tolist():  # a few long strings left: each finished in one pass over its words
        k = np.arange(chunk, (int(lengths[row]) + 7) // 8, dtype=np.int64)
        ones = np.ones(len(k), dtype=np.uint64)
        h[row] = _mix_words(
            int(h[row]), _word(words, at[row] + k, shift[row] * ones, half[row] * ones, lengths[row] - 8 * k)
        )
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


def _mix_words(h: int, words: np.ndarray) -> int:
    """The hash state ``h`` after mixing in ``words`` in order, as the vectorized loop of
    :func:`_block_hashes` does for one string (a chain: each word depends on the state before it)."""
    k_word = int(_K_WORD)
    for word in words.tolist():
        x = ((word ^ h) * k_word) & _WORD_MASK
        h = x ^ (x >> 29)
    return h


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
    through a permutation (``index``, ``None`` = as stored) and a few moves (``moves = (to, source)``:
    position ``to[j]`` holds the id of position ``source[j]``; ``to`` ascending), so that ordering items
    never moves strings.

    Indexing with an integer array, a boolean mask or a slice gives an object array of ``str`` (only those
    ids become Python objects); ``np.asarray(ids)`` gives all of them (built once)."""

    def __init__(self, source, index: np.ndarray | None = None, moves: tuple | None = None):
        self.source = source
        self.index = index
        self.moves = moves
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
        return {"source": self.source, "index": self.index, "moves": self.moves, "_hashes": None, "_objects": None}

    def _resolve(self, positions: np.ndarray) -> np.ndarray:
        """Positions in the source of the ids at ``positions`` (integers)."""
        if self.moves is not None and len(self.moves[0]) and len(positions):
            to, source = self.moves
            j = np.minimum(np.searchsorted(to, positions), len(to) - 1)
            positions = np.where(to[j] == positions, source[j], positions)
        return positions if self.index is None else self.index[positions]

    def _positions(self, key) -> np.ndarray | slice:
        if isinstance(key, slice):
            if self.index is None and self.moves is None:
                return key
            key = np.arange(*key.indices(len(self)), dtype=np.int64)
        key = np.asarray(key)
        if key.dtype == bool:
            key = np.flatnonzero(key)
        return self._resolve(key)

    def _take(self, positions) -> np.ndarray:
        if not self.is_arrow:
            return self.source[positions]
        if isinstance(positions, slice):
            start, stop, step = positions.indices(len(self.source))
            if step == 1:
                return to_objects(self.source.slice(start, max(stop - start, 0)))
            positions = np.arange(start, stop, step)
        return _take_objects(self.source, np.asarray(positions, dtype=np.int64))

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            i = int(key) + (len(self) if key < 0 else 0)
            return self._take(self._resolve(np.array([i])))[0]
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
            self._objects = self._take(self._positions(slice(None)))
        return self._objects

    def _flat(self) -> np.ndarray | None:
        """The source position of every id (``None``: the source as stored; may be ``index`` itself: read
        only)."""
        if self.index is None and self.moves is None:
            return None
        if self.moves is None:
            return self.index
        return self._resolve(np.arange(len(self), dtype=np.int64))

    def moved(self, to: np.ndarray, source: np.ndarray) -> DocIds:
        """These ids with ``ids[to] = ids[source]`` applied at once (``to`` ascending): a few moves,
        kept as such (no permutation of all positions)."""
        if self.moves is not None:
            index = self._resolve(np.arange(len(self), dtype=np.int64))
            index[to] = index[source]
            return DocIds(self.source, index)
        out = DocIds(self.source, self.index, (np.asarray(to, dtype=np.int64), np.asarray(source, dtype=np.int64)))
        out._hashes = self._hashes
        return out

    def permuted(self, order: np.ndarray) -> DocIds:
        """The ids at positions ``order`` (integer array or boolean mask), without moving any string."""
        order = np.asarray(order)
        if order.dtype == bool:
            order = np.flatnonzero(order)
        out = DocIds(self.source, self._resolve(order))
        out._hashes = self._hashes
        return out

    def hashes(self) -> np.ndarray:
        """:func:`hash_ids` of these ids (the source is hashed once, in its own order)."""
        if self._hashes is None and self.index is None:  # hashed in source order, moved in place
            hashes = hash_ids(self.source)
            if self.moves is None:
                self._hashes = hashes
                return hashes
            to, source = self.moves
            hashes[to] = hashes[source]
            return hashes
        if self._hashes is None:
            self._hashes = hash_ids(self.source)
        flat = self._flat()
        return self._hashes if flat is None else self._hashes[flat]

    def equal_to(self, positions: np.ndarray) -> bool:
        """Whether the id at ``positions[i]`` equals the id at ``i``, for every ``i``."""
        if not self.is_arrow:
            return bool(np.all(self[positions] == self.to_numpy()))
        import pyarrow as pa
        import pyarrow.compute as pc

        mine = self._flat()
        mine = np.arange(len(self)) if mine is None else mine
        theirs = mine[positions]
        same = pc.equal(self.source.take(pa.array(theirs)), self.source.take(pa.array(mine)))
        return bool(pc.all(same).as_py() is not False)

    @staticmethod
    def concat(parts: list[DocIds]) -> DocIds:
        """One :class:`DocIds` of several, in order (Arrow when any part is)."""
        if len(parts) == 1:
            return parts[0]
        if not any(p.is_arrow for p in parts):
            return DocIds(np.concatenate([p.source if p._flat() is None else p.to_numpy() for p in parts]))
        import pyarrow as pa

        chunks: list[Any] = []
        for p in parts:
            if not p.is_arrow:
                source = pa.array(p.to_numpy(), type=pa.large_string())
            else:
                flat = p._flat()
                source = p.source if flat is None else p.source.take(pa.array(flat))
            chunks.extend(getattr(source, "chunks", [source]))
        chunks = [c.cast(pa.large_string()) if pa.types.is_string(c.type) else c for c in chunks]
        return DocIds(pa.chunked_array(chunks, type=pa.large_string()))
