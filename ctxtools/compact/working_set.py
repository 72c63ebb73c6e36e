"""A working set given as JSON Lines, and which of its entries to evict (ctx-compact --evict).

One entry a line: ``{"id", "path", "last_accessed_at", "size_bytes", "access_count"?}``
(blank lines are skipped). ``parse_entries`` checks every line and says which one is
wrong; ``evict_lines`` runs a strategy of ``ctxtools.store.evict`` over them::

    ids = evict_lines(data, "lru", GcBudget(max_bytes=200 * 1024))
"""

from __future__ import annotations

from ctxtools.errors import InputError
from ctxtools.store.evict import GcBudget, evict

REQUIRED = ("id", "size_bytes", "last_accessed_at")
NUMBERS = ("size_bytes", "last_accessed_at", "access_count")
COUNTS = ("size_bytes", "access_count")  # never below 0


def head_error(problem) -> InputError:
    """The error for a working set whose first bytes are not JSON (``jsonbound``)."""
    return InputError(
        f"line {problem.lineno}: invalid JSON ({problem.msg}: line {problem.lineno} "
        f"column {problem.colno})"
    )


def parse_entries(data: bytes) -> list[dict]:
    """The entries of the JSON Lines DATA, as plain records for ``ctxtools.store.evict``.

    InputError, naming the line, for invalid JSON, a line that is not an object, a missing
    id / size_bytes / last_accessed_at, an id that is not a non-empty string or repeats
    an earlier one, or a size, time or count that is not a number (a size or count below
    0 too). A missing (or null)
    access_count is 0."""
    import orjson

    entries = []
    seen: set[str] = set()
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"line {n}: invalid JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise InputError(f"line {n}: not a JSON object")
        for key in REQUIRED:
            if key not in obj:
                raise InputError(f"line {n}: missing {key!r}")
        if not isinstance(obj["id"], str) or not obj["id"]:
            raise InputError(f'line {n}: "id" must be a non-empty string')
        for key in NUMBERS:
            value = obj.get(key)
            if (
                key in obj
                and value is not None
                and (isinstance(value, bool) or not isinstance(value, int | float))
            ):
                raise InputError(f"line {n}: {key!r} must be a number")
            if key in COUNTS and value is not None and value < 0:
                # a size or a count below 0 would make a set look smaller than it is
                raise InputError(f"line {n}: {key!r} must be 0 or more, not {value!r}")
        if obj["id"] in seen:
            raise InputError(f"line {n}: duplicate id {obj['id']!r}")
        seen.add(obj["id"])
        entries.append(
            {
                "id": obj["id"],
                "path": obj.get("path"),
                "last_accessed_at": obj["last_accessed_at"],
                "size_bytes": obj["size_bytes"],
                "access_count": obj.get("access_count") or 0,  # optional: 0 when unknown
            }
        )
    return entries


def evict_lines(data: bytes, strategy: str, budget: GcBudget) -> list[str]:
    """The ids to evict from the working set DATA, in order, so that the rest fits
    BUDGET (STRATEGY "lru" or "importance"; see ``ctxtools.store.evict``)."""
    return evict(strategy, parse_entries(data), budget)
