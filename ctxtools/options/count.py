"""ctx-count's options and the ``count`` MCP tool (the click options are still declared in
``cli.count``; ``tests/lib/test_options.py`` keeps the two in step)."""

from __future__ import annotations

from ctxtools.options import (
    BOOLEAN,
    FILES_FROM,
    INTEGER,
    JOBS,
    JSON,
    MODEL,
    PRESENTATION,
    PROFILES,
    RULER,
    STANDARD,
    STRING,
    STRINGS,
    TOKENS,
    Opt,
    arg,
)

BUDGET = "the pack budget is ctx-pack's to use: the pack tool takes a budget, a model and a role"
GATE = "an exit status for CI and hooks; a call reads the figures"
TREE = "a tree's totals are a person's survey; repomap is an agent's view of a tree"
TOKEN_IDS = "token ids and cut texts are the ruler's internals, not what an agent asks"

COUNT: tuple[Opt, ...] = (
    Opt("text", decl="stdin", mcp=arg(STRING, "The text to count.")),
    Opt("files", decl=None, mcp=arg(STRINGS, "Files to count (under the roots).", "paths")),
    Opt("files_from", decl=None, cli_only=FILES_FROM),
    Opt("null", decl=None, cli_only=FILES_FROM),
    Opt("encoding", decl=None, cli_only=RULER),
    Opt("tokenizer", decl=None, cli_only=RULER),
    Opt("heuristic", decl=None, cli_only=RULER),
    Opt("exact", decl=None, cli_only=RULER),
    Opt("allow_special", decl=None, cli_only=RULER),
    Opt("model", decl=None, mcp=MODEL),
    Opt(
        "limit",
        decl=None,
        mcp=arg(INTEGER, "Context window in tokens (instead of the model's).", **TOKENS),
    ),
    Opt(
        "messages",
        decl=None,
        mcp=arg(
            BOOLEAN,
            "Count each input as a chat transcript (OpenAI or Anthropic messages), as "
            "the APIs count it.",
            default=False,
        ),
    ),
    Opt("fail_over", decl=None, cli_only=GATE),
    Opt("fail_above", decl=None, cli_only=GATE),
    Opt("sort", decl=None, cli_only=PRESENTATION),
    Opt(
        "keep_going",
        decl=None,
        cli_only="a call's paths are checked first: one missing is an error",
    ),
    Opt(
        "missing_ok",
        decl=None,
        cli_only="a call's paths are checked first: one missing is an error",
    ),
    Opt(
        "count_binary",
        decl=None,
        cli_only="binary files are counted by their bytes, as agents need",
    ),
    Opt("tree", decl=None, cli_only=TREE),
    Opt("depth", decl=None, cli_only=TREE),
    Opt("top", decl=None, cli_only=TREE),
    Opt("exclude", decl=None, cli_only=TREE),
    Opt("head", decl=None, cli_only=TOKEN_IDS),
    Opt("tail", decl=None, cli_only=TOKEN_IDS),
    Opt("ids", decl=None, cli_only=TOKEN_IDS),
    Opt("decode", decl=None, cli_only=TOKEN_IDS),
    Opt("jobs", decl=None, cli_only=JOBS),
    Opt("budget", decl=None, cli_only=BUDGET),
    Opt("role", decl=None, cli_only=BUDGET),
    Opt("role_shares", decl=None, cli_only=BUDGET),
    Opt("reserve_system", decl=None, cli_only=BUDGET),
    Opt("reserve_tools", decl=None, cli_only=BUDGET),
    Opt("reserve_response", decl=None, cli_only=BUDGET),
    Opt("slack_percent", decl=None, cli_only=BUDGET),
    Opt("list_profiles", decl=None, cli_only=PROFILES),
    Opt("profiles_file", decl=None, cli_only=PROFILES),
    Opt("as_json", decl=None, cli_only=JSON),
    Opt("version", decl=None, cli_only=STANDARD),
    Opt("completion", decl=None, cli_only=STANDARD),
    Opt("debug", decl=None, cli_only=STANDARD),
)
