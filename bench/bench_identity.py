"""Every command's output on the benchmark corpora, as hashes: a before/after check.

A restructuring must not change one byte of what the commands print. This
script runs each of the seven commands over the corpora the benchmarks use
(Django 5.1.4's tree and docs, the compact transcripts, a log built from
Django's sources), each run in a fresh store, and records a SHA-256 of stdout,
of stderr (with the temporary store's path replaced) and the exit status.

    python bench/bench_identity.py --write before.json     # on the old tree
    python bench/bench_identity.py --check before.json     # on the new one

``--check`` prints each run that differs and exits 1 when any does. Runs whose
corpus is missing are skipped with a note. ``CTX_BENCH_CORPORA=DIR`` reads
the corpora from another checkout's ``bench/corpora`` (so that two work trees
compare the same paths). Fetch missing corpora by running bench_repomap.py,
bench_memory.py and bench_compact.py once.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA = Path(os.environ.get("CTX_BENCH_CORPORA", HERE / "corpora"))
DJANGO = CORPORA / "django-5.1.4-py"
DOCS = CORPORA / "django-docs-5.1.4" / "docs"
COMPACT = CORPORA / "compact"
BIN = Path(sys.executable).parent

TASK = "bulk_create ignore_conflicts returns no primary keys on sqlite QuerySet"


def _files(d: Path) -> list[str]:
    return [str(p) for p in sorted(d.rglob("*.py"))] if d.is_dir() else []


def _runs() -> list[tuple[str, list[str], str | None, Path]]:
    """(name, argv, stdin file or None, corpus that must exist)."""
    q = DJANGO / "django/db/models/query.py"
    log = "@LOG"  # replaced by the built log's path
    runs = [
        (
            "count-files",
            ["ctx-count", "--json", str(q), str(DJANGO / "django/db/models/base.py")],
            None,
            DJANGO,
        ),
        ("count-o200k", ["ctx-count", "--model", "gpt-4o", str(q)], None, DJANGO),
        (
            "count-budget",
            ["ctx-count", "--budget", "--model", "gpt-4o", "--role", "reviewer"],
            None,
            DJANGO,
        ),
        (
            "count-messages",
            [
                "ctx-count",
                "--messages",
                "--model",
                "gpt-4o",
                str(COMPACT / "ponylang__ponyc-4588.openai.json"),
            ],
            None,
            COMPACT,
        ),
        ("stash-log", ["ctx-stash", "--name", "log"], log, DJANGO),
        ("read-grep", ["ctx-read", "log", "--grep", "def (get|filter)", "-C", "2"], None, DJANGO),
        ("read-range", ["ctx-read", "log", "--range", "1000-1400", "-n"], None, DJANGO),
        ("read-count", ["ctx-read", "log", "--count"], None, DJANGO),
        ("read-introspect", ["ctx-read", "log", "--introspect"], None, DJANGO),
        ("read-tail", ["ctx-read", "log", "--tail", "50"], None, DJANGO),
        (
            "excerpt-query",
            [
                "ctx-excerpt",
                "--query",
                "QuerySet bulk_create",
                *_files(DJANGO / "django/db/models"),
            ],
            None,
            DJANGO,
        ),
        (
            "excerpt-json",
            ["ctx-excerpt", "--json", "--tokens", "4000", "--query", "ignore_conflicts", str(q)],
            None,
            DJANGO,
        ),
        (
            "excerpt-memory",
            [
                "ctx-excerpt",
                "--memory",
                str(DOCS / "topics"),
                "--query",
                "how do I cache a queryset",
            ],
            None,
            DOCS,
        ),
        ("repomap", ["ctx-repomap", str(DJANGO / "django/db"), "--tokens", "3000"], None, DJANGO),
        (
            "repomap-query-json",
            ["ctx-repomap", str(DJANGO / "django/db"), "--query", "bulk_create", "--json"],
            None,
            DJANGO,
        ),
        (
            "pack-md",
            [
                "ctx-pack",
                "--task",
                TASK,
                "--model",
                "gpt-4o",
                "--root",
                str(DJANGO),
                str(DJANGO / "django/db/models"),
            ],
            None,
            DJANGO,
        ),
        (
            "pack-json",
            [
                "ctx-pack",
                "--task",
                TASK,
                "--tokens",
                "6000",
                "--format",
                "json",
                "--root",
                str(DJANGO),
                str(q),
            ],
            None,
            DJANGO,
        ),
        (
            "pack-explain",
            [
                "ctx-pack",
                "--task",
                TASK,
                "--tokens",
                "8000",
                "--explain",
                "--memory",
                str(DOCS / "ref/models"),
                "--root",
                str(DJANGO),
                str(q),
            ],
            None,
            DOCS,
        ),
        (
            "compact-openai",
            [
                "ctx-compact",
                "--limit",
                "8000",
                "--force",
                str(COMPACT / "ponylang__ponyc-4593.openai.json"),
            ],
            None,
            COMPACT,
        ),
        (
            "compact-anthropic",
            ["ctx-compact", "--limit", "20000", str(COMPACT / "long-10k.anthropic.json")],
            None,
            COMPACT,
        ),
        (
            "compact-report",
            [
                "ctx-compact",
                "--limit",
                "20000",
                "--json-report",
                str(COMPACT / "long-10k.openai.json"),
            ],
            None,
            COMPACT,
        ),
    ]
    for cmd in ("count", "stash", "read", "excerpt", "repomap", "pack", "compact"):
        runs.append((f"help-{cmd}", [f"ctx-{cmd}", "--help"], None, HERE))
    # bad input: the one-line errors and their exit statuses stay as they are
    runs += [
        ("err-read-unknown", ["ctx-read", "no-such-handle"], None, HERE),
        ("err-read-range", ["ctx-read", "log", "--range", "9-2"], None, DJANGO),
        ("err-count-missing", ["ctx-count", "/nonexistent/file"], None, HERE),
        ("err-excerpt-noquery", ["ctx-excerpt", str(HERE / "bench_identity.py")], None, HERE),
        ("err-pack-tokens", ["ctx-pack", "--task", "x", "--tokens", "100", "."], None, HERE),
        ("err-compact-json", ["ctx-compact", str(HERE / "bench_identity.py")], None, HERE),
        ("err-repomap-missing", ["ctx-repomap", "/nonexistent"], None, HERE),
    ]
    return runs


def _build_log(dest: Path) -> None:
    parts = sorted((DJANGO / "django/db/models").rglob("*.py"))
    with open(dest, "wb") as out:
        for p in parts:
            out.write(b"==> " + str(p.relative_to(DJANGO)).encode() + b"\n")
            out.write(p.read_bytes())


def measure() -> dict[str, dict]:
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="ctx-identity-") as tmp:
        tmpdir = Path(tmp)
        store = tmpdir / "store"
        log = tmpdir / "log.txt"
        if DJANGO.is_dir():
            _build_log(log)
        env = dict(os.environ, CTX_STORE=str(store), CTX_SESSION="identity", LC_ALL="C.UTF-8")
        env.pop("CTX_ENCODING", None)
        for name, argv, stdin, corpus in _runs():
            if not corpus.exists():
                print(f"skip {name}: {corpus} missing", file=sys.stderr)
                continue
            exe = shutil.which(argv[0], path=str(BIN)) or argv[0]
            src = open(log, "rb") if stdin == "@LOG" else subprocess.DEVNULL  # noqa: SIM115
            try:
                proc = subprocess.run(
                    [exe, *argv[1:]], stdin=src, capture_output=True, env=env, cwd=tmpdir
                )
            finally:
                if src is not subprocess.DEVNULL:
                    src.close()
            err = proc.stderr.replace(str(tmpdir).encode(), b"<TMP>")
            results[name] = {
                "status": proc.returncode,
                "stdout": hashlib.sha256(proc.stdout).hexdigest(),
                "stdout_bytes": len(proc.stdout),
                "stderr": hashlib.sha256(err).hexdigest(),
                "stderr_text": err.decode("utf-8", "replace")[-400:],
            }
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", metavar="FILE")
    g.add_argument("--check", metavar="FILE")
    args = ap.parse_args()
    now = measure()
    if args.write:
        Path(args.write).write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"{len(now)} runs recorded in {args.write}")
        return 0
    before = json.loads(Path(args.check).read_text())
    bad = 0
    for name in sorted(set(before) | set(now)):
        a, b = before.get(name), now.get(name)
        if a is None or b is None:
            print(f"{name}: only {'after' if a is None else 'before'}")
            bad += 1
            continue
        diff = [k for k in ("status", "stdout", "stderr") if a[k] != b[k]]
        if diff:
            bad += 1
            sizes = f"stdout {a['stdout_bytes']} -> {b['stdout_bytes']} B"
            print(f"{name}: differs in {', '.join(diff)} ({sizes})")
            if "stderr" in diff:
                print(f"  before: {a['stderr_text']!r}\n  after:  {b['stderr_text']!r}")
    print(f"{len(now)} runs, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
