"""Design files and frames: reading and checking ``query_id, doc_id, pi`` (and a fixed-size design's
strata), and the judgments of a design's pairs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ir_incomplete.data.columns import _ids
from ir_incomplete.data.qrels import Qrels

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = ["read_design", "check_design", "DESIGN_COLUMNS", "DESIGN_KINDS"]

#: the columns of a design
DESIGN_COLUMNS = ("query_id", "doc_id", "pi")
#: the sampling designs a design's settings may name
DESIGN_KINDS = ("poisson", "stratified")


def _plain_value(value: Any) -> Any:
    """A numpy scalar as the Python value (messages show ``1.5``, not ``np.float64(1.5)``)."""
    return value.item() if isinstance(value, np.generic) else value


def read_design(design: Any) -> pd.DataFrame:
    """A design as a DataFrame ``query_id, doc_id, pi`` (plus any other columns, e.g. ``round``), ids as
    ``str``; ``attrs`` keep ``depth``, ``runs``, ``seed`` and the rest of what :func:`sample` recorded.
    Accepts the DataFrame :func:`ir_incomplete.judging.sample` returns or a design file it wrote (a
    tab-separated table whose ``#`` header lines hold the settings)."""
    first_line = None  # file line of the first data row (messages name file lines)
    if isinstance(design, pd.DataFrame):
        frame = design
        attrs = dict(design.attrs)
    else:
        import json

        attrs = {}
        lines: list[str] = []
        with open(design, encoding="utf-8") as handle:
            for no, line in enumerate(handle, 1):
                if line.startswith("#") and not lines:  # settings and comments come before the column line
                    body = line[1:].strip()
                    if body.startswith("design "):
                        try:
                            attrs = json.loads(body[len("design ") :])
                        except ValueError:
                            raise ValueError(
                                f"design file {design!r} line {no}: the settings line is not JSON"
                            ) from None
                    continue
                lines.append(line)
        from io import StringIO

        if not "".join(lines).strip():
            raise ValueError(
                f"design file {str(design)!r} is empty: a design file holds a header line query_id, doc_id, pi "
                f"(tab-separated) and one line per judged pair"
            )
        frame = pd.read_csv(StringIO("".join(lines)), sep="\t", dtype={"query_id": str, "doc_id": str})
        first_line = no - len(lines) + 2

    def row(i: int) -> str:
        return f"design row {i}" if first_line is None else f"design file {str(design)!r} line {first_line + i}"

    missing = [c for c in DESIGN_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"the design has no {missing[0]!r} column; a design has columns {', '.join(DESIGN_COLUMNS)}")
    out = frame.copy()
    out["query_id"] = _ids(frame["query_id"], "design query_id")
    out["doc_id"] = _ids(frame["doc_id"], "design doc_id")
    pi = pd.to_numeric(frame["pi"], errors="coerce").to_numpy(dtype=float)
    flags = frame["pi"].map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
    bad = np.flatnonzero(~(pi > 0) | ~(pi <= 1) | np.isnan(pi) | flags)
    if len(bad):
        i = int(bad[0])
        raise ValueError(
            f"{row(i)}: pi={_plain_value(frame['pi'].iloc[i])!r} for ({out['query_id'].iloc[i]}, "
            f"{out['doc_id'].iloc[i]}) is not an inclusion probability; pi must be in (0, 1]"
        )
    out["pi"] = pi
    dup = out.duplicated(["query_id", "doc_id"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(
            f"{row(i)}: the pair ({out['query_id'].iloc[i]}, {out['doc_id'].iloc[i]}) is listed twice; "
            f"each judged pair appears once with its inclusion probability"
        )
    if "stratum" in out.columns:
        certain = out["stratum"].astype(str).isin(["certain", "judged"]).to_numpy() & (pi != 1.0)
        if certain.any():
            i = int(np.flatnonzero(certain)[0])
            raise ValueError(
                f"{row(i)}: ({out['query_id'].iloc[i]}, {out['doc_id'].iloc[i]}) is in the certainty "
                f"stratum with pi={float(pi[i])!r}; certainty pairs are judged with pi = 1"
            )
    kind = attrs.get("design", "poisson")
    if kind not in DESIGN_KINDS:
        raise ValueError(f"the design's settings say design={kind!r}; choices: {', '.join(DESIGN_KINDS)}")
    if kind == "stratified":
        out["stratum_id"] = _check_strata(out, attrs)
    out.attrs = attrs
    return out


def _check_strata(out: pd.DataFrame, attrs: dict) -> np.ndarray:
    """The ``stratum_id`` of a fixed-size design's rows, checked against ``attrs["strata"]``
    (``[N_h, n_h]`` per stratum): each stratum has ``n_h`` rows with ``pi = n_h/N_h``, ``-1`` rows have
    ``pi = 1``."""
    table = attrs.get("strata")
    try:
        strata = np.asarray(table, dtype=float).reshape(-1, 2)
    except (TypeError, ValueError):
        strata = np.zeros((0, 2))
    if not len(strata) or not np.all(np.isfinite(strata)) or np.any(strata != np.round(strata)):
        raise ValueError(
            f"a stratified design needs its settings' strata, a list of [N_h, n_h] (integers) per stratum; "
            f"got {table!r}"
        )
    size, n = strata[:, 0], strata[:, 1]
    bad = np.flatnonzero((n < 0) | (n > size) | ((n < 2) & (n < size) & (size >= 2)))
    if len(bad):
        h = int(bad[0])
        raise ValueError(
            f"stratum {h}: n_h={int(n[h])} of N_h={int(size[h])} is not a valid sample size; need 0 <= n_h <= N_h "
            f"and n_h >= 2 unless every pair is taken (a stratum's variance needs two pairs)"
        )
    if "stratum_id" not in out.columns:
        raise ValueError("a stratified design has no 'stratum_id' column (the stratum of each row, -1 for certainty)")
    sid = pd.to_numeric(out["stratum_id"], errors="coerce").to_numpy(dtype=float)
    wrong = np.flatnonzero(~np.isfinite(sid) | (sid != np.round(sid)) | (sid < -1) | (sid >= len(strata)))
    if len(wrong):
        i = int(wrong[0])
        raise ValueError(
            f"design row {i}: stratum_id={out['stratum_id'].iloc[i]!r} is not a stratum; choices: -1 (certainty) "
            f"or 0..{len(strata) - 1}"
        )
    sid = sid.astype(np.int64)
    pi = out["pi"].to_numpy(dtype=float)
    rate = np.where(sid >= 0, (n / np.maximum(size, 1.0))[np.maximum(sid, 0)], 1.0)
    off = np.flatnonzero(np.abs(pi - rate) > 1e-9 * rate)
    if len(off):
        i = int(off[0])
        raise ValueError(
            f"design row {i}: pi={float(pi[i])!r} of ({out['query_id'].iloc[i]}, {out['doc_id'].iloc[i]}) disagrees "
            f"with its stratum {int(sid[i])}: n_h/N_h = {float(rate[i])!r}"
        )
    rows = np.bincount(sid[sid >= 0], minlength=len(strata))
    short = np.flatnonzero(rows != n)
    if len(short):
        h = int(short[0])
        raise ValueError(f"stratum {h} has {int(rows[h])} rows in the design, but its settings say n_h={int(n[h])}")
    return sid


def check_design(design: pd.DataFrame) -> pd.DataFrame:
    return read_design(design)


def _grades(judgments: Any, design: pd.DataFrame) -> np.ndarray:
    """The grade of every design pair; a pair without one is an error naming it."""
    qrels = judgments if isinstance(judgments, Qrels) else Qrels.from_any(judgments)
    frame = qrels.to_frame()
    index = pd.MultiIndex.from_arrays([frame["query_id"].astype(str), frame["doc_id"].astype(str)])
    pos = index.get_indexer(pd.MultiIndex.from_arrays([design["query_id"], design["doc_id"]]))
    missing = np.flatnonzero(pos < 0)
    if len(missing):
        i = int(missing[0])
        raise ValueError(
            f"the design's pair ({design['query_id'].iloc[i]}, {design['doc_id'].iloc[i]}) has no judgment "
            f"({len(missing)} of its {len(design)} pairs have none); judge every pair of the design"
        )
    grades = frame["relevance"].to_numpy()[pos].astype(np.int64)
    neg = np.flatnonzero(grades < 0)
    if len(neg):
        i = int(neg[0])
        raise ValueError(
            f"the design's pair ({design['query_id'].iloc[i]}, {design['doc_id'].iloc[i]}) has grade "
            f"{grades[i]} (pooled but unjudged); every sampled pair needs a grade >= 0"
        )
    return grades
