"""The one tokenizer and the one stop list: how any text -- a task, a memory section, a
skill's description, a file's path or its words -- becomes the words it is matched by.

A *token* is a run of word characters that starts with a letter or ``_`` (``bulk_create``,
``HandleStore``, ``café``, ``v2``; the digits a run starts with are passed over), or one
CJK character (CJK prose has no spaces: each character is a word of its own). A token is
dropped when it is a *stop word* (``is_stop``): one character (a CJK one aside), a
number, an English function word or a word tasks are phrased in rather than about
(``STOP_WORDS``, compared lower-cased), or a keyword that is only syntax
(``CODE_KEYWORDS``, compared as written) -- except that a text with no other word keeps
its ``SUBJECT_WORDS``, the stop words a text can be about (``FAILED``, ``null``). Words
inside the part of an absolute path
that only says where a file was on someone's machine (``/home/ann/venv/lib/python3.10/
site-packages/``), and the syntax of a Python traceback (``Traceback (most recent call
last):``, ``File "…", line 12, in``) or a code block's language tag, are no tokens either.

``words(text)`` is what every caller matches: each token lower-cased, followed by the
usable parts of a compound name (``HandleStore`` gives ``handlestore``, ``handle``,
``store``; ``get_db`` gives ``get_db`` alone: a part needs three characters and must not
be a stop word), every occurrence in order. A document's words are split the
same way: ``parts(word)`` is what ``retrieval.terms.Terms`` counts a file's word for, and
``WORD_BYTES`` is where a file's bytes break into words.

``identifiers_from_query`` is ctx-excerpt's older reading (dotted names kept whole), under
the same stop list. No I/O, no printing.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

from ctxtools.identifiers import compound_parts, is_dotted, split_dotted


def _wordlist(text: str) -> list[str]:
    return text.split()


# Words a bug report is phrased in that a text can also be *about*: a build log's FAILED,
# a null, a version. Stop words (below), except that a text of nothing else means them
# (``ctx-excerpt -q FAILED test.log``) and keeps them (``tokens``).
SUBJECT_WORDS = frozenset(
    _wordlist(
        """
    code function functions method methods
    traceback fail fails failed failing failure version versions
    expected actual result results broken break breaks behaviour behavior
    use used uses using example examples case cases correct correctly
    incorrect wrong right true false none null get gets set sets new old allow allows
    support supported
    """
    )
)

# English function words; the words a task is phrased in rather than about ("fix",
# "implement", "please"); the words a bug report is phrased in ("expected", "actual",
# "reproduce", "happens": SUBJECT_WORDS). Compared lower-cased: "The" and "the" both go.
# Words that are a topic in a text about code ("error", "test", "file", "value", "return")
# are no stop words: how common they are in a corpus is its BM25 or TF-IDF weight's
# business. "fix the bug in it" has no word at all.
STOP_WORDS = SUBJECT_WORDS | frozenset(
    _wordlist(
        """
    a about above after again against all already also am an and any are aren as at be
    because been before being below between both but by can cannot could couldn did didn do
    does doesn doing don down during each either else etc even ever every few for from
    further had hadn has hasn have haven having he her here hers herself him himself his how
    however i if in into is isn it its itself just let me might more most much must my
    myself neither no nor not now of off often on once one only onto or other others our
    ours ourselves out over own per please same second she should shouldn since so some
    still such than that the their theirs them themselves then there these they this those
    though three through thus to too two under until up upon us very via was wasn we were
    weren what whatever when whenever where whether which while who whom whose why will
    with within without won would wouldn yet you your yours yourself yourselves may first
    last recent hi hello thanks thank seem seems think know currently current
    bug bugs fix fixes fixed fixing issue issues implement implements implemented implementing
    make makes making need needs needed want wants wanted see seen look looks something
    anything everything thing things way ways
    work works working worked happen happens happened problem problems reproduce reproduced
    instead like tried try trying get_
    py js ts tsx jsx rs cpp hpp java md txt
    """
    )
)

# Keywords that are syntax and never the name of a topic (``class``, ``static``,
# ``default``, ``async``, ``string`` are: a task or a document may be about them; how
# common they are in a corpus is its weight's business). Compared exactly (Python's
# None/True/False are capitalised; a class named Self is not a keyword).
CODE_KEYWORDS = frozenset(
    _wordlist(
        """
    def self cls elif lambda nonlocal del pass fn func impl mut pub var let const dyn crate
    mod chan defer None True False nil this usize isize u8 u32 u64 i32 i64 f32 f64
    """
    )
)

# CJK scripts: kana, CJK ideographs (and extension A), Hangul, compatibility ideographs.
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
TOKEN_RE = re.compile(rf"[{CJK}]|[^\W\d{CJK}][^\W{CJK}]*")
MIN_PART = 3  # characters of a usable part of a compound name

# Bytes that are not part of a word become spaces (bytes >= 0x80 stay: UTF-8 sequences,
# split further by ``parts``): how a file's bytes break into words.
WORD_BYTES = bytes(b if (chr(b).isalnum() or b == 0x5F or b >= 0x80) else 0x20 for b in range(256))

# An absolute path (POSIX, home or drive): where it lives on the reporter's machine says
# nothing of the code; only its last components (after site-packages, if there) do.
_BACKSLASH_RE = re.compile(r"(?<=[\w.:])\\(?=[\w.])")
_ABS_PATH_RE = re.compile(r"(?<![\w.-])(?:[A-Za-z]:)?[/~][^\s\"'`:()\[\]<>,;]+")
_INSTALL_DIRS = frozenset({"site-packages", "dist-packages", "node_modules", "vendor"})
ABS_PATH_KEEP = 3  # the components of an absolute path whose words are words
# The syntax of a Python traceback and a code block's language tag: words no one wrote.
_BOILERPLATE_RE = re.compile(
    r'Traceback \(most recent call last\):|\bFile (?=")|", line \d+(?:, in\b)?|(?<=```)\w+'
)


# CJK's ranges as code points: a character class of them took ~3 ms to compile, at the
# start of every command that reads a task.
_CJK_RANGES = tuple(zip(map(ord, CJK[0::3]), map(ord, CJK[2::3]), strict=True))


def is_cjk(ch: str) -> bool:
    """Whether CH (one character) is of a CJK script: a word of its own."""
    if len(ch) != 1:
        return False
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _CJK_RANGES)


def is_stop(word: str) -> bool:
    """True for a word that selects nothing (see the module's docstring)."""
    if len(word) < 2:
        return not (word and is_cjk(word))
    return word.lower() in STOP_WORDS or word in CODE_KEYWORDS or word.isdigit()


def slashed(text: str) -> str:
    """TEXT with Windows path separators as slashes (``src\\project\\x.py``)."""
    return _BACKSLASH_RE.sub("/", text) if "\\" in text else text


def in_regions(pos: int, regions: list[tuple[int, int]]) -> bool:
    """Whether POS lies in one of REGIONS (sorted, not overlapping: as finditer gives
    them), in log time: a task may hold thousands of code spans or paths."""
    k = bisect.bisect_right(regions, (pos, math.inf)) - 1
    return k >= 0 and regions[k][0] <= pos < regions[k][1]


def location_spans(text: str) -> list[tuple[int, int]]:
    """The parts of TEXT's absolute paths that say where a file was on someone's machine
    (``/home/ann/venv/lib/python3.10/site-packages/``): their words are no tokens."""
    out = []
    for m in _ABS_PATH_RE.finditer(slashed(text)):
        parts = m.group().split("/")
        if len(parts) <= ABS_PATH_KEEP + 1:
            continue
        installed = [i for i, p in enumerate(parts) if p in _INSTALL_DIRS]
        keep = installed[-1] + 1 if installed else len(parts) - ABS_PATH_KEEP
        cut_at = len("/".join(parts[:keep]))
        if cut_at > 0:
            out.append((m.start(), m.start() + cut_at))
    return out


def tokens(text: str) -> Iterator[re.Match]:
    """The matches of TEXT's tokens that are not stop words, in order; for a text with no
    other, its ``SUBJECT_WORDS`` (a log searched for FAILED, a null)."""
    elsewhere = location_spans(text)
    if "```" in text or "line " in text:
        elsewhere = sorted(elsewhere + [m.span() for m in _BOILERPLATE_RE.finditer(text)])
    subject = []
    for m in TOKEN_RE.finditer(text):
        if elsewhere and in_regions(m.start(), elsewhere):
            continue
        if not is_stop(m.group()):
            yield m
            subject = None
        elif subject is not None and m.group().lower() in SUBJECT_WORDS:
            subject.append(m)
    yield from subject or ()


@lru_cache(maxsize=65536)
def usable_parts(word: str) -> tuple[str, ...]:
    """The parts of compound WORD that are words of their own: lower-cased, once each, of
    ``MIN_PART`` characters or more, no stop word; none for a plain word."""
    split = compound_parts(word)
    if len(split) < 2:
        return ()
    return tuple(p for p in dict.fromkeys(split) if len(p) >= MIN_PART and not is_stop(p))


def words(text: str) -> list[str]:
    """The words of TEXT (see the module's docstring), every occurrence, in order."""
    out: list[str] = []
    for m in tokens(text):
        word = m.group()
        out.append(word.lower())
        out.extend(usable_parts(word))
    return out


@lru_cache(maxsize=65536)
def parts(word: str) -> tuple[str, ...]:
    """The lower-cased parts a document's WORD (a run of ``WORD_BYTES``, decoded) is made
    of, split as tokens are: ``verifyJwtToken`` gives verify, jwt, token; ``缓存，然后``
    one part a character. A plain ASCII word gives itself."""
    if word.isascii():
        return compound_parts(word)
    out: list[str] = []
    for m in TOKEN_RE.finditer(word):
        out.extend(compound_parts(m.group()))
    return tuple(out)


def sequence(text: str) -> tuple[str, ...]:
    """Every token of TEXT as its lower-cased parts, in order, stop words kept: for
    finding a name written as words in a row (``webapp testing``, ``webappTesting``)."""
    seq: list[str] = []
    for m in TOKEN_RE.finditer(text):
        seq.extend(compound_parts(m.group()))
    return tuple(seq)


# A word of an excerpt query: a letter or underscore, then word characters; optionally
# joined by "." or "::" into a dotted path.
_DOTTED_TOKEN_RE = re.compile(r"[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*")


def identifiers_from_query(text: str, extra: Iterable[str] = ()) -> list[str]:
    """The identifiers of a query, in order of first appearance, then EXTRA's.

    Plain words, snake_case and camel/PascalCase names come out whole; a dotted path
    (``auth.jwt.verify`` or ``a::b``) gives its usable parts and then the whole path (kept
    when at least one part is usable). Stop words (``is_stop``) are dropped. EXTRA names
    (``--ident``) are taken as they are, never dropped as stop words.
    """
    out: list[str] = []
    seen: set[str] = set()

    def add(word: str) -> None:
        if word not in seen:
            seen.add(word)
            out.append(word)

    for match in _DOTTED_TOKEN_RE.finditer(text):
        token = match.group()
        if is_dotted(token):
            kept = [p for p in split_dotted(token) if not is_stop(p)]
            for part in kept:
                add(part)
            if kept:
                add(token)
        elif not is_stop(token):
            add(token)
    for name in extra:
        if name:
            add(name)
    return out
