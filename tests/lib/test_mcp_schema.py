"""ctxtools.mcp.schema: the tools' schemas and the check of a call's arguments."""

from __future__ import annotations

import pytest

from ctxtools import defaults
from ctxtools.errors import UsageError
from ctxtools.mcp.schema import PROGS, TOOLS, check_args, input_schema


def test_every_tool_has_a_schema_a_program_and_described_arguments():
    assert set(TOOLS) == set(PROGS)
    for name in TOOLS:
        schema = input_schema(name)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema.get("required", [])) <= set(schema["properties"])
        assert all(p["description"] for p in schema["properties"].values())


def test_the_arguments_are_named_after_the_flags():
    read = TOOLS["read"]["properties"]
    assert {"range", "slice", "head", "tail", "grep", "context", "ignore_case"} <= set(read)
    assert {"jsonpath", "count", "introspect", "max_chars"} <= set(read)
    assert set(TOOLS["pack"]["properties"]) >= {
        "task",
        "paths",
        "tokens",
        "model",
        "role",
        "changed",
    }
    assert str(defaults.MAX_CHARS)[:2] in read["max_chars"]["description"]


def test_defaults_are_filled_in():
    args = check_args("read", {"ref": "x"})
    assert args["ref"] == "x" and args["unit"] == "chars" and args["context"] == 0
    assert args["head"] is None and args["count"] is False


@pytest.mark.parametrize(
    "tool, args, message",
    [
        ("read", {}, "argument 'ref' is required"),
        ("read", {"ref": None}, "argument 'ref' is required"),
        ("read", {"ref": 1}, "argument 'ref' must be a string"),
        ("read", {"ref": "x", "head": True}, "argument 'head' must be a whole number"),
        ("read", {"ref": "x", "head": -1}, "argument 'head' must be at least 0"),
        ("read", {"ref": "x", "unit": "bytes"}, "argument 'unit' must be one of chars, lines"),
        ("read", {"ref": "x", "nope": 1}, "unknown argument 'nope'"),
        ("excerpt", {"paths": "a.py"}, "argument 'paths' must be a list of strings"),
        ("excerpt", {"paths": ["a", 2]}, "argument 'paths' must be a list of strings"),
        ("run", {"command": []}, "argument 'command' must not be empty"),
        (
            "compact",
            {"transcript": 3},
            "argument 'transcript' must be an array or an object or a string",
        ),
    ],
)
def test_bad_arguments_are_one_usage_error_naming_the_argument(tool, args, message):
    with pytest.raises(UsageError) as err:
        check_args(tool, args)
    assert str(err.value).startswith(message)


def test_an_unknown_argument_says_what_the_tool_takes():
    with pytest.raises(UsageError) as err:
        check_args("stash", {"text": "t", "label": "x"})
    assert str(err.value) == "unknown argument 'label' (stash takes text, name, type)"
