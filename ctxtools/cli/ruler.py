"""The one place a ruler is made from a command's options: ``ruler_from_options`` (over
``decorators.ruler_options``), and ``model_encoding``, the encoding --model implies."""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import EllipsisType

from ctxtools.cli.outputs import warn


def model_encoding(model: str | None, encoding: str | None) -> str | None:
    """The encoding a ruler uses: --encoding when given, else --model's (its profile's
    encoding), else None (the default)."""
    if encoding or not model:
        return encoding
    from ctxtools import profiles

    return profiles.resolve(model).encoding


def ruler_from_options(
    opts: Mapping,
    *,
    encoding: str | None | EllipsisType = ...,
    store_root: str | os.PathLike | None = None,
    allow_special: bool = False,
    note_prefix: str | None = "note: ",
):
    """The run's ruler from the ``ruler_options`` in OPTS (a ``tokens.RulerChoice``: ``.ruler``
    and ``.notes``). ENCODING, when given, replaces ``--encoding`` (a model's encoding). Its
    notes go to stderr, each after NOTE_PREFIX; ``note_prefix=None`` leaves them to the caller."""
    from ctxtools.tokens import get_ruler

    choice = get_ruler(
        encoding=opts["encoding"] if encoding is ... else encoding,
        tokenizer=opts["tokenizer"],
        heuristic=opts["heuristic"],
        exact=opts["exact"],
        allow_special=allow_special,
        store_root=store_root,
    )
    unused = _unused_encoding(opts)
    if unused:
        choice.notes.insert(0, unused)
    if note_prefix is not None:
        warn(*choice.notes, prefix=note_prefix)
    return choice


def _unused_encoding(opts: Mapping) -> str | None:
    """What to say of an --encoding typed on the command line beside --tokenizer or
    --heuristic, which rule it out (``get_ruler``'s order): it was taken in silence. (From
    CTX_ENCODING it says nothing: a flag beats the environment.)"""
    import click

    beside = "--tokenizer" if opts.get("tokenizer") else None
    if beside is None and opts.get("heuristic"):
        beside = "--heuristic"
    if beside is None or not opts.get("encoding"):
        return None
    ctx = click.get_current_context(silent=True)
    typed = click.core.ParameterSource.COMMANDLINE
    if ctx is None or ctx.get_parameter_source("encoding") != typed:
        return None
    return f"--encoding {opts['encoding']} is not used: {beside} counts"
