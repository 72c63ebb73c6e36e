#!/usr/bin/env python3
"""Regenerate the sample outputs in README.md from real runs on fixed data.

    python tools/readme_samples.py           # rewrite the sample blocks of README.md
    python tools/readme_samples.py --check   # exit 1 when a block is not what a run prints

A sample block sits between two marker comments; the first names the command, run from
the repository's root on data under tests/data/ (tests/data/readme_sample/, a small
repository in three languages that no code change touches), so that a sample changes
only when what the command prints changes::

    <!-- readme-sample: ctx-repomap tests/data/readme_sample --tokens 150 -->
    ...replaced by the command line and its output, in a fenced block...
    <!-- /readme-sample -->

Only the project's own commands run (those in pyproject.toml's [project.scripts]), each
with a fresh empty store and no CTX_* settings from the environment. Adding a sample is
adding the two markers and running this script; tests/lib/test_repomap_readme.py fails when
the README and the runs disagree.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BLOCK = re.compile(
    r"(?P<open><!-- readme-sample: (?P<cmd>[^\n]*?) -->\n)"
    r"(?P<body>.*?)"
    r"(?P<close><!-- /readme-sample -->)",
    re.S,
)


class SampleError(Exception):
    """A marker names something that cannot be run, or the run failed."""


def console_scripts() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(data["project"]["scripts"])


def run_sample(cmd: str) -> str:
    """What CMD (one of the project's commands) prints on stdout, run from the root."""
    argv = shlex.split(cmd)
    scripts = console_scripts()
    if not argv or argv[0] not in scripts:
        raise SampleError(f"readme-sample: {cmd!r} is not one of {', '.join(sorted(scripts))}")
    module, _, attr = scripts[argv[0]].partition(":")
    code = f"import sys; sys.argv[0] = {argv[0]!r}; from {module} import {attr}; {attr}()"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update(NO_COLOR="1", PYTHONHASHSEED="0", LC_ALL="C.UTF-8")
    with tempfile.TemporaryDirectory(prefix="readme-sample-") as store:
        env["CTX_STORE"] = store
        proc = subprocess.run(
            [sys.executable, "-c", code, *argv[1:]],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise SampleError(f"readme-sample: {cmd!r} exited {proc.returncode}: {err}")
    return proc.stdout.decode("utf-8", "replace")


def render(text: str) -> str:
    """TEXT (a README) with every sample block replaced by its command's output."""

    def block(m: re.Match) -> str:
        cmd = m.group("cmd").strip()
        out = run_sample(cmd)
        if not out.endswith("\n"):
            out += "\n"
        return f"{m.group('open')}```\n$ {cmd}\n{out}```\n{m.group('close')}"

    return BLOCK.sub(block, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if README.md is stale")
    args = ap.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    try:
        fresh = render(text)
    except SampleError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.check:
        if fresh != text:
            print(
                "README.md: sample outputs are stale (run tools/readme_samples.py)", file=sys.stderr
            )
            return 1
        return 0
    if fresh != text:
        README.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
