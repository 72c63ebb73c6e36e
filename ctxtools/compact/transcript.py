"""Transcript formats: detection, parsing, writing back in the same shape, token counts, checks.

Two message formats:

* ``openai`` -- chat messages: roles ``system``, ``developer``, ``user``, ``assistant``,
  ``tool``; an assistant message's ``tool_calls`` are answered by ``role: "tool"`` messages
  carrying ``tool_call_id``.
* ``anthropic`` -- Messages API: roles ``user`` and ``assistant`` only, content as a string or
  a list of blocks; ``tool_use`` blocks in an assistant turn are answered by ``tool_result``
  blocks (``tool_use_id``) in the next user turn; the system prompt is the top-level
  ``system`` of the request.

Three shapes: a JSON list of messages, a JSON object with ``"messages"`` (its other keys --
``model``, ``system``, ``tools``... -- are kept as they are), or JSON Lines, one message a line.
The output is written in the shape of the input. Fields this module does not know pass
through untouched. A UTF-8 byte order mark before the JSON is skipped; a transcript that is
written back is written without one (RFC 8259 forbids it), while input left unchanged is
given back byte for byte, mark included.

Token count of a transcript (the ruler over what the model reads): for each message, the
ruler's count of its text -- string content, text of content parts and blocks, tool-call
names and arguments, ``tool_use`` names and inputs (compact JSON), ``tool_result`` content
-- plus ``MESSAGE_OVERHEAD`` tokens for the message's framing; the Anthropic top-level
``system`` counts like one more message; plus ``REPLY_PRIMING`` tokens for the reply's
start. Images and other non-text blocks count only their framing.
"""

from __future__ import annotations

import itertools
import json
import sys
from dataclasses import dataclass, field

from ctxtools.compact import jsonout
from ctxtools.compact.textcount import count_many, count_text
from ctxtools.errors import InputError, UsageError

OPENAI = "openai"
ANTHROPIC = "anthropic"
FORMATS = (OPENAI, ANTHROPIC)

SHAPE_LIST = "list"
SHAPE_WRAPPER = "messages"
SHAPE_JSONL = "jsonl"

OPENAI_ROLES = ("assistant", "developer", "system", "tool", "user")
ANTHROPIC_ROLES = ("assistant", "user")

MESSAGE_OVERHEAD = 4
REPLY_PRIMING = 3

BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark: skipped on input, never written


@dataclass
class Transcript:
    """A parsed transcript. ``wrapper`` is the top-level object of the ``messages`` shape."""

    format: str
    shape: str
    messages: list[dict]
    wrapper: dict | None = None
    stdjson: bool = False  # parsed by the json module (orjson refused: huge ints, surrogates)

    def system_text(self) -> str | None:
        """The Anthropic top-level system prompt as text (None when there is none)."""
        if self.format != ANTHROPIC or not self.wrapper or "system" not in self.wrapper:
            return None
        parts: list[str] = []
        _content_text(self.wrapper["system"], parts)
        return "\n".join(parts)


# --- parsing -------------------------------------------------------------------------------


def _loads(data: bytes) -> tuple[object, bool]:
    import orjson

    from ctxtools.jsonbound import long_int_spans

    # orjson reads an integer past 64 bits as a double, its digits changed: a transcript
    # holding one is read and written by the json module, which keeps it exact.
    if not long_int_spans(data):
        try:
            return orjson.loads(data), False
        except orjson.JSONDecodeError as exc:
            if exc.msg == "unexpected content after document":  # JSON Lines, or worse: the
                # json module would not read it either -- and decoding it all costs a copy
                doc = data[: exc.pos + 1].decode("utf-8", "replace")
                raise json.JSONDecodeError("Extra data", doc, len(doc) - 1) from None
    # The json module accepts what orjson refuses (lone surrogate escapes) and gives the
    # line/column of real syntax errors.
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid UTF-8 at byte {exc.start}") from None
    try:
        return json.loads(text), True
    except RecursionError:  # orjson stops at 1,024 levels, json's parser at ~1,000 frames
        raise InputError(
            "the JSON nests too deeply to be a transcript",
            hint="a transcript is a list of message objects",
        ) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # past sys.get_int_max_str_digits(): its conversion is quadratic
        raise InputError(_HUGE_INT, hint="a transcript's numbers are counts and ids") from None


# Python converts an integer of more digits than this only in quadratic time, so its json
# module refuses one: a transcript never holds such a number, and one is refused.
_HUGE_INT = f"a JSON integer of more than {sys.get_int_max_str_digits():,} digits"


def head_error(problem, where: str = "") -> InputError:
    """The error for an input whose first bytes cannot be a transcript (``jsonbound``):
    PROBLEM's position and message, as a parser's error would give them; WHERE before."""
    return InputError(
        f"{where}invalid JSON at line {problem.lineno}, column {problem.colno}: {problem.msg}",
        hint='give a JSON list of messages, {"messages": [...]}, or JSON Lines',
    )


def _json_error(exc: json.JSONDecodeError, line_offset: int = 0) -> InputError:
    return InputError(
        f"invalid JSON at line {exc.lineno + line_offset}, column {exc.colno}: {exc.msg}",
        hint='give a JSON list of messages, {"messages": [...]}, or JSON Lines',
    )


def load(data: bytes, fmt: str | None = None, source: str | None = None) -> Transcript:
    """Parse DATA (bytes) as a transcript; FMT forces ``openai`` or ``anthropic``. SOURCE:
    the file DATA was read from (None: stdin), as an empty input's error names it."""
    if fmt not in (None, "auto", *FORMATS):
        raise UsageError(f"unknown format {fmt!r}", hint="openai, anthropic or auto")
    if data.startswith(BOM):  # editors on Windows write one; JSON (RFC 8259) has none
        data = data[len(BOM) :]
    if not data.strip():
        if source is not None:  # (not "no input ... on stdin": the user gave a file)
            raise InputError(f"empty transcript: {source} is empty")
        raise InputError("empty transcript: no input", hint="give a JSON transcript on stdin")
    stdjson = False
    try:
        doc, stdjson = _loads(data)
        shape = None
    except json.JSONDecodeError as exc:
        doc, shape, stdjson = _load_jsonl(data, exc)
    wrapper = None
    if shape == SHAPE_JSONL:
        messages = doc
    elif isinstance(doc, list):
        shape, messages = SHAPE_LIST, doc
    elif isinstance(doc, dict) and "messages" in doc:
        shape, wrapper, messages = SHAPE_WRAPPER, doc, doc["messages"]
        if not isinstance(messages, list):
            raise InputError('"messages" is not a list')
    elif isinstance(doc, dict) and "role" in doc:
        shape, messages = SHAPE_JSONL, [doc]
    else:
        raise InputError(
            'not a transcript: expected a list of messages, an object with "messages", '
            "or JSON Lines of messages"
        )
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise InputError(f"message {i + 1} is not a JSON object")
        role = msg.get("role")
        if not isinstance(role, str):
            what = "has no" if role is None else f"has a JSON {_json_kind(role)} for its"
            raise InputError(
                f'message {i + 1} {what} "role"'
                + ("" if role is None else " (a string: user, assistant, ...)")
            )
    if fmt in (None, "auto"):
        fmt = detect_format(messages, wrapper)
    elif fmt == OPENAI and _block_types(messages) & {"tool_use", "tool_result"}:
        raise InputError(
            "--format openai, but the messages carry tool_use/tool_result blocks",
            hint="this is an Anthropic transcript: --format anthropic or auto",
        )
    elif fmt == ANTHROPIC and any("tool_calls" in m for m in messages):
        raise InputError(
            "--format anthropic, but the messages carry tool_calls",
            hint="this is an OpenAI transcript: --format openai or auto",
        )
    tr = Transcript(fmt, shape, messages, wrapper, stdjson)
    check_roles(tr)
    check_fields(messages)
    return tr


def _lines(data: bytes):
    """(number, line) of DATA's non-blank lines, one at a time (no copy of the whole)."""
    start = 0
    n = 0
    while start <= len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        n += 1
        line = data[start:end]
        if line.strip():
            yield n, line
        start = end + 1


def _load_jsonl(data: bytes, first_error: json.JSONDecodeError) -> tuple[list, str, bool]:
    nonblank = _lines(data)
    first = next(nonblank, None)
    second = next(nonblank, None)
    if second is None:
        raise _json_error(first_error) from None
    out = []
    stdjson = False
    for n, line in itertools.chain((first, second), nonblank):
        try:
            obj, std = _loads(line)
        except json.JSONDecodeError as exc:
            raise _json_error(exc, n - 1) from None
        except InputError as exc:
            raise InputError(f"line {n}: {exc.message}", hint=exc.hint) from None
        if not isinstance(obj, dict):
            raise InputError(f"line {n}: a JSON Lines transcript has one message object a line")
        stdjson = stdjson or std
        out.append(obj)
    return out, SHAPE_JSONL, stdjson


def _block_types(messages: list[dict]) -> set[str]:
    types: set[str] = set()
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and isinstance(block.get("type"), str):
                    types.add(block["type"])
    return types


def detect_format(messages: list[dict], wrapper: dict | None) -> str:
    """``anthropic`` when there are tool_use/tool_result blocks or a top-level system;
    ``openai`` otherwise (including the plain user/assistant case, valid in both)."""
    roles = {m["role"] for m in messages}
    if roles & {"system", "developer", "tool"} or any("tool_calls" in m for m in messages):
        return OPENAI
    if _block_types(messages) & {"tool_use", "tool_result"}:
        return ANTHROPIC
    if wrapper is not None and "system" in wrapper:
        return ANTHROPIC
    return OPENAI


def check_roles(tr: Transcript) -> None:
    allowed = OPENAI_ROLES if tr.format == OPENAI else ANTHROPIC_ROLES
    for i, msg in enumerate(tr.messages):
        if msg["role"] not in allowed:
            raise InputError(
                f"message {i + 1}: unknown role {msg['role']!r} for the {tr.format} format",
                hint="roles: " + ", ".join(allowed),
            )


_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "true or false"}


def _kind(value: object) -> str:
    if value is None:
        return "null"
    for typ, name in _JSON_TYPES.items():
        if isinstance(value, typ):
            return name
    return "a number"


def _want(where: str, obj: dict, key: str, typ: type, what: str) -> None:
    """InputError unless OBJ[KEY] is absent, null or a TYP."""
    value = obj.get(key)
    if value is not None and not isinstance(value, typ):
        raise InputError(f'{where}: "{key}" is {_kind(value)}, not {what}')


def check_fields(messages: list[dict]) -> None:
    """Every field the links, the elision and --keep-tool read has its JSON type: an id or a
    tool name that is a list (``"tool_use_id": []``) is an InputError naming the message,
    not a traceback. Fields ctx-compact does not read are not looked at."""
    for i, msg in enumerate(messages, 1):
        check_message_fields(i, msg)


def check_message_fields(i: int, msg: dict) -> None:
    """``check_fields`` for message I (1-based), MSG."""
    where = f"message {i}"
    _want(where, msg, "tool_call_id", str, "a string")
    _want(where, msg, "name", str, "a string")
    _want(where, msg, "tool_calls", list, "a list")
    for k, call in enumerate(msg.get("tool_calls") or (), 1):
        at = f"{where}, tool call {k}"
        if not isinstance(call, dict):
            raise InputError(f"{at}: is {_kind(call)}, not an object")
        _want(at, call, "id", str, "a string")
        _want(at, call, "type", str, "a string")
        _want(at, call, "function", dict, "an object")
        _want(at, call.get("function") or {}, "name", str, "a string")
    content = msg.get("content")
    for k, block in enumerate(content if isinstance(content, list) else (), 1):
        if not isinstance(block, dict):
            continue  # a string part: text
        at = f"{where}, block {k}"
        _want(at, block, "type", str, "a string")
        for key in ("id", "name", "tool_use_id"):
            _want(at, block, key, str, "a string")


# --- writing -------------------------------------------------------------------------------


def dump(tr: Transcript, messages: list[dict] | None = None) -> bytes:
    """TR (or TR with MESSAGES instead of its own) as bytes, in TR's shape, ending in a newline."""
    msgs = tr.messages if messages is None else messages
    if tr.shape == SHAPE_JSONL:
        return jsonout.dumps_lines(msgs, tr.stdjson)
    wrapper = (tr.wrapper or {}) if tr.shape == SHAPE_WRAPPER else None
    return jsonout.dumps_with_list(wrapper, "messages", msgs, tr.stdjson)


def dumps_message(msg: dict, stdjson: bool = False) -> bytes:
    return jsonout.dumps(msg, stdjson)


# --- text of a message (what is counted, summarised, searched) ------------------------------


def _compact_json(obj: object) -> str:
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    except (TypeError, ValueError):
        return str(obj)


def _content_text(content: object, parts: list[str]) -> None:
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                btype = block.get("type")
                if btype == "tool_use":
                    parts.append(str(block.get("name", "")))
                    parts.append(_compact_json(block.get("input", {})))
                elif btype == "tool_result":
                    _content_text(block.get("content", ""), parts)
                elif isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif isinstance(block.get("thinking"), str):
                    parts.append(block["thinking"])


def message_text(msg: dict) -> str:
    """The text of MSG the model reads: content, tool calls (name + arguments), tool results."""
    parts: list[str] = []
    _content_text(msg.get("content"), parts)
    calls = msg.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            if not isinstance(call, dict):
                continue
            fn = call.get("function") or {}
            if isinstance(fn, dict):
                parts.append(str(fn.get("name", "")))
                args = fn.get("arguments", "")
                parts.append(args if isinstance(args, str) else _compact_json(args))
    return "\n".join(parts)


def result_text(content: object) -> str:
    """The text of a tool result's content (a string, or parts/blocks)."""
    parts: list[str] = []
    _content_text(content, parts)
    return "\n".join(parts)


class TokenCounter:
    """Counts messages with one ruler; identical texts are counted once (agents re-read files).
    A long text is counted as plain ctx-count counts it (``textcount``); ``notes`` says why
    a count is not exact, when the cutter could not prove one of its cuts."""

    def __init__(self, ruler) -> None:
        self.ruler = ruler
        self._memo: dict[str, int] = {}
        self._chars = 0  # in the memo's texts
        self.notes: list[str] = []

    def text(self, text: str) -> int:
        n = self._memo.get(text)
        if n is None:
            n = count_text(text, self.ruler, self.notes)
            self._memo[text] = n
            self._chars += len(text)
        return n

    def trim(self, max_chars: int, max_texts: int) -> None:
        """Forget the texts counted so far when they hold over MAX_CHARS characters or
        number over MAX_TEXTS (a stream of messages counted in bounded memory)."""
        if self._chars > max_chars or len(self._memo) > max_texts:
            self._memo.clear()
            self._chars = 0

    def message(self, msg: dict) -> int:
        return MESSAGE_OVERHEAD + self.text(message_text(msg))

    def prefill(self, texts: list[str]) -> None:
        """Count TEXTS ahead, on two threads when the ruler releases the GIL."""
        todo = list(dict.fromkeys(t for t in texts if t and t not in self._memo))
        for t, n in zip(todo, count_many(todo, self.ruler, self.notes), strict=True):
            self._memo[t] = n
            self._chars += len(t)

    def transcript(self, tr: Transcript, messages: list[dict] | None = None) -> int:
        msgs = tr.messages if messages is None else messages
        self.prefill([message_text(m) for m in msgs])
        total = sum(self.message(m) for m in msgs) + REPLY_PRIMING
        system = tr.system_text()
        if system is not None:
            total += MESSAGE_OVERHEAD + self.text(system)
        return total


# --- structure: which result answers which call ----------------------------------------------


@dataclass
class Problem:
    """Something the API would reject. ``kind``: orphan, unanswered, alternation, order, system."""

    kind: str
    index: int  # zero-based message index
    detail: str
    call_id: str | None = None

    def __str__(self) -> str:
        return f"message {self.index + 1}: {self.detail}"


@dataclass
class Links:
    """Tool-call structure of a transcript.

    ``origin[j]`` is, for a message j holding tool results, the index of the assistant
    message whose calls they answer (or -1 for an orphan); ``problems`` lists what is wrong.
    """

    origin: dict[int, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def openai_call_ids(msg: dict) -> list[str]:
    calls = msg.get("tool_calls")
    if msg.get("role") != "assistant" or not isinstance(calls, list):
        return []
    return [c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)]


def tool_uses(msg: dict) -> list[dict]:
    content = msg.get("content")
    if msg.get("role") != "assistant" or not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]


def tool_results(msg: dict) -> list[dict]:
    content = msg.get("content")
    if msg.get("role") != "user" or not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def links(tr: Transcript) -> Links:
    return _links_openai(tr.messages) if tr.format == OPENAI else _links_anthropic(tr.messages)


def _links_openai(messages: list[dict]) -> Links:
    out = Links()
    owner = -1  # the assistant message whose results may follow
    pending: list[str] = []
    answered: set[str] = set()

    def close() -> None:
        for cid in pending:
            if cid not in answered:
                out.problems.append(
                    Problem("unanswered", owner, f"tool call {cid!r} has no result", cid)
                )

    for j, msg in enumerate(messages):
        role = msg["role"]
        if role == "tool":
            cid = msg.get("tool_call_id")
            if owner >= 0 and cid in pending and cid not in answered:
                answered.add(cid)
                out.origin[j] = owner
            else:
                out.origin[j] = -1
                why = "answers no call of the preceding assistant message"
                if cid in answered:
                    why = "answers a call that already has a result"
                what = _result_name(cid, "tool result", "tool_call_id")
                out.problems.append(Problem("orphan", j, f"{what} {why}", cid))
            continue
        if owner >= 0:
            close()
        owner, pending, answered = -1, [], set()
        if role == "assistant":
            ids = openai_call_ids(msg)
            if ids:
                owner, pending = j, ids
    # Calls of the last assistant message may still be running: pending, not a problem.
    return out


def _result_name(uid: object, kind: str, key: str) -> str:
    """How a problem names a tool result: by its id, or as having none (a Python None in
    a message reads as the program's, not the transcript's)."""
    return f"{kind} {uid!r}" if uid is not None else f"a {kind} without a {key}"


def _is_result(block: object) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


def _links_anthropic(messages: list[dict]) -> Links:
    out = Links()
    prev_role = None
    for j, msg in enumerate(messages):
        role = msg["role"]
        if j == 0 and role != "user":
            out.problems.append(Problem("alternation", j, "the first message is not a user turn"))
        if prev_role == role:
            out.problems.append(Problem("alternation", j, f"two {role} turns in a row"))
        prev_role = role
        results = tool_results(msg)
        if results:
            kinds = [_is_result(b) for b in msg["content"]]
            if True in kinds[kinds.index(False) :] if False in kinds else False:
                out.problems.append(Problem("order", j, "a tool_result follows other content"))
            prev = messages[j - 1] if j > 0 else None
            ids = {b.get("id") for b in tool_uses(prev)} if prev else set()
            seen: set[str] = set()
            orphan = False
            for b in results:
                uid = b.get("tool_use_id")
                if uid not in ids or uid in seen:
                    orphan = True
                    out.problems.append(
                        Problem(
                            "orphan",
                            j,
                            _result_name(uid, "tool_result", "tool_use_id")
                            + " answers no tool_use of the previous turn",
                            uid if isinstance(uid, str) else None,
                        )
                    )
                seen.add(uid)
            out.origin[j] = -1 if orphan else j - 1
        uses = tool_uses(msg)
        if uses and j + 1 < len(messages):
            nxt = {b.get("tool_use_id") for b in tool_results(messages[j + 1])}
            for b in uses:
                if b.get("id") not in nxt:
                    uid = b.get("id")
                    out.problems.append(
                        Problem("unanswered", j, f"tool_use {uid!r} has no result", uid)
                    )
    return out


def _json_kind(value) -> str:
    """What VALUE is in JSON's words (a list is an array, a dict an object)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {list: "array", dict: "object"}.get(type(value), type(value).__name__)
