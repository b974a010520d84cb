"""The ir_measures provider and the wiring done by ``import ir_incomplete``: routing, registry, parsers."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import ir_measures
import pytest

import ir_incomplete
from ir_incomplete import grammar
from ir_incomplete.integration import activate

REPO_ROOT = Path(__file__).resolve().parents[1]
OURS = ir_measures.providers.registry["ir_incomplete"]
PYTREC = ir_measures.providers.registry["pytrec_eval"]

# topic S of the spec: u1 U · u2 U · r R; plain infAP 2/3, infAP(c=1.5) 1/3 + (2/3)/1.5
QRELS = {"q": {"u1": -1, "u2": -1, "r": 1, "n": 0}}
RUN = {"q": {"u1": 3.0, "u2": 2.0, "r": 1.0}}
EXTENDED = ["infAP(c=1.5)", "infAP@10", "infAP(variant=uniform)", "infAP(eps=0.001)"]


def _first_supporting(measure):
    for provider in ir_measures.DefaultPipeline.providers:
        if provider.is_available() and provider.supports(measure):
            return provider
    return None


def _refuse(*args, **kwargs):
    raise RuntimeError("this provider must not be asked")


# ---------------------------------------------------------------------------------------------------------
# routing in the default pipeline
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", EXTENDED)
def test_extended_infap_goes_to_us_and_never_to_pytrec_eval(monkeypatch, text):
    measure = ir_measures.parse_measure(text)
    assert _first_supporting(measure) is OURS
    assert not PYTREC.supports(measure)
    expected = OURS.calc_aggregate([measure], QRELS, RUN)[measure]
    monkeypatch.setattr(PYTREC, "_evaluator", _refuse)
    monkeypatch.setattr(PYTREC, "evaluator", _refuse)
    got = ir_measures.calc_aggregate([measure], QRELS, RUN)[measure]
    assert got == expected
    per_query = list(ir_measures.iter_calc([measure], QRELS, RUN))
    assert [(m.query_id, m.value) for m in per_query] == [("q", expected)]


def test_smoothed_value_differs_from_plain_through_the_pipeline(monkeypatch):
    monkeypatch.setattr(PYTREC, "_evaluator", _refuse)
    smoothed = ir_measures.parse_measure("infAP(c=1.5)")
    value = ir_measures.calc_aggregate([smoothed], QRELS, RUN)[smoothed]
    assert value == pytest.approx(1 / 3 + (2 / 3) / 1.5, abs=1e-9)
    assert abs(value - 2 / 3) > 0.1


def test_mixed_measures_split_between_providers(monkeypatch):
    """Plain infAP and P@1 to pytrec_eval, infAP(c=1.5) to us, in one call."""
    smoothed = ir_measures.parse_measure("infAP(c=1.5)")
    result = ir_measures.calc_aggregate([ir_measures.infAP, smoothed, ir_measures.P @ 1], QRELS, RUN)
    assert result[ir_measures.infAP] == pytest.approx(2 / 3, abs=1e-9)
    assert result[smoothed] == pytest.approx(7 / 9, abs=1e-9)
    assert result[ir_measures.P @ 1] == 0.0


def test_plain_infap_stays_with_pytrec_eval(monkeypatch):
    plain = ir_measures.parse_measure("infAP")
    assert plain == ir_incomplete.infAP
    assert not OURS.supports(plain)
    assert not OURS.supports(ir_measures.infAP)
    assert not OURS.supports(ir_measures.parse_measure("infAP(rel=2)"))
    assert _first_supporting(plain) is PYTREC
    monkeypatch.setattr(OURS, "_evaluator", _refuse)
    monkeypatch.setattr(OURS, "evaluator", _refuse)
    assert ir_measures.calc_aggregate([plain], QRELS, RUN)[plain] == pytest.approx(2 / 3, abs=1e-9)


def test_our_provider_computes_plain_infap_when_asked_directly():
    plain = ir_measures.infAP
    assert not OURS.supports(plain)
    assert OURS.calc_aggregate([plain], QRELS, RUN)[plain] == pytest.approx(2 / 3, abs=1e-9)
    builtin = ir_measures.measures.infap._infAP()
    assert OURS.calc_aggregate([builtin], QRELS, RUN)[builtin] == pytest.approx(2 / 3, abs=1e-9)
    metrics = list(OURS.iter_calc([plain], QRELS, RUN))
    assert [(m.query_id, m.measure, m.value) for m in metrics] == [("q", plain, pytest.approx(2 / 3))]


def test_our_provider_refuses_foreign_measures_when_asked_directly():
    with pytest.raises(ValueError, match="ERR"):
        OURS.calc_aggregate([ir_measures.ERR @ 10], QRELS, RUN)
    assert not OURS.supports(ir_measures.ERR @ 10)
    with pytest.raises(ValueError, match="exp-log2"):  # a built-in name, with a value only ir_measures supports
        OURS.calc_aggregate([ir_measures.nDCG(dcg="exp-log2") @ 10], QRELS, RUN)


@pytest.mark.parametrize("text", EXTENDED)
def test_every_other_provider_refuses_extended_infap(text):
    measure = ir_measures.parse_measure(text)
    others = {name: p for name, p in ir_measures.providers.registry.items() if p is not OURS}
    assert "pytrec_eval" in others and "runtime" in others and len(others) >= 8
    claimed = [name for name, p in others.items() if p.supports(measure)]
    assert claimed == []
    assert OURS.supports(measure)


def test_provider_position_is_right_after_runtime_and_unique():
    for _ in range(3):
        ir_incomplete.activate()
        providers = ir_measures.DefaultPipeline.providers
        names = [getattr(p, "NAME", None) for p in providers]
        assert sum(p is OURS for p in providers) == 1
        assert names.count("ir_incomplete") == 1
        assert names.index("ir_incomplete") == names.index("runtime") + 1
        assert names.index("ir_incomplete") < names.index("pytrec_eval")
    assert ir_measures.providers.registry["ir_incomplete"] is OURS
    assert ir_incomplete.provider is OURS
    assert OURS.NAME == "ir_incomplete"


def test_guards_are_not_stacked_by_repeated_activation():
    ir_incomplete.activate()
    ir_incomplete.activate()
    supports = PYTREC.supports
    assert getattr(supports, "__wrapped__", None) is not None
    assert not getattr(supports.__wrapped__, "_ir_incomplete_guard", False)


# ---------------------------------------------------------------------------------------------------------
# measure registry
# ---------------------------------------------------------------------------------------------------------
def test_registry_entry_and_module_attributes():
    assert ir_measures.infAP is ir_measures.measures.registry["infAP"]
    assert ir_measures.infAP is ir_incomplete.infAP
    assert ir_measures.measures.infAP is ir_incomplete.infAP
    assert isinstance(ir_measures.infAP, ir_measures.measures.infap._infAP)


def test_plain_infap_equals_and_hashes_like_the_builtin():
    builtin = ir_measures.measures.infap._infAP()
    assert ir_incomplete.infAP == builtin
    assert builtin == ir_incomplete.infAP
    assert hash(ir_incomplete.infAP) == hash(builtin)
    assert repr(ir_incomplete.infAP) == repr(builtin) == "infAP"
    assert ir_incomplete.infAP(rel=2) == builtin(rel=2)
    assert hash(ir_incomplete.infAP(rel=2)) == hash(builtin(rel=2))
    assert {builtin: 1}[ir_incomplete.infAP] == 1
    assert ir_incomplete.infAP(c=1.5) != builtin


def test_ir_measures_infap_takes_our_parameters():
    m = ir_measures.infAP(c=1.5)
    assert isinstance(m, ir_incomplete.InfAP)
    assert repr(m) == "infAP(c=1.5)"
    assert m == ir_measures.parse_measure("infAP(c=1.5)") == ir_incomplete.parse("infAP(c=1.5)")
    assert repr(ir_measures.infAP(c=1.5) @ 10) == "infAP(c=1.5)@10"
    assert repr(ir_measures.infAP(variant="uniform", eps=1e-3)) == "infAP(eps=0.001,variant=uniform)"


# ---------------------------------------------------------------------------------------------------------
# parser patching and its opt-out
# ---------------------------------------------------------------------------------------------------------
def _python(code, **env):
    full_env = dict(os.environ, **env)
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), full_env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=str(REPO_ROOT),
        timeout=120,
    )


OPT_OUT_CHECK = """
    import ir_measures, ir_measures.util
    original = ir_measures.parse_measure
    original_trec = ir_measures.parse_trec_measure
    original_util = ir_measures.util.parse_measure
    import ir_incomplete
    assert ir_measures.parse_measure is original, ir_measures.parse_measure
    assert ir_measures.parse_trec_measure is original_trec
    assert ir_measures.util.parse_measure is original_util
    try:
        ir_measures.parse_measure("infAP(variant=uniform)")
    except Exception:
        pass
    else:
        raise SystemExit("the original parser read a bare word")
    # our measures are still registered and routed; our own parser still works
    m = ir_incomplete.parse("infAP(variant=uniform)")
    assert ir_measures.DefaultPipeline.providers[1] is ir_incomplete.provider
    assert ir_measures.calc_aggregate([m], {"q": {"a": 1}}, {"q": {"a": 1.0}})[m] == 1.0
    print("ok")
"""


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_env_opt_out_keeps_original_parsers(value):
    done = _python(OPT_OUT_CHECK, IR_INCOMPLETE_PATCH_PARSERS=value)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_default_import_patches_parsers():
    done = _python(
        """
        import ir_measures
        original = ir_measures.parse_measure
        import ir_incomplete
        assert ir_measures.parse_measure is not original
        assert ir_measures.parse_measure.__wrapped__ is original
        assert repr(ir_measures.parse_measure("infAP(variant=uniform)")) == "infAP(variant=uniform)"
        assert ir_measures.parse_trec_measure("map") == [ir_measures.AP]
        assert ir_measures.parse_trec_measure("infAP(c=1.5)@10") == [ir_measures.infAP(c=1.5) @ 10]
        print("ok")
    """,
        IR_INCOMPLETE_PATCH_PARSERS="1",
        IR_INCOMPLETE_AUTOLOAD="0",  # installed, `import ir_measures` would load the plugin before `original =`
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_activate_can_remove_and_reinstall_the_parser_wrappers():
    was_installed = grammar.parsers_installed()
    try:
        activate()
        wrapped = ir_measures.parse_measure
        original = wrapped.__wrapped__
        original_trec = ir_measures.parse_trec_measure.__wrapped__
        assert ir_measures.parse_measure("infAP(variant=uniform)") == ir_incomplete.infAP(variant="uniform")

        ir_incomplete.activate(patch_parsers=False)
        assert ir_measures.parse_measure is original
        assert ir_measures.util.parse_measure is original
        assert ir_measures.parse_trec_measure is original_trec
        assert not grammar.parsers_installed()
        with pytest.raises(ValueError):
            ir_measures.parse_measure("infAP(variant=uniform)")
        # measures and provider stay registered without the parser patch
        assert ir_measures.measures.registry["infAP"] is ir_incomplete.infAP
        assert sum(p is OURS for p in ir_measures.DefaultPipeline.providers) == 1

        ir_incomplete.activate()
        assert grammar.parsers_installed()
        assert ir_measures.parse_measure.__wrapped__ is original
        assert ir_measures.parse_measure("infAP(variant=uniform)") == ir_incomplete.infAP(variant="uniform")
        ir_incomplete.activate()  # idempotent: no wrapper around the wrapper
        assert ir_measures.parse_measure.__wrapped__ is original
    finally:
        activate(patch_parsers=was_installed)
    assert grammar.parsers_installed() == was_installed


@pytest.mark.parametrize("measure", ir_incomplete.ALL_MEASURES, ids=lambda m: m.NAME)
def test_every_measure_is_a_top_level_name(measure):
    """``from ir_incomplete import <name>`` works for every registered measure (its name, its aliases and
    its class), and ``__all__`` lists them, so ``from ir_incomplete import *`` brings them too."""
    names = [measure.NAME, *getattr(measure, "ALIASES", ())]
    for name in names:
        assert getattr(ir_incomplete, name, None) is measure, name
    assert getattr(ir_incomplete, type(measure).__name__, None) is type(measure)
    for name in [*names, type(measure).__name__]:
        assert name in ir_incomplete.__all__, name


def test_all_names_exist_once():
    assert len(ir_incomplete.__all__) == len(set(ir_incomplete.__all__))
    missing = [name for name in ir_incomplete.__all__ if not hasattr(ir_incomplete, name)]
    assert missing == []
