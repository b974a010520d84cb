"""Intervals that say when the design cannot back them: the columns ``seen``, ``delta`` and ``reliable`` of
:func:`ir_incomplete.estimate`, the interval's allowance for the ratio-bias correction, the anticipated
variance, and the one warning at every front door."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import UNRELIABLE_ALLOWED, ZERO_WIDTH_ALLOWED
from scipy.special import stdtrit
from test_design_measures import _synthetic  # the same synthetic runs, qrels and labels

import ir_incomplete
from ir_incomplete import estimate, evaluate
from ir_incomplete.cli import main
from ir_incomplete.estimation import DELTA_MAX, SEEN_MIN, STARVED_MAX
from ir_incomplete.judging import sample, write_design

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
FLAG = "rows have intervals this design cannot back"


@pytest.fixture(scope="module")
def synth():
    runs, qrels, _ = _synthetic()
    return runs, qrels


@pytest.fixture(scope="module")
def sparse():
    """A small collection like the one whose intervals failed unflagged: sparse graded relevance, a depth-10
    pool judged, a few random judgments per topic."""
    from synthetic_collection import make_collection

    runs, qrels = make_collection(seed=1, topics=12, runs=12, docs_per_topic=1500)
    space = ir_incomplete.estimation.Universe(runs, 100)
    top10 = space.frame(np.unique(space.item_unit[(space.item_rank < 10) & (space.item_unit >= 0)]))
    qrels = qrels.assign(query_id=qrels["query_id"].astype(str), doc_id=qrels["doc_id"].astype(str))
    pool = top10.merge(qrels, on=["query_id", "doc_id"], how="left").fillna({"relevance": 0})
    pool["relevance"] = pool["relevance"].astype(int)
    design = sample(runs, 120, qrels=pool, seed=0)
    truth = design[["query_id", "doc_id"]].merge(qrels, on=["query_id", "doc_id"], how="left")
    judged = truth.fillna({"relevance": 0}).astype({"relevance": int})
    return runs, judged, design


@UNRELIABLE_ALLOWED
@ZERO_WIDTH_ALLOWED
@pytest.mark.parametrize("measure", ["AP@10", "nDCG@5", "P@5", "RBP(p=0.8)@10", "R"])
def test_interval_is_value_plus_minus_t_root_of_se2_plus_bias2(synth, measure):
    runs, qrels = synth
    design = sample(runs, 60, depth=20, seed=3)
    means, pairs = estimate(runs, qrels, design, measure, pairs="both")
    for table in (means, pairs):
        se, delta, df = (table[c].to_numpy(dtype=float) for c in ("se", "delta", "df"))
        half = stdtrit(np.maximum(df, 1.0), 0.95) * np.sqrt(se**2 + (np.nan_to_num(delta, posinf=0.0) * se) ** 2)
        np.testing.assert_allclose(table["hi"] - table["value"], half, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(table["value"] - table["lo"], half, rtol=1e-12, atol=1e-15)
    if measure in ("P@5", "RBP(p=0.8)@10", "R"):  # linear: no ratio, no bias
        assert (means["delta"] == 0).all() and (pairs["delta"] == 0).all()
    else:  # a ratio: the correction is estimated, and some run has one
        assert (means["delta"] != 0).any()
    # a pair's delta is the difference of the two runs' bias over the pair's own se
    bias = dict(zip(means["run"], means["delta"] * means["se"], strict=True))
    want = (pairs["run_a"].map(bias) - pairs["run_b"].map(bias)) / pairs["se"]
    ok = pairs["se"] > 0
    np.testing.assert_allclose(pairs.loc[ok, "delta"], want[ok], rtol=1e-9, atol=1e-12)


def test_a_complete_design_is_reliable_and_exact(synth):
    """Every pair judged: the plain measures to 1e-12, intervals of width 0, nothing flagged, no warning."""
    runs, qrels = synth
    with pytest.warns(UserWarning, match="every pair is judged"):  # more than the universe: every pi = 1
        design = sample(runs, 10**6, depth=20, seed=0)
    assert (design["pi"] == 1).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = estimate(runs, qrels, design, ["AP@10", "nDCG@5", "P@5"])
    assert got["reliable"].all() and (got["delta"] == 0).all() and (got["seen"] == 1).all()
    # the plain measures with the universe's judgments (the runs' top 20; documents outside are nonrelevant)
    plain = ir_incomplete.judging.design_truth(runs, qrels, design, ["AP@10", "nDCG@5", "P@5"])
    for measure in ("AP@10", "nDCG@5", "P@5"):
        mine = got[got["measure"] == measure].set_index("run")["value"]
        theirs = plain[plain["measure"].astype(str) == measure].set_index("run")["value"]
        assert np.abs(mine - theirs.reindex(mine.index)).max() <= 1e-12
    assert (got["lo"] == got["value"]).all() and (got["hi"] == got["value"]).all()


def test_anticipated_variance_of_precision_by_hand():
    """The kernel's anticipated variance for P@k on a universe built by hand (every pi known)."""
    from ir_incomplete.kernels.design import Items, Units, estimate_measure

    # one topic, 4 units; one run ranking units 0, 1, 2 (k = 2 reads 0 and 1); unit 3 outside the run
    pi = np.array([1.0, 0.5, 0.25, 0.2])
    sampled = np.array([True, True, False, False])
    grade = np.array([1, 0, 0, 0])
    p_model = np.array([[0.3, 0.7], [0.6, 0.4], [0.9, 0.1], [0.5, 0.5]])
    units = Units(
        np.zeros(4, dtype=np.int64), pi, sampled, grade, np.array([0.0, 1.0]), np.zeros((4, 2)), 1, p_model=p_model
    )
    items = Items(np.zeros(3, dtype=np.int64), np.arange(3), np.arange(3), 1, 1)
    got = estimate_measure("P", 2, units, items)
    # units 0 (pi = 1: no variance) and 1 in the top 2: (1 − 0.5)/0.5 · (1/2)² · 0.4 · 0.6
    assert got.anticipated[0] == pytest.approx(1.0 * 0.25 * 0.24, rel=1e-12)
    r = estimate_measure("R", 2, units, items)  # R reads every unit not judged with certainty
    want = sum((1 - q) / q * m[1] * (1 - m[1]) for q, m in zip(pi[1:], p_model[1:], strict=True))
    assert r.anticipated[0] == pytest.approx(want, rel=1e-12)


def test_sparse_depth10_design_flags_ndcg_and_warns_once(sparse):
    """The failure that went unflagged: nDCG@10 on top of a judged depth-10 pool, with few random draws
    and sparse relevance, had intervals of width 0 that covered nothing; now its rows are not reliable and
    one warning says how many, why and what budget per topic would be needed."""
    runs, judged, design = sparse
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        means, pairs = estimate(runs, judged, design, ["nDCG@10", "AP@100"], pairs="both")
    flags = [str(w.message) for w in caught if FLAG in str(w.message)]
    assert len(flags) == 1
    ndcg = means[means["measure"] == "nDCG@10"]
    assert not ndcg["reliable"].any()
    assert not pairs.loc[pairs["measure"] == "nDCG@10", "reliable"].any()
    n_bad = int((~means["reliable"]).sum() + (~pairs["reliable"]).sum())
    assert flags[0].startswith(f"{n_bad} of {len(means) + len(pairs)} rows")
    assert "random judgments per topic (this design: " in flags[0]
    diag = means.attrs["diagnostics"]["nDCG@10"]
    assert diag["seen"] < SEEN_MIN or diag["starved"] > STARVED_MAX
    assert float(ndcg["seen"].median()) == pytest.approx(diag["seen"])


def test_reliable_follows_the_documented_rule(sparse):
    runs, judged, design = sparse
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        means, pairs = estimate(runs, judged, design, ["AP@100", "P@10", "nDCG@10"], pairs="both")
    for measure, diag in means.attrs["diagnostics"].items():
        setting = diag["seen"] >= SEEN_MIN and diag["starved"] <= STARVED_MAX
        for table in (means, pairs):
            rows = table[table["measure"] == measure]
            want = (rows["delta"].abs() <= DELTA_MAX) & setting
            assert (rows["reliable"] == want).all(), measure


def test_the_command_line_prints_the_columns_and_one_warning(sparse, tmp_path, capsys):
    runs, judged, design = sparse
    paths = []
    for name, run in runs.items():
        path = tmp_path / name
        path.write_text("".join(f"{q} Q0 {d} 0 {s} {name}\n" for q, d, s in run.itertuples(index=False)))
        paths.append(str(path))
    qrels = tmp_path / "judged.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in judged.itertuples(index=False)))
    write_design(design, tmp_path / "design.tsv")
    assert main(["estimate", str(qrels), str(tmp_path / "design.tsv"), *paths, "nDCG@10"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].endswith("\tseen\tdelta\treliable")
    assert all(line.endswith("\tFalse") for line in out.splitlines()[1:])
    assert err.count(FLAG) == 1


def test_evaluate_with_an_interval_warns_of_unreliable_design_rows(sparse, tmp_path):
    runs, judged, design = sparse
    write_design(design, tmp_path / "design.tsv")
    measure = f"StatNDCG(design={str(tmp_path / 'design.tsv')!r})@10"
    with pytest.warns(UserWarning, match=FLAG):
        evaluate(runs, judged, [measure], interval=0.9, per_query=False)


def test_compare_carries_the_flag_of_design_based_differences(sparse, tmp_path):
    """compare() prints design-based intervals of differences: their rows say whether the design backs them
    (estimate()'s flag), the other measures' rows and the baseline's own are <NA>, with the one warning."""
    from ir_incomplete import compare
    from ir_incomplete.report import format_report

    runs, judged, design = sparse
    write_design(design, tmp_path / "design.tsv")
    measure = f"StatNDCG(design={str(tmp_path / 'design.tsv')!r})@10"
    names = list(runs)
    with pytest.warns(UserWarning, match=FLAG):
        table = compare(runs, judged, [measure, "P@10"], baseline=names[0])
    design_rows = table[table["measure"] == measure]
    assert design_rows["reliable"].isna().tolist() == [True] + [False] * (len(names) - 1)  # baseline's own: <NA>
    assert not design_rows["reliable"].dropna().astype(bool).any()
    assert table.loc[table["measure"] == "P@10", "reliable"].isna().all()
    assert format_report(table)  # the report still reads the table
