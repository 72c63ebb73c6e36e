"""The strict transcript validator (``helpers.strict_problems``) catches what it claims to.

``strict_problems(doc, fmt)`` lists everything the providers' APIs would reject about a
transcript document (a list of messages, ``{"messages": [...]}`` or a list parsed from JSON
Lines), independently of ctxtools' own code. The other compaction tests run it on every
output; the tests here make sure it does catch what it claims to.
"""

from __future__ import annotations

import copy

import pytest
from helpers import strict_problems

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
