"""Benchmark ctxtools.source.classify over a real tree, by hand: what each question costs per file.

    .venv/bin/python bench/bench_classify.py                 # Django 5.1.4's sdist tree
    .venv/bin/python bench/bench_classify.py --dir SOME/TREE --runs 9

Every file of the tree is read once (outside the timing); each question is then asked of
every file, the best of --runs passes is reported in ms for the tree and in us a file. The
repo map asks ``listing_skip`` of every listed path and ``is_test`` of every mapped one
(each call, warm or cold), and ``content_noise`` of every file it scans (cold); the pack asks
``noise_reason`` and ``role`` of every candidate. Then how the tree's files are classified:
roles, and noise by reason, to eyeball against what the tree holds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ctxtools.binary import is_binary  # noqa: E402
from ctxtools.source import classify  # noqa: E402


def read_tree(root: Path) -> list[tuple[str, bytes]]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            try:
                with open(path, "rb") as fh:
                    out.append((rel, fh.read()))
            except OSError:
                continue
    return out


def best_ms(fn, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=HERE / "corpora" / "Django-5.1.4")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    if not args.dir.is_dir():
        sys.exit(f"bench_classify: {args.dir}: no such directory (unpack a tree there)")
    files = read_tree(args.dir)
    rels = [r for r, _ in files]
    datas = [d for _, d in files]
    size = sum(map(len, datas))
    print(f"{args.dir.name}: {len(files):,} files, {size / 2**20:.1f} MiB")
    questions = {
        "listing_skip": lambda: [classify.listing_skip(r) for r in rels],
        "is_test": lambda: [classify.is_test(r) for r in rels],
        "role": lambda: [classify.role(r) for r in rels],
        "noise_by_name": lambda: [classify.noise_by_name(r) for r in rels],
        "is_binary": lambda: [is_binary(d) for d in datas],
        "is_generated": lambda: [classify.is_generated(d) for d in datas],
        "is_minified": lambda: [classify.is_minified(d) for d in datas],
        "content_noise": lambda: [classify.content_noise(d) for d in datas],
        "noise_reason": lambda: [classify.noise_reason(r, d) for r, d in files],
    }
    print(f"{'question':<14} {'ms/tree':>8} {'us/file':>8}")
    for name, fn in questions.items():
        ms = best_ms(fn, args.runs)
        print(f"{name:<14} {ms:8.2f} {ms * 1e3 / max(len(files), 1):8.2f}")
    roles = Counter(classify.role(r) for r in rels)
    noise = Counter(classify.noise_reason(r, d) or "(candidate)" for r, d in files)
    print("roles:", ", ".join(f"{k} {v:,}" for k, v in roles.most_common()))
    print("noise:", ", ".join(f"{k} {v:,}" for k, v in noise.most_common()))


if __name__ == "__main__":
    main()
