"""simulate (ir_incomplete.judging.simulation): the curve equals a direct computation, any strategy can be
replayed, bad input is refused, and the issue's TREC-COVID depth-pooling τ values are reproduced."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from ir_incomplete import evaluate
from ir_incomplete.judging import DepthPool, MoveToFront, RRFPool, plot_simulation, pool, simulate
from ir_incomplete.robustness import kendall_tau, rmse, tau_ap


@pytest.fixture
def data():
    rng = np.random.default_rng(5)
    runs = {}
    for r in range(6):
        rows = []
        for t in range(4):
            docs = rng.permutation(40)[:25]
            rows += [(str(t + 1), f"D{d}", float(30 - i)) for i, d in enumerate(docs)]
        runs[f"r{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    oracle = pd.DataFrame(
        [(str(t + 1), f"D{d}", int(rng.integers(0, 3))) for t in range(4) for d in range(40) if rng.random() < 0.5],
        columns=["query_id", "doc_id", "relevance"],
    )
    return runs, oracle


def _means(runs, qrels, measure):
    frame = evaluate(runs, qrels, [measure], per_query=True)
    wide = frame.pivot(index="run", columns="query_id", values="value")
    wide = wide.reindex(columns=["1", "2", "3", "4"], fill_value=0.0).fillna(0.0)
    return wide.mean(axis=1)


def test_curve_equals_scoring_the_pool_directly(data):
    runs, oracle = data
    sizes = [len(pool(runs, "depth", depth=k)) for k in (1, 3)]
    curve = simulate(runs, oracle, DepthPool(), sizes[-1], sizes, measures=["AP", "nDCG@10"])
    assert list(curve["judgments"].unique()) == sizes
    for k, size in zip((1, 3), sizes, strict=True):
        pooled = pool(runs, "depth", depth=k)
        judged = pooled.merge(oracle, on=["query_id", "doc_id"], how="left").fillna({"relevance": 0})
        judged["relevance"] = judged["relevance"].astype(int)
        for measure in ("AP", "nDCG@10"):
            ref, est = _means(runs, oracle, measure), _means(runs, judged, measure)
            row = curve[(curve["judgments"] == size) & (curve["measure"] == measure)].iloc[0]
            assert row["tau"] == pytest.approx(kendall_tau(ref, est), abs=1e-12)
            assert row["tau_ap"] == pytest.approx(tau_ap(ref, est), abs=1e-12)
            assert row["rmse"] == pytest.approx(rmse(ref, est), abs=1e-12)
            assert row["relevant"] == int((judged["relevance"] >= 1).sum())
    reference = curve.attrs["reference"]
    assert list(reference.columns) == ["AP", "nDCG@10"]


def test_step_as_an_integer_and_exhaustion(data):
    runs, oracle = data
    curve = simulate(runs, oracle, "rrf", 10_000, 30, measures=["AP"])
    total = len(pool(runs, "depth", depth=25))
    assert list(curve["judgments"])[:3] == [30, 60, 90]
    assert curve["judgments"].iloc[-1] == total  # every pooled document judged: stops there
    assert curve["tau"].iloc[-1] == pytest.approx(1.0)
    assert curve["rmse"].iloc[-1] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("name", ["depth", "budget", "rrf", "rbp", "movetofront", "bandit"])
def test_every_method_name_replays(data, name):
    runs, oracle = data
    curve = simulate(runs, oracle, name, 60, 20, measures=["nDCG@10"])
    assert list(curve["judgments"]) == [20, 40, 60]
    assert curve.attrs["strategy"] == name
    assert np.isfinite(curve["tau"]).all()


def test_start_judgments_are_not_spent(data):
    runs, oracle = data
    start = oracle.iloc[:10]
    curve = simulate(runs, oracle, MoveToFront(), 40, 20, start=start, measures=["AP"])
    assert list(curve["judgments"]) == [20, 40]
    assert list(curve["judged"]) == [30, 50]


def test_same_inputs_same_curve(data):
    runs, oracle = data
    a = simulate(runs, oracle, "bandit", 60, 15, measures=["AP"]).drop(columns="seconds")
    b = simulate(runs, oracle, "bandit", 60, 15, measures=["AP"]).drop(columns="seconds")
    pd.testing.assert_frame_equal(a, b)


def test_judge_next_is_resolved_lazily(data):
    runs, oracle = data
    if importlib.util.find_spec("ir_incomplete.judging.mtc") is None:
        with pytest.raises(ValueError, match="'judge_next' is not available"):
            simulate(runs, oracle, "judge_next", 20, 10)
    else:  # pragma: no cover - with the judge_next module installed
        curve = simulate(runs, oracle, "judge_next", 20, 10, measures=["AP"])
        assert list(curve["judgments"]) == [10, 20]


def test_judge_next_starts_from_the_candidate_table_of_the_pools(data):
    from ir_incomplete.judging import Candidates, JudgeNext

    class Recording(JudgeNext):
        def start(self, runs, qrels=None):
            self.received = runs
            return super().start(runs, qrels)

    runs, oracle = data
    strategy = Recording("AP")
    simulate(runs, oracle, strategy, 20, 10, measures=["AP"], score_precision="float64")
    assert isinstance(strategy.received, Candidates)  # one table, built once, as for every pool
    assert strategy.received.score_precision == "float64"  # ranked as the runs are scored


def test_plot(data, tmp_path):
    runs, oracle = data
    curves = {"depth": simulate(runs, oracle, "depth", 40, 20), "rrf": simulate(runs, oracle, RRFPool(), 40, 20)}
    fig = plot_simulation(curves, "tau", path=tmp_path / "curve.png", targets=(0.9,))
    assert (tmp_path / "curve.png").stat().st_size > 0
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="statistic='kappa' is not valid"):
        plot_simulation(curves, "kappa")


# ---------------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------------
def test_oracle_without_a_query_the_runs_answer(data):
    runs, oracle = data
    partial = oracle[oracle["query_id"] != "3"]
    with pytest.raises(ValueError, match=r"judge no document for 1 query the runs answer \(first: '3'\)"):
        simulate(runs, partial, "depth", 20, 10)


@pytest.mark.parametrize("budget", [0, -1, 1.5])
def test_budget_below_one(data, budget):
    runs, oracle = data
    with pytest.raises(ValueError, match="budget="):
        simulate(runs, oracle, "depth", budget, 10)


@pytest.mark.parametrize(("step", "message"), [(0, "step=0"), ([10, 5], "strictly increasing"), ([50], "more than")])
def test_bad_steps(data, step, message):
    runs, oracle = data
    with pytest.raises(ValueError, match=message):
        simulate(runs, oracle, "depth", 40, step)


def test_unknown_strategy(data):
    runs, oracle = data
    with pytest.raises(ValueError, match="choices: depth"):
        simulate(runs, oracle, "oracle", 40, 10)
    with pytest.raises(TypeError, match="has no start"):
        simulate(runs, oracle, object(), 40, 10)


def test_one_run_is_refused(data):
    runs, oracle = data
    with pytest.raises(ValueError, match="at least 2 runs"):
        simulate({"r0": runs["r0"]}, oracle, "depth", 40, 10)


# ---------------------------------------------------------------------------------------------------
# the measured table (TREC-COVID round 1, 143 runs, complete qrels as the oracle)
# ---------------------------------------------------------------------------------------------------
def test_covid_depth_pooling_tau_as_measured(covid):
    curve = simulate(covid["runs"], covid["complete"], DepthPool(), 4081, [2256, 4081])
    got = curve.set_index(["judgments", "measure"])["tau"].round(3).to_dict()
    assert got == {(2256, "AP"): 0.819, (2256, "nDCG@10"): 0.868, (4081, "AP"): 0.848, (4081, "nDCG@10"): 0.910}


# ---------------------------------------------------------------------------------------------------
# the example writes its figure into the current folder or --out, never into the checkout
# ---------------------------------------------------------------------------------------------------
def test_example_writes_to_the_current_folder_or_out(tmp_path, data, monkeypatch, capsys):
    import gzip
    import importlib.util
    from pathlib import Path

    pytest.importorskip("matplotlib")
    root = Path(__file__).resolve().parents[1]
    runs, oracle = data
    folder = tmp_path / "covid"
    (folder / "runs").mkdir(parents=True)
    for name, run in runs.items():
        with gzip.open(folder / "runs" / f"{name}.gz", "wt") as handle:
            handle.writelines(
                f"{q} Q0 {d} {i} {s} {name}\n" for i, (q, d, s) in enumerate(run.itertuples(index=False), start=1)
            )
    with gzip.open(folder / "qrels.complete-topics1-30.txt.gz", "wt") as handle:
        handle.writelines(f"{q} 0 {d} {r}\n" for q, d, r in oracle.itertuples(index=False))
    spec = importlib.util.spec_from_file_location("judging_covid", root / "examples" / "judging_covid.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    args = ["--data", str(folder), "--budget", "60", "--step", "30", "--full"]
    assert example.main(args) == 0
    out = capsys.readouterr().out
    assert (cwd / "judging_covid.png").stat().st_size > 1000
    assert "depth 1" in out and "MoveToFront" in out and "saved judging_covid.png" in out
    assert example.main([*args, "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "judging_covid.png").is_file()
