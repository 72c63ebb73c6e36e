"""What tree-sitter parses of Kotlin source: the source with a few identifiers that the
grammar (tree-sitter-kotlin 1.1) reads as keywords given their first letter in upper case.
The length stays the same, and names, signatures and references come from the source as
written. Kotlin's own lexer reads an identifier in each of these places.

- A word that starts with a soft keyword and goes on with a digit or ``_`` (``in1``,
  ``set_x``): the grammar reads the keyword, then a number or a name.
- A modifier used as a name (``val open: Boolean``, ``return final``): the grammar reads a
  modifier there. A modifier is followed on its line by a word or an annotation (``open
  class``, ``private @Inject``); a name is not.

Either way the parse error that followed could swallow the rest of the class: okhttp's
URLConnectionTest lost about 300 methods to ``in1``, Http2Stream.kt its inner classes to
``val open``.
"""

from __future__ import annotations

import re

_SPLIT = re.compile(rb"\b(?:as|by|constructor|else|get|in|set|where)(?=[0-9_])")
_MODIFIER_AS_NAME = re.compile(
    rb"\b(?:open|final|abstract|sealed|override|internal|private|public|protected|lateinit"
    rb"|inline|noinline|crossinline|suspend|tailrec|external|vararg|reified|expect|actual"
    rb"|const)\b(?![ \t]+[A-Za-z_@`(])"
)


def _upper(m: re.Match) -> bytes:
    w = m.group(0)
    return w[:1].upper() + w[1:]


def kotlin_prepare(src: bytes) -> bytes:
    """The bytes tree-sitter parses for Kotlin source SRC (same length)."""
    return _MODIFIER_AS_NAME.sub(_upper, _SPLIT.sub(_upper, src))
