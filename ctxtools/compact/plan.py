"""Compaction: trigger, stage 1 (elision), stage 2 (cut + digest), the optional summary.

``compact(tr, counter, opts, stash)`` decides everything on token counts first and writes to
the stash only what the output will reference:

1. Trigger: below ``at`` percent of ``limit`` nothing changes (unless ``force``). The target is
   ``at - band`` percent (hysteresis: a compaction must open that much headroom).
2. Stage 1: tool results outside the protected tail are elided, oldest first, until the
   transcript is under the target (``force``: all of them). The protected tail is the last
   ``keep_recent`` turns (a turn: an assistant message and the results answering it) plus the
   newest tool results before it up to ``keep_tokens``. The system prompt and the first user
   message are never touched. A result is only elided when its placeholder is shorter, and
   never when it answers a call of a ``keep_tools`` tool.
3. Stage 2, only if still over the target: the oldest messages after the head (system prompt,
   first user message and any earlier digests) are dropped up to a cut ``k`` -- the smallest
   that gets under the target, else the largest allowed (then the outcome is ``no_headroom``).
   A cut is allowed when the kept tail does not start on a tool result (OpenAI) or starts on an
   assistant turn (Anthropic), contains no result whose call was dropped, and keeps the
   protected tail. The dropped messages, unchanged, are stashed as JSON Lines, and one digest
   names that handle: an OpenAI ``user`` message after the head; for Anthropic a text block
   appended to the first user turn, so that user and assistant turns keep alternating.
   Calls of ``keep_tools`` tools in the dropped span stay, with their results, right after
   the digest: each message reduced to its kept calls or kept results (whole when that is
   all of it), in order, so every kept result still follows its call; their tokens count
   against the target like the digest's.
4. A summarizer's narrative joins the digest only if it passes the gate and still fits.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

from ctxtools.compact import accept as acceptmod
from ctxtools.compact.digest import Facts, is_digest, render, render_dropped, results_by_call
from ctxtools.compact.elide import (
    Stash,
    content_bytes,
    handle_name,
    is_placeholder,
    placeholder,
    predict_ref,
)
from ctxtools.compact.transcript import (
    ANTHROPIC,
    MESSAGE_OVERHEAD,
    OPENAI,
    REPLY_PRIMING,
    TokenCounter,
    Transcript,
    dumps_message,
    links,
    message_text,
    result_text,
    tool_results,
    tool_uses,
)

CHUNK = 512  # messages counted per step of the backward pass
DIGEST_SCALES = (1.0, 0.5, 0.25, 0.0)  # list caps of the digest, tightened when it does not fit

# What the token figures count: each message's text (content, tool calls, results) plus
# MESSAGE_OVERHEAD tokens of framing, plus REPLY_PRIMING -- as the APIs bill a request,
# not the raw JSON of the file (whose quotes, keys and escapes cost ~40% more).
COUNTED = "messages"

UNCHANGED = "unchanged"
COMPACTED = "compacted"
NO_HEADROOM = "no_headroom"


@dataclass
class Options:
    limit: int
    at: float = 80.0
    band: float = 5.0
    force: bool = False
    keep_recent: int = 3
    keep_tokens: int | None = None  # None: 10% of the limit
    session: str = "default"
    summarizer: list[str] | None = None
    summarizer_timeout: float = acceptmod.DEFAULT_TIMEOUT
    min_ratio: float = acceptmod.DEFAULT_MIN_RATIO
    min_path_share: float = acceptmod.DEFAULT_MIN_PATH_SHARE
    keep_tools: tuple[str, ...] = ()  # tools whose calls and results are never elided/dropped
    lazy: bool = True  # skip counting messages that can only be dropped (see compact())


@dataclass
class Outcome:
    status: str
    messages: list[dict] | None  # None: the input stays as it is
    tokens_before: int
    tokens_after: int
    report: dict
    notes: list[str] = field(default_factory=list)
    below_trigger: bool = False  # unchanged because under the trigger (notes[0] says so)


def _percent(tokens: int, limit: int) -> float:
    return round(100.0 * tokens / limit, 2) if limit else 0.0


def _headroom_note(tokens: int, limit: int, target_pct: float, target: int) -> str:
    return (
        f"compaction reached {tokens:,} tokens = {100.0 * tokens / limit:.1f}% of {limit:,}, "
        f"not under the {target_pct:g}% target ({target:,} tokens)"
    )


def head_end(tr: Transcript) -> int:
    """Index of the last head message: the first user message plus earlier digests after it
    (or the leading system messages when there is no user message; -1 for none)."""
    msgs = tr.messages
    first_user = next(
        (i for i, m in enumerate(msgs) if m["role"] == "user" and not tool_results(m)), None
    )
    if first_user is None:
        end = -1
        while end + 1 < len(msgs) and msgs[end + 1]["role"] in ("system", "developer"):
            end += 1
        return end
    end = first_user
    while end + 1 < len(msgs) and is_digest(msgs[end + 1]):
        end += 1
    return end


def protected_start(tr: Transcript, head: int, keep_recent: int) -> int:
    msgs = tr.messages
    if keep_recent <= 0:
        return len(msgs)
    turns = [i for i in range(head + 1, len(msgs)) if msgs[i]["role"] == "assistant"]
    if len(turns) >= keep_recent:
        return turns[-keep_recent]
    return head + 1


def _put_all(stash: Stash, puts: dict[str, tuple[bytes, str | None]]) -> dict[str, str]:
    """Stash every (data, type) under its name in one batch; name -> ref. A stash without
    ``put_many`` gets one ``put`` after another."""
    items = [(data, name, t) for name, (data, t) in puts.items()]
    put_many = getattr(stash, "put_many", None)
    if put_many is None:
        refs = [stash.put(data, name, type=t) for data, name, t in items]
    else:
        refs = put_many(items)
    return {name: ref for (_data, name, _t), ref in zip(items, refs, strict=True)}


def _with_elisions(msg: dict, fmt: str, blocks: dict[int | None, str]) -> dict:
    if fmt == OPENAI:
        return dict(msg, content=blocks[None])
    content = list(msg["content"])
    for bi, text in blocks.items():
        content[bi] = dict(content[bi], content=text)
    return dict(msg, content=content)


class _Keep:
    """Which calls and results belong to the ``--keep-tool`` tools (by the name of the call)."""

    def __init__(self, tr: Transcript, origin: dict[int, int], names: tuple[str, ...]) -> None:
        self.tr = tr
        self.origin = origin
        self.names = frozenset(names)

    def __bool__(self) -> bool:
        return bool(self.names)

    def call(self, call: object) -> bool:
        """Whether CALL (an OpenAI tool call or an Anthropic tool_use block) is kept."""
        if not isinstance(call, dict):
            return False
        if self.tr.format == OPENAI:
            fn = call.get("function")
            return isinstance(fn, dict) and fn.get("name") in self.names
        return call.get("type") == "tool_use" and call.get("name") in self.names

    def result(self, j: int, call_id: object) -> bool:
        """Whether the result CALL_ID in message J answers a kept call."""
        if not self.names:
            return False
        o = self.origin.get(j, -1)
        if o < 0:
            return False
        owner = self.tr.messages[o]
        calls = (owner.get("tool_calls") or []) if self.tr.format == OPENAI else tool_uses(owner)
        return any(self.call(c) and c.get("id") == call_id for c in calls)

    def count(self, lo: int, hi: int) -> int:
        """Results of kept tools in messages (LO, HI): the ones stage 1 leaves in place."""
        if not self.names:
            return 0
        found = 0
        for j in range(lo + 1, min(hi, len(self.tr.messages))):
            msg = self.tr.messages[j]
            if self.tr.format == OPENAI:
                found += msg["role"] == "tool" and self.result(j, msg.get("tool_call_id"))
            else:
                found += sum(self.result(j, b.get("tool_use_id")) for b in tool_results(msg))
        return found

    def kept_part(self, j: int) -> dict | None:
        """Message J as it stays when a cut drops it: its kept calls, or its kept results
        (the message itself when that is all of it), or None when it holds neither."""
        msg = self.tr.messages[j]
        role = msg["role"]
        if self.tr.format == OPENAI:
            if role == "tool":
                return msg if self.result(j, msg.get("tool_call_id")) else None
            calls = msg.get("tool_calls")
            if role != "assistant" or not isinstance(calls, list):
                return None
            kept = [c for c in calls if self.call(c)]
            if not kept:
                return None
            return msg if len(kept) == len(calls) else dict(msg, tool_calls=kept)
        content = msg.get("content")
        if not isinstance(content, list):
            return None
        if role == "assistant":
            uses = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
            if not any(self.call(b) for b in uses):
                return None
            gone = {id(b) for b in uses if not self.call(b)}
            blocks = [b for b in content if id(b) not in gone]
            return msg if len(blocks) == len(content) else dict(msg, content=blocks)
        results = [b for b in tool_results(msg) if self.result(j, b.get("tool_use_id"))]
        if not results:
            return None
        return msg if len(results) == len(content) else dict(msg, content=results)


def _units_of(tr: Transcript, i: int, keep: _Keep) -> list[tuple[int | None, object]]:
    """The tool results of message I that may be elided: (block index or None, content)."""
    msg = tr.messages[i]
    if tr.format == OPENAI:
        if (
            msg["role"] == "tool"
            and not is_placeholder(msg.get("content"))
            and not keep.result(i, msg.get("tool_call_id"))
        ):
            return [(None, msg.get("content"))]
        return []
    content = msg.get("content")
    if msg["role"] != "user" or not isinstance(content, list):
        return []
    out: list[tuple[int | None, object]] = []
    for bi, b in enumerate(content):
        if isinstance(b, dict) and b.get("type") == "tool_result":
            c = b.get("content", "")
            if not is_placeholder(c) and not keep.result(i, b.get("tool_use_id")):
                out.append((bi, c))
    return out


def _valid_cuts(
    tr: Transcript, head: int, prot: int, origin: dict[int, int]
) -> tuple[list[int], list[float]]:
    """Allowed cuts in (head + 1, prot] (ascending), and ``min_origin`` for checking them."""
    msgs = tr.messages
    n = len(msgs)
    inf = n + 1
    min_origin = [inf] * (n + 1)
    for j in range(n - 1, -1, -1):
        o = origin.get(j, inf)
        min_origin[j] = min(min_origin[j + 1], o if o >= 0 else -1)
    cuts = []
    for k in range(head + 2, prot + 1):
        if k < n:
            role = msgs[k]["role"]
            if tr.format == OPENAI and role == "tool":
                continue
            if tr.format == ANTHROPIC and role != "assistant":
                continue
        if min_origin[k] < k:
            continue
        cuts.append(k)
    return cuts, min_origin


def compact(tr: Transcript, counter: TokenCounter, opts: Options, stash: Stash) -> Outcome:
    msgs = tr.messages
    n = len(msgs)
    limit = opts.limit
    texts = [message_text(m) for m in msgs]
    system = tr.system_text()
    fixed = REPLY_PRIMING + (MESSAGE_OVERHEAD + counter.text(system) if system is not None else 0)
    target_pct = opts.at - opts.band
    target = math.floor(limit * target_pct / 100.0)
    head = head_end(tr)
    prot = protected_start(tr, head, opts.keep_recent)
    origin = links(tr).origin
    keep = _Keep(tr, origin, opts.keep_tools)
    cuts, _ = _valid_cuts(tr, head, prot, origin)
    last_cut = cuts[-1] if cuts else -1
    counter.prefill(texts[: head + 1])
    head_tokens = fixed + sum(MESSAGE_OVERHEAD + counter.text(t) for t in texts[: head + 1])

    # --- count from the end; stage 1 candidates -------------------------------------------
    # Newest first: the allowance keeps the newest results before the protected tail, every
    # older result is a candidate (when its placeholder is shorter). Once the part counted so
    # far is certainly over the trigger, and over the target even with every candidate
    # elided, and reaches back to the last allowed cut, the older messages can only be
    # dropped: they need no count (``stop``), and the total before is an estimate.
    allowance = opts.keep_tokens if opts.keep_tokens is not None else limit // 10
    tok = [0] * n
    new_tok = [0] * n
    for i in range(head + 1):
        tok[i] = new_tok[i] = MESSAGE_OVERHEAD + counter.text(texts[i])
    candidates: list[tuple[int, int | None, bytes, int]] = []  # newest first
    used = 0
    allowance_open = True
    pre_sum = post_sum = 0
    stop = head + 1
    i = n - 1
    stopped = False
    while i > head and not stopped:
        lo = max(head + 1, i - CHUNK + 1)
        chunk_units = {j: _units_of(tr, j, keep) for j in range(lo, min(i, prot - 1) + 1)}
        counter.prefill(
            texts[lo : i + 1] + [result_text(c) for us in chunk_units.values() for _, c in us]
        )
        for j in range(i, lo - 1, -1):
            pre = post = MESSAGE_OVERHEAD + counter.text(texts[j])
            for bi, content in reversed(chunk_units.get(j, [])):
                rtok = counter.text(result_text(content))
                if allowance_open and used + rtok <= allowance:
                    used += rtok
                    continue
                allowance_open = False
                data = content_bytes(content)
                saving = rtok - counter.text(placeholder(data, predict_ref(opts.session, data)))
                if saving > 0:
                    candidates.append((j, bi, data, saving))
                    post -= saving
            tok[j] = pre
            new_tok[j] = post
            pre_sum += pre
            post_sum += post
            if (
                opts.lazy
                and j <= last_cut
                and head_tokens + post_sum > target
                and (opts.force or (head_tokens + pre_sum) * 100 >= opts.at * limit)
            ):
                stop = j
                stopped = True
                break
        i = lo - 1
    exact = not stopped
    if exact:
        before = head_tokens + pre_sum
    else:  # the uncounted messages at the tokens-per-character rate of the counted ones
        counted_chars = sum(len(t) for t in texts[stop:]) or 1
        rate = (pre_sum - MESSAGE_OVERHEAD * (n - stop)) / counted_chars
        rest = texts[head + 1 : stop]
        before = (
            head_tokens
            + pre_sum
            + round(MESSAGE_OVERHEAD * len(rest) + rate * sum(len(t) for t in rest))
        )
    report: dict = {
        "format": tr.format,
        "shape": tr.shape,
        "limit": limit,
        "at": opts.at,
        "target_percent": target_pct,
        "target_tokens": target,
        "messages_before": n,
        "tokens_before": before,
        "tokens_before_exact": exact,
        "percent_before": _percent(before, limit),
        "messages_after": n,
        "tokens_after": before,
        "percent_after": _percent(before, limit),
        "action": UNCHANGED,
        "stage1": {"elided": 0, "tokens_saved": 0, "handles": [], "kept": keep.count(head, prot)},
        "stage2": None,
        "summarizer": None,
        "counted": COUNTED,
    }
    notes: list[str] = []
    pct = 100.0 * before / limit if limit else math.inf
    if exact and pct < opts.at and not opts.force:
        notes.append(
            f"{before:,} tokens = {pct:.1f}% of {limit:,}, below the {opts.at:g}% trigger: "
            "unchanged (--force compacts anyway)"
        )
        return Outcome(UNCHANGED, None, before, before, report, notes, below_trigger=True)

    # --- stage 1: the elisions, oldest first until under the target ----------------------
    elided: dict[int, dict[int | None, tuple[bytes, int]]] = {}
    new_tok = list(tok)
    cur = head_tokens + pre_sum
    for j, bi, data, saving in reversed(candidates):
        if exact and cur <= target and not opts.force:
            break
        elided.setdefault(j, {})[bi] = (data, saving)
        new_tok[j] -= saving
        cur -= saving
    if not exact:
        cur = math.inf  # over the target even with every candidate elided

    # --- stage 2: the cut -------------------------------------------------------------------
    cut = None
    digest_text = None
    dropped_lines: list[bytes] = []
    kept_msgs: list[dict] = []
    stage2: dict | None = None
    if cur > target:
        suffix: list[float] = [math.inf] * (n + 1)
        suffix[n] = 0
        for j in range(n - 1, stop - 1, -1):
            suffix[j] = suffix[j + 1] + new_tok[j]
        results = results_by_call(msgs, tr.format)
        # --keep-tool: what each droppable message keeps of itself (its kept calls/results)
        kept_parts: dict[int, dict] = {}
        if keep:
            for j in range(head + 1, last_cut):
                part = keep.kept_part(j)
                if part is not None:
                    kept_parts[j] = part

        def search(narrative: str | None) -> tuple[int | None, str | None, list[bytes], bool]:
            """The smallest allowed cut under the target with this digest (else the largest)."""
            facts = Facts()
            sha = hashlib.sha256()
            lines: list[bytes] = []
            fed = head + 1
            last_valid = None
            kept_tok = kept_n = 0  # what the --keep-tool messages of the span keep
            for k in cuts:
                while fed < k:
                    m = msgs[fed]
                    facts.add_message(m, results, tr.format)
                    line = dumps_message(m, tr.stdjson) + b"\n"
                    lines.append(line)
                    sha.update(line)
                    if fed in kept_parts:
                        kept_tok += counter.message(kept_parts[fed])
                        kept_n += 1
                    fed += 1
                last_valid = k
                lower = head_tokens + suffix[k] + MESSAGE_OVERHEAD + kept_tok
                if lower > target:
                    continue
                hexd = sha.hexdigest()
                ref = f"ctx:{opts.session}/compact-{hexd[:16]}@{hexd[:12]}"
                text = render(
                    facts,
                    first=head + 2,
                    last=k,
                    count=k - head - 1 - kept_n,
                    total=n,
                    ref=ref,
                    narrative=narrative,
                    kept=kept_n,
                )
                if lower + counter.text(text) <= target:
                    return k, text, lines, True
            if last_valid is None:
                return None, None, lines, False
            # Nothing fits with the full digest: drop all that may go, tighten the digest.
            hexd = sha.hexdigest()
            ref = f"ctx:{opts.session}/compact-{hexd[:16]}@{hexd[:12]}"
            lower = head_tokens + suffix[last_valid] + MESSAGE_OVERHEAD + kept_tok
            for scale in DIGEST_SCALES:
                text = render(
                    facts,
                    first=head + 2,
                    last=last_valid,
                    count=last_valid - head - 1 - kept_n,
                    total=n,
                    ref=ref,
                    narrative=narrative,
                    scale=scale,
                    kept=kept_n,
                )
                if lower + counter.text(text) <= target:
                    return last_valid, text, lines, True
            return last_valid, text, lines, False

        chosen, chosen_digest, dropped_lines, _fits = search(None)
        if chosen is None:
            notes.append(
                "no valid cut: every message after the head is in the protected tail or "
                "bound to a tool call there; only stage 1 applied"
            )
            stage2 = {"dropped": 0, "reason": "no valid cut"}
        else:
            # --- the summarizer: its narrative joins the digest if it passes and fits -------
            if opts.summarizer:
                dropped_text = render_dropped(msgs[head + 1 : chosen], head + 1)
                run = acceptmod.run_summarizer(
                    opts.summarizer, dropped_text, opts.summarizer_timeout
                )
                info: dict = {"command": opts.summarizer}
                if not run.ok:
                    info.update({"accepted": False, "reasons": [run.reason]})
                else:
                    verdict = acceptmod.gate(
                        dropped_text,
                        run.output,
                        min_ratio=opts.min_ratio,
                        min_path_share=opts.min_path_share,
                    )
                    info.update(verdict.as_dict())
                    if verdict.accepted:
                        narrative = (
                            f"Narrative (summarizer, messages {head + 2:,}–{chosen:,}):\n"
                            + run.output.strip()
                        )
                        k2, text2, lines2, fits2 = search(narrative)
                        if fits2 and k2 is not None:
                            chosen, chosen_digest, dropped_lines = k2, text2, lines2
                        else:
                            info["accepted"] = False
                            info["reasons"] = [
                                "does not fit: no cut gets the digest with it under the target"
                            ]
                if not info["accepted"]:
                    notes.append(
                        "summary rejected ("
                        + "; ".join(info["reasons"])
                        + "): the digest alone is used"
                    )
                report["summarizer"] = info
            cut = chosen
            dropped_lines = dropped_lines[: cut - head - 1]
            digest_text = chosen_digest
            kept_msgs = [kept_parts[j] for j in range(head + 1, cut) if j in kept_parts]
            stage2 = {
                "dropped": cut - head - 1 - len(kept_msgs),
                "first": head + 2,
                "last": cut,
                "kept": len(kept_msgs),
            }

    # --- apply: stash, then build the output --------------------------------------------------
    start = head + 1 if cut is None else cut
    if cut is None and not any(i >= start for i in elided):
        notes.append("nothing to elide or drop outside the protected tail: unchanged")
        status = NO_HEADROOM if before > target else UNCHANGED
        report["action"] = status
        report["stage2"] = stage2
        if status == NO_HEADROOM:
            notes.append(_headroom_note(before, limit, target_pct, target))
        return Outcome(status, None, before, before, report, notes)

    # Everything the output will name goes into the store first.
    puts: dict[str, tuple[bytes, str | None]] = {}
    for i in range(start, n):
        for data, _saving in elided.get(i, {}).values():
            puts.setdefault(handle_name(data), (data, None))
    blob = b"".join(dropped_lines) if cut is not None else b""
    if cut is not None:
        puts.setdefault(handle_name(blob), (blob, "jsonl"))
    refs = _put_all(stash, puts)

    handles: list[str] = []
    saved = 0
    count = 0
    tail: list[dict] = []
    for i in range(start, n):
        msg = msgs[i]
        if i in elided:
            blocks: dict[int | None, str] = {}
            for bi, (data, saving) in elided[i].items():
                ref = refs[handle_name(data)]
                handles.append(ref)
                blocks[bi] = placeholder(data, ref)
                saved += saving
                count += 1
            msg = _with_elisions(msg, tr.format, blocks)
        tail.append(msg)
    out = list(msgs[: head + 1])
    if cut is not None:
        assert digest_text is not None
        ref = refs[handle_name(blob)]
        predicted = predict_ref(opts.session, blob)
        if ref != predicted:
            digest_text = digest_text.replace(predicted, ref)
        stage2["handle"] = ref
        if tr.format == OPENAI:
            out.append({"role": "user", "content": digest_text})
        elif out and out[-1]["role"] == "user":
            first = out[-1]
            content = first.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            out[-1] = dict(first, content=list(content) + [{"type": "text", "text": digest_text}])
        else:
            out.append({"role": "user", "content": [{"type": "text", "text": digest_text}]})
        stage2["digest_tokens"] = counter.text(digest_text)
        out.extend(kept_msgs)
    out.extend(tail)
    after = counter.transcript(tr, out)
    status = COMPACTED if after <= target else NO_HEADROOM
    report.update(
        {
            "messages_after": len(out),
            "tokens_after": after,
            "percent_after": _percent(after, limit),
            "action": status,
            "stage2": stage2,
        }
    )
    report["stage1"] = {
        "elided": count,
        "tokens_saved": saved,
        "handles": list(dict.fromkeys(handles)),
        "kept": report["stage1"]["kept"],
    }
    if status == NO_HEADROOM:
        notes.append(_headroom_note(after, limit, target_pct, target))
    return Outcome(status, out, before, after, report, notes)
