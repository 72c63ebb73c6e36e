#!/usr/bin/env python3
"""Benchmarks for the ruler (issue 2). Run by hand; figures go in the issue note.

    .venv/bin/python bench/bench_count.py [--size-mb 120] [--runs 15]

1. Throughput: an exact cl100k_base count of a >= 100 MB real corpus (this Python's own
   library sources, plus the CJK texts of its test suite) by `ctx-count --jobs 1` and
   `--jobs 2`, against one direct `Encoding.encode_ordinary` call on the whole text; the
   counts must be identical. Peak memory (max RSS) of each ctx-count process.
2. Start-up: median wall time of `ctx-count --help`, `ctx-count --heuristic` on 1 KB, and
   exact cl100k_base on 1 KB against a bare `python -c` that loads the same verified
   encoding and counts.
3. Heuristic accuracy against exact cl100k_base for English prose, Python code, JSON and
   Chinese text: heuristic / exact per kind.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "corpora"
BIN = Path(sys.executable).parent
LIB = Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"


def build_corpus(size_mb: int) -> Path:
    target = OUT / f"count-corpus-{size_mb}mb.txt"
    if target.exists() and target.stat().st_size >= size_mb * 1_000_000:
        return target
    OUT.mkdir(parents=True, exist_ok=True)
    cjk = b"".join(
        p.read_bytes() for p in sorted((LIB / "test" / "cjkencodings").glob("*-utf8.txt"))
    )
    files = sorted(LIB.rglob("*.py"))
    written = 0
    with open(target, "wb") as out:
        while written < size_mb * 1_000_000:
            for i, p in enumerate(files):
                try:
                    data = p.read_bytes()
                except OSError:
                    continue
                out.write(data)
                written += len(data)
                if i % 200 == 0:
                    out.write(cjk)
                    written += len(cjk)
                if written >= size_mb * 1_000_000:
                    break
    return target


def timed(cmd: list[str], stdin: bytes | None = None) -> tuple[float, bytes, int]:
    """(seconds, stdout, max RSS in KB of this child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, check=True)
    elapsed = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, proc.stdout, max(after, before)


def peak_rss_kb(cmd: list[str]) -> int:
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, check=True)
    for line in proc.stderr.decode().splitlines():
        if "Maximum resident set size" in line:
            return int(line.split()[-1])
    return -1


def median_time(cmd: list[str], stdin: bytes | None, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, input=stdin, capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_throughput(size_mb: int) -> None:
    corpus = build_corpus(size_mb)
    size = corpus.stat().st_size
    print(f"## throughput: {corpus.name}, {size / 1e6:.1f} MB")
    direct_code = (
        "import sys,time;from ctxtools.tokens import load_encoding;"
        "enc=load_encoding('cl100k_base');"
        "t=time.perf_counter();text=open(sys.argv[1],'rb').read().decode('utf-8','replace');"
        "n=len(enc.encode_ordinary(text));print(n, time.perf_counter()-t)"
    )
    out = subprocess.run(
        [sys.executable, "-c", direct_code, str(corpus)], capture_output=True, check=True
    ).stdout.split()
    direct_n, direct_s = int(out[0]), float(out[1])
    direct_rss = peak_rss_kb([sys.executable, "-c", direct_code, str(corpus)])
    print(
        f"direct encode_ordinary (1 call, 1 core): {direct_n} tokens in {direct_s:.2f} s "
        f"({size / 1e6 / direct_s:.1f} MB/s), peak RSS {direct_rss / 1024:.0f} MB"
    )
    for jobs in (1, 2):
        cmd = [str(BIN / "ctx-count"), "--jobs", str(jobs), str(corpus)]
        elapsed, stdout, _ = timed(cmd)
        n = int(stdout.split()[0])
        rss = peak_rss_kb(cmd)
        print(
            f"ctx-count --jobs {jobs}: {n} tokens in {elapsed:.2f} s "
            f"({size / 1e6 / elapsed:.1f} MB/s) = {direct_s / elapsed:.2f}x direct, "
            f"peak RSS {rss / 1024:.0f} MB, identical={n == direct_n}"
        )


def bench_startup(runs: int) -> None:
    print("## start-up (median of", runs, "runs)")
    one_kb = (LIB / "os.py").read_bytes()[:1024]
    exe = str(BIN / "ctx-count")
    subprocess.run([exe], input=one_kb, capture_output=True, check=True)  # warm the cache
    help_s = median_time([exe, "--help"], None, runs)
    heur_s = median_time([exe, "--heuristic"], one_kb, runs)
    exact_s = median_time([exe], one_kb, runs)
    bare = (
        "import sys,hashlib,os,tiktoken;from tiktoken_ext import openai_public as o;"
        "os.environ['TIKTOKEN_CACHE_DIR']=sys.argv[1];"
        "enc=tiktoken.Encoding(**o.cl100k_base());"
        "print(len(enc.encode_ordinary(sys.stdin.read())))"
    )
    store = os.environ.get("CTX_STORE") or str(Path.home() / ".cache" / "ctxtools")
    bare_s = median_time([sys.executable, "-c", bare, str(Path(store) / "tiktoken")], one_kb, runs)
    python_s = median_time([sys.executable, "-c", "pass"], None, runs)
    print(f"python -c pass:                 {python_s * 1000:.0f} ms")
    print(f"ctx-count --help:               {help_s * 1000:.0f} ms (target < 120)")
    print(f"ctx-count --heuristic, 1 KB:    {heur_s * 1000:.0f} ms (target < 120)")
    print(f"ctx-count exact cl100k, 1 KB:   {exact_s * 1000:.0f} ms")
    print(
        f"bare python loading cl100k:     {bare_s * 1000:.0f} ms "
        f"-> ratio {exact_s / bare_s:.2f} (target < 1.3)"
    )


def bench_accuracy() -> None:
    from ctxtools.tokens import get_ruler, heuristic_count

    ruler = get_ruler(encoding="cl100k_base").ruler
    # English prose written here: the README and the docs (the repository alone, no file
    # beside the clone)
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    prose = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    code = "".join(p.read_text() for p in sorted(LIB.glob("*.py"))[:60])
    js = (ROOT / "tests" / "data" / "jsonpath-cts" / "cts.json").read_text()
    chinese = "".join(
        (LIB / "test" / "cjkencodings" / f).read_text(encoding="utf-8")
        for f in ("gb2312-utf8.txt", "gb18030-utf8.txt", "big5-utf8.txt", "gbk-utf8.txt")
    )
    print("## heuristic / exact cl100k_base")
    for kind, text in (
        ("English prose", prose),
        ("Python code", code),
        ("JSON", js),
        ("Chinese text", chinese),
    ):
        h, e = heuristic_count(text), ruler.count(text)
        print(
            f"{kind:14} {len(text):>9,} chars  heuristic {h:>8,}  exact {e:>8,}  ratio {h / e:.2f}"
        )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=120)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--only", choices=["throughput", "startup", "accuracy"], default=None)
    args = ap.parse_args()
    if args.only in (None, "accuracy"):
        bench_accuracy()
    if args.only in (None, "startup"):
        bench_startup(args.runs)
    if args.only in (None, "throughput"):
        bench_throughput(args.size_mb)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
