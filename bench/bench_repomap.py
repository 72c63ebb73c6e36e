"""Benchmark ctx-repomap on Django 5.1.4's released source (its .py files), by hand.

    .venv/bin/python bench/bench_repomap.py            # fetches the corpus on first use
    .venv/bin/python bench/bench_repomap.py --dir SOME/TREE --runs 5
    .venv/bin/python bench/bench_repomap.py --profile  # where a cold run spends its time

Each measurement is a fresh process (``/usr/bin/time -v`` for wall time and peak RSS):

* cold: empty store, every file scanned, the cache written;
* warm: the cache present, nothing re-scanned (the map comes from the result memo);
* rerank: the cache present, a new --query (so ranked and rendered again, ruler loaded);
* edit: one file changed (a definition appended that nothing uses yet), only it
  re-scanned and re-linked; no edge changes, so the ranking and the fit are reused;
* edit-uses: one file changed so that its references change (a function appended that
  calls into the ORM): it is re-scanned and re-linked, PageRank runs again.

Then the cache's size, and the 1,000-token map itself: files and symbols shown, and
whether Django's central abstractions (Model, QuerySet, Field, HttpRequest, Form) are in it.
Targets (issue 5): cold < 3 s, warm < 0.5 s, edit < 0.3 s, peak RSS < 100 MB, cache < 5 MB,
>= 25 files and >= 100 symbols at 1,000 tokens.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from sdist import sdist

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPORA = HERE / "corpora"
BIN = Path(sys.executable).parent
DJANGO = "5.1.4"
CENTRAL = ("Model", "QuerySet", "Field", "HttpRequest", "Form")


def django_py_tree() -> Path:
    """bench/corpora/django-5.1.4-py: the released sdist's .py files, nothing else."""
    dest = CORPORA / f"django-{DJANGO}-py"
    if dest.is_dir():
        return dest
    tarball = sdist("django", DJANGO)
    tmp = Path(tempfile.mkdtemp(dir=CORPORA))
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and m.name.endswith(".py")]
        tar.extractall(tmp, members=members, filter="data")
    (top,) = list(tmp.iterdir())
    top.rename(dest)
    shutil.rmtree(tmp)
    return dest


CPU: dict[str, list[float]] = {}
RSS: dict[str, list[int]] = {}


def timed(cmd: list[str], env: dict, label: str = "") -> tuple[float, int, bytes, bytes]:
    """(wall seconds, peak RSS in KB, stdout, stderr) of CMD under /usr/bin/time -v; the
    CPU seconds (user + system, workers included) go to CPU[label]."""
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], env=env, capture_output=True)
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", err)
    h, m, s = wall.groups()
    seconds = int(h or 0) * 3600 + int(m) * 60 + float(s)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", err).group(1))
    system = float(re.search(r"System time \(seconds\): ([\d.]+)", err).group(1))
    CPU.setdefault(label, []).append(user + system)
    RSS.setdefault(label, []).append(rss)
    report = err.split("\tCommand being timed")[0].encode()
    return seconds, rss, proc.stdout, report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=None, help="tree to map (default: Django .py)")
    ap.add_argument("--runs", type=int, default=3, help="repetitions of each measurement")
    ap.add_argument("--tokens", type=int, default=1000)
    ap.add_argument("--profile", action="store_true", help="cProfile one cold run")
    ap.add_argument("--show-map", action="store_true", help="print the map")
    args = ap.parse_args()
    tree = args.dir or django_py_tree()
    nfiles = sum(1 for p in tree.rglob("*.py"))
    print(f"tree: {tree}  ({nfiles} .py files)")
    exe = str(BIN / "ctx-repomap")
    base_cmd = [exe, str(tree), "--tokens", str(args.tokens)]

    if args.profile:
        import cProfile
        import pstats

        os.environ["CTX_STORE"] = tempfile.mkdtemp(prefix="ctx-bench-store-")
        from ctxtools.repomap.core import build_map

        prof = cProfile.Profile()
        prof.enable()
        build_map(str(tree), tokens=args.tokens)
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        return

    colds, warms, reranks, edits, edit_uses, rsss = [], [], [], [], [], []
    cache_bytes = 0
    out = b""
    scratch = Path(tempfile.mkdtemp(prefix="ctx-bench-"))
    try:
        # A private copy, so the "edit" can change a file without touching the corpus.
        work = scratch / "tree"
        shutil.copytree(tree, work, symlinks=True)
        base_cmd[1] = str(work)
        victim = next(
            (p for p in [work / "django/db/models/query.py"] if p.exists()),
            next(work.rglob("*.py")),
        )
        original = victim.read_bytes()
        for run in range(args.runs):
            store = scratch / f"store{run}"
            env = {**os.environ, "CTX_STORE": str(store)}
            victim.write_bytes(original)
            t, rss, _, _ = timed(base_cmd, env, "cold")
            colds.append(t)
            rsss.append(rss)
            t, rss, out, _ = timed(base_cmd, env, "warm")
            warms.append(t)
            rsss.append(rss)
            t, rss, _, _ = timed(base_cmd + ["--query", f"bench query {run}"], env, "rerank")
            reranks.append(t)
            rsss.append(rss)
            victim.write_bytes(original + f"\n\ndef bench_edit_{run}():\n    pass\n".encode())
            t, rss, _, _ = timed(base_cmd, env, "edit")
            edits.append(t)
            rsss.append(rss)
            use = "Prefetch(Q(pk=1), to_attr='x')" if run % 2 else "FilteredRelation('x')"
            body = f"\n\ndef bench_edit_{run}():\n    return {use}\n"
            victim.write_bytes(original + body.encode())
            t, rss, _, _ = timed(base_cmd, env, "edit-uses")
            edit_uses.append(t)
            rsss.append(rss)
            cache_bytes = sum(f.stat().st_size for f in (store / "repomap").glob("*.bin"))
        victim.write_bytes(original)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    def fmt(xs, label):
        cpu = CPU.get(label, [0.0])
        return (
            f"median {statistics.median(xs):.3f} s  (min {min(xs):.3f}, max {max(xs):.3f}; "
            f"cpu median {statistics.median(cpu):.2f} s)"
        )

    text = out.decode("utf-8", "replace")
    lines = text.splitlines()
    symbols = sum(1 for x in lines if re.match(r"\d+:", x))
    files = sum(1 for x in lines if not re.match(r"\d+:", x) and not x.startswith("#"))
    central = [c for c in CENTRAL if re.search(rf"^\d+:class {c}\b", text, re.M)]
    print(f"cold   {fmt(colds, 'cold')}   target < 3 s")
    print(f"warm   {fmt(warms, 'warm')}   target < 0.5 s")
    print(f"rerank {fmt(reranks, 'rerank')}   (no target; what every edit pays besides its scan)")
    print(f"edit   {fmt(edits, 'edit')}   target < 0.3 s")
    print(f"edit-uses {fmt(edit_uses, 'edit-uses')}   (an edit that changes references)")
    per = ", ".join(f"{k} {max(v) / 1024:.1f}" for k, v in RSS.items())
    print(f"peak RSS {max(rsss) / 1024:.1f} MB   target < 100 MB   ({per})")
    print(f"cache  {cache_bytes / 1e6:.2f} MB   target < 5 MB")
    print(
        f"map at {args.tokens} tokens: {files} files, {symbols} symbols "
        f"(targets >= 25, >= 100); central abstractions shown: {', '.join(central) or '-'}"
        f" of {', '.join(CENTRAL)}"
    )
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if args.show_map:
        print(text)


if __name__ == "__main__":
    main()
