"""Loading: each input of a run read and excerpted (or its signatures) into a ``FileResult``.

``iter_excerpts`` yields them in the order given, from worker processes when there are
many files (``ctxtools.forked``, sized by ``ctxtools.excerpt.workers``). A loader has no
side effects: it also runs in the workers, which send back only the rendered bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from ctxtools.errors import CtxError, NotFoundError, ResourceError
from ctxtools.excerpt import workers
from ctxtools.excerpt.blocks import file_block
from ctxtools.excerpt.core import excerpt_file, excerpt_text
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
from ctxtools.excerpt.match import Matcher, as_matcher
from ctxtools.excerpt.model import ExcerptOptions
from ctxtools.excerpt.render import render_excerpt
from ctxtools.excerpt.signatures import Signatures, render_signatures, signatures_of
from ctxtools.excerpt.source import LARGE_FILE, is_binary, read_file_bytes
from ctxtools.forked import forked_results
from ctxtools.fsutil import check_resource
from ctxtools.resolve import HandleReader

if TYPE_CHECKING:
    from ctxtools.store import HandleStore


class _Loader:
    """Loads one input into a FileResult; no side effects (it also runs in workers)."""

    def __init__(
        self,
        matcher: Matcher,
        options: ExcerptOptions,
        signatures: bool,
        unreadable: Mapping[str, str],
        handles: HandleReader,
        render: bool,
        show_unmatched: bool = True,
    ):
        self.matcher = matcher
        self.options = options
        self.signatures = signatures
        self.unreadable = unreadable
        self.handles = handles
        self.render = render
        self.show_unmatched = show_unmatched

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
                ex = self._signatures(inp)
            elif inp.is_handle:
                ex = excerpt_text(self.handles.read_bytes(inp.path), self.matcher, self.options)
            elif inp.path is None:
                ex = excerpt_text(inp.read(), self.matcher, self.options)
            elif self.render:
                try:
                    fb = file_block(
                        inp.path,
                        label,
                        self.matcher,
                        self.options,
                        show_unmatched=self.show_unmatched,
                    )
                except OSError as exc:
                    check_resource(exc, inp.path)
                    raise CtxError(f"{inp.path}: {exc.strerror or exc}") from None
                if fb.binary:
                    return FileResult(label, BINARY)
                return FileResult(label, OK, block=fb.block, matches=fb.matches)
            else:
                try:
                    ex = excerpt_file(inp.path, self.matcher, self.options)
                except OSError as exc:
                    check_resource(exc, inp.path)
                    raise CtxError(f"{inp.path}: {exc.strerror or exc}") from None
        except ResourceError:
            raise  # the system's limit, not the file's fault: never a skip
        except CtxError as exc:
            return FileResult(label, UNREADABLE, error=str(exc), exit_status=int(exc.exit_status))
        if ex.binary:
            return FileResult(label, BINARY)
        matches = ex.matches
        if self.render:
            block = None
            if matches or self.show_unmatched:
                block = render_item(ex, label).encode("utf-8", "surrogateescape")
            return FileResult(label, OK, block=block, matches=matches)
        return FileResult(label, OK, ex, matches=matches)

    def _signatures(self, inp: Input) -> Signatures:
        matcher = self.matcher
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
                    return signatures_of(path, None, matcher, size=size)
                data = read_file_bytes(path)
            except OSError as exc:
                check_resource(exc, path)
                raise CtxError(f"{path}: {exc.strerror or exc}") from None
        if is_binary(data):
            return signatures_of(path, b"", matcher, binary=True)
        return signatures_of(path, data, matcher)


def render_item(item: Item, label: str) -> str:
    """One file's block of text: an excerpt, or a file's signatures."""
    if isinstance(item, Signatures):
        return render_signatures(item, label)
    return render_excerpt(item, label)


def iter_excerpts(
    sources: Iterable[InputSpec],
    identifiers: Matcher | Iterable[str],
    options: ExcerptOptions | None = None,
    *,
    signatures: bool = False,
    jobs: int | None = 1,
    store: HandleStore | str | os.PathLike | None = None,
    session: str | None = None,
    unreadable: Mapping[str, str] | None = None,
    render: bool = False,
    show_unmatched: bool = True,
) -> Iterator[FileResult]:
    """Each input loaded and excerpted (or its signatures, with SIGNATURES), in the order
    given, as a FileResult; from JOBS worker processes (forked) when there are several
    files and no data input. ``store`` is a HandleStore or its root (None: the default
    root), opened at the first ``ctx:`` reference; ``session`` that of the handles
    (None: $CTX_SESSION or "default"). UNREADABLE is ``find_unreadable``'s answer when
    the caller has it already. With RENDER, ok results carry their text, not the excerpt
    (no text for a file with no match unless SHOW_UNMATCHED: it is never rendered).
    """
    options = options or ExcerptOptions()
    inputs = [as_input(s) for s in sources]
    if unreadable is None:
        unreadable = find_unreadable(inputs)
    loader = _Loader(
        as_matcher(identifiers, options),
        options,
        signatures,
        unreadable,
        HandleReader(store, session),
        render,
        show_unmatched,
    )
    jobs = jobs or 1
    if jobs <= 1 or len(inputs) < 2 or any(inp.path is None for inp in inputs):
        for inp in inputs:
            yield loader(inp)
        return
    yield from forked_results(loader, inputs, jobs, chunk=workers.CHUNK)
