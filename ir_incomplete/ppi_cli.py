"""``ir_incomplete ppi``, now :mod:`ir_incomplete.cli.ppi`; ``main`` stays importable from here and
``python -m ir_incomplete.ppi_cli`` still runs it (this module is not imported by the package)."""

from ir_incomplete.cli.ppi import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main(sys.argv[1:]))
