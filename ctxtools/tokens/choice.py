"""The choice of the one ruler of a run (``get_ruler``): a tokenizer file, the heuristic,
a tiktoken encoding, or an open model's counter (``local``), with a note when it falls back.

It sits above the rulers it chooses from (``rulers``, and ``local``, whose counters are
rulers too), so that neither imports the other back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ctxtools.errors import TokenizerError
from ctxtools.tokens.loading import (
    _KNOWN_ONLINE_ONLY,
    OFFLINE_ENCODINGS,
    load_encoding,
    load_hf_tokenizer,
)
from ctxtools.tokens.rulers import (
    DEFAULT_ENCODING,
    HEURISTIC,
    HeuristicRuler,
    HFRuler,
    Ruler,
    TiktokenRuler,
)


@dataclass
class RulerChoice:
    """A ruler plus the notes a caller should show (e.g. why it fell back to the heuristic)."""

    ruler: Ruler
    notes: list[str] = field(default_factory=list)


def get_ruler(
    *,
    encoding: str | None = None,
    tokenizer: str | None = None,
    heuristic: bool = False,
    exact: bool = False,
    allow_special: bool = False,
    store_root: str | os.PathLike | None = None,
) -> RulerChoice:
    """Choose the one ruler of a run.

    Order: ``tokenizer`` > ``heuristic`` > tiktoken ``encoding`` (default cl100k_base).
    When the encoding cannot be had offline, fall back to the heuristic with a note -- or
    raise when ``exact`` is set. An unknown encoding name is always an error.
    """
    if tokenizer:
        return RulerChoice(HFRuler(load_hf_tokenizer(tokenizer), tokenizer))
    if heuristic:
        _check_heuristic(exact)
        return RulerChoice(HeuristicRuler())
    name = encoding or DEFAULT_ENCODING
    if name == HEURISTIC:
        return RulerChoice(HeuristicRuler())
    from ctxtools.tokens.local import LOCAL

    if name in LOCAL:  # an open model's tokenizer, shipped by a package (tokens.local)
        from ctxtools.tokens.local import local_ruler

        return RulerChoice(local_ruler(name))
    _check_encoding_name(name)
    try:
        return RulerChoice(TiktokenRuler(load_encoding(name, store_root), allow_special))
    except TokenizerError as exc:
        if exact:
            raise
        return RulerChoice(
            HeuristicRuler(),
            [f"no exact {name} counter ({exc}); counts are approximate (heuristic)"],
        )


def check_choice(
    *,
    encoding: str | None = None,
    tokenizer: str | None = None,
    heuristic: bool = False,
    exact: bool = False,
) -> None:
    """Raise the TokenizerError ``get_ruler`` would raise for these options and can know
    without loading anything: contradicting flags, a tokenizer file that is not there, an
    encoding no one knows. A command that counts only with some other option (--tokens)
    asks this first, so that a mistyped ruler option is said whether or not it is used."""
    if tokenizer:
        from ctxtools.tokens.loading import tokenizer_file

        tokenizer_file(tokenizer)
        return
    if heuristic:
        _check_heuristic(exact)
        return
    name = encoding or DEFAULT_ENCODING
    from ctxtools.tokens.local import LOCAL

    if name != HEURISTIC and name not in LOCAL:
        _check_encoding_name(name)


def _check_heuristic(exact: bool) -> None:
    if exact:
        raise TokenizerError("--heuristic and --exact contradict each other")


def _check_encoding_name(name: str) -> None:
    if name not in OFFLINE_ENCODINGS and name not in _KNOWN_ONLINE_ONLY:
        raise TokenizerError(
            f"unknown encoding {name!r}",
            hint="known: " + ", ".join(sorted(OFFLINE_ENCODINGS)) + "; " + _local_names(),
        )


def _local_names() -> str:
    from ctxtools.tokens.local import EXTRA, LOCAL

    return ", ".join(LOCAL) + f" with ctxtools[{EXTRA}]"
