"""One filter for every command that walks a tree (issue 28.16): what the root's
.ctxignore or --exclude GLOB keeps out is out of ctx-pack's files and map, ctx-repomap's
map (text and --json) and ctx-count --tree's totals, names and all."""

from __future__ import annotations

import json
import re

import pytest
from helpers import git, write

CLIENT = '''"""The service's client."""

from app.settings import GITHUB_TOKEN


class Client:
    def fetch_issue(self, number):
        return {"number": number, "auth": GITHUB_TOKEN}
'''
SETTINGS = '''"""Settings read by the client."""

import os

GITHUB_TOKEN = os.environ.get("APP_TOKEN_VALUE", "")
'''
LEGACY = '''"""The old interface, kept for one release."""

from app.client import Client


def legacy_fetch_issue(number):
    return Client().fetch_issue(number)
'''
MAIN = '''"""Entry point."""

from app.client import Client


def main():
    print(Client().fetch_issue(1))
'''


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git repository whose .ctxignore names secrets_cfg.py; legacy/ is for --exclude."""
    root = tmp_path / "repo"
    write(root, "app/__init__.py", "")
    write(root, "app/client.py", CLIENT)
    write(root, "app/settings.py", 'GITHUB_TOKEN_URL = "https://example.com"\n')
    write(root, "app/secrets_cfg.py", SETTINGS)
    write(root, "legacy/old_api.py", LEGACY)
    write(root, "main.py", MAIN)
    write(root, ".ctxignore", "# kept out of every listing\nsecrets_cfg.py\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    monkeypatch.chdir(root)
    return root


LEFT_OUT = ("secrets_cfg.py", "GITHUB_TOKEN =", "legacy", "legacy_fetch_issue")
MAP_LINE = re.compile(r"\d+:\s*GITHUB_TOKEN\b")  # the constant as a map shows it


def _absent(text: str) -> None:
    for word in LEFT_OUT:
        assert word not in text, word
    assert not MAP_LINE.search(text)


def test_repomap_leaves_ctxignore_and_exclude_off_the_map(script_runner, repo):
    r = script_runner.run(["ctx-repomap", ".", "--exclude", "legacy/", "--no-cache"])
    assert r.returncode == 0, r.stderr
    assert "app/client.py" in r.stdout and "fetch_issue" in r.stdout
    _absent(r.stdout)
    r = script_runner.run(["ctx-repomap", ".", "--exclude", "legacy/", "--json"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    paths = [f["path"] for f in doc["files"]]
    assert "app/client.py" in paths
    names = {d["name"] for f in doc["files"] for d in f["definitions"]}
    assert "GITHUB_TOKEN" not in names and "legacy_fetch_issue" not in names
    _absent(r.stdout)
    assert doc["skipped"]["excluded"] == 2
    # without the filter the same files are on the map: the test can fail
    (repo / ".ctxignore").unlink()
    r = script_runner.run(["ctx-repomap", ".", "--json", "--no-cache"])
    doc = json.loads(r.stdout)
    assert {"app/secrets_cfg.py", "legacy/old_api.py"} <= {f["path"] for f in doc["files"]}


def test_repomap_cache_does_not_serve_a_map_made_without_the_filter(script_runner, repo):
    ignore = repo / ".ctxignore"
    ignore.unlink()
    first = script_runner.run(["ctx-repomap", "."])
    assert first.returncode == 0 and MAP_LINE.search(first.stdout)
    again = script_runner.run(["ctx-repomap", "."])
    assert again.stdout == first.stdout  # (the result memo serves it)
    ignore.write_text("secrets_cfg.py\n")
    r = script_runner.run(["ctx-repomap", "."])
    assert r.returncode == 0, r.stderr
    assert "secrets_cfg.py" not in r.stdout and not MAP_LINE.search(r.stdout)
    assert r.stdout == script_runner.run(["ctx-repomap", ".", "--no-cache"]).stdout
    ignore.unlink()
    assert script_runner.run(["ctx-repomap", "."]).stdout == first.stdout


def test_pack_leaves_them_out_of_the_map_section_and_the_files(script_runner, repo):
    args = ["ctx-pack", "-q", "fetch issue token", "--tokens", "4000", "."]
    r = script_runner.run([*args, "--exclude", "legacy/*"])
    assert r.returncode == 0, r.stderr
    assert "# Repository map" in r.stdout and "app/client.py" in r.stdout
    _absent(r.stdout)
    # --include cannot bring them back, so the note does not offer it
    assert "left out 2 file(s): excluded (--exclude or .ctxignore)" in r.stderr
    r = script_runner.run([*args, "--exclude", "legacy/*", "--format", "json"])
    doc = json.loads(r.stdout)
    assert not {f["path"] for f in doc["files"]} & {"app/secrets_cfg.py", "legacy/old_api.py"}
    _absent(r.stdout)


def test_pack_map_from_the_cache_follows_a_changed_ctxignore(script_runner, repo):
    ignore = repo / ".ctxignore"
    ignore.unlink()
    args = ["ctx-pack", "-q", "fetch issue token", "--tokens", "4000", "."]
    before = script_runner.run(args)
    assert before.returncode == 0 and MAP_LINE.search(before.stdout)
    ignore.write_text("secrets_cfg.py\n")
    r = script_runner.run(args)
    assert r.returncode == 0, r.stderr
    assert "secrets_cfg.py" not in r.stdout and not MAP_LINE.search(r.stdout)


def test_count_tree_totals_leave_them_out(script_runner, repo):
    r = script_runner.run(["ctx-count", "--tree", ".", "--exclude", "legacy", "--json"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    _absent(r.stdout)
    assert doc["skipped"]["excluded"] == 2
    whole = script_runner.run(["ctx-count", "--tree", ".", "--json"])
    assert "legacy" in whole.stdout and "secrets_cfg.py" not in whole.stdout
    ignored = (repo / ".ctxignore").read_bytes()
    (repo / ".ctxignore").write_bytes(b"")
    everything = json.loads(script_runner.run(["ctx-count", "--tree", ".", "--json"]).stdout)
    left_out = len(SETTINGS.encode()) + len(LEGACY.encode())
    assert doc["total"]["files"] == everything["total"]["files"] - 2
    assert doc["total"]["bytes"] == everything["total"]["bytes"] - left_out + len(ignored)
    text = script_runner.run(["ctx-count", "--tree", ".", "--exclude", "legacy"]).stdout
    assert "legacy" not in text and "secrets_cfg.py" in text


def test_a_glob_that_matches_nothing_and_a_bad_ctxignore_line_are_warnings(script_runner, repo):
    (repo / ".ctxignore").write_text("secrets_cfg.py\n[z-a].py\n")
    for argv in (["ctx-repomap", "."], ["ctx-count", "--tree", "."]):
        r = script_runner.run([*argv, "--exclude", "nothing/*"])
        assert r.returncode == 0, r.stderr
        assert "warning: --exclude 'nothing/*' matches no file" in r.stderr
        assert "warning: .ctxignore line 2: bad pattern" in r.stderr
        assert not MAP_LINE.search(r.stdout) and "secrets_cfg" not in r.stdout


def test_count_exclude_goes_with_tree(script_runner, repo):
    r = script_runner.run(["ctx-count", "--exclude", "legacy", "main.py"])
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("ctx-count: error: --exclude goes with --tree")
    assert len(r.stderr.splitlines()) == 1
