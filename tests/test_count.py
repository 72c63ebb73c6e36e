"""ctx-count driven as a user would: stdin, files, --files-from, models, gates, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_bytes

from ctxtools.tokens import get_ruler, heuristic_count

ROOT = Path(__file__).resolve().parent.parent
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
    a.write_bytes((ROOT / "ctxtools" / "tokens.py").read_bytes())
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


def test_usage_warnings_and_fail_over(script_runner):
    text = b"word " * 900  # 900 tokens in cl100k
    n = exact(text.decode())
    r = run_bytes(script_runner, ["ctx-count", "--limit", str(int(n / 0.85))], text)
    assert r.returncode == 0
    assert "warning: 85.0% of the window used" in r.stderr
    r = run_bytes(script_runner, ["ctx-count", "--limit", str(n)], text)
    assert "compact now" in r.stderr
    r = run_bytes(script_runner, ["ctx-count", "--limit", str(n * 2), "--fail-over", "40"], text)
    assert r.returncode == 3
    assert "ctx-count: error: usage 50.0% is over the limit of 40%" in r.stderr
    r = run_bytes(script_runner, ["ctx-count", "--limit", str(n * 2), "--fail-over", "60"], text)
    assert r.returncode == 0


def test_fail_over_needs_a_window(script_runner):
    r = run_bytes(script_runner, ["ctx-count", "--fail-over", "50"], b"x")
    assert r.returncode == 2
    assert "needs --model or --limit" in r.stderr


def test_non_openai_model_is_marked_approximate(script_runner):
    r = run_bytes(script_runner, ["ctx-count", "--model", "claude-sonnet-4", "--json"], LOG)
    doc = json.loads(r.stdout)
    assert doc["exact"] is False and doc["usage"]["approximate"] is True
    assert "approximate" in r.stderr


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
    assert (
        r.stderr == "ctx-count: error: unknown encoding 'cl99k' (known: cl100k_base, o200k_base)\n"
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


def test_missing_file_and_directory(script_runner, tmp_path):
    r = script_runner.run(["ctx-count", str(tmp_path / "nope.txt")])
    assert r.returncode == 1
    assert r.stderr == f"ctx-count: error: {tmp_path / 'nope.txt'}: no such file\n"
    r = script_runner.run(["ctx-count", str(tmp_path)])
    assert r.returncode == 1 and "is a directory" in r.stderr


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


def test_binary_and_invalid_utf8_never_crash(script_runner):
    data = bytes(range(256)) * 40 + b"\xff\xfe\xc3(" + "日本".encode()
    r = run_bytes(script_runner, ["ctx-count", "--json", "-"], data)
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    assert doc["total"]["bytes"] == len(data)
    assert doc["total"]["tokens"] == exact(data.decode("utf-8", "replace"))


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
