"""C#, Ruby, PHP, Kotlin, Swift, Scala, Lua and Bash for the tree-sitter backend.

Types (classes, structs, interfaces, traits, enums, records, objects, modules, protocols,
extensions) with their methods scoped by the enclosing type's dotted name; top-level
functions; type aliases; file-level constants and variables where the language has them
(Ruby constants, Kotlin and Swift top-level properties, Scala package-level vals). Fields
and properties of a type are not definitions (as in the other scanners)."""

from __future__ import annotations

from ctxtools.source.scan.common import collapse
from ctxtools.source.scan.treesitter import scope_join
from ctxtools.source.scan.tsprep_kt import kotlin_prepare
from ctxtools.source.scan.tsrules import (
    Rules,
    _keyword,
    _name,
    _text_after_keyword,
    function,
    method,
    named_type,
    top_import,
    walk_body,
    walk_children,
)

# --- C# --------------------------------------------------------------------------------------


def _cs_delegate(w, node, scope, in_class):
    name, nn = _name(w, node)
    w.emit("type", name, nn, node, scope)


def _cs_operator(w, node, scope, in_class):
    """``operator ==(A a, A b)``, ``implicit operator JToken(bool value)``: a method named
    as Universal Ctags names it, ``operator`` and the operator or the target type, on the
    line of the ``operator`` keyword."""
    field = "operator" if node.type == "operator_declaration" else "type"
    target = node.child_by_field_name(field)
    keyword = next((c for c in node.children if c.type == "operator" and not c.is_named), None)
    if target is None or keyword is None:
        return
    name = "operator " + collapse(w.text(target))
    w.emit("method", name, keyword, node, scope, node.child_by_field_name("body"))


def _cs_using(w, node) -> str | None:
    """``using System.IO;``, ``using static System.Math;``; an alias ``using Assert =
    Newtonsoft.Json.Tests.XUnitAssert;`` imports what follows its ``=``, not its name."""
    alias = node.child_by_field_name("name")
    if alias is None:
        return _text_after_keyword(w, node)
    named = [c for c in node.named_children if c.type != "comment"]
    if len(named) < 2:
        return None
    target = w.text(named[-1]).strip()
    # a use of the alias is a use of its target (309 Newtonsoft tests name ``Assert``)
    w.aliases[w.text(alias)] = target.split("<", 1)[0].rsplit(".", 1)[-1]
    return target


def csharp() -> Rules:
    handlers = {
        "namespace_declaration": walk_body(),
        "file_scoped_namespace_declaration": walk_children,
        "class_declaration": named_type("class"),
        "struct_declaration": named_type("struct"),
        "record_declaration": named_type("class"),
        "record_struct_declaration": named_type("struct"),
        "interface_declaration": named_type("interface"),
        "enum_declaration": named_type("enum", None),
        "delegate_declaration": _cs_delegate,
        "method_declaration": method(),
        "constructor_declaration": method(),
        "destructor_declaration": method(),
        "operator_declaration": _cs_operator,
        "conversion_operator_declaration": _cs_operator,
        "using_directive": top_import(_cs_using),
    }
    return Rules(
        handlers,
        # every branch of #if/#elif/#else, as in C (ctags 5.9 reads only the first)
        frozenset(
            {"declaration_list", "ERROR", "preproc_if", "preproc_elif", "preproc_else"}
            | {"preproc_region"}
        ),
        (
            "comment",
            "string_literal",
            "verbatim_string_literal",
            "raw_string_literal",
            "interpolated_string_expression",
            "character_literal",
        ),  # fmt: skip
        leading=frozenset({"attribute_list", "comment"}),
    )


# --- Ruby ------------------------------------------------------------------------------------


def _rb_type(kind):
    def handle(w, node, scope, in_class):
        nn = node.child_by_field_name("name")
        if nn is None:
            return
        full = w.text(nn).replace("::", ".")
        name = full.rsplit(".", 1)[-1]
        name_node = nn.child_by_field_name("name") if nn.type == "scope_resolution" else nn
        body = node.child_by_field_name("body")
        sup = node.child_by_field_name("superclass")
        end = (sup or nn).end_byte  # class A < B: no comment, no body after it
        w.emit(kind, name, name_node or nn, node, scope, sig_end=end)
        if body is not None:
            w.visit(body, scope_join(scope, full), True)

    return handle


def _line_end(w, node) -> int:
    nl = w.src.find(b"\n", node.end_byte)
    return nl if nl >= 0 else len(w.src)


def _rb_method(w, node, scope, in_class):
    name, nn = _name(w, node)
    params = node.child_by_field_name("parameters")
    end = params.end_byte if params is not None else (nn.end_byte if nn is not None else None)
    w.emit(_kind(scope, in_class), name, nn, node, scope, sig_end=end)


def _kind(scope, in_class):
    return "method" if in_class or scope else "function"


def _rb_singleton_class(w, node, scope, in_class):
    body = node.child_by_field_name("body")
    if body is not None:
        w.visit(body, scope, True)


def _rb_assignment(w, node, scope, in_class):
    left = node.child_by_field_name("left")
    if left is not None and left.type == "constant":
        w.emit("const", w.text(left), left, node, scope, sig_end=_line_end(w, left))


def _rb_call(w, node, scope, in_class):
    """``require "x"`` / ``require_relative "x"`` at any level: an import."""
    block = node.child_by_field_name("block")
    if block is not None:  # configure do ... end, Class.new do def x ... end: walked
        body = block.child_by_field_name("body")
        if body is not None:
            w.visit(body, scope, in_class)
    m = node.child_by_field_name("method")
    if m is None or node.child_by_field_name("receiver") is not None:
        return
    if w.text(m) not in ("require", "require_relative", "load"):
        return
    args = node.child_by_field_name("arguments")
    if args is None:
        return
    for a in args.named_children:
        if a.type == "string":
            spec = w.text(a).strip("'\"")
            w.imports.append(spec[:-3] if spec.endswith(".rb") else spec)


def ruby() -> Rules:
    handlers = {
        "class": _rb_type("class"),
        "module": _rb_type("class"),
        "method": _rb_method,
        "singleton_method": _rb_method,
        "singleton_class": _rb_singleton_class,
        "assignment": _rb_assignment,
        "call": _rb_call,
    }
    return Rules(
        handlers,
        frozenset(
            {
                "body_statement",
                "ERROR",
                "begin_block",
                "end_block",
                "if",
                "unless",
                "then",
                "else",
                "elsif",
                "begin",
            }
        ),  # fmt: skip
        (
            "comment",
            "string",
            "heredoc_body",
            "symbol",
            "simple_symbol",
            "regex",
            "string_array",
            "symbol_array",
            "subshell",
        ),  # fmt: skip
    )


# --- PHP -------------------------------------------------------------------------------------


def _php_namespace(w, node, scope, in_class):
    body = node.child_by_field_name("body")
    if body is not None:
        w.visit(body, scope, in_class)


def _php_use(w, node):
    for clause in node.named_children:
        if clause.type == "namespace_use_clause":
            named = [c for c in clause.named_children if c.type != "namespace_aliasing_clause"]
            if named:
                w.imports.append(w.text(named[0]).lstrip("\\").replace("\\", "/"))
    return None


def php() -> Rules:
    handlers = {
        "namespace_definition": _php_namespace,
        "class_declaration": named_type("class"),
        "interface_declaration": named_type("interface"),
        "trait_declaration": named_type("trait"),
        "enum_declaration": named_type("enum"),
        "function_definition": function(),
        "method_declaration": method(),
        "namespace_use_declaration": top_import(_php_use),
    }
    return Rules(
        handlers,
        frozenset(
            {
                "compound_statement",
                "declaration_list",
                "ERROR",
                "if_statement",
                "else_clause",
                "colon_block",
            }
        ),  # fmt: skip
        ("comment", "string", "encapsed_string", "heredoc", "nowdoc", "text"),
        leading=frozenset({"attribute_list", "comment"}),
    )


# --- Kotlin ----------------------------------------------------------------------------------

_KT_KINDS = {"interface": "interface", "enum": "enum"}


def _kt_class(w, node, scope, in_class):
    name, nn = _name(w, node)
    if nn is None:
        return
    kw = _keyword(node, ("interface", "enum"))
    kind = _KT_KINDS.get(kw or "", "class")
    if kind == "class" and _modifier(w, node, "enum"):
        kind = "enum"
    body = _body(node, ("class_body", "enum_class_body"))
    w.emit(kind, name, nn, node, scope, body)
    if body is not None:
        w.visit(body, scope_join(scope, name), True)


def _modifier(w, node, word: str) -> bool:
    for c in node.named_children:
        if c.type == "modifiers":
            return word in w.text(c).split()
    return False


def _body(node, types):
    for c in node.named_children:
        if c.type in types:
            return c
    return None


def _kt_function(w, node, scope, in_class):
    name, nn = _name(w, node)
    body = _body(node, ("function_body",))
    w.emit(_kind(scope, in_class), name, nn, node, scope, body)


def _kt_companion(w, node, scope, in_class):
    nn = node.child_by_field_name("name") or _body(node, ("identifier", "type_identifier"))
    name = w.text(nn) if nn is not None else "Companion"
    body = _body(node, ("class_body",))
    if nn is None:  # on the keyword's line, not on an annotation's above it
        nn = next((c for c in node.children if c.type in ("companion", "object")), None)
    w.emit("class", name, nn, node, scope, body)
    if body is not None:
        w.visit(body, scope_join(scope, name), True)


def _kt_property(w, node, scope, in_class):
    if in_class:
        return
    for c in node.named_children:
        if c.type == "variable_declaration":
            ident = _body(c, ("identifier", "simple_identifier"))
            if ident is not None:
                kind = "const" if _modifier(w, node, "const") else "variable"
                w.emit(kind, w.text(ident), ident, node, scope, sig_end=_value_start(node, c))
            return


def _value_start(node, decl):
    """Where a property's initializer or accessors start (the signature stops there)."""
    after = False
    for c in node.children:
        if after and c.is_named and c.type not in ("user_type", "nullable_type", "type"):
            return c.start_byte
        if c.id == decl.id:
            after = True
    return None


def _kt_alias(w, node, scope, in_class):
    nn = node.child_by_field_name("type") or _body(node, ("identifier", "type_identifier"))
    if nn is not None:
        w.emit("type", w.text(nn), nn, node, scope)


def kotlin() -> Rules:
    handlers = {
        "class_declaration": _kt_class,
        "object_declaration": _kt_class,
        "companion_object": _kt_companion,
        "function_declaration": _kt_function,
        "property_declaration": _kt_property,
        "type_alias": _kt_alias,
        "import": top_import(_text_after_keyword),
    }
    return Rules(
        handlers,
        frozenset({"ERROR", "statements"}),
        (
            "line_comment",
            "block_comment",
            "comment",
            "multiline_comment",
            "string_literal",
            "character_literal",
            "multiline_string_literal",
        ),  # fmt: skip
        leading=frozenset({"line_comment", "block_comment"}),
        prepare=kotlin_prepare,
    )


# --- Swift -----------------------------------------------------------------------------------

_SWIFT_KINDS = {
    "class": "class",
    "struct": "struct",
    "enum": "enum",
    "extension": "impl",
    "actor": "class",
}


def _swift_class(w, node, scope, in_class):
    nn = node.child_by_field_name("name")
    if nn is None:
        return
    kind = _SWIFT_KINDS.get(_keyword(node, tuple(_SWIFT_KINDS)) or "", "class")
    name = w.text(nn).split("<", 1)[0].strip()
    body = node.child_by_field_name("body")
    w.emit(kind, name.rsplit(".", 1)[-1], nn, node, scope, body)
    if body is not None:
        w.visit(body, scope_join(scope, name), True)


def _swift_property(w, node, scope, in_class):
    if in_class:
        return
    pattern = node.child_by_field_name("name")
    if pattern is None:
        return
    ident = pattern.child_by_field_name("bound_identifier") or pattern
    value = node.child_by_field_name("value") or node.child_by_field_name("computed_value")
    w.emit("variable", w.text(ident), ident, node, scope,
           sig_end=value.start_byte if value is not None else None)  # fmt: skip


def _swift_init(w, node, scope, in_class):
    w.emit("method", "init", None, node, scope, node.child_by_field_name("body"))


def swift() -> Rules:
    handlers = {
        "class_declaration": _swift_class,
        "protocol_declaration": named_type("interface"),
        "function_declaration": function(),
        "protocol_function_declaration": method(),
        "init_declaration": _swift_init,
        "property_declaration": _swift_property,
        "typealias_declaration": _alias_named,
        "import_declaration": top_import(_text_after_keyword),
    }
    return Rules(
        handlers,
        frozenset({"class_body", "enum_class_body", "protocol_body", "ERROR", "statements"}),
        (
            "comment",
            "multiline_comment",
            "line_string_literal",
            "multi_line_string_literal",
            "raw_string_literal",
        ),  # fmt: skip
        leading=frozenset({"modifiers", "attribute", "comment", "multiline_comment"}),
    )


def _alias_named(w, node, scope, in_class):
    name, nn = _name(w, node)
    w.emit("type", name, nn, node, scope)


# --- Scala -----------------------------------------------------------------------------------


def _scala_val(w, node, scope, in_class):
    if in_class:
        return
    pattern = node.child_by_field_name("pattern")
    if pattern is not None and pattern.type == "identifier":
        value = node.child_by_field_name("value")
        w.emit("variable", w.text(pattern), pattern, node, scope,
               sig_end=value.start_byte if value is not None else None)  # fmt: skip


def _scala_import(w, node):
    return w.text(node).removeprefix("import").strip()


def scala() -> Rules:
    handlers = {
        "class_definition": named_type("class"),
        "object_definition": named_type("class"),
        "trait_definition": named_type("trait"),
        "enum_definition": named_type("enum"),
        "function_definition": function(),
        "function_declaration": function(),
        "val_definition": _scala_val,
        "var_definition": _scala_val,
        "type_definition": _alias_named,
        "package_clause": walk_body(),
        "package_object": named_type("class"),
        "import_declaration": top_import(_scala_import),
    }
    return Rules(
        handlers,
        frozenset({"template_body", "enum_body", "ERROR"}),
        (
            "comment",
            "block_comment",
            "string",
            "interpolated_string_expression",
            "character_literal",
        ),  # fmt: skip
        leading=frozenset({"annotation", "comment", "block_comment"}),
        keywords=_TYPE_VARIABLES,
    )


# A one-letter capital in Scala is a type parameter (``[A]``, ``F[_]``), used in nearly
# every file: counted as a reference, it tied each file to the few that define a member
# of that name (cats: ``implicit def A: Semigroup[A]``, ``type A = A0``), and those files
# led the map. It is no reference (the definitions stay).
_TYPE_VARIABLES = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


# --- Lua -------------------------------------------------------------------------------------


def _lua_function(w, node, scope, in_class):
    nn = node.child_by_field_name("name")
    if nn is None:
        return
    if nn.type == "identifier":
        w.emit("function", w.text(nn), nn, node, None, node.child_by_field_name("body"))
        return
    key = nn.child_by_field_name("field") or nn.child_by_field_name("method")
    table = nn.child_by_field_name("table")
    if key is None or table is None:
        return
    w.emit("method", w.text(key), key, node, w.text(table).replace(":", "."),
           node.child_by_field_name("body"))  # fmt: skip


def _lua_assignment(w, node, scope, in_class):
    """``M.f = function (...) end`` (a method of M), ``f = function`` (a function)."""
    names = node.child_by_field_name("variable_list") or _body(node, ("variable_list",))
    values = _body(node, ("expression_list",))
    if names is None or values is None:
        return
    targets = names.named_children
    for target, value in zip(targets, values.named_children, strict=False):
        if value.type != "function_definition":
            continue
        if target.type == "identifier":
            w.emit("function", w.text(target), target, node, None, value)
        elif target.type == "dot_index_expression":
            key = target.child_by_field_name("field")
            table = target.child_by_field_name("table")
            if key is not None and table is not None:
                w.emit("method", w.text(key), key, node, w.text(table), value)


def _lua_require(w, node, scope, in_class):
    """``local x = require("a.b")``: an import, never a definition."""
    for call in _descendants(node, "function_call", 3):
        callee = call.child_by_field_name("name")
        if callee is not None and w.text(callee) == "require":
            args = call.child_by_field_name("arguments")
            if args is not None:
                for a in args.named_children:
                    if a.type == "string":
                        w.imports.append(w.text(a).strip("'\"[]="))


def _descendants(node, kind, depth):
    out = []
    for c in node.named_children:
        if c.type == kind:
            out.append(c)
        elif depth:
            out.extend(_descendants(c, kind, depth - 1))
    return out


def lua() -> Rules:
    handlers = {
        "function_declaration": _lua_function,
        "variable_declaration": _lua_require,
        "assignment_statement": _lua_assignment,
    }
    containers = {"ERROR", "do_statement", "if_statement", "else_statement",
                  "elseif_statement", "block"}  # fmt: skip
    return Rules(handlers, frozenset(containers), ("comment", "string"))


# --- Bash ------------------------------------------------------------------------------------


def _sh_function(w, node, scope, in_class):
    name, nn = _name(w, node)
    w.emit("function", name, nn, node, None, node.child_by_field_name("body"))


def bash() -> Rules:
    handlers = {"function_definition": _sh_function}
    containers = {"if_statement", "elif_clause", "else_clause", "compound_statement",
                  "list", "ERROR", "redirected_statement"}  # fmt: skip
    return Rules(
        handlers,
        frozenset(containers),
        ("comment", "string", "raw_string", "heredoc_body", "ansi_c_string"),
    )


_ALL = {
    "csharp": csharp,
    "ruby": ruby,
    "php": php,
    "kotlin": kotlin,
    "swift": swift,
    "scala": scala,
    "lua": lua,
    "bash": bash,
}


def rules(language: str) -> Rules:
    return _ALL[language]()
