"""The stages of a compaction one by one (ctxtools.compact.layout, .stages), on real runs.

Each stage is checked against what it promises, computed independently where possible
(a whole-transcript count, the transcript's own call/result links, the stash's bytes).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from helpers import CORPUS, build_long, convert, strict_problems

from ctxtools.compact.accept import Verdict
from ctxtools.compact.elide import MemoryStash, content_bytes, placeholder, predict_ref, sha_ref
from ctxtools.compact.layout import find_layout
from ctxtools.compact.run import compact_options, compact_transcript
from ctxtools.compact.stages import (
    Cut,
    Options,
    apply,
    droppable,
    find_cut,
    measure,
    plan_elisions,
    result_data,
    summarise,
)
from ctxtools.compact.transcript import (
    ANTHROPIC,
    MESSAGE_OVERHEAD,
    OPENAI,
    TokenCounter,
    dump,
    links,
    load,
    result_text,
)
from ctxtools.errors import CtxError, ExitStatus, NoHeadroomError, UsageError
from ctxtools.tokens import get_ruler

RUN = "ponylang__ponyc-4588"
REF_IN_PLACEHOLDER = re.compile(r"^\[elided tool result: .*; full text: ctx-read (\S+)\]$")


@pytest.fixture(scope="module")
def runs() -> dict[str, list[dict]]:
    return {r["instance_id"]: convert.to_openai(r) for r in convert.runs_from_jsonl(CORPUS)}


@pytest.fixture(scope="module")
def ruler():
    return get_ruler().ruler


def transcript(runs, fmt: str = OPENAI, run: str = RUN):
    msgs = runs[run]
    doc = msgs if fmt == OPENAI else convert.to_anthropic(msgs)
    return load(json.dumps(doc).encode())


def whole(ruler, tr) -> int:
    """The transcript's tokens, counted at once by a fresh counter."""
    return TokenCounter(ruler).transcript(tr)


def stage_two(tr, ruler, opts):
    counter = TokenCounter(ruler)
    m = measure(tr, counter, opts)
    elisions = plan_elisions(m, opts)
    span = droppable(tr, m, elisions)
    return counter, m, elisions, span


# --- layout ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [OPENAI, ANTHROPIC])
def test_layout_head_protected_tail_and_cuts(runs, fmt):
    tr = transcript(runs, fmt)
    msgs = tr.messages
    layout = find_layout(tr, keep_recent=3)
    first_user = 1 if fmt == OPENAI else 0  # Anthropic: the system prompt is not a message
    assert layout.head == first_user and msgs[first_user]["role"] == "user"
    turns = [i for i, m in enumerate(msgs) if m["role"] == "assistant"]
    assert layout.protected == turns[-3]
    assert layout.cuts and layout.cuts == sorted(layout.cuts)
    assert layout.last_cut == layout.cuts[-1] <= layout.protected
    origin = links(tr).origin
    for k in layout.cuts:
        assert msgs[k]["role"] == "assistant" if fmt == ANTHROPIC else msgs[k]["role"] != "tool"
        # no result kept from the cut on answers a call that the cut drops
        assert all(origin[j] >= k for j in origin if j >= k and origin[j] >= 0)
    everything = find_layout(tr, keep_recent=0)
    assert everything.protected == len(msgs) and everything.last_cut <= len(msgs)


def test_layout_keep_tools_reduce_a_message_to_its_kept_calls(runs):
    tr = transcript(runs)
    keep = find_layout(tr, 3, ("execute_bash",)).keep
    assert keep and not find_layout(tr, 3).keep
    names = {
        i: [c["function"]["name"] for c in m.get("tool_calls") or []]
        for i, m in enumerate(tr.messages)
    }
    bash = [i for i, n in names.items() if "execute_bash" in n]
    other = [i for i, n in names.items() if n and "execute_bash" not in n]
    assert bash and other
    for i in bash:
        kept_names = [c["function"]["name"] for c in keep.kept_part(i)["tool_calls"]]
        assert kept_names == ["execute_bash"] * names[i].count("execute_bash")
    assert all(keep.kept_part(i) is None for i in other)
    call_name = {
        c["id"]: c["function"]["name"] for m in tr.messages for c in m.get("tool_calls") or []
    }
    results = [j for j, m in enumerate(tr.messages) if m["role"] == "tool"]
    kept = [j for j in results if keep.kept_part(j) is not None]
    answers_bash = [
        j for j in results if call_name[tr.messages[j]["tool_call_id"]] == "execute_bash"
    ]
    assert kept == answers_bash and 0 < len(kept) < len(results)
    assert keep.count(-1, len(tr.messages)) == len(kept)


# --- measure --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [OPENAI, ANTHROPIC])
def test_measure_counts_every_message_under_the_trigger(runs, ruler, fmt):
    tr = transcript(runs, fmt)
    opts = Options(limit=10**6)
    m = measure(tr, TokenCounter(ruler), opts)
    assert m.exact and m.stop == m.layout.head + 1
    assert m.before == whole(ruler, tr)
    counter = TokenCounter(ruler)
    assert m.tokens == [counter.message(msg) for msg in tr.messages]
    assert m.target == 10**6 * 75 // 100  # 5 points under the 80% trigger
    assert "below the 80% trigger" in m.trigger_note(opts)
    assert m.trigger_note(Options(limit=10**6, force=True)) is None


def test_measure_candidates_are_old_results_newest_first(runs, ruler):
    tr = transcript(runs)
    opts = Options(limit=9000, keep_tokens=0)
    m = measure(tr, TokenCounter(ruler), opts)
    assert m.trigger_note(opts) is None  # 9,000 tokens is far too small a window
    indices = [c.index for c in m.candidates]
    assert indices and indices == sorted(indices, reverse=True)
    counter = TokenCounter(ruler)
    for c in m.candidates:
        msg = tr.messages[c.index]
        assert msg["role"] == "tool" and c.block is None
        assert m.layout.head < c.index < m.layout.protected
        data = result_data(tr, c.index, c.block)  # what would be stashed, made again
        assert data == content_bytes(msg["content"])
        short = placeholder(data, predict_ref("default", data))
        assert c.saving == counter.text(result_text(msg["content"])) - counter.text(short) > 0


def test_measure_estimates_when_the_old_part_can_only_be_dropped(runs, ruler):
    tr = load(json.dumps(build_long(runs, 3)).encode())
    lazy = measure(tr, TokenCounter(ruler), Options(limit=32000))
    full = measure(tr, TokenCounter(ruler), Options(limit=32000, lazy=False))
    assert full.exact and full.before == whole(ruler, tr)
    assert not lazy.exact and lazy.stop > lazy.layout.head + 1
    assert lazy.stop <= lazy.layout.last_cut
    assert set(lazy.tokens[lazy.layout.head + 1 : lazy.stop]) == {0}
    assert lazy.tokens[lazy.stop :] == full.tokens[lazy.stop :]
    assert abs(lazy.before - full.before) < 0.1 * full.before
    assert lazy.trigger_note(Options(limit=32000)) is None  # an estimate never says "below"


# --- stage 1 --------------------------------------------------------------------------------------


def test_plan_elisions_takes_the_oldest_until_under_the_target(runs, ruler):
    tr = transcript(runs)
    before = whole(ruler, tr)
    opts = Options(limit=int(before / 0.82), keep_tokens=0)  # just over the 80% trigger
    m = measure(tr, TokenCounter(ruler), opts)
    plan = plan_elisions(m, opts)
    chosen = [(i, b) for i in plan.chosen for b in plan.chosen[i]]
    oldest = [(c.index, c.block) for c in reversed(m.candidates)][: len(chosen)]
    assert chosen and sorted(chosen) == sorted(oldest) and len(chosen) < len(m.candidates)
    saved = sum(s for blocks in plan.chosen.values() for s in blocks.values())
    assert plan.total == m.before - saved <= m.target
    last_saving = m.candidates[len(m.candidates) - len(chosen)].saving
    assert plan.total + last_saving > m.target  # one fewer would not have been enough
    assert sum(plan.tokens) == sum(m.tokens) - saved
    forced = plan_elisions(m, Options(limit=opts.limit, keep_tokens=0, force=True))
    assert sum(len(b) for b in forced.chosen.values()) == len(m.candidates)
    assert m.tokens == measure(tr, TokenCounter(ruler), opts).tokens  # the plan copied them


# --- stage 2 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [OPENAI, ANTHROPIC])
def test_find_cut_is_the_smallest_allowed_cut_that_fits(runs, ruler, fmt):
    tr = transcript(runs, fmt)
    counter, m, elisions, span = stage_two(tr, ruler, Options(limit=9000))
    assert elisions.total > m.target  # stage 1 alone is not enough
    choice = find_cut(tr, counter, Options(limit=9000), m, span)
    assert choice.fits and choice.cut in m.layout.cuts
    head = m.layout.head
    dropped = tr.messages[head + 1 : choice.cut]
    assert [json.loads(line) for line in choice.dropped.split(b"\n")[:-1]] == dropped
    blob = choice.dropped
    assert f"ctx-read {predict_ref('default', blob)}]" in choice.digest
    lower = m.head_tokens + span.suffix[choice.cut] + MESSAGE_OVERHEAD
    assert lower + counter.text(choice.digest) <= m.target
    # a smaller window cuts later; a larger one no later
    for limit, later in ((7000, True), (12000, False)):
        counter2, m2, _e2, span2 = stage_two(tr, ruler, Options(limit=limit))
        other = find_cut(tr, counter2, Options(limit=limit), m2, span2).cut
        assert (other > choice.cut) if later else (other <= choice.cut)


def test_find_cut_without_an_allowed_cut_and_with_a_narrative(runs, ruler):
    tr = transcript(runs)
    opts = Options(limit=9000, keep_recent=10**6)  # everything after the head is protected
    counter, m, _e, span = stage_two(tr, ruler, opts)
    assert m.layout.cuts == []
    assert find_cut(tr, counter, opts, m, span) == (None, None, b"", False)
    opts = Options(limit=9000)
    counter, m, _e, span = stage_two(tr, ruler, opts)
    story = "Narrative (test):\nthe agent fixed src/libponyc/expr/match.c"
    told = find_cut(tr, counter, opts, m, span, story)
    assert told.digest.endswith(story) and told.fits


def test_a_cut_keeps_the_keep_tool_parts_after_the_digest(runs, ruler):
    tr = transcript(runs)
    opts = Options(limit=9000, keep_tools=("execute_bash",))
    counter, m, _e, span = stage_two(tr, ruler, opts)
    choice = find_cut(tr, counter, opts, m, span)
    cut = Cut.of(choice, m.layout.head, span)
    assert cut.kept and cut.kept == [
        span.kept_parts[j] for j in sorted(span.kept_parts) if j < cut.index
    ]
    report = cut.report()
    assert report["dropped"] + report["kept"] == cut.index - m.layout.head - 1
    assert (report["first"], report["last"]) == (m.layout.head + 2, cut.index)
    assert cut.dropped is choice.dropped  # (one buffer: not joined again)
    assert cut.dropped.count(b"\n") == cut.index - m.layout.head - 1


# --- the summary ----------------------------------------------------------------------------------

PATHS_SUMMARY = (
    "import re, sys; t = sys.stdin.read(); "
    "ps = sorted(set(re.findall(r'(?:[\\w.-]+/)+[\\w.-]+', t))); "
    "print('Worked on: ' + ', '.join(ps)); print(t[: len(t) // 20])"
)


def test_summarise_puts_an_accepted_narrative_in_the_digest(runs, ruler):
    tr = transcript(runs)
    opts = Options(limit=12000, summarizer=[sys.executable, "-c", PATHS_SUMMARY], min_ratio=0.01)
    counter, m, _e, span = stage_two(tr, ruler, opts)
    plain = find_cut(tr, counter, opts, m, span)
    summary = summarise(tr, counter, opts, m, span, plain)
    assert summary.info["accepted"] and summary.note is None
    assert summary.info["command"] == opts.summarizer
    narrative = (
        f"Narrative (summarizer, messages {m.layout.head + 2:,}–{plain.cut:,}):\nWorked on: "
    )
    assert narrative in summary.choice.digest and narrative not in plain.digest
    assert summary.choice.fits


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("import sys; sys.stdin.read(); print('Sure! Here is the summary')", "chatty preamble"),
        ("import sys; sys.stdin.read(); sys.exit(3)", "exited with status 3"),
    ],
)
def test_summarise_keeps_the_plain_digest_when_the_summary_is_rejected(runs, ruler, code, reason):
    tr = transcript(runs)
    opts = Options(limit=12000, summarizer=[sys.executable, "-c", code])
    counter, m, _e, span = stage_two(tr, ruler, opts)
    plain = find_cut(tr, counter, opts, m, span)
    summary = summarise(tr, counter, opts, m, span, plain)
    assert summary.choice is plain and summary.info["accepted"] is False
    assert reason in summary.note and summary.note.startswith("summary rejected (")
    assert summary.note.endswith("): the digest alone is used")


# --- apply ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [OPENAI, ANTHROPIC])
def test_only_apply_writes_and_the_output_names_what_it_wrote(runs, ruler, fmt):
    tr = transcript(runs, fmt)
    opts = Options(limit=9000)
    stash = MemoryStash()
    counter, m, elisions, span = stage_two(tr, ruler, opts)
    cut = Cut.of(find_cut(tr, counter, opts, m, span), m.layout.head, span)
    assert stash.items == {}  # nothing is written before apply
    done = apply(tr, counter, opts, stash, m, elisions, cut)
    output = load(dump(tr, done.messages))
    assert done.tokens == whole(ruler, output) <= m.target
    assert stash.read(done.digest_ref) == cut.dropped
    assert done.digest_tokens > 0 and done.digest_ref == predict_ref("default", cut.dropped)
    for ref in done.handles:
        assert any(ref in json.dumps(msg) for msg in done.messages)
        assert stash.read(ref)
    assert len(stash.items) == len(set(done.handles)) + 1
    assert strict_problems(json.loads(dump(tr, done.messages)), fmt) == []


def test_apply_without_a_cut_only_elides(runs, ruler):
    tr = transcript(runs)
    before = whole(ruler, tr)
    opts = Options(limit=int(before / 0.82), keep_tokens=0)
    counter = TokenCounter(ruler)
    m = measure(tr, counter, opts)
    elisions = plan_elisions(m, opts)
    stash = MemoryStash()
    done = apply(tr, counter, opts, stash, m, elisions, None)
    assert done.digest_ref is None and done.digest_tokens is None
    assert len(done.messages) == len(tr.messages)
    assert done.tokens == elisions.total == before - done.saved
    assert len(done.handles) == len(elisions.chosen) == len(stash.items)
    for i, msg in enumerate(done.messages):
        if i not in elisions.chosen:
            assert msg is tr.messages[i]
            continue
        ref = REF_IN_PLACEHOLDER.match(msg["content"]).group(1)
        assert stash.read(ref) == content_bytes(tr.messages[i]["content"])


# --- around the stages: options, errors, references, start-up -------------------------------------


def test_sha_ref_is_the_ref_a_stash_gives():
    import hashlib

    data = "中文 bytes \udcff".encode("utf-8", "surrogatepass")
    assert sha_ref("s", hashlib.sha256(data).hexdigest()) == predict_ref("s", data)
    assert MemoryStash("s").put(data, "x") == predict_ref("s", data)


def test_compact_options():
    from ctxtools.profiles import resolve

    default = resolve("default")  # neither: the default profile, as ctx-pack takes it
    assert compact_options(None, None) == (
        Options(limit=default.context_limit),
        default.encoding,
    )
    opts, encoding = compact_options(
        "gpt-4o", None, summarizer="llm -m 'qwen 2.5'", at=70.0, keep_tools=("memory",)
    )
    profile = resolve("gpt-4o")
    assert (opts.limit, encoding) == (profile.context_limit, profile.encoding)
    assert opts.summarizer == ["llm", "-m", "qwen 2.5"] and opts.at == 70.0
    assert opts.keep_tools == ("memory",) and opts.keep_recent == Options(1).keep_recent
    assert compact_options(None, 500, "o200k_base")[0].summarizer is None
    with pytest.raises(UsageError, match="No closing quotation"):
        compact_options(None, 500, summarizer="'")


def test_the_errors_the_command_exits_with(runs, ruler):
    data = json.dumps(runs[RUN]).encode()
    tight = compact_transcript(load(data), ruler, Options(limit=300), MemoryStash())
    assert isinstance(tight.error, NoHeadroomError)
    assert tight.error.exit_status == ExitStatus.NO_HEADROOM == 4
    assert str(tight.error) == tight.headroom + "; pause auto-compaction"
    fine = compact_transcript(load(data), ruler, Options(limit=9000), MemoryStash())
    assert fine.error is None
    rejected = Verdict(False, ["empty output"])
    assert isinstance(rejected.error("CONTEXT.md"), CtxError)
    assert str(rejected.error("CONTEXT.md")) == (
        "candidate rejected: empty output (CONTEXT.md is untouched)"
    )
    assert rejected.error("x").exit_status == 1
    assert Verdict(True).error("CONTEXT.md") is None


def test_the_command_does_not_load_the_compactor_to_start():
    code = (
        "import sys, ctxtools.cli.compact; "
        "print(sorted(m for m in sys.modules if m.startswith('ctxtools.compact')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_options_refuse_a_limit_that_is_not_a_positive_count():
    import pytest

    from ctxtools.compact.stages import Options
    from ctxtools.errors import UsageError

    for bad in (0, -5, 1.5, True, None):
        with pytest.raises(UsageError, match="context limit"):
            Options(limit=bad)
    assert Options(limit=1).limit == 1
