"""The must-preserve digest: what the dropped messages did, as lists, in a fixed order.

Sections, always in this order and always present (``- none`` when empty): files read, files
edited, commands with their exit status, failed calls with their error line, decisions.
Built from the tool calls, their results and the assistant's text -- no model involved, so
the same dropped messages always give the same digest.

Tool calls are recognised by shape, not by one agent's tool names: a call with a path
argument (``path``, ``file_path``, ``filePath``...) is a read or an edit (by the editor
sub-command such as ``view``/``str_replace``/``create``, or by a tool name like
``Read``/``Edit``/``Write``); ``apply_patch`` patches name their files; a call with a
``command``/``cmd`` string (or argv list) is a shell command. Exit statuses are read from the
result (``exit code 2``, ``Exit code: 2``, ``"exit_code": 2``...); a call failed when its exit
status is not 0, its result is flagged ``is_error``, or its result opens with ``ERROR``/
``Error:``/``Traceback``.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field

from ctxtools.compact.transcript import (
    ANTHROPIC,
    openai_call_ids,
    result_text,
)

HEADER = "[ctx-compact digest"

PATH_KEYS = ("path", "file_path", "filePath", "filename", "file", "target_file", "notebook_path")
COMMAND_KEYS = ("command", "cmd", "script")
EDITOR_READ = {"view", "read", "cat", "open"}
EDITOR_EDIT = {"create", "str_replace", "insert", "undo_edit", "write", "append", "delete", "edit"}
_EDIT_NAME = re.compile(r"edit|write|create|patch|replace|insert|append|delete|rename|move", re.I)
_THINK_NAME = re.compile(r"think|plan|reason", re.I)
_EXIT_RE = re.compile(
    r"exit(?:ed)?(?: with)? (?:code|status)[:= ]+(-?\d+)"
    r"|\"?exit_?code\"?\s*[:=]\s*(-?\d+)",
    re.I,
)
_ERROR_START = re.compile(r"^\s*(error\b|traceback|exception\b|fatal\b|panic\b)", re.I)
_ERROR_LINE = re.compile(
    r"error|fail|fatal|exception|traceback|not found|no such|cannot|can't|denied|invalid|"
    r"refused|timed out|segmentation",
    re.I,
)
_SUFFIX_LINE = re.compile(r"^\[(the )?command (completed|finished|exited)", re.I)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\+\+\+ b/(.+)$", re.M)
# Whole words only, with their inflections spelled out: "decided", "decision", "planned"
# are decisions; "undecidable", "decidable", "indecision", "planet", "explanation" are not.
_DECISION = re.compile(
    r"\b(I'll|I will|I'm going to|I am going to|let's|let me|we should|I should|we need|"
    r"I need|decid(?:e|ed|es|ing)|decisions?|instead|the fix|fix(?:ed)? (?:by|it)|"
    r"the (?:issue|problem|cause) is|root cause|plan(?:s|ned|ning)?)\b",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\[(])")

MAX_ITEM_CHARS = 240
WINDOW = 2048  # characters at each end of a result searched for exit statuses and errors
CAPS = {"read": 60, "edited": 60, "commands": 60, "failed": 40, "decisions": 15}


def _short(text: str, limit: int = MAX_ITEM_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _args(raw: object) -> object:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def exit_status(text: str) -> int | None:
    """The last exit status a tool result reports (None when it reports none)."""
    if len(text) > 2 * WINDOW:  # statuses are reported at the start or the end
        text = text[:WINDOW] + "\n" + text[-WINDOW:]
    found: tuple[int, int] | None = None
    for m in _EXIT_RE.finditer(text):
        found = (m.start(), int(m.group(1) or m.group(2)))
    return None if found is None else found[1]


def error_line(text: str) -> str:
    """The line of TEXT that says what went wrong (a bare ``ERROR:`` joins the next line)."""
    if len(text) > 2 * WINDOW:
        text = text[:WINDOW] + "\n" + text[-WINDOW:]
    lines = [ln.strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not _SUFFIX_LINE.match(ln)]
    for i, ln in enumerate(lines):
        if _ERROR_LINE.search(ln):
            if len(ln) <= 8 and ln.endswith(":") and i + 1 < len(lines):
                return _short(f"{ln} {lines[i + 1]}")
            return _short(ln)
    return _short(lines[0]) if lines else "(no output)"


@dataclass
class Call:
    name: str
    args: object
    result: str | None
    is_error: bool = False


@dataclass
class Facts:
    """Ordered, de-duplicated facts of the dropped messages (grows message by message)."""

    read: dict[str, int] = field(default_factory=dict)
    edited: dict[str, int] = field(default_factory=dict)
    commands: dict[tuple[str, str], int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    decisions: list[str] = field(default_factory=list)
    earlier_digests: list[str] = field(default_factory=list)

    def add_call(self, call: Call) -> None:
        name = call.name
        args = call.args if isinstance(call.args, dict) else {}
        result = call.result
        # File operations fail by flag or by an error opening their result; an exit status
        # only counts for commands (a viewed file may well contain "exit code 1").
        failed = call.is_error or (result is not None and bool(_ERROR_START.match(result)))
        status = None
        path = next((args[k] for k in PATH_KEYS if isinstance(args.get(k), str)), None)
        sub = args.get("command") if isinstance(args.get("command"), str) else None
        patch = _patch_text(args, call.args)
        if _THINK_NAME.search(name) and isinstance(args.get("thought"), str):
            self.add_decision(args["thought"])
            return
        if patch is not None:
            paths = [a or b for a, b in _PATCH_FILE.findall(patch)]
            what = f"{name} " + (", ".join(paths) if paths else "(patch)")
            if failed:
                self._failed(what, result, status)
            else:
                for p in paths:
                    _bump(self.edited, p.strip())
            return
        if path is not None:
            verb = sub if sub is not None and (sub in EDITOR_READ or sub in EDITOR_EDIT) else None
            is_edit = verb in EDITOR_EDIT if verb else bool(_EDIT_NAME.search(name))
            label = f"{name} {verb} {path}" if verb else f"{name} {path}"
            if failed:
                self._failed(label, result, status)
            elif is_edit:
                _bump(self.edited, path)
            else:  # a view, a read, or any other call on a path that does not change it
                _bump(self.read, path)
            return
        command = None
        for key in COMMAND_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                command = value.strip()
                break
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                command = shlex.join(value)
                break
        if command is None and isinstance(call.args, str) and call.args.strip():
            command = None
        if result is not None:
            status = exit_status(result)
            failed = failed or status not in (None, 0)
        if command is not None:
            shown = _short(command, 400)
            exit_shown = "?" if status is None else str(status)
            if failed and status in (None, 0):
                exit_shown = "error"
            _bump(self.commands, (shown, exit_shown))
            if failed:
                self._failed(f"`{shown}`", result, status)
            return
        if failed:
            self._failed(f"{name} {_short(_arg_summary(call.args), 120)}".strip(), result, status)

    def _failed(self, what: str, result: str | None, status: int | None) -> None:
        why = error_line(result or "")
        tag = f"exit {status}: " if status not in (None, 0) else ""
        _bump(self.failed, f"{what} → {tag}{why}")

    def add_decision(self, text: str) -> None:
        for para in text.split("\n"):
            for sentence in _SENTENCE_END.split(para.strip()):
                if _DECISION.search(sentence):
                    item = _short(sentence)
                    if item not in self.decisions[-3:]:
                        self.decisions.append(item)
                    return

    def add_message(self, msg: dict, results: dict[str, tuple[str, bool]], fmt: str) -> None:
        """Feed one dropped message; RESULTS maps call ids to (result text, is_error)."""
        role = msg.get("role")
        content = msg.get("content")
        if role in ("user", "system", "developer") and isinstance(content, str):
            if content.startswith(HEADER):
                self.earlier_digests.append(content.split("\n", 1)[0])
            return
        if role != "assistant":
            return
        if isinstance(content, str) and content.strip():
            self.add_decision(content)
        if fmt == ANTHROPIC and isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    self.add_decision(block["text"])
                elif block.get("type") == "tool_use":
                    res = results.get(block.get("id"))
                    self.add_call(
                        Call(
                            str(block.get("name", "")),
                            block.get("input"),
                            res[0] if res else None,
                            bool(res and res[1]),
                        )
                    )
            return
        calls = msg.get("tool_calls") if isinstance(msg.get("tool_calls"), list) else []
        ids = openai_call_ids(msg)
        for call in calls:
            if not isinstance(call, dict):
                continue
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            cid = call.get("id")
            res = results.get(cid) if cid in ids else None
            self.add_call(
                Call(str(fn.get("name", "")), _args(fn.get("arguments")), res[0] if res else None)
            )


def _bump(d: dict, key) -> None:
    d[key] = d.get(key, 0) + 1


def _patch_text(args: dict, raw: object) -> str | None:
    for key in ("patch", "input", "diff"):
        v = args.get(key)
        if isinstance(v, str) and ("*** Begin Patch" in v or v.startswith("--- ")):
            return v
    if isinstance(raw, str) and "*** Begin Patch" in raw:
        return raw
    return None


def _arg_summary(args: object) -> str:
    if isinstance(args, dict):
        return json.dumps(args, ensure_ascii=False, sort_keys=True)[:200]
    return str(args)[:200]


def results_by_call(messages: list[dict], fmt: str) -> dict[str, tuple[str, bool]]:
    """Call id -> (result text, is_error) for every tool result in MESSAGES."""
    out: dict[str, tuple[str, bool]] = {}
    for msg in messages:
        if fmt == ANTHROPIC:
            content = msg.get("content")
            if msg.get("role") == "user" and isinstance(content, list):
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "tool_result":
                        out[b.get("tool_use_id")] = (
                            result_text(b.get("content", "")),
                            bool(b.get("is_error")),
                        )
        elif msg.get("role") == "tool":
            out[msg.get("tool_call_id")] = (result_text(msg.get("content", "")), False)
    return out


def _section(title: str, items: list[str], cap: int, newest: bool, more: str) -> list[str]:
    lines = [f"{title}:"]
    if not items:
        return lines + ["- none"]
    if len(items) > cap:
        extra = len(items) - cap
        items = items[-cap:] if newest else items[:cap]
        note = f"- (+{extra:,} {'earlier' if newest else 'more'} {more} in the originals)"
        lines += [note] if newest else []
        lines += [f"- {x}" for x in items]
        lines += [] if newest else [note]
        return lines
    return lines + [f"- {x}" for x in items]


def _counted(d: dict, fmt) -> list[str]:
    return [fmt(k) + (f" (×{n})" if n > 1 else "") for k, n in d.items()]


def render(
    facts: Facts,
    *,
    first: int,
    last: int,
    count: int,
    total: int,
    ref: str | None,
    narrative: str | None = None,
    scale: float = 1.0,
    kept: int = 0,
) -> str:
    """The digest text. FIRST..LAST are 1-based message numbers of the dropped span.

    SCALE < 1 shortens the capped lists (a tighter digest when the full one does not fit).
    KEPT messages of the span stay after the digest (``--keep-tool``): COUNT excludes them.
    NARRATIVE (a summarizer's text, with its own heading) goes last: state before story.
    """

    def cap(key: str) -> int:
        return max(3, int(CAPS[key] * scale))

    where = f"; the originals: ctx-read {ref}" if ref else ""
    why = f"; {kept:,} with --keep-tool calls or results follow, kept" if kept else ""
    head = (
        f"{HEADER}: messages {first:,}–{last:,} of {total:,} were dropped "
        f"({count:,} messages{why}){where}]"
    )
    lines = [head]
    if facts.earlier_digests:
        lines.append("Earlier digests:")
        lines += [f"- {d}" for d in facts.earlier_digests]
    lines += _section("Files read", list(facts.read), cap("read"), False, "files")
    lines += _section("Files edited", list(facts.edited), CAPS["edited"], False, "files")
    lines += _section(
        "Commands (exit status)",
        _counted(facts.commands, lambda k: f"`{k[0]}` → {k[1]}"),
        cap("commands"),
        True,
        "commands",
    )
    lines += _section("Failed calls", _counted(facts.failed, str), cap("failed"), True, "failures")
    lines += _section("Decisions", facts.decisions, cap("decisions"), True, "decisions")
    if narrative:
        lines.append(narrative)
    return "\n".join(lines)


def is_digest(msg: dict) -> bool:
    content = msg.get("content")
    if isinstance(content, str):
        return content.startswith(HEADER)
    return False


def render_dropped(messages: list[dict], first_index: int) -> str:
    """Dropped MESSAGES as plain text for a summarizer (numbered from FIRST_INDEX + 1)."""
    from ctxtools.compact.transcript import message_text

    out = []
    for i, msg in enumerate(messages, first_index + 1):
        role = msg.get("role", "?")
        extra = f", answering {msg['tool_call_id']}" if msg.get("tool_call_id") else ""
        out.append(f"### {role} (message {i}{extra})")
        out.append(message_text(msg))
        out.append("")
    return "\n".join(out)
