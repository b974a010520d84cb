"""Build hook only (the metadata is in setup.cfg): ship ``ir_incomplete-autoload.pth``.

The ``.pth`` file makes ``import ir_measures`` load the ``ir_incomplete`` plugin (see
``_ir_incomplete_autoload.py``); it goes to the root of site-packages in regular and editable installs.
"""

import os

from setuptools import setup
from setuptools.command.build_py import build_py

PTH_NAME = "ir_incomplete-autoload.pth"
# one line; a missing module (e.g. a removed editable checkout) must not print errors at every start-up
PTH_LINE = 'import sys; exec("try:\\n import _ir_incomplete_autoload\\nexcept Exception:\\n pass")\n'


class build_py_with_pth(build_py):
    """build_py that also writes the autoload ``.pth`` next to the packages."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            # editable wheels are assembled from the install directory, not from build_lib
            target = self.get_finalized_command("install").install_lib
        else:
            target = self.build_lib
        os.makedirs(target, exist_ok=True)
        path = os.path.join(target, PTH_NAME)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(PTH_LINE)
        self._pth_outputs = [path]

    def get_outputs(self, include_bytecode=True):
        return list(super().get_outputs(include_bytecode)) + list(getattr(self, "_pth_outputs", []))


setup(cmdclass={"build_py": build_py_with_pth})
