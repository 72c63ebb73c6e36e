"""Peak RSS of a task pack over a CI-like sequence of runs, each on a fresh copy of a tree.

    .venv/bin/python bench/bench_pack_memory.py --tree PATH [--task TEXT] [--out DIR]

Four runs of ``ctx-pack --task=TASK --tokens 16000 .`` from inside a copy of the tree,
under ``/usr/bin/time -v``: 1 on an empty store, 2 the second run (the one that builds the
vocabulary index), 3 and 4 warm. Before each run the tree is copied again (``cp -r``, the
same bytes, every stat new: what a CI job's clone is); the store is kept between runs
(what a CI cache keeps). Prints, for each run, the peak RSS (MB) of its largest process
(``/usr/bin/time``), the peak of its processes' memory together (their PSS summed --
shared pages counted once -- sampled every 10 ms from /proc: ctx-pack may build the map in
a forked child) and the wall time. Target: every run <= 200 MB, both ways. With --out,
each run's stdout is kept as DIR/runN.md (to ``cmp`` two versions of the code). The copies
and the store live in one scratch directory, removed at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_pack_speed import BIN, fresh_copy, timed  # noqa: E402  (one /usr/bin/time reader)

TASK = (
    "TaskManager handleRebalanceComplete does not clear pending tasks in Tasks; "
    "checkIfTaskFailed should handle failed tasks from the state updater"
)


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out += [int(x) for x in fh.read().split()]
    except OSError:
        pass
    return out


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class TreeSampler:
    """The peak of the PSS summed over ROOT's descendants (this bench's: /usr/bin/time,
    about 1 MB, ctx-pack and its children), read every INTERVAL seconds until stopped."""

    def __init__(self, root: int, interval: float = 0.01):
        self.root, self.interval, self.peak = root, interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            todo, seen = _children(self.root), []
            while todo:
                pid = todo.pop()
                seen.append(pid)
                todo += _children(pid)
            self.peak = max(self.peak, sum(_pss_kb(p) for p in seen))
            time.sleep(self.interval)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--task", default=TASK)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--out", type=Path, help="keep each run's stdout here")
    ap.add_argument("extra", nargs="*", help="more ctx-pack options (after --)")
    args = ap.parse_args()
    cmd = [str(BIN / "ctx-pack"), f"--task={args.task}", "--tokens", "16000", *args.extra, "."]
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="ctx-packmem-"))
    try:
        env = {**os.environ, "CTX_STORE": str(scratch / "store")}
        peaks = []
        for k in range(1, args.runs + 1):
            copy = scratch / "tree"
            fresh_copy(args.tree, copy)
            out = args.out / f"run{k}.md" if args.out else None
            sampler = TreeSampler(os.getpid())
            try:
                wall, rss = timed(cmd, env, copy, out)
            finally:
                together = sampler.stop()
            peaks.append(max(rss, together))
            print(f"run {k}: peak RSS {rss / 1024:6.1f} MB  together {together / 1024:6.1f} MB"
                  f"  wall {wall:6.2f} s", flush=True)  # fmt: skip
        print(f"max: {max(peaks) / 1024:.1f} MB ({'ok' if max(peaks) <= 200 * 1024 else 'over'}"
              " the 200 MB target)")  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
