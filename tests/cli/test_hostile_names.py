"""Hostile names and places, as a user meets them: a file name that is not UTF-8, arguments
in the C locale or holding bytes that are not UTF-8, a write that fails after the work is
done (ctx-compact), a working directory removed under the command.

Every command runs as a real process (its stdout and stderr as bytes), with its own store
(CTX_STORE) under the test's tmp_path.
"""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
BAD = b"b\xff.py"  # a name that is not UTF-8
BAD_SHOWN = '"b\\377.py"'  # as every text output shows it (quoting.quote_name)


def run(tmp_path, *argv, cwd=None, env=None, stdin=None, stdout=subprocess.PIPE, pre=None):
    """ARGV (its first word a ctx-* command, str or bytes) as a process with its own store
    and ENV (a variable None: unset)."""
    full = {**os.environ, "CTX_STORE": str(tmp_path / "store"), **(env or {})}
    full = {k: v for k, v in full.items() if v is not None}
    args = [str(BIN / argv[0]), *argv[1:]]
    return subprocess.run(
        args,
        cwd=cwd,
        env=full,
        input=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        preexec_fn=pre,
        timeout=300,
    )


def utf8(data: bytes) -> str:
    """DATA as text; the test fails when it is not valid UTF-8."""
    return data.decode("utf-8")


def unquote(shown: str) -> bytes:
    """A name as quote_name shows it, back to its bytes (the way its docstring says)."""
    inner = shown[1:-1] if shown.startswith('"') else shown
    return codecs.escape_decode(inner.encode("utf-8"))[0]


@pytest.fixture
def tree(tmp_path) -> Path:
    """A tree whose files call each other, one of them named with the byte 0xFF, and a
    binary file and a secret by its name, both named so too."""
    root = tmp_path / "t"
    root.mkdir()
    raw = os.fsencode(str(root))
    (root / "a.py").write_text("def foo():\n    return 1\n")
    with open(os.path.join(raw, BAD), "wb") as fh:
        fh.write(b"def bar():\n    return foo()\n")
    with open(os.path.join(raw, b"bin\xff.dat"), "wb") as fh:
        fh.write(b"\x00\x01\x02" * 100)
    with open(os.path.join(raw, b"id_rsa\xfe"), "wb") as fh:
        fh.write(b"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n")
    return root


# --- 1. a name that is not UTF-8: quoted and escaped in text, carried by JSON --------------


def test_repomap_text_and_explain_show_the_name_escaped(tmp_path, tree):
    r = run(tmp_path, "ctx-repomap", "--explain", str(tree))
    assert r.returncode == 0, r.stderr
    out, err = utf8(r.stdout), utf8(r.stderr)
    assert f"{BAD_SHOWN}:\n1:def bar()\n" in out
    assert b"\xff" not in r.stdout + r.stderr and "\\udc" not in err
    assert f"  {BAD_SHOWN}  score" in err  # chosen, by the name the map shows
    assert "left out" not in err


def test_repomap_json_carries_the_name_and_its_escaped_form(tmp_path, tree):
    r = run(tmp_path, "ctx-repomap", "--json", str(tree))
    assert r.returncode == 0, r.stderr
    doc = json.loads(utf8(r.stdout))
    row = next(f for f in doc["files"] if "path_quoted" in f)
    assert row["path"] == "b\ufffd.py" and row["path_quoted"] == BAD_SHOWN
    assert (tree / os.fsdecode(unquote(row["path_quoted"]))).read_bytes().startswith(b"def bar")
    assert all("path_quoted" not in f for f in doc["files"] if f["path"] == "a.py")
    assert BAD_SHOWN in doc["map"]


def test_pack_markdown_xml_and_notes_show_names_escaped(tmp_path, tree):
    for fmt in ("markdown", "xml"):
        r = run(tmp_path, "ctx-pack", "-q", "bar foo", "--format", fmt, ".", cwd=tree)
        assert r.returncode == 0, r.stderr
        out, err = utf8(r.stdout), utf8(r.stderr)
        assert b"\xff" not in r.stdout + r.stderr and "\\udc" not in err
        assert f"{BAD_SHOWN}:\n1:def bar()" in out  # the map
        head = "==&gt; " if fmt == "xml" else "==> "
        assert f"{head}{BAD_SHOWN} " in out  # the file's header
        assert 'skipped "id_rsa\\376": a secret by its name' in err
    explained = run(tmp_path, "ctx-pack", "-q", "bar foo", "--explain", ".", cwd=tree)
    err = utf8(explained.stderr)
    assert f"  {BAD_SHOWN}  " in err and '  "bin\\377.dat": binary' in err
    assert '  "id_rsa\\376": secret by name' in err and "\\udc" not in err


def test_pack_json_is_utf8_and_gives_the_name_back(tmp_path, tree):
    r = run(tmp_path, "ctx-pack", "-q", "bar foo", "--json", ".", cwd=tree)
    assert r.returncode == 0, r.stderr
    doc = json.loads(utf8(r.stdout))
    row = next(f for f in doc["files"] if f["path"] != "a.py")
    assert row["path"] == "b\ufffd.py" and unquote(row["path_quoted"]) == BAD
    assert {"what": '"bin\\377.dat"', "why": "binary"} in doc["dropped"]
    assert BAD_SHOWN in doc["text"]


def test_count_text_tree_json_and_errors(tmp_path, tree):
    bad = os.path.join(os.fsencode(str(tree)), BAD)
    r = run(tmp_path, "ctx-count", bad, str(tree / "a.py"))
    assert r.returncode == 0, r.stderr
    assert f'"{tree}/b\\377.py"\n' in utf8(r.stdout)
    r = run(tmp_path, "ctx-count", "--tree", str(tree))
    assert r.returncode == 0, r.stderr
    out = utf8(r.stdout)
    assert f"── {BAD_SHOWN}\n" in out and f"  {BAD_SHOWN}\n" in out  # the tree, the heaviest
    r = run(tmp_path, "ctx-count", "--tree", "--json", str(tree))
    doc = json.loads(utf8(r.stdout))
    quoted = {unquote(f["path_quoted"]) for f in doc["heaviest"] if "path_quoted" in f}
    assert quoted == {BAD, b"bin\xff.dat", b"id_rsa\xfe"}
    r = run(tmp_path, "ctx-count", "--json", bad)
    (row,) = json.loads(utf8(r.stdout))["files"]
    assert unquote(row["path_quoted"]) == bad and "\ufffd" in row["path"]
    r = run(tmp_path, "ctx-count", b"nope\xff.py", cwd=tree)
    assert r.returncode == 1
    assert utf8(r.stderr) == 'ctx-count: error: "nope\\377.py": no such file\n'


def test_excerpt_header_and_json(tmp_path, tree):
    r = run(tmp_path, "ctx-excerpt", "-q", "bar", BAD, cwd=tree)
    assert r.returncode == 0, r.stderr
    assert utf8(r.stdout).startswith(f"==> {BAD_SHOWN} <== ")
    r = run(tmp_path, "ctx-excerpt", "--json", "-q", "bar", BAD, cwd=tree)
    (row,) = json.loads(utf8(r.stdout))["files"]
    assert row["path"] == "b\ufffd.py" and unquote(row["path_quoted"]) == BAD


def test_a_memory_file_named_so_is_ranked_by_the_encoder(tmp_path, tree):
    """The sentence encoder's tokenizer takes valid text only: a chunk's file name that is
    not UTF-8 made ctx-pack --memory a traceback (TypeError) when the encoder ranked it."""
    from ctxtools.retrieval import encoder

    model = encoder.load_encoder()
    if model is None:
        pytest.skip("the semantic extra's encoder is not installed")
    assert model.embed(["n\udcfe.md bar"]).shape[0] == 1  # (was: TypeError)
    notes = tree / "notes"
    notes.mkdir()
    with open(os.path.join(os.fsencode(str(notes)), b"n\xfe.md"), "wb") as fh:
        fh.write(b"# Notes\nbar is done in foo\n")
    r = run(
        tmp_path, "ctx-pack", "-q", "bar foo", "--memory", "notes", ".",
        cwd=tree, env={"CTX_SEMANTIC": "1"},
    )
    assert r.returncode == 0, r.stderr
    assert '## "notes/n\\376.md" § Notes' in utf8(r.stdout)


# --- 2. arguments in the C locale, and bytes that are not UTF-8 in a task -----------------


@pytest.mark.parametrize("locale", ["C", "POSIX"])
def test_utf8_arguments_work_in_the_c_locale(tmp_path, locale):
    """Python 3.7+ coerces the C locale to UTF-8 (PEP 538, 540): a UTF-8 name and task given
    in it are the same text as in a UTF-8 locale."""
    root = tmp_path / "t"
    root.mkdir()
    (root / "café.py").write_text("def foo():\n    return 1\n")
    env = {"LC_ALL": locale, "LANG": locale, "PYTHONUTF8": None, "PYTHONIOENCODING": None}
    r = run(tmp_path, "ctx-count", "--json", "café.py".encode(), cwd=root, env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(utf8(r.stdout))["files"][0]["path"] == "café.py"
    r = run(tmp_path, "ctx-pack", "-q", "café foo".encode(), ".", cwd=root, env=env)
    assert r.returncode == 0, r.stderr
    out = utf8(r.stdout)
    assert "==> café.py <== " in out and out.endswith("# Task\n\ncafé foo\n")


def test_a_task_with_bytes_that_are_not_utf8_is_the_same_from_argv_or_stdin(tmp_path, tree):
    """A task's bad byte is U+FFFD in the pack (as in a file's text), however the task
    came; an @-mention of a name that is not UTF-8 resolves either way."""
    task = b"bar @" + BAD + b" and bad\xfe"
    by_arg = run(tmp_path, "ctx-pack", "-q", task, ".", cwd=tree)
    by_stdin = run(tmp_path, "ctx-pack", "-q", "-", ".", cwd=tree, stdin=task)
    assert by_arg.returncode == by_stdin.returncode == 0, by_arg.stderr + by_stdin.stderr
    assert by_arg.stdout == by_stdin.stdout
    out = utf8(by_arg.stdout)
    assert out.endswith("# Task\n\nbar @b\ufffd.py and bad\ufffd\n")
    assert f"==> {BAD_SHOWN} <== " in out and "not resolved" not in utf8(by_arg.stderr)


# --- 3. ctx-compact: the summary only once the output is written --------------------------


def _transcript(path: Path, calls: int) -> Path:
    msgs: list[dict] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
    for i in range(calls):
        args = json.dumps({"path": f"f{i}.py"})
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": args}}
        msgs.append({"role": "assistant", "content": None, "tool_calls": [call]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": "x = 1\n" * 300})
    msgs.append({"role": "assistant", "content": "done"})
    path.write_text(json.dumps(msgs))
    return path


NO_DIR = (
    "ctx-compact: error: -o /nonexistent-dir/x.json: cannot write "
    "(no such directory: /nonexistent-dir)\n"
)
FULL = "ctx-compact: error: cannot write to standard output: No space left on device\n"


@pytest.mark.parametrize("calls", [30, 0])  # compacted; unchanged: a summary line each
@pytest.mark.parametrize("unbuffered", ["", "1"])  # (buffered: the write fails at a flush)
def test_compact_o_that_cannot_be_written_is_the_one_line_said(tmp_path, calls, unbuffered):
    src = _transcript(tmp_path / "t.json", calls)
    argv = ("ctx-compact", "--limit", "8000", "-o", "/nonexistent-dir/x.json", str(src))
    r = run(tmp_path, *argv, env={"PYTHONUNBUFFERED": unbuffered})
    assert (r.returncode, utf8(r.stderr)) == (1, NO_DIR)
    ok = run(tmp_path, *argv[:-3], str(src), env={"PYTHONUNBUFFERED": unbuffered})
    assert ok.returncode == 0 and utf8(ok.stderr).startswith("ctx-compact: ")  # (the summary)


@pytest.mark.parametrize("calls", [30, 0])
@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_compact_to_a_full_stdout_is_the_one_line_said(tmp_path, calls, unbuffered):
    src = _transcript(tmp_path / "t.json", calls)
    with open("/dev/full", "wb") as full:
        r = run(tmp_path, "ctx-compact", "--limit", "8000", str(src), stdout=full,
                env={"PYTHONUNBUFFERED": unbuffered})
    assert (r.returncode, utf8(r.stderr)) == (1, FULL)


def test_compact_o_writes_its_best_result_when_it_exits_4(tmp_path):
    """Exit 4 (not under the target) still writes the output (ctx-compact --help): under -o
    too, and the summary comes after the file is written."""
    src = _transcript(tmp_path / "t.json", 6)
    out = tmp_path / "out.json"
    r = run(tmp_path, "ctx-compact", "--limit", "2000", "-o", str(out), str(src))
    assert r.returncode == 4, r.stderr
    plain = run(tmp_path, "ctx-compact", "--limit", "2000", str(src))
    assert plain.returncode == 4 and out.read_bytes() == plain.stdout != b""
    assert utf8(r.stderr) == utf8(plain.stderr)


# --- 4. a working directory removed under the command -------------------------------------


@pytest.fixture
def gone(tmp_path):
    """A preexec function: the process starts in a directory removed before it runs."""
    where = tmp_path / "gone"

    def enter_and_remove():
        where.mkdir()
        os.chdir(where)
        os.rmdir(where)

    return enter_and_remove


def test_pack_in_a_removed_directory_with_absolute_paths(tmp_path, tree, gone):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "n.md").write_text("# Notes\nbar is done in foo\n")
    r = run(tmp_path, "ctx-pack", "-q", "bar foo", "--root", str(tree), "--memory", str(notes),
            str(tree), pre=gone)
    assert r.returncode == 0, r.stderr
    out = utf8(r.stdout)
    assert "# Repository map" in out and "==> a.py <== " in out and "# Memory" in out
    assert "not built" not in utf8(r.stderr)
    mention = run(tmp_path, "ctx-pack", "-q", "foo @a.py", "--root", str(tree), pre=gone)
    assert mention.returncode == 0 and "==> a.py <== " in utf8(mention.stdout)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["ctx-pack", "-q", "x", "TREE"], "--root ."),  # --root defaults to the cwd
        (["ctx-pack", "-q", "x", "--root", "TREE", "a.py"], "a.py"),
        (["ctx-pack", "-q", "x", "--root", "TREE", "--memory", "notes", "TREE"], "--memory notes"),
        (["ctx-repomap", "t"], "t"),
        (["ctx-count", "--tree", "t"], "t"),
        (["ctx-count", "a.py"], "a.py"),
    ],
)
def test_a_relative_path_in_a_removed_directory_is_one_line_naming_the_cause(
    tmp_path, tree, gone, argv, named
):
    argv = [str(tree) if a == "TREE" else a for a in argv]
    r = run(tmp_path, *argv, pre=gone)
    assert r.returncode == 1
    assert utf8(r.stderr) == (
        f"{argv[0]}: error: {named}: relative, and the current directory no longer exists "
        "(cd to a directory that does, or give an absolute path)\n"
    )


def test_repomap_and_count_tree_in_a_removed_directory_with_absolute_paths(tmp_path, tree, gone):
    r = run(tmp_path, "ctx-repomap", "--focus", "a.py", str(tree), pre=gone)
    assert r.returncode == 0, r.stderr
    assert "a.py:\n1:def foo()" in utf8(r.stdout)
    r = run(tmp_path, "ctx-count", "--tree", str(tree), pre=gone)
    assert r.returncode == 0, r.stderr
    assert "── a.py" in utf8(r.stdout)


def test_a_hint_names_a_file_that_is_not_utf8_as_a_shell_reads_it(tmp_path):
    # ctx-read FILE (a file, not a handle) says how to read it: the command it gives must
    # be valid UTF-8 and, pasted into bash, must read that very file.
    (tmp_path / "w").mkdir()
    name = b"f\xff.txt"
    with open(os.path.join(os.fsencode(str(tmp_path / "w")), name), "wb") as fh:
        fh.write(b"one\ntwo\n")
    proc = run(tmp_path, "ctx-read", name, cwd=tmp_path / "w")
    assert proc.returncode == 2
    line = utf8(proc.stderr)
    assert line.count("\n") == 1
    assert "$'f\\377.txt'" in line
    cmd = line.split("ctx-read < ", 1)[1].split(" reads it", 1)[0]
    path = f"{BIN}:{os.environ['PATH']}"
    env = {**os.environ, "CTX_STORE": str(tmp_path / "store"), "PATH": path}
    got = subprocess.run(["bash", "-c", f"ctx-read < {cmd}"], cwd=tmp_path / "w", env=env,
                         capture_output=True, timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout == b"one\ntwo\n"


def test_a_handle_name_that_is_not_utf8_is_refused_in_one_readable_line(tmp_path):
    proc = run(tmp_path, "ctx-stash", "--name", b"a\xffb", stdin=b"x\n" * 10)
    assert proc.returncode == 2
    line = utf8(proc.stderr)  # was: invalid name 'a\udcffb' (Python's repr)
    assert line.startswith('ctx-stash: error: invalid name "a\\377b" (')
    assert line.count("\n") == 1
