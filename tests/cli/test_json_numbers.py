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


# An integer past 64 bits (below -2**63 or above 2**64 - 1), which orjson reads as a double
# with its digits changed, was printed as 1.2345678901234568e+29, exit 0.
BIG = (
    b'{"a":123456789012345678901234567890,"b":18446744073709551616,'
    b'"c":[1.5,-9223372036854775809,1e16,"x"]}'
)
BIG_C = '[1.5,-9223372036854775809,1e+16,"x"]'  # written by orjson, as every other match


@pytest.mark.parametrize("dialect", ["rfc9535", "ng"])
@pytest.mark.parametrize(
    ("expr", "stdout"),
    [
        ("$.*", f"[\n123456789012345678901234567890,\n18446744073709551616,\n{BIG_C}\n]\n"),
        (
            "$",
            f'[\n{{"a":123456789012345678901234567890,"b":18446744073709551616,"c":{BIG_C}}}\n]\n',
        ),
    ],
)
def test_an_integer_past_64_bits_is_read_and_printed_exact(script_runner, dialect, expr, stdout):
    r = run_bytes(script_runner, ["ctx-read", "--jsonpath", expr, "--dialect", dialect], BIG)
    assert (r.returncode, r.stderr, r.stdout) == (0, "", stdout)


def test_json_lines_keep_an_integer_past_64_bits_exact(script_runner):
    data = (
        b'{"n": 99999999999999999999}\n'
        b'{"n": -99999999999999999999, "s": "1234567890123456789012"}\n'
    )
    r = run_bytes(script_runner, ["ctx-read", "--jsonpath", "$[*]"], data)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (
        '[\n{"n":99999999999999999999},\n'
        '{"n":-99999999999999999999,"s":"1234567890123456789012"}\n]\n'
    )


@pytest.mark.parametrize(
    ("expr", "stdout"),
    [
        ("$[?@ == 123456789012345678901234567890]", "[\n123456789012345678901234567890\n]\n"),
        ("$[?@ == 123456789012345678901234567891]", "[]\n"),
        (
            "$[?@ > 18446744073709551615]",
            "[\n123456789012345678901234567890,\n18446744073709551616\n]\n",
        ),
        ("$.c[?@ < -9223372036854775808]", "[\n-9223372036854775809\n]\n"),
    ],
)
def test_a_filter_compares_integers_past_64_bits_exactly(script_runner, expr, stdout):
    r = run_bytes(script_runner, ["ctx-read", "--jsonpath", expr], BIG)
    assert (r.returncode, r.stderr, r.stdout) == (0, "", stdout)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b"[123456789012345678901234567890, NaN]",
            "stdin is not valid JSON at line 1, column 34: unexpected character, expected a "
            "JSON value",
        ),
        (
            b'{"a":1E400}',
            "stdin: a number at line 1, column 6 is beyond what --jsonpath reads (an integer of "
            f"up to {sys.get_int_max_str_digits():,} digits or a double)",
        ),
    ],
)
def test_json_with_a_long_integer_is_judged_as_before(script_runner, data, message):
    # The document is checked by orjson with its long integers blanked: the same errors
    # at the same places as without them.
    r = run_bytes(script_runner, ["ctx-read", "--jsonpath", "$.*"], data)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", f"ctx-read: error: {message}\n")


def test_an_integer_literal_of_too_many_digits_is_refused_in_one_line(script_runner):
    digits = "9" * (sys.get_int_max_str_digits() + 1)
    r = run_bytes(script_runner, ["ctx-read", "--jsonpath", f"$[?@ == {digits}]"], b"[1]")
    assert r.returncode == 1 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.endswith(
        f"at column 9: an integer literal of more than {sys.get_int_max_str_digits():,} digits\n"
    )


def test_integers_of_every_size_and_spacing_come_back_exact(script_runner):
    edges = [2**63 - 1, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64]
    values = [s * (10**n + k) for n in range(45) for k in (-1, 0, 1) for s in (1, -1)] + edges
    seps = [",", ", ", " ,\n\t", ",\r\n"]
    body = "".join(f"{seps[i % 4]}{v}" for i, v in enumerate(values))[1:]
    data = ("[" + body + ', {"k": ' + str(10**30) + "}]").encode()
    r = run_bytes(script_runner, ["ctx-read", "--jsonpath", "$"], data)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [[*values, {"k": 10**30}]]
