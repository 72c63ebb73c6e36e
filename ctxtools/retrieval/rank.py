"""Ranking files and their chunks against a query.

``rank_sources(sources, query)`` reads each candidate once:

1. a byte search says which of the query's terms can occur in it; a file where none can
   (and that no path, frame or message points at) counts towards the corpus size only;
2. the others are cut into chunks (``chunks.chunk_file``, on the repo map scanners'
   definitions) and each chunk's terms are counted (``terms.Terms``);
3. each term's weight is its query weight times its BM25 rarity over all chunks; a term
   found in most files weighs nothing;
4. a chunk's score is its BM25 plus what points at it directly: its definition's name is
   one the task writes, a stack-trace frame's line or function is in it, a quoted error
   message is one of its literals; a review pack's changed lines are in it;
5. a file's score is its best chunks' (decaying), plus a path the task names, times its
   role's prior (source 1, tests and docs far less unless the task is about them);
6. a chunk's final score mixes its own with its file's, times the prior, so that of two
   equal chunks the one in the file the task is about comes first; the chunks a top chunk
   calls (a definition its words name, in the same file or another) rank up.

Everything is deterministic: ties break on the path and the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import accumulate

from ctxtools.analyzer.query import Query
from ctxtools.retrieval.chunks import Chunk, chunk_file
from ctxtools.retrieval.pointers import frames_by_label, scoped, task_hits
from ctxtools.retrieval.source import Source
from ctxtools.retrieval.terms import Stats, Terms, bm25
from ctxtools.source.classify import role as file_role

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

NAME_BONUS = 2.0  # times the name term's weight
SCOPE_BONUS = 0.6
FRAME_LINE_BONUS = 12.0  # times the best term weight
FRAME_FUNC_BONUS = 6.0
# A function an earlier commit citing the task's ticket touched (``history``'s linked
# functions), times the best term weight, at the most linked function; the others by their
# share of it. Chosen on the 10 linked fixes of the tuning lists (``tune.py --history``, 30
# rows at 8k/16k/32k; up / down against no link, every hunk): 1: 2/0, +1; 1.5: 4/0, +1;
# 2: 4/0, +2; 3: 4/1, 0; 6: 4/1, 0; 12: 4/3, -1 (many linked functions crowd an 8k pack).
# Then on the ticket list pinned after (tune_refs, 45 fixes): 2: 21/5, every hunk 23/23/26
# -> 23/26/28; 1.5: 22/5; 3: 19/9; 6: 19/16; min(weight, 1) unnormalised: 4/8. Its large
# list (tune_refs_large, 25 fixes in trees of 3,000+ files), mixed: 2: 6/3, 10/11/15 ->
# 9/11/14 (two 32k packs lose their fix's second file); 1.5: 4/3; 3: 6/4; 6: 7/6.
REF_BONUS = 2.0
MESSAGE_BONUS = 6.0
CHANGED_BONUS = 1000.0
NAMED_BONUS = 4.0
PATH_BONUS = 4.0
# A file the task names by its name without the extension, as a compound word
# (``0187_auto_20230614_0838``, ``generateHelpers`` for ``generate-helpers.js``:
# ``pointers.stem_hits``): this share of the bonus of a path whose last part it matches.
# 0: such a file is reached (read chunk by chunk) but gains nothing. Tuned on dev + the
# three tuning lists, 8k/16k/32k: 1.0 moved 4 tasks, 2 up and 2 down (a Java or TypeScript
# class's name is its file's, and tasks name classes they do not fix); 0.5 lost 3 cells.
STEM_SHARE = 0.0
FILE_DECAY = (1.0, 0.5, 0.25)
FILE_MIX = 0.3
CALLEE_SHARE = 0.3
CALLEE_TOP = 8
CALLEE_DOCS = 100  # the files whose definitions a best chunk's call may rank up
COMMON_FILE_SHARE = 0.6  # a term in more than this share of the files weighs nothing
COMMON_SUBSTRING_SHARE = 0.8  # a file holding only such terms is not counted at all
# What a word of a chunk's path or class name counts for in the chunk (tuned: 2 against 1
# gave dev 16k 0.80 -> 0.86 and the tuning set 0.687 -> 0.691, every hunk 55% -> 57%).
CONTEXT_TF = 2
# What the whole file's BM25 (the first pass's, against the best file's) adds to its score,
# times the best term weight: the evidence spread over a file, not only in its best three
# chunks (tuned on dev + tune, 8k/16k/32k: 0 gave tune 0.581/0.639/0.660, 0.5 gave
# 0.600/0.639/0.663, 1.0 0.592/0.639/0.668, 3 0.577/0.631/0.659; dev unchanged at 0.5).
FIRST_MIX = 0.5
# A file inside the scope a commit-style subject opens with ("tsdb: fix ...", "fix(toml): ...")
# weighs SCOPE_PRIOR times as much (``pointers.scoped``).
# Tuned on dev + tune (12 of its 54 tasks open with a scope): 1.5 moved one task up (hugo
# 04dc469: 8k 0 -> 0.29, 32k 0.29 -> 0.86) and none down; 2.5 cost scipy 00d5e40 its 8k
# pack, 4 cost the set 0.05 of recall at every budget.
SCOPE_PRIOR = 1.5
# The semantic signal (ctxtools.retrieval.semantic.rerank; prose-only tasks, the 'semantic'
# extra installed): what a chunk's cosine above the median counts, in best term weights.
# It was 4 when chosen; measured again once the history signal and the floor's reference
# had landed (tune.py --history on the seven tuning lists, 280 fixes at 8k / 16k / 32k;
# only prose-only tasks can move), a lighter weight did better. Task-budget rows up / down
# against 4, and every-hunk rows of 840: 0 -> 21 / 10, 473; 1 -> 13 / 4, 472; 2 -> 11 / 4,
# 471; 3 -> 5 / 4, 468; 4 -> 469; 8 -> 4 / 23, 463 (mean line recall 0.692 at 0 and 1,
# 0.689 at 4). 1 keeps nearly all that 0 gains and loses fewest.
SEMANTIC_WEIGHT = 1.0
FILE_TOP = 250  # files read chunk by chunk (besides those a path, frame or name reaches)
ROLE_PRIOR = {"source": 1.0, "test": 0.35, "docs": 0.3, "example": 0.5, "config": 0.5}
ROLE_PRIOR_ASKED = {"test": 0.9, "docs": 0.9, "example": 0.8, "config": 0.8}
_ASKS = {
    "test": ("test", "tests", "pytest", "unittest", "testcase", "fixture", "fixtures"),
    "docs": ("doc", "docs", "documentation", "docstring", "readme", "typo", "sphinx"),
    "example": ("example", "examples", "demo", "tutorial"),
    "config": ("config", "configuration", "settings", "toml", "yaml", "ini", "ci"),
}


@dataclass
class Doc:
    """A ranked file: its lines, chunks, their scores, and why it ranks where it does."""

    label: str
    role: str
    lines: list[str]
    chunks: list[Chunk]
    scores: list[float]
    defs: tuple
    imports: tuple[int, ...] | None  # None until first asked for (plan.doc_imports)
    named: bool = False
    changed: frozenset[int] = frozenset()
    score: float = 0.0
    prior: float = 1.0
    mix: float = 0.0  # what every chunk's score holds of its file's (prior * FILE_MIX * file)
    why: list[str] = field(default_factory=list)
    matched: list[str] = field(default_factory=list)
    tfs: list[dict] = field(default_factory=list, repr=False)
    # each chunk's score in parts, for --explain: (words: its BM25, pointers: names, frames,
    # messages, changes, file: its share of the file's score, callees: what the best call)
    parts: list[list[float]] = field(default_factory=list, repr=False)


@dataclass
class Ranking:
    docs: list[Doc]  # best first
    blind: list[str]  # candidates no term, path, frame or message could reach
    weights: dict[str, float]  # term -> final weight (idf included)
    query: Query
    rest: list[str] = field(default_factory=list)  # reached, but not read chunk by chunk
    note: str | None = None  # e.g. the semantic extra is missing
    best_weight: float = 1.0  # the best weight of a term some file holds (``best_weight``)


def _priors(query: Query) -> dict[str, float]:
    """Each role's prior: raised for the roles the task asks for in its prose. A role word
    inside a name (``test_prefetch_redirect_bug``, ``RequestsTestSuite``) points at that
    name, not at the role: a task that names a failing test is not asking to see tests."""
    prior = dict(ROLE_PRIOR)
    for role, words in _ASKS.items():
        if any(w in query.prose for w in words):
            prior[role] = max(prior[role], ROLE_PRIOR_ASKED[role])
    return prior


def _lines_of(data: bytes) -> list[str]:
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" not in text:
        return lines
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _message_lines(data: bytes, messages, spread: dict[str, int]) -> list[tuple[int, float]]:
    """(line, weight) of each message fragment DATA holds: a fragment found in N files
    weighs 1/N (a message only one file can print says the most)."""
    out = []
    for frag in messages:
        pos = data.find(frag.encode("utf-8", "replace"))
        if pos >= 0:
            out.append((data.count(b"\n", 0, pos) + 1, 1.0 / max(spread.get(frag, 1), 1)))
    return out


def _new_doc(src: Source) -> Doc:
    """The Doc of SRC: its lines cut into chunks, no score yet."""
    lines = _lines_of(src.data)
    chunks = chunk_file(lines, src.defs or ())
    role = src.role or file_role(src.label)
    doc = Doc(src.label, role, lines, chunks, [0.0] * len(chunks), src.defs or (), None)
    doc.named = src.named
    doc.changed = src.changed
    return doc


def _context_terms(terms: Terms, text: str) -> dict[int, int]:
    """The query terms the words of TEXT (a path, a class's name) stand for, once each."""
    out: dict[int, int] = {}
    for word in _NAME_RE.findall(text):
        for i in terms.ids_of(word.encode()):
            out[i] = CONTEXT_TF
    return out


def _read(src: Source, terms: Terms, stats: Stats):
    """The Doc of SRC, its chunks counted into STATS; and the chunks' lengths in words.
    Each chunk also counts the words of its file's path and of the class it is in
    (``CONTEXT_TF`` times each): a method of ``CacheHandler`` in ``core/cache/backends/base.py``
    is about caching though its own lines may never say so."""
    present = src.present if src.present is not None else [1]
    doc = _new_doc(src)
    lines, chunks = doc.lines, doc.chunks
    seen: set[int] = set()
    lengths = []
    path_tf = _context_terms(terms, src.label) if CONTEXT_TF else {}
    scopes: dict[str, dict[int, int]] = {}
    # The lines as one text (the chunks' bytes are slices of it), counted at once.
    text = "\n".join(lines).encode("utf-8", "surrogateescape")
    at = [0, *accumulate(map((1).__add__, map(len, text.split(b"\n"))))]
    spans = [(at[ch.start - 1], at[ch.end] - 1) for ch in chunks]
    if not present:
        counted = [({}, (b - a) // 6) for a, b in spans]
    else:
        counted = _count(src, terms, text, spans)
    for ch, (tf, length) in zip(chunks, counted, strict=True):
        extra = path_tf
        if CONTEXT_TF and ch.scope:
            if ch.scope not in scopes:
                scopes[ch.scope] = {**path_tf, **_context_terms(terms, ch.scope)}
            extra = scopes[ch.scope]
        for i, c in extra.items():
            tf[i] = tf.get(i, 0) + c
        doc.tfs.append(tf)
        lengths.append(length)
        stats.add(tf, length)
        seen.update(tf)
    doc.matched = [terms.terms[i] for i in sorted(seen)]
    return doc, lengths


def _count(src: Source, terms: Terms, text: bytes, spans) -> list:
    """``terms.count_spans(TEXT, SPANS)``: from the words the corpus says SRC holds when
    TEXT is SRC's bytes as its vocabulary counted them (not redacted since, valid UTF-8:
    the same words), else by cutting TEXT into its words."""
    data = src.data
    if src.vocab_of is data and len(data) - len(text) in (0, 1) and data.startswith(text):
        words = terms.hit_words(src.vocab)
        if words is not None:
            return terms.count_known(text, spans, words)
    return terms.count_spans(text, spans)


def _chunk_at(doc: Doc, line: int) -> int:
    for k, ch in enumerate(doc.chunks):
        if ch.start <= line <= ch.end:
            return k
    return -1


def _direct_bonuses(doc: Doc, src_data: bytes, ctx, wmax: float, name_w, frames):
    """Bonuses of DOC's chunks for what points at them: names, frames, messages, changes,
    the task's tickets."""
    bonus = [0.0] * len(doc.chunks)
    if ctx.linked_top and doc.label in ctx.linked:
        _ref_bonuses(doc, ctx, wmax, bonus)
    for k, ch in enumerate(doc.chunks):
        if ch.name and ch.kind in ("def", "class", "part"):
            w = name_w(ch.name.lower())
            if w:
                bonus[k] += NAME_BONUS * w * (1.0 if ch.kind != "part" or not ch.head else 0.5)
        if ch.scope:
            w = name_w(ch.scope.rsplit(".", 1)[-1].lower())
            if w:
                bonus[k] += SCOPE_BONUS * w
        if doc.changed and any(ch.start <= n <= ch.end for n in doc.changed):
            bonus[k] += CHANGED_BONUS
    for fr in frames:
        if fr.line:
            k = _chunk_at(doc, fr.line)
            if k >= 0:
                bonus[k] += FRAME_LINE_BONUS * wmax
                doc.why.append(f"stack frame line {fr.line}")
        if fr.function:
            for k, ch in enumerate(doc.chunks):
                if ch.name == fr.function:
                    bonus[k] += FRAME_FUNC_BONUS * wmax
    query = ctx.query
    if query.messages:
        for line, weight in _message_lines(src_data, query.messages, ctx.spread):
            k = _chunk_at(doc, line)
            if k >= 0:
                bonus[k] += MESSAGE_BONUS * wmax * weight
                doc.why.append(f"error message at line {line}")
    return bonus


def _ref_bonuses(doc: Doc, ctx, wmax: float, bonus: list[float]) -> None:
    """Add to BONUS what the history's commits citing the task's tickets say of DOC's
    chunks (``REF_BONUS``), and say which commits in ``doc.why``."""
    from ctxtools.retrieval.history import commit_label, last_name

    sig = ctx.history
    seen: set[int] = set()
    doc.tickets = [0.0] * len(doc.chunks)  # (its part of a chunk's pointers, for --explain)
    for k, ch in enumerate(doc.chunks):
        key = (doc.label, last_name(ch.name)) if ch.name else None
        x = sig.linked.get(key) if key else None
        if x:
            doc.tickets[k] = REF_BONUS * wmax * x / ctx.linked_top
            bonus[k] += doc.tickets[k]
            seen.update(sig.linked_by.get(key, ()))
    if seen:
        named = ", ".join(commit_label(sig.linked_commits[i]) for i in sorted(seen)[:3])
        more = f" and {len(seen) - 3} more" if len(seen) > 3 else ""
        doc.why.append(f"its functions changed by past commits citing the task's tickets: "
                       f"{named}{more}")


def _present(src: Source, terms: Terms) -> bool:
    corpus = getattr(src.vocab, "corpus", None)
    if not len(terms):
        src.present = []
    elif corpus is not None:
        src.present = terms.scan_corpus(corpus)[0].get(src.vocab.slot, [])
    elif src.vocab is not None:
        src.present = terms.present_vocab(src.vocab)
    else:
        src.present = terms.present(src.data.lower())
    return bool(src.present)


def _pointed(sources: list[Source], query: Query, linked: frozenset[str] = frozenset()):
    """What points at SOURCES besides their words: (label -> task paths matched, label ->
    frames, label -> whether the user named it, it changed, or a path, frame, message or
    a commit citing the task's tickets (LINKED: the files of its functions) points at it)."""
    labels = [s.label for s in sources]
    hits = task_hits(labels, query, STEM_SHARE)
    frames = frames_by_label(labels, query)
    msg_bytes = [m.encode("utf-8", "replace") for m in query.messages]
    reached = {
        s.label: bool(
            s.named
            or s.changed
            or s.label in hits
            or s.label in frames
            or s.label in linked
            or any(s.holds(m) for m in msg_bytes)
        )
        for s in sources
    }
    return hits, frames, reached


def reachable(sources: list[Source], query: Query) -> set[str]:
    """The labels of SOURCES that a term, a path, a frame or a message can reach (the
    files ``rank_sources`` reads, and so the ones whose definitions matter)."""
    terms = Terms.of(query)
    _paths, _frames, reached = _pointed(sources, query)
    return {s.label for s in sources if reached[s.label] or _present(s, terms)}


def rank_sources(
    sources: list[Source],
    query: Query,
    fallback: dict[str, float] | None = None,
    semantic: bool = False,
    store=None,
    history=None,
) -> Ranking:
    """Rank SOURCES against QUERY (see the module's docstring). When nothing in the query
    reaches any source (a task of plain words that occur nowhere), the files are ranked
    by FALLBACK (label -> the repo map's rank) instead, so a pack is still built. SEMANTIC:
    add the semantic part for a prose-only task (``semantic.rerank``; ctx-pack asks), its
    vectors kept in STORE (an explicit store root, as ``config.store_root`` takes it).
    HISTORY: the repository history's signal (``history.read_signal``; ctx-pack reads it
    for a root in a git work tree), its part added to the chunks it touched."""
    ranking = _rank(sources, query, history)
    if semantic and SEMANTIC_WEIGHT and query.words:  # the semantic hook (ctx-pack's), prose only
        from ctxtools.retrieval.semantic import rerank

        ranking.note = rerank(ranking, SEMANTIC_WEIGHT, store=store)
    if history is not None and (history.touched or history.recent):
        from ctxtools.retrieval.history import apply

        apply(ranking, history)
    if fallback is None or any(d.score > 0 for d in ranking.docs):
        return ranking
    return _by_fallback(sources, query, fallback)


FALLBACK_DOCS = 200


def with_unreached(ranking: Ranking, sources: list[Source], fallback: dict[str, float]) -> None:
    """RANKING's docs followed by the best ``FALLBACK_DOCS`` sources nothing reached, by
    FALLBACK (the repo map's rank): what a signatures-only pack lists after the matches."""
    wanted = set(ranking.blind) | set(ranking.rest)
    extra = _by_fallback([s for s in sources if s.label in wanted], ranking.query, fallback)
    low = min((d.score for d in ranking.docs), default=1.0)
    for d in extra.docs:
        d.score *= 1e-6 * low
        d.scores = [x * 1e-6 * low for x in d.scores]
    ranking.docs.extend(extra.docs)
    taken = {d.label for d in extra.docs}
    ranking.blind = [lab for lab in ranking.blind if lab not in taken]
    ranking.rest = [lab for lab in ranking.rest if lab not in taken]


def _by_fallback(sources: list[Source], query: Query, fallback: dict[str, float]) -> Ranking:
    docs = []
    best = sorted(sources, key=lambda s: (not s.named, -fallback.get(s.label, 0.0), s.label))
    for src in best[:FALLBACK_DOCS]:
        doc = _new_doc(src)
        chunks = doc.chunks
        base = fallback.get(src.label, 0.0) * (
            ROLE_PRIOR.get(doc.role, 1.0) if not src.named else 1.0
        )
        doc.score = base + (NAMED_BONUS if src.named else 0.0) + 1e-9
        n = max(len(chunks), 1)
        doc.scores = [doc.score / n] * len(chunks)
        doc.why.append("ranked by the repository map (nothing in the task matched)")
        docs.append(doc)
    docs.sort(key=lambda d: (-d.score, d.label))
    return Ranking(docs, [], {}, query, [])


def _rank(sources: list[Source], query: Query, history=None) -> Ranking:
    terms = Terms.of(query)
    linked = history.linked_files if history is not None and history.linked else frozenset()
    for src in sources:
        if not src.role:
            src.role = file_role(src.label)
    hits, frames, reached = _pointed(sources, query, linked)
    msg_bytes = [m.encode("utf-8", "replace") for m in query.messages]
    inside = scoped([s.label for s in sources], query) if SCOPE_PRIOR != 1.0 else set()
    kept, rest, blind, stats = _first_pass(sources, terms, query, reached, inside)
    docs: list[Doc] = []
    datas: dict[str, bytes] = {}
    lens: dict[str, list[int]] = {}
    for src in kept:
        doc, doc_lens = _read(src, terms, stats)
        docs.append(doc)
        datas[doc.label] = src.data
        lens[doc.label] = doc_lens
    weights = _weights(terms, query, stats)
    spread = {
        m: sum(1 for s in sources if s.holds(b))
        for m, b in zip(query.messages, msg_bytes, strict=True)
    }
    best = best_weight(weights, stats)
    ctx = _Context(weights, terms, query, stats, hits, frames, spread, inside, best, history,
                   linked, max(history.linked.values()) if linked else 0.0)
    _score(docs, datas, lens, ctx)
    docs.sort(key=lambda d: (-d.score, d.label))
    named_weights = {terms.terms[i]: w for i, w in enumerate(weights)}
    return Ranking(docs, blind, named_weights, query, rest, best_weight=best)


def best_weight(weights: list[float], stats: Stats) -> float:
    """The unit the bonuses (and the semantic part) count in: the best weight of a term some
    file holds (else of any). A term no file holds weighs the most and scores nothing: a
    name the fix adds, a hash or a typo made every bonus weigh more against BM25."""
    held = [w for i, w in enumerate(weights) if stats.file_df.get(i, 0)] or weights
    return max(held, default=1.0) or 1.0


@dataclass
class _Context:
    weights: list[float]
    terms: Terms
    query: Query
    stats: Stats
    path_hits: dict
    frames: dict
    spread: dict  # message fragment -> how many sources hold it
    inside: set  # the labels inside the task's scope (``scoped``)
    best: float  # ``best_weight``
    history: object = None  # the history's Signal (its linked functions), or None
    linked: frozenset[str] = frozenset()  # the files of its linked functions
    linked_top: float = 0.0  # the most weight of a linked function (0: none)


def _common_terms(sources: list[Source]) -> set[int]:
    """The terms whose text occurs in more than ``COMMON_SUBSTRING_SHARE`` of the sources
    (a byte search, so an upper bound of the files that hold them as words)."""
    if len(sources) < 10:
        return set()
    seen: dict[int, int] = {}
    for s in sources:
        for i in s.present or ():
            seen[i] = seen.get(i, 0) + 1
    limit = COMMON_SUBSTRING_SHARE * len(sources)
    return {i for i, n in seen.items() if n > limit}


def _first_pass(sources, terms: Terms, query: Query, reached: dict[str, bool], inside: set[str]):
    """File-level BM25 over every source a term reaches: the best ``FILE_TOP`` (and all
    that a path, frame, message, name or change reaches) are read chunk by chunk; the
    others count towards the corpus statistics only. Returns (the sources to read, the
    reachable ones left, best first, the ones nothing reaches, the chunk statistics)."""
    fstats = Stats(files=len(sources))
    first = []
    blind: list[str] = []
    for src in sources:
        if src.present is None:
            _present(src, terms)
    common = _common_terms(sources)
    for src in sources:
        present = src.present
        if not reached[src.label] and all(i in common for i in present):
            # Nothing but terms most files hold (they weigh nothing): not worth counting.
            blind.append(src.label)
            fstats.add_blind(1, src.size() // 6)
            for i in present:
                fstats.df[i] += 1
            continue
        if not present:
            tf, n = {}, src.size() // 6
        else:
            vocab = src.vocab
            if vocab is None:
                tf, n = terms.count(src.data)
            elif vocab.corpus is not None:
                tf, n = dict(terms.scan_corpus(vocab.corpus)[1].get(vocab.slot, {})), vocab.n
            else:
                tf, n = terms.count_vocab(vocab)
        fstats.add(tf, n)
        first.append((src, tf, n))
    fw = _weights(
        terms, query, Stats(fstats.units, fstats.total_len, fstats.df, fstats.df, fstats.files)
    )
    prior = _priors(query)
    scored = sorted(
        (
            (bm25(tf, n, fw, fstats) * prior.get(src.role, 1.0)
             * (SCOPE_PRIOR if src.label in inside else 1.0), src.label, src, tf, n)
            for src, tf, n in first
        ),
        key=lambda t: (-t[0], t[1]),
    )
    stats = Stats(files=len(sources))
    stats.file_df = fstats.df
    best_first = scored[0][0] if scored and scored[0][0] > 0 else 1.0
    stats.first = {label: fs / best_first for fs, label, *_rest in scored[:FILE_TOP]}
    kept, rest = [], []
    for rank_no, (_fs, label, src, tf, n) in enumerate(scored):
        if rank_no < FILE_TOP or reached[label]:
            kept.append(src)
        else:
            rest.append(label)
            stats.add_blind(max(1, len(src.defs or ()) or n // 300 + 1), n)
            for i in tf:
                stats.df[i] += 1
    blind_set = set(blind)
    for src in sources:
        if src.label in blind_set:
            stats.add_blind(
                max(1, len(src.defs or ()) or src.line_breaks() // 40 + 1), src.size() // 6
            )
    kept.sort(key=lambda s: s.label)
    return kept, rest, blind, stats


def _weights(terms: Terms, query: Query, stats: Stats) -> list[float]:
    out = []
    for i, t in enumerate(terms.terms):
        share = stats.file_df.get(i, 0) / max(stats.files, 1)
        if share > COMMON_FILE_SHARE and stats.files >= 10:
            out.append(0.0)
            continue
        out.append(query.terms[t] * stats.idf(i))
    return out


def _score(docs, datas, lens, ctx: _Context) -> None:
    weights, query, stats = ctx.weights, ctx.query, ctx.stats
    wmax = ctx.best
    ids = ctx.terms.ids

    def name_w(name: str) -> float:
        if name not in query.names:
            return 0.0
        i = ids.get(name)
        return weights[i] if i is not None and weights[i] else 0.5 * wmax

    prior = _priors(query)
    for doc in docs:
        base = [bm25(tf, n, weights, stats) for tf, n in zip(doc.tfs, lens[doc.label], strict=True)]
        frames = ctx.frames.get(doc.label, ())
        bonus = _direct_bonuses(doc, datas[doc.label], ctx, wmax, name_w, frames)
        doc.scores = [a + b for a, b in zip(base, bonus, strict=True)]
        top = sorted(doc.scores, reverse=True)[: len(FILE_DECAY)]
        fs = sum(s * d for s, d in zip(top, FILE_DECAY, strict=False))
        if ctx.path_hits.get(doc.label):
            fs += PATH_BONUS * wmax * ctx.path_hits[doc.label]
            doc.why.append("path named in the task")
        if doc.named:
            fs += NAMED_BONUS * wmax
        if FIRST_MIX:
            fs += FIRST_MIX * wmax * stats.first.get(doc.label, 0.0)
        doc.prior = 1.0 if (doc.named or doc.changed) else prior.get(doc.role, 1.0)
        if doc.label in ctx.inside:
            doc.prior *= SCOPE_PRIOR
            doc.why.append("inside the task's scope")
        doc.score = fs * doc.prior
        doc.mix = doc.prior * FILE_MIX * fs
        doc.scores = [doc.prior * s + doc.mix for s in doc.scores]
        doc.parts = [
            [doc.prior * a, doc.prior * b, doc.mix, 0.0] for a, b in zip(base, bonus, strict=True)
        ]
    from ctxtools.retrieval.callees import raise_callees

    raise_callees(docs, CALLEE_TOP, CALLEE_DOCS, CALLEE_SHARE)
