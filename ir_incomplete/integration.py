"""Wiring into ``ir_measures`` and PyTerrier (done once, idempotently, by ``import ir_incomplete``).

* our measures enter ``ir_measures.measures.registry``; those that extend a built-in (``infAP``)
  replace its entry and its module attributes, so ``ir_measures.infAP(c=1.5)`` works and plain
  ``infAP`` still equals the built-in object;
* our provider enters ``ir_measures.providers.registry`` and ``ir_measures.DefaultPipeline`` right
  after ``runtime``;
* every other provider is guarded so that it never claims a measure whose parameters it does not
  understand (pytrec_eval would otherwise compute plain infAP for ``infAP(c=1.5)``);
* the built-in measures that we also compute natively (``REFERENCE_MEASURES``: ``AP``, ``nDCG``, ``P``,
  …) are not registered: ``ir_measures.AP`` stays the built-in object and the built-in providers keep
  claiming it in the default pipeline (our provider computes it only when asked directly);
* ``ir_measures.parse_measure`` / ``parse_trec_measure`` are wrapped to fall back on our grammar
  (opt out with ``IR_INCOMPLETE_PATCH_PARSERS=0`` or ``activate(patch_parsers=False)``);
* the default pipeline (``ir_measures.calc_aggregate``, ``iter_calc``, ``calc``, ``evaluator``) accepts
  PyTerrier's column names (qrels ``qid/docno/label``, runs ``qid/docno/score``): such a DataFrame is
  renamed once per call (a new frame; the caller's is not modified) before any provider sees it.
"""

from __future__ import annotations

import os
import sys

import ir_measures

from ir_incomplete import grammar
from ir_incomplete.incomplete_provider import IncompleteProvider
from ir_incomplete.measures import ALL_MEASURES, IncompleteMeasure

__all__ = ["activate", "provider", "PATCH_PARSERS_ENV"]

PATCH_PARSERS_ENV = "IR_INCOMPLETE_PATCH_PARSERS"


def _existing_or_new_provider() -> IncompleteProvider:
    """The provider registered by an earlier import (e.g. of a reloaded module), else a new one."""
    registered = ir_measures.providers.registry.get(IncompleteProvider.NAME)
    return registered if isinstance(registered, IncompleteProvider) else IncompleteProvider()


provider = _existing_or_new_provider()


def _names(measure):
    """The registry name of ``measure`` and its aliases (``ALIASES``, e.g. ``BPref`` for ``Bpref``)."""
    return (measure.NAME,) + tuple(getattr(measure, "ALIASES", ()))


def _register_measures():
    registry = ir_measures.measures.registry
    for measure in ALL_MEASURES:
        for name in _names(measure):
            registry[name] = measure
            for module in (ir_measures, ir_measures.measures):
                if hasattr(module, name):
                    setattr(module, name, measure)
    pt_measures = sys.modules.get("pyterrier.measures")
    if pt_measures is not None:
        for measure in ALL_MEASURES:
            for name in _names(measure):
                setattr(pt_measures, name, measure)


def _guard(other):
    if getattr(other.supports, "_ir_incomplete_guard", False):
        return
    original = other.supports

    def supports(measure, _original=original):
        if isinstance(measure, IncompleteMeasure) and not measure.is_builtin_equivalent():
            return False
        return _original(measure)

    # function attributes go through ``__dict__`` (typed), not as attributes a function type lacks
    supports.__dict__.update(_ir_incomplete_guard=True, __wrapped__=original)
    other.supports = supports


def _register_provider():
    ir_measures.providers.registry[IncompleteProvider.NAME] = provider
    for other in ir_measures.providers.registry.values():
        if other is not provider:
            _guard(other)
    pipeline = ir_measures.DefaultPipeline.providers
    if not any(p is provider for p in pipeline):
        names = [getattr(p, "NAME", None) for p in pipeline]
        index = names.index("runtime") + 1 if "runtime" in names else 0
        pipeline.insert(index, provider)


_QREL_RENAMES = {"qid": "query_id", "docno": "doc_id", "label": "relevance"}
_RUN_RENAMES = {"qid": "query_id", "docno": "doc_id"}


def _standard_columns(frame, renames):
    """``frame`` with PyTerrier's column names replaced by ``ir_measures``' (a new DataFrame), or ``frame``
    itself when it is not a DataFrame or has nothing to rename."""
    pandas = sys.modules.get("pandas")
    if pandas is None or not isinstance(frame, pandas.DataFrame):
        return frame
    columns = set(frame.columns)
    mapping = {old: new for old, new in renames.items() if old in columns and new not in columns}
    return frame.rename(columns=mapping) if mapping else frame


def _accept_pyterrier_columns(pipeline):
    """Make ``pipeline`` (a FallbackProvider) rename PyTerrier columns of qrels and runs, once per call.

    ``calc_aggregate``, ``calc`` and ``iter_calc`` of a provider all go through its ``_evaluator`` and the
    evaluator's ``iter_calc``, so wrapping those two covers every entry point."""
    if getattr(pipeline._evaluator, "_ir_incomplete_columns", False):
        return
    original = pipeline._evaluator

    def _evaluator(measures, qrels, _original=original):
        evaluator = _original(measures, _standard_columns(qrels, _QREL_RENAMES))
        iter_calc = evaluator.iter_calc

        def iter_calc_any_columns(run, _iter_calc=iter_calc):
            return _iter_calc(_standard_columns(run, _RUN_RENAMES))

        evaluator.iter_calc = iter_calc_any_columns
        return evaluator

    _evaluator.__dict__.update(_ir_incomplete_columns=True, __wrapped__=original)
    pipeline._evaluator = _evaluator


def activate(patch_parsers: bool | None = None) -> IncompleteProvider:
    """Register measures and provider with ``ir_measures`` (idempotent; ``import ir_incomplete`` calls it).

    ``patch_parsers``: wrap ``ir_measures.parse_measure``/``parse_trec_measure`` so that our measure
    strings parse there too (and in ``pt.Experiment``). ``None`` reads ``IR_INCOMPLETE_PATCH_PARSERS``
    (``0`` turns it off; default on); ``False`` removes an installed wrapper.
    """
    _register_measures()
    _register_provider()
    _accept_pyterrier_columns(ir_measures.DefaultPipeline)
    if patch_parsers is None:
        patch_parsers = os.environ.get(PATCH_PARSERS_ENV, "1").strip().lower() not in ("0", "false", "no", "off")
    if patch_parsers:
        grammar.install_parsers()
    else:
        grammar.uninstall_parsers()
    return provider
