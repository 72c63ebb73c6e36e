"""ctx-pack as a user runs it: real small repositories in five languages, with git history,
instructions, handles; section order, budgets, determinism, named files, bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import copy_sources, git

from ctxtools import profiles
from ctxtools.tokens import get_ruler

AGENTS = """# Project rules

Run the tests with `make test` before you say something is done.

## Go services <!-- paths: srv/** -->

Handlers return errors; never panic in a handler.
"""


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    copy_sources(root)
    (root / "AGENTS.md").write_text(AGENTS)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    monkeypatch.chdir(root)
    return root


def count(text: str) -> int:
    return get_ruler().ruler.count(text)


def pack(script_runner, *args, ok=True):
    r = script_runner.run(["ctx-pack", *args])
    if ok:
        assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return r


# --- sections and order ----------------------------------------------------------------------


def test_sections_in_their_fixed_order_task_last_and_verbatim(script_runner, repo):
    task = "fix the expiry check in verify_token  (keep  the spacing)"
    r = pack(script_runner, "--task", task, "src/auth.py", "srv/server.go", "--tokens", "6000")
    out = r.stdout
    titles = ["# Instructions\n\n", "# Repository map\n\n", "# Files\n\n", "# Task\n\n"]
    where = [out.find(t) for t in titles]
    assert out.startswith(titles[0]) and -1 not in where and where == sorted(where)
    assert out.endswith("# Task\n\n" + task + "\n")
    # the instruction file is there, with its gated Go section (a Go file is in the pack)
    assert "Run the tests with `make test`" in out
    assert "never panic in a handler" in out
    # files sorted by path, each with its excerpt header and real line numbers
    assert out.index("==> src/auth.py <==") < out.index("==> srv/server.go <==")
    assert "verify_token" in out


def test_gated_section_left_out_when_no_file_matches(script_runner, repo):
    r = pack(script_runner, "--task", "fix verify_token", "src/auth.py", "--explain")
    assert "Run the tests with `make test`" in r.stdout
    assert "never panic in a handler" not in r.stdout


def test_output_is_byte_identical_across_runs_and_argument_order(script_runner, repo):
    args = ["--task", "reserve stock and tokenize", "--tokens", "3000"]
    a = pack(script_runner, *args, "src/inventory.py", "core/lexer.rs", "web/cart.ts").stdout
    b = pack(script_runner, *args, "web/cart.ts", "src/inventory.py", "core/lexer.rs").stdout
    c = pack(script_runner, *args, "core/lexer.rs", "web/cart.ts", "src/inventory.py").stdout
    assert a == b == c
    assert a.count("==> ") == 3


def test_directory_expands_to_its_files_sorted(script_runner, repo):
    (repo / "src" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0binary")
    # --fill: every file of the directory is a candidate, and the budget holds them all
    r = pack(
        script_runner, "--task", "reserve stock", "src", "--tokens", "8000", "--json", "--fill"
    )
    doc = json.loads(r.stdout)
    paths = [f["path"] for f in doc["files"]]
    assert paths == sorted(paths)
    assert set(paths) == {"src/auth.py", "src/inventory.py"}
    # binaries are one summary line on stderr, named one by one in the record
    assert any(n.startswith("left out 1 file(s): binary") for n in doc["notes"])
    assert {"what": "src/logo.png", "why": "binary"} in doc["dropped"]


def test_an_instruction_file_is_not_packed_twice(script_runner, repo):
    # AGENTS.md, shown whole under Instructions, is not shown again among the files of a
    # packed directory; named on purpose, it is.
    (repo / "CLAUDE.md").write_text("Keep functions short.\n")
    doc = json.loads(pack(script_runner, "-q", "reserve stock", ".", "--json").stdout)
    assert "## CLAUDE.md" in doc["text"]
    assert doc["text"].count("Keep functions short.") == 1
    paths = [f["path"] for f in doc["files"]]
    assert "CLAUDE.md" not in paths and "src/inventory.py" in paths
    assert {"what": "CLAUDE.md", "why": "shown whole under instructions"} in doc["dropped"]
    named = json.loads(
        pack(script_runner, "-q", "reserve stock", "CLAUDE.md", "src", "--json").stdout
    )
    assert "CLAUDE.md" in [f["path"] for f in named["files"]]


def test_glob_arguments(script_runner, repo):
    r = pack(
        script_runner, "--task", "tokenize", "*/*.rs", "*/*.go", "--json", "--tokens", "4000",
        "--fill",
    )
    paths = [f["path"] for f in json.loads(r.stdout)["files"]]
    assert paths == ["core/lexer.rs", "srv/server.go"]


# --- the budget ------------------------------------------------------------------------------


@pytest.mark.parametrize("tokens", [600, 900, 1500, 3000, 8000])
def test_printed_pack_recounted_never_exceeds_the_budget(script_runner, repo, tokens):
    r = pack(
        script_runner,
        "--task",
        "reserve stock, tokenize input, and evict from the LruCache",
        ".",
        "--tokens",
        str(tokens),
    )
    assert count(r.stdout) <= tokens


@pytest.mark.parametrize(
    ("model", "role"),
    [("gpt-4o", "worker"), ("qwen2.5-coder:7b", "reviewer"), ("llama3:8b", "explorer")],
)
def test_budget_from_model_and_role(script_runner, repo, model, role):
    r = pack(script_runner, "--task", "tokenize", "--model", model, "--role", role, "--json", ".")
    doc = json.loads(r.stdout)
    prof = profiles.resolve(model)
    expected = profiles.pack_budget(prof.context_limit, role)
    assert doc["budget"]["tokens"] == expected.available
    assert doc["budget"]["role_share"] == expected.role_share
    assert doc["tokens"] == get_ruler(encoding=prof.encoding).ruler.count(doc["text"])
    assert doc["tokens"] <= expected.available


def test_xml_format_is_well_formed_and_within_budget(script_runner, repo):
    r = pack(
        script_runner,
        "-q",
        "verify_token <expiry> & more",
        "src/auth.py",
        "-f",
        "xml",
        "--tokens",
        "2000",
    )
    tree = ET.fromstring(r.stdout)
    assert [c.tag for c in tree] == ["instructions", "repomap", "files", "task"]
    assert tree.find("task").text.strip() == "verify_token <expiry> & more"
    assert count(r.stdout) <= 2000


def test_json_text_is_the_markdown_pack(script_runner, repo):
    args = ["-q", "tokenize", "core/lexer.rs", "--tokens", "2500"]
    md = pack(script_runner, *args).stdout
    doc = json.loads(pack(script_runner, *args, "--json").stdout)
    assert doc["text"] == md
    assert doc["tokens"] == count(md)
    assert [s["name"] for s in doc["sections"]] == ["instructions", "map", "files", "task"]
    assert sum(p["tokens"] for p in doc["sections"][2]["parts"]) >= 1


@pytest.mark.process
def test_budget_below_the_floor_is_a_clean_error_with_the_figures(script_runner, repo):
    r = pack(script_runner, "-q", "x tokenize", "--limit", "4000", ".", ok=False)
    assert r.returncode == 1
    assert "below the floor of 512" in r.stderr
    assert "window 4,000 - system 500 - tools 900 - response 2,048" in r.stderr
    r = pack(script_runner, "-q", "tokenize", "--tokens", "100", ".", ok=False)
    assert r.returncode == 2
    assert "below the floor of 512" in r.stderr


def test_a_small_budget_drops_windows_before_files(script_runner, repo):
    r = pack(script_runner, "-q", "reserve stock", "src", "web", "--tokens", "900", "--json")
    doc = json.loads(r.stdout)
    assert doc["tokens"] <= 900
    assert doc["dropped"], "something had to go"
    assert all("why" in d for d in doc["dropped"])


# --- named files ---------------------------------------------------------------------------


def test_named_file_keeps_its_signatures_when_its_excerpt_cannot_fit(script_runner, repo):
    big = repo / "src" / "big.py"
    body = "".join(
        f"def handler_{i}(request):\n    return reserve(request, {i})\n" for i in range(400)
    )
    big.write_text(body)
    r = pack(script_runner, "-q", "reserve", "src/big.py", "--tokens", "4000", "--no-map", "--json")
    doc = json.loads(r.stdout)
    (row,) = [f for f in doc["files"] if f["path"] == "src/big.py"]
    assert row["shown"] in ("definitions", "signatures")
    assert "src/big.py" in doc["text"]
    assert row["tokens"] < 4000
    assert "def handler_" in doc["text"]  # real lines of it, not just its name


def test_named_file_too_big_for_any_body_degrades_to_its_path_with_a_note(script_runner, repo):
    big = repo / "src" / "huge.py"
    params = ", ".join(f"arg{k}" for k in range(60))  # long lines: even one is too big
    big.write_text("".join(f"def reserve_{i}({params}): pass\n" for i in range(1000)))  # < 512 KB
    r = pack(script_runner, "-q", "reserve", "src/huge.py", "--tokens", "600", "--no-map")
    assert "named file src/huge.py" in r.stderr
    assert "src/huge.py" in r.stdout
    assert count(r.stdout) <= 600


def test_named_files_whose_paths_cannot_fit_fail_naming_them(script_runner, repo):
    names = []
    for i in range(150):
        rel = f"src/deeply/nested/package_number_{i}/module_with_a_long_name_{i}.py"
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(f"def reserve_{i}():\n    return {i}\n")
        names.append(rel)
    r = pack(script_runner, "-q", "reserve", *names, "--tokens", "600", "--no-map", ok=False)
    assert r.returncode == 1
    assert "module_with_a_long_name_" in r.stderr and "--allow-drop" in r.stderr
    assert r.stdout == ""
    r = pack(script_runner, "-q", "reserve", *names, "--tokens", "600", "--no-map", "--allow-drop")
    assert "dropped named file src/deeply" in r.stderr
    assert count(r.stdout) <= 600


def test_identifiers_only_and_explorer_role_show_signatures_not_bodies(script_runner, repo):
    for extra in (["--identifiers-only"], ["--role", "explorer"]):
        r = pack(script_runner, "-q", "reserve stock", "src/inventory.py", "--json", *extra)
        doc = json.loads(r.stdout)
        (row,) = doc["files"]
        assert row["shown"] == "signatures"
        assert "def reserve" in doc["text"]
        assert "ledger.record(" not in doc["text"]  # a body line


def test_task_with_no_identifiers_still_packs(script_runner, repo):
    r = pack(script_runner, "-q", "please do it", ".", "--tokens", "3000", "--json")
    doc = json.loads(r.stdout)
    assert [s["name"] for s in doc["sections"]][-1] == "task"
    assert doc["tokens"] <= 3000


# --- handles and --changed ---------------------------------------------------------------


def test_handle_argument_is_excerpted_around_the_task(script_runner, repo):
    log = "".join(f"line {i}: ok\n" for i in range(3000)) + "FAILED test_tokenize: boom\n"
    r = script_runner.run(["ctx-stash", "--name", "tests", "--always"], stdin=_text(log))
    assert r.returncode == 0, r.stderr
    r = pack(script_runner, "-q", "why does test_tokenize fail", "ctx:tests", "--tokens", "3000")
    assert "FAILED test_tokenize: boom" in r.stdout
    assert "==> ctx:tests <==" in r.stdout


def _text(s: str):
    import io

    return io.TextIOWrapper(io.BytesIO(s.encode()))


def test_changed_adds_modified_and_untracked_files_with_their_hunks(script_runner, repo):
    auth = repo / "src" / "auth.py"
    auth.write_text(auth.read_text().replace("def verify_token", "def verify_token_v2"))
    (repo / "src" / "new_module.py").write_text("def fresh():\n    return 1\n")
    r = pack(script_runner, "-q", "review this change", "--changed", "--json", "--tokens", "6000")
    doc = json.loads(r.stdout)
    rows = {f["path"]: f for f in doc["files"]}
    assert set(rows) == {"src/auth.py", "src/new_module.py"}
    assert rows["src/auth.py"]["diff"] is True and rows["src/auth.py"]["named"] is True
    text = doc["text"]
    assert "```diff\n" in text
    assert "+def verify_token_v2" in text and "-def verify_token" in text
    assert text.index("```diff") < text.index("==> src/auth.py <==")


def test_changed_against_a_revision_and_a_deleted_file(script_runner, repo):
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "core" / "lexer.rs").unlink()
    git(repo, "commit", "-qam", "drop the lexer")
    r = pack(script_runner, "-q", "why was the lexer removed", "--changed", first, "--json")
    doc = json.loads(r.stdout)
    (row,) = doc["files"]
    assert row["path"] == "core/lexer.rs" and row["shown"] == "diff"
    assert "-pub fn tokenize" in doc["text"]


def test_changed_outside_a_git_work_tree_is_a_clean_error(script_runner, tmp_path, monkeypatch):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("def a():\n    pass\n")
    monkeypatch.chdir(plain)
    r = pack(script_runner, "-q", "review", "--changed", ok=False)
    assert r.returncode == 1
    assert "not in a git work tree" in r.stderr


def test_changed_with_an_unknown_revision(script_runner, repo):
    r = pack(script_runner, "-q", "review", "--changed", "no-such-rev", ok=False)
    assert r.returncode == 1
    assert r.stderr == "ctx-pack: error: --changed no-such-rev: no such revision in .\n"


@pytest.mark.parametrize(
    ("rev", "hint"),
    [("HEAD~1..HEAD", "--changed HEAD~1"),
     ("main...HEAD", "--changed $(git merge-base main HEAD)")],
)
def test_changed_with_a_range_says_it_takes_one_revision(script_runner, repo, rev, hint):
    # git's range syntax was "no such revision", exit 1: the user had to guess the rule
    r = pack(script_runner, "-q", "review", "--changed", rev, ok=False)
    assert r.returncode == 2
    assert r.stderr == (
        f"ctx-pack: error: --changed {rev}: one revision, not a range: the files that differ "
        f"between it and the work tree (e.g. {hint}; see ctx-pack --help)\n"
    )


def test_changed_in_a_shallow_clone_or_an_empty_repository_says_why(script_runner, tmp_path):
    # A CI checkout is a clone of depth 1: neither HEAD~1 nor origin/main is in it, and
    # "no such revision" alone left the user to guess.
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q", "-b", "main")
    for k in range(3):
        (src / "a.py").write_text(f"x = {k}\n")
        git(src, "add", "a.py")
        git(src, "commit", "-q", "-m", f"c{k}")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{src}", str(clone))
    (clone / "a.py").write_text("x = 9\n")
    shallow = ("this clone is shallow and may not hold it: git fetch --deepen=50 or git fetch "
               "origin main, or clone with history, e.g. actions/checkout's fetch-depth: 0")
    for rev in ("HEAD~1", "v1.0"):
        r = script_runner.run(["ctx-pack", "-q", "review", "--changed", rev, "."], cwd=clone)
        assert r.returncode == 1
        assert r.stderr == f"ctx-pack: error: --changed {rev}: no such revision in . ({shallow})\n"
    r = script_runner.run(["ctx-pack", "-q", "review", "--changed", "HEAD", "."], cwd=clone)
    assert r.returncode == 0, r.stderr  # what the clone holds still works
    assert "x = 9" in r.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    (empty / "a.py").write_text("x = 1\n")
    r = script_runner.run(["ctx-pack", "-q", "review", "--changed", "HEAD", "."], cwd=empty)
    assert r.returncode == 1
    assert r.stderr == ("ctx-pack: error: --changed HEAD: no such revision in . (the "
                        "repository has no commit yet)\n")


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.process
def test_missing_paths_are_all_named_and_keep_going_packs_the_rest(script_runner, repo):
    r = pack(script_runner, "-q", "tokenize", "nope.py", "core/lexer.rs", "gone/*.rs", ok=False)
    assert r.returncode == 1
    assert "nope.py" in r.stderr and "gone/*.rs" in r.stderr
    assert r.stdout == ""
    r = pack(script_runner, "-q", "tokenize", "nope.py", "core/lexer.rs", "--keep-going")
    assert "==> core/lexer.rs <==" in r.stdout
    assert "skipped nope.py" in r.stderr


def test_paths_outside_the_root_are_refused(script_runner, repo, tmp_path):
    outside = tmp_path / "elsewhere.py"
    outside.write_text("def elsewhere():\n    pass\n")
    r = pack(script_runner, "-q", "elsewhere", str(outside), ok=False)
    assert r.returncode == 1
    assert "outside the root" in r.stderr
    # the hint names what packs it (it said "fix the paths", of a path that was right)
    assert r.stderr.endswith(
        "(--root DIR, a directory that holds them, or --keep-going to pack the rest)\n"
    )
    r = pack(script_runner, "-q", "elsewhere", "--root", str(tmp_path), str(outside))
    assert "def elsewhere" in r.stdout
    (repo / "link.py").symlink_to(outside)
    r = pack(script_runner, "-q", "elsewhere", "link.py", ok=False)
    assert r.returncode == 1 and "outside the root" in r.stderr


def test_a_glob_skips_a_symlink_out_of_the_root_as_a_directory_does(script_runner, repo, tmp_path):
    """Issue 21.15: `core/*.rs` failed the whole pack when one match was a symlink out of
    the root, where `core/` skips it with a note. Both skip it now, with the same note."""
    outside = tmp_path / "secret.rs"
    outside.write_text("fn leaked() { let key = 1; }\n")
    (repo / "core" / "zz_link.rs").symlink_to(outside)
    by_glob = pack(script_runner, "-q", "tokenize", "core/*.rs", "--json", "--tokens", "3000")
    by_dir = pack(script_runner, "-q", "tokenize", "core/", "--json", "--tokens", "3000")
    for r, arg in ((by_glob, "core/*.rs"), (by_dir, "core/")):
        doc = json.loads(r.stdout)
        assert [f["path"] for f in doc["files"]] == ["core/lexer.rs"]
        assert "leaked" not in doc["text"]
        assert f"ctx-pack: {arg}: 1 file(s) skipped (symlink outside the root)\n" in r.stderr
    named = pack(script_runner, "-q", "tokenize", "core/zz_link.rs", ok=False)
    assert named.returncode == 1 and "outside the root" in named.stderr  # named: an error


def test_changed_does_not_take_an_option_for_its_revision(script_runner, repo):
    """Issue 21.15: `--changed=--output=X` was `--changed --output=X`, and git wrote X."""
    for value in ("--output=X", "-", "--stat"):
        r = pack(script_runner, "-q", "review", f"--changed={value}", ok=False)
        assert r.returncode == 2
        assert r.stderr == (
            f"ctx-pack: error: --changed {value!r}: not a revision (a revision does not "
            "start with '-'; see ctx-pack --help)\n"
        )
    assert not (repo / "X").exists()
    assert pack(script_runner, "-q", "review", "--changed=HEAD").returncode == 0


def test_symlink_loop_is_an_unreadable_path(script_runner, repo):
    (repo / "loop_a").symlink_to(repo / "loop_b")
    (repo / "loop_b").symlink_to(repo / "loop_a")
    r = pack(script_runner, "-q", "tokenize", "loop_a", ok=False)
    assert r.returncode == 1
    assert "loop_a" in r.stderr
    # a directory holding the loop: the loop is listed as skipped, never followed
    r = pack(script_runner, "-q", "tokenize", ".", "--tokens", "2000")
    assert "Traceback" not in r.stderr


@pytest.mark.process
def test_binary_file_named_is_skipped_and_said(script_runner, repo):
    (repo / "blob.bin").write_bytes(b"\0\1\2" * 100)
    r = pack(script_runner, "-q", "tokenize", "blob.bin", "core/lexer.rs")
    assert "skipped blob.bin: binary file" in r.stderr
    assert "blob.bin" not in r.stdout


def test_empty_task_and_unknown_root(script_runner, repo):
    r = pack(script_runner, "-q", "  ", ".", ok=False)
    assert r.returncode == 2 and "task is empty" in r.stderr
    r = pack(script_runner, "-q", "x", "--root", "no/such/dir", ok=False)
    assert r.returncode == 1 and "--root no/such/dir: no such directory" in r.stderr
    r = pack(script_runner, ".", ok=False)
    assert r.returncode == 2 and r.stderr.startswith("ctx-pack: error: no task (give -q/--task")


@pytest.mark.process
def test_task_read_from_stdin(script_runner, repo):
    import io

    task = "Why does tokenize fail on\nnegative numbers?\n"
    stdin = io.TextIOWrapper(io.BytesIO(task.encode()))
    r = script_runner.run(["ctx-pack", "--task", "-", "core/lexer.rs"], stdin=stdin)
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith("# Task\n\n" + task)
    assert "==> core/lexer.rs <==" in r.stdout


@pytest.mark.script_launch_mode("inprocess")  # a stdin that fails the test when read
@pytest.mark.parametrize(
    "args", [["-q", "-", "--files-from", "-"], ["--files-from", "-", "--task", "-"]]
)
def test_task_and_file_list_cannot_both_come_from_stdin(script_runner, repo, args):
    """Both read stdin: one got it all, the other nothing, and the pack said nothing."""
    from helpers import endless_stdin

    stdin = endless_stdin(b"src/auth.py\n", limit=-1)  # nothing may be read
    r = script_runner.run(["ctx-pack", *args], stdin=stdin)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (
        "ctx-pack: error: -q/--task - and --files-from - cannot both read standard input "
        "(give one of them stdin, the other a file; see ctx-pack --help)\n"
    )
    assert stdin.buffer.raw.given == 0


def test_output_file_is_written_whole_and_bad_output_path_fails(script_runner, repo, tmp_path):
    target = tmp_path / "pack.md"
    r = pack(script_runner, "-q", "tokenize", "core/lexer.rs", "-o", str(target))
    assert r.stdout == ""
    again = pack(script_runner, "-q", "tokenize", "core/lexer.rs").stdout
    assert target.read_text() == again
    r = pack(
        script_runner, "-q", "x", "core/lexer.rs", "-o", str(tmp_path / "no" / "p.md"), ok=False
    )
    assert r.returncode == 1 and "cannot write" in r.stderr
    assert not (tmp_path / "no").exists()


def test_explain_shows_budget_sections_files_and_drops_on_stderr(script_runner, repo):
    r = pack(script_runner, "-q", "reserve stock", "src", "--model", "gpt-4o", "--explain")
    err = r.stderr
    assert "budget " in err and "window 128,000 - system 500 - tools 900" in err
    assert "\n  model gpt-4o: the profile gpt-4o\n" in err  # issue 28.3: which rule matched
    assert "sections" in err and "files" in err
    assert "█" in err
    assert "# Files" in r.stdout  # the pack itself still on stdout


@pytest.mark.script_launch_mode("inprocess")  # monkeypatches the library
def test_a_map_that_fails_to_build_is_not_fatal(script_runner, repo, monkeypatch):
    from ctxtools.errors import CtxError
    from ctxtools.repomap import core

    def broken(*a, **k):
        raise CtxError("scanner exploded")

    monkeypatch.setattr(core, "build_map", broken)
    r = pack(script_runner, "-q", "tokenize", "core/lexer.rs")
    assert "repository map not built (scanner exploded)" in r.stderr
    assert "# Repository map" not in r.stdout
    assert "==> core/lexer.rs <==" in r.stdout


# --- the Makefile example --------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_examples_makefile_builds_and_gates_a_review_pack(repo, tmp_path):
    """``make pack`` from examples/ on a real change: the pack holds the diff, and the gate
    fails the target when the pack is over the allowed share of the window."""
    import sys

    if shutil.which("make") is None:
        pytest.fail("make is not installed")
    bindir = Path(sys.executable).parent
    inventory = repo / "src" / "inventory.py"
    inventory.write_text(inventory.read_text().replace("def reserve", "def reserve_units"))
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    base = [
        "make",
        "-s",
        "-f",
        str(EXAMPLES / "Makefile"),
        "pack",
        "PACK=" + str(tmp_path / "p.md"),
    ]
    ok = subprocess.run(base, cwd=repo, env=env, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    text = (tmp_path / "p.md").read_text()
    assert "+def reserve_units" in text and text.rstrip().endswith("what it could break.")
    assert "% of 128,000 (gpt-4o)" in ok.stdout
    gated = subprocess.run(
        [*base, "MAX_PERCENT=0.01"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert gated.returncode != 0
    assert "over" in gated.stderr.lower()


def test_role_shares_from_the_command_line_and_the_profiles_file(script_runner, repo, tmp_path):
    base = ["-q", "tokenize", "core/lexer.rs", "--model", "gpt-4o", "--json"]
    plain = json.loads(pack(script_runner, *base, "--role", "reviewer").stdout)["budget"]
    assert plain["role_share"] == 85
    over = json.loads(
        pack(script_runner, *base, "--role", "reviewer", "--role-share", "reviewer=50").stdout
    )["budget"]
    assert over["role_share"] == 50
    assert (
        over["tokens"]
        == profiles.pack_budget(128_000, "reviewer", role_shares={"reviewer": 50}).available
    )
    user = tmp_path / "profiles.toml"
    user.write_text("[roles]\nreviewer = 40\n")
    filed = json.loads(
        pack(script_runner, *base, "--role", "reviewer", "--profiles-file", str(user)).stdout
    )["budget"]
    assert filed["role_share"] == 40
    r = pack(script_runner, *base, "--role-share", "reviewer=0", ok=False)
    assert r.returncode == 2


def test_a_model_without_a_profile_is_said_with_the_closest_names(script_runner, repo):
    # --model gpt4o (a typo of gpt-4o) packed to the default 16,384-token window in silence,
    # where ctx-count said it: the same note now, with the profile names it is close to.
    base = ["-q", "tokenize", "core/lexer.rs", "--json"]
    r = pack(script_runner, *base, "--model", "gpt4o")
    note = ("note: no profile for 'gpt4o' (closest: gpt-4o, gpt-4); using the default "
            "profile (16,384 tokens)")
    assert note in r.stderr and note in json.loads(r.stdout)["notes"]
    assert json.loads(r.stdout)["budget"]["context_limit"] == 16_384
    for known in ("gpt-4o", "GPT-4o", "openai/gpt-4o-2024-08-06"):
        assert "no profile for" not in pack(script_runner, *base, "--model", known).stderr
    # --tokens decides the budget: the model's window is not used, so nothing is said
    r = pack(script_runner, *base, "--model", "gpt4o", "--tokens", "2000")
    assert "no profile for" not in r.stderr
    r = pack(script_runner, *base, "--model", "zzqx")
    assert "note: no profile for 'zzqx'; using the default profile (16,384 tokens)" in r.stderr


def test_an_unknown_role_is_said_with_the_nearest_one_and_its_share(script_runner, repo, tmp_path):
    # --role explroer got a worker's pack at 75% without a word.
    base = ["-q", "tokenize", "core/lexer.rs", "--model", "gpt-4o", "--json"]
    r = pack(script_runner, *base, "--role", "explroer")
    note = ("note: --role 'explroer' is not a known role (did you mean 'explorer'? a profiles "
            "file's [roles] or --role-share names one): packed as a worker's, in 75% of the "
            "budget (an unnamed role's share; a worker has 100%)")
    assert note in r.stderr and note in json.loads(r.stdout)["notes"]
    assert json.loads(r.stdout)["budget"]["role_share"] == 75
    for known in (["--role", "Explorer"], ["--role", "placeholder"],
                  ["--role", "triage", "--role-share", "triage=60"]):
        assert "not a known role" not in pack(script_runner, *base, *known).stderr, known
    user = tmp_path / "profiles.toml"
    user.write_text("[roles]\ntriage = 40\n")
    r = pack(script_runner, *base, "--role", "triage", "--profiles-file", str(user))
    assert "not a known role" not in r.stderr
    r = pack(script_runner, *base, "--role", "qqq")
    assert "--role 'qqq' is not a known role (a profiles file's" in r.stderr


# --- descriptors and resource limits (issue 21, item 13) -------------------------------------


def test_a_directory_of_1500_files_packs_under_an_open_file_limit_of_512(tmp_path):
    from helpers import many_sources, run_with_open_file_limit

    many_sources(tmp_path / "d", 1500)
    r = run_with_open_file_limit(
        ["ctx-pack", "-q", "fix connect_7", "--tokens", "4000", "d"], 512, tmp_path
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stderr == ""  # nothing skipped: every file was read (and closed)
    assert "def connect_7(host, port):" in r.stdout


@pytest.mark.script_launch_mode("inprocess")  # monkeypatches the system calls
@pytest.mark.parametrize("errno_name", ["EMFILE", "ENFILE", "ENOMEM"])
def test_a_file_a_resource_limit_keeps_out_fails_the_pack(
    script_runner, tmp_path, monkeypatch, errno_name
):
    import errno

    from helpers import fail_opening, many_sources

    many_sources(tmp_path / "d", 3)
    monkeypatch.chdir(tmp_path)
    fail_opening(monkeypatch, "m0001.py", getattr(errno, errno_name))
    r = pack(script_runner, "-q", "fix connect_1", "--tokens", "4000", "d", ok=False)
    assert r.returncode == 1
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctx-pack: error: "), r.stderr
    assert "m0001.py: " + os.strerror(getattr(errno, errno_name)) in lines[0]


# --- what -o may name (issue 21, item 8) -----------------------------------------------------


def stat_kind(path) -> str:
    import stat

    mode = os.lstat(path).st_mode
    return "fifo" if stat.S_ISFIFO(mode) else "link" if stat.S_ISLNK(mode) else "other"


def test_output_to_a_fifo_writes_through_and_leaves_the_fifo(script_runner, repo, tmp_path):
    import contextlib

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "out"
    link.symlink_to(fifo)
    r_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the writer's open goes
    try:
        pack(script_runner, "-q", "tokenize", "core/lexer.rs", "--tokens", "1500", "-o", str(link))
        got = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(r_fd, 1 << 16):
                got += chunk
    finally:
        os.close(r_fd)
    expected = pack(script_runner, "-q", "tokenize", "core/lexer.rs", "--tokens", "1500").stdout
    assert got.decode() == expected
    assert link.is_symlink()
    assert stat_kind(fifo) == "fifo"


def test_output_over_a_0600_hard_linked_file_keeps_mode_and_link(script_runner, repo, tmp_path):
    target = tmp_path / "pack.md"
    target.write_text("old\n")
    target.chmod(0o600)
    (tmp_path / "alias.md").hardlink_to(target)
    pack(script_runner, "-q", "tokenize", "core/lexer.rs", "-o", str(target))
    assert (tmp_path / "alias.md").read_text() == target.read_text() != "old\n"
    assert target.stat().st_nlink == 2
    assert oct(target.stat().st_mode & 0o777) == "0o600"


def test_output_to_a_socket_is_refused_in_one_line(script_runner, repo, tmp_path):
    import socket

    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        r = pack(script_runner, "-q", "tokenize", "core/lexer.rs", "-o", str(path), ok=False)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"ctx-pack: error: -o {path}: cannot write (not a regular file")
    assert r.stderr.count("\n") == 1


# --- -t is --tokens; the task is -q (issue 20.6, docs/options.md) ---------------------------


def test_short_t_is_the_budget_and_short_q_the_task(script_runner, repo):
    short = pack(script_runner, "-q", "tokenize", "-t", "900", "core/lexer.rs", "--json")
    long = pack(script_runner, "--task", "tokenize", "--tokens", "900", "core/lexer.rs", "--json")
    assert short.stdout == long.stdout
    assert json.loads(short.stdout)["budget"]["tokens"] == 900
    assert short.stderr == long.stderr and "-t" not in short.stderr


def test_a_task_over_the_budget_alone_is_refused_first_and_nothing_is_written(
    script_runner, repo
):
    """A pasted log as the task: one line says how many tokens it is, before any file is
    listed or any mention looked for (a 7 MB task took 7 s of reading to be refused), and
    the -o file it would have replaced is as it was."""
    (repo / "out.md").write_text("an earlier pack\n")
    task = "@nosuch.py the lexer fails\n" + "WARN retry 7 of the tokenizer job\n" * 400
    r = pack(script_runner, "-q", task, "--tokens", "1000", ".", "-o", "out.md", ok=False)
    assert r.returncode == 1
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctx-pack: error: the task alone is "), lines
    assert f"{count(task):,}"[:2] in lines[0]  # its real size, counted
    assert "over the pack budget of 1,000" in lines[0]
    assert (repo / "out.md").read_text() == "an earlier pack\n"


def test_short_t_with_a_number_and_no_task_is_ambiguous_not_a_task(script_runner, repo):
    """`ctx-pack -t 2000 FILE` packed with the task "2000"; now -t means --tokens, and a
    script that meant the old task must not silently get a budget instead: an error that
    says what to type."""
    r = pack(script_runner, "-t", "2000", "core/lexer.rs", ok=False)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr == (
        "ctx-pack: error: -t 2000 is ambiguous: -t was ctx-pack's --task and is --tokens now "
        "(type --tokens 2000 -q TASK for a budget, or -q 2000 for that task; "
        "see ctx-pack --help)\n"
    )


def test_short_t_with_text_is_still_the_task_with_a_note(script_runner, repo):
    old = pack(script_runner, "-t", "tokenize", "core/lexer.rs", "--tokens", "900")
    new = pack(script_runner, "-q", "tokenize", "core/lexer.rs", "--tokens", "900")
    assert old.stdout == new.stdout
    assert old.stderr == (
        "ctx-pack: note: -t TEXT is the task's old spelling: type -q TEXT or --task TEXT "
        "(-t is --tokens in every ctx command)\n" + new.stderr
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-q", "x", "-t", "abc"], "-t 'abc': -t is --tokens, a whole number"),
        (["-q", "x", "-t", "900", "--tokens", "800"], "-t and --tokens both give the budget"),
        (["-q", "x", "-t", "0"], "invalid value for '-t' / '--tokens': 0 is below the minimum"),
        # a negative number is a budget that is too small, not "no whole number"
        (["-q", "x", "-t", "-5"], "invalid value for '-t' / '--tokens': -5 is below the minimum"),
        (["-q", "x", "-t", "--5"], "-t '--5': -t is --tokens, a whole number"),
    ],
)
def test_short_t_misuses_are_usage_errors(script_runner, repo, args, said):
    r = pack(script_runner, *args, "core/lexer.rs", ok=False)
    assert r.returncode == 2
    assert r.stderr.startswith(f"ctx-pack: error: {said}") and r.stderr.count("\n") == 1


@pytest.mark.process
def test_a_pipe_given_as_a_path_is_named_as_one(tmp_path):
    """ctx-pack --task T <(make 2>&1) gets /dev/fd/N, a link to a pipe with no path: it said
    "broken or looping symbolic link". It says what it is and where such output goes."""
    import sys

    (tmp_path / "a.py").write_text("def total(xs):\n    return sum(xs)\n")
    r, w = os.pipe()
    os.write(w, b"build failed in total\n")
    os.close(w)
    exe = str(Path(sys.executable).parent / "ctx-pack")
    try:
        got = subprocess.run(
            [exe, "--task", "the total is wrong", "--tokens", "2000", f"/dev/fd/{r}"],
            cwd=tmp_path, pass_fds=(r,), capture_output=True, text=True, timeout=60,
            env={**os.environ, "CTX_STORE": str(tmp_path / "store")},
        )
    finally:
        os.close(r)
    assert got.returncode == 1
    assert got.stdout == ""
    assert got.stderr.startswith(f"ctx-pack: error: /dev/fd/{r}: a pipe, not a file: ")
    assert "ctx-stash --name NAME" in got.stderr and got.stderr.count("\n") == 1


def test_a_whole_file_with_a_cut_line_says_so(script_runner, tmp_path, monkeypatch):
    """A line over 500 characters is cut in a pack ('…[+N chars]'): a file shown whole
    with such a line says how many were cut, in its header and in JSON's "lines_cut"
    (it said "whole file" of a text it did not show whole); a file with no long line
    says nothing of it."""
    monkeypatch.chdir(tmp_path)
    blob = "q" * 12_000
    (tmp_path / "long.py").write_text(
        f'def alpha_table():\n    s = "{blob}"\n    t = "{blob[:600]}"\n    return s + t\n'
    )
    (tmp_path / "short.py").write_text("def alpha_table_short():\n    return 1\n")
    r = script_runner.run(["ctx-pack", "-q", "alpha_table", "long.py", "short.py"])
    assert r.returncode == 0, r.stderr
    headers = [ln for ln in r.stdout.splitlines() if ln.startswith("==> ")]
    assert "==> long.py <== 4 lines; rank 1; whole file; 2 lines cut at 500 characters" in headers
    assert any(h.startswith("==> short.py <==") and "cut" not in h for h in headers)
    line = f'    s = "{blob}"'
    assert f"2\t{line[:500]}…[+{len(line) - 500} chars]\n" in r.stdout
    j = script_runner.run(["ctx-pack", "-q", "alpha_table", "--format", "json", "long.py",
                           "short.py"])
    rows = {f["path"]: f for f in json.loads(j.stdout)["files"]}
    assert rows["long.py"]["lines_cut"] == 2
    assert "lines_cut" not in rows["short.py"]


def test_a_tree_with_nothing_to_map_says_so_not_no_room(script_runner, tmp_path, monkeypatch):
    """The map left out of a pack whose tree holds no file the map's scanners read is
    "nothing to map", not "no room left after the files" (said of a 187-token pack)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("the alpha table is rebuilt nightly\n")
    r = script_runner.run(["ctx-pack", "-q", "alpha table", "--format", "json", "."])
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert {"what": "repository map",
            "why": "nothing to map (no source file the map's scanners read)"} in data["dropped"]
    assert data["tokens"] < 200
    (tmp_path / "alpha.py").write_text("def alpha_table():\n    return 1\n")
    r = script_runner.run(["ctx-pack", "-q", "alpha table", "--format", "json", "."])
    assert not [d for d in json.loads(r.stdout)["dropped"] if d["what"] == "repository map"]


def test_an_excluded_file_is_only_counted_as_excluded(script_runner, tmp_path, monkeypatch):
    """--exclude keeps a file out unread: an excluded file over 32 MB was still checked and
    said ("skipped t/huge.py: ... over 32 MB") beside the count of excluded files."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "good.py").write_text("def good():\n    pass\n")
    with open(tmp_path / "t" / "huge.py", "wb") as f:
        f.truncate(40 << 20)  # (sparse: no disk used)
    r = script_runner.run(["ctx-pack", "-q", "good", "--exclude", "huge.py", "t"])
    assert r.returncode == 0, r.stderr
    assert "over 32 MB" not in r.stderr and "huge.py" not in r.stderr
    assert "left out 1 file(s): excluded (--exclude or .ctxignore)" in r.stderr
    assert "def good" in r.stdout
    r = script_runner.run(["ctx-pack", "-q", "good", "t"])  # not excluded: said as before
    assert "skipped t/huge.py: 41,943,040 bytes, over 32 MB" in r.stderr


def test_a_pack_of_an_empty_directory_says_it_found_nothing(script_runner, tmp_path, monkeypatch):
    """A pack of a directory with nothing in it was the task alone, status 0, and not a
    word on why."""
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    r = script_runner.run(["ctx-pack", "-q", "where is the redirect followed", "empty"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith("# Task\n\nwhere is the redirect followed\n")
    assert "# Files" not in r.stdout
    assert "ctx-pack: note: no file to pack: nothing was found in empty\n" in r.stderr
    (tmp_path / "empty" / "a.py").write_text("def follow_redirect():\n    pass\n")
    r = script_runner.run(["ctx-pack", "-q", "where is the redirect followed", "empty"])
    assert "no file to pack" not in r.stderr and "def follow_redirect" in r.stdout
