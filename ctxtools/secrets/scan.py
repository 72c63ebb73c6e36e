"""Secrets by content: ``find_secrets(text)`` and ``redact(text)`` over the rules of
``ctxtools.secrets.rules``: one pass of the rules' gates (an RE2 set) says which rules
can match a text; only those run, and each match passes its rule's checks.

Replacement keeps the number of lines: a secret spanning several lines (a private-key
block) becomes one marker followed by the same number of newlines, so line numbers
printed beside an excerpt stay true.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ctxtools.secrets.rules import RULES

MARKER = "[secret redacted: {kind}]"
KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule[0] for rule in RULES))

# ---------------------------------------------------------------------------------------
# Secrets by content
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One secret that ``redact`` replaced: its kind and the 1-based line it starts on."""

    kind: str
    line: int


_ESCAPED = frozenset("ntrbfvu")  # \\n \\t ... : the letter that ends an escape sequence
_HEX = frozenset("0123456789abcdefABCDEF")


def _edge(text: str, start: int) -> bool:
    """Whether START begins a word: not preceded by a letter, a digit, ``_`` or ``-``,
    unless that character ends an escape sequence (``\\n``, ``\\t``, ``\\u0022``,
    ``\\x41``, ``%3D``), which separates like a space."""
    if start == 0:
        return True
    c = text[start - 1]
    if not (c.isascii() and (c.isalnum() or c in "_-")):
        return True
    if start >= 2 and text[start - 2] == "\\" and c in _ESCAPED:
        return True
    if start >= 3 and text[start - 3] == "%" and _HEX.issuperset(text[start - 2 : start]):
        return True
    if (
        start >= 4
        and text[start - 4 : start - 2] == "\\x"
        and _HEX.issuperset(text[start - 2 : start])
    ):
        return True
    return (
        start >= 6
        and text[start - 6 : start - 4] == "\\u"
        and _HEX.issuperset(text[start - 4 : start])
    )


_AWS_CONTEXT = re.compile(r"(?i)access[_\-]?key|key[_\-]?id")


def _aws_id(text: str, start: int, end: int) -> bool:
    """An AWS key id's 16 characters hold a digit (a random one lacks all six digits of
    base32 3.6% of the time), or its line calls it an access key id: a capitalised word
    such as ASIAPACIFICSOUTHEAST is not a key."""
    if any(ch in "234567" for ch in text[start + 4 : end]):
        return True
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", end)
    return _AWS_CONTEXT.search(text, lo, hi if hi >= 0 else len(text)) is not None


def _hex_mix(value: str) -> bool:
    tail = value[2:] if value[:2] in ("SK",) else value.split("-", 1)[-1]
    return any(c.isdigit() for c in tail) and any(c.isalpha() for c in tail)


def _b64(value: str) -> bytes | None:
    import base64
    import binascii

    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        return None


def _discord(value: str) -> bool:
    """A Discord token's first part is the bot's numeric id in base64."""
    raw = _b64(value.split(".", 1)[0].replace("+", "-").replace("/", "_"))
    return raw is not None and len(raw) >= 17 and raw.isdigit()


def _docker(value: str) -> bool:
    """A docker ``auth`` value is base64 of ``user:password``."""
    raw = _b64(value.replace("+", "-").replace("/", "_").rstrip("="))
    return raw is not None and b":" in raw[1:-1] and raw.isascii()


# Values that stand for a credential without being one (compared lower-cased, with
# everything but letters and digits removed).
_PLACEHOLDER_WORDS = """password passwd pass pwd secret secrets changeme changeit example sample
    test
    testing tests dummy fake placeholder redacted none null nil true false undefined
    default admin root user username token apikey key value string foo bar baz qux abc
    abc123 123456 12345678 password123 letmein hunter2 mypassword yourpassword secretkey
    mysecret yoursecret supersecret topsecret s3cret sekrit required optional empty env
    notasecret insecure hidden masked omitted unset todo tbd fixme"""
PLACEHOLDERS = frozenset(_PLACEHOLDER_WORDS.split())
_PLACEHOLDER_PARTS = (
    "example",
    "placeholder",
    "changeme",
    "your",
    "xxxx",
    "****",
    "dummy",
    "redacted",
    "fake",
    "sample",
    "replace",
    "insert",
    "test",
    "password",
    "passwd",
    "secret",
    "...",
    "…",
)
_TEMPLATE = re.compile(r"[${}<>()\[\]`]|%\(|%s")
_WORDS = re.compile(r"[A-Za-z]+(?:[-_.][A-Za-z]+)*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*)*")


def _classes(value: str) -> int:
    """How many of lower case, upper case, digits and other characters VALUE holds."""
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


def _placeholder(value: str) -> bool:
    """A placeholder (``changeme``, ``<password>``, ``xxxxxxxx``, ``test…``, ``…password…``,
    ``...``), a template or an expression (``${DB_PASSWORD}``, ``{{ pw }}``, ``%(pw)s``),
    or shorter than 6 characters."""
    if len(value) < 6 or _TEMPLATE.search(value):
        return True
    low = value.lower()
    if "".join(c for c in low if c.isalnum()) in PLACEHOLDERS or len(set(low)) <= 2:
        return True
    return any(part in low for part in _PLACEHOLDER_PARTS)


def url_password(value: str) -> bool:
    """Whether VALUE, the password of a URL's ``user:password@``, is one: not a placeholder
    (``_placeholder``). A URL's own syntax makes the place certain, so a short or simple
    password counts (``postgres://app:s3cret@db``)."""
    return not _placeholder(value)


def credential_value(value: str, bare: bool = False) -> bool:
    """Whether VALUE, assigned to a password-like key, looks like a credential rather than
    a test value, a placeholder, a template or a name: at least 8 characters without white
    space, of at least three kinds (lower case, upper case, digits, others; two kinds
    suffice from 16 characters), not repetitive (as many distinct characters as a third of
    its length); not a placeholder (``changeme``, ``<password>``, ``xxxxxxxx``, ``test…``,
    ``…password…``, ``...``), not a template or an expression (``${DB_PASSWORD}``,
    ``{{ pw }}``, ``%(pw)s``, ``os.environ[...]``), not words joined by ``-``, ``_`` or ``.``
    (``X-Access-Token``: a header's name); and, without quotes (BARE), not a name
    (``settings.DB_PASSWORD``, ``db_password``, ``PASSWORD``, ``OutputToken``: a variable
    or a type)."""
    n = len(value)
    if n < 8 or any(c.isspace() for c in value) or _placeholder(value):
        return False
    kinds = _classes(value)
    if kinds < 2 or (kinds == 2 and n < 16) or len(set(value)) * 3 < min(n, 36):
        return False
    if _WORDS.fullmatch(value):  # "X-Xet-Access-Token", "some_setting.name": words
        return False
    if bare:
        if value[0] in "!&*|>%@" or value.endswith((":", ",")):
            return False
        if _NAME.fullmatch(value) and not any(c.isdigit() for c in value):
            return False  # TextGenerationStreamOutputToken: a type, a variable
        if _NAME.fullmatch(value) and ("_" in value or "." in value or value.isupper()):
            return False
    return True


def _passes(checks: tuple[str, ...], text: str, start: int, end: int, m) -> bool:
    for check in checks:
        if check == "lines":
            continue
        if check == "edge":
            ok = _edge(text, m.start())
        elif check == "aws-id":
            ok = _aws_id(text, start, end)
        elif check == "hex-mix":
            ok = _hex_mix(text[start:end])
        elif check == "discord":
            ok = _discord(text[start:end])
        elif check == "docker":
            ok = _docker(text[start:end])
        elif check == "url":
            ok = url_password(text[start:end])
        else:  # "value" or "bare"
            ok = credential_value(text[start:end], bare=check == "bare")
        if not ok:
            return False
    return True


@functools.cache
def _compiled():
    """(the gates as one RE2 set, or None; per gate, its rules compiled, and for a gate of
    ``lines`` rules its RE2 regex), made once on first use (compiling costs a few ms a
    command that never redacts should not pay)."""
    gates: dict[str, list] = {}
    for order, (kind, gate, pattern, group, checks) in enumerate(RULES):
        gates.setdefault(gate, []).append((order, kind, pattern, group, checks))
    ordered = list(gates.items())
    try:
        import re2

        options = re2.Options()
        options.max_mem = 64 << 20
        gate_set = re2.Set.SearchSet(options)
        for gate, _ in ordered:
            gate_set.Add(gate.encode())
        gate_set.Compile()
        finders = [
            re2.compile(gate.encode(), options)
            if any("lines" in rule[4] for rule in rules)
            else None
            for gate, rules in ordered
        ]
    except Exception:  # no RE2 here: every rule runs on every text (slower, same result)
        gate_set, finders = None, [None] * len(ordered)
    return gate_set, [rules for _, rules in ordered], finders


@functools.cache
def _regex(pattern: str) -> re.Pattern:
    """A rule's pattern, compiled the first time its gate matches."""
    return re.compile(pattern)


def _gate_lines(text: str, data: bytes, finder) -> list[tuple[int, int]]:
    """The (start, end) in TEXT of each line where FINDER (RE2, over DATA: TEXT in UTF-8)
    matches: a ``lines`` rule is searched there only, not over the whole text."""
    spans: list[tuple[int, int]] = []
    last = -1
    for m in finder.finditer(data):
        lo = data.rfind(b"\n", 0, m.start()) + 1
        if lo <= last:
            continue
        hi = data.find(b"\n", m.end())
        last = hi = len(data) if hi < 0 else hi
        spans.append((lo, hi))
    if len(data) == len(text) or not spans:  # one byte a character: the same offsets
        return spans
    out, at, pos = [], 0, 0  # byte offset at, character offset pos
    for lo, hi in spans:
        pos += len(data[at:lo].decode("utf-8", "surrogateescape"))
        end = pos + len(data[lo:hi].decode("utf-8", "surrogateescape"))
        out.append((pos, end))
        at, pos = hi, end
    return out


def find_secrets(text: str) -> list[tuple[int, int, str]]:
    """The secrets in TEXT as (start, end, kind) spans, in order and not overlapping."""
    spans: list[tuple[int, int, int, str]] = []
    gate_set, by_gate, finders = _compiled()
    data = b""
    if gate_set is None:
        hits = range(len(by_gate))
    else:
        data = text.encode("utf-8", "surrogateescape")
        hits = sorted(gate_set.Match(data) or ())
    for index in hits:
        lines = None
        for order, kind, pattern, group, checks in by_gate[index]:
            regex = _regex(pattern)
            if finders[index] is not None and "lines" in checks:
                if lines is None:
                    lines = _gate_lines(text, data, finders[index])
                found = (m for lo, hi in lines for m in regex.finditer(text, lo, hi))
            else:
                found = regex.finditer(text)
            for m in found:
                start, end = m.span(group)
                if end > start and (not checks or _passes(checks, text, start, end, m)):
                    spans.append((start, end, order, kind))
    if not spans:
        return []
    # Where two overlap, the one that starts first wins, then the longer, then the rule
    # that comes first (a provider's format before a keyword rule).
    spans.sort(key=lambda s: (s[0], -s[1], s[2]))
    kept = [spans[0]]
    for span in spans[1:]:
        if span[0] >= kept[-1][1]:
            kept.append(span)
    return [(start, end, kind) for start, end, _, kind in kept]


def redact(text: str) -> tuple[str, list[Finding]]:
    """TEXT with each high-confidence secret replaced by ``[secret redacted: KIND]``, and
    the findings in order. The number of lines is kept: a secret that spans lines becomes
    one marker followed by as many newlines as it held. Text without secrets comes back
    as the very same object."""
    spans = find_secrets(text)
    if not spans:
        return text, []
    out: list[str] = []
    findings: list[Finding] = []
    pos = 0
    line = 1
    for start, end, kind in spans:
        line += text.count("\n", pos, start)
        out.append(text[pos:start])
        out.append(MARKER.format(kind=kind))
        newlines = text.count("\n", start, end)
        out.append("\n" * newlines)
        findings.append(Finding(kind, line))
        line += newlines
        pos = end
    out.append(text[pos:])
    return "".join(out), findings
