"""ctxtools.read: which projection a read asks for, its words checked, and its view."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxtools import projections as pj
from ctxtools.errors import UsageError
from ctxtools.read import ReadRequest, view
from ctxtools.store import open_bytes

DATA = Path(__file__).resolve().parents[1] / "data"
JAVA = (DATA / "excerpt" / "LruCache.java").read_bytes()
CJK = "第一行\n第二行 ошибка\n第三行\n".encode()


@pytest.mark.parametrize(
    ("kw", "what"),
    [
        ({}, None),
        ({"slice": "0:10"}, "--slice"),
        ({"range": "2-3"}, "--range"),
        ({"head": 0}, "--head"),
        ({"tail": 3}, "--tail"),
        ({"grep": "x", "range": "1-9"}, "--grep"),  # --range is --grep's scope
        ({"count": True}, "--count"),
        ({"jsonpath": "$.a", "paths": True, "skip": 1, "dialect": "ng"}, "--jsonpath"),
        ({"introspect": True}, "--introspect"),
        ({"slice": "1:2", "unit": "lines", "number": True}, "--slice"),
    ],
)
def test_the_projection_asked_for(kw, what):
    assert ReadRequest(**kw).projection() == what


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"head": 1, "tail": 1}, "--head and --tail cannot be combined (one projection a read)"),
        (
            {"slice": "0:1", "range": "1-2", "count": True},
            "--slice and --range and --count cannot be combined (one projection a read)",
        ),
        ({"context": 2}, "-C and -i go with --grep"),
        ({"head": 1, "ignore_case": True}, "-C and -i go with --grep"),
        ({"paths": True}, "--paths, --skip and --dialect go with --jsonpath"),
        ({"grep": "x", "dialect": "ng"}, "--paths, --skip and --dialect go with --jsonpath"),
        ({"grep": "x", "number": True}, "-n numbers line projections; --grep does not take it"),
        ({"count": True, "number": True}, "-n numbers line projections; --count does not take it"),
        ({"head": 2, "unit": "lines"}, "--unit goes with --slice"),
        ({"head": -1}, "--head -1: must be 0 or more"),
        ({"grep": "x", "context": -2}, "--context -2: must be 0 or more"),
    ],
)
def test_words_that_do_not_go_together(kw, message):
    with pytest.raises(UsageError) as exc:
        ReadRequest(**kw).projection()
    assert str(exc.value) == message and exc.value.exit_status == 2


@pytest.mark.parametrize("kw", [{"range": "0-3"}, {"range": "9-2"}, {"slice": "a:b"}])
def test_bad_ranges_and_slices_are_refused_before_a_read(kw):
    with pytest.raises(UsageError):
        ReadRequest(**kw).projection()


def _view(data: bytes, **kw) -> str:
    req = ReadRequest(**kw)
    with open_bytes(data) as p:
        return view(p, req, req.projection(), max_chars=12000, nxt=pj.next_for("x")).text()


def test_each_view_is_the_projection_it_names():
    lines = JAVA.decode().splitlines(keepends=True)
    assert _view(JAVA) == JAVA.decode()
    assert _view(JAVA, head=2) == "".join(lines[:2])
    assert _view(JAVA, tail=2) == "".join(lines[-2:])
    assert _view(JAVA, range="3-4") == "".join(lines[2:4])
    assert _view(JAVA, slice="0:5") == JAVA.decode()[:5]
    assert _view(JAVA, slice="1:2", unit="lines") == lines[1]
    assert _view(CJK, head=1, number=True) == "     1\t第一行\n"


def test_grep_and_jsonpath_views():
    assert _view(CJK, grep="ошибка") == "2:第二行 ошибка\n"
    assert _view(CJK, grep="ОШИБКА", ignore_case=True, context=1) == (
        "1-第一行\n2:第二行 ошибка\n3-第三行\n"
    )
    assert _view(CJK, grep="行", range="3-3") == "3:第三行\n"
    doc = b'{"tests": [{"name": "a", "ok": false}, {"name": "b", "ok": true}]}'
    assert _view(doc, jsonpath="$.tests[?@.ok == false].name") == '[\n"a"\n]\n'
    assert (
        _view(doc, jsonpath="$.tests[*].name", paths=True, skip=1)
        == "[\n\"$['tests'][1]['name']\"\n]\n"
    )


def test_a_cut_view_names_the_next_command():
    req = ReadRequest(head=1000)
    with open_bytes(JAVA) as p:
        out = view(p, req, req.projection(), max_chars=200, nxt=pj.next_for("ctx:s/j", 200))
    text = out.text()
    assert len(text) < len(JAVA.decode()) and "ctx-read ctx:s/j" in text
