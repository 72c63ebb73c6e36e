"""Token ids and token-exact cuts of a text, with the run's exact ruler.

``head``/``tail`` return the bytes of the first or last N tokens of DATA. A token may end
inside a UTF-8 character (byte-level BPE splits rare characters); such a character is left
out whole, never cut, so the result is the longest run of whole characters inside those N
tokens, and counts at most N tokens itself. Bytes that are not UTF-8 are counted as U+FFFD
(as every count is) but come back as they were: the cut is made on DATA, not on a copy.

``encode`` gives the ids of a text; ``decode`` the bytes of a list of ids (``parse_ids``
reads them as written: whitespace- or comma-separated whole numbers).

``head_of``, ``tail_of`` and ``iter_ids`` do the same for a stream of any size, read in the
pieces ``ctxtools.tokens.cutter`` cuts it into (where no pre-token spans, or at a checked
junction inside a long run), so that the pieces' ids joined are the whole text's ids: a
head reads about its N tokens, a tail keeps only the input's last pieces (a regular file is
read from its end), the ids come a piece at a time. A tiktoken encoding only; any other
exact ruler reads the whole text, as before.
"""

from __future__ import annotations

import io
import os
import re
from collections import deque
from collections.abc import Iterator
from typing import BinaryIO

from ctxtools.errors import InputError, TokenizerError, UsageError

_ID_SEP = re.compile(rb"[\s,]+")
_BAD_BYTE = re.compile("[\udc80-\udcff]")  # a byte that is not UTF-8, after surrogateescape


def _needs_exact(ruler, what: str) -> None:
    if ruler.kind not in ("tiktoken", "tokenizers"):
        raise UsageError(
            f"{what} needs an exact ruler (an encoding or --tokenizer), not {ruler.name}",
            hint="give --encoding cl100k_base or a --model",
        )


def _texts(data: bytes) -> tuple[str, str]:
    """(DATA with surrogates for its bad bytes, the same with U+FFFD): one character each
    for every bad byte, so positions in one are positions in the other."""
    try:
        kept = data.decode("utf-8")
    except UnicodeDecodeError:
        kept = data.decode("utf-8", "surrogateescape")
        return kept, _BAD_BYTE.sub("\ufffd", kept)
    return kept, kept


def encode(ruler, text: str) -> list[int]:
    """The ids of TEXT under RULER (special-token strings as RULER counts them)."""
    _needs_exact(ruler, "token ids")
    if ruler.kind == "tiktoken":
        return list(ruler.encode(text))
    return list(ruler.tokenizer.encode(text, add_special_tokens=False).ids)


def _chars_of_ids(ruler, ids: list[int]) -> int:
    """How many whole characters the tokens IDS spell (a character cut at an edge left out:
    the text they come from is whole UTF-8, so only the edges can be incomplete)."""
    return len(decode(ruler, ids).decode("utf-8", "ignore")) if ids else 0


def _cut(ruler, data: bytes, n: int, *, from_end: bool, ids: list[int] | None = None) -> bytes:
    """The first (last, FROM_END) N tokens of DATA; IDS, when given, are DATA's ids (its
    bad bytes counted as U+FFFD each)."""
    _needs_exact(ruler, "--tail" if from_end else "--head")
    kept, counted = _texts(data)
    if ruler.kind == "tokenizers":
        enc = ruler.tokenizer.encode(counted, add_special_tokens=False)
        if n >= len(enc.ids):
            return data
        if n == 0:
            return b""
        spans = enc.offsets
        part = kept[spans[-n][0] :] if from_end else kept[: spans[n - 1][1]]
        return part.encode("utf-8", "surrogateescape")
    if ids is None:
        ids = encode(ruler, counted)
    if n >= len(ids):
        return data
    take = n
    while take > 0:
        k = _chars_of_ids(ruler, ids[len(ids) - take :] if from_end else ids[:take])
        span = slice(len(kept) - k, None) if from_end else slice(0, k)
        if k == 0 or ruler.count(counted[span]) <= n:
            return kept[span].encode("utf-8", "surrogateescape") if k else b""
        take -= 1  # the cut text tokenises longer on its own: one token fewer
    return b""


def head(ruler, data: bytes, n: int) -> bytes:
    """The bytes of the first N tokens of DATA (a character a token boundary splits is
    left out whole)."""
    return _cut(ruler, data, n, from_end=False)


def tail(ruler, data: bytes, n: int) -> bytes:
    """The bytes of the last N tokens of DATA (likewise)."""
    return _cut(ruler, data, n, from_end=True)


def parse_ids(data: bytes, where: str, ruler=None) -> list[int]:
    """The token ids written in DATA (whitespace or commas between them; JSON's [ ] too).
    A whole number too long to be an id is out of RULER's range."""
    if ruler is not None:
        _needs_exact(ruler, "--decode")
    body = data.strip()
    opened, closed = body.startswith(b"["), body.endswith(b"]")
    if opened != closed:
        # "[1,2" is a cut JSON list (a pipe that stopped early), not the ids it holds so far
        what = "a '[' without its ']'" if opened else "a ']' without its '['"
        raise InputError(f"{where}: not a list of token ids: {what}",
                         hint="give a whole JSON list, or ids without brackets")
    body = body.removeprefix(b"[").removesuffix(b"]")
    ids = []
    for word in _ID_SEP.split(body.strip()):
        if not word:
            continue
        if not word.isdigit():
            shown = word[:40].decode("utf-8", "replace")
            raise InputError(f"{where}: not a token id: {shown!r}", hint="give whole numbers")
        if len(word) > 12:
            shown = word[:40].decode() + ("..." if len(word) > 40 else "")
            raise _out_of_range(shown, ruler)
        ids.append(int(word))
    return ids


def _vocabulary(ruler) -> tuple[str, int]:
    """RULER's vocabulary: its name and its number of ids."""
    if ruler.kind == "tiktoken":
        return ruler.encoding.name, ruler.encoding.n_vocab
    return ruler.path, ruler.tokenizer.get_vocab_size(with_added_tokens=True)


def _out_of_range(shown: str, ruler) -> TokenizerError:
    if ruler is None or ruler.kind not in ("tiktoken", "tokenizers"):
        return TokenizerError(f"token id {shown} is out of range")
    name, size = _vocabulary(ruler)
    return TokenizerError(f"token id {shown} is out of range: {name}'s ids are 0 to {size - 1:,}")


def decode(ruler, ids: list[int]) -> bytes:
    """The bytes the tokens IDS spell under RULER (raw: a character may be cut at either end)."""
    _needs_exact(ruler, "--decode")
    name, size = _vocabulary(ruler)
    bad = next((i for i in ids if i >= size), None)
    if bad is not None:
        raise _out_of_range(str(bad), ruler)
    if ruler.kind == "tiktoken":
        enc = ruler.encoding
        try:
            return enc.decode_bytes(ids)
        except KeyError:
            hole = next((i for i in ids if _missing(enc, i)), ids[0])
        raise TokenizerError(
            f"{hole} is not a token id of {name}: a hole in its range 0 to {size - 1:,} "
            "that no token has"
        )
    return ruler.tokenizer.decode(ids, skip_special_tokens=False).encode("utf-8", "surrogateescape")


def _missing(enc, i: int) -> bool:
    try:
        enc.decode_bytes([i])
    except KeyError:
        return True
    return False


# --- a stream's tokens, read in pieces ---------------------------------------------------

EDGE_CHUNK = 1 << 18  # bytes a piece for the first or last N tokens (more for a big N)
TAIL_WINDOW = 1 << 16  # the first window read from a file's end for --tail (then 4x, ...)


def streamable(ruler) -> bool:
    """Whether RULER's ids of a text are the ids of its pieces joined, at the cutter's cuts
    (a tiktoken encoding; not a tokenizer.json, which may normalise the whole text, nor an
    NFC ruler, whose pattern is not the one the cuts are proven for)."""
    from ctxtools.tokens.rulers import TiktokenRuler

    return isinstance(ruler, TiktokenRuler)


def _cutter(ruler, stream: BinaryIO, report, chunk: int, raw: bool):
    """A ``cutter.Cutter`` over STREAM for RULER; with RAW, its text counts each bad byte
    as one U+FFFD (as ``head``/``tail`` count them), else as every count does."""
    from ctxtools.tokens.cutter import Cutter
    from ctxtools.tokens.loading import window_encoder
    from ctxtools.tokens.stream import READ_BLOCK

    return Cutter(
        stream,
        report,
        chunk=chunk,
        block=min(READ_BLOCK, max(chunk, 1 << 16)),
        encoding=ruler.encoding,
        encode=ruler.encode,
        allow_special=ruler.allow_special,
        window_encoder=lambda: window_encoder(ruler.name),
        decode=_counted_text if raw else None,
    )


def _counted_text(data: bytes) -> str:
    """DATA as ``head``/``tail`` count it: one U+FFFD for each byte that is not UTF-8."""
    return _texts(data)[1]


def _pieces(ruler, stream: BinaryIO, report, *, chunk: int, raw: bool):
    """(bytes, ids) of the consecutive pieces of STREAM (their text as RAW says, see
    ``_cutter``), cut where the ids of the pieces joined are the ids of the whole (REPORT
    says where that could not be proven: ``cuts.CutReport``)."""
    yield from _cutter(ruler, stream, report, chunk, raw).pieces_with_ids()


def _notes(report, notes: list[str]) -> None:
    if not report.exact:
        notes.extend(n for n in report.all_notes() if n not in notes)


def iter_ids(ruler, stream: BinaryIO, notes: list[str], chunk: int = 0) -> Iterator[list[int]]:
    """The ids of STREAM's text (UTF-8, bad bytes as U+FFFD), a piece at a time, in bounded
    memory: joined, they are ``encode`` of the whole text. NOTES hears, once the stream is
    read, where a piece could not be cut at a proven boundary (the ids there may differ from
    one encoding of the whole by a few)."""
    _needs_exact(ruler, "token ids")
    if not streamable(ruler):  # read whole: its pieces' ids need not join to the whole's
        yield encode(ruler, stream.read().decode("utf-8", "replace"))
        return
    from ctxtools.tokens.cuts import CutReport
    from ctxtools.tokens.stream import CHUNK_BYTES

    report = CutReport()
    for _data, ids in _pieces(ruler, stream, report, chunk=chunk or CHUNK_BYTES, raw=False):
        yield ids
    _notes(report, notes)


def head_of(ruler, stream: BinaryIO, n: int, notes: list[str], chunk: int = 0) -> bytes:
    """``head`` of what STREAM holds, reading only about its first N tokens: pieces are read
    until they hold more than N tokens (NOTES: as ``iter_ids``'s)."""
    _needs_exact(ruler, "--head")
    if not streamable(ruler):
        return head(ruler, stream.read(), n)
    from ctxtools.tokens.cuts import CutReport

    report = CutReport()
    chunk = chunk or _edge_chunk(n)
    parts: list[bytes] = []
    ids: list[int] = []
    for data, got in _pieces(ruler, stream, report, chunk=chunk, raw=True):
        parts.append(data)
        ids.extend(got)
        if len(ids) > n:
            break
    _notes(report, notes)
    return _cut(ruler, b"".join(parts), n, from_end=False, ids=ids)


def tail_of(ruler, stream: BinaryIO, n: int, notes: list[str], chunk: int = 0) -> bytes:
    """``tail`` of what STREAM holds, in memory bounded by its last N tokens: a regular
    file is read from its end, from a proven cut with more than N tokens after it (looked
    for in windows four times larger each time); anything else (a pipe, or a file whose end
    is one long run) is read through, only its last pieces kept (NOTES: as
    ``iter_ids``'s)."""
    _needs_exact(ruler, "--tail")
    if not streamable(ruler):
        return tail(ruler, stream.read(), n)
    chunk = chunk or _edge_chunk(n)
    size = _file_size(stream)
    if size is not None:
        found = _tail_from_end(ruler, stream, size, n, notes, chunk)
        if found is not None:
            return found
        stream.seek(0)
    return _last_tokens(ruler, stream, n, notes, chunk)[0]


def _last_tokens(ruler, stream: BinaryIO, n: int, notes: list[str], chunk: int):
    """(``tail`` of STREAM read through, keeping only its last pieces; how many tokens it
    holds)."""
    from array import array

    from ctxtools.tokens.cuts import CutReport

    report = CutReport()
    kept: deque[tuple[bytes, array]] = deque()  # the last pieces, their ids 4 bytes each
    total = held = 0
    for data, got in _pieces(ruler, stream, report, chunk=chunk, raw=True):
        kept.append((data, array("I", got)))
        total += len(got)
        held += len(got)
        while held - len(kept[0][1]) > n:
            held -= len(kept.popleft()[1])
    _notes(report, notes)
    data = b"".join(part for part, _ in kept)
    ids = [i for _, got in kept for i in got]
    return _cut(ruler, data, n, from_end=True, ids=ids), total


def _edge_chunk(n: int) -> int:
    from ctxtools.tokens.stream import CHUNK_BYTES

    return min(CHUNK_BYTES, max(EDGE_CHUNK, 16 * n))


def _tail_from_end(ruler, stream, size: int, n: int, notes: list[str], chunk: int):
    """``tail`` of the regular file STREAM of SIZE bytes, read from the first proven cut
    (where no pre-token spans: the ids after it are the whole's) of a window at its end
    with more than N tokens after it; None when no window smaller than the file has one."""
    from ctxtools.tokens.cutter import rule_args

    rules = rule_args(ruler.encoding, ruler.allow_special)  # the cutter's own rules
    window, searched = max(TAIL_WINDOW, 16 * n), 0
    while window < size:
        # the cuts the smaller windows had room for were looked at already
        cut = _first_cut(stream, size - window + 4, size - searched + 4, rules)
        if cut >= 0:
            stream.seek(cut)
            said: list[str] = []
            found, total = _last_tokens(ruler, stream, n, said, chunk)
            if total > n:
                notes.extend(x for x in said if x not in notes)
                return found
        window, searched = window * 4, window
    return None


def _first_cut(stream, lo: int, hi: int, rules) -> int:
    """The first rule cut (``cuts.find_rule_cut`` with RULES) at an offset of the file
    STREAM in [LO, HI), LO >= 4 (a cut is judged by the bytes before it), or -1; read a
    block at a time."""
    from ctxtools.tokens.cuts import find_rule_cut
    from ctxtools.tokens.stream import READ_BLOCK

    at = lo
    while at < hi:
        end = min(at + READ_BLOCK, hi)
        stream.seek(at - 4)
        data = stream.read(end - at + 4)
        if len(data) > 4 and not _one_kind(data[3:]):
            cut = find_rule_cut(data, 4, len(data), *rules)
            if cut >= 0:
                return at - 4 + cut
        at = end
    return -1


def _one_kind(data: bytes) -> bool:
    """Whether DATA is all of one kind of byte (``runs``' classes): no rule cut lies inside
    such a run, which the regular expressions of ``cuts`` would take long to find."""
    from ctxtools.tokens.runs import one_kind

    return one_kind(data)


def _file_size(stream: BinaryIO) -> int | None:
    """The size of STREAM when it is a regular file read from its start, else None."""
    import stat

    try:
        st = os.fstat(stream.fileno())
        if stat.S_ISREG(st.st_mode) and stream.seekable() and stream.tell() == 0:
            return st.st_size
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        pass
    return None
