"""ctx-compact's options and the ``compact`` MCP tool (the click options are still declared
in ``cli.compact``; ``tests/lib/test_options.py`` keeps the two in step)."""

from __future__ import annotations

from ctxtools import defaults
from ctxtools.options import (
    BOOLEAN,
    COPY,
    COUNT,
    EXPLAIN,
    INTEGER,
    NUMBER,
    OUTPUT,
    RULER,
    STANDARD,
    STORE,
    STRING,
    TOKENS,
    Opt,
    arg,
)

SUMMARY = (
    "a summarizer is a program the server would run, and its gate goes with it; the reply's "
    "digest stands in"
)
EVICTION = "ctx-compact's eviction helper for scripts; an agent's store is kept by the user"
PRESENT = "the reply is {summary, notes, report, transcript} always"

COMPACT: tuple[Opt, ...] = (
    Opt(
        "file",
        decl=None,
        mcp=arg(
            {},
            "The transcript: a JSON array of messages, an object with messages (and system), "
            "or its text (JSON or JSON Lines).",
            "transcript",
            type=["array", "object", "string"],
        ),
    ),
    Opt("model", decl=None, mcp=arg(STRING, "Model whose window counts.")),
    Opt("limit", decl=None, mcp=arg(INTEGER, "Window in tokens (beats model).", **TOKENS)),
    Opt(
        "at",
        decl=None,
        mcp=arg(
            NUMBER,
            f"Compact at this percent of the window (above 5, at most 100) [default "
            f"{defaults.COMPACT_AT:g}].",
            exclusiveMinimum=5,
            maximum=100,
        ),
    ),
    Opt("force", decl=None, mcp=arg(BOOLEAN, "Compact even below at.", default=False)),
    Opt("keep_recent", decl=None, mcp=arg(INTEGER, "Turns at the end never touched.", **COUNT)),
    Opt(
        "repair",
        decl=None,
        mcp=arg(BOOLEAN, "Fix orphaned tool results, unanswered calls.", default=False),
    ),
    Opt(
        "fmt",
        decl=None,
        mcp=arg(STRING, "Transcript format.", "format", enum=["auto", "openai", "anthropic"]),
    ),
    Opt(
        "keep_tokens",
        decl=None,
        cli_only="the command's default share (10% of the window) serves a call",
    ),
    Opt(
        "keep_tools",
        decl=None,
        cli_only="the command's default serves a call: every tool's old results may go",
    ),
    Opt("summarizer", decl=None, cli_only=SUMMARY),
    Opt("summarizer_timeout", decl=None, cli_only=SUMMARY),
    Opt("min_ratio", decl=None, cli_only=SUMMARY),
    Opt("min_path_share", decl=None, cli_only=SUMMARY),
    Opt("accept", decl=None, cli_only=SUMMARY),
    Opt("evict", decl=None, cli_only=EVICTION),
    Opt("strategy", decl=None, cli_only=EVICTION),
    Opt("max_bytes", decl=None, cli_only=EVICTION),
    Opt("max_entries", decl=None, cli_only=EVICTION),
    Opt("as_json", decl=None, cli_only=PRESENT),
    Opt("explain", decl=None, cli_only=EXPLAIN),
    Opt("quiet", decl=None, cli_only=PRESENT),
    Opt("quiet_old", decl=None, cli_only=PRESENT),
    Opt("output", decl=None, cli_only=OUTPUT),
    Opt("copy", decl=None, cli_only=COPY),
    Opt("store", decl=None, cli_only=STORE),
    Opt("session", decl=None, cli_only=STORE),
    Opt("encoding", decl=None, cli_only=RULER),
    Opt("tokenizer", decl=None, cli_only=RULER),
    Opt("heuristic", decl=None, cli_only=RULER),
    Opt("exact", decl=None, cli_only=RULER),
    Opt("version", decl=None, cli_only=STANDARD),
    Opt("completion", decl=None, cli_only=STANDARD),
    Opt("debug", decl=None, cli_only=STANDARD),
)
