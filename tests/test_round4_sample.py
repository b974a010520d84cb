"""``sample`` and the design's universe, fourth round of daily use: a certainty stratum that takes the whole
budget, earlier judgments and qrels together, qrels that match no run, a design that depends on the set of
runs and not on their order, the universe recorded in the design and checked by ``estimate``, and the pairs
judged before this round told apart from the pairs to judge."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from conftest import COVID, UNRELIABLE_ALLOWED, ZERO_WIDTH_ALLOWED, _need

import ir_incomplete.judging.designs as designs
from ir_incomplete.cli import main
from ir_incomplete.estimation import Universe, estimate, read_design
from ir_incomplete.judging import sample, write_design

QUERIES = ("1", "2", "10")
DOCS = [f"d{i:02d}" for i in range(40)]


def _runs(seed: int = 0, n_runs: int = 4, length: int = 12) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    runs = {}
    for r in range(n_runs):
        rows = []
        for q in QUERIES:
            for i, d in enumerate(rng.permutation(DOCS)[:length]):
                rows.append((q, str(d), 100.0 - i))
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs


def _oracle(pairs: pd.DataFrame) -> np.ndarray:
    """A fixed grade 0, 1 or 2 for every pair (from its document number and topic)."""
    return np.array([(int(d[1:]) * 7 + int(q)) % 3 for q, d in zip(pairs["query_id"], pairs["doc_id"], strict=True)])


def _judge(design: pd.DataFrame) -> pd.DataFrame:
    out = design[["query_id", "doc_id"]].copy()
    out["relevance"] = _oracle(out)
    return out


def _write_runs(folder, runs: dict[str, pd.DataFrame]) -> str:
    folder.mkdir()
    for name, frame in runs.items():
        lines = [
            f"{q} Q0 {d} {i + 1} {s} {name}"
            for i, (q, d, s) in enumerate(zip(frame["query_id"], frame["doc_id"], frame["score"], strict=True))
        ]
        (folder / name).write_text("\n".join(lines) + "\n")
    return str(folder)


def _pairs(frame: pd.DataFrame) -> set[tuple[str, str]]:
    return set(zip(frame["query_id"].astype(str), frame["doc_id"].astype(str), strict=True))


# -- 1. a certainty stratum that takes the whole budget --------------------------------------------------


@pytest.mark.parametrize("kind", ["poisson", "stratified"])
def test_certain_equal_to_the_budget_is_refused_while_pairs_remain(kind):
    """``certain=budget`` left every other pair with pi = 0 (never drawn): the estimates counted them as
    nonrelevant with zero-width intervals."""
    runs = _runs()
    with pytest.raises(ValueError, match=r"^certain=10 is the whole budget=10: the \d+ other pairs .* pi = 0"):
        sample(runs, 10, depth=8, certain=10, design=kind)


def test_certain_equal_to_the_budget_when_no_pair_remains_open():
    runs = _runs()
    n = Universe(runs, 8).n_units
    design = sample(runs, n, depth=8, certain=n)
    assert len(design) == n and (design["pi"] == 1.0).all() and (design["stratum"] == "certain").all()
    # with qrels covering part of the universe, certain may take exactly the rest
    qrels = design.iloc[:5][["query_id", "doc_id"]].assign(relevance=1)
    again = sample(runs, n - 5, depth=8, certain=n - 5, qrels=qrels)
    assert len(again) == n and (again["pi"] == 1.0).all()


def test_certain_equal_to_the_budget_on_the_command_line(tmp_path, capsys):
    folder = _write_runs(tmp_path / "runs", _runs())
    assert main(["sample", folder, "--depth", "8", "--budget", "10", "--certain", "10"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert re.search(r"error: certain=10 is the whole budget=10: .* raise the budget", err.splitlines()[-1])


def test_a_prior_so_small_that_pairs_are_almost_never_drawn_is_refused():
    """uniform=0 and a prior of 1e-300 gave pairs pi ~ 1e-300: accepted, and one drawn would weigh 1e300."""
    runs = _runs()
    space = Universe(runs, 8)
    table = space.frame(np.arange(space.n_units), prior=1e-300)
    table.loc[:3, "prior"] = 1.0
    with pytest.raises(ValueError, match=r"^uniform=0 leaves \d+ pairs of the universe with pi below 1e-12"):
        sample(runs, 3, depth=8, prior=table, uniform=0.0)
    # a uniform share, however small, bounds pi from below and is accepted
    design = sample(runs, 3, depth=8, prior=table, uniform=1e-9)
    assert design.attrs["expected_judgments"] == pytest.approx(3.0)


# -- 2. earlier judgments and qrels together --------------------------------------------------------------


def test_a_new_round_with_qrels_marks_exactly_the_judged_pairs(monkeypatch):
    """The unit numbers of the earlier round's pairs went stale when the qrels' documents outside the runs'
    top depth grew the universe: earlier judgments vanished and never-judged pairs were marked certain."""
    runs = _runs(3)
    first = sample(runs, 8, depth=6, seed=1)
    judgments = _judge(first)
    qrels = pd.DataFrame(
        {
            "query_id": ["1", "1", "2", "10", "10", "7"],
            "doc_id": ["a-new", "zz-new", "d05", "b-new", "d39", "d01"],
            "relevance": [2, 0, 1, 1, 0, 1],
        }
    )
    qrels = pd.concat([qrels, first.iloc[:2][["query_id", "doc_id"]].assign(relevance=-1)], ignore_index=True)
    seen = {}
    real = designs._prior

    def spy(universe, prior, judged=None, score_precision="float32"):
        seen["judged"] = judged
        return real(universe, prior, judged, score_precision)

    monkeypatch.setattr(designs, "_prior", spy)
    with pytest.warns(UserWarning, match=r"1 of its 4 queries"):
        second = sample(runs, 6, depth=6, seed=2, previous=first, judgments=judgments, qrels=qrels)
    answered = qrels[(qrels["query_id"] != "7") & (qrels["relevance"] >= 0)]
    judged_before = _pairs(answered) | _pairs(first)
    rows = second[second["pi"] == 1.0]
    assert _pairs(second[second["stratum"] == "judged"]) == judged_before
    assert judged_before <= _pairs(rows)
    assert (second.loc[second["stratum"] != "judged", "round"] == 2).all()
    # the grades the prior and the labels' calibration see: the earlier round's, then the qrels'
    got = seen["judged"]
    grades = dict(zip(zip(got["query_id"], got["doc_id"], strict=True), got["relevance"], strict=True))
    want = dict(zip(zip(answered["query_id"], answered["doc_id"], strict=True), answered["relevance"], strict=True))
    want.update(zip(zip(judgments["query_id"], judgments["doc_id"], strict=True), judgments["relevance"], strict=True))
    assert grades == want


# -- 3. qrels whose queries match no run ------------------------------------------------------------------


def test_qrels_of_another_collection_are_refused_naming_both_sides():
    runs = _runs()
    qrels = pd.DataFrame({"query_id": ["01", "02", "010"], "doc_id": ["d01", "d02", "d03"], "relevance": [1, 0, 1]})
    with pytest.raises(ValueError) as info:
        sample(runs, 10, depth=8, qrels=qrels)
    message = str(info.value)
    assert message.startswith("qrels=: none of its 3 queries is answered by the runs")
    assert "'01'" in message and "'1'" in message and "'10'" in message


def test_qrels_with_some_queries_no_run_answers_warn_and_keep_the_rest():
    runs = _runs()
    qrels = pd.DataFrame(
        {"query_id": ["1", "2", "99", "98"], "doc_id": ["d01", "d02", "d03", "d04"], "relevance": [1, 0, 1, 1]}
    )
    with pytest.warns(UserWarning, match=r"^qrels=: 2 of its 4 queries are answered by no run \(e\.g\. '98', '99'\)"):
        design = sample(runs, 10, depth=8, qrels=qrels)
    assert _pairs(design[design["stratum"] == "judged"]) == {("1", "d01"), ("2", "d02")}


# -- 4. the design depends on the set of runs, not on their order ----------------------------------------


def _shuffled(runs: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The runs in reversed order, each run's rows shuffled."""
    return {
        name: frame.sample(frac=1.0, random_state=i).reset_index(drop=True)
        for i, (name, frame) in enumerate(reversed(list(runs.items())))
    }


@pytest.mark.parametrize(
    "settings",
    [
        dict(prior="ap+rbp"),
        dict(prior="uniform", certain=6),
        dict(prior="rrf", certain=5, design="stratified", strata=4),
        dict(prior="uniform", design="stratified", strata=3),
    ],
)
def test_the_design_does_not_depend_on_the_order_of_the_runs(settings, tmp_path):
    runs = _runs(5, n_runs=6)
    qrels = pd.DataFrame({"query_id": ["2", "10"], "doc_id": ["d03", "x-outside"], "relevance": [1, 0]})
    a = sample(runs, 20, depth=8, seed=4, qrels=qrels, **settings)
    b = sample(_shuffled(runs), 20, depth=8, seed=4, qrels=qrels, **settings)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert a.attrs == b.attrs and a.attrs["runs"] == sorted(runs)
    write_design(a, tmp_path / "a.tsv")
    write_design(b, tmp_path / "b.tsv")
    assert (tmp_path / "a.tsv").read_bytes() == (tmp_path / "b.tsv").read_bytes()


def test_the_pairs_are_drawn_in_the_canonical_pair_order():
    """The uniform draws are dealt to the pairs in topic (natural) then document order: with the uniform
    prior every pair's pi is the same, so the pairs drawn are those whose draw is below it."""
    runs = _runs(2)
    design = sample(runs, 15, depth=8, seed=11, prior="uniform")
    space = Universe(runs, 8)
    pairs = space.frame(np.arange(space.n_units))
    pairs["topic"] = pairs["query_id"].astype(int)
    pairs = pairs.sort_values(["topic", "doc_id"]).reset_index(drop=True)
    draw = np.random.default_rng(11).random(len(pairs))
    pi = 15 / len(pairs)
    want = pairs[draw < pi]
    assert list(zip(design["query_id"], design["doc_id"], strict=True)) == list(
        zip(want["query_id"], want["doc_id"], strict=True)
    )


# -- 5. the design records its universe; estimate checks it ----------------------------------------------


def _changed(runs, how: str) -> dict[str, pd.DataFrame]:
    out = {name: frame.copy() for name, frame in runs.items()}
    frame = out["run1"].reset_index(drop=True)
    rows = np.flatnonzero(frame["query_id"].to_numpy() == "2")
    if how == "deeper":  # a longer list: two more pairs in topic 2's top depth
        extra = pd.DataFrame({"query_id": "2", "doc_id": ["new-a", "new-b"], "score": [1.0, 0.5]})
        frame = pd.concat([frame, extra], ignore_index=True)
    else:  # the same number of pairs, another document in place of one only this run retrieves
        theirs = set().union(*(set(f.loc[f["query_id"] == "2", "doc_id"]) for n, f in runs.items() if n != "run1"))
        mine = [i for i in rows if frame.loc[i, "doc_id"] not in theirs]
        frame.loc[mine[0], "doc_id"] = "new-doc"
    out["run1"] = frame
    return out


@pytest.fixture(scope="module")
def drawn():
    # lists of 7 documents, shorter than the depth 10
    runs = {name: frame[frame.groupby("query_id").cumcount() < 7] for name, frame in _runs(6).items()}
    design = sample(runs, 14, depth=10, seed=3)
    return runs, design, _judge(design)


@UNRELIABLE_ALLOWED
@pytest.mark.parametrize("how", ["deeper", "swapped"])
@ZERO_WIDTH_ALLOWED
def test_estimate_refuses_runs_changed_since_the_design_was_drawn(drawn, tmp_path, how):
    """Runs changed under the same names were accepted: pairs that could never have been drawn became
    unsampled universe pairs, 'outside' was 0 and the values moved."""
    runs, design, judgments = drawn
    changed = _changed(runs, how)
    with pytest.raises(ValueError) as info:
        estimate(changed, judgments, design, ["AP@10"])
    message = str(info.value)
    assert message.startswith("the runs given are not those the design was drawn from: in topic '2' their top 10")
    n = design.attrs["universe_topics"]["2"][0]
    if how == "deeper":
        assert f"holds {n + 2} pairs, the design's universe {n} (1 of 3 topics differ)" in message
    else:
        assert f"holds other documents than the design's universe (the same number, {n} pairs)" in message
    write_design(design, tmp_path / "design.tsv")
    with pytest.raises(ValueError, match=r"^the runs given are not those the design was drawn from: in topic '2'"):
        estimate(changed, judgments, str(tmp_path / "design.tsv"), ["AP@10"])
    # a design without the record (an older file) is estimated as before
    old = design.copy()
    old.attrs = {k: v for k, v in design.attrs.items() if not k.startswith("universe_")}
    assert len(estimate(changed, judgments, old, ["AP@10"])) == len(runs)


@UNRELIABLE_ALLOWED
@ZERO_WIDTH_ALLOWED
def test_estimate_accepts_the_same_runs_in_another_order(drawn, tmp_path):
    runs, design, judgments = drawn
    want = estimate(runs, judgments, design, ["AP@10", "nDCG@5"]).set_index(["run", "measure"])
    rows = {name: frame.sample(frac=1.0, random_state=1) for name, frame in runs.items()}
    same = estimate(rows, judgments, design, ["AP@10", "nDCG@5"]).set_index(["run", "measure"])
    pd.testing.assert_frame_equal(same, want, check_exact=True)
    other = estimate(_shuffled(runs), judgments, design, ["AP@10", "nDCG@5"]).set_index(["run", "measure"])
    pd.testing.assert_frame_equal(other.loc[want.index], want, rtol=1e-12)
    write_design(design, tmp_path / "design.tsv")
    from_file = estimate(_shuffled(runs), judgments, str(tmp_path / "design.tsv"), ["AP@10", "nDCG@5"])
    pd.testing.assert_frame_equal(from_file.set_index(["run", "measure"]).loc[want.index], want, rtol=1e-12)


def test_the_universe_record_is_the_hash_of_the_runs_pairs(drawn):
    import hashlib

    runs, design, _ = drawn
    space = Universe(runs, 10)
    pairs = space.frame(np.arange(space.n_units))
    pairs["topic"] = pairs["query_id"].astype(int)
    pairs = pairs.sort_values(["topic", "doc_id"])
    text = "".join(f"{q}\t{d}\n" for q, d in zip(pairs["query_id"], pairs["doc_id"], strict=True))
    assert design.attrs["universe_hash"] == hashlib.sha256(text.encode()).hexdigest()
    counts = pairs.groupby("query_id").size()
    assert {t: v[0] for t, v in design.attrs["universe_topics"].items()} == counts.to_dict()


# -- 6. pairs judged before this round and pairs to judge ------------------------------------------------


def test_pairs_judged_before_are_told_apart_from_pairs_to_judge(tmp_path):
    from ir_incomplete.judging import to_judge

    runs = _runs(8)
    first = sample(runs, 8, depth=6, seed=1, certain=2)
    assert set(first["stratum"]) == {"certain", "sampled"}
    pd.testing.assert_frame_equal(
        to_judge(first), first[["query_id", "doc_id"]].reset_index(drop=True), check_dtype=False
    )
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["q-only", "d07"], "relevance": [1, 0]})
    second = sample(runs, 9, depth=6, seed=2, certain=3, previous=first, judgments=_judge(first), qrels=qrels)
    judged = second["stratum"] == "judged"
    assert _pairs(second[judged]) == _pairs(first) | _pairs(qrels)
    assert (second.loc[judged, "pi"] == 1.0).all() and (second["stratum"] == "certain").sum() == 3
    new = to_judge(second)
    assert list(new.columns) == ["query_id", "doc_id"]
    want = second.loc[~judged, ["query_id", "doc_id"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(new, want, check_dtype=False)
    # the design file keeps the distinction, read_design checks it
    write_design(second, tmp_path / "second.tsv")
    back = read_design(str(tmp_path / "second.tsv"))
    pd.testing.assert_frame_equal(to_judge(str(tmp_path / "second.tsv")), new)
    assert (back["stratum"] == "judged").sum() == judged.sum()
    bad = second.copy()
    bad.attrs = dict(second.attrs)
    bad.loc[np.flatnonzero(second["pi"] < 1.0)[0], "stratum"] = "judged"
    with pytest.raises(ValueError, match=r"in the certainty stratum with pi=0\.\d+"):
        read_design(bad)


def test_the_command_line_writes_the_pairs_to_judge(tmp_path, capsys):
    from ir_incomplete.judging import to_judge

    runs = _runs(9)
    folder = _write_runs(tmp_path / "runs", runs)
    qrels = tmp_path / "old.qrels"
    qrels.write_text("1 0 d01 1\n2 0 d02 0\n10 0 outside 1\n")
    out, pairs = tmp_path / "design.tsv", tmp_path / "to_judge.tsv"
    argv = ["sample", folder, "--depth", "8", "--budget", "12", "--certain", "2", "--qrels", str(qrels)]
    assert main([*argv, "-o", str(out), "--to-judge", str(pairs)]) == 0
    design = read_design(str(out))
    text = pairs.read_text()
    assert text.startswith("query_id\tdoc_id\n")
    got = pd.read_csv(pairs, sep="\t", dtype=str)
    pd.testing.assert_frame_equal(got, to_judge(design))
    assert not _pairs(got) & {("1", "d01"), ("2", "d02"), ("10", "outside")}
    assert len(got) == (design["stratum"] != "judged").sum()
    assert not list(tmp_path.glob("*.tmp*")) and not list(tmp_path.glob(".*"))
    # the same file name twice is refused before anything is written
    assert main([*argv, "-o", str(tmp_path / "x.tsv"), "--to-judge", str(tmp_path / "x.tsv")]) == 2
    assert "--to-judge" in capsys.readouterr().err and not (tmp_path / "x.tsv").exists()
    assert main([*argv, "--to-judge", str(tmp_path / "nowhere" / "pairs.tsv")]) == 2
    assert "its folder" in capsys.readouterr().err


def test_to_judge_on_trec_covid_with_round_one_judgments():
    from ir_incomplete.data import read_trec_qrels, read_trec_run
    from ir_incomplete.judging import to_judge

    folder = _need(COVID)
    files = sorted((folder / "runs").glob("*.gz"))[:5]
    runs = {f.name[:-3]: read_trec_run(str(f)) for f in files}
    qrels = read_trec_qrels(str(folder / "qrels.round1.txt.gz"))
    design = sample(runs, 300, depth=50, seed=0, qrels=qrels)
    new = to_judge(design)
    judged = qrels.to_frame() if hasattr(qrels, "to_frame") else qrels
    old = _pairs(judged[judged["relevance"] >= 0])
    assert len(new) > 200 and not _pairs(new) & old
    assert _pairs(new) == _pairs(design) - old
    assert _pairs(design[design["stratum"] == "judged"]) == old  # the 5 runs answer every topic
