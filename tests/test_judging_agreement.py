"""Agreement of two judgment sets (ir_incomplete.judging.judge_agreement): κ equals scikit-learn's
cohen_kappa_score, α the krippendorff package's alpha, leaderboard statistics equal the robustness ones;
and the ``ir_incomplete pool`` / ``ir_incomplete agreement`` command lines."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from ir_incomplete.cli import main
from ir_incomplete.judging import agreement, cohen_kappa, krippendorff_alpha, pool, read_pool
from ir_incomplete.robustness import kendall_tau, rmse, spearman, tau_ap

krippendorff = pytest.importorskip("krippendorff")
sklearn_metrics = pytest.importorskip("sklearn.metrics")


def _label_pairs(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 5))
    a = rng.integers(0, k, size=int(rng.integers(5, 80)))
    b = np.where(rng.random(len(a)) < 0.6, a, rng.integers(0, k, size=len(a)))
    if seed % 3 == 0:
        a, b = 3 * a - 1, 3 * b - 1  # values that are not 0..K-1
    return a, b


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_equals_scikit_learn(seed, weights):
    a, b = _label_pairs(seed)
    expected = sklearn_metrics.cohen_kappa_score(a, b, weights=weights)
    assert cohen_kappa(a, b, weights) == pytest.approx(expected, abs=1e-12)


def test_kappa_with_a_label_scale_equals_scikit_learn():
    a = np.array([0, 3, 3, 0, 1, 0, 3])  # grade 2 never given: positions differ from grades
    b = np.array([0, 3, 0, 1, 3, 3, 1])
    for weights in ("linear", "quadratic"):
        expected = sklearn_metrics.cohen_kappa_score(a, b, weights=weights, labels=[0, 1, 2, 3])
        assert cohen_kappa(a, b, weights, labels=[0, 1, 2, 3]) == pytest.approx(expected, abs=1e-12)
        assert cohen_kappa(a, b, weights) != pytest.approx(expected, abs=1e-6)  # the scale matters


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("level", ["ordinal", "interval", "nominal"])
def test_alpha_equals_the_krippendorff_package(seed, level):
    a, b = _label_pairs(seed)
    expected = krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float), level_of_measurement=level)
    assert krippendorff_alpha(a, b, level) == pytest.approx(expected, abs=1e-9)


def test_constant_labels_give_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))
    assert np.isnan(krippendorff_alpha([1, 1], [1, 1]))


def test_bad_options():
    with pytest.raises(ValueError, match="weights='cubic' is not valid"):
        cohen_kappa([0, 1], [1, 0], "cubic")
    with pytest.raises(ValueError, match="level='ratio' is not valid"):
        krippendorff_alpha([0, 1], [1, 0], "ratio")
    with pytest.raises(ValueError, match="grade 3 is not among labels"):
        cohen_kappa([0, 3], [1, 0], labels=[0, 1, 2])


# ---------------------------------------------------------------------------------------------------
# agreement() on qrels
# ---------------------------------------------------------------------------------------------------
def _qrels(rows):
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


A = _qrels([("1", "a", 0), ("1", "b", 1), ("1", "c", 2), ("2", "d", 1), ("2", "e", 0), ("2", "x", -1), ("3", "f", 1)])
B = _qrels([("1", "a", 0), ("1", "b", 2), ("1", "c", 2), ("2", "d", 1), ("2", "e", 1), ("2", "x", 1), ("4", "g", 0)])


def test_agreement_on_common_pairs():
    result = agreement(A, B)
    ga, gb = [0, 1, 2, 1, 0], [0, 2, 2, 1, 1]  # a b c d e; x is pooled but unjudged in A
    assert result["n_common"] == 5
    assert result["only_a"] == 1  # f
    assert result["only_b"] == 2  # x, g
    assert result["n_queries"] == 2
    assert result["accuracy"] == pytest.approx(3 / 5)
    assert result["kappa"] == pytest.approx(sklearn_metrics.cohen_kappa_score(ga, gb), abs=1e-12)
    assert result["kappa_quadratic"] == pytest.approx(
        sklearn_metrics.cohen_kappa_score(ga, gb, weights="quadratic"), abs=1e-12
    )
    data = np.vstack([ga, gb]).astype(float)
    assert result["alpha_ordinal"] == pytest.approx(krippendorff.alpha(reliability_data=data), abs=1e-9)
    table = result.attrs["confusion"]
    assert table.loc[1, 2] == 1
    assert table.loc[0, 1] == 1
    assert int(table.to_numpy().sum()) == 5


def test_agreement_does_not_modify_inputs():
    a, b = A.copy(), B.copy()
    agreement(a, b)
    pd.testing.assert_frame_equal(a, A)
    pd.testing.assert_frame_equal(b, B)


def test_no_common_pairs_is_an_error():
    other = _qrels([("1", "zz", 1), ("9", "a", 1)])
    with pytest.raises(ValueError, match=r"no \(query, document\) pair in common"):
        agreement(A, other)


def test_measures_without_runs_is_an_error():
    with pytest.raises(ValueError, match="give runs"):
        agreement(A, B, measures=["AP"])


def test_leaderboard_statistics_equal_the_robustness_ones():
    from ir_incomplete import evaluate

    rng = np.random.default_rng(2)
    docs = [f"D{i}" for i in range(30)]
    human = _qrels([(str(t), d, int(rng.integers(0, 3))) for t in (1, 2, 3) for d in docs])
    noisy = human.copy()
    flip = rng.random(len(noisy)) < 0.3
    noisy.loc[flip, "relevance"] = rng.integers(0, 3, size=int(flip.sum()))
    runs = {
        f"r{r}": pd.DataFrame(
            [(str(t), d, float(30 - i)) for t in (1, 2, 3) for i, d in enumerate(rng.permutation(docs)[:20])],
            columns=["query_id", "doc_id", "score"],
        )
        for r in range(5)
    }
    result = agreement(human, noisy, runs=runs, measures=["AP"])
    ref = evaluate(runs, human, ["AP"], per_query=False).set_index("run")["value"]
    est = evaluate(runs, noisy, ["AP"], per_query=False).set_index("run")["value"]
    assert result["tau[AP]"] == pytest.approx(kendall_tau(ref, est), abs=1e-12)
    assert result["tau_ap[AP]"] == pytest.approx(tau_ap(ref, est), abs=1e-12)
    assert result["spearman[AP]"] == pytest.approx(spearman(ref, est), abs=1e-12)
    assert result["rmse[AP]"] == pytest.approx(rmse(ref, est), abs=1e-12)
    assert len(result.attrs["leaderboards"]) == 5


# ---------------------------------------------------------------------------------------------------
# command lines
# ---------------------------------------------------------------------------------------------------
def _write_qrels(path, frame):
    path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in frame.itertuples(index=False)))
    return str(path)


def _write_runs(folder):
    folder.mkdir()
    rng = np.random.default_rng(0)
    for r in range(3):
        lines = []
        for t in (1, 2):
            for i, d in enumerate(rng.permutation(12)[:8]):
                lines.append(f"{t} Q0 D{d} {i + 1} {10.0 - i} run{r}\n")
        (folder / f"run{r}").write_text("".join(lines))
    return str(folder)


def test_cli_pool_matches_pool_and_writes_a_header(tmp_path, capsys):
    runs = _write_runs(tmp_path / "runs")
    assert main(["pool", "--runs", runs, "--method", "depth", "--depth", "2"]) == 0
    out = capsys.readouterr().out
    first, *rest = out.splitlines()
    assert first.startswith("# ir_incomplete ") and "--depth 2" in first and "seed=none" in first
    from ir_incomplete.api import as_run_mapping

    expected = pool(as_run_mapping(runs), "depth", depth=2)
    assert rest == [f"{q} {d}" for q, d in zip(expected["query_id"], expected["doc_id"], strict=True)]
    back = read_pool(out)
    assert len(back) == len(expected)


def test_cli_stratified_writes_the_seed_and_is_reproducible(tmp_path, capsys):
    runs = _write_runs(tmp_path / "runs")
    argv = ["pool", "--runs", runs, "--method", "stratified", "--strata", "1-2:1,3-8:0.5", "--seed", "11"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert main(argv) == 0
    assert capsys.readouterr().out == first
    header = first.splitlines()[0]
    assert "--seed 11" in header and "(seed=11)" in header
    assert all(len(line.split()) == 5 for line in first.splitlines()[1:])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--method", "budget", "--budget", "0"], "budget=0 is out of range"),
        (["--method", "stratified", "--strata", "1-2:1,2-8:0.5", "--seed", "1"], "overlaps stratum 1"),
        (["--method", "stratified", "--strata", "1-2:1,4-8:0.5", "--seed", "1"], "leaves a gap"),
        (["--method", "stratified", "--strata", "1-2:1,3-8:1.5", "--seed", "1"], "rate 1.5 is out of range"),
        (["--method", "stratified", "--strata", "1-2:1"], "needs --strata"),
        (["--method", "stratified", "--strata", "top10", "--seed", "1"], "is not FIRST-LAST:RATE"),
        (["--method", "depth", "--seed", "3"], "--seed is for --method stratified only"),
    ],
)
def test_cli_pool_errors(tmp_path, capsys, extra, message):
    runs = _write_runs(tmp_path / "runs")
    assert main(["pool", "--runs", runs, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ir_incomplete: error: ") and message in err


def test_cli_pool_qrels_with_unknown_queries(tmp_path, capsys):
    runs = _write_runs(tmp_path / "runs")
    qrels = _write_qrels(tmp_path / "q.txt", _qrels([("1", "D1", 1), ("77", "D1", 0)]))
    assert main(["pool", "--runs", runs, "--method", "depth", "--qrels", qrels]) == 2
    assert "no run answers (first: '77')" in capsys.readouterr().err


def test_cli_agreement(tmp_path, capsys):
    a = _write_qrels(tmp_path / "a.txt", A)
    b = _write_qrels(tmp_path / "b.txt", B)
    assert main(["agreement", a, b, "--no-header"]) == 0
    lines = capsys.readouterr().out.splitlines()
    values = dict(line.split("\t") for line in lines if not line.startswith("#"))
    expected = agreement(A, B)
    assert float(values["kappa"]) == pytest.approx(expected["kappa"], abs=5e-5)
    assert values["n_common"] == "5"
    assert any(line.startswith("# a\\b") for line in lines)


def test_cli_agreement_with_runs_and_errors(tmp_path, capsys):
    runs = _write_runs(tmp_path / "runs")
    a = _write_qrels(tmp_path / "a.txt", _qrels([(str(t), f"D{d}", d % 3) for t in (1, 2) for d in range(12)]))
    b = _write_qrels(tmp_path / "b.txt", _qrels([(str(t), f"D{d}", (d + t) % 2) for t in (1, 2) for d in range(12)]))
    assert main(["agreement", a, b, "--runs", runs, "--measures", "AP P@5"]) == 0
    out = capsys.readouterr().out
    assert "tau[AP]\t" in out and "rmse[P@5]\t" in out
    c = _write_qrels(tmp_path / "c.txt", _qrels([("9", "Z", 1)]))
    assert main(["agreement", a, c]) == 2
    assert "no (query, document) pair in common" in capsys.readouterr().err
    assert main(["agreement", a, str(tmp_path / "missing.txt")]) == 2
    assert "missing.txt" in capsys.readouterr().err
