"""Whether a file's bytes are text: the toolkit's one rule, asked wherever bytes are read.

``is_binary(head)`` is true when the first ``BINARY_PROBE`` bytes hold a NUL (git's rule),
or when more than ``BINARY_BAD_SHARE`` of them are outside valid UTF-8 (random or
compressed bytes that hold no NUL). Text in another 8-bit encoding stays text: its bad
bytes are a few letters. ctx-count, the store's type sniffing, the repo map, the pack,
ctx-excerpt, memory, skills and instructions all ask this; what a *source* file is beyond
that (its role, noise, generated) is ``classify``'s answer.

Nothing is read here, and nothing of the toolkit is imported: the store sits above it.
"""

from __future__ import annotations

BINARY_PROBE = 8192  # bytes of a file's head that decide whether it is binary
BINARY_BAD_SHARE = 0.3  # share of a head's bytes outside valid UTF-8 that makes it binary


def is_binary(head: bytes) -> bool:
    """Whether HEAD (the first bytes of a file or payload; more is fine) is binary: a NUL in
    its first BINARY_PROBE bytes, or more than BINARY_BAD_SHARE of them outside UTF-8."""
    if head.find(b"\0", 0, BINARY_PROBE) >= 0:
        return True
    probe = head[:BINARY_PROBE]
    if probe.isascii():
        return False
    import codecs

    try:
        codecs.utf_8_decode(probe, "strict", False)  # a character cut at the end is fine
        return False
    except UnicodeDecodeError:
        pass
    text = probe.decode("utf-8", "surrogateescape")
    bad = sum(1 for ch in text[:-3] if "\udc80" <= ch <= "\udcff")  # a cut last char is fine
    return bad > BINARY_BAD_SHARE * len(probe)
