"""The fixed parts of a transcript that compaction plans around, before any token is counted.

``find_layout`` gives the head (system prompt, first user message, earlier digests: never
touched), where the protected tail starts (the last ``keep_recent`` turns), the cuts stage 2
may make, each message's origin (the message holding the call a result answers), and which
calls and results belong to the ``--keep-tool`` tools (``KeepTools``). ``elidable`` lists the
tool results of a message that stage 1 may replace by a placeholder.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxtools.compact.digest import is_digest
from ctxtools.compact.elide import is_placeholder
from ctxtools.compact.transcript import (
    ANTHROPIC,
    OPENAI,
    Transcript,
    links,
    tool_results,
    tool_uses,
)


def head_end(tr: Transcript) -> int:
    """Index of the last head message: the first user message plus earlier digests after it
    (or the leading system messages when there is no user message; -1 for none)."""
    msgs = tr.messages
    first_user = next(
        (i for i, m in enumerate(msgs) if m["role"] == "user" and not tool_results(m)), None
    )
    if first_user is None:
        end = -1
        while end + 1 < len(msgs) and msgs[end + 1]["role"] in ("system", "developer"):
            end += 1
        return end
    end = first_user
    while end + 1 < len(msgs) and is_digest(msgs[end + 1]):
        end += 1
    return end


def protected_start(tr: Transcript, head: int, keep_recent: int) -> int:
    """Index of the first message of the protected tail: the last KEEP_RECENT turns (a turn
    starts at an assistant message); ``len(messages)`` for none."""
    msgs = tr.messages
    if keep_recent <= 0:
        return len(msgs)
    turns = [i for i in range(head + 1, len(msgs)) if msgs[i]["role"] == "assistant"]
    if len(turns) >= keep_recent:
        return turns[-keep_recent]
    return head + 1


class KeepTools:
    """Which calls and results belong to the ``--keep-tool`` tools (by the name of the call)."""

    def __init__(self, tr: Transcript, origin: dict[int, int], names: tuple[str, ...]) -> None:
        self.tr = tr
        self.origin = origin
        self.names = frozenset(names)

    def __bool__(self) -> bool:
        return bool(self.names)

    def call(self, call: object) -> bool:
        """Whether CALL (an OpenAI tool call or an Anthropic tool_use block) is kept."""
        if not isinstance(call, dict):
            return False
        if self.tr.format == OPENAI:
            fn = call.get("function")
            return isinstance(fn, dict) and fn.get("name") in self.names
        return call.get("type") == "tool_use" and call.get("name") in self.names

    def result(self, j: int, call_id: object) -> bool:
        """Whether the result CALL_ID in message J answers a kept call."""
        if not self.names:
            return False
        o = self.origin.get(j, -1)
        if o < 0:
            return False
        owner = self.tr.messages[o]
        calls = (owner.get("tool_calls") or []) if self.tr.format == OPENAI else tool_uses(owner)
        return any(self.call(c) and c.get("id") == call_id for c in calls)

    def count(self, lo: int, hi: int) -> int:
        """Results of kept tools in messages (LO, HI): the ones stage 1 leaves in place."""
        if not self.names:
            return 0
        found = 0
        for j in range(lo + 1, min(hi, len(self.tr.messages))):
            msg = self.tr.messages[j]
            if self.tr.format == OPENAI:
                found += msg["role"] == "tool" and self.result(j, msg.get("tool_call_id"))
            else:
                found += sum(self.result(j, b.get("tool_use_id")) for b in tool_results(msg))
        return found

    def kept_part(self, j: int) -> dict | None:
        """Message J as it stays when a cut drops it: its kept calls, or its kept results
        (the message itself when that is all of it), or None when it holds neither."""
        msg = self.tr.messages[j]
        role = msg["role"]
        if self.tr.format == OPENAI:
            if role == "tool":
                return msg if self.result(j, msg.get("tool_call_id")) else None
            calls = msg.get("tool_calls")
            if role != "assistant" or not isinstance(calls, list):
                return None
            kept = [c for c in calls if self.call(c)]
            if not kept:
                return None
            return msg if len(kept) == len(calls) else dict(msg, tool_calls=kept)
        content = msg.get("content")
        if not isinstance(content, list):
            return None
        if role == "assistant":
            uses = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
            if not any(self.call(b) for b in uses):
                return None
            gone = {id(b) for b in uses if not self.call(b)}
            blocks = [b for b in content if id(b) not in gone]
            return msg if len(blocks) == len(content) else dict(msg, content=blocks)
        results = [b for b in tool_results(msg) if self.result(j, b.get("tool_use_id"))]
        if not results:
            return None
        return msg if len(results) == len(content) else dict(msg, content=results)


def elidable(tr: Transcript, i: int, keep: KeepTools) -> list[tuple[int | None, object]]:
    """The tool results of message I that may be elided: (block index or None, content)."""
    msg = tr.messages[i]
    if tr.format == OPENAI:
        if (
            msg["role"] == "tool"
            and not is_placeholder(msg.get("content"))
            and not keep.result(i, msg.get("tool_call_id"))
        ):
            return [(None, msg.get("content"))]
        return []
    content = msg.get("content")
    if msg["role"] != "user" or not isinstance(content, list):
        return []
    out: list[tuple[int | None, object]] = []
    for bi, b in enumerate(content):
        if isinstance(b, dict) and b.get("type") == "tool_result":
            c = b.get("content", "")
            if not is_placeholder(c) and not keep.result(i, b.get("tool_use_id")):
                out.append((bi, c))
    return out


def valid_cuts(tr: Transcript, head: int, prot: int, origin: dict[int, int]) -> list[int]:
    """Allowed cuts in (head + 1, prot], ascending: the kept part starts at the cut on a
    message its API accepts there, and holds no result whose call was dropped."""
    msgs = tr.messages
    n = len(msgs)
    inf = n + 1
    min_origin = [inf] * (n + 1)  # the earliest origin of any result from j on
    for j in range(n - 1, -1, -1):
        o = origin.get(j, inf)
        min_origin[j] = min(min_origin[j + 1], o if o >= 0 else -1)
    cuts = []
    for k in range(head + 2, prot + 1):
        if k < n:
            role = msgs[k]["role"]
            if tr.format == OPENAI and role == "tool":
                continue
            if tr.format == ANTHROPIC and role != "assistant":
                continue
        if min_origin[k] < k:
            continue
        cuts.append(k)
    return cuts


@dataclass(frozen=True)
class Layout:
    """The head, the protected tail and the allowed cuts of one transcript."""

    head: int  # index of the last head message (-1: no head)
    protected: int  # index of the first protected message (len(messages): none)
    cuts: list[int]  # allowed cuts, ascending (a cut: the index of the first kept message)
    keep: KeepTools

    @property
    def last_cut(self) -> int:
        return self.cuts[-1] if self.cuts else -1


def find_layout(tr: Transcript, keep_recent: int, keep_tools: tuple[str, ...] = ()) -> Layout:
    """The layout of TR with the last KEEP_RECENT turns protected and KEEP_TOOLS kept."""
    head = head_end(tr)
    prot = protected_start(tr, head, keep_recent)
    origin = links(tr).origin
    return Layout(head, prot, valid_cuts(tr, head, prot, origin), KeepTools(tr, origin, keep_tools))
