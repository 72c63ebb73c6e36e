"""The scorer and the baselines of bench/bench_pack_quality.py (bench/pack_quality/).

A wrong scorer would make every figure of issue 17 wrong, so the gold lines, the parse of a
pack's text, the metrics, the budget of the baselines and the held-out selection rule are
checked here on small real inputs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from helpers import REPO

sys.path.insert(0, str(REPO / "bench"))

from pack_quality.corpus import SourceFile, python_chunks, split_lines  # noqa: E402
from pack_quality.gold import is_source, parse_patch, score, shown_lines  # noqa: E402
from pack_quality.retrieve import bm25_rank, fill, render_block  # noqa: E402
from pack_quality.tasks import clean_message, select_commits  # noqa: E402
from pack_quality.trees import check_patch, co_changers, materialise  # noqa: E402

PATCH = """\
diff --git a/pkg/mod.py b/pkg/mod.py
--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -10,4 +10,4 @@ def f():
     a = 1
-    b = 2
+    b = 3
     c = 4
     d = 5
@@ -40,3 +40,5 @@ def g():
     x = 1
+    y = 2
+    z = 3
     w = 4
diff --git a/tests/test_mod.py b/tests/test_mod.py
--- a/tests/test_mod.py
+++ b/tests/test_mod.py
@@ -1,2 +1,2 @@
-old
+new
 same
diff --git a/pkg/new.py b/pkg/new.py
new file mode 100644
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,1 @@
+x = 1
"""


def test_gold_keeps_existing_source_lines_and_anchors_insertions():
    gold = parse_patch(PATCH)
    assert [(h.path, h.lines) for h in gold.hunks] == [("pkg/mod.py", [11]), ("pkg/mod.py", [40])]


def test_is_source_leaves_out_tests_docs_and_changelogs():
    assert is_source("src/pkg/core.py") and is_source("lib/router/index.js")
    assert is_source("command.go")
    for path in (
        "tests/test_x.py",
        "pkg/test_x.py",
        "command_test.go",
        "docs/conf.py",
        "CHANGES.rst",
        "lib/a.spec.ts",
        "README.md",
        "pkg/conftest.py",
    ):
        assert not is_source(path), path


def _pack(path: str, numbers: list[int]) -> str:
    body = "\n".join(f"{n}\tline {n}" for n in numbers)
    return f"# Files\n\n```text\n==> {path} <== 99 lines\n{body}\n```\n\n# Task\n\n11\tx\n"


def test_score_line_recall_complete_and_file_recall():
    gold = parse_patch(PATCH)
    full = score(gold, _pack("pkg/mod.py", [11, 40]))
    assert (full["line_recall"], full["complete"], full["file_recall"]) == (1.0, True, 1.0)
    half = score(gold, _pack("pkg/mod.py", [11, 60]))
    assert (half["line_recall"], half["complete"], half["file_recall"]) == (0.5, False, 1.0)
    assert half["missed"] == ["pkg/mod.py:40"]
    head = score(gold, _pack("pkg/mod.py", [70, 80]))  # far from both changes
    assert (head["line_recall"], head["file_recall"]) == (0.0, 0.0)
    other = score(gold, _pack("pkg/other.py", [11, 40]))
    assert other["line_recall"] == 0.0 and not other["complete"]


def test_numbers_after_the_closing_fence_are_not_the_files():
    assert shown_lines(_pack("a.py", [3])) == {"a.py": {3}}


def test_python_chunks_split_functions_methods_and_class_header():
    src = textwrap.dedent("""\
        import os


        def f():
            return 1


        class C:
            x = 1

            def m(self):
                return 2
        """)
    chunks = python_chunks(src, len(split_lines(src)))
    assert [[4, 5]] in [[list(r) for r in c] for c in chunks]  # f
    assert [(11, 12)] in chunks  # the method
    assert [(8, 10)] in chunks  # class line, x = 1 and the blank line
    assert [(1, 3)] in chunks and [(6, 7)] in chunks  # module code between definitions


def _count(text: str) -> int:
    from ctxtools.tokens import get_ruler

    return get_ruler(encoding="cl100k_base", exact=True).ruler.count(text)


def test_fill_stays_in_budget_and_renders_what_it_chose(tmp_path):
    from pack_quality.corpus import Corpus, terms

    for i in range(30):
        body = "".join(f"def fn_{i}_{j}(retry_backoff):\n    return {j}\n\n" for j in range(20))
        (tmp_path / f"m{i:02}.py").write_text(body)
    corpus = Corpus(tmp_path)
    ranked = [u for _, u in bm25_rank(corpus.chunks(), terms("fn_7_3 retry backoff"))]
    assert ranked[0].path == "m07.py" and ranked[0].ranges == [(10, 11)]
    text, taken = fill(ranked, corpus.files, "fn_7_3 retry backoff", 600, _count)
    assert _count(text) <= 600 and taken
    shown = shown_lines(text)
    assert {10, 11} <= shown["m07.py"]
    assert sum(len(v) for v in shown.values()) == sum(e - s + 1 for u in taken for s, e in u.ranges)


def test_render_block_marks_gaps_like_ctx_pack():
    sf = SourceFile("a.py", [f"l{i}" for i in range(1, 13)])
    assert render_block(sf, [(1, 2), (10, 10)]).splitlines() == [
        "```text",
        "==> a.py <== 12 lines",
        "1\tl1",
        "2\tl2",
        "⋮",
        "10\tl10",
        "```",
    ]


def test_clean_message_drops_issue_trailers():
    msg = "Fix the frobnicator (#12)\n\nIt broke on empty input.\n\nFixes #34\nCloses: #5\n"
    assert clean_message(msg) == "Fix the frobnicator\n\nIt broke on empty input."


def _git(cwd, *args):
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
        "HOME": str(cwd),
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def test_selection_rule_and_tree(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    _git(work, "init", "-q")
    (work / "src").mkdir()
    (work / "src" / "core.py").write_text("def f(x):\n    return x + 1\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "start")
    (work / "src" / "core.py").write_text("def f(x):\n    return x - 1\n")
    (work / "tests").mkdir()
    (work / "tests" / "test_core.py").write_text("def test_f():\n    pass\n")
    _git(work, "add", "-A")
    _git(
        work,
        "commit",
        "-q",
        "-m",
        "Fix f returning the wrong value for negative input, an off-by-two bug\n\nFixes #9",
    )
    (work / "src" / "core.py").write_text("def f(x):\n    return x - 2\n")
    _git(work, "commit", "-q", "-am", "short fix")  # too short a message
    mirror = tmp_path / "m.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(work), str(mirror)], check=True)
    fix = _git(work, "rev-parse", "HEAD~1").strip()
    assert select_commits(mirror, min_tree=0) == [fix]
    assert select_commits(mirror) == []  # a tree of a few bytes is too small to be a task
    tree = materialise(mirror, fix + "~1", tmp_path / "t")
    assert (tree / "src" / "core.py").read_text().endswith("x + 1\n")
    patch = _git(work, "diff", f"{fix}~1", fix, "--", "src/core.py")
    check_patch(tree, patch)
    again = materialise(mirror, fix + "~1", tmp_path / "t2")
    assert _git(tree, "rev-parse", "HEAD") == _git(again, "rev-parse", "HEAD")


def _fix_repo(tmp_path, n_files: int):
    """A mirror of a repository of N_FILES files whose second commit is a qualifying fix."""
    work = tmp_path / f"w{n_files}"
    (work / "src").mkdir(parents=True)
    _git(work, "init", "-q")
    for i in range(n_files - 1):
        (work / "src" / f"m{i}.py").write_text(f"def g{i}():\n    return {i}\n")
    (work / "src" / "core.py").write_text("def f(x):\n    return x + 1\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "start")
    (work / "src" / "core.py").write_text("def f(x):\n    return x - 1\n")
    _git(work, "commit", "-q", "-am",
         "Fix f returning the wrong value for negative input, an off-by-two bug")
    mirror = tmp_path / f"m{n_files}.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(work), str(mirror)], check=True)
    return mirror, _git(work, "rev-parse", "HEAD").strip()


def test_large_set_rule_wants_a_tree_of_enough_files(tmp_path):
    from pack_quality.tasks import SETS, heldout_task, tree_stats
    from pack_quality.trees import TreeError

    small, fix_small = _fix_repo(tmp_path, 4)
    big, fix_big = _fix_repo(tmp_path, 12)
    assert tree_stats(big, fix_big + "^")[0] == 12
    assert select_commits(small, min_tree=0, min_files=12) == []  # 4 files: too few
    assert select_commits(big, min_tree=0, min_files=12) == [fix_big]
    assert select_commits(small, min_tree=0) == [fix_small]  # the first set has no floor
    # A pinned commit is checked against its own set's rule when its task is made.
    assert SETS["large"].min_files == 3000 and SETS["heldout"].min_files == 0
    try:
        heldout_task("o/small", small, fix_small, "large")
    except TreeError as exc:
        assert "no longer satisfies" in str(exc)
    else:
        raise AssertionError("a 4-file tree made a large task")


# SWE-bench's twelve repositories (the hidden tasks) and the dev split's six, by name
SWE_NAMES = {"django", "sympy", "scikit-learn", "matplotlib", "pytest", "sphinx", "astropy",
             "xarray", "pylint", "requests", "seaborn", "flask"}
DEV_NAMES = {"sqlfluff", "marshmallow", "pvlib-python", "pydicom", "astroid", "pyvista"}


def _assert_pinned(pairs, repos: tuple, per: int) -> None:
    """PAIRS (repository, sha) hold PER distinct full shas of each of REPOS, and no other."""
    got = [r for r, _s in pairs]
    assert sorted(set(got)) == sorted(repos)
    assert all(got.count(r) == per for r in repos)
    assert all(len(s) == 40 for _, s in pairs) and len(set(pairs)) == len(pairs)


def test_large_set_is_pinned_and_apart_from_the_other_sets():
    from pack_quality.tasks import HELDOUT_REPOS, LARGE_REPOS, SETS, read_pinned

    _assert_pinned(read_pinned(SETS["large"].pinned), LARGE_REPOS, 10)
    names = {r.split("/")[1] for r in LARGE_REPOS}
    assert not names & (SWE_NAMES | DEV_NAMES | {r.split("/")[1] for r in HELDOUT_REPOS})


def test_second_large_set_is_pinned_and_apart_from_every_other_set():
    from pack_quality.tasks import HELDOUT_REPOS, LARGE2_REPOS, LARGE_REPOS, SETS, read_pinned
    from pack_quality.tune import PINNED_PROSE, TUNE_REPOS, pinned

    spec = SETS["large2"]
    assert spec.min_files == 3000 and spec.pinned.name == "heldout_large2.txt"
    _assert_pinned(read_pinned(spec.pinned), LARGE2_REPOS, 10)
    others = {r.split("/")[1] for r in (*HELDOUT_REPOS, *LARGE_REPOS, *TUNE_REPOS)}
    others |= {r.split("/")[1] for r, _s in pinned(PINNED_PROSE)}
    names = {r.split("/")[1] for r in LARGE2_REPOS}
    assert not names & (SWE_NAMES | DEV_NAMES | others)


def test_tuning_lists_are_pinned_six_a_repository_and_share_no_commit():
    from pack_quality.tune import (
        PINNED,
        PINNED_PROSE,
        PINNED_PROSE2,
        PINNED_SECOND,
        PINNED_THIRD,
        TUNE_PER_REPO,
        TUNE_REPOS,
        pinned,
    )

    lists = {path.name: pinned(path) for path in
             (PINNED, PINNED_SECOND, PINNED_THIRD, PINNED_PROSE, PINNED_PROSE2)}
    for name in ("tune.txt", "tune2.txt", "tune3.txt"):
        _assert_pinned(lists[name], TUNE_REPOS, TUNE_PER_REPO)
    shas = [s for pairs in lists.values() for _r, s in pairs]
    assert all(len(s) == 40 for s in shas)
    assert len(set(shas)) == len(shas)  # a commit is in one list at most


def test_a_pinned_tuning_list_is_not_chosen_again(capsys):
    from pack_quality import tune

    before = {p: p.read_bytes() for p in (tune.PINNED_SECOND, tune.PINNED_THIRD)}
    for flag in ("--select-second", "--select-third"):
        assert tune.main([flag]) == 2
        err = capsys.readouterr().err
        assert err.startswith("tune.py: error: ") and "pinned already (54 commits)" in err
        assert err.count("\n") == 1
    assert {p: p.read_bytes() for p in before} == before


def test_a_pinned_prose_list_is_not_chosen_again(capsys):
    from pack_quality import tune_prose

    before = tune_prose.PINNED_SECOND.read_bytes()
    assert tune_prose.main(["--second"]) == 2
    err = capsys.readouterr().err
    assert err == ("tune_prose.py: error: tune_prose2.txt is pinned already (27 commits); "
                   "remove it to pin it again\n")
    assert tune_prose.PINNED_SECOND.read_bytes() == before


def test_budgets_take_a_model_name_and_tasks_take_large():
    import bench_pack_quality as bpq

    args = bpq.parse_args(["--tasks", "large", "--budgets", "8000,gpt-4o",
                           "--pack-bin", str(REPO / ".venv" / "bin" / "ctx-pack")])
    assert args.tasks == "large" and args.budgets == [8000, "gpt-4o"]
    assert bpq.parse_args(["--tasks", "large2"]).tasks == "large2"
    bpq.resolve_budgets(args)
    tokens, encoding = args.sizes["gpt-4o"]
    assert encoding == "o200k_base" and tokens > 32000
    assert args.sizes[8000] == (8000, "cl100k_base")


def test_baseline_fills_a_model_budget_in_its_encoding(tmp_path):
    from pack_quality.methods import run_baseline

    def count(text, encoding):
        from ctxtools.tokens import get_ruler

        return get_ruler(encoding=encoding, exact=True).ruler.count(text)

    for i in range(20):
        body = "".join(f"def fn_{i}_{j}(retry_backoff):\n    return {j}\n\n" for j in range(20))
        (tmp_path / f"m{i:02}.py").write_text(body)
    got = run_baseline("bm25-chunk", "fn_7_3 retry backoff", tmp_path,
                       {700: (700, "cl100k_base"), "m": (700, "o200k_base")}, count)
    assert count(got["m"]["text"], "o200k_base") <= 700
    assert count(got[700]["text"], "cl100k_base") <= 700
    assert got["m"]["text"] != got[700]["text"]  # o200k fits more of the same code


def test_table_gives_median_tokens_and_seconds_per_budget():
    from pack_quality.report import table

    def row(task, budget, tokens, seconds, **extra):
        return {"task": task, "method": "pack", "budget": budget, "line_recall": 0.5,
                "complete": False, "file_recall": 1.0, "tokens": tokens,
                "seconds": seconds, **extra}

    rows = [row("a", 8000, 7000, 1.0), row("b", 8000, 5000, 3.0), row("c", 8000, 6000, 2.0),
            *(row(t, "gpt-4o", n, 4.0, budget_tokens=111752, encoding="o200k_base")
              for t, n in (("a", 30000), ("b", 40000), ("c", 50000)))]
    text = table(rows, ["pack"], [8000, "gpt-4o"], "large held-out")
    assert "| pack | 6,000 / 2.00 s | 40,000 / 4.00 s |" in text
    assert "| pack | 0.50 / 0% / 1.00 | 0.50 / 0% / 1.00 | 0 |" in text
    assert "gpt-4o = 111,752 tokens (o200k_base)" in text


def test_a_tree_seen_with_its_history(tmp_path, monkeypatch):
    """trees.with_history: git sees a materialised tree as a checkout of its base with the
    mirror's commits before it (the tree's own one-commit .git untouched), and the
    engine's history signal reads them."""
    from pack_quality import trees

    from ctxtools.retrieval.history import read_signal

    mirror, fix = _fix_repo(tmp_path, 3)
    tree = materialise(mirror, fix, tmp_path / "t")  # (its second commit: one with a parent)
    monkeypatch.setattr(trees, "HISTORY_ROOT", tmp_path / "hist")
    env = trees.with_history(mirror, fix, tree, "task")
    assert env == {"GIT_DIR": str(tmp_path / "hist" / "task.git"), "GIT_WORK_TREE": str(tree)}
    run = {**os.environ, **env}
    log = subprocess.run(["git", "log", "--format=%s"], cwd=tree, env=run, text=True,
                         capture_output=True, check=True).stdout.splitlines()
    assert log == ["Fix f returning the wrong value for negative input, an off-by-two bug",
                   "start"]
    listed = subprocess.run(["git", "ls-files"], cwd=tree, env=run, text=True,
                            capture_output=True, check=True).stdout.split()
    assert listed == sorted(["src/core.py", "src/m0.py", "src/m1.py"])
    assert _git(tree, "log", "--format=%s").strip().startswith("tree of ")  # its own .git
    assert trees.with_history(mirror, fix, tree, "task") == env  # made once
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("CTX_HISTORY", "1")
    got = read_signal(str(tree), ["negative", "input"])
    assert ("src/core.py", "f") in got.touched


def test_the_bm25_baseline_does_not_depend_on_the_string_hash(tmp_path):
    # A unit's BM25 summed its terms in set order: under other PYTHONHASHSEEDs the same
    # score differed in its last bit, ties broke the other way, and the baseline filled
    # its budget with other chunks (test_baseline_fills_a_model_budget_in_its_encoding
    # failed under 2 seeds of 12).
    for i in range(20):
        body = "".join(f"def fn_{i}_{j}(retry_backoff):\n    return {j}\n\n" for j in range(20))
        (tmp_path / f"m{i:02}.py").write_text(body)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from pathlib import Path\n"
        "from pack_quality.corpus import Corpus, terms\n"
        "from pack_quality.retrieve import bm25_rank\n"
        "units = Corpus(Path(sys.argv[2])).chunks()\n"
        "print([(repr(s), u.path, u.ranges) for s, u in bm25_rank(units, "
        "terms('fn_7_3 retry backoff'))][:60])\n")
    got = {subprocess.run([sys.executable, "-c", code, str(REPO / "bench"), str(tmp_path)],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
           for seed in range(1, 13)}
    assert len(got) == 1, got


def test_the_explorer_benchmark_names_expected_paths_its_tree_lacks(tmp_path):
    """A tree holding the docs alone (libuv's, once) must stop the explorer benchmark, not
    score its questions as misses."""
    from bench_semantic_explorer import missing_expected

    whole = tmp_path / "whole"
    (whole / "src" / "unix").mkdir(parents=True)
    (whole / "src" / "timer.c").write_text("int uv_timer_start(void);\n")
    docs = tmp_path / "docs"
    (docs / "docs").mkdir(parents=True)
    questions = [
        {"repo": "a", "expected": ["src/unix/", "src/timer.c"]},
        {"repo": "b", "expected": ["src/unix/", "src/timer.c"]},
        {"repo": "c", "expected": ["src/x.c"]},  # a repository not run (--only)
    ]
    got = missing_expected(questions, {"a": whole, "b": docs})
    assert got == ["b: src/timer.c", "b: src/unix/"]


def test_co_changers_count_shared_commits_before_the_base(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    _git(work, "init", "-q")

    def commit(msg, **files):
        for name, text in files.items():
            (work / name.replace("__", ".")).write_text(text)
        _git(work, "add", "-A")
        _git(work, "commit", "-q", "-m", msg)

    commit("one", a__c="1", version__c="1")
    commit("two", a__c="2", version__c="2", b__c="1")
    commit("three", a__c="3", b__c="2")
    commit("four", d__c="1")  # without a.c: not counted
    big = {f"n{i}__c": "x" for i in range(5)}
    commit("wide", a__c="4", **big)  # more files than max_files: says nothing of pairs
    commit("after the base", a__c="5", d__c="2")
    mirror = tmp_path / "m.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(work), str(mirror)], check=True)
    assert co_changers(mirror, "HEAD~1", "a.c", max_files=4) == [("b.c", 2), ("version.c", 2)]
    assert co_changers(mirror, "HEAD", "a.c", max_files=4)[-1] == ("d.c", 1)
    assert co_changers(mirror, "HEAD~1", "a.c", n=2, max_files=4) == []  # the wide one and "four"
    assert ("n0.c", 1) in co_changers(mirror, "HEAD~1", "a.c", max_files=40)


def test_fusion_fit_learns_the_feature_that_marks_gold():
    import numpy as np
    import pytest
    from pack_quality import fusion

    rng = np.random.default_rng(7)
    n_feat = len(fusion.FEATURES)

    def task():
        x = rng.normal(size=(40, n_feat))
        x[:, fusion.LINES] = np.log(10.0)
        y = np.zeros(40)
        g = int(rng.integers(40))
        y[g] = 1.0
        x[g, 1] = 3.0  # the words' part marks the gold chunk ...
        x[g, 0] = -1.0  # ... which the current score ranks low
        return x, y

    train = [task() for _ in range(30)]
    test = [task() for _ in range(10)]
    model = fusion.fit(train, lam=0.01, iters=300)
    assert model[0][1] > 0.5  # the words' part weighs most
    now = [fusion.lines_to_gold(x[:, 0], x, y) for x, y in test]
    new = [fusion.lines_to_gold(fusion.predict(model, x), x, y) for x, y in test]
    assert sum(new) < 0.3 * sum(now)
    # a gold chunk is found at the lines before it and its own (3 a chunk for its header)
    x, y = test[0]
    order = np.argsort(-fusion.predict(model, x), kind="stable")
    k = list(order).index(int(np.nonzero(y)[0][0]))
    assert fusion.lines_to_gold(fusion.predict(model, x), x, y) == pytest.approx((k + 1) * 13)


def test_fusion_reorder_keeps_the_scores_and_gives_them_in_the_new_order():
    import numpy as np
    from pack_quality import fusion

    class D:
        def __init__(self, scores):
            self.scores = list(scores)

    class Ch:
        docs = [D([5.0, 1.0]), D([3.0])]

    ch = Ch()
    keys = [(0, 0), (0, 1), (1, 0)]
    fusion.reorder(ch, keys, np.array([0.0, 2.0, 1.0]))  # the last chunk first, then the file's
    assert ch.docs[0].scores == [1.0, 5.0] and ch.docs[1].scores == [3.0]
