"""The MCP server: the SDK's low-level ``Server`` over stdio, serving the tools and the
handles as resources.

* tools/list: the tools of ``schema.TOOLS`` (``run`` only with ``allow_run``), each with
  its description and JSON schema.
* tools/call: the arguments checked, the roots settled (``--root``, else the client's MCP
  roots, else the working directory the server started in), the tool run in a worker
  thread (at most ``WORKERS`` at once; the event loop keeps serving), its result put
  through ``results.deliver``. Every error -- bad arguments, an unknown tool, a path outside
  the roots, a stale handle, a budget below the floor -- is a result with ``isError`` and
  the one line the command prints (``ctx-read: error: stale handle …``); an unexpected
  exception is logged on stderr with its traceback and answered the same way. The server
  never dies on a call.
* resources: the session's handles, ``ctx://SESSION/NAME`` (``resources``).
* every line of stdin gets an answer (``wire``: a parse error, an invalid request), and
  stdout carries the protocol only (fd 1 points at stderr while serving, so a child's
  stray output cannot corrupt it); logs go to stderr. EOF on stdin or SIGTERM
  ends the server: the commands ``run`` started are stopped (their process groups), and
  it exits 0. A stdout that refuses a write ends it too: ``serve`` raises
  ``wire.ClientGone`` (the task groups' exception group unwrapped), which ctx-mcp ends
  as every command ends on a failing stdout.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import threading
import warnings
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from ctxtools import __version__
from ctxtools.errors import CtxError, UsageError
from ctxtools.mcp import code, resources, schema, tools, wire
from ctxtools.mcp.env import Children, Env
from ctxtools.mcp.results import deliver, redacted
from ctxtools.mcp.roots import Roots
from ctxtools.mcp.wording import for_tool

log = logging.getLogger("ctx-mcp")
WORKERS = 4  # tool calls running at once (each in a thread)
EXIT_WAIT = 3.0  # seconds the server, ending, waits for its calls' threads to come back
HANDLERS = {**tools.HANDLERS, **code.HANDLERS}
INSTRUCTIONS = (
    "ctxtools: token counts, a handle store and budgeted context for code. Big results "
    "come back as a handle card plus their first lines and the exact read call for the "
    "next part: page with read (range, grep, jsonpath) instead of asking for everything."
)


class RootsSource:
    """The roots of a call: EXPLICIT (--root) when given; else the client's roots (asked
    once, again after notifications/roots/list_changed); else the starting directory."""

    def __init__(self, explicit: Roots | None, cwd: str):
        self.explicit = explicit
        self.fallback = Roots([cwd], "the working directory")
        self.cached: Roots | None = None

    def invalidate(self) -> None:
        self.cached = None

    async def get(self, ctx: ServerRequestContext) -> Roots:
        if self.explicit is not None:
            return self.explicit
        if self.cached is not None:
            return self.cached
        caps = ctx.session.client_capabilities
        if caps is None or caps.roots is None:
            return self.fallback
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                listed = await ctx.session.list_roots()
        except Exception as exc:  # a client that cannot answer: the fallback, said once
            log.warning(
                "the client's roots could not be had (%s); using %s", exc, self.fallback.primary
            )
            self.cached = self.fallback
            return self.fallback
        dirs = [unquote(urlsplit(str(r.uri)).path) for r in listed.roots]
        dirs = [d for d in dirs if d and os.path.isdir(d)]
        self.cached = Roots(dirs, "the client's roots") if dirs else self.fallback
        return self.cached


def tool_list(allow_run: bool) -> list[types.Tool]:
    return [
        types.Tool(
            name=name, description=spec["description"], input_schema=schema.input_schema(name)
        )
        for name, spec in schema.TOOLS.items()
        if name != "run" or allow_run
    ]


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _error(prog: str, exc: BaseException | str) -> types.CallToolResult:
    return types.CallToolResult(content=[_text(f"{prog}: error: {exc}")], is_error=True)


class App:
    """One server: its Env, roots, and the calls under way."""

    def __init__(self, env: Env, roots: RootsSource):
        self.env = env
        self.roots = roots
        self.limiter = anyio.CapacityLimiter(WORKERS)
        self.calls: set[Children] = set()
        self._busy = 0  # tool calls running in their threads (a cancelled one runs on)
        self._idle = threading.Condition()

    def _run_tool(self, env: Env, name: str, args: dict):
        with self._idle:
            self._busy += 1
        try:
            reply = redacted(HANDLERS[name](env, args))  # every byte a model sees
            return deliver(env.store, env.session, name, reply, env.inline_max)
        finally:
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()

    def wait_calls(self, timeout: float = EXIT_WAIT) -> bool:
        """Wait up to TIMEOUT seconds for the tool calls still in their threads: a command
        a call started while the server was stopping them is stopped by that call
        (``Children.add``), which needs the process to live that long. True when none is
        left."""
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)

    async def call_tool(self, ctx: ServerRequestContext, params: types.CallToolRequestParams):
        name = params.name
        if name not in HANDLERS or (name == "run" and not self.env.allow_run):
            known = ", ".join(t.name for t in tool_list(self.env.allow_run))
            return _error("ctx-mcp", f"unknown tool {name!r} (the tools: {known})")
        prog = schema.PROGS[name]
        children = Children()
        self.calls.add(children)
        try:
            args = schema.check_args(name, params.arguments)
            env = self.env.with_roots(await self.roots.get(ctx))
            env.children = children
            call = functools.partial(self._run_tool, env, name, args)
            done = await anyio.to_thread.run_sync(
                call, limiter=self.limiter, abandon_on_cancel=True
            )
        except CtxError as exc:
            return _error(prog, for_tool(name, str(exc)))
        except anyio.get_cancelled_exc_class():
            children.stop_all()
            raise
        except Exception as exc:
            log.exception("tool %s failed", name)
            return _error(
                prog, f"internal error ({type(exc).__name__}: {exc}); see the server's stderr"
            )
        finally:
            self.calls.discard(children)
        content = [_text(done.text)]
        if done.notes:
            notes = (for_tool(name, n) for n in done.notes)
            content.append(_text("\n".join(f"{prog}: {n}" for n in notes)))
        return types.CallToolResult(content=content, is_error=False)

    async def list_tools(self, ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list(self.env.allow_run))

    async def list_resources(self, ctx, params) -> types.ListResourcesResult:
        try:
            found = await anyio.to_thread.run_sync(
                resources.listing, self.env, limiter=self.limiter
            )
        except CtxError as exc:
            raise MCPError(types.INTERNAL_ERROR, f"ctx-stash: error: {exc}") from None
        return types.ListResourcesResult(resources=[types.Resource(**r) for r in found])

    async def list_templates(self, ctx, params) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template=resources.TEMPLATE,
            name="handle",
            description="A stored handle, read as the read tool reads it; add ?range=X-Y, "
            "?grep=RE&context=N, ?jsonpath=EXPR ... for a projection.",
            mime_type="text/plain",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(self, ctx, params: types.ReadResourceRequestParams):
        uri = str(params.uri)
        try:
            args = schema.check_args("read", resources.read_args(uri))
            call = functools.partial(tools.read, self.env, args)
            reply = redacted(await anyio.to_thread.run_sync(call, limiter=self.limiter))
        except CtxError as exc:
            raise MCPError(
                types.INVALID_PARAMS, f"ctx-read: error: {for_tool('read', str(exc))}"
            ) from None
        content = types.TextResourceContents(
            uri=uri, text=reply.text, mime_type=resources.mime_of(self.env, args)
        )
        return types.ReadResourceResult(contents=[content])

    async def roots_changed(self, ctx, params) -> None:
        self.roots.invalidate()

    def stop_children(self) -> int:
        return sum(c.stop_all() for c in list(self.calls))


def build(app: App) -> Server:
    server = Server(
        "ctxtools",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=app.list_tools,
        on_call_tool=app.call_tool,
        on_list_resources=app.list_resources,
        on_list_resource_templates=app.list_templates,
        on_read_resource=app.read_resource,
    )
    server.add_notification_handler(
        "notifications/roots/list_changed", types.NotificationParams, app.roots_changed
    )
    return server


async def _serve(app: App, streams: dict) -> None:
    server = build(app)
    async with anyio.create_task_group() as tg:

        async def on_signals() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP, signal.SIGINT) as sigs:
                async for signum in sigs:
                    _shutdown(app, signal.Signals(signum).name)

        tg.start_soon(on_signals)
        own = contextlib.nullcontext((streams.get("stdin"), streams.get("stdout")))
        try:
            with own if streams else wire.private_stdio() as (stdin, stdout):
                writer = wire.LockedWriter(stdout)
                lines = wire.JudgedLines(stdin, writer)
                async with stdio_server(stdin=lines, stdout=writer) as (read_stream, write_stream):
                    options = server.create_initialization_options()
                    await server.run(read_stream, write_stream, options)
        finally:
            stopped = app.stop_children()
            if stopped:
                log.info("stopped %d running command(s)", stopped)
            app.wait_calls()
            tg.cancel_scope.cancel()


def _shutdown(app: App, why: str) -> None:
    """Stop the commands under way and end the process now: status 130 after SIGINT (Ctrl-C,
    as every ctx command), else 0 (SIGTERM, SIGHUP: a client stopping its server). Not a
    cancellation:
    the transport's reader thread may sit in a read of stdin that nothing can interrupt.
    What a call was writing to the store is left as a temp file at worst (ctx-stash --gc
    sweeps those); no handle is half-written."""
    stopped = app.stop_children()
    app.wait_calls()
    log.info("got %s: stopped %d running command(s); exiting", why, stopped)
    logging.shutdown()
    os._exit(130 if why == "SIGINT" else 0)


def serve(
    roots: list[str],
    *,
    store: str | None,
    session: str,
    model: str | None,
    allow_run: bool,
    inline_max: int,
    streams: dict[str, Any] | None = None,
) -> None:
    """Serve on stdin/stdout (STREAMS: the SDK's ``stdin``/``stdout`` async files instead)
    until EOF or SIGTERM. UsageError for roots that are not directories."""
    for r in roots:
        if not os.path.isdir(r):
            raise UsageError(f"--root {r}: not a directory")
    explicit = Roots(roots, "--root") if roots else None
    cwd = os.getcwd()
    env = Env.make(
        store,
        session,
        explicit or Roots([cwd], "the working directory"),
        model=model,
        inline_max=inline_max,
        allow_run=allow_run,
    )
    app = App(env, RootsSource(explicit, cwd))
    try:
        anyio.run(_serve, app, streams or {})
    except BaseException as exc:
        gone = _client_gone(exc)
        if gone is None:
            raise
        raise wire.ClientGone(gone) from None  # (the command's layer says it: cli.mcp)


def _client_gone(exc: BaseException) -> OSError | None:
    """The write error when EXC (the task groups' exception group) is stdout failing and
    nothing else; None when it is not."""
    if isinstance(exc, wire.ClientGone):
        return exc.error
    if not isinstance(exc, BaseExceptionGroup):
        return None
    found = [_client_gone(e) for e in exc.exceptions]
    return found[0] if found and all(found) else None
