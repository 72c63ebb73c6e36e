"""The toolkit's one atomic write (ctxtools.fsutil.replace_file) and the writers on it:
a failed write leaves the old file as it was and no temporary file behind."""

from __future__ import annotations

import errno
import os
import stat

import pytest

from ctxtools import fsutil

OLD = "ancienne version, 日本語\n".encode() + b"\xff\xfe"
NEW = b"nouvelle version\n" * 1000


def _names(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def _disk_full(fd, data):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("durable", [True, False])
def test_replace_file_writes_whole_with_mode_0600(tmp_path, durable):
    path = tmp_path / "f.bin"
    path.write_bytes(OLD)
    fsutil.replace_file(path, NEW, durable=durable)
    assert path.read_bytes() == NEW
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert _names(tmp_path) == ["f.bin"]


def test_replace_file_failing_write_keeps_the_old_file_and_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "f.bin"
    path.write_bytes(OLD)
    monkeypatch.setattr(fsutil, "write_all", _disk_full)
    with pytest.raises(OSError) as info:
        fsutil.replace_file(path, NEW)
    assert info.value.errno == errno.ENOSPC
    assert path.read_bytes() == OLD
    assert _names(tmp_path) == ["f.bin"]


def test_replace_file_failing_rename_keeps_the_old_file_and_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "f.bin"
    path.write_bytes(OLD)

    def read_only(src, dst):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(os, "replace", read_only)
    with pytest.raises(OSError, match="Read-only"):
        fsutil.replace_file(path, NEW)
    monkeypatch.undo()
    assert path.read_bytes() == OLD
    assert _names(tmp_path) == ["f.bin"]


def test_replace_file_interrupted_keeps_the_old_file_and_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "f.bin"
    path.write_bytes(OLD)

    def interrupted(fd, data):
        os.write(fd, data[:10])
        raise KeyboardInterrupt

    monkeypatch.setattr(fsutil, "write_all", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fsutil.replace_file(path, NEW)
    assert path.read_bytes() == OLD
    assert _names(tmp_path) == ["f.bin"]


def test_replace_file_creates_a_new_file(tmp_path):
    fsutil.replace_file(tmp_path / "new", b"")
    assert (tmp_path / "new").read_bytes() == b""
    assert _names(tmp_path) == ["new"]


def test_replace_file_in_a_missing_directory_fails_and_creates_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        fsutil.replace_file(tmp_path / "no" / "f", NEW)
    assert _names(tmp_path) == []


def test_write_temp_names_its_writer_and_cleans_up_a_failure(tmp_path, monkeypatch):
    tmp = fsutil.write_temp(tmp_path, NEW, durable=False)
    name = os.path.basename(tmp)
    assert name.startswith(f"{fsutil.TMP_PREFIX}{os.getpid()}-")
    assert (tmp_path / name).read_bytes() == NEW
    monkeypatch.setattr(fsutil, "write_all", _disk_full)
    with pytest.raises(OSError):
        fsutil.write_temp(tmp_path, NEW)
    assert _names(tmp_path) == [name]


def test_atomic_write_makes_its_directory_and_reports_a_failure(tmp_path, monkeypatch):
    path = tmp_path / "store" / "cache" / "x.bin"
    assert fsutil.atomic_write(path, NEW) is None
    assert path.read_bytes() == NEW
    assert stat.S_IMODE((tmp_path / "store").stat().st_mode) == 0o700
    monkeypatch.setattr(fsutil, "write_all", _disk_full)
    reason = fsutil.atomic_write(path, OLD)
    assert reason is not None and reason.startswith("No space left on device: ")
    assert path.read_bytes() == NEW
    assert _names(path.parent) == ["x.bin"]


def test_atomic_write_under_a_file_is_a_reason_not_an_exception(tmp_path):
    (tmp_path / "file").write_text("x")
    reason = fsutil.atomic_write(tmp_path / "file" / "cache" / "x.bin", NEW)
    assert reason == f"File exists: {tmp_path / 'file'}"
    assert _names(tmp_path) == ["file"]


def test_write_output_has_the_mode_of_a_plain_open(tmp_path, monkeypatch):
    out = tmp_path / "pack.md"
    out.write_bytes(OLD)
    out.chmod(0o600)
    old_umask = os.umask(0o027)
    try:
        assert fsutil.write_output(str(out), NEW) is None
    finally:
        os.umask(old_umask)
    assert out.read_bytes() == NEW
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    monkeypatch.setattr(fsutil, "write_all", _disk_full)
    assert fsutil.write_output(str(out), OLD) == "No space left on device"
    assert out.read_bytes() == NEW
    assert _names(tmp_path) == ["pack.md"]


def test_write_output_refuses_what_is_not_a_file_path(tmp_path):
    assert fsutil.write_output(str(tmp_path), NEW) == "is a directory"
    missing = tmp_path / "no" / "out.md"
    assert fsutil.write_output(str(missing), NEW) == f"no such directory: {missing.parent}"
    assert _names(tmp_path) == []


def test_size_suffixes():
    from ctxtools.store import parse_size

    assert parse_size("500M") == 500 << 20
    assert parse_size("1G") == 1 << 30
    assert parse_size("64k") == 64 << 10
    assert parse_size("2.5GB") == int(2.5 * (1 << 30))
    assert parse_size("1024") == 1024


# --- looks_binary: what ctx-count and the store call binary (issue 20) -----------------------


def test_looks_binary_nul_random_and_text():
    import gzip
    import random

    rnd = random.Random(20).randbytes(4096)
    assert fsutil.looks_binary(rnd)
    # random bytes with every NUL taken out are still binary: mostly not UTF-8
    assert fsutil.looks_binary(rnd.replace(b"\0", b"\x01"))
    assert fsutil.looks_binary(gzip.compress(b"hello world\n" * 100, mtime=0))
    assert fsutil.looks_binary(b"text\0more text")
    assert not fsutil.looks_binary(b"")
    assert not fsutil.looks_binary(b"plain ascii\n" * 100)
    text = "日本語のログ, ünïcödé and text\n".encode() * 50
    assert not fsutil.looks_binary(text)
    assert not fsutil.looks_binary(text[:-1])  # a character cut at the end of the head
    # text in Latin-1: its few accented letters are not UTF-8, but it is text
    assert not fsutil.looks_binary("Grüße aus München, café crème.\n".encode("latin-1") * 50)
    # only the first BINARY_PROBE bytes decide
    assert not fsutil.looks_binary(b"a" * fsutil.BINARY_PROBE + b"\0")
