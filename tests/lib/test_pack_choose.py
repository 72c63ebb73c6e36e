"""pack.choose: the files' ranking reuses what the repo map already scanned."""

from __future__ import annotations

from pathlib import Path

from ctxtools.pack import choose
from ctxtools.pack.build import build_pack
from ctxtools.pack.model import PackRequest
from ctxtools.tokens import HeuristicRuler


def _repo(root: Path) -> None:
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "orders.py").write_text(
        "class Order:\n    def with_tax(self):\n        return self.total * 1.2\n\n\n"
        "def refund(order):\n    return order.total\n"
    )
    for k in range(6):
        (root / "shop" / f"m{k}.py").write_text(f"def helper_{k}(order):\n    return order\n")


def _request(root: Path, store: Path, task: str = "with_tax is wrong", **extra) -> PackRequest:
    """A 2,000-token pack of ROOT with the store STORE."""
    return PackRequest(
        task=task, paths=[str(root)], root=str(root), tokens=2000, store=str(store), **extra
    )


def test_the_map_s_scans_stand_in_for_the_scan_cache(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    _repo(root)
    req = _request(root, tmp_path / "store")
    first = build_pack(req, ruler=HeuristicRuler())
    opened = []
    real = choose._open_scan_cache
    monkeypatch.setattr(choose, "_open_scan_cache", lambda *a: opened.append(a) or real(*a))
    again = build_pack(req, ruler=HeuristicRuler())
    assert opened == []  # the definitions came with the map
    assert again.text == first.text
    chunks = {f["path"]: f.get("chunks", []) for f in again.files}
    assert any(c.startswith("Order.with_tax ") for c in chunks["shop/orders.py"])
    # Without the map the chooser reads the scan cache itself, and packs the same files.
    bare = build_pack(
        _request(root, tmp_path / "store", use_map=False),
        ruler=HeuristicRuler(),
    )
    assert opened
    assert {f["path"]: f.get("chunks") for f in bare.files}["shop/orders.py"] == chunks[
        "shop/orders.py"
    ]


def test_no_cycle_collection_while_a_pack_is_built(tmp_path, monkeypatch):
    import gc

    root = tmp_path / "repo"
    _repo(root)
    req = PackRequest(task="with_tax is wrong", paths=[str(root)], root=str(root), tokens=2000)
    seen = []
    real = choose.Chooser._rank
    monkeypatch.setattr(
        choose.Chooser, "_rank", lambda self, r: seen.append(gc.isenabled()) or real(self, r)
    )
    assert gc.isenabled()
    plain = build_pack(req, ruler=HeuristicRuler())
    assert seen == [False] and gc.isenabled()  # paused for the build, running again after
    gc.disable()  # a caller that turned it off keeps it off
    try:
        assert build_pack(req, ruler=HeuristicRuler()).text == plain.text
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_fresh_checkout_reads_each_file_once_and_the_scan_cache_once(tmp_path, monkeypatch):
    """The files section does not hold the map's bytes (they would weigh on the map's
    peak): it reads each file once, lets its bytes go and reads again only the files it
    ranks chunk by chunk; it looks up what the map did not scan in the map's own scan
    cache, never loading it a second time."""
    import os

    from ctxtools import fsutil
    from ctxtools.fsutil import read_whole
    from ctxtools.retrieval import source as sourcemod
    from ctxtools.source import scancache

    root = tmp_path / "repo"
    _repo(root)
    (root / "NOTES.txt").write_text("with_tax notes\n")
    (root / "pad").mkdir()
    for k in range(choose.VOCAB_MIN_FILES):  # enough files that their words are kept
        (root / "pad" / f"p{k}.py").write_text(f"PAD_{k} = {k}\n")
    req = _request(root, tmp_path / "store")
    build_pack(req, ruler=HeuristicRuler())
    first = build_pack(req, ruler=HeuristicRuler())  # (the vocabularies' index built)
    for path in root.rglob("*"):  # a new checkout: the same bytes, every stat new
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    opened, again_read, loads = [], [], []

    def counted(path):
        opened.append(os.path.basename(path))
        return read_whole(path)

    def counted_again(path, *args):
        again_read.append(os.path.basename(path))
        return open(path, *args)  # noqa: SIM115 (the caller's to close)

    monkeypatch.setattr(fsutil, "read_whole", counted)
    monkeypatch.setattr(choose, "read_whole", counted)  # (how the chooser reads a file)
    monkeypatch.setattr(sourcemod, "open", counted_again, raising=False)
    real_load = scancache.ScanCache.load
    monkeypatch.setattr(scancache.ScanCache, "load", lambda c: loads.append(1) or real_load(c))
    again = build_pack(req, ruler=HeuristicRuler())
    assert again.text == first.text and again.files == first.files
    files = sorted(p.name for p in root.rglob("*") if p.is_file())
    assert sorted(opened) == files  # each once, whatever the map read
    shown = {os.path.basename(f["path"]) for f in again.files}
    assert shown <= set(again_read) <= set(files) and len(again_read) == len(set(again_read))
    assert loads == [1]  # the map's


def test_files_the_map_did_not_scan_are_scanned_once_and_found_by_content(
    tmp_path, monkeypatch
):
    """Without the map (or past its --max-files cut) the chooser scans a reachable file
    itself; it keeps the scan in the scan cache, so the next pack, even of a fresh
    checkout (every stat new, the same bytes), reads it from there and packs the same."""
    import shutil

    from ctxtools.retrieval import window

    src = tmp_path / "src"
    _repo(src)
    root = tmp_path / "repo"
    shutil.copytree(src, root)
    req = _request(root, tmp_path / "store", "with_tax and refund of an order", use_map=False)
    scanned = []
    real = window.definitions_of
    monkeypatch.setattr(window, "definitions_of", lambda *a: scanned.append(a[0]) or real(*a))
    first = build_pack(req, ruler=HeuristicRuler())
    assert scanned == []  # scanned as the map scans, into the cache
    shutil.rmtree(root)
    shutil.copytree(src, root)  # a fresh checkout: the same bytes, new stats
    from ctxtools.source import scanset

    counted = []
    real_payload = scanset.scan_payload
    monkeypatch.setattr(
        scanset, "scan_payload", lambda *a: counted.append(a[0]) or real_payload(*a)
    )
    again = build_pack(req, ruler=HeuristicRuler())
    assert counted == [] and scanned == []
    assert again.text == first.text
    chunks = {f["path"]: f.get("chunks", []) for f in again.files}
    assert any(c.startswith("Order.with_tax ") for c in chunks["shop/orders.py"])
    # A changed file is scanned again, and its new definition is the one packed.
    (root / "shop" / "orders.py").write_text(
        "class Order:\n    def with_tax_and_refund(self):\n        return self.total\n"
    )
    changed = build_pack(req, ruler=HeuristicRuler())
    assert counted == ["shop/orders.py"]
    chunks = {f["path"]: f.get("chunks", []) for f in changed.files}
    assert any(c.startswith("Order.with_tax_and_refund ") for c in chunks["shop/orders.py"])


def test_a_file_without_a_diff_shares_one_empty_set_of_changed_lines():
    """Every candidate of a pack without --changed asks for its changed lines: one shared
    empty set, not a new 216-byte frozenset a file (50,000 files: 10 MB)."""
    from ctxtools.pack.choose import changed_lines

    assert changed_lines(None) == frozenset()
    assert changed_lines(None) is changed_lines("")
    assert changed_lines("@@ -3,0 +4,2 @@\n+a\n+b\n") == {4, 5}


def test_a_task_path_names_a_left_out_file_by_two_or_more_trailing_components():
    from ctxtools.pack.inputs import TaskPaths

    def task_names(paths, rel):
        return TaskPaths(paths)(rel)

    rel = "third_party/money/rounding.py"
    assert task_names(["money/rounding.py"], rel)
    assert task_names(["./third_party/money/rounding.py"], rel)
    assert task_names(["/home/ci/checkout/third_party/money/rounding.py"], rel)
    assert not task_names(["rounding.py"], rel)  # a name alone: many copies may have it
    assert not task_names(["other/money/rounding.py"], rel)  # its third part differs
    assert not task_names(["money/rounding.pyc", "money"], rel)
    assert task_names(["checkout.min.js"], "checkout.min.js")  # the file's whole path
    assert not task_names(["web/checkout.min.js"], "checkout.min.js")
    assert task_names(["web/static/checkout.min.js"], "static/checkout.min.js")
