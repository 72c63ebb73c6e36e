"""The acceptance gate for model-written summaries, and the summarizer runner.

A candidate replaces an original only if it is:

* not empty;
* not longer than the original (characters);
* not shorter than ``min_ratio`` of it (a 30 KB document is not three bullets);
* keeping at least ``min_path_share`` of the distinct file paths of the original (when the
  original names any);
* not opening with a chatty preamble or a refusal ("Sure!", "Here is", "I can't",
  "As an AI", ...);
* not an error message (a traceback, an HTTP/API error, "Error: ..." as the whole answer).

The summarizer command (``--summarizer 'CMD ARGS'``) runs without a shell, reads the dropped
messages on stdin, and must exit 0 within the timeout; its stdout is then gated like above.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxtools import defaults
from ctxtools.errors import CtxError

if TYPE_CHECKING:
    from ctxtools.runner import RunOutcome

DEFAULT_MIN_RATIO = defaults.MIN_RATIO
DEFAULT_MIN_PATH_SHARE = defaults.MIN_PATH_SHARE
DEFAULT_TIMEOUT = defaults.SUMMARIZER_TIMEOUT

# A path: a token with a slash between names (``src/app.py``, ``/srv/x``, ``./run.sh``).
# Bare names (``README.md``) are too common in listings to be a fair retention measure.
_PATH = re.compile(r"(?<![\w/.:-])(?:\.{0,2}/)?(?:[\w.@+-]+/)+[\w.@+-]*[\w@+-]")
_NOT_PATH = re.compile(r"^(?:https?|ftp)$|^\d+(?:\.\d+)+$|^[\w-]+\.(?:com|org|net|io)$", re.I)

_PREAMBLE = re.compile(
    r"^\W*(sure\b|certainly\b|of course\b|absolutely\b|okay\b|ok\b|here is\b|here's\b|"
    r"here are\b|below is\b|i can't\b|i can’t\b|i cannot\b|i can not\b|i'm sorry\b|i am sorry\b|"
    r"sorry\b|unfortunately\b|as an ai\b|as a language model\b|as an assistant\b|"
    r"i'm unable\b|i am unable\b|i won't\b|i will not\b|i'd be happy\b|i would be happy\b|"
    r"great question\b)",
    re.I,
)
_ERROR_OPEN = re.compile(
    r"^\W*(error\b|traceback \(most recent call last\)|exception\b|fatal\b|panic:|"
    r"http/\d(?:\.\d)? [45]\d\d|[45]\d\d (?:bad request|unauthorized|forbidden|not found|"
    r"too many requests|internal server error|bad gateway|service unavailable)|"
    r"\{\s*\"error\"|\{\s*'error')",
    re.I,
)
_ERROR_ANYWHERE = re.compile(
    r"rate limit|context_length_exceeded|maximum context length|insufficient_quota|"
    r"invalid_api_key|internal server error|connection refused|service unavailable",
    re.I,
)


def paths_in(text: str) -> list[str]:
    """Distinct path-like tokens of TEXT, in first-seen order."""
    seen: dict[str, None] = {}
    for m in _PATH.finditer(text):
        tok = m.group(0).rstrip(".,:;")
        if len(tok) < 3 or _NOT_PATH.match(tok):
            continue
        seen.setdefault(tok, None)
    return list(seen)


@dataclass
class Verdict:
    accepted: bool
    reasons: list[str] = field(default_factory=list)
    ratio: float = 0.0
    paths_total: int = 0
    paths_kept: int = 0

    @property
    def summary(self) -> str:
        """One line: "accepted", or "rejected: " and every reason."""
        return "accepted" if self.accepted else "rejected: " + "; ".join(self.reasons)

    def error(self, original: str) -> CtxError | None:
        """Why a rejected candidate may not replace ORIGINAL (named so), as the error
        ``ctx-compact --accept`` exits with; None when accepted."""
        if self.accepted:
            return None
        return CtxError(f"candidate {self.summary} ({original} is untouched)")

    def as_dict(self) -> dict:
        return {
            "accepted": self.accepted,
            "reasons": self.reasons,
            "ratio": round(self.ratio, 4),
            "paths_total": self.paths_total,
            "paths_kept": self.paths_kept,
        }


def gate(
    original: str,
    candidate: str,
    *,
    min_ratio: float = DEFAULT_MIN_RATIO,
    min_path_share: float = DEFAULT_MIN_PATH_SHARE,
) -> Verdict:
    """Judge CANDIDATE as a replacement for ORIGINAL; every failed check is a reason."""
    reasons: list[str] = []
    v = Verdict(False, reasons)
    body = candidate.strip()
    if not original.strip():
        reasons.append("the original is empty: nothing to summarise")
        return v
    if not body:
        reasons.append("empty output")
        return v
    v.ratio = len(body) / len(original)
    if len(body) > len(original):
        reasons.append(f"longer than what it replaces ({len(body):,} > {len(original):,} chars)")
    elif v.ratio < min_ratio:
        shown, least = _percents(v.ratio, min_ratio)
        reasons.append(f"too short: {shown} of the original (minimum {least})")
    first_line = body.split("\n", 1)[0].strip()
    m = _PREAMBLE.match(first_line)
    if m:
        reasons.append(f"opens with a chatty preamble or refusal ({_clip(first_line)!r})")
    if _ERROR_OPEN.match(first_line) or (len(body) < 600 and _ERROR_ANYWHERE.search(body)):
        reasons.append(f"looks like an error message ({_clip(first_line)!r})")
    wanted = paths_in(original)
    v.paths_total = len(wanted)
    if wanted:
        kept = sum(1 for p in wanted if p in candidate)
        v.paths_kept = kept
        if kept < min_path_share * len(wanted):
            reasons.append(
                f"keeps {kept} of {len(wanted)} file paths "
                f"(minimum {_percents(kept / len(wanted), min_path_share)[1]})"
            )
    v.accepted = not reasons
    return v


def _percents(value: float, minimum: float) -> tuple[str, str]:
    """VALUE (below MINIMUM) and MINIMUM as percents with the same decimals -- as many as
    MINIMUM needs, one at least -- VALUE rounded down, so that a value under the minimum
    never reads as reaching it ("too short: 2.0% (minimum 2%)" did)."""
    import math

    decimals = 1
    while decimals < 4 and round(minimum * 100, decimals) != round(minimum * 100, 6):
        decimals += 1
    scale = 10**decimals
    down = math.floor(round(value * 100 * scale, 6)) / scale
    return f"{down:.{decimals}f}%", f"{minimum * 100:.{decimals}f}%"


def gate_bytes(original: bytes, candidate: bytes, **limits: float) -> Verdict:
    """``gate`` over two files' bytes (UTF-8; invalid bytes count as U+FFFD), as
    ``ctx-compact --accept ORIGINAL CANDIDATE`` judges them; LIMITS are ``gate``'s
    (``min_ratio``, ``min_path_share``). Nothing is written: on acceptance the caller
    writes CANDIDATE's bytes, unchanged."""
    return gate(original.decode("utf-8", "replace"), candidate.decode("utf-8", "replace"), **limits)


def _clip(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def parse_command(command: str) -> list[str]:
    """The ``--summarizer`` command as an argv (UsageError for bad quoting, or none)."""
    from ctxtools.runner import parse_argv

    return parse_argv(command, "--summarizer")


def output_cap(text: str) -> int:
    """The most bytes a summary of TEXT may take before the run is stopped: more than 4
    bytes a character of TEXT (plus some slack for blank lines) is more characters than
    TEXT has, which the gate rejects anyway ("longer than what it replaces")."""
    return 4 * len(text) + 4096


def run_summarizer(
    argv: list[str], text: str, timeout: float = DEFAULT_TIMEOUT, cap: int | None = None
) -> RunOutcome:
    """Run the summarizer ARGV on TEXT (``ctxtools.runner.run_text``): at most CAP bytes
    of output (default ``output_cap(TEXT)``) within TIMEOUT seconds, or a RunOutcome that
    says why not."""
    from ctxtools.runner import run_text

    return run_text(argv, text, timeout=timeout, cap=output_cap(text) if cap is None else cap)
