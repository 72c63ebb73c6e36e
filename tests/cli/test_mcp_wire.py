"""ctx-mcp as a real process, fed raw lines: every line gets the answer JSON-RPC 2.0 asks
for, and arguments out of the schema's bounds are a tool error naming the argument, never
"internal error" (issue 27, item 12)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).parent / "ctx-mcp")
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


class Raw:
    """A ctx-mcp process spoken to a line at a time."""

    def __init__(self, root: Path, store: Path):
        env = {**os.environ, "CTX_STORE": str(store), "NO_COLOR": "1"}
        self.proc = subprocess.Popen(
            [EXE, "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.buf = b""
        self.send(json.dumps(INIT))
        assert self.reply()["id"] == 0
        self.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: str) -> None:
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 60.0):
        """The next line the server writes, parsed; None when none comes in TIMEOUT."""
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, ident: int, tool: str, args: dict) -> dict:
        self.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "method": "tools/call",
                    "params": {"name": tool, "arguments": args},
                }
            )
        )
        got = self.reply()
        assert got is not None and got["id"] == ident, got
        return got["result"]

    def close(self) -> str:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        err = self.proc.stderr.read().decode()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return err


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    """One server for the module (each start costs seconds); every test leaves it serving."""
    base = tmp_path_factory.mktemp("wire")
    root = base / "repo"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n")
    server = Raw(root, base / "store")
    yield server
    assert "Traceback" not in server.close()


def test_every_malformed_line_gets_its_json_rpc_error(raw):
    cases = [
        ("garbage", -32700, None),
        ('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"', -32700, None),
        ("{}", -32600, None),
        ('"just a string"', -32600, None),
        ("[]", -32600, None),
        ('{"jsonrpc": "1.0", "id": 5, "method": "tools/list"}', -32600, 5),
        ('{"id": "x", "method": "tools/list"}', -32600, "x"),
        ('{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', -32600, None),
        ('{"jsonrpc": "2.0", "method": 1, "params": "bar"}', -32600, None),
        ('{"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": 3}', -32600, 6),
        ("[" * 5000 + "]" * 5000, -32600, None),
        ("\udcff{", -32700, None),  # a byte that is not UTF-8, then no JSON
    ]
    for line, code, ident in cases:
        raw.send(line)
        got = raw.reply()
        assert got is not None, f"no answer to {line!r}"  # was: none, ever
        assert got["jsonrpc"] == "2.0" and got["error"]["code"] == code, (line, got)
        assert got["id"] == ident, (line, got)
    raw.send('[{"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, 3]')
    batch = raw.reply()
    assert [(e["id"], e["error"]["code"]) for e in batch] == [(7, -32600), (None, -32600)]
    # the server still serves, in order
    raw.send('{"jsonrpc": "2.0", "id": 8, "method": "tools/list"}')
    assert raw.reply()["id"] == 8


def test_a_notification_or_a_response_is_never_answered(raw):
    raw.send('{"jsonrpc": "2.0", "method": "notifications/unknown", "params": {"x": 1}}')
    raw.send('{"jsonrpc": "2.0", "id": 99, "result": {}}')
    raw.send('{"jsonrpc": "2.0", "id": 9, "method": "tools/list"}')
    assert raw.reply()["id"] == 9  # the next line out answers the request


def test_a_request_holding_a_lone_surrogate_gets_a_reply(raw):
    line = (
        '{"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "count", '
        '"arguments": {"text": "a\\ud800b"}}}'
    )
    raw.send(line)
    got = raw.reply()
    assert got is not None and got["id"] == 10  # was: no reply at all
    result = got["result"]
    assert not result.get("isError"), result
    assert json.loads(result["content"][0]["text"])["total"]["chars"] == 3  # a, U+FFFD, b


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("count", {"text": "ab", "limit": 10**20}, "argument 'limit' must be at most"),
        ("count", {"text": "ab", "limit": 0}, "argument 'limit' must be at least 1"),
        (
            "compact",
            {"transcript": [{"role": "user", "content": "hi"}], "limit": 1e20},
            "argument 'limit' must be a whole number",
        ),
        (
            "compact",
            {"transcript": [{"role": "user", "content": "hi"}], "limit": 10**20},
            "argument 'limit' must be at most",
        ),
        (
            "compact",
            {"transcript": [{"role": "user", "content": "hi"}], "at": 1e308},
            "argument 'at' must be at most 100",
        ),
        (
            "compact",
            {"transcript": [{"role": "user", "content": "hi"}], "at": 5},
            "argument 'at' must be above 5",
        ),
        ("pack", {"task": "fix f", "changed": "\u0000"}, "argument 'changed' must not hold a NUL"),
        ("pack", {"task": "fix f", "paths": ["a\u0000.py"]}, "argument 'paths' must not hold"),
        ("read", {"ref": "x", "head": 10**30}, "argument 'head' must be at most"),
        ("repomap", {"tokens": 10**19}, "argument 'tokens' must be at most"),
    ],
)
def test_arguments_out_of_bounds_are_a_tool_error_naming_the_argument(raw, tool, args, expected):
    result = raw.call(11, tool, args)
    assert result["isError"] is True
    message = result["content"][0]["text"]
    assert expected in message and "internal error" not in message, message
    assert message.count("\n") == 0


def test_the_bounds_are_in_the_listed_schemas(raw):
    raw.send('{"jsonrpc": "2.0", "id": 12, "method": "tools/list"}')
    tools = {t["name"]: t["inputSchema"]["properties"] for t in raw.reply()["result"]["tools"]}
    assert tools["count"]["limit"]["maximum"] == 1_000_000_000
    assert tools["compact"]["at"]["maximum"] == 100
    assert tools["compact"]["at"]["exclusiveMinimum"] == 5
    assert tools["read"]["head"]["maximum"] == 1_000_000_000
