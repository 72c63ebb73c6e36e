"""Hostile arguments and environments: an empty value of an option that names something, a
fractional or huge --max-file-size, ctx-mcp with its stdin closed, a relative
XDG_CACHE_HOME. Each was taken silently (status 0, defaults) or said something wrong."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import click
import pytest
from helpers import run_bytes, write

BIN = Path(sys.executable).parent
TRANSCRIPT = json.dumps([{"role": "user", "content": "hello"}])


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    """A small repository as the working directory (the store is CTX_STORE, in tmp_path)."""
    root = tmp_path / "repo"
    write(root, "a.py", "def compute_total(cart):\n    return sum(cart)\n")
    write(root, "notes.md", "# Notes\n\nThe cart total is computed in a.py.\n")
    write(root, "t.json", TRANSCRIPT)
    monkeypatch.chdir(root)
    return root


# --- 1. an empty value of an option that names something ----------------------------------

# Every one of these exited 0 with the option's default (or said ": no such file", or went on
# to another error), where --model "$MODEL" with MODEL unset must not pass for no --model.
EMPTY = [
    (["ctx-count", "--model", "", "a.py"], "--model"),
    (["ctx-count", "--encoding", "", "a.py"], "--encoding"),
    (["ctx-count", "--tokenizer", "", "a.py"], "--tokenizer"),
    (["ctx-count", "--profiles-file", "", "a.py"], "--profiles-file"),
    (["ctx-count", "--role", "", "--budget"], "--role"),
    (["ctx-count", "--tree", "--exclude", "", "."], "--exclude"),
    (["ctx-pack", "-q", "cart total", "--root", "", "."], "--root"),
    (["ctx-pack", "-q", "cart total", "--include", "", "."], "--include"),
    (["ctx-pack", "-q", "cart total", "--exclude", "", "."], "--exclude"),
    (["ctx-pack", "-q", "cart total", "--skills", "", "."], "--skills"),
    (["ctx-pack", "-q", "cart total", "--pin-skill", "", "."], "--pin-skill"),
    (["ctx-pack", "-q", "cart total", "--changed", "", "."], "--changed"),
    (["ctx-pack", "-q", "cart total", "--memory", "", "."], "--memory"),
    (["ctx-pack", "-q", "cart total", "--memory", "notes.md", "--embed-cmd", ""], "--embed-cmd"),
    (["ctx-pack", "-q", "cart total", "--session", "", "."], "--session"),
    (["ctx-pack", "-q", "cart total", "--model", "", "."], "--model"),
    (["ctx-excerpt", "-q", "cart total", "--memory", ""], "--memory"),
    (["ctx-excerpt", "-q", "cart total", "--tokenizer", "", "a.py"], "--tokenizer"),
    (["ctx-repomap", "--focus", "", "."], "--focus"),
    (["ctx-repomap", "--exclude", "", "."], "--exclude"),
    (["ctx-repomap", "--model", "", "."], "--model"),
    (["ctx-read", "--encoding", "", "h"], "--encoding"),
    (["ctx-stash", "--session", "", "--always"], "--session"),
    (["ctx-compact", "--keep-tool", "", "t.json"], "--keep-tool"),
    (["ctx-compact", "--summarizer", "", "t.json"], "--summarizer"),
    (["ctx-compact", "--accept", "", "t.json"], "--accept"),
    (["ctx-compact", "--session", "", "t.json"], "--session"),
    (["ctx-compact", "--model", "", "t.json"], "--model"),
    (["ctx-mcp", "--model", ""], "--model"),
    (["ctx-mcp", "--root", ""], "--root"),
    (["ctx-mcp", "--session", ""], "--session"),
]


@pytest.mark.parametrize("argv, option", EMPTY, ids=[f"{a[0]} {o}" for a, o in EMPTY])
def test_an_empty_name_is_a_usage_error_naming_the_option(script_runner, tree, argv, option):
    r = run_bytes(script_runner, argv, b"some input\n")
    name = argv[0]
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"{name}: error: invalid value for '{option}': empty (see {name} --help)\n"
    assert r.stdout == ""


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_store_of_ctx_repomap_is_refused_as_every_commands(script_runner, tree, value):
    """ctx-repomap's --store '' meant the default root (the user's ~/.cache), where the
    others refused it."""
    r = script_runner.run(["ctx-repomap", "--store", value, "."])
    assert r.returncode == 2, r.stderr
    assert r.stderr == (
        "ctx-repomap: error: invalid value for '--store': empty: give the store's directory "
        "(see ctx-repomap --help)\n"
    )
    assert r.stdout == ""


def test_an_empty_environment_variable_is_still_unset(script_runner, tree, monkeypatch):
    """The convention stays: CTX_MODEL= (and the others) is no variable at all."""
    plain = script_runner.run(["ctx-count", "--json", "a.py"])
    assert plain.returncode == 0, plain.stderr
    for var in ("CTX_MODEL", "CTX_ENCODING", "CTX_SESSION", "CTX_PROFILES"):
        monkeypatch.setenv(var, "")
    r = script_runner.run(["ctx-count", "--json", "a.py"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == plain.stdout and r.stderr == plain.stderr
    assert json.loads(r.stdout)["counter"] == "cl100k_base"


# Options whose value may be empty, or whose emptiness the library refuses in its own words.
CONTENT = {"query", "task", "grep", "jsonpath", "slice", "range"}  # text and specs
REFUSED_BY_THE_LIBRARY = {"output", "name", "idents"}  # -o '', --name '', --ident ''
COMMANDS = ("count", "stash", "read", "excerpt", "repomap", "pack", "compact", "mcp")


def test_every_option_that_takes_a_name_refuses_an_empty_one():
    """A new option whose value is a string or a path is decided: a name (types.Name or
    types.NamedPath), content, or refused by the library (the test below)."""
    from ctxtools.cli.types import Name, NamedPath

    undecided = []
    for command in COMMANDS:
        cli = importlib.import_module(f"ctxtools.cli.{command}").cli
        for p in cli.params:
            if not isinstance(p, click.Option) or p.is_flag:
                continue
            if not (p.type is click.STRING or isinstance(p.type, click.Path)):
                continue
            if isinstance(p.type, Name | NamedPath):
                continue
            if p.name not in CONTENT | REFUSED_BY_THE_LIBRARY:
                undecided.append(f"ctx-{command} {p.opts[-1]}")
    assert undecided == []


@pytest.mark.parametrize(
    "argv, said",
    [
        (["ctx-read", "h", "-o", ""], "ctx-read: error: -o was given an empty file name"),
        (["ctx-pack", "-q", "cart total", "-o", "", "."], "ctx-pack: error: -o was given an"),
        (["ctx-stash", "--always", "--name", ""], "ctx-stash: error: empty name ''"),
        (["ctx-excerpt", "--ident", "", "a.py"], "ctx-excerpt: error: --ident '' is not an"),
        (["ctx-read", "h", "--slice", ""], "ctx-read: error: --slice '': expected A:B"),
        (["ctx-read", "h", "--range", ""], "ctx-read: error: --range '': expected X-Y"),
    ],
    ids=lambda x: " ".join(x) if isinstance(x, list) else None,
)
def test_the_names_the_library_checks_refuse_an_empty_one_too(script_runner, tree, argv, said):
    script_runner.run(["ctx-stash", "--always", "--name", "h", "a.py"])
    r = run_bytes(script_runner, argv, b"some input\n")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(said) and r.stderr.count("\n") == 1
    assert r.stdout == ""


# --- the same for the MCP tools: a tool error in the tool's argument names ----------------

HOLDS = "must not hold an empty string"


@pytest.mark.parametrize(
    "tool, args, message",
    [
        ("count", {"text": "hi", "model": ""}, "argument 'model' must not be empty"),
        ("compact", {"transcript": "[]", "model": ""}, "argument 'model' must not be empty"),
        ("repomap", {"path": ""}, "argument 'path' must not be empty"),
        ("repomap", {"focus": ["a.py", ""]}, f"argument 'focus' {HOLDS}"),
        ("pack", {"task": "x", "role": ""}, "argument 'role' must not be empty"),
        ("pack", {"task": "x", "model": ""}, "argument 'model' must not be empty"),
        ("pack", {"task": "x", "changed": ""}, "argument 'changed' must not be empty"),
        ("pack", {"task": "x", "include": [""]}, f"argument 'include' {HOLDS}"),
        ("pack", {"task": "x", "exclude": [""]}, f"argument 'exclude' {HOLDS}"),
        ("excerpt", {"paths": [""]}, f"argument 'paths' {HOLDS}"),
        ("read", {"ref": ""}, "argument 'ref' must not be empty"),
        ("stash", {"text": "t", "name": ""}, "argument 'name' must not be empty"),
    ],
)
def test_an_empty_name_in_a_tool_call_is_refused(tool, args, message):
    """model "" counted with the server's model, path "" mapped the first root, role ""
    and include/exclude [""] packed as if they were not given."""
    from ctxtools.errors import UsageError
    from ctxtools.mcp.schema import check_args

    with pytest.raises(UsageError) as err:
        check_args(tool, args)
    assert str(err.value) == message


def test_empty_content_and_an_empty_argv_word_are_values():
    from ctxtools.mcp.schema import check_args

    assert check_args("stash", {"text": ""})["text"] == ""
    assert check_args("read", {"ref": "x", "grep": ""})["grep"] == ""
    assert check_args("run", {"command": ["printf", ""]})["command"] == ["printf", ""]


def test_ctx_mcp_answers_an_empty_model_with_a_tool_error(tree, store_dir):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {"CTX_STORE": str(store_dir), "NO_COLOR": "1", "PATH": os.environ["PATH"]}
    params = StdioServerParameters(
        command=str(BIN / "ctx-mcp"), args=["--root", str(tree)], env=env, cwd=tree
    )

    async def go():
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            bad = await s.call_tool("count", {"text": "hello", "model": ""})
            good = await s.call_tool("count", {"text": "hello"})
            return bad, good

    bad, good = anyio.run(go)
    assert bad.is_error
    assert [c.text for c in bad.content] == ["ctx-count: error: argument 'model' must not be empty"]
    assert not good.is_error


# --- 2. --max-file-size: the threshold shown as it is -------------------------------------


@pytest.fixture
def sized(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "sized"
    write(root, "small.py", "x = 1\n")  # 6 bytes
    write(root, "big.py", "x = 1\n" * 400)  # 2,400 bytes
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize(
    "size, skipped, shown",
    [
        ("1.5", 2, "1 byte"),  # 1.5 bytes: a file over it is one over 1 byte (was 0 KiB)
        ("5", 2, "5 bytes"),
        ("1.5K", 1, "1.5 KiB"),  # was 1 KiB
        ("1000", 1, "1,000 bytes"),  # was 0 KiB
        ("2K", 1, "2 KiB"),
    ],
)
def test_the_skipped_note_shows_the_real_threshold(script_runner, sized, size, skipped, shown):
    r = script_runner.run(["ctx-repomap", "--max-file-size", size, "."])
    assert r.returncode == 0, r.stderr
    line = (
        f"ctx-repomap: skipped {skipped} file(s) over {shown} "
        "(generated or data; raise --max-file-size to map them)"
    )
    assert line in r.stderr.splitlines()


def test_large_thresholds_are_shown_exactly():
    """1T was shown as 1073741824 KiB."""
    from ctxtools.source.scanset import shown_size

    assert shown_size(1 << 40) == "1 TiB"
    assert shown_size(3 << 39) == "1.5 TiB"
    assert shown_size(5 << 29) == "2.5 GiB"
    assert shown_size(512 * 1024) == "512 KiB"
    assert shown_size((1 << 40) - 1024) == "1,073,741,823 KiB"
    assert shown_size((1 << 40) - 1) == "1,099,511,627,775 bytes"


@pytest.mark.parametrize(
    "size, said",
    [
        ("0", "'0' is below the minimum of 1 byte"),
        ("0.5", "'0.5' is below the minimum of 1 byte"),
        ("0K", "'0K' is below the minimum of 1 byte"),
        ("-1", "'-1' is not a size (e.g. 524288, 512K, 1M)"),
    ],
)
def test_a_max_file_size_below_one_byte_is_a_usage_error(script_runner, sized, size, said):
    r = script_runner.run(["ctx-repomap", "--max-file-size", size, "."])
    assert r.returncode == 2
    assert r.stderr == (
        f"ctx-repomap: error: invalid value for '--max-file-size': {said} "
        "(see ctx-repomap --help)\n"
    )
    assert r.stdout == ""


# --- 3. ctx-mcp with its stdin closed ------------------------------------------------------


def test_ctx_mcp_with_stdin_closed_is_one_line_and_status_1(tmp_path):
    """ctx-mcp <&- took /dev/null for a client that said nothing: status 0, silently."""
    env = {**os.environ, "CTX_STORE": str(tmp_path / "store"), "CTX_DEBUG": ""}
    proc = subprocess.run(
        ["bash", "-c", 'exec "$0" --root "$1" <&-', str(BIN / "ctx-mcp"), str(tmp_path)],
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert proc.stderr.decode() == (
        "ctx-mcp: error: standard input is closed (an MCP client writes its requests there)\n"
    )
    assert proc.returncode == 1
    assert proc.stdout == b""


def test_ctx_mcp_with_stdin_at_its_end_still_ends_with_0(tmp_path):
    env = {**os.environ, "CTX_STORE": str(tmp_path / "store"), "CTX_DEBUG": ""}
    proc = subprocess.run(
        [str(BIN / "ctx-mcp"), "--root", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


# --- 4. a relative XDG_CACHE_HOME ----------------------------------------------------------


def _without_store(tmp_path: Path, xdg: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=xdg)
    return env


def test_a_relative_xdg_cache_home_is_ignored(tmp_path):
    """The XDG Base Directory spec: a relative path there is invalid and ignored. It made
    the store ./rel/dir/ctxtools under whatever directory a command ran in."""
    work = tmp_path / "work"
    write(work, "in.txt", "hello\n")
    env = _without_store(tmp_path, "rel/dir")
    stash = BIN / "ctx-stash"
    r = subprocess.run([stash, "--always", "in.txt"], cwd=work, env=env, capture_output=True)
    assert r.returncode == 0, r.stderr
    store = tmp_path / "home" / ".cache" / "ctxtools"
    assert (store / "blobs").is_dir() and (store / "sessions").is_dir()
    assert not (work / "rel").exists()
    r = subprocess.run([stash, "--path"], cwd=work, env=env, capture_output=True, text=True)
    assert r.stdout == f"{store}\n"


def test_an_absolute_xdg_cache_home_is_the_stores_base(tmp_path):
    env = _without_store(tmp_path, str(tmp_path / "xdg"))
    r = subprocess.run(
        [BIN / "ctx-stash", "--path"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{tmp_path / 'xdg' / 'ctxtools'}\n"


@pytest.mark.parametrize("xdg", ["rel/dir", ".", "", "~/cache"])
def test_default_store_root_ignores_what_is_not_an_absolute_path(tmp_path, monkeypatch, xdg):
    from ctxtools.config import default_store_root

    monkeypatch.delenv("CTX_STORE")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert default_store_root() == tmp_path / ".cache" / "ctxtools"


@pytest.mark.parametrize("how", ["env", "flag"])
def test_a_quoted_tilde_store_is_the_home_directorys(tmp_path, how):
    """CTX_STORE='~/x' (quoted: in a Makefile, an env file, a CI variable) made a directory
    named '~' under whatever the working directory was, and the store moved with it."""
    work = tmp_path / "work"
    write(work, "in.txt", "hello\n")
    env = _without_store(tmp_path, str(tmp_path / "xdg"))
    args = ["--store", "~/x"] if how == "flag" else []
    if how == "env":
        env["CTX_STORE"] = "~/x"
    stash = BIN / "ctx-stash"
    r = subprocess.run([stash, *args, "--always", "--name", "in", "in.txt"], cwd=work,
                       env=env, capture_output=True)
    assert r.returncode == 0, r.stderr
    assert not (work / "~").exists()
    store = tmp_path / "home" / "x"
    assert (store / "sessions" / "default" / "in.json").is_file()
    r = subprocess.run([stash, *args, "--path"], cwd=work, env=env, capture_output=True,
                       text=True)
    assert r.stdout == f"{store}\n"
    r = subprocess.run([BIN / "ctx-read", *args, "in"], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (0, "hello\n")


def test_store_root_expands_a_leading_tilde(tmp_path, monkeypatch):
    from ctxtools.config import default_store_root, store_root

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CTX_STORE", "~/s")
    assert default_store_root() == tmp_path / "s"
    assert store_root("~/t") == tmp_path / "t"
    assert store_root("rel/~") == Path("rel/~")  # only a leading one


# --- an --encoding that another ruler option rules out --------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["ctx-count", "a.py"],
        ["ctx-pack", "-q", "compute total", "a.py"],
        ["ctx-repomap", "."],
    ],
    ids=lambda a: a[0],
)
def test_an_encoding_beside_heuristic_is_said_to_be_unused(script_runner, tree, argv, monkeypatch):
    """--heuristic --encoding o200k_base counted with the heuristic (the documented order:
    --tokenizer, --heuristic, --encoding) and said nothing of the encoding typed; from
    CTX_ENCODING it stays silent (a flag beats the environment)."""
    r = script_runner.run([*argv, "--heuristic", "--encoding", "o200k_base"])
    assert r.returncode == 0, r.stderr
    assert "--encoding o200k_base is not used: --heuristic counts\n" in r.stderr
    monkeypatch.setenv("CTX_ENCODING", "o200k_base")
    r = script_runner.run([*argv, "--heuristic"])
    assert r.returncode == 0, r.stderr
    assert "is not used" not in r.stderr
