"""The third round of bad inputs at the input layer: tables holding several runs, empty and cut-off files,
pipes, very long ids and predictions files; each gives the right value or one clear error naming the file."""

from __future__ import annotations

import time

import numpy as np
import pytest

from ir_incomplete.data import ids

pa = pytest.importorskip("pyarrow")

_MASK = (1 << 64) - 1


def _reference_hash(text: str) -> int:
    """The UTF-8 hash of :mod:`ir_incomplete.data.ids` written word by word, in plain Python."""
    data = text.encode()
    words = [int.from_bytes(data[i : i + 8].ljust(8, b"\0"), "little") for i in range(0, max(len(data), 1), 8)]
    k_word, k_length = int(ids._K_WORD), int(ids._K_LENGTH)
    h = (words[0] * k_word) & _MASK
    h ^= h >> 29
    for word in words[1:]:
        x = ((word ^ h) * k_word) & _MASK
        h = x ^ (x >> 29)
    h ^= (len(data) * k_length) & _MASK
    for mult in (int(ids._FMIX1), int(ids._FMIX2)):
        h ^= h >> 33
        h = (h * mult) & _MASK
    h ^= h >> 33
    return h - (1 << 64) if h >= 1 << 63 else h


# -- hashing ids: time in proportion to their bytes, the same hashes -----------------------------------------
@pytest.mark.parametrize("n_long", [1, 63, 64, 200])
def test_long_ids_hash_as_the_word_by_word_definition(n_long):
    rng = np.random.default_rng(n_long)
    texts = ["", "a", "é" * 5, "x" * 8, "y" * 9]
    texts += ["".join(map(chr, rng.integers(32, 0x3000, int(rng.integers(9, 400))))) for _ in range(n_long)]
    array = pa.array(texts, type=pa.large_string())
    expected = [_reference_hash(t) for t in texts]
    for values in (array, array.slice(3), pa.chunked_array([array.slice(0, 4), array.slice(4)])):
        start = len(texts) - len(values)
        assert ids.utf8_hashes(values).tolist() == expected[start:]


def test_a_megabyte_id_is_hashed_in_time_proportional_to_its_size():
    # each word of the longest id was one numpy step: 6.5-8 s for a 1 MB id, minutes for 9 MB
    text = "d" + "x" * 4_000_000
    array = pa.array([text, "a", "b" * 20], type=pa.large_string())
    start = time.perf_counter()
    hashes = ids.utf8_hashes(array)
    assert time.perf_counter() - start < 5.0  # about 0.6 s; 30 s and more before
    assert hashes[0] == _reference_hash(text)
