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

import re
from dataclasses import dataclass
from typing import Any

from ctxtools.errors import InputError, UsageError

DIALECTS = ("rfc9535", "ng")


# Descendant queries recurse once a level: allow what the JSON parser allows (orjson
# stops at 1,024 levels), with the interpreter's stack raised to match while a query runs.
MAX_DEPTH = 1100
STACK_FRAMES = 20_000
MAX_SEGMENTS = 10_000  # a query's segments (.a, [0], ..b): the engine nests one a segment


class JSONPathError(InputError):
    """An invalid JSONPath query (exit 1)."""


SHOWN_CHARS = 200  # a query longer than this is shown by its head and its length


def _shown(expr: str) -> str:
    """EXPR as an error line quotes it: whole up to ``SHOWN_CHARS``, else its head (a 60 KB
    query made a 60 KB error line)."""
    if len(expr) <= SHOWN_CHARS:
        return repr(expr)
    return f"{expr[: SHOWN_CHARS // 2]!r}… ({len(expr):,} characters)"


def _too_deep(expr: str) -> InputError:
    return InputError(
        f"the document is nested too deeply for JSONPath {_shown(expr)} (more than {MAX_DEPTH} "
        "levels, or more than the engine can follow)",
        hint="query a part of it, e.g. $.key or $[0], instead of a descendant (..) query",
    )


_ENV: Any = None


def _rfc_env() -> Any:
    global _ENV
    if _ENV is None:
        import sys

        from jsonpath_rfc9535 import JSONPathEnvironment, JSONPathSyntaxError
        from jsonpath_rfc9535.filter_expressions import IntegerLiteral
        from jsonpath_rfc9535.parse import Parser

        class _Parser(Parser):
            def parse_integer_literal(self, stream: Any) -> Any:
                """An integer literal of digits as it is written: the library reads it
                through a double, and a document's integers are read exact."""
                text = stream.current.value
                if _PLAIN_INT.fullmatch(text) is None:  # an exponent, or not valid
                    return super().parse_integer_literal(stream)
                try:
                    return IntegerLiteral(stream.current, value=int(text))
                except ValueError:  # past the interpreter's limit: quadratic to convert
                    most = sys.get_int_max_str_digits()
                    raise JSONPathSyntaxError(
                        f"an integer literal of more than {most:,} digits", token=stream.current
                    ) from None

        class _Env(JSONPathEnvironment):
            max_recursion_depth = MAX_DEPTH
            parser_class = _Parser

        _ENV = _Env()
    return _ENV


_PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")


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
        return JSONPathError(f"invalid JSONPath {_shown(expr)} at column {index + 1}: {msg}")
    return JSONPathError(f"invalid JSONPath {_shown(expr)}: {msg}")


def compile_query(expr: str, dialect: str = "rfc9535") -> Any:
    """A compiled query (raises JSONPathError for an invalid one)."""
    if dialect not in DIALECTS:
        raise UsageError(f"unknown JSONPath dialect {dialect!r}", hint="rfc9535 or ng")
    if dialect == "rfc9535":
        import jsonpath_rfc9535

        try:
            compiled = _rfc_env().compile(expr)
        except jsonpath_rfc9535.JSONPathError as exc:
            raise _rfc_error(expr, exc) from None
        except OverflowError:
            raise JSONPathError(
                f"invalid JSONPath {_shown(expr)}: a number is out of range (not finite)"
            ) from None
        except RecursionError:
            raise JSONPathError(
                f"JSONPath {_shown(expr)} nests (brackets, ! or functions) more deeply than "
                "the parser follows"
            ) from None
        except ValueError as exc:
            raise JSONPathError(f"invalid JSONPath {_shown(expr)}: {exc}") from None
        if len(compiled.segments) > MAX_SEGMENTS:  # (each one a level the engine follows)
            raise JSONPathError(
                f"JSONPath {_shown(expr)} has {len(compiled.segments):,} segments, more than "
                f"the {MAX_SEGMENTS:,} a query may have"
            )
        return compiled
    from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
    from jsonpath_ng.ext import parse

    try:
        return parse(expr)
    except (JsonPathLexerError, JsonPathParserError, Exception) as exc:  # noqa: BLE001
        text = " ".join(str(exc).split())
        raise JSONPathError(f"invalid JSONPath {_shown(expr)} (jsonpath-ng): {text}") from None


def query(doc: Any, expr: str, dialect: str = "rfc9535") -> list[Match]:
    """The matches of EXPR in DOC, in the engine's document order."""
    import sys

    compiled = compile_query(expr, dialect)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, STACK_FRAMES))
    try:
        return _query(compiled, doc, expr, dialect)
    except RecursionError:
        raise _too_deep(expr) from None
    finally:
        sys.setrecursionlimit(limit)


def _query(compiled: Any, doc: Any, expr: str, dialect: str) -> list[Match]:
    if dialect == "rfc9535":
        import jsonpath_rfc9535

        try:
            nodes = compiled.find(doc)
            return [Match(node.path(), node.value) for node in nodes]
        except jsonpath_rfc9535.JSONPathRecursionError:
            raise _too_deep(expr) from None  # the data's depth, not the query's fault
        except jsonpath_rfc9535.JSONPathError as exc:
            raise _rfc_error(expr, exc) from None
    try:
        found = compiled.find(doc)
        return [Match(str(m.full_path), m.value) for m in found]
    except RecursionError:
        raise
    except Exception as exc:  # noqa: BLE001 - jsonpath-ng raises bare exceptions at run time
        raise JSONPathError(f"JSONPath {_shown(expr)} failed (jsonpath-ng): {exc}") from None
