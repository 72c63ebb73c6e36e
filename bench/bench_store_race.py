#!/usr/bin/env python3
"""Reads racing re-stashes and gc (issue 21, item 11): how many reads fail, and with what.

    .venv/bin/python bench/bench_store_race.py [--seconds 20] [--writers 4] [--readers 4]

Forked processes on one fresh store, through the library (what ctx-stash and ctx-read
call, without their start-up): WRITERS re-stash the same few names with new bytes in a
loop, one process runs gc (``--max-entries 100``) in a loop, and READERS read the names in
a loop. A read must return some whole version of that name (each ends with its name);
anything else is a failure, counted with its message. Last, ``ctx-stash --gc --dry-run``
on that store mounted read-only (a bind mount, as root).
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
NAMES = ["log0", "log1", "log2"]


def writer(store: str, k: int, until: float) -> None:
    from ctxtools.store import HandleStore

    st = HandleStore(store)
    n = 0
    while time.time() < until:
        name = NAMES[n % len(NAMES)]
        data = f"writer {k} version {n}\n".encode() * 2000 + f"end of {name}\n".encode()
        st.put_bytes(data, name=name)
        n += 1


def gc(store: str, until: float) -> None:
    from ctxtools.store import HandleStore

    st = HandleStore(store)
    while time.time() < until:
        st.gc(max_entries=100)


def reader(store: str, until: float, out: Path) -> None:
    from ctxtools.errors import CtxError
    from ctxtools.store import HandleStore

    st = HandleStore(store)
    counts: collections.Counter = collections.Counter()
    n = 0
    while time.time() < until:
        name = NAMES[n % len(NAMES)]
        n += 1
        try:
            data = st.read_bytes(name)
        except CtxError as exc:
            key = (
                "not yet stashed" if "no handle" in exc.message else f"{type(exc).__name__}: {exc}"
            )
            counts[key[:200]] += 1
            continue
        counts["ok" if data.endswith(f"end of {name}\n".encode()) else "wrong bytes"] += 1
    out.write_text("\n".join(f"{v}\t{k}" for k, v in counts.items()) + "\n")


def read_only_dry_run(store: str) -> str:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return "skipped (needs root and unshare for a read-only bind mount)"
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    r = subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            script,
            "sh",
            store,
            str(BIN / "ctx-stash"),
            "--store",
            store,
            "--gc",
            "--dry-run",
        ],
        capture_output=True,
        text=True,
    )
    return f"exit {r.returncode}: {(r.stdout or r.stderr).strip()[:160]}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--readers", type=int, default=4)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ctx-race-"))
    store = str(tmp / "store")
    until = time.time() + args.seconds
    procs = []
    for k in range(args.writers):
        procs.append(os.fork() or (writer(store, k, until), os._exit(0)))
    procs.append(os.fork() or (gc(store, until), os._exit(0)))
    for k in range(args.readers):
        procs.append(os.fork() or (reader(store, until, tmp / f"r{k}.tsv"), os._exit(0)))
    for pid in procs:
        os.waitpid(pid, 0)
    total: collections.Counter = collections.Counter()
    for k in range(args.readers):
        for line in (tmp / f"r{k}.tsv").read_text().splitlines():
            v, key = line.split("\t", 1)
            total[key] += int(v)
    reads = sum(v for k, v in total.items() if k != "not yet stashed")
    failed = reads - total["ok"]
    print(f"# {args.writers} writers, 1 gc loop, {args.readers} readers, {args.seconds:g} s")
    print(f"reads {reads}, failed {failed}")
    for key, v in total.most_common():
        print(f"  {v:6d}  {key}")
    print("gc --dry-run on a read-only store:", read_only_dry_run(store))
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
