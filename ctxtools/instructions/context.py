"""The state of one ``load_instructions`` run: the root, the pack's files, the notes and
drops so far, and the compiled section gates."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxtools.instructions.frontmatter import FrontMatterError
from ctxtools.instructions.gates import Gate, compile_gate, glob_patterns

GATE_NOTE_LIMIT = 10  # malformed-gate notes for one file; the rest are counted


@dataclass
class Context:
    root: str  # real path of the root
    files: list[str]  # normalised pack files; empty: gating off
    notes: list[str]
    dropped: list[dict]

    cache: dict[str, bool] = field(default_factory=dict)  # pattern -> matches a pack file
    gates: dict[str, Gate | FrontMatterError] = field(default_factory=dict)
    gate_notes: int = 0  # malformed-gate notes of the file being read

    def gate_applies(self, gate: Gate) -> bool:
        return not self.files or gate.applies(self.files, self.cache)

    def section_gate(self, value: str) -> Gate | FrontMatterError:
        """The gate of a heading's ``<!-- paths: VALUE -->``, compiled once per text."""
        got = self.gates.get(value)
        if got is None:
            try:
                got = compile_gate(glob_patterns(value, "paths"), "paths")
                if not got.patterns:
                    raise FrontMatterError("paths: is empty")
            except FrontMatterError as exc:
                got = exc
            self.gates[value] = got
        return got

    def note_gate(self, text: str) -> None:
        """A malformed-gate note; past GATE_NOTE_LIMIT in one file they are only counted."""
        self.gate_notes += 1
        if self.gate_notes <= GATE_NOTE_LIMIT:
            self.notes.append(text + "; section ungated")
