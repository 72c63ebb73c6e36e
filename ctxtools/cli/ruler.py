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
    if note_prefix is not None:
        warn(*choice.notes, prefix=note_prefix)
    return choice
