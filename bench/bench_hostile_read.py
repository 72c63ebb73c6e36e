"""Hostile reads (issue 11, items 3 and 7): time and peak memory of ctx-read on one-line
blobs and on the store benchmark's log with catastrophic and literal-less regexes.

Run by hand (not part of the test suite):

    .venv/bin/python bench/bench_hostile_read.py              # 10 MB and 100 MB
    .venv/bin/python bench/bench_hostile_read.py --sizes 10M --runs 1

Shapes, each at every size:

* a one-line blob (x's, a needle in the middle, multibyte text after it):
  ``--head 1 --max-chars 20``, ``--grep NEEDLE``, ``--slice`` of 20 chars near the end;
* the store benchmark's log (``bench_store.build_log``: real pytest, pip and /var/log text):
  ``--grep`` with catastrophic patterns (``(a+)+$``, ``(\\w+\\s?)+$``), literal-less ones
  (``[0-9]{12}x``, ``\\d{4}-\\d\\d-\\d\\dT``) and one with a literal, against ``grep -n -E``.

Then, in-process on the same log, the engines side by side: RE2 through
``ctxtools.projections.regex`` (with and without its literal prefilter) and Python's ``re``
scanning the decoded text, for the patterns ``re`` can finish (the catastrophic ones are
left out for it: exponential).

Peak memory is the process's maximum RSS (``/usr/bin/time -f %M``). Everything lives under
bench/corpora/hostile/ (gitignored) and is deleted at the end unless --keep.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

from bench_store import build_log, seed_text, size_arg, timed  # noqa: E402

BIN = Path(sys.executable).parent
OUT = REPO / "bench" / "corpora" / "hostile"

CATASTROPHIC = [r"(a+)+$", r"(\w+\s?)+$"]
NO_LITERAL = [r"[0-9]{12}x", r"\d{4}-\d\d-\d\dT"]
LITERAL = [r"test_\w+ FAILED", "Traceback|Segfault"]


def one_line(path: Path, size: int) -> None:
    """SIZE bytes on one line: x's, NEEDLE in the middle, then 2-byte characters."""
    half = size // 2
    with open(path, "wb") as fh:
        for _ in range(half // (1 << 20)):
            fh.write(b"x" * (1 << 20))
        fh.write(b"x" * (half % (1 << 20)) + b"NEEDLE")
        rest = (size - half - 7) // 2
        for _ in range(rest // (1 << 19)):
            fh.write("é".encode() * (1 << 19))
        fh.write("é".encode() * (rest % (1 << 19)) + b"\n")


GREP_TIMEOUT = 60.0  # grep -E backtracks on some of these patterns (30 s on 10 MB)


def grep_e(pattern: str, path: Path, runs: int) -> str:
    """Median seconds of grep -n -E, or '>60' when it does not finish in GREP_TIMEOUT."""
    import tempfile

    times = []
    for _ in range(runs):
        # Not /dev/null: grep notices it and stops at the first match.
        with tempfile.TemporaryFile(dir=OUT) as sink:
            t0 = time.perf_counter()
            try:
                subprocess.run(
                    ["grep", "-n", "-E", pattern, str(path)], stdout=sink, timeout=GREP_TIMEOUT
                )
            except subprocess.TimeoutExpired:
                return f">{GREP_TIMEOUT:.0f}"
            times.append(time.perf_counter() - t0)
    return f"{statistics.median(times):.2f}"


def run(argv, env, runs: int) -> tuple[float, float, bytes]:
    times, peaks, out = [], [], b""
    for _ in range(runs):
        t, kb, out = timed(argv, env=env)
        times.append(t)
        peaks.append(kb / 1024)
    return statistics.median(times), max(peaks), out


def engines(log: Path, patterns: list[str]) -> None:
    """RE2 (ctxtools.projections.regex, with/without prefilter) vs Python re, in-process,
    same log."""
    from ctxtools.projections import regex as grep_mod
    from ctxtools.store import HandleStore

    st = HandleStore(OUT / "engines")
    st.put_stream(open(log, "rb"), name="log")  # noqa: SIM115
    text_chunks = []
    with open(log, "rb") as fh:
        while True:
            data = fh.read(1 << 20)
            if not data:
                break
            more = fh.readline()
            text_chunks.append((data + more).decode("utf-8", "replace"))
    print(f"\n[engines] in-process on {log.stat().st_size / 2**20:,.0f} MB (matching lines, s)")
    for pattern in patterns:
        rx = grep_mod.compile_regex(pattern)
        with st.open("log", touch=False) as p:
            t0 = time.perf_counter()
            n_re2 = sum(1 for _ in grep_mod.iter_hits(p, rx))
            t_re2 = time.perf_counter() - t0
        real = grep_mod.required_literals
        grep_mod.required_literals = lambda *a: None
        try:
            with st.open("log", touch=False) as p:
                t0 = time.perf_counter()
                n_plain = sum(1 for _ in grep_mod.iter_hits(p, rx))
                t_plain = time.perf_counter() - t0
        finally:
            grep_mod.required_literals = real
        line = f"  {pattern!r:24} RE2+prefilter {t_re2:6.2f}  RE2 alone {t_plain:6.2f}"
        if pattern in CATASTROPHIC:
            print(line + "  Python re: not run (exponential backtracking)")
            continue
        py = re.compile(pattern, re.MULTILINE)
        t0 = time.perf_counter()
        n_py = 0
        for text in text_chunks:
            pos = 0
            while True:
                m = py.search(text, pos)
                if m is None:
                    break
                n_py += 1
                end = text.find("\n", m.start())
                pos = len(text) if end < 0 else end + 1
        t_py = time.perf_counter() - t0
        same = "same lines" if n_py == n_re2 == n_plain else f"{n_re2}/{n_plain}/{n_py} lines"
        print(f"{line}  Python re {t_py:6.2f}  ({n_re2:,} lines, {same})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10M,100M", help="comma-separated sizes (10M,100M)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each command (median)")
    ap.add_argument("--keep", action="store_true", help="keep the corpora and stores")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    store = OUT / "st"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["CTX_STORE"] = str(store)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "ctxtools")], check=True)
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    try:
        seed = seed_text(OUT)
        for spec in args.sizes.split(","):
            size = size_arg(spec)
            blob = OUT / f"line-{spec}.txt"
            one_line(blob, size)
            name = f"line{spec}"
            timed([BIN / "ctx-stash", "--name", name], stdin=blob, env=env)
            print(f"\n[one line] {size / 2**20:,.0f} MB on one line (median of {args.runs})")
            chars = size // 2 + (size - size // 2) // 2
            for label, extra in [
                ("--head 1 --max-chars 20", ["--head", "1", "--max-chars", "20"]),
                ("--grep NEEDLE", ["--grep", "NEEDLE"]),
                ("--grep 'é+$'", ["--grep", "é+$"]),
                ("--slice (20 chars near the end)", ["--slice", f"{chars - 40}:{chars - 20}"]),
            ]:
                t, mb, out = run([BIN / "ctx-read", name, *extra], env, args.runs)
                print(f"  {label:34} {t:6.2f} s  {mb:6.0f} MB  ({len(out):,} bytes out)")
            blob.unlink()

            log = OUT / f"log-{spec}.txt"
            build_log(log, size, seed)
            lname = f"log{spec}"
            timed([BIN / "ctx-stash", "--name", lname], stdin=log, env=env)
            print(f"\n[log] {size / 2**20:,.0f} MB store benchmark log (median of {args.runs})")
            for pattern in CATASTROPHIC + NO_LITERAL + LITERAL:
                tg = grep_e(pattern, log, args.runs)
                argv = [BIN / "ctx-read", lname, "--grep", pattern, "--max-chars", "50000"]
                tc, mb, out = run(argv, env, args.runs)
                cut = b"[ctx-read: cut at" in out
                ratio = f"{tc / max(float(tg), 1e-3):5.1f}x" if tg[0] != ">" else "  -  "
                print(
                    f"  {pattern!r:24} grep -E {tg:>6} s  ctx-read {tc:6.2f} s "
                    f"({ratio})  {mb:5.0f} MB"
                    f"{'  (stopped when the output was full)' if cut else ''}"
                )
            engines(log, CATASTROPHIC + NO_LITERAL + LITERAL)
            shutil.rmtree(OUT / "engines", ignore_errors=True)
            log.unlink()
    finally:
        if not args.keep:
            shutil.rmtree(OUT, ignore_errors=True)


if __name__ == "__main__":
    main()
