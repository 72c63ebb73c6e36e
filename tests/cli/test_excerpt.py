"""ctx-excerpt as a user runs it: output, JSON, budgets, signatures, handles, bad input."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import SCRIPTS, run_bytes, write

DATA = Path(__file__).resolve().parents[1] / "data" / "excerpt"
ALL = ["auth.py", "server.go", "cart.ts", "lexer.rs", "LruCache.java", "inventory.py"]


@pytest.fixture
def src(tmp_path, monkeypatch):
    for name in ALL:
        shutil.copy(DATA / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_text_output(script_runner, src):
    r = script_runner.run(
        ["ctx-excerpt", "-q", "why does tokenize fail", "lexer.rs", "--window", "1"]
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    lines = r.stdout.split("\n")
    # the header names the definitions shown, the most relevant first (ctx-pack's order)
    assert (
        lines[0]
        == "==> lexer.rs <== 99 lines; matched: tokenize; shown: tokenize, Lexer.next_token"
    )
    assert (
        lines[1] == "1\t//! A small lexer for arithmetic expressions: "
        "numbers, identifiers, operators, parens."
    )
    assert lines[15] == "15\t"
    assert lines[16] == "⋮"
    # whole definitions, not ±1 lines: the method tokenize calls, then tokenize itself
    assert (
        lines[17] == "57\t    pub fn next_token(&mut self) -> Result<Option<Token>, LexError> {"
    )
    assert (
        "⋮\n92\tpub fn tokenize(input: &str) -> Result<Vec<Token>, LexError> {\n" in r.stdout
    )
    assert r.stdout.endswith("98\t    Ok(out)\n99\t}\n")


def test_short_t_is_tokens_as_in_every_command(script_runner, src):
    """docs/options.md: -t N is --tokens N here as in ctx-repomap and ctx-pack."""
    args = ["ctx-excerpt", "-q", "tokenize", "lexer.rs", "--json"]
    short = script_runner.run([*args, "-t", "120"])
    long = script_runner.run([*args, "--tokens", "120"])
    assert short.returncode == 0, short.stderr
    assert short.stdout == long.stdout and json.loads(short.stdout)["budget"]["tokens"] == 120


def test_several_files_in_order_and_sorted_by_score(script_runner, src):
    args = ["ctx-excerpt", "-q", "SessionStore sweep", "lexer.rs", "auth.py", "--unmatched", "show"]
    r = script_runner.run(args)
    assert r.returncode == 0
    heads = [x for x in r.stdout.split("\n") if x.startswith("==> ")]
    assert heads[0] == "==> lexer.rs <== 99 lines; no match, last 40 lines"
    assert heads[1].startswith("==> auth.py <== 105 lines; matched: sessionstore, session, store,")
    assert "\n\n==> auth.py" in r.stdout  # a blank line between files
    r2 = script_runner.run(args + ["--sort", "score"])
    heads = [x for x in r2.stdout.split("\n") if x.startswith("==> ")]
    assert heads[0].startswith("==> auth.py")
    assert sorted(r2.stdout.split("\n")) == sorted(r.stdout.split("\n"))


def test_json(script_runner, src):
    r = script_runner.run(
        [
            "ctx-excerpt",
            "--json",
            "-q",
            "RetryAfter",
            "--ident",
            "ErrLimited",
            "server.go",
            "--window",
            "2",
        ]
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    # the engine's terms: names whole and their parts, lower-cased
    assert doc["terms"] == ["retryafter", "retry", "errlimited", "err", "limited"]
    assert doc["options"] == {
        "window": 2,
        "head": 15,
        "max_windows": 6,
        "tail": 40,
        "ignore_case": False,
    }
    (f,) = doc["files"]
    assert f["path"] == "server.go" and f["status"] == "ok" and f["lines"] == 96
    assert f["matched"] == ["retryafter", "retry", "errlimited", "err", "limited"]
    spans = [(s["kind"], s["start"], s["end"]) for s in f["spans"]]
    assert spans[0] == ("head", 1, 15)
    # the RetryAfter method whole, the chunk ctx-pack would show (not ±2 lines)
    assert ("window", 69, 79) in spans
    by_start = {s["start"]: s for s in f["spans"]}
    ra = by_start[69]
    assert ra["terms"] == ["retryafter", "retry"]
    [chunk] = ra["chunks"]
    assert chunk["chunk"] == "Limiter.RetryAfter 69-79" and chunk["score"] == ra["score"]
    parts = chunk["words"] + chunk["pointers"] + chunk["file"] + chunk["callees"]
    assert abs(parts - chunk["score"]) < 0.01 and chunk["pointers"] > 0  # its name is asked
    assert ra["score"] == max(s["score"] for s in f["spans"])  # the best window
    assert "func (l *Limiter) RetryAfter(key string) time.Duration {\n" in ra["text"]
    assert f["score"] > 0 and f["matches"] == 4 and f["omitted_windows"] == 0


def test_the_named_function_in_every_language(script_runner, src):
    q = "verify_token RetryAfter applyDiscount read_number evictEldest reconcile_stock"
    r = script_runner.run(["ctx-excerpt", "--json", "-q", q, *ALL])
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    bodies = {
        "auth.py": 'raise TokenError("token expired")',
        "server.go": "return time.Duration(missing / b.rate * float64(time.Second))",
        "cart.ts": "this.discount = discount;",
        "lexer.rs": "Token::Number(text.parse().unwrap_or(0.0))",
        "LruCache.java": "index.remove(eldest.key);",
        "inventory.py": "corrections.append(move)",
    }
    for f in doc["files"]:
        text = "".join(s["text"] for s in f["spans"])
        assert bodies[f["path"]] in text, f["path"]


@pytest.mark.process
def test_files_from_with_nul_separators(script_runner, src):
    listing = src / "list"
    listing.write_bytes(b"auth.py\0cart.ts\0")
    r = script_runner.run(["ctx-excerpt", "-q", "Cart", "--files-from", str(listing), "-0"])
    assert r.returncode == 0
    assert [x for x in r.stdout.split("\n") if x.startswith("==> ")] == [
        "==> cart.ts <== 67 lines; matched: cart; shown: emptyCart, Cart",
    ]
    assert r.stdout.endswith("\n\nno match in 1 file:\nauth.py\n")


@pytest.mark.process
def test_stdin(script_runner, src):
    # stdin has no name to pick a scanner by: a text without definitions, windowed by lines
    r = run_bytes(
        script_runner,
        ["ctx-excerpt", "-q", "evictEldest", "--head", "0", "--window", "0"],
        (DATA / "LruCache.java").read_bytes(),
    )
    assert r.returncode == 0
    assert r.stdout == (
        "==> <stdin> <== 114 lines; matched: evicteldest, evict, eldest\n"
        "61\t            evictEldest();\n"
        "⋮\n"
        "65\t    private void evictEldest() {\n"
    )


def test_handle_reference(script_runner, src, store_dir):
    from ctxtools.store import HandleStore

    HandleStore(store_dir).put_bytes((DATA / "auth.py").read_bytes(), name="authsrc")
    r = script_runner.run(
        ["ctx-excerpt", "-q", "sweep", "ctx:authsrc", "--window", "0", "--head", "1"]
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("==> ctx:authsrc <== 105 lines; matched: sweep\n")
    assert "99\t    def sweep(self, now: float | None = None) -> int:\n" in r.stdout
    bad = script_runner.run(["ctx-excerpt", "-q", "sweep", "ctx:nosuch"])
    assert bad.returncode == 1
    assert bad.stderr.startswith("ctx-excerpt: error: ") and "nosuch" in bad.stderr


@pytest.mark.process
def test_missing_files_are_named_and_exit_1(script_runner, src):
    r = script_runner.run(["ctx-excerpt", "-q", "Cart", "cart.ts", "gone.py", "also-gone.rs"])
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr == (
        "ctx-excerpt: error: 2 files cannot be read: gone.py, also-gone.rs "
        "(--keep-going excerpts the rest)\n"
    )
    one = script_runner.run(["ctx-excerpt", "-q", "Cart", "gone.py"])
    assert one.returncode == 1 and one.stderr == "ctx-excerpt: error: gone.py: no such file\n"
    d = script_runner.run(["ctx-excerpt", "-q", "Cart", str(src)])
    assert d.returncode == 1 and "is a directory" in d.stderr


def test_keep_going_prints_the_rest_and_still_exits_1(script_runner, src):
    r = script_runner.run(["ctx-excerpt", "--keep-going", "-q", "Cart", "gone.py", "cart.ts"])
    assert r.returncode == 1
    assert r.stdout.startswith("==> cart.ts <== 67 lines; matched: cart; shown: emptyCart, Cart\n")
    assert r.stderr == "ctx-excerpt: error: gone.py: no such file\n"
    j = script_runner.run(
        ["ctx-excerpt", "--json", "--keep-going", "-q", "Cart", "gone.py", "cart.ts"]
    )
    assert j.returncode == 1
    files = json.loads(j.stdout)["files"]
    assert [(f["path"], f["status"]) for f in files] == [
        ("cart.ts", "ok"),
        ("gone.py", "unreadable"),
    ]


def test_binary_files_are_skipped_with_a_note(script_runner, src):
    (src / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00verify_token")
    r = script_runner.run(["ctx-excerpt", "-q", "verify_token", "blob.bin", "auth.py"])
    assert r.returncode == 0
    assert r.stderr == "ctx-excerpt: blob.bin: binary file, skipped\n"
    assert r.stdout.startswith("==> auth.py <== ")
    j = script_runner.run(["ctx-excerpt", "--json", "-q", "verify_token", "blob.bin"])
    assert json.loads(j.stdout)["files"] == [{"path": "blob.bin", "status": "binary"}]


@pytest.mark.parametrize(
    "args, message",
    [
        (["-q", "fix the bug in it"], "no usable word in the query 'fix the bug in it'"),
        (["-q", ""], "no usable word"),
        ([], "nothing to look for (give --query TEXT or --ident NAME; see ctx-excerpt --help)"),
        (["--ident", "not an ident"], "--ident 'not an ident' is not an identifier"),
    ],
)
def test_no_usable_identifier_is_a_usage_error(script_runner, src, args, message):
    r = script_runner.run(["ctx-excerpt", *args, "auth.py"])
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.startswith("ctx-excerpt: error: ")
    assert message in r.stderr


@pytest.mark.process
def test_crlf_and_invalid_utf8_keep_line_numbers(script_runner, src):
    raw = (DATA / "auth.py").read_bytes()
    (src / "crlf.py").write_bytes(raw.replace(b"\n", b"\r\n"))
    lines = raw.split(b"\n")
    lines[3] = b"signature is an \xff\xfe HMAC \xe2\x82"
    (src / "bad.py").write_bytes(b"\n".join(lines))
    plain = script_runner.run(["ctx-excerpt", "-q", "sweep", "auth.py"])
    crlf = script_runner.run(["ctx-excerpt", "-q", "sweep", "crlf.py"])
    bad = script_runner.run(["ctx-excerpt", "-q", "sweep", "bad.py"])
    assert crlf.returncode == 0 and bad.returncode == 0
    assert crlf.stdout == plain.stdout.replace("auth.py", "crlf.py")
    assert "\r" not in crlf.stdout
    assert "4\tsignature is an \ufffd\ufffd HMAC \ufffd\n" in bad.stdout
    body = lambda out: out.split("\n")[5:]  # noqa: E731
    assert body(bad.stdout) == body(plain.stdout)


def test_large_file_and_giant_line(script_runner, src):
    big = (DATA / "inventory.py").read_bytes() * 60  # ~600 KB: streamed, windowed by lines
    (src / "big.py").write_bytes(big)
    r = script_runner.run(["ctx-excerpt", "-q", "reconcile_stock", "big.py"])
    assert r.returncode == 0
    assert r.stdout.startswith(
        "==> big.py <== 16440 lines; matched: reconcile_stock, reconcile, stock; "
        "114 more windows above the floor\n"
    )
    # all copies score alike: the first six are kept (ties: the earlier line)
    defs = [
        x
        for x in r.stdout.split("\n")
        if x.endswith("def reconcile_stock(ledger: Ledger, counted: dict[str, int]) -> list[Move]:")
    ]
    assert [int(x.split("\t")[0]) for x in defs] == [252 + 274 * k for k in range(6)]
    line = b"x = '" + b"0123456789" * 524288 + b"'  # crc_table\n"  # one 5 MB line
    (src / "giant.py").write_bytes(b"import zlib\n" + line + b"def crc_table():\n    return x\n")
    g = script_runner.run(["ctx-excerpt", "-q", "crc_table", "giant.py"])
    assert g.returncode == 0
    assert len(g.stdout) < 1500
    assert "\n2\tx = '0123456789" in g.stdout
    assert f"…[+{len(line) - 1 - 500} chars]\n" in g.stdout
    assert "\n3\tdef crc_table():\n" in g.stdout


def test_tokens_budget_fits_and_reports_drops(script_runner, src):
    args = [
        "ctx-excerpt",
        "--heuristic",
        "-q",
        "SessionStore sweep Cart",
        "auth.py",
        "lexer.rs",
        "cart.ts",
        "--window",
        "3",
        "--unmatched",
        "show",
    ]
    full = script_runner.run(args)
    from ctxtools.tokens import HeuristicRuler

    count = HeuristicRuler().count
    total = count(full.stdout)
    r = script_runner.run(args + ["--tokens", str(total - 10)])
    assert r.returncode == 0
    assert count(r.stdout) <= total - 10
    assert "==> lexer.rs" not in r.stdout  # nothing matched there: dropped first
    assert r.stderr.splitlines() == [
        f"ctx-excerpt: --tokens {total - 10}: dropped 1 part(s) of 1 file(s)",
        "ctx-excerpt:   dropped lexer.rs: whole file (nothing matched)",
    ]
    tight = script_runner.run(args + ["--tokens", "300", "--json"])
    doc = json.loads(tight.stdout)
    assert doc["budget"]["tokens"] == 300 and doc["budget"]["used"] <= 300
    assert doc["budget"]["counter"] == "heuristic" and doc["budget"]["exact"] is False
    kinds = [(d["path"], d["kind"]) for d in doc["budget"]["dropped"]]
    assert kinds[0] == ("lexer.rs", "file")
    assert ("auth.py", "window") in kinds
    # what stays is what is worth most: no window kept scores under one dropped that
    # would have fitted in its place (ctx-pack's order of relevance)
    kept = [s["score"] for f in doc["files"] for s in f["spans"] if s["kind"] == "window"]
    assert kept and min(kept) > 0
    for f in doc["files"]:
        assert f["spans"][0]["kind"] == "head"  # a kept file keeps its head


def test_tokens_with_the_exact_ruler(script_runner, src):
    r = script_runner.run(
        [
            "ctx-excerpt",
            "-q",
            "reconcile_stock ledger",
            "inventory.py",
            "auth.py",
            "--tokens",
            "400",
        ]
    )
    assert r.returncode == 0
    from ctxtools.tokens import get_ruler

    choice = get_ruler()
    assert choice.ruler.count(r.stdout) <= 400
    assert "dropped" in r.stderr


def test_signatures(script_runner, src):
    (src / "notes.txt").write_text("verify_token is here\n")
    r = script_runner.run(["ctx-excerpt", "--signatures", "auth.py", "server.go", "notes.txt"])
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "==> auth.py <== 105 lines; python, " in out
    assert (
        "\n59\tdef verify_token(token: str, secret: bytes, now: float | None = None) -> Claims:"
        in out
    )
    assert "\t  def sweep(self, now: float | None = None) -> int:" in out  # indented: a method
    assert "==> notes.txt <== 1 line; no definition scanner for this file type\n" in out
    assert "return claims" not in out  # no bodies
    j = script_runner.run(["ctx-excerpt", "--signatures", "--json", "-q", "sweep", "auth.py"])
    doc = json.loads(j.stdout)
    (f,) = doc["files"]
    assert f["language"] == "python" and f["matched"] == ["sweep"]
    names = [d["name"] for d in f["definitions"]]
    assert "verify_token" in names and "sweep" in names


def test_deterministic_output(script_runner, src):
    args = [
        "ctx-excerpt",
        "--json",
        "-q",
        "Token Lexer tokenize LexError offset",
        "lexer.rs",
        "auth.py",
    ]
    a = script_runner.run(args)
    b = script_runner.run(args)
    assert a.stdout == b.stdout


@pytest.mark.process
def test_worker_processes_give_the_same_output(script_runner, src):
    (src / "blob.bin").write_bytes(b"\x00\x01verify_token")
    args = ["ctx-excerpt", "--keep-going", "-q", "verify_token Cart tokenize", "--window", "4"]
    files = [*ALL, "blob.bin", "gone.py", *ALL] * 8  # 112 names: 3 chunks of work
    one = script_runner.run([*args, "--jobs", "1", *files])
    two = script_runner.run([*args, "--jobs", "2", *files])
    assert one.returncode == two.returncode == 1
    assert two.stdout == one.stdout
    assert two.stderr == one.stderr
    assert (
        one.stderr.splitlines()
        == [
            "ctx-excerpt: blob.bin: binary file, skipped",
            "ctx-excerpt: error: gone.py: no such file",
        ]
        * 8
    )


def test_signatures_of_an_extensionless_script_by_its_shebang(script_runner, src):
    # issue 19: no extension, but a #! line naming Ruby (with env -S) or bash (CRLF)
    for rel, text in SCRIPTS.items():
        write(src, rel, text)
    write(src, "bin/report", "#!/usr/bin/perl\nsub report { 1 }\n")
    r = script_runner.run(
        ["ctx-excerpt", "--signatures", "bin/deploy", "bin/lint", "scripts/setup", "bin/report"]
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "==> bin/deploy <== 5 lines; ruby, 1 definition\n3\tdef deploy_release(tag)\n" in out
    assert "==> bin/lint <== 4 lines; ruby, 1 definition\n" in out
    assert "==> scripts/setup <== 5 lines; bash, 1 definition\n" in out
    assert "setup_workspace()" in out
    assert "==> bin/report <== 2 lines; no definition scanner for this file type\n" in out


def test_signatures_of_a_file_over_512_kb_are_not_scanned(script_runner, src):
    (src / "huge.py").write_bytes((DATA / "inventory.py").read_bytes() * 60)
    r = script_runner.run(["ctx-excerpt", "--signatures", "huge.py", "server.go"])
    assert r.returncode == 0
    assert r.stdout.startswith("==> huge.py <== 589380 bytes; over 512 KB, not scanned\n")
    assert "func (l *Limiter) Allow(key string) error" in r.stdout
    j = script_runner.run(["ctx-excerpt", "--signatures", "--json", "huge.py"])
    (f,) = json.loads(j.stdout)["files"]
    assert f["status"] == "too_large" and f["definitions"] == []


def test_ignore_case_and_empty_inputs(script_runner, src):
    # -i changes nothing: the engine matches words regardless of case
    args = ["ctx-excerpt", "-q", "LRUCACHE", "LruCache.java", "--window", "0"]
    r = script_runner.run(["ctx-excerpt", "-i", *args[1:]])
    assert r.returncode == 0
    assert r.stdout == script_runner.run(args).stdout
    assert r.stdout.startswith("==> LruCache.java <== 114 lines; matched: lrucache; ")
    assert "13\tpublic class LruCache<K, V> {\n" in r.stdout
    e = run_bytes(script_runner, ["ctx-excerpt", "-q", "frobnicate"], b"")
    assert e.returncode == 0 and e.stdout == "==> <stdin> <== 0 lines; empty\n"
    (src / "none").write_bytes(b"")
    n = script_runner.run(["ctx-excerpt", "-q", "frobnicate", "--files-from", "none"])
    assert n.returncode == 0 and n.stdout == "" and n.stderr == ""


def test_same_bytes_whatever_the_hash_seed(src):
    import os
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "ctx-excerpt"
    q = "Token Lexer tokenize LexError offset verify_token claims Cart money ledger record"
    outs = set()
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = subprocess.run(
            [str(exe), "--json", "-q", q, *ALL], capture_output=True, env=env, check=True
        )
        outs.add(proc.stdout)
    assert len(outs) == 1


def heads(text: str) -> list[str]:
    return [x for x in text.split("\n") if x.startswith("==> ")]


def test_several_files_name_those_with_no_match(script_runner, src):
    """Issue 10: over many files, most match nothing; their heads and tails were most of
    the output. With more than one input they are named in one closing list."""
    args = ["ctx-excerpt", "-q", "SessionStore", "lexer.rs", "auth.py", "cart.ts"]
    r = script_runner.run(args)
    assert r.returncode == 0 and r.stderr == ""
    auth = "==> auth.py <== 105 lines; matched: sessionstore, session, store; shown: "
    [head] = heads(r.stdout)
    assert head.startswith(auth)
    assert r.stdout.endswith("\n\nno match in 2 files:\nlexer.rs\ncart.ts\n")
    assert "\t" not in r.stdout.split("no match in")[1]
    shown = script_runner.run([*args, "--unmatched", "show"])
    assert heads(shown.stdout) == [
        "==> lexer.rs <== 99 lines; no match, last 40 lines",
        head,
        "==> cart.ts <== 67 lines; no match, last 40 lines",
    ]
    assert "no match in" not in shown.stdout
    omit = script_runner.run([*args, "--unmatched", "omit"])
    assert omit.stdout == r.stdout.split("\nno match in")[0]
    # nothing matched anywhere: only the list
    none = script_runner.run(["ctx-excerpt", "-q", "frobnicate", "lexer.rs", "cart.ts"])
    assert none.stdout == "no match in 2 files:\nlexer.rs\ncart.ts\n"
    # one file alone is still shown by its head and tail, unless asked
    one = script_runner.run(["ctx-excerpt", "-q", "SessionStore", "lexer.rs"])
    assert heads(one.stdout) == ["==> lexer.rs <== 99 lines; no match, last 40 lines"]
    named = script_runner.run(
        ["ctx-excerpt", "-q", "SessionStore", "lexer.rs", "--unmatched", "name"]
    )
    assert named.stdout == "no match in 1 file:\nlexer.rs\n"


def test_unmatched_in_json_and_through_every_path(script_runner, src):
    args = ["ctx-excerpt", "-q", "SessionStore Cart", "lexer.rs", "auth.py", "server.go", "cart.ts"]
    j = script_runner.run([*args, "--json"])
    doc = json.loads(j.stdout)
    assert doc["unmatched"] == ["lexer.rs", "server.go"]
    # "matches": the chunks with evidence of their own
    assert [(f["path"], f["matches"]) for f in doc["files"]] == [("auth.py", 8), ("cart.ts", 3)]
    shown = json.loads(script_runner.run([*args, "--json", "--unmatched", "show"]).stdout)
    assert "unmatched" not in shown
    assert [(f["path"], f["matches"]) for f in shown["files"]] == [
        ("lexer.rs", 0),
        ("auth.py", 8),
        ("server.go", 0),
        ("cart.ts", 3),
    ]
    omitted = json.loads(script_runner.run([*args, "--json", "--unmatched", "omit"]).stdout)
    assert "unmatched" not in omitted and omitted["files"] == doc["files"]
    # printed as it goes, or through a whole run (a budget that fits all): the same text
    streamed = script_runner.run(args)
    whole = script_runner.run([*args, "--tokens", "1000000", "--heuristic"])
    assert whole.stdout == streamed.stdout and whole.stderr == ""
    by_score = script_runner.run([*args, "--sort", "score"])
    best_first = sorted(doc["files"], key=lambda f: -f["score"])
    assert [h.split(" ")[1] for h in heads(by_score.stdout)] == [f["path"] for f in best_first]
    assert best_first[0]["score"] > best_first[1]["score"]
    assert by_score.stdout.endswith("no match in 2 files:\nlexer.rs\nserver.go\n")


def test_a_budget_counts_the_list_of_files_with_no_match(script_runner, src):
    names = [f"copy{k:02}.rs" for k in range(40)]
    for name in names:
        shutil.copy(DATA / "lexer.rs", src / name)
    args = ["ctx-excerpt", "--heuristic", "-q", "verify_token", "auth.py", *names]
    full = script_runner.run(args)
    assert full.stdout.endswith("\n".join(names) + "\n")
    from ctxtools.tokens import HeuristicRuler

    count = HeuristicRuler().count
    budget = count(full.stdout) - 20
    r = script_runner.run([*args, "--tokens", str(budget)])
    assert r.returncode == 0
    assert count(r.stdout) <= budget
    assert heads(r.stdout) == heads(full.stdout)  # the matched file stays whole
    tail = r.stdout.split("no match in 40 files:\n")[1].splitlines()
    assert tail[:-1] == names[: len(tail) - 1] and tail[-1] == f"… and {41 - len(tail)} more"
    assert r.stderr == (
        f"ctx-excerpt: --tokens {budget}: {41 - len(tail)} of the 40 files with no match "
        "left unnamed\n"
    )
    doc = json.loads(script_runner.run([*args, "--tokens", str(budget), "--json"]).stdout)
    assert doc["unmatched"] == names  # JSON names them all; the budget is the text's


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--signatures", "--unmatched", "name"],
            "--unmatched applies to excerpts, not to --signatures",
        ),
        (["-q", "x", "--unmatched", "list"], "invalid value for '--unmatched'"),
    ],
)
def test_unmatched_usage_errors(script_runner, src, args, message):
    r = script_runner.run(["ctx-excerpt", *args, "auth.py", "cart.ts"])
    assert r.returncode == 2
    assert message in r.stderr and r.stdout == ""


@pytest.mark.process
def test_json_of_a_file_whose_name_is_not_utf8(script_runner, tmp_path, monkeypatch):
    """Issue 11: a name with undecodable bytes was a TypeError in --json; it is shown with
    U+FFFD there (as ctx-repomap does), with "path_quoted" the name as the text shows it:
    quoted, each such byte's octal escape (the name rule; the text showed its own bytes)."""
    import os

    monkeypatch.chdir(tmp_path)
    raw = b"caf\xe9.py"
    with open(os.path.join(os.fsencode(tmp_path), raw), "wb") as fh:
        fh.write(b"def verify_token():\n    return 1\n")
    name = os.fsdecode(raw)
    j = script_runner.run(["ctx-excerpt", "--json", "--ident", "verify_token", name])
    assert j.returncode == 0, j.stderr
    (f,) = json.loads(j.stdout)["files"]
    assert f["path"] == "caf\ufffd.py" and f["matched"] == ["verify_token", "verify", "token"]
    assert f["path_quoted"] == '"caf\\351.py"'
    s = script_runner.run(["ctx-excerpt", "--signatures", "--json", name])
    assert s.returncode == 0, s.stderr
    (f,) = json.loads(s.stdout)["files"]
    assert f["path"] == "caf\ufffd.py" and f["definitions"][0]["name"] == "verify_token"
    # unreadable and unmatched names, and budget drops, go through the same escape
    (tmp_path / "other.py").write_bytes(b"x = 1\n" * 30)
    k = script_runner.run(
        [
            "ctx-excerpt",
            "--json",
            "--keep-going",
            "--ident",
            "verify_token",
            "other.py",
            name,
            name + "x",
        ]
    )
    assert k.returncode == 1
    doc = json.loads(k.stdout)
    assert doc["unmatched"] == ["other.py"]
    assert doc["files"][-1]["path"] == "caf\ufffd.pyx"
    assert doc["files"][-1]["error"] == '"caf\\351.pyx": no such file'
    b = script_runner.run(
        ["ctx-excerpt", "--json", "--tokens", "5", "--heuristic", "--ident", "verify_token", name]
    )
    assert b.returncode == 0, b.stderr
    assert json.loads(b.stdout)["budget"]["dropped"][-1]["path"] == "caf\ufffd.py"
    t = run_bytes(script_runner, ["ctx-excerpt", "--ident", "verify_token", name], b"")
    assert t.stdout.startswith('==> "caf\\351.py" <== 2 lines')


# --- descriptors and resource limits (issue 21, item 13) -------------------------------------


def test_1200_files_in_one_process_under_an_open_file_limit_of_1024(tmp_path):
    from helpers import many_sources, run_with_open_file_limit

    names = many_sources(tmp_path, 1200)
    args = ["ctx-excerpt", "-q", "connect_7", "--tokens", "4000", "--jobs", "1", *names]
    r = run_with_open_file_limit(args, 1024, tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Too many open files" not in r.stderr
    assert "==> m0007.py <==" in r.stdout


@pytest.mark.script_launch_mode("inprocess")  # monkeypatches the system calls
def test_the_open_file_limit_is_an_error_even_with_keep_going(script_runner, tmp_path, monkeypatch):
    import errno

    from helpers import fail_opening, many_sources

    names = many_sources(tmp_path, 3)
    monkeypatch.chdir(tmp_path)
    fail_opening(monkeypatch, "m0001.py", errno.EMFILE)
    r = script_runner.run(["ctx-excerpt", "-q", "connect_1", "--keep-going", *names])
    assert r.returncode == 1
    assert r.stdout == ""  # not the other files, as if this one were merely missing
    assert r.stderr.splitlines() == [
        "ctx-excerpt: error: m0001.py: Too many open files (the open-file limit was "
        "reached: raise it (ulimit -n) or give fewer files)"
    ]


def test_explain_says_what_was_shown_and_left_out(script_runner, src):
    """Issue 20.9: --explain in ctx-pack's shape on stderr (the budget, each shown file's
    score and tokens, each span and why, what was left out and why); --json carries it as
    "explain"; the output itself is unchanged."""
    args = ["ctx-excerpt", "-q", "tokenize lexer", "lexer.rs", "auth.py", "--tokens", "900"]
    plain = script_runner.run(args)
    r = script_runner.run([*args, "--explain"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == plain.stdout
    err = r.stderr.splitlines()
    budget = [line for line in err if line.startswith("budget ")]
    assert budget and budget[0].startswith("budget 900 tokens (cl100k_base); used ")
    assert "chosen (1)" in err
    assert any(line.startswith("  lexer.rs  score ") and " tokens  " in line for line in err)
    assert "    head 1-15: the first lines, always shown (--head)" in err
    # each window: its chunk, its score and the score's parts, as ctx-pack's chunk_scores
    import re

    line = next(x for x in err if x.startswith("    window 92-99  score "))
    m = re.fullmatch(
        r"    window 92-99  score ([\d.]+): tokenize 92-99: words ([\d.]+), pointers ([\d.]+),"
        r" file ([\d.]+), callees ([\d.]+); terms: tokenize, lexer",
        line,
    )
    assert m, line
    assert float(m[2]) > 0 and abs(float(m[1]) - sum(float(x) for x in m.groups()[1:])) < 0.02
    assert any(line.startswith("left out (") for line in err)
    assert any(line.startswith("  auth.py: nothing matched") for line in err)
    doc = json.loads(script_runner.run([*args, "--explain", "--json"]).stdout)
    ex = doc["explain"]
    assert ex["command"] == "ctx-excerpt" and ex["budget"]["tokens"] == 900
    [lexer] = ex["chosen"]
    assert lexer["what"] == "lexer.rs" and lexer["score"] > 0 and lexer["tokens"] > 0
    shown = [s for s in doc["files"][0]["spans"]]
    assert [p["what"] for p in lexer["parts"]] == [
        f"{s['kind']} {s['start']}-{s['end']}" for s in shown
    ]
    dropped = {f"{d['path']} window {d['start']}-{d['end']}" for d in doc["budget"]["dropped"]}
    assert dropped <= {i["what"] for i in ex["left_out"]}


def test_explain_does_not_go_with_memory(script_runner, src):
    (src / "notes.md").write_text("# Lexer\n\nThe lexer tokenizes.\n")
    r = script_runner.run(["ctx-excerpt", "--memory", "notes.md", "-q", "lexer", "--explain"])
    assert r.returncode == 2
    assert r.stderr.startswith("ctx-excerpt: error: --explain and --memory do not go together")


SESSIONS_PY = '''"""Sessions kept in memory, with an expiry."""

import time


class SessionCache:
    """Sessions by id, each with the time it expires."""

    def __init__(self, ttl: float = 300.0):
        self.ttl = ttl
        self.items: dict[str, tuple[float, dict]] = {}

    def put(self, session_id: str, data: dict) -> None:
        self.items[session_id] = (time.time() + self.ttl, data)

    def get(self, session_id: str) -> dict | None:
        entry = self.items.get(session_id)
        if entry is None:
            return None
        expires, data = entry
        if expires < time.time():
            return None
        return data

    def purge_expired(self, now: float | None = None) -> int:
        """Drop every session whose expiry has passed; how many went."""
        now = time.time() if now is None else now
        stale = [key for key, (expires, _data) in self.items.items() if expires < now]
        for key in stale:
            del self.items[key]
        return len(stale)


def render_profile(user: dict) -> str:
    name = user.get("name", "anonymous")
    return f"<h1>{name}</h1>"
'''

STORE_GO = """// Package svc keeps sessions for the HTTP service.
package svc

import (
\t"sync"
\t"time"
)

// Store holds sessions and their expiry.
type Store struct {
\tmu      sync.Mutex
\texpires map[string]time.Time
}

// Touch extends a session's expiry.
func (s *Store) Touch(id string, ttl time.Duration) {
\ts.mu.Lock()
\tdefer s.mu.Unlock()
\ts.expires[id] = time.Now().Add(ttl)
}

// Expired lists the sessions whose expiry has passed, and drops them.
func (s *Store) Expired(now time.Time) []string {
\ts.mu.Lock()
\tdefer s.mu.Unlock()
\tvar gone []string
\tfor id, at := range s.expires {
\t\tif at.Before(now) {
\t\t\tdelete(s.expires, id)
\t\t\tgone = append(gone, id)
\t\t}
\t}
\treturn gone
}

// Health reports that the service is up.
func Health() string {
\treturn "ok"
}
"""


@pytest.mark.parametrize(
    "task, both",
    [
        ("stale sessions are never purged after their expiry", True),
        ("the Go store never drops expired sessions", True),
        ("render_profile shows anonymous for every user", False),  # the pack: one file
    ],
)
def test_excerpt_and_pack_show_the_same_best_window(
    script_runner, tmp_path, monkeypatch, task, both
):
    """Issue 26: one engine. For the same task over the same files, the window ctx-excerpt
    shows first (its most relevant) is the chunk ctx-pack shows first of that file, with
    the same score and parts, in Python and in Go."""
    from helpers import git

    repo = tmp_path / "repo"
    write(repo, "app/sessions.py", SESSIONS_PY)
    write(repo, "svc/store.go", STORE_GO)
    write(repo, "README.md", "# demo\n\nA service that keeps sessions.\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    monkeypatch.chdir(repo)
    pack = script_runner.run(["ctx-pack", "-q", task, "--json", "--tokens", "8000", "."])
    assert pack.returncode == 0, pack.stderr
    best_in_pack = {}
    for row in json.loads(pack.stdout)["files"]:
        scores = row.get("chunk_scores")
        if scores:
            best_in_pack[row["path"]] = max(scores, key=lambda c: c["score"])
    assert "app/sessions.py" in best_in_pack and ("svc/store.go" in best_in_pack) == both
    files = ["README.md", "app/sessions.py", "svc/store.go"]  # what the pack ranked
    ex = script_runner.run(["ctx-excerpt", "-q", task, "--json", *files])
    assert ex.returncode == 0, ex.stderr
    for f in json.loads(ex.stdout)["files"]:
        if f["path"] not in best_in_pack:
            continue
        chunks = [c for s in f["spans"] for c in s["chunks"]]
        assert max(chunks, key=lambda c: c["score"]) == best_in_pack[f["path"]], f["path"]
    again = script_runner.run(["ctx-excerpt", "-q", task, "--json", *files])
    assert again.stdout == ex.stdout  # the same bytes on a rerun


@pytest.mark.parametrize("query", ["FAILED", "failure traceback"])
def test_a_log_can_be_searched_for_the_words_reports_are_phrased_in(script_runner, tmp_path, query):
    """FAILED, null, traceback are words a bug report is phrased in (no term beside its
    other words), but a query of nothing else means them: ctx-excerpt -q FAILED refused a
    pytest log ("no usable word", exit 2)."""
    lines = [f"tests/test_api.py::test_case_{i} PASSED" for i in range(400)]
    lines[250] = "tests/test_api.py::test_case_250 FAILED"
    lines[300] = "E   failure: Traceback of the worker follows"
    (tmp_path / "test.log").write_text("\n".join(lines) + "\n")
    r = script_runner.run(["ctx-excerpt", "-q", query, "--max-windows", "1", "test.log"],
                          cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    want = 251 if query == "FAILED" else 301
    assert re.search(rf"^{want}\t", r.stdout, re.M), r.stdout


def test_the_head_starts_after_a_licence_banner(script_runner, tmp_path):
    # libuv's src/unix/internal.h (tests/data/scan/real, MIT) opens with a 21-line licence:
    # the head spent its 15 lines on it (40% of a 500-token excerpt of a C tree)
    src = Path(__file__).resolve().parents[1] / "data" / "scan" / "real" / "internal.h"
    shutil.copy(src, tmp_path / "internal.h")
    r = script_runner.run(["ctx-excerpt", "-q", "uv__msan_unpoison", str(tmp_path / "internal.h"),
                           "--explain"])
    assert r.returncode == 0, r.stderr
    body = r.stdout.splitlines()
    assert body[1] == "22\t#ifndef UV_UNIX_INTERNAL_H_"  # the head: lines 22-36
    assert not any(re.match(r"([1-9]|1\d|2[01])\t", ln) for ln in body)
    assert "head 22-36: the first lines after a licence banner (lines 1-21)" in r.stderr
    # a query the banner itself answers: its window starts there, so the head does too
    r = script_runner.run(["ctx-excerpt", "-q", "Joyent", str(tmp_path / "internal.h")])
    assert r.stdout.splitlines()[1].startswith("1\t/* Copyright Joyent")
    # --head 0 shows no head, banner or not
    r = script_runner.run(["ctx-excerpt", "-q", "uv__msan_unpoison", "--head", "0",
                           str(tmp_path / "internal.h")])
    assert r.stdout.splitlines()[1].startswith("27\t")


def test_a_budget_too_small_for_the_head_shows_the_best_window_alone(script_runner, src):
    # inventory.py: a 15-line head (docstring, imports), ship_order at line 63
    args = ["ctx-excerpt", "-q", "ship_order customer", "--max-windows", "1", "inventory.py"]
    whole = script_runner.run([*args, "--json"])
    spans = json.loads(whole.stdout)["files"][0]["spans"]
    assert [(s["kind"], s["start"]) for s in spans] == [("head", 1), ("window", 63)]
    r = script_runner.run([*args, "-t", "150", "--explain"])
    assert r.returncode == 0, r.stderr
    shown = [line.split("\t", 1)[0] for line in r.stdout.splitlines() if "\t" in line]
    assert "63\tdef ship_order(" in r.stdout and "1" not in shown
    assert "dropped inventory.py: head 1-15 (the file shown by its windows alone)" in r.stderr
    assert "inventory.py head 1-15: over --tokens 150: the file shown by its windows" in (
        r.stderr
    )
    doc = json.loads(script_runner.run([*args, "-t", "150", "--json"]).stdout)
    assert [s["kind"] for s in doc["files"][0]["spans"]] == ["window"]
    assert [(d["kind"], d["start"], d["end"]) for d in doc["budget"]["dropped"]] == [
        ("head", 1, 15)
    ]
    assert doc["budget"]["used"] <= 150
