"""``scan_repository``: the files of a repository read and scanned, through the scan cache.

List (``listing``), then for each candidate: the scan cache's entry when the stat matches,
else the file is read and hashed (an unchanged hash keeps the entry), else it is scanned
(``scan``). Files that certainly need scanning are scanned first on worker processes when
there are many. The result is a ``ScanSet``: the scans in path order and what happened.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from ctxtools import defaults
from ctxtools.errors import InputError, ResourceError
from ctxtools.fsutil import check_cwd, check_resource, read_at_most
from ctxtools.source import listing as listmod
from ctxtools.source.classify import content_noise
from ctxtools.source.scan.common import Definition

MAX_FILES = defaults.MAP_MAX_FILES
MAX_FILE_SIZE = 512 * 1024
PARALLEL_MIN = 256  # files to scan before worker processes pay for themselves
MAX_WORKERS = 4
CHUNK = 16  # files a worker scans at a time

Progress = Callable[[int, int], None]


@dataclass(slots=True)
class FileScan:
    """One file as scanning found it, flattened to plain values: what a ``ScanSet`` holds
    and the map's graph reads (the references as two tuples: far smaller than a dict)."""

    rel: str
    language: str | None
    defs: tuple = ()  # scan.Definition records
    ref_names: tuple = ()  # identifiers used ...
    ref_counts: tuple = ()  # ... and how often (two tuples: far smaller than a dict)
    imports: tuple = ()
    manifest: bool = False

    @classmethod
    def from_result(cls, rel: str, result) -> FileScan:
        """A FileScan from a scanner's ScanResult."""
        refs = result.references
        return cls(
            rel,
            result.language,
            tuple(result.definitions),
            tuple(refs),
            tuple(refs.values()),
            tuple(result.imports),
        )


@dataclass
class ScanSet:
    """The scanned files of a repository, in path order, and what happened on the way."""

    root: str
    via: str
    scans: list[FileScan]  # emptied by build_map once ranked (memory)
    skipped: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    truncated: bool = False
    candidates: int = 0  # files that could have been mapped (before --max-files)
    scanned: int = 0  # files read and scanned in this run (cache misses)
    cache_path: str | None = None
    # Per scan, the content hash the scan cache holds for it (0 for a manifest); None
    # without the cache. Equal hashes mean equal scans: what the graph memo goes by.
    digests: list[int] | None = None
    # What the scan cache held before for the files scanned anew (``scancache.CacheEntry``).
    replaced: dict = field(default_factory=dict)
    # The scan cache, loaded and saved, when the caller looks up more in it next
    # (``scan_repository(keep_cache=True)``: ctx-pack's files section, not loading it again)
    cache: object = None

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def list_repository(root: str, names: list[str] | None = None, path_filter=None) -> listmod.Listing:
    """The files of ROOT that may go on the map, or of NAMES under it (``listing.list_files``),
    less what PATH_FILTER excludes (default: ROOT's .ctxignore, ``pathfilter.load_filter``)."""
    from ctxtools.pathfilter import load_filter
    from ctxtools.quoting import quote_name
    from ctxtools.source.scan import language_for

    check_cwd(root)
    if not os.path.isdir(root):
        shown = quote_name(root)
        if os.path.exists(root):
            raise InputError(f"{shown}: not a directory", hint="give the repository's directory")
        raise InputError(f"{shown}: no such directory")
    if path_filter is None:
        path_filter = load_filter(root)
    return listmod.list_files(
        root, language_for, scripts=True, names=names, path_filter=path_filter
    )


def scan_payload(rel: str, data: bytes):
    """What the cache stores for a file's content: a skip reason, None, or the scan
    (a ``scancache.ScanPayload``)."""
    return _shared(_raw_payload(rel, data))


def _raw_payload(rel: str, data: bytes):
    """``scan_payload`` before ``_shared``: the scan's definitions as plain tuples and its
    strings as the scanner made them (what a worker process sends back)."""
    reason = content_noise(data)
    if reason is not None:
        return reason
    from ctxtools.source.scan import scan_source

    result = scan_source(rel, data.decode("utf-8", "replace"))
    if result is None:
        return None
    refs = result.references
    defs = tuple(map(tuple, result.definitions))
    return (result.language, defs, tuple(refs), tuple(refs.values()), tuple(result.imports))


def _scan_file(job: tuple) -> tuple:
    """In a worker process: (rel, status, size, digest, raw payload) for one file."""
    rel, path, limit, want_digest, _size = job
    try:
        with open(path, "rb") as fh:
            data = read_at_most(fh, limit + 1)
    except OSError as exc:
        check_resource(exc, path)  # raised in the parent by the pool
        return (rel, "unreadable", 0, 0, None)
    if len(data) > limit:
        return (rel, "too large", 0, 0, None)
    if want_digest:
        from ctxtools.source.scancache import content_hash

        digest = content_hash(data)
    else:
        digest = 0
    return (rel, "ok", len(data), digest, _raw_payload(rel, data))


def _shared(payload: object):
    """A raw payload (``_raw_payload``, maybe from another process) as a ``ScanPayload``
    whose names are the shared strings ``sys.intern`` keeps: one string object per
    identifier across all files, which marshal then writes once (a small cache) and loads
    once (a small heap)."""
    from ctxtools.source.scancache import ScanPayload

    if not isinstance(payload, tuple):
        return payload
    intern = sys.intern
    language, defs, names, counts, imports = payload
    defs = tuple(map(_interned, defs))
    names = tuple(map(intern, names))
    return ScanPayload(intern(language), defs, names, counts, tuple(map(intern, imports)))


def _interned(d: tuple) -> Definition:
    """The Definition of D (one, or its plain tuple) with its kind, name and scope as the
    shared strings ``sys.intern`` keeps."""
    intern = sys.intern
    kind, name, line, signature, scope, end_line = d
    scope = intern(scope) if scope else None
    return _definition((intern(kind), intern(name), line, signature, scope, end_line))


# A Definition from its six fields (tuple.__new__: no per-field call of the generated one)
_definition = functools.partial(tuple.__new__, Definition)


def _prescan(
    candidates, cache, max_files, max_file_size, progress, meanwhile=None
) -> dict[str, tuple]:
    """Scan, on several processes, the files that certainly need it: no cache entry of
    the same size (a same-size entry may be a mere touch, which the hash settles without a
    scan), among the first MAX_FILES candidates: those are looked at whatever --max-files
    cuts (a candidate can only add one scan to those kept before it), so no file is
    scanned in vain. MEANWHILE is called once the workers run. Returns
    rel -> (status, size, digest, payload)."""
    cpus = os.cpu_count() or 1
    if cpus < 2:
        return {}
    jobs = []
    for cand in candidates[:max_files]:
        if cand.manifest or cand.size > max_file_size:
            continue
        if cache is not None:
            entry = cache.entries.get(cand.rel)
            if entry is not None and entry.size == cand.size:
                continue
        jobs.append((cand.rel, cand.path, max_file_size, cache is not None, cand.size))
    if len(jobs) < PARALLEL_MIN:
        return {}
    from ctxtools.forked import forked_results

    # The dearest first, dealt out in small chunks: the processes end at about the same
    # time (the results are keyed by path, so their order does not matter)
    jobs.sort(key=_cost, reverse=True)
    from ctxtools.source.scan import language_for, preload

    preload(language_for(job[0]) for job in jobs)  # (once here, not once a process)
    out: dict[str, tuple] = {}
    workers = _workers(cpus)
    jobs = _dealt(jobs, workers, cpus)
    results = forked_results(_scan_file, jobs, workers, chunk=CHUNK, started=meanwhile)
    try:
        for n, (rel, status, size, digest, payload) in enumerate(results):
            out[rel] = (status, size, digest, _shared(payload))
            if progress is not None and n % 64 == 0:
                progress(n, len(candidates))
    except ResourceError:
        raise  # a file the limit kept from being read: an error, not a skip
    except Exception:  # no processes to be had: go serial
        return {}
    finally:
        results.close()  # no worker left running, whatever ended the loop
    return out


def _cost(job: tuple) -> int:
    """What scanning a job's file costs, roughly: its size, thrice for a grammar's parse
    (tree-sitter reads a byte about three times slower than a hand-written scanner)."""
    from ctxtools.source.scan import language_for
    from ctxtools.source.scan.languages import TREE_SITTER

    rel, _path, _limit, _digest, size = job
    return size * 3 if language_for(rel) in TREE_SITTER else size


def _dealt(jobs: list, processes: int, cpus: int) -> list:
    """JOBS (dearest first) ordered for ``forked_results``, which cuts them into chunks of
    CHUNK and deals chunk n to process n % PROCESSES, this one being process 0. With more
    processes than CPUs, this one (which also gathers every result, and does the caller's
    other work meanwhile) is dealt the cheapest whole chunks and the children the dearest,
    still dearest first: the system shares the CPUs out between the processes, and the
    children get this one's share once it has nothing left to scan. The few jobs past the
    last whole chunk stay last. Otherwise JOBS as they are."""
    whole = len(jobs) // CHUNK
    rest = jobs[whole * CHUNK :]
    processes = min(processes, whole + (1 if rest else 0))
    if processes <= max(cpus, 1):
        return jobs
    chunks = [jobs[i * CHUNK : (i + 1) * CHUNK] for i in range(whole)]
    mine = len(range(0, whole, processes))  # the whole chunks process 0 is dealt
    cheap = iter(chunks[whole - mine :])
    dear = iter(chunks[: whole - mine])
    out = []
    for n in range(whole):
        out.extend(next(cheap) if n % processes == 0 else next(dear))
    out.extend(rest)
    return out


def _workers(cpus: int) -> int:
    """Processes for a parallel scan: one more than the CPUs (up to MAX_WORKERS), since
    this one also gathers every result; the system shares the CPUs out between them."""
    return min(cpus + 1, MAX_WORKERS)


def _read_and_scan(cand, cache, ss: ScanSet, max_file_size: int):
    """The payload of one candidate the cache could not answer by its stat: from its
    content's hash when only its stamp changed, else scanned (a str: why it was skipped)."""
    try:
        with open(cand.path, "rb") as fh:
            data = read_at_most(fh, max_file_size + 1)
    except OSError as exc:
        check_resource(exc, cand.path)
        return "unreadable"
    if len(data) > max_file_size:
        return "too large"
    digest = 0
    if cache is not None:
        from ctxtools.source.scancache import content_hash

        digest = content_hash(data)
        entry = cache.get_by_hash(cand.rel, cand.size, cand.stamp, digest)
        if entry is not None:
            return entry.payload
    payload = scan_payload(cand.rel, data)
    ss.scanned += 1
    if cache is not None:
        cache.put(cand.rel, len(data), cand.stamp, digest, payload)
    return payload


def _payload_for(cand, cache, prescanned: dict, ss: ScanSet, max_file_size: int):
    """A candidate's payload: from the cache, from the workers' prescan, or read now."""
    if cache is not None:
        entry = cache.get(cand.rel, cand.size, cand.stamp)
        if entry is not None:
            return entry.payload
    done = prescanned.pop(cand.rel, None)
    if done is None:
        return _read_and_scan(cand, cache, ss, max_file_size)
    status, size, digest, payload = done
    if status != "ok":
        return status
    ss.scanned += 1
    if cache is not None:
        cache.put(cand.rel, size, cand.stamp, digest, payload)
    return payload


def _scan_candidates(
    candidates, cache, ss: ScanSet, max_files, max_file_size, progress, meanwhile=None
):
    """The scans of CANDIDATES, in their order, up to MAX_FILES (ss.truncated past it)."""
    total = len(candidates)
    prescanned = _prescan(candidates, cache, max_files, max_file_size, progress, meanwhile)
    parallel = bool(prescanned)
    kept: list[FileScan] = []
    for n, cand in enumerate(candidates):
        if len(kept) >= max_files:
            ss.truncated = True
            break
        if progress is not None and n % 64 == 0 and not parallel:
            progress(n, total)  # (after a parallel scan, the work left is lookups only)
        if cand.manifest:
            kept.append(FileScan(cand.rel, None, manifest=True))
            continue
        if cand.size > max_file_size:
            ss.skip("too large")
            continue
        payload = _payload_for(cand, cache, prescanned, ss, max_file_size)
        if isinstance(payload, str):
            ss.skip(payload)
        elif payload is not None:
            kept.append(FileScan(cand.rel, *payload))
    if progress is not None:
        progress(total, total)
    return kept


def open_cache(root: str, store):
    """ROOT's scan cache in STORE, loaded."""
    from ctxtools.config import store_root
    from ctxtools.source.scancache import ScanCache, cache_path, scanner_fingerprint

    cache = ScanCache(cache_path(store_root(store), root), root, scanner_fingerprint())
    cache.load()
    return cache


def _close_cache(cache, ss: ScanSet, candidates) -> None:
    """Save the cache, and give SS what the graph memo needs from it."""
    if ss.truncated:  # keep the entries of files past the cut, they are not stale
        cache.keep(c.rel for c in candidates)
    cache.save()
    ss.notes.extend(cache.notes)
    entries = cache.entries
    ss.digests = [0 if s.manifest else entries[s.rel].digest for s in ss.scans]
    ss.replaced = dict(cache.replaced)


def scan_repository(
    root: str,
    *,
    use_cache: bool = True,
    store: str | os.PathLike | None = None,
    max_files: int = MAX_FILES,
    max_file_size: int = MAX_FILE_SIZE,
    progress: Progress | None = None,
    listing: listmod.Listing | None = None,
    meanwhile: Callable[[], None] | None = None,
    keep_cache: bool = False,
    scanned: Callable[[ScanSet], None] | None = None,
) -> ScanSet:
    """List (unless LISTING is given), read where the cache cannot answer, and scan the
    files of ROOT. MEANWHILE, when given, is called while worker processes scan (if any
    do): work of the caller's that overlaps theirs. KEEP_CACHE: the scan cache, saved,
    stays in the result (``ScanSet.cache``) for a caller that looks up more files in it.
    SCANNED(ScanSet), when given, is called once the files are scanned, before the scan
    cache is written (ctx-pack's map child: the pack waits for the definitions, not for
    the write, 0.1 s of a Django pack on an empty store) -- after it when the scan was cut
    short (--max-files: the callback looks up and keeps more files in the cache first);
    ``ScanSet.cache`` is the cache then (with KEEP_CACHE), and stays None if it let go."""
    if listing is None:
        listing = list_repository(root)
    ss = ScanSet(root, listing.via, [], dict(listing.skipped))
    cache = open_cache(root, store) if use_cache else None
    if cache is not None:
        ss.cache_path = str(cache.path)
    candidates = listing.candidates
    kept = _scan_candidates(candidates, cache, ss, max_files, max_file_size, progress, meanwhile)
    total = len(candidates)
    ss.candidates = total - sum(1 for c in candidates if c.size > max_file_size)
    kept.sort(key=lambda s: s.rel)
    ss.scans = kept
    if scanned is not None and not ss.truncated:
        keep_cache = _told(scanned, ss, cache if keep_cache else None)
    if cache is not None:
        _close_cache(cache, ss, candidates)
        if keep_cache:
            ss.cache = cache
    if scanned is not None and ss.truncated:
        _told(scanned, ss, ss.cache)
    if ss.truncated:
        ss.notes.append(
            f"truncated: mapped the first {max_files} of {ss.candidates} files "
            "(shallowest paths first; raise --max-files to map more)"
        )
    too_large = ss.skipped.get("too large", 0)
    if too_large:
        ss.notes.append(
            f"skipped {too_large} file(s) over {shown_size(max_file_size)}"
            " (generated or data; raise --max-file-size to map them)"
        )
    from ctxtools.source.scan import grammar_note

    note = grammar_note({s.language for s in kept if s.language})
    if note:
        ss.notes.append(note)
    unreadable = ss.skipped.get("unreadable", 0)
    if unreadable:
        ss.notes.append(f"skipped {unreadable} unreadable file(s)")
    if not kept:
        # what was left out, when nothing is left: a tree of one minified or generated
        # file said "no source files to map" of a directory that plainly holds one
        said = {"too large", "unreadable"}  # (noted above)
        out = ", ".join(f"{n:,} {why}" for why, n in sorted(ss.skipped.items())
                        if n and why not in said)
        ss.notes.append("no source files to map" + (f" (left out: {out})" if out else ""))
    return ss


def _told(scanned, ss: ScanSet, cache) -> bool:
    """SCANNED(SS) called with SS's cache set to CACHE; whether SS keeps the cache after."""
    ss.cache = cache
    scanned(ss)
    return ss.cache is not None


def shown_size(size: int) -> str:
    """SIZE in bytes as a note shows it, exactly: in the largest binary unit that holds it
    with at most two decimals (``512 KiB``, ``1.5 KiB``, ``1 TiB``), else in bytes
    (``1,000 bytes``, ``1 byte``). ``size // 1024`` KiB said ``over 0 KiB`` for
    ``--max-file-size 1.5`` (1 byte) and ``over 1073741824 KiB`` for 1T."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size * 100 % (1 << shift) == 0:
            whole, cents = divmod(size * 100 >> shift, 100)
            return f"{whole:,}{f'.{cents:02d}'.rstrip('0') if cents else ''} {unit}"
    return f"{size:,} byte{'' if size == 1 else 's'}"
