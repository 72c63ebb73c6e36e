"""What each tree-sitter language declares: per node type, a handler that emits the
definitions it makes and says which of its children to walk (a class body, a namespace),
plus the containers walked through (preprocessor branches, ``ERROR`` nodes), the literal
node types blanked before references are counted, and the leading children a signature
skips (attributes, annotations, comments).

Only top-level and class-level definitions are reported, as the hand scanners do: no
function body is ever entered. A function in a class scope is a method.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxtools.source.scan.treesitter import scope_join


@dataclass(frozen=True)
class Rules:
    handlers: dict
    containers: frozenset
    literals: tuple
    keywords: frozenset = frozenset()
    leading: frozenset = frozenset()
    # the bytes to parse, from the source's (same length: offsets and lines kept)
    prepare: object = None
    # the (start, end) byte spans of the source the parser skips, in order (function
    # bodies: their text is never walked); None to parse it all
    skip: object = None
    # a pattern of the comments and literals, dropped before references are counted
    # (instead of the grammar's literal nodes: faster where the syntax is simple)
    strip: object = None


def _name(w, node, fieldname: str = "name"):
    n = node.child_by_field_name(fieldname)
    return (w.text(n), n) if n is not None else ("", None)


def _fn_kind(scope, in_class) -> str:
    return "method" if in_class or scope else "function"


def _keyword(node, words) -> str | None:
    """The first anonymous child of NODE that is one of WORDS (``class``, ``interface``)."""
    for c in node.children:
        if not c.is_named and c.type in words:
            return c.type
    return None


def named_type(kind: str, body_field: str | None = "body", name_field: str = "name"):
    """A handler for a declaration named by a field, whose body (if any) holds members."""

    def handle(w, node, scope, in_class):
        name, nn = _name(w, node, name_field)
        if nn is None:
            return
        name = name.rsplit("::", 1)[-1].rsplit(".", 1)[-1].rsplit("\\", 1)[-1]
        body = node.child_by_field_name(body_field) if body_field else None
        w.emit(kind, name, nn, node, scope, body)
        if body is not None:
            w.visit(body, scope_join(scope, name), True)

    return handle


def function(name_field: str = "name", body_field: str = "body"):
    def handle(w, node, scope, in_class):
        name, nn = _name(w, node, name_field)
        w.emit(
            _fn_kind(scope, in_class), name, nn, node, scope, node.child_by_field_name(body_field)
        )

    return handle


def method(name_field: str = "name", body_field: str = "body"):
    def handle(w, node, scope, in_class):
        name, nn = _name(w, node, name_field)
        w.emit("method", name, nn, node, scope, node.child_by_field_name(body_field))

    return handle


def walk_body(body_field: str = "body"):
    """A namespace-like node: its body is walked, in the same scope."""

    def handle(w, node, scope, in_class):
        body = node.child_by_field_name(body_field)
        if body is not None:
            w.visit(body, scope, in_class)

    return handle


def walk_children(w, node, scope, in_class):
    w.visit(node, scope, in_class)


def top_import(spec_of):
    """An import statement: SPEC_OF(w, node) is its import string (or None)."""

    def handle(w, node, scope, in_class):
        if scope is None:
            spec = spec_of(w, node)
            if spec:
                w.imports.append(spec)

    return handle


def _text_after_keyword(w, node) -> str | None:
    """``import a.b.C`` / ``using A.B;``: the named children's text."""
    named = [c for c in node.named_children if c.type not in ("comment", "modifiers")]
    if not named:
        return None
    return w.text(named[0]).strip().rstrip(";").replace("\\", "/")
