"""Design files and judgments as inputs: a cut-off design file is refused (its rows are counted), ids
such as ``NA`` read back as ids, a stratified design without its settings is refused, designs are
written to a temporary file and renamed (a failed write keeps the earlier file), gzip and a byte order
mark are read, ``write_design`` lives beside ``read_design``, and several judgment files combine."""

from __future__ import annotations

import gzip
import json
import os
import re
import warnings
from collections import namedtuple
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import UNRELIABLE_ALLOWED

import ir_incomplete
from ir_incomplete.cli import main
from ir_incomplete.estimation import read_design, read_judgments, write_design
from ir_incomplete.judging import sample

COVID = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec-covid-round1"
DOCS = [f"d{i}" for i in range(14)]


@pytest.fixture(scope="module")
def setup():
    """Three runs over two queries, the complete qrels of their documents, and a Poisson design."""
    rng = np.random.default_rng(3)
    runs = {}
    for r in range(3):
        rows = [(q, d, 100.0 - i) for q in ("1", "2") for i, d in enumerate(rng.permutation(DOCS)[:10])]
        runs[f"r{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    pairs = pd.concat(runs.values())[["query_id", "doc_id"]].drop_duplicates().reset_index(drop=True)
    qrels = pairs.assign(relevance=rng.integers(0, 3, len(pairs)))
    design = sample(runs, 12, depth=6, seed=0)
    assert len(design) >= 8
    return runs, qrels, design


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _estimate(runs, judgments, design, **kw) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ir_incomplete.estimate(runs, judgments, design, ["P@5", "AP@6", "R"], **kw)


# ---------------------------------------------------------------------------------------------------
# 1. the number of rows, and files cut off
# ---------------------------------------------------------------------------------------------------
def test_write_design_records_its_rows_and_reading_drops_the_record(setup, tmp_path):
    _, _, design = setup
    path = tmp_path / "d.tsv"
    write_design(design, path)
    settings = json.loads(_lines(path)[0][len("# design ") :])
    assert settings["rows"] == len(design)
    assert {k: v for k, v in settings.items() if k not in ("rows", "rows_sha256")} == design.attrs
    back = read_design(str(path))
    assert back.attrs == design.attrs and "rows" not in back.attrs and "rows_sha256" not in back.attrs
    pd.testing.assert_frame_equal(back, read_design(design), check_exact=True)


def test_a_file_cut_at_a_line_end_is_refused_with_both_counts(setup, tmp_path):
    runs, qrels, design = setup
    path = tmp_path / "d.tsv"
    write_design(design, path)
    path.write_text("".join(_lines(path)[:-2]), encoding="utf-8")
    name = re.escape(repr(str(path)))
    message = rf"^design file {name} holds {len(design) - 2} rows, but it was written with {len(design)}"
    with pytest.raises(ValueError, match=message + r" .*cut off"):
        read_design(str(path))
    with pytest.raises(ValueError, match=message):
        _estimate(runs, qrels, str(path))
    # a row added after writing is refused too
    write_design(design, path)
    path.write_text(path.read_text(encoding="utf-8") + "2\tmore\t0.5\tsampled\t1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"holds {len(design) + 1} rows, but it was written with {len(design)}"):
        read_design(str(path))


@pytest.mark.parametrize("cut", [1, 3, 12])
def test_a_file_cut_inside_its_last_line_is_refused_naming_the_line(setup, tmp_path, cut):
    """1: only the newline lost; 3: pi lost digits (or the round); 12: fields lost."""
    _, _, design = setup
    path = tmp_path / "d.tsv"
    write_design(design, path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[:-cut], encoding="utf-8")
    last = len(_lines(path))
    with pytest.raises(ValueError, match=rf"line {last}: the last line does not end with a newline: .*cut off"):
        read_design(str(path))


def test_short_rows_are_refused_naming_the_line_with_or_without_a_record(tmp_path):
    path = tmp_path / "hand.tsv"
    head = '# design {"depth": 5}\nquery_id\tdoc_id\tpi\tstratum\tround\n'
    path.write_text(head + "1\ta\t0.5\tsampled\t1\n1\tb\t0.25\tsampled\n1\tc\t1\tcertain\t1\n")
    with pytest.raises(
        ValueError,
        match=r"line 4: 4 tab-separated fields, but the column line has 5 \(query_id, doc_id, pi, stratum, round\)",
    ):
        read_design(str(path))
    path.write_text(head + "1\ta\t0.5\tsampled\t1\t7\n")
    with pytest.raises(ValueError, match=r"line 3: 6 tab-separated fields, but the column line has 5"):
        read_design(str(path))
    # a hand-made file (no record of its rows) may end without a newline and hold blank lines
    path.write_text(head + "1\ta\t0.5\tsampled\t1\n\n1\tb\t0.25\tsampled\t1")
    frame = read_design(str(path))
    assert frame["doc_id"].tolist() == ["a", "b"] and frame["pi"].tolist() == [0.5, 0.25]
    path.write_text(head + "1\ta\t0.5\tsampled\t1\n\n1\tb\t1.5\tsampled\t1")
    with pytest.raises(ValueError, match=r"line 5: pi=1\.5"):  # file lines, past the blank line
        read_design(str(path))


def test_a_bad_rows_record_is_refused(tmp_path):
    path = tmp_path / "d.tsv"
    path.write_text('# design {"depth": 5, "rows": "2"}\nquery_id\tdoc_id\tpi\n1\ta\t0.5\n1\tb\t1\n')
    with pytest.raises(ValueError, match=r"the settings' rows='2' is not a number of rows"):
        read_design(str(path))


# ---------------------------------------------------------------------------------------------------
# 2. ids that pandas would read as missing
# ---------------------------------------------------------------------------------------------------
NA_LIKE = ["NA", "null", "None", "nan", "N/A", "NaN", "NULL", "<NA>", "n/a", "-nan", "#N/A", "1.#IND", ""]


@pytest.mark.parametrize("name", NA_LIKE)
def test_na_like_ids_round_trip(tmp_path, name):
    design = pd.DataFrame(
        {"query_id": [name, name, "q"], "doc_id": ["d", name, name], "pi": [0.5, 1.0, 0.25], "round": 1}
    )
    design.attrs = {"depth": 3, "design": "poisson"}
    path = tmp_path / "d.tsv"
    write_design(design, path)
    back = read_design(str(path))
    assert back["query_id"].tolist() == [name, name, "q"] and back["doc_id"].tolist() == ["d", name, name]
    pd.testing.assert_frame_equal(back, read_design(design), check_exact=True)


def test_a_design_over_na_like_ids_estimates_the_same_from_its_file(tmp_path):
    ids = NA_LIKE[:-1]
    runs = {
        f"r{r}": pd.DataFrame(
            [(q, d, 100.0 - i) for q in ("NA", "null", "None") for i, d in enumerate(ids[r:] + ids[:r])],
            columns=["query_id", "doc_id", "score"],
        )
        for r in range(3)
    }
    design = sample(runs, 15, depth=6, seed=2)
    judged = design[["query_id", "doc_id"]].assign(relevance=np.arange(len(design)) % 3)
    path = tmp_path / "d.tsv"
    write_design(design, path)
    pd.testing.assert_frame_equal(_estimate(runs, judged, str(path)), _estimate(runs, judged, design), check_exact=True)


# ---------------------------------------------------------------------------------------------------
# 3. a stratified design without its settings
# ---------------------------------------------------------------------------------------------------
def test_a_stratified_design_without_its_settings_is_refused(setup, tmp_path):
    runs, qrels, _ = setup
    design = sample(runs, 12, depth=6, seed=0, design="stratified", strata=2)
    assert "stratum_id" in design.columns
    bare = design.copy()
    bare.attrs = {}
    with pytest.raises(ValueError, match=r"^the design has a 'stratum_id' column .* but it has no settings \(attrs\)"):
        _estimate(runs, qrels, bare, depth=6)
    path = tmp_path / "d.tsv"
    write_design(design, path)
    path.write_text("".join(_lines(path)[1:]), encoding="utf-8")  # the '# design' line lost
    with pytest.raises(ValueError, match=r"design file .* has a 'stratum_id' column .*\(no '# design' line\).*strata"):
        _estimate(runs, qrels, str(path), depth=6)
    said = design.copy()
    said.attrs = {**design.attrs, "design": "poisson"}
    with pytest.raises(ValueError, match=r"but its settings say design='poisson'"):
        _estimate(runs, qrels, said)
    # with its settings, the file reads back and estimates as the frame
    write_design(design, path)
    pd.testing.assert_frame_equal(_estimate(runs, qrels, str(path)), _estimate(runs, qrels, design), check_exact=True)


# ---------------------------------------------------------------------------------------------------
# 4. write and rename
# ---------------------------------------------------------------------------------------------------
def _fail_fsync(monkeypatch):
    def boom(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)


def test_a_failed_write_leaves_the_earlier_file_and_no_temporary(setup, tmp_path, monkeypatch):
    runs, _, design = setup
    path = tmp_path / "d.tsv"
    path.write_text("the earlier round\n")
    with monkeypatch.context() as patch:
        _fail_fsync(patch)
        with pytest.raises(OSError, match="No space left"):
            write_design(sample(runs, 5, depth=6, seed=1), path)
    assert path.read_text() == "the earlier round\n"
    assert sorted(os.listdir(tmp_path)) == ["d.tsv"]
    write_design(design, path)
    assert read_design(str(path)).attrs == design.attrs and sorted(os.listdir(tmp_path)) == ["d.tsv"]


def _cli_files(setup, root: Path) -> dict:
    runs, qrels, _ = setup
    folder = root / "runs"
    folder.mkdir()
    for name, frame in runs.items():
        text = "".join(f"{q} Q0 {d} {i + 1} {s} {name}\n" for i, (q, d, s) in enumerate(frame.itertuples(index=False)))
        (folder / name).write_text(text)
    full = root / "full.qrels"
    full.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels.itertuples(index=False)))
    return {"runs": str(folder), "full": str(full)}


def test_cli_writes_a_new_round_over_the_earlier_file(setup, tmp_path, monkeypatch, capsys):
    files = _cli_files(setup, tmp_path)
    path = str(tmp_path / "design.tsv")
    base = ["sample", files["runs"], "--depth", "6", "--seed", "1"]
    assert main([*base, "--budget", "8", "-o", path]) == 0
    first = Path(path).read_bytes()
    lines = first.decode().splitlines()
    assert json.loads(lines[0][len("# design ") :])["rows"] == len(lines) - 3
    assert lines[1].startswith("# ir_incomplete ") and lines[2].startswith("query_id\t")
    # stdout gives the same bytes
    capsys.readouterr()
    assert main([*base, "--budget", "8"]) == 0
    assert capsys.readouterr().out.encode() == first
    # a failed write of the next round keeps the first one
    again = [*base, "--budget", "6", "--previous", path, "--judgments", files["full"], "-o", path]
    with monkeypatch.context() as patch:
        _fail_fsync(patch)
        assert main(again) == 1
    assert "cannot write" in capsys.readouterr().err
    assert Path(path).read_bytes() == first and sorted(os.listdir(tmp_path)) == ["design.tsv", "full.qrels", "runs"]
    # the next round written over the earlier round's file
    copy = tmp_path.parent / f"{tmp_path.name}-round1.tsv"
    copy.write_bytes(first)
    round1 = read_design(str(copy))
    assert main(again) == 0
    second = read_design(path)
    assert second.attrs["round"] == 2 and set(second["round"]) == {1, 2}
    kept = round1[["query_id", "doc_id"]].merge(second, on=["query_id", "doc_id"])
    assert len(kept) == len(round1) and (kept["pi"] == 1.0).all() and (kept["round"] == 1).all()


# ---------------------------------------------------------------------------------------------------
# 5. gzip and a byte order mark
# ---------------------------------------------------------------------------------------------------
def test_gzip_and_byte_order_mark_are_read(setup, tmp_path):
    runs, qrels, design = setup
    plain = tmp_path / "d.tsv"
    write_design(design, plain)
    text = plain.read_text(encoding="utf-8")
    packed = tmp_path / "d.tsv.gz"
    write_design(design, packed)
    assert packed.read_bytes()[:2] == b"\x1f\x8b"  # gzip data
    assert gzip.decompress(packed.read_bytes()).decode() == text
    other = tmp_path / "other.tsv.gz"
    other.write_bytes(gzip.compress(text.encode()))
    marked = tmp_path / "bom.tsv"
    marked.write_bytes(b"\xef\xbb\xbf" + text.encode())
    want = read_design(str(plain))
    for path in (packed, other, marked):
        got = read_design(str(path))
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        assert got.attrs == want.attrs
    pd.testing.assert_frame_equal(_estimate(runs, qrels, str(packed)), _estimate(runs, qrels, design), check_exact=True)
    cut = tmp_path / "cut.tsv.gz"
    cut.write_bytes(packed.read_bytes()[:-12])
    with pytest.raises(ValueError, match=r"cannot read design file .*cut\.tsv\.gz.*: truncated or corrupt"):
        read_design(str(cut))
    latin = tmp_path / "latin.tsv"
    latin.write_bytes(text.replace("query_id", "query_id").encode() + "1\t\xe9\t0.5\tsampled\t1\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"cannot read design file .*latin\.tsv.*: not UTF-8 text"):
        read_design(str(latin))


# ---------------------------------------------------------------------------------------------------
# 6. write_design beside read_design
# ---------------------------------------------------------------------------------------------------
def test_write_design_lives_beside_read_design():
    import ir_incomplete.estimation as estimation
    import ir_incomplete.judging as judging
    import ir_incomplete.judging.designs as designs

    assert estimation.write_design is judging.write_design is designs.write_design
    assert (
        estimation.write_design.__module__
        == estimation.read_design.__module__
        == "ir_incomplete.estimation.design_file"
    )
    assert "write_design" in estimation.__all__ and "read_judgments" in estimation.__all__


def test_ids_with_a_tab_or_a_line_break_are_refused_by_write_design(tmp_path):
    design = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a\tb", "c"], "pi": [0.5, 1.0]})
    with pytest.raises(ValueError, match=r"design row 0: doc_id 'a\\tb' holds a tab or a line break"):
        write_design(design, tmp_path / "d.tsv")
    assert not (tmp_path / "d.tsv").exists()


# ---------------------------------------------------------------------------------------------------
# 7. several judgment files
# ---------------------------------------------------------------------------------------------------
def test_several_judgment_sets_are_combined(setup, tmp_path):
    runs, qrels, design = setup
    half = len(qrels) // 2
    a, b = qrels.iloc[:half], qrels.iloc[half:]
    want = _estimate(runs, qrels, design)
    as_dict: dict = {}
    for q, d, g in b.itertuples(index=False):
        as_dict.setdefault(q, {})[d] = int(g)
    for judgments in ([a, b], (b, a), [a, qrels], [ir_incomplete.Qrels.from_any(a), as_dict]):
        pd.testing.assert_frame_equal(_estimate(runs, judgments, design), want, check_exact=True)
    pa, pb = tmp_path / "a.qrels", tmp_path / "b.qrels"
    for path, frame in ((pa, a), (pb, b)):
        path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in frame.itertuples(index=False)))
    pd.testing.assert_frame_equal(_estimate(runs, [str(pa), pb], design), want, check_exact=True)
    # a list of rows is still one qrels (Qrel named tuples or plain tuples)
    Qrel = namedtuple("Qrel", ["query_id", "doc_id", "relevance"])
    rows = [Qrel(*row) for row in qrels.itertuples(index=False)]
    pd.testing.assert_frame_equal(_estimate(runs, rows, design), want, check_exact=True)
    pd.testing.assert_frame_equal(_estimate(runs, [tuple(r) for r in rows], design), want, check_exact=True)
    with pytest.raises(ValueError, match=r"judgments\[1\] is a Qrel, among qrels inputs"):
        read_judgments([a, rows[0]])
    # a pair pooled but unjudged (-1) in one set and graded in another takes the grade
    pooled = a.assign(relevance=-1)
    got = read_judgments([pooled, a]).sort_values(["query_id", "doc_id"]).reset_index(drop=True)
    assert got["relevance"].tolist() == a.sort_values(["query_id", "doc_id"])["relevance"].tolist()


def test_a_pair_graded_differently_is_refused_naming_both_grades(setup, tmp_path):
    runs, qrels, design = setup
    changed = qrels.copy()
    changed.loc[3, "relevance"] = (qrels.loc[3, "relevance"] + 1) % 3
    q, d = qrels.loc[3, "query_id"], qrels.loc[3, "doc_id"]
    g1, g2 = qrels.loc[3, "relevance"], changed.loc[3, "relevance"]
    with pytest.raises(
        ValueError, match=rf"^the pair \({q}, {d}\) is graded {g1} by a table of {len(qrels)} rows and {g2} by a table"
    ):
        _estimate(runs, [qrels, changed], design)
    one, two = tmp_path / "one.qrels", tmp_path / "two.qrels"
    for path, frame in ((one, qrels), (two, changed)):
        path.write_text("".join(f"{a} 0 {b} {c}\n" for a, b, c in frame.itertuples(index=False)))
    with pytest.raises(
        ValueError, match=rf"graded {g1} by '{re.escape(str(one))}' and {g2} by '{re.escape(str(two))}' \(1 such"
    ):
        read_judgments([str(one), str(two)])


def test_missing_judgments_name_the_sets_and_hint_at_the_earlier_ones(setup, tmp_path):
    runs, qrels, _ = setup
    earlier = qrels.iloc[::3]
    design = sample(runs, 6, depth=6, seed=4, qrels=earlier)
    new = design[design["stratum"] == "sampled"][["query_id", "doc_id"]].merge(qrels, on=["query_id", "doc_id"])
    path = tmp_path / "new.qrels"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in new.itertuples(index=False)))
    with pytest.raises(ValueError) as caught:
        _estimate(runs, str(path), design)
    message = str(caught.value)
    assert re.match(r"^the design's pair \(\w+, d\d+\) has no judgment \(\d+ of its \d+ pairs have none\)", message)
    assert f"in the judgments given ({str(path)!r})" in message
    assert "certainty pairs" in message and "the qrels given to sample" in message and "--judgments FILE" in message
    pd.testing.assert_frame_equal(
        _estimate(runs, [earlier, str(path)], design),
        _estimate(runs, pd.concat([earlier, new]), design),
        check_exact=True,
    )
    # a new round's judgments= take several sets too
    again = sample(runs, 4, depth=6, seed=5, previous=design, judgments=[earlier, str(path)])
    same = sample(runs, 4, depth=6, seed=5, previous=design, judgments=pd.concat([earlier, new]))
    pd.testing.assert_frame_equal(again, same, check_exact=True)


def _qrels_file(path: Path, frame: pd.DataFrame) -> str:
    path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, d, g in frame[["query_id", "doc_id", "relevance"]].itertuples(index=False))
    )
    return str(path)


@UNRELIABLE_ALLOWED
def test_trec_covid_round1_plus_new_judgments_on_the_command_line(tmp_path, capsys):
    """Round-1 judgments + a file of the new pairs' judgments equals their concatenation; the new
    judgments alone fail naming the missing pair and suggesting --judgments."""
    if not COVID.is_dir():
        pytest.skip("../shared/data/trec-covid-round1 is absent")
    from ir_incomplete.data import read_trec_qrels

    names = ["10x10.prf.unipd.it", "BBGhelani1", "BERT"]  # the order the command line reads them in
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in names:
        os.symlink(COVID / "runs" / f"{name}.gz", folder / f"{name}.gz")
    round1 = str(COVID / "qrels.round1.txt.gz")
    design_path = str(tmp_path / "design.tsv.gz")
    assert (
        main(
            [
                "sample",
                str(folder),
                "--depth",
                "20",
                "--budget",
                "150",
                "--seed",
                "2",
                "--qrels",
                round1,
                "-o",
                design_path,
            ]
        )
        == 0
    )
    design = read_design(design_path)
    complete = read_trec_qrels(COVID / "qrels.complete-topics1-30.txt.gz")
    new = design[design["stratum"] == "sampled"][["query_id", "doc_id"]].merge(
        complete, how="left", on=["query_id", "doc_id"]
    )
    new["relevance"] = new["relevance"].fillna(0).astype(int)
    new_path = _qrels_file(tmp_path / "new.qrels", new)
    both_path = _qrels_file(tmp_path / "both.qrels", pd.concat([read_trec_qrels(round1), new]))
    tail = [design_path, str(folder), "AP@20", "nDCG@10", "--control", "none", "-p", "-1"]
    capsys.readouterr()
    assert main(["estimate", round1, *tail, "-j", new_path]) == 0
    combined = capsys.readouterr().out
    assert main(["estimate", both_path, *tail]) == 0
    assert capsys.readouterr().out == combined and len(combined.splitlines()) == 1 + 2 * len(names)
    assert main(["estimate", new_path, *tail]) == 2
    err = capsys.readouterr().err
    assert re.search(r"the design's pair \(\d+, \w+\) has no judgment \(\d+ of its \d+ pairs have none\)", err)
    assert new_path in err and "--judgments FILE" in err
    runs = {name: str(folder / f"{name}.gz") for name in names}
    frame = ir_incomplete.estimate(runs, [round1, new], design_path, ["AP@20", "nDCG@10"], control="none")
    assert frame["value"].round(12).tolist() == [
        round(float(line.split("\t")[2]), 12) for line in combined.splitlines()[1:]
    ]


def test_cli_takes_several_judgment_files(setup, tmp_path, capsys):
    runs, qrels, _ = setup
    files = _cli_files(setup, tmp_path)
    half = len(qrels) // 2
    a = _qrels_file(tmp_path / "a.qrels", qrels.iloc[:half])
    b = _qrels_file(tmp_path / "b.qrels", qrels.iloc[half:])
    changed = qrels.copy()
    changed["relevance"] = (changed["relevance"] + 1) % 3
    c = _qrels_file(tmp_path / "c.qrels", changed)
    design = str(tmp_path / "d.tsv")
    base = ["sample", files["runs"], "--depth", "6", "--seed", "1"]
    assert main([*base, "--budget", "8", "-o", design]) == 0
    capsys.readouterr()
    # estimate: QRELS plus -j/--judgments files
    tail = [design, files["runs"], "P@5", "AP@6"]
    assert main(["estimate", files["full"], *tail]) == 0
    want = capsys.readouterr().out
    assert main(["estimate", a, *tail, "-j", b]) == 0
    assert capsys.readouterr().out == want
    assert main(["estimate", a, *tail, "--judgments", b, "-j", files["full"]]) == 0
    assert capsys.readouterr().out == want
    assert main(["estimate", files["full"], *tail, "-j", c]) == 2
    err = capsys.readouterr().err
    assert re.search(rf"is graded \d by {re.escape(repr(files['full']))} and \d by {re.escape(repr(c))}", err)
    assert main(["estimate", a, *tail]) == 2
    err = capsys.readouterr().err
    assert f"in the judgments given ({a!r})" in err and "--judgments FILE" in err
    # sample: --judgments repeats
    one = str(tmp_path / "one.tsv")
    two = str(tmp_path / "two.tsv")
    assert main([*base, "--budget", "5", "--previous", design, "--judgments", files["full"], "-o", one]) == 0
    assert main([*base, "--budget", "5", "--previous", design, "--judgments", a, "--judgments", b, "-o", two]) == 0
    assert Path(one).read_text().splitlines()[2:] == Path(two).read_text().splitlines()[2:]
