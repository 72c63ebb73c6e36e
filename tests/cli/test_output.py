"""`-o FILE` (ctx-pack is the one command with it): never over one of the run's inputs,
whatever name reaches it, and an existing file keeps its mode (issue 27, items 1 and 15)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

WORK = "def important_total(rows):\n    return sum(r.amount for r in rows)\n"


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "tree"
    (root / "o").mkdir(parents=True)
    (root / "o" / "work.py").write_text(WORK)
    (root / "o" / "other.py").write_text("def other():\n    return 2\n")
    monkeypatch.chdir(root)
    return root


def refused(script_runner, *args, stdin=None):
    r = script_runner.run(["ctx-pack", "--tokens", "3000", *args], stdin=stdin)
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("ctx-pack: error: -o ")
    assert "is an input of this pack" in r.stderr
    return r


def same_as_work(root: Path, name: str) -> None:
    assert (root / name).read_text() == WORK


def test_o_naming_a_mentioned_file_is_refused_and_the_file_kept(script_runner, tree):
    # the case: the @-mention resolves to the file -o names
    r = refused(script_runner, "-q", "fix important in @work.py", "o/", "-o", "o/work.py")
    assert "@-mention o/work.py" in r.stderr
    same_as_work(tree, "o/work.py")


def test_o_naming_an_argument_by_any_name_is_refused(script_runner, tree):
    os.link(tree / "o" / "work.py", tree / "hard.py")
    (tree / "soft.py").symlink_to(tree / "o" / "work.py")
    for output in ("o/work.py", "hard.py", "soft.py", "o/../o/work.py", str(tree / "o/work.py")):
        refused(script_runner, "-q", "fix important", "o/work.py", "-o", output)
        same_as_work(tree, "o/work.py")
    refused(script_runner, "-q", "fix important", "soft.py", "-o", "hard.py")
    same_as_work(tree, "o/work.py")
    assert (tree / "hard.py").stat().st_ino == (tree / "o" / "work.py").stat().st_ino


def test_o_naming_an_instruction_memory_or_list_file_is_refused(script_runner, tree):
    (tree / "AGENTS.md").write_text("# Rules\n\nKeep totals exact.\n")
    refused(script_runner, "-q", "fix important", "o/work.py", "-o", "AGENTS.md")
    assert (tree / "AGENTS.md").read_text() == "# Rules\n\nKeep totals exact.\n"
    (tree / "notes").mkdir()
    (tree / "notes" / "m.md").write_text("# totals\n\nround at the end\n")
    for memory in ("notes", "notes/m.md"):
        refused(script_runner, "-q", "fix", "o/work.py", "--memory", memory, "-o", "notes/m.md")
    assert (tree / "notes" / "m.md").read_text() == "# totals\n\nround at the end\n"
    (tree / "list").write_text("o/work.py\n")
    refused(script_runner, "-q", "fix", "--files-from", "list", "-o", "list")
    assert (tree / "list").read_text() == "o/work.py\n"
    r = refused(script_runner, "-q", "fix", "--files-from", "list", "-o", "o/work.py")
    assert "(--files-from o/work.py)" in r.stderr
    same_as_work(tree, "o/work.py")


def test_o_naming_the_file_on_standard_input_is_refused(tree):
    (tree / "task.txt").write_text("fix important\n")
    exe = Path(sys.executable).parent / "ctx-pack"
    with open(tree / "task.txt", "rb") as fh:  # standard input is the file itself
        r = subprocess.run(
            [exe, "-q", "-", "o/work.py", "-o", "task.txt"], stdin=fh, capture_output=True
        )
    assert r.returncode == 2 and b"(standard input)" in r.stderr
    assert r.stderr.count(b"\n") == 1
    assert (tree / "task.txt").read_text() == "fix important\n"


def test_o_over_an_earlier_pack_in_the_packed_directory_still_works(script_runner, tree):
    # a file a directory turns up is no input: the pack's own output is left out of it
    before = script_runner.run(["ctx-pack", "-q", "fix important", "o/"]).stdout
    for _ in range(2):
        r = script_runner.run(["ctx-pack", "-q", "fix important", "o/", "-o", "o/pack.md"])
        assert r.returncode == 0, r.stderr
        assert (tree / "o" / "pack.md").read_text() == before


@pytest.mark.parametrize("mode", [0o4755, 0o2750, 0o1777, 0o640, 0o6711])
def test_o_over_an_existing_file_keeps_its_mode_exactly(script_runner, tree, mode):
    target = tree / "out.md"
    target.write_text("old\n")
    target.chmod(mode)
    r = script_runner.run(["ctx-pack", "-q", "fix important", "o/work.py", "-o", "out.md"])
    assert r.returncode == 0, r.stderr
    assert target.read_text().startswith("# ") and "important_total" in target.read_text()
    assert oct(stat.S_IMODE(target.stat().st_mode)) == oct(mode)


def test_kept_mode_drops_a_set_id_bit_whose_owner_was_not_kept():
    from ctxtools.fsutil import kept_mode

    old = os.stat_result((stat.S_IFREG | 0o6755, 0, 0, 1, 1000, 1000, 0, 0, 0, 0))
    same = os.stat_result((stat.S_IFREG | 0o600, 0, 0, 1, 1000, 1000, 0, 0, 0, 0))
    other_user = os.stat_result((stat.S_IFREG | 0o600, 0, 0, 1, 1001, 1000, 0, 0, 0, 0))
    other_group = os.stat_result((stat.S_IFREG | 0o600, 0, 0, 1, 1000, 1001, 0, 0, 0, 0))
    assert kept_mode(old, same) == 0o6755
    assert kept_mode(old, other_user) == 0o2755
    assert kept_mode(old, other_group) == 0o4755

