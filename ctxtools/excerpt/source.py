"""Reading lines: a file's bytes held whole or streamed in blocks, and the text of the lines
the spans need.

Lines are lines between ``\\n`` bytes (as grep and editors number them): a ``\\r`` before the
``\\n`` is not shown, invalid UTF-8 shows as U+FFFD, and neither moves a line number. A line
longer than ``max_line_chars`` is cut and ends with ``…[+N chars]``. A file over
``LARGE_FILE`` bytes is read in pieces of complete lines (``pieces_of_stream``), never held
whole: one pass finds the matches, a second keeps only the lines the spans need.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import BinaryIO

from ctxtools.binary import is_binary  # noqa: F401  (the one rule; re-exported)
from ctxtools.excerpt.model import Span

LARGE_FILE = 512 * 1024  # files above this are streamed in blocks, never held whole
BLOCK_SIZE = 1 << 20
BINARY_SNIFF = 8192  # the head read for ``binary.is_binary`` (its BINARY_PROBE)
# Bytes 0x80-0xBF continue a UTF-8 character: deleting them leaves one byte per character.
_CONTINUATION = bytes(range(0x80, 0xC0))

Piece = tuple[int, bytes, bool]  # (number of its first line, bytes, starts mid-line)


def _char_count(data: bytes) -> int:
    return len(data.translate(None, _CONTINUATION))


def pieces_of_stream(fh: BinaryIO, block: int = BLOCK_SIZE) -> Iterator[Piece]:
    """Pieces of complete lines; a line longer than BLOCK is cut into several pieces."""
    line = 1
    mid = False
    carry = b""
    while True:
        chunk = fh.read(block)
        if not chunk:
            break
        buf = carry + chunk if carry else chunk
        cut = buf.rfind(b"\n")
        if cut >= 0:
            piece, carry = buf[: cut + 1], buf[cut + 1 :]
            yield line, piece, mid
            line += piece.count(b"\n")
            mid = False
        else:
            carry = buf
        if len(carry) >= block:  # one line longer than a block: cut it between words
            k = max(carry.rfind(b" ", len(carry) // 2), carry.rfind(b"\t", len(carry) // 2))
            if k < 0:
                k = len(carry) - 1
            yield line, carry[: k + 1], mid
            carry = carry[k + 1 :]
            mid = True
    if carry:
        yield line, carry, mid


def collect_lines(pieces: Iterable[Piece], spans: Sequence[Span], max_chars: int) -> dict[int, str]:
    """The text of the lines SPANS cover, read from PIECES."""
    ranges = [(s.start, s.end) for s in spans if s.end >= s.start]
    if not ranges:
        return {}
    cap = max_chars * 4 + 8
    acc: dict[int, list] = {}
    ri = 0
    for first, data, _mid in pieces:
        last = first + data.count(b"\n")
        while ri < len(ranges) and ranges[ri][1] < first:
            ri += 1
        if ri == len(ranges):
            break
        if ranges[ri][0] > last:
            continue
        wanted: list[int] = []
        for a, b in ranges[ri:]:
            if a > last:
                break
            wanted.extend(range(max(a, first), min(b, last) + 1))
        lo, hi = wanted[0], wanted[-1]
        if hi - first <= last - lo:
            frags = data.split(b"\n", hi - first + 1)

            def frag(line: int, frags=frags, first=first) -> bytes:
                return frags[line - first]
        else:
            frags = data.rsplit(b"\n", last - lo + 1)

            def frag(line: int, frags=frags, last=last) -> bytes:
                return frags[len(frags) - 1 - (last - line)]

        for line in wanted:
            piece = frag(line)
            slot = acc.get(line)
            if slot is None:
                slot = acc[line] = [b"", 0, False]
            if piece:
                slot[2] = piece.endswith(b"\r")
            room = cap - len(slot[0])
            if room > 0:
                slot[0] += piece[:room]
                if len(piece) > room:
                    slot[1] += _char_count(piece[room:])
            else:
                slot[1] += _char_count(piece)
    out: dict[int, str] = {}
    for line, (prefix, extra, ends_cr) in acc.items():
        if ends_cr:  # the CR of a CRLF line is not shown, nor counted
            if extra:
                extra -= 1
            else:
                prefix = prefix[:-1]
        if extra or len(prefix) > max_chars:
            text = prefix.decode("utf-8", "replace")
            total = (_char_count(prefix) if extra else len(text)) + extra
            if total > max_chars:
                text = f"{text[:max_chars]}…[+{total - max_chars} chars]"
        else:
            text = prefix.decode("utf-8", "replace")
        out[line] = text
    return out


def cut_line(line: str, max_chars: int) -> str:
    return f"{line[:max_chars]}…[+{len(line) - max_chars} chars]"


def line_fragments(data: bytes, newlines: int, a: int, b: int) -> list[bytes]:
    """Lines A..B (1-based) of DATA, which holds NEWLINES newlines, as bytes without their
    newlines, splitting no more of DATA than needed."""
    frag_count = newlines + 1  # fragment k-1 is line k; a final "" follows a last newline
    if b <= frag_count - a:  # nearer the start: split up to line B
        return data.split(b"\n", b)[a - 1 : b]
    frags = data.rsplit(b"\n", frag_count - a + 1)
    base = frag_count - len(frags)  # fragment index of frags[0]
    return frags[a - 1 - base : b - base]


def lines_of_whole(
    data: bytes, newlines: int, spans: Sequence[Span], max_chars: int
) -> dict[int, str]:
    """``collect_lines`` for a text held whole: one split, one decode per span."""
    ranges: list[list[int]] = []
    for s in spans:
        if s.end < s.start:
            continue
        if ranges and s.start == ranges[-1][1] + 1:
            ranges[-1][1] = s.end
        else:
            ranges.append([s.start, s.end])
    if not ranges:
        return {}
    full = data.split(b"\n") if len(ranges) > 2 else None
    out: dict[int, str] = {}
    for a, b in ranges:
        frags = full[a - 1 : b] if full is not None else line_fragments(data, newlines, a, b)
        chunk = b"\n".join(frags)
        text = chunk.decode("utf-8", "replace")
        lines = text.split("\n")
        if "\r" in text:
            lines = [x[:-1] if x.endswith("\r") else x for x in lines]
        if len(text) > max_chars and max(map(len, lines)) > max_chars:
            lines = [cut_line(x, max_chars) if len(x) > max_chars else x for x in lines]
        out.update(zip(range(a, b + 1), lines, strict=True))
    return out


def to_bytes(text: str | bytes) -> bytes:
    if isinstance(text, bytes | bytearray | memoryview):
        return bytes(text)
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def read_file_bytes(path: str) -> bytes:
    """A whole file's bytes (plain os calls: measurably cheaper over thousands of files)."""
    import os

    fd = os.open(path, os.O_RDONLY)
    try:
        return read_fd(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def read_fd(fd: int, size: int) -> bytes:
    import os

    data = os.read(fd, size + 1)
    if len(data) <= size and size:  # a regular file read short: its end (one call a file)
        return data
    chunks = []
    while data:
        chunks.append(data)
        data = os.read(fd, 1 << 20)
    return b"".join(chunks) if len(chunks) != 1 else chunks[0]
