"""Evaluate memory retrieval on a labelled set: recall@5 and the noise admitted.

The set (bench/data/memory_eval.json) holds queries over Django 5.1.4's docs/, each with
the sections (file + heading) that answer it, and a few off-topic queries that nothing in
the corpus answers. For each method (hashing, tfidf) every chunk of the corpus is scored
(``ctxtools.memory.rank_memory``), and this reports:

- recall@5: per query, the share of its relevant sections that have a chunk among the
  five best chunks; averaged over the queries (hit@5: at least one; hit@3: at least one
  among the three best);
- per threshold rule -- the method's rule (max(floor, median + margin, share x best)),
  the rule without the share of the best (max(floor, median + margin): the first
  version's), a fixed 0.02 (the seed's old threshold), and the floor alone -- the chunks
  kept per query, the share of kept
  chunks that are not relevant (noise: not one of the labelled sections), the share of
  kept chunks from documents none of whose sections is labelled (other doc), the noise
  among the five best kept chunks (about what a pack's default 15% memory budget holds),
  the share of relevant sections kept, and the chunks kept for the off-topic queries (all
  noise);
- with --sweep, the same for a range of margins (how MARGINS was chosen), of shares of
  the best (how SHARE_OF_BEST was chosen) and of fixed thresholds.

Labels: ``--labels all`` (the default) counts the hand-written labels and the ones added
by judging a pool of the best chunks (see the data file's "about"); ``--labels hand``
only the hand-written ones, which are narrower (about two sections a query).

Every label is checked against the corpus first: a label that names no chunk stops the
run. Run: .venv/bin/python bench/bench_memory_eval.py [--sweep]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memory_corpus import ensure_docs, ensure_root  # noqa: E402

from ctxtools.memory import rank_memory  # noqa: E402
from ctxtools.memory.threshold import FLOORS, MARGINS, SHARE_OF_BEST, median  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "memory_eval.json"
REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sweep", action="store_true", help="also sweep the margin")
    ap.add_argument("--methods", default="tfidf,hashing")
    ap.add_argument("--labels", choices=("all", "hand"), default="all")
    ap.add_argument(
        "--data",
        default=str(DATA),
        help="the labelled set (its 'root', relative to the repository, is the corpus, "
        "extracted from its 'source' when missing; without one, Django's docs)",
    )
    args = ap.parse_args()
    global LABELS
    LABELS = ("hand", "pool") if args.labels == "all" else ("hand",)
    spec = json.loads(Path(args.data).read_text())
    docs = ensure_root(spec) if "root" in spec else ensure_docs()
    queries = spec["queries"]
    store = tempfile.mkdtemp(prefix="ctx-memeval-")
    import os

    os.chdir(docs)
    print(
        f"corpus {docs}; {len(queries)} queries, {len(spec['offtopic'])} off-topic; "
        f"labels: {' + '.join(LABELS)}"
    )
    for method in args.methods.split(","):
        runs = []
        for q in queries:
            r = rank_memory(["."], q["query"], method=method, store=store)
            runs.append((q, r))
        if method == args.methods.split(",")[0]:
            check_labels(runs)
        off = [rank_memory(["."], t, method=method, store=store) for t in spec["offtopic"]]
        n_chunks = len(runs[0][1].chunks)
        print(
            f"\n== {method} ({n_chunks:,} chunks; floor {FLOORS[method]}, margin "
            f"{MARGINS[method]}, share of the best {SHARE_OF_BEST})"
        )
        print_recall(runs)
        print(
            f"{'rule':<38}{'kept/q':>8}{'noise':>8}{'other doc':>10}{'top5 noise':>11}"
            f"{'rel kept':>10}{'off-topic kept/q':>18}"
        )
        rules = [
            ("default: max(floor, med+mar, share)", lambda r: r.threshold["threshold"]),
            (
                "max(floor, median+margin)",
                lambda r, fl=FLOORS[method], m=MARGINS[method]: max(
                    fl, median([s.score for s in r.chunks]) + m
                ),
            ),
            ("fixed 0.02", lambda r: 0.02),
            (f"floor {FLOORS[method]} alone", lambda r, fl=FLOORS[method]: fl),
        ]
        if args.sweep:
            for m in (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3):
                rules.append(
                    (
                        f"max(floor, median+{m:.2f})",
                        lambda r, m=m, fl=FLOORS[method]: max(
                            fl, median([s.score for s in r.chunks]) + m
                        ),
                    )
                )
            for f in (0.2, 0.25, 0.3, 0.35, 0.45, 0.5):
                rules.append((f"fixed {f}", lambda r, f=f: f))
            for share in (0.7, 0.8, 0.85, 0.9, 0.95):
                for fl in sorted({FLOORS[method], 0.3, 0.4}):
                    rules.append(
                        (
                            f"max({fl}, med+mar, {share} x best)",
                            lambda r, sh=share, fl=fl, m=MARGINS[method]: max(
                                fl,
                                median([s.score for s in r.chunks]) + m,
                                sh * r.chunks[0].score,
                            ),
                        )
                    )
        for name, rule in rules:
            print_rule(name, rule, runs, off)


LABELS: tuple[str, ...] = ("hand", "pool")


def relevant_of(q: dict) -> set[tuple[str, str]]:
    return {(x["file"], x["heading"]) for x in q["relevant"] if x.get("by", "hand") in LABELS}


def key(s) -> tuple[str, str]:
    return (s.chunk.file.removeprefix("./"), s.chunk.heading)


def check_labels(runs) -> None:
    known = {key(s) for s in runs[0][1].chunks}
    bad = [(q["query"], lab) for q, _ in runs for lab in relevant_of(q) if lab not in known]
    if bad:
        for query, lab in bad:
            print(f"label names no chunk: {lab} ({query!r})", file=sys.stderr)
        raise SystemExit(1)


def print_recall(runs) -> None:
    recall = hit = hit3 = first = 0.0
    for q, r in runs:
        rel = relevant_of(q)
        top = {key(s) for s in r.chunks[:5]}
        recall += len(rel & top) / len(rel)
        hit += bool(rel & top)
        hit3 += bool(rel & {key(s) for s in r.chunks[:3]})
        first += bool(r.chunks) and key(r.chunks[0]) in rel
    n = len(runs)
    print(
        f"recall@5 {recall / n:.3f}   hit@5 {hit / n:.3f}   hit@3 {hit3 / n:.3f}"
        f"   precision@1 {first / n:.3f}"
    )


def print_rule(name, rule, runs, off) -> None:
    kept = noise = other = top = top_noise = 0
    rel_kept = 0.0
    for q, r in runs:
        limit = rule(r)
        rel = relevant_of(q)
        rel_files = {f for f, _ in rel}
        ks = [s for s in r.chunks if s.score > 0 and s.score >= limit]
        kept += len(ks)
        noise += sum(1 for s in ks if key(s) not in rel)
        other += sum(1 for s in ks if key(s)[0] not in rel_files)
        top += len(ks[:5])
        top_noise += sum(1 for s in ks[:5] if key(s) not in rel)
        rel_kept += len(rel & {key(s) for s in ks}) / len(rel)
    off_kept = 0
    for r in off:
        limit = rule(r)
        off_kept += sum(1 for s in r.chunks if s.score > 0 and s.score >= limit)
    n = len(runs)
    share = f"{noise / kept:.1%}" if kept else "-"
    other_share = f"{other / kept:.1%}" if kept else "-"
    top_share = f"{top_noise / top:.1%}" if top else "-"
    print(
        f"{name:<38}{kept / n:>8.1f}{share:>8}{other_share:>10}{top_share:>11}"
        f"{rel_kept / n:>10.3f}{off_kept / len(off):>18.1f}"
    )


if __name__ == "__main__":
    main()
