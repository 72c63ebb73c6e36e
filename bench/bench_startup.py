#!/usr/bin/env python3
"""Start-up time of every command (issue 10). Run by hand; figures go in the issue note.

    .venv/bin/python bench/bench_startup.py [--runs 20] [--only dev|installed]

For each console script: the median wall time over RUNS of ``--help``, of a run with
``--heuristic`` on a 1 KB input, and of the same run counted exactly with cl100k_base,
against ``python -c pass`` of the same interpreter, run alternately with it (the ratio is
the issue's measure); and the median CPU time (user + system) of each, which other
processes on a busy machine disturb less than the wall time.

Two set-ups are measured:

* ``dev`` -- this virtual environment's console scripts, as ``pip install -e`` made them.
  Every Python start here, ``python -c pass`` included, pays for setuptools' editable
  finder (its .pth imports pathlib, importlib.util, re ...).
* ``installed`` -- a throwaway venv on the same interpreter whose site-packages holds only a
  plain .pth naming this checkout and this venv's site-packages (what a normal, non-editable
  install puts on sys.path), and console scripts of the form pip writes.

Inputs are real and 1 KB each: the first 1 KB of ctxtools/profiles.py (a file to count, read
or excerpt, and a one-file tree to map) and the first messages of a real OpenHands run
(tests/data/compact) for ctx-compact. ctx-stash does not count: its row times storing the
1 KB (``--always``) instead. The store is a fresh temporary directory; one untimed run of
each command fills the ruler's rank cache first. Bytecode is compiled first (this
environment sets PYTHONDONTWRITEBYTECODE).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ("ctx-count", "ctx-stash", "ctx-read", "ctx-excerpt", "ctx-repomap", "ctx-compact")
ENTRY = {  # console script -> module of its main, as pyproject.toml declares them
    name: target.split(":")[0]
    for name, target in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "scripts"
    ].items()
}
PIP_SCRIPT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from {module} import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


def make_inputs(work: Path) -> dict[str, Path]:
    text = (ROOT / "ctxtools" / "profiles.py").read_bytes()[:1024]
    text = text[: text.rfind(b"\n") + 1]
    tree = work / "tree"
    tree.mkdir()
    (tree / "profiles.py").write_bytes(text)
    spec = importlib.util.spec_from_file_location(
        "convert_openhands", ROOT / "tests" / "data" / "compact" / "convert_openhands.py"
    )
    convert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(convert)
    runs = convert.runs_from_jsonl(
        ROOT / "tests" / "data" / "compact" / "openhands-multi-swe-bench-output.jsonl"
    )
    messages = []
    for m in convert.to_openai(runs[0]):
        if isinstance(m.get("content"), str):
            m = dict(m, content=m["content"][:300])
        messages.append(m)
        if len(json.dumps(messages)) > 1024:
            messages.pop()
            break
    transcript = work / "transcript.json"
    transcript.write_text(json.dumps(messages))
    return {"text": tree / "profiles.py", "tree": tree, "transcript": transcript}


def cases(inputs: dict[str, Path]) -> dict[str, tuple[list[str], list[str], Path | None]]:
    """script -> (arguments of the counting run, of the heuristic run, stdin file)."""
    text, tree, tr = inputs["text"], inputs["tree"], inputs["transcript"]
    return {
        "ctx-count": ([], ["--heuristic"], text),
        "ctx-stash": (["--always", "--name", "b"], ["--always", "--name", "b"], text),
        "ctx-read": (["--count"], ["--count", "--heuristic"], text),
        "ctx-excerpt": (
            ["--query", "pack budget", "--tokens", "2000", str(text)],
            ["--query", "pack budget", "--tokens", "2000", "--heuristic", str(text)],
            None,
        ),
        "ctx-repomap": (
            ["--no-cache", "--tokens", "1000", str(tree)],
            ["--no-cache", "--tokens", "1000", "--heuristic", str(tree)],
            None,
        ),
        "ctx-compact": (["--limit", "100000"], ["--limit", "100000", "--heuristic"], tr),
    }


def _once(argv: list[str], stdin: Path | None, env: dict) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run of ARGV, in ms."""
    with open(stdin or os.devnull, "rb") as fh:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(
            argv, stdin=fh, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
        )
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.decode()[:300]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall * 1000, cpu * 1000


def timed(argv, runs, stdin, env, base_argv) -> dict:
    """Medians of ARGV and of BASE_ARGV (``python -c pass``) run alternately RUNS times each,
    so that the load of a busy machine weighs on both alike."""
    cmd, base = [], []
    for _ in range(runs):
        base.append(_once(base_argv, None, env))
        cmd.append(_once(argv, stdin, env))
    med = {
        "wall": statistics.median(w for w, _ in cmd),
        "cpu": statistics.median(c for _, c in cmd),
        "base_wall": statistics.median(w for w, _ in base),
        "base_cpu": statistics.median(c for _, c in base),
    }
    return med


def _cell(m: dict) -> str:
    return (
        f"{m['wall']:.0f} ms ({m['wall'] / m['base_wall']:.1f}×); "
        f"cpu {m['cpu']:.0f} ms ({m['cpu'] / m['base_cpu']:.1f}×)"
    )


def installed_bin(work: Path) -> Path:
    """A venv whose site-packages has a plain .pth (no editable finder) and pip-style scripts."""
    venv = work / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(site, "ctxtools-bench.pth").write_text(f"{ROOT}\n{ours}\n")
    for name, module in ENTRY.items():
        script = venv / "bin" / name
        script.write_text(PIP_SCRIPT.format(python=python, module=module))
        script.chmod(0o755)
    return venv / "bin"


def measure(label: str, bindir: Path, runs: int, inputs, env, only=()) -> list[str]:
    base_argv = [str(bindir / "python"), "-c", "pass"]
    out = [
        f"## {label}: median of {runs} runs, each beside a run of `python -c pass`; "
        "(×) = the ratio to it",
        "",
        "| command | --help | --heuristic, 1 KB | exact cl100k, 1 KB | python -c pass |",
        "|---|---|---|---|---|",
    ]
    for name, (exact, heur, stdin) in cases(inputs).items():
        if only and name not in only:
            continue
        exe = str(bindir / name)
        for args in (exact, heur):  # fill the rank cache first
            _once([exe, *args], stdin, env)
        h = timed([exe, "--help"], runs, None, env, base_argv)
        he = timed([exe, *heur], runs, stdin, env, base_argv)
        ex = timed([exe, *exact], runs, stdin, env, base_argv)
        base = statistics.median([h["base_wall"], he["base_wall"], ex["base_wall"]])
        if name == "ctx-stash":  # no ruler: the row times storing the 1 KB
            cells = [_cell(h), "stash: " + _cell(he), "—"]
        else:
            cells = [_cell(h), _cell(he), _cell(ex)]
        out.append(f"| {name} | " + " | ".join(cells) + f" | {base:.0f} ms |")
        print(out[-1], file=sys.stderr, flush=True)
    if not only or "ctx-pack" in only:
        h = timed([str(bindir / "ctx-pack"), "--help"], runs, None, env, base_argv)
        out.append(f"| ctx-pack | {_cell(h)} | — | — | {h['base_wall']:.0f} ms |")
    return out


def import_profile(bindir: Path, inputs, env, runs: int = 15) -> list[str]:
    """``python -X importtime`` of a heuristic ctx-count of 1 KB: per module imported at the
    top level, the smallest cumulative time over RUNS runs (the least disturbed by load)."""
    code = (
        "import re, sys; from ctxtools.cli.count_fast import main; "
        "sys.argv = ['ctx-count', '--heuristic']; main()"
    )
    best: dict[str, int] = {}
    order: list[str] = []
    for _ in range(runs):
        with open(inputs["text"], "rb") as fh:
            err = subprocess.run(
                [str(bindir / "python"), "-X", "importtime", "-c", code],
                stdin=fh,
                capture_output=True,
                env=env,
                text=True,
            ).stderr
        for line in err.splitlines():
            parts = line.split("|")
            if len(parts) != 3 or not parts[1].strip().isdigit():
                continue  # the header, or another line on stderr
            name = parts[2].rstrip()
            if name.startswith("  ") or not name.strip():  # only what the top level imports
                continue
            name = name.strip()
            if name not in best:
                order.append(name)
            best[name] = min(best.get(name, 1 << 60), int(parts[1]))
    rows = [f"{best[n] / 1000:5.1f} ms  {n}" for n in order if best[n] >= 300]
    total = sum(best.values()) / 1000
    return [f"imports of `ctx-count --heuristic` (min of {runs}; {total:.1f} ms in all):", *rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--only", choices=["dev", "installed"], default=None)
    ap.add_argument("--command", action="append", default=[], help="only this one (repeatable)")
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "ctxtools")], check=True)
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="ctx-startup-") as tmp:
        work = Path(tmp)
        inputs = make_inputs(work)
        env = dict(os.environ, CTX_STORE=str(work / "store"), NO_COLOR="1")
        for var in ("CTX_MODEL", "CTX_ENCODING", "CTX_PROFILES", "CTX_SESSION"):
            env.pop(var, None)
        report = []
        if args.only in (None, "installed"):
            bindir = installed_bin(work)
            report += measure("installed", bindir, args.runs, inputs, env, args.command)
            report += ["", *import_profile(bindir, inputs, env), ""]
        if args.only in (None, "dev"):
            report += measure(
                "dev (editable)", Path(sys.executable).parent, args.runs, inputs, env, args.command
            )
        print("\n".join(report))
        print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
