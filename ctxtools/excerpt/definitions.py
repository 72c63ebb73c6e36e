"""Which name a line of code defines (``def verify(`` -> ``verify``), in the languages we know.

Used only to rank excerpt windows (a hit on a line that defines the name weighs double);
the repo map's scanners do the real parsing. The patterns cover Python, Go, JS/TS, Rust,
Java and their cousins; they are compiled at the first line that might define a name, so
importing this module stays cheap.
"""

from __future__ import annotations

import re

_IDENT = r"[A-Za-z_$][\w$]*"
# Lines that define a name, in the languages we know (Python, Go, JS/TS, Rust, Java and
# their cousins). Used only to rank windows; the repo map's scanners do the real parsing.
_DEF_PATTERNS = (
    (
        r"\s*(?:@\w+(?:\([^)]*\))?\s+)*"
        r"(?:(?:export|default|declare|pub(?:\([^)]*\))?|public|private|protected|internal|"
        r"static|final|abstract|async|unsafe|extern(?:\s+\"[^\"]*\")?|override|sealed|const|"
        r"open|data|inline)\s+)*"
        r"(?:def|class|func|fn|function\*?|struct|enum|trait|interface|type|impl(?:<[^>]*>)?|"
        r"record|mod|object|union|namespace)\s+(?:\([^)]*\)\s*)?"
        rf"(?P<name>{_IDENT})"
    ),
    (
        r"\s*(?:export\s+)?(?:const|let|var)\s+"
        rf"(?P<name>{_IDENT})\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\(|{_IDENT}\s*=>)"
    ),
    (
        r"\s*(?:@\w+(?:\([^)]*\))?\s+)*"
        r"(?:(?:public|private|protected|static|final|abstract|synchronized|native|default|"
        r"async|override|virtual|readonly)\s+)+"
        r"(?:<[^>]*>\s*)?(?:[\w$.<>\[\],?]+\s+)?"
        rf"(?P<name>{_IDENT})\s*\("
    ),
    (
        r"\s*(?!(?:return|new|else|throw|if|for|while|switch|catch|case|await|yield|typeof|"
        r"delete|do|try)\b)(?:(?:async|static|get|set)\s+)*(?:[\w$.<>\[\],?]+\s+)?"
        rf"(?P<name>{_IDENT})\s*(?:<[^>]*>)?\([^;]*\)\s*(?::\s*[^{{;=]+)?(?:throws\s+[\w., ]+)?"
        r"\{\s*$"
    ),
)
_NOT_NAMES = frozenset(["if", "for", "while", "switch", "catch", "function", "return"])


_DEF_RES: tuple[re.Pattern[str], ...] = ()
_DEF_RE: re.Pattern[str] | None = None


def _def_re() -> re.Pattern[str]:
    """All of them in one pattern (one match call a line): alternative K names its group
    nK. Compiled at the first line that might define a name (start-up stays cheap)."""
    global _DEF_RE
    if _DEF_RE is None:
        _DEF_RE = re.compile(
            "|".join(
                "(?:" + p.replace("(?P<name>", f"(?P<n{k}>") + ")"
                for k, p in enumerate(_DEF_PATTERNS)
            )
        )
    return _DEF_RE


# Words a definition line can start with (else it ends with "{": a bare method).
_DEF_STARTS = frozenset(
    [
        "def",
        "class",
        "func",
        "fn",
        "function",
        "function*",
        "struct",
        "enum",
        "trait",
        "interface",
        "type",
        "impl",
        "record",
        "mod",
        "object",
        "union",
        "namespace",
        "export",
        "default",
        "declare",
        "pub",
        "public",
        "private",
        "protected",
        "internal",
        "static",
        "final",
        "abstract",
        "async",
        "unsafe",
        "extern",
        "override",
        "sealed",
        "const",
        "open",
        "data",
        "inline",
        "let",
        "var",
        "synchronized",
        "native",
        "virtual",
        "readonly",
    ]
)


def defined_name(line: str) -> str | None:
    """The name a line defines (``def verify(`` -> ``verify``), or None."""
    stripped = line.strip()
    first = stripped.split(None, 1)[0] if stripped else ""
    if not (
        first in _DEF_STARTS or first.startswith(("@", "pub(", "impl<")) or stripped.endswith("{")
    ):
        return None
    m = _def_re().match(line)
    if m is None:
        return None
    name = m.group(m.lastgroup)
    if name in _NOT_NAMES:
        global _DEF_RES
        if not _DEF_RES:  # each pattern alone: only for the rare line it is needed
            _DEF_RES = tuple(re.compile(p) for p in _DEF_PATTERNS)
        for rx in _DEF_RES[int(m.lastgroup[1:]) + 1 :]:
            m = rx.match(line)
            if m and m.group("name") not in _NOT_NAMES:
                return m.group("name")
        return None
    return name
