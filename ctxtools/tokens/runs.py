"""Run cuts: counting a long run of one class of byte in checked windows.

Run cuts lie inside a long run of one class of character (a run of NULs, ``====``,
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

``RunCounting`` is the part of ``ctxtools.tokens.cutter.Cutter`` that does this; it works
on the cutter's buffer (``buf``, ``base``, ``_at``, ``_bytes``, ``_find``, ``_text``,
``_fill``, ``_keep_from``), its ``report``, and makes a settled section's piece with its
``_counted_piece``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxtools.tokens.cuts import WS, Piece

# Tunables (the tests make them small to exercise every path on small texts).
RUN_PROBE = 2048  # a run is found by probing every RUN_PROBE bytes: runs >= 2x are caught
RUN_MARGIN = 256  # run cuts stay this far inside a run, from its ends and from other kinds
RUN_WINDOW = 1 << 18  # bytes encoded at once inside a run
JUNCTION_TRIES = 16  # moves of one cut before the run is declared not exactly countable
LOOKBACK = 4096  # how far before a run to look for the rule cut where its first piece starts

ALPHA, DIGIT, SPACE, PUNCT, HIGH = "alpha", "digit", "space", "punct", "high"
_PUNCT_BYTES = bytes(b for b in range(128) if not chr(b).isalnum() and b not in WS)
_HIGH_BYTES = bytes(range(128, 256))
_BYTE_KIND: list[str | None] = []
for _b in range(256):
    if _b >= 128:
        _BYTE_KIND.append(HIGH)
    elif chr(_b).isalpha():
        _BYTE_KIND.append(ALPHA)
    elif chr(_b).isdigit():
        _BYTE_KIND.append(DIGIT)
    elif _b in WS:
        _BYTE_KIND.append(SPACE)
    else:
        _BYTE_KIND.append(PUNCT)


def one_kind(data: bytes | bytearray) -> bool:
    """Whether DATA is all of one kind of byte (empty: yes)."""
    return not data or _uniform(data, _BYTE_KIND[data[0]])


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


@dataclass
class Section:
    """The tokens of buf[start:end] (absolute offsets), one link of a run's chain."""

    start: int
    end: int
    tokens: list[int]
    run: _Run | None = None  # the run it ends in, when its end is a run cut
    left: int | None = None  # the token before it, when its start is a run cut


_NOT_CUT = "a run of {kind} bytes at byte {at:,} could not be cut at a checked token boundary"


class RunCounting:
    """Finding long runs, cutting them into windows and checking each window's junction
    with BPE itself (mixed into ``Cutter``, which owns the buffer)."""

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

    def _run(self, hs: int, rs: int, kind: str, pending: Section | None):
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
            section = Section(hs, c1, self.encode(self._text(hs, c1, tally=False)), run)
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

    def _uncut_run(self, hs: int, run: _Run, pending: Section | None):
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

    def _settle(self, section: Section) -> Piece:
        """Count a section whose both junctions are checked."""
        self._text(section.start, section.end)  # tallies its characters and newlines
        return self._counted_piece(section.tokens)

    def _chain(self, prev: Section, start: int, end: int, encode, floor: int):
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
                    return Section(prev.start, end, merged, left=prev.left)
                self.report.inexact(_NOT_CUT.format(kind="repeated", at=start))
            tokens = encode(self._text(start, end, tally=False))
            if not moved:
                break
        yield self._settle(prev)
        return Section(start, end, tokens, left=prev.tokens[-1] if prev.tokens else None)

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
