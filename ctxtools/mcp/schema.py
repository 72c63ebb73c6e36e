"""The tools as an agent sees them: names, descriptions, JSON schemas; and the check of a
call's arguments against them.

Argument names are the command-line flags' (``--max-chars`` is ``max_chars``, ``--ident``
is ``ident``), so an agent's habits from the shell carry over. ``check_args`` refuses an
unknown argument, a missing one, a value of the wrong kind or out of the schema's
bounds (``minimum``, ``exclusiveMinimum``, ``maximum``: the command line's) and a NUL
character in, or an empty, name or path with one line naming the argument (a UsageError,
as click's would be on the command line); it returns the arguments with the schema's
defaults filled in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxtools.errors import UsageError
from ctxtools.options import mcp_properties
from ctxtools.options.compact import COMPACT
from ctxtools.options.compact import MCP_ORDER as COMPACT_ORDER
from ctxtools.options.count import COUNT
from ctxtools.options.count import MCP_ORDER as COUNT_ORDER
from ctxtools.options.excerpt import EXCERPT
from ctxtools.options.excerpt import MCP_ORDER as EXCERPT_ORDER
from ctxtools.options.pack import MCP_ORDER as PACK_ORDER
from ctxtools.options.pack import PACK
from ctxtools.options.read import MCP_ORDER as READ_ORDER
from ctxtools.options.read import READ
from ctxtools.options.repomap import MCP_ORDER as REPOMAP_ORDER
from ctxtools.options.repomap import REPOMAP
from ctxtools.options.stash import RUN, STASH

_PAGING = (
    " Results over the server's inline limit are stored as a handle: you get its card, the "
    "first lines and the exact read call for the next part."
)

# The arguments come from the commands' option tables (ctxtools.options), where each
# option says what an agent sees or why it is the command line's only.
TOOLS: dict[str, dict] = {
    "count": {
        "description": "Count the tokens of a text or of files (the ruler every ctx tool "
        "uses), with the share of a model's context window. Give text or paths.",
        "properties": mcp_properties(COUNT, COUNT_ORDER),
        "required": [],
    },
    "stash": {
        "description": "Store a text in the handle store and get its card (a few dozen "
        "bytes, whatever the size). Page it back with read.",
        "properties": mcp_properties(STASH),
        "required": ["text"],
    },
    "read": {
        "description": "Page a stored handle back in through one projection: range (lines "
        "X-Y), slice (A:B chars or lines), head, tail, grep (with context), jsonpath, count "
        "or introspect (what this handle supports, with example calls). Without one the "
        "content is shown from the top. Output is capped at max_chars (12,000; at most "
        "50,000); a cut read ends with the exact read call for the next part. A ref with "
        "@SHA whose name was re-stashed fails as stale.",
        "properties": mcp_properties(READ, READ_ORDER),
        "required": ["ref"],
    },
    "run": {
        "description": "Run a command (no shell) in the first root, store its output "
        "(stdout and stderr interleaved) and its exit status, and get the card and the "
        "first lines." + _PAGING,
        "properties": mcp_properties(RUN),
        "required": ["command"],
    },
    "excerpt": {
        "description": "Cut files down to what a task is about, with real line numbers: "
        "each file's head, then the definitions ctx-pack's engine ranks best for the task "
        "(in a log or other text, the lines around its best lines)." + _PAGING,
        "properties": mcp_properties(EXCERPT, EXCERPT_ORDER),
        "required": ["paths"],
    },
    "repomap": {
        "description": "A ranked map of a repository's symbols (definitions and where they "
        "are used) that fits a token budget exactly." + _PAGING,
        "properties": mcp_properties(REPOMAP, REPOMAP_ORDER),
        "required": [],
    },
    "pack": {
        "description": "A byte-stable prompt pack under a model's real budget: instructions "
        "(AGENTS.md, ...), the repository map, the files excerpted around the task, then "
        "the task. @-mentions in the task name files. Secrets are skipped or redacted." + _PAGING,
        "properties": mcp_properties(PACK, PACK_ORDER),
        "required": ["task"],
    },
    "compact": {
        "description": "Compact an agent transcript (OpenAI or Anthropic messages) to a "
        "model's window: old tool results elided into the store, the oldest messages "
        "replaced by a digest, tool calls and results kept paired. Returns {summary, "
        "notes, report, transcript}." + _PAGING,
        "properties": mcp_properties(COMPACT, COMPACT_ORDER),
        "required": ["transcript"],
    },
}

# The order agents have seen a tool's arguments in, where its table's is another.
ORDERS = {
    "count": COUNT_ORDER,
    "excerpt": EXCERPT_ORDER,
    "pack": PACK_ORDER,
    "compact": COMPACT_ORDER,
    "read": READ_ORDER,
    "repomap": REPOMAP_ORDER,
}

# The tables of each tool, for the check that every option is in its tool or says why not.
TABLES = {
    "count": COUNT,
    "stash": STASH,
    "read": READ,
    "run": RUN,
    "excerpt": EXCERPT,
    "repomap": REPOMAP,
    "pack": PACK,
    "compact": COMPACT,
}

# The command each tool stands for: its errors read as that command's.
PROGS = {
    "count": "ctx-count",
    "stash": "ctx-stash",
    "read": "ctx-read",
    "run": "ctx-stash",
    "excerpt": "ctx-excerpt",
    "repomap": "ctx-repomap",
    "pack": "ctx-pack",
    "compact": "ctx-compact",
}


def input_schema(name: str) -> dict:
    """The JSON schema of tool NAME's arguments."""
    spec = TOOLS[name]
    schema = {"type": "object", "properties": spec["properties"], "additionalProperties": False}
    if spec["required"]:
        schema["required"] = list(spec["required"])
    return schema


_KINDS = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


_WORDS = {
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
}


def _kind_ok(value: Any, kinds: list[str]) -> bool:
    for kind in kinds:
        if kind in ("integer", "number") and isinstance(value, bool):
            continue
        if isinstance(value, _KINDS[kind]):
            return True
    return False


def _check_value(tool: str, key: str, spec: dict, value: Any) -> None:
    kinds = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
    if not _kind_ok(value, kinds):
        items = spec.get("items", {}).get("type")
        words = {**_WORDS, "array": "a list of strings" if items == "string" else "an array"}
        want = " or ".join(words[k] for k in kinds)
        raise UsageError(f"argument {key!r} must be {want}")
    if "enum" in spec and value not in spec["enum"]:
        raise UsageError(f"argument {key!r} must be one of {', '.join(spec['enum'])}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        _check_range(key, spec, value)
    if kinds == ["array"]:
        if any(not isinstance(v, str) for v in value):
            raise UsageError(f"argument {key!r} must be a list of strings")
        if len(value) < spec.get("minItems", 0):
            raise UsageError(f"argument {key!r} must not be empty")
    if key not in _FREE_TEXT:
        strings = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and "\0" in v for v in strings):
            raise UsageError(f"argument {key!r} must not hold a NUL character")
        if key not in _ARGV and "" in strings:  # (a name left empty is not one left out)
            if isinstance(value, list):
                raise UsageError(f"argument {key!r} must not hold an empty string")
            raise UsageError(f"argument {key!r} must not be empty")


# Arguments whose strings are content, not names: a NUL in them is data, and so is an
# empty one. Every other string names something (a model, a role, a path, a glob, a
# handle): an empty one is refused, as the command line refuses --model '' (it was taken
# for the argument left out: model "" counted with the server's model).
_FREE_TEXT = frozenset({"text", "task", "query", "transcript", "grep", "jsonpath"})
# A command's argv: an empty argument is an argument (printf '', git commit -m '').
_ARGV = frozenset({"command"})


def _check_range(key: str, spec: dict, value: int | float) -> None:
    """UsageError when VALUE is outside SPEC's bounds (or not a finite number)."""
    if value != value or value in (float("inf"), float("-inf")):
        raise UsageError(f"argument {key!r} must be a finite number")
    if "minimum" in spec and value < spec["minimum"]:
        raise UsageError(f"argument {key!r} must be at least {spec['minimum']:,}")
    if "exclusiveMinimum" in spec and value <= spec["exclusiveMinimum"]:
        raise UsageError(f"argument {key!r} must be above {spec['exclusiveMinimum']:,}")
    if "maximum" in spec and value > spec["maximum"]:
        raise UsageError(f"argument {key!r} must be at most {spec['maximum']:,}")


def check_args(tool: str, args: Mapping[str, Any] | None) -> dict:
    """ARGS of a call to TOOL, checked against its schema, with defaults filled in."""
    spec = TOOLS[tool]
    props = spec["properties"]
    args = dict(args or {})
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise UsageError(
            f"unknown argument {unknown[0]!r}",
            hint=f"{tool} takes {', '.join(props)}",
        )
    for key in spec["required"]:
        if args.get(key) is None:
            raise UsageError(f"argument {key!r} is required")
    out = {}
    for key, prop in props.items():
        value = args.get(key)
        if value is None:
            out[key] = prop.get("default")
            continue
        _check_value(tool, key, prop, value)
        out[key] = value
    return out
