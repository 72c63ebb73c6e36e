"""Shell completion: the values the shells offer, and the fish script.

click completes options and files by itself; the callbacks here complete the values only
the toolkit knows -- ``--model`` (profile names, ``--profiles-file``/``CTX_PROFILES``
included), ``--role`` (role names, the profiles file's ``[roles]`` included),
``--encoding`` (the encodings that work offline) and ctx-read's REF (the handles of the
session in the store). Each is loaded only when the shell asks (``make_main`` calls
``register`` when a ``_CTX_*_COMPLETE`` variable is set), so a plain run pays nothing.

``FishComplete`` fixes click's fish script, which split each completion at every comma
(``string split ","``): a description was cut at its first comma and a value holding one
lost the rest. It splits once, between the type and the rest.
"""

from __future__ import annotations

import os

from click.shell_completion import CompletionItem, FishComplete, add_completion_class

_FISH_SPLIT = 'string split ","'

# Every console script of the toolkit ([project.scripts]; tests/cli/test_completion.py
# holds the two lists together).
COMMANDS = (
    "ctx-count",
    "ctx-stash",
    "ctx-read",
    "ctx-excerpt",
    "ctx-repomap",
    "ctx-pack",
    "ctx-compact",
    "ctx-mcp",
)
SHELLS = ("bash", "zsh", "fish")


def complete_var(name: str) -> str:
    """The variable click's completion protocol sets for NAME (``_CTX_COUNT_COMPLETE``)."""
    return "_" + name.replace("-", "_").upper() + "_COMPLETE"


def toolkit_source(shell: str) -> str:
    """The completion scripts of every ctx command for SHELL, one after the other: what
    ``ctx-... --completion SHELL`` prints for ``eval`` (bash, zsh) or ``source`` (fish).
    Each is the script the command itself prints under click's protocol, which is also the
    file under completions/."""
    from click.shell_completion import get_completion_class

    register()
    cls = get_completion_class(shell)
    assert cls is not None, shell
    return "".join(cls(None, {}, name, complete_var(name)).source() for name in COMMANDS)


class FishCompleteOnce(FishComplete):
    """click's fish completion, splitting type from value (and description) once."""

    source_template = FishComplete.source_template.replace(_FISH_SPLIT, 'string split -m 1 ","')


def register() -> None:
    """Make ``FishCompleteOnce`` the fish completion of every command."""
    assert _FISH_SPLIT in FishComplete.source_template, "click's fish script changed"
    add_completion_class(FishCompleteOnce, "fish")


def _matching(values, incomplete: str, helps: dict | None = None) -> list[CompletionItem]:
    helps = helps or {}
    return [CompletionItem(v, help=helps.get(v)) for v in values if v.startswith(incomplete)]


def _table(ctx):
    from ctxtools import profiles

    path = ctx.params.get("profiles_file") or os.environ.get("CTX_PROFILES") or None
    try:
        return profiles.load_profiles(path)
    except Exception:  # a broken profiles file: complete from the built-in ones
        return profiles.load_profiles()


def complete_model(ctx, param, incomplete: str) -> list[CompletionItem]:
    """Profile names (models, families, size buckets, default), with their windows."""
    from ctxtools import profiles

    rows = profiles.list_profiles(_table(ctx))
    helps = {r["name"]: f"{r['kind']}, {r['context_limit']:,} tokens" for r in rows}
    return _matching([r["name"] for r in rows], incomplete, helps)


def complete_role(ctx, param, incomplete: str) -> list[CompletionItem]:
    """Role names, with their share of the pack budget."""
    from ctxtools import profiles

    shares = profiles.effective_role_shares(_table(ctx))
    for hidden in profiles.UNLISTED_ROLES:  # a share the toolkit keeps, not a user's role
        shares.pop(hidden, None)
    helps = {name: f"{share}% of the budget" for name, share in shares.items()}
    return _matching(sorted(shares), incomplete, helps)


def complete_encoding(ctx, param, incomplete: str) -> list[CompletionItem]:
    """The tiktoken encodings that work offline, and the open models' counters installed."""
    from ctxtools.tokens.loading import OFFLINE_ENCODINGS
    from ctxtools.tokens.local import LOCAL, available

    names = [*OFFLINE_ENCODINGS, *(n for n in LOCAL if available(n))]
    return _matching(sorted(names), incomplete)


def complete_handle(ctx, param, incomplete: str) -> list[CompletionItem]:
    """The handles of the session (``--session``, ``CTX_SESSION``) in the store: NAME, or
    ``ctx:SESSION/NAME`` once the word starts with ``ctx:``; a handle's description is its
    type and size."""
    from ctxtools import defaults
    from ctxtools.store import HandleStore

    session = ctx.params.get("session") or os.environ.get("CTX_SESSION") or defaults.SESSION
    try:
        records = HandleStore(ctx.params.get("store") or None).records(session)
    except Exception:  # no store, a bad session name: nothing to offer
        return []
    helps = {}
    for rec in records:
        what = f"{rec['type']}, {rec['lines']:,} lines, {rec['bytes']:,} bytes"
        name = rec["name"]
        helps[name] = helps[f"ctx:{session}/{name}"] = what
    if incomplete.startswith("ctx:"):
        return _matching([f"ctx:{session}/{r['name']}" for r in records], incomplete, helps)
    return _matching([r["name"] for r in records], incomplete, helps)
