"""ctx-repomap's options and the ``repomap`` MCP tool (the click options are still declared
in ``cli.repomap``; ``tests/lib/test_options.py`` keeps the two in step)."""

from __future__ import annotations

from ctxtools import defaults
from ctxtools.options import (
    COPY,
    EXPLAIN,
    FILES_FROM,
    INTEGER,
    JSON,
    OUTPUT,
    RULER,
    SECRETS,
    STANDARD,
    STRING,
    STRINGS,
    TOKENS,
    Opt,
    arg,
)

LIMITS = "the server maps with the command's defaults and its cache"

REPOMAP: tuple[Opt, ...] = (
    Opt(
        "directory",
        decl=None,
        mcp=arg(STRING, "The directory to map [default: the first root].", "path"),
    ),
    Opt(
        "tokens",
        decl=None,
        mcp=arg(INTEGER, f"Budget [default {defaults.MAP_TOKENS:,}; at least 50].", **TOKENS),
    ),
    Opt("query", decl=None, mcp=arg(STRING, "Rank toward what this text is about.")),
    Opt("focus", decl=None, mcp=arg(STRINGS, "Rank toward these files or directories.")),
    Opt("no_cache", decl=None, cli_only=LIMITS),
    Opt("max_files", decl=None, cli_only=LIMITS),
    Opt("max_file_size", decl=None, cli_only=LIMITS),
    Opt("exclude", decl=None, cli_only="the root's .ctxignore keeps files off the server's map"),
    Opt("explain", decl=None, cli_only=EXPLAIN),
    Opt("allow_secrets", decl=None, cli_only=SECRETS),
    Opt("files_from", decl=None, cli_only=FILES_FROM),
    Opt("null", decl=None, cli_only=FILES_FROM),
    Opt("model", decl=None, cli_only=RULER),
    Opt("encoding", decl=None, cli_only=RULER),
    Opt("tokenizer", decl=None, cli_only=RULER),
    Opt("heuristic", decl=None, cli_only=RULER),
    Opt("exact", decl=None, cli_only=RULER),
    Opt("store", decl=None, cli_only="the server keeps its map cache in its own store"),
    Opt("as_json", decl=None, cli_only=JSON),
    Opt("output", decl=None, cli_only=OUTPUT),
    Opt("copy", decl=None, cli_only=COPY),
    Opt("version", decl=None, cli_only=STANDARD),
    Opt("completion", decl=None, cli_only=STANDARD),
    Opt("debug", decl=None, cli_only=STANDARD),
)
