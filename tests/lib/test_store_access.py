"""The store's access log as a library: compacted along the way, the 1,000 most frecent kept."""

from __future__ import annotations

import json
import time

from ctxtools.store import HandleStore


def test_access_log_compaction(store_dir, monkeypatch):
    from ctxtools.store import access as store_mod

    st = HandleStore(store_dir)
    st.put_bytes(b"x", name="a")
    st.put_bytes(b"y", name="b")
    monkeypatch.setattr(store_mod, "ACCESS_COMPACT_BYTES", 600)
    t0 = float(int(time.time())) + 10
    for i in range(40):
        st.record_access("default", "a" if i % 4 else "b", when=t0 + i)
    lines = st.access_log.read_bytes().splitlines()
    assert len(lines) < 20  # compacted along the way
    stats = st.access_stats()
    assert stats[("default", "a")] == (30, t0 + 39)
    assert stats[("default", "b")] == (10, t0 + 36)


def test_access_log_keeps_the_1000_most_frecent(store_dir, monkeypatch):
    from ctxtools import store as store_mod

    st = HandleStore(store_dir)
    st.put_many([(f"p{i}\n".encode(), {"name": f"h{i:04d}"}) for i in range(1010)])
    created = max(float(r["created_at"]) for r in st.records())
    for i in range(1010):  # h0010 and up are read twice: higher frecency
        for _ in range(1 if i < 10 else 2):
            st.record_access("default", f"h{i:04d}", when=created + 0.5)
    st.compact_access()
    lines = st.access_log.read_bytes().splitlines()
    assert len(lines) == store_mod.ACCESS_MAX_ENTRIES == 1000
    names = {json.loads(x)["n"] for x in lines}
    assert names == {f"h{i:04d}" for i in range(10, 1010)}
