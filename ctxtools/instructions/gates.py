"""Gating by path: gitignore globs (braces expanded) compiled into a ``Gate`` that says
whether a part of an instruction file applies to a pack's files."""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ctxtools.instructions.frontmatter import FrontMatterError, clip, scalar, split_top_level

BRACE_LIMIT = 256  # patterns one brace expression may expand to


def expand_braces(pattern: str, limit: int = BRACE_LIMIT) -> list[str]:
    """``**/*.{ts,tsx}`` -> ``['**/*.ts', '**/*.tsx']`` (nested braces too; at most LIMIT)."""
    out: list[str] = []
    todo = [pattern]
    while todo:
        p = todo.pop(0)
        start = -1
        depth = 0
        found = None
        for i, c in enumerate(p):
            if c == "{":
                if depth == 0:
                    start = i
                depth += 1
            elif c == "}" and depth:
                depth -= 1
                if depth == 0:
                    inner = p[start + 1 : i]
                    alts = split_top_level(inner)
                    if len(alts) > 1:
                        found = (start, i, alts)
                        break
        if found is None:
            out.append(p)
        else:
            s, e, alts = found
            todo.extend(p[:s] + a + p[e + 1 :] for a in alts)
        if len(out) + len(todo) > limit:
            raise FrontMatterError(f"braces in {clip(pattern)!r} expand to over {limit} patterns")
    return out


def glob_patterns(value: str | list[str], key: str) -> list[str]:
    """The patterns of a ``paths:``/``globs:`` value: comma-separated or a list, braces
    expanded, quotes removed, leading ``./`` dropped."""
    items = value if isinstance(value, list) else split_top_level(value)
    out: list[str] = []
    for item in items:
        item = scalar(item, key) if item.strip() else ""
        if not item:
            continue
        for p in expand_braces(item):
            p = p.strip()
            while p.startswith("./"):
                p = p[2:]
            if p and p not in out:
                out.append(p)
    return out


@dataclass(frozen=True)
class Gate:
    """A set of globs deciding whether a part applies to a pack's files."""

    label: str  # "paths" or "globs"
    patterns: tuple[str, ...]
    match: Callable[[str], bool] = field(compare=False, repr=False)
    # Without negations: per pattern, the folder every match lies under, a piece of text
    # every match contains, and its regex's match; applies() then looks only at the sorted
    # files under that folder that hold that text.
    probes: tuple[tuple[str, str, str, Callable], ...] | None = field(
        default=None, compare=False, repr=False
    )

    def applies(self, files: Sequence[str], cache: dict[str, bool] | None = None) -> bool:
        """Whether any of FILES matches. FILES must be sorted (as normalise_pack_files
        gives them). CACHE, shared between the gates of one run over the same FILES,
        keeps each pattern's answer."""
        if self.probes is None:
            return any(self.match(f) for f in files)
        for pattern, prefix, tail, match in self.probes:
            hit = cache.get(pattern) if cache is not None else None
            if hit is None:
                hit = _probe(files, prefix, tail, match)
                if cache is not None:
                    cache[pattern] = hit
            if hit:
                return True
        return False

    def describe(self) -> str:
        return f"{self.label}: {', '.join(self.patterns)}"


_GLOB_META_RE = re.compile(r"[*?\[\]\\]")


def _probe(files: Sequence[str], prefix: str, tail: str, match: Callable) -> bool:
    start = bisect.bisect_left(files, prefix) if prefix else 0
    for i in range(start, len(files)):
        f = files[i]
        if prefix and not f.startswith(prefix):
            break
        if tail in f and match(f) is not None:
            return True
    return False


def _literal_folder(pattern: str) -> str:
    """The folder every path a gitignore PATTERN matches starts with ('' when unknown):
    ``pkg/**/*.go`` -> ``pkg/``; ``*.go``, ``**/x`` and ``docs/`` (any depth) -> ''."""
    body = pattern.rstrip("/")
    if "/" not in body:
        return ""  # no slash, or only a trailing one: matches at any depth
    body = body.removeprefix("/")
    meta = _GLOB_META_RE.search(body)
    literal = body if meta is None else body[: meta.start()]
    return literal[: literal.rfind("/") + 1]


def _literal_tail(pattern: str) -> str:
    """Text every path a PATTERN matches contains: what follows its last wildcard, without
    a leading slash (``**/*.tsx`` -> ``.tsx``; ``**/b`` matches ``b``, so -> ``b``)."""
    last = -1
    for m in _GLOB_META_RE.finditer(pattern):
        last = m.end()
    return pattern[last if last >= 0 else 0 :].lstrip("/")


def compile_gate(patterns: Sequence[str], label: str = "paths") -> Gate:
    """A Gate for PATTERNS (gitignore rules); FrontMatterError when one does not compile."""
    import pathspec

    try:
        spec = pathspec.GitIgnoreSpec.from_lines(list(patterns))
    except (ValueError, TypeError, re.error) as exc:
        raise FrontMatterError(f"{label}: bad pattern ({exc})") from None
    probes: tuple[tuple[str, Callable], ...] | None = None
    compiled = list(zip(patterns, spec.patterns, strict=False))
    if len(compiled) == len(patterns) and all(
        p.include is True and getattr(p, "regex", None) is not None for _, p in compiled
    ):
        probes = tuple(
            (text, _literal_folder(text), _literal_tail(text), p.regex.match)
            for text, p in compiled
        )
    return Gate(label, tuple(patterns), spec.match_file, probes)


def normalise_pack_files(
    root: str, pack_files: Sequence[str] | None, *also_roots: str
) -> list[str]:
    """Pack files as sorted relative POSIX paths (``./a`` -> ``a``; absolute paths under
    ROOT, or one of ALSO_ROOTS, made relative; others kept as given, where they match
    nothing anchored)."""
    out: list[str] = []
    if isinstance(pack_files, str | os.PathLike):  # one path, not its characters
        pack_files = [os.fspath(pack_files)]
    for p in pack_files or ():
        p = os.fspath(p)
        if os.path.isabs(p):
            for base, path in [(b, p) for b in (root, *also_roots)] + [
                (root, os.path.realpath(p))  # last: through symlinks (one more lookup)
            ]:
                rel = os.path.relpath(path, base)
                if not rel.startswith(".."):
                    p = rel
                    break
        p = p.replace(os.sep, "/")
        while p.startswith("./"):
            p = p[2:]
        if p:
            out.append(p)
    return sorted(set(out))


def truthy(value: str | list[str] | None) -> bool:
    return isinstance(value, str) and value.strip().strip("\"'").lower() in ("true", "yes", "on")


def file_gate(meta: dict[str, str | list[str]]) -> tuple[Gate | None, bool]:
    patterns: list[str] = []
    labels: list[str] = []
    if "paths" in meta:
        value = meta["paths"]
        found = glob_patterns(value, "paths")
        if not found:
            raise FrontMatterError("paths: is empty")
        patterns += found
        labels.append("paths")
    if "globs" in meta:
        found = glob_patterns(meta["globs"], "globs")
        if found:
            patterns += [p for p in found if p not in patterns]
            labels.append("globs")
    always = truthy(meta.get("alwaysApply"))
    if not patterns:
        return None, always
    return compile_gate(patterns, "+".join(labels)), always
