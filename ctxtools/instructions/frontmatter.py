"""Front matter: the small subset of YAML that instruction files, Cursor rules and
SKILL.md files open with (``---`` lines around ``key: value`` pairs and lists)."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

FRONT_MATTER_MAX_LINES = 200

_KEY_RE = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*)|)$")
_ITEM_RE = re.compile(r"^([ \t]*)-(?:[ \t]+(.*)|)$")


class FrontMatterError(ValueError):
    """Front matter that cannot be read; the message says why (one line)."""


def parse_front_matter(
    lines: Sequence[str], keys: Collection[str] | None = None
) -> dict[str, str | list[str]]:
    """The keys of YAML-ish front matter (the lines between the ``---`` delimiters).

    A small subset of YAML, enough for instruction files, Cursor rules and SKILL.md:
    ``key: value`` (plain, ``'single'`` or ``"double"`` quoted, or a ``[a, b]`` flow list),
    ``key:`` followed by ``- item`` lines (a list) or by indented lines (a plain scalar
    continued, or a ``|``/``>`` block). ``#`` comments and blank lines are skipped. Values
    are strings or lists of strings; the caller interprets booleans. Anything else raises
    FrontMatterError. With KEYS, only those keys are read and checked: the indented block
    of any other key (a nested mapping, a list of mappings) is passed over unread.
    """
    out: dict[str, str | list[str]] = {}
    key: str | None = None
    i = 0
    n = len(lines)
    while i < n:
        raw = lines[i].rstrip("\r\n")
        i += 1
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = _KEY_RE.match(raw)
        if not m:
            raise FrontMatterError(f"line {i + 1} is not 'key: value': {clip(raw)}")
        key = m.group(1)
        wanted = keys is None or key in keys
        if key in out and wanted:
            raise FrontMatterError(f"key {key!r} is given twice")
        value = (m.group(2) or "").strip()
        # the indented lines (or "- item" lines) that belong to this key
        block: list[str] = []
        while i < n:
            nxt = lines[i].rstrip("\r\n")
            if nxt.strip() and not nxt[:1].isspace() and not _ITEM_RE.match(nxt):
                break
            block.append(nxt)
            i += 1
        while block and not block[-1].strip():
            block.pop()
        if wanted:
            out[key] = _value(key, value, block)
    return out


def clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _value(key: str, value: str, block: list[str]) -> str | list[str]:
    if value[:1] in ("|", ">") and re.fullmatch(r"[|>][+-]?[0-9]?", value):
        lines = [b.strip() for b in block]
        if value[0] == "|":
            return "\n".join(lines)
        return " ".join(x for x in lines if x)
    items = [b for b in block if b.strip() and not b.strip().startswith("#")]
    if value:
        if value[0] in "\"'":
            text = " ".join([value, *(b.strip() for b in items)])
            unquoted, rest = _unquote(text, key)
            if rest and not rest.startswith("#"):
                raise FrontMatterError(f"{key}: text after the closing quote")
            return unquoted
        if value.startswith("["):
            text = " ".join([value, *(b.strip() for b in items)])
            if not text.split(" #", 1)[0].rstrip().endswith("]"):
                raise FrontMatterError(f"{key}: unclosed '['")
            inner = text.split(" #", 1)[0].rstrip()[1:-1]
            return [scalar(p, key) for p in split_top_level(inner) if p.strip()]
        if any(_ITEM_RE.match(b) for b in items):
            raise FrontMatterError(f"{key}: a value and list items at once")
        return " ".join([_strip_comment(value), *(_strip_comment(b.strip()) for b in items)])
    if not items:
        return ""
    if all(_ITEM_RE.match(b) for b in items):
        return [scalar(_ITEM_RE.match(b).group(2) or "", key) for b in items]  # type: ignore[union-attr]
    if any(_ITEM_RE.match(b) for b in items):
        raise FrontMatterError(f"{key}: list items mixed with other lines")
    return " ".join(_strip_comment(b.strip()) for b in items)


def _strip_comment(text: str) -> str:
    return re.split(r"[ \t]#", text, maxsplit=1)[0].rstrip()


def _unquote(text: str, key: str) -> tuple[str, str]:
    """The quoted string at the start of TEXT, unescaped, and what follows it."""
    quote = text[0]
    out: list[str] = []
    i = 1
    while i < len(text):
        c = text[i]
        if quote == "'" and c == "'":
            if text[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), text[i + 1 :].strip()
        if quote == '"' and c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            i += 2
            continue
        if quote == '"' and c == '"':
            return "".join(out), text[i + 1 :].strip()
        out.append(c)
        i += 1
    raise FrontMatterError(f"{key}: unclosed {quote}")


def scalar(text: str, key: str) -> str:
    text = text.strip()
    if text[:1] in ("'", '"'):
        value, rest = _unquote(text, key)
        if rest and not rest.startswith("#"):
            raise FrontMatterError(f"{key}: text after the closing quote")
        return value
    return _strip_comment(text)


def split_top_level(text: str) -> list[str]:
    """TEXT split at the commas outside braces, brackets and quotes."""
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = ""
        elif c in "\"'" and not text[start:i].strip():
            quote = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def split_front_matter(lines: Sequence[str]) -> tuple[list[str] | None, int, str | None]:
    """Find front matter at the top of LINES (each with its line ending).

    Returns (the lines between the delimiters or None, the number of lines it takes
    including both delimiters, an error). No front matter: (None, 0, None). Unterminated
    within ``FRONT_MATTER_MAX_LINES``: (None, 0, reason).
    """
    if not lines or lines[0].lstrip("\ufeff").rstrip() != "---":
        return None, 0, None
    for j in range(1, min(len(lines), FRONT_MATTER_MAX_LINES + 2)):
        if lines[j].rstrip() in ("---", "..."):
            return list(lines[1:j]), j + 1, None
    return None, 0, f"no closing '---' within {FRONT_MATTER_MAX_LINES} lines"
