"""ctx-read's options: the click options (``cli.read``) and the ``read`` MCP tool
(``mcp.schema``) are made from this table. An option is added here, once."""

from __future__ import annotations

from ctxtools import defaults
from ctxtools.options import (
    BOOLEAN,
    COPY,
    COUNT,
    INTEGER,
    JSON,
    OUTPUT,
    RULER_OPTS,
    STANDARD_OPTS,
    STORE_OPTS,
    STRING,
    Opt,
    arg,
)

_N = ("whole", 0, defaults.MAX_COUNT)

READ: tuple[Opt, ...] = (
    Opt(
        "ref",
        decl="argument",
        click={"required": False, "metavar": "[REF]"},
        mcp=arg(STRING, "[ctx:][SESSION/]NAME[@SHA_PREFIX], or a whole handle card."),
    ),
    Opt(
        "slice",
        ("--slice",),
        "Zero-based half-open slice.",
        click={"metavar": "A:B"},
        mcp=arg(STRING, "A:B, zero-based, half-open, negatives from the end."),
    ),
    Opt(
        "unit",
        ("--unit",),
        "Unit of --slice.",
        type=("choice", ("chars", "lines")),
        click={"default": "chars", "show_default": True},
        mcp=arg(STRING, "Unit of slice.", enum=["chars", "lines"], default="chars"),
    ),
    Opt(
        "range",
        ("--range",),
        "Lines X..Y, 1-based, closed; X- to end.",
        click={"metavar": "X-Y"},
        mcp=arg(STRING, "Lines X-Y, 1-based, closed; X- to the end; with grep, its scope."),
    ),
    Opt(
        "head",
        ("--head",),
        "The first N lines.",
        type=_N,
        click={"metavar": "N"},
        mcp=arg(INTEGER, "The first N lines.", **COUNT),
    ),
    Opt(
        "tail",
        ("--tail",),
        "The last N lines.",
        type=_N,
        click={"metavar": "N"},
        mcp=arg(INTEGER, "The last N lines.", **COUNT),
    ),
    Opt(
        "grep",
        ("--grep",),
        "Lines matching REGEX, with line numbers.",
        click={"metavar": "REGEX"},
        mcp=arg(STRING, "Lines matching this regex (RE2), with their line numbers."),
    ),
    Opt(
        "context",
        ("-C", "--context"),
        "--grep context.",
        type=_N,
        click={"default": 0, "metavar": "N"},
        mcp=arg(INTEGER, "Lines of context around each grep match.", default=0, **COUNT),
    ),
    Opt(
        "ignore_case",
        help="--grep ignoring case.",
        decl="ignore_case_option",
        mcp=arg(BOOLEAN, "grep ignoring case.", default=False),
    ),
    Opt(
        "count",
        ("--count",),
        "chars, lines, bytes, tokens (JSON).",
        click={"is_flag": True},
        mcp=arg(BOOLEAN, "chars, lines, bytes and tokens (JSON).", default=False),
    ),
    Opt(
        "jsonpath",
        ("--jsonpath",),
        "RFC 9535 JSONPath: a JSON array of matches.",
        click={"metavar": "EXPR"},
        mcp=arg(STRING, "RFC 9535 JSONPath: a JSON array of the matches."),
    ),
    Opt(
        "paths",
        ("--paths",),
        "--jsonpath: the matches' normalized paths.",
        click={"is_flag": True},
        mcp=arg(BOOLEAN, "jsonpath: the matches' normalized paths.", default=False),
    ),
    Opt(
        "dialect",
        ("--dialect",),
        "--jsonpath engine: RFC 9535, or jsonpath-ng's extended syntax.",
        type=("choice", ("rfc9535", "ng")),
        click={"default": "rfc9535", "show_default": True},
        cli_only="jsonpath-ng's extended syntax is a migration aid; a call speaks RFC 9535",
    ),
    Opt(
        "skip",
        ("--skip",),
        "--jsonpath: skip N matches.",
        type=_N,
        click={"default": 0},
        mcp=arg(INTEGER, "jsonpath: skip N matches.", default=0, **COUNT),
    ),
    Opt(
        "introspect",
        ("--introspect",),
        "What this handle supports, with examples.",
        click={"is_flag": True},
        mcp=arg(BOOLEAN, "What this handle supports, with examples.", default=False),
    ),
    Opt(
        "number",
        ("-n", "--number"),
        "Prefix line numbers to line projections.",
        click={"is_flag": True},
        mcp=arg(BOOLEAN, "Prefix line numbers to line projections.", default=False),
    ),
    Opt(
        "max_chars",
        ("--max-chars",),
        f"Cap on the output [default {defaults.MAX_CHARS}; at most {defaults.MAX_CHARS_CEILING}].",
        type=("whole", 1, defaults.MAX_COUNT),
        click={"default": None},
        mcp=arg(
            INTEGER,
            f"Cap on the output [default {defaults.MAX_CHARS:,}; at most "
            f"{defaults.MAX_CHARS_CEILING:,}].",
            minimum=1,
            maximum=defaults.MAX_COUNT,
        ),
    ),
    Opt(
        "verify",
        ("--verify",),
        "Re-hash the payload with SHA-256 before reading.",
        click={"is_flag": True},
        mcp=arg(BOOLEAN, "Re-hash the payload with SHA-256 first.", default=False),
    ),
    Opt(
        "redact",
        ("--redact",),
        "Replace secrets in what is shown (for a model to read).",
        click={"is_flag": True},
        cli_only="every reply is redacted already (results.redacted)",
    ),
    *STORE_OPTS,
    *RULER_OPTS,
    Opt(
        "as_json",
        help='One JSON document: {"ref", "projection", "text", "next" (the line saying how to '
        'go on, or null), "notes"} (--count and --introspect are JSON already).',
        decl="json_option",
        cli_only=JSON,
    ),
    Opt("output", decl="output_option", cli_only=OUTPUT),
    Opt("copy", decl="copy_option", cli_only=COPY),
    *STANDARD_OPTS,
)

# The read tool's arguments in the order agents have seen them; a new one follows them.
MCP_ORDER = (
    "ref",
    "range",
    "slice",
    "unit",
    "head",
    "tail",
    "grep",
    "context",
    "ignore_case",
    "jsonpath",
    "paths",
    "skip",
    "count",
    "introspect",
    "number",
    "max_chars",
    "verify",
)
