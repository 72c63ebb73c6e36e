"""--copy on the commands that write a document (ctx-pack, ctx-repomap, ctx-excerpt): the
output reaches a real clipboard (an X server of its own under Xvfb, read back with
xclip -o) and stdout or -o alike; no tool, or a failing one, is one line and exit 1."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import copy_sources

from ctxtools.clipboard import clipboard_command


def _need(*tools: str) -> None:
    """Skip where a tool is missing on a developer's machine; CI installs them (.ci/run),
    so there a missing one fails the test instead of skipping it."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI lacks {', '.join(missing)} (.ci/run installs them)")
        pytest.skip(f"needs {', '.join(missing)} (apt-get install xvfb xclip xsel)")


@pytest.fixture
def display(monkeypatch):
    """A private X server (Xvfb, no TCP) for the test; DISPLAY points at it."""
    _need("Xvfb", "xclip", "xsel")
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-nolisten", "tcp", "-noreset"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        with os.fdopen(read) as f:
            number = f.readline().strip()
        assert number.isdigit(), "Xvfb did not start"
        monkeypatch.setenv("DISPLAY", f":{number}")
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(10)


XCLIP = shutil.which("xclip")  # the reader, whatever PATH a test gives the commands


def _read_clipboard(display: str) -> bytes | None:
    r = subprocess.run(
        [XCLIP or "xclip", "-selection", "clipboard", "-out"],
        env={**os.environ, "DISPLAY": display},
        capture_output=True,
        timeout=20,
    )
    return r.stdout if r.returncode == 0 else None


def clipboard(display: str, expected: bytes | str | None = None) -> bytes:
    """The clipboard's text. xclip and xsel exit before their forked process has taken the
    selection, so a read right after a copy may see no owner yet, or the one before: read
    again until EXPECTED is there, for ten seconds at most (a bound, not a measure)."""
    import time

    if isinstance(expected, str):
        expected = expected.encode()
    deadline = time.monotonic() + 10
    while True:
        got = _read_clipboard(display)
        if got is not None and (expected is None or got == expected):
            return got
        if time.monotonic() > deadline:
            return got or b""
        time.sleep(0.05)


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    copy_sources(root)
    monkeypatch.chdir(root)
    return root


COMMANDS = {
    "ctx-pack": ["ctx-pack", "-q", "ship_order in inventory.py", "--tokens", "3000", "."],
    "ctx-repomap": ["ctx-repomap", ".", "--tokens", "400"],
    "ctx-excerpt": ["ctx-excerpt", "-q", "ship_order", "src/inventory.py"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_copy_reaches_a_real_x_clipboard_and_stdout(script_runner, tree, display, name):
    plain = script_runner.run(COMMANDS[name])
    assert plain.returncode == 0, plain.stderr
    r = script_runner.run([*COMMANDS[name], "--copy"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == plain.stdout and r.stdout.strip()
    assert clipboard(display, r.stdout).decode() == r.stdout


@pytest.mark.parametrize("name", ["ctx-pack", "ctx-repomap"])
def test_copy_with_o_copies_what_the_file_holds(script_runner, tree, tmp_path, display, name):
    out = tmp_path / "out.md"
    r = script_runner.run([*COMMANDS[name], "--copy", "-o", str(out)])
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert clipboard(display, out.read_bytes()) == out.read_bytes() and out.stat().st_size > 100


def test_xsel_serves_when_xclip_is_not_there(script_runner, tree, tmp_path, display, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "xsel").symlink_to(shutil.which("xsel"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert clipboard_command({"PATH": str(bin_dir), "DISPLAY": display}) == [
        str(bin_dir / "xsel"),
        "--clipboard",
        "--input",
    ]
    text = "naïve ünïcode ✓\n"
    (tree / "note.py").write_text(f"# {text}def ship_order():\n    pass\n")
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.path.dirname(shutil.which("python3")))
    r = script_runner.run(["ctx-excerpt", "-q", "ship_order", "note.py", "--copy"])
    assert r.returncode == 0, r.stderr
    assert clipboard(display, r.stdout).decode() == r.stdout
    assert "naïve ünïcode ✓" in r.stdout


def _fake(tmp_path: Path, name: str, body: str) -> Path:
    """A stand-in clipboard tool NAME on a PATH of its own (a real program, run for real)."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / name
    tool.write_text("#!/bin/sh\n" + body)
    tool.chmod(0o755)
    return bin_dir


def test_the_tool_gets_the_output_on_stdin(script_runner, tree, tmp_path, monkeypatch):
    kept = tmp_path / "kept"
    bin_dir = _fake(tmp_path, "xclip", f'cat > "{kept}"\n')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/bin{os.pathsep}/usr/bin")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    r = script_runner.run([*COMMANDS["ctx-repomap"], "--copy"])
    assert r.returncode == 0, r.stderr
    assert kept.read_text() == r.stdout and "inventory.py" in r.stdout


def test_a_failing_tool_is_one_line_and_exit_1(script_runner, tree, tmp_path, monkeypatch):
    bin_dir = _fake(tmp_path, "xclip", 'cat >/dev/null\necho "Error: no selection" >&2\nexit 3\n')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/bin{os.pathsep}/usr/bin")
    monkeypatch.setenv("DISPLAY", ":0")
    r = script_runner.run([*COMMANDS["ctx-repomap"], "--copy"])
    assert r.returncode == 1
    assert r.stdout.strip()  # the output went out all the same
    assert r.stderr == "ctx-repomap: error: --copy: xclip failed (status 3): Error: no selection\n"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_tool_is_one_line_and_exit_1(script_runner, tree, tmp_path, monkeypatch, name):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    r = script_runner.run([*COMMANDS[name], "--copy"])
    assert r.returncode == 1
    (line,) = r.stderr.splitlines()[-1:]
    assert line.startswith(f"{name}: error: --copy: no clipboard tool found on PATH")
    assert len([x for x in r.stderr.splitlines() if "error" in x]) == 1


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_failed_copy_still_writes_the_o_file(script_runner, tree, tmp_path, monkeypatch, name):
    """The output is delivered before the clipboard is tried: under -o a clipboard that
    fails costs the file nothing (ctx-excerpt and ctx-repomap wrote no file at all)."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    out = tmp_path / "out.txt"
    plain = script_runner.run([*COMMANDS[name], "-o", str(tmp_path / "plain.txt")])
    assert plain.returncode == 0, plain.stderr
    r = script_runner.run([*COMMANDS[name], "--copy", "-o", str(out)])
    assert r.returncode == 1
    assert r.stderr.splitlines()[-1].startswith(f"{name}: error: --copy: no clipboard tool")
    assert out.read_bytes() == (tmp_path / "plain.txt").read_bytes()
    assert out.stat().st_size > 0


def test_a_tool_without_its_display_says_so(tmp_path):
    bin_dir = _fake(tmp_path, "xclip", "exit 0\n")
    with pytest.raises(Exception, match="found xclip but DISPLAY is unset"):
        clipboard_command({"PATH": str(bin_dir)})
    assert clipboard_command({"PATH": str(bin_dir), "DISPLAY": ":3"})[0] == str(bin_dir / "xclip")


def test_copy_and_split_do_not_go_together(script_runner, tree):
    r = script_runner.run([*COMMANDS["ctx-pack"], "--copy", "--split", "500"])
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("ctx-pack: error: --copy takes one document")


def test_ctx_read_and_ctx_compact_copy_too(script_runner, tmp_path, display):
    import io

    text = "".join(f"line {i}: ünïcode\n" for i in range(1, 40))
    r = script_runner.run(["ctx-read", "--head", "5", "--copy"], stdin=io.StringIO(text))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "".join(text.splitlines(True)[:5])
    assert clipboard(display, r.stdout).decode() == r.stdout
    transcript = tmp_path / "t.json"
    transcript.write_text('[{"role": "user", "content": "hello"}]')
    r = script_runner.run(["ctx-compact", "--limit", "1000", str(transcript), "--copy"])
    assert r.returncode == 0, r.stderr
    assert clipboard(display, r.stdout).decode() == r.stdout and "hello" in r.stdout
