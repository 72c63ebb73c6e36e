"""The ruler: exact and heuristic token counters, and streaming counts of bytes.

The package, from the top down:

* ``choice`` -- ``get_ruler``, which chooses the one ruler of a run, over
* ``rulers`` -- the counters (``TiktokenRuler``, ``HFRuler``, ``HeuristicRuler``) and
  ``local``, the counters of open models from their packages' files;
* ``loading`` -- the exact counters built offline: verified tiktoken encoding files and
  their cached ranks, a ``tokenizer.json``, bpe-openai's native window encoder;
* ``stream`` -- ``count_stream``: tokens, characters, lines and bytes of a binary stream
  of any size, in bounded memory;
* ``cutter`` (with ``cuts`` and ``runs``) -- where a big input may be cut so that the
  pieces' exact counts add up to the whole count;
* ``ids`` -- token ids and back, and the first or last N tokens of a text (ctx-count
  ``--ids``, ``--decode``, ``--head``, ``--tail``).

Imports go downward only: ``choice`` -> ``local`` -> ``rulers`` -> ``loading``; ``stream`` ->
``rulers``, and ``stream`` imports ``cutter`` -> ``runs`` -> ``cuts`` when an input is big
enough to cut. The names below are re-exported lazily, so ``from ctxtools.tokens import
get_ruler`` loads only what it needs (start-up time is part of every command).
"""

from __future__ import annotations

import importlib

_HOMES = {
    "DEFAULT_ENCODING": "rulers",
    "HEURISTIC": "rulers",
    "heuristic_parts": "rulers",
    "heuristic_count": "rulers",
    "Tally": "rulers",
    "Ruler": "rulers",
    "HeuristicRuler": "rulers",
    "TiktokenRuler": "rulers",
    "HFRuler": "rulers",
    "RulerChoice": "choice",
    "get_ruler": "choice",
    "OFFLINE_ENCODINGS": "loading",
    "verified_encoding_bytes": "loading",
    "parse_tiktoken_file": "loading",
    "mergeable_ranks": "loading",
    "load_encoding": "loading",
    "load_hf_tokenizer": "loading",
    "window_encoder": "loading",
    "Counts": "stream",
    "line_count": "stream",
    "iter_text_pieces": "stream",
    "count_stream": "stream",
    "count_text": "stream",
    "default_jobs": "stream",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
