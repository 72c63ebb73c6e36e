"""What a command reads: a FILE argument or stdin, a handle reference, or a handle card.

* ``FileArg`` is one FILE argument: a path, or stdin (``STDIN``, ``path is None``).
* ``is_handle_ref`` tells a handle reference (``ctx:...``) from a file name.
* ``card_ref`` turns a handle card given where a reference is expected (``ctx-read
  '{"kind": "handle", ...}'``) into its reference.
* ``read_head`` reads the start of a stream, saying whether that was all of it.
* ``open_input`` is ctx-read's rule: a reference names a stored handle; without one, a card
  on stdin (what ctx-stash prints) names it; anything else on stdin is the content itself.
  ``log_read`` logs the read once it has succeeded.
* ``HandleReader`` reads handles' bytes for commands whose inputs mix files and handles
  (ctx-excerpt, ctx-pack): the store is opened at the first handle only.

Nothing here prints; the store is imported only when a handle is read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from ctxtools.errors import UsageError

if TYPE_CHECKING:
    from ctxtools.store import HandleStore, Payload

HANDLE_PREFIX = "ctx:"  # what starts a handle reference among file names
CARD_PEEK = 1 << 16  # a card on stdin is a few hundred bytes; more than this is content


class FileArg(NamedTuple):
    """One FILE argument: a path, or stdin (``path is None``). ``label`` is what the user
    sees. (A NamedTuple, not a dataclass: ``--help`` then never imports dataclasses.)"""

    label: str
    path: str | None


STDIN = FileArg("-", None)


def is_handle_ref(name: str) -> bool:
    """Whether NAME, given where a file may be named, is a handle reference (``ctx:...``)."""
    return name.startswith(HANDLE_PREFIX)


def _card(data: str | bytes) -> dict | None:
    """DATA as a handle card, or None."""
    import orjson

    from ctxtools.store import looks_like_card

    try:
        card = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return card if looks_like_card(card) else None


def card_ref(text: str) -> str:
    """TEXT as a reference: itself, or, when it is a handle card (JSON), the card's ref.
    UsageError for JSON that is not a card."""
    if not text.lstrip().startswith("{"):
        return text
    card = _card(text)
    if card is None:
        raise UsageError("REF looks like JSON but is not a handle card")
    from ctxtools.store import card_ref as ref_of

    return ref_of(card)


def read_head(stream: BinaryIO, limit: int) -> tuple[bytes, bool]:
    """Up to LIMIT bytes from the start of STREAM, and whether the stream ended within
    them (then they are all of it)."""
    read = getattr(stream, "read1", stream.read)
    parts, size = [], 0
    while size < limit:
        chunk = read(min(limit - size, 1 << 20))  # never ask for LIMIT bytes of memory at once
        if not chunk:
            return b"".join(parts), True
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts), False


def open_input(
    store: HandleStore,
    ref: str | None,
    *,
    session: str,
    verify: bool,
    stdin: Callable[[], BinaryIO],
) -> tuple[Payload, str | None]:
    """(payload, reference) for REF: a reference or a card (``card_ref``); None or ``-``
    reads STDIN() -- a handle card there names the handle, anything else is the content,
    spooled, and its reference is None (it is not a handle). The reference is what names
    the input in the next command.

    The access is not logged (the caller logs a read once it has succeeded). Raises the
    store's errors for a handle; UsageError for VERIFY on stdin content, which has no
    recorded checksum to verify."""
    from ctxtools.store import Chain, open_spooled

    if ref is not None:
        ref = card_ref(ref)
    if ref is not None and ref != "-":
        payload = store.open(ref, session, verify=verify, touch=False)
        return payload, payload.label
    stream = stdin()
    head, _ended = read_head(stream, CARD_PEEK + 1)
    if len(head) <= CARD_PEEK and head.lstrip()[:1] == b"{":
        card = _card(head)
        if card is not None:
            from ctxtools.store import card_ref as ref_of

            payload = store.open(ref_of(card), session, verify=verify, touch=False)
            return payload, payload.label
    if verify:
        raise UsageError("--verify checks a stored handle; stdin content has nothing to verify")
    return open_spooled(Chain(head, stream), label="stdin"), None


class HandleReader:
    """Reads stored handles by reference for a command whose inputs are mostly files: the
    store (STORE: a HandleStore, a root, or None for the default root) is opened at the
    first read. SESSION None is the default session."""

    def __init__(self, store: HandleStore | str | os.PathLike | None, session: str | None):
        self._store = store
        self._session = session

    @property
    def store(self) -> HandleStore:
        from ctxtools.config import store_root
        from ctxtools.store import HandleStore

        if not isinstance(self._store, HandleStore):
            self._store = HandleStore(store_root(self._store))
        return self._store

    def read_bytes(self, ref: str) -> bytes:
        """The verified bytes of REF (the read is logged). Raises the store's errors."""
        from ctxtools.config import default_session

        return self.store.read_bytes(ref, session=self._session or default_session())


def log_read(store: HandleStore, payload: Payload) -> None:
    """Log a read of PAYLOAD in STORE's access log when it is a stored handle (content
    read from stdin is not)."""
    rec = payload.record
    if rec.get("session_id") and rec.get("name"):
        store.record_access(rec["session_id"], rec["name"])
