"""Measure definitions: typed parameters, validation and canonical names.

Every measure of ``ir_incomplete`` is an ``ir_measures.Measure`` subclass that

* declares its parameters as :class:`Param` objects (type, default, allowed values, range, description),
* validates them when the measure object is made (``ValueError`` naming the parameter and its choices,
  never ``assert``),
* prints as its canonical string: space free, parameters in declaration order, defaults omitted, so that
  ``ir_incomplete.parse(repr(m)) == m``.

Measures do not compute anything themselves: :meth:`IncompleteMeasure.compute` hands the ranked-code
matrix (see :mod:`ir_incomplete.data`) to a kernel of :mod:`ir_incomplete.kernels`.

Extra columns
-------------
A measure may report more than one number per query (RBP's residual; a bootstrap interval). It then
implements ``compute_details`` (a dict of per-row arrays: ``value`` and the other fields) and sets
``METRIC_TYPE``, the NamedTuple ``(query_id, measure, value, *fields)`` that ``iter_calc`` yields (the
``ir_measures.CwlMetric`` pattern; ``pt.Experiment`` and aggregates read ``value`` only). The fields that
result tables should carry are declared in ``EXTRA_COLUMNS``, each with its value for a query that a run
does not answer. With that one declaration:

* :func:`ir_incomplete.evaluate` adds one column per declared field after ``value`` (NaN on the rows of
  measures that do not declare it); aggregated (``per_query=False``) each column is reduced like
  ``value`` (the mean over the queries);
* the command line appends the fields, in declaration order, as further tab-separated columns of that
  measure's tsv lines (other lines keep ``ir_measures``' format) and as keys of its ``jsonl`` records;
* :func:`ir_incomplete.pivot` writes the cell with ``CELL_FORMAT`` and :func:`ir_incomplete.plot_intervals`
  draws ``INTERVAL``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

import ir_measures
from ir_measures.measures.base import _NOT_PROVIDED

NOT_PROVIDED = _NOT_PROVIDED

__all__ = ["Param", "IncompleteMeasure", "NOT_PROVIDED", "UNSET", "canonical_float"]


def canonical_float(value: float) -> float:
    """Floats are stored as ``float``; ``2`` and ``2.0`` denote the same parameter value."""
    return float(value)


class Param(ir_measures.measures.ParamInfo):
    """A typed measure parameter.

    ``kind`` is one of

    * ``"scalar"``: one value of ``dtype`` (``int``, ``float``, ``str`` or ``bool``), optionally restricted to
      ``choices`` or to the range ``[minimum, maximum]`` (open ends with ``min_inclusive=False`` /
      ``max_inclusive=False``);
    * ``"distribution"``: a tuple of floats, each ≥ 0, summing to 1 (± ``1e-6``), e.g. ``g=0.1,0.9``.

    ``allow_none`` admits ``None`` (written ``none`` in measure strings) as an explicit value.
    """

    def __init__(
        self,
        dtype,
        default=NOT_PROVIDED,
        desc: str = "",
        choices=NOT_PROVIDED,
        minimum=None,
        maximum=None,
        min_inclusive: bool = True,
        max_inclusive: bool = True,
        required: bool = False,
        kind: str = "scalar",
        allow_none: bool = False,
    ):
        super().__init__(dtype=dtype, required=required, choices=choices, default=default, desc=desc)
        self.minimum = minimum
        self.maximum = maximum
        self.min_inclusive = min_inclusive
        self.max_inclusive = max_inclusive
        self.kind = kind
        self.allow_none = allow_none

    # -- description used by error messages and by ``ir_incomplete measures`` --------------------------
    def describe_allowed(self) -> str:
        if self.kind == "distribution":
            return "comma-separated probabilities >= 0 that sum to 1, e.g. 0.1,0.9"
        if self.choices is not NOT_PROVIDED:
            text = "one of " + ", ".join(str(c) for c in self.choices)
        elif self.dtype is bool:
            text = "True or False"
        elif self.dtype in (int, float):
            text = "an integer" if self.dtype is int else "a number"
            lo = hi = ""
            if self.minimum is not None:
                lo = f"{'>=' if self.min_inclusive else '>'} {self.minimum}"
            if self.maximum is not None:
                hi = f"{'<=' if self.max_inclusive else '<'} {self.maximum}"
            bounds = " and ".join(b for b in (lo, hi) if b)
            if bounds:
                text += " " + bounds
        else:
            text = f"a {self.dtype.__name__}"
        if self.allow_none:
            text += ", or none"
        return text

    def coerce(self, owner: str, name: str, value: Any) -> Any:
        """Return the canonical form of ``value`` or raise ``ValueError`` naming ``owner``'s ``name``."""

        def fail(reason: str):
            raise ValueError(
                f"{owner}: invalid value {value!r} for parameter {name!r} ({reason}); "
                f"expected {self.describe_allowed()}"
            )

        if value is None or (isinstance(value, str) and value.lower() == "none" and self.allow_none):
            if self.allow_none:
                return None
            fail("None is not allowed")
        if self.kind == "distribution":
            items = value if isinstance(value, (tuple, list)) else (value,)
            out = []
            for item in items:
                if isinstance(item, bool) or not isinstance(item, (int, float)):
                    fail(f"{item!r} is not a number")
                item = float(item)
                if not math.isfinite(item) or item < 0:
                    fail(f"entry {item!r} is negative or not finite")
                out.append(item)
            if not out:
                fail("empty")
            total = math.fsum(out)
            if abs(total - 1.0) > 1e-6:
                fail(f"entries sum to {total!r}, not 1")
            return tuple(out)
        if self.dtype is bool:
            if isinstance(value, bool):
                return value
            fail("not True or False")
        if self.dtype is int:
            if isinstance(value, bool):
                fail("not an integer")
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int):
                fail("not an integer")
        elif self.dtype is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                fail("not a number")
            value = canonical_float(value)
            if not math.isfinite(value):
                fail("not finite")
        elif self.dtype is str:
            if not isinstance(value, str):
                fail("not a word")
        if self.choices is not NOT_PROVIDED and value not in self.choices:
            fail("not a valid choice")
        if self.minimum is not None:
            if value < self.minimum or (not self.min_inclusive and value == self.minimum):
                fail("out of range")
        if self.maximum is not None:
            if value > self.maximum or (not self.max_inclusive and value == self.maximum):
                fail("out of range")
        return value

    def validate(self, value) -> bool:  # ir_measures' interface (used by its providers' templates)
        if value is NOT_PROVIDED:
            return not self.required
        try:
            self.coerce("measure", "parameter", value)
        except ValueError:
            return False
        return True


class _Unset:
    """Signature default of a parameter that has no default value (e.g. no cut-off)."""

    def __repr__(self):
        return "<unset>"


UNSET = _Unset()


def _annotation(spec: ir_measures.measures.ParamInfo) -> Any:
    annotation: Any
    if isinstance(spec, Param) and spec.kind == "distribution":
        annotation = tuple[float, ...]
    elif spec.choices is not NOT_PROVIDED:
        annotation = Literal[tuple(spec.choices)]
    else:
        annotation = spec.dtype
    return annotation | None if isinstance(spec, Param) and spec.allow_none else annotation


class _Signature:
    """``__signature__`` of measure classes and objects, made from ``SUPPORTED_PARAMS``: keyword-only
    parameters in canonical order, with their types and defaults (an object's own values are the
    defaults of calling it, as ``infAP(c=1.5)(rel=2)`` keeps ``c=1.5``)."""

    def __get__(self, measure, cls=None):
        cls = type(measure) if cls is None else cls
        params = {} if measure is None else measure.params
        parameters = []
        for name, spec in cls.SUPPORTED_PARAMS.items():
            default = params.get(name, spec.default)
            if default is NOT_PROVIDED:
                default = inspect.Parameter.empty if spec.required else UNSET
            kind = inspect.Parameter.KEYWORD_ONLY
            parameters.append(inspect.Parameter(name, kind, default=default, annotation=_annotation(spec)))
        return inspect.Signature(parameters, return_annotation=cls.__name__)


class IncompleteMeasure(ir_measures.measures.Measure):
    """Base class of every measure implemented by ``ir_incomplete``.

    Subclasses set ``__name__``/``NAME``, ``SUPPORTED_PARAMS`` (an ordered dict of :class:`Param`; the
    order is the canonical order of the string form), ``SHORT_DESC`` and a docstring that states the
    formula, the paper and the conventions, and implement :meth:`compute`.

    ``EXTENSION_PARAMS`` lists the parameters that the measure adds on top of an ``ir_measures`` built-in
    of the same name (e.g. infAP's ``c``): a measure whose extension parameters all keep their defaults
    is the built-in measure and stays with the built-in provider in ``ir_measures``' default pipeline.
    ``None`` means the measure has no built-in twin at all.
    """

    _ir_incomplete = True
    __signature__ = _Signature()
    EXTENSION_PARAMS: tuple[str, ...] | None = None
    SUPPORTED_PARAMS: dict[str, ir_measures.measures.ParamInfo] = {}
    SHORT_DESC = ""
    EXAMPLE: str | None = None
    # set (with ``compute_details``) by measures that report per-query details: the NamedTuple type
    # ``(query_id, measure, value, *extra)`` they yield instead of ``ir_measures.Metric``
    METRIC_TYPE: ClassVar[type[Any]]
    #: the details that result tables carry as columns beside ``value`` (see "Extra columns" above):
    #: ``{field: its value for a query the run does not answer}``; every field is a key of
    #: ``compute_details`` and a field of ``METRIC_TYPE``
    EXTRA_COLUMNS: ClassVar[dict[str, float]] = {}
    #: the two fields (``value`` or extra columns) that bound the interval plotted and shown by
    #: :func:`ir_incomplete.pivot`, or ``None``
    INTERVAL: ClassVar[tuple[str, str] | None] = None
    #: how :func:`ir_incomplete.pivot` writes a cell: ``str.format`` fields ``value``, ``lower``,
    #: ``upper`` (the :attr:`INTERVAL`) and the extra columns, each already rounded; ``None``: the default
    #: (``{value} [{lower}, {upper}]`` when there is an interval)
    CELL_FORMAT: ClassVar[str | None] = None

    def __init__(self, **params):
        owner = self.NAME or type(self).__name__
        clean = {}
        for name, value in params.items():
            if value is UNSET:  # a signature default: the parameter is not given
                continue
            if name not in self.SUPPORTED_PARAMS:
                valid = ", ".join(self._param_names_for_errors())
                raise ValueError(f"{owner} has no parameter {name!r}; valid parameters: {valid}")
            clean[name] = self.param_spec(name).coerce(owner, name, value)
        missing = [n for n, s in self.SUPPORTED_PARAMS.items() if s.required and n not in clean]
        if missing:
            raise ValueError(
                f"{owner} needs parameter {missing[0]!r} "
                f"({self.param_spec(missing[0]).describe_allowed()})"
                + (f", e.g. {self.EXAMPLE}" if self.EXAMPLE else "")
            )
        # canonical order: the declaration order of SUPPORTED_PARAMS
        ordered = {n: clean[n] for n in self.SUPPORTED_PARAMS if n in clean}
        super().__init__(**ordered)
        self.validated = True

    @classmethod
    def param_spec(cls, name: str) -> Param:
        """The :class:`Param` declared for parameter ``name`` (``KeyError`` when there is none).

        ``SUPPORTED_PARAMS`` is typed as ``ir_measures``' ``ParamInfo`` mapping; the measures of this
        package declare :class:`Param` objects only, which is checked here."""
        spec = cls.SUPPORTED_PARAMS[name]
        if not isinstance(spec, Param):
            raise TypeError(
                f"{cls.__name__}.SUPPORTED_PARAMS[{name!r}] is a {type(spec).__name__}, not an ir_incomplete Param"
            )
        return spec

    @classmethod
    def _param_names_for_errors(cls) -> Iterable[str]:
        for name in cls.SUPPORTED_PARAMS:
            yield f"{name} (@k)" if name == cls.AT_PARAM else name

    # ir_measures calls this from Provider.supports(); our parameters are checked in __init__.
    def validate_params(self):
        self.validated = True

    def __getitem__(self, key):
        spec = self.SUPPORTED_PARAMS[key]
        return self.params.get(key, spec.default)

    def get(self, key):
        """The value of parameter ``key`` (its default when not given; ``None`` for an absent cut-off)."""
        value = self[key]
        return None if value is NOT_PROVIDED else value

    def non_default_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.params.items() if v != self.SUPPORTED_PARAMS[k].default}

    @classmethod
    def _family(cls):
        """The registry object of a measure with a required parameter (``GAP`` without ``g``, ``iP``
        without its cut-off): the bare name, callable to give a complete measure (``xGAP(g=(0.1, 0.9))``,
        ``iP @ 10``); computing it raises the measure's own error naming what is missing."""
        family = cls.__new__(cls)
        ir_measures.measures.Measure.__init__(family)
        family.validated = True
        return family

    def is_builtin_equivalent(self) -> bool:
        """True when every extension parameter keeps its default (the measure means the built-in one)."""
        if self.EXTENSION_PARAMS is None:
            return False
        return not any(k in self.EXTENSION_PARAMS for k in self.non_default_params())

    def __repr__(self):
        from ir_incomplete.grammar import format_measure

        at = self.params.get(self.AT_PARAM, None)
        items = [(k, v) for k, v in self.non_default_params().items() if k != self.AT_PARAM]
        return format_measure(self.NAME or type(self).__name__, items, at)

    # -- computation -----------------------------------------------------------------------------------
    def compute(self, ranked, qrels):
        """Per-row values (``float64`` array, one per row of ``ranked``) of this measure.

        ``ranked`` is a :class:`ir_incomplete.data.RankedLists`, ``qrels`` the
        :class:`ir_incomplete.data.Qrels` it was built against.
        """
        raise NotImplementedError
