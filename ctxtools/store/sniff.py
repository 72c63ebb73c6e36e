"""What a payload is: ``json`` (one whole document), ``jsonl`` (one JSON value a line),
``binary`` (``binary.is_binary``: a NUL byte or mostly bytes outside UTF-8 in its head)
or ``text`` -- detected from its bytes in bounded memory, or checked against ``--type``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from ctxtools.errors import InputError

JSON_PARSE_LIMIT = 8 << 20  # whole-document JSON validation up to this size
JSONL_LINE_LIMIT = 1 << 20  # longer lines are not JSON Lines records (type detection)
JSONL_SNIFF_BYTES = 4 << 20  # a bigger payload is judged JSON Lines from this much of its head


def json_loads(data: bytes) -> object:
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
            json_loads(line)
        except ValueError:
            return False
        seen += 1
    return seen > 0


def _sniffed_lines(fh: BinaryIO, size: int) -> Iterator[bytes]:
    """The lines a big payload FH (SIZE bytes) is judged JSON Lines from, in bounded time
    and memory: the whole lines of its first JSONL_SNIFF_BYTES (a longer cut-off line
    included, to be refused as one), then its last line. Reading every line of a 200 MB
    payload -- a byte a call from an unbuffered file -- took minutes."""
    fh.seek(0)
    head = fh.read(JSONL_SNIFF_BYTES)
    whole, _, rest = head.rpartition(b"\n")
    yield from whole.split(b"\n") if whole else ()
    if len(rest) > JSONL_LINE_LIMIT or not whole:
        yield rest  # a line too long to be a record (or no whole line at all)
        return
    fh.seek(max(len(head), size - JSONL_LINE_LIMIT - 2))
    # The last line; without a newline in view, what is in view: too long to be a record.
    yield fh.read().rstrip(b"\r\n").rpartition(b"\n")[2]


def detect_type_head(head: bytes, size: int, fh: BinaryIO) -> str:
    """``json`` (one whole document), ``jsonl`` (one JSON object/array a line), ``binary``
    (HEAD looks binary, ``binary.is_binary``) or ``text``.

    Payloads up to JSON_PARSE_LIMIT are parsed; bigger ones are JSON Lines when the whole
    lines of their first JSONL_SNIFF_BYTES and their last line are (each up to
    JSONL_LINE_LIMIT), else judged a JSON document by their first and last characters --
    time and memory stay bounded either way.
    """
    from ctxtools.binary import is_binary

    if is_binary(head):
        return "binary"
    first = head.lstrip()[:1]
    if first not in (b"{", b"["):
        return "text"
    if size <= JSON_PARSE_LIMIT:
        fh.seek(0)
        data = fh.read()
        try:
            json_loads(data)
            return "json"
        except ValueError:
            pass
        return "jsonl" if _is_jsonl(iter(data.splitlines())) else "text"
    if _is_jsonl(_sniffed_lines(fh, size)):
        return "jsonl"
    fh.seek(max(0, size - 4096))
    tail = fh.read().rstrip()[-1:]
    return "json" if (first, tail) in ((b"{", b"}"), (b"[", b"]")) else "text"


def settle_type(asked: str | None, detected: str, lines: int) -> str:
    """The payload's type: DETECTED, or ASKED (``--type``) when the payload is what it says
    (text is anything); InputError when it is not."""
    if asked is None:
        return detected
    fits = (
        asked == "text"
        or asked == detected
        or (asked == "jsonl" and detected == "json" and lines <= 1)
    )
    if not fits:
        what = {
            "json": "one JSON document",
            "jsonl": "JSON Lines (one JSON value a line)",
            "binary": "binary",
        }
        raise InputError(
            f"--type {asked}: the input is not {what[asked]} (it reads as {detected})",
            hint="leave --type out to have it detected, or give --type text",
        )
    return asked
