"""The tree-sitter backend (C, C++, C#, Ruby, PHP, Kotlin, Swift, Scala, Lua, Bash): exact
definitions of real source files full of traps (code in comments and strings, macros,
templates, nested types), .h headers told C from C++, shebangs, bad input (a file that
does not parse, CRLF, a BOM, invalid UTF-8, a 20 MB generated file, a missing grammar) and
the laziness of the grammars."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxtools.source.scan import (
    header_language,
    language_for,
    language_of,
    scan_bytes,
    scan_source,
    shebang_language,
)
from ctxtools.source.scan import treesitter as ts

DATA = Path(__file__).parents[1] / "data" / "scan" / "ts"
# Lua's entry with a grammar wheel that is not installed
NO_SUCH_LUA = ts.GRAMMARS["lua"]._replace(module="tree_sitter_no_such_grammar", package="x-lua")


def scan(name: str):
    return scan_source(name, (DATA / name).read_text(encoding="utf-8"))


def defs(result) -> list[tuple]:
    return [(d.kind, d.name, d.line, d.scope) for d in result.definitions]


GOLDEN = {
    "ring.c": ("c", [
        ("variable", "names", 7, None),
        ("variable", "ring_count", 9, None),
        ("struct", "ring_node", 11, None),
        ("type", "ring_node_t", 14, None),
        ("enum", "ring_state", 16, None),
        ("type", "ring_cb", 18, None),
        ("function", "ring_grow", 21, None),
        ("function", "ring_push", 26, None),
        ("variable", "ring_hook", 33, None),
    ]),
    "ring.h": ("c", [
        ("struct", "ring", 9, None),
        ("type", "ring_t", 12, None),
        ("function", "ring_push", 14, None),
        ("function", "ring_pop", 15, None),
        ("function", "ring_size", 16, None),
    ]),
    "store.hpp": ("cpp", [
        ("struct", "Slot", 8, None),
        ("class", "Store", 12, None),
        ("method", "Store", 14, "Store"),
        ("method", "~Store", 15, "Store"),
        ("method", "Put", 16, "Store"),
        ("method", "Get", 17, "Store"),
        ("method", "operator==", 18, "Store"),
        ("method", "Probe", 22, "Store"),
        ("type", "StringStore", 25, None),
        ("enum", "Mode", 26, None),
    ]),
    "store.cpp": ("cpp", [
        ("method", "Store", 6, "Store"),
        ("method", "Put", 9, "Store"),
        ("function", "Lookup", 14, None),
    ]),
    "Cache.cs": ("csharp", [
        ("class", "Cache", 8, None),
        ("method", "Cache", 14, "Cache"),
        ("method", "TryGet", 16, "Cache"),
        ("method", "Put", 18, "Cache"),
        ("struct", "Entry", 24, "Cache"),
        ("interface", "ICache", 27, None),
        ("method", "TryGet", 29, "ICache"),
        ("enum", "Policy", 32, None),
        ("class", "Hit", 34, None),
        ("type", "Evicted", 36, None),
    ]),
    # Real code (Newtonsoft.Json, MIT): operators named as Universal Ctags 5.9 names them,
    # on the line of ``operator``; ctags loses ``operator bool?`` (a nullable type), we don't
    "Operators.cs": ("csharp", [
        ("class", "JToken", 43, None),
        ("method", "operator bool", 57, "JToken"),
        ("method", "operator bool?", 80, "JToken"),
        ("method", "operator JToken", 96, "JToken"),
        ("struct", "Optional", 106, None),
        ("method", "operator Optional<T>", 112, "Optional"),
        ("method", "operator T?", 121, "Optional"),
        ("method", "operator ==", 134, "Optional"),
        ("method", "operator !=", 145, "Optional"),
    ]),
    "app.rb": ("ruby", [
        ("class", "Shop", 5, None),
        ("const", "VERSION", 6, "Shop"),
        ("class", "Cart", 8, "Shop"),
        ("method", "initialize", 11, "Shop.Cart"),
        ("method", "total", 15, "Shop.Cart"),
        ("method", "empty", 17, "Shop.Cart"),
        ("method", "from_json", 22, "Shop.Cart"),
        ("method", "rails?", 28, "Shop.Cart"),
        ("class", "Order", 34, "Shop"),
        ("function", "helper_in_block", 38, None),
    ]),
    "Router.php": ("php", [
        ("interface", "RouterInterface", 10, None),
        ("method", "map", 12, "RouterInterface"),
        ("class", "Router", 16, None),
        ("method", "__construct", 22, "Router"),
        ("method", "map", 24, "Router"),
        ("method", "create", 30, "Router"),
        ("trait", "Named", 36, None),
        ("method", "name", 38, "Named"),
        ("enum", "Method", 41, None),
        ("function", "route_url", 46, None),
    ]),
    "Pool.kt": ("kotlin", [
        ("const", "MAX_IDLE", 7, None),
        ("variable", "defaultTimeout", 9, None),
        ("type", "Listener", 11, None),
        ("interface", "Connection", 13, None),
        ("method", "isHealthy", 14, "Connection"),
        ("class", "Address", 17, None),
        ("class", "ConnectionPool", 19, None),
        ("method", "acquire", 22, "ConnectionPool"),
        ("method", "evictAll", 27, "ConnectionPool"),
        ("class", "Companion", 29, "ConnectionPool"),
        ("method", "get", 30, "ConnectionPool.Companion"),
        ("class", "Pools", 34, None),
        ("method", "shared", 35, "Pools"),
        ("enum", "State", 38, None),
        ("function", "newPool", 40, None),
    ]),
    "Session.swift": ("swift", [
        ("variable", "defaultTimeout", 4, None),
        ("type", "Handler", 6, None),
        ("interface", "RequestAdapter", 8, None),
        ("method", "adapt", 9, "RequestAdapter"),
        ("class", "Session", 12, None),
        ("method", "init", 15, "Session"),
        ("method", "request", 20, "Session"),
        ("struct", "DataRequest", 26, None),
        ("enum", "Method", 30, None),
        ("impl", "Session", 34, None),
        ("method", "reset", 36, "Session"),
        ("function", "makeSession", 39, None),
    ]),
    "Parser.scala": ("scala", [
        ("trait", "Parser", 6, None),
        ("method", "parse", 7, "Parser"),
        ("method", "map", 8, "Parser"),
        ("class", "Token", 11, None),
        ("class", "Lexer", 13, None),
        ("method", "hasNext", 15, "Lexer"),
        ("method", "next", 16, "Lexer"),
        ("class", "Parser", 22, None),
        ("type", "Result", 23, "Parser"),
        ("method", "int", 24, "Parser"),
        ("enum", "Color", 27, None),
        ("variable", "maxDepth", 31, None),
        ("function", "parseAll", 33, None),
    ]),
    "queue.lua": ("lua", [
        ("function", "check", 6, None),
        ("method", "new", 10, "queue"),
        ("method", "push", 14, "queue"),
        ("method", "pop", 20, "queue"),
        ("method", "size", 26, "queue"),
        ("function", "global_helper", 29, None),
    ]),
    "deploy.sh": ("bash", [
        ("function", "log", 5, None),
        ("function", "build_image", 9, None),
        ("function", "debug", 15, None),
        ("function", "main", 22, None),
    ]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_definitions(name):
    language, expected = GOLDEN[name]
    r = scan(name)
    assert r.language == language
    assert defs(r) == expected


def test_signatures_and_end_lines():
    c = {d.name: d for d in scan("ring.c").definitions}
    assert c["ring_grow"].signature == "static int ring_grow(ring_t *r, size_t extra)"
    assert (c["ring_grow"].line, c["ring_grow"].end_line) == (21, 24)
    # a macro the parser cannot know is blanked for parsing, kept out of the signature
    assert c["ring_push"].signature == "int ring_push(ring_t *r, int value)"
    assert c["ring_node_t"].signature == "typedef struct ring_node {…} ring_node_t"
    assert c["names"].signature == "static const char *names[]"
    cpp = {d.name: d for d in scan("store.hpp").definitions if d.kind != "method"}
    assert cpp["Store"].signature == "class Store : public Base"
    assert cpp["Store"].end_line == 23
    ctor = scan("store.cpp").definitions[0]
    assert ctor.signature == "Store<T>::Store(std::size_t capacity)"  # no : slots_(capacity)
    assert ctor.end_line == 6
    rb = {d.name: d for d in scan("app.rb").definitions}
    assert rb["initialize"].signature == "def initialize(items = [])"
    php = {d.name: d for d in scan("Router.php").definitions}
    assert php["create"].signature == "public static function create(): static"
    cs = {d.name: d for d in scan("Cache.cs").definitions if d.kind != "method"}
    assert cs["Cache"].signature.startswith("public sealed class Cache<TKey, TValue>")
    ops = {d.name: d for d in scan("Operators.cs").definitions}
    eq = "public static bool operator ==(Optional<T?> a, Optional<T?> b)"
    assert ops["operator =="].signature == eq
    assert ops["operator JToken"].signature == "public static implicit operator JToken(bool value)"
    assert ops["operator bool"].end_line == 73


def test_imports_and_references():
    assert scan("ring.c").imports == ["ring"]  # <stdlib.h> is the system's
    assert scan("app.rb").imports == ["json", "helpers/format"]
    assert scan("Router.php").imports == ["Psr/Http/Message/ResponseInterface", "App/Routing/Route"]
    assert scan("Pool.kt").imports == ["java.io.Closeable", "kotlin.time.Duration"]
    assert scan("Operators.cs").imports == [
        "System",
        "Xunit",
        "Xunit.FactAttribute",  # using Test = Xunit.FactAttribute: the target, not "Test"
        "Newtonsoft.Json.Tests.XUnitAssert",
        "Xunit.InlineDataAttribute",
        "NUnit.Framework",
    ]
    cs = scan("Operators.cs").references  # a use of an alias is one of its target
    assert "Assert" not in cs and "Test" not in cs and cs["XUnitAssert"] == 2
    assert scan("queue.lua").imports == ["demo.util"]
    refs = scan("ring.c").references
    assert "ring_grow" in refs  # called in ring_push
    assert "not_a_type" not in refs and "fake" not in refs  # inside a string, a comment
    assert "return" not in refs and "static" not in refs  # the grammar's keywords
    kt = scan("Pool.kt").references
    assert "MAX_IDLE" in kt and "notAFunction" not in kt


def test_scala_type_parameters_are_no_references():
    # Real code (cats, MIT): [A, B] and F[_] are type parameters; counted as references,
    # they tied every file of cats to the few that define a member named A
    refs = scan("Functor.scala").references
    assert "Invariant" in refs and "map" in refs
    assert not {"A", "B", "F"} & set(refs)
    assert [d.name for d in scan("Functor.scala").definitions] == ["Functor", "map", "imap"]


def test_header_language_by_content():
    assert header_language((DATA / "ring.h").read_text()) == "c"  # extern "C" under #ifdef
    assert header_language((DATA / "store.h").read_text()) == "cpp"
    assert header_language("class A {\n public:\n  int x;\n};\n") == "cpp"
    assert header_language("struct a { int x; };\nint f(void);\n") == "c"
    assert language_for("x/ring.h") == "c"
    assert language_of("x/store.h", (DATA / "store.h").read_text()) == "cpp"
    # the same C++ text as .h and .hpp: the same definitions
    assert defs(scan("store.h")) == defs(scan("store.hpp"))


def test_shebang_and_names():
    assert shebang_language("#!/usr/bin/env bash\necho") == "bash"
    assert shebang_language(b"#!/bin/sh\n") == "bash"
    assert shebang_language("#!/usr/bin/env -S ruby -w\n") == "ruby"
    assert shebang_language("#!/usr/bin/python3.12\n") == "python"
    assert shebang_language("#!/usr/bin/perl\n") is None
    assert shebang_language("echo\n") is None
    r = scan_source("bin/deploy", (DATA / "deploy.sh").read_text())
    assert r.language == "bash" and [d.name for d in r.definitions][:2] == ["log", "build_image"]
    assert language_for("Rakefile") == "ruby"
    assert scan_source("bin/notes", "just text\n") is None


def test_file_that_does_not_parse_keeps_what_came_before():
    text = (
        "int first(void) { return 1; }\n"
        "struct kept { int a; };\n"
        "int broken( { ]]] return;\n"
        "static int after(int x) { return x; }\n"
    )
    r = scan_source("bad.c", text)
    names = [d.name for d in r.definitions]
    assert names[:2] == ["first", "kept"]
    assert "after" in names  # tree-sitter recovers past the error
    rb = scan_source("bad.rb", "class A\n  def ok; end\n  def broken(\nend\n")
    assert "ok" in [d.name for d in rb.definitions]


def test_crlf_bom_and_invalid_utf8():
    text = (DATA / "ring.c").read_text()
    expected = defs(scan("ring.c"))
    data = b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
    r = scan_bytes("ring.c", data)
    assert defs(r) == expected
    assert all("\r" not in d.signature for d in r.definitions)
    broken = text.replace("A ring buffer", "A ring \xff\xfe buffer").encode("latin-1")
    assert defs(scan_bytes("ring.c", broken)) == expected
    kt = b"\xef\xbb\xbf" + (DATA / "Pool.kt").read_bytes().replace(b"\n", b"\r\n")
    assert defs(scan_bytes("Pool.kt", kt)) == defs(scan("Pool.kt"))


def test_missing_grammar_maps_as_text(monkeypatch):
    monkeypatch.setitem(ts.GRAMMARS, "lua", NO_SUCH_LUA)
    monkeypatch.delitem(ts._LOADED, "lua", raising=False)
    monkeypatch.setattr(ts, "MISSING", set())
    r = scan("queue.lua")
    assert r.language == "lua" and r.definitions == []
    assert "queue" in r.references  # mapped as text: its words still link it
    assert ts.missing_note(["lua", "c", "python", "lua"]) == (
        "no tree-sitter grammar for lua: those files are mapped as text (pip install x-lua)"
    )
    assert ts.missing_note(["c"]) is None


def test_map_of_a_multi_language_repository(tmp_path, monkeypatch):
    from ctxtools.repomap.core import build_map
    from ctxtools.tokens import HeuristicRuler

    for name in ("ring.c", "ring.h", "store.cpp", "store.h", "app.rb", "Pool.kt", "queue.lua"):
        (tmp_path / name).write_bytes((DATA / name).read_bytes())
    (tmp_path / "main.py").write_text("from ring import x\n\ndef main():\n    ring_push()\n")
    m = build_map(str(tmp_path), tokens=2000, ruler=HeuristicRuler(), use_cache=False)
    assert m.tokens <= 2000
    for sig in ("int ring_push(ring_t *r, int value)", "class Store : public Base",
                "class ConnectionPool", "def main()", "module Shop"):  # fmt: skip
        assert sig in m.text
    small = build_map(str(tmp_path), tokens=120, ruler=HeuristicRuler(), use_cache=False)
    assert small.tokens <= 120 and "ring_push" in small.text  # the most used first
    again = build_map(str(tmp_path), tokens=2000, ruler=HeuristicRuler(), use_cache=False)
    assert again.text == m.text  # deterministic


def test_missing_grammar_noted_once_in_the_map(tmp_path, monkeypatch):
    from ctxtools.repomap.core import build_map
    from ctxtools.tokens import HeuristicRuler

    monkeypatch.setitem(ts.GRAMMARS, "lua", NO_SUCH_LUA)
    monkeypatch.delitem(ts._LOADED, "lua", raising=False)
    monkeypatch.setattr(ts, "MISSING", set())
    for i in range(3):
        (tmp_path / f"q{i}.lua").write_bytes((DATA / "queue.lua").read_bytes())
    m = build_map(str(tmp_path), tokens=300, ruler=HeuristicRuler(), use_cache=False)
    notes = [n for n in m.notes if "tree-sitter grammar" in n]
    assert notes == ["no tree-sitter grammar for lua: those files are mapped as text"
                     " (pip install x-lua)"]  # fmt: skip


def test_generated_20mb_c_file_skipped_once(tmp_path):
    from ctxtools.repomap.core import build_map
    from ctxtools.tokens import HeuristicRuler

    line = b"static const unsigned char table_%d[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};\n"
    big = b"".join(line % i for i in range(20 * 1024 * 1024 // len(line) + 1))
    assert len(big) >= 20 * 1024 * 1024
    (tmp_path / "tables.c").write_bytes(big)
    (tmp_path / "ring.c").write_bytes((DATA / "ring.c").read_bytes())
    m = build_map(str(tmp_path), tokens=300, ruler=HeuristicRuler(), use_cache=False)
    assert "tables.c" not in m.text and "ring_push" in m.text
    said = [n for n in m.notes if "over 512 KiB" in n]
    assert said == [
        "skipped 1 file(s) over 512 KiB (generated or data; raise --max-file-size to map them)"
    ]


def test_no_grammar_loaded_without_a_tree_sitter_file():
    code = (
        "import sys\n"
        "from ctxtools.source.scan import scan_source, grammar_note\n"
        "scan_source('a.py', 'def f():\\n    pass\\n')\n"
        "scan_source('a.go', 'package a\\nfunc F() {}\\n')\n"
        "assert grammar_note({'python', 'go'}) is None\n"
        "print(sorted(m for m in sys.modules if m.startswith('tree_sitter')))\n"
        "scan_source('a.lua', 'function f() end\\n')\n"
        "print(sorted(m for m in sys.modules if m.startswith('tree_sitter')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = out.stdout.splitlines()
    assert before == "[]"
    assert {m.split(".")[0] for m in eval(after)} == {"tree_sitter", "tree_sitter_lua"}


def test_pack_for_a_cpp_method_carries_it_whole(tmp_path):
    """ctx-pack on a task naming a C++ method (Store::Put) packs its definition in
    store.cpp from its signature to its closing brace."""
    for name in ("store.cpp", "store.h"):
        (tmp_path / name).write_bytes((DATA / name).read_bytes())
    filler = "".join(f"int filler_{i}(int a) {{\n  return a * {i};\n}}\n\n" for i in range(40))
    (tmp_path / "filler.cpp").write_text(filler)
    pack = Path(sys.executable).parent / "ctx-pack"
    env = {**os.environ, "CTX_STORE": str(tmp_path / "store")}
    out = subprocess.run(
        [str(pack), "-t", "fix Store::Put when the key is empty", "--tokens", "900", "."],
        cwd=tmp_path, capture_output=True, text=True, env=env, check=True,
    ).stdout  # fmt: skip
    body = out.split("==> store.cpp <==", 1)[1].split("==>", 1)[0]
    source = (DATA / "store.cpp").read_text().splitlines()
    for n in range(9, 13):  # bool Store<T>::Put(...) { ... }
        assert f"\n{n}\t{source[n - 1]}\n" in body


def test_kotlin_words_that_start_with_a_soft_keyword():
    """``in1``, ``set_x``, ``as2``: one identifier each (the grammar alone reads the soft
    keyword then a number, and the parse error swallowed the rest of the class)."""
    text = (
        "class Streams {\n"
        "  fun copy() {\n"
        "    val in1 = open()\n"
        "    in1.skip(2)\n"
        "    assertThat(in1.exhausted()).isTrue()\n"
        "    val set_x = in1.size\n"
        "    set_x.close()\n"
        "  }\n"
        "\n"
        "  fun after(): Int = 1\n"
        "}\n"
        "\n"
        "fun last() = Streams()\n"
    )
    r = scan_source("Streams.kt", text)
    assert defs(r) == [
        ("class", "Streams", 1, None),
        ("method", "copy", 2, "Streams"),
        ("method", "after", 10, "Streams"),
        ("function", "last", 13, None),
    ]
    assert "in1" in r.references and "set_x" in r.references


def test_a_grammar_upgrade_or_removal_changes_the_scan_cache_fingerprint(tmp_path, monkeypatch):
    from ctxtools.source import scancache as cache
    from ctxtools.source.scan.treesitter import GRAMMARS

    site = tmp_path / "site-packages"
    for name in ("tree_sitter", *(g.module for g in GRAMMARS.values())):
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text("")
        (site / name / "_binding.abi3.so").write_bytes(b"\0" * 64)
    monkeypatch.setattr(
        cache, "_package_dir", lambda n: str(site / n) if (site / n).is_dir() else None
    )
    first = cache.scanner_fingerprint()
    assert cache.scanner_fingerprint() == first  # stable
    so = site / "tree_sitter_kotlin" / "_binding.abi3.so"
    so.write_bytes(b"\1" * 80)  # a new Kotlin grammar
    upgraded = cache.scanner_fingerprint()
    assert upgraded != first
    for f in (site / "tree_sitter_lua").iterdir():
        f.unlink()
    (site / "tree_sitter_lua").rmdir()  # Lua's grammar uninstalled
    assert cache.scanner_fingerprint() not in (first, upgraded)


@pytest.mark.parametrize("word", ["open", "final", "internal", "override", "suspend"])
def test_kotlin_modifiers_used_as_names(word):
    """okhttp's Http2Stream.kt: a local ``val open: Boolean`` made the grammar read a
    modifier; the parse error swallowed the class (its inner classes, its companion)."""
    text = (
        "class Http2Stream {\n"
        "  fun isOpen(): Boolean {\n"
        f"    val {word}: Boolean\n"
        f"    {word} = check()\n"
        f"    return {word}\n"
        "  }\n"
        "  open fun after() {}\n"
        "  private inner class FramingSource\n"
        "}\n"
    )
    r = scan_source("Http2Stream.kt", text)
    assert defs(r) == [
        ("class", "Http2Stream", 1, None),
        ("method", "isOpen", 2, "Http2Stream"),
        ("method", "after", 7, "Http2Stream"),
        ("class", "FramingSource", 8, "Http2Stream"),
    ]
    assert "Open" not in r.references  # (the word as written: a keyword, not counted)
