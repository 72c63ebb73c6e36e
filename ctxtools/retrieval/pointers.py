"""What in a task points at which file, besides its words: the paths it names (matched by
their trailing components), the files whose names without their extensions it writes as
compound words (``0187_auto_20230614_0838``), the stack-trace frames it holds, and the
scope a commit-style subject opens with (``tsdb: ...``, ``fix(toml): ...``). Pure
functions of labels and a ``Query``; ``rank`` turns them into bonuses and priors."""

from __future__ import annotations

from ctxtools.analyzer.query import Query

SCOPE_MAX_SHARE = 0.3


def suffix_len(a: list[str], b: list[str]) -> int:
    """How many trailing components A and B (paths split on ``/``) share."""
    n = 0
    while n < len(a) and n < len(b) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def path_hits(labels: list[str], paths) -> dict[str, int]:
    """label -> how many trailing path components of the best task path it matches (only
    the best-matching labels of each path count)."""
    out: dict[str, int] = {}
    split = {lab: lab.split("/") for lab in labels}
    stems = {lab: parts[:-1] + [parts[-1].rsplit(".", 1)[0]] for lab, parts in split.items()}
    for p in paths:
        want = [x for x in p.strip("/").split("/") if x and x != "."]
        if not want:
            continue
        best = 0
        hits = []
        for lab in labels:
            n = suffix_len(split[lab], want)
            if n == 0 and "." not in want[-1]:
                n = suffix_len(stems[lab], want)
                if n == 0 and split[lab][-1] == "__init__.py":
                    n = suffix_len(split[lab][:-1], want)
            if n > best:
                best, hits = n, [lab]
            elif n == best and n > 0:
                hits.append(lab)
        if best and len(hits) <= 3:
            for lab in hits:
                out[lab] = max(out.get(lab, 0), best)
    return out


STEM_MAX_FILES = 3  # a name more files than this have names none of them


def fold(name: str) -> str:
    """NAME as one spelling of its words: lower-cased, without ``_`` and ``-``
    (``generate-helpers.js`` is the file of ``generateHelpers``, ``if_exp.rs`` of ``IfExp``)."""
    return name.lower().replace("_", "").replace("-", "")


def stem_hits(labels, stems, weight: float = 1.0) -> dict[str, float]:
    """label -> WEIGHT for each file whose name without its extension is one of STEMS
    (``Query.stems``) in another spelling (``fold``), where at most ``STEM_MAX_FILES``
    files have that name."""
    if not stems:
        return {}
    want = {fold(s) for s in stems}
    found: dict[str, list[str]] = {}
    for lab in labels:
        name = lab[lab.rfind("/") + 1 :]
        stem = fold(name.rsplit(".", 1)[0])
        if stem in want:
            found.setdefault(stem, []).append(lab)
    return {lab: weight for labs in found.values() if len(labs) <= STEM_MAX_FILES for lab in labs}


def task_hits(labels, query: Query, stem_weight: float = 1.0) -> dict[str, float]:
    """label -> how strongly the task names it by path (``path_hits``: the trailing
    components matched) or by name (``stem_hits``: STEM_WEIGHT). Only the labels whose last
    component a path or a stem could match are compared, so a tree of many files costs
    one look at each name."""
    if not (query.paths or query.stems):
        return {}
    keys: set[str] = set()
    for p in query.paths:
        last = p.strip("/").rsplit("/", 1)[-1]
        if last:
            keys.add(last)
    stems = {fold(s) for s in query.stems}
    cands = []
    for lab in labels:
        cut = lab.rfind("/")
        name = lab[cut + 1 :]
        stem = name.rsplit(".", 1)[0]
        if (
            name in keys
            or stem in keys
            or fold(stem) in stems
            or name == "__init__.py" and lab[lab.rfind("/", 0, max(cut, 0)) + 1 : cut] in keys
        ):
            cands.append(lab)
    out: dict[str, float] = dict(path_hits(cands, query.paths))
    for lab, n in stem_hits(cands, query.stems, stem_weight).items():
        out[lab] = max(out.get(lab, 0), n)
    return out


def in_scope(parts: list[str], scope: list[str]) -> bool:
    """Whether SCOPE (path components) is a run of PARTS (a label's), its last component
    the file's name or its stem."""
    k = len(scope)
    last = len(parts) - 1
    for i in range(len(parts) - k + 1):
        ok = True
        for j in range(k):
            got = parts[i + j]
            if got != scope[j] and not (i + j == last and got.split(".", 1)[0] == scope[j]):
                ok = False
                break
        if ok:
            return True
    return False


def scoped(labels: list[str], query: Query) -> set[str]:
    """The LABELS inside a scope of QUERY's (a scope holding more than ``SCOPE_MAX_SHARE``
    of them, "src: ...", says nothing)."""
    if not query.scopes:
        return set()
    split = [(lab, lab.lower().split("/")) for lab in labels]
    out: set[str] = set()
    for scope in query.scopes:
        want = scope.split("/")
        hits = {lab for lab, parts in split if in_scope(parts, want)}
        if len(hits) <= SCOPE_MAX_SHARE * len(labels):
            out |= hits
    return out


def frames_by_label(labels: list[str], query: Query) -> dict[str, list]:
    out: dict[str, list] = {}
    paths = [fr.path for fr in query.frames if fr.path]
    hits_by_path = {p: path_hits(labels, [p]) for p in dict.fromkeys(paths)}
    for fr in query.frames:
        if not fr.path:
            continue
        for lab in hits_by_path[fr.path]:
            out.setdefault(lab, []).append(fr)
    return out
