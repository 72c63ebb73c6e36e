"""Secrets by content: ``find_secrets(text)`` and ``redact(text)`` over the rules of
``ctxtools.secrets.rules``.

Replacement keeps the number of lines: a secret spanning several lines (a private-key
block) becomes one marker followed by the same number of newlines, so line numbers
printed beside an excerpt stay true.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

MARKER = "[secret redacted: {kind}]"

# ---------------------------------------------------------------------------------------
# Secrets by content
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One secret that ``redact`` replaced: its kind and the 1-based line it starts on."""

    kind: str
    line: int


# Not preceded by a character that would make the prefix the tail of a longer word.
_B = r"(?<![A-Za-z0-9_\-])"
_E = r"(?![A-Za-z0-9_\-])"  # nor followed by one

# A PEM private key: the BEGIN line, a body that holds at least one base64 run (so a
# parser's `"-----BEGIN RSA PRIVATE KEY-----"` constant is not a key), the END line. The
# body may be on real lines, or on one line with literal "\n" (a JSON service-account
# file), or in string literals. The END label must repeat the BEGIN label.
_PEM_BEGIN = (
    r"-----BEGIN (?P<label>(?:RSA |DSA |EC |OPENSSH |ENCRYPTED |DH |PGP |SSH2 )?"
    r"PRIVATE KEY(?: BLOCK)?)-----"
)
# A body character: base64, whitespace, a header's ": , . -", a string literal's quotes and
# escaped newlines; never "-----", so a body cannot run into the next BEGIN or END line and
# each BEGIN costs at most one pass over its own body.
_PEM_BODY = r"(?:[A-Za-z0-9+/=\s:,.\\\"']|-(?!----))"
_PEM_HAS_BODY = r"(?=" + _PEM_BODY + r"{0,400}?[A-Za-z0-9+/]{40})"
_PEM = _PEM_BEGIN + _PEM_HAS_BODY + _PEM_BODY + r"{0,20000}-----END (?P=label)-----"
# A block cut short (a truncated file, an excerpt): BEGIN, then its header and base64
# lines as far as they go.
_PEM_CUT = (
    _PEM_BEGIN
    + _PEM_HAS_BODY
    + r"(?:(?:\s|\\n|[\"'+])+(?:[A-Za-z0-9+/=]{16,}|[A-Za-z][A-Za-z-]*:[^\n\\\"']*))+"
    + r"(?:\s*[A-Za-z0-9+/=]{1,15}(?=\s*\Z))?"  # a last line cut mid-way by the end
)


# Each rule: (kind, probes, pattern, group). The pattern runs on a text only when one of
# its probes occurs in it: a probe is a plain string (``in``, several hundred MB/s) or, to
# test several prefixes in one pass, a regex starting with a literal character. Probes are
# what keeps a scan fast: running twenty patterns over every text costs ~20x more.
_RULES: tuple[tuple[str, tuple[str, ...], str, str | int], ...] = (
    ("private key", ("PRIVATE KEY",), _PEM, 0),
    ("private key", ("PRIVATE KEY",), _PEM_CUT, 0),
    (
        "AWS access key",
        ("re:A(?:KIA|SIA|BIA|CCA|3T|Iza|ccountKey=)",),
        _B + r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}(?![A-Za-z0-9])",
        0,
    ),
    (
        "AWS secret key",
        ("ecret", "ECRET"),
        r"(?i:aws[_\-]?secret[_\-]?(?:access[_\-]?)?key|secret[_\-]?access[_\-]?key)"
        r"[\"']?\s*(?::|=|=>|:=)\s*[\"']?(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        "s",
    ),
    (
        "GitHub token",
        ("re:g(?:h[pousr]_|ithub_pat_|lpat-)",),
        _B + r"(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})" + _E,
        0,
    ),
    (
        "GitLab token",
        ("re:g(?:h[pousr]_|ithub_pat_|lpat-)",),
        _B + r"glpat-[A-Za-z0-9_\-]{20}" + _E,
        0,
    ),
    (
        "Slack token",
        ("xox",),
        _B + r"xox(?:[abposr]|e\.xox[pb])-(?:[0-9]+-)+[A-Za-z0-9]{8,}" + _E,
        0,
    ),
    (
        "Slack webhook",
        ("hooks.slack.com",),
        r"https://hooks\.slack\.com/(?:services|workflows)/T[A-Z0-9]{6,}/[A-Z0-9]{6,}/"
        r"[A-Za-z0-9]{16,}",
        0,
    ),
    (
        "Anthropic key",
        ("sk-",),
        _B + r"sk-ant-(?:api|admin|oat|ort)\d\d-[A-Za-z0-9_\-]{80,}" + _E,
        0,
    ),
    (
        "OpenAI key",
        ("sk-",),
        _B + r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}|[A-Za-z0-9]{20}T3BlbkFJ"
        r"[A-Za-z0-9]{20})" + _E,
        0,
    ),
    (
        "Google API key",
        ("re:A(?:KIA|SIA|BIA|CCA|3T|Iza|ccountKey=)",),
        _B + r"AIza[0-9A-Za-z_\-]{35}" + _E,
        0,
    ),
    (
        "Stripe key",
        ("re:_(?:live_|test_|authToken)", "whsec_"),
        _B + r"(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,}|whsec_[A-Za-z0-9]{32,})" + _E,
        0,
    ),
    ("npm token", ("npm_",), _B + r"npm_[A-Za-z0-9]{36}" + _E, 0),
    (
        "npm token",
        ("re:_(?:live_|test_|authToken)", "whsec_"),
        r"_authToken\s*=\s*(?P<s>(?!\$\{)[^\s\"']{16,})",
        "s",
    ),
    ("PyPI token", ("pypi-AgE",), _B + r"pypi-AgE[A-Za-z0-9_\-]{50,}" + _E, 0),
    ("Hugging Face token", ("hf_",), _B + r"hf_[A-Za-z]{34}" + _E, 0),
    ("SendGrid key", ("SG.",), _B + r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E, 0),
    (
        "Azure storage key",
        ("re:A(?:KIA|SIA|BIA|CCA|3T|Iza|ccountKey=)",),
        r"AccountKey=(?P<s>[A-Za-z0-9+/]{86}==)",
        "s",
    ),
    (
        "JWT",
        (".eyJ",),
        _B + r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{16,}" + _E,
        0,
    ),
)

KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule[0] for rule in _RULES))


@functools.cache
def _compiled() -> tuple[tuple[str, tuple, re.Pattern, str | int], ...]:
    """The rules with their regexes compiled (once, on first use: compiling them all costs
    ~30 ms, which a command that never redacts should not pay)."""
    out = []
    for kind, probes, pattern, group in _RULES:
        ready = tuple(re.compile(p[3:]) if p.startswith("re:") else p for p in probes)
        out.append((kind, ready, re.compile(pattern), group))
    return tuple(out)


def find_secrets(text: str) -> list[tuple[int, int, str]]:
    """The high-confidence secrets in TEXT as (start, end, kind) spans, in order and not
    overlapping (where two overlap, the one that starts first wins, then the longer)."""
    spans: list[tuple[int, int, str]] = []
    seen: dict[object, bool] = {}
    for kind, probes, regex, group in _compiled():
        hit = False
        for probe in probes:
            found = seen.get(probe)
            if found is None:
                found = (probe in text) if isinstance(probe, str) else bool(probe.search(text))
                seen[probe] = found
            if found:
                hit = True
                break
        if not hit:
            continue
        for m in regex.finditer(text):
            start, end = m.span(group)
            if end > start:
                spans.append((start, end, kind))
    if not spans:
        return spans
    spans.sort(key=lambda s: (s[0], -s[1], s[2]))
    kept = [spans[0]]
    for span in spans[1:]:
        if span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


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
