"""Compaction of agent transcripts: elide old tool results, cut at a valid place, digest.

Modules: ``transcript`` (formats, shapes, token counts, tool-call structure), ``elide``
(stash + placeholders, ``--repair``), ``digest`` (the must-preserve digest), ``accept`` (the
acceptance gate and the summarizer runner), ``plan`` (the two stages, ``compact()``),
``run`` (one compaction end to end: link check or repair, stages, output choice, report --
``compact_transcript()``), ``working_set`` (the ``--evict`` JSON Lines input).
"""

from ctxtools.compact.plan import COMPACTED, NO_HEADROOM, UNCHANGED, Options, Outcome, compact

__all__ = ["COMPACTED", "NO_HEADROOM", "UNCHANGED", "Options", "Outcome", "compact"]
