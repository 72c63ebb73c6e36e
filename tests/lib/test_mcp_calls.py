"""ctxtools.mcp.calls: the next part of a read, worded as a read call."""

from __future__ import annotations

import json

import pytest

from ctxtools import projections as pj
from ctxtools.mcp.calls import CallNext, call_text, read_args
from ctxtools.store import open_bytes


def test_ctx_read_words_become_the_read_tools_arguments():
    words = ("--grep", "a|b", "-i", "-C", "2", "--range", "5-", "--max-chars", "300")
    assert read_args("ctx:s/n@abcd", words) == {
        "ref": "ctx:s/n@abcd",
        "grep": "a|b",
        "ignore_case": True,
        "context": 2,
        "range": "5-",
        "max_chars": 300,
    }
    assert read_args("r", ("--jsonpath", "$.x", "--paths", "--skip", "4")) == {
        "ref": "r",
        "jsonpath": "$.x",
        "paths": True,
        "skip": 4,
    }


def test_a_call_is_the_tool_then_its_arguments_as_json():
    line = call_text("read", {"ref": "x", "head": 2})
    assert line == 'read {"ref":"x","head":2}'
    assert json.loads(line.split(" ", 1)[1]) == {"ref": "x", "head": 2}


@pytest.mark.parametrize("max_chars", [pj.MAX_CHARS_DEFAULT, 120])
def test_a_cut_read_ends_with_the_call_that_shows_the_rest(max_chars):
    with open_bytes(
        b"".join(b"line %d\n" % i for i in range(100)), label="ctx:s/n@abcd"
    ) as payload:
        out = pj.lines_view(
            payload, 0, None, max_chars=min(max_chars, 120), nxt=CallNext("ctx:s/n@abcd", max_chars)
        )
    call = json.loads(out.trailer.split("next: read ", 1)[1].rstrip("]"))
    shown = out.body.count("\n")
    assert call["ref"] == "ctx:s/n@abcd" and call["range"] == f"{shown + 1}-"
    assert ("max_chars" in call) == (max_chars != pj.MAX_CHARS_DEFAULT)
