"""Explorer questions: is the expected directory in the pack?

The set (bench/data/explorer_questions.json) holds 20 "where is X done?" questions over
three real repositories (Django 5.1.4, Python; libuv, C; cargo, Rust), each with the
paths a pack should hold a file under, written down before any pack was made. Each tree
is copied once to a temporary directory outside any git repository, then for every
question this runs

    ctx-pack -q QUESTION --role explorer --json .

and reports whether a pack file's path starts with one of the expected paths: among
every file the pack lists ("listed"), and among the files it shows lines of ("shown":
definitions, windows, signatures; not a bare path), and, stricter, the best rank of an
expected file in the pack's ranking (top 3, top 5, top 10: an explorer pack lists some 50
files, so being listed says little). ``--semantic off`` packs without the
semantic signal (CTX_SEMANTIC=0), ``on`` with it (the default when the extra is
installed); ``both`` runs the two in turn.

Figures (this machine, 2 cores; RERANK_DOCS 60; since a plain task's words side by side
are also read as the names they make, ``Query.phrases``):

    semantic off: listed 19/20, shown 19/20, best expected rank <= 3: 17/20, <= 5: 19/20,
                  <= 10: 19/20 (before the phrases: 15-16 / 18 / 19)
    semantic on, SEMANTIC_WEIGHT 1 (today's):
                  listed 19/20, shown 19/20, <= 3: 18/20, <= 5: 19/20, <= 10: 19/20
    semantic on, SEMANTIC_WEIGHT 4 (until the thirtieth session):
                  listed 19/20, shown 19/20, <= 3: 17/20, <= 5: 18/20, <= 10: 18/20

(the miss both ways: libuv's "where are host names resolved to addresses?", whose
getaddrinfo.c no word of the question reaches; at weight 4, cargo's "whether a crate
needs to be rebuilt" was rank 11: fingerprint/ passed by files about rebuilds.)

The libuv tree must be whole (``bench/bench_scan_oracle.py`` extracts it; the memory
benchmark extracts only its ``docs/src`` into the same directory when it is missing): with
the docs alone, libuv's six questions all missed, so the script now stops when an expected
path is not in its tree (``missing_expected``).

Run: .venv/bin/python bench/bench_semantic_explorer.py [--semantic both] [--tmp DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "explorer_questions.json"


def copy_tree(src: Path, dst: Path) -> Path:
    if not dst.is_dir():
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".git"), symlinks=True)
    return dst


def run(tree: Path, question: str, semantic: str, store: str) -> tuple[dict, float]:
    exe = Path(sys.executable).parent / "ctx-pack"
    env = dict(os.environ, CTX_STORE=store, CTX_SEMANTIC="1" if semantic == "on" else "0")
    t0 = time.perf_counter()
    out = subprocess.run(
        [str(exe), "-q", question, "--role", "explorer", "--json", "."],
        cwd=tree,
        env=env,
        capture_output=True,
        check=True,
    )
    return json.loads(out.stdout), time.perf_counter() - t0


def best_rank(files: list[dict], expected: list[str]) -> int:
    ranks = [
        f["rank"]
        for f in files
        if f.get("rank")
        and any(f["path"] == e or (e.endswith("/") and f["path"].startswith(e)) for e in expected)
    ]
    return min(ranks) if ranks else 10**6


def hit(files: list[dict], expected: list[str], shown_only: bool) -> bool:
    for f in files:
        if shown_only and f.get("shown") == "path":
            continue
        if any(f["path"] == e or (e.endswith("/") and f["path"].startswith(e)) for e in expected):
            return True
    return False


def missing_expected(questions: list[dict], trees: dict[str, Path]) -> list[str]:
    """'repo: path' for each expected path that is not in its question's tree: a tree that
    is not whole (libuv's docs alone) would score its questions as misses, not stop."""
    out = []
    for q in questions:
        tree = trees.get(q["repo"])
        if tree is None:
            continue
        for e in q["expected"]:
            if not (tree / e.rstrip("/")).exists():
                out.append(f"{q['repo']}: {e}")
    return sorted(set(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--semantic", choices=("on", "off", "both"), default="both")
    ap.add_argument("--tmp", default=None, help="where the trees are copied (kept)")
    ap.add_argument("--only", default="", help="run only this repo's questions")
    args = ap.parse_args()
    spec = json.loads(DATA.read_text())
    base = Path(args.tmp or tempfile.mkdtemp(prefix="ctx-explorer-"))
    trees = {
        name: copy_tree(ROOT / r["source"], base / name)
        for name, r in spec["repos"].items()
        if not args.only or name == args.only
    }
    missing = missing_expected(spec["questions"], trees)
    if missing:
        sys.exit(
            f"bench_semantic_explorer: {len(missing)} expected paths are not in their trees "
            f"(first: {missing[0]}; is the tree whole? see this script's docstring)"
        )
    modes = ("off", "on") if args.semantic == "both" else (args.semantic,)
    for mode in modes:
        store = tempfile.mkdtemp(prefix="ctx-explorer-store-")
        listed = shown = n = 0
        ranks = []
        secs = []
        for q in spec["questions"]:
            if q["repo"] not in trees:
                continue
            pack, took = run(trees[q["repo"]], q["question"], mode, store)
            secs.append(took)
            a = hit(pack["files"], q["expected"], False)
            b = hit(pack["files"], q["expected"], True)
            listed += a
            shown += b
            n += 1
            r = best_rank(pack["files"], q["expected"])
            ranks.append(r)
            by_rank = sorted((f for f in pack["files"] if f.get("rank")), key=lambda f: f["rank"])
            top = ", ".join(f["path"] for f in by_rank[:3])
            mark = "shown" if b else ("listed" if a else "MISS")
            rk = str(r) if r < 10**6 else "-"
            print(f"[{mode}] {mark:<6} rank {rk:>3} {q['repo']:<7} {q['question']}\n    top: {top}")
        secs.sort()
        print(
            f"== semantic {mode}: expected path listed {listed}/{n}, shown {shown}/{n}; "
            f"best expected rank <= 3: {sum(r <= 3 for r in ranks)}/{n}, <= 5: "
            f"{sum(r <= 5 for r in ranks)}/{n}, <= 10: {sum(r <= 10 for r in ranks)}/{n}; "
            f"median {secs[len(secs) // 2]:.2f} s a pack (the first of each tree cold)"
        )
        shutil.rmtree(store, ignore_errors=True)


if __name__ == "__main__":
    main()
