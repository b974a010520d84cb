"""The ``ir_incomplete measures`` listing, now :mod:`ir_incomplete.cli.measures`; its names stay
importable from here (this module is not imported by the package)."""

from ir_incomplete.cli.measures import measure_example, measure_rows, measures_main

__all__ = ["measure_example", "measure_rows", "measures_main"]
