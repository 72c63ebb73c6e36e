"""Extensionless scripts on the map (issue 19): listed by their #! line, read no further
than its head, scanned, cached and ranked like any source; FIFOs, binaries, secrets and
unknown interpreters left alone."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers import NOT_SCRIPTS, SCRIPTS, fail_opening, git, write, write_scripts

from ctxtools.errors import ResourceError
from ctxtools.repomap.core import build_map
from ctxtools.source import listing as listmod
from ctxtools.source.classify import role as file_role
from ctxtools.source.scan import language_for, script_language, script_name
from ctxtools.source.scanset import list_repository
from ctxtools.tokens import HeuristicRuler

EXPECTED = sorted([*SCRIPTS, "lib/util.py"])


@pytest.fixture(autouse=True)
def _no_user_git(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))


def _repo(root: Path, use_git: bool) -> Path:
    write_scripts(root)
    write(root, "lib/util.py", "def helper():\n    return run_pipeline([1])\n")
    write(root, "LICENSE", "Permission is hereby granted, free of charge, to any person\n")
    if use_git:
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "scripts")
    return root


def _rels(listing) -> list[str]:
    return sorted(c.rel for c in listing.candidates)


class _Alarm:
    """Fails the test instead of hanging it when a call blocks (a FIFO opened)."""

    def __enter__(self):
        def ring(signum, frame):
            raise TimeoutError("blocked")

        self.old = signal.signal(signal.SIGALRM, ring)
        signal.alarm(10)
        return self

    def __exit__(self, *exc):
        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.old)


@pytest.mark.parametrize("use_git", [True, False])
def test_scripts_are_listed_by_their_shebang_line(tmp_path, use_git):
    root = _repo(tmp_path / "r", use_git)
    listing = list_repository(str(root))
    assert listing.via == ("git" if use_git else "walk")
    # ruby, `env -S ruby -w`, bash with CRLF line ends, python3; not the ELF binary, the
    # #! line followed by a NUL, the text without a #! line, Perl, notes.txt, .envrc
    assert _rels(listing) == EXPECTED
    assert listing.skipped == {}
    assert listing.others == len(NOT_SCRIPTS) + 1  # and LICENSE
    # What the other listings (ctx-pack's inputs, ctx-count --tree) list is unchanged.
    every = listmod.list_files(str(root), lambda rel: "text")
    assert len(every.candidates) == len(SCRIPTS) + len(NOT_SCRIPTS) + 2


def test_the_name_rules_for_scripts():
    assert script_name("bin/deploy") and script_name(".profile") and script_name("run")
    assert not script_name("notes.txt") and not script_name("manage.py-tpl")
    assert not script_name("Rakefile") and not script_name(".bashrc")  # named already
    assert script_language("bin/x", b"#!/usr/bin/env -S ruby -w\n") == "ruby"
    assert script_language("bin/x", "#!/bin/bash\r\necho\r\n") == "bash"
    assert script_language("bin/x.txt", b"#!/bin/bash\n") is None
    assert script_language("bin/x", b"#!/usr/bin/perl\n") is None
    assert script_language("bin/x", b"# !/bin/sh\n") is None
    # a bin/ script is source, not an example, a test or configuration
    assert file_role("bin/deploy") == "source"


def test_only_the_heads_of_extensionless_files_are_read(tmp_path, monkeypatch):
    root = _repo(tmp_path / "r", True)
    write(root, "bin/big", "#!/bin/sh\n" + "big_step() { :; }\n" * 10000)
    write(root, "bin/empty", "")
    git(root, "add", "-A")
    opened: dict[int, str] = {}
    reads: list[tuple[str, int]] = []
    real_open, real_read = os.open, os.read

    def spy_open(path, flags, *args, **kw):
        fd = real_open(path, flags, *args, **kw)
        opened[fd] = os.fsdecode(path)
        return fd

    def spy_read(fd, n):
        reads.append((opened.get(fd, "?"), n))
        return real_read(fd, n)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "read", spy_read)
    listing = list_repository(str(root))
    monkeypatch.undo()
    assert "bin/big" in _rels(listing)
    mine = {p[len(str(root)) + 1 :]: n for p, n in reads if p.startswith(str(root) + os.sep)}
    # every extensionless file but the secret .envrc and the empty one, its first 256 bytes
    want = {*SCRIPTS, *NOT_SCRIPTS, "LICENSE", "bin/big"} - {"notes.txt", ".envrc"}
    assert mine == dict.fromkeys(want, listmod.SCRIPT_HEAD)


def test_fifos_are_never_opened_and_a_fifo_in_a_files_place_does_not_block(tmp_path):
    root = _repo(tmp_path / "r", True)
    (root / "bin/deploy").unlink()
    os.mkfifo(root / "bin/deploy")  # a tracked script, now a FIFO
    os.mkfifo(root / "bin/pipe")  # an untracked FIFO
    with _Alarm():
        listing = list_repository(str(root))
        walked = listmod.list_files(str(root), language_for, scripts=True)
        # lstat said regular, then a FIFO took the file's place: the read does not block
        assert listmod._script_head(str(root / "bin/pipe")) == b""
    assert _rels(listing) == [r for r in EXPECTED if r != "bin/deploy"]
    assert listing.skipped == {}
    assert "bin/pipe" not in _rels(walked)
    plain = tmp_path / "walk"  # outside git, a walk lists the FIFO: still never opened
    write(plain, "bin/deploy", SCRIPTS["bin/deploy"])
    os.mkfifo(plain / "fifo")
    with _Alarm():
        walk = listmod.list_files(str(plain), language_for, scripts=True)
    assert walk.via == "walk" and _rels(walk) == ["bin/deploy"] and walk.others == 1


def test_an_extensionless_file_that_cannot_be_read_is_unreadable(tmp_path, monkeypatch):
    root = _repo(tmp_path / "r", True)
    write(root, "bin/locked", "#!/bin/sh\nlocked() { :; }\n")
    fail_opening(monkeypatch, "bin/locked", errno.EACCES)
    listing = list_repository(str(root))
    assert _rels(listing) == EXPECTED
    assert listing.skipped == {"unreadable": 1}
    # out of file descriptors: an error, not a file skipped
    fail_opening(monkeypatch, "bin/locked", errno.EMFILE)
    with pytest.raises(ResourceError):
        list_repository(str(root))


def test_links_to_scripts_follow_the_link_rules(tmp_path):
    outside = tmp_path / "outside"
    write(outside, "tool", SCRIPTS["bin/deploy"])
    root = _repo(tmp_path / "r", False)
    (root / "bin/inside").symlink_to("deploy")
    (root / "bin/outside").symlink_to(outside / "tool")
    (root / "bin/secret").symlink_to("../.envrc")
    (root / "bin/dangling").symlink_to("nowhere")
    listing = list_repository(str(root))
    assert _rels(listing) == sorted([*EXPECTED, "bin/inside"])
    assert listing.skipped == {"symlink outside the root": 1, "symlink to a secret file": 1}


def test_the_map_names_the_scripts_definitions_and_keeps_them_cached(tmp_path, store_dir):
    root = _repo(tmp_path / "r", True)
    m = build_map(str(root), tokens=400, ruler=HeuristicRuler(), store=store_dir)
    by_file = {f.rel: f for f in m.files}
    assert sorted(by_file) == EXPECTED
    langs = {rel: by_file[rel].language for rel in SCRIPTS}
    assert langs == {
        "bin/deploy": "ruby",
        "bin/lint": "ruby",
        "scripts/setup": "bash",
        "tools/run": "python",
    }
    text = m.text
    for name in ("deploy_release", "lint_sources", "setup_workspace", "run_pipeline"):
        assert name in text
    # lib/util.py calls run_pipeline: tools/run ranks first
    assert m.files[0].rel == "tools/run"
    again = build_map(str(root), tokens=400, ruler=HeuristicRuler(), store=store_dir)
    assert again.text == text and again.scanset.scanned == 0
    # the #! line changed to Perl: off the map
    write(root, "bin/deploy", SCRIPTS["bin/deploy"].replace("ruby", "perl", 1))
    gone = build_map(str(root), tokens=400, ruler=HeuristicRuler(), store=store_dir)
    assert "deploy_release" not in gone.text and "bin/deploy" not in gone.text


def test_a_script_over_the_size_limit_is_skipped_like_any_source(tmp_path):
    root = _repo(tmp_path / "r", True)
    write(root, "bin/huge", "#!/bin/sh\n" + "huge_step() { :; }\n" * 40000)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    m = build_map(str(root), tokens=400, ruler=HeuristicRuler(), use_cache=False)
    assert "huge_step" not in m.text
    assert m.scanset.skipped.get("too large") == 1


def test_a_script_elsewhere_is_looked_for_only_when_executable(tmp_path, monkeypatch):
    """Out of the top level and bin/, scripts/... (SCRIPT_DIRS), an extensionless file is
    opened only when executable: curl's 2,000 tests/data files are never read."""
    body = "#!/bin/bash\ncheck_fixture() {\n  true\n}\n"
    write(tmp_path, "tests/data/test1", body)
    write(tmp_path, "tests/data/runner", body)
    write(tmp_path, "configure", body)  # the top level: looked for either way
    (tmp_path / "tests/data/runner").chmod(0o755)
    for rel in ("tests/data/test1", "configure"):
        (tmp_path / rel).chmod(0o644)
    opened = []
    real = listmod._script_head
    monkeypatch.setattr(listmod, "_script_head", lambda p: opened.append(p) or real(p))
    listing = listmod.list_files(str(tmp_path), language_for, scripts=True)
    assert _rels(listing) == ["configure", "tests/data/runner"]
    assert not any(p.endswith("test1") for p in opened)
