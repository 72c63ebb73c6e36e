"""The ``--jsonpath`` projection: a payload read as JSON (or JSON Lines, as an array of its
lines' values) and the matches of a JSONPath query, one a line, in the output cap."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ctxtools.errors import InputError, UsageError
from ctxtools.projections.output import MAX_CHARS_DEFAULT, Next, Output
from ctxtools.projections.output import thousands as _n

if TYPE_CHECKING:
    from ctxtools.store import Payload


DEPTH_MAX = 1024  # the nesting orjson parses (deeper is valid JSON it refuses)


def _json_error(label: str, exc: Exception, line: int | None = None) -> InputError:
    msg = str(getattr(exc, "msg", None) or exc).split("\n", 1)[0]
    lineno = getattr(exc, "lineno", None)
    colno = getattr(exc, "colno", None)
    if line is not None:
        where = f" at line {line}"
    elif lineno is not None:
        where = f" at line {lineno}, column {colno}"
    else:
        where = ""
    if msg == "number is infinity when parsed as double":  # orjson: past a double's range
        return InputError(
            f"{label}: a number{where} is beyond what --jsonpath reads (an integer of up to "
            f"{_int_digits_max():,} digits or a double)"
        )
    if msg == "depth limit exceeded":  # orjson: valid JSON, nested past what it reads
        return InputError(
            f"{label}: the JSON nests more than {DEPTH_MAX:,} levels deep{where}, deeper than "
            "--jsonpath reads"
        )
    return InputError(f"{label} is not valid JSON{where}: {msg}")


def check_head(head: bytes, whole: bool, label: str = "stdin") -> None:
    """InputError when HEAD, the first bytes of an input (all of it when WHOLE), cannot be
    JSON or JSON Lines (``jsonbound.head_problem``); a whole input is left to the parser."""
    from ctxtools import jsonbound

    if not whole:
        problem = jsonbound.head_problem(head, False)
        if problem is not None:
            raise _json_error(label, problem)


def load_json(p: Payload) -> Any:
    """The payload as a JSON value; JSON Lines as an array of its lines' values (read a
    line at a time). A payload whose first bytes cannot be JSON fails at once, and one
    JSON document is parsed only up to ``jsonbound.JSON_DOCUMENT_MAX`` bytes. A stored
    payload that fails to parse is checked against its card's type first (an edited type
    is a damaged card, IntegrityError, not bad data)."""
    try:
        return _load_json(p)
    except InputError:
        p.check_type()  # a stored payload that is not what its card says: a damaged card
        raise


def _load_json(p: Payload) -> Any:
    import orjson

    from ctxtools import jsonbound

    kind = p.record.get("type")
    if kind == "jsonl":
        return _load_jsonl(p)
    if p.size > jsonbound.JSON_SNIFF_BYTES:
        head = p.pread(0, jsonbound.JSON_SNIFF_BYTES)
        check_head(head, False, p.label)
        if p.size > jsonbound.JSON_DOCUMENT_MAX:
            if kind != "json" and jsonbound.looks_like_lines(head):
                return _load_jsonl(p)  # refused there: as JSON Lines
            # (JSON Lines are held whole by --jsonpath too: not offered)
            raise jsonbound.too_big(
                p.label, jsonbound.JSON_DOCUMENT_MAX, hint="--grep or --range read any size"
            )
    data = b"".join(p.iter_bytes())
    if not data.strip():  # (orjson: "Input is a zero-length, empty document")
        raise InputError(f"{p.label} is empty: no JSON to query" if not data
                         else f"{p.label} holds only white space: no JSON to query")
    try:
        return _loads(data)
    except orjson.JSONDecodeError as exc:
        if kind != "json" and data.lstrip()[:1] in (b"{", b"["):
            try:
                return _load_jsonl(p)
            except InputError as lines_error:
                if exc.msg == "unexpected content after document":  # JSON Lines, then
                    raise lines_error from None
        raise _not_utf8(p.label, data) or _json_error(p.label, exc) from None


def _not_utf8(label: str, data: bytes, line: int | None = None) -> InputError | None:
    """The error of DATA when it is not UTF-8, at its first bad byte; else None. (orjson
    says "str is not valid UTF-8: surrogates not allowed" at line 1, column 1: the wrong
    place, in the words of how it decodes.) LINE: DATA is that line of JSON Lines."""
    what = "JSON Lines" if line is not None else "JSON"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = exc.start
        start = data.rfind(b"\n", 0, at) + 1
        if line is None:
            line = data.count(b"\n", 0, at) + 1
        return InputError(
            f"{label} is not valid {what}: the byte 0x{data[at]:02x} at line {line}, byte "
            f"{at - start + 1} is not UTF-8 (JSON text is UTF-8)",
            hint="--grep or --range read any bytes",
        )
    return None


def _load_jsonl(p: Payload) -> list[Any]:
    """The lines' values, a line at a time; refused past ``JSON_DOCUMENT_MAX`` bytes (the
    array is held whole: 3-4 times their size)."""
    import orjson

    from ctxtools import jsonbound

    limit = jsonbound.JSON_DOCUMENT_MAX
    if p.size > limit:
        raise InputError(
            f"{p.label}: JSON Lines over {jsonbound.size_text(limit)} are not queried with "
            "--jsonpath (the limit: the array is held whole)",
            hint="--grep or --range read any size",
        )
    out = []
    for i, raw in enumerate(p.iter_lines(), start=1):
        if not raw.strip():
            continue
        try:
            out.append(_loads(raw))
        except orjson.JSONDecodeError as exc:
            if exc.msg in ("number is infinity when parsed as double", "depth limit exceeded"):
                raise _json_error(p.label, exc, line=i) from None
            raise _not_utf8(p.label, raw, i) or InputError(
                f"{p.label} is not valid JSON Lines: line {i}: {str(exc.msg).splitlines()[0]}"
            ) from None
    return out


def _int_digits_max() -> int:
    """The most digits an integer is read with: the interpreter's limit (its conversion is
    quadratic past it), 4,300 unless set otherwise."""
    import sys

    return sys.get_int_max_str_digits() or 4300


def _loads(data: bytes) -> Any:
    """DATA read as JSON (orjson.JSONDecodeError when it is not): by orjson, but an integer
    past 64 bits exact. One of more than ``_int_digits_max()`` digits is left as it is,
    for orjson to refuse as past a double."""
    import orjson

    from ctxtools.jsonbound import long_int_spans

    spans = long_int_spans(data)
    if not spans:
        return orjson.loads(data)
    most = _int_digits_max()
    blanked = bytearray(data)
    for start, end in spans:
        if end - start - (data[start] == 0x2D) <= most:  # (0x2D: '-')
            blanked[start:end] = b"0".ljust(end - start)
    orjson.loads(blanked)  # its errors, at the same places
    import json
    import sys

    from ctxtools.jsonpath import STACK_FRAMES

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, STACK_FRAMES))  # orjson reads 1,024 levels
    try:
        return json.loads(data)
    finally:
        sys.setrecursionlimit(limit)


def _exact_ints(item: Any) -> Any:
    """ITEM with every integer orjson cannot write (past 64 bits) as its digits."""
    import orjson

    if isinstance(item, dict):
        return {k: _exact_ints(v) for k, v in item.items()}
    if isinstance(item, list):
        return [_exact_ints(v) for v in item]
    if type(item) is int and not -(2**63) <= item < 2**64:
        return orjson.Fragment(str(item))
    return item


def _dump_json(item: Any) -> str:
    """ITEM as compact JSON (orjson, an integer past 64 bits written whole; the standard
    library past orjson's 255 levels)."""
    import orjson

    try:
        return orjson.dumps(item, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        pass
    import json
    import sys

    from ctxtools.jsonpath import STACK_FRAMES

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, STACK_FRAMES))
    try:
        try:
            return orjson.dumps(_exact_ints(item), option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:
            pass  # past orjson's 255 levels
        return json.dumps(item, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise InputError(f"a match cannot be shown as JSON: {exc}") from None
    finally:
        sys.setrecursionlimit(limit)


def jsonpath_view(
    p: Payload,
    expr: str,
    *,
    dialect: str = "rfc9535",
    paths: bool = False,
    skip: int = 0,
    max_chars: int = MAX_CHARS_DEFAULT,
    nxt: Next | None = None,
) -> Output:
    """A JSON array of the matches of EXPR (their normalized paths with PATHS), one a line."""

    from ctxtools.jsonpath import compile_query, query

    nxt = nxt or Next(None)
    if skip < 0:
        raise UsageError(f"--skip {skip}: must be 0 or more")
    compile_query(expr, dialect)  # a bad query fails before the document is read
    doc = load_json(p)
    matches = query(doc, expr, dialect)
    items = [m.path if paths else m.value for m in matches][skip:]
    parts = ["["]
    used = 2
    shown = 0
    cut_first = False
    for item in items:
        s = _dump_json(item)
        piece = ("\n" if shown == 0 else ",\n") + s
        if used + len(piece) + 2 > max_chars:
            if shown == 0:
                parts.append(piece[: max(0, max_chars - used)])
                cut_first = True
            break
        parts.append(piece)
        used += len(piece)
        shown += 1
    out = Output()
    args = ["--jsonpath", expr] + (["--paths"] if paths else [])
    if dialect != "rfc9535":
        args += ["--dialect", dialect]
    if cut_first:
        out.body = "".join(parts) + "\n"
        out.trailer = (
            f"[ctx-read: cut at {_n(max_chars)} chars: match {skip + 1} of {_n(len(matches))} "
            f"alone is longer; narrow the query (e.g. a key or [0:10] below it), "
            f"next: {nxt.command(*args, '--skip', str(skip + 1))}]"
        )
        return out
    out.body = "".join(parts) + ("\n]\n" if shown else "]\n")
    if shown < len(items):
        out.trailer = (
            f"[ctx-read: cut at {_n(max_chars)} chars: showed matches {skip + 1}-{skip + shown} "
            f"of {_n(len(matches))}; next: {nxt.command(*args, '--skip', str(skip + shown))}]"
        )
    return out
    out.body = "".join(parts) + ("\n]\n" if shown else "]\n")
    if shown < len(items):
        args = ["--jsonpath", expr] + (["--paths"] if paths else [])
        if dialect != "rfc9535":
            args += ["--dialect", dialect]
        out.trailer = (
            f"[ctx-read: cut at {_n(max_chars)} chars: showed matches {skip + 1}-{skip + shown} "
            f"of {_n(len(matches))}; next: {nxt.command(*args, '--skip', str(skip + shown))}]"
        )
    return out


def json_examples(p: Payload, kind: str, nxt: Next, info: dict) -> list[str]:
    from ctxtools.store import JSON_PARSE_LIMIT

    if p.size > JSON_PARSE_LIMIT:
        return [nxt.command("--jsonpath", "$[0]" if kind == "jsonl" else "$.*")]
    try:
        doc = load_json(p)
    except InputError:
        return []
    out = []
    if isinstance(doc, dict):
        keys = sorted(doc) if len(doc) > 50 else list(doc)
        info["top_level_keys"] = keys[:50]
        if keys:
            k = keys[0]
            sel = f"$.{k}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) else f"$[{_q(k)}]"
            out.append(nxt.command("--jsonpath", sel))
        out.append(nxt.command("--jsonpath", "$.*", "--paths"))
    elif isinstance(doc, list):
        info["top_level_length"] = len(doc)
        out.append(nxt.command("--jsonpath", "$[0]"))
        first = doc[0] if doc else None
        if isinstance(first, dict) and first:
            keys = list(first)
            info["element_keys"] = keys[:50]
            k = next((k for k in keys if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k)), None)
            if k is not None:
                out.append(nxt.command("--jsonpath", f"$[*].{k}"))
                v = first[k]
                if isinstance(v, str | int | float) and not isinstance(v, bool):
                    lit = _q(v) if isinstance(v, str) else str(v)
                    out.append(nxt.command("--jsonpath", f"$[?@.{k} == {lit}]"))
        out.append(nxt.command("--jsonpath", "$[-1]"))
    return out


def _q(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"
