"""retrieval.history: the functions changed by past commits whose messages read like the
task, from a git repository built in the test, and what they do to a pack."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import git, write

from ctxtools.analyzer import parse_query
from ctxtools.pack.build import build_pack
from ctxtools.pack.model import PackRequest
from ctxtools.retrieval import history
from ctxtools.tokens import HeuristicRuler

INVOICE = '''"""Invoices: their totals, discounts and rounding."""

from decimal import ROUND_HALF_UP, Decimal


def invoice_total(lines):
    """The total of an invoice's lines, rounded to the cent."""
    total = sum(Decimal(str(line.price)) * line.quantity for line in lines)
    return total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def discounted_total(lines, rate):
    """An invoice's total after a discount of RATE, rounded to the cent."""
    total = invoice_total(lines) * (1 - Decimal(str(rate)))
    return total.quantize(Decimal("0.01"))
'''

SERVER = '''package server

import "net/http"

func Health(w http.ResponseWriter, r *http.Request) {
\tw.WriteHeader(http.StatusOK)
}

func Metrics(w http.ResponseWriter, r *http.Request) {
\tw.WriteHeader(http.StatusNoContent)
}
'''


@pytest.fixture(autouse=True)
def history_on(monkeypatch):
    monkeypatch.setenv("CTX_HISTORY", "1")  # (conftest turns it off for every other test)


def _repo(root: Path) -> Path:
    """A repository of three commits after its first: one changes discounted_total (its
    message about rounding discounted totals), one Go handler, one the README."""
    write(root, "billing/invoice.py", INVOICE)
    write(root, "srv/server.go", SERVER)
    write(root, "README.md", "# shop\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Invoices and a health check: rounding of totals")
    write(root, "billing/invoice.py", INVOICE.replace(
        'return total.quantize(Decimal("0.01"))\n',
        'return total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)\n'))
    git(root, "commit", "-q", "-am", "Round discounted invoice totals half up\n\nA "
        "discount of a third left totals a cent short.")
    write(root, "srv/server.go", SERVER.replace("StatusNoContent", "StatusOK"))
    git(root, "commit", "-q", "-am", "metrics: answer 200 like the health check")
    write(root, "README.md", "# shop\n\nInvoices and their totals.\n")
    git(root, "commit", "-q", "-am", "README: say what invoices hold")
    return root


def _words(task: str):
    return parse_query(task).words


def test_the_functions_a_matching_commit_changed(tmp_path):
    root = _repo(tmp_path / "repo")
    sig = history.read_signal(str(root), _words("discounted totals are a cent short"))
    # The commit about discounted totals is first; the README's (no source file) and the
    # first (a root commit: its diff is the whole tree) are never among them.
    subjects = [c.subject for c in sig.commits]
    assert subjects[0] == "Round discounted invoice totals half up"
    assert "README: say what invoices hold" not in subjects
    assert not any(s.startswith("Invoices and a health check") for s in subjects)
    assert ("billing/invoice.py", "discounted_total") in sig.touched
    assert ("billing/invoice.py", "invoice_total") not in sig.touched
    assert sig.note is None
    # A Go hunk is read by git's golang driver: the handler it changed, by its name.
    go = history.read_signal(str(root), _words("metrics answer"))
    assert ("srv/server.go", "Metrics") in go.touched
    assert ("srv/server.go", "Health") not in go.touched


def test_nothing_without_history_or_a_match(tmp_path):
    plain = tmp_path / "plain"
    write(plain, "billing/invoice.py", INVOICE)
    assert history.read_signal(str(plain), _words("discounted totals")) == history.Signal()
    root = _repo(tmp_path / "repo")
    assert history.read_signal(str(root), _words("kubernetes ingress")).touched == {}
    assert history.read_signal(str(root), ()).touched == {}


def test_a_subdirectory_reads_only_its_own_commits(tmp_path):
    root = _repo(tmp_path / "repo")
    got = history.read_signal(str(root / "srv"), _words("discounted totals metrics"))
    assert [c.subject for c in got.commits] == ["metrics: answer 200 like the health check"]
    # paths are the root's own (as the pack's labels are)
    assert set(got.touched) == {("server.go", "Metrics")}


def test_off_with_ctx_history_0(tmp_path, monkeypatch):
    root = _repo(tmp_path / "repo")
    monkeypatch.setenv("CTX_HISTORY", "0")
    assert history.read_signal(str(root), _words("discounted totals")) == history.Signal()


def _commit_three_files(root: Path, stem: str, message: str) -> None:
    """A commit adding three source files, each defining STEM_<k>."""
    for k in range(3):
        write(root, f"billing/m{k}.py", f"def {stem}_{k}(x):\n    return x\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def test_a_commit_of_many_files_touches_nothing(tmp_path, monkeypatch):
    root = _repo(tmp_path / "repo")
    _commit_three_files(root, "discounted", "discounted helpers everywhere")
    monkeypatch.setattr(history, "MAX_FILES", 2)
    got = history.read_signal(str(root), _words("discounted helpers"))
    assert got.commits[0].subject == "discounted helpers everywhere"
    assert not any(p.startswith("billing/m") for p, _n in got.touched)
    assert ("billing/invoice.py", "discounted_total") in got.touched  # the other commit's


def test_a_partial_clone_reads_no_diff(tmp_path):
    root = _repo(tmp_path / "repo")
    git(root, "config", "core.repositoryformatversion", "1")
    git(root, "config", "extensions.partialClone", "origin")
    assert history.read_signal(str(root), _words("discounted totals")).touched == {}


def test_a_git_that_hangs_is_given_up_with_a_note(tmp_path, monkeypatch):
    fake = tmp_path / "bin"
    write(fake, "git", "#!/bin/sh\nexec sleep 30\n")
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(history, "TIMEOUT", 0.3)
    got = history.read_signal(str(tmp_path), _words("discounted totals"))
    assert got.touched == {}
    assert got.note == "note: the history was not read (git took longer than 0.3 s)"


def test_no_git_at_all(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert history.read_signal(str(tmp_path), _words("discounted totals")) == history.Signal()


def test_commit_scores_do_not_depend_on_the_string_hash():
    # BM25 summed a message's words in set order: other PYTHONHASHSEEDs gave other last
    # bits of the same scores (seen on real histories), so packs could differ by process.
    import subprocess
    import sys

    code = (
        "from ctxtools.retrieval import history\n"
        "msgs = [(f'{i:040x}', 's', m) for i, m in enumerate(["
        "'cache key version honour the key when version set cache',"
        "'fix cache expiry and key rounding',"
        "'rounding of totals in the invoice key cache version', 'docs: cache'])]\n"
        "print(*(repr(c.score) for c in history.best_commits(msgs, ['cache', 'key', "
        "'version', 'rounding', 'expiry', 'totals', 'invoice'])))\n")
    got = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
           for seed in range(1, 9)}
    assert len(got) == 1, got


def test_parse_show_reads_headers_and_changed_definitions():
    out = (
        b"\x00commit aaa\n\ndiff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n"
        b"@@ -10 +10 @@ def outer(a, b):\n-    return a\n+    return b\n"
        b"@@ -40,0 +41,2 @@ class Shelf:\n+def brand_new(x):\n+    pass\n"
        b"\x00commit bbb\n\ndiff --git a/y.rs b/y.rs\n--- a/y.rs\n+++ b/y.rs\n"
        b"@@ -3 +3 @@ pub fn parse_line(s: &str) -> Line {\n-  a\n+  b\n"
        b'diff --git "a/\\303\\251.py" "b/\\303\\251.py"\n+++ "b/\\303\\251.py"\n'
        b"@@ -1 +1 @@ def quoted():\n"
    )
    got = history.parse_show(out)
    assert got["aaa"] == (1, [("x.py", "Shelf"), ("x.py", "brand_new"), ("x.py", "outer")])
    # a quoted name (not UTF-8-safe for git) is counted as a file but names nothing
    assert got["bbb"] == (2, [("y.rs", "parse_line")])


def test_parse_messages_leaves_out_commits_without_a_parent():
    out = (b"1111 2222\nFix the cache key\n\nBody.\n\x00"
           b"2222\nInitial import\n\x00"
           b"3333 4444 5555\nMerge\n")
    got = history.parse_messages(out)
    assert [(s, subj) for s, subj, _m in got] == [("1111", "Fix the cache key"), ("3333", "Merge")]


def test_ties_go_to_the_later_commit():
    msgs = [("new", "cache key", "cache key"), ("old", "cache key", "cache key")]
    assert [c.sha for c in history.best_commits(msgs, ["cache"])] == ["new", "old"]
    assert history.best_commits(msgs, ["nothing"]) == []


def test_a_word_said_thrice_in_a_message_counts_that_message_once_in_its_idf():
    # BM25's document frequency is the messages holding a word, not its occurrences: the
    # messages' own loop counted each occurrence, so a word said three times in one of two
    # messages weighed less than nothing and that message did not match at all
    msgs = [("a", "cache", "cache the cache, cache it"), ("b", "docs", "docs for users")]
    got = history.best_commits(msgs, ["cache"])
    assert [c.sha for c in got] == ["a"] and got[0].score > 0
    # the engine's BM25, with the messages as its units: one formula for both
    from ctxtools.retrieval.terms import Stats, bm25

    stats = Stats()
    (n_a, words_a), (n_b, _words_b) = (history.message_words(m) for _s, _j, m in msgs)
    assert words_a["cache"] == 3
    stats.add({0: 3}, n_a)
    stats.add({}, n_b)
    assert got[0].score == bm25({0: 3}, n_a, [stats.idf(0)], stats)
    # a word in every message still matches (a positive idf, however small)
    same = [("a", "s", "cache one"), ("b", "s", "cache cache two")]
    assert [c.sha for c in history.best_commits(same, ["cache"])] == ["b", "a"]


def _pack(root: Path, task: str, tokens: int = 400):
    req = PackRequest(task=task, paths=[str(root)], root=str(root), tokens=tokens,
                      use_map=False)
    return build_pack(req, ruler=HeuristicRuler())


TASK = "an invoice total with a discount is a cent short: rounded down"


def _row(result, path: str) -> dict:
    return {f["path"]: f for f in result.files}[path]


def _chunk_scores(result) -> dict[str, dict]:
    return {c["chunk"].split()[0]: c for c in _row(result, "billing/invoice.py")["chunk_scores"]}


def test_a_pack_ranks_up_what_the_history_points_at(tmp_path, monkeypatch):
    root = _repo(tmp_path / "repo")
    with_history = _chunk_scores(_pack(root, TASK, tokens=4000))
    assert with_history["discounted_total"]["history"] > 0
    assert with_history["invoice_total"].get("history", 0) == 0
    part = with_history["discounted_total"]["history"]
    monkeypatch.setenv("CTX_HISTORY", "0")
    without = _chunk_scores(_pack(root, TASK, tokens=4000))
    assert "history" not in without["discounted_total"]
    assert with_history["discounted_total"]["score"] == pytest.approx(
        without["discounted_total"]["score"] + part, abs=0.002)


def test_the_last_commits_functions_are_recent_whatever_their_messages(tmp_path, monkeypatch):
    root = _repo(tmp_path / "repo")
    # No message reads like this task, yet the last commits' functions are recent: the
    # README's commit (no source file), the handler's, the discount's (the root commit,
    # whose diff is the whole tree, is never read).
    got = history.read_signal(str(root), _words("kubernetes ingress"))
    assert got.touched == {}
    assert got.recent == {("srv/server.go", "Metrics"), ("billing/invoice.py", "discounted_total")}
    monkeypatch.setattr(history, "RECENT", 2)
    assert history.read_signal(str(root), _words("kubernetes ingress")).recent == {
        ("srv/server.go", "Metrics")}
    monkeypatch.setattr(history, "RECENT", 1)
    assert history.read_signal(str(root), _words("kubernetes ingress")) == history.Signal()
    monkeypatch.setattr(history, "RECENT", 5)
    monkeypatch.setattr(history, "RECENT_WEIGHT", 0.0)
    assert history.read_signal(str(root), _words("kubernetes ingress")).recent == frozenset()


def test_a_recent_commit_of_many_files_is_not_read(tmp_path, monkeypatch):
    root = _repo(tmp_path / "repo")
    _commit_three_files(root, "helper", "helpers everywhere")
    monkeypatch.setattr(history, "MAX_FILES", 2)
    read = []
    real = history._functions
    monkeypatch.setattr(history, "_functions", lambda r, shas: read.append(shas) or real(r, shas))
    got = history.read_signal(str(root), _words("kubernetes ingress"))
    assert got.recent == {("srv/server.go", "Metrics"), ("billing/invoice.py", "discounted_total")}
    head = git(root, "rev-parse", "HEAD").strip()
    assert read and all(head not in shas for shas in read)  # its diff was never asked for


def test_recency_orders_what_the_task_reached_and_brings_nothing(tmp_path, monkeypatch):
    root = _repo(tmp_path / "repo")
    task = "WriteHeader with the ResponseWriter and the request"  # both handlers alike
    got = _pack(root, task, tokens=4000)
    go = {c["chunk"].split()[0]: c for c in _row(got, "srv/server.go")["chunk_scores"]}
    assert go["Health"].get("history", 0) == 0
    metrics = go["Metrics"]
    # a share of its own score: what it had without is score - part, and part is
    # RECENT_WEIGHT of that
    part = metrics["history"]
    assert part == pytest.approx(history.RECENT_WEIGHT * (metrics["score"] - part), abs=0.002)
    assert metrics["score"] > go["Health"]["score"]
    assert any("changed by the last 5 commits" in r for r in _row(got, "srv/server.go")["reasons"])
    # discounted_total is recent too, but the task does not reach it: it gets nothing
    rows = {f["path"]: f for f in got.files}
    if "billing/invoice.py" in rows:
        for c in rows["billing/invoice.py"].get("chunk_scores", []):
            assert c.get("history", 0) == 0
    monkeypatch.setattr(history, "RECENT_WEIGHT", 0.0)
    flat = _pack(root, task, tokens=4000)
    off = {c["chunk"].split()[0]: c for c in _row(flat, "srv/server.go")["chunk_scores"]}
    assert off["Metrics"]["score"] == pytest.approx(metrics["score"] - part, abs=0.002)


def test_a_slow_read_of_the_last_commits_keeps_the_matching_ones(tmp_path, monkeypatch):
    root = _repo(tmp_path / "repo")
    real = history._functions
    calls = []

    def second_is_late(root_, shas):
        calls.append(shas)
        if len(calls) == 2:
            raise TimeoutError
        return real(root_, shas)

    monkeypatch.setattr(history, "_functions", second_is_late)
    got = history.read_signal(str(root), _words("discounted totals are a cent short"))
    assert len(calls) == 2  # the matching commits, then the last ones not among them
    assert ("billing/invoice.py", "discounted_total") in got.touched
    assert got.recent == frozenset()
    assert got.note is None


def test_explain_names_the_commits(tmp_path):
    root = _repo(tmp_path / "repo")
    git(root, "commit", "-q", "--allow-empty", "-m", "x")  # (no source file: not read)
    write(root, "billing/invoice.py", INVOICE.replace("rounded to the cent", "to a cent") )
    git(root, "commit", "-q", "-am", "Cent rounding of an invoice total \x1b[31mred\x1b[0m")
    got = _pack(root, TASK, tokens=4000)
    row = _row(got, "billing/invoice.py")
    why = [r for r in row["reasons"] if "past commits" in r]
    assert len(why) == 1
    assert '"Cent rounding of an invoice total ?[31mred?[0m"' in why[0]
    assert "\x1b" not in got.text


def test_ctx_pack_explains_the_history_part(script_runner, tmp_path):
    root = _repo(tmp_path / "repo")
    r = script_runner.run(["ctx-pack", "--task", TASK, "-t", "4000", "--explain", "."], cwd=root)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stderr.splitlines() if x.strip().startswith("discounted_total "))
    assert "+ history " in line
    off = script_runner.run(["ctx-pack", "--task", TASK, "-t", "4000", "--explain", "."],
                            cwd=root, env={**os.environ, "CTX_HISTORY": "0"})
    # (the first run had CTX_HISTORY=1 from this module's fixture: conftest's default is 0)
    assert off.returncode == 0
    assert "history" not in off.stderr


def test_messages_past_the_cap_are_not_matched(tmp_path, monkeypatch):
    root = _repo(tmp_path / "repo")
    for k in range(4):  # later commits, each with a long message not about the task
        write(root, "srv/server.go", SERVER + f"// {k}\n")
        git(root, "commit", "-q", "-am", f"metrics {k}\n\n" + "padding words here " * 200)
    monkeypatch.setattr(history, "MAX_LOG_BYTES", 9000)  # about two of the long messages
    got = history.read_signal(str(root), _words("discounted totals metrics"))
    assert got.commits  # what was read is matched
    assert all(c.subject.startswith("metrics ") for c in got.commits)
    assert "Round discounted invoice totals half up" not in [c.subject for c in got.commits]
    monkeypatch.setattr(history, "MAX_LOG_BYTES", 4 << 20)
    whole = history.read_signal(str(root), _words("discounted totals metrics"))
    assert whole.commits[0].subject == "Round discounted invoice totals half up"


def test_a_message_that_is_not_utf8_and_an_unborn_head(tmp_path):
    root = _repo(tmp_path / "repo")
    write(root, "billing/invoice.py", INVOICE + "\n")
    msg = tmp_path / "msg"
    msg.write_bytes(b"Discounted totals \xff\xfe rounded\n")
    git(root, "commit", "-q", "-a", "-F", str(msg))
    got = history.read_signal(str(root), _words("discounted totals rounded"))
    # (git hands it over re-encoded, or it is read with U+FFFD: matched either way)
    subject = got.commits[0].subject
    assert subject.startswith("Discounted totals ") and subject.endswith(" rounded")
    unborn = tmp_path / "unborn"
    write(unborn, "a.py", "def discounted():\n    pass\n")
    git(unborn, "init", "-q")
    assert history.read_signal(str(unborn), _words("discounted")) == history.Signal()


def test_a_secret_in_a_commit_subject_is_redacted(tmp_path):
    root = _repo(tmp_path / "repo")
    write(root, "billing/invoice.py", INVOICE + "\n")
    git(root, "commit", "-q", "-am",
        "Cent rounding of discounted totals, key AKIAIOSFODNN7EXAMPLQ")
    row = _row(_pack(root, TASK, tokens=4000), "billing/invoice.py")
    why = next(r for r in row["reasons"] if "past commits" in r)
    assert "AKIAIOSFODNN7EXAMPLQ" not in why
    assert "[secret redacted: AWS access key]" in why


def test_message_words_are_kept_by_sha(tmp_path, monkeypatch):
    """A commit's message never changes: its word counts are kept in the store and a second
    read counts only new commits, with the same result; a damaged memo is a miss."""
    root = _repo(tmp_path / "repo")
    calls = []
    real = history.message_words
    monkeypatch.setattr(history, "message_words", lambda m: calls.append(m) or real(m))
    store = tmp_path / "store"
    first = history.read_signal(str(root), _words("discounted totals"), str(store))
    assert len(calls) == 3  # three commits with a parent
    memo = list((store / "history").glob("words-*.bin"))
    assert len(memo) == 1
    calls.clear()
    assert history.read_signal(str(root), _words("discounted totals"), str(store)) == first
    assert calls == []
    write(root, "srv/server.go", SERVER + "// x\n")
    git(root, "commit", "-q", "-am", "metrics: a comment")
    calls.clear()
    second = history.read_signal(str(root), _words("discounted totals"), str(store))
    assert calls == ["metrics: a comment\n"]
    memo[0].write_bytes(b"ctx-memo-v1 history-words-v1\n" + b"\0" * 8 + b"garbage")
    calls.clear()
    assert history.read_signal(str(root), _words("discounted totals"), str(store)) == second
    assert len(calls) == 4
    # the same as with no store at all
    calls.clear()
    monkeypatch.setenv("CTX_STORE", str(tmp_path / "other"))
    assert history.read_signal(str(root), _words("discounted totals")) == second


STORE_TS = '''import { Row } from "./row";

export class OrderStore {
    private rows: Row[] = [];

    constructor(private readonly name: string) {}

    async insert<T extends Row>(row: T): Promise<void> {
        const copy = { ...row };
        copy.createdAt = new Date();
        this.rows.push(copy);
    }

    get size(): number {
        return this.rows.length;
    }
}

export const totalOf = (rows: Row[]): number => {
    let sum = 0;
    for (const r of rows) {
        sum += r.price;
    }
    return sum;
};
'''

LEDGER_SCALA = '''package shop

object Ledger {
  private val entries = scala.collection.mutable.ArrayBuffer.empty[Long]

  def record(amount: Long): Unit = {
    val rounded = amount
    entries += rounded
  }

  def balance: Long = entries.sum
}
'''

CART_KT = '''package shop

class Cart(private val items: MutableList<Long>) {
    fun add(price: Long) {
        val checked = price
        items.add(checked)
    }
}
'''

VIEW_SWIFT = '''import UIKit

final class CartView: UIView {
    override func layoutSubviews() {
        super.layoutSubviews()
        let inset: CGFloat = 8
        frame = bounds.insetBy(dx: inset, dy: inset)
    }
}
'''


ORDERS_CS = '''using System.Threading.Tasks;

namespace Shop
{
    public sealed class OrdersController
    {
        public async Task<decimal> Total(int id)
        {
            var price = await Load(id);
            var rounded = price;
            return rounded;
        }
    }
}
'''

CART_PHP = '''<?php

class CartService
{
    public function total(array $items): float
    {
        $sum = array_sum($items);
        $rounded = $sum;
        return $rounded;
    }
}
'''


@pytest.mark.parametrize(("path", "text", "old", "new", "name", "not_name"), [
    # TypeScript: git's default header is the class line; the method is what changed
    ("src/store.ts", STORE_TS, "copy.createdAt = new Date();",
     "copy.createdAt = new Date(Date.now());", "insert", "OrderStore"),
    ("src/store.ts", STORE_TS, "sum += r.price;", "sum += r.price * r.quantity;",
     "totalOf", "insert"),
    ("src/Ledger.scala", LEDGER_SCALA, "val rounded = amount",
     "val rounded = math.round(amount / 100.0) * 100", "record", "Ledger"),
    ("src/Cart.kt", CART_KT, "val checked = price", "val checked = maxOf(price, 0)",
     "add", "Cart"),
    ("src/CartView.swift", VIEW_SWIFT, "let inset: CGFloat = 8", "let inset: CGFloat = 12",
     "layoutSubviews", "CartView"),
    # C# and PHP: git's own drivers, files the signal did not read before
    ("src/OrdersController.cs", ORDERS_CS, "var rounded = price;",
     "var rounded = decimal.Round(price, 2);", "Total", "OrdersController"),
    ("src/CartService.php", CART_PHP, "$rounded = $sum;", "$rounded = round($sum, 2);",
     "total", "CartService"),
])
def test_hunks_name_the_function_in_every_language(tmp_path, path, text, old, new, name,
                                                    not_name):
    # The change is inside the function's body, lines below its first: only the hunk
    # header (a function-context driver: git's own for Kotlin, C# and PHP, ours for
    # TypeScript, Scala and Swift) can say which function it is.
    root = tmp_path / "repo"
    write(root, path, text)
    write(root, "README.md", "# shop\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the shop")
    write(root, "README.md", "# shop\n\nsee the code\n")
    git(root, "commit", "-q", "-am", "readme")
    write(root, path, text.replace(old, new))
    git(root, "commit", "-q", "-am", "Fix the rounding of order prices")
    sig = history.read_signal(str(root), _words("order prices rounding is wrong"))
    assert [c.subject for c in sig.commits] == ["Fix the rounding of order prices"]
    assert (path, name) in sig.touched
    assert (path, not_name) not in sig.touched


def test_header_and_definition_names_across_languages():
    assert history.header_name("async increment<Entity extends ObjectLiteral>(") == "increment"
    assert history.header_name("const extractValue = (") == "extractValue"
    assert history.header_name("export default class Foo extends Bar {") == "Foo"
    assert history.header_name("private static merge<T>(") == "merge"
    assert history.header_name("public void doThing(int x) {") == "doThing"
    assert history.header_name("if (ready) {") is None
    assert history.defined_name("export function ForeignKey<") == "ForeignKey"
    assert history.defined_name("private fun compute(x: Int): Int {") == "compute"
    assert history.defined_name("override def apply(x: Int): Int = {") == "apply"
    assert history.defined_name("def self.call(env)") == "call"
    assert history.defined_name("    return value") is None


def test_every_source_extension_has_a_driver_and_a_scanner():
    # The diffs read are those of files the map names functions in, and each has a
    # function-context driver in the shipped attributes file (git's or DRIVERS').
    from ctxtools.source.scan.languages import EXTENSIONS

    attrs = {}
    for line in Path(history._attributes()).read_text().splitlines():
        if line.startswith("*."):
            glob, driver = line.split()
            attrs[glob[2:]] = driver.removeprefix("diff=")
    assert set(attrs) == set(history.SOURCE_EXTS)
    for ext, driver in attrs.items():
        assert f".{ext}" in EXTENSIONS, ext
        assert not driver.startswith("ctx") or driver in history.DRIVERS, (ext, driver)
    assert set(history.DRIVERS) <= set(attrs.values())


REFUNDS = '''"""Refunds of paid invoices."""


def refund_amount(paid, returned):
    """What goes back to the customer for RETURNED of PAID."""
    return min(paid, returned)


def refund_fee(amount):
    """The processor's fee kept on a refund of AMOUNT."""
    return round(amount * 0.02, 2)
'''


def _repo_with_tickets(root: Path) -> Path:
    """``_repo``, then a commit citing ticket #4321 that changes ``refund_fee``, and one
    after it citing nothing."""
    _repo(root)
    write(root, "billing/refunds.py", REFUNDS)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Add refunds")
    write(root, "billing/refunds.py", REFUNDS.replace("0.02, 2)", "0.025, 2)"))
    git(root, "commit", "-q", "-am", "Keep the processor's new fee (#4321)")
    write(root, "srv/server.go", SERVER.replace("StatusOK)", "http.StatusAccepted)", 1))
    git(root, "commit", "-q", "-am", "health: accepted")
    return root


def test_a_task_citing_a_ticket_links_the_commits_that_cited_it(tmp_path, monkeypatch):
    root = _repo_with_tickets(tmp_path / "repo")
    task = "Follow-up to #4321: still wrong for partial ones"
    q = parse_query(task)
    assert q.refs == ("#4321",)
    sig = history.read_signal(str(root), q.words, refs=q.refs)
    assert set(sig.linked) == {("billing/refunds.py", "refund_fee")}
    assert [c.subject for c in sig.linked_commits] == ["Keep the processor's new fee (#4321)"]
    assert sig.linked_files == {"billing/refunds.py"}
    # Another number, a longer one, or none: no link (the words alone still match).
    for other in ("Follow-up to #432: still wrong", "Follow-up to #43210: still wrong",
                  "Follow-up: still wrong for partial ones"):
        oq = parse_query(other)
        assert history.read_signal(str(root), oq.words, refs=oq.refs).linked == {}
    # A task of nothing but its ticket is read for it.
    assert set(history.read_signal(str(root), (), refs=("#4321",)).linked) == set(sig.linked)
    # A ticket more commits cite than REF_MAX_COMMITS links to none of them.
    git(root, "commit", "-q", "--allow-empty", "-m", "More on #4321")
    monkeypatch.setattr(history, "REF_MAX_COMMITS", 1)
    assert history.read_signal(str(root), q.words, refs=q.refs).linked == {}
    monkeypatch.setattr(history, "REF_MAX_COMMITS", 2)
    assert set(history.read_signal(str(root), q.words, refs=q.refs).linked) == set(sig.linked)


def test_citing_commits_reads_links_and_keeps_the_latest():
    messages = [
        ("c3", "Closes https://github.com/o/r/issues/4321", "Closes https://github.com/o/r/issues/4321"),
        ("c2", "JENKINS-19446: fix the queue", "JENKINS-19446: fix the queue"),
        ("c1", "Fix #4321 (first try)", "Fix #4321 (first try)"),
        ("c0", "Bump to 4321.0", "Bump to 4321.0"),
    ]
    got = history.citing_commits(messages, ("#4321", "JENKINS-19446"))
    assert [c.sha for c in got] == ["c3", "c2", "c1"]
    assert history.citing_commits(messages, ()) == []
    assert history.citing_commits(messages, ("UTF-8",)) == []


def test_a_pack_shows_what_a_commit_of_the_tasks_ticket_changed(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    for i in range(40):  # (more than a small pack holds: what it shows is chosen)
        said = "is wrong when the queue is partial" if i % 5 == 0 else "drains its queue"
        write(root, f"jobs/job_{i:02}.py", f'def run_job_{i:02}(queue):\n'
              f'    """Job {i} {said}."""\n'
              f'    return [item for item in queue if item.ready][:{i + 1}]\n')
    _repo_with_tickets(root)
    task = "Follow-up to #4321: still wrong for partial ones"
    got = _pack(root, task, tokens=700)
    row = _row(got, "billing/refunds.py")
    assert any("citing the task's tickets" in r and "(#4321)" in r for r in row["reasons"])
    assert "def refund_fee(amount):" in got.text
    # The ticket's part of the chunk's score is a part of its own, not the pointers'.
    fee = next(c for c in row["chunk_scores"] if c["chunk"].startswith("refund_fee "))
    assert fee["tickets"] > 0 and fee["pointers"] == 0
    assert fee["score"] == pytest.approx(
        sum(fee.get(k, 0) for k in ("words", "pointers", "tickets", "file", "callees",
                                    "semantic", "history")), abs=0.01)
    # The words alone reach nothing of the file (some jobs say "wrong" and "partial"):
    # without the history it is not packed.
    monkeypatch.setenv("CTX_HISTORY", "0")
    off = _pack(root, task, tokens=700)
    assert "def refund_fee(amount):" not in off.text
    assert "def run_job_" in off.text


def test_ctx_pack_explains_the_tickets_part(script_runner, tmp_path):
    root = _repo_with_tickets(tmp_path / "repo")
    task = "Follow-up to #4321: still wrong"
    r = script_runner.run(["ctx-pack", "--task", task, "-t", "4000", "--explain", "."], cwd=root)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stderr.splitlines() if x.strip().startswith("refund_fee "))
    assert "+ tickets " in line or "= tickets " in line
    off = script_runner.run(["ctx-pack", "--task", "Follow-up: still wrong", "-t", "4000",
                             "--explain", "."], cwd=root)
    assert off.returncode == 0
    assert "tickets" not in off.stderr
