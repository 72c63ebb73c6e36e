"""The use log: which files packs used and when, for ranking candidates by frecency.

One JSON line a use (``{"p": path, "n": count, "t": seconds}``) appended to
``mentions/<hash of the root>.uses.jsonl``; compacted to the ``MAX_USES`` best entries
once it holds more than twice that many lines. A log that cannot be read or written costs
the ranking hint, never the resolution.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ctxtools.mentions.common import clean_rel, note, save

MAX_USES = 1_000  # entries kept in the use log (lowest frecency dropped first)
HALF_LIFE_DAYS = 7.0
LAMBDA = math.log(2) / (HALF_LIFE_DAYS * 86_400.0)  # per second


def frecency(count: float, last: float, now: float) -> float:
    """``count × e^(−λ·age)``, half-life 7 days; a use in the future counts as now."""
    return count * math.exp(-LAMBDA * max(0.0, now - last))


class UseLog:
    """The use log at PATH; CLOCK gives "now"; failures to write are added to NOTES."""

    def __init__(self, path: Path, clock: Callable[[], float], notes: list[str]):
        self.path = path
        self._clock = clock
        self._notes = notes
        self._uses: dict[str, tuple[int, float]] | None = None

    def _read(self) -> tuple[dict[str, tuple[int, float]], int, bool]:
        """(path -> (count, last use), lines read, whether the file ends in a newline)."""
        import json

        uses: dict[str, tuple[int, float]] = {}
        try:
            data = self.path.read_bytes()
        except OSError:
            return uses, 0, True
        lines = 0
        for raw in data.split(b"\n"):
            if not raw.strip():
                continue
            lines += 1
            try:
                rec = json.loads(raw)
                path, count, when = rec["p"], int(rec["n"]), float(rec["t"])
            except (ValueError, KeyError, TypeError, OverflowError):
                continue  # a line cut by a killed writer, or not ours
            if not isinstance(path, str) or count < 1 or not math.isfinite(when):
                continue
            old = uses.get(path)
            uses[path] = (count, when) if old is None else (old[0] + count, max(old[1], when))
        return uses, lines, data.endswith(b"\n") or not data

    def _keep(self, uses: dict[str, tuple[int, float]], now: float) -> dict:
        """USES cut to MAX_USES entries, the lowest frecency dropped first (then by path)."""
        if len(uses) <= MAX_USES:
            return uses
        ranked = sorted(uses.items(), key=lambda kv: (-frecency(*kv[1], now), kv[0]))
        return dict(ranked[:MAX_USES])

    def uses(self) -> dict[str, tuple[int, float]]:
        """path -> (count, last use), at most MAX_USES entries."""
        if self._uses is None:
            uses, _, _ = self._read()
            self._uses = self._keep(uses, self._clock())
        return self._uses

    def record(self, paths: Sequence[str], when: float | None = None) -> None:
        """Append one use of PATHS (relative to the root) at WHEN (default now), or
        compact the log when it has grown past twice MAX_USES lines (see
        ``MentionResolver.record_use``)."""
        import json

        when = self._clock() if when is None else float(when)
        clean = sorted({p for p in (clean_rel(x) for x in paths) if p})
        if not clean or not math.isfinite(when):
            return
        uses, lines, ends_in_newline = self._read()
        for p in clean:
            old = uses.get(p)
            uses[p] = (1, when) if old is None else (old[0] + 1, max(old[1], when))
        self._uses = self._keep(uses, self._clock())
        if lines + len(clean) > 2 * MAX_USES:
            body = "".join(
                json.dumps({"p": p, "n": n, "t": t}) + "\n"
                for p, (n, t) in sorted(self._uses.items())
            )
            save(self.path, body.encode("utf-8"), "use log", self._notes)
            return
        text = "".join(json.dumps({"p": p, "n": 1, "t": when}) + "\n" for p in clean)
        if not ends_in_newline:
            text = "\n" + text
        self._append(text.encode("utf-8"))

    def _append(self, data: bytes) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, data)  # one write: whole lines or nothing
            finally:
                os.close(fd)
        except OSError as exc:
            note(self._notes, "use log", f"{exc.strerror or exc}: {exc.filename or self.path}")
