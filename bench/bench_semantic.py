"""Choosing and costing the semantic model (ctxtools.retrieval.semantic).

``models``: on each memory set (bench/data/memory_eval.json, Django's docs, the set TF-IDF
was tuned on; bench/data/memory_eval_libuv.json, libuv's docs, written for this work
before any ranking), every chunk is scored by

- tfidf: the lexical ranking alone (``rank_memory`` with CTX_SEMANTIC=0);
- wordllama: the cosine of WordLlama l2_supercat_256 mean vectors (the 'semantic' extra),
  the text with and without stop words;
- lsa: latent semantic analysis built from the corpus itself (the chunks' TF-IDF matrix,
  the 8,000 most frequent terms, a randomized truncated SVD to 150 dimensions), the
  offline option that needs no model at all;
- tfidf + W x each, W in 0.5 and 1.0;

and prints hit@3 (an answering section among the three best), precision@1 and recall@5.

``speed``: a task pack of the Django 5.1.4 sdist (copied outside any git repository) with
a warm store, ``--role explorer``, alternating CTX_SEMANTIC=0 and 1, RUNS times each after
one warm-up of each: median wall and user seconds and peak RSS (from wait4), and the
vector store's size.

Figures on this machine (2 cores, shared):

    models, hit@3 / precision@1 / recall@5       Django docs (79 q)   libuv docs (26 q)
    tfidf (the lexical ranking)                  0.861/0.696/0.665    0.692/0.500/0.522
    wordllama alone, raw text                    0.810/0.557/0.564    0.692/0.462/0.452
    wordllama alone, stop words out              0.823/0.620/0.625    0.731/0.423/0.484
    lsa alone                                    0.734/0.481/0.522    0.615/0.346/0.558
    tfidf + 0.5 x wordllama                      0.899/0.722/0.717    0.769/0.538/0.542
    tfidf + 1.0 x wordllama (chosen)             0.911/0.709/0.727    0.769/0.577/0.542
    tfidf + 0.5 x lsa                            0.924/0.722/0.709    0.654/0.500/0.529
    tfidf + 1.0 x lsa                            0.861/0.722/0.690    0.654/0.538/0.561

LSA helps on the big corpus (it was built from 6,322 chunks) and hurts on the small one
(267 chunks say little about which words go together: below TF-IDF alone); the shipped
model knows English either way, and helps on both. (The library adds the cosine above the
corpus median, not the raw cosine: the same ranking here, fewer off-topic chunks kept.)

Run: .venv/bin/python bench/bench_semantic.py models
     .venv/bin/python bench/bench_semantic.py speed [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
REPO = HERE.parent
SETS = [HERE / "data" / "memory_eval.json", HERE / "data" / "memory_eval_libuv.json"]


def score_rows(ranked) -> tuple[list, list[list[float]]]:
    """The chunks of memory rankings RANKED (one a query, over the same corpus) in file
    order, and each ranking's score of each chunk in that order."""
    base = sorted(ranked[0].chunks, key=lambda s: (s.chunk.file, s.chunk.start))
    where = {(s.chunk.file, s.chunk.start): i for i, s in enumerate(base)}
    rows = []
    for r in ranked:
        row = [0.0] * len(base)
        for s in r.chunks:
            row[where[(s.chunk.file, s.chunk.start)]] = s.score
        rows.append(row)
    return base, rows


def key(s) -> tuple[str, str]:
    return (s.chunk.file.removeprefix("./"), s.chunk.heading)


def evaluate(name: str, runs, base, score_of) -> None:
    h3 = p1 = r5 = 0.0
    for q, scores in zip(runs, score_of, strict=True):
        idx = sorted(
            range(len(base)), key=lambda i: (-scores[i], base[i].chunk.file, base[i].chunk.start)
        )
        top = [key(base[i]) for i in idx[:5]]
        rel = {(x["file"], x["heading"]) for x in q["relevant"]}
        h3 += bool(rel & set(top[:3]))
        p1 += top[0] in rel
        r5 += len(rel & set(top)) / len(rel)
    n = len(runs)
    print(f"  {name:<34} hit@3 {h3 / n:.3f}  precision@1 {p1 / n:.3f}  recall@5 {r5 / n:.3f}")


def lsa_scores(base, queries, dims: int = 150, vocab_size: int = 8000):
    import numpy as np

    from ctxtools.analyzer.tokenizer import words
    from ctxtools.memory import tfidf
    from ctxtools.memory.rank import tfidf_words

    counts = [tfidf.term_counts(tfidf_words(s.chunk, s.text)) for s in base]
    df: dict[str, int] = {}
    for c in counts:
        for t in c:
            df[t] = df.get(t, 0) + 1
    vocab = [t for t, d in sorted(df.items(), key=lambda x: (-x[1], x[0])) if d >= 2][:vocab_size]
    index = {t: i for i, t in enumerate(vocab)}
    n = len(counts)
    idf = np.array([np.log((n + 1) / (df[t] + 1)) + 1 for t in vocab], dtype=np.float32)

    def vec(c):
        v = np.zeros(len(vocab), dtype=np.float32)
        for t, f in c.items():
            j = index.get(t)
            if j is not None:
                v[j] = (1 + np.log(f)) * idf[j]
        return v

    a = np.stack([vec(c) for c in counts])
    a /= np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-9)
    rng = np.random.default_rng(0)
    y = a @ rng.standard_normal((a.shape[1], dims + 20)).astype(np.float32)
    for _ in range(2):
        y, _r = np.linalg.qr(y)
        y = a @ (a.T @ y)
    q_, _r = np.linalg.qr(y)
    _u, _s, vt = np.linalg.svd(q_.T @ a, full_matrices=False)
    vk = vt[:dims]
    docs = a @ vk.T
    docs /= np.maximum(np.linalg.norm(docs, axis=1, keepdims=True), 1e-9)
    out = []
    for q in queries:
        e = vec(tfidf.term_counts(words(q["query"]))) @ vk.T
        e /= max(float(np.linalg.norm(e)), 1e-9)
        out.append(list(docs @ e))
    return out


def models() -> None:
    from memory_corpus import ensure_docs

    from ctxtools.memory import rank_memory
    from ctxtools.retrieval import semantic

    os.environ["CTX_SEMANTIC"] = "0"
    model = semantic.load()
    cwd = os.getcwd()
    for path in SETS:
        spec = json.loads(path.read_text())
        os.chdir(REPO / spec["root"] if "root" in spec else ensure_docs())
        store = tempfile.mkdtemp(prefix="ctx-semantic-")
        queries = spec["queries"]
        ranked = [rank_memory(["."], q["query"], store=store) for q in queries]
        base, lex = score_rows(ranked)
        print(f"{path.name}: {len(queries)} queries, {len(base):,} chunks")
        evaluate("tfidf", queries, base, lex)
        sem = {}
        for label, prep in (("raw", lambda t: t), ("stop words out", semantic.prose)):
            texts = [
                prep(f"{s.chunk.heading}\n{os.path.splitext(s.chunk.file)[0]}\n{s.text}")
                for s in base
            ]
            mat = model.embed(texts)
            sem[label] = [semantic.cosines(model.vector(prep(q["query"])), mat) for q in queries]
            evaluate(f"wordllama alone, {label}", queries, base, sem[label])
        lsa = lsa_scores(base, queries)
        evaluate("lsa alone", queries, base, lsa)
        for w in (0.5, 1.0):
            for name, other in (("wordllama", sem["stop words out"]), ("lsa", lsa)):
                fused = [
                    [a + w * b for a, b in zip(la, ob, strict=True)]
                    for la, ob in zip(lex, other, strict=True)
                ]
                evaluate(f"tfidf + {w} x {name}", queries, base, fused)
        shutil.rmtree(store, ignore_errors=True)
        os.chdir(cwd)


def timed(argv, cwd, env) -> tuple[float, float, int]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{argv[0]} failed ({status})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def speed(runs: int, task: str) -> None:
    src = REPO / "bench" / "corpora" / "Django-5.1.4"
    tmp = Path(tempfile.mkdtemp(prefix="ctx-semantic-speed-"))
    tree = tmp / "django"
    shutil.copytree(src, tree, symlinks=True)
    store = tmp / "store"
    exe = str(Path(sys.executable).parent / "ctx-pack")
    argv = [exe, "-q", task, "--role", "explorer", "."]
    rows: dict[str, list[tuple[float, float, int]]] = {"0": [], "1": []}
    for i in range(runs + 1):
        for mode in ("0", "1"):
            env = dict(os.environ, CTX_STORE=str(store), CTX_SEMANTIC=mode)
            r = timed(argv, tree, env)
            if i:
                rows[mode].append(r)
    for mode, name in (("0", "lexical"), ("1", "semantic")):
        w = statistics.median(r[0] for r in rows[mode])
        u = statistics.median(r[1] for r in rows[mode])
        m = max(r[2] for r in rows[mode]) / 1024
        print(f"{name:<9} warm pack: median {w:.2f} s wall, {u:.2f} s cpu; peak RSS {m:.0f} MB")
    ratio = statistics.median(r[0] for r in rows["1"]) / statistics.median(r[0] for r in rows["0"])
    cpu = statistics.median(r[1] for r in rows["1"]) / statistics.median(r[1] for r in rows["0"])
    size = sum(p.stat().st_size for p in (store / "semantic").glob("*")) / 1e6
    print(f"ratio semantic/lexical: wall {ratio:.2f}x, cpu {cpu:.2f}x; vector store {size:.1f} MB")
    shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("models", "speed"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--task", default="where is caching done?")
    args = ap.parse_args()
    if args.what == "models":
        models()
    else:
        speed(args.runs, args.task)


if __name__ == "__main__":
    main()
