"""Ranking the scanned files: a file graph, PageRank, definition scores, and the graph memo.

``rank_scans`` builds the graph of a ``ScanSet`` (``graph``), ranks its files and
definitions, and gives the ranked files ``render`` lays out. With the graph memo
(``records.GraphState``), an edit re-links only the files it concerns and an unchanged
graph keeps its ranking; every part is what a cold build computes, so the result is the
same bytes.

PageRank is a plain power iteration (damping 0.85, at most 100 rounds, stop when the L1
change is below 1e-7), deterministic: files are numbered in path order and every sum runs
in a fixed order. Every file also has a virtual edge of weight BASE_OUT back to the
teleport vector, so a module that uses little of the repository passes on little of its
rank. The teleport vector is uniform unless ``--focus`` files or ``--query`` matches pull
it their way. ``centrality`` then multiplies PageRank by the breadth of use (how many files
really use a file). Definitions are scored by the rank that flows into them: each using
file passes its rank along its out-edges, and the share carried by an identifier is
credited to that identifier's definition in the target file.
"""

from __future__ import annotations

import re
import sys
from operator import mul, sub
from typing import TYPE_CHECKING

from ctxtools.fsutil import json_text
from ctxtools.source.classify import is_test

if TYPE_CHECKING:
    from ctxtools.repomap.graph import Graph
    from ctxtools.source.scanset import FileScan

DAMPING = 0.85
MAX_ITER = 100
TOLERANCE = 1e-7
FOCUS_SHARE = 0.9
BASE_OUT = 10.0  # weight of every file's virtual edge to the teleport vector (see pagerank)
USER_SHARE = 0.002  # a use carrying less of its file's out-weight does not make a "user"

_CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type", "record"})


def _rank(graph, personal: list[float] | None, plain: tuple | None = None):
    """(rank, file scores, definition scores) of GRAPH. PLAIN is the unpersonalised
    (rank, file scores) of this very graph when a memo has them (spares one PageRank)."""
    if plain is not None:
        rank, score = plain
    else:
        rank = pagerank(graph.out)
        score = centrality(graph, rank)
        # Tests and test data use everything and are used by little but each other: a
        # map is for the code under test, so they step back (still ranked, still shown).
        tests = [is_test(f) for f in graph.files]
        score = [x * TEST_WEIGHT if t else x for x, t in zip(score, tests, strict=True)]
    if personal is not None:
        # Relevance times centrality: how much --focus/--query lift a file's PageRank.
        prank = pagerank(graph.out, personal)
        score = [s * p / r if r > 0 else 0.0 for s, p, r in zip(score, prank, rank, strict=True)]
        total = sum(score)
        score = [x / total for x in score] if total > 0 else score
        rank = prank
    return rank, score, definition_scores(graph, rank)


def _graph_state(memo, ss):
    """The graph memo's ``GraphState`` when it was made for the same files (its ranking
    None when that does not fit them)."""
    if memo is None or ss.digests is None:
        return None
    state = memo.get(_graph_key())
    n = len(ss.scans)
    if state is None or not (len(state.files) == n == len(state.digests) == len(state.parts)):
        return None
    if state.files != tuple(s.rel for s in ss.scans):
        return None  # a file came or went: every index moved, build anew
    r = state.ranking
    if r is not None and not all(
        isinstance(x, (list, tuple)) and len(x) == n for x in (r.rank, r.score, r.dscores, r.out)
    ):
        state = state._replace(ranking=None)
    return state


def _graph_key() -> str:
    from ctxtools.repomap.records import code_fingerprint

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


def _update_graph(ss, state):
    """(builder, contributions, new parts, changed?) from the memo's STATE: only the files
    whose content changed are recomputed, and the files that use a name whose definitions
    changed (added, removed, of another kind). The definitions a file had are the scan
    cache's replaced entry. CONTRIBUTIONS is a function giving every file's (imports' part,
    contribution), called only when the graph is really wanted. Raises on anything that
    does not fit."""
    from ctxtools.repomap.graph import GraphBuilder, defined_weights
    from ctxtools.source.scancache import ScanPayload
    from ctxtools.source.scanset import FileScan

    scans, digests = ss.scans, ss.digests
    old_digests, parts = state.digests, state.parts
    edited = [i for i, d in enumerate(digests) if d != old_digests[i]]
    renamed: set[str] = set()  # names whose definers or kind weight may have changed
    old_imports = {}
    for i in edited:
        s = scans[i]
        old = ss.replaced[s.rel]  # KeyError: the memo is older than the cache
        payload = old.payload
        if old.digest != old_digests[i] or not isinstance(payload, ScanPayload):
            raise ValueError("graph memo out of step with the scan cache")
        old_imports[i] = (payload.language, payload.imports)
        new_w = defined_weights(s)
        old_w = defined_weights(FileScan(s.rel, payload.language, payload.defs))
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


def old_refs(ss, i: int) -> tuple:
    """(reference names, counts) file I had when its memo entry was written."""
    s = ss.scans[i]
    old = ss.replaced.get(s.rel)
    if old is not None and ss.digests[i] != old.digest:
        return old.payload.names, old.payload.counts
    return s.ref_names, s.ref_counts


def rank_scans(
    ss,
    focus: list[str] | tuple[str, ...] = (),
    query: str | None = None,
    memo=None,
):
    """(ranked files in rank order, query identifiers, edges summary) for a ScanSet.

    MEMO (a ``source.memo.Memo`` of ``GraphState``) keeps the graph of the last run file by file
    (each file's imports, out-edges and uses, keyed by its content hash) and its
    unpersonalised ranking. After an edit, only the edited files and the files using a
    name whose definitions changed are recomputed; when no edge changed, the ranking is
    reused as it is. Every file's part is computed as a cold build computes it, so the
    result is the same."""
    from ctxtools.repomap.graph import build_graph_parts
    from ctxtools.repomap.records import GraphState, Ranking

    scans = ss.scans
    personal, idents = personalisation(scans, set(focus), query)
    state = _graph_state(memo, ss)
    graph = parts = ranking = None
    changed = True
    if state is not None:
        try:
            graph, parts, ranking, changed = _graph_from_memo(ss, state, personal)
        except Exception:  # a part that does not decode as this code wrote it: build anew
            state = graph = parts = ranking = None
            changed = True
    if graph is None:
        graph, imports, contributions = build_graph_parts(scans)
        if memo is not None and ss.digests is not None:
            parts = [
                _part(s, imp, c) for s, imp, c in zip(scans, imports, contributions, strict=True)
            ]
        del imports, contributions  # the graph holds what ranking needs (memory)
    if ranking is not None:
        rank, score, dscores = ranking.rank, ranking.score, ranking.dscores
    else:
        same = not changed and state is not None and state.ranking is not None
        plain = None
        if same and personal is not None:  # the same graph: its plain ranking holds
            plain = (state.ranking.rank, state.ranking.score)
            ranking = state.ranking
        elif personal is not None and parts is not None:
            # A personalised ranking starts from the plain one: computed here, it is kept,
            # so that the next personalised run of this graph needs one PageRank, not two.
            ranking = Ranking(*_rank(graph, None), graph.out, graph.import_edges)
            plain = (ranking.rank, ranking.score)
        rank, score, dscores = _rank(graph, personal, plain)
        if personal is None:
            ranking = Ranking(rank, score, dscores, graph.out, graph.import_edges)
    kept = state.ranking if state is not None else None
    if parts is not None and (
        state is None or changed or tuple(ss.digests) != state.digests or kept is not ranking
    ):
        # Written at once: the definition scores are credited to base classes below.
        memo.put(_graph_key(), GraphState(tuple(graph.files), tuple(ss.digests), parts, ranking))
    return _ranked_files(scans, score, dscores), idents, EdgeSummary(graph, rank)


def _graph_from_memo(ss, state, personal):
    """(graph, parts, ranking or None, changed?) from the memo's STATE; the ranking only
    when the graph did not change and no personalisation asks for another."""
    from ctxtools.repomap.graph import Graph

    builder, every, parts, changed = _update_graph(ss, state)
    if not changed and state.ranking is not None:
        # The same graph: its out-edges are the ranking's, and its uses (what definition
        # scores need, the bulk of a graph) are read back from the parts file by file
        # when asked, never all at once.
        r = state.ranking
        uses = PartUses(ss.scans, parts)
        graph = Graph([s.rel for s in ss.scans], r.out, uses, {}, r.import_edges)
        return graph, parts, r if personal is None else None, changed
    pairs = every()
    graph = builder.assemble([c for _, c in pairs], sum(imp[4] for imp, _ in pairs))
    return graph, parts, None, changed


class PartUses:
    """A graph's uses as the graph memo's PARTS hold them (with the SCANS, whose reference
    names they index): iterated, each file's (uses, out-weight before pruning) in file
    order, decoded one file at a time (``each_use``)."""

    def __init__(self, scans, parts: list):
        self.scans = scans
        self.parts = parts

    def __iter__(self):
        for s, blob in zip(self.scans, self.parts, strict=True):
            _imp, (oi, uses) = _unpart(s, blob)
            yield uses, sum(oi.values())  # (the sum ``GraphBuilder.assemble`` takes)


def each_use(graph) -> object:
    """Each file's (uses, out-weight before pruning) of GRAPH, in file order."""
    uses = graph.uses
    if isinstance(uses, PartUses):
        return iter(uses)
    return zip(uses, graph.totals, strict=True)


def _ranked_files(scans, score: list[float], dscores: list) -> list:
    """The files as ``render.RankedFile`` in rank order, their definitions scored (base
    classes credited through their subclasses)."""
    from ctxtools.repomap.render import RankedFile

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
                [sc.get(d.name, 0.0) for d in s.defs],
                s.manifest,
            )
        )
    ranked.sort(key=lambda f: (-f.rank, f.rel))
    return ranked


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TEST_WEIGHT = 0.25
BASE_CREDIT = 0.5


def _credit_bases(defs: tuple, scores: dict[str, float]) -> None:
    """A base class is used through its subclasses: credit each class defined in the same
    file with BASE_CREDIT of the score of the classes naming it in their declaration
    (``class CharField(Field)``, ``class A extends B``, ``impl Trait for T``)."""
    classes = {d.name for d in defs if d.kind in _CLASS_KINDS}
    if len(classes) < 2:
        return
    bonus: dict[str, float] = {}
    for d in defs:
        if d.kind not in _CLASS_KINDS:
            continue
        own = scores.get(d.name, 0.0)
        if own <= 0.0:
            continue
        sig = d.signature
        at = sig.find(d.name)
        for base in set(_IDENT.findall(sig, at + len(d.name) if at >= 0 else 0)):
            if base != d.name and base in classes:
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


# --- PageRank, personalisation and scores -------------------------------------------------


def pagerank(
    out: list[dict[int, float]],
    personal: list[float] | None = None,
    damping: float = DAMPING,
    max_iter: int = MAX_ITER,
    tol: float = TOLERANCE,
) -> list[float]:
    """Stationary distribution of a random walk over OUT (weighted adjacency), jumping to
    PERSONAL (a distribution; uniform when None) with probability 1 - DAMPING."""
    n = len(out)
    if n == 0:
        return []
    p = personal if personal is not None else [1.0 / n] * n
    # In-lists: for each target, its sources and the normalised weights.
    in_src: list[list[int]] = [[] for _ in range(n)]
    in_w: list[list[float]] = [[] for _ in range(n)]
    # Each file also has a virtual edge of weight BASE_OUT back to the teleport vector, so
    # a file that uses little of the repository passes on little of its rank (without it,
    # one stray use in a central utility module carries that module's whole rank).
    keep = [1.0] * n  # share of a file's rank that goes back through the teleport vector
    for i, targets in enumerate(out):
        total = sum(targets.values())
        if total <= 0:
            continue
        denom = total + BASE_OUT
        keep[i] = BASE_OUT / denom
        for t in sorted(targets):
            in_src[t].append(i)
            in_w[t].append(targets[t] / denom)
    rank = list(p)
    teleport = 1.0 - damping
    for _ in range(max_iter):
        lost = sum(map(mul, rank, keep))
        jump = teleport + damping * lost
        get = rank.__getitem__
        new = [
            jump * pt + damping * sum(map(mul, map(get, src), w))
            for pt, src, w in zip(p, in_src, in_w, strict=True)
        ]
        delta = sum(map(abs, map(sub, new, rank)))  # (the same sums, in the same order)
        rank = new
        if delta < tol:
            break
    total = sum(rank)
    return [r / total for r in rank] if total > 0 else rank


def personalisation(
    scans: list[FileScan], focus: set[str], query: str | None
) -> tuple[list[float] | None, set[str]]:
    """The teleport vector, and the query's identifiers (lowercased) for boosting defs.

    The query is read by ``ctxtools.analyzer`` as every command reads a task: a file
    whose definition's whole name is one of its whole words (``Task.tokens``) gains 1, a
    file whose path holds one of its words (``Task.words``, compound parts included; the
    path's words split by the same tokenizer) gains 0.5, a FOCUS file 1."""
    idents: set[str] = set()
    words: set[str] = set()
    path_words = None
    if query:
        from ctxtools.analyzer import read_task
        from ctxtools.analyzer.tokenizer import words as path_words

        task = read_task(query)
        idents, words = set(task.tokens), set(task.words)
    n = len(scans)
    weights = [0.0] * n
    for i, s in enumerate(scans):
        w = 0.0
        if s.rel in focus:
            w += 1.0
        if words and path_words is not None:
            if any(d.name.lower() in idents for d in s.defs):
                w += 1.0
            low = s.rel.lower()  # (a path word that is a task word is in the path as text)
            if any(x in low for x in words) and not words.isdisjoint(path_words(s.rel)):
                w += 0.5
        weights[i] = w
    total = sum(weights)
    if total <= 0:
        return None, idents
    base = (1.0 - FOCUS_SHARE) / n
    return [base + FOCUS_SHARE * w / total for w in weights], idents


def centrality(graph: Graph, rank: list[float]) -> list[float]:
    """File scores: PageRank times (1 + the number of files that really use the file).

    PageRank alone favours what the central files use (a helper called from the core) over
    what everybody uses (the framework's base classes, used by hundreds of leaf files whose
    own rank is small); the breadth of use puts those back. A "real" use carries at least
    USER_SHARE of the using file's out-weight, so a stray local variable that happens to
    share a name does not count; so does an edge (an import, or uses that add up), so a
    module read through fields set at run time (luarocks' cfg.lua) counts its importers.
    The scores sum to 1.
    """
    n = len(graph.files)
    users: list[set[int]] = [set() for _ in range(n)]
    for i, (file_uses, total) in enumerate(each_use(graph)):
        floor = USER_SHARE * (total + BASE_OUT)
        for _name, w, targets in file_uses:
            if w >= floor:
                for t in targets:
                    users[t].add(i)
        for t, w in graph.out[i].items():  # an import, or uses that add up
            if w >= floor and t != i:
                users[t].add(i)
    scores = [rank[i] * (1 + len(users[i])) for i in range(n)]
    total = sum(scores)
    return [x / total for x in scores] if total > 0 else scores


def definition_scores(graph: Graph, rank: list[float]) -> list[dict[str, float]]:
    """Per file: identifier -> rank flowing into its definition there from other files."""
    n = len(graph.files)
    scores: list[dict[str, float]] = [{} for _ in range(n)]
    for i, (file_uses, total) in enumerate(each_use(graph)):
        if not file_uses:
            continue
        r = rank[i]
        denom = total + BASE_OUT
        for name, w, targets in file_uses:
            share = r * w / denom
            for d in targets:
                sd = scores[d]
                sd[name] = sd.get(name, 0.0) + share
    return scores
