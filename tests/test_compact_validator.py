"""A strict validator for OpenAI and Anthropic transcripts, independent of ctxtools' own code.

``strict_problems(doc, fmt)`` lists everything the providers' APIs would reject about a
transcript document (a list of messages, ``{"messages": [...]}`` or a list parsed from JSON
Lines). The other compaction tests run it on every output. Its own tests below make sure it
does catch what it claims to.
"""

from __future__ import annotations

import copy

import pytest

OPENAI_ROLES = {"system", "developer", "user", "assistant", "tool"}


def _messages(doc):
    if isinstance(doc, dict):
        return doc["messages"]
    return doc


def strict_problems(doc, fmt: str) -> list[str]:
    msgs = _messages(doc)
    if not isinstance(msgs, list):
        return ["messages is not a list"]
    if fmt == "openai":
        return _openai(msgs)
    if fmt == "anthropic":
        probs = _anthropic(msgs)
        if isinstance(doc, dict) and "system" in doc:
            system = doc["system"]
            if not isinstance(system, str | list):
                probs.append("top-level system is neither a string nor blocks")
        return probs
    raise ValueError(fmt)


def _openai(msgs: list) -> list[str]:
    probs: list[str] = []
    open_calls: list[str] = []  # calls of the current assistant message still unanswered
    owner = None
    answered: set[str] = set()
    for i, m in enumerate(msgs, 1):
        if not isinstance(m, dict):
            probs.append(f"{i}: not an object")
            continue
        role = m.get("role")
        if role not in OPENAI_ROLES:
            probs.append(f"{i}: unknown role {role!r}")
            continue
        content = m.get("content")
        if role == "tool":
            cid = m.get("tool_call_id")
            if not isinstance(cid, str):
                probs.append(f"{i}: tool message without tool_call_id")
            elif owner is None or cid not in open_calls or cid in answered:
                probs.append(f"{i}: tool message {cid!r} answers no preceding tool call")
            else:
                answered.add(cid)
            if not isinstance(content, str | list):
                probs.append(f"{i}: tool content must be a string or parts")
            continue
        # a non-tool message closes the previous assistant's calls
        if owner is not None:
            missing = [c for c in open_calls if c not in answered]
            if missing:
                probs.append(f"{owner}: tool calls without results: {missing}")
        owner, open_calls, answered = None, [], set()
        if role == "assistant":
            calls = m.get("tool_calls")
            if calls is not None:
                if not isinstance(calls, list) or not calls:
                    probs.append(f"{i}: tool_calls must be a non-empty list")
                    continue
                for c in calls:
                    fn = c.get("function") if isinstance(c, dict) else None
                    if (
                        not isinstance(c, dict)
                        or not isinstance(c.get("id"), str)
                        or not isinstance(fn, dict)
                        or not isinstance(fn.get("name"), str)
                        or not isinstance(fn.get("arguments"), str)
                    ):
                        probs.append(f"{i}: malformed tool call {c!r:.80}")
                        continue
                    open_calls.append(c["id"])
                owner = i
            elif not isinstance(content, str | list):
                probs.append(f"{i}: assistant message without content or tool_calls")
        elif not isinstance(content, str | list):
            probs.append(f"{i}: {role} content must be a string or parts")
    # calls of the very last assistant message may still be running (nothing follows them)
    return probs


def _is_result(b) -> bool:
    return isinstance(b, dict) and b.get("type") == "tool_result"


def _use_ids(msg) -> list:
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list):
        return []
    return [b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]


def _anthropic(msgs: list) -> list[str]:
    probs: list[str] = []
    prev = None
    for i, m in enumerate(msgs, 1):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("user", "assistant"):
            probs.append(f"{i}: role {role!r} is not user/assistant")
            continue
        if i == 1 and role != "user":
            probs.append("1: the first message must be a user turn")
        if prev is not None and prev.get("role") == role:
            probs.append(f"{i}: two {role} turns in a row")
        content = m.get("content")
        if isinstance(content, str):
            blocks = []
        elif isinstance(content, list) and content:
            blocks = content
        else:
            probs.append(f"{i}: content must be a string or a non-empty list of blocks")
            blocks = []
        for b in blocks:
            if not isinstance(b, dict) or not isinstance(b.get("type"), str):
                probs.append(f"{i}: a block without a type")
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        uses = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        if results and role != "user":
            probs.append(f"{i}: tool_result in an assistant turn")
        if uses and role != "assistant":
            probs.append(f"{i}: tool_use in a user turn")
        if results:
            n = len(results)
            if any(not _is_result(b) for b in blocks[:n]):
                probs.append(f"{i}: tool_result blocks must come first")
            prev_ids = _use_ids(prev)
            seen = set()
            for b in results:
                uid = b.get("tool_use_id")
                if uid not in prev_ids or uid in seen:
                    probs.append(f"{i}: tool_result {uid!r} answers no tool_use of the last turn")
                seen.add(uid)
        if prev is not None:
            prev_uses = _use_ids(prev)
            got = {b.get("tool_use_id") for b in results}
            missing = [u for u in prev_uses if u not in got]
            if missing:
                probs.append(f"{i - 1}: tool_use without a result in the next turn: {missing}")
        prev = m
    return probs


# --- the validator's own tests -----------------------------------------------------------

OPENAI_OK = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "u"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        ],
    },
    {"role": "tool", "tool_call_id": "a", "content": "ra"},
    {"role": "tool", "tool_call_id": "b", "content": "rb"},
    {"role": "assistant", "content": "done"},
]

ANTHROPIC_OK = {
    "system": "s",
    "messages": [
        {"role": "user", "content": "u"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "t"},
                {"type": "tool_use", "id": "a", "name": "f", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "r"},
                {"type": "text", "text": "more"},
            ],
        },
        {"role": "assistant", "content": "done"},
    ],
}


def test_valid_transcripts_pass():
    assert strict_problems(OPENAI_OK, "openai") == []
    assert strict_problems(ANTHROPIC_OK, "anthropic") == []


@pytest.mark.parametrize(
    "mutate, expect",
    [
        (lambda m: m.pop(2), "answers no preceding tool call"),  # the call is gone
        (lambda m: m.pop(3), "without results"),  # a result is gone
        (lambda m: m.insert(4, {"role": "user", "content": "x"}), "answers no preceding"),
        (lambda m: m.__setitem__(1, {"role": "robot", "content": "x"}), "unknown role"),
        (lambda m: m[4].__setitem__("tool_call_id", "a"), "answers no preceding"),
    ],
)
def test_openai_violations_are_caught(mutate, expect):
    msgs = copy.deepcopy(OPENAI_OK)
    mutate(msgs)
    probs = strict_problems(msgs, "openai")
    assert any(expect in p for p in probs), probs


@pytest.mark.parametrize(
    "mutate, expect",
    [
        (lambda m: m.pop(1), "two user turns"),
        (lambda m: m[2]["content"].reverse(), "must come first"),
        (lambda m: m[2]["content"][0].__setitem__("tool_use_id", "zz"), "answers no tool_use"),
        (lambda m: m.pop(0), "first message must be a user turn"),
        (lambda m: m[2].__setitem__("content", "no results"), "without a result"),
        (lambda m: m.insert(0, {"role": "system", "content": "s"}), "not user/assistant"),
    ],
)
def test_anthropic_violations_are_caught(mutate, expect):
    doc = copy.deepcopy(ANTHROPIC_OK)
    mutate(doc["messages"])
    probs = strict_problems(doc, "anthropic")
    assert any(expect in p for p in probs), probs
