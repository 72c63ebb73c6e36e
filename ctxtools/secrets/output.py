"""The one redaction pass over what a command gives a model, at the place it is produced.

``scan.redact`` works on rendered text whatever stands before a line (a diff's ``+``, a
map's ``12:``, an excerpt's gutter), so the outputs pass through it as they are printed:

* ``redact_output(text)``: a whole output (an excerpt, a map, an MCP tool's reply), with
  one note per secret, worded ``redacted KIND at output line N``;
* ``redact_doc(value)``: every string of a JSON document (``--json`` outputs), keys and
  all; the document keeps its shape (a marker replaces only the secret inside a string);
* ``RedactingWriter(write)``: a byte sink for outputs that stream block by block (each
  block is redacted whole before it is written).
"""

from __future__ import annotations

from collections.abc import Callable


def redact_output(text: str) -> tuple[str, list[str]]:
    """(TEXT redacted, a note per secret found: ``redacted KIND at output line N``)."""
    from ctxtools.secrets.scan import redact

    out, findings = redact(text)
    return out, [f"redacted {f.kind} at output line {f.line}" for f in findings]


def redact_doc(value, found: list[str] | None = None):
    """VALUE (a JSON document: dicts, lists, strings, numbers) with every string redacted;
    the kinds found are added to FOUND."""
    from ctxtools.secrets.scan import redact

    if isinstance(value, str):
        out, findings = redact(value)
        if found is not None:
            found.extend(f.kind for f in findings)
        return out
    if isinstance(value, list):
        return [redact_doc(v, found) for v in value]
    if isinstance(value, dict):
        return {redact_doc(k, found): redact_doc(v, found) for k, v in value.items()}
    return value


class RedactingWriter:
    """A ``write(bytes)`` that redacts each block before passing it to WRITE; ``kinds``
    are those of the secrets replaced so far (KINDS, when given, is that list)."""

    def __init__(self, write: Callable[[bytes], object], kinds: list[str] | None = None):
        self._write = write
        self.kinds = [] if kinds is None else kinds

    def write(self, data: bytes) -> int:
        from ctxtools.secrets.scan import redact

        text = data.decode("utf-8", "surrogateescape")
        out, findings = redact(text)
        if findings:
            self.kinds.extend(f.kind for f in findings)
            data = out.encode("utf-8", "surrogateescape")
        self._write(data)
        return len(data)


class OutputRedactor:
    """One command's output pass: ``text``, ``doc`` and ``writer`` redact (unless ALLOW,
    ``--allow-secrets``) and count; ``notes()`` says on stderr what was replaced."""

    def __init__(self, allow: bool = False):
        self.allow = allow
        self.kinds: list[str] = []

    def text(self, text: str) -> str:
        if self.allow:
            return text
        from ctxtools.secrets.scan import redact

        out, findings = redact(text)
        self.kinds.extend(f.kind for f in findings)
        return out

    def doc(self, value):
        return value if self.allow else redact_doc(value, self.kinds)

    def writer(self, write: Callable[[bytes], object]) -> Callable[[bytes], object]:
        if self.allow:
            return write
        return RedactingWriter(write, self.kinds).write

    def notes(self) -> list[str]:
        n = len(self.kinds)
        if not n:
            return []
        what = ", ".join(sorted(set(self.kinds)))
        return [f"note: redacted {n} secret{'s' if n > 1 else ''} ({what}; --allow-secrets)"]
