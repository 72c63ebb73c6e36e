"""Cold, warm and one-edit maps of a ~2,300-file C/C++ tree against Universal Ctags' time
on the same tree (issue 19's bar: cold <= 4x ctags), by hand.

    .venv/bin/python bench/bench_scan_ts_cold.py [--runs 3] [--profile]

The tree (bench/corpora/cc-tree, made on first use): every .c/.h/.cc/.cpp/.hpp file of
curl/curl and protocolbuffers/protobuf at the commits below, unpacked beforehand under
bench/corpora/repos/<owner>+<name>/ with ``git archive`` (the bench fetches nothing).

Each figure is a fresh process under /usr/bin/time -v: wall seconds and CPU seconds (user
+ system, the map's worker processes included), peak RSS. ctags runs as the oracle bench
runs it (``--kinds-C=+p --kinds-C++=+p --fields=+nKSe``, JSON to a file), one process.
The map: an empty store (cold), the same store again (warm), then one .c file changed by a
new function that nothing calls (edit).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench_repomap import CPU, RSS, timed

HERE = Path(__file__).resolve().parent
TREE = HERE / "corpora" / "cc-tree"
REPOS = {
    "curl+curl": "5c61e168698a72b87437d58ed728bcdea6d5db42",
    "protocolbuffers+protobuf": "e712d276bcead35cad45e305463f5e542246351e",
}
SUFFIXES = (".c", ".h", ".cc", ".cpp", ".hpp")
BIN = Path(sys.executable).parent


def tree() -> Path:
    if TREE.is_dir():
        return TREE
    tmp = Path(tempfile.mkdtemp(dir=TREE.parent))
    for name in REPOS:
        src = HERE / "corpora" / "repos" / name
        if not src.is_dir():
            raise SystemExit(f"{src} missing: git archive {REPOS[name]} of {name} there")
        for p in src.rglob("*"):
            if p.suffix in SUFFIXES and p.is_file() and not p.is_symlink():
                dest = tmp / name / p.relative_to(src)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(p, dest)
    tmp.rename(TREE)
    return TREE


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--profile", action="store_true", help="cProfile one cold build_map")
    args = ap.parse_args()
    root = tree()
    files = sorted(str(p) for p in root.rglob("*") if p.is_file())
    size = sum(os.path.getsize(p) for p in files)
    print(f"tree: {root}  ({len(files)} files, {size / 1e6:.1f} MB); load {os.getloadavg()}")
    if args.profile:
        import cProfile
        import pstats

        os.environ["CTX_STORE"] = tempfile.mkdtemp(prefix="ctx-bench-store-")
        from ctxtools.repomap.core import build_map

        prof = cProfile.Profile()
        prof.enable()
        build_map(str(root), tokens=args.tokens)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
        return
    scratch = Path(tempfile.mkdtemp(prefix="ctx-bench-"))
    listing = scratch / "files"
    listing.write_text("\n".join(files) + "\n")
    ctags = ["ctags", "--output-format=json", "--fields=+nKSe", "--kinds-C=+p",
             "--kinds-C++=+p", "--languages=C,C++", "-L", str(listing), "-f", "TAGS"]  # fmt: skip
    walls: dict[str, list[float]] = {}
    try:
        work = scratch / "tree"
        shutil.copytree(root, work)
        victim = next(work.rglob("*.c"))
        original = victim.read_bytes()
        cmd = [str(BIN / "ctx-repomap"), str(work), "--tokens", str(args.tokens)]
        for run in range(args.runs):
            out = ctags[:-1] + [str(scratch / f"tags{run}")]  # it will not overwrite JSON
            walls.setdefault("ctags", []).append(timed(out, dict(os.environ), "ctags")[0])
            env = {**os.environ, "CTX_STORE": str(scratch / f"store{run}")}
            victim.write_bytes(original)
            walls.setdefault("cold", []).append(timed(cmd, env, "cold")[0])
            walls.setdefault("warm", []).append(timed(cmd, env, "warm")[0])
            edit = f"\nint bench_edit_{run}(int a) {{\n  return a + {run};\n}}\n"
            victim.write_bytes(original + edit.encode())
            walls.setdefault("edit", []).append(timed(cmd, env, "edit")[0])
        victim.write_bytes(original)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    base_wall = statistics.median(walls["ctags"])
    base_cpu = statistics.median(CPU["ctags"])
    for label, xs in walls.items():
        wall, cpu = statistics.median(xs), statistics.median(CPU[label])
        print(f"{label:<6} wall {wall:6.2f} s ({wall / base_wall:4.1f}x ctags)"
              f"  cpu {cpu:6.2f} s ({cpu / base_cpu:4.1f}x ctags)"
              f"  peak RSS {max(RSS[label]) / 1024:5.0f} MB")  # fmt: skip
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
