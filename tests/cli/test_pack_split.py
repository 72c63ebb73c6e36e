"""ctx-pack --split TOKENS: the parts on stdout, in files (-o), in --format json; the bad
values refused before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import copy_sources

from ctxtools.tokens.choice import get_ruler

MARKER = "----- 8< ----- ctx-pack: cut here ----- 8< -----"
TASK = "ship_order and write_off in inventory.py; the lexer's tokens"


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    copy_sources(root)
    monkeypatch.chdir(root)
    return root


def pack(script_runner, *args, ok=True):
    r = script_runner.run(["ctx-pack", "-q", TASK, "--tokens", "5000", "--fill", ".", *args])
    assert "Traceback" not in r.stderr
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def count(text: str) -> int:
    return get_ruler(encoding="cl100k_base").ruler.count(text)


@pytest.mark.process
def test_parts_on_stdout_each_fit_and_say_which_they_are(script_runner, tree):
    whole = pack(script_runner).stdout
    out = pack(script_runner, "--split", "800").stdout
    parts = out.split("\n" + MARKER + "\n\n")
    n = len(parts)
    assert n >= 3
    for i, part in enumerate(parts, 1):
        assert part.startswith(f"[ctx-pack: part {i} of {n}]\n\n")
        assert count(part) <= 800
    # the same pack: its first section opens part 1, its task ends the last part
    assert parts[0].split("\n", 2)[2].startswith(whole.split("\n", 1)[0])
    assert parts[-1].endswith(whole[whole.index("# Task\n") :])


@pytest.mark.process
def test_parts_go_to_numbered_files_with_o(script_runner, tree, tmp_path):
    out = tmp_path / "out" / "pack.md"
    out.parent.mkdir()
    r = pack(script_runner, "--split", "800", "-o", str(out))
    assert r.stdout == ""
    files = sorted(out.parent.iterdir(), key=lambda p: int(p.name.split(".")[1]))
    n = len(files)
    assert n >= 3 and not out.exists()
    assert [f.name for f in files] == [f"pack.{i}.md" for i in range(1, n + 1)]
    on_stdout = pack(script_runner, "--split", "800").stdout
    assert MARKER.join(f.read_text() for f in files) == on_stdout.replace(
        "\n" + MARKER + "\n\n", MARKER
    )
    # a shorter split later leaves the earlier parts past its last one, and says so
    r = pack(script_runner, "--split", "4000", "-o", str(out))
    first = (out.parent / "pack.1.md").read_text().split("\n", 1)[0]
    m = int(first.removesuffix("]").rsplit(" ", 1)[1])
    assert m < n
    if n == m + 1:
        assert f"{out.parent}/pack.{m + 1}.md is a part of an earlier, longer split" in r.stderr
    else:  # every part left over is counted, not only the first (cat pack.*.md mixed runs)
        assert (f"{out.parent}/pack.{m + 1}.md to {out.parent}/pack.{n}.md ({n - m} files) are "
                "parts of an earlier, longer split") in r.stderr
    # the next split, as long as the first, leaves nothing over
    r = pack(script_runner, "--split", "800", "-o", str(out))
    assert "earlier, longer split" not in r.stderr


def test_json_carries_the_parts(script_runner, tree):
    doc = json.loads(pack(script_runner, "--split", "900", "--json").stdout)
    parts = doc["parts"]
    assert len(parts) >= 2
    assert [p["part"] for p in parts] == list(range(1, len(parts) + 1))
    for p in parts:
        assert p["of"] == len(parts)
        assert p["tokens"] == count(p["text"]) <= 900
    assert "parts" not in json.loads(pack(script_runner, "--json").stdout)


def test_split_parts_in_a_packed_directory_are_not_packed_again(script_runner, tree):
    pack(script_runner, "--split", "800", "-o", "pack.md")
    assert (tree / "pack.2.md").exists()
    doc = json.loads(pack(script_runner, "--json").stdout)
    assert not [f for f in doc["files"] if f["path"].startswith("pack.")]
    assert any(d["what"] == "pack.2.md" for d in doc["dropped"])


def test_a_part_never_replaces_a_file_that_is_no_part(script_runner, tree):
    # -o notes.md --split wrote its first part over the tree's own notes.1.md: a part's name
    # is derived, not given, so only an earlier part (or an empty file) may be replaced
    notes = "# Notes, part one\n\nkeep these\n"
    (tree / "notes.2.md").write_text(notes)
    r = pack(script_runner, "--split", "800", "-o", "notes.md", ok=False)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.endswith(
        "ctx-pack: error: -o notes.md: notes.2.md exists and is not a part ctx-pack wrote; "
        "nothing was written (move it, or write the parts under another -o name; see "
        "ctx-pack --help)\n"
    )
    assert (tree / "notes.2.md").read_text() == notes
    assert not (tree / "notes.1.md").exists()  # none written, not even the first
    (tree / "notes.2.md").unlink()
    pack(script_runner, "--split", "800", "-o", "notes.md")
    first = (tree / "notes.1.md").read_bytes()
    pack(script_runner, "--split", "800", "-o", "notes.md")  # its own parts: replaced
    assert (tree / "notes.1.md").read_bytes() == first


@pytest.mark.process
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--split", "0"], "0 is below the minimum of 64"),
        (["--split", "-5"], "-5 is below the minimum of 64"),
        (["--split", "63"], "63 is below the minimum of 64"),
        (["--split", "many"], "not a whole number"),
        (["--split", "800", "--format", "xml"], "--split does not go with --format xml"),
    ],
)
def test_bad_split_values_are_usage_errors(script_runner, tree, args, words):
    r = pack(script_runner, *args, "-o", "pack.md", ok=False)
    assert r.returncode == 2
    assert r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith("ctx-pack: error: ") and words in line
    assert not list(tree.glob("pack*"))


@pytest.mark.process
def test_a_split_too_small_for_a_line_says_what_would_do(script_runner, tree):
    (tree / "data.py").write_text("TABLE = [" + ", ".join(str(i) for i in range(600)) + "]\n")
    r = pack(script_runner, "data.py", "--split", "100", ok=False)
    assert r.returncode == 2 and r.stdout == ""
    (line,) = r.stderr.splitlines()[-1:]
    assert "needs" in line and "give --split" in line
