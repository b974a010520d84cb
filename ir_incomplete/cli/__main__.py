"""``python -m ir_incomplete.cli``: the ``ir_incomplete`` command line, as ``python -m ir_incomplete``."""

import sys

from ir_incomplete.cli import console_main

if __name__ == "__main__":
    sys.exit(console_main())
