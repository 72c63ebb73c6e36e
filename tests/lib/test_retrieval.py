"""ctxtools.retrieval: the query, the chunks, the counts, the noise rules, the ranking and
the plan -- on real source text, each piece able to fail on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxtools.analyzer import parse_query
from ctxtools.retrieval.chunks import chunk_file, import_lines
from ctxtools.retrieval.noise import load_filter
from ctxtools.retrieval.plan import FLOOR_CAP, FLOOR_REF, Costs, plan
from ctxtools.retrieval.rank import ROLE_PRIOR, ROLE_PRIOR_ASKED, Source, rank_sources
from ctxtools.retrieval.terms import Stats, Terms, bm25
from ctxtools.source.scan import scan_source

PY = '''"""Orders and their totals."""

import math
from decimal import Decimal


TAX = Decimal("0.2")


@dataclass
class Order:
    """One order."""

    lines: list

    def total(self) -> Decimal:
        return sum(line.price for line in self.lines)

    def with_tax(self) -> Decimal:
        # the tax is added last
        return self.total() * (1 + TAX)


def round_half_up(value):
    return math.floor(value + 0.5)
'''


def _defs(rel: str, text: str) -> tuple:
    r = scan_source(rel, text)
    return tuple(r.definitions)


# --- the query -------------------------------------------------------------------------------


def test_code_shaped_terms_weigh_more_than_plain_words():
    q = parse_query("The order total is wrong when `with_tax` is called on an OrderLine")
    assert q.terms["with_tax"] > q.terms["order"]
    assert q.terms["orderline"] > q.terms["total"]
    assert "with_tax" in q.code and "orderline" in q.names
    assert "the" not in q.terms and "is" not in q.terms


def test_compound_parts_count_but_less_than_the_whole_name():
    q = parse_query("fix bulk_create")
    assert q.terms["bulk_create"] > q.terms["bulk"] > 0
    assert q.terms["create"] > 0


def test_python_traceback_gives_frames_paths_and_the_message():
    task = (
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/site-packages/shop/orders.py", line 22, in with_tax\n'
        "    return self.total() * (1 + TAX)\n"
        "TypeError: unsupported operand type(s) for *: 'float' and 'Decimal'\n"
    )
    q = parse_query(task)
    (fr,) = [f for f in q.frames if f.path and f.path.endswith("orders.py")]
    assert fr.line == 22 and fr.function == "with_tax"
    assert "with_tax" in q.names
    assert any("unsupported operand type" in m for m in q.messages)


def test_js_go_and_java_frames():
    q = parse_query(
        "at parseCart (src/cart.ts:41:13)\nmain.go:17 panic\nat com.shop.Cart.total(Cart.java:88)\n"
    )
    got = {(f.path, f.line, f.function) for f in q.frames}
    assert ("src/cart.ts", 41, "parseCart") in got
    assert ("Cart.java", 88, "total") in got
    assert any(p == "main.go" and n == 17 for p, n, _f in got)


def test_paths_and_dotted_modules_in_a_task():
    q = parse_query("see django/db/models/query.py and shop.orders.Order")
    assert "django/db/models/query.py" in q.paths
    assert "shop/orders/Order" in q.paths


def test_warnings_and_pytest_lines_are_frames_and_the_reporters_dirs_are_no_terms():
    task = (
        "/home/bje/src/nemo/venv/lib/python3.10/site-packages/astroid/raw_building.py:470:"
        " FutureWarning: In the future `np.long` will be defined\n"
        "C:\\Users\\ann\\proj\\src\\project\\loader.py:12: in load_file\n"
    )
    q = parse_query(task)
    got = {(f.path, f.line) for f in q.frames}
    assert any(p.endswith("site-packages/astroid/raw_building.py") and n == 470 for p, n in got)
    assert any(p.endswith("src/project/loader.py") and n == 12 for p, n in got)
    assert "raw_building" in q.terms and "astroid" in q.terms
    for where in ("home", "bje", "nemo", "venv", "site", "packages", "users", "ann"):
        assert where not in q.terms, where


def test_a_pasted_log_of_thousands_of_frames_keeps_where_it_starts_and_ends():
    from ctxtools.analyzer.query import MAX_POINTERS

    log = "".join(f"/srv/app/pkg/mod{k}.py:{k + 1}: FutureWarning: old\n" for k in range(5000))
    q = parse_query(log)
    assert len(q.frames) == MAX_POINTERS and len(q.paths) <= MAX_POINTERS
    lines = {f.line for f in q.frames}
    assert 1 in lines and 5000 in lines and 2500 not in lines


def test_a_tree_drawing_gives_paths_without_its_dashes():
    q = parse_query("root_dir/\n|--src/\n|------file.py\n|----__init__.py\n")
    assert "file.py" in q.paths and "__init__.py" in q.paths
    assert not any(p.startswith("-") for p in q.paths)


def test_a_versioned_name_also_stands_for_the_name_without_its_digits():
    q = parse_query("Make PersonName3 iterable")
    assert "personname3" in q.names and "personname" in q.names
    assert 0 < q.terms["personname"] < q.terms["personname3"]
    assert "int" not in parse_query("an int64 overflows").terms  # too short a base


def test_a_task_of_plain_stop_words_is_empty():
    assert parse_query("please fix it, it does not work").empty


# --- chunks ----------------------------------------------------------------------------------


def test_chunks_cover_every_line_once_in_order_with_methods_under_their_class():
    lines = PY.split("\n")[:-1]
    chunks = chunk_file(lines, _defs("orders.py", PY))
    covered = [n for c in chunks for n in range(c.start, c.end + 1)]
    assert covered == list(range(1, len(lines) + 1))
    by_name = {c.name: c for c in chunks if c.name}
    cls = by_name["Order"]
    assert cls.kind == "class" and lines[cls.start - 1] == "@dataclass"  # decorator joins
    meth = by_name["with_tax"]
    assert meth.kind == "def" and chunks[meth.parent] is cls
    assert lines[meth.start - 1].strip() == "def with_tax(self) -> Decimal:"
    # the comment inside the body stays with its function; the one above a def joins it
    assert by_name["round_half_up"].end == len(lines)


def test_a_long_function_is_ranked_in_parts_that_keep_its_first_line():
    body = ["def big():"] + [f"    x{i} = {i}" for i in range(400)]
    text = "\n".join(body) + "\n"
    chunks = chunk_file(body, _defs("big.py", text))
    parts = [c for c in chunks if c.kind == "part"]
    assert len(parts) >= 6
    assert all(p.head in (0, 1) for p in parts) and parts[1].head == 1


def test_a_file_without_definitions_is_cut_into_windows_at_blank_lines():
    lines = [f"para {i // 10} line {i}" if i % 10 else "" for i in range(200)]
    chunks = chunk_file(lines)
    assert all(c.kind == "window" and len(c) <= 40 for c in chunks)
    assert sum(len(c) for c in chunks) == 200


def test_import_lines_follow_a_parenthesised_import():
    lines = ["import os", "from a import (", "    b,", "    c,", ")", "", "x = 1"]
    assert import_lines(lines) == (1, 2, 3, 4, 5)


def test_import_lines_take_guarded_imports_but_not_those_in_functions():
    lines = [
        "import os",  # 1
        "",
        "if TYPE_CHECKING:",  # 3
        "    from a.nodes import (",
        "        Match,",
        "    )",
        "try:",  # 7
        "    import ujson as json",
        "except ImportError:",  # 9
        "    import json",
        "",
        "def f():",
        "    import sys",
        "class A:",
        "    import re",
    ]
    assert import_lines(lines) == (1, 3, 4, 5, 6, 7, 8, 9, 10)


UV_INTERNAL = (Path(__file__).resolve().parents[1] / "data" / "scan" / "real" / "internal.h")


def test_c_includes_come_with_the_conditionals_that_hold_them():
    # libuv's src/unix/internal.h (tests/data/scan/real, MIT): a reviewer shown
    # "#include <sys/event.h>" without its "#if defined(__APPLE__) || ..." reads an
    # include every platform makes
    lines = UV_INTERNAL.read_text().split("\n")
    got = import_lines(lines, preprocessor=True)
    text = {n: lines[n - 1] for n in got}
    assert {38, 39, 40, 41} <= set(got)  # the #if, its continued line, the include, #endif
    assert {49, 50, 51, 54, 55} <= set(got)  # nested: both opening lines, both #endifs
    assert {70, 73, 74, 75, 76} <= set(got)  # #if / include / #else / include / #endif
    assert 43 not in got and 57 not in got  # a #define; an #if that holds no include
    assert list(got) == sorted(got)
    # every conditional shown is closed before the next top-level include (balanced)
    depth = 0
    for n in got:
        t = text[n].lstrip("# \t")
        if t.startswith("if") and not text[n].startswith("    "):
            depth += 1
        elif t.startswith("endif"):
            depth -= 1
            assert depth >= 0, n
    assert depth == 1  # the header guard's #ifndef, whose #endif closes the file
    # without the preprocessor reading (other languages), only the includes
    assert import_lines(lines) == tuple(
        n for n in got if lines[n - 1].startswith("#include"))[: len(import_lines(lines))]


@pytest.mark.parametrize(
    ("body", "want"),
    [
        # an include in the #else branch comes with the #elif that led there
        (["#if A", "#include <a.h>", "#elif B", "#define X", "#else", "#include <c.h>",
          "#endif"], (1, 2, 3, 5, 6, 7)),
        (["#if A", "#define Y", "#else", "#include <c.h>", "#endif"], (1, 3, 4, 5)),
        # an #else whose branch includes nothing is not shown
        (["#if A", "#include <a.h>", "#else", "#define Z", "#endif"], (1, 2, 5)),
        (["#ifdef A", "#define Z", "#endif", "# include <b.h>"], (4,)),
    ],
)
def test_c_include_branches(body, want):
    assert import_lines(body, preprocessor=True) == want


def test_c_includes_under_a_limit_never_end_on_an_opening_conditional():
    lines = UV_INTERNAL.read_text().split("\n")
    for limit in range(1, 41):
        got = import_lines(lines, limit=limit, preprocessor=True)
        assert len(got) <= limit
        if not got:  # the first include needs its header guard's line too: two lines
            assert limit == 1
            continue
        last = lines[got[-1] - 1]
        assert "include" in last or "endif" in last or last.rstrip().endswith(")"), (limit, last)


def test_only_c_family_files_read_hash_lines_as_the_preprocessor():
    from ctxtools.retrieval.plan import doc_imports
    from ctxtools.retrieval.rank import Doc

    py = Doc("tool.py", "source", ["# if cold, warm it", "import os", "# endif"], [], [], (),
             None)
    assert doc_imports(py) == (2,)  # a Python comment is no conditional
    body = ["#ifdef X", "#include <a.h>", "#endif"]
    for label, want in (("net.c", (1, 2, 3)), ("net.hpp", (1, 2, 3)), ("net.py", (2,))):
        assert doc_imports(Doc(label, "source", body, [], [], (), None)) == want, label


# --- counting --------------------------------------------------------------------------------


def test_terms_count_whole_names_and_their_parts():
    terms = Terms(["bulk_create", "bulk", "create", "queryset"])
    tf, n = terms.count(b"QuerySet.bulk_create(objs); bulkCreate(x) # create")
    names = {terms.terms[i]: c for i, c in tf.items()}
    assert names == {"queryset": 1, "bulk_create": 1, "bulk": 2, "create": 3}
    assert n == 6


def test_bm25_prefers_the_rare_term():
    stats = Stats()
    for _ in range(50):
        stats.add({0: 1}, 10)
    stats.add({1: 1}, 10)
    w = [stats.idf(0), stats.idf(1)]
    assert bm25({1: 1}, 10, w, stats) > bm25({0: 1}, 10, w, stats)


# --- noise -----------------------------------------------------------------------------------


def test_ctxignore_and_globs(tmp_path):
    (tmp_path / ".ctxignore").write_text("build/\n*.gen.py\n# a comment\n")
    filt = load_filter(str(tmp_path), include=["*.po"], exclude=["vendor"])
    assert filt.excluded("build/x.py") and filt.excluded("a/b.gen.py")
    assert filt.excluded("vendor/lib/x.py")
    assert filt.included("locale/de.po") and not filt.included("src/a.py")
    assert not filt.excluded("src/a.py")
    assert filt.unused() == []


# --- ranking and planning --------------------------------------------------------------------


def _sources(files: dict[str, str]) -> list[Source]:
    out = []
    for rel, text in sorted(files.items()):
        defs = _defs(rel, text) if rel.endswith(".py") else None
        out.append(Source(rel, text.encode(), defs))
    return out


def _corpus() -> dict[str, str]:
    files = {"shop/orders.py": PY}
    for i in range(30):  # common words everywhere, the rare name in one file
        files[f"shop/m{i}.py"] = (
            f'"""Module {i}: the order of things."""\n\n\ndef helper_{i}(order):\n'
            f"    return order.value + {i}\n"
        )
    files["tests/test_orders.py"] = "def test_with_tax():\n    assert Order([]).with_tax() == 0\n"
    return files


def test_a_rare_identifier_beats_a_common_word():
    r = rank_sources(_sources(_corpus()), parse_query("the order is wrong in with_tax"))
    assert r.docs[0].label == "shop/orders.py"
    best = max(range(len(r.docs[0].chunks)), key=lambda k: r.docs[0].scores[k])
    assert r.docs[0].chunks[best].name == "with_tax"


def test_source_ranks_above_its_test_for_a_bug_report():
    r = rank_sources(_sources(_corpus()), parse_query("with_tax returns a float"))
    labels = [d.label for d in r.docs]
    assert labels.index("shop/orders.py") < labels.index("tests/test_orders.py")


def test_a_role_word_asks_for_that_role_only_when_written_as_prose():
    """'add tests' asks to see tests; naming the failing test_with_tax does not."""
    named = parse_query("test_with_tax fails: with_tax returns a float")
    asked = parse_query("with_tax returns a float, add tests for it")
    assert "test" not in named.prose and "tests" in asked.prose
    prior = {d.label: d.prior for d in rank_sources(_sources(_corpus()), named).docs}
    assert prior["tests/test_orders.py"] == ROLE_PRIOR["test"]
    prior = {d.label: d.prior for d in rank_sources(_sources(_corpus()), asked).docs}
    assert prior["tests/test_orders.py"] == ROLE_PRIOR_ASKED["test"]


@pytest.mark.parametrize(
    ("subject", "scopes"),
    [
        ("commands: Move time notification after build errors", ("commands",)),
        ("tpl/transform: Fix it when template.HTML is passed", ("tpl/transform",)),
        ("fix(toml): keep the table order", ("toml",)),
        ("BUG: sparse.linalg: fix the norm of an empty matrix", ("sparse/linalg",)),
        ("tsdb, promql: guard the division", ("tsdb", "promql")),
        ("lib/url.c: free the host name", ("lib/url.c",)),
        ("[MNG-8487] Completely isolate the unit tests", ()),
        ("KAFKA-123: fix the offset commit", ()),
        ("fix: add location links", ()),
        ("Fix the parser: it drops a token", ()),
        ("see https://example.org: nothing", ()),
    ],
)
def test_a_commit_style_subject_gives_its_scope(subject, scopes):
    assert parse_query(subject + "\n\nbody: not a scope").scopes == scopes


def _compaction(body: str) -> str:
    return f"func compact(blocks []Block) error {{\n\t// {body}\n\treturn nil\n}}\n"


def test_a_file_inside_the_subjects_scope_ranks_above_its_twin_outside():
    """The word tsdb is in both files (one's path, the other's text), and the other's text
    holds one more of the task's words, so that it ranks first by its words: the scope
    decides."""
    files = {
        "storage/compact.go": _compaction(
            "tsdb: division by zero when a series is stale, in compaction"
        ),
        "tsdb/compact.go": _compaction("division by zero when a series is stale"),
    }
    for i in range(12):
        files[f"web/h{i}.go"] = _compaction(f"handler {i}")
    said = "fix division by zero in stale series compaction"
    scoped = [d.label for d in rank_sources(_sources(files), parse_query(f"tsdb: {said}")).docs]
    plain = [d.label for d in rank_sources(_sources(files), parse_query(f"{said} (tsdb)")).docs]
    assert scoped.index("tsdb/compact.go") < scoped.index("storage/compact.go")
    assert plain.index("storage/compact.go") < plain.index("tsdb/compact.go")


def test_evidence_spread_over_a_whole_file_counts_beyond_its_best_chunks():
    """Two files with the same three best chunks: the one whose other chunks also hold the
    task's words ranks first (the whole file's BM25, FIRST_MIX)."""
    best = "".join(
        f"def rotate_key_{i}(vault):\n    return vault.rotate(lease)\n\n\n" for i in range(3)
    )
    other = "".join(f"def other_{i}(x):\n    return x + {i}\n\n\n" for i in range(6))
    spread = "".join(f"def renew_{i}(vault):\n    return vault.lease\n\n\n" for i in range(6))
    files = {"a_top.py": best + other, "b_spread.py": best + spread}
    for i in range(12):
        files[f"m{i}.py"] = f"def f{i}(x):\n    return x\n"
    r = rank_sources(_sources(files), parse_query("rotate_key fails when the vault lease ends"))
    labels = [d.label for d in r.docs]
    assert labels.index("b_spread.py") < labels.index("a_top.py")


def test_a_stack_frame_ranks_its_function_first():
    task = '  File "/site-packages/shop/orders.py", line 24, in round_half_up\nValueError: x'
    r = rank_sources(_sources(_corpus()), parse_query(task))
    top = r.docs[0]
    best = max(range(len(top.chunks)), key=lambda k: top.scores[k])
    assert top.label == "shop/orders.py" and top.chunks[best].name == "round_half_up"


def test_nothing_reached_falls_back_to_the_given_ranks():
    src = _sources({"a.py": "def f():\n    pass\n", "b.py": "def g():\n    pass\n"})
    r = rank_sources(src, parse_query("zebra unicorn"), fallback={"b.py": 0.9, "a.py": 0.1})
    assert [d.label for d in r.docs] == ["b.py", "a.py"]


def _count(text: str) -> int:
    return len(text) // 4 + 1


def test_plan_stays_within_its_budget_and_shows_the_best_definition_whole():
    r = rank_sources(_sources(_corpus()), parse_query("fix with_tax"))
    for budget in (200, 600, 2000):
        p = plan(r.docs, budget, Costs(_count), top_terms=["with_tax"])
        assert p.used <= budget
    p = plan(r.docs, 600, Costs(_count), top_terms=["with_tax"])
    first = p.shown[0]
    assert first.doc.label == "shop/orders.py"
    doc = first.doc
    (meth,) = [c for c in doc.chunks if c.name == "with_tax"]
    assert set(range(meth.start, meth.end + 1)) <= first.lines
    cls = doc.chunks[meth.parent]
    assert cls.line in first.lines  # the class line goes with its method


def test_plan_shows_the_blank_lines_between_and_after_shown_definitions():
    body = "".join(f"    y = x * {k}\n" for k in range(8))
    text = "".join(f"def f{i}(x):\n{body}    return y + {i}\n\n\n" for i in range(40))
    src = _sources({"m.py": text, "other.py": "def g():\n    return 0\n"})
    r = rank_sources(src, parse_query("fix f3 and f4 and f9"))
    p = plan(r.docs, 300, Costs(_count), top_terms=["f3", "f4", "f9"])
    sh = next(s for s in p.shown if s.doc.label == "m.py")
    lines = sh.doc.lines
    assert sh.how != "whole" and p.used <= 300
    f3, f4 = (3 * 12 + 1, 4 * 12 + 1)  # the lines of their def statements
    assert set(range(f3, f4 + 10)) <= sh.lines  # f3, its blank lines and f4: one run
    spans = sh.spans()
    for (_a, b), (c, _d) in zip(spans, spans[1:], strict=False):
        assert any(lines[n - 1].strip() for n in range(b + 1, c))  # no gap of blanks only
        assert lines[b].strip() or not lines[b - 1].strip()  # a blank line ends a definition


def test_plan_lists_named_files_by_path_when_nothing_more_fits():
    src = _sources(_corpus())
    for s in src:
        s.named = s.label == "shop/m3.py"
    r = rank_sources(src, parse_query("with_tax"))
    p = plan(r.docs, 40, Costs(_count), top_terms=["with_tax"])
    shown = {s.doc.label for s in p.shown} | set(p.paths)
    assert "shop/m3.py" in shown and not p.unlisted_named


def test_ranking_is_deterministic_whatever_the_input_order():
    files = _corpus()
    a = rank_sources(_sources(files), parse_query("order with_tax total"))
    rev = list(reversed(_sources(files)))
    b = rank_sources(rev, parse_query("order with_tax total"))
    assert [(d.label, d.score) for d in a.docs] == [(d.label, d.score) for d in b.docs]


def test_the_plan_stops_at_the_relevance_floor_and_fill_takes_the_rest():
    files = _corpus()
    r = rank_sources(_sources(files), parse_query("with_tax raises on an order without lines"))
    budget = 20_000  # far more than the whole corpus
    # (the floor's reference here is half the best chunk's: 0.6 of it cuts the weak matches)
    floored = plan(r.docs, budget, Costs(_count), top_terms=["with_tax"], floor=0.6)
    filled = plan(r.docs, budget, Costs(_count), top_terms=["with_tax"], fill=True, floor=0.6)
    assert floored.stopped == "floor" and floored.under > 0
    assert filled.stopped == "" and filled.under == 0
    shown_floor = {s.doc.label for s in floored.shown if s.how != "signatures"}
    shown_fill = {s.doc.label for s in filled.shown if s.how != "signatures"}
    assert "shop/orders.py" in shown_floor
    assert shown_floor < shown_fill  # the weak matches only when asked to fill
    assert floored.used < filled.used <= budget
    rel = sorted((c.scores[k] for c in r.docs for k in range(len(c.chunks))), reverse=True)
    ref = max(rel[min(FLOOR_REF, len(rel)) - 1], FLOOR_CAP * rel[0])  # (the floor's)
    for sh in floored.shown:  # every chunk shown whole or windowed is above the floor
        assert all(sh.doc.scores[k] >= 0.6 * ref for k in sh.chunks)


LINT = {
    "lint/config_file.py": '"""Reading a tsconfig."""\n\n\ndef get_parsed_config_file(path, '
    'cwd=None):\n    """The parsed tsconfig at PATH, relative paths resolved from CWD."""\n'
    "    return parse(read(path), cwd or here())\n",
    "lint/project_service.py": '"""The project service."""\n\n\ndef create_project_service('
    'options):\n    """A service for the project."""\n'
    "    return Service(options.project, options.tsconfig_root_dir)\n",
    "lint/parse_settings.py": '"""Parse settings."""\n\n\ndef create_parse_settings(options):'
    '\n    """The settings of a parse."""\n    root_dir = options.tsconfig_root_dir or here()'
    "\n    return Settings(root_dir)\n",
    **{f"lint/rule_{i}.py": f'"""Rule {i}."""\n\n\ndef rule_{i}(node):\n    """Rule {i}: the kind '
       f'of a node, whatever the cwd."""\n    return node.kind == {i}\n' for i in range(30)},
}
FIX = {"lint/config_file.py", "lint/project_service.py", "lint/parse_settings.py"}


def test_one_named_function_does_not_set_the_floor_alone(monkeypatch):
    # A task that writes one function's name lifts that chunk far above the rest; 0.27 of
    # it cut the two files the fix also needed (their tsconfig root dir), which stand at
    # 0.26 and 0.20 of it (typescript-eslint 01efcbf498b4's shape: a 16k pack of 3,596
    # tokens). The floor is measured against the third best chunk (or a share of the
    # best, whichever is higher): those files are shown, what is far below still is not.
    import ctxtools.retrieval.plan as plan_mod

    task = "get_parsed_config_file ignores the tsconfig root dir: pass it as the cwd"
    r = rank_sources(_sources(LINT), parse_query(task))
    p = plan(r.docs, 20_000, Costs(_count), top_terms=["get_parsed_config_file"])
    shown = {s.doc.label for s in p.shown if s.how != "signatures"}
    assert shown == FIX
    assert p.stopped == "floor" and p.under > 0  # (the weakest parts stay out)
    monkeypatch.setattr(plan_mod, "FLOOR_REF", 1)  # the floor against the best alone
    monkeypatch.setattr(plan_mod, "FLOOR_CAP", 0.0)
    old = plan(r.docs, 20_000, Costs(_count), top_terms=["get_parsed_config_file"])
    assert {s.doc.label for s in old.shown if s.how != "signatures"} == {"lint/config_file.py"}


def test_the_plan_spends_on_the_best_chunks_anywhere_not_on_widening_one_file():
    # One file matches the task's words in many small functions, weakly; another holds
    # the one function the task names. The named function is shown before the first
    # file's weak matches, whatever their number.
    weak = "".join(
        f"def order_step_{i}(order):\n    return order.lines[{i}]\n\n\n" for i in range(60)
    )
    files = {
        "shop/steps.py": weak,
        "shop/tax.py": "def apply_rounding(total):\n    return round(total, 2)\n\n\n"
        "def tax_for(order):\n    return apply_rounding(order.total() * 0.2)\n",
    }
    for i in range(20):
        files[f"shop/other_{i}.py"] = f"def other_{i}():\n    return {i}\n"
    r = rank_sources(_sources(files), parse_query("tax_for rounds the order lines wrong"))
    p = plan(r.docs, 120, Costs(_count), top_terms=["tax_for", "order", "lines"])
    tax = next((s for s in p.shown if s.doc.label == "shop/tax.py"), None)
    assert tax is not None and tax.how != "signatures"
    (fn,) = [c for c in tax.doc.chunks if c.name == "tax_for"]
    assert set(range(fn.start, fn.end + 1)) <= tax.lines


def _ranked(sources, task):
    r = rank_sources(sources, parse_query(task))
    return [(d.label, d.score, d.tfs, d.scores) for d in r.docs]


def test_a_file_of_a_scanned_corpus_ranks_as_its_bytes_do():
    """Its chunks' words are counted from the words the corpus says it holds (not cut
    out of each chunk): the same counts, the same ranking; a file redacted since its
    words were counted is counted from its bytes."""
    from ctxtools.retrieval.vocab import Corpus, Vocab

    texts = {
        "shop/orders.py": PY.encode(),
        "shop/tax.py": b"TAX = 1\n\ndef with_tax(total):\n    return total * TAX  # with_tax\n",
        "shop/util.py": b"def round_half_up(value):\n    return value\n",
    }
    task = "with_tax gives the wrong total on an Order"
    plain = [Source(lab, data, _defs(lab, data.decode())) for lab, data in texts.items()]
    vocabs = [Vocab.of(data) for data in texts.values()]
    files = [(lab, (k,), k, v.n, v) for k, (lab, v) in enumerate(zip(texts, vocabs, strict=True))]
    corpus, _own = Corpus.build(files)
    kept = []
    for k, (lab, data) in enumerate(texts.items()):
        src = Source(lab, data, _defs(lab, data.decode()))
        src.vocab, src.vocab_of = Vocab(b"", b"", corpus.ns[k], corpus, k), data
        kept.append(src)
    assert _ranked(kept, task) == _ranked(plain, task)
    # (redacted: a word the file did not hold comes in, one goes)
    kept[1].data = kept[1].data.replace(b"# with_tax", b"# [REDACTED order]")
    plain[1].data = kept[1].data
    # (the whole file's first-pass counts are still its vocabulary's: only its chunks')
    tfs = {lab: t for lab, _s, t, _c in _ranked(kept, task)}
    assert tfs == {lab: t for lab, _s, t, _c in _ranked(plain, task)}
    assert tfs["shop/tax.py"][1][0] == 1  # with_tax: once in the redacted file, not twice
    assert len(tfs["shop/tax.py"][1]) == 4  # and 'order' is counted


# --- two plain words side by side: the name they make ------------------------------------


def test_a_plain_task_reads_two_words_side_by_side_as_the_name_they_make():
    from ctxtools.analyzer import query as qmod

    assert qmod.PHRASE_WEIGHT > 0
    q = parse_query("The path selector ignores the excludes of a relation-id loader")
    assert q.plain
    for joined in ("pathselector", "relationid", "idloader"):
        assert q.terms[joined] == qmod.PHRASE_WEIGHT, joined
    # a stop word or a comma between two words: no phrase
    assert "ignoresexcludes" not in q.terms and "selectorignores" in q.terms
    assert "pathselector" not in parse_query("the path, selector").terms
    assert "pathselector" not in parse_query("the path of the selector").terms
    # a word a sentence's full stop ends is still a plain word
    assert "idloader" in parse_query("Fix the relation id loader. It drops rows").terms


def test_a_task_that_names_code_reads_no_phrases():
    """Where a task writes its names, they are the evidence: the side-by-side words of a
    report full of code (a dev task lost its fix's file to "dicom dataset" read as a
    name) are no names."""
    q = parse_query("The path selector ignores `excludes` in PathMatcher")
    assert not q.plain
    assert "pathselector" not in q.terms and "path" in q.terms
    q = parse_query('path selector fails: "no such pattern"')
    assert q.messages and "pathselector" not in q.terms


def test_phrases_never_push_the_tasks_own_words_out():
    from ctxtools.analyzer.query import MAX_TERMS

    words = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(MAX_TERMS - 2)]
    q = parse_query(" ".join(words))
    assert all(w in q.terms for w in words)
    assert len(q.terms) <= MAX_TERMS


def test_a_name_made_of_the_tasks_two_words_ranks_its_file_first():
    """"path selector" finds ``PathSelector`` (and ``get_path_selector``: two parts side by
    side inside a longer name count too), though other files say "path", "selector" and
    "excludes" apart, and more of the task's words."""
    java = (
        "package org.example.impl;\n\nimport java.nio.file.Path;\n\n"
        "public class PathSelector {\n"
        "    private final String[] patterns;\n\n"
        "    public boolean matches(Path p) {\n        return patterns.length == 0;\n    }\n}\n"
    )
    noisy = (
        "package org.example.cli;\n\n/** Options: the path, the selector. */\n"
        "public class Options{0} {{\n"
        "    String path; String selector;\n"
        "    void excludes(String excludes) {{ }}\n}}\n"
    )
    files = {"impl/PathSelector.java": java,
             "tools/select.py": "def get_path_selector(config):\n    return config\n"}
    for i in range(12):
        files[f"cli/Options{i}.java"] = noisy.format(i)
    for i in range(20):
        files[f"cli/Other{i}.java"] = f"class Other{i} {{ int rows; }}\n"
    task = "Path selector ignores excludes on Windows"
    labels = [d.label for d in rank_sources(_sources(files), parse_query(task)).docs]
    assert set(labels[:2]) == {"impl/PathSelector.java", "tools/select.py"}


def test_two_parts_side_by_side_count_for_a_phrase_term_only():
    """Inside a longer name, two parts side by side count for a term a task's phrase made
    (``Query.phrases``); a word the task wrote whole (``filename``) is not found in every
    ``ProgramDataBaseFileName`` of a build file (a held-out curl task lost its fix's
    file to the Visual Studio templates that way)."""
    from ctxtools.retrieval.vocab import Vocab

    data = (b"def get_file_name(p):\n    return fileName or getSearchResults(p)\n"
            b"FILENAME = file_name_of_x\nfilenames = 1\n<ProgramDataBaseFileName/>\n")  # fmt: skip
    t = Terms(["filename", "searchresults"], pairs={"filename", "searchresults"})
    assert t.ids_of(b"get_file_name") == (0,)
    assert t.ids_of(b"getSearchResults") == (1,)
    assert t.ids_of(b"file_name_of_x") == (0,)
    assert t.ids_of(b"filenames") == ()
    assert t.count(data) == ({0: 5, 1: 1}, 13)
    again = Terms(["filename", "searchresults"], pairs={"filename", "searchresults"})
    assert again.count_vocab(Vocab.of(data)) == t.count(data)
    whole = Terms(["filename", "searchresults"])  # not phrases: whole words only
    assert whole.ids_of(b"get_file_name") == () and whole.ids_of(b"fileName") == (0,)
    assert whole.count(data) == ({0: 2}, 13)  # fileName, FILENAME
    q = parse_query("the path selector drops the file name")
    assert q.phrases == {"pathselector", "selectordrops", "filename"}
    assert not parse_query("the path selector of `get_x`").phrases


# -- files the task names by their names (pointers.task_hits) -------------------------------


def test_a_task_names_files_by_their_compound_words_in_any_spelling():
    from ctxtools.retrieval.pointers import stem_hits, task_hits

    q = parse_query(
        "Fix 0187_auto_20230614_0838 migration dependencies\n\n"
        "* fix misnamed `generateAsserts` -> `generateHelpers`\n"
        "* IfExpInsteadOfOrOperator keeps comments (see https://example.org/a-b-c/d_e_f)"
    )
    assert q.stems == (
        "0187_auto_20230614_0838",
        "generateasserts",
        "generatehelpers",
        "ifexpinsteadoforoperator",
    )  # plain words, and a URL's parts, are no names of files
    labels = [
        "shop/migrations/0187_auto_20230614_0838.py",
        "shop/migrations/0188_auto_20230701_1200.py",
        "packages/helpers/scripts/generate-helpers.js",
        "packages/helpers/src/helpers.ts",
        "crates/linter/src/rules/if_exp_instead_of_or_operator.rs",
        "crates/linter/src/rules/if_exp.rs",
    ]
    assert task_hits(labels, q) == {
        "shop/migrations/0187_auto_20230614_0838.py": 1,
        "packages/helpers/scripts/generate-helpers.js": 1,
        "crates/linter/src/rules/if_exp_instead_of_or_operator.rs": 1,
    }
    # a name four files have names none of them; three still name each
    four = [f"pkg{i}/generate_helpers.py" for i in range(4)]
    assert stem_hits(four, q.stems) == {}
    assert set(stem_hits(four[:3], q.stems)) == set(four[:3])


def test_task_hits_match_paths_as_path_hits_does_over_every_file():
    """task_hits compares only the files whose last part a path could match: the same
    answer as path_hits over all of them, whatever the paths are like."""
    import random

    from ctxtools.retrieval.pointers import path_hits, task_hits

    rng = random.Random(7)
    dirs = ["django", "db", "models", "core", "cache", "src", "lib", "utils", "query"]
    names = ["query.py", "__init__.py", "base.py", "utils.go", "cache.rs", "query", "main.c"]
    labels = sorted(
        {
            "/".join(rng.choice(dirs) for _ in range(rng.randint(0, 3))) + "/" + rng.choice(names)
            for _ in range(400)
        }
    )
    labels = [lab.lstrip("/") for lab in labels]
    for task in [
        "see django/db/models/query.py",
        "in db.models.query, cache.rs and utils.go",
        "fix `core/cache/` and lib/base.py",
        "the django.db package's query",
    ]:
        q = parse_query(task)
        assert q.paths
        assert task_hits(labels, q) == path_hits(labels, q.paths), task


def test_the_floor_is_read_among_the_files_no_ticket_reached(monkeypatch):
    # Qiskit 0e44c5e38066's shape: the functions past commits citing the task's ticket
    # changed rise (their ``tickets`` part), and the floor's reference (the 5th best chunk)
    # rose with them past a chunk of the fix's own files, which the pack then cut. The
    # reference is read among the files no ticket reached: the fix's files are shown
    # beside the linked ones; read among all chunks, one of them is not.
    import ctxtools.retrieval.plan as plan_mod
    import ctxtools.retrieval.rank as rank_mod
    from ctxtools.retrieval.history import Commit, Signal

    monkeypatch.setattr(rank_mod, "REF_BONUS", 6.0)  # (linked as a frame's function is)
    task = "get_parsed_config_file ignores the tsconfig root dir: pass it as the cwd"
    linked = {f"lint/rule_{i}.py" for i in range(5)}
    keys = {(f"lint/rule_{i}.py", f"rule_{i}"): 1.0 for i in range(5)}
    sig = Signal(linked=keys, linked_commits=[Commit("ab" * 20, "Rules (#4321)", 1.0)],
                 linked_by={k: [0] for k in keys})
    r = rank_sources(_sources(LINT), parse_query(task), history=sig)
    assert {d.label for d in r.docs if any(getattr(d, "tickets", ()))} == linked

    def shown():
        p = plan(r.docs, 20_000, Costs(_count), top_terms=["get_parsed_config_file"])
        assert p.stopped == "floor"
        return {s.doc.label for s in p.shown if s.how != "signatures"}

    assert shown() == FIX | linked
    monkeypatch.setattr(plan_mod, "FLOOR_UNLINKED", False)  # the reference among all
    assert linked <= shown() and FIX - shown()
