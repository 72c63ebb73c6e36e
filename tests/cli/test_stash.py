"""ctx-stash: cards, passthrough, -- CMD, housekeeping, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import run_bytes

from ctxtools.store import HandleStore

BIN = Path(sys.executable).parent
PYTEST_LOG = "".join(
    f"tests/test_auth.py::test_login_{i} {'FAILED' if i % 17 == 0 else 'PASSED'}\n"
    for i in range(300)
).encode()


def card_of(result) -> dict:
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1 and result.stdout.endswith("\n")
    return json.loads(result.stdout)


def test_big_input_becomes_a_card(script_runner, store_dir):
    r = run_bytes(script_runner, ["ctx-stash", "--name", "tests"], PYTEST_LOG)
    card = card_of(r)
    assert list(card) == [
        "kind",
        "session_id",
        "name",
        "type",
        "length",
        "lines",
        "bytes",
        "repr_preview",
        "sha256",
        "ref",
    ]
    assert card["ref"] == f"ctx:default/tests@{card['sha256'][:12]}"
    assert (card["lines"], card["bytes"], card["type"]) == (300, len(PYTEST_LOG), "text")
    assert HandleStore(store_dir).read_bytes("tests") == PYTEST_LOG


def _rand(n: int, seed: int) -> str:
    import random

    rng = random.Random(seed)
    return "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
                   for _ in range(n))


@pytest.mark.parametrize(
    "head, kind",
    [
        # an env dump: the first line's value would be the card's first characters
        ("GITHUB_TOKEN=ghp_{t}\nHOME=/root\n", "GitHub token"),
        ("token ghp_{t} loaded\n", "GitHub token"),
        # a key printed by a CI step: its BEGIN line and first base64 line fill the preview
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAA"
         "AAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACB{t}\n", "private key"),
    ],
)
def test_a_secret_in_the_first_lines_is_not_on_the_card(script_runner, store_dir, head, kind):
    """The card is what the model reads of a stored log: its preview shows the marker, the
    payload itself is stored byte for byte (ctx-read gives it back)."""
    secret = _rand(36, 7)
    data = head.replace("{t}", secret).encode() + PYTEST_LOG
    card = card_of(run_bytes(script_runner, ["ctx-stash", "--name", "env"], data))
    assert f"[secret redacted: {kind}]" in card["repr_preview"]
    assert secret[:8] not in card["repr_preview"] and "b3BlbnNz" not in card["repr_preview"]
    assert HandleStore(store_dir).read_bytes("env") == data


def test_a_plain_preview_is_unchanged_by_the_redaction(script_runner, store_dir):
    card = card_of(run_bytes(script_runner, ["ctx-stash"], PYTEST_LOG))
    assert card["repr_preview"] == (
        "tests/test_auth.py::test_login_0 FAILED tests/test_auth.py::test_login_1\u2026"
    )


def test_small_input_passes_through(script_runner, store_dir):
    data = b"3 passed in 0.01s\n\xff raw byte kept\n"
    r = run_bytes(script_runner, ["ctx-stash"], data)
    assert r.returncode == 0
    assert r.stdout.encode("utf-8", "surrogateescape") == data or "raw byte" in r.stdout
    assert not store_dir.exists()


def test_a_named_small_input_passes_through_and_is_the_name_s_latest_run(
    script_runner, store_dir
):
    """Issue 27.2: a named stash of a failing run (big, stored) and then of a passing one
    (small, passed through) left the name at the failing run: `ctx-read tests` showed the
    old failure after the tests passed. The name now always means the latest run: a small
    input still passes through, byte for byte, and is stored under the name too."""
    failing = b"".join(b"FAILED tests/test_x.py::test_%d - assert 0\n" % i for i in range(60))
    failing += b"15 failed, 206 passed in 3.2s\n"
    first = run_bytes(script_runner, ["ctx-stash", "--name", "tests"], failing)
    assert card_of(first)["name"] == "tests"
    r = run_bytes(script_runner, ["ctx-stash", "--name", "tests"], b"1 passed\n")
    assert (r.returncode, r.stdout, r.stderr) == (0, "1 passed\n", "")
    read = script_runner.run(["ctx-read", "tests", "--tail", "1"])
    assert (read.returncode, read.stdout) == (0, "1 passed\n")
    assert HandleStore(store_dir).read_bytes("tests") == b"1 passed\n"
    empty = run_bytes(script_runner, ["ctx-stash", "--name", "tests"], b"")
    assert (empty.returncode, empty.stdout) == (0, "")
    assert HandleStore(store_dir).read_bytes("tests") == b""
    stale = script_runner.run(["ctx-read", card_of(first)["ref"]])
    assert stale.returncode == 1 and "1 passed" not in stale.stdout
    unnamed = run_bytes(script_runner, ["ctx-stash"], b"hello\n")
    assert (unnamed.stdout, unnamed.stderr) == ("hello\n", "")  # a filter chain: quiet


def test_a_named_small_input_that_cannot_be_stored_still_passes_through(
    script_runner, tmp_path, monkeypatch
):
    # the name cannot mean the latest run: exit 1 and why, but the chain's output goes on
    (tmp_path / "not-a-dir").write_text("x")
    monkeypatch.setenv("CTX_STORE", str(tmp_path / "not-a-dir"))
    r = run_bytes(script_runner, ["ctx-stash", "--name", "tests"], b"1 passed\n")
    assert (r.returncode, r.stdout) == (1, "1 passed\n")
    assert r.stderr.startswith("ctx-stash: error: store root ") and r.stderr.count("\n") == 1


def test_small_input_passthrough_is_byte_exact(tmp_path, store_dir):
    data = b"ok \xff\xfe \xe6\x97\xa5\n"
    out = subprocess.run(
        [BIN / "ctx-stash"], input=data, capture_output=True, env={**os.environ}, check=True
    )
    assert out.stdout == data
    assert not store_dir.exists()


def test_threshold_counts_characters(script_runner, store_dir):
    cjk = ("日本語" * 300).encode()  # 900 chars, 2700 bytes
    r = run_bytes(script_runner, ["ctx-stash"], cjk)
    assert r.stdout == "日本語" * 300
    r = run_bytes(script_runner, ["ctx-stash", "--threshold", "899"], cjk)
    assert card_of(r)["length"] == 900
    r = run_bytes(script_runner, ["ctx-stash", "--threshold", "0", "--name", "e"], b"")
    assert r.stdout == ""


def test_always_stores_small_input(script_runner, store_dir):
    card = card_of(run_bytes(script_runner, ["ctx-stash", "--always"], b"tiny\n"))
    assert card["name"] == card["sha256"][:12]
    assert HandleStore(store_dir).read_bytes(card["name"]) == b"tiny\n"


def test_file_argument(script_runner, tmp_path, store_dir):
    f = tmp_path / "log.txt"
    f.write_bytes(PYTEST_LOG)
    card = card_of(script_runner.run(["ctx-stash", str(f), "--name", "f"]))
    assert card["bytes"] == len(PYTEST_LOG)


@pytest.mark.process
def test_missing_file(script_runner, tmp_path, store_dir):
    r = script_runner.run(["ctx-stash", str(tmp_path / "nope.txt")])
    assert r.returncode == 1
    assert "no such file" in r.stderr
    assert not store_dir.exists()


def test_type_detection_and_override(script_runner):
    doc = json.dumps({"tests": [{"name": f"t{i}"} for i in range(100)]}).encode()
    assert card_of(run_bytes(script_runner, ["ctx-stash"], doc))["type"] == "json"
    lines = b"".join(json.dumps({"i": i}).encode() + b"\n" for i in range(200))
    assert card_of(run_bytes(script_runner, ["ctx-stash"], lines))["type"] == "jsonl"
    r = run_bytes(script_runner, ["ctx-stash", "--type", "text"], doc)
    assert card_of(r)["type"] == "text"
    r = run_bytes(script_runner, ["ctx-stash", "--type", "yaml"], doc)
    assert r.returncode == 2


def test_restash_makes_a_new_version(script_runner):
    old = card_of(run_bytes(script_runner, ["ctx-stash", "--name", "t"], PYTEST_LOG))
    new = card_of(run_bytes(script_runner, ["ctx-stash", "--name", "t"], PYTEST_LOG + b"more\n"))
    assert old["ref"] != new["ref"]
    r = script_runner.run(["ctx-read", old["ref"], "--head", "1"])
    assert r.returncode == 1
    assert "stale handle" in r.stderr and r.stdout == ""
    r = script_runner.run(["ctx-read", "t", "--tail", "1"])
    assert r.stdout == "more\n"


@pytest.mark.parametrize(
    "args",
    [
        ["--name", "a/b"],
        ["--name", ".."],
        ["--name", "../x"],
        ["--name", ""],
        ["--name", "x" * 129],
        ["--session", "../s"],
        ["--session", ""],
    ],
)
def test_bad_names(script_runner, store_dir, args):
    r = run_bytes(script_runner, ["ctx-stash", *args], PYTEST_LOG)
    assert r.returncode == 2
    assert r.stderr.startswith("ctx-stash: error: ")
    assert "name" in r.stderr or "session" in r.stderr
    assert not store_dir.exists()


def test_name_of_128_is_fine(script_runner):
    card = card_of(run_bytes(script_runner, ["ctx-stash", "--name", "x" * 128], PYTEST_LOG))
    assert card["name"] == "x" * 128


# --- -- CMD ----------------------------------------------------------------------------------


@pytest.mark.process
def test_command_exit_status_and_interleaving(script_runner, store_dir):
    prog = (
        "import sys\n"
        "for i in range(3):\n"
        " print('out', i, flush=True)\n"
        " print('err', i, file=sys.stderr, flush=True)\n"
        "sys.exit(3)"
    )
    r = script_runner.run(["ctx-stash", "--name", "run", "--", sys.executable, "-c", prog])
    assert r.returncode == 3
    card = json.loads(r.stdout)
    assert card["exit_status"] == 3
    assert list(card)[-1] == "exit_status"
    data = HandleStore(store_dir).read_bytes("run")
    assert data == b"out 0\nerr 0\nout 1\nerr 1\nout 2\nerr 2\n"


def test_command_success_and_no_shell(script_runner, store_dir):
    r = script_runner.run(["ctx-stash", "--name", "e", "--", "echo", "$HOME", "*", ";", "ls"])
    assert r.returncode == 0
    assert json.loads(r.stdout)["exit_status"] == 0
    assert HandleStore(store_dir).read_bytes("e") == b"$HOME * ; ls\n"


def test_command_tee(store_dir):
    out = subprocess.run(
        [BIN / "ctx-stash", "--tee", "--name", "t", "--", "printf", "a\\nb\\n"],
        capture_output=True,
        check=True,
    )
    assert out.stderr == b"a\nb\n"
    assert json.loads(out.stdout)["lines"] == 2


SEQ = b"".join(b"%d\n" % i for i in range(1, 200001))  # 1.2 MB: many times a pipe's buffer


def _tee_read_back(name: str) -> None:
    """ctx-read finds the handle NAME whole: the output of ``seq 200000``."""
    got = subprocess.run(
        [BIN / "ctx-read", name, "--count"], capture_output=True, timeout=60, check=True
    )
    count = json.loads(got.stdout)
    assert (count["lines"], count["bytes"]) == (200000, len(SEQ))
    tail = subprocess.run(
        [BIN / "ctx-read", name, "--tail", "1"], capture_output=True, timeout=60, check=True
    )
    assert b"200000" in tail.stdout


def test_command_tee_stderr_closed_early(tmp_path, store_dir):
    # A hostile tester: `ctx-stash --tee -- seq 200000 2> >(head -c 10)`. The reader of the
    # output stopped at the first failed copy to stderr (EPIPE), nobody drained the pipe,
    # seq blocked on it and ctx-stash waited for seq forever, deaf to SIGTERM and Ctrl-C,
    # storing nothing. A failed copy stops the copying only, as with GNU tee.
    out = tmp_path / "card"
    with out.open("wb") as card_file:
        proc = subprocess.Popen(
            [BIN / "ctx-stash", "--tee", "--name", "t8", "--", "seq", "200000"],
            stdout=card_file,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        try:
            assert proc.stderr is not None
            assert proc.stderr.read(10) == b"1\n2\n3\n4\n5\n"
            proc.stderr.close()  # the reader goes away: the tee's next write gets EPIPE
            code = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert code == 0  # the command's status: a traceback or an error would say 1
    card = json.loads(out.read_bytes())  # the card alone: one JSON line, no traceback
    assert out.read_bytes().count(b"\n") == 1
    assert (card["name"], card["exit_status"], card["bytes"]) == ("t8", 0, len(SEQ))
    assert "incomplete" not in card
    assert HandleStore(store_dir).read_bytes("t8") == SEQ
    _tee_read_back("t8")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_command_tee_stderr_full(store_dir):
    # `2>/dev/full`: every copy to stderr fails (ENOSPC). ctx-stash said nothing, stored
    # nothing and exited 1; the capture must go on, the card be printed as usual and
    # ctx-stash exit with the command's status.
    with open("/dev/full", "wb") as full:
        out = subprocess.run(
            [BIN / "ctx-stash", "--tee", "--name", "t1", "--", "sh", "-c", "seq 200000; exit 3"],
            stdout=subprocess.PIPE,
            stderr=full,
            stdin=subprocess.DEVNULL,
            timeout=30,
        )
    assert out.returncode == 3
    card = json.loads(out.stdout)
    assert out.stdout.count(b"\n") == 1
    assert (card["name"], card["exit_status"], card["bytes"]) == ("t1", 3, len(SEQ))
    assert HandleStore(store_dir).read_bytes("t1") == SEQ
    _tee_read_back("t1")


def test_command_killed_by_signal(store_dir):
    out = subprocess.run(
        [BIN / "ctx-stash", "--name", "k", "--", "sh", "-c", "echo hi; kill -TERM $$"],
        capture_output=True,
    )
    assert out.returncode == 128 + signal.SIGTERM
    # issue 28.7: the card says what ctx-stash exits with, the shell's 128 + N
    assert json.loads(out.stdout)["exit_status"] == 128 + signal.SIGTERM


@pytest.mark.process
def test_command_not_found(script_runner, store_dir):
    r = script_runner.run(["ctx-stash", "--name", "x", "--", "no-such-command-xyz", "-v"])
    assert r.returncode == 127
    assert r.stderr == "ctx-stash: error: no-such-command-xyz: command not found\n"
    assert r.stdout == ""
    assert not list(store_dir.rglob("*.json"))


@pytest.mark.process
def test_command_not_executable(script_runner, tmp_path):
    f = tmp_path / "script.sh"
    f.write_text("echo hi\n")
    f.chmod(0o644)
    r = script_runner.run(["ctx-stash", "--", str(f)])
    assert r.returncode == 126
    assert "permission denied" in r.stderr


def test_nothing_after_dashes(script_runner):
    r = script_runner.run(["ctx-stash", "--"])
    assert r.returncode == 2


def test_command_not_run_when_store_unusable(script_runner, tmp_path, monkeypatch):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    monkeypatch.setenv("CTX_STORE", str(blocker / "store"))
    marker = tmp_path / "ran"
    r = script_runner.run(["ctx-stash", "--", "touch", str(marker)])
    assert r.returncode == 1
    assert "not a directory" in r.stderr
    assert not marker.exists()
    assert blocker.read_text() == "x"


# --- bad stores ----------------------------------------------------------------------------


def test_store_root_is_a_file(script_runner, tmp_path, monkeypatch):
    f = tmp_path / "store-file"
    f.write_text("precious")
    monkeypatch.setenv("CTX_STORE", str(f))
    r = run_bytes(script_runner, ["ctx-stash", "--name", "x"], PYTEST_LOG)
    assert r.returncode == 1
    assert r.stderr == (
        f"ctx-stash: error: store root {f} is not a directory "
        "(point --store or CTX_STORE at a directory)\n"
    )
    assert f.read_text() == "precious"


def test_store_root_under_a_file(script_runner, tmp_path, monkeypatch):
    f = tmp_path / "store-file"
    f.write_text("precious")
    monkeypatch.setenv("CTX_STORE", str(f / "store"))
    r = run_bytes(script_runner, ["ctx-stash", "--name", "x"], PYTEST_LOG)
    assert r.returncode == 1
    assert r.stderr.startswith("ctx-stash: error: store root")
    assert "not a directory" in r.stderr
    assert f.read_text() == "precious"
    r = script_runner.run(["ctx-read", "x"])  # not "no handle": the store's own error
    assert r.returncode == 1
    assert r.stderr == (
        f"ctx-read: error: store root {f / 'store'} is not a directory (a parent is a file) "
        "(point --store or CTX_STORE at a directory)\n"
    )


@pytest.mark.script_launch_mode("inprocess")  # monkeypatches the library
def test_full_store_keeps_existing_handles(script_runner, store_dir, monkeypatch):
    import errno

    from ctxtools import fsutil

    card_of(run_bytes(script_runner, ["ctx-stash", "--name", "keep"], PYTEST_LOG))
    before = sorted((p, p.read_bytes()) for p in store_dir.rglob("*") if p.is_file())

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(fsutil, "write_all", full)
        r = run_bytes(script_runner, ["ctx-stash", "--name", "keep"], PYTEST_LOG * 2)
    assert r.returncode == 1
    assert "no space left on device" in r.stderr
    assert "nothing was changed" in r.stderr
    after = sorted((p, p.read_bytes()) for p in store_dir.rglob("*") if p.is_file())
    assert after == before
    assert script_runner.run(["ctx-read", "keep", "--verify", "--count", "--heuristic"]).success


@pytest.mark.script_launch_mode("inprocess")  # monkeypatches the library
def test_read_only_store_directory(script_runner, store_dir, monkeypatch):
    import errno

    from ctxtools import fsutil

    card_of(run_bytes(script_runner, ["ctx-stash", "--name", "keep"], PYTEST_LOG))
    before = sorted((p, p.read_bytes()) for p in store_dir.rglob("*") if p.is_file())
    with monkeypatch.context() as m:
        if os.geteuid() == 0:
            # root ignores directory permissions: refuse the way a read-only directory does
            def refuse(path, mode=0o600):
                raise PermissionError(errno.EACCES, "Permission denied", str(path))

            m.setattr(fsutil, "create_temp", refuse)
        else:  # pragma: no cover - CI runs as root
            for d in [store_dir, *store_dir.rglob("*")]:
                if d.is_dir():
                    d.chmod(0o500)
        try:
            r = run_bytes(script_runner, ["ctx-stash", "--name", "keep"], PYTEST_LOG * 2)
            r2 = script_runner.run(["ctx-stash", "--name", "k2", "--", "echo", "hi"])
        finally:
            for d in [store_dir, *store_dir.rglob("*")]:
                if d.is_dir():
                    d.chmod(0o700)
    assert r.returncode == 1
    assert r.stderr.startswith("ctx-stash: error: cannot write in store")
    assert "permission denied" in r.stderr
    assert r2.returncode == 1 and "permission denied" in r2.stderr and r2.stdout == ""
    after = sorted((p, p.read_bytes()) for p in store_dir.rglob("*") if p.is_file())
    assert after == before
    assert HandleStore(store_dir).read_bytes("keep") == PYTEST_LOG


@pytest.mark.script_launch_mode("inprocess")  # monkeypatches the library
def test_a_card_that_cannot_be_written_leaves_no_blob(script_runner, store_dir, monkeypatch):
    """The blob goes in place before its card; when the card then cannot be written (a
    full disk, a read-only session directory), the blob this run placed goes again -- the
    message says nothing was changed, and a full disk is not left fuller."""
    import errno

    card_of(run_bytes(script_runner, ["ctx-stash", "--name", "keep"], PYTEST_LOG))
    before = sorted((p, p.read_bytes()) for p in store_dir.rglob("*") if p.is_file())
    real = os.replace

    def full(src, dst, **kw):
        if str(dst).endswith("/fit5000.json"):
            raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        return real(src, dst, **kw)

    with monkeypatch.context() as m:
        m.setattr(os, "replace", full)
        r = run_bytes(script_runner, ["ctx-stash", "--name", "fit5000"], PYTEST_LOG * 3)
        r2 = run_bytes(script_runner, ["ctx-stash", "--name", "fit5000"], PYTEST_LOG)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (
        f"ctx-stash: error: cannot write the card in store {store_dir}: no space left on "
        "device (nothing was changed; free space, fix permissions or use --store DIR)\n"
    )
    assert r2.returncode == 1  # the same bytes as "keep": its blob stays
    after = sorted((p, p.read_bytes()) for p in store_dir.rglob("*") if p.is_file())
    assert after == before
    assert script_runner.run(["ctx-read", "keep", "--verify", "--count", "--heuristic"]).success


def _outside_session(store_dir: Path, tmp_path: Path) -> Path:
    """sessions/ext, a link to a directory outside the store with a file there that
    looks like a (damaged) card."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.json").write_text('{"x": 1}\n')
    (store_dir / "sessions" / "ext").symlink_to(outside)
    return outside


@pytest.mark.process
def test_a_session_that_is_a_link_is_refused(script_runner, store_dir, tmp_path):
    """A session directory that is a symbolic link is not the store's: --rm, a stash, a
    read and --list --session refuse it (exit 1, one line), --list and --gc of the whole
    store skip it with a note; nothing outside the store is read, written or removed."""
    _stash(script_runner, "a", PYTEST_LOG)
    outside = _outside_session(store_dir, tmp_path)
    (tmp_path / "in.txt").write_bytes(PYTEST_LOG)
    link = store_dir / "sessions" / "ext"
    line = (
        f"session ext: {link} is a symbolic link, not a session directory of the store's "
        "(the store reads, writes and removes nothing through it: remove it, or use "
        "another --session)\n"
    )
    for args in (
        ["ctx-stash", "--session", "ext", "--rm", "victim"],
        ["ctx-stash", "--session", "ext", "--name", "newcard", str(tmp_path / "in.txt")],
        ["ctx-stash", "--session", "ext", "--list"],
        ["ctx-read", "ext/victim"],
        # a command is refused before it runs: it would be run for nothing
        ["ctx-stash", "--session", "ext", "--name", "ran", "--", "touch", str(tmp_path / "ran")],
    ):
        r = script_runner.run(args)
        assert (r.returncode, r.stdout) == (1, ""), args
        assert r.stderr == f"{args[0]}: error: {line}", args
    assert not (tmp_path / "ran").exists()
    r = script_runner.run(["ctx-stash", "--list", "--all-sessions"])
    assert r.returncode == 0 and r.stdout.startswith("default/a ")
    note = f"session ext: {link} is a symbolic link, not a session directory of the store's"
    assert r.stderr == f"ctx-stash: warning: skipped {note}\n"
    r = script_runner.run(["ctx-stash", "--gc", "--max-entries", "0"])
    assert r.returncode == 0 and r.stdout.startswith("evicted default/a\n")
    assert r.stderr.startswith(
        f"ctx-stash: warning: skipped {note} (gc removes nothing there)\n"
        "ctx-stash: note: 1 unreferenced blobs kept: "
    )
    assert sorted(p.name for p in outside.iterdir()) == ["victim.json"]
    assert (outside / "victim.json").read_text() == '{"x": 1}\n'


@pytest.mark.process
def test_a_card_that_is_a_fifo_does_not_hang_a_listing(store_dir):
    """A card file that is a FIFO (or a link, a directory) is a damaged card, not a file
    to wait on: --list and --gc go on, --rm removes it."""
    env = {**os.environ, "CTX_STORE": str(store_dir)}
    stash = [BIN / "ctx-stash", "--always", "--name", "a"]
    subprocess.run(stash, input=b"x\n", env=env, check=True)
    os.mkfifo(store_dir / "sessions" / "default" / "f.json")
    for args in (["--list"], ["--gc"], ["--rm", "f"]):
        r = subprocess.run(
            [BIN / "ctx-stash", *args], capture_output=True, text=True, env=env, timeout=30
        )
        assert r.returncode == 0, (args, r.stderr)
        if args != ["--rm", "f"]:
            assert "its card" in r.stderr and "is not a regular file" in r.stderr
    assert not os.path.lexists(store_dir / "sessions" / "default" / "f.json")


# --- housekeeping --------------------------------------------------------------------------


def _stash(script_runner, name, data, session=None):
    args = ["ctx-stash", "--always", "--name", name]
    if session:
        args += ["--session", session]
    return card_of(run_bytes(script_runner, args, data))


def test_list_by_frecency(script_runner):
    _stash(script_runner, "alpha", b"a" * 2000)
    _stash(script_runner, "beta", b"b" * 3000)
    _stash(script_runner, "other", b"o", session="s2")
    for _ in range(3):
        assert script_runner.run(["ctx-read", "alpha", "--head", "1"]).success
    r = script_runner.run(["ctx-stash", "--list", "--json"])
    rows = json.loads(r.stdout)
    assert [row["name"] for row in rows] == ["alpha", "beta"]
    assert rows[0]["access_count"] == 3 and rows[1]["access_count"] == 0
    assert rows[0]["frecency"] > rows[1]["frecency"]
    r = script_runner.run(["ctx-stash", "--list"])
    lines = r.stdout.splitlines()
    assert lines[0].startswith("alpha") and "3 reads" in lines[0]
    assert lines[1].startswith("beta") and lines[1].endswith(rows[1]["ref"])
    r = script_runner.run(["ctx-stash", "--list", "--all-sessions", "--json"])
    assert sorted(row["ref"].split("@")[0] for row in json.loads(r.stdout)) == [
        "ctx:default/alpha",
        "ctx:default/beta",
        "ctx:s2/other",
    ]
    r = script_runner.run(["ctx-stash", "--list", "--session", "empty"])
    assert r.success and r.stdout == ""


def test_rm(script_runner, store_dir):
    _stash(script_runner, "a", b"1")
    _stash(script_runner, "b", b"2")
    r = script_runner.run(["ctx-stash", "--rm", "a"])
    assert r.stdout == "removed ctx:default/a\n"
    assert script_runner.run(["ctx-read", "a"]).returncode == 1
    r = script_runner.run(["ctx-stash", "--rm", "b", "nope"])
    assert r.returncode == 1 and "no handle default/nope" in r.stderr
    assert script_runner.run(["ctx-read", "b"]).stdout == "2"  # nothing removed
    assert script_runner.run(["ctx-stash", "--rm"]).returncode == 2
    assert script_runner.run(["ctx-stash", "--rm", "../etc"]).returncode == 2


def test_gc_budget_and_dry_run(script_runner, store_dir):
    st = HandleStore(store_dir)
    for i, name in enumerate(["old", "mid", "new"]):
        _stash(script_runner, name, bytes([65 + i]) * 1000)
        time.sleep(0.01)
    st.record_access("default", "mid")  # read later than "new" was stashed
    before = sorted(p for p in store_dir.rglob("*") if p.is_file())
    r = script_runner.run(["ctx-stash", "--gc", "--max-bytes", "1500", "--dry-run", "--json"])
    report = json.loads(r.stdout)
    assert report["dry_run"] is True
    assert report["evicted"] == ["default/old", "default/new"]
    assert sorted(p for p in store_dir.rglob("*") if p.is_file()) == before
    r = script_runner.run(["ctx-stash", "--gc", "--max-entries", "1"])
    assert r.stdout.splitlines()[:2] == ["evicted default/old", "evicted default/new"]
    assert [e["id"] for e in st.entries()] == ["default/mid"]
    assert st.read_bytes("mid") == b"B" * 1000
    blobs = [p for p in (store_dir / "blobs").rglob("*") if p.is_file()]
    assert len(blobs) == 2  # the blob and its index


def test_gc_importance(script_runner, store_dir):
    _stash(script_runner, "big", b"x" * 50_000)
    _stash(script_runner, "small", b"y" * 2000)
    r = script_runner.run(
        ["ctx-stash", "--gc", "--max-entries", "1", "--strategy", "importance", "--json"]
    )
    assert json.loads(r.stdout)["evicted"] == ["default/big"]


@pytest.mark.parametrize(
    "args",
    [
        ["--gc", "--max-bytes", "lots"],
        ["--gc", "--strategy", "fifo"],
        ["--max-bytes", "1G"],
        ["--dry-run"],
        ["--list", "--gc"],
        ["--list", "x"],
        ["--path", "--rm", "x"],
        ["--json"],
        ["--tee"],
        ["a", "b"],
        ["--list", "--", "ls"],
    ],
)
def test_usage_errors(script_runner, store_dir, args):
    r = run_bytes(script_runner, ["ctx-stash", *args], b"")
    assert r.returncode == 2, r.stderr
    assert not store_dir.exists()


def test_path(script_runner, store_dir, tmp_path):
    assert script_runner.run(["ctx-stash", "--path"]).stdout == f"{store_dir}\n"
    other = tmp_path / "elsewhere"
    r = script_runner.run(["ctx-stash", "--path", "--store", str(other)])
    assert r.stdout == f"{other}\n"
    assert not store_dir.exists() and not other.exists()


# --- processes -----------------------------------------------------------------------------


def test_sixteen_concurrent_cli_stashes(tmp_path, store_dir):
    procs = []
    for i in range(16):
        data = f"version {i}\n".encode() * 500
        p = subprocess.Popen(
            [BIN / "ctx-stash", "--name", "same"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        procs.append((p, data))
    for p, data in procs:
        p.stdin.write(data)
        p.stdin.close()
    cards = []
    for p, _data in procs:
        assert p.wait(timeout=60) == 0, p.stderr.read()
        cards.append(json.loads(p.stdout.read()))
        p.stdout.close()
        p.stderr.close()
    st = HandleStore(store_dir)
    current = st.card("same")
    assert current in cards
    for card, (_, data) in zip(cards, procs, strict=True):
        blob = st.blob_path(card["sha256"]).read_bytes()
        assert blob == data  # every stashed version landed whole
    assert st.read_bytes("same", verify=True) == procs[cards.index(current)][1]
    assert not list(store_dir.rglob(".tmp-*"))
    assert [e["id"] for e in st.entries()] == ["default/same"]


def _victim_midway(store_dir, sig: int) -> int:
    """A ctx-stash of stdin named victim, sent SIG once its temporary file has bytes (the
    pipe left open); its exit status."""
    # What the worker process holds (a handler or mask an earlier in-process test left),
    # said if the victim outlives its signal; the child starts from the defaults either
    # way: this is about a signal whose disposition is the default.
    held = (signal.getsignal(sig) if sig != signal.SIGKILL else None,
            signal.pthread_sigmask(signal.SIG_BLOCK, []))

    def defaults():
        if sig != signal.SIGKILL:  # (which has no disposition to set)
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])

    p = subprocess.Popen(
        [BIN / "ctx-stash", "--name", "victim"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        preexec_fn=defaults,
    )
    p.stdin.write(PYTEST_LOG * 200)
    p.stdin.flush()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if [t for t in (store_dir / "blobs").glob(".tmp-*") if t.stat().st_size]:
            break
        time.sleep(0.01)
    else:
        p.kill()
        pytest.fail("the stash never began writing")
    p.send_signal(sig)
    try:
        status = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()  # (a hang must not leave a child that fails the next tests too)
        p.wait()
        pytest.fail(f"ctx-stash outlived signal {sig} for 30 s; the worker held {held}")
    finally:
        p.stdin.close()
        p.stdout.close()
    return status


def test_sigkill_midway(tmp_path, store_dir):
    _victim_midway(store_dir, signal.SIGKILL)
    r = subprocess.run([BIN / "ctx-read", "victim"], capture_output=True, text=True)
    assert r.returncode == 1 and "no handle default/victim" in r.stderr
    assert len(list((store_dir / "blobs").glob(".tmp-*"))) == 1
    r = subprocess.run([BIN / "ctx-stash", "--gc", "--json"], capture_output=True, text=True)
    assert json.loads(r.stdout)["temp_removed"] == 1
    assert not list(store_dir.rglob(".tmp-*"))
    assert not [p for p in (store_dir / "blobs").rglob("*") if p.is_file()]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_sighup_midway_leaves_no_temp_file(store_dir, sig):
    """A CI job's timeout (SIGTERM) or a closed terminal (SIGHUP) while stdin streams in
    left the partial blob (hundreds of MB) in the store until --gc. The process still ends
    by the signal, as before; the temporary file goes with it, and what was stored stays."""
    kept = subprocess.run([BIN / "ctx-stash", "--name", "kept"], input=PYTEST_LOG,
                          capture_output=True, check=True)
    assert _victim_midway(store_dir, sig) == -sig  # ended by the signal, as its default does
    assert not list(store_dir.rglob(".tmp-*"))
    r = subprocess.run([BIN / "ctx-read", "victim"], capture_output=True, text=True)
    assert r.returncode == 1 and "no handle default/victim" in r.stderr
    st = HandleStore(store_dir)
    assert st.card("kept") == json.loads(kept.stdout)
    assert st.read_bytes("kept", verify=True) == PYTEST_LOG


def test_an_ignored_sighup_stays_ignored_while_stdin_streams(store_dir):
    # nohup ctx-stash: the signal is ignored before the guard, which leaves it so
    p = subprocess.Popen(
        [BIN / "ctx-stash", "--name", "nohup"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    p.stdin.write(PYTEST_LOG * 50)
    p.stdin.flush()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not list((store_dir / "blobs").glob(".tmp-*")):
        time.sleep(0.01)
    p.send_signal(signal.SIGHUP)
    p.stdin.write(PYTEST_LOG)
    p.stdin.close()
    assert p.wait(timeout=30) == 0
    assert json.loads(p.stdout.read())["bytes"] == len(PYTEST_LOG) * 51
    p.stdout.close()


# --- signals while -- CMD runs (real processes) ----------------------------------------------

CHILD = """
import os, signal, subprocess, sys, time
if sys.argv[2] == "ignore":
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open(sys.argv[1], "w") as fh:
    fh.write(f"{os.getpid()} {grandchild.pid}")
print("partial output", flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"  # a zombie is gone
    except FileNotFoundError:
        return False


@pytest.mark.parametrize(
    ("sig", "mode"),
    [
        (signal.SIGTERM, "plain"),
        (signal.SIGHUP, "plain"),
        (signal.SIGINT, "plain"),
        (signal.SIGTERM, "ignore"),  # the child ignores it: killed after the grace period
    ],
)
def test_signal_stops_the_command_and_keeps_what_it_printed(tmp_path, store_dir, sig, mode):
    """Issue 20: a signal (Ctrl-C) stops the command and keeps its output so far as a
    handle marked incomplete, with the signal; the exit status is still 128 + N."""
    pids = tmp_path / "pids"
    proc = subprocess.Popen(
        [BIN / "ctx-stash", "--name", "run", "--", sys.executable, "-c", CHILD, str(pids), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (pids.exists() and pids.read_text().count(" ") == 1):
        assert time.monotonic() < deadline, "the command never started"
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    child, grandchild = map(int, pids.read_text().split())
    time.sleep(0.2)  # its line is on the pipe
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    name = signal.Signals(sig).name
    card = json.loads(out)
    assert card["incomplete"] == name and card["name"] == "run"
    assert card["exit_status"] == 128 + (signal.SIGKILL if mode == "ignore" else sig)
    assert err.decode() == (
        f"ctx-stash: error: interrupted by {name}: stopped the command (pid {child}); "
        f"kept what it printed as {card['ref']} (incomplete)\n"
    )
    assert not _alive(child) and not _alive(grandchild)
    st = HandleStore(store_dir)
    assert st.read_bytes("run").startswith(b"partial output\n")
    assert st.card("run") == card


CAPTURE_THEN_SLEEP = """
import sys, time
for i in range(3):
    print(f"tests/test_{i}.py::test_case PASSED", flush=True)
time.sleep(float(sys.argv[1]))
print("never printed when interrupted", flush=True)
"""


def test_ctrl_c_keeps_the_log_so_far_and_ctx_read_pages_it(tmp_path, store_dir):
    """Ctrl-C during ctx-stash -- CMD: a real child prints, then sleeps; SIGINT."""
    log = tmp_path / "started"
    proc = subprocess.Popen(
        [
            BIN / "ctx-stash",
            "--name",
            "tests",
            "--",
            sys.executable,
            "-c",
            f"open({str(log)!r}, 'w').close()\n" + CAPTURE_THEN_SLEEP,
            "60",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not log.exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    card = json.loads(out)
    assert card["incomplete"] == "SIGINT"
    assert card["lines"] >= 3  # the three lines, and Python's KeyboardInterrupt traceback
    r = subprocess.run(
        [BIN / "ctx-read", "tests", "--head", "3"], capture_output=True, text=True, check=True
    )
    assert r.stdout == "".join(f"tests/test_{i}.py::test_case PASSED\n" for i in range(3))
    assert r.stderr == "ctx-read: note: incomplete: the capture was cut short by SIGINT\n"
    assert b"never printed" not in HandleStore(store_dir).read_bytes("tests")
    assert "(incomplete)" in err.decode()
    listed = subprocess.run(
        [BIN / "ctx-stash", "--list"], capture_output=True, text=True, check=True
    ).stdout
    assert listed.rstrip().endswith(f"{card['ref']} exit={card['exit_status']} incomplete=SIGINT")
    (rec,) = json.loads(
        subprocess.run([BIN / "ctx-stash", "--list", "--json"], capture_output=True).stdout
    )
    assert rec["incomplete"] == "SIGINT"


# --- damaged and forged cards, odd store roots, access counts (issue 11, issue 10) ------------


def _card_file(store_dir: Path, name: str) -> Path:
    return store_dir / "sessions" / "default" / f"{name}.json"


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("bytes", None, "no 'bytes' field"),
        ("sha256", "../../../etc/passwd", "its sha256 is not 64 hex digits"),
        ("sha256", "../x", "its sha256 is not 64 hex digits"),
        ("lines", "many", "bad 'lines' field"),
        ("type", "yaml", "unknown type 'yaml'"),
    ],
)
def test_damaged_card_is_skipped_not_fatal(script_runner, store_dir, field, value, reason):
    st = HandleStore(store_dir)
    st.put_bytes(PYTEST_LOG, name="good")
    st.put_bytes(b"other\n" * 500, name="bad")
    path = _card_file(store_dir, "bad")
    rec = json.loads(path.read_text())
    bad_sha = rec["sha256"]
    if value is None:
        del rec[field]
    else:
        rec[field] = value
    path.write_text(json.dumps(rec))
    r = script_runner.run(["ctx-read", "bad"])
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (
        f"ctx-read: error: handle default/bad: its card {path} is damaged ({reason}) "
        "(remove it with ctx-stash --rm default/bad)\n"
    )
    assert script_runner.run(["ctx-read", "good", "--head", "1"]).returncode == 0

    def files():
        return sorted(str(p) for d in ("blobs", "sessions") for p in (store_dir / d).rglob("*"))

    before = files()
    r = script_runner.run(["ctx-stash", "--list"])
    assert r.returncode == 0 and r.stdout.startswith("good ")
    want = f"handle default/bad: its card {path} is damaged ({reason})"
    assert r.stderr == f"ctx-stash: warning: skipped a damaged card: {want}\n"
    r = script_runner.run(["ctx-stash", "--gc", "--json"])
    assert r.returncode == 0
    report = json.loads(r.stdout)
    assert report["damaged"] == [
        {"id": "default/bad", "error": f"handle default/bad: its card {path} is damaged ({reason})"}
    ]
    # the damaged card's blob (even when its sha256 is the damage) stays: nothing touched
    assert (report["blobs_removed"], report["unreferenced_kept"]) == (0, 1)
    assert files() == before
    assert st.blob_path(bad_sha).exists()
    r = script_runner.run(["ctx-stash", "--rm", "bad"])
    assert r.returncode == 0 and not path.exists()


def test_store_root_that_is_a_file(script_runner, tmp_path):
    f = tmp_path / "file"
    f.write_text("not a store")
    for args in (["--list"], ["--gc"], ["--gc", "--dry-run"]):
        r = script_runner.run(["ctx-stash", "--store", str(f), *args])
        assert r.returncode == 1, args
        assert r.stderr == (
            f"ctx-stash: error: store root {f} is not a directory "
            "(point --store or CTX_STORE at a directory)\n"
        )
    assert f.read_text() == "not a store"


@pytest.mark.parametrize("cmd", ["ctx-stash", "ctx-read"])
def test_empty_store_path_is_a_usage_error(script_runner, tmp_path, monkeypatch, cmd):
    monkeypatch.chdir(tmp_path)
    r = run_bytes(script_runner, [cmd, "--store", "", "--always"][:3], b"x" * 2000)
    assert r.returncode == 2
    assert "invalid value for '--store': empty: give the store's directory" in r.stderr
    assert not Path("blobs").exists() and not Path("sessions").exists()  # no store in cwd


def test_version_that_never_existed(script_runner, store_dir):
    st = HandleStore(store_dir)
    old = st.put_bytes(PYTEST_LOG, name="ok")
    new = st.put_bytes(PYTEST_LOG + b"more\n", name="ok")
    r = script_runner.run(["ctx-read", "ok@abcdef"])
    assert r.returncode == 1
    assert r.stderr == (
        f"ctx-read: error: no version @abcdef of default/ok (its current version is "
        f"@{new['sha256'][:12]}) (read ctx:default/ok for the current version)\n"
    )
    r = script_runner.run(["ctx-read", old["ref"]])
    assert r.returncode == 1 and "has been re-stashed" in r.stderr


def test_restashed_name_starts_with_no_reads(script_runner, store_dir):
    st = HandleStore(store_dir)
    st.put_bytes(PYTEST_LOG, name="n")
    for _ in range(3):
        assert script_runner.run(["ctx-read", "n", "--head", "1"]).returncode == 0
    assert st.entries()[0]["access_count"] == 3
    time.sleep(0.01)
    st.put_bytes(PYTEST_LOG + b"v2\n", name="n")
    assert st.entries()[0]["access_count"] == 0
    st.compact_access()
    assert st.entries()[0]["access_count"] == 0
    assert script_runner.run(["ctx-read", "n", "--head", "1"]).returncode == 0
    assert st.entries()[0]["access_count"] == 1


def test_gc_without_budget_keeps_100(script_runner, store_dir):
    st = HandleStore(store_dir)
    st.put_many([(f"payload {i}\n".encode(), {"name": f"h{i:03d}"}) for i in range(105)])
    r = script_runner.run(["ctx-stash", "--gc", "--json"])
    report = json.loads(r.stdout)
    assert len(report["evicted"]) == 5 and report["kept"] == 100
    r = script_runner.run(["ctx-stash", "--gc", "--max-entries", "1000", "--json"])
    assert json.loads(r.stdout)["evicted"] == []
    assert len(st.entries()) == 100


def test_gc_touches_only_the_stores_own_files(script_runner, tmp_path):
    """The attack of issue 21 (item 9): a photo under blobs/ and a note named like a temp
    file at the root were deleted by --gc, and counted as blobs by --dry-run."""
    d = tmp_path / "D"
    foreign = {
        "blobs/photos/cat.jpg": b"x\n",
        ".tmp-notes": b"k\n",
        "blobs/ab/notes.txt": b"mine\n",
        "blobs/ab/" + "cd" * 32: b"a blob name in the wrong shard\n",
        "blobs/" + "ef" * 32: b"a blob name outside any shard\n",
        "sessions/default/.tmp-1-notes.json": b"{}\n",
        "sessions/default/deep/" + ".tmp-1-" + "a" * 12: b"not a directory gc writes to\n",
    }
    HandleStore(d).put_bytes(b"k", name="kept")
    for rel, data in foreign.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_bytes(data)
    # The store's own leftovers: an orphan blob with its index, a dead writer's temp file.
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    orphan = HandleStore(d).put_bytes(b"orphan\n" * 20_000, name="orphan")
    HandleStore(d).remove(["orphan"])
    dead_tmp = d / "blobs" / f".tmp-{int(gone.stdout)}-{'0' * 12}"
    dead_tmp.write_bytes(b"half a blob")
    dry = script_runner.run(["ctx-stash", "--store", str(d), "--gc", "--dry-run", "--json"])
    report = json.loads(dry.stdout)
    assert (report["blobs_removed"], report["temp_removed"]) == (1, 1)
    r = script_runner.run(["ctx-stash", "--store", str(d), "--gc", "--json"])
    done = json.loads(r.stdout)
    assert {k: done[k] for k in ("blobs_removed", "bytes_freed", "temp_removed")} == {
        k: report[k] for k in ("blobs_removed", "bytes_freed", "temp_removed")
    }
    for rel, data in foreign.items():
        assert (d / rel).read_bytes() == data, rel
    assert not (d / "blobs" / orphan["sha256"][:2] / orphan["sha256"]).exists()
    assert not dead_tmp.exists()
    assert HandleStore(d).read_bytes("kept") == b"k"


def _read_only_run(store: Path, *args: str) -> tuple[int, str, str]:
    """ctx-stash --store STORE ARGS as a real process that sees STORE read-only: a
    read-only bind mount in a mount namespace of its own when root (who ignores
    permissions), else the store's permissions taken away."""
    exe = str(Path(sys.executable).parent / "ctx-stash")
    if os.geteuid() != 0:
        for p in [store, *store.rglob("*")]:
            p.chmod(0o555 if p.is_dir() else 0o444)
        try:
            r = subprocess.run([exe, "--store", str(store), *args], capture_output=True, text=True)
        finally:
            for p in [store, *store.rglob("*")]:
                p.chmod(0o700 if p.is_dir() else 0o600)
        return r.returncode, r.stdout, r.stderr
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99; shift; exec "$@"'
    cmd = ["unshare", "-m", "sh", "-c", script, "sh", str(store), exe, "--store", str(store)]
    try:
        r = subprocess.run([*cmd, *args], capture_output=True, text=True)
    except FileNotFoundError:
        r = None
    if r is None or r.returncode == 99:
        pytest.skip("no way to make a read-only file system here (root without unshare/mount)")
    return r.returncode, r.stdout, r.stderr


def test_gc_dry_run_works_on_a_read_only_store(tmp_path):
    d = tmp_path / "D"
    st = HandleStore(d)
    st.put_bytes(b"kept\n" * 500, name="kept")
    st.put_bytes(b"gone\n" * 500, name="gone")
    st.remove(["gone"])
    status, out, err = _read_only_run(d, "--gc", "--dry-run", "--json")
    assert status == 0, err  # was: "cannot take the lock in store ...: read-only file system"
    report = json.loads(out)
    assert (report["dry_run"], report["blobs_removed"], report["kept"]) == (True, 1, 1)
    status, out, err = _read_only_run(d, "--gc")
    assert status == 1 and out == ""
    assert err.startswith("ctx-stash: error: cannot take the lock in store ")
    assert err.count("\n") == 1


# --- binary payloads (issue 20) ----------------------------------------------------------------


@pytest.mark.process
def test_random_bytes_are_stashed_as_binary(script_runner, store_dir):
    import random

    data = random.Random(7).randbytes(5000)
    card = card_of(run_bytes(script_runner, ["ctx-stash", "--name", "noise"], data))
    assert card["type"] == "binary" and card["bytes"] == 5000
    assert HandleStore(store_dir).read_bytes("noise") == data  # byte for byte
    listing = json.loads(script_runner.run(["ctx-stash", "--list", "--json"]).stdout)
    assert [e["type"] for e in listing] == ["binary"]
    # --type text stores it as text (text is anything); --type json refuses it
    card = card_of(run_bytes(script_runner, ["ctx-stash", "--name", "t", "--type", "text"], data))
    assert card["type"] == "text"
    r = run_bytes(script_runner, ["ctx-stash", "--name", "j", "--type", "json"], data)
    assert r.returncode == 1
    assert r.stderr == (
        "ctx-stash: error: --type json: the input is not one JSON document (it reads as "
        "binary) (leave --type out to have it detected, or give --type text)\n"
    )
    # text with a few bytes that are not UTF-8 stays text
    card = card_of(run_bytes(script_runner, ["ctx-stash", "--name", "log"], PYTEST_LOG + b"\xff"))
    assert card["type"] == "text"


# --- gc beside a damaged card, gc and --session, a store root that is a file -----------------


def test_gc_removes_no_blob_while_a_card_is_damaged(script_runner, store_dir):
    # gc kept the damaged card but deleted its blob as "unreferenced": the card, once
    # repaired, pointed at nothing.
    st = HandleStore(store_dir)
    st.put_bytes(PYTEST_LOG, name="d")
    st.put_bytes(b"gone\n" * 500, name="evicted")
    st.remove(["evicted"])  # its blob is unreferenced now
    path = _card_file(store_dir, "d")
    good = path.read_bytes()
    rec = json.loads(good)
    rec["sha256"] = "zz"  # the damage is the very field that names the blob
    path.write_text(json.dumps(rec))
    blobs = sorted((store_dir / "blobs").rglob("*"))
    r = script_runner.run(["ctx-stash", "--gc"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("removed 0 handles, 0 unreferenced blobs")
    assert r.stderr.splitlines()[1:] == [
        "ctx-stash: note: 2 unreferenced blobs kept: a damaged card may point at one of them "
        "(repair the card or remove it with ctx-stash --rm, then --gc again)"
    ]
    assert sorted((store_dir / "blobs").rglob("*")) == blobs
    report = json.loads(script_runner.run(["ctx-stash", "--gc", "--json"]).stdout)
    assert (report["blobs_removed"], report["unreferenced_kept"]) == (0, 2)
    path.write_bytes(good)  # repaired: the handle reads again
    assert st.read_bytes("d") == PYTEST_LOG
    report = json.loads(script_runner.run(["ctx-stash", "--gc", "--json"]).stdout)
    assert (report["blobs_removed"], report["unreferenced_kept"]) == (1, 0)  # "evicted"'s
    assert st.read_bytes("d") == PYTEST_LOG


def test_gc_is_store_wide_and_a_typed_session_is_told(script_runner, store_dir, monkeypatch):
    # ctx-stash --session A --gc evicted session B's handles without a word, while --list
    # and --rm keep to --session: the budget is the store's, and the user is told so.
    def two_sessions():
        run_bytes(script_runner, ["ctx-stash", "--session", "A", "--name", "x"], PYTEST_LOG)
        run_bytes(script_runner, ["ctx-stash", "--session", "B", "--name", "y"], PYTEST_LOG * 2)

    note = (
        "ctx-stash: note: --gc works on the whole store, not only session A: its limits are "
        "the store's, and any session's handles may be evicted (--dry-run shows which)\n"
    )
    two_sessions()
    gc = ["ctx-stash", "--session", "A", "--gc", "--max-entries", "0"]
    r = script_runner.run([*gc, "--dry-run"])
    assert r.returncode == 0 and r.stderr == note
    assert r.stdout.splitlines()[:2] == ["would evict A/x", "would evict B/y"]
    r = script_runner.run([*gc, "--json"])
    assert r.returncode == 0 and r.stderr == note
    assert json.loads(r.stdout)["evicted"] == ["A/x", "B/y"]
    two_sessions()
    monkeypatch.setenv("CTX_SESSION", "A")  # a session from the environment was not typed
    r = script_runner.run(["ctx-stash", "--gc", "--max-entries", "0"])
    assert r.returncode == 0 and r.stderr == ""


@pytest.mark.process
@pytest.mark.parametrize(
    "argv",
    [
        ["ctx-stash", "--list"],
        ["ctx-stash", "--name", "x", "--always", "--", "true"],
        ["ctx-read", "h"],
        ["ctx-repomap", "."],
        ["ctx-compact", "--limit", "1000", "--force", "t.json"],
    ],
)
def test_a_store_root_that_is_a_file_is_one_error_everywhere(
    script_runner, tmp_path, monkeypatch, argv
):
    # CTX_STORE naming a file: ctx-repomap said "invalid value for '--store'" (an option
    # nobody typed, exit 2), ctx-read "no handle default/h"; ctx-stash said what it is.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("def f():\n    pass\n")
    turn = '{"role": "%s", "content": "%s"}'
    turns = [turn % (("user", "assistant")[i % 2], "word " * 400) for i in range(12)]
    (tmp_path / "t.json").write_text("[" + ", ".join(turns) + "]")
    f = tmp_path / "storefile"
    f.write_text("not a store")
    for root, why in ((f, ""), (f / "sub", " (a parent is a file)")):
        monkeypatch.setenv("CTX_STORE", str(root))
        r = script_runner.run(argv)
        assert (r.returncode, r.stdout) == (1, ""), r.stderr
        assert r.stderr == (
            f"{argv[0]}: error: store root {root} is not a directory{why} "
            "(point --store or CTX_STORE at a directory)\n"
        )
    assert f.read_text() == "not a store"
