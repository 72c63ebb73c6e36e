"""ctx-read's options and the ``read`` MCP tool, the tool's arguments first in the order
agents have seen them (the click options are still declared in ``cli.read``;
``tests/lib/test_options.py`` keeps the two in step)."""

from __future__ import annotations

from ctxtools import defaults
from ctxtools.options import (
    BOOLEAN,
    COPY,
    COUNT,
    INTEGER,
    JSON,
    OUTPUT,
    RULER,
    STANDARD,
    STORE,
    STRING,
    Opt,
    arg,
)

READ: tuple[Opt, ...] = (
    Opt(
        "ref",
        decl=None,
        mcp=arg(STRING, "[ctx:][SESSION/]NAME[@SHA_PREFIX], or a whole handle card."),
    ),
    Opt(
        "range",
        decl=None,
        mcp=arg(STRING, "Lines X-Y, 1-based, closed; X- to the end; with grep, its scope."),
    ),
    Opt("slice", decl=None, mcp=arg(STRING, "A:B, zero-based, half-open, negatives from the end.")),
    Opt(
        "unit",
        decl=None,
        mcp=arg(STRING, "Unit of slice.", enum=["chars", "lines"], default="chars"),
    ),
    Opt("head", decl=None, mcp=arg(INTEGER, "The first N lines.", **COUNT)),
    Opt("tail", decl=None, mcp=arg(INTEGER, "The last N lines.", **COUNT)),
    Opt(
        "grep",
        decl=None,
        mcp=arg(STRING, "Lines matching this regex (RE2), with their line numbers."),
    ),
    Opt(
        "context",
        decl=None,
        mcp=arg(INTEGER, "Lines of context around each grep match.", default=0, **COUNT),
    ),
    Opt("ignore_case", decl=None, mcp=arg(BOOLEAN, "grep ignoring case.", default=False)),
    Opt("jsonpath", decl=None, mcp=arg(STRING, "RFC 9535 JSONPath: a JSON array of the matches.")),
    Opt(
        "paths",
        decl=None,
        mcp=arg(BOOLEAN, "jsonpath: the matches' normalized paths.", default=False),
    ),
    Opt("skip", decl=None, mcp=arg(INTEGER, "jsonpath: skip N matches.", default=0, **COUNT)),
    Opt(
        "count",
        decl=None,
        mcp=arg(BOOLEAN, "chars, lines, bytes and tokens (JSON).", default=False),
    ),
    Opt(
        "introspect",
        decl=None,
        mcp=arg(BOOLEAN, "What this handle supports, with examples.", default=False),
    ),
    Opt(
        "number",
        decl=None,
        mcp=arg(BOOLEAN, "Prefix line numbers to line projections.", default=False),
    ),
    Opt(
        "max_chars",
        decl=None,
        mcp=arg(
            INTEGER,
            f"Cap on the output [default {defaults.MAX_CHARS:,}; at most "
            f"{defaults.MAX_CHARS_CEILING:,}].",
            minimum=1,
            maximum=defaults.MAX_COUNT,
        ),
    ),
    Opt(
        "verify",
        decl=None,
        mcp=arg(BOOLEAN, "Re-hash the payload with SHA-256 first.", default=False),
    ),
    Opt(
        "dialect",
        decl=None,
        cli_only="jsonpath-ng's extended syntax is a migration aid; a call speaks RFC 9535",
    ),
    Opt("redact", decl=None, cli_only="every reply is redacted already (results.redacted)"),
    Opt("store", decl=None, cli_only=STORE),
    Opt("session", decl=None, cli_only=STORE),
    Opt("encoding", decl=None, cli_only=RULER),
    Opt("tokenizer", decl=None, cli_only=RULER),
    Opt("heuristic", decl=None, cli_only=RULER),
    Opt("exact", decl=None, cli_only=RULER),
    Opt("as_json", decl=None, cli_only=JSON),
    Opt("output", decl=None, cli_only=OUTPUT),
    Opt("copy", decl=None, cli_only=COPY),
    Opt("version", decl=None, cli_only=STANDARD),
    Opt("completion", decl=None, cli_only=STANDARD),
    Opt("debug", decl=None, cli_only=STANDARD),
)
