"""Model profiles: resolution order, user overrides, and the pack budget arithmetic."""

from __future__ import annotations

import pytest

from ctxtools import profiles
from ctxtools.errors import InputError, NotFoundError, UsageError


@pytest.mark.parametrize(
    ("model", "limit", "encoding", "matched_by"),
    [
        ("gpt-4o", 128_000, "o200k_base", "exact"),
        ("GPT-4o", 128_000, "o200k_base", "exact"),
        ("gpt-4o-2024-08-06", 128_000, "o200k_base", "family"),
        ("gpt-4-0613", 8_192, "cl100k_base", "family"),
        ("claude-sonnet-4-5", 200_000, "cl100k_base", "exact"),
        ("claude-3-opus-20240229", 200_000, "cl100k_base", "family"),
        ("gemini-2.5-pro", 1_048_576, "cl100k_base", "exact"),
        ("qwen2.5-coder:7b", 32_768, "cl100k_base", "family"),
        ("deepseek-chat", 128_000, "cl100k_base", "exact"),
        ("meta-llama/Llama-3.1-8B-Instruct", 131_072, "cl100k_base", "family"),
        ("mistral-large", 131_072, "cl100k_base", "exact"),
        ("starcoder2:1.5b", 4_096, "cl100k_base", "size"),
        ("phi:3b", 4_096, "cl100k_base", "size"),
        ("granite-code:7b", 8_192, "cl100k_base", "size"),
        ("granite-code:14b", 16_384, "cl100k_base", "size"),
        ("granite-code:32b", 32_768, "cl100k_base", "size"),
        ("some-unknown-model", 16_384, "cl100k_base", "default"),
    ],
)
def test_resolution_order(model, limit, encoding, matched_by):
    p = profiles.resolve(model)
    assert (p.context_limit, p.encoding, p.matched_by) == (limit, encoding, matched_by)


def test_openai_models_are_exact_and_others_approximate():
    assert not profiles.resolve("gpt-4o").approximate
    for model in ("claude-sonnet-4", "gemini-2.5-flash", "qwen3-coder", "deepseek-chat"):
        assert profiles.resolve(model).approximate, model


def test_user_file_overrides_and_extends(tmp_path, monkeypatch):
    f = tmp_path / "mine.toml"
    f.write_text(
        '[models."gpt-4o"]\ncontext_limit = 64000\n'
        '[models."house-model"]\ncontext_limit = 50000\nmax_output = 1000\n'
        '[families."house"]\ncontext_limit = 7000\n'
        '[sizes]\n"7b" = 6000\n'
    )
    table = profiles.load_profiles(f)
    assert profiles.resolve("gpt-4o", table).context_limit == 64_000
    assert profiles.resolve("gpt-4o", table).encoding == "o200k_base"  # merged, not replaced
    assert profiles.resolve("house-model", table).max_output == 1000
    assert profiles.resolve("my-house-v2", table).context_limit == 7000
    assert profiles.resolve("other:7b", table).context_limit == 6000
    monkeypatch.setenv("CTX_PROFILES", str(f))
    assert profiles.resolve("house-model").context_limit == 50_000


def test_bad_user_files(tmp_path):
    with pytest.raises(NotFoundError):
        profiles.load_profiles(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[models\n")
    with pytest.raises(InputError, match="not a valid TOML"):
        profiles.load_profiles(bad)
    neg = tmp_path / "neg.toml"
    neg.write_text('[models."x"]\ncontext_limit = -5\n')
    with pytest.raises(InputError, match="positive integer"):
        profiles.load_profiles(neg)


def test_budget_terms_follow_the_design():
    b = profiles.pack_budget(32_768, "reviewer")
    assert b.slack == 3_277  # 10% rounded up
    assert b.before_share == 32_768 - 500 - 900 - 2_048 - 3_277
    assert b.available == b.before_share * 85 // 100 == 22_136
    assert not b.floored


@pytest.mark.parametrize(
    ("role", "share"),
    [
        ("worker", 100),
        ("corrector", 100),
        ("deep", 100),
        ("reviewer", 85),
        ("tester", 85),
        ("architect", 70),
        ("planner", 70),
        ("splitter", 70),
        ("explorer", 60),
        ("context", 60),
        ("docs", 60),
        ("coordinator", 50),
        ("memory", 50),
        ("poet", 75),
    ],
)
def test_role_shares(role, share):
    assert profiles.pack_budget(100_000, role).role_share == share


def test_budget_floor_and_bad_values():
    small = profiles.pack_budget(4_096, "coordinator")
    assert small.computed < 512 and small.available == 512 and small.floored
    with pytest.raises(UsageError):
        profiles.pack_budget(0)
    with pytest.raises(UsageError):
        profiles.pack_budget(1000, slack_percent=100)


def test_usage_status_thresholds():
    assert profiles.usage_status(79.9) == "ok"
    assert profiles.usage_status(80) == "warn"
    assert profiles.usage_status(90) == "compact"


def test_listing_is_sorted_and_complete():
    rows = profiles.list_profiles()
    names = [r["name"] for r in rows if r["kind"] == "model"]
    assert names == sorted(names)
    assert {"gpt-4o", "claude-sonnet-4", "gemini-2.5-pro", "deepseek-chat"} <= set(names)
    assert rows[-1]["kind"] == "default"
    with pytest.raises(UsageError):
        profiles.resolve("   ")
