"""Where things live by default. Flags beat environment; environment beats these defaults.

The CLI reads ``CTX_STORE``, ``CTX_SESSION``, ``CTX_MODEL``, ``CTX_ENCODING`` and
``CTX_PROFILES`` through click's ``envvar=``; the library functions here give the defaults
below them, so a library user gets the same answers as the commands.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctxtools.defaults import SESSION as DEFAULT_SESSION


def switched_on(var: str) -> bool:
    """Whether the switch VAR (``CTX_SEMANTIC``, ``CTX_HISTORY``) leaves its signal on:
    unset or anything but 0, off, no, false (any case, spaces around) is on."""
    return os.environ.get(var, "1").strip().lower() not in ("0", "off", "no", "false")


def default_store_root() -> Path:
    """``$CTX_STORE``, else ``${XDG_CACHE_HOME:-~/.cache}/ctxtools``. A relative
    XDG_CACHE_HOME is ignored, as the XDG Base Directory spec says (it is invalid): it would
    put a store under whatever the working directory is."""
    env = os.environ.get("CTX_STORE")
    if env:
        return _home(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "ctxtools"


def store_root(explicit: str | os.PathLike | None = None) -> Path:
    """The store root: an explicit ``--store`` value, else ``default_store_root()``."""
    if explicit:
        return _home(explicit)
    return default_store_root()


def _home(path: str | os.PathLike) -> Path:
    """PATH with a leading ``~`` or ``~user`` made the home directory, as a shell would
    have: ``CTX_STORE='~/x'`` (quoted in a Makefile, an env file, a CI variable) meant the
    home's x, not a directory named ``~`` under whatever the working directory is."""
    return Path(os.path.expanduser(path))


def default_session() -> str:
    return os.environ.get("CTX_SESSION") or DEFAULT_SESSION
