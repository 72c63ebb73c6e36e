"""One declaration per option: the tables the command line, the requests and the MCP tools
are made from.

Each command has a table (``ctxtools.options.<command>``): one ``Opt`` an option, in the
order ``--help`` lists them. An ``Opt`` says

* how the command line declares it (``decl``): ``"option"`` (``"argument"``), made by
  ``cli.tables`` from its ``flags``, ``type`` and ``click`` keywords; the name of a shared
  declaration in the CLI layer (``model_option``, ``store_options`` ...: the options several
  commands take); ``"stdin"`` for an MCP argument that stands for standard input; or
  ``None`` in a second tool's table of the same command (``run``, ctx-stash's ``--``);
* which request field takes its value as it is (``field``: ``PackRequest``'s for ctx-pack);
* what an agent sees (``mcp``: the argument of the command's MCP tool), or why it does not
  (``cli_only``: a reason, said once here).

So an option is one entry: ``tests/lib/test_options.py`` checks that every option of every
command is in its MCP tool or says why not, and that each click command is made from its
table. This package imports nothing but ``defaults``: ``--help`` reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ctxtools import defaults

# JSON schema kinds of an MCP argument.
STRING = {"type": "string"}
INTEGER = {"type": "integer"}
BOOLEAN = {"type": "boolean"}
NUMBER = {"type": "number"}
STRINGS = {"type": "array", "items": {"type": "string"}}
TOKENS = {"minimum": 1, "maximum": defaults.MAX_TOKENS}  # a budget or a window, as on the CLI
COUNT = {"minimum": 0, "maximum": defaults.MAX_COUNT}  # lines, windows, matches


_NONE: Mapping[str, Any] = MappingProxyType({})


class Arg:
    """An option as its MCP tool's argument: its KIND (``STRING``, ``INTEGER`` ...), a
    DESCRIPTION in the tool's words, MORE of its schema (bounds, enum, default); NAME when
    the argument's name is not the option's."""

    __slots__ = ("kind", "description", "name", "more")

    def __init__(
        self,
        kind: Mapping[str, Any],
        description: str,
        name: str | None = None,
        more: Mapping[str, Any] = _NONE,
    ):
        self.kind, self.description, self.name, self.more = kind, description, name, more

    def schema(self) -> dict:
        return {**self.kind, "description": self.description, **self.more}


def arg(kind: Mapping, description: str, name: str | None = None, **more: Any) -> Arg:
    """An ``Arg`` of KIND with MORE of its schema."""
    return Arg(kind, description, name, more)


class Opt:
    """One option of a command (see the module). A plain class with slots: the tables are
    read at every ``--help``, where a dataclass or a named tuple costs start-up."""

    __slots__ = ("name", "flags", "help", "decl", "type", "click", "field", "mcp", "cli_only")

    def __init__(
        self,
        name: str,  # the click parameter's name: the key the command's options are read by
        flags: tuple[str, ...] = (),
        help: str | None = None,
        decl: str | None = "option",
        type: tuple = (),  # ("whole", MIN, MAX), ("choice", VALUES), ("path", KEYWORDS) ...
        click: Mapping[str, Any] = _NONE,  # default, metavar, is_flag ...
        field: str | None = None,  # the request field that takes the value as it is
        mcp: Arg | None = None,
        cli_only: str | None = None,  # why the MCP tool does not take it
    ):
        self.name, self.flags, self.help, self.decl, self.type = name, flags, help, decl, type
        self.click, self.field, self.mcp, self.cli_only = click, field, mcp, cli_only

    def __repr__(self) -> str:
        return f"Opt({self.name!r}, decl={self.decl!r})"

    @property
    def mcp_name(self) -> str | None:
        return None if self.mcp is None else (self.mcp.name or self.name)


PATHS = arg(
    STRINGS,
    "Files (directories and globs where the tool takes them), absolute or relative to the "
    "first root; handle references ctx:[SESSION/]NAME too. Only paths under the server's "
    "roots are read.",
    "paths",
)
MODEL = arg(STRING, "Model profile (gpt-4o, claude-sonnet-4, qwen2.5-coder:32b, ...).")

# Reasons shared by several tables.
STANDARD = "about the program, not a call (ctx-mcp has its own --version and --debug)"
STORE = "the server's store and session are chosen when it starts (ctx-mcp --store, --session)"
RULER = (
    "the server counts with its model's encoding, chosen when it starts (ctx-mcp --model); "
    "a call names a model, not a counter"
)
FILES_FROM = "a list file is a shell's way to pass many names; a call gives paths"
JSON = "a tool's reply has one form"
OUTPUT = "the reply is the output: the server writes no file a call names"
COPY = "the clipboard is the user's desktop, not the agent's"
EXPLAIN = "a report for a person on stderr; the reply's notes say what an agent needs"
SECRETS = (
    "what the server sends a model always has its secrets kept out: only a person at the "
    "command line may say otherwise"
)
JOBS = "the server runs each call in one worker"
MEMORY = (
    "memory files, their scoring and --embed-cmd (a program the server would run) are the "
    "user's set-up, not a call's"
)
PROFILES = "the profiles are the user's set-up (CTX_PROFILES when the server starts)"
PRESENTATION = "how the command line shows a result; the reply has one form"

# Entries that stand in several tables as they are (each table spreads them in its place).
RULER_OPTS = tuple(
    Opt(name, decl="ruler_options", cli_only=RULER)
    for name in ("encoding", "tokenizer", "heuristic", "exact")
)
STORE_OPTS = tuple(Opt(name, decl="store_options", cli_only=STORE) for name in ("store", "session"))
STANDARD_OPTS = tuple(
    Opt(name, decl="standard_options", cli_only=STANDARD)
    for name in ("version", "completion", "debug")
)


def table_names(table: Iterable[Opt]) -> list[str]:
    return [o.name for o in table]


def mcp_properties(table: Sequence[Opt], order: Sequence[str] = ()) -> dict[str, dict]:
    """The MCP tool's argument schemas from TABLE: the arguments of ORDER first (the order
    agents have seen), then the others in the table's order."""
    args = {o.mcp_name: o.mcp.schema() for o in table if o.mcp is not None}
    first = {name: args[name] for name in order}
    return {**first, **{k: v for k, v in args.items() if k not in first}}


def request_fields(table: Iterable[Opt], values: Mapping[str, Any]) -> dict[str, Any]:
    """The request fields of TABLE taken as they are from VALUES (keyed by option name)."""
    return {o.field: values[o.name] for o in table if o.field is not None}


def call_fields(table: Iterable[Opt], args: Mapping[str, Any]) -> dict[str, Any]:
    """The request fields an MCP call's ARGS give as they are (an argument left out keeps
    the request's default)."""
    out = {}
    for o in table:
        if o.field is not None and o.mcp is not None and args.get(o.mcp_name) is not None:
            out[o.field] = args[o.mcp_name]
    return out
