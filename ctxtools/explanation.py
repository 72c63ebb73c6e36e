"""The one shape in which a command that chooses says what it chose (``--explain``).

ctx-pack, ctx-excerpt, ctx-repomap and ctx-compact each choose what goes into a budget.
Their ``--explain`` is the same record: the budget and what was used of it, what was
**chosen** (each with its score and why, its tokens where counted), and what was **left
out** and why -- as text for stderr (``text()``, bars scaled to the budget as ctx-pack's
``/context``-style view) or as JSON (``as_dict()``). Each package builds it from its own
result (``excerpt.explain``, ``repomap.explain``, ``compact.explain``); the commands only
print it. This module imports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SHOWN = 40  # items of a list the text shows before "... and N more"


@dataclass
class Item:
    """One thing chosen or left out: WHAT it is, WHY, its SCORE (the command's own measure:
    a match score, a rank, tokens saved) and its TOKENS where they were counted; PARTS are
    the pieces of it that were chosen (a file's windows, a file's symbols)."""

    what: str
    why: str
    score: float | None = None
    tokens: int | None = None
    parts: list[Item] = field(default_factory=list)

    def as_dict(self) -> dict:
        doc: dict = {"what": self.what, "why": self.why, "score": self.score}
        doc["tokens"] = self.tokens
        if self.parts:
            doc["parts"] = [p.as_dict() for p in self.parts]
        return doc


@dataclass
class Explanation:
    """What a run chose. BUDGET is ``{"tokens", "used", "counter", "exact"}`` (None: the
    run had no budget); SUMMARY one line of how it chose."""

    command: str
    summary: str
    budget: dict | None = None
    chosen: list[Item] = field(default_factory=list)
    left_out: list[Item] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "command": self.command,
            "summary": self.summary,
            "budget": self.budget,
            "chosen": [i.as_dict() for i in self.chosen],
            "left_out": [i.as_dict() for i in self.left_out],
        }

    def text(self, width: int = 30, shown: int = SHOWN) -> str:
        lines = []
        total = None
        if self.budget is not None:
            b = self.budget
            total = b["tokens"]
            exact = "" if b.get("exact", True) else ", approximate"
            used = b.get("used")
            tail = f"; used {used:,} ({_pct(used, total)})" if used is not None else ""
            lines.append(f"budget {total:,} tokens ({b.get('counter')}{exact}){tail}")
        lines.append(self.summary)
        for title, items in (("chosen", self.chosen), ("left out", self.left_out)):
            if not items:
                continue
            lines.append(f"{title} ({len(items):,})")
            for item in items[:shown]:
                lines.append("  " + _line(item, total, width))
                for part in item.parts[:shown]:
                    lines.append("    " + _line(part, None, width))
                if len(item.parts) > shown:
                    lines.append(f"    ... and {len(item.parts) - shown:,} more")
            if len(items) > shown:
                lines.append(f"  ... and {len(items) - shown:,} more (--json lists them all)")
        return "\n".join(lines) + "\n"


def _line(item: Item, total: int | None, width: int) -> str:
    head = item.what
    if item.score is not None:
        head += f"  score {item.score:g}"
    if item.tokens is not None:
        head += f"  {item.tokens:,} tokens"
        if total:
            head += f"  {_bar(item.tokens, total, width)}"
    return f"{head}: {item.why}"


def _pct(n: int, total: int) -> str:  # as ctx-pack's explain()
    return f"{100.0 * n / total:.1f}%" if total else "0.0%"


def _bar(n: int, total: int, width: int) -> str:  # as ctx-pack's explain()
    filled = min(width, round(width * n / total)) if total else 0
    if n and not filled:
        filled = 1
    return "█" * filled + "░" * (width - filled)
