"""Every test gets its own store and a clean ctx environment (no user settings leak in)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CTX_VARS = ("CTX_STORE", "CTX_SESSION", "CTX_MODEL", "CTX_ENCODING", "CTX_PROFILES", "CTX_DEBUG")
REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
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


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"../shared is missing beside the repository ({SHARED})")
    return SHARED


def run_bytes(script_runner, args, data: bytes | None = None, **kw):
    """Run a console script in-process with binary stdin (TextIOWrapper over BytesIO)."""
    import io

    stdin = io.TextIOWrapper(io.BytesIO(data if data is not None else b""))
    return script_runner.run(args, stdin=stdin, **kw)


os.environ.setdefault("PYTHONHASHSEED", "0")
