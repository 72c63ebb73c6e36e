"""The store's one cache format (ctxtools.memofile): a value round-trips; every kind of
damage is a miss that says why, never an error; the size policy keeps an oversized memo
out without touching the file already kept; and every cache a pack leaves in the store is
a memo file, the scan cache and its journal too (the mentions' use log is a log, not a
cache)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxtools import memofile

VALUE = {"files": {"a.py": (1, 2, "x")}, "vec": {"k": b"\x00\x01"}, "stats": None, "n": 3.5}


def test_a_value_round_trips_and_the_file_says_its_kind(tmp_path):
    path = tmp_path / "sub" / "m.bin"
    assert memofile.save(path, "memory", VALUE) is None
    blob = path.read_bytes()
    assert blob.startswith(b"ctx-memo-v1 memory\n")
    assert memofile.load(path, "memory") == (VALUE, None)
    assert memofile.decode("memory", blob) == VALUE
    assert blob == memofile.encode("memory", VALUE)  # (saved as head and body, unjoined)


@pytest.mark.parametrize(
    "damage, problem",
    [
        (lambda p: p.unlink(), "missing"),
        (lambda p: p.write_bytes(p.read_bytes()[:-3]), "damaged"),  # torn write
        (lambda p: p.write_bytes(p.read_bytes()[:-1] + b"\x00"), "damaged"),  # a flipped byte
        (lambda p: p.write_bytes(b"CTXMEM1\n" + p.read_bytes()[20:]), "damaged"),  # old format
        (lambda p: p.write_bytes(b""), "damaged"),
        (lambda p: p.write_bytes(p.read_bytes().replace(b" memory\n", b" vocab\n", 1)),
         "damaged"),  # another cache's file
    ],
)
def test_damage_is_a_miss_that_says_why(tmp_path, damage, problem):
    path = tmp_path / "m.bin"
    memofile.save(path, "memory", VALUE)
    damage(path)
    assert memofile.load(path, "memory") == (None, problem)


def test_a_body_that_passes_its_digest_but_does_not_load_is_a_miss(tmp_path):
    import xxhash

    body = b"\xff\xfe not marshal"
    path = tmp_path / "m.bin"
    path.write_bytes(b"ctx-memo-v1 memory\n" + xxhash.xxh3_64_digest(body) + body)
    assert memofile.load(path, "memory") == (None, "damaged")


def test_an_unreadable_file_is_a_miss_with_the_reason(tmp_path):
    path = tmp_path / "m.bin"
    path.mkdir()  # a directory where the file should be: reading it fails
    value, problem = memofile.load(path, "memory")
    assert value is None and problem not in (None, "missing", "damaged")


def test_the_size_policy_keeps_an_oversized_memo_out_and_the_old_file_as_it_was(
    tmp_path, monkeypatch
):
    path = tmp_path / "m.bin"
    memofile.save(path, "memory", {"small": 1})
    kept = path.read_bytes()
    monkeypatch.setattr(memofile, "MAX_BYTES", 200)
    reason = memofile.save(path, "memory", {"big": "x" * 500})
    assert reason and "over 200" in reason
    assert path.read_bytes() == kept


def test_a_value_marshal_cannot_write_is_a_reason_not_a_crash(tmp_path):
    path = tmp_path / "m.bin"
    assert "unmarshallable" in memofile.save(path, "memory", {"f": object()})
    assert not path.exists()


def test_a_key_names_its_material_and_nothing_else():
    assert memofile.key("a", "b") == memofile.key("a", "b")
    assert memofile.key("a", "b") != memofile.key("ab")
    assert memofile.key(os.fsdecode(b"caf\xe9")) != memofile.key("caf")  # undecodable bytes


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def test_every_cache_a_pack_keeps_is_a_memo_file(tmp_path, store_dir):
    root = tmp_path / "repo"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "orders.py").write_text(
        "def bulk_create(rows):\n    return [normalise(r) for r in rows]\n\n\n"
        "def normalise(row):\n    return dict(row)\n"
    )
    (root / "shop" / "billing.go").write_text(
        "package shop\n\nfunc Invoice(total int) int {\n\treturn total * 2\n}\n"
    )
    (root / "docs").mkdir()
    (root / "docs" / "notes.md").write_text("# Orders\n\nBulk orders are normalised first.\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "init")
    ctx_pack = Path(sys.executable).parent / "ctx-pack"
    for _ in range(2):  # the second run reads what the first kept
        done = subprocess.run(
            [str(ctx_pack), "-q", "bulk_create drops rows in @orders.py", "--memory",
             "docs/notes.md", "--tokens", "4000", "."],
            cwd=root, capture_output=True, env={**os.environ, "CTX_STORE": str(store_dir)},
        )
        assert done.returncode == 0, done.stderr
    caches = [p for p in sorted(store_dir.rglob("*")) if p.is_file()
              and p.parent.name in ("repomap", "memory", "mentions", "tiktoken", "semantic")]
    kinds = {p.parent.name for p in caches}
    assert {"repomap", "memory", "mentions", "tiktoken"} <= kinds, caches
    assert any(p.name.startswith("cache-v1-") for p in caches)  # the scan cache
    for path in caches:
        if path.parent.name == "mentions" and path.name.endswith(".uses.jsonl"):
            continue  # the mentions' use log: an append-only log, not a cache
        assert path.read_bytes().startswith(memofile.FORMAT), path
