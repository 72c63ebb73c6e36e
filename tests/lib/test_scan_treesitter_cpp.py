"""Modern C++ in the tree-sitter scanner, on code copied from fmt (``fmt_snippets.h``, see
tests/data/scan/ts/README.md): template specialisations, conversion and comparison
operators, friend functions defined in a class, constructors behind an annotation macro,
macro calls with a comment after them."""

from __future__ import annotations

from pathlib import Path

from ctxtools.source.scan import scan_source
from ctxtools.source.scan import tsprep_c as rules

DATA = Path(__file__).parents[1] / "data" / "scan" / "ts"


def defs(result) -> list[tuple]:
    return [(d.kind, d.name, d.line, d.scope, d.end_line) for d in result.definitions]


def test_fmt_snippets_give_what_universal_ctags_finds():
    """Universal Ctags 5.9 (``--kinds-C++=+p``) finds these 27 definitions in the file, at
    these lines (its names spell ``operator ==`` with a space). Before: the
    specialisations had no name, the operators were lost, and ``FMT_CONSTEXPR`` before
    ``typed_node(...)`` broke the parse of dynamic_arg_list and of what followed it."""
    r = scan_source("fmt_snippets.h", (DATA / "fmt_snippets.h").read_text())
    assert r.language == "cpp"
    assert defs(r) == [
        ("struct", "is_reference_wrapper", 3, None, 3),
        ("struct", "is_reference_wrapper", 5, None, 5),  # is_reference_wrapper<std::...>
        ("function", "unwrap", 7, None, 7),
        ("function", "unwrap", 9, None, 11),
        ("struct", "node", 19, None, 22),
        ("method", "~node", 20, "node", 20),
        ("class", "dynamic_arg_list", 24, None, 46),
        ("struct", "typed_node", 25, "dynamic_arg_list", 34),
        ("method", "typed_node", 29, "dynamic_arg_list.typed_node", 29),
        ("method", "typed_node", 32, "dynamic_arg_list.typed_node", 33),
        ("method", "push", 39, "dynamic_arg_list", 45),
        ("struct", "is_code_unit", 50, None, 50),
        ("struct", "is_code_unit", 51, None, 51),  # template <> ... is_code_unit<char>
        ("struct", "is_code_unit", 52, None, 52),
        ("struct", "formatter", 55, None, 59),  # formatter<T, Char, enable_if_t<...>>
        ("struct", "format_to_result", 62, None, 73),
        ("method", "operator char*", 68, "format_to_result", 72),
        ("class", "day", 75, None, 84),
        ("method", "day", 80, "day", 80),
        ("method", "day", 81, "day", 82),
        ("method", "operator unsigned", 83, "day", 83),
        ("struct", "allocator", 89, None, 107),
        ("type", "value_type", 90, "allocator", 90),
        ("method", "allocate", 92, "allocator", 97),
        ("method", "deallocate", 99, "allocator", 99),
        ("method", "operator==", 101, "allocator", 103),
        ("method", "operator!=", 104, "allocator", 106),
    ]
    sigs = {(d.name, d.line): d.signature for d in r.definitions}
    assert sigs[("formatter", 55)].startswith("struct formatter<T, Char,")
    unsigned = sigs[("operator unsigned", 83)]
    assert unsigned == "constexpr explicit operator unsigned() const noexcept"
    assert sigs[("typed_node", 29)] == "typed_node(const Arg& arg)"  # the macro left out


def test_a_conversion_operator_is_named_by_the_type_it_makes():
    """fmt's ``operator const string_view&`` and ``operator const arg_t<...>*`` (base.h):
    the ``&`` and ``*`` are part of the type, hence of the name."""
    text = (
        "struct held {\n"
        "  FMT_ALWAYS_INLINE operator const string_view&() const { return str; }\n"
        "  operator const arg_t<Context, NUM_ARGS>*() const { return args + 1; }\n"
        "  operator basic_string_view<Char>() const;\n"
        "};\n"
        "held::operator bool() const { return true; }\n"
    )
    r = scan_source("held.hpp", text)
    assert [(d.kind, d.name, d.line, d.scope) for d in r.definitions] == [
        ("struct", "held", 1, None),
        ("method", "operator const string_view&", 2, "held"),
        ("method", "operator const arg_t<Context, NUM_ARGS>*", 3, "held"),
        ("method", "operator basic_string_view<Char>", 4, "held"),
        ("method", "operator bool", 6, "held"),
    ]


def test_a_friend_only_declared_defines_nothing():
    """A friend with a body is a function defined here (ctags reports it); ``friend class``
    and a friend prototype name something defined elsewhere."""
    text = (
        "class file {\n"
        "  friend class buffered_file;\n"
        "  friend auto output_file(cstring_view path, T... params) -> ostream;\n"
        "  template <int> friend void get(type_with_get);\n"
        "  friend auto operator<(file a, file b) -> bool { return a.fd_ < b.fd_; }\n"
        "};\n"
    )
    r = scan_source("os.h", text)
    assert [(d.kind, d.name, d.line) for d in r.definitions] == [
        ("class", "file", 1),
        ("method", "operator<", 5),
    ]


def test_a_macro_before_a_constructor_or_an_operator_is_blanked():
    src = (
        b"struct buffer {\n"
        b"  FMT_CONSTEXPR20 buffer(grow_fun grow, size_t sz) noexcept;\n"
        b"  FMT_CONSTEXPR auto operator[](size_t i) -> T&;\n"
        b"};\n"
    )
    out = rules.prepare(src)
    assert b"FMT_" not in out and len(out) == len(src)
    assert [d.name for d in scan_source("b.h", src.decode()).definitions] == [
        "buffer",
        "buffer",
        "operator[]",
    ]


def test_a_macro_call_line_with_a_comment_after_it_is_blanked():
    """gmock's ``GMOCK_DEFINE_DEFAULT_ACTION_FOR_RETURN_TYPE_(void, );  // NOLINT``: kept,
    it swallowed the classes after it."""
    text = (
        "DEFINE_DEFAULT_FOR_(void, );  // NOLINT\n"
        "DEFINE_DEFAULT_FOR_(bool, false);\n"
        "template <typename T>\n"
        "class DefaultValue {\n"
        " public:\n"
        "  static void Clear() { delete producer_; }\n"
        "};\n"
    )
    r = scan_source("gmock.h", text)
    assert [(d.kind, d.name, d.line, d.scope) for d in r.definitions] == [
        ("class", "DefaultValue", 4, None),
        ("method", "Clear", 6, "DefaultValue"),
    ]


def test_one_declaration_in_extern_c_is_found():
    """fmt's fuzzers: ``extern "C" int LLVMFuzzerTestOneInput(...) {`` was lost (only a
    braced ``extern "C" { ... }`` was walked); a variable there is only declared."""
    text = (
        'extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {\n'
        "  return 0;\n"
        "}\n"
        'extern "C" {\n'
        "int in_block(void);\n"
        "}\n"
        'extern "C" char** environ;\n'
    )
    r = scan_source("one-arg.cc", text)
    assert [(d.kind, d.name, d.line) for d in r.definitions] == [
        ("function", "LLVMFuzzerTestOneInput", 1),
        ("function", "in_block", 5),
    ]
