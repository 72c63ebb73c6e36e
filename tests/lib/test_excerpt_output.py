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
    excerpt_sources,
)
from ctxtools.excerpt.fit import _units
from ctxtools.excerpt.output import (
    FileNotes,
    default_unmatched,
    excerpt_query,
    memory_dict,
    memory_notes,
    rank_memory_sections,
    render_memory,
    write_blocks,
)
from ctxtools.excerpt.render import header
from ctxtools.excerpt.source import line_fragments

DATA = Path(__file__).resolve().parents[1] / "data"
SOURCES = sorted((DATA / "excerpt").iterdir())
OPTIONS = ExcerptOptions()


# --- the query -------------------------------------------------------------------------------


def test_excerpt_query_takes_terms_from_the_query_and_idents():
    q = excerpt_query("fix verify_token expiry", ["LruCache"])
    assert "verify_token" in q.terms and "lrucache" in q.terms
    assert q.names.keys() >= {"verify_token", "lrucache"}  # both exact name pointers
    assert excerpt_query(None, [], signatures=True).empty


@pytest.mark.parametrize(
    ("query", "idents", "kw", "message"),
    [
        (None, ["not an ident!"], {}, "--ident 'not an ident!' is not an identifier"),
        (None, [], {}, "nothing to look for"),
        (None, [], {"signatures": True, "unmatched": "name"}, "--unmatched applies to"),
        ("the a of", [], {}, "no usable word in the query 'the a of'"),
    ],
)
def test_excerpt_query_refuses_what_gives_nothing_to_look_for(query, idents, kw, message):
    with pytest.raises(UsageError) as exc:
        excerpt_query(query, idents, **kw)
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
    run = excerpt_sources(inputs, "Cache", on_file=notes)
    assert [r.status for r in run.results] == ["ok", "binary", "unreadable"]
    assert notes.status == 1
    assert said[0] == f"{tmp_path / 'bin.dat'}: binary file, skipped"
    assert said[1].startswith(f"error: {tmp_path / 'missing.py'}: ")
    stop = FileNotes(False, said.append)
    with pytest.raises(CtxError) as exc:
        excerpt_sources(inputs[2:], "Cache", on_file=stop)
    assert exc.value.exit_status == ExitStatus.FAILURE


@pytest.mark.parametrize("unmatched", ["show", "name", "omit"])
def test_write_blocks_writes_what_the_run_renders(unmatched):
    inputs = [str(p) for p in SOURCES]
    query = excerpt_query("SessionStore sweep", [])
    chunks: list[bytes] = []
    write_blocks(
        inputs,
        query,
        OPTIONS,
        chunks.append,
        on_file=FileNotes(False, print),
        unmatched=unmatched,
    )
    run = excerpt_sources(inputs, query, OPTIONS, unmatched=unmatched)
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
        write_blocks(inputs, "verify_token", OPTIONS, chunks.append, on_file=stop_at_second)
    assert b"".join(chunks).startswith(f"==> {inputs[0]} <== ".encode())


# --- one header ------------------------------------------------------------------------------


def test_header_parts():
    assert header("a.py", 0, ()) == "==> a.py <== 0 lines; empty"
    assert header("a.py", 1, (), 1) == "==> a.py <== 1 line; no match, last 1 lines"
    assert header("a.py", 90, ()) == "==> a.py <== 90 lines; no match"
    assert header("a.py", 90, ("x", "y"), 0, 2, ["A.b", "c"]) == (
        "==> a.py <== 90 lines; matched: x, y; shown: A.b, c; 2 more windows above the floor"
    )
    names = [f"f{k}" for k in range(8)]
    assert header("a.py", 9, ("x",), 0, 1, names).endswith(
        "shown: f0, f1, f2, f3, f4, f5 and 2 more; 1 more window above the floor"
    )


def test_line_fragments_are_the_lines_however_they_are_split():
    data = SOURCES[2].read_bytes()
    lines = data.split(b"\n")
    newlines = data.count(b"\n")
    n = len(lines)
    for a, b in [(1, 1), (1, 10), (5, 9), (n - 5, n - 1), (n // 2, n // 2 + 40), (1, n)]:
        assert line_fragments(data, newlines, a, b) == lines[a - 1 : b]


# --- budget order ----------------------------------------------------------------------------


def test_a_budget_keeps_windows_in_the_engines_order_then_files():
    """The order a budget keeps units in: every window by relevance (ctx-pack's order),
    then matched files by their head, then the files where nothing matched as given."""
    from ctxtools.retrieval.plan import by_relevance

    run = excerpt_sources([str(p) for p in SOURCES], "SessionStore sweep Cart")
    items = run.shown
    order = _units(items)
    wins = [(span.score, items[i][0], (i, span.start)) for i, span in order if span is not None]
    assert wins and wins == by_relevance(wins)
    first_file = next(k for k, (_i, span) in enumerate(order) if span is None)
    assert all(span is None for _i, span in order[first_file:])
    files = [i for i, _span in order[first_file:]]
    unmatched = [i for i, (_label, ex) in enumerate(items) if not ex.matched]
    assert files[-len(unmatched) :] == unmatched


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
    assert numbered.startswith(f"{c.start}\t")
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
