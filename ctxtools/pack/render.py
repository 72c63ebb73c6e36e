"""How a pack's sections and parts are written: Markdown (default) or XML."""

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
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _xml_attr(text: str) -> str:
    return _xml_escape(text).replace('"', "&quot;")


class Renderer:
    """How the sections and their parts are written: Markdown (default) or XML."""

    def __init__(self, fmt: str):
        self.xml = fmt == "xml"

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
        if self.xml:
            return f"<{tag}>\n{body}</{tag}>\n"
        return f"# {title}\n\n{body}"

    def instruction(self, path: str, text: str) -> str:
        if self.xml:
            return f'<file path="{_xml_attr(_q(path))}">\n{_xml_escape(_nl(text))}</file>\n'
        return f"## {_q(path)}\n\n{_nl(text)}\n"

    def skill_cards(self, cards: Sequence[tuple[str, str]]) -> str:
        cards = [(_q(n), _one_line(d)) for n, d in cards]
        if self.xml:
            return "".join(
                f'<skill name="{_xml_attr(n)}" description="{_xml_attr(d)}"/>\n' for n, d in cards
            )
        return "".join(f"- {n}: {d}\n" for n, d in cards) + "\n"

    def skill_body(self, name: str, body: str) -> str:
        if self.xml:
            return f'<skill name="{_xml_attr(_q(name))}">\n{_xml_escape(_nl(body))}</skill>\n'
        return f"## Skill: {_q(name)}\n\n{_nl(body)}\n"

    def memory_chunk(self, file: str, heading: str, start: int, end: int, text: str) -> str:
        file, heading = _q(file), _one_line(heading)
        if self.xml:
            return (
                f'<chunk file="{_xml_attr(file)}" heading="{_xml_attr(heading)}" '
                f'lines="{start}-{end}">\n{_xml_escape(_nl(text))}</chunk>\n'
            )
        title = f" § {heading}" if heading else ""
        return f"## {file}{title} (lines {start}-{end})\n\n{_fence(text, 'text')}\n"

    def repomap(self, text: str) -> str:
        if self.xml:
            return _xml_escape(_nl(text))
        return _fence(text, "text") + "\n"

    def file(self, label: str, block: str, diff: str | None) -> str:
        out = []
        if self.xml:
            if diff:
                out.append(f'<diff path="{_xml_attr(_q(label))}">\n{_xml_escape(_nl(diff))}</diff>\n')
            if block:
                out.append(f'<file path="{_xml_attr(_q(label))}">\n{_xml_escape(_nl(block))}</file>\n')
            return "".join(out)
        if diff:
            out.append(_fence(diff, "diff"))
        if block:
            out.append(_fence(block, "text"))
        return "\n".join(out)

    def task(self, task: str) -> str:
        if self.xml:
            return _xml_escape(_nl(task))
        return _nl(task)

    def document(self, sections: Sequence[str]) -> str:
        if self.xml:
            return "<pack>\n" + "".join(sections) + "</pack>\n"
        return "\n".join(s if s.endswith("\n") else s + "\n" for s in sections)


def _one_line(text: str) -> str:
    """TEXT (a skill's description, a memory heading) on one line: its line breaks and
    other control characters as spaces, so it cannot start a heading or a fence."""
    return _CONTROL_RE.sub(" ", text)


_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _nl(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
