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
    from helpers import run_bytes

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


@pytest.mark.parametrize("name", ["ctx-count", "ctx-excerpt", "ctx-read"])
def test_closed_stdout_pipe_exits_quietly(tmp_path, name):
    """`cmd | head -1`: no traceback, no message. The status is 1 when a write met the closed
    pipe; a command whose whole output went out in one write before the reader left sees no
    error and exits 0."""
    exe = BIN / name
    many = tmp_path / "many"
    many.mkdir()
    names = []
    for i in range(3000):
        p = many / f"f{i:04d}.txt"
        p.write_bytes(b"needle line\n" * 3)
        names.append(str(p))
    listing = tmp_path / "list"
    listing.write_text("\n".join(names))
    args = {
        "ctx-count": f"--heuristic --files-from '{listing}'",
        "ctx-excerpt": f"--query needle --files-from '{listing}'",
        "ctx-read": f"--max-chars 50000 --head 3000 < '{listing}'",
    }[name]
    proc = subprocess.run(
        ["bash", "-c", f"set -o pipefail; '{exe}' {args} | head -1"],
        capture_output=True,
        env=dict(os.environ),
        check=False,
    )
    assert proc.stderr == b"", proc.stderr
    assert proc.returncode in (0, 1)
    assert len(proc.stdout.splitlines()) == 1


# --- shared option types and input reading -------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"), [("0", 0.0), ("80", 80.0), ("99.5", 99.5), (" 1e2 ", 100.0)]
)
def test_finite_float_accepts_numbers(value, expected):
    import click

    from ctxtools.cli.common import FiniteFloat

    assert FiniteFloat(min=0, max=100).convert(value, None, None) == expected
    with pytest.raises(click.BadParameter):
        FiniteFloat(min=0, max=99).convert("100", None, None)


@pytest.mark.parametrize("value", ["nan", "-nan", "inf", "Infinity", "-inf", "1e999", "x", ""])
def test_finite_float_refuses_what_is_not_a_finite_number(value):
    import click

    from ctxtools.cli.common import FiniteFloat

    with pytest.raises(click.BadParameter, match="not a"):
        FiniteFloat().convert(value, None, None)


def test_finite_float_refuses_non_finite_floats_too():
    import click

    from ctxtools.cli.common import FiniteFloat

    for value in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(click.BadParameter, match="not a finite number"):
            FiniteFloat().convert(value, None, None)


def test_json_text_replaces_undecodable_bytes_only():
    from ctxtools.fsutil import json_text

    assert json_text("plain/ascii.txt") == "plain/ascii.txt"
    assert json_text("日本/ü.md") == "日本/ü.md"
    assert json_text(os.fsdecode(b"caf\xe9/\xff\xfe.txt")) == "caf\ufffd/\ufffd\ufffd.txt"
    assert json_text("lone \ud800 surrogate") == "lone \ufffd\ufffd\ufffd surrogate"
