"""Shared test fixtures: the spec's test vectors and the real TREC data in ``../shared``.

Tests that need ``../shared`` skip with a clear reason when it is absent (e.g. in a user's fresh clone).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests check values, not speed: no per-example deadline and no "too slow" health check, which
# fail at random on a busy machine or beside other test processes (pytest -n). A test's own @settings
# still choose its number of examples.
settings.register_profile("ir_incomplete", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ir_incomplete")

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SPEC_VECTORS = SHARED / "spec" / "test_vectors.json"
DATA = SHARED / "data"
COVID = DATA / "trec-covid-round1"
ROBUST04 = DATA / "robust04"
TREC_EVAL_TEST = DATA / "trec_eval-test"


#: Test modules that run as one unit each under ``pytest -n`` (``--dist loadgroup`` in setup.cfg): their
#: module-scoped fixtures (evaluations of the real TREC runs, installs into a new environment) are then
#: built by one test process instead of by each, and pytest-xdist hands out these long units first, so that
#: the short tests of the other modules even out the end of the run.
WHOLE_MODULES = frozenset(
    {
        "test_ecosystem",
        "test_examples",
        "test_realdata_ap_family",
        "test_realdata_graded_ap",
        "test_realdata_infap",
        "test_realdata_ndcg",
        "test_realdata_rbp",
        "test_realdata_reference",
        "test_realdata_robustness",
        "test_realdata_sampled",
    }
)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.stem in WHOLE_MODULES:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))


def _need(path: Path):
    if not path.exists():
        where = Path("..", path.relative_to(ROOT.parent)).as_posix()
        if path.is_relative_to(DATA):
            pytest.skip(f"{where} is absent (the real TREC data lives in ../shared/data beside the project)")
        pytest.skip(f"{where} is absent (it lives in ../shared beside the project)")
    return path


@pytest.fixture(scope="session")
def spec():
    """The spec's test vectors: ``{"topics": {name: {"qrels":…, "run":…}}, "expected": [...]}``."""
    _need(SPEC_VECTORS)
    return json.loads(SPEC_VECTORS.read_text())


def spec_cases(measure_names):
    """``(topic, measure_string, value)`` of the spec vectors whose ``measure`` is in ``measure_names``
    (for ``pytest.mark.parametrize``; empty when the spec is absent)."""
    if not SPEC_VECTORS.exists():
        return []
    data = json.loads(SPEC_VECTORS.read_text())
    return [
        (e["topic"], e["measure_string"], e["value"])
        for e in data["expected"]
        if e["measure"] in measure_names and e.get("measure_string")
    ]


def spec_topic(spec_data, topic):
    """``(run, qrels)`` dict-of-dicts for one spec topic, with query id ``"q"``."""
    t = spec_data["topics"][topic]
    return {"q": dict(t["run"])}, {"q": dict(t["qrels"])}


@pytest.fixture(scope="session")
def covid():
    """TREC-COVID round 1: ``{"qrels": DataFrame, "complete": DataFrame, "runs": {name: DataFrame}}``."""
    from ir_incomplete.data import read_trec_qrels, read_trec_run

    _need(COVID)
    runs = {p.name[:-3]: read_trec_run(p) for p in sorted((COVID / "runs").glob("*.gz"))}
    return {
        "qrels": read_trec_qrels(COVID / "qrels.round1.txt.gz"),
        "complete": read_trec_qrels(COVID / "qrels.complete-topics1-30.txt.gz"),
        "runs": runs,
    }


@pytest.fixture(scope="session")
def robust04():
    """Robust04: ``{"qrels": DataFrame, "runs": {name: DataFrame}}``."""
    from ir_incomplete.data import read_trec_qrels, read_trec_run

    _need(ROBUST04)
    runs = {p.name.split(".gz")[0]: read_trec_run(p) for p in sorted((ROBUST04 / "runs").iterdir())}
    return {"qrels": read_trec_qrels(ROBUST04 / "qrels.robust04.txt.gz"), "runs": runs}


def run_dict(frame) -> dict:
    """A run as pytrec_eval takes it, ``{query_id: {doc_id: score}}`` (str ids, float scores; a document
    listed twice for a query keeps its last score)."""
    out: dict = {}
    queries = frame["query_id"].astype(str).tolist()
    docs = frame["doc_id"].astype(str).tolist()
    scores = frame["score"].astype(float).tolist()
    for q, d, s in zip(queries, docs, scores, strict=True):
        out.setdefault(q, {})[d] = s
    return out


@pytest.fixture(scope="session")
def covid_run_dicts(covid):
    """The TREC-COVID round-1 runs as :func:`run_dict` gives them, ``{name: {query_id: {doc_id: score}}}``,
    built once per test process (several modules compare with pytrec_eval on them). Read only."""
    return {name: run_dict(frame) for name, frame in covid["runs"].items()}


@pytest.fixture(scope="session")
def robust04_run_dicts(robust04):
    """The Robust04 runs as :func:`run_dict` gives them, built once per test process. Read only."""
    return {name: run_dict(frame) for name, frame in robust04["runs"].items()}


@pytest.fixture(scope="session")
def trec_eval_test():
    """Path of trec_eval's own test fixtures."""
    return _need(TREC_EVAL_TEST)


def pytrec_per_query(qrels_frame, run_frame, measures, relevance_level=1, judged_docs_only=False):
    """pytrec_eval's per-query values ``{qid: {measure: value}}`` straight from DataFrames."""
    import pytrec_eval

    qrels = {}
    for q, d, r in zip(qrels_frame["query_id"], qrels_frame["doc_id"], qrels_frame["relevance"], strict=True):
        qrels.setdefault(str(q), {})[str(d)] = int(r)
    run = {}
    for q, d, s in zip(run_frame["query_id"], run_frame["doc_id"], run_frame["score"], strict=True):
        run.setdefault(str(q), {})[str(d)] = float(s)
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, set(measures), relevance_level=relevance_level, judged_docs_only_flag=judged_docs_only
    )
    return evaluator.evaluate(run)


def judgment_group(path, group: int):
    """One judgment group of a qrels file in trec_eval's judgment-group format (``-R qrels_jg``, e.g. its
    fixture ``qrels.123``: the second column names the group, each group judges the same documents), as
    an ordinary ``query_id/doc_id/relevance`` DataFrame."""
    import pandas as pd

    frame = pd.read_csv(
        path,
        sep=r"\s+",
        header=None,
        names=["query_id", "group", "doc_id", "relevance"],
        dtype={"query_id": str, "doc_id": str},
    )
    return frame[frame["group"] == group].drop(columns="group").reset_index(drop=True)


def calls_into_c(fn, limit: int):
    """``(fn(), n)``: what ``fn()`` returns and ``n``, the number of calls into functions written in C
    (numpy and pyarrow operations, builtins) that it made in this thread, counted with
    :func:`sys.setprofile`. A count of steps does not depend on the machine or its load, unlike a
    wall-clock bound, so a test can assert that work grows with the input's size, not with one numpy step
    per element. Raises ``AssertionError`` as soon as the count passes ``limit`` (a regression then fails
    at once instead of running for minutes)."""
    import sys

    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "c_call":
            count += 1
            if count > limit:
                raise AssertionError(f"more than {limit} calls into C functions")

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = fn()
    finally:
        sys.setprofile(previous)
    return result, count


#: for tests of tiny designs whose estimates warn that an interval of width 0 does not hold (the warning
#: of ir_incomplete.estimate, asserted in test_round4_campaign.py); those tests check the values
ZERO_WIDTH_ALLOWED = pytest.mark.filterwarnings("ignore:.*have an interval of width 0:UserWarning")

#: for tests of tiny designs (a few pairs per topic) whose estimates warn that their intervals are not
#: reliable (ir_incomplete.estimate's flag, asserted in test_intervals_reliable.py); those tests check values
UNRELIABLE_ALLOWED = pytest.mark.filterwarnings("ignore:.*rows have intervals this design cannot back:UserWarning")
