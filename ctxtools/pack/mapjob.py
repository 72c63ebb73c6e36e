"""A pack's repo map, built in a forked child while the pack reads its files.

The map (listing's candidates scanned or looked up in the scan cache, ranked toward the
task, fitted) and the files section's reading (every candidate read, judged and counted)
need nothing of each other until the files are ranked, which takes the map's ranks and
definitions. On a tree of thousands of files each is a few hundred milliseconds of one
CPU, so with a second CPU the map is built beside the reading (``start``) and the pack
waits only for what is left of it (``MapState`` takes the job). The child keeps the map's
ranking, and fits it to another budget when the pack asks (``MapJob.text``).

What crosses the pipe: the files' ranks, the map's text at ``MAP_TOKENS``, each file's
definitions as a ``marshal`` blob (decoded only for the files the pack ranks, a few
hundred of thousands: ``Definitions``), the globs of the user's filter that matched a file
the map listed, and a failure's message. The result is the one building the map here gives
(the same function, on the same listing, with the same ruler): the pack's bytes do not
depend on where the map was built. Anything unexpected from the child (it died, it raised
what the map never raises) makes the map be built here after all, as it was before.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Iterator, Mapping

PARALLEL_MIN = 500  # candidate files below which the map is built in this process


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def wanted(req, candidates: int) -> bool:
    """Whether REQ's map is worth a child: the map is asked for, the tree is big enough
    for the fork to pay, and a second CPU can run it."""
    return bool(req.use_map) and candidates >= PARALLEL_MIN and hasattr(os, "fork") and cpus() > 1


class MapJob:
    """The map of ROOT (real path) for QUERY and FOCUS (absolute paths), as ``MapState``
    builds it, under way in a child (``ctxtools.forked.Background``)."""

    def __init__(self, req, root: str, ruler, query, focus: list[str], path_filter, tokens: int):
        from ctxtools.forked import Background

        self.focus = list(focus)
        self.path_filter = path_filter
        self.tokens = tokens

        def start():
            return _build_in_child(req, root, ruler, query, self.focus, path_filter, tokens)

        self._job = Background(start, _refit_in_child(ruler))

    def result(self) -> tuple:
        """("ok", ranks, text, Definitions, globs used) or ("failed", message) or
        ("resource", message); raises ``RuntimeError`` (or what the child raised) when the
        map must be built here instead."""
        value = self._job.first()
        if value[0] == "ok":
            _tag, ranks, text, blobs, used = value
            return ("ok", ranks, text, Definitions(blobs), used)
        return value

    def text(self, tokens: int) -> tuple[str, str]:
        """("ok", the map fitted to TOKENS) or ("failed"/"resource", message)."""
        return self._job.ask(tokens)

    def close(self) -> None:
        self._job.close()


def _build_in_child(req, root, ruler, query, focus, path_filter, tokens):
    """In the child: the map built as ``MapState`` builds it, and (what is sent, the map
    kept for refits)."""
    from ctxtools.errors import CtxError, ResourceError
    from ctxtools.repomap.core import build_map

    try:
        m = build_map(
            root,
            tokens=tokens,
            focus=[p for p in focus if os.path.exists(p)],
            query=query,
            ruler=ruler,
            store=req.store,
            keep=True,
            path_filter=path_filter,
        )
    except ResourceError as exc:
        return ("resource", str(exc)), None
    except (CtxError, OSError) as exc:
        return ("failed", str(exc)), None
    ranks = {f.rel: f.rank for f in m.files}
    blobs = {rel: marshal.dumps(tuple(map(tuple, defs))) for rel, defs in m.defs.items()}
    used = sorted(path_filter.used) if path_filter is not None else []
    return ("ok", ranks, m.text, blobs, used), m.refit


def _refit_in_child(ruler):
    def refit(kept, tokens: int):
        from ctxtools.errors import CtxError, ResourceError
        from ctxtools.repomap.core import refit_map

        try:
            return ("ok", refit_map(kept, tokens, ruler))
        except ResourceError as exc:
            return ("resource", str(exc))
        except (CtxError, OSError) as exc:
            return ("failed", str(exc))

    return refit


def _definition():
    """A plain tuple made a ``scan.Definition`` record, as the scan cache makes them."""
    import functools

    from ctxtools.source.scan.common import Definition

    return functools.partial(tuple.__new__, Definition)


class Definitions(Mapping):
    """rel -> the file's definitions (``scan.Definition`` records), decoded from the
    child's blobs when first asked for."""

    def __init__(self, blobs: dict[str, bytes]):
        self._blobs = blobs
        self._decoded: dict[str, tuple] = {}

    def __getitem__(self, rel: str) -> tuple:
        got = self._decoded.get(rel)
        if got is None:
            got = self._decoded[rel] = tuple(map(_definition(), marshal.loads(self._blobs[rel])))
        return got

    def __contains__(self, rel: object) -> bool:
        return rel in self._blobs

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)


def expected_focus(gather) -> tuple[list[str], list[str]]:
    """(named, the pack's labels) as ``load_entries`` leaves them when it leaves every
    candidate of GATHER in: what the map's focus is decided from before the files are
    checked. (The pack compares the focus it then has with the job's, and builds the map
    here if they differ: a named file left out as a secret, say.)"""
    every = {**gather.entries, **gather.handles}
    named = sorted(label for label, e in every.items() if e.named)
    rels = [label for label in sorted(gather.entries) if _packed(gather.entries[label])]
    return named, rels


def _packed(e) -> bool:
    return e.path is not None or e.deleted
