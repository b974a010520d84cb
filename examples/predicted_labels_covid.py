"""Automatic relevance labels on TREC-COVID round 1: used as qrels, as a bootstrap prior, or through
prediction-powered inference — which estimates come closest to complete judgments, and which intervals
cover them?

Data: the 143 round-1 runs; the round-1 qrels are the incomplete human judgments; the complete qrels of
topics 1–30 (all judgments of rounds 1–5) are the truth, for nDCG@10 and AP@100.

Labeler: a seeded simulated labeler (:func:`ir_incomplete.labelers.simulate_labels`) grades every
document in the top 100 of some run (the union over runs: about 114 000 query–document pairs). A
document of human grade h (its grade in the complete qrels; a document the complete qrels do not judge
is nonrelevant, h = 0) is labelled p with probability ``CONFUSION[h][p]`` (rows: human grade 0, 1, 2)::

    human 0 → 0.85 0.10 0.05        lenient, as LLM judges tend to be
    human 1 → 0.35 0.35 0.30
    human 2 → 0.15 0.30 0.55

Its Cohen's κ against the human grades on the documents the complete qrels judge is about 0.42 (what
published LLM judges reach on TREC qrels); on all labelled documents, most of them unjudged and so
nonrelevant, about 0.18. Every repeat draws new labels (seed = repeat number).

Estimators, each scored against the complete-judgment value (mean over the 30 topics) per run:

* plain — the measure on the round-1 qrels (unjudged = nonrelevant);
* predictions as qrels — on the round-1 human judgments plus the predicted grade of every labelled
  document round 1 did not judge;
* Boot(pool+run) — ``BootNDCG@10`` / ``BootAP@100`` on the round-1 qrels (the value: the mean of the
  per-query most likely values; interval: percentiles 5 and 95 of the bootstrap distribution of the
  mean);
* Boot(predicted) — the same with ``prior=predicted`` and the predicted labels
  (``evaluate(..., predictions=...)``);
* PPI / PPI++ — :func:`ir_incomplete.ppi.ppi_evaluate`. Design: in each repeat 10 of the 30 topics,
  drawn at random, are *labelled* — they get complete human judgments, Y = the measure on the complete
  qrels — and the other 20 get none; Ŷ = the measure on "predictions as qrels" above, on every topic.
  The target of the interval is then well defined: the mean over the 30 topics of the measure under
  complete judgments, which PPI estimates without bias because the labelled topics are a random sample.
  PPI thus sees complete judgments for 10 topics, which the other estimators never do; the classical
  interval from those 10 topics alone (λ = 0) is reported beside it, to show what the predictions add.
  The interval of PPI is built for the mean over the population the topics are sampled from; for the
  mean over these very 30 topics, of which the 20 unlabelled ones are part, it is conservative (the
  spread of the unlabelled topics counts as uncertainty although they are the target's own topics).
  So the rows "i.i.d. topics" check PPI on its own assumption: the 30 topics are the population,
  10 labelled and 20 unlabelled topics are drawn from them independently with replacement, and the
  target — the population mean — is again the mean over the 30 topics under complete judgments.

For each estimator: Kendall τ between the run ranking it gives and the complete one, RMSE of the run
means (both averaged over repeats where the estimator is random) and, for the interval estimators, the
share of (run, repeat) pairs whose complete value lies inside the 90 % interval, and the mean width.

Boot(pool+run) for AP@100 and Boot(predicted) need ``BootAP`` and ``evaluate(..., predictions=...)``;
where this version of ir_incomplete lacks them their rows print "n/a". Figure: the 25 best runs (on
complete judgments) with PPI's interval of one repeat, predictions-as-qrels, plain and the complete value:
``predicted_labels_covid.png`` in the current folder, in ``--out DIR``, or ``docs/`` with ``--docs``.

Run from the project root (the data live in ``../shared/data``, or pass their folder); with the
default 200 repeats it takes about 150 s on 2 shared cores without the Boot(predicted) rows, whose
bootstrap draws a grade for every predicted-but-unjudged document in every repeat (``--boot-repeats N``
bounds their share)::

    python examples/predicted_labels_covid.py [DATA_FOLDER] [--repeats 200] [--labelled 10] [--boot-repeats N]
                                              [--out DIR | --docs]
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

import ir_incomplete
from ir_incomplete.data import Qrels, prepare_runs, read_trec_qrels, read_trec_run
from ir_incomplete.labelers import cohen_kappa, expected_kappa, judged_kappa, retrieved_documents, simulate_labels
from ir_incomplete.ppi import ppi_evaluate, ppi_mean

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
FIGURE = "predicted_labels_covid.png"
CONFUSION = [[0.85, 0.10, 0.05], [0.35, 0.35, 0.30], [0.15, 0.30, 0.55]]
MEASURES = {
    "nDCG@10": ("BootNDCG@10", "BootNDCG(prior=predicted)@10"),
    "AP@100": ("BootAP@100", "BootAP(prior=predicted)@100"),
}
ALPHA = 0.1  # 90 % intervals


def load(data: Path):
    folder = data / "trec-covid-round1"
    if not folder.exists():
        raise SystemExit(f"{folder} not found: pass the folder that holds trec-covid-round1/")
    runs = {p.name[:-3]: read_trec_run(p) for p in sorted((folder / "runs").glob("*.gz"))}
    return (
        runs,
        read_trec_qrels(folder / "qrels.round1.txt.gz"),
        read_trec_qrels(folder / "qrels.complete-topics1-30.txt.gz"),
    )


def available(measure: str) -> bool:
    """Whether this version of ir_incomplete has the measure."""
    try:
        ir_incomplete.parse(measure)
    except (ValueError, NameError):
        return False
    return True


def takes(name: str) -> bool:
    """Whether ``ir_incomplete.evaluate`` has the keyword argument ``name``."""
    return name in inspect.signature(ir_incomplete.evaluate).parameters


def grid(table: pd.DataFrame, runs: list[str], measure: str, topics: list[str]) -> np.ndarray:
    """``values[run, topic]`` of one measure from a per-query ``evaluate`` table."""
    name = repr(ir_incomplete.parse(measure))
    rows = table[table["measure"] == name].set_index(["run", "query_id"])["value"]
    return rows.reindex(pd.MultiIndex.from_product([runs, topics])).to_numpy().reshape(len(runs), len(topics))


def boot_intervals(runs, prepared, qrels, measure: str, predictions=None):
    """``(value, lo, hi)`` per run (arrays in run order) of a bootstrap measure: the value as ``evaluate``
    reports it, the 90 % interval from its replicate means; ``None`` when this version lacks the measure,
    ``predictions=`` or ``interval=``, except for BootNDCG without predictions (from ``bootstrap_ndcg``)."""
    names = list(runs)
    if not available(measure) or (predictions is not None and not takes("predictions")):
        return None
    extra = {} if predictions is None else {"predictions": predictions}
    if takes("interval"):
        try:  # runs converted once, when evaluate takes them with these options; else the runs themselves
            table = ir_incomplete.evaluate(prepared, qrels, [measure], per_query=False, interval=1 - ALPHA, **extra)
        except (TypeError, ValueError):
            table = ir_incomplete.evaluate(runs, qrels, [measure], per_query=False, interval=1 - ALPHA, **extra)
        table = table.set_index("run").reindex(names)
        return table["value"].to_numpy(), table["lo"].to_numpy(), table["hi"].to_numpy()
    parsed = ir_incomplete.parse(measure)
    if predictions is not None or not isinstance(parsed, ir_incomplete.BootstrappedNDCG):
        return None
    result = ir_incomplete.bootstrap_ndcg(runs, qrels, k=parsed.get("cutoff"), prior=parsed.get("prior"))
    if result.replicates is None:
        return None
    means = result.replicates.groupby(level="run", sort=False).mean().reindex(names).to_numpy()
    values = ir_incomplete.evaluate(prepared, qrels, [measure], per_query=False).set_index("run")["value"]
    return values.reindex(names).to_numpy(), np.percentile(means, 5, axis=1), np.percentile(means, 95, axis=1)


def merged_qrels(round1: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """Round-1 human judgments plus the predicted grade of every labelled document they do not judge."""
    judged = pd.MultiIndex.from_frame(round1[["query_id", "doc_id"]])
    fresh = ~pd.MultiIndex.from_frame(labels[["query_id", "doc_id"]]).isin(judged)
    extra = labels.loc[fresh, ["query_id", "doc_id", "relevance"]]
    return pd.concat([round1[["query_id", "doc_id", "relevance"]], extra], ignore_index=True)


def agreement(values: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    """Kendall τ and RMSE of run means against the reference run means."""
    return float(kendalltau(values, reference).statistic), float(np.sqrt(np.mean((values - reference) ** 2)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA, help="folder holding trec-covid-round1/")
    parser.add_argument("--repeats", type=int, default=200, help="seeded repeats of labeler and labelled topics")
    parser.add_argument("--labelled", type=int, default=10, help="topics with complete judgments for PPI (of 30)")
    parser.add_argument("--depth", type=int, default=100, help="the labeler grades each run's top DEPTH documents")
    parser.add_argument(
        "--boot-repeats",
        type=int,
        default=None,
        help="Boot(predicted) on the first N repeats only (default: every repeat; it dominates the runtime)",
    )
    parser.add_argument("--out", type=Path, default=Path("."), help="folder for the figure (default: current)")
    parser.add_argument("--docs", action="store_true", help=f"regenerate docs/{FIGURE} of the project")
    parser.add_argument("--no-png", dest="png", action="store_false", help="do not draw the figure")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        raise SystemExit("--repeats must be >= 1")
    started = time.perf_counter()
    runs, round1, complete = load(args.data)
    names = list(runs)
    prepared = prepare_runs(runs)
    topics = sorted(set(complete["query_id"]), key=int)
    if not 2 <= args.labelled < len(topics):
        raise SystemExit(f"--labelled must be between 2 and {len(topics) - 1} (the data have {len(topics)} topics)")
    measures = list(MEASURES)
    truth = ir_incomplete.evaluate(prepared, Qrels.from_any(complete), measures)
    y = {m: grid(truth, names, m, topics) for m in measures}  # runs × topics, complete judgments
    target = {m: y[m].mean(axis=1) for m in measures}
    docs = retrieved_documents(runs, depth=args.depth)
    print(
        f"{len(names)} runs, {len(topics)} topics; round-1 qrels {len(round1)} judgments, complete {len(complete)}; "
        f"the labeler grades {len(docs)} documents (top {args.depth} of every run)"
    )

    rows: dict[tuple[str, str], dict[str, list[float]]] = {}

    def record(estimator: str, measure: str, values, lo=None, hi=None) -> None:
        cell = rows.setdefault((estimator, measure), {"tau": [], "rmse": [], "coverage": [], "width": []})
        tau, rmse = agreement(np.asarray(values), target[measure])
        cell["tau"].append(tau)
        cell["rmse"].append(rmse)
        if lo is not None and hi is not None:
            cell["coverage"].append(float(np.mean((lo <= target[measure]) & (target[measure] <= hi))))
            cell["width"].append(float(np.mean(hi - lo)))

    plain = ir_incomplete.evaluate(prepared, Qrels.from_any(round1), measures)
    for m in measures:
        record("plain (round-1 qrels)", m, grid(plain, names, m, topics).mean(axis=1))
    boot_pool_run = {}
    for m, (pool_run, _) in MEASURES.items():
        found = boot_intervals(runs, prepared, round1, pool_run)
        boot_pool_run[m] = found
        if found is not None:
            record("Boot(pool+run)", m, *found)
    with_predicted = all(available(p) for _, p in MEASURES.values()) and takes("predictions")

    kappas, kappas_all, figure_data = [], [], {}
    for repeat in range(args.repeats):
        labels = simulate_labels(complete, CONFUSION, seed=repeat, docs=docs)
        kappas.append(judged_kappa(labels, complete))
        kappas_all.append(cohen_kappa(labels["human"], labels["relevance"]))
        predictions = labels[["query_id", "doc_id", "relevance"]]  # the human grades stay hidden
        merged = merged_qrels(round1, predictions)
        scored = ir_incomplete.evaluate(prepared, Qrels.from_any(merged), measures)
        rng = np.random.default_rng([2024, repeat])
        labelled = sorted(rng.choice(len(topics), size=args.labelled, replace=False).tolist())
        others = [t for t in range(len(topics)) if t not in labelled]
        iid_l = rng.integers(0, len(topics), size=args.labelled)
        iid_u = rng.integers(0, len(topics), size=len(topics) - args.labelled)
        for m in measures:
            yhat = grid(scored, names, m, topics)
            record("predictions as qrels", m, yhat.mean(axis=1))
            for label, lam in (("PPI", 1.0), ("PPI++", None), ("classical, labelled topics only", 0.0)):
                est = ppi_mean(y[m][:, labelled], yhat[:, labelled], yhat[:, others], alpha=ALPHA, lam=lam)
                record(label, m, est.value, est.lo, est.hi)
                if repeat == 0 and label == "PPI":
                    figure_data[m] = (est, yhat.mean(axis=1))
                # PPI's own assumption: labelled and unlabelled topics drawn i.i.d. from the 30 topics
                est = ppi_mean(y[m][:, iid_l], yhat[:, iid_l], yhat[:, iid_u], alpha=ALPHA, lam=lam)
                record(f"{label}, i.i.d. topics", m, est.value, est.lo, est.hi)
        if repeat == 0:  # the public function gives the same numbers as the arrays above
            labelled_ids = [topics[t] for t in labelled]
            check = ppi_evaluate(prepared, complete[complete["query_id"].isin(labelled_ids)], merged, measures)
            for m in measures:
                ours = check[check["measure"] == repr(ir_incomplete.parse(m))]
                if not np.allclose(ours["value"].to_numpy(), figure_data[m][0].value, rtol=0, atol=1e-12):
                    raise SystemExit("ppi_evaluate and ppi_mean disagree")
        if with_predicted and (args.boot_repeats is None or repeat < args.boot_repeats):
            for m, (_, boot_predicted) in MEASURES.items():
                found = boot_intervals(runs, prepared, round1, boot_predicted, predictions=predictions)
                if found is not None:
                    record("Boot(predicted)", m, *found)
        if (repeat + 1) % 50 == 0:
            print(f"  {repeat + 1} repeats, {time.perf_counter() - started:.0f} s")

    share = np.bincount(labels.merge(complete[["query_id", "doc_id"]])["human"], minlength=3)
    print(
        f"labeler: Cohen's kappa on the documents the complete qrels judge {np.mean(kappas):.3f} "
        f"(expected {expected_kappa(CONFUSION, share):.3f}), on all labelled documents {np.mean(kappas_all):.3f}; "
        f"{args.repeats} repeats; PPI: {args.labelled} labelled topics of {len(topics)}"
    )
    order = [
        "plain (round-1 qrels)",
        "predictions as qrels",
        "Boot(pool+run)",
        "Boot(predicted)",
        "PPI",
        "PPI++",
        "classical, labelled topics only",
        "PPI, i.i.d. topics",
        "PPI++, i.i.d. topics",
        "classical, labelled topics only, i.i.d. topics",
    ]
    table = []
    for estimator in order:
        line = {"estimator": estimator}
        for m in measures:
            cell = rows.get((estimator, m))
            if cell is None:
                line.update({f"{m} tau": "n/a", f"{m} RMSE": "n/a", f"{m} cover": "n/a", f"{m} width": "n/a"})
                continue
            line[f"{m} tau"] = f"{np.mean(cell['tau']):.3f}"
            line[f"{m} RMSE"] = f"{np.mean(cell['rmse']):.4f}"
            line[f"{m} cover"] = f"{np.mean(cell['coverage']):.3f}" if cell["coverage"] else "-"
            line[f"{m} width"] = f"{np.mean(cell['width']):.4f}" if cell["width"] else "-"
        table.append(line)
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(pd.DataFrame(table).to_string(index=False))
    for m in measures:
        print(f"complete {m}: mean over runs {target[m].mean():.4f}")
    if not with_predicted:
        print("Boot(predicted): n/a (this version of ir_incomplete has no prior=predicted / evaluate(predictions=))")
    if boot_pool_run["AP@100"] is None:
        print("Boot(pool+run) AP@100: n/a (this version of ir_incomplete has no BootAP)")
    if args.png:
        path = (ROOT / "docs" if args.docs else args.out) / FIGURE
        draw(figure_data, plain, names, topics, target, path)
    print(f"({time.perf_counter() - started:.0f} s in all)")
    return 0


def draw(figure_data, plain, names, topics, target, path: Path) -> None:
    """The 25 best runs on complete judgments: PPI's 90 % interval (repeat 0), predictions as qrels, plain
    round-1 value and the complete value, for each measure."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10.0, 6.5), layout="constrained")
    for i, m in enumerate(MEASURES):
        ax = fig.add_subplot(1, 2, i + 1)
        best = np.argsort(-target[m], kind="stable")[:25][::-1]
        est, as_qrels = figure_data[m]
        yy = np.arange(len(best))
        err = np.vstack([est.value[best] - est.lo[best], est.hi[best] - est.value[best]])
        ax.errorbar(est.value[best], yy, xerr=err, fmt="o", ms=4, capsize=2, label="PPI [90 % interval]")
        ax.plot(as_qrels[best], yy, "s", ms=3, color="tab:orange", label="predictions as qrels")
        ax.plot(grid(plain, names, m, topics).mean(axis=1)[best], yy, "^", ms=3, color="tab:gray", label="plain")
        ax.plot(target[m][best], yy, "x", color="black", ms=5, label="complete judgments")
        ax.set_yticks(yy)
        ax.set_yticklabels([names[j] for j in best], fontsize=6)
        ax.set_xlabel(m + (" (log scale: plain is far off)" if m.startswith("AP") else ""))
        if m.startswith("AP"):
            from matplotlib.ticker import NullFormatter

            ax.set_xscale("log")
            ax.set_xticks([0.02, 0.05, 0.1, 0.2], labels=["0.02", "0.05", "0.1", "0.2"])
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.grid(axis="x", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle("TREC-COVID round 1, simulated labeler (kappa about 0.42): 25 best runs", fontsize=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    print(f"saved {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    sys.exit(main())
