"""C and C++ before tree-sitter parses them: the insides of function bodies skipped (the
parser is given the ranges between them) and conditional directives inside lists blanked,
so that code tree-sitter cannot read inside a body or a member-initializer list no longer
hides the definitions around it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxtools.source.scan import header_language, scan_source
from ctxtools.source.scan import tsprep_c as rules

DATA = Path(__file__).parents[1] / "data" / "scan" / "ts"


def defs(result) -> list[tuple]:
    return [(d.kind, d.name, d.line, d.scope, d.end_line) for d in result.definitions]


def test_a_body_is_skipped_and_its_literals_do_not_unbalance_it():
    src = (
        b"struct keep { int field_that_stays; };\n"
        b"int f(int a) {\n"
        b'  const char *s = "}}} not a close";\n'
        b'  const char *r = R"pb({ "x": 1 } } })pb";\n'
        b"  char c = '}';  /* } */  // }\n"
        b"  if (a) { return a + 1000000; }\n"
        b"  return 0;\n"
        b"}\n"
        b"int g(void) { return 0; }\n"
    )
    inside = (src.index(b"int f(int a) {") + 14, src.index(b"}\nint g"))
    assert rules.body_spans(src) == [inside]  # not the struct's, not g's (under BODY_MIN)
    r = scan_source("f.c", src.decode())
    assert defs(r) == [
        ("struct", "keep", 1, None, 1),
        ("function", "f", 2, None, 8),
        ("function", "g", 9, None, 9),
    ]
    assert r.references.get("a", 0) >= 1  # what the skipped body uses is still counted


def test_a_macro_written_over_several_lines_hides_nothing_after_it():
    src = (
        "#define DEFINE_GETTER(name)                     \\\n"
        "  static int get_##name(void) {                 \\\n"
        "    return compute_the_value_of(name) + 12345;  \\\n"
        "  }\n"
        "int after_the_macro(int x) { return x; }\n"
    )
    assert len(rules.body_spans(src.encode())) == 1
    r = scan_source("m.c", src)
    assert ("function", "after_the_macro", 5, None, 5) in defs(r)
    assert "compute_the_value_of" in r.references


def test_ifdef_halves_inside_a_body_hide_nothing_after_it():
    """libuv's uv_available_parallelism (uv_parallelism.c, verbatim): declarations and a
    ``return`` in the halves of an #if chain. Unblanked, tree-sitter lost the function
    and read its locals as eleven file variables."""
    text = (DATA / "uv_parallelism.c").read_text() + "static int after(int x) {\n  return x;\n}\n"
    assert defs(scan_source("core.c", text)) == [
        ("function", "uv_available_parallelism", 1, None, 91),
        ("function", "after", 92, None, 94),
    ]


def test_a_directive_in_a_member_initializer_list_keeps_the_class():
    """leveldb's util/env_posix.cc (verbatim): ``#if`` between the initializers of
    Limiter's constructor. Tree-sitter cannot parse a directive there: Limiter ran to the
    end of the file, every later class was scoped in it and SingletonEnv was lost. The
    expected types are Universal Ctags 5.9's (name, line, end) for the file."""
    r = scan_source("env_posix.cc", (DATA / "env_posix.cc").read_text())
    types = [
        (d.name, d.line, d.end_line, d.scope)
        for d in r.definitions
        if d.kind in ("class", "struct")
    ]
    assert types == [
        ("Limiter", 73, 130, None),
        ("PosixSequentialFile", 136, 169, None),
        ("PosixRandomAccessFile", 176, 231, None),
        ("PosixMmapReadableFile", 238, 275, None),
        ("PosixWritableFile", 277, 465, None),
        ("PosixFileLock", 479, 490, None),
        ("PosixLockTable", 499, 516, None),
        ("PosixEnv", 518, 778, None),
        ("BackgroundWorkItem", 760, 766, "PosixEnv"),
        ("SingletonEnv", 869, 903, None),
    ]
    limiter = {d.name for d in r.definitions if d.scope == "Limiter"}
    assert limiter == {"Limiter", "Acquire", "Release", "operator="}


@pytest.mark.parametrize("name", ["ring.c", "ring.h", "store.cpp", "store.h", "store.hpp"])
def test_skipping_changes_no_definition_of_a_file_that_parses(name, monkeypatch):
    text = (DATA / name).read_text()
    skipped = scan_source(name, text)
    monkeypatch.setattr(rules, "BODY_MIN", 10**9)
    whole = scan_source(name, text)
    assert defs(whole) == defs(skipped) and whole.references == skipped.references


def test_an_objective_c_header_is_mapped_as_text():
    """protobuf's objectivec/*.h parsed as C gave junk variables (``interface``, method
    parameters); an ``@interface`` header is Objective-C, references only."""
    text = (
        "#import <Foundation/Foundation.h>\n"
        "NS_ASSUME_NONNULL_BEGIN\n"
        "@interface GPBArray : NSObject <NSCopying>\n"
        "@property(nonatomic, readonly) NSUInteger count;\n"
        "- (void)addValue:(int32_t)value;\n"
        "@end\n"
    )
    assert header_language(text) == "objc"
    r = scan_source("GPBArray.h", text)
    assert r.language == "objc" and r.definitions == []
    assert "NSUInteger" in r.references
    assert header_language("/* @interface in a comment */\nint f(void);\n") == "c"


ANNOTATED = """\
class PROTOBUF_EXPORT PROTOBUF_FUTURE_ADD_EARLY_WARN_UNUSED Any final : public Message {
 public:
  PROTOBUF_ALWAYS_INLINE_NODEBUG ABSL_ATTRIBUTE_REINITIALIZES void Clear();
  PROTOBUF_FUTURE_ADD_EARLY_NODISCARD ::uint64_t SpaceUsed() const;
  bool PackFrom(const Message& message, std::string* PROTOBUF_NONNULL dst_url,
                std::string* PROTOBUF_NONNULL
                    dst_value);
  PROTOBUF_NOINLINE PROTOBUF_CC static const char* MpMap(int a);
};

#ifdef USE_SSL
static int uses_ssl(void);
#endif
typedef void (*SIGHANDLER_T)(int);
CRITICAL_SECTION global_lock;
"""


def test_annotation_macros_are_read_past():
    """protobuf's generated headers: markers between ``class`` and the name, before a
    declaration, after a ``*`` -- two thirds of the parse errors of a 2,300-file C/C++
    tree. A directive's macro, a function pointer's name and a type in capitals stay."""
    r = scan_source("any.pb.h", ANNOTATED)
    assert r.language == "cpp"
    assert defs(r) == [
        ("class", "Any", 1, None, 9),
        ("method", "Clear", 3, "Any", 3),
        ("method", "SpaceUsed", 4, "Any", 4),
        ("method", "PackFrom", 5, "Any", 7),
        ("method", "MpMap", 8, "Any", 8),
        ("function", "uses_ssl", 12, None, 12),
        ("type", "SIGHANDLER_T", 14, None, 14),
        ("variable", "global_lock", 15, None, 15),
    ]
    sigs = {d.name: d.signature for d in r.definitions}
    assert sigs["uses_ssl"] == "static int uses_ssl(void)"
    assert sigs["Clear"] == "void Clear()"


def test_a_function_wrapped_in_a_macro_call_keeps_its_own_name():
    """libuv's ``UV_UNUSED(static void uv__update_time(uv_loop_t* loop)) {``: the
    function was lost (ctags names it UV_UNUSED)."""
    text = (
        "UV_UNUSED(static void uv__update_time(uv_loop_t* loop));\n"
        "UV_UNUSED(static void uv__update_time(uv_loop_t* loop)) {\n"
        "  loop->time = uv__hrtime(UV_CLOCK_FAST) / 1000000;\n"
        "}\n"
    )
    r = scan_source("internal.h", text)
    assert defs(r) == [
        ("function", "uv__update_time", 1, None, 1),
        ("function", "uv__update_time", 2, None, 4),
    ]
    assert {d.signature for d in r.definitions} == {"static void uv__update_time(uv_loop_t* loop)"}
