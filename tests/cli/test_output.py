"""`-o FILE`: never over one of the run's inputs, whatever name reaches it, and an existing
file keeps its mode (issue 27, items 1 and 15). ctx-pack's guard is the library's; ctx-excerpt,
ctx-read, ctx-repomap and ctx-compact share the CLI's (``refuse_output_over_input``)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_bytes

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


def test_o_over_a_source_file_of_the_packed_directory_is_refused(script_runner, tree):
    # `ctx-pack -q ... -o o/work.py o/` replaced work.py with the pack: a file a directory
    # turned up was taken for an earlier pack without looking at it. Only a pack (any
    # format, a part of a split one) or an empty file is now replaced in a packed directory.
    for output in ("o/work.py", "o/../o/work.py", str(tree / "o" / "work.py")):
        r = refused(script_runner, "-q", "fix important", "o/", "-o", output)
        assert "(o/work.py, which ctx-pack did not write)" in r.stderr
        same_as_work(tree, "o/work.py")
    r = refused(script_runner, "-q", "fix important", ".", "-o", "o/other.py")
    assert "(o/other.py, which ctx-pack did not write)" in r.stderr
    assert (tree / "o" / "other.py").read_text() == "def other():\n    return 2\n"
    for fmt, name in (("json", "o/p.json"), ("xml", "o/p.xml"), ("markdown", "o/p.md")):
        first = script_runner.run(["ctx-pack", "-q", "fix important", "--format", fmt, "o/",
                                   "-o", name])
        assert first.returncode == 0, first.stderr
        again = script_runner.run(["ctx-pack", "-q", "fix important", "--format", fmt, "o/",
                                   "-o", name])
        assert again.returncode == 0, again.stderr  # its own earlier pack: replaced
    (tree / "o" / "empty.md").write_text("")
    r = script_runner.run(["ctx-pack", "-q", "fix important", "o/", "-o", "o/empty.md"])
    assert r.returncode == 0 and "important_total" in (tree / "o" / "empty.md").read_text()


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



def _other_refused(r, found: str) -> None:
    assert r.returncode == 2, r.stderr
    assert r.stdout == "" and "Traceback" not in r.stderr and r.stderr.count("\n") == 1
    assert f"is an input of this run ({found}); nothing was written" in r.stderr


def test_the_other_commands_never_write_over_an_input(script_runner, tree):
    # ctx-excerpt -o work.py work.py and ctx-repomap -o src/x.py . replaced the file they
    # read with their output: the guard was ctx-pack's alone.
    os.link(tree / "o" / "work.py", tree / "hard.py")
    for output in ("o/work.py", "hard.py", str(tree / "o" / "work.py")):
        r = script_runner.run(["ctx-excerpt", "-q", "important", "-o", output, "o/work.py"])
        _other_refused(r, "FILE o/work.py")
    (tree / "list").write_text("o/work.py\n")
    r = script_runner.run(["ctx-excerpt", "-q", "important", "--files-from", "list",
                           "-o", "o/work.py"])
    _other_refused(r, "--files-from entry o/work.py")
    r = script_runner.run(["ctx-excerpt", "-q", "important", "--files-from", "list", "-o", "list"])
    _other_refused(r, "--files-from list")
    r = script_runner.run(["ctx-repomap", "-o", "o/other.py", "."])
    _other_refused(r, "o/other.py, a file of the mapped directory")
    transcript = tree / "t.json"
    transcript.write_text('[{"role": "user", "content": "hi"}]')
    r = script_runner.run(["ctx-compact", "--limit", "1000", "t.json", "-o", "t.json"])
    _other_refused(r, "FILE t.json")
    assert transcript.read_text() == '[{"role": "user", "content": "hi"}]'
    same_as_work(tree, "o/work.py")
    assert (tree / "o" / "other.py").read_text() == "def other():\n    return 2\n"
    # a file that is no input is written as before, a map beside the code included
    for argv in (["ctx-excerpt", "-q", "important", "o/work.py", "-o", "out.md"],
                 ["ctx-repomap", ".", "-o", "o/MAP.md"]):
        r = script_runner.run(argv)
        assert r.returncode == 0, r.stderr
    assert "important_total" in (tree / "out.md").read_text()
    assert "work.py" in (tree / "o" / "MAP.md").read_text()


def test_ctx_read_never_writes_over_the_file_on_its_stdin(tree):
    exe = Path(sys.executable).parent / "ctx-read"
    with open(tree / "o" / "work.py", "rb") as fh:  # `ctx-read --head 1 < f -o f`
        r = subprocess.run([exe, "--head", "1", "-o", "o/work.py"], stdin=fh,
                           capture_output=True, text=True)
    _other_refused(r, "standard input")
    same_as_work(tree, "o/work.py")
    with open(tree / "o" / "work.py", "rb") as fh:
        r = subprocess.run([exe, "--head", "1", "-o", "head.txt"], stdin=fh,
                           capture_output=True, text=True)
    assert r.returncode == 0 and (tree / "head.txt").read_text() == WORK.splitlines()[0] + "\n"


def _store_refused(r, what: str) -> None:
    assert r.returncode == 2, r.stderr
    assert r.stdout == "" and "Traceback" not in r.stderr and r.stderr.count("\n") == 1
    assert f"is {what}; nothing was written (write to a file outside the store" in r.stderr


@pytest.mark.process
def test_o_never_writes_in_the_store_by_any_name(script_runner, tree, store_dir):
    # ctx-read h --head 3 -o $CTX_STORE/blobs/xx/<blob> replaced the blob: h and every
    # handle sharing it were lost (exit 0).
    from ctxtools.store import HandleStore

    data = "".join(f"line {i}\n" for i in range(3000)).encode()
    st = HandleStore(store_dir)
    sha = st.put_bytes(data, name="h")["sha256"]
    st.put_bytes(data, name="h_copy")  # the same blob
    blob = st.blob_path(sha)
    os.link(blob, tree / "hard")
    (tree / "soft").symlink_to(blob)
    (tree / "into").symlink_to(store_dir)
    inside = f"inside the store {store_dir}"
    linked = f"the store's file blobs/{sha[:2]}/{sha} by another name (a hard link)"
    for output, what in (
        (str(blob), inside),
        ("soft", inside),
        ("into/blobs/x", inside),
        (str(store_dir / "sessions" / "default" / "forged.json"), inside),
        (str(store_dir), inside),
        ("hard", linked),
    ):
        _store_refused(script_runner.run(["ctx-read", "h", "--head", "3", "-o", output]), what)
    for argv in (
        ["ctx-excerpt", "-q", "important", "o/work.py"],
        ["ctx-repomap", "."],
        ["ctx-compact", "--limit", "1000", "-"],
        ["ctx-pack", "-q", "important work", "o"],
    ):
        _store_refused(run_bytes(script_runner, [*argv, "-o", str(blob)], b"[]"), inside)
        _store_refused(run_bytes(script_runner, [*argv, "-o", "hard"], b"[]"), linked)
    assert blob.read_bytes() == data and (tree / "hard").read_bytes() == data
    assert not (store_dir / "sessions" / "default" / "forged.json").exists()
    assert not (store_dir / "blobs" / "x").exists()
    for name in ("h", "h_copy"):
        assert st.read_bytes(name) == data
    # the store is the command's own: another --store's files are written as any file
    other = tree / "other-store"
    r = script_runner.run(["ctx-read", "h", "--head", "1", "--store", str(other), "-o", "x"])
    assert r.returncode == 1  # no handle h there; the guard let -o through
    r = script_runner.run(["ctx-read", "h", "--head", "1", "-o", "out.txt"])
    assert r.returncode == 0 and (tree / "out.txt").read_text() == "line 0\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["ctx-pack", "-q", "important work", "o"],
        ["ctx-read", "h"],
        ["ctx-excerpt", "-q", "important", "o/work.py"],
        ["ctx-repomap", "."],
        ["ctx-compact", "--limit", "1000", "-"],
    ],
    ids=lambda a: a[0],
)
def test_an_empty_output_name_is_refused_not_taken_for_stdout(script_runner, tree, argv):
    """-o "$OUT" with OUT unset wrote to stdout without a word, where an empty --store is
    a usage error: an empty -o is one too, before anything is read."""
    r = run_bytes(script_runner, [*argv, "-o", ""], b"[]")
    assert r.returncode == 2, r.stderr
    assert r.stdout == "" and r.stderr.count("\n") == 1
    assert "-o was given an empty file name; nothing was written" in r.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["ctx-pack", "-q", "important work", "o"],
        ["ctx-excerpt", "-q", "important", "o/work.py"],
        ["ctx-repomap", "."],
        ["ctx-compact", "--limit", "1000", "-"],
    ],
    ids=lambda a: a[0],
)
def test_o_naming_a_directory_is_the_same_failure_in_every_command(script_runner, tree, argv):
    """-o DIR: one line, exit 1, the directory untouched, in every command (ctx-pack's was
    click's usage error, exit 2, where the others said 'cannot write', exit 1)."""
    (tree / "outdir").mkdir()
    r = run_bytes(script_runner, [*argv, "-o", "outdir"], b'[{"role": "user", "content": "hi"}]')
    assert r.returncode == 1, r.stderr
    line = f"{argv[0]}: error: -o outdir: cannot write (is a directory)"
    assert r.stderr.splitlines()[-1] == line
    assert r.stdout == "" and "Traceback" not in r.stderr
    assert list((tree / "outdir").iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["ctx-pack", "-q", "important work"],
        ["ctx-excerpt", "-q", "important"],
        ["ctx-repomap", "."],
        ["ctx-count"],
    ],
    ids=lambda a: a[0],
)
def test_an_empty_files_from_name_is_refused(script_runner, tree, argv):
    """--files-from "$LIST" with LIST unset: ctx-repomap mapped the whole directory with
    status 0, the others said ': no such file'. A usage error in each, before any work."""
    r = run_bytes(script_runner, [*argv, "--files-from", ""], b"")
    assert r.returncode == 2, r.stderr
    assert r.stdout == "" and r.stderr.count("\n") == 1
    assert "'--files-from': an empty file name" in r.stderr


def test_o_under_a_file_says_it_is_not_a_directory(script_runner, tree):
    """-o work.py/x: the parent is a file, not missing (it said 'no such directory')."""
    r = script_runner.run(["ctx-excerpt", "-q", "important", "o/work.py", "-o", "o/work.py/x"])
    assert r.returncode == 1
    assert r.stderr == (
        f"ctx-excerpt: error: -o o/work.py/x: cannot write (not a directory: {tree}/o/work.py)\n"
    )
    assert (tree / "o" / "work.py").read_text() == WORK


def test_o_over_a_vendored_or_minified_file_of_the_packed_directory_is_refused(
    script_runner, tree
):
    # a directory's listing leaves vendor/ and *.min.js out, so no candidate was the -o
    # file and `-o vendor/money/round.py .` wrote the pack over a tracked source file
    vendored = "def round_half_even(x):\n    return round(x)\n"
    (tree / "vendor" / "money").mkdir(parents=True)
    (tree / "vendor" / "money" / "round.py").write_text(vendored)
    (tree / "o" / "app.min.js").write_text("!function(w){w.a=1}(window);\n")
    for output, why in (("vendor/money/round.py", "vendored"), ("o/app.min.js", "minified")):
        r = script_runner.run(["ctx-pack", "--tokens", "3000", "-q", "fix important", ".",
                               "-o", output])
        assert r.returncode == 2 and r.stdout == ""
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
        assert r.stderr.startswith(f"ctx-pack: error: -o {output} is a {why} file of the "
                                   "packed directory .")
    assert (tree / "vendor" / "money" / "round.py").read_text() == vendored
    assert (tree / "o" / "app.min.js").read_text() == "!function(w){w.a=1}(window);\n"
    # an earlier pack there is still replaced, and a directory that does not hold the file
    # is no reason to refuse
    (tree / "vendor" / "pack.md").write_text("")
    for args in ((".", "-o", "vendor/pack.md"), (".", "-o", "vendor/pack.md"),
                 ("o/", "-o", "vendor/money/round.py")):
        r = script_runner.run(["ctx-pack", "--tokens", "3000", "-q", "fix important", *args])
        assert r.returncode == 0, r.stderr
    assert "important_total" in (tree / "vendor" / "pack.md").read_text()
