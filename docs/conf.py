"""Sphinx configuration of the ir_incomplete reference manual.

Built with ``python -m sphinx -W -b html docs docs/_build/html`` (and ``-b doctest``)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))
sys.path.insert(0, os.path.dirname(HERE))

import ir_incomplete  # noqa: E402

project = "ir_incomplete"
author = "ir_incomplete contributors"
copyright = "ir_incomplete contributors"
release = version = ir_incomplete.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.doctest",
    "measure_docs",
]
exclude_patterns = ["_build"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": False}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
suppress_warnings = ["ref.python"]
nitpicky = False
default_role = "literal"
html_theme = "alabaster"
html_title = f"ir_incomplete {release}"
html_static_path: list = []
doctest_global_setup = "import ir_incomplete, ir_measures, pandas as pd"
