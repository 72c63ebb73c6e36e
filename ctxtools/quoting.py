"""How a file name is shown in text the toolkit prints: one rule, for every command.

A name is shown as it is unless it holds a character that could break the line it is on
or be taken for structure: a control character (U+0000-U+001F, U+007F-U+009F, so a
newline, a tab, an escape), a line or paragraph separator (U+2028, U+2029), a double
quote, a backslash, or a byte that is not UTF-8 (``os.fsdecode`` holds it as a lone
surrogate, U+DC80-U+DCFF). Such a name is shown in double quotes, with C escapes:
``\\"``, ``\\\\``, ``\\a \\b \\t \\n \\v \\f \\r``, a byte that is not UTF-8 as
its own octal escape (``b\\377.py``, the byte 0xFF), and every other such character as
the octal escapes of its UTF-8 bytes (``\\033``) -- the way git shows names
(``core.quotePath``), letters of every script kept. So ``x<newline># Task`` is shown
``"x\\n# Task"``: on one line, it cannot start a heading, close a code fence or open a
new block; and every name is shown as valid UTF-8 (a model's API, a pipe decoding
UTF-8), its bytes given back by undoing the escapes (``codecs.escape_decode`` of the
text between the quotes, as UTF-8).

A name in a command the user is told to run (a hint: ``ctx-read < FILE``) is a shell word,
``shell_word``: quoted so that a shell gives the program the name's bytes back.

A file's line is shown by ``numbered``: its real number, a tab, the line (``SEPARATOR``,
``⋮``, stands between runs of lines that are not adjacent).
"""

from __future__ import annotations

import re

# A lone surrogate too: U+DC80-U+DCFF is a byte that is not UTF-8 (surrogateescape); the
# others stand for no byte (a name from JSON's "\\ud800"), shown as surrogatepass's bytes.
_NEEDS_QUOTES = re.compile('[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff"\\\\]')
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
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as surrogateescape holds it
        return f"\\{code - 0xDC00:03o}"
    return "".join(f"\\{b:03o}" for b in ch.encode("utf-8", "surrogatepass"))


def quote_name(name: str) -> str:
    """NAME as the toolkit prints it: as it is, or quoted with C escapes (see above)."""
    if _NEEDS_QUOTES.search(name) is None:
        return name
    return '"' + _NEEDS_QUOTES.sub(_escape, name) + '"'


# What a shell word may hold as it is (shlex.quote's safe set).
_SHELL_SAFE = re.compile(r"[\w@%+=:,./-]+", re.ASCII)
# What a quoted shell word cannot hold as a character a user can paste: a control
# character, a line separator, a byte that is not UTF-8, a lone surrogate.
_SHELL_RAW = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_DOLLAR_ESCAPED = re.compile("[\\\\']|" + _SHELL_RAW.pattern)  # ... and \\ and ' in $'...'


def _dollar_escape(m: re.Match) -> str:
    ch = m.group()
    if ch in "\\'":
        return "\\" + ch
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as surrogateescape holds it
        return f"\\{code - 0xDC00:03o}"
    return "".join(f"\\{b:03o}" for b in ch.encode("utf-8", "surrogatepass"))


def shell_word(arg: str) -> str:
    """ARG as one word of a command a user pastes into a POSIX shell, which gives the
    program ARG's bytes back: as it is when it holds only ``[A-Za-z0-9_@%+=:,./-]``; in
    single quotes, or in double quotes when it holds a single quote (``"it's"`` reads
    better than ``'it'"'"'s'``); and in dollar-single quotes with octal escapes when it
    holds a character a terminal would not show (a control character, a line separator)
    or a byte that is not UTF-8: ``$'b\\377.py'`` (bash, zsh, ksh, busybox sh and
    POSIX.1-2024's sh) -- quoted otherwise, such a name printed raw would make the hint
    invalid UTF-8 and a terminal would hide or mangle it."""
    if arg and _SHELL_SAFE.fullmatch(arg):
        return arg
    if _SHELL_RAW.search(arg):
        return "$'" + _DOLLAR_ESCAPED.sub(_dollar_escape, arg) + "'"
    if "'" not in arg:
        return f"'{arg}'"
    return '"' + re.sub(r'(["\\$`])', r"\\\1", arg) + '"'


SEPARATOR = "\u22ee"  # (⋮) the line between two runs of shown lines that are not adjacent


def numbered(n: int, text: str) -> str:
    """Line N of a file as every block shows it (pack, excerpt, signatures, memory):
    ``120<TAB>code``, ``cat -n``'s form without its padding. A number and a tab cost 1.2
    tokens a line in cl100k and o200k; the padded ``  120│ `` gutter it replaced cost 4.2,
    a fifth of a pack's tokens."""
    return f"{n}\t{text}"
