"""The rulers: exact and heuristic token counters (``choice.get_ruler`` picks one a run).

Three kinds of ruler, one per run:

* ``TiktokenRuler`` -- an exact tiktoken encoding (``cl100k_base``, ``o200k_base``), built
  offline from verified files (``ctxtools.tokens.loading``).
* ``HFRuler`` -- an exact Hugging Face ``tokenizer.json`` through ``tokenizers``.
* ``HeuristicRuler`` -- needs nothing: one token per CJK code point (ideographs, kana,
  hangul), one per four other characters, rounded up.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

DEFAULT_ENCODING = "cl100k_base"
HEURISTIC = "heuristic"


# One token per code point of these: CJK ideographs (incl. extensions and compatibility),
# kana (hiragana, katakana, halfwidth), hangul (syllables and jamo).
_CJK_CLASS = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3130-\u318f"  # Hangul Compatibility Jamo
    "\u31f0-\u31ff"  # Katakana Phonetic Extensions
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\ua960-\ua97f"  # Hangul Jamo Extended-A
    "\uac00-\ud7af"  # Hangul Syllables
    "\ud7b0-\ud7ff"  # Hangul Jamo Extended-B
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\uff66-\uff9f"  # Halfwidth Katakana
    "\U00020000-\U0003134f"  # CJK Extensions B..G (planes 2 and 3)
    "\U0002f800-\U0002fa1f"  # CJK Compatibility Ideographs Supplement
)
_CJK_RE: re.Pattern[str] | None = None


def _cjk_re() -> re.Pattern[str]:
    global _CJK_RE
    if _CJK_RE is None:
        _CJK_RE = re.compile(f"[{_CJK_CLASS}]")
    return _CJK_RE


def heuristic_parts(text: str) -> tuple[int, int]:
    """Return (CJK code points, other characters) of ``text``."""
    cjk = len(_cjk_re().findall(text))
    return cjk, len(text) - cjk


def heuristic_count(text: str) -> int:
    """One token per CJK code point, one per four other characters (rounded up)."""
    cjk, other = heuristic_parts(text)
    return cjk + math.ceil(other / 4)


class Tally:
    """A running token count over pieces of one text (see ``Ruler.tally``)."""

    def __init__(self, count: Callable[[str], int]):
        self._count = count
        self.tokens = 0

    def feed(self, text: str) -> None:
        self.tokens += self._count(text)

    def total(self) -> int:
        return self.tokens


class _HeuristicTally(Tally):
    def __init__(self) -> None:
        super().__init__(heuristic_count)
        self.cjk = 0
        self.other = 0

    def feed(self, text: str) -> None:
        cjk, other = heuristic_parts(text)
        self.cjk += cjk
        self.other += other

    def total(self) -> int:
        return self.cjk + math.ceil(self.other / 4)


class Ruler:
    """Counts tokens. ``name`` says which counter; ``exact`` whether it is a real tokenizer."""

    name: str = ""
    kind: str = ""
    exact: bool = False
    # Whether count_stream may cut the text into pieces and add their counts.
    splittable: bool = False
    # Whether counting releases the GIL (pieces may then be counted on several threads).
    parallel: bool = False

    def count(self, text: str) -> int:
        raise NotImplementedError

    def tally(self) -> Tally:
        return Tally(self.count)

    def describe(self) -> dict:
        return {"counter": self.name, "kind": self.kind, "exact": self.exact}


class HeuristicRuler(Ruler):
    name = HEURISTIC
    kind = HEURISTIC
    exact = False
    splittable = True

    def count(self, text: str) -> int:
        return heuristic_count(text)

    def tally(self) -> Tally:
        return _HeuristicTally()


class TiktokenRuler(Ruler):
    kind = "tiktoken"
    exact = True
    splittable = True
    parallel = True

    def __init__(self, encoding, allow_special: bool = False):
        self.encoding = encoding
        self.name = encoding.name
        self.allow_special = allow_special
        if allow_special:
            enc = encoding
            self._encode = lambda text: enc.encode(
                text, allowed_special="all", disallowed_special=()
            )
        else:
            self._encode = encoding.encode_ordinary
        # Counting needs no token list: tiktoken's core can write the ids into one buffer
        # (what its encode_to_numpy uses), which spares a Python int per token -- and the
        # garbage collector the work of tracking them, which slowed two threads by ~15%.
        # With no allowed special tokens it encodes exactly as encode_ordinary does.
        core = getattr(encoding, "_core_bpe", None)
        to_buffer = getattr(core, "encode_to_tiktoken_buffer", None)
        self._allowed = frozenset(encoding.special_tokens_set) if allow_special else frozenset()
        self._to_buffer = to_buffer

    def count(self, text: str) -> int:
        if self._to_buffer is not None:
            try:
                return memoryview(self._to_buffer(text, self._allowed)).nbytes // 4
            except (TypeError, ValueError, UnicodeEncodeError):
                pass  # e.g. lone surrogates: encode() below repairs them as tiktoken does
        return len(self._encode(text))

    def encode(self, text: str) -> list[int]:
        return self._encode(text)

    def decode(self, tokens: list[int]) -> str:
        return self.encoding.decode(tokens)


class HFRuler(Ruler):
    kind = "tokenizers"
    exact = True
    # A tokenizer.json may normalise or prefix the whole text (e.g. a Metaspace "▁" at the
    # start), so pieces' counts need not add up: it always counts the whole text.
    splittable = False

    def __init__(self, tokenizer, path: str):
        self.tokenizer = tokenizer
        self.path = path
        self.name = f"tokenizer:{path}"

    def count(self, text: str) -> int:
        try:
            return len(self.tokenizer.encode(text, add_special_tokens=False).ids)
        except Exception as exc:  # tokenizers raises a bare Exception (a word it cannot map)
            from ctxtools.errors import TokenizerError

            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise TokenizerError(f"{self.path} cannot count: {first}") from None
