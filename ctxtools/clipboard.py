"""Copying a command's output to the clipboard (``--copy``), through the platform's tool.

The tool is looked up on ``PATH``, in this order, each only where it can work:
``wl-copy`` (with ``WAYLAND_DISPLAY``), ``xclip`` and ``xsel`` (with ``DISPLAY``),
``pbcopy`` (macOS), ``clip.exe`` (Windows, and WSL). It runs through ``runner.hand_off``:
the X and Wayland tools fork a process that holds the selection after they exit, which is
left to run. No tool, a tool that fails, or one that hangs is a ``ClipboardError`` (exit 1)
in one line; nothing here prints.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping

from ctxtools.errors import InputError

TIMEOUT = 10.0  # seconds a tool may take to take the text
# (the name on PATH, its argv after the name, the variable it needs set, or None)
TOOLS: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("wl-copy", (), "WAYLAND_DISPLAY"),
    ("xclip", ("-selection", "clipboard", "-in"), "DISPLAY"),
    ("xsel", ("--clipboard", "--input"), "DISPLAY"),
    ("pbcopy", (), None),
    ("clip.exe", (), None),
)
MISSING_HINT = (
    "install wl-clipboard (Wayland), xclip or xsel (X11, with DISPLAY set); "
    "macOS has pbcopy, Windows clip.exe"
)


class ClipboardError(InputError):
    """No clipboard tool could take the text."""


def clipboard_command(
    env: Mapping[str, str] | None = None, which: Callable[..., str | None] = shutil.which
) -> list[str]:
    """The argv of the first tool that can work here (see the module); ClipboardError when
    there is none."""
    env = os.environ if env is None else env
    path = env.get("PATH", os.defpath)
    found = []
    for name, args, needs in TOOLS:
        where = which(name, path=path)
        if where is None:
            continue
        if needs is None or env.get(needs):
            return [where, *args]
        found.append((name, needs))
    if found:
        names = ", ".join(name for name, _ in found)
        needs = sorted({n for _, n in found}, reverse=True)
        unset = (
            f"neither {' nor '.join(needs)} is set" if len(needs) > 1 else f"{needs[0]} is unset"
        )
        raise ClipboardError(
            f"--copy: found {names} but {unset}",
            hint="run it in a graphical session, or drop --copy",
        )
    raise ClipboardError("--copy: no clipboard tool found on PATH", hint=MISSING_HINT)


def copy(data: bytes, env: Mapping[str, str] | None = None, timeout: float = TIMEOUT) -> str:
    """Put DATA (UTF-8 text) on the clipboard; the tool's name. ClipboardError on failure."""
    from ctxtools.errors import CommandError
    from ctxtools.runner import hand_off, shell_status

    argv = clipboard_command(env)
    name = os.path.basename(argv[0])
    if name == "clip.exe":  # it reads the console's code page; UTF-16 with a BOM is exact
        data = "\ufeff".encode("utf-16-le") + data.decode("utf-8", "replace").encode("utf-16-le")
    try:
        done = hand_off(argv, data, timeout=timeout)
    except CommandError as exc:
        raise ClipboardError(f"--copy: cannot run {name}: {exc.detail}") from None
    if done.timed_out:
        raise ClipboardError(f"--copy: {name} did not finish in {timeout:g} s; stopped")
    if done.returncode != 0:
        last = done.stderr_tail.decode("utf-8", "replace").strip().splitlines()
        why = f": {last[-1][:200]}" if last else ""
        status = shell_status(done.returncode or 0)
        raise ClipboardError(f"--copy: {name} failed (status {status}){why}")
    return name
