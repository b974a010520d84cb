"""``sample(allocation="topics")``: the random part of the budget split over topics (a minimum per topic, then
Neyman shares) and ``pi`` set within each topic; ``allocation="global"`` unchanged; the setting recorded and
read back; estimates from such a design; errors of the command and of the function."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import ir_incomplete
from ir_incomplete.cli import main
from ir_incomplete.estimation import Universe, estimate, read_design, write_design
from ir_incomplete.judging import sample
from ir_incomplete.judging.allocation import neyman_weights, split_budget
from ir_incomplete.judging.designs import ALLOCATIONS, MIN_PER_TOPIC, inclusion_probabilities

TOPICS = ("1", "2", "3", "4")
#: documents per topic; topic 4 has few, so that its minimum is capped at its open pairs
POOLS = {"1": 30, "2": 24, "3": 18, "4": 6}


def _runs(seed: int = 0, n_runs: int = 4, length: int = 12) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    runs = {}
    for r in range(n_runs):
        parts = []
        for t in TOPICS:
            pool = POOLS[t]
            take = min(length, pool)
            docs = [f"d{i}" for i in rng.permutation(pool)[:take]]
            parts.append(pd.DataFrame({"query_id": t, "doc_id": docs, "score": np.arange(take, 0, -1) * 1.0}))
        runs[f"run{r}"] = pd.concat(parts, ignore_index=True)
    return runs


def _universe_pairs(runs: dict[str, pd.DataFrame], depth: int = 100) -> pd.DataFrame:
    """The runs' top ``depth`` pairs (written here: every document each run lists, at most ``depth``)."""
    tops = [run.groupby("query_id", sort=False).head(depth)[["query_id", "doc_id"]] for run in runs.values()]
    return pd.concat(tops).drop_duplicates().reset_index(drop=True)


def _grades(pairs: pd.DataFrame) -> pd.DataFrame:
    """Grades 0/1/2 from the ids: topic 1 rich in relevant documents, topic 3 poor."""
    doc = pairs["doc_id"].str[1:].astype(int).to_numpy()
    topic = pairs["query_id"].astype(int).to_numpy()
    grade = np.where(doc % (topic + 1) == 0, 1, 0) + np.where(doc % (2 * topic + 3) == 0, 1, 0)
    return pairs.assign(relevance=np.minimum(grade, 2))


def _qrels(runs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Judgments of the runs' top 1: a certainty stratum (it leaves topic 4 two open pairs)."""
    top = pd.concat([run.groupby("query_id", sort=False).head(1) for run in runs.values()])
    return _grades(top[["query_id", "doc_id"]].drop_duplicates().reset_index(drop=True))


def _all_pi(runs, budget, seeds=300, **options) -> pd.Series:
    """Every open pair's ``pi``: ``pi`` does not depend on the seed, so the union of the pairs drawn over
    seeds 0, 1, ... gives each pair's (asserted: every pair of the universe outside the certainty stratum —
    judged, or certain — is drawn within ``seeds`` seeds, each time with the same ``pi``)."""
    universe = _universe_pairs(runs)
    qrels = options.get("qrels")
    if qrels is not None:
        universe = universe[~pd.MultiIndex.from_frame(universe).isin(pd.MultiIndex.from_frame(qrels.iloc[:, :2]))]
    wanted = None
    seen: list[pd.DataFrame] = []
    drawn: set = set()
    for seed in range(seeds):
        design = sample(runs, budget, seed=seed, **options)
        if wanted is None:  # the certain pairs are the same in every draw
            certain = pd.MultiIndex.from_frame(design[design["stratum"] == "certain"][["query_id", "doc_id"]])
            wanted = set(pd.MultiIndex.from_frame(universe)) - set(certain)
        rows = design[design["stratum"] == "sampled"][["query_id", "doc_id", "pi"]]
        seen.append(rows)
        drawn |= set(zip(rows["query_id"], rows["doc_id"], strict=True))
        if drawn >= wanted:
            break
    assert drawn == wanted, "a pair was never drawn: more seeds"
    spread = pd.concat(seen).groupby(["query_id", "doc_id"])["pi"].agg(["min", "max"])
    assert (spread["min"] == spread["max"]).all()
    return spread["min"]


# -- the sums ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("allocation", ALLOCATIONS)
@pytest.mark.parametrize("with_qrels", [False, True])
def test_open_pairs_sum_to_the_random_budget(allocation, with_qrels):
    runs = _runs()
    qrels = _qrels(runs) if with_qrels else None
    budget, certain = 30, 4
    pi = _all_pi(runs, budget, qrels=qrels, certain=certain, uniform=0.5, allocation=allocation, min_per_topic=5)
    # the certain pairs (pi = 1, stratum "certain") are not among the sampled ones
    assert abs(pi.sum() - (budget - certain)) < 1e-9
    design = sample(runs, budget, qrels=qrels, certain=certain, uniform=0.5, allocation=allocation, min_per_topic=5)
    assert design.attrs["allocation"] == allocation
    assert design.attrs["expected_judgments"] == pytest.approx(budget, abs=1e-9)
    if allocation == "topics":
        per_topic = pi.groupby(level="query_id").sum()
        recorded = pd.Series(design.attrs["topic_budgets"])
        np.testing.assert_allclose(per_topic.reindex(recorded.index), recorded, rtol=0, atol=1e-9)
        assert recorded.sum() == pytest.approx(budget - certain, abs=1e-9)


@pytest.mark.parametrize("minimum", [0, 3, 8, 40])
def test_every_topic_gets_its_minimum(minimum):
    runs = _runs()
    qrels = _qrels(runs)
    budget = 40
    pi = _all_pi(runs, budget, qrels=qrels, uniform=0.5, allocation="topics", min_per_topic=minimum)
    open_pairs = pi.groupby(level="query_id").size()
    per_topic = pi.groupby(level="query_id").sum()
    floor = np.minimum(minimum, open_pairs)
    if floor.sum() <= budget:
        assert (per_topic >= floor - 1e-9).all(), (per_topic, floor)
    else:  # the minimum does not fit: equal shares, none above its floor
        share = per_topic[per_topic < floor - 1e-9]
        assert len(share) and np.allclose(share, share.iloc[0], rtol=0, atol=1e-9)
        assert (per_topic <= floor + 1e-9).all()
    assert per_topic.sum() == pytest.approx(budget, abs=1e-9)
    # topic 4 holds 2 open pairs: a minimum above that is capped at them
    assert open_pairs["4"] == 2 and (per_topic <= open_pairs + 1e-9).all()
    if minimum >= 2:
        assert per_topic["4"] == pytest.approx(2.0, abs=1e-12)


def test_short_budget_gives_equal_shares():
    runs = _runs()
    pi = _all_pi(runs, 12, uniform=0.5, allocation="topics", min_per_topic=10, seeds=300)
    per_topic = pi.groupby(level="query_id").sum()
    np.testing.assert_allclose(per_topic, 3.0, rtol=0, atol=1e-9)  # 12 over 4 topics, each with ≥ 3 open pairs


def test_topics_spreads_the_budget_unlike_global():
    """With one c over all pairs a topic's share follows its prior mass; with topics the minimum holds."""
    runs = _runs()
    plain = _all_pi(runs, 16, uniform=0.0, prior="uniform").groupby(level="query_id").sum()
    spread = _all_pi(runs, 16, uniform=0.0, prior="uniform", allocation="topics", min_per_topic=4)
    spread = spread.groupby(level="query_id").sum()
    sizes = _universe_pairs(runs).groupby("query_id").size()
    assert sizes["4"] == 6
    # global with a uniform prior: pi = 16 / N for every pair, so each topic's share is its size's
    np.testing.assert_allclose(plain, 16 * sizes / sizes.sum(), rtol=0, atol=1e-9)
    assert plain["4"] < 2 and spread["4"] >= 4 - 1e-9 and (spread >= 4 - 1e-9).all()


# -- the pieces ---------------------------------------------------------------------------------------------


def test_grouped_inclusion_probabilities_equal_each_group_alone():
    rng = np.random.default_rng(5)
    q = rng.gamma(0.3, size=60) + 1e-6
    group = rng.integers(0, 4, 60)
    n = np.array([3.5, 0.0, 40.0, 1.25])  # group 2 asks for more than it holds: every pair 1
    got = inclusion_probabilities(q, n, group)
    for g in range(4):
        alone = inclusion_probabilities(q[group == g], n[g])
        np.testing.assert_allclose(got[group == g], alone, rtol=1e-12, atol=1e-15)
        assert got[group == g].sum() == pytest.approx(min(n[g], (group == g).sum()), abs=1e-12)
    assert (got[group == 2] == 1.0).all() and (got[group == 1] == 0.0).all()
    assert (got <= 1.0).all()


def test_split_budget_is_exact_and_bounded():
    weight = np.array([4.0, 1.0, 0.0, 9.0, 2.0])
    low = np.array([1.0, 1.0, 2.0, 0.0, 3.0])
    high = np.array([10.0, 2.0, 5.0, 6.0, 4.0])
    for total in (7.0, 9.5, 14.0, 20.0, 24.0, 26.0, 27.0):
        n = split_budget(total, weight, low, high)
        assert n.sum() == pytest.approx(total, abs=1e-12)
        assert (n >= low - 1e-12).all() and (n <= high + 1e-12).all()
        free = (n > low + 1e-12) & (n < high - 1e-12) & (weight > 0)
        if free.sum() >= 2:  # between their bounds, shares are proportional to the weights
            ratio = n[free] / weight[free]
            np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
    # beyond what the weighted groups can take, the group of weight 0 takes the rest
    n = split_budget(26.0, weight, low, high)
    np.testing.assert_allclose(n, [10.0, 2.0, 4.0, 6.0, 4.0], rtol=0, atol=1e-12)


def test_neyman_weights_follow_the_documented_formula():
    """V_t of the module docstring, computed here pair by pair from the runs' ranks."""
    runs = _runs(2)
    qrels = _qrels(runs)
    universe = Universe(runs, 100)
    units = universe.add_units(universe.topic_codes(qrels["query_id"]), qrels["doc_id"].to_numpy(dtype=object))
    known, first = np.unique(units, return_index=True)
    grade = qrels["relevance"].to_numpy()[first]
    open_units = np.setdiff1d(np.arange(universe.n_units), known)
    q = np.random.default_rng(0).random(len(open_units)) + 0.1
    topic = universe.unit_topic[open_units]
    q = q / np.bincount(topic, weights=q)[topic]
    got = neyman_weights(universe, open_units, q, known, grade)
    # by hand: per pair its ranks in each run (1-based)
    ranks: dict[tuple[str, str], list[int]] = {}
    for run in runs.values():
        for t, part in run.groupby("query_id"):
            for i, d in enumerate(part["doc_id"]):
                ranks.setdefault((t, d), []).append(i + 1)
    n_runs, depth = len(runs), 100
    harmonic = [0.0] + list(np.cumsum([1.0 / i for i in range(1, depth + 1)]))

    def ap_prior(rs):
        return sum((1 + harmonic[depth] - harmonic[r - 1]) / (2 * depth) for r in rs) / n_runs

    def top(rs):
        return sum((1 / math.log2(1 + r)) ** 2 for r in rs if r <= 10) / n_runs

    frame = universe.frame(np.arange(universe.n_units))
    keys = list(zip(frame["query_id"], frame["doc_id"], strict=True))
    judged_rel = {t: 0.0 for t in universe.topic_ids}
    judged_mass = {t: 0.0 for t in universe.topic_ids}
    for u, g in zip(known, grade, strict=True):
        t = keys[u][0]
        judged_rel[t] += g >= 1
        judged_mass[t] += ap_prior(ranks.get(keys[u], []))
    pooled = sum(judged_rel.values()) / sum(judged_mass.values())
    want = []
    for t_code, t in enumerate(universe.topic_ids):
        rate = (judged_rel[t] + 1.0) / (judged_mass[t] + 1.0 / pooled)
        mine = [(j, u) for j, u in enumerate(open_units) if universe.unit_topic[u] == t_code]
        p = {u: min(1.0, rate * ap_prior(ranks[keys[u]])) for _, u in mine}
        r_hat = judged_rel[t] + sum(p.values())
        ideal = sum(min(1.0, max(0.0, r_hat - i)) / math.log2(i + 2) for i in range(10))
        v = sum(p[u] / q[j] * ((0.25 / r_hat) ** 2 + top(ranks[keys[u]]) / ideal**2) for j, u in mine)
        want.append(math.sqrt(v))
    np.testing.assert_allclose(got, want, rtol=1e-10)


# -- global unchanged, determinism, the record ----------------------------------------------------------------


def test_global_is_the_design_drawn_without_the_option():
    runs = _runs()
    qrels = _qrels(runs)
    for seed in (0, 3):
        before = sample(runs, 25, qrels=qrels, seed=seed, certain=2)
        now = sample(runs, 25, qrels=qrels, seed=seed, certain=2, allocation="global", min_per_topic=3)
        pd.testing.assert_frame_equal(before, now)
        assert before.attrs == now.attrs and now.attrs["allocation"] == "global"
        assert "min_per_topic" not in now.attrs and "topic_budgets" not in now.attrs


def test_topics_design_is_seeded_and_independent_of_the_runs_order():
    runs = _runs()
    qrels = _qrels(runs)
    a = sample(runs, 25, qrels=qrels, seed=7, allocation="topics")
    b = sample(runs, 25, qrels=qrels, seed=7, allocation="topics")
    c = sample(dict(reversed(list(runs.items()))), 25, qrels=qrels, seed=7, allocation="topics")
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)
    assert a.attrs == b.attrs == c.attrs
    assert a.attrs["min_per_topic"] == MIN_PER_TOPIC == 10
    d = sample(runs, 25, qrels=qrels, seed=8, allocation="topics")
    assert not a[["query_id", "doc_id"]].equals(d[["query_id", "doc_id"]])


def test_round_trip_keeps_the_allocation(tmp_path):
    runs = _runs()
    design = sample(runs, 25, qrels=_qrels(runs), seed=1, allocation="topics", min_per_topic=4)
    path = tmp_path / "design.tsv"
    write_design(design, path)
    settings = json.loads(path.read_text().splitlines()[0][len("# design ") :])
    assert settings["allocation"] == "topics" and settings["min_per_topic"] == 4
    back = read_design(path)
    assert back.attrs["allocation"] == "topics" and back.attrs["min_per_topic"] == 4
    assert back.attrs["topic_budgets"] == design.attrs["topic_budgets"]  # floats written exactly
    np.testing.assert_array_equal(back["pi"], design["pi"])


def test_design_written_before_the_option_reads_as_global(tmp_path):
    runs = _runs()
    design = sample(runs, 25, seed=1)
    old = design.copy()
    old.attrs = {k: v for k, v in design.attrs.items() if k != "allocation"}
    path = tmp_path / "old.tsv"
    write_design(old, path)
    back = read_design(path)
    assert "allocation" not in back.attrs and back.attrs.get("allocation", "global") == "global"
    judged = _grades(back[["query_id", "doc_id"]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_old = estimate(runs, judged, back, ["AP@10"])
        from_new = estimate(runs, judged, design, ["AP@10"])
    pd.testing.assert_frame_equal(from_old, from_new)


# -- estimates ------------------------------------------------------------------------------------------------


def test_estimate_reads_a_topics_design():
    runs = _runs()
    qrels = _qrels(runs)
    design = sample(runs, 30, qrels=qrels, seed=2, allocation="topics", min_per_topic=5)
    judged = _grades(design[["query_id", "doc_id"]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        means, pairs = estimate(runs, judged, design, ["AP@10", "nDCG@10"], pairs="both")
    assert len(means) == 2 * len(runs) and len(pairs) == 2 * len(runs) * (len(runs) - 1) // 2
    assert np.isfinite(means[["value", "lo", "hi", "se"]].to_numpy()).all()
    assert (means["se"] > 0).any()


@pytest.mark.parametrize("control", ["none", None])
def test_complete_topics_design_equals_the_plain_measures(control):
    runs = _runs()
    qrels = _qrels(runs)
    universe = _universe_pairs(runs)
    with pytest.warns(UserWarning, match="every pair is judged"):
        design = sample(runs, len(universe) + 5, qrels=qrels, seed=0, allocation="topics", min_per_topic=2)
    assert (design["pi"] == 1.0).all() and len(design) == len(universe)
    left = universe.groupby("query_id").size() - qrels.groupby("query_id").size()
    assert design.attrs["topic_budgets"] == {t: float(n) for t, n in left.items() if n > 0}
    truth = _grades(universe)
    measures = ["AP@10", "nDCG@10", "P@5"]
    options = {} if control is None else {"control": control}
    got = estimate(runs, truth, design, measures, per_query=True, **options)
    want = ir_incomplete.evaluate(runs, truth, measures, per_query=True)
    for m in measures:
        a = got[got["measure"] == m].set_index(["run", "query_id"])["value"]
        b = want[want["measure"] == m].set_index(["run", "query_id"])["value"]
        np.testing.assert_allclose(a, b.reindex(a.index), rtol=0, atol=1e-12, err_msg=m)


# -- errors ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["topic", "Global", "", None, 1])
def test_bad_allocation_is_named_with_the_choices(bad):
    with pytest.raises(ValueError, match=r"allocation=.* is not valid; choices: global, topics"):
        sample(_runs(), 10, allocation=bad)


@pytest.mark.parametrize("bad", [-1, 2.5, True, "10", None])
def test_bad_min_per_topic_is_named(bad):
    with pytest.raises(ValueError, match=rf"min_per_topic={bad!r} is not valid; expected an integer >= 0"):
        sample(_runs(), 10, allocation="topics", min_per_topic=bad)


def test_stratified_with_topics_names_the_valid_combinations():
    with pytest.raises(
        ValueError,
        match="allocation='topics' is not drawn with design='stratified'.*design='poisson' with "
        "allocation='topics', or design='stratified' with allocation='global'",
    ):
        sample(_runs(), 10, design="stratified", allocation="topics")


# -- the command line -----------------------------------------------------------------------------------------


def _write_runs(runs, folder):
    folder.mkdir()
    for name, run in runs.items():
        lines = [f"{q} Q0 {d} {i + 1} {s} {name}\n" for i, (q, d, s) in enumerate(run.itertuples(index=False))]
        (folder / name).write_text("".join(lines))
    return folder


def test_cli_sample_allocation_topics(tmp_path, capsys):
    runs = _runs()
    folder = _write_runs(runs, tmp_path / "runs")
    out = tmp_path / "design.tsv"
    code = main(
        ["sample", str(folder), "--budget", "25", "--allocation", "topics", "--min-per-topic", "4", "-o", str(out)]
    )
    assert code == 0, capsys.readouterr().err
    back = read_design(out)
    assert back.attrs["allocation"] == "topics" and back.attrs["min_per_topic"] == 4
    direct = sample(runs, 25, allocation="topics", min_per_topic=4)
    np.testing.assert_array_equal(back["pi"].to_numpy(), direct["pi"].to_numpy())
    assert back.attrs["topic_budgets"] == direct.attrs["topic_budgets"]
    code = main(["sample", str(folder), "--budget", "25", "-o", str(tmp_path / "plain.tsv")])
    assert code == 0 and read_design(tmp_path / "plain.tsv").attrs["allocation"] == "global"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--allocation", "topic"], "--allocation: invalid choice: 'topic'"),
        (["--allocation", "topics", "--min-per-topic", "-1"], "--min-per-topic -1 is not valid"),
        (
            ["--allocation", "topics", "--design", "stratified"],
            "--allocation topics is not drawn with --design stratified",
        ),
    ],
)
def test_cli_errors(tmp_path, capsys, args, message):
    folder = _write_runs(_runs(), tmp_path / "runs")
    code = main(["sample", str(folder), "--budget", "25", *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err


def test_a_pair_practically_never_drawn_is_refused_per_topic():
    runs = _runs()
    table = _universe_pairs(runs).assign(prior=1.0)
    table.loc[(table["query_id"] == "2") & (table["doc_id"] == table["doc_id"].iloc[30]), "prior"] = 1e-20
    low = table[table["prior"] < 1]
    assert len(low) == 1 and low["query_id"].iloc[0] == "2"
    with pytest.raises(
        ValueError, match=r"below 1e-12 of an even share \(its topic's .* judgments over its 23 pairs\)"
    ):
        sample(runs, 20, prior=table, uniform=0.0, allocation="topics")
    sample(runs, 20, prior=table, uniform=0.1, allocation="topics")  # the uniform share lifts it


@pytest.mark.filterwarnings("ignore:.*rows have intervals this design cannot back:UserWarning")
@pytest.mark.filterwarnings("ignore:.*have an interval of width 0:UserWarning")
def test_rounds_and_simulate_design_pass_the_allocation_through():
    """sample_rounds and simulate_design draw each round with the allocation asked for (they ignored it: a
    topics design replayed as global), and refuse a wrong one with sample's own message."""
    from ir_incomplete.judging import sample_rounds, simulate_design

    runs = _runs(seed=5)
    oracle = _grades(_universe_pairs(runs))
    rounds = sample_rounds(runs, 12, 2, oracle, prior="ap", allocation="topics", min_per_topic=2, seed=1)
    assert rounds.design.attrs["allocation"] == "topics"
    assert rounds.design.attrs["min_per_topic"] == 2
    plain = sample_rounds(runs, 12, 2, oracle, prior="ap", seed=1)
    assert plain.design.attrs["allocation"] == "global"
    out = simulate_design(runs, oracle, dict(budget=12, allocation="topics", min_per_topic=2, prior="ap"), repeats=2)
    assert len(out) > 0
    with pytest.raises(ValueError, match="allocation='everywhere' is not valid; choices: global, topics"):
        simulate_design(runs, oracle, dict(budget=12, allocation="everywhere"), repeats=1)
