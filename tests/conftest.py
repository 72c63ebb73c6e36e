"""Every test gets its own store and a clean ctx environment (no user settings leak in)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CTX_VARS = ("CTX_STORE", "CTX_SESSION", "CTX_MODEL", "CTX_ENCODING", "CTX_PROFILES", "CTX_DEBUG")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    for var in CTX_VARS:
        monkeypatch.delenv(var, raising=False)
    store = tmp_path / "store"
    monkeypatch.setenv("CTX_STORE", str(store))
    monkeypatch.setenv("NO_COLOR", "1")
    # Rankings are lexical unless a test turns the semantic signal on (tests/lib/
    # test_semantic*.py): the same results whether or not the 'semantic' extra is installed.
    monkeypatch.setenv("CTX_SEMANTIC", "0")
    # tiktoken must never reach for the network: its cache is ours to fill.
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    return store


@pytest.fixture
def store_dir(isolated_env) -> Path:
    return isolated_env


os.environ.setdefault("PYTHONHASHSEED", "0")
