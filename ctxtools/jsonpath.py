"""JSONPath for ``ctx-read --jsonpath``: RFC 9535 by default, jsonpath-ng on request.

* ``rfc9535`` (default) -- the ``jsonpath_rfc9535`` package, which passes the whole
  JSONPath Compliance Test Suite: filters (``$.tests[?@.outcome == 'failed'].name``),
  functions (``length``, ``count``, ``match``, ``search``, ``value``), slices, descendants.
  Paths are RFC 9535 normalized paths (``$['tests'][3]['name']``).
* ``ng`` -- ``jsonpath_ng.ext``, for users of its own syntax and extensions (arithmetic,
  ``len``, sorting). It is not RFC 9535: it rejects some valid queries and accepts invalid
  ones. Paths are jsonpath-ng's ``full_path`` text.

Both engines are imported only when a query runs. Errors are ``InputError`` (exit 1) with a
one-line message naming the position of the error in the query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxtools.errors import InputError, UsageError

DIALECTS = ("rfc9535", "ng")


class JSONPathError(InputError):
    """An invalid JSONPath query (exit 1)."""


@dataclass(frozen=True)
class Match:
    path: str
    value: Any


def _rfc_error(expr: str, exc: Exception) -> JSONPathError:
    token = getattr(exc, "token", None)
    msg = getattr(exc, "message", None) or (exc.args[0] if exc.args else str(exc))
    msg = str(msg)
    # The library appends ", line 1, column N" (0-based); we give a 1-based column once.
    cut = msg.rfind(", line ")
    if cut > 0:
        msg = msg[:cut]
    index = getattr(token, "index", None)
    if isinstance(index, int):
        return JSONPathError(f"invalid JSONPath {expr!r} at column {index + 1}: {msg}")
    return JSONPathError(f"invalid JSONPath {expr!r}: {msg}")


def compile_query(expr: str, dialect: str = "rfc9535") -> Any:
    """A compiled query (raises JSONPathError for an invalid one)."""
    if dialect not in DIALECTS:
        raise UsageError(f"unknown JSONPath dialect {dialect!r}", hint="rfc9535 or ng")
    if dialect == "rfc9535":
        import jsonpath_rfc9535

        try:
            return jsonpath_rfc9535.compile(expr)
        except jsonpath_rfc9535.JSONPathError as exc:
            raise _rfc_error(expr, exc) from None
        except (RecursionError, ValueError) as exc:
            raise JSONPathError(f"invalid JSONPath {expr!r}: {exc}") from None
    from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
    from jsonpath_ng.ext import parse

    try:
        return parse(expr)
    except (JsonPathLexerError, JsonPathParserError, Exception) as exc:  # noqa: BLE001
        text = " ".join(str(exc).split())
        raise JSONPathError(f"invalid JSONPath {expr!r} (jsonpath-ng): {text}") from None


def query(doc: Any, expr: str, dialect: str = "rfc9535") -> list[Match]:
    """The matches of EXPR in DOC, in the engine's document order."""
    compiled = compile_query(expr, dialect)
    if dialect == "rfc9535":
        import jsonpath_rfc9535

        try:
            nodes = compiled.find(doc)
        except jsonpath_rfc9535.JSONPathError as exc:
            raise _rfc_error(expr, exc) from None
        return [Match(node.path(), node.value) for node in nodes]
    try:
        found = compiled.find(doc)
    except Exception as exc:  # noqa: BLE001 - jsonpath-ng raises bare exceptions at run time
        raise JSONPathError(f"JSONPath {expr!r} failed (jsonpath-ng): {exc}") from None
    return [Match(str(m.full_path), m.value) for m in found]
