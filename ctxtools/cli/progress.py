"""Progress on stderr for long work: one line, redrawn in place, only on a terminal.

``Progress.start(label, ...)`` returns a ``Progress`` when stderr is a terminal, else
None: a pipe, a file or a CI log never gets a progress line. The line is plain text
(``counting  [######      ]  52%  130/250 files``), its label and filled part coloured unless
``NO_COLOR`` is set (to anything; see no-color.org) or ``TERM`` is ``dumb`` -- then it holds
no escape sequence at all, only carriage returns and spaces. It is redrawn at most every
``INTERVAL`` seconds, and ``close()`` erases it, so what the command prints after it starts
on a clean line.

Work made of steps (ctx-pack, ctx-repomap: listing, scanning, ranking, ...) names each as
it begins (``phase(name)``), and the line says which one is under way from the start of the
work, not only once a step with a known size has begun: with PATIENCE, a run that has gone
on that long shows its step whatever its size (a ticker redraws it, so a step that reports
nothing, such as ``git ls-files`` over a big tree, shows its elapsed seconds).

The library never prints: a library call takes a callback (``progress(done, total)``,
``progress(n_bytes)`` or ``stage(name)``) and the command passes one of these methods.
"""

from __future__ import annotations

import os
import sys
import threading
import time

INTERVAL = 0.1  # seconds between redraws
PATIENCE = 0.5  # seconds after which work in steps shows its step, whatever its size
_WIDTH = 20  # characters of the bar
_COLOUR, _PLAIN = "\x1b[36m", "\x1b[0m"  # the bar's filled part in cyan

# Held while a line is written, and across a fork (a worker forked while the ticker wrote
# would inherit stderr's buffer locked).
_write_lock = threading.Lock()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_write_lock.acquire,
        after_in_parent=_write_lock.release,
        after_in_child=_write_lock.release,
    )


def colour_allowed(environ=os.environ) -> bool:
    """Whether the progress line may use colour (and other escape sequences)."""
    return not environ.get("NO_COLOR") and environ.get("TERM") != "dumb"


def human_bytes(n: int) -> str:
    """1536 -> '1.5 KiB'; under 1 KiB: '512 B'."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


class Progress:
    """One progress line on STREAM. ``update(done, total)`` sets the position (``advance(n)``
    adds to it); UNIT is ``"bytes"`` (shown as sizes) or a plural noun (``"files"``).
    DELAY: nothing is shown before that many seconds have passed, MIN_TOTAL: nor while the
    total is smaller (quick work stays quiet), unless PATIENCE seconds have passed. TICK:
    a thread redraws the line every INTERVAL (work that can stall, such as a command's
    output, still shows its elapsed time)."""

    def __init__(
        self,
        stream,
        label: str,
        *,
        unit: str,
        total: int | None,
        delay: float,
        min_total: int = 0,
        patience: float | None = None,
    ):
        self.stream = stream
        self.label = label
        self.unit = unit
        self.total = total
        self.done = 0
        self.extra = ""  # appended to the line: "3/250 files"
        self.colour = colour_allowed()
        self.started = time.monotonic()
        self.delay = delay
        self.min_total = min_total
        self.patience = patience
        self.drawn_at = 0.0
        self.width = 0  # characters of the last line drawn (0: nothing on screen)
        self.last = ""  # the last line drawn (the same line is not drawn again)
        self.lock = threading.Lock()
        self.ticker: threading.Thread | None = None
        self.stopped = threading.Event()

    @classmethod
    def start(
        cls,
        label: str,
        *,
        unit: str = "bytes",
        total: int | None = None,
        delay: float = 0.0,
        min_total: int = 0,
        patience: float | None = None,
        tick: bool = False,
        stream=None,
    ) -> Progress | None:
        """A Progress on stderr (or STREAM) when it is a terminal; None otherwise."""
        stream = sys.stderr if stream is None else stream
        try:
            if not stream.isatty():
                return None
        except (AttributeError, ValueError):
            return None
        quiet = {"delay": delay, "min_total": min_total, "patience": patience}
        bar = cls(stream, label, unit=unit, total=total, **quiet)
        if tick:
            bar.ticker = threading.Thread(target=bar._tick, daemon=True)
            from ctxtools.runner import start_thread

            start_thread(bar.ticker)  # signals go to the main thread
        return bar

    # the callbacks a library call takes
    def update(self, done: int, total: int | None = None) -> None:
        """Set the position to DONE (of TOTAL, when given); never backwards."""
        with self.lock:
            if total is not None:
                self.total = total
            self.done = max(self.done, done)
        self._maybe_draw()

    def advance(self, n: int) -> None:
        """Move the position on by N."""
        with self.lock:
            self.done += n
        self._maybe_draw()

    def phase(self, name: str, total: int | None = None) -> None:
        """A new step of the work begins, named NAME (``listing``, ``scanning``): the
        position starts again from 0 (of TOTAL, when known)."""
        with self.lock:
            self.label = name
            self.done = 0
            self.total = total
            self.extra = ""
        self._maybe_draw(force=True)

    def note(self, extra: str) -> None:
        """Text shown after the position (``3/250 files``)."""
        with self.lock:
            self.extra = extra
        self._maybe_draw()

    def close(self) -> None:
        """Stop redrawing and erase the line."""
        self.stopped.set()
        if self.ticker is not None:
            self.ticker.join(1.0)
        with self.lock:
            if self.width:
                self._write("\r" + " " * self.width + "\r")
                self.width = 0

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    # drawing
    def _tick(self) -> None:
        while not self.stopped.wait(INTERVAL):
            self._maybe_draw(force=True)

    def _maybe_draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.stopped.is_set() or now - self.started < self.delay:
            return
        small = self.min_total and (self.total or 0) < self.min_total
        if small and (self.patience is None or now - self.started < self.patience):
            return
        if not force and self.width and now - self.drawn_at < INTERVAL:
            return
        with self.lock:
            if self.stopped.is_set():
                return
            line = self.line(now - self.started)
            if line == self.last:
                return
            self.last = line
            visible = len(line) - line.count(_COLOUR) * (len(_COLOUR) + len(_PLAIN))
            pad = " " * max(0, self.width - visible)
            self._write("\r" + line + pad)
            self.width = visible
            self.drawn_at = now

    def line(self, elapsed: float) -> str:
        """The text of the line (colour codes aside)."""
        pos = human_bytes(self.done) if self.unit == "bytes" else f"{self.done:,} {self.unit}"
        parts = [f"{_COLOUR}{self.label}{_PLAIN}" if self.colour else self.label]
        if self.total:
            share = min(1.0, self.done / self.total)
            filled = int(share * _WIDTH)
            bar = "#" * filled
            if self.colour and bar:
                bar = f"{_COLOUR}{bar}{_PLAIN}"
            parts.append(f"[{bar}{' ' * (_WIDTH - filled)}] {share * 100:3.0f}%")
            if self.unit == "bytes":
                parts.append(f"{pos} of {human_bytes(self.total)}")
            else:
                parts.append(f"{self.done:,}/{self.total:,} {self.unit}")
        elif self.done or self.unit == "bytes":  # (a step of unknown size: its name)
            parts.append(pos)
        if self.extra:
            parts.append(self.extra)
        parts.append(f"{int(elapsed)} s")
        return "  ".join(parts)

    def _write(self, text: str) -> None:
        try:
            with _write_lock:
                self.stream.write(text)
                self.stream.flush()
        except (OSError, ValueError):
            self.stopped.set()
