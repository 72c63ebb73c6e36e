"""memofile.release_large_buffers: with glibc's malloc, a large buffer freed after a larger
one goes back to the system (its own mapping) once it was asked for (the vocabulary
index's build asks), where glibc's moving threshold would keep it on the heap."""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap

import pytest

from ctxtools import memofile

glibc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's malloc only",
)

# A 24 MB buffer freed raises glibc's threshold past 8 MB; then an 8 MB buffer is made and
# freed: the resident size it leaves behind is printed (in MB).
PROBE = textwrap.dedent(
    """
    import os, sys
    sys.path[:0] = {path!r}
    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    big = b"x" * (24 << 20)
    del big
    if {fix}:
        from ctxtools.memofile import release_large_buffers
        release_large_buffers()
    before = rss()
    buf = b"y" * (8 << 20)
    del buf
    print((rss() - before) / (1 << 20))
    """
)


def _left_behind(tmp_path, fix: bool) -> float:
    code = PROBE.format(path=sys.path, fix=fix)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


@glibc
def test_a_large_buffer_freed_after_the_release_leaves_nothing_behind(tmp_path):
    assert _left_behind(tmp_path, fix=False) > 6  # (glibc's moving threshold: on the heap)
    assert _left_behind(tmp_path, fix=True) < 2


def test_release_is_asked_once_a_process(monkeypatch):
    monkeypatch.setattr(memofile, "_released", [])
    first = memofile.release_large_buffers()
    assert memofile.release_large_buffers() is first
    assert memofile._released == [first]
