"""The stages of a compaction, each a function returning a small record (``plan.compact``
runs them in this order; only ``apply`` writes to the stash):

* ``measure`` -> ``Measurement``: the layout (head, protected tail, allowed cuts), each
  message's tokens counted from the end (only as far as needed), stage 1's candidates and
  the total before;
* ``plan_elisions`` -> ``Elisions``: the results stage 1 elides, oldest first, until under
  the target;
* ``droppable`` -> ``Span`` and ``find_cut`` -> ``CutChoice``: stage 2's cut and its digest
  (``Cut``, once chosen);
* ``summarise`` -> ``Summary``: the summarizer's narrative in the digest, if it passes the
  gate and fits;
* ``apply`` -> ``Applied``: stash what the output names, build the output, count it.
"""

from __future__ import annotations

import hashlib
import io
import math
from dataclasses import dataclass
from typing import NamedTuple

from ctxtools.compact import accept as acceptmod
from ctxtools.compact.digest import Facts, render, render_dropped, results_by_call
from ctxtools.compact.elide import (
    Stash,
    content_bytes,
    handle_name,
    placeholder,
    predict_ref,
    sha_ref,
)
from ctxtools.compact.layout import Layout, elidable, find_layout
from ctxtools.compact.transcript import (
    MESSAGE_OVERHEAD,
    OPENAI,
    REPLY_PRIMING,
    TokenCounter,
    Transcript,
    dumps_message,
    message_text,
    result_text,
)

CHUNK = 512  # messages counted per step of the backward pass
DIGEST_SCALES = (1.0, 0.5, 0.25, 0.0)  # list caps of the digest, tightened when it does not fit


@dataclass
class Options:
    """What a compaction aims at and may touch (ctx-compact's options)."""

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
    lazy: bool = True  # skip counting messages that can only be dropped (see measure())

    def __post_init__(self) -> None:
        # The library's own check (the CLI's option types make the same one): a limit of 0
        # divided the trigger by zero for a library caller.
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit < 1:
            from ctxtools.errors import UsageError

            raise UsageError(
                f"the context limit must be a positive number of tokens, not {self.limit!r}"
            )


# --- measure ---------------------------------------------------------------------------------


class Candidate(NamedTuple):
    """A tool result stage 1 may elide: message INDEX, BLOCK (None: the whole message).
    What would be stashed is not kept here (``result_data`` makes it again for the chosen
    ones): every result of a transcript held as bytes, for the few elided, cost as much
    memory as the results themselves."""

    index: int
    block: int | None
    saving: int  # tokens its placeholder saves


def result_data(tr: Transcript, index: int, block: int | None) -> bytes:
    """The bytes stashed for the tool result of message INDEX, BLOCK (as ``elidable``)."""
    msg = tr.messages[index]
    content = msg.get("content") if block is None else msg["content"][block].get("content", "")
    return content_bytes(content)


@dataclass(frozen=True)
class Measurement:
    """The transcript before anything changes: its layout, its token counts, what stage 1
    may elide, and the total before (an estimate when not ``exact``)."""

    layout: Layout
    target_pct: float
    target: int  # tokens
    head_tokens: int  # the head's tokens, with the system prompt and the reply priming
    tokens: list[int]  # each message's tokens (0 before ``stop``: not counted)
    candidates: list[Candidate]  # newest first
    counted: int  # tokens of the messages counted after the head
    stop: int  # the first message counted after the head
    exact: bool  # every message was counted
    before: int  # tokens of the whole transcript

    def trigger_note(self, opts: Options) -> str | None:
        """Why nothing changes, when the transcript is under the trigger (and not forced)."""
        limit = opts.limit
        pct = 100.0 * self.before / limit if limit else math.inf
        if not self.exact or pct >= opts.at or opts.force:
            return None
        return (
            f"{self.before:,} tokens = {pct:.1f}% of {limit:,}, below the {opts.at:g}% "
            "trigger: unchanged (--force compacts anyway)"
        )


class _Pass(NamedTuple):
    candidates: list[Candidate]
    counted: int
    stop: int
    exact: bool


def measure(tr: Transcript, counter: TokenCounter, opts: Options) -> Measurement:
    """Count TR with COUNTER and find stage 1's candidates (writes nothing)."""
    msgs = tr.messages
    n = len(msgs)
    texts = [message_text(m) for m in msgs]
    system = tr.system_text()
    fixed = REPLY_PRIMING + (MESSAGE_OVERHEAD + counter.text(system) if system is not None else 0)
    target_pct = opts.at - opts.band
    target = math.floor(opts.limit * target_pct / 100.0)
    layout = find_layout(tr, opts.keep_recent, opts.keep_tools)
    head = layout.head
    counter.prefill(texts[: head + 1])
    head_tokens = fixed + sum(MESSAGE_OVERHEAD + counter.text(t) for t in texts[: head + 1])
    tokens = [0] * n
    for i in range(head + 1):
        tokens[i] = MESSAGE_OVERHEAD + counter.text(texts[i])
    found = _count_from_end(tr, counter, opts, layout, texts, tokens, head_tokens, target)
    before = head_tokens + found.counted
    if not found.exact:  # the uncounted messages at the tokens-per-character rate of the rest
        stop = found.stop
        counted_chars = sum(len(t) for t in texts[stop:]) or 1
        rate = (found.counted - MESSAGE_OVERHEAD * (n - stop)) / counted_chars
        rest = texts[head + 1 : stop]
        before += round(MESSAGE_OVERHEAD * len(rest) + rate * sum(len(t) for t in rest))
    return Measurement(
        layout=layout,
        target_pct=target_pct,
        target=target,
        head_tokens=head_tokens,
        tokens=tokens,
        candidates=found.candidates,
        counted=found.counted,
        stop=found.stop,
        exact=found.exact,
        before=before,
    )


def _count_from_end(
    tr: Transcript,
    counter: TokenCounter,
    opts: Options,
    layout: Layout,
    texts: list[str],
    tokens: list[int],
    head_tokens: int,
    target: int,
) -> _Pass:
    """Count the messages after the head, newest first, into TOKENS; stage 1's candidates.

    The allowance keeps the newest results before the protected tail, every older result is
    a candidate (when its placeholder is shorter). Once the part counted so far is certainly
    over the trigger, and over the target even with every candidate elided, and reaches back
    to the last allowed cut, the older messages can only be dropped: they need no count
    (``stop``; with ``opts.lazy``), and the total before is an estimate."""
    head, prot, keep, last_cut = layout.head, layout.protected, layout.keep, layout.last_cut
    allowance = opts.keep_tokens if opts.keep_tokens is not None else opts.limit // 10
    candidates: list[Candidate] = []
    used = 0
    allowance_open = True
    pre_sum = post_sum = 0
    i = len(texts) - 1
    while i > head:
        lo = max(head + 1, i - CHUNK + 1)
        chunk_units = {j: elidable(tr, j, keep) for j in range(lo, min(i, prot - 1) + 1)}
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
                    candidates.append(Candidate(j, bi, saving))
                    post -= saving
            tokens[j] = pre
            pre_sum += pre
            post_sum += post
            if (
                opts.lazy
                and j <= last_cut
                and head_tokens + post_sum > target
                and (opts.force or (head_tokens + pre_sum) * 100 >= opts.at * opts.limit)
            ):
                return _Pass(candidates, pre_sum, j, False)
        i = lo - 1
    return _Pass(candidates, pre_sum, head + 1, True)


# --- stage 1: plan the elisions -----------------------------------------------------------------


@dataclass(frozen=True)
class Elisions:
    """Stage 1's plan: the results to elide, oldest first until under the target."""

    chosen: dict[int, dict[int | None, int]]  # message -> block -> saving
    tokens: list[int]  # each message's tokens with them elided
    total: float  # the transcript's tokens with them elided (inf: not all were counted)


def plan_elisions(m: Measurement, opts: Options) -> Elisions:
    """Elide M's candidates, oldest first, until under the target (``force``: all of them)."""
    chosen: dict[int, dict[int | None, int]] = {}
    tokens = list(m.tokens)
    total = m.head_tokens + m.counted
    for c in reversed(m.candidates):
        if m.exact and total <= m.target and not opts.force:
            break
        chosen.setdefault(c.index, {})[c.block] = c.saving
        tokens[c.index] -= c.saving
        total -= c.saving
    # not all counted: over the target even with every candidate elided
    return Elisions(chosen, tokens, total if m.exact else math.inf)


# --- stage 2: find the cut ----------------------------------------------------------------------


@dataclass(frozen=True)
class Span:
    """What weighing a cut needs: the tokens from each message to the end (after stage 1),
    the results by call (the digest's facts), and what ``--keep-tool`` keeps of each
    droppable message."""

    suffix: list[float]  # tokens of messages j.. (inf before the counted part)
    results: dict[str, tuple[str, bool]]
    kept_parts: dict[int, dict]


def droppable(tr: Transcript, m: Measurement, elisions: Elisions) -> Span:
    n = len(tr.messages)
    suffix: list[float] = [math.inf] * (n + 1)
    suffix[n] = 0
    for j in range(n - 1, m.stop - 1, -1):
        suffix[j] = suffix[j + 1] + elisions.tokens[j]
    kept_parts: dict[int, dict] = {}
    keep = m.layout.keep
    if keep:
        for j in range(m.layout.head + 1, m.layout.last_cut):
            part = keep.kept_part(j)
            if part is not None:
                kept_parts[j] = part
    return Span(suffix, results_by_call(tr.messages, tr.format), kept_parts)


class CutChoice(NamedTuple):
    """A cut and its digest: CUT is the first message kept after the head (None: no cut is
    allowed); DROPPED, the messages after the head up to CUT as JSON Lines (one buffer,
    not a line each then a copy of them all: 48 MiB of messages cost that twice); FITS,
    under the target."""

    cut: int | None
    digest: str | None
    dropped: bytes
    fits: bool


def find_cut(
    tr: Transcript,
    counter: TokenCounter,
    opts: Options,
    m: Measurement,
    span: Span,
    narrative: str | None = None,
) -> CutChoice:
    """The smallest allowed cut under the target with its digest (NARRATIVE in it, when
    given); else the largest allowed, with the digest tightened as far as it goes."""
    msgs = tr.messages
    head = m.layout.head
    facts = Facts()
    sha = hashlib.sha256()
    dropped = io.BytesIO()  # the span as JSON Lines (getvalue() hands the buffer over)
    fed = head + 1
    kept_tok = kept_n = 0  # what the --keep-tool messages of the span keep

    def digest(k: int, scale: float = 1.0) -> str:
        count = k - head - 1 - kept_n
        ref = sha_ref(opts.session, sha.hexdigest())
        return render(
            facts,
            first=head + 2,
            last=k,
            count=count,
            total=len(msgs),
            ref=ref,
            narrative=narrative,
            scale=scale,
            kept=kept_n,
        )

    for k in m.layout.cuts:
        while fed < k:
            msg = msgs[fed]
            facts.add_message(msg, span.results, tr.format)
            line = dumps_message(msg, tr.stdjson)
            for part in (line, b"\n"):
                dropped.write(part)
                sha.update(part)
            if fed in span.kept_parts:
                kept_tok += counter.message(span.kept_parts[fed])
                kept_n += 1
            fed += 1
        lower = m.head_tokens + span.suffix[k] + MESSAGE_OVERHEAD + kept_tok
        if lower <= m.target:
            text = digest(k)
            if lower + counter.text(text) <= m.target:
                return CutChoice(k, text, dropped.getvalue(), True)
    if not m.layout.cuts:
        return CutChoice(None, None, b"", False)
    # Nothing fits with the full digest: drop all that may go, tighten the digest.
    last = m.layout.last_cut
    lower = m.head_tokens + span.suffix[last] + MESSAGE_OVERHEAD + kept_tok
    for scale in DIGEST_SCALES:
        text = digest(last, scale)
        if lower + counter.text(text) <= m.target:
            return CutChoice(last, text, dropped.getvalue(), True)
    return CutChoice(last, text, dropped.getvalue(), False)


@dataclass(frozen=True)
class Cut:
    """Stage 2's decision: the messages after the head up to INDEX go (DROPPED, stashed as
    they were), DIGEST takes their place, and KEPT (``--keep-tool``) stay after it."""

    head: int
    index: int
    digest: str
    dropped: bytes
    kept: list[dict]

    @classmethod
    def of(cls, choice: CutChoice, head: int, span: Span) -> Cut:
        index = choice.cut
        assert index is not None and choice.digest is not None
        kept = [span.kept_parts[j] for j in range(head + 1, index) if j in span.kept_parts]
        return cls(head, index, choice.digest, choice.dropped, kept)

    def report(self) -> dict:
        return {
            "dropped": self.index - self.head - 1 - len(self.kept),
            "first": self.head + 2,
            "last": self.index,
            "kept": len(self.kept),
        }


# --- the summary --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    """The summarizer's part: the cut to make (its narrative in the digest when the summary
    passed the gate and fits) and the report's ``summarizer`` entry."""

    choice: CutChoice
    info: dict

    @property
    def note(self) -> str | None:
        if self.info["accepted"]:
            return None
        reasons = "; ".join(self.info["reasons"])
        return f"summary rejected ({reasons}): the digest alone is used"


def summarise(
    tr: Transcript,
    counter: TokenCounter,
    opts: Options,
    m: Measurement,
    span: Span,
    choice: CutChoice,
) -> Summary:
    """Run ``opts.summarizer`` on what CHOICE drops; its narrative joins the digest if it
    passes the gate and a cut still gets under the target with it."""
    head = m.layout.head
    dropped_text = render_dropped(tr.messages[head + 1 : choice.cut], head + 1)
    run = acceptmod.run_summarizer(opts.summarizer, dropped_text, opts.summarizer_timeout)
    info: dict = {"command": opts.summarizer}
    if not run.ok:
        info.update({"accepted": False, "reasons": [run.reason]})
        return Summary(choice, info)
    verdict = acceptmod.gate(
        dropped_text, run.output, min_ratio=opts.min_ratio, min_path_share=opts.min_path_share
    )
    info.update(verdict.as_dict())
    if not verdict.accepted:
        return Summary(choice, info)
    narrative = (
        f"Narrative (summarizer, messages {head + 2:,}–{choice.cut:,}):\n" + run.output.strip()
    )
    told = find_cut(tr, counter, opts, m, span, narrative)
    if told.fits and told.cut is not None:
        return Summary(told, info)
    info["accepted"] = False
    info["reasons"] = ["does not fit: no cut gets the digest with it under the target"]
    return Summary(choice, info)


# --- apply: stash, then build the output --------------------------------------------------------


@dataclass(frozen=True)
class Applied:
    """The compacted messages, what stage 1 elided (HANDLES: one ref an elision, in order),
    the digest's handle and tokens, and the tokens after."""

    messages: list[dict]
    handles: list[str]
    saved: int
    digest_ref: str | None
    digest_tokens: int | None
    tokens: int


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


def _with_digest(head: list[dict], fmt: str, digest: str) -> list[dict]:
    """HEAD with DIGEST after it: an OpenAI user message; Anthropic: a text block appended to
    the first user turn (a user turn of its own when the head does not end on one)."""
    out = list(head)
    if fmt == OPENAI:
        out.append({"role": "user", "content": digest})
    elif out and out[-1]["role"] == "user":
        first = out[-1]
        content = first.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out[-1] = dict(first, content=list(content) + [{"type": "text", "text": digest}])
    else:
        out.append({"role": "user", "content": [{"type": "text", "text": digest}]})
    return out


def apply(
    tr: Transcript,
    counter: TokenCounter,
    opts: Options,
    stash: Stash,
    m: Measurement,
    elisions: Elisions,
    cut: Cut | None,
) -> Applied:
    """Stash everything the output will name (in one batch), then build the output."""
    msgs = tr.messages
    head = m.layout.head
    start = head + 1 if cut is None else cut.index
    puts: dict[str, tuple[bytes, str | None]] = {}
    datas: dict[tuple[int, int | None], bytes] = {}  # each elided result's, once a content
    for i in range(start, len(msgs)):
        for bi in elisions.chosen.get(i, {}):
            data = result_data(tr, i, bi)
            datas[i, bi] = puts.setdefault(handle_name(data), (data, None))[0]
    if cut is not None:
        puts.setdefault(handle_name(cut.dropped), (cut.dropped, "jsonl"))
    refs = _put_all(stash, puts)

    handles: list[str] = []
    saved = 0
    tail: list[dict] = []
    for i in range(start, len(msgs)):
        msg = msgs[i]
        if i in elisions.chosen:
            blocks: dict[int | None, str] = {}
            for bi, saving in elisions.chosen[i].items():
                data = datas[i, bi]
                ref = refs[handle_name(data)]
                handles.append(ref)
                blocks[bi] = placeholder(data, ref)
                saved += saving
            msg = _with_elisions(msg, tr.format, blocks)
        tail.append(msg)
    if cut is None:
        out = list(msgs[: head + 1]) + tail
        return Applied(out, handles, saved, None, None, counter.transcript(tr, out))
    ref = refs[handle_name(cut.dropped)]
    digest = cut.digest
    predicted = predict_ref(opts.session, cut.dropped)
    if ref != predicted:
        digest = digest.replace(predicted, ref)
    out = _with_digest(msgs[: head + 1], tr.format, digest) + cut.kept + tail
    digest_tokens = counter.text(digest)
    return Applied(out, handles, saved, ref, digest_tokens, counter.transcript(tr, out))
