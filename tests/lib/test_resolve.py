"""ctxtools.resolve: a reference, a card (as an argument or on stdin), or stdin content."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ctxtools.errors import IntegrityError, NotFoundError, StaleHandleError, UsageError
from ctxtools.resolve import (
    CARD_PEEK,
    HandleReader,
    card_ref,
    is_handle_ref,
    log_read,
    open_input,
    read_head,
)
from ctxtools.store import HandleStore, parse_ref

DATA = Path(__file__).resolve().parents[1] / "data"
SOURCE = (DATA / "excerpt" / "lexer.rs").read_bytes()
CJK = "日本語のテキスト\n第二行\n".encode() + b"\xff\xfe broken\n"


@pytest.fixture
def store(store_dir) -> HandleStore:
    return HandleStore(store_dir)


@pytest.fixture
def card(store) -> dict:
    return store.put_stream(io.BytesIO(SOURCE), name="lexer", session="s1")


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _stdin(data: bytes):
    calls = []

    def opener():
        calls.append(1)
        return io.BytesIO(data)

    return opener, calls


class _Opened:
    def __init__(self, pair):
        self.payload, self.ref = pair


def _text(opened) -> bytes:
    with opened.payload as p:
        return b"".join(p.iter_bytes())


def test_handle_refs_are_told_from_file_names():
    assert is_handle_ref("ctx:s1/lexer")
    assert not is_handle_ref("lexer.rs") and not is_handle_ref("./ctx:x")


def test_read_head_says_whether_the_stream_ended():
    assert read_head(io.BytesIO(b"abcdef"), 4) == (b"abcd", False)
    assert read_head(io.BytesIO(b"abc"), 4) == (b"abc", True)
    assert read_head(io.BytesIO(b""), 4) == (b"", True)
    # exactly LIMIT bytes: not known to have ended (the next read would tell)
    assert read_head(io.BytesIO(b"abcd"), 4) == (b"abcd", False)


def test_card_ref_takes_a_reference_or_a_card(card):
    assert card_ref("ctx:s1/lexer") == "ctx:s1/lexer"
    assert card_ref(json.dumps(card)) == card["ref"]
    assert card_ref("  " + json.dumps(card)) == card["ref"]


@pytest.mark.parametrize("text", ['{"kind": "other"}', "{not json", '{"kind": "handle"}'])
def test_json_that_is_not_a_card_is_a_usage_error(text):
    with pytest.raises(UsageError) as exc:
        card_ref(text)
    assert str(exc.value) == "REF looks like JSON but is not a handle card"
    assert exc.value.exit_status == 2


def test_open_input_by_reference_does_not_read_stdin(store, card):
    opener, calls = _stdin(b"ignored")
    opened = _Opened(open_input(store, "lexer", session="s1", verify=False, stdin=opener))
    assert opened.ref == card["ref"] and _text(opened) == SOURCE
    assert calls == []


def test_open_input_by_card_argument_and_card_on_stdin(store, card):
    as_arg = _Opened(open_input(store, json.dumps(card), session="other", verify=True, stdin=None))
    assert as_arg.ref == card["ref"] and _text(as_arg) == SOURCE
    for ref in (None, "-"):
        opener, calls = _stdin(json.dumps(card).encode() + b"\n")
        on_stdin = _Opened(open_input(store, ref, session="default", verify=False, stdin=opener))
        assert on_stdin.ref == card["ref"] and _text(on_stdin) == SOURCE
        assert calls == [1]


def test_open_input_does_not_log_the_read(store, card, store_dir):
    before = _snapshot(store_dir)
    opened = _Opened(open_input(store, "s1/lexer", session="default", verify=False, stdin=None))
    _text(opened)
    assert _snapshot(store_dir) == before
    log_read(store, opened.payload)
    assert store.entries("s1")[0]["access_count"] == 1


@pytest.mark.parametrize(
    "data",
    [
        CJK,
        b"",
        b'{"kind": "other", "ref": "ctx:s1/lexer"}\n',
        b"{" + b" " * CARD_PEEK + b"}",  # JSON, but too long to be a card: content
    ],
)
def test_stdin_that_is_not_a_card_is_the_content(store, card, data, store_dir):
    before = _snapshot(store_dir)
    opener, _ = _stdin(data)
    opened = _Opened(open_input(store, None, session="s1", verify=False, stdin=opener))
    assert opened.ref is None and _text(opened) == data
    log_read(store, opened.payload)  # stdin content is no handle: nothing is logged
    assert _snapshot(store_dir) == before


def test_a_card_too_long_for_the_peek_is_content(store, card):
    padded = json.dumps(card).encode() + b" " * CARD_PEEK
    opener, _ = _stdin(padded)
    opened = _Opened(open_input(store, None, session="s1", verify=False, stdin=opener))
    assert opened.ref is None and _text(opened) == padded


def test_verify_on_stdin_content_is_a_usage_error(store, store_dir):
    opener, _ = _stdin(b"plain text")
    with pytest.raises(UsageError) as exc:
        _Opened(open_input(store, None, session="s1", verify=True, stdin=opener))
    assert str(exc.value) == (
        "--verify checks a stored handle; stdin content has nothing to verify"
    )
    assert not store_dir.exists()  # nothing was created


def test_unknown_stale_and_corrupt_handles(store, card, store_dir):
    with pytest.raises(NotFoundError):
        _Opened(open_input(store, "nosuch", session="s1", verify=False, stdin=None))
    store.put_stream(io.BytesIO(SOURCE + b"// v2\n"), name="lexer", session="s1")
    with pytest.raises(StaleHandleError):
        _Opened(open_input(store, card["ref"], session="s1", verify=False, stdin=None))
    blob = store.blob_path(store.record(parse_ref("ctx:s1/lexer"))["sha256"])
    blob.write_bytes(blob.read_bytes()[:-3] + b"XX\n")
    before = _snapshot(store_dir)
    with pytest.raises(IntegrityError):
        _Opened(open_input(store, "s1/lexer", session="s1", verify=True, stdin=None))
    assert _snapshot(store_dir) == before


def test_handle_reader_opens_the_store_at_the_first_read(store_dir, monkeypatch):
    monkeypatch.setenv("CTX_SESSION", "s2")
    HandleStore(store_dir).put_stream(io.BytesIO(CJK), name="notes", session="s2")
    reader = HandleReader(None, None)  # CTX_STORE and CTX_SESSION
    assert reader.read_bytes("notes") == CJK
    assert isinstance(reader.store, HandleStore) and reader.store.root == store_dir
    assert HandleReader(str(store_dir), "s2").read_bytes("ctx:s2/notes") == CJK
    with pytest.raises(NotFoundError):
        HandleReader(store_dir, "s1").read_bytes("notes")
