"""The stdio wire in front of the SDK: every line a client sends gets an answer.

The SDK's stdio transport hands a line it cannot read as a JSON-RPC message to the session
as an exception, which answers nothing: a client that sent ``garbage``, ``{}``, ``[]``, a
``"jsonrpc": "1.0"`` or a request holding a lone surrogate (``"\\ud800"``, valid JSON that
the SDK's parser refuses) waited for ever. JSON-RPC 2.0 wants an answer to each: here
every line is judged before the SDK sees it (``judge``):

* not JSON: a -32700 parse error (id null);
* JSON, but not a message -- not an object, an empty batch, a bad ``jsonrpc``, no
  ``method``: a -32600 invalid request, with the request's id when it has a usable one;
  a batch (which MCP no longer has) gets one such answer per element;
* a request whose strings hold lone surrogates: they become U+FFFD, and it goes on;
* a notification (no id) or a response that cannot be read: logged, as no answer may go.

The answers go to stdout under the same lock as the SDK's own lines, so no line is torn.
Standard input and output are served from private duplicates while fd 0 reads the null
device and fd 1 writes to stderr, so a tool's child process cannot read the client's
requests or corrupt the protocol with stray output.

A write to stdout that the system refuses (the client went away: EPIPE; a full disk) is
``ClientGone``: the server ends at once, without waiting for stdin, and ``server.serve``
turns it into the one-line exit every command makes of a failing stdout.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import anyio

log = logging.getLogger("ctx-mcp")

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


@dataclass(frozen=True)
class Verdict:
    """What to do with a line: pass LINE on to the SDK (None: nothing), write REPLY (a
    JSON text, None: nothing), and why nothing was answered (LOGGED)."""

    line: str | None = None
    reply: str | None = None
    logged: str | None = None


def _error(code: int, message: str, ident: Any = None) -> dict:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def _usable_id(obj: Any) -> Any:
    """OBJ's id when JSON-RPC allows it (a string or a whole number), else None."""
    ident = obj.get("id") if isinstance(obj, dict) else None
    if isinstance(ident, bool) or not isinstance(ident, str | int):
        return None
    return ident


def _without_lone_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)  # (a valid pair is one character)
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    return value


def _sdk_reads(line: str) -> bool:
    import mcp.types as types

    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception:
        return False
    return True


def _invalid(obj: dict) -> str | None:
    """Why the object OBJ is no JSON-RPC 2.0 request or notification (None: it is one)."""
    if obj.get("jsonrpc") != "2.0":
        return 'invalid request: "jsonrpc" must be "2.0"'
    if "id" in obj and _usable_id(obj) is None and obj["id"] is not None:
        return 'invalid request: "id" must be a string or a whole number'
    if "method" not in obj:
        return 'invalid request: no "method"'
    if not isinstance(obj["method"], str):
        return 'invalid request: "method" must be a string'
    if "params" in obj and not isinstance(obj["params"], dict | list):
        return 'invalid request: "params" must be an object or an array'
    return None


def judge(line: str) -> Verdict:
    """What the server does with LINE, one line of its standard input."""
    if not line.strip():
        return Verdict()
    try:
        obj = json.loads(line)
    except RecursionError:  # JSON, maybe, but no request nests a thousand levels deep
        why = "invalid request: nested too deeply"
        return Verdict(reply=json.dumps(_error(INVALID_REQUEST, why)))
    except ValueError as exc:
        where = f" at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        return Verdict(reply=json.dumps(_error(PARSE_ERROR, f"parse error{where}")))
    bad_id = isinstance(obj, dict) and obj.get("id") is not None and _usable_id(obj) is None
    if not bad_id and _sdk_reads(line):  # (the SDK would take true for the id 1)
        return Verdict(line=line)
    if isinstance(obj, list):
        if not obj:
            empty = _error(INVALID_REQUEST, "invalid request: empty batch")
            return Verdict(reply=json.dumps(empty))
        why = "invalid request: batches are not part of MCP; send one message a line"
        return Verdict(reply=json.dumps([_error(INVALID_REQUEST, why, _usable_id(o)) for o in obj]))
    if not isinstance(obj, dict):
        return Verdict(
            reply=json.dumps(_error(INVALID_REQUEST, "invalid request: not a JSON object"))
        )
    fixed = _without_lone_surrogates(obj)
    if fixed != obj and not bad_id:
        again = json.dumps(fixed, ensure_ascii=False)
        if _sdk_reads(again):
            return Verdict(line=again)
    if ("result" in obj or "error" in obj) and "method" not in obj and "id" in obj:
        return Verdict(logged=f"a response that cannot be read: {line[:200]!r}")
    why = _invalid(obj)
    if why is None and "id" not in obj:  # a notification: no answer may go
        return Verdict(logged=f"a notification that cannot be read: {line[:200]!r}")
    why = why or "invalid request"
    return Verdict(reply=json.dumps(_error(INVALID_REQUEST, why, _usable_id(obj))))


class ClientGone(Exception):
    """Stdout refused a write: ERROR, the OSError (BrokenPipeError: the client closed its
    end)."""

    def __init__(self, error: OSError):
        super().__init__(str(error))
        self.error = error


class LockedWriter:
    """The SDK's stdout, one whole line at a time (the SDK's lines and the wire's
    answers share it); a refused write is ``ClientGone``."""

    def __init__(self, out: Any):
        self.out = out
        self.lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self.lock:
            try:
                await self.out.write(text)
                await self.out.flush()
            except OSError as exc:
                raise ClientGone(exc) from exc

    async def flush(self) -> None:
        return None


class JudgedLines:
    """The lines of IN_ the SDK can read, as an async iterable; the others answered on
    WRITER (or logged) as they come."""

    def __init__(self, in_: Any, writer: LockedWriter):
        self.in_ = in_
        self.writer = writer

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        # each line read in a thread the server need not wait for when it ends before EOF
        # (stdout gone): nothing interrupts a read of stdin
        readline = getattr(self.in_, "wrapped", self.in_).readline
        while raw := await anyio.to_thread.run_sync(readline, abandon_on_cancel=True):
            verdict = judge(raw)
            if verdict.reply is not None:
                await self.writer.write(verdict.reply + "\n")
            if verdict.logged is not None:
                log.warning("%s", verdict.logged)
            if verdict.line is not None:
                yield verdict.line


_KEPT: list[Any] = []  # the stdin files served (private_stdio)


@contextlib.contextmanager
def private_stdio() -> Iterator[tuple[Any, Any]]:
    """Text files on private duplicates of fds 0 and 1 (UTF-8; an undecodable byte read
    as U+FFFD), while fd 0 reads the null device and fd 1 writes to stderr; both are put
    back on the way out. Where a descriptor cannot be moved, the file is served as is."""
    saved: list[tuple[int, int]] = []
    files = []
    try:
        for fd, mode in ((0, "rb"), (1, "wb")):
            private = os.dup(fd)
            try:
                diversion = os.open(os.devnull, os.O_RDONLY) if fd == 0 else os.dup(2)
                os.dup2(diversion, fd)
                os.close(diversion)
                saved.append((fd, private))
                binary = os.fdopen(private, mode, closefd=False)
            except OSError:
                os.close(private)
                binary = (sys.stdin if fd == 0 else sys.stdout).buffer
            import io

            files.append(io.TextIOWrapper(binary, encoding="utf-8", errors="replace"))
        yield anyio.wrap_file(files[0]), anyio.wrap_file(files[1])
    finally:
        # stdin's file is left as it is (and kept, so that no collection closes a buffer
        # under it): an abandoned read of it may hold its lock for ever (JudgedLines)
        _KEPT.extend(files[:1])
        for f in files[1:]:
            with contextlib.suppress(Exception):
                f.flush()
            with contextlib.suppress(ValueError, OSError):  # (OSError: stdout failing)
                f.detach()
        for fd, private in saved:
            with contextlib.suppress(OSError):
                os.dup2(private, fd)
            # the private descriptor stays open: a reader thread may still be in it
