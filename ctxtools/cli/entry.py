"""The entry point every ctx-* command shares: ``make_main``.

A command module defines a click command ``cli`` and exposes ``main = make_main(cli, NAME)``.
``make_main`` is the one place where library errors become ``ctx-NAME: error: …`` on stderr
with the error's exit status (a relative path met in a working directory that was removed
too: status 1, as for a missing input), where a closed stdout pipe (``| head -1``) ends the
command quietly with status 1 (as click itself does on EPIPE: the output was not all
delivered), and where ``--debug`` / ``CTX_DEBUG=1`` lets a traceback through (``set_debug``,
the callback of ``decorators.standard_options``'s ``--debug``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import click

from ctxtools.cli import (
    Interrupted,
    invoke_interruptible,
    say_interrupted,
    stdio,
    take_over_interrupts,
)
from ctxtools.errors import CtxError

_debug = False


def set_debug(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    global _debug
    if value:
        _debug = True
    return value


def debug_enabled() -> bool:
    return _debug or os.environ.get("CTX_DEBUG", "") not in ("", "0")


def _quiet_broken_pipe() -> None:
    # Python flushes stdout again at exit; point it at /dev/null so that flush cannot fail.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def click_error_line(name: str, exc: click.ClickException) -> str:
    """Click's own errors (a bad value, a missing argument, an unknown option) as the
    toolkit's one line: ``ctx-NAME: error: what (see ctx-NAME --help)``."""
    from ctxtools.errors import error_line

    hint = None
    if isinstance(exc, click.exceptions.NoSuchOption):
        message = exc.message
        if exc.possibilities:
            hint = "did you mean " + " or ".join(sorted(exc.possibilities))
    else:
        message = exc.format_message()
    message = " ".join(message.split()).rstrip(".")
    if message[:1].isupper() and message[1:2].islower():
        message = message[0].lower() + message[1:]
    return error_line(name, message, hint, usage=isinstance(exc, click.UsageError))


def _cwd_exists() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return False
    return True


def _cwd_gone(name: str) -> None:
    """A relative path met a working directory that was removed (a checkout deleted and
    made again under the shell): one line and status 1, as for any missing input."""
    from ctxtools.errors import NotFoundError

    err = NotFoundError(
        "the current directory no longer exists", hint="cd to a directory that does"
    )
    click.echo(err.line(name), err=True)
    sys.exit(int(err.exit_status))


def make_main(command: click.Command, name: str) -> Callable[..., None]:
    """The console-script entry point for COMMAND: errors become one line and an exit status;
    Ctrl-C one line (``ctx-NAME: interrupted``) and 130. A console script then leaves at
    once (``leave``)."""
    invoke_interruptible(command)
    run = _main(command, name)

    def main(argv: list[str] | None = None) -> None:
        try:
            run(argv)
        except SystemExit as done:
            leave(name, done.code)
            raise

    return main


def leave(name: str, status: object) -> None:
    """End the process of console script NAME now with STATUS (an int or None), its output
    flushed and its exit handlers run, without the interpreter's teardown: freeing every
    object a pack holds one by one took 60-100 ms after a Django pack had been written.
    Returns (the caller exits as usual) when this is not NAME's own process -- a test or a
    library calling the entry point -- or for a status that is a message, or when the
    flush fails (the usual exit then says what it says of that)."""
    main = sys.modules.get("__main__")
    if os.path.basename(getattr(main, "__file__", None) or "") != name:
        return
    if status is not None and not isinstance(status, int):
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:
        return
    import atexit

    atexit._run_exitfuncs()
    os._exit(status or 0)


def _main(command: click.Command, name: str) -> Callable[..., None]:
    def main(argv: list[str] | None = None) -> None:
        global _debug
        _debug = False
        if os.environ.get("_" + name.replace("-", "_").upper() + "_COMPLETE"):
            from ctxtools.cli.completion import register  # the shell asks: fish's script

            register()
        try:
            stdio.guard()
            take_over_interrupts()
            rv = command.main(args=argv, prog_name=name, standalone_mode=False)
        except Interrupted:
            say_interrupted(name)
            sys.exit(130)
        except click.exceptions.Abort:
            click.echo(f"{name}: aborted", err=True)
            sys.exit(130)
        except click.ClickException as exc:
            click.echo(click_error_line(name, exc), err=True)
            sys.exit(exc.exit_code)
        except CtxError as exc:
            if debug_enabled():
                raise
            try:
                sys.stdout.flush()
            except (OSError, stdio.OutputError):  # a closed pipe, or the error being said
                _quiet_broken_pipe()
            click.echo(exc.line(name), err=True)
            sys.exit(int(exc.exit_status))
        except BrokenPipeError:
            _quiet_broken_pipe()
            sys.exit(1)
        except FileNotFoundError:
            if debug_enabled() or _cwd_exists():
                raise
            _cwd_gone(name)
        except KeyboardInterrupt:
            say_interrupted(name)
            sys.exit(130)
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_broken_pipe()
            sys.exit(1)
        except stdio.OutputError as err:  # a full disk, an I/O error: not all was written
            _quiet_broken_pipe()
            click.echo(err.line(name), err=True)
            sys.exit(int(err.exit_status))
        sys.exit(rv if isinstance(rv, int) else 0)

    return main
