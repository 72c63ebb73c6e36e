"""The memory retrieval options shared by ctx-pack and ctx-excerpt (--memory)."""

from __future__ import annotations

import click

from ctxtools.cli.types import Above, Name, NamedPath
from ctxtools.defaults import MAX_TIMEOUT
from ctxtools.errors import UsageError

_OPTIONS = (
    click.option(
        "--retrieval",
        type=click.Choice(["hashing", "tfidf", "cmd"]),
        default=None,
        help="How memory chunks are scored: TF-IDF, the local hashing embedder, or "
        "--embed-cmd [default: tfidf; cmd with --embed-cmd].",
    ),
    click.option(
        "--embed-cmd",
        type=Name(),
        default=None,
        metavar="CMD",
        help="A command (no shell) reading JSON-lines texts, writing JSON-lines vectors; "
        "implies --retrieval cmd.",
    ),
    click.option(
        "--embed-timeout",
        type=Above(0, MAX_TIMEOUT),
        default=None,
        help="Seconds --embed-cmd may run before it is killed and tfidf is used "
        f"[default: 60; at most {MAX_TIMEOUT:g}].",
    ),
    click.option(
        "--min-score",
        type=click.FloatRange(0, 1),
        default=None,
        help="A memory chunk qualifies at this score or more (instead of the floor, "
        "median and share-of-the-best rule).",
    ),
)


def memory_option(help: str):
    """``--memory PATH`` (repeatable): memory files or directories; what it does is HELP."""
    return click.option(
        "--memory", "memory", multiple=True, type=NamedPath(), metavar="PATH", help=help
    )


def retrieval_options(func):
    for option in reversed(_OPTIONS):
        func = option(func)
    return func


def retrieval_method(opts: dict, extra: tuple[tuple[str, str], ...] = ()) -> str | None:
    """The method the options ask for (None: the library's default); a usage error when
    they contradict, or when they are given without --memory (they would do nothing)."""
    if not opts["memory"]:
        keys = (
            ("--retrieval", "retrieval"),
            ("--embed-cmd", "embed_cmd"),
            ("--embed-timeout", "embed_timeout"),
            ("--min-score", "min_score"),
            *extra,
        )
        given = [name for name, key in keys if opts[key] is not None]
        if given:
            raise UsageError(f"{given[0]} goes with --memory PATH")
        return None
    if opts["retrieval"] == "cmd" and not opts["embed_cmd"]:
        raise UsageError("--retrieval cmd needs --embed-cmd CMD")
    if opts["embed_cmd"] and opts["retrieval"] not in (None, "cmd"):
        raise UsageError(f"--embed-cmd and --retrieval {opts['retrieval']} contradict")
    if opts["embed_timeout"] is not None and not opts["embed_cmd"]:
        raise UsageError("--embed-timeout goes with --embed-cmd CMD")
    return opts["retrieval"] or ("cmd" if opts["embed_cmd"] else None)
