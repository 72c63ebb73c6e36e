"""Benchmark ctx-excerpt against grep on every .py file of a released Django source tree.

    .venv/bin/python bench/bench_excerpt.py [--runs 5] [--query "a b c d e"]

Fetches Django 5.1.4's sdist into bench/corpora/ (pip download, the package registry) when
it is not there yet, lists its .py files, and times, each --runs times (/usr/bin/time -v
for wall time and peak memory):

* grep -n -w -E 'id1|id2|...' over the same files (xargs, one list),
* rg -n -w 'id1|id2|...' likewise (when ripgrep is installed; it runs on every CPU),
* ctx-excerpt --query ... --files-from LIST (by default 2 processes for this many files
  on a machine with several CPUs), and with --jobs 1 (one process),
* ctx-excerpt ... --unmatched show (every file with no match shown by its head and tail,
  the behaviour before issue 10), ... --json, and ... --tokens 8000 (the budget path,
  exact cl100k ruler).

Each line gives the output's size in bytes and in cl100k tokens (one count of the last
run's output). Last, the lines ctx-excerpt prints for django/db/models/query.py with
--query QuerySet (the head, then at most 6 of its best definitions, whole: issue 26).

Targets (issues 4 and 10): within 3x of grep, peak memory under 200 MB.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from sdist import sdist

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "bench" / "corpora"
VERSION = "5.1.4"
TREE = CORPORA / f"Django-{VERSION}"
BIN = Path(sys.executable).parent
DEFAULT_QUERY = "queryset get_prep_value related_name ForeignKey deconstruct"


def ensure_corpus() -> Path:
    if TREE.is_dir():
        return TREE
    tarball = sdist("django", VERSION)
    with tarfile.open(tarball) as tf:
        tf.extractall(CORPORA, filter="data")
    return TREE


def timed(cmd: list[str] | str, shell: bool = False) -> tuple[float, float, int, bytes]:
    """Wall seconds (measured here, /usr/bin/time's start-up included), CPU seconds (user +
    system), peak RSS in KB, stdout of one run under /usr/bin/time -v. CPU time says more
    than wall time on a machine shared with others."""
    full = ["/usr/bin/time", "-v"] + (["sh", "-c", cmd] if shell else cmd)
    start = time.perf_counter()  # /usr/bin/time says the wall time in 10 ms steps only
    proc = subprocess.run(full, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    err = proc.stderr.decode("utf-8", "replace")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", err).group(1))
    system = float(re.search(r"System time \(seconds\): ([\d.]+)", err).group(1))
    if proc.returncode not in (0, 1):
        sys.exit(f"{cmd!r} failed ({proc.returncode}):\n{err[-2000:]}")
    return seconds, user + system, rss, proc.stdout


def tokens(data: bytes) -> int:
    """cl100k tokens of DATA (the ruler ctx-excerpt --tokens uses by default)."""
    from ctxtools.tokens import get_ruler

    return get_ruler().ruler.count(data.decode("utf-8", "surrogateescape"))


def bench(label: str, cmd, runs: int, shell: bool = False) -> tuple[float, float]:
    """(median wall, median CPU) seconds over RUNS runs, printed with the peak memory and
    the output's size in bytes and tokens."""
    times, cpus, peak, out = [], [], 0, b""
    for _ in range(runs):
        t, cpu, rss, out = timed(cmd, shell)
        times.append(t)
        cpus.append(cpu)
        peak = max(peak, rss)
    med, cpu = statistics.median(times), statistics.median(cpus)
    print(
        f"{label:<34} wall median {med:6.3f} s best {min(times):6.3f} s  cpu {cpu:6.3f} s  "
        f"peak {peak / 1024:6.1f} MB  output {len(out):>10,} B {tokens(out):>10,} tokens"
    )
    return med, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--query", default=DEFAULT_QUERY)
    args = ap.parse_args()

    tree = ensure_corpus()
    files = sorted(str(p) for p in tree.rglob("*.py"))
    listing = CORPORA / "django-py-files.txt"
    listing.write_text("\n".join(files) + "\n")
    size = sum(Path(f).stat().st_size for f in files)
    from ctxtools.analyzer import identifiers_from_query

    idents = identifiers_from_query(args.query)
    print(f"corpus: {len(files)} .py files, {size / 1e6:.1f} MB ({tree.name})")
    print(f"query: {args.query!r} -> {idents}")
    print(f"runs: {args.runs} each; machine load: {Path('/proc/loadavg').read_text().split()[:3]}")

    pattern = "|".join(idents)
    g = bench(
        "grep -n -w -E",
        f"xargs -d '\\n' -a '{listing}' grep -n -w -E '{pattern}'",
        args.runs,
        shell=True,
    )
    if shutil.which("rg"):
        rg = bench(
            "rg -n -w",
            f"xargs -d '\\n' -a '{listing}' rg -n -w '{pattern}'",
            args.runs,
            shell=True,
        )
    else:
        rg = None
        print("rg: not installed (apt-get install ripgrep)")
    exe = str(BIN / "ctx-excerpt")
    base = [exe, "--query", args.query, "--files-from", str(listing)]
    auto = bench("ctx-excerpt", base, args.runs)
    one = bench("ctx-excerpt --jobs 1", base + ["--jobs", "1"], args.runs)
    if "--unmatched" in subprocess.run([exe, "--help"], capture_output=True, text=True).stdout:
        bench("ctx-excerpt --unmatched show", base + ["--unmatched", "show"], args.runs)
    bench("ctx-excerpt --json", base + ["--json"], args.runs)
    bench("ctx-excerpt --tokens 8000", base + ["--tokens", "8000"], args.runs)
    print(
        f"ratio to grep (wall): {auto[0] / g[0]:.1f}x, --jobs 1 {one[0] / g[0]:.1f}x; "
        f"(cpu): {auto[1] / g[1]:.1f}x, --jobs 1 {one[1] / g[1]:.1f}x (target <= 3x)"
    )
    if rg is not None:
        print(
            f"ratio to rg (wall): {auto[0] / rg[0]:.1f}x, --jobs 1 {one[0] / rg[0]:.1f}x; "
            f"(cpu): {auto[1] / rg[1]:.1f}x, --jobs 1 {one[1] / rg[1]:.1f}x"
        )
    query_py = tree / "django" / "db" / "models" / "query.py"
    out = subprocess.run(
        [exe, "--query", "QuerySet", str(query_py)], capture_output=True, check=True
    ).stdout
    total = query_py.read_bytes().count(b"\n")
    printed = out.count(b"\n")
    header = out.split(b"\n", 1)[0].decode("utf-8", "replace")
    print(f"query.py --query QuerySet: {printed:,} of {total:,} lines printed; header: {header}")


if __name__ == "__main__":
    main()
