"""Helpers shared by the index, the use log and the resolver: clean relative paths, and
saving to the store with a note (never an error) when the store cannot be written."""

from __future__ import annotations

from pathlib import Path


def save(path: Path, data: bytes, what: str, notes: list[str]) -> None:
    """Write DATA to PATH atomically; a failure only adds a note to NOTES."""
    from ctxtools.fsutil import atomic_write

    reason = atomic_write(path, data, durable=False)
    if reason:
        note(notes, what, reason)


def note(notes: list[str], what: str, reason: str) -> None:
    text = f"mention {what} not saved: {reason}"
    if text not in notes:
        notes.append(text)


def stem(name: str) -> str:
    dot = name.rfind(".")
    return name[:dot] if dot > 0 else name


def clean_rel(name: str) -> str | None:
    """NAME as a clean POSIX path relative to the root, or None when it leaves the root
    (absolute, or ``..`` past the top) or is empty."""
    if not name or name.startswith("/") or "\0" in name:
        return None
    parts: list[str] = []
    for part in name.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts) or None
