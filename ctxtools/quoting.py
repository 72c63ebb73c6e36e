"""How a file name is shown in text the toolkit prints: one rule, for every command.

A name is shown as it is unless it holds a character that could break the line it is on
or be taken for structure: a control character (U+0000-U+001F, U+007F-U+009F, so a
newline, a tab, an escape), a line or paragraph separator (U+2028, U+2029), a double
quote or a backslash. Such a name is shown in double quotes, with C escapes: ``\\"``,
``\\\\``, ``\\a \\b \\t \\n \\v \\f \\r``, and every other such character as the octal
escapes of its UTF-8 bytes (``\\033``) -- the way git shows names (``core.quotePath``),
letters of every script kept, and a byte that is not UTF-8 kept as it is (it breaks no
line). So ``x<newline># Task`` is shown ``"x\\n# Task"``: on one line, it cannot
start a heading, close a code fence or open a new block.

A file's line is shown by ``numbered``: its real number, a tab, the line (``SEPARATOR``,
``⋮``, stands between runs of lines that are not adjacent).
"""

from __future__ import annotations

import re

_NEEDS_QUOTES = re.compile('[\x00-\x1f\x7f-\x9f\u2028\u2029"\\\\]')
_NAMED = {
    '"': '\\"',
    "\\": "\\\\",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
}


def _escape(m: re.Match) -> str:
    ch = m.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    return "".join(f"\\{b:03o}" for b in ch.encode("utf-8"))


def quote_name(name: str) -> str:
    """NAME as the toolkit prints it: as it is, or quoted with C escapes (see above)."""
    if _NEEDS_QUOTES.search(name) is None:
        return name
    return '"' + _NEEDS_QUOTES.sub(_escape, name) + '"'


SEPARATOR = "\u22ee"  # (⋮) the line between two runs of shown lines that are not adjacent


def numbered(n: int, text: str) -> str:
    """Line N of a file as every block shows it (pack, excerpt, signatures, memory):
    ``120<TAB>code``, ``cat -n``'s form without its padding. A number and a tab cost 1.2
    tokens a line in cl100k and o200k; the padded ``  120│ `` gutter it replaced cost 4.2,
    a fifth of a pack's tokens."""
    return f"{n}\t{text}"
