"""A repository's URL where a command takes a tree: ctx-pack URL, ctx-repomap URL,
ctx-count --tree URL, over file:// (a local bare repository); the failures in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import git


@pytest.fixture(autouse=True)
def _no_prompt(monkeypatch):
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")


@pytest.fixture
def url(tmp_path) -> str:
    """A bare repository of real sources, tag v1 on the first of two commits."""
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "AGENTS.md").write_text("Run the tests with make test.\n")
    (work / "src" / "auth.py").write_text(
        "import hmac\n\n\ndef verify_signature(key: bytes, body: bytes, sig: str) -> bool:\n"
        "    mac = hmac.new(key, body, 'sha256').hexdigest()\n"
        "    return hmac.compare_digest(mac, sig)\n"
    )
    git(work, "init", "-q", "-b", "main")
    git(work, "add", ".")
    git(work, "commit", "-qm", "one")
    git(work, "tag", "v1")
    (work / "src" / "retry.py").write_text(
        "def backoff_delay(attempt: int, base: float = 0.5) -> float:\n"
        "    return base * 2 ** attempt\n"
    )
    git(work, "add", ".")
    git(work, "commit", "-qm", "two")
    bare = tmp_path / "upstream.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    return f"file://{bare}"


@pytest.fixture
def elsewhere(tmp_path, monkeypatch) -> Path:
    here = tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)
    return here


@pytest.mark.process
def test_pack_a_repository_by_its_url(script_runner, url, elsewhere):
    r = script_runner.run(["ctx-pack", "-q", "how is verify_signature done?", url, "--json"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert {f["path"] for f in doc["files"]} >= {"src/auth.py"}
    assert "def verify_signature" in doc["text"]
    assert "Run the tests with make test." in doc["text"]  # its root's instructions
    assert not list(elsewhere.iterdir())  # nothing cloned into the current directory
    again = script_runner.run(["ctx-pack", "-q", "how is verify_signature done?", url, "--json"])
    assert again.stdout == r.stdout  # the cached copy, the same bytes


@pytest.mark.process
def test_repomap_and_count_tree_of_a_url_at_a_ref(script_runner, url, elsewhere):
    r = script_runner.run(["ctx-repomap", url + "@v1"])
    assert r.returncode == 0, r.stderr
    assert "src/auth.py" in r.stdout and "retry.py" not in r.stdout
    r = script_runner.run(["ctx-repomap", url])
    assert "src/retry.py" in r.stdout
    r = script_runner.run(["ctx-count", "--tree", url, "--json"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["root"] == url and doc["total"]["files"] == 3


@pytest.mark.process
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["ctx-repomap", "{url}@nope"], "cannot fetch: fatal: couldn't find remote ref nope"),
        (["ctx-count", "--tree", "{url}x"], "cannot fetch: fatal:"),
        (["ctx-pack", "-q", "x", "{url}@no-such-tag"], "couldn't find remote ref no-such-tag"),
    ],
)
def test_a_failed_fetch_is_one_line_and_exit_1(script_runner, url, elsewhere, args, words):
    r = script_runner.run([a.format(url=url) for a in args])
    assert r.returncode == 1 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"{args[0]}: error: {url}") and words in line


def test_git_missing_is_one_line_and_exit_1(script_runner, url, elsewhere, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    r = script_runner.run(["ctx-repomap", url])
    assert r.returncode == 1
    assert r.stderr == (
        f"ctx-repomap: error: {url}: git is not on PATH (a remote repository is fetched with "
        "git) (install git, or clone it yourself and give the directory)\n"
    )


@pytest.mark.process
@pytest.mark.parametrize(
    ("more", "words"),
    [
        (["src"], "a repository URL is packed alone"),
        (["--root", "src"], "--root does not go with a repository URL"),
        (["--changed"], "--changed does not go with a repository URL"),
        (["https://example.org/o/r@-x"], "is not a git ref"),
    ],
)
def test_pack_usage_errors_with_a_url(script_runner, url, elsewhere, more, words):
    (elsewhere / "src").mkdir()
    args = (
        ["ctx-pack", "-q", "x", *more]
        if more[0].startswith("https")
        else ["ctx-pack", "-q", "x", url, *more]
    )
    r = script_runner.run(args)
    assert r.returncode == 2 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert words in line
