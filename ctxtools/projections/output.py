"""What a projection returns (``Output``: body, trailer, notes), the output cap, and the
exact command that shows the next part of a cut output (``Next``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxtools import defaults
from ctxtools.errors import UsageError
from ctxtools.quoting import shell_word as shell_quote  # re-exported: ARG for a POSIX shell

MAX_CHARS_DEFAULT = defaults.MAX_CHARS
MAX_CHARS_CEILING = defaults.MAX_CHARS_CEILING


@dataclass
class Output:
    """What a projection shows: the body, the trailer line when cut, and notes for stderr."""

    body: str = ""
    trailer: str | None = None
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        """Body plus trailer, as printed on stdout."""
        if self.trailer is None:
            return self.body
        sep = "" if not self.body or self.body.endswith("\n") else "\n"
        return f"{self.body}{sep}{self.trailer}\n"


def clamp_max_chars(value: int | None) -> tuple[int, str | None]:
    """(the cap to use, a note when VALUE was above the hard ceiling)."""
    if value is None:
        return MAX_CHARS_DEFAULT, None
    if value < 1:
        raise UsageError(f"--max-chars {value}: must be at least 1")
    if value > MAX_CHARS_CEILING:
        return MAX_CHARS_CEILING, (
            f"--max-chars {value} is above the hard ceiling; clamped to {MAX_CHARS_CEILING}"
        )
    return value, None


@dataclass
class Next:
    """How to write the command that continues a cut read.

    ``base`` is ``ctx-read REF`` (already quoted) for a handle, None for stdin input.
    """

    base: str | None
    extra: tuple[str, ...] = ()  # options every next command repeats (e.g. --max-chars N)

    def command(self, *args: str) -> str:
        args = args + self.extra
        tail = " ".join(a if a.startswith("-") else shell_quote(a) for a in args)
        if self.base is None:
            return f"ctx-read {tail} (on the same stdin, or stash it first)"
        return f"{self.base} {tail}"


def next_for(ref: str | None, max_chars: int = MAX_CHARS_DEFAULT) -> Next:
    """The Next for REF (None: stdin); a non-default MAX_CHARS is carried along."""
    extra = () if max_chars == MAX_CHARS_DEFAULT else ("--max-chars", str(max_chars))
    return Next(None if ref is None else f"ctx-read {shell_quote(ref)}", extra)


def thousands(x: int) -> str:
    return f"{x:,}"
