"""The memory ranking's cascade: the sentence encoder reads only the candidate sections
(the best by TF-IDF + the static model's part, and the best by TF-IDF alone) and a sample
of the corpus for the median; the others keep their TF-IDF score. The corpus is six pages
of libuv's docs (44 sections), the candidates cut to 4 a list and the sample to 8, so
that most sections are left out."""

from __future__ import annotations

import json
import os

import pytest
from helpers import DATA

from ctxtools.memory import rank, rank_memory
from ctxtools.retrieval import encoder, semantic

LIBUV = DATA / "memory" / "libuv"
PARAPHRASE = "Turn a negative return value into a readable message"  # errors.rst's section
OTHER = "stop a repeating timer"


@pytest.fixture
def sent(monkeypatch):
    """The texts the encoder is given, in order (the task's last), with 4 candidates a list."""
    monkeypatch.setenv("CTX_SEMANTIC", "1")
    monkeypatch.setattr(rank, "CANDIDATES", 4)
    monkeypatch.setattr(rank, "SAMPLE", 8)
    texts: list[str] = []
    real = encoder.Encoder.embed

    def counting(self, batch):
        texts.extend(batch)
        return real(self, batch)

    monkeypatch.setattr(encoder.Encoder, "embed", counting)
    return texts


def lexical(tmp_path, monkeypatch, task=PARAPHRASE):
    monkeypatch.setenv("CTX_SEMANTIC", "0")
    r = rank_memory([str(LIBUV)], task, store=tmp_path / "lexical")
    monkeypatch.setenv("CTX_SEMANTIC", "1")
    return r


def key(s) -> str:
    """A section as the encoder is given it: its heading, its file name's words, its text."""
    return f"{s.chunk.heading}\n{os.path.splitext(s.chunk.file)[0].replace('/', ' ')}\n{s.text}"


def given(texts: list[str]) -> set[str]:
    return set(texts)


def sample(ranking) -> set[str]:
    """The 8 sections evenly spaced through the corpus (in file order) read for the median."""
    ordered = sorted(ranking.chunks, key=lambda s: (s.chunk.file, s.chunk.start))
    return {key(ordered[i * 44 // 8]) for i in range(8)}


def test_only_the_candidates_are_sent_to_the_encoder(tmp_path, sent, monkeypatch):
    lex = lexical(tmp_path, monkeypatch)
    r = rank_memory([str(LIBUV)], PARAPHRASE, store=tmp_path / "s")
    assert len(r.chunks) == 44 and r.semantic == encoder.NAME
    assert sent[-1] == PARAPHRASE  # the task, embedded last
    read = given(sent[:-1])
    assert len(read) == len(sent) - 1  # (each section once)
    assert sample(r) <= read and len(read - sample(r)) <= 8
    assert {key(s) for s in lex.chunks[:4]} <= read  # the 4 best by TF-IDF among them
    # the section that answers it (first by the cheap score) is read, and ranked first
    assert (r.chunks[0].chunk.file.rsplit("/", 1)[-1], r.chunks[0].chunk.heading) == (
        "errors.rst",
        "Error handling",
    )
    assert r.chunks[0].semantic > 0
    # a section not read keeps its TF-IDF score, with no semantic part
    words = {(s.chunk.file, s.chunk.start): s.score for s in lex.chunks}
    left = [s for s in r.chunks if key(s) not in read]
    assert len(left) >= 28
    for s in left:
        assert s.semantic == 0.0 and s.score == words[(s.chunk.file, s.chunk.start)]
    # only candidates gain (a sampled section that is none keeps its TF-IDF score)
    gained = [s for s in r.chunks if s.score != words[(s.chunk.file, s.chunk.start)]]
    assert 1 <= len(gained) <= 8 and {key(s) for s in gained} <= read


def test_without_the_static_model_the_candidates_are_the_best_by_words(tmp_path, sent, monkeypatch):
    lex = lexical(tmp_path, monkeypatch)
    monkeypatch.setattr(semantic, "load", lambda: None)
    r = rank_memory([str(LIBUV)], PARAPHRASE, store=tmp_path / "s")
    assert given(sent[:-1]) == {key(s) for s in lex.chunks[:4]} | sample(r)


def test_the_cascade_gives_the_same_bytes_cold_warm_and_without_a_cache(tmp_path, sent):
    def run(**kw) -> str:
        return json.dumps(rank_memory([str(LIBUV)], PARAPHRASE, **kw).as_dict())

    cold = run(store=tmp_path / "a")
    assert cold == run(store=tmp_path / "b") == run(store=tmp_path / "a")
    assert cold == run(use_cache=False)


def test_the_vectors_of_an_earlier_questions_candidates_are_kept(tmp_path, sent):
    store = tmp_path / "s"
    first = rank_memory([str(LIBUV)], PARAPHRASE, store=store)
    rank_memory([str(LIBUV)], OTHER, store=store)  # other candidates: their vectors added
    assert given(sent) - given(sent[: sent.index(PARAPHRASE)])  # (some new ones read)
    sent.clear()
    again = rank_memory([str(LIBUV)], PARAPHRASE, store=store)
    assert sent == [PARAPHRASE]  # the first question's candidates all still in the cache
    assert json.dumps(again.as_dict()) == json.dumps(first.as_dict())


def test_a_note_that_nothing_qualifies_names_the_floor_it_used(tmp_path, monkeypatch):
    # with the semantic part fused, the floor is tfidf+semantic's 0.40; the note called it
    # "tfidf", whose floor the man page gives as 0.15
    from ctxtools.excerpt.output import memory_notes

    monkeypatch.setenv("CTX_SEMANTIC", "1")
    fused = rank_memory([str(LIBUV)], "xyzzy plugh", store=tmp_path / "s")
    assert not fused.kept
    assert "no memory section qualifies (tfidf+semantic: threshold 0.400" in (
        memory_notes(fused)[-1])
    monkeypatch.setenv("CTX_SEMANTIC", "0")
    alone = rank_memory([str(LIBUV)], "xyzzy plugh", store=tmp_path / "s")
    assert "no memory section qualifies (tfidf: threshold 0.150" in memory_notes(alone)[-1]
