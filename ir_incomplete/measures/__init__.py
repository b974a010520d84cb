"""Layer 3a: measure definitions (name, typed parameters, defaults, docstring with formula and paper).

``ALL_MEASURES`` lists one object per measure; importing :mod:`ir_incomplete` registers them with
``ir_measures`` (replacing the entries of built-ins they extend, such as ``infAP``).
"""
from ir_incomplete.measures.base import IncompleteMeasure, Param, NOT_PROVIDED
from ir_incomplete.measures.ap_family import InfAP, infAP
from ir_incomplete.measures.ap_family import (IndAP, indAP, SubAP, subAP, BprefMeasure, Bpref, BPref,
                                              Bpref10Measure, Bpref10, RankEffMeasure, RankEff)
from ir_incomplete.measures.graded_ap import GradedAP, ExtendedGradedAP, ExpectedGradedAP, GAP, xGAP, eGAP
from ir_incomplete.measures.ndcg import BootstrappedNDCG, NaiveUpperNDCG, BootNDCG, NDCGUpper

ALL_MEASURES = [infAP, indAP, subAP, Bpref, Bpref10, RankEff, GAP, xGAP, eGAP, BootNDCG, NDCGUpper]

__all__ = ["IncompleteMeasure", "Param", "NOT_PROVIDED", "ALL_MEASURES", "InfAP", "infAP",
           "IndAP", "indAP", "SubAP", "subAP", "BprefMeasure", "Bpref", "BPref", "Bpref10Measure",
           "Bpref10", "RankEffMeasure", "RankEff",
           "GradedAP", "ExtendedGradedAP", "ExpectedGradedAP", "GAP", "xGAP", "eGAP",
           "BootstrappedNDCG", "NaiveUpperNDCG", "BootNDCG", "NDCGUpper"]
