"""Forked worker processes: a function over many items, on this process and a few forked
children, the results read back in the order given (``forked_results``). ctx-excerpt's
loader and ctx-repomap's scan of a cold tree use it. And one computation in a child while
this process goes on (``Background``): ctx-pack's repo map, built while the pack reads.

No child outlives the call, whatever ends it and whenever (``Background``: its
``close()``):

* a child is forked with SIGINT, SIGTERM and SIGHUP blocked and is known to this process
  before any of them can act here;
* in a child those signals have their default action (or stay ignored when they were):
  a terminal's Ctrl-C, which goes to the whole process group, ends a worker at once and
  quietly, never with a traceback of its own; and a child dies with this process even
  when it is killed outright (Linux's parent-death signal);
* here, while children live, a handler kills and reaps them before the signal acts as it
  would have: SIGINT raises KeyboardInterrupt, SIGTERM and SIGHUP end the process by that
  signal. A signal the caller ignores or handles itself is left alone, and outside the
  main thread (where Python cannot set handlers) none is installed;
* any other early end (an exception, a consumer that stops reading) kills and reaps them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO, TypeVar

T = TypeVar("T")
R = TypeVar("R")

CHUNK = 48  # items a worker does at a time: worker k of J does chunks k, k + J, ...
ENDING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_live: set[int] = set()  # the children of every forked_results under way


def _kill_live() -> None:
    """SIGKILL every live child, then reap it."""
    pids = list(_live)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        _live.discard(pid)


def _on_signal(signum: int, _frame: object) -> None:
    """While children live: they go first, then the signal acts as it would have."""
    _kill_live()
    # (this handler may run inside a window with the ending signals blocked -- a fork's,
    # a helper thread's start -- and raise before the window restores the mask: the
    # signal is unblocked, so that it ends the process, and a second Ctrl-C is heard)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, (signum,))
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    raise SystemExit(128 + signum)  # reached only if the signal is blocked


def _is_default(signum: int, handler: Any) -> bool:
    if signum == signal.SIGINT:
        return handler is signal.default_int_handler
    return handler == signal.SIG_DFL


def _install() -> dict[int, Any]:
    """``_on_signal`` for each ending signal whose handler is the default; the handlers it
    replaced (to restore)."""
    import threading

    old: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return old
    for s in ENDING:
        current = signal.getsignal(s)
        if _is_default(s, current):
            old[s] = signal.signal(s, _on_signal)
    return old


def _parent_death_signal() -> Callable[[], None]:
    """A function that, called in a child, has the kernel kill it when this process dies
    (Linux's PR_SET_PDEATHSIG); a no-op elsewhere."""
    if not sys.platform.startswith("linux"):
        return lambda: None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        return lambda: None
    parent = os.getpid()

    def arm() -> None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # it died before the line above
            os._exit(1)

    return arm


def _child(
    func: Callable[[T], R],
    parts: Sequence[Sequence[T]],
    pipe: tuple[int, int],
    siblings: list[tuple[int, BinaryIO]],
    ignored: set[int],
    arm: Callable[[], None],
    mask: set[int],
) -> None:
    """In a child: its chunks, each a pickled (True, results) or (False, exception) on the
    PIPE's write end behind its length; then leave without running any cleanup (never
    returns)."""
    import pickle

    status = 0
    try:
        r, w = pipe
        os.close(r)
        for _, rd in siblings:
            rd.close()
        for s in ENDING:
            signal.signal(s, signal.SIG_IGN if s in ignored else signal.SIG_DFL)
        arm()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        with open(w, "wb") as out:  # buffered: writes every byte, or raises
            for part in parts:
                try:
                    payload = pickle.dumps((True, [func(item) for item in part]), protocol=5)
                except Exception as exc:  # sent to the parent, raised there
                    payload = pickle.dumps((False, exc), protocol=5)
                out.write(len(payload).to_bytes(8, "little"))
                out.write(payload)
                out.flush()
    except BaseException:  # a closed pipe: the parent stopped early
        status = 1
    finally:
        os._exit(status)


def _fork(func, parts, children, ignored, arm) -> tuple[int, BinaryIO]:
    """One child doing PARTS; its pid and the read end of its pipe."""
    r, w = os.pipe()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ENDING)
    try:
        pid = os.fork()
        if pid == 0:
            _child(func, parts, (r, w), children, ignored, arm, mask)
        _live.add(pid)
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)  # (a child never gets here)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    _grow_pipe(r)
    return pid, open(r, "rb")  # noqa: SIM115 (closed by forked_results)


def forked_results(
    func: Callable[[T], R],
    items: Sequence[T],
    jobs: int,
    chunk: int | None = None,
    started: Callable[[], None] | None = None,
) -> Iterator[R]:
    """FUNC over ITEMS in the order given, from JOBS processes: this one and JOBS - 1
    forked children. The items are cut into chunks of CHUNK dealt out in turn; this process
    does its own chunks between reading each child's next chunk of results from its pipe
    (pickled lists; a child runs ahead by what the pipe holds). An exception FUNC raises
    in a child is raised here. Cheaper than a Pool: no task queue, no result thread, one
    pipe write per chunk. STARTED, when given, is called here once the children run (and
    only then), before this process's first chunk: other work that overlaps theirs."""
    import pickle

    chunk = chunk or CHUNK
    chunks = [items[i : i + chunk] for i in range(0, len(items), chunk)]
    jobs = max(1, min(jobs, len(chunks)))
    if jobs == 1:
        for item in items:
            yield func(item)
        return
    children: list[tuple[int, BinaryIO]] = []
    ignored = {s for s in ENDING if signal.getsignal(s) == signal.SIG_IGN}
    arm = _parent_death_signal()
    restore = _install()
    finished = False
    try:
        for k in range(1, jobs):
            children.append(_fork(func, chunks[k::jobs], children, ignored, arm))
        if started is not None:
            started()
        for n, part in enumerate(chunks):
            k = n % jobs
            if k == 0:
                for item in part:
                    yield func(item)
                continue
            rd = children[k - 1][1]
            head = rd.read(8)
            if len(head) != 8:
                raise RuntimeError("a worker process ended early")
            ok, value = pickle.loads(rd.read(int.from_bytes(head, "little")))
            if not ok:
                raise value
            yield from value
        finished = True
    finally:
        for pid, rd in children:
            if not finished and pid in _live:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            rd.close()
        for pid, _ in children:
            if pid in _live:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
                _live.discard(pid)
        for s, h in restore.items():
            signal.signal(s, h)


def _grow_pipe(fd: int) -> None:
    """Let a pipe hold up to 1 MB (a child runs further ahead), where the system allows."""
    import fcntl

    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setsize is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, setsize, 1 << 20)


class Background:
    """One computation in a forked child while this process goes on. ``START(post)`` runs
    there at once; each ``post(value)`` it makes is read here, in order, by ``receive()``
    (which raises what START raised, once its posts are read) -- a value can be taken
    while the child still works on the next. The child ends once START has (what it
    posted stays readable here). ``close()`` reaps it (killed if it may still be at work)
    and restores the signal handlers; use it as a context manager. The child is handled as
    ``forked_results``'s are: signals, parent death, nothing left behind. Values go
    through a pipe, pickled behind their length."""

    def __init__(self, start: Callable[[Callable[[Any], None]], Any]):
        self._ignored = {s for s in ENDING if signal.getsignal(s) == signal.SIG_IGN}
        arm = _parent_death_signal()
        self._restore = _install()
        self.pid = 0
        up_r, up_w = os.pipe()  # child -> here
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, ENDING)
        try:
            self.pid = os.fork()
            if self.pid == 0:
                os.close(up_r)
                self._run(start, up_w, arm, mask)
            _live.add(self.pid)
        except BaseException:
            os.close(up_r)
            self._end_signals()
            raise
        finally:
            os.close(up_w)  # (a child never gets here)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        _grow_pipe(up_r)
        self._ended = False  # START's end (or failure) read: no post will come
        # A thread drains the child's pipe as it writes (its posts can be larger than a
        # pipe holds, and a child blocked on a full pipe would wait for this process).
        import queue
        import threading

        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._reader = threading.Thread(target=_drain, args=(up_r, self._inbox), daemon=True)
        self._reader.start()

    def _run(self, start, up_w: int, arm, mask) -> None:
        """In the child: START's posts, then its end or what it raised; leave without
        running any cleanup (never returns)."""
        import pickle

        status = 0
        try:
            for s in ENDING:
                signal.signal(s, signal.SIG_IGN if s in self._ignored else signal.SIG_DFL)
            arm()
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            with open(up_w, "wb") as out:

                def post(value: Any) -> None:
                    _send(out, pickle.dumps((_POST, value), protocol=5))

                try:
                    start(post)
                    _send(out, pickle.dumps((_STARTED, None), protocol=5))
                except Exception as exc:  # sent to the parent, raised there
                    _send(out, pickle.dumps((_RAISED, exc), protocol=5))
        except BaseException:  # a closed pipe: the parent stopped early
            status = 1
        finally:
            os._exit(status)

    def receive(self) -> Any:
        """START's next post (waiting for it); what START raised, raised here, once its
        posts are read; LookupError when START ended without another (and for every call
        after START's end or failure was read: nothing more will come)."""
        import pickle

        if self._ended:
            raise LookupError("the child posts nothing more")
        payload = self._inbox.get()
        if payload is None:
            self._inbox.put(None)  # (for any later call too)
            raise RuntimeError("a worker process ended early")
        kind, value = pickle.loads(payload)
        if kind == _STARTED:
            self._ended = True
            raise LookupError("the child posted nothing more")
        if kind == _RAISED:
            self._ended = True
            raise value
        return value

    def close(self) -> None:
        """End the child: reaped once it has ended, killed when it may be at work."""
        if self.pid in _live:
            if not self._ended:
                with contextlib.suppress(OSError):
                    os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            _live.discard(self.pid)
        self._reader.join()  # (the child is gone: its pipe is at its end)
        self._end_signals()

    def _end_signals(self) -> None:
        for s, h in self._restore.items():
            signal.signal(s, h)
        self._restore = {}

    def __enter__(self) -> Background:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_POST, _STARTED, _RAISED = "post", "started", "raised"  # what a message from a child is


def _drain(fd: int, inbox) -> None:
    """In a thread: each message on pipe FD (its bytes) into INBOX, then None at its end."""
    try:
        with open(fd, "rb") as up:
            while True:
                head = up.read(8)
                if len(head) != 8:
                    break
                size = int.from_bytes(head, "little")
                payload = up.read(size)
                if len(payload) != size:
                    break
                inbox.put(payload)
    except (OSError, ValueError):
        pass
    finally:
        inbox.put(None)


def _send(out: BinaryIO, payload: bytes) -> None:
    out.write(len(payload).to_bytes(8, "little"))
    out.write(payload)
    out.flush()
