"""``ir_incomplete sample`` and ``ir_incomplete estimate``: the design file is what
:func:`ir_incomplete.judging.sample` returns (settings included), the same seed writes the same bytes,
the printed table is :func:`ir_incomplete.estimate`'s, and bad input is one line with exit code 2. Also
the note that the bootstrapped measures' intervals are not error bars (``--interval``'s help, stderr)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ir_incomplete
from ir_incomplete.cli import main
from ir_incomplete.estimation import read_design
from ir_incomplete.judging import sample

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ("1", "2", "3")
DOCS = [f"d{i}" for i in range(30)]


def write_collection(root: Path, n_runs: int, seed: int) -> dict:
    """``n_runs`` runs of 20 documents on three queries (a directory ``runs``), complete qrels of every document
    (``full``), the qrels of the first five documents of each query (``some``: judgments made already) and
    predicted grades (``labels``) under ``root``; ``grades`` the complete judgments."""
    rng = np.random.default_rng(seed)
    folder = root / "runs"
    folder.mkdir()
    for r in range(n_runs):
        lines = []
        for q in QUERIES:
            for i, d in enumerate(rng.permutation(DOCS)[:20]):
                lines.append(f"{q} Q0 {d} {i + 1} {50 - i} run{r}")
        (folder / f"run{r}").write_text("\n".join(lines) + "\n")
    grades = {(q, d): int(rng.choice([0, 0, 1, 2])) for q in QUERIES for d in DOCS}
    full = root / "full.qrels"
    full.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in grades.items()))
    some = root / "some.qrels"
    some.write_text("".join(f"{q} 0 {d} {grades[(q, d)]}\n" for q in QUERIES for d in DOCS[:5]))
    labels = root / "labels.qrels"
    labels.write_text("".join(f"{q} 0 {d} {min(g + int(rng.random() < 0.3), 2)}\n" for (q, d), g in grades.items()))
    paths = {"runs": str(folder), "full": str(full), "some": str(some), "labels": str(labels)}
    return {"root": root, **paths, "grades": grades}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Four runs (see :func:`write_collection`)."""
    made = write_collection(tmp_path_factory.mktemp("design"), 4, 7)
    return {k: v for k, v in made.items() if k != "grades"}


def _sample_file(files, path, *args) -> Path:
    assert main(["sample", files["runs"], "--depth", "10", *args, "-o", str(path)]) == 0
    return path


def _assert_design(path, expected: pd.DataFrame) -> None:
    got = read_design(str(path))
    pd.testing.assert_frame_equal(got, read_design(expected), check_exact=True)
    pd.testing.assert_frame_equal(got, expected, check_exact=True, check_dtype=False)  # ids: str vs object
    assert got.attrs == expected.attrs
    assert got.attrs["seed"] == expected.attrs["seed"] and got.attrs["runs"] == ["run0", "run1", "run2", "run3"]


# ---------------------------------------------------------------------------------------------------
# sample
# ---------------------------------------------------------------------------------------------------
def test_design_file_reads_back_as_the_sample_with_its_settings(files, tmp_path):
    args = ["--budget", "25", "--seed", "5", "--qrels", files["some"], "--certain", "4", "--prior", "rrf"]
    path = _sample_file(files, tmp_path / "design.tsv", *args, "--uniform", "0.2", "--predictions", files["labels"])
    expected = sample(
        files["runs"],
        25,
        depth=10,
        seed=5,
        qrels=files["some"],
        certain=4,
        prior="rrf",
        uniform=0.2,
        predictions=files["labels"],
    )
    assert len(expected) > 15 + 4  # the qrels pairs, the certain ones and a sample
    _assert_design(path, expected)
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# design {") and '"seed": 5' in lines[0] and '"depth": 10' in lines[0]
    assert lines[1].startswith("# ir_incomplete ") and " sample " in lines[1] and "-o" not in lines[1].split()
    assert lines[2] == "query_id\tdoc_id\tpi\tstratum\tround"
    # a second round from the first one and its judgments
    second = _sample_file(
        files, tmp_path / "round2.tsv", "--budget", "10", "--previous", str(path), "--judgments", files["full"]
    )
    expected2 = sample(files["runs"], 10, depth=10, previous=read_design(str(path)), judgments=files["full"])
    _assert_design(second, expected2)
    assert expected2.attrs["round"] == 2 and set(expected2["round"]) == {1, 2}


def test_same_seed_writes_the_same_bytes_to_a_file_and_to_stdout(files, tmp_path, capsys):
    one = _sample_file(files, tmp_path / "a.tsv", "--budget", "20", "--seed", "3").read_bytes()
    two = _sample_file(files, tmp_path / "b.tsv", "--budget", "20", "--seed", "3").read_bytes()
    capsys.readouterr()
    assert one == two
    assert main(["sample", files["runs"], "--depth", "10", "--budget", "20", "--seed", "3"]) == 0
    assert capsys.readouterr().out.encode() == one
    other = _sample_file(files, tmp_path / "c.tsv", "--budget", "20", "--seed", "4").read_bytes()
    assert other != one
    # the runs may also be given with --runs, as to 'pool': the same design (the arguments line differs)
    assert main(["sample", "--runs", files["runs"], "--depth", "10", "--budget", "20", "--seed", "3"]) == 0
    lines, ours = capsys.readouterr().out.splitlines(), one.decode().splitlines()
    assert lines[1] != ours[1] and lines[:1] + lines[2:] == ours[:1] + ours[2:]


# ---------------------------------------------------------------------------------------------------
# estimate
# ---------------------------------------------------------------------------------------------------
def _read_table(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), sep="\t", dtype={"run": str, "run_a": str, "run_b": str, "query_id": str})


def _assert_table(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    assert list(got.columns) == list(expected.columns)
    for column in expected.columns:
        if expected[column].dtype.kind == "f":
            np.testing.assert_allclose(got[column].to_numpy(), expected[column].to_numpy(), rtol=0, atol=1e-12)
        else:
            assert got[column].tolist() == expected[column].tolist(), column


def test_estimate_prints_the_table_of_estimate(files, tmp_path, capsys):
    design = _sample_file(files, tmp_path / "design.tsv", "--budget", "30", "--seed", "1", "--qrels", files["some"])
    measures = ["AP@10", "nDCG@5", "P@5", "RBP(p=0.8)@10", "R"]
    assert main(["estimate", files["full"], str(design), files["runs"], *measures, "-p", "-1"]) == 0  # every digit
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == "run\tmeasure\tvalue\tlo\thi\tse\tdf\toutside\tseen\tdelta\treliable"
    assert err == (  # the default control variate is not the Stat* measures': said on stderr, one line
        "ir_incomplete estimate: note: control variate 'model' (the default; --control none gives StatAP's "
        "Horvitz-Thompson values)\n"
    )
    expected = ir_incomplete.estimate(files["runs"], files["full"], str(design), measures)
    assert expected["se"].gt(0).any()
    _assert_table(_read_table(out), expected)
    # -m, pairs, another level, labels as a control variate
    argv = ["estimate", files["full"], str(design), files["runs"], "-m", "AP@10", "-m", "nDCG@5"]
    assert main([*argv, "--pairs", "--interval", "0.8", "--predictions", files["labels"], "-p", "-1"]) == 0
    two = ["AP@10", "nDCG@5"]
    expected = ir_incomplete.estimate(
        files["runs"], files["full"], str(design), two, pairs=True, interval=0.8, predictions=files["labels"]
    )
    table = _read_table(capsys.readouterr().out)
    assert table["significant"].dtype == bool and len(table) == 2 * 6
    _assert_table(table, expected)
    assert main([*argv, "--per-query", "--control", "model", "-p", "-1"]) == 0
    expected = ir_incomplete.estimate(
        files["runs"], files["full"], str(design), ["AP@10", "nDCG@5"], per_query=True, control="model"
    )
    _assert_table(_read_table(capsys.readouterr().out), expected)
    # -p rounds, as the evaluation command's
    assert main([*argv, "-p", "3"]) == 0
    first = capsys.readouterr().out.splitlines()[1].split("\t")
    assert re.fullmatch(r"\d\.\d{3}", first[2])


# ---------------------------------------------------------------------------------------------------
# errors: one line, exit code 2
# ---------------------------------------------------------------------------------------------------
def _error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.splitlines()[-1]
    assert last.startswith("ir_incomplete: error: ")
    return last


@pytest.mark.parametrize(
    "args, message",
    [
        (["--budget", "3", "--certain", "5"], "--budget 3 is below --certain 5"),
        (["--budget", "0"], "--budget 0 is not valid; expected a number of judgments >= 1"),
        (["--budget", "5", "--prior", "bm25"], "argument --prior: invalid choice: 'bm25' (choose from "),
        (["--budget", "5", "--uniform", "1.5"], "--uniform 1.5 is not a share in [0, 1]"),
        (["--budget", "5", "--seed", "-1"], "--seed -1 is not valid"),
        (["--budget", "5", "--previous", "x.tsv"], "--previous DESIGN and --judgments QRELS go together"),
        (["--budget", "5", "--judgments", "x.qrels"], "--previous DESIGN and --judgments QRELS go together"),
        (["--budget", "5", "--qrels", "missing.qrels"], "qrels file 'missing.qrels' does not exist"),
        (["--budget", "5", "--depth", "0"], "--depth 0 is not valid"),
    ],
)
def test_sample_errors(files, capsys, args, message):
    assert message in _error(capsys, ["sample", files["runs"], *args])


def test_sample_errors_of_files(files, tmp_path, capsys):
    assert "no runs given" in _error(capsys, ["sample", "--budget", "5"])
    missing = str(tmp_path / "nothing")
    assert f"run file or directory {missing!r} does not exist" in _error(capsys, ["sample", missing, "--budget", "5"])
    bad = tmp_path / "bad.tsv"
    bad.write_text("query_id\tdoc_id\tpi\n1\td0\t0\n")
    last = _error(
        capsys, ["sample", files["runs"], "--budget", "5", "--previous", str(bad), "--judgments", files["full"]]
    )
    assert str(bad) in last and "pi must be in (0, 1]" in last


def _design_with(tmp_path, rows: str, name="design.tsv") -> str:
    path = tmp_path / name
    path.write_text('# design {"depth": 10, "runs": ["run0", "run1", "run2", "run3"]}\nquery_id\tdoc_id\tpi\n' + rows)
    return str(path)


def test_estimate_errors(files, tmp_path, capsys):
    base = ["estimate", files["full"]]
    runs_and_measure = [files["runs"], "AP@10"]
    design = _sample_file(files, tmp_path / "good.tsv", "--budget", "20", "--seed", "2")
    # an unreadable design: missing, not a design, a settings line that is not JSON
    missing = str(tmp_path / "missing.tsv")
    assert f"design file {missing!r} does not exist" in _error(capsys, [*base, missing, *runs_and_measure])
    junk = tmp_path / "junk.tsv"
    junk.write_text("hello\nworld\n")
    last = _error(capsys, [*base, str(junk), *runs_and_measure])
    assert f"cannot read design file {str(junk)!r}" in last and "no 'query_id' column" in last
    broken = tmp_path / "broken.tsv"
    broken.write_text("# design {depth: 10\nquery_id\tdoc_id\tpi\n1\td0\t1\n")
    assert "line 1: the settings line is not JSON" in _error(capsys, [*base, str(broken), *runs_and_measure])
    # pi outside (0, 1]
    for pi in ("0", "1.5", "-0.2", "nan"):
        last = _error(capsys, [*base, _design_with(tmp_path, f"1\td0\t1\n1\td1\t{pi}\n"), *runs_and_measure])
        assert "design.tsv' line 4: pi=" in last and "pi must be in (0, 1]" in last
    # a design pair without a judgment
    partial = tmp_path / "partial.qrels"
    lines = Path(files["full"]).read_text().splitlines(keepends=True)
    partial.write_text("".join(line for line in lines if not line.startswith("2 ")))
    last = _error(capsys, ["estimate", str(partial), str(design), *runs_and_measure])
    assert re.search(r"the design's pair \(2, d\d+\) has no judgment", last)
    # measures, levels and options
    assert "choices: AP@k, nDCG@k, P@k" in _error(capsys, [*base, str(design), files["runs"], "ERR@10"])
    assert "cut-off 20 is deeper than the design's depth 10" in _error(
        capsys, [*base, str(design), files["runs"], "AP@20"]
    )
    assert "no measures given" in _error(capsys, [*base, str(design), files["runs"]])
    assert "--interval must be strictly between 0 and 1" in _error(
        capsys, [*base, str(design), *runs_and_measure, "--interval", "1.5"]
    )
    assert "--pairs and --per-query exclude each other" in _error(
        capsys, [*base, str(design), *runs_and_measure, "--pairs", "--per-query"]
    )
    assert "invalid choice: 'both'" in _error(capsys, [*base, str(design), *runs_and_measure, "--control", "both"])
    assert "control='labels' needs predictions=" in _error(
        capsys, [*base, str(design), *runs_and_measure, "--control", "labels"]
    )
    # the design's runs must all be given
    last = _error(capsys, [*base, str(design), str(Path(files["runs"]) / "run0"), "AP@10"])
    assert "the design was drawn from run 'run1'" in last


def test_help_of_both_exits_0(capsys):
    for command in ("sample", "estimate"):
        assert main([command, "--help"]) == 0
        out, err = capsys.readouterr()
        assert out.startswith(f"usage: ir_incomplete {command}") and err == ""


# ---------------------------------------------------------------------------------------------------
# the bootstrapped measures' intervals are not error bars
# ---------------------------------------------------------------------------------------------------
def _readme_coverage() -> tuple[str, ...]:
    """The manual's measured coverage of 90 % Boot intervals on TREC-COVID (docs/measured.rst, once the
    README's table), as whole percents: BootNDCG@10 and BootAP@100 with the pool+run prior, then with
    prior=predicted."""
    page = (ROOT / "docs" / "measured.rst").read_text(encoding="utf-8")
    lines = [line[3:] for line in page.splitlines() if line.startswith("   ") and not line.startswith("   :")]
    rows = {cells[0]: [cell.strip() for cell in cells[1:]] for cells in csv.reader(lines) if cells}
    pool_run = rows["``BootNDCG@10`` / ``BootAP@100`` (pool+run)"]
    predicted = rows["the same with ``prior=predicted``"]
    return tuple(f"{round(float(r[i]) * 100)}%" for r in (pool_run, predicted) for i in (3, 8))


def test_interval_help_says_what_the_bootstrap_intervals_are(capsys):
    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    ndcg, ap, ndcg_predicted, ap_predicted = _readme_coverage()
    assert (ndcg, ap, ndcg_predicted, ap_predicted) == ("12%", "0%", "27%", "16%")
    assert "not error bars for the value on complete judgments" in text
    assert f"contained the complete-judgment value for {ndcg} / {ap} of the runs with the pool+run prior" in text
    assert f"({ndcg_predicted} / {ap_predicted} with prior=predicted)" in text
    assert "'ir_incomplete sample' and 'ir_incomplete estimate'" in text


def test_boot_intervals_come_with_the_note_on_stderr(files, capsys):
    run = str(Path(files["runs"]) / "run0")
    assert main([files["some"], run, "BootNDCG(b=20)@10", "P@5", "--interval", "0.9"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 2 and not out.startswith("#")  # stdout stays the table
    assert err.count("\n") == 1 and err.startswith("ir_incomplete: note: the intervals of bootstrapped measures")
    assert "for 12% / 0% of the runs" in err
    for argv in ([files["some"], run, "P@5", "--interval", "0.9"], [files["some"], run, "BootNDCG(b=20)@10"]):
        assert main(argv) == 0
        assert capsys.readouterr().err == ""
