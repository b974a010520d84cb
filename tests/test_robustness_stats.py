"""Agreement and significance statistics of the robustness toolkit: τ_AP, Spearman, bias, swap-rate
bins relative to the best score, discriminative power (t, bootstrap, randomised Tukey HSD) and
preference reconstruction."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ir_incomplete
from ir_incomplete.robustness import (
    TESTS,
    agreement,
    bias,
    discriminative_power,
    kendall_tau,
    pairwise_tests,
    pearson,
    preference_agreement,
    rmse,
    robustness_study,
    spearman,
    swap_rate,
    swap_rates,
    tau_ap,
)


# ---------------------------------------------------------------------------------------------------
# τ_AP
# ---------------------------------------------------------------------------------------------------
def _tau_ap_walk(reference, order):
    """The paper's formula for one walk (``order``: run indices, best first); reference ties count 1/2."""
    total = 0.0
    for i in range(1, len(order)):
        j = order[i]
        total += sum(1.0 if reference[k] > reference[j] else 0.5 if reference[k] == reference[j] else 0.0
                     for k in order[:i]) / i  # fmt: skip
    return 2.0 / (len(order) - 1) * total - 1.0


def _tau_ap_brute_force(reference, estimate):
    """Mean of the walk over every order of the runs consistent with ``estimate`` (ties in any order)."""
    n = len(estimate)
    walks = [
        _tau_ap_walk(reference, order)
        for order in itertools.permutations(range(n))
        if all(estimate[order[a]] >= estimate[order[a + 1]] for a in range(n - 1))
    ]
    return float(np.mean(walks))


def test_tau_ap_hand_computed():
    ref = [4, 3, 2, 1]  # runs A > B > C > D
    # estimate A, C, B, D: C(2)/1 = 1, C(3)/2 = 1/2 (A above B, C not), C(4)/3 = 1 -> 2/3 · 2.5 − 1
    assert tau_ap(ref, [4, 2, 3, 1]) == pytest.approx(2 / 3, abs=1e-15)
    # estimate B, A, C, D: the error at the top costs more: 2/3 · (0 + 1 + 1) − 1 = 1/3 (Kendall: 2/3)
    assert tau_ap(ref, [3, 4, 2, 1]) == pytest.approx(1 / 3, abs=1e-15)
    assert kendall_tau(ref, [3, 4, 2, 1]) == pytest.approx(2 / 3)
    # estimate A, B, D, C: the same swap at the bottom: 2/3 · (1 + 1 + 2/3) − 1 = 7/9
    assert tau_ap(ref, [4, 3, 1, 2]) == pytest.approx(7 / 9, abs=1e-15)
    assert tau_ap(ref, ref) == 1.0
    assert tau_ap(ref, [1, 2, 3, 4]) == -1.0


def test_tau_ap_is_asymmetric():
    ref = [4, 3, 2, 1]  # A, B, C, D
    est = [2, 4, 3, 1]  # B, C, A, D
    # walk B, C, A, D against A > B > C > D: C: 1/1, A: 0/2, D: 3/3 -> 2/3 · 2 − 1 = 1/3
    assert tau_ap(ref, est) == pytest.approx(1 / 3, abs=1e-15)
    # walk A, B, C, D against B > C > A > D: B: 0/1, C: 1/2, D: 3/3 -> 2/3 · 1.5 − 1 = 0
    assert tau_ap(est, ref) == pytest.approx(0.0, abs=1e-15)
    assert kendall_tau(ref, est) == pytest.approx(kendall_tau(est, ref))


def test_tau_ap_ties_are_the_expectation_over_random_orders():
    # A, B tied at the top of the estimate: walk A, B, C gives 1, walk B, A, C gives 0 -> 0.5
    assert tau_ap([3, 2, 1], [1, 1, 0]) == pytest.approx(0.5, abs=1e-15)
    assert tau_ap([3, 2, 1, 0], [5, 5, 5, 5]) == pytest.approx(0.0, abs=1e-15)  # constant estimate
    assert tau_ap([1, 1, 1, 1], [4, 3, 2, 1]) == pytest.approx(0.0, abs=1e-15)  # constant reference
    assert math.isnan(kendall_tau([3, 2, 1, 0], [5, 5, 5, 5]))
    rng = np.random.default_rng(3)
    for _ in range(60):
        n = int(rng.integers(2, 7))
        ref = rng.integers(0, 3, n).astype(float)
        est = rng.integers(0, 3, n).astype(float)
        assert tau_ap(ref, est) == pytest.approx(_tau_ap_brute_force(list(ref), list(est)), abs=1e-12)


def test_tau_ap_without_ties_is_the_walk_and_averages_to_zero():
    rng = np.random.default_rng(11)
    ref = rng.random(5)
    walks = []
    for order in itertools.permutations(range(5)):
        est = np.empty(5)
        est[list(order)] = np.arange(5, 0, -1)  # order[0] gets the highest score
        value = tau_ap(ref, est)
        assert value == pytest.approx(_tau_ap_walk(list(ref), order), abs=1e-12)
        walks.append(value)
    assert np.mean(walks) == pytest.approx(0.0, abs=1e-12)  # a random ranking: 0 in expectation


def test_tau_ap_aligns_series_by_run():
    ref = pd.Series({"a": 0.4, "b": 0.3, "c": 0.2, "d": 0.1})
    est = pd.Series({"d": 0.1, "c": 0.25, "b": 0.2, "a": 0.4})  # a, c, b, d
    assert tau_ap(ref, est) == pytest.approx(2 / 3, abs=1e-15)
    with pytest.raises(ValueError, match="different runs"):
        tau_ap(ref, est.rename({"d": "e"}))
    with pytest.raises(ValueError, match="at least 2 runs"):
        tau_ap([1.0], [1.0])


# ---------------------------------------------------------------------------------------------------
# Spearman, bias, agreement
# ---------------------------------------------------------------------------------------------------
def test_spearman_and_bias():
    assert spearman([1, 2, 3, 4], [1, 2, 4, 3]) == pytest.approx(0.8)  # 1 − 6 · 2 / (4 · 15)
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    x, y = [0.1, 0.5, 0.2, 0.9, 0.3], [0.2, 0.4, 0.4, 0.8, 0.1]
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))
    assert bias([0.2, 0.4], [0.3, 0.6]) == pytest.approx(0.15)  # estimate − reference
    assert bias([0.3, 0.6], [0.2, 0.4]) == pytest.approx(-0.15)
    assert agreement(x, y) == pytest.approx(
        {
            "tau": kendall_tau(x, y),
            "pearson": pearson(x, y),
            "rmse": rmse(x, y),
            "tau_ap": tau_ap(x, y),
            "spearman": spearman(x, y),
            "bias": bias(x, y),
        }
    )
    assert list(agreement(x, y)) == ["tau", "pearson", "rmse", "tau_ap", "spearman", "bias"]


def test_study_reports_every_agreement_statistic(small_study_data):
    runs, qrels = small_study_data
    result = robustness_study(runs, qrels, ["AP", "Bpref"], levels=[0.4], repeats=2, seed=3, progress=False)
    keys = list(agreement([1, 2], [1, 2]))
    # every statistic of agreement(), in its order, after the cell columns (other columns may follow)
    assert list(result.stats.columns)[: 3 + len(keys)] == ["measure", "level", "repeat", *keys]
    for row in result.stats.itertuples(index=False):
        cell = result.scores[
            (result.scores["measure"] == row.measure) & (result.scores["repeat"] == row.repeat)
        ].set_index("run")
        assert row.tau_ap == pytest.approx(tau_ap(cell["reference"], cell["value"]))
        assert row.spearman == pytest.approx(spearman(cell["reference"], cell["value"]), nan_ok=True)
        assert row.bias == pytest.approx(bias(cell["reference"], cell["value"]))


@pytest.fixture(scope="module")
def small_study_data():
    """6 runs × 8 topics, 30 judged documents per topic."""
    rng = np.random.default_rng(5)
    qrels = pd.DataFrame(
        [(f"t{t}", f"d{d}", int(rng.choice([0, 0, 1, 2]))) for t in range(8) for d in range(30)],
        columns=["query_id", "doc_id", "relevance"],
    )
    runs = {}
    for r in range(6):
        rows = [(f"t{t}", f"d{d}", float(40 - k)) for t in range(8) for k, d in enumerate(rng.permutation(40)[:25])]
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs, qrels


# ---------------------------------------------------------------------------------------------------
# swap-rate bins relative to the best score
# ---------------------------------------------------------------------------------------------------
def _two_runs(values_a, values_b):
    topics = [f"t{i}" for i in range(len(values_a))]
    return pd.DataFrame(
        {"run": ["A"] * len(topics) + ["B"] * len(topics), "query_id": topics * 2, "value": values_a + values_b}
    )


def test_swap_rates_relative_to_the_best_score():
    # as in the absolute test: A beats B by 0.4 on t0, t1 and loses by 0.4 on t2, t3; best mean = 0.4,
    # so |d1| = 0.4 is 100 % of the best score and lands in the relative bin [1.0, 1.1).
    per_topic = _two_runs([0.6, 0.6, 0.2, 0.2], [0.2, 0.2, 0.6, 0.6])
    absolute = swap_rates(per_topic, 2, trials=2000, seed=4, bin_width=0.1)
    relative = swap_rates(per_topic, 2, trials=2000, seed=4, bin_width=0.1, relative=True)
    assert relative.attrs == {"relative": True, "best_score": pytest.approx(0.4)}
    assert absolute.attrs["relative"] is False
    assert relative["bin_low"].round(6).tolist() == [0.0, 1.0]
    assert absolute["bin_low"].round(6).tolist() == [0.0, 0.4]
    # the same draws: only the bins move
    np.testing.assert_array_equal(relative["comparisons"], absolute["comparisons"])
    np.testing.assert_array_equal(relative["swaps"], absolute["swaps"])
    assert relative.iloc[1]["swap_rate"] == 1.0
    assert swap_rate(per_topic, 2, trials=2000, seed=4, min_difference=0.5, relative=True) == 1.0
    assert math.isnan(swap_rate(per_topic, 2, trials=2000, seed=4, min_difference=0.5))  # no |d1| >= 0.5
    with pytest.raises(ValueError, match="relative=1 is not valid"):
        swap_rates(per_topic, 2, relative=1)
    with pytest.raises(ValueError, match="best mean score > 0"):
        swap_rates(_two_runs([0.0] * 4, [0.0] * 4), 2, relative=True)


# ---------------------------------------------------------------------------------------------------
# discriminative power
# ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scores():
    """8 runs × 25 topics with graded differences; run3 is a copy of run2 (identical runs)."""
    rng = np.random.default_rng(2006)
    values = rng.random((8, 25)) * 0.4 + np.linspace(0.0, 0.25, 8)[:, None]
    values[3] = values[2]
    return pd.DataFrame(values, index=[f"run{i}" for i in range(8)], columns=[f"q{t}" for t in range(25)])


def _tidy(wide):
    frame = wide.stack().rename("value").reset_index()
    frame.columns = ["run", "query_id", "value"]
    return frame.assign(measure="AP")[["run", "query_id", "measure", "value"]]


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
def test_discriminative_power_t_test_is_scipys_count(scores, alpha):
    values = scores.to_numpy()
    count = sum(
        bool(stats.ttest_rel(values[a], values[b]).pvalue < alpha) for a, b in itertools.combinations(range(8), 2)
    )
    assert discriminative_power(scores, alpha=alpha) == count / 28
    assert discriminative_power(_tidy(scores), alpha=alpha) == count / 28  # the evaluate() table
    power, table = discriminative_power(scores, alpha=alpha, return_table=True)
    assert power == count / 28 and int(table["significant"].sum()) == count
    assert list(table.columns) == ["run_a", "run_b", "mean_a", "mean_b", "difference", "p_value", "significant"]
    row = table[(table["run_a"] == "run1") & (table["run_b"] == "run6")].iloc[0]
    assert row["p_value"] == stats.ttest_rel(values[1], values[6]).pvalue
    assert row["difference"] == pytest.approx(values[1].mean() - values[6].mean())


def test_discriminative_power_on_an_evaluate_table(small_study_data):
    runs, qrels = small_study_data
    per_query = ir_incomplete.evaluate(runs, qrels, ["AP"])
    wide = per_query.pivot(index="run", columns="query_id", values="value").to_numpy()
    count = sum(bool(stats.ttest_rel(wide[a], wide[b]).pvalue < 0.1) for a, b in itertools.combinations(range(6), 2))
    assert discriminative_power(per_query, alpha=0.1) == count / 15
    with pytest.raises(ValueError, match="several measures"):
        discriminative_power(ir_incomplete.evaluate(runs, qrels, ["AP", "Bpref"]))


def test_bootstrap_test_is_sakais_algorithm(scores):
    values = scores.to_numpy()
    B, seed = 400, 7  # noqa: N806
    table = pairwise_tests(scores, test="bootstrap", B=B, seed=seed)
    samples = np.random.default_rng(seed).integers(0, 25, size=(B, 25))  # the same topic samples

    def t_stat(z):
        return z.mean() / (z.std(ddof=1) / math.sqrt(len(z)))

    for row, (a, b) in zip(table.itertuples(), itertools.combinations(range(8), 2), strict=True):
        d = values[a] - values[b]
        if not d.any():
            assert row.p_value == 1.0  # identical runs
            continue
        w = d - d.mean()
        count = sum(abs(t_stat(w[s])) >= abs(t_stat(d)) for s in samples)
        assert row.p_value == count / B
    # seeded: the same seed gives the same p-values; the p-values are close to the t-test's
    pd.testing.assert_frame_equal(table, pairwise_tests(scores, test="bootstrap", B=B, seed=seed))
    t_p = pairwise_tests(scores, test="t")["p_value"].fillna(1.0)
    assert np.abs(table["p_value"] - t_p).max() < 0.06


def test_bootstrap_zero_variance_samples():
    # d = (1, 3): t = 2 / (√2 / √2) = 2; w = (−1, 1); samples (w1, w1) and (w2, w2) have sd 0 and mean
    # ≠ 0 (t* = ±∞, extreme), samples (w1, w2) and (w2, w1) have t* = 0: ASL = 1/2 in expectation.
    wide = np.array([[1.0, 3.0], [0.0, 0.0]])
    p = pairwise_tests(wide, test="bootstrap", B=20000, seed=1)["p_value"].iloc[0]
    assert p == pytest.approx(0.5, abs=0.015)
    constant = np.array([[0.5, 0.7, 0.9], [0.4, 0.6, 0.8]])  # d = 0.1 on every topic: t = ∞
    assert pairwise_tests(constant, test="bootstrap", B=200)["p_value"].iloc[0] == 0.0
    assert pairwise_tests(constant, test="t")["p_value"].iloc[0] < 1e-10


def test_randomized_tukey_hsd(scores):
    values = scores.to_numpy()
    B, seed = 300, 12  # noqa: N806
    table = pairwise_tests(scores, test="randomized_tukey", B=B, seed=seed)
    keys = np.random.default_rng(seed).random((B, 8, 25))  # the same permutations (one block here)
    largest = []
    for b in range(B):
        permuted = np.stack([values[np.argsort(keys[b, :, t]), t] for t in range(25)], axis=1)
        means = permuted.mean(axis=1)
        largest.append(means.max() - means.min())
    largest = np.array(largest)
    for row in table.itertuples():
        assert row.p_value == np.mean(largest >= abs(row.difference) - 1e-12)
    # one null distribution for all pairs: p falls as |difference| grows; identical runs: p = 1
    ordered = table.iloc[np.argsort(table["difference"].abs().to_numpy(), kind="stable")]
    assert (np.diff(ordered["p_value"].to_numpy()) <= 0).all()
    assert table[(table["run_a"] == "run2") & (table["run_b"] == "run3")]["p_value"].item() == 1.0
    # the family-wise control makes it more conservative than unadjusted paired tests here
    assert discriminative_power(scores, test="randomized_tukey", B=B, seed=seed) <= discriminative_power(scores)
    pd.testing.assert_frame_equal(table, pairwise_tests(scores, test="randomized_tukey", B=B, seed=seed))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"test": "sign"}, "test='sign' is not valid; choices: t, bootstrap, randomized_tukey, wilcoxon"),
        ({"alpha": 0}, "alpha=0 is out of range; expected a significance level 0 < alpha < 1"),
        ({"alpha": 1.0}, "alpha=1.0 is out of range"),
        ({"alpha": -0.1}, "alpha=-0.1 is out of range"),
        ({"alpha": "0.05"}, "alpha='0.05' is not a number"),
        ({"B": 99}, "B=99 is too small; expected an integer number of resamples >= 100"),
        ({"B": 1000.0}, "B=1000.0 is not an integer"),
        ({"B": True}, "B=True is not an integer"),
        ({"test": "bootstrap", "seed": "x"}, "seed='x' is not a valid seed"),
    ],
)
def test_discriminative_power_validation(scores, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        discriminative_power(scores, **kwargs)


def test_significance_input_validation(scores):
    assert TESTS == ("t", "bootstrap", "randomized_tukey", "wilcoxon")
    with pytest.raises(ValueError, match="holds 1 run"):
        discriminative_power(scores.iloc[:1])
    with pytest.raises(ValueError, match="holds 1 topic"):
        discriminative_power(scores.iloc[:, :1])
    tidy = _tidy(scores)
    with pytest.raises(ValueError, match="no value for run"):
        discriminative_power(tidy.iloc[1:])
    with pytest.raises(ValueError, match="NaN or infinite"):
        discriminative_power(scores.replace(scores.iloc[0, 0], np.inf))


# ---------------------------------------------------------------------------------------------------
# preference reconstruction
# ---------------------------------------------------------------------------------------------------
def _significant_preferences(wide, alpha):
    values, runs = wide.to_numpy(), list(wide.index)
    pairs = list(itertools.combinations(range(len(runs)), 2))
    out = {}
    for a, b in pairs:
        p = stats.ttest_rel(values[a], values[b]).pvalue
        if p * len(pairs) < alpha:
            out[(runs[a], runs[b])] = np.sign(values[a].mean() - values[b].mean())
    return out


def test_preference_agreement_counts(scores):
    rng = np.random.default_rng(23)
    degraded = scores + rng.normal(0, 0.15, scores.shape)
    degraded.iloc[6], degraded.iloc[1] = scores.iloc[1].to_numpy(), scores.iloc[6].to_numpy()  # a swap
    full_pref = _significant_preferences(scores, 0.05)
    deg_pref = _significant_preferences(degraded, 0.05)
    recovered = sum(1 for k, v in deg_pref.items() if full_pref.get(k) == v)
    result, table = preference_agreement(scores, degraded, return_table=True)
    assert result["pairs"] == 28
    assert (result["full_significant"], result["degraded_significant"], result["recovered"]) == (
        len(full_pref),
        len(deg_pref),
        recovered,
    )
    assert 0 < recovered < len(full_pref) and result["reversed"] > 0  # the swap reverses preferences
    assert result["precision"] == recovered / len(deg_pref)
    assert result["recall"] == recovered / len(full_pref)
    assert result["f1"] == pytest.approx(
        2 * result["precision"] * result["recall"] / (result["precision"] + result["recall"])
    )
    assert result["reversed"] + result["spurious"] + recovered == len(deg_pref)
    assert int(table["recovered"].sum()) == recovered
    assert bool(table["significant_full"].sum() == len(full_pref))


def test_preference_agreement_edge_cases(scores):
    same = preference_agreement(scores, _tidy(scores).sample(frac=1.0, random_state=0))  # order does not matter
    assert same["precision"] == same["recall"] == same["f1"] == 1.0
    assert same["full_significant"] > 0
    flat = pd.DataFrame(0.5, index=scores.index, columns=scores.columns)
    nothing = preference_agreement(scores, flat)  # no significant degraded preference
    assert math.isnan(nothing["precision"]) and nothing["recall"] == 0.0 and nothing["f1"] == 0.0
    both_flat = preference_agreement(flat, flat)
    assert math.isnan(both_flat["precision"]) and math.isnan(both_flat["recall"]) and math.isnan(both_flat["f1"])
    with pytest.raises(ValueError, match="different runs"):
        preference_agreement(scores, scores.rename(index={"run0": "other"}))
    with pytest.raises(ValueError, match="different topics"):
        preference_agreement(scores, scores.iloc[:, 1:])
    with pytest.raises(ValueError, match="alpha=2 is out of range"):
        preference_agreement(scores, scores, alpha=2)


# ---------------------------------------------------------------------------------------------------
# the Ahlgren & Grönqvist example on Robust04 (reduced)
# ---------------------------------------------------------------------------------------------------
def test_bpref10_vs_rankeff_example(robust04, tmp_path, capsys):
    """The example's first 5 % reduction (the same seed as a full run of the example), with fewer swap
    draws and bootstrap samples."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("example_bpref10", root / "examples" / "bpref10_vs_rankeff.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    tables = example.experiment(robust04["runs"], robust04["qrels"], levels=[0.05], repeats=1, trials=200, B=200)
    agreement_table, swaps, power = tables
    example._print_tables(*tables, repeats=1, subset=50, trials=200, B=200)
    example._plot(agreement_table, swaps, tmp_path / "plot.png", 10, 1)
    assert (tmp_path / "plot.png").stat().st_size > 10_000
    assert "Discriminative power" in capsys.readouterr().out
    at = agreement_table.set_index(["measure", "level"])
    # full judgments: the t-test discriminative power is an exact count of the 45 pairs
    full_power = {"AP": 28, "bpref": 25, "bpref-10": 27, "RankEff": 31, "infAP": 28}
    for name, count in full_power.items():
        assert at.loc[(name, 1.0), "power_t"] == count / 45
        assert at.loc[(name, 1.0), "tau"] == pytest.approx(1.0, abs=1e-12)
        assert at.loc[(name, 1.0), "tau_ap"] == pytest.approx(1.0, abs=1e-12)
    # the 5 % reduction: each measure against itself on the full judgments
    expected = {  # tau, tau_ap, rmse, bias, t-test power
        "AP": (0.3778, 0.3616, 0.2417, -0.2410, 8 / 45),
        "bpref": (0.2889, 0.3568, 0.0348, 0.0304, 3 / 45),
        "bpref-10": (0.6000, 0.5426, 0.2058, 0.2051, 22 / 45),
        "RankEff": (0.8222, 0.8069, 0.0132, -0.0094, 25 / 45),
        "infAP": (0.5111, 0.4116, 0.0687, -0.0672, 11 / 45),
    }
    for name, values in expected.items():
        row = at.loc[(name, 0.05)]
        got = (row["tau"], row["tau_ap"], row["rmse"], row["bias"], row["power_t"])
        np.testing.assert_allclose(got, values, atol=1e-4, err_msg=name)
    assert at.xs(0.05, level="level")["tau"].idxmax() == "RankEff"  # the paper's finding: RankEff holds best
    sw = swaps.set_index(["measure", "level"])
    np.testing.assert_allclose(sw.loc[("AP", 1.0)].to_numpy(), [0.3846, 0.2238, 0.0886, 0.0056, 0.2198], atol=1e-4)
    np.testing.assert_allclose(
        sw.loc[("RankEff", 0.05)].to_numpy(), [0.3765, 0.2046, 0.0856, 0.0187, 0.2663], atol=1e-4
    )
    assert sw.loc[("RankEff", 0.05), "all"] < sw.loc[("bpref-10", 0.05), "all"] < sw.loc[("AP", 0.05), "all"]
    pw = power.set_index(["measure", "level"])
    assert pw.loc[("bpref", 1.0), "power_bootstrap"] == 23 / 45
    assert pw.loc[("RankEff", 0.05), "power_bootstrap"] == 23 / 45
    assert (pw["power_t"] == at["power_t"].reindex(pw.index)).all()
