"""ir_incomplete: honest IR evaluation when relevance judgments are incomplete.

Importing the package registers every measure with ``ir_measures`` (and so with PyTerrier's
``pt.Experiment``), adds the ``ir_incomplete`` provider to ``ir_measures``' default pipeline and lets
``ir_measures.parse_measure``/``parse_trec_measure`` read our measure strings (``infAP(c=1.5)@10``).

Layers, top down (a module imports only from its own layer's package and the layers below; the manual's
"Layout", docs/development.rst, kept by ``lint-imports``): :mod:`ir_incomplete.cli` → ``judging``,
``report`` → ``robustness``, ``labelers``, ``ppi``, ``display`` → ``api`` (:func:`evaluate`) →
``bootstrap``, ``other_providers`` → ``integration`` → ``incomplete_provider`` (the ir_measures adapter) →
``estimation`` (:func:`estimate`) → ``measures`` → ``grammar`` → ``kernels``, ``predictions`` → ``data``
(inputs → ranked-code matrix).
"""

from ir_incomplete._version import __version__
from ir_incomplete.api import evaluate  # noqa: E402
from ir_incomplete.bootstrap import (  # noqa: E402
    BootstrapResult,
    add_bootstrap_intervals,
    bootstrap_measure,
    bootstrap_ndcg,
)
from ir_incomplete.data import Qrels, RankedLists, read_trec_qrels, read_trec_run, to_pyterrier  # noqa: E402
from ir_incomplete.display import pivot, plot_intervals  # noqa: E402
from ir_incomplete.estimation import estimate  # noqa: E402
from ir_incomplete.grammar import MeasureSyntaxError, parse  # noqa: E402
from ir_incomplete.incomplete_provider import IncompleteProvider  # noqa: E402
from ir_incomplete.integration import activate  # noqa: E402
from ir_incomplete.measures import (  # noqa: E402
    ALL_MEASURES,
    GAP,
    BootNDCG,
    BootstrappedNDCG,
    BPref,
    Bpref,
    Bpref10,
    Bpref10Measure,
    BprefMeasure,
    ExpectedGradedAP,
    ExtendedGradedAP,
    GradedAP,
    IncompleteMeasure,
    IndAP,
    InfAP,
    NaiveUpperNDCG,
    NDCGUpper,
    Param,
    RankEff,
    RankEffMeasure,
    SubAP,
    eGAP,
    indAP,
    infAP,
    subAP,
    xGAP,
)
from ir_incomplete.measures.bootstrap import (  # noqa: E402
    BootAP,
    BootP,
    BootQ,
    BootRBP,
    BootstrapMeasure,
    BootstrappedAP,
    BootstrappedP,
    BootstrappedQ,
    BootstrappedRBP,
    Q,
    QMeasure,
)
from ir_incomplete.measures.design_based import (  # noqa: E402
    DesignAP,
    DesignMeasure,
    DesignNDCG,
    DesignP,
    DesignR,
    DesignRBP,
    StatAP,
    StatNDCG,
    StatP,
    StatR,
    StatRBP,
)
from ir_incomplete.measures.sampled import (  # noqa: E402
    APUpper,
    APUpperBound,
    ExtendedInfAP,
    InferredNDCG,
    InferredPrecision,
    InterpolatedInferredPrecision,
    PrecisionUpper,
    PUpper,
    RBPResidual,
    RBPWithResidual,
    infNDCG,
    iP,
    iPrec,
    xinfAP,
)
from ir_incomplete.ppi import ppi_evaluate  # noqa: E402
from ir_incomplete.predictions import calibration  # noqa: E402
from ir_incomplete.report import compare, format_report  # noqa: E402

provider = activate()

__all__ = [
    "estimate",
    "__version__",
    "activate",
    "evaluate",
    "compare",
    "format_report",
    "parse",
    "pivot",
    "plot_intervals",
    "MeasureSyntaxError",
    "provider",
    "IncompleteProvider",
    "IncompleteMeasure",
    "ALL_MEASURES",
    "Qrels",
    "RankedLists",
    "read_trec_qrels",
    "read_trec_run",
    "to_pyterrier",
    "Param",
    "bootstrap_ndcg",
    "bootstrap_measure",
    "calibration",
    "add_bootstrap_intervals",
    "BootstrapResult",
    "ppi_evaluate",
    "InfAP",
    "infAP",
    "IndAP",
    "indAP",
    "SubAP",
    "subAP",
    "BprefMeasure",
    "Bpref",
    "BPref",
    "Bpref10Measure",
    "Bpref10",
    "RankEffMeasure",
    "RankEff",
    "GradedAP",
    "ExtendedGradedAP",
    "ExpectedGradedAP",
    "GAP",
    "xGAP",
    "eGAP",
    "BootstrappedNDCG",
    "NaiveUpperNDCG",
    "BootNDCG",
    "NDCGUpper",
    "QMeasure",
    "Q",
    "BootstrapMeasure",
    "BootstrappedAP",
    "BootstrappedP",
    "BootstrappedRBP",
    "BootstrappedQ",
    "BootAP",
    "BootP",
    "BootRBP",
    "BootQ",
    "ExtendedInfAP",
    "xinfAP",
    "InferredNDCG",
    "infNDCG",
    "InferredPrecision",
    "iP",
    "InterpolatedInferredPrecision",
    "iPrec",
    "RBPWithResidual",
    "RBPResidual",
    "PrecisionUpper",
    "PUpper",
    "APUpperBound",
    "APUpper",
    "DesignMeasure",
    "DesignAP",
    "StatAP",
    "DesignNDCG",
    "StatNDCG",
    "DesignP",
    "StatP",
    "DesignRBP",
    "StatRBP",
    "DesignR",
    "StatR",
]
