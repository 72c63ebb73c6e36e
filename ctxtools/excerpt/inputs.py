"""What a run reads: ``Input`` (a path, a handle reference, or bytes), ``FileResult`` (one
input as loaded: ok, binary or unreadable), and the check for unreadable paths.

An input is a file path, a handle reference ``ctx:[SESSION/]NAME[@SHA]`` (read from the
store), or an ``Input`` carrying bytes (or a function that returns them, called when its
turn comes: stdin). ``InputSpec`` is any of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ctxtools.errors import CtxError
from ctxtools.excerpt.model import Excerpt
from ctxtools.excerpt.signatures import Signatures
from ctxtools.fsutil import json_name, json_text, unreadable_reason
from ctxtools.fsutil import unreadable_error as unreadable_error  # re-exported
from ctxtools.resolve import is_handle_ref

OK = "ok"
BINARY = "binary"
UNREADABLE = "unreadable"


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
        return self.path is not None and is_handle_ref(self.path)

    def read(self) -> bytes:
        data = self.data
        if callable(data):
            data = data()
        return data if data is not None else b""


InputSpec = str | Input
Item = Excerpt | Signatures


def as_input(source: InputSpec) -> Input:
    """A path or handle reference as an ``Input`` labelled with itself."""
    return source if isinstance(source, Input) else Input(source, source)


@dataclass
class FileResult:
    """One input as loaded: ``status`` "ok" (with ``excerpt``: an Excerpt, or Signatures
    with --signatures), "binary" (skipped) or "unreadable" (``error`` says why;
    ``exit_status`` is that error's). ``block`` is the rendered block as UTF-8 bytes when
    rendering was asked for (then ``excerpt`` is None: worker processes send back the
    bytes only; None too for a file with no match that is not to be shown); ``text`` is
    the same as a str. ``matches``: how many lines or chunks match (with signatures: how
    many definitions), None unless ok. While a run loads: ``source``, the text held whole
    for the ranking (``retrieval.rank.Source``), or ``stream``, a text too large to hold
    (a path) or to rank (bytes), scored as it is read."""

    label: str
    status: str
    excerpt: Item | None = None
    error: str | None = None
    exit_status: int = 0
    block: bytes | None = None
    matches: int | None = None
    source: object = None
    stream: str | bytes | None = None
    blanked: int = 0  # private key blocks read as blank lines (``iter_excerpts``' BLANK_KEYS)

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
        doc = {**json_name(self.label), "status": self.status}
        if self.status == UNREADABLE:
            doc["error"] = json_text(self.error or "")
        return doc


def find_unreadable(sources: Iterable[InputSpec]) -> dict[str, str]:
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
