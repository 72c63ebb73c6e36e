"""The files section: which files, and which of their lines, a pack shows.

``Chooser`` reads the pack's candidate files once, leaves out the noise a directory holds
(``retrieval.noise``; ``--include``/``--exclude``/``.ctxignore`` decide first), ranks the
rest against the task (``retrieval.rank``) and, for each budget the fitting rounds ask,
plans what to show (``retrieval.plan``) and renders it. Definitions come from the repo
map's scan cache when it knows the file, else from the scanners directly.

Review packs (``--changed``): each changed file's diff hunks are shown first and reserved
before anything else; the definitions enclosing the changed lines (new side) rank above
everything; the rest of the file follows by relevance. Deleted files show their diff.

Secrets: a file that is shown is searched for secrets first; one that holds any is
ranked and planned again from its redacted bytes.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxtools.binary import is_binary
from ctxtools.errors import CtxError
from ctxtools.fsutil import check_resource, read_whole
from ctxtools.pack.ledger import Drop, Ledger, Note
from ctxtools.pack.model import SIGNATURE_ROLES, FileEntry, PackRequest, looks_like_pack
from ctxtools.quoting import quote_name

# (the module's, not a function's: each is asked once a candidate file, thousands a pack)
from ctxtools.source.classify import listing_skip, noise_by_name, noise_reason

if TYPE_CHECKING:
    from ctxtools.pack.choose_render import FilesFit
    from ctxtools.pack.render import Renderer
    from ctxtools.pathfilter import PathFilter

_HUNK_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)
_NO_LINES: frozenset[int] = frozenset()  # (every frozenset() is a new 216-byte object)


def changed_lines(diff: str | None) -> frozenset[int]:
    """The new-side line numbers a diff's hunks add or change (for a pure deletion, the
    line after it)."""
    if not diff:
        return _NO_LINES
    out: set[int] = set()
    line = 0
    in_hunk = False
    for text in diff.split("\n"):
        m = _HUNK_RE.match(text)
        if m:
            line = int(m.group(1))
            in_hunk = True
            continue
        if not in_hunk or not text:
            continue
        c = text[0]
        if c == "+":
            out.add(line)
            line += 1
        elif c == "-":
            out.add(max(line, 1))
        elif c == " ":
            line += 1
    return frozenset(out)


VOCAB_MIN_FILES = 50  # candidates from which their vocabularies are kept between packs
MISSING_WARNINGS = 5  # paths the task names that are not there, said one by one
SHOWN_PATH = 160  # characters of a task's path a warning shows (its ends, when longer)


@dataclass
class FilesRequest:
    """What a ``Chooser`` chooses from, and for what: the candidate ENTRIES, the task's
    words, the pack's request, the ruler and renderer, the files named on purpose, the
    build's LEDGER (the redactions of the files shown go there), the ROOT with the user's
    PATH_FILTER, and the repo map's ranks and scanned definitions (rel -> ...)."""

    entries: list[FileEntry]
    task_words: str
    req: PackRequest
    ruler: object
    render: Renderer
    named: list[str]
    ledger: Ledger
    root: str
    path_filter: PathFilter | None = None
    map_ranks: dict[str, float] = field(default_factory=dict)
    map_defs: dict[str, tuple] = field(default_factory=dict)
    # the map's scan cache, loaded in this run (``MapState.scan_cache``), or None
    map_cache: object = None
    # a map under way in a child: () -> (ranks, definitions, scan cache), called once the
    # files are read (the three above are then taken from it)
    map_pending: object = None
    # the task's Query when the caller read it already (``read_task(...).query`` of the
    # text TASK_WORDS is the prose of): parsed once a pack, not again here
    query: object = None


class Chooser:
    """The files section under a token budget (see the module's docstring)."""

    def __init__(self, ask: FilesRequest):
        from ctxtools.analyzer import parse_query
        from ctxtools.retrieval.rank import reachable

        req = ask.req
        self.req = req
        self.render = ask.render
        self.ledger = ask.ledger
        self.base_notes: list[Note] = []  # said once, when the files are read
        self.skipped: list[Drop] = []  # inputs left out before ranking (binary, noise)
        self.fitted: FilesFit | None = None  # the last fitting
        self.named = set(ask.named)
        self.entries = {e.label: e for e in ask.entries}
        self.root = ask.root
        self.filt = ask.path_filter
        self.map_ranks = ask.map_ranks
        self.map_defs = ask.map_defs
        # (taken, not shared: ASK lives on in the caller, and the cache is let go after
        # the definitions, before the files are ranked)
        self._scan_cache, ask.map_cache = ask.map_cache, None
        self._count = ask.ruler.count
        self._counts: dict[str, int] = {}
        self.query = ask.query if ask.query is not None else parse_query(ask.task_words)
        self._signal = None  # the history's (``_history``), read beside the files
        self._pending = None
        if self.query.words or self.query.refs:
            from ctxtools.retrieval.history import Pending, enabled

            if enabled():
                self._pending = Pending(self.root, self.query.words, req.store, self.query.refs)
        self.sig_mode = req.identifiers_only or (req.role or "").strip().lower() in SIGNATURE_ROLES
        if req.stage is not None:
            req.stage("reading")
        self.sources = self._sources()
        self._by_label = {s.label: s for s in self.sources}
        reach = reachable(self.sources, self.query)  # (needs nothing of the map)
        if ask.map_pending is not None:
            self.map_ranks, self.map_defs, self._scan_cache = ask.map_pending()
            ask.map_pending = None
        self.checked: set[str] = set()
        if req.stage is not None:
            req.stage("ranking")
        self._rank(reach)

    @property
    def notes(self) -> list[Note]:
        """What reading the files said, then what the last fitting said."""
        return self.base_notes + (self.fitted.notes if self.fitted else [])

    @property
    def dropped(self) -> list[Drop]:
        """What the last fitting left out."""
        return self.fitted.dropped if self.fitted else []

    @property
    def failed_named(self) -> list[str]:
        """The named files the last fitting could not show even as their path."""
        return self.fitted.failed_named if self.fitted else []

    # -- reading ------------------------------------------------------------------------
    def count(self, text: str) -> int:
        n = self._counts.get(text)
        if n is None:
            n = self._counts[text] = self._count(text)
        return n

    def _read(self, e) -> bytes | None:
        if e.data is not None:
            return e.data
        try:
            return read_whole(e.path)
        except OSError as exc:
            check_resource(exc, e.label)  # a resource limit is an error, not a skip
            shown = quote_name(e.label)
            self.base_notes.append(Note(f"skipped {shown}: {exc.strerror or exc}"))
            self.skipped.append(Drop(shown, "unreadable"))
            return None

    def _keep(
        self, e, data: bytes, counts: dict[str, int], said: str | None, asked: bool
    ) -> bool:
        """Whether a candidate stays (noise, and the user's filter: SAID, what it said of
        a candidate not named; its name was judged already unless E is a handle; ASKED:
        the task names it)."""
        if asked and not e.named:
            # the task names it (a generated migration by its name): no noise rule but binary
            return not is_binary(data) or self._skip(e.label, "binary", counts)
        if e.named:
            if is_binary(data):
                shown = quote_name(e.label)
                self.base_notes.append(Note(f"skipped {shown}: binary file"))
                self.skipped.append(Drop(shown, "binary"))
                return False
            return True
        if said == "included":
            return not is_binary(data) or self._skip(e.label, "binary", counts)
        reason = noise_reason(e.label, data, by_name=e.data is not None)
        if reason is None and looks_like_pack(data):
            reason = "written by ctx-pack"
        if reason is not None:
            return self._skip(e.label, reason, counts)
        return True

    def _left_out_by_name(
        self, e, counts: dict[str, int], asked: bool
    ) -> tuple[bool, str | None]:
        """Whether a candidate goes by its name alone (an --exclude, a catalogue, a lock
        file...: such a file is never read), and what the user's filter said of it."""
        if e.named:
            return False, None
        said = self._user_filter(e, counts)
        if said is not None:
            return said == "excluded", said
        if e.data is not None or asked:
            return False, None  # (a handle: judged by its content and label in _keep)
        reason = noise_by_name(e.label)
        return reason is not None and not self._skip(e.label, reason, counts), None

    def _user_filter(self, e, counts: dict[str, int]) -> str | None:
        """ "excluded" (by --exclude or .ctxignore: counted in COUNTS), "included" (by
        --include), or None when the user's filter says nothing of E."""
        filt = self.filt
        if filt is not None and filt.excluded(e.label):
            counts["excluded"] = counts.get("excluded", 0) + 1
            return "excluded"
        if filt is not None and filt.included(e.label):
            return "included"
        return None

    def _skip(self, label: str, reason: str, counts: dict[str, int]) -> bool:
        counts[reason] = counts.get(reason, 0) + 1
        self.skipped.append(Drop(quote_name(label), reason))
        return False

    def _sources(self) -> list:
        from ctxtools.retrieval.pointers import task_hits
        from ctxtools.retrieval.rank import Source

        counts: dict[str, int] = {}
        out = []
        progress = self.req.progress
        total = len(self.entries)
        vocabs = self._vocab_cache()
        # (what the ranking asks of every file's bytes; the files are let go till then)
        needles = tuple(m.encode("utf-8", "replace") for m in self.query.messages)
        # The files the task names by path or name: the noise rules (generated, data,
        # lock file...) yield to it as to --include; the user's --exclude does not.
        asked_for = set(task_hits(list(self.entries), self.query))
        for done, label in enumerate(sorted(self.entries), 1):
            if progress is not None and (done % 64 == 0 or done == total):
                progress(done, total)
            e = self.entries[label]
            if e.deleted:
                continue
            asked = label in asked_for
            gone, said = self._left_out_by_name(e, counts, asked)
            if gone:
                continue
            data = self._read(e)
            if data is None or not self._keep(e, data, counts, said, asked):
                continue
            src = Source(label, data, None, e.named, changed_lines(e.diff))
            if vocabs is not None and e.path is not None and e.data is None:
                src.vocab = vocabs.get(label, e.path, data, e.stat)
                src.vocab_of = data
                src.path = e.path
                src.release(needles)  # (read again if it is ranked chunk by chunk)
            out.append(src)
        if vocabs is not None:
            vocabs.save()
        for reason, n in sorted(counts.items()):
            how = "--include GLOB to pack them"
            if reason == "excluded":  # the user's own rule: --include does not undo it
                how = "--exclude or .ctxignore"
            self.base_notes.append(Note(f"left out {n:,} file(s): {reason} ({how})"))
        return out

    def _vocab_cache(self):
        """The store's vocabularies of the root's files, for a pack of more than a few
        (None for a handful of files, which are counted as fast as they are looked up)."""
        if len(self.entries) < VOCAB_MIN_FILES:
            return None
        from ctxtools.retrieval.vocab import VocabCache

        try:
            return VocabCache(self.req.store, self.root)
        except (CtxError, OSError):
            return None

    def _defs(self, docs_labels: set[str]) -> dict[str, tuple]:
        """Definitions of the files LABELS: the scan cache's, else scanned now."""
        from ctxtools.retrieval.window import definitions_of
        from ctxtools.source.scan import language_for, script_language, script_name

        by_label = self._by_label  # a script's language is its #! line's (bin/deploy)
        wanted = {
            lab
            for lab in docs_labels
            if language_for(lab)
            or (script_name(lab) and script_language(lab, _released(by_label[lab])))
        }
        out: dict[str, tuple] = {}
        known = self.map_defs
        for lab in wanted:
            e = self.entries[lab]
            if lab in known and e.path is not None and e.data is None:
                out[lab] = tuple(known[lab])
        wanted -= set(out)
        cache, self._scan_cache = self._scan_cache, None
        found = _looked_up(cache, wanted, self.entries)  # (in the map's child, which holds it)
        job = cache if hasattr(cache, "look_up") else None
        if job is not None:
            cache = None
        if found is None and cache is None and wanted:
            if job is not None:  # (the child writes the scan cache after it posts the
                with contextlib.suppress(Exception):  # definitions: read, and written
                    job.result()  # here, once it has -- not beside it)
            cache = _open_scan_cache(self.root, self.req.store)
        for lab in sorted(wanted):
            e = self.entries[lab]
            src = by_label[lab]
            defs = found.get(lab) if found is not None else None
            if cache is not None and e.path is not None and e.data is None:
                defs = _cached_defs(cache, lab, e.path, src.data, e.stat)
            if defs is None:
                defs = definitions_of(lab, src.data)
            out[lab] = defs
            src.release()  # (when it was let go before: read again only for its definitions)
        if cache is not None:
            _keep_scans(cache)
        return out

    def _rank(self, reach: set[str]) -> None:
        # Definitions are needed only where a term, path, frame or message reaches (REACH),
        # or a commit citing the task's tickets (the history's, waited for then).
        signal = self._history() if self.query.refs else None
        if signal is not None and signal.linked:
            reach = reach | (signal.linked_files & self._by_label.keys())
        defs = self._defs(reach)
        for s in self.sources:
            s.defs = defs.get(s.label)
        self._rerank()
        self._missing_paths()

    def _rerank(self) -> None:
        from ctxtools.retrieval.rank import rank_sources, with_unreached

        self.ranking = self.docs = None  # (a ranking again: the last one is let go first)
        self.ranking = rank_sources(
            self.sources, self.query, fallback=self.map_ranks, semantic=True,
            store=self.req.store, history=self._history(),
        )
        for said in (self.ranking.note, self._signal and self._signal.note):
            if said:  # e.g. the semantic extra is missing; git took too long
                note = Note.parse(said)
                if note not in self.base_notes:
                    self.base_notes.append(note)
        if self.sig_mode:
            missing = [s for s in self.sources if s.defs is None]
            if missing:
                defs = self._defs({s.label for s in missing})
                for s in missing:
                    s.defs = defs.get(s.label, ())
            with_unreached(self.ranking, self.sources, self.map_ranks)
        self.docs = self.ranking.docs

    def _history(self):
        """The repository history's signal for this task (``retrieval.history``), or None."""
        if self._signal is None and self._pending is not None:
            self._signal, self._pending = self._pending.result(), None
        return self._signal

    def _missing_paths(self) -> None:
        """A path the task names that no candidate is: a warning with the closest names."""
        import difflib

        labels = [s.label for s in self.sources]
        split = [lab.split("/") for lab in labels]
        names = sorted({parts[-1] for parts in split})
        said = 0
        left_out = None  # the files the listing left out, by name (read once, if asked)
        for p in self.query.paths:
            want = [x for x in p.strip("/").split("/") if x and x != "."]
            if not want or "." not in want[-1]:
                continue
            need = min(len(want), 2)  # an absolute path from elsewhere: its last two parts
            if any(parts[-need:] == want[-need:] for parts in split):
                continue  # there, if perhaps under more than one directory
            if left_out is None:
                left_out = _left_out_by_listing(self.root)
            left = _named_in(left_out, want)
            if left:
                said += 1
                if said <= MISSING_WARNINGS:
                    where = ", ".join(quote_name(q) for q, _ in left[:3])
                    self.base_notes.append(Note(
                        f"the task names {_shown_path(p)}, which the listing leaves out as "
                        f"{left[0][1]} ({where}): name it as a PATH, or --include it, to "
                        "pack it", "warning"))
                continue
            same = [lab for lab, parts in zip(labels, split, strict=True) if parts[-1] == want[-1]]
            if same:
                close = difflib.get_close_matches(p, same, n=3, cutoff=0.0)
            else:
                close = difflib.get_close_matches(want[-1], names, n=3, cutoff=0.6)
            hint = f"; closest: {', '.join(close)}" if close else ""
            said += 1
            if said <= MISSING_WARNINGS:
                self.base_notes.append(Note(
                    f"the task names {_shown_path(p)}, which is not among the files{hint}",
                    "warning"))
        if said > MISSING_WARNINGS:
            more = said - MISSING_WARNINGS
            self.base_notes.append(
                Note(f"the task names {more:,} more paths that are not among the files", "warning")
            )

    # -- fitting ------------------------------------------------------------------------
    def fit(self, budget: int) -> FilesFit:
        """The files section in at most about BUDGET tokens: its body, a row per file and
        what it left out (kept as ``fitted``)."""
        from ctxtools.pack.choose_render import render_plan

        while True:
            self.fitted = render_plan(self, budget)
            paths = [r["path"] for r in self.fitted.rows]
            if self.req.allow_secrets or not self._redact(paths):
                return self.fitted

    def _redact(self, labels: list[str]) -> bool:
        from ctxtools.pack.inputs import redact_bytes
        from ctxtools.retrieval.window import definitions_of

        changed = False
        for s in self.sources:
            if s.label not in labels or s.label in self.checked:
                continue
            self.checked.add(s.label)
            e = self.entries[s.label]
            if e.data is not None:
                continue  # handles were redacted when they were read
            red = redact_bytes(s.data, quote_name(s.label), self.req, self.ledger)
            if red is not s.data:
                s.data = red
                s.present = None
                s.defs = definitions_of(s.label, red) if s.defs is not None else None
                changed = True
        if changed:
            self._rerank()
            self._counts.clear()
        return changed


def _released(src) -> bytes:
    """SRC's bytes, let go again after (when they were let go before)."""
    data = src.data
    src.release()
    return data


def _open_scan_cache(root: str, store):
    try:
        from ctxtools.source.scanset import open_cache

        return open_cache(root, store)
    except (CtxError, OSError, ValueError):
        return None


def _cached_defs(cache, rel: str, path: str, data: bytes, stat: tuple | None = None):
    """REL's definitions from the scan cache: by its stat, else by its content's hash (a
    fresh checkout); a file the cache does not hold (past the map's --max-files cut, or
    packed without the map) is scanned here as the map would scan it, and kept, so the next
    pack finds it. STAT: (size, mtime_ns, ctime_ns) as the listing found them (else asked
    of the disk). None when the cache's entry holds no definitions (a skipped file)."""
    from ctxtools.source.scancache import content_hash
    from ctxtools.source.scanset import scan_payload

    if stat is None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        stat = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    size, stamp = stat[0], stat[1:]
    entry = cache.get(rel, size, stamp)
    if entry is None and len(data) == size:  # the whole file as read, not a prefix
        digest = content_hash(data)
        entry = cache.get_by_hash(rel, size, stamp, digest)
        if entry is None:
            entry = cache.put(rel, size, stamp, digest, scan_payload(rel, data))
    defs = getattr(entry.payload, "defs", None) if entry is not None else None
    return tuple(defs) if defs is not None else None


def _looked_up(cache, wanted: set[str], entries) -> dict[str, tuple | None] | None:
    """The definitions of the files WANTED, looked up as ``_cached_defs`` does by the map's
    child when CACHE stands for it (``mapjob.MapJob``); None otherwise, or when the child
    cannot answer (the scan cache is then opened here)."""
    look_up = getattr(cache, "look_up", None)
    if look_up is None:
        return None
    asked = []
    for lab in sorted(wanted):
        e = entries[lab]
        if e.path is not None and e.data is None:
            asked.append((lab, e.path, e.stat))
    return look_up(asked)


def _shown_path(p: str) -> str:
    """A task's path as a warning names it: at most ``SHOWN_PATH`` characters."""
    return p if len(p) <= SHOWN_PATH else f"{p[: SHOWN_PATH // 2]}…{p[-SHOWN_PATH // 2 :]}"


def _left_out_by_listing(root: str) -> dict[str, list[tuple[str, str]]]:
    """The files under ROOT a listing leaves out (vendored, minified), with why, by their
    names (the tree's names are the listing's own, remembered for the pack)."""
    from ctxtools.source.listing import tree_names

    try:
        names = tree_names(root)
    except OSError:
        return {}
    out: dict[str, list[tuple[str, str]]] = {}
    for rel in names:
        why = listing_skip(rel)
        if why is not None:
            out.setdefault(rel[rel.rfind("/") + 1 :], []).append((rel, why))
    return out


def _named_in(left_out: dict[str, list[tuple[str, str]]], want: list[str]) -> list:
    """The files of LEFT_OUT that WANT (a task path's components) names by its last two
    components (its one, for a bare name), sorted."""
    tail = want[-min(len(want), 2) :]
    return sorted(
        (rel, why) for rel, why in left_out.get(want[-1], ())
        if rel.split("/")[-len(tail) :] == tail
    )


def _keep_scans(cache) -> None:
    """Save what the pack added to the scan cache, keeping every entry it did not look at
    (the map's, which its own run saw)."""
    cache.keep(list(cache.entries))
    with contextlib.suppress(OSError):
        cache.save()
