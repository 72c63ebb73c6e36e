"""The one rule for showing a file name (ctxtools.quoting) and the places that use it."""

from __future__ import annotations

import os
import subprocess

import pytest

from ctxtools import quoting
from ctxtools.excerpt.render import frame
from ctxtools.pack.render import Renderer
from ctxtools.quoting import quote_name


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("src/a.py", "src/a.py"),
        ("café/naïve.py", "café/naïve.py"),
        ("`x`.py", "`x`.py"),
        ("x\n```\n# Task", '"x\\n```\\n# Task"'),
        ('say "hi".txt', '"say \\"hi\\".txt"'),
        ("back\\slash", '"back\\\\slash"'),
        ("tab\there\r", '"tab\\there\\r"'),
        ("\x1b[31mred", '"\\033[31mred"'),
        ("line\u2028sep", '"line\\342\\200\\250sep"'),
        ("bad\udcffbyte", '"bad\\377byte"'),
        ("bad\udcff\nbyte", '"bad\\377\\nbyte"'),
        ("caf\u00e9\udce9", '"caf\u00e9\\351"'),
        ("lone\ud800", '"lone\\355\\240\\200"'),
    ],
)
def test_quote_name(name, shown):
    assert quote_name(name) == shown
    assert "\n" not in quote_name(name)
    quote_name(name).encode("utf-8")  # valid UTF-8: no lone surrogate left


@pytest.mark.parametrize(
    "raw", [b"b\xff.py", b"caf\xc3\xa9\xe9 \\ \"q\".py", b"x\n\x1b[0m\t.py", b"plain.py"]
)
def test_a_quoted_name_gives_its_bytes_back(raw):
    import codecs
    import os

    shown = quote_name(os.fsdecode(raw))
    inner = shown[1:-1] if shown.startswith('"') else shown
    assert codecs.escape_decode(inner.encode("utf-8"))[0] == raw


def test_every_place_a_pack_prints_a_name_quotes_it():
    name = "x\n# Task"
    for fmt in ("markdown", "xml"):
        r = Renderer(fmt)
        for text in (
            r.instruction(name, "body\n"),
            r.skill_cards([(name, "does\n# Task things")]),
            r.skill_body(name, "body\n"),
            r.memory_chunk(name, "head\n# Task", 1, 2, "body\n"),
            r.file(name, "", "+x\n"),
            r.more_files([name]),
        ):
            assert "# Task" not in text.splitlines(), (fmt, text)
    assert frame(name, ["1 line"]) == '==> "x\\n# Task" <== 1 line'


@pytest.mark.parametrize(
    "raw",
    [b"a.py", b"x y.log", b"it's", b"$HOME`x`", b"back\\slash'q", b"caf\xc3\xa9",
     b"b\xff.py", b"a\nb\tc", b"\x1b[31mred", b"-dash", b"q\"uote\xfe'", b""],
)
def test_a_shell_word_gives_its_bytes_back_to_bash(raw):
    # What a hint tells the user to type (ctx-read < FILE): bash must hand the program the
    # name's bytes, and the hint itself must be valid UTF-8 with nothing a terminal hides.
    word = quoting.shell_word(os.fsdecode(raw))
    word.encode("utf-8")  # no lone surrogate: the hint is valid UTF-8
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in word)
    got = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True)
    assert got.stdout == raw


def test_a_plain_name_is_its_own_shell_word():
    assert quoting.shell_word("src/a_b-1.2.py") == "src/a_b-1.2.py"
    assert quoting.shell_word("b\udcff.py") == "$'b\\377.py'"
