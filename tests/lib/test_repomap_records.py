"""The repomap caches' named records and the one memo interface: what they keep, and that
a file on disk in another (older) shape is a miss that changes nothing in the map."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import xxhash

from ctxtools import memofile
from ctxtools.repomap.core import build_map, ruler_spec, scan_repository
from ctxtools.repomap.records import FitRecord, GraphState, MapRecord, Ranking
from ctxtools.source import scancache as cachemod
from ctxtools.source.memo import Memo, from_plain
from ctxtools.source.scancache import CacheEntry, ScanPayload
from ctxtools.tokens import HeuristicRuler

DATA = Path(__file__).parents[1] / "data" / "scan"


def make_repo(root: Path) -> None:
    """Real sources in five languages from tests/data/scan, and a binary file."""
    root.mkdir(parents=True)
    for src in sorted(DATA.iterdir()):
        name = src.name.removesuffix(".txt")  # (traps.py.txt: kept out of linters)
        if name.endswith((".py", ".go", ".ts", ".rs", ".java")):
            (root / name).write_bytes(src.read_bytes())
    (root / "blob.py").write_bytes(b"\0\1\2binary")


def only(store: Path, pattern: str) -> Path:
    (found,) = (store / "repomap").glob(pattern)
    return found


def test_cache_entry_round_trips_through_its_plain_shape():
    from ctxtools.source.scan import Definition

    defs = (Definition("class", "A", 1, "class A", None, 2),)
    payload = ScanPayload("python", defs, ("A",), (1,), ())
    for entry in (
        CacheEntry(10, (1, 2), 99, payload),
        CacheEntry(10, (1, 2), 99, "binary"),  # a skip reason stays a string
        CacheEntry(10, (1, 2), 99, None),
    ):
        plain = entry.to_plain()
        assert type(plain) is tuple and type(plain[3]) is not ScanPayload
        assert marshal.loads(marshal.dumps(plain)) == plain  # marshal takes no NamedTuple
        back = CacheEntry.from_plain(plain)
        assert back == entry and type(back.payload) is type(entry.payload)
    # on disk a definition is a plain tuple; loaded, the named record again
    assert type(CacheEntry(1, (1, 2), 9, payload).to_plain()[3][1][0]) is tuple
    (d,) = CacheEntry.from_plain(CacheEntry(1, (1, 2), 9, payload).to_plain()).payload.defs
    assert type(d) is Definition and (d.name, d.end_line) == ("A", 2)


def test_entries_of_another_shape_are_misses():
    assert CacheEntry.from_plain((10, (1, 2), 99)) is None
    assert CacheEntry.from_plain((10, (1, 2), 99, ("python", (), ()))) is None
    assert CacheEntry.from_plain((10, (1, 2), 99, 7)) is None
    assert CacheEntry.from_plain([10, (1, 2), 99, None]) is None
    assert from_plain(FitRecord, (1, 2, "d", "text")) is None
    assert from_plain(MapRecord, None) is None
    assert from_plain(MapRecord, ("t", 5, 1, 2, "cl100k_base", True, ())) == MapRecord(
        "t", 5, 1, 2, "cl100k_base", True, ()
    )
    assert GraphState.from_plain(((), (), [], None)) == GraphState((), (), [], None)
    assert GraphState.from_plain(([], (), [], None)) is None
    # a ranking of another shape leaves the state, without a ranking to reuse
    state = GraphState.from_plain((("a.py",), (1,), [b""], ([1.0], [1.0])))
    assert state is not None and state.ranking is None
    ranked = GraphState.from_plain((("a.py",), (1,), [b""], ([1.0], [1.0], [{}], [{}], 0)))
    assert ranked.ranking == Ranking([1.0], [1.0], [{}], [{}], 0)


def test_memo_keeps_records_and_the_last_few(tmp_path):
    memo = Memo(tmp_path, str(tmp_path), "fit", FitRecord, keep=2)
    rec = FitRecord(3, 7, "digest", "1:def f()", 4, [(0, 1)], "cl100k_base", True)
    assert memo.put("a", rec) is None
    again = Memo(tmp_path, str(tmp_path), "fit", FitRecord, keep=2)
    assert again.get("a") == rec and isinstance(again.get("a"), FitRecord)
    assert again.get("missing") is None
    again.put("b", rec._replace(tokens=5))
    again.put("c", rec._replace(tokens=6))
    last = Memo(tmp_path, str(tmp_path), "fit", FitRecord, keep=2)
    assert last.get("a") is None and last.get("c").tokens == 6
    # a value of another shape under a key is a miss, not a crash
    last.put_plain("d", ("not", "a", "fit"))
    assert Memo(tmp_path, str(tmp_path), "fit", FitRecord, keep=2).get("d") is None


def test_scan_cache_of_an_older_entry_shape_is_rescanned(tmp_path, store_dir):
    root = tmp_path / "r"
    make_repo(root)
    cold = build_map(str(root), tokens=400, ruler=HeuristicRuler(), use_cache=False)
    first = scan_repository(str(root))
    n = first.scanned
    assert n == 7  # six sources and the binary file, each read and judged
    path = only(store_dir, "cache-v1-*.bin")
    # The same record (scanner fingerprint, root) over a body whose entries are of
    # an older shape: (size, mtime, payload), no stamp pair, no hash.
    fingerprint, real_root, _digest, _body = memofile.load(path, cachemod.KIND).value
    cache = cachemod.ScanCache(path, str(root), cachemod.scanner_fingerprint())
    cache.load()
    entries = {rel: (e.size, e.stamp[0], e.to_plain()[3]) for rel, e in cache.entries.items()}
    body = cachemod.body_of([entries])
    digest = xxhash.xxh3_64_hexdigest(body)
    memofile.save(path, cachemod.KIND, (fingerprint, real_root, digest, body))
    again = build_map(str(root), tokens=400, ruler=HeuristicRuler())
    assert again.scanset.scanned == n  # every old entry was a miss
    assert not any("unusable" in note for note in again.notes)  # (a body read whole)
    assert again.text == cold.text and again.to_json()["files"] == cold.to_json()["files"]
    assert scan_repository(str(root)).scanned == 0  # and the cache was written anew


def test_result_memo_of_the_older_format_is_a_miss(tmp_path, store_dir):
    root = tmp_path / "r"
    make_repo(root)
    ruler = HeuristicRuler()
    first = build_map(str(root), tokens=400, ruler=ruler, reuse=True)
    path = only(store_dir, "result-v1-*.bin")
    (key,) = Memo(store_dir, str(root), "result", MapRecord, keep=8).load()
    # The older result memo: its own magic line and a marshal of 7-tuples, no checksum;
    # here with a text that must not come back.
    old = {key: ("stale map", 2, 1, 1, ruler.name, ruler.exact, ())}
    path.write_bytes(b"ctx-repomap-result-v2\n" + marshal.dumps(old, 4))
    again = build_map(str(root), tokens=400, ruler=ruler, reuse=True)
    assert not again.from_memo and again.text == first.text
    hit = build_map(str(root), tokens=400, ruler=ruler, reuse=True)
    assert hit.from_memo and hit.text == first.text


def test_ruler_spec_names_the_tokenizer_file_by_its_stat(tmp_path):
    assert ruler_spec("o200k_base", None, False, True) == ("ruler", "o200k_base", None, False, True)
    missing = str(tmp_path / "nope.json")
    assert ruler_spec(None, missing, False, False)[2] == ("missing", missing)
    tok = tmp_path / "tokenizer.json"
    tok.write_text("{}")
    before = ruler_spec(None, str(tok), False, False)
    assert before[2][:2] == (os.path.realpath(tok), 2)
    tok.write_text('{"a": 1}')
    assert ruler_spec(None, str(tok), False, False) != before


def test_scan_package_imports_only_downward():
    """Each scanner module imports on its own in a fresh interpreter, in any order (a cycle
    through the package's dispatch would fail one of them)."""
    mods = ["common", "mask", "clike", "python", "go", "js", "java", "rust"]
    for mod in mods + [""]:
        name = "ctxtools.source.scan" + (f".{mod}" if mod else "")
        code = f"import {name}; from ctxtools.source.scan import scan_source; "
        code += "assert scan_source('a.rs', 'fn main() {}').definitions[0].name == 'main'"
        subprocess.run([sys.executable, "-c", code], check=True)


def test_scan_cache_body_is_written_and_read_in_parts(tmp_path, store_dir, monkeypatch):
    """A body of many parts reads back every entry; one cut short or of the format before
    (one marshal of every entry) is unusable: the cache is rebuilt, with a note."""
    monkeypatch.setattr(cachemod, "BODY_CHUNK", 2)  # (seven entries: four parts)
    root = tmp_path / "r"
    make_repo(root)
    cold = build_map(str(root), tokens=400, ruler=HeuristicRuler(), use_cache=False)
    first = scan_repository(str(root))
    path = only(store_dir, "cache-v1-*.bin")
    fingerprint, real_root, _digest, body = memofile.load(path, cachemod.KIND).value
    plain = dict(cachemod.body_entries(body))
    assert len(plain) == 7 and all(type(v) is tuple for v in plain.values())
    again = scan_repository(str(root))
    assert again.scanned == 0 and [s.defs for s in again.scans] == [s.defs for s in first.scans]
    for bad in (body[: len(body) // 2], zlib.compress(marshal.dumps(plain, 4), 1)):
        with pytest.raises((ValueError, zlib.error)):
            list(cachemod.body_entries(bad))
        digest = xxhash.xxh3_64_hexdigest(bad)
        memofile.save(path, cachemod.KIND, (fingerprint, real_root, digest, bad))
        m = build_map(str(root), tokens=400, ruler=HeuristicRuler())
        assert m.scanset.scanned == 7 and any("unusable" in note for note in m.notes)
        assert m.text == cold.text
