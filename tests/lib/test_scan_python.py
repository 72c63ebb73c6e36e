"""The Python scanner: exact definitions on a file full of traps, references, imports,
odd input, and agreement with the stdlib ``ast`` on real Python files (this repository)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ctxtools.source.scan import Definition, ScanResult, language_for, scan_bytes, scan_source

DATA = Path(__file__).parents[1] / "data" / "scan"
REPO = Path(__file__).parents[2]


def defs(result: ScanResult) -> list[tuple]:
    return [(d.kind, d.name, d.line, d.scope, d.signature) for d in result.definitions]


def test_python_traps_exact_definitions():
    result = scan_source("traps.py", (DATA / "traps.py.txt").read_text())
    assert result.language == "python"
    assert defs(result) == [
        ("variable", "MAX_SIZE", 14, None, "MAX_SIZE = 10"),
        ("variable", "timeout", 15, None, "timeout: float = 2.5"),
        (
            "function",
            "fetch",
            22,
            None,
            "async def fetch(url: str, timeout: float = 1.0) -> bytes:",
        ),
        ("class", "Outer", 35, None, "class Outer(Base, metaclass=Meta):"),
        ("class", "Inner", 39, "Outer", "class Inner:"),
        ("method", "deep", 40, "Outer.Inner", "def deep(self):"),
        ("method", "name", 43, "Outer", "def name(self) -> str:"),
        (
            "method",
            "after_comment",
            46,
            "Outer",
            'def after_comment(self, value="it\'s: a (string"):',
        ),
        ("function", "only_typing", 51, None, 'def only_typing(x: "Field") -> None:'),
        ("function", "tail", 54, None, "def tail():"),
    ]
    ends = {d.name: d.end_line for d in result.definitions}
    assert ends == {
        "MAX_SIZE": 14,
        "timeout": 15,
        "fetch": 32,
        "Outer": 47,
        "Inner": 40,
        "deep": 40,
        "name": 44,
        "after_comment": 47,
        "only_typing": 51,
        "tail": 54,
    }


def test_python_references_and_imports():
    result = scan_source("traps.py", (DATA / "traps.py.txt").read_text())
    refs = result.references
    # uses: import, base class, call, attribute access, annotation
    assert refs["Model"] == 2
    assert refs["helpers"] == 2
    assert refs["Base"] == 1 and refs["Meta"] == 1
    assert refs["get"] == 1 and refs["_name"] == 1 and refs["float"] == 2
    # a definition site is not a use; a later use is
    assert "fetch" not in refs and "deep" not in refs
    assert refs["Outer"] == 1
    # nothing from comments, docstrings or strings
    for word in ("NotAClass", "not_a_function", "FakeInComment", "InString", "commented_out"):
        assert word not in refs
    # no keywords, no self
    assert "def" not in refs and "class" not in refs and "self" not in refs
    assert result.imports == ["os", "sys", ".models", "."]


def test_python_strings_never_define():
    text = (
        's = """\ndef a():\n    pass\n"""\n'
        "t = '''class B:\\n'''\n"
        "u = 'def c(): pass'\n"
        'v = rb"class D: pass"\n'
        "w = f'{x} def e(): pass'\n"
        "# def f(): pass\n"
        "def real():\n"
        '    """Docstring.\n\ndef g():\n"""\n'
        "    return 1\n"
    )
    result = scan_source("s.py", text)
    assert [(d.name, d.line, d.end_line) for d in result.definitions] == [("real", 10, 15)]
    assert "rb" not in result.references and "f" not in result.references


def test_python_unterminated_string_and_python2():
    text = 'print "hello"\ndef ok(a, (b, c)):\n    s = """never closed\ndef hidden(): pass\n'
    result = scan_source("old.py", text)
    assert [d.name for d in result.definitions] == ["ok"]


def test_python_crlf_and_invalid_utf8():
    raw = (
        b"class A:\r\n    def m(self):\r\n        return '\xff\xfe'\r\n\r\n"
        b"def f(x):\r\n    pass\r\n"
    )
    result = scan_bytes("x.py", raw)
    assert [
        (d.kind, d.name, d.line, d.scope, d.signature, d.end_line) for d in result.definitions
    ] == [
        ("class", "A", 1, None, "class A:", 3),
        ("method", "m", 2, "A", "def m(self):", 3),
        ("function", "f", 5, None, "def f(x):", 6),
    ]


def test_python_huge_single_line_is_linear():
    text = "x = [" + ", ".join(f"'s{i}'" for i in range(300_000)) + "]  # " + "y" * 1000
    result = scan_source("big.py", text)
    assert result.definitions == []
    assert result.references == {"x": 1}


def test_python_odd_input_never_crashes():
    for text in [
        "",
        "\n",
        "def",
        "class (",
        "def f(:",
        "\x00\x00def g(): pass",
        "'''",
        '"',
        "@decorator\n",
        "    def indented_first(): pass\n",
        "def f(\n" * 3000,
    ]:
        scan_source("odd.py", text)


def test_python_deterministic():
    text = (DATA / "traps.py.txt").read_text()
    a, b = scan_source("traps.py", text), scan_source("traps.py", text)
    assert a == b
    assert list(a.references.items()) == list(b.references.items())


def _ast_definitions(tree: ast.Module) -> list[tuple[str, str, int, str | None]]:
    out = []

    def visit(body, scope):
        for node in body:
            if isinstance(node, ast.ClassDef):
                out.append(("class", node.name, node.lineno, ".".join(scope) or None))
                visit(node.body, [*scope, node.name])
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                kind = "method" if scope else "function"
                out.append((kind, node.name, node.lineno, ".".join(scope) or None))
            elif isinstance(node, ast.If | ast.Try | ast.With | ast.For | ast.While):
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, []), scope)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body, scope)

    visit(tree.body, [])
    return out


def test_python_agrees_with_ast_on_real_files():
    tests = sorted((REPO / "tests").glob("*.py")) + sorted((REPO / "tests").glob("*/*.py"))
    files = sorted((REPO / "ctxtools").rglob("*.py")) + tests
    assert len(files) > 10
    total = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        expected = _ast_definitions(ast.parse(text))
        lineno = {(k, n, line) for k, n, line, _ in expected}
        got = [
            (d.kind, d.name, d.line, d.scope)
            for d in scan_source(str(path), text).definitions
            if d.kind != "variable"
        ]
        # decorated definitions: ast's lineno is the def line too (3.8+)
        assert got == expected, path
        assert {(k, n, line) for k, n, line, _ in got} == lineno
        total += len(got)
    assert total > 50


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.py", "python"),
        ("x.pyi", "python"),
        ("main.go", "go"),
        ("app.js", "javascript"),
        ("app.jsx", "javascript"),
        ("m.mjs", "javascript"),
        ("c.cjs", "javascript"),
        ("t.ts", "typescript"),
        ("t.tsx", "typescript"),
        ("t.d.ts", "typescript"),
        ("t.mts", "typescript"),
        ("t.cts", "typescript"),
        ("lib.rs", "rust"),
        ("A.java", "java"),
        ("README.md", None),
        ("Makefile", None),
        ("dir.py/file", None),
        ("X.PY", "python"),
    ],
)
def test_language_for(path, language):
    assert language_for(path) == language


def test_scan_source_unknown_language():
    assert scan_source("notes.txt", "def f(): pass") is None
    assert scan_bytes("notes.txt", b"\xff") is None


def test_definition_is_frozen():
    d = Definition("function", "f", 1, "def f():", None, 1)
    with pytest.raises(AttributeError):
        d.name = "g"  # type: ignore[misc]


def test_python_module_level_constants():
    text = (
        "A, B = 1, 2\n"
        "if sys.platform == 'win32':\n"
        "    LOCK = 1\n"
        "else:\n"
        "    LOCK = 2\n"
        "settings.configure(\n"
        "    DEBUG=True,\n"
        "    SECRET_KEY='x',\n"
        ")\n"
        "def f():\n"
        "    LOCAL = 1\n"
        "class C:\n"
        "    ATTR = 1\n"
        "x: int = 3\n"
        "__all__ = ['A']\n"
    )
    got = [(d.kind, d.name, d.line, d.signature) for d in scan_source("c.py", text).definitions]
    assert got == [
        ("variable", "A", 1, "A, B = 1, 2"),
        ("variable", "B", 1, "A, B = 1, 2"),
        ("variable", "LOCK", 3, "LOCK = 1"),
        ("variable", "LOCK", 5, "LOCK = 2"),
        ("function", "f", 10, "def f():"),
        ("class", "C", 12, "class C:"),
        ("variable", "x", 14, "x: int = 3"),
    ]
