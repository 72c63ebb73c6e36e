"""ctx-mcp: the toolkit as an MCP server over stdio (the extra ``ctxtools[mcp]``)."""

from __future__ import annotations

import sys

import click

from ctxtools import defaults
from ctxtools.cli.decorators import (
    CONTEXT_SETTINGS,
    model_option,
    path_type,
    standard_options,
    store_options,
    whole,
)
from ctxtools.cli.entry import make_main


@click.command(name="ctx-mcp", context_settings=CONTEXT_SETTINGS)
@click.option(
    "--root",
    "roots",
    multiple=True,
    type=path_type(file_okay=False),
    metavar="DIR",
    help="A directory the tools may read (repeatable) [default: the client's roots, else "
    "the working directory].",
)
@store_options
@model_option("Default model for count, pack and compact [env CTX_MODEL].")
@click.option(
    "--allow-run", is_flag=True, help="Offer the run tool: commands the model names are run."
)
@click.option(
    "--inline-max",
    type=whole(1),
    default=defaults.THRESHOLD,
    show_default=True,
    help="Results longer than this many characters are stored and paged.",
)
@standard_options
def cli(roots: tuple[str, ...], store, session, model, allow_run, inline_max) -> int:
    """Serve the ctxtools library to agents over the Model Context Protocol (stdio).

    Agents (Claude Code, Cursor, Codex CLI and other MCP clients) start ctx-mcp, which serves the
    filters as tools (count, stash, read, excerpt, repomap, pack, compact; run only with
    --allow-run) over stdin and stdout. A long result is stored and comes back as its card,
    its first lines and the read call for the next part. Files are read only under the
    roots (--root, else the client's roots, else the working directory).

    Exit status: 0 after EOF or SIGTERM; 130 after Ctrl-C (SIGINT); 1 the mcp package is
    missing, the store cannot be used, stdin is closed, or stdout is closed or fails (a
    client that went away: quietly); 2 usage error (a --root that is not a directory).

    \b
    Examples:
      claude mcp add --transport stdio ctxtools -- ctx-mcp --root "$PWD"
      ctx-mcp --root ~/src/app --model gpt-4o --session app
      npx @modelcontextprotocol/inspector --cli ctx-mcp --method tools/list

    The manual, man ctx-mcp, has the details.

    \f

    An MCP client (Claude Code, Cursor, Codex CLI, ...) starts ctx-mcp and talks JSON-RPC
    on its stdin and stdout; nothing else is ever written to stdout, and logs go to
    stderr. The tools are the filters, with arguments named after their flags:
    count {text | paths, model, limit, messages}, stash {text, name, type},
    read {ref, range | slice | head | tail | grep (+ context) | jsonpath | count |
    introspect, max_chars}, excerpt {query, paths, tokens, ...}, repomap {path, tokens,
    query, focus}, pack {task, paths, tokens, model, role, changed, ...} and
    compact {transcript, model | limit, ...}; with --allow-run also run {command, name}
    (ctx-stash -- CMD: a model gets no shell unless you say so).

    A tool's result is kept as ctx-stash keeps a big output: one longer than --inline-max
    characters (1,000) is stored as a handle in the store (--store, --session) and comes
    back as its card, its first lines and the exact read call for the next part, so a
    40,000-token pack costs the agent's window a few hundred tokens until it asks for
    more. Handles are also resources, ctx://SESSION/NAME (a query such as
    ?range=120-180 or ?grep=FAILED&context=3 picks a projection).

    Files are read only under the roots: the --root directories, else the roots the
    client announces, else the working directory. A path, symlink or @-mention leading
    out of them is an error naming it. Every error is a tool result marked as an error,
    with the line the command would print (ctx-read: error: stale handle ...), naming the
    tool's arguments where the command names its flags (range 0-3, not --range 0-3); the
    server never stops on bad input. It ends on EOF or SIGTERM, stopping the commands run
    started, with status 0; when its stdout refuses a write, with status 1: quietly when
    the client went away (a closed pipe), else with the one line every command prints
    (cannot write to standard output: No space left on device).

    Needs the mcp package: pip install '.[mcp]' in a clone of ctxtools (or the command
    ctx-mcp prints when it is missing, which installs it beside ctx-mcp).
    """
    from ctxtools.errors import InputError

    try:
        from ctxtools.mcp.server import serve
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith(("mcp", "anyio", "pydantic")):
            raise
        raise InputError("the MCP server needs the mcp package", hint=_install_hint()) from None
    from ctxtools.cli.stdio import stdin_closed

    if stdin_closed():  # (the SDK would read /dev/null: an EOF, served with status 0, unsaid)
        raise InputError("standard input is closed", hint="an MCP client writes its requests there")
    sys.stdout.writelines([])  # a closed stdout: its one line now (stdio.guard), not served to
    _log_to_stderr()
    from ctxtools.mcp.wire import ClientGone

    try:
        serve(
            list(roots),
            store=store,
            session=session,
            model=model,
            allow_run=allow_run,
            inline_max=inline_max,
            streams=_streams(),
        )
    except ClientGone as gone:
        err = gone.error
        if isinstance(err, BrokenPipeError):  # the client went away: the quiet exit, 1
            raise BrokenPipeError(err.errno, err.strerror) from None
        from ctxtools.cli.stdio import write_failed

        raise write_failed(err) from None
    return 0


def _log_to_stderr() -> None:
    """The server's and the SDK's log records, one line each on stderr (never stdout)."""
    import logging

    from ctxtools.cli.entry import debug_enabled

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("ctx-mcp: %(levelname)s: %(message)s"))
    logging.basicConfig(
        level=logging.DEBUG if debug_enabled() else logging.WARNING, handlers=[handler]
    )
    logging.getLogger("ctx-mcp").setLevel(logging.INFO)


def _streams() -> dict:
    """stdin and stdout as the SDK's transport takes them when they are not real files
    (an embedding harness); empty when they are (the SDK then claims fds 0 and 1)."""
    try:
        sys.stdin.fileno()
        sys.stdout.fileno()
        return {}
    except (AttributeError, OSError, ValueError):
        import anyio

        return {"stdin": anyio.wrap_file(sys.stdin), "stdout": anyio.wrap_file(sys.stdout)}


main = make_main(cli, "ctx-mcp")


def _install_hint() -> str:
    """The command that installs the mcp extra's requirement into the interpreter ctx-mcp
    runs on, with the version range the package declares."""
    import shlex
    from importlib import metadata

    spec = "mcp"
    try:
        for req in metadata.requires("ctxtools") or ():
            name, _, marker = req.partition(";")
            if name.strip().startswith("mcp") and "extra" in marker and '"mcp"' in marker:
                spec = name.strip().replace(" ", "")
                break
    except metadata.PackageNotFoundError:
        pass
    return f"install it: {shlex.quote(sys.executable)} -m pip install {shlex.quote(spec)}"
