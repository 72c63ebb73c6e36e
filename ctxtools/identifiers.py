"""The words a name is made of: the word-level helpers below ``ctxtools.analyzer`` (which
holds the one tokenizer and stop list every reader of a task or a document uses).

The compound helpers split a name into the words it is made of, which is how a line holding
``verifyJwtToken`` can match the query word ``jwt``: ``split_compound("verifyJwtToken")``
is ``['verify', 'Jwt', 'Token']``, ``compound_parts`` the same lower-cased as a tuple, and
``contains_parts`` tells whether one name's parts are a run inside another's.

``word_forms`` gives the other forms a plain English word takes in code (``caching``:
cache, cached). No click, no printing.
"""

from __future__ import annotations

import re
from functools import lru_cache

_PATH_SEP_RE = re.compile(r"\.|::")
# Parts of one underscore-free chunk: an acronym before a capitalised word (HTTP|Server),
# a capitalised or lower-case word with trailing digits, an all-caps run, a digit run.
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")
_NAME_RE = re.compile(r"[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*\Z")


def split_dotted(name: str) -> list[str]:
    """``auth.jwt.verify`` -> ``['auth', 'jwt', 'verify']`` (also Rust ``a::b``)."""
    return [p for p in _PATH_SEP_RE.split(name) if p]


def is_dotted(name: str) -> bool:
    return "." in name or "::" in name


@lru_cache(maxsize=65536)
def _split(name: str) -> tuple[str, ...]:
    parts: list[str] = []
    for chunk in name.split("_"):
        if not chunk:
            continue
        if chunk.isascii():
            parts.extend(_CAMEL_RE.findall(chunk))
        else:  # no case-boundary rules for other scripts: the chunk is one word
            parts.append(chunk)
    return tuple(parts)


def split_compound(name: str) -> list[str]:
    """The words of a compound name, case kept.

    ``verifyJwtToken`` -> verify, Jwt, Token; ``HTTPServer`` -> HTTP, Server;
    ``parse_url_v2`` -> parse, url, v2; ``__init__`` -> init; a plain word -> itself.
    """
    return list(_split(name))


@lru_cache(maxsize=65536)
def compound_parts(name: str) -> tuple[str, ...]:
    """``split_compound`` lower-cased, as a tuple (cached: lines repeat names a lot)."""
    return tuple(p.lower() for p in _split(name))


def is_compound(name: str) -> bool:
    return len(_split(name)) > 1


def contains_parts(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    """Whether NEEDLE (lower-cased parts) is a contiguous run of HAYSTACK's parts."""
    n = len(needle)
    if n == 0 or n > len(haystack):
        return False
    if n == 1:
        return needle[0] in haystack
    first = needle[0]
    for i in range(len(haystack) - n + 1):
        if haystack[i] == first and haystack[i : i + n] == needle:
            return True
    return False


def joins_run(parts: tuple[str, ...], joined: str) -> bool:
    """Whether some run of PARTS (lower-cased words of a name) spells JOINED.

    ``joins_run(compound_parts("QuerySet"), "queryset")`` and
    ``joins_run(compound_parts("verifyJwtToken"), "jwttoken")`` are true;
    ``joins_run(compound_parts("myJwToken"), "jwt")`` is not (the words do not line up).
    """
    if not joined:
        return False
    n = len(joined)
    for i, first in enumerate(parts):
        if not joined.startswith(first):
            continue
        acc = first
        j = i + 1
        while len(acc) < n and j < len(parts):
            acc += parts[j]
            j += 1
        if acc == joined:
            return True
    return False


def valid_identifier(name: str) -> bool:
    """Whether NAME is usable as an explicit identifier (``--ident``): a word or dotted path."""
    return bool(_NAME_RE.match(name))


_VOWELS = frozenset("aeiou")


def word_forms(word: str) -> list[str]:
    """Other forms of a plain English word that code may use for the same thing: its
    stem and the stem's usual endings (``caching``: cache, caches, cached; ``queries``:
    query). A rule of thumb, not a stemmer: a form that occurs nowhere costs nothing."""
    if len(word) < 4 or not word.isalpha() or not word.isascii():
        return []
    stems = _stems(word) or {word}
    out = set(stems)
    for stem in stems:
        if stem.endswith("y") and stem[-2] not in _VOWELS:
            out.update((stem[:-1] + "ies", stem[:-1] + "ied"))
            continue
        base = stem[:-1] if stem.endswith("e") else stem
        plural = stem + "es" if stem.endswith(("s", "x", "z", "ch", "sh")) else stem + "s"
        out.update((plural, base + "ed", base + "ing"))
    out.discard(word)
    return sorted(f for f in out if len(f) >= 4 or f in stems and len(f) == 3)


def _stems(word: str) -> set[str]:
    """The stems WORD may be an inflection of (none for a word with no usual ending)."""
    out: set[str] = set()
    if word.endswith(("ies", "ied")) and len(word) > 5:
        return {word[:-3] + "y"}
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            if stem[-1] == stem[-2] and stem[-1] not in _VOWELS and stem[-1] not in "ls":
                out.add(stem[:-1])  # running: run
            else:
                out.update((stem, stem + "e"))
            return out
    if word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        return {word[:-2]}
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return {word[:-1]}
    return out
