"""A pack's repo map, built in a forked child while the pack reads its files.

The map (listing's candidates scanned or looked up in the scan cache, ranked toward the
task, fitted) and the files section need little of each other: the files are read and
judged without the map, ranked with its definitions (known once the map's files are
scanned), and fitted with its ranks and text. On a tree of thousands of files each side is
a few hundred milliseconds of one CPU, so with a second CPU the map is built beside the
pack (``MapJob``): the child posts the definitions as soon as it has scanned, then ranks,
and the pack waits only for what it needs when it needs it. The child keeps the map's
ranking, and fits it to another budget when the pack asks (``MapJob.text``).

What crosses the pipe: each file's definitions as a ``marshal`` blob (decoded only for the
files the pack ranks, a few hundred of thousands: ``Definitions``) with the globs of the
user's filter the map's listing used; then the files' ranks and the map's text at
``MAP_TOKENS``; or a failure's message. The map is the one building it here gives (the
same function, on the same listing, with the same ruler), and so is the pack. Anything
unexpected from the child (it died, it raised what the map never raises) makes the map be
built here after all, as it was before. (One difference: a map that fails after its scan,
in the ranking, is said among the notes after the files' notes, not before.)
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Iterator, Mapping

PARALLEL_MIN = 500  # candidate files below which the map is built in this process


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def wanted(req, candidates: int) -> bool:
    """Whether REQ's map is worth a child: the map is asked for, --jobs allows a second
    process, the tree is big enough for the fork to pay and a second CPU can run it (unless
    --jobs asked for two or more), and this is the main thread (ctx-mcp packs in worker
    threads, beside others: a process is not forked from there)."""
    import threading

    jobs = getattr(req, "jobs", None)
    if not req.use_map or jobs == 1 or not hasattr(os, "fork"):
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    return jobs is not None or (candidates >= PARALLEL_MIN and cpus() > 1)


class MapJob:
    """The map of ROOT (real path) for QUERY and FOCUS (absolute paths), as ``MapState``
    builds it, under way in a child (``ctxtools.forked.Background``). The child posts the
    definitions as soon as the files are scanned (``scanned``), then the ranks and the
    text (``result``): the pack ranks its files while the map is still ranked."""

    def __init__(self, req, root: str, ruler, query, focus: list[str], path_filter, tokens: int):
        from ctxtools.forked import Background

        self.focus = list(focus)
        self.path_filter = path_filter
        self.tokens = tokens

        def start(post, heard):
            args = (req, root, ruler, query, self.focus, path_filter, tokens)
            return _build_in_child(post, heard, *args)

        self._job = Background(start, _refit_in_child(ruler))
        self._looked = False  # the pack's files past the map's cut asked for (once)
        self._listening = False  # the child waits to hear them (its map was cut short)

    def scanned(self) -> tuple:
        """("scanned", Definitions, the filter's globs the map's listing used), or
        ("failed", message) or ("resource", message); raises ``RuntimeError`` (or what the
        child raised) when the map must be built here instead."""
        value = self._job.receive()
        if value[0] == "scanned":
            self._listening = value[3]
            return ("scanned", Definitions(value[1]), value[2])
        return value

    def result(self) -> tuple:
        """("ok", ranks, text) or ("failed"/"resource", message), after ``scanned``."""
        if self._listening and not self._looked:
            self.look_up([])  # (the child waits to hear it before it ranks)
        return self._job.receive()

    def look_up(self, asked: list[tuple]) -> dict[str, tuple | None] | None:
        """rel -> definitions (or None) of each file ASKED, (rel, path, stat), as the child
        finds it in the scan cache it loaded (``pack.choose._cached_defs``); asked once,
        after ``scanned`` and before the child ranks, when its map was cut short (else the
        child ranks at once); None when the child cannot answer (the pack then opens the
        scan cache itself)."""
        if self._looked or not self._listening:  # (a map not cut short scanned them all:
            self._looked = True  # one the pack has and the map has not is looked up here)
            return {} if not asked else None
        self._looked = True
        try:
            self._job.tell(asked)
            _tag, blobs = self._job.receive()
        except Exception:  # the child died: what comes next says so
            return None
        if blobs is None:
            return None
        make = _definition()
        return {
            rel: None if b is None else tuple(map(make, marshal.loads(b)))
            for rel, b in blobs.items()
        }

    def text(self, tokens: int) -> tuple[str, str]:
        """("ok", the map fitted to TOKENS) or ("failed"/"resource", message)."""
        return self._job.ask(("fit", tokens))

    def close(self) -> None:
        self._job.close()


def _build_in_child(post, heard, req, root, ruler, query, focus, path_filter, tokens):
    """In the child: the map built as ``MapState`` builds it; once its files are scanned,
    their definitions posted, then the pack's files past the map's cut looked up in the
    scan cache (when the pack has said which: ``MapJob.look_up``), then its ranks and text
    (or a failure); the map's ranking and scan cache kept for requests."""
    from ctxtools.errors import CtxError, ResourceError
    from ctxtools.repomap.core import build_map

    def scanned(ss) -> None:
        blobs = {s.rel: marshal.dumps(tuple(map(tuple, s.defs))) for s in ss.scans}
        used = sorted(path_filter.used) if path_filter is not None else []
        listening = bool(ss.truncated)  # (only a map cut short leaves files to look up)
        post(("scanned", blobs, used, listening))
        if listening:
            post(("defs", _defs_in_child(ss.cache, heard() or [])))
        ss.cache = None  # (nothing after the lookups needs it: let go before the ranking)

    try:
        m = build_map(
            root,
            tokens=tokens,
            focus=[p for p in focus if os.path.exists(p)],
            query=query,
            ruler=ruler,
            store=req.store,
            keep=True,
            path_filter=path_filter,
            scanned=scanned,
        )
    except ResourceError as exc:
        post(("resource", str(exc)))
        return None
    except (CtxError, OSError) as exc:
        post(("failed", str(exc)))
        return None
    post(("ok", {f.rel: f.rank for f in m.files}, m.text))
    refit = m.refit
    del m
    _give_back()
    return refit


def _give_back() -> None:
    """In the child, idle from now on but for refits: what the map's build left (the
    scans, the graph) freed and handed back to the system, for the rest of the pack's run."""
    import gc

    gc.collect()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None)
            if hasattr(libc, "malloc_trim"):
                libc.malloc_trim(0)
        except (OSError, AttributeError, ImportError):
            pass


def _refit_in_child(ruler):
    """In the child, the answer to a request ("fit", tokens): the map fitted to another
    budget."""

    def serve(state, request):
        from ctxtools.errors import CtxError, ResourceError
        from ctxtools.repomap.core import refit_map

        try:
            return ("ok", refit_map(state, request[1], ruler))
        except ResourceError as exc:
            return ("resource", str(exc))
        except (CtxError, OSError) as exc:
            return ("failed", str(exc))

    return serve


def _defs_in_child(cache, asked) -> dict[str, bytes | None] | None:
    """What ``pack.choose._cached_defs`` gives for each file ASKED, from the child's scan
    cache (saved after, as the pack saves it), as marshal blobs; None without a cache."""
    if cache is None:
        return None
    from ctxtools.fsutil import read_whole
    from ctxtools.pack.choose import _cached_defs, _keep_scans

    out: dict[str, bytes | None] = {}
    for rel, path, stat in asked:
        try:
            data = read_whole(path)
        except OSError:
            out[rel] = None  # (the pack scans the bytes it holds)
            continue
        defs = _cached_defs(cache, rel, path, data, stat)
        out[rel] = None if defs is None else marshal.dumps(tuple(map(tuple, defs)))
    _keep_scans(cache)
    return out


def _definition():
    """A plain tuple made a ``scan.Definition`` record, as the scan cache makes them."""
    import functools

    from ctxtools.source.scan.common import Definition

    return functools.partial(tuple.__new__, Definition)


class LazyRanks(Mapping):
    """rel -> the map's rank, asked of LOAD (``MapState.ranks``) when first looked up: the
    pack ranks its files without them unless nothing in the task reaches a file."""

    def __init__(self, load):
        self._load = load
        self._ranks: Mapping[str, float] | None = None

    def _got(self) -> Mapping[str, float]:
        if self._ranks is None:
            self._ranks = self._load()
        return self._ranks

    def __getitem__(self, rel: str) -> float:
        return self._got()[rel]

    def get(self, rel: str, default=None):  # (the dict's own: a file's rank is asked often)
        return self._got().get(rel, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._got())

    def __len__(self) -> int:
        return len(self._got())


class Definitions(Mapping):
    """rel -> the file's definitions (``scan.Definition`` records), decoded from the
    child's blobs when first asked for."""

    def __init__(self, blobs: dict[str, bytes]):
        self._blobs = blobs
        self._decoded: dict[str, tuple] = {}

    def __getitem__(self, rel: str) -> tuple:
        got = self._decoded.get(rel)
        if got is None:
            got = self._decoded[rel] = tuple(map(_definition(), marshal.loads(self._blobs[rel])))
        return got

    def __contains__(self, rel: object) -> bool:
        return rel in self._blobs

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)


def expected_focus(gather) -> tuple[list[str], list[str]]:
    """(named, the pack's labels) as ``load_entries`` leaves them when it leaves every
    candidate of GATHER in: what the map's focus is decided from before the files are
    checked. (The pack compares the focus it then has with the job's, and builds the map
    here if they differ: a named file left out as a secret, say.)"""
    every = {**gather.entries, **gather.handles}
    named = sorted(label for label, e in every.items() if e.named)
    rels = [label for label in sorted(gather.entries) if _packed(gather.entries[label])]
    return named, rels


def _packed(e) -> bool:
    return e.path is not None or e.deleted
