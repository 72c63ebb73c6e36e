"""What every tool call of a server shares: the store and session, the roots, the default
model, the inline limit, the rulers already loaded, and the commands ``run`` started.

``Env`` is made once per server (``Env.make``); a call gets it with the roots that apply
to that call (``with_roots``: the client may change its roots between calls). Rulers are
loaded once per encoding and kept (a warm server counts a pack without reloading its
encoding), behind a lock: calls run in worker threads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxtools.mcp.results import INLINE_MAX

if TYPE_CHECKING:
    import subprocess

    from ctxtools.mcp.roots import Roots
    from ctxtools.store import HandleStore


class Rulers:
    """One ruler per encoding for the server's life (``get(None)``: the default one)."""

    def __init__(self, store_root) -> None:
        self.store_root = store_root
        self._lock = threading.Lock()
        self._choices: dict[str | None, Any] = {}

    def get(self, encoding: str | None):
        """The RulerChoice (ruler and notes) for ENCODING, loaded on first use."""
        with self._lock:
            choice = self._choices.get(encoding)
            if choice is None:
                from ctxtools.tokens import get_ruler

                choice = get_ruler(encoding=encoding, store_root=self.store_root)
                self._choices[encoding] = choice
            return choice


class Children:
    """The commands ``run`` started and that still run: stopped on cancel and shutdown."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen] = set()
        self._closed = False  # stop_all ran: a command that starts after it is stopped too

    def add(self, proc: subprocess.Popen) -> None:
        """Keep PROC to stop it; stop it now if ``stop_all`` ran while it was starting (a
        call cancelled, or the server ending, between its spawn and this)."""
        with self._lock:
            if not self._closed:
                self._procs.add(proc)
                return
        import signal

        from ctxtools import runner

        with contextlib.suppress(OSError):
            runner.stop(proc, signal.SIGTERM, grace=1.0)

    def discard(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.discard(proc)

    def stop_all(self, grace: float = 1.0) -> int:
        """SIGTERM each one's process group, SIGKILL what is left after GRACE seconds;
        the number stopped."""
        import signal

        from ctxtools import runner

        with self._lock:
            procs = list(self._procs)
            self._procs.clear()
            self._closed = True
        for proc in procs:
            with contextlib.suppress(OSError):
                runner.stop(proc, signal.SIGTERM, grace=grace)
        return len(procs)


@dataclass
class Env:
    """A server's state as a tool call sees it."""

    store: HandleStore
    session: str
    roots: Roots
    model: str | None = None
    inline_max: int = INLINE_MAX
    allow_run: bool = False
    rulers: Rulers | None = None
    children: Children = field(default_factory=Children)
    key_blocks: dict = field(default_factory=dict)  # stored payload's SHA-256 -> its key blocks

    @classmethod
    def make(cls, store_dir, session: str, roots: Roots, **kw: Any) -> Env:
        from ctxtools.config import store_root
        from ctxtools.store import HandleStore, validate_session

        validate_session(session)
        store = HandleStore(store_root(store_dir))
        return cls(store, session, roots, rulers=Rulers(store.root), **kw)

    def with_roots(self, roots: Roots) -> Env:
        return dataclasses.replace(self, roots=roots)

    def ruler(self, encoding: str | None = None):
        """The ruler for ENCODING (None: the default encoding)."""
        assert self.rulers is not None
        return self.rulers.get(encoding).ruler

    def ruler_notes(self, encoding: str | None = None) -> list[str]:
        assert self.rulers is not None
        return list(self.rulers.get(encoding).notes)

    def model_encoding(self, model: str | None) -> str | None:
        """The encoding that counts for MODEL (None: the default encoding)."""
        if not model:
            return None
        from ctxtools import profiles as prof

        return prof.resolve(model, prof.load_profiles(None)).encoding
