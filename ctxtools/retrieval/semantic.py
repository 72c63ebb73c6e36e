"""Offline semantic similarity: static word-piece embeddings, averaged and compared.

The model is WordLlama's ``l2_supercat_256`` (MIT): a 32,000 x 256 float16 matrix of
token embeddings (16 MB) and the Llama 2 tokenizer that indexes it, both shipped as data
inside the ``wordllama`` wheel (the ``semantic`` extra). We read those two files
ourselves -- the safetensors header and matrix with numpy, the tokenizer with
``tokenizers`` -- and never import ``wordllama`` (its import pulls pydantic and more, and
its loader looks for the tokenizer where the wheel does not ship it, then tries the
network). Nothing here downloads anything.

A text's vector is the mean of its tokens' rows (at most ``MAX_TOKENS`` tokens: a static
model's mean blurs past that), normalised to length 1; a similarity is a cosine. Sums run
in numpy's fixed pairwise order on one thread (no BLAS: a threaded matrix product may
reorder them), and every score is rounded, so the same input gives the same bytes.

Chosen by measurement (bench/bench_semantic.py): against an LSA model built from the
corpus itself (truncated SVD of the chunks' TF-IDF matrix) and against TF-IDF alone, on
the memory sets and the explorer questions; the figures are in that script's docstring.

When the extra is missing, ``load()`` returns None and ``MISSING`` is the note a caller
shows; the lexical ranking is used unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

MODEL = "wordllama-l2_supercat_256"
DIM = 256
MAX_TOKENS = 256  # tokens of a text that are averaged (its beginning: title, docstring)
MAX_CHARS = 1200  # characters tokenized (about MAX_TOKENS tokens of prose or code)
BATCH = 16  # texts embedded together (bounds the gathered rows: 16 x 256 x 1.5 KB)
WORD_BATCH = 2048  # words tokenized together (bounds the tokenizer's answers held at once)
COSINE_ROWS = 1024  # rows multiplied together (bounds the product: 1,024 x 1 KB)
SPLIT_TEXTS = 1024  # texts whose words are split and tokenized together
DIGITS = 6  # a similarity is rounded to this many decimals
MISSING = (
    "note: semantic matching is off (the 'semantic' extra is not installed: "
    "pip install 'ctxtools[semantic]'); ranked by words only"
)

STORE_DIR = "semantic"
STORE_KIND = "semantic"  # the memo files' kind (``ctxtools.memofile``)
STORE_MAX = 100_000  # vectors (or words) a store file keeps, the oldest dropped first (~50 MB)

_WEIGHTS = ("weights", "l2_supercat_256.safetensors")
_TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")
_loaded: list = []  # [Model or None]: loaded once per process
_memory: list = []  # [Encoder, Model or None]: the memory ranking's, loaded once


def model_files() -> tuple[str, str] | None:
    """The paths of the shipped matrix and tokenizer, or None when the extra is missing.
    Finds the package without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("wordllama")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    base = list(spec.submodule_search_locations)[0]
    weights = os.path.join(base, *_WEIGHTS)
    tokenizer = os.path.join(base, *_TOKENIZER)
    if not (os.path.isfile(weights) and os.path.isfile(tokenizer)):
        return None
    return weights, tokenizer


def load() -> Model | None:
    """The model, loaded once per process; None when the extra (or numpy) is missing or
    its files are damaged."""
    if _loaded:
        return _loaded[0]
    model = None
    files = model_files()
    if files is not None:
        try:
            import numpy  # noqa: F401  (the extra brings it)

            model = Model(*files)
        except Exception:  # numpy missing, a damaged or unexpected file: the lexical ranking
            model = None
    _loaded.append(model)
    return model


def load_memory(root=None):
    """The model the memory ranking uses, loaded once per process: the sentence encoder
    (``retrieval.encoder``, the extra's all-MiniLM-L6-v2; ROOT, the store, where an
    earlier version's folded copy of it is removed) when installed, else the static
    model; None when neither is. The encoder reads only the ranking's candidates, which
    the static model helps choose (``memory.rank.CANDIDATES``). (ctx-pack's chunk rerank
    keeps the static model: it embeds up to 60 files' chunks for a task, which the
    encoder would take seconds to do cold.)"""
    if _memory:
        return _memory[0]
    from ctxtools.retrieval.encoder import load_encoder

    model = load_encoder(root) or load()
    _memory.append(model)
    return model


def _read_matrix(path: str):
    """The float16 embedding matrix of a one-tensor safetensors file, memory-mapped."""
    import json
    import struct

    import numpy as np

    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        if not 0 < n < 1 << 20:
            raise ValueError("not a safetensors file")
        header = json.loads(f.read(n))
    info = header["embedding.weight"]
    if info["dtype"] != "F16" or len(info["shape"]) != 2 or info["shape"][1] != DIM:
        raise ValueError("unexpected tensor")
    rows, cols = info["shape"]
    start, end = info["data_offsets"]
    if end - start != rows * cols * 2:
        raise ValueError("tensor size")
    mm = np.memmap(path, dtype="<f2", mode="r", offset=8 + n + start, shape=(rows, cols))
    return mm


class Model:
    """The embedding matrix and its tokenizer.

    A text is tokenized word by word (``prose`` gives single-spaced words; the Llama
    tokenizer never merges across a space, so this is the text's own tokenization), and
    each word's token ids are kept: in the process, and in the store beside the vectors
    (``use_store``), so that a warm run tokenizes nothing and never loads the tokenizer
    (0.17 s of its JSON)."""

    name = MODEL

    def __init__(self, weights: str, tokenizer: str):
        self.matrix = _read_matrix(weights)  # float16, mapped: rows are read as used
        self.tokenizer_path = tokenizer
        self._tokenizer = None
        self.word_ids: dict[str, tuple[int, ...]] = {}
        self.words_path = None
        self.new_words = 0

    def use_store(self, root) -> None:
        """Read (once) and later keep the words' token ids under ROOT (the store)."""
        from pathlib import Path

        path = Path(root) / STORE_DIR / f"{self.name}-words-v1.bin"
        if self.words_path == path:
            return
        self.words_path = path
        data = _read_blob(path)
        kept = data if isinstance(data, dict) else {}
        for w, ids in kept.items():
            self.word_ids.setdefault(w, ids)
        # Words this model met under another store (an MCP server's, a test's) are new to
        # this one: kept at the next save, or a later process would tokenize them again.
        self.new_words += sum(1 for w in self.word_ids if w not in kept)

    def save_words(self) -> None:
        if self.words_path is None or not self.new_words:
            return
        items = list(self.word_ids.items())[-STORE_MAX:]
        _write_blob(self.words_path, dict(items))
        self.new_words = 0

    def _ids(self, words: list[str]) -> None:
        """Tokenize the WORDS not seen yet (the tokenizer is loaded on the first)."""
        todo = sorted({w for w in words if w not in self.word_ids})
        if not todo:
            return
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            self._tokenizer = Tokenizer.from_file(self.tokenizer_path)
            self._tokenizer.no_padding()
            self._tokenizer.no_truncation()
        rows = self.matrix.shape[0]
        for lo in range(0, len(todo), WORD_BATCH):  # (a word's ids are its own, whatever batch)
            some = todo[lo : lo + WORD_BATCH]
            encs = self._tokenizer.encode_batch(some, add_special_tokens=False)
            for w, enc in zip(some, encs, strict=True):
                self.word_ids[w] = tuple(t for t in enc.ids if 0 <= t < rows)
        self.new_words += len(todo)

    def prepare(self, text: str) -> str:
        """What is embedded of TEXT: ``prose`` of it (a static mean is better without
        the function words)."""
        return prose(text)

    def embed(self, texts: Sequence[str]):
        """Unit vectors (float32, one row per text) in the order of TEXTS; an empty text
        is the zero vector."""
        import numpy as np

        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for top in range(0, len(texts), SPLIT_TEXTS):
            # (a group's words split and tokenized with it: a text's vector is its own)
            split = [t[:MAX_CHARS].split() for t in texts[top : top + SPLIT_TEXTS]]
            self._ids([w for ws in split for w in ws])
            for lo in range(0, len(split), BATCH):
                self._embed_batch(split[lo : lo + BATCH], out, top + lo)
        return out

    def _embed_batch(self, split: list[list[str]], out, at: int) -> None:
        """OUT[AT:AT + len(SPLIT)] = the unit vectors of the texts whose words are SPLIT."""
        import numpy as np

        ids: list[int] = []
        starts: list[int] = []
        live: list[int] = []
        for i, words in enumerate(split, at):
            mine: list[int] = []
            for w in words:
                mine.extend(self.word_ids[w])
                if len(mine) >= MAX_TOKENS:
                    break
            if mine:
                live.append(i)
                starts.append(len(ids))
                ids.extend(mine[:MAX_TOKENS])
        if not live:
            return
        # a batch's rows gathered, each text's summed in order (reduceat: no threads)
        rows32 = self.matrix[np.array(ids)].astype(np.float32)
        sums = np.add.reduceat(rows32, starts, axis=0)
        norms = np.sqrt(np.add.reduce(sums * sums, axis=1))
        norms[norms == 0] = 1.0
        out[np.array(live)] = sums / norms[:, None]

    def vector(self, text: str):
        return self.embed([text])[0]


def _read_blob(path):
    """The value of a semantic store file (a memo file, ``ctxtools.memofile``), or None."""
    from ctxtools.memofile import load

    return load(path, STORE_KIND).value


def _write_blob(path, data) -> None:
    """Write DATA to a store file; a store that cannot be written is no error (what it
    would have kept is computed again)."""
    from ctxtools.memofile import save

    save(path, STORE_KIND, data)


def cosines(query, matrix) -> list[float]:
    """The cosine of the unit vector QUERY with each unit row of MATRIX, rounded; computed
    as an elementwise product and a row sum (no BLAS, one fixed order)."""
    import numpy as np

    out: list[float] = []
    for lo in range(0, len(matrix), COSINE_ROWS):  # (each row's sum is its own: in blocks)
        sims = np.add.reduce(matrix[lo : lo + COSINE_ROWS] * query[None, :], axis=1)
        out.extend(round(float(s), DIGITS) for s in sims)
    return out


def to_bytes(vec) -> bytes:
    """A vector as float32 bytes (what the caches keep)."""
    import numpy as np

    return np.asarray(vec, dtype="<f4").tobytes()


def from_bytes(raw: bytes):
    import numpy as np

    return np.frombuffer(raw, dtype="<f4")


def enabled() -> bool:
    """Whether the semantic signal may be used: CTX_SEMANTIC=0 (or off, no, false) turns
    it off for a run (the benchmarks' A/B), anything else leaves it on when installed."""
    from ctxtools.config import switched_on

    return switched_on("CTX_SEMANTIC")


def prose(text: str) -> str:
    """The words of TEXT that carry meaning, as written, space-separated: the analyzer's
    tokens less its stop words ("how", "do", "where", "the"). A static model's mean is
    pulled toward the function words every text shares; without them, on the memory
    sets' questions, the semantic score alone ranked an answering section in the top 3
    for 0.823 of Django's (0.785 with them) and 0.731 of libuv's (0.692)."""
    from ctxtools.analyzer.tokenizer import tokens

    return " ".join(m.group() for m in tokens(text[: MAX_CHARS * 2]))


# --- the engine's semantic signal (``retrieval.rank.rank_sources`` calls ``rerank``) ------

RERANK_DOCS = 60  # the best files by words whose chunks are embedded and compared


def prose_only(query) -> bool:
    """A task of plain words (``Query.plain``): where a task names code, a path, a frame
    or a message, those are the evidence; a paraphrase has nothing else. (A word read as
    a name only because a sentence's full stop follows it does not count: widened so on
    dev + tune, 2 of 76 tasks more are prose only, one rose -- hugo 06faee5, 32k 0 ->
    0.50 -- none fell.)"""
    return query.plain


def chunk_text(label: str, lines: list[str], start: int, end: int) -> str:
    """A chunk as it is stored: its path, then its lines (the first ones); ``prose`` of it
    is what is embedded (computed for new content only)."""
    body = []
    size = 0
    for line in lines[start - 1 : end]:
        body.append(line)
        size += len(line) + 1
        if size > MAX_CHARS * 2:
            break
    return label + "\n" + "\n".join(body)


def _embedded(text: str) -> str:
    """``prose`` of a ``chunk_text``: its path's words (less the extension), its lines'."""
    import posixpath

    label, _, body = text.partition("\n")
    stem = posixpath.splitext(label)[0].replace("/", " ").replace("_", " ")
    return prose(stem + "\n" + body)


class VectorStore:
    """Vectors by the xxh3-64 of the text embedded, in one file of the store
    (``<store>/semantic/<model>-v1.bin``, a memo file of {key: float16 bytes}); read once,
    written once when it grew. Unchanged
    content is never embedded twice; a damaged or unreadable file is an empty store."""

    def __init__(self, root, model_name: str):
        from pathlib import Path

        self.path = Path(root) / STORE_DIR / f"{model_name}-v1.bin" if root else None
        self.vecs: dict[str, bytes] = {}
        self.new = 0
        data = _read_blob(self.path) if self.path is not None else None
        if isinstance(data, dict):
            self.vecs = data

    def vectors(self, model: Model, texts: list[str], prepare=_embedded):
        """The unit vectors of TEXTS (float32 rows), from the store (by the hash of the
        text) or embedded now (PREPARE of it)."""
        return self.rows(self.embed(model, texts, prepare))[:]

    def embed(self, model: Model, texts: list[str], prepare=_embedded) -> list[str]:
        """The keys of TEXTS' vectors, those the store lacks embedded now (PREPARE of
        each text)."""
        import numpy as np
        import xxhash

        keys = [xxhash.xxh3_64_hexdigest(t.encode("utf-8", "surrogatepass")) for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self.vecs}
        todo = sorted(missing.items())
        del missing
        for lo in range(0, len(todo), SPLIT_TEXTS):  # (prepared a group at a time)
            some = todo[lo : lo + SPLIT_TEXTS]
            fresh = model.embed([prepare(t) for _k, t in some])
            for (k, _t), v in zip(some, fresh, strict=True):
                self.vecs[k] = np.asarray(v, dtype="<f2").tobytes()
        self.new += len(todo)
        return keys

    def rows(self, keys: list[str]) -> _Rows:
        """KEYS' vectors as float32 rows, made a slice at a time (``cosines`` takes them
        in blocks: the whole matrix, 1 KB a chunk, is never held at once)."""
        return _Rows(self.vecs, keys)

    def save(self) -> None:
        if self.path is None or not self.new:
            return
        items = list(self.vecs.items())[-STORE_MAX:]
        _write_blob(self.path, dict(items))


class _Rows:
    """Vectors kept as float16 bytes, seen as a float32 matrix whose slices are made when
    asked for (the same values as the whole matrix's rows)."""

    def __init__(self, vecs: dict[str, bytes], keys: list[str]):
        self.vecs = vecs
        self.keys = keys

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, part: slice):
        import numpy as np

        keys = self.keys[part]
        out = np.zeros((len(keys), DIM), dtype=np.float32)
        for i, k in enumerate(keys):
            out[i] = np.frombuffer(self.vecs[k], dtype="<f2")
        return out


def rerank(ranking, weight: float, task: str | None = None, store=None) -> str | None:
    """Add each read chunk's semantic part to its score, and its file's best to the
    file's, when the task is prose only: WEIGHT x the best term weight x (the chunk's
    cosine with the task - the median cosine of the chunks compared), when positive; the
    files are sorted again; the vectors are kept under ``store_root(STORE)``. Returns a
    note when the extra is missing (None otherwise)."""
    query = ranking.query
    if not weight or not prose_only(query) or not enabled() or not query.words:
        return None
    docs = [d for d in ranking.docs if d.score > 0 and d.chunks][:RERANK_DOCS]
    if len(docs) < 2:  # one file: no order among files to change, and no model to load
        return None
    model = load()
    if model is None:
        return MISSING
    from ctxtools.config import store_root

    texts, owner = [], []
    for d in docs:
        for k, ch in enumerate(d.chunks):
            texts.append(chunk_text(d.label, d.lines, ch.start, ch.end))
            owner.append((d, k))
    try:
        root = store_root(store)
    except Exception:  # no usable store: embed without one
        root = None
    vectors = VectorStore(root, model.name)
    if root is not None:
        model.use_store(root)
    keys = vectors.embed(model, texts)
    del texts  # (the chunks' texts: a few MB, let go before the vectors are compared)
    q = model.vector(prose(task) if task else " ".join(query.words))
    cos = cosines(q, vectors.rows(keys))
    mid = sorted(cos)[len(cos) // 2]
    wmax = ranking.best_weight
    best: dict[str, tuple[float, float]] = {}
    for (d, k), c in zip(owner, cos, strict=True):
        part = weight * wmax * max(0.0, c - mid)
        if part > 0:
            d.scores[k] += d.prior * part
            if not getattr(d, "semantic", None):
                d.semantic = [0.0] * len(d.chunks)  # each chunk's semantic part, for --explain
            d.semantic[k] = d.prior * part
        if part > best.get(d.label, (0.0, 0.0))[0]:
            best[d.label] = (part, c)
    for d in docs:
        part, c = best.get(d.label, (0.0, 0.0))
        if part > 0:
            d.score += d.prior * part
            d.why.append(f"semantic +{d.prior * part:.3f} (cosine {c:.3f}, median {mid:.3f})")
    ranking.docs.sort(key=lambda d: (-d.score, d.label))
    vectors.save()
    model.save_words()
    return None
