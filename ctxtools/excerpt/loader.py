"""Loading: each input read, the definitions of those the task reaches scanned (in worker
processes when there are many), all ranked together, and each cut down (or its
signatures) into a ``FileResult``.

``iter_excerpts`` reads every input first -- the engine's word statistics are over all of
them -- then yields the results in the order given. A text over 512 KB is not held: it is
scored as it is read again. Scanning has no side effects: it runs in forked workers,
which see the bytes this process read and send back only the definitions.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from ctxtools.analyzer.query import Query
from ctxtools.errors import CtxError, NotFoundError, ResourceError
from ctxtools.excerpt import workers
from ctxtools.excerpt.core import (
    Engine,
    QueryLike,
    excerpt_bytes,
    excerpt_ranked,
    excerpt_stream,
)
from ctxtools.excerpt.inputs import (
    BINARY,
    OK,
    UNREADABLE,
    FileResult,
    Input,
    InputSpec,
    Item,
    as_input,
    find_unreadable,
)
from ctxtools.excerpt.model import ExcerptOptions
from ctxtools.excerpt.render import render_excerpt
from ctxtools.excerpt.signatures import Signatures, render_signatures, signatures_of
from ctxtools.excerpt.source import BINARY_SNIFF, LARGE_FILE, is_binary, read_fd
from ctxtools.forked import forked_results
from ctxtools.fsutil import check_resource
from ctxtools.resolve import HandleReader
from ctxtools.retrieval.rank import Source
from ctxtools.retrieval.window import definitions_of

if TYPE_CHECKING:
    from ctxtools.store import HandleStore


class _Reader:
    """Reads one input into a FileResult (its source, stream, or signatures); no side
    effects (it also runs in workers)."""

    def __init__(
        self,
        query: Query,
        signatures: bool,
        unreadable: Mapping[str, str],
        handles: HandleReader,
        blank_keys: bool = False,
    ):
        self.query = query
        self.signatures = signatures
        self.unreadable = unreadable
        self.handles = handles
        self.blank_keys = blank_keys

    def __call__(self, inp: Input) -> FileResult:
        label = inp.label
        if inp.path is not None and inp.path in self.unreadable:
            return FileResult(
                label,
                UNREADABLE,
                error=self.unreadable[inp.path],
                exit_status=int(NotFoundError.exit_status),
            )
        try:
            if self.signatures:
                sig = self._signatures(inp)
                if sig.binary:
                    return FileResult(label, BINARY)
                return FileResult(label, OK, sig, matches=sig.matches)
            if inp.is_handle:
                data = self.handles.read_bytes(inp.path)
            elif inp.path is None:
                data = inp.read()
            else:
                data = self._file(inp.path)
                if data is None:
                    return FileResult(label, OK, stream=inp.path)
        except ResourceError:
            raise  # the system's limit, not the file's fault: never a skip
        except CtxError as exc:
            return FileResult(label, UNREADABLE, error=str(exc), exit_status=int(exc.exit_status))
        if is_binary(data):
            return FileResult(label, BINARY)
        if len(data) > LARGE_FILE:
            return FileResult(label, OK, stream=data)
        blanked = 0
        if self.blank_keys:  # a window may start inside a key block, past its BEGIN line
            from ctxtools.secrets.blocks import blank_key_blocks

            data, blanked = blank_key_blocks(data)
        return FileResult(label, OK, source=Source(label, data), blanked=blanked)

    def _file(self, path: str) -> bytes | None:
        """The bytes of the file at PATH, None when it is over 512 KB (b"\\0" when such a
        file is binary: its first bytes say so)."""
        try:
            fd = os.open(path, os.O_RDONLY)
            try:
                size = os.fstat(fd).st_size
                if size > LARGE_FILE:
                    head = os.read(fd, BINARY_SNIFF)
                    return b"\0" if is_binary(head) else None
                return read_fd(fd, size)
            finally:
                os.close(fd)
        except OSError as exc:
            check_resource(exc, path)
            raise CtxError(f"{path}: {exc.strerror or exc}") from None

    def _signatures(self, inp: Input) -> Signatures:
        query = self.query
        if inp.is_handle:
            data = self.handles.read_bytes(inp.path)
            path = inp.path.rsplit("/", 1)[-1].split("@", 1)[0]
        elif inp.path is None:
            data = inp.read()
            path = inp.label
        else:
            path = inp.path
            try:
                size = os.path.getsize(path)
                if size > LARGE_FILE:
                    return signatures_of(path, None, query, size=size)
                data = self._file(path) or b""
            except OSError as exc:
                check_resource(exc, path)
                raise CtxError(f"{path}: {exc.strerror or exc}") from None
        if is_binary(data):
            return signatures_of(path, b"", query, binary=True)
        return signatures_of(path, data, query)


def render_item(item: Item, label: str) -> str:
    """One file's block of text: an excerpt, or a file's signatures."""
    if isinstance(item, Signatures):
        return render_signatures(item, label)
    return render_excerpt(item, label)


def _cut(engine: Engine, res: FileResult, options: ExcerptOptions) -> FileResult:
    """RES, read, with its excerpt."""
    if res.source is not None:
        ex = excerpt_ranked(engine, res.label, options)
    elif isinstance(res.stream, bytes):
        ex = excerpt_bytes(engine, res.stream, options)
    else:
        try:
            with open(res.stream, "rb") as fh:
                ex = excerpt_stream(fh, engine, options)
        except OSError as exc:
            check_resource(exc, res.stream)
            err = f"{res.stream}: {exc.strerror or exc}"
            return FileResult(res.label, UNREADABLE, error=err, exit_status=1)
    if ex.binary:
        return FileResult(res.label, BINARY)
    return FileResult(res.label, OK, ex, matches=ex.matches, blanked=res.blanked or ex.blanked)


def _scan_definitions(sources: list[Source], jobs: int) -> None:
    """The definitions of SOURCES (those the ranking reads chunk by chunk), from JOBS
    processes when there are many."""
    from ctxtools.source.scan import language_for, script_language

    wanted = [s for s in sources if language_for(s.label) or script_language(s.label, s.data)]

    def scan(src: Source) -> tuple:
        return definitions_of(src.label, src.data)

    if jobs > 1 and len(wanted) >= workers.SCAN_MIN:
        found = forked_results(scan, wanted, jobs, chunk=workers.CHUNK)
    else:
        found = map(scan, wanted)
    for src, defs in zip(wanted, found, strict=True):
        src.defs = defs


def iter_excerpts(
    sources: Iterable[InputSpec],
    query: QueryLike,
    options: ExcerptOptions | None = None,
    *,
    signatures: bool = False,
    jobs: int | None = 1,
    store: HandleStore | str | os.PathLike | None = None,
    session: str | None = None,
    unreadable: Mapping[str, str] | None = None,
    render: bool = False,
    show_unmatched: bool = True,
    blank_keys: bool = False,
) -> Iterator[FileResult]:
    """Each input read, ranked with the others and cut down (or its signatures, with
    SIGNATURES), in the order given, as a FileResult; the definitions scanned (or the
    signatures) by JOBS worker processes (forked) when there are many files. QUERY is a
    task's text or a ``Query`` (``retrieval.window.window_query``). ``store`` is a
    HandleStore or its root (None: the default root), opened at the first ``ctx:``
    reference; ``session`` that of the handles (None: $CTX_SESSION or "default").
    UNREADABLE is ``find_unreadable``'s answer when the caller has it already. With
    RENDER, ok results carry their text, not the excerpt (no text for a file with no
    match unless SHOW_UNMATCHED). With BLANK_KEYS, each private key block of an input reads
    as its redaction marker and blank lines (``secrets.blocks``; a text held whole before
    it is windowed, a streamed one in its shown lines): what is printed goes to a model,
    and a window that starts inside a block has nothing the output's redaction could know
    its lines by.
    """
    from ctxtools.retrieval.window import window_query

    options = options or ExcerptOptions()
    if blank_keys and not options.blank_keys:  # (a large text is streamed: see _blank_keys)
        options = replace(options, blank_keys=True)
    query = query if isinstance(query, Query) else window_query(query)
    inputs = [as_input(s) for s in sources]
    if unreadable is None:
        unreadable = find_unreadable(inputs)
    reader = _Reader(query, signatures, unreadable, HandleReader(store, session), blank_keys)
    jobs = jobs or 1
    if signatures and jobs > 1 and len(inputs) > 1 and all(i.path for i in inputs):
        loaded = list(forked_results(reader, inputs, jobs, chunk=workers.CHUNK))
    else:
        loaded = [reader(inp) for inp in inputs]
    engine = None
    if not signatures:
        sources = [r.source for r in loaded if r.source is not None]
        engine = Engine(query, sources, lambda read: _scan_definitions(read, jobs))
    for res in loaded:
        if res.status == OK and engine is not None:
            res = _cut(engine, res, options)
        if res.status != OK:
            yield res
            continue
        res = replace(res, source=None, stream=None)
        if render:
            block = None
            if res.matches or show_unmatched:
                block = render_item(res.excerpt, res.label).encode("utf-8", "surrogateescape")
            res = replace(res, excerpt=None, block=block)
        yield res
