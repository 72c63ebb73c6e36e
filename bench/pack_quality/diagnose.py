"""Where does a task's gold sit in ctx-pack's ranking? In process, for tuning and for the
misses a note reports.

    .venv/bin/python bench/pack_quality/diagnose.py --tree bench/corpora/swe/ID --id ID \\
        [--tokens 16000] [--dev-file ...]

For each gold hunk: its file's rank among the ranked files, the global rank of the chunk
holding its lines (all ranked chunks by score, best first), the chunk's score against the
best chunk's, and whether the pack showed the lines. Reads the task from the SWE-bench dev
file (``--id``) or a held-out commit (``--repo``/``--sha`` with a mirror).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pack_quality.gold import parse_patch, shown_lines  # noqa: E402


def capture_chooser(task: str, tree: Path, tokens: int, store: Path, extra: list[str]):
    """Run ctx-pack in process; return (its JSON output, the Chooser it built)."""
    import ctxtools.pack.build as build
    from ctxtools.cli.pack import main

    got = {}
    orig = build._chooser

    def spy(*a, **k):
        got["ch"] = orig(*a, **k)
        return got["ch"]

    build._chooser = spy
    out = io.StringIO()
    args = [f"--task={task}", "--tokens", str(tokens), "--root", str(tree), str(tree),
            "--format", "json", "--store", str(store), *extra]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(
            io.StringIO()
        ), contextlib.suppress(SystemExit):
            main(args)
    finally:
        build._chooser = orig
    return json.loads(out.getvalue()), got.get("ch")


def chunk_table(ch) -> list[tuple[float, str, int]]:
    rows = []
    for d in ch.docs:
        for k, s in enumerate(d.scores):
            rows.append((s, d.label, k))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    return rows


def report(task_id: str, text: str, patch: str, tree: Path, tokens: int, store: Path,
           extra: list[str]) -> list[str]:
    data, ch = capture_chooser(text, tree, tokens, store, extra)
    gold = parse_patch(patch)
    shown = shown_lines(data["text"])
    table = chunk_table(ch)
    best = table[0][0] if table else 1.0
    pos = {(lab, k): i for i, (_s, lab, k) in enumerate(table)}
    frank = {d.label: i for i, d in enumerate(ch.docs)}
    docs = {d.label: d for d in ch.docs}
    out = [f"{task_id}: {len(ch.docs)} ranked files, {len(table)} chunks, "
           f"pack {data['tokens']} tokens, files shown {len(shown)}"]
    for path in gold.files:
        lines = gold.lines_of(path)
        seen = shown.get(path, set())
        hit = sum(1 for n in lines if n in seen)
        d = docs.get(path)
        if d is None:
            where = "blind" if path in ch.ranking.blind else (
                "rest" if path in ch.ranking.rest else "absent")
            out.append(f"  {path}: not ranked ({where}); shown {hit}/{len(lines)}")
            continue
        ks = sorted({k for k, c in enumerate(d.chunks) for n in lines if c.start <= n <= c.end})
        parts = []
        for k in ks:
            c = d.chunks[k]
            parts.append(f"chunk {c.kind} {c.name or ''} {c.start}-{c.end} "
                         f"global #{pos[(path, k)] + 1} score {d.scores[k] / best:.3f}")
        out.append(f"  {path}: file #{frank[path] + 1} score {d.score:.2f}; shown "
                   f"{hit}/{len(lines)}; " + "; ".join(parts))
    top = [f"{lab}:{docs[lab].chunks[k].start} ({s / best:.2f})" for s, lab, k in table[:8]]
    out.append("  top chunks: " + ", ".join(top))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--id", required=True)
    ap.add_argument("--dev-file", type=Path,
                    default=HERE.parent / "data" / "swe-bench-lite-dev" / "instances.jsonl")
    ap.add_argument("--patch-file", type=Path, help="the gold diff (held-out tasks)")
    ap.add_argument("--text-file", type=Path, help="the task text (held-out tasks)")
    ap.add_argument("--tokens", type=int, default=16000)
    ap.add_argument("--store", type=Path, default=Path("/tmp/diag-store"))
    ap.add_argument("--pack-arg", action="append", default=[])
    args = ap.parse_args(argv)
    if args.patch_file:
        text, patch = args.text_file.read_text(), args.patch_file.read_text()
    else:
        rows = [json.loads(x) for x in args.dev_file.read_text().splitlines() if x.strip()]
        row = next(r for r in rows if r["instance_id"] == args.id)
        text, patch = row["problem_statement"], row["patch"]
    for line in report(args.id, text, patch, args.tree, args.tokens, args.store,
                       args.pack_arg):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
