"""The cycle collector paused while a command builds a great many small objects.

A pack or a map makes millions of objects that hold no cycles (the stored caches'
records, definitions, reference tuples, graph edges, the files' chunks and counts), all
freed by their reference counts; the cycle collector walked every one of them again and
again as they piled up (6-8% of a warm pack's CPU time, 3-5% of a cold map's) for no
memory back. ``collector_paused()`` turns it off for a block, or for a function when
used as a decorator, and back on after, on success and on error -- when it was on before:
a caller that turned it off keeps it off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cycle collection in the block (see the module's docstring)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
