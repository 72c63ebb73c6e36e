"""Secrets that span lines (a private key block), found in a whole payload.

The output pass (``output``) sees only what a command prints. A slice of a stored payload
(``ctx-read --range 5-9``, a ``--grep`` of it, the MCP ``read`` tool's next part) can show
the middle lines of a key block without its BEGIN line, and no rule can tell those base64
lines from any other. So a payload that is read with redaction on is first searched, whole,
for such blocks (``key_blocks``), and read through a copy in which each is replaced by its
marker and as many line breaks as it held (``redacted_payload``): every line keeps its
number, and a slice of the block shows the marker or nothing.

The search is a byte search for the block rules' gates over the payload, then the rules on
a window after each hit: a payload without a key costs one pass of ``bytes.find``.
"""

from __future__ import annotations

from collections.abc import Callable

# The gates of the rules whose secrets span lines (PEM and SSH2 blocks, PuTTY's lines).
GATES = (b"PRIVATE KEY", b"Private-Lines:")
BEFORE = 64  # bytes before a gate where its block may begin ("-----BEGIN RSA " ...)
SPAN_MAX = 60_000  # more than the longest block a rule takes (PuTTY's 400 lines, gutters)
WINDOW = 256 * 1024  # bytes the rules read at a time, from a gate on
PIECE = 1 << 20  # bytes read at a time while searching for the gates


def key_blocks(read: Callable[[int, int], bytes], size: int) -> list[tuple[int, int, str]]:
    """The multi-line secrets of a payload of SIZE bytes that READ(offset, n) gives, as
    (start, end, kind) byte spans, in order and not overlapping."""
    from ctxtools.secrets.scan import find_secrets

    spans: list[tuple[int, int, str]] = []
    done = 0  # the text before this was searched by a window that held its blocks whole
    for hit in sorted(set(_gate_hits(read, size))):
        if hit < done:
            continue
        lo = max(0, hit - BEFORE)
        data = read(lo, WINDOW)
        # A block that begins before LIMIT ends inside this window: taken whole. One that
        # begins after it is left to the next window (its own BEGIN line holds a gate). So
        # a text dense with gates ("PRIVATE KEY not set" on every line) is read by the
        # rules about once, not once a hit.
        limit = lo + len(data) if lo + len(data) >= size else lo + len(data) - SPAN_MAX
        # latin-1: one character a byte, so the rules' offsets are the payload's
        for start, end, kind in find_secrets(data.decode("latin-1")):
            if lo + start >= limit:
                break
            fresh = not spans or lo + start >= spans[-1][1]
            if fresh and data.count(b"\n", start, end):
                spans.append((lo + start, lo + end, kind))
        done = max(limit, hit + 1)
    return spans


def _gate_hits(read: Callable[[int, int], bytes], size: int) -> list[int]:
    hits: list[int] = []
    keep = max(len(g) for g in GATES) - 1  # a gate across two pieces is found in the first
    pos = 0
    while pos < size:
        piece = read(pos, PIECE + keep)
        for gate in GATES:
            at = piece.find(gate)
            while at != -1 and at < PIECE:
                hits.append(pos + at)
                at = piece.find(gate, at + 1)
        pos += PIECE
    return hits


def blank_key_blocks(data: bytes) -> tuple[bytes, int]:
    """(DATA with each of its ``key_blocks`` replaced by its marker and the line breaks it
    held, how many): a file ctx-excerpt windows, whose window may start inside a block.
    DATA itself when it holds none."""
    if not any(g in data for g in GATES):  # (most files: no copy, no search)
        return data, 0
    read = lambda at, n: data[at : at + n]  # noqa: E731
    spans = key_blocks(read, len(data))
    if not spans:
        return data, 0
    return b"".join(_blanked(read, len(data), spans)), len(spans)


def _blanked(read: Callable[[int, int], bytes], size: int, spans):
    """The text READ gives, in pieces of at most ``PIECE`` bytes, with each of SPANS (of
    ``key_blocks``) as its marker and the line breaks it held."""
    from ctxtools.secrets.scan import MARKER

    pos = 0
    for start, end, kind in [*spans, (size, size, None)]:
        while pos < start:
            n = min(PIECE, start - pos)
            yield read(pos, n)
            pos += n
        if kind is not None:
            yield MARKER.format(kind=kind).encode() + b"\n" * read(start, end - start).count(b"\n")
            pos = end


def key_block_lines(pieces) -> list[tuple[int, int, str]]:
    """(first line, last line, kind) of each key block of a text read as PIECES (``(first
    line, bytes, ...)`` of complete lines, in order, as ctx-excerpt streams a large file):
    each block is searched for in the piece it begins in and the ``WINDOW`` bytes after it,
    so one that runs on into the next pieces is found whole, and found once."""
    out: list[tuple[int, int, str]] = []

    def search(first: int, data: bytes, upto: int) -> None:
        for start, end, kind in key_blocks(lambda at, n: data[at : at + n], len(data)):
            if start < upto:
                a = first + data.count(b"\n", 0, start)
                out.append((a, a + data.count(b"\n", start, end), kind))

    def settle(pending: list[tuple[int, bytes]]) -> None:
        first, data = pending.pop(0)
        if any(g in data for g in GATES):
            after = b"".join(d for _f, d in pending)[:WINDOW]
            search(first, data + after, len(data))

    pending: list[tuple[int, bytes]] = []  # pieces waiting for WINDOW bytes after them
    for piece in pieces:
        pending.append((piece[0], piece[1]))
        while pending and sum(len(d) for _f, d in pending[1:]) >= WINDOW:
            settle(pending)
    while pending:
        settle(pending)
    return out


def redacted_payload(payload, known: dict | None = None):
    """(PAYLOAD (a ``store.Payload``) with each of its ``key_blocks`` replaced by its marker
    and the line breaks it held, as a new spooled payload under the same label, the note
    that says so); (None, None) when it holds none. KNOWN (a dict kept between calls, as
    ctx-mcp keeps it) remembers each stored payload's blocks by its SHA-256: a paging
    reader does not search a 100 MB log again for every part."""
    import tempfile

    from ctxtools.store import open_spooled

    sha = (payload.record or {}).get("sha256") if known is not None else None
    spans = known.get(sha) if sha else None
    if spans is None:
        spans = key_blocks(payload.pread, payload.size)
        if sha:
            known[sha] = spans
    if not spans:
        return None, None
    with tempfile.TemporaryFile() as fh:
        for part in _blanked(payload.pread, payload.size, spans):
            fh.write(part)
        fh.seek(0)
        copy = open_spooled(fh, label=payload.label)
    kinds = ", ".join(sorted({kind for _s, _e, kind in spans}))
    n = len(spans)
    note = f"redacted {n} block{'s' if n > 1 else ''} of the payload ({kinds}): read as blank lines"
    return copy, note


def without_key_blocks(payload, known: dict | None = None):
    """(a context manager that gives PAYLOAD, or its ``redacted_payload`` copy and closes
    it, the note that says so or None): what a reader of a slice reads through."""
    import contextlib

    copy, note = redacted_payload(payload, known)
    return (copy if copy is not None else contextlib.nullcontext(payload)), note
