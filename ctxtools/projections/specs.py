"""The arguments of the line and character projections: ``--range X-Y`` and ``--slice A:B``."""

from __future__ import annotations

import re

from ctxtools.errors import UsageError


def parse_range(spec: str) -> tuple[int, int | None]:
    """``X-Y`` (1-based, closed) or ``X-`` (to the end) -> (X, Y or None)."""
    m = re.fullmatch(r"\s*(\d+)\s*-\s*(\d*)\s*", spec or "")
    if not m:
        m1 = re.fullmatch(r"\s*(\d+)\s*", spec or "")
        if m1:  # a single line
            n = int(m1.group(1))
            m = None
            first, last = n, n
        else:
            raise UsageError(
                f"--range {spec!r}: expected X-Y (1-based line numbers) or X- (to the end)"
            )
    else:
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else None
    if first < 1:
        raise UsageError(f"--range {spec}: line numbers start at 1")
    if last is not None and last < first:
        raise UsageError(f"--range {spec}: the end ({last}) is before the start ({first})")
    return first, last


def parse_slice(spec: str) -> tuple[int | None, int | None]:
    """``A:B`` with either side optional and negatives allowed -> (A, B)."""
    m = re.fullmatch(r"\s*(-?\d+)?\s*:\s*(-?\d+)?\s*", spec or "")
    if not m:
        raise UsageError(f"--slice {spec!r}: expected A:B (zero-based, half-open, e.g. 0:200)")
    a = int(m.group(1)) if m.group(1) is not None else None
    b = int(m.group(2)) if m.group(2) is not None else None
    if a is not None and b is not None and (a < 0) == (b < 0) and b < a:
        # Both counted from the same end: the slice is empty whatever the payload, a typo
        # (as ``--range 9-2`` is). Mixed signs depend on the length: resolved on the payload.
        raise UsageError(f"--slice {spec}: the end ({b}) is before the start ({a})")
    return a, b


def resolve_slice(a: int | None, b: int | None, total: int) -> tuple[int, int]:
    """Python slice semantics: negatives count from the end, everything clamped."""
    start, stop, _ = slice(a, b).indices(total)
    return start, max(start, stop)
