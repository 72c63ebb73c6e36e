"""The tools as an agent sees them: names, descriptions, JSON schemas; and the check of a
call's arguments against them.

Argument names are the command-line flags' (``--max-chars`` is ``max_chars``, ``--ident``
is ``ident``), so an agent's habits from the shell carry over. ``check_args`` refuses an
unknown argument, a missing one, a value of the wrong kind or out of the schema's
bounds (``minimum``, ``exclusiveMinimum``, ``maximum``: the command line's) and a NUL
character in a name or a path with one line naming the argument (a UsageError, as
click's would be on the command line); it returns the arguments with the schema's
defaults filled in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxtools import defaults
from ctxtools.errors import UsageError

_STR = {"type": "string"}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}
_STRS = {"type": "array", "items": {"type": "string"}}
_TOKENS = {"minimum": 1, "maximum": defaults.MAX_TOKENS}  # a budget or a window, as on the CLI
_COUNT = {"minimum": 0, "maximum": defaults.MAX_COUNT}  # lines, windows, matches


def _p(kind: dict, description: str, **more: Any) -> dict:
    return {**kind, "description": description, **more}


_PATHS = _p(
    _STRS,
    "Files (directories and globs where the tool takes them), absolute or relative to the "
    "first root; handle references ctx:[SESSION/]NAME too. Only paths under the server's "
    "roots are read.",
)
_MODEL = _p(_STR, "Model profile (gpt-4o, claude-sonnet-4, qwen2.5-coder:32b, ...).")

_PAGING = (
    " Results over the server's inline limit are stored as a handle: you get its card, the "
    "first lines and the exact read call for the next part."
)

TOOLS: dict[str, dict] = {
    "count": {
        "description": "Count the tokens of a text or of files (the ruler every ctx tool "
        "uses), with the share of a model's context window. Give text or paths.",
        "properties": {
            "text": _p(_STR, "The text to count."),
            "paths": _p(_STRS, "Files to count (under the roots)."),
            "model": _MODEL,
            "limit": _p(_INT, "Context window in tokens (instead of the model's).", **_TOKENS),
            "messages": _p(
                _BOOL,
                "Count each input as a chat transcript (OpenAI or Anthropic messages), as "
                "the APIs count it.",
                default=False,
            ),
        },
        "required": [],
    },
    "stash": {
        "description": "Store a text in the handle store and get its card (a few dozen "
        "bytes, whatever the size). Page it back with read.",
        "properties": {
            "text": _p(_STR, "The text to store."),
            "name": _p(_STR, "Handle name (1-128 of A-Z a-z 0-9 . _ -) [default: SHA-256]."),
            "type": _p(_STR, "Payload type [default: detected].", enum=["text", "json", "jsonl"]),
        },
        "required": ["text"],
    },
    "read": {
        "description": "Page a stored handle back in through one projection: range (lines "
        "X-Y), slice (A:B chars or lines), head, tail, grep (with context), jsonpath, count "
        "or introspect (what this handle supports, with example calls). Without one the "
        "content is shown from the top. Output is capped at max_chars (12,000; at most "
        "50,000); a cut read ends with the exact read call for the next part. A ref with "
        "@SHA whose name was re-stashed fails as stale.",
        "properties": {
            "ref": _p(_STR, "[ctx:][SESSION/]NAME[@SHA_PREFIX], or a whole handle card."),
            "range": _p(_STR, "Lines X-Y, 1-based, closed; X- to the end; with grep, its scope."),
            "slice": _p(_STR, "A:B, zero-based, half-open, negatives from the end."),
            "unit": _p(_STR, "Unit of slice.", enum=["chars", "lines"], default="chars"),
            "head": _p(_INT, "The first N lines.", **_COUNT),
            "tail": _p(_INT, "The last N lines.", **_COUNT),
            "grep": _p(_STR, "Lines matching this regex (RE2), with their line numbers."),
            "context": _p(_INT, "Lines of context around each grep match.", default=0, **_COUNT),
            "ignore_case": _p(_BOOL, "grep ignoring case.", default=False),
            "jsonpath": _p(_STR, "RFC 9535 JSONPath: a JSON array of the matches."),
            "paths": _p(_BOOL, "jsonpath: the matches' normalized paths.", default=False),
            "skip": _p(_INT, "jsonpath: skip N matches.", default=0, **_COUNT),
            "count": _p(_BOOL, "chars, lines, bytes and tokens (JSON).", default=False),
            "introspect": _p(_BOOL, "What this handle supports, with examples.", default=False),
            "number": _p(_BOOL, "Prefix line numbers to line projections.", default=False),
            "max_chars": _p(
                _INT,
                f"Cap on the output [default {defaults.MAX_CHARS:,}; at most "
                f"{defaults.MAX_CHARS_CEILING:,}].",
                minimum=1,
                maximum=defaults.MAX_COUNT,
            ),
            "verify": _p(_BOOL, "Re-hash the payload with SHA-256 first.", default=False),
        },
        "required": ["ref"],
    },
    "run": {
        "description": "Run a command (no shell) in the first root, store its output "
        "(stdout and stderr interleaved) and its exit status, and get the card and the "
        "first lines." + _PAGING,
        "properties": {
            "command": _p(_STRS, "The argv: program and arguments.", minItems=1),
            "name": _p(_STR, "Handle name [default: SHA-256]."),
        },
        "required": ["command"],
    },
    "excerpt": {
        "description": "Cut files down to what a task is about, with real line numbers: "
        "each file's head, then the definitions ctx-pack's engine ranks best for the task "
        "(in a log or other text, the lines around its best lines)." + _PAGING,
        "properties": {
            "query": _p(_STR, "The task, in words, read as ctx-pack reads it."),
            "paths": _PATHS,
            "ident": _p(_STRS, "Names to look for, taken as they are."),
            "tokens": _p(_INT, "Budget for the whole output, in tokens.", **_TOKENS),
            "window": _p(
                _INT, "In a text without definitions: lines around each best line.", **_COUNT
            ),
            "max_windows": _p(_INT, "Windows per file, the most relevant first.", **_COUNT),
            "signatures": _p(_BOOL, "Definitions' signature lines only.", default=False),
            "sort": _p(_STR, "File order.", enum=["given", "score"], default="given"),
            "ignore_case": _p(
                _BOOL, "Accepted; words always match regardless of case.", default=False
            ),
        },
        "required": ["paths"],
    },
    "repomap": {
        "description": "A ranked map of a repository's symbols (definitions and where they "
        "are used) that fits a token budget exactly." + _PAGING,
        "properties": {
            "path": _p(_STR, "The directory to map [default: the first root]."),
            "tokens": _p(
                _INT, f"Budget [default {defaults.MAP_TOKENS:,}; at least 50].", **_TOKENS
            ),
            "query": _p(_STR, "Rank toward what this text is about."),
            "focus": _p(_STRS, "Rank toward these files or directories."),
        },
        "required": [],
    },
    "pack": {
        "description": "A byte-stable prompt pack under a model's real budget: instructions "
        "(AGENTS.md, ...), the repository map, the files excerpted around the task, then "
        "the task. @-mentions in the task name files. Secrets are skipped or redacted." + _PAGING,
        "properties": {
            "task": _p(_STR, "What the model is to do (last, verbatim)."),
            "paths": _PATHS,
            "tokens": _p(_INT, "The whole budget, instead of the model's and role's.", **_TOKENS),
            "model": _MODEL,
            "role": _p(_STR, "Role whose share of the budget applies [default: worker]."),
            "changed": _p(
                _STR, "Add the files changed against this git revision (HEAD, origin/main)."
            ),
            "include": _p(
                _STRS, "Globs of files that are candidates even when the noise rules say no."
            ),
            "exclude": _p(_STRS, "Globs of files that are never candidates."),
            "format": _p(_STR, "Output format.", enum=["markdown", "xml", "json"]),
            "identifiers_only": _p(_BOOL, "Paths and signatures, no bodies.", default=False),
            "include_readme": _p(_BOOL, "README.md joins the instructions.", default=False),
            "no_map": _p(_BOOL, "Leave the repository map out.", default=False),
            "fill": _p(
                _BOOL,
                "Fill the budget past the relevance floor and the files' 36,000-token "
                "ceiling (by default the pack stops where what is left is worth too little).",
                default=False,
            ),
            "allow_drop": _p(_BOOL, "A named file that cannot fit is dropped.", default=False),
            "keep_going": _p(_BOOL, "Pack the rest when some paths are missing.", default=False),
        },
        "required": ["task"],
    },
    "compact": {
        "description": "Compact an agent transcript (OpenAI or Anthropic messages) to a "
        "model's window: old tool results elided into the store, the oldest messages "
        "replaced by a digest, tool calls and results kept paired. Returns {summary, "
        "notes, report, transcript}." + _PAGING,
        "properties": {
            "transcript": {
                "description": "The transcript: a JSON array of messages, an object with "
                "messages (and system), or its text (JSON or JSON Lines).",
                "type": ["array", "object", "string"],
            },
            "model": _p(_STR, "Model whose window counts."),
            "limit": _p(_INT, "Window in tokens (beats model).", **_TOKENS),
            "at": _p(
                {"type": "number"},
                f"Compact at this percent of the window (above 5, at most 100) [default "
                f"{defaults.COMPACT_AT:g}].",
                exclusiveMinimum=5,
                maximum=100,
            ),
            "force": _p(_BOOL, "Compact even below at.", default=False),
            "keep_recent": _p(_INT, "Turns at the end never touched.", **_COUNT),
            "repair": _p(_BOOL, "Fix orphaned tool results, unanswered calls.", default=False),
            "format": _p(_STR, "Transcript format.", enum=["auto", "openai", "anthropic"]),
        },
        "required": ["transcript"],
    },
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


# Arguments whose strings are content, not names: a NUL in them is data.
_FREE_TEXT = frozenset({"text", "task", "query", "transcript", "grep", "jsonpath"})


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
