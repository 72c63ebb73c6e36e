"""The records of the repo map's three memos, one named record a memo (each kept through
``source.memo.Memo``):

* ``graph-v1-*`` (``GraphState``): the file graph of the last run, file by file (each
  file's resolved imports and its uses, under its content hash), and its plain
  (unpersonalised) ranking. After an edit only the edited files, and the files using a
  name whose definitions changed, are linked again; when no edge changed, the ranking is
  reused. Every part is what a cold build computes, so the map is the same bytes as a
  cold run's.
* ``fit-v1-*`` (``FitRecord``): per budget, ruler and query/focus, how the last layout
  was fitted: a digest of the lines ``fit`` looked at and the text it chose. The same
  lines fit the same way, so an edit that leaves the top of the map alone needs no
  tokenizer.
* ``result-v1-*`` (``MapRecord``): whole maps, keyed by every file's stamp and the options.

Every key holds ``code_fingerprint()``: new code, new results.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import NamedTuple

from ctxtools.source.memo import from_plain
from ctxtools.source.scancache import files_fingerprint

_PACKAGE = Path(__file__).resolve().parent.parent  # ctxtools/


@functools.cache
def code_fingerprint() -> str:
    """xxh3 of the source of the map (this package) and of what it stands on (``source``,
    ``binary.py``, ``quoting.py``: how its names are shown): new code, new results."""
    return files_fingerprint(
        [
            *sorted((_PACKAGE / "repomap").glob("**/*.py")),
            *sorted((_PACKAGE / "source").glob("**/*.py")),
            _PACKAGE / "binary.py",
            _PACKAGE / "quoting.py",
        ]
    )


class Ranking(NamedTuple):
    """A graph's plain (unpersonalised) ranking: file RANK, file SCORE, definition scores
    per file (DSCORES), the out-edges it was computed on (OUT) and the import edges."""

    rank: list
    score: list
    dscores: list
    out: list
    import_edges: int


class GraphState(NamedTuple):
    """The graph memo's record: the mapped FILES, their content DIGESTS, each file's PART
    (its imports' part and uses, ``marshal``-ed) and the plain RANKING, or None."""

    files: tuple
    digests: tuple
    parts: list
    ranking: Ranking | None

    def to_plain(self) -> tuple:
        ranking = tuple(self.ranking) if self.ranking is not None else None
        return (self.files, self.digests, self.parts, ranking)

    @classmethod
    def from_plain(cls, value: object) -> GraphState | None:
        if type(value) is not tuple or len(value) != len(cls._fields):
            return None
        files, digests, parts, ranking = value
        if not (type(files) is tuple and type(digests) is tuple and type(parts) is list):
            return None
        # (a ranking of another shape is only a ranking to compute again)
        return cls(files, digests, parts, from_plain(Ranking, ranking))


class FitRecord(NamedTuple):
    """The fit memo's record: how many layout items a fit EXAMINED and its search BOUND,
    the digest of the lines it looked at, the TEXT and TOKENS it chose, its SELECTION of
    items, and the ruler that counted (name, exact)."""

    examined: int
    bound: int
    digest: str
    text: str
    tokens: int
    selection: list
    ruler: str
    exact: bool


class MapRecord(NamedTuple):
    """The result memo's record: a rendered map and what ``--json``'s head and the notes
    say of it."""

    text: str
    tokens: int
    shown_files: int
    shown_symbols: int
    ruler: str
    exact: bool
    notes: tuple
