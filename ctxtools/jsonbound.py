"""Input that must be JSON, read within bounds: judged from its first bytes, and one JSON
document parsed only up to a documented size.

A gigabyte of log given to ``ctx-compact`` used to be read whole, decoded, and handed to
two JSON parsers before it failed "at line 1, column 1". Here:

* ``head_problem(head, whole)`` says, from the first ``JSON_SNIFF_BYTES`` of an input,
  where it stops being JSON (or JSON Lines) -- the position of the first byte that cannot
  belong to any JSON text starting that way -- or None when it could still be JSON. A
  head cut short of its end is never blamed for the cut (``unexpected end of data``).
* ``read_json(stream, label, ...)`` reads an input for a command that parses it: the head
  first (an ``InputError`` at once when it cannot be JSON), then the rest -- all of it for
  JSON Lines (parsed a line at a time by the callers), at most ``JSON_DOCUMENT_MAX`` bytes
  for one JSON document, past which the input is refused with the limit in the message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import BinaryIO, NamedTuple

from ctxtools import defaults
from ctxtools.errors import InputError
from ctxtools.fsutil import read_at_most as read_up_to

JSON_SNIFF_BYTES = defaults.JSON_SNIFF_BYTES
JSON_DOCUMENT_MAX = defaults.JSON_DOCUMENT_MAX
BOM = b"\xef\xbb\xbf"
_WHITESPACE = b" \t\r\n"


class HeadProblem(NamedTuple):
    """Where an input stops being JSON: the message, and its 1-based line and column."""

    msg: str
    lineno: int
    colno: int


def _cut_to_character(head: bytes) -> bytes:
    """HEAD without a UTF-8 character its end cuts in two."""
    for back in range(1, min(4, len(head)) + 1):
        byte = head[-back]
        if byte < 0x80:
            return head
        if byte >= 0xC0:  # a lead byte: is its sequence whole?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return head if back >= need else head[:-back]
    return head


def _position(data: bytes, pos: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, pos) + 1
    return line, pos - (data.rfind(b"\n", 0, pos) + 1) + 1


def head_problem(head: bytes, whole: bool, *, containers: bool = False) -> HeadProblem | None:
    """Why HEAD, the first bytes of an input (all of it when WHOLE), cannot be JSON or JSON
    Lines; None when it may be. With CONTAINERS, the input must open with an object or an
    array (a transcript, a working set)."""
    import orjson

    if head.startswith(BOM):
        head = head[len(BOM) :]
    if not whole:
        head = _cut_to_character(head)
    body = head.lstrip(_WHITESPACE)
    if not body:
        return None
    skipped = len(head) - len(body)
    if containers and body[:1] not in (b"{", b"["):
        line, col = _position(head, skipped)
        return HeadProblem("expected '{' or '[' (a JSON object or array)", line, col)
    try:
        orjson.loads(head)
        return None
    except orjson.JSONDecodeError as exc:
        problem = exc
    if not whole and problem.pos >= len(head) - 1 and problem.msg == "unexpected end of data":
        return None  # cut short by the sniff, not wrong
    first = body.split(b"\n", 1)
    if len(first) == 2 or whole:  # a whole first line that is JSON: JSON Lines, maybe
        try:
            orjson.loads(first[0])
            return None
        except orjson.JSONDecodeError:
            pass
    if _json_module_accepts(head, whole):
        return None
    return HeadProblem(problem.msg, problem.lineno, problem.colno)


def _json_module_accepts(head: bytes, whole: bool) -> bool:
    """Whether the json module reads HEAD as JSON, or as the start of it (it takes what
    orjson refuses: integers past 64 bits, lone surrogate escapes)."""
    import json

    try:
        json.loads(head.decode("utf-8"))
        return True
    except UnicodeDecodeError:
        return False
    except RecursionError:
        return True  # nested too deeply to tell here: the parser will say
    except json.JSONDecodeError as exc:
        if whole:
            return False
        # Cut short by the sniff: the error is at the end (a token or an escape cut in
        # two), or in a string the end left open.
        return exc.pos >= len(exc.doc) - 16 or exc.msg.startswith("Unterminated string")
    except ValueError:
        return True  # an integer past sys.get_int_max_str_digits(): JSON, the parser will say


def read_json(
    stream: BinaryIO,
    label: str,
    error: Callable[[HeadProblem], Exception],
    *,
    containers: bool = False,
    limit: int | None = None,
) -> bytes:
    """The bytes of STREAM, an input that must be JSON or JSON Lines (LABEL names it).

    Its first JSON_SNIFF_BYTES are judged first: ``error(problem)`` is raised when they
    cannot be JSON (see ``head_problem``; CONTAINERS as there), before the rest is read;
    a smaller input is returned as it is, for its parser to judge.
    JSON Lines are read whole (their callers parse a line at a time); one JSON document
    past LIMIT bytes (default JSON_DOCUMENT_MAX) is refused (InputError) once LIMIT + 1
    bytes have been read."""
    data, lines = read_json_head(stream, label, error, containers=containers, limit=limit)
    return data + stream.read() if lines else data


def read_json_head(
    stream: BinaryIO,
    label: str,
    error: Callable[[HeadProblem], Exception],
    *,
    containers: bool = False,
    limit: int | None = None,
    lines_held: bool = False,
) -> tuple[bytes, bool]:
    """``read_json``, but for JSON Lines only their head is read: (the bytes read, whether
    they are the head of JSON Lines, whose rest the caller reads from STREAM a line at a
    time). LINES_HELD: the caller holds JSON Lines to LIMIT too, so a document past it is
    not told to come as JSON Lines."""
    limit = JSON_DOCUMENT_MAX if limit is None else limit
    head = read_up_to(stream, JSON_SNIFF_BYTES)
    if len(head) < JSON_SNIFF_BYTES:  # all of it: its parser says what is wrong, if anything
        return head, False
    problem = head_problem(head, False, containers=containers)
    if problem is not None:
        raise error(problem)
    if looks_like_lines(head):
        return head, True
    data = head + read_up_to(stream, limit + 1 - len(head))
    if len(data) > limit:
        raise too_big(label, limit, hint="split the input" if lines_held else None)
    return data, False


def looks_like_lines(head: bytes) -> bool:
    """Whether HEAD opens with a whole line holding one JSON object or array (JSON Lines,
    or a one-line document followed by more)."""
    import orjson

    body = head.removeprefix(BOM).lstrip(_WHITESPACE)
    first, sep, _rest = body.partition(b"\n")
    if not sep or first[:1] not in (b"{", b"["):
        return False
    try:
        orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return True


def too_big_lines(label: str, limit: int, what: str) -> InputError:
    """The error for JSON Lines over LIMIT bytes where they are held whole (WHAT is done)."""
    return InputError(
        f"{label}: JSON Lines over {size_text(limit)} are not {what} (the limit)",
        hint="split the input",
    )


def size_text(limit: int) -> str:
    """LIMIT in MiB when it is whole MiB, else in bytes."""
    return f"{limit >> 20} MiB" if limit % (1 << 20) == 0 else f"{limit:,} bytes"


def too_big(label: str, limit: int, hint: str | None = None) -> InputError:
    """The error for one JSON document over LIMIT bytes; its HINT offers JSON Lines unless
    the caller gives its own (one that holds JSON Lines to the limit too)."""
    if hint is None:
        hint = "give JSON Lines (one value a line), or split it"
    return InputError(
        f"{label}: one JSON document over {size_text(limit)} is not parsed (the limit)",
        hint=hint,
    )


# orjson reads an integer below -2**63 or above 2**64 - 1 as a double, its digits changed:
# one of 20 digits or more, or a negative one of 19. Such a run of digits that may be a
# number (after the start, '[', ',', ':' or a space, before the end, ']', '}', ',' or a
# space, and out of that range) sends a reader (``projections.jsonview``,
# ``compact.transcript``) to the json module, which keeps an integer exact. The runs are
# found at C speed in the document's marks: a digit as '0', '"' and '-' as they are, any
# other byte as '.' (a letter is told from a space after).
_MARKS = bytes(0x30 if 0x30 <= b <= 0x39 else b if b in b'"-' else 0x2E for b in range(256))
_LEADS = (b"." + b"0" * 20, b".-" + b"0" * 19)
_MARK_RUN_RE = re.compile(rb"0+")
_BEFORE = (b"", b"[", b",", b":", b" ", b"\t", b"\n", b"\r")
_AFTER = (b"", b"]", b"}", b",", b" ", b"\t", b"\n", b"\r")


def long_int_spans(data: bytes) -> list[tuple[int, int]]:
    """The spans of DATA that may be an integer orjson reads as a double (see above)."""
    marks = b"." + data.translate(_MARKS)  # data[i] is marks[i + 1]
    spans = []
    for lead in _LEADS:
        at = marks.find(lead)
        while at >= 0:  # the number is data[at:end], its digits marks[digits : end + 1]
            digits = at + 1 + (lead[1] == 0x2D)  # (0x2D: '-')
            end = _MARK_RUN_RE.match(marks, digits).end() - 1
            if (
                data[at - 1 : at] in _BEFORE
                and data[end : end + 1] in _AFTER
                and (end + 1 - digits > 20 or not -(2**63) <= int(data[at:end]) < 2**64)
            ):
                spans.append((at, end))
            at = marks.find(lead, end + 1)
    return spans
