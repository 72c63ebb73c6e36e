"""The handle store as a library: layout, cards, references, integrity, crash safety."""

from __future__ import annotations

import codecs
import errno
import hashlib
import io
import json
import os
import stat

import pytest

from ctxtools import fsutil
from ctxtools import store as store_mod
from ctxtools.errors import (
    IntegrityError,
    NotFoundError,
    StaleHandleError,
    StoreError,
    UsageError,
)
from ctxtools.store import HandleStore, lineindex, parse_ref, sniff, validate_name

LOG = "".join(
    f"tests/test_mod{i % 7}.py::test_case_{i} {'PASSED' if i % 13 else 'FAILED'} [{i % 100:3d}%]\n"
    for i in range(4000)
).encode()


@pytest.fixture
def st(store_dir) -> HandleStore:
    return HandleStore()


def test_default_root_is_ctx_store(store_dir):
    assert HandleStore().root == store_dir
    assert not store_dir.exists()  # nothing created until the first write


def test_put_and_read_round_trip(st, store_dir):
    card = st.put_bytes(LOG, name="tests")
    sha = hashlib.sha256(LOG).hexdigest()
    assert card == {
        "kind": "handle",
        "session_id": "default",
        "name": "tests",
        "type": "text",
        "length": len(LOG),
        "lines": 4000,
        "bytes": len(LOG),
        "repr_preview": card["repr_preview"],
        "sha256": sha,
        "ref": f"ctx:default/tests@{sha[:12]}",
    }
    assert card["repr_preview"].startswith("tests/test_mod0.py::test_case_0 FAILED [ 0%] tests/")
    assert len(card["repr_preview"]) <= 73
    assert st.read_bytes("tests") == LOG
    assert st.read_bytes(card["ref"], verify=True) == LOG
    assert st.card("ctx:default/tests") == card
    # layout
    assert (store_dir / "blobs" / sha[:2] / sha).read_bytes() == LOG
    assert (store_dir / "blobs" / sha[:2] / f"{sha}.idx").is_file()
    assert (store_dir / "sessions" / "default" / "tests.json").is_file()
    for p in [
        store_dir,
        store_dir / "blobs",
        store_dir / "sessions",
        store_dir / "sessions/default",
    ]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o700, p


def test_exit_status_and_unnamed_handle(st):
    card = st.put_bytes(b"x" * 50, exit_status=3)
    assert card["exit_status"] == 3
    assert card["name"] == card["sha256"][:12]
    assert st.read_bytes(card["name"]) == b"x" * 50


def test_put_stream_with_head(st):
    import io

    card = st.put_stream(io.BytesIO(b"world\n"), head=b"hello ", name="h")
    assert st.read_bytes("h") == b"hello world\n"
    assert card["lines"] == 1


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b'{"a": [1, 2, {"b": null}]}\n', "json"),
        (b"  [1, 2, 3]", "json"),
        (b'{"a": 1}\n{"a": 2}\n\n{"a": 3}\n', "jsonl"),
        (b'{"a": 1}\n{"a": \n', "text"),
        (b"plain text {not json}\n", "text"),
        (b"", "text"),
        (b"\xff\xfe{", "text"),
    ],
)
def test_type_detection(st, data, kind):
    assert st.put_bytes(data, name="t")["type"] == kind


def test_given_type_wins_and_bad_type_refused(st):
    assert st.put_bytes(b"{}", name="t", type="text")["type"] == "text"
    with pytest.raises(UsageError):
        st.put_bytes(b"{}", name="u", type="yaml")
    assert not (st.root / "sessions" / "default" / "u.json").exists()


def test_restash_makes_old_ref_stale(st):
    old = st.put_bytes(b"first version\n", name="n")
    new = st.put_bytes(b"second version\n", name="n")
    with pytest.raises(StaleHandleError, match="stale handle ctx:default/n@"):
        st.read_bytes(old["ref"])
    with pytest.raises(StaleHandleError):
        st.card(old["ref"])
    assert st.read_bytes("n") == b"second version\n"
    assert st.read_bytes(new["ref"]) == b"second version\n"
    # the same content again keeps the old ref valid (same version)
    again = st.put_bytes(b"second version\n", name="n")
    assert again["ref"] == new["ref"]


def test_sessions_are_separate(st):
    st.put_bytes(b"a", name="n", session="s1")
    st.put_bytes(b"b", name="n", session="s2")
    assert st.read_bytes("s1/n") == b"a"
    assert st.read_bytes("n", session="s2") == b"b"
    assert st.read_bytes("ctx:s2/n") == b"b"
    with pytest.raises(NotFoundError, match="no handle default/n"):
        st.read_bytes("n")


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("tests", ("default", "tests", None)),
        ("ctx:tests", ("default", "tests", None)),
        ("s/tests", ("s", "tests", None)),
        ("ctx:s/tests@ABCDEF123456", ("s", "tests", "abcdef123456")),
        ("a.b_c-d@0123", ("default", "a.b_c-d", "0123")),
    ],
)
def test_parse_ref(ref, expected):
    r = parse_ref(ref)
    assert (r.session, r.name, r.sha_prefix) == expected


@pytest.mark.parametrize(
    "ref", ["", "a/b/c", "../x", "x@zz", "x@123", "/x", "s/", "ctx:", "a b", ".hidden"]
)
def test_parse_ref_rejects(ref):
    with pytest.raises(UsageError) as exc:
        parse_ref(ref)
    assert exc.value.exit_status == 2


@pytest.mark.parametrize("name", ["", "a/b", "..", "../x", ".x", "-x", "a" * 129, "a b", "é"])
def test_validate_name_rejects(st, name):
    with pytest.raises(UsageError) as exc:
        validate_name(name)
    assert exc.value.exit_status == 2
    with pytest.raises(UsageError):
        st.put_bytes(b"data", name=name)
    with pytest.raises(UsageError):
        st.put_bytes(b"data", name="ok", session=name)
    assert not st.root.exists()  # nothing written anywhere


def test_validate_name_accepts_128():
    assert validate_name("a" * 128) == "a" * 128
    assert validate_name("A1.b_c-d") == "A1.b_c-d"


def _files(root):
    """Every file under ROOT with its bytes (empty directories do not count)."""
    return sorted(
        (str(p.relative_to(root)), p.read_bytes()) for p in root.rglob("*") if p.is_file()
    )


def _blob(st, card):
    return st.blob_path(card["sha256"])


def test_corrupt_blob_is_an_error(st):
    card = st.put_bytes(LOG, name="c")
    path = _blob(st, card)
    data = bytearray(path.read_bytes())
    data[1000] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match="handle ctx:default/c@.* is corrupt"):
        st.read_bytes("c")
    with pytest.raises(IntegrityError):
        st.read_bytes("c", verify=True)


def test_truncated_blob_is_an_error(st):
    card = st.put_bytes(LOG, name="c")
    path = _blob(st, card)
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(IntegrityError, match="truncated"):
        st.read_bytes("c")


def test_corrupt_block_in_big_blob_detected_when_read(st):
    big = LOG * 300  # ~ 20 MB, more than FULL_CHECK_BYTES
    assert len(big) > store_mod.FULL_CHECK_BYTES
    card = st.put_bytes(big, name="big")
    path = _blob(st, card)
    with open(path, "r+b") as fh:
        fh.seek(len(big) - 100)
        fh.write(b"#")
    p = st.open("big")  # opening a big blob does not read it all
    assert p.pread(0, 20) == big[:20]
    with pytest.raises(IntegrityError, match="block"):
        p.pread(len(big) - 200, 200)
    p.close()
    with pytest.raises(IntegrityError):
        st.read_bytes("big", verify=True)


def test_missing_or_damaged_index_is_rebuilt(st):
    card = st.put_bytes(LOG, name="c")
    idx = st.idx_path(card["sha256"])
    idx.unlink()
    assert st.read_bytes("c") == LOG
    assert idx.is_file()
    idx.write_bytes(b"garbage" * 10)
    with st.open("c") as p:
        assert list(p.iter_lines(2, 3)) == [LOG.split(b"\n")[2]]


def test_index_rebuild_with_corrupt_blob_fails(st):
    card = st.put_bytes(LOG, name="c")
    st.idx_path(card["sha256"]).unlink()
    path = _blob(st, card)
    data = bytearray(path.read_bytes())
    data[5] ^= 0x20
    path.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match="no longer match"):
        st.read_bytes("c")


def test_missing_blob(st):
    card = st.put_bytes(LOG, name="c")
    _blob(st, card).unlink()
    with pytest.raises(IntegrityError, match="missing"):
        st.read_bytes("c")


def test_damaged_card(st):
    st.put_bytes(LOG, name="c")
    (st.root / "sessions" / "default" / "c.json").write_bytes(b"{not json")
    with pytest.raises(IntegrityError, match="not valid JSON") as exc:
        st.read_bytes("c")
    # the hint names the handle to remove, as a damaged card's other hints do
    assert exc.value.hint == "remove it with ctx-stash --rm default/c"


def test_binary_and_invalid_utf8_byte_exact(st):
    data = bytes(range(256)) * 40 + "日本語のログ\n".encode() + b"\xc3\x28 bad \xe2\x82\n"
    card = st.put_bytes(data, name="bin")
    assert st.read_bytes("bin", verify=True) == data
    assert card["sha256"] == hashlib.sha256(data).hexdigest()
    assert card["length"] == len(data.decode("utf-8", "replace"))
    assert card["type"] == "binary"  # NUL bytes in its head (issue 20)


def test_cjk_counts(st):
    text = "测试失败：断言错误\n第二行\n".encode()
    card = st.put_bytes(text, name="cjk")
    assert card["length"] == 14
    assert card["lines"] == 2
    assert card["bytes"] == len(text)
    assert card["repr_preview"] == "测试失败：断言错误 第二行"


def test_chars_across_chunk_boundaries(st, monkeypatch):
    monkeypatch.setattr(lineindex, "READ_CHUNK", 7)
    text = ("日本語" * 1000 + "\n").encode() + b"\xff"
    card = st.put_bytes(text, name="cjk")
    assert card["length"] == len(text.decode("utf-8", "replace"))
    assert st.read_bytes("cjk") == text


def test_line_index_on_many_lines(st):
    lines = [f"line {i} " + "x" * (i % 50) for i in range(200_000)]
    data = ("\n".join(lines)).encode()  # no final newline
    card = st.put_bytes(data, name="l")
    assert card["lines"] == 200_000
    with st.open("l") as p:
        assert len(p.index.ck_lines) > 100  # sparse checkpoints exist
        for first in (0, 1, 1234, 99_999, 150_000, 199_990):
            got = [b.decode() for b in p.iter_lines(first, first + 20)]
            assert got == lines[first : first + 20]
        assert p.line_start(200_000) == len(data)


def test_empty_payload(st):
    card = st.put_bytes(b"", name="e")
    assert (card["length"], card["lines"], card["bytes"]) == (0, 0, 0)
    assert st.read_bytes("e") == b""


def test_unknown_handle(st):
    with pytest.raises(NotFoundError, match="no handle default/nope"):
        st.read_bytes("nope")
    with pytest.raises(NotFoundError):
        st.card("nope")


def test_store_root_is_a_file(tmp_path):
    root = tmp_path / "file"
    root.write_text("i am a file")
    with pytest.raises(StoreError, match="not a directory"):
        HandleStore(root).put_bytes(b"x", name="n")
    assert root.read_text() == "i am a file"
    with pytest.raises(StoreError, match="not a directory"):
        HandleStore(root / "sub").put_bytes(b"x", name="n")


def test_full_disk_leaves_store_intact(st, monkeypatch):
    st.put_bytes(LOG, name="keep")
    before = _files(st.root)

    def failing(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(fsutil, "write_all", failing)
        with pytest.raises(StoreError, match="no space left on device"):
            st.put_bytes(LOG + b"more", name="new")
        with pytest.raises(StoreError, match="no space left"):
            st.put_bytes(LOG + b"more", name="keep")
    after = _files(st.root)
    assert after == before
    assert st.read_bytes("keep") == LOG


def test_failing_replace_leaves_store_intact(st, monkeypatch):
    st.put_bytes(LOG, name="keep")
    before = _files(st.root)

    def failing(src, dst):
        raise OSError(errno.EROFS, "Read-only file system")

    with monkeypatch.context() as m:
        m.setattr(os, "replace", failing)
        with pytest.raises(StoreError, match="read-only file system"):
            st.put_bytes(b"other" * 1000, name="keep")
    after = _files(st.root)
    assert after == before
    assert st.read_bytes("keep") == LOG


STASH_ONE = """
import sys
from ctxtools.store import HandleStore
data = (f"writer {sys.argv[1]}\\n" * 20000).encode()
card = HandleStore(sys.argv[2]).put_bytes(data, name="same")
sys.stdout.write(card["ref"])
"""


def test_concurrent_stashes_of_one_name(tmp_path):
    import subprocess
    import sys

    root = tmp_path / "conc"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", STASH_ONE, str(i), str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(16)
    ]
    refs = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        refs.append(out.decode())
    st = HandleStore(root)
    final = st.card("same")
    assert final["ref"] in refs
    writer = final["repr_preview"].split()[1]
    assert st.read_bytes("same", verify=True) == (f"writer {writer}\n" * 20000).encode()
    for i, ref in enumerate(refs):
        if ref == final["ref"]:
            continue
        with pytest.raises(StaleHandleError):
            st.read_bytes(ref)
        # every version that was stashed is complete and intact until gc
        sha = [p.name for p in (root / "blobs").rglob("*") if p.name.startswith(ref[-12:])]
        blob = [n for n in sha if not n.endswith(".idx")]
        assert len(blob) == 1
        data = st.blob_path(blob[0]).read_bytes()
        assert data == (f"writer {i}\n" * 20000).encode()
    leftovers = [p for p in root.rglob(".tmp-*")]
    assert leftovers == []
    report = st.gc()
    assert report["blobs_removed"] == 15
    assert len([p for p in (root / "blobs").rglob("*") if p.is_file()]) == 2
    assert st.read_bytes("same", verify=True)


KILLED = """
import sys
from ctxtools.store import HandleStore
HandleStore(sys.argv[1]).put_stream(sys.stdin.buffer, name="victim")
"""


def test_sigkill_midway_leaves_no_handle(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    root = tmp_path / "killed"
    st = HandleStore(root)
    st.put_bytes(LOG, name="survivor")
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(root)], stdin=subprocess.PIPE)
    proc.stdin.write(LOG * 50)
    proc.stdin.flush()
    deadline = time.monotonic() + 30
    tmp = []
    while time.monotonic() < deadline:
        tmp = [p for p in (root / "blobs").glob(".tmp-*") if p.stat().st_size > 0]
        if tmp:
            break
        time.sleep(0.01)
    assert tmp, "the writer never started"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdin.close()
    assert proc.returncode == -signal.SIGKILL
    with pytest.raises(NotFoundError):
        st.read_bytes("victim")
    assert [e["id"] for e in st.entries()] == ["default/survivor"]
    assert st.read_bytes("survivor", verify=True) == LOG
    dry = st.gc(dry_run=True)
    assert dry["temp_removed"] == 1
    assert tmp[0].exists()
    report = st.gc()
    assert report["temp_removed"] == 1
    assert not list(root.rglob(".tmp-*"))
    assert st.read_bytes("survivor", verify=True) == LOG


def test_gc_keeps_temp_files_of_live_writers(st):
    st.put_bytes(b"x", name="n")
    mine = st.blobs_dir / f".tmp-{os.getpid()}-abcdef"
    mine.write_bytes(b"in flight")
    assert st.gc()["temp_removed"] == 0
    assert mine.exists()


def test_gc_runs_while_a_stash_streams(tmp_path):
    import subprocess
    import sys
    import threading
    import time

    root = tmp_path / "live"
    st = HandleStore(root)
    st.put_bytes(b"old", name="old")
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED.replace("victim", "streaming"), str(root)],
        stdin=subprocess.PIPE,
    )
    proc.stdin.write(LOG)
    proc.stdin.flush()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not list((root / "blobs").glob(".tmp-*")):
        time.sleep(0.01)
    result = {}
    worker = threading.Thread(target=lambda: result.update(st.gc(max_entries=0)))
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "gc waited for a stash that is still streaming"
    assert result["evicted"] == ["default/old"]
    assert result["temp_removed"] == 0  # the live writer's temp file is left alone
    proc.stdin.write(b"tail\n")
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    assert st.read_bytes("streaming", verify=True) == LOG + b"tail\n"


def test_type_detection_of_big_payloads(st, monkeypatch):
    monkeypatch.setattr(sniff, "JSON_PARSE_LIMIT", 1000)
    monkeypatch.setattr(sniff, "JSONL_LINE_LIMIT", 500)
    jsonl = b"".join(b'{"i": %d, "pad": "%s"}\n' % (i, b"x" * 40) for i in range(100))
    assert st.put_bytes(jsonl, name="a")["type"] == "jsonl"
    doc = b'{"items": [\n' + b",\n".join(b'"%d"' % i for i in range(500)) + b"\n]}\n"
    assert st.put_bytes(doc, name="b")["type"] == "json"
    one_line = b'{"items": [' + b",".join(b'"%d"' % i for i in range(500)) + b"]}"
    assert st.put_bytes(one_line, name="c")["type"] == "json"  # too long a line for JSONL
    log = b"{started}\n" + LOG
    assert st.put_bytes(log, name="d")["type"] == "text"


class _CountingFile(io.BytesIO):
    """A file that counts the bytes read from it."""

    given = 0

    def read(self, n=-1):
        data = super().read(n)
        self.given += len(data)
        return data

    def readline(self, n=-1):
        data = super().readline(n)
        self.given += len(data)
        return data


def test_json_lines_are_judged_from_a_bounded_head_and_the_last_line(monkeypatch):
    """Issue 27.14: sniffing read every line of a big payload (200 MB: minutes)."""
    monkeypatch.setattr(sniff, "JSON_PARSE_LIMIT", 1000)
    monkeypatch.setattr(sniff, "JSONL_LINE_LIMIT", 500)
    monkeypatch.setattr(sniff, "JSONL_SNIFF_BYTES", 2000)
    line = b'{"i": 1, "pad": "%s"}\n' % (b"x" * 40)
    body = line * 2000  # 118 KB, of which the sniff reads 2000 + 502 bytes
    for data, kind in [
        (body, "jsonl"),
        (body[:1000] + b"not json\n" + body[1000:], "json"),  # a bad line in the head:
        # not JSON Lines, and its first and last characters make it a document
        (body[:50_000] + b"not json\n" + body[50_000:], "jsonl"),  # past the head: not read
        (body + b"not json\n", "text"),  # the last line is read
        (body + b"x" * 600 + b"\n", "text"),  # a last line too long to be a record
        (b'{"i": "' + b"y" * 3000 + b'"}\n' + body, "json"),  # no whole line in the head
    ]:
        fh = _CountingFile(data)
        assert sniff.detect_type_head(data[:8192], len(data), fh) == kind
        assert fh.given <= 2000 + 502 + 4096, kind  # head, last line, a document's end


def test_two_writers_on_a_fresh_store_never_see_a_false_not_a_directory(tmp_path):
    """Creating the root is mkdir(exist_ok), not check-then-create: no race between writers."""
    import threading

    from ctxtools.store import HandleStore

    root = tmp_path / "fresh" / "store"
    errors: list[BaseException] = []
    cards: list[dict] = []

    def write(i: int) -> None:
        try:
            cards.append(HandleStore(root).put_bytes(f"payload {i}\n".encode() * 50, name=f"n{i}"))
        except BaseException as exc:  # noqa: BLE001 - the test reports any failure
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(cards) == 16
    store = HandleStore(root)
    for i in range(16):
        assert store.read_bytes(f"n{i}") == f"payload {i}\n".encode() * 50


# --- put_many: a batch of handles ----------------------------------------------------------

BATCH = [
    (LOG, {"name": "log"}),  # over INDEX_MIN_BYTES: gets an .idx
    (b'{"a": [1, 2, {"b": null}]}', {"name": "doc"}),
    (b'{"i": 1}\n{"i": 2}\n', {"name": "rows", "session": "other"}),
    (b"\xff\xfe not utf-8 \xc3(\n" * 10, {"name": "binary", "exit_status": 3}),
    (b"", {"name": "empty"}),
    (b"[1, 2]\n", {"name": "typed", "type": "jsonl"}),
    (b"no name at all\n", {}),
    (LOG, {"name": "log-again"}),  # the same bytes under another name: one blob
    ("caf\u00e9 \u4e2d\u6587\n".encode() * 3, {"name": "cjk", "session": "other"}),
    (b"first version\n", {"name": "twice"}),
    (b"second version\n", {"name": "twice"}),  # later items win, as put after put
]


def _cards_one_by_one(root):
    st = HandleStore(root)
    return st, [st.put_bytes(data, **kw) for data, kw in BATCH]


def test_put_many_equals_put_bytes_card_for_card(tmp_path):
    one, singles = _cards_one_by_one(tmp_path / "single")
    st = HandleStore(tmp_path / "batch")
    cards = st.put_many(BATCH)
    assert cards == singles  # same fields, same order, same values
    for (data, kw), card in zip(BATCH, cards, strict=True):
        if kw.get("name") == "twice":
            continue
        assert st.read_bytes(card["ref"], verify=True) == data
        assert st.card(card["ref"]) == one.card(card["ref"])
    assert st.read_bytes("twice") == b"second version\n"
    with pytest.raises(StaleHandleError):
        st.read_bytes(cards[-2]["ref"])
    assert st.card("default/binary")["exit_status"] == 3
    # the same handles are listed, with the same private fields but for the time
    strip = [{k: v for k, v in r.items() if k != "created_at"} for r in st.records()]
    assert strip == [{k: v for k, v in r.items() if k != "created_at"} for r in one.records()]
    # layout: modes, one blob for equal bytes, an index only for the big blob, no temp files
    blobs = sorted(p.name for p in st.blobs_dir.rglob("*") if p.is_file())
    sha_log = hashlib.sha256(LOG).hexdigest()
    assert [b for b in blobs if b.endswith(".idx")] == [f"{sha_log}.idx"]
    assert len(blobs) == len({hashlib.sha256(d).hexdigest() for d, _ in BATCH}) + 1
    assert not list(st.root.rglob(".tmp-*"))
    for p in [st.root, *[p for p in st.root.rglob("*") if p.is_dir()]]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o700, p
    for p in st.root.rglob("*"):
        if p.is_file():
            assert stat.S_IMODE(p.stat().st_mode) == 0o600, p


def test_put_many_small_blob_reads_without_an_index(st):
    data = b"line one\nline two\nline three"
    card = st.put_many([(data, {"name": "small"})])[0]
    assert not st.idx_path(card["sha256"]).exists()
    with st.open("small") as p:
        assert p.lines == 3
        assert list(p.iter_lines(1, 3)) == [b"line two", b"line three"]
    assert not st.idx_path(card["sha256"]).exists()  # nothing is written on a read
    # the index's stand-in is still checked against the stash-time checksum
    blob = _blob(st, card)
    blob.write_bytes(data.replace(b"one", b"0ne"))
    with pytest.raises(IntegrityError, match="no longer match"):
        st.read_bytes("small")


def test_put_many_empty_and_single(st):
    assert st.put_many([]) == []
    assert not st.root.exists()  # nothing to write: nothing created
    card = st.put_many([(b"just one\n", {"name": "one"})])[0]
    assert st.read_bytes(card["ref"]) == b"just one\n"


@pytest.mark.parametrize(
    ("bad", "error", "match"),
    [
        ({"name": "../x"}, UsageError, "invalid name"),
        ({"name": "ok", "session": "a/b"}, UsageError, "invalid session"),
        ({"name": "ok", "type": "yaml"}, UsageError, "unknown type"),
        ({"name": "ok", "colour": "red"}, TypeError, "colour"),
    ],
)
def test_put_many_validates_everything_before_writing(st, bad, error, match):
    st.put_bytes(b"existing\n", name="keep")
    before = _files(st.root)
    items = [(b"fine\n", {"name": "a"}), (b"also fine\n", {"name": "b"}), (b"bad\n", bad)]
    with pytest.raises(error, match=match):
        st.put_many(items)
    assert _files(st.root) == before


def test_put_many_full_disk_leaves_store_intact(st, monkeypatch):
    st.put_bytes(LOG, name="keep")
    before = _files(st.root)
    calls = []

    def failing(fd, data):
        calls.append(len(data))
        if len(calls) > 5:  # some temp files are written, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        os.write(fd, data)

    monkeypatch.setattr(fsutil, "write_all", failing)
    items = [(f"item {i}\n".encode() * 100, {"name": f"n{i}"}) for i in range(40)]
    items.append((LOG + b"more", {"name": "keep"}))
    with pytest.raises(StoreError, match="no space left on device"):
        st.put_many(items)
    assert _files(st.root) == before  # no temp file, no blob, no card
    assert st.read_bytes("keep", verify=True) == LOG


def test_put_many_failing_rename_leaves_only_whole_handles(st, monkeypatch):
    st.put_bytes(LOG, name="keep")
    real = os.replace
    done = []

    def failing(src, dst):
        if str(dst).endswith(".json") and len(done) >= 3:
            raise OSError(errno.EROFS, "Read-only file system")
        real(src, dst)
        if str(dst).endswith(".json"):
            done.append(dst)

    monkeypatch.setattr(os, "replace", failing)
    items = [(f"item {i}\n".encode() * 100, {"name": f"n{i}"}) for i in range(10)]
    with pytest.raises(StoreError, match="read-only file system"):
        st.put_many(items)
    monkeypatch.setattr(os, "replace", real)
    assert not list(st.root.rglob(".tmp-*"))
    ids = sorted(e["id"] for e in st.entries())
    assert ids == ["default/keep", "default/n0", "default/n1", "default/n2"]
    for i in range(3):
        assert st.read_bytes(f"n{i}", verify=True) == f"item {i}\n".encode() * 100
    # The blobs whose cards never came went with the failure (the batch placed them where
    # there were none, and no card refers to them): nothing is left for gc.
    blobs = sorted(p.name for p in st.blobs_dir.glob("*/*") if not p.name.endswith(".idx"))
    kept = sorted(
        hashlib.sha256(d).hexdigest()
        for d in [LOG, *(f"item {i}\n".encode() * 100 for i in range(3))]
    )
    assert blobs == kept
    assert st.gc()["blobs_removed"] == 0


BATCH_KILLED = """
import os, sys
from ctxtools import fsutil
from ctxtools.store import HandleStore

root, stage, after = sys.argv[1], sys.argv[2], int(sys.argv[3])
seen = []

def stop():
    seen.append(1)
    if len(seen) == after:
        sys.stdout.write("stopped\\n")
        sys.stdout.flush()
        while True:  # wait here for SIGKILL
            os.pause()

if stage == "write":  # while the temp files are being written
    real_create = fsutil.create_temp
    def create(path, mode=0o600):
        fd = real_create(path, mode)
        stop()
        return fd
    fsutil.create_temp = create
else:  # while the cards are being renamed into place
    real_replace = os.replace
    def replace(src, dst):
        real_replace(src, dst)
        if str(dst).endswith(".json"):
            stop()
    os.replace = replace
items = [((f"payload {i}\\n" * (i + 1)).encode(), {"name": f"h{i}"}) for i in range(300)]
HandleStore(root).put_many(items)
sys.stdout.write("finished\\n")
"""


@pytest.mark.parametrize(("stage", "after"), [("write", 150), ("rename", 100)])
def test_sigkill_midway_through_a_batch_leaves_a_consistent_store(tmp_path, stage, after):
    import signal
    import subprocess
    import sys

    root = tmp_path / "killed"
    st = HandleStore(root)
    st.put_bytes(LOG, name="survivor")
    proc = subprocess.Popen(
        [sys.executable, "-c", BATCH_KILLED, str(root), stage, str(after)],
        stdout=subprocess.PIPE,
    )
    assert proc.stdout.readline() == b"stopped\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    entries = sorted(e["id"] for e in st.entries())
    if stage == "write":
        assert entries == ["default/survivor"]  # no card before every blob is in place
    else:
        assert len(entries) == after + 1
    # every visible handle is whole
    for e in entries:
        name = e.split("/")[1]
        data = st.read_bytes(name, verify=True)
        if name != "survivor":
            i = int(name[1:])
            assert data == (f"payload {i}\n" * (i + 1)).encode()
    leftovers = list(root.rglob(".tmp-*"))
    assert leftovers
    report = st.gc()
    assert report["temp_removed"] == len(leftovers)
    assert not list(root.rglob(".tmp-*"))
    assert sorted(e["id"] for e in st.entries()) == entries
    blobs = [p for p in st.blobs_dir.rglob("*") if p.is_file() and not p.name.endswith(".idx")]
    assert len(blobs) == len(entries)  # unreferenced blobs are gone too
    assert st.read_bytes("survivor", verify=True) == LOG


BATCH_WRITER = """
import sys
from ctxtools.store import HandleStore
root, tag = sys.argv[1], sys.argv[2]
st = HandleStore(root)
for rnd in range(4):
    items = [(f"{tag} round {rnd} item {i}\\n".encode() * 50, {"name": f"n{i}"})
             for i in range(60)]
    if tag == "single":
        for data, kw in items[::3]:
            st.put_bytes(data, **kw)
    else:
        st.put_many(items)
"""


def test_put_many_concurrent_with_other_writers_and_gc(tmp_path):
    import subprocess
    import sys

    root = tmp_path / "busy"
    st = HandleStore(root)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", BATCH_WRITER, str(root), tag], stderr=subprocess.PIPE
        )
        for tag in ("batch-a", "batch-b", "single")
    ]
    gcs = 0
    while any(p.poll() is None for p in procs):
        st.gc()  # may run between any two steps of a batch: never takes a blob from a card
        gcs += 1
    for p in procs:
        assert p.wait(timeout=60) == 0, p.stderr.read()
        p.stderr.close()
    assert gcs > 0
    assert not list(root.rglob(".tmp-*"))
    names = sorted(e["id"] for e in st.entries())
    assert names == sorted(f"default/n{i}" for i in range(60))
    for i in range(60):
        data = st.read_bytes(f"n{i}", verify=True)
        tag, _round, rnd, _item, j = data.split(b"\n")[0].split(b" ")
        assert j == str(i).encode()
        assert data == (data.split(b"\n")[0] + b"\n") * 50
        assert tag in (b"batch-a", b"batch-b", b"single")
    st.gc()
    blobs = [p for p in st.blobs_dir.rglob("*") if p.is_file() and not p.name.endswith(".idx")]
    assert len(blobs) == len({st.card(f"n{i}")["sha256"] for i in range(60)})


def test_version_1_index_is_rebuilt_as_version_2(store_dir):
    """An .idx written before the character checkpoints (format 1) is rebuilt on read."""
    from array import array

    import xxhash

    from ctxtools import store as store_mod

    st = HandleStore(store_dir)
    data = ("é" * 40_000 + "\n").encode() * 3
    card = st.put_bytes(data, name="old")
    ipath = st.idx_path(card["sha256"])
    words = array("Q", ipath.read_bytes()[:-8])
    ix = store_mod.LineIndex.from_bytes(ipath.read_bytes())
    assert ix is not None and len(ix.cc_offs) > 1
    # format 1: 10 header words, no character checkpoints
    v1 = array("Q", [words[0], 1, *words[2:8], words[9], words[10]])
    body = v1.tobytes() + ix.blocks.tobytes() + ix.ck_lines.tobytes() + ix.ck_offs.tobytes()
    ipath.write_bytes(body + array("Q", [xxhash.xxh3_64_intdigest(body)]).tobytes())
    assert store_mod.LineIndex.from_bytes(ipath.read_bytes()) is None
    with st.open("old") as p:
        assert p.chars_before(len(data)) == 120_003
        assert p.char_offset(40_001) == 80_001
    again = store_mod.LineIndex.from_bytes(ipath.read_bytes())
    assert again is not None and list(again.cc_chars) == list(ix.cc_chars)


def test_character_checkpoints_agree_with_decoding(monkeypatch):
    """chars_before / char_offset through the checkpoints equal decoding from the start,
    for multibyte text, invalid bytes and characters cut at every boundary."""
    import random

    from ctxtools.store import lineindex as store_mod
    from ctxtools.store import open_bytes

    rng = random.Random(11)
    alphabet = ["a", "é", "語", "😀", "\n"]
    parts = []
    for _ in range(3000):
        if rng.random() < 0.05:
            parts.append(bytes([rng.choice([0xFF, 0xC3, 0xE8, 0x80])]))
        else:
            parts.append(rng.choice(alphabet).encode())
    data = b"".join(parts)
    monkeypatch.setattr(store_mod, "STRIDE", 37)
    monkeypatch.setattr(store_mod, "BLOCK_SIZE", 101)
    with open_bytes(data) as p:
        assert len(p.index.cc_offs) > 50
        for cut in range(0, len(data) + 1, 7):
            # only character boundaries are asked for: move CUT back to one
            dec = codecs.getincrementaldecoder("utf-8")("replace")
            n = len(dec.decode(data[:cut]))
            pending = len(dec.getstate()[0])
            b = cut - pending
            assert p.chars_before(b) == len(data[:b].decode("utf-8", "replace")) == n
        text = data.decode("utf-8", "replace")
        for c in range(0, len(text), 13):
            off = p.char_offset(c)
            assert len(data[:off].decode("utf-8", "replace")) == c


# --- the store's parts, one module each (ctxtools/store/) -----------------------------------


def test_importing_the_store_package_loads_nothing_heavy():
    import subprocess
    import sys

    code = (
        "import sys, ctxtools.store as s\n"
        "print(sorted(m for m in sys.modules if m.startswith(('ctxtools.store.', 'xxhash'))))\n"
        "print(s.HandleStore.__module__, s.Chain.__module__, s.parse_size.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "[]",
        "ctxtools.store.handles ctxtools.store.payload ctxtools.fsutil",
    ]


def test_every_public_name_resolves_and_an_unknown_one_is_an_attribute_error():
    for name in dir(store_mod):
        if not name.startswith("__"):
            getattr(store_mod, name)
    for name in ("HandleStore", "Payload", "LineIndex", "GC_MAX_ENTRIES", "ACCESS_MAX_ENTRIES"):
        assert name in dir(store_mod)
    with pytest.raises(AttributeError, match="no attribute 'Budget'"):
        store_mod.Budget  # noqa: B018


def test_settle_type_takes_the_asked_type_only_when_it_fits():
    from ctxtools.errors import InputError

    assert sniff.settle_type(None, "jsonl", 3) == "jsonl"
    assert sniff.settle_type("text", "json", 1) == "text"
    assert sniff.settle_type("jsonl", "json", 1) == "jsonl"  # one JSON line is JSON Lines
    with pytest.raises(InputError, match=r"--type json: the input is not one JSON document"):
        sniff.settle_type("json", "text", 3)
    with pytest.raises(InputError, match=r"not JSON Lines .* \(it reads as json\)"):
        sniff.settle_type("jsonl", "json", 2)


def test_feed_stream_passes_every_chunk_to_its_sink(monkeypatch):
    import io

    monkeypatch.setattr(lineindex, "READ_CHUNK", 5)
    data = "ligne 1\nligne 2 — 語\n".encode() + b"\xff"
    chunks = []
    ix = lineindex.feed_stream(lineindex.Indexer(), io.BytesIO(data), chunks.append)
    assert len(chunks) > 3 and b"".join(chunks) == data
    assert (ix.size, ix.lines, ix.chars) == (len(data), 3, len(data.decode("utf-8", "replace")))
    assert ix.sha256 == hashlib.sha256(data).hexdigest()
    assert lineindex.index_stream(io.BytesIO(data)).xxh3 == ix.xxh3


def test_line_index_round_trip_keeps_its_geometry(monkeypatch):
    import io

    monkeypatch.setattr(lineindex, "STRIDE", 16)
    monkeypatch.setattr(lineindex, "BLOCK_SIZE", 64)
    li = lineindex.index_stream(io.BytesIO(LOG[:5000])).index()
    assert (li.block_size, li.stride) == (64, 16)
    again = lineindex.LineIndex.from_bytes(li.to_bytes())
    assert again is not None and (again.block_size, again.stride) == (64, 16)
    assert list(again.ck_offs) == list(li.ck_offs) and list(again.blocks) == list(li.blocks)
    monkeypatch.setattr(lineindex, "STRIDE", 32)  # built with another geometry: not used
    assert lineindex.LineIndex.from_bytes(li.to_bytes()) is None


def test_chain_gives_the_head_then_the_stream():
    import io

    from ctxtools.store import Chain

    c = Chain(b"{", io.BytesIO(b'"kind": 1}'))
    assert c.read1(100) == b"{"
    assert c.read(100) == b'"kind": 1}'
    assert c.read(100) == b""
    assert Chain(b"", io.BytesIO(b"rest")).read1(2) == b"re"


def test_card_bytes_is_one_json_line_the_reader_accepts(st):
    from ctxtools.store import refs

    card = st.put_bytes(b"x\n", name="c")
    record = st.record("c")
    assert refs.card_bytes(record) == st.card_path("default", "c").read_bytes()
    assert refs.card_problem(record, "default", "c") is None
    assert refs.card_problem(record, "default", "other") == "it names another handle"
    assert refs.public_card(record) == card
    with pytest.raises(UsageError, match="unknown type 'yaml'"):
        refs.validate_type("yaml")


def test_a_read_is_logged_once(st):
    st.put_bytes(LOG, name="log")
    st.read_bytes("log")
    assert len(st.access_log.read_bytes().splitlines()) == 1
    with st.open("log", touch=False):
        pass
    st.read_bytes("log", touch=False)
    assert len(st.access_log.read_bytes().splitlines()) == 1
    with st.open("log"):
        pass
    assert [e["access_count"] for e in st.entries()] == [2]


def test_frecency_halves_every_seven_days_and_one_encoder_writes_the_log(st):
    from ctxtools.store import access

    now = 1_800_000_000.0
    assert access.frecency(0, now, now) == 1.0
    assert access.frecency(3, now - 7 * 24 * 3600, now) == pytest.approx(2.0)
    assert access.frecency(3, now + 60, now) == 4.0  # a clock step back is no bonus
    line = access.access_line("s", "n", 12.5, 2)
    assert line == b'{"s":"s","n":"n","t":12.5,"c":2}\n'
    st.put_bytes(b"x", name="a")
    created = st.record("a")["created_at"]
    st.record_access("default", "a", when=created + 1.23456)
    assert st.access_log.read_bytes() == access.access_line(
        "default", "a", round(created + 1.23456, 3), 1
    )
    st.compact_access()
    assert st.access_stats() == {("default", "a"): (1, round(created + 1.23456, 3))}


def test_tmp_is_dead_knows_live_and_dead_writers(tmp_path):
    import subprocess
    import sys
    import time

    from ctxtools.store import disk

    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], **_OUT)
    dead_pid = int(child.stdout)
    now = time.time()
    for name, dead in [
        (f".tmp-{os.getpid()}-aaaaaaaaaaaa", False),  # this process: still writing
        (f".tmp-{os.getppid()}-bbbbbbbbbbbb", False),  # alive
        (f".tmp-{dead_pid}-cccccccccccc", True),  # its writer is gone
        (f".tmp-{dead_pid}-notes", False),  # not a name the toolkit writes
        (".tmp-not-a-pid", False),
    ]:
        path = tmp_path / name
        path.write_bytes(b"")
        assert disk.tmp_is_dead(name, path, now) is dead, name
    old = tmp_path / f".tmp-{os.getppid()}-dddddddddddd"
    old.write_bytes(b"")
    assert disk.tmp_is_dead(old.name, old, now + disk.TMP_STALE_SECONDS + 10) is True
    assert disk.tmp_is_dead("gone", tmp_path / ".tmp-1-gone", now) is False  # no file


_OUT = {"capture_output": True, "text": True, "check": True}


def test_batch_plan_groups_by_directory_biggest_task_first(st, monkeypatch):
    from ctxtools.store import batch

    monkeypatch.setattr(batch, "TASK_FILES", 4)
    items = [(f"payload {i}\n".encode(), {"name": f"n{i}", "session": "s"}) for i in range(6)]
    items.append((b"payload 0\n", {"name": "again", "session": "t"}))  # same blob, twice
    prepared, blobs = batch.prepare(items, 1.0)
    assert len(prepared) == 7 and len(blobs) == 6
    order = batch.plan(st, prepared, blobs)
    sizes = [len(jobs) for _d, jobs in order]
    assert sizes == sorted(sizes, reverse=True) and max(sizes) == 4
    assert sum(sizes) == 6 + 7  # every blob once, every card
    for directory, jobs in order:
        for job in jobs:
            if isinstance(job, batch._BlobJob):
                assert st.blob_path(job.sha).parent == directory
            else:
                rec = prepared[job.k].record
                assert st.card_path(rec["session_id"], rec["name"]).parent == directory
    assert not st.root.exists()  # planning writes nothing


def test_gc_dry_run_reports_what_gc_does(st):
    for i in range(5):
        st.put_bytes(f"{i}\n".encode() * (i + 1) * 100, name=f"h{i}")
    st.remove(["h0"])
    before = _files(st.root)
    dry = st.gc(max_entries=2, dry_run=True)
    assert _files(st.root) == before
    real = st.gc(max_entries=2)
    assert dry == real
    assert real["blobs_removed"] == 3 and real["kept"] == 2


def test_gc_dry_run_needs_no_write_access_to_the_store(st, monkeypatch):
    """Issue 21, item 11: --gc --dry-run on a read-only store failed taking the lock."""
    import errno

    st.put_bytes(b"kept\n" * 500, name="kept")
    st.put_bytes(b"gone\n" * 500, name="gone")
    st.remove(["gone"])
    before = _files(st.root)
    real_open = os.open
    root = str(st.root)

    def read_only(path, flags, *args, **kwargs):  # what a read-only mount answers
        if str(path).startswith(root) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    report = st.gc(dry_run=True)
    assert (report["blobs_removed"], report["kept"]) == (1, 1)
    assert _files(st.root) == before
    with pytest.raises(StoreError, match="read-only file system"):
        st.gc()  # the real thing still needs the lock, and says why it cannot have it


# --- a read racing a re-stash and gc (issue 21, item 11) --------------------------------------


def _racing_record(monkeypatch, stale: list[dict]):
    """Card reads that answer the cards in STALE first -- as a reader that read the card
    just before a re-stash and a gc -- then the store's current card."""
    real = HandleStore._load_record

    def load(self, session, name):
        return stale.pop(0) if stale else real(self, session, name)

    monkeypatch.setattr(HandleStore, "_load_record", load)


def _restash_and_collect(st, name: str, data: bytes) -> dict:
    """Stash DATA under NAME, re-stash it with other bytes, gc: the first card, whose blob
    is gone."""
    st.put_bytes(data, name=name)
    old = st.record(name)
    st.put_bytes(data + b"and more\n", name=name)
    st.gc()
    assert not st.blob_path(old["sha256"]).exists()
    return old


def test_a_read_that_races_a_restash_and_gc_serves_the_current_version(st, monkeypatch):
    old = _restash_and_collect(st, "log", b"first version\n" * 200)
    _racing_record(monkeypatch, [old])
    assert st.read_bytes("log") == b"first version\n" * 200 + b"and more\n"


def test_a_pinned_read_that_races_a_restash_is_stale_not_missing(st, monkeypatch):
    old = _restash_and_collect(st, "log", b"first version\n" * 200)
    _racing_record(monkeypatch, [old])
    with pytest.raises(StaleHandleError, match="has been re-stashed"):
        st.read_bytes(f"log@{old['sha256'][:12]}")


def test_a_read_that_loses_the_race_twice_does_not_blame_the_user(st, monkeypatch):
    old = _restash_and_collect(st, "log", b"first version\n" * 200)
    older = dict(old, sha256="0" * 64)  # another version gone as well
    _racing_record(monkeypatch, [older, old])
    with pytest.raises(StoreError) as info:
        st.read_bytes("log")
    assert "changed twice while it was being read" in info.value.message
    assert info.value.hint == "read it again"


def test_a_blob_missing_under_an_unchanged_card_is_damage(st):
    card = st.put_bytes(b"payload\n" * 300, name="log")
    st.blob_path(card["sha256"]).unlink()
    with pytest.raises(IntegrityError, match="its blob is missing from the store"):
        st.read_bytes("log")


# --- a card's sizes are the payload's (issue 21, item 10) ------------------------------------


def _edit_card(st, name: str, **fields) -> None:
    path = st.card_path("default", name)
    card = json.loads(path.read_bytes())
    card.update(fields)
    path.write_text(json.dumps(card))


def test_payload_chars_are_counted_from_the_bytes_not_the_card(st):
    import random

    rng = random.Random(21)
    data = bytes(rng.randrange(256) for _ in range(300_000)) + "ﬁn é".encode()  # invalid UTF-8
    st.put_bytes(data, name="odd")
    with st.open("odd") as p:
        assert p.chars == len(data.decode("utf-8", "replace"))
    with st.open("odd", verify=True) as p:
        assert p.chars == len(data.decode("utf-8", "replace"))


def test_an_edited_length_of_a_big_blob_fails_where_characters_count(st):
    big = ("é" * 4000 + "\n").encode() * 2500  # over FULL_CHECK_BYTES: not read whole on open
    card = st.put_bytes(big, name="big")
    _edit_card(st, "big", length=card["length"] - 1)
    with st.open("big") as p:  # opening reads neither the whole nor the tail
        assert p.pread(0, 4) == "éé".encode()
        with pytest.raises(IntegrityError, match="its card is damaged"):
            p.chars  # noqa: B018
    with pytest.raises(IntegrityError, match="its card is damaged"):
        st.open("big", verify=True)  # --verify trusts nothing but the blob and its sha256


def test_an_index_without_a_checkpoint_every_stride_is_rebuilt(st):
    card = st.put_bytes(LOG * 3, name="c")
    ipath = st.idx_path(card["sha256"])
    good = lineindex.LineIndex.from_bytes(ipath.read_bytes())
    forged = lineindex.LineIndex(
        **{**good.__dict__, "cc_offs": good.cc_offs[:1], "cc_chars": good.cc_chars[:1]}
    )
    ipath.write_bytes(forged.to_bytes())
    with st.open("c") as p:
        assert p.chars == card["length"]
    assert lineindex.LineIndex.from_bytes(ipath.read_bytes()).cc_offs == good.cc_offs


def test_put_stream_marks_an_incomplete_payload(st):
    """Issue 20: a capture cut short keeps its bytes; the card says why (the signal)."""
    card = st.put_stream(io.BytesIO(b"partial\n"), name="cut", incomplete=lambda: "SIGINT")
    assert card["incomplete"] == "SIGINT" and list(card)[-1] == "incomplete"
    assert st.read_bytes("cut") == b"partial\n"
    whole = st.put_stream(io.BytesIO(b"whole\n"), name="whole", incomplete=lambda: None)
    assert "incomplete" not in whole
    assert st.card("cut") == card


# --- gc beside a damaged card; a root that is a file, read -------------------------------------


@pytest.mark.parametrize("damage", [b"{not json", b'{"sha256": "zz"}'])
def test_gc_keeps_unreferenced_blobs_while_a_card_is_damaged(st, damage):
    card = st.put_bytes(LOG, name="d")
    st.put_bytes(b"other\n" * 500, name="o")
    st.remove(["o"])
    path = st.card_path("default", "d")
    good = path.read_bytes()
    path.write_bytes(damage)
    blob_files = [f for f in _files(st.root) if f[0].startswith("blobs/")]
    for dry_run in (True, False):
        report = st.gc(dry_run=dry_run)
        assert (report["blobs_removed"], report["unreferenced_kept"]) == (0, 2)
        assert [d["id"] for d in report["damaged"]] == ["default/d"]
    assert [f for f in _files(st.root) if f[0].startswith("blobs/")] == blob_files
    path.write_bytes(good)
    assert st.read_bytes("d") == LOG and st.blob_path(card["sha256"]).exists()
    report = st.gc()
    assert (report["blobs_removed"], report["unreferenced_kept"]) == (1, 0)


@pytest.mark.parametrize("under", [False, True])
def test_reading_from_a_root_that_is_a_file_says_so(tmp_path, under):
    f = tmp_path / "file"
    f.write_text("i am a file")
    root = f / "sub" if under else f
    for call in (lambda s: s.read_bytes("h"), lambda s: s.card("h"), lambda s: s.entries()):
        with pytest.raises(StoreError, match="is not a directory") as exc:
            call(HandleStore(root))
        assert exc.value.message == (
            f"store root {root} is not a directory" + (" (a parent is a file)" if under else "")
        )
        assert exc.value.hint == "point --store or CTX_STORE at a directory"
    assert f.read_text() == "i am a file"
