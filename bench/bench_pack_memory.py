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
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = Path(sys.executable).parent
TASK = (
    "TaskManager handleRebalanceComplete does not clear pending tasks in Tasks; "
    "checkIfTaskFailed should handle failed tasks from the state updater"
)


def run(cmd: list[str], env: dict, cwd: Path, out: Path | None) -> tuple[float, int]:
    """(wall seconds, peak RSS in KB) of CMD, its stdout to OUT (or /dev/null)."""
    with open(out or os.devnull, "wb") as sink:
        proc = subprocess.run(["/usr/bin/time", "-v", *cmd], env=env, cwd=cwd, stdout=sink,
                              stderr=subprocess.PIPE)  # fmt: skip
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err[-2000:]}")
    h, m, s = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", err).groups()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
    return int(h or 0) * 3600 + int(m) * 60 + float(s), rss


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
            shutil.rmtree(copy, ignore_errors=True)
            subprocess.run(["cp", "-r", str(args.tree), str(copy)], check=True)
            out = args.out / f"run{k}.md" if args.out else None
            wall, rss = run(cmd, env, copy, out)
            peaks.append(rss)
            print(f"run {k}: peak RSS {rss / 1024:6.1f} MB  wall {wall:6.2f} s", flush=True)
        print(f"max: {max(peaks) / 1024:.1f} MB ({'ok' if max(peaks) <= 200 * 1024 else 'over'}"
              " the 200 MB target)")  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
