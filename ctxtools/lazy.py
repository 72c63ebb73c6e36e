"""Lazy re-exports for a package's ``__init__``: each public name is imported from its
module at first use, so that importing the package costs nothing at start-up.

    __getattr__, __dir__ = lazy_exports(__name__, {"match": ("Matcher", ...), ...})
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping


def lazy_exports(
    package: str, modules: Mapping[str, Iterable[str]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of PACKAGE, which gives each name of
    ``modules[M]`` from its module ``PACKAGE.M`` (kept in the package once loaded)."""
    exports = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
