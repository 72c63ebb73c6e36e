"""Lazy re-exports for a package's ``__init__``: each public name is imported from its
module at first use, so that importing the package costs nothing at start-up.

    __getattr__, __dir__ = lazy_exports(__name__, {"Matcher": "match", ...})
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of PACKAGE, whose name N is
    ``PACKAGE.<exports[N]>.N`` (kept in the package once loaded)."""

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
