"""ctx-repomap after an edit: what the memos reuse must be exactly what a cold run computes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxtools.repomap import graph, rank
from ctxtools.repomap.core import build_map
from ctxtools.repomap.records import GraphState
from ctxtools.source.memo import Memo
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
            f"def make_view_{k}():\n    return View{k}()\n"
            + "".join(f"\n\ndef helper_{k}_{j}(a, b):\n    return a\n" for j in range(5)),
        )
    restamp(root)


def append(rel: str, text: str):
    return lambda r: write(r, rel, (r / rel).read_text() + text)


EDITS = [
    # (description, function applying the edit)
    ("a trailing comment", append("pkg/models.py", "\n# a note at the end\n")),
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


class Loader:
    """A ruler loaded on demand (as the command passes it), counting the loads."""

    spec = ("ruler", "cl100k_base", None, False, False)

    def __init__(self) -> None:
        self.loads = 0

    def __call__(self):
        self.loads += 1
        return get_ruler(encoding="cl100k_base").ruler


def run(root: Path, store: Path, tokens: int, loader: Loader, **kw):
    return build_map(
        str(root), tokens=tokens, ruler=loader, ruler_spec=Loader.spec, store=store, **kw
    )


@pytest.mark.parametrize("tokens", [60, 2000])
def test_incremental_map_equals_cold_map_over_edits(tmp_path, monkeypatch, tokens):
    root = tmp_path / "repo"
    make_repo(root)
    store = tmp_path / "store"
    ruler = get_ruler(encoding="cl100k_base").ruler
    loader = Loader()
    run(root, store, tokens, loader)  # fills the caches
    computed = []
    real = rank._rank
    monkeypatch.setattr(rank, "_rank", lambda *a: computed.append(1) or real(*a), raising=True)
    redone = []
    real_contribution = graph.GraphBuilder.contribution
    monkeypatch.setattr(
        graph.GraphBuilder,
        "contribution",
        lambda self, i, imp: redone.append(self.files[i]) or real_contribution(self, i, imp),
    )
    for what, edit in EDITS:
        edit(root)
        restamp(root)
        computed.clear()
        redone.clear()
        loader.loads = 0
        warm = run(root, store, tokens, loader)
        reused, loads, recomputed = not computed, loader.loads, list(redone)
        cold = build_map(str(root), tokens=tokens, ruler=ruler, use_cache=False)
        assert warm.text == cold.text, what
        assert (warm.tokens, warm.ruler, warm.exact) == (cold.tokens, cold.ruler, cold.exact)
        assert warm.to_json() == cold.to_json(), what
        assert warm.edges.as_dict() == cold.edges.as_dict(), what
        if what in ("a trailing comment", "a definition nobody names", "a comment"):
            assert reused, f"{what}: the graph did not change, yet it was ranked again"
        if what in ("a new use", "a file deleted", "a file added"):
            assert not reused, f"{what}: the graph changed, yet the old ranking was used"
        if what in ("a trailing comment", "a comment", "a new use"):
            assert len(recomputed) == 1, (what, recomputed)  # the edited file only
        if what == "a definition others already name":
            # app3 now defines QuerySet too: every file naming QuerySet links anew.
            assert set(recomputed) == {f"app{k}/views.py" for k in range(12)}
        if what in ("a file deleted", "a file added"):
            assert len(recomputed) == len(warm.files)
        if what == "a trailing comment" and tokens == 60:
            assert loads == 0, "the same layout was fitted again"
        if what == "a comment":  # every line number of the map's top file moved
            assert loads == 1
        # And again from the memos: the same bytes.
        again = run(root, store, tokens, loader)
        assert again.text == cold.text
        assert again.to_json() == cold.to_json()


def test_rank_memo_corrupt_or_foreign_means_rebuild(tmp_path):
    root = tmp_path / "repo"
    make_repo(root)
    store = tmp_path / "store"
    ruler = HeuristicRuler()
    first = build_map(str(root), tokens=300, ruler=ruler, store=store)
    (memo,) = (store / "repomap").glob("graph-v1-*.bin")
    good = memo.read_bytes()
    for bad in (b"", b"garbage", good[: len(good) // 2], good[:40] + b"\x00" * 50 + good[90:]):
        memo.write_bytes(bad)
        write(root, "pkg/models.py", (root / "pkg/models.py").read_text() + "\n# touch\n")
        m = build_map(str(root), tokens=300, ruler=ruler, store=store)
        cold = build_map(str(root), tokens=300, ruler=ruler, use_cache=False)
        assert m.text == cold.text
        assert m.to_json()["files"] == cold.to_json()["files"]
    # A memo of another shape under the right key is a miss, not a crash.
    key = next(iter(Memo(store, str(root), "graph", GraphState, 1).load()))
    bogus = Memo(store, str(root), "graph", GraphState, 1)
    bogus.put_plain(key, ([1.0], [1.0], [{}], [{}], 0))
    m = build_map(str(root), tokens=300, ruler=ruler, store=store)
    assert m.to_json()["files"] == cold.to_json()["files"]
    assert first.text != "" and m.text == cold.text


def test_fit_memo_damaged_or_inexact_is_not_trusted(tmp_path):
    root = tmp_path / "repo"
    make_repo(root)
    store = tmp_path / "store"
    loader = Loader()
    first = run(root, store, 60, loader)
    assert loader.loads == 1
    (memo,) = (store / "repomap").glob("fit-v1-*.bin")
    good = memo.read_bytes()
    for k, bad in enumerate((b"", b"junk", good[: len(good) // 2], good[:30] + b"\xff" * 9)):
        memo.write_bytes(bad)
        write(root, "pkg/models.py", (root / "pkg/models.py").read_text() + f"\n# {k}\n")
        loader.loads = 0
        assert run(root, store, 60, loader).text == first.text
        assert loader.loads == 1
    # A recorded fit whose text is not what the layout gives now is not used: the digest
    # of the examined lines decides, so a changed line means a new fit.
    write(root, "app0/views.py", (root / "app0/views.py").read_text().replace("(a, b)", "(a)"))
    loader.loads = 0
    m = run(root, store, 60, loader)
    cold = build_map(str(root), tokens=60, ruler=Loader()(), use_cache=False)
    assert m.text == cold.text and loader.loads == 1
    # An approximate ruler is never remembered (it may be a fallback for the one asked).
    memo.unlink()
    build_map(str(root), tokens=60, ruler=HeuristicRuler(), store=store)
    assert not memo.exists()


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


def test_fit_memo_keeps_a_slot_per_query(tmp_path):
    root = tmp_path / "repo"
    make_repo(root)
    store = tmp_path / "store"
    loader = Loader()
    plain = run(root, store, 60, loader)
    run(root, store, 60, loader, query="render page")
    append("pkg/models.py", "\n# later\n")(root)
    restamp(root)
    loader.loads = 0
    assert run(root, store, 60, loader).text == plain.text
    assert loader.loads == 0, "the --query map evicted the plain one"


def test_graph_memo_out_of_step_with_the_scan_cache_means_rebuild(tmp_path):
    root = tmp_path / "repo"
    make_repo(root)
    store = tmp_path / "store"
    ruler = HeuristicRuler()
    build_map(str(root), tokens=300, ruler=ruler, store=store)
    (memo,) = (store / "repomap").glob("graph-v1-*.bin")
    older = memo.read_bytes()
    # Two edits of the same file: the memo we put back knows neither, and the scan cache
    # no longer holds the content the memo was made from.
    for k in range(2):
        append("app1/views.py", f"\n\ndef added_{k}():\n    return make_view_{k + 4}()\n")(root)
        restamp(root)
        build_map(str(root), tokens=300, ruler=ruler, store=store)
    memo.write_bytes(older)
    append("pkg/query.py", "\n\ndef one_more():\n    return helper_1_2(1, 2)\n")(root)
    restamp(root)
    m = build_map(str(root), tokens=300, ruler=ruler, store=store)
    cold = build_map(str(root), tokens=300, ruler=ruler, use_cache=False)
    assert m.text == cold.text
    assert m.to_json()["files"] == cold.to_json()["files"]
    assert m.edges.as_dict() == cold.edges.as_dict()


def test_query_runs_between_edits_keep_the_plain_ranking_right(tmp_path):
    root = tmp_path / "repo"
    make_repo(root)
    store = tmp_path / "store"
    ruler = HeuristicRuler()
    build_map(str(root), tokens=300, ruler=ruler, store=store)
    steps = [
        append("app2/views.py", "\n\ndef linked():\n    return QuerySet().values()\n"),
        append("pkg/models.py", "\n# nothing that links\n"),
        append("app4/views.py", "\n\nclass Field:\n    pass\n"),
    ]
    for edit in steps:
        edit(root)
        restamp(root)
        for kw in ({"query": "filter values"}, {}, {"focus": ["pkg/query.py"]}, {}):
            m = build_map(str(root), tokens=300, ruler=ruler, store=store, **kw)
            cold = build_map(str(root), tokens=300, ruler=ruler, use_cache=False, **kw)
            assert m.text == cold.text, kw
            assert m.to_json()["files"] == cold.to_json()["files"], kw


def test_a_query_map_keeps_the_plain_ranking_for_the_next_query(tmp_path, monkeypatch):
    """A pack's map is always personalised: the first such run keeps the plain ranking it
    started from, so the next one (another task, same files) runs one PageRank, not two,
    and still prints what a cold run prints."""
    root = tmp_path / "repo"
    make_repo(root)
    store = tmp_path / "store"
    ruler = HeuristicRuler()
    calls = []
    real = rank.pagerank

    def counting(out, personal=None):
        calls.append(personal is not None)
        return real(out, personal)

    monkeypatch.setattr(rank, "pagerank", counting)
    build_map(str(root), tokens=300, ruler=ruler, store=store, query="QuerySet View3")
    assert calls == [False, True]
    calls.clear()
    asked = "helper_function View5"
    m = build_map(str(root), tokens=300, ruler=ruler, store=store, query=asked)
    assert calls == [True]
    cold = build_map(str(root), tokens=300, ruler=ruler, use_cache=False, query=asked)
    assert m.text == cold.text
    assert m.to_json()["files"] == cold.to_json()["files"]
    append("pkg/models.py", "\n\ndef more():\n    return QuerySet().values()\n")(root)
    restamp(root)
    calls.clear()
    m = build_map(str(root), tokens=300, ruler=ruler, store=store, query=asked)
    assert calls == [False, True]  # the graph changed: its plain ranking is new
    cold = build_map(str(root), tokens=300, ruler=ruler, use_cache=False, query=asked)
    assert m.text == cold.text


@pytest.mark.parametrize("kw", [{}, {"query": "QuerySet View3"}, {"focus": ["app2/views.py"]}])
def test_a_map_refitted_to_another_budget_is_the_map_built_for_it(tmp_path, kw):
    from ctxtools.errors import UsageError
    from ctxtools.repomap.core import refit_map

    root = tmp_path / "repo"
    make_repo(root)
    store = tmp_path / "store"
    ruler = HeuristicRuler()
    kw = {k: [str(root / p) for p in v] if k == "focus" else v for k, v in kw.items()}
    m = build_map(str(root), tokens=300, ruler=ruler, store=store, keep=True, **kw)
    kept = m.refit
    # The definitions the map scanned come with it (ctx-pack ranks the same files).
    assert any(d[1] == "View2" for d in m.defs["app2/views.py"])
    plain = build_map(str(root), tokens=300, ruler=ruler, store=store, **kw)
    assert plain.refit is None and plain.defs == {}
    for tokens in (60, 150, 300, 2000):
        built = build_map(str(root), tokens=tokens, ruler=ruler, use_cache=False, **kw)
        assert refit_map(kept, tokens, ruler) == built.text, tokens
    with pytest.raises(UsageError):
        refit_map(kept, 10, ruler)


@pytest.mark.parametrize("kw", [{}, {"query": "hub3_f4 leaf_7"}])
def test_the_head_of_a_ranking_refits_as_the_whole_ranking(tmp_path, monkeypatch, kw):
    """``Refit.upto``: what a fit in at most N tokens reads of a ranking (ctx-pack's map
    child hands only that over and ends) gives every smaller budget the same map."""
    import pickle

    from ctxtools.repomap import render
    from ctxtools.repomap.core import refit_map

    monkeypatch.setattr(render, "FILL_WINDOW", 100)  # (a fit looks at fewer items)
    root = tmp_path / "repo"
    for h in range(20):  # modules everyone calls, ranked first; then the callers' tail
        body = "".join(f"def hub{h}_f{k}(x):\n    return x + {k}\n\n\n" for k in range(12))
        write(root, f"hubs/hub{h}.py", body)
    for i in range(200):
        calls = "".join(f"    hub{(i + j) % 20}_f{(i * 7 + j) % 12}(v)\n" for j in range(6))
        write(root, f"leaves/leaf{i}.py", f"def leaf_{i}(v):\n{calls}    return v\n")
    ruler = HeuristicRuler()
    m = build_map(str(root), tokens=120, ruler=ruler, use_cache=False, keep=True, **kw)
    head = pickle.loads(pickle.dumps(m.refit.upto(120)))  # (it crosses a pipe)
    assert 0 < len(head.ranked) < len(m.refit.ranked) // 4
    for tokens in (50, 60, 90, 119, 120):
        built = build_map(str(root), tokens=tokens, ruler=ruler, use_cache=False, **kw)
        assert refit_map(head, tokens, ruler) == built.text, tokens
    with pytest.raises(ValueError):
        refit_map(head, 121, ruler)
    assert m.refit.upto(10**6) is m.refit  # (a map that may fit whole keeps all)


@pytest.mark.process
def test_command_after_edits_prints_what_a_cold_run_prints(script_runner, tmp_path):
    root = tmp_path / "repo"
    make_repo(root)
    cmd = ["ctx-repomap", str(root), "--tokens", "60"]
    assert script_runner.run(cmd).success
    for what, edit in EDITS:
        edit(root)
        restamp(root)
        for extra in ([], ["--json"], ["--query", "values"]):
            warm = script_runner.run(cmd + extra)
            cold = script_runner.run(cmd + extra + ["--no-cache"])
            assert warm.returncode == cold.returncode == 0, (what, warm.stderr)
            assert warm.stdout == cold.stdout, (what, extra)
            assert warm.stderr == cold.stderr == "", (what, extra)
    # A damaged memo changes nothing but the work done.
    memos = sorted((Path(os.environ["CTX_STORE"]) / "repomap").glob("*-v1-*.bin"))
    assert {m.name.split("-")[0] for m in memos} == {"cache", "fit", "graph", "result"}
    for memo in memos:
        memo.write_bytes(memo.read_bytes()[:-7] + b"damaged")
    append("pkg/query.py", "\n\ndef after_damage():\n    return Field()\n")(root)
    restamp(root)
    warm = script_runner.run(cmd)
    cold = script_runner.run(cmd + ["--no-cache"])
    assert warm.stdout == cold.stdout and warm.returncode == 0


def test_memo_uses_read_back_file_by_file_are_the_built_graphs(tmp_path, monkeypatch):
    """An unchanged graph ranked toward a query reads its uses back from the memo's parts
    (``PartUses``), one file at a time: the same uses and out-weights as a built graph."""
    from ctxtools.source.scanset import scan_repository

    root = tmp_path / "repo"
    make_repo(root)
    store = tmp_path / "store"
    ruler = HeuristicRuler()
    build_map(str(root), tokens=300, ruler=ruler, store=store)  # the memo, ranked
    seen = []
    scores = rank.definition_scores
    monkeypatch.setattr(rank, "definition_scores", lambda g, r: seen.append(g) or scores(g, r))
    restamp(root)  # (a fresh checkout: every stat new, no content changed)
    m = build_map(str(root), tokens=300, ruler=ruler, store=store, query="QuerySet values")
    assert [type(g.uses) for g in seen] == [rank.PartUses]
    built = graph.build_graph(scan_repository(str(root), use_cache=False).scans)
    assert list(rank.each_use(seen[0])) == list(zip(built.uses, built.totals, strict=True))
    assert seen[0].out == built.out
    cold = build_map(str(root), tokens=300, ruler=ruler, use_cache=False, query="QuerySet values")
    assert m.text == cold.text
    assert m.to_json()["files"] == cold.to_json()["files"]
