"""Library tests of ctxtools.pack.request: a PackRequest from ctx-pack's options."""

from __future__ import annotations

import pytest

from ctxtools import defaults
from ctxtools.errors import UsageError
from ctxtools.pack import PackRequest
from ctxtools.pack.model import Pack
from ctxtools.pack.request import (
    output_format,
    pack_messages,
    request_from_options,
    ruler_encoding,
)


def _options(*argv: str) -> dict:
    """ctx-pack's options as its click command parses ARGV."""
    from ctxtools.cli.pack import cli

    return cli.make_context("ctx-pack", list(argv)).params


def test_output_format_json_is_format_json():
    assert output_format("markdown", False) == "markdown"
    assert output_format("xml", False) == "xml"
    assert output_format("markdown", True) == "json"
    assert output_format("json", True) == "json"
    with pytest.raises(UsageError) as exc:
        output_format("xml", True)
    assert str(exc.value) == "--json and --format xml contradict each other"
    assert exc.value.exit_status == 2


def test_request_from_default_options_is_the_default_request(monkeypatch):
    monkeypatch.delenv("CTX_STORE", raising=False)
    req = request_from_options(_options(), task="fix it", paths=[], retrieval=None)
    assert req == PackRequest(task="fix it", paths=[], session=defaults.SESSION)


def test_request_from_options_maps_the_renamed_ones():
    opts = _options(
        *("--limit", "32000", "--no-map", "--json", "--role", "reviewer"),
        *("--role-share", "reviewer=90", "--role-share", "tester=50"),
        *("--role-share", "reviewer=95", "--pin-skill", "deploy"),
        *("--memory", "MEMORY.md", "--min-score", "0.3"),
    )
    req = request_from_options(opts, task="t", paths=["src/a.py"], retrieval="hashing")
    assert req.context_limit == 32_000
    assert req.use_map is False
    assert req.fmt == "json"
    assert req.role_shares == {"reviewer": 95, "tester": 50}  # the last for a role wins
    assert (req.pin_skills, req.memory, req.min_score) == (("deploy",), ("MEMORY.md",), 0.3)
    assert (req.paths, req.retrieval, req.role) == (["src/a.py"], "hashing", "reviewer")


def test_ruler_encoding_explicit_beats_the_model_and_another_counter_beats_both(tmp_path):
    assert ruler_encoding(None, None, counter_chosen=False, profiles_file=None) is None
    assert ruler_encoding("gpt-4o", None, counter_chosen=False, profiles_file=None) == "o200k_base"
    assert ruler_encoding("gpt-4", None, counter_chosen=False, profiles_file=None) == "cl100k_base"
    given = ruler_encoding("gpt-4o", "cl100k_base", counter_chosen=False, profiles_file=None)
    assert given == "cl100k_base"
    assert ruler_encoding("gpt-4o", None, counter_chosen=True, profiles_file=None) is None
    mine = tmp_path / "mine.toml"
    mine.write_text('[models."house-model"]\ncontext_limit = 50000\nencoding = "o200k_base"\n')
    house = ruler_encoding("house-model", None, counter_chosen=False, profiles_file=str(mine))
    assert house == "o200k_base"


def test_ruler_encoding_with_a_bad_profiles_file_is_an_error(tmp_path):
    from ctxtools.errors import CtxError

    bad = tmp_path / "bad.toml"
    bad.write_text("[models\n")
    with pytest.raises(CtxError) as exc:
        ruler_encoding("gpt-4o", None, counter_chosen=False, profiles_file=str(bad))
    assert exc.value.exit_status == 1
    # no model, or an encoding given: the file is not read at all
    assert ruler_encoding(None, None, counter_chosen=False, profiles_file=str(bad)) is None


def test_pack_messages_are_the_notes_then_the_redactions():
    pack = Pack.__new__(Pack)
    pack.notes = ["note: one", "skipped .env (a secret file)"]
    pack.redactions = [{"kind": "aws-key", "where": "src/a.py", "line": 3}]
    assert pack_messages(pack) == [
        "note: one",
        "skipped .env (a secret file)",
        "redacted aws-key in src/a.py line 3",
    ]


def test_short_t_places_a_number_as_the_budget_and_text_as_the_old_task():
    from ctxtools.pack.request import short_t

    assert short_t(None, "fix it", None) == ("fix it", False)
    assert short_t("2000", "fix it", None) == ("fix it", True)
    assert short_t("fix the parser", None, None) == ("fix the parser", False)
    for value, task, tokens, said in (
        ("2000", None, None, "-t 2000 is ambiguous"),
        ("fix", "the task", None, "-t 'fix': -t is --tokens"),
        ("2000", "fix it", 3000, "-t and --tokens both give the budget"),
    ):
        with pytest.raises(UsageError) as exc:
            short_t(value, task, tokens)
        assert said in str(exc.value) and exc.value.exit_status == 2


def test_check_options_refuses_split_with_xml_or_copy_and_notes_tokens_with_model():
    from ctxtools.pack.request import check_options

    opts = {"split": None, "copy": False, "tokens": None, "model": None, "limit": None}
    assert check_options(opts, "markdown") == []
    assert check_options({**opts, "tokens": 900, "model": "gpt-4o"}, "markdown") == [
        "note: --tokens gives the whole budget; --model/--limit only choose the ruler"
    ]
    for more, fmt in (({"split": 500}, "xml"), ({"split": 500, "copy": True}, "markdown")):
        with pytest.raises(UsageError):
            check_options({**opts, **more}, fmt)
