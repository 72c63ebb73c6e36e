"""pack.ledger: what a build says, leaves out and redacts, as typed records whose lines are
what the pack's record has always printed."""

from __future__ import annotations

import pytest

from ctxtools.pack import PackRequest, build_pack
from ctxtools.pack.ledger import Drop, Ledger, Note


@pytest.mark.parametrize(
    ("line", "severity", "text"),
    [
        ("warning: .ctxignore line 3: bad pattern", "warning", ".ctxignore line 3: bad pattern"),
        ("note: memory cache not written", "note", "memory cache not written"),
        ("left out 3 file(s): binary", "info", "left out 3 file(s): binary"),
        ("warnings: not a severity", "info", "warnings: not a severity"),
    ],
)
def test_a_line_from_another_module_is_read_once_and_printed_back_the_same(line, severity, text):
    note = Note.parse(line)
    assert (note.severity, note.text) == (severity, text)
    assert note.line() == line


def test_the_ledger_keeps_the_order_things_happened_in():
    led = Ledger()
    led.info("skipped a.bin: binary file")
    led.warn("--include/--exclude 'x/*' matches no file")
    led.said(["note: --changed HEAD: nothing changed"])
    led.drop("a.bin", "binary")
    led.redacted("src/a.py", 3, "AWS secret key")
    assert [n.severity for n in led.notes] == ["info", "warning", "note"]
    assert led.note_lines() == [
        "skipped a.bin: binary file",
        "warning: --include/--exclude 'x/*' matches no file",
        "note: --changed HEAD: nothing changed",
    ]
    assert led.drops == [Drop("a.bin", "binary")]
    assert led.drop_rows() == [{"what": "a.bin", "why": "binary"}]
    assert led.redaction_rows() == [{"where": "src/a.py", "line": 3, "kind": "AWS secret key"}]


def test_a_pack_says_its_warnings_with_their_severity(tmp_path):
    (tmp_path / "a.py").write_text("def alpha():\n    return 1\n")
    (tmp_path / "b.bin").write_bytes(b"\0\1\2\3")
    req = PackRequest(
        task="alpha",
        paths=[str(tmp_path / "a.py"), str(tmp_path / "b.bin"), str(tmp_path / "missing.py")],
        root=str(tmp_path),
        tokens=2000,
        keep_going=True,
        include=["nothing/*.py"],
        use_map=False,
    )
    pack = build_pack(req)
    assert "warning: --include/--exclude 'nothing/*.py' matches no file" in pack.notes
    assert any(n.startswith("warning: skipped ") and "missing.py" in n for n in pack.notes)
    assert "skipped b.bin: binary file" in pack.notes
    assert {"what": "b.bin", "why": "binary"} in pack.dropped
