"""ctx-excerpt as a user runs it: output, JSON, budgets, signatures, handles, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import run_bytes

DATA = Path(__file__).resolve().parent / "data" / "excerpt"
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
    assert lines[0] == "==> lexer.rs <== 99 lines; matched: tokenize"
    assert (
        lines[1] == "   1│ //! A small lexer for arithmetic expressions: "
        "numbers, identifiers, operators, parens."
    )
    assert lines[15] == "  15│ "
    assert lines[16] == "   ⋮"
    assert lines[17:20] == [
        "  91│ ",
        "  92│ pub fn tokenize(input: &str) -> Result<Vec<Token>, LexError> {",
        "  93│     let mut lexer = Lexer::new(input);",
    ]
    assert r.stdout.endswith("  93│     let mut lexer = Lexer::new(input);\n")


def test_several_files_in_order_and_sorted_by_score(script_runner, src):
    args = ["ctx-excerpt", "-q", "verify_token", "lexer.rs", "auth.py"]
    r = script_runner.run(args)
    assert r.returncode == 0
    heads = [x for x in r.stdout.split("\n") if x.startswith("==> ")]
    assert heads == [
        "==> lexer.rs <== 99 lines; no match, last 40 lines",
        "==> auth.py <== 105 lines; matched: verify_token",
    ]
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
    assert doc["identifiers"] == ["RetryAfter", "ErrLimited"]
    assert doc["options"] == {
        "window": 2,
        "head": 15,
        "max_windows": 6,
        "tail": 40,
        "ignore_case": False,
    }
    (f,) = doc["files"]
    assert f["path"] == "server.go" and f["status"] == "ok" and f["lines"] == 96
    assert f["matched"] == ["RetryAfter", "ErrLimited"]
    spans = [(s["kind"], s["start"], s["end"]) for s in f["spans"]]
    assert spans[0] == ("head", 1, 15)
    # the RetryAfter comment (69) and func (70): the window around the definition
    assert ("window", 68, 72) in spans
    by_start = {s["start"]: s for s in f["spans"]}
    assert by_start[68]["identifiers"] == ["RetryAfter"]
    assert by_start[68]["score"] == 6.25
    assert "func (l *Limiter) RetryAfter(key string) time.Duration {\n" in by_start[68]["text"]
    assert f["score"] == sum(s["score"] for s in f["spans"])
    assert f["matches"] == 7 and f["omitted_matches"] == 0 and f["omitted_windows"] == 0


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


def test_files_from_with_nul_separators(script_runner, src):
    listing = src / "list"
    listing.write_bytes(b"auth.py\0cart.ts\0")
    r = script_runner.run(["ctx-excerpt", "-q", "Cart", "--files-from", str(listing), "-0"])
    assert r.returncode == 0
    assert [x for x in r.stdout.split("\n") if x.startswith("==> ")] == [
        "==> auth.py <== 105 lines; no match, last 40 lines",
        "==> cart.ts <== 67 lines; matched: Cart",
    ]


def test_stdin(script_runner, src):
    r = run_bytes(
        script_runner,
        ["ctx-excerpt", "-q", "evictEldest", "--head", "0", "--window", "0"],
        (DATA / "LruCache.java").read_bytes(),
    )
    assert r.returncode == 0
    assert r.stdout == (
        "==> <stdin> <== 114 lines; matched: evictEldest\n"
        "   61│             evictEldest();\n"
        "    ⋮\n"
        "   65│     private void evictEldest() {\n"
    )


def test_handle_reference(script_runner, src, store_dir):
    from ctxtools.store import HandleStore

    HandleStore(store_dir).put_bytes((DATA / "auth.py").read_bytes(), name="authsrc")
    r = script_runner.run(
        ["ctx-excerpt", "-q", "sweep", "ctx:authsrc", "--window", "0", "--head", "1"]
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("==> ctx:authsrc <== 105 lines; matched: sweep\n")
    assert "   99│     def sweep(self, now: float | None = None) -> int:\n" in r.stdout
    bad = script_runner.run(["ctx-excerpt", "-q", "sweep", "ctx:nosuch"])
    assert bad.returncode == 1
    assert bad.stderr.startswith("ctx-excerpt: error: ") and "nosuch" in bad.stderr


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
    assert r.stdout.startswith("==> cart.ts <== 67 lines; matched: Cart\n")
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
        (["-q", "fix the bug in it"], "no usable identifier in the query 'fix the bug in it'"),
        (["-q", ""], "no usable identifier"),
        ([], "nothing to look for (give --query TEXT or --ident NAME)"),
        (["--ident", "not an ident"], "--ident 'not an ident' is not an identifier"),
    ],
)
def test_no_usable_identifier_is_a_usage_error(script_runner, src, args, message):
    r = script_runner.run(["ctx-excerpt", *args, "auth.py"])
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.startswith("ctx-excerpt: error: ")
    assert message in r.stderr


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
    assert "   4│ signature is an \ufffd\ufffd HMAC \ufffd\n" in bad.stdout
    body = lambda out: out.split("\n")[5:]  # noqa: E731
    assert body(bad.stdout) == body(plain.stdout)


def test_large_file_and_giant_line(script_runner, src):
    big = (DATA / "inventory.py").read_bytes() * 60  # ~600 KB: streamed
    (src / "big.py").write_bytes(big)
    r = script_runner.run(["ctx-excerpt", "-q", "reconcile_stock", "big.py"])
    assert r.returncode == 0
    assert r.stdout.startswith(
        "==> big.py <== 16440 lines; matched: reconcile_stock; "
        "54 more matching lines not shown (54 more windows)\n"
    )
    # all windows score alike: the first six copies' are kept
    assert (
        "\n    252│ def reconcile_stock(ledger: Ledger, counted: dict[str, int]) -> list[Move]:"
        in r.stdout
    )
    assert "\n   1622│ def reconcile_stock(" in r.stdout
    line = b"x = '" + b"0123456789" * 524288 + b"'  # crc_table\n"  # one 5 MB line
    (src / "giant.py").write_bytes(b"import zlib\n" + line + b"def crc_table():\n    return x\n")
    g = script_runner.run(["ctx-excerpt", "-q", "crc_table", "giant.py"])
    assert g.returncode == 0
    assert len(g.stdout) < 1500
    assert "\n  2│ x = '0123456789" in g.stdout
    assert f"…[+{len(line) - 1 - 500} chars]\n" in g.stdout
    assert "\n  3│ def crc_table():\n" in g.stdout


def test_tokens_budget_fits_and_reports_drops(script_runner, src):
    args = [
        "ctx-excerpt",
        "--heuristic",
        "-q",
        "verify_token sweep Cart",
        "auth.py",
        "lexer.rs",
        "cart.ts",
        "--window",
        "3",
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
            "700",
        ]
    )
    assert r.returncode == 0
    from ctxtools.tokens import get_ruler

    choice = get_ruler()
    assert choice.ruler.count(r.stdout) <= 700
    assert "dropped" in r.stderr


def test_signatures(script_runner, src):
    (src / "notes.txt").write_text("verify_token is here\n")
    r = script_runner.run(["ctx-excerpt", "--signatures", "auth.py", "server.go", "notes.txt"])
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "==> auth.py <== 105 lines; python, " in out
    assert (
        "\n   59│ def verify_token(token: str, secret: bytes, now: float | None = None) -> Claims:"
        in out
    )
    assert "│   def sweep(self, now: float | None = None) -> int:" in out  # indented: a method
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
    r = script_runner.run(["ctx-excerpt", "-i", "-q", "LRUCACHE", "LruCache.java", "--window", "0"])
    assert r.returncode == 0
    assert r.stdout.startswith("==> LruCache.java <== 114 lines; matched: LRUCACHE\n")
    assert "   13│ public class LruCache<K, V> {\n" in r.stdout
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
