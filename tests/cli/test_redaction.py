"""Issue 27, item 6: the paths that skipped redaction -- a --changed diff hunk's "+" line,
a renamed or hard-linked .env, a memory section's heading, ctx-excerpt (every output
form), ctx-repomap, ctx-read --redact. The secret is a made-up value in a password's
shape and protects nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import git, write

PW = "Xk29aLmQ0pZr7TbWc3YhN8vD"


def run(script_runner, prog, *args, ok=True):
    r = script_runner.run([prog, *args])
    assert "Traceback" not in r.stderr
    if ok:
        assert r.returncode == 0, r.stderr
    return r


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.chdir(root)
    write(root, "db.py", f'def connect(host, password="{PW}"):\n    return host\n')
    write(root, "deploy.cfg", "[deploy]\nhost = db\n")
    write(root, ".env", f"DEBUG=1\nDB_PASSWORD={PW}\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def test_a_changed_diff_hunk_is_redacted_whatever_its_prefix(script_runner, tree):
    write(tree, "deploy.cfg", f"[deploy]\nhost = db\nDB_PASSWORD={PW}\n")
    r = run(script_runner, "ctx-pack", "-t", "review", "--tokens", "6000", "--changed")
    assert PW not in r.stdout
    assert "+DB_PASSWORD=[secret redacted: password]" in r.stdout


def test_a_renamed_dotenv_is_left_out_by_its_content(script_runner, tree):
    git(tree, "mv", ".env", "config.txt")
    r = run(script_runner, "ctx-pack", "-t", "review config", "--tokens", "6000", ".")
    assert PW not in r.stdout
    # (it said "a secret by its name (dotenv (by its content); ...)": found by its lines)
    assert "skipped config.txt: a secret by its content (dotenv; --allow-secrets)" in r.stderr
    assert "by its name" not in r.stderr
    doc = json.loads(run(script_runner, "ctx-pack", "-t", "review config", "--tokens", "6000",
                         "--format", "json", ".").stdout)
    assert {"what": "config.txt", "why": "secret by content (dotenv)"} in doc["dropped"]


def test_many_renamed_dotenvs_are_summed_up_as_found_by_content(script_runner, tree):
    for i in range(8):  # past the five said one by one
        write(tree, f"svc{i}/settings.txt", f"API_TOKEN=t{i}{PW}\n")
    write(tree, "svc9/.env", f"DB_PASSWORD={PW}\n")
    r = run(script_runner, "ctx-pack", "-q", "review settings", "--tokens", "6000", ".")
    assert PW not in r.stdout
    assert "skipped .env: a secret by its name (dotenv; --allow-secrets)" in r.stderr
    summed = [ln for ln in r.stderr.splitlines() if "more file(s)" in ln]
    assert summed == [
        "ctx-pack: skipped 5 more file(s): secrets by their names or contents (dotenv 1, "
        "dotenv by its content 4; --allow-secrets; --format json lists each under dropped)"
    ], r.stderr


def test_a_dotenv_renamed_to_a_name_the_pack_never_reads(script_runner, tree):
    # A translation catalogue is left out by its name, unread: its bytes are not sniffed
    # (the output says why it is out), and they leak nowhere.
    git(tree, "mv", ".env", "locale.po")
    r = run(script_runner, "ctx-pack", "-t", "review locale", "--tokens", "6000", ".")
    assert PW not in r.stdout and PW not in r.stderr
    assert "dotenv" not in r.stderr and "translation catalogue" in r.stderr
    # ... unless --include can bring it back: then it is sniffed, and out as a secret.
    r = run(script_runner, "ctx-pack", "-t", "review locale", "--tokens", "6000",
            "--include", "*.po", ".")  # fmt: skip
    assert PW not in r.stdout
    assert "skipped locale.po: a secret by its content (dotenv;" in r.stderr
    # ... and so it is when it is named.
    r = run(script_runner, "ctx-pack", "-t", "review locale", "--tokens", "6000", "locale.po")
    assert PW not in r.stdout
    assert "skipped locale.po: a secret by its content (dotenv;" in r.stderr


def test_a_hard_link_to_dotenv_is_left_out(script_runner, tree):
    os.link(tree / ".env", tree / "settings")
    r = run(script_runner, "ctx-pack", "-t", "settings", "--tokens", "6000", "settings", "db.py")
    assert PW not in r.stdout
    assert "skipped settings" in r.stderr


def test_a_memory_heading_is_redacted(script_runner, tree):
    write(tree, "NOTES.md", f"# Notes\n\n## Deploy with DB_PASSWORD={PW}\n\nRun psql to deploy.\n")
    r = run(
        script_runner, "ctx-pack", "-t", "deploy psql", "--tokens", "6000", "--memory", "NOTES.md"
    )
    assert PW not in r.stdout and PW not in r.stderr
    assert "Deploy with DB_PASSWORD=[secret redacted: password]" in r.stdout


@pytest.mark.parametrize(
    "args",
    [[], ["--json"], ["--tokens", "800"], ["--sort", "score"], ["--signatures"]],
    ids=["stream", "json", "tokens", "sorted", "signatures"],
)
def test_excerpt_redacts_every_output_form(script_runner, tree, args):
    r = run(script_runner, "ctx-excerpt", "-q", "connect DB_PASSWORD", *args, "db.py", "deploy.cfg")
    assert PW not in r.stdout
    assert "[secret redacted: password]" in r.stdout
    assert "redacted 1 secret (password; --allow-secrets)" in r.stderr


def test_excerpt_of_a_private_key_file_shows_its_numbered_lines_and_no_key(script_runner, tree):
    # curl's tests/certs/*.key came out of ctx-excerpt whole: the block rule stopped at the
    # gutter. A key under a name that is not a secret's: excerpt windows what it is given.
    key = (Path(__file__).parents[1] / "data" / "secrets" / "rsa_traditional.pem").read_text()
    (tree / "server_key.txt").write_text(key)
    lines = key.splitlines()
    for args in ([], ["--head", "3", "--max-windows", "1"], ["--json"]):
        r = run(script_runner, "ctx-excerpt", "-q", "rsa private", *args, "server_key.txt")
        assert not any(t in r.stdout for t in lines[1:-1]), args
        assert "[secret redacted: private key]" in r.stdout
        assert ("server_key.txt: redacted 1 private key block (read as blank lines; "
                "--allow-secrets)") in r.stderr
    r = run(script_runner, "ctx-excerpt", "-q", "rsa private", "server_key.txt")
    shown = [ln for ln in r.stdout.splitlines() if "\t" in ln]
    assert [ln.split("\t")[0] for ln in shown] == [str(i) for i in range(1, len(shown) + 1)]
    r = run(script_runner, "ctx-excerpt", "-q", "rsa", "--allow-secrets", "server_key.txt")
    assert lines[1] in r.stdout


def test_excerpt_window_that_starts_inside_a_key_block_shows_none_of_it(script_runner, tree):
    # A build log that printed a key: the window around the error starts mid-block, past
    # its BEGIN line, where no rule can know base64 lines for a key.
    key = (Path(__file__).parents[1] / "data" / "secrets" / "rsa_traditional.pem").read_text()
    body = key.splitlines()[1:-1]
    steps = "".join(f"step {i} ok\n" for i in range(30))
    (tree / "build.log").write_text(steps + key + "ERROR: handshake failed\n" + steps)
    args = ("-q", "handshake error", "--window", "8", "--head", "0", "build.log")
    r = run(script_runner, "ctx-excerpt", *args)
    assert "ERROR: handshake failed" in r.stdout and "46\t" in r.stdout
    assert not any(line in r.stdout for line in body)
    r = run(script_runner, "ctx-excerpt", *args, "--json")
    assert not any(line in r.stdout for line in body)
    assert body[-1] in run(script_runner, "ctx-excerpt", *args, "--allow-secrets").stdout


def test_excerpt_of_a_large_streamed_log_blanks_a_key_block_too(script_runner, tree):
    # Over 512 KB a text is streamed in pieces, never held whole: its key blocks are found
    # piece by piece and its shown lines inside them blanked.
    key = (Path(__file__).parents[1] / "data" / "secrets" / "rsa_traditional.pem").read_text()
    body = key.splitlines()[1:-1]
    steps = "".join(f"[{i:08d}] INFO step ok\n" for i in range(30000))
    (tree / "ci.log").write_text(steps + key + "ERROR: handshake failed\n" + steps[:1000])
    assert (tree / "ci.log").stat().st_size > 512 * 1024
    args = ("-q", "handshake error", "--window", "8", "ci.log")
    r = run(script_runner, "ctx-excerpt", *args)
    assert "ERROR: handshake failed" in r.stdout
    assert not any(line in r.stdout for line in body)
    assert "ci.log: redacted 1 private key block (read as blank lines" in r.stderr
    assert body[-1] in run(script_runner, "ctx-excerpt", *args, "--allow-secrets").stdout


def test_excerpt_memory_and_allow_secrets(script_runner, tree):
    write(tree, "NOTES.md", f"# Notes\n\n## Deploy with DB_PASSWORD={PW}\n\nRun psql to deploy.\n")
    r = run(script_runner, "ctx-excerpt", "--memory", "NOTES.md", "-q", "deploy psql")
    assert PW not in r.stdout and "[secret redacted: password]" in r.stdout
    r = run(script_runner, "ctx-excerpt", "-q", "connect", "--allow-secrets", "db.py")
    assert PW in r.stdout and "redacted" not in r.stderr


@pytest.mark.parametrize("args", [[], ["--json"]], ids=["text", "json"])
def test_repomap_redacts_signatures(script_runner, tree, args):
    r = run(script_runner, "ctx-repomap", "--tokens", "500", *args)
    assert PW not in r.stdout
    if args:
        json.loads(r.stdout)  # still one valid document
    assert "[secret redacted: password]" in r.stdout
    r = run(script_runner, "ctx-repomap", "--tokens", "500", "--allow-secrets", *args)
    assert PW in r.stdout


def test_read_redacts_on_request(script_runner, tree):
    log = f"step 1\nPGPASSWORD={PW} psql -h db\n"
    stash = script_runner.run(["ctx-stash", "--always", "--name", "deploy"], stdin=_stdin(log))
    assert stash.returncode == 0, stash.stderr
    assert PW in run(script_runner, "ctx-read", "deploy").stdout
    r = run(script_runner, "ctx-read", "deploy", "--redact")
    assert r.stdout == "step 1\nPGPASSWORD=[secret redacted: password] psql -h db\n"
    assert "redacted 1 secret (password)" in r.stderr


def test_read_of_a_key_blocks_middle_lines_shows_none_of_them(script_runner, tree):
    # A slice (--range, --grep) of a stored log's key block held no BEGIN line, so no rule
    # knew its base64 lines: the payload is read through a copy with the block blanked.
    key = (Path(__file__).parents[1] / "data" / "secrets" / "rsa_traditional.pem").read_text()
    body = key.splitlines()[1:-1]
    log = "deploy: writing the server key\n" + key + "deploy: done\n"
    stash = script_runner.run(["ctx-stash", "--always", "--name", "keylog"], stdin=_stdin(log))
    assert stash.returncode == 0, stash.stderr
    assert body[3] in run(script_runner, "ctx-read", "keylog", "--range", "4-6").stdout
    for args in (["--range", "4-6"], ["--grep", "[A-Z]"], ["--range", "1-"]):
        r = run(script_runner, "ctx-read", "keylog", "--redact", *args)
        assert not any(line in r.stdout for line in body), args
        assert "redacted 1 block of the payload (private key): read as blank lines" in r.stderr
    r = run(script_runner, "ctx-read", "keylog", "--redact", "--range", "16-")  # END, then
    assert r.stdout == "\ndeploy: done\n"  # the block's last line reads blank, in its place
    r = run(script_runner, "ctx-read", "keylog", "--redact", "--grep", "deploy")
    assert r.stdout == "1:deploy: writing the server key\n17:deploy: done\n"


def _stdin(text: str):
    import io

    return io.TextIOWrapper(io.BytesIO(text.encode()))
