"""The access log: which handles are read, how often, how lately -- and their frecency.

``ROOT/access.jsonl`` is append-only: a read appends one line ``{"s": SESSION, "n": NAME,
"t": TIME, "c": COUNT}`` (``access_line`` is its one encoder) under the store's shared lock.
Past ``ACCESS_COMPACT_BYTES`` it is compacted under the exclusive lock: one line per handle
that still has a card, at most ``ACCESS_MAX_ENTRIES`` of them (the highest frecency), reads
logged before a handle's current card was written (an earlier version of the name) dropped.

Frecency is ``(reads + 1) x e^(-lambda age)`` with a half-life of 7 days (``frecency``); the
listing (``entries``) and the compaction rank by it. Logging is best effort: a read-only
store just is not logged. Every function takes the store (``root.StoreRoot``) it works on.
"""

from __future__ import annotations

import math
import os
import time

from ctxtools.errors import StoreError
from ctxtools.fsutil import replace_file
from ctxtools.store import disk
from ctxtools.store.refs import public_card
from ctxtools.store.root import StoreRoot

ACCESS_COMPACT_BYTES = 128 << 10  # the access log is compacted past this size (~2,000 reads)
ACCESS_MAX_ENTRIES = 1000  # handles the compacted access log remembers (highest frecency)
HALF_LIFE_SECONDS = 7 * 24 * 3600  # of frecency
_LAMBDA = math.log(2) / HALF_LIFE_SECONDS


def frecency(count: int, last: float, now: float) -> float:
    """``(count + 1) x e^(-lambda age)`` of a handle read COUNT times, last at LAST."""
    return (count + 1) * math.exp(-_LAMBDA * max(0.0, now - last))


def access_line(session: str, name: str, when: float, count: int) -> bytes:
    """One line of the access log."""
    import orjson

    return orjson.dumps({"s": session, "n": name, "t": when, "c": count}) + b"\n"


def record_access(store: StoreRoot, session: str, name: str, when: float | None) -> None:
    """Append one access record (best effort: a read-only store just is not logged)."""
    line = access_line(session, name, round(when or time.time(), 3), 1)
    try:
        if not store.root.is_dir():
            return
        with disk.lock(store.root):  # (a link there is not followed: nothing is logged)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(store.access_log, flags, 0o600)
            try:
                os.write(fd, line)
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
        if size > ACCESS_COMPACT_BYTES:
            compact_access(store)
    except (OSError, StoreError):
        return


def access_stats(store: StoreRoot, with_times: bool = False) -> dict:
    """(session, name) -> (read count, last read time) from the access log; WITH_TIMES:
    -> [(time, count), ...] of each record instead."""
    import orjson

    stats: dict = {}
    try:
        data = disk.read_file(store.access_log)  # (not through a link)
    except OSError:
        return stats
    for raw in data.splitlines():
        try:
            rec = orjson.loads(raw)
            key = (str(rec["s"]), str(rec["n"]))
            c, t = int(rec.get("c", 1)), float(rec["t"])
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a torn or foreign line: skip it
        if not math.isfinite(t):
            continue
        if with_times:
            stats.setdefault(key, []).append((t, c))
            continue
        old = stats.get(key)
        stats[key] = (c, t) if old is None else (old[0] + c, max(old[1], t))
    return stats


def _reads_since(times: list[tuple[float, int]], created: float) -> tuple[int, float] | None:
    """(count, last time) of the reads in TIMES logged since CREATED; None: there are none."""
    valid = [(t, c) for t, c in times if t >= created]
    if not valid:
        return None
    return sum(c for _t, c in valid), max(t for t, _c in valid)


def compact_access(store: StoreRoot, keep: set[tuple[str, str]] | None = None) -> None:
    """Compact the access log under the exclusive lock (see ``compact_access_locked``)."""
    with disk.lock(store.root, exclusive=True):
        compact_access_locked(store, keep)


def compact_access_locked(
    store: StoreRoot, keep: set[tuple[str, str]] | None, now: float | None = None
) -> None:
    """Rewrite the access log as one record per handle (only KEEP's, when given), at most
    ACCESS_MAX_ENTRIES of them: the lowest frecency goes first. Reads logged before a
    handle's current card was written (an earlier version of the name) are dropped."""
    now = time.time() if now is None else now
    created = {
        (r["session_id"], r["name"]): float(r.get("created_at", 0.0)) for r in store.records()
    }
    rows = []
    for key, times in access_stats(store, with_times=True).items():
        if key not in created or (keep is not None and key not in keep):
            continue
        reads = _reads_since(times, created[key])
        if reads is not None:
            c, t = reads
            rows.append((key, c, t, frecency(c, t, now)))
    if len(rows) > ACCESS_MAX_ENTRIES:
        rows.sort(key=lambda r: (-r[3], r[0]))
        rows = rows[:ACCESS_MAX_ENTRIES]
    lines = [access_line(s, n, t, c) for (s, n), c, t, _f in sorted(rows)]
    try:
        replace_file(store.access_log, b"".join(lines))
    except OSError as exc:
        raise disk.store_error(store.root, exc, "compact the access log") from exc


def entries(
    store: StoreRoot,
    session: str | None,
    now: float | None,
    damaged: list[tuple[str, str, str | None]] | None,
) -> list[dict]:
    """Cards with their access figures: id, size_bytes, last_accessed_at, access_count,
    frecency -- highest frecency first (ties: by id).

    Reads logged before the card was written belong to an earlier version of the name
    (re-stashed): they do not count. DAMAGED collects the cards skipped (``records``).
    """
    store.check_root()
    now = time.time() if now is None else now
    stats = access_stats(store, with_times=True)
    out = []
    for rec in store.records(session, damaged):
        key = (rec["session_id"], rec["name"])
        created = float(rec.get("created_at", 0.0))
        count, last = _reads_since(stats.get(key, []), created) or (0, 0.0)
        last = max(last, created)
        out.append(
            {
                "id": f"{key[0]}/{key[1]}",
                "size_bytes": int(rec.get("bytes", 0)),
                "last_accessed_at": last,
                "access_count": count,
                "frecency": frecency(count, last, now),
                "card": public_card(rec),
            }
        )
    out.sort(key=lambda e: (-e["frecency"], e["id"]))
    return out
