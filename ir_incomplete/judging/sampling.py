"""Stratified samples of a pool, in the form NIST's ``sample_eval`` and our sampled estimators read.

:func:`stratified_sample` pools the runs to some depth, puts each pooled document in the stratum of the
best rank any run gives it, and draws a uniform random sample of fixed size from every (topic, stratum)
cell. :func:`to_prels` joins the judgments of the sampled documents and writes sample_eval's 5-column
file (``query_id 0 doc_id stratum relevance``; −1 = pooled in that stratum but not sampled), which
``xinfAP``, ``infNDCG`` and ``iP`` read (the inclusion rate of a stratum is n_c / N_c, its sampled over
its pooled documents, as in ``../shared/spec/SAMPLED.md``).

The TREC Clinical Decision Support and Precision Medicine designs (Yilmaz, Kanoulas & Aslam, SIGIR
2008: a fully judged top stratum and sampled deeper strata, pooled to depth 100) are lists of strata
such as ``[(1, 15, 1.0), (16, 100, 0.3)]``; any number of strata, any rates in (0, 1], and a pool from
some runs only (``pool_runs``) can be given.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ir_incomplete.data.columns import _ids
from ir_incomplete.judging._candidates import Candidates, _judgment_frame, check_positive_int

__all__ = ["stratified_sample", "to_prels", "check_strata", "DEFAULT_STRATA", "MISSING_POLICIES"]

#: a fully judged top 10 and a 20 % sample of ranks 11–100
DEFAULT_STRATA = ((1, 10, 1.0), (11, 100, 0.2))
#: what :func:`to_prels` does with a sampled document that the judgments lack
MISSING_POLICIES = ("error", "nonrelevant")


def check_strata(strata: Any) -> list[tuple[int, int | None, float]]:
    """Validated strata ``[(first rank, last rank or None, rate), ...]``.

    Ranks are 1-based and inclusive; the first stratum starts at rank 1, each next one right after the
    previous one ends (no overlap, no gap); only the last may end at ``None`` (every deeper rank); rates
    are in (0, 1]. ``ValueError`` names the offending stratum.
    """
    if isinstance(strata, (str, bytes)) or not isinstance(strata, Iterable):
        raise ValueError(f"strata={strata!r} is not a list of (first_rank, last_rank, rate) triples")
    out: list[tuple[int, int | None, float]] = []
    items = list(strata)
    if not items:
        raise ValueError("strata is empty; give at least one (first_rank, last_rank, rate) triple, e.g. (1, 100, 1.0)")
    for i, item in enumerate(items):
        label = f"stratum {i + 1} {tuple(item) if isinstance(item, (tuple, list)) else item!r}"
        if isinstance(item, (str, bytes)) or not isinstance(item, (tuple, list)) or len(item) != 3:
            raise ValueError(f"{label} is not a (first_rank, last_rank, rate) triple")
        lo, hi, rate = item
        lo = check_positive_int(lo, f"{label}: first_rank", " (1-based rank)")
        if hi is None:
            if i != len(items) - 1:
                raise ValueError(f"{label}: only the last stratum may be open-ended (last_rank=None)")
        else:
            hi = check_positive_int(hi, f"{label}: last_rank", " (1-based rank)")
            if hi < lo:
                raise ValueError(f"{label}: last_rank {hi} is before first_rank {lo}")
        if isinstance(rate, (bool, np.bool_)) or not isinstance(rate, (int, float, np.integer, np.floating)):
            raise ValueError(f"{label}: rate {rate!r} is not a number; expected 0 < rate <= 1")
        if not (0.0 < float(rate) <= 1.0):
            raise ValueError(f"{label}: rate {rate!r} is out of range; expected 0 < rate <= 1")
        if i == 0 and lo != 1:
            raise ValueError(
                f"{label} starts at rank {lo}: the first stratum must start at rank 1 (ranks 1–{lo - 1} "
                f"would belong to no stratum)"
            )
        if i > 0:
            prev_hi = int(out[-1][1] or 0)  # only the last stratum is open-ended (checked above)
            if lo <= prev_hi:
                raise ValueError(
                    f"{label} overlaps stratum {i} (ranks {out[-1][0]}–{prev_hi}): it must start at rank {prev_hi + 1}"
                )
            if lo > prev_hi + 1:
                raise ValueError(
                    f"{label} leaves a gap after stratum {i} (ranks {prev_hi + 1}–{lo - 1} belong to no "
                    f"stratum): it must start at rank {prev_hi + 1}"
                )
        out.append((lo, hi, float(rate)))
    return out


def _check_seed(seed: Any) -> np.random.Generator:
    if seed is None:
        raise ValueError("seed=None would not be reproducible; give an integer seed (e.g. seed=0)")
    from ir_incomplete.robustness.degrade import _rng

    return _rng(seed)


def _warn_unsampled(size: np.ndarray, want: np.ndarray, topic_ids: np.ndarray, strata: list) -> None:
    """A ``UserWarning`` naming the (query, stratum) cells that hold pooled documents but none sampled
    (possible with ``min_sampled=0``): the sampled estimators learn nothing of such a stratum."""
    empty = np.flatnonzero((size > 0) & (want == 0))
    if len(empty) == 0:
        return
    n_strata = len(strata)
    shown = ", ".join(
        f"query {topic_ids[c // n_strata]!r} stratum {c % n_strata + 1} ({int(size[c])} pooled)" for c in empty[:5]
    )
    more = f", … ({len(empty)} in all)" if len(empty) > 5 else ""
    warnings.warn(
        f"min_sampled=0 leaves {len(empty)} (query, stratum) cell(s) with pooled documents but none sampled: "
        f"{shown}{more}; xinfAP, infNDCG and iP count no relevant document in such a stratum (sample_eval's "
        f"convention), so they may underestimate; use min_sampled >= 1 to sample every stratum",
        UserWarning,
        stacklevel=3,
    )


def stratified_sample(
    runs: Any,
    strata: Sequence[tuple[int, int | None, float]] = DEFAULT_STRATA,
    seed: int | Sequence[int] | np.random.SeedSequence | None = None,
    *,
    pool_runs: Iterable[str] | None = None,
    min_sampled: int = 1,
    score_precision: str = "float32",
) -> pd.DataFrame:
    """A stratified random sample of the runs' pool.

    A pair (query, document) is pooled when some contributing run ranks it within the strata (at most
    the last stratum's last rank; no limit when it is ``None``); its stratum is that of the *best*
    (smallest, 1-based) rank any contributing run gives it. In every (topic, stratum) cell with N pooled
    documents, n = round_half_up(rate · N) documents, raised to ``min_sampled`` (never above N), are
    drawn uniformly without replacement: a sample of fixed size, so the inclusion rate is n / N, the
    rate sample_eval reads from the file. ``rate=1`` judges the whole stratum.

    Parameters
    ----------
    runs
        Anything :func:`ir_incomplete.evaluate` accepts, or :class:`~ir_incomplete.judging.Candidates`.
    strata
        ``[(first_rank, last_rank, rate), ...]`` (see :func:`check_strata`: contiguous from rank 1,
        rates in (0, 1]).
    seed
        Required (an integer, a sequence of integers or a ``numpy.random.SeedSequence``): the same runs,
        strata and seed give the same sample bit for bit, whatever the order of the runs.
    pool_runs
        Runs that form the pool (all by default).
    min_sampled
        At least this many documents per non-empty cell (default 1, so that every stratum has an
        estimate); 0 allows empty samples in sparse cells, with a ``UserWarning`` naming the first such
        (query, stratum) cells: the sampled estimators (``xinfAP``, ``infNDCG``, ``iP``) count no relevant
        document in a stratum of which nothing is judged.

    Returns
    -------
    DataFrame, one row per pooled document, sorted by query (natural order) and document id:
    ``query_id, doc_id, stratum`` (1, 2, … in the order of ``strata``), ``rank`` (the best rank),
    ``sampled`` (bool). ``attrs``: ``strata``, ``seed``.
    """
    from ir_incomplete.robustness.degrade import _rank_within, round_half_up

    checked = check_strata(strata)
    rng = _check_seed(seed)
    if isinstance(min_sampled, (bool, np.bool_)) or not isinstance(min_sampled, (int, np.integer)) or min_sampled < 0:
        raise ValueError(f"min_sampled={min_sampled!r} is not valid; expected an integer >= 0")
    candidates = runs if isinstance(runs, Candidates) else Candidates(runs, score_precision)
    best = candidates.best_rank(candidates.run_mask(pool_runs)) + 1  # 1-based; 0 = not retrieved
    last = checked[-1][1]
    pooled = (best >= 1) & ((best <= last) if last is not None else True)
    pairs = np.flatnonzero(pooled)
    bounds = np.array([lo for lo, _, _ in checked], dtype=np.int64)
    stratum = np.searchsorted(bounds, best[pairs], side="right") - 1  # 0-based stratum of each pooled pair
    rates = np.array([rate for _, _, rate in checked])
    topic = candidates.pair_topic[pairs]
    n_strata = len(checked)
    cell = topic * n_strata + stratum
    size = np.bincount(cell, minlength=candidates.n_topics * n_strata)
    want = np.minimum(size, np.maximum(round_half_up(rates[np.arange(len(size)) % n_strata] * size), min_sampled))
    _warn_unsampled(size, want, candidates.topic_ids, checked)
    keys = rng.random(len(pairs))  # one number per pooled pair, in canonical pair order
    sampled = _rank_within(cell, keys) < want[cell]
    out = candidates.frame(pairs, stratum=stratum + 1, rank=best[pairs], sampled=sampled)
    out.attrs.update({"strata": checked, "seed": seed if isinstance(seed, (int, np.integer)) else repr(seed)})
    return out


def to_prels(
    sample: pd.DataFrame,
    judgments: Any,
    path: str | os.PathLike | None = None,
    *,
    missing: str = "error",
    header: str | None = None,
) -> pd.DataFrame:
    """sample_eval's sampled qrels ("prels") of a :func:`stratified_sample` and the judgments of its
    sampled documents.

    Every pooled document of ``sample`` gets a line: sampled documents their grade from ``judgments``,
    the others −1 (pooled in that stratum but not sampled). Judgments of documents outside the sample
    are not used (their inclusion probability is unknown). A sampled document without a judgment is an
    error naming it (``missing="error"``), or counts as not relevant, grade 0 (``"nonrelevant"``, e.g.
    when the judgments are a complete qrels that leaves out non-relevant documents).

    Returns ``query_id, doc_id, stratum, relevance`` (the form :func:`ir_incomplete.evaluate` reads as
    sampled qrels); with ``path`` also writes ``query_id 0 doc_id stratum relevance`` lines there
    (``header``: a first comment line starting with ``#``; :func:`ir_incomplete.read_trec_qrels` does not
    skip comment lines, so remove it before reading the file, e.g. ``grep -v '^#' prels.txt``).
    """
    need = {"query_id", "doc_id", "stratum", "sampled"}
    if not isinstance(sample, pd.DataFrame) or not need <= set(sample.columns):
        found = list(sample.columns) if isinstance(sample, pd.DataFrame) else type(sample).__name__
        raise ValueError(f"sample must be a stratified_sample() DataFrame with columns {sorted(need)}; got {found}")
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing={missing!r} is not valid; choices: {', '.join(MISSING_POLICIES)}")
    frame = _judgment_frame(judgments, "judgments")
    frame = frame[frame["relevance"] >= 0]
    grades = pd.Series(
        frame["relevance"].to_numpy(dtype=np.int64),
        index=pd.MultiIndex.from_arrays([frame["query_id"], frame["doc_id"]]),
    )
    qids = _ids(sample["query_id"], "sample query_id")  # as every input's ids: 1.0 is "1"
    dids = _ids(sample["doc_id"], "sample doc_id")
    sampled = sample["sampled"].to_numpy(dtype=bool)
    found_grades = grades.reindex(pd.MultiIndex.from_arrays([qids, dids])).to_numpy(dtype=np.float64)
    lacking = sampled & np.isnan(found_grades)
    if lacking.any() and missing == "error":
        i = int(np.flatnonzero(lacking)[0])
        raise ValueError(
            f"{int(lacking.sum())} sampled document(s) have no judgment, first: query {qids[i]!r}, document "
            f"{dids[i]!r}; judge every sampled document, or pass missing='nonrelevant' to count them as grade 0"
        )
    relevance = np.where(sampled, np.nan_to_num(found_grades, nan=0.0), -1).astype(np.int64)
    out = pd.DataFrame(
        {
            "query_id": pd.Series(qids, dtype=object),
            "doc_id": pd.Series(dids, dtype=object),
            "stratum": sample["stratum"].astype(str).to_numpy(dtype=object),
            "relevance": relevance,
        }
    )
    if path is not None:
        with open(path, "w") as handle:
            if header is not None:
                handle.write(header if header.endswith("\n") else header + "\n")
            handle.writelines(
                f"{q} 0 {d} {s} {r}\n"
                for q, d, s, r in zip(out["query_id"], out["doc_id"], out["stratum"], relevance, strict=True)
            )
    return out
