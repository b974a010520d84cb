"""GAP, xGAP and eGAP on real TREC data (TREC-COVID round 1, Robust04; skipped when ../shared/data is
absent): one-hot g = e_k gives pytrec_eval's AP at relevance level k per query (condensed: pytrec_eval
with judged documents only, i.e. trec_eval -J); eGAP = Σ_k g_k · AP_k."""

import numpy as np
import pytest

import ir_incomplete

TOL = 1e-9
ONE_HOT = {1: "1,0", 2: "0,1"}
NAMES = ("GAP", "xGAP", "eGAP")


def _qrels_dict(qrels_frame):
    qrels = {}
    for q, d, r in zip(qrels_frame["query_id"], qrels_frame["doc_id"], qrels_frame["relevance"], strict=True):
        qrels.setdefault(str(q), {})[str(d)] = int(r)
    return qrels


def _variant(suffix, at):
    """Measure strings of one variant: the one-hot strings per level and the mixed eGAP."""
    one_hot = {level: [f"{name}(g={g}{suffix}{at}" for name in NAMES] for level, g in ONE_HOT.items()}
    return one_hot, f"eGAP(g=0.3,0.7{suffix}{at}"


def _evaluate(data, run_dicts, variants, condensed_runs, extra=()):
    """Our values (one ``evaluate`` call) and pytrec_eval's (on ``run_dicts``, the runs as pytrec_eval takes
    them), for the given ``(suffix, at, pytrec measure, judged_only)`` variants; judged-only variants use
    the runs in ``condensed_runs``."""
    import pytrec_eval

    runs, qrels_frame = data["runs"], data["qrels"]
    strings = list(extra)
    for suffix, at, _, _ in variants:
        one_hot, mixed = _variant(suffix, at)
        strings += one_hot[1] + one_hot[2] + [mixed]
    frame = ir_incomplete.evaluate(runs, qrels_frame, strings)
    ours = {}
    for run, qid, measure, value in frame.itertuples(index=False):
        ours.setdefault(measure, {}).setdefault(run, {})[qid] = value
    qrels = _qrels_dict(qrels_frame)
    reference = {}
    for judged_only in (False, True):
        measures = {m for _, _, m, j in variants if j == judged_only}
        names = condensed_runs if judged_only else list(runs)
        for level in ONE_HOT:
            evaluator = pytrec_eval.RelevanceEvaluator(
                qrels, measures, relevance_level=level, judged_docs_only_flag=judged_only
            )
            reference[judged_only, level] = {n: evaluator.evaluate(run_dicts[n]) for n in names}
    return frame, ours, reference


def _check(ours, reference, suffix, at, pytrec_measure, judged_only):
    one_hot, mixed = _variant(suffix, at)
    compared = 0
    for name in reference[judged_only, 1]:
        for level in ONE_HOT:
            ap = reference[judged_only, level][name]
            for text in one_hot[level]:
                values = ours[text][name]
                for qid, expected in ap.items():
                    assert values[qid] == pytest.approx(expected[pytrec_measure], abs=TOL), (name, qid, text)
                    compared += 1
                # queries of the qrels that the run does not answer get 0, as in ir_measures
                assert all(values[q] == 0.0 for q in set(values) - set(ap))
        ap1, ap2 = reference[judged_only, 1][name], reference[judged_only, 2][name]
        for qid in ap1:
            expected = 0.3 * ap1[qid][pytrec_measure] + 0.7 * ap2[qid][pytrec_measure]
            assert ours[mixed][name][qid] == pytest.approx(expected, abs=TOL), (name, qid, mixed)
    return compared


COVID_VARIANTS = [  # (suffix, cut-off, pytrec_eval measure, judged documents only)
    (")", "", "map", False),
    (",unjudged=condensed)", "", "map", True),  # condense-then-cut = trec_eval -J + map_cut.k
    (",unjudged=condensed)", "@10", "map_cut_10", True),
]
RANGE = ["GAP(g=0.2,0.8)", "xGAP(g=0.2,0.8)", "eGAP(g=0.2,0.8)", "GAP(g=0.2,0.8)@10"]


@pytest.fixture(scope="module")
def covid_results(covid, covid_run_dicts):
    condensed_runs = list(covid["runs"])[::5]
    return _evaluate(covid, covid_run_dicts, COVID_VARIANTS, condensed_runs, extra=RANGE)


@pytest.mark.parametrize("variant", COVID_VARIANTS, ids=["plain", "condensed", "condensed@10"])
def test_covid_identities(covid, covid_results, variant):
    _, ours, reference = covid_results
    compared = _check(ours, reference, *variant)
    assert len(covid["runs"]) == 143
    n_runs = 143 if not variant[3] else len(range(0, 143, 5))
    assert compared >= n_runs * 2 * 3 * 25


def test_covid_values_are_in_range_and_differ(covid_results):
    frame, _, _ = covid_results
    frame = frame[frame["measure"].isin(RANGE)]
    values = frame["value"].to_numpy()
    assert len(values) == 143 * 30 * len(RANGE)
    assert np.isfinite(values).all() and values.min() >= 0.0 and values.max() <= 1.0
    wide = frame.pivot_table(index=["run", "query_id"], columns="measure", values="value")
    # the three measures are different functions of the ranking on real data
    assert (wide["GAP(g=0.2,0.8)"] - wide["xGAP(g=0.2,0.8)"]).abs().max() > 0.01
    assert (wide["xGAP(g=0.2,0.8)"] - wide["eGAP(g=0.2,0.8)"]).abs().max() > 0.01
    assert (wide["GAP(g=0.2,0.8)@10"] <= wide["GAP(g=0.2,0.8)"] + 1e-12).all()


ROBUST_VARIANTS = [(")", "", "map", False), (")", "@100", "map_cut_100", False)]


def test_robust04_identities(robust04, robust04_run_dicts):
    _, ours, reference = _evaluate(robust04, robust04_run_dicts, ROBUST_VARIANTS, condensed_runs=[])
    for variant in ROBUST_VARIANTS:
        assert _check(ours, reference, *variant) >= 10 * 2 * 3 * 240
