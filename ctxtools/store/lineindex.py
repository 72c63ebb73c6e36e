"""The ``.idx`` line/checksum index of a payload, and the ``Indexer`` that builds it.

An ``Indexer`` is fed a payload chunk by chunk and keeps, in bounded memory: SHA-256 and
xxh3-128 of the whole, xxh3-64 of every ``BLOCK_SIZE`` (1 MiB) block, the newline count with
a line checkpoint about every ``STRIDE`` (64 KiB) bytes, the character count (U+FFFD for an
invalid byte) with a character checkpoint near every ``STRIDE`` boundary, and the first
``HEAD_KEEP`` bytes (for the preview and the type). Its ``LineIndex`` is what a reader needs
for random access: a line range costs a binary search plus at most a 64 KiB scan.

The file format (version 2; a version-1 file is rebuilt by the reader): little-endian
64-bit words -- a header of ``_IDX_HEADER`` words (magic, version, size, newlines, block
size, stride, the three array lengths, the payload's xxh3-128 in two words), the block
checksums, the line checkpoints (lines, offsets), the character checkpoints (offsets,
characters), and last an xxh3-64 of all that: a damaged or foreign file reads as None.
"""

from __future__ import annotations

import codecs
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

import xxhash

READ_CHUNK = 1 << 20  # bytes per read while stashing
BLOCK_SIZE = 1 << 20  # bytes per xxh3-64 block checksum
STRIDE = 1 << 16  # a line checkpoint about every 64 KiB
HEAD_KEEP = 1 << 16  # bytes kept in memory for the preview and type detection
# A batch (put_many) writes no ``.idx`` file for smaller blobs: their index (one block, no
# line checkpoints) is rebuilt from the blob on open -- the reader hashes such a blob whole
# anyway -- which saves a file per handle (creating a file is the dear part of a stash).
INDEX_MIN_BYTES = STRIDE

_IDX_MAGIC = 0x3158444958544301  # b"\x01CTXIDX1" read little-endian
_IDX_VERSION = 2  # 2 added the character checkpoints; a version-1 index is rebuilt on open
_IDX_HEADER = 11


class Indexer:
    """Fed the payload chunk by chunk: hashes, counts and the line index, in bounded memory."""

    def __init__(self, *, sha256: bool = True) -> None:
        self.block_size = BLOCK_SIZE
        self.stride = STRIDE
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
        self._next_ck = self.stride
        self.cc_offs = array("Q")  # character checkpoints: a byte offset at a character
        self.cc_chars = array("Q")  # boundary near every stride boundary, chars before it
        self._next_cc = self.stride
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.head = bytearray()

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        if self._sha is not None:
            self._sha.update(chunk)
        self._xxh.update(chunk)
        self._feed_blocks(chunk)
        self._feed_lines(chunk)
        self._feed_chars(chunk)
        if len(self.head) < HEAD_KEEP:
            self.head += chunk[: HEAD_KEEP - len(self.head)]
        self.last_byte = chunk[-1:]
        self.size += len(chunk)

    def _feed_blocks(self, chunk: bytes) -> None:
        """Block checksums at absolute block-size boundaries."""
        n = len(chunk)
        pos = 0
        while pos < n:
            take = min(self.block_size - self._block_fill, n - pos)
            if pos == 0 and take == n:
                self._block.update(chunk)
            else:
                self._block.update(chunk[pos : pos + take])
            self._block_fill += take
            pos += take
            if self._block_fill == self.block_size:
                self._end_block()

    def _end_block(self) -> None:
        self.blocks.append(self._block.intdigest())
        self._block.reset()
        self._block_fill = 0

    def _feed_lines(self, chunk: bytes) -> None:
        """Line checkpoints: the first line start at or after every stride boundary."""
        base = self.size
        end = base + len(chunk)
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
            self._next_ck = (start // self.stride + 1) * self.stride
        self.newlines = nl_seen + chunk.count(b"\n", counted_to)

    def _feed_chars(self, chunk: bytes) -> None:
        """Characters as decoded with U+FFFD for invalid bytes, with a checkpoint at every
        stride boundary (moved back to the start of a character cut there)."""
        base = self.size
        n = len(chunk)
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
                self._next_cc += self.stride

    def finish(self) -> None:
        self.chars += len(self._decoder.decode(b"", True))
        if self._block_fill:
            self._end_block()

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
            block_size=self.block_size,
            stride=self.stride,
        )


@dataclass
class LineIndex:
    """Sparse line-start offsets (a checkpoint every ~64 KiB), character checkpoints (the
    characters before a character boundary near every 64 KiB boundary: a cut of one huge
    line, or a character slice, is found without decoding from the start) and 1 MiB block
    checksums; ``block_size`` and ``stride`` are the geometry it was built with."""

    size: int
    newlines: int
    lines: int
    xxh3: str
    blocks: array
    ck_lines: array
    ck_offs: array
    cc_offs: array
    cc_chars: array
    block_size: int
    stride: int

    def to_bytes(self) -> bytes:
        hi, lo = divmod(int(self.xxh3, 16), 1 << 64)
        head = array(
            "Q",
            [
                _IDX_MAGIC,
                _IDX_VERSION,
                self.size,
                self.newlines,
                self.block_size,
                self.stride,
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
            block_size=bsize,
            stride=stride,
        )


def feed_stream(
    ix: Indexer, stream: BinaryIO, sink: Callable[[bytes], object] | None = None
) -> Indexer:
    """Feed IX with STREAM to its end, each chunk also to SINK when given (bounded memory),
    and finish it; IX."""
    read = getattr(stream, "read1", stream.read)
    while True:
        chunk = read(READ_CHUNK)
        if not chunk:
            break
        ix.feed(chunk)
        if sink is not None:
            sink(chunk)
    ix.finish()
    return ix


def index_stream(stream: BinaryIO, *, sha256: bool = False) -> Indexer:
    """Read STREAM to its end through an Indexer (bounded memory)."""
    return feed_stream(Indexer(sha256=sha256), stream)
