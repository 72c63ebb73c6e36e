"""Cutting a byte stream into pieces whose exact tiktoken counts add up to the whole count.

tiktoken counts a text in two steps: a regular expression splits it into pre-tokens, then
byte-pair merging (BPE) turns each pre-token into tokens. Counting a big input in pieces
is exact only where both steps see the same thing on either side of a cut. Two kinds of
cut are used, both found in linear time on the raw bytes:

* **rule cuts** (``ctxtools.tokens.cuts``), where no pre-token can span;
* **run cuts** (``ctxtools.tokens.runs``), inside a long run of one class of character,
  counted in windows whose junctions are checked.

When no exact cut can be found (a single pre-token of a kind not handled above, longer
than two chunks, or a run where no cut passes the check), the text is cut anyway, that
piece is counted by the linear encoder, and the result says it is not exact, with the
reason. Known cases: o200k capitals right after a letter of another script, runs of
non-ASCII spaces (U+3000), emoji, and o200k's ``\n/\n/...`` (one pre-token).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import BinaryIO

import ctxtools.tokens.runs as runs
from ctxtools.tokens.cuts import CutReport, Piece, find_rule_cut
from ctxtools.tokens.runs import RunCounting, Section


class Cutter(RunCounting):
    """Reads a binary stream and yields exactly countable pieces (see the module doc).

    All offsets are absolute (from the start of the stream); ``buf`` holds the bytes from
    ``base`` on. ``encode`` is the ruler's tiktoken encode (ordinary, or with special
    tokens allowed); ``window_encoder()`` returns a linear-time encoder for text inside a
    run, or None (tiktoken then encodes those windows too, more slowly). ``decode`` turns
    a span's bytes into the text that is encoded and tallied: by default UTF-8 with one
    U+FFFD for each bad sequence, as every count reads it (``ctxtools.tokens.ids`` gives
    one for each bad byte, as its head and tail count them).

    ``pieces()`` yields what to count; ``pieces_with_ids()`` yields each piece's bytes and
    token ids instead, for a caller that needs the tokens themselves, not their count.
    """

    def __init__(
        self,
        stream: BinaryIO,
        report: CutReport,
        *,
        chunk: int,
        block: int,
        encoding,
        encode: Callable[[str], list[int]],
        allow_special: bool,
        window_encoder: Callable[[], Callable[[str], list[int]] | None],
        progress: Callable[[int], None] | None = None,
        decode: Callable[[bytes], str] | None = None,
    ):
        self.stream = stream
        self.report = report
        self.chunk = max(chunk, 16)
        self.block = max(block, 1)
        self.enc = encoding
        self.encode = encode
        self.allow_special = allow_special
        self._window_factory = window_encoder
        self._window: Callable[[str], list[int]] | None = None
        self._window_loaded = False
        self.progress = progress
        self.decode = decode or _utf8
        self.buf = bytearray()
        self.base = 0
        self.eof = False
        self._compat: dict[tuple[int, int], bool] = {}
        # the arguments of cuts.find_rule_cut after the bounds: this cutter's rule cuts
        self.rules = rule_args(encoding, allow_special)
        self._cased = self.rules[1]  # (RunCounting's question: do letters split by case?)
        self._skip_runs_until = 0  # a run found not countable as a run is passed as text
        self._forced_at = -1
        self._span = (0, 0)  # where the piece last tallied lies (see _text)
        self._counted: list[int] = []  # the ids of the counted piece last made

    # --- the buffer, in absolute offsets -------------------------------------------------

    @property
    def end(self) -> int:
        return self.base + len(self.buf)

    def _fill(self, upto: int) -> None:
        while not self.eof and self.end < upto:
            data = self.stream.read(self.block)
            if not data:
                self.eof = True
                break
            self.buf += data
            self.report.bytes += len(data)
            if self.progress is not None:
                self.progress(len(data))

    def _keep_from(self, pos: int) -> None:
        """Forget the bytes before pos once there are many of them."""
        n = pos - self.base
        if n > self.chunk + runs.RUN_WINDOW:
            del self.buf[:n]
            self.base = pos

    def _at(self, i: int) -> int:
        return self.buf[i - self.base]

    def _bytes(self, start: int, end: int) -> bytes:
        """buf[start:end] in absolute offsets (clipped to what is held)."""
        return bytes(self.buf[max(start - self.base, 0) : max(end - self.base, 0)])

    def _find(self, sub: bytes, start: int, end: int) -> int:
        i = self.buf.find(sub, max(start - self.base, 0), max(end - self.base, 0))
        return i + self.base if i >= 0 else -1

    def _rule_cut(self, lo: int, hi: int) -> int:
        c = find_rule_cut(self.buf, lo - self.base, hi - self.base, *self.rules)
        return c + self.base if c >= 0 else -1

    def _text(self, start: int, end: int, tally: bool = True) -> str:
        """The text of [start, end). TALLY says it is a piece about to be yielded: each
        piece is tallied once, just before it is yielded, which is how pieces_with_ids
        knows its bytes."""
        text = self.decode(self._bytes(start, end))
        if tally:
            self._span = (start, end)
        if tally and text:
            rep = self.report
            rep.chars += len(text)
            rep.newlines += text.count("\n")
            rep.last_char = text[-1]
        return text

    # --- the main loop -------------------------------------------------------------------

    def pieces_with_ids(self) -> Iterator[tuple[bytes, list[int]]]:
        """Each piece as its bytes and its token ids: a piece of text encoded with
        ``encode``, a counted one with the ids it was counted from. Joined, the ids are
        those of the whole text (as ``decode`` reads it), except where the report says a
        cut is not exact."""
        for piece in self.pieces():
            ids = self._counted if piece.text is None else self.encode(piece.text)
            yield self._bytes(*self._span), ids

    def pieces(self) -> Iterator[Piece]:
        pos = 0
        chunk = self.chunk
        pending: Section | None = None  # a run's last section, its right junction unchecked
        while True:
            self._keep_from(pending.start if pending is not None else pos)
            self._fill(pos + 2 * chunk + 2 * runs.RUN_PROBE)
            end = self.end
            if pos >= end:
                if pending is not None:
                    yield self._settle(pending)
                return
            run = self._find_run(pos, min(end, pos + chunk + runs.RUN_PROBE))
            if run is not None:
                rs, kind = run
                hs = pos
                if pending is None:
                    hs = self._head_start(pos, rs)
                    yield from self._normal(pos, hs)
                pos, pending = yield from self._run(hs, rs, kind, pending)
                continue
            cut = end if end - pos <= chunk and self.eof else self._next_cut(pos, end)
            if pending is None and cut == self._forced_at:
                # one long pre-token, maybe: count it in linear time (it is inexact anyway)
                yield self._counted_piece(self._encode_any(self._text(pos, cut)))
            elif pending is None:
                yield Piece(text=self._text(pos, cut))
            else:
                section = yield from self._chain(pending, pos, cut, self.encode, pending.start)
                yield self._settle(section)
                pending = None
            pos = cut

    def _counted_piece(self, ids: list[int]) -> Piece:
        """The piece of the tokens IDS, counted here (its ids kept for pieces_with_ids)."""
        self._counted = ids
        return Piece(tokens=len(ids))

    def _normal(self, start: int, end: int) -> Iterator[Piece]:
        """Pieces of [start, end): no long run in it, and end is a rule cut."""
        pos = start
        while end - pos > self.chunk:
            cut = self._next_cut(pos, end)
            yield Piece(text=self._text(pos, cut))
            pos = cut
        if end > pos:
            yield Piece(text=self._text(pos, end))

    def _next_cut(self, pos: int, end: int) -> int:
        """A cut about a chunk after pos, before end unless the input ends there."""
        chunk = self.chunk
        half = pos + chunk // 2
        if half < end and 48 <= self._at(half) <= 57:
            cut = self._digit_cut(pos, min(end - 1, pos + chunk))
            if cut > pos:
                return cut
        cut = self._rule_cut(half, min(end, pos + chunk))
        if cut < 0:  # the last rule cut of the first half: one forward scan
            c = pos + 1
            while (c := self._rule_cut(c, half)) >= 0:
                cut = c
                c += 1
        if cut < 0:
            cut = self._rule_cut(pos + chunk, min(end, pos + 2 * chunk))
        if cut < 0:
            cut = self._digit_cut(pos, min(end - 1, pos + chunk))
        if cut < 0:
            if end - pos <= 2 * chunk and self.eof:
                return end
            cut = self._forced_cut(pos, pos + chunk)
        return cut

    def _digit_cut(self, pos: int, at: int) -> int:
        """Inside a long run of ASCII digits: a multiple of three from the run's start
        (digits form their own pre-tokens of 1-3 digits, left to right)."""
        if at - pos < 6 or not (48 <= self._at(at) <= 57 and 48 <= self._at(at - 1) <= 57):
            return -1
        head = self._bytes(pos, at)
        digits = len(head) - len(head.rstrip(b"0123456789"))
        if digits < (at - pos) // 2:
            return -1  # mostly not digits: let the rule cuts decide
        start = pos + len(head.rstrip(b"0123456789"))
        if start > pos and self._at(start - 1) >= 0x80:
            return -1  # a non-ASCII numeral may belong to the run
        cut = start + (at - start) // 3 * 3
        return cut if cut > pos else -1

    def _forced_cut(self, pos: int, at: int) -> int:
        """A cut at a character boundary near ``at``: the count is no longer exact."""
        c = at
        while c > pos + 1 and 0x80 <= self._at(c) < 0xC0 and at - c < 3:
            c -= 1
        self._forced_at = c
        self.report.inexact(
            f"no exact cut point in the {self.chunk:,} bytes from byte {pos:,} (one "
            "pre-token of a kind that is not counted in parts); it was cut there, so the "
            "total may differ from one encoding of the whole by a few tokens"
        )
        return c


def rule_args(encoding, allow_special: bool) -> tuple:
    """The arguments of ``cuts.find_rule_cut`` after the bounds, for ENCODING: whether
    special-token strings are tokens, whether letters split by case (o200k does, cl100k
    does not: see ``_alpha_start_ok``), and the special tokens' pattern (or None)."""
    cased = "Lu" in getattr(encoding, "_pat_str", "Lu")
    specials = None
    if allow_special and getattr(encoding, "special_tokens_set", None):
        specials = re.compile(
            b"|".join(re.escape(t.encode()) for t in sorted(encoding.special_tokens_set))
        )
    return allow_special, cased, specials


def _utf8(data: bytes) -> str:
    """The default ``decode``: bad bytes as U+FFFD, as every count reads them."""
    return data.decode("utf-8", "replace")
