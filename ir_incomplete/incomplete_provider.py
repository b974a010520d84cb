"""Layer 3b: the ``ir_measures`` provider that routes measures to our kernels.

In ``ir_measures``' default pipeline the provider sits right after ``runtime`` and claims

* every measure that only ``ir_incomplete`` defines (e.g. ``indAP``), and
* built-in names that carry a parameter the built-in provider does not understand
  (``infAP(c=1.5)``, ``infAP@10``, ``infAP(variant=uniform)``).

Plain ``infAP`` stays with pytrec_eval there, but ``ir_measures.providers.registry['ir_incomplete']``
computes it too when asked directly (that is how parity with pytrec_eval is proven). The same holds for
the reference measures of :mod:`ir_incomplete.measures.reference` (``AP``, ``nDCG@k``, ``P@k``, …): never
claimed in the pipeline, computed when asked directly and by :func:`ir_incomplete.evaluate`.

The design-based measures (``StatAP``, …; :mod:`ir_incomplete.measures.design_based`) are estimated by
:func:`ir_incomplete.estimate` over whole runs (:func:`design_estimates`): here one run at a time, from the
design alone (``universe="design"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import ir_measures
import numpy as np
from ir_measures import Metric

from ir_incomplete.data import Qrels, prepare_runs
from ir_incomplete.data.named_files import evaluation_scope, read_named_file
from ir_incomplete.measures import ALL_MEASURES, REFERENCE_MEASURES, DesignMeasure, IncompleteMeasure
from ir_incomplete.predictions import read_predictions_file

__all__ = [
    "IncompleteProvider",
    "IncompleteEvaluator",
    "as_incomplete",
    "computable",
    "is_design_based",
    "design_estimates",
]

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


def is_design_based(measure) -> bool:
    """True for the design-based measures (``StatAP``, …), which :func:`design_estimates` computes."""
    return isinstance(measure, DesignMeasure)


def _read_measure_design(measure: DesignMeasure):
    """The design file ``measure`` names, read and checked; a ``ValueError`` naming the measure and the
    file when it cannot be read."""
    from ir_incomplete.estimation import read_design

    path = measure.get("design")
    try:  # once per evaluation (a named pipe can be read once): see ir_incomplete.data.named_files
        return read_named_file(path, "design", read_design)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ValueError(f"{measure!r}: cannot read the design file {path!r}: {reason}") from None
    except (ValueError, TypeError) as exc:
        said = str(exc)  # read_design's messages about the file name it already
        where = "" if said.startswith("design file ") else f"design file {path!r}: "
        raise ValueError(f"{measure!r}: {where}{said}") from None


def _check_topics(measure: DesignMeasure, frame, qrels: Qrels) -> None:
    """The qrels' queries must be among the design's (those it records, ``attrs["topics"]``, and those of
    its pairs): an estimate covers the design's queries only. A design query the qrels do not judge (a
    query where no pair happened to be sampled) is estimated all the same, as :func:`ir_incomplete.estimate`
    does."""
    design_topics = set(frame["query_id"].tolist())
    recorded = frame.attrs.get("topics")
    if isinstance(recorded, (list, tuple)) and recorded:
        from ir_incomplete.data.columns import _ids

        design_topics.update(_ids(np.asarray(list(recorded), dtype=object), "design topics").tolist())
    outside = [q for q in qrels.topic_ids.tolist() if str(q) not in design_topics]
    if outside:
        raise ValueError(
            f"{measure!r}: the qrels judge {len(outside)} queries the design {measure.get('design')!r} does not "
            f"sample (e.g. {str(outside[0])!r}); a design-based estimate covers the design's "
            f"{len(design_topics)} queries only: give the judgments of those queries"
        )


def design_estimates(
    measures: Iterable[DesignMeasure],
    runs: Any,
    qrels: Qrels,
    *,
    universe: str,
    per_query: bool = False,
    pairs: bool = False,
    interval: float = 0.9,
    score_precision: str = "float32",
) -> dict[str, Any]:
    """``{repr(measure): its rows of ir_incomplete.estimate(...)}`` for design-based measures: one call of
    :func:`ir_incomplete.estimate` per design, predictions and control, with ``qrels`` as the judgments
    and the measures' :meth:`~ir_incomplete.measures.design_based.DesignMeasure.estimand` strings (the
    ``measure`` column holds ``repr(measure)``). ``universe``: ``"runs"`` (every run of the design is in
    ``runs``: all control variates) or ``"design"`` (one run at a time, control none only). A problem
    (no design file, a pair without a judgment, predictions with ``universe="design"``) is a
    ``ValueError`` that names the measure."""
    from ir_incomplete.estimation import estimate

    groups: dict[tuple, list[DesignMeasure]] = {}
    for measure in measures:
        key = (measure.get("design"), measure.get("predictions"), measure.control())
        groups.setdefault(key, []).append(measure)
    out: dict[str, Any] = {}
    for (_, path, control), members in groups.items():
        first = members[0]
        frame = _read_measure_design(first)
        _check_topics(first, frame, qrels)
        # several measures may estimate the same thing (StatAP(design=d) and StatAP(design=d,control=none)
        # both ask for AP with control none): one estimate, given to each of them under its own name
        names: dict[str, list[str]] = {}
        for m in members:
            spelled = names.setdefault(m.estimand(), [])
            if repr(m) not in spelled:
                spelled.append(repr(m))
        try:
            # read once per evaluation, as the design (one run at a time, estimate() refuses them unread)
            predictions = path if path is None or universe == "design" else read_predictions_file(path)
            table = estimate(
                runs,
                qrels,
                frame,
                list(names),
                predictions=predictions,
                control=control,
                universe=universe,
                per_query=per_query,
                pairs=pairs,
                interval=interval,
                score_precision=score_precision,
            )
        except (ValueError, OSError) as exc:
            label = first if len(members) == 1 else ", ".join(repr(m) for m in members)
            message = str(exc)
            if universe == "design" and ("universe='runs'" in message or "whole universe" in message):
                message += (
                    "; ir_measures and pt.Experiment give one run at a time: use ir_incomplete.evaluate or the "
                    "ir_incomplete command with every run of the design"
                )
            raise ValueError(f"{label}: {message}") from None
        estimated = table["measure"].to_numpy()
        for estimand, spellings in names.items():
            rows = table[estimated == estimand].reset_index(drop=True)
            for name in spellings:
                out[name] = rows.assign(measure=name)
    return out


class IncompleteEvaluator(ir_measures.providers.Evaluator):
    """Evaluates runs against qrels that were converted once."""

    def __init__(self, measures: Iterable, qrels: Qrels, score_precision: str = "float32"):
        measures = list(measures)
        pairs = [(m, as_incomplete(m)) for m in measures]
        self._pairs = [(m, ours) for m, ours in pairs if not is_design_based(ours)]
        self._design = [(m, ours) for m, ours in pairs if isinstance(ours, DesignMeasure)]
        self.qrels = qrels
        self.score_precision = score_precision
        super().__init__(measures, list(qrels.topic_ids))

    def _iter_calc(self, run) -> Iterator[Metric]:
        with evaluation_scope():  # files named in the measures are read once for the run
            prepared = prepare_runs({"run": run}, self.score_precision, topics=self.qrels.topic_index)
            for ranked in prepared.rank_blocks(self.qrels):  # one block unless lengths differ wildly
                yield from self._block_metrics(ranked)
            if self._design:
                yield from self._design_metrics(prepared)

    def _design_metrics(self, prepared) -> Iterator[Metric]:
        """Design-based measures of the one run: Horvitz–Thompson from the design alone."""
        tables = design_estimates(
            [ours for _, ours in self._design],
            prepared,
            self.qrels,
            universe="design",
            per_query=True,
            score_precision=self.score_precision,
        )
        for measure, ours in self._design:
            table = tables[repr(ours)]
            values = table["value"].to_numpy(dtype=np.float64).tolist()
            for qid, value in zip(table["query_id"].tolist(), values, strict=True):
                yield Metric(query_id=qid, measure=measure, value=value)

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
