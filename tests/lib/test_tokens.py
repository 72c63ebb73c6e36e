"""The ruler: exact counters equal tiktoken/tokenizers on the same full text, offline."""

from __future__ import annotations

import hashlib
import io
import sys
from pathlib import Path

import pytest

from ctxtools import tokens
from ctxtools.errors import TokenizerError
from ctxtools.tokens import loading, stream

STDLIB = Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"

CJK_LOG = (
    "2026-11-30 12:00:01 INFO 服务启动完成，监听端口 8080\n"
    "2026-11-30 12:00:02 ERROR 認証に失敗しました: トークンの有効期限切れ\n"
    "2026-11-30 12:00:03 WARN 요청 시간이 초과되었습니다 (timeout=30s)\n"
).encode()


def stdlib_text(limit: int) -> bytes:
    out = bytearray()
    for p in sorted(STDLIB.glob("*.py")):
        out += p.read_bytes()
        if len(out) >= limit:
            break
    return bytes(out[:limit])


@pytest.fixture(scope="module")
def cl100k():
    return tokens.load_encoding("cl100k_base")


def test_offline_encodings_match_tiktokens_published_hashes():
    for name, expected in tokens.OFFLINE_ENCODINGS.items():
        data = tokens.verified_encoding_bytes(name)
        assert hashlib.sha256(data).hexdigest() == expected


def test_both_exact_encodings_load_without_network(store_dir):
    for name in ("cl100k_base", "o200k_base"):
        enc = tokens.load_encoding(name)
        assert enc.name == name
    # "hello world" is two tokens in both vocabularies
    assert tokens.get_ruler(encoding="o200k_base").ruler.count("hello world") == 2


def test_an_encoding_keeps_no_python_copy_of_its_ranks_and_still_pickles(cl100k):
    # Its Rust core has them; the Python dict (9 MB for cl100k) is only for pickling, and
    # a pickled encoding reads them again and encodes as the original does.
    import pickle

    assert len(cl100k._mergeable_ranks) == 0
    text = CJK_LOG.decode() + "def f(x):\n    return x ** 2  # 中文\n"
    again = pickle.loads(pickle.dumps(cl100k))
    assert len(again._mergeable_ranks) == 100_256
    assert again.encode_ordinary(text) == cl100k.encode_ordinary(text)
    assert again.n_vocab == cl100k.n_vocab


def test_known_token_ids_for_cl100k(cl100k):
    # a value that only the real vocabulary produces
    assert cl100k.encode_ordinary("hello world") == [15339, 1917]


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_streamed_pieces_add_up_to_the_whole_count(monkeypatch, encoding):
    """Cut into many pieces, the count equals one encode_ordinary of the full text."""
    data = stdlib_text(600_000) + CJK_LOG * 50 + b"\xff\xfe broken \x80 bytes\n" + b"a  b\n\n\nc"
    ruler = tokens.get_ruler(encoding=encoding).ruler
    expected = len(ruler.encoding.encode_ordinary(data.decode("utf-8", "replace")))
    monkeypatch.setattr(stream, "CHUNK_BYTES", 5_000)
    monkeypatch.setattr(stream, "READ_BLOCK", 4_096)
    for jobs in (1, 2):
        counts = tokens.count_stream(io.BytesIO(data), ruler, jobs=jobs)
        assert counts.tokens == expected
        assert counts.bytes == len(data)
        assert counts.chars == len(data.decode("utf-8", "replace"))


def test_pieces_really_are_cut(monkeypatch):
    monkeypatch.setattr(stream, "CHUNK_BYTES", 2_000)
    monkeypatch.setattr(stream, "READ_BLOCK", 1_000)
    counts = tokens.Counts()
    ruler = tokens.get_ruler().ruler
    data = stdlib_text(50_000)
    pieces = list(tokens.iter_text_pieces(io.BytesIO(data), counts, ruler))
    assert len(pieces) > 10
    assert all(isinstance(p, str) for p in pieces)
    assert "".join(pieces) == data.decode("utf-8", "replace")


def test_whitespace_runs_and_cjk_at_cut_points(monkeypatch):
    text = ("word \n\n  \nNext line\tx  y\r\n日本\n" * 3000).encode()
    ruler = tokens.get_ruler(encoding="cl100k_base").ruler
    expected = len(ruler.encoding.encode_ordinary(text.decode()))
    monkeypatch.setattr(stream, "CHUNK_BYTES", 777)
    monkeypatch.setattr(stream, "READ_BLOCK", 500)
    assert tokens.count_stream(io.BytesIO(text), ruler, jobs=2).tokens == expected


def test_special_tokens_are_ordinary_text_unless_allowed():
    text = "before <|endoftext|> after"
    plain = tokens.get_ruler().ruler
    special = tokens.get_ruler(allow_special=True).ruler
    assert plain.count(text) == len(plain.encoding.encode_ordinary(text))
    assert special.count(text) == plain.count("before ") + 1 + plain.count(" after")
    assert special.count(text) < plain.count(text)


def test_a_single_line_without_cut_points_is_still_exact(monkeypatch):
    data = b"x" * 50_000  # no newline, no space: one piece
    ruler = tokens.get_ruler().ruler
    monkeypatch.setattr(stream, "CHUNK_BYTES", 1_000)
    monkeypatch.setattr(stream, "READ_BLOCK", 1_000)
    assert tokens.count_stream(io.BytesIO(data), ruler).tokens == ruler.count("x" * 50_000)


def test_heuristic_cjk_and_other_characters():
    assert tokens.heuristic_count("") == 0
    assert tokens.heuristic_count("abcd") == 1
    assert tokens.heuristic_count("abcde") == 2
    assert tokens.heuristic_count("日本語") == 3
    assert tokens.heuristic_count("カタカナ ひらがな") == 8 + 1  # 8 kana, 1 space
    assert tokens.heuristic_count("한국어") == 3
    assert tokens.heuristic_count("中文 text") == 2 + 2  # 2 ideographs, " text" is 5 chars


def test_heuristic_streams_like_the_whole(monkeypatch):
    data = CJK_LOG * 200
    monkeypatch.setattr(stream, "CHUNK_BYTES", 300)
    monkeypatch.setattr(stream, "READ_BLOCK", 100)
    counts = tokens.count_stream(io.BytesIO(data), tokens.HeuristicRuler())
    assert counts.tokens == tokens.heuristic_count(data.decode())


def test_lines_count_a_last_line_without_newline():
    ruler = tokens.HeuristicRuler()
    assert tokens.count_stream(io.BytesIO(b""), ruler).lines == 0
    assert tokens.count_stream(io.BytesIO(b"a"), ruler).lines == 1
    assert tokens.count_stream(io.BytesIO(b"a\n"), ruler).lines == 1
    assert tokens.count_stream(io.BytesIO(b"a\nb"), ruler).lines == 2


def test_unknown_encoding_is_an_error():
    with pytest.raises(TokenizerError, match="unknown encoding 'nope'"):
        tokens.get_ruler(encoding="nope")


def test_online_only_encoding_falls_back_with_a_note_or_fails_with_exact():
    choice = tokens.get_ruler(encoding="p50k_base")
    assert isinstance(choice.ruler, tokens.HeuristicRuler)
    assert choice.notes and "approximate" in choice.notes[0]
    with pytest.raises(TokenizerError, match="not available offline"):
        tokens.get_ruler(encoding="p50k_base", exact=True)


def test_tampered_encoding_file_is_refused(monkeypatch):
    monkeypatch.setitem(tokens.OFFLINE_ENCODINGS, "cl100k_base", "0" * 64)
    monkeypatch.setattr(loading, "_ENCODINGS", {})
    with pytest.raises(TokenizerError, match="does not match tiktoken's published SHA-256"):
        tokens.verified_encoding_bytes("cl100k_base")
    choice = tokens.get_ruler(encoding="cl100k_base")
    assert isinstance(choice.ruler, tokens.HeuristicRuler)
    assert "approximate" in choice.notes[0]


def test_parsed_ranks_are_cached_and_a_damaged_cache_is_rebuilt(store_dir, monkeypatch):
    monkeypatch.setattr(loading, "_ENCODINGS", {})
    tokens.load_encoding("cl100k_base")
    cached = [p for p in (store_dir / "tiktoken").iterdir() if not p.name.startswith(".")]
    assert [p.name[:12] for p in cached] == ["cl100k_base-"]
    cached[0].write_bytes(cached[0].read_bytes()[:-100] + b"x" * 100)  # bit rot
    monkeypatch.setattr(loading, "_ENCODINGS", {})
    parsed = []
    real_parse = tokens.parse_tiktoken_file
    monkeypatch.setattr(loading, "parse_tiktoken_file", lambda d: parsed.append(1) or real_parse(d))
    enc = tokens.load_encoding("cl100k_base")
    assert parsed == [1]  # the damaged cache was not trusted
    assert enc.encode_ordinary("hello world") == [15339, 1917]
    monkeypatch.setattr(loading, "_ENCODINGS", {})
    tokens.load_encoding("cl100k_base")
    assert parsed == [1]  # the rebuilt cache is used


def test_ranks_equal_the_official_file(store_dir):
    enc = tokens.load_encoding("o200k_base")
    official = tokens.parse_tiktoken_file(tokens.verified_encoding_bytes("o200k_base"))
    assert len(official) == 199_998
    assert tokens.mergeable_ranks("o200k_base") == official  # what its core was built from
    # (the encoding keeps no Python copy of them: its core's decode says they are the same)
    assert all(enc.decode_single_token_bytes(r) == t for t, r in official.items())


def test_a_tiktoken_file_is_parsed_pair_by_pair_in_its_order():
    import base64

    lines = [base64.b64encode(t) + b" " + str(r).encode() for t, r in [(b"b", 7), (b"a", 3)]]
    data = b"\n".join([lines[0], b"", lines[1]]) + b"\n"
    assert list(tokens.parse_tiktoken_file(data).items()) == [(b"b", 7), (b"a", 3)]
    for bad in (lines[0] + b" 9\n", lines[0] + b"\n   \n", b"YQ==\n"):
        with pytest.raises(ValueError):
            tokens.parse_tiktoken_file(bad)


def test_unwritable_store_still_counts(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setattr(loading, "_ENCODINGS", {})
    enc = tokens.load_encoding("cl100k_base", store_root=blocker / "store")
    assert enc.encode_ordinary("hello world") == [15339, 1917]


def make_tokenizer_json(path: Path) -> Path:
    """A real (tiny) BPE tokenizer.json trained here, no download."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["[UNK]", "<s>"])
    tok.train_from_iterator([stdlib_text(40_000).decode("utf-8", "replace")], trainer)
    tok.save(str(path))
    return path


def test_hf_tokenizer_counts_exactly(tmp_path):
    path = make_tokenizer_json(tmp_path / "tokenizer.json")
    from tokenizers import Tokenizer

    ref = Tokenizer.from_file(str(path))
    text = stdlib_text(20_000).decode("utf-8", "replace") + CJK_LOG.decode()
    ruler = tokens.get_ruler(tokenizer=str(path)).ruler
    assert ruler.exact
    assert ruler.count(text) == len(ref.encode(text, add_special_tokens=False).ids)
    counts = tokens.count_stream(io.BytesIO(text.encode()), ruler)
    assert counts.tokens == len(ref.encode(text, add_special_tokens=False).ids)
    # a directory holding tokenizer.json works too
    assert tokens.get_ruler(tokenizer=str(tmp_path)).ruler.count("def f") > 0


def test_bad_tokenizer_files(tmp_path):
    with pytest.raises(TokenizerError, match="tokenizer file not found"):
        tokens.get_ruler(tokenizer=str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a tokenizer"}')
    with pytest.raises(TokenizerError, match="not a usable tokenizer.json"):
        tokens.get_ruler(tokenizer=str(bad))
    with pytest.raises(TokenizerError, match="no tokenizer.json"):
        tokens.get_ruler(tokenizer=str(tmp_path))


def test_a_tokenizer_that_is_not_a_regular_file_is_refused_unread(tmp_path):
    """A pipe would block inside tokenizers, holding the interpreter, past Ctrl-C (and
    /dev/zero filled the memory, 24 GB, then the OOM killer: not run here for that
    reason): neither is read, each is named. In a child process with a timeout, so that a
    regression fails instead of hanging the run."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "tok.fifo"
    os.mkfifo(fifo)
    holder = tmp_path / "model"
    holder.mkdir()
    (holder / "tokenizer.json").symlink_to(fifo)
    code = (
        "import sys\n"
        "from ctxtools import tokens\n"
        "from ctxtools.errors import TokenizerError\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        tokens.get_ruler(tokenizer=path)\n"
        "    except TokenizerError as exc:\n"
        "        print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(fifo), str(holder)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.stdout.splitlines() == [
        f"{fifo} is not a regular file",
        f"{holder / 'tokenizer.json'} is not a regular file",
    ], done.stderr


def test_buffer_count_equals_the_token_list_even_with_lone_surrogates():
    """The count path that skips the token list gives what encode_ordinary/encode give."""
    plain = tokens.get_ruler().ruler
    special = tokens.get_ruler(allow_special=True).ruler
    for text in ("a\udc80b \ud800 x", "x <|endoftext|> y \udc80", stdlib_text(30_000).decode()):
        assert plain.count(text) == len(plain.encoding.encode_ordinary(text))
        assert special.count(text) == len(
            special.encoding.encode(text, allowed_special="all", disallowed_special=())
        )


def test_a_long_text_counted_away_from_the_main_thread_counts_the_same():
    """``count_away`` (ctx-pack counts its task with it, so that Ctrl-C reaches a pack
    whose task is a 50 MB log) gives the count itself, for a text below its size and
    above it, and hands the count's error to its caller."""
    import threading

    ruler = tokens.get_ruler().ruler
    short = stdlib_text(20_000).decode("utf-8", "replace")
    long = short * (stream.AWAY_CHARS // len(short) + 2)
    assert len(long) >= stream.AWAY_CHARS > len(short)
    threads = []

    def counting(text: str) -> int:
        threads.append(threading.current_thread())
        return ruler.count(text)

    assert stream.count_away(counting, short) == ruler.count(short)
    assert stream.count_away(counting, long) == ruler.count(long)
    assert threads[0] is threading.main_thread()
    assert threads[1] is not threading.main_thread()  # the long one was counted away

    def failing(text: str) -> int:
        raise TokenizerError("no encoding")

    with pytest.raises(TokenizerError, match="no encoding"):
        stream.count_away(failing, long)
