"""Layer 1: every qrels/run input form → one columnar data model.

Qrels become a :class:`Qrels` (topic and document ids interned to integers once, per-topic judgment
counts per grade). Runs — one or many at once — become a :class:`RankedLists`: a padded
``[rankings × depth]`` matrix of *codes*, one row per (run, topic) pair, in trec_eval's ranking order.

Codes (``int32``):

* ``g >= 0``           judged, with grade ``g``
* ``POOLED_UNJUDGED``  in the qrels with a negative grade (trec_eval's "pooled but unjudged": infAP's −1 marks)
* ``UNPOOLED``         not in the qrels of that topic
* ``PAD``              past the end of the ranking

Ranking order, as trec_eval's: score descending, compared as single-precision floats by default (what
trec_eval 9.x, pytrec_eval and ir_measures do; trec_eval 10 compares doubles:
``score_precision="float64"``), ties broken by document id descending, byte-wise.
A document twice in one ranking is an error that names it.

Everything here is vectorized: document ids are hashed once; runs already in ranking order (as TREC
runs usually are) are recognised in one pass and not sorted; only documents the qrels mention are looked
up. :func:`prepare_runs` does the qrels-independent part once, for runs evaluated against many qrels.

The modules, one job each:

* :mod:`~ir_incomplete.data.codes`: the code values and the fixed choices (policies, precisions, grade range);
* :mod:`~ir_incomplete.data.readers`: TREC run, qrels and prels files;
* :mod:`~ir_incomplete.data.files`: files the package writes (a temporary file renamed into place; ``.gz``
  as gzip);
* :mod:`~ir_incomplete.data.columns`: every input form → id, document and value columns; id checks, hashing;
* :mod:`~ir_incomplete.data.qrels`: :class:`Qrels`;
* :mod:`~ir_incomplete.data.ranking`: trec_eval's ranking order, tie breaking;
* :mod:`~ir_incomplete.data.prepared`: :class:`PreparedRuns` and :class:`RankedLists`;
* :mod:`~ir_incomplete.data.pt_frames`: a run or qrels frame in PyTerrier's column names;
* :mod:`~ir_incomplete.data.named_files`: files named in measure strings, read once per evaluation.
"""

from ir_incomplete.data.codes import (
    GRADE_RANGE,
    MAX_INDEXED_GRADE,
    NEGATIVE_POLICIES,
    PAD,
    POOLED_UNJUDGED,
    SCORE_PRECISIONS,
    UNPOOLED,
)
from ir_incomplete.data.columns import _run_columns, run_columns
from ir_incomplete.data.prepared import PreparedRuns, RankedLists, _prepare, prepare_runs, rank_runs
from ir_incomplete.data.pt_frames import to_pyterrier
from ir_incomplete.data.qrels import Qrels
from ir_incomplete.data.ranking import _check_score_precision, _descending_score_keys, trec_order
from ir_incomplete.data.readers import TREC_FIELDS, read_trec_prels, read_trec_qrels, read_trec_run

__all__ = [
    "POOLED_UNJUDGED",
    "UNPOOLED",
    "PAD",
    "NEGATIVE_POLICIES",
    "SCORE_PRECISIONS",
    "GRADE_RANGE",
    "MAX_INDEXED_GRADE",
    "TREC_FIELDS",
    "Qrels",
    "RankedLists",
    "read_trec_qrels",
    "read_trec_prels",
    "read_trec_run",
    "to_pyterrier",
    "PreparedRuns",
    "prepare_runs",
    "rank_runs",
    "run_columns",
    "trec_order",
    # used across the package (not public API)
    "_prepare",
    "_run_columns",
    "_check_score_precision",
    "_descending_score_keys",
]
