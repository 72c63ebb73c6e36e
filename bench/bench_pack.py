"""Benchmark ctx-pack on Django 5.1.4's released source (its .py files), by hand.

    .venv/bin/python bench/bench_pack.py              # fetches the corpus on first use
    .venv/bin/python bench/bench_pack.py --runs 7 --no-repomix

Each measurement is a fresh process under ``/usr/bin/time -v`` (wall time, peak RSS):

* cold: an empty store (no repo-map cache, no ruler cache);
* warm: the same pack again, the repo-map cache present (what a Makefile or CI job that
  keeps its store pays);
* the warm ``ctx-repomap`` of the same tree, the yardstick of issue 9 (pack < 3x it), and
  a warm ``ctx-repomap --query`` (a new query each run: ranked again, as the pack's map is);
* repomix (``npx repomix --compress``, installed from npm into bench/corpora/repomix on
  first use) over the same files: its time and its output's tokens, the figure users
  compare with.

The task names five identifiers. The pack's own tokens are recounted with ctx-count's
ruler (the model's encoding) and must be within the budget. Targets (issue 9): warm median
< 2 s and < 3x the warm repo map; peak RSS < 300 MB; cold: reported.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_repomap import BIN, CORPORA, django_py_tree, timed  # noqa: E402

TASK = (
    "QuerySet.bulk_create with ignore_conflicts drops update_fields on the sqlite3 "
    "DatabaseOperations: fix on_conflict_suffix_sql"
)
MODEL = "gpt-4o"


def repomix() -> list[str] | None:
    """The repomix command, installed from npm on first use (None when npm cannot)."""
    home = CORPORA / "repomix"
    exe = home / "node_modules" / ".bin" / "repomix"
    if not exe.exists():
        if shutil.which("npm") is None:
            return None
        home.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "repomix"], cwd=home, check=False
        )
        if proc.returncode != 0 or not exe.exists():
            return None
    return [str(exe)]


def count_tokens(path: Path, encoding: str) -> int:
    out = subprocess.run(
        [str(BIN / "ctx-count"), "--encoding", encoding, str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return int(out.split()[0].replace(",", ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=None, help="tree to pack (default: Django .py)")
    ap.add_argument("--runs", type=int, default=5, help="repetitions of the warm measurements")
    ap.add_argument("--no-repomix", action="store_true")
    args = ap.parse_args()
    tree = (args.dir or django_py_tree()).resolve()
    nfiles = sum(1 for _ in tree.rglob("*.py"))
    print(f"tree: {tree}  ({nfiles} .py files); task: {TASK!r}; model {MODEL}")
    scratch = Path(tempfile.mkdtemp(prefix="ctx-bench-pack-"))
    try:
        store = scratch / "store"
        env = {**os.environ, "CTX_STORE": str(store)}
        out_file = scratch / "pack.md"
        pack_cmd = [
            str(BIN / "ctx-pack"),
            "--root",
            str(tree),
            "--task",
            TASK,
            "--model",
            MODEL,
            "-o",
            str(out_file),
            str(tree),
        ]
        cold, cold_rss, _, _ = timed(pack_cmd, env, "cold")
        first = out_file.read_bytes()
        warm, rss = [], [cold_rss]
        for _ in range(args.runs):
            t, r, _, _ = timed(pack_cmd, env, "warm")
            warm.append(t)
            rss.append(r)
            if out_file.read_bytes() != first:
                raise SystemExit("the pack changed between identical runs")
        map_cmd = [str(BIN / "ctx-repomap"), str(tree), "--tokens", "1000"]
        timed(map_cmd, env, "map")
        maps = [timed(map_cmd, env, "map")[0] for _ in range(args.runs)]
        # The pack's map is personalised by the task: the same work as a --query map.
        qmaps = [
            timed([*map_cmd, "--query", f"{TASK} {k}"], env, "qmap")[0] for k in range(args.runs)
        ]
        tokens = count_tokens(out_file, "o200k_base")
        doc = subprocess.run(
            [*pack_cmd[:-3], "--json", str(tree)], env=env, capture_output=True, check=True
        ).stdout
        import json

        pack = json.loads(doc)
        wm, mm = statistics.median(warm), statistics.median(maps)
        print(f"cold pack        {cold:.2f} s, {cold_rss / 1024:.0f} MB peak")
        print(
            f"warm pack        median {wm:.2f} s (min {min(warm):.2f}, max {max(warm):.2f})"
            f"   target < 2 s"
        )
        qm = statistics.median(qmaps)
        print(f"warm ctx-repomap median {mm:.2f} s   pack / map = {wm / mm:.1f}x   target < 3x")
        print(f"warm ctx-repomap --query TASK median {qm:.2f} s   pack / that = {wm / qm:.1f}x")
        print(f"peak RSS         {max(rss) / 1024:.0f} MB   target < 300 MB")
        shown = [f for f in pack["files"]]
        print(
            f"pack             {tokens:,} tokens (o200k_base) of a {pack['budget']['tokens']:,}"
            f" budget; {len(shown)} files shown, {len(pack['dropped'])} parts dropped;"
            f" {len(first):,} bytes"
        )
        top = sorted(shown, key=lambda f: -f["tokens"])[:5]
        print("largest files    " + ", ".join(f"{f['path']} {f['tokens']:,}" for f in top))
        if not args.no_repomix:
            cmd = repomix()
            if cmd is None:
                print("repomix          not available (npm could not install it)")
            else:
                rx_out = scratch / "repomix.xml"
                rx = [*cmd, "--compress", "--no-gitignore", "--quiet", "-o", str(rx_out), str(tree)]
                t, r, _, _ = timed(rx, env, "repomix")
                rx_tokens = count_tokens(rx_out, "o200k_base")
                print(
                    f"repomix --compress {t:.2f} s, {r / 1024:.0f} MB peak; output "
                    f"{rx_tokens:,} tokens (o200k_base), {rx_out.stat().st_size:,} bytes"
                    f" = {rx_tokens / 128_000:.1f}x gpt-4o's window"
                )
        print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
