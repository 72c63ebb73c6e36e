"""docs/api.md's examples run as they are written: the page cannot drift from the code.

Every ```python block is executed on its own (a fresh namespace), in an empty directory
(the test's tmp_path) with CTX_STORE inside it (conftest's ``isolated_env``), as a reader
pasting it would run it. A block that raises, or whose assertion no longer holds, fails
its own test case, named by the section it is in.
"""

from __future__ import annotations

import re

import pytest
from helpers import REPO

PAGE = REPO / "docs" / "api.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def examples(text: str) -> list[tuple[str, str]]:
    """(the heading above it, the code) of every ```python block of TEXT, in order. The
    code is preceded by blank lines, so that a traceback names the page's line."""
    found = []
    for m in BLOCK.finditer(text):
        headings = re.findall(r"^## (.+)$", text[: m.start()], re.M)
        before = text[: m.start(1)].count("\n")
        found.append((headings[-1] if headings else "top", "\n" * before + m.group(1)))
    return found


EXAMPLES = examples(PAGE.read_text(encoding="utf-8"))


def test_the_page_has_an_example_for_each_function():
    # count, stash/read, map, pack, compact: one block each at least.
    sections = {heading.split(":")[0] for heading, _ in EXAMPLES}
    assert sections >= {"Count", "Stash and read", "Map", "Pack", "Compact"}


def test_a_broken_example_is_caught(tmp_path):
    # The extraction must hand the code over whole: a block that fails must fail here.
    code = examples("## X\n\n```python\nx = 1\nassert x == 2\n```\n")[0][1]
    with pytest.raises(AssertionError):
        exec(compile(code, "api.md", "exec"), {"__name__": "api_example"})


@pytest.mark.parametrize(
    "code", [code for _, code in EXAMPLES], ids=[heading.split(":")[0] for heading, _ in EXAMPLES]
)
def test_example_runs(code, tmp_path, monkeypatch, isolated_env):
    monkeypatch.chdir(tmp_path)
    assert str(isolated_env).startswith(str(tmp_path))  # the store is the test's own
    exec(compile(code, str(PAGE), "exec"), {"__name__": "api_example"})
