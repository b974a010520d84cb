"""Where users already are: the ``ir_measures`` command, signatures, PyTerrier column names, trec_eval
names, examples that keep the checkout clean and the notebook view."""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import pydoc
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]

MEASURES = ["infAP(c=1.5)", "xGAP(g=0.1,0.9)", "BootNDCG(prior=pool+run)@10", "indAP", "nDCG@10"]


def _env(**extra):
    """The environment of a child Python: without PYTHONPATH and our switches unless given in ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env.update(extra)
    return env


_CLEARED = ("PYTHONPATH", "IR_INCOMPLETE_AUTOLOAD", "IR_INCOMPLETE_PATCH_PARSERS")


@pytest.fixture(scope="module")
def trec_files(tmp_path_factory):
    """A small graded qrels file (with pooled-but-unjudged −1 grades) and one run file."""
    rng = np.random.default_rng(7)
    d = tmp_path_factory.mktemp("trec")
    qrels, run = [], []
    for q in range(1, 5):
        docs = [f"d{q}_{i:02d}" for i in range(40)]
        for doc in docs[:30]:
            qrels.append(f"{q} 0 {doc} {rng.choice([-1, 0, 0, 0, 1, 2])}")
        for rank, doc in enumerate(rng.permutation(docs)[:25], start=1):
            run.append(f"{q} Q0 {doc} {rank} {30 - rank + rng.random():.4f} sys")
    (d / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (d / "run.txt").write_text("\n".join(run) + "\n")
    return d / "qrels.txt", d / "run.txt"


# ---------------------------------------------------------------------------------------------------
# the ir_measures command: autoload through a .pth file
# ---------------------------------------------------------------------------------------------------
_IR_MEASURES_COMMAND = (
    "import sys\n"
    "from importlib.metadata import entry_points\n"
    "(script,) = entry_points(group='console_scripts', name='ir_measures')\n"
    "sys.argv = ['ir_measures'] + sys.argv[1:]\n"
    "sys.exit(script.load()())\n"
)


def _run(python, args, env, cwd):
    return subprocess.run([python, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_autoload_hook_loads_plugin_on_import_of_ir_measures(tmp_path):
    code = (
        "import sys, _ir_incomplete_autoload as hook\n"
        "assert 'ir_incomplete' not in sys.modules and 'ir_measures' not in sys.modules\n"
        "assert hook.installed()\n"
        "import ir_measures\n"
        "assert 'ir_incomplete' in sys.modules, 'plugin not loaded'\n"
        "assert not hook.installed(), 'finder left on sys.meta_path'\n"
        "assert ir_measures.__spec__.loader is ir_measures.__loader__\n"
        "assert type(ir_measures.__loader__).__name__ != '_LoaderThenPlugin'\n"
        "print(ir_measures.parse_measure('indAP'))\n"
    )
    done = _run(sys.executable, ["-c", code], _env(PYTHONPATH=str(ROOT)), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "indAP\n"


@pytest.mark.parametrize("variable", ["IR_INCOMPLETE_AUTOLOAD", "IR_INCOMPLETE_PATCH_PARSERS"])
def test_autoload_opt_out(tmp_path, variable):
    code = (
        "import sys, _ir_incomplete_autoload as hook\n"
        "assert not hook.installed()\n"
        "import ir_measures\n"
        "print('ir_incomplete' in sys.modules)\n"
    )
    done = _run(sys.executable, ["-c", code], _env(PYTHONPATH=str(ROOT), **{variable: "0"}), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "False\n"


def test_autoload_enabled_reads_both_variables():
    import _ir_incomplete_autoload as hook

    assert hook.enabled({})
    assert hook.enabled({"IR_INCOMPLETE_AUTOLOAD": "1"})
    for value in ("0", "false", "No", " off "):
        assert not hook.enabled({"IR_INCOMPLETE_AUTOLOAD": value})
        assert not hook.enabled({"IR_INCOMPLETE_PATCH_PARSERS": value})


def _copy_project(dest: Path) -> Path:
    # the caches and build folders that tools write while the tests run (hypothesis in another test process,
    # mypy or the manual beside the tests) are not part of the project, and copying them could race
    ignore = shutil.ignore_patterns(
        ".git",
        "build",
        "dist",
        "*.egg-info",
        "__pycache__",
        ".pytest_cache",
        ".venv",
        ".hypothesis",
        ".mypy_cache",
        ".ruff_cache",
        ".import_linter_cache",
        ".benchmarks",
        "_build",
    )
    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


def _make_venv(path: Path) -> str:
    """A new virtual environment that sees this interpreter's packages (pip, setuptools, numpy, ...) but
    not its ``.pth`` files, so the only ir_incomplete there is the one installed into it."""
    try:
        venv.EnvBuilder(system_site_packages=False, with_pip=False).create(path)
    except Exception as exc:  # e.g. no venv support on this Python
        pytest.skip(f"cannot create a virtual environment: {exc}")
    python = path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not python.exists():
        pytest.skip("cannot create a virtual environment (no interpreter)")
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    parents = [*site.getsitepackages(), site.getusersitepackages()]
    Path(purelib, "_parent_packages.pth").write_text("".join(f"{p}\n" for p in parents if Path(p).is_dir()))
    return str(python)


@pytest.fixture(scope="module", params=[False, True], ids=["regular", "editable"])
def installed(request, tmp_path_factory):
    """``pip install`` (regular and editable) of a copy of the project into a fresh environment:
    ``(python of that environment, its environment variables, a working folder)``."""
    editable = request.param
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("building without isolation needs setuptools")
    if importlib.util.find_spec("wheel") is None and importlib.util.find_spec("setuptools.command.bdist_wheel") is None:
        pytest.skip("building without isolation needs the 'wheel' package")
    tmp_path = tmp_path_factory.mktemp("editable" if editable else "regular")
    project = _copy_project(tmp_path / "project")
    python = _make_venv(tmp_path / "venv")
    env = _env()
    install = [python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    install += ["--disable-pip-version-check", "-e" if editable else "--", str(project)]
    done = subprocess.run(install, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    if done.returncode != 0 and "No module named pip" in done.stderr:
        pytest.skip("pip is not importable in the new environment")
    assert done.returncode == 0, done.stderr
    site = subprocess.run(
        [python, "-c", "import ir_incomplete, _ir_incomplete_autoload as h; print(ir_incomplete.__file__, h.__file__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    expected_root = project if editable else tmp_path / "venv"  # not the checkout, nor another install
    assert all(Path(p).resolve().is_relative_to(expected_root.resolve()) for p in site.split()), site
    assert (Path(site.split()[0]).parent / "py.typed").is_file()
    return python, env, tmp_path


def test_ir_measures_command_after_install(installed, trec_files):
    """After ``pip install`` (regular and editable) into a fresh environment the ``ir_measures`` command
    knows our measures and prints exactly what ``ir_incomplete`` prints."""
    python, env, tmp_path = installed
    qrels, run = trec_files
    for options in ([], ["-q"]):
        args = [str(qrels), str(run), *MEASURES, *options]
        theirs = _run(python, ["-c", _IR_MEASURES_COMMAND, *args], env, tmp_path)
        ours = _run(python, ["-m", "ir_incomplete", *args], env, tmp_path)
        assert theirs.returncode == 0, theirs.stderr
        assert ours.returncode == 0, ours.stderr
        if options:  # per query, ir_measures orders lines by its providers' sets of measures (hash order)
            assert sorted(theirs.stdout.splitlines()) == sorted(ours.stdout.splitlines())
        else:
            assert theirs.stdout == ours.stdout
        assert len(theirs.stdout.splitlines()) == (5 if not options else 5 * 5)
        values = [float(line.split("\t")[-1]) for line in theirs.stdout.splitlines()]
        assert len(set(values)) > 2  # real numbers, not a column of zeros
    off = _run(
        python, ["-c", _IR_MEASURES_COMMAND, str(qrels), str(run), "indAP"], _env(IR_INCOMPLETE_AUTOLOAD="0"), tmp_path
    )
    assert off.returncode != 0 and "indAP" in off.stderr


#: runs the ``ir_measures`` console script once per measure argument in one process (one start-up):
#: one JSON line ``[measure, exit code, stdout, stderr]`` each
_IR_MEASURES_COMMAND_CASES = (
    "import contextlib, io, json, sys\n"
    "from importlib.metadata import entry_points\n"
    "(script,) = entry_points(group='console_scripts', name='ir_measures')\n"
    "main = script.load()\n"
    "qrels, run, *measures = sys.argv[1:]\n"
    "for measure in measures:\n"
    "    sys.argv = ['ir_measures', qrels, run, measure]\n"
    "    out, err = io.StringIO(), io.StringIO()\n"
    "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
    "        try:\n"
    "            code = main() or 0\n"
    "        except SystemExit as done:\n"
    "            code = done.code\n"
    "    print(json.dumps([measure, code, out.getvalue(), err.getvalue()]))\n"
)

#: measure strings the ir_measures command reported as "syntax error: <string>" (or failed on with an
#: AssertionError traceback: SDCG@10), and a trec_eval name it did not read
_COMMAND_MESSAGE_CASES = ["infap", "xGAP(g=0.1,0.8)", "BootNDCG(prior=pol)@10", "SDCG@10", "INST(T=1)", "P_5"]


def test_ir_measures_command_prints_our_messages(installed, trec_files, capsys):
    """The installed ``ir_measures`` command (console script and ``python -m ir_measures``) prints the
    message of the ``ir_incomplete`` command for a measure string it cannot use and exits with 2; a
    trec_eval name (``P_5``) is read with the same note."""
    from ir_incomplete.cli import main

    python, env, tmp_path = installed
    qrels, run = map(str, trec_files)
    done = _run(python, ["-c", _IR_MEASURES_COMMAND_CASES, qrels, run, *_COMMAND_MESSAGE_CASES], env, tmp_path)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r[0] for r in results] == _COMMAND_MESSAGE_CASES
    for measure, code, out, err in results:
        expected_code = main([qrels, run, measure])
        expected_out, expected_err = capsys.readouterr()
        assert "Traceback" not in err and "syntax error" not in err, (measure, err)
        assert (code, out) == (expected_code, expected_out), (measure, err)
        assert err == expected_err.replace("ir_incomplete: ", "ir_measures: "), measure
        if measure == "P_5":
            assert code == 0 and out.startswith("P@5\t") and "reading trec_eval's P_5 as P@5" in err
        else:
            assert code == 2 and out == "" and err.startswith("ir_measures: error: ") and err.count("\n") == 1
    assert "did you mean 'infAP'?" in results[0][3]
    assert "entries sum to 0.9, not 1" in results[1][3]
    assert "expected one of pool+run, pool, run" in results[2][3]
    assert "missing required parameter max_rel" in results[3][3]
    module = _run(python, ["-m", "ir_measures", qrels, run, "indAP", "infap"], env, tmp_path)
    assert module.returncode == 2 and module.stdout == ""
    assert module.stderr == results[0][3]


# ---------------------------------------------------------------------------------------------------
# signatures
# ---------------------------------------------------------------------------------------------------
def test_infap_signature():
    import ir_incomplete
    from ir_incomplete.measures.base import UNSET

    sig = inspect.signature(ir_incomplete.infAP)
    assert list(sig.parameters) == ["rel", "c", "eps", "variant", "cutoff"]
    assert [p.default for p in sig.parameters.values()] == [1, 2.0, 1e-05, "pool", UNSET]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in sig.parameters.values())
    assert str(sig).startswith("(*, rel: int = 1, c: float = 2.0, eps: float = 1e-05, variant: Literal['pool', ")
    assert "(*, rel: int = 1" in pydoc.render_doc(ir_incomplete.infAP)  # what help() shows
    # an object's own values are the defaults of calling it
    sig = inspect.signature(ir_incomplete.infAP(c=1.5) @ 10)
    assert sig.parameters["c"].default == 1.5 and sig.parameters["cutoff"].default == 10
    assert inspect.signature(ir_incomplete.InfAP) == inspect.signature(ir_incomplete.infAP)


@pytest.mark.parametrize("measure", __import__("ir_incomplete").ALL_MEASURES, ids=str)
def test_every_measure_has_its_signature(measure):
    from ir_incomplete.measures.base import NOT_PROVIDED, UNSET

    sig = inspect.signature(measure)
    assert list(sig.parameters) == list(measure.SUPPORTED_PARAMS)
    for name, param in sig.parameters.items():
        spec = measure.SUPPORTED_PARAMS[name]
        own = measure.params.get(name, spec.default)
        if own is NOT_PROVIDED:
            assert param.default is (inspect.Parameter.empty if spec.required else UNSET), name
        else:
            assert param.default == own, name
        assert param.annotation is not inspect.Parameter.empty
    # binding the signature's defaults and calling gives the same measure back
    bound = {n: p.default for n, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}
    required = [n for n, p in sig.parameters.items() if p.default is inspect.Parameter.empty]
    example = {"g": (0.1, 0.9), "cutoff": 10, "rec": 0.5, "design": "design.tsv"}  # values for the required parameters
    assert set(required) <= set(example)
    assert measure(**bound, **{n: example[n] for n in required}) == measure(**{n: example[n] for n in required})
    sig.bind(**bound, **{n: example[n] for n in required})
    with pytest.raises(TypeError):
        sig.bind(1)  # keyword-only, as the measure objects are


def test_py_typed_is_shipped():
    assert (ROOT / "ir_incomplete" / "py.typed").is_file()
    assert "py.typed" in (ROOT / "setup.cfg").read_text()


# ---------------------------------------------------------------------------------------------------
# PyTerrier column names through ir_measures' default pipeline
# ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def frames():
    rng = np.random.default_rng(3)
    qids = np.repeat([f"q{i}" for i in range(6)], 30)
    docs = np.array([f"d{i}" for i in range(len(qids))])
    qrels = pd.DataFrame({"query_id": qids, "doc_id": docs, "relevance": rng.choice([-1, 0, 0, 1, 2], len(qids))})
    run = pd.DataFrame({"query_id": qids, "doc_id": docs, "score": rng.random(len(qids))})
    pt_qrels = qrels.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    pt_run = run.rename(columns={"query_id": "qid", "doc_id": "docno"})
    return qrels, run, pt_qrels, pt_run


def _measures():
    import ir_measures

    import ir_incomplete

    return [ir_incomplete.infAP(c=1.5), ir_measures.nDCG @ 10, ir_measures.AP, ir_incomplete.indAP]


@pytest.mark.parametrize("which", ["qrels", "run", "both"])
def test_pyterrier_columns_in_ir_measures_calls(frames, which):
    import ir_measures

    qrels, run, pt_qrels, pt_run = frames
    q = pt_qrels if which in ("qrels", "both") else qrels
    r = pt_run if which in ("run", "both") else run
    before = (q.copy(), r.copy())
    measures = _measures()
    expected = ir_measures.calc_aggregate(measures, qrels, run)
    assert len(set(expected.values())) == len(measures)  # four different, real numbers
    assert ir_measures.calc_aggregate(measures, q, r) == expected
    per_query = sorted(ir_measures.iter_calc(measures, qrels, run), key=lambda m: (str(m.measure), m.query_id))
    got = sorted(ir_measures.iter_calc(measures, q, r), key=lambda m: (str(m.measure), m.query_id))
    assert got == per_query and len(got) == 6 * len(measures)
    aggregated, metrics = ir_measures.calc(measures, q, r)
    assert aggregated == expected and sorted(metrics, key=lambda m: (str(m.measure), m.query_id)) == per_query
    assert ir_measures.evaluator(measures, q).calc_aggregate(r) == expected
    assert measures[1].calc_aggregate(q, r) == expected[measures[1]]
    pd.testing.assert_frame_equal(q, before[0])  # the caller's frames are untouched
    pd.testing.assert_frame_equal(r, before[1])


def test_pyterrier_columns_fail_in_the_unwrapped_pipeline(frames):
    """What the wrapper fixes: ir_measures' own pipeline rejects PyTerrier's names for built-ins."""
    import ir_measures

    _, _, pt_qrels, pt_run = frames
    original = ir_measures.DefaultPipeline._evaluator.__wrapped__
    with pytest.raises((ValueError, KeyError, AttributeError)):
        original(_measures(), pt_qrels).calc_aggregate(pt_run)


# ---------------------------------------------------------------------------------------------------
# trec_eval names
# ---------------------------------------------------------------------------------------------------
TREC_NAMES = {
    "P_5": "P@5",
    "P.5,10": "P@5 P@10",
    "ndcg_cut_10": "nDCG@10",
    "ndcg": "nDCG",
    "map": "AP",
    "map_cut_10": "AP@10",
    "recip_rank": "RR",
    "bpref": "Bpref",
    "recall_100": "R@100",
    "success_5": "Success@5",
    "num_q": "NumQ",
    "iprec_at_recall_0.10": "IPrec@0.1",
}


@pytest.mark.parametrize("name, canonical", TREC_NAMES.items())
def test_trec_eval_names_map_to_ir_measures_names(name, canonical):
    from ir_incomplete.trec_names import trec_eval_equivalent

    assert " ".join(map(str, trec_eval_equivalent(name))) == canonical


@pytest.mark.parametrize("name", ["official", "all_trec", "Q_5", "foo", "P_x", "", "a" * 500, None])
def test_not_trec_eval_names(name):
    from ir_incomplete.trec_names import trec_eval_equivalent

    assert trec_eval_equivalent(name) is None


@pytest.mark.parametrize("name", ["P_5", "ndcg_cut_10", "map", "recip_rank", "bpref"])
def test_unknown_trec_name_suggests_the_ir_measures_name(name):
    import ir_measures

    import ir_incomplete

    with pytest.raises(NameError) as info:
        ir_incomplete.parse(name)
    message = str(info.value)
    assert f"did you mean '{TREC_NAMES[name]}'?" in message
    assert "\n" not in message and len(message) < 120 and "valid measures" not in message
    assert info.value.suggestions == tuple(TREC_NAMES[name].split())
    with pytest.raises(NameError, match="did you mean"):  # through ir_measures too
        ir_measures.parse_measure(name)


def test_cli_accepts_trec_eval_names_with_a_note(trec_files, capsys):
    from ir_incomplete.cli import main

    qrels, run = map(str, trec_files)
    assert main([qrels, run, "P_5", "ndcg_cut_10", "map", "P@5"]) == 0
    trec = capsys.readouterr()
    assert main([qrels, run, "P@5", "nDCG@10", "AP"]) == 0
    canonical = capsys.readouterr()
    assert trec.out == canonical.out and len(trec.out.splitlines()) == 3
    assert trec.err.splitlines() == [
        "ir_incomplete: note: reading trec_eval's P_5 as P@5",
        "ir_incomplete: note: reading trec_eval's ndcg_cut_10 as nDCG@10",
        "ir_incomplete: note: reading trec_eval's map as AP",
    ]
    assert main([qrels, run, "Q_5"]) == 2
    assert "unknown measure 'Q_5'" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------
# examples write into the current folder (or --out), never into the checkout unless --docs
# ---------------------------------------------------------------------------------------------------
def _write_gz(path: Path, lines) -> None:
    import gzip

    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as handle:
        handle.write("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def example_data(tmp_path_factory):
    """Small stand-ins for ../shared/data/trec-covid-round1 and robust04 (same file layout)."""
    rng = np.random.default_rng(11)
    root = tmp_path_factory.mktemp("data")
    complete, shallow, runs = [], [], {f"sys{i}": [] for i in range(6)}
    for q in range(1, 6):
        docs = [f"d{q}_{i:03d}" for i in range(80)]
        grades = rng.choice([0, 0, 1, 2], len(docs))
        for i, doc in enumerate(docs[:60]):
            complete.append(f"{q} 0 {doc} {grades[i]}")
            if i % 3 == 0:
                shallow.append(f"{q} 0 {doc} {grades[i]}")
        for k, name in enumerate(runs):
            scores = grades * (1 + k / 3) + rng.normal(0, 1, len(docs))
            order = np.argsort(-scores)[:50]
            runs[name] += [f"{q} Q0 {docs[j]} {r} {scores[j]:.5f} {name}" for r, j in enumerate(order, start=1)]
    covid = root / "trec-covid-round1"
    _write_gz(covid / "qrels.round1.txt.gz", shallow)
    _write_gz(covid / "qrels.complete-topics1-30.txt.gz", complete)
    robust = root / "robust04"
    _write_gz(robust / "qrels.robust04.txt.gz", complete)
    for name, lines in runs.items():
        _write_gz(covid / "runs" / f"{name}.gz", lines)
        _write_gz(robust / "runs" / f"input.{name}.gz", lines)
    return root


def _git_status() -> str | None:
    try:
        done = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


EXAMPLES = {
    "covid_round1.py": (lambda data: ["--data", str(data / "trec-covid-round1")], "covid_round1.png"),
    "bootstrap_covid.py": (lambda data: [str(data)], "bootstrap_covid_intervals.png"),
    "robust04_sampling.py": (
        lambda data: ["--data", str(data / "robust04"), "--repeats", "2", "--n-jobs", "1", "--no-progress"],
        "robust04_sampling.png",
    ),
    "predicted_labels_covid.py": (
        lambda data: [str(data), "--repeats", "2", "--labelled", "3"],
        "predicted_labels_covid.png",
    ),
}


@pytest.mark.parametrize("example", EXAMPLES)
def test_examples_write_to_the_current_folder_or_out(tmp_path, example_data, example):
    pytest.importorskip("matplotlib")
    before = _git_status()
    args, figure = EXAMPLES[example]
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    script = str(ROOT / "examples" / example)
    done = _run(sys.executable, [script, *args(example_data)], _env(PYTHONPATH=str(ROOT), MPLBACKEND="Agg"), cwd)
    assert done.returncode == 0, done.stderr
    assert (cwd / figure).stat().st_size > 1000
    assert f"saved {cwd / figure}" in done.stdout or f"saved {figure}" in done.stdout
    out = tmp_path / "elsewhere"
    done = _run(sys.executable, [script, *args(example_data), "--out", str(out)], _env(PYTHONPATH=str(ROOT)), cwd)
    assert done.returncode == 0, done.stderr
    assert (out / figure).is_file()
    if before is None:
        pytest.skip("not a git checkout: the status of the checkout was not compared")
    assert _git_status() == before  # nothing written into the checkout (docs/*.png only with --docs)


# ---------------------------------------------------------------------------------------------------
# notebook view: pivot and plot_intervals
# ---------------------------------------------------------------------------------------------------
def test_pivot_of_evaluate_tables(frames):
    import ir_incomplete

    qrels, run, _, _ = frames
    runs = {"a": run, "b": run.assign(score=-run["score"])}
    measures = ["infAP(c=1.5)", "AP", "NumRet", "BootNDCG@10"]
    per_query = ir_incomplete.evaluate(runs, qrels, measures)
    aggregated = ir_incomplete.evaluate(runs, qrels, measures, per_query=False)
    before = per_query.copy()
    view = ir_incomplete.pivot(per_query)
    pd.testing.assert_frame_equal(per_query, before)
    assert list(view.index) == ["a", "b"] and list(view.columns) == measures
    assert view.loc["a", "NumRet"] == len(run)  # counting measures are summed, as evaluate does
    for row in aggregated.itertuples():
        assert view.loc[row.run, row.measure] == pytest.approx(row.value, abs=1e-12)
    pd.testing.assert_frame_equal(ir_incomplete.pivot(aggregated), view)
    experiment = per_query.rename(columns={"run": "name", "query_id": "qid"})  # pt.Experiment(perquery=True)
    pd.testing.assert_frame_equal(ir_incomplete.pivot(experiment), view)
    assert "<table" in view._repr_html_()


def test_pivot_shows_bootstrap_intervals():
    import ir_incomplete

    experiment = pd.DataFrame(
        {
            "name": ["bm25", "dense"],
            "map": [0.25, 0.3],
            "BootNDCG@10": [0.41, 0.5],
            "BootNDCG@10 p5": [0.37, 0.45],
            "BootNDCG@10 p95": [0.46, 0.55],
            "map +": [0, 3],  # pt.Experiment's baseline columns are not measures
        }
    )
    view = ir_incomplete.pivot(experiment, decimals=2)
    assert view.to_dict() == {
        "map": {"bm25": "0.25", "dense": "0.30"},
        "BootNDCG@10": {"bm25": "0.41 [0.37, 0.46]", "dense": "0.50 [0.45, 0.55]"},
    }
    tidy = pd.DataFrame(
        {"run": ["x", "y"], "measure": "BootNDCG@10", "value": [0.5, 0.6], "p95": [0.7, 0.8], "p5": [0.4, 0.5]}
    )
    assert ir_incomplete.pivot(tidy)["BootNDCG@10"].tolist() == ["0.5000 [0.4000, 0.7000]", "0.6000 [0.5000, 0.8000]"]


def test_pivot_refuses_what_it_cannot_show():
    import ir_incomplete

    with pytest.raises(TypeError, match="DataFrame"):
        ir_incomplete.pivot({"run": 1})
    with pytest.raises(ValueError, match="columns"):
        ir_incomplete.pivot(pd.DataFrame({"a": [1]}))
    per_query = pd.DataFrame(
        {"run": ["x"], "query_id": ["1"], "measure": ["AP"], "value": [0.5], "p5": [0], "p95": [1]}
    )
    with pytest.raises(ValueError, match="cannot be averaged"):
        ir_incomplete.pivot(per_query)
    twice = pd.DataFrame({"run": ["x", "x"], "measure": ["AP", "AP"], "value": [0.5, 0.4]})
    with pytest.raises(ValueError, match="row 1: run 'x' and measure 'AP' appear twice"):
        ir_incomplete.pivot(twice)
    with pytest.raises(ValueError, match="decimals"):
        ir_incomplete.pivot(twice, decimals=-1)


def test_plot_intervals(tmp_path):
    pytest.importorskip("matplotlib")
    import ir_incomplete

    table = pd.DataFrame(
        {
            "name": ["bm25", "dense", "splade"],
            "map": [0.2, 0.3, 0.25],
            "BootNDCG@10": [0.41, 0.5, 0.45],
            "BootNDCG@10 p5": [0.37, 0.45, 0.4],
            "BootNDCG@10 p95": [0.46, 0.55, 0.5],
        }
    )
    path = tmp_path / "intervals.png"
    ax = ir_incomplete.plot_intervals(table, reference={"bm25": 0.4, "dense": 0.52, "splade": 0.3}, path=path)
    assert path.stat().st_size > 1000
    assert ax.get_xlabel() == "BootNDCG@10"  # the measure with an interval is the default
    assert [t.get_text() for t in ax.get_yticklabels()] == ["bm25", "splade", "dense"]  # sorted by estimate
    (bars,) = [c for c in ax.containers]
    segments = bars.lines[2][0].get_segments()
    assert [tuple(s[:, 0]) for s in segments] == [(0.37, 0.46), (0.4, 0.5), (0.45, 0.55)]
    ax = ir_incomplete.plot_intervals(table, "map", sort=False)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["bm25", "dense", "splade"]
    with pytest.raises(ValueError, match="'P@5' is not in the table; its measures: map, BootNDCG@10"):
        ir_incomplete.plot_intervals(table, "P@5")
    from matplotlib.figure import Figure

    sub = Figure().subfigures(1, 2)[1]  # an Axes inside a subfigure: the whole figure is saved
    inner = tmp_path / "inner.png"
    ax = ir_incomplete.plot_intervals(table, ax=sub.subplots(), path=inner)
    assert ax.figure is sub and inner.stat().st_size > 1000


def test_skip_messages_name_the_shared_data_folder():
    import conftest

    expected = (
        r"^\.\./shared/data/not-here is absent \(the real TREC data lives in \.\./shared/data beside the project\)$"
    )
    with pytest.raises(pytest.skip.Exception, match=expected):
        conftest._need(conftest.DATA / "not-here")


def test_pivot_rounds_to_decimals_without_intervals():
    import ir_incomplete

    table = pd.DataFrame({"run": ["x", "y"], "measure": "AP", "value": [0.123456, 0.98765]})
    assert ir_incomplete.pivot(table, decimals=2)["AP"].tolist() == [0.12, 0.99]
    assert ir_incomplete.pivot(table, decimals=0)["AP"].tolist() == [0.0, 1.0]
    assert ir_incomplete.pivot(table)["AP"].tolist() == [0.123456, 0.98765]  # None: unrounded
    with pytest.raises(ValueError, match="decimals must be an integer >= 0 or None, not 1.5"):
        ir_incomplete.pivot(table, decimals=1.5)


def test_pivot_shows_rbp_with_its_residual():
    import ir_incomplete
    from ir_incomplete.display import long_form

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 0}, "q3": {"d": 1}}
    runs = {"r": {"q1": {"a": 2.0, "x": 1.0}, "q2": {"c": 1.0}}, "s": {"q1": {"b": 1.0}}}
    measures = ["RBPResidual(p=0.5)", "AP"]
    per_query = ir_incomplete.evaluate(runs, qrels, measures)
    aggregated = ir_incomplete.evaluate(runs, qrels, measures, per_query=False)
    view = ir_incomplete.pivot(per_query, decimals=3)
    # r: value (.5 + 0 + 0)/3, residual (.5 + .5 + 1)/3; s: value 0, residual (.5 + 1 + 1)/3
    assert view.to_dict() == {
        "RBPResidual(p=0.5)": {"r": "0.167 +0.667", "s": "0.000 +0.833"},
        "AP": {"r": "0.333", "s": "0.000"},
    }
    pd.testing.assert_frame_equal(ir_incomplete.pivot(aggregated, decimals=3), view)
    assert ir_incomplete.pivot(aggregated).at["r", "RBPResidual(p=0.5)"] == "0.1667 +0.6667"
    long = long_form(aggregated)
    assert list(long.columns) == ["run", "measure", "value", "lower", "upper", "residual"]
    rbp = long[long["measure"] == "RBPResidual(p=0.5)"]
    assert rbp["lower"].tolist() == rbp["value"].tolist()
    assert rbp["upper"].tolist() == pytest.approx([2.5 / 3, 2.5 / 3], abs=1e-15)
    assert long.loc[long["measure"] == "AP", ["lower", "upper", "residual"]].isna().all().all()
    # without its residual column (e.g. a table trimmed to run, measure, value) RBP is a plain number
    plain = ir_incomplete.pivot(aggregated[["run", "measure", "value"]])
    assert plain.at["r", "RBPResidual(p=0.5)"] == pytest.approx(0.5 / 3, abs=1e-15)
