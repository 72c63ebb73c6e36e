"""ctx-excerpt's options and the ``excerpt`` MCP tool (the click options are still declared
in ``cli.excerpt``; ``tests/lib/test_options.py`` keeps the two in step)."""

from __future__ import annotations

from ctxtools.options import (
    BOOLEAN,
    COPY,
    COUNT,
    EXPLAIN,
    FILES_FROM,
    INTEGER,
    JOBS,
    JSON,
    MEMORY,
    OUTPUT,
    PATHS,
    RULER,
    SECRETS,
    STANDARD,
    STORE,
    STRING,
    STRINGS,
    TOKENS,
    Opt,
    arg,
)

EXCERPT: tuple[Opt, ...] = (
    Opt("query", decl=None, mcp=arg(STRING, "The task, in words, read as ctx-pack reads it.")),
    Opt("files", decl=None, mcp=PATHS),
    Opt("idents", decl=None, mcp=arg(STRINGS, "Names to look for, taken as they are.", "ident")),
    Opt("tokens", decl=None, mcp=arg(INTEGER, "Budget for the whole output, in tokens.", **TOKENS)),
    Opt(
        "window",
        decl=None,
        mcp=arg(INTEGER, "In a text without definitions: lines around each best line.", **COUNT),
    ),
    Opt(
        "max_windows",
        decl=None,
        mcp=arg(INTEGER, "Windows per file, the most relevant first.", **COUNT),
    ),
    Opt(
        "signatures",
        decl=None,
        mcp=arg(BOOLEAN, "Definitions' signature lines only.", default=False),
    ),
    Opt(
        "sort", decl=None, mcp=arg(STRING, "File order.", enum=["given", "score"], default="given")
    ),
    Opt(
        "ignore_case",
        decl=None,
        mcp=arg(BOOLEAN, "Accepted; words always match regardless of case.", default=False),
    ),
    Opt("files_from", decl=None, cli_only=FILES_FROM),
    Opt("null", decl=None, cli_only=FILES_FROM),
    Opt("head", decl=None, cli_only="a file's head is the engine's to size under tokens"),
    Opt("tail", decl=None, cli_only="a file's tail is the engine's to size under tokens"),
    Opt(
        "unmatched",
        decl=None,
        cli_only="a call gets the command's default (unmatched files shown by head and tail)",
    ),
    Opt(
        "keep_going",
        decl=None,
        cli_only="a call's paths are checked first: one unreadable is an error",
    ),
    Opt("allow_secrets", decl=None, cli_only=SECRETS),
    Opt("jobs", decl=None, cli_only=JOBS),
    Opt("memory", decl=None, cli_only=MEMORY),
    Opt("retrieval", decl=None, cli_only=MEMORY),
    Opt("embed_cmd", decl=None, cli_only=MEMORY),
    Opt("embed_timeout", decl=None, cli_only=MEMORY),
    Opt("min_score", decl=None, cli_only=MEMORY),
    Opt("explain", decl=None, cli_only=EXPLAIN),
    Opt("model", decl=None, cli_only=RULER),
    Opt("encoding", decl=None, cli_only=RULER),
    Opt("tokenizer", decl=None, cli_only=RULER),
    Opt("heuristic", decl=None, cli_only=RULER),
    Opt("exact", decl=None, cli_only=RULER),
    Opt("store", decl=None, cli_only=STORE),
    Opt("session", decl=None, cli_only=STORE),
    Opt("as_json", decl=None, cli_only=JSON),
    Opt("output", decl=None, cli_only=OUTPUT),
    Opt("copy", decl=None, cli_only=COPY),
    Opt("version", decl=None, cli_only=STANDARD),
    Opt("completion", decl=None, cli_only=STANDARD),
    Opt("debug", decl=None, cli_only=STANDARD),
)
