"""Deferred imports keep ``import ir_incomplete`` light (pandas is loaded on first use)."""

from __future__ import annotations

import importlib


class LazyModule:
    """Stands in for a module and imports it on first attribute access."""

    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, attr):
        module = self.__dict__.get("_module")
        if module is None:
            module = importlib.import_module(self.__dict__["_name"])
            self.__dict__["_module"] = module
        return getattr(module, attr)


pandas = LazyModule("pandas")
