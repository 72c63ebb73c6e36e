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

from ctxtools.secrets.rules import FIRST_GENERIC, RULES

MARKER = "[secret redacted: {kind}]"
# What an output prints before a line (an excerpt's or a pack's number and tab ``12\t``,
# the padded ``  12│ `` of earlier versions, a map's ``12:``): kept on each line a redacted
# block spans, so the output keeps its numbering.
_GUTTER = re.compile(r"[ \t]*[0-9]+│ ?|[0-9]+[\t:]")
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


def _varied(head: str) -> bool:
    """Whether HEAD (a token's first 256 characters) changes character at least once in
    every four, as random characters do (a Twitter bearer token: 22 "A"s, then base64); a
    run of one character, or runs of several ("AAAA…BBBB…", a test's filler), do not."""
    changes = sum(1 for a, b in zip(head, head[1:], strict=False) if a != b)
    return changes * 4 >= len(head)


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
    abc123 123456 12345678 password123 letmein mypassword yourpassword secretkey
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
# A template or an expression standing where a value would be: ${X}, {{ x }}, {% x %},
# %(x)s, $X, <password>, {name}, `cmd`, %VAR%, a lone %s, $(cmd). Characters such as
# "$ ( ) %" alone are not one: a Django SECRET_KEY's alphabet holds them.
_TEMPLATE = re.compile(
    r"\$\{|\{\{|\{%|%\([A-Za-z_]\w*\)|^\$[A-Za-z_]\w*$|^<[^<>]*>$|<[A-Za-z_][\w .\-]*>"
    r"|\{[A-Za-z_][\w.]*\}|`|%[A-Z_][A-Z0-9_]*%|(?<![A-Za-z0-9])%[sd](?![A-Za-z0-9])|^\$\(.*\)$"
)
# A part of a path: a lower-case name (its own parts joined by "-", "_" or "."; digits
# only after a separator: id_rsa, account.key, python3.11, not a026f1ca) or a number,
# either with an extension (404.htm).
_PATH_PART = re.compile(r"\.?(?:[a-z]+(?:[-_.][a-z0-9]+)*|[0-9]+(?:\.[a-z]+)?)")
_WORDS = re.compile(r"[A-Za-z]+(?:[-_./][A-Za-z]+)*")
# An identifier chain: names joined by ".", "?.", "::", "->" (sentinel.sentinel_auth_pass,
# settings.DB_PASSWORD, self->cfg.password, browser?.browserName).
_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\??\.|::|->)[A-Za-z_$][A-Za-z0-9_$]*)*")
# The words of a name: snake_case parts, camelCase humps, UPPER runs; digits only at a
# word's end (db_password2, OAuth2Token).
_DIGITS = re.compile(r"[0-9]{1,2}")
_NAME_WORD = re.compile(r"[a-z]+|[A-Z][a-z]+|[A-Z]+(?![a-z])")
# An expression: a call, an index, a cast, the end of one (os.environ["X"], get_pw(),
# Optional[str], session_key).exists(), 159}],81:[function(...): a bracket with nothing
# but name characters before it, the parts of a name joined by ``.``, ``->`` or ``::`` as
# well (c->argv[2] in C, Config::get(...) in C++ and Rust, $request->input(...) in PHP).
_EXPR = re.compile(r"(?:[\w.$]|->|::)*[()\[\]{}]")
_URL_PLACEHOLDERS = frozenset(
    ("password", "passwd", "pass", "pwd", "secret", "changeme", "xxx", "xxxx", "user")
    + ("username", "value", "token", "key", "apikey", "none", "null")
)


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
    """Whether VALUE, in a place whose syntax makes it a credential (a URL's
    ``user:password@``, ``<password>…</password>``, ``mysql -p…``, ``curl -u user:…``,
    ``?api_key=…``), is one: not a template (``${DB_PASSWORD}``, ``%(pw)s``), not a
    placeholder word (``password``, ``changeme``, ``xxx``, ``****``), at least 4
    characters. A short or simple password counts (``hunter2`` after ``app:`` in a URL)."""
    if len(value) < 4 or _TEMPLATE.search(value):
        return False
    low = value.lower()
    if "".join(c for c in low if c.isalnum()) in _URL_PLACEHOLDERS or len(set(low)) <= 1:
        return False
    return not any(part in low for part in ("example", "placeholder", "your", "…", "..."))


def _word_like(parts: list[str]) -> bool:
    """Whether PARTS (the pieces of a name between its separators) are words: letters in
    snake_case parts, camelCase humps or UPPER runs, digits at a part's end
    (``password2``) or, in a name of several parts, one run inside (``AWSS3Storage``);
    the humps 3 letters long on average, 3.5 in a name of one part (a random
    ``kRbTqWx`` is all short humps)."""
    parts = [part for part in parts if part]
    humps = letters = 0
    for part in parts:
        if part.isdigit():  # a number between separators: _pep_440_key
            continue
        runs = _DIGITS.split(part.rstrip("0123456789"))
        if len(runs) > (2 if len(parts) > 1 else 1):
            return False
        for stem in runs:
            if not stem.isalpha() or not stem.isascii():
                return False
            humps += len(_NAME_WORD.findall(stem))
            letters += len(stem)
    return humps > 0 and letters >= (3 if len(parts) > 1 else 3.5) * humps


def identifier(value: str) -> bool:
    """Whether VALUE reads as a name in code rather than a random token: an identifier
    chain (names joined by ``.``, ``::``, ``->``) of word-like parts
    (``sentinel.sentinel_auth_pass``, ``settings.DB_PASSWORD``,
    ``TextGenerationStreamOutputToken``; not ``aB3x_Kz9qLm`` nor ``hugyr9m4wsz3ky5``)."""
    return bool(_NAME.fullmatch(value)) and _word_like(re.split(r"\??\.|::|->|_+|\$", value))


def _path(value: str) -> bool:
    """A file's path (``/etc/pki/private/account.key``, ``~/.ssh/id_rsa``,
    ``errors/404.htm``): at least two parts between slashes, each words (``_words``) or a
    number (``_PATH_PART``); base64 (``4Dm1n4rphuF/bEfvLf6rYK0gI``) has parts of
    neither shape."""
    parts = value.removeprefix("~").split("/")
    named = [p for p in parts if p not in ("", ".", "..")]
    if len(named) < 2 or any(p == "" for p in parts[1:-1]):
        return False
    return all(_PATH_PART.fullmatch(p) or _words(p.lstrip(".")) for p in named)


def _words(value: str) -> bool:
    """Words joined by ``-``, ``_``, ``.`` or ``/`` (``X-Xet-Access-Token``,
    ``some_setting.name``, ``io.modelcontextprotocol/ui``): a name, not a token."""
    return bool(_WORDS.fullmatch(value)) and _word_like(re.split(r"[-_./]", value))


def credential_value(value: str, bare: bool = False) -> bool:
    """Whether VALUE, assigned to a password-like key, looks like a credential rather than
    a test value, a placeholder, a template or a name: at least 8 characters without white
    space, of at least three kinds (lower case, upper case, digits, others; two kinds
    suffice from 12 characters when letters and digits mix), not repetitive (as many
    distinct characters as a third of its length); not a placeholder (``changeme``,
    ``<password>``, ``xxxxxxxx``, ``test…``, ``…password…``, ``...``), not a template
    (``${DB_PASSWORD}``, ``{{ pw }}``, ``%(pw)s``), not words joined by ``-``, ``_`` or
    ``.`` (``X-Access-Token``: a header's name); and, without quotes (BARE), not a name
    (``sentinel.sentinel_auth_pass``, ``db_password``, ``OutputToken``: a variable or a
    type) nor an expression (``os.environ["X"]``, ``get_password()``, ``pw or ""``)."""
    n = len(value)
    if value.isdigit():  # a long quoted number assigned to a key: an account secret or id
        return not bare and n >= 15 and len(set(value)) >= 6
    if n < 8 or any(c.isspace() for c in value) or _placeholder(value):
        return False
    kinds = _classes(value)
    if kinds < 2 or len(set(value)) * 3 < min(n, 36):
        return False
    if kinds == 2 and (n < 12 or (n < 16 and not _mixed(value))):
        return False
    if _words(value.strip("_.")):  # "X-Xet-Access-Token", "_auth_user_backend": words
        return False
    if _path(value):  # "/etc/pki/cert/private/account.key", "errors/404.htm": a file's path
        return False
    if bare:
        if value[0] in "!&*|>%@+~" or value.endswith((":", ",")):
            return False
        if identifier(value) or _EXPR.match(value):
            return False
    return True


def _mixed(value: str) -> bool:
    """Letters and digits interleave (a digit before the last letter): ``lniymbt0w2do1hk``,
    not ``release2024`` or ``v1``."""
    first_digit = next((i for i, c in enumerate(value) if c.isdigit()), None)
    last_alpha = max((i for i, c in enumerate(value) if c.isalpha()), default=-1)
    return first_digit is not None and first_digit < last_alpha


def token_value(value: str) -> bool:
    """An Authorization header's credentials: a credential-like value (quoted rules), or
    a longer token of letters and digits; not a name or a template."""
    if _TEMPLATE.search(value) or identifier(value):
        return False
    if credential_value(value):
        return True
    return len(value) >= 20 and _classes(value) >= 2 and not _placeholder(value)


def _passes(checks: tuple[str, ...], text: str, start: int, end: int, m) -> bool:
    for check in checks:
        if check in ("lines", "at"):
            continue
        if check == "edge":
            ok = _edge(text, m.start())
        elif check == "aws-id":
            ok = _aws_id(text, start, end)
        elif check == "hex-mix":
            ok = _hex_mix(text[start:end])
        elif check == "varied":
            ok = _varied(text[start : min(end, start + 256)])
        elif check == "discord":
            ok = _discord(text[start:end])
        elif check == "docker":
            ok = _docker(text[start:end])
        elif check == "url":
            ok = url_password(text[start:end])
        elif check == "token":
            ok = token_value(text[start:end])
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
            if any("lines" in rule[4] or "at" in rule[4] for rule in rules)
            else None
            for gate, rules in ordered
        ]
    except Exception:  # no RE2 here: every rule runs on every text (slower, same result)
        gate_set = None  # an ``at`` rule still needs its gate, run by Python's re
        finders = [
            re.compile(gate) if any("at" in rule[4] for rule in rules) else None
            for gate, rules in ordered
        ]
    return gate_set, [rules for _, rules in ordered], finders


@functools.cache
def _regex(pattern: str) -> re.Pattern:
    """A rule's pattern, compiled the first time its gate matches."""
    return re.compile(pattern)


GATE_BACK = 12  # bytes before a gate's match where a ``lines`` rule's match may begin


def _gate_lines(text: str, data: bytes, finder) -> list[tuple[int, int]]:
    """The (start, end) in TEXT of the stretch of each line from a little before where
    FINDER (RE2, over DATA: TEXT in UTF-8) matches to the line's end: a ``lines`` rule is
    searched there only, not over the whole text (its match begins at most GATE_BACK
    bytes before its gate's: ``client_`` before ``id=``)."""
    spans: list[tuple[int, int]] = []
    for m in finder.finditer(data):
        lo = max(data.rfind(b"\n", 0, m.start()) + 1, m.start() - GATE_BACK)
        if spans and lo <= spans[-1][1]:
            if m.end() <= spans[-1][1]:
                continue
            lo = spans.pop()[0]
        hi = data.find(b"\n", m.end())
        spans.append((lo, len(data) if hi < 0 else hi))
    if spans and len(data) != len(text):  # a multi-byte character may sit at lo - 1
        spans = [(_char_start(data, lo), hi) for lo, hi in spans]
    if len(data) == len(text) or not spans:  # one byte a character: the same offsets
        return spans
    out, at, pos = [], 0, 0  # byte offset at, character offset pos
    for lo, hi in spans:
        pos += len(data[at:lo].decode("utf-8", "surrogateescape"))
        end = pos + len(data[lo:hi].decode("utf-8", "surrogateescape"))
        out.append((pos, end))
        at, pos = hi, end
    return out


def _char_start(data: bytes, at: int) -> int:
    """AT, or the start of the UTF-8 character AT falls inside."""
    while at > 0 and 0x80 <= data[at] < 0xC0:
        at -= 1
    return at


def _gate_points(text: str, data: bytes, finder) -> list[tuple[int, int]]:
    """(where FINDER's group 1 stands, the end of its line) in TEXT, for each match of
    FINDER (RE2, over DATA: TEXT in UTF-8): an ``at`` rule is matched there only."""
    points = []
    nl = b"\n" if isinstance(data, bytes) else "\n"
    for m in finder.finditer(data):
        at = m.start(1)
        hi = data.find(nl, at)
        points.append((at, len(data) if hi < 0 else hi))
    if len(data) == len(text) or not points:
        return points
    out, done, pos = [], 0, 0  # byte offset done, character offset pos
    for at, hi in points:  # in order; a line's end may come after the next point
        pos += len(data[done:at].decode("utf-8", "surrogateescape"))
        end = pos + len(data[at:hi].decode("utf-8", "surrogateescape"))
        out.append((pos, end))
        done = at
    return out


def find_secrets(text: str) -> list[tuple[int, int, str]]:
    """The secrets in TEXT as (start, end, kind) spans, in order and not overlapping."""
    spans: list[tuple[int, int, int, str]] = []
    gate_set, by_gate, finders = _compiled()
    data: bytes | str = text
    if gate_set is None:
        hits = range(len(by_gate))
    else:
        data = text.encode("utf-8", "surrogateescape")
        hits = sorted(gate_set.Match(data) or ())
    for index in hits:
        lines = points = None
        for order, kind, pattern, group, checks in by_gate[index]:
            regex = _regex(pattern)
            if finders[index] is not None and "at" in checks:
                if points is None:
                    points = _gate_points(text, data, finders[index])
                found = (m for lo, hi in points if (m := regex.match(text, lo, hi)))
            elif finders[index] is not None and "lines" in checks:
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
    # Where two overlap, the one that starts first wins, then a provider's format before
    # a rule of context (a key, a URL...); among formats the longer (a whole PEM block
    # before a cut one), among rules of context the one that comes first (?api_key=…
    # ends at "&", a bare KEY=… would not).
    spans.sort(
        key=lambda s: (
            s[0],
            s[2] >= FIRST_GENERIC,
            s[2] if s[2] >= FIRST_GENERIC else 0,
            -s[1],
            s[2],
        )
    )
    kept = [spans[0]]
    for span in spans[1:]:
        if span[0] >= kept[-1][1]:
            kept.append(span)
    return [(start, end, kind) for start, end, _, kind in kept]


def _line_breaks(text: str, start: int, end: int) -> str:
    """The line breaks of TEXT[START:END], each with the gutter that follows it (``_GUTTER``)
    when the span holds it: a block cut out of an excerpt keeps its lines' numbers."""
    out = []
    at = text.find("\n", start, end)
    while at != -1:
        m = _GUTTER.match(text, at + 1, end)
        out.append("\n" + m.group() if m else "\n")
        at = text.find("\n", at + 1, end)
    return "".join(out)


def redact(text: str) -> tuple[str, list[Finding]]:
    """TEXT with each high-confidence secret replaced by ``[secret redacted: KIND]``, and
    the findings in order. The number of lines is kept: a secret that spans lines becomes
    one marker followed by as many newlines as it held (each with the gutter or map number
    that stood after it: ``_GUTTER``). Text without secrets comes back as the very same
    object."""
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
        out.append(_line_breaks(text, start, end) if newlines else "")
        findings.append(Finding(kind, line))
        line += newlines
        pos = end
    out.append(text[pos:])
    return "".join(out), findings
