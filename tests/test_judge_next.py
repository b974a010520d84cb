"""judge-next: the criterion on cases with an obvious answer, the Strategy protocol, bad input, CLI."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

from ir_incomplete.cli.judging import judge_next_main as main
from ir_incomplete.judging.mtc import (
    JudgeNext,
    _ap_gradient,
    _pairwise_spread,
    judge_next,
)


def _run(docs: list[str], qid: str = "q1") -> pd.DataFrame:
    return pd.DataFrame({"query_id": qid, "doc_id": docs, "score": np.arange(len(docs), 0, -1, dtype=float)})


def _random_runs(seed: int = 1, n_runs: int = 6, n_topics: int = 4, depth: int = 20, n_docs: int = 40):
    rng = np.random.default_rng(seed)
    runs = {}
    for r in range(n_runs):
        parts = []
        for t in range(n_topics):
            docs = [f"d{i}" for i in rng.permutation(n_docs)[:depth]]
            parts.append(_run(docs, qid=f"t{t}"))
        runs[f"run{r}"] = pd.concat(parts, ignore_index=True)
    return runs


def _qrels(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


# -- the pieces of the criterion, against brute force ---------------------------------------------------
def test_ap_gradient_is_the_derivative_of_the_ap_numerator():
    rng = np.random.default_rng(3)
    e = rng.random(7)
    rank = np.arange(1, 8, dtype=float)

    def numerator(x):
        return float(np.sum(x * np.cumsum(x) / rank))

    g = _ap_gradient(e, rank, np.zeros(7, dtype=np.int64))
    for k in range(7):  # the numerator is multilinear when x_k² = x_k: the exact difference at x_k = 1 vs 0
        one, zero = e.copy(), e.copy()
        one[k], zero[k] = 1.0, 0.0
        assert g[k] == pytest.approx(numerator(one) - numerator(zero), abs=1e-12)


def test_ap_gradient_keeps_rows_apart():
    e = np.array([1.0, 0.5, 1.0, 0.0, 1.0])
    rank = np.array([1.0, 2.0, 1.0, 2.0, 3.0])
    row = np.array([0, 0, 1, 1, 1])
    g = _ap_gradient(e, rank, row)
    assert g[1] == pytest.approx((1 + 1) / 2)  # nothing below it in row 0
    assert g[2] == pytest.approx(1 + 0 / 2 + 1 / 3)
    assert g[4] == pytest.approx((1 + 1 + 0) / 3)


def test_pairwise_spread_is_the_mean_absolute_difference_over_run_pairs():
    rng = np.random.default_rng(5)
    n_runs, n_cand = 5, 4
    values = np.where(rng.random((n_runs, n_cand)) < 0.6, rng.random((n_runs, n_cand)), 0.0)
    runs, cands = np.nonzero(values)
    got = _pairwise_spread(cands, values[runs, cands], n_cand, n_runs)
    for c in range(n_cand):
        pairs = [abs(values[s, c] - values[t, c]) for s, t in itertools.combinations(range(n_runs), 2)]
        assert got[c] == pytest.approx(np.mean(pairs), abs=1e-12)


# -- obvious answers ------------------------------------------------------------------------------------
def test_document_every_run_ranks_first_is_not_informative():
    # Three runs agree on 'top' at rank 1 and differ only at rank 2: 'a', 'b' or 'c'. Judging 'top'
    # cannot reorder the runs; each of 'a', 'b', 'c' separates one run from the others.
    runs = {name: _run(["top", doc]) for name, doc in (("A", "a"), ("B", "b"), ("C", "c"))}
    for measure in ("AP", "nDCG@10", "P@2"):
        batch = judge_next(runs, None, measure=measure, budget=4)
        assert list(batch["doc_id"])[-1] == "top", measure
        assert batch["priority"].iloc[-1] < batch["priority"].iloc[0]


def test_nDCG_at_k_ignores_documents_below_the_cutoff():
    runs = {"A": _run(["x", "a"]), "B": _run(["y", "b"])}
    batch = judge_next(runs, None, measure="nDCG@1", budget=4)
    ranked = dict(zip(batch["doc_id"], batch["priority"], strict=True))
    assert ranked["a"] == 0.0 and ranked["b"] == 0.0
    assert ranked["x"] > 0.0 and ranked["y"] > 0.0


def test_topic_with_many_relevant_documents_found_gets_more_judgments():
    runs = _random_runs(seed=2, n_topics=2)
    # topic t0: every judged document relevant; t1: none
    judged = []
    for t, grade in (("t0", 1), ("t1", 0)):
        docs = runs["run0"].loc[runs["run0"]["query_id"] == t, "doc_id"].head(5)
        judged += [(t, d, grade) for d in docs]
    batch = judge_next(runs, _qrels(judged), budget=10)
    counts = batch["query_id"].value_counts()
    assert counts.get("t0", 0) > counts.get("t1", 0)


def test_predictions_move_predicted_relevant_documents_up():
    runs = {name: _run(["a", "b", "c", "d"]) for name in ("A", "B")}
    runs["C"] = _run(["d", "c", "b", "a"])
    plain = judge_next(runs, None, budget=4)
    predicted = _qrels([("q1", "d", 2), ("q1", "a", 0)])
    with_predictions = judge_next(runs, None, budget=4, predictions=predicted)
    assert list(plain["doc_id"])[:2] == ["a", "d"]  # without predictions 'a' (ranked first by two runs) leads
    assert list(with_predictions["doc_id"])[:2] == ["d", "a"]
    before = dict(zip(plain["doc_id"], plain["priority"], strict=True))
    after = dict(zip(with_predictions["doc_id"], with_predictions["priority"], strict=True))
    assert after["d"] > before["d"] and after["a"] < before["a"]


# -- protocol, determinism, budget ----------------------------------------------------------------------
def test_same_seed_same_output_and_works_from_empty_qrels():
    runs = _random_runs()
    empty = _qrels([])
    first = judge_next(runs, empty, budget=25, seed=7)
    again = judge_next(runs, None, budget=25, seed=7)
    pd.testing.assert_frame_equal(first, again)
    assert list(first.columns) == ["query_id", "doc_id", "priority"]
    assert len(first) == 25
    assert first["priority"].is_monotonic_decreasing


def test_seed_orders_ties():
    # every document has the same criterion: the order is the seed's
    runs = {"A": _run([f"d{i}" for i in range(30)]), "B": _run([f"e{i}" for i in range(30)])}
    orders = {tuple(judge_next(runs, None, measure="P@30", budget=60, seed=s)["doc_id"]) for s in range(4)}
    assert len(orders) > 1


def test_never_returns_judged_pairs_or_duplicates_and_respects_the_budget():
    runs = _random_runs(seed=4)
    strategy = JudgeNext("AP", seed=3)
    state = strategy.start(runs)
    seen: set[tuple[str, str]] = set()
    rng = np.random.default_rng(0)
    for budget in (7, 13, 30):
        batch = strategy.next_batch(state, budget)
        assert len(batch) == budget
        pairs = list(zip(batch["query_id"], batch["doc_id"], strict=True))
        assert len(set(pairs)) == len(pairs)
        assert not seen & set(pairs)
        seen |= set(pairs)
        judged = batch[["query_id", "doc_id"]].assign(relevance=rng.integers(0, 2, len(batch)))
        strategy.update(state, judged)
    assert state.n_judged == len(seen)
    total = state.candidates.n_pairs
    rest = strategy.next_batch(state, 10_000)
    assert len(rest) == total - len(seen)  # fewer than asked once everything else is judged
    strategy.update(state, rest.assign(relevance=0))
    assert len(strategy.next_batch(state, 5)) == 0


def test_qrels_given_at_start_are_not_proposed_and_negative_grades_stay_unjudged():
    runs = _random_runs(seed=6, n_topics=1)
    docs = list(runs["run0"]["doc_id"].head(4))
    qrels = _qrels([("t0", docs[0], 1), ("t0", docs[1], 0), ("t0", docs[2], -1)])
    batch = judge_next(runs, qrels, budget=1000)
    proposed = set(batch["doc_id"])
    assert docs[0] not in proposed and docs[1] not in proposed
    assert docs[2] in proposed


def test_input_is_not_modified():
    runs = _random_runs(seed=8)
    qrels = _qrels([("t0", "d1", 1), ("t1", "d2", 0)])
    before_runs = {k: v.copy() for k, v in runs.items()}
    before_qrels = qrels.copy()
    judge_next(runs, qrels, budget=5)
    for name, frame in runs.items():
        pd.testing.assert_frame_equal(frame, before_runs[name])
    pd.testing.assert_frame_equal(qrels, before_qrels)


# -- bad input ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("budget", [0, -3, 2.5, True, "10"])
def test_budget_below_one_or_not_an_integer_is_an_error(budget):
    with pytest.raises(ValueError, match="budget"):
        judge_next(_random_runs(), None, budget=budget)


@pytest.mark.parametrize("measure", ["ERR@10", "P", "AP(rel=2)", "infAP"])
def test_unknown_measure_lists_the_choices(measure):
    with pytest.raises(ValueError, match=r"choices: AP, AP@k, nDCG, nDCG@k, P@k"):
        JudgeNext(measure)


def test_next_batch_checks_n():
    strategy = JudgeNext()
    state = strategy.start(_random_runs())
    with pytest.raises(ValueError, match="n=0"):
        strategy.next_batch(state, 0)


def test_queries_no_run_answers_are_ignored_with_a_warning():
    runs = _random_runs(n_topics=2)
    qrels = _qrels([("t0", "d1", 1), ("elsewhere", "x", 1)])
    with pytest.warns(UserWarning, match=r"'elsewhere'.*answered by no run.*ignored"):
        batch = judge_next(runs, qrels, budget=5)
    assert "elsewhere" not in set(batch["query_id"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        judge_next(runs, qrels[qrels["query_id"] != "elsewhere"], budget=5)


def test_runs_without_documents_are_an_error():
    with pytest.raises(ValueError, match="no documents"):
        judge_next({"A": _run([])}, None, budget=3)


# -- command line ---------------------------------------------------------------------------------------
def test_cli_writes_header_with_seed_and_the_pairs(tmp_path, capsys):
    from ir_incomplete.cli import main as cli_main

    runs = _random_runs(seed=9)
    folder = tmp_path / "runs"
    folder.mkdir()
    for name, frame in runs.items():
        lines = [f"{q} Q0 {d} {i + 1} {s} {name}" for i, (q, d, s) in enumerate(frame.itertuples(index=False))]
        (folder / name).write_text("\n".join(lines) + "\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("t0 0 d1 1\nt1 0 d2 0\n")
    code = cli_main(["judge-next", "--qrels", str(qrels), "--runs", str(folder), "--budget", "6", "--seed", "4"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[0].startswith("# ir_incomplete") and "seed=4" in out[0] and "measure=AP" in out[0]
    rows = [line.split("\t") for line in out[1:]]
    assert len(rows) == 6
    expected = judge_next(runs, _qrels([("t0", "d1", 1), ("t1", "d2", 0)]), budget=6, seed=4)
    assert [(q, d) for q, d, _ in rows] == list(zip(expected["query_id"], expected["doc_id"], strict=True))
    np.testing.assert_allclose([float(c) for *_, c in rows], expected["priority"], rtol=1e-8)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--budget", "0"], "--budget=0"),
        (["--budget", "3", "--measure", "ERR@10"], "choices: AP"),
        (["--budget", "3", "--qrels", "missing.txt"], "missing.txt"),
    ],
)
def test_cli_errors_are_one_line_exit_2(tmp_path, capsys, args, message):
    run = tmp_path / "run"
    run.write_text("q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\n")
    code = main(["--runs", str(run), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err


# -- real data ------------------------------------------------------------------------------------------
def test_trec_covid_few_topics_smoke(covid):
    topics = {"1", "2", "3"}
    runs = {name: run[run["query_id"].isin(topics)] for name, run in list(covid["runs"].items())[:40]}
    judged = covid["qrels"][covid["qrels"]["query_id"].isin(topics)]
    start = judged.groupby("query_id").head(20)
    batch = judge_next(runs, start, measure="AP", budget=100, seed=1)
    assert len(batch) == 100
    assert set(batch["query_id"]) <= topics
    already = set(zip(start["query_id"], start["doc_id"], strict=True))
    assert not already & set(zip(batch["query_id"], batch["doc_id"], strict=True))
    # the chosen documents are relevant far more often than the candidates on average
    complete = covid["complete"]
    relevant = complete[complete["relevance"] > 0]
    rel = set(zip(relevant["query_id"], relevant["doc_id"], strict=True))
    pool = {(q, d) for run in runs.values() for q, d in zip(run["query_id"], run["doc_id"], strict=True)} - already
    chosen_rate = np.mean([(q, d) in rel for q, d in zip(batch["query_id"], batch["doc_id"], strict=True)])
    pool_rate = np.mean([pair in rel for pair in pool])
    assert chosen_rate > 2 * pool_rate


# -- one candidate table for pools, samples and judge-next ----------------------------------------------
def test_judge_next_works_on_the_candidate_table_of_pools_and_samples():
    from ir_incomplete.data import prepare_runs
    from ir_incomplete.judging import Candidates, RRFPool

    runs = _random_runs(seed=11, n_topics=3)
    for name, frame in runs.items():  # topics 2, 10, 100: natural order differs from text order
        runs[name] = frame.assign(query_id=frame["query_id"].map({"t0": "10", "t1": "2", "t2": "100"}))
    candidates = Candidates(runs)
    state = JudgeNext("AP").start(candidates)
    assert state.candidates is candidates  # no second table: the pools' numbers are judge-next's
    assert list(candidates.topic_ids) == ["2", "10", "100"]
    # its fusion prior is the RRF pool's score (k = 2)
    rrf = RRFPool(k=2.0).scores(candidates)
    np.testing.assert_allclose(np.exp(state.z) * len(runs) / 3.0, rrf, rtol=1e-12)
    # from runs or prepared runs, judge-next builds the same table and answers alike
    everything = np.arange(candidates.n_pairs)
    expected = judge_next(runs, None, budget=15, seed=2)
    for source in (runs, prepare_runs(runs)):
        built = JudgeNext("AP").start(source).candidates
        pd.testing.assert_frame_equal(built.frame(everything), candidates.frame(everything))
        pd.testing.assert_frame_equal(judge_next(source, None, budget=15, seed=2), expected)
    pd.testing.assert_frame_equal(judge_next(candidates, None, budget=15, seed=2), expected)
