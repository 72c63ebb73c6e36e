"""ctx-count driven as a user would: stdin, files, --files-from, models, gates, errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import CORPUS, convert, run_bytes

from ctxtools import tokens
from ctxtools.tokens import get_ruler, heuristic_count

ROOT = Path(__file__).resolve().parents[2]
LOG = (
    "============================= test session starts ==============================\n"
    "collected 3 items\n\n"
    "tests/test_auth.py::test_login PASSED\n"
    "tests/test_auth.py::test_token_expiry FAILED\n"
    "E   AssertionError: 認証トークンの期限が切れています\n"
    "tests/test_api.py::test_unicode 한국어 PASSED\n"
).encode()


def exact(text: str, encoding: str = "cl100k_base") -> int:
    return get_ruler(encoding=encoding).ruler.count(text)


@pytest.mark.process
def test_stdin_prints_the_number(script_runner):
    r = run_bytes(script_runner, ["ctx-count"], LOG)
    assert r.returncode == 0
    assert r.stdout == f"{exact(LOG.decode())}\n"
    assert r.stderr == ""


def test_o200k_and_heuristic(script_runner):
    r = run_bytes(script_runner, ["ctx-count", "--encoding", "o200k_base"], LOG)
    assert r.stdout == f"{exact(LOG.decode(), 'o200k_base')}\n"
    r = run_bytes(script_runner, ["ctx-count", "--heuristic"], LOG)
    assert r.stdout == f"{heuristic_count(LOG.decode())}\n"


def test_encoding_from_environment(script_runner, monkeypatch):
    monkeypatch.setenv("CTX_ENCODING", "o200k_base")
    r = run_bytes(script_runner, ["ctx-count"], LOG)
    assert r.stdout == f"{exact(LOG.decode(), 'o200k_base')}\n"
    # a flag beats the environment
    r = run_bytes(script_runner, ["ctx-count", "--encoding", "cl100k_base"], LOG)
    assert r.stdout == f"{exact(LOG.decode())}\n"


def test_model_chooses_its_encoding(script_runner):
    r = run_bytes(script_runner, ["ctx-count", "--model", "gpt-4o"], LOG)
    n = exact(LOG.decode(), "o200k_base")
    assert r.stdout.splitlines() == [
        str(n),
        f"{n:,} tokens · {100 * n / 128000:.1f}% of 128,000 (gpt-4o)",
    ]


def test_several_files_like_wc(script_runner, tmp_path):
    a = tmp_path / "a.py"
    b = tmp_path / "b.txt"
    a.write_bytes((ROOT / "ctxtools" / "tokens" / "rulers.py").read_bytes())
    b.write_bytes(LOG)
    r = script_runner.run(["ctx-count", str(b), str(a)])
    na, nb = exact(a.read_text()), exact(LOG.decode())
    w = len(str(na + nb))
    assert r.stdout == f"{nb:>{w}} {b}\n{na:>{w}} {a}\n{na + nb:>{w}} total\n"
    r = script_runner.run(["ctx-count", "--sort", "tokens", str(b), str(a)])
    assert r.stdout.splitlines()[0].endswith(str(a))


def test_json_document(script_runner, tmp_path):
    f = tmp_path / "log.txt"
    f.write_bytes(LOG)
    r = script_runner.run(["ctx-count", "--json", str(f), "-"], stdin=__import__("io").StringIO(""))
    doc = json.loads(r.stdout)
    assert doc["counter"] == "cl100k_base" and doc["exact"] is True
    assert doc["files"][0] == {
        "path": str(f),
        "tokens": exact(LOG.decode()),
        "chars": len(LOG.decode()),
        "lines": LOG.count(b"\n"),
        "bytes": len(LOG),
    }
    assert doc["files"][1]["tokens"] == 0
    assert doc["total"]["bytes"] == len(LOG)


@pytest.mark.process
def test_files_from_git_ls_files_z(script_runner, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "src").mkdir()
    (repo / "src" / "main.go").write_text("package main\n\nfunc main() {}\n")
    (repo / "name with space.md").write_text("# 标题\n")
    (repo / "app.py").write_text("print('hi')\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    listing = subprocess.run([*git, "ls-files", "-z"], check=True, capture_output=True).stdout
    monkeypatch.chdir(repo)
    r = run_bytes(script_runner, ["ctx-count", "--files-from", "-", "-0", "--json"], listing)
    doc = json.loads(r.stdout)
    assert [f["path"] for f in doc["files"]] == ["app.py", "name with space.md", "src/main.go"]
    assert doc["total"]["tokens"] == sum(
        exact((repo / f["path"]).read_text()) for f in doc["files"]
    )


@pytest.mark.process
def test_usage_warnings_and_fail_over(script_runner):
    text = b"word " * 900  # 900 tokens in cl100k
    n = exact(text.decode())
    r = run_bytes(script_runner, ["ctx-count", "--limit", str(int(n / 0.85))], text)
    assert r.returncode == 0
    # text: the share, and no advice to compact a file (issue 20)
    assert r.stderr == "ctx-count: warning: 85.0% of the window used\n"
    r = run_bytes(script_runner, ["ctx-count", "--limit", str(n)], text)
    assert r.stderr == "ctx-count: warning: 100.0% of the window used\n"
    r = run_bytes(script_runner, ["ctx-count", "--limit", str(n * 2)], text)
    assert r.stderr == ""
    r = run_bytes(script_runner, ["ctx-count", "--limit", str(n * 2), "--fail-over", "40"], text)
    assert r.returncode == 3
    assert "ctx-count: error: usage 50.0% is over the limit of 40%" in r.stderr
    r = run_bytes(script_runner, ["ctx-count", "--limit", str(n * 2), "--fail-over", "60"], text)
    assert r.returncode == 0


def test_only_a_transcript_is_told_to_compact(script_runner, tmp_path):
    """Issue 20: "compact now (ctx-compact)" is advice for a conversation (--messages),
    not for a Markdown file; the text count says the share and nothing more."""
    chat = tmp_path / "t.json"
    turns = [{"role": "user", "content": "word " * 400}, {"role": "assistant", "content": "ok"}]
    chat.write_text(json.dumps(turns))
    r = script_runner.run(["ctx-count", "--messages", "--json", str(chat)])
    n = json.loads(r.stdout)["total"]["tokens"]
    soon, now = str(int(n / 0.85)), str(n)
    r = script_runner.run(["ctx-count", "--messages", "--limit", soon, str(chat)])
    assert re.fullmatch(
        r"ctx-count: warning: 8\d\.\d% of the window used: compact soon \(ctx-compact\)\n",
        r.stderr,
    )
    r = script_runner.run(["ctx-count", "--messages", "--limit", now, str(chat)])
    assert r.stderr == (
        "ctx-count: warning: 100.0% of the window used: compact now (ctx-compact)\n"
    )
    md = tmp_path / "HISTORY.md"
    md.write_text("word " * 400)
    r = script_runner.run(["ctx-count", "--limit", "100", "--fail-over", "80", str(md)])
    assert r.returncode == 3
    assert "compact" not in r.stderr
    assert "ctx-count: warning: " in r.stderr and "of the window used\n" in r.stderr


def test_fail_over_needs_a_window(script_runner):
    r = run_bytes(script_runner, ["ctx-count", "--fail-over", "50"], b"x")
    assert r.returncode == 2
    assert "needs --model or --limit" in r.stderr


def test_non_openai_model_is_marked_approximate(script_runner):
    r = run_bytes(script_runner, ["ctx-count", "--model", "claude-sonnet-4", "--json"], LOG)
    doc = json.loads(r.stdout)
    assert doc["exact"] is False and doc["usage"]["approximate"] is True
    assert "approximate" in r.stderr


def test_budget_says_an_unknown_role(script_runner):
    r = script_runner.run(["ctx-count", "--budget", "--model", "gpt-4o", "--role", "revewer"])
    assert r.returncode == 0
    assert "--role 'revewer' is not a known role (did you mean 'reviewer'?" in r.stderr
    r = script_runner.run(["ctx-count", "--budget", "--model", "gpt-4o", "--role", "reviewer"])
    assert "not a known role" not in r.stderr


def test_budget_text_and_json(script_runner):
    r = script_runner.run(
        ["ctx-count", "--budget", "--model", "qwen2.5-coder:32b", "--role", "reviewer"]
    )
    assert r.returncode == 0
    rows = dict(line.rsplit("  ", 1) for line in r.stdout.splitlines())
    assert any(k.strip() == "available" and v.strip() == "22,136" for k, v in rows.items())
    assert any(
        k.strip() == "role share (reviewer)" and v.strip() == "× 85%" for k, v in rows.items()
    )
    r = script_runner.run(
        ["ctx-count", "--budget", "--json", "--model", "gpt-4o", "--reserve-tools", "0"]
    )
    doc = json.loads(r.stdout)
    assert doc["reserve_tools"] == 0
    assert doc["available"] == 128_000 - 500 - 0 - 2048 - 12_800


def test_budget_says_which_profile_rule_matched(script_runner):
    """Issue 28.3: o3-pro is o3's profile (200,000 tokens), not the 16,384 default, and
    --budget says why; --json carries the rule and the profile it matched."""
    r = script_runner.run(["ctx-count", "--budget", "--model", "o3-pro"])
    assert r.returncode == 0 and r.stderr == ""  # no "no profile" note
    first = r.stdout.splitlines()[0].split(None, 1)[1]
    assert first == "o3-pro: the profile o3 (the longest profile name in the model name)"
    assert "context limit        200,000" in r.stdout
    r = script_runner.run(["ctx-count", "--budget", "--json", "--model", "qwen3-coder:30b"])
    doc = json.loads(r.stdout)
    assert (doc["matched_by"], doc["matched"], doc["context_limit"]) == (
        "name",
        "qwen3-coder",
        262_144,
    )


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_a_budget_below_the_floor_follows_ctx_packs_rule(script_runner, tmp_path, extra):
    """Issue 21.15: `ctx-count --budget --limit 4000` said "available 512 (floor)" while
    `ctx-pack --limit 4000` refused. One rule: below the floor there is no budget; the
    figures are shown and both exit 1 with the same reason."""
    counted = script_runner.run(["ctx-count", "--budget", "--limit", "4000", *extra])
    (tmp_path / "a.py").write_text("def f():\n    pass\n")
    packed = script_runner.run(
        ["ctx-pack", "-q", "f", "--limit", "4000", "--root", str(tmp_path), str(tmp_path)]
    )
    assert counted.returncode == packed.returncode == 1
    reason = "the pack budget is 152 tokens, below the floor of 512: window 4,000 - "
    assert counted.stderr.startswith(f"ctx-count: error: {reason}")
    assert packed.stderr.startswith(f"ctx-pack: error: {reason}")
    assert counted.stderr.split(" (")[0][11:] == packed.stderr.split(" (")[0][10:]
    if extra:
        doc = json.loads(counted.stdout)
        assert (doc["computed"], doc["available"], doc["floored"]) == (152, None, True)
    else:
        assert "available            none: 152 is below the floor\n" in counted.stdout


def test_profiles_listing(script_runner, tmp_path):
    r = script_runner.run(["ctx-count", "--profiles", "--json"])
    rows = json.loads(r.stdout)
    assert any(row["name"] == "gpt-4o" and row["context_limit"] == 128_000 for row in rows)
    f = tmp_path / "p.toml"
    f.write_text('[models."house"]\ncontext_limit = 1234\n')
    r = script_runner.run(["ctx-count", "--profiles", "--profiles-file", str(f)])
    assert any(line.startswith("house") and "1,234" in line for line in r.stdout.splitlines())


# --- bad input -----------------------------------------------------------------------------


def test_unknown_encoding(script_runner):
    r = run_bytes(script_runner, ["ctx-count", "--encoding", "cl99k"], b"x")
    assert r.returncode == 1
    assert r.stderr == (
        "ctx-count: error: unknown encoding 'cl99k' (known: cl100k_base, o200k_base; "
        "deepseek-v4, qwen2, qwen3.6 with ctxtools[open-tokenizers])\n"
    )


def test_unknown_model_falls_back_with_a_note(script_runner):
    r = run_bytes(script_runner, ["ctx-count", "--model", "no-such-model"], b"abc")
    assert r.returncode == 0
    assert "no profile for 'no-such-model'" in r.stderr


def test_missing_tokenizer_and_not_a_tokenizer(script_runner, tmp_path):
    r = run_bytes(script_runner, ["ctx-count", "--tokenizer", str(tmp_path / "t.json")], b"x")
    assert r.returncode == 1 and "tokenizer file not found" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2, 3]")
    r = run_bytes(script_runner, ["ctx-count", "--tokenizer", str(bad)], b"x")
    assert r.returncode == 1 and "not a usable tokenizer.json" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.process
def test_missing_file_and_directory(script_runner, tmp_path):
    r = script_runner.run(["ctx-count", str(tmp_path / "nope.txt")])
    assert r.returncode == 1
    assert r.stderr == f"ctx-count: error: {tmp_path / 'nope.txt'}: no such file\n"
    r = script_runner.run(["ctx-count", str(tmp_path)])
    assert r.returncode == 1
    # issue 28.5: ctx-count has --tree for that, so the hint names it, not ctx-repomap
    assert r.stderr == (
        f"ctx-count: error: {tmp_path}: is a directory (give files, or count the files "
        f"under it: ctx-count --tree {tmp_path})\n"
    )


@pytest.mark.process
def test_a_symlink_loop_is_named_as_what_it_is(script_runner, tmp_path):
    """It said "no such file" (ctx-excerpt said what the system says)."""
    (tmp_path / "loopA").symlink_to("loopB")
    (tmp_path / "loopB").symlink_to("loopA")
    loop = str(tmp_path / "loopA")
    for args in ([loop], ["--head", "3", loop], ["--sort", "name", loop]):
        r = script_runner.run(["ctx-count", *args])
        assert (r.returncode, r.stdout) == (1, "")
        assert r.stderr == f"ctx-count: error: {loop}: Too many levels of symbolic links\n"


@pytest.mark.script_launch_mode("inprocess")  # a stdin that fails the test when read
@pytest.mark.parametrize("cmd", [["ctx-count"], ["ctx-excerpt", "--query", "parse_header"]])
def test_files_from_stdin_and_the_file_stdin_is_a_usage_error(script_runner, tmp_path, cmd):
    """Both read stdin: the list got it all and the FILE - nothing, exit 0 and no word."""
    from helpers import endless_stdin

    (tmp_path / "a.py").write_text("def parse_header(x):\n    return x\n")
    stdin = endless_stdin(str(tmp_path / "a.py").encode() + b"\n", limit=-1)  # never read
    r = script_runner.run([*cmd, "--files-from", "-", "-"], stdin=stdin)
    assert r.returncode == 2 and r.stdout == ""
    name = cmd[0]
    assert r.stderr == (
        f"{name}: error: --files-from - and the FILE - cannot both read standard input "
        f"(give one of them stdin, the other a file; see {name} --help)\n"
    )
    assert stdin.buffer.raw.given == 0


@pytest.mark.parametrize("args", [[], ["--heuristic"], ["--sort", "name"]])
def test_a_name_with_a_newline_is_shown_on_one_line(script_runner, tmp_path, args):
    """One file is one line, its name quoted with C escapes as ctx-excerpt, ctx-pack and
    ctx-repomap show it (the plain call, without click, too)."""
    code = "def f():\n    pass\n"
    (tmp_path / "main.py").write_text(code)
    (tmp_path / "new\nline.py").write_text(code)
    (tmp_path / 'say "hi"\t.bin').write_bytes(b"\0" * 10)
    n = heuristic_count(code) if args == ["--heuristic"] else exact(code)
    w = len(str(2 * n))
    r = script_runner.run(["ctx-count", *args, "main.py", "new\nline.py"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f'{n:>{w}} main.py\n{n:>{w}} "new\\nline.py"\n{2 * n} total\n'
    r = script_runner.run(["ctx-count", *args, "main.py", 'say "hi"\t.bin'], cwd=tmp_path)
    assert r.stdout.splitlines()[1].lstrip() == '- "say \\"hi\\"\\t.bin" (binary, 10 bytes)'
    assert r.stderr == (
        'ctx-count: note: "say \\"hi\\"\\t.bin": binary (10 bytes), not counted in tokens '
        "(--count-binary counts it as text)\n"
    )
    r = script_runner.run(["ctx-count", *args, "--fail-above", "1", "new\nline.py"], cwd=tmp_path)
    assert r.returncode == 3 and r.stderr.count("\n") == 1
    assert '"new\\nline.py": ' in r.stderr


def test_the_tree_shows_a_name_with_a_newline_on_one_line(script_runner, tmp_path):
    code = "def f():\n    pass\n"
    (tmp_path / "sub\ndir").mkdir()
    (tmp_path / "sub\ndir" / "new\nline.py").write_text(code * 3)
    (tmp_path / "main.py").write_text(code)
    r = script_runner.run(["ctx-count", "--tree", "."], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2 + 3 + 1 + 2  # root, 2 entries + 1 inside, blank, title, 2 files
    assert lines[1].endswith('├── "sub\\ndir/"  (1 file)')
    assert lines[2].endswith('│   └── "new\\nline.py"')
    assert lines[-2].endswith('  "sub\\ndir/new\\nline.py"')
    assert lines[-1].endswith("  main.py")
    doc = json.loads(script_runner.run(["ctx-count", "--tree", ".", "--json"], cwd=tmp_path).stdout)
    assert doc["heaviest"][0]["path"] == "sub\ndir/new\nline.py"  # JSON escapes it itself


def test_files_from_with_missing_files_and_keep_going(script_runner, tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("hello world\n")
    listing = f"{good}\n{tmp_path / 'gone1'}\n{tmp_path / 'gone2'}\n".encode()
    r = run_bytes(script_runner, ["ctx-count", "--files-from", "-"], listing)
    assert r.returncode == 1
    assert "2 files cannot be read" in r.stderr and "gone1" in r.stderr and "gone2" in r.stderr
    assert r.stdout == ""
    r = run_bytes(
        script_runner, ["ctx-count", "--files-from", "-", "--keep-going", "--json"], listing
    )
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert [f["path"] for f in doc["files"]] == [str(good)]
    assert doc["total"]["tokens"] == exact("hello world\n")
    assert len(doc["missing"]) == 2


@pytest.mark.process
def test_binary_and_invalid_utf8_never_crash(script_runner):
    data = bytes(range(256)) * 40 + b"\xff\xfe\xc3(" + "日本".encode()
    r = run_bytes(script_runner, ["ctx-count", "--json", "-"], data)
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    assert doc["total"]["bytes"] == len(data)
    assert doc["total"]["tokens"] == exact(data.decode("utf-8", "replace"))


def test_binary_files_are_reported_by_their_bytes(script_runner, tmp_path):
    """Issue 20: a gzip or random-bytes file is no token count; --count-binary asks for one."""
    import gzip
    import random

    gz = tmp_path / "initial.json.gz"
    gz.write_bytes(gzip.compress(b'{"state": "initial"}\n' * 2000, mtime=0))
    rnd = tmp_path / "noise.bin"
    rnd.write_bytes(random.Random(4).randbytes(3000))
    md = tmp_path / "notes.md"
    md.write_text("Notes about the run.\n")
    n = exact(md.read_text())
    size = gz.stat().st_size
    r = script_runner.run(["ctx-count", "--sort", "tokens", str(gz), str(md)])
    assert r.returncode == 0
    w = len(str(n))
    assert r.stdout == (
        f"{n:>{w}} {md}\n{'-':>{w}} {gz} (binary, {size:,} bytes)\n{n:>{w}} total\n"
    )
    assert r.stderr == (
        f"ctx-count: note: {gz}: binary ({size:,} bytes), not counted in tokens "
        "(--count-binary counts it as text)\n"
    )
    # one binary file alone: 0, with the note (the plain path hands it to the full command)
    r = script_runner.run(["ctx-count", str(rnd)])
    assert (r.returncode, r.stdout) == (0, "0\n")
    assert f"{rnd}: binary (3,000 bytes)" in r.stderr
    r = script_runner.run(["ctx-count", "--json", str(gz), str(rnd), str(md)])
    doc = json.loads(r.stdout)
    assert [f.get("binary", False) for f in doc["files"]] == [True, True, False]
    assert doc["files"][0] == {
        "path": str(gz),
        "tokens": 0,
        "chars": 0,
        "lines": 0,
        "bytes": size,
        "binary": True,
    }
    assert doc["total"]["tokens"] == n and doc["total"]["bytes"] == size + 3000 + md.stat().st_size
    assert r.stderr == (
        f"ctx-count: note: 2 binary files ({size + 3000:,} bytes) not counted in tokens "
        "(--count-binary counts them as text)\n"
    )
    r = script_runner.run(["ctx-count", "--count-binary", str(gz)])
    assert r.stdout == f"{exact(gz.read_bytes().decode('utf-8', 'replace'))}\n"
    assert r.stderr == ""


def test_empty_input_is_zero(script_runner):
    r = run_bytes(script_runner, ["ctx-count"], b"")
    assert (r.returncode, r.stdout) == (0, "0\n")


def test_null_without_files_from_is_a_usage_error(script_runner):
    r = run_bytes(script_runner, ["ctx-count", "-0"], b"")
    assert r.returncode == 2


def test_exact_refuses_the_fallback(script_runner):
    r = run_bytes(script_runner, ["ctx-count", "--exact", "--encoding", "p50k_base"], b"x")
    assert r.returncode == 1
    assert "not available offline" in r.stderr
    r = run_bytes(script_runner, ["ctx-count", "--encoding", "p50k_base"], b"abcdefgh")
    assert (r.returncode, r.stdout) == (0, "2\n")
    assert "approximate" in r.stderr


def test_debug_lets_a_traceback_through(tmp_path):
    exe = Path(sys.executable).parent / "ctx-count"
    p = subprocess.run([str(exe), "--debug", str(tmp_path / "x")], capture_output=True)
    assert p.returncode == 1
    assert b"Traceback" in p.stderr
    p = subprocess.run([str(exe), str(tmp_path / "x")], capture_output=True)
    assert b"Traceback" not in p.stderr


@pytest.mark.parametrize("flag", ["--heuristic", "--encoding=o200k_base"])
def test_same_input_same_bytes(script_runner, flag):
    outs = {run_bytes(script_runner, ["ctx-count", "--json", flag], LOG).stdout for _ in range(3)}
    assert len(outs) == 1


# --- gates: --fail-over, --fail-above, the pre-commit hook ---------------------------------


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e999", "-1", "ten"])
def test_fail_over_refuses_non_finite_at_parse_time(script_runner, value):
    r = run_bytes(script_runner, ["ctx-count", "--limit", "100", f"--fail-over={value}"], b"x")
    assert r.returncode == 2
    assert "invalid value for '--fail-over'" in r.stderr
    assert r.stdout == "" and "Traceback" not in r.stderr


def test_fail_above_gates_one_input(script_runner):
    text = b"word " * 900
    n = exact(text.decode())
    r = run_bytes(script_runner, ["ctx-count", "--fail-above", str(n - 1)], text)
    assert r.returncode == 3
    assert r.stdout == f"{n}\n"  # the count is still printed
    assert r.stderr == (
        f"ctx-count: error: {n:,} tokens, over the limit of {n - 1:,} (--fail-above)\n"
    )
    r = run_bytes(script_runner, ["ctx-count", "--fail-above", str(n)], text)  # not over
    assert (r.returncode, r.stdout, r.stderr) == (0, f"{n}\n", "")


def test_fail_above_gates_each_file_and_combines_with_fail_over(script_runner, tmp_path):
    small = tmp_path / "CLAUDE.md"
    big = tmp_path / "AGENTS.md"
    small.write_text("# Rules\n\nRun `make test` before committing.\n")
    big.write_text("Always explain every change in detail. " * 80)
    nb = exact(big.read_text())
    ns = exact(small.read_text())
    r = script_runner.run(["ctx-count", "--fail-above", str(ns + 1), str(small), str(big)])
    assert r.returncode == 3
    assert r.stderr == (f"ctx-count: error: 1 of 2 inputs over {ns + 1:,} tokens: {big} ({nb:,})\n")
    # a total under the limit does not hide a file over it; both gates report together
    r = script_runner.run(
        ["ctx-count", "--fail-above", "5", "--limit", "100", "--fail-over", "50", str(small)]
    )
    assert r.returncode == 3
    assert "over the limit of 5 (--fail-above)" in r.stderr
    r = script_runner.run(
        ["ctx-count", "--fail-above", "1", "--limit", "10", "--fail-over", "50", str(big)]
    )
    assert r.returncode == 3
    assert "is over the limit of 50%; " in r.stderr and "(--fail-above)" in r.stderr


def test_fail_above_names_the_one_file_it_gates(script_runner, tmp_path):
    """Issue 20: one file over the limit is named, as two are; stdin has no name."""
    agents = tmp_path / "AGENTS.md"
    agents.write_text("Always explain every change in detail. " * 200)
    n = exact(agents.read_text())
    for args in (["--fail-above", "1024", str(agents)], ["--fail-above=1024", str(agents)]):
        r = script_runner.run(["ctx-count", *args])
        assert r.returncode == 3
        assert r.stdout == f"{n}\n"
        assert r.stderr == (
            f"ctx-count: error: {agents}: {n:,} tokens, over the limit of 1,024 (--fail-above)\n"
        )


def test_missing_ok_gates_the_optional_files_present(script_runner, tmp_path, monkeypatch):
    """Issue 20: the README's CI line over AGENTS.md CLAUDE.md when only one exists."""
    monkeypatch.chdir(tmp_path)
    Path("AGENTS.md").write_text("Always explain every change in detail. " * 80)
    n = exact(Path("AGENTS.md").read_text())
    line = ["ctx-count", "--fail-above", "512", "--missing-ok", "AGENTS.md", "CLAUDE.md"]
    r = script_runner.run(line)
    assert r.returncode == 3
    assert r.stdout == f"{n} AGENTS.md\n{n} total\n"
    assert r.stderr == (
        "ctx-count: note: not present, not counted (--missing-ok): CLAUDE.md\n"
        f"ctx-count: error: 1 of 1 inputs over 512 tokens: AGENTS.md ({n:,})\n"
    )
    Path("AGENTS.md").write_text("Run make test.\n")
    r = script_runner.run([*line, "--json"])
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    assert [f["path"] for f in doc["files"]] == ["AGENTS.md"]
    assert doc["absent"] == ["CLAUDE.md"] and "missing" not in doc
    # without --missing-ok a missing file is still an error: a misspelt name fails the gate
    r = script_runner.run(line[:3] + line[4:])
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == "ctx-count: error: CLAUDE.md: no such file\n"
    # --missing-ok is about absent files only: a directory is still an error
    Path("CLAUDE.md").mkdir()
    r = script_runner.run(line)
    assert r.returncode == 1 and "CLAUDE.md: is a directory" in r.stderr
    # nothing present at all: an empty count that passes the gate, and says so
    r = script_runner.run(["ctx-count", "--fail-above", "5", "--missing-ok", "A.md", "B.md"])
    assert (r.returncode, r.stdout) == (0, "0 total\n")
    assert r.stderr == "ctx-count: note: not present, not counted (--missing-ok): A.md, B.md\n"


def test_readme_and_hook_agree_on_the_ci_gate():
    """The README's CI line is one that works over optional files; the hook, which
    pre-commit gives only the files that exist, gates at the same 512 tokens."""
    readme = (ROOT / "README.md").read_text()
    assert "ctx-count --fail-above 512 --missing-ok AGENTS.md CLAUDE.md" in readme
    assert not re.search(r"ctx-count --fail-above \d+ AGENTS\.md CLAUDE\.md", readme)
    assert _hook()["args"] == ["--fail-above", "512"]


def test_fail_above_refuses_a_negative_limit(script_runner):
    r = run_bytes(script_runner, ["ctx-count", "--fail-above", "-1"], b"x")
    assert r.returncode == 2 and "invalid value for '--fail-above'" in r.stderr


def _hook() -> dict:
    """The one hook of .pre-commit-hooks.yaml (flat keys; args as a flow list)."""
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    hook = {}
    for key in ("id", "entry", "language", "files", "args"):
        m = re.search(rf"^\s*-?\s*{key}:\s*(.+)$", text, re.M)
        assert m, f"no {key} in .pre-commit-hooks.yaml"
        hook[key] = m.group(1).strip()
    hook["files"] = hook["files"].strip("'\"")
    hook["args"] = [a.strip().strip("'\"") for a in hook["args"].strip("[]").split(",")]
    return hook


def test_pre_commit_hook_gates_instruction_files(tmp_path):
    hook = _hook()
    assert hook["language"] == "python"
    files = re.compile(hook["files"])
    for name in ("AGENTS.md", "CLAUDE.md", "docs/AGENTS.md", "web/CLAUDE.md"):
        assert files.search(name), name
    for name in ("README.md", "MY_AGENTS.md.bak", "AGENTS.md.orig"):
        assert not files.search(name), name
    exe = shutil.which(hook["entry"].split()[0], path=str(Path(sys.executable).parent))
    argv = [exe, *hook["entry"].split()[1:], *hook["args"]]
    short = tmp_path / "AGENTS.md"
    short.write_text("# Agents\n\n- `make test` runs the suite.\n- Layout: src/, tests/.\n")
    long = tmp_path / "CLAUDE.md"
    long.write_text("- Prefer small functions with clear names and type hints.\n" * 200)
    ok = subprocess.run([*argv, str(short)], capture_output=True)
    assert ok.returncode == 0, ok.stderr
    over = subprocess.run([*argv, str(short), str(long)], capture_output=True)
    assert over.returncode == 3
    assert str(long).encode() in over.stderr and str(short).encode() not in over.stderr


# --- transcripts: --messages counts as ctx-compact does ------------------------------------

RUNS = {r["instance_id"]: convert.to_openai(r) for r in convert.runs_from_jsonl(CORPUS)}


def _shaped(messages: list[dict], shape: str) -> bytes:
    if shape == "list":
        return json.dumps(messages, ensure_ascii=False, indent=1).encode()
    if shape == "wrapper":
        return json.dumps({"model": "gpt-4o", "messages": messages}).encode()
    if shape == "jsonl":
        return "".join(json.dumps(m) + "\n" for m in messages).encode()
    return json.dumps(convert.to_anthropic(messages), ensure_ascii=False).encode()


@pytest.mark.parametrize("shape", ["list", "wrapper", "jsonl", "anthropic"])
@pytest.mark.parametrize("run", sorted(RUNS))
def test_messages_equal_what_ctx_compact_reports(script_runner, tmp_path, run, shape):
    f = tmp_path / "t.json"
    f.write_bytes(_shaped(RUNS[run], shape))
    for model_args in ([], ["--model", "gpt-4o"]):
        c = script_runner.run(
            ["ctx-compact", "--limit", "10000000", "--json-report", *model_args, str(f)]
        )
        assert c.returncode == 0, c.stderr
        report = json.loads([ln for ln in c.stderr.splitlines() if ln.startswith("{")][-1])
        assert report["tokens_before_exact"] is True
        r = script_runner.run(["ctx-count", "--messages", "--json", *model_args, str(f)])
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["counted"] == "messages"
        assert doc["total"]["tokens"] == report["tokens_before"]
        row = doc["files"][0]
        expected = len(RUNS[run]) - (shape == "anthropic")  # the system prompt moves out
        assert row["format"] == report["format"]
        assert (row["bytes"], row["messages"] >= 1) == (f.stat().st_size, True)
        if shape != "anthropic":
            assert row["messages"] == expected


def test_messages_and_text_are_two_counts_of_one_file(script_runner, tmp_path):
    """The JSON text costs more than the conversation: quotes, keys and escapes count."""
    f = tmp_path / "t.json"
    f.write_bytes(_shaped(RUNS["ponylang__ponyc-4593"], "list"))
    as_text = int(script_runner.run(["ctx-count", str(f)]).stdout)
    as_messages = int(script_runner.run(["ctx-count", "--messages", str(f)]).stdout)
    assert as_text == exact(f.read_text())
    assert as_messages < as_text
    r = run_bytes(script_runner, ["ctx-count", "--messages"], f.read_bytes())  # stdin too
    assert r.stdout == f"{as_messages}\n"


@pytest.mark.process
def test_one_long_message_counts_as_its_text_does(script_runner, tmp_path):
    """One 20 MB message took 15 s and 1 GB with --messages, its text 0.7 s and 90 MB
    as plain text: the message's text is now counted as the text is, to the same number
    (plus its 4 tokens and the reply's 3), in every shape, and ctx-compact reports it."""
    text = "x" * 2_000_000 + "\n" + Path(__file__).read_text(encoding="utf-8") + "=" * 50_000
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    plain = script_runner.run(["ctx-count", str(tmp_path / "t.txt")])
    assert plain.returncode == 0 and plain.stderr == ""
    expected = int(plain.stdout) + 4 + 3
    message = {"role": "user", "content": text}
    shapes = {
        "t.json": json.dumps([message]),
        "w.json": json.dumps({"model": "gpt-4o", "messages": [message]}),
        "t.jsonl": json.dumps({"role": "user", "content": "hi"}) + "\n" + json.dumps(message),
    }
    for name, doc in shapes.items():
        f = tmp_path / name
        f.write_text(doc, encoding="utf-8")
        r = script_runner.run(["ctx-count", "--messages", "--json", str(f)])
        assert r.returncode == 0 and r.stderr == "", r.stderr
        row = json.loads(r.stdout)["files"][0]
        extra = 4 + get_ruler().ruler.count("hi") if name.endswith(".jsonl") else 0
        assert row["tokens"] == expected + extra and "exact" not in row
    c = script_runner.run(["ctx-compact", "--limit", "10000000", "--json-report", str(f)])
    assert c.returncode == 0 and c.stdout == f.read_text(encoding="utf-8")
    report = json.loads(c.stderr.splitlines()[-1])
    assert report["tokens_before"] == expected + extra


@pytest.mark.script_launch_mode("inprocess")  # makes the recount bound small
def test_messages_say_when_a_long_text_is_not_counted_exactly(script_runner, tmp_path, monkeypatch):
    """A text the cutter cannot cut at proven places (o200k's capitals after a CJK letter)
    past the length counted again whole: --messages says it is not exact, as ctx-count."""
    from ctxtools.compact import textcount

    monkeypatch.setattr(textcount, "RECOUNT", 1_000)
    f = tmp_path / "t.json"
    f.write_text(json.dumps([{"role": "user", "content": UNPROVEN.decode()}]))
    r = script_runner.run(["ctx-count", "--messages", "--json", "--encoding", "o200k_base", str(f)])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["exact"] is False and doc["files"][0]["exact"] is False
    assert "follows a letter of another script" in doc["files"][0]["note"]
    assert "ctx-count: note: not exact: a run of ASCII letters" in r.stderr
    c = script_runner.run(
        ["ctx-compact", "--limit", "10000000", "--encoding", "o200k_base", str(f)]
    )
    assert c.returncode == 0 and "ctx-compact: note: not exact: a run of ASCII" in c.stderr


def test_messages_several_files_and_usage(script_runner, tmp_path):
    paths = []
    for run in sorted(RUNS):
        p = tmp_path / f"{run}.jsonl"
        p.write_bytes(_shaped(RUNS[run], "jsonl"))
        paths.append(p)
    one = [int(script_runner.run(["ctx-count", "--messages", str(p)]).stdout) for p in paths]
    r = script_runner.run(["ctx-count", "--messages", "--limit", "100000", *map(str, paths)])
    lines = r.stdout.splitlines()
    assert [int(ln.split()[0]) for ln in lines[:3]] == one
    assert lines[3].split() == [str(sum(one)), "total"]
    assert lines[4].startswith(f"{sum(one):,} tokens · ")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty transcript: no input"),
        (b'{"a": 1}', "not a transcript"),
        (b"[1, 2]", "message 1 is not a JSON object"),
        (b'[{"content": "hi"}]', 'message 1 has no "role"'),
        (b"[{]", "invalid JSON at line 1"),
        (b"\xff\xfe[]", "invalid UTF-8"),
    ],
)
def test_messages_bad_input(script_runner, data, message):
    r = run_bytes(script_runner, ["ctx-count", "--messages"], data)
    assert r.returncode == 1
    assert r.stderr.startswith(f"ctx-count: error: {message}")
    assert len(r.stderr.splitlines()) == 1 and r.stdout == ""


def test_messages_bad_file_is_named(script_runner, tmp_path):
    good = tmp_path / "good.json"
    good.write_bytes(_shaped(RUNS["ponylang__ponyc-4595"], "list"))
    r = script_runner.run(["ctx-count", "--messages", str(good), str(ROOT / "README.md")])
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"ctx-count: error: {ROOT / 'README.md'}: invalid JSON at line 1")


# --- roles and profiles on the command line ------------------------------------------------


def _budget_rows(stdout: str) -> dict[str, str]:
    return {k.strip(): v.strip() for k, v in (ln.rsplit("  ", 1) for ln in stdout.splitlines())}


def test_role_share_overrides(script_runner, tmp_path):
    base = ["ctx-count", "--budget", "--model", "qwen2.5-coder:32b", "--role", "reviewer"]
    r = script_runner.run([*base, "--role-share", "reviewer=90", "--role-share", "docs=10"])
    assert r.returncode == 0, r.stderr
    rows = _budget_rows(r.stdout)
    before = int(rows["before role share"].replace(",", ""))
    assert rows["role share (reviewer)"] == "× 90%"
    assert rows["available"] == f"{before * 90 // 100:,}"
    f = tmp_path / "p.toml"
    f.write_text("[roles]\nreviewer = 95\n")
    r = script_runner.run([*base, "--profiles-file", str(f), "--json"])
    assert json.loads(r.stdout)["role_share"] == 95
    r = script_runner.run([*base, "--profiles-file", str(f), "--role-share", "reviewer=60"])
    assert _budget_rows(r.stdout)["role share (reviewer)"] == "× 60%"  # the flag wins
    r = script_runner.run(["ctx-count", "--budget", "--role", "placeholder", "--json"])
    assert json.loads(r.stdout)["role_share"] == 100


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--budget", "--role-share", "reviewer"], "'reviewer' is not ROLE=PCT"),
        (["--budget", "--role-share", "reviewer=0"], "whole percent from 1 to 100"),
        (["--budget", "--role-share", "reviewer=nan"], "whole percent from 1 to 100"),
        (["--role", "reviewer"], "--role and --role-share go with --budget"),
        (["--role-share", "reviewer=50"], "--role and --role-share go with --budget"),
    ],
)
def test_bad_role_shares_are_usage_errors(script_runner, args, message):
    r = run_bytes(script_runner, ["ctx-count", *args], b"x")
    assert r.returncode == 2
    assert message in r.stderr and r.stdout == ""


def test_a_profiles_file_may_be_a_pipe_or_dev_null(script_runner, tmp_path):
    """``--profiles-file <(...)`` (a pipe) and /dev/null are read, not called missing."""
    r = script_runner.run(["ctx-count", "--profiles", "--profiles-file", os.devnull])
    assert r.returncode == 0, r.stderr
    assert any(line.startswith("gpt-4o") for line in r.stdout.splitlines())
    fifo = tmp_path / "p.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen(  # the writer a shell's process substitution would be
        [sys.executable, "-c", f"open({str(fifo)!r}, 'w').write("
         "'[models.house]\\ncontext_limit = 32000\\n')"]
    )
    try:
        r = script_runner.run(
            ["ctx-count", "--budget", "--model", "house", "--json", "--profiles-file", str(fifo)]
        )
    finally:
        proc.wait(timeout=30)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["context_limit"] == 32_000


def test_a_profiles_file_that_is_not_one_is_one_line(script_runner, tmp_path):
    """A directory (click's check, also of $CTX_PROFILES; the library's own for its
    callers), a file far too large to be a profiles file (/dev/zero would never end) and
    a missing one are one-line errors."""
    from ctxtools.errors import InputError
    from ctxtools.profiles import load_profiles

    env = {**os.environ, "CTX_PROFILES": str(tmp_path)}
    r = script_runner.run(["ctx-count", "--profiles"], env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "is a directory" in r.stderr
    with pytest.raises(InputError, match="profiles file is a directory"):
        load_profiles(tmp_path)
    big = tmp_path / "big.toml"
    big.write_bytes(b"# " + b"x" * (1 << 20) + b"\n")
    r = script_runner.run(["ctx-count", "--profiles", "--profiles-file", str(big)])
    assert (r.returncode, r.stderr) == (
        1, f"ctx-count: error: {big}: over 1 MB, not a profiles file\n"
    )
    r = script_runner.run(["ctx-count", "--profiles", "--profiles-file", str(tmp_path / "no")])
    assert (r.returncode, r.stderr) == (
        1, f"ctx-count: error: profiles file not found: {tmp_path / 'no'}\n"
    )


def test_bad_roles_table_in_profiles_file(script_runner, tmp_path):
    f = tmp_path / "p.toml"
    f.write_text("[roles]\nreviewer = 250\n")
    r = script_runner.run(["ctx-count", "--budget", "--profiles-file", str(f)])
    assert r.returncode == 1
    assert r.stderr == (
        f"ctx-count: error: {f}: roles.reviewer must be a whole percent from 1 to 100 "
        "(e.g. reviewer = 90)\n"
    )


def test_profiles_listing_shows_output_and_turn_limits(script_runner):
    r = script_runner.run(["ctx-count", "--profiles"])
    lines = {ln.split()[0]: ln.split() for ln in r.stdout.splitlines()}
    assert lines["name"][:6] == ["name", "kind", "context", "output", "turns", "encoding"]
    assert lines["1.5b"][2:5] == ["4,096", "1,536", "12"]
    assert lines["qwen"][2:5] == ["32,768", "3,072", "24"]
    assert lines["gpt-4o"][4] == "-"
    rows = json.loads(script_runner.run(["ctx-count", "--profiles", "--json"]).stdout)
    assert {r["name"]: r["max_turns"] for r in rows if r["kind"] == "size"} == {
        "1.5b": 12,
        "3b": 14,
        "7b": 16,
        "14b": 20,
        "32b": 24,
    }


def test_unknown_model_help_and_behaviour_agree(script_runner):
    """DESIGN.md: an unknown model resolves to the default profile with a note (exit 0);
    the help's exit statuses must not call it an error."""
    help_text = " ".join(script_runner.run(["ctx-count", "--help"]).stdout.split())
    exits = help_text[help_text.index("Exit status:") :]
    assert "model" not in exits.split(" 2 usage error")[0]
    from ctxtools.cli.count import cli  # the manual (man ctx-count) says it in words

    assert "An unknown --model is not an error" in " ".join(cli.help.split())
    r = run_bytes(script_runner, ["ctx-count", "--model", "nosuchmodel"], b"abc")
    assert r.returncode == 0
    assert r.stderr == (
        "ctx-count: note: no profile for 'nosuchmodel'; using the default profile "
        "(16,384 tokens)\n"
        "ctx-count: note: counts for nosuchmodel are approximate (cl100k_base is not its "
        "tokenizer; --tokenizer gives exact counts)\n"
    )


# --- names and unreadable inputs -----------------------------------------------------------


@pytest.mark.parametrize("cmd", [["ctx-count"], ["ctx-excerpt", "--query", "main"]])
def test_nul_separated_names_without_null_flag(script_runner, tmp_path, monkeypatch, cmd):
    (tmp_path / "a.py").write_text("def main():\n    pass\n")
    (tmp_path / "b.py").write_text("main()\n")
    monkeypatch.chdir(tmp_path)
    r = run_bytes(script_runner, [*cmd, "--files-from", "-"], b"a.py\0b.py\0")
    assert r.returncode == 1
    assert r.stderr == (
        f"{cmd[0]}: error: the names from standard input are NUL-separated "
        "(add -0 for lists such as git ls-files -z)\n"
    )
    assert r.stdout == ""
    listing = tmp_path / "list"
    listing.write_bytes(b"a.py\0b.py")
    r = script_runner.run([*cmd, "--files-from", str(listing)])
    assert r.returncode == 1 and f"the names from {listing} are NUL-separated" in r.stderr
    r = script_runner.run([*cmd, "--files-from", str(listing), "-0"])
    assert r.returncode == 0, r.stderr


def test_json_with_a_file_name_that_is_not_utf8(script_runner, tmp_path):
    raw = os.fsencode(str(tmp_path)) + b"/caf\xe9-\xff.txt"
    with open(raw, "wb") as fh:
        fh.write(LOG)
    gone = os.fsencode(str(tmp_path)) + b"/gone-\xe9.txt"
    listing = tmp_path / "names"
    listing.write_bytes(raw + b"\n" + gone + b"\n")
    r = script_runner.run(["ctx-count", "--json", "--keep-going", "--files-from", str(listing)])
    assert r.returncode == 1  # the missing one
    doc = json.loads(r.stdout)
    assert doc["files"][0]["path"] == f"{tmp_path}/caf\ufffd-\ufffd.txt"
    assert doc["files"][0]["path_quoted"] == f'"{tmp_path}/caf\\351-\\377.txt"'
    assert doc["files"][0]["tokens"] == exact(LOG.decode())
    assert doc["missing"] == [f"{tmp_path}/gone-\ufffd.txt"]
    # plain text shows the name by the name rule (quoted, each such byte's octal escape):
    # valid UTF-8 (it was the name's own bytes)
    r = run_bytes(script_runner, ["ctx-count", "--files-from", str(listing), "--keep-going"])
    assert f' "{tmp_path}/caf\\351-\\377.txt"\n' in r.stdout
    r.stdout.encode("utf-8")


def _unprivileged(argv: list[str]) -> list[str]:
    """ARGV run so that a mode-000 file cannot be read: root drops its override capabilities."""
    if os.geteuid() != 0:
        return argv
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--", *argv]


@pytest.mark.parametrize(
    ("cmd", "message"),
    [
        (["ctx-count", "--heuristic"], "permission denied"),
        (["ctx-excerpt", "--query", "needle"], "Permission denied"),
    ],
)
def test_unreadable_argument_is_exit_1_and_keep_going_counts_the_rest(tmp_path, cmd, message):
    """As through --files-from: exit 1 with one line, not click's usage error (exit 2)."""
    exe = str(Path(sys.executable).parent / cmd[0])
    ok = tmp_path / "ok.txt"
    ok.write_text("needle in a haystack\n")
    locked = tmp_path / "locked.txt"
    locked.write_text("needle\n")
    locked.chmod(0)
    try:
        p = subprocess.run(_unprivileged([exe, *cmd[1:], str(locked)]), capture_output=True)
        assert p.returncode == 1
        assert p.stderr.decode() == f"{cmd[0]}: error: {locked}: {message}\n"
        assert p.stdout == b""
        p = subprocess.run(
            _unprivileged([exe, *cmd[1:], "--keep-going", str(locked), str(ok)]),
            capture_output=True,
        )
        assert p.returncode == 1
        assert f"{locked}: {message}" in p.stderr.decode()
        assert str(ok).encode() in p.stdout and str(locked).encode() not in p.stdout
        listing = tmp_path / "list"
        listing.write_text(f"{locked}\n")
        p = subprocess.run(
            _unprivileged([exe, *cmd[1:], "--files-from", str(listing)]), capture_output=True
        )
        assert p.returncode == 1 and p.stderr.decode() == f"{cmd[0]}: error: {locked}: {message}\n"
    finally:
        locked.chmod(0o644)


@pytest.mark.parametrize(
    "data",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'[{"role": "user", "content": ' + b"[" * 5_000 + b"]" * 5_000 + b"}]",
    ],
)
def test_messages_deeply_nested_json_is_one_line(script_runner, data):
    r = run_bytes(script_runner, ["ctx-count", "--messages"], data)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("ctx-count: error: the JSON nests too deeply to be a transcript")
    assert len(r.stderr.splitlines()) == 1


# --- the entry point: plain calls counted without click ------------------------------------


def _run_main(main, args: list[str], stdin: bytes, monkeypatch) -> tuple[int, bytes, str]:
    import io

    out, err = io.BytesIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, write_through=True))
    monkeypatch.setattr(sys, "stderr", err)
    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    sys.stdout.flush()
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        ([], LOG),
        (["--heuristic"], LOG),
        (["--heuristic", "--heuristic"], "日本語のテキスト".encode() * 50),
        ([], b""),
        ([], bytes(range(256)) * 8 + b"\xff\xfe"),
        (["A"], b""),
        (["--heuristic", "A", "B"], b""),
        (["B", "-", "A"], LOG),
        (["-", "-"], LOG),
        (["A", "MISSING"], b""),
        (["DIR"], b""),
        (["--heuristic", "ODD"], b""),
        (["--json", "A"], b""),
        (["--", "A"], b""),
    ],
)
def test_plain_calls_give_the_click_command_s_bytes(monkeypatch, tmp_path, args, stdin):
    from ctxtools.cli import count, count_fast

    (tmp_path / "A").write_bytes((ROOT / "ctxtools" / "profiles.py").read_bytes())
    (tmp_path / "B").write_bytes(LOG)
    (tmp_path / "DIR").mkdir()
    odd = os.fsdecode(b"caf\xe9.txt")
    (tmp_path / odd).write_bytes(LOG)
    monkeypatch.chdir(tmp_path)
    args = [odd if a == "ODD" else a for a in args]
    fast = _run_main(count_fast.main, args, stdin, monkeypatch)
    slow = _run_main(count.main, args, stdin, monkeypatch)
    assert fast == slow
    assert "Traceback" not in fast[2]


def _modules_after(args: list[str], tmp_path, env_extra: dict | None = None) -> set[str]:
    code = (
        "import sys\n"
        "from ctxtools.cli.count_fast import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(repr(sorted(sys.modules)))\n"
    )
    env = dict(os.environ, **(env_extra or {}))
    p = subprocess.run(
        [sys.executable, "-c", code, *args], input=LOG, capture_output=True, env=env, cwd=tmp_path
    )
    return set(eval(p.stderr.decode().splitlines()[-1]))


def test_plain_calls_do_not_import_click(tmp_path):
    """Start-up (issue 10): the plain calls skip click; the others need it."""
    (tmp_path / "f.txt").write_bytes(LOG)
    for args in ([], ["--heuristic"], ["--heuristic", "f.txt", "-"]):
        assert "click" not in _modules_after(args, tmp_path), args
    for args in (["--json"], ["--model", "gpt-4o"], ["nope.txt"], ["--help"]):
        assert "click" in _modules_after(args, tmp_path), args
    assert "click" in _modules_after(["--heuristic"], tmp_path, {"CTX_MODEL": "gpt-4o"})
    assert "click" in _modules_after([], tmp_path, {"_CTX_COUNT_COMPLETE": "bash_source"})


# --- through the commands --------------------------------------------------------------

UNPROVEN = "中".encode() * 100 + b"ABC" * 20_000  # o200k: capitals joined to a CJK letter


def test_ctx_count_json_says_not_exact_with_the_reason(script_runner):
    from helpers import run_bytes

    r = run_bytes(script_runner, ["ctx-count", "--json", "--encoding", "o200k_base"], UNPROVEN)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["exact"] is False
    assert doc["files"][0]["exact"] is False
    assert "follows a letter of another script" in doc["files"][0]["note"]
    assert "note: not exact: a run of ASCII letters" in r.stderr
    # the same bytes with cl100k are exact, and the JSON says nothing more
    r = run_bytes(script_runner, ["ctx-count", "--json"], UNPROVEN)
    doc = json.loads(r.stdout)
    assert doc["exact"] is True and "note" not in doc["files"][0]
    ruler = tokens.get_ruler().ruler
    assert doc["total"]["tokens"] == ruler.count(UNPROVEN.decode())


def test_ctx_read_count_of_a_stored_blob_streams_and_says_not_exact(script_runner):
    from helpers import run_bytes

    r = run_bytes(script_runner, ["ctx-stash", "--always", "--name", "u"], UNPROVEN)
    assert r.returncode == 0, r.stderr
    r = script_runner.run(["ctx-read", "u", "--count", "--encoding", "o200k_base"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["exact"] is False and "another script" in doc["note"]
    assert doc["bytes"] == len(UNPROVEN)
    r = script_runner.run(["ctx-read", "u", "--count"])
    doc = json.loads(r.stdout)
    assert doc["exact"] is True and "note" not in doc
    assert doc["tokens"] == tokens.get_ruler().ruler.count(UNPROVEN.decode())


def test_ctrl_c_ends_a_long_count_with_130():
    """SIGINT while ctx-count is counting a stream: status 130, one line, no traceback."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "ctx-count")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    block = (b"the quick brown fox 12345 " * 40 + b"\n") * 250  # ~260 KB
    # A pipe holds 64 KB: once 5 MB went in, the command is reading and counting.
    for _ in range(20):
        proc.stdin.write(block)
    proc.stdin.flush()
    proc.send_signal(signal.SIGINT)
    try:
        for _ in range(400):  # keep it busy (up to 100 MB) until the signal ends it
            if proc.poll() is not None:
                break
            proc.stdin.write(block)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130
    assert b"Traceback" not in err
    assert out == b""


def test_plain_count_says_when_it_is_not_exact(script_runner, tmp_path):
    """The fast entry point (no click) tells the same as the click command: each place a
    run could not be cut at a proven boundary, a few word for word, then how many more."""
    path = tmp_path / "ideographic-spaces.txt"
    path.write_text("\u3000" * 1_000_000, encoding="utf-8")  # 3 MB, one pre-token
    plain = script_runner.run(["ctx-count", str(path)])
    assert plain.returncode == 0, plain.stderr
    assert abs(int(plain.stdout) - 500_000) <= 5  # "may differ by a few tokens"
    notes = [x for x in plain.stderr.splitlines() if x.startswith("ctx-count: note: not exact: ")]
    assert notes and "no exact cut point" in notes[0]
    as_json = script_runner.run(["ctx-count", "--json", str(path)])
    import json

    doc = json.loads(as_json.stdout)
    assert doc["exact"] is False and doc["total"]["exact"] is False
    assert "notes" not in doc["total"]
    assert as_json.stderr.count("note: not exact") == len(notes)


@pytest.mark.script_launch_mode("inprocess")  # an endless stdin: only a stream can be that
def test_messages_of_an_endless_log_fail_at_its_first_bytes(script_runner):
    """Issue 21, item 14: 1 GB of log took 2.1 GB to fail at line 1, column 1."""
    from helpers import endless_stdin

    stdin = endless_stdin(b"2026-12-01 10:00:00 INFO src/app.py: request served\n")
    r = script_runner.run(["ctx-count", "--messages"], stdin=stdin)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (
        "ctx-count: error: invalid JSON at line 1, column 1: expected '{' or '[' (a JSON "
        'object or array) (give a JSON list of messages, {"messages": [...]}, or JSON Lines)\n'
    )
    assert stdin.buffer.raw.given <= 1 << 20


# --- the token tree: --tree (issue 20) -------------------------------------------------------


def _tree_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "src" / "auth" / "jwt.py").write_text(
        "def verify(token):\n    return token.split('.')\n" * 40
    )
    (repo / "src" / "auth" / "keys.py").write_text("KEYS = {}\n")
    (repo / "src" / "main.py").write_text("from auth.jwt import verify\nprint(verify('a.b'))\n")
    (repo / "docs" / "guide.md").write_text("# Guide\n\nRead the code.\n" * 10)
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(200))
    (repo / "build").mkdir()
    (repo / "build" / "out.txt").write_text("generated " * 500)  # ignored by git
    (repo / ".gitignore").write_text("build/\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    (repo / "src" / "new.py").write_text("x = 1\n")  # untracked, not ignored: listed
    return repo


def test_tree_sums_directories_git_aware(script_runner, tmp_path):
    repo = _tree_repo(tmp_path)
    t = {
        rel: exact((repo / rel).read_text())
        for rel in (
            ".gitignore",
            "src/auth/jwt.py",
            "src/auth/keys.py",
            "src/main.py",
            "src/new.py",
            "docs/guide.md",
        )
    }
    total = sum(t.values())
    auth = t["src/auth/jwt.py"] + t["src/auth/keys.py"]
    src = auth + t["src/main.py"] + t["src/new.py"]
    r = script_runner.run(["ctx-count", "--tree", str(repo), "--json"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["files_listed_by"] == "git"
    assert doc["total"]["tokens"] == total and doc["total"]["files"] == 7  # build/ ignored
    top = doc["tree"]
    assert [c["path"] for c in top["children"]][:2] == ["src/", "docs/"]
    (s,) = [c for c in top["children"] if c["path"] == "src/"]
    assert (s["tokens"], s["files"]) == (src, 4)
    (a,) = [c for c in s["children"] if c["path"] == "src/auth/"]
    assert (a["tokens"], a["files"]) == (auth, 2) and "children" not in a  # --depth 2
    (png,) = [c for c in top["children"] if c["path"] == "logo.png"]
    assert png["binary"] is True and png["tokens"] == 0
    assert doc["heaviest"][0] == {"path": "src/auth/jwt.py", **_counts(repo / "src/auth/jwt.py")}
    # the text: the same numbers, as a tree; the same bytes on a second run
    r = script_runner.run(["ctx-count", "--tree", str(repo), "--depth", "1", "--top", "3"])
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0].split() == [f"{total:,}", "100.0%", str(repo), "(7", "files)"]
    assert lines[1].split()[0] == f"{src:,}" and lines[1].endswith("├── src/  (4 files)")
    assert lines[2].endswith("├── docs/  (1 file)")
    rest = total - src - t["docs/guide.md"]
    assert lines[3].split()[0] == f"{rest:,}" and lines[3].endswith("└── … 2 more")
    assert lines[4:6] == ["", "heaviest files:"]
    assert lines[6].split() == [f"{t['src/auth/jwt.py']:,}", "src/auth/jwt.py"]
    assert len(lines) == 9
    again = script_runner.run(["ctx-count", "--tree", str(repo), "--depth", "1", "--top", "3"])
    assert again.stdout == r.stdout


def _counts(path: Path) -> dict:
    text = path.read_text()
    return {
        "tokens": exact(text),
        "chars": len(text),
        "lines": text.count("\n"),
        "bytes": path.stat().st_size,
    }


def test_tree_outside_git_and_its_errors(script_runner, tmp_path, monkeypatch):
    plain = tmp_path / "plain"
    (plain / "a").mkdir(parents=True)
    (plain / "a" / "one.txt").write_text("one two three\n")
    (plain / "skip.log").write_text("noise\n")
    (plain / ".gitignore").write_text("*.log\n")
    monkeypatch.chdir(plain)
    r = script_runner.run(["ctx-count", "--tree", "--json"])
    doc = json.loads(r.stdout)
    assert doc["root"] == "." and doc["files_listed_by"] == "walk"
    assert doc["total"]["files"] == 2  # .gitignore and a/one.txt; skip.log is ignored
    r = script_runner.run(["ctx-count", "--tree", "a/one.txt"])
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (
        "ctx-count: error: a/one.txt: not a directory (--tree counts a directory's files)\n"
    )
    r = script_runner.run(["ctx-count", "--tree", ".", "a"])
    assert r.returncode == 2 and "--tree takes one directory" in r.stderr
    r = script_runner.run(["ctx-count", "--tree", "--messages", "."])
    assert r.returncode == 2 and "--messages does not go with --tree" in r.stderr
    # a usage gate over the whole tree
    r = script_runner.run(["ctx-count", "--tree", "--limit", "5", "--fail-over", "50"])
    assert r.returncode == 3 and "over the limit of 50%" in r.stderr


def _count_through_pipe(args: list[str], data: bytes) -> subprocess.CompletedProcess:
    """ctx-count ARGS with the read end of a pipe holding DATA as its last argument (what
    ``ctx-count <(make 2>&1)`` gives it: /dev/fd/N), written by a thread as it is read."""
    import threading

    r, w = os.pipe()

    def feed():
        import contextlib

        with contextlib.suppress(BrokenPipeError), os.fdopen(w, "wb") as out:
            out.write(data)  # (a reader that stops early is the test's failure, not this)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        exe = str(Path(sys.executable).parent / "ctx-count")
        return subprocess.run(
            [exe, *args, f"/dev/fd/{r}"], pass_fds=(r,), capture_output=True, timeout=60
        )
    finally:
        os.close(r)
        writer.join()


@pytest.mark.process
@pytest.mark.parametrize("args", [[], ["--json"], ["--jobs", "1"]])
def test_a_pipe_is_counted_whole(tmp_path, args):
    """A pipe can be read once: the plain call's binary probe took its first 8 KB from the
    count (a short log counted 0), and the click command's probe seeked back on it (an
    error). Counted as the same bytes in a file are."""
    data = LOG * 400 + "\n".join(str(i) for i in range(20_000)).encode()
    path = tmp_path / "log.txt"
    path.write_bytes(data)
    want = exact(data.decode())
    got = _count_through_pipe(args, data)
    assert got.returncode == 0, got.stderr
    if args == ["--json"]:
        row = json.loads(got.stdout)["files"][0]
        assert (row["tokens"], row["bytes"]) == (want, len(data))
    else:
        assert got.stdout.decode() == f"{want}\n"
    assert got.stderr == b""


@pytest.mark.process
def test_a_short_piped_log_and_a_binary_pipe():
    got = _count_through_pipe([], LOG)
    assert got.stdout.decode() == f"{exact(LOG.decode())}\n"
    blob = bytes(range(256)) * 40  # NUL bytes: binary
    got = _count_through_pipe(["--json"], blob)
    row = json.loads(got.stdout)["files"][0]
    assert row["binary"] is True and row["bytes"] == len(blob)  # read to its end: no size


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="a system without /dev/zero")
def test_an_endless_device_is_read_as_wc_reads_it_until_ctrl_c():
    """/dev/zero has no size (its stat says 0): it is read to its end, as a pipe is, not
    reported as "binary (0 bytes)" at once; Ctrl-C ends it with 130 and one line."""
    import signal
    import time

    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "ctx-count"), "/dev/zero"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(1.5)
    assert proc.poll() is None, proc.communicate()  # still reading, no answer made up
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert out == b"" and b"0 bytes" not in err and b"Traceback" not in err
    assert err.decode().strip() == "ctx-count: interrupted"
