#!/usr/bin/env python3
"""Hostile and unlucky shapes for the ruler (issue 11): time and peak memory of ctx-count.

    .venv/bin/python bench/bench_hostile.py [--sizes 10,100] [--zeros-mb 300]
                                            [--shapes seq,json,...] [--sparse-gb 2]

For each shape and size a file is written once to bench/corpora/ (gitignored), then
``ctx-count FILE`` and ``ctx-count --heuristic FILE`` run as child processes; each line
gives the wall time, throughput, peak RSS of that child (os.wait4) and the count, with
``exact`` from --json. Time and memory should grow linearly with the size, and peak
memory stay under 300 MB. Shapes:

  seq      `seq 1 N`: lines of digits, no letters
  json     one line of json.dumps (records with numbers, names, nested lists)
  zeros    NUL bytes (/dev/zero): one pre-token as long as the file
  base64   one line of base64 of random bytes, no newline
  b64zero  one line of base64 of zeros ("AAAA..."): one pre-token of letters
  cjk      CJK text (CPython's cjkencodings test texts, repeated)
  random   random bytes (invalid UTF-8 everywhere)

--zeros-mb adds one run of that many NULs (the issue's `head -c 300M /dev/zero`);
--sparse-gb counts a sparse file of that size with --heuristic only (0 to skip).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "corpora"
BIN = Path(sys.executable).parent
LIB = Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
SHAPES = ["seq", "json", "zeros", "base64", "b64zero", "cjk", "random"]
MB = 1_000_000


def _chunks(shape: str, size: int):
    rng = random.Random(11)
    if shape == "seq":
        i = 1
        while True:
            yield "".join(f"{n}\n" for n in range(i, i + 100_000)).encode()
            i += 100_000
    elif shape == "json":
        yield b"["
        n = 0
        while True:
            recs = [
                {
                    "id": n + k,
                    "name": f"user{n + k}",
                    "score": rng.random(),
                    "tags": ["a", "bb", "ccc"][: k % 3 + 1],
                    "ok": True,
                    "note": None,
                }
                for k in range(2_000)
            ]
            n += 2_000
            yield json.dumps(recs)[1:-1].encode() + b", "
    elif shape == "zeros":
        while True:
            yield bytes(1 << 20)
    elif shape == "base64":
        while True:
            yield base64.b64encode(rng.randbytes(3 << 18))
    elif shape == "b64zero":
        while True:
            yield base64.b64encode(bytes(3 << 18))
    elif shape == "cjk":
        texts = b"".join(
            p.read_bytes() for p in sorted((LIB / "test" / "cjkencodings").glob("*-utf8.txt"))
        )
        while True:
            yield texts
    elif shape == "random":
        while True:
            yield rng.randbytes(1 << 20)
    else:
        raise SystemExit(f"unknown shape {shape!r}")


def build(shape: str, size_mb: int) -> Path:
    path = OUT / f"hostile-{shape}-{size_mb}mb.bin"
    size = size_mb * MB
    if path.exists() and path.stat().st_size == size:
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    written = 0
    with open(path, "wb") as fh:
        for chunk in _chunks(shape, size):
            chunk = chunk[: size - written]
            fh.write(chunk)
            written += len(chunk)
            if written >= size:
                break
    return path


def run(cmd: list[str]) -> tuple[float, int, bytes, bytes, int]:
    """(seconds, peak RSS in KB of this child, stdout, stderr, exit status)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = b"", b""
    # read both pipes to the end, then reap the child with its own rusage
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - t
    return elapsed, usage.ru_maxrss, out, err, proc.returncode


def measure(label: str, path: Path) -> None:
    size = path.stat().st_size
    for mode in ([], ["--heuristic"]):
        cmd = [str(BIN / "ctx-count"), "--json", *mode, str(path)]
        elapsed, rss, out, err, rc = run(cmd)
        if rc != 0:
            print(
                f"{label:<22} {' '.join(mode) or 'exact':<11} exit {rc}: "
                f"{err.decode(errors='replace').strip()[:200]}"
            )
            continue
        doc = json.loads(out)
        tokens = doc["total"]["tokens"]
        exact = doc.get("exact")
        print(
            f"{label:<22} {' '.join(mode) or 'exact':<11} {elapsed:7.2f} s "
            f"{size / MB / elapsed:6.1f} MB/s  peak {rss / 1024:6.0f} MB  "
            f"{tokens:>12,} tokens  exact={exact}",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10,100", help="sizes in MB, comma-separated")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--zeros-mb", type=int, default=300, help="one long NUL run (0: skip)")
    ap.add_argument("--sparse-gb", type=int, default=2, help="--heuristic on a sparse file")
    args = ap.parse_args()
    load = os.getloadavg()
    print(
        f"# ctx-count on hostile shapes; load average {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f}, {os.cpu_count()} CPUs"
    )
    for size in [int(s) for s in args.sizes.split(",") if s]:
        for shape in [s for s in args.shapes.split(",") if s]:
            measure(f"{shape} {size} MB", build(shape, size))
    if args.zeros_mb:
        measure(f"zeros {args.zeros_mb} MB", build("zeros", args.zeros_mb))
    if args.sparse_gb:
        path = OUT / f"hostile-sparse-{args.sparse_gb}gb.bin"
        OUT.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            fh.truncate(args.sparse_gb << 30)
        cmd = [str(BIN / "ctx-count"), "--json", "--heuristic", str(path)]
        elapsed, rss, out, err, rc = run(cmd)
        print(
            f"{'sparse ' + str(args.sparse_gb) + ' GB':<22} {'--heuristic':<11} "
            f"{elapsed:7.2f} s  peak {rss / 1024:6.0f} MB  exit {rc}",
            flush=True,
        )
        path.unlink()
    load = os.getloadavg()
    print(f"# load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
