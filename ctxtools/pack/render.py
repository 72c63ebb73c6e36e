"""How a pack's sections and parts are written: Markdown (default) or XML."""

from __future__ import annotations

import re
from collections.abc import Sequence

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
            return f'<file path="{_xml_attr(path)}">\n{_xml_escape(_nl(text))}</file>\n'
        return f"## {path}\n\n{_nl(text)}\n"

    def skill_cards(self, cards: Sequence[tuple[str, str]]) -> str:
        if self.xml:
            return "".join(
                f'<skill name="{_xml_attr(n)}" description="{_xml_attr(d)}"/>\n' for n, d in cards
            )
        return "".join(f"- {n}: {d}\n" for n, d in cards) + "\n"

    def skill_body(self, name: str, body: str) -> str:
        if self.xml:
            return f'<skill name="{_xml_attr(name)}">\n{_xml_escape(_nl(body))}</skill>\n'
        return f"## Skill: {name}\n\n{_nl(body)}\n"

    def memory_chunk(self, file: str, heading: str, start: int, end: int, text: str) -> str:
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
                out.append(f'<diff path="{_xml_attr(label)}">\n{_xml_escape(_nl(diff))}</diff>\n')
            if block:
                out.append(f'<file path="{_xml_attr(label)}">\n{_xml_escape(_nl(block))}</file>\n')
            return "".join(out)
        if diff:
            out.append(_fence(diff, "diff"))
        if block:
            out.append(_fence(block, "text"))
        return "\n".join(out)

    def more_files(self, paths: Sequence[str]) -> str:
        """The files ranked next that did not fit even as signatures: their paths."""
        body = "Also relevant, not shown (best first):\n" + "".join(p + "\n" for p in paths)
        if self.xml:
            return f"<more>\n{_xml_escape(body)}</more>\n"
        return _fence(body, "text")

    def task(self, task: str) -> str:
        if self.xml:
            return _xml_escape(_nl(task))
        return _nl(task)

    def document(self, sections: Sequence[str]) -> str:
        if self.xml:
            return "<pack>\n" + "".join(sections) + "</pack>\n"
        return "\n".join(s if s.endswith("\n") else s + "\n" for s in sections)


def _nl(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
