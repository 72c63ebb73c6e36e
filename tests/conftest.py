"""Every test gets its own store and a clean ctx environment (no user settings leak in)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

CTX_VARS = ("CTX_STORE", "CTX_SESSION", "CTX_MODEL", "CTX_ENCODING", "CTX_PROFILES", "CTX_DEBUG")


# The ending signals as a terminal gives them. A harness may start the suite with some
# ignored, and a child inherits an ignored signal across exec: CI ran it with SIGHUP ignored
# (as nohup does), so a test's ctx-stash outlived the SIGHUP it was sent and the tests after
# it found its process left over; a background job of a script has SIGINT ignored, and six
# Ctrl-C tests then fail. The tests that signal a child test the default disposition; the
# commands' behaviour under an ignored signal has tests of its own, which ignore it there.
# (Run in every process that collects tests: pytest's and each xdist worker.)
_ENDING = (signal.SIGHUP, signal.SIGTERM, signal.SIGINT)
signal.signal(signal.SIGHUP, signal.SIG_DFL)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, _ENDING)


def _signal_state() -> tuple:
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    return tuple(signal.getsignal(s) for s in _ENDING + (signal.SIGPIPE,)), frozenset(mask)


@pytest.fixture(autouse=True)
def signals_left_as_found():
    """A test that changes this process's signal handlers or mask puts them back: a
    handler or a blocked signal left behind is inherited by every child the later tests
    start (an ignored SIGHUP made a ctx-stash deaf to it, a test far from the one that
    left it)."""
    before = _signal_state()
    yield
    after = _signal_state()
    assert after == before, f"signal handlers or mask left changed: {before} -> {after}"


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
    # ... and take no evidence from git history (tests/lib/test_history.py turns it on):
    # a pack of a directory of this repository must not depend on its commits, nor on
    # how deep the clone that runs the tests is.
    monkeypatch.setenv("CTX_HISTORY", "0")
    # tiktoken must never reach for the network: its cache is ours to fill.
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    return store


@pytest.fixture
def store_dir(isolated_env) -> Path:
    return isolated_env


os.environ.setdefault("PYTHONHASHSEED", "0")
