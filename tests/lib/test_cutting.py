"""Cutting big inputs for the ruler: linear, bounded, and the sum of the pieces' counts
equals one ``encode_ordinary`` of the whole text (cl100k_base and o200k_base).

The cutter's sizes are made small here so that texts of a few tens of KB are cut into
many pieces and every path (rule cuts, runs, windows, moved junctions) is taken.
"""

from __future__ import annotations

import base64
import io
import json
import random

import pytest
from helpers import small_cutter

from ctxtools import tokens
from ctxtools.tokens import cutter, stream
from ctxtools.tokens.cuts import find_rule_cut

ENCODINGS = ["cl100k_base", "o200k_base"]


@pytest.fixture
def small(monkeypatch):
    small_cutter(monkeypatch)
    monkeypatch.setattr(stream, "CHUNK_BYTES", 3_000)


def shapes() -> dict[str, bytes]:
    rng = random.Random(11)
    records = [
        {"id": i, "name": f"user{i}", "v": [1.5, None, True], "t": "日本語 text", "e": ""}
        for i in range(700)
    ]
    return {
        "seq": "".join(f"{i}\n" for i in range(1, 6000)).encode(),
        "one-line json": json.dumps(records).encode(),
        "no letters": "".join(
            rng.choice("0123456789 .,;:-+=()[]{}\n\t") for _ in range(20000)
        ).encode(),
        "zeros": bytes(20000),
        "one letter": b"a" * 20000,
        "base64 of zeros": base64.b64encode(bytes(15000)),
        "base64": base64.b64encode(rng.randbytes(15000)),
        "cjk without punctuation": ("日本語の文章です中文没有标点符号" * 1500).encode(),
        "cjk prose": ("这是中文，有标点。日本語の文です。\n" * 700).encode(),
        "random bytes": rng.randbytes(20000),
        "invalid utf-8 runs": b"\xff" * 5000 + b"ok " + b"\xe4\xb8" * 2000 + b"\x80" * 3000,
        "spaces and newlines": b" " * 9000 + b"x" + b"\n" * 5000 + b"y" + b" \n" * 5000,
        "blank lines with indent": (b"\n" + b" " * 100) * 200 + b"end",
        "spaces after a last newline": b"x.\n\n" + b" " * 20000 + b"y",
        "yes ' '": b" \n" * 10000,
        "punctuation": b"=-" * 8000 + b"abc" + b"'" * 3000 + b"s" + b"/" * 4000,
        "digits": b"1" * 30000 + b"x" + b"1234567890" * 3000,
        "special-looking": b"<|endoftext|>" * 1500 + b" a <|fim_prefix|>b\n" * 300,
        "code": (b"    def f(x):\n        return x['key'] / 2  # it's\n" * 600),
    }


@pytest.mark.parametrize("shape", sorted(shapes()))
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_hostile_shapes_count_exactly_in_pieces(small, shape, encoding):
    data = shapes()[shape]
    text = data.decode("utf-8", "replace")
    for special in (False, True):
        ruler = tokens.get_ruler(encoding=encoding, allow_special=special).ruler
        whole = ruler.count(text)
        if not special:
            assert whole == len(ruler.encoding.encode_ordinary(text))
        pieces = []
        counts = tokens.Counts()
        for piece in tokens.iter_text_pieces(io.BytesIO(data), counts, ruler):
            pieces.append(piece)
        assert len(pieces) > 3, "the text was not cut"
        got = sum(p if isinstance(p, int) else ruler.count(p) for p in pieces)
        assert (got, counts.exact, counts.notes) == (whole, True, [])
        assert counts.chars == len(text)
        assert counts.bytes == len(data)
        assert counts.lines == tokens.line_count(text.count("\n"), text[-1:])
        assert tokens.count_stream(io.BytesIO(data), ruler, jobs=2).tokens == whole


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_rule_cut_is_exact(encoding):
    """Cut a text at *every* rule cut: the pieces' counts still add up to the whole."""
    rng = random.Random(5)
    alphabet = list("abcXYZ019 '\n\t\r/.,=_-<|>\x00") + ["中", "é", "\u3000", "\xa0", "\ufffd"]
    ruler = tokens.get_ruler(encoding=encoding).ruler
    special = tokens.get_ruler(encoding=encoding, allow_special=True).ruler
    for _ in range(60):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(50, 600)))
        text += "<|endoftext|>" * rng.randint(0, 2)
        data = text.encode("utf-8", "surrogateescape") + rng.randbytes(3)
        whole = data.decode("utf-8", "replace")
        for r, allow in ((ruler, False), (special, True)):
            cuts = []
            c = 1
            while True:
                c = find_rule_cut(
                    data, c, len(data), allow, encoding == "o200k_base", _specials(r, allow)
                )
                if c < 0:
                    break
                cuts.append(c)
                c += 1
            bounds = [0, *cuts, len(data)]
            parts = [
                data[a:b].decode("utf-8", "replace")
                for a, b in zip(bounds, bounds[1:], strict=False)
            ]
            assert "".join(parts) == whole
            assert sum(r.count(p) for p in parts) == r.count(whole), (text, cuts)


def _specials(ruler, allow):
    if not allow:
        return None
    import re

    names = sorted(ruler.encoding.special_tokens_set)
    return re.compile(b"|".join(re.escape(n.encode()) for n in names))


def test_seq_lines_are_cut_only_at_rule_cuts(small):
    data = "".join(f"{i}\n" for i in range(1, 3000)).encode()
    ruler = tokens.get_ruler().ruler
    pieces = list(tokens.iter_text_pieces(io.BytesIO(data), tokens.Counts(), ruler))
    assert len(pieces) > 3
    assert all(isinstance(p, str) for p in pieces)  # no run: all counted by tiktoken


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_random_mixtures_of_runs_are_exact_or_say_so(small, encoding):
    """Texts made of runs of many kinds: whenever the count claims to be exact, it is."""
    atoms = [
        b"a",
        b"A",
        b"=",
        b" ",
        b"\n",
        b"\x00",
        "中".encode(),
        "文字".encode(),
        b"\xff",
        b"7",
        b"'s ",
        b"\r\n",
        b"\t",
        b"/",
        b"\n/",
        b"Ab",
        b"x y",
        "\u3000".encode(),
    ]
    exact = 0
    for seed in range(25):
        rng = random.Random(seed)
        data = b"".join(
            rng.choice(atoms) * rng.choice([1, 3, 50, 300, 700, 2000])
            for _ in range(rng.randint(5, 40))
        )
        ruler = tokens.get_ruler(encoding=encoding).ruler
        counts = tokens.count_stream(io.BytesIO(data), ruler, jobs=1)
        if counts.exact:
            exact += 1
            assert counts.tokens == ruler.count(data.decode("utf-8", "replace")), seed
        else:
            assert counts.notes
    assert exact >= 10  # the rest: runs of kinds not cut here (U+3000, o200k capitals)


def test_a_run_that_cannot_be_proven_says_not_exact(small):
    # o200k joins a CJK letter and the capitals after it in one pre-token
    data = "中".encode() * 100 + b"ABC" * 3000
    ruler = tokens.get_ruler(encoding="o200k_base").ruler
    counts = tokens.count_stream(io.BytesIO(data), ruler)
    assert counts.exact is False
    assert "follows a letter of another script" in counts.notes[0]
    assert counts.as_dict()["exact"] is False
    # cl100k's letter pre-tokens do not split by case: exact
    cl = tokens.get_ruler(encoding="cl100k_base").ruler
    counts = tokens.count_stream(io.BytesIO(data), cl)
    assert (counts.exact, counts.tokens) == (True, cl.count(data.decode()))


def test_window_encoder_equals_tiktoken_on_hostile_text():
    """bpe-openai's native encoder (used inside long runs) counts as tiktoken does."""
    rng = random.Random(3)
    for name in ENCODINGS:
        fast = tokens.window_encoder(name)
        assert fast is not None
        enc = tokens.load_encoding(name)
        samples = [
            "\x00" * 5000,
            "a" * 5000,
            " " * 3000 + "x",
            "\n" * 3000,
            " \n" * 2000,
            "QUFB" * 1000,
            "中" * 3000,
            "=" * 4000,
            "\ufffd" * 2000,
            "Ab" * 2000,
            base64.b64encode(rng.randbytes(3000)).decode(),
        ]
        samples += ["".join(rng.choice("aZ 9\n.'中\t") for _ in range(2000)) for _ in range(20)]
        for s in samples:
            assert fast(s) == enc.encode_ordinary(s)


def test_the_buffer_stays_bounded_on_a_long_run(small, monkeypatch):
    """A run far longer than every buffer is counted without holding it."""
    data = bytes(400_000)
    ruler = tokens.get_ruler().ruler
    seen = []
    real_fill = cutter.Cutter._fill

    def fill(self, upto):
        real_fill(self, upto)
        seen.append(len(self.buf))

    monkeypatch.setattr(cutter.Cutter, "_fill", fill)
    counts = tokens.count_stream(io.BytesIO(data), ruler)
    assert counts.tokens == 400_000  # one token per NUL in cl100k
    assert counts.exact
    assert max(seen) < 20_000  # chunk, windows and probes: a few KB here, not 400 KB


def test_heuristic_streams_block_by_block(monkeypatch):
    monkeypatch.setattr(stream, "READ_BLOCK", 1_000)
    data = bytes(50_000)
    counts = tokens.Counts()
    pieces = list(tokens.iter_text_pieces(io.BytesIO(data), counts, tokens.HeuristicRuler()))
    assert max(len(p) for p in pieces) <= 1_000
    assert tokens.count_stream(io.BytesIO(data), tokens.HeuristicRuler()).tokens == 12_500
