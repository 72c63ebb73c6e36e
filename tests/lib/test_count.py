"""Library tests of ctxtools.count.report: what ctx-count reports, without the command line."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ctxtools import profiles
from ctxtools.count import report
from ctxtools.errors import InputError
from ctxtools.tokens import get_ruler

DATA = Path(__file__).resolve().parents[1] / "data"
HEURISTIC = get_ruler(heuristic=True).ruler
CL100K = get_ruler(encoding="cl100k_base").ruler


def _row(label, tokens, **extra):
    return (
        label,
        {"tokens": tokens, "chars": tokens * 4, "lines": 1, "bytes": tokens * 4, **extra},
    )


def test_format_counts_one_input_is_the_bare_number_several_are_wc_lines():
    assert report.format_counts([("-", 42)], 42, 1) == "42\n"
    assert report.format_counts([("a.py", 5), ("bb.md", 1234)], 1239, 2) == (
        "   5 a.py\n1234 bb.md\n1239 total\n"
    )
    # one input left of two named (the other missing, --keep-going): still the wc form
    assert report.format_counts([("a", 7)], 7, 2) == "7 a\n7 total\n"


def test_total_adds_up_and_gives_each_reason_once():
    rows = [
        _row("a", 3),
        _row("b", 4, exact=False, note="block 2 counted by the heuristic"),
        _row("c", 5, exact=False, note="block 2 counted by the heuristic"),
        _row("d", 6, exact=False, note="tokenizer fell back"),
    ]
    tot, notes = report.total(rows)
    assert tot == {
        "tokens": 18,
        "chars": 72,
        "lines": 4,
        "bytes": 72,
        "exact": False,
        "note": "block 2 counted by the heuristic; tokenizer fell back",
    }
    assert notes == ["block 2 counted by the heuristic", "tokenizer fell back"]
    assert report.total([_row("a", 1)]) == (
        {"tokens": 1, "chars": 4, "lines": 1, "bytes": 4},
        [],
    )


def test_sort_rows_heaviest_first_ties_by_name():
    rows = [_row("b", 2), _row("a", 2), _row("c", 9)]
    report.sort_rows(rows, "tokens")
    assert [r[0] for r in rows] == ["c", "a", "b"]
    report.sort_rows(rows, "name")
    assert [r[0] for r in rows] == ["a", "b", "c"]
    report.sort_rows(rows, None)
    assert [r[0] for r in rows] == ["a", "b", "c"]


def test_usage_with_a_limit_and_with_a_model():
    assert report.usage(10, None, None, CL100K) is None
    use = report.usage(850, None, 1000, CL100K)
    assert use == {
        "model": "limit 1,000",
        "context_limit": 1000,
        "tokens": 850,
        "percent": 85.0,
        "status": "warn",
        "approximate": False,
        "matched_by": "limit",
    }
    claude = profiles.resolve("claude-sonnet-4")
    use = report.usage(1000, claude, None, CL100K)
    assert use["context_limit"] == claude.context_limit
    assert use["approximate"] is True  # cl100k is not Claude's tokenizer
    assert report.usage(10, profiles.resolve("gpt-4o"), 50, HEURISTIC)["approximate"] is True


def test_usage_warnings_name_the_remedy():
    use = report.usage(950, None, 1000, HEURISTIC)
    assert report.usage_warnings(use, "heuristic") == [
        "note: counts for limit 1,000 are approximate (heuristic is not its tokenizer; "
        "--tokenizer gives exact counts)",
        "warning: 95.0% of the window used",
    ]
    assert report.usage_warnings(use, "heuristic", messages=True)[1] == (
        "warning: 95.0% of the window used: compact now (ctx-compact)"
    )
    soon = report.usage(850, None, 1000, CL100K)
    assert report.usage_warnings(soon, "cl100k_base") == ["warning: 85.0% of the window used"]
    assert report.usage_warnings(soon, "cl100k_base", messages=True) == [
        "warning: 85.0% of the window used: compact soon (ctx-compact)"
    ]
    assert report.usage_warnings(report.usage(10, None, 1000, CL100K), "cl100k_base") == []
    assert report.usage_line(report.usage(1234, None, 200_000, CL100K)) == (
        "1,234 tokens · 0.6% of 200,000 (limit 200,000)\n"
    )


def test_over_limits_single_and_several_inputs():
    use = report.usage(900, None, 1000, CL100K)
    assert report.over_limits([], use, fail_over=89.5, fail_above=None, single=True) == [
        "usage 90.0% is over the limit of 89.5%"
    ]
    assert report.over_limits([], use, fail_over=90, fail_above=None, single=True) == []
    rows = [_row(f"f{i:02}", 100 + i) for i in range(12)] + [_row("small", 5)]
    assert report.over_limits(rows[:1], None, fail_over=None, fail_above=50, single=True) == [
        "f00: 100 tokens, over the limit of 50 (--fail-above)"
    ]
    stdin = [_row("-", 100)]
    assert report.over_limits(stdin, None, fail_over=None, fail_above=50, single=True) == [
        "100 tokens, over the limit of 50 (--fail-above)"
    ]
    (msg,) = report.over_limits(rows, None, fail_over=None, fail_above=50, single=False)
    assert msg.startswith("12 of 13 inputs over 50 tokens: f00 (100), f01 (101), ")
    assert msg.endswith("f09 (109) and 2 more")
    assert report.over_limits(rows, None, fail_over=None, fail_above=5000, single=False) == []


def test_count_document_marks_inexact_and_lists_missing():
    rows = [_row("a\udcff.py", 3)]
    tot, _ = report.total(rows)
    doc = report.count_document(CL100K.describe(), rows, tot, None, ["gone.txt"], False)
    assert doc["counted"] == "text" and doc["exact"] is True
    assert doc["files"][0]["path"] == "a\ufffd.py"  # undecodable bytes of a name: U+FFFD
    assert doc["missing"] == ["gone.txt"]
    assert "usage" not in doc
    use = report.usage(3, profiles.resolve("claude-sonnet-4"), None, CL100K)
    doc = report.count_document(CL100K.describe(), rows, tot, use, [], True)
    assert doc["exact"] is False and doc["counted"] == "messages" and "missing" not in doc


def _transcript() -> bytes:
    spec = importlib.util.spec_from_file_location(
        "convert_openhands", DATA / "compact" / "convert_openhands.py"
    )
    convert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(convert)
    run = next(
        iter(convert.runs_from_jsonl(DATA / "compact" / "openhands-multi-swe-bench-output.jsonl"))
    )
    return json.dumps(convert.to_openai(run)[:6], ensure_ascii=False).encode()


def test_transcript_counts_a_real_run_and_names_the_file_when_it_is_not_one():
    from ctxtools.count.messages import count_transcript

    data = _transcript()
    counts = report.transcript_counts(data, CL100K, "run.json")
    assert counts["tokens"] == count_transcript(data, CL100K).tokens
    assert (counts["messages"], counts["format"], counts["bytes"]) == (6, "openai", len(data))
    assert counts["lines"] == data.count(b"\n") + 1
    with pytest.raises(InputError) as exc:
        report.transcript_counts(b"just text\n", CL100K, "notes.txt")
    assert exc.value.message.startswith("notes.txt: ")
    assert exc.value.exit_status == 1
    with pytest.raises(InputError) as exc:
        report.transcript_counts(b"just text\n", CL100K, None)  # stdin: no name
    assert not exc.value.message.startswith(": ")


def test_unreadable_names_each_bad_path_once(tmp_path):
    ok = tmp_path / "ok.txt"
    ok.write_text("x")
    bad = report.unreadable(
        [str(ok), None, str(tmp_path / "gone"), str(tmp_path / "gone"), str(tmp_path)]
    )
    assert list(bad) == [str(tmp_path / "gone"), str(tmp_path)]


def test_budget_defaults_to_the_default_profile_and_renders_as_a_subtraction():
    table = profiles.load_profiles()
    b, prof = report.budget(None, None, table, role=None, role_shares={})
    assert prof.name == profiles.resolve("default", table).name
    assert b.available == profiles.pack_budget(prof.context_limit).available
    b, prof = report.budget(None, 32_768, table, role="reviewer", role_shares={"reviewer": 90})
    assert prof is None and b.role_share == 90
    text = report.render_budget(b, None)
    width = len("role share (reviewer)")  # the longest term: the values line up after it
    assert text.splitlines()[0] == "model".ljust(width) + "  (none)"
    assert "role share (reviewer)  × 90%\n" in text
    assert report.budget_document(b, None)["matched_by"] == "limit"


def test_render_profiles_is_a_table_of_every_profile():
    rows = profiles.list_profiles(profiles.load_profiles())
    lines = report.render_profiles(rows).splitlines()
    assert lines[0].split() == ["name", "kind", "context", "output", "turns", "encoding"]
    assert len(lines) == len(rows) + 1
    assert all(len(line.split()) >= 6 for line in lines[1:])


def test_report_sorts_totals_and_shows_the_usage_line():
    rows = [_row("b.md", 300), _row("a.md", 700, exact=False, note="heuristic block")]
    rep = report.Report(rows, profile=None, limit=1000, ruler=CL100K, sort="name")
    assert [label for label, _ in rep.rows] == ["a.md", "b.md"]
    assert rep.not_exact == ["heuristic block"]
    assert (
        rep.text(2)
        == " 700 a.md\n 300 b.md\n1000 total\n1,000 tokens · 100.0% of 1,000 (limit 1,000)\n"
    )
    assert rep.warnings("cl100k_base") == ["warning: 100.0% of the window used"]
    assert rep.over_limits(fail_over=99, fail_above=None, single=False) == [
        "usage 100.0% is over the limit of 99%"
    ]
    doc = rep.document(CL100K.describe(), [], False)
    assert doc["exact"] is False and doc["total"]["tokens"] == 1000
    plain = report.Report([_row("-", 3)], profile=None, limit=None, ruler=CL100K)
    assert (plain.text(1), plain.warnings("cl100k_base"), plain.usage) == ("3\n", [], None)


# --- --messages on JSON Lines: counted a line at a time (issue 27, item 13) ---------------

_OPENAI_TOOLS = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "list the files"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "a.py\nb.py"},
    {"role": "assistant", "content": "two files: a.py and b.py é ✓"},
    {"role": "user", "content": "list the files"},  # a repeat: counted once, twice over
]
_ANTHROPIC = [
    {"role": "user", "content": "read it"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {"p": 1}}],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
]


def _jsonl(messages, sep=b"\n") -> bytes:
    return b"".join(json.dumps(m, ensure_ascii=False).encode() + sep for m in messages)


def _both(data: bytes, monkeypatch, ruler=CL100K):
    """(whole, streamed): the counts or the error line of DATA read whole, as before, and
    a line at a time (the head that decides is made small, so that DATA is JSON Lines)."""
    import io

    from ctxtools import jsonbound

    def error(problem):
        return InputError(f"head: {problem.msg}")

    out = []
    for streamed in (False, True):
        with monkeypatch.context() as m:
            if streamed:
                m.setattr(jsonbound, "JSON_SNIFF_BYTES", 120)
            try:
                if streamed:
                    got = report.transcript_counts_of(
                        io.BytesIO(data), ruler, "t.jsonl", "t.jsonl", error
                    )
                else:
                    got = report.transcript_counts(data, ruler, "t.jsonl")
            except InputError as exc:
                got = exc.line("ctx-count")
        out.append(got)
    return out


@pytest.mark.parametrize(
    "data",
    [
        _jsonl(_OPENAI_TOOLS),
        _jsonl(_ANTHROPIC * 40),
        _jsonl(_OPENAI_TOOLS, b"\r\n"),
        b"\xef\xbb\xbf" + _jsonl(_OPENAI_TOOLS),  # a BOM
        _jsonl(_OPENAI_TOOLS).replace(b"\n", b"\n\n  \n", 3),  # blank lines
        _jsonl(_OPENAI_TOOLS)[:-1],  # no newline at the end
        _jsonl(_OPENAI_TOOLS * 700),  # more than one batch of messages
        json.dumps({"role": "user", "content": "x" * 200}).encode() + b"\n\n \n",  # one message
    ],
    ids=["openai", "anthropic", "crlf", "bom", "blank", "no-newline", "batches", "one"],
)
def test_jsonl_counted_a_line_at_a_time_as_when_read_whole(data, monkeypatch):
    whole, streamed = _both(data, monkeypatch)
    assert isinstance(whole, dict)
    assert streamed == whole


FIRST = (
    b'{"role": "user", "content": "hi"}\n' + b'{"role": "user", "content": "' + b"b" * 150 + b'"}'
)


@pytest.mark.parametrize(
    "lines",
    [
        # invalid UTF-8 anywhere comes first, even after a line that is no JSON
        [
            FIRST,
            b"{oops",
            b'{"role": "user", "content": "\xff"}',
        ],
        # a line that is no JSON comes before a message without a role above it
        [FIRST, b'{"content": "x"}', b"[1, 2"],
        [FIRST, b"[1]"],  # not an object
        [
            FIRST,
            b'{"content": "x"}',
            b'{"role": "bot"}',
        ],
        # an unknown role (the first one) before a field of the wrong type above it
        [
            FIRST,
            b'{"role": "user", "content": "x", "name": []}',
            b'{"role": "robot", "content": "y"}',
            b'{"role": "alien", "content": "y"}',
        ],
        # tool_use blocks make it Anthropic: a system role is then unknown
        [
            b'{"role": "user", "content": '
            b'[{"type": "tool_use", "id": "a", "name": "n", "input": {}}]}',
            b'{"role": "user", "content": "' + b"a" * 150 + b'", "tool_call_id": 3}',
            b'{"role": "system", "content": "s"}',
        ],
    ],
    ids=["utf8-last", "syntax-before-role", "not-object", "no-role", "role-before-field", "field"],
)
def test_jsonl_errors_read_a_line_at_a_time_are_those_read_whole(lines, monkeypatch):
    whole, streamed = _both(b"\n".join(lines) + b"\n", monkeypatch)
    assert isinstance(whole, str) and whole.startswith("ctx-count: error: t.jsonl: ")
    assert streamed == whole


def test_a_jsonl_line_past_the_document_limit_is_refused_with_the_limit(monkeypatch):
    import io

    from ctxtools import jsonbound

    monkeypatch.setattr(jsonbound, "JSON_SNIFF_BYTES", 120)
    monkeypatch.setattr(jsonbound, "JSON_DOCUMENT_MAX", 3000)
    data = _jsonl(_OPENAI_TOOLS) + json.dumps({"role": "user", "content": "z" * 5000}).encode()
    with pytest.raises(InputError, match="over 3,000 bytes is not parsed"):
        report.transcript_counts_of(io.BytesIO(data), HEURISTIC, "t", "t", ValueError)
