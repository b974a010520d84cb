"""Layer 3a: measure definitions (name, typed parameters, defaults, docstring with formula and paper).

``ALL_MEASURES`` lists one object per measure; importing :mod:`ir_incomplete` registers them with
``ir_measures`` (replacing the entries of built-ins they extend, such as ``infAP``).
"""
from ir_incomplete.measures.base import IncompleteMeasure, Param, NOT_PROVIDED
from ir_incomplete.measures.ap_family import InfAP, infAP

ALL_MEASURES = [infAP]

__all__ = ["IncompleteMeasure", "Param", "NOT_PROVIDED", "ALL_MEASURES", "InfAP", "infAP"]
