"""A JSON integer of more digits than Python converts in linear time (4,300) is refused in
one line by every command that parses JSON input, never a traceback (issue 27, item 11);
a small input and one whose number lies past the 64 KiB the head is judged from."""

from __future__ import annotations

import json
import sys

import pytest
from helpers import run_bytes

DIGITS = "9" * (sys.get_int_max_str_digits() + 700)
FILLER = [{"role": "user", "content": "x" * 100}] * 1000  # puts a number past the head


def _json(number_first: bool) -> bytes:
    msgs = [{"role": "user", "content": "hi"}, *FILLER]
    text = json.dumps(msgs)
    huge = '{"role": "user", "content": "n", "n": ' + DIGITS + "}"
    body = huge + ", " + text[1:-1] if number_first else text[1:-1] + ", " + huge
    return ("[" + body + "]").encode()


def _jsonl() -> bytes:
    lines = [json.dumps(m) for m in FILLER[:3]]
    lines.insert(1, '{"role": "user", "content": "n", "n": ' + DIGITS + "}")
    return ("\n".join(lines) + "\n").encode()


INPUTS = {
    "small json": b'[{"role": "user", "content": "hi", "n": ' + DIGITS.encode() + b"}]",
    "json, number in the head": _json(True),
    "json, number past the head": _json(False),
    "json lines": _jsonl(),
}


@pytest.mark.parametrize("shape", list(INPUTS))
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["ctx-compact", "--limit", "100"], "a JSON integer of more than 4,300 digits"),
        (["ctx-count", "--messages"], "a JSON integer of more than 4,300 digits"),
        (["ctx-read", "--jsonpath", "$..n"], "is beyond what --jsonpath reads"),
    ],
)
def test_a_huge_integer_is_refused_in_one_line(script_runner, tmp_path, argv, expected, shape):
    path = tmp_path / "in.json"
    path.write_bytes(INPUTS[shape])
    if argv[0] == "ctx-read":
        r = run_bytes(script_runner, argv, INPUTS[shape])
    else:
        r = script_runner.run([*argv, str(path)])
    assert r.returncode == 1, r.stderr
    assert r.stdout == ""
    assert r.stderr.startswith(f"{argv[0]}: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert expected in r.stderr
    if shape == "json lines" and argv[0] != "ctx-read":
        assert "line 2: a JSON integer" in r.stderr


def test_a_long_integer_under_the_limit_still_counts(script_runner, tmp_path):
    path = tmp_path / "in.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi", "n": 10**4000}]))
    r = script_runner.run(["ctx-count", "--messages", "--json", str(path)])
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b'{"a":' * 1025 + b"1" + b"}" * 1025, "at line 1, column 5122"),
        (b'{"a": 1}\n' + b"[" * 1025 + b"]" * 1025 + b"\n", "at line 2"),
    ],
)
def test_json_nested_past_what_jsonpath_reads_is_said_to_be_that(script_runner, data, where):
    # Valid JSON (RFC 8259 sets no depth) that orjson refuses past 1,024 levels was called
    # "not valid JSON ... depth limit exceeded"; 1,024 levels are read.
    r = run_bytes(script_runner, ["ctx-read", "--jsonpath", "$..a"], data)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (
        f"ctx-read: error: stdin: the JSON nests more than 1,024 levels deep {where}, deeper "
        "than --jsonpath reads\n"
    )
    ok = run_bytes(script_runner, ["ctx-read", "--jsonpath", "$[0]"], b"[" * 1024 + b"]" * 1024)
    assert ok.returncode == 0, ok.stderr
