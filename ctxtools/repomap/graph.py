"""The reference graph between files: who uses whose definitions, and how much.

An edge runs from a file that *uses* an identifier to each other file that *defines* it.
Every reference the scanner reports counts -- calls, base classes, imports, type
annotations, attribute access -- which is what lets a framework's central classes outrank
the small helpers they call. The weight of a use is ``sqrt(uses) * ident_weight(name)``:

* longer names weigh more (they are specific); a class-like definition more than a
  function, a bare method or field name (any object's attribute) much less;
* private ``_names`` a tenth; built-in names (``get``, ``len``, ``format``), dunders and
  short lowercase names nothing; a plain lowercase word (``results``, ``date``) a fifth,
  since it is as often a local variable;
* imports confirm: a use of a name defined in a file the user imports (or in the package
  it imports, or beside it) goes to that definition only; an unconfirmed use weighs 0.3,
  is shared out between all the files defining the name, and is damped further when more
  than five do; a name imported from outside the repository (Rust ``use std::..``, Java
  ``import java.util..``) links nothing.

An import that resolves to a file of the repository adds an edge of its own.

The graph is ranked in ``rank`` (PageRank, centrality, definition scores).

``GraphBuilder`` computes the graph file by file -- a file's imports, then its out-edges
and uses, which depend only on the file itself, the list of files and the definers of the
names it uses -- so that the graph memo (``rank.rank_scans``) can recompute just the files
an edit concerns and get, float for float, what a cold build gets.
"""

from __future__ import annotations

import math
import posixpath
import re
from dataclasses import dataclass, field
from itertools import compress

from ctxtools.source.common_names import COMMON
from ctxtools.source.scanset import FileScan

IMPORT_WEIGHT = 1.0
MAX_DEFINERS = 40  # a name defined in more files than this links nothing
# A use of a name defined in a file the user neither imports (nor sits beside, nor imports
# the package of) is a weaker clue: the name may be a local variable or another's attribute.
UNCONFIRMED = 0.3
PRUNE = 0.01  # edges below this share of a file's out-weight stay out of PageRank

@dataclass
class Graph:
    files: list[str]
    out: list[dict[int, float]]  # per source file: target file -> weight
    # per using file: (identifier, weight per target, target files), in reference order --
    # where definition scores come from
    uses: list[tuple[tuple[str, float, tuple[int, ...]], ...]]
    definers: dict[str, list[int]]
    import_edges: int = 0
    totals: list[float] = field(default_factory=list)  # out-weight before pruning




# How much a use of a name says, by the kind of definition it names: a class (base class,
# annotation, construction) ties files together more than a function; a bare method or
# field name could be any object's attribute.
KIND_WEIGHT = {
    "class": 2.0,
    "struct": 2.0,
    "interface": 2.0,
    "trait": 2.0,
    "enum": 1.5,
    "type": 1.5,
    "impl": 1.0,
    "function": 1.0,
    "const": 0.5,
    "variable": 0.5,
    "method": 0.3,
}


def ident_weight(name: str, kind_weight: float = 1.0) -> float:
    """The weight of one use of NAME (shared out between the files it may refer to)."""
    if name in COMMON or (len(name) <= 2 and name.islower()):
        return 0.0
    if name.startswith("__") and name.endswith("__"):
        return 0.0  # protocol methods: used by the language, not by a file
    w = 0.2 + min(len(name), 20) / 10.0
    if name.isalpha() and name.islower():
        w *= 0.2  # a plain word (results, default, date) is as often a local variable
    if name.startswith("_"):
        w *= 0.1
    w *= kind_weight
    return w


# --- imports -------------------------------------------------------------------------------

_CLASSLIKE = frozenset({"class", "struct", "interface", "trait", "enum", "type"})
_STRIP_EXT = re.compile(r"\.[A-Za-z0-9]+$")
_INDEX_STEMS = frozenset({"__init__", "index", "mod", "lib"})


class ImportResolver:
    """Resolves an import string to files of the repository, where that is cheap.

    Every file is indexed under its path without extension and under each of that path's
    suffixes (``django/db/models/base`` also as ``db/models/base``, ``models/base``, ``base``);
    a package file (``__init__.py``, ``index.ts``, ``mod.rs``, ``lib.rs``) also under its
    directory, and every directory (a Go package) under its suffixes too.
    """

    def __init__(self, files: list[str]):
        self.full: dict[str, list[int]] = {}
        self.suffix: dict[str, list[int]] = {}
        for i, rel in enumerate(files):
            stem_path = _STRIP_EXT.sub("", rel)
            keys = [stem_path]
            head, _, stem = stem_path.rpartition("/")
            if stem in _INDEX_STEMS:
                keys.append(head)
            if rel.endswith(".go"):
                keys.append(head)
            for key in keys:
                if not key:
                    continue
                self.full.setdefault(key, []).append(i)
                parts = key.split("/")
                for k in range(len(parts)):
                    lst = self.suffix.setdefault("/".join(parts[k:]), [])
                    if not lst or lst[-1] != i:
                        lst.append(i)

    def resolve(self, importer: str, language: str | None, spec: str) -> list[int]:
        spec = spec.strip().strip("\"'<>")
        if not spec:
            return []
        path = self._to_path(importer, language, spec)
        if path is None:
            return []
        hit = self.full.get(path)
        if hit:
            return hit
        parts = [p for p in path.split("/") if p and p != "."]
        if language == "go":
            # A Go import path names a directory; the module prefix is not in the tree.
            for k in range(len(parts) - 1):
                hit = self.suffix.get("/".join(parts[k:]))
                if hit and len(hit) <= 64:
                    return hit
            return []
        # The last one or two components may name a symbol, not a module. A bare one-word
        # suffix (``collections`` of ``collections.abc``) is too weak a clue to follow.
        for drop in range(0, min(3, len(parts))):
            key = "/".join(parts[: len(parts) - drop])
            hit = self.full.get(key)
            if hit:
                return hit
            if len(parts) - drop >= 2:
                hit = self.suffix.get(key)
                if hit and len(hit) <= 4:
                    return hit
        return []

    @staticmethod
    def _to_path(importer: str, language: str | None, spec: str) -> str | None:
        base = posixpath.dirname(importer)
        if language == "python":
            if spec.startswith("."):
                dots = len(spec) - len(spec.lstrip("."))
                rest = spec[dots:].replace(".", "/")
                pkg = base
                for _ in range(dots - 1):
                    pkg = posixpath.dirname(pkg)
                return posixpath.normpath(posixpath.join(pkg, rest)) if rest else pkg or None
            return spec.replace(".", "/")
        if language in ("javascript", "typescript"):
            if spec.startswith("."):
                joined = posixpath.normpath(posixpath.join(base, spec))
                return _STRIP_EXT.sub("", joined) if not joined.startswith("..") else None
            if spec.startswith(("@/", "~/")):
                return _STRIP_EXT.sub("", spec[2:])
            return spec if "/" in spec and not spec.startswith("@") else None
        if language == "rust":
            parts = [p for p in spec.split("{", 1)[0].split("::") if p]
            if not parts or parts[0] in ("std", "core", "alloc"):
                return None
            if parts[0] == "crate":
                # The crate's root module lives in the nearest src/ above the importer.
                at = importer.rfind("src/")
                root = importer[: at + 3] if at >= 0 else ""
                return posixpath.join(root, *parts[1:]) if len(parts) > 1 else None
            if parts[0] in ("self", "super"):
                # The importer's own module: src/a/b.rs is a::b (children in src/a/b/),
                # src/a/mod.rs is a (children in src/a/).
                stem = _STRIP_EXT.sub("", posixpath.basename(importer))
                here = base if stem in ("mod", "lib", "main") else posixpath.join(base, stem)
                rest = list(parts)
                while rest and rest[0] in ("self", "super"):
                    if rest.pop(0) == "super":
                        here = posixpath.dirname(here)
                return posixpath.join(here, *rest) if rest else None
            return "/".join(parts)
        if language == "java":
            spec = spec.removeprefix("static ").removesuffix(".*")
            return spec.replace(".", "/")
        if language == "go":
            return spec
        return spec.replace(".", "/").replace("::", "/")


_NAMED_IMPORTS = frozenset({"rust", "java"})
_LOCAL = ("crate::", "self::", "super::")


def _imported_names(language: str | None, spec: str) -> list[str]:
    """The names an import statement brings in, where the import string carries them."""
    if language == "java":
        last = spec.rsplit(".", 1)[-1]
        return [] if last == "*" else [last]
    # rust: a::b::Name, a::b::{X, Y}, a::b::{self, Z}
    head, sep, tail = spec.rpartition("::")
    if not sep:
        return []
    tail = tail.strip("{} ")
    return [n.strip() for n in tail.split(",") if n.strip() and n.strip() != "self"]


# --- building --------------------------------------------------------------------------------


def _kind_weight(kind: str, scoped: bool) -> float:
    return 0.3 if scoped and kind not in _CLASSLIKE else KIND_WEIGHT.get(kind, 1.0)


def defined_weights(s: FileScan) -> dict[str, float]:
    """Name -> the heaviest kind weight of its definitions in S (what S adds to the
    definers of each name)."""
    out: dict[str, float] = {}
    for kind, name, _line, _sig, scope, _end in s.defs:
        kw = _kind_weight(kind, scope is not None)
        if kw > out.get(name, -1.0):
            out[name] = kw
    return out


# One file's imports: (import edges, imported files, directories near it, names imported
# from outside the repository, imports resolved into it) -- plain values, for the memo.
Imports = tuple
# One file's out-edges (target -> weight, import edges first, not pruned) and its uses
# ((identifier, weight per target, target files), in reference order).
Contribution = tuple


def _drop_extensions(scans: list[FileScan], definers: dict, extended: set[str]) -> None:
    """A name that a file defines and others only extend (Swift's ``extension Session``,
    Rust's ``impl Display for Foo``) is defined by the defining files alone: a use of
    ``Session`` means the type, not the test helpers that extend it. A name only ever
    extended (a type from outside the repository) keeps its extending files."""
    real: dict[str, set[int]] = {}
    for i, s in enumerate(scans):
        for kind, name, *_rest in s.defs:
            if kind != "impl" and name in extended:
                real.setdefault(name, set()).add(i)
    for name, files in real.items():
        ds = definers[name]
        if len(ds) > len(files):
            definers[name] = [i for i in ds if i in files]


class GraphBuilder:
    """Builds the graph file by file, so that the graph memo can recompute only the files an
    edit concerns; ``build_graph`` is all files at once. Every file's part is computed the
    same way (and its floats in the same order) either way, so the result is the same."""

    def __init__(self, scans: list[FileScan], wanted: set[str] | None = None):
        """WANTED: the only names whose definers will be asked for (default: all)."""
        self.scans = scans
        self.files = files = [s.rel for s in scans]
        definers: dict[str, list[int]] = {}
        kind_w: dict[str, float] = {}
        kw_of: dict[tuple[str, bool], float] = {}
        extended: set[str] = set()
        for i, s in enumerate(scans):
            for kind, name, _line, _sig, scope, _end in s.defs:
                if wanted is not None and name not in wanted:
                    continue
                if kind == "impl":
                    extended.add(name)
                key = (kind, scope is not None)
                kw = kw_of.get(key)
                if kw is None:
                    kw = kw_of[key] = _kind_weight(kind, scope is not None)
                ds = definers.get(name)
                if ds is None:
                    definers[name] = [i]
                    kind_w[name] = kw
                else:
                    if ds[-1] != i:
                        ds.append(i)
                    if kw > kind_w[name]:
                        kind_w[name] = kw
        if extended:
            _drop_extensions(scans, definers, extended)
        self.definers = definers
        self.kind_w = kind_w
        self._info: dict[str, tuple | None] = {}
        self._resolver: ImportResolver | None = None
        self._resolved: dict[tuple, list[int]] = {}
        del files

    def info(self, name: str) -> tuple | None:
        """(weight of one use, defining files, plain word?) of a linkable NAME, else None."""
        try:
            return self._info[name]
        except KeyError:
            pass
        ds = self.definers.get(name)
        entry = None
        if ds is not None and len(ds) <= MAX_DEFINERS:
            w = ident_weight(name, self.kind_w[name])
            if w > 0.0:
                entry = (w, ds, name.isalpha() and name.islower())
        self._info[name] = entry
        return entry

    def imports(self, i: int) -> Imports:
        """What file I's imports say: edges, and which files and directories it means.
        Imports first: each is an edge, and what a file imports (files, and the directories
        of imported packages) tells which of several definitions of a name it means."""
        s = self.scans[i]
        files = self.files
        where = posixpath.dirname(s.rel)
        dirs = {where + "/"} if where else set()
        nfiles: set[int] = set()
        external: set[str] = set()
        oi: dict[int, float] = {}
        edges = 0
        if s.imports:
            if self._resolver is None:
                self._resolver = ImportResolver(files)
            resolver, memo = self._resolver, self._resolved
            for spec in s.imports:
                # Only a relative import depends on where the importer is.
                key = (s.language, spec, where if spec[:1] == "." else None)
                hit = memo.get(key)
                if hit is None:
                    hit = memo[key] = resolver.resolve(s.rel, s.language, spec)
                targets = [t for t in hit if t != i]
                if not hit and s.language in _NAMED_IMPORTS and not spec.startswith(_LOCAL):
                    # An import from outside the repository (std::task::Context,
                    # java.util.List) says which names here are not ours.
                    external.update(_imported_names(s.language, spec))
                if not targets:
                    continue
                share = IMPORT_WEIGHT / len(targets)
                for t in targets:
                    oi[t] = oi.get(t, 0.0) + share
                    nfiles.add(t)
                    head, _, base = files[t].rpartition("/")
                    if head and _STRIP_EXT.sub("", base) in _INDEX_STEMS:
                        dirs.add(head + "/")
                edges += 1
        return (oi, tuple(sorted(nfiles)), tuple(sorted(dirs)), tuple(sorted(external)), edges)

    def contribution(self, i: int, imp: Imports) -> Contribution:
        """File I's out-edges and uses, given its imports IMP. A file's use counts
        sqrt(uses) times the name's weight, shared out between the files it may mean."""
        s = self.scans[i]
        files = self.files
        oi = dict(imp[0])
        nf = frozenset(imp[1])
        nd = imp[2]
        uses: list[tuple[str, float, tuple[int, ...]]] = []
        info = self.info
        sqrt = math.sqrt
        mine = None
        names = s.ref_names
        # only the names some file defines can be linked: the others are left out in C
        defined = map(self.definers.__contains__, names)
        for name, count in compress(zip(names, s.ref_counts, strict=True), defined):
            entry = info(name)
            if entry is None:
                continue
            if mine is None:
                mine = {d.name for d in s.defs}.union(imp[3])
            if name in mine:
                continue
            w, ds, plain = entry
            if len(ds) == 1:  # the common case, without building lists
                d = ds[0]
                if not (d in nf or (not plain and nd and files[d].startswith(nd))):
                    w *= UNCONFIRMED
                w *= sqrt(count)
                oi[d] = oi.get(d, 0.0) + w
                uses.append((name, w, (d,)))
                continue
            if plain:  # a plain word is confirmed only by importing its module
                near = [d for d in ds if d in nf]
            else:
                near = [d for d in ds if d in nf or (nd and files[d].startswith(nd))]
            if near:
                targets = near
            else:
                targets = ds
                w *= UNCONFIRMED
                if len(ds) > 5:
                    w *= 0.2
            w *= sqrt(count) / len(targets)
            for d in targets:
                oi[d] = oi.get(d, 0.0) + w
            uses.append((name, w, tuple(targets)))
        return (oi, tuple(uses))

    def assemble(self, contributions: list[Contribution], import_edges: int) -> Graph:
        """The graph of every file's contribution (in file order)."""
        out = [c[0] for c in contributions]  # (fresh dicts: pruning replaces, never edits)
        uses = [c[1] for c in contributions]
        totals = [sum(o.values()) for o in out]
        # Edges carrying under 1% of a file's weight change no ranking worth having and cost
        # most of the power iteration's time: PageRank runs on the rest (renormalised).
        for i, o in enumerate(out):
            if len(o) > 8:
                floor = PRUNE * totals[i]
                out[i] = {t: w for t, w in o.items() if w >= floor}
        return Graph(self.files, out, uses, self.definers, import_edges, totals)


def build_graph(scans: list[FileScan]) -> Graph:
    """The weighted file graph of SCANS (which must be sorted by path)."""
    return build_graph_parts(scans)[0]


def build_graph_parts(scans: list[FileScan]) -> tuple[Graph, list[Imports], list[Contribution]]:
    """The graph of SCANS, and each file's imports and contribution (for the graph memo)."""
    builder = GraphBuilder(scans)
    imports = [builder.imports(i) for i in range(len(scans))]
    contributions = [builder.contribution(i, imp) for i, imp in enumerate(imports)]
    graph = builder.assemble(contributions, sum(imp[4] for imp in imports))
    return graph, imports, contributions


# --- ranking ---------------------------------------------------------------------------------
