"""Design files and frames: reading, checking and writing ``query_id, doc_id, pi`` (and a fixed-size
design's strata), and the judgments of a design's pairs (one qrels input or several, combined)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ir_incomplete.data.columns import _ids
from ir_incomplete.data.ids import is_arrow_table
from ir_incomplete.data.qrels import Qrels

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = [
    "read_design",
    "write_design",
    "design_text",
    "read_judgments",
    "check_design",
    "DESIGN_COLUMNS",
    "DESIGN_KINDS",
]

#: the columns of a design
DESIGN_COLUMNS = ("query_id", "doc_id", "pi")
#: the sampling designs a design's settings may name
DESIGN_KINDS = ("poisson", "stratified")


def _plain_value(value: Any) -> Any:
    """A numpy scalar as the Python value (messages show ``1.5``, not ``np.float64(1.5)``)."""
    return value.item() if isinstance(value, np.generic) else value


#: the settings' key of the rows' digest (:func:`rows_digest`), the file's record like ``rows``
ROWS_DIGEST = "rows_sha256"


def rows_digest(design: pd.DataFrame) -> str:
    """SHA-256 of a design's rows in the order of (``query_id``, ``doc_id``) as text: one line
    ``query_id \t doc_id \t pi \t stratum \t stratum_id`` each (``pi`` as :meth:`float.hex`, exact; a
    column the design lacks as an empty field). The order of the rows does not change it; a pi, a pair,
    a stratum or a row added or removed does."""
    import hashlib

    cols = [design["query_id"].astype(str), design["doc_id"].astype(str)]
    pi = pd.to_numeric(design["pi"], errors="coerce").to_numpy(dtype=float)
    cols.append(pd.Series([float(v).hex() for v in pi], index=design.index, dtype=object))
    for extra in ("stratum", "stratum_id"):
        cols.append(design[extra].astype(str) if extra in design.columns else pd.Series("", index=design.index))
    table = pd.concat(cols, axis=1, keys=range(len(cols))).sort_values([0, 1], kind="stable")
    text = table[0].str.cat([table[i] for i in range(1, len(cols))], sep="\t")
    return hashlib.sha256("".join(line + "\n" for line in text).encode("utf-8")).hexdigest()


def read_design(design: Any) -> pd.DataFrame:
    """A design as a DataFrame ``query_id, doc_id, pi`` (plus any other columns, e.g. ``round``), ids as
    ``str``; ``attrs`` keep ``depth``, ``runs``, ``seed`` and the rest of what :func:`sample` recorded.
    Accepts the DataFrame :func:`ir_incomplete.judging.sample` returns or a design file
    :func:`write_design` wrote (a tab-separated table whose ``#`` header lines hold the settings).

    A file is opened as every reader of the package opens one (a ``.gz`` path as gzip, a UTF-8 byte
    order mark skipped, a named pipe read once). Ids are read as the text of the file: ``NA``, ``null``,
    ``None``, ``nan`` are ids, not missing values. Checks, each a ``ValueError`` naming the file and line:

    * every line after the column line has the column line's number of tab-separated fields (a line
      cut off, or with a field more);
    * when the settings record ``rows`` (every file :func:`write_design` writes does), the file holds
      that many rows (fewer: it was cut off at a line end) and its last line ends with a newline (else
      it was cut off inside that line: a ``pi`` may have lost digits). ``rows`` is the file's, not a
      setting: it is not kept in ``attrs``. A file without it (an older or hand-made one) is read
      without these two checks;
    * when the settings record ``rows_sha256`` (:func:`rows_digest`; every file :func:`write_design`
      writes does), the rows read have that digest: a pi, a pair, a stratum changed by hand or a row
      deleted is refused (the order of the rows may change). Like ``rows``, not kept in ``attrs``;
    * ``pi`` in (0, 1], each pair once, certainty rows with ``pi = 1``;
    * rows that carry ``stratum_id`` (a fixed-size stratified design) need the settings
      ``design="stratified"`` and ``strata``: without them the design would be estimated as a Poisson
      one, with the wrong variance.
    """
    name = None  # the file's name in messages (None: a DataFrame)
    line_of: list[int] = []  # file line of each data row
    digest = None  # the rows' digest the file records
    if isinstance(design, pd.DataFrame):
        frame = design
        attrs = dict(design.attrs)
        attrs.pop("rows", None)
        attrs.pop(ROWS_DIGEST, None)
    else:
        frame, attrs, name, line_of = _read_design_file(design)
        digest = attrs.pop(ROWS_DIGEST, None)

    def row(i: int) -> str:
        return f"design row {i}" if name is None else f"design file {name!r} line {line_of[i]}"

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
    kind = attrs.get("design")
    if kind is not None and kind not in DESIGN_KINDS:
        raise ValueError(f"the design's settings say design={kind!r}; choices: {', '.join(DESIGN_KINDS)}")
    if "stratum_id" in out.columns and kind != "stratified":
        where = "the design" if name is None else f"design file {name!r}"
        if kind is not None:
            said = f"its settings say design={kind!r}"
        elif not attrs:
            said = "it has no settings (" + ("attrs" if name is None else "no '# design' line") + ")"
        else:
            said = "its settings do not say design='stratified'"
        raise ValueError(
            f"{where} has a 'stratum_id' column (the rows of a fixed-size stratified design) but {said}: "
            f"estimated as a Poisson design its intervals would be wrong. A stratified design needs its settings "
            f"design='stratified' and strata ([N_h, n_h] per stratum): give the file as write_design wrote it "
            f"(with its '# design' line), or the DataFrame sample returned with its attrs"
        )
    if kind == "stratified":
        out["stratum_id"] = _check_strata(out, attrs)
    if digest is not None and digest != rows_digest(out):
        raise ValueError(
            f"design file {name!r}: its rows are not those write_design wrote (their digest differs from the "
            f"{ROWS_DIGEST!r} of its '# design' line): a pi, a pair, a stratum or a row was changed by hand, and "
            f"estimates from changed inclusion probabilities are wrong; use the file as it was written, or draw a "
            f"new design"
        )
    out.attrs = attrs
    return out


def _read_design_file(design: Any) -> tuple[pd.DataFrame, dict, str, list[int]]:
    """The table, settings, name and data lines' line numbers of a design file (see :func:`read_design`)."""
    import json
    from io import StringIO

    from ir_incomplete.data.readers import _DECODE_ERRORS, _open_text, _read_once, _source_name

    if not isinstance(design, (str, os.PathLike)):
        raise ValueError(
            f"design of type {type(design).__name__} is not a design: give the DataFrame that sample returned or "
            f"the path of a design file that write_design wrote"
        )
    source = _read_once(design, "design")
    name = _source_name(source)
    attrs: dict = {}
    header: str | None = None
    data: list[str] = []
    line_of: list[int] = []
    try:
        with _open_text(source, encoding="utf-8-sig") as handle:
            for no, line in enumerate(handle, 1):
                if header is None:
                    if line.startswith("#"):  # settings and comments come before the column line
                        body = line[1:].strip()
                        if body.startswith("design "):
                            try:
                                attrs = json.loads(body[len("design ") :])
                            except ValueError:
                                raise ValueError(
                                    f"design file {name!r} line {no}: the settings line is not JSON"
                                ) from None
                            if not isinstance(attrs, dict):
                                raise ValueError(
                                    f"design file {name!r} line {no}: the settings line holds "
                                    f"{type(attrs).__name__}, not a JSON object of settings"
                                )
                    elif line.strip():
                        header = line
                    continue
                if line.strip():  # blank lines are skipped, as pandas skips them
                    data.append(line)
                    line_of.append(no)
    except UnicodeDecodeError as exc:
        raise ValueError(f"cannot read design file {name!r}: not UTF-8 text ({exc})") from None
    except _DECODE_ERRORS as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise ValueError(f"cannot read design file {name!r}: truncated or corrupt ({detail})") from None
    recorded = attrs.pop("rows", None)
    if recorded is not None and (isinstance(recorded, bool) or not isinstance(recorded, int) or recorded < 0):
        raise ValueError(f"design file {name!r}: the settings' rows={recorded!r} is not a number of rows")
    if recorded is not None and len(data) != recorded:
        how = (
            "it was cut off (copy or write it again)"
            if len(data) < recorded
            else "rows were added after it was written"
        )
        raise ValueError(
            f"design file {name!r} holds {len(data)} rows, but it was written with {recorded} (the 'rows' of "
            f"its '# design' line): {how}"
        )
    if header is None:
        raise ValueError(
            f"design file {name!r} is empty: a design file holds a header line query_id, doc_id, pi "
            f"(tab-separated) and one line per judged pair"
        )
    if recorded is not None and data and not data[-1].endswith("\n"):
        raise ValueError(
            f"design file {name!r} line {line_of[-1]}: the last line does not end with a newline: the file was "
            f"cut off inside it (write_design ends every line)"
        )
    columns = header.rstrip("\r\n").split("\t")
    fields = np.fromiter((line.count("\t") for line in data), dtype=np.int64, count=len(data)) + 1
    wrong = np.flatnonzero(fields != len(columns))
    if len(wrong):
        i = int(wrong[0])
        shown = data[i].rstrip("\r\n")
        shown = shown if len(shown) <= 120 else shown[:117] + "..."
        raise ValueError(
            f"design file {name!r} line {line_of[i]}: {int(fields[i])} tab-separated fields, but the column line "
            f"has {len(columns)} ({', '.join(columns)}): the line is cut off or malformed: {shown!r}"
        )
    try:
        frame = pd.read_csv(
            StringIO(header + "".join(data)), sep="\t", dtype={"query_id": str, "doc_id": str}, na_filter=False
        )
    except pd.errors.ParserError as exc:
        raise ValueError(f"malformed design file {name!r}: {' '.join(str(exc).split())}") from None
    if len(frame) != len(data):  # a quote character that opens a field spanning lines
        raise ValueError(
            f"malformed design file {name!r}: {len(data)} lines but {len(frame)} rows (a field that opens with a "
            f"quote character, '\"', and does not close on its line)"
        )
    return frame, attrs, name, line_of


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


def _is_qrels_input(value: Any) -> bool:
    """Whether ``value`` is one qrels input on its own (a path, a table, :class:`Qrels`, a dict of dicts),
    as opposed to a row of a list of rows (a ``Qrel`` named tuple, a plain tuple)."""
    return isinstance(value, (str, os.PathLike, pd.DataFrame, Qrels, Mapping)) or is_arrow_table(value)


def _several(judgments: Any) -> bool:
    """Whether ``judgments`` is a list or tuple of qrels inputs (several judgment sets) rather than one
    qrels input that :meth:`Qrels.from_any` reads (a list of ``Qrel`` tuples or of plain tuples)."""
    if not isinstance(judgments, (list, tuple)) or hasattr(judgments, "_fields") or not judgments:
        return False
    inputs = [_is_qrels_input(j) for j in judgments]
    if not any(inputs):
        return False
    if not all(inputs):
        wrong = inputs.index(False)
        raise ValueError(
            f"judgments[{wrong}] is a {type(judgments[wrong]).__name__}, among qrels inputs: a list of judgments "
            f"holds qrels (files, DataFrames, Qrels, dicts), each read on its own; a list of (query_id, doc_id, "
            f"relevance) tuples is one qrels"
        )
    return True


def _describe(judgments: Any) -> str:
    """The judgments given, for messages: file names, or the kind and size of each table."""
    if _several(judgments):
        return ", ".join(_describe(j) for j in judgments)
    if isinstance(judgments, (str, os.PathLike)):
        return repr(os.fspath(judgments))
    if isinstance(judgments, pd.DataFrame):
        source = judgments.attrs.get("source")
        return repr(source) if isinstance(source, str) else f"a table of {len(judgments)} rows"
    if isinstance(judgments, Qrels):
        return f"Qrels of {len(judgments.keys)} judgments"
    if isinstance(judgments, Mapping):
        return f"a dict of {len(judgments)} queries"
    return f"a {type(judgments).__name__}"


def read_judgments(judgments: Any) -> pd.DataFrame:
    """The judgments as one table ``query_id, doc_id, relevance`` (ids ``str``): one qrels input (anything
    :meth:`Qrels.from_any` reads: a TREC qrels file, ``.gz`` allowed, a DataFrame, a pyarrow Table, a dict
    of dicts, a list of ``Qrel`` tuples, :class:`Qrels`) or a list or tuple of them (e.g. the judgments
    made before a design and those of its sampled pairs), combined: a pair judged by several with the
    same grade is kept once; a pair graded differently (grades >= 0) by two of them is a ``ValueError``
    naming the pair, both grades and both inputs. A negative grade (pooled but unjudged) gives way to a
    grade >= 0 of the same pair from another input. A list whose elements are paths, tables,
    :class:`Qrels` or dicts is several inputs; a list of tuples is one."""
    if not _several(judgments):
        qrels = judgments if isinstance(judgments, Qrels) else Qrels.from_any(judgments)
        return qrels.to_frame()[["query_id", "doc_id", "relevance"]]
    parts = []
    for k, one in enumerate(judgments):
        frame = (one if isinstance(one, Qrels) else Qrels.from_any(one)).to_frame()
        parts.append(frame[["query_id", "doc_id", "relevance"]].assign(_input=k))
    both = pd.concat(parts, ignore_index=True)
    # grades >= 0 first, in the inputs' order; then the first row of each pair is the one kept
    both = both.iloc[np.lexsort((both["_input"].to_numpy(), both["relevance"].to_numpy() < 0))]
    key = pd.MultiIndex.from_arrays([both["query_id"], both["doc_id"]])
    first = ~key.duplicated()
    kept = both[first]
    graded = both["relevance"].to_numpy() >= 0
    at = pd.MultiIndex.from_arrays([kept["query_id"], kept["doc_id"]]).get_indexer(key)
    clash = np.flatnonzero(graded & (both["relevance"].to_numpy() != kept["relevance"].to_numpy()[at]))
    if len(clash):
        i = int(clash[0])
        j = int(at[i])
        names = [_describe(one) for one in judgments]
        raise ValueError(
            f"the pair ({both['query_id'].iloc[i]}, {both['doc_id'].iloc[i]}) is graded "
            f"{int(kept['relevance'].iloc[j])} by {names[int(kept['_input'].iloc[j])]} and "
            f"{int(both['relevance'].iloc[i])} by {names[int(both['_input'].iloc[i])]} ({len(clash)} such "
            f"pairs): a pair has one grade; correct one of the judgment sets"
        )
    return kept.drop(columns="_input").reset_index(drop=True)


def _grades(judgments: Any, design: pd.DataFrame) -> np.ndarray:
    """The grade of every design pair from ``judgments`` (:func:`read_judgments`: one qrels input or a
    list of them); a pair without a grade >= 0 is an error naming it and the judgments given."""
    frame = read_judgments(judgments)
    index = pd.MultiIndex.from_arrays([frame["query_id"].astype(str), frame["doc_id"].astype(str)])
    pos = index.get_indexer(pd.MultiIndex.from_arrays([design["query_id"], design["doc_id"]]))
    missing = np.flatnonzero(pos < 0)
    if len(missing):
        i = int(missing[0])
        pi = design["pi"].to_numpy(dtype=float)
        certain = int((pi[missing] >= 1.0).sum())
        hint = (
            f"; {certain} of them are certainty pairs (pi = 1: judgments made before the design, the qrels given "
            f"to sample, or an earlier round's), whose judgments are needed too: give the earlier judgments "
            f"beside the new ones (judgments=[earlier, new]; on the command line --judgments FILE, repeatable)"
            if certain
            else "; several judgment sets can be given together (judgments=[a, b]; on the command line "
            "--judgments FILE, repeatable)"
        )
        raise ValueError(
            f"the design's pair ({design['query_id'].iloc[i]}, {design['doc_id'].iloc[i]}) has no judgment "
            f"({len(missing)} of its {len(design)} pairs have none) in the judgments given "
            f"({_describe(judgments)}); judge every pair of the design{hint}"
        )
    grades = frame["relevance"].to_numpy()[pos].astype(np.int64)
    neg = np.flatnonzero(grades < 0)
    if len(neg):
        i = int(neg[0])
        raise ValueError(
            f"the design's pair ({design['query_id'].iloc[i]}, {design['doc_id'].iloc[i]}) has grade "
            f"{grades[i]} (pooled but unjudged) in the judgments given ({_describe(judgments)}); every sampled "
            f"pair needs a grade >= 0"
        )
    return grades


def design_text(design: Any, comments: Sequence[str] = ()) -> str:
    """The text of a design file (what :func:`write_design` writes): a first line ``# design {json}``
    with the design's settings (``attrs``, keys sorted), ``rows``, the number of its rows, and
    ``rows_sha256``, their digest (:func:`rows_digest`; what :func:`read_design` checks), then
    ``comments`` (each a line, ``# `` put before one that does not start with ``#``), then the
    tab-separated table with a column line; ``pi`` written with 17 significant digits (it reads back
    to the same float); every line ends with ``\\n``. Ids holding a tab, a newline or a carriage
    return are refused: they would not read back."""
    import json

    frame = read_design(design)
    for column in ("query_id", "doc_id"):
        ids = frame[column].astype(str)
        bad = np.flatnonzero(ids.str.contains(r"[\t\n\r]", regex=True).to_numpy(dtype=bool))
        if len(bad):
            i = int(bad[0])
            raise ValueError(
                f"design row {i}: {column} {ids.iloc[i]!r} holds a tab or a line break; a design file is a "
                f"tab-separated table with one pair per line"
            )
    lines = []
    for comment in comments:
        if not isinstance(comment, str) or "\n" in comment or "\r" in comment:
            raise ValueError(f"comment {comment!r} is not one line of text")
        lines.append((comment if comment.startswith("#") else "# " + comment) + "\n")
    settings = {**frame.attrs, "rows": len(frame), ROWS_DIGEST: rows_digest(frame)}
    head = "# design " + json.dumps(settings, sort_keys=True) + "\n"
    body = frame.to_csv(sep="\t", index=False, float_format="%.17g", lineterminator="\n")
    return head + "".join(lines) + body


def write_design(design: Any, path: str | os.PathLike[str], *, comments: Sequence[str] = ()) -> None:
    """Write a design (a DataFrame of :func:`ir_incomplete.judging.sample`, or anything
    :func:`read_design` reads) to ``path`` as :func:`design_text` gives it: settings line (depth, runs,
    seed, ..., and ``rows``), ``comments``, then the table, which :func:`read_design` reads back.

    Written to a temporary file beside ``path`` and renamed over it once complete, so a failed write
    (a full disk, Ctrl-C) leaves ``path``'s earlier content as it was (e.g. the earlier round's design
    when a new round is written over it); a path ending in ``.gz`` gets gzip data."""
    from ir_incomplete.data.files import write_text

    write_text(path, design_text(design, comments))
