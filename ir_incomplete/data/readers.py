"""Readers of TREC text files (runs, qrels and sampled qrels, "prels") and of parquet files.

Every line must have exactly the fields of its format and a valid numeric field; a malformed line is a
``ValueError`` naming the file and the line, a truncated or corrupt ``.gz`` file one naming the file.

When pyarrow is installed, files whose fields are separated by single spaces (or single tabs) are read
by pyarrow's multi-threaded CSV reader, ids kept as Arrow strings (pandas ``str`` columns); any file it
does not read exactly as the whitespace rule says (several spaces, leading or trailing blanks, mixed
separators, a bad line) is read by pandas' parser instead, which accepts every file it accepted before
and reports a malformed line the same way: both paths accept the same files and give the same values.

A file that can be read only once (a named pipe, a process substitution such as ``<(zcat run.gz)``) is
read whole, once, into memory (gzip data is recognised by its first bytes there); an empty ``.gz`` file
is refused as a truncated one.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import threading
import zlib
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    #: a TREC file: a path (``.gz`` allowed) or the text itself (a string with a newline)
    TrecSource = str | os.PathLike[str]
else:
    from ir_incomplete._lazy import pandas as pd

from ir_incomplete.data.codes import GRADE_RANGE
from ir_incomplete.data.ids import arrow_available

#: the fields of each TREC text format, in line order: the one place that says how many fields a line
#: of each format has (a line with another number of fields is refused with its file name and number)
TREC_FIELDS = {
    "run": ("query_id", "q0", "doc_id", "rank", "score", "tag"),
    "qrels": ("query_id", "iteration", "doc_id", "relevance"),
    "prels": ("query_id", "iteration", "doc_id", "stratum", "relevance"),
}
#: the columns of each format that are kept, and the numeric one among them
_TREC_KEEP = {
    "run": ("query_id", "doc_id", "score"),
    "qrels": ("query_id", "doc_id", "relevance"),
    "prels": ("query_id", "doc_id", "stratum", "relevance"),
}
_TREC_NUMERIC = {"run": "score", "qrels": "relevance", "prels": "relevance"}
#: the column of a table (DataFrame, pyarrow Table, parquet file) that names the run of each row
RUN_COLUMN = "run"
#: the formats whose numeric field is a grade (an integer in GRADE_RANGE)
_GRADED = ("qrels", "prels")
#: errors of a truncated or corrupt compressed file, or of bytes that are not text
_DECODE_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile, UnicodeDecodeError)
#: read TREC files with pyarrow when it is installed (``False``: always with pandas' parser)
USE_PYARROW = True
_SNIFF_BYTES = 1 << 16
_BLOCK_BYTES = 8 << 20  # pyarrow's CSV blocks: fewer, larger chunks than its 1 MiB default
#: the columns of each kind in a parquet file or a table: the canonical name, then the accepted others
_PARQUET_COLUMNS = {
    "run": (("query_id", "qid"), ("doc_id", "docno"), ("score", "score")),
    "qrels": (("query_id", "qid"), ("doc_id", "docno"), ("relevance", "label")),
    "prels": (("query_id", "qid"), ("doc_id", "docno"), ("stratum", "stratum"), ("relevance", "label")),
}


class _Content:
    """A file that can be read only once (a named pipe, a process substitution such as ``<(zcat
    run.gz)``, a character device), read whole into memory and decompressed when it is gzip data, so
    that looking at its first line and parsing it read these bytes, not the file again."""

    def __init__(self, name: str, data: bytes):
        self.name = name
        self.data = data


def _read_once(source, kind: str):
    """``source`` itself when it can be read several times (a regular file, text, a path that does not
    exist: opening it reports that), else its :class:`_Content`. An empty ``.gz`` file (a copy cut off
    before its first byte) is refused as a truncated one is: gzip data has at least a header."""
    if isinstance(source, _Content) or (isinstance(source, str) and "\n" in source):
        return source
    name = _source_name(source)
    gz = name.endswith(".gz")
    if not read_once(source):
        if gz and os.path.isfile(source) and os.path.getsize(source) == 0:
            raise ValueError(f"cannot read {kind} file {name}: truncated or corrupt (an empty file, not gzip data)")
        return source
    data = _read_interruptibly(source)
    if gz or data[:2] == b"\x1f\x8b":
        if not data:
            raise ValueError(f"cannot read {kind} file {name}: truncated or corrupt (an empty stream, not gzip data)")
        try:
            data = gzip.decompress(data)
        except _DECODE_ERRORS as exc:
            detail = " ".join(str(exc).split()) or type(exc).__name__
            raise ValueError(f"cannot read {kind} file {name}: truncated or corrupt ({detail})") from None
    return _Content(name, data)


def _read_interruptibly(path) -> bytes:
    """The whole content of ``path`` (a named pipe, a device), read by a daemon thread while the calling
    thread waits in steps of 50 ms: a blocking ``open``/``read`` of a pipe whose writer sends nothing is
    not interrupted by Ctrl-C when the kernel hands SIGINT to another thread of the process (a BLAS or
    Arrow worker), and the wait would last until the writer ends; the waiting thread sees the signal
    within a step. After Ctrl-C the reader thread is left blocked (a daemon, it does not hold the exit)."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            with open(path, "rb") as handle:
                box["data"] = handle.read()
        except BaseException as exc:  # handed to the waiting thread, which raises it
            box["error"] = exc

    reader = threading.Thread(target=work, name="ir_incomplete-read-once", daemon=True)
    reader.start()
    while reader.is_alive():
        reader.join(0.05)
    if "error" in box:
        raise box["error"]
    return box["data"]


def _open_text(source, encoding: str | None = None):
    """A text handle of ``source``: text holding lines, content read once (UTF-8, a byte order mark
    skipped), or a file path (``.gz`` allowed) opened with ``encoding`` (default: the locale's)."""
    if isinstance(source, str) and "\n" in source:
        return io.StringIO(source)
    if isinstance(source, _Content):
        return io.TextIOWrapper(io.BytesIO(source.data), encoding="utf-8-sig")
    path = os.fspath(source)
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding=encoding)
    return open(path, encoding=encoding)


def _source_name(source) -> str:
    if isinstance(source, str) and "\n" in source:
        return "<text>"
    if isinstance(source, _Content):
        return source.name
    return os.fspath(source) if not isinstance(source, bytes) else source.decode(errors="replace")


def _numeric_problem(kind: str, value: float) -> str | None:
    """Why ``value`` is not acceptable in the numeric field of ``kind`` (``None`` when it is)."""
    if not np.isfinite(value):
        return "is not a finite number"
    if kind in _GRADED:
        if value != np.round(value):
            return "is not an integer grade"
        if not GRADE_RANGE[0] <= value <= GRADE_RANGE[1]:
            return f"is outside the supported grade range {GRADE_RANGE[0]}..{GRADE_RANGE[1]}"
    return None


def _bad_line(source, kind: str) -> str | None:
    """The first malformed line of a TREC file, described with file name and line number (the slow path,
    taken only after the vectorized checks of :func:`_read_trec` failed)."""
    fields = TREC_FIELDS[kind]
    numeric = fields.index(_TREC_NUMERIC[kind])
    name = _source_name(source)
    with _open_text(source) as handle:
        for number, line in enumerate(handle, 1):
            parts = line.split()
            if not parts:
                continue
            shown = line.strip()
            shown = shown if len(shown) <= 120 else shown[:117] + "..."
            if len(parts) != len(fields):
                return (
                    f"{name}:{number}: expected {len(fields)} fields ({' '.join(fields)}), "
                    f"found {len(parts)}: {shown!r}"
                )
            text = parts[numeric]
            try:
                value = float(text)
            except ValueError:
                return f"{name}:{number}: {fields[numeric]} {text!r} is not a number: {shown!r}"
            problem = _numeric_problem(kind, value)
            if problem:
                return f"{name}:{number}: {fields[numeric]} {text!r} {problem}: {shown!r}"
    return None


def _valid_frame(frame, kind: str) -> bool:
    """Vectorized check of a parsed TREC table: field count, no short line, numeric field as required."""
    fields = TREC_FIELDS[kind]
    if frame.shape[1] != len(fields):
        return False
    frame.columns = list(fields)
    last = frame[fields[-1]]
    if last.dtype == object and (last.to_numpy() == "").any():  # a line with fewer fields
        return False
    values = frame[_TREC_NUMERIC[kind]]
    if not (pd.api.types.is_integer_dtype(values) or pd.api.types.is_float_dtype(values)):
        return False
    if kind in _GRADED and pd.api.types.is_integer_dtype(values):
        arr = values.to_numpy()
        return len(arr) == 0 or bool(GRADE_RANGE[0] <= arr.min() and arr.max() <= GRADE_RANGE[1])
    arr = values.to_numpy(dtype=np.float64)
    if not np.isfinite(arr).all():
        return False
    if kind in _GRADED:
        return len(arr) == 0 or bool(
            (arr == np.round(arr)).all() and GRADE_RANGE[0] <= arr.min() and arr.max() <= GRADE_RANGE[1]
        )
    return True


def _is_parquet(source) -> bool:
    if isinstance(source, str) and "\n" in source:
        return False
    return _source_name(source).lower().endswith((".parquet", ".parq", ".pq"))


def _native(source):
    """What pyarrow's readers take for ``source``: its path, or a buffer of its :class:`_Content`."""
    if isinstance(source, _Content):
        import pyarrow as pa

        return pa.BufferReader(source.data)
    return os.fspath(source)


def _read_parquet(source, kind: str):
    """A parquet file of ``kind`` as a pyarrow Table with the canonical columns (:data:`_PARQUET_COLUMNS`;
    ``kind="qrels"`` keeps a ``stratum`` column when there is one, ``kind="run"`` a ``run`` column, which
    names the run of each row: see :func:`ir_incomplete.api.as_run_mapping`). Ids stay Arrow strings."""
    if not arrow_available():
        raise ValueError(f"reading the parquet file {_source_name(source)} needs pyarrow (pip install pyarrow)")
    import pyarrow.parquet as pq

    name = _source_name(source)
    try:
        schema = pq.read_schema(_native(source))
    except Exception as exc:  # pyarrow's own errors: not a parquet file, unreadable
        raise ValueError(f"cannot read {kind} file {name} as parquet: {' '.join(str(exc).split())}") from None
    spec = _PARQUET_COLUMNS["prels" if kind == "qrels" and "stratum" in schema.names else kind]
    picked = []
    for names in spec:
        found = next((n for n in names if n in schema.names), None)
        if found is None:
            raise ValueError(
                f"{kind} parquet file {name} has no column {names[0]!r} (columns {schema.names}; expected "
                f"{'/'.join(n[0] for n in spec)} or {'/'.join(n[-1] for n in spec)})"
            )
        picked.append(found)
    canonical = [names[0] for names in spec]
    if kind == "run" and RUN_COLUMN in schema.names:
        picked.append(RUN_COLUMN)
        canonical.append(RUN_COLUMN)
    return pq.read_table(_native(source), columns=picked).rename_columns(canonical)


def parquet_run_column(path) -> bool:
    """Whether ``path`` is a regular parquet file with a ``run`` column (a file of several runs); ``False``
    also when its schema cannot be read (reading the file reports why)."""
    if not (isinstance(path, (str, os.PathLike)) and _is_parquet(path) and arrow_available()):
        return False
    import pyarrow.parquet as pq

    try:
        return os.path.isfile(path) and RUN_COLUMN in pq.read_schema(path).names
    except Exception:  # pyarrow's own errors: not a parquet file; reported when it is read
        return False


def read_once(path) -> bool:
    """Whether ``path`` names something that can be read only once (a named pipe, a process substitution,
    a character device), which is then read whole, once (see :class:`_Content`)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, TypeError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _arrow_frame(table) -> pd.DataFrame:
    """A pyarrow table as a DataFrame whose string columns stay Arrow strings (pandas ``str`` columns;
    ``string[pyarrow]`` before pandas 3)."""
    import pyarrow as pa

    if int(pd.__version__.split(".")[0]) >= 3:
        return table.to_pandas()
    strings = pd.StringDtype("pyarrow")
    return table.to_pandas(
        types_mapper=lambda t: strings if pa.types.is_string(t) or pa.types.is_large_string(t) else None
    )


def run_directory_entries(path) -> list[str]:
    """The entries of a run directory that stand for runs: every non-hidden name, sorted, as a path
    (``os.listdir``'s ``OSError`` is the caller's)."""
    return [os.path.join(path, name) for name in sorted(os.listdir(path)) if not name.startswith(".")]


def _sniff(source) -> tuple[int, str | None]:
    """``(fields, separator)`` of the first non-blank line of a TREC file: its number of fields, and the
    one-character separator with which pyarrow reads the file exactly as the whitespace rule does (``" "``
    or ``"\t"`` when the line uses that one alone, singly, with no leading or trailing blank), else
    ``None`` (pandas reads the file). ``(0, None)`` for a file that cannot be read here."""
    try:
        with _open_text(source) as handle:
            head = handle.read(_SNIFF_BYTES)
    except (*_DECODE_ERRORS, OSError):
        return 0, None
    for line in head.splitlines():
        if not line.strip():
            continue
        for sep, other in ((" ", "\t"), ("\t", " ")):
            if other not in line and line == line.strip() and sep + sep not in line and sep in line:
                return len(line.split()), sep
        return len(line.split()), None
    return 0, None


def _read_trec_arrow(source, kind: str, delimiter: str):
    """The TREC file of ``kind`` read by pyarrow's CSV reader (several threads) as a pyarrow Table of the
    kept columns, or ``None`` when pyarrow does not read it exactly (then pandas reads it: see the module
    docstring)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    fields, keep = TREC_FIELDS[kind], _TREC_KEEP[kind]
    numeric = _TREC_NUMERIC[kind]
    types = {f: pa.string() for f in keep}
    types[numeric] = pa.int64() if kind in _GRADED else pa.float64()
    try:
        table = pcsv.read_csv(
            _native(source),
            read_options=pcsv.ReadOptions(column_names=list(fields), block_size=_BLOCK_BYTES),
            parse_options=pcsv.ParseOptions(
                delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False, ignore_empty_lines=True
            ),
            convert_options=pcsv.ConvertOptions(
                include_columns=list(keep),
                column_types=types,
                null_values=[],
                strings_can_be_null=False,
                check_utf8=True,
            ),
        )
    except (pa.ArrowException, OSError, ValueError, EOFError):  # pandas reads it, or says what is wrong
        return None
    finally:
        pa.default_memory_pool().release_unused()  # the parser's buffers: back to the system, not kept
    if table.num_rows == 0:
        return None
    column = table.column(numeric)
    if kind in _GRADED:
        import pyarrow.compute as pc

        low, high = (v.as_py() for v in pc.min_max(column).values())
        if not (GRADE_RANGE[0] <= low and high <= GRADE_RANGE[1]):
            return None
    elif not all(np.isfinite(chunk.to_numpy()).all() for chunk in column.chunks):
        return None
    return table


def _read_trec(source, kind: str, what: str | None = None) -> pd.DataFrame:
    """:func:`_read_trec_any` as a DataFrame (ids read by pyarrow stay Arrow strings: ``str`` columns)."""
    out = _read_trec_any(source, kind, what)
    return out if isinstance(out, pd.DataFrame) else _arrow_frame(out)


def _read_trec_any(source, kind: str, what: str | None = None):
    """Read a whitespace-separated TREC file of ``kind`` (see :data:`TREC_FIELDS`) with one C pass, as a
    pyarrow Table when pyarrow read it, else a DataFrame; ``kind="qrels"`` also reads sampled qrels
    ("prels"), recognised by the five fields of the first line, unless ``what`` names another role. A
    ``.parquet`` path is read as parquet. ``what``: the file's role in messages (default: its format;
    e.g. ``"predictions"`` for predicted grades in the qrels format).

    Every line must have exactly the format's fields and a valid numeric field; otherwise ``ValueError``
    names the file and the line. A truncated or corrupt ``.gz`` file is a ``ValueError`` naming the file.
    """
    sampled = kind == "qrels" and what in (None, "qrels")  # sampled qrels are recognised
    source = _read_once(source, what or kind)
    if _is_parquet(source):
        return _read_parquet(source, kind)
    name = _source_name(source)
    if USE_PYARROW and arrow_available() and not (isinstance(source, str) and "\n" in source):
        n_fields, delimiter = _sniff(source)
        if sampled and n_fields == len(TREC_FIELDS["prels"]):
            kind = "prels"
        table = _read_trec_arrow(source, kind, delimiter) if delimiter is not None else None
        if table is not None:
            return table
    try:
        with _open_text(source) as handle:
            if sampled and _first_line_fields(handle) == len(TREC_FIELDS["prels"]):
                kind = "prels"
            what = what or kind
            handle.seek(0)
            fields = TREC_FIELDS[kind]
            numeric = fields.index(_TREC_NUMERIC[kind])
            dtype: dict[int, Any] = {i: object for i in range(len(fields)) if i != numeric}
            if kind == "run":
                dtype[numeric] = np.float64
            import csv

            try:
                frame = pd.read_csv(
                    handle, sep=r"\s+", header=None, dtype=dtype, na_filter=False, engine="c", quoting=csv.QUOTE_NONE
                )
                valid = _valid_frame(frame, kind)
            except pd.errors.EmptyDataError:
                frame, valid = pd.DataFrame({f: pd.Series(dtype=object) for f in fields}), True
            except (ValueError, TypeError, OverflowError):  # e.g. a word where a number belongs
                frame, valid = None, False
        problem = None if valid else _bad_line(source, kind)
    except _DECODE_ERRORS as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise ValueError(f"cannot read {what or kind} file {name}: truncated or corrupt ({detail})") from None
    if problem is not None:
        raise ValueError(f"malformed {what} line: {problem}")
    if not valid:  # the parser refused something the line-by-line scan accepts
        raise ValueError(f"cannot parse {what} file {name} as {len(fields)} whitespace-separated fields")
    out = frame[list(_TREC_KEEP[kind])]
    if kind in _GRADED and len(out) == 0:
        out = out.astype({"relevance": np.int64})
    if kind == "run" and len(out) == 0:
        out = out.astype({"score": np.float64})
    return out.reset_index(drop=True)


def read_trec_qrels(source: TrecSource) -> pd.DataFrame:
    """Read a TREC qrels file (``qid iter docid grade``, ``.gz`` allowed) into ``query_id/doc_id/relevance``.
    A file whose first line has five fields is sampled qrels, read by :func:`read_trec_prels`. A parquet
    file (``*.parquet``; needs pyarrow) holds the columns ``query_id/doc_id/relevance`` or
    ``qid/docno/label`` (and ``stratum`` for sampled qrels).

    Every line needs exactly the fields of its format and an integer grade in :data:`GRADE_RANGE`; a
    malformed line (also a file mixing 4- and 5-field lines) or a truncated ``.gz`` file is a
    ``ValueError`` naming the file (and line)."""
    return _read_trec(source, "qrels")


def _first_line_fields(handle) -> int:
    """Number of whitespace-separated fields on the first non-blank line of an open file (0: none)."""
    for line in handle:
        if line.strip():
            return len(line.split())
    return 0


def read_trec_prels(source: TrecSource) -> pd.DataFrame:
    """Read sampled qrels ("prels": ``qid iter docid stratum grade``, ``.gz`` allowed; NIST ``sample_eval``)
    into ``query_id/doc_id/stratum/relevance``. Grade −1 = pooled in that stratum but not sampled; the
    stratum is a label, kept as text. Malformed lines are refused as by :func:`read_trec_qrels`; parquet
    files are read as there (with a ``stratum`` column)."""
    return _read_trec(source, "prels")


def read_trec_run(source: TrecSource) -> pd.DataFrame:
    """Read a TREC run file (``qid Q0 docid rank score tag``, ``.gz`` allowed) into
    ``query_id/doc_id/score``. The rank column is ignored, as trec_eval does. Every line needs exactly
    six fields and a finite numeric score; a malformed line or a truncated ``.gz`` file is a
    ``ValueError`` naming the file (and line). A parquet file (``*.parquet``; needs pyarrow) holds the
    columns ``query_id/doc_id/score`` or ``qid/docno/score`` (PyTerrier's; other columns are ignored)."""
    return _read_trec(source, "run")
