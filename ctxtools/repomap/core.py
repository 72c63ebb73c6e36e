"""``build_map``: a ranked symbol map of a repository under a token budget.

It reads top-down: list the files and scan them through the scan cache (``source``:
``listing``, ``scanset``, the scanners in ``scan``), rank files and definitions (``rank``,
on the ``graph``), fit the map to the budget (``render``). Three memos, whose records are
``records``', spare the work a run before already did: the whole map, the ranking, the
fit. This module ties the steps together and is what ``ctx-repomap`` and ``ctx-pack`` call.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxtools import defaults
from ctxtools.collector import collector_paused
from ctxtools.errors import InputError, UsageError
from ctxtools.fsutil import current_dir, json_name, json_text
from ctxtools.quoting import quote_name
from ctxtools.source.scanset import (
    MAX_FILE_SIZE,
    MAX_FILES,
    Progress,
    ScanSet,
    list_repository,
    scan_repository,
)

if TYPE_CHECKING:
    from ctxtools.repomap.rank import EdgeSummary

__all__ = [
    "DEFAULT_TOKENS",
    "MAX_FILES",
    "MAX_FILE_SIZE",
    "MIN_TOKENS",
    "RepoMap",
    "ScanSet",
    "build_map",
    "list_repository",
    "resolve_focus",
    "scan_repository",
]

DEFAULT_TOKENS = defaults.MAP_TOKENS
MIN_TOKENS = 50

_SYMBOL_LINE = re.compile(r"\d+:")


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
    # With ``build_map(keep=True)``: each scanned file's definitions (rel -> its scan's
    # ``(kind, name, line, signature, scope, end_line)`` tuples), and what ``refit_map``
    # needs to fit the same ranking to another budget.
    defs: dict[str, tuple] = field(default_factory=dict)
    refit: Refit | None = None

    @classmethod
    def of(cls, root, budget, made, files, edges, scanset, notes, from_memo=False) -> RepoMap:
        """The RepoMap of ROOT for a map MADE (a ``records.MapRecord``: the text, its count,
        what it shows, the ruler that counted) under BUDGET."""
        head = (made.text, made.tokens, budget, made.ruler, made.exact, files)
        shown = (made.shown_files, made.shown_symbols)
        return cls(root, *head, *shown, edges, scanset, notes, from_memo)

    def to_json(self) -> dict:
        """The --json document as a dict (see ``json_bytes`` for a leaner way to print it).
        A name that is not UTF-8 -- the root, a file's path -- is ``fsutil.json_name``'s:
        U+FFFD in ``path`` (``root``), and ``path_quoted`` (``root_quoted``), the name as the
        map's text shows it, from which its bytes come back."""
        doc = self._json_head()
        doc["files"] = [_file_json(f) for f in self.files]
        return doc

    def json_bytes(self) -> bytes:
        """The --json document: the same bytes as dumping ``to_json()`` with orjson."""
        return b"".join(self.iter_json())

    def iter_json(self, explain: dict | None = None):
        """The --json document in pieces, file by file, so that printing it never holds
        every definition as a dict (or the whole text) at once; EXPLAIN (``--explain``'s
        record) goes last, as "explain"."""
        import orjson

        head = orjson.dumps(self._json_head())
        yield head[:-1] + b',"files":['
        for k, f in enumerate(self.files):
            piece = orjson.dumps(_file_json(f))
            yield b"," + piece if k else piece
        yield b"]" + (b',"explain":' + orjson.dumps(explain) if explain else b"") + b"}\n"

    def _json_head(self) -> dict:
        ss = self.scanset
        return {
            **json_name(self.root, "root"),
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


@dataclass
class Refit:
    """What fitting a map's ranking to another budget needs (``refit_map``): the RANKED
    files, their identifiers, the HEADER line, and the fit memo's slot without the budget
    (store, root, (query, focus, filter key); None without the cache)."""

    ranked: list
    idents: object
    header: str
    slot: tuple | None
    # When RANKED is the head of a ranking (``upto``): the whole ranking's item count,
    # and the largest budget whose fit examines no file past the head.
    items: int | None = None
    most: int | None = None

    def covers(self, tokens: int) -> bool:
        """Whether a fit in TOKENS can be made from what is kept."""
        return self.most is None or tokens <= self.most

    def upto(self, tokens: int) -> Refit:
        """What fits in at most TOKENS need: the ranked files a fit's layout looks at for
        TOKENS (a smaller budget looks at no more of them: its layout keeps fewer items, so
        it stops at the same file or sooner), the whole ranking's item count kept for the
        test of a map that fits whole. The ranking's tail stays behind (ctx-pack's map
        child hands the head over and ends)."""
        from ctxtools.repomap.render import FILL_WINDOW, MapLayout

        items = _items(self.ranked) if self.items is None else self.items
        if items <= tokens:  # (a map that may fit whole is laid out whole)
            return self
        reach = MapLayout(self.ranked, self.idents, limit=tokens + FILL_WINDOW).reach
        return Refit(self.ranked[:reach], self.idents, self.header, self.slot, items, tokens)

    def slot_for(self, tokens: int) -> tuple | None:
        """The fit memo's slot of a fit in TOKENS (as ``build_map`` names it)."""
        if self.slot is None:
            return None
        store, root, options = self.slot
        return (store, root, (tokens, *options))


def _file_json(f) -> dict:
    return {
        **json_name(f.rel),
        "rank": round(f.rank, 9),
        "language": f.language,
        "definitions": [
            {
                "kind": d.kind,
                "name": d.name,
                "line": d.line,
                "end_line": d.end_line,
                "signature": d.signature,
                "scope": d.scope,
                "score": round(s, 9),
            }
            for d, s in zip(f.defs, f.scores, strict=True)
        ],
    }


def resolve_focus(root: str, focus: list[str] | tuple[str, ...], ss: ScanSet) -> list[str]:
    """Focus paths (relative to ROOT, or to the current directory while there is one) as
    mapped relative paths; a directory stands for the mapped files under it."""
    mapped = [s.rel for s in ss.scans]
    root_real = os.path.realpath(root)
    cwd = current_dir()
    out: list[str] = []
    for item in focus:
        rels = []
        found = False  # it exists (perhaps outside ROOT)
        for base in (root, cwd) if cwd is not None else (root,):
            cand = os.path.realpath(os.path.join(base, item))
            if os.path.exists(cand):
                found = True
                rel = os.path.relpath(cand, root_real).replace(os.sep, "/")
                if not rel.startswith(".."):
                    rels.append(rel)
                break
        if not rels:
            why = "not under" if found else "no such file under"
            raise InputError(f"--focus {quote_name(item)}: {why} {quote_name(root)}")
        rel = rels[0]
        if rel == ".":
            out.extend(mapped)
            continue
        hits = [m for m in mapped if m == rel or m.startswith(rel + "/")]
        if not hits:
            ss.notes.append(
                f"--focus {quote_name(item)}: not a mapped file (no scanner, skipped or ignored)"
            )
        out.extend(hits)
    return sorted(set(out))


def ruler_spec(encoding, tokenizer, heuristic: bool, exact: bool) -> tuple:
    """What stands for the ruler these options ask for (see ``tokens.get_ruler``) in the
    memos' keys, so that a hit need not load it: a tokenizer file by its real path, size
    and mtime (or as missing)."""
    tok_stat = None
    if tokenizer:
        try:
            st = os.stat(tokenizer)
            tok_stat = (os.path.realpath(tokenizer), st.st_size, st.st_mtime_ns)
        except OSError:
            tok_stat = ("missing", tokenizer)
    return ("ruler", encoding, tok_stat, heuristic, exact)


@collector_paused()  # (see ctxtools.collector)
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
    keep: bool = False,
    names: list[str] | None = None,
    path_filter=None,
    stage=None,
    scanned=None,
) -> RepoMap:
    """Build the map of ROOT in at most TOKENS tokens as RULER counts them.

    RULER is a ``ctxtools.tokens.Ruler``, or a function returning one (called only when
    the map must really be rendered); default: ``get_ruler()``'s choice. With REUSE (and the
    cache on), a map rendered before from the same files, options and code is taken from
    the store's result memo; RULER_SPEC then stands for the ruler in the memo's key (what
    was asked for: encoding, tokenizer file, heuristic) so that a hit need not load it.
    A result from the memo has ``from_memo`` set and no ``files`` (use it for the text).
    With KEEP, the map keeps each scanned file's definitions (``RepoMap.defs``), for a
    caller that ranks the same files (ctx-pack) and need not read the scan cache again, and
    what ``refit_map`` needs to fit the same ranking to another budget (``RepoMap.refit``).
    NAMES (paths relative to ROOT) are the files to map instead of ROOT's listing.
    PATH_FILTER (a ``pathfilter.PathFilter``; default: ROOT's .ctxignore) leaves files off
    the map: they are never listed, scanned or ranked, and the memos are keyed on it.
    STAGE, when given, is told the name of each step as it begins ("listing", "scanning",
    "ranking", "fitting"); PROGRESS(done, total) then follows the scan. SCANNED(ScanSet,
    Listing), when given, is called once the files are scanned, before the scan cache is
    written and the focus found (ctx-pack's child: ``scan_repository``'s SCANNED).

    Raises ``UsageError`` for a budget below 50 tokens or bad limits, ``InputError`` when
    ROOT is not a directory or a focus path does not exist.
    """
    _check_limits(tokens, max_files, max_file_size)
    notes: list[str] = []
    if ruler is None:
        from ctxtools.tokens import get_ruler

        choice = get_ruler(store_root=store)
        ruler = choice.ruler
        notes.extend(choice.notes)
    lazy = _LazyRuler(ruler, ruler_spec)
    step = stage if stage is not None else _no_stage
    step("listing")
    listing = list_repository(root, names, path_filter)
    result_memo = key = None
    filter_key = listing.filter_key
    if reuse and use_cache and lazy.spec() is not None:
        # Checked before the scan cache is even read: the candidates' stamps and the
        # options decide the map entirely (content is trusted unchanged while size,
        # mtime and ctime are, as the scan cache does: a chmod changes the ctime).
        options = (tokens, tuple(focus), query, max_files, max_file_size, filter_key)
        result_memo, key = _result_memo(store, root, lazy.spec(), options, listing)
        hit = result_memo.get(key)
        if hit is not None:
            return _remembered(root, tokens, listing, hit, notes)
    step("scanning")
    ss = scan_repository(
        root,
        use_cache=use_cache,
        store=store,
        max_files=max_files,
        max_file_size=max_file_size,
        progress=progress,
        listing=listing,
        meanwhile=lazy.preload if _fits_anew(store, root, use_cache) else None,
        keep_cache=keep,
        scanned=None if scanned is None else (lambda ss: scanned(ss, listing)),
    )
    notes.extend(ss.notes)
    focus_rels = resolve_focus(root, focus, ss) if focus else []
    notes.extend(n for n in ss.notes if n not in notes)
    step("ranking")
    ranked, idents, edges = _rank_with_memo(ss, focus_rels, query, store if use_cache else None)
    # The references have done their work: dropped before the fit's layouts are made.
    defs = {s.rel: s.defs for s in ss.scans} if keep else {}
    ss.scans = []
    cut = f"# truncated: {max_files} of {ss.candidates} files mapped (--max-files)"
    header = cut if ss.truncated else ""
    step("fitting")
    slot = (store, root, (query, tuple(focus), filter_key)) if use_cache else None
    refit = Refit(ranked, idents, header, slot)
    fitted, ruler_name, ruler_exact = fit_map(
        ranked, idents, header, tokens, lazy, refit.slot_for(tokens)
    )
    made = _record(fitted, ruler_name, ruler_exact)
    if result_memo is not None:
        _remember(result_memo, key, made, notes)
    m = RepoMap.of(root, tokens, made, ranked, edges, ss, notes)
    if keep:
        m.defs, m.refit = defs, refit
    return m


def refit_map(kept: Refit, tokens: int, ruler) -> str:
    """The text ``build_map`` gives for TOKENS, from what an earlier call with the same
    root, focus and query kept (KEPT, its ``RepoMap.refit``): the files are not listed,
    scanned or ranked again, only fitted."""
    _check_limits(tokens, MAX_FILES, MAX_FILE_SIZE)
    lazy = _LazyRuler(ruler, None)
    if not kept.covers(tokens):
        raise ValueError(f"a map kept for {kept.most} tokens refitted to {tokens}")
    fitted, _name, _exact = fit_map(
        kept.ranked, kept.idents, kept.header, tokens, lazy, kept.slot_for(tokens), kept.items
    )
    return fitted.text


def _record(fitted, ruler_name: str, ruler_exact: bool):
    """The ``records.MapRecord`` of a map FITTED, counted by the named ruler."""
    from ctxtools.repomap.records import MapRecord

    shown_files = len({fpos for fpos, _ in fitted.selection})
    shown_symbols = sum(1 for line in fitted.text.splitlines() if _SYMBOL_LINE.match(line))
    return MapRecord(
        fitted.text, fitted.tokens, shown_files, shown_symbols, ruler_name, ruler_exact, ()
    )


def _no_stage(name: str) -> None:
    """No one is told the steps."""


def _remember(memo, key: str, made, notes: list[str]) -> None:
    """Keep the map MADE in the result memo (with the notes that are not the scan
    cache's); a note when that failed and the scan cache has not said so already."""
    scan_notes = tuple(n for n in notes if not n.startswith("scan cache"))
    note = memo.put(key, made._replace(notes=scan_notes))
    if note and not any(n.startswith("scan cache not saved") for n in notes):
        notes.append(f"map not saved for reuse ({note})")


def _check_limits(tokens: int, max_files: int, max_file_size: int) -> None:
    if tokens < MIN_TOKENS:
        raise UsageError(f"--tokens {tokens} is below the minimum of {MIN_TOKENS}")
    if max_files < 1:
        raise UsageError("--max-files must be at least 1")
    if max_file_size < 1:
        raise UsageError("--max-file-size must be at least 1 byte")


class _LazyRuler:
    """The ruler, loaded when first needed when it was given as a function that loads it;
    and what stands for it in a memo's key (RULER_SPEC, else its name once it has one)."""

    def __init__(self, ruler, ruler_spec: object) -> None:
        self.ruler = ruler
        self.ruler_spec = ruler_spec

    def get(self):
        if not hasattr(self.ruler, "count"):
            self.ruler = self.ruler()  # a function that loads the ruler: now it is needed
        return self.ruler

    def preload(self) -> None:
        """Load the ruler now, while worker processes scan (a failure is left for ``get``
        to raise where it always has)."""
        if not hasattr(self.ruler, "count"):
            import contextlib

            with contextlib.suppress(Exception):
                self.get()

    def spec(self) -> object:
        if self.ruler_spec is not None:
            return self.ruler_spec
        return getattr(self.ruler, "name", None)


def _fits_anew(store, root: str, use_cache: bool) -> bool:
    """Whether the fit will surely count with the ruler: no fit memo to answer it (none
    kept for ROOT, or no cache). Then the ruler may be loaded while the files are scanned."""
    if not use_cache:
        return True
    from ctxtools.config import store_root
    from ctxtools.repomap.records import FitRecord
    from ctxtools.source.memo import Memo

    return not Memo(store_root(store), root, "fit", FitRecord, keep=8).path.exists()


def _result_memo(store, root: str, spec: object, options: tuple, listing):
    """The result memo of ROOT and the key of a map of LISTING with OPTIONS
    (tokens, focus, query, max files, max file size, the path filter's key) and the
    ruler SPEC."""
    from ctxtools.config import store_root
    from ctxtools.repomap.records import MapRecord, code_fingerprint
    from ctxtools.source.memo import Memo, memo_key

    tokens, focus, query, max_files, max_file_size, filter_key = options
    key = memo_key(
        (
            code_fingerprint(),
            spec,
            tokens,
            focus,
            current_dir() if focus else None,  # (a focus may be relative to it)
            query,
            max_files,
            max_file_size,
            filter_key,
            listing.via,
            tuple(sorted(listing.skipped.items())),
            tuple((c.rel, c.size, c.stamp) for c in listing.candidates),
        )
    )
    return Memo(store_root(store), root, "result", MapRecord, keep=8, durable=True), key


def _remembered(root: str, tokens: int, listing, hit, notes: list[str]) -> RepoMap:
    """The RepoMap of a map found in the result memo (HIT, a ``records.MapRecord``)."""
    scanset = ScanSet(root, listing.via, [])
    return RepoMap.of(root, tokens, hit, [], None, scanset, notes + list(hit.notes), True)


def _rank_with_memo(ss: ScanSet, focus_rels: list[str], query: str | None, store):
    """``rank.rank_scans`` with the store's graph memo (none when STORE is None)."""
    from ctxtools.repomap.rank import rank_scans

    memo = None
    if store is not None:
        from ctxtools.config import store_root
        from ctxtools.repomap.records import GraphState
        from ctxtools.source.memo import Memo

        memo = Memo(store_root(store), ss.root, "graph", GraphState, keep=1)
    return rank_scans(ss, focus_rels, query, memo)


def fit_map(
    ranked: list, idents, header: str, tokens: int, lazy: _LazyRuler, slot, items=None
):
    """(``render.Fitted``, ruler name, exact?) of the ranked files in TOKENS tokens. A
    small repository may fit whole with full-width signatures: then they are shown. SLOT
    (store, root, options) names the fit memo's entry to use, or None. ITEMS: the whole
    ranking's item count when RANKED is its head (``Refit.upto``)."""
    from ctxtools.repomap.render import (
        FILL_WINDOW,
        MAX_SIG_LIMIT,
        Fitted,
        MapLayout,
        fit,
        layout_digest,
        signature_width,
    )

    n_items = _items(ranked) if items is None else items
    if n_items <= tokens:
        wide = MapLayout(ranked, idents, max_sig=MAX_SIG_LIMIT)
        text = wide.render(wide.items, header)
        n = lazy.get().count(text)
        if n <= tokens:
            return Fitted(text, n, list(wide.items)), lazy.ruler.name, lazy.ruler.exact
    layout = MapLayout(ranked, idents, limit=tokens + FILL_WINDOW, max_sig=signature_width(tokens))
    memo = key = None
    spec = lazy.spec()
    if slot is not None and spec is not None:
        # (query and focus pick the slot: maps asked for in turn do not evict each other)
        store, root, options = slot
        memo, key = _fit_memo(store, root, (spec, *options))
    hit = memo.get(key) if memo is not None else None
    if hit is not None and layout_digest(layout, hit.examined, hit.bound, header) == hit.digest:
        # The first items of the layout, their lines and the budget are what a fit
        # counted before with the same (exact) ruler: its outcome stands, and the ruler
        # need not even be loaded.
        selection = [tuple(x) for x in hit.selection]
        return (
            Fitted(hit.text, hit.tokens, selection, hit.examined, hit.bound),
            hit.ruler,
            hit.exact,
        )
    ruler = lazy.get()
    fitted = fit(layout, tokens, ruler.count, header)
    if memo is not None and ruler.exact:
        from ctxtools.repomap.records import FitRecord

        digest = layout_digest(layout, fitted.examined, fitted.bound, header)
        memo.put(
            key,
            FitRecord(
                fitted.examined,
                fitted.bound,
                digest,
                fitted.text,
                fitted.tokens,
                fitted.selection,
                ruler.name,
                ruler.exact,
            ),
        )
    return fitted, ruler.name, ruler.exact


def _items(ranked: list) -> int:
    """The items of a ranking: each file's definitions, or one for a manifest."""
    return sum(len(f.defs) or f.manifest for f in ranked)


def _fit_memo(store, root: str, slot: object):
    """The store's memo of fitted maps for ROOT, and the key of SLOT (None, None when it
    cannot be keyed)."""
    from ctxtools.config import store_root
    from ctxtools.repomap.records import FitRecord, code_fingerprint
    from ctxtools.source.memo import Memo, memo_key

    try:
        key = memo_key((code_fingerprint(), slot))
    except ValueError:  # a spec marshal cannot write
        return None, None
    return Memo(store_root(store), root, "fit", FitRecord, keep=8), key
