"""Every command fed random bytes and malformed JSON: a documented exit status and at most
a one-line error, never a traceback (issue 11). The inputs are generated from fixed seeds,
so a failure names an input that can be made again."""

from __future__ import annotations

import io
import json
import random

import pytest

SEED = 20261130
RUNS = 120  # inputs per command and kind; each run is in-process (a few ms)

# Exit statuses each command documents (ctx-count 3: a gate; ctx-compact 4: no headroom).
STATUSES = {
    "ctx-count": {0, 1, 2, 3},
    "ctx-stash": {0, 1, 2},
    "ctx-read": {0, 1, 2},
    "ctx-excerpt": {0, 1, 2},
    "ctx-compact": {0, 1, 2, 4},
    "ctx-repomap": {0, 1, 2},
    "ctx-pack": {0, 1, 2},
}


def random_bytes(rng: random.Random) -> bytes:
    """Bytes of an unlucky shape: noise, NUL runs, invalid UTF-8, CJK, long lines, digits."""
    kind = rng.randrange(8)
    n = rng.choice([0, 1, 7, 100, 4096, 70_000])
    if kind == 0:
        return rng.randbytes(n)
    if kind == 1:
        return b"\0" * n
    if kind == 2:
        return bytes(rng.choice([0x80, 0xC3, 0xE2, 0xF0, 0xFF, 0x41, 0x0A]) for _ in range(n))
    if kind == 3:
        return "".join(rng.choice("漢字かなカナ한국어\n ") for _ in range(n)).encode()
    if kind == 4:
        return b"x" * n + b"\n" + b"y" * n
    if kind == 5:
        return "\n".join(str(i) for i in range(n // 4)).encode()
    if kind == 6:
        return b"\xef\xbb\xbf" + rng.randbytes(n)
    return "".join(rng.choice('{}[]",:0123456789truefalsnl\\u ') for _ in range(n)).encode()


def _deep(depth: int, open_: str, close: str, inner: str = "1") -> str:
    return open_ * depth + inner + close * depth


def malformed_json(rng: random.Random) -> bytes:
    """JSON documents that parse badly or parse into the wrong shape."""
    message = {"role": "user", "content": "fix the bug in parse_header"}
    valid = json.dumps([{"role": "system", "content": "be brief"}, message])
    choices = [
        lambda: valid[: rng.randrange(len(valid))],  # truncated
        lambda: _deep(rng.choice([100, 1000, 5000]), "[", "]"),
        lambda: _deep(rng.choice([100, 1000, 5000]), '{"a":', "}"),
        lambda: '{"messages": ' + _deep(600, "[", "]") + "}",
        lambda: '[{"role": "user", "content": 1e999}]',
        lambda: '[{"role": "user", "content": NaN}]',
        lambda: '[{"role": "user", "content": "\\ud800"}]',
        lambda: json.dumps([{"role": rng.choice([None, 1, [], "tool", "assistant"])}]),
        lambda: json.dumps({"messages": [{"role": "tool", "tool_call_id": "x"}]}),
        lambda: json.dumps([{"role": "user", "content": [{"type": "tool_result"}]}]),
        lambda: json.dumps([{"role": "assistant", "tool_calls": [{"id": 1}]}, message]),
        lambda: json.dumps({"kind": "handle", "name": "../x", "sha256": "../../etc"}),
        lambda: json.dumps({"kind": "handle", "session_id": "default", "name": "n"}),
        lambda: "\n".join(json.dumps(message) for _ in range(3)) + "\n{broken",
        lambda: json.dumps([]),
        lambda: json.dumps({}),
        lambda: json.dumps("just a string"),
        lambda: "\ufeff" + valid,
        lambda: valid.replace('"user"', '"us\\u0000er"'),
    ]
    return rng.choice(choices)().encode("utf-8", "surrogatepass")


def stdin_of(data: bytes):
    return io.TextIOWrapper(io.BytesIO(data))


def check(result, name: str, what: str) -> None:
    assert "Traceback" not in result.stderr, f"{name} on {what}:\n{result.stderr[-2000:]}"
    assert result.returncode in STATUSES[name], (
        f"{name} on {what}: exit {result.returncode}\n{result.stderr[-500:]}"
    )
    if result.returncode not in (0, 3, 4):
        lines = [x for x in result.stderr.splitlines() if x.strip()]
        assert lines, f"{name} on {what}: failed without a word"


STDIN_CALLS = {
    "ctx-count": [
        ["ctx-count"],
        ["ctx-count", "--heuristic", "--json"],
        ["ctx-count", "--messages"],
    ],
    "ctx-stash": [["ctx-stash", "--name", "fuzz"], ["ctx-stash", "--always", "--type", "json"]],
    "ctx-read": [
        ["ctx-read", "--grep", "a+b|[0-9]{3}", "-C", "1"],
        ["ctx-read", "--jsonpath", "$..content"],
        ["ctx-read", "--head", "3"],
        ["ctx-read", "--count"],
    ],
    "ctx-excerpt": [["ctx-excerpt", "-q", "parse header"], ["ctx-excerpt", "--signatures"]],
    "ctx-compact": [["ctx-compact", "--limit", "3000"], ["ctx-compact", "--repair"]],
}


@pytest.mark.script_launch_mode("inprocess")
@pytest.mark.parametrize("name", sorted(STDIN_CALLS))
def test_random_bytes_on_stdin(script_runner, name):
    rng = random.Random(f"{SEED}-{name}-bytes")
    calls = STDIN_CALLS[name]
    for i in range(RUNS):
        data = random_bytes(rng)
        args = calls[i % len(calls)]
        check(script_runner.run(args, stdin=stdin_of(data)), name, f"bytes #{i} {args}")


@pytest.mark.script_launch_mode("inprocess")
@pytest.mark.parametrize("name", sorted(STDIN_CALLS))
def test_malformed_json_on_stdin(script_runner, name):
    rng = random.Random(f"{SEED}-{name}-json")
    calls = STDIN_CALLS[name]
    for i in range(RUNS):
        data = malformed_json(rng)
        args = calls[i % len(calls)]
        check(script_runner.run(args, stdin=stdin_of(data)), name, f"json #{i} {args}")


SUFFIXES = [".py", ".go", ".js", ".ts", ".rs", ".java", ".md", ""]


@pytest.mark.script_launch_mode("inprocess")
@pytest.mark.parametrize("name", ["ctx-repomap", "ctx-pack"])
def test_random_files_in_a_tree(script_runner, tmp_path, monkeypatch, name):
    """Trees of random files (every scanner's language, instruction files, bytes and bad
    JSON): the map and the pack are built or refused in one line, never a traceback."""
    rng = random.Random(f"{SEED}-{name}-tree")
    monkeypatch.chdir(tmp_path)
    for i in range(RUNS // 4):
        root = tmp_path / f"t{i}"
        root.mkdir()
        for k in range(rng.randrange(1, 6)):
            data = random_bytes(rng) if rng.random() < 0.7 else malformed_json(rng)
            (root / f"f{k}{rng.choice(SUFFIXES)}").write_bytes(data)
        if rng.random() < 0.3:
            (root / "AGENTS.md").write_bytes(b"---\npaths: [\n" + random_bytes(rng))
        if name == "ctx-repomap":
            args = ["ctx-repomap", str(root), "--tokens", str(rng.choice([50, 200, 1000]))]
        else:
            task = rng.choice(["fix @f0.py", "parse header", "  x  ", "@ctx:nope", "修复 bug"])
            args = ["ctx-pack", "-t", task, "--root", str(root), str(root), "--tokens", "800"]
        check(script_runner.run(args), name, f"tree #{i} {args}")
