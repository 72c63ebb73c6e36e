"""Running the methods on one task: ctx-pack as a subprocess, the baselines in process."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from pack_quality.corpus import Corpus, terms
from pack_quality.retrieve import bm25_rank, fill


def _first_line(data: bytes) -> str:
    """The first line of stderr; of a traceback, its last line (the exception)."""
    lines = [ln for ln in data.decode(errors="replace").strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    if lines[0].startswith("Traceback"):
        return "traceback: " + lines[-1].strip()[:300]
    return lines[0][:300]


def checkout_of(pack_bin: str) -> str:
    """``<commit>[+dirty]`` of the git checkout a ``.venv/bin/ctx-pack`` belongs to."""
    root = Path(pack_bin).resolve().parent.parent.parent
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    if head.returncode != 0:
        return "unknown"
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "-uno"],
                           capture_output=True, text=True).stdout.strip()
    return f"{root} {head.stdout.strip()}" + (" + uncommitted changes" if dirty else "")


def run_pack_once(cmd: list[str], store: Path, timeout: float,
                  extra_env: dict | None = None) -> dict:
    """One ctx-pack process: its text, seconds, and the error when it failed."""
    env = {**os.environ, **(extra_env or {}), "CTX_STORE": str(store)}
    t0 = time.perf_counter()
    try:  # its own process group, so a timeout stops its workers too
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                start_new_session=True)
    except OSError as exc:
        return {"text": "", "seconds": 0.0, "error": f"cannot run {cmd[0]}: {exc}"}
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"text": "", "seconds": time.perf_counter() - t0,
                "error": f"timeout after {timeout:g} s"}
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        return {"text": "", "seconds": seconds,
                "error": f"exit {proc.returncode}: {_first_line(stderr)}"}
    try:
        data = json.loads(stdout)
        text = data["text"]
    except (ValueError, KeyError, TypeError) as exc:
        return {"text": "", "seconds": seconds, "error": f"bad JSON output: {exc}"}
    files = [f for f in data.get("files") or [] if isinstance(f, dict) and "path" in f]
    files.sort(key=lambda f: -(f.get("score") or 0))  # stable: ties keep the pack's order
    return {"text": text, "seconds": seconds, "error": None,
            "reported_tokens": data.get("tokens"), "ranked": [f["path"] for f in files]}


def run_pack(task_text: str, tree: Path, budgets: list[int | str],
             opts, env: dict | None = None) -> dict[int | str, dict]:
    """ctx-pack at each budget (tokens, or a model name: ``--model NAME --role worker``),
    each cold (a fresh CTX_STORE); at OPTS.warm_budget a second run on the same store gives
    the warm time (and says whether the bytes match). ENV: more of its environment (the
    tree's history: ``trees.with_history``)."""
    out: dict[int | str, dict] = {}
    for budget in budgets:
        size = ["--tokens", str(budget)] if isinstance(budget, int) else [
            "--model", budget, "--role", "worker"]
        cmd = [opts.pack_bin, f"--task={task_text}", *size,
               "--root", str(tree), str(tree), "--format", "json", *opts.pack_arg]
        store = Path(tempfile.mkdtemp(prefix="bench-pq-store-"))
        try:
            res = run_pack_once(cmd, store, opts.timeout, env)
            if budget == opts.warm_budget and res["error"] is None:
                warm = run_pack_once(cmd, store, opts.timeout, env)
                res["warm_seconds"] = warm["seconds"]
                res["warm_same"] = warm["text"] == res["text"]
                if warm["error"]:
                    res["warm_error"] = warm["error"]
        finally:
            shutil.rmtree(store, ignore_errors=True)
        out[budget] = res
    return out


def run_baseline(method: str, task_text: str, tree: Path,
                 sizes: dict[int | str, tuple[int, str]], count) -> dict[int | str, dict]:
    """bm25-file or bm25-chunk at each budget of SIZES (budget -> its tokens and the
    encoding they are counted in; COUNT(text, encoding) counts). Seconds: reading and
    indexing the tree (shared by the budgets, so added to each), ranking, and the fill."""
    t0 = time.perf_counter()
    corpus = Corpus(tree)
    units = corpus.whole_files() if method == "bm25-file" else corpus.chunks()
    ranked = [u for _, u in bm25_rank(units, terms(task_text))]
    base = time.perf_counter() - t0
    out: dict[int | str, dict] = {}
    for budget, (limit, encoding) in sizes.items():
        t1 = time.perf_counter()
        text, taken = fill(ranked, corpus.files, task_text, limit,
                           lambda t, e=encoding: count(t, e))
        out[budget] = {"text": text, "seconds": base + time.perf_counter() - t1,
                       "error": None, "ranked": list(dict.fromkeys(u.path for u in taken))}
    return out
