"""ctx-repomap as a user runs it: text and JSON output, options, notes, bad input."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import write, write_scripts

from ctxtools.tokens import get_ruler


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git repository with Python, Go, TypeScript, Rust and Java, an ignored file and a
    vendored folder."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    root = tmp_path / "repo"
    write(
        root,
        "store/handles.py",
        "class HandleStore:\n"
        "    def put(self, stream, name):\n"
        "        return name\n\n\n"
        "def open_store(path: str) -> 'HandleStore':\n"
        "    return HandleStore()\n",
    )
    for n in range(3):
        write(
            root,
            f"cmds/cmd{n}.py",
            f"from store.handles import HandleStore, open_store\n\n\n"
            f"def command_{n}(store: HandleStore):\n"
            f"    return open_store('p').put(None, 'n{n}')\n",
        )
    write(
        root, "srv/server.go", "package srv\n\ntype Server struct{}\n\nfunc (s *Server) Run() {}\n"
    )
    write(root, "web/app.tsx", "export const renderApp = (): string => 'x';\n")
    write(root, "core/lib.rs", "pub struct Engine;\nimpl Engine {\n    pub fn start(&self) {}\n}\n")
    write(root, "java/Main.java", "public class Main {\n  static class Inner {}\n}\n")
    write(root, "vendor/dep.py", "def vendored():\n    pass\n")
    write(root, ".gitignore", "ignored.py\n")
    write(root, "ignored.py", "def ignored():\n    pass\n")
    write(root, "pyproject.toml", "[project]\nname = 'demo'\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def test_text_map(script_runner, repo):
    r = script_runner.run(["ctx-repomap", str(repo)])
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[:3] == ["store/handles.py:", "1:class HandleStore", "2:  def put(stream, name)"]
    assert "vendored" not in r.stdout and "ignored" not in r.stdout
    # visibility words are dropped: they cost tokens and say little in a map
    assert "1:struct Engine\n2:impl Engine\n3:  fn start(&self)\n" in r.stdout
    assert "3:type Server struct\n5:  func (s *Server) Run()\n" in r.stdout
    assert "1:const renderApp = (): string => 'x'\n" in r.stdout
    assert "java/Main.java:\n1:class Main\n2:  class Inner\n" in r.stdout
    assert "pyproject.toml" in lines  # a manifest, as a bare path
    assert get_ruler().ruler.count(r.stdout) <= 1000


@pytest.mark.process
def test_exact_budget_through_the_command(script_runner, repo):
    ruler = get_ruler().ruler
    for budget in (50, 64, 90, 130):
        r = script_runner.run(["ctx-repomap", str(repo), "--tokens", str(budget)])
        assert r.returncode == 0
        assert ruler.count(r.stdout) <= budget
    r = script_runner.run(["ctx-repomap", str(repo), "-t", "60", "--heuristic"])
    assert len(r.stdout) <= 4 * 60


def test_json_document(script_runner, repo):
    r = script_runner.run(["ctx-repomap", str(repo), "--json", "--tokens", "200"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["budget"] == 200 and doc["tokens"] <= 200
    assert doc["counter"] == "cl100k_base" and doc["exact"] is True
    assert doc["files_listed_by"] == "git"
    assert doc["skipped"] == {"vendored": 1}
    assert doc["truncated"] is False
    paths = [f["path"] for f in doc["files"]]
    assert paths[0] == "store/handles.py"
    assert len(paths) == doc["mapped_files"] == 9
    ranks = [f["rank"] for f in doc["files"]]
    assert ranks == sorted(ranks, reverse=True)
    hs = doc["files"][0]["definitions"][0]
    assert hs == {
        "kind": "class",
        "name": "HandleStore",
        "line": 1,
        "end_line": 3,
        "signature": "class HandleStore:",
        "scope": None,
        "score": hs["score"],
    }
    put = doc["files"][0]["definitions"][1]
    assert (put["name"], put["scope"], put["kind"]) == ("put", "HandleStore", "method")
    assert doc["edges"]["count"] >= 3
    assert doc["edges"]["top"][0]["to"] == "store/handles.py"
    assert doc["map"].startswith("store/handles.py:\n")
    again = script_runner.run(["ctx-repomap", str(repo), "--json", "--tokens", "200"])
    assert again.stdout == r.stdout
    from ctxtools.repomap.core import build_map

    m = build_map(str(repo), tokens=200)
    import orjson

    assert m.json_bytes() == orjson.dumps(m.to_json(), option=orjson.OPT_APPEND_NEWLINE)
    assert m.json_bytes().decode() == r.stdout


def test_focus_and_query_options(script_runner, repo):
    r = script_runner.run(["ctx-repomap", str(repo), "--focus", str(repo / "srv/server.go")])
    assert r.stdout.startswith("srv/server.go:\n")
    r = script_runner.run(["ctx-repomap", str(repo), "--query", "start the Engine"])
    assert r.stdout.startswith("core/lib.rs:\n")


def test_a_query_with_no_usable_word_says_the_map_is_by_structure(script_runner, repo):
    plain = script_runner.run(["ctx-repomap", str(repo)])
    for query in ("the a of", "", "  "):
        r = script_runner.run(["ctx-repomap", str(repo), "--query", query])
        assert r.returncode == 0 and r.stdout == plain.stdout
        assert f"note: no usable word in --query {query!r}" in r.stderr
    r = script_runner.run(["ctx-repomap", str(repo), "--query", "start the Engine"])
    assert "no usable word" not in r.stderr


def test_focus_relative_to_the_directory(script_runner, repo, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = script_runner.run(["ctx-repomap", "repo", "--focus", "web/app.tsx"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("web/app.tsx:\n")


def test_default_directory_is_cwd(script_runner, repo, monkeypatch):
    monkeypatch.chdir(repo)
    r = script_runner.run(["ctx-repomap", "-t", "80"])
    assert r.returncode == 0 and r.stdout.startswith("store/handles.py:\n")


def test_max_files_truncation_is_said_twice(script_runner, repo):
    r = script_runner.run(["ctx-repomap", str(repo), "--max-files", "3"])
    assert r.returncode == 0
    assert r.stdout.startswith("# truncated: 3 of 9 files mapped (--max-files)\n")
    assert "truncated: mapped the first 3 of 9 files" in r.stderr


def test_the_truncation_counts_the_same_files_in_its_header_note_and_json(script_runner, repo):
    """A file over --max-file-size is not a candidate of the map: the stderr note counted it
    ("of 10 files") where the header and JSON did not ("of 9")."""
    write(repo, "big.py", "def big():\n    pass\n" + "# pad\n" * 400)
    r = script_runner.run(["ctx-repomap", str(repo), "--max-files", "3", "--max-file-size", "1K"])
    assert r.returncode == 0
    assert r.stdout.startswith("# truncated: 3 of 9 files mapped (--max-files)\n")
    assert "truncated: mapped the first 3 of 9 files" in r.stderr
    j = script_runner.run(["ctx-repomap", str(repo), "--max-files", "3", "--max-file-size", "1K",
                           "--json"])
    assert json.loads(j.stdout)["candidates"] == 9


def test_max_file_size_with_units(script_runner, repo):
    write(repo, "big.py", "def big():\n    pass\n" + "# pad\n" * 400)
    r = script_runner.run(["ctx-repomap", str(repo), "--max-file-size", "1K", "--json"])
    assert json.loads(r.stdout)["skipped"]["too large"] == 1
    r = script_runner.run(["ctx-repomap", str(repo), "--max-file-size", "lots"])
    assert r.returncode == 2
    assert "is not a size" in r.stderr


def test_cache_is_used_and_no_cache_skips_it(script_runner, repo, store_dir):
    r = script_runner.run(["ctx-repomap", str(repo), "--no-cache"])
    assert r.returncode == 0
    assert not (store_dir / "repomap").exists()
    first = script_runner.run(["ctx-repomap", str(repo)])
    caches = list((store_dir / "repomap").glob("cache-v1-*.bin"))
    assert len(caches) == 1
    caches[0].write_bytes(b"not a cache")
    # The same call is answered from the result memo, without reading the scan cache ...
    r = script_runner.run(["ctx-repomap", str(repo)])
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout == first.stdout
    # ... another one needs the scans: the damaged cache is rebuilt, with a note.
    r = script_runner.run(["ctx-repomap", str(repo), "--tokens", "999"])
    assert r.returncode == 0
    assert r.stdout == first.stdout
    assert "scan cache" in r.stderr and "rebuilding" in r.stderr
    other = store_dir.parent / "elsewhere"
    r = script_runner.run(["ctx-repomap", str(repo), "--store", str(other)])
    assert list((other / "repomap").glob("cache-v1-*.bin"))


def test_second_run_reuses_the_map_and_json_does_not(script_runner, repo, store_dir):
    first = script_runner.run(["ctx-repomap", str(repo), "-t", "120"])
    assert list((store_dir / "repomap").glob("result-v1-*.bin"))
    second = script_runner.run(["ctx-repomap", str(repo), "-t", "120"])
    assert second.stdout == first.stdout and second.stderr == ""
    doc = json.loads(script_runner.run(["ctx-repomap", str(repo), "-t", "120", "--json"]).stdout)
    assert doc["map"] == first.stdout and doc["files"]


def test_edit_changes_the_map(script_runner, repo):
    before = script_runner.run(["ctx-repomap", str(repo)]).stdout
    write(repo, "store/handles.py", "class RenamedStore:\n    pass\n")
    after = script_runner.run(["ctx-repomap", str(repo)]).stdout
    assert "RenamedStore" in after and "HandleStore" not in after.split("cmds/")[0]
    assert before != after


def test_not_a_directory(script_runner, repo):
    r = script_runner.run(["ctx-repomap", str(repo / "pyproject.toml")])
    assert r.returncode == 1
    assert r.stderr == (
        f"ctx-repomap: error: {repo / 'pyproject.toml'}: not a directory "
        "(give the repository's directory)\n"
    )
    assert r.stdout == ""
    r = script_runner.run(["ctx-repomap", str(repo / "nope")])
    assert r.returncode == 1
    assert "no such directory" in r.stderr


def test_budget_below_50_is_a_usage_error(script_runner, repo, store_dir):
    r = script_runner.run(["ctx-repomap", str(repo), "--tokens", "49"])
    assert r.returncode == 2
    assert "49 is below the minimum of 50" in r.stderr
    assert r.stdout == ""
    assert not (store_dir / "repomap").exists()


@pytest.mark.process
def test_missing_focus_file(script_runner, repo):
    r = script_runner.run(["ctx-repomap", str(repo), "--focus", "nope.py"])
    assert r.returncode == 1
    assert "--focus nope.py: no such file" in r.stderr


def test_a_focus_file_outside_the_directory_is_said_to_be_outside(script_runner, repo, tmp_path):
    """It said "no such file under DIR" of a file that exists, elsewhere."""
    (tmp_path / "elsewhere.py").write_text("def elsewhere():\n    pass\n")
    r = script_runner.run(["ctx-repomap", str(repo), "--focus", str(tmp_path / "elsewhere.py")])
    assert r.returncode == 1
    where = tmp_path / "elsewhere.py"
    assert r.stderr == f"ctx-repomap: error: --focus {where}: not under {repo}\n"


def test_unmapped_focus_file_is_a_note(script_runner, repo):
    r = script_runner.run(["ctx-repomap", str(repo), "--focus", "vendor/dep.py"])
    assert r.returncode == 0
    assert "--focus vendor/dep.py: not a mapped file" in r.stderr


@pytest.mark.parametrize("content", [None, b"\x00\x01binary"])
def test_empty_and_binary_only_repositories(script_runner, tmp_path, content):
    root = tmp_path / "empty"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    if content is not None:
        write(root, "data.bin", content)
        write(root, "looks.py", content)
    r = script_runner.run(["ctx-repomap", str(root)])
    assert r.returncode == 0
    assert r.stdout == ""
    assert "ctx-repomap: no source files to map" in r.stderr
    doc = json.loads(script_runner.run(["ctx-repomap", str(root), "--json"]).stdout)
    assert doc["files"] == [] and doc["map"] == "" and doc["tokens"] == 0


def test_a_tree_whose_only_source_file_is_minified_says_so(script_runner, tmp_path):
    # "no source files to map" of a directory holding long.py: only --explain said why
    write(tmp_path, "long.py", "def alpha():\n    return 1\n\nS = '" + "x" * 12000 + "'\n")
    write(tmp_path, "vendor/lib.py", "def beta():\n    return 2\n")
    r = script_runner.run(["ctx-repomap", str(tmp_path)])
    assert r.returncode == 0 and r.stdout == ""
    assert r.stderr == (
        "ctx-repomap: no source files to map (left out: 1 minified, 1 vendored)\n"
    )


@pytest.mark.process
def test_crlf_invalid_utf8_and_giant_minified_line(script_runner, tmp_path):
    root = tmp_path / "odd"
    write(root, "win.py", b"class Win:\r\n    def open_it(self):\r\n        pass\r\n")
    write(root, "latin.py", b"def r\xe9sum\xe9():\n    pass\n\ndef plain():\n    pass\n")
    write(root, "dist/app.js", b"var a=1;" * (10 * 1024 * 1024 // 8))
    r = script_runner.run(["ctx-repomap", str(root), "--json"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["skipped"] == {"too large": 1}
    assert "1:class Win\n2:  def open_it()\n" in doc["map"]
    assert "def plain()" in doc["map"]
    r = script_runner.run(["ctx-repomap", str(root), "--max-file-size", "11M"])
    assert r.returncode == 0 and "app.js" not in r.stdout


def test_symlink_loop_and_escape(script_runner, tmp_path):
    outside = tmp_path / "outside"
    write(outside, "secret.py", "def secret():\n    pass\n")
    root = tmp_path / "links"
    write(root, "ok.py", "def ok():\n    pass\n")
    (root / "loop").symlink_to(".", target_is_directory=True)
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "escape.py").symlink_to(outside / "secret.py")
    r = script_runner.run(["ctx-repomap", str(root)])
    assert r.returncode == 0
    assert r.stdout == "ok.py:\n1:def ok()\n"


def test_extensionless_scripts_are_mapped_by_their_shebang(script_runner, tmp_path, monkeypatch):
    # issue 19: bin/deploy (ruby), bin/lint (env -S ruby -w), scripts/setup (bash, CRLF),
    # tools/run (python3) are mapped; a binary, text without #!, Perl, a .txt and a secret
    # name are not.
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    root = tmp_path / "scripts"
    write_scripts(root)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    r = script_runner.run(["ctx-repomap", str(root), "--json"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    langs = {f["path"]: f["language"] for f in doc["files"]}
    assert langs == {
        "bin/deploy": "ruby",
        "bin/lint": "ruby",
        "scripts/setup": "bash",
        "tools/run": "python",
    }
    text = script_runner.run(["ctx-repomap", str(root)]).stdout
    assert "bin/deploy:\n3:def deploy_release(tag)\n" in text
    assert "scripts/setup:\n3:setup_workspace()\n" in text
    assert "tools/run:\n5:def run_pipeline(stages)\n" in text
    assert "not_code" not in text and "secret_setup" not in text and "report" not in text


def test_help_has_an_example(script_runner):
    r = script_runner.run(["ctx-repomap", "--help"])
    assert r.returncode == 0
    assert "ctx-repomap . --tokens 1000 > repomap.txt" in r.stdout
    assert "--focus" in r.stdout and "--max-file-size" in r.stdout


def test_real_sources_under_tests_data(script_runner):
    """The project's own test data: source files in six languages (tests/data/)."""
    data = Path(__file__).resolve().parents[1] / "data"
    r = script_runner.run(["ctx-repomap", str(data), "--tokens", "300", "--json"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert 0 < doc["tokens"] <= 300 and doc["shown"]["symbols"] >= 20
    languages = {f["language"] for f in doc["files"]}
    assert {"python", "go", "javascript", "typescript", "rust", "java"} <= languages
    defs = {(f["path"], d["name"], d["scope"]) for f in doc["files"] for d in f["definitions"]}
    assert ("scan/commonjs.js", "protocol", "req") in defs
    assert ("scan/middleware.js", "query", None) in defs
    assert ("readme_sample/lending/catalog.py", "Catalog", None) in defs
    # var accepts = require('accepts') is an import; req.accepts = function is a method
    assert ("scan/commonjs.js", "accepts", "req") in defs
    assert ("scan/commonjs.js", "accepts", None) not in defs


@pytest.mark.script_launch_mode("inprocess")  # the runner's subprocess mode decodes strictly
@pytest.mark.parametrize("use_git", [False, True])
def test_undecodable_file_name(script_runner, tmp_path, use_git):
    root = tmp_path / "names"
    root.mkdir()
    raw = os.path.join(os.fsencode(root), b"caf\xe9.py")
    with open(raw, "wb") as fh:
        fh.write(b"def named_oddly():\n    pass\n")
    if use_git:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    r = script_runner.run(["ctx-repomap", str(root)])
    assert r.returncode == 0, r.stderr
    assert "def named_oddly()" in r.stdout
    doc = json.loads(script_runner.run(["ctx-repomap", str(root), "--json"]).stdout)
    assert doc["files"][0]["path"] == "caf\ufffd.py"


@pytest.mark.script_launch_mode("inprocess")  # monkeypatches the system calls
def test_a_file_the_open_file_limit_keeps_out_fails_the_map(script_runner, tmp_path, monkeypatch):
    import errno

    from helpers import fail_opening, many_sources

    many_sources(tmp_path / "d", 3)
    fail_opening(monkeypatch, "m0001.py", errno.EMFILE)
    r = script_runner.run(["ctx-repomap", str(tmp_path / "d"), "--no-cache"])
    assert r.returncode == 1
    assert r.stdout == ""  # was: a map of the other files, m0001.py skipped as "unreadable"
    assert r.stderr.startswith("ctx-repomap: error: ") and r.stderr.count("\n") == 1
    assert "m0001.py: Too many open files" in r.stderr


def test_explain_says_what_the_map_shows_and_leaves_out(script_runner, repo):
    """Issue 20.9: --explain in ctx-pack's shape -- the budget, each shown file with its
    rank score and its symbols, what was left out and why -- on stderr; --json carries
    it as "explain". The map itself is the same bytes."""
    plain = script_runner.run(["ctx-repomap", str(repo), "-t", "60", "--no-cache"])
    r = script_runner.run(["ctx-repomap", str(repo), "-t", "60", "--no-cache", "--explain"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == plain.stdout
    err = r.stderr.splitlines()
    assert err[0].startswith("budget 60 tokens (cl100k_base); used ")
    assert err[2].startswith("chosen (")
    assert "  store/handles.py  score " in r.stderr and "vendor/dep.py" not in r.stderr
    assert any(line.startswith("left out (") for line in err)
    doc = json.loads(
        script_runner.run(["ctx-repomap", str(repo), "-t", "60", "--json", "--explain"]).stdout
    )
    shown = [c["what"] for c in doc["explain"]["chosen"]]
    headers = [ln.rstrip(":") for ln in doc["map"].splitlines() if not ln[:1].isdigit()]
    assert shown == [h for h in headers if h] and shown
    for item in doc["explain"]["chosen"]:
        assert item["score"] > 0 and item["why"].startswith("rank ")
    left = {i["what"]: i["why"] for i in doc["explain"]["left_out"]}
    assert left["1 file(s)"] == "not mapped: vendored"
    ranked = [f["path"] for f in doc["files"]]
    for path in ranked:
        assert path in shown or path in left  # every mapped file is accounted for


def test_files_from_maps_the_listed_files_only(script_runner, repo, monkeypatch):
    """Issue 28.9: --files-from/-0 on every command that takes many paths, ctx-repomap too:
    the listed files (relative to the working directory) are mapped instead of the tree."""
    import io
    import subprocess

    monkeypatch.chdir(repo)
    every = json.loads(script_runner.run(["ctx-repomap", ".", "--json"]).stdout)
    ls = ["git", "ls-files", "-z", "-co", "--exclude-standard"]
    tracked = subprocess.run(ls, capture_output=True, check=True).stdout
    listed = [n for n in tracked.decode().split("\0") if n.endswith(".py")]
    assert listed and len(listed) < every["candidates"]
    r = script_runner.run(
        ["ctx-repomap", ".", "--json", "--files-from", "-", "-0"],
        stdin=io.TextIOWrapper(io.BytesIO("\0".join(listed).encode())),
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    # the listed files pass the same filters as a walked tree's: vendor/ stays out
    assert doc["files_listed_by"] == "list" and doc["skipped"] == {"vendored": 1}
    assert doc["candidates"] == len(listed) - 1
    assert {f["path"] for f in doc["files"]} <= set(listed)
    r = script_runner.run(
        ["ctx-repomap", "store", "--files-from", "-"],
        stdin=io.StringIO("store/handles.py\n../outside.py\n"),
    )
    assert r.returncode == 0
    assert r.stderr == "ctx-repomap: note: 1 listed names outside store left out: ../outside.py\n"
    assert "handles.py" in r.stdout
    # a listed file that is not there (deleted since the list was made) is named, not
    # counted among the "unreadable" ones
    r = script_runner.run(
        ["ctx-repomap", ".", "--files-from", "-"],
        stdin=io.StringIO("store/handles.py\nstore/gone.py\n--help.py\n"),
    )
    assert r.returncode == 0
    assert r.stderr == (
        "ctx-repomap: note: 2 listed names not found left out: store/gone.py, --help.py\n"
    )
    assert "handles.py" in r.stdout
