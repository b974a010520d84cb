"""``ir_incomplete pool`` and ``ir_incomplete agreement``, now :mod:`ir_incomplete.cli.judging`; their names
stay importable from here (this module is not imported by the package)."""

from ir_incomplete.cli.judging import CLI_METHODS, agreement_main, header_line, main, parse_strata, pool_main  # noqa: F401

__all__ = ["pool_main", "agreement_main", "parse_strata", "header_line"]
