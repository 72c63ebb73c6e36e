"""ctx-stash's options: the click options (``cli.stash``) and its two MCP tools, ``stash``
(a text) and ``run`` (``ctx-stash -- CMD``: its own small table), are made from here. An
option is added here, once."""

from __future__ import annotations

from ctxtools import defaults
from ctxtools.options import JSON, STANDARD_OPTS, STORE_OPTS, STRING, STRINGS, Opt, arg

STORE_ADMIN = (
    "keeping the store (listing, removing, evicting) is the user's; an agent stores and reads"
)
PASS_THROUGH = "a call stores what it gives: the reply shows the card and the first lines"


def _flag(name: str, flag: str, help: str, why: str = STORE_ADMIN) -> Opt:
    return Opt(name, (flag,), help, click={"is_flag": True}, cli_only=why)


STASH: tuple[Opt, ...] = (
    Opt("text", decl="stdin", mcp=arg(STRING, "The text to store.")),
    Opt("args", decl="argument", click={"nargs": -1, "metavar": "[FILE | NAME...]"}),  # run's
    Opt(
        "name",
        ("--name",),
        "Handle name [default: first 12 hex of the SHA-256].",
        click={"default": None},
        mcp=arg(STRING, "Handle name (1-128 of A-Z a-z 0-9 . _ -) [default: SHA-256]."),
    ),
    Opt(
        "type_",
        ("--type",),
        "Payload type [default: detected].",
        type=("choice", ("text", "json", "jsonl")),
        click={"default": None},
        mcp=arg(
            STRING, "Payload type [default: detected].", "type", enum=["text", "json", "jsonl"]
        ),
    ),
    Opt(
        "threshold",
        ("--threshold",),
        "Inputs of at most this many characters pass through unchanged.",
        type=("whole", 0, defaults.MAX_COUNT),
        click={"default": defaults.THRESHOLD, "show_default": True},
        cli_only=PASS_THROUGH,
    ),
    _flag("always", "--always", "Store even inputs under the threshold.", PASS_THROUGH),
    _flag(
        "tee",
        "--tee",
        "With -- CMD: also copy the output to stderr.",
        "stderr is the terminal's; the server has no one watching",
    ),
    _flag("do_list", "--list", "List the session's handles (frecency)."),
    _flag("all_sessions", "--all-sessions", "With --list: every session."),
    _flag("do_rm", "--rm", "Remove the handles NAME... (blobs at --gc)."),
    _flag("do_gc", "--gc", "Evict over budget; drop unreferenced blobs."),
    Opt(
        "max_bytes",
        help="With --gc: keep at most this much (500M, 1G).",
        decl="max_bytes_option",
        cli_only=STORE_ADMIN,
    ),
    Opt("max_entries", help="With --gc.", decl="max_entries_option", cli_only=STORE_ADMIN),
    Opt(
        "strategy",
        help="With --gc: what goes first.",
        decl="strategy_option",
        cli_only=STORE_ADMIN,
    ),
    _flag("dry_run", "--dry-run", "With --gc: say what would go, change nothing."),
    _flag("do_path", "--path", "Print the store root and exit."),
    *STORE_OPTS,
    Opt("as_json", decl="json_option", cli_only=JSON),
    *STANDARD_OPTS,
)

RUN: tuple[Opt, ...] = (
    Opt(
        "args",
        decl=None,
        mcp=arg(STRINGS, "The argv: program and arguments.", "command", minItems=1),
    ),
    Opt("name", decl=None, mcp=arg(STRING, "Handle name [default: SHA-256].")),
)
