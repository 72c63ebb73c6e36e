"""Peak RSS of a task pack over a CI-like sequence of runs, each on a fresh copy of a tree.

    .venv/bin/python bench/bench_pack_memory.py --tree PATH [--task TEXT] [--out DIR]

Four runs of ``ctx-pack --task=TASK --tokens 16000 .`` from inside a copy of the tree,
under ``/usr/bin/time -v``: 1 on an empty store, 2 the second run (the one that builds the
vocabulary index), 3 and 4 warm. Before each run the tree is copied again (``cp -r``, the
same bytes, every stat new: what a CI job's clone is); the store is kept between runs
(what a CI cache keeps). Prints the peak RSS (MB) and wall time of each run. Target:
every run <= 200 MB. With --out, each run's stdout is kept as DIR/runN.md (to ``cmp``
two versions of the code). The copies and the store live in one scratch directory,
removed at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_pack_speed import BIN, fresh_copy, timed  # noqa: E402  (one /usr/bin/time reader)

TASK = (
    "TaskManager handleRebalanceComplete does not clear pending tasks in Tasks; "
    "checkIfTaskFailed should handle failed tasks from the state updater"
)


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
            wall, rss = timed(cmd, env, copy, out)
            peaks.append(rss)
            print(f"run {k}: peak RSS {rss / 1024:6.1f} MB  wall {wall:6.2f} s", flush=True)
        print(f"max: {max(peaks) / 1024:.1f} MB ({'ok' if max(peaks) <= 200 * 1024 else 'over'}"
              " the 200 MB target)")  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
