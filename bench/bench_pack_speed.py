"""How long a task pack takes against reading the tree: ctx-pack vs files-to-prompt, A/B.

    .venv/bin/python bench/bench_pack_speed.py                 # Django 5.1.4's sdist
    .venv/bin/python bench/bench_pack_speed.py --tree PATH --pairs 7 --no-map

The yardstick of the selection issue: a 16k task pack of a tree, against files-to-prompt
(0.6, installed from PyPI into bench/corpora/f2p on first use) printing every file of the
same tree to /dev/null. Every figure is a ratio of one pair of runs taken one after the
other (A then B), so a machine that slows down between pairs slows both sides alike; the
medians of the pairs' ratios are reported.

* fresh checkout, warm store: before each pair the tree is copied again to the same path
  (the same bytes, every stat new: what a CI job's clone is), the store kept from the
  runs before (what a CI cache keeps). Target: <= 2.5x files-to-prompt. With
  ``--fill-task TEXT`` the store is the one two packs of *another* task left (restored
  before every run): a CI cache from yesterday's jobs, today's bug report -- nothing that
  is kept per task (a ranking, a count) can help.
* empty store: the same, with a new store for each run. Target: <= 6x.
* cold ``ctx-repomap`` (empty store) against ``ctags -R`` of the same tree. Target: <= 3x.
* peak RSS of each (``/usr/bin/time -v``). Target: <= 200 MB.

Each pack run must give the same bytes as the first one (exit 1 otherwise). The copies
and stores live in one scratch directory, removed at the end.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
CORPORA = HERE / "corpora"
TASK = (
    "QuerySet.bulk_create with ignore_conflicts drops update_fields on the sqlite3 "
    "DatabaseOperations: fix on_conflict_suffix_sql"
)


def files_to_prompt() -> list[str]:
    """The files-to-prompt command, pip-installed into its own venv on first use."""
    home = CORPORA / "f2p"
    exe = home / "bin" / "files-to-prompt"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(home)], check=True)
        subprocess.run([str(home / "bin" / "pip"), "install", "-q", "files-to-prompt==0.6"],
                       check=True)  # fmt: skip
    return [str(exe)]


def django_tree() -> Path:
    sys.path.insert(0, str(HERE))
    from sdist import sdist

    tree = CORPORA / "Django-5.1.4"
    if not tree.is_dir():
        import tarfile

        with tarfile.open(sdist("Django", "5.1.4")) as tar:
            tar.extractall(CORPORA, filter="data")
    return tree


def timed(cmd: list[str], env: dict, cwd: Path, out: Path | None = None) -> tuple[float, int]:
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


def fresh_copy(src: Path, dest: Path) -> None:
    """DEST made again from SRC: the same bytes and names, every stat new."""
    if dest.exists():
        shutil.rmtree(dest)
    subprocess.run(["cp", "-r", str(src), str(dest)], check=True)


def report(name: str, ratios: list[float], a: list[float], rss: list[int], target: float) -> None:
    print(
        f"{name:<34} ratio median {statistics.median(ratios):.2f}x"
        f" (min {min(ratios):.2f}, max {max(ratios):.2f}; target <= {target:g}x);"
        f" ctx median {statistics.median(a):.2f} s, peak {max(rss) / 1024:.0f} MB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=None, help="tree (default: Django sdist)")
    ap.add_argument("--task", default=TASK)
    ap.add_argument("--tokens", type=int, default=16000)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--no-map", action="store_true", help="skip ctx-repomap vs ctags")
    ap.add_argument(
        "--fill-task",
        default=None,
        help="fill the warm store with a pack of this task, not TASK's own",
    )
    args = ap.parse_args()
    src = (args.tree or django_tree()).resolve()
    f2p = files_to_prompt()
    scratch = Path(tempfile.mkdtemp(prefix="ctx-bench-speed-"))
    tree = scratch / src.name
    try:
        store = scratch / "store"
        env = {**os.environ, "CTX_STORE": str(store)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install has its bytecode
        pack = [str(BIN / "ctx-pack"), "--task", args.task, "--tokens", str(args.tokens), "."]
        fresh_copy(src, tree)
        first_out = scratch / "first.md"
        timed(pack, {**env, "CTX_STORE": str(scratch / "ref")}, tree, first_out)
        first = first_out.read_bytes()  # TASK's pack from an empty store: what every run gives
        fill = pack if args.fill_task is None else [*pack[:2], args.fill_task, *pack[3:]]
        timed(fill, env, tree)  # fills the store
        saved = scratch / "store.saved"
        if args.fill_task is not None:  # a cache that has seen two jobs: the second pack
            fresh_copy(src, tree)  # builds the vocabulary index the first one only counts
            timed(fill, env, tree)
            shutil.copytree(store, saved)
        nfiles = sum(1 for p in tree.rglob("*") if p.is_file())
        print(f"tree {src} ({nfiles:,} files); task {args.task!r}; {args.tokens:,} tokens")
        if args.fill_task is not None:
            print(f"warm store filled by another task's pack: {args.fill_task!r}")
        warm: dict[str, list] = {"r": [], "a": [], "rss": []}
        cold: dict[str, list] = {"r": [], "a": [], "rss": []}
        again = scratch / "again.md"
        for k in range(args.pairs):
            fresh_copy(src, tree)
            if args.fill_task is not None:  # the store as the other task's pack left it
                shutil.rmtree(store)
                shutil.copytree(saved, store)
            a, rss = timed(pack, env, tree, again)
            if again.read_bytes() != first:
                raise SystemExit("the pack changed between runs on the same bytes")
            b, _ = timed([*f2p, "."], env, tree)
            warm["r"].append(a / b)
            warm["a"].append(a)
            warm["rss"].append(rss)
            fresh_copy(src, tree)
            empty = {**env, "CTX_STORE": str(scratch / f"empty{k}")}
            a, rss = timed(pack, empty, tree, again)
            if again.read_bytes() != first:
                raise SystemExit("an empty store gave another pack than a warm one")
            b, _ = timed([*f2p, "."], env, tree)
            cold["r"].append(a / b)
            cold["a"].append(a)
            cold["rss"].append(rss)
            shutil.rmtree(scratch / f"empty{k}", ignore_errors=True)
        report("pack, fresh checkout, warm store", warm["r"], warm["a"], warm["rss"], 2.5)
        report("pack, empty store", cold["r"], cold["a"], cold["rss"], 6)
        if not args.no_map and shutil.which("ctags"):
            maps: dict[str, list] = {"r": [], "a": [], "rss": []}
            for k in range(args.pairs):
                empty = {**env, "CTX_STORE": str(scratch / f"map{k}")}
                a, rss = timed([str(BIN / "ctx-repomap"), "."], empty, tree)
                b, _ = timed(["ctags", "-R", "-f", str(scratch / "tags"), "."], env, tree)
                maps["r"].append(a / b)
                maps["a"].append(a)
                maps["rss"].append(rss)
                shutil.rmtree(scratch / f"map{k}", ignore_errors=True)
            report("cold ctx-repomap vs ctags -R", maps["r"], maps["a"], maps["rss"], 3)
        print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
