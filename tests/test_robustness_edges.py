"""Robustness toolkit on bad or unusual input: each case gives the right value or a clear error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ir_incomplete.robustness import (
    agreement,
    bias,
    kendall_tau,
    pearson,
    rmse,
    spearman,
    swap_rate,
    swap_rates,
    tau_ap,
)

# ---------------------------------------------------------------------------------------------------
# agreement statistics take mappings, paired by run name
# ---------------------------------------------------------------------------------------------------
REFERENCE = {"a": 0.4, "b": 0.1, "c": 0.3, "d": 0.2}
ESTIMATE = {"d": 0.25, "c": 0.05, "b": 0.15, "a": 0.5}  # another key order: pairing is by name


@pytest.mark.parametrize("function", [kendall_tau, tau_ap, spearman, pearson, rmse, bias])
def test_statistics_pair_dicts_by_run_name(function):
    as_series = function(pd.Series(REFERENCE), pd.Series(ESTIMATE))
    assert function(REFERENCE, ESTIMATE) == as_series
    assert function(REFERENCE, pd.Series(ESTIMATE)) == as_series
    ordered = [ESTIMATE[k] for k in REFERENCE]
    assert function(list(REFERENCE.values()), ordered) == as_series


def test_dict_statistics_values():
    # estimate order a > d > b > c, reference a > c > d > b: 6 pairs, (c, d) and (c, b) discordant
    assert kendall_tau(REFERENCE, ESTIMATE) == pytest.approx((4 - 2) / 6)
    assert rmse(REFERENCE, ESTIMATE) == pytest.approx(np.sqrt((0.1**2 + 0.05**2 + 0.25**2 + 0.05**2) / 4))
    assert bias(REFERENCE, ESTIMATE) == pytest.approx((0.1 + 0.05 - 0.25 + 0.05) / 4)
    assert agreement(REFERENCE, ESTIMATE)["tau"] == kendall_tau(REFERENCE, ESTIMATE)


@pytest.mark.parametrize("function", [kendall_tau, tau_ap, spearman, pearson, rmse, bias, agreement])
def test_statistics_refuse_dicts_of_other_runs(function):
    with pytest.raises(ValueError, match=r"different runs: only in x \['b'\], only in y \['e'\]"):
        function({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 1.0, "e": 2.0, "c": 3.0})
    with pytest.raises(ValueError, match="x maps runs to scores but y is a plain sequence"):
        function({"a": 1.0, "b": 2.0}, [1.0, 2.0])
    with pytest.raises(ValueError, match="x is not a vector of scores"):
        function(["0.1", "high"], [1.0, 2.0])


# ---------------------------------------------------------------------------------------------------
# swap rates: the bin width is checked
# ---------------------------------------------------------------------------------------------------
PER_TOPIC = np.random.default_rng(2).random((4, 12))


@pytest.mark.parametrize("width", [1e-300, float("inf"), float("nan"), 0.0, -0.1, "0.1", True])
def test_swap_rates_refuse_bad_bin_widths(width):
    with pytest.raises(ValueError, match=rf"bin_width={width!r} is (not valid|not a number|too small)"):
        swap_rates(PER_TOPIC, 3, trials=10, bin_width=width)


def test_swap_rates_bin_limit_message_says_the_smallest_width():
    from ir_incomplete.robustness.compare import MAX_SWAP_BINS

    largest = float(np.ptp(PER_TOPIC))
    smallest = largest / (MAX_SWAP_BINS - 1)
    with pytest.raises(ValueError, match=f"limit of 1,000,000; use bin_width >= {smallest:.3g}"):
        swap_rates(PER_TOPIC, 3, trials=10, bin_width=largest / MAX_SWAP_BINS)
    fine = swap_rates(PER_TOPIC, 3, trials=10, bin_width=smallest * 1.01)
    assert fine["comparisons"].sum() == 6 * 10
    relative = swap_rates(PER_TOPIC, 3, trials=10, bin_width=0.01, relative=True)
    assert relative["comparisons"].sum() == 6 * 10


@pytest.mark.parametrize("minimum", [float("inf"), float("nan"), -1.0])
def test_swap_rate_refuses_bad_minimum(minimum):
    with pytest.raises(ValueError, match="min_difference=.* is not valid"):
        swap_rate(PER_TOPIC, 3, trials=10, min_difference=minimum)


def test_swap_rate_with_a_tiny_minimum_counts_every_nonzero_difference():
    everything = swap_rate(PER_TOPIC, 3, trials=50, seed=1)
    assert swap_rate(PER_TOPIC, 3, trials=50, seed=1, min_difference=1e-300) == everything
    table = swap_rates(PER_TOPIC, 3, trials=50, seed=1)
    assert everything == table["swaps"].sum() / table["comparisons"].sum()


# ---------------------------------------------------------------------------------------------------
# bootstrap test: resamples drawn block by block
# ---------------------------------------------------------------------------------------------------
SCORES = np.random.default_rng(11).random((4, 15))


def test_bootstrap_memory_does_not_grow_with_b(monkeypatch):
    import tracemalloc

    from ir_incomplete.robustness import pairwise_tests, significance

    monkeypatch.setattr(significance, "_CHUNK_ELEMENTS", 20_000)
    tracemalloc.start()
    try:
        pairwise_tests(SCORES, "bootstrap", B=100_000, seed=3)  # all resample indices at once: 12 MB
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3_000_000


@pytest.mark.parametrize(
    "chunk, B", [(90, 2000), (7_000, 2000), (2_000_000, 2000), (50_000, 100_000), (2_000_000, 100_000)]
)
def test_bootstrap_p_values_do_not_depend_on_the_block_size(monkeypatch, chunk, B):
    from ir_incomplete.robustness import pairwise_tests, significance

    monkeypatch.setattr(significance, "_CHUNK_ELEMENTS", chunk)
    # the p-values of drawing every resample at once (as earlier versions did), for this seed
    expected = {
        2000: [0.1015, 0.9175, 0.8695, 0.216, 0.1185, 0.8105],
        100_000: [0.10032, 0.91994, 0.87516, 0.19779, 0.11594, 0.79671],
    }
    assert pairwise_tests(SCORES, "bootstrap", B=B, seed=3)["p_value"].tolist() == expected[B]
