"""From a task's words to the identifiers worth looking for in code.

``identifiers_from_query("fix auth.jwt.verify when verifyJwtToken fails")`` gives
``['auth', 'jwt', 'verify', 'auth.jwt.verify', 'verifyJwtToken', 'fails']``: words,
``snake_case`` and ``camelCase``/``PascalCase`` names kept whole, dotted (and Rust ``::``)
paths as their parts plus the whole path; English stop-words, a few very common code
keywords and one-letter words dropped; duplicates dropped (first occurrence wins), so the
result is deterministic and in the query's order.

The compound helpers split a name into the words it is made of, which is how a line holding
``verifyJwtToken`` can match the query word ``jwt``: ``split_compound("verifyJwtToken")``
is ``['verify', 'Jwt', 'Token']``, ``compound_parts`` the same lower-cased as a tuple, and
``contains_parts`` tells whether one name's parts are a run inside another's.

Used by ctx-excerpt; ctx-pack and ctx-repomap --query may use it too. No click, no printing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


def _wordlist(text: str) -> list[str]:
    return text.split()


# English function words, and the words a task is phrased in rather than about. Compared
# lower-cased: "The" and "the" are both dropped.
STOP_WORDS = frozenset(
    _wordlist(
        """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn doing
    don down during each either else etc even ever every few for from further had hadn has hasn
    have haven having he her here hers herself him himself his how however i if in into is isn
    it its itself just let me more most much must my myself neither no nor not now of off often
    on once only onto or other others our ours ourselves out over own per please same she
    should shouldn since so some such than that the their theirs them themselves then there
    these they this those though through thus to too under until up upon us very via was wasn
    we were weren what whatever when whenever where whether which while who whom whose why will
    with within without won would wouldn yet you your yours yourself yourselves
    bug bugs fix fixes fixed fixing issue issues implement implements implemented implementing
    make makes making need needs needed want wants wanted see seen look looks something
    anything everything thing things way ways code function functions method methods
    py js ts tsx jsx rs cpp hpp java md txt
    """
    )
)

# Keywords that occur in nearly every file of their language, so they select nothing.
# Compared exactly (Python's None/True/False are capitalised; a class named Class is not a
# keyword).
CODE_KEYWORDS = frozenset(
    _wordlist(
        """
    def class return import from self cls this func fn let const var pub impl mut public
    private protected static final void new true false null nil None True False elif else if
    for while try except catch finally raise throw throws async await yield lambda pass break
    continue switch case default extends implements package struct enum trait mod crate
    super interface type int str bool float char byte string usize isize u8 u32 u64 i32 i64
    f32 f64 go defer chan of in is not and or as with del global nonlocal assert export use
    unsafe dyn
    """
    )
)

# A word of the query: a letter or underscore, then word characters; optionally joined by
# "." or "::" into a dotted path.
_TOKEN_RE = re.compile(r"[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*")
_PATH_SEP_RE = re.compile(r"\.|::")
# Parts of one underscore-free chunk: an acronym before a capitalised word (HTTP|Server),
# a capitalised or lower-case word with trailing digits, an all-caps run, a digit run.
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")
_NAME_RE = re.compile(r"[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*\Z")


def is_stop_word(word: str) -> bool:
    """True for words that select nothing: stop-words, common keywords, one letter."""
    return len(word) < 2 or word.lower() in STOP_WORDS or word in CODE_KEYWORDS


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


def identifiers_from_query(text: str, extra: Iterable[str] = ()) -> list[str]:
    """The identifiers of a query, in order of first appearance, then EXTRA's.

    Plain words, snake_case and camel/PascalCase names come out whole; a dotted path
    (``auth.jwt.verify`` or ``a::b``) gives its usable parts and then the whole path (kept
    when at least one part is usable). Stop-words, common keywords and one-letter words are
    dropped. EXTRA names (``--ident``) are taken as they are, never dropped as stop-words.
    """
    out: list[str] = []
    seen: set[str] = set()

    def add(word: str) -> None:
        if word not in seen:
            seen.add(word)
            out.append(word)

    for match in _TOKEN_RE.finditer(text):
        token = match.group()
        if is_dotted(token):
            parts = [p for p in split_dotted(token) if not is_stop_word(p)]
            for part in parts:
                add(part)
            if parts:
                add(token)
        elif not is_stop_word(token):
            add(token)
    for name in extra:
        if name:
            add(name)
    return out


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
