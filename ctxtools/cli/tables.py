"""Click options made from an option table (``ctxtools.options``): ``options(TABLE)`` is the
decorator that declares every option of a command, in the table's order (``--help``'s).

An entry whose ``decl`` is ``"option"`` becomes ``click.option(*flags, name, ...)`` (an
``"argument"``, ``click.argument(name, ...)``) with its type (``("whole", MIN, MAX)``,
``("range", MIN, MAX)``, ``("above", MIN, MAX)``, ``("finite", KEYWORDS)``, ``("size", MIN)``,
``("choice", VALUES)``, ``("path", KEYWORDS)``; ``("name",)`` and ``("named_path", KEYWORDS)``
for a value that names something, which may not be empty: ``types.Name``, ``types.NamedPath``)
and its other click keywords; an entry that names a shared declaration gets it (with the
entry's help and click keywords where the declaration takes them; a bundle such as
``store_options``, once for all its entries). HOOKS give an option click-only keywords by
name (``cls``: a parser class).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping

import click

from ctxtools.options import Opt

# Shared declarations: (module, attribute, whether it takes the entry's help).
_SHARED: dict[str, tuple[str, str, bool]] = {
    "input_files": ("ctxtools.cli.decorators", "input_files", False),
    "role_options": ("ctxtools.cli.decorators", "role_options", False),
    "ruler_options": ("ctxtools.cli.decorators", "ruler_options", False),
    "store_options": ("ctxtools.cli.decorators", "store_options", False),
    "standard_options": ("ctxtools.cli.decorators", "standard_options", False),
    "retrieval_options": ("ctxtools.cli.retrieval", "retrieval_options", False),
    "output_option": ("ctxtools.cli.decorators", "output_option", False),
    "files_from_options": ("ctxtools.cli.decorators", "files_from_options", False),
    "copy_option": ("ctxtools.cli.clip", "copy_option", False),
    "model_option": ("ctxtools.cli.decorators", "model_option", True),
    "tokens_option": ("ctxtools.cli.decorators", "tokens_option", True),
    "limit_option": ("ctxtools.cli.decorators", "limit_option", True),
    "json_option": ("ctxtools.cli.decorators", "json_option", True),
    "exclude_option": ("ctxtools.cli.decorators", "exclude_option", True),
    "keep_going_option": ("ctxtools.cli.decorators", "keep_going_option", True),
    "profiles_file_option": ("ctxtools.cli.decorators", "profiles_file_option", True),
    "jobs_option": ("ctxtools.cli.decorators", "jobs_option", True),
    "strategy_option": ("ctxtools.cli.decorators", "strategy_option", True),
    "store_option": ("ctxtools.cli.decorators", "store_option", True),
    "max_bytes_option": ("ctxtools.cli.decorators", "max_bytes_option", True),
    "max_entries_option": ("ctxtools.cli.decorators", "max_entries_option", True),
    "query_option": ("ctxtools.cli.decorators", "query_option", True),
    "ignore_case_option": ("ctxtools.cli.decorators", "ignore_case_option", True),
    "explain_option": ("ctxtools.cli.decorators", "explain_option", True),
    "copy_flag": ("ctxtools.cli.clip", "copy_flag", True),
    "memory_option": ("ctxtools.cli.retrieval", "memory_option", True),
}


def _type(spec: tuple):
    if not spec:
        return None
    kind, *rest = spec
    if kind == "whole":
        from ctxtools.cli.types import Whole

        return Whole(*rest)
    if kind == "choice":
        return click.Choice(list(rest[0]))
    if kind == "path":
        return click.Path(**rest[0])
    if kind in ("name", "named_path"):
        from ctxtools.cli.types import Name, NamedPath

        return Name() if kind == "name" else NamedPath(**rest[0])
    if kind == "range":
        return click.IntRange(min=rest[0], max=rest[1])
    if kind == "size":
        from ctxtools.cli.types import Size

        return Size(*rest)
    if kind == "above":
        from ctxtools.cli.types import Above

        return Above(*rest)
    if kind == "finite":
        from ctxtools.cli.types import FiniteFloat

        return FiniteFloat(**rest[0])
    raise ValueError(f"unknown option type {kind!r}")


def _option(o: Opt, hook: Mapping) -> Callable:
    more = dict(o.click)
    kind = _type(o.type)
    if kind is not None:
        more["type"] = kind
    if o.decl == "argument":
        return click.argument(o.name, **more, **hook)
    return click.option(*o.flags, o.name, help=o.help, **more, **hook)


def _shared(o: Opt, hook: Mapping) -> Callable:
    module, attr, takes_help = _SHARED[o.decl]
    declare = getattr(importlib.import_module(module), attr)
    if not takes_help:
        return declare
    more = {**o.click, **hook}
    if o.help is None:
        return declare(**more)
    if o.decl == "json_option":
        return declare(help=o.help, **more)
    return declare(o.help, **more)


def declarations(table: Iterable[Opt], hooks: Mapping[str, Mapping] | None = None) -> list:
    """The click decorators of TABLE, top to bottom."""
    hooks = hooks or {}
    out: list[Callable] = []
    bundles: set[str] = set()
    for o in table:
        hook = hooks.get(o.name, {})
        if o.decl in ("option", "argument"):
            out.append(_option(o, hook))
        elif o.decl in _SHARED and not _SHARED[o.decl][2]:
            if o.decl not in bundles:
                bundles.add(o.decl)
                out.append(_shared(o, hook))
        elif o.decl in _SHARED:
            out.append(_shared(o, hook))
    return out


def options(table: Iterable[Opt], hooks: Mapping[str, Mapping] | None = None) -> Callable:
    """The decorator that declares TABLE's options on a command (see the module)."""
    decorators = declarations(table, hooks)

    def wrap(func: Callable) -> Callable:
        for dec in reversed(decorators):
            func = dec(func)
        return func

    return wrap
