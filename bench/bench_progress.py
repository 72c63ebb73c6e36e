"""When the progress line first shows, on a cold run over a big tree (issue 28.11).

    .venv/bin/python bench/bench_progress.py [--dir TREE] [--bin DIR]

Runs ctx-pack and ctx-repomap with a fresh store and stderr on a pseudo-terminal
(NO_COLOR), and prints for each: the seconds to the first byte on the terminal, the steps
the line named in order with the second each first showed, and the whole run's seconds.
--bin picks the commands (another checkout's environment, to compare).
"""

from __future__ import annotations

import argparse
import os
import pty
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_repomap import django_py_tree  # noqa: E402


def watch(argv: list[str], cwd: Path, env: dict) -> tuple[float, list[tuple[str, float]], float]:
    """(first output, [(step, when it first showed)], total seconds) of ARGV."""
    master, slave = pty.openpty()
    start = time.monotonic()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave
    )
    os.close(slave)
    drain = threading.Thread(target=proc.stdout.read, daemon=True)
    drain.start()
    first = None
    steps: list[tuple[str, float]] = []
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        now = time.monotonic() - start
        first = now if first is None else first
        for line in chunk.decode(errors="replace").split("\r"):
            name = line.strip().split("  ", 1)[0]
            if name and not name.startswith("ctx-") and name not in [s for s, _ in steps]:
                steps.append((name, now))
    os.close(master)
    proc.wait()
    drain.join(10)
    return first if first is not None else float("nan"), steps, time.monotonic() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--bin", type=Path, default=Path(sys.executable).parent)
    args = ap.parse_args()
    tree = (args.dir or django_py_tree()).resolve()
    runs = {
        "ctx-pack": ["-q", "queryset ordering by annotation", "--model", "gpt-4o", "."],
        "ctx-repomap": ["."],
    }
    for name, more in runs.items():
        with tempfile.TemporaryDirectory() as store:
            env = {**os.environ, "CTX_STORE": store, "NO_COLOR": "1", "TERM": "xterm"}
            first, steps, total = watch([str(args.bin / name), *more], tree, env)
        shown = ", ".join(f"{s} {t:.1f} s" for s, t in steps) or "nothing"
        print(f"{name}: first output {first:.2f} s; {shown}; done in {total:.1f} s")


if __name__ == "__main__":
    main()
