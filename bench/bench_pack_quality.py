"""Does ctx-pack put the code a task is about in front of the model? Measured on real bugs.

    .venv/bin/python bench/bench_pack_quality.py                       # dev set, all methods
    .venv/bin/python bench/bench_pack_quality.py --pack-bin /work/main/.venv/bin/ctx-pack \\
        --tasks all --json bench/out/pack_quality.json

Tasks (``--tasks dev|heldout|large|all``): the SWE-bench Lite dev instances
(``bench/data/swe-bench-lite-dev``, with its licence; the set to tune on), held-out
bug-fix commits of other projects (``pack_quality/heldout.txt``) and of large ones, 3,000+
files a tree (``pack_quality/heldout_large.txt``), both chosen by the rules in
``pack_quality/tasks.py``; never tune on them. Each task's tree is ``git archive`` of its
base commit from a bare mirror (``--mirror OWNER/NAME=PATH``, else found under
``--mirrors DIR``, default /work/.mirror), kept in ``--corpora``. Each set gets its own tables.

Methods, at each of ``--budgets`` (token counts, or a model name such as ``gpt-4o``: that
model's worker pack budget as ``ctx-count --budget --model`` next to ``--pack-bin`` prints
it; ctx-pack then runs with ``--model``, the baselines fill the same number of tokens of
the model's encoding): ``pack`` (ctx-pack --format json, a fresh CTX_STORE a run, plus a
warm rerun at ``--warm-budget``), ``bm25-file`` and ``bm25-chunk`` (BM25 over whole files
or function/class chunks, added in rank order while they fit, rendered as ctx-pack renders
files). Every pack's text is scored the same way (pack_quality/gold.py): line recall (the
fix's changed pre-image lines shown), complete (every hunk shown), file recall (a shown line
within 25 lines of a change, per gold file), tokens (recounted with ctxtools' cl100k ruler,
or the model's encoding at a model budget), seconds; the tables give the means and, per
budget, the median tokens and seconds. ``--json`` adds, per (task, method, budget), the gold
lines missed and the top files shown (ctx-pack: by its score; baselines: in the order added).
A ctx-pack run that fails or times out is scored 0 with its error; the bench goes on.

``--history``: each tree is seen by ctx-pack with its mirror's whole history before the
base commit (``pack_quality.trees.with_history``: a git directory under
``corpora/history`` borrowing the mirror's objects, named by GIT_DIR and GIT_WORK_TREE), as
in a clone, so the engine's history signal (``ctxtools.retrieval.history``) has commits to
read; without it a tree is a one-commit checkout and the signal is silent (the figures of
every session before the twenty-third).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from pack_quality import report  # noqa: E402
from pack_quality.gold import file_order, parse_patch, score, shown_lines  # noqa: E402
from pack_quality.methods import checkout_of, run_baseline, run_pack  # noqa: E402
from pack_quality.tasks import (  # noqa: E402
    DEV,
    SETS,
    Task,
    heldout_task,
    load_dev,
    read_pinned,
    select_commits,
    write_pinned,
)
from pack_quality.trees import (  # noqa: E402
    MIRROR_ROOT,
    TreeError,
    check_patch,
    find_mirror,
    materialise,
    with_history,
)

REPO_ROOT = HERE.parent
METHODS = ("pack", "bm25-file", "bm25-chunk")
TASK_SETS = ("dev", "heldout", "large", "large2", "large3")
TITLES = {"dev": "dev (SWE-bench Lite dev)", "heldout": "held-out commits",
          "large": "large held-out (3,000+ files a tree)",
          "large2": "second large held-out (3,000+ files a tree)",
          "large3": "third large held-out (3,000+ files a tree)"}
_RULERS: dict[str, object] = {}


def count(text: str, encoding: str = "cl100k_base") -> int:
    """Tokens of TEXT by ctxtools' own exact ruler of ENCODING (offline; cl100k_base)."""
    ruler = _RULERS.get(encoding)
    if ruler is None:
        from ctxtools.tokens import get_ruler

        ruler = _RULERS[encoding] = get_ruler(encoding=encoding, exact=True).ruler
    return ruler.count(text)


def model_budget(pack_bin: str, model: str) -> tuple[int, str]:
    """MODEL's worker pack budget and its encoding, asked of the ctx-count beside PACK_BIN."""
    import subprocess

    exe = str(Path(pack_bin).with_name("ctx-count"))
    got = subprocess.run([exe, "--budget", "--model", model, "--role", "worker", "--json"],
                         capture_output=True, text=True)
    enc = subprocess.run([exe, "--model", model, "--json"], input="x", capture_output=True,
                         text=True)
    if got.returncode != 0 or enc.returncode != 0:
        raise SystemExit(f"bench_pack_quality: error: no budget for --budgets {model}: "
                         f"{(got.stderr or enc.stderr).strip()}")
    return int(json.loads(got.stdout)["available"]), json.loads(enc.stdout)["counter"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", choices=(*TASK_SETS, "all"), default="dev")
    ap.add_argument("--only", action="append", default=[], metavar="ID",
                    help="run only this task (repeatable)")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--budgets", default="8000,16000,32000",
                    help="token counts, or a model name (gpt-4o): its worker pack budget")
    ap.add_argument("--warm-budget", type=int, default=16000,
                    help="the budget at which ctx-pack runs a second, warm time")
    ap.add_argument("--pack-bin", default=str(REPO_ROOT / ".venv" / "bin" / "ctx-pack"))
    ap.add_argument("--pack-arg", action="append", default=[],
                    help="an extra argument for ctx-pack (repeatable)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds a ctx-pack run")
    ap.add_argument("--jobs", type=int, default=1, help="tasks run at once")
    ap.add_argument("--history", action="store_true",
                    help="ctx-pack sees each tree with its mirror's history before the task "
                    "(GIT_DIR and GIT_WORK_TREE: trees.with_history), as in a clone; without "
                    "it, each tree is a one-commit checkout (no history signal)")
    ap.add_argument("--mirror", action="append", default=[], metavar="OWNER/NAME=PATH")
    ap.add_argument("--mirrors", action="append", type=Path, default=[], metavar="DIR",
                    help=f"where to look for OWNER+NAME mirrors (default {MIRROR_ROOT})")
    ap.add_argument("--corpora", type=Path, default=HERE / "corpora",
                    help="where the task trees are kept (default bench/corpora)")
    ap.add_argument("--dev-file", type=Path, default=DEV)
    ap.add_argument("--select-heldout", action="store_true",
                    help="choose the commits of the held-out sets run (--tasks) again by "
                    "the rule, rewriting heldout.txt / heldout_large.txt")
    ap.add_argument("--json", type=Path, help="write every per-task row here")
    ap.add_argument("--per-task", action="store_true", help="also print a row a task")
    ap.add_argument("--report", nargs="+", type=Path, metavar="JSON",
                    help="run nothing: print the tables of earlier --json files (a later "
                    "file's row replaces an earlier one for the same task, method, budget)")
    args = ap.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    bad = [m for m in args.methods if m not in METHODS]
    if bad:
        ap.error(f"unknown method(s) {', '.join(bad)} (choose from {', '.join(METHODS)})")
    args.budgets = [int(b) if b.strip().isdigit() else b.strip()
                    for b in args.budgets.split(",") if b.strip()]
    given = {}
    for spec in args.mirror:
        repo, sep, path = spec.partition("=")
        if not sep:
            ap.error(f"--mirror {spec!r}: want OWNER/NAME=PATH")
        given[repo] = Path(path)
    args.given = given
    args.mirrors = args.mirrors or [MIRROR_ROOT]
    return args


def resolve_budgets(args) -> None:
    """ARGS.sizes: each budget's (tokens, encoding); a model name asks ctx-count."""
    args.sizes = {}
    for b in args.budgets:
        args.sizes[b] = (b, "cl100k_base") if isinstance(b, int) else model_budget(
            args.pack_bin, b)


def heldout_tasks(args, dropped: list[str], kind: str = "heldout") -> list[Task]:
    """The tasks of the held-out set KIND from its pinned pairs (chosen and written first
    when there are none yet or --select-heldout asks)."""
    spec = SETS[kind]
    pairs = read_pinned(spec.pinned)
    if args.select_heldout or not pairs:
        pairs = []
        for repo in spec.repos:
            mirror = find_mirror(repo, args.given, args.mirrors)
            if mirror is None:
                dropped.append(f"{repo}: no mirror (fetch github:{repo})")
                continue
            pairs += [(repo, sha) for sha in select_commits(mirror, min_files=spec.min_files)]
        write_pinned(pairs, spec.pinned, spec.title)
        print(f"wrote {len(pairs)} {kind} commits to pack_quality/{spec.pinned.name}",
              file=sys.stderr)
    tasks = []
    for repo, sha in pairs:
        mirror = find_mirror(repo, args.given, args.mirrors)
        if mirror is None:
            dropped.append(f"{repo}@{sha[:12]}: no mirror (fetch github:{repo})")
            continue
        try:
            tasks.append(heldout_task(repo, mirror, sha, kind))
        except TreeError as exc:
            dropped.append(f"{repo}@{sha[:12]}: {exc}")
    return tasks


def prepare(args) -> tuple[list[tuple[Task, Path]], list[str]]:
    """The tasks to run with their trees, and a line for each task dropped."""
    dropped: list[str] = []
    tasks: list[Task] = []
    if args.tasks in ("dev", "all"):
        tasks += load_dev(args.dev_file)
    for kind in ("heldout", "large", "large2", "large3"):
        if args.tasks in (kind, "all"):
            tasks += heldout_tasks(args, dropped, kind)
    if args.only:
        tasks = [t for t in tasks if t.id in args.only]
    ready = []
    for t in tasks:
        mirror = find_mirror(t.repo, args.given, args.mirrors)
        if mirror is None:
            dropped.append(f"{t.id}: no mirror of {t.repo}")
            continue
        dest = args.corpora / {"dev": "swe"}.get(t.kind, t.kind) / t.id
        try:
            tree = materialise(mirror, t.base, dest)
            check_patch(tree, t.patch)
        except TreeError as exc:
            dropped.append(f"{t.id}: {exc}")
            continue
        if not parse_patch(t.patch).hunks:
            dropped.append(f"{t.id}: the gold patch changes no existing source file")
            continue
        if args.history:
            try:
                t.env = with_history(mirror, t.base, tree, t.id)
            except (TreeError, OSError, subprocess.CalledProcessError) as exc:
                dropped.append(f"{t.id}: no history: {exc}")
                continue
        ready.append((t, tree))
    return ready, dropped


def _row(task: Task, method: str, budget: int | str, res: dict,
         size: tuple[int, str]) -> dict:
    gold = parse_patch(task.patch)
    text = res.get("text", "")
    got = score(gold, text)
    if res.get("error"):  # a failed run is scored 0
        got.update(line_recall=0.0, complete=False, file_recall=0.0)
    shown = shown_lines(text)
    order = [p for p in res.get("ranked") or [] if p in shown] or file_order(text)
    limit, encoding = size
    tokens = count(text, encoding) if text else 0
    row = {"task": task.id, "kind": task.kind, "method": method, "budget": budget,
           "line_recall": got["line_recall"], "complete": got["complete"],
           "file_recall": got["file_recall"], "tokens": tokens,
           "over_budget": tokens > limit, "seconds": round(res["seconds"], 3),
           "error": res.get("error"), "gold_files": gold.files,
           "gold_lines": len(gold.all_lines()), "missed": got["missed"],
           "top_files": [[p, len(shown.get(p, ()))] for p in order[:10]]}
    for key in ("warm_seconds", "warm_same", "warm_error", "reported_tokens"):
        if key in res:
            row[key] = round(res[key], 3) if key == "warm_seconds" else res[key]
    if isinstance(budget, str):
        row.update(budget_tokens=limit, encoding=encoding)
    return row


def evaluate(item: tuple[Task, Path], args) -> list[dict]:
    task, tree = item
    rows = []
    for method in args.methods:
        if method == "pack":
            results = run_pack(task.text, tree, args.budgets, args, getattr(task, "env", None))
        else:
            results = run_baseline(method, task.text, tree, args.sizes, count)
        rows += [_row(task, method, b, results[b], args.sizes[b]) for b in args.budgets]
    return rows


def _progress(rows: list[dict]) -> str:
    t = rows[0]["task"]
    parts = []
    for m in dict.fromkeys(r["method"] for r in rows):
        parts.append(m + " " + "/".join(f"{r['line_recall']:.2f}" for r in rows
                                        if r["method"] == m))
    return f"{t}: " + "; ".join(parts)


def print_tables(rows: list[dict], args) -> None:
    for kind in TASK_SETS:
        title = TITLES[kind]
        mine = [r for r in rows if r["kind"] == kind]
        if mine:
            print()
            print(report.table(mine, args.methods, args.budgets, title))
            if args.per_task:
                print(report.by_repo(mine, args.methods, args.budgets))
                print(report.per_task(mine, args.methods, args.budgets))


def from_reports(args) -> int:
    merged: dict[tuple, dict] = {}
    for path in args.report:
        data = json.loads(path.read_text())
        print(f"{path}: ctx-pack {data['meta'].get('pack_bin')} "
              f"(checkout {data['meta'].get('checkout') or '?'})")
        for r in data["rows"]:
            merged[(r["task"], r["method"], r["budget"])] = r
    rows = [r for r in merged.values() if r["method"] in args.methods
            and r["budget"] in args.budgets and (not args.only or r["task"] in args.only)
            and args.tasks in ("all", r["kind"])]
    print_tables(sorted(rows, key=lambda r: (r["task"], r["method"], str(r["budget"]))), args)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.report:
        return from_reports(args)
    if "pack" in args.methods and not os.access(args.pack_bin, os.X_OK):
        print(f"bench_pack_quality: error: no ctx-pack at {args.pack_bin} (give --pack-bin)",
              file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    resolve_budgets(args)
    version = checkout_of(args.pack_bin) if "pack" in args.methods else ""
    ready, dropped = prepare(args)
    for line in dropped:
        print(f"dropped: {line}", file=sys.stderr)
    rows: list[dict] = []
    if args.jobs > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for got in pool.map(evaluate, ready, [args] * len(ready)):
                print(_progress(got), file=sys.stderr)
                rows += got
    else:
        for item in ready:
            got = evaluate(item, args)
            print(_progress(got), file=sys.stderr)
            rows += got
    wall = time.perf_counter() - t0
    print(f"ctx-pack: {args.pack_bin} {' '.join(args.pack_arg)}".rstrip()
          + (f" (checkout {version})" if version else ""))
    print_tables(rows, args)
    if dropped:
        print("dropped:\n" + "\n".join(f"- {d}" for d in dropped))
    print(f"\nwall time {wall:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        meta = {"pack_bin": args.pack_bin, "pack_args": args.pack_arg, "checkout": version,
                "budgets": args.budgets, "budget_sizes": {str(b): list(v) for b, v in
                                                          args.sizes.items()},
                "dropped": dropped, "wall_seconds": round(wall, 1)}
        args.json.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
