"""``python -m ir_incomplete``: the ``ir_incomplete`` command line (see :mod:`ir_incomplete.cli`)."""

import sys

from ir_incomplete.cli import console_main

if __name__ == "__main__":
    sys.exit(console_main())
