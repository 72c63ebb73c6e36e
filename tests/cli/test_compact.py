"""ctx-compact end to end, on real OpenHands transcripts converted to OpenAI and Anthropic form."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from helpers import CORPUS, DATA, RUN_IDS, build_long, convert, run_bytes, strict_problems

from ctxtools.store import HandleStore

PLACEHOLDER = re.compile(
    r"^\[elided tool result: [\d,]+ chars, [\d,]+ lines; full text: ctx-read (\S+)\]$"
)
DIGEST_REF = re.compile(r"the originals: ctx-read (\S+)\]")


@pytest.fixture(scope="session")
def runs() -> dict[str, list[dict]]:
    """instance id -> OpenAI messages of that real run."""
    return {r["instance_id"]: convert.to_openai(r) for r in convert.runs_from_jsonl(CORPUS)}


def as_bytes(doc) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


def compact(script_runner, doc_bytes: bytes, *args: str):
    return run_bytes(script_runner, ["ctx-compact", *args], doc_bytes)


def report_of(result) -> dict:
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("{")]
    assert lines, result.stderr
    return json.loads(lines[-1])


def digest_text(doc, fmt: str) -> str | None:
    msgs = doc["messages"] if isinstance(doc, dict) else doc
    for m in msgs:
        content = m.get("content")
        if isinstance(content, str) and content.startswith("[ctx-compact digest"):
            return content
        if isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and str(b.get("text", "")).startswith("[ctx-compact digest"):
                    return b["text"]
    return None


def tool_outputs(doc, fmt: str) -> dict[str, object]:
    """call id -> result content, for every tool result in DOC."""
    out = {}
    msgs = doc["messages"] if isinstance(doc, dict) else doc
    for m in msgs:
        if fmt == "openai" and m["role"] == "tool":
            out[m["tool_call_id"]] = m["content"]
        elif fmt == "anthropic" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    out[b["tool_use_id"]] = b["content"]
    return out


_SCRIPT_RUNNER = None


@pytest.fixture(autouse=True)
def _remember_script_runner(script_runner):
    global _SCRIPT_RUNNER
    _SCRIPT_RUNNER = script_runner
    yield
    _SCRIPT_RUNNER = None


def read_back(ref: str) -> bytes:
    """The stashed bytes of REF, read as a user would: ``ctx-read``, paged 50,000 chars at a
    time with --slice (checked against the store's own reader)."""
    res = _SCRIPT_RUNNER.run(["ctx-read", ref, "--count"])
    assert res.returncode == 0, res.stderr
    chars = json.loads(res.stdout)["chars"]
    parts = []
    for start in range(0, max(chars, 1), 50_000):
        page = _SCRIPT_RUNNER.run(
            ["ctx-read", ref, "--slice", f"{start}:{start + 50_000}", "--max-chars", "50000"]
        )
        assert page.returncode == 0, page.stderr
        parts.append(page.stdout)
    data = "".join(parts).encode("utf-8")
    assert data == HandleStore().read_bytes(ref)
    return data


def check_elided_come_back(original, output, fmt: str) -> int:
    """Every placeholder in OUTPUT reads back as the byte-exact original result."""
    before = tool_outputs(original, fmt)
    after = tool_outputs(output, fmt)
    n = 0
    for cid, content in after.items():
        if isinstance(content, str) and (m := PLACEHOLDER.match(content)):
            assert read_back(m.group(1)) == before[cid].encode("utf-8")
            n += 1
        else:
            assert content == before[cid]
    return n


def failed_commands_and_edits(messages: list[dict]) -> tuple[set[str], set[str]]:
    """From OpenAI MESSAGES, independently of ctxtools: failed shell commands, edited files."""
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    failed, edited = set(), set()
    for m in messages:
        for c in m.get("tool_calls") or []:
            args = json.loads(c["function"]["arguments"])
            res = results.get(c["id"], "")
            if c["function"]["name"] == "execute_bash":
                code = re.findall(r"exit code (-?\d+)", res)
                if code and code[-1] != "0":
                    failed.add(args["command"])
            elif args.get("command") in ("create", "str_replace", "insert") and not res.startswith(
                "ERROR"
            ):
                edited.add(args["path"])
    return failed, edited


# --- real transcripts, both formats, stage 1 and stage 2 --------------------------------------


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
@pytest.mark.parametrize("run_id", RUN_IDS)
def test_stage1_elides_and_everything_comes_back(script_runner, runs, run_id, fmt):
    msgs = runs[run_id]
    doc = msgs if fmt == "openai" else convert.to_anthropic(msgs)
    data = as_bytes(doc)
    full = report_of(compact(script_runner, data, "--limit", "1000000", "--json-report"))
    tokens = full["tokens_before"]
    # a window the transcript fills to ~90%: stage 1 alone gets it under 75%
    limit = int(tokens / 0.9)
    res = compact(script_runner, data, "--limit", str(limit), "--json-report")
    assert res.returncode == 0, res.stderr
    rep = report_of(res)
    assert rep["action"] == "compacted"
    assert rep["stage2"] is None
    assert rep["stage1"]["elided"] > 0
    assert rep["tokens_after"] <= rep["target_tokens"]
    out = json.loads(res.stdout)
    assert strict_problems(out, fmt) == []
    assert check_elided_come_back(doc, out, fmt) == rep["stage1"]["elided"]
    # the head and the protected tail are untouched
    o_msgs = out if fmt == "openai" else out["messages"]
    d_msgs = doc if fmt == "openai" else doc["messages"]
    assert o_msgs[:2] == d_msgs[:2]
    assert o_msgs[-6:] == d_msgs[-6:]
    if fmt == "anthropic":
        assert {k: v for k, v in out.items() if k != "messages"} == {
            k: v for k, v in doc.items() if k != "messages"
        }


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
@pytest.mark.parametrize("run_id", RUN_IDS)
def test_stage2_cut_digest_and_dropped_originals(script_runner, runs, run_id, fmt):
    msgs = runs[run_id]
    doc = msgs if fmt == "openai" else convert.to_anthropic(msgs)
    data = as_bytes(doc)
    # the smallest size stage 1 can reach (every old result elided) decides the window: 90%
    floor = report_of(
        compact(
            script_runner,
            data,
            "--limit",
            "10000000",
            "--force",
            "--keep-tokens",
            "0",
            "--json-report",
        )
    )["tokens_after"]
    res = compact(script_runner, data, "--limit", str(int(floor / 0.9)), "--json-report")
    assert res.returncode == 0, res.stderr
    rep = report_of(res)
    assert rep["stage2"]["dropped"] > 0
    assert rep["tokens_after"] <= rep["target_tokens"]
    out = json.loads(res.stdout)
    assert strict_problems(out, fmt) == []
    check_elided_come_back(doc, out, fmt)
    digest = digest_text(out, fmt)
    assert digest is not None
    # the dropped messages come back unchanged from the digest's handle
    ref = DIGEST_REF.search(digest).group(1)
    assert ref == rep["stage2"]["handle"]
    dropped = [json.loads(line) for line in read_back(ref).decode().splitlines()]
    d_msgs = doc if fmt == "openai" else doc["messages"]
    first, last = rep["stage2"]["first"], rep["stage2"]["last"]
    assert dropped == d_msgs[first - 1 : last]
    # the digest names each edited file and each failed command of the dropped span
    oa_dropped = msgs[2 : 2 + len(dropped)] if fmt == "openai" else None
    if oa_dropped is not None:
        failed, edited = failed_commands_and_edits(oa_dropped)
        for path in edited:
            assert path in digest.split("Files edited:")[1].split("Commands")[0]
        for cmd in failed:
            assert f"`{cmd}`" in digest.split("Failed calls:")[1]
    sections = [
        "Files read:",
        "Files edited:",
        "Commands (exit status):",
        "Failed calls:",
        "Decisions:",
    ]
    positions = [digest.index(s) for s in sections]
    assert positions == sorted(positions)


SUMMARY = re.compile(
    r"^ctx-compact: (?P<mb>[\d,]+) → (?P<ma>[\d,]+) messages, (?P<approx>~?)(?P<tb>[\d,]+) → "
    r"(?P<ta>[\d,]+) tokens \(−(?P<pct>\d+)%, counting message text \+ 4 a message\)"
    r"(?:; (?P<elided>[\d,]+) results? elided)?(?:[;,] (?P<dropped>[\d,]+) messages? dropped)?"
    r"; originals: ctx-read (?P<ref>\S+)$",
    re.M,
)


def summary_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if re.match(r"ctx-compact: [\d,]+ (→|messages)", ln)]


def api_tokens(doc, fmt: str) -> int:
    """Tokens of DOC as ctx-compact's report counts them, worked out here from the formats:
    each message's text (content, tool names and arguments, results) + 4, + 3 for the reply,
    + the Anthropic system prompt as one more message."""
    from ctxtools.tokens import get_ruler

    count = get_ruler().ruler.count

    def text(content) -> list[str]:
        if isinstance(content, str):
            return [content]
        parts = []
        for b in content or []:
            if b.get("type") == "tool_use":
                parts += [
                    b["name"],
                    json.dumps(b["input"], ensure_ascii=False, separators=(",", ":")),
                ]
            elif b.get("type") == "tool_result":
                parts += text(b["content"])
            else:
                parts.append(b["text"])
        return parts

    msgs = doc if fmt == "openai" else doc["messages"]
    total = 3 + (4 + count(doc["system"]) if fmt == "anthropic" else 0)
    for m in msgs:
        parts = text(m.get("content"))
        for c in m.get("tool_calls") or []:
            parts += [c["function"]["name"], c["function"]["arguments"]]
        total += 4 + count("\n".join(parts))
    return total


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_a_compaction_says_what_it_did_in_one_line(script_runner, runs, fmt):
    msgs = runs["ponylang__ponyc-4593"]
    doc = msgs if fmt == "openai" else convert.to_anthropic(msgs)
    data = as_bytes(doc)
    res = compact(script_runner, data, "--limit", "7000", "--json-report")
    assert res.returncode == 0, res.stderr
    rep = report_of(res)
    (line,) = summary_lines(res.stderr)
    m = SUMMARY.match(line)
    assert m, line
    num = lambda key: int((m.group(key) or "0").replace(",", ""))  # noqa: E731
    assert (num("mb"), num("ma")) == (rep["messages_before"], rep["messages_after"])
    assert (num("tb"), num("ta")) == (rep["tokens_before"], rep["tokens_after"])
    assert m.group("approx") == ("" if rep["tokens_before_exact"] else "~")
    assert num("pct") == round(100 * (1 - rep["tokens_after"] / rep["tokens_before"]))
    assert num("elided") == rep["stage1"]["elided"] and num("dropped") == rep["stage2"]["dropped"]
    assert m.group("ref") == rep["stage2"]["handle"] and read_back(m.group("ref"))
    # what is counted: the messages as the API reads them, not the JSON file
    out = json.loads(res.stdout)
    assert rep["counted"] == "messages"
    assert rep["tokens_after"] == api_tokens(out, fmt)
    from ctxtools.tokens import get_ruler

    assert get_ruler().ruler.count(res.stdout) > rep["tokens_after"]  # the file costs more
    quiet = compact(script_runner, data, "--limit", "7000", "--quiet")
    assert quiet.returncode == 0 and quiet.stdout == res.stdout
    assert summary_lines(quiet.stderr) == [] and quiet.stderr == ""


def test_the_summary_line_of_stage_1_alone_and_of_an_unchanged_run(script_runner, runs):
    data = as_bytes(runs["ponylang__ponyc-4595"])
    res = compact(script_runner, data, "--limit", "30000", "--json-report")
    assert res.returncode == 0, res.stderr
    rep = report_of(res)
    assert rep["stage2"] is None and rep["stage1"]["elided"] > 0
    assert summary_lines(res.stderr) == [
        f"ctx-compact: 47 → 47 messages, {rep['tokens_before']:,} → {rep['tokens_after']:,} "
        f"tokens (−{round(100 * (1 - rep['tokens_after'] / rep['tokens_before']))}%, counting "
        f"message text + 4 a message); {rep['stage1']['elided']} results elided; originals: "
        "ctx-read the handle each placeholder names"
    ]
    big = compact(script_runner, data, "--limit", "1000000", "--json-report")
    before = report_of(big)["tokens_before"]
    assert summary_lines(big.stderr) == [
        f"ctx-compact: 47 messages, {before:,} tokens = {100 * before / 1e6:.1f}% of 1,000,000, "
        "below the 80% trigger: unchanged (--force compacts anyway)"
    ]
    assert compact(script_runner, data, "--limit", "1000000", "--quiet").stderr == ""


# --- --keep-tool ---------------------------------------------------------------------------


def with_memory_calls(msgs: list[dict], every: int = 3) -> list[dict]:
    """A real run where every EVERY-th tool-calling assistant message also calls a `memory`
    tool (parallel calls, as agents with a memory tool make them), answered after the real
    result: the agent's notes, which compaction must never take away."""
    out: list[dict] = []
    pending: dict[str, dict] = {}
    seen = 0
    for m in msgs:
        m = json.loads(json.dumps(m))
        if m["role"] == "assistant" and m.get("tool_calls"):
            seen += 1
            if seen % every == 0:
                cid = m["tool_calls"][0]["id"] + "_mem"
                args = {"command": "view", "path": f"/memories/step{seen}.md"}
                m["tool_calls"].append(
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": "memory", "arguments": json.dumps(args)},
                    }
                )
                note = f"step {seen}: the parser lives in packages/cli/command_parser.pony. "
                pending[m["tool_calls"][0]["id"]] = {
                    "role": "tool",
                    "tool_call_id": cid,
                    "content": note * 12,
                }
        out.append(m)
        if m["role"] == "tool" and m["tool_call_id"] in pending:
            out.append(pending.pop(m["tool_call_id"]))
    return out


def calls_and_results(doc, fmt: str, names: set[str]) -> tuple[dict, dict]:
    """id -> call (name, arguments) and id -> result content, for calls of tools in NAMES."""
    calls, results = {}, {}
    msgs = doc if fmt == "openai" else doc["messages"]
    for m in msgs:
        for c in m.get("tool_calls") or []:
            if c["function"]["name"] in names:
                calls[c["id"]] = (c["function"]["name"], json.loads(c["function"]["arguments"]))
        if isinstance(m.get("content"), list):
            for b in m["content"]:
                if b.get("type") == "tool_use" and b["name"] in names:
                    calls[b["id"]] = (b["name"], b["input"])
    for cid, content in tool_outputs(doc, fmt).items():
        if cid in calls:
            results[cid] = content
    return calls, results


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_keep_tool_results_and_calls_survive_both_stages(script_runner, runs, fmt):
    msgs = with_memory_calls(runs["ponylang__ponyc-4588"])
    doc = msgs if fmt == "openai" else convert.to_anthropic(msgs)
    assert strict_problems(doc, fmt) == []
    data = as_bytes(doc)
    calls, results = calls_and_results(doc, fmt, {"memory"})
    assert len(calls) == len(results) >= 10
    # without --keep-tool, stage 2 takes most of the memory results away
    plain = compact(script_runner, data, "--limit", "12000", "--json-report")
    assert plain.returncode == 0, plain.stderr
    assert len(calls_and_results(json.loads(plain.stdout), fmt, {"memory"})[1]) < len(results)
    res = compact(script_runner, data, "--limit", "12000", "--keep-tool", "memory", "--json-report")
    assert res.returncode == 0, res.stderr
    rep = report_of(res)
    s2 = rep["stage2"]
    assert s2["dropped"] > 0 and s2["kept"] > 0 and 0 < rep["stage1"]["kept"] <= len(results)
    out = json.loads(res.stdout)
    assert strict_problems(out, fmt) == []
    assert calls_and_results(out, fmt, {"memory"}) == (calls, results)  # every one, unchanged
    # the kept parts follow the digest; the messages they came from lost only other calls
    out_msgs = out if fmt == "openai" else out["messages"]
    digest_at = next(i for i, m in enumerate(out_msgs) if digest_text([m], fmt))
    kept = out_msgs[digest_at + 1 : digest_at + 1 + s2["kept"]]
    assert [m["role"] for m in kept] == ["assistant", "tool" if fmt == "openai" else "user"] * (
        s2["kept"] // 2
    )
    for m in kept:
        if fmt == "openai":
            names = {c["function"]["name"] for c in m.get("tool_calls") or []}
            assert m["role"] == "tool" or names == {"memory"}
        else:
            for b in m["content"]:
                assert b["type"] in ("text", "tool_use", "tool_result")
                assert b["type"] != "tool_use" or b["name"] == "memory"
                assert b["type"] != "tool_result" or b["tool_use_id"] in results
    digest = digest_text(out, fmt)
    assert f"; {s2['kept']} with --keep-tool calls or results follow, kept)" in digest
    # the span, as it was, comes back from the digest's handle
    d_msgs = doc if fmt == "openai" else doc["messages"]
    span = [json.loads(x) for x in read_back(s2["handle"]).decode().splitlines()]
    assert span == d_msgs[s2["first"] - 1 : s2["last"]]
    assert s2["dropped"] + s2["kept"] == s2["last"] - s2["first"] + 1
    (line,) = summary_lines(res.stderr)
    assert f"{s2['dropped']} messages dropped, {s2['kept']} kept for --keep-tool;" in line


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_keep_tool_on_a_real_tool_keeps_every_result_of_it(script_runner, runs, fmt):
    """OpenHands' own editor tool: its results (the files viewed) are never elided, even by
    --force, and their calls stay beside them."""
    msgs = runs["ponylang__ponyc-4595"]
    doc = msgs if fmt == "openai" else convert.to_anthropic(msgs)
    data = as_bytes(doc)
    names = {"str_replace_editor"}
    calls, results = calls_and_results(doc, fmt, names)
    assert len(results) >= 5
    args = ["--limit", "1000000", "--force", "--keep-tokens", "0", "--json-report"]
    forced = compact(script_runner, data, *args)
    elided = [
        c
        for c in calls_and_results(json.loads(forced.stdout), fmt, names)[1].values()
        if isinstance(c, str) and PLACEHOLDER.match(c)
    ]
    assert elided  # what --keep-tool prevents
    res = compact(script_runner, data, *args, "--keep-tool", "str_replace_editor")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert strict_problems(out, fmt) == []
    assert calls_and_results(out, fmt, names) == (calls, results)
    rep = report_of(res)
    assert rep["stage1"]["elided"] > 0 and rep["stage1"]["kept"] > 0
    assert check_elided_come_back(doc, out, fmt) == rep["stage1"]["elided"]
    # stage 2: the editor's calls and results, whole messages here, stay after the digest;
    # they are most of the run, so the target is out of reach (exit 4, output still valid)
    cut = compact(script_runner, data, "--limit", "20000", "--keep-tool", "str_replace_editor")
    assert cut.returncode == 4 and "not under the 75% target" in cut.stderr
    out = json.loads(cut.stdout)
    assert strict_problems(out, fmt) == [] and digest_text(out, fmt)
    assert calls_and_results(out, fmt, names) == (calls, results)
    (line,) = summary_lines(cut.stderr)
    assert re.search(r"; 24 messages dropped, 16 kept for --keep-tool; originals: ctx-read ", line)


def test_keep_tool_of_a_tool_never_called_changes_nothing(script_runner, runs):
    data = as_bytes(runs["ponylang__ponyc-4588"])
    plain = compact(script_runner, data, "--limit", "8000")
    res = compact(script_runner, data, "--limit", "8000", "--keep-tool", "memory")
    assert res.returncode == plain.returncode == 0
    assert res.stdout == plain.stdout


def test_digest_names_every_edit_and_failure_of_a_whole_run(script_runner, runs):
    """The heaviest cut: everything but the protected tail goes; the digest still has it all."""
    msgs = runs["ponylang__ponyc-4588"]
    res = compact(
        script_runner, as_bytes(msgs), "--limit", "6000", "--keep-recent", "1", "--json-report"
    )
    assert res.returncode == 0, res.stderr
    rep = report_of(res)
    first, last = rep["stage2"]["first"], rep["stage2"]["last"]
    assert first == 3 and last > 40
    digest = digest_text(json.loads(res.stdout), "openai")
    failed, edited = failed_commands_and_edits(msgs[first - 1 : last])
    assert edited and len(failed) >= 3
    for path in edited:
        assert path in digest
    for cmd in failed:
        assert f"`{cmd}`" in digest


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_output_is_byte_identical_across_runs_and_stores(script_runner, runs, fmt, tmp_path):
    msgs = runs["ponylang__ponyc-4588"]
    data = as_bytes(msgs if fmt == "openai" else convert.to_anthropic(msgs))
    a = compact(script_runner, data, "--limit", "12000")
    b = compact(script_runner, data, "--limit", "12000")
    c = compact(script_runner, data, "--limit", "12000", "--store", str(tmp_path / "other"))
    assert a.returncode == b.returncode == c.returncode == 0
    assert a.stdout == b.stdout == c.stdout


def test_below_the_trigger_the_output_is_the_input(script_runner, runs, store_dir):
    data = json.dumps(runs["ponylang__ponyc-4595"], indent=3).encode() + b"\n\n"
    res = compact(script_runner, data, "--limit", "2000000")
    assert res.returncode == 0
    assert res.stdout.encode() == data
    assert "below the 80% trigger: unchanged" in res.stderr
    assert not (store_dir / "sessions").exists() and not (store_dir / "blobs").exists()
    forced = compact(
        script_runner,
        data,
        "--limit",
        "2000000",
        "--force",
        "--keep-tokens",
        "500",
        "--json-report",
    )
    assert forced.returncode == 0
    rep = report_of(forced)
    assert rep["stage1"]["elided"] > 0 and rep["action"] == "compacted"
    assert strict_problems(json.loads(forced.stdout), "openai") == []


def test_at_sets_the_trigger_and_the_target(script_runner, runs):
    data = as_bytes(runs["ponylang__ponyc-4595"])
    tokens = report_of(compact(script_runner, data, "--limit", "1000000", "--json-report"))[
        "tokens_before"
    ]
    limit = str(int(tokens / 0.6))  # 60% full
    assert compact(script_runner, data, "--limit", limit).stdout.encode() == data
    res = compact(script_runner, data, "--limit", limit, "--at", "50", "--json-report")
    rep = report_of(res)
    assert rep["target_percent"] == 45 and rep["percent_after"] <= 45


# --- shapes and pass-through -------------------------------------------------------------


def test_wrapper_jsonl_and_unknown_fields_pass_through(script_runner, runs):
    msgs = json.loads(json.dumps(runs["ponylang__ponyc-4595"]))
    for i, m in enumerate(msgs):
        m["x_meta"] = {"turn": i}
        for c in m.get("tool_calls") or []:
            c["x_call"] = True
    wrapper = {"model": "gpt-4o", "temperature": 0, "messages": msgs, "tools": [{"x": 1}]}
    res = compact(script_runner, as_bytes(wrapper), "--limit", "30000")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert list(out) == ["model", "temperature", "messages", "tools"]
    assert out["tools"] == [{"x": 1}]
    assert [m["x_meta"] for m in out["messages"]] == [m["x_meta"] for m in msgs]
    assert all(c["x_call"] for m in out["messages"] for c in m.get("tool_calls") or [])
    assert strict_problems(out, "openai") == []
    jsonl = b"".join(as_bytes(m) + b"\n" for m in msgs)
    res = compact(script_runner, jsonl, "--limit", "30000")
    assert res.returncode == 0
    lines = res.stdout.splitlines()
    assert len(lines) == len(msgs)
    assert [json.loads(x) for x in lines] == out["messages"]


def test_format_can_be_forced(script_runner):
    chat = [{"role": "user", "content": "hi " * 50}, {"role": "assistant", "content": "yo " * 50}]
    res = compact(
        script_runner, as_bytes(chat), "--limit", "100", "--format", "anthropic", "--json-report"
    )
    assert report_of(res)["format"] == "anthropic"
    sysmsg = [{"role": "system", "content": "s"}, *chat]
    bad = compact(script_runner, as_bytes(sysmsg), "--limit", "100", "--format", "anthropic")
    assert bad.returncode == 1
    assert "unknown role 'system' for the anthropic format" in bad.stderr


def test_model_gives_the_window(script_runner, runs):
    data = as_bytes(runs["ponylang__ponyc-4595"])
    res = compact(script_runner, data, "--model", "gpt-4", "--json-report")
    rep = report_of(res)
    from ctxtools.profiles import resolve

    assert rep["limit"] == resolve("gpt-4").context_limit
    assert rep["tokens_before"] > rep["limit"] and rep["tokens_after"] < rep["tokens_before"]
    assert res.returncode in (0, 4)
    assert strict_problems(json.loads(res.stdout), "openai") == []


def test_a_model_without_a_profile_is_said(script_runner):
    """--model gpt4o (a typo) compacted to the default window without a word; ctx-count
    said it. The same note, with the closest profile names; --limit decides the window
    instead, and then nothing is said."""
    data = json.dumps([{"role": "user", "content": "fix the bug"}]).encode()
    res = compact(script_runner, data, "--model", "gpt4o")
    assert res.returncode == 0, res.stderr
    assert ("ctx-compact: note: no profile for 'gpt4o' (closest: gpt-4o, gpt-4); using the "
            "default profile (16,384 tokens)") in res.stderr
    assert "no profile for" not in compact(script_runner, data, "--model", "gpt-4o").stderr
    limited = compact(script_runner, data, "--model", "gpt4o", "--limit", "9000")
    assert "no profile for" not in limited.stderr


def test_without_limit_or_model_the_default_profile_counts(script_runner):
    """Issue 20.8: ctx-compact takes the window ctx-pack and ctx-count --budget take, the
    default profile's, when given neither --model nor --limit (its --help says so)."""
    from ctxtools.profiles import resolve

    window = resolve("default").context_limit
    data = json.dumps([{"role": "user", "content": "fix the bug"}]).encode()
    res = compact(script_runner, data, "--json-report")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stderr.strip().splitlines()[-1])
    assert report["limit"] == window
    budget = script_runner.run(["ctx-count", "--budget", "--json"])
    assert json.loads(budget.stdout)["context_limit"] == window
    assert f"{window:,} tokens" in script_runner.run(["ctx-compact", "--help"]).stdout


# --- no headroom -------------------------------------------------------------------------


@pytest.mark.process
def test_exit_4_when_the_target_cannot_be_reached(script_runner, runs):
    data = as_bytes(runs["ponylang__ponyc-4588"])
    res = compact(script_runner, data, "--limit", "2500", "--json-report")
    assert res.returncode == 4
    assert "pause auto-compaction" in res.stderr
    rep = report_of(res)
    assert rep["action"] == "no_headroom"
    out = json.loads(res.stdout)  # the best valid result is still written
    assert strict_problems(out, "openai") == []
    assert rep["tokens_after"] < rep["tokens_before"]


def test_no_valid_cut_applies_stage_1_only_then_exit_4(script_runner):
    big = "x = 1\n" * 4000
    msgs = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": big},
    ]
    res = compact(script_runner, as_bytes(msgs), "--limit", "3000", "--json-report")
    assert res.returncode == 4
    # one note, the summary, the error: it said "only stage 1 applied", then "nothing to
    # elide ...: unchanged", then the summary's "unchanged" again
    said = [ln for ln in res.stderr.splitlines() if ln.startswith("ctx-compact: ")]
    assert said[0] == (
        "ctx-compact: nothing to elide or drop, and no valid cut: every message after the "
        "head is in the protected tail or bound to a tool call there"
    )
    assert said[1].endswith(" tokens: unchanged") and said[2].startswith("ctx-compact: error")
    assert len(said) == 3 and "stage 1 applied" not in res.stderr
    assert json.loads(res.stdout) == msgs  # the only result is in the protected tail
    res = compact(
        script_runner, as_bytes(msgs), "--limit", "3000", "--keep-recent", "0", "--json-report"
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert PLACEHOLDER.match(out[3]["content"])
    assert strict_problems(out, "openai") == []


# --- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, message",
    [
        (b'[{"role": "user", "content": "x"}', "invalid JSON at line 1"),
        (b"", "empty transcript"),
        (b"  \n", "empty transcript"),
        (b'{"role": "user"}\n{"role": "user", oops}\n', "invalid JSON at line 2"),
        (b'[{"role": "wizard", "content": "x"}]', "unknown role 'wizard'"),
        (b'[{"content": "x"}]', 'message 1 has no "role"'),
        (b'[{"role": ["user"], "content": "x"}]', 'message 1 has a JSON array for its "role"'),
        (b'[{"role": 7, "content": "x"}]', 'message 1 has a JSON number for its "role" (a str'),
        (b"[1, 2]", "message 1 is not a JSON object"),
        (b'{"foo": 1}', "not a transcript"),
        (b'[{"role": "user", "content": "\xff\xfe"}]', "invalid UTF-8"),
        (b"[]", "empty transcript: no messages"),
        (b'{"model": "m", "messages": []}', "empty transcript: no messages"),
        (b"\xef\xbb\xbf[]\n", "empty transcript: no messages"),
        (b"\xef\xbb\xbf", "empty transcript: no input"),
        (b"\xef\xbb\xbf\xef\xbb\xbf[]", "invalid JSON"),
    ],
)
@pytest.mark.process
def test_bad_input_is_refused(script_runner, store_dir, data, message):
    res = compact(script_runner, data, "--limit", "100")
    assert res.returncode == 1
    assert message in res.stderr
    assert res.stdout == ""
    assert "Traceback" not in res.stderr
    assert not (store_dir / "sessions").exists() and not (store_dir / "blobs").exists()


def test_an_empty_file_is_named_not_sent_to_stdin(script_runner, tmp_path):
    # "empty transcript: no input (give a JSON transcript on stdin)" of a FILE the user gave
    (tmp_path / "t.json").write_bytes(b"\xef\xbb\xbf\n")
    res = script_runner.run(["ctx-compact", "--limit", "100", str(tmp_path / "t.json")])
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr == f"ctx-compact: error: empty transcript: {tmp_path / 't.json'} is empty\n"


def test_an_empty_message_list_is_bad_input_as_the_help_says(script_runner):
    """Exit 1, as --help lists "empty transcript" under bad input: both APIs refuse a request
    without messages, so there is nothing valid to pass through."""
    res = compact(script_runner, b"[]", "--limit", "100")
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr == (
        "ctx-compact: error: empty transcript: no messages (the OpenAI and Anthropic APIs "
        "both need at least one message)\n"
    )
    help_text = compact(script_runner, b"", "--help").stdout
    assert "1 bad input (invalid JSON, unknown role, empty transcript" in " ".join(
        help_text.split()
    )


BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_a_byte_order_mark_is_skipped_and_not_written_back(script_runner, runs, fmt):
    msgs = runs["ponylang__ponyc-4593"]
    doc = msgs if fmt == "openai" else convert.to_anthropic(msgs)
    data = as_bytes(doc)
    plain = compact(script_runner, data, "--limit", "6000")
    marked = compact(script_runner, BOM + data, "--limit", "6000")
    assert marked.returncode == plain.returncode == 0, marked.stderr
    assert marked.stdout == plain.stdout and not marked.stdout.startswith("\ufeff")
    assert strict_problems(json.loads(marked.stdout), fmt) == []


def test_a_byte_order_mark_stays_when_the_input_is_given_back_unchanged(script_runner, runs):
    """Below the trigger the output is the input, byte for byte: the mark included."""
    data = BOM + as_bytes(runs["ponylang__ponyc-4593"])
    res = compact(script_runner, data, "--limit", "1000000")
    assert res.returncode == 0
    assert res.stdout.encode() == data


def test_a_byte_order_mark_before_json_lines(script_runner, runs):
    msgs = runs["ponylang__ponyc-4593"]
    jsonl = b"".join(json.dumps(m).encode() + b"\n" for m in msgs)
    res = compact(script_runner, BOM + jsonl, "--limit", "6000")
    assert res.returncode == 0, res.stderr
    assert res.stdout == compact(script_runner, jsonl, "--limit", "6000").stdout
    assert res.stdout.startswith('{"role":"system"')


ORPHANED = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "task"},
    {"role": "tool", "tool_call_id": "ghost", "content": "output without a call " * 40},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        ],
    },
    {"role": "assistant", "content": "no result came for c1"},
]


def test_orphans_are_reported_not_made_worse(script_runner, store_dir):
    res = compact(script_runner, as_bytes(ORPHANED), "--limit", "50")
    assert res.returncode == 1
    assert "1 orphaned tool result(s), 1 call(s) without a result" in res.stderr
    assert "--repair" in res.stderr
    assert res.stdout == ""
    assert not (store_dir / "sessions").exists() and not (store_dir / "blobs").exists()


def test_repair_drops_orphans_into_the_store_and_answers_calls(script_runner):
    res = compact(
        script_runner, as_bytes(ORPHANED), "--limit", "100000", "--repair", "--json-report"
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert strict_problems(out, "openai") == []
    rep = report_of(res)
    assert rep["action"] == "repaired"  # issue 11: it said "unchanged" after repairing
    assert "below the 80% trigger: not compacted, only repaired" in res.stderr
    (removed,) = rep["repair"]["removed"]
    assert read_back(removed["ref"]) == ORPHANED[2]["content"].encode()
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool", "assistant"]


def test_repair_anthropic(script_runner):
    doc = {
        "system": "s",
        "messages": [
            {"role": "user", "content": "task"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "zzz", "content": "orphan"},
                ],
            },
            {"role": "assistant", "content": "ok"},
        ],
    }
    bad = compact(script_runner, as_bytes(doc), "--limit", "100000")
    assert bad.returncode == 1
    res = compact(script_runner, as_bytes(doc), "--limit", "100000", "--repair", "--json-report")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert strict_problems(out, "anthropic") == []
    ref = report_of(res)["repair"]["removed"][0]["ref"]
    assert read_back(ref) == b"orphan"


@pytest.mark.parametrize("content", [7, None, {"text": "x"}])
def test_repair_refuses_a_turn_it_cannot_add_a_result_to(script_runner, store_dir, content):
    """Found by fuzzing: a user turn whose content is neither text nor blocks, after a call
    without a result, gave a TypeError traceback. Now one line, and nothing is stashed
    (not even the orphan before it)."""
    doc = {
        "system": "s",
        "messages": [
            {"role": "user", "content": "task"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "zzz", "content": "orphan"}],
            },
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "b", "name": "f", "input": {}}],
            },
            {"role": "user", "content": content},
            {"role": "assistant", "content": "ok"},
        ],
    }
    res = compact(script_runner, as_bytes(doc), "--limit", "100000", "--repair")
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr == (
        "ctx-compact: error: message 5: its content is neither text nor a list of blocks, so "
        "the missing tool_result of message 4 cannot join it (fix that message's content; "
        "--repair cannot)\n"
    )
    assert not (store_dir / "sessions").exists() and not (store_dir / "blobs").exists()


# --- the summarizer ----------------------------------------------------------------------


def _summarizer(code: str) -> str:
    import shlex

    return shlex.join([sys.executable, "-c", code])


GOOD_SUMMARY = r"""
import re, sys
text = sys.stdin.read()
print("The agent explored the repository, edited files and tried to build.")
for p in dict.fromkeys(re.findall(r"[\w./-]*/[\w./@+-]+", text)):
    print("- path", p)
"""


@pytest.mark.parametrize(
    "code, reason",
    [
        ("import time; time.sleep(30)", "timed out after 0.5 s"),
        ("import sys; sys.stderr.write('boom\\n'); sys.exit(3)", "exited with status 3: boom"),
        ("pass", "empty output"),
        (
            "import sys; sys.stdin.read(); print('Sure! Here is the summary:')",
            "chatty preamble",
        ),
        ("print('Error: rate limit exceeded, retry later')", "looks like an error message"),
        ("print('I cannot help with that.')", "chatty preamble or refusal"),
    ],
)
def test_bad_summarizers_are_rejected(script_runner, runs, code, reason):
    data = as_bytes(runs["ponylang__ponyc-4593"])
    res = compact(
        script_runner,
        data,
        "--limit",
        "6000",
        "--summarizer",
        _summarizer(code),
        "--summarizer-timeout",
        "0.5",
        "--json-report",
    )
    assert res.returncode == 0, res.stderr
    assert "summary rejected" in res.stderr and reason in res.stderr
    rep = report_of(res)
    assert rep["summarizer"]["accepted"] is False
    out = json.loads(res.stdout)
    assert strict_problems(out, "openai") == []
    assert "Narrative (summarizer)" not in digest_text(out, "openai")
    plain = compact(script_runner, data, "--limit", "6000")
    assert plain.stdout == res.stdout


def test_good_summary_joins_the_digest(script_runner, runs):
    data = as_bytes(runs["ponylang__ponyc-4593"])
    res = compact(
        script_runner,
        data,
        "--limit",
        "6000",
        "--summarizer",
        _summarizer(GOOD_SUMMARY),
        "--min-ratio",
        "0.01",
        "--json-report",
    )
    assert res.returncode == 0, res.stderr
    rep = report_of(res)
    assert rep["summarizer"]["accepted"] is True, rep["summarizer"]
    digest = digest_text(json.loads(res.stdout), "openai")
    assert re.search(r"\nNarrative \(summarizer, messages 3–\d+\):\nThe agent explored", digest)
    assert strict_problems(json.loads(res.stdout), "openai") == []


def test_a_runaway_summarizer_is_rejected_and_the_run_goes_on(script_runner, runs):
    """`yes` as the summarizer (issue 11: 2.4 GB buffered, then a MemoryError): its output is
    capped, it is killed, and the digest alone is used, as for any rejected summary."""
    data = as_bytes(runs["ponylang__ponyc-4593"])
    res = compact(
        script_runner,
        data,
        "--limit",
        "6000",
        "--summarizer",
        "yes",
        "--summarizer-timeout",
        "600",
        "--json-report",
    )
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert re.search(
        r"summary rejected \(wrote more than [\d,]+ bytes, longer than the [\d,]+ characters "
        r"it summarises could need: stopped\): the digest alone is used",
        res.stderr,
    )
    assert report_of(res)["summarizer"]["accepted"] is False
    assert res.stdout == compact(script_runner, data, "--limit", "6000").stdout


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--summarizer-timeout", "inf", "'inf' is not a finite number"),
        ("--summarizer-timeout", "nan", "'nan' is not a finite number"),
        ("--summarizer-timeout", "1e9", "'1e9' is above the maximum of 3600"),
        ("--summarizer-timeout", "0", "'0' is not above 0"),
        ("--summarizer-timeout", "-2", "'-2' is below the minimum of 0"),
        ("--at", "nan", "'nan' is not a finite number"),
        ("--at", "5", "'5' is not above 5"),
        ("--at", "inf", "'inf' is not a finite number"),
        ("--min-ratio", "nan", "'nan' is not a finite number"),
        ("--min-path-share", "nan", "'nan' is not a finite number"),
        ("--min-path-share", "1.5", "'1.5' is above the maximum of 1"),
    ],
)
def test_numbers_that_are_not_finite_or_in_range_are_usage_errors(
    script_runner, runs, store_dir, option, value, message
):
    data = as_bytes(runs["ponylang__ponyc-4593"])
    args = ["--limit", "6000", "--summarizer", "yes", option, value]
    res = compact(script_runner, data, *args)
    assert res.returncode == 2
    assert f"invalid value for '{option}': {message}" in res.stderr
    assert res.stdout == "" and "Traceback" not in res.stderr
    assert not (store_dir / "sessions").exists() and not (store_dir / "blobs").exists()


def test_the_longest_summarizer_timeout_is_accepted(script_runner, runs):
    data = as_bytes(runs["ponylang__ponyc-4593"])
    res = compact(script_runner, data, "--limit", "6000", "--summarizer-timeout", "3600")
    assert res.returncode == 0, res.stderr


def test_summarizer_that_does_not_exist(script_runner, runs):
    data = as_bytes(runs["ponylang__ponyc-4593"])
    res = compact(
        script_runner, data, "--limit", "6000", "--summarizer", "/nonexistent/summarize --fast"
    )
    assert res.returncode == 0
    assert "cannot run '/nonexistent/summarize'" in res.stderr


def test_summarizer_command_must_parse(script_runner):
    res = compact(script_runner, b"[]", "--limit", "10", "--summarizer", "'unclosed")
    assert res.returncode == 2
    assert "--summarizer" in res.stderr


# --- --accept ----------------------------------------------------------------------------

ORIGINAL_DOC = (
    "# Project memory\n\nThe build uses `make` in /srv/app; tests live in tests/test_api.py and "
    "src/app/server.py holds the HTTP layer.\n" + "Details about the deployment. " * 40
)


def test_accept_passes_a_good_candidate(script_runner, tmp_path):
    orig = tmp_path / "CONTEXT.md"
    orig.write_text(ORIGINAL_DOC)
    cand = tmp_path / "new.md"
    text = "Build: `make` in /srv/app. Tests: tests/test_api.py. HTTP: src/app/server.py.\n" * 2
    cand.write_text(text)
    res = script_runner.run(["ctx-compact", "--accept", str(orig), str(cand)])
    assert res.returncode == 0
    assert res.stdout == text


@pytest.mark.parametrize(
    "candidate, reason",
    [
        ("Sure! Here is the compressed context:\n- make\n" * 3, "chatty preamble"),
        ("", "empty output"),
        ("x" * 5000, "longer than what it replaces"),
        ("short", "too short"),
        ("The project builds with make and has tests and a server. " * 3, "file paths"),
    ],
)
def test_accept_rejects_and_leaves_the_original(script_runner, tmp_path, candidate, reason):
    orig = tmp_path / "CONTEXT.md"
    orig.write_text(ORIGINAL_DOC)
    cand = tmp_path / "new.md"
    cand.write_text(candidate)
    res = script_runner.run(["ctx-compact", "--accept", str(orig), str(cand)])
    assert res.returncode == 1
    assert reason in res.stderr
    assert res.stdout == ""
    assert orig.read_text() == ORIGINAL_DOC


@pytest.mark.process
def test_accept_reads_the_candidate_from_stdin(script_runner, tmp_path):
    orig = tmp_path / "CONTEXT.md"
    orig.write_text(ORIGINAL_DOC)
    res = run_bytes(
        script_runner, ["ctx-compact", "--accept", str(orig), "-"], b"I'm sorry, I can't do that."
    )
    assert res.returncode == 1
    missing = script_runner.run(["ctx-compact", "--accept", str(tmp_path / "nope"), str(orig)])
    assert missing.returncode == 1 and "no such file" in missing.stderr


# --- --evict -----------------------------------------------------------------------------

ENTRIES = [
    {"id": "a", "path": "src/a.py", "last_accessed_at": 100, "size_bytes": 4000, "access_count": 9},
    {"id": "b", "path": "src/b.py", "last_accessed_at": 200, "size_bytes": 3000},
    {"id": "c", "path": "src/c.py", "last_accessed_at": 50, "size_bytes": 1000, "access_count": 1},
    {"id": "d", "path": "README.md", "last_accessed_at": 300, "size_bytes": 8000},
]


@pytest.mark.parametrize("strategy", ["lru", "importance"])
def test_evict_prints_the_strategy_order(script_runner, strategy):
    from ctxtools.store import evict

    data = b"".join(as_bytes(e) + b"\n" for e in ENTRIES)
    res = run_bytes(
        script_runner,
        ["ctx-compact", "--evict", "--strategy", strategy, "--max-bytes", "9000"],
        data,
    )
    assert res.returncode == 0, res.stderr
    entries = [dict(e, access_count=e.get("access_count", 0)) for e in ENTRIES]
    expected = evict.evict(strategy, entries, evict.GcBudget(max_bytes=9000))
    assert res.stdout.split() == expected
    assert expected  # something had to go
    if strategy == "lru":
        assert expected[0] == "c"


def test_evict_bad_input(script_runner):
    res = run_bytes(script_runner, ["ctx-compact", "--evict", "--max-bytes", "1k"], b"{nope\n")
    assert res.returncode == 1 and "line 1: invalid JSON" in res.stderr
    res = run_bytes(
        script_runner, ["ctx-compact", "--evict", "--max-bytes", "1k"], b'{"id": "a"}\n'
    )
    assert res.returncode == 1 and "missing 'size_bytes'" in res.stderr
    res = run_bytes(script_runner, ["ctx-compact", "--evict"], b"")
    assert res.returncode == 2
    res = run_bytes(script_runner, ["ctx-compact", "--evict", "--max-bytes", "lots"], b"")
    assert res.returncode == 2


def test_fixture_converter_output_is_valid(runs):
    for msgs in runs.values():
        assert strict_problems(msgs, "openai") == []
        assert strict_problems(convert.to_anthropic(msgs), "anthropic") == []
    assert Path(CORPUS).is_file()


def test_transcripts_are_read_from_the_clone_alone():
    """The real runs and their licence live in tests/data/compact; no test reaches beside the
    repository for them."""
    assert CORPUS.is_relative_to(DATA) and (CORPUS.parent / "LICENSE-OpenHands").is_file()
    tests = Path(__file__).resolve().parents[1]
    offenders = [  # every line naming the runs' file names it under tests/data/compact
        f"{p.relative_to(tests)}:{n}"
        for p in sorted(tests.rglob("*.py"))
        if not p.is_relative_to(DATA)
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if CORPUS.name in line and 'DATA / "compact"' not in line
    ]
    assert offenders == []


# --- long transcripts built from the real ones -----------------------------------------------


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_long_transcript_built_from_real_runs(script_runner, runs, fmt):
    msgs = build_long(runs, 3)
    assert len(msgs) > 600
    doc = msgs if fmt == "openai" else convert.to_anthropic(msgs)
    assert strict_problems(doc, fmt) == []
    data = as_bytes(doc)
    res = compact(script_runner, data, "--limit", "32000", "--json-report")
    assert res.returncode == 0, res.stderr
    rep = report_of(res)
    assert rep["tokens_before"] > 150_000 and rep["tokens_after"] <= rep["target_tokens"]
    out = json.loads(res.stdout)
    assert strict_problems(out, fmt) == []
    assert check_elided_come_back(doc, out, fmt) == rep["stage1"]["elided"] > 0
    digest = digest_text(out, fmt)
    dropped = read_back(rep["stage2"]["handle"]).decode().splitlines()
    d_msgs = doc if fmt == "openai" else doc["messages"]
    assert [json.loads(x) for x in dropped] == d_msgs[
        rep["stage2"]["first"] - 1 : rep["stage2"]["last"]
    ]
    if fmt == "openai":
        failed, edited = failed_commands_and_edits(msgs[2 : rep["stage2"]["last"]])
        for path in edited:
            assert path in digest.split("Files edited:")[1].split("Commands")[0]
        for cmd in failed:
            assert f"`{cmd}`" in digest.split("Failed calls:")[1]
    again = compact(script_runner, data, "--limit", "32000")
    assert again.stdout == res.stdout
    # compacting the output again (more turns later) keeps the first digest in place
    if fmt == "openai":
        turns = [i for i, m in enumerate(msgs) if m["role"] == "assistant"]
        more = json.loads(json.dumps(msgs[turns[-3] :]).replace('-2-2"', '-9-9"'))
        grown = out + [{"role": "user", "content": "Now run it again."}] + more
        res2 = compact(script_runner, as_bytes(grown), "--limit", "20000")
        assert res2.returncode == 0, res2.stderr
        out2 = json.loads(res2.stdout)
        assert out2[2] == out[2]
        assert strict_problems(out2, fmt) == []


@pytest.mark.process
def test_file_argument_and_usage_errors(script_runner, runs, tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(as_bytes(runs["ponylang__ponyc-4595"]))
    res = script_runner.run(["ctx-compact", str(path), "--limit", "20000"])
    assert res.returncode == 0
    assert strict_problems(json.loads(res.stdout), "openai") == []
    missing = script_runner.run(["ctx-compact", str(tmp_path / "nope.json"), "--limit", "9"])
    assert missing.returncode == 1 and "no such file" in missing.stderr
    assert (
        script_runner.run(["ctx-compact", str(path), "--limit", "9", "--at", "5"]).returncode == 2
    )
    assert script_runner.run(["ctx-compact", str(path), "--limit", "0"]).returncode == 2
    both = script_runner.run(["ctx-compact", "--evict", "--accept", str(path), str(path)])
    assert both.returncode == 2


def test_tool_results_given_as_parts_are_stashed_as_json(script_runner):
    parts = [{"type": "text", "text": "line\n" * 3000}]
    msgs = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": parts},
        {"role": "assistant", "content": "done"},
    ]
    res = compact(
        script_runner, as_bytes(msgs), "--limit", "4000", "--keep-recent", "1", "--keep-tokens", "0"
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    ref = PLACEHOLDER.match(out[3]["content"]).group(1)
    assert json.loads(read_back(ref)) == parts
    assert strict_problems(out, "openai") == []


def test_a_forced_format_that_does_not_fit_is_refused(script_runner, runs, store_dir):
    msgs = runs["ponylang__ponyc-4595"]
    res = compact(
        script_runner, as_bytes(convert.to_anthropic(msgs)), "--limit", "5000", "--format", "openai"
    )
    assert res.returncode == 1 and "tool_use/tool_result blocks" in res.stderr
    odd = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "", "tool_calls": []}]
    res = compact(script_runner, as_bytes(odd), "--limit", "5000", "--format", "anthropic")
    assert res.returncode == 1 and "carry tool_calls" in res.stderr
    assert res.stdout == "" and not store_dir.exists()


def test_a_transcript_nested_too_deeply_is_one_line(script_runner):
    """orjson refuses 1,024 levels and the json module's parser runs out of stack: either
    way a one-line error (exit 1), for ctx-compact as for ctx-count --messages."""
    import io

    deep = b"[" * 5000 + b"]" * 5000
    for args in (["ctx-compact", "--limit", "8000"], ["ctx-count", "--messages"]):
        r = script_runner.run(args, stdin=io.TextIOWrapper(io.BytesIO(deep)))
        assert r.returncode == 1, r.stderr
        assert "nests too deeply" in r.stderr and "Traceback" not in r.stderr


# --- input that is not JSON, and its size (issue 21, item 14) --------------------------------


@pytest.mark.script_launch_mode("inprocess")  # an endless stdin: only a stream can be that
@pytest.mark.parametrize(
    "args",
    [["--limit", "4000"], ["--evict", "--max-bytes", "1M"], ["--accept", "-", "/dev/null"]],
)
def test_an_endless_log_on_stdin_is_refused_from_its_first_bytes(script_runner, args):
    from helpers import endless_stdin

    limit = (65 if "--accept" in args else 1) << 20  # --accept reads a text up to 64 MiB
    stdin = endless_stdin(b"2026-12-01 10:00:00 INFO src/app.py: request served\n", limit)
    r = script_runner.run(["ctx-compact", *args], stdin=stdin)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("ctx-compact: error: ") and r.stderr.count("\n") == 1
    assert stdin.buffer.raw.given <= limit  # was: read to its end (never, here)


@pytest.mark.script_launch_mode("inprocess")  # lowers the limit
def test_a_transcript_past_the_limit_is_refused_json_or_json_lines(
    script_runner, tmp_path, monkeypatch
):
    """Compacting holds the whole transcript (3-4 times its size in memory): past the
    limit it is refused before that memory is spent, JSON Lines too (issue 27, item 13)."""
    from ctxtools import jsonbound

    msgs = [
        {"role": "user" if i % 2 else "assistant", "content": f"step {i} " * 40}
        for i in range(1, 400)
    ]
    doc = tmp_path / "t.json"
    doc.write_text(json.dumps(msgs))
    lines = tmp_path / "t.jsonl"
    lines.write_text("".join(json.dumps(m) + "\n" for m in msgs))
    monkeypatch.setattr(jsonbound, "JSON_DOCUMENT_MAX", 100_000)
    r = script_runner.run(["ctx-compact", "--limit", "900000", str(doc)])
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (  # (JSON Lines are held to the limit too: the hint offers only
        # what works, as it does for them)
        f"ctx-compact: error: {doc}: one JSON document over 100,000 bytes is not parsed "
        "(the limit) (split the input)\n"
    )
    r = script_runner.run(["ctx-compact", "--limit", "900000", str(lines)])
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (
        f"ctx-compact: error: {lines}: JSON Lines over 100,000 bytes are not compacted "
        "(the limit) (split the input)\n"
    )
    monkeypatch.setattr(jsonbound, "JSON_DOCUMENT_MAX", lines.stat().st_size)
    r = script_runner.run(["ctx-compact", "--limit", "900000", str(lines)])
    assert r.returncode == 0, r.stderr
    assert r.stdout == lines.read_text()  # below the trigger: unchanged, byte for byte


def test_explain_says_what_was_kept_elided_and_dropped(script_runner, runs):
    """Issue 20.9: --explain in ctx-pack's shape on stderr: the target as the budget, the
    head and the protected tail kept, each elided result with the tokens it saved, the
    dropped span with its handle; --json-report carries it as "explain"; the output is the
    same bytes."""
    data = as_bytes(runs["ponylang__ponyc-4588"])
    plain = compact(script_runner, data, "--limit", "7000")
    res = compact(script_runner, data, "--limit", "7000", "--explain", "--json-report")
    assert res.returncode == 0, res.stderr
    assert res.stdout == plain.stdout
    rep = report_of(res)
    ex = rep["explain"]
    assert ex["budget"]["tokens"] == rep["target_tokens"]
    assert ex["budget"]["used"] == rep["tokens_after"]
    assert ex["chosen"][0]["what"] == "messages 1-2"
    assert ex["chosen"][0]["why"].startswith("the head")
    elided = [i for i in ex["left_out"] if i["why"].startswith("elided")]
    assert len(elided) == rep["stage1"]["elided"]
    assert sum(i["tokens"] for i in elided) == rep["stage1"]["tokens_saved"]
    stage2 = rep["stage2"]
    span = f"messages {stage2['first']}-{stage2['last']}"
    [dropped] = [i for i in ex["left_out"] if i["what"] == span]
    assert stage2["handle"] in dropped["why"]
    assert "budget 5,250 tokens (cl100k_base" in res.stderr
    assert f"  {span}: dropped for a digest" in res.stderr


def test_explain_below_the_trigger_keeps_everything(script_runner, runs):
    data = as_bytes(runs["ponylang__ponyc-4588"])
    res = compact(script_runner, data, "--limit", "100000", "--explain", "--json-report")
    assert res.returncode == 0 and res.stdout.encode() == data
    ex = report_of(res)["explain"]
    assert [i["what"] for i in ex["chosen"]] == ["messages 1-101"] and ex["left_out"] == []


def test_explain_does_not_go_with_accept_or_evict(script_runner, tmp_path):
    f = tmp_path / "a"
    f.write_text("x")
    for args in (["--accept", str(f), str(f)], ["--evict", "--max-entries", "1"]):
        res = compact(script_runner, b"", *args, "--explain")
        assert res.returncode == 2 and "--explain goes with a compaction" in res.stderr


@pytest.mark.parametrize("shape", ["list", "jsonl"])
def test_an_integer_past_64_bits_keeps_its_digits(script_runner, store_dir, shape):
    """orjson reads 123456789012345678901234567890 as a double: a compacted transcript
    carried 1.2345678901234568e+29 for a message's numeric id, a value changed in
    passing (and -9223372036854775809, one past a 64-bit integer, too)."""
    msgs = [{"role": "user", "content": "hello " * 200, "id": 123456789012345678901234567890}]
    msgs += [{"role": "assistant", "content": "word " * 300} for _ in range(20)]
    msgs += [{"role": "user", "content": "last", "seq": -9223372036854775809}]
    if shape == "list":
        data = json.dumps(msgs).encode()
    else:
        data = b"".join(json.dumps(m).encode() + b"\n" for m in msgs)
    r = compact(script_runner, data, "--limit", "2000", "--force")
    assert r.returncode == 0, r.stderr
    assert b'"id":123456789012345678901234567890' in r.stdout.encode()
    assert b'"seq":-9223372036854775809' in r.stdout.encode()
    assert b"e+29" not in r.stdout.encode()
