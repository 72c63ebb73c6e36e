"""build_map pauses the cycle collector while it scans and ranks, and gives it back as it
found it, on success and on error."""

from __future__ import annotations

import gc

import pytest

from ctxtools.errors import InputError
from ctxtools.repomap import core
from ctxtools.tokens import HeuristicRuler


@pytest.fixture
def collector():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def _tree(tmp_path):
    (tmp_path / "a.py").write_text("def used():\n    return 1\n")
    (tmp_path / "b.py").write_text("from a import used\n\nx = used()\n")
    return str(tmp_path)


def test_collector_paused_during_the_scan_and_back_after(tmp_path, monkeypatch, collector):
    seen = []
    real = core.scan_repository

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(core, "scan_repository", spy)
    gc.enable()
    m = core.build_map(_tree(tmp_path), ruler=HeuristicRuler(), use_cache=False)
    assert "used" in m.text
    assert seen == [False]
    assert gc.isenabled()


def test_collector_off_before_stays_off_and_errors_restore_it(tmp_path, collector):
    gc.disable()
    core.build_map(_tree(tmp_path), ruler=HeuristicRuler(), use_cache=False)
    assert not gc.isenabled()
    gc.enable()
    with pytest.raises(InputError):
        core.build_map(str(tmp_path / "missing"), ruler=HeuristicRuler(), use_cache=False)
    assert gc.isenabled()
