"""nDCG family at the edges: exponential gain of huge grades, and replicates in memory independent of b."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ir_incomplete
from ir_incomplete.bootstrap import bootstrap_ndcg
from ir_incomplete.data import Qrels, rank_runs
from ir_incomplete.grammar import parse
from ir_incomplete.kernels import ndcg as K
from ir_incomplete.measures import ndcg as M
from ir_incomplete.measures.ndcg import BootNDCG, topic_streams

REPO_ROOT = Path(__file__).resolve().parents[1]
L3, L4 = math.log2(3), math.log2(4)


# ---------------------------------------------------------------------------------------------------
# exponential gain of grades >= 1024
# ---------------------------------------------------------------------------------------------------
HUGE_QRELS = pd.DataFrame(
    {
        "query_id": ["1"] * 4 + ["2"] * 3 + ["3"] * 3,
        "doc_id": ["a", "b", "c", "d", "a", "b", "c", "a", "b", "c"],
        "relevance": [2000, 1999, 1000, 0, 2, 1, 0, 1023, 1023, 1023],
    }
)
# topic 1: b (1999), x (unjudged), d (0); the reservoir holds a (2000) and c (1000)
# topic 2: moderate grades; topic 3: three documents of grade 1023 (their DCG sum exceeds float64)
HUGE_RUN = pd.DataFrame(
    {
        "query_id": ["1"] * 3 + ["2"] * 3 + ["3"] * 3,
        "doc_id": ["b", "x", "d", "b", "y", "a", "a", "b", "c"],
        "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0],
    }
)


def _huge_values(measure):
    table = ir_incomplete.evaluate(HUGE_RUN, HUGE_QRELS, [measure], per_query=True)
    return dict(zip(table["query_id"], table["value"], strict=True))


def test_exp_gain_of_huge_grades_is_finite_and_exact():
    # by hand, dividing DCG and IDCG by 2^2000 (the -1 of each gain is far below float64 resolution):
    # IDCG = 2^2000 + 2^1999/log2 3 + 2^1000/log2 4
    idcg = 1.0 + 0.5 / L3
    lower = 0.5 / idcg  # x unjudged counts 0
    upper = (0.5 + 1.0 / L3) / idcg  # x takes the best grade left, 2000
    with_1000 = lower  # x takes grade 1000: 2^-1000 relative, below resolution
    upper_values = _huge_values("NDCGUpper(gain=exp)@3")
    assert upper_values["1"] == pytest.approx(upper, rel=1e-14)
    assert upper_values["3"] == 1.0
    for stat in ("mode", "mean", "p5", "p95"):
        values = _huge_values(f"BootNDCG(gain=exp,stat={stat},b=300)@3")
        assert all(np.isfinite(v) for v in values.values()), (stat, values)
        assert lower - 1e-15 <= values["1"] <= upper + 1e-15
        assert values["3"] == 1.0
    reps = BootNDCG(gain="exp", b=300, cutoff=3).replicates(*_ranked(HUGE_RUN, HUGE_QRELS))[0]
    seen = set(np.round(reps, 14))
    assert seen <= {round(lower, 14), round(with_1000, 14), round(upper, 14)} and len(seen) == 2
    # topic 2 (b, y unjudged, a; nothing relevant left for y): (1 + 3/log2 4) / (3 + 1/log2 3)
    assert upper_values["2"] == pytest.approx((1.0 + 3.0 / L4) / (3.0 + 1.0 / L3), rel=1e-14)


def _ranked(run, qrels):
    judged = Qrels.from_any(qrels)
    return rank_runs({"r": run}, judged), judged


def test_moderate_grades_keep_their_values_bit_for_bit():
    # topic 2 evaluated next to topics with huge grades gives exactly what it gives alone (1-D gain table)
    alone_run = HUGE_RUN[HUGE_RUN["query_id"] == "2"]
    alone_qrels = HUGE_QRELS[HUGE_QRELS["query_id"] == "2"]
    for measure in ("NDCGUpper(gain=exp)@3", "BootNDCG(gain=exp,stat=mean,b=300)@3"):
        together = _huge_values(measure)["2"]
        alone = ir_incomplete.evaluate(alone_run, alone_qrels, [measure], per_query=True)["value"].iloc[0]
        assert together == alone, measure
    # the per-topic table equals the shared table for every topic whose grades are <= 960
    counts = np.array([[1, 0, 3, 1], [0, 1, 0, 0]])
    np.testing.assert_array_equal(K.topic_gain_table(counts, 4, "exp"), K.gain_table(4, "exp"))
    big = np.zeros((2, 1200), dtype=np.int64)
    big[0, [0, 3]] = 1
    big[1, 1100] = 1
    table = K.topic_gain_table(big, 1200, "exp")
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(table[0], np.exp2(np.arange(1200.0)) - 1.0)
    assert table[1, 1100] == 1.0 and table[1, 1099] == 0.5 and np.isfinite(table[1, :1101]).all()


def test_exp_gain_of_grades_in_the_thousands():
    # one topic, ideal = judged order; a run that returns the ideal ranking has nDCG 1 at any grade size
    # (up to MAX_INDEXED_GRADE, 4096: larger grades are refused by the measures that index grades by value)
    qrels = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": [4000, 3000, 2000]})
    run = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    reversed_run = run.assign(score=[1.0, 2.0, 3.0])
    assert ir_incomplete.evaluate(run, qrels, ["NDCGUpper(gain=exp)@3"])["value"].iloc[0] == 1.0
    # reversed: c, b, a; DCG/2^4000 = 2^-2000 + 2^-1000/log2 3 + 1/log2 4 -> 0.5 / 1 (the rest underflows)
    value = ir_incomplete.evaluate(reversed_run, qrels, ["BootNDCG(gain=exp)@3"])["value"].iloc[0]
    assert value == pytest.approx((1.0 / L4) / 1.0, rel=1e-14)


# ---------------------------------------------------------------------------------------------------
# replicates in bounded memory
# ---------------------------------------------------------------------------------------------------
def _bench_inputs(n_topics=4, n_runs=3, seed=0):
    rng = np.random.default_rng(seed)
    qrels, runs = [], {}
    for t in range(n_topics):
        for d in range(12):
            qrels.append((f"t{t}", f"d{d}", int(rng.integers(-1, 4))))
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    for r in range(n_runs):
        rows = []
        for t in range(n_topics):
            docs = rng.permutation([f"d{d}" for d in range(12)] + [f"u{d}" for d in range(8)])[:10]
            rows += [(f"t{t}", doc, float(10 - i)) for i, doc in enumerate(docs)]
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs, qrels


def test_topic_streams_columns_equal_the_whole_array():
    draws = topic_streams(np.array(["a", "b"], dtype=object), 7, 1000)
    whole = draws(1, 6)
    for first, stop in [(0, 1), (0, 1000), (13, 14), (250, 999), (999, 1000)]:
        np.testing.assert_array_equal(draws(1, 6, first, stop), whole[:, first:stop])


@pytest.mark.parametrize(
    "measure, batch_cells, width",
    [
        ("BootNDCG(b=41)@10", 37, 1),  # one replicate at a time
        ("BootNDCG(b=777)@10", 700, 23),
        ("BootNDCG(b=500,prior=run,order=docid)@5", 300, 20),
        ("BootNDCG(b=300,compat=ecir23)@10", 500, 16),
    ],
)
def test_chunked_replicates_are_bit_identical(monkeypatch, measure, batch_cells, width):
    runs, qrels = _bench_inputs()
    judged = Qrels.from_any(qrels)
    ranked = rank_runs(runs, judged)
    m = parse(measure)
    whole = m.replicates(ranked, judged)
    details = m.compute_details(ranked, judged)
    assert (np.diff(np.sort(whole, axis=1), axis=1) != 0).any()  # the distributions are not degenerate
    monkeypatch.setattr(K, "_BATCH_CELLS", batch_cells)  # a few replicates per chunk, one group per batch
    monkeypatch.setattr(M, "ROW_BLOCK_CELLS", 2 * m.get("b"))  # two rankings per block
    assert K.replicate_chunk(m.get("cutoff") * 3, m.get("b")) == width  # 3 rankings per topic
    np.testing.assert_array_equal(m.replicates(ranked, judged), whole)
    small = m.compute_details(ranked, judged)
    for name, values in details.items():
        np.testing.assert_array_equal(small[name], values, err_msg=name)
    blocks = list(m.replicate_blocks(ranked, judged))
    assert len(blocks) > 3
    for rows, block in blocks:
        np.testing.assert_array_equal(block, whole[rows])


def test_b_above_the_limit_is_refused_with_the_limit():
    for make in (lambda: BootNDCG(b=1_000_000_000), lambda: parse("BootNDCG(b=1000000000)@10")):
        with pytest.raises(ValueError, match=r"'b'.*<= 10000000"):
            make()
    with pytest.raises(ValueError, match=r"<= 10000000"):
        bootstrap_ndcg(*_bench_inputs(), b=10**9)
    assert BootNDCG(b=M.MAX_B).get("b") == 10_000_000


def test_replicate_arrays_are_capped_but_summaries_are_not():
    runs, qrels = _bench_inputs()
    with pytest.raises(ValueError, match="keep_replicates=False"):
        bootstrap_ndcg(runs, qrels, b=10_000_000)
    judged = Qrels.from_any(qrels)
    with pytest.raises(ValueError, match=r"more than 33554432 values"):
        BootNDCG(b=3_000_000).replicates(rank_runs(runs, judged), judged)
    full = bootstrap_ndcg(runs, qrels, b=200)
    lean = bootstrap_ndcg(runs, qrels, b=200, keep_replicates=False)
    assert lean.replicates is None
    pd.testing.assert_frame_equal(lean.summary, full.summary)


@pytest.mark.skipif(sys.platform == "win32", reason="needs the resource module")
def test_two_million_replicates_fit_in_three_gigabytes():
    resource = pytest.importorskip("resource")
    if not hasattr(resource, "RLIMIT_AS"):
        pytest.skip("RLIMIT_AS is not available")
    code = textwrap.dedent(
        """
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        import pandas as pd
        import ir_incomplete
        qrels = pd.DataFrame({"query_id": ["1"] * 6 + ["2"] * 5 + ["3"] * 4,
                              "doc_id": list("abcdef") + list("abcde") + list("abcd"),
                              "relevance": [2, 1, 0, 3, 1, 0, 1, 0, 2, 0, 1, 3, 0, 1, 2]})
        docs = [f"x{i}" if i % 2 else "abcdefghij"[i] for i in range(10)]
        run = pd.DataFrame({"query_id": [q for q in "123" for _ in range(10)], "doc_id": docs * 3,
                            "score": list(range(10, 0, -1)) * 3})
        table = ir_incomplete.evaluate(run, qrels, ["BootNDCG(b=2000000)@10", "nDCG@10", "NDCGUpper@10"],
                                       per_query=True)
        print(table.pivot(index="query_id", columns="measure", values="value").to_csv())
        """
    )
    env = {"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    from io import StringIO

    table = pd.read_csv(StringIO(done.stdout), index_col=0)
    boot, lower, upper = table["BootNDCG(b=2000000)@10"], table["nDCG@10"], table["NDCGUpper@10"]
    assert ((lower <= boot) & (boot <= upper)).all() and (lower < upper).any()
