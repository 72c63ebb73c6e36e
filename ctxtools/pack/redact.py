"""Redaction of everything a pack prints, in one place.

A pack goes to a model provider, so no byte of it may carry a secret the toolkit can
recognise. The pack's ``Renderer`` holds a ``PackRedactor`` and passes through it every
text it writes that no earlier step redacted:

* each part as it is rendered (the repository map, the task, a memory chunk and its
  label, the skill cards, the files section, whose headers name the files), so the
  parts are counted and fitted at their redacted sizes;
  files, diffs, handles, instruction files and skill bodies are redacted where they are
  read, line numbers and all;
* the whole pack once more when ``document()`` assembles it, as the guarantee: what
  this pass finds (nothing, unless a part escaped the first layer) is replaced too and
  reported as ``pack line N``, a line of the printed pack. The pack is counted after
  this pass, so a marker longer than what it replaced is paid for by the fitting rounds
  like any other excess, and the budget holds.

A part may be rendered in several fitting rounds, or rendered and then left out (a memory
chunk over its cap): ``seal(pack)`` reports a part's findings only when the part is in
the printed text, once. It also redacts every string of the pack's record (files, drops,
mentions, notes, memory rows, the redactions' own WHERE), which ``--format json`` and
``--explain`` print and stderr repeats. With ``allow`` (``--allow-secrets``) nothing is
redacted.
"""

from __future__ import annotations

from ctxtools.pack.ledger import Ledger, Redaction


class PackRedactor:
    """Redacts a pack's rendered parts, its whole text and its record; the findings
    that are printed join the redactions of LEDGER (the build's ``ledger.Ledger``)."""

    def __init__(self, allow: bool, ledger: Ledger):
        self.allow = allow
        self.ledger = ledger
        # text -> (it redacted, its findings as (line, kind)): a pack's record repeats
        # the same strings (a drop's reason, a file's path) under many JSON paths
        self._memo: dict[str, tuple[str, list[tuple[int, str]]]] = {}
        self._parts: dict[str, list[Redaction]] = {}  # rendered part -> its findings
        self._final: list[Redaction] = []  # the findings of the last whole-text pass

    def redact(self, text: str, where: str) -> tuple[str, list[Redaction]]:
        """(TEXT redacted, its findings under WHERE); nothing is recorded yet."""
        if self.allow or not text:
            return text, []
        done = self._memo.get(text)
        if done is None:
            from ctxtools.secrets import redact

            out, findings = redact(text)
            done = self._memo[text] = (out, [(f.line, f.kind) for f in findings])
        out, found = done
        return out, [Redaction(where, line, kind) for line, kind in found]

    def rendered(self, part: str, rows: list[Redaction]) -> str:
        """PART, rendered from texts whose findings are ROWS: they are reported if PART is
        in the printed pack. Returns PART."""
        if rows:
            self._parts[part] = rows
        return part

    def final(self, text: str) -> str:
        """The whole rendered pack, searched once more: what is found is replaced and
        reported as ``pack line N`` (the last version of the pack is the one reported)."""
        out, self._final = self.redact(text, "pack")
        return out

    def seal(self, pack):
        """PACK with the findings of its printed parts in its redactions (the ledger's,
        all of them) and every string of its record redacted. Returns PACK."""
        if self.allow:
            return pack
        found = self.ledger.redactions
        for part, rows in self._parts.items():
            if part in pack.text:
                found.extend(rows)
        found.extend(self._final)
        for name in ("files", "dropped", "mentions", "notes", "named", "sections", "memory"):
            setattr(pack, name, self._record(getattr(pack, name), name))
        # a WHERE names a file, and a name may hold a secret
        pack.redactions = [dict(r.as_dict(), where=self._record(r.where, "")) for r in found]
        return pack

    def _record(self, value, path: str):
        """VALUE with its strings redacted; a finding is reported at its JSON path (not
        when PATH is empty)."""
        if isinstance(value, str):
            out, rows = self.redact(value, path or "-")
            if path:
                self.ledger.redactions.extend(rows)
            return out
        if isinstance(value, list):
            return [self._record(v, f"{path}[{i}]" if path else "") for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: self._record(v, f"{path}.{k}" if path else "") for k, v in value.items()}
        return value
