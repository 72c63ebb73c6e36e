"""retrieval.vocab: a file's words, kept between packs, count as the file itself does."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from ctxtools.retrieval import vocab as vocabmod
from ctxtools.retrieval.terms import Terms
from ctxtools.retrieval.vocab import Vocab, VocabCache

DATA = Path(__file__).resolve().parent.parent / "data"
TERMS = [
    "bulk_create", "bulk", "create", "http", "server", "lru", "cache", "token", "lexer",
    "getitem", "cart", "total", "auth", "é", "x", "put", "handle", "request", "json",
]  # fmt: skip


JOINED = ["filename", "searchresults"]  # a phrase's terms: get_file_name counts for them


def _terms(terms: list[str]) -> Terms:
    return Terms(terms, pairs=terms if terms is JOINED else ())


def _texts() -> list[bytes]:
    real = sorted((DATA / "excerpt").iterdir()) + sorted((DATA / "scan").glob("*.*"))
    out = [p.read_bytes() for p in real if p.is_file()]
    out += [
        b"class BulkCreate:\n    def bulk_create(self): return HTTPServer()\n",
        "caf\u00e9 r\u00e9sum\u00e9 \u6f22\u5b57 LRUCache getItem".encode(),
        b"\xff\xfe broken \xc3( utf8 bulk_create\x00\x00\x00 NUL run",
        b"",
        b"1234 5678\n" * 50,
        b"def get_file_name(p):\n    return fileName or getSearchResults(p) or FILE_NAME_X\n",
    ]
    return out


def test_a_vocabulary_counts_and_finds_what_the_bytes_do():
    for data in _texts():
        fresh, kept = Terms(TERMS), Terms(TERMS)
        v = Vocab.of(data)
        assert fresh.count(data) == kept.count_vocab(v), data[:40]
        assert fresh.present(data.lower()) == kept.present_vocab(v), data[:40]
        again = Vocab(v.words, v.freq, v.n)  # as read back from the store
        assert Terms(TERMS).count_vocab(again) == fresh.count(data)


def test_a_vocabulary_is_counted_from_its_text_not_a_dict_of_its_words(monkeypatch):
    """count_vocab searches the lowered words for the terms' texts (with and without
    their underscores: ``bulk_create`` stands for ``bulkcreate``) and looks at the words
    found only, as sorting every word into terms and no terms would count them."""
    texts = [
        *_texts(),
        b"bulk_create BULK__CREATE bulkCreate Bulk_Create_Ext x_bulk create\nbulk",
        b"_bulkcreate_ __create__ b_u_l_k c_reate bulk_create bulk_create\n",
    ]
    terms = [*TERMS, "bulkcreate", "bulk_create_ext"]
    monkeypatch.setattr(Vocab, "counts", lambda self: pytest.fail("a dict of every word"))
    for data in texts:
        assert Terms(terms).count_vocab(Vocab.of(data)) == Terms(terms).count(data), data[:40]
    assert Terms(["bulkcreate"]).count_vocab(Vocab.of(texts[-1])) == ({0: 2}, 6)


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
    assert made == [] and kept.counts() == first.counts() and kept.n == first.n
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


def _corpus_of(texts: list[bytes]) -> vocabmod.Corpus:
    files = []
    for k, data in enumerate(texts):
        v = Vocab.of(data)
        files.append((f"f{k}", (k,), k, v.n, v))
    corpus, own = vocabmod.Corpus.build(files)
    assert corpus.take_files((corpus.ident, *own))
    return corpus


def _stored(value):
    """VALUE as the store gives it back (memofile: marshal)."""
    import marshal

    return marshal.loads(marshal.dumps(value, 4))


def _read_back(corpus: vocabmod.Corpus) -> vocabmod.Corpus:
    """CORPUS as the store gives it back: its index, and its files' own words beside."""
    again = vocabmod.Corpus.from_plain(_stored(corpus.plain()))
    own = (list(corpus.files[0]), list(corpus.files[1]))
    assert again is not None and again.take_files((corpus.ident, *own))
    return again


def test_the_corpus_answers_for_every_file_what_each_file_would():
    texts = _texts()
    corpus = _corpus_of(texts)
    again = _read_back(corpus)
    for terms in (TERMS, ["bulkcreate", "getitem", "é"], ["1234"], [], JOINED):
        for c in (corpus, again):
            present, tf = _terms(terms).scan_corpus(c)
            for k, data in enumerate(texts):
                want_tf, _n = _terms(terms).count(data)
                assert tf.get(k, {}) == want_tf, (terms, data[:40])
                assert present.get(k, []) == _terms(terms).present(data.lower()), data[:40]
                assert c.counts_of(k) == Vocab.of(data).counts()


def test_a_fresh_checkout_of_the_same_content_is_not_counted_again(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    texts = {f"m{k}.py": f"def bulk_create_{k}():\n    return create({k})\n" for k in range(80)}
    for name, text in texts.items():
        (root / name).write_text(text)
    store = tmp_path / "store"
    c = VocabCache(store, str(root))
    for name in texts:
        c.get(name, str(root / name), (root / name).read_bytes())
    c.save()
    # A first pack keeps the counts alone (it ranked file by file); the next builds the index.
    assert VocabCache(store, str(root))._load() is None
    again = VocabCache(store, str(root))  # the same checkout, nothing changed: built now
    for name in texts:
        again.get(name, str(root / name), (root / name).read_bytes())
    again.save()
    assert VocabCache(store, str(root))._load() is not None
    # A new checkout: the same bytes, every stat new.
    for name in texts:
        path = root / name
        path.unlink()
        path.write_text(texts[name])
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    made = []
    real = Vocab.of
    monkeypatch.setattr(vocabmod.Vocab, "of", classmethod(lambda cls, d: made.append(d) or real(d)))
    (cache_file,) = (store / "repomap").glob("vocab-v1-*.bin")
    before = cache_file.read_bytes()
    c2 = VocabCache(store, str(root))
    got = {name: c2.get(name, str(root / name), (root / name).read_bytes()) for name in texts}
    c2.save()
    assert made == []
    assert all(v.corpus is not None for v in got.values())
    assert got["m7.py"].counts() == real(texts["m7.py"].encode()).counts()
    # Only the new stats were written, beside the cache file, which is as it was ...
    assert cache_file.read_bytes() == before
    assert list((store / "repomap").glob("vocabstamps-v1-*.bin"))
    # ... and the same checkout again is known by its stats: no file is hashed.
    hashed = []
    digest = vocabmod._digest
    monkeypatch.setattr(vocabmod, "_digest", lambda d: hashed.append(d) or digest(d))
    c2b = VocabCache(store, str(root))
    got = {name: c2b.get(name, str(root / name), (root / name).read_bytes()) for name in texts}
    c2b.save()
    assert hashed == [] and all(v.corpus is not None for v in got.values())
    # One file edited: counted anew, beside the corpus, and kept so.
    (root / "m3.py").write_text("def other():\n    return bulk\n")
    c3 = VocabCache(store, str(root))
    v3 = c3.get("m3.py", str(root / "m3.py"), (root / "m3.py").read_bytes())
    c3.save()
    assert len(made) == 1 and v3.corpus is None
    assert Terms(["bulk"]).count_vocab(v3) == ({0: 1}, 4)
    c4 = VocabCache(store, str(root))
    v4 = c4.get("m3.py", str(root / "m3.py"), (root / "m3.py").read_bytes())
    assert len(made) == 1 and v4.counts() == v3.counts()


def test_the_corpus_is_built_again_when_many_files_changed(tmp_path, monkeypatch):
    from ctxtools import memofile

    asked = []  # (the build fixes glibc's mmap threshold first: its buffers go back)
    monkeypatch.setattr(memofile, "release_large_buffers", lambda: asked.append(1) or True)
    root = tmp_path / "repo"
    root.mkdir()
    names = [f"m{k}.py" for k in range(200)]
    for name in names:
        (root / name).write_text(f"alpha_{name[:-3]} = 1\n")
    store = tmp_path / "store"
    c = VocabCache(store, str(root))
    for name in names:
        c.get(name, str(root / name), (root / name).read_bytes())
    c.save()
    for name in names[:100]:  # more than REBUILD_MIN and REBUILD_SHARE of them
        (root / name).write_text(f"beta_{name[:-3]} = 2\n")
    c2 = VocabCache(store, str(root))
    for name in names:
        c2.get(name, str(root / name), (root / name).read_bytes())
    assert not asked  # (a first pack builds no corpus)
    c2.save()
    assert asked
    c3 = VocabCache(store, str(root))
    got = {name: c3.get(name, str(root / name), (root / name).read_bytes()) for name in names}
    assert all(v.corpus is not None for v in got.values())  # no file beside the corpus
    present, tf = Terms(["beta", "alpha"]).scan_corpus(got["m0.py"].corpus)
    assert tf[got["m0.py"].slot] == {0: 1} and tf[got["m150.py"].slot] == {1: 1}


def _spans_of(data: bytes, cuts: int) -> list[tuple[int, int]]:
    """DATA's lines as CUTS spans of whole lines (the newline between two left out), as
    ``rank._read`` cuts a file into its chunks; one empty span among them."""
    at = [0]
    for line in data.split(b"\n"):
        at.append(at[-1] + len(line) + 1)
    n = len(at) - 1
    step = max(1, n // cuts)
    spans = [(at[k], at[min(k + step, n)] - 1) for k in range(0, n, step)]
    if len(spans) > 1:
        spans.insert(1, (spans[1][0], spans[1][0]))  # (a chunk of no bytes, at a word)
    return spans


def test_counting_from_the_corpus_words_gives_what_cutting_the_spans_does():
    texts = _texts() + [b"key key key\nkey\nkeys key_key KEY\n", b"set reset set\n  set"]
    corpus = _corpus_of(texts)
    again = _read_back(corpus)
    for terms in (TERMS + ["key", "set"], ["bulkcreate", "getitem", "é"], ["1234"], [], JOINED):
        for c in (corpus, again):
            t = _terms(terms)
            t.scan_corpus(c)
            for k, data in enumerate(texts):
                vocab = Vocab(b"", b"", c.ns[k], c, k)
                words = t.hit_words(vocab)
                assert sorted(words) == sorted({w for w in data.translate(
                    vocabmod.WORD_BYTES).split() if t.ids_of(w)}), data[:40]  # fmt: skip
                for cuts in (1, 3, 7):
                    spans = _spans_of(data, cuts)
                    want = _terms(terms).count_spans(data, spans)
                    assert t.count_known(data, spans, words) == want, (terms, cuts, data[:40])


def test_overlapping_spans_are_counted_as_cut():
    data = b"bulk_create one\nbulk two\ncreate three bulk\n"
    spans = [(0, 15), (10, 24), (16, 41)]  # (a scanner's nested ranges overlap)
    t = Terms(["bulk", "create"])
    want = Terms(["bulk", "create"]).count_spans(data, spans)
    assert t.count_known(data, spans, [b"bulk_create", b"bulk", b"create"]) == want
    assert want[1][0] != {}  # (the word the first span also holds counts in the second)


def test_hit_words_are_none_until_the_corpus_is_scanned():
    corpus = _corpus_of([b"bulk_create here\n"])
    t = Terms(["bulk"])
    vocab = Vocab(b"", b"", corpus.ns[0], corpus, 0)
    assert t.hit_words(vocab) is None and t.hit_words(Vocab.of(b"bulk")) is None
    t.scan_corpus(corpus)
    assert t.hit_words(vocab) == [b"bulk_create"]


def test_a_corpus_of_another_shape_is_a_miss():
    plain = _stored(_corpus_of([b"a b c\n", b"c d\n"]).plain())
    assert vocabmod.Corpus.from_plain(plain) is not None
    assert vocabmod.Corpus.from_plain(plain[1:]) is None  # (format 8's shape)
    bad_low = (*plain[:8], plain[8][:-8])  # a word's offset short
    assert vocabmod.Corpus.from_plain(bad_low) is None
    empty = _stored(_corpus_of([]).plain())
    got = vocabmod.Corpus.from_plain(empty)
    assert got is not None and got.joined == b"" and got.word_set() == frozenset()


def test_a_file_outside_the_scanned_corpus_counts_as_its_bytes_do():
    """After scan_corpus, the corpus's other words are known to stand for no term; a file
    counted apart (changed since) still counts every word, old or new."""
    corpus = _corpus_of([b"bulk_create here and there\n", b"nothing to see\n"])
    t = Terms(["bulk", "create", "see"])
    t.scan_corpus(corpus)
    new = b"bulk_create see BulkCreate createBulk here unseen_word\n"
    assert t.count(new) == Terms(["bulk", "create", "see"]).count(new)
    assert t.count_vocab(Vocab.of(new)) == Terms(["bulk", "create", "see"]).count(new)


def _tree(tmp_path: Path, n: int) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "repo"
    root.mkdir()
    texts = {f"m{k}.py": f"def bulk_create_{k}():\n    return create({k})\n" for k in range(n)}
    for name, text in texts.items():
        (root / name).write_text(text)
    return root, texts


def _pack_vocabs(store: Path, root: Path, names) -> tuple[VocabCache, dict[str, Vocab]]:
    c = VocabCache(store, str(root))
    got = {name: c.get(name, str(root / name), (root / name).read_bytes()) for name in names}
    c.save()
    return c, got


def test_a_cache_file_of_the_format_before_is_counted_again_not_misread(tmp_path, monkeypatch):
    """Format 8 kept each file's words as "word count" lines and the corpus's index in
    one record of ten parts; such a file is a miss: every file is counted again, and the
    file written over in this format."""
    from ctxtools.source.memo import Memo

    root, texts = _tree(tmp_path, 3)
    store = tmp_path / "store"
    old_delta = {
        name: ((len(t), 1, 2, 3), 7, b"bulk 9\ncreate 9", 18) for name, t in texts.items()
    }
    memo = Memo(store, str(root), "vocab", tuple, keep=1)
    memo.put_plain("index", (8, None, old_delta, 5))
    made = []
    real = Vocab.of
    monkeypatch.setattr(vocabmod.Vocab, "of", classmethod(lambda cls, d: made.append(d) or real(d)))
    c, got = _pack_vocabs(store, root, texts)
    assert len(made) == 3
    assert Terms(["bulk"]).count_vocab(got["m1.py"]) == ({0: 1}, 5)
    rec = Memo(store, str(root), "vocab", tuple, keep=1).load()["index"]
    assert rec[0] == vocabmod._FORMAT
    assert rec[2]["m1.py"][2] == b"def\nbulk_create_1\nreturn\ncreate\n1"
    # A record of this shape under the old number is a miss too (the number decides).
    wrong = {name: (*kept[:2], b"bulk", kept[3][:4], 1) for name, kept in rec[2].items()}
    memo.results = None
    memo.put_plain("index", (8, None, wrong, 5))
    _c, got = _pack_vocabs(store, root, texts)
    assert len(made) == 6 and Terms(["bulk"]).count_vocab(got["m1.py"]) == ({0: 1}, 5)


def test_the_files_words_are_read_only_to_build_the_corpus_again(tmp_path, monkeypatch):
    """The corpus's index is read by every pack; its files' own words (a file of their
    own) only by a rebuild. When that file is gone, the rebuild leaves the old corpus's
    files out, and the next pack counts them again."""
    root, texts = _tree(tmp_path, 200)
    store = tmp_path / "store"
    _pack_vocabs(store, root, texts)  # a first pack: the counts alone
    _pack_vocabs(store, root, texts)  # the index built
    (files,) = (store / "repomap").glob("vocabfiles-v1-*.bin")
    read = []
    real_read = VocabCache._read_files
    monkeypatch.setattr(VocabCache, "_read_files", lambda self: read.append(1) or real_read(self))
    _c, got = _pack_vocabs(store, root, texts)
    assert read == [] and all(v.corpus is not None for v in got.values())
    assert got["m5.py"].counts() == Vocab.of(texts["m5.py"].encode()).counts()  # (read now)
    assert read == [1]
    for name in list(texts)[:100]:  # enough changed files that the corpus is built again
        texts[name] = f"beta_{name[:-3]} = 2\n"
        (root / name).write_text(texts[name])
    files.unlink()
    _pack_vocabs(store, root, texts)
    made = []
    real = Vocab.of
    monkeypatch.setattr(vocabmod.Vocab, "of", classmethod(lambda cls, d: made.append(d) or real(d)))
    _c, got = _pack_vocabs(store, root, texts)
    assert len(made) == 100  # the unchanged ones, whose words were not at hand
    for name, text in texts.items():
        assert Terms(["beta", "bulk"]).count_vocab(got[name]) == Terms(["beta", "bulk"]).count(
            text.encode()
        ), name


def test_the_corpus_index_holds_each_words_files_in_slot_order():
    """The postings built in two passes are what a list per word gives: for each word in
    sorted order, every (slot, occurrences) of the files holding it, slot by slot."""
    import random

    rng = random.Random(7)
    pool = [f"w{k}".encode() for k in range(40)] + [b"Word", b"word", b"x_y"]
    texts = [b" ".join(rng.choice(pool) for _ in range(rng.randrange(0, 30))) for _ in range(25)]
    corpus = _corpus_of(texts)
    want: dict[bytes, list[int]] = {}
    for slot, data in enumerate(texts):
        for w, c in Vocab.of(data).counts().items():
            want.setdefault(w, []).extend((slot, c))
    words = sorted(want)
    assert corpus.joined == b"\n".join(words)
    assert [list(corpus.postings(k)) for k in range(len(words))] == [want[w] for w in words]
    assert list(corpus.post_at) == [0, *itertools.accumulate(len(want[w]) for w in words)]
