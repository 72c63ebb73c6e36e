"""ctx-repomap's library: file discovery, the graph and its ranking, rendering, the cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import write

from ctxtools.errors import InputError, UsageError
from ctxtools.repomap import graph, rank, render
from ctxtools.repomap.core import build_map, scan_repository
from ctxtools.repomap.graph import ImportResolver, build_graph
from ctxtools.repomap.rank import pagerank
from ctxtools.repomap.render import MapLayout, RankedFile, fit, is_alias, short_signature
from ctxtools.source import listing as listmod
from ctxtools.source import scancache as cachemod
from ctxtools.source import scanset
from ctxtools.source.scan import Definition, language_for, scan_source
from ctxtools.source.scanset import FileScan
from ctxtools.tokens import HeuristicRuler, get_ruler

BIN = Path(sys.executable).parent

# --- helpers -----------------------------------------------------------------------------


@pytest.fixture
def git_env(tmp_path, monkeypatch):
    """git with no user or system configuration, and a global excludes file of our own."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "global-ignore").write_text("*.globalignored\n")
    cfg = home / ".gitconfig"
    cfg.write_text(f"[core]\n\texcludesFile = {home / 'global-ignore'}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(var, raising=False)
    return home


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


HUB = '''"""The hub: everything else uses it."""


class HandleStore:
    """A store. def fake_in_docstring(): not a definition."""

    def put(self, stream, name):
        return name

    def get(self, name):
        return name


def open_store(path):
    return HandleStore()
'''


def user(n: int) -> str:
    return f"""from hub import HandleStore, open_store


class Worker{n}(HandleStore):
    def run_job{n}(self, store: HandleStore) -> HandleStore:
        return open_store("x{n}")


def helper_{n}():
    return Worker{n}()
"""


def tree(root: Path) -> None:
    """A small multi-language project with ignore rules and vendored code."""
    write(root, "hub.py", HUB)
    for n in range(4):
        write(root, f"pkg/user{n}.py", user(n))
    write(root, "README.md", "# demo\n")
    write(root, "pyproject.toml", "[project]\nname = 'demo'\n")
    write(root, "web/app.ts", "export const start = (): number => 1;\nexport class App {}\n")
    write(root, "web/vendor.min.js", "var a=1;\n")
    write(root, "vendor/lib.py", "def vendored():\n    pass\n")
    write(root, "node_modules/x/index.js", "function nm() {}\n")
    write(root, "third_party/t.go", "package t\nfunc T() {}\n")
    write(root, "srv/main.go", "package main\n\nfunc main() {}\n\ntype Server struct{}\n")
    write(root, "notes.txt", "not a source file\n")
    write(root, "logo.png", b"\x89PNG\r\n\x1a\n\0\0\0")
    write(root, ".gitignore", "*.log\nbuild/\n")
    write(root, "debug.log", "noise\n")
    write(root, "build/gen.py", "def built():\n    pass\n")
    write(root, "sub/.gitignore", "secret.py\n!keep.log\n")
    write(root, "sub/secret.py", "def hidden():\n    pass\n")
    write(root, "sub/visible.py", "def shown():\n    pass\n")
    write(root, "sub/keep.log", "kept\n")
    write(root, "x.globalignored", "")


EXPECTED = [
    "README.md",
    "hub.py",
    "pyproject.toml",
    "pkg/user0.py",
    "pkg/user1.py",
    "pkg/user2.py",
    "pkg/user3.py",
    "srv/main.go",
    "sub/visible.py",
    "web/app.ts",
]


def rels(listing) -> list[str]:
    return [c.rel for c in listing.candidates]


# --- files ---------------------------------------------------------------------------------


def test_git_work_tree_lists_exactly_what_git_shows(tmp_path, git_env):
    root = tmp_path / "repo"
    tree(root)
    git(root, "init", "-q")
    git(root, "add", "hub.py", "pkg", "README.md", ".gitignore", "sub/.gitignore")
    git(root, "commit", "-q", "-m", "init")
    write(root, "untracked.py", "def fresh():\n    pass\n")  # untracked, not ignored
    write(root, ".git/info/exclude", "excluded_by_info.py\n")
    write(root, "excluded_by_info.py", "def nope():\n    pass\n")
    listing = listmod.list_files(str(root), language_for)
    assert listing.via == "git"
    assert rels(listing) == sorted(EXPECTED + ["untracked.py"], key=listmod.depth_key)
    # vendor/, node_modules/, third_party/; the .min.js is minified, not somebody else's
    assert listing.skipped == {"vendored": 3, "minified": 1}
    assert listing.others >= 3  # notes.txt, logo.png, .gitignore files, keep.log: not read
    manifests = {c.rel for c in listing.candidates if c.manifest}
    assert manifests == {"README.md", "pyproject.toml"}


def test_walk_outside_git_honours_nested_gitignores_like_git(tmp_path, git_env):
    root = tmp_path / "plain"
    tree(root)
    walked = listmod.list_files(str(root), language_for)
    assert walked.via == "walk"
    # The global excludes file is git's business; outside git it does not apply.
    assert rels(walked) == sorted(EXPECTED, key=listmod.depth_key)
    # The same tree under git gives the same files.
    (root / "x.globalignored").unlink()
    git(root, "init", "-q")
    assert rels(listmod.list_files(str(root), language_for)) == rels(walked)


def test_walk_negation_and_directory_rules(tmp_path):
    root = tmp_path / "r"
    write(root, ".gitignore", "*.py\n!keep.py\nout/\n")
    write(root, "keep.py", "def k():\n    pass\n")
    write(root, "drop.py", "def d():\n    pass\n")
    write(root, "out/keep.py", "def o():\n    pass\n")  # inside an ignored directory
    write(root, "a/.gitignore", "!drop2.py\n")
    write(root, "a/drop2.py", "def d2():\n    pass\n")
    write(root, ".hidden/h.py", "def h():\n    pass\n")
    assert rels(listmod.list_files(str(root), language_for)) == ["keep.py", "a/drop2.py"]


@pytest.mark.parametrize("use_git", [False, True])
def test_symlinks_loops_and_escapes(tmp_path, git_env, use_git):
    outside = tmp_path / "outside"
    write(outside, "secret.py", "def secret():\n    pass\n")
    root = tmp_path / "r"
    write(root, "real.py", "def real():\n    pass\n")
    (root / "inside_link.py").symlink_to("real.py")
    (root / "escape.py").symlink_to(outside / "secret.py")
    (root / "escape_dir").symlink_to(outside, target_is_directory=True)
    (root / "loop").symlink_to(".", target_is_directory=True)
    (root / "a.py").symlink_to("b.py")
    (root / "b.py").symlink_to("a.py")
    (root / "dangling.py").symlink_to("nowhere.py")
    if use_git:
        git(root, "init", "-q")
    listing = listmod.list_files(str(root), language_for)
    assert rels(listing) == ["inside_link.py", "real.py"]
    assert listing.skipped["symlink outside the root"] == 1
    assert listing.skipped["unreadable"] == 3  # the loop a.py <-> b.py, the dangling link
    m = build_map(str(root), tokens=200, ruler=HeuristicRuler())
    assert "secret" not in m.text
    assert "def real()" in m.text


def test_skips_binary_minified_generated_and_large(tmp_path):
    root = tmp_path / "r"
    write(root, "ok.py", "def ok():\n    pass\n")
    write(root, "bin.py", b"def f():\n\0\0\0")
    write(root, "gen.go", "// Code generated by stringer. DO NOT EDIT.\npackage x\nfunc G() {}\n")
    write(root, "big.js", "var x=1;" * (10 * 1024 * 1024 // 8))  # 10 MB on one line
    ss = scan_repository(str(root), use_cache=False)
    assert [s.rel for s in ss.scans] == ["ok.py"]
    assert ss.skipped == {"binary": 1, "generated": 1, "too large": 1}
    ss = scan_repository(str(root), use_cache=False, max_file_size=20 * 1024 * 1024)
    assert ss.skipped == {"binary": 1, "generated": 1, "minified": 1}


def test_unreadable_files_are_skipped_and_counted(tmp_path, monkeypatch):
    root = tmp_path / "r"
    write(root, "ok.py", "def ok():\n    pass\n")
    write(root, "locked.py", "def locked():\n    pass\n")
    real_open = open

    def fake_open(path, *args, **kwargs):
        if str(path).endswith("locked.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(scanset, "open", fake_open, raising=False)
    m = build_map(str(root), tokens=100, ruler=HeuristicRuler(), use_cache=False)
    assert "skipped 1 unreadable file(s)" in m.notes
    assert "def ok()" in m.text and "locked" not in m.text


def test_fifo_is_not_read(tmp_path):
    root = tmp_path / "r"
    write(root, "ok.py", "def ok():\n    pass\n")
    os.mkfifo(root / "pipe.py")  # opening it would block forever
    ss = scan_repository(str(root), use_cache=False)
    assert [s.rel for s in ss.scans] == ["ok.py"]
    assert ss.skipped == {"not a regular file": 1}


def test_max_files_keeps_the_shallowest_deterministically(tmp_path):
    root = tmp_path / "r"
    for rel in ["z.py", "a/b.py", "a/a.py", "a/b/c.py", "m.py"]:
        write(root, rel, f"def f_{rel.replace('/', '_')[:-3]}():\n    pass\n")
    ss = scan_repository(str(root), use_cache=False, max_files=3)
    assert [s.rel for s in ss.scans] == ["a/a.py", "m.py", "z.py"]
    assert ss.truncated
    assert any("truncated" in n for n in ss.notes)
    m = build_map(str(root), tokens=100, ruler=HeuristicRuler(), max_files=3)
    assert m.text.startswith("# truncated: 3 of 5 files mapped (--max-files)\n")
    assert m.tokens <= 100


# --- graph -------------------------------------------------------------------------------


def fs(rel: str, text: str) -> FileScan:
    return FileScan.from_result(rel, scan_source(rel, text))


def test_tests_step_back():
    # (what a test is: tests/lib/test_classify.py)
    helper = "def shared_helper():\n    pass\n"
    scans = [
        fs("lib/core.py", "def core_api():\n    pass\n"),
        fs("tests/helpers.py", helper),
        *[fs(f"tests/test_{n}.py", "shared_helper()\ncore_api()\n") for n in range(5)],
    ]
    ranked = rank.rank_scans(scanset.ScanSet(".", "walk", scans))[0]
    assert ranked[0].rel == "lib/core.py"


def test_external_imports_are_not_links():
    scans = [
        fs("src/ctx.rs", "pub struct Context;\n"),
        fs("src/a.rs", "use std::task::{Context, Poll};\nfn f(c: &mut Context) {}\n"),
        fs("src/b.rs", "use crate::ctx::Context;\nfn g(c: Context) {}\n"),
        fs("j/List.java", "public class List {}\n"),
        fs("j/Use.java", "import java.util.List;\nclass Use { List x; }\n"),
    ]
    g = build_graph(sorted(scans, key=lambda s: s.rel))
    idx = g.files.index
    assert idx("src/ctx.rs") not in g.out[idx("src/a.rs")]
    assert idx("src/ctx.rs") in g.out[idx("src/b.rs")]
    assert idx("j/List.java") not in g.out[idx("j/Use.java")]


def test_hub_used_by_all_ranks_first(tmp_path):
    root = tmp_path / "r"
    tree(root)
    m = build_map(str(root), tokens=400, ruler=HeuristicRuler(), use_cache=False)
    order = [f.rel for f in m.files]
    assert order[0] == "hub.py"
    assert m.text.startswith("hub.py:\n4:class HandleStore\n")
    hub = m.files[0]
    best = max(zip(hub.scores, hub.defs, strict=True))[1]
    assert best[1] == "HandleStore"


def test_base_classes_annotations_and_attributes_count():
    """A file used only through a base class and an annotation still outranks a helper
    that is merely called once (references are not only calls)."""
    scans = [
        fs("core.py", "class Model:\n    pass\n\ndef tiny_helper():\n    pass\n"),
        fs("util.py", "def format_thing():\n    pass\n"),
        fs("a.py", "from core import Model\nclass A(Model):\n    pass\n"),
        fs("b.py", "from core import Model\ndef f(m: Model) -> Model:\n    return m\n"),
        fs("c.py", "import core\nx = core.Model\ny = format_thing()\n"),
    ]
    g = build_graph(scans)
    rank = pagerank(g.out)
    by = dict(zip(g.files, rank, strict=True))
    assert by["core.py"] > by["util.py"]
    assert g.out[g.files.index("a.py")][g.files.index("core.py")] > 0


def test_ident_weights():
    w = graph.ident_weight
    assert w("HandleStore") > w("Store")  # longer, more specific
    assert w("_private") < w("private_") / 5
    assert w("__init__") == 0.0
    assert w("get") == 0.0 and w("append") == 0.0 and w("len") == 0.0  # built-in names
    assert w("ab") == 0.0 and w("Q") > 0.0  # short lowercase: a local variable
    assert w("results") < w("Results") / 3  # a plain word is as often a local variable
    assert w("Model", graph.KIND_WEIGHT["class"]) > w("Model", graph.KIND_WEIGHT["method"])


def test_names_defined_in_many_files_weigh_less():
    scans = [fs(f"d{i}.py", "def shared_name():\n    pass\n") for i in range(8)]
    scans.append(fs("only.py", "def unique_name():\n    pass\n"))
    scans.append(fs("user.py", "shared_name()\nunique_name()\n"))
    g = build_graph(sorted(scans, key=lambda s: s.rel))
    out = g.out[g.files.index("user.py")]
    assert out[g.files.index("only.py")] > 10 * out[g.files.index("d0.py")]


def test_import_disambiguates_names_defined_twice():
    scans = [
        fs("app/models.py", "class Field:\n    pass\n"),
        fs("gis/field.py", "class Field:\n    pass\n"),
        fs("app/use.py", "from app.models import Field\nclass X(Field):\n    pass\n"),
    ]
    g = build_graph(scans)
    out = g.out[g.files.index("app/use.py")]
    assert g.files.index("gis/field.py") not in out
    assert out[g.files.index("app/models.py")] > 0


def test_pagerank_is_a_deterministic_distribution():
    out = [{1: 1.0}, {2: 1.0}, {0: 1.0, 1: 3.0}, {}]
    r1 = pagerank(out)
    r2 = pagerank([dict(reversed(list(o.items()))) for o in out])
    assert r1 == r2
    assert abs(sum(r1) - 1.0) < 1e-12
    assert r1[1] > r1[0] and r1[3] == min(r1)
    personal = [0.0, 0.0, 0.0, 1.0]
    assert pagerank(out, personal)[3] > 0.5
    assert pagerank([]) == []


def test_import_resolver():
    files_ = sorted(
        [
            "django/__init__.py",
            "django/db/__init__.py",
            "django/db/models/__init__.py",
            "django/db/models/base.py",
            "web/src/util.ts",
            "web/src/index.ts",
            "web/src/lib/index.ts",
            "internal/store/store.go",
            "internal/store/put.go",
            "src/main/java/com/acme/Widget.java",
            "src/net/http.rs",
            "contrib/gis/collections.py",
        ]
    )
    r = ImportResolver(files_)

    def res(importer, lang, spec):
        return sorted(files_[i] for i in r.resolve(importer, lang, spec))

    assert res("x.py", "python", "django.db.models.base") == ["django/db/models/base.py"]
    assert res("x.py", "python", "django.db") == ["django/db/__init__.py"]
    assert res("django/db/models/x.py", "python", ".base") == ["django/db/models/base.py"]
    assert res("django/db/models/x.py", "python", "..") == ["django/db/__init__.py"]
    assert res("x.py", "python", "collections.abc") == []  # stdlib, not gis/collections.py
    assert res("web/src/index.ts", "typescript", "./util") == ["web/src/util.ts"]
    assert res("web/src/index.ts", "typescript", "./lib") == ["web/src/lib/index.ts"]
    assert res("web/src/index.ts", "typescript", "react") == []
    assert res("cmd/main.go", "go", "example.com/app/internal/store") == [
        "internal/store/put.go",
        "internal/store/store.go",
    ]
    assert res("A.java", "java", "com.acme.Widget") == ["src/main/java/com/acme/Widget.java"]
    assert res("src/main.rs", "rust", "crate::net::http::Client") == ["src/net/http.rs"]
    assert res("src/main.rs", "rust", "std::collections::HashMap") == []
    assert res("src/net/tcp.rs", "rust", "super::http::Client") == ["src/net/http.rs"]
    assert res("src/net/mod.rs", "rust", "self::http::Client") == ["src/net/http.rs"]


def test_focus_and_query_personalise(tmp_path):
    root = tmp_path / "r"
    tree(root)
    base = [f.rel for f in build_map(str(root), ruler=HeuristicRuler()).files]
    assert base[0] == "hub.py"
    focused = build_map(str(root), focus=["srv/main.go"], ruler=HeuristicRuler())
    assert focused.files[0].rel == "srv/main.go"
    assert focused.text.startswith("srv/main.go:\n")
    queried = build_map(str(root), query="how does the App start?", ruler=HeuristicRuler())
    assert queried.files[0].rel == "web/app.ts"
    with pytest.raises(InputError, match="no such file"):
        build_map(str(root), focus=["missing.py"], ruler=HeuristicRuler())
    dir_focus = build_map(str(root), focus=["srv", "web/"], ruler=HeuristicRuler())
    assert {f.rel for f in dir_focus.files[:2]} == {"srv/main.go", "web/app.ts"}
    assert base.index("srv/main.go") > 2 and base.index("web/app.ts") > 2


# --- rendering -----------------------------------------------------------------------------


def test_aliases_rank_below_real_definitions():
    """A module-level alias nothing uses (``var extname = path.extname``) comes after the
    real definitions of its file, and a require binding is not a definition at all."""
    from ctxtools.source.scan import scan_source

    src = (
        'var path = require("path");\n'
        "var extname = path.extname;\n"
        "var sep = path.sep;\n"
        "function realWork(a) { return extname(a); }\n"
        "function otherWork(b) { return b; }\n"
        "module.exports = { realWork, otherWork };\n"
    )
    r = scan_source("lib/util.js", src)
    defs = tuple(r.definitions)
    assert [d.name for d in defs] == ["extname", "sep", "realWork", "otherWork"]  # no "path"
    layout = MapLayout([RankedFile("lib/util.js", 1.0, "javascript", defs, [0.0] * len(defs))])
    assert [defs[k].name for _f, k in layout.items] == ["realWork", "otherWork", "extname", "sep"]
    assert is_alias(defs[0]) and not is_alias(defs[2])
    assert not is_alias(Definition("variable", "limit", 2, "var limit = 10", None, 2))


def test_short_signature():
    assert (
        short_signature("method", "put", "def put(self, stream, name):") == "def put(stream, name)"
    )
    assert short_signature("method", "m", "def m(cls):") == "def m()"
    assert short_signature("function", "f", "func f(a int) {") == "func f(a int)"
    assert short_signature("variable", "X", 'X = "a long value"') == "X"
    assert short_signature("class", "C", "") == "class C"
    sig = "def many(alpha, beta, gamma, delta, epsilon, zeta):"
    cut = short_signature("function", "many", sig, 30)
    assert len(cut) <= 30 and cut.endswith("…") and cut.startswith("def many(alpha")
    assert short_signature("function", "f", "def f(a,\r\n   b):\r") == "def f(a, b)"
    long_name = "IllegalArgumentException"
    java = f"public class {long_name} extends RuntimeException {{"
    assert short_signature("class", long_name, java, 20) == f"class {long_name}…"
    assert short_signature("struct", "Task", "pub(crate) struct Task {") == "struct Task"
    # cut at a token boundary, never inside a word (issue 19)
    py = "class NotFoundError(InputError):"
    assert short_signature("class", "NotFoundError", py, 30) == "class NotFoundError(…"
    c = "uv_loop_t* uv_default_loop(void)"
    assert short_signature("function", "uv_default_loop", c, 30) == "uv_loop_t* uv_default_loop(…"
    rb = "def mock_app(base=Sinatra::Base, &block)"
    assert short_signature("method", "mock_app", rb, 30) == "def mock_app(base=Sinatra…"
    for n in range(12, 60):
        for sig in (py, c, rb, "def many(alpha, beta, gamma, delta, epsilon, zeta):"):
            out = short_signature("function", sig.split("(")[0].split()[-1], sig, n)
            if out.endswith("…"):
                stem = out[:-1]
                full = short_signature("function", sig.split("(")[0].split()[-1], sig, 999)
                assert full.startswith(stem)
                nxt = full[len(stem)]
                assert not (stem[-1:].isalnum() and (nxt.isalnum() or nxt == "_")), (n, out)
    assert short_signature("function", "go", "export default function go() {") == "function go()"


def ranked_files(n_files: int, n_defs: int) -> list[RankedFile]:
    out = []
    for i in range(n_files):
        defs = [Definition("class", f"Class{i}", 1, f"class Class{i}(Base):", None, 3 * n_defs)]
        for k in range(1, n_defs):
            defs.append(
                Definition(
                    "method",
                    f"method_{i}_{k}",
                    3 * k,
                    f"def method_{i}_{k}(self, arg_{k}, other=None):",
                    f"Class{i}",
                    3 * k + 1,
                )
            )
        out.append(
            RankedFile(
                f"pkg/sub{i % 7}/module_{i}.py",
                1.0 / (i + 1),
                "python",
                tuple(defs),
                [1.0 / (k + 1) for k in range(n_defs)],
            )
        )
    return out


def test_methods_render_under_their_class():
    layout = MapLayout(ranked_files(1, 3))
    text = layout.render([(0, 2)])
    assert text == "pkg/sub0/module_0.py:\n1:class Class0(Base)\n6:  def method_0_2(arg_2…\n"


@pytest.mark.parametrize("counter", ["cl100k_base", "heuristic"])
def test_budget_is_never_exceeded_and_filled(counter):
    ruler = get_ruler(encoding=counter).ruler
    layout_files = ranked_files(120, 15)
    for budget in range(50, 3001, 59):
        layout = MapLayout(
            layout_files, limit=budget + render.FILL_WINDOW, max_sig=render.signature_width(budget)
        )
        fitted = fit(layout, budget, ruler.count)
        assert fitted.tokens == ruler.count(fitted.text)
        assert fitted.tokens <= budget, budget
        # Below ~100 tokens one line (10-14 tokens here) is over a tenth of the budget.
        floor = 0.9 if budget >= 100 else 0.8
        assert fitted.tokens >= floor * budget, (budget, fitted.tokens)


def test_exact_budget_on_a_real_repository(tmp_path):
    root = tmp_path / "r"
    tree(root)
    ruler = get_ruler().ruler
    full = build_map(str(root), tokens=100_000, ruler=ruler)
    for budget in (50, 60, 80, 120, 200):
        m = build_map(str(root), tokens=budget, ruler=ruler)
        assert ruler.count(m.text) == m.tokens <= budget
        if full.tokens > budget:
            assert m.tokens >= (0.9 if budget >= 100 else 0.8) * budget, (budget, m.tokens)


def test_breadth_first_shows_many_files():
    layout = MapLayout(ranked_files(60, 20), limit=1000 + render.FILL_WINDOW)
    fitted = fit(layout, 1000, get_ruler().ruler.count)
    headers = [x for x in fitted.text.splitlines() if not x[:1].isdigit()]
    assert len(headers) >= 15


def test_budget_below_minimum(tmp_path):
    with pytest.raises(UsageError, match="below the minimum of 50"):
        build_map(str(tmp_path), tokens=49)


def test_not_a_directory(tmp_path):
    f = write(tmp_path, "f.py", "x = 1\n")
    with pytest.raises(InputError, match="not a directory"):
        build_map(str(f))
    with pytest.raises(InputError, match="no such directory"):
        build_map(str(tmp_path / "missing"))


@pytest.mark.parametrize("kind", ["empty", "binary-only"])
def test_empty_result_is_defined(tmp_path, git_env, kind):
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    if kind == "binary-only":
        write(root, "a.bin", b"\0\1\2")
        write(root, "b.py", b"\0binary with a .py name")
    m = build_map(str(root), ruler=HeuristicRuler())
    assert m.text == "" and m.tokens == 0 and m.files == []
    # what was left out, when it is all there was (b.py: binary; a.bin has no scanner)
    want = "no source files to map" + (" (left out: 1 binary)" if kind != "empty" else "")
    assert want in m.notes
    assert m.to_json()["files"] == []


def test_crlf_and_invalid_utf8(tmp_path):
    root = tmp_path / "r"
    write(root, "crlf.py", b"class Crlf:\r\n    def go(self):\r\n        pass\r\n")
    write(root, "bad.py", b"def caf\xe9_ok():\n    pass\n\ndef fine(x):\n    return '\xff'\n")
    m = build_map(str(root), tokens=200, ruler=HeuristicRuler())
    assert "\r" not in m.text
    assert "1:class Crlf\n2:  def go()\n" in m.text
    assert "def fine(x)" in m.text
    import orjson

    orjson.dumps(m.to_json())  # no lone surrogates anywhere


def test_output_is_byte_identical_across_runs_and_processes(tmp_path):
    root = tmp_path / "r"
    tree(root)
    a = build_map(str(root), tokens=300, use_cache=False)
    b = build_map(str(root), tokens=300)
    c = build_map(str(root), tokens=300)  # from the cache
    assert a.text == b.text == c.text
    assert a.to_json() == c.to_json()
    outs = set()
    for seed in ("1", "2", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [
                str(Path(sys.executable).parent / "ctx-repomap"),
                str(root),
                "-t",
                "300",
                "--no-cache",
            ],
            env=env,
            capture_output=True,
            check=True,
        )
        outs.add(proc.stdout)
    assert outs == {a.text.encode()}


def test_progress_callback(tmp_path):
    root = tmp_path / "r"
    tree(root)
    calls = []
    scan_repository(str(root), progress=lambda done, total: calls.append((done, total)))
    assert calls[0] == (0, 10) and calls[-1] == (10, 10)


# --- cache -------------------------------------------------------------------------------


def cache_file(store: Path) -> Path:
    found = list((store / "repomap").glob("cache-v1-*.bin"))
    assert len(found) == 1
    return found[0]


def test_cache_warm_run_edit_and_touch(tmp_path, store_dir):
    root = tmp_path / "r"
    tree(root)
    first = scan_repository(str(root))
    assert first.scanned == 8 and first.notes == []
    warm = scan_repository(str(root))
    assert warm.scanned == 0
    # touch without change: re-stamped by content hash, not re-scanned
    st = os.stat(root / "hub.py")
    os.utime(root / "hub.py", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert scan_repository(str(root)).scanned == 0
    assert scan_repository(str(root)).scanned == 0  # and the new stamp was saved
    # an edit is seen
    write(root, "hub.py", HUB + "\n\nclass BrandNew:\n    pass\n")
    edited = scan_repository(str(root))
    assert edited.scanned == 1
    hub = next(s for s in edited.scans if s.rel == "hub.py")
    assert "BrandNew" in [d.name for d in hub.defs]
    # query and focus are not part of the key
    m = build_map(str(root), query="BrandNew", focus=["hub.py"], ruler=HeuristicRuler())
    assert m.scanset.scanned == 0
    # a deleted file leaves the cache
    (root / "pkg/user3.py").unlink()
    scan_repository(str(root))
    cache = cachemod.ScanCache(cache_file(store_dir), str(root), cachemod.scanner_fingerprint())
    cache.load()
    assert "pkg/user3.py" not in cache.entries and "hub.py" in cache.entries


@pytest.mark.parametrize("reuse", [False, True], ids=["scan-cache", "result-memo"])
def test_a_file_made_unreadable_after_a_warm_run_is_not_served_from_the_cache(
    tmp_path, store_dir, monkeypatch, reuse
):
    """chmod changes no mtime: the stamp the cache trusts must see it all the same."""
    root = tmp_path / "r"
    write(root, "ok.py", "def ok():\n    pass\n")
    locked = write(root, "locked.py", "def locked_symbol():\n    pass\n")

    def run():
        return build_map(str(root), tokens=100, ruler=HeuristicRuler(), reuse=reuse)

    assert "locked_symbol" in run().text
    warm = run()  # everything from the cache (or the whole map from the memo)
    assert "locked_symbol" in warm.text and warm.scanset.scanned == 0
    locked.chmod(0o000)
    real_open = open

    def refuse(path, *args, **kwargs):
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    try:
        with monkeypatch.context() as mp:
            if os.geteuid() == 0:  # root reads it all the same: refuse as the kernel would
                mp.setattr(scanset, "open", refuse, raising=False)
            m = run()
    finally:
        locked.chmod(0o644)
    assert "locked_symbol" not in m.text and "def ok()" in m.text
    assert "skipped 1 unreadable file(s)" in m.notes
    assert m.scanset.skipped == {"unreadable": 1}
    back = run()  # readable again: mapped again
    assert "locked_symbol" in back.text and not back.scanset.skipped


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b"garbage",
        lambda b: b[: len(b) // 2],
        lambda b: b.replace(b"ctx-memo-v1", b"ctx-memo-v9", 1),
        lambda b: b[:-5] + bytes(5),
    ],
    ids=["garbage", "truncated", "foreign-version", "flipped-bytes"],
)
def test_damaged_cache_is_rebuilt_with_a_note(tmp_path, store_dir, damage):
    root = tmp_path / "r"
    tree(root)
    good = build_map(str(root), ruler=HeuristicRuler())
    path = cache_file(store_dir)
    path.write_bytes(damage(path.read_bytes()))
    again = build_map(str(root), ruler=HeuristicRuler())
    assert again.text == good.text
    assert again.scanset.scanned == 8
    assert any("scan cache" in n and "rebuilding" in n for n in again.notes)
    assert build_map(str(root), ruler=HeuristicRuler()).scanset.scanned == 0


def test_cache_of_another_scanner_version_is_silently_replaced(tmp_path, store_dir):
    root = tmp_path / "r"
    tree(root)
    scan_repository(str(root))
    path = cache_file(store_dir)
    stale = cachemod.ScanCache(path, str(root), "0000")
    stale.load()
    assert stale.entries == {} and stale.notes == []


def test_unwritable_store_is_a_note_not_a_crash(tmp_path):
    root = tmp_path / "r"
    tree(root)
    store = tmp_path / "not-a-dir"
    store.write_text("a file where the store should be")
    m = build_map(str(root), store=str(store), ruler=HeuristicRuler())
    assert any("scan cache not saved" in n for n in m.notes)
    assert "HandleStore" in m.text


def test_one_cache_per_root(tmp_path, store_dir):
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, "a.py", "def in_a():\n    pass\n")
    write(b, "b.py", "def in_b():\n    pass\n")
    assert "in_a" in build_map(str(a), ruler=HeuristicRuler()).text
    assert "in_b" in build_map(str(b), ruler=HeuristicRuler()).text
    assert len(list((store_dir / "repomap").glob("cache-v1-*.bin"))) == 2
    assert build_map(str(a), ruler=HeuristicRuler()).scanset.scanned == 0


def test_result_memo(tmp_path, store_dir):
    root = tmp_path / "r"
    tree(root)
    calls = []

    def lazy():
        calls.append(1)
        return HeuristicRuler()

    first = build_map(str(root), tokens=200, ruler=lazy, reuse=True, ruler_spec="h")
    assert not first.from_memo and calls == [1]
    again = build_map(str(root), tokens=200, ruler=lazy, reuse=True, ruler_spec="h")
    assert again.from_memo and calls == [1]  # the ruler was not even loaded
    assert (again.text, again.tokens, again.shown_symbols) == (
        first.text,
        first.tokens,
        first.shown_symbols,
    )
    # any change of input is a miss: budget, query, focus, ruler, files
    for kw in ({"tokens": 201}, {"query": "App"}, {"focus": ["hub.py"]}):
        assert not build_map(str(root), ruler=lazy, reuse=True, ruler_spec="h", **kw).from_memo
    assert not build_map(str(root), tokens=200, ruler=lazy, reuse=True, ruler_spec="x").from_memo
    write(root, "hub.py", HUB + "\nclass Later:\n    pass\n")
    edited = build_map(str(root), tokens=200, ruler=lazy, reuse=True, ruler_spec="h")
    assert not edited.from_memo and "Later" in edited.text
    assert edited.text == build_map(str(root), tokens=200, ruler=HeuristicRuler()).text
    # a damaged memo is a miss, never an error
    memo = next((store_dir / "repomap").glob("result-v1-*.bin"))
    memo.write_bytes(b"ctx-repomap-result-v1\n\xff\x00garbage")
    assert not build_map(str(root), tokens=200, ruler=lazy, reuse=True, ruler_spec="h").from_memo
    assert build_map(str(root), tokens=200, ruler=lazy, reuse=True, ruler_spec="h").from_memo
    # without the cache there is no memo either
    plain = build_map(str(root), tokens=200, ruler=lazy, reuse=True, use_cache=False)
    assert not plain.from_memo


def test_directory_ignored_by_the_enclosing_work_tree_is_walked(tmp_path, git_env):
    root = tmp_path / "outer"
    write(root, ".gitignore", "corpus/\n")
    write(root, "corpus/lib/a.py", "def in_corpus():\n    pass\n")
    write(root, "corpus/.gitignore", "skip.py\n")
    write(root, "corpus/skip.py", "def skipped():\n    pass\n")
    git(root, "init", "-q")
    listing = listmod.list_files(str(root / "corpus"), language_for)
    assert listing.via == "walk"
    assert rels(listing) == ["lib/a.py"]
    # An empty repository that ignores nothing stays a git listing (and empty).
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    assert listmod.list_files(str(empty), language_for).via == "git"


def test_parallel_scan_gives_the_serial_result(tmp_path, monkeypatch, store_dir):
    root = tmp_path / "r"
    tree(root)
    write(root, "bin.py", b"\0binary")
    serial = build_map(str(root), tokens=300, ruler=HeuristicRuler(), use_cache=False)
    monkeypatch.setattr(scanset, "PARALLEL_MIN", 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    calls = []
    parallel = build_map(
        str(root), tokens=300, ruler=HeuristicRuler(), progress=lambda *a: calls.append(a)
    )
    assert parallel.scanset.scanned == 9  # bin.py is read and judged too
    assert calls[-1] == (11, 11) and [c[0] for c in calls] == sorted(c[0] for c in calls)
    assert parallel.text == serial.text
    assert parallel.to_json() == serial.to_json()
    assert parallel.scanset.skipped == {"binary": 1, "vendored": 3, "minified": 1}
    # what the workers found went into the cache like any other scan
    assert build_map(str(root), tokens=300, ruler=HeuristicRuler()).scanset.scanned == 0


def test_parallel_scan_of_a_truncated_listing_gives_the_serial_result(tmp_path, monkeypatch):
    # --max-files cuts the listing: the workers still scan the first MAX_FILES candidates
    # (each is looked at whatever the cut keeps), and the rest, read only when files
    # before them were skipped, are scanned here as before
    root = tmp_path / "r"
    tree(root)
    write(root, "bin.py", b"\0binary")
    serial = build_map(str(root), tokens=300, ruler=HeuristicRuler(), max_files=5, use_cache=False)
    monkeypatch.setattr(scanset, "PARALLEL_MIN", 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    prescanned = []
    real = scanset._prescan

    def spy(candidates, *args):
        out = real(candidates, *args)
        prescanned.append(sorted(out))
        return out

    monkeypatch.setattr(scanset, "_prescan", spy)
    parallel = build_map(str(root), tokens=300, ruler=HeuristicRuler(), max_files=5)
    assert parallel.scanset.truncated and serial.scanset.truncated
    first = scanset.list_repository(str(root)).candidates[:5]
    assert prescanned == [sorted(c.rel for c in first if not c.manifest)]
    assert len(prescanned[0]) == 3
    assert parallel.text == serial.text
    assert parallel.to_json() == serial.to_json()
    assert parallel.scanset.scanned == serial.scanset.scanned


def test_the_ruler_is_loaded_while_workers_scan_when_the_fit_will_need_it(tmp_path, monkeypatch):
    root = tmp_path / "r"
    tree(root)
    monkeypatch.setattr(scanset, "PARALLEL_MIN", 1)
    monkeypatch.setattr(scanset, "CHUNK", 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    steps = []

    write(root, "many.py", "".join(f"def helper_{n}():\n    pass\n" for n in range(80)))

    def loader():
        steps.append("ruler")
        return get_ruler().ruler  # (exact: its fit is kept in the fit memo)

    first = build_map(str(root), tokens=60, ruler=loader, stage=steps.append)
    assert steps == ["listing", "scanning", "ruler", "ranking", "fitting"]
    # with a fit memo kept, the fit may need no ruler: it is loaded only if the fit asks
    for n in (0, 1):
        write(root, f"pkg/user{n}.py", user(n) + "\n# touched\n")
    steps.clear()
    again = build_map(str(root), tokens=60, ruler=loader, stage=steps.append)
    assert again.scanset.scanned == 2
    assert steps[:4] == ["listing", "scanning", "ranking", "fitting"]
    assert again.text == first.text
    # without the cache there is no memo: the ruler is loaded during the scan
    steps.clear()
    build_map(str(root), tokens=60, ruler=loader, stage=steps.append, use_cache=False)
    assert steps == ["listing", "scanning", "ruler", "ranking", "fitting"]


def test_a_parallel_scan_loads_the_scanners_before_the_workers_are_forked(tmp_path, monkeypatch):
    from ctxtools import forked as forkedmod
    from ctxtools.source import scan as scanmod

    root = tmp_path / "r"
    tree(root)
    monkeypatch.setattr(scanset, "PARALLEL_MIN", 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(scanmod, "_SCANNERS", {})
    forked = []
    real = forkedmod.forked_results

    def spy(*args, **kwargs):
        forked.append(sorted(scanmod._SCANNERS))
        return real(*args, **kwargs)

    monkeypatch.setattr(forkedmod, "forked_results", spy)
    scan_repository(str(root), use_cache=False)
    assert forked == [["go", "python", "typescript"]]
    scanmod.preload(["python", None, "objc", "no-such-language"])  # (nothing to load: no error)


def test_a_parallel_scan_deals_the_dearest_files_first():
    job = ("a.py", "/a.py", 100, True)
    assert scanset._cost((*job, 100)) == 100
    assert scanset._cost(("a.scala", "/a.scala", 100, True, 100)) == 300  # a grammar's parse
    assert scanset._workers(2) == 3 and scanset._workers(64) == scanset.MAX_WORKERS


def test_cache_journal_for_small_changes(tmp_path, store_dir, monkeypatch):
    root = tmp_path / "r"
    tree(root)
    scan_repository(str(root))
    main = cache_file(store_dir)
    journal = main.with_suffix(".journal")
    before = main.read_bytes()
    assert not journal.exists()
    write(root, "hub.py", HUB + "\nclass Journaled:\n    pass\n")
    assert scan_repository(str(root)).scanned == 1
    assert main.read_bytes() == before and journal.exists()  # only the journal was written
    again = scan_repository(str(root))
    assert again.scanned == 0
    assert "Journaled" in [d.name for s in again.scans for d in s.defs]
    # a damaged journal: its files are scanned again, and a sound journal replaces it
    journal.write_bytes(journal.read_bytes()[:-3])
    damaged = scan_repository(str(root))
    assert damaged.scanned == 1 and any("journal is unusable" in n for n in damaged.notes)
    assert scan_repository(str(root)).scanned == 0
    # many changes at once: the whole cache is rewritten, the journal goes
    monkeypatch.setattr(cachemod, "JOURNAL_MIN", 2)
    for n in range(4):
        write(root, f"pkg/user{n}.py", user(n) + "\n# edited\n")
    assert scan_repository(str(root)).scanned == 4
    assert not journal.exists()
    assert scan_repository(str(root)).scanned == 0


def test_a_fresh_checkout_journals_new_stats_only(tmp_path, store_dir, monkeypatch):
    root = tmp_path / "r"
    tree(root)
    first = scan_repository(str(root))
    main = cache_file(store_dir)
    journal = main.with_suffix(".journal")
    before = main.read_bytes()
    monkeypatch.setattr(cachemod, "JOURNAL_MIN", 2)  # far fewer than the files touched
    for path in sorted(root.rglob("*.py")):  # a new checkout: the same bytes, every stat new
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    touched = scan_repository(str(root))
    assert touched.scanned == 0 and main.read_bytes() == before and journal.exists()
    assert [s.defs for s in touched.scans] == [s.defs for s in first.scans]
    hashed = []
    real_hash = cachemod.content_hash
    monkeypatch.setattr(cachemod, "content_hash", lambda d: hashed.append(d) or real_hash(d))
    again = scan_repository(str(root))  # the same checkout: known by its stats, none read
    assert hashed == [] and again.scanned == 0 and main.read_bytes() == before
    # an edit after the restamps: journalled whole, beside them
    write(root, "hub.py", HUB + "\nclass Journaled:\n    pass\n")
    assert scan_repository(str(root)).scanned == 1 and main.read_bytes() == before
    hashed.clear()
    later = scan_repository(str(root))
    assert later.scanned == 0 and hashed == []
    assert "Journaled" in [d.name for s in later.scans for d in s.defs]


def test_a_type_is_defined_where_it_is_declared_not_where_it_is_extended():
    """Alamofire's Session: ``extension Session`` in test helpers split every use of the
    name four ways, three into tests (Session was file 19 of its map). A name defined
    nowhere here (``extension URLRequest``) keeps the files that extend it."""
    sources = {
        "Source/Core/Session.swift": "open class Session {\n    func request() {}\n}\n",
        "Tests/TestHelpers.swift": "extension Session {\n    static func mock() -> Session {"
        " Session() }\n}\n",
        "Tests/More.swift": "extension Session {\n    func flush() {}\n}\n"
        "extension URLRequest {\n    func dump() {}\n}\n",
        "Source/Use.swift": "func go(s: Session, r: URLRequest) { s.request(); r.dump() }\n",
    }  # fmt: skip
    scans = sorted(
        (FileScan.from_result(rel, scan_source(rel, text)) for rel, text in sources.items()),
        key=lambda s: s.rel,
    )
    g = build_graph(scans)
    files = [s.rel for s in scans]
    assert [files[i] for i in g.definers["Session"]] == ["Source/Core/Session.swift"]
    assert [files[i] for i in g.definers["URLRequest"]] == ["Tests/More.swift"]


def test_a_module_everybody_imports_is_central_though_its_names_are_not_used():
    """luarocks' core/cfg.lua: required by 63 files, read through fields set at run time,
    so no use names a definition of it. Its importers are its users (it was file 41 of
    the 1,000-token map, now 2)."""
    sources = {"pkg/__init__.py": "", "pkg/cfg.py": "def load_config():\n    return {}\n"}
    sources["pkg/other.py"] = "def rarely_called():\n    return 1\n"
    for n in range(6):
        sources[f"app{n}.py"] = f"import pkg.cfg\n\n\ndef job_{n}():\n    return pkg.cfg\n"
    sources["tool.py"] = "from pkg.other import rarely_called\n\nrarely_called()\n"
    scans = sorted(
        (FileScan.from_result(rel, scan_source(rel, text)) for rel, text in sources.items()),
        key=lambda s: s.rel,
    )
    g = build_graph(scans)
    files = [s.rel for s in scans]
    scores = rank.centrality(g, pagerank(g.out))
    cfg, other = scores[files.index("pkg/cfg.py")], scores[files.index("pkg/other.py")]
    assert cfg > 3 * other


def test_a_listing_within_one_block_keeps_compact_stats_and_says_the_same(tmp_path):
    """ctx-pack lists its root twice in one block (its files, its map): the second listing
    reads no stat again, and what the block keeps of each file is the four numbers a
    listing asks (not a whole os.stat_result), giving the same candidates as a listing
    outside any block."""
    root = tmp_path / "r"
    write(root, "a.py", "def f():\n    return 1\n")
    write(root, "pkg/b.go", "package pkg\n\nfunc G() int { return 2 }\n")
    write(root, "data.bin", b"\0\1" * 10)

    def facts(listing):
        return sorted((c.rel, c.size, c.mtime_ns, c.ctime_ns) for c in listing.candidates)

    outside = facts(listmod.list_files(str(root), language_for))
    with listmod.one_listing():
        first = facts(listmod.list_files(str(root), language_for))
        kept = [v for k, v in listmod._LISTED.get().items() if isinstance(k, str)]
        second = facts(listmod.list_files(str(root), language_for))
    assert first == second == outside
    assert [r for r, *_ in outside] == ["a.py", "pkg/b.go"]
    assert kept and all(not isinstance(v, os.stat_result) for v in kept)
