"""ctxtools.secrets.blocks: key blocks found in a whole payload, and the payload read
through a copy without them, so that a slice of a block's middle lines shows nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxtools.secrets import blocks
from ctxtools.secrets.blocks import key_blocks, redacted_payload
from ctxtools.store import open_bytes

KEYS = Path(__file__).parents[1] / "data" / "secrets"
RSA = (KEYS / "rsa_traditional.pem").read_text(encoding="ascii")
EC = (KEYS / "ec.pem").read_text(encoding="ascii")
BODY = re.compile(r"^[A-Za-z0-9+/=]{16,}$", re.M)


def _log(*keys: str, lines: int = 30) -> bytes:
    parts = [f"step {i}: compiling módulo {i} … ok\n" for i in range(lines)]
    for k, key in enumerate(keys):
        parts.insert(5 + k * 10, key)
    return "".join(parts).encode()


def test_blocks_are_found_with_their_byte_spans():
    data = _log(RSA, EC)
    got = key_blocks(lambda at, n: data[at : at + n], len(data))
    assert [kind for _s, _e, kind in got] == ["private key", "private key"]
    for (start, end, _k), key in zip(got, (RSA, EC), strict=True):
        assert data[start:end].decode() == key.rstrip("\n")


@pytest.mark.parametrize("piece", [64, 100, 1 << 20])
def test_a_block_across_the_search_pieces_is_found(monkeypatch, piece):
    monkeypatch.setattr(blocks, "PIECE", piece)
    data = _log(RSA, lines=40)
    got = key_blocks(lambda at, n: data[at : at + n], len(data))
    assert len(got) == 1 and data[got[0][0] : got[0][1]].startswith(b"-----BEGIN RSA")


def test_the_copy_keeps_every_line_and_number_and_shows_no_key_line():
    data = _log(RSA, EC)
    with open_bytes(data, label="build.log") as payload:
        copy, note = redacted_payload(payload)
        with copy:
            text = copy.pread(0, copy.size).decode()
            assert copy.lines == payload.lines and copy.label == "build.log"
    assert note == "redacted 2 blocks of the payload (private key): read as blank lines"
    assert not BODY.search(text) and "PRIVATE KEY" not in text
    assert text.count("[secret redacted: private key]") == 2
    # every line outside the blocks is where it was
    old, new = data.decode().splitlines(), text.splitlines()
    assert len(old) == len(new)
    assert [a for a, b in zip(old, new, strict=True) if a != b and b] == [
        "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----"]


def test_a_payload_without_a_key_is_read_as_it_is():
    cert = (KEYS / "cert.pem").read_bytes()
    for data in (_log(), cert, b"", b"PRIVATE KEY is a phrase here\n" * 3):
        with open_bytes(data) as payload:
            assert redacted_payload(payload) == (None, None)



def test_blocks_side_by_side_and_one_late_in_a_window_are_each_found_whole(monkeypatch):
    # Each block is taken from the window its own BEGIN starts: one that begins near the end
    # of another's window is not cut there.
    monkeypatch.setattr(blocks, "WINDOW", 2000)
    monkeypatch.setattr(blocks, "SPAN_MAX", 900)  # more than a block (887 bytes)
    data = ("x\n" * 3 + RSA + EC + "y\n" * 2 + RSA).encode()
    got = key_blocks(lambda at, n: data[at : at + n], len(data))
    assert [data[s:e].decode() for s, e, _k in got] == [
        RSA.rstrip("\n"), EC.rstrip("\n"), RSA.rstrip("\n")]


def test_blank_key_blocks_keeps_the_lines_of_a_file_and_nothing_of_its_keys():
    data = _log(RSA, EC)
    out, n = blocks.blank_key_blocks(data)
    assert n == 2 and out.count(b"\n") == data.count(b"\n") and not BODY.search(out.decode())
    assert out.count(b"[secret redacted: private key]") == 2
    plain = _log()
    assert blocks.blank_key_blocks(plain) == (plain, 0)


@pytest.mark.parametrize("block", [256, 700, 1 << 20])
def test_key_block_lines_of_a_streamed_text_find_each_block_once_across_pieces(block):
    import io

    from ctxtools.excerpt.source import pieces_of_stream

    text = "".join(f"line {i}\n" for i in range(1, 41)) + RSA + "after\n" + EC + "end\n"
    rsa_first = 41
    rsa_last = rsa_first + RSA.count("\n") - 1
    ec_first = rsa_last + 2
    got = blocks.key_block_lines(pieces_of_stream(io.BytesIO(text.encode()), block))
    assert got == [(rsa_first, rsa_last, "private key"),
                   (ec_first, ec_first + EC.count("\n") - 1, "private key")]
    lines = text.splitlines()
    assert lines[rsa_first - 1].startswith("-----BEGIN RSA") and lines[rsa_last - 1].startswith(
        "-----END RSA")


def test_known_blocks_are_not_searched_again_for_the_same_stored_payload(monkeypatch):
    # ctx-mcp pages a stored log part by part: its blocks are searched once, by SHA-256.
    calls = []
    real = blocks.key_blocks
    monkeypatch.setattr(blocks, "key_blocks", lambda *a: calls.append(1) or real(*a))
    known: dict = {}
    for data, sha in ((_log(RSA), "a" * 64), (_log(), "b" * 64)):
        for _ in range(3):
            with open_bytes(data) as payload:
                payload.record["sha256"] = sha
                copy, note = redacted_payload(payload, known)
                if copy is not None:
                    copy.close()
                assert (note is None) == (sha == "b" * 64)
    assert len(calls) == 2 and known["b" * 64] == [] and len(known["a" * 64]) == 1
    with open_bytes(_log(RSA)) as payload:  # no SHA-256 (stdin content): searched each time
        redacted_payload(payload, known)[0].close()
    assert len(calls) == 3


def test_a_text_dense_with_gates_is_read_by_the_rules_about_once(monkeypatch):
    # "PRIVATE KEY" on every line of a 5 MB log: each hit read a window of its own (500 KB
    # took a second). Now a window holds every block that begins before its last SPAN_MAX
    # bytes, and the next starts past them.
    import ctxtools.secrets.scan as scan

    scanned = []

    orig = scan.find_secrets
    monkeypatch.setattr(scan, "find_secrets", lambda t: scanned.append(len(t)) or orig(t))
    line = "warning: PRIVATE KEY not set for worker 7\n"
    data = (line * 120_000 + RSA + line * 1000).encode()
    got = key_blocks(lambda at, n: data[at : at + n], len(data))
    assert [data[s:e].decode() for s, e, _k in got] == [RSA.rstrip("\n")]
    assert sum(scanned) < 1.5 * len(data)
