"""ctx-compact's options: the click options (``cli.compact``) and the ``compact`` MCP tool
(``mcp.schema``) are made from this table. An option is added here, once."""

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
    RULER_OPTS,
    STANDARD_OPTS,
    STORE_OPTS,
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


def _share(name: str, default: float, help: str) -> Opt:
    """A gate option: a share from 0 to 1."""
    return Opt(
        name.lstrip("-").replace("-", "_"),
        (name,),
        help,
        type=("finite", {"min": 0, "max": 1}),
        click={"default": default, "show_default": True},
        cli_only=SUMMARY,
    )


COMPACT: tuple[Opt, ...] = (
    *STANDARD_OPTS,
    Opt(
        "file",
        decl="argument",
        type=("path", {"allow_dash": True}),
        click={"required": False},
        mcp=arg(
            {},
            "The transcript: a JSON array of messages, an object with messages (and system), "
            "or its text (JSON or JSON Lines).",
            "transcript",
            type=["array", "object", "string"],
        ),
    ),
    Opt(
        "model",
        help="Model whose window counts [env CTX_MODEL; neither --model nor --limit: the "
        "default profile, 16,384 tokens, as for ctx-pack and ctx-count --budget].",
        decl="model_option",
        mcp=arg(STRING, "Model whose window counts."),
    ),
    Opt(
        "limit",
        help="Window in tokens (beats --model).",
        decl="limit_option",
        mcp=arg(INTEGER, "Window in tokens (beats model).", **TOKENS),
    ),
    Opt(
        "at",
        ("--at",),
        "Compact at this percent of the window (above 5, at most 100); aim 5 points lower.",
        type=("above", 5, 100),
        click={"default": defaults.COMPACT_AT, "show_default": True},
        mcp=arg(
            NUMBER,
            f"Compact at this percent of the window (above 5, at most 100) [default "
            f"{defaults.COMPACT_AT:g}].",
            exclusiveMinimum=5,
            maximum=100,
        ),
    ),
    Opt(
        "force",
        ("--force",),
        "Compact even below --at (elide every old result).",
        click={"is_flag": True},
        mcp=arg(BOOLEAN, "Compact even below at.", default=False),
    ),
    Opt(
        "keep_recent",
        ("--keep-recent",),
        "Turns at the end that are never touched.",
        type=("whole", 0, defaults.MAX_COUNT),
        click={"default": defaults.KEEP_RECENT, "show_default": True},
        mcp=arg(INTEGER, "Turns at the end never touched.", **COUNT),
    ),
    Opt(
        "keep_tokens",
        ("--keep-tokens",),
        "Also keep the newest tool results before them up to this many tokens "
        "[default: 10% of the window].",
        type=("whole", 0, defaults.MAX_TOKENS),
        click={"default": None},
        cli_only="the command's default share (10% of the window) serves a call",
    ),
    Opt(
        "fmt",
        ("--format",),
        "Transcript format.",
        type=("choice", ("auto", "openai", "anthropic")),
        click={"default": "auto", "show_default": True},
        mcp=arg(STRING, "Transcript format.", "format", enum=["auto", "openai", "anthropic"]),
    ),
    Opt(
        "keep_tools",
        ("--keep-tool",),
        "Never elide or drop this tool's results, nor its calls (repeatable).",
        type=("name",),
        click={"metavar": "NAME", "multiple": True},
        cli_only="the command's default serves a call: every tool's old results may go",
    ),
    Opt(
        "repair",
        ("--repair",),
        "Fix orphaned tool results and unanswered calls.",
        click={"is_flag": True},
        mcp=arg(BOOLEAN, "Fix orphaned tool results, unanswered calls.", default=False),
    ),
    Opt(
        "summarizer",
        ("--summarizer",),
        "Command summarising dropped messages.",
        type=("name",),
        click={"metavar": "'CMD ARGS'"},
        cli_only=SUMMARY,
    ),
    Opt(
        "summarizer_timeout",
        ("--summarizer-timeout",),
        f"Seconds the summarizer may take (at most {defaults.MAX_SUMMARIZER_TIMEOUT:g}).",
        type=("above", 0, defaults.MAX_SUMMARIZER_TIMEOUT),
        click={"default": defaults.SUMMARIZER_TIMEOUT, "show_default": True},
        cli_only=SUMMARY,
    ),
    _share(
        "--min-ratio",
        defaults.MIN_RATIO,
        "Gate: shortest summary, as a share (0 to 1) of the original's length.",
    ),
    _share(
        "--min-path-share",
        defaults.MIN_PATH_SHARE,
        "Gate: share (0 to 1) of the original's file paths a summary must keep.",
    ),
    Opt(
        "accept",
        ("--accept",),
        "Only run the gate: print CANDIDATE if it may replace ORIGINAL.",
        type=("named_path", {"allow_dash": True}),
        click={"nargs": 2, "metavar": "ORIGINAL CANDIDATE", "default": None},
        cli_only=SUMMARY,
    ),
    Opt(
        "evict",
        ("--evict",),
        "Read entries (JSON Lines), print the ids to evict.",
        click={"is_flag": True},
        cli_only=EVICTION,
    ),
    Opt(
        "strategy",
        help="With --evict: the eviction strategy.",
        decl="strategy_option",
        cli_only=EVICTION,
    ),
    Opt(
        "max_bytes",
        help="With --evict: bytes that may stay (64k, 1M).",
        decl="max_bytes_option",
        click={"metavar": "SIZE"},
        cli_only=EVICTION,
    ),
    Opt(
        "max_entries",
        help="With --evict: entries to keep.",
        decl="max_entries_option",
        cli_only=EVICTION,
    ),
    Opt(
        "as_json",
        help="Print a JSON report on stderr (stdout is the transcript; --json-report is its "
        "old name).",
        decl="json_option",
        click={"also": ("--json-report",)},
        cli_only=PRESENT,
    ),
    Opt("output", decl="output_option", cli_only=OUTPUT),
    Opt("copy", decl="copy_option", cli_only=COPY),
    Opt(
        "explain",
        help="Say on stderr what was kept, elided and dropped, each with its tokens and why "
        '(with --json: also its "explain").',
        decl="explain_option",
        cli_only=EXPLAIN,
    ),
    Opt(
        "quiet",
        ("--quiet",),
        "No summary line on stderr.",
        click={"is_flag": True},
        cli_only=PRESENT,
    ),
    # -q was --quiet's short flag; -q is --query in the toolkit's table (docs/options.md).
    # It stays, unlisted, for the scripts that type it (ctx-compact has no query to mistake
    # it for), and says so on stderr: a short flag never changes meaning silently.
    Opt("quiet_old", ("-q",), click={"is_flag": True, "hidden": True}, cli_only=PRESENT),
    *STORE_OPTS,
    *RULER_OPTS,
)

# The compact tool's arguments in the order agents have seen them; a new one follows them.
MCP_ORDER = ("transcript", "model", "limit", "at", "force", "keep_recent", "repair", "format")
