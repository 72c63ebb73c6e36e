"""retrieval.source: a candidate's bytes let go between reading and ranking, and read
again only when they are asked for."""

from __future__ import annotations

import builtins

from ctxtools.retrieval import source as sourcemod
from ctxtools.retrieval.source import Source


def _released(tmp_path, text: bytes):
    path = tmp_path / "m.py"
    path.write_bytes(text)
    data = path.read_bytes()
    src = Source("m.py", data)
    src.vocab, src.vocab_of, src.path = object(), data, str(path)
    src.release((b"boom", b"absent"))
    return src, path


def test_a_released_source_answers_the_ranking_without_reading(tmp_path, monkeypatch):
    src, _path = _released(tmp_path, b"a\nboom here\nc\n")
    reads = []
    real_open = builtins.open
    monkeypatch.setattr(sourcemod, "open", lambda *a: reads.append(a) or real_open(*a),
                        raising=False)  # fmt: skip
    assert (src.size(), src.line_breaks()) == (14, 3)
    assert src.holds(b"boom") and not src.holds(b"absent")
    assert reads == []
    assert src.data == b"a\nboom here\nc\n" and len(reads) == 1
    assert src.vocab_of is src.data  # the same bytes: its words still count for them
    assert src.holds(b"here") and len(reads) == 1  # (held again now)
    src.release()
    assert src.size() == 14 and src.data == b"a\nboom here\nc\n" and len(reads) == 2


def test_a_file_changed_since_is_its_new_bytes_counted_from_them(tmp_path):
    src, path = _released(tmp_path, b"old words\n")
    path.write_bytes(b"new words, more of them\n")
    assert src.data == b"new words, more of them\n"
    assert src.vocab_of is None  # its vocabulary counted other bytes
    assert src.size() == 24 and src.line_breaks() == 1
    gone, path2 = _released(tmp_path, b"x\n")
    path2.unlink()
    assert gone.data == b"" and gone.vocab_of is None


def test_bytes_set_by_hand_are_never_let_go(tmp_path):
    src, path = _released(tmp_path, b"secret = 1\n")
    src.data = b"secret = [REDACTED]\n"  # (a redaction)
    src.release()
    path.write_bytes(b"other\n")
    assert src.data == b"secret = [REDACTED]\n" and src.vocab_of is None
    held = Source("handle", b"piped in\n")  # (no file to read it again from)
    held.release()
    assert held.data == b"piped in\n"
