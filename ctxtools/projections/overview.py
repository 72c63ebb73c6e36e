"""``--count`` (chars, lines, bytes and tokens of a payload, streamed) and ``--introspect``
(what can be asked of a payload, with examples for this very payload)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxtools.projections.jsonview import json_examples
from ctxtools.projections.output import MAX_CHARS_DEFAULT, Next, next_for

if TYPE_CHECKING:
    from ctxtools.store import Payload


class _PayloadStream:
    """A read-only binary stream over a payload's verified bytes."""

    def __init__(self, p: Payload) -> None:
        self._it = p.iter_bytes()
        self._buf = b""

    def read(self, n: int = -1) -> bytes:
        if self._buf:
            out, self._buf = self._buf, b""
            return out
        return next(self._it, b"")

    read1 = read


def count(p: Payload, ruler: Any) -> dict:
    """chars, lines, bytes and tokens (with RULER, streaming)."""
    from ctxtools.tokens import count_stream

    counts = count_stream(_PayloadStream(p), ruler)  # type: ignore[arg-type]
    out = {"chars": counts.chars, "lines": p.lines, "bytes": p.size, "tokens": counts.tokens}
    out.update(ruler.describe())
    if not counts.exact:
        out["exact"] = False
        out["note"] = "; ".join(counts.notes)
    return out


PROJECTIONS = [
    ("--head N", "the first N lines"),
    ("--tail N", "the last N lines"),
    ("--range X-Y", "lines X to Y, 1-based, closed (X- to the end)"),
    ("--slice A:B [--unit chars|lines]", "zero-based half-open slice, negatives from the end"),
    ("--grep REGEX [-C N] [-i]", "matching lines with their line numbers"),
    ("--count", "chars, lines, bytes and tokens"),
    ("--jsonpath EXPR [--paths]", "RFC 9535 JSONPath matches (JSON, or JSON Lines as an array)"),
    ("--introspect", "this description"),
]


def introspect(
    p: Payload, ref: str | None, *, max_chars: int = MAX_CHARS_DEFAULT, nxt: Next | None = None
) -> dict:
    """The projections this payload supports, its sizes, and examples for this very payload,
    worded by NXT (default: ctx-read command lines for REF)."""
    nxt = nxt or next_for(ref)
    p.check_type()
    lines, kind = p.lines, p.record.get("type") or "text"
    info: dict[str, Any] = {"ref": ref, "type": kind}
    if p.record.get("exit_status") is not None:
        info["exit_status"] = p.record["exit_status"]
    info.update({"chars": p.chars, "lines": lines, "bytes": p.size, "max_chars": max_chars})
    projections = [
        {"usage": u, "what": w}
        for u, w in PROJECTIONS
        if kind in ("json", "jsonl") or not u.startswith("--jsonpath")
    ]
    info["projections"] = projections
    mid = max(1, lines // 2)
    a, b = max(1, mid - 25), max(1, min(lines, mid + 24))
    examples = [
        nxt.command("--count"),
        nxt.command("--head", "20"),
        nxt.command("--range", f"{a}-{b}"),
        nxt.command("--tail", "20"),
        nxt.command("--grep", "error|fail|warn", "-i", "-C", "2"),
    ]
    if kind in ("json", "jsonl"):
        examples += json_examples(p, kind, nxt, info)
    info["examples"] = examples
    return info
