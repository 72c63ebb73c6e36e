"""The token count of a transcript, as ctx-compact and the chat APIs see it.

A transcript (OpenAI messages: a JSON list, ``{"messages": [...]}`` or JSON Lines; Anthropic
messages with a top-level ``system``) is counted the way ctx-compact counts it, with the
same code (``ctxtools.compact.transcript``): for each message, the ruler's count of the text
the model reads (content, tool-call names and arguments, tool results) plus the
per-message framing overhead, plus the tokens that prime the reply. The JSON syntax around
the messages (quotes, keys, escapes) is not counted: the API never shows it to the model.

Counting the same bytes as plain text (``ctx-count`` without ``--messages``) measures the
file, which is what a prompt that pastes the JSON costs; this module measures the
conversation.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TranscriptCount:
    format: str  # "openai" or "anthropic"
    shape: str  # "list", "messages" (a {"messages": ...} object) or "jsonl"
    messages: int
    tokens: int


def count_transcript(data: bytes, ruler, fmt: str | None = None) -> TranscriptCount:
    """Parse DATA as a transcript (FMT: ``openai``, ``anthropic``, or None to detect) and
    count it with RULER. Not a transcript: an ``InputError`` saying why."""
    from ctxtools.compact.transcript import TokenCounter, load

    tr = load(data, fmt)
    tokens = TokenCounter(ruler).transcript(tr)
    return TranscriptCount(tr.format, tr.shape, len(tr.messages), tokens)
