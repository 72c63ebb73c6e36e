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
        ("gpt-4o-2024-08-06", 128_000, "o200k_base", "name"),
        ("gpt-4-0613", 8_192, "cl100k_base", "name"),
        ("claude-sonnet-4-5", 200_000, "cl100k_base", "exact"),
        ("claude-3-opus-20240229", 200_000, "cl100k_base", "family"),
        ("gemini-2.5-pro", 1_048_576, "cl100k_base", "exact"),
        # qwen2: Qwen's own counter, which the test extra installs (tokens.local)
        ("qwen2.5-coder:7b", 32_768, "qwen2", "family"),
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


# Model ids as the providers' APIs and Ollama's library spell them, with the profile each must
# resolve to and the rule that finds it (issue 28.3: a dated or suffixed id is its model's
# profile, never a family's or the default's).
REAL_IDS = [
    # OpenAI
    ("o3-pro", "o3", "name", 200_000),
    ("o3-pro-2025-06-10", "o3", "name", 200_000),
    ("o3-mini-2025-01-31", "o3-mini", "name", 200_000),
    ("o4-mini-deep-research", "o4-mini", "name", 200_000),
    ("o1-2024-12-17", "o1", "name", 200_000),
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini", "name", 128_000),
    ("chatgpt-4o-latest", "gpt-4o", "family", 128_000),
    ("gpt-4.1-2025-04-14", "gpt-4.1", "name", 1_047_576),
    ("gpt-4-turbo-2024-04-09", "gpt-4-turbo", "name", 128_000),
    ("gpt-5-codex", "gpt-5", "name", 400_000),
    ("gpt-5-mini-2025-08-07", "gpt-5-mini", "name", 400_000),
    ("openai/gpt-4o", "gpt-4o", "name", 128_000),
    ("ft:gpt-4o-mini-2024-07-18:acme::abc123", "gpt-4o-mini", "name", 128_000),
    # Anthropic (API ids, and Bedrock's)
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "name", 200_000),
    ("claude-sonnet-4-20250514", "claude-sonnet-4", "name", 200_000),
    ("claude-opus-4-1-20250805", "claude-opus-4-1", "name", 200_000),
    ("claude-3-5-haiku-20241022", "claude-3-5-haiku", "name", 200_000),
    ("claude-3-7-sonnet-latest", "claude-3-7-sonnet", "name", 200_000),
    ("anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet", "name", 200_000),
    # Google
    ("gemini-2.5-pro-preview-06-05", "gemini-2.5-pro", "name", 1_048_576),
    ("gemini-2.5-flash-lite", "gemini-2.5-flash", "name", 1_048_576),
    ("models/gemini-2.0-flash-001", "gemini-2.0-flash", "name", 1_048_576),
    ("gemini-1.5-pro-002", "gemini-1.5-pro", "name", 2_097_152),
    # Mistral
    ("mistral-large-latest", "mistral-large", "name", 131_072),
    ("mistral-large-2411", "mistral-large", "name", 131_072),
    ("codestral-2501", "codestral", "name", 256_000),
    ("open-mistral-nemo", "mistral-nemo", "name", 131_072),
    ("mistral-small-latest", "mistral", "family", 32_768),
    # Meta
    ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3", "family", 131_072),
    ("Llama-4-Maverick-17B-128E-Instruct", "llama-4", "family", 1_048_576),
    # Ollama tags
    ("qwen3-coder:30b", "qwen3-coder", "name", 262_144),
    ("qwen3-coder:480b-a35b-q4_K_M", "qwen3-coder", "name", 262_144),
    ("qwen2.5-coder:32b-instruct-q4_K_M", "qwen2.5-coder:32b", "name", 32_768),
    ("qwen2.5-coder:7b", "qwen", "family", 32_768),
    ("llama3.1:8b", "llama3.1", "name", 131_072),
    ("llama3:latest", "llama3", "name", 8_192),
    ("llama3.2:3b", "llama3.2", "family", 131_072),
    ("deepseek-coder-v2:16b", "deepseek-coder-v2", "name", 163_840),
    ("deepseek-r1:14b", "deepseek", "family", 128_000),
    ("mistral-nemo:12b", "mistral-nemo", "name", 131_072),
    ("gemma3:27b", "gemma3", "family", 131_072),
    ("gemma2:9b", "gemma", "family", 8_192),
    ("phi4:14b", "14b", "size", 16_384),
    ("starcoder2:3b", "3b", "size", 4_096),
    # a dot after a name is a later version, not the same model
    ("gpt-4.5-preview", "gpt-4", "family", 8_192),
    ("some-unknown-model", "default", "default", 16_384),
]


@pytest.mark.parametrize(("model", "matched", "matched_by", "limit"), REAL_IDS)
def test_real_model_ids_resolve_to_their_profile(model, matched, matched_by, limit):
    p = profiles.resolve(model)
    assert (p.matched, p.matched_by, p.context_limit) == (matched, matched_by, limit)


def test_the_longest_profile_name_wins_over_a_shorter_one_and_a_family():
    table = profiles.load_profiles()
    # o3 and o3-mini are both in "o3-mini-high"; claude-sonnet-4 and -4-5 in the dated id
    assert profiles.resolve("o3-mini-high", table).matched == "o3-mini"
    assert profiles.resolve("claude-sonnet-4-5-20250929", table).matched == "claude-sonnet-4-5"
    # a profile name inside another word is not that profile
    assert profiles.resolve("gpt-4ox", table).matched_by == "family"
    assert profiles.resolve("pro3-x", table).matched_by == "default"


def test_describe_match_names_the_rule():
    said = {m: profiles.describe_match(profiles.resolve(m)) for m in REAL_IDS_SAID}
    assert said == REAL_IDS_SAID


REAL_IDS_SAID = {
    "o3": "the profile o3",
    "o3-pro": "the profile o3 (the longest profile name in the model name)",
    "qwen2.5-coder:7b": "the family qwen (no profile name in the model name)",
    "phi4:14b": "the size bucket 14b (no profile or family name matched)",
    "x": "the default profile (no profile, family or size matched)",
}


def test_openai_models_are_exact_and_others_approximate():
    assert not profiles.resolve("gpt-4o").approximate
    for model in ("claude-sonnet-4", "gemini-2.5-flash", "llama3.1:8b", "deepseek-chat"):
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
    with pytest.raises(InputError, match="context_limit must be a whole number from 1 to"):
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
        ("placeholder", 100),
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


@pytest.mark.parametrize(
    ("model", "limit", "max_output", "max_turns"),
    [
        ("starcoder2:1.5b", 4_096, 1_536, 12),
        ("phi:3b", 4_096, 1_792, 14),
        ("granite-code:7b", 8_192, 2_048, 16),
        ("granite-code:14b", 16_384, 4_096, 20),
        ("granite-code:32b", 32_768, 4_096, 24),
        ("some-unknown-model", 16_384, 3_072, 20),
        ("qwen2.5-coder:7b", 32_768, 3_072, 24),
    ],
)
def test_bucket_output_and_turn_limits(model, limit, max_output, max_turns):
    """The seed's table (002): max output tokens and max turns of the size buckets."""
    p = profiles.resolve(model)
    assert (p.context_limit, p.max_output, p.max_turns) == (limit, max_output, max_turns)


def test_listing_shows_bucket_limits_and_turns():
    rows = {r["name"]: r for r in profiles.list_profiles()}
    assert [(rows[b]["max_output"], rows[b]["max_turns"]) for b in ("1.5b", "3b", "7b")] == [
        (1_536, 12),
        (1_792, 14),
        (2_048, 16),
    ]
    assert rows["default"]["max_turns"] == 20 and rows["default"]["max_output"] == 3_072
    assert rows["gpt-4o"]["max_turns"] is None  # vendors publish no turn limit


def test_user_file_bucket_as_a_table_or_a_window(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text('[sizes."7b"]\nmax_turns = 30\n[sizes]\n"70b" = 65536\n')
    table = profiles.load_profiles(f)
    p = profiles.resolve("house:7b", table)
    assert (p.context_limit, p.max_output, p.max_turns) == (8_192, 2_048, 30)  # merged
    p = profiles.resolve("house:70b", table)
    assert (p.context_limit, p.max_output, p.max_turns) == (65_536, 3_072, 20)  # from default
    bad = tmp_path / "bad.toml"
    bad.write_text('[sizes."9b"]\nmax_turns = 3\n')
    with pytest.raises(InputError, match="sizes.9b: needs context_limit"):
        profiles.load_profiles(bad)


def test_role_share_overrides_beat_the_table():
    assert profiles.pack_budget(100_000, "reviewer", role_shares={"reviewer": 95}).role_share == 95
    assert profiles.pack_budget(100_000, "Reviewer", role_shares={"docs": 10}).role_share == 85
    assert profiles.pack_budget(100_000, "poet", role_shares={"poet": 40}).role_share == 40
    # the positional call of ctx-pack keeps working
    assert profiles.pack_budget(100_000, "reviewer").role_share == 85


def test_roles_table_in_the_user_file(tmp_path):
    f = tmp_path / "roles.toml"
    f.write_text("[roles]\nreviewer = 95\nPoet = 40\n")
    table = profiles.load_profiles(f)
    shares = profiles.effective_role_shares(table)
    assert shares["reviewer"] == 95 and shares["poet"] == 40 and shares["worker"] == 100
    # --role-share beats the file
    assert profiles.effective_role_shares(table, {"reviewer": 60})["reviewer"] == 60
    b = profiles.pack_budget(32_768, "reviewer", role_shares=shares)
    assert b.available == b.before_share * 95 // 100


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[roles]\nreviewer = 0\n", "roles.reviewer must be a whole percent from 1 to 100"),
        ("[roles]\nreviewer = 101\n", "roles.reviewer must be a whole percent from 1 to 100"),
        ("[roles]\nreviewer = 85.5\n", "roles.reviewer must be a whole percent from 1 to 100"),
        ("[roles]\nreviewer = true\n", "roles.reviewer must be a whole percent from 1 to 100"),
        ('[roles]\n"a b" = 50\n', "roles.a b: not a role name"),
        ('roles = "all"\n', "[roles] must be a table"),
    ],
)
def test_bad_roles_tables(tmp_path, body, message):
    f = tmp_path / "roles.toml"
    f.write_text(body)
    with pytest.raises(InputError) as err:
        profiles.load_profiles(f)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("text", "pair"),
    [("reviewer=90", ("reviewer", 90)), (" Tester = 100% ", ("tester", 100)), ("x=1", ("x", 1))],
)
def test_parse_role_share(text, pair):
    assert profiles.parse_role_share(text) == pair


@pytest.mark.parametrize(
    "text", ["reviewer", "reviewer=", "=50", "reviewer=0", "reviewer=101", "r=5.5", "r=-3", "r=٣"]
)
def test_parse_role_share_refuses(text):
    with pytest.raises(UsageError):
        profiles.parse_role_share(text)


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ("gpt4o", "note: no profile for 'gpt4o' (closest: gpt-4o, gpt-4); using the default "
                  "profile (16,384 tokens)"),
        ("zzqx", "note: no profile for 'zzqx'; using the default profile (16,384 tokens)"),
        ("gpt-4o", None),  # a profile
        ("openai/gpt-4o-2024-08-06", None),  # a profile's name in it
    ],
)
def test_a_model_no_profile_matched_is_said_with_the_closest_names(model, said):
    table = profiles.load_profiles()
    assert profiles.unknown_model_note(model, profiles.resolve(model, table), table) == said


def test_a_size_bucket_is_said_as_the_profile_used(tmp_path):
    user = tmp_path / "p.toml"
    user.write_text("[sizes.7b]\ncontext_limit = 12000\n")
    table = profiles.load_profiles(user)
    prof = profiles.resolve("someones-7b-chat", table)
    assert prof.matched_by == "size"
    assert profiles.unknown_model_note("someones-7b-chat", prof, table) == (
        "note: no profile for 'someones-7b-chat'; using the 7b profile (12,000 tokens)"
    )


def test_the_mcp_compact_tool_says_it_too(tmp_path):
    import json

    from ctxtools.mcp.code import compact
    from ctxtools.mcp.env import Env
    from ctxtools.mcp.roots import Roots

    env = Env.make(tmp_path / "store", "s", Roots([str(tmp_path)]))
    args = {"transcript": [{"role": "user", "content": "fix the bug"}], "model": "gpt4o",
            "limit": None, "format": None, "force": False, "at": None, "keep_recent": None,
            "repair": False}
    notes = json.loads(compact(env, args).text)["notes"]
    assert notes[0].startswith("note: no profile for 'gpt4o' (closest: gpt-4o")
    assert json.loads(compact(env, {**args, "model": "gpt-4o"}).text)["notes"] == []
