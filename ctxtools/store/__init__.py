"""The handle store: payloads on disk behind small handle cards (virtual memory for the model).

One concept a module; imports go downward only (a module imports those listed after it,
and ``ctxtools.fsutil``, ``ctxtools.errors``)::

    handles   HandleStore: paths, put_bytes/put_stream, records and cards, open/read_bytes,
              listing and removal; put_many, the access log and gc are delegated to:
    batch     put_many, the batched write, in named steps
    gc        garbage collection: evict over budget, sweep unreferenced blobs and temp files
    evict     the pure eviction strategies (lru, importance) and their GcBudget
    access    the access log (one line a read), its compaction, frecency, entries()
    root      StoreRoot: the store's paths, and its cards read back and listed (what access,
              batch and gc work on; HandleStore is one)
    payload   Payload: random access to verified bytes, lines, characters; Chain; open_spooled
    sniff     type detection (json, jsonl, text) and --type checking
    refs      names, references (Ref, parse_ref) and card records
    lineindex the .idx line/checksum index (LineIndex) and the Indexer that builds it
    disk      the store's directories, lock, errors and temp leftovers (the bytes are
              written by ctxtools.fsutil's one atomic write)

``from ctxtools.store import X`` keeps giving the names the store has always exported; each
is loaded from its module on first use, so ``import ctxtools.store`` costs nothing at a
command's start-up.
"""

from __future__ import annotations

_HOMES = {
    "handles": "HandleStore",
    "batch": "TASK_FILES BATCH_WORKERS PUT_KWARGS",
    "gc": "GC_MAX_ENTRIES",
    "access": "ACCESS_COMPACT_BYTES ACCESS_MAX_ENTRIES",
    "payload": "Payload Chain open_spooled open_bytes FULL_CHECK_BYTES",
    "sniff": "JSON_PARSE_LIMIT JSONL_LINE_LIMIT detect_type_head",
    "lineindex": "READ_CHUNK BLOCK_SIZE STRIDE HEAD_KEEP INDEX_MIN_BYTES Indexer LineIndex "
    "index_stream",
    "refs": "DEFAULT_SESSION NAME_RE SHA_PREFIX_RE SHA256_RE REF_PREFIX_LEN TYPES "
    "PUBLIC_FIELDS PREVIEW_CHARS validate_name validate_session Ref parse_ref public_card "
    "looks_like_card card_ref make_preview",
    "disk": "TMP_STALE_SECONDS",
}
_HOME = {name: f"{__name__}.{mod}" for mod, names in _HOMES.items() for name in names.split()}
_HOME.update(parse_size="ctxtools.fsutil", TMP_PREFIX="ctxtools.fsutil")


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))
