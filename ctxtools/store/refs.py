"""Names, references and cards: what a handle is called, how it is referred to, and the
record stored for it.

A name or a session matches ``[A-Za-z0-9][A-Za-z0-9._-]{0,127}`` (so no name can point
outside the store); a reference is ``[ctx:][SESSION/]NAME[@SHA_PREFIX]``. A card is the
record of one stash: the public fields ``ctx-stash`` prints (``PUBLIC_FIELDS``, in that
order) plus private ones (``xxh3``, ``created_at``). A card read back is checked
(``card_problem``): every field it needs, of the right type, a ``sha256`` of 64 hex digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxtools import defaults
from ctxtools.errors import UsageError
from ctxtools.quoting import quote_name

if TYPE_CHECKING:
    from ctxtools.store.lineindex import Indexer

DEFAULT_SESSION = defaults.SESSION
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
SHA_PREFIX_RE = re.compile(r"[0-9a-f]{4,64}")
SHA256_RE = re.compile(r"[0-9a-f]{64}")
REF_PREFIX_LEN = 12
TYPES = ("text", "json", "jsonl", "binary")
PUBLIC_FIELDS = (
    "kind",
    "session_id",
    "name",
    "type",
    "length",
    "lines",
    "bytes",
    "repr_preview",
    "sha256",
    "ref",
    "exit_status",
    "incomplete",
)
PREVIEW_CHARS = 72

_CARD_FIELDS = (
    ("session_id", str),
    ("name", str),
    ("type", str),
    ("length", int),
    ("lines", int),
    ("bytes", int),
    ("sha256", str),
    ("xxh3", str),
)


# --- names and references -------------------------------------------------------------------


def validate_name(name: str, what: str = "name") -> str:
    """Return NAME if it is a valid handle name or session (else UsageError, exit 2).

    Valid: ``[A-Za-z0-9][A-Za-z0-9._-]{0,127}`` -- no ``/``, no ``..`` at the start, at most
    128 characters, so a name can never point outside the store.
    """
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        shown = name if isinstance(name, str) and len(name) <= 40 else f"{str(name)[:40]}..."
        reason = "empty" if name == "" else "invalid"
        if isinstance(name, str) and len(name) > 128:
            reason = f"too long ({len(name)} characters, at most 128)"
        quoted = quote_name(shown)  # (a byte that is not UTF-8, a control character)
        raise UsageError(
            f"{reason} {what} {quoted if quoted != shown else repr(shown)}",
            hint=f"a {what} is 1-128 of A-Z a-z 0-9 . _ - and starts with a letter or digit",
        )
    return name


def validate_session(session: str) -> str:
    return validate_name(session, "session")


def validate_type(type_: str | None) -> None:
    """UsageError unless TYPE_ is None (detect it) or one of ``TYPES``."""
    if type_ is not None and type_ not in TYPES:
        raise UsageError(f"unknown type {type_!r}", hint="one of: " + ", ".join(TYPES))


@dataclass(frozen=True)
class Ref:
    """A parsed reference: ``[ctx:][SESSION/]NAME[@SHA_PREFIX]``."""

    session: str
    name: str
    sha_prefix: str | None = None

    def __str__(self) -> str:
        at = f"@{self.sha_prefix}" if self.sha_prefix else ""
        return f"ctx:{self.session}/{self.name}{at}"


def parse_ref(ref: str, session: str = DEFAULT_SESSION) -> Ref:
    """Parse ``[ctx:][SESSION/]NAME[@SHA_PREFIX]``; SESSION defaults to ``session``.

    Raises UsageError (exit 2) for anything else: more than one ``/``, a bad name or
    session, a prefix that is not 4-64 lowercase hex digits.
    """
    if not isinstance(ref, str) or not ref.strip():
        raise UsageError("empty handle reference", hint="give [ctx:][SESSION/]NAME[@SHA]")
    text = ref.strip()
    if text.startswith("ctx:"):
        text = text[4:]
    sha = None
    if "@" in text:
        text, sha = text.rsplit("@", 1)
        sha = sha.lower()
        if not SHA_PREFIX_RE.fullmatch(sha):
            raise UsageError(
                f"bad handle reference {ref!r}: @{sha} is not a 4-64 digit hex SHA-256 prefix"
            )
    parts = text.split("/")
    if len(parts) == 1:
        sess, name = session, parts[0]
    elif len(parts) == 2:
        sess, name = parts
    else:
        raise UsageError(
            f"bad handle reference {ref!r}", hint="give [ctx:][SESSION/]NAME[@SHA_PREFIX]"
        )
    validate_session(sess)
    validate_name(name)
    return Ref(sess, name, sha)


# --- cards ----------------------------------------------------------------------------------


def public_card(record: dict) -> dict:
    """The card as printed: the public fields in their documented order."""
    return {k: record[k] for k in PUBLIC_FIELDS if k in record}


def looks_like_card(obj: object) -> bool:
    return (
        isinstance(obj, dict)
        and obj.get("kind") == "handle"
        and isinstance(obj.get("ref") or obj.get("name"), str)
    )


def card_ref(card: dict) -> str:
    """The reference a card stands for (its ``ref``, else session/name@sha)."""
    if isinstance(card.get("ref"), str):
        return card["ref"]
    for key in ("session_id", "sha256"):  # hand-made cards: {"sha256": 5} was a TypeError
        if card.get(key) is not None and not isinstance(card[key], str):
            raise UsageError(
                f'the handle card\'s "{key}" is not a string',
                hint="give the card ctx-stash printed, or the handle's name",
            )
    sess = card.get("session_id") or DEFAULT_SESSION
    sha = card.get("sha256") or ""
    at = f"@{sha[:REF_PREFIX_LEN]}" if sha else ""
    return f"ctx:{sess}/{card['name']}{at}"


# Bytes of a payload's head that the preview's redaction reads: a secret that begins in the
# preview's first characters is whole in them (the longest token format is a few hundred).
PREVIEW_READ = 1024


def make_preview(head: bytes, chars: int = PREVIEW_CHARS) -> str:
    """The card's glimpse of a payload: its first CHARS characters, each whitespace run as
    one space. The card is what a model reads of a stored log, so a secret there (a token in
    an ``env`` dump, the BEGIN line and first base64 lines of a key) is replaced by its
    marker first, on the head's own lines: the rules need them, and cutting first would
    leave the head of a token that no rule matches any more."""
    from ctxtools.secrets.scan import redact

    text = head[: max(PREVIEW_READ, chars * 4 + 16)].decode("utf-8", "replace")
    text = " ".join(redact(text)[0].split())
    if len(text) > chars:
        return text[:chars].rstrip() + "\u2026"
    return text


def make_record(
    ix: Indexer,
    detected: str,
    name: str | None,
    session: str,
    exit_status: int | None,
    now: float,
    incomplete: str | None = None,
) -> dict:
    """The stored record (public card plus private fields) of a payload indexed by IX;
    INCOMPLETE (why it is not the whole output, e.g. ``"SIGINT"``) only when given."""
    sha = ix.sha256
    name = name or sha[:REF_PREFIX_LEN]
    record = {
        "kind": "handle",
        "session_id": session,
        "name": name,
        "type": detected,
        "length": ix.chars,
        "lines": ix.lines,
        "bytes": ix.size,
        "repr_preview": make_preview(bytes(ix.head)),
        "sha256": sha,
        "ref": f"ctx:{session}/{name}@{sha[:REF_PREFIX_LEN]}",
    }
    if exit_status is not None:
        record["exit_status"] = int(exit_status)
    if incomplete is not None:
        record["incomplete"] = str(incomplete)
    record["xxh3"] = ix.xxh3
    record["created_at"] = round(now, 3)
    return record


def card_bytes(record: dict) -> bytes:
    """A card record as its file holds it: one JSON line."""
    import orjson

    return orjson.dumps(record) + b"\n"


def card_problem(record: object, session: str, name: str) -> str | None:
    """What is wrong with a stored card record (None: nothing)."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for key, kind in _CARD_FIELDS:
        value = record.get(key)
        if value is None:
            return f"no {key!r} field"
        if not isinstance(value, kind) or (kind is int and (value < 0 or value is True)):
            return f"bad {key!r} field"
    if not SHA256_RE.fullmatch(record["sha256"]):
        return "its sha256 is not 64 hex digits"
    if record["type"] not in TYPES:
        return f"unknown type {record['type']!r}"
    if (record["session_id"], record["name"]) != (session, name):
        return "it names another handle"
    return None


def card_sha(data: bytes) -> str | None:
    """The sha256 a (damaged) card file's bytes DATA name, when they name a valid one."""
    import orjson

    try:
        rec = orjson.loads(data)
    except ValueError:
        return None
    sha = rec.get("sha256") if isinstance(rec, dict) else None
    return sha if isinstance(sha, str) and SHA256_RE.fullmatch(sha) else None
