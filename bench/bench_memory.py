"""Benchmark: rank a 10 MiB memory corpus for one task, cold and with a warm cache.

The corpus is real documentation: Django 5.1.4's docs/ (5.9 MB of reStructuredText in
.txt files) and SQLAlchemy 2.0.36's doc/ (.rst), taken in sorted order until 10 MiB, from
the sdists on PyPI (``pip download``, into bench/corpora/, gitignored); it is copied to
bench/corpora/memory-10mib/. For each method: cold (an empty store: every file chunked,
every chunk scored and cached), warm (the same run again, median of --runs), and one file
edited (one section's text changed). Times are in-process (``rank_memory``); the warm
run is also timed end to end as a user runs it (``ctx-excerpt --memory DIR -q TASK``,
interpreter start-up included). Peak memory (max RSS) is the process's.

Target: warm under 0.5 s. Run: .venv/bin/python bench/bench_memory.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from sdist import sdist

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_corpus import CORPORA, ensure_docs  # noqa: E402

from ctxtools.memory import rank_memory  # noqa: E402

SA_VERSION = "2.0.36"
TARGET = 10 << 20
CORPUS = CORPORA / "memory-10mib"
TASK = "how do I add a custom manager method that filters the queryset"
BIN = Path(sys.executable).parent


def sqlalchemy_docs() -> Path:
    out = CORPORA / f"sqlalchemy-docs-{SA_VERSION}"
    if out.is_dir():
        return out
    tarball = sdist("sqlalchemy", SA_VERSION)
    with tarfile.open(tarball) as tf:
        members = [m for m in tf.getmembers() if "/doc/" in m.name and m.name.endswith(".rst")]
        for m in members:
            m.name = m.name.split("/doc/", 1)[1]
        tf.extractall(out, members=members, filter="data")
    return out


def ensure_corpus() -> Path:
    if CORPUS.is_dir():
        return CORPUS
    tmp = CORPUS.with_suffix(".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    total = 0
    for name, base in (("django", ensure_docs()), ("sqlalchemy", sqlalchemy_docs())):
        for path in sorted(base.rglob("*")):
            if total >= TARGET:
                break
            if path.suffix in (".txt", ".rst", ".md") and path.is_file():
                dest = tmp / name / path.relative_to(base)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
                total += path.stat().st_size
    tmp.rename(CORPUS)
    return CORPUS


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--methods", default="tfidf,hashing")
    args = ap.parse_args()
    corpus = ensure_corpus()
    files = [p for p in corpus.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    print(f"corpus {corpus}: {len(files):,} files, {size:,} bytes; task {TASK!r}")
    print(f"load average {os.getloadavg()[0]:.2f}")
    os.chdir(corpus)
    for method in args.methods.split(","):
        store = Path(tempfile.mkdtemp(prefix="ctx-membench-"))
        try:

            def run(method=method, store=store):
                return rank_memory(["."], TASK, method=method, store=store)

            cold, r = timed(run)
            warm = []
            for _ in range(args.runs):
                t, w = timed(run)
                warm.append(t)
                assert w.cache["computed"] == 0
            cache_bytes = sum(p.stat().st_size for p in (store / "memory").iterdir())
            edited = corpus / "django" / "topics" / "db" / "managers.txt"
            original = edited.read_bytes()
            try:
                edited.write_bytes(
                    original.replace(b"entirely", b"wholly", 1)
                    if b"entirely" in original
                    else original.replace(b"Manager", b"Manager ", 1)
                )
                one, e = timed(run)
            finally:
                edited.write_bytes(original)
            cli = []
            env = {**os.environ, "CTX_STORE": str(store)}
            for _ in range(args.runs):
                t = time.perf_counter()
                subprocess.run(
                    [
                        str(BIN / "ctx-excerpt"),
                        "--memory",
                        ".",
                        "-q",
                        TASK,
                        "--retrieval",
                        method,
                        "--json",
                    ],
                    env=env,
                    check=True,
                    stdout=subprocess.DEVNULL,
                )
                cli.append(time.perf_counter() - t)
        finally:
            shutil.rmtree(store, ignore_errors=True)
        print(
            f"{method:8} chunks {r.cache['chunks']:,}  kept {len(r.kept)}  cold {cold:.2f} s  "
            f"warm {statistics.median(warm):.3f} s (min {min(warm):.3f})  one file edited "
            f"{one:.3f} s ({e.cache['computed']} chunk(s) re-scored)  ctx-excerpt warm "
            f"{statistics.median(cli):.3f} s  cache {cache_bytes / 1e6:.1f} MB"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process {peak:.0f} MB; target: warm < 0.5 s")


if __name__ == "__main__":
    main()
