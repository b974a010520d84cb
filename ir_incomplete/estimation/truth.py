"""The value a design-based estimate targets, computed from complete judgments: what a study compares
:func:`ir_incomplete.estimate` against.

:func:`design_truth` takes the runs, complete judgments (an oracle qrels) and the design, and returns
each measure with every pair of the design's *universe* judged. The universe is the one
:func:`ir_incomplete.estimate` estimates over (its module docstring): the top ``depth`` of the runs the
design was drawn from, plus the design's pairs — in particular its certainty pairs (π = 1: the
``qrels=`` given to :func:`~ir_incomplete.judging.sample`, the pairs of earlier rounds), which may lie
outside the runs' top ``depth`` and whose relevant documents count in R as trec_eval's R counts every
relevant document of the qrels. Every other document counts as nonrelevant, however the complete
judgments grade it. The topics are the design's (a topic a run does not answer scores 0), so that a
census (every pair of the universe judged) gives exactly :func:`~ir_incomplete.estimate`'s values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ir_incomplete.estimation.universe import Universe

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = ["design_truth", "check_oracle"]


def design_truth(
    runs: Any,
    qrels: Any,
    design: Any,
    measures: Any,
    *,
    per_query: bool = False,
    depth: int | None = None,
    score_precision: str | None = None,
) -> pd.DataFrame:
    """The value complete judgment of the design's universe gives: the target of
    :func:`ir_incomplete.estimate` (``estimate(runs, judgments, design, measures)``).

    The universe is the top ``depth`` of the runs the design was drawn from (``design.attrs["runs"]``,
    else every run given) on the design's topics, plus every pair of the design (its certainty pairs,
    π = 1, may lie outside the runs' top ``depth``: judgments made before sampling and earlier
    rounds). Each pair of the universe gets its grade in ``qrels`` (a pair ``qrels`` does not judge, or
    judges with a negative grade, gets 0); documents outside the universe count as nonrelevant. The
    value is then each measure as trec_eval computes it with those judgments (R, and AP's and nDCG's
    denominators, count every relevant pair of the universe, also those no run retrieves in its top
    ``k``), averaged over the design's topics (the topics :func:`~ir_incomplete.estimate` averages over;
    a topic a run does not answer scores 0).

    Parameters
    ----------
    runs
        Anything :func:`ir_incomplete.evaluate` accepts; every run the design was drawn from must be
        among them (as for :func:`~ir_incomplete.estimate`). Runs not among them get the value with the
        same universe (what their estimates target).
    qrels
        The complete judgments, any qrels form (e.g. an oracle in a simulation, or every judgment made
        in a study). With a design that holds judgments made before sampling, include them (they are
        part of the universe and are graded from ``qrels``). They must judge every topic of the design
        (``ValueError`` naming the others, :func:`check_oracle`: ids are compared as text, ``'01'`` is
        not ``'1'``).
    design
        The design (DataFrame or file of :func:`~ir_incomplete.judging.sample` or
        :func:`~ir_incomplete.judging.sample_rounds`).
    measures
        As :func:`~ir_incomplete.estimate` takes them: ``AP@k``, ``nDCG@k``, ``P@k``, ``RBP(p=..)@k``,
        ``R``.
    per_query
        ``True``: one row per (run, query_id, measure), as ``estimate(..., per_query=True)``.
    depth, score_precision
        As :func:`~ir_incomplete.estimate`; ``None``: the design's (a design that records no depth needs
        ``depth=``; the score precision defaults to the one it was drawn at, else ``"float32"``).

    Returns
    -------
    DataFrame ``run, measure, value`` (or ``run, query_id, measure, value``), in
    :func:`~ir_incomplete.estimate`'s order and with its measure names. ``attrs``: ``depth``, ``topics``
    (their number), ``universe`` (the number of pairs judged), ``relevant`` (of them, grade >= 1).
    """
    import warnings

    from ir_incomplete.data.columns import _ids
    from ir_incomplete.data.qrels import Qrels
    from ir_incomplete.estimation import _check_depth, estimate, read_design

    frame = read_design(design)
    attrs = dict(frame.attrs)
    depth = _check_depth(depth, attrs.get("depth"))
    if score_precision is None:
        score_precision = str(attrs.get("score_precision", "float32"))
    if not len(frame):
        raise ValueError("the design has no pairs")
    # the topics estimate() averages over: the recorded ones (and the design's), else the universe runs'
    design_topics = pd.unique(frame["query_id"].to_numpy())
    recorded = attrs.get("topics")
    topics = None
    if recorded is not None:
        topics = pd.unique(np.r_[_ids(np.asarray(list(recorded), dtype=object), "design topics"), design_topics])
    space = Universe(runs, depth, attrs.get("runs"), score_precision, topics=topics)
    if recorded is None:
        more = design_topics[pd.Index(space.topic_ids).get_indexer(design_topics) < 0]
        if len(more):
            space.set_topics(np.r_[space.topic_ids, more])
    code = space.topic_codes(frame["query_id"])
    unit = space.lookup(code, frame["doc_id"].to_numpy(dtype=object))
    pi = frame["pi"].to_numpy(dtype=float)
    astray = np.flatnonzero((unit < 0) & (pi < 1.0))
    if len(astray):
        i = int(astray[0])
        raise ValueError(
            f"the design's pair ({frame['query_id'].iloc[i]}, {frame['doc_id'].iloc[i]}) with pi={pi[i]:g} is not "
            f"in the top {depth} of the runs it was drawn from ({len(astray)} such pairs): the design's universe "
            f"disagrees with the runs given"
        )
    space.add_units(code, frame["doc_id"].to_numpy(dtype=object))
    truth = Qrels.from_any(qrels).to_frame()
    check_oracle(truth, space.topic_ids, "the qrels")
    # the census of that universe: every pair judged with certainty, graded by the complete judgments
    census = space.frame(np.arange(space.n_units), pi=1.0)
    truth = truth[truth["relevance"].to_numpy() >= 0]
    grade = pd.Series(
        truth["relevance"].to_numpy(dtype=np.int64),
        index=pd.MultiIndex.from_arrays([truth["query_id"].astype(str), truth["doc_id"].astype(str)]),
    )
    keys = pd.MultiIndex.from_arrays([census["query_id"].astype(str), census["doc_id"].astype(str)])
    judgments = census[["query_id", "doc_id"]].assign(relevance=grade.reindex(keys).fillna(0).to_numpy(dtype=np.int64))
    # what defines the universe, nothing of how the design was drawn (its pairs are all certain here)
    census.attrs = {
        "design": "poisson",
        "depth": depth,
        "topics": [str(t) for t in space.topic_ids],
        # the design's own: estimate() refuses another one, as it refuses it for the design
        "score_precision": attrs.get("score_precision", score_precision),
    }
    if attrs.get("runs") is not None:  # else every run given, as for the design
        census.attrs["runs"] = list(space.universe_runs)
    with warnings.catch_warnings():
        # a run reaching outside the universe: estimate() on the design warns already; its target is this
        warnings.filterwarnings("ignore", message=r".* retrieve documents outside the design's universe")
        out = estimate(
            space.prepared,
            judgments,
            census,
            measures,
            per_query=per_query,
            control="none",
            score_precision=score_precision,
        )
    columns = ["run", "query_id", "measure", "value"] if per_query else ["run", "measure", "value"]
    result = out[columns].reset_index(drop=True)
    result.attrs = {
        "depth": depth,
        "topics": len(space.topic_ids),
        "universe": int(space.n_units),
        "relevant": int((judgments["relevance"] >= 1).sum()),
    }
    return result


def _id_form(text: str) -> str:
    """An id with the differences of form that text comparison keeps apart removed (case, spaces, leading
    zeros of a number): only to suggest what a mismatch of ids may be."""
    text = text.strip().lower()
    return (text.lstrip("0") or "0") if text.isdigit() else text


def check_oracle(oracle: pd.DataFrame, topics: Any, what: str = "the oracle qrels") -> None:
    """``ValueError`` unless ``oracle`` (``query_id, doc_id, relevance``, ids as text) judges at least one
    document (grade ≥ 0) of every query in ``topics`` (the queries the runs answer): the grades of a
    query's pairs come from these judgments, and a query they do not judge would grade every pair 0.
    Ids are compared as text, as trec_eval compares them; the message shows a query of ``oracle`` that
    differs only in form (``'01'`` for ``'1'``, case, spaces) when there is one. ``what`` names
    ``oracle`` in the message."""
    judged = pd.unique(oracle.loc[oracle["relevance"].to_numpy() >= 0, "query_id"].astype(str).to_numpy(dtype=object))
    wanted = pd.unique(np.asarray([str(t) for t in topics], dtype=object))
    missing = wanted[~pd.Series(wanted).isin(set(judged)).to_numpy()]
    if not len(missing):
        return
    hint = ""
    forms = {_id_form(str(q)): str(q) for q in judged}
    alike = [(str(q), forms[_id_form(str(q))]) for q in missing if _id_form(str(q)) in forms]
    if alike:
        ours, theirs = alike[0]
        hint = (
            f"; ids are compared as text, and their query {theirs!r} differs only in form from the runs' {ours!r} "
            f"({len(alike)} such quer{'y' if len(alike) == 1 else 'ies'}): write the ids the same way"
        )
    raise ValueError(
        f"{what} judge no document for {len(missing)} quer{'y' if len(missing) == 1 else 'ies'} the runs answer "
        f"(first: {', '.join(map(repr, [str(q) for q in missing[:5]]))}); every answered query needs judgments, "
        f"else each of its pairs is graded 0 (restrict the runs to the judged queries first){hint}"
    )
