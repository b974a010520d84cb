"""Bad and odd input to the judging tools, PPI and compare: ids read as evaluate reads them, duplicates
refused with evaluate's message, every pool file read back, the command lines' --help and options, counts
shown as integers, and the Benjamini–Hochberg correction."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from ir_incomplete import evaluate
from ir_incomplete.cli import SUBCOMMANDS, main
from ir_incomplete.judging import (
    Candidates,
    DepthPool,
    JudgeNext,
    agreement,
    judge_next,
    pool,
    read_pool,
    simulate,
    stratified_sample,
    to_prels,
    write_pool,
)
from ir_incomplete.ppi import ppi_evaluate, ppi_mean
from ir_incomplete.report import adjust_p_values, compare


def _run(rows):
    """``[(query, doc), ...]`` best first → a run DataFrame with descending scores."""
    return pd.DataFrame(
        {
            "query_id": [q for q, _ in rows],
            "doc_id": [d for _, d in rows],
            "score": np.arange(len(rows), 0, -1.0),
        }
    )


def _qrels(rows):
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


RUNS = {
    "A": _run([("1", "d1"), ("1", "d2"), ("1", "d3"), ("2", "e1"), ("2", "e2")]),
    "B": _run([("1", "d2"), ("1", "d4"), ("1", "d1"), ("2", "e3"), ("2", "e1")]),
    "C": _run([("1", "d5"), ("1", "d1"), ("1", "d6"), ("2", "e2"), ("2", "e3")]),
}
QRELS = _qrels([("1", "d1", 1), ("1", "d2", 0), ("1", "d4", 2), ("2", "e1", 1), ("2", "e2", 0), ("2", "e3", 1)])
#: query 1 named both as the int 1 and the str "1": document d1 judged twice
TWICE = _qrels([(1, "d1", 1), ("1", "d1", 0), (1, "d2", 0), ("2", "e1", 1)])


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


def _run_files(tmp_path, runs=RUNS):
    folder = tmp_path / "runs"
    folder.mkdir()
    for name, frame in runs.items():
        _write(
            folder / name,
            [f"{q} Q0 {d} {i} {s} {name}" for i, (q, d, s) in enumerate(frame.itertuples(index=False), 1)],
        )
    return str(folder)


def _qrels_file(path, frame):
    return _write(path, [f"{q} 0 {d} {g}" for q, d, g in frame.itertuples(index=False)])


# ---------------------------------------------------------------------------------------------------
# qrels: one id normalisation and one duplicate check, as evaluate
# ---------------------------------------------------------------------------------------------------
def test_agreement_refuses_a_pair_judged_under_int_and_str_query_ids():
    other = _qrels([("1", "d1", 1), ("1", "d2", 0)])
    with pytest.raises(ValueError, match="qrels judge document 'd1' twice for query '1'"):
        evaluate(RUNS, TWICE, ["AP"])
    with pytest.raises(ValueError, match="^qrels_a: qrels judge document 'd1' twice for query '1'$"):
        agreement(TWICE, other)  # was: n_common 3 for 2 pairs
    with pytest.raises(ValueError, match="^qrels_b: qrels judge document 'd1' twice for query '1'$"):
        agreement(other, TWICE)


@pytest.mark.parametrize(
    "call",
    [
        lambda: pool(RUNS, "depth", depth=2, qrels=TWICE),
        lambda: DepthPool(2).start(RUNS, TWICE),
        lambda: to_prels(stratified_sample(RUNS, [(1, 3, 1.0)], seed=0), TWICE),
        lambda: simulate(RUNS, TWICE, "depth", budget=2, step=1),
        lambda: simulate(RUNS, QRELS, "depth", budget=2, step=1, start=TWICE),
        lambda: judge_next(RUNS, TWICE),
        lambda: ppi_evaluate(RUNS, TWICE, QRELS, ["P@1"]),
    ],
    ids=["pool", "strategy", "to_prels", "simulate-oracle", "simulate-start", "judge_next", "ppi"],
)
def test_every_judging_reader_refuses_the_same_double_judgment(call):
    with pytest.raises(ValueError, match="qrels judge document 'd1' twice for query '1'"):
        call()


def test_judged_pairs_are_found_whatever_the_type_of_their_query_ids():
    as_floats = QRELS.assign(query_id=QRELS["query_id"].astype(float))
    pd.testing.assert_frame_equal(
        pool(RUNS, "depth", depth=3, qrels=as_floats), pool(RUNS, "depth", depth=3, qrels=QRELS)
    )
    candidates = Candidates(RUNS)
    np.testing.assert_array_equal(
        candidates.pair_index([1.0, 2], ["d1", "e1"]), candidates.pair_index(["1", "2"], ["d1", "e1"])
    )
    assert (candidates.pair_index([1.0], ["d1"]) >= 0).all()
    np.testing.assert_array_equal(candidates.topic_of_query(np.array([2.0, 1.0])), [1, 0])
    sample = stratified_sample(RUNS, [(1, 3, 1.0)], seed=0)
    expected = to_prels(sample, QRELS, missing="nonrelevant")
    as_numbers = sample.assign(query_id=sample["query_id"].astype(float))
    pd.testing.assert_frame_equal(to_prels(as_numbers, QRELS, missing="nonrelevant"), expected)


# ---------------------------------------------------------------------------------------------------
# every subcommand's --help
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [None, *SUBCOMMANDS])
def test_every_help_exits_0_without_a_traceback(command, capsys):
    argv = ["--help"] if command is None else [command, "--help"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: ir_incomplete")
    assert "Traceback" not in err and err == ""


def test_pool_help_from_the_console_exits_0():
    done = subprocess.run(
        [sys.executable, "-m", "ir_incomplete", "pool", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert done.stdout.startswith("usage: ir_incomplete pool")
    assert done.stderr == ""


# ---------------------------------------------------------------------------------------------------
# ids matched the same way everywhere
# ---------------------------------------------------------------------------------------------------
def test_ppi_labelled_queries_given_as_numbers_match_text_ids():
    runs = {"A": RUNS["A"], "B": RUNS["B"]}
    human = _qrels([(q, d, g) for q, d, g in QRELS.itertuples(index=False)] + [("3", "x", 1)])
    predicted = pd.concat([QRELS, _qrels([("3", "x", 1), ("4", "d1", 1), ("4", "y", 0)])], ignore_index=True)
    expected = ppi_evaluate(runs, human, predicted, ["P@1"], labelled_queries=["1", "2"])
    for given in ([1.0, 2.0], [1, 2], np.array([1.0, 2.0]), [np.int64(1), "2"]):
        got = ppi_evaluate(runs, human, predicted, ["P@1"], labelled_queries=given)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
    with pytest.raises(ValueError, match=r"labelled_queries 1.5 \(row 0\) is a float that is not an exact integer"):
        ppi_evaluate(runs, human, predicted, ["P@1"], labelled_queries=[1.5, 2])
    with pytest.raises(ValueError, match="labelled_queries names query '1' twice"):
        ppi_evaluate(runs, human, predicted, ["P@1"], labelled_queries=[1, "1", 2])


def test_compare_baseline_names_a_run_the_way_run_keys_do():
    runs = {1: RUNS["A"], 2: RUNS["B"], 3: RUNS["C"]}
    expected = compare(runs, QRELS, "P@2", baseline="1")
    for baseline in (1, 1.0, np.int64(1)):
        got = compare(runs, QRELS, "P@2", baseline=baseline)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
        assert got.attrs["baseline"] == "1"
    with pytest.raises(ValueError, match=r"^baseline=4 is not a run; runs: 1, 2, 3$"):
        compare(runs, QRELS, "P@2", baseline=4)
    with pytest.raises(ValueError, match=r"^baseline=1.5 is not a run; runs: 1, 2, 3$"):
        compare(runs, QRELS, "P@2", baseline=1.5)
    with pytest.raises(ValueError, match=r"^baseline=\[1\] is not a run; runs: 1, 2, 3$"):
        compare(runs, QRELS, "P@2", baseline=[1])


# ---------------------------------------------------------------------------------------------------
# a run that lists a document twice
# ---------------------------------------------------------------------------------------------------
DOUBLED = {"A": _run([("1", "d1"), ("1", "d1"), ("1", "d2"), ("1", "d3")]), "B": RUNS["B"]}


def _evaluate_message():
    with pytest.raises(ValueError) as caught:
        evaluate(DOUBLED, QRELS, ["AP"])
    return str(caught.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda: pool(DOUBLED, "depth", depth=3),  # was: the repeat took rank 2, d3 left out
        lambda: pool(DOUBLED, "budget", budget=3),
        lambda: pool(DOUBLED, "rrf", budget=3),
        lambda: pool(DOUBLED, "rbp", budget=3),
        lambda: stratified_sample(DOUBLED, [(1, 3, 1.0)], seed=0),
        lambda: judge_next(DOUBLED),
        lambda: simulate(DOUBLED, QRELS, "movetofront", budget=2, step=1),
    ],
    ids=["depth", "budget", "rrf", "rbp", "stratified", "judge_next", "simulate"],
)
def test_a_document_listed_twice_is_refused_with_evaluates_message(call):
    message = _evaluate_message()
    assert message.startswith("run 'A' lists document 'd1' more than once for query '1'; trec_eval refuses")
    with pytest.raises(ValueError) as caught:
        call()
    assert str(caught.value) == message


def test_cli_pool_refuses_a_document_listed_twice(tmp_path, capsys):
    folder = _run_files(tmp_path, DOUBLED)
    assert main(["pool", "--runs", folder, "--depth", "3"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"ir_incomplete: error: {_evaluate_message()}"


def test_judge_next_refuses_predicted_grades_outside_the_qrels_scale(tmp_path, capsys):
    qrels = _qrels([("1", "d1", 1), ("1", "d2", 0), ("2", "e1", 1)])  # grades 0..1
    beyond = _qrels([("1", "d3", 0), ("1", "d4", 3), ("2", "e2", 1)])
    with pytest.raises(ValueError) as caught:
        judge_next(RUNS, qrels, predictions=beyond)
    assert str(caught.value) == (
        "predictions: predicted grade 3 of document 'd4', query '1' is outside the qrels' scale: the qrels' grades "
        "are 0..1 (1 such prediction(s)); give predictions on the qrels' scale"
    )
    negative = _qrels([("1", "d3", -1), ("2", "e2", 1)])
    with pytest.raises(ValueError, match=r"predicted grade a negative grade \(pooled but unjudged\) of document 'd3'"):
        judge_next(RUNS, qrels, predictions=negative)
    with pytest.raises(ValueError, match="predicted grades are integers >= 0"):
        judge_next(RUNS, None, predictions=negative)  # no judgments yet: any grade >= 0
    assert len(judge_next(RUNS, None, predictions=beyond, budget=3)) == 3
    assert len(judge_next(RUNS, qrels, predictions=beyond.assign(relevance=[0, 1, 1]), budget=3)) == 3
    folder = _run_files(tmp_path)
    q = _qrels_file(tmp_path / "q.txt", qrels)
    p = _qrels_file(tmp_path / "p.txt", beyond)
    assert main(["judge-next", "--runs", folder, "--qrels", q, "--predictions", p, "--budget", "2"]) == 2
    assert "predicted grade 3 of document 'd4', query '1' is outside the qrels' scale" in capsys.readouterr().err


def test_stratified_sample_warns_of_a_stratum_with_nothing_sampled(tmp_path, capsys):
    strata = [(1, 1, 1.0), (2, 3, 0.1)]
    with pytest.warns(UserWarning) as caught:
        sample = stratified_sample(RUNS, strata, seed=0, min_sampled=0)
    message = str(caught[0].message)
    assert message.startswith(
        "min_sampled=0 leaves 1 (query, stratum) cell(s) with pooled documents but none sampled: "
        "query '1' stratum 2 (3 pooled); xinfAP"
    )
    cells = sample.groupby(["query_id", "stratum"])["sampled"].agg(["size", "sum"])
    assert cells.loc[("1", 2)].tolist() == [3, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stratified_sample(RUNS, strata, seed=0)  # min_sampled=1: every stratum sampled, no warning
    folder = _run_files(tmp_path)
    argv = ["pool", "--runs", folder, "--method", "stratified", "--strata", "1-1:1,2-3:0.1", "--seed", "0"]
    assert main([*argv, "--min-sampled", "0"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("ir_incomplete pool: warning: min_sampled=0 leaves 1 (query, stratum) cell(s)")


# ---------------------------------------------------------------------------------------------------
# every pool file read back
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        ["--method", "depth", "--depth", "2"],
        ["--method", "budget", "--budget", "3"],
        ["--method", "rrf", "--budget", "4"],
        ["--method", "rbp", "--budget", "4", "--per-topic"],
    ],
)
@pytest.mark.parametrize("fmt", ["pairs", "qrels"])
def test_cli_pool_files_read_back(tmp_path, capsys, options, fmt):
    folder = _run_files(tmp_path)
    out = str(tmp_path / "pool.txt")
    assert main(["pool", "--runs", folder, *options, "--format", fmt, "-o", out]) == 0
    method = options[1]
    amount = {"depth": int(options[3])} if method == "depth" else {"budget": int(options[3])}
    expected = pool(RUNS, method, per_topic=True if "--per-topic" in options else None, **amount)
    pd.testing.assert_frame_equal(read_pool(out), expected)


@pytest.mark.parametrize("fmt", [None, "sample", "pairs"])
def test_cli_stratified_files_read_back_and_make_prels(tmp_path, fmt):
    folder = _run_files(tmp_path)
    out = str(tmp_path / "sample.txt")
    argv = ["pool", "--runs", folder, "--method", "stratified", "--strata", "1-1:1,2-3:0.5", "--seed", "3"]
    assert main([*argv, "-o", out] + ([] if fmt is None else ["--format", fmt])) == 0
    sample = stratified_sample(RUNS, [(1, 1, 1.0), (2, 3, 0.5)], seed=3)
    back = read_pool(out)
    if fmt == "pairs":
        expected = sample.loc[sample["sampled"], ["query_id", "doc_id"]].reset_index(drop=True)
        pd.testing.assert_frame_equal(back, expected)
        return
    pd.testing.assert_frame_equal(back, sample, check_dtype=False, check_like=False, check_exact=True)
    assert back["sampled"].dtype == bool
    judged = _qrels(
        [("1", d, 1) for d in ("d1", "d2", "d3", "d4", "d5", "d6")] + [("2", e, 0) for e in ("e1", "e2", "e3")]
    )
    pd.testing.assert_frame_equal(to_prels(back, judged), to_prels(sample, judged))


def test_write_pool_sample_round_trip_and_bad_sample_lines():
    sample = stratified_sample(RUNS, [(1, 2, 1.0), (3, None, 0.5)], seed=1)
    handle = io.StringIO()
    write_pool(sample, handle, "sample", header="# a sample")
    back = read_pool(handle.getvalue())
    pd.testing.assert_frame_equal(back, sample, check_dtype=False)
    with pytest.raises(
        ValueError, match=r"^pool file <text>, line 3: stratum 'd2' is not valid; expected an integer >= 1"
    ):
        read_pool("# header\n1 d1 1 1 1\n1 0 d2 1 -1\n")  # a prels line, not a sample line
    with pytest.raises(ValueError, match=r"^pool file <text>, line 2: sampled '2' is not valid; expected 0 or 1"):
        read_pool("1 d1 1 1 1\n1 d2 1 2 2\n")
    with pytest.raises(ValueError, match=r"line 1: rank '0' is not valid; expected an integer >= 1"):
        read_pool("1 d1 1 0 1\n")
    with pytest.raises(ValueError, match=r"has no column 'stratum'"):
        write_pool(pool(RUNS, "depth", depth=1), io.StringIO(), "sample")


# ---------------------------------------------------------------------------------------------------
# options: places, seeds, alpha
# ---------------------------------------------------------------------------------------------------
def test_cli_agreement_places_minus_one_is_full_precision(tmp_path, capsys):
    a = _qrels_file(tmp_path / "a.txt", QRELS)
    b = _qrels_file(tmp_path / "b.txt", QRELS.assign(relevance=[1, 1, 2, 0, 0, 1]))
    assert main(["agreement", a, b, "-p", "-1", "--no-header"]) == 0
    values = dict(line.split("\t") for line in capsys.readouterr().out.splitlines() if not line.startswith("#"))
    expected = agreement(QRELS, QRELS.assign(relevance=[1, 1, 2, 0, 0, 1]))
    assert values["kappa"] == repr(expected["kappa"])
    assert values["n_common"] == "6"
    assert main(["agreement", a, b, "-p", "-2"]) == 2
    assert "--places must be >= 0, or -1 for full precision (got -2)" in capsys.readouterr().err


def test_negative_seeds_name_the_option_and_the_value(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"^seed=-1 is not valid; expected an integer >= 0$"):
        JudgeNext("AP", seed=-1)
    folder = _run_files(tmp_path)
    assert main(["judge-next", "--runs", folder, "--budget", "2", "--seed", "-1"]) == 2
    assert capsys.readouterr().err.strip() == "ir_incomplete: error: --seed -1 is not valid; expected an integer >= 0"
    argv = ["pool", "--runs", folder, "--method", "stratified", "--strata", "1-3:1", "--seed", "-1"]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().endswith("error: --seed -1 is not valid; expected an integer >= 0")


def test_ppi_takes_a_tiny_alpha_and_names_alpha_when_it_cannot():
    from scipy.stats import norm

    y, yhat, unlabelled = [1.0, 0.0, 0.5], [0.8, 0.1, 0.4], [0.3, 0.9]
    se = (ppi_mean(y, yhat, unlabelled, alpha=0.1).hi - ppi_mean(y, yhat, unlabelled, alpha=0.1).value) / norm.isf(0.05)
    for alpha in (1e-9, 1e-17, 1e-300):
        got = ppi_mean(y, yhat, unlabelled, alpha=alpha)  # was: "p must be in the range 0.0 < p < 1.0"
        assert float(got.hi - got.value) == pytest.approx(float(se * norm.isf(alpha / 2)), rel=1e-12)
    with pytest.raises(ValueError, match=r"^alpha=5e-324 is too small: alpha/2 rounds to 0"):
        ppi_mean(y, yhat, unlabelled, alpha=5e-324)


# ---------------------------------------------------------------------------------------------------
# counts shown as integers; one name for the score of the pairs to judge
# ---------------------------------------------------------------------------------------------------
def test_agreement_counts_are_integers():
    result = agreement(QRELS, QRELS.assign(relevance=[1, 1, 2, 0, 0, 1]))
    for key in ("n_common", "only_a", "only_b", "n_queries"):
        assert type(result[key]) is int
    assert isinstance(result["kappa"], float)
    shown = result.to_string()
    assert re.search(r"^n_common +6$", shown, re.MULTILINE), shown  # was: 6.000000
    assert re.search(r"^only_b +0$", shown, re.MULTILINE), shown


def test_calibration_counts_judged_documents_as_integers():
    from ir_incomplete.predictions import calibration

    predicted = QRELS.assign(relevance=[1, 0, 2, 1, 1, 0])
    table = calibration(QRELS, predicted)
    assert table["judged"].dtype == np.int64
    assert table["judged"].iloc[:3].tolist() == [2, 3, 1]  # pooled rows: predicted 0, 1, 2
    with_probabilities = predicted.assign(p0=0.5, p1=0.25, p2=0.25)
    assert calibration(QRELS, with_probabilities)["judged"].dtype == np.float64  # expected counts


def test_judge_next_and_its_strategy_name_the_score_priority():
    batch = judge_next(RUNS, QRELS.iloc[:2], budget=3)
    strategy = JudgeNext("AP")
    state = strategy.start(RUNS, QRELS.iloc[:2])
    pd.testing.assert_frame_equal(batch, strategy.next_batch(state, 3))
    assert list(batch.columns) == ["query_id", "doc_id", "priority"]


# ---------------------------------------------------------------------------------------------------
# Benjamini–Hochberg
# ---------------------------------------------------------------------------------------------------
def test_fdr_bh_equals_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(4)
    for size in (1, 2, 3, 7, 40, 200):
        p = rng.random(size) ** 3
        p[: size // 4] = p[-1]  # ties
        expected = multipletests(p, method="fdr_bh")[1]
        np.testing.assert_allclose(adjust_p_values(p, "fdr_bh"), expected, rtol=0, atol=1e-12)
    with_nan = adjust_p_values([0.01, np.nan, 0.04, 0.03], "fdr_bh")
    assert np.isnan(with_nan[1])
    np.testing.assert_allclose(with_nan[[0, 2, 3]], multipletests([0.01, 0.04, 0.03], method="fdr_bh")[1], atol=1e-15)


def _random_runs(seed=5, n_runs=5, n_topics=12):
    rng = np.random.default_rng(seed)
    docs = [f"D{i}" for i in range(15)]
    qrels = _qrels([(f"t{t}", d, int(rng.integers(0, 3))) for t in range(n_topics) for d in docs])
    runs = {}
    for r in range(n_runs):
        rows = [
            (f"t{t}", d, float(s))
            for t in range(n_topics)
            for d, s in zip(docs, rng.random(15) + r * 0.05, strict=True)
        ]
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs, qrels


@pytest.mark.parametrize("baseline", [None, "run0"])
def test_compare_fdr_bh_equals_statsmodels_and_the_command_line(tmp_path, capsys, baseline):
    from statsmodels.stats.multitest import multipletests

    runs, qrels = _random_runs()
    table = compare(runs, qrels, ["AP", "P@5"], baseline=baseline, correction="fdr_bh")
    assert table.attrs["correction"] == "fdr_bh"
    for _, rows in table.groupby("measure"):
        rows = rows.dropna(subset=["p_value"])
        expected = multipletests(rows["p_value"].to_numpy(), method="fdr_bh")[1]
        np.testing.assert_allclose(rows["p_adjusted"], expected, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(rows["significant"], expected < 0.05)
    folder = tmp_path / "runs"
    folder.mkdir()
    for name, frame in runs.items():
        _write(folder / name, [f"{q} Q0 {d} 0 {s!r} {name}" for q, d, s in frame.itertuples(index=False)])
    q = _qrels_file(tmp_path / "qrels.txt", qrels)
    argv = [
        "compare",
        q,
        *(str(folder / name) for name in runs),
        "AP",
        "P@5",
        "--correction",
        "fdr_bh",
        "--format",
        "tsv",
    ]
    assert main(argv + ([] if baseline is None else ["--baseline", baseline])) == 0
    out = pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t")
    np.testing.assert_allclose(out["p_adjusted"], table["p_adjusted"], rtol=0, atol=1e-12)
    assert main(["compare", q, str(folder / "run0"), str(folder / "run1"), "AP", "--correction", "fdr_bh"]) == 0
    assert "Benjamini–Hochberg" in capsys.readouterr().out


def test_cli_ppi_takes_a_tiny_alpha_and_names_alpha_when_it_cannot(tmp_path, capsys):
    folder = _run_files(tmp_path, {"A": RUNS["A"], "B": RUNS["B"]})
    human = _qrels_file(tmp_path / "human.txt", QRELS)
    extra = _qrels([("3", "x", 1), ("4", "d1", 1), ("4", "y", 0)])
    predicted = _qrels_file(tmp_path / "predicted.txt", pd.concat([QRELS, extra], ignore_index=True))
    argv = ["ppi", human, predicted, folder, "P@1", "-p", "-1"]
    assert main([*argv, "--alpha", "1e-17"]) == 0
    rows = pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t", dtype={"run": str})
    expected = ppi_evaluate(
        {"A": RUNS["A"], "B": RUNS["B"]}, QRELS, pd.concat([QRELS, extra], ignore_index=True), ["P@1"], alpha=1e-17
    )
    np.testing.assert_allclose(rows["hi"], expected["hi"], rtol=0, atol=1e-12)
    assert main([*argv, "--alpha", "5e-324"]) == 2
    assert "alpha=5e-324 is too small: alpha/2 rounds to 0" in capsys.readouterr().err
