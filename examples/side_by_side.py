"""Judging methods side by side at the same budget: pools ranked by plain measures, samples estimated by design.

    python examples/side_by_side.py [DATA_FOLDER] [--quick | --full] [--settings S ...] [--methods M,M] [--labelers L,L]
        [--repeats N] [--shares X,X] [--step N] [--jobs N] [--out DIR] [--markdown FILE]

Methods (``--methods``, by key):

* ``pool``: the priority pool, the top pairs of Σ over runs of 1/(1 + rank) (ranks from 1, the runs' top 100;
  ties by canonical pair order), on top of the setting's starting judgments; scored with the plain measures
  (unjudged = nonrelevant): ``design_evidence.priority_pool`` / ``pool_scores``;
* ``mtf``: MoveToFront (:class:`ir_incomplete.judging.MoveToFront`, per topic), plain measures, replayed
  with :func:`ir_incomplete.judging.simulate` in rounds of ``--step`` (the oracle: the universe's grades, so a
  pair outside the runs' top 100 counts nonrelevant, as in the truth);
* ``judge-next``: :class:`ir_incomplete.judging.JudgeNext` (MTC's criterion) in rounds of ``--step``, run once
  per measure with that measure as its target (``AP@100``, ``nDCG@10``), and with the labels as its relevance
  prior when a labeler is given; scored with the plain measures on the pairs it chose (judge-next reports no
  estimates of its own);
* ``sample``: ``sample(runs, B, qrels=<start>, seed=s)`` (default prior ``ap+rbp``, 10 % uniform floor) and
  :func:`ir_incomplete.estimate` (default control variate; ``predictions=`` the labels when a labeler is
  given; 90 % intervals of run means and of every pair, ``pairs="both"``); as in ``design_evidence.py`` the
  labels shape π only when starting judgments calibrate them;
* ``hybrid``: ``sample(runs, B, certain=round(share · B), ...)`` — the top ``share · B`` pairs of the priority
  pool judged with π = 1 out of the budget, the rest sampled — and the same ``estimate``; one method per
  share of ``--shares`` (default 0.5), named ``hybrid 0.5``;
* ``lara``: a LARA-style design in two rounds: round 1 draws ``B // 4`` as ``sample`` does (labels shaping π
  only with starting judgments), its pairs are judged; round 2 draws the other ``B − B // 4`` with
  ``previous=`` round 1, ``judgments=`` every judgment so far and ``predictions=`` the labels, so π is
  multiplied by √(p̂(1 − p̂)) of the labels calibrated on the judgments (π grows where the calibrated label is
  unsure); estimated with ``predictions=`` the labels. Needs a labeler (skipped with labels ``none``).

Settings (``--settings``, by name or part of names, repeatable; default ``COVID 2,000``, ``--full`` all six):
``COVID 1,000`` / ``2,000`` / ``4,000`` (TREC-COVID round 1, 143 runs, 30
topics, from no judgments), ``COVID round 1 + 2,000`` (the official round-1 judgments inside the universe,
graded with the complete judgments, as certainty stratum / starting judgments, + 2,000), ``Robust04 2,000`` /
``4,000`` (10 runs, 249 topics, from none). Truth: the *universe* is the union of the runs' top 100 per topic,
each pair graded by the complete judgments (unjudged = 0); the true run means are the measures on those grades
(``design_evidence.universe_truth``): what the design-based estimates target, and what the pools' plain
measures reach once every pair of the universe is judged. Measures: AP@100 and nDCG@10.

Labelers (``--labelers``; default ``none,kappa 0.42``, ``--full`` all three): ``none``, ``kappa 0.42`` and
``kappa 0.2 (systems)`` of ``design_evidence.py`` (``labels_for``; drawn with seed 1,000,003 + s). The pool
and MoveToFront ignore labels (their rows say labels ``–``; they are run once whatever the labelers).

Repeats: seeds 0 .. ``--repeats`` − 1 (default 3) for the samples and for judge-next with labels (the labels
change with the seed); the pool, MoveToFront and judge-next without labels are deterministic: one repeat.

Reported per method × setting × labels × measure (means over repeats): Kendall τ-b of the run ranking
against the truth, RMSE of the run means, coverage of the 90 % intervals of run means and of pairs'
differences (pooled over repeats), the share of rows ``estimate`` flags ``reliable`` and the coverage of
those (the samples only), and for the pool, MoveToFront and judge-next the
judgments (beyond the starting ones) after which τ first reaches 0.9, read on a curve with a point every
``--step`` judgments up to the largest budget of the settings run with the same collection and start
(``>4000`` when not reached; with repeats, the mean over them when every repeat reaches it, else ``>4000 in
k/n``). The pools have no intervals, so their coverage columns are ``–``. Every repeat's rows go to
``side_by_side.csv`` in ``--out`` (default: the current folder; with ``--quick`` nothing is written unless
``--out`` is given); ``--markdown FILE`` writes the summary table.

``--quick`` (about 8 s): ``COVID 2,000`` on 40 of the runs, labels ``none``, methods ``pool``, ``sample``,
``hybrid``, 3 repeats. ``--jobs N``: processes over the tasks (each process loads a collection once:
TREC-COVID about 5 s, Robust04 about 3 s). Measured on a shared two-core machine, one process: per task on
TREC-COVID (143 runs) the pool's curve to 4,000 1 s, MoveToFront 7–10 s, judge-next (both targets) 15–19 s,
a sample, hybrid or LARA-style repeat 1–2.5 s; ``--settings COVID --labelers "none,kappa 0.42"`` (4 settings,
3 repeats) 251 s; ``--settings Robust04 --labelers none`` 38 s.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

import ir_incomplete
from ir_incomplete.judging import JudgeNext, MoveToFront, sample, simulate

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import design_evidence as de  # noqa: E402  (beside this file)

DEFAULT_DATA = HERE.parent.parent / "shared" / "data"
MEASURES = ("AP@100", "nDCG@10")
LABELERS = de.LABELERS
METHODS = ("pool", "mtf", "judge-next", "sample", "hybrid", "lara")
#: methods whose judgments follow a fixed order from the starting judgments (curves, one repeat without labels)
CURVE_METHODS = ("pool", "mtf", "judge-next")
LEVEL = 0.9
TARGET_TAU = 0.9


@dataclass(frozen=True)
class Setting:
    collection: str
    budget: int
    start: str  # "none" or "round 1"


SETTINGS: dict[str, Setting] = {
    "COVID 1,000": Setting("covid", 1000, "none"),
    "COVID 2,000": Setting("covid", 2000, "none"),
    "COVID 4,000": Setting("covid", 4000, "none"),
    "COVID round 1 + 2,000": Setting("covid", 2000, "round 1"),
    "Robust04 2,000": Setting("robust04", 2000, "none"),
    "Robust04 4,000": Setting("robust04", 4000, "none"),
}


# -- per process: collections and their starting judgments ------------------------------------------------------

_COLLECTIONS: dict[str, de.Collection] = {}


def collection_of(name: str, options: dict) -> de.Collection:
    if name not in _COLLECTIONS:
        _COLLECTIONS[name] = de.load_collection(name, Path(options["data"]), options["quick"])
    return _COLLECTIONS[name]


def start_of(collection: de.Collection, start: str):
    """(certainty units, qrels for ``sample``, starting judgments for ``simulate`` graded from the truth)."""
    known, certain = de.certainty(collection, start)
    frame = None if len(known) == 0 else collection.truth.iloc[known][["query_id", "doc_id", "relevance"]]
    return known, certain, frame


# -- scoring ------------------------------------------------------------------------------------------------------


def design_rows(collection: de.Collection, design: pd.DataFrame, labels) -> list[dict]:
    """Judge ``design`` from the truth, estimate every measure; one dict per measure."""
    runs_table, pairs_table = ir_incomplete.estimate(
        collection.prepared,
        de.judge(collection, design),
        design,
        list(MEASURES),
        predictions=labels,
        pairs="both",
        progress=False,
    )
    spent = int((design["stratum"] != "judged").sum())
    return [
        {"measure": m, **de.Scored.of(runs_table, pairs_table, collection.means, m).counts(), "judgments": spent}
        for m in MEASURES
    ]


# -- the methods --------------------------------------------------------------------------------------------------


def checkpoints(budgets: list[int], step: int) -> list[int]:
    top = max(budgets)
    return sorted(set(range(step, top + 1, step)) | set(budgets))


def curve_rows(method: str, collection: de.Collection, start: str, budgets, step, labels, seed) -> list[dict]:
    """A curve method judged up to the largest budget: per measure, (τ, RMSE) at each budget and the first
    point of the curve with τ ≥ 0.9. One dict per budget and measure."""
    known, _, start_frame = start_of(collection, start)
    points = checkpoints(list(budgets), step)
    curves: dict[str, list[tuple[int, float, float]]] = {m: [] for m in MEASURES}
    if method == "pool":
        for k in points:
            units = de.priority_pool(collection.space, k, known)
            scores = de.pool_scores(collection, units, MEASURES)
            for m in MEASURES:
                curves[m].append((k, *scores[m]))
    else:
        oracle = collection.truth[["query_id", "doc_id", "relevance"]]
        runs = de_runs(collection)
        targets: dict[str, Any]
        if method == "mtf":
            targets = {"both": MoveToFront()}
        else:
            targets = {m: JudgeNext(m, predictions=labels, seed=0) for m in MEASURES}
        for target, strategy in targets.items():
            curve = simulate(runs, oracle, strategy, max(points), points, start=start_frame, measures=list(MEASURES))
            reference = curve.attrs["reference"]
            for m in MEASURES if target == "both" else [target]:
                gap = float((reference[m].reindex(collection.means.columns) - collection.means.loc[m]).abs().max())
                if gap > 1e-9:
                    raise ValueError(f"simulate's reference of {m} differs from the universe truth by {gap:.3g}")
                part = curve[curve["measure"] == m]
                curves[m] = list(zip(part["judgments"], part["tau"], part["rmse"], strict=True))
    rows = []
    for m in MEASURES:
        points_m = curves[m]
        reach = next((k for k, tau, _ in points_m if tau >= TARGET_TAU), None)
        for b in budgets:
            at = [(tau, rmse) for k, tau, rmse in points_m if k == b]
            if not at:  # the method ran out of pairs before b: its last point
                at = [(points_m[-1][1], points_m[-1][2])]
            rows.append(
                {
                    "budget": b,
                    "measure": m,
                    "tau": at[0][0],
                    "rmse": at[0][1],
                    "to_tau_0.9": float(reach) if reach is not None else math.nan,
                    "curve_max": max(points),
                }
            )
    return rows


def de_runs(collection: de.Collection) -> dict[str, pd.DataFrame]:
    """``{run: frame query_id, doc_id, score}`` from the prepared runs (what ``simulate`` reads)."""
    cached = getattr(collection, "_frames", None)
    if cached is None:
        cached = collection._frames = runs_frames(collection)  # type: ignore[attr-defined]
    return cached


def runs_frames(collection: de.Collection) -> dict[str, pd.DataFrame]:
    files = collection_files(collection)
    return {name: ir_incomplete.read_trec_run(path) for name, path in files.items()}


def collection_files(collection: de.Collection) -> dict[str, Path]:
    return _FILES[collection.name]


_FILES: dict[str, dict[str, Path]] = {}


def design_of(method: str, collection: de.Collection, setting: Setting, labels, seed: int, share: float):
    """The design ``method`` draws for ``setting`` (see the module docstring)."""
    _, certain, _ = start_of(collection, setting.start)
    shaping = labels if certain is not None else None
    budget = setting.budget
    if method == "sample":
        return sample(collection.prepared, budget, qrels=certain, predictions=shaping, seed=seed, progress=False)
    if method == "hybrid":
        return sample(
            collection.prepared,
            budget,
            qrels=certain,
            predictions=shaping,
            certain=int(round(share * budget)),
            seed=seed,
            progress=False,
        )
    if method == "lara":
        first = sample(collection.prepared, budget // 4, qrels=certain, predictions=shaping, seed=seed, progress=False)
        return sample(
            collection.prepared,
            budget - budget // 4,
            previous=first,
            judgments=de.judge(collection, first),
            predictions=labels,
            seed=seed,
            progress=False,
        )
    raise ValueError(f"method {method!r} is not a design; choices: sample, hybrid, lara")


# -- tasks --------------------------------------------------------------------------------------------------------


def run_task(task: dict) -> list[dict]:
    """Rows of one task: a curve method over the budgets of one collection and start, or one design repeat."""
    options = task["options"]
    _register_files(options)
    collection = collection_of(task["collection"], options)
    labels = de.labels_for(task["labeler"], collection, task["seed"])
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", RuntimeWarning)
        if task["method"] in CURVE_METHODS:
            rows = curve_rows(
                task["method"], collection, task["start"], task["budgets"], options["step"], labels, task["seed"]
            )
            for row in rows:
                row["setting"] = task["names"][task["budgets"].index(row["budget"])]
        else:
            setting = SETTINGS[task["setting"]]
            design = design_of(task["method"], collection, setting, labels, task["seed"], task.get("share", 0.0))
            rows = [{**row, "setting": task["setting"]} for row in design_rows(collection, design, labels)]
    seconds = time.perf_counter() - started
    messages = sorted({str(w.message).splitlines()[0][:160] for w in caught})
    shown = task["labeler"] if task["method"] not in ("pool", "mtf") else "–"
    for row in rows:
        row.update(
            method=task["label"],
            labeler=shown,
            seed=task["seed"],
            seconds=seconds,
            kappa=de.labels_kappa(collection, labels),
            warnings=" | ".join(messages),
        )
    return rows


def _register_files(options: dict) -> None:
    data = Path(options["data"])
    if "covid" not in _FILES:
        files = sorted((data / "trec-covid-round1" / "runs").glob("*.gz"))[: 40 if options["quick"] else None]
        _FILES["covid"] = {p.name[:-3]: p for p in files}
    if "robust04" not in _FILES:
        _FILES["robust04"] = {p.name: p for p in sorted((data / "robust04" / "runs").glob("*"))}


def make_tasks(names, methods, labelers, repeats, shares, options) -> list[dict]:
    tasks: list[dict] = []
    groups: dict[tuple[str, str], list[str]] = {}
    for name in names:
        s = SETTINGS[name]
        groups.setdefault((s.collection, s.start), []).append(name)
    for (collection, start), group in groups.items():
        base = {"collection": collection, "start": start, "options": options}
        budgets = [SETTINGS[n].budget for n in group]
        for method in methods:
            if method in CURVE_METHODS:
                for labeler in labelers:
                    if method in ("pool", "mtf") and labeler != labelers[0]:
                        continue  # they ignore labels
                    seeds = range(1) if labeler == "none" or method != "judge-next" else range(repeats)
                    for seed in seeds:
                        tasks.append(
                            {**base, "method": method, "label": method, "labeler": labeler, "seed": seed}
                            | {"budgets": budgets, "names": group}
                        )
                continue
            variants = [(f"hybrid {x:g}", x) for x in shares] if method == "hybrid" else [(method, 0.0)]
            for name in group:
                for labeler in labelers:
                    if method == "lara" and labeler == "none":
                        continue
                    for label, share in variants:
                        for seed in range(repeats):
                            tasks.append(
                                {**base, "method": method, "label": label, "labeler": labeler, "seed": seed}
                                | {"setting": name, "share": share}
                            )
    return tasks


#: the CSV's columns (every task's rows, NaN where a method has no such number)
CSV_COLUMNS = [
    "setting",
    "measure",
    "method",
    "labeler",
    "seed",
    "tau",
    "rmse",
    "runs",
    "pairs",
    "covered_runs",
    "covered_pairs",
    "reliable_runs",
    "reliable_pairs",
    "covered_reliable_runs",
    "covered_reliable_pairs",
    "judgments",
    "budget",
    "to_tau_0.9",
    "curve_max",
    "kappa",
    "seconds",
    "warnings",
]


def _describe(task: dict) -> str:
    where = task.get("setting") or f"{task['collection']} from {task['start']}"
    return f"{task['label']}, {where}, labels {task['labeler']}, seed {task['seed']}"


def run_tasks(tasks: list[dict], jobs: int, csv: Path | None) -> pd.DataFrame:
    return de.run_pool(tasks, jobs, csv, run_task, _describe, CSV_COLUMNS)


# -- summary ------------------------------------------------------------------------------------------------------


def _ratio(c: pd.Series, n: pd.Series) -> float:
    return float(c.sum() / n.sum()) if n.sum() else math.nan


def summarize(table: pd.DataFrame, names: list[str], methods_order: list[str]) -> pd.DataFrame:
    out = []
    for (setting, measure, method, labeler), g in table.groupby(["setting", "measure", "method", "labeler"]):
        row: dict[str, Any] = {
            "setting": setting,
            "measure": measure,
            "method": method,
            "labeler": labeler,
            "repeats": len(g),
            "tau": g["tau"].mean(),
            "rmse": math.sqrt((g["rmse"] ** 2).mean()),
        }
        for kind in ("runs", "pairs"):
            if f"covered_{kind}" in g and g[f"covered_{kind}"].notna().any():
                row[f"cov_{kind}"] = _ratio(g[f"covered_{kind}"], g[kind])
                row[f"reliable_{kind}"] = _ratio(g[f"reliable_{kind}"], g[kind])
                row[f"cov_reliable_{kind}"] = _ratio(g[f"covered_reliable_{kind}"], g[f"reliable_{kind}"])
            else:
                row[f"cov_{kind}"] = row[f"reliable_{kind}"] = row[f"cov_reliable_{kind}"] = math.nan
        reach = g["to_tau_0.9"] if "to_tau_0.9" in g else pd.Series(dtype=float)
        row["reach"] = reach.mean() if reach.notna().all() and len(reach) else math.nan
        row["reach_missed"] = int(reach.isna().sum()) if "curve_max" in g and g["curve_max"].notna().any() else -1
        row["curve_max"] = g["curve_max"].max() if "curve_max" in g else math.nan
        row["seconds"] = g["seconds"].mean()
        out.append(row)
    summary = pd.DataFrame(out)
    order = {n: i for i, n in enumerate(names)}
    labels_order = {lab: i for i, lab in enumerate(("–", *LABELERS))}
    mo = {m: i for i, m in enumerate(methods_order)}
    summary["_k"] = [
        (order.get(s, 99), MEASURES.index(m), labels_order.get(lab, 9), mo.get(meth, 99))
        for s, m, lab, meth in zip(
            summary["setting"], summary["measure"], summary["labeler"], summary["method"], strict=True
        )
    ]
    return summary.sort_values("_k").drop(columns="_k").reset_index(drop=True)


COLUMNS = [
    "setting",
    "measure",
    "labels",
    "method",
    "n",
    "τ",
    "RMSE",
    "coverage runs / pairs",
    "reliable share runs / pairs",
    "reliable: coverage runs / pairs",
    "judgments to τ 0.9",
    "s per repeat",
]


def markdown(summary: pd.DataFrame) -> str:
    rows = []
    for r in summary.to_dict("records"):
        if r["reach_missed"] < 0:
            reach = "–"
        elif r["reach_missed"] == 0:
            reach = f"{r['reach']:.0f}"
        elif r["reach_missed"] == r["repeats"]:
            reach = f">{r['curve_max']:.0f}"
        else:
            reach = f">{r['curve_max']:.0f} in {r['reach_missed']}/{r['repeats']}"
        cells = [
            r["setting"],
            r["measure"],
            r["labeler"],
            r["method"],
            str(r["repeats"]),
            de.number(r["tau"], 3),
            de.number(r["rmse"], 4),
            de.pair(r["cov_runs"], r["cov_pairs"]),
            de.pair(r["reliable_runs"], r["reliable_pairs"]),
            de.pair(r["cov_reliable_runs"], r["cov_reliable_pairs"]),
            reach,
            de.number(r["seconds"], 1),
        ]
        rows.append(cells)
    return de.markdown_table(COLUMNS, rows)


# -- command line -------------------------------------------------------------------------------------------------


def _split(text: str, choices, flag: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    for x in items:
        if x not in choices:
            raise SystemExit(f"{flag}: {x!r} is unknown; choices: {', '.join(choices)}")
    return items


def choose_settings(texts: list[str]) -> list[str]:
    """Settings named by ``--settings``: an exact name picks that one, other text every name containing it."""
    names: list[str] = []
    for text in texts:
        found = [text] if text in SETTINGS else [s for s in SETTINGS if text in s]
        if not found:
            raise SystemExit(f"--settings {text!r} matches no setting; choices: {'; '.join(SETTINGS)}")
        names += [s for s in found if s not in names]
    return names


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--quick", action="store_true", help="COVID 2,000 on 40 runs, no labels, pool/sample/hybrid")
    parser.add_argument("--full", action="store_true", help="every setting and labeler (default: COVID 2,000)")
    parser.add_argument(
        "--settings",
        action="append",
        default=None,
        help="a setting (exact name, or text that names contain: 'COVID', 'Robust04 4'); repeatable; default all: "
        + "; ".join(SETTINGS),
    )
    parser.add_argument("--methods", default=None, help="comma-separated: " + ", ".join(METHODS) + " (default all)")
    parser.add_argument("--labelers", default=None, help="comma-separated: " + ", ".join(LABELERS))
    parser.add_argument("--repeats", type=int, default=None, help="seeded repeats of the random methods (default 3)")
    parser.add_argument("--shares", default="0.5", help="the hybrid's certainty shares of the budget (default 0.5)")
    parser.add_argument("--step", type=int, default=500, help="judgments per round / curve point (default 500)")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--out", type=Path, default=None, help="folder for side_by_side.csv (default .)")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the summary table to this file")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs {args.jobs}: expected at least 1")
    if args.repeats is not None and args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: expected at least 1")
    if args.step < 1:
        parser.error(f"--step {args.step}: expected at least 1")
    shares = []
    for text in args.shares.split(","):
        try:
            x = float(text)
        except ValueError:
            parser.error(f"--shares: {text!r} is not a number")
        if not 0 < x < 1:
            parser.error(f"--shares: {text} is outside (0, 1)")
        shares.append(x)
    if args.quick:
        names = ["COVID 2,000"]
        methods = ["pool", "sample", "hybrid"]
        labelers = ["none"]
        repeats = args.repeats or 3
    else:
        names = choose_settings(args.settings) if args.settings else list(SETTINGS) if args.full else ["COVID 2,000"]
        methods = _split(args.methods, METHODS, "--methods") if args.methods else list(METHODS)
        default_labelers = list(LABELERS) if args.full else ["none", "kappa 0.42"]
        labelers = _split(args.labelers, LABELERS, "--labelers") if args.labelers else default_labelers
        repeats = args.repeats or 3
    if args.settings and args.quick:
        names = choose_settings(args.settings)
    if args.methods and args.quick:
        methods = _split(args.methods, METHODS, "--methods")
    for collection in sorted({SETTINGS[n].collection for n in names}):
        folder = args.data / ("trec-covid-round1" if collection == "covid" else "robust04")
        if not folder.exists():
            sys.exit(f"{folder} is absent (the TREC data lives in ../shared/data beside the project)")
    out = args.out if args.out is not None else (None if args.quick else Path("."))
    options = {"data": str(args.data), "quick": args.quick, "step": args.step}
    tasks = make_tasks(names, methods, labelers, repeats, shares, options)
    started = time.time()
    table = run_tasks(tasks, args.jobs, out / "side_by_side.csv" if out is not None else None)
    methods_order = [m for m in methods if m != "hybrid"]
    if "hybrid" in methods:
        methods_order[methods.index("hybrid") : methods.index("hybrid")] = [f"hybrid {x:g}" for x in shares]
    summary = summarize(table, names, methods_order)
    print(
        f"90 % intervals; τ, RMSE against the universe truth; seeds 0–{repeats - 1} for the random methods; "
        f"curves every {args.step} judgments"
    )
    text = markdown(summary)
    print(text, end="")
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(text, encoding="utf-8")
        print(f"saved {args.markdown}")
    print(f"({time.time() - started:.0f} s)")
    return summary


if __name__ == "__main__":
    main()
