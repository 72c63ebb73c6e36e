"""The user's say over which files of a directory the toolkit looks at.

What a file is (binary, generated, noise, its role) is ``ctxtools.source.classify``'s answer,
the same for every command. Here is what the user adds to it, applied by every command
that walks a tree -- the repo map (ctx-repomap, and the map section of a pack), the pack's
files and ``ctx-count --tree`` -- so that a file kept out of one is kept out of all:
``PathFilter`` applies ``--exclude GLOB`` (never listed), the root's ``.ctxignore``
(gitignore syntax, read like ``--exclude``) and, for ctx-pack, ``--include GLOB`` (a file
it matches is a candidate whatever ``classify.noise_reason`` says). Globs match the path
relative to the root; a glob without ``/`` matches the file name at any depth.

``PathFilter.key`` stands for the filter in a cache's key: a map made without the filter
(or with another) is never served for it.
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
    ignore_bytes: bytes | None = None  # .ctxignore as read (None: there is none)

    def included(self, rel: str) -> bool:
        return any(self._match(g, rel) for g in self.include)

    def excluded(self, rel: str) -> bool:
        if any(self._match(g, rel) for g in self.exclude):
            return True
        return self.ignore is not None and self.ignore.match_file(rel)

    @property
    def active(self) -> bool:
        """Whether the filter can leave any file out."""
        return bool(self.exclude) or self.ignore is not None

    @property
    def key(self) -> str:
        """What stands for the filter in a memo's key: a digest of the globs and of
        .ctxignore's bytes ("" for a filter that leaves nothing out)."""
        if not self.active and not self.include:
            return ""
        import hashlib

        h = hashlib.sha256()
        for part in (*self.include, "\0", *self.exclude, "\0"):
            h.update(part.encode("utf-8", "surrogateescape") + b"\n")
        h.update(self.ignore_bytes or b"")
        return h.hexdigest()[:32]

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

    def warnings(self, option: str = "--exclude") -> list[str]:
        """The notes of .ctxignore's bad lines, then a warning for each glob that matched
        no file (OPTION names the globs' option)."""
        unused = [f"warning: {option} {g!r} matches no file" for g in self.unused()]
        return [*self.notes, *unused]


def load_filter(root: str, include=(), exclude=()) -> PathFilter:
    """The filter of --include INCLUDE, --exclude EXCLUDE and ROOT/.ctxignore; a bad
    pattern in .ctxignore is a note naming its line, and the rest still applies."""
    filt = PathFilter(tuple(include), tuple(exclude))
    path = os.path.join(root, ".ctxignore")
    try:
        with open(path, "rb") as fh:
            filt.ignore_bytes = fh.read()
    except OSError:
        return filt
    lines = filt.ignore_bytes.decode("utf-8", "replace").splitlines()
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
