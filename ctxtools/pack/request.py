"""A pack request from a command line's options, and what a finished pack has to say.

``ctx-pack`` parses its options and hands them here: ``output_format`` settles --format
with --json, ``ruler_encoding`` says which encoding counts the pack, ``request_from_options``
builds the ``PackRequest`` and ``pack_messages`` lists what goes to stderr. Options are keyed
by the click command's parameter names; the fields an option fills as it is are the ones
its entry in ``ctxtools.options.pack`` names.
"""

from __future__ import annotations

from collections.abc import Mapping

from ctxtools.errors import UsageError
from ctxtools.options import request_fields
from ctxtools.options.pack import PACK
from ctxtools.pack.model import Pack, PackRequest


def output_format(fmt: str, as_json: bool) -> str:
    """The format --format FMT and --json ask for together (--json is --format json)."""
    if not as_json:
        return fmt
    if fmt not in ("markdown", "json"):
        raise UsageError("--json and --format xml contradict each other")
    return "json"


def request_from_options(
    opts: Mapping,
    *,
    task: str,
    paths: list[str],
    retrieval: str | None,
    listed: list[str] = (),
) -> PackRequest:
    """The request of OPTS for TASK and the named PATHS. RETRIEVAL is the memory scoring
    method (None: the library's default)."""
    return PackRequest(
        task=task,
        paths=paths,
        role_shares=dict(opts["role_shares"]) or None,
        fmt=output_format(opts["fmt"], opts["as_json"]),
        use_map=not opts["no_map"],
        retrieval=retrieval,
        listed=tuple(listed),
        **request_fields(PACK, opts),
    )


def ruler_encoding(
    model: str | None, encoding: str | None, *, counter_chosen: bool, profiles_file: str | None
) -> str | None:
    """The encoding that counts a pack: ENCODING, else MODEL's (resolved with the profiles
    of PROFILES_FILE), unless another counter was chosen (a tokenizer file, the heuristic)."""
    if encoding is None and model and not counter_chosen:
        from ctxtools import profiles as prof

        return prof.resolve(model, prof.load_profiles(profiles_file)).encoding
    return encoding


def pack_messages(pack: Pack) -> list[str]:
    """What a finished pack says on stderr: its notes, then one line a redacted secret."""
    return [
        *pack.notes,
        *(f"redacted {r['kind']} in {r['where']} line {r['line']}" for r in pack.redactions),
    ]


def check_options(opts: Mapping, fmt: str) -> list[str]:
    """The usage errors of OPTS together (FMT: ``output_format``'s) and the notes they call
    for."""
    if opts["split"] is not None and fmt == "xml":
        raise UsageError(
            "--split does not go with --format xml (an XML pack is one document)",
            hint="split the Markdown or --format json pack",
        )
    if opts["split"] is not None and opts["copy"]:
        raise UsageError(
            "--copy takes one document, --split makes several",
            hint="copy each part from its -o file",
        )
    if opts["tokens"] is not None and (opts["model"] or opts["limit"]):
        return ["note: --tokens gives the whole budget; --model/--limit only choose the ruler"]
    return []


def short_t(value: str | None, task: str | None, tokens: int | None) -> tuple[str | None, bool]:
    """Where ``-t VALUE`` goes: (the task, whether VALUE is the budget). ``-t`` was ctx-pack's
    ``--task`` and is ``--tokens`` in every command now (docs/options.md): a whole number
    with a task given is the budget, text is the task's old spelling (the caller notes it),
    a whole number and no task is an error that says what to type."""
    if value is None:
        return task, False
    # (a signed whole number is a budget too: --tokens' own check says what is wrong with
    # -5, where "-t is --tokens, a whole number" said it was no number)
    if not value.strip().lstrip("+-").isdigit() or value.strip()[1:2] in ("+", "-"):
        if task is not None:
            raise UsageError(
                f"-t {value!r}: -t is --tokens, a whole number",
                hint="the task goes in -q/--task, once",
            )
        return value, False
    if task is None:
        raise UsageError(
            f"-t {value.strip()} is ambiguous: -t was ctx-pack's --task and is --tokens now",
            hint=f"type --tokens {value.strip()} -q TASK for a budget, or -q {value.strip()} "
            "for that task",
        )
    if tokens is not None:
        raise UsageError("-t and --tokens both give the budget", hint="give it once")
    return task, True


OLD_T_NOTE = (
    "note: -t TEXT is the task's old spelling: type -q TEXT or --task TEXT "
    "(-t is --tokens in every ctx command)"
)


def check_output(output: str | None, files_from: str | None, task_from_stdin: bool) -> None:
    """Refuse -o OUTPUT when it is the --files-from list or standard input (the library
    checks the files and options it reads itself); and an empty name
    (``overwrite.empty_output``)."""
    from ctxtools.overwrite import empty_output

    empty_output(output)
    if not output or output == "-":
        return
    from ctxtools.pack.inputs import OutputGuard

    sources = []
    if files_from not in (None, "-"):
        sources.append((f"--files-from {files_from}", files_from))
    if task_from_stdin or files_from == "-":
        sources.append(("standard input", "/dev/stdin"))
    OutputGuard(output).check(sources)


def document(pack: Pack, fmt: str, split: int | None, ruler) -> tuple[bytes, list | None]:
    """The bytes of PACK in FMT, whole or as --split's parts (then the parts too)."""
    parts = None
    if split is not None:
        from ctxtools.pack import split as splitting

        parts = splitting.split_pack(pack.text, ruler, split)
    if fmt == "json":
        import orjson

        doc = pack.as_dict()
        if parts is not None:
            doc["parts"] = [p.as_dict() for p in parts]
        try:
            return orjson.dumps(doc, option=orjson.OPT_APPEND_NEWLINE), parts
        except TypeError:  # a name or a text with a byte that is not UTF-8: U+FFFD there
            from ctxtools.fsutil import json_texts

            return orjson.dumps(json_texts(doc), option=orjson.OPT_APPEND_NEWLINE), parts
    text = pack.text if parts is None else splitting.joined(parts)
    return text.encode("utf-8", "surrogateescape"), parts


def write_document(output: str, data: bytes, parts: list | None, fmt: str) -> list[str]:
    """Write ``-o OUTPUT``: DATA, or (a split Markdown pack) each of PARTS to its own file;
    the notes to say."""
    from ctxtools.errors import InputError
    from ctxtools.fsutil import write_output

    if parts is not None and fmt != "json":
        from ctxtools.pack import split as splitting

        splitting.write_parts(output, parts)
        from ctxtools.quoting import quote_name

        stale = [quote_name(p) for p in splitting.stale_parts(output, len(parts))]
        if len(stale) == 1:
            return [f"note: {stale[0]} is a part of an earlier, longer split (left as it was)"]
        if stale:
            return [
                f"note: {stale[0]} to {stale[-1]} ({len(stale)} files) are parts of an earlier, "
                "longer split (left as they were: remove them before reading the parts together)"
            ]
        return []
    problem = write_output(output, data)
    if problem:
        raise InputError(f"-o {output}: cannot write ({problem})")
    return []
