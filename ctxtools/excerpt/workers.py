"""The worker processes of a run over many files: forked children, each sending back its
chunks of results through a pipe, read in the order given."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from ctxtools.excerpt.inputs import FileResult, Input


CHUNK = 48  # inputs a worker does at a time: worker k of J does chunks k, k + J, ...


def forked_results(
    loader: Callable[[Input], FileResult], inputs: list[Input], jobs: int, chunk: int | None = None
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
