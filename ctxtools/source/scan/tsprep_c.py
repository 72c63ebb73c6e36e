"""What tree-sitter parses of C and C++ source, and what it skips. Names, signatures and
references still come from the source as written.

Skipped (``body_spans``, given to the parser as the gaps between its included ranges, so
its nodes keep the source's offsets and lines): the insides of function bodies. They are
never walked, yet reading them was most of the parse; and code the grammar cannot read
inside a body (``#ifdef`` halves of a statement, unknown macros) made it lose the
function and read its locals as file variables.

Blanked (``prepare``, at the same length, newlines and line splices kept):
- conditional directives inside a list (a member-initializer, argument or enum list):
  tree-sitter cannot parse one there, and lost the class around it (leveldb's Limiter);
- macros a C parser cannot know: a line that is only a macro name or a macro call,
  export and visibility markers, calling conventions, annotation calls after a
  declarator.

Each pass is one C-level regex scan that starts on a literal byte or a small set of them,
so the search skips the rest at C speed; the few matches are checked here.
"""

from __future__ import annotations

import re

from ctxtools.source.scan.common import blank_spans as _blank_spans

# --- function bodies ---------------------------------------------------------------------
# A body is a ``{`` right after a ``)`` (and ``const``, ``noexcept``...) up to its balanced
# ``}``. The scan steps over strings, raw strings, characters and comments, so a brace in
# one of them is not counted. A body nested deeper than BODY_DEPTH is not matched whole
# (the blocks inside it are); one under BODY_MIN bytes is not worth it.
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


def body_spans(src: bytes) -> list[tuple[int, int]]:
    """The insides of SRC's function bodies (their braces left out): what tree-sitter is
    not given to parse."""
    least = BODY_MIN
    return [
        (m.start(1) + 1, m.end(1) - 1)
        for m in _BODY.finditer(src)
        if m.lastindex is not None and m.end(1) - m.start(1) >= least
    ]


# --- directives inside lists -------------------------------------------------------------
_DIRECTIVE = re.compile(rb"#[ \t]*+(?:if|ifdef|ifndef|elif|else|endif)\b[^\n]*+")
_LIST_LINE = re.compile(rb"[,:(][ \t]*+(?://[^\n]*+)?\r?\Z")


def _list_directives(src: bytes):
    """Conditional directives alone on their line, after a line ending in ``,``, ``:`` or
    ``(`` (a comment after it allowed)."""
    for m in _DIRECTIVE.finditer(src):
        a = m.start()
        nl = src.rfind(b"\n", 0, a)
        if nl < 0 or src[nl + 1 : a].strip(b" \t"):
            continue
        if _LIST_LINE.search(src, src.rfind(b"\n", 0, nl) + 1, nl):
            yield a, m.end()


# --- macros --------------------------------------------------------------------------------
# A line that is only a macro name (``UV_HANDLE_FIELDS`` in a struct body), or a macro call
# on a line of its own (``RB_GENERATE_STATIC(...)``, a ``// comment`` after it allowed) --
# not a function defined through a macro (``TEST_IMPL(name)`` then ``{``).
_MACRO = (
    rb"[ \t]*+[A-Z_][A-Z0-9_]{2,}+[ \t]*+(?=\r?\n|\Z)"
    rb"|[A-Z_][A-Z0-9_]{2,}+\((?:[^()\n]++|\([^()\n]*+\))*+\)[ \t]*+;?[ \t]*+(?://[^\n]*+)?"
    rb"(?=\r?\n|\Z)"
    rb"(?![ \t\r\n]*\{)"
)
_MACRO_LINE = re.compile(rb"\n(" + _MACRO + rb")")
_MACRO_FIRST = re.compile(_MACRO)


def _macro_lines(src: bytes):
    m = _MACRO_FIRST.match(src)
    if m is not None:
        yield m.span()
    for m in _MACRO_LINE.finditer(src):
        yield m.span(1)


# Export and visibility markers: ``UV_EXTERN int f(void);``, ``class LEVELDB_EXPORT DB``.
# Found by their suffix; the prefix (one word of capitals and digits) is read backwards.
_MARKER = re.compile(
    rb"_(?:EXTERN|EXPORT|API|INLINE|DECL|PUBLIC|LOCAL|HIDDEN|VISIBLE|NORETURN|UNUSED"
    rb"|DEPRECATED|NODISCARD|FORCEINLINE|ALWAYS_INLINE)(?:\([^()\n]*+\))?(?=[ \t\n*&])"
)
_CAPS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyz_") | _CAPS


def _markers(src: bytes):
    for m in _MARKER.finditer(src):
        a = start = m.start()
        while start > 0 and src[start - 1] in _CAPS:
            start -= 1
        if start == a or not 0x41 <= src[start] <= 0x5A:
            continue  # no prefix, or one starting with a digit
        if start > 0 and src[start - 1] in _WORD:
            continue  # a longer name: FOO_BAR_EXPORT is not FOO_EXPORT
        yield start, m.end()


_CALLING = re.compile(
    rb"(?:PASCAL|WINAPI|WINAPIV|WSAAPI|APIENTRY|CALLBACK|NTAPI|__stdcall|__cdecl|__fastcall)\b"
)


# (the words themselves, looked for first: a search of each skips through the source far
# faster than the pattern, which starts on any of six common bytes)
_CALLING_WORDS = (b"PASCAL", b"WINAPI", b"WSAAPI", b"APIENTRY", b"CALLBACK", b"NTAPI",
                  b"__stdcall", b"__cdecl", b"__fastcall")  # fmt: skip


def _calling(src: bytes):
    if not any(word in src for word in _CALLING_WORDS):
        return
    for m in _CALLING.finditer(src):
        a = m.start()
        if a == 0 or src[a - 1] not in _WORD:
            yield m.span()


# Annotation macros where a C parser cannot take a name (``PROTOBUF_NONNULL``,
# ``ABSL_MUST_USE_RESULT``): capitals-and-underscore words (``A_B``, so ``FILE`` and
# ``UINT32`` are never taken, nor ``CRITICAL_SECTION cs``) right after a ``*`` or ``&`` and
# before a name or ``)``/``,``; at a line's start, before what starts a declaration (a
# keyword, ``[[``, a qualified name, a lower-case type and a name: ``PROTOBUF_NOINLINE
# uint64_t Size()``, an operator, a constructor: ``FMT_CONSTEXPR buffer(...)``); and
# between ``class`` and the class's name. On a 2,300-file C/C++
# tree (curl and protobuf) they were two thirds of tree-sitter's parse errors.
_ANNOTATION = rb"[A-Z][A-Z0-9]*+_[A-Z0-9_]*+"
_CALLED = _ANNOTATION + rb"(?:\([^()\n]*+\))?"
# (each pattern starts on one literal byte or word, which the search finds at C speed: a
# pattern led by a set of bytes costs ten times as much)
_AFTER_POINTER = [
    re.compile(
        sign + rb"[ \t\r\n]*+((?:" + _ANNOTATION + rb"[ \t]++)*" + _ANNOTATION + rb")"
        rb"(?=[ \t\r\n]++[A-Za-z_~]|[ \t]*+[),])"
    )
    for sign in (rb"\*", rb"&")
]
_LINE_START = re.compile(
    rb"\n[ \t]*+(" + _CALLED + rb"(?:[ \t]++" + _CALLED + rb")*)"
    rb"(?=[ \t\r\n]++(?:(?:void|int|char|bool|short|long|float|double|signed|unsigned|const"
    rb"|constexpr|consteval|static|inline|virtual|explicit|extern|friend|template|typename"
    rb"|struct|class|union|enum|auto|volatile)\b|\[\[|::|[A-Za-z_]\w*+::"
    rb"|[a-z_]\w*+[ \t*&]++[A-Za-z_~]|operator\b|~?[A-Za-z_]\w*+\())"
)
_CLASS_HEAD = [
    re.compile(
        word + rb"[ \t]++((?:" + _CALLED + rb"[ \t]++)++)"
        rb"(?=[A-Za-z_]\w*+[ \t\r\n]*+(?:final\b|[:{<]))"
    )
    for word in (rb"class", rb"struct", rb"union")
]


def _annotations(src: bytes):
    spans = []
    for pattern in _AFTER_POINTER:
        spans += (
            m.span(1)
            for m in pattern.finditer(src)
            if src[max(0, m.start() - 64) : m.start()].rstrip()[-1:] != b"("  # (*HANDLER_T)
        )
    for pattern in (_LINE_START, *_CLASS_HEAD):
        spans += (m.span(1) for m in pattern.finditer(src))
    spans.sort()
    for a, b in spans:  # not on a directive's line: ``#ifdef USE_SSL`` then ``static``
        if src[src.rfind(b"\n", 0, a) + 1 : a].lstrip()[:1] != b"#":
            yield a, b


# A declaration wrapped in a macro call, ``UV_UNUSED(static int f(int x)) {``: the call's
# name, its ``(`` and its ``)`` are blanked, so the function is seen under its own name.
_WRAP = (
    rb"[ \t]*+([A-Z][A-Z0-9_]*+[ \t]*+\()(?=(?:static|inline|extern)\b)"
    rb"(?:[^()]++|\((?:[^()]++|\([^()]*+\))*+\))*+(\))(?=[ \t\r\n]*+[{;])"
)
_WRAPPED = re.compile(rb"\n" + _WRAP)
_WRAPPED_FIRST = re.compile(_WRAP)


def _wrapped(src: bytes):
    first = _WRAPPED_FIRST.match(src)
    for m in (*((first,) if first else ()), *_WRAPPED.finditer(src)):
        yield m.span(1)
        yield m.span(2)


# Annotation calls after a declarator: ``void f() EXCLUSIVE_LOCKS_REQUIRED(mu_);``.
_TRAILING = re.compile(rb"\)((?:[ \t\n]+[A-Z][A-Z0-9_]{3,}(?:\([^()\n]*\))?)+)(?=[ \t\n]*[;{])")


def _trailing(src: bytes):
    for m in _TRAILING.finditer(src):
        yield m.span(1)


def prepare(src: bytes) -> bytes:
    """The bytes tree-sitter parses for C or C++ source SRC (same length)."""
    if b"#" in src:
        src = _blank_spans(src, _list_directives(src))
    if b"_" not in src:
        return src
    for spans in (_wrapped, _macro_lines, _markers, _calling, _annotations):
        src = _blank_spans(src, spans(src))
    if b")" in src:
        src = _blank_spans(src, _trailing(src))
    return src
