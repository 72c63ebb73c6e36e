#!/usr/bin/env python3
"""Big inputs for the JSON readers (issue 21, item 14): time and peak memory of
``ctx-read --jsonpath``, ``ctx-count --messages``, ``ctx-compact`` and its ``--evict`` and
``--accept`` modes on 1 GB that is not JSON and on 200 MB that is.

    .venv/bin/python bench/bench_hostile_json.py [--text-mb 1000] [--json-mb 200] [--only read,...]
    .venv/bin/python bench/bench_hostile_json.py --sizes 10,100,1000   # issue 27, item 13

``--only stash`` times ``ctx-stash`` itself on the json and jsonl inputs (issue 27, item
14: judging JSON Lines read every line, a byte a call: 200 MB took 448 s, now 1.3 s).

Inputs, written once to bench/corpora/ (gitignored):

  text   log lines (a timestamp, a level, a path, a message): not JSON from byte 1
  json   an OpenAI transcript, one JSON list of user/assistant messages
  jsonl  the same messages as JSON Lines
  ws     a working set for --evict: JSON Lines {"id", "path", "last_accessed_at", ...}

Each command runs as a child process (os.wait4: wall time, peak RSS of that child) with
the store in a temporary directory; the line gives its exit status and the first line of
its stderr. ``ctx-read`` reads a handle stashed beforehand (the stash is not timed) and
the same bytes on stdin.

With --sizes, instead: peak memory at each size (MB) of the four commands of issue 27,
item 13, each to stay under 300 MB or refuse with its limit named, the inputs written to a
temporary directory (--dir, default in /tmp) and deleted after each size:

  ctx-excerpt -q "worker processed" LOG     a log where most lines match
  ctx-count --messages JSONL                counted a line at a time
  ctx-compact --limit 128000 JSONL          refused past the 48 MiB limit
  ctx-read HANDLE --jsonpath '$[0].role'    a stashed JSON document; refused past 48 MiB
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_hostile import run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "corpora"
BIN = Path(sys.executable).parent
MB = 1_000_000
WORDS = [
    "the",
    "request",
    "for",
    "user",
    "session",
    "token",
    "cache",
    "index",
    "build",
    "test",
    "fails",
    "passes",
]


def _write(path: Path, size: int, chunks) -> Path:
    if path.exists() and path.stat().st_size >= size:
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    written = 0
    with open(path, "wb") as fh:
        for chunk in chunks:
            fh.write(chunk)
            written += len(chunk)
            if written >= size:
                break
    return path


def _text_lines(rng: random.Random):
    n = 0
    while True:
        lines = []
        for _ in range(5000):
            n += 1
            words = " ".join(rng.choice(WORDS) for _ in range(8))
            lines.append(
                f"2026-12-01T10:{n // 60 % 60:02d}:{n % 60:02d} INFO src/app/m{n % 97}.py: {words}"
            )
        yield ("\n".join(lines) + "\n").encode()


def _messages(rng: random.Random):
    n = 0
    while True:
        n += 1
        role = "user" if n % 2 else "assistant"
        text = " ".join(rng.choice(WORDS) for _ in range(300))
        yield {"role": role, "content": f"step {n}: {text}"}


def _worker_log(rng: random.Random):
    """Log lines where most mention a worker, a good part that one processed something."""
    msgs = [
        "worker {w} processed job {j} in {t} ms",
        "queue depth {j} on worker {w}",
        "request GET /api/items/{j} 200 {t}ms",
        "cache miss for key user:{j}",
        "worker {w} started",
        "retrying job {j} (attempt {w})",
    ]
    n = 0
    while True:
        lines = []
        for _ in range(10_000):
            n += 1
            msg = rng.choice(msgs).format(
                w=rng.randrange(16), j=rng.randrange(10**6), t=rng.randrange(2000)
            )
            level = rng.choice(["INFO", "INFO", "WARN", "DEBUG", "ERROR"])
            stamp = f"2026-12-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}"
            lines.append(f"{stamp} {level} [app.jobs] {msg}\n")
        yield "".join(lines).encode()


def by_size(sizes: list[int], where: str | None) -> None:
    """The issue 27 item 13 table: peak memory of the four commands at each size."""
    global OUT
    print(f"# load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
    for mb in sizes:
        tmp = Path(tempfile.mkdtemp(prefix="ctx-bench-sizes-", dir=where))
        OUT = tmp
        try:
            log = _write(tmp / f"worker-{mb}mb.log", mb * MB, _worker_log(random.Random(27)))
            jpath, lpath = build_json(mb)
            env = {"CTX_STORE": str(tmp / "store")}
            c = lambda name: str(BIN / name)  # noqa: E731
            measure(
                f"{mb} MB ctx-excerpt -q 'worker processed'",
                [c("ctx-excerpt"), "-q", "worker processed", str(log)],
                env,
            )
            measure(
                f"{mb} MB ctx-count --messages (jsonl)",
                [c("ctx-count"), "--messages", str(lpath)],
                env,
            )
            measure(
                f"{mb} MB ctx-compact --limit 128000 (jsonl)",
                [c("ctx-compact"), "--limit", "128000", "-q", str(lpath)],
                env,
            )
            run(
                [
                    c("ctx-stash"),
                    "--store",
                    env["CTX_STORE"],
                    "--always",
                    "--name",
                    "doc",
                    str(jpath),
                ]
            )
            measure(
                f"{mb} MB ctx-read HANDLE --jsonpath (json)",
                [c("ctx-read"), "doc", "--jsonpath", "$[0].role"],
                env,
            )
        finally:
            shutil.rmtree(tmp)


def build_text(size_mb: int) -> Path:
    return _write(
        OUT / f"json-hostile-text-{size_mb}mb.log", size_mb * MB, _text_lines(random.Random(14))
    )


def build_json(size_mb: int) -> tuple[Path, Path]:
    size = size_mb * MB
    lpath = OUT / f"json-hostile-{size_mb}mb.jsonl"
    jpath = OUT / f"json-hostile-{size_mb}mb.json"
    if not (lpath.exists() and jpath.exists()):
        msgs = _messages(random.Random(14))
        first = json.dumps({"role": "system", "content": "You are a coding agent."})
        _write(lpath, size, (json.dumps(next(msgs)).encode() + b"\n" for _ in iter(int, 1)))
        with open(lpath, "rb") as src, open(jpath, "wb") as dst:
            dst.write(b"[" + first.encode())
            for line in src:
                dst.write(b",\n" + line.rstrip(b"\n"))
            dst.write(b"]\n")
    return jpath, lpath


def build_ws(size_mb: int) -> Path:
    def lines():
        i = 0
        while True:
            i += 1
            yield (
                json.dumps(
                    {
                        "id": f"e{i}",
                        "path": f"src/m{i}.py",
                        "size_bytes": i % 9000,
                        "last_accessed_at": 1_700_000_000 + i,
                    }
                )
                + "\n"
            ).encode()

    return _write(OUT / f"json-hostile-ws-{size_mb}mb.jsonl", size_mb * MB, lines())


def measure(label: str, cmd: list[str], env: dict, stdin: Path | None = None) -> None:
    if stdin is not None:
        cmd = ["sh", "-c", 'exec "$0" "$@" < "$STDIN_FILE"', *cmd]
        env = {**env, "STDIN_FILE": str(stdin)}
    old = dict(os.environ)
    os.environ.update(env)
    try:
        elapsed, rss, _out, err, rc = run(cmd)
    finally:
        os.environ.clear()
        os.environ.update(old)
    first = err.decode(errors="replace").strip().splitlines()[:1]
    print(
        f"{label:<44} {elapsed:8.2f} s  peak {rss / 1024:7.0f} MB  exit {rc}  "
        f"{(first[0] if first else '')[:110]}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--text-mb", type=int, default=1000)
    ap.add_argument("--json-mb", type=int, default=200)
    ap.add_argument("--only", default="stash,read,count,compact,evict,accept")
    ap.add_argument("--sizes", help="MB, comma-separated: the issue 27 item 13 table only")
    ap.add_argument("--dir", help="where --sizes writes its inputs (default: /tmp)")
    args = ap.parse_args()
    if args.sizes:
        by_size([int(x) for x in args.sizes.split(",")], args.dir)
        return
    only = set(args.only.split(","))
    text = build_text(args.text_mb)
    jpath, lpath = build_json(args.json_mb)
    ws = build_ws(args.json_mb)
    tmp = Path(tempfile.mkdtemp(prefix="ctx-bench-json-"))
    env = {"CTX_STORE": str(tmp / "store")}
    load = os.getloadavg()
    print(
        f"# load average {load[0]:.2f}, {os.cpu_count()} CPUs; text {args.text_mb} MB, "
        f"json {args.json_mb} MB"
    )
    c = lambda name: str(BIN / name)  # noqa: E731
    if "stash" in only:
        for name, path in (("json", jpath), ("jsonl", lpath)):
            measure(
                f"ctx-stash --name ({name})", [c("ctx-stash"), "--name", f"s-{name}"], env, path
            )
    if "read" in only:
        for name, path in (("text", text), ("json", jpath), ("jsonl", lpath)):
            run(
                [c("ctx-stash"), "--store", env["CTX_STORE"], "--always", "--name", name, str(path)]
            )
            measure(
                f"ctx-read HANDLE --jsonpath ({name})",
                [c("ctx-read"), name, "--jsonpath", "$[0].role"],
                env,
            )
        measure("ctx-read --jsonpath < text", [c("ctx-read"), "--jsonpath", "$[0]"], env, text)
        measure(
            "ctx-read --jsonpath < json", [c("ctx-read"), "--jsonpath", "$[0].role"], env, jpath
        )
    for name, path in (("text", text), ("json", jpath), ("jsonl", lpath)):
        if "count" in only:
            measure(
                f"ctx-count --messages ({name})",
                [c("ctx-count"), "--messages", "--heuristic", str(path)],
                env,
            )
        if "compact" in only:
            measure(
                f"ctx-compact --limit 100000 ({name})",
                [c("ctx-compact"), "--heuristic", "--limit", "100000", "-q", str(path)],
                env,
            )
    if "evict" in only:
        for name, path in (("text", text), ("ws", ws)):
            measure(
                f"ctx-compact --evict ({name})",
                [c("ctx-compact"), "--evict", "--max-bytes", "1M", str(path)],
                env,
            )
    if "accept" in only:
        for name, path in (("text", text), ("json", jpath)):
            measure(
                f"ctx-compact --accept ({name}, itself)",
                [c("ctx-compact"), "--accept", str(path), str(path)],
                env,
            )
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
