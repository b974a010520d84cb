#!/usr/bin/env python
"""Command line, end to end, from files: ``ir_incomplete`` against trec_eval 10.0 and the ``ir_measures``
command on the scale-M run file of ``bench.py`` (7,000 queries × 1,000 documents, a 325 MB TREC run
file) and infAP, with qrels of several shapes (:data:`SHAPES`: every query judged, queries without
judgments, judged documents spread over all ranks, qrels lines in any order). See ``benchmarks/README.md``.

    python benchmarks/bench_files.py [--repeats 3] [--measure infAP] [--shapes M,unjudged,...] [--data-dir DIR]
                                     [--markdown]

What it needs: a C compiler and ``make`` (to build trec_eval from ``../shared/tools/trec_eval-10.0.tar.gz``
into a temporary folder; on Debian/Ubuntu ``apt-get install build-essential``), the ``ir_measures``
command on the PATH (it comes with the ``ir_measures`` package), Linux (peak memory from ``wait4``),
about 1 GB of disk in the temporary folder (or ``--data-dir``) and 1.5 GB of memory.

Each repeat runs the three commands one after the other (paired, in a rotating order); the times and
peak resident memory are the medians over the repeats. Each command is forked by a small launcher that
reads its wall time and peak resident memory (``wait4``). ``ir_incomplete``'s bytecode is compiled first,
as a pip install leaves it (``ir_measures`` and pandas come compiled from their wheels). Every command's
infAP must agree with ours to the 4 printed decimals before anything is reported.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import SEED, SHARED, make_scale_m  # noqa: E402

TREC_EVAL_TARBALL = SHARED / "tools" / "trec_eval-10.0.tar.gz"
REPO = Path(__file__).resolve().parents[1]


@dataclass
class Result:
    name: str
    command: list[str]
    seconds: list[float]
    peak_mib: list[float]
    value: float

    @property
    def time(self) -> float:
        return statistics.median(self.seconds)

    @property
    def memory(self) -> float:
        return statistics.median(self.peak_mib)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def build_trec_eval(folder: Path) -> Path:
    """trec_eval 10.0 built from the shared tarball in ``folder``."""
    if not TREC_EVAL_TARBALL.is_file():
        raise SystemExit(f"{TREC_EVAL_TARBALL} is absent: the trec_eval sources live in ../shared/tools")
    for tool in ("make", "cc"):
        if shutil.which(tool) is None:
            raise SystemExit(f"'{tool}' is not installed: building trec_eval needs a C compiler and make")
    with tarfile.open(TREC_EVAL_TARBALL) as archive:
        archive.extractall(folder, filter="data")
    source = next(p for p in folder.iterdir() if p.is_dir() and p.name.startswith("trec_eval"))
    subprocess.run(["make"], cwd=source, check=True, capture_output=True)
    return source / "trec_eval"


#: the qrels of each shape, all against the same scale-M run file (7,000 queries × 1,000 documents)
SHAPES = {
    "M": "every query judged: bench.py's scale-M qrels (~1.1 judgments per query, near the top)",
    "unjudged": "the qrels judge 4,666 of the run's 7,000 queries (scale M's qrels of the others dropped)",
    "spread": "~20 judgments per query (grades 0-2) at ranks spread evenly over 1..1000, 1 in 5 unretrieved",
    "shuffled": "scale M's qrels with the lines in random order (not grouped by query)",
}


def write_scale_m(folder: Path, shapes=tuple(SHAPES)) -> tuple[Path, dict[str, Path]]:
    """The scale-M run of ``bench.py`` as a TREC file (rank = position, scores as ``repr``) and the qrels
    file of each shape of :data:`SHAPES` (reused when present in ``folder``)."""
    run_path = folder / "run.M.txt"
    qrels_paths = {shape: folder / f"qrels.{shape}.txt" for shape in shapes}
    if run_path.is_file() and all(p.is_file() for p in qrels_paths.values()):
        return run_path, qrels_paths
    scale = make_scale_m(1)
    run = scale.runs["run"]
    if not run_path.is_file():
        rank = run.groupby("query_id", sort=False).cumcount() + 1
        lines = pd.DataFrame(
            {"q": run["query_id"], "Q0": "Q0", "d": run["doc_id"], "r": rank, "s": run["score"], "t": "bench"}
        )
        lines.to_csv(run_path, sep=" ", header=False, index=False)
    for shape, path in qrels_paths.items():
        qrels = shape_qrels(shape, scale.qrels, run)
        pd.DataFrame({"q": qrels["query_id"], "i": 0, "d": qrels["doc_id"], "r": qrels["relevance"]}).to_csv(
            path, sep=" ", header=False, index=False
        )
    return run_path, qrels_paths


def shape_qrels(shape: str, qrels: pd.DataFrame, run: pd.DataFrame) -> pd.DataFrame:
    """The qrels of ``shape`` (see :data:`SHAPES`) from scale M's ``qrels`` and ``run`` (fixed seeds)."""
    rng = np.random.default_rng(SEED + 10)
    if shape == "M":
        return qrels
    if shape == "unjudged":
        queries = run["query_id"].unique()
        judged = rng.choice(queries, size=len(queries) * 2 // 3, replace=False)
        return qrels[qrels["query_id"].isin(judged)].reset_index(drop=True)
    if shape == "shuffled":
        return qrels.iloc[rng.permutation(len(qrels))].reset_index(drop=True)
    if shape == "spread":
        queries = run["query_id"].unique()
        depth = len(run) // len(queries)  # scale M: every query has the same number of documents
        per_query = 20
        topic = np.repeat(np.arange(len(queries)), per_query)
        rank = rng.integers(0, depth, size=len(topic))  # evenly over all ranks
        docs = run["doc_id"].to_numpy().reshape(len(queries), depth)[topic, rank]
        unretrieved = rng.random(len(topic)) < 0.2
        docs[unretrieved] = rng.integers(9_000_000, 10_000_000, size=int(unretrieved.sum())).astype(str)
        grade = rng.choice(np.array([0, 1, 2]), size=len(topic), p=[0.6, 0.3, 0.1])
        frame = pd.DataFrame({"query_id": queries[topic], "doc_id": docs, "relevance": grade})
        return frame.drop_duplicates(["query_id", "doc_id"], ignore_index=True)
    raise ValueError(f"unknown shape {shape!r}; choices: {', '.join(SHAPES)}")


# Runs one command and writes "seconds peak_kib exit_code" to the file argv[1]. The command is forked
# from this small launcher, not from the benchmark's own process: Linux carries a process's peak
# resident memory across exec, so a child started straight from a large parent would report the
# parent's peak as its own.
_LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
with open(sys.argv[1], "w") as out:
    out.write(f"{seconds} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def run_once(command: list[str]) -> tuple[float, float, str]:
    """Wall time (s), peak resident memory (MiB, the child's own ``ru_maxrss`` from ``wait4``, Linux) and
    standard output of one run of ``command``, timed by a small launcher that forks it."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile() as report:
        launcher = [sys.executable, "-S", "-c", _LAUNCHER, report.name, *command]
        subprocess.run(launcher, stdout=out, stderr=err, env=_env(), check=False)
        seconds, peak_kib, code = Path(report.name).read_text().split()
        out.seek(0)
        err.seek(0)
        if int(code) != 0:
            raise SystemExit(f"{' '.join(command)} failed ({code}): {err.read().decode()[-500:]}")
        return float(seconds), float(peak_kib) / 1024, out.read().decode()  # ru_maxrss: KiB on Linux


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def value_of(output: str, name: str) -> float:
    """The infAP of a command's output (``measure<TAB>value`` or trec_eval's ``measure all value``)."""
    for line in output.splitlines():
        parts = line.split()
        if parts and parts[0] == name:
            return float(parts[-1])
    raise SystemExit(f"no {name} line in output: {output[:300]!r}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="paired repeats; medians are reported (default 3)")
    parser.add_argument("--measure", default="infAP", help="the measure, in all three tools' syntax (default infAP)")
    parser.add_argument(
        "--shapes",
        default=",".join(SHAPES),
        help=f"comma-separated qrels shapes, each against the same run file (default all: {','.join(SHAPES)})",
    )
    parser.add_argument("--data-dir", type=Path, help="keep the generated files here (reused when present)")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table (for the manual's speed page)")
    args = parser.parse_args(argv)
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown or not shapes:
        raise SystemExit(f"unknown shape {unknown[0] if unknown else args.shapes!r}; choices: {', '.join(SHAPES)}")
    if shutil.which("ir_measures") is None:
        raise SystemExit("the 'ir_measures' command is not on the PATH (pip install ir_measures)")
    with tempfile.TemporaryDirectory(prefix="bench_files_") as tmp:
        tmp_path = Path(tmp)
        log("building trec_eval 10.0 (make)")
        trec_eval = build_trec_eval(tmp_path)
        # as a pip install leaves it (and as any second run finds it when bytecode may be written)
        log("compiling ir_incomplete's bytecode (compileall)")
        compileall.compile_dir(REPO / "ir_incomplete", quiet=1)
        data = args.data_dir or tmp_path
        data.mkdir(parents=True, exist_ok=True)
        log(f"writing the scale-M files in {data} (not timed)")
        run_path, qrels_paths = write_scale_m(data, shapes)
        size = run_path.stat().st_size
        all_ok = True
        for shape in shapes:
            results = time_shape(shape, trec_eval, qrels_paths[shape], run_path, args)
            all_ok &= report(shape, results, size, args)
    return 0 if all_ok else 1


def time_shape(shape: str, trec_eval: Path, qrels_path: Path, run_path: Path, args) -> list[Result]:
    """The three commands on one shape's qrels, ``args.repeats`` times in a rotating order: ours first."""
    commands = {
        "ours: ir_incomplete (python -m ir_incomplete)": [
            sys.executable,
            "-m",
            "ir_incomplete",
            str(qrels_path),
            str(run_path),
            args.measure,
        ],
        "trec_eval 10.0 (C)": [str(trec_eval), "-m", args.measure, str(qrels_path), str(run_path)],
        "ir_measures command": [
            shutil.which("ir_measures") or "ir_measures",
            str(qrels_path),
            str(run_path),
            args.measure,
        ],
    }
    results = {name: Result(name, cmd, [], [], float("nan")) for name, cmd in commands.items()}
    names = list(commands)
    for repeat in range(args.repeats):
        for name in names[repeat % len(names) :] + names[: repeat % len(names)]:
            log(f"{shape}, repeat {repeat + 1}/{args.repeats}: {name}")
            seconds, peak, out = run_once(commands[name])
            result = results[name]
            result.seconds.append(seconds)
            result.peak_mib.append(peak)
            result.value = value_of(out, args.measure)
    return list(results.values())


def report(shape: str, results: list[Result], size: int, args) -> bool:
    """Print one shape's table (or markdown) and goals; whether the three values agree."""
    ours, te, im = results
    ok = all(abs(r.value - ours.value) < 1e-4 + 1e-12 for r in results)
    header = (
        f"shape {shape} ({SHAPES[shape]}): a 7,000,000-line run file ({size / 1e6:.0f} MB), "
        f"{args.measure}; medians of {args.repeats} paired runs; "
        f"values {'agree' if ok else 'DIFFER'} ({', '.join(f'{r.value:.4f}' for r in results)})"
    )
    rows = []
    for r in results:
        if r is ours:
            ratio = ""
        else:
            ratio = f"ours {r.time / ours.time:.1f}× faster, {ours.memory / r.memory:.2f}× the memory"
        rows.append((r.name, r.time, r.memory, ratio))
    if args.markdown:
        print(f"{header}\n\n| command | time (s) | peak memory (MiB) | ours vs it |\n|---|---:|---:|---|")
        for name, t, m, ratio in rows:
            print(f"| {name} | {t:.2f} | {m:,.0f} | {ratio} |")
    else:
        print(header)
        for name, t, m, ratio in rows:
            print(f"{name:<48}{t:>8.2f} s{m:>9,.0f} MiB   {ratio}")
        for r in results:
            times = ", ".join(f"{x:.2f}" for x in r.seconds)
            peaks = ", ".join(f"{x:.0f}" for x in r.peak_mib)
            print(f"  {r.name}: times {times} s; peaks {peaks} MiB")
    print(
        f"goals ({shape}): ≥ 5× trec_eval: {te.time / ours.time:.2f}× "
        f"({'met' if te.time / ours.time >= 5 else 'MISSED'}); "
        f"≥ 10× ir_measures: {im.time / ours.time:.2f}× ({'met' if im.time / ours.time >= 10 else 'MISSED'}); "
        f"memory ≤ trec_eval's: {ours.memory:.0f} vs {te.memory:.0f} MiB "
        f"({'met' if ours.memory <= te.memory else 'MISSED'})\n",
        flush=True,
    )
    return ok


if __name__ == "__main__":
    sys.exit(main())
