"""A repository's URL where a command takes a directory (``ctxtools.remote``): ctx-pack's
FILE, ctx-repomap's DIRECTORY, ``ctx-count --tree``'s DIR."""

from __future__ import annotations


def is_remote(arg: str | None) -> bool:
    """Whether ARG is a repository's address rather than a path."""
    if not arg or ":" not in arg:  # (a URL and user@host:path both hold one: a plain
        return False  # path is answered without importing the remote module)
    from ctxtools.remote import parse_remote

    return parse_remote(arg) is not None


def local_tree(arg: str, store: str | None = None) -> tuple[str, str]:
    """ARG when it is a path; else the directory its repository was fetched into (the
    store's ``remote/`` cache), its notes said on stderr. With the name to show for it:
    ARG, or the repository's URL and ref (a password in it masked)."""
    from ctxtools.remote import checkout, parse_remote

    remote = parse_remote(arg)
    if remote is None:
        return arg, arg
    from ctxtools.cli.outputs import warn
    from ctxtools.config import store_root

    got = checkout(remote, store_root(store))
    warn(*got.notes)
    return got.path, remote.label
