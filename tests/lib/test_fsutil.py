"""The toolkit's one atomic write (ctxtools.fsutil.replace_file) and the writers on it:
a failed write leaves the old file as it was and no temporary file behind."""

from __future__ import annotations

import contextlib
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


def test_replace_file_writes_a_list_of_pieces_one_after_the_other(tmp_path):
    path = tmp_path / "f.bin"
    fsutil.replace_file(path, [b"head\n", b"", NEW])
    assert path.read_bytes() == b"head\n" + NEW
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


def test_write_output_gives_a_new_file_the_mode_of_a_plain_open(tmp_path, monkeypatch):
    out = tmp_path / "pack.md"
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


# --- what -o may name (issue 21, item 8) ------------------------------------------------------


def test_write_output_keeps_an_existing_files_mode_and_replaces_it_atomically(tmp_path):
    out = tmp_path / "pack.md"
    out.write_bytes(OLD)
    out.chmod(0o600)
    before = out.stat().st_ino
    old_umask = os.umask(0o022)
    try:
        assert fsutil.write_output(str(out), NEW) is None
    finally:
        os.umask(old_umask)
    assert out.read_bytes() == NEW
    assert stat.S_IMODE(out.stat().st_mode) == 0o600  # was 0644: the umask's
    assert out.stat().st_ino != before  # a new file put in place, not rewritten in place
    assert _names(tmp_path) == ["pack.md"]


def test_write_output_writes_through_to_a_hard_linked_file(tmp_path):
    out = tmp_path / "pack.md"
    out.write_bytes(OLD)
    os.link(out, tmp_path / "other-name.md")
    assert fsutil.write_output(str(out), NEW) is None
    assert out.stat().st_nlink == 2  # the link is not broken: both names see the pack
    assert (tmp_path / "other-name.md").read_bytes() == NEW
    assert _names(tmp_path) == ["other-name.md", "pack.md"]


@pytest.mark.parametrize("via_link", [False, True])
def test_write_output_writes_through_to_a_fifo(tmp_path, via_link):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    out = fifo
    if via_link:
        out = tmp_path / "link"
        out.symlink_to("fifo")
    # The reading end, opened first (without waiting for a writer): the pack fits the
    # pipe's buffer, so the write needs nobody reading meanwhile.
    r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert fsutil.write_output(str(out), NEW) is None
        got = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(r, 1 << 16):
                got += chunk
    finally:
        os.close(r)
    assert got == NEW
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not a regular file
    assert os.path.islink(out) == via_link


def test_write_output_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "pack.md"
    target.write_bytes(OLD)
    target.chmod(0o640)
    link = tmp_path / "pack.md"
    link.symlink_to(target)
    assert fsutil.write_output(str(link), NEW) is None
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == NEW
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _names(tmp_path / "real") == ["pack.md"]


def test_write_output_to_a_descriptor_link_writes_to_that_descriptor(tmp_path):
    r, w = os.pipe()
    try:
        link = tmp_path / "out"
        link.symlink_to(f"/proc/self/fd/{w}")  # what /dev/stdout is, on another number
        assert fsutil.output_plan("/dev/stdout") == ("descriptor", "1")
        assert fsutil.output_plan(f"/dev/fd/{w}") == ("descriptor", str(w))
        assert fsutil.write_output(str(link), b"pack\n") is None
        assert os.read(r, 100) == b"pack\n"
        assert link.is_symlink()  # the old write put a regular file in its place
    finally:
        os.close(r)
        os.close(w)


def test_write_output_writes_through_to_a_character_device(tmp_path):
    assert fsutil.output_plan("/dev/null") == ("through", "/dev/null")
    node = tmp_path / "null"
    try:  # a device node of our own (root only): /dev/null itself is not ours to risk
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        return  # the plan above is what the write follows
    assert fsutil.write_output(str(node), NEW) is None
    assert stat.S_ISCHR(node.stat().st_mode)


def test_write_output_refuses_a_socket_and_leaves_it(tmp_path):
    import socket

    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        problem = fsutil.write_output(str(path), NEW)
    assert problem is not None and problem.startswith("not a regular file, a FIFO or")
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


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


def test_read_whole_is_what_reading_the_file_gives(tmp_path):
    from ctxtools.fsutil import read_whole

    for name, data in (("empty", b""), ("small", b"abc\n"), ("big", bytes(range(256)) * 9000)):
        path = tmp_path / name
        path.write_bytes(data)
        assert read_whole(path) == data == path.read_bytes()
    with pytest.raises(FileNotFoundError):
        read_whole(tmp_path / "missing")
    with pytest.raises(IsADirectoryError):
        read_whole(tmp_path)


def test_the_temp_guard_takes_only_default_signals_and_gives_them_back():
    import signal
    import threading

    from ctxtools import fsutil

    def mine(_s, _f):
        pass

    old = signal.signal(signal.SIGHUP, mine)
    try:
        with fsutil.temp_guard():
            assert signal.getsignal(signal.SIGHUP) is mine  # a caller's handler stays
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, mine)
            with fsutil.temp_guard():  # nested: the outer guard is the one in charge
                inner = signal.getsignal(signal.SIGTERM)
            assert signal.getsignal(signal.SIGTERM) is inner
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        assert signal.getsignal(signal.SIGHUP) is mine
        seen = []

        def in_thread():
            with fsutil.temp_guard():
                seen.append(signal.getsignal(signal.SIGTERM))

        t = threading.Thread(target=in_thread)
        t.start()
        t.join()
        assert seen == [signal.SIG_DFL]  # a worker thread takes no signal: nothing set
    finally:
        signal.signal(signal.SIGHUP, old)


def test_a_sigterm_inside_the_guard_removes_the_temp_file_then_ends_by_it(tmp_path):
    import subprocess
    import sys

    code = (
        "import os, signal, sys\n"
        "from ctxtools import fsutil\n"
        "class Boom(list):\n"
        "    def __iter__(self):\n"
        "        yield b'x' * 1000\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        yield b'y'\n"
        "fsutil.replace_file(sys.argv[1] + '/out', Boom())\n"
        "print('not reached')\n"
    )
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True)
    assert r.returncode == -15 and r.stdout == b""
    assert list(tmp_path.iterdir()) == []


def test_temp_guard_ends_by_the_signal_even_when_its_handler_ran_with_it_blocked():
    # The guard's handler runs in the main thread at its next instruction -- also inside
    # a window that blocks the signal (a helper thread's start) before that window
    # restores the mask: the guard must still end the process by the signal, not exit 143.
    from helpers import ends_by_sigterm

    ends_by_sigterm([
        "from ctxtools import fsutil",
        "with fsutil.temp_guard():",
        "    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])",
        "    fsutil._raise_ending(signal.SIGTERM, None)",
    ])
