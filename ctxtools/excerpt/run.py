"""Excerpts of many inputs in one run: loading, per-file status, a token budget, order.

``ctxtools.excerpt`` cuts one text; this module runs it over a list of inputs the way
ctx-excerpt does, for any caller (ctx-pack assembles budgeted prompt packs with it)::

    run = excerpt_sources(["src/auth.py", "ctx:notes"], identifiers_from_query(task),
                          ruler=get_ruler().ruler, budget=4000)
    run.render()       # the text ctx-excerpt prints
    run.as_dict()      # the --json document
    run.results        # every input as loaded: status "ok", "binary" or "unreadable"
    run.dropped        # what the budget took out; run.tokens: the count of run.render()
    run.unmatched      # the labels of the inputs where nothing matched (r.matched False)

An input is a file path, a handle reference ``ctx:[SESSION/]NAME[@SHA]`` (read from the
store), or an ``Input`` carrying bytes (or a function that returns them, called when its
turn comes: stdin). Nothing here prints: a file that cannot be read or is binary is a
result with that status (and a ``note``); ``on_file`` sees each result as it is loaded and
may raise to stop the run. ``iter_excerpts`` yields the results one by one, for a caller
that prints as it goes.

Files where nothing matched: ``unmatched="show"`` (the default) shows each by its head and
tail, as one file alone is shown; ``"name"`` shows only the files with a match and names
the others in one closing list (``no match in N files:``, a name a line) -- what
ctx-excerpt does with more than one input, since over a code base most files match
nothing and their heads and tails drown the rest; ``"omit"`` leaves them out altogether.
Whatever the mode, each result says how many of its lines match (``FileResult.matches``;
``matched`` is whether any does; with signatures, its matching definitions), each file of
``as_dict()`` has ``"matches"``, and ``run.unmatched`` lists the inputs with no match.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

from ctxtools.errors import CtxError, NotFoundError
from ctxtools.excerpt import (
    LARGE_FILE,
    Dropped,
    Excerpt,
    ExcerptOptions,
    Matcher,
    Signatures,
    excerpt_dict,
    excerpt_file,
    excerpt_text,
    file_block,
    fit_budget,
    is_binary,
    read_file_bytes,
    render_excerpt,
    render_signatures,
    signatures_dict,
    signatures_of,
)
from ctxtools.fsutil import json_text, unreadable_reason
from ctxtools.fsutil import unreadable_error as unreadable_error  # re-exported

if TYPE_CHECKING:
    from ctxtools.store import HandleStore
    from ctxtools.tokens import Ruler

HANDLE_PREFIX = "ctx:"
NOTE_LIMIT = 20  # files named in the notes about budget drops before "... and N more"

OK = "ok"
BINARY = "binary"
UNREADABLE = "unreadable"

UNMATCHED_MODES = ("show", "name", "omit")  # what becomes of a file where nothing matched


@dataclass(frozen=True)
class Input:
    """One input shown as ``label``: a file or handle reference ``path``, or ``data`` --
    bytes, or a function returning them (called once, when the input's turn comes).
    An input with data takes its language (for signatures) from its label's extension."""

    label: str
    path: str | None = None
    data: bytes | Callable[[], bytes] | None = None

    @property
    def is_handle(self) -> bool:
        return self.path is not None and self.path.startswith(HANDLE_PREFIX)

    def read(self) -> bytes:
        data = self.data
        if callable(data):
            data = data()
        return data if data is not None else b""


Source = str | Input
Item = Excerpt | Signatures


def as_input(source: Source) -> Input:
    """A path or handle reference as an ``Input`` labelled with itself."""
    return source if isinstance(source, Input) else Input(source, source)


@dataclass
class FileResult:
    """One input as loaded: ``status`` "ok" (with ``excerpt``: an Excerpt, or Signatures
    with --signatures), "binary" (skipped) or "unreadable" (``error`` says why;
    ``exit_status`` is that error's). ``block`` is the rendered block as UTF-8 bytes when
    rendering was asked for (then ``excerpt`` is None: worker processes send back the
    bytes only; None too for a file with no match that is not to be shown); ``text`` is
    the same as a str. ``matches``: how many lines match (with signatures: how many
    definitions), None unless ok."""

    label: str
    status: str
    excerpt: Item | None = None
    error: str | None = None
    exit_status: int = 0
    block: bytes | None = None
    matches: int | None = None

    @property
    def matched(self) -> bool:
        """Whether anything in this input matched (False for a skipped input)."""
        return bool(self.matches)

    @property
    def text(self) -> str | None:
        """The rendered block (None unless rendering was asked for and the input is ok)."""
        return None if self.block is None else self.block.decode("utf-8", "surrogateescape")

    @property
    def note(self) -> str | None:
        """What to tell the user about a skipped input (None for an ok one)."""
        if self.status == BINARY:
            return f"{self.label}: binary file, skipped"
        return self.error

    def raise_error(self) -> None:
        """Raise the error of an unreadable input as a CtxError with its exit status."""
        if self.status != UNREADABLE:
            return
        err = CtxError(self.error or f"{self.label}: cannot be read")
        err.exit_status = self.exit_status
        raise err

    def as_dict(self) -> dict:
        """The JSON record of a skipped input (ok ones are written by ``ExcerptRun``)."""
        doc = {"path": json_text(self.label), "status": self.status}
        if self.status == UNREADABLE:
            doc["error"] = json_text(self.error or "")
        return doc


# --- checking and loading --------------------------------------------------------------------


def find_unreadable(sources: Iterable[Source]) -> dict[str, str]:
    """Paths that cannot be read (missing, a directory, ...), each with a one-line reason.
    Handles and data inputs are not checked here (their errors come when they are loaded)."""
    bad: dict[str, str] = {}
    for src in sources:
        inp = as_input(src)
        path = inp.path
        if path is None or inp.is_handle or path in bad:
            continue
        reason = unreadable_reason(path)
        if reason is not None:
            bad[path] = reason
    return bad


class _Handles:
    """The store, opened at the first handle reference (most runs have none)."""

    def __init__(self, store: HandleStore | str | os.PathLike | None, session: str | None):
        self._store = store
        self._session = session

    def read(self, ref: str) -> bytes:
        from ctxtools.config import default_session, store_root
        from ctxtools.store import HandleStore

        if not isinstance(self._store, HandleStore):
            self._store = HandleStore(store_root(self._store))
        return self._store.read_bytes(ref, session=self._session or default_session())


class _Loader:
    """Loads one input into a FileResult; no side effects (it also runs in workers)."""

    def __init__(
        self,
        matcher: Matcher,
        options: ExcerptOptions,
        signatures: bool,
        unreadable: Mapping[str, str],
        handles: _Handles,
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
                ex = excerpt_text(self.handles.read(inp.path), self.matcher, self.options)
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
                    raise CtxError(f"{inp.path}: {exc.strerror or exc}") from None
                if fb.binary:
                    return FileResult(label, BINARY)
                return FileResult(label, OK, block=fb.block, matches=fb.matches)
            else:
                try:
                    ex = excerpt_file(inp.path, self.matcher, self.options)
                except OSError as exc:
                    raise CtxError(f"{inp.path}: {exc.strerror or exc}") from None
        except CtxError as exc:
            return FileResult(label, UNREADABLE, error=str(exc), exit_status=int(exc.exit_status))
        if ex.binary:
            return FileResult(label, BINARY)
        matches = ex.matches if isinstance(ex, Signatures) else len(ex.hits)
        if self.render:
            block = None
            if matches or self.show_unmatched:
                block = render_item(ex, label).encode("utf-8", "surrogateescape")
            return FileResult(label, OK, block=block, matches=matches)
        return FileResult(label, OK, ex, matches=matches)

    def _signatures(self, inp: Input) -> Signatures:
        matcher = self.matcher
        if inp.is_handle:
            data = self.handles.read(inp.path)
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
                raise CtxError(f"{path}: {exc.strerror or exc}") from None
        if is_binary(data):
            return signatures_of(path, b"", matcher, binary=True)
        return signatures_of(path, data, matcher)


def render_unmatched(labels: list[str], named: int | None = None) -> str:
    """The closing list of the files where nothing matched: ``no match in N files:``, then
    a name a line (the first NAMED of them when a budget cut the list, then how many more
    were not named)."""
    k = len(labels)
    lines = [f"no match in {k} file{'' if k == 1 else 's'}:"]
    if named is None or named >= k:
        lines.extend(labels)
    else:
        lines.extend(labels[:named])
        lines.append(f"… and {k - named} more")
    lines.append("")
    return "\n".join(lines)


def render_item(item: Item, label: str) -> str:
    """One file's block of text: an excerpt, or a file's signatures."""
    if isinstance(item, Signatures):
        return render_signatures(item, label)
    return render_excerpt(item, label)


def _as_matcher(identifiers: Matcher | Iterable[str], options: ExcerptOptions) -> Matcher:
    if isinstance(identifiers, Matcher):
        return identifiers
    return Matcher(identifiers, options.ignore_case)


CHUNK = 48  # inputs a worker does at a time: worker k of J does chunks k, k + J, ...


def _forked_results(
    loader: _Loader, inputs: list[Input], jobs: int, chunk: int | None = None
) -> Iterator[FileResult]:
    """LOADER over INPUTS in the order given, from JOBS processes: this one and JOBS - 1
    forked children. The inputs are cut into chunks dealt out in turn; this process does
    its own chunks between reading each child's next chunk of results from its pipe
    (pickled lists; a child runs ahead by what the pipe holds). Cheaper than a Pool:
    no task queue, no result thread, one pipe write per chunk."""
    import pickle

    chunk = chunk or CHUNK
    chunks = [inputs[i : i + chunk] for i in range(0, len(inputs), chunk)]
    jobs = max(1, min(jobs, len(chunks)))
    children: list[tuple[int, BinaryIO]] = []
    try:
        for k in range(1, jobs):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: its chunks, then leave without running any cleanup
                status = 0
                try:
                    os.close(r)
                    for _, rd in children:
                        rd.close()
                    with open(w, "wb") as out:  # buffered: writes every byte, or raises
                        for part in chunks[k::jobs]:
                            try:
                                payload = pickle.dumps(
                                    (True, [loader(inp) for inp in part]), protocol=5
                                )
                            except Exception as exc:  # sent to the parent, raised there
                                payload = pickle.dumps((False, exc), protocol=5)
                            out.write(len(payload).to_bytes(8, "little"))
                            out.write(payload)
                            out.flush()
                except BaseException:  # a closed pipe: the parent stopped early
                    status = 1
                finally:
                    os._exit(status)
            os.close(w)
            _grow_pipe(r)
            children.append((pid, open(r, "rb")))  # noqa: SIM115 (closed below)
        for n, part in enumerate(chunks):
            k = n % jobs
            if k == 0:
                for inp in part:
                    yield loader(inp)
                continue
            rd = children[k - 1][1]
            head = rd.read(8)
            if len(head) != 8:
                raise RuntimeError("an excerpt worker process ended early")
            ok, value = pickle.loads(rd.read(int.from_bytes(head, "little")))
            if not ok:
                raise value
            yield from value
    finally:
        for pid, rd in children:
            rd.close()
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _fit_with_names(
    run: ExcerptRun, items: list[tuple[str, Item]], budget: int, count: Callable[[str], int]
) -> list[tuple[str, Item]]:
    """Fit RUN's files and its list of files with no match into BUDGET tokens together:
    the files get the budget less the list's heading, then the list names as many files
    as fit (a binary search on the count of the whole text). Sets RUN's shown, dropped,
    named, listed and tokens; returns what is shown."""
    labels = run.unmatched
    heading = count(render_unmatched(labels, 0)) + 1
    reserve = heading
    while True:
        shown, run.dropped, _ = fit_budget(items, max(0, budget - reserve), count, render_item)
        run.shown = shown
        run.named = 0
        run.listed = True
        total = count(run.render())
        if total <= budget:
            break
        if not shown:  # not even the heading fits: no list
            run.listed = False
            run.tokens = 0
            return shown
        reserve += total - budget
    lo, hi = 0, len(labels)  # the most names that fit: lo fits, more than hi does not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        run.named = mid
        n = count(run.render())
        if n <= budget:
            lo, total = mid, n
        else:
            hi = mid - 1
    run.named = None if lo == len(labels) else lo
    run.tokens = total  # the count of the text with LO names
    return shown


AUTO_JOBS_FILES = 500  # from this many inputs on, two processes beat one (fork and pipes)


def auto_jobs(count: int) -> int:
    """Worker processes worth starting for COUNT inputs: 2 for many files when this
    process may run on more than one CPU, else 1."""
    if count < AUTO_JOBS_FILES:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return 2 if cpus > 1 else 1


def _grow_pipe(fd: int) -> None:
    """Let a pipe hold up to 1 MB (a child runs further ahead), where the system allows."""
    import fcntl

    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setsize is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, setsize, 1 << 20)


def iter_excerpts(
    sources: Iterable[Source],
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
        _as_matcher(identifiers, options),
        options,
        signatures,
        unreadable,
        _Handles(store, session),
        render,
        show_unmatched,
    )
    jobs = jobs or 1
    if jobs <= 1 or len(inputs) < 2 or any(inp.path is None for inp in inputs):
        for inp in inputs:
            yield loader(inp)
        return
    yield from _forked_results(loader, inputs, jobs)


# --- a whole run ---------------------------------------------------------------------------


@dataclass
class ExcerptRun:
    """The outcome of ``excerpt_sources``: every input's ``results`` in the order given,
    and what is ``shown`` -- (label, excerpt or signatures) in print order, after the budget
    and the sort. With a budget: what was ``dropped``, and ``tokens``, the ruler's count
    of ``render()``. ``unmatched_mode`` is what became of the files where nothing matched
    ("show", "name" or "omit"); ``named``: how many of them the closing list names when a
    budget cut it (None: all)."""

    identifiers: tuple[str, ...]
    options: ExcerptOptions
    signatures: bool
    results: list[FileResult]
    shown: list[tuple[str, Item]]
    budget: int | None = None
    dropped: list[Dropped] = field(default_factory=list)
    tokens: int | None = None
    ruler: Ruler | None = None
    unmatched_mode: str = "show"
    named: int | None = None
    listed: bool = True  # False: a budget left no room for the list at all

    @property
    def unmatched(self) -> list[str]:
        """The labels of the inputs read where nothing matched, in the order given."""
        return [r.label for r in self.results if r.status == OK and not r.matched]

    @property
    def skipped(self) -> list[FileResult]:
        """The inputs not shown because they are binary or unreadable, in the order given."""
        return [r for r in self.results if r.status != OK]

    @property
    def failed(self) -> bool:
        """Whether some input could not be read."""
        return any(r.status == UNREADABLE for r in self.results)

    @property
    def notes(self) -> list[str]:
        """What to tell the user: the skipped inputs' notes, then what the budget dropped."""
        return [r.note for r in self.skipped if r.note] + self.drop_notes()

    def drop_notes(self, limit: int = NOTE_LIMIT) -> list[str]:
        """What the budget dropped, as lines: a count, then one line a file (the first
        LIMIT files, then how many more), then how many files with no match it left
        unnamed. Empty when nothing was dropped."""
        lines: list[str] = []
        if self.dropped:
            per_file: dict[str, list[str]] = {}
            for d in self.dropped:
                if d.kind == "window":
                    what = f"window {d.start}-{d.end} (score {d.score:g})"
                else:
                    what = "whole file" + ("" if d.matched else " (nothing matched)")
                per_file.setdefault(d.label, []).append(what)
            labels = list(per_file)
            lines.append(f"dropped {len(self.dropped)} part(s) of {len(labels)} file(s)")
            lines.extend(
                f"  dropped {label}: " + ", ".join(per_file[label]) for label in labels[:limit]
            )
            if len(labels) > limit:
                lines.append(f"  ... and {len(labels) - limit} more files")
        if self.named is not None and self.unmatched_mode == "name":
            k = len(self.unmatched)
            if self.named < k or not self.listed:
                what = f"{k - self.named} of the {k} files with no match left unnamed"
                lines.append(f"  {what}" if lines else what)
        return lines

    def render(self) -> str:
        """The text of the shown files, one block each, separated by a blank line; in
        "name" mode, then the list of the files where nothing matched."""
        blocks = [render_item(item, label) for label, item in self.shown]
        if self.unmatched_mode == "name" and self.listed:
            unmatched = self.unmatched
            if unmatched:
                blocks.append(render_unmatched(unmatched, self.named))
        return "\n".join(blocks)

    def budget_dict(self) -> dict | None:
        if self.budget is None:
            return None
        ruler = self.ruler
        return {
            "tokens": self.budget,
            "used": self.tokens,
            "counter": ruler.name if ruler is not None else None,
            "exact": ruler.exact if ruler is not None else None,
            "dropped": [
                {
                    "path": json_text(d.label),
                    "kind": d.kind,
                    "start": d.start,
                    "end": d.end,
                    "score": d.score,
                }
                for d in self.dropped
            ],
        }

    def as_dict(self) -> dict:
        """The --json document of ctx-excerpt (its --help gives the schema)."""
        to_dict = signatures_dict if self.signatures else excerpt_dict
        doc: dict = {
            "identifiers": list(self.identifiers),
            "options": self.options.as_dict(),
            "files": [to_dict(item, label) for label, item in self.shown]
            + [r.as_dict() for r in self.skipped],
        }
        if self.unmatched_mode == "name":
            doc["unmatched"] = [json_text(label) for label in self.unmatched]
        budget = self.budget_dict()
        if budget is not None:
            doc["budget"] = budget
        return doc


def excerpt_sources(
    sources: Iterable[Source],
    identifiers: Matcher | Iterable[str],
    options: ExcerptOptions | None = None,
    *,
    signatures: bool = False,
    ruler: Ruler | Callable[[], Ruler] | None = None,
    budget: int | None = None,
    sort: str = "given",
    jobs: int | None = 1,
    store: HandleStore | str | os.PathLike | None = None,
    session: str | None = None,
    unreadable: Mapping[str, str] | None = None,
    on_file: Callable[[FileResult], None] | None = None,
    unmatched: str = "show",
) -> ExcerptRun:
    """Excerpt every input (see ``iter_excerpts`` for SIGNATURES, JOBS, STORE, SESSION,
    UNREADABLE), fit the whole text into BUDGET tokens of RULER when a budget is given,
    and order the files: SORT "given", or "score" (best first, ties in the order given).

    UNMATCHED is what becomes of a file where nothing matched: "show" (its head and tail,
    the default), "name" (not shown; named in a closing list, and in ``as_dict()``'s
    "unmatched") or "omit" (neither); not with SIGNATURES.

    The budget drops what is worth least first: files where nothing matched (the last
    first), then windows, the lowest-scoring first, then matched files reduced to their
    head (see ``ctxtools.excerpt.fit_budget``); in "name" mode the list's heading is kept
    out of the files' budget, and the list names as many files as then fit. RULER is a
    Ruler, or a function returning one, called only when a budget needs it, after every
    input is loaded (None: the default ``get_ruler()``). ON_FILE is called with each
    result as it is loaded, in the order given; an exception from it stops the run.
    """
    if sort not in ("given", "score"):
        raise ValueError(f"sort must be 'given' or 'score', not {sort!r}")
    if unmatched not in UNMATCHED_MODES:
        raise ValueError(f"unmatched must be one of {UNMATCHED_MODES}, not {unmatched!r}")
    if signatures and unmatched != "show":
        raise ValueError("unmatched applies to excerpts, not to signatures")
    options = options or ExcerptOptions()
    matcher = _as_matcher(identifiers, options)
    results: list[FileResult] = []
    for res in iter_excerpts(
        sources,
        matcher,
        options,
        signatures=signatures,
        jobs=jobs,
        store=store,
        session=session,
        unreadable=unreadable,
    ):
        if on_file is not None:
            on_file(res)
        results.append(res)
    shown: list[tuple[str, Item]] = [
        (r.label, r.excerpt)
        for r in results
        if r.status == OK and (unmatched == "show" or r.matched)
    ]
    run = ExcerptRun(
        matcher.identifiers, options, signatures, results, shown, unmatched_mode=unmatched
    )
    if budget is not None:
        if ruler is None:
            from ctxtools.tokens import get_ruler

            ruler = get_ruler().ruler
        elif not hasattr(ruler, "count"):
            ruler = ruler()
        run.budget = budget
        run.ruler = ruler
        if unmatched == "name" and run.unmatched:
            shown = _fit_with_names(run, shown, budget, ruler.count)
        else:
            shown, run.dropped, run.tokens = fit_budget(shown, budget, ruler.count, render_item)
    if sort == "score":
        shown = sorted(shown, key=lambda it: -it[1].score)  # stable: ties keep their order
    run.shown = shown
    return run
