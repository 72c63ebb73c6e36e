"""The codebase keeps the shape docs/ARCHITECTURE.md describes (tools/shape.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("shape", REPO / "tools" / "shape.py")
shape = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shape)


def test_ctxtools_has_no_long_module_no_long_function_and_no_import_cycle():
    assert shape.long_modules() == []
    assert shape.long_functions() == []
    assert shape.import_cycles() == []
    assert len(shape.modules()) > 100


def test_every_command_module_is_within_the_bar_apart_from_its_help():
    assert shape.long_commands() == []


def test_the_command_bar_counts_code_not_help(tmp_path):
    cli = tmp_path / "pkg" / "cli"
    cli.mkdir(parents=True)
    doc = "\n".join(["    One line of help."] * 300)
    code = "\n".join(f"    x{i} = {i}" for i in range(170))
    (cli / "short.py").write_text(
        "import click\n\n\n@click.command()\n"
        '@click.option("--x", help="""\n' + "help\n" * 50 + '""")\n'
        f'def cli(x):\n    """Doc.\n\n{doc}\n    """\n{code}\n'
    )
    (cli / "long.py").write_text(
        f'import click\n\n\n@click.command()\ndef cli():\n    """Doc."""\n{code}\n{code}\n'
    )
    (cli / "helper.py").write_text("\n" * 400)  # not a command: no bar
    assert [name for name, _ in shape.long_commands(tmp_path / "pkg")] == ["pkg.cli.long"]


def test_the_checks_find_what_they_look_for(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub import b\n")
    body = "\n".join(f"    x{i} = {i}" for i in range(85))
    (pkg / "a.py").write_text(
        '"""A."""\nfrom pkg import sub\n\n\ndef short():\n    """Doc."""\n    return 1\n\n\n'
        f"def long():\n{body}\n" + "\n" * 600
    )
    (pkg / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nfrom pkg import a\n\n"
        "if TYPE_CHECKING:\n    from pkg import c\n"
    )
    (pkg / "c.py").write_text("def f():\n    from pkg import a\n")
    (pkg / "d.py").write_text("def f():\n    from pkg import c\n")  # lazy, and down
    assert [name for name, _ in shape.long_modules(pkg)] == ["pkg.a"]
    assert [name.split(" ")[0] for name, _ in shape.long_functions(pkg)] == ["pkg.a.long"]
    # a -> sub -> sub.b -> a is a cycle, and c joins it: b imports it for its types, and it
    # imports a inside a function. d's lazy import of c goes down: no cycle.
    assert shape.import_cycles(pkg) == [["pkg.a", "pkg.c", "pkg.sub", "pkg.sub.b"]]


def test_an_import_going_up_the_layers_is_found_lazy_or_not(tmp_path):
    pkg = tmp_path / "pkg"
    for layer in ("low", "mid", "top"):
        (pkg / layer).mkdir(parents=True)
        (pkg / layer / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "disk.py").write_text("def f():\n    from pkg.mid import logic\n")
    (pkg / "mid" / "logic.py").write_text(
        "from pkg.low import disk\n\n\ndef g():\n    import pkg.top.cmd\n"
    )
    (pkg / "top" / "cmd.py").write_text("from pkg.mid import logic\n")
    up = shape.upward_imports(pkg, floors=(("low",), None, ("top",)))
    assert up == [("pkg.low.disk", "pkg.mid.logic"), ("pkg.mid.logic", "pkg.top.cmd")]


def test_a_floor_between_the_bottom_and_the_rest_is_kept_both_ways(tmp_path):
    """As ``source`` sits between the bottom and the commands' packages: it may import the
    bottom, a command's package may import it, and neither it the commands' packages nor
    the bottom it."""
    pkg = tmp_path / "pkg"
    for layer in ("low", "shared", "feature"):
        (pkg / layer).mkdir(parents=True)
        (pkg / layer / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "disk.py").write_text("def f():\n    from pkg.shared import scan\n")
    (pkg / "shared" / "scan.py").write_text(
        "from pkg.low import disk\n\n\ndef g():\n    from pkg.feature import use\n"
    )
    (pkg / "feature" / "use.py").write_text(
        "from pkg.shared import scan\nfrom pkg.low import disk\n"
    )
    floors = (("low",), ("shared",), None)
    up = shape.upward_imports(pkg, floors=floors)
    assert up == [("pkg.low.disk", "pkg.shared.scan"), ("pkg.shared.scan", "pkg.feature.use")]
    # with the middle floor folded into the rest, only the bottom's import goes up
    assert shape.upward_imports(pkg, floors=(("low",), None)) == [
        ("pkg.low.disk", "pkg.shared.scan")
    ]


def test_source_is_below_every_command_package_and_above_the_bottom():
    assert shape.FLOORS.index(shape.SOURCE) == shape.FLOORS.index(shape.BOTTOM) + 1
    for package in ("repomap", "pack", "excerpt", "retrieval", "mentions", "count"):
        assert shape._floor(package, shape.FLOORS) > shape._floor("source", shape.FLOORS)
    assert shape._floor("store", shape.FLOORS) < shape._floor("source", shape.FLOORS)
    assert shape.upward_imports() == []
