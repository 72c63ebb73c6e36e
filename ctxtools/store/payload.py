"""Reading a payload: random access to its verified bytes, lines and characters.

A ``Payload`` is a stored blob (or a spooled stream) seen through its ``LineIndex``: every
byte it returns comes from a block whose xxh3-64 was checked against the index
(``IntegrityError`` otherwise). A line range costs a binary search in the index plus at most
a stride's scan; a character offset a checkpoint lookup plus at most a stride's decode.
``stored_payload`` makes one of a blob in the store (its index read or rebuilt, small blobs
checked whole), ``open_spooled`` one of stdin; ``Chain`` puts bytes already read back in
front of a stream.
"""

from __future__ import annotations

import codecs
import contextlib
import os
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

import xxhash

from ctxtools import fsutil
from ctxtools.errors import InputError, IntegrityError, StoreError
from ctxtools.store import disk
from ctxtools.store.lineindex import INDEX_MIN_BYTES, Indexer, LineIndex, feed_stream, index_stream
from ctxtools.store.sniff import detect_type_head

if TYPE_CHECKING:
    from pathlib import Path

FULL_CHECK_BYTES = 8 << 20  # stored blobs up to this size are verified whole on every open


class Chain:
    """A stream that first returns HEAD, then reads STREAM."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self.head = head
        self.read_more = getattr(stream, "read1", stream.read)

    def read1(self, n: int = -1) -> bytes:
        if self.head:
            out, self.head = self.head, b""
            return out
        return self.read_more(n)

    read = read1


def _last_at(keys: array, values: array, at: int) -> tuple[int, int]:
    """(key, value) of the last checkpoint whose key is at most AT (keys ascending);
    (0, 0) when there is none -- the start of the payload."""
    j = bisect_right(keys, at) - 1
    return (keys[j], values[j]) if j >= 0 else (0, 0)


class Payload:
    """Random access to a stored (or spooled) payload through its line index.

    Every byte returned comes from a 1 MiB block whose xxh3-64 was checked against the index
    (``IntegrityError`` otherwise). ``label`` names the payload in error messages.
    """

    def __init__(self, fh: BinaryIO, index: LineIndex, *, label: str, record: dict | None = None):
        self.fh = fh
        self.index = index
        self.label = label
        self.record = record or {}
        self._bs = index.block_size
        self._stride = index.stride
        self._verified: set[int] = set()
        self._cache: tuple[int, bytes] | None = None
        self._chars: int | None = None
        self._type_checked = 0  # 1: glanced at, 2: detected in full

    # sizes
    @property
    def size(self) -> int:
        return self.index.size

    @property
    def lines(self) -> int:
        return self.index.lines

    @property
    def chars(self) -> int:
        """Characters (U+FFFD for an invalid byte), counted once from the verified bytes:
        the last character checkpoint plus a decode of at most a stride after it. When the
        card gives a ``length`` that differs, the card is damaged (IntegrityError): every
        character offset is computed from this count, so it must be the payload's."""
        if self._chars is None:
            pos, chars = _last_at(self.index.cc_offs, self.index.cc_chars, self.size)
            chars += len(self.pread(pos, self.size - pos).decode("utf-8", "replace"))
            _check_card_field(self, "length", chars)
            self._chars = chars
        return self._chars

    def close(self) -> None:
        self.fh.close()

    def __enter__(self) -> Payload:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # blocks
    def block(self, i: int) -> bytes:
        """The verified bytes of block I."""
        if self._cache is not None and self._cache[0] == i:
            return self._cache[1]
        self.fh.seek(i * self._bs)
        want = min(self._bs, self.size - i * self._bs)
        data = self.fh.read(want)
        if len(data) != want:
            raise IntegrityError(
                f"handle {self.label} is truncated: the blob has fewer bytes than recorded",
                hint="re-stash it",
            )
        if i not in self._verified:
            blocks = self.index.blocks
            if i >= len(blocks) or xxhash.xxh3_64_intdigest(data) != blocks[i]:
                raise IntegrityError(
                    f"handle {self.label} is corrupt: block {i} (bytes {i * self._bs}-"
                    f"{i * self._bs + want - 1}) does not match its checksum",
                    hint="re-stash it",
                )
            self._verified.add(i)
        self._cache = (i, data)
        return data

    def check_type(self, full: bool = True) -> None:
        """IntegrityError when the card's ``type`` is not one ctx-stash could have given
        these bytes (``sniff.settle_type``: what they are, or text): an edited type would
        change what --jsonpath answers. FULL detects the type as ctx-stash did (a parse of
        up to 8 MiB); else only what the first and last bytes show (binary or not, JSON's
        first and last characters, a first line that is JSON), cheap enough for every open.
        A spooled payload's type is its own."""
        stated = self.record.get("type")
        if self._type_checked >= (2 if full else 1) or stated is None:
            return
        if "sha256" not in self.record:
            return
        detected = self._type_detected() if full else self._type_glance(stated)
        if detected is not None:
            from ctxtools.store.sniff import settle_type

            try:
                settle_type(stated, detected, self.lines)
            except InputError:
                raise _damaged_card(
                    self.label, f"its 'type' is {stated}, the payload reads as {detected}"
                ) from None
        self._type_checked = 2 if full else 1

    def _type_detected(self) -> str:
        import io

        from ctxtools.store.sniff import JSON_PARSE_LIMIT

        head = self.pread(0, 8192)
        if self.size <= JSON_PARSE_LIMIT:
            fh: BinaryIO = io.BytesIO(b"".join(self.iter_bytes()))  # verified bytes
        else:
            fh = self.fh
        return detect_type_head(head, self.size, fh)

    def _type_glance(self, stated: str) -> str | None:
        """What the ends of the payload say it is when that contradicts STATED, else None."""
        from ctxtools.binary import is_binary
        from ctxtools.store.sniff import json_loads

        head = self.pread(0, 1 << 16)
        binary = is_binary(head)
        if binary:
            return None if stated in ("binary", "text") else "binary"
        if stated in ("binary", "text"):
            return None if stated == "text" else "text"
        if head.lstrip()[:1] not in (b"{", b"["):
            return "text"
        if stated == "json":
            tail = self.pread(max(0, self.size - 4096), 4096).rstrip()[-1:]
            return None if tail in (b"}", b"]") else "text"
        first, nl, _ = head.lstrip().partition(b"\n")
        if nl:  # a JSON Lines payload's first line is a JSON value
            try:
                json_loads(first)
            except ValueError:
                return self._type_detected()
        return None

    def verify_all(self) -> None:
        for i in range((self.size + self._bs - 1) // self._bs):
            self.block(i)

    def pread(self, offset: int, n: int) -> bytes:
        """Up to N verified bytes from OFFSET."""
        end = min(self.size, offset + n)
        if offset >= end:
            return b""
        first, last = offset // self._bs, (end - 1) // self._bs
        if first == last:
            base = first * self._bs
            return self.block(first)[offset - base : end - base]
        parts = []
        for i in range(first, last + 1):
            base = i * self._bs
            data = self.block(i)
            parts.append(data[max(offset - base, 0) : min(end - base, len(data))])
        return b"".join(parts)

    def iter_bytes(self, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Verified bytes from START to END in block-sized pieces."""
        end = self.size if end is None else min(end, self.size)
        pos = start
        while pos < end:
            i = pos // self._bs
            base = i * self._bs
            data = self.block(i)
            piece = data[pos - base : min(end - base, len(data))]
            yield piece
            pos = base + len(data) if end - base >= len(data) else end

    # lines
    def line_start(self, line: int) -> int:
        """Byte offset where zero-based LINE starts (``size`` for line >= lines)."""
        if line <= 0:
            return 0
        if line >= self.lines:
            return self.size
        have, pos = _last_at(self.index.ck_lines, self.index.ck_offs, line)
        need = line - have  # newlines still to pass
        while need > 0:
            chunk = self.pread(pos, self._stride)
            if not chunk:
                return self.size
            c = chunk.count(b"\n")
            if c < need:
                need -= c
                pos += len(chunk)
                continue
            p = -1
            for _ in range(need):
                p = chunk.find(b"\n", p + 1)
            return pos + p + 1
        return pos

    def newlines_before(self, offset: int) -> int:
        """Newlines in bytes 0..OFFSET-1 (the zero-based line of OFFSET): index + short scan."""
        pos, line = _last_at(self.index.ck_offs, self.index.ck_lines, offset)
        while pos < offset:
            chunk = self.pread(pos, min(self._stride, offset - pos))
            if not chunk:
                break
            line += chunk.count(b"\n")
            pos += len(chunk)
        return line

    def find_newline(self, start: int, end: int | None = None) -> int:
        """Offset of the first newline in bytes START..END-1, or END (a scan, bounded memory)."""
        end = self.size if end is None else min(end, self.size)
        pos = start
        for piece in self.iter_bytes(start, end):
            p = piece.find(b"\n")
            if p >= 0:
                return pos + p
            pos += len(piece)
        return end

    def chars_before(self, offset: int) -> int:
        """Characters (U+FFFD for an invalid byte) in bytes 0..OFFSET-1, OFFSET at a character
        boundary: the nearest character checkpoint plus at most a 64 KiB decode."""
        if self.chars == self.size:
            return offset
        pos, chars = _last_at(self.index.cc_offs, self.index.cc_chars, offset)
        return chars + len(self.pread(pos, offset - pos).decode("utf-8", "replace"))

    def char_offset(self, char: int) -> int:
        """The byte offset where character CHAR starts (``size`` past the end)."""
        if self.chars == self.size:
            return min(max(char, 0), self.size)
        if char <= 0:
            return 0
        if char >= self.chars:
            return self.size
        have, pos = _last_at(self.index.cc_chars, self.index.cc_offs, char)
        # The next checkpoint is at most a stride (+ a cut character) further on.
        piece = self.pread(pos, self._stride + 8)
        need = char - have

        def done(b: int) -> int:  # characters completed by bytes piece[:b]
            return len(codecs.getincrementaldecoder("utf-8")("replace").decode(piece[:b]))

        lo, hi = 0, len(piece)
        while lo < hi:
            mid = (lo + hi) // 2
            if done(mid) >= need:
                hi = mid
            else:
                lo = mid + 1
        # A lone invalid byte is known to be one only when the next byte is seen: the start
        # may lie a few bytes before LO. A boundary splits the decoding without changing it.
        whole = len(piece.decode("utf-8", "replace"))
        for b in range(max(0, lo - 3), lo):
            left = len(piece[:b].decode("utf-8", "replace"))
            if left == need and left + len(piece[b:].decode("utf-8", "replace")) == whole:
                return pos + b
        return pos + lo

    def iter_lines_capped(
        self, first: int, last: int | None, cap: int
    ) -> Iterator[tuple[bytes, bool]]:
        """(bytes, whole) of zero-based lines FIRST..LAST-1 without their newline; a line
        longer than CAP bytes comes as its first CAP bytes with whole=False, and ends the
        iteration -- a huge line is never held in memory."""
        last = self.lines if last is None else min(last, self.lines)
        if first >= last:
            return
        pos = self.line_start(first)
        rest = b""
        emitted = 0
        want = last - first
        for piece in self.iter_bytes(pos):
            data = rest + piece if rest else piece
            start = 0
            while True:
                nl = data.find(b"\n", start)
                if nl < 0:
                    break
                if nl - start > cap:
                    yield data[start : start + cap], False
                    return
                yield data[start:nl], True
                emitted += 1
                if emitted >= want:
                    return
                start = nl + 1
            rest = data[start:]
            if len(rest) > cap:
                yield rest[:cap], False
                return
        if emitted < want:
            yield rest, True

    def iter_lines(self, first: int = 0, last: int | None = None) -> Iterator[bytes]:
        """Zero-based lines FIRST..LAST-1 as bytes without their newline."""
        last = self.lines if last is None else min(last, self.lines)
        if first >= last:
            return
        start = self.line_start(first)
        end = self.line_start(last)
        rest = b""
        emitted = 0
        want = last - first
        for piece in self.iter_bytes(start, end):
            data = rest + piece if rest else piece
            parts = data.split(b"\n")
            rest = parts.pop()
            for p in parts:
                yield p
                emitted += 1
                if emitted >= want:
                    return
        if rest or emitted < want:
            yield rest


def open_spooled(stream: BinaryIO, *, label: str = "stdin") -> Payload:
    """Spool STREAM into an anonymous temporary file and return it as a Payload."""
    import tempfile

    fh = tempfile.TemporaryFile()  # noqa: SIM115 - owned by the Payload
    ix = feed_stream(Indexer(sha256=False), stream, fh.write)
    fh.flush()
    record = {"length": ix.chars, "lines": ix.lines, "bytes": ix.size, "type": None}
    record["type"] = detect_type_head(bytes(ix.head), ix.size, fh)
    payload = Payload(fh, ix.index(), label=label, record=record)
    payload._chars = ix.chars  # counted as it was spooled
    return payload


def open_bytes(data: bytes, *, label: str = "stdin") -> Payload:
    import io

    return open_spooled(io.BytesIO(data), label=label)


def stored_payload(fh: BinaryIO, record: dict, ipath: Path, label: str, verify: bool) -> Payload:
    """The Payload of a stored blob open as FH, whose card is RECORD and index file IPATH:
    its size checked, its index loaded (or rebuilt), and the whole checked when VERIFY
    (SHA-256, with the index rebuilt from the bytes: nothing but the blob and the card's
    sha256 is trusted) or when it is at most FULL_CHECK_BYTES (xxh3 of every block).

    The card's ``lines`` and ``length`` (characters) are checked against the payload, as
    its ``bytes`` are: every offset a read computes comes from them, so an edited card is
    an IntegrityError, never a shifted slice -- ``lines`` on open, ``length`` then too
    when the bytes are verified anyway, else at its first use (``Payload.chars``: reading
    a big blob's head does not read its tail)."""
    size = os.fstat(fh.fileno()).st_size
    if size != record.get("bytes"):
        raise IntegrityError(
            f"handle {label} is {'truncated' if size < record['bytes'] else 'corrupt'}: "
            f"the blob has {size} bytes, {record['bytes']} were stashed",
            hint="re-stash it",
        )
    if verify:
        fh.seek(0)
        ix = index_stream(fh, sha256=True)
        if ix.sha256 != record["sha256"]:
            raise IntegrityError(f"handle {label} is corrupt: SHA-256 mismatch", hint="re-stash it")
        if record.get("xxh3") is not None and ix.xxh3 != record["xxh3"]:
            # the card's sha256 names another valid blob: the blob is whole, the card is not
            raise _damaged_card(label, "its 'sha256' names another payload than its 'xxh3'")
        index = ix.index()
    else:
        index = _stored_index(record, fh, ipath, label)
    _count_lines(index, fh)
    payload = Payload(fh, index, label=label, record=record)
    if not verify and size <= FULL_CHECK_BYTES:
        payload.verify_all()
    _check_card_field(payload, "lines", payload.lines)
    if verify or size <= FULL_CHECK_BYTES:
        payload.chars  # noqa: B018 - checked now, its bytes being verified already
    payload.check_type(full=verify)
    return payload


def _damaged_card(label: str, what: str) -> IntegrityError:
    name = label.split("@", 1)[0].removeprefix("ctx:")
    return IntegrityError(
        f"handle {label}: its card is damaged ({what})",
        hint=f"remove it with ctx-stash --rm {name} and stash it again",
    )


def _check_card_field(payload: Payload, field: str, has: int) -> None:
    """IntegrityError when PAYLOAD's card gives FIELD (``lines``, ``length``) and it is not
    HAS, what the payload has: an edited card must not shift a slice."""
    stated = payload.record.get(field)
    if stated is None or stated == has:
        return
    raise _damaged_card(payload.label, f"its {field!r} is {stated}, the payload has {has}")


def _stored_index(record: dict, fh: BinaryIO, ipath: Path, label: str) -> LineIndex:
    """The index of the stored blob FH: read from IPATH, or rebuilt (and rewritten) when it
    is missing, damaged, of another payload or not of the shape an ``Indexer`` makes (a
    character checkpoint at every stride) -- trusted only if the blob still has the xxh3
    its card recorded."""
    index = None
    small = int(record.get("bytes", 0)) < INDEX_MIN_BYTES
    if not small:
        try:  # (a link there is not followed: ``disk.read_file``; rebuilt, it is replaced)
            index = LineIndex.from_bytes(disk.read_file(ipath))
        except OSError:
            index = None
    if index is not None and (
        index.size != record.get("bytes")
        or index.xxh3 != record.get("xxh3")
        or len(index.cc_offs) != index.size // index.stride
    ):
        index = None
    if index is None:
        # Missing or damaged index: rebuild it, trusting it only if the payload still has
        # the xxh3 recorded at stash time.
        fh.seek(0)
        ix = index_stream(fh)
        if ix.xxh3 != record.get("xxh3") or ix.size != record.get("bytes"):
            raise IntegrityError(
                f"handle {label} is corrupt: its bytes no longer match the checksum "
                "recorded when it was stashed",
                hint="re-stash it",
            )
        index = ix.index()
        if not small:
            with contextlib.suppress(OSError, StoreError):
                fsutil.replace_file(ipath, index.to_bytes(), durable=False)
    return index


def _count_lines(index: LineIndex, fh: BinaryIO) -> None:
    """INDEX's lines: its newlines plus an unterminated last line (the blob FH says)."""
    if index.size:
        fh.seek(index.size - 1)
        index.lines = index.newlines + (1 if fh.read(1) != b"\n" else 0)
    else:
        index.lines = 0
