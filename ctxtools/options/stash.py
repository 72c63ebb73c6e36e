"""ctx-stash's options and its two MCP tools, ``stash`` (a text) and ``run`` (``ctx-stash
-- CMD``). The click options are still declared in ``cli.stash``;
``tests/lib/test_options.py`` keeps the two in step."""

from __future__ import annotations

from ctxtools.options import JSON, STANDARD, STORE, STRING, STRINGS, Opt, arg

STORE_ADMIN = (
    "keeping the store (listing, removing, evicting) is the user's; an agent stores and reads"
)
PASS_THROUGH = "a call stores what it gives: the reply shows the card and the first lines"

STASH: tuple[Opt, ...] = (
    Opt("text", decl="stdin", mcp=arg(STRING, "The text to store.")),
    Opt("args", decl=None),  # the run tool's command
    Opt(
        "name",
        decl=None,
        mcp=arg(STRING, "Handle name (1-128 of A-Z a-z 0-9 . _ -) [default: SHA-256]."),
    ),
    Opt(
        "type_",
        decl=None,
        mcp=arg(
            STRING, "Payload type [default: detected].", "type", enum=["text", "json", "jsonl"]
        ),
    ),
    Opt("threshold", decl=None, cli_only=PASS_THROUGH),
    Opt("always", decl=None, cli_only=PASS_THROUGH),
    Opt("tee", decl=None, cli_only="stderr is the terminal's; the server has no one watching"),
    Opt("do_list", decl=None, cli_only=STORE_ADMIN),
    Opt("all_sessions", decl=None, cli_only=STORE_ADMIN),
    Opt("do_rm", decl=None, cli_only=STORE_ADMIN),
    Opt("do_gc", decl=None, cli_only=STORE_ADMIN),
    Opt("max_bytes", decl=None, cli_only=STORE_ADMIN),
    Opt("max_entries", decl=None, cli_only=STORE_ADMIN),
    Opt("strategy", decl=None, cli_only=STORE_ADMIN),
    Opt("dry_run", decl=None, cli_only=STORE_ADMIN),
    Opt("do_path", decl=None, cli_only=STORE_ADMIN),
    Opt("store", decl=None, cli_only=STORE),
    Opt("session", decl=None, cli_only=STORE),
    Opt("as_json", decl=None, cli_only=JSON),
    Opt("version", decl=None, cli_only=STANDARD),
    Opt("completion", decl=None, cli_only=STANDARD),
    Opt("debug", decl=None, cli_only=STANDARD),
)

RUN: tuple[Opt, ...] = (
    Opt(
        "args",
        decl=None,
        mcp=arg(STRINGS, "The argv: program and arguments.", "command", minItems=1),
    ),
    Opt("name", decl=None, mcp=arg(STRING, "Handle name [default: SHA-256].")),
)
