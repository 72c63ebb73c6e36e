"""ctx-count --head, --tail and --ids read in pieces (``ctxtools.tokens.ids``'s stream
functions): the same bytes and ids as one encoding of the whole text, in memory bounded by
the tokens asked for, not by the input.

The oracle is the whole text at once: ``ids.head``/``ids.tail`` of all the bytes, and
``ids.encode`` of all of them decoded. The cutter's sizes are made small, as in
``test_cutting``, so that texts of some tens of KB are cut into many pieces and every kind
of cut (rules, runs, windows) falls inside them.
"""

from __future__ import annotations

import io
import itertools
import random
import tracemalloc

import pytest
from helpers import DATA, Endless, small_cutter

from ctxtools.tokens import get_ruler, ids

ENCODINGS = ["cl100k_base", "o200k_base"]
CHUNK = 3_000  # bytes a piece here (1 MiB in a run)


@pytest.fixture
def small(monkeypatch):
    small_cutter(monkeypatch)
    monkeypatch.setattr(ids, "TAIL_WINDOW", 2_000)


def real_text() -> bytes:
    """Real files of several languages, a build log in Chinese and Japanese with Latin-1
    bytes in it, and bytes that are not UTF-8: lone, and a CJK character cut short."""
    parts = [(DATA / "golden" / "inputs" / "build.log").read_bytes()]
    parts += [p.read_bytes() for p in sorted((DATA / "excerpt").iterdir())]
    parts.append(("这是中文，有标点。日本語の文です。한국어 문장입니다.\n" * 40).encode())
    parts.append(b"caf\xe9 cr\xe8me \xff\xfe tail\n\xe4\xb8 cut \xe4\xb8\xad\xe6\n")
    return b"".join(parts) * 3


def shapes() -> dict[str, bytes]:
    rng = random.Random(7)
    return {
        "real": real_text(),
        "one letter": b"a" * 20_000 + b"\n",
        "zeros": bytes(20_000),
        "cjk without punctuation": ("日本語の文章です中文没有标点符号" * 800).encode(),
        "spaces and newlines": b" " * 9_000 + b"x" + b"\n" * 5_000 + b"y" + b" \n" * 3_000,
        "digits": b"1" * 20_000 + b"x" + b"1234567890" * 2_000,
        "invalid utf-8 runs": b"\xff" * 5_000 + b"ok " + b"\xe4\xb8" * 2_000 + b"\x80" * 3_000,
        "random bytes": rng.randbytes(20_000),
        "emoji": "🎉".encode() * 6_000,
        "": b"",
    }


def whole_ids(ruler, data: bytes) -> list[int]:
    return ids.encode(ruler, data.decode("utf-8", "replace"))


@pytest.mark.parametrize("name", ENCODINGS)
def test_the_ids_of_real_text_are_one_encoding_of_the_whole(name):
    """Real text in the pieces of a real run (1 MiB): byte-identical ids, nothing inexact."""
    ruler = get_ruler(encoding=name).ruler
    data = real_text() * 40  # about 2.4 MB: three pieces
    notes: list[str] = []
    got = list(itertools.chain.from_iterable(ids.iter_ids(ruler, io.BytesIO(data), notes)))
    assert notes == []
    assert got == whole_ids(ruler, data)


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("shape", sorted(shapes()))
def test_ids_in_pieces_are_the_ids_of_the_whole(small, name, shape):
    ruler = get_ruler(encoding=name).ruler
    data = shapes()[shape]
    notes: list[str] = []
    got = list(
        itertools.chain.from_iterable(ids.iter_ids(ruler, io.BytesIO(data), notes, chunk=CHUNK))
    )
    if not notes:  # a place that could not be cut exactly says so (emoji: one pre-token)
        assert got == whole_ids(ruler, data)
    else:
        assert shape == "emoji"


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("shape", sorted(shapes()))
@pytest.mark.parametrize("n", [0, 1, 7, 2_500, 10**9])
def test_head_and_tail_of_a_stream_are_those_of_the_whole(small, tmp_path, name, shape, n):
    ruler = get_ruler(encoding=name).ruler
    data = shapes()[shape]
    notes: list[str] = []
    head = ids.head_of(ruler, io.BytesIO(data), n, notes, chunk=CHUNK)
    tail = ids.tail_of(ruler, io.BytesIO(data), n, notes, chunk=CHUNK)  # a pipe: read through
    f = tmp_path / "input"
    f.write_bytes(data)
    with open(f, "rb") as fh:  # a file: read from its end
        tail_of_file = ids.tail_of(ruler, fh, n, notes, chunk=CHUNK)
    if notes:
        assert shape == "emoji"
        return
    assert head == ids.head(ruler, data, n)
    assert tail == ids.tail(ruler, data, n)
    assert tail_of_file == tail


@pytest.mark.parametrize("name", ENCODINGS)
def test_allowed_special_tokens_are_never_cut(small, tmp_path, name):
    """With --allow-special, "<|endoftext|>" is one token: no piece ends inside one."""
    ruler = get_ruler(encoding=name, allow_special=True).ruler
    data = b"<|endoftext|>" * 700 + b" a <|fim_prefix|>b\n" * 300 + real_text()
    f = tmp_path / "input"
    f.write_bytes(data)
    notes: list[str] = []
    got = ids.iter_ids(ruler, io.BytesIO(data), notes, chunk=CHUNK)
    assert list(itertools.chain.from_iterable(got)) == whole_ids(ruler, data)
    for n in (3, 1_000, 9_000):
        assert ids.head_of(ruler, io.BytesIO(data), n, notes, chunk=CHUNK) == ids.head(
            ruler, data, n
        )
        with open(f, "rb") as fh:
            assert ids.tail_of(ruler, fh, n, notes, chunk=CHUNK) == ids.tail(ruler, data, n)
    assert notes == []


def test_head_of_an_endless_input_reads_about_its_first_tokens():
    ruler = get_ruler().ruler
    line = b"2026-12-01 10:00:00 INFO src/app.py: request served in 12 ms\n"
    for n in (5, 20_000):
        endless = Endless(line, limit=16 << 20)
        out = ids.head_of(ruler, endless, n, [])
        assert out == ids.head(ruler, line * (n // 10 + 2), n)
        assert endless.given <= max(1 << 20, 8 * len(out))


def test_ids_of_an_endless_input_come_in_pieces():
    ruler = get_ruler().ruler
    endless = Endless(b"\0", limit=64 << 20)  # as /dev/zero
    pieces = ids.iter_ids(ruler, endless, [])
    got = sum(len(p) for p in itertools.islice(pieces, 12))
    assert got > 0 and endless.given <= 24 << 20


LOG_LINE = b"2026-12-01 10:00:00 WARN \xe8\xad\xa6\xe5\x91\x8a: retry \xff 3 of 5\n"


class _Log(io.RawIOBase):
    """LINES log lines, made as they are read (nothing holds them whole)."""

    def __init__(self, lines: int):
        self.left = lines * len(LOG_LINE)

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        n = min(len(buf), self.left)
        at = -self.left % len(LOG_LINE)  # where in a line the next byte is
        buf[:n] = (LOG_LINE * (n // len(LOG_LINE) + 2))[at : at + n]
        self.left -= n
        return n


def test_tail_of_a_pipe_keeps_only_its_end():
    """A pipe is read through: its last pieces are kept, not the whole input (one encoding
    of which takes some 40 bytes of memory a byte): four times the input, the same peak."""
    ruler = get_ruler().ruler
    peaks = []
    for lines in (10_000, 40_000):  # 0.5 and 2 MB
        tracemalloc.start()
        try:
            out = ids.tail_of(ruler, io.BufferedReader(_Log(lines)), 4, [], chunk=1 << 14)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert out == ids.tail(ruler, LOG_LINE * 20, 4)
    assert peaks[1] < 1.5 * peaks[0] and peaks[1] < 40_000 * len(LOG_LINE) // 2


def test_tail_of_a_file_reads_its_end(tmp_path):
    ruler = get_ruler().ruler
    f = tmp_path / "big.log"
    line = b"2026-12-01 10:00:00 INFO \xe8\xad\xa6: served\n"
    f.write_bytes(line * 200_000)

    class Counted(io.FileIO):
        given = 0

        def read(self, n=-1):
            data = super().read(n)
            self.given += len(data)
            return data

    with Counted(f, "r") as fh:
        out = ids.tail_of(ruler, fh, 3, [])
        assert fh.given < 1 << 20
    assert out == ids.tail(ruler, line * 10, 3)
