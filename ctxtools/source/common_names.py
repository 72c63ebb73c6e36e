"""Names that say nothing about where they are defined.

``COMMON``: the method names of Python's built-in types (``get``, ``items``, ``format``,
``append`` ...) and a few dozen of other languages' everyday ones (``toString``, ``Ok``,
``push``). A use of one in a file points at no particular file of the repository, so the
map's graph draws no edge for it and the engine does not count it as a distinctive name.
"""

from __future__ import annotations

_MORE_COMMON = (
    "close open read write run call apply main init new next value name type data "
    "size length push pop map filter reduce then toString equals hashCode len "
    "String Error Result Option Some None Ok Err self this super"
)


def _common_names() -> frozenset[str]:
    """Method names of the built-in types (``get``, ``items``, ``format``, ``append``...):
    a use of one says nothing about which file of the repository it refers to."""
    import builtins

    names: set[str] = {n for n in dir(builtins) if not n.startswith("_")}
    for t in (str, bytes, list, dict, set, int, float, tuple, object, type):
        names.update(n for n in dir(t) if not n.startswith("_"))
    names.update(_MORE_COMMON.split())
    return frozenset(names)


COMMON = _common_names()
