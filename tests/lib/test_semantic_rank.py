"""The semantic signal in ctx-pack's ranking: only for prose-only tasks, said in --explain
and JSON, cached by content in the store, the same bytes cold and warm, and a note (not an
error) when the extra is missing.

The repository is six pages of libuv's documentation (tests/data/memory/libuv, CC BY 4.0)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import DATA

from ctxtools.retrieval import semantic

PROSE = "Turn a negative return value into a readable message"


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(DATA / "memory" / "libuv", root / "docs")
    (root / "docs" / "LICENSE").unlink()
    monkeypatch.chdir(root)
    monkeypatch.setenv("CTX_SEMANTIC", "1")
    return root


def pack(script_runner, task, *extra):
    r = script_runner.run(["ctx-pack", "-q", task, "--json", *extra, "."])
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return json.loads(r.stdout), r.stderr


def semantic_rows(p) -> list[dict]:
    return [f for f in p["files"] if any(x.startswith("semantic +") for x in f.get("reasons", ()))]


def test_a_prose_task_gets_the_semantic_part_in_json_and_explain(repo, script_runner):
    p, _ = pack(script_runner, PROSE)
    rows = semantic_rows(p)
    assert rows, [f.get("reasons") for f in p["files"]]
    parts = [c["semantic"] for f in rows for c in f.get("chunk_scores", ()) if "semantic" in c]
    assert parts and any(x > 0 for x in parts) and all(x >= 0 for x in parts)
    r = script_runner.run(["ctx-pack", "-q", PROSE, "--explain", "."])
    assert r.returncode == 0 and " + semantic " in r.stderr, r.stderr


def test_the_semantic_part_changes_the_scores_and_off_is_lexical(repo, script_runner, monkeypatch):
    on, _ = pack(script_runner, PROSE)
    monkeypatch.setenv("CTX_SEMANTIC", "0")
    off, _ = pack(script_runner, PROSE)
    assert not semantic_rows(off)
    score_on = {f["path"]: f["score"] for f in on["files"]}
    score_off = {f["path"]: f["score"] for f in off["files"]}
    assert any(score_on[k] > score_off[k] for k in score_off if k in score_on)


@pytest.mark.parametrize(
    "task",
    [
        "Turn a negative return value of uv_strerror into a readable message",  # a code name
        "Turn a negative return value in docs/errors.rst into a readable message",  # a path
    ],
)
def test_a_task_with_names_or_paths_is_ranked_by_its_evidence_alone(repo, script_runner, task):
    p, _ = pack(script_runner, task)
    assert not semantic_rows(p)


@pytest.mark.parametrize(
    ("task", "plain"),
    [
        ("Verify the credentials format before saving.", True),  # a sentence's full stop
        ("Verify the format. Then save the file.", True),
        ("Verify the format before config.save runs.", False),  # a dotted name
        ("Verify the format before saving. Call saving() first.", False),  # written as code
        ("Verify the format before save_all.", False),  # code-shaped anyway
    ],
)
def test_a_word_a_full_stop_ends_does_not_make_a_task_name_code(task, plain):
    from ctxtools.analyzer import parse_query

    q = parse_query(task)
    assert semantic.prose_only(q) is plain
    if plain:  # still a name for the lexical ranking: a sentence may end in one
        assert q.trailing and set(q.trailing) <= set(q.names)


def test_a_sentence_ending_in_a_word_gets_the_semantic_part(repo, script_runner):
    p, _ = pack(script_runner, PROSE + " for the user.")
    assert semantic_rows(p)


def test_vectors_are_embedded_once_per_content_and_bytes_are_stable(
    repo, script_runner, monkeypatch
):
    embedded: list[int] = []
    real = semantic.Model.embed

    def counting(self, texts):
        embedded.append(len(texts))
        return real(self, texts)

    monkeypatch.setattr(semantic.Model, "embed", counting)
    cold, _ = pack(script_runner, PROSE)
    assert embedded[0] > 10 and embedded[-1] == 1  # the chunks, then the task
    embedded.clear()
    monkeypatch.setattr(semantic, "_loaded", [])  # a new process: the model loaded anew
    warm, _ = pack(script_runner, PROSE)
    assert embedded == [1]  # the task only: every chunk's vector came from the store
    assert semantic.load()._tokenizer is None  # and its words' token ids too
    assert json.dumps(warm) == json.dumps(cold)


def test_without_the_extra_the_pack_is_lexical_with_a_note(repo, script_runner, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec

    def no_wordllama(name, *a, **k):
        return None if name == "wordllama" else real(name, *a, **k)

    monkeypatch.setattr(semantic, "_loaded", [])
    monkeypatch.setattr(importlib.util, "find_spec", no_wordllama)
    p, err = pack(script_runner, PROSE)
    assert "semantic matching is off" in err and "pip install 'ctxtools[semantic]'" in err
    assert not semantic_rows(p)
    monkeypatch.setenv("CTX_SEMANTIC", "0")
    off, _ = pack(script_runner, PROSE)
    assert [(f["path"], f["score"]) for f in p["files"]] == [
        (f["path"], f["score"]) for f in off["files"]
    ]


def test_the_vectors_are_kept_in_the_store_the_pack_is_given(repo, script_runner, tmp_path):
    import os

    env_store = Path(os.environ["CTX_STORE"])  # (the autouse fixture's)
    given = tmp_path / "given"
    pack(script_runner, PROSE, "--store", str(given))
    assert list((given / semantic.STORE_DIR).glob(f"{semantic.MODEL}-*.bin"))
    assert not (env_store / semantic.STORE_DIR).exists()
