"""The one file format of the store's caches: a memo file.

Every cache the commands keep between runs (the scan cache and its journal, the repo map's
and the vocabulary's memos, the memory section's chunks and vectors, the semantic vectors
and token ids, the tokenizer's parsed ranks, the mentions' basename index) is a memo file:

    ctx-memo-v1 KIND\\n      the magic line: the format, then what the file holds
    8 bytes                 the xxh3-64 of the body
    body                    ``marshal`` (version 4) of plain values

One rule for damage: a file that is missing, unreadable, of another kind or format,
whose digest does not match or whose body does not load is a *miss* (``load`` says which,
for a note), never an error; the cache is built again and the file replaced. One size
policy: a body over ``MAX_BYTES`` is not written (``save`` returns the reason), so no
cache grows without bound; each cache also keeps its own count limit. One key scheme:
``key(*material)``, the xxh3-64 (hex) of the material's strings, names a file for what it
depends on. Files are written atomically (``fsutil.atomic_write``), not fsynced unless
asked: the digest turns a torn file into a miss.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NamedTuple

FORMAT = b"ctx-memo-v1 "
MAX_BYTES = 256 << 20  # a cache body over 256 MiB is not written


class Loaded(NamedTuple):
    """What ``load`` found: the VALUE (None on a miss) and, on a miss, why: "missing",
    "damaged" or the reason the file could not be read."""

    value: object
    problem: str | None


def key(*material: str) -> str:
    """The key of what a cache file depends on: the xxh3-64 (hex) of MATERIAL's strings
    (undecodable characters kept as their bytes)."""
    import xxhash

    return xxhash.xxh3_64_hexdigest(
        "\0".join(material).encode("utf-8", "surrogateescape")
    )


def _magic(kind: str) -> bytes:
    return FORMAT + kind.encode("ascii") + b"\n"


def encode(kind: str, value: object) -> bytes:
    """The bytes of a memo file of KIND holding VALUE (plain values only: ValueError
    otherwise)."""
    return b"".join(_pieces(kind, value))


def _pieces(kind: str, value: object) -> list[bytes]:
    """``encode``'s bytes as [head, body]: a large body is written as it is, not copied
    behind its head (a vocabulary memo's body is tens of MB)."""
    import marshal

    import xxhash

    body = marshal.dumps(value, 4)
    return [_magic(kind) + xxhash.xxh3_64_digest(body), body]


def decode(kind: str, blob: bytes) -> object | None:
    """The value a memo file of KIND holds, or None when BLOB is not one (another kind or
    format, a digest that does not match, a body that does not load)."""
    import marshal

    import xxhash

    magic = _magic(kind)
    if not blob.startswith(magic):
        return None
    view = memoryview(blob)  # (the body is read in place: a vocabulary memo is 10+ MB)
    digest, body = bytes(view[len(magic) : len(magic) + 8]), view[len(magic) + 8 :]
    if len(digest) != 8 or xxhash.xxh3_64_digest(body) != digest:
        return None
    try:
        return marshal.loads(body)
    except Exception:  # marshal raises several kinds of error on bad bytes
        return None


def load(path: str | os.PathLike, kind: str) -> Loaded:
    """The memo file at PATH, read and checked: its value, or a miss and why."""
    try:
        blob = Path(path).read_bytes()
    except FileNotFoundError:
        return Loaded(None, "missing")
    except OSError as exc:
        return Loaded(None, str(exc.strerror or exc))
    value = decode(kind, blob)
    return Loaded(value, None if value is not None else "damaged")


def save(path: str | os.PathLike, kind: str, value: object, durable: bool = False) -> str | None:
    """Write VALUE as the memo file of KIND at PATH (atomically); the reason when it was
    not written (a value marshal cannot write, a body over ``MAX_BYTES``, a store that
    cannot be written)."""
    from ctxtools.fsutil import atomic_write

    try:
        pieces = _pieces(kind, value)
    except ValueError as exc:
        return str(exc)
    size = sum(map(len, pieces))
    if size > MAX_BYTES:
        return f"{kind} cache of {size:,} bytes is over {MAX_BYTES:,}; not kept"
    return atomic_write(Path(path), pieces, durable=durable)


# --- large buffers ---------------------------------------------------------------------
# glibc's malloc serves a large allocation (128 KiB and up, at first) with a mapping of its
# own, unmapped when freed; but each time such a block is freed, it raises that threshold
# to the block's size (up to 32 MiB), so that the next buffers of that size come from the
# heap instead and stay there once freed. A command that frees a cache file's bytes (a
# scan cache, a decompressed body, a memo written) before it makes the next large buffers
# (the vocabulary index and its file, the files' bytes) stacks each on the heap beside
# the last: on kafka's tree a pack's peak RSS grew by about 25 MB so. A fixed threshold
# (``mallopt(M_MMAP_THRESHOLD)``, what ``MALLOC_MMAP_THRESHOLD_`` sets) keeps every buffer
# of a MiB or more in a mapping of its own, given back when freed; smaller ones and small
# objects are not concerned. Fixing it also fixes the heap's trim threshold, at twice the
# first one: set high (M_TRIM_THRESHOLD), or the heap's top is given back and taken again
# at every free (a warm pack about 10% slower). Mapping every large buffer costs page
# faults too (an empty-store pack of redis 4% slower with it fixed from the start), so it is
# asked for only where the peak is: before the vocabulary index is built
# (``retrieval.vocab``; kafka's run that builds it peaks at 185 MB with it, 214 without).
# Elsewhere (another C library) nothing happens.

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameters
M_TRIM_THRESHOLD = -1
THRESHOLD = 1 << 20  # a buffer this large or larger has its own mapping
TRIM_THRESHOLD = 64 << 20  # free memory at the heap's top kept for the next allocations
_released: list[bool] = []


def release_large_buffers() -> bool:
    """Fix glibc's mmap threshold at THRESHOLD (once a process); whether it is fixed."""
    if _released:
        return _released[0]
    ok = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None)
            # (glibc's only: musl has a mallopt that does nothing, and no such function)
            if hasattr(libc, "gnu_get_libc_version"):
                ok = bool(libc.mallopt(M_MMAP_THRESHOLD, THRESHOLD))
            if ok:
                libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
        except (OSError, AttributeError, ImportError):
            ok = False
    _released.append(ok)
    return ok
