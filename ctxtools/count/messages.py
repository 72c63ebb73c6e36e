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
    notes: tuple[str, ...] = ()  # why the count is not exact (a long text's cut), if it is not

    def row(self, chars: int, lines: int, size: int) -> dict:
        """A row of ctx-count: this count with the input's CHARS, LINES and bytes (SIZE);
        ``exact``/``note`` as ``tokens.Counts.as_dict`` gives them, when it is not exact."""
        out = {"tokens": self.tokens, "chars": chars, "lines": lines, "bytes": size}
        out.update(messages=self.messages, format=self.format)
        if self.notes:
            out.update(exact=False, note="; ".join(self.notes))
        return out


def count_transcript(data: bytes, ruler, fmt: str | None = None) -> TranscriptCount:
    """Parse DATA as a transcript (FMT: ``openai``, ``anthropic``, or None to detect) and
    count it with RULER. Not a transcript: an ``InputError`` saying why."""
    from ctxtools.compact.transcript import TokenCounter, load

    tr = load(data, fmt)
    counter = TokenCounter(ruler)
    tokens = counter.transcript(tr)
    return TranscriptCount(tr.format, tr.shape, len(tr.messages), tokens, tuple(counter.notes))


MEMO_CHARS = 16 << 20  # texts kept for counting repeats once (cleared past this many chars)
MEMO_TEXTS = 100_000  # ... or this many texts
BATCH = 1024  # messages counted together (two threads when the ruler allows)


class _Checks:
    """What ``transcript.load`` checks across all the messages of JSON Lines, gathered one
    message at a time: its first error of each kind, raised at the end in load's order."""

    def __init__(self) -> None:
        self.syntax: Exception | None = None  # a line that is no JSON, or no object
        self.no_role: Exception | None = None
        self.fields: Exception | None = None
        self.first_of_role: dict[str, int] = {}
        self.openai = False  # a sign of the OpenAI format (roles, tool_calls)
        self.blocks: set[str] = set()

    def message(self, i: int, msg: dict) -> bool:
        """Note message I; whether it can be counted."""
        from ctxtools.compact.transcript import _block_types, check_message_fields
        from ctxtools.errors import InputError

        role = msg.get("role")
        if not isinstance(role, str):
            if self.no_role is None:
                self.no_role = InputError(f'message {i} has no "role"')
            return False
        self.first_of_role.setdefault(role, i)
        self.openai = self.openai or role in ("system", "developer", "tool") or "tool_calls" in msg
        self.blocks |= _block_types([msg])
        if self.fields is None:
            try:
                check_message_fields(i, msg)
            except InputError as exc:
                self.fields = exc
        return True

    def finish(self) -> str:
        """The format, once every message was seen; the first error in load's order."""
        from ctxtools.compact.transcript import ANTHROPIC, ANTHROPIC_ROLES, OPENAI, OPENAI_ROLES
        from ctxtools.errors import InputError

        for exc in (self.syntax, self.no_role):
            if exc is not None:
                raise exc
        fmt = OPENAI if self.openai or not self.blocks & {"tool_use", "tool_result"} else ANTHROPIC
        allowed = OPENAI_ROLES if fmt == OPENAI else ANTHROPIC_ROLES
        bad = sorted((i, r) for r, i in self.first_of_role.items() if r not in allowed)
        if bad:
            i, role = bad[0]
            raise InputError(
                f"message {i}: unknown role {role!r} for the {fmt} format",
                hint="roles: " + ", ".join(allowed),
            )
        if self.fields is not None:
            raise self.fields
        return fmt


def count_jsonl(lines, ruler) -> TranscriptCount:
    """The count of a JSON Lines transcript given as LINES, ``(number, offset, bytes)`` of
    each non-blank line (OFFSET: of its first byte), as ``count_transcript`` gives it for
    the whole text, in memory that does not grow with it: one message at a time. The
    errors are load's, in its order (invalid UTF-8 anywhere first, then the first line that
    is not a message object, then the first message without a role, ...)."""
    import json

    from ctxtools.compact.transcript import (
        MESSAGE_OVERHEAD,
        REPLY_PRIMING,
        TokenCounter,
        _loads,
        message_text,
    )
    from ctxtools.errors import InputError

    checks = _Checks()
    counter = TokenCounter(ruler)
    texts: list[str] = []
    tokens = count = 0

    def flush() -> int:
        counter.prefill(texts)
        n = sum(MESSAGE_OVERHEAD + counter.text(t) for t in texts)
        counter.trim(MEMO_CHARS, MEMO_TEXTS)
        texts.clear()
        return n

    for n, offset, line in lines:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:  # first in load's order, wherever it is
            raise InputError(f"invalid UTF-8 at byte {offset + exc.start}") from None
        if checks.syntax is not None:
            continue  # only looking for invalid UTF-8 now
        try:
            obj, _std = _loads(line)
        except (json.JSONDecodeError, InputError) as exc:  # told as load tells it, at the end
            checks.syntax = _line_error(exc, n)
            continue
        if not isinstance(obj, dict):
            checks.syntax = InputError(
                f"line {n}: a JSON Lines transcript has one message object a line"
            )
            continue
        count += 1
        if checks.message(count, obj):
            texts.append(message_text(obj))
            if len(texts) >= BATCH:
                tokens += flush()
    tokens += flush()
    fmt = checks.finish()
    notes = tuple(counter.notes)
    return TranscriptCount(fmt, "jsonl", count, tokens + REPLY_PRIMING, notes)


def _line_error(exc: Exception, n: int) -> Exception:
    import json

    from ctxtools.compact.transcript import _json_error

    if isinstance(exc, json.JSONDecodeError):
        return _json_error(exc, n - 1)
    return exc
