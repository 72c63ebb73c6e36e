"""ctx-excerpt's options: the click options (``cli.excerpt``) and the ``excerpt`` MCP tool
(``mcp.schema``) are made from this table. An option is added here, once."""

from __future__ import annotations

from ctxtools import defaults
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
    RULER_OPTS,
    SECRETS,
    STANDARD_OPTS,
    STORE_OPTS,
    STRING,
    STRINGS,
    TOKENS,
    Opt,
    arg,
)

_WHOLE = ("whole", 0, defaults.MAX_COUNT)

EXCERPT: tuple[Opt, ...] = (
    Opt("files", decl="input_files", mcp=PATHS),
    Opt("files_from", decl="input_files", cli_only=FILES_FROM),
    Opt("null", decl="input_files", cli_only=FILES_FROM),
    Opt(
        "query",
        help="The task, in words, read as ctx-pack reads it.",
        decl="query_option",
        mcp=arg(STRING, "The task, in words, read as ctx-pack reads it."),
    ),
    Opt(
        "idents",
        ("--ident",),
        "A name to look for, taken as is: a definition so named ranks up (repeatable).",
        click={"multiple": True, "metavar": "NAME"},
        mcp=arg(STRINGS, "Names to look for, taken as they are.", "ident"),
    ),
    Opt(
        "ignore_case",
        help="Accepted; words always match regardless of case.",
        decl="ignore_case_option",
        mcp=arg(BOOLEAN, "Accepted; words always match regardless of case.", default=False),
    ),
    Opt(
        "window",
        ("--window",),
        "In a text without definitions (a log): lines shown around each best line.",
        type=_WHOLE,
        click={"default": defaults.EXCERPT_WINDOW, "show_default": True},
        mcp=arg(INTEGER, "In a text without definitions: lines around each best line.", **COUNT),
    ),
    Opt(
        "head",
        ("--head",),
        "First lines of every file (after a licence banner), always shown.",
        type=_WHOLE,
        click={"default": defaults.EXCERPT_HEAD, "show_default": True},
        cli_only="a file's head is the engine's to size under tokens",
    ),
    Opt(
        "max_windows",
        ("--max-windows",),
        "Windows per file (a definition, or lines of a log), the most relevant first.",
        type=_WHOLE,
        click={"default": defaults.EXCERPT_MAX_WINDOWS, "show_default": True},
        mcp=arg(INTEGER, "Windows per file, the most relevant first.", **COUNT),
    ),
    Opt(
        "tail",
        ("--tail",),
        "Last lines shown when nothing in the file matches.",
        type=_WHOLE,
        click={"default": defaults.EXCERPT_TAIL, "show_default": True},
        cli_only="a file's tail is the engine's to size under tokens",
    ),
    Opt(
        "tokens",
        help="Total budget for the whole output, in tokens of the ruler.",
        decl="tokens_option",
        mcp=arg(INTEGER, "Budget for the whole output, in tokens.", **TOKENS),
    ),
    Opt(
        "sort",
        ("--sort",),
        "File order: as given, or the best-ranked first (ctx-pack's file score).",
        type=("choice", ("given", "score")),
        click={"default": "given", "show_default": True},
        mcp=arg(STRING, "File order.", enum=["given", "score"], default="given"),
    ),
    Opt(
        "unmatched",
        ("--unmatched",),
        "Files where nothing matched: shown by their head and tail, named in a closing "
        "list, or left out (default: show for one input, name for several).",
        type=("choice", ("show", "name", "omit")),
        click={"default": None},
        cli_only="a call gets the command's default (unmatched files shown by head and tail)",
    ),
    Opt(
        "signatures",
        ("--signatures",),
        "Paths plus the definitions' signature lines only (no bodies).",
        click={"is_flag": True},
        mcp=arg(BOOLEAN, "Definitions' signature lines only.", default=False),
    ),
    Opt(
        "keep_going",
        help="Excerpt the files that can be read when some cannot (still exit 1).",
        decl="keep_going_option",
        cli_only="a call's paths are checked first: one unreadable is an error",
    ),
    Opt(
        "allow_secrets",
        ("--allow-secrets",),
        "Do not redact secrets (what is printed goes to a model!).",
        click={"is_flag": True},
        cli_only=SECRETS,
    ),
    Opt(
        "jobs",
        help="Worker processes (default: 2 for 500 files or more on a machine with several "
        "CPUs, else 1).",
        decl="jobs_option",
        cli_only=JOBS,
    ),
    Opt(
        "memory",
        help="Rank the sections of these memory files or directories against --query instead "
        "(what ctx-pack --memory would pick; repeatable).",
        decl="memory_option",
        cli_only=MEMORY,
    ),
    Opt("retrieval", decl="retrieval_options", cli_only=MEMORY),
    Opt("embed_cmd", decl="retrieval_options", cli_only=MEMORY),
    Opt("embed_timeout", decl="retrieval_options", cli_only=MEMORY),
    Opt("min_score", decl="retrieval_options", cli_only=MEMORY),
    Opt(
        "explain",
        help="Say on stderr what was shown of each file, each window's score and why, and what "
        'was left out and why (with --json: also its "explain").',
        decl="explain_option",
        cli_only=EXPLAIN,
    ),
    Opt(
        "model",
        help="Count with this model's encoding (its profile) [env CTX_MODEL].",
        decl="model_option",
        cli_only=RULER,
    ),
    *RULER_OPTS,
    *STORE_OPTS,
    Opt("as_json", decl="json_option", cli_only=JSON),
    Opt("output", decl="output_option", cli_only=OUTPUT),
    Opt("copy", decl="copy_option", cli_only=COPY),
    *STANDARD_OPTS,
)

# The excerpt tool's arguments in the order agents have seen them; a new one follows them.
MCP_ORDER = (
    "query",
    "paths",
    "ident",
    "tokens",
    "window",
    "max_windows",
    "signatures",
    "sort",
    "ignore_case",
)
