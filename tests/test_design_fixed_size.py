"""The fixed-size design (``sample(..., design="stratified")``): exact budget, seeds, file round trip, and
its estimators checked by enumerating every sample of a toy universe (unbiased means, unbiased variance
of the linear measures, AP's numerator unbiased), beside the Poisson design's unchanged results."""

from __future__ import annotations

import hashlib
import io
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import UNRELIABLE_ALLOWED, ZERO_WIDTH_ALLOWED

import ir_incomplete
from ir_incomplete.estimation import read_design
from ir_incomplete.judging import sample, write_design
from ir_incomplete.judging.designs import stratum_sizes
from ir_incomplete.kernels.design import Items, Units, estimate_measure


def _runs(n_runs=3, n_topics=3, depth=12, n_docs=20, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for r in range(n_runs):
        rows = []
        for t in range(n_topics):
            docs = rng.permutation(n_docs)[:depth]
            rows += [(str(t + 1), f"D{d}", float(depth - i)) for i, d in enumerate(docs)]
        out[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return out


def _grade(frame):
    return frame[["query_id", "doc_id"]].assign(
        relevance=[(int(d[1:]) * 5 + int(q)) % 3 for q, d in zip(frame["query_id"], frame["doc_id"], strict=True)]
    )


# -- the design --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("certain", [0, 4])
def test_realised_size_is_the_budget_exactly(certain):
    runs = _runs()
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["D0", "D1"], "relevance": [1, 0]})
    for seed in range(25):
        design = sample(runs, 30, depth=12, seed=seed, certain=certain, qrels=qrels, design="stratified", strata=4)
        assert (design["stratum"] == "sampled").sum() == 30 - certain
        assert design.attrs["design"] == "stratified"
        strata = np.array(design.attrs["strata"])
        assert strata[:, 1].sum() == 30 - certain
        assert (strata[:, 1] >= 2).all() and (strata[:, 1] <= strata[:, 0]).all()
        sampled = design[design["stratum_id"] >= 0]
        assert (sampled["pi"].to_numpy() == (strata[:, 1] / strata[:, 0])[sampled["stratum_id"]]).all()
        assert (design.loc[design["stratum_id"] < 0, "pi"] == 1.0).all()
        assert np.bincount(sampled["stratum_id"], minlength=len(strata)).tolist() == strata[:, 1].tolist()


def test_allocation_follows_q_and_strata_split_by_q():
    design = sample(_runs(), 40, depth=12, seed=0, design="stratified", strata=5, prior="ap")
    # 55 open pairs cut at the pi-weighted quantiles of q (the AP-prior): each stratum expects 8 of the
    # 40 judgments, the low-q strata hold more pairs, the top one is taken whole
    assert design.attrs["strata"] == [[16, 8], [12, 8], [10, 8], [9, 8], [8, 8]]
    # a uniform prior: every q equal, equal strata
    flat = sample(_runs(), 40, depth=12, seed=0, design="stratified", strata=5, prior="uniform")
    assert flat.attrs["strata"] == [[11, 8]] * 5


def test_same_seed_same_design_and_seeds_differ():
    runs = _runs()
    a = sample(runs, 30, depth=12, seed=7, design="stratified", strata=4)
    b = sample(runs, 30, depth=12, seed=7, design="stratified", strata=4)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert a.attrs == b.attrs
    c = sample(runs, 30, depth=12, seed=8, design="stratified", strata=4)
    assert set(zip(a["query_id"], a["doc_id"], strict=True)) != set(zip(c["query_id"], c["doc_id"], strict=True))


def test_write_read_round_trip(tmp_path):
    design = sample(_runs(), 30, depth=12, seed=2, certain=3, design="stratified", strata=4)
    path = tmp_path / "design.tsv"
    write_design(design, path)
    back = read_design(path)
    assert back.attrs == design.attrs
    pd.testing.assert_frame_equal(back, read_design(design), check_exact=True)
    assert back["stratum_id"].dtype.kind == "i"
    runs = _runs()
    judged = _grade(design)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_file = ir_incomplete.estimate(runs, judged, path, ["AP@12", "P@5"], control="none")
        from_frame = ir_incomplete.estimate(runs, judged, design, ["AP@12", "P@5"], control="none")
    pd.testing.assert_frame_equal(from_file, from_frame, check_exact=True)


def test_allocation_by_largest_remainder():
    assert stratum_sizes(np.array([3.6, 3.3, 3.1]), np.array([10, 10, 10]), 10).tolist() == [4, 3, 3]
    # capped at N_h, at least 2, the total exact
    assert stratum_sizes(np.array([0.2, 9.0, 0.8]), np.array([5, 6, 5]), 10).tolist() == [2, 6, 2]
    assert stratum_sizes(np.array([0.5, 0.5, 9.0]), np.array([1, 5, 20]), 10).tolist() == [1, 2, 7]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"design": "srs"}, "design='srs' is not valid; choices: poisson, stratified"),
        ({"design": "stratified", "strata": 0}, r"strata=0 is out of range; expected an integer >= 1"),
        ({"design": "stratified", "certain": 29}, r"needs at least 2 judgments beyond the certainty stratum"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sample(_runs(), 30, depth=12, **kwargs)


def test_inconsistent_design_files_are_refused():
    design = sample(_runs(), 30, depth=12, seed=0, design="stratified", strata=4)
    broken = design.copy()
    size, n = design.attrs["strata"][0]
    broken.attrs = {**design.attrs, "strata": [[2 * size, 2 * n]] + design.attrs["strata"][1:]}
    with pytest.raises(ValueError, match=rf"stratum 0 has {n} rows in the design, but its settings say n_h={2 * n}"):
        read_design(broken)
    broken = design.copy()
    broken.attrs = dict(design.attrs)
    broken.loc[0, "pi"] = 0.125
    with pytest.raises(ValueError, match=r"design row 0: pi=0.125 of .* disagrees with its stratum"):
        read_design(broken)
    broken = design.drop(columns="stratum_id")
    broken.attrs = dict(design.attrs)
    with pytest.raises(ValueError, match="a stratified design has no 'stratum_id' column"):
        read_design(broken)
    broken = design.copy()
    broken.attrs = {**design.attrs, "design": "cluster"}
    with pytest.raises(ValueError, match="design='cluster'; choices: poisson, stratified"):
        read_design(broken)


#: the Poisson design ``sample(_runs(), 25, depth=12, seed=1, certain=3, prior="ap")`` drew before its random
#: numbers were dealt in the canonical pair order (topic, then document id); the estimates from it are frozen
OLD_POISSON_DESIGN = """\
query_id\tdoc_id\tpi\tstratum\tround
1\tD10\t1\tcertain\t1
1\tD11\t0.51563077353862508\tsampled\t1
1\tD13\t0.36067786597970269\tsampled\t1
1\tD14\t0.39166326598646939\tsampled\t1
1\tD16\t0.46189116435345412\tsampled\t1
1\tD18\t0.36686976447603814\tsampled\t1
1\tD4\t0.6328808299426345\tsampled\t1
1\tD6\t0.42985095796805295\tsampled\t1
1\tD7\t0.42985095796805295\tsampled\t1
1\tD8\t0.53664177638602284\tsampled\t1
2\tD1\t0.63878774566298802\tsampled\t1
2\tD12\t0.61822457289213317\tsampled\t1
2\tD15\t0.38396873103495621\tsampled\t1
2\tD18\t0.35404553955684964\tsampled\t1
2\tD19\t0.29350705557325169\tsampled\t1
2\tD2\t0.4960890974712901\tsampled\t1
2\tD4\t0.30938096630294859\tsampled\t1
2\tD8\t0.60540034797294462\tsampled\t1
3\tD0\t0.51660785734199177\tsampled\t1
3\tD10\t0.41731171582484639\tsampled\t1
3\tD14\t0.64636014513908013\tsampled\t1
3\tD4\t1\tcertain\t1
3\tD5\t0.775131648057789\tsampled\t1
3\tD6\t0.33938928250634842\tsampled\t1
3\tD7\t1\tcertain\t1
"""


def test_poisson_design_and_estimates_are_unchanged():
    """Values computed with the code before the fixed-size design existed, from the design drawn then; the
    same seed draws another sample since the draws follow the canonical pair order (its hash below)."""
    runs = _runs()
    design = sample(runs, 25, depth=12, seed=1, certain=3, prior="ap")  # the default prior then
    text = design.to_csv(sep="\t", index=False, float_format="%.17g")
    assert hashlib.sha256(text.encode()).hexdigest() == (
        "2def6de34040bf481b7f0387c4003aa9aef49f5dbd10353f9878195fff25341a"
    )
    assert "stratum_id" not in design.columns and design.attrs["design"] == "poisson"
    drawn_then = pd.read_csv(io.StringIO(OLD_POISSON_DESIGN), sep="\t", dtype={"query_id": str, "doc_id": str})
    drawn_then.attrs = dict(design.attrs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = ir_incomplete.estimate(runs, _grade(drawn_then), drawn_then, ["P@5", "R", "AP@12"], control="none")
    value = [0.6830028222657609, 0.7310459815487316, 0.4844089473796758] + [11.297634788951909] * 3
    np.testing.assert_array_equal(out["value"].to_numpy()[:6], value)  # sums: exact
    np.testing.assert_allclose(
        out["value"].to_numpy()[6:], [0.4183751881710663, 0.6926185487206281, 0.3768004782645402], rtol=1e-13
    )
    se = [0.24963192449123497, 0.1891013037275463, 0.12849419234341988] + [2.2702159975445095] * 3
    se += [0.07126346928628352, 0.1113941116839452, 0.09002863905303247]
    np.testing.assert_allclose(out["se"].to_numpy(), se, rtol=1e-13)


# -- exact enumeration ---------------------------------------------------------------------------------------

# a toy universe: topic 1 has documents a–d, topic 2 e–h; h is a certainty pair; strata cut across
# topics: {1a, 1b, 2e, 2f} (N = 4, n = 2) and {1c, 1d, 2g} (N = 3, n = 2): 6 · 3 = 18 samples
TOPIC = np.array([0, 0, 0, 0, 1, 1, 1, 1])
DOCS = np.array(["a", "b", "c", "d", "e", "f", "g", "h"])
GRADE = np.array([1, 0, 2, 1, 1, 2, 0, 1])
STRATUM = np.array([0, 0, 1, 1, 0, 0, 1, -1])
STRATA = [[4, 2], [3, 2]]
RANKINGS = {  # run → topic → documents in rank order
    "x": {"1": "abcd", "2": "efgh"},
    "y": {"1": "dcab", "2": "hgfe"},
    "z": {"1": "cadb", "2": "gehf"},
}


def _toy_runs():
    rows = [
        (run, q, d, float(10 - i))
        for run, per in RANKINGS.items()
        for q, docs in per.items()
        for i, d in enumerate(docs)
    ]
    frame = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])
    return {run: part.drop(columns="run") for run, part in frame.groupby("run")}


def _samples():
    """Every fixed-size sample: a boolean mask over the 8 units (the certainty pair always in)."""
    members = [np.flatnonzero(STRATUM == h) for h in range(len(STRATA))]
    for picks in itertools.product(*(itertools.combinations(m, n) for m, (_, n) in zip(members, STRATA, strict=True))):
        mask = STRATUM < 0
        mask = mask.copy()
        for p in picks:
            mask[list(p)] = True
        yield mask


def _pi():
    rate = np.array([n / size for size, n in STRATA])
    return np.where(STRATUM >= 0, rate[np.maximum(STRATUM, 0)], 1.0)


def _design(mask):
    frame = pd.DataFrame(
        {
            "query_id": [str(t + 1) for t in TOPIC[mask]],
            "doc_id": DOCS[mask],
            "pi": _pi()[mask],
            "stratum": np.where(STRATUM[mask] >= 0, "sampled", "certain"),
            "stratum_id": STRATUM[mask],
        }
    )
    frame.attrs = {"design": "stratified", "strata": STRATA, "depth": 4, "runs": sorted(RANKINGS)}
    return frame


def _qrels():
    return pd.DataFrame({"query_id": [str(t + 1) for t in TOPIC], "doc_id": DOCS, "relevance": GRADE})


@UNRELIABLE_ALLOWED
@ZERO_WIDTH_ALLOWED
def test_enumeration_linear_measures_unbiased_with_exact_variance():
    runs = _toy_runs()
    measures = ["P@2", "RBP(p=0.8)@4", "R"]
    census = pd.DataFrame(
        {"query_id": [str(t + 1) for t in TOPIC], "doc_id": DOCS, "pi": 1.0}
    )  # every pair judged: the truth
    census.attrs = {"depth": 4, "runs": sorted(RANKINGS)}
    truth = ir_incomplete.estimate(runs, _qrels(), census, measures, control="none")["value"].to_numpy()
    values, variances = [], []
    for mask in _samples():
        out = ir_incomplete.estimate(runs, _qrels(), _design(mask), measures, control="none")
        values.append(out["value"].to_numpy())
        variances.append(out["se"].to_numpy() ** 2)
    values, variances = np.array(values), np.array(variances)
    assert len(values) == 18
    np.testing.assert_allclose(values.mean(axis=0), truth, rtol=0, atol=1e-12)
    exact = values.var(axis=0)  # the 18 samples are equally likely
    assert (exact > 1e-4).all()
    np.testing.assert_allclose(variances.mean(axis=0), exact, rtol=0, atol=1e-12)


def _kernel_inputs(mask, f):
    levels = np.array([0.0, 1.0, 2.0])
    units = Units(
        TOPIC,
        _pi(),
        mask,
        GRADE,
        levels,
        f,
        2,
        STRATUM,
        np.array(STRATA),
    )
    ranking, rank, unit = [], [], []
    index = {(TOPIC[u], DOCS[u]): u for u in range(len(DOCS))}
    for r, run in enumerate(sorted(RANKINGS)):
        for t, q in enumerate(("1", "2")):
            for i, d in enumerate(RANKINGS[run][q]):
                ranking.append(r * 2 + t)
                rank.append(i)
                unit.append(index[(t, d)])
    return units, Items(np.array(ranking), np.array(rank), np.array(unit), len(RANKINGS), 2)


def _f_level():
    """A fixed control variate (predicted probability of each grade), not zero, not the truth."""
    p = np.array([0.3, 0.6, 0.2, 0.5, 0.4, 0.7, 0.1, 0.0])
    return np.column_stack([1.0 - p, 0.6 * p, 0.4 * p])


@pytest.mark.parametrize("control", [False, True])
def test_enumeration_ap_numerator_unbiased(control):
    f = _f_level() if control else np.zeros((8, 3))
    rel = (GRADE >= 1).astype(float)
    numerators = []
    for mask in _samples():
        units, items = _kernel_inputs(mask, f)
        numerators.append(estimate_measure("AP", 4, units, items).numerator)
    truth = np.zeros((len(RANKINGS), 2))
    index = {(TOPIC[u], DOCS[u]): u for u in range(len(DOCS))}
    for r, run in enumerate(sorted(RANKINGS)):
        for t, q in enumerate(("1", "2")):
            y = rel[[index[(t, d)] for d in RANKINGS[run][q]]]
            truth[r, t] = sum(y[i] / (i + 1) * (1.0 + y[:i].sum()) for i in range(len(y)))
    np.testing.assert_allclose(np.mean(numerators, axis=0), truth, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["P", "RBP", "R"])
def test_enumeration_linear_variance_and_covariance_with_a_control_variate(kind):
    """With a fixed control variate, the SRSWOR covariance of the runs' sums over topics is unbiased."""
    values, estimates = [], []
    for mask in _samples():
        units, items = _kernel_inputs(mask, _f_level())
        result = estimate_measure(kind, 3, units, items)
        values.append(result.value.sum(axis=1))
        estimates.append(units.covariance(result.z))
    values = np.array(values)
    exact = np.cov(values.T, bias=True)
    np.testing.assert_allclose(np.mean(estimates, axis=0), exact, rtol=0, atol=1e-12)


def test_ratio_correction_uses_the_without_replacement_covariance():
    """The per-topic covariance of the ratio bias correction, against its definition written out."""
    from ir_incomplete.kernels.design import _srs_cross

    mask = np.array([True, False, True, False, True, True, True, True])
    units, _ = _kernel_inputs(mask, np.zeros((8, 3)))
    rng = np.random.default_rng(3)
    z = rng.normal(size=(3, len(units.random)))
    w = rng.normal(size=len(units.random))
    t_r, h = units.random_topic, units.random_stratum
    expected = np.zeros((3, 2))
    for t in range(2):
        zt = np.where(t_r == t, z, 0.0)
        wt = np.where(t_r == t, w, 0.0)
        for s in range(len(STRATA)):
            m = h == s
            size, n = STRATA[s]
            c = (1 - n / size) * n / (n - 1)
            zc = zt[:, m] - zt[:, m].mean(axis=1, keepdims=True)
            expected[:, t] += c * zc @ (wt[m] - wt[m].mean())
    np.testing.assert_allclose(_srs_cross(z, w, t_r, units, 2), expected, rtol=1e-12, atol=1e-15)


def test_second_order_term_reweights_same_stratum_pairs():
    from ir_incomplete.kernels.design import _product_terms

    # one ranking of three units: 0 and 1 share stratum 0, unit 2 is in stratum 1
    v = np.array([0.5, 2.0, 1.5])
    ranking, rank, unit = np.zeros(3, dtype=np.int64), np.arange(3), np.arange(3)
    kappa = np.array([1.5, 1.2])
    plain = _product_terms(v, ranking, rank, unit, 1, 1, np.ones(1), 3).toarray()
    srs = _product_terms(v, ranking, rank, unit, 1, 1, np.ones(1), 3, np.array([0, 0, 1]), kappa).toarray()
    # pairs (0, 1), (0, 2), (1, 2): only the first is within a stratum
    np.testing.assert_allclose(srs, plain * np.sqrt([1.5, 1.0, 1.0]), rtol=1e-15)
    np.testing.assert_allclose(plain, [[np.sqrt(1.0) / 2, np.sqrt(0.75) / 3, np.sqrt(3.0) / 3]], rtol=1e-15)


def test_command_line_draws_the_same_fixed_size_design(tmp_path, capsys):
    from ir_incomplete.cli import main

    folder = tmp_path / "runs"
    folder.mkdir()
    for name, frame in _runs().items():
        lines = [f"{q} Q0 {d} {i % 12 + 1} {s} {name}" for i, (q, d, s) in enumerate(frame.itertuples(index=False))]
        (folder / name).write_text("\n".join(lines) + "\n")
    path = tmp_path / "design.tsv"
    argv = ["sample", str(folder), "--depth", "12", "--budget", "30", "--seed", "4", "--design", "stratified"]
    assert main([*argv, "--strata", "4", "-o", str(path)]) == 0
    got = read_design(str(path))
    expected = sample(_runs(), 30, depth=12, seed=4, design="stratified", strata=4)
    pd.testing.assert_frame_equal(got, read_design(expected), check_exact=True)
    assert got.attrs["strata"] == expected.attrs["strata"] and len(got) == 30
    assert main([*argv, "--strata", "0"]) == 2
    assert capsys.readouterr().err.strip().endswith("--strata 0 is not valid; expected a number of groups >= 1")
