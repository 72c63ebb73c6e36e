"""ctxtools.mcp.roots: every path, symlink and @-mention checked against the roots."""

from __future__ import annotations

import os

import pytest
from helpers import write

from ctxtools.errors import InputError
from ctxtools.mcp.roots import Roots


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "root"
    write(root, "src/a.py", "x = 1\n")
    secret = write(tmp_path, "outside/secret.txt", "no\n")
    os.symlink(secret, root / "escape.txt")
    os.symlink(root / "src" / "a.py", root / "inside.py")
    os.symlink(tmp_path / "outside", root / "outdir")
    return root


def test_relative_paths_are_taken_from_the_primary_root(tree):
    roots = Roots([tree])
    assert roots.check("src/a.py") == str(tree / "src" / "a.py")
    assert roots.check(str(tree / "src")) == str(tree / "src")
    assert roots.check("inside.py") == str(tree / "inside.py")  # a symlink that stays in
    assert roots.check("src/not-yet.py") == str(tree / "src" / "not-yet.py")


@pytest.mark.parametrize(
    "path",
    [
        "../outside/secret.txt",
        "escape.txt",
        "outdir/secret.txt",
        "/etc/passwd",
        "src/../../outside",
    ],
)
def test_paths_and_symlinks_leaving_the_roots_are_refused_by_name(tree, path):
    with pytest.raises(InputError) as err:
        Roots([tree]).check(path)
    assert str(err.value).startswith(f"{path}: outside the roots ({tree})")
    assert "--root" in str(err.value)


def test_several_roots_and_where_they_came_from(tree, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    roots = Roots([tree, other, tree], "the client's roots")
    assert roots.dirs == [str(tree), str(other)]
    assert roots.check(str(other / "f")) == str(other / "f")
    assert roots.root_of(str(other / "f")) == str(other)
    with pytest.raises(InputError, match="the client's roots"):
        roots.check(str(tmp_path / "outside"))


def test_globs_are_checked_by_their_fixed_directories(tree):
    roots = Roots([tree])
    assert roots.check("src/*.py") == str(tree / "src" / "*.py")
    with pytest.raises(InputError, match="outside the roots"):
        roots.check("../outside/*.txt")


def test_handle_references_pass_and_empty_paths_do_not(tree):
    roots = Roots([tree])
    assert roots.check_all(["ctx:default/x", "src/a.py"]) == [
        "ctx:default/x",
        str(tree / "src" / "a.py"),
    ]
    with pytest.raises(InputError, match="empty path"):
        roots.check("")


@pytest.mark.parametrize(
    "task", ["fix @../outside/secret.txt now", "see @escape.txt", "@/etc/passwd"]
)
def test_mentions_leaving_the_roots_are_refused(tree, task):
    with pytest.raises(InputError, match="outside the roots"):
        Roots([tree]).check_mentions(task, str(tree))


def test_mentions_inside_the_root_and_other_kinds_pass(tree):
    Roots([tree]).check_mentions(
        "fix @src/a.py and @a.py, @ctx:tests, @skill:review, `@x/../../y`", str(tree)
    )
