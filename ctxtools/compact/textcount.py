"""A message's text counted as plain ``ctx-count`` counts a text.

tiktoken encodes a long pre-token (20 MB of ``x``, a run of ``=`` or of blank lines) in
about 50 bytes of memory a byte: one 20 MB message took 15 s and 1 GB to count, where
plain ``ctx-count`` counts the same text in 0.7 s and 90 MB -- through
``tokens.stream.count_stream``, whose cutter counts such a run in checked windows and
other text in pieces of a megabyte. A text of ``LONG_TEXT`` characters or more is counted
here the same way, its UTF-8 given to ``count_stream`` a slice at a time (never copied
whole): its count is plain ``ctx-count``'s of the same text, which is tiktoken's of the
whole text. Where the cutter cannot prove a cut exact (rare: see ``tokens.cutter``), a
text of up to ``RECOUNT`` characters is counted again whole, exactly; a longer one keeps
the cutter's count, and the notes say why it is not exact, as ctx-count's do.

A shorter text, or one for a ruler the cutter does not serve (a ``tokenizer.json``, the
heuristic, the NFC rulers), is counted by one call of the ruler, as before -- from a copy
when it is not ASCII (``count_short``).
"""

from __future__ import annotations

from ctxtools.tokens.rulers import TiktokenRuler

# Characters from which a text is counted in pieces: plain ctx-count cuts an input from
# ``tokens.stream.SMALL_INPUT`` bytes on (a text this long has at least as many bytes; a
# test holds the two equal: ``tokens.stream`` is imported only for a long text, not at
# every start). A shorter one costs one call of the ruler at most ~50 bytes of memory a
# byte of its UTF-8: under 1 MB.
LONG_TEXT = 4096
# Characters up to which a text whose cuts the cutter could not prove is counted again
# whole (exact, as before): at ~50 bytes a byte, at most ~50 MB; a longer one is not.
RECOUNT = 1 << 18


def count_text(text: str, ruler, notes: list[str] | None = None) -> int:
    """TEXT's tokens by RULER: a long one by ``count_long`` (why it is not exact, if it is
    not, added to NOTES), a short one by one call of the ruler (``count_short``)."""
    if not text:
        return 0
    if is_long(text, ruler):
        return count_long(text, ruler, [] if notes is None else notes)
    return count_short(text, ruler)


def count_many(texts: list[str], ruler, notes: list[str]) -> list[int]:
    """Each of TEXTS counted (``count_text``), on two threads when the ruler releases the
    GIL and there are 64 or more; why a count is not exact added to NOTES in TEXTS' order."""

    def one(text: str) -> tuple[int, list[str]]:
        said: list[str] = []
        return count_text(text, ruler, said), said

    if len(texts) < 64 or not getattr(ruler, "parallel", False):
        counted = [one(t) for t in texts]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=2) as pool:
            counted = list(pool.map(one, texts))
    for _n, said in counted:
        notes.extend(n for n in said if n not in notes)
    return [n for n, _said in counted]


def count_short(text: str, ruler) -> int:
    """TEXT's tokens by one call of RULER. A text that is not ASCII is given as a copy:
    tiktoken reads a str through CPython's UTF-8 cache, which stays in the str for as long
    as it lives -- a message's text lives as long as its transcript, and 48 MiB of them
    took that much more memory once counted."""
    if not text.isascii():
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
    return ruler.count(text)


def is_long(text: str, ruler) -> bool:
    """Whether TEXT is counted in pieces (``count_long``) by RULER."""
    return len(text) >= LONG_TEXT and isinstance(ruler, TiktokenRuler)


def count_long(text: str, ruler, notes: list[str]) -> int:
    """TEXT's tokens as ``count_stream`` counts its UTF-8 (plain ctx-count's count of the
    same text). When a cut could not be proven exact, a text of at most ``RECOUNT``
    characters is counted again whole, exactly; a longer one keeps the count, and why it
    is not exact is added to NOTES (each reason once)."""
    from ctxtools.tokens.stream import count_stream

    counts = count_stream(Utf8Reader(text), ruler)
    if counts.exact:
        return counts.tokens
    if len(text) <= RECOUNT:
        return count_short(text, ruler)
    notes.extend(n for n in counts.notes if n not in notes)
    return counts.tokens


class Utf8Reader:
    """TEXT as a binary stream of its UTF-8, read a slice at a time. A lone surrogate (the
    json module lets ``"\\ud800"`` through) is read as U+FFFD, as tiktoken reads it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def read(self, n: int = -1) -> bytes:
        text, pos = self.text, self.pos
        end = len(text) if n is None or n < 0 else min(len(text), pos + max(n, 1))
        if end < len(text) and "\ud800" <= text[end - 1] <= "\udbff":
            end += 1  # a high surrogate and what follows it are repaired together
        self.pos = end
        piece = text[pos:end]
        try:
            return piece.encode("utf-8")
        except UnicodeEncodeError:  # tiktoken's own repair (``Encoding.encode``)
            fixed = piece.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return fixed.encode("utf-8")
