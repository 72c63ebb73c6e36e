#!/usr/bin/env python3
"""The history signal on unlucky lines: what a pack pays when a commit that matches the
task changed a JavaScript file holding one huge line (a minified bundle, a generated
table), measured against git's default function-context rule on the same repository.

    .venv/bin/python bench/bench_history_lines.py                  # 4, 8 and 16 MB lines
    .venv/bin/python bench/bench_history_lines.py --sizes 1,32 --runs 3

For each shape and size a repository is built in a temporary directory: a JavaScript
file of a comment, the long line and a call; a second commit changes the call (the line
below the long one, so git runs the function-context expressions through the long line
on its way up) with a message that matches the task; a README commit between them. Then
``history.read_signal`` is timed (best of ``--runs``) with the shipped drivers
(``history.DRIVERS``) and with none (git's default rule: a line that starts with a
letter), and the hunk's function name printed. Shapes: a minified bundle of functions,
``a=1;`` repeated, ``f(`` repeated (no semicolon: the expressions for a method's
parameters run to the end), spaces, one identifier, ``x<`` repeated.

Nothing is asserted: it prints a row a shape and size. Time should grow linearly with the
line; a git slower than ``history.TIMEOUT`` is stopped and the pack says the history was
not read.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SHAPES = {
    "minified": lambda n: ";".join(f"function f{i}(a,b){{return a+b*{i}}}"
                                   for i in range(n // 36)),
    "assignments": lambda n: "a=1;" * (n // 4),
    "open-calls": lambda n: "f(" * (n // 2),
    "spaces": lambda n: " " * n + "x",
    "identifier": lambda n: "a" * n + "(){",
    "angles": lambda n: "x<" * (n // 2),
}
TASK = "the widget total is rounded wrong"


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    subprocess.run(["git", *args], cwd=root, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def build(root: Path, line: str) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    src = root / "widget.js"
    src.write_text("// the widget's table\n" + line + "\ntotal();\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the widget")
    (root / "README.md").write_text("# widget\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "readme")
    src.write_text("// the widget's table\n" + line + "\ntotal(Math.round);\n")
    git(root, "commit", "-q", "-am", "Round the widget total")


def timed(root: Path, words, runs: int) -> tuple[float, list]:
    from ctxtools.retrieval import history

    best, sig = float("inf"), None
    for _ in range(runs):
        t0 = time.perf_counter()
        sig = history.read_signal(str(root), words)
        best = min(best, time.perf_counter() - t0)
    return best, sorted(name for _p, name in sig.touched) if not sig.note else [sig.note]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="4,8,16", help="the long line's sizes, in MB")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    args = ap.parse_args()
    os.environ["CTX_HISTORY"] = "1"
    from ctxtools.analyzer import parse_query
    from ctxtools.retrieval import history

    words = parse_query(TASK).words
    drivers = dict(history.DRIVERS)
    print("| shape | MB | shipped drivers s | git's default s | ratio | names (shipped) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="ctx-bench-history-") as tmp:
        for shape in args.shapes.split(","):
            for mb in (float(x) for x in args.sizes.split(",")):
                root = Path(tmp) / f"{shape}-{mb:g}"
                build(root, SHAPES[shape](int(mb * 1_000_000)))
                history.DRIVERS = drivers
                ours, names = timed(root, words, args.runs)
                history.DRIVERS = {}
                plain, _n = timed(root, words, args.runs)
                history.DRIVERS = drivers
                shown = ", ".join(n[:24] for n in names) or "-"
                print(f"| {shape} | {mb:g} | {ours:.3f} | {plain:.3f} | {ours / plain:.1f}x "
                      f"| {shown} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
