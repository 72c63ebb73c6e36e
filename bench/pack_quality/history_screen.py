"""Does a repository's history point at the function a fix changes? An offline screen over
the tuning sets, run before any of it was built into the engine (the message signal is now
``ctxtools.retrieval.history``, whose parsing of hunks this screen shares; measure the
engine itself with ``tune.py --history`` and ``bench_pack_quality.py --history``).

    .venv/bin/python bench/pack_quality/history_screen.py dump --set tune --out /tmp/h1.pkl
    .venv/bin/python bench/pack_quality/history_screen.py score /tmp/h1.pkl [/tmp/h2.pkl ...]
        [--top 10,30,co] [--weights 0,0.1,0.25] [--mode linear|sqrt|topfiles]
    .venv/bin/python bench/pack_quality/history_screen.py planner /tmp/h1.pkl --set tune
        [--weights 0,0.1,0.25] [--top 10]

``dump``: for every task of the sets, ctx-pack's ranking (the Chooser, in process, as
``tune.py`` builds it: each chunk's score, file, lines and name, and whether it holds a gold
line), and the last ``N_COMMITS`` non-merge commits before the task's parent, read from
the mirror with ``git log -U0`` over the source files of the languages git has a function
driver for (``DRIVERS``): each commit's message and the functions its hunks touch
(the hunk header's function context, git's own per-language drivers through an attributes
file, and the definitions on changed lines), by file. Commits of over ``MAX_FILES`` files
touch nothing here. A task whose mirror lacks an object of that history is skipped.

``score``: two signals over the dump, and what each would do to a pack.
- ``--top K``: BM25 of the task against the commits' messages; the K best commits' functions
  get the commit's score (shared by the square root of the functions it touched); a chunk
  gets its (file, last name part)'s sum.
- ``co``: co-change -- the functions that changed in the same commits as the five best
  chunks' functions, each commit's share 1 / its functions.
For each it prints how many chunks the signal marks and how many of them hold gold (the
lift over the base rate; the gold chunks ranked #100 and deeper it reaches), then a
"packsim" per weight W: scores plus W x the best chunk's score x signal / its maximum
(``--mode sqrt``: of its square root; ``topfiles``: only in the 20 best files), chunks
taken best first into 650 / 1,450 / 2,900 lines (~8k / 16k / 32k tokens; 3 lines of
overhead a chunk), line recall and complete tasks per set. A screen, not the planner: a
lever it does not lift is not worth building; one it lifts must still be built and run.

``planner``: the message signal through the real planner (``tune.py``'s files-section
loop): each task's Chooser, its chunk scores raised as above, the files section rendered at
8k / 16k / 32k and scored against gold, per weight. The history still comes from the
mirror (the task trees have none), so this is the engine's plan, not yet its code.

Measured on tune, tune2 and tune3 (154 tasks; the twenty-second session's note has the
table): the message signal, the 10 best commits at W 0.1, lifts complete tasks at 8k / 16k /
32k from 66 / 85 / 95 to 67 / 87 / 98 and line recall on each of the three lists at each
budget; it marks 0.56% of the chunks (10,721 of 1,926,589) with a lift of 51 over the base
rate and reaches 28 of the 150 gold chunks ranked #100 and deeper. Co-change does not lift
16k or 32k. Through the planner at W 0.1: complete 67 -> 72 / 86 -> 87 / 95 -> 96 over the
three lists, dev unchanged, tune3 at 32k one task lower (34 -> 33); at W 0.15: 67 -> 71 /
86 -> 89 / 95 -> 97, line recall up on each list at each budget, dev's 16k line recall
0.886 -> 0.864 (astroid-1333, one task's 0.50 -> 0; its complete count unchanged).
"""

from __future__ import annotations

import argparse
import pickle
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ctxtools.retrieval.history import defined_name, header_name, last_name  # noqa: E402
from pack_quality import tune  # noqa: E402
from pack_quality.corpus import Unit  # noqa: E402
from pack_quality.gold import parse_patch  # noqa: E402
from pack_quality.retrieve import bm25_rank  # noqa: E402
from pack_quality.trees import find_mirror  # noqa: E402

N_COMMITS = 2000
MAX_FILES = 40
LINE_BUDGETS = (650, 1450, 2900)  # ~8k / 16k / 32k tokens
PER_CHUNK = 3  # lines of overhead a chunk (its header's share, a separator)
SEEDS = 5  # co-change: the best chunks whose companions count
# git's built-in function-context drivers, by extension
DRIVERS = {
    "py": "python", "go": "golang", "rs": "rust", "java": "java", "ts": "javascript",
    "tsx": "javascript", "js": "javascript", "c": "cpp", "h": "cpp", "cc": "cpp",
    "cpp": "cpp", "rb": "ruby",
}
MARK = "\0\x01commit\x01\0"  # starts a commit in the log (a diff may hold a NUL of its own)
END = "\0\x02message\x02\0"  # ends its message


def parse_log(out: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """[(message, [(path, function)])] of ``git log -U0`` output whose commits each start
    with MARK and end their message with END."""
    commits = []
    for block in out.split(MARK)[1:]:
        msg, _, diff = block.partition(END)
        touched: set[tuple[str, str]] = set()
        path, files = None, 0
        for line in diff.splitlines():
            if line.startswith("+++ "):
                path = line[6:] if line.startswith("+++ b/") else None
                files += 1
            elif line.startswith("@@") and path:
                name = header_name(line[2:].partition("@@")[2].strip())
                if name:
                    touched.add((path, name))
            elif path and line[:1] in "+-" and not line.startswith(("+++", "---")):
                name = defined_name(line[1:])
                if name:
                    touched.add((path, name))
        commits.append((msg, sorted(touched) if files <= MAX_FILES else []))
    return commits


def history(mirror: Path, parent: str, attrs: Path) -> list:
    got = subprocess.run(
        ["git", f"--git-dir={mirror}", "-c", f"core.attributesFile={attrs}", "log",
         f"-n{N_COMMITS}", "--no-merges", "-U0", "--no-renames",
         "--format=%x00%x01commit%x01%x00%s%n%b%x00%x02message%x02%x00", parent, "--",
         *(f"*.{ext}" for ext in DRIVERS)], capture_output=True)
    if got.returncode:
        raise RuntimeError(got.stderr.decode(errors="replace").strip()[-200:])
    return parse_log(got.stdout.decode(errors="replace"))


def dump(sets: list[str], out: Path, store: Path) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".gitattributes", delete=False) as f:
        f.write("".join(f"*.{ext} diff={drv}\n" for ext, drv in DRIVERS.items()))
        attrs = Path(f.name)
    rows = []
    for t, tree in tune.tasks_of(sets):
        mirror = find_mirror(t.repo, {}, tune.MIRRORS)
        gold = parse_patch(t.patch)
        if mirror is None or not gold.hunks:
            continue
        try:
            commits = history(mirror, t.base, attrs)
        except RuntimeError as exc:
            print(f"{t.id}: skipped, {exc}", file=sys.stderr)
            continue
        ch = tune.build_chooser(t.text, tree, store, 16000)
        lines = {(h.path, n) for h in gold.hunks for n in h.lines}
        chunks = [
            (d.scores[k], d.label, c.start, c.end, c.name or "",
             any((d.label, n) in lines for n in range(c.start, c.end + 1)))
            for d in ch.docs for k, c in enumerate(d.chunks)]
        rows.append({"id": t.id, "kind": t.kind, "text": t.text, "chunks": chunks,
                     "hunks": [(h.path, tuple(h.lines)) for h in gold.hunks],
                     "commits": commits})
        print(f"{t.id}: {len(chunks)} chunks, {len(commits)} commits", file=sys.stderr)
    attrs.unlink()
    out.write_bytes(pickle.dumps(rows))


def by_messages(task: dict, top: int) -> list[float]:
    """Each chunk's share of the TOP commits whose messages best match the task."""
    from ctxtools.analyzer.tokenizer import words

    commits = task["commits"]
    units = []
    for i, (msg, _touched) in enumerate(commits):
        bag = Counter(words(msg))
        units.append(Unit(f"{i:06d}", [], bag, sum(bag.values())))
    funcs: dict[tuple[str, str], float] = defaultdict(float)
    for s, u in bm25_rank(units, words(task["text"]))[:top]:
        touched = commits[int(u.path)][1]
        for path, name in touched:
            funcs[(path, last_name(name))] += s / len(touched) ** 0.5
    return [funcs.get((c[1], last_name(c[4])), 0.0) if c[4] else 0.0 for c in task["chunks"]]


def by_cochange(task: dict) -> list[float]:
    """Each chunk's count of commits shared with the SEEDS best chunks' functions."""
    seeds: set[tuple[str, str]] = set()
    for c in sorted(task["chunks"], key=lambda c: -c[0]):
        if c[4]:
            seeds.add((c[1], last_name(c[4])))
        if len(seeds) >= SEEDS:
            break
    funcs: dict[tuple[str, str], float] = defaultdict(float)
    for _msg, touched in task["commits"]:
        names = {(p, last_name(n)) for p, n in touched}
        if names & seeds and len(names) <= 60:
            for pn in names - seeds:
                funcs[pn] += 1.0 / len(names)
    return [funcs.get((c[1], last_name(c[4])), 0.0) if c[4] else 0.0 for c in task["chunks"]]


def packsim(task: dict, scores: list[float], budget: int) -> tuple[float, bool]:
    chunks = task["chunks"]
    order = sorted(range(len(chunks)), key=lambda i: (-scores[i], chunks[i][1], chunks[i][2]))
    used, shown = 0, defaultdict(set)
    for i in order:
        c = chunks[i]
        cost = c[3] - c[2] + 1 + PER_CHUNK
        if used + cost <= budget:
            used += cost
            shown[c[1]].update(range(c[2], c[3] + 1))
    lines = [(p, n) for p, ns in task["hunks"] for n in ns]
    got = sum(1 for p, n in lines if n in shown.get(p, ()))
    return got / max(len(lines), 1), got == len(lines)


def boosted(task: dict, signal: list[float], w: float, mode: str) -> list[float]:
    base = [c[0] for c in task["chunks"]]
    best, top = max(base, default=1.0) or 1.0, max(signal, default=0.0)
    if not top or not w:
        return base
    rank: dict[str, int] = {}
    for c in sorted(task["chunks"], key=lambda c: -c[0]):
        rank.setdefault(c[1], len(rank))
    out = []
    for b, x, c in zip(base, signal, task["chunks"], strict=True):
        part = (x / top) ** 0.5 if mode == "sqrt" else x / top
        if mode == "topfiles" and rank[c[1]] >= 20:
            part = 0.0
        out.append(b + w * best * part)
    return out


def score(paths: list[Path], tops: list[str], weights: list[float], mode: str) -> None:
    tasks = [t for p in paths for t in pickle.loads(p.read_bytes())]
    print(f"{len(tasks)} tasks")
    for top in tops:
        sig = {t["id"]: by_cochange(t) if top == "co" else by_messages(t, int(top))
               for t in tasks}
        marked = [(s > 0, c[5], i) for t in tasks for s, c, i in zip(
            sig[t["id"]], t["chunks"], _ranks(t), strict=True)]
        n, gold = len(marked), sum(g for _m, g, _r in marked)
        hit = sum(1 for m, _g, _r in marked if m)
        hit_gold = sum(1 for m, g, _r in marked if m and g)
        deep = [(m, r) for m, g, r in marked if g and r >= 100]
        print(f"signal {top}: {hit} of {n} chunks marked, {hit_gold} of them gold "
              f"(lift {hit_gold / max(hit, 1) / max(gold / n, 1e-9):.1f}); gold chunks "
              f"#100+ {len(deep)}, marked {sum(m for m, _r in deep)}")
        for w in weights:
            res: dict[tuple[str, int], list] = defaultdict(lambda: [0.0, 0, 0])
            for t in tasks:
                sc = boosted(t, sig[t["id"]], w, mode)
                for b in LINE_BUDGETS:
                    lr, done = packsim(t, sc, b)
                    for key in (t["kind"], "all"):
                        r = res[(key, b)]
                        r[0], r[1], r[2] = r[0] + lr, r[1] + done, r[2] + 1
            cells = [f"{k} " + " · ".join(
                f"{res[(k, b)][0] / res[(k, b)][2]:.3f}/{res[(k, b)][1]}" for b in LINE_BUDGETS)
                for k in sorted({k for k, _b in res})]
            print(f"  W {w}: " + " | ".join(cells))


def planner(sets: list[str], paths: list[Path], weights: list[float], top: int,
            store: Path, mode: str = "linear") -> None:
    """The message signal through the real planner: each task's Chooser built in process
    (as ``tune.py`` builds it), its chunk scores raised by W x best x signal / max, the
    files section rendered at 8k / 16k / 32k (less ``tune.OVERHEAD``) and scored."""
    rows = {r["id"]: r for p in paths for r in pickle.loads(p.read_bytes())}
    res: dict[tuple, list] = defaultdict(lambda: [0.0, 0, 0])
    budgets = [8000, 16000, 32000]
    for t, tree in tune.tasks_of(sets):
        if t.id not in rows or not parse_patch(t.patch).hunks:
            continue
        ch = tune.build_chooser(t.text, tree, store, max(budgets))
        chunks = [(s, d.label, c.start, c.end, c.name or "", False)
                  for d in ch.docs for s, c in zip(d.scores, d.chunks, strict=True)]
        task = {"text": t.text, "commits": rows[t.id]["commits"], "chunks": chunks}
        sig = by_messages(task, top)
        got = []
        for w in weights:
            flat = iter(boosted(task, sig, w, mode))
            for d in ch.docs:
                d.scores[:] = [next(flat) for _ in d.scores]
            for row in tune.evaluate([(t, tree)], budgets, store, {t.id: ch}):
                got.append(f"{w}/{row['budget'] // 1000}k {row['line_recall']:.2f}")
                for key in (t.kind, "all"):
                    r = res[(key, w, row["budget"])]
                    r[0], r[1], r[2] = r[0] + row["line_recall"], r[1] + row["complete"], r[2] + 1
        print(t.id, *got, file=sys.stderr, flush=True)
    for w in weights:
        cells = [f"{k} " + " · ".join(
            f"{res[(k, w, b)][0] / res[(k, w, b)][2]:.3f}/{res[(k, w, b)][1]}"
            for b in (8000, 16000, 32000)) for k in sorted({k for k, _w, _b in res})]
        print(f"W {w}: " + " | ".join(cells))


def _ranks(task: dict) -> list[int]:
    order = sorted(range(len(task["chunks"])), key=lambda i: -task["chunks"][i][0])
    out = [0] * len(order)
    for r, i in enumerate(order):
        out[i] = r
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--set", default="tune")
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--store", type=Path, default=Path("/tmp/tune-store"))
    s = sub.add_parser("score")
    s.add_argument("dumps", type=Path, nargs="+")
    s.add_argument("--top", default="10,30,co")
    s.add_argument("--weights", default="0,0.1,0.25,0.5,1")
    s.add_argument("--mode", choices=("linear", "sqrt", "topfiles"), default="linear")
    r = sub.add_parser("planner")
    r.add_argument("dumps", type=Path, nargs="+")
    r.add_argument("--set", default="tune")
    r.add_argument("--top", type=int, default=10)
    r.add_argument("--weights", default="0,0.1,0.25")
    r.add_argument("--store", type=Path, default=Path("/tmp/tune-store"))
    r.add_argument("--mode", choices=("linear", "sqrt", "topfiles"), default="linear")
    args = ap.parse_args(argv)
    if args.cmd == "planner":
        planner(args.set.split(","), args.dumps, [float(w) for w in args.weights.split(",")],
                args.top, args.store, args.mode)
    elif args.cmd == "dump":
        dump(args.set.split(","), args.out, args.store)
    else:
        score(args.dumps, args.top.split(","), [float(w) for w in args.weights.split(",")],
              args.mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
