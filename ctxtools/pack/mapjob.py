"""A pack's repo map, built in a forked child while the pack reads its files.

The map (listing's candidates scanned or looked up in the scan cache, ranked toward the
task, fitted) and the files section need little of each other: the files are read and
judged without the map, ranked with its definitions (known once the map's files are
scanned), and fitted with its ranks and text. On a tree of thousands of files each side is
a few hundred milliseconds of one CPU, so with a second CPU the map is built beside the
pack (``MapJob``): the child posts the definitions as soon as it has scanned, then ranks,
and the pack waits only for what it needs when it needs it. The child then ends: a forked
process idle beside the pack would keep the old copy of every page the pack has written to
since the fork. A tree whose map is cut short (--max-files) keeps the map in the pack's
process unless --jobs asks otherwise (``cut_short``: two large processes at once).

What crosses the pipe: each file's definitions as a ``marshal`` blob (decoded only for the
files the pack ranks, a few hundred of thousands: ``Definitions``) with the globs of the
user's filter the map's listing used (and, for a map cut short, those of the files past
the cut, looked up in the child's scan cache); then the files' ranks and the map's text at
``MAP_TOKENS``; then the head of the ranking that a fit in fewer tokens reads (the pack fits
the map to what its files leave itself: ``Refit.upto``); or a failure's message. The map is
the one building it here gives (the same function, on the same listing, with the same
ruler), and so is the pack. Anything unexpected from the child (it died, it raised what the
map never raises) makes the map be built here after all, as it was before. (One
difference: a map that fails after its scan, in the ranking, is said among the notes after
the files' notes, not before.)
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Iterator, Mapping

PARALLEL_MIN = 500  # candidate files below which the map is built in this process


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def wanted(req, labels) -> bool:
    """Whether REQ's map is worth a child, LABELS being the pack's candidate files: the map
    is asked for, --jobs allows a second process, and, unless --jobs asked for two or more,
    the tree is big enough for the fork to pay, not so big that the map is cut short
    (``cut_short``), and a second CPU can run it; and this is the main thread (ctx-mcp packs
    in worker threads, beside others: a process is not forked from there)."""
    import threading

    jobs = getattr(req, "jobs", None)
    if not req.use_map or jobs == 1 or not hasattr(os, "fork"):
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    if jobs is not None:
        return True
    return len(labels) >= PARALLEL_MIN and cpus() > 1 and not cut_short(labels)


def cut_short(labels) -> bool:
    """Whether the map leaves some of LABELS out (more files it would scan than its
    --max-files default). Two processes then cost more memory than one: both are large
    (kafka, 5,860 such files: 230-300 MB together against 160-190 MB in one process),
    the child's ranking lasts while the pack reads and ranks its files, and it must look up
    in its scan cache the files past the cut the pack may rank."""
    from ctxtools.source.listing import is_manifest
    from ctxtools.source.scan import language_for
    from ctxtools.source.scanset import MAX_FILES

    if len(labels) <= MAX_FILES:
        return False
    return sum(1 for rel in labels if language_for(rel) or is_manifest(rel)) > MAX_FILES


class MapJob:
    """The map of ROOT (real path) for QUERY and FOCUS (absolute paths), as ``MapState``
    builds it, under way in a child (``ctxtools.forked.Background``). The child posts the
    definitions as soon as the files are scanned (``scanned``), then the ranks, the text
    and what refits need (``result``): the pack ranks its files while the map is still
    ranked."""

    def __init__(self, req, root: str, ruler, query, focus: list[str], path_filter, tokens: int):
        from ctxtools.forked import Background

        self.focus = list(focus)
        self.path_filter = path_filter

        def start(post):
            _build_in_child(post, req, root, ruler, query, self.focus, path_filter, tokens)

        self._job = Background(start)  # (it ends once it has posted all)
        self._cut = False  # its map was cut short (--max-files): it posts the files past
        self._past: tuple | None = None  # (those files' definitions,) once read
        self._outcome: tuple | None = None  # its ranks (or failure), once read
        self._head = None  # the head of its ranking (``Refit.upto``), once read

    def scanned(self) -> tuple:
        """("scanned", Definitions, the filter's globs the map's listing used), or
        ("failed", message) or ("resource", message); raises ``RuntimeError`` (or what the
        child raised) when the map must be built here instead."""
        value = self._job.receive()
        if value[0] == "scanned":
            self._cut = value[3]
            return ("scanned", Definitions(value[1]), value[2])
        return value

    def result(self) -> tuple:
        """("ok", ranks, text) or ("failed"/"resource", message), after ``scanned``."""
        if self._cut and self._past is None:
            self._past_cut()  # (posted before)
        if self._outcome is None:
            self._outcome = self._job.receive()
        return self._outcome

    def head(self):
        """What fitting the map to fewer tokens needs (a ``repomap.core.Refit``), after an
        "ok" ``result``; raises what ``result`` raises when the child cannot give it."""
        if self._head is None:
            self._head = self._job.receive()[1]
        return self._head

    def look_up(self, asked: list[tuple]) -> dict[str, tuple | None] | None:
        """rel -> definitions (or None) of each file ASKED, (rel, path, stat), as the child
        found it in the scan cache it loaded (``_past_the_cut``: the files past its map's
        cut); None when the child did not look one of them up (the pack then opens the scan
        cache itself)."""
        if not self._cut:  # (a map not cut short scanned them all: one the pack has and
            return {} if not asked else None  # the map has not is looked up here)
        try:
            blobs = self._past_cut()
        except Exception:  # the child died: what comes next says so
            return None
        if blobs is None or any(rel not in blobs for rel, _path, _stat in asked):
            return None
        make = _definition()
        return {
            rel: None if blobs[rel] is None else tuple(map(make, marshal.loads(blobs[rel])))
            for rel, _path, _stat in asked
        }

    def _past_cut(self) -> dict | None:
        if self._past is None:
            self._past = (self._job.receive()[1],)
        return self._past[0]

    def close(self) -> None:
        self._job.close()


def _build_in_child(post, req, root, ruler, query, focus, path_filter, tokens):
    """In the child: the map built as ``MapState`` builds it; once its files are scanned,
    their definitions posted (with, when the map was cut short, those of the files past the
    cut: ``_past_the_cut``); then its ranks and text (or a failure), then the head of its
    ranking that fits in fewer tokens need. Then the child ends: it holds nothing the pack
    needs, and a forked process idle beside the pack keeps the old copy of every page the
    pack has written to since the fork (kafka: 60-70 MB)."""
    from ctxtools.errors import CtxError, ResourceError
    from ctxtools.repomap.core import build_map

    def scanned(ss, listing) -> None:
        blobs = {s.rel: marshal.dumps(tuple(map(tuple, s.defs))) for s in ss.scans}
        used = sorted(path_filter.used) if path_filter is not None else []
        post(("scanned", blobs, used, bool(ss.truncated)))
        if ss.truncated:
            post(("defs", _past_the_cut(ss.cache, listing, set(blobs))))
        ss.cache = None  # (nothing after needs it: let go before the ranking)

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
        return
    except (CtxError, OSError) as exc:
        post(("failed", str(exc)))
        return
    post(("ok", {f.rel: f.rank for f in m.files}, m.text))
    post(("head", m.refit.upto(tokens)))  # (made after the ranks: the pack may wait)


def _past_the_cut(cache, listing, mapped: set[str]) -> dict[str, bytes | None] | None:
    """What ``pack.choose._cached_defs`` gives for each listed file with a scanner past the
    map's --max-files cut (the pack ranks some of them: those the task reaches, known only
    once it has read its files), from the child's scan cache (a file it does not hold is
    scanned and kept: the next pack finds it), as marshal blobs; None without a cache."""
    if cache is None:
        return None
    from ctxtools.fsutil import read_whole
    from ctxtools.pack.choose import _cached_defs, _keep_scans
    from ctxtools.repomap.core import MAX_FILE_SIZE
    from ctxtools.source.scan import language_for

    out: dict[str, bytes | None] = {}
    for c in listing.candidates:
        if c.rel in mapped or c.manifest or c.size > MAX_FILE_SIZE or not language_for(c.rel):
            continue
        try:
            data = read_whole(c.path)
        except OSError:
            continue  # (the pack scans the bytes it holds)
        defs = _cached_defs(cache, c.rel, c.path, data, (c.size, c.mtime_ns, c.ctime_ns))
        out[c.rel] = None if defs is None else marshal.dumps(tuple(map(tuple, defs)))
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
