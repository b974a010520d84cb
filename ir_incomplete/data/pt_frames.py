"""Frames of our readers in PyTerrier's column names (:func:`to_pyterrier`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ir_incomplete.data.columns import _ids

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = ["to_pyterrier"]

#: ``ir_measures``' column names (our readers') → PyTerrier's
PYTERRIER_NAMES = {"query_id": "qid", "doc_id": "docno", "relevance": "label"}


def to_pyterrier(frame: Any) -> pd.DataFrame:
    """A run or qrels DataFrame with PyTerrier's column names, for ``pt.Transformer.from_df`` and the
    rest of PyTerrier: ``query_id`` → ``qid``, ``doc_id`` → ``docno``, ``relevance`` → ``label`` (the
    frames of :func:`ir_incomplete.read_trec_run` and :func:`ir_incomplete.read_trec_qrels`; a frame with
    PyTerrier's names already passes unchanged). Ids become ``str`` (a number as its decimal text, as
    every reader of ours reads it). A run (a ``score`` column, no ``rank``) gets PyTerrier's ``rank``:
    0 for the highest score of each query, ties in row order, as ``pt.model.add_ranks``; evaluation
    orders by score (ties: trec_eval's order), not by this column. Other columns are kept; rows keep
    their order. A new frame: ``frame`` is not modified.

    ``pt.Experiment`` takes the qrels of :func:`ir_incomplete.read_trec_qrels` as they are (see
    :mod:`ir_incomplete.integration`); ``pt.Transformer.from_df`` needs this conversion of a run.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(
            f"to_pyterrier takes a DataFrame (a run or qrels, e.g. of ir_incomplete.read_trec_run), not "
            f"{type(frame).__name__}"
        )
    renames = {old: new for old, new in PYTERRIER_NAMES.items() if old in frame.columns and new not in frame.columns}
    out = frame.rename(columns=renames)
    for name in ("qid", "docno"):
        if name not in out.columns:
            raise ValueError(
                f"to_pyterrier: the frame has no {name!r} column (nor {_ours(name)!r}); columns: {list(frame.columns)}"
            )
        out[name] = _ids(out[name], f"{name} column")
    if "score" in out.columns and "rank" not in out.columns:
        scores = pd.to_numeric(out["score"], errors="raise")
        ranks = scores.groupby(out["qid"].to_numpy(), sort=False).rank(ascending=False, method="first")
        out["rank"] = ranks.to_numpy(dtype=np.int64) - 1
    return out


def _ours(name: str) -> str:
    return next(old for old, new in PYTERRIER_NAMES.items() if new == name)
