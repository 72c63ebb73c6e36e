"""ctx-read: references, projections, caps with exact next commands, integrity, bad input."""

from __future__ import annotations

import json
import re
import shlex
import time

import pytest
from helpers import run_bytes

from ctxtools.store import HandleStore

LINES = [
    f"{i:05d} " + ("ERROR test_auth failed: assert 401 == 200" if i % 250 == 3 else "ok 用户登录")
    for i in range(1, 2001)
]
LOG = ("\n".join(LINES) + "\n").encode()
REPORT = {
    "summary": {"passed": 3, "failed": 2},
    "tests": [
        {"name": "test_login", "outcome": "passed"},
        {"name": "test_logout", "outcome": "failed"},
        {"name": "test_token", "outcome": "passed"},
        {"name": "test_refresh", "outcome": "failed"},
        {"name": "test_me", "outcome": "passed"},
    ],
}


@pytest.fixture
def log(script_runner) -> dict:
    r = run_bytes(script_runner, ["ctx-stash", "--name", "log"], LOG)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture
def report(script_runner) -> dict:
    r = run_bytes(
        script_runner, ["ctx-stash", "--always", "--name", "rep"], json.dumps(REPORT).encode()
    )
    return json.loads(r.stdout)


def read(script_runner, *args, stdin: bytes | None = None):
    if stdin is not None:
        return run_bytes(script_runner, ["ctx-read", *args], stdin)
    return script_runner.run(["ctx-read", *args])


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


# --- references ----------------------------------------------------------------------------


def test_reference_forms(script_runner, log):
    want = "00001 ok 用户登录\n"
    for ref in [
        "log",
        "ctx:log",
        "default/log",
        "ctx:default/log",
        log["ref"],
        "log@" + log["sha256"][:6],
    ]:
        assert ok(read(script_runner, ref, "--head", "1")) == want, ref


@pytest.mark.process
def test_card_on_stdin(script_runner, log):
    card = json.dumps(log).encode()
    assert ok(read(script_runner, "--tail", "1", stdin=card)) == LINES[-1] + "\n"
    assert ok(read(script_runner, "-", "--head", "1", stdin=card)) == LINES[0] + "\n"


def test_card_as_argument(script_runner, log):
    assert ok(read(script_runner, json.dumps(log), "--head", "1")) == LINES[0] + "\n"
    r = read(script_runner, '{"kind": "other"}')
    assert r.returncode == 2 and "not a handle card" in r.stderr


def test_non_card_stdin_is_content(script_runner, store_dir):
    assert ok(read(script_runner, "--range", "2-3", stdin=b"a\nb\nc\nd\n")) == "b\nc\n"
    assert ok(read(script_runner, "-n", stdin=b"x\ny")) == "     1\tx\n     2\ty\n"
    # JSON that is not a card is content too
    assert ok(read(script_runner, "--jsonpath", "$.kind", stdin=b'{"kind": "other"}')) == (
        '[\n"other"\n]\n'
    )
    assert not store_dir.exists()


@pytest.mark.process
def test_stash_then_read_pipeline_both_ways(script_runner):
    small = b"1 passed in 0.01s\n"
    passed = run_bytes(script_runner, ["ctx-stash"], small).stdout.encode()
    assert passed == small
    assert ok(read(script_runner, "--head", "20", stdin=passed)) == small.decode()
    card = run_bytes(script_runner, ["ctx-stash"], LOG).stdout.encode()
    assert ok(read(script_runner, "--head", "2", stdin=card)) == "\n".join(LINES[:2]) + "\n"


def test_unknown_and_stale(script_runner, log):
    r = read(script_runner, "nope")
    assert r.returncode == 1 and r.stderr.startswith("ctx-read: error: no handle default/nope")
    run_bytes(script_runner, ["ctx-stash", "--name", "log"], LOG + b"extra\n")
    for ref_input in ([log["ref"]], []):
        stdin = json.dumps(log).encode() if not ref_input else None
        r = read(script_runner, *ref_input, "--head", "1", stdin=stdin)
        assert r.returncode == 1
        assert r.stdout == ""
        assert f"stale handle {log['ref']}" in r.stderr
    assert ok(read(script_runner, "log", "--tail", "1")) == "extra\n"


@pytest.mark.parametrize("ref", ["a/b/c", "../x", "x@nothex", "a b"])
def test_bad_refs(script_runner, ref):
    r = read(script_runner, ref)
    assert r.returncode == 2
    assert r.stderr.startswith("ctx-read: error: ")


# --- line projections ----------------------------------------------------------------------


def test_head_tail_range_slice_lines(script_runner, log):
    assert ok(read(script_runner, "log", "--head", "3")) == "\n".join(LINES[:3]) + "\n"
    assert ok(read(script_runner, "log", "--tail", "2")) == "\n".join(LINES[-2:]) + "\n"
    assert (
        ok(read(script_runner, "log", "--range", "1000-1002")) == "\n".join(LINES[999:1002]) + "\n"
    )
    assert ok(read(script_runner, "log", "--range", "1999-")) == "\n".join(LINES[1998:]) + "\n"
    assert ok(read(script_runner, "log", "--range", "7")) == LINES[6] + "\n"
    got = ok(read(script_runner, "log", "--slice", "-3:-1", "--unit", "lines"))
    assert got == "\n".join(LINES[-3:-1]) + "\n"
    got = ok(read(script_runner, "log", "--slice", "10:12", "--unit", "lines", "-n"))
    assert got == f"    11\t{LINES[10]}\n    12\t{LINES[11]}\n"
    assert ok(read(script_runner, "log", "--head", "0")) == ""


def test_number_prefix(script_runner, log):
    got = ok(read(script_runner, "log", "--range", "4-5", "-n"))
    assert got == f"     4\t{LINES[3]}\n     5\t{LINES[4]}\n"
    got = ok(read(script_runner, "log", "--tail", "1", "--number"))
    assert got == f"  2000\t{LINES[-1]}\n"


def test_char_slices_with_cjk(script_runner):
    text = "日本語のテスト: 失敗しました\nsecond line\n"
    run_bytes(script_runner, ["ctx-stash", "--always", "--name", "jp"], text.encode())
    assert ok(read(script_runner, "jp", "--slice", "0:3")) == "日本語"
    assert ok(read(script_runner, "jp", "--slice", "-12:-1")) == text[-12:-1]
    assert ok(read(script_runner, "jp", "--slice", "5:")) == text[5:]
    assert ok(read(script_runner, "jp", "--slice", ":2")) == "日本"
    assert ok(read(script_runner, "jp", "--slice", "100:200")) == ""


def test_ascii_char_slice(script_runner, log):
    text = LOG.decode()
    assert ok(read(script_runner, "log", "--slice", "6:30")) == text[6:30]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--range", "0-3"], "line numbers start at 1"),
        (["--range", "9-2"], "is before the start"),
        (["--range", "abc"], "expected X-Y"),
        (["--slice", "1-2"], "expected A:B"),
        (["--slice", "5:2", "--unit", "lines"], "--slice 5:2: the end (2) is before the start"),
        (["--head", "-1"], "-1 is below the minimum of 0"),
        (["--head", "1", "--tail", "1"], "cannot be combined"),
        (["--count", "--grep", "x"], "cannot be combined"),
        (["--grep", "x", "-n"], "-n numbers line projections"),
        (["-C", "2"], "go with --grep"),
        (["--paths"], "go with --jsonpath"),
        (["--unit", "lines"], "--unit goes with --slice"),
        (["--slice", "0:5", "-n"], "-n numbers lines"),
        (["--max-chars", "0"], "0 is below the minimum of 1"),
    ],
)
def test_usage_errors(script_runner, log, args, message):
    r = read(script_runner, "log", *args)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert r.stdout == ""


def test_range_past_the_end(script_runner, log):
    r = read(script_runner, "log", "--range", "1999-5000")
    assert ok(r) == "\n".join(LINES[1998:]) + "\n"
    assert "the payload has 2,000 lines; the range is 1999-2000" in r.stderr
    r = read(script_runner, "log", "--range", "2001-2002")
    assert r.returncode == 1
    assert "starts after the last line (the payload has 2,000 lines)" in r.stderr


def test_slice_past_the_end_says_it_selects_nothing(script_runner, log):
    # a slice keeps Python's meaning (past the end is empty, status 0: a paging loop ends
    # on it), but an empty output is not mistaken for an empty payload
    r = read(script_runner, "log", "--slice", "2001:2010", "--unit", "lines")
    assert ok(r) == ""
    assert "--slice 2001:2010 selects nothing: the payload has 2,000 lines" in r.stderr


# --- grep ----------------------------------------------------------------------------------


def test_grep_with_context_groups(script_runner, log):
    out = ok(read(script_runner, "log", "--grep", "error", "-i", "-C", "1", "--range", "1-260"))
    assert out == (
        f"2-{LINES[1]}\n3:{LINES[2]}\n4-{LINES[3]}\n--\n"
        f"252-{LINES[251]}\n253:{LINES[252]}\n254-{LINES[253]}\n"
    )
    out = ok(read(script_runner, "log", "--grep", "ERROR"))
    expected = [f"{i + 1}:{line}" for i, line in enumerate(LINES) if "ERROR" in line]
    assert out.splitlines() == expected
    assert ok(read(script_runner, "log", "--grep", "error")) == ""


def test_grep_adjacent_matches_merge(script_runner):
    data = b"a\nx1\nx2\nb\nc\nd\nx3\n"
    out = ok(read(script_runner, "--grep", "^x", "-C", "1", stdin=data))
    assert out == "1-a\n2:x1\n3:x2\n4-b\n--\n6-d\n7:x3\n"


@pytest.mark.process
def test_grep_cjk_and_invalid_utf8(script_runner):
    data = "第一行\n错误: 断言失败\n".encode() + b"bad \xff\xfe bytes ERROR\n"
    run_bytes(script_runner, ["ctx-stash", "--always", "--name", "mixed"], data)
    out = ok(read(script_runner, "mixed", "--grep", "错误|ERROR"))
    assert out == "2:错误: 断言失败\n3:bad \ufffd\ufffd bytes ERROR\n"


def test_invalid_regex(script_runner, log):
    r = read(script_runner, "log", "--grep", "fail(")
    assert r.returncode == 1
    assert r.stderr == (
        "ctx-read: error: invalid regex 'fail(' at position 4: missing ), unterminated subpattern\n"
    )


# --- count ---------------------------------------------------------------------------------


def test_count(script_runner, log):
    data = json.loads(ok(read(script_runner, "log", "--count", "--heuristic")))
    text = LOG.decode()
    assert data["chars"] == len(text) == log["length"]
    assert data["lines"] == 2000
    assert data["bytes"] == len(LOG)
    assert data["exact"] is False and data["tokens"] > 0
    exact = json.loads(ok(read(script_runner, "log", "--count")))
    assert exact["counter"] == "cl100k_base" and exact["exact"] is True


# --- jsonpath ------------------------------------------------------------------------------


def test_jsonpath_filter(script_runner, report):
    out = ok(read(script_runner, "rep", "--jsonpath", "$.tests[?@.outcome == 'failed'].name"))
    assert json.loads(out) == ["test_logout", "test_refresh"]
    out = ok(read(script_runner, "rep", "--jsonpath", "$.summary.*", "--paths"))
    assert json.loads(out) == ["$['summary']['passed']", "$['summary']['failed']"]
    out = ok(read(script_runner, "rep", "--jsonpath", "$.nothing"))
    assert json.loads(out) == []


def test_jsonpath_on_jsonl(script_runner):
    data = b"".join(json.dumps(t).encode() + b"\n" for t in REPORT["tests"])
    card = json.loads(
        run_bytes(script_runner, ["ctx-stash", "--always", "--name", "jl"], data).stdout
    )
    assert card["type"] == "jsonl"
    out = ok(read(script_runner, "jl", "--jsonpath", "$[?@.outcome == 'passed'].name"))
    assert json.loads(out) == ["test_login", "test_token", "test_me"]


@pytest.mark.script_launch_mode("inprocess")  # lowers the limit
def test_jsonpath_on_jsonl_past_the_limit_is_refused_with_the_limit(script_runner, monkeypatch):
    """--jsonpath holds JSON Lines whole, as an array (3-4 times their size in memory):
    past the document limit they are refused before that memory is spent (issue 27,
    item 13), and --grep still reads them."""
    from ctxtools import jsonbound

    data = b"".join(json.dumps(t).encode() + b"\n" for t in REPORT["tests"] * 40)
    run_bytes(script_runner, ["ctx-stash", "--always", "--name", "jl"], data)
    monkeypatch.setattr(jsonbound, "JSON_DOCUMENT_MAX", 1 << 12)
    r = read(script_runner, "jl", "--jsonpath", "$[0].name")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith("ctx-read: error: ctx:default/jl@")
    assert r.stderr.endswith(
        ": JSON Lines over 4,096 bytes are not queried with --jsonpath (the limit: the "
        "array is held whole) (--grep or --range read any size)\n"
    )
    assert ok(read(script_runner, "jl", "--grep", "test_me", "--max-chars", "40"))


def test_jsonpath_on_one_document_past_the_limit_offers_what_reads_it(script_runner, monkeypatch):
    """A JSON document over the limit was told to come as JSON Lines, which --jsonpath
    refuses past the same limit: the hint is what does read it."""
    from ctxtools import jsonbound

    data = json.dumps({"tests": REPORT["tests"] * 40}).encode()
    run_bytes(script_runner, ["ctx-stash", "--always", "--name", "doc"], data)
    monkeypatch.setattr(jsonbound, "JSON_DOCUMENT_MAX", 1 << 12)
    monkeypatch.setattr(jsonbound, "JSON_SNIFF_BYTES", 1 << 10)
    r = read(script_runner, "doc", "--jsonpath", "$.tests[0].name")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.endswith(
        ": one JSON document over 4,096 bytes is not parsed (the limit) "
        "(--grep or --range read any size)\n"
    )


def test_jsonpath_dialect_ng(script_runner, report):
    out = ok(read(script_runner, "rep", "--jsonpath", "$.tests.`len`", "--dialect", "ng"))
    assert json.loads(out) == [5]


def test_jsonpath_on_invalid_json(script_runner, log):
    r = read(script_runner, "log", "--jsonpath", "$")
    assert r.returncode == 1
    assert re.match(
        r"ctx-read: error: ctx:default/log@\w{12} is not valid JSON at line 1", r.stderr
    )


def test_type_given_is_checked(script_runner, store_dir):
    bad = b'{"a": 1}\n{"a": \n'
    r = run_bytes(
        script_runner, ["ctx-stash", "--always", "--name", "badjl", "--type", "jsonl"], bad
    )
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (
        "ctx-stash: error: --type jsonl: the input is not JSON Lines (one JSON value a line) "
        "(it reads as text) (leave --type out to have it detected, or give --type text)\n"
    )
    r = run_bytes(script_runner, ["ctx-stash", "--always", "--type", "json"], b"hello\n")
    assert r.returncode == 1 and "--type json: the input is not one JSON document" in r.stderr
    assert not list(store_dir.rglob("*.json")) and not list(store_dir.rglob("blobs/*/*"))
    r = run_bytes(script_runner, ["ctx-stash", "--always", "--type", "text"], b'{"a": 1}')
    assert json.loads(r.stdout)["type"] == "text"


def test_invalid_jsonpath(script_runner, report):
    r = read(script_runner, "rep", "--jsonpath", "$.tests[?@.outcome == ]")
    assert r.returncode == 1
    assert r.stderr == (
        "ctx-read: error: invalid JSONPath '$.tests[?@.outcome == ]' at column 23: "
        "unexpected end of expression\n"
    )


# --- introspect ----------------------------------------------------------------------------


def test_introspect_examples_run(script_runner, report, log):
    for ref in ("rep", "log"):
        info = json.loads(ok(read(script_runner, ref, "--introspect")))
        card = HandleStore().card(ref)
        assert info["ref"] == card["ref"]
        assert (info["chars"], info["lines"], info["bytes"]) == (
            card["length"],
            card["lines"],
            card["bytes"],
        )
        usages = [p["usage"] for p in info["projections"]]
        assert ("--jsonpath EXPR [--paths]" in usages) == (ref == "rep")
        assert len(info["examples"]) >= 5
        for cmd in info["examples"]:
            argv = shlex.split(cmd)
            assert argv[0] == "ctx-read" and argv[1] == card["ref"]
            r = script_runner.run(argv)
            assert r.returncode == 0, (cmd, r.stderr)
    info = json.loads(ok(read(script_runner, "rep", "--introspect")))
    assert info["top_level_keys"] == ["summary", "tests"]
    assert any("--jsonpath '$.summary'" in c for c in info["examples"])
    info = json.loads(ok(read(script_runner, "log", "--introspect")))
    assert "ctx-read " + info["ref"] + " --range 975-1024" in info["examples"]


# --- caps and the next command -------------------------------------------------------------


TRAILER = re.compile(r"\[ctx-read: cut at [^\n]*; next: (.*)\]\n\Z")


def _body(out: str) -> tuple[str, str | None]:
    """(body, next command) of one ctx-read output."""
    m = TRAILER.search(out)
    if not m:
        return out, None
    body = out[: m.start()]
    trailer = m.group(0)
    shown = re.search(r"showed chars (\d+):(\d+)", trailer)
    if shown:  # a char slice: the trailer says exactly how many characters were shown
        body = body[: int(shown.group(2)) - int(shown.group(1))]
    elif "chars of line" in trailer:  # cut inside a line: drop the separating newline
        body = body[:-1]
    return body, m.group(1)


def _follow(script_runner, args, limit=200):
    """Run ctx-read ARGS, then every 'next:' command, collecting the bodies."""
    bodies = []
    argv = ["ctx-read", *args]
    for _ in range(limit):
        r = script_runner.run(argv)
        assert r.returncode == 0, r.stderr
        body, nxt = _body(r.stdout)
        bodies.append(body)
        if nxt is None:
            return bodies
        argv = shlex.split(nxt)
        assert argv[0] == "ctx-read"
    raise AssertionError("never finished")


def test_cut_read_continues_exactly(script_runner, log):
    bodies = _follow(script_runner, ["log", "--max-chars", "3000"])
    assert len(bodies) > 5
    assert all(len(b) <= 3000 for b in bodies)
    assert "".join(bodies) == LOG.decode()


def test_cut_range_keeps_its_end(script_runner, log):
    r = read(script_runner, "log", "--range", "100-900", "--max-chars", "500")
    tail = r.stdout.splitlines()[-1]
    assert re.fullmatch(
        r"\[ctx-read: cut at 500 chars: showed lines 100-\d+ of lines 100-900 "
        r"\(2,000 lines, [\d,]+ chars in all\); next: ctx-read ctx:default/log@\w{12} "
        r"--range \d+-900 --max-chars 500\]",
        tail,
    ), tail
    bodies = _follow(script_runner, ["log", "--range", "100-900", "--max-chars", "500", "-n"])
    lines = "".join(bodies).splitlines()
    assert lines == [f"{i:>6}\t{LINES[i - 1]}" for i in range(100, 901)]


def test_cut_char_slice(script_runner, log):
    text = LOG.decode()
    bodies = _follow(script_runner, ["log", "--slice", "100:9000", "--max-chars", "1000"])
    assert "".join(bodies) == text[100:9000]


def test_cut_grep(script_runner, log):
    bodies = _follow(script_runner, ["log", "--grep", "ok", "--max-chars", "2000"])
    got = "".join(bodies).splitlines()
    assert got == [f"{i + 1}:{line}" for i, line in enumerate(LINES) if "ok" in line]
    first = read(script_runner, "log", "--grep", "ok", "--max-chars", "2000").stdout
    assert "showed " in first.splitlines()[-1] and " matching lines, searched lines 1-" in first


def test_cut_jsonpath(script_runner, report):
    bodies = _follow(script_runner, ["rep", "--jsonpath", "$.tests[*].name", "--max-chars", "40"])
    names = [n for b in bodies for n in json.loads(b)]
    assert names == [t["name"] for t in REPORT["tests"]]


def test_one_huge_line(script_runner):
    line = ("x" * 30_000 + "\n").encode()
    run_bytes(script_runner, ["ctx-stash", "--name", "wide"], line)
    bodies = _follow(script_runner, ["wide", "--max-chars", "12000"])
    assert "".join(bodies).rstrip("\n") == "x" * 30_000


def test_max_chars_clamped(script_runner):
    big = ("y" * 99 + "\n").encode() * 1000  # 100,000 chars
    run_bytes(script_runner, ["ctx-stash", "--name", "big"], big)
    r = read(script_runner, "big", "--max-chars", "999999")
    assert "clamped to 50000" in r.stderr
    body = r.stdout.rsplit("\n[ctx-read:", 1)[0]
    assert len(body) <= 50_000 and len(body) > 49_000
    r = read(script_runner, "big")
    assert len(r.stdout.rsplit("\n[ctx-read:", 1)[0]) <= 12_000


# --- integrity -----------------------------------------------------------------------------


def test_corrupt_and_truncated_blob(script_runner, log, store_dir):
    blob = HandleStore(store_dir).blob_path(log["sha256"])
    original = blob.read_bytes()
    damaged = bytearray(original)
    damaged[len(damaged) // 2] ^= 0x04
    blob.write_bytes(bytes(damaged))
    r = read(script_runner, "log", "--head", "1")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"ctx-read: error: handle {log['ref']} is corrupt")
    blob.write_bytes(original[:-100])
    r = read(script_runner, "log", "--tail", "1")
    assert r.returncode == 1 and "is truncated" in r.stderr
    blob.write_bytes(original)
    assert ok(read(script_runner, "log", "--verify", "--head", "1")) == LINES[0] + "\n"


def test_verify_needs_a_handle(script_runner):
    r = read(script_runner, "--verify", stdin=b"plain text")
    assert r.returncode == 2


@pytest.mark.process
def test_binary_payload(script_runner, store_dir):
    data = bytes(range(256)) * 8
    card = json.loads(run_bytes(script_runner, ["ctx-stash", "--name", "bin"], data).stdout)
    import hashlib

    assert card["sha256"] == hashlib.sha256(data).hexdigest()
    assert HandleStore(store_dir).read_bytes("bin") == data
    assert card["type"] == "binary"  # issue 20
    r = read(script_runner, "bin")
    out = ok(r)
    assert out.count("\ufffd") == 128 * 8
    assert "\x00\x01\x02" in out
    assert r.stderr == (
        "ctx-read: note: binary payload (2,048 bytes): bytes that are not UTF-8 are shown "
        "as U+FFFD (--count and --introspect describe it)\n"
    )
    doc = json.loads(ok(read(script_runner, "bin", "--introspect")))
    assert doc["type"] == "binary" and doc["bytes"] == 2048
    assert json.loads(ok(read(script_runner, "bin", "--count")))["bytes"] == 2048
    assert ok(read(script_runner, "bin", "--head", "1")).startswith("\x00\x01")


def test_every_read_is_logged(script_runner, log, store_dir):
    st = HandleStore(store_dir)
    for _ in range(4):
        ok(read(script_runner, "log", "--head", "1"))
    read(script_runner, "log", "--range", "0-1")  # usage error: not a read
    (entry,) = st.entries()
    assert entry["access_count"] == 4


# --- hostile regexes and huge lines ---------------------------------------------------------


def test_catastrophic_regex_returns(store_dir):
    """(a+)+$ on 100,000 a's: Python's re backtracks for ever; RE2 answers at once."""
    import subprocess
    import sys
    from pathlib import Path

    bin_dir = Path(sys.executable).parent
    HandleStore(store_dir).put_bytes(b"a" * 100_000 + b"b\n" + b"a" * 50 + b"\n", name="a")
    r = subprocess.run(
        [bin_dir / "ctx-read", "a", "--grep", "(a+)+$"], capture_output=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"2:" + b"a" * 50 + b"\n"


@pytest.mark.parametrize(
    ("pattern", "what"),
    [
        (r"(a)\1", "a backreference"),
        (r"(?P<x>a)(?P=x)", "a backreference"),
        (r"foo(?=bar)", "lookaround"),
        (r"(?<!x)y", "lookaround"),
    ],
)
def test_regex_the_linear_engine_cannot_run_is_refused(script_runner, log, pattern, what):
    r = read(script_runner, "log", "--grep", pattern)
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.startswith(f"ctx-read: error: regex {pattern!r} uses {what}")
    assert "never backtracks" in r.stderr


def test_unicode_classes_keep_python_meaning(script_runner):
    data = "名前 ٣ x\nplain\n".encode()
    run_bytes(script_runner, ["ctx-stash", "--always", "--name", "u"], data)
    assert ok(read(script_runner, "u", "--grep", r"^\w+ \d")) == "1:名前 ٣ x\n"
    assert ok(read(script_runner, "u", "--grep", r"^[\w]+$")) == "2:plain\n"
    assert ok(read(script_runner, "u", "--grep", r"\S+\s+\S+$")) == "1:名前 ٣ x\n"


def test_sigint_ends_read_with_130(store_dir):
    """Ctrl-C while ctx-read works (here: spooling an endless stdin) ends it with 130."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    bin_dir = Path(sys.executable).parent
    proc = subprocess.Popen(
        [bin_dir / "ctx-read", "--grep", "(a+)+$"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdin.write(b"a" * (1 << 20))  # taken in by the spooler: it is running
    proc.stdin.flush()
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.decode() == "ctx-read: interrupted\n"  # one line, no blank line before it
    assert b"Traceback" not in err


def _one_line_blob(store_dir, n: int) -> bytes:
    """A one-line blob of N x's, then a needle, then multibyte text and an invalid byte."""
    data = b"x" * n + b"NEEDLE" + "é".encode() * 5000 + b"\xff" + b"tail\n"
    HandleStore(store_dir).put_bytes(data, name="wide")
    return data


def test_head_of_a_huge_line_reads_only_what_it_shows(script_runner, store_dir, monkeypatch):
    data = _one_line_blob(store_dir, 3_000_000)
    text = data.decode("utf-8", "replace")
    from ctxtools import store as store_mod

    reads = []
    real = store_mod.Payload.pread

    def counting(self, offset, n):
        out = real(self, offset, n)
        reads.append(len(out))
        return out

    monkeypatch.setattr(store_mod.Payload, "iter_lines", None)  # no whole-line reads
    monkeypatch.setattr(store_mod.Payload, "pread", counting)
    r = read(script_runner, "wide", "--head", "1", "--max-chars", "20")
    body, trailer = ok(r).split("\n", 1)
    assert body == "x" * 20
    if getattr(script_runner, "launch_mode", "inprocess") == "inprocess":
        assert sum(reads) < 1 << 20  # not the 3 MB line: a little past what is shown
    assert trailer == (
        f"[ctx-read: cut at 20 chars: showed 20 of the {len(text):,} chars of line 1 "
        f"(the first 1 lines, 1 lines in all); next: ctx-read "
        f"ctx:default/wide@{HandleStore(store_dir).card('wide')['sha256'][:12]} "
        f"--slice 20:{len(text)} --max-chars 20]\n"
    )
    # the trailer's command works, far into the line and across multibyte text
    nxt = shlex.split(trailer.split("next: ", 1)[1].rstrip("]\n"))
    assert ok(read(script_runner, *nxt[1:])).startswith("x" * 20)
    a = len(text) - 30
    r = read(script_runner, "wide", "--slice", f"{a}:{len(text)}")
    assert ok(r) == text[a:]


def test_grep_on_a_huge_line_shows_the_window_around_the_match(script_runner, store_dir):
    data = _one_line_blob(store_dir, 3_000_000)
    text = data.decode("utf-8", "replace")
    r = read(script_runner, "wide", "--grep", "NEEDLE", "--max-chars", "400")
    out = ok(r)
    assert out.startswith("1:\u2026x") and "NEEDLE" in out and out.endswith("\u2026\n")
    at = text.index("NEEDLE")
    shown = out[3:-2]
    assert text[at - len(shown) // 2 : at + len(shown)].find(shown) >= 0  # the real text
    note = [n for n in r.stderr.splitlines() if "part: " in n]
    assert len(note) == 1 and f"line 1 has {len(text) - 1:,} chars" in note[0]
    cmd = shlex.split(note[0].split("part: ", 1)[1])
    more = ok(read(script_runner, *cmd[1:]))
    a, b = map(int, cmd[cmd.index("--slice") + 1].split(":"))
    assert more == text[a:b] and text[a - 10 : a] == shown[-10:]


def test_grep_continues_past_a_huge_line(script_runner, store_dir):
    small = "".join(f"line {i} ERROR\n" for i in range(200))
    data = small.encode() + b"y" * 2_000_000 + b" ERROR here\n" + small.encode()
    HandleStore(store_dir).put_bytes(data, name="mix")
    bodies = _follow(script_runner, ["mix", "--grep", "ERROR", "--max-chars", "1500"])
    got = "".join(bodies).splitlines()
    assert len(got) == 401
    assert got[200].startswith("201:\u2026y") and got[200].endswith(" ERROR here")
    assert got[:200] == [f"{i + 1}:line {i} ERROR" for i in range(200)]
    assert got[201:] == [f"{i + 202}:line {i} ERROR" for i in range(200)]


def test_whole_read_is_byte_exact(script_runner, store_dir):
    """A read of a whole payload gives back its bytes: no newline added after the last line
    (ctx-compact's elided results are read back this way)."""
    for data in [b"abc\ndef", b"abc\ndef\n", b"one line, no newline", "末尾 ✓".encode(), b"\n\n"]:
        card = HandleStore(store_dir).put_bytes(data, name="x")
        r = read(script_runner, card["ref"])
        assert ok(r).encode() == data
        assert ok(read(script_runner, "x", "--tail", "1")).encode() == data.split(b"\n")[-1] or (
            data.endswith(b"\n")
        )


def test_grep_window_at_the_end_of_a_huge_line_points_back(script_runner, store_dir):
    data = b"z" * 100_000 + b"END\n"
    HandleStore(store_dir).put_bytes(data, name="endy")
    r = read(script_runner, "endy", "--grep", "END$", "--max-chars", "300")
    assert ok(r).startswith("1:\u2026z") and ok(r).endswith("END\n")
    note = r.stderr.strip()
    assert "the previous part: " in note
    cmd = shlex.split(note.split("part: ", 1)[1])
    a, b = map(int, cmd[cmd.index("--slice") + 1].split(":"))
    assert b < 100_003 and b - a == 300
    assert ok(read(script_runner, *cmd[1:])) == "z" * 300


# --- a card's sizes are the payload's (issue 21, item 10) ------------------------------------


def _edit_card(store_dir, name: str, **fields) -> None:
    path = store_dir / "sessions" / "default" / f"{name}.json"
    card = json.loads(path.read_bytes())
    card.update({k: card[k] + v for k, v in fields.items()})
    path.write_text(json.dumps(card))


@pytest.mark.parametrize("verify", [[], ["--verify"]])
@pytest.mark.parametrize("field", ["length", "lines"])
def test_an_edited_card_cannot_shift_a_slice(script_runner, store_dir, log, field, verify):
    last = ok(read(script_runner, "log", "--slice", "-20:"))
    assert last.endswith(LINES[-1] + "\n")
    _edit_card(store_dir, "log", **{field: -10})  # the attack: 13893 -> 13883
    r = read(script_runner, "log", "--slice", "-20:", *verify)
    assert r.returncode == 1 and r.stdout == ""  # was: exit 0 and other lines
    has = {"length": len(LOG.decode()), "lines": len(LINES)}[field]
    assert r.stderr == (
        f"ctx-read: error: handle {log['ref']}: its card is damaged (its {field!r} is "
        f"{has - 10}, the payload has {has}) (remove it with ctx-stash --rm default/log "
        "and stash it again)\n"
    )


def test_an_edited_length_of_a_big_blob_is_caught_when_characters_count(script_runner, store_dir):
    big = ("é" * 4000 + "\n").encode() * 2500  # 20 MB: over the size verified on every open
    r = run_bytes(script_runner, ["ctx-stash", "--name", "big"], big)
    assert r.returncode == 0, r.stderr
    _edit_card(store_dir, "big", length=-1)
    r = read(script_runner, "big", "--slice", "-5:")
    assert r.returncode == 1 and "its card is damaged (its 'length' is" in r.stderr


# --- a card is its payload's, on every read path (issue 27, item 3) ---------------------------


def _set_card(store_dir, name: str, **fields) -> None:
    path = store_dir / "sessions" / "default" / f"{name}.json"
    card = json.loads(path.read_bytes())
    card.update(fields)
    path.write_text(json.dumps(card))


def _one_damaged_line(r) -> None:
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "its card is damaged" in r.stderr


def test_a_card_pointing_at_another_valid_blob_is_refused_with_verify_too(
    script_runner, store_dir
):
    store = HandleStore(store_dir)
    text = b"".join(b"%d\n" % i for i in range(1, 501))
    store.put_bytes(text, name="doc")
    other = store.put_bytes(text.replace(b"1", b"7"), name="other")  # same size and lines
    _set_card(store_dir, "doc", sha256=other["sha256"])
    for flags in ([], ["--verify"]):
        r = read(script_runner, "doc", "--range", "1-3", *flags)
        assert r.returncode == 1 and r.stdout == "", flags  # was: the other blob, exit 0
        assert r.stderr.count("\n") == 1
    assert "names another payload" in read(script_runner, "doc", "--verify").stderr


@pytest.mark.parametrize("flags", [[], ["--verify"]])
@pytest.mark.parametrize("view", [["--jsonpath", "$.a[3]"], ["--head", "1"], ["--introspect"]])
def test_an_edited_type_is_a_damaged_card(script_runner, store_dir, flags, view):
    doc = json.dumps({"a": list(range(400))}, indent=1).encode()
    HandleStore(store_dir).put_bytes(doc, name="doc")
    assert ok(read(script_runner, "doc", "--jsonpath", "$.a[3]")) == "[\n3\n]\n"
    _set_card(store_dir, "doc", type="jsonl")  # was: --jsonpath answered [] with exit 0
    r = read(script_runner, "doc", *view, *flags)
    _one_damaged_line(r)
    assert "its 'type' is jsonl, the payload reads as json" in r.stderr


@pytest.mark.parametrize(
    ("data", "edited", "views"),
    [
        (b'{"a": 1}\n{"a": 2}\n{"a": 3}\n', "json", [["--jsonpath", "$[0]"], ["--verify"]]),
        (b"hello world\n" * 50, "json", [["--head", "1"], ["--jsonpath", "$"]]),
        (b"hello world\n" * 50, "jsonl", [["--head", "1"], ["--verify"]]),
        (b"hello world\n" * 50, "binary", [["--head", "1"], ["--count"]]),
        (b"\0\1\2" * 300, "json", [["--head", "1"], ["--introspect"]]),
    ],
)
def test_a_type_the_payload_cannot_have_is_a_damaged_card(
    script_runner, store_dir, data, edited, views
):
    HandleStore(store_dir).put_bytes(data, name="doc")
    _set_card(store_dir, "doc", type=edited)
    for view in views:
        r = read(script_runner, "doc", *view)
        _one_damaged_line(r)
        assert f"its 'type' is {edited}, the payload reads as" in r.stderr


def test_a_type_ctx_stash_gives_is_no_damage(script_runner, store_dir):
    # text is any payload's; one line of JSON is JSON Lines too (ctx-stash --type jsonl)
    store = HandleStore(store_dir)
    store.put_bytes(b'{"a": [1, 2, 3, 4]}\n', name="one", type="jsonl")
    store.put_bytes(b'{"a": [1, 2, 3, 4]}\n', name="txt", type="text")
    assert ok(read(script_runner, "one", "--jsonpath", "$[0].a[3]", "--verify")) == "[\n4\n]\n"
    assert ok(read(script_runner, "txt", "--jsonpath", "$.a[3]")) == "[\n4\n]\n"


# --- --jsonpath on input that is not JSON (issue 21, item 14) ---------------------------------


@pytest.mark.script_launch_mode("inprocess")  # an endless stdin: only a stream can be that
def test_jsonpath_on_an_endless_log_fails_at_its_first_bytes(script_runner):
    from helpers import endless_stdin

    stdin = endless_stdin(b"2026-12-01 10:00:00 INFO src/app.py: request served\n")
    r = script_runner.run(["ctx-read", "--jsonpath", "$[0]"], stdin=stdin)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (
        "ctx-read: error: stdin is not valid JSON at line 1, column 5: unexpected content "
        "after document\n"
    )
    assert stdin.buffer.raw.given <= 1 << 20  # was: spooled to its end first


def test_jsonpath_on_a_big_stored_log_fails_at_its_first_bytes(script_runner, store_dir):
    big = b"2026-12-01 10:00:00 INFO src/app.py: request served\n" * 100_000  # 5 MB
    HandleStore(store_dir).put_bytes(big, name="biglog")
    r = read(script_runner, "biglog", "--jsonpath", "$[0]")
    assert r.returncode == 1
    assert "is not valid JSON at line 1, column 5: unexpected content after document" in r.stderr


def test_json_is_the_read_as_one_document(script_runner):
    """Issue 28.9: --json on ctx-read too: the text shown, how to go on, the notes."""
    import io
    import json

    data = "".join(f"line {i}\n" for i in range(1, 401))
    r = script_runner.run(["ctx-stash", "--name", "j", "--always"], stdin=io.StringIO(data))
    assert r.returncode == 0, r.stderr
    ref = json.loads(r.stdout)["ref"]
    r = script_runner.run(["ctx-read", "j", "--range", "2-3", "--json"])
    assert r.returncode == 0
    assert json.loads(r.stdout) == {
        "ref": ref,
        "projection": "--range",
        "text": "line 2\nline 3\n",
        "next": None,
        "notes": [],
    }
    plain = script_runner.run(["ctx-read", "j", "--max-chars", "50"])
    cut = json.loads(script_runner.run(["ctx-read", "j", "--max-chars", "50", "--json"]).stdout)
    assert plain.stdout == cut["text"] + cut["next"] + "\n"
    assert "--range" in cut["next"]


def test_a_file_given_for_a_handle_is_said_to_be_one(script_runner, tmp_path, log):
    # `ctx-read build.log` said "no handle", `ctx-read ./build.log` "invalid session '.'"
    # and `ctx-read /tmp/build.log` "bad handle reference": three errors, none saying why.
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "build.log").write_bytes(LOG)
    (tmp_path / "build.log").write_bytes(LOG)
    cases = [
        ("logs/build.log", 1, "no handle logs/build.log"),
        ("./logs/build.log", 2, "bad handle reference"),  # (three parts)
        ("./build.log", 2, "invalid session '.'"),
        (str(tmp_path / "logs" / "build.log"), 2, "bad handle reference"),
    ]
    for ref, status, said in cases:
        r = script_runner.run(["ctx-read", ref], cwd=tmp_path)
        assert r.returncode == status, r.stderr
        assert r.stderr.startswith(f"ctx-read: error: {said}"), r.stderr
        assert (f"({ref} is a file, and ctx-read reads stored handles: ctx-read < {ref} reads "
                f"it, ctx-stash --name NAME < {ref} stores it") in r.stderr
        assert r.stderr.count("\n") == 1
    # a handle of that name wins over the file; a name that is neither keeps its hint
    (tmp_path / "log").write_bytes(b"the file\n")
    r = script_runner.run(["ctx-read", "log", "--head", "1"], cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == LOG.splitlines(keepends=True)[0].decode()
    r = script_runner.run(["ctx-read", "nope"], cwd=tmp_path)
    assert r.stderr == ("ctx-read: error: no handle default/nope (ctx-stash --list shows the "
                        "handles of a session)\n")
