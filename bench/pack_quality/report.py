"""The Markdown tables and the JSON rows."""

from __future__ import annotations

import statistics


def _cell(rows: list[dict]) -> str:
    if not rows:
        return "–"
    lr = statistics.fmean(r["line_recall"] for r in rows)
    co = sum(1 for r in rows if r["complete"]) / len(rows)
    fr = statistics.fmean(r["file_recall"] for r in rows)
    return f"{lr:.2f} / {co:.0%} / {fr:.2f}"


def _k(budget: int | str) -> str:
    if isinstance(budget, str):  # a model's budget
        return budget
    return f"{budget // 1000}k" if budget % 1000 == 0 else str(budget)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def table(rows: list[dict], methods: list[str], budgets: list[int | str], title: str) -> str:
    """Two Markdown tables, a row a method, a column a budget: the quality means, then
    the median tokens and seconds of each (method, budget)."""
    tasks = sorted({r["task"] for r in rows})
    out = [f"### {title}: {len(tasks)} tasks", "",
           "cells: line recall / complete (share of tasks) / file recall", ""]
    head = ["method", *(_k(b) for b in budgets), "failed"]
    cost = ["| method | " + " | ".join(_k(b) for b in budgets) + " |",
            "|" + "---|" * (1 + len(budgets))]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for m in methods:
        mine = [r for r in rows if r["method"] == m]
        if not mine:
            continue
        at = {b: [r for r in mine if r["budget"] == b] for b in budgets}
        cells = [_cell(at[b]) for b in budgets]
        failed = sum(1 for r in mine if r.get("error"))
        out.append(f"| {m} | " + " | ".join(cells) + f" | {failed} |")
        cost.append(f"| {m} | " + " | ".join(
            "–" if not at[b] else f"{_median([r['tokens'] for r in at[b]]):,.0f} / "
            f"{_median([r['seconds'] for r in at[b]]):.2f} s" for b in budgets) + " |")
    out += ["", "cells: median tokens used / median seconds", "", *cost]
    sizes = sorted({(r["budget"], r["budget_tokens"], r.get("encoding", "?")) for r in rows
                    if "budget_tokens" in r}, key=str)
    if sizes:
        out += ["", "model budgets: " + "; ".join(f"{b} = {t:,} tokens ({e})"
                                                for b, t, e in sizes)]
    warm = [r["warm_seconds"] for r in rows if "warm_seconds" in r]
    if warm:
        same = sum(1 for r in rows if r.get("warm_same"))
        wb = sorted({r["budget"] for r in rows if "warm_seconds" in r})
        out += ["", f"pack warm rerun at {', '.join(map(_k, wb))}: median "
                f"{statistics.median(warm):.2f} s; same bytes as the cold run in "
                f"{same}/{len(warm)}"]
    over = [f"{r['task']} {r['method']} {r['budget']}" for r in rows if r.get("over_budget")]
    if over:
        out += ["", "over budget: " + ", ".join(over)]
    errs = [f"{r['task']} {r['method']} {_k(r['budget'])}: {r['error']}"
            for r in rows if r.get("error")]
    if errs:
        out += ["", "failures (scored 0):", *(f"- {e}" for e in errs[:20])]
        if len(errs) > 20:
            out.append(f"- … {len(errs) - 20} more in the JSON")
    return "\n".join(out) + "\n"


def per_task(rows: list[dict], methods: list[str], budgets: list[int | str]) -> str:
    """A compact line a task: line recall of each method at each budget."""
    out = ["| task | " + " | ".join(f"{m} {_k(b)}" for m in methods for b in budgets) + " |",
           "|" + "---|" * (1 + len(methods) * len(budgets))]
    index = {(r["task"], r["method"], r["budget"]): r for r in rows}
    for t in sorted({r["task"] for r in rows}):
        cells = []
        for m in methods:
            for b in budgets:
                r = index.get((t, m, b))
                cells.append("–" if r is None else
                             f"{r['line_recall']:.2f}{'*' if r['complete'] else ''}")
        out.append(f"| {t} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def by_repo(rows: list[dict], methods: list[str], budgets: list[int | str]) -> str:
    """Line recall / complete of each method at each budget, a row a repository."""
    def repo(task: str) -> str:
        return task.rsplit("-", 1)[0] if "__" in task else task

    out = ["| repository (tasks) | " + " | ".join(f"{m} {_k(b)}" for m in methods
                                                for b in budgets) + " |",
           "|" + "---|" * (1 + len(methods) * len(budgets))]
    for name in sorted({repo(r["task"]) for r in rows}):
        mine = [r for r in rows if repo(r["task"]) == name]
        cells = []
        for m in methods:
            for b in budgets:
                sel = [r for r in mine if r["method"] == m and r["budget"] == b]
                cells.append("–" if not sel else
                             f"{statistics.fmean(r['line_recall'] for r in sel):.2f} / "
                             f"{sum(r['complete'] for r in sel) / len(sel):.0%}")
        n = len({r["task"] for r in mine})
        out.append(f"| {name} ({n}) | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"
