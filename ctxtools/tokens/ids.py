"""Token ids and token-exact cuts of a text, with the run's exact ruler.

``head``/``tail`` return the bytes of the first or last N tokens of DATA. A token may end
inside a UTF-8 character (byte-level BPE splits rare characters); such a character is left
out whole, never cut, so the result is the longest run of whole characters inside those N
tokens, and counts at most N tokens itself. Bytes that are not UTF-8 are counted as U+FFFD
(as every count is) but come back as they were: the cut is made on DATA, not on a copy.

``encode`` gives the ids of a text; ``decode`` the bytes of a list of ids (``parse_ids``
reads them as written: whitespace- or comma-separated whole numbers).
"""

from __future__ import annotations

import re

from ctxtools.errors import InputError, TokenizerError, UsageError

_ID_SEP = re.compile(rb"[\s,]+")


def _needs_exact(ruler, what: str) -> None:
    if ruler.kind not in ("tiktoken", "tokenizers"):
        raise UsageError(
            f"{what} needs an exact ruler (an encoding or --tokenizer), not {ruler.name}",
            hint="give --encoding cl100k_base or a --model",
        )


def _texts(data: bytes) -> tuple[str, str]:
    """(DATA with surrogates for its bad bytes, the same with U+FFFD): one character each
    for every bad byte, so positions in one are positions in the other."""
    kept = data.decode("utf-8", "surrogateescape")
    if not any(0xDC80 <= ord(c) <= 0xDCFF for c in kept):
        return kept, kept
    return kept, "".join("\ufffd" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in kept)


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


def _cut(ruler, data: bytes, n: int, *, from_end: bool) -> bytes:
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


def parse_ids(data: bytes, where: str) -> list[int]:
    """The token ids written in DATA (whitespace or commas between them; JSON's [ ] too)."""
    body = data.strip().removeprefix(b"[").removesuffix(b"]")
    ids = []
    for word in _ID_SEP.split(body.strip()):
        if not word:
            continue
        if not word.isdigit() or len(word) > 12:
            shown = word[:40].decode("utf-8", "replace")
            raise InputError(f"{where}: not a token id: {shown!r}", hint="give whole numbers")
        ids.append(int(word))
    return ids


def decode(ruler, ids: list[int]) -> bytes:
    """The bytes the tokens IDS spell under RULER (raw: a character may be cut at either end)."""
    _needs_exact(ruler, "--decode")
    if ruler.kind == "tiktoken":
        enc = ruler.encoding
        bad = next((i for i in ids if i >= enc.n_vocab), None)
        try:
            if bad is None:
                return enc.decode_bytes(ids)
        except KeyError:
            bad = next((i for i in ids if _missing(enc, i)), ids[0])
        raise TokenizerError(f"token id {bad} is not in {enc.name} (0 to {enc.n_vocab - 1:,})")
    tok = ruler.tokenizer
    size = tok.get_vocab_size(with_added_tokens=True)
    bad = next((i for i in ids if i >= size), None)
    if bad is not None:
        raise TokenizerError(f"token id {bad} is not in {ruler.path} (0 to {size - 1:,})")
    return tok.decode(ids, skip_special_tokens=False).encode("utf-8", "surrogateescape")


def _missing(enc, i: int) -> bool:
    try:
        enc.decode_bytes([i])
    except KeyError:
        return True
    return False
