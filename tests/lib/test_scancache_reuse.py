"""source.scancache: a cache loaded and saved by the map is looked up and saved again by
ctx-pack's files section (``scan_repository(keep_cache=True)``), and what it saves the
second time is what a fresh load of the cache gives."""

from __future__ import annotations

import os

import pytest

from ctxtools.source import scancache as cachemod
from ctxtools.source.scanset import open_cache, scan_payload, scan_repository


def _tree(root) -> None:
    (root / "pkg").mkdir(parents=True)
    for k in range(6):
        (root / "pkg" / f"m{k}.py").write_text(f"def f{k}():\n    return {k}\n")


def _entries(cache) -> dict:
    return {rel: e.to_plain() for rel, e in sorted(cache.entries.items())}


@pytest.mark.parametrize("whole", [False, True], ids=["journal", "main file"])
def test_a_kept_cache_saved_again_is_what_loading_it_gives(tmp_path, monkeypatch, whole):
    if whole:  # every save rewrites the main file (its checksum changes each time)
        monkeypatch.setattr(cachemod, "JOURNAL_MIN", 0)
        monkeypatch.setattr(cachemod, "JOURNAL_SHARE", 0.0)
    root, store = tmp_path / "r", tmp_path / "store"
    _tree(root)
    assert scan_repository(str(root), store=store).cache is None  # (not asked to keep it)
    (root / "pkg" / "m1.py").write_text("def changed():\n    return 1\n")
    (root / "pkg" / "m2.py").unlink()  # gone: dropped from the kept cache as from the file
    ss = scan_repository(str(root), store=store, keep_cache=True)
    cache = ss.cache
    assert cache is not None and "pkg/m2.py" not in cache.entries
    # What the files section does: one more file, looked up and kept, then saved.
    extra = root / "pkg" / "extra.py"
    extra.write_text("def more():\n    return 2\n")
    data, st = extra.read_bytes(), extra.stat()
    stamp = (st.st_mtime_ns, st.st_ctime_ns)
    cache.put("pkg/extra.py", st.st_size, stamp, cachemod.content_hash(data),
              scan_payload("pkg/extra.py", data))  # fmt: skip
    cache.keep(list(cache.entries))
    cache.save()
    fresh = open_cache(str(root), store)
    assert fresh.notes == []
    assert _entries(fresh) == _entries(cache)
    assert "pkg/extra.py" in fresh.entries and "pkg/m2.py" not in fresh.entries
    # and once more, a fresh checkout's restamps on top: still what a load gives
    os.utime(extra, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    st2 = extra.stat()
    got = cache.get_by_hash("pkg/extra.py", st2.st_size, (st2.st_mtime_ns, st2.st_ctime_ns),
                            cachemod.content_hash(data))  # fmt: skip
    assert got is not None
    cache.save()
    again = open_cache(str(root), store)
    assert again.notes == [] and _entries(again) == _entries(cache)


def test_the_scanned_callback_comes_before_the_cache_is_written_unless_cut_short(tmp_path):
    # ctx-pack's map child posts the definitions from the callback: the pack waits for
    # them, not for the cache's write (0.1 s of an empty-store Django pack). The cache is
    # written all the same, whole, after; a map cut short (--max-files) calls back after
    # the write, as its callback looks up and keeps more files in the cache first.
    root, store = tmp_path / "r", tmp_path / "store"
    _tree(root)
    seen = []

    def told(ss):
        seen.append((len(ss.scans), ss.truncated, ss.cache is not None,
                     os.path.exists(ss.cache.path) if ss.cache is not None else None))
        ss.cache = None  # (let go, as the child does)

    ss = scan_repository(str(root), store=store, keep_cache=True, scanned=told)
    assert seen == [(6, False, True, False)]  # the cache in hand, not yet on disk
    assert ss.cache is None  # (the callback let it go: not kept after the write)
    assert len(open_cache(str(root), store).entries) == 6  # written whole after
    seen.clear()
    ss = scan_repository(str(root), store=store, keep_cache=True, scanned=told, max_files=2)
    assert seen == [(2, True, True, True)]  # cut short: after the write
