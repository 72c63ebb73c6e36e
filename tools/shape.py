"""The codebase's shape, as docs/ARCHITECTURE.md promises it: no module of ctxtools/ over
MAX_MODULE_LINES lines, no function over MAX_FUNCTION_LINES (its docstring aside; a nested
function counts inside its parent too), no import cycle, and no import going up the floors
(FLOORS, lowest first: a package imports its own floor and the floors below, never one
above; so the library never imports ``ctxtools.cli``, ``source`` never imports a command's
package, and the bottom, BOTTOM, imports only the bottom).

Every import counts: at module level, inside a function, under ``if TYPE_CHECKING:``. A lazy
import only puts off its cost, and a type-only one is still a dependency: either may go
down the layers, never up or round. A command module of ctxtools/cli/ is at most
MAX_COMMAND_LINES lines apart from its help text (the command's docstring, ``help=``
strings): a command parses, calls the library and prints.

    python tools/shape.py          # prints what is over, exits 1 when anything is

tests/lib/test_shape.py runs the same checks.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "ctxtools"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
# The bottom floor (docs/ARCHITECTURE.md): disk, the caches' one file format, the ruler,
# processes and the fan-out to them, whether bytes are text, what the user excludes,
# secrets, what a text's words are, the defaults, errors, the store's root, how a name is
# shown (quoting: fsutil's and the listing's messages name files by its rule).
BOTTOM = (
    "store",
    "tokens",
    "runner",
    "forked",
    "fsutil",
    "memofile",
    "binary",
    "pathfilter",
    "secrets",
    "analyzer",
    "identifiers",
    "defaults",
    "errors",
    "config",
    "lazy",
    "quoting",
)
# What every command shares about source code: listing, scanners, scan cache, classify.
SOURCE = ("source",)
TOP = "cli"
# Lowest first; None is every package no floor names (the commands' logic: repomap, pack,
# excerpt, retrieval, mentions, count ...).
FLOORS: tuple[tuple[str, ...] | None, ...] = (BOTTOM, SOURCE, None, (TOP,))
MAX_COMMAND_LINES = 180


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> its file, for every module of the package at ROOT."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def long_modules(root: Path = ROOT) -> list[tuple[str, int]]:
    rows = []
    for name, path in modules(root).items():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE_LINES:
            rows.append((name, n))
    return rows


def long_functions(root: Path = ROOT) -> list[tuple[str, int]]:
    rows = []
    for name, path in modules(root).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            length = node.end_lineno - node.lineno + 1
            first = node.body[0]
            doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            if doc and isinstance(first.value.value, str):
                length -= first.end_lineno - first.lineno + 1
            if length > MAX_FUNCTION_LINES:
                rows.append((f"{name}.{node.name} (line {node.lineno})", length))
    return rows


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules NAME imports, anywhere in it (see the module's docstring)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.add(full if full in known else base)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m in known and m != name}


def import_cycles(root: Path = ROOT) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively)."""
    graph = import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for start in graph:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(graph[node]):
                work.append((node, i + 1))
                nxt = graph[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    group.append(top)
                    if top == node:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return cycles


def import_graph(root: Path = ROOT) -> dict[str, list[str]]:
    """Module -> the package's modules it imports (sorted)."""
    known = modules(root)
    return {name: sorted(_imports(name, path, known)) for name, path in known.items()}


def _layer(name: str) -> str:
    """The first part of NAME under the package: ``pack`` for ``ctxtools.pack.build``."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def _floor(layer: str, floors: tuple[tuple[str, ...] | None, ...]) -> int:
    """The index in FLOORS of the floor LAYER (a package, or a top-level module) is on."""
    rest = None
    for i, floor in enumerate(floors):
        if floor is None:
            rest = i
        elif layer in floor:
            return i
    if rest is None:
        raise ValueError(f"{layer!r} is on no floor")
    return rest


def upward_imports(
    root: Path = ROOT, floors: tuple[tuple[str, ...] | None, ...] = FLOORS
) -> list[tuple[str, str]]:
    """(importer, imported) for every import that goes up FLOORS: to a floor above the
    importer's."""
    rows = []
    for name, deps in import_graph(root).items():
        here = _floor(_layer(name), floors)
        for dep in deps:
            if _floor(_layer(dep), floors) > here:
                rows.append((name, dep))
    return rows


def _help_lines(tree: ast.Module) -> set[int]:
    """The lines of TREE that are help text: a click command's docstring, the strings given
    as ``help=``, and those an ``*_option``/``*_flag`` factory takes as its help."""
    lines: set[int] = set()

    def add(node: ast.AST) -> None:
        lines.update(range(node.lineno, node.end_lineno + 1))

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.body:
            first = node.body[0]
            command = any("command" in ast.unparse(d) for d in node.decorator_list)
            if command and isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                add(first)
        elif isinstance(node, ast.keyword) and node.arg == "help":
            add(node.value)
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith(("_option", "_flag")):
            for a in node.args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    add(a)
    return lines


def long_commands(root: Path = ROOT) -> list[tuple[str, int]]:
    """The command modules of ROOT/cli over MAX_COMMAND_LINES lines apart from help text."""
    rows = []
    for path in sorted((root / "cli").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        if not any(
            isinstance(n, ast.FunctionDef)
            and any("command" in ast.unparse(d) for d in n.decorator_list)
            for n in tree.body
        ):
            continue
        n = len(text.splitlines()) - len(_help_lines(tree))
        if n > MAX_COMMAND_LINES:
            rows.append((f"{root.name}.cli.{path.stem}", n))
    return rows


def main() -> int:
    bad = 0
    for name, n in long_commands():
        print(f"command over {MAX_COMMAND_LINES} lines apart from help: {name} ({n})")
        bad += 1
    for name, n in long_modules():
        print(f"module over {MAX_MODULE_LINES} lines: {name} ({n})")
        bad += 1
    for name, n in long_functions():
        print(f"function over {MAX_FUNCTION_LINES} lines: {name} ({n})")
        bad += 1
    for group in import_cycles():
        print(f"import cycle: {' <-> '.join(group)}")
        bad += 1
    for name, dep in upward_imports():
        print(f"import going up the floors: {name} -> {dep}")
        bad += 1
    print(f"{len(modules())} modules; {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
