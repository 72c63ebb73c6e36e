"""ctxtools.clipboard's choice of tool, and runner.hand_off, which leaves what a clipboard
tool forks to run on (it holds the selection) without waiting for it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from ctxtools.clipboard import ClipboardError, clipboard_command
from ctxtools.runner import hand_off


def _tools(tmp_path: Path, *names: str) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in names:
        (bin_dir / name).write_text("#!/bin/sh\ncat >/dev/null\n")
        (bin_dir / name).chmod(0o755)
    return str(bin_dir)


@pytest.mark.parametrize(
    ("tools", "env", "first"),
    [
        (
            ("wl-copy", "xclip", "xsel"),
            {"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"},
            "wl-copy",
        ),
        (("wl-copy", "xclip", "xsel"), {"DISPLAY": ":0"}, "xclip"),
        (("xsel",), {"DISPLAY": ":0"}, "xsel"),
        (("xclip", "pbcopy"), {}, "pbcopy"),
        (("clip.exe",), {}, "clip.exe"),
    ],
)
def test_the_first_tool_that_can_work_is_chosen(tmp_path, tools, env, first):
    path = _tools(tmp_path, *tools)
    argv = clipboard_command({"PATH": path, **env})
    assert argv[0] == os.path.join(path, first)


def test_no_tool_and_no_display_are_told_apart(tmp_path):
    with pytest.raises(ClipboardError, match="no clipboard tool found on PATH"):
        clipboard_command({"PATH": _tools(tmp_path)})
    path = _tools(tmp_path, "wl-copy", "xsel")
    with pytest.raises(ClipboardError, match="found wl-copy, xsel but neither WAYLAND_DISPLAY nor"):
        clipboard_command({"PATH": path})


def test_hand_off_does_not_wait_for_what_the_tool_leaves_running(tmp_path):
    kept, pid_file = tmp_path / "kept", tmp_path / "pid"
    # Like xclip: read the text, leave a process holding stdout and stderr, exit.
    script = f'cat > "{kept}"; sleep 120 & echo $! > "{pid_file}"; echo taken >&2'
    done = hand_off(["sh", "-c", script], b"the text\n", timeout=60)
    try:
        assert not done.timed_out and done.returncode == 0
        assert done.stderr_tail == b"taken\n"
        assert kept.read_bytes() == b"the text\n"
        os.kill(int(pid_file.read_text()), 0)  # still there: it serves the selection
    finally:
        os.kill(int(pid_file.read_text()), signal.SIGTERM)


def test_hand_off_stops_a_tool_that_hangs(tmp_path):
    done = hand_off(["sh", "-c", "cat >/dev/null; exec sleep 120"], b"x", timeout=0.5)
    assert done.timed_out and done.returncode is None
