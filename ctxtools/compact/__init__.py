"""Compaction of agent transcripts: elide old tool results, cut at a valid place, digest.

Modules, imports going downward: ``transcript`` (formats, shapes, token counts, tool-call
structure); ``elide`` (stash + placeholders, ``--repair``), ``digest`` (the must-preserve
digest), ``accept`` (the acceptance gate and the summarizer runner); ``layout`` (head,
protected tail, allowed cuts, ``--keep-tool``); ``stages`` (measure, plan the elisions, find
the cut, summarise, apply -- each returning a small record); ``plan`` (``compact()``: the
stages in order, the outcome and its report); ``run`` (one compaction end to end: link
check or repair, stages, output choice, summary line, report -- ``compact_transcript()``);
``working_set`` (the ``--evict`` JSON Lines input).

The names below are loaded on first use: importing one module of the package (the gate,
say, as ``ctxtools.memory`` does) does not load the whole compactor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxtools.compact.plan import COMPACTED, NO_HEADROOM, UNCHANGED, Options, Outcome, compact

__all__ = ["COMPACTED", "NO_HEADROOM", "UNCHANGED", "Options", "Outcome", "compact"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from ctxtools.compact import plan

        return getattr(plan, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
