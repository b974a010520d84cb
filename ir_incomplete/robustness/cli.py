"""``ir_incomplete robustness``, now :mod:`ir_incomplete.cli.robustness`; ``main`` and ``build_parser`` stay
importable from here (this module is not imported by the package)."""

from ir_incomplete.cli.robustness import build_parser, main

__all__ = ["main", "build_parser"]
