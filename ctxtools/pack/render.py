"""How a pack's sections and parts are written: Markdown (default) or XML.

The XML is well-formed XML 1.0. ``&``, ``<`` and ``>`` are escaped as entities (and ``"``
in an attribute), and a character XML 1.0 cannot hold, not even as a character reference
-- a control character other than tab, newline and carriage return, U+FFFE, U+FFFF, or a
byte that is not UTF-8 (held as a lone surrogate) -- is written as the C escape the name
rule (``ctxtools.quoting.quote_name``) uses: ``\\a \\b \\v \\f``, else the octal escapes
of its bytes (``\\033``; ``\\377`` for the byte 0xFF; ``\\357\\277\\276`` for U+FFFE). A
name's control characters and bytes that are not UTF-8 never get here: the name rule has
quoted and escaped them (``"bad\\377name.py"``, the name with the byte 0xFF); in a file's
text, the file's own backslashes are not doubled. Text without such characters is written as it was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ctxtools.quoting import quote_name as _q

# A run of backticks that could close a fence: at a line's start, after up to 3 spaces.
_TICKS_RE = re.compile(r"^ {0,3}(`{3,})", re.M)


def _fence(text: str, info: str = "") -> str:
    """TEXT in a Markdown code fence longer than any backtick run that could close it."""
    longest = max((len(m) for m in _TICKS_RE.findall(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{ticks}{info}\n{body}{ticks}\n"


def _xml_escape(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _NOT_XML_RE.sub(_c_escape, text)


# What XML 1.0 cannot hold (its Char production), lone surrogates included.
_NOT_XML_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_C_NAMED = {"\a": "\\a", "\b": "\\b", "\v": "\\v", "\f": "\\f"}


def _c_escape(m: re.Match) -> str:
    """The character M matched as the name rule's C escape (see above)."""
    ch = m.group()
    named = _C_NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as surrogateescape holds it
        return f"\\{code - 0xDC00:03o}"
    return "".join(f"\\{b:03o}" for b in ch.encode("utf-8", "surrogatepass"))


def _xml_attr(text: str) -> str:
    return _xml_escape(text).replace('"', "&quot;")


class Renderer:
    """How the sections and their parts are written: Markdown (default) or XML. With a
    REDACTOR (``ctxtools.pack.redact``), what it renders from texts not redacted before
    (the map, the task, memory chunks and labels, skill cards) and the whole document
    are redacted as they are made."""

    def __init__(self, fmt: str, redactor=None):
        self.xml = fmt == "xml"
        self.redactor = redactor

    def _redact(self, text: str, where: str) -> tuple[str, list]:
        if self.redactor is None:
            return text, []
        return self.redactor.redact(text, where)

    def _part(self, part: str, rows: list) -> str:
        return part if self.redactor is None else self.redactor.rendered(part, rows)

    def section(self, name: str, body: str) -> str:
        title = {
            "instructions": "Instructions",
            "skills": "Skills",
            "memory": "Memory",
            "map": "Repository map",
            "files": "Files",
            "task": "Task",
        }[name]
        tag = {"map": "repomap"}.get(name, name)
        rows: list = []
        if name == "files":  # the blocks' headers name the files: a name may hold a secret
            body, rows = self._redact(body, "files section")
        if self.xml:
            return self._part(f"<{tag}>\n{body}</{tag}>\n", rows)
        return self._part(f"# {title}\n\n{body}", rows)

    def instruction(self, path: str, text: str) -> str:
        if self.xml:
            return f'<file path="{_xml_attr(_q(path))}">\n{_xml_escape(_nl(text))}</file>\n'
        return f"## {_q(path)}\n\n{_nl(text)}\n"

    def skill_cards(self, cards: Sequence[tuple[str, str]]) -> str:
        rows: list = []
        shown = []
        for n, d in cards:
            (name, r1), (desc, r2) = (self._redact(x, f"skill {n} (card)") for x in (n, d))
            rows += r1 + r2
            shown.append((_q(name), _one_line(desc)))
        if self.xml:
            return self._part(
                "".join(
                    f'<skill name="{_xml_attr(n)}" description="{_xml_attr(d)}"/>\n'
                    for n, d in shown
                ),
                rows,
            )
        return self._part("".join(f"- {n}: {d}\n" for n, d in shown) + "\n", rows)

    def skill_body(self, name: str, body: str) -> str:
        if self.xml:
            return f'<skill name="{_xml_attr(_q(name))}">\n{_xml_escape(_nl(body))}</skill>\n'
        return f"## Skill: {_q(name)}\n\n{_nl(body)}\n"

    def memory_chunk(self, file: str, heading: str, start: int, end: int, text: str) -> str:
        where = f"memory {file}:{start}-{end}"
        text, rows = self._redact(text, where)
        (file, r1), (heading, r2) = (self._redact(x, where + " (label)") for x in (file, heading))
        rows = rows + r1 + r2
        file, heading = _q(file), _one_line(heading)
        if self.xml:
            return self._part(
                f'<chunk file="{_xml_attr(file)}" heading="{_xml_attr(heading)}" '
                f'lines="{start}-{end}">\n{_xml_escape(_nl(text))}</chunk>\n',
                rows,
            )
        title = f" § {heading}" if heading else ""
        part = f"## {file}{title} (lines {start}-{end})\n\n{_fence(text, 'text')}\n"
        return self._part(part, rows)

    def repomap(self, text: str) -> str:
        text, rows = self._redact(text, "repository map")
        if self.xml:
            return self._part(_xml_escape(_nl(text)), rows)
        return self._part(_fence(text, "text") + "\n", rows)

    def file(self, label: str, block: str, diff: str | None) -> str:
        out = []
        if self.xml:
            path = _xml_attr(_q(label))
            if diff:
                out.append(f'<diff path="{path}">\n{_xml_escape(_nl(diff))}</diff>\n')
            if block:
                out.append(f'<file path="{path}">\n{_xml_escape(_nl(block))}</file>\n')
            return "".join(out)
        if diff:
            out.append(_fence(diff, "diff"))
        if block:
            out.append(_fence(block, "text"))
        return "\n".join(out)

    def more_files(self, paths: Sequence[str]) -> str:
        """The files ranked next that did not fit even as signatures: their paths."""
        body = "Also relevant, not shown (best first):\n" + "".join(_q(p) + "\n" for p in paths)
        if self.xml:
            return f"<more>\n{_xml_escape(body)}</more>\n"
        return _fence(body, "text")

    def task(self, task: str) -> str:
        """The task as given, but for a byte that is not UTF-8 (an argument's, held as a
        lone surrogate): U+FFFD, as in a file's text -- the pack is valid UTF-8."""
        from ctxtools.fsutil import json_text

        task, rows = self._redact(json_text(task), "task")
        if self.xml:
            return self._part(_xml_escape(_nl(task)), rows)
        return self._part(_nl(task), rows)

    def document(self, sections: Sequence[str]) -> str:
        if self.xml:
            text = "<pack>\n" + "".join(sections) + "</pack>\n"
        else:
            text = "\n".join(s if s.endswith("\n") else s + "\n" for s in sections)
        return text if self.redactor is None else self.redactor.final(text)


def _one_line(text: str) -> str:
    """TEXT (a skill's description, a memory heading) on one line: its line breaks and
    other control characters as spaces, so it cannot start a heading or a fence."""
    return _CONTROL_RE.sub(" ", text)


_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _nl(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
