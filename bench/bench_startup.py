#!/usr/bin/env python3
"""Start-up time of every command (issue 10). Run by hand; figures go in the issue note.

    .venv/bin/python bench/bench_startup.py [--runs 20] [--only dev|installed]

For each console script: the median wall time over RUNS of ``--help``, of a run with
``--heuristic`` on a 1 KB input, and of the same run counted exactly with cl100k_base,
against ``python -c pass`` of the same interpreter (the ratio is the issue's measure); and
the median CPU time (user + system) of each, which other processes on a busy machine
disturb less than the wall time.

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


def median_ms(argv: list[str], runs: int, stdin: Path | None, env: dict) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of ARGV, in ms."""
    walls, cpus = [], []
    for _ in range(runs):
        with open(stdin or os.devnull, "rb") as fh:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            p = subprocess.run(
                argv, stdin=fh, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
            )
            walls.append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if p.returncode != 0:
            sys.exit(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.decode()[:300]}")
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def _cell(ms: tuple[float, float], base: tuple[float, float]) -> str:
    return f"{ms[0]:.0f} ms ({ms[0] / base[0]:.1f}×), cpu {ms[1]:.0f} ({ms[1] / base[1]:.1f}×)"


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


def measure(label: str, bindir: Path, runs: int, inputs, env) -> list[str]:
    python = str(bindir / "python")
    base = median_ms([python, "-c", "pass"], runs, None, env)
    out = [
        f"## {label}: python -c pass {base[0]:.1f} ms, cpu {base[1]:.1f} ms (medians of {runs})",
        "",
        "| command | --help | --heuristic, 1 KB | exact cl100k, 1 KB |",
        "|---|---|---|---|",
    ]
    for name, (exact, heur, stdin) in cases(inputs).items():
        exe = str(bindir / name)
        for args in (exact, heur):  # fill the rank cache first
            median_ms([exe, *args], 1, stdin, env)
        h = median_ms([exe, "--help"], runs, None, env)
        he = median_ms([exe, *heur], runs, stdin, env)
        ex = median_ms([exe, *exact], runs, stdin, env)
        if name == "ctx-stash":  # no ruler: the row times storing the 1 KB
            cells = [_cell(h, base), "stash: " + _cell(he, base), "—"]
        else:
            cells = [_cell(h, base), _cell(he, base), _cell(ex, base)]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
        print(out[-1], file=sys.stderr, flush=True)
    h = median_ms([str(bindir / "ctx-pack"), "--help"], runs, None, env)
    out.append(f"| ctx-pack (being built) | {_cell(h, base)} | — | — |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--only", choices=["dev", "installed"], default=None)
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
            report += measure("installed", installed_bin(work), args.runs, inputs, env)
            report.append("")
        if args.only in (None, "dev"):
            report += measure("dev (editable)", Path(sys.executable).parent, args.runs, inputs, env)
        print("\n".join(report))
        print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
