"""How ctx-compact writes JSON (``compact.jsonout``): orjson's bytes of the whole, byte for
byte, written a message at a time and without leaving a UTF-8 copy in the texts."""

from __future__ import annotations

import json
import sys

import orjson
import pytest

from ctxtools.compact import jsonout
from ctxtools.compact.transcript import dump, dumps_message, load
from ctxtools.count import report

MESSAGES = [
    {"role": "system", "content": "Be brief. ✓"},
    {"role": "user", "content": "héllo 🚀 \u2028 \\ \"q\" \x00", "n": 1.5, "ok": True, "x": None},
    {"role": "assistant", "content": [{"type": "text", "text": "日本語"}], "id": 2**63 - 1},
    {"role": "user", "content": []},
]


@pytest.mark.parametrize(
    "wrapper",
    [
        None,
        {},
        {"messages": []},
        {"model": "gpt-4o", "messages": [], "system": "s ✓", "tools": [{"d": "é"}]},
        {"messages": [], "temperature": 0.2},
        {"model": "m"},  # no "messages" key yet: it goes last, as dict assignment puts it
    ],
)
@pytest.mark.parametrize("stdjson", [False, True])
def test_a_list_or_object_of_messages_is_the_whole_dump_byte_for_byte(wrapper, stdjson):
    whole: object = MESSAGES if wrapper is None else {**wrapper, "messages": MESSAGES}
    if stdjson:
        expected = json.dumps(whole, ensure_ascii=False, separators=(",", ":")).encode()
    else:
        expected = orjson.dumps(whole)
    got = jsonout.dumps_with_list(wrapper, "messages", MESSAGES, stdjson)
    assert got == expected + b"\n"
    for items in ([], MESSAGES[:1]):  # no message, one
        whole = items if wrapper is None else {**wrapper, "messages": items}
        want = orjson.dumps(whole) if not stdjson else json.dumps(
            whole, ensure_ascii=False, separators=(",", ":")
        ).encode()
        assert jsonout.dumps_with_list(wrapper, "messages", items, stdjson) == want + b"\n"


def test_every_shape_dumps_as_before():
    """``transcript.dump`` in each shape: what one orjson.dumps of the whole gave."""
    for data, expected in (
        (orjson.dumps(MESSAGES), orjson.dumps(MESSAGES) + b"\n"),
        (
            orjson.dumps({"model": "x", "messages": MESSAGES, "z": 1}),
            orjson.dumps({"model": "x", "messages": MESSAGES, "z": 1}) + b"\n",
        ),
        (
            b"\n".join(orjson.dumps(m) for m in MESSAGES),
            b"".join(orjson.dumps(m) + b"\n" for m in MESSAGES),
        ),
    ):
        tr = load(data)
        assert dump(tr) == expected
    assert dumps_message(MESSAGES[1]) == orjson.dumps(MESSAGES[1])


def test_writing_leaves_the_texts_as_they_were():
    """orjson writes a str that is not ASCII through CPython's UTF-8 cache, kept in the
    str while it lives: every message written (the dropped span's stash, the output) kept
    a copy of its text. They are written from copies."""
    text = "✓ passed, 3 → 4 " * 500
    msgs = [{"role": "tool", "tool_call_id": "c", "content": text}]
    size = sys.getsizeof(text)
    expected = orjson.dumps([{**msgs[0], "content": text.encode().decode()}])  # (a copy)
    tr = load(expected)
    assert dump(tr, msgs) == expected + b"\n"
    assert dumps_message(msgs[0]) + b"\n" == jsonout.dumps_lines(msgs, False)
    assert sys.getsizeof(text) == size


def test_a_transcripts_characters_are_counted_a_block_at_a_time():
    """--messages counts the characters of the file without decoding it whole; a character
    across a block's end and bad bytes count as a whole decode counts them."""
    block = 1 << 20
    data = b"a" * (block - 1) + "✓".encode() + b"\xff\xfe" + "日本".encode() * 1000 + b"\xe2\x9c"
    assert report._chars(data) == len(data.decode("utf-8", "replace"))
    assert report._chars(b"") == 0
