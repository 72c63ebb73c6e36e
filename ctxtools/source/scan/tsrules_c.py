"""C and C++ for the tree-sitter backend: functions and their prototypes, structs, unions,
enums, classes, typedefs and ``using`` aliases, file-level variables (not ``extern``
declarations), methods defined in a class or out of it (``void A::f()``, scope ``A``),
through namespaces, ``extern "C"`` blocks, templates and preprocessor branches. Macros,
fields and enumerators are not definitions here (as in the other scanners)."""

from __future__ import annotations

import re

from ctxtools.source.scan.treesitter import scope_join
from ctxtools.source.scan.tsprep_c import body_spans, prepare
from ctxtools.source.scan.tsrules import Rules, walk_body, walk_children

_WRAPPERS = frozenset(
    {
        "pointer_declarator",
        "reference_declarator",
        "array_declarator",
        "parenthesized_declarator",
        "init_declarator",
        "attributed_declarator",
        "function_declarator",
    }
)
_NOT_FUNCTION = frozenset({"parenthesized_declarator", "array_declarator", "init_declarator"})
_NAMES = frozenset(
    {"identifier", "field_identifier", "type_identifier", "operator_name", "destructor_name",
     "namespace_identifier"}
)  # fmt: skip
_TYPE_KINDS = {
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "enum_specifier": "enum",
    "class_specifier": "class",
}


def _declarator(node):
    """(name node, is a function) of a declarator: ``*f(int)`` is a function, ``(*f)(int)``
    a variable holding a pointer to one."""
    is_function = None
    while node is not None and node.type in _WRAPPERS:
        if node.type == "function_declarator" and is_function is None:
            inner = node.child_by_field_name("declarator")
            is_function = inner is None or inner.type != "parenthesized_declarator"
        elif is_function is None and node.type in _NOT_FUNCTION:
            is_function = False
        nxt = node.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in node.named_children if c.type != "attribute_specifier"), None)
        node = nxt
    if node is not None and node.type == "operator_cast" and is_function is None:
        is_function = True  # operator bool() const: a conversion function
    return node, bool(is_function)


def _split_name(w, node):
    """(name, scope prefix, name node) of a (qualified) declarator name."""
    scope = []
    while node is not None and node.type == "qualified_identifier":
        s = node.child_by_field_name("scope")
        if s is not None:
            scope.append(w.text(s).split("<", 1)[0])
        node = node.child_by_field_name("name")
    if node is None:
        return "", None, None
    if node.type in ("template_function", "template_type"):
        # f<int>, struct formatter<T, Char> (a specialisation): named by its template
        node = node.child_by_field_name("name") or node
    if node.type == "operator_cast":  # operator const char*: named by the type it makes
        target = node.child_by_field_name("declarator")  # down to its ``()``: a ``*``
        while target is not None and target.type != "abstract_function_declarator":
            inner = [c for c in target.named_children if c.type.startswith("abstract_")]
            target = inner[0] if inner else None  # or ``&`` is in the name
        end = target.start_byte if target is not None else node.end_byte
        text = w.src[node.start_byte : end].decode("utf-8", "replace")
        return " ".join(text.split()), ".".join(scope) or None, node
    if node.type not in _NAMES:
        return "", None, None
    name = w.text(node)
    if node.type in ("operator_name", "destructor_name"):
        name = "".join(name.split())  # operator==, ~Foo
    return name, ".".join(scope) or None, node


def _type_specifier(w, spec, scope, in_class) -> None:
    """A struct/union/enum/class specifier with a body, wherever it appears."""
    kind = _TYPE_KINDS.get(spec.type)
    if kind is None:
        return
    body = spec.child_by_field_name("body")
    name_node = spec.child_by_field_name("name")
    if body is None or name_node is None:
        return
    name, prefix, nn = _split_name(w, name_node)
    # struct SkipList<K, C>::Node {...}: defined out of its class, scoped in it
    w.emit(kind, name, nn, spec, scope_join(scope, prefix) if prefix else scope, body)
    if w.language == "cpp" and spec.type in (
        "class_specifier",
        "struct_specifier",
        "union_specifier",
    ):
        w.visit(body, scope_join(scope, scope_join(prefix, name)), True)


def _function_definition(w, node, scope, in_class):
    decl = node.child_by_field_name("declarator")
    name_node, _ = _declarator(decl)
    name, prefix, nn = _split_name(w, name_node)
    full = scope_join(scope, prefix) if prefix else scope
    kind = "method" if in_class or prefix else "function"
    if prefix and name.startswith("~"):
        kind = "method"
    body = node.child_by_field_name("body")
    for c in node.named_children:  # Slice() : data_(""), size_(0) {: the signature stops
        if c.type == "field_initializer_list":  # before the member initializers
            body = c
            break
    w.emit(kind, name, nn, node, full, body)


def _friend(w, node, scope, in_class):
    """``friend auto operator==(...) {...}``: a function defined in a class (a friend only
    declared, ``friend class B;``, ``friend void f(int);``, defines nothing here)."""
    for c in node.named_children:
        if c.type == "function_definition":
            _function_definition(w, c, scope, in_class)
        elif c.type == "template_declaration":
            _friend(w, c, scope, in_class)


def _is_extern(node) -> bool:
    for c in node.named_children:
        if c.type == "storage_class_specifier" and c.text in (b"extern",):
            return True
    return False


def _declaration(w, node, scope, in_class, extern=False):
    """``int f(void);`` (a prototype), ``static int x;``, ``struct s {...} v;``: its type,
    then each declarator; fields of a class are not definitions, its methods are."""
    spec = node.child_by_field_name("type")
    if spec is not None:
        _type_specifier(w, spec, scope, in_class)
    extern = extern or _is_extern(node)
    for decl in node.children_by_field_name("declarator"):
        name_node, is_function = _declarator(decl)
        if name_node is None:
            continue
        name, prefix, nn = _split_name(w, name_node)
        if is_function:
            kind = "method" if in_class or prefix else "function"
            w.emit(kind, name, nn, node, scope_join(scope, prefix) if prefix else scope)
        elif not in_class and not extern and not prefix:
            end = decl.child_by_field_name("value")
            sig_end = end.start_byte if end is not None else None
            w.emit("variable", name, nn, node, scope, sig_end=sig_end)


def _type_definition(w, node, scope, in_class):
    spec = node.child_by_field_name("type")
    if spec is not None:
        _type_specifier(w, spec, scope, in_class)
    for decl in node.children_by_field_name("declarator"):
        name_node, _ = _declarator(decl)
        if name_node is None:
            continue
        name, _prefix, nn = _split_name(w, name_node)
        body = spec.child_by_field_name("body") if spec is not None else None
        if body is not None:  # typedef struct {...} name: the body left out
            w.emit("type", name, nn, node, scope, sig_end=body.start_byte, suffix="{…} " + name)
        else:
            w.emit("type", name, nn, node, scope)


def _specifier(w, node, scope, in_class):
    _type_specifier(w, node, scope, in_class)


def _alias(w, node, scope, in_class):
    nn = node.child_by_field_name("name")
    if nn is not None:
        w.emit("type", w.text(nn), nn, node, scope, sig_end=node.end_byte)


def _linkage(w, node, scope, in_class):
    """``extern "C" { ... }``, whose declarations are walked, or one declaration:
    ``extern "C" int f(...) {...}`` (a variable there is ``extern``, not defined)."""
    body = node.child_by_field_name("body")
    if body is None:
        return
    if body.type == "declaration":  # extern "C" char** environ;: declared, not defined
        _declaration(w, body, scope, in_class, extern=True)
    elif body.type == "function_definition":
        _function_definition(w, body, scope, in_class)
    else:
        w.visit(body, scope, in_class)


def _include(w, node, scope, in_class):
    path = node.child_by_field_name("path")
    if path is None or path.type != "string_literal":
        return
    spec = w.text(path).strip('"')
    dot = spec.rfind(".")
    if dot > spec.rfind("/"):
        spec = spec[:dot]
    w.imports.append(spec)


_PREPROC = frozenset(
    {"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef", "ERROR"}
)


# Comments, strings and character literals: dropped before references are counted (a
# word count needs no offsets, so one C-level substitution does it). Each is written
# unrolled and possessive (a string as runs between escapes, not one alternation per
# byte): the same matches, a quarter faster.
_LITERALS = re.compile(
    rb"//[^\n]*+|/\*[^*]*+\*++(?:[^/*][^*]*+\*++)*+/"
    rb"|\"[^\"\\\n]*+(?:\\.[^\"\\\n]*+)*+\"|'(?:[^'\\\n]|\\.){1,8}'"
)


def rules(language: str) -> Rules:
    handlers = {
        "function_definition": _function_definition,
        "declaration": _declaration,
        "type_definition": _type_definition,
        "struct_specifier": _specifier,
        "union_specifier": _specifier,
        "enum_specifier": _specifier,
        "linkage_specification": _linkage,
        "preproc_include": _include,
        # a prototype after an unknown macro may parse as a field declaration
        "field_declaration": _declaration,
    }
    if language == "cpp":
        handlers.update(
            {
                "class_specifier": _specifier,
                "namespace_definition": walk_body(),
                "template_declaration": walk_children,
                "alias_declaration": _alias,
                "export_declaration": walk_children,
                "friend_declaration": _friend,
            }
        )
    containers = _PREPROC | {"declaration_list", "field_declaration_list"}
    literals = (
        "comment",
        "string_literal",
        "char_literal",
        "raw_string_literal",
        "system_lib_string",
        "concatenated_string",
    )
    return Rules(
        handlers,
        frozenset(containers),
        literals,
        leading=frozenset({"comment"}),
        prepare=prepare,
        skip=body_spans,
        strip=_LITERALS,
    )
