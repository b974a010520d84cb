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
* Boot(pool+run) — ``BootNDCG@10`` / ``BootAP@100`` on the round-1 qrels (the value: the mean over
  topics of the per-query most likely value, ``stat=mode``; interval: percentiles 5 and 95 of the
  bootstrap distribution of the mean). It uses no labels, so it is computed once;
* Boot(predicted) — ``BootNDCG(prior=predicted)@10`` / ``BootAP(prior=predicted)@100`` with the predicted
  labels (``evaluate(..., predictions=..., interval=0.9)``): the prior of an unjudged document predicted
  ℓ is the distribution of the human grades of the round-1 judged documents of its query also predicted
  ℓ, and every predicted unjudged document draws a grade, so AP's R sees them;
* PPI / PPI++ — :func:`ir_incomplete.ppi.ppi_evaluate` (ppi_py's estimator and CLT interval). PPI sees
  complete judgments for some topics, which the other estimators never do; the classical interval from
  those topics alone (λ = 0) is reported beside it, to show what the predictions add. Two designs:

  - *split* (a test collection of 30 topics, 10 of them labelled): in each repeat 10 of the 30 topics,
    drawn without replacement, get complete judgments (Y = the measure on the complete qrels), the
    other 20 get none; Ŷ = "predictions as qrels" on every topic. The target is the mean over these 30
    topics. PPI's interval is built for the mean of an (infinite) population that labelled and unlabelled
    topics are drawn from independently; for a finite population that the labelled and unlabelled topics
    exhaust it is conservative. The honest interval there is the survey-sampling one: the difference
    estimator of Cassel, Särndal & Wretman (1976) — PPI's estimator with the predictions averaged over all
    30 topics — with the finite-population correction (:func:`difference_fpc`), row "difference
    estimator + FPC";
  - *i.i.d.* (PPI's own assumption): the 30 topics are the population; 10 labelled and 20 unlabelled
    topics are drawn from it independently, with replacement; the target, the population mean, is again
    the mean over the 30 topics under complete judgments. A second table repeats this design with 20, 40
    and 80 labelled topics (and twice as many unlabelled ones), to separate a small-sample shortfall of
    the normal interval from a defect.

For each estimator: Kendall τ between the run ranking it gives and the complete one, RMSE and bias (mean
signed error) of the run means (averaged over repeats where the estimator is random) and, for the interval
estimators, the share of (run, repeat) pairs whose complete value lies inside the 90 % interval with its
Monte Carlo standard error over repeats (runs within a repeat are correlated, so the error is taken
between repeats), and the mean width.

Figure: the 25 best runs (on complete judgments) with PPI's and Boot(predicted)'s interval of one repeat,
predictions-as-qrels, plain and the complete value: ``predicted_labels_covid.png`` in the current folder,
in ``--out DIR``, or ``docs/`` with ``--docs``.

Run from the project root (the data live in ``../shared/data``, or pass their folder). The defaults — 40
repeats, Boot(predicted) on the first of them (it draws a grade for each of the ~3800 predicted
unjudged documents per topic in each of 1000 replicates: 8–15 s a repeat) — take 80 s of CPU time
(measured: 112 s on 2 busy cores). ``--full`` runs the manual's tables (docs/measured.rst), 200 repeats and
Boot(predicted) on 20 of them: 251 s on 2 shared cores, 455 s when they are busy. ``--quick`` (20
runs, 3 repeats, no figure) takes a few seconds. A progress bar over the repeats shows on a terminal
(``--progress``/``--no-progress``). ``--confusion`` sets another labeler (rows separated by ``/``)::

    python examples/predicted_labels_covid.py [DATA_FOLDER] [--quick | --full] [--repeats 40]
                                              [--boot-repeats 1] [--labelled 10] [--runs N]
                                              [--confusion 0.85,0.1,0.05/...] [--out DIR | --docs]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from statistics import NormalDist

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
SWEEP = (20, 40, 80)  # labelled topics of the i.i.d. design's second table (unlabelled: twice as many)
PPI_VARIANTS = (("PPI", 1.0), ("PPI++", None), ("classical, labelled topics only", 0.0))


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


def grid(table: pd.DataFrame, runs: list[str], measure: str, topics: list[str]) -> np.ndarray:
    """``values[run, topic]`` of one measure from a per-query ``evaluate`` table."""
    name = repr(ir_incomplete.parse(measure))
    rows = table[table["measure"] == name].set_index(["run", "query_id"])["value"]
    return rows.reindex(pd.MultiIndex.from_product([runs, topics])).to_numpy().reshape(len(runs), len(topics))


def boot_intervals(
    prepared, names: list[str], qrels, measures: list[str], predictions=None, progress: bool | None = None
) -> dict[str, tuple]:
    """``{measure: (value, lo, hi)}`` (arrays in run order) of bootstrap measures from one ``evaluate``
    call: the value as ``evaluate`` reports it (the measure's ``stat``), the 90 % interval from the
    percentiles of its replicate means."""
    extra = {} if predictions is None else {"predictions": predictions}
    table = ir_incomplete.evaluate(
        prepared, qrels, measures, per_query=False, interval=1 - ALPHA, progress=progress, **extra
    )
    out = {}
    for measure in measures:
        rows = table[table["measure"] == repr(ir_incomplete.parse(measure))].set_index("run").reindex(names)
        out[measure] = (rows["value"].to_numpy(), rows["lo"].to_numpy(), rows["hi"].to_numpy())
    return out


def difference_fpc(y: np.ndarray, yhat: np.ndarray, yhat_all: np.ndarray, alpha: float = ALPHA):
    """``(value, lo, hi)``: the difference estimator of a finite-population mean (Cassel, Särndal &
    Wretman, Biometrika 63(3), 1976) with its design-based normal interval under simple random sampling
    without replacement of ``n`` labelled among the ``N`` topics, predictions on all ``N`` (last axis)::

        value = m(ŷ over all N) + m(y − ŷ over the n labelled)
        se    = sqrt((1 − n/N) · s²(y − ŷ) / n)          (s²: sample variance, divisor n − 1)

    (Cochran, *Sampling Techniques*, 3rd ed., 1977, Thm 2.2 applied to y − ŷ; 1 − n/N is the
    finite-population correction). Its target is the mean over these N topics."""
    n, big_n = y.shape[-1], yhat_all.shape[-1]
    d = y - yhat
    value = yhat_all.mean(axis=-1) + d.mean(axis=-1)
    se = np.sqrt((1.0 - n / big_n) * d.var(axis=-1, ddof=1) / n)
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    return value, value - z * se, value + z * se


def merged_qrels(round1: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """Round-1 human judgments plus the predicted grade of every labelled document they do not judge."""
    judged = pd.MultiIndex.from_frame(round1[["query_id", "doc_id"]])
    fresh = ~pd.MultiIndex.from_frame(labels[["query_id", "doc_id"]]).isin(judged)
    extra = labels.loc[fresh, ["query_id", "doc_id", "relevance"]]
    return pd.concat([round1[["query_id", "doc_id", "relevance"]], extra], ignore_index=True)


def agreement(values: np.ndarray, reference: np.ndarray) -> tuple[float, float, float]:
    """Kendall τ, RMSE and bias (mean signed error) of run means against the reference run means."""
    error = values - reference
    return float(kendalltau(values, reference).statistic), float(np.sqrt(np.mean(error**2))), float(error.mean())


class Tally:
    """Per (estimator, measure): τ, RMSE, bias, coverage and width of every repeat it was computed in."""

    FIELDS = ("tau", "rmse", "bias", "coverage", "width")

    def __init__(self, target: dict[str, np.ndarray]):
        self.target = target
        self.rows: dict[tuple[str, str], dict[str, list[float]]] = {}

    def record(self, estimator: str, measure: str, values, lo=None, hi=None) -> None:
        cell = self.rows.setdefault((estimator, measure), {name: [] for name in self.FIELDS})
        truth = self.target[measure]
        for name, number in zip(("tau", "rmse", "bias"), agreement(np.asarray(values), truth), strict=True):
            cell[name].append(number)
        if lo is not None and hi is not None:
            cell["coverage"].append(float(np.mean((lo <= truth) & (truth <= hi))))
            cell["width"].append(float(np.mean(hi - lo)))

    def table(self, order: list[str], measures: list[str]) -> pd.DataFrame:
        lines = []
        for estimator in order:
            line: dict[str, object] = {"estimator": estimator}
            for m in measures:
                cell = self.rows[(estimator, m)]
                repeats = len(cell["tau"])
                line["repeats"] = repeats
                line[f"{m} tau"] = f"{np.mean(cell['tau']):.3f}"
                line[f"{m} RMSE"] = f"{np.mean(cell['rmse']):.4f}"
                line[f"{m} bias"] = f"{np.mean(cell['bias']):+.4f}"
                cover = cell["coverage"]
                se = np.std(cover, ddof=1) / np.sqrt(len(cover)) if len(cover) > 1 else float("nan")
                line[f"{m} cover"] = f"{np.mean(cover):.3f}" if cover else "-"
                line[f"{m} (se)"] = ("-" if np.isnan(se) else f"{se:.3f}") if cover else "-"
                line[f"{m} width"] = f"{np.mean(cell['width']):.4f}" if cell["width"] else "-"
            lines.append(line)
        return pd.DataFrame(lines)


def confusion_matrix(text: str) -> list[list[float]]:
    """``--confusion``: rows separated by ``/``, probabilities by ``,`` (checked by ``simulate_labels``)."""
    try:
        return [[float(p) for p in row.split(",")] for row in text.split("/")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: rows of comma-separated probabilities separated by '/'") from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA, help="folder holding trec-covid-round1/")
    parser.add_argument(
        "--repeats", type=int, default=None, help="seeded repeats of labeler and labelled topics (default 40)"
    )
    parser.add_argument("--labelled", type=int, default=10, help="topics with complete judgments for PPI (of 30)")
    parser.add_argument("--depth", type=int, default=100, help="the labeler grades each run's top DEPTH documents")
    parser.add_argument(
        "--boot-repeats",
        type=int,
        default=None,
        help="Boot(predicted) on the first N repeats only (default 1; about 11 s a repeat, the bulk of the runtime)",
    )
    parser.add_argument("--runs", type=int, default=None, help="only the first N runs")
    parser.add_argument(
        "--full",
        action="store_true",
        help="the manual's tables: 200 repeats, Boot(predicted) on 20 (measured 251 s on 2 shared cores, "
        "455 s when they are busy)",
    )
    parser.add_argument("--quick", action="store_true", help="20 runs, 3 repeats, no figure: a few seconds")
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a bar over the repeats on stderr (default: when stderr is a terminal)",
    )
    parser.add_argument(
        "--confusion",
        type=confusion_matrix,
        default=CONFUSION,
        help="the labeler's confusion matrix, rows (human grade 0, 1, 2) separated by '/', e.g. the default "
        "'0.85,0.10,0.05/0.35,0.35,0.30/0.15,0.30,0.55'",
    )
    parser.add_argument("--out", type=Path, default=Path("."), help="folder for the figure (default: current)")
    parser.add_argument("--docs", action="store_true", help=f"regenerate docs/{FIGURE} of the project")
    parser.add_argument("--no-png", dest="png", action="store_false", help="do not draw the figure")
    args = parser.parse_args(argv)
    repeats, boot_repeats, runs_kept = (200, 20, None) if args.full else (3, 1, 20) if args.quick else (40, 1, None)
    args.repeats = repeats if args.repeats is None else args.repeats
    args.boot_repeats = boot_repeats if args.boot_repeats is None else args.boot_repeats
    args.runs = runs_kept if args.runs is None else args.runs
    args.png = args.png and not args.quick
    if args.repeats < 1:
        raise SystemExit("--repeats must be >= 1")
    if args.boot_repeats < 1:
        raise SystemExit("--boot-repeats must be >= 1")
    started = time.perf_counter()
    runs, round1, complete = load(args.data)
    if args.runs is not None:
        runs = dict(list(runs.items())[: args.runs])
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
    boot_repeats = min(args.boot_repeats, args.repeats)
    print(
        f"{len(names)} runs, {len(topics)} topics; round-1 qrels {len(round1)} judgments, complete {len(complete)}; "
        f"the labeler grades {len(docs)} documents (top {args.depth} of every run)",
        flush=True,
    )
    tally = Tally(target)
    sweep = Tally(target)

    plain = ir_incomplete.evaluate(prepared, Qrels.from_any(round1), measures)
    for m in measures:
        tally.record("plain (round-1 qrels)", m, grid(plain, names, m, topics).mean(axis=1))
    found = boot_intervals(prepared, names, round1, [pool_run for pool_run, _ in MEASURES.values()])
    for m, (pool_run, _) in MEASURES.items():
        tally.record("Boot(pool+run)", m, *found[pool_run])
    boot_time = 0.0

    kappas, kappas_all, figure_data = [], [], {}
    bar = _bar(args.repeats, args.progress)
    for repeat in range(args.repeats):
        labels = simulate_labels(complete, args.confusion, seed=repeat, docs=docs)
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
            tally.record("predictions as qrels", m, yhat.mean(axis=1))
            for label, lam in PPI_VARIANTS:
                est = ppi_mean(y[m][:, labelled], yhat[:, labelled], yhat[:, others], alpha=ALPHA, lam=lam)
                tally.record(label, m, est.value, est.lo, est.hi)
                if repeat == 0 and label == "PPI":
                    figure_data[m] = {"PPI": est, "as qrels": yhat.mean(axis=1)}
                # PPI's own assumption: labelled and unlabelled topics drawn i.i.d. from the 30 topics
                est = ppi_mean(y[m][:, iid_l], yhat[:, iid_l], yhat[:, iid_u], alpha=ALPHA, lam=lam)
                tally.record(f"{label}, i.i.d. topics", m, est.value, est.lo, est.hi)
            tally.record("difference estimator + FPC", m, *difference_fpc(y[m][:, labelled], yhat[:, labelled], yhat))
            for n in SWEEP:  # the i.i.d. design with more labelled topics (its own random stream)
                pick = np.random.default_rng([2025, repeat, n])
                lab, unl = pick.integers(0, len(topics), size=n), pick.integers(0, len(topics), size=2 * n)
                for label, lam in PPI_VARIANTS[::2]:
                    est = ppi_mean(y[m][:, lab], yhat[:, lab], yhat[:, unl], alpha=ALPHA, lam=lam)
                    sweep.record(f"{label}, n = {n}", m, est.value, est.lo, est.hi)
        if repeat == 0:  # the public function gives the same numbers as the arrays above
            labelled_ids = [topics[t] for t in labelled]
            check = ppi_evaluate(prepared, complete[complete["query_id"].isin(labelled_ids)], merged, measures)
            for m in measures:
                ours = check[check["measure"] == repr(ir_incomplete.parse(m))].set_index("run").reindex(names)
                if not np.allclose(ours["value"].to_numpy(), figure_data[m]["PPI"].value, rtol=0, atol=1e-12):
                    raise SystemExit("ppi_evaluate and ppi_mean disagree")
        if repeat < boot_repeats:
            tick = time.perf_counter()
            wanted = [boot_predicted for _, boot_predicted in MEASURES.values()]
            found = boot_intervals(prepared, names, round1, wanted, predictions=predictions, progress=False)
            boot_time += time.perf_counter() - tick
            for m, (_, boot_predicted) in MEASURES.items():
                tally.record("Boot(predicted)", m, *found[boot_predicted])
                if repeat == 0:
                    figure_data[m]["Boot(predicted)"] = found[boot_predicted]
        bar.update(1)
    bar.close()

    share = np.bincount(labels.merge(complete[["query_id", "doc_id"]])["human"], minlength=3)
    print(
        f"labeler: Cohen's kappa on the documents the complete qrels judge {np.mean(kappas):.3f} "
        f"(expected {expected_kappa(args.confusion, share):.3f}), on all labelled documents {np.mean(kappas_all):.3f}; "
        f"{args.repeats} repeats (Boot(predicted): the first {boot_repeats}, {boot_time / boot_repeats:.1f} s each; "
        f"Boot(pool+run): once, it uses no labels); PPI: {args.labelled} labelled topics of {len(topics)}"
    )
    order = [
        "plain (round-1 qrels)",
        "predictions as qrels",
        "Boot(pool+run)",
        "Boot(predicted)",
        "PPI",
        "PPI++",
        "classical, labelled topics only",
        "difference estimator + FPC",
        "PPI, i.i.d. topics",
        "PPI++, i.i.d. topics",
        "classical, labelled topics only, i.i.d. topics",
    ]
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(tally.table(order, measures).to_string(index=False))
        print(f"i.i.d. design, n labelled and 2n unlabelled topics drawn with replacement from the {len(topics)}:")
        labels_sweep = [f"{label}, n = {n}" for n in SWEEP for label, _ in PPI_VARIANTS[::2]]
        print(sweep.table(labels_sweep, measures).to_string(index=False))
    for m in measures:
        print(f"complete {m}: mean over runs {target[m].mean():.4f}")
    if args.png:
        path = (ROOT / "docs" if args.docs else args.out) / FIGURE
        draw(figure_data, plain, names, topics, target, path, float(kappas[0]))
    print(f"({time.perf_counter() - started:.0f} s in all)")
    return 0


def _bar(total: int, progress: bool | None):
    """A tqdm bar over the repeats on stderr: on a terminal by default, or as ``--progress`` says."""
    from tqdm.auto import tqdm

    return tqdm(
        total=total, desc="repeats", unit="repeat", file=sys.stderr, disable=None if progress is None else not progress
    )


def draw(figure_data, plain, names, topics, target, path: Path, kappa: float) -> None:
    """The 25 best runs on complete judgments: PPI's and Boot(predicted)'s 90 % intervals (repeat 0),
    predictions as qrels, plain round-1 value and the complete value, for each measure."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    fig = Figure(figsize=(10.0, 7.0), layout="constrained")
    for i, m in enumerate(MEASURES):
        ax = fig.add_subplot(1, 2, i + 1)
        best = np.argsort(-target[m], kind="stable")[:25][::-1]
        data = figure_data[m]
        yy = np.arange(len(best))
        est = data["PPI"]
        err = np.vstack([est.value[best] - est.lo[best], est.hi[best] - est.value[best]])
        ax.errorbar(est.value[best], yy + 0.2, xerr=err, fmt="o", ms=4, capsize=2, label="PPI [90 % interval]")
        if "Boot(predicted)" in data:
            value, lo, hi = data["Boot(predicted)"]
            err = np.vstack([value[best] - lo[best], hi[best] - value[best]])
            label = "Boot(predicted) [90 % interval]"
            ax.errorbar(value[best], yy - 0.2, xerr=err, fmt="D", ms=3, capsize=2, color="tab:green", label=label)
        ax.plot(data["as qrels"][best], yy, "s", ms=3, color="tab:orange", label="predictions as qrels")
        ax.plot(grid(plain, names, m, topics).mean(axis=1)[best], yy, "^", ms=3, color="tab:gray", label="plain")
        ax.plot(target[m][best], yy, "x", color="black", ms=5, label="complete judgments")
        ax.set_yticks(yy)
        ax.set_yticklabels([names[j] for j in best], fontsize=6)
        ax.set_xlabel(m + (" (log scale: plain is far off)" if m.startswith("AP") else ""))
        if m.startswith("AP"):
            ax.set_xscale("log")
            ax.set_xticks([0.02, 0.05, 0.1, 0.2], labels=["0.02", "0.05", "0.1", "0.2"])
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.grid(axis="x", alpha=0.3)
    handles, labels = fig.axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=7)
    fig.suptitle(f"TREC-COVID round 1, simulated labeler (repeat 0: kappa {kappa:.2f}): 25 best runs", fontsize=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    print(f"saved {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    sys.exit(main())
