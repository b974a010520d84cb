"""Layer 3b: the ``ir_measures`` provider that routes measures to our kernels.

In ``ir_measures``' default pipeline the provider sits right after ``runtime`` and claims

* every measure that only ``ir_incomplete`` defines (e.g. ``indAP``), and
* built-in names that carry a parameter the built-in provider does not understand
  (``infAP(c=1.5)``, ``infAP@10``, ``infAP(variant=uniform)``).

Plain ``infAP`` stays with pytrec_eval there, but ``ir_measures.providers.registry['ir_incomplete']``
computes it too when asked directly (that is how parity with pytrec_eval is proven). The same holds for
the reference measures of :mod:`ir_incomplete.measures.reference` (``AP``, ``nDCG@k``, ``P@k``, …): never
claimed in the pipeline, computed when asked directly and by :func:`ir_incomplete.evaluate`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import ir_measures
from ir_measures import Metric

from ir_incomplete.data import Qrels, prepare_runs
from ir_incomplete.measures import ALL_MEASURES, REFERENCE_MEASURES, IncompleteMeasure

__all__ = ["IncompleteProvider", "IncompleteEvaluator", "as_incomplete", "computable"]

_BY_NAME: dict[str, type[IncompleteMeasure]] = {}


def _by_name() -> dict[str, type[IncompleteMeasure]]:
    if not _BY_NAME:
        _BY_NAME.update({m.NAME: type(m) for m in ALL_MEASURES})
        _BY_NAME.update({m.NAME: m for m in REFERENCE_MEASURES})
    return _BY_NAME


def as_incomplete(measure) -> IncompleteMeasure:
    """Our measure object for ``measure`` (a built-in object of a name we implement is converted,
    keeping its parameters); ``ValueError`` when ``ir_incomplete`` does not compute it (an unknown
    name, or a parameter value that only ``ir_measures`` supports, such as ``nDCG(gains=...)``)."""
    if isinstance(measure, IncompleteMeasure):
        return measure
    name = getattr(measure, "NAME", None)
    ours = _by_name().get(name) if isinstance(name, str) else None
    if ours is None:
        names = ", ".join(sorted(_by_name()))
        raise ValueError(f"ir_incomplete does not compute {measure!r}; it computes: {names}")
    try:
        return ours(**measure.params)
    except ValueError as exc:
        raise ValueError(f"ir_incomplete does not compute {measure!r}: {exc}") from None


def computable(measure) -> bool:
    """True when ``ir_incomplete`` can compute ``measure``: ours, or a built-in with a name we implement
    and parameters we support."""
    if isinstance(measure, IncompleteMeasure):
        return True
    if getattr(measure, "NAME", None) not in _by_name():
        return False
    try:
        as_incomplete(measure)
    except ValueError:
        return False
    return True


class IncompleteEvaluator(ir_measures.providers.Evaluator):
    """Evaluates runs against qrels that were converted once."""

    def __init__(self, measures: Iterable, qrels: Qrels, score_precision: str = "float32"):
        measures = list(measures)
        self._pairs = [(m, as_incomplete(m)) for m in measures]
        self.qrels = qrels
        self.score_precision = score_precision
        super().__init__(measures, list(qrels.topic_ids))

    def _iter_calc(self, run) -> Iterator[Metric]:
        prepared = prepare_runs({"run": run}, self.score_precision, topics=self.qrels.topic_index)
        for ranked in prepared.rank_blocks(self.qrels):  # one block unless lengths differ wildly
            yield from self._block_metrics(ranked)

    def _block_metrics(self, ranked) -> Iterator[Metric]:
        topics = self.qrels.topic_ids[ranked.topic_of_row]
        for measure, ours in self._pairs:
            details = getattr(ours, "compute_details", None)
            if details is not None:
                # measures with per-query details (e.g. BootNDCG's interval) yield their METRIC_TYPE, a
                # NamedTuple ``(query_id, measure, value, *extra)`` like ir_measures.CwlMetric; ``value``
                # stays the point estimate, which is all that pt.Experiment and aggregates read
                columns = details(ranked, self.qrels)
                metric_type = ours.METRIC_TYPE
                extra = [columns[name].tolist() for name in metric_type._fields[2:]]
                for qid, *values in zip(topics.tolist(), *extra, strict=True):
                    yield metric_type(qid, measure, *values)
                continue
            values = ours.compute(ranked, self.qrels)
            for qid, value in zip(topics.tolist(), values.tolist(), strict=True):
                yield Metric(query_id=qid, measure=measure, value=value)


class IncompleteProvider(ir_measures.providers.Provider):
    """Measures for incomplete relevance judgments (infAP with smoothing and variants, …).

    ``negative`` chooses what a negative qrels grade means: ``"pooled_unjudged"`` (trec_eval, default)
    or ``"zero"`` (judged nonrelevant); ``score_precision`` is ``"float32"`` (trec_eval 9, pytrec_eval,
    default) or ``"float64"`` (trec_eval 10).
    """

    NAME = "ir_incomplete"

    def __init__(self, negative: str = "pooled_unjudged", score_precision: str = "float32"):
        super().__init__()
        self.negative = negative
        self.score_precision = score_precision

    SUPPORTED_MEASURES: list[ir_measures.measures.Measure] = list(ALL_MEASURES)  # listed for documentation

    def supports(self, measure) -> bool:
        """Claimed in a pipeline: our measures, except those equal to a built-in measure."""
        return isinstance(measure, IncompleteMeasure) and not measure.is_builtin_equivalent()

    def _evaluator(self, measures, qrels) -> IncompleteEvaluator:
        return IncompleteEvaluator(
            measures, Qrels.from_any(qrels, negative=self.negative), score_precision=self.score_precision
        )
