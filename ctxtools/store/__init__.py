"""The handle store: payloads on disk behind small handle cards (see ``handles``).

``from ctxtools.store import X`` gives today's public names; each is loaded from its module
on first use, so ``import ctxtools.store`` costs nothing at a command's start-up.
"""

from __future__ import annotations

import importlib

_HOME = {
    name: "handles"
    for name in (
        "DEFAULT_SESSION NAME_RE SHA_PREFIX_RE SHA256_RE REF_PREFIX_LEN TYPES PUBLIC_FIELDS "
        "READ_CHUNK BLOCK_SIZE STRIDE FULL_CHECK_BYTES INDEX_MIN_BYTES TASK_FILES "
        "BATCH_WORKERS PUT_KWARGS HEAD_KEEP JSON_PARSE_LIMIT JSONL_LINE_LIMIT PREVIEW_CHARS "
        "ACCESS_COMPACT_BYTES ACCESS_MAX_ENTRIES TMP_PREFIX TMP_STALE_SECONDS GC_MAX_ENTRIES "
        "validate_name validate_session Ref parse_ref public_card looks_like_card card_ref "
        "Indexer LineIndex index_stream Payload open_spooled open_bytes detect_type_head "
        "make_preview HandleStore parse_size _Chain"
    ).split()
}


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))
