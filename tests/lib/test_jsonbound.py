"""Input that must be JSON, read within bounds (ctxtools.jsonbound; issue 21, item 14):
judged from its first bytes, one document parsed only up to a size."""

from __future__ import annotations

import io
import json

import pytest
from helpers import Endless

from ctxtools import jsonbound
from ctxtools.errors import InputError

SNIFF = jsonbound.JSON_SNIFF_BYTES
LOG = b"".join(
    f"2026-12-01T10:00:{i % 60:02d} INFO src/app.py: step {i}\n".encode() for i in range(20_000)
)
DOC = json.dumps(
    [
        {"role": "user", "content": f"step {i}: caf\u00e9 \u65e5\u672c {'x' * 40}"}
        for i in range(4000)
    ]
).encode()


def _problem(head: bytes, **kw):
    return jsonbound.head_problem(head[:SNIFF], len(head) <= SNIFF, **kw)


def test_a_log_is_not_json_from_its_fifth_byte():
    p = _problem(LOG)
    assert (p.lineno, p.colno, p.msg) == (1, 5, "unexpected content after document")
    p = _problem(b"[INFO] server started\n" * 5000)
    assert (p.lineno, p.colno) == (1, 2)
    p = _problem(b"\n\n  2026-12-01 x\n" * 5000, containers=True)
    assert (p.lineno, p.colno, p.msg) == (3, 3, "expected '{' or '[' (a JSON object or array)")


@pytest.mark.parametrize("cut", [SNIFF - 1, SNIFF, SNIFF + 1, SNIFF + 2])
def test_json_cut_anywhere_by_the_sniff_is_not_blamed_for_the_cut(cut):
    # A head ends mid-string, mid-number, mid-escape or inside a multibyte character.
    for doc in (DOC, json.dumps(DOC.decode()).encode(), json.dumps(list(range(30_000))).encode()):
        head = doc[:cut][:SNIFF]
        assert jsonbound.head_problem(head, False) is None, head[-20:]


def test_json_lines_and_what_only_the_json_module_reads_may_be_json():
    lines = b"".join(
        json.dumps({"role": "user", "content": str(i)}).encode() + b"\n" for i in range(5000)
    )
    assert _problem(lines) is None
    assert jsonbound.looks_like_lines(lines[:SNIFF])
    assert not jsonbound.looks_like_lines(DOC[:SNIFF])
    big_int = b'[{"n": ' + b"9" * 30 + b"}, " + b'{"s": "\\ud800"}, ' * 5000
    assert _problem(big_int) is None  # orjson refuses both, the transcript parser does not


def test_read_json_reads_only_the_head_of_an_input_that_is_not_json():
    stream = io.BufferedReader(Endless(b"2026-12-01 INFO x\n"))
    with pytest.raises(InputError, match=r"line 1, column 5"):
        jsonbound.read_json(
            stream, "stdin", lambda p: InputError(f"line {p.lineno}, column {p.colno}")
        )
    assert stream.raw.given <= 1 << 20


def test_one_document_is_refused_past_the_limit_and_json_lines_are_not():
    with pytest.raises(InputError) as info:
        jsonbound.read_json(io.BytesIO(DOC), "t.json", ValueError, limit=100_000)
    assert str(info.value) == (
        "t.json: one JSON document over 100,000 bytes is not parsed (the limit) "
        "(give JSON Lines (one value a line), or split it)"
    )
    lines = b"".join(json.dumps(m).encode() + b"\n" for m in json.loads(DOC))
    assert len(lines) > 100_000
    assert jsonbound.read_json(io.BytesIO(lines), "t.jsonl", ValueError, limit=100_000) == lines
    assert jsonbound.read_json(io.BytesIO(DOC), "t.json", ValueError) == DOC  # under 256 MiB
    small = b"not json at all"
    assert jsonbound.read_json(io.BytesIO(small), "x", ValueError) == small  # its parser says
