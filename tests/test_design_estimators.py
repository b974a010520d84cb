"""Design-based estimates checked by value: complete designs against the plain measures, exact
unbiasedness and variance by enumerating every Poisson sample of a tiny universe, pairs of runs against
an independent linearisation, and the properties of :func:`ir_incomplete.judging.sample`."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from conftest import UNRELIABLE_ALLOWED, ZERO_WIDTH_ALLOWED

import ir_incomplete
from ir_incomplete.data import prepare_runs
from ir_incomplete.estimation import Universe, estimate
from ir_incomplete.judging.designs import inclusion_probabilities, sample
from ir_incomplete.kernels.design import Items, Units, estimate_measure

TOPICS = ("1", "2", "3")


def _runs(seed: int, n_runs: int = 4, pool: int = 14, length: int = 10) -> dict[str, pd.DataFrame]:
    """Runs over the same document ids in every topic, with tied integer scores (trec_eval's order:
    score descending, then document id descending)."""
    rng = np.random.default_rng(seed)
    runs = {}
    for r in range(n_runs):
        parts = []
        for t in TOPICS:
            docs = [f"d{i}" for i in rng.permutation(pool)[:length]]
            parts.append(pd.DataFrame({"query_id": t, "doc_id": docs, "score": rng.integers(0, 6, length) * 1.0}))
        runs[f"run{r}"] = pd.concat(parts, ignore_index=True)
    return runs


def _top(run: pd.DataFrame, depth: int) -> pd.DataFrame:
    """A run's top ``depth`` per query in trec_eval's order, with 0-based ranks (written here, not ours)."""
    ordered = run.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False], kind="stable")
    ordered = ordered.assign(rank=ordered.groupby("query_id").cumcount())
    return ordered[ordered["rank"] < depth]


def _judgments(seed: int, pool: int = 14) -> pd.DataFrame:
    """Grades 0/1/2 for every (topic, document) of the pool, and a few documents no run retrieves."""
    rng = np.random.default_rng(seed)
    rows = [(t, f"d{i}", int(rng.choice(3, p=[0.5, 0.3, 0.2]))) for t in TOPICS for i in range(pool + 3)]
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    frame.loc[frame["doc_id"] == "d0", "relevance"] = 2  # every topic has a relevant document
    return frame


# -- a complete design equals the plain measures ----------------------------------------------------------


@pytest.mark.parametrize("depth", [5, 7])
def test_complete_design_equals_plain_measures(depth):
    runs = _runs(3)
    judgments = _judgments(4)
    top = pd.concat([_top(run, depth) for run in runs.values()])
    universe = top[["query_id", "doc_id"]].drop_duplicates()
    design = universe.assign(pi=1.0, stratum="certain").reset_index(drop=True)
    design.attrs = {"depth": depth, "runs": list(runs)}
    restricted = judgments.merge(universe, on=["query_id", "doc_id"])
    assert len(restricted) == len(universe) < len(judgments)  # judgments outside the universe are ignored
    ours = [f"{m}@{k}" for m in ("AP", "nDCG", "P") for k in (3, depth)]
    plain = list(ours) + [f"RBPResidual(p=0.8)@{k}" for k in (3, depth)] + ["NumRel"]
    ours += [f"RBP(p=0.8)@{k}" for k in (3, depth)] + ["R"]
    got = estimate(runs, judgments, design, ours, per_query=True, control="none")
    want = ir_incomplete.evaluate(runs, restricted, plain, per_query=True)
    assert len(got) == len(want) == len(runs) * len(TOPICS) * len(ours)
    assert want["measure"].nunique() == len(plain)  # labels in the order of the measures asked for
    for mine, theirs in zip(ours, plain, strict=True):
        a = got[got["measure"] == mine].set_index(["run", "query_id"])["value"]
        b = want[want["measure"] == want["measure"].unique()[plain.index(theirs)]].set_index(["run", "query_id"])
        np.testing.assert_allclose(a, b["value"].reindex(a.index), rtol=0, atol=1e-12, err_msg=mine)
    means = estimate(runs, judgments, design, ours, control="none")
    np.testing.assert_allclose(
        means["value"], got.groupby(["measure", "run"], sort=False)["value"].mean().to_numpy(), rtol=0, atol=1e-15
    )
    assert (means["se"] == 0).all() and (means["lo"] == means["value"]).all() and (means["outside"] == 0).all()
    # R is the number of relevant (grade >= 1) universe pairs per topic
    r = estimate(runs, judgments, design, ["R"], per_query=True, control="none")
    counts = restricted[restricted["relevance"] >= 1].groupby("query_id").size()
    np.testing.assert_array_equal(r["value"].to_numpy(), counts.reindex(r["query_id"]).to_numpy(dtype=float))


def test_rbp_is_binary_rbp_with_rel():
    """``RBP(p=..)@k`` of estimate() is binary (grade >= rel, rel=1 by default), as our ``RBPResidual``
    (gain=binary) and ``ir_measures``' ``RBP(p=..,rel=1)``; it is not the graded RBP that ``ir_measures``
    means by an RBP without ``rel``."""
    runs = _runs(5)
    judgments = _judgments(6)
    top = pd.concat([_top(run, 6) for run in runs.values()])
    universe = top[["query_id", "doc_id"]].drop_duplicates()
    design = universe.assign(pi=1.0).reset_index(drop=True)
    design.attrs = {"depth": 6, "runs": list(runs)}
    restricted = judgments.merge(universe, on=["query_id", "doc_id"])
    plain = estimate(runs, judgments, design, ["RBP(p=0.8)@6"], per_query=True, control="none")["value"].to_numpy()
    rel1 = estimate(runs, judgments, design, ["RBP(p=0.8,rel=1)@6"], per_query=True, control="none")["value"].to_numpy()
    rel2 = estimate(runs, judgments, design, ["RBP(p=0.8,rel=2)@6"], per_query=True, control="none")["value"].to_numpy()
    np.testing.assert_array_equal(plain, rel1)
    for rel, values in ((1, rel1), (2, rel2)):
        want = ir_incomplete.evaluate(runs, restricted, [f"RBPResidual(p=0.8,rel={rel})@6"], per_query=True)
        np.testing.assert_allclose(values, want["value"].to_numpy(), rtol=0, atol=1e-12)
    # by hand: (1 - p) Σ p^(i-1) [grade >= 1] for run0, topic 1
    grade = restricted.set_index(["query_id", "doc_id"])["relevance"]
    ranked = _top(runs["run0"], 6)
    ranked = ranked[ranked["query_id"] == "1"]
    by_hand = sum(0.2 * 0.8**i * (grade[("1", d)] >= 1) for i, d in enumerate(ranked["doc_id"]))
    assert plain[0] == pytest.approx(by_hand, abs=1e-15)


# -- exact expectations by enumerating every sample -------------------------------------------------------

# two topics, 8 units: topic 0 has units 0..4, topic 1 units 5..7; unit 7 is a certainty unit (pi = 1)
_TOPIC = np.array([0, 0, 0, 0, 0, 1, 1, 1])
_PI = np.array([0.3, 0.6, 0.45, 0.8, 0.5, 0.35, 0.7, 1.0])
_GRADE = np.array([2, 0, 1, 1, 0, 1, 2, 1])  # index into LEVELS
_LEVELS = np.array([0.0, 1.0, 2.0])
# three runs' rankings (units, best first) per topic
_RANKINGS = {
    (0, 0): [0, 1, 2, 3, 4],
    (0, 1): [5, 6, 7],
    (1, 0): [3, 2, 4, 0],
    (1, 1): [7, 6, 5],
    (2, 0): [1, 4, 3, 2, 0],
    (2, 1): [6, 5],
}
_RUNS, _T = 3, 2


def _items() -> Items:
    ranking, rank, unit = [], [], []
    for (run, topic), units in sorted(_RANKINGS.items()):
        for r, u in enumerate(units):
            ranking.append(run * _T + topic)
            rank.append(r)
            unit.append(u)
    return Items(np.array(ranking), np.array(rank), np.array(unit), _RUNS, _T)


def _samples(pi: np.ndarray):
    """Every Poisson sample: (probability, sampled mask); a certainty unit is always in."""
    free = np.flatnonzero(pi < 1)
    for bits in itertools.product([False, True], repeat=len(free)):
        mask = pi >= 1
        mask[free] = bits
        prob = np.prod(np.where(mask, pi, 1 - pi))
        yield prob, mask


def _truth(kind: str, k: int, p: float = 0.8) -> np.ndarray:
    """Complete-judgment values per run and topic, written out by hand (AP: its numerator)."""
    y = (_GRADE >= 1).astype(float)
    out = np.zeros((_RUNS, _T))
    for (run, topic), units in _RANKINGS.items():
        top = units[:k]
        if kind == "P":
            out[run, topic] = sum(y[u] for u in top) / k
        elif kind == "RBP":
            out[run, topic] = sum((1 - p) * p**i * y[u] for i, u in enumerate(top))
        elif kind == "R":
            out[run, topic] = y[_TOPIC == topic].sum()
        elif kind == "APnum":
            out[run, topic] = sum(y[u] * sum(y[v] for v in top[: i + 1]) / (i + 1) for i, u in enumerate(top))
    return out


def _enumerate(kind: str, k: int, f_level: np.ndarray | None = None, pi: np.ndarray = _PI):
    """Expectations over all samples of the raw estimates, the values and the variance estimates of the
    run means, the exact covariance of the run means, and (AP) the expectation of the numerator N̂."""
    items = _items()
    f = np.zeros((len(_TOPIC), len(_LEVELS))) if f_level is None else f_level
    e_raw, e_value, e_cov, means, probs, e_num = 0.0, 0.0, 0.0, [], [], 0.0
    total = 0.0
    for prob, mask in _samples(pi):
        units = Units(_TOPIC, pi, mask, _GRADE, _LEVELS, f, _T)
        result = estimate_measure(kind, k, units, items, p=0.8)
        e_raw = e_raw + prob * result.raw
        e_value = e_value + prob * result.value
        zw = result.z * np.sqrt(1 - units.pi[units.random])[None, :]
        e_cov = e_cov + prob * (zw @ zw.T) / _T**2
        means.append(result.raw.mean(axis=1))
        probs.append(prob)
        if kind == "AP":
            r_hat = estimate_measure("R", k, units, items).raw
            e_num = e_num + prob * result.raw * r_hat
        total += prob
    assert total == pytest.approx(1.0, abs=1e-14)
    means, probs = np.array(means), np.array(probs)
    centred = means - probs @ means
    exact_cov = (centred * probs[:, None]).T @ centred
    return e_raw, e_value, e_cov, exact_cov, e_num


@pytest.mark.parametrize("kind,k", [("P", 3), ("P", 5), ("RBP", 4), ("R", 5)])
def test_linear_estimators_exactly_unbiased_with_exact_variance(kind, k):
    e_raw, e_value, e_cov, exact_cov, _ = _enumerate(kind, k)
    np.testing.assert_allclose(e_raw, _truth(kind, k), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(e_value, e_raw)  # no correction for a linear measure
    assert exact_cov.max() > 0.01  # the check below is not between zeros
    np.testing.assert_allclose(e_cov, exact_cov, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind,k", [("P", 3), ("RBP", 5), ("R", 5)])
def test_difference_estimator_with_any_fixed_control_is_unbiased(kind, k):
    f_level = np.random.default_rng(11).uniform(-0.5, 1.5, (len(_TOPIC), len(_LEVELS)))
    e_raw, _, e_cov, exact_cov, _ = _enumerate(kind, k, f_level)
    np.testing.assert_allclose(e_raw, _truth(kind, k), rtol=0, atol=1e-12)
    np.testing.assert_allclose(e_cov, exact_cov, rtol=0, atol=1e-12)
    # and the control changes the variance (it is used)
    _, _, _, plain_cov, _ = _enumerate(kind, k)
    assert np.abs(plain_cov - exact_cov).max() > 1e-3


@pytest.mark.parametrize("k", [3, 5])
def test_ap_numerator_unbiased_and_ratio_correction_reduces_bias(k):
    truth = _truth("APnum", k) / _truth("R", k)
    # pi 0.3-0.8 with 3-5 units per topic: a small sample, the ratio's bias is large (up to 0.25)
    e_raw, e_value, _, _, e_num = _enumerate("AP", k)
    np.testing.assert_allclose(e_num, _truth("APnum", k), rtol=0, atol=1e-12)
    raw_bias, corrected_bias = np.abs(e_raw - truth), np.abs(e_value - truth)
    assert 0.15 < raw_bias.max() < 0.25
    assert corrected_bias.sum() < 0.85 * raw_bias.sum() and corrected_bias.max() < raw_bias.max()
    # pi 0.65-0.9: the ratio is close in expectation, and the correction halves its bias in every cell
    high = 0.5 + 0.5 * _PI
    e_raw, e_value, _, _, e_num = _enumerate("AP", k, pi=high)
    np.testing.assert_allclose(e_num, _truth("APnum", k), rtol=0, atol=1e-12)
    raw_bias, corrected_bias = np.abs(e_raw - truth), np.abs(e_value - truth)
    assert raw_bias.max() < 0.08
    assert (corrected_bias <= 0.6 * raw_bias).all() and corrected_bias.max() < 0.045


# -- pairs --------------------------------------------------------------------------------------------


def _sampled_setup():
    runs = _runs(7, n_runs=4)
    judgments = _judgments(8)
    design = sample(runs, 15, depth=6, seed=31)
    grades = design.merge(judgments, on=["query_id", "doc_id"])["relevance"]
    assert (design["pi"] < 1).sum() >= 10 and (grades >= 1).sum() >= 5  # standard errors are not all 0
    return runs, judgments, design


@UNRELIABLE_ALLOWED
@ZERO_WIDTH_ALLOWED
def test_pairs_are_differences_with_their_own_standard_error():
    runs, judgments, design = _sampled_setup()
    names = list(runs)
    measures = ["P@5", "RBP(p=0.8)@6", "AP@6", "nDCG@5", "R"]
    means = estimate(runs, judgments, design, measures, control="none")
    pairs = estimate(runs, judgments, design, measures, pairs=True, control="none")
    assert list(pairs.columns) == [
        *["run_a", "run_b", "measure", "value", "lo", "hi", "se", "df", "significant", "delta", "reliable"]
    ]
    for m in measures:
        got = pairs[pairs["measure"] == m]
        assert list(zip(got["run_a"], got["run_b"], strict=True)) == list(itertools.combinations(names, 2))
        value = means[means["measure"] == m].set_index("run")["value"]
        np.testing.assert_array_equal(got["value"], value[got["run_a"]].to_numpy() - value[got["run_b"]].to_numpy())
    # R is the same for every run: each difference is 0 with no error
    r = pairs[pairs["measure"] == "R"]
    assert (r["value"] == 0).all() and (r["se"] == 0).all()
    # P@5 and RBP by hand: Σ over sampled random pairs of (1 − π) ((c_a − c_b) y / π)² / T²
    grade = judgments.set_index(["query_id", "doc_id"])["relevance"]
    random = design[design["pi"] < 1]
    y = (grade[list(zip(random["query_id"], random["doc_id"], strict=True))].to_numpy() >= 1).astype(float)
    keys = list(zip(random["query_id"], random["doc_id"], strict=True))

    def weight(run, m):
        top = _top(runs[run], 6)
        w = {}
        for q, d, r in zip(top["query_id"], top["doc_id"], top["rank"], strict=True):
            if m == "P@5" and r < 5:
                w[(q, d)] = 1 / 5
            elif m.startswith("RBP"):
                w[(q, d)] = 0.2 * 0.8**r
        return np.array([w.get(key, 0.0) for key in keys])

    for m in ("P@5", "RBP(p=0.8)@6"):
        got = pairs[pairs["measure"] == m]
        for a, b, se in zip(got["run_a"], got["run_b"], got["se"], strict=True):
            z = (weight(a, m) - weight(b, m)) * y / random["pi"].to_numpy()
            want = np.sqrt(((1 - random["pi"].to_numpy()) * z**2).sum()) / len(TOPICS)
            assert se == pytest.approx(want, rel=1e-12, abs=1e-15), (m, a, b)
        assert (got["se"] > 0.01).all()


def _ap_by_hand(runs, yhat: dict, k: int) -> np.ndarray:
    """Mean AP@k over the topics from pseudo-judgments ``yhat`` (statAP written out: N̂ / R̂)."""
    values = []
    for run in runs.values():
        top = _top(run, k)
        per_topic = []
        for t in TOPICS:
            docs = top[top["query_id"] == t]["doc_id"].tolist()
            x = [yhat.get((t, d), 0.0) for d in docs]
            num = sum(x[i] / (i + 1) * (1 + sum(x[:i])) for i in range(len(x)))
            den = sum(v for (q, _), v in yhat.items() if q == t)
            per_topic.append(num / den if den > 0 else 0.0)
        values.append(np.mean(per_topic))
    return np.array(values)


def _ap_product_terms(runs, yhat: dict, v: dict, k: int) -> np.ndarray:
    """[runs × (topic, unit pair)] of AP's numerator products: sqrt(v_i v_j) / (m_j R̂_t), i ranked before j
    (m_j the later 1-based rank), both random sampled; the Gram matrix over topics is their covariance."""
    columns: dict = {}
    rows = []
    for run in runs.values():
        top = _top(run, k)
        entry = {}
        for t in TOPICS:
            den = sum(val for (q, _), val in yhat.items() if q == t)
            docs = top[top["query_id"] == t]["doc_id"].tolist()
            for j, dj in enumerate(docs):
                for di in docs[:j]:
                    if (t, di) in v and (t, dj) in v and den > 0:
                        key = (t, *sorted((di, dj)))
                        entry[columns.setdefault(key, len(columns))] = np.sqrt(v[(t, di)] * v[(t, dj)]) / (j + 1) / den
        rows.append(entry)
    out = np.zeros((len(runs), len(columns)))
    for r, entry in enumerate(rows):
        for c, val in entry.items():
            out[r, c] = val
    return out


def test_ap_standard_errors_match_a_numerical_linearisation():
    """se² of AP@k of each run and of each pair = Σ (1 − π) (∂θ/∂ŷ_u · y_u / π_u)² (the derivative taken
    numerically from AP written out by hand) plus the second-order variance of the numerator's products,
    Σ_{i<j} v_i v_j / (m_j R̂)² with v = (1 − π) y² / π², all over T²."""
    runs, judgments, design = _sampled_setup()
    k = 6
    grade = judgments.set_index(["query_id", "doc_id"])["relevance"]
    keys = list(zip(design["query_id"], design["doc_id"], strict=True))
    pi = design["pi"].to_numpy()
    y = (grade[keys].to_numpy() >= 1).astype(float)
    yhat = {key: y[i] / pi[i] for i, key in enumerate(keys)}
    base = _ap_by_hand(runs, yhat, k)
    random = np.flatnonzero(pi < 1)
    grad = np.zeros((len(runs), len(random)))
    h = 1e-6
    for j, i in enumerate(random):
        up, down = dict(yhat), dict(yhat)
        up[keys[i]] += h
        down[keys[i]] -= h
        grad[:, j] = (_ap_by_hand(runs, up, k) - _ap_by_hand(runs, down, k)) / (2 * h)
    z = grad * (y[random] / pi[random])[None, :] * np.sqrt(1 - pi[random])[None, :]
    v = {keys[i]: (1 - pi[i]) * (y[i] / pi[i]) ** 2 for i in random if y[i] > 0}
    m2 = _ap_product_terms(runs, yhat, v, k) / len(TOPICS)
    means = estimate(runs, judgments, design, [f"AP@{k}"], control="none")
    raw = estimate_measure_raw_means(runs, judgments, design, k)
    np.testing.assert_allclose(raw, base, rtol=0, atol=1e-12)
    assert (means["se"] > 0.01).all()
    assert (m2**2).sum() > 0  # the setup has products of two sampled relevant documents
    np.testing.assert_allclose(means["se"], np.sqrt((z**2).sum(axis=1) + (m2**2).sum(axis=1)), rtol=1e-6, atol=1e-12)
    pairs = estimate(runs, judgments, design, [f"AP@{k}"], pairs=True, control="none")
    index = {name: i for i, name in enumerate(runs)}
    for a, b, se in zip(pairs["run_a"], pairs["run_b"], pairs["se"], strict=True):
        want = np.sqrt(((z[index[a]] - z[index[b]]) ** 2).sum() + ((m2[index[a]] - m2[index[b]]) ** 2).sum())
        assert se == pytest.approx(want, rel=1e-6, abs=1e-12)
        var_a, var_b = means["se"].iloc[index[a]] ** 2, means["se"].iloc[index[b]] ** 2
        cov = (z[index[a]] * z[index[b]]).sum() + (m2[index[a]] * m2[index[b]]).sum()
        assert se == pytest.approx(np.sqrt(var_a + var_b - 2 * cov), rel=1e-6, abs=1e-12)


def _kernel_inputs(runs, judgments, design, k, f_scale: float = 0.0) -> tuple[Units, Items]:
    """The kernel's units and items for a design (``f_scale > 0``: a fixed random control variate)."""
    space = Universe(runs, k, list(runs), topics=list(TOPICS))
    grade = judgments.set_index(["query_id", "doc_id"])["relevance"]
    unit = space.lookup(space.topic_codes(design["query_id"]), design["doc_id"].to_numpy(dtype=object))
    assert (unit >= 0).all()
    pi = np.ones(space.n_units)
    sampled = np.zeros(space.n_units, dtype=bool)
    g = np.zeros(space.n_units, dtype=np.int64)
    pi[unit] = design["pi"].to_numpy()
    sampled[unit] = True
    g[unit] = grade[list(zip(design["query_id"], design["doc_id"], strict=True))].to_numpy()
    levels = np.arange(g.max() + 1, dtype=float)
    f = np.random.default_rng(0).uniform(0, f_scale, (space.n_units, len(levels)))
    units = Units(space.unit_topic, pi, sampled, g, levels, f, len(TOPICS))
    order = np.lexsort((space.item_rank, space.item_topic, space.item_run))
    items = Items(
        space.item_run[order] * len(TOPICS) + space.item_topic[order],
        space.item_rank[order],
        space.item_unit[order],
        len(runs),
        len(TOPICS),
    )
    return units, items


def estimate_measure_raw_means(runs, judgments, design, k) -> np.ndarray:
    """The raw (uncorrected) AP@k run means of the kernel, for the design and judgments given."""
    units, items = _kernel_inputs(runs, judgments, design, k)
    return estimate_measure("AP", k, units, items).raw.mean(axis=1)


def _numeric_z(kind: str, k: int, units: Units, items: Items) -> np.ndarray:
    """``z`` [runs × random units, one topic each] from central differences of the raw estimate in the
    weight 1/π of each random unit: ``z_u = ∂θ/∂w_u / π_u``."""
    out = np.zeros((items.n_runs, len(units.random)))
    h = 1e-6
    for j, u in enumerate(units.random):
        values = []
        for step in (h, -h):
            moved = Units(
                units.topic, units.pi, units.sampled, units.grade, units.levels, units.f_level, units.n_topics
            )
            moved.w[u] += step
            values.append(estimate_measure(kind, k, moved, items, p=0.8).raw[:, units.topic[u]])
        out[:, j] = (values[0] - values[1]) / (2 * h) / units.pi[u]
    return out


@pytest.mark.parametrize(
    "kind,f_scale",
    [(kind, 0.0) for kind in ("P", "RBP", "R", "AP", "nDCG")] + [("P", 0.05), ("RBP", 0.05), ("R", 0.05), ("AP", 0.05)],
)
def test_influence_values_are_the_derivatives_of_the_estimates(kind, f_scale):
    """The kernel's z (the linearisation behind every standard error) against numerical derivatives."""
    runs, judgments, design = _sampled_setup()
    units, items = _kernel_inputs(runs, judgments, design, 6, f_scale)
    z = estimate_measure(kind, 6, units, items, p=0.8).z
    assert np.abs(z).max() > 0.05
    np.testing.assert_allclose(z, _numeric_z(kind, 6, units, items), rtol=0, atol=1e-7)


def test_ndcg_influence_where_an_estimated_count_is_negative():
    """Any control variate that gives a grade some probability can make the estimated number of documents
    of that grade negative in a topic where no sampled pair has it (here grade 2 of topic 2: -0.129, with
    f at most 0.05); IDCG clips the count at 0 and does not change with it, so neither may the kernel's z
    (it kept the derivative of the unclipped count)."""
    runs, judgments, design = _sampled_setup()
    units, items = _kernel_inputs(runs, judgments, design, 6, 0.05)
    n2 = np.bincount(units.topic, weights=units.pseudo(np.eye(len(units.levels))[2]), minlength=len(TOPICS))
    assert n2[1] < -0.05
    z = estimate_measure("nDCG", 6, units, items).z
    np.testing.assert_allclose(z, _numeric_z("nDCG", 6, units, items), rtol=0, atol=1e-7)


# -- sample ---------------------------------------------------------------------------------------------


def _wide_runs(seed: int = 0, n_runs: int = 5, topics: int = 4, length: int = 60) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    runs = {}
    for r in range(n_runs):
        parts = []
        for t in range(topics):
            docs = [f"d{i}" for i in rng.permutation(max(150, length))[:length]]
            parts.append(pd.DataFrame({"query_id": str(t + 1), "doc_id": docs, "score": -np.arange(length) * 1.0}))
        runs[f"r{r}"] = pd.concat(parts, ignore_index=True)
    return runs


def test_sample_same_seed_same_design_bit_for_bit():
    runs = _wide_runs()
    a = sample(runs, 120, depth=40, seed=5, certain=10)
    b = sample(runs, 120, depth=40, seed=5, certain=10)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert a.attrs == b.attrs
    c = sample(runs, 120, depth=40, seed=6, certain=10)
    assert not a[["query_id", "doc_id"]].equals(c[["query_id", "doc_id"]])


@pytest.mark.parametrize("prior", ["ap+rbp", "ap", "rbp-fusion", "rrf", "uniform"])
@pytest.mark.parametrize("certain", [0, 15])
def test_sample_probabilities_sum_to_budget_and_respect_the_floor(prior, certain):
    runs = _wide_runs()
    budget, depth, uniform = 150, 40, 0.1
    qrels = pd.DataFrame({"query_id": ["1", "2", "9"], "doc_id": ["d0", "d500", "d1"], "relevance": [1, 0, 1]})
    with pytest.warns(UserWarning, match=r"^qrels=: 1 of its 3 queries are answered by no run \(e\.g\. '9'\)"):
        design = sample(runs, budget, depth=depth, seed=1, prior=prior, uniform=uniform, certain=certain, qrels=qrels)
    assert design.attrs["expected_judgments"] == pytest.approx(budget, abs=1e-9)
    pi = design["pi"].to_numpy()
    assert ((pi > 0) & (pi <= 1)).all()
    certain_rows = design[design["stratum"].isin(["certain", "judged"])]  # the certainty stratum
    assert (certain_rows["pi"] == 1.0).all()
    # qrels pairs of the runs' topics are in the certainty stratum, even outside the runs' top depth, marked
    # as judged already; the top `certain` pairs of the priority pool are to judge
    for q, d in (("1", "d0"), ("2", "d500")):
        row = design[(design["query_id"] == q) & (design["doc_id"] == d)]
        assert len(row) == 1 and row["pi"].iloc[0] == 1.0 and row["stratum"].iloc[0] == "judged"
    assert (design["stratum"] == "judged").sum() == 2 and (design["stratum"] == "certain").sum() == certain
    assert not (design["query_id"] == "9").any()  # a query no run answers
    assert (certain_rows["round"] == 1).all()
    # recompute every open pair's pi from the documented formula
    space = Universe(runs, depth)
    known = space.lookup(space.topic_codes(["1", "2"]), np.array(["d0", "d500"], dtype=object))
    n_units = space.n_units + int((known < 0).sum())
    n_certain = 2 + certain
    n_open = n_units - n_certain
    floor = min(1.0, uniform * (budget - certain) / n_open)  # pi = min(1, c q) with c >= budget - certain
    sampled = design[design["stratum"] == "sampled"]
    assert len(certain_rows) == n_certain
    assert sampled["pi"].min() >= floor * (1 - 1e-12)
    if prior == "uniform":
        np.testing.assert_allclose(sampled["pi"], (budget - certain) / n_open, rtol=1e-12)
    # Σ pi over the open pairs = budget − certain, through the same function
    q = np.random.default_rng(0).uniform(0.001, 1, 500) ** 4
    for n in (3.0, 37.5, 250.0, 499.0):
        p = inclusion_probabilities(q, n)
        assert p.sum() == pytest.approx(n, abs=1e-9) and (p > 0).all() and (p <= 1).all()
        assert p.min() >= min(1.0, n * q.min() / q.sum()) * (1 - 1e-12)


def test_sample_floor_is_reached_by_pairs_of_prior_zero():
    """Pairs whose prior is 0 get exactly the floor when no pair is capped at 1: c = budget − certain,
    pi = (budget − certain) · uniform / N_open."""
    runs = _wide_runs(1, n_runs=2, topics=2, length=30)
    top = _top(runs["r1"], 30)
    table = top[(top["query_id"] == "1") & (top["rank"] >= 10)][["query_id", "doc_id"]].assign(prior=1.0)
    budget, uniform, certain = 20, 0.2, 4
    design = sample(runs, budget, depth=30, prior=table, uniform=uniform, seed=0, certain=certain)
    n_open = design.attrs["universe"] - certain
    floor = uniform * (budget - certain) / n_open
    sampled = design[design["stratum"] == "sampled"]
    assert sampled["pi"].max() < 1  # nothing capped
    assert sampled["pi"].min() == pytest.approx(floor, rel=1e-12)
    prior_pairs = sampled.merge(table, on=["query_id", "doc_id"])
    assert len(prior_pairs) and (prior_pairs["pi"] > 2 * floor).all()
    # the module docstring's floor uniform · budget / N (certainty pairs counted) is not a floor here
    assert floor < uniform * budget / design.attrs["universe"]


def test_sample_size_averages_the_budget():
    runs = prepare_runs(_wide_runs(2, n_runs=4, topics=4, length=150))  # 600 pairs, pi about 1/2
    budget = 300
    sizes = [len(sample(runs, budget, depth=150, seed=s, certain=20)) for s in range(200)]
    assert abs(np.mean(sizes) / budget - 1) < 0.01
    assert np.std(sizes) > 5  # the size is random (Poisson design)


@UNRELIABLE_ALLOWED
@ZERO_WIDTH_ALLOWED
def test_topics_without_a_sampled_pair_count_in_the_mean():
    """A Poisson sample may leave a topic without any pair; the mean over topics still counts it (its
    estimate is 0 for every run), so that the estimate stays unbiased: dropping such topics from the mean
    gave an expectation of 0.9025 for a true P@2 of 0.75 here."""
    runs = {
        "a": pd.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["x", "y", "x", "z"], "score": [2.0, 1, 2, 1]}),
        "b": pd.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["y", "w", "z", "x"], "score": [2.0, 1, 2, 1]}),
    }
    grade = {("1", "x"): 1, ("1", "y"): 0, ("1", "w"): 1, ("2", "x"): 1, ("2", "z"): 1}
    pi = {("1", "x"): 0.5, ("1", "y"): 0.5, ("1", "w"): 0.5, ("2", "x"): 0.4, ("2", "z"): 0.4}
    qrels = pd.DataFrame([(q, d, g) for (q, d), g in grade.items()], columns=["query_id", "doc_id", "relevance"])
    truth = np.array([(0.5 + 1.0) / 2, (0.5 + 1.0) / 2])  # P@2 of a and b on topics 1 and 2
    recorded = sample(runs, 2, depth=2).attrs["topics"]
    assert recorded == ["1", "2"]
    variants = {"runs": {}, "topics": {"topics": recorded}}
    expected = {name: np.zeros(2) for name in [*variants, "one run at a time"]}
    units = list(pi)
    for bits in itertools.product([False, True], repeat=len(units)):
        prob = np.prod([pi[u] if b else 1 - pi[u] for u, b in zip(units, bits, strict=True)])
        chosen = [u for u, b in zip(units, bits, strict=True) if b]
        if not chosen:
            continue  # an empty sample: every estimate is 0 (estimate() refuses a design without pairs)
        design = pd.DataFrame({"query_id": [u[0] for u in chosen], "doc_id": [u[1] for u in chosen]})
        design["pi"] = [pi[u] for u in chosen]
        for name, extra in variants.items():
            design.attrs = {"depth": 2, "runs": ["a", "b"], **extra}
            expected[name] += prob * estimate(runs, qrels, design, ["P@2"], control="none")["value"].to_numpy()
        design.attrs = {"depth": 2, "runs": ["a", "b"], "topics": recorded}
        alone = [
            estimate({r: runs[r]}, qrels, design, ["P@2"], universe="design", control="none")["value"].iloc[0]
            for r in runs
        ]
        expected["one run at a time"] += prob * np.array(alone)
    for name, value in expected.items():
        np.testing.assert_allclose(value, truth, rtol=0, atol=1e-12, err_msg=name)
