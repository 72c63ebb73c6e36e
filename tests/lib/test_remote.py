"""ctxtools.remote: which arguments are repositories, and a shallow fetch into the store
that a second run reuses and refreshes, over file:// and a local git daemon."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
from helpers import git

from ctxtools.errors import UsageError
from ctxtools.remote import Remote, RemoteError, checkout, parse_remote


@pytest.fixture(autouse=True)
def _no_prompt(monkeypatch):
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")


@pytest.mark.parametrize(
    ("arg", "url", "ref"),
    [
        ("https://example.org/owner/repo", "https://example.org/owner/repo", None),
        ("https://example.org/owner/repo.git@v1.2", "https://example.org/owner/repo.git", "v1.2"),
        (
            "https://me@example.org/owner/repo@feature/x",
            "https://me@example.org/owner/repo",
            "feature/x",
        ),
        ("git@example.org:owner/repo", "git@example.org:owner/repo", None),
        ("git@example.org:owner/repo@main", "git@example.org:owner/repo", "main"),
        (
            "ssh://git@example.org:2222/owner/repo@0123abc",
            "ssh://git@example.org:2222/owner/repo",
            "0123abc",
        ),
        ("file:///srv/git/repo.git", "file:///srv/git/repo.git", None),
        ("git://127.0.0.1:9418/repo.git@HEAD", "git://127.0.0.1:9418/repo.git", "HEAD"),
    ],
)
def test_repository_addresses(arg, url, ref):
    assert parse_remote(arg) == Remote(url, ref)


@pytest.mark.parametrize(
    "arg", [".", "src/", "/tmp/repo", "name@2x.png", "a:b", "./git@host:x", "C:\\repo", ""]
)
def test_paths_are_not_repositories(arg):
    assert parse_remote(arg) is None


@pytest.mark.parametrize(
    "arg",
    [
        "https://example.org/o/r@",
        "https://example.org/o/r@-x",
        "https://example.org/o/r@a b",
        "https://example.org/",
        "https://example.org/o/r?x=1",
    ],
)
def test_bad_addresses_are_usage_errors(arg):
    with pytest.raises(UsageError):
        parse_remote(arg)


def test_a_password_in_the_url_is_never_shown():
    remote = parse_remote("https://me:hunter2@example.org/o/r@main")
    assert remote.url == "https://me:hunter2@example.org/o/r"  # git gets it as given
    assert remote.label == "https://me:***@example.org/o/r@main"


@pytest.fixture
def upstream(tmp_path) -> tuple[Path, Path]:
    """A work tree with two commits (tag v1 on the first) and its bare clone."""
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "auth.py").write_text("def login(user):\n    return user\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "one")
    git(work, "tag", "v1")
    (work / "tokens.py").write_text("def refresh_token(t):\n    return t\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "two")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    return work, bare


def test_fetch_reuse_and_refresh_over_file_urls(tmp_path, upstream):
    work, bare = upstream
    store = tmp_path / "store"
    remote = parse_remote(f"file://{bare}")
    first = checkout(remote, store)
    assert sorted(os.listdir(first.path)) == [".git", "auth.py", "tokens.py"]
    assert first.commit == git(work, "rev-parse", "HEAD").strip()
    assert Path(first.path).parent == store / "remote"
    assert git(Path(first.path), "rev-list", "--count", "HEAD").strip() == "1"  # shallow
    # a new commit upstream: the same directory, brought up to date
    (work / "auth.py").unlink()
    git(work, "commit", "-qam", "three")
    git(work, "push", "-q", str(bare), "main")
    second = checkout(remote, store)
    assert second.path == first.path and not second.notes
    assert second.commit == git(work, "rev-parse", "HEAD").strip()
    assert sorted(os.listdir(second.path)) == [".git", "tokens.py"]
    # upstream gone (offline): the copy serves, with a note
    bare.rename(tmp_path / "gone.git")
    third = checkout(remote, store)
    assert third.commit == second.commit
    (note,) = third.notes
    assert "could not refresh" in note and second.commit[:12] in note


def test_a_broken_copy_is_fetched_anew(tmp_path, upstream):
    work, bare = upstream
    remote = parse_remote(f"file://{bare}")
    first = checkout(remote, tmp_path / "store")
    (Path(first.path) / ".git" / "HEAD").unlink()
    again = checkout(remote, tmp_path / "store")
    assert again.path == first.path and not again.notes
    assert again.commit == git(work, "rev-parse", "HEAD").strip()


def test_a_tag_and_a_commit_id_are_checked_out(tmp_path, upstream):
    work, bare = upstream
    store = tmp_path / "store"
    tagged = checkout(parse_remote(f"file://{bare}@v1"), store)
    assert sorted(os.listdir(tagged.path)) == [".git", "auth.py"]
    sha = git(work, "rev-parse", "v1").strip()
    pinned = checkout(parse_remote(f"file://{bare}@{sha}"), store)
    assert pinned.commit == sha and pinned.path != tagged.path
    bare.rename(tmp_path / "gone.git")
    again = checkout(parse_remote(f"file://{bare}@{sha}"), store)
    assert again.commit == sha and not again.notes  # a commit id is never fetched again


def test_a_failed_fetch_is_one_error_and_leaves_nothing(tmp_path, upstream):
    _, bare = upstream
    store = tmp_path / "store"
    with pytest.raises(RemoteError, match="couldn't find remote ref nope"):
        checkout(parse_remote(f"file://{bare}@nope"), store)
    with pytest.raises(RemoteError, match="does not appear to be a git repository"):
        checkout(parse_remote(f"file://{tmp_path}/missing.git"), store)
    assert not [p for p in (store / "remote").iterdir() if not p.name.endswith(".lock")]


def test_git_missing_is_said(tmp_path, upstream, monkeypatch):
    _, bare = upstream
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(RemoteError, match="git is not on PATH"):
        checkout(parse_remote(f"file://{bare}"), tmp_path / "store")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def daemon(upstream):
    """``git daemon`` serving the bare repository on loopback, on a free port."""
    _, bare = upstream
    port = _free_port()
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--listen=127.0.0.1",
            f"--port={port}",
            f"--base-path={bare.parent}",
            str(bare.parent),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:  # until it accepts connections (a bound on the wait, not a measure)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "no git daemon"
                time.sleep(0.05)
        yield f"git://127.0.0.1:{port}/{bare.name}"
    finally:
        proc.terminate()
        proc.wait(10)


def test_fetch_from_a_git_daemon(tmp_path, upstream, daemon):
    work, _ = upstream
    got = checkout(parse_remote(daemon), tmp_path / "store")
    assert sorted(os.listdir(got.path)) == [".git", "auth.py", "tokens.py"]
    assert got.commit == git(work, "rev-parse", "HEAD").strip()
    old = checkout(parse_remote(daemon + "@v1"), tmp_path / "store")
    assert sorted(os.listdir(old.path)) == [".git", "auth.py"]
    with pytest.raises(RemoteError, match="cannot fetch"):
        checkout(parse_remote(daemon.replace("bare.git", "other.git")), tmp_path / "store")
