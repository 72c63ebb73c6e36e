"""Benchmark ctx-compact on real OpenHands transcripts and a 10,000-message one built from them.

    .venv/bin/python bench/bench_compact.py [--messages 10000] [--limit 128000]

Builds into bench/corpora/compact/ (gitignored):

* the three real runs of tests/data/compact/openhands-multi-swe-bench-output.jsonl,
  converted to OpenAI messages and Anthropic requests (tests/data/compact/convert_openhands.py);
* ``long-10k.openai.json``: the system prompt and first user message of one run, then the
  assistant/tool steps of all three runs repeated (call ids renamed so they stay unique) up
  to the message count; ``long-10k-unique.openai.json`` is the same with a copy number
  appended to every tool result, so no two results are equal (no counting is shared);
  ``long-10k.anthropic.json``, the first one converted mechanically.

Then runs the installed ``ctx-compact`` as a subprocess (a fresh store each time) and prints
wall time and peak RSS (``resource.getrusage(RUSAGE_CHILDREN)``, which covers the process
start, imports and the ruler's encoding load), and, for each real transcript, tokens
before/after at a --limit that needs only stage 1 and one that needs stage 2. Targets (issue
6): the 10,000-message transcript in under 1 s, peak memory under 300 MB.

Then the store writes of the all-distinct 10,000-message compaction alone, in this process:
the handles it stashes written as one ``HandleStore.put_many`` batch and, for comparison, by
one ``put_bytes`` after another (fresh stores; creating files is what those writes cost).

Last (``--at-limit``, or ``--only-limit``), inputs up to the 48 MiB input limit, built in a
temporary directory: one message of 5, 20 and 45 MB of ``x``, one of 20 MB of real lines
(this repository's Python files, repeated), and ~47.8 MiB transcripts of the 10,000-message
one's steps repeated (all ASCII, and with a non-ASCII mark in every tool result: Python
holds such a text in 2 bytes a character). Each is run through ``ctx-compact`` (default
window; for the transcripts also --limit 128,000, stage 2, and 16,000,000, stage 1 over all
of it) and ``ctx-count --messages``, with this run's wall time and peak RSS (``os.wait4``
of the command alone). A one-message input's count is checked against plain ``ctx-count``
of its text plus 7 (4 for the message, 3 for the reply). Target: under 300 MB.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "compact"  # the runs and their licence, copied into the clone
CORPUS = CORPUS / "openhands-multi-swe-bench-output.jsonl"
OUT = REPO / "bench" / "corpora" / "compact"
BIN = Path(sys.executable).parent / "ctx-compact"

_spec = importlib.util.spec_from_file_location(
    "convert_openhands", REPO / "tests" / "data" / "compact" / "convert_openhands.py"
)
convert = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(convert)


def build(n_messages: int) -> dict[str, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    runs = {r["instance_id"]: convert.to_openai(r) for r in convert.runs_from_jsonl(CORPUS)}
    files: dict[str, Path] = {}
    for name, msgs in runs.items():
        p = OUT / f"{name}.openai.json"
        p.write_text(json.dumps(msgs, ensure_ascii=False))
        files[name] = p
        a = OUT / f"{name}.anthropic.json"
        a.write_text(json.dumps(convert.to_anthropic(msgs), ensure_ascii=False))
        files[name + " (anthropic)"] = a
    first = next(iter(runs.values()))
    steps = []  # assistant message + its results, from every run
    for msgs in runs.values():
        body = msgs[2:]
        i = 0
        while i < len(body):
            j = i + 1
            while j < len(body) and body[j]["role"] == "tool":
                j += 1
            steps.append(body[i:j])
            i = j
    for unique in (False, True):
        out = [first[0], first[1]]
        copy = 0
        while len(out) < n_messages:
            for step in steps:
                if len(out) + len(step) + 1 > n_messages:
                    break
                if out[-1]["role"] == "assistant" and step[0]["role"] == "assistant":
                    # a run's last answer, then the next step: the user says go on
                    out.append({"role": "user", "content": "Continue with the next task."})
                for m in step:
                    m = json.loads(json.dumps(m))
                    for c in m.get("tool_calls") or []:
                        c["id"] = f"{c['id']}_{copy}"
                    if m["role"] == "tool":
                        m["tool_call_id"] = f"{m['tool_call_id']}_{copy}"
                        if unique:
                            m["content"] += f"\n[copy {copy}]"
                    out.append(m)
                copy += 1
            else:
                continue
            break
        while len(out) < n_messages:  # top up with plain turns to the exact count
            role = "user" if out[-1]["role"] != "user" else "assistant"
            out.append({"role": role, "content": f"step {len(out)}: continue."})
        name = "long-10k-unique" if unique else "long-10k"
        p = OUT / f"{name}.openai.json"
        p.write_text(json.dumps(out, ensure_ascii=False))
        files[name] = p
        if not unique:
            a = OUT / "long-10k.anthropic.json"
            a.write_text(json.dumps(convert.to_anthropic(out), ensure_ascii=False))
            files["long-10k (anthropic)"] = a
    return files


_WARM: Path | None = None
LAST_CPU = 0.0  # user + system CPU seconds of the last run (contention does not inflate it)


def warm_store() -> Path:
    """A store holding only the ruler's parsed-encoding cache (what any used store has)."""
    global _WARM
    if _WARM is None:
        _WARM = Path(tempfile.mkdtemp(prefix="bench-compact-warm-"))
        env = dict(os.environ, CTX_STORE=str(_WARM))
        subprocess.run(
            [str(BIN), "--limit", "10", "--force"], input=b"[]", capture_output=True, env=env
        )
    return _WARM


def run(path: Path, *args: str, cold: bool = False) -> tuple[float, float, int, dict, int]:
    """(seconds, peak RSS MB so far of the children, exit status, report, output bytes).

    Each run gets a new store with no handles; unless COLD, it has the ruler's cache."""
    store = tempfile.mkdtemp(prefix="bench-compact-")
    if not cold:
        for sub in warm_store().iterdir():
            shutil.copytree(sub, Path(store) / sub.name)
    try:
        env = dict(os.environ, CTX_STORE=store)
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(
            [str(BIN), str(path), "--json-report", *args], capture_output=True, env=env
        )
        dt = time.perf_counter() - t0
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        global LAST_CPU
        LAST_CPU = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        peak = ru1.ru_maxrss / 1024
        lines = [ln for ln in proc.stderr.decode().splitlines() if ln.startswith("{")]
        report = json.loads(lines[-1]) if lines else {"error": proc.stderr.decode()[-300:]}
        return dt, peak, proc.returncode, report, len(proc.stdout)
    finally:
        shutil.rmtree(store, ignore_errors=True)


class _Recorder:
    """A stash that keeps the batch compaction hands it (and answers with predicted refs)."""

    def __init__(self) -> None:
        self.items: list[tuple[bytes, str, str | None]] = []

    def put(self, data: bytes, name: str, type: str | None = None) -> str:
        return self.put_many([(data, name, type)])[0]

    def put_many(self, items: list[tuple[bytes, str, str | None]]) -> list[str]:
        from ctxtools.compact.elide import predict_ref

        self.items.extend(items)
        return [predict_ref("default", data) for data, _name, _t in items]


def store_writes(path: Path, limit: int) -> None:
    """Time the store writes of one compaction: one batch vs one put after another."""
    from ctxtools.compact import Options, compact
    from ctxtools.compact.transcript import TokenCounter, load
    from ctxtools.store import HandleStore
    from ctxtools.tokens import get_ruler

    rec = _Recorder()
    compact(load(path.read_bytes()), TokenCounter(get_ruler().ruler), Options(limit=limit), rec)
    total = sum(len(d) for d, _n, _t in rec.items)
    print()
    print(
        f"== store writes of {path.name}'s compaction: {len(rec.items)} handles, "
        f"{total / 1e6:.1f} MB, fresh store each run =="
    )
    for label in ("put_many (one batch)", "put_bytes, one after another"):
        walls, cpus = [], []
        for _ in range(5):
            root = Path(tempfile.mkdtemp(prefix="bench-compact-store-"))
            st = HandleStore(root)
            c0, t0 = os.times(), time.perf_counter()
            if label.startswith("put_many"):
                st.put_many([(d, {"name": n, "type": t}) for d, n, t in rec.items])
            else:
                for d, n, t in rec.items:
                    st.put_bytes(d, name=n, type=t)
            dt, c1 = time.perf_counter() - t0, os.times()
            walls.append(dt)
            cpus.append(c1.user - c0.user + c1.system - c0.system)
            shutil.rmtree(root, ignore_errors=True)
        print(
            f"{label:30} best {min(walls):.3f} s, median {sorted(walls)[2]:.3f} s of 5, "
            f"CPU {sorted(cpus)[2]:.3f} s"
        )


# A process forked from this one starts with this one's pages counted in its peak RSS:
# each command is started by a small Python that reports its child's own peak (as time does).
_PEAK = (
    "import os, sys\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os.execv(sys.argv[2], sys.argv[2:])\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    f.write(f'{usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}')\n"
)


def own_run(argv: list[str], store: str) -> tuple[float, float, int, bytes, str]:
    """(seconds, this run's own peak RSS in MB, exit status, stdout, stderr) of ARGV."""
    env = dict(os.environ, CTX_STORE=store)
    with tempfile.TemporaryDirectory() as tmp:
        said = Path(tmp) / "peak"
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", _PEAK, str(said), *argv],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=env,
        )
        dt = time.perf_counter() - t0
        peak_kb, status = (int(v) for v in said.read_text().split())
    return dt, peak_kb / 1024, status, proc.stdout, proc.stderr.decode()


def build_at_limit(where: Path, steps_from: Path) -> dict[str, tuple[Path, str | None]]:
    """The inputs of ``at_limit`` in WHERE: name -> (transcript, its one text or None)."""
    files: dict[str, tuple[Path, str | None]] = {}
    lines = "".join(
        p.read_text(encoding="utf-8") for p in sorted((REPO / "ctxtools").rglob("*.py"))
    )
    texts = {f"x {n} MB": "x" * (n * 1_000_000) for n in (5, 20, 45)}
    texts["real lines 20 MB"] = (lines * (20_000_000 // len(lines) + 1))[:20_000_000]
    for name, text in texts.items():
        p = where / (name.replace(" ", "-") + ".json")
        p.write_text(json.dumps([{"role": "user", "content": text}]), encoding="utf-8")
        files[name] = (p, text)
    msgs = json.loads(steps_from.read_text(encoding="utf-8"))
    head, body = msgs[:2], msgs[2:]
    target = int(47.8 * (1 << 20))
    for mark in ("", " ✓"):
        out, size, copy = list(head), 2, 0
        while size < target - 300_000:
            for m in body:
                if m["role"] == "assistant" and size >= target - 300_000:
                    break
                m = dict(m)
                if m["role"] == "tool":
                    m["content"] = f"{m['content']}{mark} #{copy}"
                line = json.dumps(m, ensure_ascii=False)
                out.append(m)
                size += len(line.encode()) + 1
            copy += 1
        p = where / f"transcript-47.8MiB{'-marked' if mark else ''}.json"
        p.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
        files[f"{len(out):,} messages{', non-ASCII' if mark else ''}"] = (p, None)
    return files


def at_limit(steps_from: Path) -> None:
    """Wall time and peak memory of ctx-compact and ctx-count --messages near 48 MiB."""
    count = BIN.parent / "ctx-count"
    print()
    print("== at the 48 MiB input limit: wall time, this run's peak RSS ==")
    with tempfile.TemporaryDirectory(prefix="bench-compact-limit-") as tmp:
        where = Path(tmp)
        for name, (path, text) in build_at_limit(where, steps_from).items():
            size = path.stat().st_size
            runs = [("ctx-compact", [str(BIN), str(path), "--json-report"])]
            if text is None:
                for limit in ("128000", "16000000"):
                    runs.append((f"ctx-compact --limit {limit}", runs[0][1] + ["--limit", limit]))
            runs.append(("ctx-count --messages", [str(count), "--messages", "--json", str(path)]))
            if text is not None:
                (where / "text").write_text(text, encoding="utf-8")
                runs.append(("ctx-count (its text)", [str(count), str(where / "text")]))
            tokens = {}
            for label, argv in runs:
                store = tempfile.mkdtemp(prefix="bench-compact-", dir=tmp)
                dt, peak, rc, out, err = own_run(argv, store)
                shutil.rmtree(store, ignore_errors=True)
                if label.startswith("ctx-compact"):
                    rep = json.loads([ln for ln in err.splitlines() if ln.startswith("{")][-1])
                    tokens[label] = rep["tokens_before"]
                elif label.startswith("ctx-count --"):
                    tokens[label] = json.loads(out)["total"]["tokens"]
                else:
                    tokens[label] = int(out) + 7
                print(
                    f"{name:28} {size / 1e6:5.1f} MB  {label:28} exit {rc}  {dt:6.2f} s  "
                    f"peak {peak:5.0f} MB  tokens {tokens[label]:,}"
                )
            if text is not None:
                same = len(set(tokens.values())) == 1
                print(f"{'':28} counts {'equal' if same else 'DIFFER'} (plain + 7)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=10000)
    ap.add_argument("--limit", type=int, default=128000)
    ap.add_argument("--at-limit", action="store_true", help="also the inputs near 48 MiB")
    ap.add_argument("--only-limit", action="store_true", help="only the inputs near 48 MiB")
    args = ap.parse_args()
    files = build(args.messages)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if args.only_limit:
        at_limit(files["long-10k-unique"])
        return 0

    print(f"== {args.messages:,}-message transcripts, --limit {args.limit:,} ==")
    for name in ("long-10k", "long-10k-unique", "long-10k (anthropic)"):
        path = files[name]
        size = path.stat().st_size
        cold = run(path, "--limit", str(args.limit), cold=True)[0]
        times, cpus = [], []
        for _ in range(5):
            dt, peak, rc, rep, out = run(path, "--limit", str(args.limit))
            times.append(dt)
            cpus.append(LAST_CPU)
        best, median = min(times), sorted(times)[2]
        cpu = sorted(cpus)[2]
        s2 = rep.get("stage2") or {}
        print(
            f"{name:22} {size / 1e6:6.1f} MB  exit {rc}  best {best:.3f} s, median "
            f"{median:.3f} s of 5, CPU {cpu:.3f} s ({cold:.3f} s with a store never used)  "
            f"peak RSS {peak:.0f} MB  tokens {rep['tokens_before']:,} -> "
            f"{rep['tokens_after']:,} ({rep['percent_after']}%)  elided "
            f"{rep['stage1']['elided']}  dropped {s2.get('dropped', 0):,}"
        )
    store_writes(files["long-10k-unique"], args.limit)
    print()
    print("== real transcripts: tokens before -> after ==")
    print(
        f"{'transcript':40} {'stage':6} {'limit':>7} {'before':>8} {'after':>8} "
        f"{'%after':>7} {'elided':>6} {'dropped':>7} exit"
    )
    for name, path in files.items():
        if name.startswith("long-10k"):
            continue
        base = run(path, "--limit", "10000000")[3]["tokens_before"]
        floor = run(path, "--limit", "10000000", "--force", "--keep-tokens", "0")[3]["tokens_after"]
        for stage, limit in (("1", int(base / 0.9)), ("2", int(floor / 0.9))):
            dt, peak, rc, rep, out = run(path, "--limit", str(limit))
            s2 = rep.get("stage2") or {}
            print(
                f"{name:40} {stage:6} {limit:7,} {base:8,} "
                f"{rep['tokens_after']:8,} {rep['percent_after']:6.1f}% "
                f"{rep['stage1']['elided']:6} {s2.get('dropped', 0):7} {rc}"
            )
    if _WARM is not None:
        shutil.rmtree(_WARM, ignore_errors=True)
    if args.at_limit:
        at_limit(files["long-10k-unique"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
