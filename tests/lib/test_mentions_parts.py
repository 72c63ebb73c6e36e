"""The parts of ctxtools.mentions on their own: the use log and the basename index."""

from __future__ import annotations

import json
import os

import pytest

from ctxtools.mentions import uselog
from ctxtools.mentions.basenames import BasenameIndex
from ctxtools.mentions.common import clean_rel, stem
from ctxtools.mentions.uselog import UseLog, frecency

DAY = 86_400.0


def tree(root, names):
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n")
    return root


def test_use_log_adds_up_uses_and_keeps_the_last_time(tmp_path):
    notes: list[str] = []
    log = UseLog(tmp_path / "m" / "uses.jsonl", lambda: 10 * DAY, notes)
    log.record(["a.py", "./b.py", "a.py"], when=1 * DAY)  # a path given twice counts once
    log.record(["a.py"], when=3 * DAY)
    fresh = UseLog(log.path, lambda: 10 * DAY, notes)
    assert fresh.uses() == {"a.py": (2, 3 * DAY), "b.py": (1, 1 * DAY)}
    assert notes == []


def test_use_log_passes_over_damaged_lines(tmp_path):
    path = tmp_path / "uses.jsonl"
    good = json.dumps({"p": "x.py", "n": 2, "t": 5.0})
    bad = ['{"p": "cut', '{"p": 3, "n": 1, "t": 1}', '{"p": "y", "n": 0, "t": 1}']
    path.write_text("\n".join([good, *bad]) + "\n")
    assert UseLog(path, lambda: 6.0, []).uses() == {"x.py": (2, 5.0)}


def test_use_log_names_leaving_the_root_are_not_recorded(tmp_path):
    log = UseLog(tmp_path / "uses.jsonl", lambda: 1.0, [])
    log.record(["../out.py", "/etc/passwd", ""])
    assert not log.path.exists()
    assert clean_rel("a/./b/../c.py") == "a/c.py"
    assert (clean_rel("../x"), stem("jwt.py"), stem(".env")) == (None, "jwt", ".env")


def test_use_log_is_compacted_to_its_best_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(uselog, "MAX_USES", 2)
    log = UseLog(tmp_path / "uses.jsonl", lambda: 10 * DAY, [])
    for i, name in enumerate(["old.py", "mid.py", "new.py"]):
        log.record([name], when=i * DAY)
    lines = log.path.read_text().splitlines()
    assert len(lines) == 3  # appended: not yet over twice MAX_USES
    log.record(["new.py", "mid.py"], when=9 * DAY)
    kept = [json.loads(line)["p"] for line in log.path.read_text().splitlines()]
    assert kept == ["mid.py", "new.py"]  # compacted, the lowest frecency (old.py) gone
    assert frecency(1, 0.0, 7 * DAY) == pytest.approx(0.5)


def test_use_log_that_cannot_be_written_is_a_note(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    notes: list[str] = []
    log = UseLog(blocker / "uses.jsonl", lambda: 1.0, notes)
    log.record(["a.py"])
    assert log.uses() == {"a.py": (1, 1.0)}
    assert len(notes) == 1 and notes[0].startswith("mention use log not saved: ")


def test_index_is_built_then_cached_then_rebuilt_when_a_folder_changes(tmp_path):
    root = tree(tmp_path / "root", ["jwt.py", "src/auth/jwt.py", "src/api/views.py"])
    cache = tmp_path / "store" / "index.json"
    real = os.path.realpath(root)
    first = BasenameIndex(str(root), real, cache, 100, [])
    assert first.by_name() == {
        "jwt.py": ["jwt.py", "src/auth/jwt.py"],
        "views.py": ["src/api/views.py"],
    }
    assert (first.state, first.from_cache, first.truncated) == ("built", False, False)
    second = BasenameIndex(str(root), real, cache, 100, [])
    assert second.by_name() == first.by_name()
    assert (second.state, second.from_cache) == ("cached", True)
    tree(root, ["src/api/urls.py"])
    api = root / "src" / "api"
    stamp = api.stat().st_mtime_ns + 5_000_000_000  # file times are coarse: make it differ
    os.utime(api, ns=(stamp, stamp))
    third = BasenameIndex(str(root), real, cache, 100, [])
    assert "urls.py" in third.by_name() and third.state == "built"
    assert third.rebuild()["urls.py"] == ["src/api/urls.py"] and third.state == "rebuilt"


def test_index_keeps_the_shallowest_files_under_its_cap(tmp_path):
    root = tree(tmp_path / "root", ["a/b/deep.py", "top.py", "a/mid.py"])
    index = BasenameIndex(str(root), os.path.realpath(root), tmp_path / "i.json", 2, [])
    assert sorted(index.by_name()) == ["mid.py", "top.py"]
    assert index.truncated is True
    other = BasenameIndex(str(root), os.path.realpath(root), tmp_path / "i.json", 3, [])
    assert "deep.py" in other.by_name() and other.state == "built"  # another cap: not reused
