"""Parsing ``@`` mentions out of a task string, and the names a parsed mention may mean
(``ctxtools.mentions`` resolves them to files).

Parsing rules:

- An ``@`` starts a mention at the start of the task, after whitespace, after opening or
  separating punctuation (``( [ { " ' < , ; : = * >``), or after a CJK or other non-ASCII
  non-letter character (CJK text has no spaces). After an ASCII letter, digit or ``_ . - /
  + % @`` it does not: ``a@b.com`` and ``https://x/@user`` are not mentions.
- ``@@`` is an escape: ``@@name`` is not a mention, nor is ``@`` alone.
- Text inside backticks (an inline code span or a fenced block) holds no mentions, so
  decorators quoted as code (`` `@pytest.fixture` ``) are left alone. An unquoted
  ``@property`` is a basename mention (which then does not resolve, and the caller warns).
- A mention runs until whitespace, a quote, a bracket, ``, ; |`` or CJK punctuation.
  Trailing sentence punctuation (``. , : ; ! ? ) ] } ' "``) is stripped and kept in
  ``Mention.trailing``: "fix @jwt.py." mentions ``jwt.py``; the resolver tries the
  punctuation back on only when the bare name names no file.
- A trailing line reference, ``:42``, ``:42-60`` or ``#L42``, on a path or basename is kept
  in ``Mention.line`` (the first line) and not in ``raw``.
- Kinds: ``ctx:…`` is a handle, ``skill:…`` a skill, anything with a ``/`` a path, the rest
  a basename.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class Mention:
    """An ``@`` mention: RAW as written without the ``@`` (and without a trailing line
    reference or sentence punctuation), its KIND ("path", "basename", "handle", "skill"),
    and the span ``task[start:end]`` of ``@…`` (line reference included, punctuation not)."""

    raw: str
    kind: str
    start: int
    end: int
    line: int | None = None  # from ``:42``, ``:42-60`` or ``#L42`` after a path/basename
    trailing: str = ""  # sentence punctuation stripped after the mention


# Characters after which "@" starts a mention (besides whitespace and the start).
_OPENERS = frozenset("([{\"'<,;:=*>")
# Characters that end a mention.
_ENDERS = frozenset("\"'`<>()[]{},;|") | frozenset("，。、；：！？）（「」『』【】《》“”‘’\u3000")
# Sentence punctuation stripped from the end of a mention.
_TRAILING = ".,:;!?)]}'\""
_LINE_REF = re.compile(r"(?::(\d+)(?:[-:]\d+)?|#L(\d+)(?:-L?\d+)?)$")
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)


def _starts_mention(task: str, i: int) -> bool:
    if i == 0:
        return True
    c = task[i - 1]
    if c.isspace() or c in _OPENERS:
        return True
    if c.isascii():
        return False
    # CJK runs have no spaces between words; other letters (é in josé@x.com) do not start.
    return not c.isalnum() or unicodedata.east_asian_width(c) in ("W", "F")


def _code_spans(task: str) -> list[tuple[int, int]]:
    if "`" not in task:
        return []
    return [m.span() for m in _CODE.finditer(task)]


def parse_mentions(task: str) -> list[Mention]:
    """The mentions in TASK, in order (see the module's docstring for the rules)."""
    out: list[Mention] = []
    if "@" not in task:
        return out
    code = _code_spans(task)
    n = len(task)
    i = task.find("@")
    while i != -1:
        nxt = i + 1
        if nxt < n and task[nxt] == "@":  # "@@": an escape, never a mention
            while nxt < n and task[nxt] == "@":
                nxt += 1
            while nxt < n and not task[nxt].isspace() and task[nxt] not in _ENDERS:
                nxt += 1
            i = task.find("@", nxt)
            continue
        if not _starts_mention(task, i) or any(a <= i < b for a, b in code):
            i = task.find("@", nxt)
            continue
        j = nxt
        while j < n and not task[j].isspace() and task[j] not in _ENDERS:
            j += 1
        mention = _make(task[nxt:j], i)
        if mention is not None:
            out.append(mention)
        i = task.find("@", max(j, nxt))
    return out


def _make(token: str, at: int) -> Mention | None:
    body = token.rstrip(_TRAILING)
    trailing = token[len(body) :]
    if body in ("ctx", "skill") and trailing.startswith(":"):
        return None  # "@ctx:" or "@skill:" with no name
    end = at + 1 + len(body)
    if body.startswith("ctx:"):
        return Mention(body, "handle", at, end, None, trailing) if len(body) > 4 else None
    if body.startswith("skill:"):
        return Mention(body, "skill", at, end, None, trailing) if len(body) > 6 else None
    line = None
    m = _LINE_REF.search(body)
    if m and m.start() > 0:
        line = int(m.group(1) or m.group(2))
        name = body[: m.start()]
    else:
        name = body
    if not any(ch.isalnum() for ch in name):
        return None
    kind = "path" if "/" in name else "basename"
    return Mention(name, kind, at, end, line, trailing)


def _wide(ch: str) -> bool:
    return not ch.isascii() and unicodedata.east_asian_width(ch) in ("W", "F")


def variants(mention: Mention) -> list[str]:
    """The names a mention may mean, in the order tried: as parsed; with its stripped
    punctuation put back (a file named ``notes.``); without a run of CJK text glued to its
    end (``修复@views.py里的问题`` means ``views.py``), since CJK prose has no spaces."""
    raw = mention.raw
    out = [raw]
    trailing = mention.trailing
    out.extend(raw + trailing[:k] for k in range(len(trailing), 0, -1))
    if raw and _wide(raw[-1]):
        cut = len(raw)
        while cut > 0 and _wide(raw[cut - 1]):
            cut -= 1
        if cut > 0 and any(ch.isalnum() for ch in raw[:cut]):
            out.append(raw[:cut])
    return out
