"""Measure strings to measure objects: the name looked up in ``ir_measures.measures.registry``, the
parameters of ``ir_measures``' built-in measures checked (our measures check their own).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import ir_measures

from ir_incomplete.grammar.errors import UnknownMeasureError, _clip_message
from ir_incomplete.grammar.parser import parse_parts

__all__ = ["parse", "parse_measure", "check_measure"]


def _registry() -> dict:
    return ir_measures.measures.registry


def _unknown_measure(name: str, registry: dict) -> UnknownMeasureError:
    import difflib  # only needed on this error path

    from ir_incomplete.trec_names import trec_eval_equivalent, trec_eval_message

    trec = trec_eval_message(name)  # P_5, ndcg_cut_10, map: point to the ir_measures name
    if trec:
        return UnknownMeasureError(trec, name=name, suggestions=[str(m) for m in trec_eval_equivalent(name) or ()])
    names = sorted(registry)
    folded = [n for n in names if n.lower() == name.lower()]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    suggestions = folded + [n for n in close if n not in folded]
    message = f"unknown measure {name!r}"
    if suggestions:
        message += f"; did you mean {' or '.join(repr(s) for s in suggestions)}?"
    message += f"; valid measures: {', '.join(names)}"
    return UnknownMeasureError(message, name=name, suggestions=suggestions)


def _param_names(measure) -> str:
    names = [f"{n} (@)" if n == measure.AT_PARAM else n for n in measure.SUPPORTED_PARAMS]
    return ", ".join(names) if names else "none"


def _describe(info) -> str:
    choices = getattr(info, "choices", None)
    if choices is not None and choices is not _not_provided():
        return "one of " + ", ".join(str(c) for c in choices)
    dtype = getattr(info, "dtype", None)
    if dtype is bool:
        return "True or False"
    if dtype is int:
        return "an integer"
    if dtype is float:
        return "a number"
    if isinstance(dtype, type):
        return f"a {dtype.__name__}"
    return "a value"


def _not_provided():
    return ir_measures.measures.base._NOT_PROVIDED


#: the largest cut-off passed to ``ir_measures``' own measures (trec_eval's providers take C integers)
_MAX_BUILTIN_CUTOFF = 2**31 - 1


def _coerce_builtin(name: str, key: str, value: Any, info) -> Any:
    """Check (and convert) one parameter value of an ``ir_measures`` built-in measure."""

    def fail(reason: str):
        desc = getattr(info, "desc", None)
        about = f" ({desc})" if desc else ""
        raise ValueError(
            f"{name}: invalid value {value!r} for parameter {key!r}{about}: {reason}; expected {_describe(info)}"
        )

    dtype = getattr(info, "dtype", None)
    if dtype is bool:
        if not isinstance(value, bool):
            fail("not True or False")
    elif dtype is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            fail("not an integer")
    elif dtype is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            fail("not a number")
        value = float(value)
        if not math.isfinite(value):
            fail("not finite")
    elif isinstance(dtype, type) and not isinstance(value, dtype):
        fail(f"not a {dtype.__name__}")
    if key == "cutoff" and isinstance(value, int) and not 1 <= value <= _MAX_BUILTIN_CUTOFF:
        fail(f"a cut-off must be between 1 and {_MAX_BUILTIN_CUTOFF}")
    choices = getattr(info, "choices", _not_provided())
    if choices is not _not_provided() and choices is not None and value not in choices:
        fail("not a valid choice")
    return value


def _required_params(measure) -> list[str]:
    """The parameters of an ``ir_measures`` built-in that are required and have no default."""
    supported = getattr(measure, "SUPPORTED_PARAMS", {}) or {}
    return [
        key
        for key, info in supported.items()
        if getattr(info, "required", False) and getattr(info, "default", _not_provided()) is _not_provided()
    ]


def _missing_message(name: str, measure, missing: Sequence[str]) -> str:
    """``SDCG: missing required parameter max_rel (maximum relevance score; an integer); SDCG needs
    cutoff (written @k) and max_rel``: what is missing, what it means and all that the measure needs."""
    supported = measure.SUPPORTED_PARAMS
    at_param = getattr(measure, "AT_PARAM", "cutoff")
    at_token = "@k" if at_param == "cutoff" else f"@{at_param}"

    def about(key: str) -> str:
        info = supported[key]
        parts = [p for p in (getattr(info, "desc", None), _describe(info)) if p]
        text = "; ".join(parts)
        if key == at_param:
            text += f", written {getattr(measure, 'NAME', name)}{at_token}"
        return f"{key} ({text})"

    plural = "s" if len(missing) > 1 else ""
    message = f"{name}: missing required parameter{plural} {' and '.join(about(k) for k in missing)}"
    required = _required_params(measure)
    if len(required) > len(missing):
        names = [f"{k} (written {at_token})" if k == at_param else k for k in required]
        message += f"; {getattr(measure, 'NAME', name)} needs {' and '.join(names)}"
    return message


def _validate_builtin(name: str, measure, params: dict[str, Any], at_given: bool) -> dict[str, Any]:
    supported = getattr(measure, "SUPPORTED_PARAMS", {}) or {}
    clean: dict[str, Any] = {}
    for key, value in params.items():
        info = supported.get(key)
        if info is None:
            if at_given and key == measure.AT_PARAM:
                raise ValueError(
                    f"{name} takes no @ value (it has no parameter {key!r}); valid parameters: {_param_names(measure)}"
                )
            raise ValueError(f"{name} has no parameter {key!r}; valid parameters: {_param_names(measure)}")
        clean[key] = _coerce_builtin(name, key, value, info)
    missing = [key for key in _required_params(measure) if key not in clean]
    if missing:  # ir_measures' providers would fail on it with an AssertionError while computing
        raise ValueError(_missing_message(name, measure, missing))
    return clean


def check_measure(measure: ir_measures.Measure) -> ir_measures.Measure:
    """A measure that its providers can compute: ``measure`` itself, or for an ``ir_measures`` built-in
    given an int where it wants a float (``INST(T=2,max_rel=3)``, which its providers refuse) the same
    measure with that float, as :func:`parse` reads it; else a ``ValueError`` naming the measure and the
    offending parameter.

    Measures of this package validate their parameters when built. An ``ir_measures`` built-in (e.g.
    ``ir_measures.SDCG@10`` built in Python, which ``ir_measures`` accepts until a provider fails with an
    ``AssertionError``) is checked as :func:`parse` checks one: no unknown parameter, values of the
    parameter's type and choices, and every required parameter without a default given.
    """
    if not isinstance(measure, ir_measures.Measure):
        raise TypeError(f"{measure!r} is not a measure (give a Measure object or a string such as 'infAP(c=1.5)@10')")
    if getattr(measure, "_ir_incomplete", False):
        return measure
    params = dict(getattr(measure, "params", None) or {})
    try:
        label = repr(measure)
    except Exception:  # ir_measures' repr fails on a parameter the measure does not have
        label = str(getattr(measure, "NAME", None) or type(measure).__name__)
    clean = _validate_builtin(label, measure, params, at_given=False)
    if any(type(clean[key]) is not type(value) for key, value in params.items()):
        measure = type(measure)(**clean)
    return measure


def parse(text: str | ir_measures.Measure) -> ir_measures.Measure:
    """Parse a measure string into an ``ir_measures.Measure`` (a ``Measure`` is returned unchanged).

    The name is looked up in ``ir_measures.measures.registry`` at call time; an unknown name raises
    :class:`UnknownMeasureError` (a ``NameError``) with close matches and the list of valid names. The
    measure is built as ``registry[name](**params)``, with ``@x`` setting the measure's ``AT_PARAM``.
    Measures of this package validate their parameters themselves (their ``ValueError`` propagates);
    ``ir_measures`` built-ins are checked here: an unknown parameter or a value of the wrong type or
    outside the choices raises ``ValueError`` naming the measure and the parameter (ints are accepted
    where floats are expected, and integral floats where ints are), and so does a required parameter
    without a default that is not given (``SDCG@10`` without ``max_rel``, ``P`` without a cut-off:
    ``ir_measures`` would accept them and its providers fail while computing).
    """
    if isinstance(text, ir_measures.Measure):
        return text
    if not isinstance(text, str):
        raise TypeError(f"a measure string must be a str, not {type(text).__name__}")
    name, params, at = parse_parts(text)
    registry = _registry()
    measure = registry.get(name)
    if measure is None:
        raise _unknown_measure(name, registry)
    at_param = getattr(measure, "AT_PARAM", "cutoff")
    if at is not None:
        if at_param in params:
            raise ValueError(f"{name}: parameter {at_param!r} given twice (as {at_param}= and as @{at})")
        params[at_param] = at
    try:
        if not getattr(measure, "_ir_incomplete", False):
            params = _validate_builtin(name, measure, params, at is not None)
        return measure(**params)
    except ValueError as exc:  # a message quoting a long value (a big tuple or dict) is cut short
        message = str(exc)
        if len(message) <= 240 and "\n" not in message:
            raise
        raise ValueError(_clip_message(message)) from exc


parse_measure = parse
