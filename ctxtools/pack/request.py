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
