"""Do design-based intervals hold? Coverage, flags, RMSE and ranking of probability samples on TREC-COVID,
Robust04 and a synthetic collection with sparse graded relevance.

    python examples/design_evidence.py [DATA_FOLDER] [--quick | --full] [--only NAME ...] [--repeats N]
        [--labelers L,L] [--jobs N] [--out DIR] [--markdown FILE] [--docs] [--design poisson|stratified]
    python examples/design_evidence.py --summarize CSV... [--markdown FILE]

Each *repeat* (seed ``s`` = 0, 1, ...) draws a Poisson sample with :func:`ir_incomplete.judging.sample`
(default prior ``ap+rbp``, 10 % uniform floor; the setting's certainty stratum as ``qrels``), judges it
from the truth and estimates every measure with :func:`ir_incomplete.estimate` (90 % intervals of run
means and of every pair's difference, ``pairs="both"``; the default control variate: the runs' fusion
model, with the labels when a labeler is given). Truth: the *universe* is the union of the runs' top
100 per topic; each of its pairs gets its grade in the collection's complete judgments (unjudged = 0);
true run means are :func:`ir_incomplete.evaluate` on these grades, so the truth and the estimator divide
by the same R (relevant pairs of the universe). Certainty pairs are always taken inside the universe.

Settings (``--full`` runs every one but the two marked *extra*, 20 repeats, three labelers; ``--only``
picks by name, repeatable; without either: ``COVID 2,000``, 10 repeats, labelers ``none`` and ``kappa 0.2
(systems)``):

* ``COVID 2,000``: TREC-COVID round 1 (143 runs, 30 topics), 2,000 sampled from no judgments. *Extra*:
  ``COVID 1,000``, ``COVID 4,000``.
* ``COVID round 1 + 1,000`` / ``+ 2,000`` / ``+ 4,000``: the official round-1 judgments as certainty
  stratum (π = 1; 8,519 pairs inside the universe, graded with the complete judgments), plus the budget
  sampled.
* ``COVID sparse depth-10 + 2,000``: the runs' depth-10 pool (16,720 pairs) judged from the complete
  judgments as certainty stratum, + 2,000 (about 67 per topic). Reported also for ``AP(rel=2)@100`` (only
  grade 2 is relevant: about 1.8 % of the universe, 72 % of it inside the depth-10 pool); nDCG@10 uses
  grades 0–2.
* ``Robust04 depth-10 + 2,000`` / ``+ 10,000``: Robust04 (10 runs, 249 topics), the runs' depth-10 pool
  judged (π = 1), + 2,000 (about 8 per topic) or + 10,000 (about 40 per topic).
* ``Synthetic sparse 2,000`` (from none), ``Synthetic sparse depth-10 + 2,000`` (about 40 per topic) and
  ``+ 500`` (about 10 per topic): the collection of ``synthetic_collection.make_collection(seed=0)`` (60
  runs, 50 topics, grades 0–3; a topic's universe has about 2,500 documents, 2.6 % of them graded ≥ 2 on
  average over topics, 3 to 251 per topic; see that module), certainty stratum the runs' depth-10 pool
  (16,290 pairs, holding 62 % of the documents graded ≥ 2). Built to resemble a held-out collection where
  the intervals failed. Reported also for ``AP(rel=2)@100`` (relevant = grade ≥ 2; AP@100 counts grade ≥ 1).

Measures: AP@100 and nDCG@10 everywhere, and ``AP(rel=2)@100`` on the sparse and synthetic settings.
Labelers (``--labelers``; their draws use seed 1,000,003 + s, not the design's): ``none``; ``kappa 0.42``,
the confusion matrix of ``predicted_labels_covid.py`` (on grades 0–3, :data:`CONFUSION_4`, set to the
same κ); ``kappa 0.2 (systems)``, whose false positives concentrate on documents many runs rank high (its
chance of calling a nonrelevant document relevant is 0.6 × the cube of the document's fusion percentile in
its topic; :func:`hard_labels`). κ (unweighted, all grades) is measured on the pairs the complete
judgments judge (on the synthetic collection: every pair of the universe); the summary prints it.

Per repeat and measure, one row of the CSV (``design_evidence.csv`` in ``--out``): τ (Kendall, run
ranking against the truth), RMSE and bias of run means, mean interval width (runs, pairs), coverage of run
means and pairs, the rows ``estimate`` flags (its ``reliable`` column; every row counts as reliable, and
``delta`` as NaN, where it gives none): counts of reliable rows and of covered reliable rows, mean |δ̂|
(its ``delta``), the number of sampled pairs and per topic, κ, seconds, warnings, and the same-budget
priority pool (Σ over runs of 1/(1 + rank), ranks from 1, on top of the certainty stratum; plain measure,
unjudged = nonrelevant) for τ and RMSE. The summary (printed as a markdown table; ``--markdown FILE``
writes it) pools the repeats: coverage = covered rows / rows over all repeats, with its Monte-Carlo s.e.
(repeats as units: ratio estimator, √(Σ_s (c_s − p n_s)² / (S(S − 1))) / mean n_s), RMSE over runs ×
repeats, bias, width, τ and |δ̂| as means over repeats.

Time per repeat on one core (labels + sample + estimate of the setting's measures with every pair's
interval; measured on a shared two-core machine): COVID (143 runs, 10,153 pairs) 1.7–3.8 s, Robust04 (10
runs) 2–3 s, synthetic (60 runs, 1,770 pairs, three measures) 2.3–4.5 s; loading once per process: COVID
about 11 s, Robust04 about 7 s, synthetic about 5 s. ``--full`` (10 settings × 3 labelers × 20 repeats:
600 repeats) is thus about 30–40 minutes of one core: split it with ``--jobs N`` (processes over the
(setting, labeler, seed) tasks, each process loading a collection once) or with ``--only`` in separate
processes (``--out`` apart) and ``--summarize`` their CSVs. The CSV gets each repeat's rows as it ends.
``--quick`` (under a minute): 3 repeats of ``COVID 2,000`` on 40 of the runs and 2 of ``Synthetic sparse
depth-10 + 2,000``, no labels, nothing written unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

import ir_incomplete
from ir_incomplete.data import Qrels, prepare_runs
from ir_incomplete.estimation import Universe
from ir_incomplete.judging import sample
from ir_incomplete.labelers import cohen_kappa, simulate_labels

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
BASE = ("AP@100", "nDCG@10")
GRADED = ("AP@100", "nDCG@10", "AP(rel=2)@100")
#: every measure the truth is computed for (the settings report a subset)
TRUTH_MEASURES = list(GRADED)
LABELERS = ("none", "kappa 0.42", "kappa 0.2 (systems)")
#: the simulated labeler of predicted_labels_covid.py (rows: human grade 0, 1, 2; columns: predicted grade)
CONFUSION = [[0.85, 0.10, 0.05], [0.35, 0.35, 0.30], [0.15, 0.30, 0.55]]
#: the κ ≈ 0.42 labeler on grades 0–3 (the synthetic collection): κ is measured over every pair there, 97 % of
#: them nonrelevant, so its false-positive rate is set lower than CONFUSION's (4 % against 15 %) to give the
#: same κ (0.43 on 4 grades; 0.44 at grade ≥ 2 and 0.59 at grade ≥ 1, as CONFUSION's 0.43 and 0.58 on COVID)
CONFUSION_4 = [
    [0.96, 0.025, 0.012, 0.003],
    [0.35, 0.35, 0.20, 0.10],
    [0.15, 0.30, 0.35, 0.20],
    [0.10, 0.20, 0.30, 0.40],
]
#: labelers draw from their own seeds (LABEL_SEED + repeat), not the design's: the same uniform numbers
#: would tie a pair's label to whether it is sampled
LABEL_SEED = 1_000_003
#: the seed of the synthetic collection (one collection; the repeats vary the design)
SYNTHETIC_SEED = 0


@dataclass(frozen=True)
class Setting:
    """``collection`` (covid, robust04, synthetic), ``budget`` (expected sampled judgments), ``start``
    (the certainty stratum: ``none``, ``round 1``, ``depth 10``), ``measures`` reported, ``evidence``
    (part of ``--full``)."""

    collection: str
    budget: int
    start: str
    measures: tuple[str, ...]
    evidence: bool = True


SETTINGS: dict[str, Setting] = {
    "COVID 2,000": Setting("covid", 2000, "none", BASE),
    "COVID round 1 + 1,000": Setting("covid", 1000, "round 1", BASE),
    "COVID round 1 + 2,000": Setting("covid", 2000, "round 1", BASE),
    "COVID round 1 + 4,000": Setting("covid", 4000, "round 1", BASE),
    "COVID sparse depth-10 + 2,000": Setting("covid", 2000, "depth 10", GRADED),
    "Robust04 depth-10 + 2,000": Setting("robust04", 2000, "depth 10", BASE),
    "Robust04 depth-10 + 10,000": Setting("robust04", 10000, "depth 10", BASE),
    "Synthetic sparse 2,000": Setting("synthetic", 2000, "none", GRADED),
    "Synthetic sparse depth-10 + 2,000": Setting("synthetic", 2000, "depth 10", GRADED),
    "Synthetic sparse depth-10 + 500": Setting("synthetic", 500, "depth 10", GRADED),
    "COVID 1,000": Setting("covid", 1000, "none", BASE, evidence=False),
    "COVID 4,000": Setting("covid", 4000, "none", BASE, evidence=False),
}
QUICK_SETTINGS = {"COVID 2,000": 3, "Synthetic sparse depth-10 + 2,000": 2}


# -- collections and truth ---------------------------------------------------------------------------------


@dataclass
class Collection:
    """A collection's runs, universe (``space``), truth (the universe's pairs in unit order: ``query_id,
    doc_id, relevance, in_qrels``), true run means (``means``: measure × run) and its top grade."""

    name: str
    prepared: Any
    space: Universe
    truth: pd.DataFrame
    means: pd.DataFrame
    top_grade: int
    round1: Path | None = None


def universe_truth(prepared, qrels_complete, depth=100, measures=TRUTH_MEASURES):
    """The universe's pairs with their true grades (unjudged = 0) and each run's true means."""
    space = Universe(prepared, depth)
    frame = space.frame(np.arange(space.n_units))
    complete = Qrels.from_any(qrels_complete).to_frame()
    complete = complete.assign(query_id=complete["query_id"].astype(str), doc_id=complete["doc_id"].astype(str))
    truth = frame.merge(complete[["query_id", "doc_id", "relevance"]], on=["query_id", "doc_id"], how="left")
    truth["in_qrels"] = truth["relevance"].notna()
    truth["relevance"] = truth["relevance"].fillna(0).clip(lower=0).astype(int)
    values = ir_incomplete.evaluate(prepared, truth[["query_id", "doc_id", "relevance"]], list(measures))
    means = values.groupby(["measure", "run"])["value"].mean().unstack("run")
    return space, truth, means


def synthetic_module():
    """``synthetic_collection`` (beside this file), imported whatever the current folder is."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import synthetic_collection

    return synthetic_collection


def load_collection(name: str, data: Path, quick: bool) -> Collection:
    """Read (or, synthetic, generate) a collection and its truth; ``quick``: the first 40 COVID runs."""
    round1 = None
    if name == "covid":
        covid = data / "trec-covid-round1"
        run_files = sorted((covid / "runs").glob("*.gz"))[: 40 if quick else None]
        prepared = prepare_runs({p.name[:-3]: str(p) for p in run_files})
        qrels: Any = covid / "qrels.complete-topics1-30.txt.gz"
        round1 = covid / "qrels.round1.txt.gz"
    elif name == "robust04":
        prepared = prepare_runs(sorted(str(p) for p in (data / "robust04" / "runs").glob("*")))
        qrels = data / "robust04" / "qrels.robust04.txt.gz"
    elif name == "synthetic":
        runs, qrels = synthetic_module().make_collection(seed=SYNTHETIC_SEED)
        prepared = prepare_runs(runs)
    else:
        raise ValueError(f"collection {name!r} is unknown; choices: covid, robust04, synthetic")
    space, truth, means = universe_truth(prepared, qrels)
    return Collection(name, prepared, space, truth, means, int(truth["relevance"].max()), round1)


# -- labelers ----------------------------------------------------------------------------------------------


def confusion_for(top_grade: int) -> list[list[float]]:
    """The κ ≈ 0.4 labeler's confusion matrix for grades 0..``top_grade`` (2 or 3)."""
    if top_grade <= 2:
        return CONFUSION
    if top_grade == 3:
        return CONFUSION_4
    raise ValueError(f"no confusion matrix for grades 0..{top_grade}; choices: top grade 2 or 3")


def hard_labels(space, truth, seed, top_grade=2):
    """κ ≈ 0.2 labels whose false positives follow the systems, on grades 0..``top_grade``: a nonrelevant
    document is labelled relevant with probability 0.6 · p³ (p: its fusion percentile in its topic), then
    grade 1 with probability 0.6, else a grade from 2..top_grade uniformly; a relevant one is labelled 0
    with probability 0.4, else its grade with probability 0.6, else another nonzero grade uniformly (on
    grades 0–2 exactly the labels of earlier versions of this harness)."""
    if top_grade < 2:
        raise ValueError(f"top_grade={top_grade}: the labeler needs grades 0..2 at least")
    rng = np.random.default_rng(seed)
    pct = pd.Series(space.rrf).groupby(space.unit_topic).rank(pct=True).to_numpy()
    human = truth["relevance"].to_numpy()
    u = rng.random(len(human))
    v = rng.random(len(human))
    pred = np.zeros(len(human), dtype=int)
    # v ≥ 0.6 spread uniformly over the other choices: w uniform in [0, 1)
    w = np.clip((v - 0.6) / 0.4, 0.0, np.nextafter(1.0, 0.0))
    false_pos = (human == 0) & (u < 0.6 * pct**3)
    pred[false_pos] = np.where(v[false_pos] < 0.6, 1, 2 + np.floor(w[false_pos] * (top_grade - 1)).astype(int))
    rel = human > 0
    pred[rel & (u < 0.4)] = 0
    keep = rel & (u >= 0.4)
    # another nonzero grade: the k-th of 1..top_grade without the human grade
    other = 1 + np.floor(w[keep] * (top_grade - 1)).astype(int)
    other = other + (other >= human[keep])
    pred[keep] = np.where(v[keep] < 0.6, human[keep], other)
    return truth[["query_id", "doc_id"]].assign(relevance=pred)


def labels_for(kind, collection: Collection, seed):
    """The labels of labeler ``kind`` for every pair of the universe (``None`` for ``none``)."""
    seed = LABEL_SEED + seed
    truth = collection.truth
    if kind == "none":
        return None
    if kind == "kappa 0.42":
        return simulate_labels(
            truth, confusion_for(collection.top_grade), seed=seed, docs=truth[["query_id", "doc_id"]]
        )[["query_id", "doc_id", "relevance"]]
    if kind == "kappa 0.2 (systems)":
        return hard_labels(collection.space, truth, seed, max(2, collection.top_grade))
    raise ValueError(f"labeler {kind!r} is unknown; choices: {', '.join(LABELERS)}")


def labels_kappa(collection: Collection, labels) -> float:
    """Cohen's κ of the labels against the truth on the pairs the complete judgments judge."""
    if labels is None:
        return math.nan
    judged = collection.truth[collection.truth["in_qrels"]]
    paired = judged.merge(labels, on=["query_id", "doc_id"], suffixes=("", "_label"))
    return float(cohen_kappa(paired["relevance"], paired["relevance_label"]))


# -- a setting's fixed parts: certainty stratum and the priority pool ------------------------------------------


@dataclass
class Context:
    known: np.ndarray  # certainty units
    certain: Any  # the qrels given to sample() (None: from no judgments)
    pool: dict[str, tuple[float, float]]  # measure -> (τ, RMSE) of the same-budget priority pool


def certainty(collection: Collection, start: str):
    """The certainty stratum's units and the qrels to pass to ``sample`` for ``start``."""
    space, truth = collection.space, collection.truth
    if start == "none":
        return np.zeros(0, dtype=np.int64), None
    if start == "round 1":
        if collection.round1 is None:
            raise ValueError(f"start 'round 1' needs TREC-COVID's round-1 judgments, not {collection.name}")
        r1 = Qrels.from_any(collection.round1).to_frame()
        known = space.lookup(space.topic_codes(r1["query_id"].astype(str)), r1["doc_id"].astype(str).to_numpy(object))
        return np.unique(known[known >= 0]), collection.round1
    if start == "depth 10":
        known = np.unique(space.item_unit[(space.item_rank < 10) & (space.item_unit >= 0)])
        return known, truth.iloc[known][["query_id", "doc_id", "relevance"]]
    raise ValueError(f"start {start!r} is unknown; choices: none, round 1, depth 10")


def priority_pool(space, budget, known_units):
    """Units of a priority pool (Σ 1/(1 + rank)) of ``budget`` more judgments beyond ``known_units``."""
    ok = space.item_unit >= 0
    priority = np.bincount(space.item_unit[ok], weights=1.0 / (2.0 + space.item_rank[ok]), minlength=space.n_units)
    open_units = np.setdiff1d(np.arange(space.n_units), known_units)
    top = open_units[np.lexsort((open_units, -priority[open_units]))[:budget]]
    return np.union1d(known_units, top)


def plain_scores(collection: Collection, judged: pd.DataFrame, measures) -> dict[str, tuple[float, float]]:
    """(τ, RMSE) of the plain measures on ``judged`` (unjudged = nonrelevant) against the truth, per measure."""
    values = ir_incomplete.evaluate(collection.prepared, judged[["query_id", "doc_id", "relevance"]], list(measures))
    pooled = values.groupby(["measure", "run"])["value"].mean().unstack("run")
    out = {}
    for m in measures:
        t = collection.means.loc[m]
        p = pooled.loc[m].reindex(t.index).fillna(0.0) if m in pooled.index else pd.Series(0.0, index=t.index)
        out[m] = (float(kendalltau(p, t)[0]), float(np.sqrt(((p - t) ** 2).mean())))
    return out


def pool_scores(collection: Collection, units, measures):
    """(τ, RMSE) of the plain measures on the pool ``units`` (unjudged = nonrelevant) per measure."""
    return plain_scores(collection, collection.truth.iloc[units], measures)


# -- one repeat ----------------------------------------------------------------------------------------------


def flags(table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(reliable, delta) of an ``estimate`` table; every row reliable and δ̂ NaN where it has no such columns."""
    reliable = table["reliable"].to_numpy(dtype=bool) if "reliable" in table else np.ones(len(table), dtype=bool)
    delta = table["delta"].to_numpy(dtype=float) if "delta" in table else np.full(len(table), np.nan)
    return reliable, delta


def judge(collection: Collection, design: pd.DataFrame) -> pd.DataFrame:
    """The design's pairs graded from the collection's truth (``query_id, doc_id, relevance``; 0 outside it)."""
    grade = collection.truth.set_index(["query_id", "doc_id"])["relevance"]
    judged = design[["query_id", "doc_id"]].copy()
    judged["relevance"] = grade.reindex(pd.MultiIndex.from_frame(judged)).fillna(0).astype(int).to_numpy()
    return judged


@dataclass
class Scored:
    """One measure's estimates (``est``: run rows by run; ``pm``: pair rows) against the truth (``t`` per
    run, ``td`` per pair): which rows' intervals cover it and which are flagged reliable."""

    est: pd.DataFrame
    t: pd.Series
    covered: np.ndarray
    reliable: np.ndarray
    delta: np.ndarray
    pm: pd.DataFrame
    td: np.ndarray
    pair_covered: np.ndarray
    pair_reliable: np.ndarray
    pair_delta: np.ndarray

    @classmethod
    def of(cls, runs_table: pd.DataFrame, pairs_table: pd.DataFrame, means: pd.DataFrame, measure: str) -> Scored:
        est = runs_table[runs_table["measure"] == measure].set_index("run")
        t = means.loc[measure].reindex(est.index)
        pm = pairs_table[pairs_table["measure"] == measure]
        td = t.loc[pm["run_a"]].to_numpy() - t.loc[pm["run_b"]].to_numpy()
        return cls(
            est,
            t,
            ((est["lo"] <= t) & (t <= est["hi"])).to_numpy(),
            *flags(est),
            pm,
            td,
            ((pm["lo"] <= td) & (td <= pm["hi"])).to_numpy(),
            *flags(pm),
        )

    def counts(self) -> dict[str, Any]:
        """τ, RMSE and the counts of rows covered, reliable and both, for runs and pairs."""
        value = self.est["value"]
        return {
            "tau": float(kendalltau(value, self.t)[0]),
            "rmse": float(np.sqrt(((value - self.t) ** 2).mean())),
            "runs": len(self.est),
            "pairs": len(self.pm),
            "covered_runs": int(self.covered.sum()),
            "covered_pairs": int(self.pair_covered.sum()),
            "reliable_runs": int(self.reliable.sum()),
            "reliable_pairs": int(self.pair_reliable.sum()),
            "covered_reliable_runs": int((self.covered & self.reliable).sum()),
            "covered_reliable_pairs": int((self.pair_covered & self.pair_reliable).sum()),
        }


def _mean_abs(values: np.ndarray) -> float:
    finite = np.abs(values[np.isfinite(values)])
    return float(finite.mean()) if len(finite) else math.nan


#: with --rows DIR: every run and pair row of every repeat is written there (one parquet file per repeat and
#: measure), for calibrating the reliability flags
ROWS_DIR: Path | None = None


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in text)


def labels_tag(labels) -> str:
    return "none" if labels is None else f"labels{len(labels)}-{int(labels['relevance'].sum())}"


def repeat_rows(collection: Collection, setting: Setting, context: Context, labels, seed, design_kind="poisson"):
    """One repeat: sample, judge from the truth, estimate; one dict per measure (see the module docstring)."""
    # labels shape pi only where judgments calibrate them (a certainty stratum); from none, sample would warn
    shaping = labels if context.certain is not None else None
    prepared, means = collection.prepared, collection.means
    design = sample(
        prepared,
        setting.budget,
        qrels=context.certain,
        predictions=shaping,
        seed=seed,
        design=design_kind,
        progress=False,
    )
    judged = judge(collection, design)
    runs_table, pairs_table = ir_incomplete.estimate(
        prepared, judged, design, list(setting.measures), predictions=labels, pairs="both", progress=False
    )
    sampled = int((design["stratum"] != "judged").sum())
    topics = len(collection.space.topic_ids)
    has_flags = "reliable" in runs_table and "reliable" in pairs_table
    rows = []
    for m in setting.measures:
        scored = Scored.of(runs_table, pairs_table, means, m)
        est, t, pm, td = scored.est, scored.t, scored.pm, scored.td
        covered, pair_covered = scored.covered, scored.pair_covered
        err = est["value"] - t
        pool_tau, pool_rmse = context.pool[m]
        if ROWS_DIR is not None:  # every row with its diagnostics, for calibrating the flags (--rows)
            diag = runs_table.attrs.get("diagnostics", {}).get(m, {})
            parts = []
            for kind, table, cov in (("run", est.reset_index(), covered), ("pair", pm, pair_covered)):
                keep = [c for c in ("value", "se", "df", "delta", "seen", "reliable") if c in table.columns]
                truth_of = t.to_numpy() if kind == "run" else td
                part = table[keep].reset_index(drop=True).assign(kind=kind, covered=cov, truth=truth_of)
                if kind == "pair" and "seen" in est.columns:
                    seen = est["seen"]
                    part["seen"] = np.minimum(seen.loc[pm["run_a"]].to_numpy(), seen.loc[pm["run_b"]].to_numpy())
                parts.append(part)
            rows_frame = pd.concat(parts, ignore_index=True).assign(measure=m, seed=seed, **diag)
            tag = f"{setting.collection}-{setting.budget}-{setting.start}-{m}-{seed}-{labels_tag(labels)}"
            rows_frame.to_parquet(ROWS_DIR / f"{_safe(tag)}.parquet")
        rows.append(
            {
                "measure": m,
                **scored.counts(),
                "bias": float(err.mean()),
                "width": float((est["hi"] - est["lo"]).mean()),
                "pair_width": float((pm["hi"] - pm["lo"]).mean()),
                "coverage": float(covered.mean()),
                "pair_coverage": float(pair_covered.mean()),
                "mean_abs_delta": _mean_abs(scored.delta),
                "mean_abs_delta_pairs": _mean_abs(scored.pair_delta),
                "flags_given": has_flags,
                "sampled": sampled,
                "topics": topics,
                "judged_per_topic": sampled / topics,
                "pool_tau": pool_tau,
                "pool_rmse": pool_rmse,
            }
        )
    return rows


# -- tasks (one per setting, labeler and seed), run in this process or in a pool of processes -----------------

_COLLECTIONS: dict[str, Collection] = {}
_CONTEXTS: dict[str, Context] = {}


def _worker_setup() -> None:
    warnings.simplefilter("ignore", RuntimeWarning)


def run_task(task: tuple[str, str, int, dict]) -> list[dict]:
    """Rows of one (setting, labeler, seed); the collection and the setting's fixed parts are made once per
    process."""
    name, labeler, seed, options = task
    global ROWS_DIR
    ROWS_DIR = None if options.get("rows") is None else Path(options["rows"])
    setting = SETTINGS[name]
    data, quick = Path(options["data"]), options["quick"]
    if setting.collection not in _COLLECTIONS:
        _COLLECTIONS[setting.collection] = load_collection(setting.collection, data, quick)
    collection = _COLLECTIONS[setting.collection]
    if name not in _CONTEXTS:
        known, certain = certainty(collection, setting.start)
        units = priority_pool(collection.space, setting.budget, known)
        _CONTEXTS[name] = Context(known, certain, pool_scores(collection, units, setting.measures))
    context = _CONTEXTS[name]
    started = time.perf_counter()
    labels = labels_for(labeler, collection, seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", RuntimeWarning)
        rows = repeat_rows(collection, setting, context, labels, seed, options["design"])
    seconds = time.perf_counter() - started
    kappa = labels_kappa(collection, labels)
    messages = sorted({str(w.message).splitlines()[0][:200] for w in caught})
    head = {"setting": name, "labeler": labeler, "seed": seed}
    tail = {"kappa": kappa, "seconds": seconds, "warnings": len(caught), "warning": " | ".join(messages)}
    return [{**head, **row, **tail} for row in rows]


def run_pool(tasks: list, jobs: int, csv: Path | None, run, describe, columns=None, initializer=None) -> pd.DataFrame:
    """Every task's rows (in task order), from ``run(task)`` (a module-level function: a list of dicts, the
    first with ``seconds``) in this process or in ``jobs`` spawned processes; as each task finishes its rows
    are appended to ``csv`` (in the order of ``columns`` when given) and a progress line naming it
    (``describe(task)``) goes to stderr. ``initializer`` runs once in every process that runs tasks."""
    started = time.time()
    done: dict[int, list[dict]] = {}
    if csv is not None:
        csv.parent.mkdir(parents=True, exist_ok=True)
        csv.unlink(missing_ok=True)

    def record(i: int, rows: list[dict]) -> None:
        done[i] = rows
        if csv is not None:
            frame = pd.DataFrame(rows) if columns is None else pd.DataFrame(rows).reindex(columns=columns)
            frame.to_csv(csv, mode="a", header=not csv.exists(), index=False)
        print(
            f"  {describe(tasks[i])}: {rows[0]['seconds']:.1f} s "
            f"({len(done)}/{len(tasks)}, {time.time() - started:.0f} s)",
            file=sys.stderr,
            flush=True,
        )

    if jobs <= 1:
        if initializer is not None:
            initializer()
        for i, task in enumerate(tasks):
            record(i, run(task))
    else:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")  # the processes share the cores; no threads on top
        with multiprocessing.get_context("spawn").Pool(jobs, initializer=initializer) as workers:
            for i, rows in workers.imap_unordered(_indexed, [(i, task, run) for i, task in enumerate(tasks)]):
                record(i, rows)
    return pd.DataFrame([row for i in sorted(done) for row in done[i]])


def _indexed(item: tuple) -> tuple[int, list[dict]]:
    i, task, run = item
    return i, run(task)


def _describe(task: tuple[str, str, int, dict]) -> str:
    name, labeler, seed, _ = task
    return f"{name}, labels: {labeler}, seed {seed}"


def run_tasks(tasks: list[tuple[str, str, int, dict]], jobs: int, csv: Path | None) -> pd.DataFrame:
    """Every task's rows (in task order), each task's rows appended to ``csv`` as it finishes."""
    return run_pool(tasks, jobs, csv, run_task, _describe, initializer=_worker_setup)


# -- summary ---------------------------------------------------------------------------------------------------


def ratio_with_se(covered: np.ndarray, rows: np.ndarray) -> tuple[float, float]:
    """Σ covered / Σ rows over repeats and its Monte-Carlo s.e. with repeats as units (ratio estimator,
    √(Σ_s (c_s − p·n_s)² / (S(S − 1))) / mean n_s); NaN where no rows (s.e.: or fewer than 2 repeats)."""
    c, n = np.asarray(covered, dtype=float), np.asarray(rows, dtype=float)
    total = n.sum()
    if total == 0:
        return math.nan, math.nan
    p = c.sum() / total
    s = len(c)
    if s < 2:
        return p, math.nan
    return p, math.sqrt(((c - p * n) ** 2).sum() / (s * (s - 1))) / n.mean()


#: columns of the summary that are plain means over the repeats
MEANS = [
    "mean_abs_delta",
    "mean_abs_delta_pairs",
    "bias",
    "width",
    "pair_width",
    "tau",
    "pool_tau",
    "pool_rmse",
    "judged_per_topic",
    "kappa",
    "seconds",
]


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """One row per setting, labeler and measure pooling the repeats (see the module docstring)."""
    out = []
    for (setting, labeler, measure), g in table.groupby(["setting", "labeler", "measure"], sort=False):
        row: dict[str, Any] = {"setting": setting, "labeler": labeler, "measure": measure, "repeats": len(g)}
        for kind in ("runs", "pairs"):
            n, c = g[kind].to_numpy(), g[f"covered_{kind}"].to_numpy()
            nr, cr = g[f"reliable_{kind}"].to_numpy(), g[f"covered_reliable_{kind}"].to_numpy()
            row[f"cov_{kind}"], row[f"se_cov_{kind}"] = ratio_with_se(c, n)
            row[f"cov_reliable_{kind}"], row[f"se_cov_reliable_{kind}"] = ratio_with_se(cr, nr)
            row[f"cov_flagged_{kind}"], _ = ratio_with_se(c - cr, n - nr)
            row[f"reliable_share_{kind}"] = nr.sum() / n.sum() if n.sum() else math.nan
        row["rmse"] = math.sqrt((g["rmse"] ** 2).mean())  # every repeat has the same runs: over runs × repeats
        for column in MEANS:  # means over repeats (NaN for a column the rows lack)
            row[column] = g[column].mean() if column in g else math.nan
        row["flags_given"] = g["flags_given"].astype(bool).mean()
        out.append(row)
    return pd.DataFrame(out)


def number(x: float, digits: int = 2, signed: bool = False) -> str:
    """``x`` with ``digits`` decimals (a sign with ``signed``), ``–`` for None or NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def pair(a: float, b: float, digits: int = 2) -> str:
    return f"{number(a, digits)} / {number(b, digits)}"


MARKDOWN_COLUMNS = [
    "setting",
    "labels",
    "measure",
    "n",
    "coverage runs / pairs",
    "MC s.e.",
    "reliable share runs / pairs",
    "reliable: coverage runs / pairs",
    "its MC s.e.",
    "flagged: coverage runs / pairs",
    "mean abs δ̂",
    "bias",
    "RMSE",
    "width",
    "τ",
    "pool τ / RMSE",
    "judged per topic",
    "κ",
    "s per repeat",
]


def markdown_table(columns: list[str], rows: list[list[str]]) -> str:
    """A markdown table: the header ``columns``, then one line per row of cells."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in rows]) + "\n"


def markdown(summary: pd.DataFrame) -> str:
    """The summary as a markdown table (coverages with 2 decimals, their Monte-Carlo s.e. with 3)."""
    rows = []
    for r in summary.itertuples(index=False):
        cells = [
            r.setting,
            r.labeler,
            r.measure,
            str(r.repeats),
            pair(r.cov_runs, r.cov_pairs),
            pair(r.se_cov_runs, r.se_cov_pairs, 3),
            pair(r.reliable_share_runs, r.reliable_share_pairs),
            pair(r.cov_reliable_runs, r.cov_reliable_pairs),
            pair(r.se_cov_reliable_runs, r.se_cov_reliable_pairs, 3),
            pair(r.cov_flagged_runs, r.cov_flagged_pairs),
            number(r.mean_abs_delta),
            number(r.bias, 4, signed=True),
            number(r.rmse, 4),
            number(r.width, 4),
            number(r.tau, 3),
            f"{number(r.pool_tau, 3)} / {number(r.pool_rmse, 4)}",
            number(r.judged_per_topic, 1),
            number(r.kappa),
            number(r.seconds, 1),
        ]
        rows.append(cells)
    return markdown_table(MARKDOWN_COLUMNS, rows)


def report(summary: pd.DataFrame, table: pd.DataFrame, markdown_file: Path | None) -> None:
    flagged = table["flags_given"].astype(bool)
    note = (
        "" if flagged.all() else f"; estimate gave no 'reliable' column in {int((~flagged).sum())} rows: all reliable"
    )
    print(
        f"{table['seed'].nunique()} repeats (seeds {table['seed'].min()}–{table['seed'].max()}); 90 % intervals; "
        f"coverage pooled over repeats, MC s.e. with repeats as units{note}"
    )
    text = markdown(summary)
    print(text, end="")
    if markdown_file is not None:
        markdown_file.parent.mkdir(parents=True, exist_ok=True)
        markdown_file.write_text(text, encoding="utf-8")
        print(f"saved {markdown_file}")


# -- command line ------------------------------------------------------------------------------------------------


def choose_settings(only: list[str] | None, full: bool, quick: bool) -> list[str]:
    """Names of the settings to run: ``--only`` texts (a setting runs when its name contains one of them;
    an exact name picks that setting alone), else ``--quick``'s, ``--full``'s or the default ``COVID 2,000``."""
    if only:
        names = []
        for text in only:
            found = [text] if text in SETTINGS else [s for s in SETTINGS if text in s]
            if not found:
                raise SystemExit(f"--only {text!r} matches no setting; choices: {'; '.join(SETTINGS)}")
            names += [s for s in found if s not in names]
        return names
    if quick:
        return list(QUICK_SETTINGS)
    if full:
        return [name for name, s in SETTINGS.items() if s.evidence]
    return ["COVID 2,000"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeats", type=int, default=None, help="seeded repeats (default 10; --full 20)")
    parser.add_argument("--quick", action="store_true", help="about a minute: two small settings, no labels")
    parser.add_argument("--full", action="store_true", help="every evidence setting, 20 repeats, three labelers")
    parser.add_argument(
        "--only", action="append", default=None, help="a setting (exact name or part of names); repeatable"
    )
    parser.add_argument("--labelers", default=None, help="comma-separated: " + ", ".join(LABELERS))
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--out", type=Path, default=None, help="folder for design_evidence.csv and .png (default .)")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the summary table to this file")
    parser.add_argument("--no-figure", action="store_true", help="do not draw design_evidence.png")
    parser.add_argument("--docs", action="store_true", help="write docs/design_evidence.png (for the manual)")
    parser.add_argument("--design", choices=["poisson", "stratified"], default="poisson", help="the sampling design")
    parser.add_argument("--summarize", type=Path, nargs="+", default=None, help="summarize earlier CSVs")
    parser.add_argument("--rows", type=Path, default=None, help="folder for every row's parquet (calibrating flags)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs {args.jobs}: expected at least 1")
    if args.repeats is not None and args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: expected at least 1")
    out = args.out if args.out is not None else (None if args.quick else Path("."))
    figure = Path(__file__).resolve().parents[1] / "docs" / "design_evidence.png" if args.docs else None
    if figure is None and out is not None and not args.quick and not args.no_figure:
        figure = out / "design_evidence.png"
    if args.summarize:
        table = pd.concat([pd.read_csv(p) for p in args.summarize], ignore_index=True)
        summary = summarize(table)
        report(summary, table, args.markdown)
        if figure:
            draw(summary, figure)
        return summary
    names = choose_settings(args.only, args.full, args.quick)
    needs_data = {SETTINGS[n].collection for n in names} - {"synthetic"}
    for collection in sorted(needs_data):
        folder = args.data / ("trec-covid-round1" if collection == "covid" else "robust04")
        if not folder.exists():
            sys.exit(f"{folder} is absent (the TREC data lives in ../shared/data beside the project)")
    default_labelers = "none" if args.quick else ",".join(LABELERS) if args.full else "none,kappa 0.2 (systems)"
    labelers = (args.labelers or default_labelers).split(",")
    for labeler in labelers:
        if labeler not in LABELERS:
            parser.error(f"--labelers: {labeler!r} is unknown; choices: {', '.join(LABELERS)}")
    options = {"data": str(args.data), "quick": args.quick, "design": args.design, "rows": args.rows}
    if args.rows is not None:
        args.rows.mkdir(parents=True, exist_ok=True)
    tasks = []
    for name in sorted(names, key=lambda n: (SETTINGS[n].collection, names.index(n))):
        repeats = args.repeats or (QUICK_SETTINGS.get(name, 3) if args.quick else 20 if args.full else 10)
        tasks += [(name, labeler, seed, options) for labeler in labelers for seed in range(repeats)]
    started = time.time()
    csv = out / "design_evidence.csv" if out is not None else None
    table = run_tasks(tasks, args.jobs, csv)
    # the summary in the order of the settings and labelers asked for (tasks ran grouped by collection)
    order = {**{name: i for i, name in enumerate(names)}, **{lab: i for i, lab in enumerate(labelers)}}
    table = table.sort_values(
        ["setting", "labeler", "seed"], key=lambda col: col.map(order) if col.name != "seed" else col, kind="stable"
    )
    summary = summarize(table)
    report(summary, table, args.markdown)
    print(f"({time.time() - started:.0f} s{'; rows in ' + str(csv) if csv else ''})")
    if figure:
        draw(summary, figure)
    return summary


def draw(summary, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    measures = list(dict.fromkeys(summary["measure"]))
    rows = max(int((summary["measure"] == m).sum()) for m in measures)
    fig, axes = plt.subplots(1, len(measures) + 1, figsize=(4.4 * (len(measures) + 1), max(4.6, 0.3 * rows + 1.5)))
    for ax, m in zip(axes[:-1], measures, strict=True):
        part = summary[summary["measure"] == m]
        y = np.arange(len(part))
        ax.axvspan(0.87, 0.93, color="0.9", label="goal 0.87–0.93")
        ax.scatter(part["cov_runs"], y, marker="o", label="run means")
        ax.scatter(part["cov_pairs"], y, marker="x", label="pairs")
        ax.scatter(part["cov_reliable_runs"], y, marker="o", facecolors="none", edgecolors="k", label="reliable runs")
        ax.axvline(0.9, color="0.5", lw=0.8)
        ax.set_yticks(y, [f"{s}\n{lab}" for s, lab in zip(part["setting"], part["labeler"], strict=True)], fontsize=5)
        ax.set_xlim(0.0, 1.0)
        ax.set_title(f"{m}: coverage of 90 % intervals", fontsize=9)
        ax.legend(fontsize=6, loc="lower left")
    ax = axes[-1]
    for m, marker in zip(measures, ("o", "s", "^", "v"), strict=False):
        part = summary[summary["measure"] == m]
        ax.scatter(part["pool_tau"], part["tau"], marker=marker, label=m)
    lim = [0.5, 1.0]
    ax.plot(lim, lim, color="0.5", lw=0.8)
    ax.set_xlabel("priority pool τ (same budget)", fontsize=8)
    ax.set_ylabel("design-based estimate τ", fontsize=8)
    ax.set_title("ranking: τ against complete judgments", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"saved {path}")


if __name__ == "__main__":
    main()
