"""Rule cuts: where the pre-tokens of cl100k_base and o200k_base cannot span, found in
linear time on the raw bytes; and what a cut piece and the cutter's report hold.

Rule cuts lie where no pre-token of cl100k_base or o200k_base can span, and neither
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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

WS = b"\t\n\x0b\x0c\r "
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
