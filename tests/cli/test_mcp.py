"""ctx-mcp as a real process, driven by the MCP SDK's own stdio client (and, where npx is,
by the MCP Inspector's command-line mode: a second, independent client).

Every test starts the installed ``ctx-mcp`` console script as a subprocess on a small real
repository made in tmp_path: real sources in five languages, an AGENTS.md, a secret file,
a long log, and a symlink that leads out of the repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from helpers import CORPUS, convert, copy_sources, git, write
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN = Path(sys.executable).parent
EXE = str(BIN / "ctx-mcp")
TOOLS = ["count", "stash", "read", "excerpt", "repomap", "pack", "compact"]
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token's shape, not a token
NEXT = re.compile(r"next: read (\{.*\})\]$", re.M)


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    copy_sources(root)
    write(root, "AGENTS.md", "# Rules\n\nRun the tests with pytest.\n")
    write(root, ".env", f"GITHUB_TOKEN={SECRET}\n")
    write(root, "src/config.py", f'TOKEN = "{SECRET}"\n\ndef load_config():\n    return TOKEN\n')
    write(root, "build.log", "".join(f"step {i}: compiling module_{i}\n" for i in range(400)))
    outside = write(tmp_path, "outside/private.txt", "not for the model\n")
    os.symlink(outside, root / "link.txt")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def _env(store: Path) -> dict[str, str]:
    return {"CTX_STORE": str(store), "NO_COLOR": "1", "PYTHONHASHSEED": "0"}


@asynccontextmanager
async def client(store: Path, *args: str, cwd: Path | None = None, roots=None, errlog=None):
    """An initialized ClientSession on a fresh ctx-mcp ARGS... (ROOTS: the client's roots)."""
    params = StdioServerParameters(command=EXE, args=list(args), env=_env(store), cwd=cwd)
    kw = {}
    if roots is not None:
        import mcp.types as types

        async def list_roots(ctx):
            return types.ListRootsResult(roots=[types.Root(uri=Path(r).as_uri()) for r in roots])

        kw["list_roots_callback"] = list_roots
    async with (
        stdio_client(params, errlog=errlog or sys.stderr) as (r, w),
        ClientSession(r, w, **kw) as session,
    ):
        await session.initialize()
        yield session


def run(fn, *args):
    return anyio.run(fn, *args)


def text(result) -> str:
    return result.content[0].text


def card_of(result) -> dict:
    return json.loads(text(result).splitlines()[0])


# --- the session: initialize, the tools and their schemas ----------------------------------


def test_initialize_lists_the_tools_with_their_schemas(repo, store_dir):
    async def go():
        async with client(store_dir, "--root", str(repo)) as s:
            listed = await s.list_tools()
            assert [t.name for t in listed.tools] == TOOLS  # no run without --allow-run
            by_name = {t.name: t for t in listed.tools}
            for t in listed.tools:
                assert t.description and len(t.description) > 40
                assert t.input_schema["type"] == "object"
                assert t.input_schema["additionalProperties"] is False
                for prop in t.input_schema["properties"].values():
                    assert prop["description"]
            read = by_name["read"].input_schema
            assert read["required"] == ["ref"]
            assert {"range", "slice", "head", "tail", "grep", "context", "jsonpath"} <= set(
                read["properties"]
            )
            assert {"count", "introspect", "max_chars"} <= set(read["properties"])
            assert set(by_name["pack"].input_schema["properties"]) >= {
                "task",
                "paths",
                "tokens",
                "model",
                "role",
                "changed",
            }
            assert s.initialize_result.server_info.name == "ctxtools"

    run(go)


# --- every tool on the repository ----------------------------------------------------------


def test_every_tool_on_a_real_repository(repo, store_dir):
    runs = {r["instance_id"]: convert.to_openai(r) for r in convert.runs_from_jsonl(CORPUS)}
    transcript = next(iter(runs.values()))

    async def go():
        async with client(store_dir, "--root", str(repo)) as s:
            counted = json.loads(text(await s.call_tool("count", {"text": "hello world"})))
            assert counted["total"]["tokens"] == 2 and counted["exact"] is True
            files = await s.call_tool("count", {"paths": ["src/auth.py"], "model": "gpt-4o"})
            doc = json.loads(text(files))
            assert doc["files"][0]["path"] == "src/auth.py"
            assert doc["usage"]["context_limit"] == 128000

            card = json.loads(
                text(await s.call_tool("stash", {"text": "a\nb\nc\n", "name": "abc"}))
            )
            assert card["kind"] == "handle" and card["lines"] == 3
            got = await s.call_tool("read", {"ref": "abc", "range": "2-3"})
            assert not got.is_error and text(got) == "b\nc\n"

            ex = await s.call_tool("excerpt", {"query": "verify token", "paths": ["src/auth.py"]})
            assert not ex.is_error
            assert "src/auth.py" in text(ex)

            mapped = await s.call_tool("repomap", {"tokens": 300})
            assert not mapped.is_error and "src/auth.py" in text(mapped)

            packed = await s.call_tool("pack", {"task": "fix the token check", "tokens": 4000})
            assert not packed.is_error
            assert card_of(packed)["name"].startswith("pack-")  # over 1,000 chars: stored

            compacted = await s.call_tool("compact", {"transcript": transcript, "limit": 8000})
            assert not compacted.is_error, text(compacted)
            stored = card_of(compacted)
            summary = await s.call_tool("read", {"ref": stored["ref"], "jsonpath": "$.summary"})
            assert "messages" in text(summary)
            tr = await s.call_tool("read", {"ref": stored["ref"], "jsonpath": "$.report.action"})
            assert '"compacted"' in text(tr)

    run(go)


def test_a_stored_result_pages_to_its_end_and_equals_the_command_line_pack(repo, store_dir):
    args = ["--task", "fix verify_token in @src/auth.py", "--tokens", "3000", "src/"]
    cli = subprocess.run(
        [str(BIN / "ctx-pack"), *args], cwd=repo, capture_output=True, env={**os.environ}
    )
    assert cli.returncode == 0, cli.stderr

    async def go():
        async with client(store_dir, "--root", str(repo), "--inline-max", "300") as s:
            res = await s.call_tool(
                "pack",
                {"task": "fix verify_token in @src/auth.py", "tokens": 3000, "paths": ["src/"]},
            )
            card = card_of(res)
            first = text(res).split("\n", 1)[1]
            pages = [NEXT.sub("", first).rstrip("\n").rsplit("\n[ctx-read: cut", 1)[0]]
            call = json.loads(NEXT.search(first).group(1))
            assert call["ref"] == card["ref"]
            for _ in range(200):
                page = text(await s.call_tool("read", call))
                found = NEXT.search(page)
                if found is None:
                    pages.append(page)
                    break
                pages.append(page[: page.rindex("\n[ctx-read: cut")])
                call = json.loads(found.group(1))
            else:
                raise AssertionError("paging never ended")
            return card, pages

    card, pages = run(go)
    joined = "\n".join(p.rstrip("\n") for p in pages) + "\n"
    assert joined.encode() == cli.stdout
    assert card["bytes"] == len(cli.stdout)


def test_handles_are_resources_listed_and_readable(repo, store_dir):
    async def go():
        async with client(store_dir, "--root", str(repo)) as s:
            await s.call_tool(
                "stash", {"text": "".join(f"row {i}\n" for i in range(50)), "name": "rows"}
            )
            listed = await s.list_resources()
            uris = [r.uri for r in listed.resources]
            assert "ctx://default/rows" in uris
            whole = await s.read_resource("ctx://default/rows")
            assert whole.contents[0].text.startswith("row 0\nrow 1\n")
            part = await s.read_resource("ctx://default/rows?range=3-4")
            assert part.contents[0].text == "row 2\nrow 3\n"
            templates = await s.list_resource_templates()
            assert templates.resource_templates[0].uri_template == "ctx://{session}/{name}"
            from mcp.shared.exceptions import MCPError

            with pytest.raises(MCPError, match="ctx-read: error: no handle default/nothing"):
                await s.read_resource("ctx://default/nothing")

    run(go)


# --- errors: the command's own line, never a dead server -----------------------------------


def _cli_error(args: list[str], store: Path, cwd: Path) -> str:
    proc = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, env={**os.environ, "CTX_STORE": str(store)}
    )
    assert proc.returncode != 0
    return proc.stderr.strip().splitlines()[-1]


def test_a_stale_reference_fails_with_the_line_ctx_read_prints(repo, store_dir):
    async def go():
        async with client(store_dir, "--root", str(repo)) as s:
            old = json.loads(text(await s.call_tool("stash", {"text": "one\n", "name": "x"})))
            await s.call_tool("stash", {"text": "two\n", "name": "x"})
            res = await s.call_tool("read", {"ref": old["ref"]})
            assert res.is_error
            return old, text(res)

    old, message = run(go)
    assert "stale handle" in message
    assert message == _cli_error([str(BIN / "ctx-read"), old["ref"]], store_dir, repo)


def test_a_budget_below_the_floor_fails_as_ctx_pack_says(repo, store_dir):
    async def go():
        async with client(store_dir, "--root", str(repo)) as s:
            res = await s.call_tool("pack", {"task": "x", "model": "tiny", "tokens": 100})
            return res

    res = run(go)
    assert res.is_error
    line = _cli_error([str(BIN / "ctx-pack"), "-q", "x", "--tokens", "100"], store_dir, repo)
    # the command line adds where to read more; the tool's result is the same line without,
    # naming the tool's argument (tokens) where the command names its flag (--tokens)
    line = line.replace("; see ctx-pack --help)", ")").replace("--tokens", "tokens")
    assert text(res) == line and line.startswith("ctx-pack: error: ")


def test_errors_name_the_tools_arguments_not_command_line_flags(repo, store_dir):
    """Issue 28.8: an agent cannot type --range or ctx-stash --list; the error names the
    read tool's argument and what a client can do (resources/list)."""

    async def go():
        async with client(store_dir, "--root", str(repo)) as s:
            await s.call_tool("stash", {"text": "a\nb\n", "name": "x"})
            calls = [
                ({"ref": "x", "range": "0-3"}, "range 0-3: line numbers start at 1"),
                ({"ref": "x", "context": 2}, "context and ignore_case go with grep"),
                ({"ref": "nothing"}, "no handle default/nothing (resources/list lists them)"),
            ]
            got = []
            for args, want in calls:
                res = await s.call_tool("read", args)
                assert res.is_error, args
                got.append((text(res), want))
            return got

    for said, want in run(go):
        assert said == f"ctx-read: error: {want}"
        assert "--" not in said and "ctx-stash" not in said


def test_paths_symlinks_and_mentions_outside_the_roots_are_refused(repo, store_dir, tmp_path):
    async def go():
        async with client(store_dir, "--root", str(repo)) as s:
            calls = [
                ("count", {"paths": ["../outside/private.txt"]}, "../outside/private.txt"),
                ("count", {"paths": ["link.txt"]}, "link.txt"),
                ("excerpt", {"query": "model", "paths": [str(tmp_path / "outside")]}, "outside"),
                ("pack", {"task": "read @../outside/private.txt"}, "@../outside/private.txt"),
                ("pack", {"task": "x", "paths": ["/etc"]}, "/etc"),
                ("repomap", {"path": str(tmp_path)}, str(tmp_path)),
            ]
            for tool, args, named in calls:
                res = await s.call_tool(tool, args)
                assert res.is_error, (tool, args)
                assert named in text(res) and "outside the roots" in text(res)
                assert "not for the model" not in text(res)
            # the server is still there
            ok = await s.call_tool("count", {"text": "still here"})
            assert not ok.is_error

    run(go)


def test_malformed_arguments_and_an_unknown_tool_are_error_results(repo, store_dir):
    async def go():
        async with client(store_dir, "--root", str(repo)) as s:
            cases = [
                ("read", {"ref": 3}, "ctx-read: error: argument 'ref' must be a string"),
                ("read", {}, "ctx-read: error: argument 'ref' is required"),
                ("read", {"ref": "x", "bogus": 1}, "ctx-read: error: unknown argument 'bogus'"),
                ("read", {"ref": "x", "head": 2, "tail": 2}, "ctx-read: error: head and tail"),
                ("read", {"ref": "x", "head": True}, "argument 'head' must be a whole number"),
                ("count", {}, "ctx-count: error: give text or paths"),
                ("repomap", {"tokens": 10}, "below the minimum of 50"),
                (
                    "pack",
                    {"task": "x", "paths": ["https://github.com/psf/requests@v2.32.3"]},
                    "ctx-pack: error: https://github.com/psf/requests@v2.32.3: a repository URL "
                    "is not packed here",
                ),
                ("run", {"command": ["true"]}, "ctx-mcp: error: unknown tool 'run'"),
                ("nosuch", {}, "ctx-mcp: error: unknown tool 'nosuch'"),
            ]
            for tool, args, want in cases:
                res = await s.call_tool(tool, args)
                assert res.is_error, (tool, args)
                assert want in text(res), text(res)
                assert len(text(res).splitlines()) == 1

    run(go)


# --- the client's roots, secrets, concurrency ----------------------------------------------


def test_without_root_the_clients_roots_apply(repo, store_dir, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def go():
        async with client(store_dir, cwd=elsewhere, roots=[repo]) as s:
            ok = await s.call_tool("count", {"paths": ["src/auth.py"]})
            assert not ok.is_error, text(ok)
            res = await s.call_tool("count", {"paths": [str(elsewhere)]})
            assert res.is_error and "outside the roots" in text(res)
            assert "the client's roots" in text(res)

    run(go)


def test_secrets_stay_out_of_pack_and_excerpt(repo, store_dir):
    async def go():
        async with client(store_dir, "--root", str(repo), "--inline-max", "100000") as s:
            packed = await s.call_tool("pack", {"task": "load_config", "paths": ["src/", ".env"]})
            ex = await s.call_tool(
                "excerpt", {"query": "TOKEN", "paths": ["src/config.py", ".env"]}
            )
            return packed, ex

    packed, ex = run(go)
    for res in (packed, ex):
        assert not res.is_error, text(res)
        assert SECRET not in text(res)
        assert "[secret redacted: " in text(res)
        assert any("a secret by its name" in c.text for c in res.content[1:])


def test_read_of_a_stored_key_blocks_middle_lines_shows_none(repo, store_dir):
    """A read's next part can start inside a key block: the tool reads a copy of the payload
    with the block blanked (the reply's own pass cannot know base64 lines by themselves)."""
    key = (Path(__file__).parents[1] / "data" / "secrets" / "rsa_traditional.pem").read_text()
    body = key.splitlines()[1:-1]

    async def go():
        async with client(store_dir, "--root", str(repo)) as s:
            await s.call_tool("stash", {"text": "start\n" + key + "end\n", "name": "k"})
            return [await s.call_tool("read", {"ref": "k", "range": r}) for r in ("5-8", "1-")]

    for res in run(go):
        assert not res.is_error, text(res)
        assert not any(line in text(res) for line in body)
        assert any("redacted 1 block of the payload" in c.text for c in res.content[1:])


def test_every_tool_reply_is_redacted_whatever_the_prefix(repo, store_dir):
    """Issue 27: repomap redacted nothing, read served a stored log raw, and an excerpt's
    gutter or a map's prefix defeated the line-start rules."""
    pw = "Xk29aLmQ0pZr7TbWc3YhN8vD"
    write(repo, "src/settings.py", f'def connect(host, password="{pw}"):\n    return host\n')
    log = f"step 1\nPGPASSWORD={pw} psql -h db\nAuthorization: Bearer {pw}\n"

    async def go():
        async with client(store_dir, "--root", str(repo), "--inline-max", "100000") as s:
            await s.call_tool("stash", {"text": log, "name": "deploy"})
            return [
                await s.call_tool(
                    "repomap", {"tokens": 2000, "focus": ["src/settings.py"], "query": "connect"}
                ),
                await s.call_tool("read", {"ref": "deploy"}),
                await s.call_tool("excerpt", {"query": "connect", "paths": ["src/settings.py"]}),
            ]

    for res in run(go):
        assert not res.is_error, text(res)
        assert pw not in text(res) and "[secret redacted: " in text(res)
        assert any("note: redacted " in c.text for c in res.content[1:])


def test_a_link_to_a_secret_file_stays_out_of_excerpt(repo, store_dir):
    os.symlink(".env", repo / "settings.txt")  # issue 21: judged by what it points to

    async def go():
        async with client(store_dir, "--root", str(repo), "--inline-max", "100000") as s:
            return await s.call_tool("excerpt", {"query": "TOKEN", "paths": ["settings.txt"]})

    res = run(go)
    assert SECRET not in text(res)
    assert any("skipped settings.txt: a secret by its name" in c.text for c in res.content)


def test_pack_takes_the_filters_include_and_exclude(repo, store_dir):
    async def go():
        async with client(store_dir, "--root", str(repo), "--inline-max", "100000") as s:
            task = {"task": "the cart total and the lexer", "tokens": 6000, "paths": ["."]}
            both = await s.call_tool("pack", task)
            fewer = await s.call_tool("pack", {**task, "exclude": ["web/*"]})
            return text(both), text(fewer)

    both, fewer = run(go)
    assert "==> web/cart.ts <==" in both  # a file of the pack (the map names it either way)
    assert "==> web/cart.ts <==" not in fewer and "==> core/lexer.rs <==" in fewer


def test_twenty_concurrent_calls(repo, store_dir):
    async def go():
        results: dict[int, object] = {}
        async with client(store_dir, "--root", str(repo)) as s:

            async def one(i: int) -> None:
                if i % 2:
                    results[i] = await s.call_tool("count", {"text": " ".join(["word"] * i)})
                else:
                    results[i] = await s.call_tool(
                        "excerpt", {"query": "cart", "paths": ["web/cart.ts"]}
                    )

            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(one, i)
        return results

    results = run(go)
    assert len(results) == 20
    for i, res in results.items():
        assert not res.is_error, text(res)
        if i % 2:
            assert json.loads(text(res))["total"]["tokens"] == i
    evens = {text(results[i]) for i in range(0, 20, 2)}
    assert len(evens) == 1  # the same call, the same bytes


# --- run, stdout, EOF and SIGTERM ---------------------------------------------------------


def test_run_only_with_allow_run_and_its_output_pages(repo, store_dir):
    script = "import sys\nfor i in range(300): print(f'line {i}')\nsys.exit(3)\n"

    async def go():
        async with client(store_dir, "--root", str(repo), "--allow-run") as s:
            assert "run" in [t.name for t in (await s.list_tools()).tools]
            res = await s.call_tool(
                "run", {"command": [sys.executable, "-c", script], "name": "out"}
            )
            assert not res.is_error, text(res)
            card = card_of(res)
            assert card["exit_status"] == 3 and card["lines"] == 300
            call = json.loads(NEXT.search(text(res)).group(1))
            rest = await s.call_tool("read", call)
            assert text(rest).endswith("line 299\n")
            where = await s.call_tool("run", {"command": ["pwd"]})
            assert str(repo) in text(where)

    run(go)


def _raw(store: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [EXE, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **_env(store)},
    )


def _send(proc: subprocess.Popen, msg: dict) -> None:
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


def _start_sleeper(store: Path, repo: Path, marker: str) -> subprocess.Popen:
    proc = _raw(store, "--root", str(repo), "--allow-run")
    _send(proc, INIT)
    assert json.loads(proc.stdout.readline())["id"] == 1
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {"name": "run", "arguments": {"command": ["sleep", marker]}}
    _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
    for _ in range(100):
        if _alive(marker):
            return proc
        time.sleep(0.05)
    raise AssertionError("the command did not start")


def _alive(marker: str) -> bool:
    found = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True)
    return found.returncode == 0


@pytest.mark.parametrize("how", ["eof", "sigterm", "sigint"])
def test_eof_or_sigterm_mid_call_ends_the_server_and_its_child(repo, store_dir, how):
    """EOF or SIGTERM (a client stopping its server) end it with 0; Ctrl-C with 130, as
    every ctx command (it said 0 when started in a session of its own)."""
    marker = {"eof": "31.4159", "sigterm": "27.1828", "sigint": "16.1803"}[how]
    with _start_sleeper(store_dir, repo, marker) as proc:
        if how == "eof":
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
        assert proc.wait(timeout=15) == (130 if how == "sigint" else 0)
        assert not _alive(marker)
        assert "Traceback" not in proc.stderr.read().decode()


def test_stdout_carries_protocol_only(repo, store_dir):
    with _raw(store_dir, "--root", str(repo), "--allow-run") as proc:
        out = _talk(proc)
    messages = [json.loads(line) for line in out if line.strip()]
    assert all(m["jsonrpc"] == "2.0" for m in messages)
    assert sorted(m["id"] for m in messages) == [1, 2, 3, 4, 9]


def _talk(proc: subprocess.Popen) -> list[bytes]:
    """Initialize, three calls (one runs a command that writes to its stdout), an unknown
    method; EOF; every line the server wrote on stdout."""
    _send(proc, INIT)
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    calls = [
        {
            "name": "run",
            "arguments": {"command": ["sh", "-c", "echo to-stdout; echo to-stderr >&2"]},
        },
        {"name": "read", "arguments": {"ref": "nothing-here"}},
        {"name": "pack", "arguments": {"task": "cart total", "tokens": 2000}},
    ]
    for i, params in enumerate(calls, start=2):
        _send(proc, {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
    _send(proc, {"jsonrpc": "2.0", "id": 9, "method": "no/such/method"})
    out = [proc.stdout.readline() for _ in range(5)]
    proc.stdin.close()
    assert proc.wait(timeout=15) == 0
    return out + proc.stdout.read().splitlines()


# --- a stdout that cannot take the answers: one line or none, status 1, no traceback -------


def _ended(proc: subprocess.Popen, timeout: float = 30) -> tuple[int, str]:
    """PROC's exit status and stderr (killed, and the test failed, after TIMEOUT seconds)."""
    try:
        status = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        err = proc.stderr.read().decode()
        pytest.fail(f"ctx-mcp still ran {timeout} s on; stderr: {err[-2000:]}")
    return status, proc.stderr.read().decode()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_stdout_is_one_line_and_status_1(store_dir, tmp_path):
    """A hostile tester's report: stdout on /dev/full was a 93-line exception group."""
    with open("/dev/full", "wb") as full:
        proc = subprocess.Popen(
            [EXE, "--root", str(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=full,
            stderr=subprocess.PIPE,
            env={**os.environ, **_env(store_dir)},
        )
    with proc:
        _send(proc, INIT)
        proc.stdin.close()
        status, err = _ended(proc)
    assert "Traceback" not in err, err
    assert err == "ctx-mcp: error: cannot write to standard output: No space left on device\n"
    assert status == 1


def test_a_client_gone_before_the_answer_ends_the_server_quietly_with_1(store_dir, tmp_path):
    """The client closed its end of stdout (it died) before the server answered: was a
    79-line traceback ending in BrokenPipeError. Now the quiet status 1 of every command
    whose pipe is closed (| head -1), and at once: stdin is still open, and the server does
    not wait for its EOF."""
    with _raw(store_dir, "--root", str(tmp_path)) as proc:
        proc.stdout.close()
        _send(proc, INIT)
        status, err = _ended(proc)
    assert "Traceback" not in err, err
    assert err == ""
    assert status == 1


def test_a_closed_stdout_is_one_line_and_status_1(store_dir, tmp_path):
    """ctx-mcp >&-: was served to nothing with status 0; now the line of every command."""
    done = subprocess.run(
        ["sh", "-c", 'exec "$0" "$@" >&-', EXE, "--root", str(tmp_path)],
        input=(json.dumps(INIT) + "\n").encode(),
        capture_output=True,
        env={**os.environ, **_env(store_dir)},
        timeout=30,
    )
    err = done.stderr.decode()
    assert "Traceback" not in err, err
    assert err == ("ctx-mcp: error: standard output is closed (redirect it to a file or a pipe)\n")
    assert done.returncode == 1


# --- a second, independent client: the MCP Inspector's command-line mode ------------------

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"


@pytest.mark.skipif(shutil.which("npx") is None, reason="npx is not installed")
def test_the_mcp_inspector_cli_lists_and_calls_the_tools(repo, store_dir, tmp_path):
    env = {**os.environ, **_env(store_dir), "MCP_CATALOG_PATH": str(tmp_path / "catalog.json")}
    base = ["npx", "--yes", INSPECTOR, "--cli", EXE, "--root", str(repo)]

    def inspector(*args: str) -> dict:
        proc = subprocess.run(
            [*base, *args], capture_output=True, text=True, env=env, cwd=repo, timeout=600
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout)

    listed = inspector("--method", "tools/list")
    assert [t["name"] for t in listed["tools"]] == TOOLS
    called = inspector(
        "--method", "tools/call", "--tool-name", "count", "--tool-arg", "text=hello world"
    )
    assert called["isError"] is False
    assert json.loads(called["content"][0]["text"])["total"]["tokens"] == 2


# --- the command line itself ---------------------------------------------------------------


def test_a_root_that_is_not_a_directory_is_a_usage_error(script_runner, tmp_path):
    result = script_runner.run(["ctx-mcp", "--root", str(tmp_path / "nowhere")])
    assert result.returncode == 2
    assert result.stderr == (
        f"ctx-mcp: error: --root {tmp_path / 'nowhere'}: not a directory (see ctx-mcp --help)\n"
    )
    assert result.stdout == ""


@pytest.mark.script_launch_mode("inprocess")
def test_without_the_mcp_package_one_line_says_how_to_install_it(script_runner, monkeypatch):
    monkeypatch.delitem(sys.modules, "ctxtools.mcp.server", raising=False)
    monkeypatch.setitem(sys.modules, "mcp", None)
    result = script_runner.run(["ctx-mcp"])
    assert result.returncode == 1
    # issue 28.2: not 'ctxtools[mcp]' (no index has it): the extra's requirement, installed
    # beside this ctx-mcp (tests/cli/test_install.py checks the requirement itself)
    assert result.stderr == (
        "ctx-mcp: error: the MCP server needs the mcp package (install it: "
        f"{sys.executable} -m pip install 'mcp<3,>=2.3')\n"
    )


def test_count_messages_of_a_big_log_fails_at_its_first_bytes(repo, store_dir):
    """Issue 21, item 14: --messages on a log read it whole before failing at line 1."""
    write(repo, "big.log", "2026-12-01 10:00:00 INFO src/app.py: served\n" * 40_000)

    async def go():
        async with client(store_dir, "--root", str(repo)) as s:
            res = await s.call_tool("count", {"paths": ["big.log"], "messages": True})
            assert res.is_error
            assert text(res) == (
                "ctx-count: error: big.log: invalid JSON at line 1, column 1: expected '{' or "
                "'[' (a JSON object or array) (give a JSON list of messages, "
                '{"messages": [...]}, or JSON Lines)'
            )

    run(go)
