"""Stage 1 helpers: stash tool results in the store and put a one-line placeholder in their place.

Handles are named from their content (``compact-`` + the first 16 hex digits of the SHA-256
of the stashed bytes), so a rerun on the same transcript creates the same handles and writes
byte-identical output. What is stashed is exactly what the model would have read: the UTF-8
bytes of a string result, or the compact JSON of a result given as a list of parts/blocks.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Protocol

from ctxtools.compact.transcript import (
    ANTHROPIC,
    OPENAI,
    Links,
    Transcript,
    openai_call_ids,
    tool_results,
    tool_uses,
)
from ctxtools.errors import CtxError, InputError

NAME_PREFIX = "compact-"
REF_SHA_LEN = 12  # the store's ref carries the first 12 hex digits of the SHA-256


class Stash(Protocol):
    """Where elided results go: ``put(data, name) -> ref``; ``put_many`` stashes a batch of
    ``(data, name, type)`` and returns their refs in order."""

    def put(self, data: bytes, name: str, type: str | None = None) -> str: ...

    def put_many(self, items: list[tuple[bytes, str, str | None]]) -> list[str]: ...


class MemoryStash:
    """A stash that keeps everything in a dict (library users, tests, dry runs)."""

    def __init__(self, session: str = "default") -> None:
        self.session = session
        self.items: dict[str, bytes] = {}

    def put(self, data: bytes, name: str, type: str | None = None) -> str:
        self.items[name] = data
        return predict_ref(self.session, data)

    def put_many(self, items: list[tuple[bytes, str, str | None]]) -> list[str]:
        return [self.put(data, name, type=t) for data, name, t in items]

    def read(self, ref: str) -> bytes:
        name = ref.split("/", 1)[-1].split("@", 1)[0]
        return self.items[name]


class StoreStash:
    """The handle store (``ctxtools.store.HandleStore``) as a stash."""

    def __init__(self, root: str | os.PathLike | None, session: str = "default") -> None:
        from ctxtools.store import HandleStore

        self.store = HandleStore(root)
        self.session = session

    def put(self, data: bytes, name: str, type: str | None = None) -> str:
        return self.put_many([(data, name, type)])[0]

    def _stashed(self, data: bytes, name: str) -> str | None:
        """The ref of NAME if it already holds DATA (a rerun), else None."""
        sha = hashlib.sha256(data).hexdigest()
        try:
            record = self.store.record(f"ctx:{self.session}/{name}", self.session)
        except CtxError:
            return None
        if record.get("sha256") == sha and self.store.blob_path(sha).is_file():
            return record["ref"]
        return None

    def put_many(self, items: list[tuple[bytes, str, str | None]]) -> list[str]:
        """Stash every (data, name, type) in one store batch (``HandleStore.put_many``);
        their refs. Names that already hold the same bytes are not written again."""
        refs: list[str | None] = [self._stashed(data, name) for data, name, _t in items]
        todo = [k for k, ref in enumerate(refs) if ref is None]
        batch = []
        for k in todo:
            data, name, t = items[k]
            batch.append((data, {"name": name, "session": self.session, "type": t}))
        cards = self.store.put_many(batch)
        for k, card in zip(todo, cards, strict=True):
            refs[k] = card["ref"]
        return [str(r) for r in refs]


def content_bytes(content: object) -> bytes:
    """The bytes stashed for a tool result's CONTENT."""
    if isinstance(content, str):
        return content.encode("utf-8", "surrogatepass")
    return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )


def handle_name(data: bytes) -> str:
    return NAME_PREFIX + hashlib.sha256(data).hexdigest()[:16]


def predict_ref(session: str, data: bytes) -> str:
    """The ref the store gives DATA stashed under ``handle_name(DATA)``."""
    return sha_ref(session, hashlib.sha256(data).hexdigest())


def sha_ref(session: str, sha: str) -> str:
    """The ref of the bytes whose SHA-256 (hex) is SHA, stashed under their handle name."""
    return f"ctx:{session}/{NAME_PREFIX}{sha[:16]}@{sha[:REF_SHA_LEN]}"


def placeholder(data: bytes, ref: str) -> str:
    """The one line that replaces an elided result."""
    text = data.decode("utf-8", "replace")
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return f"[elided tool result: {len(text):,} chars, {lines:,} lines; full text: ctx-read {ref}]"


def is_placeholder(content: object) -> bool:
    return isinstance(content, str) and content.startswith("[elided tool result: ")


# --- repair ----------------------------------------------------------------------------------

NO_RESULT = "[no result was recorded for this call; added by ctx-compact --repair]"


@dataclass
class RepairOutcome:
    messages: list[dict]
    removed: list[dict]  # {"index", "call_id", "ref"}
    added: list[dict]  # {"index", "call_id"}


def repair(tr: Transcript, found: Links, stash: Stash) -> RepairOutcome:
    """Drop orphaned tool results (stashed first, so nothing is lost) and answer unanswered
    calls with a NO_RESULT result, so the transcript becomes valid for its API."""
    orphans: dict[int, list] = {}  # message index -> the call ids of its orphaned results
    for p in found.problems:
        if p.kind == "orphan":
            orphans.setdefault(p.index, []).append(p.call_id)
    missing: dict[int, list[str]] = {}  # message index -> its calls without a result
    for p in found.problems:
        if p.kind == "unanswered":
            missing.setdefault(p.index, []).append(p.call_id)
    if tr.format == OPENAI:
        return _repair_openai(tr.messages, sorted(orphans), missing, stash)
    return _repair_anthropic(tr.messages, set(orphans), missing, stash)


def _repair_openai(
    msgs: list[dict], drop: list[int], missing: dict[int, list[str]], stash: Stash
) -> RepairOutcome:
    """OpenAI: orphans are whole ``tool`` messages (DROP, ascending); the missing results
    follow the run of results of the assistant message that made the calls."""
    removed: list[dict] = []
    added: list[dict] = []
    for i in drop:
        data = content_bytes(msgs[i].get("content"))
        ref = stash.put(data, handle_name(data))
        removed.append({"index": i, "call_id": msgs[i].get("tool_call_id"), "ref": ref})
    missing = dict(missing)
    dropped = set(drop)
    out: list[dict] = []
    for i, msg in enumerate(msgs):
        if i not in dropped:
            out.append(msg)
        if i + 1 < len(msgs) and msgs[i + 1]["role"] == "tool":
            continue
        # the end of an assistant message's run of results: add the missing ones here
        for cid in missing.pop(_owner(msgs, i + 1), []):
            out.append({"role": "tool", "tool_call_id": cid, "content": NO_RESULT})
            added.append({"index": len(out) - 1, "call_id": cid})
    return RepairOutcome(out, removed, added)


def _repair_anthropic(
    messages: list[dict], orphaned: set[int], missing: dict[int, list[str]], stash: Stash
) -> RepairOutcome:
    """Anthropic: orphans are tool_result blocks of the messages ORPHANED (replaced by a text
    block naming their handles); missing results join the user turn after the call (a new
    user turn when there is none)."""
    msgs = list(messages)
    for i in missing:  # checked before anything is stashed
        nxt = msgs[i + 1] if i + 1 < len(msgs) else None
        if (
            nxt is not None
            and nxt["role"] == "user"
            and not isinstance(nxt.get("content"), str | list)
        ):
            raise InputError(
                f"message {i + 2}: its content is neither text nor a list of blocks, "
                f"so the missing tool_result of message {i + 1} cannot join it",
                hint="fix that message's content; --repair cannot",
            )
    removed: list[dict] = []
    added: list[dict] = []
    out = []
    for i, msg in enumerate(msgs):
        if i in orphaned:
            msg = _without_orphans(msgs, i, stash, removed)
        out.append(msg)
        if i in missing:
            fill = [
                {"type": "tool_result", "tool_use_id": cid, "content": NO_RESULT, "is_error": True}
                for cid in missing[i]
            ]
            nxt = msgs[i + 1] if i + 1 < len(msgs) else None
            if nxt is not None and nxt["role"] == "user":
                content = nxt.get("content")
                if isinstance(content, str):
                    content = [{"type": "text", "text": content}]
                at = sum(1 for b in tool_results({"role": "user", "content": content}))
                msgs[i + 1] = dict(nxt, content=content[:at] + fill + content[at:])
            else:
                out.append({"role": "user", "content": fill})
            for cid in missing[i]:
                added.append({"index": i + 1, "call_id": cid})
    return RepairOutcome(out, removed, added)


def _without_orphans(msgs: list[dict], i: int, stash: Stash, removed: list[dict]) -> dict:
    """Message I without its orphaned tool_result blocks (stashed, and recorded in REMOVED):
    results that answer no call of the message before, or answer one a second time."""
    prev_ids = {b.get("id") for b in tool_uses(msgs[i - 1])} if i > 0 else set()
    keep, gone, seen = [], [], set()
    for b in msgs[i]["content"]:
        if isinstance(b, dict) and b.get("type") == "tool_result":
            uid = b.get("tool_use_id")
            if uid not in prev_ids or uid in seen:
                gone.append(b)
                continue
            seen.add(uid)
        keep.append(b)
    refs = []
    for b in gone:
        data = content_bytes(b.get("content", ""))
        ref = stash.put(data, handle_name(data))
        refs.append(ref)
        removed.append({"index": i, "call_id": b.get("tool_use_id"), "ref": ref})
    note = (
        f"[ctx-compact --repair removed {len(gone)} orphaned tool result(s); "
        f"full text: {', '.join('ctx-read ' + r for r in refs)}]"
    )
    return dict(msgs[i], content=keep + [{"type": "text", "text": note}])


def _owner(msgs: list[dict], after: int) -> int:
    """The index of the assistant message whose tool results end just before AFTER."""
    j = after - 1
    while j >= 0 and msgs[j]["role"] == "tool":
        j -= 1
    return j if j >= 0 and openai_call_ids(msgs[j]) else -1


__all__ = [
    "ANTHROPIC",
    "MemoryStash",
    "Stash",
    "StoreStash",
    "content_bytes",
    "handle_name",
    "is_placeholder",
    "placeholder",
    "predict_ref",
    "repair",
]
