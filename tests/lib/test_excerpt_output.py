"""What ctx-excerpt writes, as library functions: the query checks, per-file notes, blocks
written as they are done, memory sections; and the one header that both renderers use."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxtools.errors import CtxError, ExitStatus, UsageError
from ctxtools.excerpt import (
    OPTION_NAMES,
    ExcerptOptions,
    ExcerptRun,
    Input,
    Matcher,
    excerpt_sources,
    excerpt_text,
    render_excerpt,
    value_drop_order,
)
from ctxtools.excerpt.budget import _drop_order
from ctxtools.excerpt.output import (
    FileNotes,
    default_unmatched,
    memory_dict,
    memory_notes,
    query_matcher,
    rank_memory_sections,
    render_memory,
    write_blocks,
)
from ctxtools.excerpt.render import header, no_match_block
from ctxtools.excerpt.source import line_fragments

DATA = Path(__file__).resolve().parents[1] / "data"
SOURCES = sorted((DATA / "excerpt").iterdir())
OPTIONS = ExcerptOptions()


# --- the query -------------------------------------------------------------------------------


def test_query_matcher_takes_identifiers_from_the_query_and_idents():
    m = query_matcher("fix verify_token expiry", ["LruCache"], OPTIONS)
    assert "verify_token" in m.identifiers and "LruCache" in m.identifiers
    assert query_matcher(None, [], OPTIONS, signatures=True).identifiers == ()
    assert query_matcher("Cart", [], ExcerptOptions(ignore_case=True)).ignore_case


@pytest.mark.parametrize(
    ("query", "idents", "kw", "message"),
    [
        (None, ["not an ident!"], {}, "--ident 'not an ident!' is not an identifier"),
        (None, [], {}, "nothing to look for"),
        (None, [], {"signatures": True, "unmatched": "name"}, "--unmatched applies to"),
        ("the a of", [], {}, "no usable identifier in the query 'the a of'"),
    ],
)
def test_query_matcher_refuses_what_gives_nothing_to_look_for(query, idents, kw, message):
    with pytest.raises(UsageError) as exc:
        query_matcher(query, idents, OPTIONS, **kw)
    assert str(exc.value).startswith(message)
    assert exc.value.exit_status == ExitStatus.USAGE


def test_default_unmatched():
    assert default_unmatched(1, False) == "show"
    assert default_unmatched(2, False) == "name"
    assert default_unmatched(9, True) == "show"


# --- notes and streamed blocks ---------------------------------------------------------------


def test_file_notes_say_what_happened_and_stop_on_unreadable(tmp_path):
    (tmp_path / "bin.dat").write_bytes(b"\0\1\2" * 10)
    inputs = [str(SOURCES[0]), str(tmp_path / "bin.dat"), str(tmp_path / "missing.py")]
    said: list[str] = []
    notes = FileNotes(True, said.append)
    run = excerpt_sources(inputs, ["Cache"], on_file=notes)
    assert [r.status for r in run.results] == ["ok", "binary", "unreadable"]
    assert notes.status == 1
    assert said[0] == f"{tmp_path / 'bin.dat'}: binary file, skipped"
    assert said[1].startswith(f"error: {tmp_path / 'missing.py'}: ")
    stop = FileNotes(False, said.append)
    with pytest.raises(CtxError) as exc:
        excerpt_sources(inputs[2:], ["Cache"], on_file=stop)
    assert exc.value.exit_status == ExitStatus.FAILURE


@pytest.mark.parametrize("unmatched", ["show", "name", "omit"])
def test_write_blocks_writes_what_the_run_renders(unmatched):
    inputs = [str(p) for p in SOURCES]
    matcher = Matcher(["verify_token", "sweep"])
    chunks: list[bytes] = []
    write_blocks(
        inputs,
        matcher,
        OPTIONS,
        chunks.append,
        on_file=FileNotes(False, print),
        unmatched=unmatched,
    )
    run = excerpt_sources(inputs, matcher, OPTIONS, unmatched=unmatched)
    assert b"".join(chunks).decode() == run.render()
    assert run.unmatched  # some files match nothing: the three modes differ


def test_write_blocks_writes_what_is_done_before_an_error(tmp_path):
    inputs = [str(SOURCES[1]), str(tmp_path / "gone.py")]
    (tmp_path / "gone.py").write_text("x = 1\n")
    chunks: list[bytes] = []

    def stop_at_second(res):
        if res.label.endswith("gone.py"):
            raise CtxError("stopped")
        return True

    with pytest.raises(CtxError, match="stopped"):
        write_blocks(
            inputs, Matcher(["verify_token"]), OPTIONS, chunks.append, on_file=stop_at_second
        )
    assert b"".join(chunks).startswith(f"==> {inputs[0]} <== ".encode())


# --- one header ------------------------------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
@pytest.mark.parametrize(
    "options", [OPTIONS, ExcerptOptions(head=3, tail=5), ExcerptOptions(tail=0)]
)
def test_the_bytes_block_of_an_unmatched_file_is_the_rendered_excerpt(source, options):
    data = source.read_bytes()
    ex = excerpt_text(data, ["no_such_identifier_anywhere"], options)
    assert no_match_block(data, source.name, options).decode() == render_excerpt(ex, source.name)


def test_header_parts():
    assert header("a.py", 0, ()) == "==> a.py <== 0 lines; empty"
    assert header("a.py", 1, (), 1) == "==> a.py <== 1 line; no match, last 1 lines"
    assert header("a.py", 90, ()) == "==> a.py <== 90 lines; no match"
    assert header("a.py", 90, ("x", "y"), 0, 2, 5) == (
        "==> a.py <== 90 lines; matched: x, y; 5 more matching lines not shown (2 more windows)"
    )


def test_line_fragments_are_the_lines_however_they_are_split():
    data = SOURCES[2].read_bytes()
    lines = data.split(b"\n")
    newlines = data.count(b"\n")
    n = len(lines)
    for a, b in [(1, 1), (1, 10), (5, 9), (n - 5, n - 1), (n // 2, n // 2 + 40), (1, n)]:
        assert line_fragments(data, newlines, a, b) == lines[a - 1 : b]


# --- budget order ----------------------------------------------------------------------------


def test_drop_orders_put_unmatched_files_first_and_files_after_their_windows():
    items = [
        (p.name, excerpt_text(p.read_bytes(), ["verify_token", "sweep", "Cart"])) for p in SOURCES
    ]
    for order in (_drop_order(items), value_drop_order(items)):
        kinds = [(i, span is None) for i, span in order]
        unmatched = [i for i, (_label, ex) in enumerate(items) if not ex.matched]
        assert [i for i, _ in kinds[: len(unmatched)]] == sorted(unmatched, reverse=True)
        for i, (_label, ex) in enumerate(items):
            if ex.matched:
                file_at = kinds.index((i, True))
                windows_at = [k for k, (j, whole) in enumerate(kinds) if j == i and not whole]
                assert all(k < file_at for k in windows_at)
    files_last = _drop_order(items)
    first_file = next(
        k for k, (i, span) in enumerate(files_last) if span is None and items[i][1].matched
    )
    assert all(span is None for _i, span in files_last[first_file:])


# --- memory sections -------------------------------------------------------------------------


def test_memory_sections_render_and_json(tmp_path):
    ranking = rank_memory_sections(
        [str(DATA / "memory" / "django")], "custom model managers", store=str(tmp_path)
    )
    kept = ranking.kept
    assert kept
    text = render_memory(kept)
    first = kept[0]
    c = first.chunk
    assert text.startswith(f"==> {c.file}:{c.start}-{c.end}")
    assert f" <== score {first.score:.3f}\n" in text
    numbered = text.split("\n", 1)[1].split("\n")[0]
    assert numbered.lstrip().startswith(f"{c.start}│ ")
    doc = memory_dict(ranking)
    assert [r["text"] for r in doc["results"]] == [s.text for s in kept]
    assert memory_notes(ranking) == list(ranking.notes)


def test_memory_needs_a_query_with_words(tmp_path):
    with pytest.raises(UsageError, match="--memory needs --query TEXT"):
        rank_memory_sections([str(DATA / "memory")], None, store=str(tmp_path))
    with pytest.raises(UsageError, match="no usable word in the query 'the of a'"):
        rank_memory_sections([str(DATA / "memory")], "the of a", store=str(tmp_path))


def test_excerpt_run_is_importable_from_the_package():
    assert ExcerptRun.__module__ == "ctxtools.excerpt.run"
    assert Input("x", data=b"y").read() == b"y"


def test_the_command_line_defaults_are_the_library_defaults():
    """ctx-excerpt declares its defaults as literals (importing the library would slow
    --help): they must be ExcerptOptions' own."""
    from ctxtools.cli.excerpt import cli

    defaults = {p.name: p.default for p in cli.params}
    library = ExcerptOptions().as_dict()
    counts = [name for name in OPTION_NAMES if name != "ignore_case"]  # -i is a flag: off
    assert {name: defaults[name] for name in counts} == {name: library[name] for name in counts}
    assert library["ignore_case"] is False
