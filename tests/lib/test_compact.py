"""ctxtools.compact as a library: formats, structure, digest facts, the gate, the planner."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from helpers import CORPUS, convert, strict_problems

from ctxtools.compact import COMPACTED, NO_HEADROOM, UNCHANGED, Options, compact
from ctxtools.compact.accept import gate, output_cap, parse_command, paths_in, run_summarizer
from ctxtools.compact.digest import Call, Facts, error_line, exit_status, render
from ctxtools.compact.elide import MemoryStash, handle_name, placeholder, predict_ref, repair
from ctxtools.compact.transcript import (
    ANTHROPIC,
    OPENAI,
    SHAPE_JSONL,
    SHAPE_LIST,
    SHAPE_WRAPPER,
    TokenCounter,
    dump,
    links,
    load,
    message_text,
)
from ctxtools.errors import InputError, UsageError
from ctxtools.tokens import get_ruler


@pytest.fixture(scope="module")
def counter_factory():
    ruler = get_ruler().ruler
    return lambda: TokenCounter(ruler)


@pytest.fixture(scope="module")
def runs() -> dict[str, list[dict]]:
    return {r["instance_id"]: convert.to_openai(r) for r in convert.runs_from_jsonl(CORPUS)}


def call(cid, name, args):
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


# --- formats ------------------------------------------------------------------------------


def test_detection_of_formats_and_shapes():
    oa = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    tr = load(json.dumps(oa).encode())
    assert (tr.format, tr.shape) == (OPENAI, SHAPE_LIST)
    tr = load(json.dumps({"model": "m", "messages": oa}).encode())
    assert (tr.format, tr.shape) == (OPENAI, SHAPE_WRAPPER)
    tr = load(b"".join(json.dumps(m).encode() + b"\n" for m in oa))
    assert (tr.format, tr.shape) == (OPENAI, SHAPE_JSONL)
    tr = load(b'{"role": "user", "content": "one line"}\n')
    assert tr.shape == SHAPE_JSONL
    an = {"system": "s", "messages": [{"role": "user", "content": "u"}]}
    assert load(json.dumps(an).encode()).format == ANTHROPIC
    blocks = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x"}]}]
    assert load(json.dumps(blocks).encode()).format == ANTHROPIC
    plain = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]
    assert load(json.dumps(plain).encode()).format == OPENAI
    assert load(json.dumps(plain).encode(), "anthropic").format == ANTHROPIC
    with pytest.raises(UsageError):
        load(b"[]", "gemini")


def test_dump_keeps_shape_and_unknown_fields():
    doc = {
        "model": "m",
        "messages": [{"role": "user", "content": "é", "x": [1, {"y": None}]}],
        "z": 1.5,
    }
    tr = load(json.dumps(doc).encode())
    assert json.loads(dump(tr)) == doc
    assert list(json.loads(dump(tr))) == ["model", "messages", "z"]


def test_huge_integers_and_lone_surrogates_survive():
    data = b'[{"role": "user", "content": "\\ud800 x", "n": 123456789012345678901234567890}]'
    tr = load(data)
    assert tr.stdjson
    assert json.loads(dump(tr)) == json.loads(data)


def test_invalid_inputs():
    for data, msg in [
        (b"", "empty transcript"),
        (b"[1]", "not a JSON object"),
        (b'{"messages": 3}', "not a list"),
        (b"nope", "invalid JSON"),
        (b'[{"role": "tool", "content": "x"}]', None),
    ]:
        if msg is None:
            load(data)  # a tool message is a known OpenAI role; orphans are found by links()
            continue
        with pytest.raises(InputError, match=msg):
            load(data)


def test_message_text_covers_calls_and_blocks():
    m = {"role": "assistant", "content": "hi", "tool_calls": [call("a", "bash", {"command": "ls"})]}
    assert message_text(m) == 'hi\nbash\n{"command": "ls"}'
    a = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "r"}]},
            {"type": "image", "source": {}},
            {"type": "text", "text": "t"},
        ],
    }
    assert message_text(a) == "r\nt"


def test_token_count_is_the_sum_of_its_parts(counter_factory):
    c = counter_factory()
    msgs = [{"role": "user", "content": "hello world"}, {"role": "assistant", "content": "hi"}]
    tr = load(json.dumps(msgs).encode())
    assert c.transcript(tr) == sum(4 + c.ruler.count(m["content"]) for m in msgs) + 3
    an = load(json.dumps({"system": "be brief", "messages": msgs[:1]}).encode())
    assert (
        c.transcript(an) == (4 + c.ruler.count("be brief")) + (4 + c.ruler.count("hello world")) + 3
    )


# --- structure and repair -------------------------------------------------------------------


def test_links_find_orphans_and_unanswered_calls():
    msgs = [
        {"role": "user", "content": "u"},
        {"role": "tool", "tool_call_id": "x", "content": "orphan"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call("a", "f", {}), call("b", "f", {})],
        },
        {"role": "tool", "tool_call_id": "a", "content": "ra"},
        {"role": "tool", "tool_call_id": "a", "content": "dup"},
        {"role": "assistant", "content": "next"},
        {"role": "assistant", "content": "", "tool_calls": [call("c", "f", {})]},
    ]
    found = links(load(json.dumps(msgs).encode()))
    kinds = sorted((p.kind, p.index, p.call_id) for p in found.problems)
    # c is pending (the last message), not a problem
    assert kinds == [("orphan", 1, "x"), ("orphan", 4, "a"), ("unanswered", 2, "b")]
    fixed = repair(load(json.dumps(msgs).encode()), found, MemoryStash())
    assert strict_problems(fixed.messages, "openai") == []
    assert [r["call_id"] for r in fixed.removed] == ["x", "a"]
    assert [a["call_id"] for a in fixed.added] == ["b"]


def test_repair_anthropic_fills_missing_results_and_keeps_turns():
    doc = {
        "messages": [
            {"role": "user", "content": "u"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}],
            },
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "b", "name": "f", "input": {}}],
            },
            {"role": "user", "content": "no results here"},
        ],
        "system": "s",
    }
    tr = load(json.dumps(doc).encode())
    found = links(tr)
    assert {p.kind for p in found.problems} == {"unanswered", "alternation"}
    fixed = repair(tr, found, MemoryStash())
    assert strict_problems({"messages": fixed.messages}, "anthropic") == []


# --- digest -------------------------------------------------------------------------------


def test_exit_status_and_error_line():
    assert exit_status("out\n[The command completed with exit code 2.]") == 2
    assert exit_status("Exit code: 0\nok") == 0
    assert exit_status('{"exit_code": 127}') == 127
    assert exit_status("Process exited with code 1") == 1
    assert exit_status("no status here") is None
    assert exit_status("x" * 100000 + "\nexit code 3") == 3
    assert (
        error_line("ERROR:\nNo replacement was performed") == "ERROR: No replacement was performed"
    )
    assert error_line(
        "building\nmake: *** [all] Error 2\n[The command completed with exit code 2.]"
    ) == ("make: *** [all] Error 2")
    assert error_line("") == "(no output)"


@pytest.mark.parametrize(
    "name, args, result, where, expect",
    [
        # Claude Code
        ("Read", {"file_path": "/r/a.py"}, "1 import os", "read", "/r/a.py"),
        (
            "Edit",
            {"file_path": "/r/a.py", "old_string": "a", "new_string": "b"},
            "ok",
            "edited",
            "/r/a.py",
        ),
        ("Write", {"file_path": "/r/new.py", "content": "x"}, "ok", "edited", "/r/new.py"),
        ("Bash", {"command": "pytest -q"}, "1 failed\nExit code: 1", "failed", "`pytest -q`"),
        # OpenHands
        ("str_replace_editor", {"command": "view", "path": "/w/x.c"}, "...", "read", "/w/x.c"),
        (
            "str_replace_editor",
            {"command": "create", "path": "/w/y.c", "file_text": "int"},
            "File created",
            "edited",
            "/w/y.c",
        ),
        (
            "execute_bash",
            {"command": "make"},
            "[The command completed with exit code 0.]",
            "commands",
            ("make", "0"),
        ),
        # opencode
        ("read", {"filePath": "src/z.ts"}, "...", "read", "src/z.ts"),
        # Codex
        (
            "shell",
            {"command": ["bash", "-lc", "ls -la"]},
            '{"exit_code": 0}',
            "commands",
            ("bash -lc 'ls -la'", "0"),
        ),
        (
            "apply_patch",
            {"input": "*** Begin Patch\n*** Update File: src/m.rs\n@@\n-a\n+b\n*** End Patch"},
            "Done",
            "edited",
            "src/m.rs",
        ),
        # a failed edit is a failure, not an edit
        (
            "str_replace_editor",
            {"command": "str_replace", "path": "/w/q.c", "old_str": "a", "new_str": "b"},
            "ERROR:\nNo replacement was performed",
            "failed",
            "str_replace_editor str_replace /w/q.c → ERROR: No replacement was performed",
        ),
    ],
)
def test_facts_recognise_tool_shapes(name, args, result, where, expect):
    facts = Facts()
    facts.add_call(Call(name, args, result))
    got = getattr(facts, where)
    if where == "failed":
        assert any(expect in k for k in got), got
    else:
        assert expect in got, got
    if where != "edited":
        assert not facts.edited


def test_anthropic_is_error_marks_a_failure():
    facts = Facts()
    facts.add_call(Call("Bash", {"command": "npm test"}, "boom: tests failed", is_error=True))
    assert facts.commands == {("npm test", "error"): 1}
    assert list(facts.failed) == ["`npm test` → boom: tests failed"]


def test_digest_is_list_shaped_in_order_and_deterministic():
    facts = Facts()
    facts.add_call(Call("Read", {"file_path": "/a"}, "x"))
    facts.add_call(Call("Bash", {"command": "make"}, "exit code 2"))
    facts.add_call(Call("Bash", {"command": "make"}, "exit code 2"))
    facts.add_decision("Looked around. I'll fix the parser instead of the lexer.")
    text = render(facts, first=3, last=9, count=7, total=20, ref="ctx:s/n@abc")
    assert text.splitlines() == [
        "[ctx-compact digest: messages 3–9 of 20 were dropped (7 messages); the originals: "
        "ctx-read ctx:s/n@abc]",
        "Files read:",
        "- /a",
        "Files edited:",
        "- none",
        "Commands (exit status):",
        "- `make` → 2 (×2)",
        "Failed calls:",
        "- `make` → exit 2: exit code 2 (×2)",
        "Decisions:",
        "- I'll fix the parser instead of the lexer.",
    ]
    assert render(facts, first=3, last=9, count=7, total=20, ref="ctx:s/n@abc") == text


@pytest.mark.parametrize(
    "sentence",
    [
        "We decided to keep the old parser.",
        "Now decide which branch to patch.",
        "The decision is to patch src/lexer.c only.",
        "Two decisions remain open.",
        "The agent decides to run the tests first.",
        "Deciding between the two fixes by their size.",
        "I planned a smaller change to the build.",
        "Planning the refactor in two steps.",
        "Plans changed after the failing test.",
        "A plan: rebuild, then rerun.",
    ],
)
def test_decisions_catch_every_form_of_decide_and_plan(sentence):
    facts = Facts()
    facts.add_decision(f"Looked at the output. {sentence}")
    assert facts.decisions == [sentence]


@pytest.mark.parametrize(
    "sentence",
    [
        "The halting problem is undecidable.",
        "Whether it terminates is decidable here.",
        "The outcome is still undecided.",
        "Indecision cost two runs.",
        "The planet module failed to load.",
        "An explanation follows in the log.",
        "The plane geometry tests pass.",
    ],
)
def test_decisions_ignore_words_that_only_contain_them(sentence):
    facts = Facts()
    facts.add_decision(sentence)
    assert facts.decisions == []


def test_digest_caps_long_lists():
    facts = Facts()
    for i in range(100):
        facts.add_call(Call("Bash", {"command": f"echo {i}"}, "exit code 0"))
    text = render(facts, first=1, last=2, count=2, total=3, ref=None)
    assert "- (+40 earlier commands in the originals)" in text
    assert "`echo 99`" in text and "`echo 39`" not in text
    tight = render(facts, first=1, last=2, count=2, total=3, ref=None, scale=0.0)
    assert "- (+97 earlier commands in the originals)" in tight


# --- the gate -----------------------------------------------------------------------------

ORIGINAL = (
    "We changed src/app/server.py and tests/test_api.py; the build runs ./scripts/build.sh. " * 20
)


@pytest.mark.parametrize(
    "candidate, fragment",
    [
        ("", "empty output"),
        ("   \n", "empty output"),
        (
            "Sure! Here is the summary: src/app/server.py tests/test_api.py ./scripts/build.sh "
            * 3,
            "chatty preamble",
        ),
        (
            "Here's what happened: src/app/server.py tests/test_api.py ./scripts/build.sh " * 3,
            "chatty preamble",
        ),
        (
            "As an AI, I cannot summarise src/app/server.py tests/test_api.py ./scripts/build.sh"
            * 3,
            "refusal",
        ),
        ("I can't do that. src/app/server.py tests/test_api.py ./scripts/build.sh " * 3, "refusal"),
        (
            "Error: 429 Too Many Requests src/app/server.py tests/test_api.py ./scripts/build.sh",
            "looks like an error message",
        ),
        (
            "Traceback (most recent call last):\n  File src/app/server.py tests/test_api.py "
            "./scripts/build.sh",
            "looks like an error message",
        ),
        (
            '{"error": {"message": "context_length_exceeded"}} src/app/server.py tests/test_api.py'
            " ./scripts/build.sh",
            "looks like an error message",
        ),
        ("x" * 5000, "longer than what it replaces"),
        ("src/app/server.py", "too short"),
        (
            "The server and the tests were changed and the build script was run. " * 2,
            "keeps 0 of 3 file paths",
        ),
    ],
)
def test_gate_rejects(candidate, fragment):
    v = gate(ORIGINAL, candidate)
    assert not v.accepted
    assert any(fragment in r for r in v.reasons), v.reasons


def test_gate_accepts_and_measures():
    cand = "Changed src/app/server.py and tests/test_api.py; built with ./scripts/build.sh."
    v = gate(ORIGINAL, cand)
    assert v.accepted, v.reasons
    assert (v.paths_total, v.paths_kept) == (3, 3)
    assert not gate(ORIGINAL, cand, min_ratio=0.5).accepted
    assert gate(ORIGINAL, "Changed src/app/server.py, more to do.", min_path_share=0.3).accepted
    assert not gate("", "anything").accepted


@pytest.mark.parametrize(
    ("length", "minimum", "said"),
    [
        (1996, 0.02, "too short: 1.9% of the original (minimum 2.0%)"),
        (1999, 0.02, "too short: 1.9% of the original (minimum 2.0%)"),
        (1200, 0.0125, "too short: 1.20% of the original (minimum 1.25%)"),
        (100, 0.5, "too short: 0.1% of the original (minimum 50.0%)"),
    ],
)
def test_the_gate_rounds_a_ratio_under_the_minimum_down(length, minimum, said):
    """Issue 21.15: "too short: 2.0% (minimum 2%)" -- a ratio just under the minimum read as
    reaching it. Both are shown with the same decimals, the ratio rounded down."""
    original = "word " * 20_000  # 100,000 characters
    v = gate(original, "y" * length, min_ratio=minimum)
    assert said in v.reasons


def test_paths_in_ignores_urls_and_versions():
    assert paths_in("see https://x.org/a and 1.2.3 and src/x.py, /etc/hosts.") == [
        "src/x.py",
        "/etc/hosts",
    ]


def test_summarizer_runner():
    ok = run_summarizer(
        [sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"], "abc"
    )
    assert ok.ok and ok.output == "ABC\n"
    bad = run_summarizer([sys.executable, "-c", "import sys; sys.exit(5)"], "abc")
    assert not bad.ok and bad.reason.startswith("exited with status 5")
    slow = run_summarizer([sys.executable, "-c", "import time; time.sleep(20)"], "x", timeout=0.3)
    assert not slow.ok and slow.reason == "timed out after 0.3 s"
    missing = run_summarizer(["/no/such/tool"], "x")
    assert not missing.ok and "cannot run" in missing.reason
    assert parse_command("llm -m 'qwen 7b' -s x") == ["llm", "-m", "qwen 7b", "-s", "x"]
    with pytest.raises(UsageError):
        parse_command("   ")


def test_a_runaway_summarizer_is_stopped_at_the_cap_and_its_group_killed(tmp_path):
    """`yes` never ends and never stops writing: the run keeps at most the cap, kills the
    process group (a child it started too) and says why."""
    text = "The agent edited src/lexer.c and ran make. " * 30
    pidfile = tmp_path / "child.pid"
    script = f"sleep 300 & echo $! > {pidfile}; exec yes"
    out = run_summarizer(["sh", "-c", script], text, timeout=600)
    assert not out.ok and out.output == ""
    cap = output_cap(text)
    assert cap == 4 * len(text) + 4096
    assert out.reason == (
        f"wrote more than {cap:,} bytes, longer than the {len(text):,} characters it "
        "summarises could need: stopped"
    )
    _wait_gone(int(pidfile.read_text()))


def _wait_gone(pid: int) -> None:
    """Return once PID has died (SIGKILL is delivered asynchronously). A watchdog, not a
    timing check: a killed process is gone in milliseconds, one never killed runs 300 s."""
    for _ in range(6000):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    pytest.fail(f"process {pid} outlived its summarizer")


def test_what_a_summarizer_leaves_behind_holding_its_output_is_killed(tmp_path):
    """The command exits at once, but a child it started keeps stdout open: that is a
    timeout, and the child (same process group) is killed with it."""
    pidfile = tmp_path / "child.pid"
    out = run_summarizer(
        ["sh", "-c", f"sleep 300 & echo $! > {pidfile}; exit 0"], "text", timeout=0.5
    )
    assert not out.ok and out.reason == "timed out after 0.5 s"
    _wait_gone(int(pidfile.read_text()))


def test_the_cap_counts_bytes_so_a_summary_in_another_script_fits():
    text = "step " * 200  # 1,000 ASCII characters
    summary = "要約" * 400  # 800 characters, 2,400 bytes: shorter than the text, in chars
    out = run_summarizer([sys.executable, "-c", f"print({summary!r})"], text)
    assert out.ok and out.output.strip() == summary
    assert gate(text, out.output, min_path_share=0).accepted


def test_a_flood_on_stderr_keeps_only_its_tail():
    code = (
        "import sys; sys.stdin.read()\n"
        "for _ in range(20000): sys.stderr.write('x' * 1000 + '\\n')\n"
        "sys.stderr.write('fatal: no model loaded\\n'); sys.exit(3)"
    )
    out = run_summarizer([sys.executable, "-c", code], "some text")
    assert not out.ok and out.reason == "exited with status 3: fatal: no model loaded"


# --- the planner --------------------------------------------------------------------------


def test_placeholder_names_a_content_handle():
    data = b"line 1\nline 2\n"
    ref = predict_ref("s", data)
    assert ref.startswith("ctx:s/" + handle_name(data) + "@")
    assert (
        placeholder(data, ref)
        == f"[elided tool result: 14 chars, 2 lines; full text: ctx-read {ref}]"
    )


def test_compact_on_a_real_run_is_valid_and_deterministic(counter_factory, runs):
    msgs = runs["ponylang__ponyc-4588"]
    data = json.dumps(msgs).encode()
    outs = []
    for _ in range(2):
        stash = MemoryStash()
        out = compact(load(data), counter_factory(), Options(limit=9000), stash)
        outs.append(dump(load(data), out.messages))
        assert out.status == COMPACTED
        assert strict_problems(out.messages, "openai") == []
        for h in out.report["stage1"]["handles"]:
            assert stash.read(h)
    assert outs[0] == outs[1]


def test_keep_recent_protects_the_last_turns(counter_factory, runs):
    msgs = runs["ponylang__ponyc-4595"]
    tr = load(json.dumps(msgs).encode())
    out = compact(
        tr, counter_factory(), Options(limit=8000, keep_recent=5, keep_tokens=0), MemoryStash()
    )
    turns = [i for i, m in enumerate(msgs) if m["role"] == "assistant"]
    tail = len(msgs) - turns[-5]
    assert out.messages[-tail:] == msgs[-tail:]


def test_unchanged_and_no_headroom(counter_factory):
    small = [{"role": "user", "content": "hi"}]
    tr = load(json.dumps(small).encode())
    out = compact(tr, counter_factory(), Options(limit=1000), MemoryStash())
    assert out.status == UNCHANGED and out.messages is None
    out = compact(tr, counter_factory(), Options(limit=5), MemoryStash())
    assert out.status == NO_HEADROOM and out.messages is None


def test_anthropic_digest_joins_the_first_user_turn(counter_factory, runs):
    doc = convert.to_anthropic(runs["ponylang__ponyc-4593"])
    tr = load(json.dumps(doc).encode())
    out = compact(tr, counter_factory(), Options(limit=6000), MemoryStash())
    assert out.report["stage2"]["dropped"] > 0
    first = out.messages[0]
    assert first["content"][0] == {"type": "text", "text": doc["messages"][0]["content"][0]["text"]}
    assert first["content"][-1]["text"].startswith("[ctx-compact digest")
    assert out.messages[1]["role"] == "assistant"
    assert strict_problems({"messages": out.messages}, "anthropic") == []


def test_recompacting_keeps_earlier_digests(counter_factory, runs):
    msgs = runs["ponylang__ponyc-4588"]
    once = compact(
        load(json.dumps(msgs).encode()), counter_factory(), Options(limit=9000), MemoryStash()
    )
    tr2 = load(json.dumps(once.messages).encode())
    twice = compact(tr2, counter_factory(), Options(limit=7000), MemoryStash())
    digests = [m for m in twice.messages if str(m.get("content", "")).startswith("[ctx-compact")]
    assert len(digests) >= 1
    assert twice.messages[2] == once.messages[2]  # the first digest stays, as part of the head
    assert strict_problems(twice.messages, "openai") == []


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_counting_only_what_can_stay_gives_the_same_output(counter_factory, runs, fmt):
    from helpers import build_long

    msgs = build_long(runs, 3)
    doc = msgs if fmt == "openai" else convert.to_anthropic(msgs)
    data = json.dumps(doc).encode()
    outs = {}
    for lazy in (True, False):
        out = compact(load(data), counter_factory(), Options(limit=32000, lazy=lazy), MemoryStash())
        outs[lazy] = out
    assert outs[True].messages == outs[False].messages
    assert outs[True].report["tokens_after"] == outs[False].report["tokens_after"]
    assert outs[True].report["tokens_before_exact"] is False
    assert outs[False].report["tokens_before_exact"] is True
    exact = outs[False].report["tokens_before"]
    assert abs(outs[True].report["tokens_before"] - exact) < 0.1 * exact


def test_a_viewed_file_that_mentions_an_exit_code_is_not_a_failure():
    facts = Facts()
    text = "Here's the result of running `cat -n` on /w/run.sh:\n 1\techo fail; exit code 1\n"
    facts.add_call(Call("str_replace_editor", {"command": "view", "path": "/w/run.sh"}, text))
    assert list(facts.read) == ["/w/run.sh"] and not facts.failed


def _random_transcript(rng, fmt: str) -> list[dict] | dict:
    """An OpenAI transcript with random structure (several calls per turn, user asides,
    results of random size), or the same converted to Anthropic."""
    msgs = [
        {"role": "system", "content": "sys " * rng.randint(1, 50)},
        {"role": "user", "content": "task " * rng.randint(1, 50)},
    ]
    ids = 0
    for _ in range(rng.randint(0, 40)):
        r = rng.random()
        if r < 0.1:
            msgs.append({"role": "assistant", "content": "thinking " * rng.randint(1, 30)})
            msgs.append({"role": "user", "content": "go on " * rng.randint(1, 5)})
            continue
        calls = []
        for _ in range(rng.randint(1, 3)):
            ids += 1
            cmd = rng.choice(["make", "pytest -q", "ls src", "cat /w/a.py"])
            name = "memory" if rng.random() < 0.25 else "execute_bash"
            calls.append(
                {
                    "id": f"c{ids}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps({"command": cmd})},
                }
            )
        msgs.append(
            {"role": "assistant", "content": "step " * rng.randint(0, 20), "tool_calls": calls}
        )
        for c in calls:
            body = "output line\n" * rng.choice([1, 5, 50, 400])
            code = rng.choice([0, 0, 0, 1, 2])
            msgs.append(
                {
                    "role": "tool",
                    "tool_call_id": c["id"],
                    "content": body + f"[The command completed with exit code {code}.]",
                }
            )
    if msgs[-1]["role"] == "user":
        msgs.append({"role": "assistant", "content": "ok"})
    return msgs if fmt == "openai" else convert.to_anthropic(msgs)


def _memory_results(doc, fmt: str) -> dict[str, object]:
    """call id -> result content of every `memory` call in DOC."""
    msgs = doc if fmt == "openai" else doc["messages"]
    ids = set()
    out = {}
    for m in msgs:
        for c in m.get("tool_calls") or []:
            if c["function"]["name"] == "memory":
                ids.add(c["id"])
        if isinstance(m.get("content"), list):
            for b in m["content"]:
                if b.get("type") == "tool_use" and b["name"] == "memory":
                    ids.add(b["id"])
                if b.get("type") == "tool_result" and b["tool_use_id"] in ids:
                    out[b["tool_use_id"]] = b["content"]
        if m["role"] == "tool" and m["tool_call_id"] in ids:
            out[m["tool_call_id"]] = m["content"]
    return out


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_random_transcripts_always_come_out_valid(counter_factory, fmt):
    import random

    rng = random.Random(20261130)
    checked = kept_with_keep = 0
    for _ in range(60):
        doc = _random_transcript(rng, fmt)
        data = json.dumps(doc).encode()
        assert strict_problems(doc, fmt) == []
        opts = Options(
            limit=rng.choice([300, 800, 2000, 6000]),
            keep_recent=rng.choice([0, 1, 3]),
            keep_tokens=rng.choice([None, 0, 200]),
            force=rng.random() < 0.2,
            keep_tools=rng.choice([(), ("memory",)]),
        )
        stash = MemoryStash()
        out = compact(load(data), counter_factory(), opts, stash)
        if out.messages is None:
            continue
        checked += 1
        result = out.messages if fmt == "openai" else dict(doc, messages=out.messages)
        assert strict_problems(result, fmt) == [], (opts, out.report)
        if opts.keep_tools:
            before, after = _memory_results(doc, fmt), _memory_results(result, fmt)
            assert after == before, (opts, out.report)
            kept_with_keep += bool(out.report["stage2"] and out.report["stage2"].get("kept"))
        originals = doc if fmt == "openai" else doc["messages"]
        s2 = out.report["stage2"]
        if s2 and s2.get("dropped"):
            dropped = stash.read(s2["handle"]).decode().splitlines()
            assert [json.loads(x) for x in dropped] == originals[s2["first"] - 1 : s2["last"]]
        if out.status == COMPACTED:
            assert out.report["tokens_after"] <= out.report["target_tokens"]
        for h in out.report["stage1"]["handles"]:
            assert stash.read(h)
    assert checked > 20 and kept_with_keep > 3


# --- one run as ctx-compact does it (ctxtools.compact.run), without the CLI -----------------


def _broken(msgs: list[dict]) -> list[dict]:
    """MSGS with the first tool result moved to a call id nobody made: one orphan and
    one call without a result."""
    i = next(k for k, m in enumerate(msgs) if m["role"] == "tool")
    orphan = dict(msgs[i], tool_call_id="nosuchcall")
    out = msgs[:i] + msgs[i + 1 :]
    out.insert(len(out) - 2, orphan)
    return out


def test_compact_transcript_compacts_and_reports(runs):
    from ctxtools.compact.run import compact_transcript

    ruler = get_ruler().ruler
    data = json.dumps(runs["ponylang__ponyc-4588"]).encode()
    tr = load(data)
    run = compact_transcript(tr, ruler, Options(limit=9000), MemoryStash(), original=data)
    assert run.status == COMPACTED and run.notes == [] and run.repaired is None
    assert run.output == dump(tr, run.outcome.messages) != data
    assert strict_problems(json.loads(run.output), "openai") == []
    report = run.report()
    assert report["action"] == "compacted" and report["repair"] is None
    assert report["ruler"] == ruler.describe()
    assert run.headroom is None and run.compaction_notes == run.outcome.notes


def test_compact_transcript_unchanged_gives_the_input_bytes_back():
    from ctxtools.compact.run import compact_transcript

    data = b'[ {"role": "user",   "content": "hi"} ]\n'  # odd spacing: never re-serialised
    ruler = get_ruler(heuristic=True).ruler
    run = compact_transcript(load(data), ruler, Options(limit=1000), MemoryStash(), original=data)
    assert run.status == UNCHANGED and run.output == data
    without = compact_transcript(load(data), ruler, Options(limit=1000), MemoryStash())
    assert without.output == dump(load(data)) != data
    tight = compact_transcript(load(data), ruler, Options(limit=5), MemoryStash(), original=data)
    assert tight.status == NO_HEADROOM and tight.output == data
    assert tight.headroom == tight.outcome.notes[-1]
    assert "not under the" in tight.headroom and tight.headroom not in tight.compaction_notes


def test_compact_transcript_refuses_or_repairs_a_broken_transcript(runs):
    from ctxtools.compact.run import compact_transcript

    ruler = get_ruler(heuristic=True).ruler
    data = json.dumps(_broken(runs["ponylang__ponyc-4588"])).encode()
    stash = MemoryStash()
    with pytest.raises(InputError, match=r"1 orphaned tool result\(s\), 1 call\(s\) without"):
        compact_transcript(load(data), ruler, Options(limit=10**6), stash, original=data)
    assert stash.items == {}  # refused before anything was stashed
    heard: list[str] = []
    tr = load(data)
    run = compact_transcript(
        tr, ruler, Options(limit=10**6), stash, repair=True, original=data, on_note=heard.append
    )
    assert (
        heard
        == run.notes
        == ["repaired: removed 1 orphaned tool result(s), answered 1 call(s) without a result"]
    )
    assert run.status == "repaired"  # far below the trigger: only the repair changed it
    assert run.compaction_notes == []  # the summary line says it
    assert run.summary() == (
        f"{len(tr.messages)} messages, {run.report()['tokens_before']:,} tokens = 1.9% of "
        "1,000,000, below the 80% trigger: not compacted, only repaired (--force compacts anyway)"
    )
    assert run.report()["action"] == "repaired"
    assert run.output == dump(tr) != data  # the repaired transcript, not the input
    assert strict_problems(json.loads(run.output), "openai") == []
    (removed,) = run.repaired["removed"]
    assert removed["call_id"] == "nosuchcall" and stash.read(removed["ref"])
    assert run.report()["repair"] == run.repaired


def test_compact_transcript_notes_problems_it_leaves_alone(runs):
    from ctxtools.compact.run import compact_transcript

    doc = convert.to_anthropic(runs["ponylang__ponyc-4588"])
    doc["messages"] += [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    data = json.dumps(doc).encode()
    ruler = get_ruler(heuristic=True).ruler
    heard: list[str] = []
    run = compact_transcript(
        load(data), ruler, Options(limit=10**6), MemoryStash(), on_note=heard.append
    )
    assert heard == run.notes
    (note,) = run.notes
    assert note.startswith("note: 2 place(s) the anthropic API may reject, left as they are")
    assert note.endswith("two user turns in a row")
    assert run.status == UNCHANGED and run.output == dump(load(data))


def test_an_empty_message_list_loads_but_is_not_compacted():
    """load() parses `[]` (a count of it is well defined); a compaction refuses it."""
    from ctxtools.compact.run import compact_transcript

    tr = load(b"\xef\xbb\xbf[]")
    assert tr.messages == [] and tr.shape == SHAPE_LIST
    stash = MemoryStash()
    ruler = get_ruler(heuristic=True).ruler
    with pytest.raises(InputError, match="empty transcript: no messages"):
        compact_transcript(tr, ruler, Options(limit=100), stash)
    assert stash.items == {}


def test_model_window():
    from ctxtools.compact.run import model_window
    from ctxtools.profiles import resolve

    profile = resolve("gpt-4o")
    assert model_window("gpt-4o", None) == (profile.context_limit, profile.encoding)
    assert model_window("gpt-4o", 1234, "cl100k_base") == (1234, "cl100k_base")
    assert model_window("gpt-4o", None, counter_chosen=True) == (profile.context_limit, None)
    assert model_window(None, 500) == (500, None)
    assert model_window(None, None, "o200k_base") == (None, "o200k_base")


def test_gate_bytes_reads_invalid_utf8_and_summarises():
    from ctxtools.compact.accept import gate_bytes

    original = ("We changed src/app/main.py and src/app/util.py. \xff" * 20).encode("latin-1")
    good = b"Changed src/app/main.py and src/app/util.py \xff\xfe."
    verdict = gate_bytes(original, good)
    assert verdict.accepted and verdict.summary == "accepted"
    bad = gate_bytes(original, b"Sure! Here you go.", min_path_share=1.0)
    assert not bad.accepted
    assert bad.summary == "rejected: " + "; ".join(bad.reasons)
    assert bad.summary.startswith("rejected: ")
    assert "opens with a chatty preamble" in bad.summary
    assert "keeps 0 of 2 file paths" in bad.summary


def test_working_set_entries_are_checked_line_by_line():
    from ctxtools.compact.working_set import evict_lines, parse_entries
    from ctxtools.store.evict import GcBudget

    lines = [
        {"id": "a", "path": "src/a.py", "last_accessed_at": 100, "size_bytes": 4000},
        {"id": "b", "last_accessed_at": 50.5, "size_bytes": 3000, "access_count": None},
        {"id": "c", "path": "c", "last_accessed_at": 200, "size_bytes": 10, "access_count": 4},
    ]
    data = b"\n".join(json.dumps(e).encode() for e in lines) + b"\n\n  \n"
    entries = parse_entries(data)
    assert entries == [
        {"id": "a", "path": "src/a.py", "last_accessed_at": 100, "size_bytes": 4000,
         "access_count": 0},
        {"id": "b", "path": None, "last_accessed_at": 50.5, "size_bytes": 3000, "access_count": 0},
        {"id": "c", "path": "c", "last_accessed_at": 200, "size_bytes": 10, "access_count": 4},
    ]  # fmt: skip
    assert evict_lines(data, "lru", GcBudget(max_bytes=4100)) == ["b"]  # oldest first
    assert evict_lines(data, "lru", GcBudget(max_entries=1)) == ["b", "a"]
    assert evict_lines(b"", "importance", GcBudget(max_entries=0)) == []


@pytest.mark.parametrize(
    "line, message",
    [
        (b"{nope", "line 2: invalid JSON"),
        (b"[1, 2]", "line 2: not a JSON object"),
        (b'{"id": "x", "size_bytes": 1}', "line 2: missing 'last_accessed_at'"),
        (b'{"id": "", "size_bytes": 1, "last_accessed_at": 1}', 'line 2: "id" must be a non'),
        (b'{"id": 7, "size_bytes": 1, "last_accessed_at": 1}', 'line 2: "id" must be a non'),
        (b'{"id": "x", "size_bytes": "1", "last_accessed_at": 1}', "'size_bytes' must be a num"),
        (b'{"id": "x", "size_bytes": 1, "last_accessed_at": true}', "'last_accessed_at' must"),
        (b'{"id": "x", "size_bytes": 1, "last_accessed_at": 1, "access_count": "9"}', "'access"),
        (b'{"id": "a", "size_bytes": 1, "last_accessed_at": 1}', "line 2: duplicate id 'a'"),
        # a negative size made a set fit a budget it does not (accepted, status 0)
        (b'{"id": "x", "size_bytes": -5, "last_accessed_at": 1}',
         "line 2: 'size_bytes' must be 0 or more, not -5"),
        (b'{"id": "x", "size_bytes": 1, "last_accessed_at": 1, "access_count": -0.5}',
         "line 2: 'access_count' must be 0 or more, not -0.5"),
    ],
)
def test_working_set_bad_lines_are_named(line, message):
    from ctxtools.compact.working_set import parse_entries

    first = b'{"id": "a", "size_bytes": 1, "last_accessed_at": 1}\n'
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        parse_entries(first + line + b"\n")


@pytest.mark.parametrize(
    ("messages", "fmt", "said"),
    [
        ([{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"}], "openai",
         "message 2: a tool result without a tool_call_id answers no call"),
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "a"},
          {"role": "user", "content": [{"type": "tool_result", "content": "x"}]}], "anthropic",
         "message 3: a tool_result without a tool_use_id answers no tool_use"),
        ([{"role": "user", "content": "hi"},
          {"role": "tool", "tool_call_id": "c9", "content": "x"}], "openai",
         "message 2: tool result 'c9' answers no call"),
    ],
)
def test_a_result_without_an_id_is_named_as_the_transcript_has_it(messages, fmt, said):
    # it said "tool result None": the program's word for a missing value, not the user's
    from ctxtools.compact.run import compact_transcript

    data = json.dumps(messages).encode()
    tr = load(data)
    assert tr.format == fmt
    ruler = get_ruler(heuristic=True).ruler
    with pytest.raises(InputError) as exc:
        compact_transcript(tr, ruler, Options(limit=10**6), MemoryStash(), original=data)
    assert said in str(exc.value) and "None" not in str(exc.value)
