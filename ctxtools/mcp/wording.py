"""An error or a note the library words for the command line, worded for an MCP client.

The library's messages name command-line things (``--range 0-3: line numbers start at 1``,
``ctx-stash --list shows the handles of a session``); an agent calling a tool can use none
of them. ``for_tool`` names the tool's own arguments instead (``range 0-3: ...``) and
replaces the hints that point at a command with what a client can do.
"""

from __future__ import annotations

import re

# A flag as the library writes it: not inside a word, a path or a longer flag.
_FLAG = re.compile(r"(?<![\w/.-])(--[a-z][a-z0-9-]*|-[A-Za-z0-9])(?![\w-])")

# Short flags and the argument each stands for, where the tool has that argument.
_SHORT = {
    "-C": "context",
    "-i": "ignore_case",
    "-n": "number",
    "-t": "tokens",
    "-q": "query",
}

# Hints that name a command, and what a client does instead (the longest first).
_HINTS = (
    (re.compile(r"ctx-stash --list shows the handles of a session"), "resources/list lists them"),
    (
        re.compile(r"remove it with ctx-stash --rm (\S+) and stash it again"),
        r"stash it again: the stash tool with name \1",
    ),
    (re.compile(r"remove it with ctx-stash --rm (\S+)"), r"stash it again under \1"),
    (re.compile(r"remove it with ctx-stash --rm"), "stash it again under that name"),
)


def for_tool(tool: str, text: str) -> str:
    """TEXT (a message for the command line) with TOOL's argument names for its flags and a
    client's actions for its command hints; flags the tool has no argument for are left
    as they are (they describe how the server was started)."""
    from ctxtools.mcp.schema import input_schema

    for pattern, replacement in _HINTS:
        text = pattern.sub(replacement, text)
    names = set(input_schema(tool).get("properties", {}))
    if tool == "pack":
        names.add("task")

    def argument(m: re.Match) -> str:
        flag = m.group(1)
        name = flag[2:].replace("-", "_") if flag.startswith("--") else _SHORT.get(flag)
        if tool == "pack" and flag == "-q":
            name = "task"
        return name if name in names else flag

    return _FLAG.sub(argument, text)
