"""Ranking memory chunks against a task: which qualify, how well, and why."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxtools.memory.chunk import Chunk, MemoryFile

METHODS = ("hashing", "tfidf", "cmd")
DEFAULT_METHOD = "tfidf"  # the better one in bench/bench_memory_eval.py (see its report)


@dataclass
class Scored:
    """A chunk with its score, whether it qualified (KEPT) and WHY."""

    chunk: Chunk
    text: str
    score: float
    kept: bool
    why: str
    semantic: float | None = None  # the score's semantic part (None: not used)

    def as_dict(self) -> dict:
        c = self.chunk
        out = {
            "file": c.file,
            "heading": c.heading,
            "start": c.start,
            "end": c.end,
            "score": self.score,
            "kept": self.kept,
            "why": self.why,
        }
        if self.semantic is not None:
            out["semantic"] = self.semantic
        return out


@dataclass
class Ranking:
    """Every chunk of the memory files, best first, and how the threshold was set.
    METHOD is the one that scored (REQUESTED may differ: a failed command falls back)."""

    method: str
    requested: str
    threshold: dict
    chunks: list[Scored]
    files: int
    cache: dict
    notes: list[str] = field(default_factory=list)
    no_words: bool = False
    semantic: str | None = None  # the semantic model whose score is fused in, if any

    @property
    def kept(self) -> list[Scored]:
        return [s for s in self.chunks if s.kept]

    def as_dict(self, kept_only: bool = False) -> dict:
        """The ranking as JSON: the same for the same input whether the cache was warm or
        cold (the cache counts are not in it, nor the notes about the cache)."""
        rows = self.kept if kept_only else self.chunks
        return {
            "method": self.method,
            "requested": self.requested,
            "threshold": self.threshold,
            "files": self.files,
            "chunks": len(self.chunks),
            "kept": len(self.kept),
            **({"semantic": self.semantic} if self.semantic else {}),
            "notes": [n for n in self.notes if "memory cache" not in n],
            "results": [s.as_dict() for s in rows],
        }


def rank_memory(
    paths: Sequence[str],
    task: str,
    *,
    method: str = DEFAULT_METHOD,
    embed_cmd: str | None = None,
    embed_timeout: float | None = None,
    min_score: float | None = None,
    store: str | os.PathLike | None = None,
    use_cache: bool = True,
    allow_secrets: bool = False,
) -> Ranking:
    """Chunk the memory files under PATHS and score every chunk against TASK with METHOD
    ('hashing', 'tfidf', or 'cmd' with EMBED_CMD); chunks at or over the threshold are
    kept. A command that fails falls back to DEFAULT_METHOD, said in the notes. Files
    that are secrets by name are left out unless ALLOW_SECRETS (``chunk.discover``)."""
    from ctxtools.analyzer import read_task
    from ctxtools.memory.chunk import discover, read_memory_file

    argv = _check_request(method, embed_cmd, embed_timeout, min_score)
    notes: list[str] = []
    mfiles: list[MemoryFile] = []
    for label, real in discover(paths, notes, allow_secrets):
        mf = read_memory_file(label, real, notes)
        if mf is not None:
            mfiles.append(mf)
    qwords = list(read_task(task).words)
    requested = method
    state = _State(mfiles, method, argv, paths, store, use_cache, notes)
    if not qwords:
        return _no_words(state, method, requested, len(mfiles), notes)
    if method == "cmd":
        from ctxtools.memory.cmd import DEFAULT_TIMEOUT, EmbedCommandError

        try:
            scores = state.score_cmd(task, embed_timeout or DEFAULT_TIMEOUT)
        except EmbedCommandError as exc:
            notes.append(f"warning: {exc}; ranked with {DEFAULT_METHOD} instead")
            method = DEFAULT_METHOD
            state = _State(mfiles, method, None, paths, store, use_cache, notes)
    if method == "hashing":
        scores = state.score_hashing(qwords)
    elif method == "tfidf":
        scores = state.score_tfidf(qwords)
    sem = _semantic_parts(state, task, notes, scores) if method == "tfidf" else None
    if sem is not None:
        scores = [s + p for s, p in zip(scores, sem, strict=True)]
    chunks = state.chunks()
    from ctxtools.memory.threshold import threshold_for

    th = threshold_for("tfidf+semantic" if sem is not None else method, scores, min_score)
    limit = th["threshold"]
    rows = []
    parts = sem or [None] * len(chunks)
    for (c, text), s, p in zip(chunks, scores, parts, strict=True):
        s = round(s, 6)
        if s > 0 and s >= limit:
            rows.append(Scored(c, text, s, True, "at or over the threshold", p))
        else:
            why = f"{s:.3f} below the threshold {limit:.3f}"
            rows.append(Scored(c, text, s, False, why, p))
    rows.sort(key=lambda r: (-r.score, r.chunk.file, r.chunk.start))
    state.save()
    model = state.sem_model if sem is not None else None
    return Ranking(
        method, requested, th, rows, len(mfiles), state.cache_info(), notes, False, model
    )


# The semantic part of a TF-IDF score: SEMANTIC_WEIGHT x (the chunk's cosine with the task
# - the median cosine over the chunks), when positive. Above the median only, so a task
# about nothing in the corpus (every cosine alike) gains nothing and the threshold's rule
# still holds. Measured with bench/bench_memory_eval.py (hit@3 / precision@1 / recall@5),
# with the static model: Django's docs set 0.861/0.696/0.665 -> 0.911/0.747/0.718; the
# libuv set (written for this, before ranking) 0.692/0.500/0.522 -> 0.769/0.577/0.535
# (the docstring of bench/bench_semantic.py has the sweep). With the encoder (the model
# when installed): Django 0.962/0.835/0.774, the Cargo book 0.567/0.400/0.422 (0.200 with
# the static model), libuv (held out, run once) 0.923/0.615/0.628; the weight 1.0 was
# best of 0.5, 1 and 2 on the first two (bench/bench_semantic_models.py).
SEMANTIC_WEIGHT = 1.0


# The encoder reads a section in about 36 ms, so it reads only the candidates: the
# CANDIDATES best sections by the cheap score (TF-IDF + the static model's part, as ranked
# before the encoder; about 1 ms a section) and the CANDIDATES best by TF-IDF alone. The
# others keep TF-IDF alone (no semantic part: the scale every score is on, so the noise
# floor holds). The median is the corpus's, estimated on SAMPLE sections evenly spaced
# through it (the same for every task: read once); the candidates' own median, biased up,
# cut the sections kept (Cargo 1.3 -> 0.6 a question). Every section is read in a corpus
# of at most CANDIDATES. On the tuning sets (bench/bench_semantic_models.py cascade;
# hit@3 / precision@1, sections kept a question / share of the labelled ones kept), with
# every section read: Django 0.962/0.835, 2.2/0.481; Cargo 0.567/0.400, 1.3/0.233. K 20:
# 0.962/0.835, 2.2/0.477; 0.567/0.367, 1.1/0.192. K 40: 0.962/0.835; 0.533/0.367. K 80:
# 0.962/0.835, 2.2/0.477; 0.567/0.400, 1.2/0.219 (with the sample, 173 and 184 sections
# read a question, at most 224). No off-topic question keeps a section. libuv (held out,
# run once with K 80): 0.923/0.615, recall@5 0.628, as with every section read. Cost
# (ctx-excerpt --memory, an empty store): the Cargo book 59 s -> 7.9 s, Django's docs
# (6,322 sections) about 4 min -> 11.0 s; warm 0.34 s and 0.55 s.
CANDIDATES = 80
SAMPLE = 64


def _semantic_parts(state, task: str, notes: list[str], lex: list[float]) -> list[float] | None:
    """Each chunk's semantic part, or None (the extra missing: said in a note; or turned
    off with CTX_SEMANTIC=0). LEX: the chunks' TF-IDF scores (the encoder's candidates)."""
    from ctxtools.retrieval import semantic

    if not semantic.enabled():
        return None
    path = state.cache.path  # <store>/memory/x.bin, or None (no cache: no store either)
    model = semantic.load_memory(path.parent.parent if path is not None else None)
    if model is None:
        notes.append(semantic.MISSING)
        return None
    n = len(lex)
    if not getattr(model, "bounded", False) or n <= CANDIDATES:  # every chunk read
        return _above_median(state.score_semantic(task, model))
    cand = _candidates(state, task, lex)
    sample = [i * n // SAMPLE for i in range(SAMPLE)]
    read = sorted(set(cand) | set(sample))
    cos = dict(zip(read, state.score_semantic(task, model, only=read), strict=True))
    mid = sorted(cos[i] for i in sample)[SAMPLE // 2]
    parts = [0.0] * n
    for i in cand:
        parts[i] = round(SEMANTIC_WEIGHT * max(0.0, cos[i] - mid), 6)
    return parts


def _above_median(cos: list[float]) -> list[float]:
    """SEMANTIC_WEIGHT x (each cosine - the median of COS), when positive."""
    if not cos:
        return []
    mid = sorted(cos)[len(cos) // 2]
    return [round(SEMANTIC_WEIGHT * max(0.0, c - mid), 6) for c in cos]


def _candidates(state, task: str, lex: list[float]) -> list[int]:
    """The indexes (ascending) of the chunks the encoder reads: the CANDIDATES best by
    TF-IDF + the static model's part (TF-IDF alone without the static model) and the
    CANDIDATES best by TF-IDF; ties go to the earlier chunk."""
    from ctxtools.retrieval import semantic

    n = len(lex)
    cheap = lex
    static = semantic.load()
    if static is not None:
        parts = _above_median(state.score_semantic(task, static))
        cheap = [a + b for a, b in zip(lex, parts, strict=True)]

    def best(scores: list[float]) -> list[int]:
        return sorted(range(n), key=lambda i: (-scores[i], i))[:CANDIDATES]

    return sorted(set(best(cheap)) | set(best(lex)))


def _check_request(method, embed_cmd, embed_timeout, min_score) -> list[str] | None:
    """The request's errors (UsageError), else the embedding command's argv (or None)."""
    from ctxtools.errors import UsageError

    if method not in METHODS:
        raise UsageError(f"unknown retrieval method {method!r}", hint="hashing, tfidf or cmd")
    if method == "cmd" and not embed_cmd:
        raise UsageError("--retrieval cmd needs --embed-cmd CMD")
    if min_score is not None and not 0.0 <= min_score <= 1.0:
        raise UsageError(f"--min-score {min_score}: not between 0 and 1")
    if embed_timeout is not None and not 0.0 < embed_timeout <= 86400.0:
        raise UsageError(
            f"--embed-timeout {embed_timeout}: not a number of seconds", hint="0 < S <= 86400"
        )
    if not embed_cmd:
        return None
    from ctxtools.memory.cmd import parse_embed_command

    argv = parse_embed_command(embed_cmd)
    if method != "cmd":
        raise UsageError("--embed-cmd goes with --retrieval cmd")
    return argv


def _no_words(state, method: str, requested: str, files: int, notes: list[str]) -> Ranking:
    """The ranking of a task without a usable word: every chunk, none kept, said why."""
    notes.append(
        "note: no memory section qualifies: the task has no usable words (only "
        "stop-words, numbers or punctuation)"
    )
    rows = [Scored(c, t, 0.0, False, "the task has no usable words") for c, t in state.chunks()]
    th = {
        "threshold": None,
        "floor": None,
        "median": None,
        "margin": None,
        "rule": "no usable words",
    }
    return Ranking(method, requested, th, rows, files, state.cache_info(), notes, True)


def chunk_words(chunk: Chunk, text: str) -> list[str]:
    """The words the hashing embedder reads for a chunk: its text's, its heading's once
    more (a title says what a section is about); a section's words are read as a task's
    are (``ctxtools.analyzer``: one tokenizer, one stop list)."""
    from ctxtools.analyzer.tokenizer import words

    return words(text) + words(chunk.heading)


HEADING_WEIGHT = 2  # TF-IDF: a heading's words count this many times more than the text's
FILE_NAME_WEIGHT = 1  # TF-IDF: the file name's words (without extension) count this often


def tfidf_words(chunk: Chunk, text: str) -> list[str]:
    """The words TF-IDF counts for a chunk: its text's (the heading line among them), the
    heading's HEADING_WEIGHT times more, and its file name's (``auth/sessions.md``: auth,
    sessions) FILE_NAME_WEIGHT times -- a title and a file name say what a section is
    about. On bench/bench_memory_eval.py's labelled set, against the text plus the heading
    once: precision@1 0.66 -> 0.72, recall@5 0.66 -> 0.67 (with the pivot slope 0.3)."""
    from ctxtools.analyzer.tokenizer import words

    name = os.path.splitext(chunk.file)[0]  # auth/sessions.md: auth, sessions
    return words(text) + words(chunk.heading) * HEADING_WEIGHT + words(name) * FILE_NAME_WEIGHT


class _State:
    """The run's chunks and their cached or newly computed statistics."""

    def __init__(self, mfiles, method, argv, paths, store, use_cache, notes):
        from ctxtools.memory.cache import MemoryCache, cache_path

        self.mfiles = mfiles
        self.method = method
        self.notes = notes
        path = None
        if use_cache:
            from ctxtools.config import store_root

            material = sorted(os.path.realpath(p) for p in paths)
            if argv:
                material = ["cmd:" + "\0".join(argv), *material]
            path = cache_path(store_root(store), method, material)
        self.cache = MemoryCache(path)
        self.cache.load()
        if self.cache.note:
            notes.append(f"note: {self.cache.note}")
        self.argv = argv
        self.new_files: dict[str, list[tuple]] = {}
        self.vec: dict[str, bytes] = {}
        self.tf: dict[str, dict[str, int]] = {}
        self.stats: tuple | None = None
        self.sem: dict[str, bytes] = {}
        self.sem_model: str | None = None
        self.computed = 0
        self.dirty = False
        self._chunks: list[tuple[Chunk, str]] | None = None

    def chunks(self) -> list[tuple[Chunk, str]]:
        """(chunk, its text) of every file, files in label order, chunks in file order."""
        if self._chunks is not None:
            return self._chunks
        from ctxtools.memory.chunk import chunk_lines

        out = []
        for mf in self.mfiles:
            cached = self.cache.files.get(mf.digest)
            if cached is not None:
                chunks = [Chunk(mf.label, h, a, b, d) for h, a, b, d in cached]
            else:
                chunks = chunk_lines(mf.label, mf.lines)
                self.dirty = True
            self.new_files[mf.digest] = [(c.heading, c.start, c.end, c.digest) for c in chunks]
            for c in chunks:
                out.append((c, "\n".join(mf.lines[c.start - 1 : c.end])))
        self._chunks = out
        return out

    def score_hashing(self, qwords: list[str]) -> list[float]:
        from array import array

        from ctxtools.memory.hashing import HashingEmbedder, sparse_dot

        emb = HashingEmbedder()
        dot = sparse_dot(emb.vector(qwords))
        out = []
        for c, text in self.chunks():
            raw = self.vec.get(c.digest) or self.cache.vec.get(c.digest)
            if raw is None:
                v = emb.vector(chunk_words(c, text))
                raw = v.tobytes()
                self.computed += 1
                self.dirty = True
            else:
                v = array("f")
                v.frombytes(raw)
            self.vec[c.digest] = raw
            out.append(dot(v))
        return out

    def score_tfidf(self, qwords: list[str]) -> list[float]:
        import xxhash

        from ctxtools.memory import tfidf

        counts = []
        for c, text in self.chunks():
            tc = self.tf.get(c.digest) or self.cache.tf.get(c.digest)
            if tc is None:
                tc = tfidf.term_counts(tfidf_words(c, text))
                self.computed += 1
                self.dirty = True
            self.tf[c.digest] = tc
            counts.append(tc)
        fp = xxhash.xxh3_128_hexdigest("\n".join(c.digest for c, _ in self.chunks()).encode())
        st = self.cache.stats
        if isinstance(st, tuple) and len(st) == 3 and st[0] == fp and len(st[2]) == len(counts):
            df, norms = st[1], st[2]
        else:
            df, norms = tfidf.corpus_stats(counts)
            self.dirty = True
        self.stats = (fp, df, norms)
        return tfidf.scores(tfidf.term_counts(qwords), counts, df, norms)

    def score_semantic(self, task: str, model, only: list[int] | None = None) -> list[float]:
        """The cosine of the task with every chunk (with ONLY, the chunks of those indexes,
        in that order): heading, file name and text, as MODEL prepares them; chunk vectors
        from the cache or computed once for new content. The cached vectors of the other
        chunks are kept."""
        from ctxtools.retrieval import semantic

        chunks = self.chunks()
        picked = chunks if only is None else [chunks[i] for i in only]
        self.sem_model = model.name
        if self.cache.path is not None:  # <store>/memory/x.bin: the words' ids by the store's
            model.use_store(self.cache.path.parent.parent)
        todo: dict[str, str] = {}
        for c, text in picked:
            k = f"{model.name}:{c.digest}"
            if k not in self.sem and k not in self.cache.sem and k not in todo:
                name = os.path.splitext(c.file)[0].replace("/", " ")
                todo[k] = model.prepare(f"{c.heading}\n{name}\n{text}")
        keys = sorted(todo)
        for k, v in zip(keys, model.embed([todo[k] for k in keys]), strict=True):
            self.sem[k] = semantic.to_bytes(v)
        self.dirty = self.dirty or bool(keys)
        for c, _ in chunks:  # (kept for the next run: a chunk read before stays read)
            k = f"{model.name}:{c.digest}"
            if k not in self.sem and k in self.cache.sem:
                self.sem[k] = self.cache.sem[k]
        import numpy as np

        rows = [semantic.from_bytes(self.sem[f"{model.name}:{c.digest}"]) for c, _ in picked]
        q = model.vector(model.prepare(task))
        model.save_words()
        return semantic.cosines(q, np.stack(rows)) if rows else []

    def score_cmd(self, task: str, timeout: float) -> list[float]:
        from array import array

        from ctxtools.memory.cmd import EmbedCommandError, embed_texts
        from ctxtools.memory.hashing import cosine

        chunks = self.chunks()
        todo = {}
        for c, text in chunks:
            if c.digest not in self.cache.vec and c.digest not in todo:
                todo[c.digest] = text
        keys = sorted(todo)
        vectors = embed_texts(self.argv, [todo[k] for k in keys] + [task], timeout)
        q = vectors[-1]
        for k, v in zip(keys, vectors, strict=False):
            self.vec[k] = v.tobytes()
        self.computed = len(keys)
        self.dirty = self.dirty or bool(keys)
        out = []
        for c, _ in chunks:
            raw = self.vec.get(c.digest) or self.cache.vec[c.digest]
            self.vec[c.digest] = raw
            v = array("f")
            v.frombytes(raw)
            if len(v) != len(q):
                raise EmbedCommandError(
                    f"--embed-cmd {self.argv[0]}: vectors of {len(q)} dimensions, the cached "
                    f"ones have {len(v)}"
                )
            out.append(cosine(q, v))
        return out

    def cache_info(self) -> dict:
        n = len(self._chunks or [])
        return {"chunks": n, "computed": self.computed, "cached": n - self.computed}

    def save(self) -> None:
        if self.cache.path is None or not self.dirty:
            return
        problem = self.cache.save(self.new_files, self.vec, self.tf, self.stats, self.sem)
        if problem:
            self.notes.append(f"note: memory cache not written ({problem}); ranked without it")
