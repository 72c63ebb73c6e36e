"""Progress lines (ctxtools/cli/progress.py): on a terminal only, NO_COLOR respected,
for ctx-count over many files, ctx-count --tree and ctx-stash -- CMD (issue 20)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_with_tty_stderr

from ctxtools.cli import progress

BIN = Path(sys.executable).parent


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_progress_unless_the_stream_is_a_terminal():
    assert progress.Progress.start("counting", stream=io.StringIO()) is None
    bar = progress.Progress.start("counting", stream=_Tty(), total=10, unit="files")
    assert bar is not None
    bar.update(5)
    bar.close()


def test_the_line_and_its_colour(monkeypatch):
    monkeypatch.setattr(progress, "INTERVAL", 0.0)  # every update draws
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    tty = _Tty()
    bar = progress.Progress.start("counting", stream=tty, total=4 << 20)
    bar.update(1 << 20)
    bar.note("3/250 files")
    text = tty.getvalue()
    assert "\x1b[36m#####\x1b[0m" in text and "25%" in text
    assert text.startswith("\r\x1b[36mcounting\x1b[0m  [")
    assert "1.0 MiB of 4.0 MiB" in text and "3/250 files" in text
    bar.close()
    assert tty.getvalue().endswith("\r")  # the line is erased: what follows starts clean
    for env in ({"NO_COLOR": "1", "TERM": "xterm"}, {"TERM": "dumb"}):
        monkeypatch.delenv("NO_COLOR", raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        tty = _Tty()
        bar = progress.Progress.start("counting", stream=tty, total=100, unit="files")
        bar.update(50)
        bar.close()
        assert "[##########          ]  50%" in tty.getvalue()
        assert "\x1b" not in tty.getvalue()


def test_human_bytes():
    assert [progress.human_bytes(n) for n in (0, 1023, 1536, 5 << 20, 3 << 30)] == [
        "0 B",
        "1023 B",
        "1.5 KiB",
        "5.0 MiB",
        "3.0 GiB",
    ]


def _env(store: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env.update(CTX_STORE=str(store), TERM="xterm", **extra)
    return env


@pytest.fixture
def many_files(tmp_path):
    d = tmp_path / "many"
    d.mkdir()
    for i in range(260):
        (d / f"f{i:03}.txt").write_text(f"file number {i}\n" * 20)
    return d


def test_count_over_many_files_shows_progress_on_a_terminal_only(tmp_path, many_files):
    names = sorted(str(p) for p in many_files.iterdir())
    argv = [BIN / "ctx-count", *names]
    status, out, tty = run_with_tty_stderr(argv, env=_env(tmp_path / "s"))
    assert status == 0 and out.endswith(b" total\n")
    assert b"\x1b[36mcounting\x1b[0m" in tty and b"/260 files" in tty
    status, out2, tty = run_with_tty_stderr(argv, env=_env(tmp_path / "s", NO_COLOR="1"))
    assert out2 == out
    assert b"counting" in tty and b"\x1b" not in tty
    # a pipe: the same output and nothing on stderr
    r = subprocess.run(argv, capture_output=True, env=_env(tmp_path / "s"))
    assert (r.returncode, r.stdout, r.stderr) == (0, out, b"")


def test_tree_shows_progress_on_a_terminal_only(tmp_path, many_files):
    argv = [BIN / "ctx-count", "--tree", str(many_files)]
    status, out, tty = run_with_tty_stderr(argv, env=_env(tmp_path / "s"))
    assert status == 0 and b"(260 files)" in out
    assert b"counting" in tty and b"files" in tty
    r = subprocess.run(argv, capture_output=True, env=_env(tmp_path / "s"))
    assert (r.stdout, r.stderr) == (out, b"")
    # a small tree is quick: no line even on a terminal
    for p in sorted(many_files.iterdir())[10:]:
        p.unlink()
    status, out, tty = run_with_tty_stderr(argv, env=_env(tmp_path / "s"))
    assert status == 0 and b"(10 files)" in out and tty == b""


SLOW = "import time; print('x' * 3000, flush=True); time.sleep(1.2); print('done', flush=True)"


def test_stash_command_shows_the_bytes_captured_on_a_terminal_only(tmp_path):
    argv = [BIN / "ctx-stash", "--name", "slow", "--", sys.executable, "-c", SLOW]
    status, out, tty = run_with_tty_stderr(argv, env=_env(tmp_path / "s"))
    assert status == 0 and b'"name":"slow"' in out
    assert b"\x1b[36mcapturing\x1b[0m  2.9 KiB  1 s" in tty
    assert tty.count(b"\r") <= 6  # redrawn when it changes, not every tick
    status, out, tty = run_with_tty_stderr(argv, env=_env(tmp_path / "s", NO_COLOR="1"))
    assert status == 0 and b"capturing  2.9 KiB" in tty and b"\x1b" not in tty
    r = subprocess.run(argv, capture_output=True, env=_env(tmp_path / "s"))
    assert r.returncode == 0 and r.stderr == b""
    # --tee copies the output to the terminal itself: no progress line over it
    status, out, tty = run_with_tty_stderr(
        [*argv[:3], "--tee", *argv[3:]], env=_env(tmp_path / "s")
    )
    assert status == 0 and b"capturing" not in tty and b"done" in tty


def test_excerpt_over_many_files_shows_progress_on_a_terminal_only(tmp_path, many_files):
    listing = tmp_path / "list"
    listing.write_text("".join(f"{p}\n" for p in sorted(many_files.iterdir())))
    argv = [BIN / "ctx-excerpt", "-q", "number", "--files-from", str(listing)]
    for extra in ([], ["--json"]):  # streamed blocks, and one document at the end
        status, out, tty = run_with_tty_stderr([*argv, *extra], env=_env(tmp_path / "s"))
        assert status == 0 and b"f259.txt" in out
        assert b"excerpting" in tty and b"/260" in tty
        r = subprocess.run([*argv, *extra], capture_output=True, env=_env(tmp_path / "s"))
        assert (r.returncode, r.stdout, r.stderr) == (0, out, b"")


def test_pack_over_many_files_shows_progress_on_a_terminal_only(tmp_path, many_files):
    argv = [BIN / "ctx-pack", "-q", "file number", "--tokens", "2000", "--no-map", str(many_files)]
    env = _env(tmp_path / "s")
    status, out, tty = run_with_tty_stderr(argv, env=env, cwd=many_files)
    assert status == 0 and b"# Files" in out
    assert b"reading" in tty and b"/260" in tty
    r = subprocess.run(argv, capture_output=True, env=env, cwd=many_files)
    assert r.returncode == 0 and r.stdout == out
    assert b"reading" not in r.stderr and b"listing" not in r.stderr


def test_a_step_shows_by_its_name_once_the_work_has_taken_patience(monkeypatch):
    """Issue 28.11: work in steps says which one is under way, whatever its size, once it
    has gone on for PATIENCE seconds; before that, and without patience, small work is
    quiet."""
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    monkeypatch.setenv("NO_COLOR", "1")
    tty = _Tty()
    bar = progress.Progress.start("listing", unit="files", min_total=200, patience=1.0, stream=tty)
    bar.phase("listing")
    assert tty.getvalue() == ""  # not yet a second
    bar.started -= 2
    bar.phase("scanning")
    assert tty.getvalue() == "\rscanning  2 s"  # its name and time: no "0 files"
    bar.update(5, 10)
    assert "scanning  [##########          ]  50%  5/10 files  2 s" in tty.getvalue()
    bar.phase("ranking")
    assert tty.getvalue().rsplit("\r", 1)[1].startswith("ranking  2 s")
    bar.close()
    quiet = _Tty()
    bar = progress.Progress.start("listing", unit="files", min_total=200, stream=quiet)
    bar.started -= 2
    bar.phase("scanning")
    bar.update(5, 10)
    bar.close()
    assert quiet.getvalue() == ""


def _slow_git(tmp_path: Path, seconds: float) -> dict:
    """An environment whose git takes SECONDS to list files (a big tree, a cold disk)."""
    import shutil

    real = shutil.which("git")
    bin_dir = tmp_path / "slowbin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(
        f'#!/bin/sh\ncase "$1" in ls-files) sleep {seconds};; esac\nexec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    env = _env(tmp_path / "s", NO_COLOR="1")
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def _steps(tty: bytes) -> list[str]:
    """The step names the progress line showed, in order (each once in a row)."""
    out: list[str] = []
    for line in tty.decode().split("\r"):
        name = line.strip().split("  ", 1)[0]
        if name and (not out or out[-1] != name):
            out.append(name)
    return out


@pytest.mark.parametrize(
    "argv",
    [
        ["ctx-pack", "-q", "fetch the parser", "--tokens", "2000", "."],
        ["ctx-repomap", "."],
    ],
)
def test_progress_starts_with_the_listing(tmp_path, argv):
    """Issue 28.11: a cold run over a big tree showed nothing until the scan was half done.
    The line names the listing while it is under way (git is slow to list here), then the
    scan and the ranking; a pipe gets none of it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(6):
        (repo / f"mod{i}.py").write_text(f"def parse_{i}(text):\n    return text.split()\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    env = _slow_git(tmp_path, 2.5)
    cmd = [BIN / argv[0], *argv[1:]]
    status, out, tty = run_with_tty_stderr(cmd, env=env, cwd=repo)
    assert status == 0 and b"mod0.py" in out
    steps = _steps(tty)
    assert steps and steps[0] == "listing", steps  # the first thing shown, before any scan
    assert steps.index("scanning") < steps.index("ranking"), steps
    assert "\x1b" not in tty.decode()  # NO_COLOR
    r = subprocess.run(cmd, capture_output=True, env=env, cwd=repo)
    assert (r.returncode, r.stdout, r.stderr) == (0, out, b"")
