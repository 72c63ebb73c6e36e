"""ctxtools.stash: the mode of a call, the threshold pass-through, --list and --gc words."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ctxtools import stash
from ctxtools.errors import UsageError
from ctxtools.store import GC_MAX_ENTRIES, HandleStore

DATA = Path(__file__).resolve().parents[1] / "data"
GO = (DATA / "excerpt" / "server.go").read_bytes()


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


# --- choose_mode ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "command", "args", "mode"),
    [
        ([], None, [], "stash"),
        ([], None, ["-"], "stash"),
        ([], ["ls", "-l"], [], "command"),
        (["list"], None, [], "list"),
        (["rm"], None, ["a", "b"], "rm"),
        (["gc"], None, [], "gc"),
        (["path"], None, [], "path"),
    ],
)
def test_the_mode_of_a_call(flags, command, args, mode):
    assert stash.choose_mode(flags, command, args, session="default") == mode


@pytest.mark.parametrize(
    ("flags", "command", "args", "kw", "message"),
    [
        (["list", "gc"], None, [], {}, "--list and --gc cannot be combined"),
        (["rm", "path"], ["ls"], [], {}, "--rm and --path and -- CMD cannot be combined"),
        ([], None, [], {"session": "../x"}, None),
        ([], None, [], {"name": "a/b"}, None),
        (
            ["list"],
            None,
            [],
            {"gc_words": True},
            "--max-bytes, --max-entries and --dry-run go with --gc",
        ),
        (
            [],
            None,
            [],
            {"as_json": True},
            "--json goes with --list or --gc (the card is always JSON)",
        ),
        ([], None, [], {"tee": True}, "--tee goes with -- CMD"),
        (["path"], None, ["x"], {}, "--path takes no arguments"),
        (["list"], None, ["x"], {}, "--list takes no arguments"),
        (["gc"], None, ["x"], {}, "--gc takes no arguments"),
        (["rm"], None, [], {}, "--rm needs the NAMEs of the handles to remove"),
        ([], [], [], {}, "nothing to run after --"),
        ([], ["ls"], ["f"], {}, "give either FILE or -- CMD, not both"),
        ([], None, ["a", "b"], {}, "give at most one FILE (or -- CMD ARGS)"),
    ],
)
def test_words_that_do_not_go_together(flags, command, args, kw, message):
    kw = {"session": "default", **kw}
    with pytest.raises(UsageError) as exc:
        stash.choose_mode(flags, command, args, **kw)
    assert exc.value.exit_status == 2
    if message is not None:
        assert str(exc.value) == message


def test_a_conflict_is_named_before_a_bad_session():
    with pytest.raises(UsageError, match="cannot be combined"):
        stash.choose_mode(["list", "rm"], None, [], session="../x")


# --- the threshold pass-through ----------------------------------------------------------------


def test_small_input_passes_through_and_nothing_is_stored(store_dir):
    store = HandleStore(store_dir)
    done = stash.stash_or_pass(store, io.BytesIO(GO[:500]), threshold=1000, session="s")
    assert done == stash.Stashed(None, GO[:500])
    assert not store_dir.exists()


def test_big_input_is_stored_whole(store_dir):
    store = HandleStore(store_dir)
    done = stash.stash_or_pass(store, io.BytesIO(GO), threshold=100, name="go", session="s")
    assert done.card is not None and done.data == b""
    assert done.card["name"] == "go" and done.card["bytes"] == len(GO)
    assert store.read_bytes("go", session="s") == GO


def test_the_threshold_counts_characters_not_bytes(store_dir):
    """300 CJK characters are 900 bytes: under a 300-character threshold they pass."""
    store = HandleStore(store_dir)
    text = ("日本語" * 100).encode()
    assert stash.stash_or_pass(store, io.BytesIO(text), threshold=300, session="s").card is None
    more = text + "字".encode()
    assert stash.stash_or_pass(store, io.BytesIO(more), threshold=300, session="s").card


def test_invalid_utf8_counts_as_replacement_characters(store_dir):
    store = HandleStore(store_dir)
    data = b"\xff" * 10
    done = stash.stash_or_pass(store, io.BytesIO(data), threshold=10, session="s")
    assert done.card is None and done.data == data
    assert stash.stash_or_pass(store, io.BytesIO(data + b"\xfe"), threshold=10, session="s").card


def test_always_stores_even_empty_input(store_dir):
    store = HandleStore(store_dir)
    done = stash.stash_or_pass(store, io.BytesIO(b""), always=True, name="e", session="s")
    assert done.card["bytes"] == 0 and store.read_bytes("e", session="s") == b""


def test_a_bad_type_stores_nothing(store_dir):
    from ctxtools.errors import CtxError

    store = HandleStore(store_dir)
    with pytest.raises(CtxError) as exc:
        stash.stash_or_pass(store, io.BytesIO(GO), threshold=0, type="json", session="s")
    assert exc.value.exit_status == 1
    assert not [f for f in _files(store_dir) if f.endswith(".json")]


# --- --list and --gc ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0B"),
        (1023, "1023B"),
        (1024, "1.0K"),
        (1536, "1.5K"),
        (5 << 20, "5.0M"),
        (3 << 30, "3.0G"),
        (1 << 50, "1024.0T"),
    ],
)
def test_human_size(n, text):
    assert stash.human_size(n) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(-5, "0s ago"), (59.9, "59s ago"), (60, "1m ago"), (7199, "1h ago"), (86400 * 3, "3d ago")],
)
def test_age(seconds, text):
    assert stash.age(seconds) == text


def _entries(store_dir: Path) -> list[dict]:
    store = HandleStore(store_dir)
    store.put_stream(io.BytesIO(GO), name="server", session="s1")
    store.put_stream(io.BytesIO(b'{"a": 1}'), name="j", session="s2", exit_status=3)
    return store.entries(None, now=2_000_000_000.0)


def test_list_table_aligns_the_columns(store_dir):
    entries = _entries(store_dir)
    now = max(e["last_accessed_at"] for e in entries) + 7200
    table = stash.list_table(entries, all_sessions=True, now=now)
    lines = table.splitlines()
    assert len(lines) == 2 and table.endswith("\n")
    by_name = {line.split()[0]: line for line in lines}
    go_lines = GO.count(b"\n") + (not GO.endswith(b"\n"))
    assert by_name["s1/server"].split("  ")[0] == "s1/server"
    assert f"{go_lines} lines" in by_name["s1/server"]
    assert by_name["s2/j"].endswith(" exit=3") and "json" in by_name["s2/j"]
    assert "2h ago" in by_name["s2/j"]
    # the ref column starts at the same place on every line
    starts = {line.index("ctx:") for line in lines}
    assert len(starts) == 1
    assert stash.list_table([], all_sessions=False, now=now) == ""


def test_list_records_keep_the_schema(store_dir):
    recs = stash.list_records(_entries(store_dir))
    keys = [
        "ref",
        "session_id",
        "name",
        "type",
        "length",
        "lines",
        "bytes",
        "access_count",
        "last_accessed_at",
        "frecency",
    ]
    by_name = {r["name"]: r for r in recs}
    assert list(by_name["server"]) == keys
    assert list(by_name["j"]) == [*keys, "exit_status"] and by_name["j"]["exit_status"] == 3


def test_gc_budget_defaults_to_the_entry_count():
    assert stash.gc_budget(None, None) == (None, GC_MAX_ENTRIES)
    assert stash.gc_budget("1K", None) == (1024, None)
    assert stash.gc_budget(None, 0) == (None, 0)


def test_gc_summary_words():
    report = {
        "evicted": ["s/a", "s/b"],
        "blobs_removed": 1,
        "temp_removed": 0,
        "bytes_freed": 2048,
        "kept": 3,
        "kept_bytes": 10,
        "damaged": [],
    }
    assert stash.gc_summary(report, dry_run=True) == (
        "would evict s/a\nwould evict s/b\n"
        "would remove 2 handles, 1 unreferenced blobs, 0 leftover temp files (2.0K); "
        "kept 3 handles (10B)\n"
    )
    assert stash.gc_summary({**report, "evicted": []}, dry_run=False).startswith("removed 0 ")
