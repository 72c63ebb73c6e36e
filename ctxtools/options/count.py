"""ctx-count's options: the click options (``cli.count``) and the ``count`` MCP tool
(``mcp.schema``) are made from this table. An option is added here, once."""

from __future__ import annotations

from ctxtools import defaults
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
    RULER_OPTS,
    STANDARD_OPTS,
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
CHECKED = "a call's paths are checked first: one missing is an error"


def _reserve(name: str, default: int, most: int = defaults.MAX_TOKENS) -> Opt:
    return Opt(
        name.lstrip("-").replace("-", "_"),
        (name,),
        type=("whole", 0, most),
        click={"default": default, "show_default": True},
        cli_only=BUDGET,
    )


COUNT: tuple[Opt, ...] = (
    Opt("text", decl="stdin", mcp=arg(STRING, "The text to count.")),
    Opt(
        "files", decl="input_files", mcp=arg(STRINGS, "Files to count (under the roots).", "paths")
    ),
    Opt("files_from", decl="input_files", cli_only=FILES_FROM),
    Opt("null", decl="input_files", cli_only=FILES_FROM),
    *RULER_OPTS,
    Opt(
        "allow_special",
        ("--allow-special",),
        "Count special-token strings as one token.",
        click={"is_flag": True},
        cli_only=RULER,
    ),
    Opt(
        "messages",
        ("--messages",),
        "Count each input as a chat transcript, as ctx-compact and the APIs do.",
        click={"is_flag": True},
        mcp=arg(
            BOOLEAN,
            "Count each input as a chat transcript (OpenAI or Anthropic messages), as "
            "the APIs count it.",
            default=False,
        ),
    ),
    Opt("model", decl="model_option", mcp=MODEL),
    Opt(
        "limit",
        decl="limit_option",
        mcp=arg(INTEGER, "Context window in tokens (instead of the model's).", **TOKENS),
    ),
    Opt(
        "fail_over",
        ("--fail-over",),
        "Exit 3 when usage is over PCT percent of the window.",
        type=("finite", {"min": 0}),
        click={"default": None, "metavar": "PCT"},
        cli_only=GATE,
    ),
    Opt(
        "fail_above",
        ("--fail-above",),
        "Exit 3 when an input counts over N tokens (a size gate for CI and pre-commit).",
        type=("whole", 0, defaults.MAX_TOKENS),
        click={"default": None, "metavar": "N"},
        cli_only=GATE,
    ),
    Opt(
        "sort",
        ("--sort",),
        "Order of the per-file lines: heaviest first, or by name.",
        type=("choice", ("tokens", "name")),
        click={"default": None},
        cli_only=PRESENTATION,
    ),
    Opt(
        "keep_going",
        help="Count what exists when some files are missing (still exit 1).",
        decl="keep_going_option",
        cli_only=CHECKED,
    ),
    Opt(
        "missing_ok",
        ("--missing-ok",),
        "A file that does not exist is noted and skipped, not an error (optional files).",
        click={"is_flag": True},
        cli_only=CHECKED,
    ),
    Opt(
        "count_binary",
        ("--count-binary",),
        "Count binary files' tokens too (as text, U+FFFD for bad bytes).",
        click={"is_flag": True},
        cli_only="binary files are counted by their bytes, as agents need",
    ),
    Opt(
        "tree",
        ("--tree",),
        "Count the files of a directory (git-aware) as a tree of totals.",
        click={"is_flag": True},
        cli_only=TREE,
    ),
    Opt(
        "depth",
        ("--depth",),
        "With --tree: directory levels shown (deeper ones are folded into their parent).",
        type=("range", 0, defaults.MAX_COUNT),
        click={"default": defaults.TREE_DEPTH, "show_default": True},
        cli_only=TREE,
    ),
    Opt(
        "top",
        ("--top",),
        "With --tree: entries shown per directory, heaviest first (the rest summed).",
        type=("range", 1, defaults.MAX_COUNT),
        click={"default": defaults.TREE_TOP, "show_default": True},
        cli_only=TREE,
    ),
    Opt(
        "exclude",
        help="With --tree: files that match GLOB are not counted (also: a .ctxignore file at "
        "the directory, gitignore syntax); repeatable.",
        decl="exclude_option",
        cli_only=TREE,
    ),
    Opt(
        "head",
        ("--head",),
        "Print the first N tokens of the input, not its count (a character split between "
        "tokens is left out whole).",
        type=("whole", 0, defaults.MAX_TOKENS),
        click={"default": None, "metavar": "N"},
        cli_only=TOKEN_IDS,
    ),
    Opt(
        "tail",
        ("--tail",),
        "Print the last N tokens of the input, likewise.",
        type=("whole", 0, defaults.MAX_TOKENS),
        click={"default": None, "metavar": "N"},
        cli_only=TOKEN_IDS,
    ),
    Opt(
        "ids",
        ("--ids",),
        "Print the input's token ids (with --head/--tail: theirs).",
        click={"is_flag": True},
        cli_only=TOKEN_IDS,
    ),
    Opt(
        "decode",
        ("--decode",),
        "Read token ids (spaces, commas) and print their text.",
        click={"is_flag": True},
        cli_only=TOKEN_IDS,
    ),
    Opt(
        "jobs",
        help="Threads for exact counting of big inputs [default: cores, up to 4].",
        decl="jobs_option",
        cli_only=JOBS,
    ),
    Opt(
        "budget",
        ("--budget",),
        "Print the pack budget of --model/--role and exit (neither --model nor --limit: "
        "the default profile, 16,384 tokens, as for ctx-pack and ctx-compact).",
        click={"is_flag": True},
        cli_only=BUDGET,
    ),
    Opt("role", decl="role_options", cli_only=BUDGET),
    Opt("role_shares", decl="role_options", cli_only=BUDGET),
    _reserve("--reserve-system", defaults.RESERVE_SYSTEM),
    _reserve("--reserve-tools", defaults.RESERVE_TOOLS),
    _reserve("--reserve-response", defaults.RESERVE_RESPONSE),
    _reserve("--slack-percent", defaults.SLACK_PERCENT, 99),
    Opt(
        "list_profiles",
        ("--profiles",),
        "List the model profiles.",
        click={"is_flag": True},
        cli_only=PROFILES,
    ),
    Opt(
        "profiles_file",
        help="A TOML file of extra/overriding profiles and [roles] shares [env CTX_PROFILES].",
        decl="profiles_file_option",
        cli_only=PROFILES,
    ),
    Opt("as_json", decl="json_option", cli_only=JSON),
    *STANDARD_OPTS,
)

# The count tool's arguments in the order agents have seen them; a new one follows them.
MCP_ORDER = ("text", "paths", "model", "limit", "messages")
