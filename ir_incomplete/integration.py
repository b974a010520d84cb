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
  renamed once per call (a new frame; the caller's is not modified) before any provider sees it;
* the other way round, ``pt.Experiment`` accepts ``ir_measures``' column names (qrels ``query_id/doc_id/
  relevance`` as :func:`ir_incomplete.read_trec_qrels` gives them; results given as a DataFrame with
  ``query_id/doc_id/score``), renamed the same way: PyTerrier itself merges the qrels on ``qid``. A
  run frame for ``pt.Transformer.from_df`` goes through :func:`ir_incomplete.to_pyterrier`.
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


#: ``ir_measures``' column names (those of :func:`ir_incomplete.read_trec_qrels` and ``read_trec_run``) →
#: PyTerrier's, for frames given to ``pt.Experiment``
_PT_QREL_RENAMES = {"query_id": "qid", "doc_id": "docno", "relevance": "label"}
_PT_RUN_RENAMES = {"query_id": "qid", "doc_id": "docno"}
#: where PyTerrier (1.x) defines ``Experiment``, and the modules that re-export it
_PT_EXPERIMENT_MODULE = "pyterrier._evaluation._experiment"
_PT_EXPORTS = ("pyterrier._evaluation", "pyterrier")


def _wrap_experiment(original):
    """``pt.Experiment`` that also takes qrels and result frames with ``ir_measures``' column names.

    PyTerrier merges the qrels with the topics on ``qid`` before any measure is computed, so a qrels
    frame with ``query_id, doc_id, relevance`` (:func:`ir_incomplete.read_trec_qrels`) fails there with a
    ``MergeError``. Such a frame, and a system given as a DataFrame of results with ``query_id, doc_id``
    (:func:`ir_incomplete.read_trec_run`), is renamed to PyTerrier's ``qid, docno, label`` (a new frame;
    the caller's is not modified; a column whose PyTerrier name is present already is left alone) and
    the call is PyTerrier's own. Arguments that do not fit the signature go unchanged to PyTerrier,
    which reports them."""
    if getattr(original, "_ir_incomplete_columns", False):
        return original
    import functools
    import inspect

    try:
        signature = inspect.signature(original)
    except (TypeError, ValueError):
        return original

    @functools.wraps(original)
    def Experiment(*args, **kwargs):  # noqa: N802 (PyTerrier's name)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return original(*args, **kwargs)
        if "qrels" in bound.arguments:
            bound.arguments["qrels"] = _standard_columns(bound.arguments["qrels"], _PT_QREL_RENAMES)
        systems = bound.arguments.get("retr_systems")
        if isinstance(systems, (list, tuple)):
            bound.arguments["retr_systems"] = type(systems)(_standard_columns(s, _PT_RUN_RENAMES) for s in systems)
        return original(*bound.args, **bound.kwargs)

    Experiment.__dict__.update(_ir_incomplete_columns=True)
    return Experiment


def _patch_experiment(module) -> None:
    """Wrap the ``Experiment`` that ``module`` (PyTerrier's defining module) holds, and the same function
    where PyTerrier re-exported it already (``pt._evaluation``, ``pt``)."""
    original = getattr(module, "Experiment", None)
    if not callable(original):
        return
    wrapped = _wrap_experiment(original)
    for holder in (module, *(sys.modules.get(name) for name in _PT_EXPORTS)):
        if holder is not None and getattr(holder, "Experiment", None) is original:
            holder.Experiment = wrapped


class _ThenPatch:
    """Wraps the loader of PyTerrier's ``Experiment`` module: runs it, restores it, then patches it."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        try:
            self.loader.exec_module(module)
        finally:
            module.__loader__ = self.loader
            if getattr(module, "__spec__", None) is not None:
                module.__spec__.loader = self.loader
        _patch_experiment(module)

    def __getattr__(self, name):  # get_resource_reader, is_package, ... of the real loader
        if name == "loader":
            raise AttributeError(name)
        return getattr(self.loader, name)


class _ExperimentFinder:
    """A ``sys.meta_path`` finder that only reacts to PyTerrier's ``Experiment`` module (then removes
    itself): ``import ir_incomplete`` may come before ``import pyterrier``, or in the middle of it (the
    plugin is loaded when PyTerrier first imports ``ir_measures``), before ``Experiment`` exists."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _PT_EXPERIMENT_MODULE:
            return None
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _ExperimentFinder)]
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(fullname, path, target) if find_spec is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _ThenPatch(spec.loader)
        return spec


def _accept_our_columns_in_pyterrier() -> None:
    """Make ``pt.Experiment`` take the frames of our readers (see :func:`_wrap_experiment`): now when
    PyTerrier's ``Experiment`` module is loaded, else as soon as it is."""
    module = sys.modules.get(_PT_EXPERIMENT_MODULE)
    if module is not None:
        _patch_experiment(module)
    elif not any(isinstance(f, _ExperimentFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _ExperimentFinder())


def activate(patch_parsers: bool | None = None) -> IncompleteProvider:
    """Register measures and provider with ``ir_measures`` (idempotent; ``import ir_incomplete`` calls it).

    ``patch_parsers``: wrap ``ir_measures.parse_measure``/``parse_trec_measure`` so that our measure
    strings parse there too (and in ``pt.Experiment``). ``None`` reads ``IR_INCOMPLETE_PATCH_PARSERS``
    (``0`` turns it off; default on); ``False`` removes an installed wrapper.
    """
    _register_measures()
    _register_provider()
    _accept_pyterrier_columns(ir_measures.DefaultPipeline)
    _accept_our_columns_in_pyterrier()
    if patch_parsers is None:
        patch_parsers = os.environ.get(PATCH_PARSERS_ENV, "1").strip().lower() not in ("0", "false", "no", "off")
    if patch_parsers:
        grammar.install_parsers()
    else:
        grammar.uninstall_parsers()
    return provider
