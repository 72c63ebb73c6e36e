#!/usr/bin/env python3
"""Benchmark ctx-mcp (issue 18), by hand; the figures go in the issue note.

    .venv/bin/python bench/bench_mcp.py                 # all three
    .venv/bin/python bench/bench_mcp.py --only start --runs 20
    .venv/bin/python bench/bench_mcp.py --only read --gb 1
    .venv/bin/python bench/bench_mcp.py --only pack --runs 5

The client is a plain JSON-RPC writer and reader over the server's pipes (no SDK on the
client side, so the figures are the server's), with the 2025-06-18 handshake.

* start: from the fork of ``ctx-mcp`` to the answer of its first ``tools/list`` (initialize,
  initialized, tools/list written at once), a fresh process a run; beside it ``python -c
  pass`` and ``ctx-count --help`` of the same interpreter.
* read: a handle of GB gigabytes (lines of 100 bytes, made and stashed once), then ``read``
  round trips of ``range`` at its start, middle and end through one server, against the same
  reads of a 1 MB handle: the range read must stay flat, as ctx-read's is. ``ctx-read
  --range`` of the big handle as a process is shown for comparison.
* pack: Django 5.1.4's .py files (bench/corpora, fetched by pip on first use), the task of
  bench_pack.py, model gpt-4o. The CLI: ``ctx-pack`` as a process, warm (its store already
  holds the map cache). MCP: one server, the same pack as ``tools/call`` round trips (the
  first call loads the encoding; the next ones are warm), over the same store. The pack
  the server stores must be byte-identical to the CLI's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
BIN = Path(sys.executable).parent
TASK = (
    "QuerySet.bulk_create with ignore_conflicts drops update_fields on the sqlite3 "
    "DatabaseOperations: fix on_conflict_suffix_sql"
)
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


class Server:
    """A ctx-mcp process and a blocking JSON-RPC client on its pipes."""

    def __init__(self, args: list[str], env: dict):
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [str(BIN / "ctx-mcp"), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 2

    def send(self, msg: dict) -> None:
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def answer(self, ident: int) -> dict:
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("ctx-mcp ended early")
            msg = json.loads(line)
            if msg.get("id") == ident:
                return msg

    def start(self) -> float:
        """Handshake and the first tools/list; seconds from the fork to its answer."""
        self.send(INIT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/list"})
        self.answer(1)
        listed = self.answer(self.next_id)
        self.next_id += 1
        assert listed["result"]["tools"], listed
        return time.perf_counter() - self.t0

    def call(self, name: str, arguments: dict) -> tuple[dict, float]:
        ident = self.next_id
        self.next_id += 1
        t = time.perf_counter()
        self.send(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        )
        res = self.answer(ident)["result"]
        took = time.perf_counter() - t
        if res.get("isError"):
            raise SystemExit(f"{name} failed: {res['content'][0]['text']}")
        return res, took

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


def _median_ms(xs: list[float]) -> str:
    return f"median {statistics.median(xs) * 1000:.1f} ms (min {min(xs) * 1000:.1f})"


def _process(cmd: list[str], env: dict) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, env=env, capture_output=True, check=True)
    return time.perf_counter() - t


def _child_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench_start(env: dict, runs: int) -> None:
    starts, cpus, passes, helps = [], [], [], []
    for _ in range(runs):
        before = _child_cpu()
        server = Server([], env)
        starts.append(server.start())
        server.close()
        cpus.append(_child_cpu() - before)
        passes.append(_process([sys.executable, "-c", "pass"], env))
        helps.append(_process([str(BIN / "ctx-count"), "--help"], env))
    print(f"cold start -> first tools/list answer: {_median_ms(starts)}   ({runs} runs)")
    print(f"  CPU of a server's whole life (start, tools/list, EOF): {_median_ms(cpus)}")
    print(f"  python -c pass: {_median_ms(passes)};  ctx-count --help: {_median_ms(helps)}")


def _make_big(path: Path, gb: float) -> int:
    line = b"%010d " + b"x" * 88 + b"\n"  # 100 bytes a line
    total = int(gb * (1 << 30)) // 100
    with open(path, "wb") as fh:
        for start in range(0, total, 100_000):
            fh.write(b"".join(line % i for i in range(start, min(total, start + 100_000))))
    return total


def _stash(path: Path, name: str, env: dict) -> float:
    t = time.perf_counter()
    with open(path, "rb") as fh:
        subprocess.run(
            [str(BIN / "ctx-stash"), "--name", name, "--always"],
            stdin=fh,
            env=env,
            capture_output=True,
            check=True,
        )
    return time.perf_counter() - t


def bench_read(env: dict, scratch: Path, gb: float, runs: int) -> None:
    big, small = scratch / "big.txt", scratch / "small.txt"
    lines = _make_big(big, gb)
    small_lines = _make_big(small, 1 / 1024)
    took = _stash(big, "big", env)
    _stash(small, "small", env)
    print(f"stashed {big.stat().st_size / (1 << 30):.2f} GB ({lines:,} lines) in {took:.1f} s")
    server = Server([], env)
    server.start()
    for name, n in (("small", small_lines), ("big", lines)):
        for where, first in (("start", 1), ("middle", n // 2), ("end", n - 99)):
            times = []
            for _ in range(runs):
                res, t = server.call("read", {"ref": name, "range": f"{first}-{first + 99}"})
                times.append(t)
            body = res["content"][0]["text"]
            assert body.startswith(f"{first - 1:010d} "), body[:40]
            print(f"read {name:5} range {where:6} (100 lines): {_median_ms(times)}")
    server.close()
    mid = lines // 2
    cli = [str(BIN / "ctx-read"), "big", "--range", f"{mid}-{mid + 99}"]
    times = [_process(cli, env) for _ in range(5)]
    print(f"ctx-read big --range (a process a read): {_median_ms(times)}")


def bench_pack(env: dict, runs: int) -> None:
    from bench_repomap import django_py_tree

    tree = str(django_py_tree().resolve())
    cli = [str(BIN / "ctx-pack"), "--root", tree, "--task", TASK, "--model", "gpt-4o", tree]
    first = subprocess.run(cli, env=env, capture_output=True, check=True).stdout  # cold
    warm = []
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run(cli, env=env, capture_output=True, check=True).stdout
        warm.append(time.perf_counter() - t)
        assert out == first, "the CLI pack changed between runs"
    print(
        f"Django pack, CLI (a process, warm store): median {statistics.median(warm):.2f} s "
        f"(min {min(warm):.2f}); {len(first):,} bytes"
    )
    server = Server(["--root", tree, "--model", "gpt-4o"], env)
    server.start()
    calls = []
    card = None
    for _ in range(runs + 1):
        res, t = server.call("pack", {"task": TASK, "paths": [tree]})
        calls.append(t)
        card = json.loads(res["content"][0]["text"].splitlines()[0])
    server.close()
    stored = subprocess.run(
        [str(BIN / "ctx-read"), card["ref"], "--max-chars", "50000", "--count"],
        env=env,
        capture_output=True,
        check=True,
    ).stdout
    same = card["sha256"] == hashlib.sha256(first).hexdigest()
    print(
        f"Django pack, MCP tools/call: first {calls[0]:.2f} s, then median "
        f"{statistics.median(calls[1:]):.2f} s (min {min(calls[1:]):.2f}); "
        f"stored as {card['ref']}, byte-identical to the CLI's: {same}"
    )
    inline, tokens = len(res["content"][0]["text"]), json.loads(stored)["tokens"]
    print(f"  the agent got {inline:,} chars inline; {tokens:,} tokens stored")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["start", "read", "pack"], default=None)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--gb", type=float, default=1.0, help="size of the big handle")
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="ctx-bench-mcp-"))
    env = {**os.environ, "CTX_STORE": str(scratch / "store")}
    env.pop("CTX_SESSION", None)
    try:
        if args.only in (None, "start"):
            bench_start(env, args.runs)
        if args.only in (None, "read"):
            bench_read(env, scratch, args.gb, args.runs)
        if args.only in (None, "pack"):
            bench_pack(env, max(2, args.runs // 2))
    finally:
        subprocess.run(["rm", "-rf", str(scratch)], check=False)


if __name__ == "__main__":
    main()
