"""Vectors from an external command (``--embed-cmd``), for instance a wrapper around the
``llm embed`` tool.

The protocol: the command gets one JSON string a line on stdin (the texts) and must write
one JSON array of numbers a line on stdout, in the same order, all of one dimension, and
exit 0 within the timeout. It runs without a shell, in its own process group, killed
whole when it overruns. Anything else is an ``EmbedCommandError`` saying what went
wrong; the ranking then falls back to the default method and says so.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence

from ctxtools.errors import CtxError

DEFAULT_TIMEOUT = 60.0
MAX_DIMS = 65536


class EmbedCommandError(CtxError):
    """The embedding command failed: did not start, timed out, exited non-zero, or wrote
    something that is not one vector a text of one dimension."""


def parse_embed_command(command: str) -> list[str]:
    """The ``--embed-cmd`` command as an argv (UsageError for bad quoting, or none)."""
    from ctxtools.runner import parse_argv

    return parse_argv(command, "--embed-cmd")


def embed_texts(
    argv: list[str], texts: Sequence[str], timeout: float = DEFAULT_TIMEOUT
) -> list[array]:
    """Unit vectors of TEXTS from the command ARGV (see the module's protocol)."""
    import orjson

    from ctxtools.runner import run_text

    payload = "".join(orjson.dumps(t).decode("utf-8") + "\n" for t in texts)
    cap = (64 << 20) + len(texts) * MAX_DIMS * 8
    out = run_text(argv, payload, timeout=timeout, cap=cap)
    name = argv[0]
    if not out.ok:
        raise EmbedCommandError(f"--embed-cmd {name}: {out.reason}")
    lines = [x for x in out.output.split("\n") if x.strip()]
    if len(lines) != len(texts):
        raise EmbedCommandError(
            f"--embed-cmd {name}: {len(lines)} vector line(s) for {len(texts)} text(s)"
        )
    vectors: list[array] = []
    dims = None
    for k, line in enumerate(lines, 1):
        try:
            vec = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise EmbedCommandError(
                f"--embed-cmd {name}: line {k} is not JSON ({line[:40]!r})"
            ) from None
        ok = isinstance(vec, list) and 0 < len(vec) <= MAX_DIMS
        if ok:
            ok = all(
                isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                for x in vec
            )
        if not ok:
            raise EmbedCommandError(
                f"--embed-cmd {name}: line {k} is not an array of finite numbers"
            )
        if dims is None:
            dims = len(vec)
        elif len(vec) != dims:
            raise EmbedCommandError(
                f"--embed-cmd {name}: line {k} has {len(vec)} dimensions, line 1 has {dims}"
            )
        norm = math.sqrt(math.fsum(x * x for x in vec))
        vectors.append(array("f", [x / norm for x in vec] if norm > 0 else vec))
    return vectors
