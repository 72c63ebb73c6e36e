#!/usr/bin/env python3
"""Unlucky task texts for ctx-pack's query reader (issue 17): time grows linearly.

    .venv/bin/python bench/bench_task_shapes.py [--sizes 250000,1000000]

For each shape, a task of about each size in characters is read by
``analyzer.parse_query`` in this process; a line gives the seconds, the rate and
what was found (terms, paths, frames, messages, tickets). Doubling the size should double the
time, never square it. Shapes:

  paths     absolute paths with line numbers (a pasted warning log): paths, frames and
            the reporter's directories, which are no terms
  winpaths  Windows paths with backslashes
  ticks     thousands of `code` spans
  quotes    thousands of quoted messages
  trace     a Python traceback repeated (frames, exception lines)
  words     plain English prose
  reports   an issue template's "Versions" section repeated (its release lines blanked)
  linelinks a code host's links to lines of files (each read as a path and a frame)
  slashes   one run of slashes, no words
  colons    one line of "a:" (the guard rule of imports reads such lines)
  word      one word, no space (issue 27: dotted names were quadratic in its length)
  pyword    one "word" of "a.py" repeated (the path.ext:N frame rule was quadratic)
  blanks    lines of spaces, what a blanked template or version report leaves (the
            line-anchored frame and exception rules opened with a blank-run pattern that crossed
            line breaks: quadratic, 67 KB of them took ctx-pack 8 s, 668 KB over 10 min)
  newlines  empty lines only
  tickets   ticket references of every form (#1234, gh-1234, KEY-1234, issue 1234), more
            than MAX_REFS of them: read, and none kept
  hashes    one run of "#", no digits
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

UNITS = {
    "paths": "/home/ann/venv/lib/python3.12/site-packages/pkg/mod{k}.py:{k}: FutureWarning x\n",
    "winpaths": "C:\\Users\\ann\\code\\pkg\\sub\\mod{k}.py:{k}: in f{k}\n",
    "ticks": "see `name_{k}` and `Other{k}.attr` here ",
    "quotes": "it says \"the value {k} is not valid here\" and 'another message {k} here' ",
    "trace": (
        'Traceback (most recent call last):\n  File "/srv/app/pkg/m{k}.py", line {k}, in run{k}\n'
        "    go()\nValueError: bad value {k} for the field\n"
    ),
    "words": "the model field name is used when the form saves the value of the thing {k} ",
    "reports": (
        "### Versions\n - pkg{k}: 1.{k}.0\n - Python 3.11.{k} (main, Mar 23 2023) [GCC 10]\n"
        "OS: Linux {k}\nThe cache breaks in run{k}.\n"
    ),
    "linelinks": "see https://github.com/o/r/blob/main/src/m{k}.py#L{k} and ",
    "blanks": "                    \n",
    "tickets": "see #{k}000 gh-{k}001 PROJ-{k} issue {k}002 and bpo-{k}003; ",
}
FLAT = {"slashes": "/", "colons": "a:", "word": "a", "pyword": "a.py", "newlines": "\n",
        "hashes": "#"}


def task(shape: str, size: int) -> str:
    if shape in FLAT:
        unit = FLAT[shape]
        return ("if " if shape == "colons" else "") + unit * (size // len(unit))
    unit = UNITS[shape]
    parts, n, k = [], 0, 0
    while n < size:
        piece = unit.format(k=k)
        parts.append(piece)
        n += len(piece)
        k += 1
    return "".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="250000,1000000")
    ap.add_argument("--shapes", default=",".join([*UNITS, *FLAT]))
    args = ap.parse_args()
    from ctxtools.analyzer import parse_query

    sizes = [int(x) for x in args.sizes.split(",")]
    for shape in args.shapes.split(","):
        for size in sizes:
            text = task(shape, size)
            t0 = time.perf_counter()
            q = parse_query(text)
            dt = time.perf_counter() - t0
            print(
                f"{shape:9s} {len(text):>9,} chars {dt:7.3f} s"
                f" {len(text) / max(dt, 1e-9) / 1e6:6.2f}"
                f" Mchar/s  terms {len(q.terms):>3} paths {len(q.paths):>6,}"
                f" frames {len(q.frames):>6,} messages {len(q.messages):>3} refs {len(q.refs):>2}"
            )


if __name__ == "__main__":
    main()
