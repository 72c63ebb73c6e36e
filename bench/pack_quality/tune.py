"""The tuning set, and a fast in-process loop over it for the selection engine's constants.

The tuning set (kind "tune", pinned in ``tune.txt``) is where the engine's constants are
chosen, with the SWE-bench Lite dev split. Rule, written before any of its tasks was run:
repositories of 1,500+ files that are in none of the evaluation sets (SWE-bench's twelve,
the dev six, the first held-out five, the large held-out set) -- scipy, numpy, mypy (Python),
hugo, prometheus (Go), rust-analyzer, nushell (Rust) -- and in each the first
``TUNE_PER_REPO`` commits by hash that satisfy the held-out rule (``tasks.qualifies``) and
whose parent's tree holds at least ``TUNE_MIN_FILES`` files.

Added in the third round, by the same rule and before any of their tasks was run: typeorm
(TypeScript) and maven (Java), the languages of the large held-out set's weakest trees that
the first seven lack (guava, junit5 and nest were refused: snapshots over 500 MiB). A
``--select`` pins only the repositories not pinned yet, so earlier pins stay as they are.

    .venv/bin/python bench/pack_quality/tune.py --select          # pin tune.txt again
    .venv/bin/python bench/pack_quality/tune.py --select-second   # pin tune2.txt
    .venv/bin/python bench/pack_quality/tune.py --budgets 8000,16000 [--set dev,tune]
    .venv/bin/python bench/pack_quality/tune.py --set tune_prose    # the prose tuning list

The second tuning set (kind "tune2", ``tune2.txt``; written 2026-12-05 before any of its
tasks was run): the same rule and repositories, each repository's next ``TUNE_PER_REPO``
commits after those of ``tune.txt`` (and none of the prose lists'). Made because a lever's
gain on 54 tasks is often two or three tasks: a change is kept when it holds on both.

The third tuning set (kind "tune3", ``tune3.txt``; written 2026-12-05 before any of its
tasks was run): the same rule again, each repository's next ``TUNE_PER_REPO`` commits after
those of ``tune.txt`` and ``tune2.txt`` (and none of the prose lists'). Made because one
lever (a coverage factor) rose on the second set and fell on the first at every weight.

    .venv/bin/python bench/pack_quality/tune.py --select-third    # pin tune3.txt

The large tuning list (kind "tune_large", ``tune_large.txt``; its rule and repositories
written 2026-12-07 before any of its tasks was run or looked at): made because the three
lists above come from trees of 1,500 to 3,000 files whose fixes are mostly one file, while
the large held-out sets' misses are mostly a second file of a multi-file fix in a tree of
3,000+ files, so a lever aimed at those could only be judged on data without them. The
large sets' task rule (``qualifies``, the parent's tree 3,000+ files: ``LARGE_MIN_FILES``),
the first ``TUNE_PER_REPO`` commits by hash (a commit git cannot diff, a blob the
snapshot lacks, does not qualify). Repositories: in no evaluation set and no
tuning list, one a language, the first whose snapshot the fetch tool brought (at most 500
MiB) with 3,000+ files at HEAD, candidates tried in this order: zulip, mastodon, gitea,
neovim (refused, 0.54 to 1.0 GB); apache/dubbo (Java, 4,667 files, taken);
bevyengine/bevy (Rust, 3,023, taken); pandas (refused, 1.5 GB); traefik (Go, 2,256 files),
outline (TypeScript, 2,707): too few; openssl (refused); rubocop (Ruby, 2,212): too few;
vim/vim (C, 8,521, taken); Qiskit/qiskit (Python, 4,023, taken); frappe (refused);
istio/istio (Go, 6,611, taken); sveltejs/svelte (JavaScript, 9,080, taken);
typescript-eslint/typescript-eslint (TypeScript, 7,515, taken); forem (refused);
spree/spree (Ruby, 5,555, taken). Pinned: 6 commits of each but bevy, whose history has
no qualifying commit with a parent of 3,000+ files (its HEAD has 3,023): 42 tasks.

    .venv/bin/python bench/pack_quality/tune.py --select-large    # pin tune_large.txt

The loop builds each task's ``Chooser`` once (in process, the store kept warm under
``--store``), then plans and renders the files section for each budget (the budget less
``OVERHEAD`` for the pack's other sections) and scores it against the gold. It prints mean
line recall, hunks complete and files-section tokens per set and budget. It measures the
files section alone: the real bench (``bench_pack_quality.py``) gives the figures to report.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bench/: pack_quality, bench_pack_quality

from pack_quality.gold import parse_patch, score  # noqa: E402
from pack_quality.tasks import DEV, heldout_task, load_dev, qualifies  # noqa: E402
from pack_quality.trees import TreeError, check_patch, find_mirror, git, materialise  # noqa: E402

TUNE_REPOS = (
    "scipy/scipy", "numpy/numpy", "python/mypy", "gohugoio/hugo", "prometheus/prometheus",
    "rust-lang/rust-analyzer", "nushell/nushell", "typeorm/typeorm", "apache/maven")
TUNE_PER_REPO = 6
TUNE_MIN_FILES = 1500
PINNED = HERE / "tune.txt"
PINNED_PROSE = HERE / "tune_prose.txt"  # the prose tuning list (tune_prose.py's rule)
PINNED_PROSE2 = HERE / "tune_prose2.txt"  # its second list (tune_prose.py --second)
PINNED_SECOND = HERE / "tune2.txt"  # the second tuning set (--select-second)
PINNED_THIRD = HERE / "tune3.txt"  # the third tuning set (--select-third)
PINNED_LARGE = HERE / "tune_large.txt"  # the large tuning list (--select-large)
PINNED_REFS = HERE / "tune_refs.txt"  # the ticket tuning list (tune_refs.py's rule)
PINNED_REFS_LARGE = HERE / "tune_refs_large.txt"  # its large repositories' (--large)
TUNE_LARGE_REPOS = (
    "apache/dubbo", "bevyengine/bevy", "vim/vim", "Qiskit/qiskit", "istio/istio",
    "sveltejs/svelte", "typescript-eslint/typescript-eslint", "spree/spree")
OVERHEAD = 1500  # tokens of a pack's other sections (map, task), roughly
MIRRORS = [Path("/work/.mirror")]
CORPORA = HERE.parent / "corpora"


def n_files(mirror: Path, rev: str) -> int:
    out = git("ls-tree", "-r", "--name-only", "-z", rev, git_dir=mirror).stdout
    return out.count(b"\0")


def entries(mirror: Path) -> list[tuple[str, str]]:
    """(sha, message) of HEAD's non-merge one-parent commits, by hash: the order both
    tuning lists' rules take commits in."""
    log = git("log", "--no-merges", "--format=%H%x00%P%x00%B%x01", "HEAD",
              git_dir=mirror).stdout.decode(errors="replace")
    out = []
    for entry in log.split("\x01"):
        parts = entry.strip("\n").split("\x00")
        if len(parts) == 3 and len(parts[1].split()) == 1:
            out.append((parts[0], parts[2]))
    return sorted(out)


def first_qualifying(mirror: Path, ok) -> list[str]:
    """The first ``TUNE_PER_REPO`` commits of MIRROR, by hash, that OK(sha, message) takes."""
    picked = []
    for sha, message in entries(mirror):
        if ok(sha, message):
            picked.append(sha)
            if len(picked) == TUNE_PER_REPO:
                break
    return picked


def select(repo: str, mirror: Path, skip: frozenset = frozenset()) -> list[str]:
    return first_qualifying(mirror, lambda sha, message: sha not in skip and qualifies(
        mirror, sha, message) and n_files(mirror, f"{sha}^") >= TUNE_MIN_FILES)


def select_large(repo: str, mirror: Path) -> list[str]:
    """The large tuning list's commits of REPO: the large sets' rule, the first
    ``TUNE_PER_REPO`` by hash."""
    from pack_quality.tasks import LARGE_MIN_FILES

    def ok(sha: str, message: str) -> bool:
        try:
            return qualifies(mirror, sha, message, min_files=LARGE_MIN_FILES)
        except TreeError:  # a blob the snapshot lacks: git cannot diff it, it does not qualify
            return False

    return first_qualifying(mirror, ok)


def select_each(pick, done=frozenset(), repos=TUNE_REPOS) -> list[tuple[str, str]]:
    """(repo, commit) for each of REPOS not in DONE, the commits PICK(repo, mirror)
    gives from its mirror (a repository without one is said and passed)."""
    pairs = []
    for repo in repos:
        if repo in done:
            continue
        mirror = find_mirror(repo, {}, MIRRORS)
        if mirror is None:
            print(f"no mirror of {repo}", file=sys.stderr)
            continue
        got = pick(repo, mirror)
        print(f"{repo}: {len(got)}", file=sys.stderr)
        pairs += [(repo, s) for s in got]
    return pairs


def write_pins(path: Path, title: str, pairs: list[tuple[str, str]]) -> None:
    path.write_text(f"# {title}: repository, commit.\n" + "".join(f"{r} {s}\n" for r, s in pairs))


def refuse_pinned(path: Path, prog: str) -> bool:
    """Whether PATH holds a pinned list already, said on stderr: a list pinned by its rule
    is never chosen again over itself (without the mirrors that would write it empty)."""
    got = pinned(path)
    if got:
        print(f"{prog}: error: {path.name} is pinned already ({len(got)} commits); "
              "remove it to pin it again", file=sys.stderr)
    return bool(got)


def pinned(path: Path = PINNED) -> list[tuple[str, str]]:
    if not path.is_file():
        return []
    return [tuple(ln.split()) for ln in path.read_text().splitlines()
            if ln.strip() and not ln.startswith("#")]


def tasks_of(sets: list[str]) -> list[tuple[object, Path]]:
    out = []
    if "dev" in sets:
        for t in load_dev(DEV):
            mirror = find_mirror(t.repo, {}, MIRRORS)
            if mirror is None:
                continue
            with contextlib.suppress(TreeError):
                out.append((t, materialise(mirror, t.base, CORPORA / "swe" / t.id)))
    for kind, path in (("tune", PINNED), ("tune2", PINNED_SECOND), ("tune3", PINNED_THIRD),
                       ("tune_prose", PINNED_PROSE), ("tune_prose2", PINNED_PROSE2),
                       ("tune_large", PINNED_LARGE), ("tune_refs", PINNED_REFS),
                       ("tune_refs_large", PINNED_REFS_LARGE)):
        if kind in sets:
            out += pinned_tasks(kind, pinned(path), large=kind in ("tune_large", "tune_refs_large"))
    return out


def pinned_tasks(kind: str, pairs: list[tuple[str, str]],
                 large: bool = False) -> list[tuple[object, Path]]:
    """The tasks (and their trees, made under CORPORA/tune) of the pinned PAIRS (LARGE:
    pinned by the large sets' rule, checked by it)."""
    out = []
    for repo, sha in pairs:
        mirror = find_mirror(repo, {}, MIRRORS)
        if mirror is None:
            continue
        try:
            t = heldout_task(repo, mirror, sha, "large" if large else "heldout")
            t.kind = kind
            tree = materialise(mirror, t.base, CORPORA / "tune" / t.id)
            check_patch(tree, t.patch)
        except TreeError as exc:
            print(f"dropped {repo}@{sha[:12]}: {exc}", file=sys.stderr)
            continue
        out.append((t, tree))
    return out


def build_chooser(task: str, tree: Path, store: Path, budget: int):
    """The Chooser ctx-pack builds for TASK over TREE (in process)."""
    from pack_quality.diagnose import capture_chooser

    return capture_chooser(task, tree, budget, store, [])[1]


HISTORY = False  # --history: the trees are seen with their history (``history_env``)


@contextlib.contextmanager
def history_env(t, tree: Path):
    """While HISTORY is on: GIT_DIR and GIT_WORK_TREE set so that git sees TREE as a
    checkout of T's base with its mirror's history (``trees.with_history``)."""
    import os

    from pack_quality.trees import with_history

    mirror = find_mirror(t.repo, {}, MIRRORS) if HISTORY else None
    if mirror is None:
        yield
        return
    env = with_history(mirror, t.base, tree, t.id)
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def evaluate(items, budgets: list[int], store: Path, choosers: dict) -> list[dict]:
    from ctxtools.pack.choose_render import render_plan

    rows = []
    for t, tree in items:
        ch = choosers.get(t.id)
        if ch is None:
            with history_env(t, tree):
                ch = choosers[t.id] = build_chooser(t.text, tree, store, max(budgets))
        gold = parse_patch(t.patch)
        if not gold.hunks:
            continue
        for b in budgets:
            text = render_plan(ch, b - OVERHEAD).text
            got = score(gold, text)
            rows.append({"task": t.id, "kind": t.kind, "budget": b,
                         "line_recall": got["line_recall"], "complete": got["complete"],
                         "file_recall": got["file_recall"], "tokens": ch.count(text)})
    return rows


def table(rows: list[dict], budgets: list[int]) -> str:
    out = []
    for kind in sorted({r["kind"] for r in rows}):
        cells = []
        for b in budgets:
            rs = [r for r in rows if r["kind"] == kind and r["budget"] == b]
            if not rs:
                continue
            lr = statistics.mean(r["line_recall"] for r in rs)
            cp = 100 * sum(r["complete"] for r in rs) / len(rs)
            tk = statistics.median(r["tokens"] for r in rs)
            cells.append(f"{b // 1000}k {lr:.3f}/{cp:.0f}%/{tk:,.0f}t")
        out.append(f"{kind:5} n={len(rs):3}  " + "  ".join(cells))
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--select", action="store_true")
    ap.add_argument("--select-second", action="store_true",
                    help="pin the second tuning set (tune2.txt): the next commits by the rule")
    ap.add_argument("--select-third", action="store_true",
                    help="pin the third tuning set (tune3.txt): the commits after tune2's")
    ap.add_argument("--select-large", action="store_true",
                    help="pin the large tuning list (tune_large.txt): the large sets' rule "
                    "over TUNE_LARGE_REPOS")
    ap.add_argument("--set", default="dev,tune")
    ap.add_argument("--budgets", default="8000,16000,32000")
    ap.add_argument("--store", type=Path, default=Path("/tmp/tune-store"))
    ap.add_argument("--per-task", action="store_true")
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME:module.CONST=value,... (repeatable; each run on the same "
                    "rankings; a ctxtools.retrieval.rank constant re-ranks)")
    ap.add_argument("--analyze", action="store_true",
                    help="print where each gold chunk sits in the global chunk order")
    ap.add_argument("--baseline", action="store_true",
                    help="score the bm25-chunk baseline (the whole budget) instead")
    ap.add_argument("--history", action="store_true",
                    help="the trees seen with their mirror's history (the history signal); "
                    "without it, each tree is a one-commit checkout (no history signal)")
    args = ap.parse_args(argv)
    global HISTORY
    HISTORY = args.history
    if args.select:
        pairs = pinned()
        pairs += select_each(select, done={r for r, _s in pairs})
        write_pins(PINNED, "The tuning set (tune.py's rule)", pairs)
        return 0
    if args.select_large:
        if refuse_pinned(PINNED_LARGE, "tune.py"):
            return 2
        write_pins(PINNED_LARGE, "The large tuning list (tune.py --select-large)",
                   select_each(select_large, repos=TUNE_LARGE_REPOS))
        return 0
    for wanted, path, title, before in (
        (args.select_second, PINNED_SECOND, "The second tuning set (tune.py --select-second)",
         (PINNED, PINNED_PROSE, PINNED_PROSE2)),
        (args.select_third, PINNED_THIRD, "The third tuning set (tune.py --select-third)",
         (PINNED, PINNED_SECOND, PINNED_PROSE, PINNED_PROSE2)),
    ):
        if not wanted:
            continue
        if refuse_pinned(path, "tune.py"):
            return 2
        skip = frozenset(s for p in before for _r, s in pinned(p))
        pairs = select_each(lambda repo, mirror, skip=skip: select(repo, mirror, skip))
        write_pins(path, title, pairs)
        return 0
    budgets = [int(b) for b in args.budgets.split(",")]
    items = tasks_of(args.set.split(","))
    if args.baseline:
        rows = baseline_rows(items, budgets)
        print("== bm25-chunk")
        print(table(rows, budgets))
        return 0
    choosers: dict = {}
    for spec in args.variant or ["current:"]:
        name, _, assigns = spec.partition(":")
        undo = apply_variant(assigns)
        reparse(undo, items, choosers)
        rows = evaluate(items, budgets, args.store, choosers)
        if args.per_task:
            for r in rows:
                print(f"{r['task']:50} {r['budget']:6} {r['line_recall']:.2f} {r['tokens']}")
        print(f"== {name} {assigns}")
        print(table(rows, budgets), flush=True)
        if args.analyze:
            for t, _tree in items:
                print(analyze(t, choosers[t.id]))
        for mod, const, old in undo:
            setattr(sys.modules[mod], const, old)
        reparse(undo, items, choosers)
    return 0


def reparse(undo, items, choosers) -> None:
    """Rank again after a ranking constant changed; read the tasks again after a constant
    of the analyzer's ``query`` or the engine's ``terms`` did (approximately: files newly
    reached are chunked without definitions)."""
    from ctxtools.analyzer import parse_query

    mods = {m.rsplit(".", 1)[-1] for m, _c, _v in undo}
    if not mods & {"rank", "terms", "query", "prose", "semantic", "history"}:
        return
    for t, _tree in items:
        ch = choosers.get(t.id)
        if ch is None:
            continue
        if mods & {"terms", "query", "prose"}:
            ch.query = parse_query(t.text)
            for src in ch.sources:
                src.present = None
        ch._rerank()


def baseline_rows(items, budgets: list[int]) -> list[dict]:
    from bench_pack_quality import count

    from pack_quality.methods import run_baseline

    rows = []
    for t, tree in items:
        gold = parse_patch(t.patch)
        if not gold.hunks:
            continue
        res = run_baseline("bm25-chunk", t.text, tree,
                           {b: (b, "cl100k_base") for b in budgets}, count)
        for b in budgets:
            got = score(gold, res[b]["text"])
            rows.append({"task": t.id, "kind": t.kind, "budget": b,
                         "line_recall": got["line_recall"], "complete": got["complete"],
                         "file_recall": got["file_recall"], "tokens": count(res[b]["text"])})
    return rows


def apply_variant(assigns: str) -> list[tuple[str, str, object]]:
    """Set each ``module.CONST=value`` of ASSIGNS; the list to undo it."""
    import importlib

    undo = []
    for part in filter(None, (x.strip() for x in assigns.split(","))):
        lhs, _, value = part.partition("=")
        mod, _, const = lhs.rpartition(".")
        m = importlib.import_module(mod)
        undo.append((mod, const, getattr(m, const)))
        setattr(m, const, type(getattr(m, const))(float(value)) if value else value)
    return undo


def analyze(t, ch) -> str:
    """The gold chunks' places in the global chunk order and relevance against the best."""
    rows = sorted(((s, d.label, k) for d in ch.docs for k, s in enumerate(d.scores)),
                  key=lambda r: (-r[0], r[1], r[2]))
    if not rows:
        return f"{t.id}: nothing ranked"
    best = rows[0][0] or 1.0
    pos = {(lab, k): i for i, (_s, lab, k) in enumerate(rows)}
    docs = {d.label: d for d in ch.docs}
    gold = parse_patch(t.patch)
    parts = []
    order = {d.label: i for i, d in enumerate(ch.docs)}
    rest = {lab: i for i, lab in enumerate(ch.ranking.rest)}
    for path in gold.files:
        d = docs.get(path)
        if d is None:
            where = (f"rest #{rest[path] + 1}" if path in rest
                     else "blind" if path in ch.ranking.blind else "not a candidate")
            parts.append(f"{path} unranked ({where})")
            continue
        parts.append(f"{path.rsplit('/', 1)[-1]} file #{order[path] + 1}")
        lines = gold.lines_of(path)
        for k, c in enumerate(d.chunks):
            if any(c.start <= n <= c.end for n in lines):
                parts.append(f"{path.rsplit('/', 1)[-1]}:{c.start}-{c.end} "
                             f"#{pos[(path, k)] + 1} r={d.scores[k] / best:.3f}")
    top = ", ".join(f"{d.label.rsplit('/', 1)[-1]} {d.score / (ch.docs[0].score or 1):.2f}"
                    for d in ch.docs[:6])
    return f"GOLD {t.id}: " + "; ".join(parts) + f"\n  TOP {top}"


if __name__ == "__main__":
    sys.exit(main())
