"""The handle store: payloads on disk behind small handle cards (virtual memory for the model).

Layout under the store root (created with mode 0700 on the first write)::

    blobs/ab/<sha256>          raw bytes, immutable, content-addressed
    blobs/ab/<sha256>.idx      line index, character checkpoints and block checksums (see
                               ``LineIndex``; format 2, a format-1 file is rebuilt); a blob
                               under 64 KiB written by ``put_many`` has none (rebuilt)
    sessions/<session>/<name>.json   the current card of that name (plus private fields)
    access.jsonl               append-only access log, compacted now and then
    .lock                      flock: writers share it, gc/rm/compaction take it alone

Every write goes to a temporary file in the target's filesystem, is fsync'ed and then
``os.replace``d into place, so a killed writer leaves at most a ``.tmp-<pid>-*`` file that no
card refers to (``gc`` removes it once that process is gone). The blob is in place before
its card is written, so a visible card always has its bytes. ``put_many`` writes a batch the
same way with less waiting: every temp file first (several threads), then, under one hold of
the shared lock, the blobs renamed into place and their directories fsync'ed once each, and
only then the cards.

Integrity: at stash time we record SHA-256 and xxh3-128 of the whole payload, and xxh3-64 of
every 1 MiB block in the ``.idx`` file (which also carries its own checksum and the payload's
xxh3-128, binding it to the card). Every byte a read serves comes from a block whose
checksum was verified; a blob of at most ``FULL_CHECK_BYTES`` is verified whole on every
open. ``verify=True`` re-hashes the whole payload with SHA-256. A line range on a huge blob
costs a binary search in the index plus at most a 64 KiB scan, never a scan of the blob; a
character offset (``chars_before``, ``char_offset``) costs a checkpoint lookup and at most a
64 KiB decode.

A card read back is checked (``_card_problem``): every field it needs, of the right type, a
``sha256`` of 64 hex digits (so no card can point outside the store). A damaged card is an
``IntegrityError`` for a read of it; listings and gc skip it and say so.

The library never prints; errors are ``ctxtools.errors`` exceptions.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import math
import os
import re
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import xxhash

from ctxtools.errors import (
    InputError,
    IntegrityError,
    NotFoundError,
    StaleHandleError,
    StoreError,
    UsageError,
)
from ctxtools.fsutil import parse_size  # noqa: F401  (part of the store's API)

DEFAULT_SESSION = "default"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
SHA_PREFIX_RE = re.compile(r"[0-9a-f]{4,64}")
REF_PREFIX_LEN = 12
TYPES = ("text", "json", "jsonl")
PUBLIC_FIELDS = (
    "kind",
    "session_id",
    "name",
    "type",
    "length",
    "lines",
    "bytes",
    "repr_preview",
    "sha256",
    "ref",
    "exit_status",
)

READ_CHUNK = 1 << 20  # bytes per read while stashing
BLOCK_SIZE = 1 << 20  # bytes per xxh3-64 block checksum
STRIDE = 1 << 16  # a line checkpoint about every 64 KiB
FULL_CHECK_BYTES = 8 << 20  # blobs up to this size are verified whole on every open
# A batch (put_many) writes no ``.idx`` file for smaller blobs: their index (one block, no
# line checkpoints) is rebuilt from the blob on open -- the reader hashes such a blob whole
# anyway -- which saves a file per handle (creating a file is the dear part of a stash).
INDEX_MIN_BYTES = STRIDE
TASK_FILES = 64  # files a put_many thread writes in one go
BATCH_WORKERS = 8  # threads writing a put_many batch (creating files overlaps per directory)
PUT_KWARGS = frozenset({"name", "session", "type", "exit_status"})
HEAD_KEEP = 1 << 16  # bytes kept in memory for the preview and type detection
JSON_PARSE_LIMIT = 8 << 20  # whole-document JSON validation up to this size
JSONL_LINE_LIMIT = 1 << 20  # longer lines are not JSON Lines records (type detection)
PREVIEW_CHARS = 72
ACCESS_COMPACT_BYTES = 128 << 10  # the access log is compacted past this size (~2,000 reads)
ACCESS_MAX_ENTRIES = 1000  # handles the compacted access log remembers (highest frecency)
TMP_PREFIX = ".tmp-"
TMP_STALE_SECONDS = 24 * 3600

_IDX_MAGIC = 0x3158444958544301  # b"\x01CTXIDX1" read little-endian
_IDX_VERSION = 2  # 2 added the character checkpoints; a version-1 index is rebuilt on open
_IDX_HEADER = 11


# --- names and references -------------------------------------------------------------------


def validate_name(name: str, what: str = "name") -> str:
    """Return NAME if it is a valid handle name or session (else UsageError, exit 2).

    Valid: ``[A-Za-z0-9][A-Za-z0-9._-]{0,127}`` -- no ``/``, no ``..`` at the start, at most
    128 characters, so a name can never point outside the store.
    """
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        shown = name if isinstance(name, str) and len(name) <= 40 else f"{str(name)[:40]}..."
        reason = "empty" if name == "" else "invalid"
        if isinstance(name, str) and len(name) > 128:
            reason = f"too long ({len(name)} characters, at most 128)"
        raise UsageError(
            f"{reason} {what} {shown!r}",
            hint=f"a {what} is 1-128 of A-Z a-z 0-9 . _ - and starts with a letter or digit",
        )
    return name


def validate_session(session: str) -> str:
    return validate_name(session, "session")


@dataclass(frozen=True)
class Ref:
    """A parsed reference: ``[ctx:][SESSION/]NAME[@SHA_PREFIX]``."""

    session: str
    name: str
    sha_prefix: str | None = None

    def __str__(self) -> str:
        at = f"@{self.sha_prefix}" if self.sha_prefix else ""
        return f"ctx:{self.session}/{self.name}{at}"


def parse_ref(ref: str, session: str = DEFAULT_SESSION) -> Ref:
    """Parse ``[ctx:][SESSION/]NAME[@SHA_PREFIX]``; SESSION defaults to ``session``.

    Raises UsageError (exit 2) for anything else: more than one ``/``, a bad name or
    session, a prefix that is not 4-64 lowercase hex digits.
    """
    if not isinstance(ref, str) or not ref.strip():
        raise UsageError("empty handle reference", hint="give [ctx:][SESSION/]NAME[@SHA]")
    text = ref.strip()
    if text.startswith("ctx:"):
        text = text[4:]
    sha = None
    if "@" in text:
        text, sha = text.rsplit("@", 1)
        sha = sha.lower()
        if not SHA_PREFIX_RE.fullmatch(sha):
            raise UsageError(
                f"bad handle reference {ref!r}: @{sha} is not a 4-64 digit hex SHA-256 prefix"
            )
    parts = text.split("/")
    if len(parts) == 1:
        sess, name = session, parts[0]
    elif len(parts) == 2:
        sess, name = parts
    else:
        raise UsageError(
            f"bad handle reference {ref!r}", hint="give [ctx:][SESSION/]NAME[@SHA_PREFIX]"
        )
    validate_session(sess)
    validate_name(name)
    return Ref(sess, name, sha)


def public_card(record: dict) -> dict:
    """The card as printed: the public fields in their documented order."""
    return {k: record[k] for k in PUBLIC_FIELDS if k in record}


def looks_like_card(obj: object) -> bool:
    return (
        isinstance(obj, dict)
        and obj.get("kind") == "handle"
        and isinstance(obj.get("ref") or obj.get("name"), str)
    )


def card_ref(card: dict) -> str:
    """The reference a card stands for (its ``ref``, else session/name@sha)."""
    if isinstance(card.get("ref"), str):
        return card["ref"]
    sess = card.get("session_id") or DEFAULT_SESSION
    sha = card.get("sha256") or ""
    at = f"@{sha[:REF_PREFIX_LEN]}" if sha else ""
    return f"ctx:{sess}/{card['name']}{at}"


# --- the line index ---------------------------------------------------------------------------


class Indexer:
    """Fed the payload chunk by chunk: hashes, counts and the line index, in bounded memory."""

    def __init__(self, *, sha256: bool = True) -> None:
        self.size = 0
        self.newlines = 0
        self.chars = 0
        self.last_byte = b""
        if sha256:
            import hashlib

            self._sha = hashlib.sha256()
        else:
            self._sha = None
        self._xxh = xxhash.xxh3_128()
        self.blocks = array("Q")
        self._block = xxhash.xxh3_64()
        self._block_fill = 0
        self.ck_lines = array("Q")
        self.ck_offs = array("Q")
        self._next_ck = STRIDE
        self.cc_offs = array("Q")  # character checkpoints: a byte offset at a character
        self.cc_chars = array("Q")  # boundary near every STRIDE boundary, chars before it
        self._next_cc = STRIDE
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.head = bytearray()

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        n = len(chunk)
        if self._sha is not None:
            self._sha.update(chunk)
        self._xxh.update(chunk)
        # Block checksums at absolute 1 MiB boundaries.
        pos = 0
        while pos < n:
            take = min(BLOCK_SIZE - self._block_fill, n - pos)
            if pos == 0 and take == n:
                self._block.update(chunk)
            else:
                self._block.update(chunk[pos : pos + take])
            self._block_fill += take
            pos += take
            if self._block_fill == BLOCK_SIZE:
                self.blocks.append(self._block.intdigest())
                self._block.reset()
                self._block_fill = 0
        # Line checkpoints: the first line start at or after every STRIDE boundary.
        base = self.size
        end = base + n
        counted_to = 0
        nl_seen = self.newlines
        while self._next_ck - 1 < end:
            rel = max(self._next_ck - 1 - base, 0)
            p = chunk.find(b"\n", rel)
            if p < 0:
                break
            nl_seen += chunk.count(b"\n", counted_to, p + 1)
            counted_to = p + 1
            start = base + p + 1
            self.ck_lines.append(nl_seen)
            self.ck_offs.append(start)
            self._next_ck = (start // STRIDE + 1) * STRIDE
        self.newlines = nl_seen + chunk.count(b"\n", counted_to)
        # Characters as decoded with U+FFFD for invalid bytes, with a checkpoint at every
        # STRIDE boundary (moved back to the start of a character cut there).
        pos = 0
        while pos < n:
            take = min(n - pos, self._next_cc - (base + pos))
            piece = chunk if take == n else chunk[pos : pos + take]
            if piece.isascii() and not self._decoder.getstate()[0]:
                self.chars += take
            else:
                self.chars += len(self._decoder.decode(piece))
            pos += take
            if base + pos == self._next_cc:
                self.cc_offs.append(self._next_cc - len(self._decoder.getstate()[0]))
                self.cc_chars.append(self.chars)
                self._next_cc += STRIDE
        if len(self.head) < HEAD_KEEP:
            self.head += chunk[: HEAD_KEEP - len(self.head)]
        self.last_byte = chunk[-1:]
        self.size = end

    def finish(self) -> None:
        self.chars += len(self._decoder.decode(b"", True))
        if self._block_fill:
            self.blocks.append(self._block.intdigest())
            self._block.reset()
            self._block_fill = 0

    @property
    def sha256(self) -> str:
        assert self._sha is not None
        return self._sha.hexdigest()

    @property
    def xxh3(self) -> str:
        return self._xxh.hexdigest()

    @property
    def lines(self) -> int:
        return self.newlines + (1 if self.size and self.last_byte != b"\n" else 0)

    def index(self) -> LineIndex:
        return LineIndex(
            size=self.size,
            newlines=self.newlines,
            lines=self.lines,
            xxh3=self.xxh3,
            blocks=self.blocks,
            ck_lines=self.ck_lines,
            ck_offs=self.ck_offs,
            cc_offs=self.cc_offs,
            cc_chars=self.cc_chars,
        )


@dataclass
class LineIndex:
    """Sparse line-start offsets (a checkpoint every ~64 KiB), character checkpoints (the
    characters before a character boundary near every 64 KiB boundary: a cut of one huge
    line, or a character slice, is found without decoding from the start) and 1 MiB block
    checksums."""

    size: int
    newlines: int
    lines: int
    xxh3: str
    blocks: array
    ck_lines: array
    ck_offs: array
    cc_offs: array
    cc_chars: array

    def to_bytes(self) -> bytes:
        hi, lo = divmod(int(self.xxh3, 16), 1 << 64)
        head = array(
            "Q",
            [
                _IDX_MAGIC,
                _IDX_VERSION,
                self.size,
                self.newlines,
                BLOCK_SIZE,
                STRIDE,
                len(self.blocks),
                len(self.ck_lines),
                len(self.cc_offs),
                hi,
                lo,
            ],
        )
        body = head.tobytes() + self.blocks.tobytes() + self.ck_lines.tobytes()
        body += self.ck_offs.tobytes() + self.cc_offs.tobytes() + self.cc_chars.tobytes()
        return body + array("Q", [xxhash.xxh3_64_intdigest(body)]).tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> LineIndex | None:
        """The index in DATA, or None when it is damaged, foreign or from another version."""
        if len(data) < (_IDX_HEADER + 1) * 8 or len(data) % 8:
            return None
        body, tail = data[:-8], array("Q", data[-8:])[0]
        if xxhash.xxh3_64_intdigest(body) != tail:
            return None
        words = array("Q", body)
        if words[1] != _IDX_VERSION:
            return None  # an older format: rebuilt by the reader
        magic, version, size, newlines, bsize, stride, nb, nc, ncc, hi, lo = words[:_IDX_HEADER]
        if (magic, bsize, stride) != (_IDX_MAGIC, BLOCK_SIZE, STRIDE):
            return None
        if len(words) != _IDX_HEADER + nb + 2 * nc + 2 * ncc:
            return None
        at = _IDX_HEADER
        c0 = at + nb + 2 * nc
        return cls(
            size=size,
            newlines=newlines,
            lines=newlines,  # the reader adds an unterminated last line (it sees the blob)
            xxh3=f"{(hi << 64) | lo:032x}",
            blocks=words[at : at + nb],
            ck_lines=words[at + nb : at + nb + nc],
            ck_offs=words[at + nb + nc : c0],
            cc_offs=words[c0 : c0 + ncc],
            cc_chars=words[c0 + ncc :],
        )


def index_stream(stream: BinaryIO, *, sha256: bool = False) -> Indexer:
    """Read STREAM to its end through an Indexer (bounded memory)."""
    ix = Indexer(sha256=sha256)
    read = getattr(stream, "read1", stream.read)
    while True:
        chunk = read(READ_CHUNK)
        if not chunk:
            break
        ix.feed(chunk)
    ix.finish()
    return ix


# --- reading a payload --------------------------------------------------------------------------


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
        self._verified: set[int] = set()
        self._cache: tuple[int, bytes] | None = None

    # sizes
    @property
    def size(self) -> int:
        return self.index.size

    @property
    def lines(self) -> int:
        return self.index.lines

    @property
    def chars(self) -> int:
        return int(self.record.get("length", -1))

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
        self.fh.seek(i * BLOCK_SIZE)
        want = min(BLOCK_SIZE, self.size - i * BLOCK_SIZE)
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
                    f"handle {self.label} is corrupt: block {i} (bytes {i * BLOCK_SIZE}-"
                    f"{i * BLOCK_SIZE + want - 1}) does not match its checksum",
                    hint="re-stash it",
                )
            self._verified.add(i)
        self._cache = (i, data)
        return data

    def verify_all(self) -> None:
        for i in range((self.size + BLOCK_SIZE - 1) // BLOCK_SIZE):
            self.block(i)

    def pread(self, offset: int, n: int) -> bytes:
        """Up to N verified bytes from OFFSET."""
        end = min(self.size, offset + n)
        if offset >= end:
            return b""
        first, last = offset // BLOCK_SIZE, (end - 1) // BLOCK_SIZE
        if first == last:
            base = first * BLOCK_SIZE
            return self.block(first)[offset - base : end - base]
        parts = []
        for i in range(first, last + 1):
            base = i * BLOCK_SIZE
            data = self.block(i)
            parts.append(data[max(offset - base, 0) : min(end - base, len(data))])
        return b"".join(parts)

    def iter_bytes(self, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Verified bytes from START to END in block-sized pieces."""
        end = self.size if end is None else min(end, self.size)
        pos = start
        while pos < end:
            i = pos // BLOCK_SIZE
            base = i * BLOCK_SIZE
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
        ix = self.index
        j = bisect_right(ix.ck_lines, line) - 1
        if j >= 0:
            have, pos = ix.ck_lines[j], ix.ck_offs[j]
        else:
            have, pos = 0, 0
        need = line - have  # newlines still to pass
        while need > 0:
            chunk = self.pread(pos, STRIDE)
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
        ix = self.index
        j = bisect_right(ix.ck_offs, offset) - 1
        line, pos = (ix.ck_lines[j], ix.ck_offs[j]) if j >= 0 else (0, 0)
        while pos < offset:
            chunk = self.pread(pos, min(STRIDE, offset - pos))
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
        ix = self.index
        j = bisect_right(ix.cc_offs, offset) - 1
        pos, chars = (ix.cc_offs[j], ix.cc_chars[j]) if j >= 0 else (0, 0)
        return chars + len(self.pread(pos, offset - pos).decode("utf-8", "replace"))

    def char_offset(self, char: int) -> int:
        """The byte offset where character CHAR starts (``size`` past the end)."""
        if self.chars == self.size:
            return min(max(char, 0), self.size)
        if char <= 0:
            return 0
        if char >= self.chars:
            return self.size
        ix = self.index
        j = bisect_right(ix.cc_chars, char) - 1
        pos, have = (ix.cc_offs[j], ix.cc_chars[j]) if j >= 0 else (0, 0)
        # The next checkpoint is at most STRIDE (+ a cut character) further on.
        piece = self.pread(pos, STRIDE + 8)
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
    ix = Indexer(sha256=False)
    read = getattr(stream, "read1", stream.read)
    while True:
        chunk = read(READ_CHUNK)
        if not chunk:
            break
        ix.feed(chunk)
        fh.write(chunk)
    ix.finish()
    fh.flush()
    record = {"length": ix.chars, "lines": ix.lines, "bytes": ix.size, "type": None}
    record["type"] = detect_type_head(bytes(ix.head), ix.size, fh)
    return Payload(fh, ix.index(), label=label, record=record)


def open_bytes(data: bytes, *, label: str = "stdin") -> Payload:
    import io

    return open_spooled(io.BytesIO(data), label=label)


# --- type detection ------------------------------------------------------------------------------


def _json_loads(data: bytes) -> object:
    import orjson

    return orjson.loads(data)


def _is_jsonl(lines: Iterator[bytes]) -> bool:
    seen = 0
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line[:1] not in (b"{", b"[") or len(line) > JSONL_LINE_LIMIT:
            return False
        try:
            _json_loads(line)
        except ValueError:
            return False
        seen += 1
    return seen > 0


def _capped_lines(fh: BinaryIO) -> Iterator[bytes]:
    """FH's lines, each read at most JSONL_LINE_LIMIT + 1 bytes at a time (bounded memory)."""
    fh.seek(0)
    while True:
        line = fh.readline(JSONL_LINE_LIMIT + 1)
        if not line:
            return
        yield line


def detect_type_head(head: bytes, size: int, fh: BinaryIO) -> str:
    """``json`` (one whole document), ``jsonl`` (one JSON object/array a line) or ``text``.

    Payloads up to JSON_PARSE_LIMIT are parsed; bigger ones are checked line by line for
    JSON Lines (lines up to JSONL_LINE_LIMIT), else judged a JSON document by their first
    and last characters -- memory stays bounded either way.
    """
    first = head.lstrip()[:1]
    if first not in (b"{", b"["):
        return "text"
    if size <= JSON_PARSE_LIMIT:
        fh.seek(0)
        data = fh.read()
        try:
            _json_loads(data)
            return "json"
        except ValueError:
            pass
        return "jsonl" if _is_jsonl(iter(data.splitlines())) else "text"
    if _is_jsonl(_capped_lines(fh)):
        return "jsonl"
    fh.seek(max(0, size - 4096))
    tail = fh.read().rstrip()[-1:]
    return "json" if (first, tail) in ((b"{", b"}"), (b"[", b"]")) else "text"


def _check_type(asked: str, detected: str, lines: int) -> None:
    """InputError when the payload is not what --type ASKED says (text is anything)."""
    fits = (
        asked == "text"
        or asked == detected
        or (asked == "jsonl" and detected == "json" and lines <= 1)
    )
    if not fits:
        what = {"json": "one JSON document", "jsonl": "JSON Lines (one JSON value a line)"}
        raise InputError(
            f"--type {asked}: the input is not {what[asked]} (it reads as {detected})",
            hint="leave --type out to have it detected, or give --type text",
        )


def make_preview(head: bytes, chars: int = PREVIEW_CHARS) -> str:
    text = head[: chars * 4 + 16].decode("utf-8", "replace")
    text = " ".join(text.split())
    if len(text) > chars:
        return text[:chars].rstrip() + "\u2026"
    return text


# --- the store ----------------------------------------------------------------------


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _create(path: Path) -> int:
    """Create the new temp file PATH (mode 0600) for writing; its descriptor."""
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)


def _write_all(fd: int, data: bytes) -> None:
    """Write all of DATA to FD (the one place the store writes payload bytes)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Chain:
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


class HandleStore:
    """The on-disk handle store. ``root=None`` means ``ctxtools.config.default_store_root()``.

    Nothing is created until the first write (then with mode 0700).
    """

    def __init__(self, root: str | os.PathLike | None = None) -> None:
        if root is None:
            from ctxtools.config import default_store_root

            root = default_store_root()
        self.root = Path(root)

    # paths
    @property
    def blobs_dir(self) -> Path:
        return self.root / "blobs"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def access_log(self) -> Path:
        return self.root / "access.jsonl"

    def blob_path(self, sha256: str) -> Path:
        return self.blobs_dir / sha256[:2] / sha256

    def idx_path(self, sha256: str) -> Path:
        return self.blobs_dir / sha256[:2] / f"{sha256}.idx"

    def card_path(self, session: str, name: str) -> Path:
        return self.sessions_dir / validate_session(session) / f"{validate_name(name)}.json"

    # low level
    def _store_error(self, exc: OSError, doing: str) -> StoreError:
        reason = exc.strerror or str(exc)
        if exc.errno == errno.ENOSPC:
            reason = "no space left on device"
        elif exc.errno in (errno.EROFS,):
            reason = "read-only file system"
        elif exc.errno in (errno.EACCES, errno.EPERM):
            reason = "permission denied"
        return StoreError(
            f"cannot {doing} in store {self.root}: {reason}",
            hint="nothing was changed; free space, fix permissions or use --store DIR",
        )

    def _ensure_dir(self, path: Path) -> None:
        try:
            # mkdir first, never "check then create": two writers on a fresh store race.
            try:
                self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            except FileExistsError:  # exists and is not a directory
                raise StoreError(
                    f"store root {self.root} is not a directory",
                    hint="point --store or CTX_STORE at a directory",
                ) from None
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        except NotADirectoryError as exc:
            raise StoreError(
                f"store root {self.root} is not a directory (a parent is a file)",
                hint="point --store or CTX_STORE at a directory",
            ) from exc
        except OSError as exc:
            raise self._store_error(exc, "create directories") from exc

    @contextlib.contextmanager
    def _lock(self, exclusive: bool = False) -> Iterator[None]:
        import fcntl

        self._ensure_dir(self.root)
        try:
            fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise self._store_error(exc, "take the lock") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)

    def _tmp_name(self, directory: Path) -> Path:
        return directory / f"{TMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"

    def _atomic_write(self, path: Path, data: bytes, *, durable: bool = True) -> None:
        """Write PATH whole or not at all (temp file, fsync when DURABLE, os.replace)."""
        tmp = self._tmp_name(path.parent)
        try:
            fd = _create(tmp)
            try:
                _write_all(fd, data)
                if durable:
                    os.fdatasync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        if durable:
            _fsync_dir(path.parent)

    def check_writable(self) -> None:
        """Raise StoreError now if a stash could not be written (before running anything)."""
        self._ensure_dir(self.blobs_dir)
        tmp = self._tmp_name(self.blobs_dir)
        try:
            os.close(_create(tmp))
            os.unlink(tmp)
        except OSError as exc:
            raise self._store_error(exc, "write") from exc

    # writing
    def put_bytes(
        self,
        data: bytes,
        *,
        name: str | None = None,
        session: str = DEFAULT_SESSION,
        type: str | None = None,
        exit_status: int | None = None,
    ) -> dict:
        """Store DATA and return its card (always stores; thresholds are the caller's)."""
        import io

        return self.put_stream(
            io.BytesIO(bytes(data)), name=name, session=session, type=type, exit_status=exit_status
        )

    def put_stream(
        self,
        stream: BinaryIO,
        *,
        name: str | None = None,
        session: str = DEFAULT_SESSION,
        type: str | None = None,
        exit_status: int | Callable[[], int] | None = None,
        head: bytes = b"",
    ) -> dict:
        """Stream STREAM (after HEAD, bytes already read from it) into the store; its card.

        Memory stays bounded whatever the size. Without NAME the name is the first 12 hex
        digits of the SHA-256. TYPE is detected when None. Re-stashing a name replaces its
        card (the old ``@sha`` reference then reads as stale). EXIT_STATUS may be a callable,
        called once the stream is exhausted (e.g. a child process's ``wait``).
        """
        validate_session(session)
        if name is not None:
            validate_name(name)
        if type is not None and type not in TYPES:
            raise UsageError(f"unknown type {type!r}", hint="one of: " + ", ".join(TYPES))
        if head:
            stream = _Chain(head, stream)  # type: ignore[assignment]
        self._ensure_dir(self.blobs_dir)
        return self._put(stream, name, session, type, exit_status)

    def _put(
        self,
        stream: BinaryIO,
        name: str | None,
        session: str,
        type_: str | None,
        exit_status: int | Callable[[], int] | None,
    ) -> dict:
        tmp = self._tmp_name(self.blobs_dir)
        ix = Indexer()
        try:
            try:
                fd = _create(tmp)
            except OSError as exc:
                raise self._store_error(exc, "write") from exc
            with open(fd, "w+b", buffering=0) as fh:
                read = getattr(stream, "read1", stream.read)
                while True:
                    chunk = read(READ_CHUNK)
                    if not chunk:
                        break
                    ix.feed(chunk)
                    try:
                        _write_all(fd, chunk)
                    except OSError as exc:
                        raise self._store_error(exc, "write") from exc
                ix.finish()
                try:
                    os.fdatasync(fd)
                except OSError as exc:
                    raise self._store_error(exc, "write") from exc
                detected = detect_type_head(bytes(ix.head), ix.size, fh)
                if type_ is not None:
                    _check_type(type_, detected, ix.lines)
                    detected = type_
            if callable(exit_status):
                exit_status = exit_status()
            # Streaming ran unlocked (a long -- CMD must not hold up gc); putting the blob
            # and its card in place is done under the shared lock, so gc -- which takes it
            # alone -- never sees a blob whose card is about to be written.
            with self._lock():
                return self._commit(tmp, ix, detected, name, session, exit_status)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _commit(
        self,
        tmp: Path,
        ix: Indexer,
        detected: str,
        name: str | None,
        session: str,
        exit_status: int | None,
    ) -> dict:
        sha = ix.sha256
        final = self.blob_path(sha)
        try:
            final.parent.mkdir(mode=0o700, exist_ok=True)
            # The index is derived and checks itself: no fsync (the blob's is enough).
            self._atomic_write(self.idx_path(sha), ix.index().to_bytes(), durable=False)
            os.replace(tmp, final)
            _fsync_dir(final.parent)
        except OSError as exc:
            raise self._store_error(exc, "write") from exc
        record = _make_record(ix, detected, name, session, exit_status, time.time())
        name = record["name"]
        import orjson

        path = self.card_path(session, name)
        self._ensure_dir(self.sessions_dir)
        try:
            path.parent.mkdir(mode=0o700, exist_ok=True)
            self._atomic_write(path, orjson.dumps(record) + b"\n")
        except OSError as exc:
            raise self._store_error(exc, "write the card") from exc
        return public_card(record)

    def put_many(self, items: Iterable[tuple[bytes, dict]]) -> list[dict]:
        """Store many payloads in one batch; their cards, in order, as ``put_bytes`` gives them.

        ITEMS are ``(data, kwargs)`` with KWARGS as for ``put_bytes`` (``name``, ``session``,
        ``type``, ``exit_status``; all optional). Everything is validated before anything is
        written (UsageError). Later items win over earlier ones of the same session/name, as
        with one put after another.

        Cheaper than one put each: the blobs and cards go to temporary files by several
        threads at once (a file's creation is what costs; it overlaps across directories),
        then, under one hold of the shared lock, the blobs are renamed into place and each of
        their directories fsync'ed once, and only then the cards are renamed into place (and
        their directory fsync'ed once). A killed batch therefore leaves at most temporary
        files (``gc`` removes them) and cards whose blobs are complete and durable; a failed
        one (StoreError) removes its temporary files and may have put some cards in place,
        each of them whole.
        """
        import io

        import orjson

        now = time.time()
        prepared: list[tuple[Indexer, str, dict]] = []
        blobs: dict[str, tuple[bytes, Indexer]] = {}
        for data, kwargs in items:
            unknown = set(kwargs) - PUT_KWARGS
            if unknown:
                raise TypeError(f"put_many: unexpected argument(s) {sorted(unknown)}")
            session = validate_session(kwargs.get("session", DEFAULT_SESSION))
            name = kwargs.get("name")
            if name is not None:
                validate_name(name)
            type_ = kwargs.get("type")
            if type_ is not None and type_ not in TYPES:
                raise UsageError(f"unknown type {type_!r}", hint="one of: " + ", ".join(TYPES))
            data = bytes(data)
            ix = Indexer()
            for at in range(0, len(data), READ_CHUNK):
                ix.feed(data[at : at + READ_CHUNK])
            ix.finish()
            detected = detect_type_head(bytes(ix.head), ix.size, io.BytesIO(data))
            if type_ is not None:
                _check_type(type_, detected, ix.lines)
                detected = type_
            record = _make_record(ix, detected, name, session, kwargs.get("exit_status"), now)
            prepared.append((ix, session, record))
            blobs.setdefault(ix.sha256, (data, ix))
        if not prepared:
            return []

        self._ensure_dir(self.blobs_dir)
        self._ensure_dir(self.sessions_dir)
        # One task per directory: files made in one directory are made one after another
        # by the kernel anyway. The biggest tasks start first.
        tasks: dict[Path, list[tuple]] = {}
        for sha, (data, ix) in blobs.items():
            tasks.setdefault(self.blob_path(sha).parent, []).append(("blob", sha, data, ix))
        for k, (_ix, session, record) in enumerate(prepared):
            path = self.card_path(session, record["name"])
            tasks.setdefault(path.parent, []).append(("card", k, orjson.dumps(record) + b"\n"))
        temps: list[Path] = []  # every temp file made (removed on failure)
        blob_tmp: dict[str, tuple[Path, Path | None]] = {}  # sha -> (blob temp, index temp)
        card_tmp: dict[int, Path] = {}

        def write_temp(directory: Path, data: bytes, durable: bool) -> Path:
            tmp = self._tmp_name(directory)
            fd = _create(tmp)
            temps.append(tmp)
            try:
                _write_all(fd, data)
                if durable:
                    os.fdatasync(fd)
            finally:
                os.close(fd)
            return tmp

        def run(directory: Path, jobs: list[tuple]) -> None:
            directory.mkdir(mode=0o700, exist_ok=True)
            for job in jobs:
                if job[0] == "blob":
                    _kind, sha, data, ix = job
                    tmp = write_temp(directory, data, True)
                    itmp = None
                    if ix.size >= INDEX_MIN_BYTES:  # derived, checks itself: no fsync
                        itmp = write_temp(directory, ix.index().to_bytes(), False)
                    blob_tmp[sha] = (tmp, itmp)
                else:
                    _kind, k, data = job
                    card_tmp[k] = write_temp(directory, data, True)

        # A directory with many files is split in several tasks: part of a creation (and
        # the fsyncs) still overlaps within one directory.
        order = sorted(
            (
                (d, jobs[at : at + TASK_FILES])
                for d, jobs in tasks.items()
                for at in range(0, len(jobs), TASK_FILES)
            ),
            key=lambda task: (-len(task[1]), str(task[0])),
        )
        try:
            try:
                if len(order) == 1 or len(prepared) <= 2:
                    for directory, jobs in order:
                        run(directory, jobs)
                else:
                    from concurrent.futures import ThreadPoolExecutor

                    with ThreadPoolExecutor(max_workers=min(BATCH_WORKERS, len(order))) as pool:
                        futures = [pool.submit(run, d, jobs) for d, jobs in order]
                        try:
                            for f in futures:
                                f.result()
                        finally:
                            for f in futures:
                                f.cancel()  # after a failure, the tasks not yet started
            except OSError as exc:
                raise self._store_error(exc, "write") from exc
            with self._lock():
                try:
                    blob_dirs = set()
                    for sha, (tmp, itmp) in blob_tmp.items():
                        if itmp is not None:
                            os.replace(itmp, self.idx_path(sha))
                        os.replace(tmp, self.blob_path(sha))
                        blob_dirs.add(tmp.parent)
                    for d in sorted(blob_dirs):
                        _fsync_dir(d)
                    _fsync_dir(self.blobs_dir)  # new blobs/ab directories
                except OSError as exc:
                    raise self._store_error(exc, "write") from exc
                # Every blob is durable and in place: now the cards may appear.
                try:
                    card_dirs = set()
                    for k, (_ix, session, record) in enumerate(prepared):
                        path = self.card_path(session, record["name"])
                        os.replace(card_tmp[k], path)
                        card_dirs.add(path.parent)
                    for d in sorted(card_dirs):
                        _fsync_dir(d)
                    _fsync_dir(self.sessions_dir)
                except OSError as exc:
                    raise self._store_error(exc, "write the card") from exc
        except BaseException:
            for tmp in temps:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)  # those already renamed are gone from their temp name
            raise
        return [public_card(record) for _ix, _session, record in prepared]

    # reading
    def _load_record(self, session: str, name: str) -> dict | None:
        path = self.card_path(session, name)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read card {path}: {exc.strerror or exc}") from exc
        try:
            record = _json_loads(data)
        except ValueError:
            raise IntegrityError(
                f"handle {session}/{name}: its card {path} is not valid JSON",
                hint="remove it with ctx-stash --rm",
            ) from None
        reason = _card_problem(record, session, name)
        if reason is not None:
            raise IntegrityError(
                f"handle {session}/{name}: its card {path} is damaged ({reason})",
                hint=f"remove it with ctx-stash --rm {session}/{name}",
            )
        return record

    def record(self, ref: str | Ref, session: str = DEFAULT_SESSION) -> dict:
        """The full stored record of REF (card plus private fields); checks staleness."""
        r = ref if isinstance(ref, Ref) else parse_ref(ref, session)
        record = self._load_record(r.session, r.name)
        if record is None:
            raise NotFoundError(
                f"no handle {r.session}/{r.name}",
                hint="ctx-stash --list shows the handles of a session",
            )
        if r.sha_prefix and not record["sha256"].startswith(r.sha_prefix):
            if not self.blob_path_for_prefix_exists(r.sha_prefix):
                raise StaleHandleError(
                    f"no version @{r.sha_prefix} of {r.session}/{r.name} "
                    f"(its current version is @{record['sha256'][:REF_PREFIX_LEN]})",
                    hint=f"read ctx:{r.session}/{r.name} for the current version",
                )
            raise StaleHandleError(
                f"stale handle {r}: {r.session}/{r.name} has been re-stashed "
                f"(now @{record['sha256'][:REF_PREFIX_LEN]})",
                hint=f"read ctx:{r.session}/{r.name} for the current version",
            )
        return record

    def blob_path_for_prefix_exists(self, prefix: str) -> bool:
        """Whether some stored blob's SHA-256 starts with PREFIX (an earlier version may
        still be there until gc; a prefix of no blob at all was never stashed)."""
        d = self.blobs_dir / prefix[:2]
        try:
            with os.scandir(d) as it:
                return any(e.name.startswith(prefix) and not e.name.endswith(".idx") for e in it)
        except OSError:
            return False

    def card(self, ref: str | Ref, session: str = DEFAULT_SESSION) -> dict:
        """The current card of REF (raises NotFoundError / StaleHandleError)."""
        return public_card(self.record(ref, session))

    def _load_index(self, record: dict, fh: BinaryIO, label: str) -> LineIndex:
        sha = record["sha256"]
        ipath = self.idx_path(sha)
        index = None
        small = int(record.get("bytes", 0)) < INDEX_MIN_BYTES
        if not small:
            try:
                index = LineIndex.from_bytes(ipath.read_bytes())
            except OSError:
                index = None
        if index is not None and (
            index.size != record.get("bytes") or index.xxh3 != record.get("xxh3")
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
                    self._atomic_write(ipath, index.to_bytes(), durable=False)
        # lines: newlines plus an unterminated last line
        if index.size:
            fh.seek(index.size - 1)
            last = fh.read(1)
            index.lines = index.newlines + (1 if last != b"\n" else 0)
        else:
            index.lines = 0
        return index

    def open(
        self,
        ref: str | Ref,
        session: str = DEFAULT_SESSION,
        *,
        verify: bool = False,
        touch: bool = True,
    ) -> Payload:
        """Open REF for reading: a Payload that serves only verified bytes.

        Raises NotFoundError, StaleHandleError, IntegrityError (corrupt, truncated, or --verify
        SHA-256 mismatch). With TOUCH (the default) the read is logged in the access log.
        """
        r = ref if isinstance(ref, Ref) else parse_ref(ref, session)
        record = self.record(r)
        label = f"ctx:{record['session_id']}/{record['name']}@{record['sha256'][:REF_PREFIX_LEN]}"
        path = self.blob_path(record["sha256"])
        try:
            fh = open(path, "rb")  # noqa: SIM115 - owned by the Payload
        except FileNotFoundError:
            raise IntegrityError(
                f"handle {label}: its blob is missing from the store", hint="re-stash it"
            ) from None
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
        try:
            size = os.fstat(fh.fileno()).st_size
            if size != record.get("bytes"):
                raise IntegrityError(
                    f"handle {label} is {'truncated' if size < record['bytes'] else 'corrupt'}: "
                    f"the blob has {size} bytes, {record['bytes']} were stashed",
                    hint="re-stash it",
                )
            index = self._load_index(record, fh, label)
            payload = Payload(fh, index, label=label, record=record)
            if verify:
                import hashlib

                h = hashlib.sha256()
                for piece in payload.iter_bytes():
                    h.update(piece)
                if h.hexdigest() != record["sha256"]:
                    raise IntegrityError(
                        f"handle {label} is corrupt: SHA-256 mismatch", hint="re-stash it"
                    )
            elif size <= FULL_CHECK_BYTES:
                payload.verify_all()
        except BaseException:
            fh.close()
            raise
        if touch:
            self.record_access(record["session_id"], record["name"])
        return payload

    def read_bytes(
        self,
        ref: str | Ref,
        *,
        session: str = DEFAULT_SESSION,
        verify: bool = False,
        touch: bool = True,
    ) -> bytes:
        """The whole verified payload of REF.

        Raises NotFoundError, StaleHandleError, IntegrityError.
        """
        with self.open(ref, session, verify=verify, touch=touch) as payload:
            return b"".join(payload.iter_bytes())

    # access log
    def record_access(self, session: str, name: str, *, when: float | None = None) -> None:
        """Append one access record (best effort: a read-only store just is not logged)."""
        import orjson

        line = orjson.dumps({"s": session, "n": name, "t": round(when or time.time(), 3), "c": 1})
        try:
            if not self.root.is_dir():
                return
            with self._lock():
                fd = os.open(self.access_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, line + b"\n")
                    size = os.fstat(fd).st_size
                finally:
                    os.close(fd)
            if size > ACCESS_COMPACT_BYTES:
                self.compact_access()
        except (OSError, StoreError):
            return

    def access_stats(self, with_times: bool = False) -> dict:
        """(session, name) -> (read count, last read time) from the access log; WITH_TIMES:
        -> [(time, count), ...] of each record instead."""
        import orjson

        stats: dict = {}
        try:
            data = self.access_log.read_bytes()
        except OSError:
            return stats
        for raw in data.splitlines():
            try:
                rec = orjson.loads(raw)
                key = (str(rec["s"]), str(rec["n"]))
                c, t = int(rec.get("c", 1)), float(rec["t"])
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # a torn or foreign line: skip it
            if not math.isfinite(t):
                continue
            if with_times:
                stats.setdefault(key, []).append((t, c))
                continue
            old = stats.get(key)
            stats[key] = (c, t) if old is None else (old[0] + c, max(old[1], t))
        return stats

    def compact_access(self, keep: set[tuple[str, str]] | None = None) -> None:
        """Rewrite the access log as one record per handle (only KEEP's, when given), at most
        ACCESS_MAX_ENTRIES of them: the lowest frecency goes first. Reads logged before a
        handle's current card was written (an earlier version of the name) are dropped."""
        with self._lock(exclusive=True):
            self._compact_access_locked(keep)

    def _compact_access_locked(
        self, keep: set[tuple[str, str]] | None, now: float | None = None
    ) -> None:
        now = time.time() if now is None else now
        created = {
            (r["session_id"], r["name"]): float(r.get("created_at", 0.0)) for r in self.records()
        }
        lam = math.log(2) / (7 * 24 * 3600)
        rows = []
        for key, times in self.access_stats(with_times=True).items():
            if key not in created or (keep is not None and key not in keep):
                continue
            valid = [(t, c) for t, c in times if t >= created[key]]
            if valid:
                c = sum(c for _t, c in valid)
                t = max(t for t, _c in valid)
                rows.append((key, c, t, (c + 1) * math.exp(-lam * max(0.0, now - t))))
        if len(rows) > ACCESS_MAX_ENTRIES:
            rows.sort(key=lambda r: (-r[3], r[0]))
            rows = rows[:ACCESS_MAX_ENTRIES]
        lines = [_access_line(s, n, c, t) for (s, n), c, t, _f in sorted(rows)]
        try:
            self._atomic_write(self.access_log, b"".join(lines))
        except OSError as exc:
            raise self._store_error(exc, "compact the access log") from exc

    # listing, removal, gc
    def sessions(self) -> list[str]:
        try:
            return sorted(p.name for p in self.sessions_dir.iterdir() if p.is_dir())
        except OSError:
            return []

    def records(
        self, session: str | None = None, damaged: list[tuple[str, str, str | None]] | None = None
    ) -> list[dict]:
        """Every readable card record (of SESSION, or of all sessions), sorted by session/name.

        A damaged card is skipped; with DAMAGED, ``(id, message, its sha256 if readable)`` of
        each is appended to it.
        """
        out = []
        for sess in [validate_session(session)] if session else self.sessions():
            d = self.sessions_dir / sess
            try:
                names = sorted(p.name for p in d.iterdir())
            except OSError:
                continue
            for fname in names:
                if not fname.endswith(".json") or fname.startswith(TMP_PREFIX):
                    continue
                if not NAME_RE.fullmatch(fname[:-5]):
                    continue
                try:
                    rec = self._load_record(sess, fname[:-5])
                except (IntegrityError, StoreError) as exc:
                    if damaged is not None:
                        damaged.append((f"{sess}/{fname[:-5]}", exc.message, _card_sha(d / fname)))
                    continue
                if rec is not None:
                    out.append(rec)
        return out

    def entries(
        self,
        session: str | None = None,
        now: float | None = None,
        damaged: list[tuple[str, str, str | None]] | None = None,
    ) -> list[dict]:
        """Cards with their access figures: id, size_bytes, last_accessed_at, access_count,
        frecency (count x e^(-lambda age), half-life 7 days) -- newest-frecency first.

        Reads logged before the card was written belong to an earlier version of the name
        (re-stashed): they do not count. DAMAGED collects the cards skipped (``records``).
        """
        self.check_root()
        now = time.time() if now is None else now
        stats = self.access_stats(with_times=True)
        lam = math.log(2) / (7 * 24 * 3600)
        out = []
        for rec in self.records(session, damaged):
            key = (rec["session_id"], rec["name"])
            created = float(rec.get("created_at", 0.0))
            times = stats.get(key, [])
            count = sum(c for t, c in times if t >= created)
            last = max((t for t, _c in times if t >= created), default=0.0)
            last = max(last, created)
            age = max(0.0, now - last)
            frecency = (count + 1) * math.exp(-lam * age)
            out.append(
                {
                    "id": f"{key[0]}/{key[1]}",
                    "size_bytes": int(rec.get("bytes", 0)),
                    "last_accessed_at": last,
                    "access_count": count,
                    "frecency": frecency,
                    "card": public_card(rec),
                }
            )
        out.sort(key=lambda e: (-e["frecency"], e["id"]))
        return out

    def check_root(self) -> None:
        """StoreError when the root exists but is not a directory (nothing to list or gc)."""
        if self.root.exists() and not self.root.is_dir():
            raise StoreError(
                f"store root {self.root} is not a directory",
                hint="point --store or CTX_STORE at a directory",
            )

    def remove(self, refs: list[str], session: str = DEFAULT_SESSION) -> list[str]:
        """Remove the cards of REFS (blobs go at the next gc); the removed ids."""
        parsed = [parse_ref(r, session) for r in refs]
        for r in parsed:
            try:
                self.record(r)  # NotFound / stale before anything is removed
            except IntegrityError:
                if r.sha_prefix:  # a damaged card has no version to compare with
                    raise
                # a damaged card can always be removed
        removed = []
        with self._lock(exclusive=True):
            for r in parsed:
                try:
                    self.card_path(r.session, r.name).unlink()
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    raise self._store_error(exc, "remove a card") from exc
                removed.append(f"{r.session}/{r.name}")
        return removed

    def gc(
        self,
        *,
        max_bytes: int | None = None,
        max_entries: int | None = None,
        strategy: str = "lru",
        dry_run: bool = False,
        now: float | None = None,
    ) -> dict:
        """Evict handles over budget, then remove unreferenced blobs and dead temp files.

        Returns {"evicted": [ids], "blobs_removed": n, "bytes_freed": n, "temp_removed": n,
        "kept": n, "kept_bytes": n}.
        """
        from ctxtools.store import evict

        self.check_root()
        if not self.root.is_dir():
            return {
                "evicted": [],
                "blobs_removed": 0,
                "bytes_freed": 0,
                "temp_removed": 0,
                "kept": 0,
                "kept_bytes": 0,
                "damaged": [],
            }
        with self._lock(exclusive=True):
            damaged: list[tuple[str, str, str | None]] = []
            entries = self.entries(now=now, damaged=damaged)
            budget = evict.GcBudget(max_bytes=max_bytes, max_entries=max_entries)
            victims = evict.evict(strategy, entries, budget, now=now)
            vset = set(victims)
            kept = [e for e in entries if e["id"] not in vset]
            referenced = {e["card"]["sha256"] for e in kept}
            # A damaged card is reported, not removed; its blob stays while it is there.
            referenced.update(sha for _id, _msg, sha in damaged if sha)
            if not dry_run:
                for vid in victims:
                    s, n = vid.split("/", 1)
                    with contextlib.suppress(FileNotFoundError):
                        self.card_path(s, n).unlink()
            blobs_removed = 0
            freed = 0
            temp_removed = 0
            now_t = time.time()
            for path in self._walk_files():
                fname = path.name
                if fname.startswith(TMP_PREFIX):
                    if self._tmp_is_dead(fname, path, now_t):
                        temp_removed += 1
                        if not dry_run:
                            with contextlib.suppress(OSError):
                                freed += path.stat().st_size
                                path.unlink()
                        else:
                            with contextlib.suppress(OSError):
                                freed += path.stat().st_size
                    continue
                if path.parent.parent != self.blobs_dir:
                    continue
                sha = fname[:-4] if fname.endswith(".idx") else fname
                if sha in referenced:
                    continue
                if not fname.endswith(".idx"):
                    blobs_removed += 1
                with contextlib.suppress(OSError):
                    freed += path.stat().st_size
                    if not dry_run:
                        path.unlink()
            if not dry_run and self.access_log.exists():
                keep = {(e["id"].split("/", 1)[0], e["id"].split("/", 1)[1]) for e in kept}
                with contextlib.suppress(OSError, StoreError):
                    self._compact_access_locked(keep, now)
        return {
            "evicted": victims,
            "blobs_removed": blobs_removed,
            "bytes_freed": freed,
            "temp_removed": temp_removed,
            "kept": len(kept),
            "kept_bytes": sum(e["size_bytes"] for e in kept),
            "damaged": [{"id": i, "error": msg} for i, msg, _sha in damaged],
        }

    def _walk_files(self) -> Iterator[Path]:
        """The root's own files, then every file under blobs/ and sessions/."""
        with contextlib.suppress(OSError):
            for entry in sorted(os.scandir(self.root), key=lambda e: e.name):
                if entry.is_file(follow_symlinks=False):
                    yield Path(entry.path)
        for top in (self.blobs_dir, self.sessions_dir):
            for dirpath, dirs, files in os.walk(top):
                dirs.sort()
                for f in sorted(files):
                    yield Path(dirpath) / f

    @staticmethod
    def _tmp_is_dead(fname: str, path: Path, now: float) -> bool:
        """A temp file is a leftover when its writer is gone (or it is a day old)."""
        m = re.match(re.escape(TMP_PREFIX) + r"(\d+)-", fname)
        try:
            age = now - path.stat().st_mtime
        except OSError:
            return False
        if m is None:
            return True
        pid = int(m.group(1))
        if pid == os.getpid():
            return False
        return not _pid_alive(pid) or age > TMP_STALE_SECONDS


SHA256_RE = re.compile(r"[0-9a-f]{64}")
GC_MAX_ENTRIES = 100  # the budget of ctx-stash --gc given none


def _card_sha(path: Path) -> str | None:
    """The sha256 a (damaged) card file names, when it names a valid one."""
    try:
        rec = _json_loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    sha = rec.get("sha256") if isinstance(rec, dict) else None
    return sha if isinstance(sha, str) and SHA256_RE.fullmatch(sha) else None


_CARD_FIELDS = (
    ("session_id", str),
    ("name", str),
    ("type", str),
    ("length", int),
    ("lines", int),
    ("bytes", int),
    ("sha256", str),
    ("xxh3", str),
)


def _card_problem(record: object, session: str, name: str) -> str | None:
    """What is wrong with a stored card record (None: nothing)."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for key, kind in _CARD_FIELDS:
        value = record.get(key)
        if value is None:
            return f"no {key!r} field"
        if not isinstance(value, kind) or (kind is int and (value < 0 or value is True)):
            return f"bad {key!r} field"
    if not SHA256_RE.fullmatch(record["sha256"]):
        return "its sha256 is not 64 hex digits"
    if record["type"] not in TYPES:
        return f"unknown type {record['type']!r}"
    if (record["session_id"], record["name"]) != (session, name):
        return "it names another handle"
    return None


def _make_record(
    ix: Indexer,
    detected: str,
    name: str | None,
    session: str,
    exit_status: int | None,
    now: float,
) -> dict:
    """The stored record (public card plus private fields) of a payload indexed by IX."""
    sha = ix.sha256
    name = name or sha[:REF_PREFIX_LEN]
    record = {
        "kind": "handle",
        "session_id": session,
        "name": name,
        "type": detected,
        "length": ix.chars,
        "lines": ix.lines,
        "bytes": ix.size,
        "repr_preview": make_preview(bytes(ix.head)),
        "sha256": sha,
        "ref": f"ctx:{session}/{name}@{sha[:REF_PREFIX_LEN]}",
    }
    if exit_status is not None:
        record["exit_status"] = int(exit_status)
    record["xxh3"] = ix.xxh3
    record["created_at"] = round(now, 3)
    return record


def _access_line(s: str, n: str, c: int, t: float) -> bytes:
    import orjson

    return orjson.dumps({"s": s, "n": n, "t": t, "c": c}) + b"\n"
