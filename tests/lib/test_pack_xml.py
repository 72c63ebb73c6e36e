"""ctx-pack's XML is well-formed XML 1.0 whatever a tree holds (ctxtools.pack.render): a
character XML 1.0 cannot hold -- a form feed in a source file, an escape, U+FFFE, a lone
surrogate -- is written as the name rule's C escape; text without one is written as it was
(a file name is shown by the name rule itself: a byte that is not UTF-8 quoted and escaped).
The XML was printed with them raw, exit 0."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from xml.parsers import expat

import pytest
from helpers import copy_sources

from ctxtools.pack import PackRequest, build_pack, render
from ctxtools.pack.render import Renderer
from ctxtools.tokens import get_ruler

# What XML 1.0 cannot hold, and how the pack writes each one.
HOSTILE = "a\fb\x1b[0m\x01\v\ufffe\uffff\udcff\ud800."
SHOWN = "a\\fb\\033[0m\\001\\v\\357\\277\\276\\357\\277\\277\\377\\355\\240\\200."


def _parsed(text: str) -> ET.Element:
    """TEXT, as ctx-pack writes it, parsed by expat (which refuses what is not XML 1.0)."""
    data = text.encode("utf-8", "surrogateescape")
    expat.ParserCreate().Parse(data, True)
    return ET.fromstring(data)


def test_every_part_of_an_xml_pack_is_xml_whatever_its_text():
    r = Renderer("xml")
    pack = r.document(
        [
            r.section("instructions", r.instruction(f"AGENTS{HOSTILE}md", HOSTILE)),
            r.section("skills", r.skill_cards([(HOSTILE, HOSTILE)]) + r.skill_body("s", HOSTILE)),
            r.section("memory", r.memory_chunk(f"n{HOSTILE}md", HOSTILE, 1, 2, HOSTILE)),
            r.section("map", r.repomap(HOSTILE)),
            r.section("files", r.file(HOSTILE, HOSTILE, HOSTILE) + r.more_files([HOSTILE])),
            r.section("task", r.task(HOSTILE)),
        ]
    )
    root = _parsed(pack)
    task = root.find("task")
    texts = [e.text for e in root.iter() if e is not task and e.text and e.text.strip()]
    assert texts and all(SHOWN in t for t in texts), texts
    # The task's lone surrogates (an argument's bytes that are not UTF-8) are U+FFFD, as
    # in a file's text: what XML cannot hold of the rest is escaped as everywhere.
    assert task.text.strip() == SHOWN.split("\\377")[0] + "\ufffd" * 6 + "."
    names = [root.find(w).get(a) for w, a in NAMES]
    assert names == [f'"AGENTS{SHOWN}md"', f'"{SHOWN}"', f'"n{SHOWN}md"', *[f'"{SHOWN}"'] * 2]
    one_line = SHOWN.split("v", 1)[1]  # (a label's other controls are spaces: _one_line)
    labels = [root.find(w).get(a) for w, a in LABELS]
    assert labels == [f"a b [0m  {one_line}"] * 2


NAMES = [
    ("instructions/file", "path"),
    ("skills/skill", "name"),
    ("memory/chunk", "file"),
    ("files/diff", "path"),
    ("files/file", "path"),
]
LABELS = [("skills/skill", "description"), ("memory/chunk", "heading")]


def test_text_xml_can_hold_is_written_as_before():
    everything = "".join(
        chr(c) for c in [9, 10, 13, *range(0x20, 0xD800), *range(0xE000, 0xFFFE), 0x10000, 0x10FFFF]
    )
    before = everything.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert render._xml_escape(everything) == before
    assert render._xml_attr(everything) == before.replace('"', "&quot;")
    _parsed(f"<t>{render._xml_escape(everything)}</t>")


def _tree(root: Path) -> None:
    root.mkdir()
    # a form feed, as in many GNU and Python sources; an escape; U+FFFE
    (root / "m.py").write_bytes(
        b"def parse_header(x):\n    return '\x1b[0m\xef\xbf\xbe'\n"
        b"\x0c\ndef other():\n    return 2\n"
    )
    (root / os.fsdecode(b"bad\xffname.py")).write_bytes(b"def parse_header_too(x):\n    return x\n")


@pytest.mark.process
def test_an_xml_pack_of_a_hostile_tree_is_well_formed(tmp_path):
    _tree(tmp_path / "t")
    ctx_pack = Path(sys.executable).with_name("ctx-pack")
    args = [str(ctx_pack), "-q", "fix parse_header", "-f", "xml", "."]
    proc = subprocess.run(args, cwd=tmp_path / "t", capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    root = ET.fromstring(proc.stdout)  # was: not well-formed (invalid token)
    files = {f.get("path"): f.text for f in root.iterfind("files/file")}
    assert set(files) == {"m.py", '"bad\\377name.py"'}  # (the name rule: quoted, escaped)
    assert "\n3\t\\f\n" in files["m.py"] and "'\\033[0m\\357\\277\\276'" in files["m.py"]
    assert '==> "bad\\377name.py" <==' in files['"bad\\377name.py"']
    assert '"bad\\377name.py":' in root.find("repomap").text
    # Markdown is not XML: a file's text is shown as it is, as before; its name by the
    # name rule, valid UTF-8 (it was the raw byte)
    md = subprocess.run(args[:-3] + ["."], cwd=tmp_path / "t", capture_output=True, timeout=120)
    assert md.returncode == 0 and b'"bad\\377name.py"' in md.stdout
    assert b"\n3\t\x0c\n" in md.stdout and b"\xff" not in md.stdout


def test_an_ordinary_pack_is_the_same_xml_as_before(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    copy_sources(root)
    (root / "win.py").write_bytes(b"def crlf():\r\n    return '\xc2\x85 <&> \xe2\x80\xa8'\r\n")
    monkeypatch.chdir(root)
    ruler = get_ruler(encoding="cl100k_base").ruler
    req = PackRequest(
        task="fix verify_token and crlf", paths=["win.py", "src/auth.py"], tokens=6000, fmt="xml"
    )
    now = build_pack(req, ruler).text
    before = lambda t: t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # noqa: E731
    monkeypatch.setattr(render, "_xml_escape", before)
    assert build_pack(req, ruler).text == now
    assert "\n2\t    return '\x85 &lt;&amp;&gt; \u2028'\n</file>" in now
    _parsed(now)
