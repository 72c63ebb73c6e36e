"""ctx-repomap's options: the click options (``cli.repomap``) and the ``repomap`` MCP tool
(``mcp.schema``) are made from this table. An option is added here, once."""

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
    RULER_OPTS,
    SECRETS,
    STANDARD_OPTS,
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
        decl="argument",
        type=("path", {}),
        click={"required": False, "default": "."},
        mcp=arg(STRING, "The directory to map [default: the first root].", "path"),
    ),
    Opt(
        "tokens",
        ("-t", "--tokens"),
        "Budget: the map is never longer than this many tokens (minimum 50).",
        type=("whole", 50, defaults.MAX_TOKENS),
        click={"default": defaults.MAP_TOKENS, "show_default": True},
        mcp=arg(INTEGER, f"Budget [default {defaults.MAP_TOKENS:,}; at least 50].", **TOKENS),
    ),
    Opt(
        "focus",
        ("--focus",),
        "Rank toward this file or directory (repeatable).",
        type=("name",),
        click={"multiple": True, "metavar": "PATH"},
        mcp=arg(STRINGS, "Rank toward these files or directories."),
    ),
    Opt(
        "query",
        help="Rank toward files and symbols it names.",
        decl="query_option",
        mcp=arg(STRING, "Rank toward what this text is about."),
    ),
    Opt("as_json", decl="json_option", cli_only=JSON),
    Opt(
        "no_cache",
        ("--no-cache",),
        "Scan every file; neither read nor write the cache.",
        click={"is_flag": True},
        cli_only=LIMITS,
    ),
    Opt(
        "max_files",
        ("--max-files",),
        "Map at most this many files (shallowest paths first).",
        type=("whole", 1, defaults.MAX_COUNT),
        click={"default": defaults.MAP_MAX_FILES, "show_default": True},
        cli_only=LIMITS,
    ),
    Opt(
        "max_file_size",
        ("--max-file-size",),
        "Skip files larger than this (bytes, or with K/M).",
        type=("size", 1),
        click={"default": defaults.MAP_MAX_FILE_SIZE, "show_default": True},
        cli_only=LIMITS,
    ),
    Opt(
        "exclude",
        help="Leave files that match GLOB off the map (also: a .ctxignore file at DIRECTORY, "
        "gitignore syntax); repeatable.",
        decl="exclude_option",
        cli_only="the root's .ctxignore keeps files off the server's map",
    ),
    Opt(
        "explain",
        help="Say on stderr which files and symbols were shown, with their rank or score and "
        'why, and what was left out and why (with --json: also its "explain").',
        decl="explain_option",
        cli_only=EXPLAIN,
    ),
    Opt(
        "allow_secrets",
        ("--allow-secrets",),
        "Do not redact secrets (what is printed goes to a model!).",
        click={"is_flag": True},
        cli_only=SECRETS,
    ),
    Opt(
        "store",
        help="Store root, for the scan cache [env CTX_STORE].",
        decl="store_option",
        click={"cache_only": True},
        cli_only="the server keeps its map cache in its own store",
    ),
    Opt("files_from", decl="files_from_options", cli_only=FILES_FROM),
    Opt("null", decl="files_from_options", cli_only=FILES_FROM),
    Opt(
        "model",
        help="Count with this model's encoding (its profile) [env CTX_MODEL].",
        decl="model_option",
        cli_only=RULER,
    ),
    *RULER_OPTS,
    Opt("output", decl="output_option", cli_only=OUTPUT),
    Opt("copy", decl="copy_option", cli_only=COPY),
    *STANDARD_OPTS,
)

# The repomap tool's arguments in the order agents have seen them; a new one follows them.
MCP_ORDER = ("path", "tokens", "query", "focus")
