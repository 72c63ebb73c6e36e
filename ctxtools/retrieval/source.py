"""One candidate of a ranking, whose bytes need not be held from reading to ranking.

A pack of a large tree reads every candidate once (its noise, its vocabulary), but ranks
only a few hundred of them chunk by chunk: the others are known by their vocabulary, their
size and their line count. Holding every file's bytes between the two is most of what such
a pack weighs (64 MB for kafka's 6,500 files), so a ``Source`` may let its bytes go
(``release``) once what the ranking asks of every candidate is noted, and reads them again
from its file when they are asked for (``data``). A file that changed in between is its new
bytes, counted from them: its vocabulary is no longer taken for them (``vocab_of``).
"""

from __future__ import annotations

from ctxtools.source.classify import line_breaks

_XXH3 = None  # xxhash's xxh3_64_intdigest, imported by the first ``_digest``


def _digest(data: bytes) -> int:
    # (imported once: a digest is taken once a file, thousands a pack, and a function's
    # own import statement cost more than the hash of a small file)
    global _XXH3
    if _XXH3 is None:
        from xxhash import xxh3_64_intdigest as _XXH3
    return _XXH3(data)


class Source:
    """One candidate: its label (path under the root, or a handle), its bytes, the scanner's
    definitions (None: not scanned), whether the user named it, and for a review pack the
    new-side lines its diff changed. ``present``: the query terms its bytes hold
    (``rank.reachable`` sets it); ``vocab``: its words counted (``vocab.Vocab``), when the
    caller kept them; ``vocab_of``: the bytes VOCAB counted (``data`` until it is replaced,
    as a redaction does). PATH: the file its bytes can be read again from (``release``)."""

    __slots__ = (
        "_data", "_digest", "_holds", "_lines", "_size", "_vocab_same", "changed", "defs",
        "label", "named", "path", "present", "role", "vocab",
    )  # fmt: skip

    def __init__(
        self,
        label: str,
        data: bytes,
        defs: tuple | None = None,
        named: bool = False,
        changed: frozenset[int] = frozenset(),
        path: str | None = None,
    ):
        self.label = label
        self._data: bytes | None = data
        self.defs = defs
        self.named = named
        self.changed = changed
        self.path = path
        self.role = ""
        self.present: list[int] | None = None
        self.vocab: object = None
        self._vocab_same = False  # VOCAB counted the bytes DATA gives
        self._size = -1  # (once let go: len(data), its line breaks, its xxh3, and
        self._lines = -1  # whether it holds each needle ``release`` was given)
        self._digest = 0
        self._holds: dict[bytes, bool] = {}

    @property
    def data(self) -> bytes:
        """Its bytes (read again from PATH when they were let go)."""
        data = self._data
        if data is None:
            data = self._data = self._read_again()
        return data

    @data.setter
    def data(self, value: bytes) -> None:
        self._data = value
        self._vocab_same = False
        self.path = None  # (other bytes than the file's: never let go)

    @property
    def vocab_of(self) -> bytes | None:
        """The bytes VOCAB counted, when they are DATA's (None otherwise)."""
        return self.data if self._vocab_same else None

    @vocab_of.setter
    def vocab_of(self, value: bytes | None) -> None:
        self._vocab_same = value is not None and value is self._data

    def release(self, needles: tuple[bytes, ...] = ()) -> None:
        """Let its bytes go, noting first their size, line breaks and which of NEEDLES
        (the query's messages) they hold; nothing when they cannot be read again."""
        data = self._data
        if data is None or self.path is None:
            return
        if self._size < 0:
            self._size = len(data)
            self._lines = line_breaks(data)
            self._digest = _digest(data)
        for n in needles:
            if n not in self._holds:
                self._holds[n] = n in data
        self._data = None

    def size(self) -> int:
        """len(data), without reading it again."""
        return len(self._data) if self._data is not None else self._size

    def line_breaks(self) -> int:
        """data.count(b"\\n"), without reading it again."""
        return self._data.count(b"\n") if self._data is not None else self._lines

    def holds(self, needle: bytes) -> bool:
        """NEEDLE in data, without reading it again when ``release`` was told."""
        if self._data is None and needle in self._holds:
            return self._holds[needle]
        return needle in self.data

    def _read_again(self) -> bytes:
        assert self.path is not None
        try:
            with open(self.path, "rb") as fh:
                data = fh.read()
        except OSError:
            data = b""  # (gone since it was read: shown as it is now)
        if len(data) != self._size or _digest(data) != self._digest:
            self._vocab_same = False  # changed since: its bytes are counted, not its words
            self._size, self._lines, self._holds = -1, -1, {}
        return data
