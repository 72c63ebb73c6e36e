"""The user's say over which files a pack considers: ``PathFilter`` and ``load_filter``.

They live in ``ctxtools.pathfilter``, a bottom module, because every command that walks a
tree (the repo map, ``ctx-count --tree``, the pack's files) applies the same filter; they
are named here too, where the pack's retrieval has always found them.
"""

from __future__ import annotations

from ctxtools.pathfilter import PathFilter, load_filter

__all__ = ["PathFilter", "load_filter"]
