"""ctx-pack choosing the text a task is about (issue 17), as a user runs it: small real
repositories built in tmp_path, in several languages, with git history."""

from __future__ import annotations

import io
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import copy_sources, git, run_bytes, write

from ctxtools.tokens import get_ruler

ORDERS = '''"""Orders and their totals."""

from decimal import Decimal

TAX = Decimal("0.2")


class Order:
    def __init__(self, lines):
        self.lines = lines

    def total(self):
        return sum(line.price for line in self.lines)

    def with_tax(self):
        if not self.lines:
            raise ValueError("an order without lines has no total")
        return self.total() * (1 + TAX)


def refund(order, amount):
    return order.total() - amount
'''

CART_TS = """export interface Item { sku: string; price: number }

export function cartTotal(items: Item[]): number {
  return items.reduce((sum, item) => sum + item.price, 0);
}

export function applyCoupon(total: number, coupon: string): number {
  if (coupon === "HALF") {
    return total / 2;
  }
  return total;
}
"""

STOCK_GO = """package stock

import "errors"

var ErrNoStock = errors.New("no stock left for this sku")

func Reserve(levels map[string]int, sku string, n int) error {
	if levels[sku] < n {
		return ErrNoStock
	}
	levels[sku] -= n
	return nil
}
"""


def count(text: str) -> int:
    return get_ruler().ruler.count(text)


@pytest.fixture
def shop(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "shop"
    write(root, "shop/orders.py", ORDERS)
    write(root, "web/cart.ts", CART_TS)
    write(root, "stock/stock.go", STOCK_GO)
    for i in range(12):  # files full of the task's plain words, none of its names
        write(
            root,
            f"shop/notes_{i}.py",
            f'"""The order of the day {i}: an order is a total of lines."""\n\n'
            f"def note_{i}(order):\n    return order\n",
        )
    write(
        root,
        "tests/test_orders.py",
        "from shop.orders import Order\n\n\n"
        "def test_with_tax():\n    assert Order([]).with_tax()\n",
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    monkeypatch.chdir(root)
    return root


def pack_json(script_runner, *args) -> dict:
    r = script_runner.run(["ctx-pack", *args, "--json"])
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return json.loads(r.stdout)


def shown_lines(text: str) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    cur = None
    for line in text.split("\n"):
        if line.startswith("==> ") and " <==" in line:
            cur = out.setdefault(line[4 : line.index(" <==")], set())
        elif cur is not None and "\t" in line and line.split("\t")[0].isdigit():
            cur.add(int(line.split("\t")[0]))
    return out


def test_a_stack_trace_task_ranks_the_frames_function_first(script_runner, shop):
    task = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/shop/orders.py", line 17, in with_tax\n'
        '    raise ValueError("an order without lines has no total")\n'
        "ValueError: an order without lines has no total\n"
    )
    doc = pack_json(script_runner, "-q", task, "--tokens", "3000", ".")
    rows = {f["path"]: f for f in doc["files"]}
    assert rows["shop/orders.py"]["rank"] == 1
    assert any(c.startswith("Order.with_tax ") for c in rows["shop/orders.py"]["chunks"])
    lines = shown_lines(doc["text"])["shop/orders.py"]
    assert set(range(15, 19)) <= lines  # the whole method, raise and return included


def test_a_pull_request_body_is_read_as_shown(script_runner, shop):
    """A CI job hands over a pull request's body: its template's hidden comments (here full
    of the shop's commonest words, and an @-mention) are no part of the task, and its code
    host's link to a file names that file."""
    task = (
        "The comparison is off by one\n\n"
        "<!-- Thank you for contributing! Does the order total of every order line change?\n"
        "Ask @maintainers for a review of the order. -->\n\n"
        "It happens in https://github.com/acme/shop/blob/0123abcd/stock/stock.go#L7 and "
        "![shot](https://img.example.com/a.png?order=total&lines=1)\n"
    )
    r = script_runner.run(["ctx-pack", "-q", task, "--tokens", "2000", ".", "--json"])
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert "maintainers" not in r.stderr  # the hidden @-mention is not looked for
    rows = {f["path"]: f for f in json.loads(r.stdout)["files"]}
    assert rows["stock/stock.go"]["rank"] == 1
    assert rows["stock/stock.go"]["shown"] == "whole"
    # read with its comment, the task was about orders and their totals: orders.py whole
    assert rows.get("shop/orders.py", {}).get("shown", "path") == "path"


def test_a_code_hosts_link_to_a_line_points_at_it_as_a_frame_does(script_runner, shop):
    """``blob/REF/path#L123`` names the file and the line: the pack shows the function
    holding that line, where the same link without the anchor shows others first."""
    ledger = "".join(
        f"def settle_{i}(ledger, order):\n"
        f'    """Settle order {i} of the ledger: its total and its lines."""\n'
        + "".join(f"    total = ledger.total(order, {k})\n" for k in range(8))
        + "    return total\n\n\n"
        for i in range(60)
    )
    write(shop, "shop/ledger.py", ledger)
    target = ledger.split("\n").index("def settle_41(ledger, order):") + 6  # inside it
    link = "https://github.com/acme/shop/blob/main/shop/ledger.py"
    shown = {}
    for anchor in (f"#L{target}", ""):
        task = f"The order total is wrong when a ledger is settled, see {link}{anchor}\n"
        doc = pack_json(script_runner, "-q", task, "--tokens", "1500", ".")
        shown[anchor] = shown_lines(doc["text"]).get("shop/ledger.py", set())
    assert target in shown[f"#L{target}"]
    assert target not in shown[""]


def test_a_rare_identifier_beats_common_words(script_runner, shop):
    doc = pack_json(
        script_runner, "-q", "the order total is off after applyCoupon", "--tokens", "2000", "."
    )
    rows = {f["path"]: f for f in doc["files"]}
    assert rows["web/cart.ts"]["rank"] == 1
    assert 8 in shown_lines(doc["text"])["web/cart.ts"]  # inside applyCoupon


def test_catalogues_and_lock_files_stay_out_of_a_directory_pack(script_runner, shop):
    write(shop, "locale/de/LC_MESSAGES/shop.po", 'msgid "order total"\nmsgstr "Summe"\n' * 50)
    write(shop, "package-lock.json", '{"name": "shop", "order": "total"}\n')
    write(shop, "poetry.lock", "order total\n" * 30)
    r = script_runner.run(["ctx-pack", "-q", "order total", "--tokens", "4000", ".", "--json"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    paths = {f["path"] for f in doc["files"]}
    assert not paths & {"locale/de/LC_MESSAGES/shop.po", "package-lock.json", "poetry.lock"}
    assert "left out 1 file(s): translation catalogue" in r.stderr
    assert "left out 2 file(s): lock file" in r.stderr
    # --include brings one back (as a candidate: --fill, so the floor does not cut it)
    doc = pack_json(
        script_runner, "-q", "order total", "--tokens", "4000", ".", "--include", "*.po", "--fill"
    )
    assert "locale/de/LC_MESSAGES/shop.po" in {f["path"] for f in doc["files"]}


def test_include_brings_back_vendored_and_minified_files_too(script_runner, shop):
    # The directory listing left vendor/ and *.min.js out before --include was asked, so
    # --include 'vendor/**' packed nothing and warned that it "matches no file"
    write(shop, "vendor/money/rounding.js", "export function orderTotal(x) { return x; }\n")
    write(shop, "web/cart.min.js", "function orderTotal(a){return a}\n")
    r = script_runner.run(["ctx-pack", "-q", "orderTotal", "--tokens", "4000", ".", "--json"])
    assert r.returncode == 0, r.stderr
    paths = {f["path"] for f in json.loads(r.stdout)["files"]}
    assert not paths & {"vendor/money/rounding.js", "web/cart.min.js"}
    assert ".: 1 file(s) skipped (vendored)" in r.stderr
    r = script_runner.run(["ctx-pack", "-q", "orderTotal", "--tokens", "4000", ".", "--fill",
                           "--include", "vendor/**", "--include", "*.min.js", "--json"])
    assert r.returncode == 0, r.stderr
    paths = {f["path"] for f in json.loads(r.stdout)["files"]}
    assert {"vendor/money/rounding.js", "web/cart.min.js"} <= paths
    assert "matches no file" not in r.stderr and "skipped (vendored)" not in r.stderr


def test_exclude_and_ctxignore_keep_files_out_and_say_what_matched_nothing(script_runner, shop):
    (shop / ".ctxignore").write_text("web/\n[z-a].py\n")
    r = script_runner.run(
        [
            "ctx-pack",
            "-q",
            "applyCoupon order",
            "--tokens",
            "4000",
            ".",
            "--exclude",
            "stock/*",
            "--exclude",
            "nothing/*",
            "--json",
        ]
    )
    assert r.returncode == 0, r.stderr
    paths = {f["path"] for f in json.loads(r.stdout)["files"]}
    assert not any(p.startswith(("web/", "stock/")) for p in paths)
    assert "warning: --include/--exclude 'nothing/*' matches no file" in r.stderr
    assert ".ctxignore line 2: bad pattern" in r.stderr


def test_files_from_lists_candidates_and_an_empty_file_packs(script_runner, shop):
    write(shop, "shop/__init__.py", "")
    listing = (
        subprocess.run(["git", "ls-files", "-z", "*.py"], capture_output=True, check=True).stdout
        + b"shop/__init__.py\0"
    )
    args = ["ctx-pack", "-q", "with_tax", "--files-from", "-", "-0", "--tokens", "3000", "--json"]
    r = run_bytes(script_runner, args, listing)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    rows = {f["path"]: f for f in doc["files"]}
    assert rows["shop/orders.py"]["rank"] == 1
    assert all(not f["named"] for f in doc["files"])  # listed files are candidates


def test_a_review_pack_shows_the_changed_function_whole(script_runner, shop):
    text = ORDERS.replace("return order.total() - amount", "return max(0, order.total() - amount)")
    (shop / "shop/orders.py").write_text(text)
    doc = pack_json(script_runner, "-q", "review this change", "--changed", "--tokens", "3000")
    rows = {f["path"]: f for f in doc["files"]}
    assert rows["shop/orders.py"]["diff"] is True
    assert "-    return order.total() - amount" in doc["text"]
    lines = shown_lines(doc["text"])["shop/orders.py"]
    start = text.split("\n").index("def refund(order, amount):") + 1
    assert {start, start + 1} <= lines


def test_changed_with_nothing_changed_says_so(script_runner, shop):
    r = script_runner.run(["ctx-pack", "-q", "review", "--changed", "--tokens", "2000"])
    assert r.returncode == 0, r.stderr
    assert "--changed HEAD: nothing changed" in r.stderr


def test_the_makefile_target_run_twice_gives_the_same_pack(script_runner, shop):
    out = shop / "pack.md"
    args = [
        "ctx-pack",
        "-q",
        "order total with_tax",
        "--tokens",
        "3000",
        "--changed",
        "-o",
        str(out),
        ".",
    ]
    (shop / "shop/orders.py").write_text(ORDERS + "\n# touched\n")
    assert script_runner.run(args).returncode == 0
    first = out.read_bytes()
    r = script_runner.run(args)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == first  # the pack it wrote is not packed again
    assert b"==> pack.md <==" not in first
    # a changed file git tracks is an input: -o over it is refused, its changes kept
    orders = (shop / "shop/orders.py").read_bytes()
    r = script_runner.run([*args[:-3], "-o", str(shop / "shop/orders.py"), "."])
    assert r.returncode == 2
    assert "is an input of this pack (shop/orders.py, which ctx-pack did not write)" in r.stderr
    assert (shop / "shop/orders.py").read_bytes() == orders
    r = script_runner.run([*args[:-3], "-o", str(shop / "shop/orders.py")])  # changes alone
    assert r.returncode == 2 and "is an input of this pack (changed shop/orders.py)" in r.stderr
    assert (shop / "shop/orders.py").read_bytes() == orders
    # an untracked new source file is a change too: -o over it was taken for an earlier
    # pack and the new file replaced
    write(shop, "shop/fresh.py", "def fresh():\n    return 1\n")
    r = script_runner.run([*args[:-3], "-o", str(shop / "shop/fresh.py")])
    assert r.returncode == 2, r.stderr
    assert "(changed shop/fresh.py, which ctx-pack did not write)" in r.stderr
    assert (shop / "shop/fresh.py").read_text() == "def fresh():\n    return 1\n"


def test_an_earlier_pack_in_the_tree_is_not_a_candidate(script_runner, shop):
    r = script_runner.run(["ctx-pack", "-q", "with_tax", "--tokens", "2000", "shop"])
    write(shop, "old/pack.md", r.stdout)
    doc = pack_json(script_runner, "-q", "with_tax", "--tokens", "2000", ".")
    assert "old/pack.md" not in {f["path"] for f in doc["files"]}
    assert {"what": "old/pack.md", "why": "written by ctx-pack"} in doc["dropped"]


@pytest.mark.parametrize("tokens", [600, 1000, 2500, 6000])
def test_the_budget_is_recounted_and_never_exceeded(script_runner, shop, tokens):
    copy_sources(shop / "more")
    r = script_runner.run(
        ["ctx-pack", "-q", "reserve stock with_tax applyCoupon", "--tokens", str(tokens), "."]
    )
    assert r.returncode == 0, r.stderr
    assert count(r.stdout) <= tokens


def test_same_bytes_on_reruns_and_shuffled_inputs(script_runner, shop):
    names = ["shop/orders.py", "web/cart.ts", "stock/stock.go", "shop/notes_3.py", "tests"]
    base = ["ctx-pack", "-q", "reserve with_tax cartTotal", "--tokens", "2500"]
    outs = set()
    rng = random.Random(7)
    for _ in range(3):
        rng.shuffle(names)
        r = script_runner.run([*base, *names])
        assert r.returncode == 0, r.stderr
        outs.add(r.stdout)
    assert len(outs) == 1


def test_a_task_with_no_code_terms_still_packs_by_the_map(script_runner, shop):
    doc = pack_json(script_runner, "-q", "please look at this", "--tokens", "2000", ".")
    assert doc["files"]
    assert doc["tokens"] <= 2000


def test_a_task_that_is_only_a_stack_trace(script_runner, shop):
    task = 'File "stock/stock.go", line 9\n\tstock/stock.go:9 +0x1d\n'
    doc = pack_json(script_runner, "-q", task, "--tokens", "2000", ".")
    rows = {f["path"]: f for f in doc["files"]}
    assert rows["stock/stock.go"]["rank"] == 1
    assert 9 in shown_lines(doc["text"])["stock/stock.go"]


def test_a_task_naming_a_missing_file_warns_with_the_closest_names(script_runner, shop):
    r = script_runner.run(
        ["ctx-pack", "-q", "fix the bug in shop/order.py", "--tokens", "2000", "."]
    )
    assert r.returncode == 0, r.stderr
    assert "warning: the task names shop/order.py, which is not among the files" in r.stderr
    assert "closest: orders.py" in r.stderr


def test_kept_vocabularies_give_the_same_pack_and_follow_an_edit(script_runner, shop):
    import os

    for i in range(60):  # enough files that their vocabularies are kept in the store
        write(shop, f"lib/part_{i}.py", f"def part_{i}(order):\n    return order.lines[{i}]\n")
    args = ["-q", "refund the order amount", "--tokens", "3000", "."]
    first = pack_json(script_runner, *args)
    store = Path(os.environ["CTX_STORE"])
    assert list(store.glob("repomap/vocab-v1-*.bin"))
    again = pack_json(script_runner, *args)
    assert again["text"] == first["text"]
    top = lambda doc: min(doc["files"], key=lambda f: f["rank"])["path"]  # noqa: E731
    assert top(first) == "shop/orders.py"
    write(shop, "lib/part_7.py", "def refund_amount(order, amount):\n    return amount\n" * 3)
    edited = pack_json(script_runner, *args)
    assert top(edited) == "lib/part_7.py"  # counted anew: the kept words were stale


def test_a_task_naming_many_missing_files_warns_of_five_and_counts_the_rest(script_runner, shop):
    task = "".join(f"/srv/app/lib/gone_{k}.py:{k + 1}: DeprecationWarning\n" for k in range(12))
    r = script_runner.run(["ctx-pack", "-q", task, "--tokens", "4000", "."])
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("which is not among the files") == 5
    assert "warning: the task names 7 more paths that are not among the files" in r.stderr


def test_a_missing_path_of_a_megabyte_is_warned_of_by_its_ends(script_runner, shop):
    import io

    task = "/" + "deep/" * 200_000 + "gone.py:3: boom"  # too long for argv: on stdin
    stdin = io.TextIOWrapper(io.BytesIO(task.encode()))
    r = script_runner.run(["ctx-pack", "-q", "-", "--tokens", "900000", "."], stdin=stdin)
    assert r.returncode == 0, r.stderr
    (line,) = [x for x in r.stderr.splitlines() if "not among the files" in x]
    assert len(line) < 400 and "deep/deep/…" in line and "/gone.py" in line


def test_a_path_that_is_there_gives_no_warning_however_it_is_written(script_runner, shop):
    write(shop, "shop/__init__.py", "")
    write(shop, "tests/__init__.py", "")
    write(shop, "stock/__init__.py", "")
    write(shop, "shop/extra/__init__.py", "")
    task = (
        "the empty __init__.py files break it:\n"
        "/home/ann/venv/lib/python3.12/site-packages/shop/orders.py:15: DeprecationWarning\n"
        "C:\\Users\\ann\\code\\shop\\orders.py:22: in with_tax\n"
    )
    r = script_runner.run(["ctx-pack", "-q", task, "--tokens", "2000", "--format", "json", "."])
    assert r.returncode == 0, r.stderr
    assert "not among the files" not in r.stderr
    doc = json.loads(r.stdout)
    assert {f["path"]: f["rank"] for f in doc["files"]}["shop/orders.py"] == 1
    assert {12, 15} <= shown_lines(doc["text"])["shop/orders.py"]


def test_a_repository_of_fifty_thousand_files(script_runner, tmp_path, monkeypatch):
    root = tmp_path / "big"
    for d in range(100):
        sub = root / f"pkg{d}"
        sub.mkdir(parents=True)
        for f in range(500):
            (sub / f"m{f}.py").write_text(f"def f_{d}_{f}():\n    return {f}\n")
    (root / "pkg42" / "m7.py").write_text("def apply_rebate_rules():\n    return 'rebate'\n")
    monkeypatch.chdir(root)
    r = script_runner.run(
        [
            "ctx-pack",
            "-q",
            "apply_rebate_rules is wrong",
            "--tokens",
            "3000",
            "--no-map",
            ".",
            "--json",
            "--explain",
        ]
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    rows = {f["path"]: f for f in doc["files"]}
    assert rows["pkg42/m7.py"]["rank"] == 1
    assert doc["tokens"] <= 3000
    # --explain on 50,000 files stays a screenful: drops are listed up to a bound
    assert "Traceback" not in r.stderr and len(r.stderr.splitlines()) < 120
    assert len(r.stderr) < 20_000


def test_five_languages_each_rank_their_own_definition(script_runner, shop, tmp_path):
    if shutil.which("git") is None:  # the fixture needs git; this keeps the intent plain
        pytest.fail("git is required")
    copy_sources(shop / "more")
    for task, path in (
        ("Reserve returns ErrNoStock", "stock/stock.go"),
        ("cartTotal adds the price", "web/cart.ts"),
        ("refund subtracts the amount", "shop/orders.py"),
    ):
        doc = pack_json(script_runner, "-q", task, "--tokens", "2500", ".")
        rows = {f["path"]: f for f in doc["files"]}
        assert rows[path]["rank"] == 1, (task, sorted(rows, key=lambda p: rows[p]["rank"])[:3])


def test_a_task_naming_a_function_of_an_extensionless_script_packs_it(
    script_runner, tmp_path, monkeypatch
):
    # issue 19: bin/release has no extension; its #! line says Ruby, so its definitions are
    # the units, and the one the task names is shown whole.
    root = tmp_path / "tools"
    lines = ["#!/usr/bin/env ruby", "# Release steps, run from CI."]
    for i in range(60):
        lines += [f"def step_{i}(arg)", f"  value = arg * {i}", f'  puts "step {i}"', "end", ""]
    at = len(lines)
    lines += ["def rollback_release(tag)", '  system("git", "tag", "-d", tag)', "end", ""]
    for i in range(60, 90):
        lines += [f"def step_{i}(arg)", f"  arg + {i}", "end", ""]
    write(root, "bin/release", "\n".join(lines) + "\n")
    write(root, "bin/deploy", '#!/bin/sh\n# deploy the tag\ndeploy() {\n  echo "$1"\n}\n')
    for i in range(8):
        write(root, f"lib/step{i}.py", f"def helper_{i}(tag):\n    return tag\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    monkeypatch.chdir(root)
    task = "rollback_release fails when the tag is missing"
    doc = pack_json(script_runner, "-q", task, "--tokens", "1500", ".")
    rows = {f["path"]: f for f in doc["files"]}
    assert rows["bin/release"]["rank"] == 1
    assert any(c.startswith("rollback_release ") for c in rows["bin/release"]["chunks"])
    assert set(range(at + 1, at + 4)) <= shown_lines(doc["text"])["bin/release"]
    assert "\nbin/release:\n" in doc["text"].split("# Files")[0]  # on the map too


# --- the engine against a plain BM25 over chunks (issue 26) -------------------------------

REAL = Path(__file__).resolve().parents[1] / "data" / "scan" / "real"
REAL_FILES = {
    "okhttp/Cookie.kt": "Cookie.kt",
    "json/DateTimeUtils.cs": "DateTimeUtils.cs",
    "sinatra/reloader.rb": "reloader.rb",
    "leveldb/skiplist.h": "skiplist.h",
    "luarocks/fs/lua.lua": "lua.lua",
    "slim/MiddlewareDispatcher.php": "MiddlewareDispatcher.php",
}
# Tasks in plain words, as a user writes them: no file named, few exact names.
PLAIN_TASKS = [
    "a cookie whose domain attribute is a public suffix is accepted for every host",
    "the skiplist random height grows past the maximum height",
    "the reloader does not notice when a watched file is updated",
    "unzip of an archive fails when the destination directory does not exist yet",
    "middleware added after the kernel is resolved lazily never runs",
    "parsing a date time offset loses the time zone minutes",
]


@pytest.fixture
def polyglot(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "poly"
    copy_sources(root)
    for rel, name in REAL_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REAL / name, root / rel)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "real files of six projects")
    monkeypatch.chdir(root)
    return root


def _bm25_first(root: Path, task: str) -> tuple[str, int]:
    """The path and best line of the unit a plain BM25 over chunks ranks first (the
    benchmark's own baseline, written apart from the engine)."""
    import sys

    bench = Path(__file__).resolve().parents[2] / "bench"
    sys.path.insert(0, str(bench))
    try:
        from pack_quality.corpus import Corpus, terms
        from pack_quality.retrieve import bm25_rank
    finally:
        sys.path.remove(str(bench))
    corpus = Corpus(root)
    query = set(terms(task))
    _score, unit = bm25_rank(corpus.chunks(), terms(task))[0]
    lines = corpus.files[unit.path].lines
    best = max(
        (n for a, b in unit.ranges for n in range(a, b + 1)),
        key=lambda n: (len(set(terms(lines[n - 1])) & query), -n),
    )
    return unit.path, best


@pytest.mark.parametrize("task", PLAIN_TASKS)
def test_the_chunk_bm25_ranks_first_is_shown_when_the_pack_has_room(
    script_runner, polyglot, task
):
    path, line = _bm25_first(polyglot, task)
    data = pack_json(script_runner, "-q", task, "--tokens", "6000", ".")
    shown = shown_lines(data["text"])
    assert line in shown.get(path, set()), (path, line, sorted(shown))


# --- bad input (issue 26) ------------------------------------------------------------------


def _pack(script_runner, *args):
    r = script_runner.run(["ctx-pack", *args, "--json"])
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return json.loads(r.stdout), r.stderr


def test_a_task_of_one_word(script_runner, shop):
    doc, _ = _pack(script_runner, "-q", "refund", "--tokens", "3000", ".")
    assert doc["tokens"] <= 3000
    assert "shop/orders.py" in shown_lines(doc["text"])


def test_a_task_that_is_only_a_two_thousand_line_log(script_runner, shop, tmp_path):
    log = "".join(
        f"2024-05-01 12:00:{i % 60:02d} INFO worker-{i % 7} processed batch {i} in {i % 13} ms\n"
        for i in range(1999)
    )
    log += 'ValueError: an order without lines has no total\n'
    (tmp_path / "task.log").write_text(log)
    r = script_runner.run(
        ["ctx-pack", "--tokens", "60000", ".", "--json", "-q", "-"],
        stdin=io.TextIOWrapper(io.BytesIO(log.encode())),
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "shop/orders.py" in shown_lines(doc["text"])  # the message's source
    assert doc["tokens"] <= 60000


def test_a_task_in_another_human_language(script_runner, shop):
    tasks = ("修复 with_tax 在订单没有行时的错误", "исправить ошибку в with_tax для пустого заказа")
    for task in tasks:
        doc, _ = _pack(script_runner, "-q", task, "--tokens", "3000", ".")
        assert "shop/orders.py" in shown_lines(doc["text"])
    doc, _ = _pack(script_runner, "-q", "订单总额计算错误", "--tokens", "3000", ".")
    assert doc["tokens"] <= 3000  # nothing matches: the map decides, no error


def test_a_repository_of_one_fifty_megabyte_file(script_runner, tmp_path, monkeypatch):
    root = tmp_path / "one"
    root.mkdir()
    block = "".join(
        f"def handler_{i}(event):\n    return event.get('k{i}')\n\n\n" for i in range(500)
    )
    with open(root / "huge.py", "w") as fh:
        while fh.tell() < 50 * 1024 * 1024:
            fh.write(block)
    monkeypatch.chdir(root)
    doc, err = _pack(script_runner, "-q", "handler_42 returns None", "--tokens", "3000", ".")
    assert doc["tokens"] <= 3000


def test_a_repository_where_every_file_is_generated_or_binary(
    script_runner, tmp_path, monkeypatch
):
    root = tmp_path / "gen"
    root.mkdir()
    for i in range(5):
        (root / f"blob{i}.bin").write_bytes(bytes(range(256)) * 40)
        (root / f"api_pb2_{i}.py").write_text(
            "# Generated by the protocol buffer compiler.  DO NOT EDIT!\n"
            f"def parse_{i}(data):\n    return data\n"
        )
    monkeypatch.chdir(root)
    doc, err = _pack(script_runner, "-q", "parse_3 is wrong", "--tokens", "3000", ".")
    assert doc["tokens"] <= 3000
    assert "binary" in err and "generated" in err


def test_fill_with_a_tiny_budget(script_runner, shop):
    doc, _ = _pack(script_runner, "-q", "with_tax raises", "--fill", "--tokens", "600", ".")
    assert doc["tokens"] <= 600


def test_a_pack_with_one_strong_hit_stops_under_the_floor_and_fill_fills(script_runner, shop):
    task = "with_tax raises ValueError when an order has no lines"
    doc, err = _pack(script_runner, "-q", task, "--tokens", "30000", ".")
    filled, _ = _pack(script_runner, "-q", task, "--tokens", "30000", "--fill", ".")
    assert "shop/orders.py" in shown_lines(doc["text"])
    floor = [d for d in doc["dropped"] if "relevance floor" in d["why"]]
    assert floor and "--fill" in floor[0]["why"] and "relevance floor" not in err
    assert not any("relevance floor" in d["why"] for d in filled["dropped"])
    assert doc["tokens"] < filled["tokens"] <= 30000
    lines = sum(len(v) for v in shown_lines(doc["text"]).values())
    assert lines < sum(len(v) for v in shown_lines(filled["text"]).values())
    # files nothing in the task reaches are not listed as "also relevant" under the floor
    assert "shop/notes_0.py" not in doc["text"].split("# Files", 1)[1]
    # --explain names what stayed out under the floor
    r = script_runner.run(["ctx-pack", "-q", task, "--tokens", "30000", "--explain", "."])
    assert r.returncode == 0 and "relevance floor" in r.stderr


def test_explain_and_json_give_each_chunk_score_in_parts(script_runner, shop):
    task = '  File "shop/orders.py", line 17, in with_tax\nValueError: no lines'
    doc, _ = _pack(script_runner, "-q", task, "--tokens", "3000", ".")
    row = next(f for f in doc["files"] if f["path"] == "shop/orders.py")
    scores = {c["chunk"]: c for c in row["chunk_scores"]}
    assert set(scores) == set(row["chunks"])
    best = max(scores.values(), key=lambda c: c["score"])
    assert best["chunk"].startswith("Order.with_tax ")
    assert best["pointers"] > 0  # the frame points at it
    for c in scores.values():  # the parts add up to the score
        total = c["words"] + c["pointers"] + c["file"] + c["callees"]
        assert abs(total - c["score"]) < 0.01, c
    r = script_runner.run(["ctx-pack", "-q", task, "--tokens", "3000", "--explain", "."])
    assert r.returncode == 0
    assert any(
        ln.strip().startswith("Order.with_tax ") and "pointers" in ln and "words" in ln
        for ln in r.stderr.splitlines()
    ), r.stderr


def test_without_fill_the_files_stop_at_the_ceiling_and_fill_goes_past(
    script_runner, tmp_path, monkeypatch
):
    # 220 modules that answer the task equally well: every chunk is above the relevance
    # floor, and together they are far more than the files' ceiling.
    root = tmp_path / "billing"
    root.mkdir()
    for i in range(220):
        body = "\n".join(
            f"    subtotal_{k} = sum(line.price * line.qty for line in order.lines)  # invoice"
            for k in range(30)
        )
        (root / f"region_{i:03}.py").write_text(
            f'"""Invoice totals for region {i}."""\n\n\n'
            f"def invoice_total_{i}(order):\n    \"\"\"The invoice total of ORDER.\"\"\"\n"
            f"{body}\n    return subtotal_0\n"
        )
    for i in range(300):  # the rest of the code base, where the task's words are rare
        (root / f"shipping_{i:03}.py").write_text(
            f"def parcel_weight_{i}(box):\n    return box.mass * {i} + box.tare\n"
        )
    monkeypatch.chdir(tmp_path)
    task = "the invoice total is wrong for orders with many lines"
    from ctxtools.retrieval.plan import FLOOR_TOKENS

    doc, _ = _pack(script_runner, "-q", task, "--tokens", "100000", "--no-map", "billing")
    filled, _ = _pack(
        script_runner, "-q", task, "--tokens", "100000", "--no-map", "--fill", "billing"
    )
    files_tokens = sum(f["tokens"] for f in doc["files"])
    assert doc["files"][0]["score"] > 0
    # (the plan estimates tokens as it goes; the rendered files come within a few percent)
    assert files_tokens <= 1.05 * FLOOR_TOKENS < sum(f["tokens"] for f in filled["files"])
    assert filled["tokens"] <= 100000
    ceiling = [d for d in doc["dropped"] if "ceiling" in d["why"]]
    assert ceiling and "--fill" in ceiling[0]["why"]
    assert not any("ceiling" in d["why"] for d in filled["dropped"])


def test_a_named_file_cut_by_the_floor_says_so_not_the_budget(script_runner, tmp_path):
    """A named file shown in part with 99% of a 100k budget left was said to be cut by
    "the budget": the relevance floor cut it, and --fill is what brings the rest. (The
    changed a.py is the best evidence; b.py, named beside it, holds nothing of the task.)"""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, "a.py", "def f(): pass\n")
    write(repo, "b.py", "def h():\n    return 1\n\n\ndef k():\n    return 2\n")
    git(repo, "add", "a.py", "b.py")
    git(repo, "commit", "-q", "-m", "init")
    write(repo, "a.py", "def f(): pass\ndef g(): pass\n")
    args = ["ctx-pack", "-q", "fix g", "--changed", "-t", "100000", ".", "b.py"]
    r = script_runner.run(args, cwd=repo)
    assert r.returncode == 0, r.stderr
    notes = [ln for ln in r.stderr.splitlines() if "named file b.py" in ln]
    assert notes and all("budget" not in ln for ln in notes), r.stderr
    assert "under the relevance floor; --fill packs it" in notes[0]
    full = script_runner.run([*args, "--fill"], cwd=repo)
    assert "named file b.py" not in full.stderr and "5\tdef k():" in full.stdout


def test_a_c_files_conditional_includes_are_shown_with_their_conditionals(
    script_runner, tmp_path, monkeypatch
):
    # A reviewer shown "#include <sys/event.h>" without "#if defined(__APPLE__) || ..."
    # reads it as an include every platform makes. Real libuv text (tests/data/scan, MIT):
    # src/unix/internal.h's include block above uv_available_parallelism, with forty
    # small functions between them so that the block is shown as the imports, not as a chunk.
    data = Path(__file__).resolve().parents[1] / "data" / "scan"
    head = (data / "real" / "internal.h").read_text().split("\n")[:90]
    helpers = [
        f"static int helper_{i}(int x) {{\n  int y = x * {i};\n  return y + {i};\n}}\n"
        for i in range(1, 41)
    ]
    func = (data / "ts" / "uv_parallelism.c").read_text()
    write(tmp_path, "net.c", "\n".join(head) + "\n\n" + "\n".join(helpers) + "\n" + func)
    monkeypatch.chdir(tmp_path)
    r = script_runner.run(["ctx-pack", "-q", "uv_available_parallelism returns a wrong count",
                           "--tokens", "1500", "--no-map", "."])
    assert r.returncode == 0, r.stderr
    shown = shown_lines(r.stdout)["net.c"]
    assert {40, 51, 62, 73, 75} <= shown  # includes held by conditionals
    assert {38, 39, 41} <= shown  # #if defined(__APPLE__) || ... \ / its next line / #endif
    assert {49, 50, 54, 55} <= shown  # the nested #if and # if, both #endifs
    assert {70, 74, 76} <= shown  # #if defined(_AIX) / #else / #endif
    assert not {43, 44, 57, 58} & shown  # a macro, an #if that holds no include


def _migrations(root: Path) -> None:
    """A Django app whose migrations carry makemigrations' header (generated)."""
    write(root, "shop/models.py", ORDERS)
    for name, dep in [("0001_initial", None), ("0002_auto_20240101_0900", "0001_initial"),
                      ("0003_order_note", "0002_auto_20240101_0900")]:
        deps = f'[("shop", "{dep}")]' if dep else "[]"
        write(root, f"shop/migrations/{name}.py",
              "# Generated by Django 4.2 on 2024-01-01 09:00\n\n"
              "from django.db import migrations, models\n\n\n"
              "class Migration(migrations.Migration):\n"
              f"    dependencies = {deps}\n\n"
              "    operations = [\n"
              '        migrations.AddField("order", "note", models.TextField(default="")),\n'
              "    ]\n")
    write(root, "shop/assets/logo_2024.png", bytes(range(256)) * 8)


def test_a_generated_file_the_task_names_is_packed_and_the_others_stay_out(
    script_runner, tmp_path, monkeypatch
):
    root = tmp_path / "app"
    _migrations(root)
    monkeypatch.chdir(root)
    task = "Fix 0002_auto_20240101_0900 migration dependencies"
    doc, err = _pack(script_runner, "-q", task, "--tokens", "4000", ".")
    shown = shown_lines(doc["text"])
    assert "shop/migrations/0002_auto_20240101_0900.py" in shown
    assert "shop/migrations/0003_order_note.py" not in doc["text"]
    assert "generated" in err  # the migrations it does not name are left out as before
    # by its path too, and the user's --exclude still wins over the task
    doc, _ = _pack(script_runner, "-q", "shop/migrations/0003_order_note.py is wrong",
                   "--tokens", "4000", ".")
    assert "shop/migrations/0003_order_note.py" in shown_lines(doc["text"])
    doc, _ = _pack(script_runner, "-q", task, "--exclude", "shop/migrations/*",
                   "--tokens", "4000", ".")
    assert not any("migrations" in path for path in shown_lines(doc["text"]))
    # a binary file the task names stays out
    doc, err = _pack(script_runner, "-q", "logo_2024 is blurry", "--tokens", "4000", ".")
    assert "shop/assets/logo_2024.png" not in shown_lines(doc["text"]) and "binary" in err


def _vendored(root: Path) -> None:
    """A git repository with a vendored copy of a library, a second vendored file and a
    minified bundle beside the project's own code."""
    write(root, "shop/orders.py", ORDERS)
    write(root, "third_party/money/rounding.py",
          "def round_half_even(amount):\n    return amount.quantize(1)\n")
    write(root, "third_party/money/currency.py", "CODES = ('EUR', 'USD')\n")
    write(root, "static/checkout.min.js",
          "!function(w){w.total=function(o){return o.lines.reduce(function(a,l)"
          "{return a+l.price},0)}}(window);\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "shop")


def test_a_vendored_or_minified_file_the_task_names_by_its_path_is_packed(
    script_runner, tmp_path, monkeypatch
):
    root = tmp_path / "app"
    _vendored(root)
    monkeypatch.chdir(root)
    doc, err = _pack(script_runner, "-q", "round_half_even in third_party/money/rounding.py "
                     "rounds 2.5 to 3", "--tokens", "4000", ".")
    shown = shown_lines(doc["text"])
    assert "third_party/money/rounding.py" in shown
    assert "third_party/money/currency.py" not in doc["text"]  # the one not named stays out
    assert "not among the files" not in err
    # an absolute path from another checkout names it by its trailing components
    doc, _ = _pack(script_runner, "-q", "/home/ci/work/shop/static/checkout.min.js "
                   "throws on an empty order", "--tokens", "4000", ".")
    assert "static/checkout.min.js" in shown_lines(doc["text"])
    # the user's --exclude still wins over the task
    doc, err = _pack(script_runner, "-q", "fix third_party/money/rounding.py", "--exclude",
                     "third_party/*", "--tokens", "4000", ".")
    assert "third_party/money/rounding.py" not in shown_lines(doc["text"])


def test_a_vendored_file_the_task_names_by_its_name_alone_is_said_to_be_left_out(
    script_runner, tmp_path, monkeypatch
):
    root = tmp_path / "app"
    _vendored(root)
    monkeypatch.chdir(root)
    # a bare name may stand for many vendored copies: not packed, but the warning says
    # where the file is and why it is not among the files, not that it does not exist
    doc, err = _pack(script_runner, "-q", "rounding.py rounds 2.5 to 3", "--tokens", "4000",
                     ".")
    assert "third_party/money/rounding.py" not in shown_lines(doc["text"])
    warning = next(line for line in err.splitlines() if "rounding.py" in line)
    assert "leaves out as vendored (third_party/money/rounding.py)" in warning
    assert "not among the files" not in warning
    # a name that is nowhere keeps the old warning
    _doc, err = _pack(script_runner, "-q", "fix billing.py", "--tokens", "4000", ".")
    assert "the task names billing.py, which is not among the files" in err
