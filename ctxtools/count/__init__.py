"""ctx-count's library: what the ruler reports, in one package.

``report`` (per-input counts, their total, the window usage and its gates, the pack budget
and the model profiles as text or JSON) ← ``messages`` (a conversation counted as the chat
APIs count it) and ``tree`` (``--tree``: the map's file listing, summed up the tree).
Nothing here prints: ``ctxtools.cli.count`` (the click command) and
``ctxtools.cli.count_fast`` (the plainest calls, without click) print what these return.
Names are re-exported lazily: importing the package costs nothing at start-up.
"""

from __future__ import annotations

from ctxtools.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "report": (
            "Report",
            "count_file",
            "format_counts",
            "transcript_counts",
            "transcript_counts_of",
        ),
        "messages": ("TranscriptCount", "count_transcript", "count_jsonl"),
        "tree": ("TreeCount", "count_tree"),
    },
)
