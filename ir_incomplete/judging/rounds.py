"""Designs drawn in rounds: each round's inclusion probabilities set from the judgments of the rounds before.

:func:`sample_rounds` runs :func:`~ir_incomplete.judging.sample` round by round: round 1 draws from
the prior (by default judge-next's criterion, :class:`~ir_incomplete.judging.JudgeNext`), the pairs
drawn are judged (by a callable, or by an oracle qrels in a simulation), and round ``k + 1`` draws with
``previous=`` the design so far and ``judgments=`` every judgment so far: the pairs judged join the
certainty stratum (``pi = 1``) and the prior is recomputed from their grades
(:func:`~ir_incomplete.judging.strategy_prior`). Conditional on the earlier rounds each round is a
Poisson design (or, ``design="stratified"``, a stratified one), so the last design, with every judgment,
is what :func:`ir_incomplete.estimate` reads: its estimates are unbiased and its intervals hold however
the strategy used the judgments.

Round ``k``'s seed is ``seed`` for round 1 (so one round is exactly ``sample(..., seed=seed)``) and
``numpy.random.SeedSequence([seed, k])`` after: the same inputs and seed give the same rounds.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ir_incomplete._progress import check_progress, progress_bar
from ir_incomplete.estimation.truth import check_oracle
from ir_incomplete.estimation.universe import MIN_PER_TOPIC
from ir_incomplete.judging._candidates import _judgment_frame, check_budget, is_empty_qrels
from ir_incomplete.judging.designs import sample

__all__ = ["sample_rounds", "DesignRounds", "round_budgets", "round_seed", "as_judge"]


class DesignRounds(NamedTuple):
    """What :func:`sample_rounds` returns: ``design`` (the last round's design: every pair judged, with
    ``pi``, ``stratum`` and the ``round`` that drew it), ``judgments`` (``query_id, doc_id, relevance``
    of every design pair, the given qrels included) and ``rounds`` (one row per round: ``round``,
    ``budget``, ``expected`` (Σ pi of the round's new pairs), ``judged`` (pairs judged in the round),
    ``relevant`` (of them, grade ≥ 1), ``total`` (pairs judged so far, qrels excluded))."""

    design: pd.DataFrame
    judgments: pd.DataFrame
    rounds: pd.DataFrame


def round_budgets(budget: Any, rounds: Any) -> list[int]:
    """The budget of each round: ``rounds`` an integer (``budget`` split as evenly as possible, the first
    rounds taking the remainder) or a list of per-round budgets summing to ``budget``."""
    budget = check_budget(budget)
    if isinstance(rounds, (int, np.integer)) and not isinstance(rounds, (bool, np.bool_)):
        if rounds < 1:
            raise ValueError(f"rounds={rounds!r} is out of range; expected an integer >= 1 or a list of budgets")
        if rounds > budget:
            raise ValueError(f"rounds={rounds} is more than budget={budget}: every round needs at least 1 judgment")
        per, extra = divmod(budget, int(rounds))
        return [per + (1 if i < extra else 0) for i in range(int(rounds))]
    if isinstance(rounds, (str, bytes)) or not isinstance(rounds, Sequence):
        raise ValueError(f"rounds={rounds!r} is not valid; expected an integer >= 1 or a list of per-round budgets")
    sizes = [check_budget(r, "rounds") for r in rounds]
    if not sizes:
        raise ValueError("rounds is an empty list; give per-round budgets such as [500, 500]")
    if sum(sizes) != budget:
        raise ValueError(f"rounds={list(rounds)!r} sum to {sum(sizes)}, not budget={budget}")
    return sizes


def round_seed(seed: int, k: int) -> int:
    """The seed of round ``k`` (1-based): ``seed`` itself for round 1."""
    if k == 1:
        return seed
    return int(np.random.SeedSequence([int(seed), int(k)]).generate_state(1)[0])


def _check_seed(seed: Any) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed={seed!r} is not valid; expected an integer >= 0")
    return int(seed)


def _is_callable_judge(judge: Any) -> bool:
    return callable(judge) and not isinstance(judge, (pd.DataFrame, str, os.PathLike))


def as_judge(judge: Any) -> Callable[[pd.DataFrame], np.ndarray]:
    """A function ``pairs → grades`` (one integer ≥ 0 per row of a ``query_id, doc_id`` table) from a
    judge: a callable taking that table and returning the grades (a sequence in the rows' order, or a
    table ``query_id, doc_id, relevance`` covering every pair), or an oracle qrels (any qrels form; a
    pair it does not judge, or judges with a negative grade, gets 0)."""
    if _is_callable_judge(judge):
        return lambda pairs: _checked_grades(judge(pairs.copy()), pairs)
    oracle = _judgment_frame(judge, "oracle")
    oracle = oracle[oracle["relevance"] >= 0]
    grades = pd.Series(
        oracle["relevance"].to_numpy(dtype=np.int64),
        index=pd.MultiIndex.from_arrays([oracle["query_id"].astype(str), oracle["doc_id"].astype(str)]),
    )

    def from_oracle(pairs: pd.DataFrame) -> np.ndarray:
        keys = pd.MultiIndex.from_arrays([pairs["query_id"].astype(str), pairs["doc_id"].astype(str)])
        return grades.reindex(keys).fillna(0).to_numpy(dtype=np.int64)

    return from_oracle


def _checked_grades(result: Any, pairs: pd.DataFrame) -> np.ndarray:
    """The grades a judge callable returned, one per pair, as integers ≥ 0 (``ValueError`` naming the pair
    otherwise)."""
    if isinstance(result, pd.DataFrame):
        if "relevance" not in result.columns:
            raise ValueError(
                f"the judge returned a table without a relevance column (columns {list(map(str, result.columns))}); "
                f"return one grade per pair or a table query_id, doc_id, relevance"
            )
        table = _judgment_frame(result, "the judge's grades")
        index = pd.MultiIndex.from_arrays([table["query_id"].astype(str), table["doc_id"].astype(str)])
        at = index.get_indexer(pd.MultiIndex.from_arrays([pairs["query_id"].astype(str), pairs["doc_id"].astype(str)]))
        if (at < 0).any():
            i = int(np.flatnonzero(at < 0)[0])
            raise ValueError(
                f"the judge returned no grade for ({pairs['query_id'].iloc[i]}, {pairs['doc_id'].iloc[i]}); "
                f"grade every pair it is given"
            )
        values = table["relevance"].to_numpy()[at]
    else:
        values = np.asarray(result).reshape(-1) if result is not None else np.zeros(0)
        if len(values) != len(pairs):
            raise ValueError(f"the judge returned {len(values)} grades for {len(pairs)} pairs; return one per pair")
    numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(numbers) | (numbers < 0) | (numbers != np.round(numbers)))
    if len(bad):
        i = int(bad[0])
        raise ValueError(
            f"the judge's grade {values[i]} for ({pairs['query_id'].iloc[i]}, {pairs['doc_id'].iloc[i]}) is not "
            f"an integer >= 0"
        )
    return numbers.astype(np.int64)


def sample_rounds(
    runs: Any,
    budget: int,
    rounds: int | Sequence[int],
    judge: Any,
    *,
    prior: Any = "judge_next",
    depth: int = 100,
    qrels: Any = None,
    predictions: Any = None,
    seed: int = 0,
    uniform: float = 0.1,
    certain: int = 0,
    score_precision: str = "float32",
    progress: bool | None = None,
    design: str = "poisson",
    strata: int = 10,
    allocation: str = "global",
    min_per_topic: int = MIN_PER_TOPIC,
) -> DesignRounds:
    """Draw and judge a design in ``rounds``, each round's prior updated with the judgments so far.

    Parameters
    ----------
    runs
        Anything :func:`ir_incomplete.evaluate` accepts; read once.
    budget
        The expected number of new judgments over all rounds (the realised number differs by about
        ``±sqrt(Σ pi (1 − pi))``, as in :func:`~ir_incomplete.judging.sample`).
    rounds
        The number of rounds (``budget`` split evenly) or a list of per-round budgets summing to ``budget``.
    judge
        A callable taking a ``query_id, doc_id`` table of the pairs to judge and returning their grades
        (one integer ≥ 0 per row, or a table ``query_id, doc_id, relevance``), or an oracle qrels (a
        simulation: a pair it does not judge gets grade 0; it must judge every query the runs answer,
        :func:`~ir_incomplete.estimation.truth.check_oracle`).
    prior
        What each round's inclusion probabilities follow: a judging strategy (an object or a method name,
        default ``"judge_next"``: :class:`~ir_incomplete.judging.JudgeNext` for AP) whose
        :func:`~ir_incomplete.judging.strategy_prior` is recomputed from the judgments before every round,
        or any prior :func:`~ir_incomplete.judging.sample` takes (``"ap"``, ``"rrf"``, ``"uniform"``, a
        table: the same every round, but with ``predictions`` the labels' calibration still learns).
    qrels
        Judgments already made (certainty stratum of round 1, graded as given, not counted).
    depth, predictions, uniform, score_precision, design, strata, allocation, min_per_topic
        As in :func:`~ir_incomplete.judging.sample`, every round (``design="stratified"``: each round
        draws exactly its budget, in ``strata`` groups of its open pairs; ``allocation="topics"``: each
        round spreads its budget over the topics). Each is checked by
        :func:`~ir_incomplete.judging.sample` itself, with its messages.
    certain
        Round 1 only: its top ``certain`` pairs of the priority pool are judged with ``pi = 1``, out of
        round 1's budget (at most that budget).
    seed
        Round 1's seed; later rounds' seeds follow from it (module docstring).
    progress
        A ``tqdm`` bar on stderr, one step per round (``None``: automatic, as :func:`ir_incomplete.evaluate`).

    Returns
    -------
    :class:`DesignRounds` ``(design, judgments, rounds)``: ``estimate(runs, judgments, design, ...)``
    gives the design-based estimates.
    """
    from ir_incomplete.data import prepare_runs
    from ir_incomplete.data.prepared import PreparedRuns

    sizes = round_budgets(budget, rounds)
    plain_int = isinstance(certain, (int, np.integer)) and not isinstance(certain, (bool, np.bool_))
    if len(sizes) > 1 and plain_int and certain > sizes[0]:  # else sample() checks certain, as its own
        raise ValueError(
            f"certain={certain} is more than round 1's budget {sizes[0]} (budget={sum(sizes)} in "
            f"{len(sizes)} rounds {sizes}): the top {certain} pairs are judged with pi = 1 in round 1, out of its "
            f"budget; lower certain or give round 1 more (rounds=[{certain}, ...])"
        )
    seed = _check_seed(seed)
    check_progress(progress)
    if not _is_callable_judge(judge):
        judge = _judgment_frame(judge, "oracle")
    prepared = runs if isinstance(runs, PreparedRuns) else prepare_runs(runs, score_precision)
    if isinstance(judge, pd.DataFrame):
        check_oracle(judge, pd.unique(np.asarray(prepared.row_query, dtype=object)), "the oracle qrels (judge=)")
    grade_of = as_judge(judge)
    known = pd.DataFrame({"query_id": [], "doc_id": [], "relevance": []}).astype(
        {"query_id": object, "doc_id": object, "relevance": np.int64}
    )
    if not is_empty_qrels(qrels):
        given = _judgment_frame(qrels, "qrels")
        known = given[given["relevance"] >= 0].reset_index(drop=True)
    drawn: pd.DataFrame | None = None
    log = []
    total = 0
    bar = progress_bar(len(sizes), progress, "sample rounds", "round")
    for k, size in enumerate(sizes, 1):
        drawn = sample(
            prepared,
            size,
            depth=depth,
            qrels=qrels if k == 1 else None,
            predictions=predictions,
            seed=round_seed(seed, k),
            prior=prior,
            uniform=uniform,
            certain=certain if k == 1 else 0,
            previous=drawn,
            judgments=known if drawn is not None else None,
            score_precision=score_precision,
            design=design,
            strata=strata,
            allocation=allocation,
            min_per_topic=min_per_topic,
        )
        keys = pd.MultiIndex.from_arrays([drawn["query_id"].astype(str), drawn["doc_id"].astype(str)])
        seen = pd.MultiIndex.from_arrays([known["query_id"].astype(str), known["doc_id"].astype(str)])
        new = drawn.loc[~keys.isin(seen), ["query_id", "doc_id"]].reset_index(drop=True)
        grades = grade_of(new) if len(new) else np.zeros(0, dtype=np.int64)
        judged = new.assign(relevance=grades)
        known = pd.concat([known, judged], ignore_index=True)
        total += len(judged)
        log.append(
            {
                "round": k,
                "budget": size,
                "expected": float(drawn.attrs.get("expected_judgments", np.nan)),
                "judged": len(judged),
                "relevant": int((grades >= 1).sum()),
                "total": total,
            }
        )
        bar.update(1)
    bar.close()
    if drawn is None:  # round_budgets gives at least one round
        raise ValueError("no rounds to draw")
    drawn.attrs["rounds"] = len(sizes)
    drawn.attrs["round_budgets"] = sizes
    drawn.attrs["budget"] = int(sum(sizes))
    drawn.attrs["expected_judgments"] = float(sum(row["expected"] for row in log))
    drawn.attrs["seed"] = seed
    table = pd.DataFrame(log)
    return DesignRounds(drawn, known, table)
