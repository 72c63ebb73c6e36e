"""The directories a server's tools may read: every path, symlink and @-mention is checked.

``Roots`` holds them as real paths (symlinks resolved), the first being the *primary*
root: a relative path in a call is taken relative to it, and ctx-pack's repository and
``run``'s working directory are the root the call's files are in (else the primary).
``check`` resolves a path the way the library will open it (``os.path.realpath``) and
refuses one that lands outside every root -- a ``..``, an absolute path, or a symlink
inside a root that points out of it -- with an InputError naming the path as given.
Nothing is read to decide: a path that does not exist yet is judged by where it would be.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from ctxtools.errors import InputError

_GLOB_CHARS = frozenset("*?[")


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


class Roots:
    """The directories of ROOTS (at least one), resolved; ``where`` says where they came
    from ("--root", "the client's roots", "the working directory") for the error hint."""

    def __init__(self, roots: Sequence[str | os.PathLike], where: str = "--root"):
        if not roots:
            raise ValueError("at least one root")
        real: list[str] = []
        for r in roots:
            path = os.path.realpath(os.fspath(r))
            if path not in real:
                real.append(path)
        self.dirs = real
        self.where = where

    @property
    def primary(self) -> str:
        return self.dirs[0]

    def _error(self, given: str) -> InputError:
        listed = ", ".join(self.dirs)
        return InputError(
            f"{given}: outside the roots ({listed})",
            hint=f"the server reads files only under {self.where}; name a path inside one",
        )

    def absolute(self, path: str, base: str | None = None) -> str:
        """PATH as an absolute path: relative paths are taken from BASE (the primary root)."""
        path = os.path.expanduser(path)
        return os.path.normpath(os.path.join(base or self.primary, path))

    def root_of(self, path: str) -> str:
        """The root PATH (absolute, resolved or not) lies in; InputError when none."""
        real = os.path.realpath(path)
        for root in self.dirs:
            if _inside(real, root):
                return root
        raise self._error(path)

    def check(self, path: str, base: str | None = None) -> str:
        """PATH made absolute (``absolute``), after checking that it, and what its symlinks
        lead to, stay inside a root. A glob is checked by its fixed leading directories
        (its matches are checked again by the library that expands it)."""
        if not isinstance(path, str) or not path:
            raise InputError("empty path", hint="name a file or directory under the roots")
        full = self.absolute(path, base)
        probe = full
        if _GLOB_CHARS & set(path):
            probe = os.sep.join(iter_until_glob(full.split(os.sep))) or os.sep
        real = os.path.realpath(probe)
        if not any(_inside(real, r) for r in self.dirs):
            raise self._error(path)
        return full

    def check_all(self, paths: Iterable[str], base: str | None = None) -> list[str]:
        """``check`` of each of PATHS; handle references (``ctx:…``) pass as they are."""
        out = []
        for p in paths:
            out.append(p if isinstance(p, str) and p.startswith("ctx:") else self.check(p, base))
        return out

    def check_mentions(self, task: str, root: str) -> None:
        """Every @path and @basename mention of TASK, resolved under ROOT as ctx-pack
        resolves it, must stay inside the roots (a ``..`` or a symlink out is an error)."""
        from ctxtools.analyzer import read_task

        for m in read_task(task).mentions:
            if m.kind not in ("path", "basename"):
                continue
            full = os.path.normpath(os.path.join(root, m.raw))
            real = os.path.realpath(full)
            if not (_inside(full, root) and any(_inside(real, r) for r in self.dirs)):
                raise InputError(
                    f"@{m.raw}: outside the roots ({', '.join(self.dirs)})",
                    hint=f"an @-mention names a file under {root}",
                )


def iter_until_glob(parts: list[str]):
    """The leading PARTS of a split path that hold no glob character."""
    for p in parts:
        if _GLOB_CHARS & set(p):
            return
        yield p
