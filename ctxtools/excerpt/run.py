"""Excerpts of many inputs in one run: loading, per-file status, a token budget, order.

``ctxtools.excerpt`` cuts one text; this module runs it over a list of inputs the way
ctx-excerpt does, for any caller (ctx-pack assembles budgeted prompt packs with it)::

    run = excerpt_sources(["src/auth.py", "ctx:notes"], task,
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

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxtools.excerpt.core import QueryLike
from ctxtools.excerpt.fit import Dropped, fit_budget
from ctxtools.excerpt.inputs import OK, UNREADABLE, FileResult, InputSpec, Item
from ctxtools.excerpt.loader import iter_excerpts, render_item
from ctxtools.excerpt.model import ExcerptOptions
from ctxtools.excerpt.render import excerpt_dict
from ctxtools.excerpt.signatures import signatures_dict
from ctxtools.fsutil import json_name, json_text

if TYPE_CHECKING:
    from ctxtools.store import HandleStore
    from ctxtools.tokens import Ruler


NOTE_LIMIT = 20  # files named in the notes about budget drops before "... and N more"

UNMATCHED_MODES = ("show", "name", "omit")  # what becomes of a file where nothing matched


def render_unmatched(labels: list[str], named: int | None = None) -> str:
    """The closing list of the files where nothing matched: ``no match in N files:``, then
    a name a line (the first NAMED of them when a budget cut the list, then how many more
    were not named)."""
    from ctxtools.quoting import quote_name

    k = len(labels)
    labels = [quote_name(lab) for lab in labels]
    lines = [f"no match in {k} file{'' if k == 1 else 's'}:"]
    if named is None or named >= k:
        lines.extend(labels)
    else:
        lines.extend(labels[:named])
        lines.append(f"… and {k - named} more")
    lines.append("")
    return "\n".join(lines)


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


# --- a whole run ---------------------------------------------------------------------------


@dataclass
class ExcerptRun:
    """The outcome of ``excerpt_sources``: the query's ``terms`` (before rarity), every
    input's ``results`` in the order given,
    and what is ``shown`` -- (label, excerpt or signatures) in print order, after the budget
    and the sort. With a budget: what was ``dropped``, and ``tokens``, the ruler's count
    of ``render()``. ``unmatched_mode`` is what became of the files where nothing matched
    ("show", "name" or "omit"); ``named``: how many of them the closing list names when a
    budget cut it (None: all)."""

    terms: tuple[str, ...]
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
                    what = f"window {d.start}-{d.end} (score {d.score:.3g})"
                elif d.kind == "head":
                    what = f"head {d.start}-{d.end} (the file shown by its windows alone)"
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
                    **json_name(d.label),
                    "kind": d.kind,
                    "start": d.start,
                    "end": d.end,
                    "score": round(d.score, 3),
                }
                for d in self.dropped
            ],
        }

    def as_dict(self) -> dict:
        """The --json document of ctx-excerpt (its --help gives the schema)."""
        to_dict = signatures_dict if self.signatures else excerpt_dict
        doc: dict = {
            "terms": list(self.terms),
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
    sources: Iterable[InputSpec],
    query: QueryLike,
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
    blank_keys: bool = False,
) -> ExcerptRun:
    """Excerpt every input for QUERY, a task's text or a ``Query`` (see ``iter_excerpts``
    for SIGNATURES, JOBS, STORE, SESSION, UNREADABLE, BLANK_KEYS), fit the whole text into BUDGET
    tokens of RULER when a budget is given, and order the files: SORT "given", or "score"
    (best first, ties in the order given).

    UNMATCHED is what becomes of a file where nothing matched: "show" (its head and tail,
    the default), "name" (not shown; named in a closing list, and in ``as_dict()``'s
    "unmatched") or "omit" (neither); not with SIGNATURES.

    The budget keeps what is worth most, in the engine's order of relevance: windows, the
    most relevant first (a file's header and head with its first), then matched files by
    their head, then files where nothing matched (see ``ctxtools.excerpt.fit``); in "name"
    mode the list's heading is kept out of the files' budget, and the list names as many
    files as then fit. RULER is a Ruler, or a function returning one, called only when a
    budget needs it, after every
    input is loaded (None: the default ``get_ruler()``). ON_FILE is called with each
    result as it is loaded, in the order given; an exception from it stops the run.
    """
    if sort not in ("given", "score"):
        raise ValueError(f"sort must be 'given' or 'score', not {sort!r}")
    if unmatched not in UNMATCHED_MODES:
        raise ValueError(f"unmatched must be one of {UNMATCHED_MODES}, not {unmatched!r}")
    if signatures and unmatched != "show":
        raise ValueError("unmatched applies to excerpts, not to signatures")
    from ctxtools.analyzer.query import Query
    from ctxtools.retrieval.window import window_query

    options = options or ExcerptOptions()
    query = query if isinstance(query, Query) else window_query(query)
    results: list[FileResult] = []
    for res in iter_excerpts(
        sources,
        query,
        options,
        signatures=signatures,
        jobs=jobs,
        store=store,
        session=session,
        unreadable=unreadable,
        blank_keys=blank_keys,
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
        tuple(query.terms), options, signatures, results, shown, unmatched_mode=unmatched
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
