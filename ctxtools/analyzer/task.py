"""A task, read once: its @-mentions, its words, and what a retriever looks for.

``read_task(text)`` gives a ``Task``: the mentions (``mentions.parse_mentions``), the
*prose* (the text with each mention blanked: ``@src/x.py`` names a file, its words are no
part of what the task is about; and what is no account of the problem, where no mention
is looked for either -- a commit's people lines, a template's hidden comments, where a
link points, a version report: ``prose.said``), and from the prose the words every caller matches
(``words``: the repo map's personalisation, the memory section, the skills, the
retrieval engine's terms all start from them) and the engine's ``query``
(``query.parse_query``: weighted terms, names, paths, frames, messages). A pack reads its
task once: ``read_task`` keeps the last few.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from ctxtools.analyzer.mentions import Mention, parse_mentions
from ctxtools.analyzer.prose import said
from ctxtools.analyzer.query import Query, query_of_said
from ctxtools.analyzer.tokenizer import tokens, words


@dataclass(frozen=True)
class Task:
    """One task's reading (see the module's docstring)."""

    text: str
    mentions: tuple[Mention, ...]
    prose: str

    @cached_property
    def words(self) -> tuple[str, ...]:
        """The prose's words, every occurrence, in order (``tokenizer.words``)."""
        return tuple(words(self.prose))

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        """The prose's words as written whole, lower-cased, once each, in order (a compound
        name without its parts: what a definition's whole name may equal)."""
        return tuple(dict.fromkeys(m.group().lower() for m in tokens(self.prose)))

    @cached_property
    def query(self) -> Query:
        return query_of_said(self.prose)  # (the prose is ``said`` already)

    @property
    def skill_names(self) -> list[str]:
        """The names of the task's ``@skill:NAME`` mentions, in order."""
        return [m.raw.split(":", 1)[1] for m in self.mentions if m.kind == "skill"]


@lru_cache(maxsize=8)
def read_task(text: str) -> Task:
    """TEXT read (see the module's docstring); the same object for the same text."""
    prose = said(text)
    mentions = tuple(parse_mentions(prose))
    for m in reversed(mentions):
        prose = prose[: m.start] + " " + prose[m.end :]
    return Task(text, mentions, prose)
