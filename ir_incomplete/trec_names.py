"""trec_eval measure names (``P_5``, ``ndcg_cut_10``, ``map``, ``recip_rank``) and their ``ir_measures`` form.

The mapping is ``ir_measures.parse_trec_measure``'s (the original function, not our wrapper around
it); trec_eval's nicknames for groups of measures (``official``, ``all_trec``) are not translated.
Used by the grammar's error for an unknown name and by the command line, which accepts trec_eval
names with a note of the canonical form.
"""

from __future__ import annotations

import inspect
import re

import ir_measures

__all__ = ["trec_eval_equivalent", "trec_eval_message", "trec_eval_note"]

_TREC_NAME = re.compile(r"[A-Za-z0-9_]+([._][0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*)?")
_MAX_QUOTED = 200


def _quoted(text: str) -> str:
    return repr(text if len(text) <= _MAX_QUOTED else text[:_MAX_QUOTED] + "…")


def trec_eval_equivalent(name) -> list | None:
    """The ``ir_measures`` measures that trec_eval's measure ``name`` denotes (``'P_5'`` → ``[P@5]``,
    ``'ndcg_cut'`` → nDCG at trec_eval's nine cut-offs), or ``None`` when ``name`` is not one."""
    if not isinstance(name, str) or len(name) > 100 or not _TREC_NAME.fullmatch(name):
        return None
    try:
        import pytrec_eval

        if name in pytrec_eval.supported_nicknames:
            return None
    except ImportError:
        return None
    parse_trec_measure = inspect.unwrap(ir_measures.util.parse_trec_measure)
    try:
        measures = parse_trec_measure(name)
    except Exception:
        return None
    return list(measures) or None


def _canonical(measures) -> str:
    return " ".join(str(m) for m in measures)


def trec_eval_message(name: str) -> str | None:
    """One-line error text for an unknown measure ``name`` that is a trec_eval name, else ``None``."""
    measures = trec_eval_equivalent(name)
    if not measures:
        return None
    return f"unknown measure {_quoted(name)}; did you mean {_canonical(measures)!r}? ({name} is trec_eval's name)"


def trec_eval_note(name: str, measures) -> str:
    """The command line's note when it reads trec_eval's ``name`` as ``measures``."""
    return f"note: reading trec_eval's {name} as {_canonical(measures)}"
