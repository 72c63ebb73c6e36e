"""``build_map``: a ranked symbol map of a repository under a token budget.

The steps, each in its own module: ``files`` lists what to look at, ``cache`` remembers
what scanning found per file, the scanners (``scan``) find definitions and references,
``graph`` ranks files and definitions, ``render`` fits the map to the budget. This module
ties them together and is what ``ctx-repomap`` and ``ctx-pack`` call.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from ctxtools.errors import InputError, UsageError
from ctxtools.fsutil import json_text
from ctxtools.repomap import files as filesmod
from ctxtools.repomap.graph import FileScan

DEFAULT_TOKENS = 1000
MIN_TOKENS = 50
MAX_FILES = 4000
MAX_FILE_SIZE = 512 * 1024

Progress = Callable[[int, int], None]
_SYMBOL_LINE = re.compile(r"\d+:")
_CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type", "record"})


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
    # What the scan cache held before for the files scanned anew: rel -> (hash, payload).
    replaced: dict[str, tuple] = field(default_factory=dict)


@dataclass
class RepoMap:
    """The result of ``build_map``: the text, and everything ``--json`` shows."""

    root: str
    text: str
    tokens: int
    budget: int
    ruler: str
    exact: bool
    files: list  # list[render.RankedFile], in rank order
    shown_files: int
    shown_symbols: int
    edges: EdgeSummary | None
    scanset: ScanSet
    notes: list[str]
    from_memo: bool = False  # the text came from the result memo (files is then empty)

    def to_json(self) -> dict:
        """The --json document as a dict (see ``json_bytes`` for a leaner way to print it)."""
        doc = self._json_head()
        doc["files"] = [_file_json(f) for f in self.files]
        return doc

    def json_bytes(self) -> bytes:
        """The --json document: the same bytes as dumping ``to_json()`` with orjson."""
        return b"".join(self.iter_json())

    def iter_json(self):
        """The --json document in pieces, file by file, so that printing it never holds
        every definition as a dict (or the whole text) at once."""
        import orjson

        head = orjson.dumps(self._json_head())
        yield head[:-1] + b',"files":['
        for k, f in enumerate(self.files):
            piece = orjson.dumps(_file_json(f))
            yield b"," + piece if k else piece
        yield b"]}\n"

    def _json_head(self) -> dict:
        ss = self.scanset
        return {
            "root": json_text(self.root),
            "budget": self.budget,
            "tokens": self.tokens,
            "counter": self.ruler,
            "exact": self.exact,
            "files_listed_by": ss.via,
            "mapped_files": len(self.files),
            "candidates": ss.candidates,
            "truncated": ss.truncated,
            "skipped": dict(sorted(ss.skipped.items())),
            "shown": {"files": self.shown_files, "symbols": self.shown_symbols},
            "notes": [json_text(n) for n in self.notes],
            "map": json_text(self.text),
            "edges": self.edges.as_dict() if self.edges else None,
        }


def _file_json(f) -> dict:
    return {
        "path": json_text(f.rel),
        "rank": round(f.rank, 9),
        "language": f.language,
        "definitions": [
            {
                "kind": d[0],
                "name": d[1],
                "line": d[2],
                "end_line": d[5],
                "signature": d[3],
                "scope": d[4],
                "score": round(s, 9),
            }
            for d, s in zip(f.defs, f.scores, strict=True)
        ],
    }


def _scan_payload(rel: str, data: bytes) -> object:
    """What the cache stores for a file's content: a skip reason, None, or the scan."""
    from ctxtools.repomap.scan import scan_source

    reason = filesmod.classify(data)
    if reason is not None:
        return reason
    result = scan_source(rel, data.decode("utf-8", "replace"))
    if result is None:
        return None
    # Interned names: one string object per identifier across all files, which marshal
    # then writes once (a small cache) and loads once (a small heap).
    intern = sys.intern
    defs = tuple(
        (
            intern(d.kind),
            intern(d.name),
            d.line,
            d.signature,
            intern(d.scope) if d.scope else None,
            d.end_line,
        )
        for d in result.definitions
    )
    names = tuple(intern(k) for k in result.references)
    counts = tuple(result.references[k] for k in names)
    imports = tuple(intern(i) for i in result.imports)
    return (intern(result.language), defs, names, counts, imports)


def _valid_payload(payload: object) -> bool:
    """Whether a cached payload has the shape this version writes (else: scan again). The
    cache is checksummed and versioned, so the outer shape is all that needs checking."""
    if payload is None or type(payload) is str:
        return True
    return type(payload) is tuple and len(payload) == 5


def _to_scan(rel: str, payload: object, manifest: bool) -> FileScan | None:
    if isinstance(payload, tuple):
        language, defs, names, counts, imports = payload
        return FileScan(rel, language, defs, names, counts, imports)
    if manifest and payload is None:
        return FileScan(rel, None, manifest=True)
    return None


def list_repository(root: str) -> filesmod.Listing:
    """The files of ROOT that may go on the map (see ``files.list_files``)."""
    from ctxtools.repomap.scan import language_for

    if not os.path.isdir(root):
        if os.path.exists(root):
            raise InputError(f"{root}: not a directory", hint="give the repository's directory")
        raise InputError(f"{root}: no such directory")
    return filesmod.list_files(root, language_for)


PARALLEL_MIN = 256  # files to scan before worker processes pay for themselves
MAX_WORKERS = 4


def _scan_file(job: tuple) -> tuple:
    """In a worker process: (rel, status, size, digest, payload) for one file."""
    rel, path, limit, want_digest = job
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError:
        return (rel, "unreadable", 0, 0, None)
    if len(data) > limit:
        return (rel, "too large", 0, 0, None)
    if want_digest:
        from ctxtools.repomap.cache import content_hash

        digest = content_hash(data)
    else:
        digest = 0
    return (rel, "ok", len(data), digest, _scan_payload(rel, data))


def _reintern(payload: object) -> object:
    """Names from another process as the shared strings ``_scan_payload`` makes here."""
    if type(payload) is not tuple:
        return payload
    intern = sys.intern
    language, defs, names, counts, imports = payload
    defs = tuple(
        (intern(k), intern(n), ln, sig, intern(sc) if sc else None, end)
        for k, n, ln, sig, sc, end in defs
    )
    return (intern(language), defs, tuple(map(intern, names)), counts, imports)


def _prescan(candidates, cache, max_files, max_file_size, progress) -> dict[str, tuple]:
    """Scan, on several processes, the files that certainly need it: no cache entry of
    the same size (a same-size entry may be a mere touch, which the hash settles without a
    scan). Only when nothing can be cut by --max-files, so no file is scanned in vain.
    Returns rel -> (status, size, digest, payload)."""
    cpus = os.cpu_count() or 1
    if cpus < 2 or len(candidates) > max_files:
        return {}
    jobs = []
    for cand in candidates:
        if cand.manifest or cand.size > max_file_size:
            continue
        if cache is not None:
            entry = cache.entries.get(cand.rel)
            if entry is not None and entry[0] == cand.size:
                continue
        jobs.append((cand.rel, cand.path, max_file_size, cache is not None))
    if len(jobs) < PARALLEL_MIN:
        return {}
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    out: dict[str, tuple] = {}
    try:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(min(cpus, MAX_WORKERS), mp_context=ctx) as pool:
            for n, (rel, status, size, digest, payload) in enumerate(
                pool.map(_scan_file, jobs, chunksize=32)
            ):
                out[rel] = (status, size, digest, _reintern(payload))
                if progress is not None and n % 64 == 0:
                    progress(n, len(candidates))
    except Exception:  # no processes to be had (or a warning about forking): go serial
        return {}
    return out


def scan_repository(
    root: str,
    *,
    use_cache: bool = True,
    store: str | os.PathLike | None = None,
    max_files: int = MAX_FILES,
    max_file_size: int = MAX_FILE_SIZE,
    progress: Progress | None = None,
    listing: filesmod.Listing | None = None,
) -> ScanSet:
    """List (unless LISTING is given), read where the cache cannot answer, and scan the
    files of ROOT."""
    if listing is None:
        listing = list_repository(root)
    ss = ScanSet(root, listing.via, [], dict(listing.skipped))
    cache = None
    if use_cache:
        from ctxtools.config import store_root
        from ctxtools.repomap.cache import ScanCache, cache_path, scanner_fingerprint

        path = cache_path(store_root(store), root)
        cache = ScanCache(path, root, scanner_fingerprint())
        cache.load()
        ss.cache_path = str(path)

    def skip(reason: str) -> None:
        ss.skipped[reason] = ss.skipped.get(reason, 0) + 1

    candidates = listing.candidates
    total = len(candidates)
    prescanned = _prescan(candidates, cache, max_files, max_file_size, progress)
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
            skip("too large")
            continue
        hit, payload = (False, None)
        if cache is not None:
            hit, payload = cache.get(cand.rel, cand.size, cand.stamp)
            if hit and not _valid_payload(payload):
                hit = False
        done = prescanned.pop(cand.rel, None) if not hit else None
        if done is not None:
            status, size, digest, payload = done
            if status != "ok":
                skip(status)
                continue
            ss.scanned += 1
            if cache is not None:
                cache.put(cand.rel, size, cand.stamp, digest, payload)
        elif not hit:
            try:
                with open(cand.path, "rb") as fh:
                    data = fh.read(max_file_size + 1)
            except OSError:
                skip("unreadable")
                continue
            if len(data) > max_file_size:
                skip("too large")
                continue
            digest = 0
            if cache is not None:
                from ctxtools.repomap.cache import content_hash

                digest = content_hash(data)
                hit, payload = cache.get_by_hash(cand.rel, cand.size, cand.stamp, digest)
            if not hit or not _valid_payload(payload):
                payload = _scan_payload(cand.rel, data)
                ss.scanned += 1
                if cache is not None:
                    cache.put(cand.rel, len(data), cand.stamp, digest, payload)
        if isinstance(payload, str):
            skip(payload)
            continue
        scan = _to_scan(cand.rel, payload, False)
        if scan is not None:
            kept.append(scan)
    if progress is not None:
        progress(total, total)
    ss.candidates = total - sum(1 for c in candidates if c.size > max_file_size)
    if cache is not None:
        if ss.truncated:  # keep the entries of files past the cut, they are not stale
            cache.seen.update(c.rel for c in candidates if c.rel in cache.entries)
        cache.save()
        ss.notes.extend(cache.notes)
    kept.sort(key=lambda s: s.rel)
    ss.scans = kept
    if cache is not None:
        entries = cache.entries
        ss.digests = [0 if s.manifest else entries[s.rel][2] for s in kept]
        ss.replaced = {rel: (e[2], e[3]) for rel, e in cache.replaced.items()}
    if ss.truncated:
        ss.notes.append(
            f"truncated: mapped the first {max_files} of {total} files "
            "(shallowest paths first; raise --max-files to map more)"
        )
    unreadable = ss.skipped.get("unreadable", 0)
    if unreadable:
        ss.notes.append(f"skipped {unreadable} unreadable file(s)")
    if not kept:
        ss.notes.append("no source files to map")
    return ss


def _rank(graph, personal: list[float] | None, plain: tuple | None = None):
    """(rank, file scores, definition scores) of GRAPH. PLAIN is the unpersonalised
    (rank, file scores) of this very graph when a memo has them (spares one PageRank)."""
    from ctxtools.repomap.graph import centrality, definition_scores, pagerank

    if plain is not None:
        rank, score = plain
    else:
        rank = pagerank(graph.out)
        score = centrality(graph, rank)
        # Tests and test data use everything and are used by little but each other: a
        # map is for the code under test, so they step back (still ranked, still shown).
        tests = [is_test_path(f) for f in graph.files]
        score = [x * TEST_WEIGHT if t else x for x, t in zip(score, tests, strict=True)]
    if personal is not None:
        # Relevance times centrality: how much --focus/--query lift a file's PageRank.
        prank = pagerank(graph.out, personal)
        score = [s * p / r if r > 0 else 0.0 for s, p, r in zip(score, prank, rank, strict=True)]
        total = sum(score)
        score = [x / total for x in score] if total > 0 else score
        rank = prank
    return rank, score, definition_scores(graph, rank)


def _graph_state(memo, ss: ScanSet) -> tuple | None:
    """The graph memo's (digests, parts, ranking) when it was made for the same files."""
    if memo is None or ss.digests is None:
        return None
    state = memo.get(_graph_key())
    n = len(ss.scans)
    if not (type(state) is tuple and len(state) == 4):
        return None
    files, digests, parts, ranking = state
    if not (
        type(files) is tuple
        and len(files) == n
        and type(digests) is tuple
        and len(digests) == n
        and type(parts) is list
        and len(parts) == n
    ):
        return None
    if files != tuple(s.rel for s in ss.scans):
        return None  # a file came or went: every index moved, build anew
    if ranking is not None and not (
        type(ranking) is tuple and len(ranking) == 5 and all(len(x) == n for x in ranking[:4])
    ):
        ranking = None
    return digests, parts, ranking


def _graph_key() -> str:
    from ctxtools.repomap.cache import code_fingerprint

    # The code and the Python version (its built-in names weigh nothing) decide too.
    return f"{code_fingerprint()}:{sys.version_info[:3]}"


def _part(s, imp: tuple, contribution: tuple) -> bytes:
    """A file's entry in the graph memo: its imports' part, and its uses with each name
    as its index among the file's references (its out-edges follow from the two)."""
    import marshal

    index = {name: k for k, name in enumerate(s.ref_names)}
    uses = tuple((index[name], w, targets) for name, w, targets in contribution[1])
    return marshal.dumps((imp, uses), 4)


def _unpart(s, blob: bytes) -> tuple[tuple, tuple]:
    """(imports' part, contribution) of a file from its graph memo entry: the out-edges
    are summed again in the order ``GraphBuilder.contribution`` summed them."""
    import marshal

    imp, uses = marshal.loads(blob)
    names = s.ref_names
    oi = dict(imp[0])
    full = []
    for k, w, targets in uses:
        for d in targets:
            oi[d] = oi.get(d, 0.0) + w
        full.append((names[k], w, targets))
    return imp, (oi, tuple(full))


def _update_graph(ss: ScanSet, state: tuple):
    """(builder, contributions, new parts, changed?) from the memo's STATE: only the files
    whose content changed are recomputed, and the files that use a name whose definitions
    changed (added, removed, of another kind). The definitions a file had are the scan
    cache's replaced entry. CONTRIBUTIONS is a function giving every file's (imports' part,
    contribution), called only when the graph is really wanted. Raises on anything that
    does not fit."""
    from ctxtools.repomap.graph import FileScan, GraphBuilder, defined_weights

    scans, digests = ss.scans, ss.digests
    old_digests, parts, _ranking = state
    edited = [i for i, d in enumerate(digests) if d != old_digests[i]]
    renamed: set[str] = set()  # names whose definers or kind weight may have changed
    old_imports = {}
    for i in edited:
        s = scans[i]
        digest, payload = ss.replaced[s.rel]  # KeyError: the memo is older than the cache
        if digest != old_digests[i] or type(payload) is not tuple:
            raise ValueError("graph memo out of step with the scan cache")
        language, defs, _names, _counts, imports = payload
        old_imports[i] = (language, imports)
        new_w = defined_weights(s)
        old_w = defined_weights(FileScan(s.rel, language, defs))
        for name in new_w.keys() | old_w.keys():
            if new_w.get(name) != old_w.get(name):
                renamed.add(name)
    redo = set(edited)
    if renamed:
        for i, s in enumerate(scans):
            if i not in redo and not renamed.isdisjoint(s.ref_names):
                redo.add(i)
    wanted: set[str] = set()
    for i in redo:
        wanted.update(scans[i].ref_names)
    builder = GraphBuilder(scans, wanted)
    parts = list(parts)
    fresh: dict[int, tuple] = {}
    changed = False
    for i in sorted(redo):
        s = scans[i]
        o_imp, o_c = _unpart(FileScan(s.rel, s.language, (), *old_refs(ss, i)), parts[i])
        same_imports = old_imports.get(i, (s.language, s.imports)) == (s.language, s.imports)
        imp = o_imp if same_imports else builder.imports(i)
        c = builder.contribution(i, imp)
        if (
            imp[1:] != o_imp[1:]
            or list(imp[0].items()) != list(o_imp[0].items())
            or list(c[0].items()) != list(o_c[0].items())
            or c[1] != o_c[1]
        ):
            changed = True
        parts[i] = _part(s, imp, c)
        fresh[i] = (imp, c)

    def contributions() -> list[tuple]:
        return [fresh[i] if i in fresh else _unpart(s, parts[i]) for i, s in enumerate(scans)]

    return builder, contributions, parts, changed


def old_refs(ss: ScanSet, i: int) -> tuple:
    """(reference names, counts) file I had when its memo entry was written."""
    s = ss.scans[i]
    old = ss.replaced.get(s.rel)
    if old is not None and ss.digests[i] != old[0]:
        return old[1][2], old[1][3]
    return s.ref_names, s.ref_counts


def rank_scans(
    ss: ScanSet,
    focus: list[str] | tuple[str, ...] = (),
    query: str | None = None,
    memo=None,
):
    """(ranked files in rank order, query identifiers, edges summary) for a ScanSet.

    MEMO (a ``cache.KeyedMemo``) keeps the graph of the last run file by file (each file's
    imports, out-edges and uses, keyed by its content hash) and its unpersonalised ranking.
    After an edit, only the edited files and the files using a name whose definitions
    changed are recomputed; when no edge changed, the ranking is reused as it is. Every
    file's part is computed as a cold build computes it, so the result is the same."""

    from ctxtools.repomap.graph import Graph, build_graph_parts, personalisation
    from ctxtools.repomap.render import RankedFile

    scans = ss.scans
    personal, idents = personalisation(scans, set(focus), query)
    state = _graph_state(memo, ss)
    ranking = graph = parts = None
    changed = True
    if state is not None:
        try:
            builder, every, parts, changed = _update_graph(ss, state)
            if not changed and personal is None and state[2] is not None:
                rank, score, dscores, out, import_edges = state[2]
                graph = Graph([s.rel for s in scans], out, [], {}, import_edges)
                ranking = state[2]
            else:
                pairs = every()
                graph = builder.assemble([c for _, c in pairs], sum(imp[4] for imp, _ in pairs))
                del pairs
        except Exception:  # a part that does not decode as this code wrote it: build anew
            state = graph = parts = None
            changed = True
    if graph is None:
        graph, imports, contributions = build_graph_parts(scans)
        if memo is not None and ss.digests is not None:
            parts = [
                _part(s, imp, c) for s, imp, c in zip(scans, imports, contributions, strict=True)
            ]
        del imports, contributions  # the graph holds what ranking needs (memory)
    if ranking is None:
        plain = None
        if personal is not None and not changed and state is not None and state[2] is not None:
            plain = (state[2][0], state[2][1])  # the same graph: its plain ranking holds
        rank, score, dscores = _rank(graph, personal, plain)
        if personal is None:
            ranking = (rank, score, dscores, graph.out, graph.import_edges)
        elif not changed and state is not None:
            ranking = state[2]  # the graph is the same: its plain ranking still holds
    if parts is not None and (state is None or changed or tuple(ss.digests) != state[0]):
        # Written at once: the definition scores are credited to base classes below.
        memo.put(_graph_key(), (tuple(graph.files), tuple(ss.digests), parts, ranking))
    ranked = []
    for i, s in enumerate(scans):
        sc = dscores[i]
        if sc:
            _credit_bases(s.defs, sc)
        ranked.append(
            RankedFile(
                s.rel,
                score[i],
                s.language,
                tuple(s.defs),
                [sc.get(d[1], 0.0) for d in s.defs],
                s.manifest,
            )
        )
    ranked.sort(key=lambda f: (-f.rank, f.rel))
    return ranked, idents, EdgeSummary(graph, rank)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TEST_WEIGHT = 0.25
_TEST_PATH = re.compile(
    r"(?:^|/)(?:tests?|testdata|__tests__|__mocks__|specs?|e2e|fixtures)/"
    r"|(?:^|/)src/test/"
    r"|(?:^|/)(?:test_[^/]*|[^/]*_test|conftest)\.py$"
    r"|_test\.go$"
    r"|\.(?:test|spec)\.[cm]?[jt]sx?$"
    r"|[^/]Tests?\.java$"
)


def is_test_path(rel: str) -> bool:
    """Whether REL looks like a test or test data (by the usual layouts and names)."""
    return _TEST_PATH.search(rel) is not None


BASE_CREDIT = 0.5


def _credit_bases(defs: tuple, scores: dict[str, float]) -> None:
    """A base class is used through its subclasses: credit each class defined in the same
    file with BASE_CREDIT of the score of the classes naming it in their declaration
    (``class CharField(Field)``, ``class A extends B``, ``impl Trait for T``)."""
    classes = {d[1] for d in defs if d[0] in _CLASS_KINDS}
    if len(classes) < 2:
        return
    bonus: dict[str, float] = {}
    for d in defs:
        if d[0] not in _CLASS_KINDS:
            continue
        own = scores.get(d[1], 0.0)
        if own <= 0.0:
            continue
        sig = d[3]
        at = sig.find(d[1])
        for base in set(_IDENT.findall(sig, at + len(d[1]) if at >= 0 else 0)):
            if base != d[1] and base in classes:
                bonus[base] = bonus.get(base, 0.0) + BASE_CREDIT * own
    for base in sorted(bonus):
        scores[base] = scores.get(base, 0.0) + bonus[base]


class EdgeSummary:
    """The graph's edges in brief, computed only when asked (``--json``)."""

    def __init__(self, graph, rank: list[float]):
        from ctxtools.repomap.graph import Graph

        # Only what the summary needs, not the whole graph (its per-use list is large).
        self.graph = Graph(graph.files, graph.out, [], {}, graph.import_edges)
        self.rank = rank

    def as_dict(self, limit: int = 100) -> dict:
        """Edge count, import edges, and the LIMIT edges carrying the most rank: who
        depends on whom, most of all (``flow`` is the rank passed along the edge)."""
        import heapq

        graph, rank = self.graph, self.rank
        files = graph.files
        count = 0

        def flows():
            nonlocal count
            for i, o in enumerate(graph.out):
                if not o:
                    continue
                total = sum(o.values())
                count += len(o)
                r = rank[i]
                for t, w in o.items():
                    yield (r * w / total, -i, -t, w)

        top = heapq.nlargest(limit, flows())
        top = [(f, files[-i], files[-t], w) for f, i, t, w in top]
        top.sort(key=lambda x: (-x[0], x[1], x[2]))
        return {
            "count": count,
            "import_edges": graph.import_edges,
            "top": [
                {
                    "from": json_text(a),
                    "to": json_text(b),
                    "weight": round(w, 6),
                    "flow": round(f, 9),
                }
                for f, a, b, w in top
            ],
        }


def _fit_memo(store, root: str, slot: object):
    """The store's memo of fitted maps for ROOT, and the key of SLOT (None, None when it
    cannot be keyed)."""
    from ctxtools.config import store_root
    from ctxtools.repomap.cache import KeyedMemo, ResultMemo, code_fingerprint

    try:
        key = ResultMemo.key((code_fingerprint(), slot))
    except ValueError:  # a spec marshal cannot write
        return None, None
    return KeyedMemo(store_root(store), root, "fit", 8), key


def resolve_focus(root: str, focus: list[str] | tuple[str, ...], ss: ScanSet) -> list[str]:
    """Focus paths (relative to ROOT, or to the current directory) as mapped relative paths;
    a directory stands for the mapped files under it."""
    mapped = [s.rel for s in ss.scans]
    root_real = os.path.realpath(root)
    out: list[str] = []
    for item in focus:
        rels = []
        for base in (root, os.getcwd()):
            cand = os.path.realpath(os.path.join(base, item))
            if os.path.exists(cand):
                rel = os.path.relpath(cand, root_real).replace(os.sep, "/")
                if not rel.startswith(".."):
                    rels.append(rel)
                break
        if not rels:
            raise InputError(f"--focus {item}: no such file under {root}")
        rel = rels[0]
        if rel == ".":
            out.extend(mapped)
            continue
        hits = [m for m in mapped if m == rel or m.startswith(rel + "/")]
        if not hits:
            ss.notes.append(f"--focus {item}: not a mapped file (no scanner, skipped or ignored)")
        out.extend(hits)
    return sorted(set(out))


def build_map(
    root: str = ".",
    *,
    tokens: int = DEFAULT_TOKENS,
    focus: list[str] | tuple[str, ...] = (),
    query: str | None = None,
    ruler=None,
    use_cache: bool = True,
    store: str | os.PathLike | None = None,
    max_files: int = MAX_FILES,
    max_file_size: int = MAX_FILE_SIZE,
    progress: Progress | None = None,
    reuse: bool = False,
    ruler_spec: object = None,
) -> RepoMap:
    """Build the map of ROOT in at most TOKENS tokens as RULER counts them.

    RULER is a ``ctxtools.tokens.Ruler``, or a function returning one (called only when
    the map must really be rendered); default: ``get_ruler()``'s choice. With REUSE (and the
    cache on), a map rendered before from the same files, options and code is taken from
    the store's result memo; RULER_SPEC then stands for the ruler in the memo's key (what
    was asked for: encoding, tokenizer file, heuristic) so that a hit need not load it.
    A result from the memo has ``from_memo`` set and no ``files`` (use it for the text).

    Raises ``UsageError`` for a budget below 50 tokens or bad limits, ``InputError`` when
    ROOT is not a directory or a focus path does not exist.
    """
    if tokens < MIN_TOKENS:
        raise UsageError(f"--tokens {tokens} is below the minimum of {MIN_TOKENS}")
    if max_files < 1:
        raise UsageError("--max-files must be at least 1")
    if max_file_size < 1:
        raise UsageError("--max-file-size must be at least 1 byte")
    notes: list[str] = []
    if ruler is None:
        from ctxtools.tokens import get_ruler

        choice = get_ruler(store_root=store)
        ruler = choice.ruler
        notes.extend(choice.notes)
    listing = list_repository(root)
    memo = key = None
    if reuse and use_cache:
        # Checked before the scan cache is even read: the candidates' stamps and the
        # options decide the map entirely (content is trusted unchanged while size,
        # mtime and ctime are, as the scan cache does: a chmod changes the ctime).
        from ctxtools.config import store_root
        from ctxtools.repomap.cache import ResultMemo, code_fingerprint

        spec = ruler_spec if ruler_spec is not None else getattr(ruler, "name", None)
        if spec is not None:
            memo = ResultMemo(store_root(store), root)
            key = memo.key(
                (
                    code_fingerprint(),
                    spec,
                    tokens,
                    tuple(focus),
                    os.getcwd() if focus else None,
                    query,
                    max_files,
                    max_file_size,
                    listing.via,
                    tuple(sorted(listing.skipped.items())),
                    tuple((c.rel, c.size, c.stamp) for c in listing.candidates),
                )
            )
            memo.load()
            hit = memo.get(key)
            if hit is not None:
                text, n, shown_files, shown_symbols, ruler_name, exact, memo_notes = hit
                return RepoMap(
                    root=root,
                    text=text,
                    tokens=n,
                    budget=tokens,
                    ruler=ruler_name,
                    exact=exact,
                    files=[],
                    shown_files=shown_files,
                    shown_symbols=shown_symbols,
                    edges=None,
                    scanset=ScanSet(root, listing.via, []),
                    notes=notes + list(memo_notes),
                    from_memo=True,
                )

    ss = scan_repository(
        root,
        use_cache=use_cache,
        store=store,
        max_files=max_files,
        max_file_size=max_file_size,
        progress=progress,
        listing=listing,
    )
    notes.extend(ss.notes)
    focus_rels = resolve_focus(root, focus, ss) if focus else []
    notes.extend(n for n in ss.notes if n not in notes)

    rank_memo = None
    if use_cache:
        from ctxtools.config import store_root
        from ctxtools.repomap.cache import KeyedMemo

        rank_memo = KeyedMemo(store_root(store), root, "graph", 1)
    ranked, idents, edges = rank_scans(ss, focus_rels, query, rank_memo)
    # The references have done their work; drop them before the ruler comes in (a
    # tiktoken encoding is tens of MB), so the two never weigh on memory together.
    ss.scans = []

    def load_ruler():
        nonlocal ruler
        if not hasattr(ruler, "count"):
            ruler = ruler()  # a function that loads the ruler: now it is needed
        return ruler

    from ctxtools.repomap.render import (
        FILL_WINDOW,
        MAX_SIG_LIMIT,
        Fitted,
        MapLayout,
        fit,
        layout_digest,
        signature_width,
    )

    header = ""
    if ss.truncated:
        header = f"# truncated: {max_files} of {ss.candidates} files mapped (--max-files)"
    fitted = None
    ruler_name = ruler_exact = None
    n_items = sum(len(f.defs) or f.manifest for f in ranked)
    if n_items <= tokens:
        wide = MapLayout(ranked, idents, max_sig=MAX_SIG_LIMIT)
        # A small repository may fit whole with full-width signatures: then show them.
        text = wide.render(wide.items, header)
        n = load_ruler().count(text)
        if n <= tokens:
            fitted = Fitted(text, n, list(wide.items))
    if fitted is None:
        layout = MapLayout(
            ranked, idents, limit=tokens + FILL_WINDOW, max_sig=signature_width(tokens)
        )
        fit_memo = fit_key = None
        spec = ruler_spec if ruler_spec is not None else getattr(ruler, "name", None)
        if use_cache and spec is not None:
            # (query and focus pick the slot: maps asked for in turn do not evict each other)
            fit_memo, fit_key = _fit_memo(store, root, (spec, tokens, query, tuple(focus)))
        hit = fit_memo.get(fit_key) if fit_memo is not None else None
        if type(hit) is tuple and len(hit) == 8:
            # The first items of the layout, their lines and the budget are what a fit
            # counted before with the same (exact) ruler: its outcome stands, and the ruler
            # need not even be loaded.
            examined, bound, digest, text, n, selection, name, exact = hit
            if layout_digest(layout, examined, bound, header) == digest:
                fitted = Fitted(text, n, [tuple(x) for x in selection], examined, bound)
                ruler_name, ruler_exact = name, exact
        if fitted is None:
            fitted = fit(layout, tokens, load_ruler().count, header)
            if fit_memo is not None and ruler.exact:
                fit_memo.put(
                    fit_key,
                    (
                        fitted.examined,
                        fitted.bound,
                        layout_digest(layout, fitted.examined, fitted.bound, header),
                        fitted.text,
                        fitted.tokens,
                        fitted.selection,
                        ruler.name,
                        ruler.exact,
                    ),
                )
    if ruler_name is None:
        ruler_name, ruler_exact = ruler.name, ruler.exact
    shown_files = len({fpos for fpos, _ in fitted.selection})
    shown_symbols = sum(1 for line in fitted.text.splitlines() if _SYMBOL_LINE.match(line))
    if memo is not None:
        scan_notes = tuple(n for n in notes if not n.startswith("scan cache"))
        note = memo.put(
            key,
            (
                fitted.text,
                fitted.tokens,
                shown_files,
                shown_symbols,
                ruler_name,
                ruler_exact,
                scan_notes,
            ),
        )
        if note and not any(n.startswith("scan cache not saved") for n in notes):
            notes.append(f"map not saved for reuse ({note})")
    return RepoMap(
        root=root,
        text=fitted.text,
        tokens=fitted.tokens,
        budget=tokens,
        ruler=ruler_name,
        exact=ruler_exact,
        files=ranked,
        shown_files=shown_files,
        shown_symbols=shown_symbols,
        edges=edges,
        scanset=ss,
        notes=notes,
    )
