"""Library tests of ctxtools.count.modes and .plain: what a ctx-count call does besides the
counts, without printing (the command prints what these return)."""

from __future__ import annotations

import pytest

from ctxtools.count import modes
from ctxtools.count.plain import count_plain, plain_size
from ctxtools.errors import OverLimitError, UsageError
from ctxtools.tokens import HeuristicRuler


def _options(*argv: str) -> dict:
    """ctx-count's options as its click command parses ARGV."""
    from ctxtools.cli.count import cli

    return cli.make_context("ctx-count", list(argv)).params


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("--exclude", "*.po"), "--exclude goes with --tree"),
        (("--role", "reviewer"), "--role and --role-share go with --budget"),
        (("--head", "3", "--tail", "3"), "--head and --tail: give one"),
        (("--decode", "--ids"), "--decode reads ids"),
        (("--ids", "--tree"), "--tree does not go with --head, --tail, --ids or --decode"),
    ],
)
def test_check_options_refuses_what_contradicts(argv, said):
    with pytest.raises(UsageError) as exc:
        modes.check_options(_options(*argv))
    assert said in str(exc.value) and exc.value.exit_status == 2


def test_check_options_says_whether_the_call_prints_tokens():
    assert modes.check_options(_options()) is False
    assert modes.check_options(_options("--ids")) is True
    assert modes.check_options(_options("--budget", "--role", "reviewer")) is False


def test_tokens_of_cuts_and_converts_one_input():
    import io

    from ctxtools.tokens import get_ruler

    ruler = get_ruler(encoding="cl100k_base").ruler
    text = b"hello world, hello again"
    notes: list[str] = []

    def tokens_of(data: bytes, *argv: str):
        return modes.tokens_of(ruler, io.BytesIO(data), "-", _options(*argv), notes)

    ids = [i for piece in tokens_of(text, "--ids") for i in piece]
    assert len(ids) > 2
    assert tokens_of(text, "--head", "2") == b"hello world"
    assert tokens_of(text, "--tail", "2") == b" hello again"
    again = " ".join(map(str, ids)).encode()
    assert tokens_of(again, "--decode") == text
    printed = b"".join(modes.ids_output(iter([ids[:2], [], ids[2:]]), as_json=False))
    assert printed == again + b"\n"
    printed = b"".join(modes.ids_output(iter([ids[:2], [], ids[2:]]), as_json=True))
    assert printed == b"[" + again.replace(b" ", b",") + b"]\n"
    assert b"".join(modes.ids_output(iter([]), as_json=True)) == b"[]\n"
    assert notes == []


def test_counts_output_orders_stderr_and_ends_with_the_gate(tmp_path):
    ruler = HeuristicRuler()
    rows = [("a.txt", {"tokens": 50, "chars": 200, "lines": 1, "bytes": 200})]
    opts = _options("--fail-above", "10")
    bad = {"gone.txt": "gone.txt: no such file"}
    out = modes.counts_output(
        rows, [("a.txt", "a.txt"), ("gone.txt", "gone.txt")], bad, [], None, ruler, opts
    )
    assert out.before == ["error: gone.txt: no such file"]
    assert out.doc is None and out.text.endswith(" total\n")
    assert isinstance(out.error, OverLimitError) and "a.txt (50)" in str(out.error)


def test_uncountable_leaves_a_missing_file_out_only_with_missing_ok(tmp_path):
    there = tmp_path / "there.txt"
    there.write_text("hello\n")
    gone = str(tmp_path / "gone.txt")
    bad, absent = modes.uncountable([str(there), gone], missing_ok=False)
    assert list(bad) == [gone] and absent == []
    bad, absent = modes.uncountable([str(there), gone], missing_ok=True)
    assert bad == {} and absent == [gone]


def test_the_plain_path_gives_way_to_the_command_for_binary_and_unreadable_files(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("one two three four\n")
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    assert plain_size([str(text), "-"]) == text.stat().st_size
    assert plain_size([str(text), str(binary)]) is None
    assert plain_size([str(tmp_path / "gone.txt")]) is None
    out, notes = count_plain([str(text)], True, None)
    assert out == "5\n" and notes == []
    assert count_plain([str(tmp_path / "gone.txt")], True, None) is None
