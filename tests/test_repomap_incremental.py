"""ctx-repomap after an edit: what the memos reuse must be exactly what a cold run computes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxtools.repomap import cache as cachemod
from ctxtools.repomap import core
from ctxtools.repomap.core import build_map
from ctxtools.tokens import HeuristicRuler, get_ruler


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


STAMP = [1_700_000_000_000_000_000]


def restamp(root: Path) -> None:
    """A new mtime on every file, so no edit can hide behind an unchanged stamp."""
    STAMP[0] += 10**9
    for path in root.rglob("*.py"):
        os.utime(path, ns=(STAMP[0], STAMP[0]))


def make_repo(root: Path) -> None:
    write(
        root,
        "pkg/models.py",
        "class Model:\n    def save(self, force=False):\n        pass\n\n"
        "class Field:\n    def clean(self, value):\n        return value\n\n"
        "def helper_function(x):\n    return x\n",
    )
    write(
        root,
        "pkg/query.py",
        "from pkg.models import Model, Field\n\n"
        "class QuerySet:\n    def filter(self, **kw):\n        return Model()\n\n"
        "    def values(self):\n        return Field()\n",
    )
    for k in range(12):
        write(
            root,
            f"app{k}/views.py",
            "from pkg.models import Model, Field\nfrom pkg.query import QuerySet\n\n"
            f"class View{k}(Model):\n    field = Field()\n\n"
            f"    def render_page_{k}(self):\n        return QuerySet().filter()\n\n"
            f"def make_view_{k}():\n    return View{k}()\n",
        )
    restamp(root)


def append(rel: str, text: str):
    return lambda r: write(r, rel, (r / rel).read_text() + text)


EDITS = [
    # (description, function applying the edit)
    (
        "a definition nobody names",
        append("pkg/query.py", "\n\ndef unused_extra():\n    pass\n"),
    ),
    (
        "a comment",
        lambda r: write(r, "pkg/models.py", "# the models\n" + (r / "pkg/models.py").read_text()),
    ),
    (
        "a definition others already name",
        append("app3/views.py", "\n\nclass QuerySet:\n    pass\n"),
    ),
    (
        "a new use",
        append("app5/views.py", "\n\ndef more():\n    return make_view_3()\n"),
    ),
    (
        "a definition removed",
        lambda r: write(
            r,
            "pkg/models.py",
            (r / "pkg/models.py").read_text().replace("def helper_function(x):", "def _gone(x):"),
        ),
    ),
    ("a file deleted", lambda r: (r / "app7/views.py").unlink()),
    (
        "a file added",
        lambda r: write(r, "pkg/extra.py", "from pkg.query import QuerySet\n\nx = QuerySet()\n"),
    ),
]


@pytest.mark.parametrize("tokens", [80, 2000])
def test_incremental_map_equals_cold_map_over_edits(tmp_path, monkeypatch, tokens):
    root = tmp_path / "repo"
    make_repo(root)
    store = tmp_path / "store"
    ruler = get_ruler(encoding="cl100k_base").ruler
    build_map(str(root), tokens=tokens, ruler=ruler, store=store)  # fills the caches
    computed = []
    real = core._rank_graph
    monkeypatch.setattr(
        core, "_rank_graph", lambda *a: computed.append(1) or real(*a), raising=True
    )
    for what, edit in EDITS:
        edit(root)
        restamp(root)
        computed.clear()
        warm = build_map(str(root), tokens=tokens, ruler=ruler, store=store)
        reused = not computed
        cold = build_map(str(root), tokens=tokens, ruler=ruler, use_cache=False)
        assert warm.text == cold.text, what
        assert warm.to_json() == cold.to_json(), what
        assert warm.edges.as_dict() == cold.edges.as_dict(), what
        if what in ("a definition nobody names", "a comment"):
            assert reused, f"{what}: the graph did not change, yet it was ranked again"
        if what in ("a new use", "a file deleted", "a file added"):
            assert not reused, f"{what}: the graph changed, yet the old ranking was used"
        # And again from the memo: the same bytes.
        again = build_map(str(root), tokens=tokens, ruler=ruler, store=store)
        assert again.text == cold.text
        assert again.to_json() == cold.to_json()


def test_rank_memo_corrupt_or_foreign_means_rebuild(tmp_path):
    root = tmp_path / "repo"
    make_repo(root)
    store = tmp_path / "store"
    ruler = HeuristicRuler()
    first = build_map(str(root), tokens=300, ruler=ruler, store=store)
    (memo,) = (store / "repomap").glob("rank-v1-*.bin")
    good = memo.read_bytes()
    for bad in (b"", b"garbage", good[: len(good) // 2], good[:40] + b"\x00" * 50 + good[90:]):
        memo.write_bytes(bad)
        write(root, "pkg/models.py", (root / "pkg/models.py").read_text() + "\n# touch\n")
        m = build_map(str(root), tokens=300, ruler=ruler, store=store)
        cold = build_map(str(root), tokens=300, ruler=ruler, use_cache=False)
        assert m.text == cold.text
        assert m.to_json()["files"] == cold.to_json()["files"]
    # A memo of another shape under the right key is a miss, not a crash.
    key = next(iter(cachemod.KeyedMemo(store, str(root), "rank", 1).load()))
    bogus = cachemod.KeyedMemo(store, str(root), "rank", 1)
    bogus.put(key, ([1.0], [1.0], [{}], [{}], 0))
    m = build_map(str(root), tokens=300, ruler=ruler, store=store)
    assert m.to_json()["files"] == cold.to_json()["files"]
    assert first.text != "" and m.text == cold.text


def test_rank_memo_is_not_used_with_a_query_or_focus(tmp_path):
    root = tmp_path / "repo"
    make_repo(root)
    store = tmp_path / "store"
    ruler = HeuristicRuler()
    build_map(str(root), tokens=300, ruler=ruler, store=store)
    for kw in ({"query": "render page"}, {"focus": ["app2/views.py"]}):
        m = build_map(str(root), tokens=300, ruler=ruler, store=store, **kw)
        cold = build_map(str(root), tokens=300, ruler=ruler, use_cache=False, **kw)
        assert m.text == cold.text
        assert m.to_json()["files"] == cold.to_json()["files"]
