"""How many worker processes a run over many files gets, and the size of their chunks.
The processes themselves are ``ctxtools.forked``'s: forked children, each sending back its
chunks of results through a pipe, read in the order given, none left behind."""

from __future__ import annotations

import os

CHUNK = 48  # inputs a worker does at a time: worker k of J does chunks k, k + J, ...
SCAN_MIN = 64  # files whose definitions are worth a second process to scan


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
