"""Prediction-powered inference: parity with ppi_py (PPI, PPI++), hand-computed values, ppi_evaluate over
runs × measures, the ``ppi`` command line and bad input."""

from __future__ import annotations

import json
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

import ir_incomplete
from ir_incomplete.cli import main
from ir_incomplete.ppi import PPI_COLUMNS, ppi_evaluate, ppi_mean

ppi_py = pytest.importorskip("ppi_py")

TOL = 1e-9


def reference(y, yhat, yhat_u, alpha, lam):
    """ppi_py's estimate and interval of one 1-D problem."""
    value = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam))[0])
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam)
    return value, float(np.ravel(lo)[0]), float(np.ravel(hi)[0])


# ---------------------------------------------------------------------------------------------------
# ppi_mean on arrays
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("lam", [1.0, None, 0.0, 0.3])
@pytest.mark.parametrize("alpha", [0.1, 0.05, 0.5])
def test_ppi_mean_equals_ppi_py_vectorized(lam, alpha):
    rng = np.random.default_rng(7)
    runs, measures, n, big_n = 4, 3, 9, 23
    y = rng.random((runs, measures, n))
    noise = rng.normal(0, 1, (runs, measures, 1)) * rng.normal(0, 0.3, (runs, measures, n))
    yhat = np.clip(y + 0.1 + noise, 0, 1)  # biased, correlated predictions
    yhat_u = np.clip(rng.random((runs, measures, big_n)) + 0.1, 0, 1)
    got = ppi_mean(y, yhat, yhat_u, alpha=alpha, lam=lam)
    assert got.value.shape == (runs, measures)
    for r in range(runs):
        for m in range(measures):
            value, lo, hi = reference(y[r, m], yhat[r, m], yhat_u[r, m], alpha, lam)
            assert got.value[r, m] == pytest.approx(value, abs=TOL)
            assert got.lo[r, m] == pytest.approx(lo, abs=TOL)
            assert got.hi[r, m] == pytest.approx(hi, abs=TOL)


def test_power_tuning_lambda_is_clipped_both_ways_like_ppi_py():
    y = np.array([0.1, 0.5, 0.9, 0.4])
    for yhat, expected_lam in ((1.0 - y, 0.0), (y * 0.01 + 0.5, 1.0)):  # negative cov; cov >> var(ŷ)
        unl = np.full(3, yhat.mean())
        got = ppi_mean(y, yhat, unl, lam=None)
        assert float(got.lam) == expected_lam
        value, lo, hi = reference(y, yhat, unl, 0.1, None)
        assert float(got.value) == pytest.approx(value, abs=TOL)
        assert float(got.lo) == pytest.approx(lo, abs=TOL)
        assert float(got.hi) == pytest.approx(hi, abs=TOL)


def test_ppi_mean_by_hand():
    # y = (1, 0), ŷ = (1, 1), ŷ_u = (0.5, 0.25); λ = 1
    # value = mean(ŷ_u) + mean(y − ŷ) = 0.375 − 0.5 = −0.125
    # se² = var(ŷ_u)/2 + var(y − ŷ)/2 = 0.015625/2 + 0.25/2
    got = ppi_mean([1.0, 0.0], [1.0, 1.0], [0.5, 0.25], alpha=0.1)
    z = NormalDist().inv_cdf(0.95)
    se = np.sqrt(0.015625 / 2 + 0.25 / 2)
    assert float(got.value) == pytest.approx(-0.125, abs=1e-15)
    assert float(got.lo) == pytest.approx(-0.125 - z * se, abs=1e-15)
    assert float(got.hi) == pytest.approx(-0.125 + z * se, abs=1e-15)
    assert float(got.lam) == 1.0
    # PPI++: cov(y, ŷ) = 0 (ŷ constant on the labelled queries) → λ = 0: the classical interval of y
    tuned = ppi_mean([1.0, 0.0], [1.0, 1.0], [0.5, 0.25], alpha=0.1, lam=None)
    assert float(tuned.lam) == 0.0
    assert float(tuned.value) == pytest.approx(0.5, abs=1e-15)
    assert float(tuned.hi) == pytest.approx(0.5 + z * np.sqrt(0.25 / 2), abs=1e-15)


def test_constant_predictions_give_lambda_zero_where_ppi_py_gives_nan():
    y = np.array([0.2, 0.6, 0.7])
    got = ppi_mean(y, np.zeros(3), np.zeros(5), lam=None)
    assert float(got.lam) == 0.0
    assert float(got.value) == pytest.approx(y.mean(), abs=1e-15)
    plain = ppi_mean(y, np.zeros(3), np.zeros(5), lam=1.0)  # every λ gives the same interval here
    assert float(plain.lo) == pytest.approx(float(got.lo), abs=1e-15)
    assert float(plain.hi) == pytest.approx(float(got.hi), abs=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"y": [0.5], "yhat": [0.5]}, ValueError, "at least 2 labelled"),
        ({"yhat_unlabelled": np.zeros(0)}, ValueError, "at least 1 unlabelled"),
        ({"yhat": [0.1, 0.2, 0.3]}, ValueError, "same shape"),
        ({"y": [0.1, np.nan]}, ValueError, "non-finite value nan at index"),
        ({"alpha": 1.0}, ValueError, "alpha=1.0"),
        ({"alpha": "0.1"}, TypeError, "alpha must be a number"),
        ({"lam": 1.5}, ValueError, "lam=1.5"),
        ({"lam": True}, TypeError, "lam must be"),
    ],
)
def test_ppi_mean_bad_input(kwargs, error, match):
    args = {"y": [0.1, 0.2], "yhat": [0.2, 0.2], "yhat_unlabelled": [0.3], **kwargs}
    with pytest.raises(error, match=match):
        ppi_mean(args.pop("y"), args.pop("yhat"), args.pop("yhat_unlabelled"), **args)


# ---------------------------------------------------------------------------------------------------
# ppi_evaluate: runs × measures
# ---------------------------------------------------------------------------------------------------
QUERIES = [f"q{i}" for i in range(8)]
MEASURES = ["nDCG@5", "AP", "P@3", "infAP"]


@pytest.fixture(scope="module")
def toy():
    """Three runs over 8 queries, human qrels on q0..q4 (with a −1 entry), noisy predictions on all 8."""
    rng = np.random.default_rng(3)
    docs = [f"d{j}" for j in range(12)]
    runs = {}
    for name in ("A", "B", "C"):
        rows = []
        for q in QUERIES:
            chosen = rng.choice(docs, size=8, replace=False)
            rows += [(q, d, float(s)) for d, s in zip(chosen, rng.random(8), strict=True)]
        runs[name] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    truth = {(q, d): int(rng.choice([0, 1, 2], p=[0.5, 0.3, 0.2])) for q in QUERIES for d in docs}
    human = pd.DataFrame(
        [(q, d, g) for (q, d), g in truth.items() if q in QUERIES[:5] and rng.random() < 0.8],
        columns=["query_id", "doc_id", "relevance"],
    )
    human.loc[0, "relevance"] = -1
    flip = {0: [0.7, 0.2, 0.1], 1: [0.3, 0.4, 0.3], 2: [0.1, 0.3, 0.6]}
    predictions = pd.DataFrame(
        [(q, d, int(rng.choice(3, p=flip[g]))) for (q, d), g in truth.items()],
        columns=["query_id", "doc_id", "relevance"],
    )
    predictions["p0"] = 0.5  # probability columns are ignored by PPI
    return runs, human, predictions


def _arrays(runs, human, predictions, measure, labelled):
    y = ir_incomplete.evaluate(runs, human, [measure]).set_index(["run", "query_id"])["value"]
    p = ir_incomplete.evaluate(runs, predictions, [measure]).set_index(["run", "query_id"])["value"]
    unlabelled = [q for q in QUERIES if q not in labelled]
    return {
        run: (
            y.loc[run].reindex(labelled).to_numpy(),
            p.loc[run].reindex(labelled).to_numpy(),
            p.loc[run].reindex(unlabelled).to_numpy(),
        )
        for run in runs
    }


@pytest.mark.parametrize("power_tuning", [False, True])
@pytest.mark.parametrize("labelled", [None, ["q4", "q0", "q2"]])
def test_ppi_evaluate_equals_ppi_py(toy, power_tuning, labelled):
    runs, human, predictions = toy
    alpha = 0.05 if power_tuning else 0.1
    table = ppi_evaluate(
        runs, human, predictions, MEASURES, labelled_queries=labelled, alpha=alpha, power_tuning=power_tuning
    )
    assert list(table.columns) == list(PPI_COLUMNS)
    names = [repr(ir_incomplete.parse(m)) for m in MEASURES]
    assert table["run"].tolist() == [r for r in runs for _ in MEASURES]
    assert table["measure"].tolist() == names * len(runs)
    used = labelled or QUERIES[:5]
    assert set(table["n_labelled"]) == {len(used)}
    assert set(table["n_unlabelled"]) == {8 - len(used)}
    rows = table.set_index(["run", "measure"])
    lams = []
    for measure, name in zip(MEASURES, names, strict=True):
        for run, (y, yhat, yhat_u) in _arrays(runs, human, predictions, measure, used).items():
            value, lo, hi = reference(y, yhat, yhat_u, alpha, None if power_tuning else 1)
            row = rows.loc[(run, name)]
            assert row["value"] == pytest.approx(value, abs=TOL)
            assert row["lo"] == pytest.approx(lo, abs=TOL)
            assert row["hi"] == pytest.approx(hi, abs=TOL)
            lams.append(row["lam"])
    if power_tuning:
        assert len(set(np.round(lams, 12))) > 1  # λ is tuned per run and measure
    else:
        assert set(lams) == {1.0}


def test_ppi_evaluate_does_not_mutate_inputs(toy):
    runs, human, predictions = toy
    copies = ({k: v.copy() for k, v in runs.items()}, human.copy(), predictions.copy())
    ppi_evaluate(runs, human, predictions, ["AP"], power_tuning=True)
    for name, run in runs.items():
        pd.testing.assert_frame_equal(run, copies[0][name])
    pd.testing.assert_frame_equal(human, copies[1])
    pd.testing.assert_frame_equal(predictions, copies[2])


def test_ppi_evaluate_takes_prepared_runs_and_files(toy, tmp_path):
    from ir_incomplete.data import prepare_runs

    runs, human, predictions = toy
    direct = ppi_evaluate(runs, human, predictions, ["nDCG@5"])
    prepared = ppi_evaluate(prepare_runs(runs), human, predictions, ["nDCG@5"])
    pd.testing.assert_frame_equal(direct, prepared)
    qrels_file = tmp_path / "qrels"
    pred_file = tmp_path / "pred"
    human.to_csv(qrels_file, sep=" ", header=False, index=False, columns=["query_id", "doc_id", "relevance"])
    _qrels_lines(qrels_file, human)
    _qrels_lines(pred_file, predictions)
    from_files = ppi_evaluate(runs, str(qrels_file), str(pred_file), ["nDCG@5"])
    pd.testing.assert_frame_equal(direct, from_files)


def _qrels_lines(path, frame):
    path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, d, g in frame[["query_id", "doc_id", "relevance"]].itertuples(index=False))
    )


def _run_lines(path, frame):
    path.write_text(
        "".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, d, s in frame[["query_id", "doc_id", "score"]].itertuples(index=False))
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"labelled_queries": ["q1", "q7", "zz"]},
            ValueError,
            r"labelled_queries 'q7', 'zz' are not in the qrels.*'q0'",
        ),
        ({"labelled_queries": ["q1"]}, ValueError, r"at least 2 labelled queries, got 1 \('q1'\)"),
        ({"labelled_queries": []}, ValueError, "at least 2 labelled queries, got 0"),
        ({"labelled_queries": ["q1", "q1"]}, ValueError, "names query 'q1' twice"),
        ({"labelled_queries": "q1"}, TypeError, "list of query ids"),
        ({"measures": ["NumRet"]}, ValueError, "NumRet is not aggregated by the mean"),
        ({"alpha": 0.0}, ValueError, "alpha=0.0"),
        ({"power_tuning": "yes"}, TypeError, "power_tuning must be True or False"),
    ],
)
def test_ppi_evaluate_bad_arguments(toy, kwargs, error, match):
    runs, human, predictions = toy
    args = {"measures": ["AP"], **kwargs}
    with pytest.raises(error, match=match):
        ppi_evaluate(runs, human, predictions, **args)


def test_ppi_evaluate_needs_two_labelled_queries_in_the_qrels(toy):
    runs, human, predictions = toy
    one = human[human["query_id"] == "q3"]
    with pytest.raises(ValueError, match=r"at least 2 labelled queries, got 1 \('q3'\)"):
        ppi_evaluate(runs, one, predictions, ["AP"])


def test_ppi_evaluate_bad_predictions(toy):
    runs, human, predictions = toy
    twice = pd.concat([predictions, predictions.iloc[[5]]], ignore_index=True)
    with pytest.raises(ValueError, match=r"document 'd5' of query 'q0' twice \(row 96; 1 duplicate"):
        ppi_evaluate(runs, human, twice, ["AP"])
    negative = predictions.copy()
    negative.loc[3, "relevance"] = -1
    with pytest.raises(ValueError, match=r"predicted grade -1 of document 'd3', query 'q0' \(row 3\)"):
        ppi_evaluate(runs, human, negative, ["AP"])
    fractional = predictions.astype({"relevance": float})
    fractional.loc[4, "relevance"] = 0.5
    with pytest.raises(ValueError, match=r"predicted grade 0.5 .* \(row 4\)"):
        ppi_evaluate(runs, human, fractional, ["AP"])
    with pytest.raises(ValueError, match="predictions are missing column 'relevance'"):
        ppi_evaluate(runs, human, predictions.drop(columns="relevance"), ["AP"])
    without = predictions[predictions["query_id"] != "q2"]
    with pytest.raises(ValueError, match=r"no grade for the labelled queries 'q2'"):
        ppi_evaluate(runs, human, without, ["AP"])
    only_labelled = predictions[predictions["query_id"].isin(QUERIES[:5])]
    with pytest.raises(ValueError, match="cover no query besides the labelled ones"):
        ppi_evaluate(runs, human, only_labelled, ["AP"])


# ---------------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------------
def test_cli_ppi_matches_ppi_evaluate(toy, tmp_path, capsys):
    runs, human, predictions = toy
    qrels_file, pred_file = tmp_path / "qrels", tmp_path / "pred"
    _qrels_lines(qrels_file, human)
    _qrels_lines(pred_file, predictions)
    paths = []
    for name, frame in runs.items():
        _run_lines(tmp_path / name, frame)
        paths.append(str(tmp_path / name))
    argv = ["ppi", str(qrels_file), str(pred_file), *paths, "nDCG@5 AP", "--alpha", "0.2", "--power-tuning"]
    code = main([*argv, "--labelled-queries", "q0,q1,q3", "-o", "jsonl"])
    out, err = capsys.readouterr()
    assert code == 0, err
    records = pd.DataFrame([json.loads(line) for line in out.splitlines()])
    expected = ppi_evaluate(
        runs, human, predictions, ["nDCG@5", "AP"], ["q0", "q1", "q3"], alpha=0.2, power_tuning=True
    )
    pd.testing.assert_frame_equal(records, expected, check_dtype=False, atol=1e-12, rtol=0)
    code = main(argv)
    out, _ = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split("\t") == list(PPI_COLUMNS)
    assert len(lines) == 1 + 2 * len(runs)
    first = lines[1].split("\t")
    default = ppi_evaluate(runs, human, predictions, ["nDCG@5"], alpha=0.2, power_tuning=True).iloc[0]
    assert first[:3] == ["A", "nDCG@5", f"{default['value']:.4f}"]


def test_cli_ppi_errors(toy, tmp_path, capsys):
    runs, human, predictions = toy
    qrels_file, pred_file, run_file = tmp_path / "qrels", tmp_path / "pred", tmp_path / "A"
    _qrels_lines(qrels_file, human)
    _qrels_lines(pred_file, predictions)
    _run_lines(run_file, runs["A"])
    code = main(["ppi", str(qrels_file), str(pred_file), str(run_file), "AP", "--labelled-queries", "q1,q9"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "ir_incomplete: error: labelled_queries 'q9' are not in the qrels" in err
    code = main(["ppi", str(qrels_file), str(tmp_path / "missing"), str(run_file), "AP"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "predictions file" in err


# ---------------------------------------------------------------------------------------------------
# real data (TREC-COVID round 1)
# ---------------------------------------------------------------------------------------------------
def test_covid_smoke_equals_ppi_py(covid):
    from ir_incomplete.labelers import retrieved_documents, simulate_labels

    names = sorted(covid["runs"])[:6]
    runs = {n: covid["runs"][n] for n in names}
    complete = covid["complete"]
    topics = sorted(complete["query_id"].unique(), key=int)
    labelled = [str(q) for q in np.random.default_rng(0).choice(topics, size=10, replace=False)]
    confusion = [[0.85, 0.10, 0.05], [0.35, 0.35, 0.30], [0.15, 0.30, 0.55]]
    predicted = simulate_labels(complete, confusion, seed=1, docs=retrieved_documents(runs, depth=100))
    table = ppi_evaluate(runs, complete, predicted, ["nDCG@10", "AP@100"], labelled_queries=labelled, power_tuning=True)
    assert set(table["n_labelled"]) == {10}
    assert set(table["n_unlabelled"]) == {20}
    y_all = ir_incomplete.evaluate(runs, complete, ["nDCG@10"]).set_index(["run", "query_id"])["value"]
    p_all = ir_incomplete.evaluate(runs, predicted, ["nDCG@10"]).set_index(["run", "query_id"])["value"]
    others = [q for q in topics if q not in labelled]
    for run in names:
        value, lo, hi = reference(
            y_all.loc[run].reindex(labelled).to_numpy(),
            p_all.loc[run].reindex(labelled).to_numpy(),
            p_all.loc[run].reindex(others).to_numpy(),
            0.1,
            None,
        )
        row = table[(table["run"] == run) & (table["measure"] == "nDCG@10")].iloc[0]
        assert row["value"] == pytest.approx(value, abs=TOL)
        assert row["lo"] == pytest.approx(lo, abs=TOL)
        assert row["hi"] == pytest.approx(hi, abs=TOL)
        assert row["lo"] < row["value"] < row["hi"]


# ---------------------------------------------------------------------------------------------------
# the finite-population interval of examples/predicted_labels_covid.py (split design)
# ---------------------------------------------------------------------------------------------------
def _covid_example():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "predicted_labels_covid.py"
    spec = importlib.util.spec_from_file_location("example_predicted_labels_covid", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_difference_estimator_with_fpc_is_design_unbiased_with_the_stated_variance():
    """Every simple random sample without replacement of n = 3 of N = 7 topics, enumerated: the estimate
    averages to the mean over the 7 topics, its variance is (1 − n/N)·S²(y − ŷ)/n (S² with divisor N − 1),
    and the squared half-width / z² is an unbiased estimate of that variance. The interval of a sample
    that is the whole population has width 0."""
    from itertools import combinations

    difference_fpc = _covid_example().difference_fpc
    y = np.array([0.61, 0.12, 0.33, 0.95, 0.40, 0.07, 0.58])
    yhat = np.array([0.50, 0.30, 0.31, 0.70, 0.52, 0.15, 0.44])
    n, big_n = 3, len(y)
    z = NormalDist().inv_cdf(0.95)
    values, variances = [], []
    for sample in combinations(range(big_n), n):
        idx = list(sample)
        value, lo, hi = difference_fpc(y[idx], yhat[idx], yhat, alpha=0.1)
        assert hi - value == pytest.approx(value - lo, abs=1e-15)
        values.append(value)
        variances.append(((hi - lo) / (2 * z)) ** 2)
    d = y - yhat
    assert np.mean(values) == pytest.approx(y.mean(), abs=1e-12)
    true_variance = (1 - n / big_n) * d.var(ddof=1) / n
    assert np.var(values) == pytest.approx(true_variance, rel=1e-9)
    assert np.mean(variances) == pytest.approx(true_variance, rel=1e-9)
    # hand-computed sample {0, 3, 5}: value = mean(ŷ) + mean(y − ŷ on the sample)
    value, lo, hi = difference_fpc(y[[0, 3, 5]], yhat[[0, 3, 5]], yhat, alpha=0.1)
    assert value == pytest.approx(2.92 / 7 + (0.11 + 0.25 - 0.08) / 3, abs=1e-12)
    assert difference_fpc(y, yhat, yhat)[1] == pytest.approx(y.mean(), abs=1e-12)
    assert difference_fpc(y, yhat, yhat)[2] == pytest.approx(y.mean(), abs=1e-12)
