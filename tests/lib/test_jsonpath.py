"""JSONPath: the whole RFC 9535 compliance suite through ctxtools.jsonpath, some via ctx-read."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from helpers import run_bytes

from ctxtools.errors import InputError
from ctxtools.jsonpath import JSONPathError, compile_query, query

# The JSONPath Compliance Test Suite (BSD-2-Clause, LICENSE beside it).
CTS = Path(__file__).resolve().parents[1] / "data" / "jsonpath-cts" / "cts.json"
CASES = json.loads(CTS.read_text())["tests"]


def canon(value) -> str:
    # bool/int and key order distinguished the JSON way
    return json.dumps(value, sort_keys=True)


def test_suite_is_whole():
    assert len(CASES) == 703


@pytest.mark.parametrize("case", CASES, ids=[f"{i:03d}" for i in range(len(CASES))])
def test_cts(case):
    selector = case["selector"]
    if case.get("invalid_selector"):
        with pytest.raises(JSONPathError) as exc:
            compile_query(selector)
        assert exc.value.exit_status == 1
        assert "invalid JSONPath" in str(exc.value)
        return
    matches = query(case["document"], selector)
    values = canon([m.value for m in matches])
    paths = [m.path for m in matches]
    if "result" in case:
        assert values == canon(case["result"])
        assert paths == case["result_paths"]
    else:
        allowed = list(zip(case["results"], case["results_paths"], strict=True))
        assert any(values == canon(r) and paths == p for r, p in allowed), (values, paths)


def test_error_names_the_column():
    with pytest.raises(JSONPathError, match=r"at column 13: unexpected end of expression"):
        compile_query("$.a[?@.b == ]")
    with pytest.raises(JSONPathError, match=r"at column 1"):
        compile_query(" $")


def test_ng_dialect_extensions():
    doc = {"a": [{"n": 3}, {"n": 1}, {"n": 2}]}
    assert [m.value for m in query(doc, "$.a[*].n", "ng")] == [3, 1, 2]
    assert [m.value for m in query(doc, "$.a.`len`", "ng")] == [3]
    assert [m.value for m in query(doc, "$.a[/n][*].n", "ng")] == [1, 2, 3]
    with pytest.raises(JSONPathError, match="jsonpath-ng"):
        compile_query("$.a[?(@.n ==", "ng")


def test_unknown_dialect():
    from ctxtools.errors import UsageError

    with pytest.raises(UsageError):
        compile_query("$", "xpath")


# A handful of suite cases end to end: stash the document, query it with ctx-read.
CLI_CASES = [
    c
    for c in CASES
    if c["name"]
    in {
        "basic, root",
        "filter, equals string, single quotes",
        "functions, length, string data",
        "slice selector, negative step with default start",
        "basic, descendant segment, wildcard shorthand, object data",
        "filter, and",
    }
]
INVALID_CLI = [c for c in CASES if c.get("invalid_selector")][:4]


def test_cli_cases_found():
    assert len(CLI_CASES) == 6


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c["name"])
def test_cts_through_cli(script_runner, case):
    doc = orjson.dumps(case["document"])
    r = run_bytes(script_runner, ["ctx-stash", "--always", "--name", "doc"], doc)
    assert r.returncode == 0, r.stderr
    r = script_runner.run(["ctx-read", "doc", "--jsonpath", case["selector"]])
    assert r.returncode == 0, r.stderr
    got = canon(json.loads(r.stdout))
    expected = [case["result"]] if "result" in case else case["results"]
    assert got in [canon(x) for x in expected]
    r = script_runner.run(["ctx-read", "doc", "--jsonpath", case["selector"], "--paths"])
    paths = json.loads(r.stdout)
    assert paths in ([case["result_paths"]] if "result" in case else case["results_paths"])


@pytest.mark.parametrize("case", INVALID_CLI, ids=lambda c: c["name"])
def test_invalid_through_cli(script_runner, case):
    run_bytes(script_runner, ["ctx-stash", "--always", "--name", "doc"], b'{"a": 1}')
    r = script_runner.run(["ctx-read", "doc", "--jsonpath", case["selector"]])
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.startswith("ctx-read: error: invalid JSONPath")
    assert "column" in r.stderr


def test_number_out_of_range_is_a_query_error(script_runner):
    r = run_bytes(script_runner, ["ctx-stash", "--always", "--name", "j"], b'{"a": [{"x": 1}]}')
    assert r.returncode == 0
    r = script_runner.run(["ctx-read", "j", "--jsonpath", "$.a[?@.x == 1e999]"])
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (
        "ctx-read: error: invalid JSONPath '$.a[?@.x == 1e999]': a number is out of range "
        "(not finite)\n"
    )


@pytest.mark.parametrize("dialect", ["rfc9535", "ng"])
def test_descendants_of_a_deep_document(script_runner, dialect):
    """500 nested arrays: both engines answer (no RecursionError, no blame on the path)."""
    deep = b"[" * 500 + b"]" * 500
    run_bytes(script_runner, ["ctx-stash", "--always", "--name", "deep"], deep)
    args = ["ctx-read", "deep", "--jsonpath", "$..*", "--paths", "--max-chars", "50000"]
    if dialect == "ng":
        args += ["--dialect", "ng"]
    r = script_runner.run(args)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "of 499" in r.stdout.splitlines()[-1] or r.stdout.count("\n") == 501


def test_too_deep_blames_the_data():
    from ctxtools.jsonpath import MAX_DEPTH, query

    doc: list = []
    for _ in range(MAX_DEPTH + 5):
        doc = [doc]
    with pytest.raises(InputError) as exc:
        query(doc, "$..*")
    assert str(exc.value).startswith("the document is nested too deeply for JSONPath '$..*'")


def test_a_query_too_long_or_too_nested_is_said_to_be_that_in_a_short_line():
    # '$' + '.a' x 20,000 blamed the document ("nested too deeply") though the document was
    # flat; every error line quoted the whole query (60 KB); a filter nested 5,000 deep said
    # Python's "maximum recursion depth exceeded while calling a Python object".
    from ctxtools.jsonpath import MAX_SEGMENTS, query

    doc = {"a": {"b": 1}}
    long_path = "$" + ".a" * (MAX_SEGMENTS + 1)
    with pytest.raises(InputError) as exc:
        query(doc, long_path)
    said = str(exc.value)
    assert said == (f"JSONPath {long_path[:100]!r}… ({len(long_path):,} characters) has "
                    f"10,001 segments, more than the 10,000 a query may have")
    assert query(doc, "$" + ".a" * MAX_SEGMENTS) == []  # the most a query may have still runs
    nested = "$[?" + "(" * 5000 + "@.b" + ")" * 5000 + "]"
    with pytest.raises(InputError) as exc:
        query(doc, nested)
    assert str(exc.value) == (f"JSONPath {nested[:100]!r}… (10,007 characters) nests "
                              "(brackets, ! or functions) more deeply than the parser follows")
    bad = "$[?@.b == " + "-" * 3000 + "1]"
    with pytest.raises(InputError) as exc:
        query(doc, bad)
    assert len(str(exc.value)) < 300 and "at column 11" in str(exc.value)
    short = "$[?@.b == ]"
    with pytest.raises(InputError) as exc:
        query(doc, short)
    assert str(exc.value).startswith(f"invalid JSONPath {short!r} at column")  # whole


def test_an_integer_literal_is_read_exact_not_through_a_double():
    # The library read 10**30 in a filter as int(1e30), 1000000000000000019884624838656,
    # which matches no integer of a document read exact.
    doc = [10**30, 10**30 + 1, int(1e30), 2**64, 2**64 + 1]
    assert [m.value for m in query(doc, "$[?@ == 1000000000000000000000000000000]")] == [10**30]
    above = [10**30, 10**30 + 1, int(1e30), 2**64 + 1]
    assert [m.value for m in query(doc, "$[?@ > 18446744073709551616]")] == above
    assert [m.value for m in query(doc, "$[?@ == 1e30]")] == [int(1e30)]  # an exponent: a double
    assert [m.value for m in query([0, 1], "$[?@ == -0]")] == [0]
    with pytest.raises(JSONPathError, match="at column 9: invalid integer literal"):
        compile_query("$[?@ == 01]")
