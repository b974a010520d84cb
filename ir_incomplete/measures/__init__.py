"""Layer 3a: measure definitions (name, typed parameters, defaults, docstring with formula and paper).

``ALL_MEASURES`` lists one object per measure; importing :mod:`ir_incomplete` registers them with
``ir_measures`` (replacing the entries of built-ins they extend, such as ``infAP``).
``REFERENCE_MEASURES`` lists the classes of the built-in measures computed natively (``AP``, ``nDCG``,
``P``, …; :mod:`ir_incomplete.measures.reference`); they are not registered.
"""

from ir_incomplete.measures.ap_family import (
    BPref,
    Bpref,
    Bpref10,
    Bpref10Measure,
    BprefMeasure,
    IndAP,
    InfAP,
    RankEff,
    RankEffMeasure,
    SubAP,
    indAP,
    infAP,
    subAP,
)
from ir_incomplete.measures.base import NOT_PROVIDED, IncompleteMeasure, Param
from ir_incomplete.measures.bootstrap import (
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
from ir_incomplete.measures.design_based import (
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
from ir_incomplete.measures.graded_ap import GAP, ExpectedGradedAP, ExtendedGradedAP, GradedAP, eGAP, xGAP
from ir_incomplete.measures.ndcg import BootNDCG, BootstrappedNDCG, NaiveUpperNDCG, NDCGUpper
from ir_incomplete.measures.reference import REFERENCE_MEASURES
from ir_incomplete.measures.sampled import APUpper, PUpper, RBPResidual, infNDCG, iP, iPrec, xinfAP

ALL_MEASURES = [infAP, indAP, subAP, Bpref, Bpref10, RankEff, GAP, xGAP, eGAP, BootNDCG, NDCGUpper]
ALL_MEASURES += [xinfAP, infNDCG, iP, iPrec, RBPResidual, PUpper, APUpper]
ALL_MEASURES += [Q, BootAP, BootP, BootRBP, BootQ]
ALL_MEASURES += [StatAP, StatNDCG, StatP, StatRBP, StatR]

__all__ = [
    "IncompleteMeasure",
    "Param",
    "NOT_PROVIDED",
    "ALL_MEASURES",
    "REFERENCE_MEASURES",
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
    "xinfAP",
    "infNDCG",
    "iP",
    "iPrec",
    "RBPResidual",
    "PUpper",
    "APUpper",
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
    "DesignMeasure",
    "DesignAP",
    "DesignNDCG",
    "DesignP",
    "DesignRBP",
    "DesignR",
    "StatAP",
    "StatNDCG",
    "StatP",
    "StatRBP",
    "StatR",
]
