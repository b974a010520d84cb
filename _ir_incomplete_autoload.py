"""Load ``ir_incomplete`` into ``ir_measures`` the first time ``ir_measures`` is imported.

``ir_measures`` (0.4) has no plugin loading, so its command line and any program that only imports
``ir_measures`` would not know our measures. The installed ``ir_incomplete-autoload.pth`` imports this
module when Python starts; it only puts :class:`AutoloadFinder` at the front of ``sys.meta_path``
(nothing else is imported, so unrelated programs start as fast as before). When a program imports
``ir_measures`` (also ``python -m ir_measures``), the finder removes itself, lets the import run as
usual, then imports ``ir_incomplete`` (which registers its measures and provider).

Turn it off with ``IR_INCOMPLETE_AUTOLOAD=0``; ``IR_INCOMPLETE_PATCH_PARSERS=0`` (which keeps
``ir_measures``' parsers untouched) turns it off too. ``import ir_incomplete`` still loads the plugin.
"""

import os
import sys

__all__ = ["AutoloadFinder", "enabled", "install", "installed", "uninstall", "AUTOLOAD_ENV", "PATCH_PARSERS_ENV"]

AUTOLOAD_ENV = "IR_INCOMPLETE_AUTOLOAD"
PATCH_PARSERS_ENV = "IR_INCOMPLETE_PATCH_PARSERS"
_OFF = ("0", "false", "no", "off")
_TARGET = "ir_measures"
_PLUGIN = "ir_incomplete"


def enabled(environ=None) -> bool:
    """False when ``IR_INCOMPLETE_AUTOLOAD`` or ``IR_INCOMPLETE_PATCH_PARSERS`` is 0/false/no/off."""
    environ = os.environ if environ is None else environ
    return not any(environ.get(name, "1").strip().lower() in _OFF for name in (AUTOLOAD_ENV, PATCH_PARSERS_ENV))


def _load_plugin() -> None:
    if _PLUGIN in sys.modules:  # already loaded, or being imported (it imports ir_measures itself)
        return
    try:
        __import__(_PLUGIN)
    except Exception as exc:  # a broken plugin must not break ``import ir_measures``
        import warnings

        warnings.warn(
            f"ir_measures was imported without the ir_incomplete plugin, which failed to load: {exc!r} "
            f"(set {AUTOLOAD_ENV}=0 to stop loading it)",
            RuntimeWarning,
            stacklevel=2,
        )


class _LoaderThenPlugin:
    """Wraps the real loader of ``ir_measures``: runs it, restores it on the module, loads the plugin."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        uninstall()
        try:
            self.loader.exec_module(module)
        finally:
            module.__loader__ = self.loader
            if getattr(module, "__spec__", None) is not None:
                module.__spec__.loader = self.loader
        _load_plugin()

    def __getattr__(self, name):  # get_resource_reader, is_package, ... of the real loader
        if name == "loader":
            raise AttributeError(name)
        return getattr(self.loader, name)


class AutoloadFinder:
    """A ``sys.meta_path`` finder that only reacts to ``ir_measures`` (and then removes itself)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _TARGET:
            return None
        # the finder stays until ir_measures is executed: ``python -m ir_measures`` looks the spec up
        # (importlib.util.find_spec) without executing it, then imports the package
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is None or isinstance(finder, AutoloadFinder):
                continue
            spec = find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            uninstall()
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            uninstall()
            return spec
        spec.loader = _LoaderThenPlugin(spec.loader)
        return spec


def installed() -> bool:
    return any(isinstance(f, AutoloadFinder) for f in sys.meta_path)


def uninstall() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, AutoloadFinder)]


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (idempotent; no-op when turned off or already loaded)."""
    if not enabled() or _TARGET in sys.modules or installed():
        return
    sys.meta_path.insert(0, AutoloadFinder())


install()
