"""``ir_measures.parse_measure`` and ``parse_trec_measure`` wrapped to fall back on :func:`parse
<ir_incomplete.grammar.registry.parse>`, and the ``ir_measures`` command's messages for measure strings.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import sys
import threading
from typing import Any

import ir_measures

from ir_incomplete.grammar.errors import MAX_MEASURE_LENGTH, MAX_NESTING, MAX_TOKEN_LENGTH
from ir_incomplete.grammar.registry import _MAX_BUILTIN_CUTOFF, check_measure, parse

__all__ = ["install_parsers", "uninstall_parsers", "parsers_installed"]


#: (module name, attribute) -> the function that was bound there before :func:`install_parsers`
_ORIGINALS: dict[tuple[str, str], Any] = {}
_TARGETS = (
    ("ir_measures", "parse_measure", "measure"),
    ("ir_measures.util", "parse_measure", "measure"),
    ("ir_measures", "parse_trec_measure", "trec"),
    ("ir_measures.util", "parse_trec_measure", "trec"),
)
_LOCK = threading.Lock()
_WRAPPER_FLAG = "_ir_incomplete_wrapper"


def _module(name: str):
    return ir_measures if name == "ir_measures" else ir_measures.util


_LONG_TOKEN = re.compile(rf"[^\s()\[\]{{}},=@:+]{{{MAX_TOKEN_LENGTH + 1},}}")


def _hostile(measure) -> bool:
    """True for a string that ``ir_measures``' own (``ast``-based) parser should not be given: longer than
    :data:`MAX_MEASURE_LENGTH`, with a token longer than :data:`MAX_TOKEN_LENGTH` or with brackets nested
    deeper than :data:`MAX_NESTING` (Python's parser can exhaust the recursion limit or memory on such
    input, or spend its time converting a huge number); :func:`parse` refuses it cleanly."""
    if not isinstance(measure, str):
        return False
    if len(measure) > MAX_MEASURE_LENGTH or _LONG_TOKEN.search(measure):
        return True
    depth = deepest = 0
    for ch in measure:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest > MAX_NESTING + 1  # the measure's own '(' is one level


def _check_upstream(measure):
    """Refuse what ``ir_measures``' own parser accepts but :func:`parse` does not: a cut-off below 1
    (``nDCG@-1``), a parameter that is not a finite number (``RBP(p=1e999)``) and, for ``ir_measures``
    built-ins, everything :func:`parse` refuses (an unknown parameter, a missing required one such as
    ``max_rel`` of ``SDCG@10``). An int written where a built-in wants a float (``INST(T=1,max_rel=3)``,
    which ``ir_measures``' providers refuse) is read as that float, as :func:`parse` reads it."""
    params = getattr(measure, "params", None) or {}
    cutoff = params.get("cutoff")
    if (
        isinstance(cutoff, numbers.Integral)
        and not isinstance(cutoff, bool)
        and not 1 <= int(cutoff) <= _MAX_BUILTIN_CUTOFF
    ):
        raise ValueError(f"invalid cut-off {cutoff}: a cut-off must be an integer between 1 and {_MAX_BUILTIN_CUTOFF}")
    for key, value in params.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{measure!r}: invalid value {value!r} for parameter {key!r}: not finite")
    return check_measure(measure)


#: where the ``ir_measures`` command reads its measure arguments: ``_get_measures`` of ``ir_measures.__main__``
#: (run as the console script, or as ``python -m ir_measures``, whose ``__spec__`` has the same name)
_COMMAND_MODULE = "ir_measures.__main__"
_COMMAND_FUNCTION = "_get_measures"


def _called_by_ir_measures_command(frame) -> bool:
    """True when ``frame`` is the ``ir_measures`` command's function that reads the measure arguments."""
    if frame is None or frame.f_code.co_name != _COMMAND_FUNCTION:
        return False
    return getattr(frame.f_globals.get("__spec__"), "name", None) == _COMMAND_MODULE


def _answer_ir_measures_command(token, error: Exception):
    """What ``ir_measures.parse_measure`` does for the ``ir_measures`` command with a measure string that
    neither parser reads.

    That command turns any ``ValueError`` into ``syntax error: <token>`` and any ``NameError`` into
    ``unknown measure: <token>``, dropping the message. Instead it gets what the ``ir_incomplete`` command
    does: a trec_eval name of one measure (``P_5``) is read as that measure with a note on stderr;
    anything else prints ``ir_measures: error: <message>`` (the message the ``ir_incomplete`` command
    prints) and exits with status 2.
    """
    from ir_incomplete.grammar.errors import measure_error_message
    from ir_incomplete.trec_names import trec_eval_equivalent, trec_eval_note

    trec = trec_eval_equivalent(token) if isinstance(token, str) else None
    if trec is not None and len(trec) == 1:
        sys.stderr.write(f"ir_measures: {trec_eval_note(token, trec)}\n")
        return trec[0]
    sys.stderr.write(f"ir_measures: error: {measure_error_message(str(token), error)}\n")
    sys.stderr.flush()
    raise SystemExit(2)


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the ir_incomplete package


def _raised_here(tb) -> bool:
    """True when the innermost frame of traceback ``tb`` is code of this package."""
    last = tb
    while last is not None and last.tb_next is not None:
        last = last.tb_next
    return last is not None and os.path.abspath(last.tb_frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep)


def _one_line_errors_of_ours() -> None:
    """In the ``ir_measures`` command (which lets every exception end in a traceback): a ``ValueError`` that
    this package's measures raise while computing (predictions that match no document of the run, …) ends
    the command as its other errors do, ``ir_measures: error: <message>`` and exit status 2, after the
    lines already printed. Other exceptions keep Python's traceback."""
    if getattr(sys.excepthook, _WRAPPER_FLAG, False):
        return
    previous = sys.excepthook

    def excepthook(kind, value, tb):
        if not (issubclass(kind, ValueError) and _raised_here(tb)):
            return previous(kind, value, tb)
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        sys.stderr.write(f"ir_measures: error: {' '.join(str(value).split()) or kind.__name__}\n")
        sys.stderr.flush()
        os._exit(2)  # an exception that reaches the hook ends the process; this gives it the exit status 2

    setattr(excepthook, _WRAPPER_FLAG, True)
    sys.excepthook = excepthook


def _check_for_ir_measures_command(measure) -> None:
    """Refuse, for the ``ir_measures`` command, a measure it could not compute: ``prior=predicted``
    without a predictions file named in the measure (that command has no option to pass predictions), or
    a predictions file that cannot be read; ``ir_measures: error: <message>``, exit status 2."""
    from ir_incomplete.data.named_files import hold_evaluation_scope
    from ir_incomplete.predictions import needs_predictions, read_predictions_file

    if getattr(measure, "_ir_incomplete", False):
        _one_line_errors_of_ours()
    # the command evaluates once and exits: a file named in a measure (predictions=, design=), read here to
    # check it, is not read again when the run is evaluated (a named pipe can be read once)
    hold_evaluation_scope()
    message = None
    if needs_predictions(measure):
        example = repr(measure(predictions="labels.tsv"))
        message = (
            f"{measure!r} needs predicted grades, which the ir_measures command cannot pass: name a "
            f'predictions file in the measure, e.g. "{example}", or use the ir_incomplete command with '
            f"--predictions FILE"
        )
    else:
        path = (getattr(measure, "params", None) or {}).get("predictions")
        if isinstance(path, str) and "predictions" in getattr(measure, "SUPPORTED_PARAMS", {}):
            try:
                read_predictions_file(path)
            except ValueError as exc:
                message = f"{measure!r}: {exc}"
    if message is not None:
        sys.stderr.write(f"ir_measures: error: {' '.join(message.split())}\n")
        sys.stderr.flush()
        raise SystemExit(2)


def _wrap_parse_measure(original):
    def read(measure):
        if _hostile(measure):
            return parse(measure)
        try:
            result = original(measure)
        except Exception as upstream:  # including RecursionError and MemoryError of the ast parser
            try:
                return parse(measure)
            except Exception as ours:
                raise ours from upstream
        try:
            return _check_upstream(result)
        except ValueError:  # what ours refuses too (SDCG@10): raise the error of parse, as our command
            return parse(measure)

    def parse_measure(measure):
        try:
            result = read(measure)
        except Exception as error:
            if _called_by_ir_measures_command(sys._getframe(1)):
                return _answer_ir_measures_command(measure, error)
            raise
        if _called_by_ir_measures_command(sys._getframe(1)):
            _check_for_ir_measures_command(result)
        return result

    parse_measure.__doc__ = (
        "Parse a measure string: ``ir_measures``' own ``parse_measure`` first and, when it fails, the "
        "grammar of :mod:`ir_incomplete.grammar` (whose error is raised if both fail)."
    )
    return parse_measure


def _wrap_parse_trec_measure(original):
    def parse_trec_measure(measure):
        if _hostile(measure):
            return [parse(measure)]
        try:
            return original(measure)
        except Exception as upstream:
            try:
                return [parse(measure)]
            except Exception as ours:
                raise ours from upstream

    parse_trec_measure.__doc__ = (
        "Parse a trec_eval measure name into a list of measures: ``ir_measures``' own "
        "``parse_trec_measure`` first (so ``map``, ``P``, ``ndcg_cut_10`` keep their meaning) and, when it "
        "fails, ``[parse(measure)]`` with :mod:`ir_incomplete.grammar` (whose error is raised if both fail)."
    )
    return parse_trec_measure


def install_parsers() -> None:
    """Rebind ``ir_measures.parse_measure``, ``ir_measures.util.parse_measure``,
    ``ir_measures.parse_trec_measure`` and ``ir_measures.util.parse_trec_measure`` to wrappers that call
    the original function first and fall back to :func:`parse` when it raises.

    Idempotent: attributes that already hold one of our wrappers are left alone. The wrappers carry the
    original as ``__wrapped__``; :func:`uninstall_parsers` puts the originals back.
    """
    with _LOCK:
        wrappers: dict[int, Any] = {}  # one wrapper per original, so aliases stay identical
        for module_name, attr, kind in _TARGETS:
            module = _module(module_name)
            current = getattr(module, attr)
            if getattr(current, _WRAPPER_FLAG, False):
                continue
            wrapper = wrappers.get(id(current))
            if wrapper is None:
                factory = _wrap_parse_measure if kind == "measure" else _wrap_parse_trec_measure
                wrapper = factory(current)
                wrapper.__wrapped__ = current
                setattr(wrapper, _WRAPPER_FLAG, True)
                wrappers[id(current)] = wrapper
            _ORIGINALS[(module_name, attr)] = current
            setattr(module, attr, wrapper)


def uninstall_parsers() -> None:
    """Restore the parser functions that :func:`install_parsers` replaced (no-op when not installed)."""
    with _LOCK:
        for (module_name, attr), original in list(_ORIGINALS.items()):
            module = _module(module_name)
            if getattr(getattr(module, attr), _WRAPPER_FLAG, False):
                setattr(module, attr, original)
            del _ORIGINALS[(module_name, attr)]


def parsers_installed() -> bool:
    """True when all four ``ir_measures`` parser attributes hold the wrappers of :func:`install_parsers`."""
    return all(getattr(getattr(_module(m), a), _WRAPPER_FLAG, False) for m, a, _ in _TARGETS)
