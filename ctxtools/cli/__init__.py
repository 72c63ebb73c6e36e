"""The click layer of the ``ctx-*`` commands: one module per command, ``common`` for what
they share.

A Ctrl-C is answered the same way from the first moment a command's own code runs: one
line, ``ctx-NAME: interrupted``, and status 130. Importing this package (the first thing a
console script does) installs ``_interrupted_early`` for SIGINT, which ends the process
with that line while the command's modules are still being imported; the entry point
(``entry.make_main``, ``count_fast.main``) hands SIGINT back to Python's handler with
``take_over_interrupts`` once its ``except KeyboardInterrupt`` is in place. Only a
console script installs it (never a library user or a test importing a command), and
only when SIGINT has Python's default handler (an ignored SIGINT stays ignored).
"""

import os as _os
import signal as _signal
import sys as _sys


def _name() -> str:
    base = _os.path.basename(_sys.argv[0]) if _sys.argv and _sys.argv[0] else ""
    return base if base.startswith("ctx-") else "ctxtools"


def _interrupted_early(_signum: int, _frame: object) -> None:
    try:
        _os.write(2, f"{_name()}: interrupted\n".encode())
    finally:
        _os._exit(130)


# Installed before anything else is imported (``typing`` alone takes ~10 ms, and a Ctrl-C
# inside it was a traceback).
if _name() != "ctxtools" and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _interrupted_early)

from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402


def take_over_interrupts() -> None:
    """SIGINT back to Python's KeyboardInterrupt, if ``_interrupted_early`` holds it."""
    if _signal.getsignal(_signal.SIGINT) is _interrupted_early:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)


class Interrupted(BaseException):
    """Ctrl-C inside a command, carried past click (which would print a blank line of its
    own and call it "aborted") to ``make_main``: one line, status 130."""


def _interruptible(method: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except KeyboardInterrupt:
            raise Interrupted from None

    return call


def invoke_interruptible(command: Any) -> None:
    """COMMAND's parsing and invoking, with a KeyboardInterrupt turned into Interrupted."""
    if getattr(command, "_ctx_interruptible", False):
        return
    make_context = _interruptible(command.make_context)

    def made(*args: Any, **kwargs: Any) -> Any:
        ctx = make_context(*args, **kwargs)
        # Leaving the context closes it (its resources): a Ctrl-C there is one more moment
        # click would call "aborted" after a blank line.
        for closing in ("close", "_close_with_exception_info"):  # (the latter: click 8.2+)
            if hasattr(ctx, closing):
                setattr(ctx, closing, _interruptible(getattr(ctx, closing)))
        return ctx

    command.make_context = made  # type: ignore[method-assign]
    command.invoke = _interruptible(command.invoke)  # type: ignore[method-assign]
    command._ctx_interruptible = True  # type: ignore[attr-defined]


def say_interrupted(name: str) -> None:
    """The one line of a Ctrl-C (after a newline on a terminal, which shows ``^C``)."""
    try:
        lead = "\n" if _sys.stderr.isatty() else ""
        _sys.stderr.write(f"{lead}{name}: interrupted\n")
        _sys.stderr.flush()
    except (OSError, ValueError):
        pass

