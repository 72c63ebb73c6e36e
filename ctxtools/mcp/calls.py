"""A tool call written out, where ctx-read would write a command line.

The projections say how to go on after a cut read as the words of a command
(``--range 41- -n``); ``CallNext`` turns those words into the ``read`` call that does it,
``read {"ref": "ctx:default/pack-3fa1c2d4e5f6@3fa1c2d4e5f6", "range": "41-", "number": true}``,
so an agent copies the next call as a shell user copies the next command.
"""

from __future__ import annotations

from ctxtools.projections.output import MAX_CHARS_DEFAULT, Next

# ctx-read's words -> (the read tool's argument, its kind)
FLAGS = {
    "--slice": ("slice", str),
    "--unit": ("unit", str),
    "--range": ("range", str),
    "--head": ("head", int),
    "--tail": ("tail", int),
    "--grep": ("grep", str),
    "-C": ("context", int),
    "--jsonpath": ("jsonpath", str),
    "--skip": ("skip", int),
    "--dialect": ("dialect", str),
    "--max-chars": ("max_chars", int),
    "-n": ("number", bool),
    "-i": ("ignore_case", bool),
    "--paths": ("paths", bool),
    "--count": ("count", bool),
    "--introspect": ("introspect", bool),
}


def call_text(tool: str, args: dict) -> str:
    """``TOOL {ARGS as JSON}``: the call as an agent writes it."""
    import orjson

    return f"{tool} {orjson.dumps(args).decode()}"


def read_args(ref: str, words: tuple[str, ...] | list[str]) -> dict:
    """The read tool's arguments for REF and ctx-read's WORDS (``("--range", "41-", "-n")``)."""
    args: dict = {"ref": ref}
    i = 0
    while i < len(words):
        name, kind = FLAGS[words[i]]
        if kind is bool:
            args[name] = True
            i += 1
            continue
        value = words[i + 1]
        args[name] = int(value) if kind is int else value
        i += 2
    return args


class CallNext(Next):
    """A ``Next`` that words the next part of a read of REF as a ``read`` call."""

    def __init__(self, ref: str, max_chars: int = MAX_CHARS_DEFAULT):
        extra = () if max_chars == MAX_CHARS_DEFAULT else ("--max-chars", str(max_chars))
        super().__init__(ref, extra)

    def command(self, *args: str) -> str:
        return call_text("read", read_args(self.base or "", args + self.extra))
