"""Where a pack's misses are, measured from what it shows: for every task of the tuning
sets, the files section rendered at each budget (as ``tune.py`` renders it) and each missed
gold line's distance to the nearest line the pack shows of the same file.

    .venv/bin/python bench/pack_quality/gaps.py [--set dev,tune,tune2,tune3]
        [--budgets 8000,16000,32000] [--store /tmp/tune-store] [--history] [--cochange]

A task that misses is put in one bucket by its worst missed line: its file not shown at
all; or the distance (<= 2, <= 5, <= 10, <= 25, > 25 lines) to the nearest shown line.
A lever that widens shown code toward its neighbours can win only the near buckets; the
files not shown at all are a ranking question. The tasks of the near buckets are listed.
Measured on the tuning sets only (the fifteenth session's note has the figures).

``--history``: the trees seen with their mirror's history, as ``tune.py --history`` and
ctx-pack in a clone see them. ``--cochange``: for each task whose miss is a gold file not
shown while another gold file was, the missing file's rank among the files changed with
the shown one in the commits before the task's base (``trees.co_changers``): what a
co-change signal could reach. (The thirty-first session, at 16k with history: on
tune_large + tune3, 26 of 96 tasks miss a whole file, 16 of them with another gold file
shown; the unshown file was the shown one's first co-changer in 6 -- vim's
``src/version.c`` each time -- its 3rd in 1, its 5th in 1, later or never in 8. On dev,
tune, tune2 and the two prose lists, 40 of 184 tasks miss a whole file, 20 with
another shown: first co-changer in 4, 2nd-5th in 2, 6th-15th in 4, later or never in 10.)
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pack_quality import tune  # noqa: E402
from pack_quality.gold import parse_patch, shown_lines  # noqa: E402

BUCKETS = ((2, "<= 2 lines"), (5, "<= 5"), (10, "<= 10"), (25, "<= 25"))
NEAR = 10  # a miss this close to shown lines is listed by task


def missed_lines(gold, text: str) -> list[tuple[str, int, int | None]]:
    """(path, line, distance to the nearest shown line of its file or None) of each gold
    line the rendered TEXT does not show."""
    shown = shown_lines(text)
    out = []
    for path in gold.files:
        seen = shown.get(path, set())
        ordered = sorted(seen)
        for n in gold.lines_of(path):
            if n not in seen:
                out.append((path, n, min((abs(n - s) for s in ordered), default=None)))
    return out


def bucket(missed: list[tuple[str, int, int | None]]) -> str:
    """The bucket of a task whose missed lines are MISSED (its worst line decides)."""
    if not missed:
        return "complete"
    if any(d is None for _p, _n, d in missed):
        return "file not shown"
    worst = max(d for _p, _n, d in missed)
    return next((name for limit, name in BUCKETS if worst <= limit), "> 25")


def cochange_lines(t, gold, missed, history: dict) -> list[str]:
    """For a task some of whose gold files are not shown (MISSED) and others are: each
    unshown file's rank among each shown gold file's co-changers before T's base. HISTORY
    keeps each task's commits (``trees.commit_files``) across budgets: one ``git log``."""
    from pack_quality.trees import TreeError, commit_files, find_mirror, ranked_co_changers

    unshown = sorted({p for p, _n, d in missed if d is None})
    shown = [p for p in gold.files if p not in unshown]
    mirror = find_mirror(t.repo, {}, tune.MIRRORS) if shown else None
    if mirror is None:
        return []
    if t.id not in history:
        try:
            history[t.id] = commit_files(mirror, t.base)
        except TreeError as e:
            history[t.id] = str(e)
    commits = history[t.id]
    if isinstance(commits, str):
        return [f"{t.id}: no co-change ({commits})"]
    out = []
    for s in shown:
        ranked = [f for f, _c in ranked_co_changers(commits, s)]
        for u in unshown:
            rank = ranked.index(u) + 1 if u in ranked else None
            out.append(f"{t.id}: {u} is co-changer #{rank} of {len(ranked)} of shown {s}")
    return out


def main(argv=None) -> int:
    from ctxtools.pack.choose_render import render_plan

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="dev,tune,tune2,tune3")
    ap.add_argument("--budgets", default="8000,16000,32000")
    ap.add_argument("--store", type=Path, default=Path("/tmp/tune-store"))
    ap.add_argument("--history", action="store_true",
                    help="the trees seen with their mirror's history (the history signal)")
    ap.add_argument("--cochange", action="store_true",
                    help="rank each unshown gold file among the shown gold files' co-changers")
    args = ap.parse_args(argv)
    tune.HISTORY = args.history
    budgets = [int(b) for b in args.budgets.split(",")]
    counts = {b: Counter() for b in budgets}
    near: dict[int, list[str]] = {b: [] for b in budgets}
    history: dict = {}  # task id -> its commits' files, for --cochange
    for t, tree in tune.tasks_of(args.set.split(",")):
        gold = parse_patch(t.patch)
        if not gold.hunks:
            continue
        with tune.history_env(t, tree):
            ch = tune.build_chooser(t.text, tree, args.store, max(budgets))
        for b in budgets:
            missed = missed_lines(gold, render_plan(ch, b - tune.OVERHEAD).text)
            where = bucket(missed)
            counts[b][where] += 1
            if args.cochange and where == "file not shown":
                for line in cochange_lines(t, gold, missed, history):
                    print(f"{b} {line}")
            dists = [d for _p, _n, d in missed]
            if missed and None not in dists and max(dists) <= NEAR:
                near[b].append(f"{t.id} ({len(missed)} lines, at most {max(dists)} away)")
    order = ["complete", *(name for _l, name in BUCKETS), "> 25", "file not shown"]
    print(f"{'budget':>8}  " + "  ".join(f"{name:>14}" for name in order))
    for b in budgets:
        print(f"{b:>8}  " + "  ".join(f"{counts[b][name]:>14}" for name in order))
    for b in budgets:
        if near[b]:
            print(f"{b}: within {NEAR} lines of what is shown: " + "; ".join(near[b]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
