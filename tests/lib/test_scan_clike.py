"""The C-like scanners (Go, TypeScript, JavaScript/JSX, Rust, Java): exact definitions on
real source files full of traps (code-looking comments and strings, generics, receivers,
impl blocks, arrow exports, nested classes...), their end lines, imports and references."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxtools.source.scan import scan_source

DATA = Path(__file__).parents[1] / "data" / "scan"


def scan(name: str):
    return scan_source(name, (DATA / name).read_text(encoding="utf-8"))


def defs(result) -> list[tuple]:
    return [(d.kind, d.name, d.line, d.scope, d.signature) for d in result.definitions]


GO = [
    ("const", "Version", 17, None, 'const Version = "1.0 func Fake() {"'),
    ("const", "ModeRead", 20, None, "ModeRead Mode = iota"),
    ("const", "ModeWrite", 21, None, "ModeWrite"),
    ("variable", "ErrMissing", 26, None, 'ErrMissing = errors.New("missing")'),
    ("variable", "a", 27, None, "a, b = 1, 2"),
    ("variable", "b", 27, None, "a, b = 1, 2"),
    ("variable", "template", 30, None, "var template = `"),
    ("type", "Mode", 35, None, "type Mode int"),
    ("struct", "Store", 37, None, "type Store struct"),
    ("interface", "Reader", 42, None, "type Reader interface"),
    ("method", "Read", 43, "Reader", "Read(ctx context.Context, name string) ([]byte, error)"),
    ("type", "Key", 48, None, "Key string"),
    ("type", "Alias", 49, None, "Alias = Key"),
    ("struct", "List", 52, None, "type List[T any] struct"),
    ("function", "New", 56, None, "func New(root string) *Store"),
    (
        "method",
        "Put",
        62,
        "Store",
        "func (s *Store) Put(ctx context.Context, name string, data []byte) error",
    ),
    ("method", "Root", 69, "Store", "func (s Store) Root() string"),
    ("method", "Push", 71, "List", "func (l *List[T]) Push(v T)"),
    ("function", "Map", 73, None, "func Map[T, U any](xs []T, f func(T) U) []U"),
]
GO_ENDS = [17, 20, 21, 26, 27, 27, 33, 35, 40, 45, 43, 48, 49, 54, 60, 67, 69, 71, 79]
GO_IMPORTS = ["context", "io", "strings", "errors"]

TS = [
    ("function", "lazy", 10, None, 'const lazy = () => import("./lazy")'),
    ("function", "f", 12, None, "export const f = () => 1"),
    ("function", "g", 14, None, "export const g = async (a: number): Promise<void> =>"),
    ("const", "config", 19, None, "export const config ="),
    ("const", "pattern", 24, None, 'const pattern = /class Fake \\{ "/g'),
    (
        "const",
        "tpl",
        25,
        None,
        'const tpl = `export function inTemplate() { ${path.join("a", `b${1}`)} }`',
    ),
    ("interface", "Shape", 27, None, "export interface Shape"),
    ("method", "area", 28, "Shape", "area(): number"),
    ("type", "Id", 33, None, "export type Id = string | number"),
    ("type", "Mapper", 35, None, "export type Mapper<T = unknown> = ("),
    ("enum", "Color", 39, None, "export enum Color"),
    ("function", "declared", 44, None, "declare function declared(x: string): void"),
    ("function", "area", 47, "Geometry", "export function area(s: Shape): number"),
    (
        "class",
        "Box",
        53,
        None,
        "export abstract class Box<T extends { id: Id }> extends Base implements Shape",
    ),
    ("method", "handler", 56, "Box", "handler = (e: Event): void =>"),
    ("method", "constructor", 61, "Box", "constructor(private readonly svc: Service)"),
    ("method", "size", 65, "Box", "get size(): number"),
    ("method", "create", 69, "Box", "static create<U extends { id: Id }>(): Box<U>"),
    ("method", "stream", 73, "Box", "async *stream(): AsyncGenerator<T>"),
    ("method", "area", 75, "Box", "abstract area(): number"),
    ("method", "overloaded", 77, "Box", "overloaded(x: string): string"),
    ("method", "overloaded", 78, "Box", "overloaded(x: number): number"),
    ("method", "overloaded", 79, "Box", "overloaded(x: any): any"),
    (
        "function",
        "main",
        84,
        None,
        "export default function main(argv: string[]): Observable<number>",
    ),
]
TS_ENDS = [
    10,
    12,
    17,
    22,
    24,
    25,
    31,
    28,
    33,
    37,
    42,
    44,
    49,
    82,
    58,
    63,
    67,
    71,
    73,
    75,
    77,
    78,
    81,
    86,
]
TS_IMPORTS = ["@angular/core", "rxjs", "node:path", "./helper", "./lazy"]

JSX = [
    ("const", "RE", 5, None, "const RE = /[/\"'`]+/g"),
    ("const", "half", 6, None, "const half = 10 / 2 / 1"),
    ("function", "App", 8, None, "export function App({ title, items })"),
    ("class", "Counter", 19, None, "export default class Counter extends React.Component"),
    ("method", "increment", 22, "Counter", "increment = () =>"),
    ("method", "#hidden", 25, "Counter", "#hidden()"),
    ("method", "render", 26, "Counter", "render()"),
    ("function", "Legacy", 31, None, "function Legacy(name)"),
    ("method", "greet", 35, "Legacy", "Legacy.prototype.greet = function ()"),
    ("function", "helper", 39, None, "module.exports.helper = function helper()"),
    ("function", "Item", 41, None, "export const Item = ({ id }) => <li>"),
    ("function", "ids", 43, None, "export function* ids()"),
]
JSX_ENDS = [5, 6, 17, 29, 24, 25, 28, 33, 37, 39, 41, 45]
JSX_IMPORTS = ["react", "path"]

RUST = [
    ("struct", "Store", 10, None, "pub struct Store<T: Clone>"),
    ("struct", "Unit", 14, None, "pub struct Unit"),
    ("enum", "Event", 16, None, "pub enum Event<'a>"),
    ("trait", "Backend", 21, None, "pub trait Backend: Send"),
    ("type", "Error", 22, "Backend", "type Error"),
    ("const", "NAME", 23, "Backend", "const NAME: &'static str"),
    ("method", "get", 24, "Backend", "fn get(&self, key: &str) -> Option<Vec<u8>>"),
    (
        "method",
        "put",
        25,
        "Backend",
        "fn put(&mut self, key: &str, value: &[u8]) -> Result<(), Self::Error>",
    ),
    ("impl", "Store", 31, None, "impl<T: Clone> Store<T>"),
    ("method", "new", 32, "Store", "pub fn new() -> Self"),
    ("method", "get", 40, "Store", "pub(crate) fn get<'a>(&'a self, key: &str) -> Option<&'a T>"),
    ("impl", "Store", 45, None, "impl<T: Clone + fmt::Debug> Display for Store<T> where T: Send"),
    ("method", "fmt", 49, "Store", "fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result"),
    ("impl", "[u8; 4]", 54, None, "impl Backend for [u8; 4]"),
    ("type", "Error", 55, "[u8; 4]", "type Error = ()"),
    ("const", "NAME", 56, "[u8; 4]", 'const NAME: &\'static str = "array"'),
    ("method", "get", 57, "[u8; 4]", "fn get(&self, _key: &str) -> Option<Vec<u8>>"),
    ("const", "LIMIT", 62, None, "pub const LIMIT: usize = 1 << 20"),
    (
        "variable",
        "COUNTER",
        63,
        None,
        "static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0)",
    ),
    ("type", "Map", 64, None, "pub type Map = HashMap<String, Vec<u8>>"),
    ("function", "fetch", 66, None, "pub async fn fetch<F: Fn() -> u8>(f: F) -> u8"),
    ("function", "double", 70, None, "pub const fn double(x: usize) -> usize"),
    ("function", "it_works", 85, "tests", "fn it_works()"),
]
RUST_ENDS = [
    12,
    14,
    19,
    29,
    22,
    23,
    24,
    28,
    43,
    38,
    42,
    52,
    51,
    60,
    55,
    56,
    59,
    62,
    63,
    64,
    68,
    72,
    87,
]
RUST_IMPORTS = ["std::collections::HashMap", "std::fmt::{self,Display}", "super::*", "alloc"]

JAVA = [
    (
        "class",
        "Store",
        12,
        None,
        "public final class Store<K extends Comparable<K>, V> implements Iterable<V>",
    ),
    ("method", "Store", 21, "Store", "public Store(Map<K, V> items)"),
    ("method", "iterator", 26, "Store", "public java.util.Iterator<V> iterator()"),
    (
        "method",
        "filter",
        30,
        "Store",
        "public <T extends V> List<T> filter(Class<T> type, boolean strict) "
        "throws IllegalStateException",
    ),
    ("method", "first", 39, "Store", "static <T> T first(List<? extends T> xs)"),
    ("class", "Builder", 41, "Store", "public static class Builder"),
    ("method", "withName", 42, "Store.Builder", "Builder withName(String name)"),
    ("class", "Inner", 45, "Store", "class Inner"),
    ("class", "Deeper", 46, "Store.Inner", "class Deeper"),
    ("method", "depth", 47, "Store.Inner.Deeper", "int depth()"),
    ("interface", "Listener", 51, "Store", "interface Listener"),
    ("method", "onPut", 52, "Store.Listener", "void onPut(String key)"),
    ("method", "onDelete", 54, "Store.Listener", "default void onDelete(String key)"),
    ("enum", "Mode", 57, "Store", "enum Mode"),
    ("method", "Mode", 66, "Store.Mode", "Mode(String code)"),
    ("method", "flag", 68, "Store.Mode", "String flag()"),
    ("class", "Entry", 71, "Store", "record Entry<A>(A key, int size)"),
    ("method", "twice", 76, "Store.Entry", "int twice()"),
    ("interface", "Marker", 79, "Store", "@interface Marker"),
    ("method", "value", 80, "Store.Marker", 'String value() default ""'),
    ("class", "Base", 83, "Store", "abstract static class Base"),
    ("method", "size", 84, "Store.Base", "protected abstract int size()"),
    ("method", "nativeSize", 85, "Store.Base", "public native @Deprecated int nativeSize()"),
]
JAVA_ENDS = [
    87,
    23,
    28,
    37,
    39,
    43,
    42,
    49,
    48,
    47,
    55,
    52,
    54,
    69,
    66,
    68,
    77,
    76,
    81,
    80,
    86,
    84,
    85,
]
JAVA_IMPORTS = ["java.util.List", "java.util.Map", "java.util.Objects.requireNonNull"]


CASES = [
    ("traps.go", "go", GO, GO_ENDS, GO_IMPORTS),
    ("traps.ts", "typescript", TS, TS_ENDS, TS_IMPORTS),
    ("traps.jsx", "javascript", JSX, JSX_ENDS, JSX_IMPORTS),
    ("traps.rs", "rust", RUST, RUST_ENDS, RUST_IMPORTS),
    ("Traps.java", "java", JAVA, JAVA_ENDS, JAVA_IMPORTS),
]


@pytest.mark.parametrize(("name", "language", "expected", "ends", "imports"), CASES)
def test_exact_definitions(name, language, expected, ends, imports):
    result = scan(name)
    assert result.language == language
    assert defs(result) == expected
    assert [d.end_line for d in result.definitions] == ends
    assert result.imports == imports


# Names that only occur in comments, doc comments, strings, raw strings, template
# literals, text blocks or regular expressions: none may become a definition.
NEVER = {
    "traps.go": ["NotAFunction", "AlsoNotAFunction", "Fake", "InRawString", "helper", "_"],
    "traps.ts": ["notInComment", "NotAClass", "fake", "Fake", "inTemplate", "local", "inner"],
    "traps.jsx": ["commentedOut", "count", "label", "join"],
    "traps.rs": ["not_in_doc_comment", "not_nested", "nope", "not_in_doc", "in_raw_string",
                 "helper", "generated", "make"],
    "Traps.java": ["NotAClass", "notAMethod", "NotInJavadoc", "NotInTextBlock", "nope", "run",
                   "READ", "WRITE", "Runnable"],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(NEVER))
def test_comments_strings_and_locals_never_define(name):
    found = {d.name for d in scan(name).definitions}
    assert not found & set(NEVER[name])


def test_go_receivers_and_generics():
    by_name = {d.name: d for d in scan("traps.go").definitions}
    assert by_name["Put"].scope == "Store"  # pointer receiver
    assert by_name["Root"].scope == "Store"  # value receiver
    assert by_name["Push"].scope == "List"  # generic receiver List[T]
    assert by_name["Map"].signature.startswith("func Map[T, U any](")
    assert by_name["Put"].line == 62 and by_name["Put"].end_line == 67  # multi-line header


def test_rust_impl_blocks_scope_methods_to_the_type():
    result = scan("traps.rs")
    impls = [(d.name, d.line, d.signature) for d in result.definitions if d.kind == "impl"]
    assert impls == [
        ("Store", 31, "impl<T: Clone> Store<T>"),
        ("Store", 45, "impl<T: Clone + fmt::Debug> Display for Store<T> where T: Send"),
        ("[u8; 4]", 54, "impl Backend for [u8; 4]"),
    ]
    fmt = next(d for d in result.definitions if d.name == "fmt")
    assert (fmt.kind, fmt.scope) == ("method", "Store")
    # items inside 'mod tests' are scoped to the module, not hidden
    works = next(d for d in result.definitions if d.name == "it_works")
    assert (works.kind, works.scope) == ("function", "tests")


def test_rust_lifetimes_are_not_uses_and_chars_are_not_lifetimes():
    refs = scan("traps.rs").references
    assert "a" not in refs and "static" not in refs
    # the '{' char literal in Store::new did not open a block: get() is still a method
    assert ("method", "get", 40) in [(d.kind, d.name, d.line) for d in scan("traps.rs").definitions]


def test_java_nested_inner_enum_record_annotation():
    scopes = {(d.name, d.scope) for d in scan("Traps.java").definitions}
    assert ("Deeper", "Store.Inner") in scopes
    assert ("depth", "Store.Inner.Deeper") in scopes
    assert ("Mode", "Store.Mode") in scopes  # the enum constructor, not READ("r")
    assert ("twice", "Store.Entry") in scopes  # a record's method
    assert ("value", "Store.Marker") in scopes  # an annotation type's element
    assert ("nativeSize", "Store.Base") in scopes  # annotation among modifiers


def test_typescript_arrow_exports_and_declarations():
    by_name = {}
    for d in scan("traps.ts").definitions:
        by_name.setdefault(d.name, d)
    assert by_name["f"].kind == "function"
    assert by_name["g"].kind == "function"
    assert by_name["g"].signature == "export const g = async (a: number): Promise<void> =>"
    assert by_name["config"].kind == "const"
    assert by_name["Shape"].kind == "interface"
    assert by_name["Id"].kind == "type" and by_name["Color"].kind == "enum"
    assert by_name["declared"].kind == "function"
    assert by_name["Box"].end_line == 82  # the generic's { id: Id } is not the body


def test_references_count_uses_not_definitions():
    refs = scan("traps.ts").references
    assert refs["Shape"] == 3  # extends-clause, parameter type, construct signature
    assert refs["Injectable"] == 2  # import and decorator
    assert "Box" in refs and refs["Box"] == 1  # one use (create's return type)
    go = scan("traps.go").references
    assert go["Store"] == 4 and go["Context"] == 2 and "Put" not in go
    java = scan("Traps.java").references
    assert java["requireNonNull"] == 2 and "filter" not in java


LANG_FILES = ["traps.go", "traps.ts", "traps.jsx", "traps.rs", "Traps.java"]


@pytest.mark.parametrize("name", LANG_FILES)
def test_crlf_gives_the_same_definitions(name):
    text = (DATA / name).read_text(encoding="utf-8")
    lf = scan_source(name, text)
    crlf = scan_source(name, text.replace("\n", "\r\n"))
    assert [
        (d.kind, d.name, d.line, d.scope, d.signature, d.end_line) for d in crlf.definitions
    ] == [(d.kind, d.name, d.line, d.scope, d.signature, d.end_line) for d in lf.definitions]
    assert crlf.references == lf.references


@pytest.mark.parametrize("name", LANG_FILES)
def test_invalid_utf8_never_crashes(name):
    raw = (DATA / name).read_bytes()
    mangled = raw[:200] + b"\xff\xfe\xc3\xe2\x82" + raw[200:] + b'\n\x80\x81 {{{ "unterminated'
    result = scan_source(name, mangled.decode("utf-8", errors="replace"))
    assert result is not None and len(result.definitions) > 3


@pytest.mark.parametrize("name", LANG_FILES)
def test_deterministic(name):
    text = (DATA / name).read_text(encoding="utf-8")
    a, b = scan_source(name, text), scan_source(name, text)
    assert a == b and list(a.references.items()) == list(b.references.items())


@pytest.mark.parametrize(
    "text",
    ["", "\n", "{", "}", "}}}{{{", "/*", "'", '"', "`", "`${", "r#\"", "/* /*", "<<<", "((((",
     "class", "fn", "func (", "impl<", "@", "export const", "type (", "'a", "/* *",
     "`${/* x *", "`${`${/**", "f(`${(/*})`"],
)  # fmt: skip
@pytest.mark.parametrize("name", ["x.go", "x.ts", "x.js", "x.rs", "X.java"])
def test_odd_input_never_crashes(name, text):
    assert scan_source(name, text) is not None


def test_minified_multi_megabyte_line_is_linear():
    # a few MB of minified JavaScript on one line: completes (linear) and finds the top
    unit = 'var a%d=function(b){return b.map(function(c){return c+"}{"+/[}]/.test(c)})};'
    text = "".join(unit % i for i in range(40_000))
    assert len(text) > 2_500_000 and "\n" not in text
    result = scan_source("bundle.min.js", text)
    assert len(result.definitions) == 40_000
    assert result.definitions[-1].name == "a39999" and result.definitions[-1].line == 1


def test_many_named_functions_handed_to_calls_are_linear():
    # a bundle of defineGetter calls on one line: each statement's offsets are mapped back
    # through tens of thousands of flattened bodies (in log time, or this never ends)
    unit = "defineGetter(o,'k%d',function k%d(){return {a:[1]}});"
    text = "".join(unit % (i, i) for i in range(40_000))
    result = scan_source("bundle.js", text)
    assert len(result.definitions) == 40_000
    last = result.definitions[-1]
    assert (last.kind, last.name, last.scope, last.line) == ("method", "k39999", "o", 1)
    assert last.signature == "defineGetter(o,'k39999',function k39999()"


def test_unbalanced_braces_keep_what_came_before():
    text = "package p\n\nfunc A() {}\n\nfunc B() {\n\tif x {\n"
    assert [d.name for d in scan_source("p.go", text).definitions] == ["A", "B"]
    text = "class A {\n  m() {}\n}\n}\n}\nfunction after() {}\n"
    assert [d.name for d in scan_source("a.js", text).definitions] == ["A", "m", "after"]


def test_commonjs_and_express_style_assignments():
    text = (
        "var app = exports = module.exports = {};\n"
        "app.init = function init() {\n  this.cache = {};\n};\n"
        "req.get =\nreq.header = function header(name) {\n  return name;\n};\n"
        "exports.parse = (s) => s.trim();\n"
        "module.exports.VERSION = '1.0';\n"
        "Foo.prototype.bar = async function () {};\n"
    )
    got = [(d.kind, d.name, d.line, d.scope) for d in scan_source("app.js", text).definitions]
    assert got == [
        ("variable", "app", 1, None),
        ("method", "init", 2, "app"),
        ("method", "get", 5, "req"),
        ("function", "parse", 9, None),
        ("method", "bar", 11, "Foo"),
    ]


def test_unicode_identifiers():
    text = (
        "export declare const enum ɵAttributeMarker {\n  Classes = 1,\n}\n"
        "export declare function ɵɵdefineDirective<T>(def: T): void;\n"
        "const naïve = () => 1;\n"
    )
    got = [(d.kind, d.name, d.line) for d in scan_source("i.d.ts", text).definitions]
    assert got == [
        ("enum", "ɵAttributeMarker", 1),
        ("function", "ɵɵdefineDirective", 4),
        ("function", "naïve", 5),
    ]
    java = "class Größe {\n  void messen() {}\n}\n"
    assert [d.name for d in scan_source("G.java", java).definitions] == ["Größe", "messen"]
    rust = "fn grüße() {}\nstruct Straße;\n"
    assert [d.name for d in scan_source("g.rs", rust).definitions] == ["grüße", "Straße"]


# CommonJS as Node.js libraries write it (tests/data/scan/commonjs.js, middleware.js):
# require bindings are imports, not definitions; a module.exports function is named by its
# own name; a named function handed to a top-level call is a definition, of the object
# when the call is defineGetter(obj, 'key', function key() {...}).
COMMONJS = [
    ("variable", "req", 24, None, "var req = Object.create(http.IncomingMessage.prototype)", 24),
    ("method", "get", 28, "req", "req.get = req.header = function header(name)", 32),
    ("method", "accepts", 34, "req", "req.accepts = function ()", 37),
    ("method", "protocol", 43, "req", "defineGetter(req, 'protocol', function protocol()", 46),
    (
        "method",
        "host",
        48,
        "req",
        "defineGetter(req, 'host', deprecate.function(function host()",
        50,
    ),
    ("function", "isFresh", 56, None, "exports.isFresh = function isFresh(etag)", 58),
    ("function", "onExit", 60, None, "process.on('exit', function onExit(code)", 62),
    ("function", "defineGetter", 64, None, "function defineGetter(obj, name, getter)", 70),
]


def full(result) -> list[tuple]:
    return [(d.kind, d.name, d.line, d.scope, d.signature, d.end_line) for d in result.definitions]


def test_commonjs_requires_are_imports_and_named_function_expressions_define():
    r = scan("commonjs.js")
    assert full(r) == COMMONJS
    assert r.imports == ["accepts", "depd", "net", "url", "http", "fresh", "type-is"]
    # the required names stay uses: the graph links them to whoever defines them
    for name in ("accepts", "deprecate", "isIP", "parseUrl", "format", "fresh", "typeis"):
        assert r.references.get(name, 0) >= 1, name
    # an anonymous function (defineGetter(req, 'fresh', function () ...)) defines nothing
    assert "fresh" not in [d.name for d in r.definitions]


def test_module_exports_function_is_named_by_its_own_name():
    r = scan("middleware.js")
    assert full(r) == [
        ("function", "query", 12, None, "module.exports = function query(options)", 23)
    ]
    assert r.imports == ["utils-merge", "parseurl", "qs"]
    anonymous = "module.exports = async function (options) {\n  return options;\n};\n"
    got = [(d.kind, d.name, d.line) for d in scan_source("m.js", anonymous).definitions]
    assert got == [("function", "module.exports", 1)]
    arrow = "module.exports = (a, b) => a + b;\n"
    got = [(d.kind, d.name, d.line) for d in scan_source("m.js", arrow).definitions]
    assert got == [("function", "module.exports", 1)]


@pytest.mark.parametrize(
    "line",
    [
        "var accepts = require('accepts');",
        "const { a, b } = require('x');",
        "let isIP = require('net').isIP;",
        "var deprecate = require('depd')('express');",
        "var http = require('http'), fresh = require('fresh');",
        'const debug = require("debug")("app:server")',
    ],
)
def test_require_bindings_are_not_definitions(line):
    r = scan_source("a.js", line + "\nfunction after() {}\n")
    assert [d.name for d in r.definitions] == ["after"]
    assert r.imports


@pytest.mark.parametrize(
    "line",
    [
        "var parsed = parse(require('fs').readFileSync('x'));",  # a value, not an import
        "var mod = require(name);",  # not a module name: a computed require
        "var both = require('a') + 1;",
    ],
)
def test_values_computed_from_requires_are_still_definitions(line):
    r = scan_source("a.js", line + "\n")
    assert [d.kind for d in r.definitions] == ["variable"]


def test_calls_that_are_not_definitions():
    text = (
        "if (process.env.DEBUG) setup(function configure() {});\n"
        "describe('store', function () {\n  it('puts', function () {});\n});\n"
        "app.use(middleware(), function logger(req, res, next) { next(); });\n"
        "(function iife() {\n  helper(function inner() {});\n})();\n"
        "defineGetter(this, 'version', function version() {});\n"
    )
    got = [(d.kind, d.name, d.line, d.scope) for d in scan_source("a.js", text).definitions]
    # only the named function handed to a top-level call; nothing from if, anonymous
    # callbacks or code inside a function body
    assert got == [("function", "logger", 5, None), ("function", "version", 9, None)]


# TypeScript after regular expressions holding '/' in a character class, one of them right
# after a comment (tests/data/scan/paths.ts): nothing after them may be lost.
PATHS_TS = [
    ("function", "isEscaping", 5),
    ("type", "RealpathFn", 14),
    ("const", "locales", 16),
    ("type", "Locale", 21),
    ("function", "stripSuffix", 23),
    ("type", "PageHeadContext", 29),
    ("function", "baseName", 34),
    ("function", "resolveInside", 39),
]


def test_regex_with_slash_in_a_class_after_a_comment_hides_nothing():
    r = scan("paths.ts")
    assert [(d.kind, d.name, d.line) for d in r.definitions] == PATHS_TS
    sigs = {d.name: d.signature for d in r.definitions}
    assert sigs["RealpathFn"] == "type RealpathFn = (p: string) => Promise<string>"
    assert sigs["Locale"] == "export type Locale = keyof typeof locales"
    assert sigs["PageHeadContext"] == "type PageHeadContext ="
    # the words inside the regular expressions are not uses
    assert "zA" not in r.references and "md" not in r.references
    assert r.references["RealpathFn"] == 1  # the parameter's type


@pytest.mark.parametrize(
    ("before", "regex"),
    [
        ("ok ||\n  // a comment with a quote: it's\n  ", "/^[a-zA-Z]:(?![/\\\\])/.test(p)"),
        ("ok ||\n  /* why: `x` */ ", "/[/\\\\]/.test(p)"),
        ("p.split(", "/[/\\\\]/)"),
        ("`${p.split(", "/[/\\\\]/).pop()}`"),
        ("!", "/[/`]/.test(p)"),
    ],
)
def test_regex_literals_mask_whole(before, regex):
    text = f"const bad = {before}{regex};\ntype RealpathFn = (p: string) => string;\n"
    r = scan_source("x.ts", text)
    assert [d.name for d in r.definitions] == ["bad", "RealpathFn"]
