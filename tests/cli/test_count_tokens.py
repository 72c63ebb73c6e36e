"""ctx-count --head/--tail/--ids/--decode (issue 28.15): the first or last N tokens exactly,
never a cut UTF-8 character; token ids and back, with the run's encoding. tiktoken's own
encode and decode_bytes are the oracle."""

from __future__ import annotations

import os

import pytest
from helpers import DATA, endless_stdin, run_bytes

from ctxtools.tokens import get_ruler, ids

LOG = (
    "tests/test_auth.py::test_token_expiry FAILED\n"
    "E   AssertionError: 認証トークンの期限が切れています 🎉🎉\n"
    "tests/test_api.py::test_unicode 한국어 PASSED\n"
).encode()


def encoding(name: str = "cl100k_base"):
    return get_ruler(encoding=name).ruler.encoding


def raw(result) -> bytes:
    """The bytes a run wrote to stdout."""
    return result.stdout.encode("utf-8", "surrogateescape")


def whole_chars(data: bytes) -> bytes:
    """DATA (whole UTF-8 but at its edges) without a character cut at either edge."""
    return data.decode("utf-8", "ignore").encode()


@pytest.mark.parametrize("n", [0, 1, 5, 9, 12, 13, 14, 20, 25, 33, 1000])
def test_head_is_the_text_of_the_first_n_tokens(script_runner, n):
    enc = encoding()
    ids = enc.encode_ordinary(LOG.decode())
    r = run_bytes(script_runner, ["ctx-count", "--head", str(n)], LOG)
    assert r.returncode == 0 and r.stderr == ""
    out = raw(r)
    assert LOG.startswith(out)
    out.decode("utf-8")  # never a cut character
    assert out == whole_chars(enc.decode_bytes(ids[:n]))
    assert len(enc.encode_ordinary(out.decode())) <= n


@pytest.mark.parametrize("n", [0, 1, 3, 8, 15, 16, 17, 30, 1000])
def test_tail_is_the_text_of_the_last_n_tokens(script_runner, n):
    enc = encoding()
    ids = enc.encode_ordinary(LOG.decode())
    r = run_bytes(script_runner, ["ctx-count", "--tail", str(n)], LOG)
    assert r.returncode == 0
    out = raw(r)
    assert LOG.endswith(out)
    out.decode("utf-8")
    assert out == whole_chars(enc.decode_bytes(ids[len(ids) - n :] if n else []))
    assert len(enc.encode_ordinary(out.decode())) <= n


def test_a_cut_inside_an_emoji_leaves_it_out_whole(script_runner):
    enc = encoding()
    text = "🎉"
    assert len(enc.encode_ordinary(text)) > 1  # byte-level BPE splits it
    r = run_bytes(script_runner, ["ctx-count", "--head", "1"], ("ab " + text).encode())
    assert raw(r) == b"ab"
    r = run_bytes(script_runner, ["ctx-count", "--tail", "1"], (text + "x").encode())
    assert raw(r) in (b"x", "🎉x".encode())


@pytest.mark.process
def test_bytes_that_are_not_utf8_come_back_as_they_were(script_runner, tmp_path):
    data = b"caf\xe9 ok\n\xff\xfe tail\n"
    f = tmp_path / "latin1.txt"
    f.write_bytes(data)
    whole = run_bytes(script_runner, ["ctx-count", str(f)], b"").stdout
    total = int(whole.split()[0])
    r = run_bytes(script_runner, ["ctx-count", "--head", str(total), str(f)], b"")
    assert raw(r) == data
    r = run_bytes(script_runner, ["ctx-count", "--tail", "2", str(f)], b"")
    assert data.endswith(raw(r)) and raw(r).endswith(b" tail\n")


@pytest.mark.process
@pytest.mark.parametrize(
    ("args", "name"), [([], "cl100k_base"), (["--model", "gpt-4o"], "o200k_base")]
)
def test_ids_are_the_encodings_and_decode_gives_the_bytes_back(script_runner, args, name):
    enc = encoding(name)
    r = run_bytes(script_runner, ["ctx-count", *args, "--ids"], LOG)
    assert r.returncode == 0
    ids = [int(w) for w in r.stdout.split()]
    assert ids == enc.encode_ordinary(LOG.decode())
    back = run_bytes(script_runner, ["ctx-count", *args, "--decode"], raw(r))
    assert back.returncode == 0 and raw(back) == LOG
    js = run_bytes(script_runner, ["ctx-count", *args, "--ids", "--json"], LOG)
    assert js.stdout == "[" + ",".join(map(str, ids)) + "]\n"
    first = run_bytes(script_runner, ["ctx-count", *args, "--ids", "--head", "4"], LOG)
    assert [int(w) for w in first.stdout.split()] == ids[:4]


def test_decode_reads_commas_brackets_and_lines(script_runner):
    enc = encoding()
    ids = enc.encode_ordinary("hello world\n")
    written = ("[" + ", ".join(map(str, ids)) + "]\n").encode()
    r = run_bytes(script_runner, ["ctx-count", "--decode"], written)
    assert raw(r) == b"hello world\n"


@pytest.mark.parametrize(
    ("args", "stdin", "status", "said"),
    [
        (["--head", "2", "--tail", "2"], b"x", 2, "--head and --tail: give one"),
        (["--head", "2", "--heuristic"], b"x", 2, "--head needs an exact ruler"),
        (["--decode", "--ids"], b"1", 2, "--decode reads ids"),
        (["--ids", "--tree"], b"", 2, "--tree does not go with --head, --tail, --ids or --decode"),
        (["--ids", "--budget"], b"", 2, "--budget does not go with"),
        (["--head", "2", "a", "b"], b"", 2, "take one input"),
        (["--decode"], b"12 x7", 1, "-: not a token id: 'x7'"),
        (["--decode"], b"100277", 1, "token id 100277 is out of range: cl100k_base's ids"),
        # a JSON list cut short (a producer that died mid-write) is not the ids so far
        (["--decode"], b"[1, 2", 1, "-: not a list of token ids: a '[' without its ']'"),
        (["--decode"], b"1, 2]\n", 1, "-: not a list of token ids: a ']' without its '['"),
        (["--head", "-1"], b"x", 2, "-1 is below the minimum of 0"),
        (
            ["--decode"],
            b"1 100256 2",
            1,
            "100256 is not a token id of cl100k_base: a hole in its range 0 to 100,276 ",
        ),
        (
            ["--decode"],
            b"999999999999999999999999",
            1,
            "token id 999999999999999999999999 is out of range: cl100k_base's ids are 0 to ",
        ),
    ],
)
def test_misuses_are_one_line(script_runner, args, stdin, status, said):
    r = run_bytes(script_runner, ["ctx-count", *args], stdin)
    assert r.returncode == status, r.stderr
    assert r.stderr.startswith("ctx-count: error: ") and r.stderr.count("\n") == 1
    assert said in r.stderr
    assert r.stdout == ""


# --- inputs of any size: read in pieces, the same bytes as one encoding of the whole -------


def real_text() -> bytes:
    """A build log in Chinese and Japanese with Latin-1 bytes in it, code in six languages,
    Korean, and bytes that are not UTF-8 (a CJK character cut short among them)."""
    parts = [(DATA / "golden" / "inputs" / "build.log").read_bytes()]
    parts += [p.read_bytes() for p in sorted((DATA / "excerpt").iterdir())]
    parts.append("한국어 문장입니다. 这是中文，有标点。\n".encode() * 30)
    parts.append(b"caf\xe9 \xff\xfe tail \xe4\xb8 cut\n")
    return b"".join(parts) * 30  # about 1.4 MB: more than one piece


@pytest.mark.process
@pytest.mark.parametrize("args", [[], ["--model", "gpt-4o"]])
def test_big_real_text_gives_the_bytes_and_ids_of_one_encoding(script_runner, tmp_path, args):
    ruler = get_ruler(encoding="o200k_base" if args else "cl100k_base").ruler
    data = real_text()
    f = tmp_path / "mixed.log"
    f.write_bytes(data)
    whole = ids.encode(ruler, data.decode("utf-8", "replace"))
    r = run_bytes(script_runner, ["ctx-count", *args, "--ids", str(f)], b"")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout == " ".join(map(str, whole)) + "\n"
    for n in (3, 40_000):
        for flag, oracle in (("--head", ids.head), ("--tail", ids.tail)):
            r = run_bytes(script_runner, ["ctx-count", *args, flag, str(n), str(f)], b"")
            assert raw(r) == oracle(ruler, data, n), (flag, n)
            piped = run_bytes(script_runner, ["ctx-count", *args, flag, str(n)], data)
            assert raw(piped) == raw(r), (flag, n)


@pytest.mark.script_launch_mode("inprocess")  # an endless stdin: only a stream can be that
def test_head_of_an_endless_input_reads_only_its_beginning(script_runner):
    """--head 5 of a 50 MB line took 57 s and 2.5 GB: it read and encoded all of it."""
    line = b"2026-12-01 10:00:00 INFO src/app.py: request served in 12 ms\n"
    stdin = endless_stdin(line)  # the test fails past 4 MiB read
    r = script_runner.run(["ctx-count", "--head", "5"], stdin=stdin)
    assert r.returncode == 0, r.stderr
    assert raw(r) == ids.head(get_ruler().ruler, line * 2, 5)
    assert stdin.buffer.raw.given <= 1 << 20


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="a system without /dev/zero")
@pytest.mark.parametrize("args", [["--tail", "5"], ["--ids"]])
def test_an_endless_device_is_read_in_bounded_memory_until_ctrl_c(args):
    """--tail and --ids of /dev/zero grew past 5 GB in seconds and Ctrl-C did not end
    them: now they run in the memory of a plain count (here within 512 MiB of address space)
    and end with 130 and one line."""
    import resource
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    def half_a_gib() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 29, 1 << 29))

    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "ctx-count"), *args, "/dev/zero"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=half_a_gib,
    )
    time.sleep(3)
    assert proc.poll() is None, proc.communicate()  # still reading, within its memory
    proc.send_signal(signal.SIGINT)
    try:
        err = proc.communicate(timeout=60)[1]
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert err.decode() == "ctx-count: interrupted\n"
