"""A pack of a fresh checkout with a warm store (every stat new, the same bytes): its files
are read once, by the files section, and the map's scan takes their content's hash from
that reading instead of reading them again; a file whose content changed is still read
and scanned anew, and every pack is the bytes a cold one gives."""

from __future__ import annotations

import shutil
from pathlib import Path

from ctxtools.pack import choose
from ctxtools.pack.build import build_pack
from ctxtools.pack.model import PackRequest
from ctxtools.source import scanset
from ctxtools.source.scancache import content_hash
from ctxtools.tokens import HeuristicRuler

TASK = "connect_7 drops the port: fix Link7 retries"


def _tree(root: Path) -> None:
    """More files than a pack keeps vocabularies for (``choose.VOCAB_MIN_FILES``)."""
    (root / "net").mkdir(parents=True)
    for i in range(choose.VOCAB_MIN_FILES + 10):
        (root / "net" / f"m{i:03d}.py").write_text(
            f"def connect_{i}(host, port):\n    return (host, port + {i})\n\n\n"
            f"class Link{i}:\n    retries = {i % 7}\n"
        )
    (root / "README.md").write_text("# net\n\nLinks and connections.\n")


def _pack(root: Path, store: Path) -> str:
    req = PackRequest(task=TASK, paths=[str(root)], root=str(root), tokens=3000, store=str(store))
    return build_pack(req, ruler=HeuristicRuler()).text


def _fresh(src: Path, dst: Path) -> Path:
    """A new checkout of SRC at DST: the same bytes, every stat new."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    return dst


def _scans(monkeypatch) -> list[str]:
    """The files the map's scan reads (``scanset._read_and_scan``), as they are read."""
    read: list[str] = []
    real = scanset._read_and_scan
    monkeypatch.setattr(
        scanset, "_read_and_scan", lambda cand, *a: read.append(cand.rel) or real(cand, *a)
    )
    return read


def test_a_fresh_checkout_is_read_once_and_packed_as_a_cold_store_packs_it(tmp_path, monkeypatch):
    origin = tmp_path / "origin"
    _tree(origin)
    work, store = tmp_path / "work", tmp_path / "store"
    cold = _pack(_fresh(origin, work), store)
    read = _scans(monkeypatch)
    assert _pack(_fresh(origin, work), store) == cold
    assert read == []  # every file's hash came from the files section's reading
    assert _pack(_fresh(origin, work), tmp_path / "empty store") == cold


def test_a_file_changed_in_a_fresh_checkout_is_read_and_scanned_again(tmp_path, monkeypatch):
    origin = tmp_path / "origin"
    _tree(origin)
    work, store = tmp_path / "work", tmp_path / "store"
    _pack(_fresh(origin, work), store)
    (origin / "net" / "m007.py").write_text(
        "def connect_7(host, port):\n    return (host, port)\n\n\n"
        "class Link7:\n    retries = 3\n\n    def reconnect_port(self):\n        return 7\n"
    )
    read = _scans(monkeypatch)
    warm = _pack(_fresh(origin, work), store)
    assert read == ["net/m007.py"]  # the one file the scan cache held another content of
    assert "reconnect_port" in warm  # scanned anew: its new definition is on the map
    monkeypatch.undo()
    assert warm == _pack(_fresh(origin, work), tmp_path / "empty store")


def _cand_stat(root: Path, rel: str) -> tuple[int, tuple[int, int]]:
    st = (root / rel).stat()
    return st.st_size, (st.st_mtime_ns, st.st_ctime_ns)


def test_the_scan_trusts_a_read_hash_only_at_the_stat_it_was_read(tmp_path, monkeypatch):
    """A hash told for another stat (the file changed since it was read), or a hash that
    is not the cache's, leaves the file to be read and scanned."""
    origin = tmp_path / "origin"
    _tree(origin)
    work, store = tmp_path / "work", tmp_path / "store"
    scanset.scan_repository(str(_fresh(origin, work)), store=store)
    _fresh(origin, work)
    rels = ["net/m001.py", "net/m002.py", "net/m003.py"]
    told = {}
    for rel in rels:
        size, stamp = _cand_stat(work, rel)
        told[rel] = (size, stamp, content_hash((work / rel).read_bytes()))
    size, stamp = told["net/m002.py"][:2]
    told["net/m002.py"] = (size, (stamp[0] - 1, stamp[1]), told["net/m002.py"][2])  # older
    told["net/m003.py"] = (*told["net/m003.py"][:2], told["net/m003.py"][2] ^ 1)  # not it
    read = _scans(monkeypatch)
    ss = scanset.scan_repository(str(work), store=store, read_digests=told)
    assert "net/m001.py" not in read
    assert {"net/m002.py", "net/m003.py"} <= set(read)
    assert {s.rel for s in ss.scans} >= set(rels)


def test_a_sources_hash_is_the_scan_caches(tmp_path):
    """``Source.digest`` is what the scan cache compares: ``scancache.content_hash``."""
    from ctxtools.retrieval.source import Source

    path = tmp_path / "f.py"
    data = b"def f():\n    return 1\n"
    path.write_bytes(data)
    src = Source("f.py", data, path=str(path))
    assert src.digest() is None  # (held: not yet let go)
    src.release()
    assert src.digest() == content_hash(data)
    src.data = b"redacted"  # other bytes than the file's: no hash of the file
    assert src.digest() is None
