"""Writing JSON as ctx-compact writes it: compact, UTF-8, orjson's bytes (the json module's
for a transcript orjson could not read), in bounded extra memory.

orjson writes a str that is not ASCII through CPython's UTF-8 cache, which then stays in
the str for as long as it lives: writing a transcript's messages left a UTF-8 copy of
every such text in memory (29 MB more for 48 MiB of messages with a "✓" in each result).
Such a str is written from a copy here, freed once written. A list or an object holding
the messages is written a message at a time into one buffer, which is handed over
uncopied, and the newline after it is written in place: the bytes are orjson's of the
whole, byte for byte.
"""

from __future__ import annotations

import io
import json


def dumps(obj: object, stdjson: bool, newline: bool = False) -> bytes:
    """OBJ as compact JSON, then a newline when NEWLINE. STDJSON: by the json module."""
    if stdjson:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        return (text + "\n" if newline else text).encode("utf-8", "surrogatepass")
    import orjson

    return orjson.dumps(fresh(obj), option=orjson.OPT_APPEND_NEWLINE if newline else None)


def fresh(value: object) -> object:
    """VALUE with every str in it that is not ASCII copied (nothing else is)."""
    if isinstance(value, str):
        if value.isascii():
            return value
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
    if isinstance(value, dict):
        return {k: fresh(v) for k, v in value.items()}
    if isinstance(value, list):
        return [fresh(v) for v in value]
    return value


def dumps_lines(items: list, stdjson: bool) -> bytes:
    """ITEMS as JSON Lines: each value on its line."""
    out = io.BytesIO()  # (getvalue() hands its buffer over: no copy, as a join makes)
    for item in items:
        out.write(dumps(item, stdjson, True))
    return out.getvalue()


def dumps_with_list(doc: dict | None, key: str, items: list, stdjson: bool) -> bytes:
    """DOC with ITEMS at KEY (in KEY's place when DOC has it, else last), or ITEMS alone
    when DOC is None, as compact JSON and a newline: ``dumps`` of the whole, byte for
    byte, written an item at a time."""
    if stdjson:
        whole = items if doc is None else dict(doc, **{key: items})
        return dumps(whole, True, True)
    import orjson

    out = io.BytesIO()
    after = b""
    if doc is not None:
        keys = list(doc) if key in doc else [*doc, key]
        at = keys.index(key)
        out.write(_members(orjson, {k: doc[k] for k in keys[:at]}, b"{", b","))
        out.write(orjson.dumps(key) + b":")
        after = _members(orjson, {k: doc[k] for k in keys[at + 1 :]}, b",", b"") + b"}"
    out.write(b"[")
    for i, item in enumerate(items):
        if i:
            out.write(b",")
        out.write(orjson.dumps(fresh(item)))
    out.write(b"]" + after + b"\n")
    return out.getvalue()


def _members(orjson, part: dict, before: bytes, after: bytes) -> bytes:
    """PART's members as orjson writes them inside an object, between BEFORE and AFTER
    (the brace that opens the object, the comma to the next member); only BEFORE's brace
    when PART is empty."""
    if not part:
        return before if before == b"{" else b""
    return before + orjson.dumps(fresh(part))[1:-1] + after
