"""The ledger of a pack: what happened on the way, as typed records.

Building a pack says things (a ``Note`` with its severity), leaves things out (a
``Drop`` with its reason) and redacts secrets (a ``Redaction`` with where it was). Each
step writes to the one ``Ledger`` of the build; the built ``Pack`` gets them as the plain
lines and dicts its record has always printed (``--format json``, ``--explain``, stderr).

The modules a pack calls on (instructions, skills, memory, the ruler, the path filter) say
their notes as lines whose first word may be their severity (``warning: ...``);
``Note.parse`` reads such a line once, where it enters the ledger.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

SEVERITIES = ("info", "note", "warning")  # "info" is printed without a prefix


@dataclass(frozen=True)
class Note:
    """Something the pack tells the user: TEXT, at SEVERITY (one of SEVERITIES)."""

    text: str
    severity: str = "info"

    @classmethod
    def parse(cls, line: str) -> Note:
        """The note another module wrote as LINE (``warning: ...``, ``note: ...`` or
        plain)."""
        for severity in SEVERITIES[1:]:
            if line.startswith(severity + ": "):
                return cls(line[len(severity) + 2 :], severity)
        return cls(line)

    def line(self) -> str:
        """The note as the pack's record and stderr print it."""
        return self.text if self.severity == "info" else f"{self.severity}: {self.text}"


@dataclass(frozen=True)
class Drop:
    """Something left out of the pack (WHAT), and why (WHY)."""

    what: str
    why: str

    def as_dict(self) -> dict:
        return {"what": self.what, "why": self.why}


@dataclass(frozen=True)
class Redaction:
    """A secret replaced by a marker: in WHERE (a file, a part, ``pack`` or a JSON path of
    the record), at LINE, of KIND."""

    where: str
    line: int
    kind: str

    def as_dict(self) -> dict:
        return {"where": self.where, "line": self.line, "kind": self.kind}


@dataclass
class Ledger:
    """The notes, drops and redactions of one build, in the order they happened."""

    notes: list[Note] = field(default_factory=list)
    drops: list[Drop] = field(default_factory=list)
    redactions: list[Redaction] = field(default_factory=list)

    def info(self, text: str) -> None:
        self.notes.append(Note(text))

    def note(self, text: str) -> None:
        self.notes.append(Note(text, "note"))

    def warn(self, text: str) -> None:
        self.notes.append(Note(text, "warning"))

    def said(self, lines: Iterable[str]) -> None:
        """The notes another module wrote as LINES (see ``Note.parse``)."""
        self.notes.extend(Note.parse(line) for line in lines)

    def drop(self, what: str, why: str) -> None:
        self.drops.append(Drop(what, why))

    def redacted(self, where: str, line: int, kind: str) -> None:
        self.redactions.append(Redaction(where, line, kind))

    def note_lines(self) -> list[str]:
        return [n.line() for n in self.notes]

    def drop_rows(self) -> list[dict]:
        return [d.as_dict() for d in self.drops]

    def redaction_rows(self) -> list[dict]:
        return [r.as_dict() for r in self.redactions]
