"""What ctx-read does, as library calls: the one projection a call asks for, its words
checked before anything is read, and the view it makes of a payload.

``ReadRequest`` holds the projection options as ctx-read takes them; ``projection()``
says which one is asked for (None: the content from the top) or raises UsageError, and
``view`` runs a line or JSON projection over a payload (``ctxtools.projections``).
--count and --introspect are JSON documents made by ``projections.count`` and
``projections.introspect``; the input itself comes from ``ctxtools.resolve.open_input``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from ctxtools.errors import UsageError

if TYPE_CHECKING:
    from ctxtools.projections import Next, Output
    from ctxtools.store import Payload

NOT_NUMBERED = ("--grep", "--count", "--jsonpath", "--introspect")  # -n makes no sense there


@dataclass(frozen=True)
class ReadRequest:
    """The projection options of one read (ctx-read's, by their option names)."""

    slice: str | None = None
    unit: str = "chars"
    range: str | None = None
    head: int | None = None
    tail: int | None = None
    grep: str | None = None
    context: int = 0
    ignore_case: bool = False
    count: bool = False
    jsonpath: str | None = None
    paths: bool = False
    dialect: str = "rfc9535"
    skip: int = 0
    introspect: bool = False
    number: bool = False

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def projection(self) -> str | None:
        """The projection asked for, as its option ("--grep"), or None for none; checks
        every word (ranges, slices, counts) so that a usage error reads nothing."""
        from ctxtools import projections as pj

        chosen = [
            flag
            for flag, on in (
                ("--slice", self.slice is not None),
                ("--range", self.range is not None and self.grep is None),
                ("--head", self.head is not None),
                ("--tail", self.tail is not None),
                ("--grep", self.grep is not None),
                ("--count", self.count),
                ("--jsonpath", self.jsonpath is not None),
                ("--introspect", self.introspect),
            )
            if on
        ]
        if len(chosen) > 1:
            raise UsageError(" and ".join(chosen) + " cannot be combined (one projection a read)")
        what = chosen[0] if chosen else None
        if self.grep is None and (self.context or self.ignore_case):
            raise UsageError("-C and -i go with --grep")
        if what != "--jsonpath" and (self.paths or self.skip or self.dialect != "rfc9535"):
            raise UsageError("--paths, --skip and --dialect go with --jsonpath")
        if self.number and what in NOT_NUMBERED:
            raise UsageError(f"-n numbers line projections; {what} does not take it")
        if self.unit != "chars" and what != "--slice":
            raise UsageError("--unit goes with --slice")
        if self.range is not None:
            pj.parse_range(self.range)
        if self.slice is not None:
            pj.parse_slice(self.slice)
        for flag in ("head", "tail", "context"):
            value = getattr(self, flag)
            if value is not None and value < 0:
                raise UsageError(f"--{flag} {value}: must be 0 or more")
        return what


def view(
    payload: Payload, req: ReadRequest, what: str | None, *, max_chars: int, nxt: Next | None
) -> Output:
    """The view of PAYLOAD that WHAT (``req.projection()``; not --count or --introspect)
    makes, capped at MAX_CHARS; NXT words the command that shows the next part."""
    out = _view(payload, req, what, max_chars=max_chars, nxt=nxt)
    record = payload.record
    if record.get("type") == "binary":
        out.notes.insert(
            0,
            f"binary payload ({record['bytes']:,} bytes): bytes that are not UTF-8 "
            "are shown as U+FFFD (--count and --introspect describe it)",
        )
    if record.get("incomplete"):
        out.notes.insert(0, f"incomplete: the capture was cut short by {record['incomplete']}")
    return out


def _view(
    payload: Payload, req: ReadRequest, what: str | None, *, max_chars: int, nxt: Next | None
) -> Output:
    from ctxtools import projections as pj

    common = {"max_chars": max_chars, "nxt": nxt}
    if what == "--grep":
        return pj.grep_view(
            payload,
            req.grep,
            context=req.context,
            ignore_case=req.ignore_case,
            scope=req.range,
            **common,
        )
    if what == "--jsonpath":
        return pj.jsonpath_view(
            payload, req.jsonpath, dialect=req.dialect, paths=req.paths, skip=req.skip, **common
        )
    common["number"] = req.number
    if what == "--slice":
        return pj.slice_view(payload, req.slice, unit=req.unit, **common)
    if what is None:
        return pj.lines_view(payload, 0, None, asked="all lines", **common)
    views = {"--range": pj.range_view, "--head": pj.head_view, "--tail": pj.tail_view}
    arg = {"--range": req.range, "--head": req.head, "--tail": req.tail}[what]
    return views[what](payload, arg, **common)
