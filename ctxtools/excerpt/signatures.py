"""Signatures: a file's definitions (from the repo map's scanners) instead of its windows."""

from __future__ import annotations

from dataclasses import dataclass

from ctxtools.excerpt.model import Span
from ctxtools.excerpt.render import frame
from ctxtools.fsutil import json_name
from ctxtools.quoting import numbered


@dataclass(frozen=True)
class Signatures:
    """What a file declares, from the repo map's scanners: ``language`` (None: no scanner
    for this file type), ``definitions`` in line order, and the query terms their
    signatures hold (``matched``, in the query's order; ``score``: the sum over the
    matching definitions of their terms' query weights). ``too_large``: over 512 KB, not
    scanned (as the repo map skips it)."""

    language: str | None
    definitions: tuple = ()
    line_count: int = 0
    matched: tuple[str, ...] = ()
    score: float = 0.0
    size: int = 0
    binary: bool = False
    too_large: bool = False
    spans: tuple[Span, ...] = ()
    matches: int = 0  # definitions whose signature matches


def signatures_of(
    path: str,
    data: bytes | None,
    query=None,
    *,
    size: int | None = None,
    binary: bool = False,
) -> Signatures:
    """The definitions of the source DATA named PATH (the name picks the language, or an
    extensionless script's ``#!`` line).

    QUERY (a ``analyzer.Query``) names the terms to look for in the signatures,
    words analysed as the engine analyses them. DATA None means the file was too large to
    scan (SIZE bytes)."""
    from ctxtools.source.scan import language_for, scan_source, script_language

    language = language_for(path) if path else None
    if language is None and path and data and not binary:
        language = script_language(path, data[:256])  # bin/deploy: its #! line says
    if binary:
        return Signatures(language, binary=True)
    if data is None:
        return Signatures(language, size=size or 0, too_large=True)
    line_count = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    if language is None:
        return Signatures(None, line_count=line_count, size=len(data))
    result = scan_source(path, data.decode("utf-8", "replace"))
    defs = tuple(sorted(result.definitions, key=lambda d: (d.line, d.name))) if result else ()
    matched: set[int] = set()
    score = 0.0
    matches = 0
    if query is not None and query.terms:
        from ctxtools.retrieval.terms import Terms

        terms = Terms.of(query)
        weights = [query.terms[t] for t in terms.terms]
        for d in defs:
            tf, _n = terms.count(d.signature.encode("utf-8", "surrogateescape"))
            matched.update(tf)
            score += sum(weights[i] for i in tf)
            matches += bool(tf)
        names = tuple(terms.terms[i] for i in sorted(matched))
    else:
        names = ()
    return Signatures(language, defs, line_count, names, score, len(data), matches=matches)


def render_signatures(sig: Signatures, label: str) -> str:
    """A file's header, then ``120<TAB>def verify(token)`` per definition (``numbered``),
    indented by scope."""
    n = sig.line_count
    parts = []
    if sig.too_large:
        parts.append(f"{sig.size} bytes; over 512 KB, not scanned")
    else:
        parts.append(f"{n} line" + ("" if n == 1 else "s"))
        if sig.language is None:
            parts.append("no definition scanner for this file type")
        else:
            k = len(sig.definitions)
            parts.append(f"{sig.language}, {k} definition" + ("" if k == 1 else "s"))
    if sig.matched:
        parts.append("matched: " + ", ".join(sig.matched))
    out = [frame(label, parts)]
    for d in sig.definitions:
        depth = d.scope.count(".") + 1 if d.scope else 0
        out.append(numbered(d.line, "  " * depth + d.signature))
    out.append("")
    return "\n".join(out)


def signatures_dict(sig: Signatures, label: str) -> dict:
    return {
        **json_name(label),
        "status": "too_large" if sig.too_large else "ok",
        "lines": sig.line_count,
        "bytes": sig.size,
        "language": sig.language,
        "matched": list(sig.matched),
        "score": sig.score,
        "matches": sig.matches,
        "definitions": [
            {
                "kind": d.kind,
                "name": d.name,
                "line": d.line,
                "end_line": d.end_line,
                "scope": d.scope,
                "signature": d.signature,
            }
            for d in sig.definitions
        ],
    }
