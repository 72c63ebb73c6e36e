"""The tickets a text cites: ``#1234``, ``gh-1234``, ``bpo-4455``, ``JENKINS-19446``.

A task that cites a ticket ("a simpler fix of JENKINS-19446", "a regression from #6807")
points at the commits that cited it before: the functions they changed are where that
ticket's code is. ``task_refs`` reads a task's (its prose, as ``prose.said`` leaves it);
``message_refs`` a commit message's, where a link to the project's own issue or pull
request (``https://github.com/o/r/pull/1234``) cites it too. A ticket is written
normalised: ``#N`` for a number of the project's own tracker (``#N``, ``gh-N``, ``GH-N``,
``issue N``, a link's ``/issues/N`` or ``/pull/N``), ``bpo-N`` for Python's old tracker,
``KEY-N`` for a tracker's project key (Jira's, upper case as written).

What is not a ticket: a number of fewer than ``MIN_DIGITS`` digits (``#1``, ``step #12``:
a list's item, never matched against a history of thousands of commits), another
project's (``numpy/numpy#1234``), the upper-case words that standards and encodings are
written with (``UTF-8``, ``SHA-256``, ``ISO-8601``, ``RFC-7231``, ``CVE-2021-...``, and
licences', ``GPL-3``: ``NOT_KEYS``), and what a task quotes as code or a log (a fenced
block, a code span: a build's ``Run #4567`` is no ticket). A task citing more than
``MAX_REFS`` tickets is a pasted log or a changelog, and cites none. A history that cites
one ticket in many commits says little of any one of them; ``retrieval.history`` caps
that.

Linear in the text's length, no I/O.
"""

from __future__ import annotations

import re

MIN_DIGITS = 3
MAX_REFS = 10
NOT_KEYS = frozenset({
    "AES", "ASCII", "CP", "CRC", "CVE", "CWE", "EC", "ECMA", "ES", "GB", "GMT", "HTTP",
    "IEC", "IEEE", "ISO", "KB", "LZ", "MB", "MD", "PEP", "RFC", "RSA", "SHA", "SSL", "TB",
    "TLS", "UCS", "UTC", "UTF", "WIN", "X86", "ARM64",
    "GPL", "LGPL", "AGPL", "BSD", "MPL", "EPL",  # licences
})  # fmt: skip
_NUM = r"(\d{" + str(MIN_DIGITS) + r",9})\b"
# Not after a word, a path or another ref's parts: ``o/r#12``, ``a.b#123``, ``&#123;``.
_BEFORE = r"(?<![\w/.&#-])"
_REF_RE = re.compile(
    _BEFORE
    + r"(?:#"
    + _NUM
    + r"|(?:gh|GH)-#?"
    + _NUM
    + r"|(?:issue|Issue|ISSUE)\s#?"
    + _NUM
    + r"|(?:bpo|BPO)-"
    + _NUM
    + r"|([A-Z][A-Z0-9]{1,14})-(\d{1,9})\b)"
)
# A link to an issue or a pull request of a code host (in a commit message: the project's).
_LINK_RE = re.compile(
    r"https?://[^\s/]+/[^\s/]+/[^\s/]+/(?:-/)?(?:issues|pull|pulls|merge_requests)/"
    r"(\d+)\b"
)


def _may_cite(text: str) -> bool:
    """Whether TEXT could write a ticket at all (the regular expression's cheap test)."""
    return "#" in text or "-" in text or "ssue" in text or "SSUE" in text


def _number(digits: str) -> str:
    """A number of the project's own tracker, written as ``#N`` (no leading zeros)."""
    return "#" + (digits.lstrip("0") or "0")


def _found(text: str) -> list[tuple[int, str]]:
    """(where, the ticket normalised) of each ticket TEXT writes, in order."""
    out = []
    for m in _REF_RE.finditer(text):
        num = m.group(1) or m.group(2) or m.group(3)
        if num:
            out.append((m.start(), _number(num)))
        elif m.group(4):
            out.append((m.start(), "bpo-" + m.group(4)))
        elif m.group(5) not in NOT_KEYS and m.group(6).strip("0"):
            out.append((m.start(), f"{m.group(5)}-{int(m.group(6))}"))
    return out


def task_refs(text: str, code=None) -> tuple[str, ...]:
    """The tickets TEXT cites outside its code (CODE: a callable giving its code regions,
    sorted spans, asked only when TEXT cites some), normalised (see the module's
    docstring), once each, in the order first written; none of more than ``MAX_REFS``."""
    if not _may_cite(text):
        return ()
    found = _found(text)
    if found and code is not None:
        from ctxtools.analyzer.tokenizer import in_regions

        regions = code()  # (one reading of the text: what of it is code is asked after)
        found = [(at, ref) for at, ref in found if not in_regions(at, regions)]
    got = dict.fromkeys(ref for _at, ref in found)
    return tuple(got) if len(got) <= MAX_REFS else ()


def message_refs(text: str) -> set[str]:
    """The tickets a commit message cites: as ``task_refs``, and its links to an issue or a
    pull request (``#N``)."""
    got: set[str] = set()
    if _may_cite(text):
        got.update(ref for _at, ref in _found(text))
    if "://" in text:
        got.update(_number(m.group(1)) for m in _LINK_RE.finditer(text))
    return got
