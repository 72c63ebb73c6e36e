"""The scorer and the baselines of bench/bench_pack_quality.py (bench/pack_quality/).

A wrong scorer would make every figure of issue 17 wrong, so the gold lines, the parse of a
pack's text, the metrics, the budget of the baselines and the held-out selection rule are
checked here on small real inputs.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from helpers import REPO

sys.path.insert(0, str(REPO / "bench"))

from pack_quality.corpus import SourceFile, python_chunks, split_lines  # noqa: E402
from pack_quality.gold import is_source, parse_patch, score, shown_lines  # noqa: E402
from pack_quality.retrieve import bm25_rank, fill, render_block  # noqa: E402
from pack_quality.tasks import clean_message, select_commits  # noqa: E402
from pack_quality.trees import check_patch, materialise  # noqa: E402

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
    body = "\n".join(f"{n:>5}│ line {n}" for n in numbers)
    return f"# Files\n\n```text\n==> {path} <== 99 lines\n{body}\n```\n\n# Task\n\n  11│ x\n"


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
        "   1│ l1",
        "   2│ l2",
        "   ⋮",
        "  10│ l10",
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
