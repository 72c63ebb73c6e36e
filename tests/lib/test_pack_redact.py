"""ctxtools.pack.redact: the parts a pack renders, its whole text and its record are
redacted, and only what is printed is reported."""

from __future__ import annotations

import random
import string

from ctxtools.pack.ledger import Ledger
from ctxtools.pack.model import Pack
from ctxtools.pack.redact import PackRedactor
from ctxtools.pack.render import Renderer

rng = random.Random(21)
GHP = "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
MARK = "[secret redacted: GitHub token]"


def pack_of(text: str, red: PackRedactor, **record) -> Pack:
    """A Pack of TEXT whose redactions are RED's (as build_pack makes it)."""
    fields = dict(files=[], dropped=[], mentions=[], notes=[], named=[], sections=[])
    fields.update(record)
    rows = red.ledger.redaction_rows()
    return Pack(text, 0, {}, "r", True, "markdown", redactions=rows, **fields)


def test_parts_are_redacted_as_rendered_and_reported_only_when_printed():
    r = Renderer("markdown", PackRedactor(False, Ledger()))
    shown = r.memory_chunk("notes.md", f"Rotate {GHP}", 1, 3, "body\n")
    left_out = r.memory_chunk("notes.md", "Other", 5, 9, f"old key\n{GHP}\n")
    task = r.task(f"push with {GHP}")
    assert GHP not in shown + left_out + task and MARK in left_out
    text = r.document([r.section("memory", shown), r.section("task", task)])
    pack = r.redactor.seal(pack_of(text, r.redactor))
    assert pack.redactions == [
        {"where": "memory notes.md:1-3 (label)", "line": 1, "kind": "GitHub token"},
        {"where": "task", "line": 1, "kind": "GitHub token"},
    ]


def test_the_whole_text_pass_and_the_record():
    red = PackRedactor(False, Ledger())
    r = Renderer("xml", red)
    text = r.document([f'<files>\n<file path="{GHP}.py">\nx\n</file>\n</files>\n'])
    assert GHP not in text and f"{MARK}.py" in text
    pack = red.seal(pack_of(text, red, files=[{"path": f"{GHP}.py"}], notes=[f"skipped {GHP}.py"]))
    assert pack.files == [{"path": f"{MARK}.py"}] and pack.notes == [f"skipped {MARK}.py"]
    assert {(x["where"], x["line"]) for x in pack.redactions} == {
        ("pack", 3),
        ("files[0].path", 1),
        ("notes[0]", 1),
    }


def test_allow_redacts_nothing():
    red = PackRedactor(True, Ledger())
    r = Renderer("markdown", red)
    text = r.document([r.task(GHP)])
    assert GHP in text and red.seal(pack_of(text, red)).redactions == []
