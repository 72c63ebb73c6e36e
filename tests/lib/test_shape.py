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
    assert [name for name, _ in shape.long_modules(pkg)] == ["pkg.a"]
    assert [name.split(" ")[0] for name, _ in shape.long_functions(pkg)] == ["pkg.a.long"]
    # a -> sub -> sub.b -> a is a cycle; c's lazy import and b's TYPE_CHECKING one are not
    assert shape.import_cycles(pkg) == [["pkg.a", "pkg.sub", "pkg.sub.b"]]
