"""The user's say over which files of a directory a pack considers.

What a file is (binary, generated, noise, its role) is ``ctxtools.classify``'s answer,
the same for every command. Here is what the user adds to it: ``PathFilter`` applies
``--include GLOB`` (a file it matches is a candidate whatever ``classify.noise_reason``
says), ``--exclude GLOB`` (never a candidate) and the root's ``.ctxignore`` (gitignore
syntax, read like ``--exclude``). Globs match the path relative to the root; a glob
without ``/`` matches the file name at any depth.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field


@dataclass
class PathFilter:
    """The user's --include/--exclude globs and the root's .ctxignore."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    ignore: object | None = None  # a pathspec.PathSpec from .ctxignore
    notes: list[str] = field(default_factory=list)
    used: set = field(default_factory=set)  # the globs that matched something

    def included(self, rel: str) -> bool:
        return any(self._match(g, rel) for g in self.include)

    def excluded(self, rel: str) -> bool:
        if any(self._match(g, rel) for g in self.exclude):
            return True
        return self.ignore is not None and self.ignore.match_file(rel)

    def _match(self, glob: str, rel: str) -> bool:
        g = glob.rstrip("/")
        target = rel if "/" in g else rel.rsplit("/", 1)[-1]
        hit = fnmatch.fnmatchcase(target, g) or (
            "/" in g and (rel.startswith(g + "/") or fnmatch.fnmatchcase(rel, g + "/*"))
        )
        if not hit and "/" not in g:
            hit = any(fnmatch.fnmatchcase(p, g) for p in rel.split("/")[:-1])
        if hit:
            self.used.add(glob)
        return hit

    def unused(self) -> list[str]:
        return [g for g in (*self.include, *self.exclude) if g not in self.used]


def load_filter(root: str, include=(), exclude=()) -> PathFilter:
    """The filter of --include INCLUDE, --exclude EXCLUDE and ROOT/.ctxignore; a bad
    pattern in .ctxignore is a note naming its line, and the rest still applies."""
    filt = PathFilter(tuple(include), tuple(exclude))
    path = os.path.join(root, ".ctxignore")
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return filt
    import re
    import warnings

    import pathspec

    good = []
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # re's FutureWarning on "[[" and the like
                pathspec.GitIgnoreSpec.from_lines([line])
        except (ValueError, TypeError, re.error) as exc:  # a bad pattern
            filt.notes.append(f"warning: .ctxignore line {n}: bad pattern {line!r} ({exc})")
            continue
        good.append(line)
    if good:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            filt.ignore = pathspec.GitIgnoreSpec.from_lines(good)
    return filt
