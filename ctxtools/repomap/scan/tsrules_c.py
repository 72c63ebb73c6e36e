"""C and C++ for the tree-sitter backend: functions and their prototypes, structs, unions,
enums, classes, typedefs and ``using`` aliases, file-level variables (not ``extern``
declarations), methods defined in a class or out of it (``void A::f()``, scope ``A``),
through namespaces, ``extern "C"`` blocks, templates and preprocessor branches. Macros,
fields and enumerators are not definitions here (as in the other scanners)."""

from __future__ import annotations

import re

from ctxtools.repomap.scan.treesitter import scope_join
from ctxtools.repomap.scan.tsrules import Rules, walk_body, walk_children

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
    if node.type == "template_function":
        node = node.child_by_field_name("name") or node
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
    w.emit(kind, name, nn, spec, scope, body)
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


def _is_extern(node) -> bool:
    for c in node.named_children:
        if c.type == "storage_class_specifier" and c.text in (b"extern",):
            return True
    return False


def _declaration(w, node, scope, in_class):
    """``int f(void);`` (a prototype), ``static int x;``, ``struct s {...} v;``: its type,
    then each declarator; fields of a class are not definitions, its methods are."""
    spec = node.child_by_field_name("type")
    if spec is not None:
        _type_specifier(w, spec, scope, in_class)
    extern = _is_extern(node)
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


# Macros a C parser cannot know, blanked (same length) before parsing -- the signatures
# still come from the source as written:
# a line that is only a macro name (``UV_HANDLE_FIELDS`` in a struct body, a top-level
# ``UV_PRIVATE_REQ_TYPES``), export/visibility markers (``UV_EXTERN int f(void);``,
# ``class LEVELDB_EXPORT DB``) and annotation calls after a declarator
# (``void f() EXCLUSIVE_LOCKS_REQUIRED(mu_);``).
# a line that is only a macro name, or a top-level macro call on a line of its own
# (``RB_GENERATE_STATIC(...)``) -- not a function defined through a macro
# (``TEST_IMPL(name)`` then ``{``)
_MACRO_LINE = re.compile(
    rb"^(?:[ \t]*[A-Z_][A-Z0-9_]{2,}[ \t]*$"
    rb"|[A-Z_][A-Z0-9_]{2,}\((?:[^()\n]|\([^()\n]*\))*\)[ \t]*;?[ \t]*$(?![ \t\n]*\{))",
    re.M,
)
_MARKER = re.compile(
    rb"\b[A-Z][A-Z0-9]*_(?:EXTERN|EXPORT|API|INLINE|DECL|PUBLIC|LOCAL|HIDDEN|VISIBLE"
    rb"|NORETURN|UNUSED|DEPRECATED|NODISCARD|FORCEINLINE|ALWAYS_INLINE)"
    rb"(?:\([^()\n]*\))?(?=[ \t\n*&])"
)
_CALLING = re.compile(
    rb"\b(?:PASCAL|WINAPI|WINAPIV|WSAAPI|APIENTRY|CALLBACK|NTAPI|__stdcall|__cdecl|__fastcall)\b"
)
_TRAILING = re.compile(rb"\)((?:[ \t\n]+[A-Z][A-Z0-9_]{3,}(?:\([^()\n]*\))?)+)(?=[ \t\n]*[;{])")
_SPACES = bytes(0x0A if b == 0x0A else 0x20 for b in range(256))


def _blank(m: re.Match) -> bytes:
    return m.group(0).translate(_SPACES)


def _blank_after_paren(m: re.Match) -> bytes:
    return b")" + m.group(1).translate(_SPACES)


_MARKER_WORDS = (b"_EXTERN", b"_EXPORT", b"_API", b"_INLINE", b"_DECL", b"_PUBLIC", b"_LOCAL",
                 b"_HIDDEN", b"_VISIBLE", b"_NORETURN", b"_UNUSED", b"_DEPRECATED",
                 b"_NODISCARD", b"FORCEINLINE")  # fmt: skip
_CALLING_WORDS = (b"PASCAL", b"WINAPI", b"WSAAPI", b"APIENTRY", b"CALLBACK", b"NTAPI", b"__stdcall",
                  b"__cdecl", b"__fastcall")  # fmt: skip


# Function bodies are never walked, yet parsing them is most of tree-sitter's work: each
# body of BODY_MIN bytes or more is blanked before the parse, its braces and newlines kept
# (every offset and line stays where it was). A body is a ``{`` right after a ``)`` (and
# ``const``, ``noexcept``...), up to its balanced ``}``, found by one C-level regex that
# steps over strings, raw strings, characters and comments, so a brace in one of them is
# not counted. Bodies nested deeper than BODY_DEPTH are not matched whole (the blocks
# inside them are); a line splice (``\`` at a line's end, a macro written over several
# lines) is kept, so the macro still ends where it did. Blanking also spares the parser
# the code inside bodies that it cannot read (``#ifdef`` halves of a statement, macros),
# which on libuv and leveldb hid later definitions.
_LIT = (
    rb'"(?:(?<=R")[^()\\ \t\n"]{0,16}\((?s:.*?)\)[^()\\ \t\n"]{0,16}"'  # R"x(...)x"
    rb'|(?:[^"\\\n]++|\\(?s:.))*+")'
    rb"|'(?:[^'\\\n]|\\.){1,8}'|//[^\n]*+|/\*[^*]*+\*++(?:[^/*][^*]*+\*++)*+/"
)
BODY_DEPTH = 6
BODY_MIN = 64


def _body_pattern(depth: int) -> bytes:
    inner = rb"[^{}\"'/]++|" + _LIT + rb"|/"
    pattern = rb"\{(?:" + inner + rb")*+\}"
    for _ in range(depth):
        pattern = rb"\{(?:" + inner + rb"|" + pattern + rb")*+\}"
    return pattern


# a literal or comment (stepped over), or a body after its ``)`` (group 1)
_BODY = re.compile(
    _LIT
    + rb"|\)(?:[ \t\r\n]++(?:const|noexcept|override|final|mutable)\b)*+[ \t\r\n]*+("
    + _body_pattern(BODY_DEPTH)
    + rb")"
)
_SPLICE = re.compile(rb"(\\\r?\n)")


def blank_bodies(src: bytes) -> bytes:
    """SRC with each function body's inside blanked (same length, newlines kept)."""
    parts = []
    pos = 0
    for m in _BODY.finditer(src):
        if m.lastindex is None:
            continue
        a, b = m.span(1)
        if b - a < BODY_MIN:
            continue
        inside = src[a + 1 : b - 1]
        if b"\\\n" in inside or b"\\\r\n" in inside:
            pieces = _SPLICE.split(inside)
            pieces[::2] = [p.translate(_SPACES) for p in pieces[::2]]
            inside = b"".join(pieces)
        else:
            inside = inside.translate(_SPACES)
        parts.append(src[pos : a + 1])
        parts.append(inside)
        pos = b - 1
    if not parts:
        return src
    parts.append(src[pos:])
    return b"".join(parts)


# A conditional directive inside a list (a member-initializer list, an argument or enum
# list: the line before it ends in ``,``, ``:`` or ``(``) is blanked too; tree-sitter
# cannot parse one there and loses the whole class around it (leveldb's Limiter).
_LIST_DIRECTIVE = re.compile(
    rb"[,:(][ \t]*(?://[^\n]*)?\r?\n[ \t]*(#[ \t]*(?:if|ifdef|ifndef|elif|else|endif)\b[^\n]*)"
)


def _blank_directive(m: re.Match) -> bytes:
    a = m.start(1) - m.start()
    return m.group(0)[:a] + m.group(1).translate(_SPACES)


def prepare(src: bytes) -> bytes:
    """SRC with its function bodies and the macros above blanked: the bytes tree-sitter
    parses. Each macro pattern runs only when the words it needs are there."""
    if b"{" in src:
        src = blank_bodies(src)
    if b"#" in src:
        src = _LIST_DIRECTIVE.sub(_blank_directive, src)
    if b"_" not in src:
        return src
    src = _MACRO_LINE.sub(_blank, src)
    if any(w in src for w in _MARKER_WORDS):
        src = _MARKER.sub(_blank, src)
    if any(w in src for w in _CALLING_WORDS):
        src = _CALLING.sub(_blank, src)
    if b")" in src:
        src = _TRAILING.sub(_blank_after_paren, src)
    return src


# Comments, strings and character literals: dropped before references are counted (a
# word count needs no offsets, so one C-level substitution does it).
_LITERALS = re.compile(
    rb"//[^\n]*|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.){1,8}'"
)


def rules(language: str) -> Rules:
    handlers = {
        "function_definition": _function_definition,
        "declaration": _declaration,
        "type_definition": _type_definition,
        "struct_specifier": _specifier,
        "union_specifier": _specifier,
        "enum_specifier": _specifier,
        "linkage_specification": walk_body(),
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
        strip=_LITERALS,
    )
