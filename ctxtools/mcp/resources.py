"""Handles as MCP resources: ``ctx://SESSION/NAME``, listed and readable.

A resource read is a ``read`` call: ``ctx://default/tests`` shows the handle from the top,
capped at 12,000 characters with the next call when cut; a query string picks a
projection as the read tool's arguments do (``ctx://default/tests?range=120-180``,
``?grep=FAILED&context=3``), and ``@SHA`` after the name pins the version
(``ctx://default/tests@3fa1c2d4e5f6``; stale once the name is re-stashed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote, urlsplit

from ctxtools.errors import UsageError

if TYPE_CHECKING:
    from ctxtools.mcp.env import Env

SCHEME = "ctx"
TEMPLATE = "ctx://{session}/{name}"
MIME = {"json": "application/json", "jsonl": "application/jsonl", "text": "text/plain"}


def uri_of(session: str, name: str) -> str:
    return f"{SCHEME}://{session}/{name}"


def listing(env: Env) -> list[dict]:
    """The server session's handles as resources: uri, name, description, mime_type, size."""
    out = []
    for rec in env.store.records(env.session):
        sha = rec["sha256"][:12]
        out.append(
            {
                "uri": uri_of(rec["session_id"], rec["name"]),
                "name": rec["name"],
                "description": f"{rec['type']}, {rec['length']:,} chars, {rec['lines']:,} "
                f"lines; ref ctx:{rec['session_id']}/{rec['name']}@{sha}",
                "mime_type": MIME.get(rec["type"], "text/plain"),
                "size": rec["bytes"],
            }
        )
    return out


def _value(key: str, text: str, kind: str):
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise UsageError(f"resource: {key}={text!r} is not a whole number") from None
    if kind == "boolean":
        return text.lower() in ("", "1", "true", "yes")
    return text


def read_args(uri: str) -> dict:
    """The read tool's arguments for URI (``ctx://SESSION/NAME[@SHA][?ARG=VALUE&...]``)."""
    from ctxtools.mcp.schema import TOOLS

    parts = urlsplit(uri)
    if parts.scheme != SCHEME or not parts.netloc or not parts.path.strip("/"):
        raise UsageError(f"not a handle resource: {uri}", hint=f"give {TEMPLATE}")
    ref = f"ctx:{unquote(parts.netloc)}/{unquote(parts.path.strip('/'))}"
    props = TOOLS["read"]["properties"]
    args: dict = {"ref": ref}
    for key, text in parse_qsl(parts.query, keep_blank_values=True):
        if key not in props or key == "ref":
            raise UsageError(f"resource: unknown argument {key!r}", hint="read's arguments")
        args[key] = _value(key, text, props[key]["type"])
    return args


def mime_of(env: Env, args: dict) -> str:
    """The MIME type of what a read with ARGS shows."""
    if args.get("count") or args.get("introspect") or args.get("jsonpath"):
        return "application/json"
    return "text/plain"
