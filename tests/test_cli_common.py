"""Behaviour every console script shares, tested once over [project.scripts]."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ctxtools import __version__

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"])
BIN = Path(sys.executable).parent


def test_all_seven_commands_are_declared():
    assert SCRIPTS == [
        "ctx-compact",
        "ctx-count",
        "ctx-excerpt",
        "ctx-pack",
        "ctx-read",
        "ctx-repomap",
        "ctx-stash",
    ]


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_exits_zero_and_shows_usage(script_runner, name):
    result = script_runner.run([name, "--help"])
    assert result.returncode == 0
    assert result.stdout.startswith(f"Usage: {name} ")
    assert result.stderr == ""


@pytest.mark.parametrize("name", SCRIPTS)
def test_version(script_runner, name):
    result = script_runner.run([name, "--version"])
    assert result.returncode == 0
    assert result.stdout == f"{name} {__version__}\n"


@pytest.mark.parametrize("name", SCRIPTS)
def test_unknown_option_is_a_usage_error(script_runner, name):
    result = script_runner.run([name, "--no-such-option"])
    assert result.returncode == 2
    assert "No such option" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("name", SCRIPTS)
def test_empty_stdin_is_a_defined_result(script_runner, name):
    from conftest import run_bytes

    result = run_bytes(script_runner, [name], b"")
    assert "Traceback" not in result.stderr
    assert result.returncode in (0, 1, 2)
    if result.returncode != 0:
        # a failure is one line naming the command
        lines = result.stderr.strip().splitlines()
        assert lines and lines[-1].startswith(f"{name}: "), result.stderr


def test_entry_points_run_as_real_processes(tmp_path):
    """Subprocess mode proves the installed console scripts, not just the functions."""
    exe = BIN / "ctx-count"
    assert exe.exists(), f"console script not installed in {BIN}"
    proc = subprocess.run(
        [str(exe), "--heuristic"], input=b"abcdefgh", capture_output=True, check=False
    )
    assert proc.returncode == 0
    assert proc.stdout == b"2\n"


def test_closed_stdout_pipe_exits_quietly(tmp_path):
    exe = BIN / "ctx-count"
    big = tmp_path / "many"
    big.mkdir()
    names = []
    for i in range(3000):
        p = big / f"f{i:04d}.txt"
        p.write_bytes(b"x")
        names.append(str(p))
    listing = tmp_path / "list"
    listing.write_text("\n".join(names))
    env = dict(os.environ)
    proc = subprocess.run(
        f"'{exe}' --heuristic --files-from '{listing}' | head -1",
        shell=True,
        capture_output=True,
        env=env,
        check=False,
    )
    assert proc.stdout == b"   1 " + names[0].encode() + b"\n"
    assert proc.stderr == b"", proc.stderr
