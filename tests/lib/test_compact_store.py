"""ctx-compact and the handle store: the elided results go in as one batch (put_many)."""

from __future__ import annotations

import json

import pytest
from helpers import CORPUS, convert, strict_problems

from ctxtools.compact import COMPACTED, Options, compact
from ctxtools.compact.elide import MemoryStash, StoreStash, handle_name, predict_ref
from ctxtools.compact.transcript import TokenCounter, dump, load
from ctxtools.store import HandleStore
from ctxtools.tokens import get_ruler


@pytest.fixture(scope="module")
def ruler():
    return get_ruler().ruler


@pytest.fixture(scope="module")
def run_bytes() -> bytes:
    runs = {r["instance_id"]: convert.to_openai(r) for r in convert.runs_from_jsonl(CORPUS)}
    return json.dumps(runs["ponylang__ponyc-4588"]).encode()


def _files(root):
    return sorted((str(p.relative_to(root)), p.stat().st_mtime_ns) for p in root.rglob("*"))


class CountingStore(HandleStore):
    """A store that records the size of every batch and every single put."""

    def __init__(self, root) -> None:
        super().__init__(root)
        self.batches: list[int] = []
        self.singles = 0

    def put_many(self, items):
        items = list(items)
        self.batches.append(len(items))
        return super().put_many(items)

    def put_stream(self, *args, **kwargs):
        self.singles += 1
        return super().put_stream(*args, **kwargs)


def _store_stash(root, session="default") -> StoreStash:
    stash = StoreStash(root, session)
    stash.store = CountingStore(root)
    return stash


def test_store_stash_put_many_refs_and_bytes(store_dir):
    stash = _store_stash(store_dir, "s1")
    items = [(f"result {i}\n".encode() * (i + 1), None) for i in range(30)]
    items.append((b'{"rows": [1, 2, 3]}', "json"))
    batch = [(data, handle_name(data), t) for data, t in items]
    refs = stash.put_many(batch)
    assert refs == [predict_ref("s1", data) for data, _name, _t in batch]
    assert stash.store.batches == [31]
    assert stash.store.singles == 0
    st = HandleStore(store_dir)
    for (data, _name, t), ref in zip(batch, refs, strict=True):
        assert st.read_bytes(ref, verify=True) == data
        assert st.card(ref)["type"] == (t or "text")
    # a rerun finds every handle in place: nothing is written
    before = _files(store_dir)
    again = _store_stash(store_dir, "s1")
    assert again.put_many(batch) == refs
    assert again.store.batches == [0]
    assert _files(store_dir) == before
    # a handle whose blob went missing is written again (and only that one)
    (store_dir / "blobs" / refs[3].split("@")[1][:2]).rename(store_dir / "moved")
    third = _store_stash(store_dir, "s1")
    assert third.put_many(batch) == refs
    assert st.read_bytes(refs[3], verify=True) == batch[3][0]
    assert third.store.batches[0] >= 1
    assert third.store.batches[0] < len(batch)


def test_store_stash_single_put_goes_through_the_batch(store_dir):
    stash = _store_stash(store_dir)
    data = b"one result\n"
    assert stash.put(data, handle_name(data)) == predict_ref("default", data)
    assert stash.store.batches == [1]
    assert HandleStore(store_dir).read_bytes(predict_ref("default", data)) == data


def test_compaction_writes_one_batch_and_matches_memory_stash(store_dir, ruler, run_bytes):
    memory = MemoryStash()
    expect = compact(load(run_bytes), TokenCounter(ruler), Options(limit=9000), memory)
    assert expect.status == COMPACTED
    stash = _store_stash(store_dir)
    out = compact(load(run_bytes), TokenCounter(ruler), Options(limit=9000), stash)
    assert dump(load(run_bytes), out.messages) == dump(load(run_bytes), expect.messages)
    assert strict_problems(out.messages, "openai") == []
    handles = out.report["stage1"]["handles"]
    named = set(handles) | ({out.report["stage2"]["handle"]} if out.report["stage2"] else set())
    assert len(handles) > 1
    assert stash.store.batches == [len(named)]  # one batch holding every handle named
    assert stash.store.singles == 0
    st = HandleStore(store_dir)
    for ref in named:
        assert st.read_bytes(ref, verify=True) == memory.read(ref)
    assert sorted(r["ref"] for r in st.records()) == sorted(named)


class PutOnly:
    """A stash of the older protocol: only ``put``."""

    def __init__(self) -> None:
        self.inner = MemoryStash()
        self.calls = 0

    def put(self, data, name, type=None):
        self.calls += 1
        return self.inner.put(data, name, type=type)


def test_a_stash_without_put_many_still_works(ruler, run_bytes):
    stash = PutOnly()
    out = compact(load(run_bytes), TokenCounter(ruler), Options(limit=9000), stash)
    expect = compact(load(run_bytes), TokenCounter(ruler), Options(limit=9000), MemoryStash())
    assert out.messages == expect.messages
    assert stash.calls == len(set(stash.inner.items)) > 1
