"""The two baselines: BM25 (k1=1.2, b=0.75) over whole files or over chunks, then the
units added in rank order while they fit, rendered as ctx-pack renders its files."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

from pack_quality.corpus import SourceFile, Unit

K1, B = 1.2, 0.75
MAX_MISSES = 20  # consecutive units that do not fit before the fill stops


def bm25_rank(units: list[Unit], query: list[str]) -> list[tuple[float, Unit]]:
    """UNITS matching a query term, best first (ties: path, then first line)."""
    q = set(query)
    n = len(units)
    if not n or not q:
        return []
    avgdl = (sum(u.length for u in units) / n) or 1.0
    df: Counter = Counter()
    hits = []
    for i, u in enumerate(units):
        common = u.tf.keys() & q
        if common:
            df.update(common)
            hits.append((i, common))
    idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    scored = []
    for i, common in hits:
        u = units[i]
        norm = K1 * (1 - B + B * u.length / avgdl)
        # (summed in sorted order: a set's order follows the per-process string hash, and
        # a sum in another order may differ in its last bit and break a tie the other way)
        s = sum(idf[t] * u.tf[t] * (K1 + 1) / (u.tf[t] + norm) for t in sorted(common))
        first = u.ranges[0][0] if u.ranges else 0
        scored.append((-s, u.path, first, i))
    scored.sort()
    return [(-s, units[i]) for s, _, _, i in scored]


def merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def render_block(sf: SourceFile, ranges: list[tuple[int, int]]) -> str:
    """The block of SF showing RANGES, each line numbered as ctx-pack numbers its lines
    (``12<TAB>code``: the same cost a line for both)."""
    n = len(sf.lines)
    out = ["```text", f"==> {sf.path} <== {n} line" + ("" if n == 1 else "s")]
    prev = None
    for s, e in ranges:
        if prev is not None and s > prev + 1:
            out.append("⋮")
        out.extend(f"{i}\t{sf.lines[i - 1]}" for i in range(s, e + 1))
        prev = e
    out.append("```")
    return "\n".join(out)


HEAD = "# Files\n\n"


def render(files: dict[str, SourceFile], chosen: dict[str, list[tuple[int, int]]],
           task: str) -> str:
    blocks = [render_block(files[p], chosen[p]) for p in sorted(chosen)]
    return HEAD + "".join(b + "\n\n" for b in blocks) + f"# Task\n\n{task}\n"


def _chosen(units: list[Unit]) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for u in units:
        out[u.path] = merge(out.get(u.path, []) + u.ranges)
    return out


def fill(ranked: list[Unit], files: dict[str, SourceFile], task: str, budget: int,
         count: Callable[[str], int]) -> tuple[str, list[Unit]]:
    """Add RANKED units while they fit BUDGET (skip one that does not; stop after
    MAX_MISSES in a row); the text recounted whole and never over the budget."""
    total = count(HEAD) + count(f"# Task\n\n{task}\n")
    chosen: dict[str, list[tuple[int, int]]] = {}
    cost: dict[str, int] = {}
    taken: list[Unit] = []
    misses = 0
    for u in ranked:
        if not u.ranges:
            continue
        ranges = merge(chosen.get(u.path, []) + u.ranges)
        if ranges == chosen.get(u.path):
            continue  # already shown
        c = count(render_block(files[u.path], ranges) + "\n\n")
        if total + c - cost.get(u.path, 0) <= budget:
            total += c - cost.get(u.path, 0)
            chosen[u.path], cost[u.path] = ranges, c
            taken.append(u)
            misses = 0
        else:
            misses += 1
            if misses >= MAX_MISSES:
                break
    text = render(files, chosen, task)
    while taken and count(text) > budget:  # the sum of blocks can differ from the whole
        taken.pop()
        chosen = _chosen(taken)
        text = render(files, chosen, task)
    return text, taken
