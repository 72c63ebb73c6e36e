"""Every test gets its own store and a clean ctx environment (no user settings leak in)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

CTX_VARS = ("CTX_STORE", "CTX_SESSION", "CTX_MODEL", "CTX_ENCODING", "CTX_PROFILES", "CTX_DEBUG")
REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    for var in CTX_VARS:
        monkeypatch.delenv(var, raising=False)
    store = tmp_path / "store"
    monkeypatch.setenv("CTX_STORE", str(store))
    monkeypatch.setenv("NO_COLOR", "1")
    # tiktoken must never reach for the network: its cache is ours to fill.
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    return store


@pytest.fixture
def store_dir(isolated_env) -> Path:
    return isolated_env


@dataclass
class BytesRun:
    """What run_bytes returns in subprocess mode (the fields tests read from RunResult)."""

    returncode: int
    stdout: str
    stderr: str
    success: bool


def run_bytes(script_runner, args, data: bytes | None = None, **kw):
    """Run a console script with binary stdin, in the runner's launch mode.

    In-process: a TextIOWrapper over BytesIO (the command reads its .buffer). As a real
    process: the bytes go to the process as they are (pytest-console-scripts' subprocess
    mode only takes text), and stdout/stderr are decoded with surrogateescape, as the
    in-process runner shows them.
    """
    import io

    payload = data if data is not None else b""
    if getattr(script_runner, "launch_mode", "inprocess") != "subprocess":
        stdin = io.TextIOWrapper(io.BytesIO(payload))
        return script_runner.run(args, stdin=stdin, **kw)
    import shutil
    import subprocess

    cmd = list(args)
    cmd[0] = shutil.which(cmd[0]) or cmd[0]
    proc = subprocess.run(
        cmd, input=payload, capture_output=True, cwd=kw.get("cwd"), env=kw.get("env")
    )
    out = proc.stdout.decode("utf-8", "surrogateescape")
    err = proc.stderr.decode("utf-8", "surrogateescape")
    return BytesRun(proc.returncode, out, err, proc.returncode == 0)


os.environ.setdefault("PYTHONHASHSEED", "0")
