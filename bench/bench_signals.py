#!/usr/bin/env python3
"""The Ctrl-C sweep (issue 27, item 10): signals sent at many moments of a cold run.

    .venv/bin/python bench/bench_signals.py                    # ctx-repomap on Django
    .venv/bin/python bench/bench_signals.py --command pack --tries 24
    .venv/bin/python bench/bench_signals.py --dir SOME/TREE --delays 0.2,0.5,1,1.5
    .venv/bin/python bench/bench_signals.py --signal TERM --target leader
    .venv/bin/python bench/bench_signals.py --command pack --task-mb 50 --dir SMALL/TREE

Each try is a fresh process with an empty store (a cold run: every file scanned, so the
worker processes start), started in a session of its own as a terminal would start a
foreground job. After DELAY seconds the signal goes to the whole process group (what
Ctrl-C does: the workers get it too) or, with ``--target leader``, to the command alone
(what ``kill -INT PID`` does). The delays sweep the run: the listing, the workers'
scan, the ranking, the rendering. A try is wrong when

* it has not ended after --hang seconds (then a second signal is sent, as a user would
  press Ctrl-C again, and what is left is killed once counted);
* its exit status is not the expected one (130 for SIGINT; for SIGTERM the process ends
  by the signal, as it would without workers: -15), unless it finished before the signal;
* its stderr holds more than one line, or a traceback;
* a process of its session is still there once it has ended (read from /proc).

Each line also gives how long the command took to end after the signal. ``--task-mb N``
gives ctx-pack a task of N MB on stdin (an issue's version report, line after line, under
a budget it fits) instead of a short one: the reading and counting of a pasted log.

The default tree is Django 5.1.4's .py files (bench_repomap.django_py_tree: the sdist
from PyPI, kept in bench/corpora/). Nothing is asserted: it prints one line a try and
the totals.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def session_members(sid: int) -> list[tuple[int, str]]:
    """(pid, state) of every process of session SID, read from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
        state, session = fields[0], int(fields[3])
        if session == sid:
            found.append((int(entry), state))
    return found


def one_try(
    argv: list[str], delay: float, signum: int, target: str, hang: float, stdin=None
) -> dict:
    """Run ARGV cold (STDIN: a file's path for its standard input), signal it after DELAY
    seconds, and tell what happened."""
    store = tempfile.mkdtemp(prefix="bench-signals-")
    env = dict(os.environ, CTX_STORE=store, NO_COLOR="1")
    errpath = os.path.join(store, "stderr")
    try:
        with open(errpath, "wb") as err, open(stdin or os.devnull, "rb") as inp:
            proc = subprocess.Popen(
                argv, stdin=inp, stdout=subprocess.DEVNULL, stderr=err, env=env,
                start_new_session=True,
            )
        time.sleep(delay)
        signalled = time.monotonic()
        finished_first = proc.poll() is not None
        if not finished_first:
            if target == "group":
                os.killpg(proc.pid, signum)
            else:
                os.kill(proc.pid, signum)
        hung = False
        try:
            proc.wait(hang)
            after = time.monotonic() - signalled
        except subprocess.TimeoutExpired:
            hung = True
            after = hang
            if proc.poll() is None:
                os.killpg(proc.pid, signum)  # the user's second Ctrl-C
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(hang)
        time.sleep(0.3)  # what a dying worker still has to do, then count the living
        left = [p for p in session_members(proc.pid) if p[1] != "Z"]
        for pid, _ in left:  # ours: the processes of the session this try started
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        with open(errpath, "rb") as fh:
            stderr = fh.read().decode("utf-8", "replace")
        return {
            "delay": delay,
            "after": after,
            "status": proc.returncode,
            "finished_first": finished_first,
            "hung": hung,
            "left": len(left),
            "lines": len(stderr.splitlines()),
            "traceback": "Traceback" in stderr,
            "stderr": stderr,
        }
    finally:
        shutil.rmtree(store, ignore_errors=True)


def verdict(r: dict, signum: int) -> str:
    if r["finished_first"]:
        return "done before the signal"
    wrong = []
    want = 130 if signum == signal.SIGINT else -signum
    if r["hung"]:
        wrong.append("hung")
    if r["status"] != want:
        wrong.append(f"status {r['status']}")
    if r["traceback"]:
        wrong.append("traceback")
    if r["lines"] > 1:
        wrong.append(f"{r['lines']} stderr lines")
    if r["left"]:
        wrong.append(f"{r['left']} process(es) left")
    return ", ".join(wrong) or "ok"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--command", choices=["repomap", "pack"], default="repomap")
    ap.add_argument("--dir", help="the tree (default: Django 5.1.4's .py files)")
    ap.add_argument("--delays", default="0.3,0.6,0.9,1.2,1.5,1.8,2.1,2.4,2.7,3.0,3.5,4.0")
    ap.add_argument("--tries", type=int, default=0, help="tries in all (default: one a delay)")
    ap.add_argument("--signal", choices=["INT", "TERM"], default="INT")
    ap.add_argument("--target", choices=["group", "leader"], default="group")
    ap.add_argument("--hang", type=float, default=20.0, help="seconds before a try is hung")
    ap.add_argument("--show", action="store_true", help="print the whole stderr of wrong tries")
    ap.add_argument("--task-mb", type=float, default=0.0,
                    help="ctx-pack's task: a version report of this many MB on stdin")
    args = ap.parse_args()
    if args.dir:
        tree = args.dir
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_repomap import django_py_tree

        tree = str(django_py_tree())
    if args.command == "repomap":
        argv = [str(BIN / "ctx-repomap"), tree]
    elif args.task_mb:
        argv = [str(BIN / "ctx-pack"), "-q", "-", "--tokens", "100000000", tree]
    else:
        argv = [str(BIN / "ctx-pack"), "-q", "fix the queryset filter", "--tokens", "8000", tree]
    stdin = None
    if args.command == "pack" and args.task_mb:
        fd, stdin = tempfile.mkstemp(prefix="bench-signals-task-")
        with os.fdopen(fd, "w") as fh:
            fh.write("The cache breaks\n### Versions\n")
            k, size = 0, 0
            while size < args.task_mb * 1e6:
                line = f" - pkg{k}: 1.{k}.0\n"
                fh.write(line)
                size += len(line)
                k += 1
    signum = getattr(signal, "SIG" + args.signal)
    delays = [float(d) for d in args.delays.split(",")]
    tries = args.tries or len(delays)
    bad = 0
    done_first = 0
    for n in range(tries):
        r = one_try(argv, delays[n % len(delays)], signum, args.target, args.hang, stdin)
        v = verdict(r, signum)
        done_first += r["finished_first"]
        bad += v not in ("ok", "done before the signal")
        first = r["stderr"].strip().splitlines()[-1:] or [""]
        print(
            f"{r['delay']:5.2f}s  status {r['status']!s:>4}  ended {r['after']:5.2f}s after"
            f"  {v}  | {first[0][:80]}",
            flush=True,
        )
        if args.show and v != "ok":
            print("    " + r["stderr"].replace("\n", "\n    "))
    if stdin:
        os.unlink(stdin)
    print(
        f"{args.command} SIG{args.signal} to the {args.target}: {bad} of {tries - done_first}"
        f" signalled tries wrong ({done_first} finished before the signal)"
    )


if __name__ == "__main__":
    main()
