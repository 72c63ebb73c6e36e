"""Cutting a byte stream into pieces whose exact tiktoken counts add up to the whole count.

tiktoken counts a text in two steps: a regular expression splits it into pre-tokens, then
byte-pair merging (BPE) turns each pre-token into tokens. Counting a big input in pieces
is exact only where both steps see the same thing on either side of a cut. Two kinds of
cut are used, both found in linear time on the raw bytes:

* **Rule cuts**, where no pre-token of cl100k_base or o200k_base can span, and neither
  side's pre-tokens change when the text ends or starts there (the patterns' only
  look-ahead, ``\\s+(?!\\S)`` and ``\\s++$``, concern whitespace at the end of a piece, so
  no piece ends in whitespace other than a newline):

  - after ``\\n`` when the next byte is not whitespace (for o200k, nor ``/``: it lets a
    punctuation pre-token run on over ``[\\r\\n/]*``); a lead byte of a possible
    non-ASCII space is refused too;
  - before a space when the byte before is not whitespace (and ends no non-ASCII space):
    no pre-token continues from a non-space character into a space;
  - between an ASCII letter and an ASCII character that is neither a letter nor ``'``
    (o200k glues ``'s`` to its word);
  - between an ASCII digit and an ASCII non-digit, either way round when the side away
    from the digit is not whitespace: digits only ever form their own 1-3 digit
    pre-tokens, counted from the left; so a long run of digits is cut at a multiple of
    three from its start.

  Every rule cut has an ASCII byte beside it, so decoding the pieces separately (UTF-8,
  invalid bytes replaced) gives the same characters as decoding the whole.
  With special tokens allowed, a letter is not cut from a following ``_`` or ``|`` (that
  could fall inside ``<|fim_prefix|>``), and the place just before a special token is a
  cut (tiktoken encodes the text between special tokens separately).

* **Run cuts**, inside a long run of one class of character (a run of NULs, ``====``,
  base64 letters without digits, blank lines, CJK without punctuation). Such a run is one
  pre-token, or a few, that tiktoken merges in time quadratic in its length and memory of
  tens of bytes per byte; 300 MB of zeros made it abort. The run is counted in windows:
  cutting inside a run of letters, punctuation or whitespace splits the pre-token that
  holds the cut into a head and a tail and changes no other pre-token (for whitespace,
  only after a newline that another newline soon follows, or anywhere in a run with no
  newline yet). The windows are then exactly countable when BPE itself would not merge
  across the cut: a sequence of tokens is the byte-pair encoding of its bytes exactly
  when each adjacent pair is (the property the ``bpe`` crate of GitHub's rust-gems
  builds its linear encoder on), so each cut's two neighbouring tokens are re-encoded
  with tiktoken itself and must come back unchanged. If they do not, the cut moves left
  by one token and the window after it is encoded again. Windows inside a run are
  encoded by ``bpe-openai``'s native linear-time encoder (its counts equal tiktoken's;
  the tests compare them), the pieces at a run's ends by tiktoken.

When no exact cut can be found (a single pre-token of a kind not handled above, longer
than two chunks, or a run where no cut passes the check), the text is cut anyway, that
piece is counted by the linear encoder, and the result says it is not exact, with the
reason. Known cases: o200k capitals right after a letter of another script, runs of
non-ASCII spaces (U+3000), emoji, and o200k's ``\n/\n/...`` (one pre-token).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

# Tunables (the tests make them small to exercise every path on small texts).
RUN_PROBE = 2048  # a run is found by probing every RUN_PROBE bytes: runs >= 2x are caught
RUN_MARGIN = 256  # run cuts stay this far inside a run, from its ends and from other kinds
RUN_WINDOW = 1 << 18  # bytes encoded at once inside a run
JUNCTION_TRIES = 16  # moves of one cut before the run is declared not exactly countable
LOOKBACK = 4096  # how far before a run to look for the rule cut where its first piece starts

_WS = b"\t\n\x0b\x0c\r "
# Non-ASCII white space (Unicode White_Space), as UTF-8: a piece must not end in one.
_WS2 = (b"\xc2\x85", b"\xc2\xa0")
_WS3 = frozenset(
    [b"\xe1\x9a\x80", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xe2\x80\xaf", b"\xe2\x81\x9f"]
    + [b"\xe3\x80\x80"]
    + [bytes([0xE2, 0x80, 0x80 + i]) for i in range(11)]
)


def _cut_pattern(slash_after_newline: bool, special: bool) -> re.Pattern[bytes]:
    # o200k lets "\n" be followed by "/" in one punctuation pre-token; cl100k does not.
    after_nl = (
        rb"[^\t\n\x0b\x0c\r \xc2\xe1\xe2\xe3]"
        if slash_after_newline
        else (rb"[^\t\n\x0b\x0c\r /\xc2\xe1\xe2\xe3]")
    )
    # With special tokens allowed, no cut may fall inside "<|fim_prefix|>" and the like:
    # a letter is then not cut from a following "_" or "|".
    not_letter = (
        rb"[\x00-\x08\x0e-\x1f!-&(-@\[-^`{}~\x7f\t\n\x0b\x0c\r]"
        if special
        else rb"[\x00-\x08\x0e-\x1f!-&(-@\[-`{-\x7f\t\n\x0b\x0c\r]"
    )
    return re.compile(
        rb"\n"
        + after_nl  # newline | not a space (nor "/" for o200k)
        + rb"|[^\t\n\x0b\x0c\r ] "  # not a space | space
        + rb"|[A-Za-z]"
        + not_letter  # letter | not a letter nor "'"
        + rb"|[0-9][\x00-/:-\x7f]"  # digit | ASCII non-digit
        + rb"|[\x00-\x08\x0e-\x1f!-/:-\x7f][0-9]"  # ASCII non-digit non-space | digit
    )


_CUT_PATTERNS: dict[tuple[bool, bool], re.Pattern[bytes]] = {}  # compiled when first used

# Byte classes for runs.
ALPHA, DIGIT, SPACE, PUNCT, HIGH = "alpha", "digit", "space", "punct", "high"
_PUNCT_BYTES = bytes(b for b in range(128) if not chr(b).isalnum() and b not in _WS)
_HIGH_BYTES = bytes(range(128, 256))
_BYTE_KIND: list[str | None] = []
for _b in range(256):
    if _b >= 128:
        _BYTE_KIND.append(HIGH)
    elif chr(_b).isalpha():
        _BYTE_KIND.append(ALPHA)
    elif chr(_b).isdigit():
        _BYTE_KIND.append(DIGIT)
    elif _b in _WS:
        _BYTE_KIND.append(SPACE)
    else:
        _BYTE_KIND.append(PUNCT)


def _uniform(chunk: bytes | bytearray, kind: str) -> bool:
    if kind == ALPHA:
        return chunk.isalpha()
    if kind == DIGIT:
        return chunk.isdigit()
    if kind == SPACE:
        return chunk.isspace()
    if kind == PUNCT:
        return not chunk.translate(None, _PUNCT_BYTES)
    return not chunk.translate(None, _HIGH_BYTES)


def find_rule_cut(
    buf: bytes | bytearray,
    lo: int,
    hi: int,
    allow_special: bool,
    o200k: bool = True,
    specials: re.Pattern[bytes] | None = None,
) -> int:
    """The first rule cut c with lo <= c < hi (see the module doc), or -1.

    ``o200k``: whether the pattern is o200k's (stricter after a newline). ``specials``
    matches the special tokens when they are allowed: a cut just before one is exact.
    """
    key = (not o200k, allow_special)
    pattern = _CUT_PATTERNS.get(key)
    if pattern is None:
        pattern = _CUT_PATTERNS[key] = _cut_pattern(*key)
    hi = min(hi, len(buf))
    for m in pattern.finditer(buf, max(lo - 1, 0), min(hi, len(buf) - 1) + 1):
        c = m.start() + 1
        if c < lo:
            continue
        if c >= hi:
            break
        if buf[c] == 0x20 and buf[c - 1] >= 0x80 and _ends_in_unicode_space(buf, c):
            continue
        if specials is not None:
            s = specials.search(buf, max(lo, 0), c)
            if s is not None and s.start() >= lo:
                return s.start() if s.start() > 0 or lo == 0 else c
        return c
    if specials is not None:
        s = specials.search(buf, max(lo, 0), hi)
        if s is not None:
            return s.start()
    return -1


def _ends_in_unicode_space(buf: bytes | bytearray, c: int) -> bool:
    return bytes(buf[c - 2 : c]) in _WS2 or bytes(buf[c - 3 : c]) in _WS3


@dataclass
class Piece:
    """Text to count (``text``), or an already counted section of a run (``tokens``)."""

    text: str | None = None
    tokens: int = 0


MAX_NOTES = 3  # reasons kept word for word; beyond them, a count


@dataclass
class CutReport:
    """What the cutter learns while reading: bytes, characters, newlines, exactness."""

    bytes: int = 0
    chars: int = 0
    newlines: int = 0
    last_char: str = ""
    exact: bool = True
    notes: list[str] = field(default_factory=list)
    more: int = 0  # further places that could not be proven exact, past MAX_NOTES

    def inexact(self, reason: str) -> None:
        self.exact = False
        if reason in self.notes:
            return
        if len(self.notes) < MAX_NOTES:
            self.notes.append(reason)
        else:
            self.more += 1

    def all_notes(self) -> list[str]:
        """The notes, and how many more places there were (a huge run has one per MB)."""
        if not self.more:
            return list(self.notes)
        return [*self.notes, f"and {self.more:,} more places like these"]


@dataclass
class _Section:
    """The tokens of buf[start:end] (absolute offsets), one link of a run's chain."""

    start: int
    end: int
    tokens: list[int]
    run: _Run | None = None  # the run it ends in, when its end is a run cut
    left: int | None = None  # the token before it, when its start is a run cut


_NOT_CUT = "a run of {kind} bytes at byte {at:,} could not be cut at a checked token boundary"


class Cutter:
    """Reads a binary stream and yields exactly countable pieces (see the module doc).

    All offsets are absolute (from the start of the stream); ``buf`` holds the bytes from
    ``base`` on. ``encode`` is the ruler's tiktoken encode (ordinary, or with special
    tokens allowed); ``window_encoder()`` returns a linear-time encoder for text inside a
    run, or None (tiktoken then encodes those windows too, more slowly).
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
        self.buf = bytearray()
        self.base = 0
        self.eof = False
        self._compat: dict[tuple[int, int], bool] = {}
        # o200k splits letters by case (cl100k does not): see _alpha_start_ok
        self._cased = "Lu" in getattr(encoding, "_pat_str", "Lu")
        self._specials = None
        if allow_special and getattr(encoding, "special_tokens_set", None):
            self._specials = re.compile(
                b"|".join(re.escape(t.encode()) for t in sorted(encoding.special_tokens_set))
            )
        self._skip_runs_until = 0  # a run found not countable as a run is passed as text
        self._forced_at = -1

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
        if n > self.chunk + RUN_WINDOW:
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
        c = find_rule_cut(
            self.buf,
            lo - self.base,
            hi - self.base,
            self.allow_special,
            self._cased,
            self._specials,
        )
        return c + self.base if c >= 0 else -1

    def _text(self, start: int, end: int, tally: bool = True) -> str:
        text = self._bytes(start, end).decode("utf-8", "replace")
        if tally and text:
            rep = self.report
            rep.chars += len(text)
            rep.newlines += text.count("\n")
            rep.last_char = text[-1]
        return text

    # --- the main loop -------------------------------------------------------------------

    def pieces(self) -> Iterator[Piece]:
        pos = 0
        chunk = self.chunk
        pending: _Section | None = None  # a run's last section, its right junction unchecked
        while True:
            self._keep_from(pending.start if pending is not None else pos)
            self._fill(pos + 2 * chunk + 2 * RUN_PROBE)
            end = self.end
            if pos >= end:
                if pending is not None:
                    yield self._settle(pending)
                return
            run = self._find_run(pos, min(end, pos + chunk + RUN_PROBE))
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
                yield Piece(tokens=len(self._encode_any(self._text(pos, cut))))
            elif pending is None:
                yield Piece(text=self._text(pos, cut))
            else:
                section = yield from self._chain(pending, pos, cut, self.encode, pending.start)
                yield self._settle(section)
                pending = None
            pos = cut

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

    # --- runs ----------------------------------------------------------------------------

    def _find_run(self, lo: int, hi: int) -> tuple[int, str] | None:
        """A countable run of one byte class, at least RUN_PROBE long, starting in [lo, hi)."""
        step = RUN_PROBE
        buf, base = self.buf, self.base
        s = max(lo, self._skip_runs_until)
        while s + step <= self.end and s < hi:
            i = s - base
            kind = _BYTE_KIND[buf[i]]
            if (
                kind != DIGIT
                and _BYTE_KIND[buf[i + step - 1]] == kind
                and _BYTE_KIND[buf[i + step // 2]] == kind
                and _uniform(buf[i : i + step], kind)
            ):
                start = s
                while start > lo and _BYTE_KIND[self._at(start - 1)] == kind:
                    start -= 1
                return start, kind
            s += step
        return None

    def _run_end(self, c: int, kind: str) -> int:
        """Where the run that holds c ends, in what is buffered."""
        buf, base = self.buf, self.base
        e = c
        step = RUN_PROBE
        while e + step <= self.end and _uniform(buf[e - base : e - base + step], kind):
            e += step
        while e < self.end and _BYTE_KIND[buf[e - base]] == kind:
            e += 1
        return e

    def _head_start(self, pos: int, rs: int) -> int:
        """The last rule cut at or before rs (looking back LOOKBACK bytes), else pos."""
        last = pos
        c = max(pos + 1, rs - LOOKBACK)
        while (c := self._rule_cut(c, rs + 1)) >= 0:
            last = c
            c += 1
        return last

    def _valid_cut(self, c: int, run: _Run, since: int) -> bool:
        """Whether c is a run cut: inside [run.start, run.end) by the margin, and where
        the pre-token that holds it splits into a head and a tail (module doc). ``since``
        is where the piece that would end at c starts (an exact cut)."""
        m = RUN_MARGIN
        if run.end - c < m or c - self.base < 1 or c <= run.start:
            return False
        kind = run.kind
        if kind == SPACE and self._at(c - 1) in b"\r\n":
            # Just after a newline: the pre-token through the run's last newline splits
            # there if one follows; if none does, that pre-token ends there.
            return True
        if c - run.start < m:
            return False
        if kind in (ALPHA, PUNCT):
            return True
        if kind == SPACE:  # spaces and tabs only, since the last cut
            since = max(since, run.start)
            return self._find(b"\n", since, c + m) < 0 and self._find(b"\r", since, c + m) < 0
        # HIGH: bytes that each decode to U+FFFD, or two caseless letters (CJK, kana...)
        b = self._at(c)
        if self._replaced_at(c):
            return True
        return 0xC2 <= b <= 0xF4 and self._high_letters_at(c)

    def _replaced_at(self, c: int) -> bool:
        """Whether c lies between two invalid byte sequences (each decodes to U+FFFD, a
        punctuation-class character) and decoding either side alone changes nothing."""
        left, right = self._bytes(c - 8, c), self._bytes(c, c + 8)
        both = (left + right).decode("utf-8", "replace")
        return set(both) == {"\ufffd"} and both == left.decode("utf-8", "replace") + right.decode(
            "utf-8", "replace"
        )

    def _cut_near(self, target: int, run: _Run, lowest: int) -> int:
        """A run cut near target (a little before or after; for spaces, the next newline
        that qualifies), above ``lowest``; -1 if there is none."""
        if run.kind == SPACE and not self._valid_cut(target, run, lowest):
            # just after a newline: the next one, else the last one before target
            i = self._find(b"\n", target, run.end - RUN_MARGIN)
            if i < 0:
                j = self.buf.rfind(b"\n", max(lowest - self.base, 0), target - self.base)
                i = j + self.base if j >= 0 else -1
            ok = i >= 0 and i + 1 > lowest and self._valid_cut(i + 1, run, lowest)
            return i + 1 if ok else -1
        for delta in range(0, 16):
            for c in (target - delta, target + delta):
                if c > lowest and self._valid_cut(c, run, lowest):
                    return c
        return -1

    def _run(self, hs: int, rs: int, kind: str, pending: _Section | None):
        """Count the run starting at rs, with [hs, rs) before it (hs is a cut).

        Returns (where counting stopped, the last section, whose junction with what
        follows is checked with the next piece).
        """
        m = RUN_MARGIN
        run = _Run(rs, self._run_end(rs, kind), kind)
        self._tail_phase(run)
        c1 = self._cut_near(run.start + max(m, min(4 * m, (run.end - rs) // 2)), run, hs)
        if c1 < 0:
            return (yield from self._uncut_run(hs, run, pending))
        if kind == ALPHA and self._cased and not self._alpha_start_ok(rs):
            # the first pre-token may start before the run; after its first lowercase
            # letter, cuts are safe again (o200k: capitals, then lowercase)
            known = self._bytes(rs, run.end)
            lower = re.search(rb"[a-z]", known)
            if lower is not None and lower.start() + 1 + 5 * m < len(known):
                run.start = rs + lower.start() + 1
                c1 = self._cut_near(run.start + 4 * m, run, hs)
        if c1 < 0:
            return (yield from self._uncut_run(hs, run, pending))
        if kind == ALPHA and self._cased and not self._alpha_start_ok(rs) and run.start == rs:
            self.report.inexact(
                f"a run of ASCII letters at byte {rs:,} follows a letter of another script: "
                "o200k's pre-tokens may join them, so its cuts are not proven exact"
            )
        if pending is None:
            section = _Section(hs, c1, self.encode(self._text(hs, c1, tally=False)), run)
        else:
            section = yield from self._chain(pending, hs, c1, self.encode, pending.start)
            section.run = run
        c = c1
        floor = run.start
        while True:
            self._keep_from(section.start)
            self._fill(c + 2 * RUN_WINDOW + 2 * m + 2 * RUN_PROBE)
            old_end = run.end
            run.end = self._run_end(max(c, run.end - 1), kind)
            if (
                run.tail_bytes
                and c > rs
                and self._bytes(old_end, run.end).translate(None, run.tail_bytes)
            ):
                self.report.inexact(
                    f"a run at byte {rs:,} continues a punctuation pre-token in a way its "
                    "cuts do not cover"
                )
                run.tail_bytes = b""
            # windows of RUN_WINDOW, the last one up to twice that (a short last window
            # would leave few tokens to move its end cut by)
            target = c + RUN_WINDOW if run.end - c > 2 * RUN_WINDOW + 2 * m else run.end - m
            nxt = self._cut_near(target, run, c)
            if nxt <= c:
                break
            section = yield from self._chain(section, c, nxt, self._encode_window, floor)
            section.run = run
            c = nxt
            if target == run.end - m:
                break
        if (
            run.tail_bytes == b"\r\n"
            and self._cased
            and c > rs
            and run.end < self.end
            and self._at(run.end) == 0x2F
        ):
            # o200k's punctuation pre-token goes on over "/" after its newlines
            self.report.inexact(
                f"newlines at byte {rs:,} end a punctuation pre-token that goes on after them"
            )
        return c, section

    def _tail_phase(self, run: _Run) -> None:
        """A punctuation pre-token runs on over newlines (cl100k ``[\\r\\n]*``, o200k
        ``[\\r\\n/]*``): a run of those right after one is part of that pre-token, which
        then ends where they end, while a piece starting inside them would take in more.
        Cuts go after them; while nothing else has been seen, they are watched."""
        rs = run.start
        if rs == 0 or rs - 1 < self.base:
            return
        before = self._at(rs - 1)
        if run.kind == SPACE and _BYTE_KIND[before] in (PUNCT, HIGH):
            tail = b"\r\n"
        elif run.kind == PUNCT and self._cased and before in b"\r\n":
            tail = b"/"
        else:
            return
        known = self._bytes(rs, run.end)
        lead = len(known) - len(known.lstrip(tail))
        if lead < len(known):
            run.start = rs + lead  # a fresh pre-token starts after them
        else:
            run.tail_bytes = tail  # all of them so far: inexact if the run goes on otherwise

    def _alpha_start_ok(self, rs: int) -> bool:
        """o200k's letter pre-tokens take a caseless letter or mark before capitals into
        the same pre-token; then cuts near the start of the run are not safe."""
        if rs == 0 or rs - 1 < self.base or self._at(rs - 1) < 0x80:
            return True
        before = self._bytes(max(rs - 4, self.base), rs)
        ch = before.decode("utf-8", "replace")[-1:]
        import unicodedata

        return not ch.isalpha() and not unicodedata.category(ch).startswith("M")

    def _uncut_run(self, hs: int, run: _Run, pending: _Section | None):
        """A run with no run cut near its start (too short, or of a kind not cut here):
        it is passed on as ordinary text."""
        self._skip_runs_until = run.end
        return hs, pending
        yield  # a generator like the other steps

    # --- encoding and junctions ------------------------------------------------------------

    def _encode_window(self, text: str) -> list[int]:
        if not self._window_loaded:
            self._window = self._window_factory()
            self._window_loaded = True
        if self._window is not None:
            return self._window(text)
        return self.encode(text)

    def _compatible(self, left: int, right: int) -> bool:
        """Whether BPE leaves the pair (left, right) as it is (tiktoken decides)."""
        key = (left, right)
        hit = self._compat.get(key)
        if hit is None:
            enc = self.enc
            bpe = getattr(enc, "_encode_single_piece", None)  # BPE of bytes, no regex
            if bpe is None:
                self.report.inexact("this tiktoken cannot check a cut inside a run")
                return True
            data = enc.decode_single_token_bytes(left) + enc.decode_single_token_bytes(right)
            hit = list(bpe(data)) == [left, right]
            self._compat[key] = hit
        return hit

    def _settle(self, section: _Section) -> Piece:
        """Count a section whose both junctions are checked."""
        self._text(section.start, section.end)  # tallies its characters and newlines
        return Piece(tokens=len(section.tokens))

    def _chain(self, prev: _Section, start: int, end: int, encode, floor: int):
        """Encode [start, end) after ``prev`` (which ends at start). While the two tokens
        at the cut are not a pair BPE keeps, move the cut left by prev's last token (never
        to ``floor`` or before) and encode again; when prev runs out of tokens, encode
        the two as one. Yields prev's count, settled; returns the new section."""
        tokens = encode(self._text(start, end, tally=False))
        tries = 0
        while prev.tokens and tokens and not self._compatible(prev.tokens[-1], tokens[0]):
            moved = False
            while tries < JUNCTION_TRIES and len(prev.tokens) > 1:
                tries += 1
                width = self._raw_width(prev.tokens[-1], start)
                new = start - width
                if width <= 0 or new <= max(floor, prev.start):
                    break
                prev.tokens.pop()
                prev.end = start = new
                if prev.run is not None and self._valid_cut(new, prev.run, prev.start):
                    moved = True
                    break
            if not moved:
                merged = self._encode_any(self._text(prev.start, end, tally=False))
                if merged and (prev.left is None or self._compatible(prev.left, merged[0])):
                    return _Section(prev.start, end, merged, left=prev.left)
                self.report.inexact(_NOT_CUT.format(kind="repeated", at=start))
            tokens = encode(self._text(start, end, tally=False))
            if not moved:
                break
        yield self._settle(prev)
        return _Section(start, end, tokens, left=prev.tokens[-1] if prev.tokens else None)

    def _encode_any(self, text: str) -> list[int]:
        """Encode text that may hold a long run: linear-time when special tokens are not
        in play (bpe-openai counts ordinary text as tiktoken does), else tiktoken."""
        if self.allow_special:
            return self.encode(text)
        return self._encode_window(text)

    def _raw_width(self, token: int, end: int) -> int:
        """How many input bytes before ``end`` the token stands for: its own bytes, or one
        byte per U+FFFD where invalid bytes were replaced; 0 if it matches neither."""
        data = self.enc.decode_single_token_bytes(token)
        if self._bytes(end - len(data), end) == data:
            return len(data)
        k = len(data) // 3
        if k and data == "\ufffd".encode() * k:
            for width in range(k, 4 * k + 1):
                raw = self._bytes(end - width, end)
                if raw.decode("utf-8", "replace") == "\ufffd" * k and self._replaced_at(
                    end - width
                ):
                    return width
        return 0

    def _high_letters_at(self, c: int) -> bool:
        left = self._bytes(max(c - 4, self.base), c)
        right = self._bytes(c, c + 8)
        try:
            lch = left[len(left) - _tail_len(left) :].decode("utf-8")
            rch = right[: _head_len(right)].decode("utf-8")
        except (UnicodeDecodeError, ValueError):
            return False
        return len(lch) == 1 and len(rch) == 1 and _caseless_letter(lch) and _caseless_letter(rch)


@dataclass
class _Run:
    start: int
    end: int
    kind: str
    tail_bytes: bytes = b""  # see Cutter._tail_phase


def _caseless_letter(ch: str) -> bool:
    return ch.isalpha() and ch.lower() == ch and ch.upper() == ch


def _tail_len(data: bytes) -> int:
    """Length of the last UTF-8 character of data (by its lead byte)."""
    for k in range(1, min(4, len(data)) + 1):
        if data[-k] < 0x80 or data[-k] >= 0xC0:
            return k
    raise ValueError("no lead byte")


def _head_len(data: bytes) -> int:
    """Length of the first UTF-8 character of data (from its lead byte)."""
    if not data:
        raise ValueError("empty")
    b = data[0]
    n = 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4
    if len(data) < n:
        raise ValueError("cut character")
    return n
