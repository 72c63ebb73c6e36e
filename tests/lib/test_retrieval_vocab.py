"""retrieval.vocab: a file's words, kept between packs, count as the file itself does."""

from __future__ import annotations

import os
from pathlib import Path

from ctxtools.retrieval import vocab as vocabmod
from ctxtools.retrieval.index import Terms
from ctxtools.retrieval.vocab import Vocab, VocabCache

DATA = Path(__file__).resolve().parent.parent / "data"
TERMS = [
    "bulk_create", "bulk", "create", "http", "server", "lru", "cache", "token", "lexer",
    "getitem", "cart", "total", "auth", "é", "x", "put", "handle", "request", "json",
]  # fmt: skip


def _texts() -> list[bytes]:
    real = sorted((DATA / "excerpt").iterdir()) + sorted((DATA / "scan").glob("*.*"))
    out = [p.read_bytes() for p in real if p.is_file()]
    out += [
        b"class BulkCreate:\n    def bulk_create(self): return HTTPServer()\n",
        "caf\u00e9 r\u00e9sum\u00e9 \u6f22\u5b57 LRUCache getItem".encode(),
        b"\xff\xfe broken \xc3( utf8 bulk_create\x00\x00\x00 NUL run",
        b"",
        b"1234 5678\n" * 50,
    ]
    return out


def test_a_vocabulary_counts_and_finds_what_the_bytes_do():
    for data in _texts():
        fresh, kept = Terms(TERMS), Terms(TERMS)
        v = Vocab.of(data)
        assert fresh.count(data) == kept.count_vocab(v), data[:40]
        assert fresh.present(data.lower()) == kept.present_vocab(v), data[:40]
        again = Vocab(v.text, v.blob, v.n)  # as read back from the store
        assert Terms(TERMS).count_vocab(again) == fresh.count(data)


def _file(tmp_path: Path, text: str) -> tuple[Path, bytes]:
    path = tmp_path / "repo" / "m.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path, path.read_bytes()


def test_the_cache_keeps_a_vocabulary_until_the_file_changes(tmp_path, monkeypatch):
    path, data = _file(tmp_path, "def bulk_create():\n    return create()\n")
    store = tmp_path / "store"
    c = VocabCache(store, str(path.parent))
    first = c.get("m.py", str(path), data)
    c.save()
    made = []
    real = Vocab.of
    monkeypatch.setattr(vocabmod.Vocab, "of", classmethod(lambda cls, d: made.append(d) or real(d)))
    c2 = VocabCache(store, str(path.parent))
    kept = c2.get("m.py", str(path), data)
    assert made == [] and kept.text == first.text and kept.counts() == first.counts()
    path.write_text("def bulk_create():\n    return create(bulk=1)\n")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    data2 = path.read_bytes()
    changed = VocabCache(store, str(path.parent)).get("m.py", str(path), data2)
    assert len(made) == 1
    assert Terms(["bulk"]).count_vocab(changed) == ({0: 2}, changed.n)


def test_a_damaged_cache_is_a_miss_and_an_unwritable_store_no_error(tmp_path):
    path, data = _file(tmp_path, "x = 1\n")
    store = tmp_path / "store"
    c = VocabCache(store, str(path.parent))
    c.get("m.py", str(path), data)
    c.save()
    (cache_file,) = (store / "repomap").glob("vocab-v1-*.bin")
    cache_file.write_bytes(cache_file.read_bytes()[:-5] + b"junk!")
    v = VocabCache(store, str(path.parent)).get("m.py", str(path), data)
    assert v.counts() == {b"x": 1, b"1": 1}
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the store's directory would go\n")
    c3 = VocabCache(blocked, str(path.parent))
    assert c3.get("m.py", str(path), data).n == 2
    c3.save()  # says nothing, raises nothing
    assert blocked.read_text().startswith("a file where")
