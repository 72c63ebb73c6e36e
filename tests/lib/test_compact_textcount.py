"""A message's text counted as plain ctx-count counts a text (``compact.textcount``).

One 20 MB message took 15 s and 1 GB to count (tiktoken encodes a long pre-token in about
50 bytes of memory a byte) while plain ctx-count counts the same text in 0.7 s and 90 MB:
a long text now goes through the same cutter (``tokens.stream.count_stream``), and its
count is the same number.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from helpers import small_cutter

import ctxtools
from ctxtools.compact import textcount
from ctxtools.compact.elide import MemoryStash
from ctxtools.compact.run import compact_transcript
from ctxtools.compact.stages import Options
from ctxtools.compact.transcript import MESSAGE_OVERHEAD, REPLY_PRIMING, TokenCounter, load
from ctxtools.count.messages import count_jsonl, count_transcript
from ctxtools.tokens import count_stream, get_ruler, stream

ENCODINGS = ["cl100k_base", "o200k_base"]
FRAMING = MESSAGE_OVERHEAD + REPLY_PRIMING  # one message and the reply's priming


def source_text(limit: int) -> str:
    """Real text: this toolkit's own source files, up to LIMIT characters."""
    out: list[str] = []
    size = 0
    for p in sorted(Path(ctxtools.__file__).parent.rglob("*.py")):
        out.append(p.read_text(encoding="utf-8"))
        size += len(out[-1])
        if size >= limit:
            break
    return "".join(out)[:limit]


def long_text() -> str:
    """A text with what tiktoken is slow on (a 3 MB run of one letter, runs of "=" and of
    blank lines) between real lines and CJK prose."""
    return (
        source_text(200_000)
        + "x" * 3_000_000
        + "\n"
        + "=" * 100_000
        + " \n" * 50_000
        + "这是中文，有标点。日本語の文です。\n" * 2_000
        + source_text(50_000)
    )


def plain_count(text: str, ruler) -> int:
    """Plain ctx-count's count of TEXT (its UTF-8 as a stream), which must be exact."""
    counts = count_stream(io.BytesIO(text.encode("utf-8")), ruler)
    assert counts.exact, counts.notes
    return counts.tokens


def spy_on(ruler, monkeypatch) -> list[int]:
    """The length of every text RULER.count is given from now on."""
    seen: list[int] = []
    real = ruler.count

    def count(text: str) -> int:
        seen.append(len(text))
        return real(text)

    monkeypatch.setattr(ruler, "count", count)
    return seen


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_long_message_counts_as_plain_ctx_count_counts_its_text(encoding, monkeypatch):
    """The tester's case, smaller: one long message. --messages and ctx-compact give the
    plain count of its text (plus the framing), and the ruler is never given the whole
    text: it is counted in the cutter's pieces (was: one call, 50 bytes a byte)."""
    ruler = get_ruler(encoding=encoding).ruler
    text = long_text()
    expected = plain_count(text, ruler) + FRAMING
    data = json.dumps([{"role": "user", "content": text}]).encode()
    seen = spy_on(ruler, monkeypatch)
    assert count_transcript(data, ruler).tokens == expected
    assert max(seen, default=0) <= 2 * stream.CHUNK_BYTES < len(text)
    line = (1, 0, json.dumps({"role": "user", "content": text}).encode())
    assert count_jsonl([line], ruler).tokens == expected  # JSON Lines, a message at a time
    run = compact_transcript(load(data), ruler, Options(limit=10**9), MemoryStash(), original=data)
    assert run.report()["tokens_before"] == expected and run.output == data
    assert run.notes == [] and max(seen) <= 2 * stream.CHUNK_BYTES


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_long_texts_count_as_tiktoken_counts_the_whole(encoding, monkeypatch):
    """Texts past LONG_TEXT, cut into many pieces and windows (the cutter's sizes made
    small), count what one encode of the whole gives: realistic text, runs, CJK, lone
    surrogates (the json module reads "\\ud800"; tiktoken reads it as U+FFFD)."""
    small_cutter(monkeypatch)
    monkeypatch.setattr(stream, "CHUNK_BYTES", 3_000)
    ruler = get_ruler(encoding=encoding).ruler
    texts = [
        source_text(60_000),
        "a" * 20_000 + "\n\n\n" + "-" * 9_000 + "end",
        "日本語の文章です中文没有标点符号" * 800,
        "ok \ud800 then \udc00\ud83d\ude00 and a pair split " * 300 + "\ud83d",
        "x" * (textcount.LONG_TEXT - 1) + "\ud800",
        " " * 5_000 + "\r\n" * 3_000 + "tail",
    ]
    for text in texts:
        assert textcount.is_long(text, ruler), len(text)
        repaired = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        expected = len(ruler.encoding.encode_ordinary(repaired))
        notes: list[str] = []
        assert textcount.count_text(text, ruler, notes) == expected
        assert notes == []
    counter = TokenCounter(ruler)
    counter.prefill(texts * 12)  # on two threads: the same counts
    assert [counter.text(t) for t in texts] == [textcount.count_text(t, ruler) for t in texts]


def test_short_texts_and_other_rulers_are_counted_by_one_call(monkeypatch):
    """Below LONG_TEXT characters, or with a ruler the cutter does not serve (the
    heuristic), a text is given to the ruler whole, as before."""
    ruler = get_ruler().ruler
    seen = spy_on(ruler, monkeypatch)
    short = source_text(textcount.LONG_TEXT - 1)
    assert TokenCounter(ruler).text(short) == len(ruler.encoding.encode_ordinary(short))
    assert seen == [len(short)]
    heuristic = get_ruler(heuristic=True).ruler
    text = "x" * 100_000
    assert not textcount.is_long(text, heuristic)
    assert TokenCounter(heuristic).text(text) == 25_000


UNPROVEN = "中" * 100 + "ABC" * 20_000  # o200k: capitals joined to a CJK letter


def test_a_count_not_proven_exact_is_made_again_whole_or_said(monkeypatch):
    """Where the cutter cannot prove a cut (o200k's capitals after a CJK letter), a text
    of up to RECOUNT characters is counted again whole: exact, as before. A longer one
    keeps the cutter's count, and --messages says why it is not exact, as ctx-count."""
    ruler = get_ruler(encoding="o200k_base").ruler
    whole = ruler.count(UNPROVEN)
    assert not count_stream(io.BytesIO(UNPROVEN.encode()), ruler).exact
    counter = TokenCounter(ruler)
    assert counter.text(UNPROVEN) == whole and counter.notes == []
    monkeypatch.setattr(textcount, "RECOUNT", 1_000)
    counter = TokenCounter(ruler)
    assert abs(counter.text(UNPROVEN) - whole) <= 5
    assert len(counter.notes) == 1 and "another script" in counter.notes[0]
    data = json.dumps([{"role": "user", "content": UNPROVEN}] * 2).encode()
    tc = count_transcript(data, ruler)
    assert tc.notes == tuple(counter.notes)  # each reason once
    row = tc.row(len(data), 1, len(data))
    assert row["exact"] is False and row["note"] == counter.notes[0]
    assert list(row)[:6] == ["tokens", "chars", "lines", "bytes", "messages", "format"]
    run = compact_transcript(load(data), ruler, Options(limit=10**9), MemoryStash())
    assert run.notes == [f"note: not exact: {counter.notes[0]}"]


def test_counting_leaves_a_text_as_it_was():
    """tiktoken reads a str through CPython's UTF-8 cache, kept inside the str while it
    lives: counting each message of a transcript that is not ASCII added that much memory.
    A text is counted from a copy, or in pieces, and keeps its size."""
    ruler = get_ruler().ruler
    for text in ("✓ passed, 3 → 4 " * 200, "✓ passed, 3 → 4 " * 2_000):
        size = sys.getsizeof(text)
        expected = ruler.count(text.encode().decode())  # (a copy: this one grows)
        assert TokenCounter(ruler).text(text) == expected
        assert sys.getsizeof(text) == size


def test_a_long_text_is_what_plain_ctx_count_cuts_and_the_cutter_loads_only_for_one():
    """LONG_TEXT is plain ctx-count's SMALL_INPUT (kept as a number, so that a transcript of
    short messages does not import the cutter at start-up: ~4 ms of every ctx-compact)."""
    import subprocess
    import sys

    assert textcount.LONG_TEXT == stream.SMALL_INPUT
    code = (
        "import sys; from ctxtools.compact import textcount; "
        "print('ctxtools.tokens.stream' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
