"""Timing of the sampled-judgment estimators against NIST's ``sample_eval`` on TREC PM 2017 (abstracts).

``sample_eval`` is a Perl script that evaluates one run per call (reading the sampled qrels each time) and
prints xinfAP, infNDCG, iP@10/15/50/100, interpolated precision and counts. Ours evaluates the same
measures for all 5 runs in one call, from the gzipped files: reading the prels and the runs, ranking and
computing are all timed. "per run" is that time divided by the number of runs.

Usage::

    python benchmarks/bench_sampled.py [--data DATA_FOLDER] [--sample-eval PATH] [--repeats N]

With ``--sample-eval`` (a copy of NIST's ``sample_eval.pl`` with the max result size set to 100, as for
TREC PM) the program is run with ``perl`` on every run (decompressed first; not timed) and its outputs
are compared with ours; without it, the comparison uses its known cost of 0.1–0.45 s per run.
Exit code 1 when ours is not at least 3x faster per run, or when a value check fails.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
from timing import best_of

import ir_incomplete
from ir_incomplete import evaluate

RUNS = ["mugpubbase", "mugpubboost", "mugpubdiseas", "mugpubgene", "mugpubshould"]
MEASURES = ["xinfAP@100", "infNDCG@100", "iP@10", "iP@15", "iP@50", "iP@100"]
MEASURES += [f"iPrec(cutoff=100)@{level / 10}" for level in range(11)]
OFFICIAL = {"infAP": "xinfAP@100", "infNDCG": "infNDCG@100", "iP10": "iP@10", "iP100": "iP@100"}
STATED = (0.1, 0.45)  # seconds per run of sample_eval on this data


def best(func, repeat):
    return best_of(repeat, func)[0]


def ours(pm: Path):
    runs = {name: str(pm / "runs" / f"{name}.gz") for name in RUNS}
    return evaluate(runs, str(pm / "prels.abstracts.2017.txt.gz"), MEASURES, per_query=False, topics="run")


def time_program(pm: Path, script: str, repeat: int, means: pd.Series) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        prels = Path(tmp) / "prels.txt"
        with gzip.open(pm / "prels.abstracts.2017.txt.gz", "rb") as src, open(prels, "wb") as dst:
            shutil.copyfileobj(src, dst)
        for name in RUNS:
            run = Path(tmp) / name
            with gzip.open(pm / "runs" / f"{name}.gz", "rb") as src, open(run, "wb") as dst:
                shutil.copyfileobj(src, dst)
            output = []

            def call(run=run, output=output):
                result = subprocess.run(["perl", script, str(prels), str(run)], capture_output=True, text=True)
                result.check_returncode()
                output[:] = [result.stdout]

            times.append(best(call, repeat))
            for line in output[0].splitlines():
                measure, _, value = line.split()
                if measure in OFFICIAL and abs(means[(name, OFFICIAL[measure])] - float(value)) > 5e-5:
                    sys.exit(
                        f"value check failed: {name} {measure} program {value} ours {means[(name, OFFICIAL[measure])]}"
                    )
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    parser.add_argument("--sample-eval", dest="sample_eval", default=None, help="path of sample_eval.pl")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    pm = Path(args.data) / "trec-pm2017-sampled"
    if not pm.exists():
        print(f"{pm} is absent: nothing to time")
        return 0
    ours(pm)  # warm-up: imports, first calls
    total = best(lambda: ours(pm), args.repeats)
    per_run = total / len(RUNS)
    means = ours(pm).set_index(["run", "measure"])["value"]
    table = pd.read_csv(pm / "nist-output" / "all.tsv", sep="\t")
    diff = max(abs(means[(r, OFFICIAL[m])] - v) for r, m, v in table.itertuples(index=False))
    print(f"ir_incomplete {ir_incomplete.__version__}: {len(RUNS)} runs x 30 topics, {len(MEASURES)} measures")
    print(f"  values: max |ours - official all.tsv| = {diff:.2e} (4 decimals)")
    print(f"  ours, one call for all runs (read + rank + compute): {total:.3f} s, {per_run:.3f} s per run")
    if args.sample_eval:
        times = time_program(pm, args.sample_eval, max(1, args.repeats // 2), means)
        slowest, fastest = max(times), min(times)
        print(f"  sample_eval (perl), one call per run: {fastest:.3f}-{slowest:.3f} s per run (measured)")
    else:
        fastest, slowest = STATED
        print(f"  sample_eval (perl): {fastest:.2f}-{slowest:.2f} s per run (stated; not run here)")
    speedup = fastest / per_run
    print(f"  speed-up per run: {speedup:.1f}x to {slowest / per_run:.1f}x")
    if diff > 5e-5:
        print("value check failed")
        return 1
    return 0 if speedup >= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
