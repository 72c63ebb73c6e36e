"""The store in a hostile layout: symbolic links where its directories and files belong,
and writes that fail half-way (the blob in place, the card refused).

The store makes no link: one in it, to anywhere, is followed neither to read a card nor to
write or remove anything, so nothing outside the root is read as a card, written or
removed. A stash whose card cannot be written takes back the blob it placed where there
was none, and never one another handle refers to.
"""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest

from ctxtools.errors import IntegrityError, StoreError
from ctxtools.store import HandleStore

DATA = b"".join(b"line %d of a stashed log\n" % i for i in range(5000))
OTHER = b"".join(b"another line %d\n" % i for i in range(3000))


def _tree(root: Path) -> list[tuple[str, bytes]]:
    """Every file and link under ROOT, links not followed, with its bytes (a link: where
    it points); directories do not count."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                out.append((str(p.relative_to(root)), b"-> " + os.readlink(p).encode()))
            elif p.is_file():
                out.append((str(p.relative_to(root)), p.read_bytes()))
    return sorted(out)


@pytest.fixture
def st(store_dir) -> HandleStore:
    return HandleStore()


@pytest.fixture
def outside(tmp_path) -> Path:
    """A directory beside the store holding what a follower of a link would take for the
    store's own files: a damaged card, a valid-looking card, a blob, a temp leftover."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "victim.json").write_bytes(b'{"x": 1}\n')
    (out / ".tmp-1-0123456789ab").write_bytes(b"not the store's")
    return out


def _linked_session(st: HandleStore, outside: Path) -> None:
    """sessions/ext -> OUTSIDE, which holds a damaged card and a valid card of ext/a."""
    st.put_bytes(DATA, name="a")
    card = st.card_path("default", "a").read_bytes()
    (outside / "a.json").write_bytes(card.replace(b'"default"', b'"ext"'))
    (st.sessions_dir / "ext").symlink_to(outside)


# --- a session directory that is a link (defect: --rm deleted outside/victim.json) -------


def test_a_linked_session_is_neither_written_nor_removed_through(st, outside):
    _linked_session(st, outside)
    before = _tree(outside)
    with pytest.raises(StoreError, match=r"session ext: .*sessions/ext is a symbolic link"):
        st.remove(["victim"], session="ext")
    with pytest.raises(StoreError, match="session ext: .*symbolic link"):
        st.remove(["a"], session="ext")
    with pytest.raises(StoreError, match="session ext: .*symbolic link"):
        st.put_bytes(OTHER, name="newcard", session="ext")
    with pytest.raises(StoreError, match="session ext: .*symbolic link"):
        st.put_many([(OTHER, {"name": "newcard", "session": "ext"})])
    assert _tree(outside) == before
    # ... and the refused stashes left nothing in the store either (no blob of OTHER)
    assert not st.blob_path(hashlib.sha256(OTHER).hexdigest()).exists()


def test_a_linked_session_is_not_read_as_cards(st, outside):
    _linked_session(st, outside)
    with pytest.raises(StoreError, match="session ext: .*symbolic link"):
        st.read_bytes("ext/a")
    with pytest.raises(StoreError, match="session ext: .*symbolic link"):
        st.records("ext")
    damaged: list = []
    assert [r["name"] for r in st.records(None, damaged)] == ["a"]
    assert [(i, sha) for i, _m, sha in damaged] == [("ext", None)]
    assert damaged[0][1].startswith("session ext: ")


def test_gc_removes_nothing_through_a_linked_session(st, outside):
    _linked_session(st, outside)
    before = _tree(outside)
    report = st.gc(max_entries=0)
    assert report["evicted"] == ["default/a"]  # the store's own card only
    assert [d["id"] for d in report["damaged"]] == ["ext"]
    # the outside card names the blob: it cannot be known, so no unreferenced blob goes
    assert report["unreferenced_kept"] == 1 and report["blobs_removed"] == 0
    assert _tree(outside) == before


# --- the store's other directories and files as links ---------------------------------------


@pytest.mark.parametrize("which", ["blobs", "shard", "sessions"])
def test_a_linked_store_directory_is_not_followed(st, outside, which):
    card = st.put_bytes(DATA, name="a")
    sha = card["sha256"]
    real = {
        "blobs": st.blobs_dir,
        "shard": st.blob_path(sha).parent,
        "sessions": st.sessions_dir,
    }[which]
    moved = outside / real.name
    real.rename(moved)
    real.symlink_to(moved)
    shard = outside / "blobs" / sha[:2] if which == "blobs" else moved
    if which in ("blobs", "shard"):  # what a sweep through the link would take
        (shard / (sha[:2] + "e" * 62)).write_bytes(b"an unreferenced blob")
        leftover = shard / ".tmp-1-0123456789ab"
        leftover.write_bytes(b"a day-old temporary file")
        os.utime(leftover, (1, 1))
    before = _tree(outside)
    with pytest.raises(StoreError, match="symbolic link inside the store"):
        st.read_bytes("a")
    with pytest.raises(StoreError, match="symbolic link inside the store"):
        st.put_bytes(DATA, name="b")  # (its blob's directory, whichever was linked)
    if which == "sessions":
        with pytest.raises(StoreError, match="symbolic link inside the store"):
            st.gc(max_entries=0)
        with pytest.raises(StoreError, match="symbolic link inside the store"):
            st.remove(["a"])
    else:
        st.gc(max_entries=0)
    assert _tree(outside) == before


def test_a_linked_card_is_damaged_and_only_the_link_is_removed(st, tmp_path):
    st.put_bytes(DATA, name="a")
    target = tmp_path / "elsewhere.json"
    st.card_path("default", "a").rename(target)
    st.card_path("default", "a").symlink_to(target)
    with pytest.raises(IntegrityError, match="its card .* is a symbolic link"):
        st.read_bytes("a")
    damaged: list = []
    assert st.records(None, damaged) == []
    assert damaged[0][0] == "default/a" and "symbolic link" in damaged[0][1]
    assert st.remove(["a"]) == ["default/a"]
    assert not os.path.lexists(st.card_path("default", "a"))
    assert target.is_file()  # the file it pointed at is left alone


def test_a_linked_blob_or_index_is_not_read(st, tmp_path):
    card = st.put_bytes(DATA, name="a")
    sha = card["sha256"]
    for path, name in ((st.idx_path(sha), "x.idx"), (st.blob_path(sha), "blob")):
        path.rename(tmp_path / name)
        path.symlink_to(tmp_path / name)
    with pytest.raises(IntegrityError, match="its blob .* is a symbolic link"):
        st.read_bytes("a")
    st.blob_path(sha).unlink()
    (tmp_path / "blob").rename(st.blob_path(sha))
    assert st.read_bytes("a") == DATA  # (the index is read: --verify rebuilds it anyway)
    # the index was not taken from outside: rebuilt, it replaced the link in the store
    assert not st.idx_path(sha).is_symlink() and st.idx_path(sha).is_file()
    assert (tmp_path / "x.idx").is_file()


def test_a_linked_lock_or_access_log_creates_nothing_outside(st, tmp_path):
    st.put_bytes(DATA, name="a")
    (st.root / ".lock").unlink()
    (st.root / ".lock").symlink_to(tmp_path / "made-lock")
    with pytest.raises(StoreError, match=r"\.lock is a symbolic link inside the store"):
        st.put_bytes(OTHER, name="b")
    assert not os.path.lexists(tmp_path / "made-lock")
    (st.root / ".lock").unlink()
    st.access_log.symlink_to(tmp_path / "made-log")
    assert st.read_bytes("a") == DATA  # the read is not logged, and nothing is made
    assert not os.path.lexists(tmp_path / "made-log")


def test_a_directory_in_sessions_that_is_no_session_is_not_listed(st):
    st.put_bytes(DATA, name="a")
    odd = st.sessions_dir / ".odd"
    odd.mkdir()
    (odd / "a.json").write_bytes(st.card_path("default", "a").read_bytes())
    assert [r["name"] for r in st.records()] == ["a"]  # was a UsageError (exit 2)
    assert st.gc()["kept"] == 1


# --- a card that cannot be written takes its blob back --------------------------------------


def _fail_cards(monkeypatch, names, errno_: int = errno.ENOSPC, also=None) -> None:
    """Putting the card of a handle named in NAMES in place fails with ERRNO_, as a full
    disk or a read-only session directory does (ALSO, if given, runs first): the blob is
    in place by then."""
    real = os.replace

    def replace(src, dst, **kw):
        if Path(dst).suffix == ".json" and Path(dst).stem in names:
            if also is not None:
                also()
            raise OSError(errno_, os.strerror(errno_), str(dst))
        return real(src, dst, **kw)

    monkeypatch.setattr(os, "replace", replace)


@pytest.mark.parametrize("errno_", [errno.ENOSPC, errno.EACCES, errno.EROFS])
def test_a_refused_card_leaves_no_blob(st, monkeypatch, errno_):
    st.put_bytes(DATA, name="keep")
    before = _tree(st.root)
    with monkeypatch.context() as m:
        _fail_cards(m, {"new", "two"}, errno_)
        with pytest.raises(StoreError, match="cannot write the card.*nothing was changed"):
            st.put_bytes(OTHER, name="new")
        with pytest.raises(StoreError, match="cannot write the card"):
            st.put_many([(OTHER, {"name": "new"}), (OTHER + b"2", {"name": "two"})])
    assert _tree(st.root) == before
    assert st.read_bytes("keep", verify=True) == DATA


def test_a_refused_card_keeps_a_blob_another_handle_has(st, monkeypatch):
    st.put_bytes(DATA, name="keep")
    before = _tree(st.root)
    with monkeypatch.context() as m:
        _fail_cards(m, {"again", "new"})
        with pytest.raises(StoreError, match="cannot write the card"):
            st.put_bytes(DATA, name="again")  # the same bytes: the blob is shared
        with pytest.raises(StoreError, match="cannot write the card"):
            st.put_many([(DATA, {"name": "again"}), (OTHER, {"name": "new"})])
    assert _tree(st.root) == before
    assert st.read_bytes("keep", verify=True) == DATA


def test_a_refused_card_keeps_the_blob_a_racing_stash_referred_to(st, monkeypatch):
    """Another process stashes the same bytes while this one's card fails: it finds the
    blob this one just placed and writes its card. The blob must stay (it is taken back
    only under the exclusive lock, when no card refers to it)."""
    other = HandleStore(st.root)
    raced = []

    def race():  # (under this stash's shared lock: the other writer shares it)
        raced.append(other.put_bytes(OTHER, name="racer"))

    with monkeypatch.context() as m:
        _fail_cards(m, {"mine"}, also=race)
        with pytest.raises(StoreError, match="cannot write the card"):
            st.put_bytes(OTHER, name="mine")
    assert raced
    assert st.read_bytes("racer", verify=True) == OTHER
    assert [r["name"] for r in st.records()] == ["racer"]


def test_a_store_directory_is_made_through_no_link(st, outside):
    """``disk.ensure_dir`` (the store's and the remote cache's directories) makes nothing
    through a link in the store: ``remote/`` pointing outside is refused."""
    from ctxtools.store import disk

    st.put_bytes(DATA, name="a")
    (st.root / "remote").symlink_to(outside)
    before = _tree(outside)
    with pytest.raises(StoreError, match="remote is a symbolic link inside the store"):
        disk.ensure_dir(st.root, st.root / "remote" / "cache")
    assert _tree(outside) == before and not (outside / "cache").exists()
    disk.ensure_dir(st.root, st.root / "fresh" / "deeper")  # a real one is made as before
    assert (st.root / "fresh" / "deeper").is_dir()
