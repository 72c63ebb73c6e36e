"""The seed's rule, for our own results: a big result is stored, and the agent gets its card,
its first slice and the call that pages on.

A tool returns a ``Reply``: its text (what the filter would print on stdout) and its notes
(what the filter would say on stderr). ``deliver`` keeps a text of at most INLINE_MAX
characters inline; a longer one is stored in the store as the handle ``TOOL-SHA12`` (named
after its content, so the same result is the same handle) and replaced by ``Delivered``:
the card as one JSON line, then the text's first lines up to INLINE_MAX characters, cut as
ctx-read cuts and ending with the exact ``read`` call that shows the rest. A 40,000-token
pack then costs the agent's window a few hundred tokens until it asks for more.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxtools import defaults

if TYPE_CHECKING:
    from ctxtools.store import HandleStore

INLINE_MAX = defaults.THRESHOLD  # characters a result may have and stay inline


@dataclass
class Reply:
    """What a tool gives back: TEXT (stdout's), NOTES (stderr's lines, as the command would
    print them), and whether the text may be stored when long (PAGE; reads never are)."""

    text: str
    notes: list[str] = field(default_factory=list)
    page: bool = True
    type: str | None = None  # the stored handle's type (None: detected)


@dataclass
class Delivered:
    """What goes back to the agent: TEXT (inline, or card + first slice) and NOTES; CARD
    is the stored handle's card when the text was stored."""

    text: str
    notes: list[str]
    card: dict | None = None


def redacted(reply: Reply) -> Reply:
    """REPLY with the secrets of its text and notes replaced: every tool's reply goes to a
    model, whatever it came from (a map, a stored log, a pack already redacted: then this
    pass finds nothing)."""
    from ctxtools.secrets import redact_output

    reply.text, found = redact_output(reply.text)
    reply.notes = [redact_output(n)[0] for n in reply.notes] + [f"note: {n}" for n in found]
    return reply


def handle_name(tool: str, data: bytes) -> str:
    """``TOOL-`` and the first 12 hex digits of DATA's SHA-256."""
    return f"{tool}-{hashlib.sha256(data).hexdigest()[:12]}"


def first_slice(store: HandleStore, card: dict, session: str, inline_max: int) -> str:
    """The card (one JSON line), then the stored text's first lines up to INLINE_MAX
    characters with the ``read`` call that shows the next part."""
    import orjson

    from ctxtools import projections as pj
    from ctxtools.mcp.calls import CallNext

    with store.open(card["ref"], session, touch=False) as payload:
        out = pj.lines_view(
            payload, 0, None, max_chars=inline_max, nxt=CallNext(card["ref"]), asked="all lines"
        )
    return orjson.dumps(card).decode() + "\n" + out.text()


def deliver(
    store: HandleStore, session: str, tool: str, reply: Reply, inline_max: int = INLINE_MAX
) -> Delivered:
    """REPLY as the agent gets it: inline when short (or not PAGE), else stored and shown
    by its first slice (``first_slice``)."""
    if not reply.page or len(reply.text) <= inline_max:
        return Delivered(reply.text, reply.notes)
    data = reply.text.encode("utf-8", "surrogateescape")
    card = store.put_bytes(data, name=handle_name(tool, data), session=session, type=reply.type)
    return Delivered(first_slice(store, card, session, inline_max), reply.notes, card)
