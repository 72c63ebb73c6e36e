"""The multi-file run as a library user (ctx-pack) calls it: no click, no printing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxtools.errors import CtxError, ExitStatus, NotFoundError
from ctxtools.excerpt import (
    ExcerptOptions,
    ExcerptRun,
    FileResult,
    Input,
    Signatures,
    auto_jobs,
    excerpt_dict,
    excerpt_sources,
    excerpt_text,
    find_unreadable,
    iter_excerpts,
    render_excerpt,
    render_signatures,
    render_unmatched,
    unreadable_error,
)
from ctxtools.tokens import HeuristicRuler

DATA = Path(__file__).resolve().parents[1] / "data" / "excerpt"
ALL = ["auth.py", "server.go", "cart.ts", "lexer.rs", "LruCache.java", "inventory.py"]
QUERY = "SessionStore sweep Cart"


@pytest.fixture
def src(tmp_path, monkeypatch):
    for name in ALL:
        shutil.copy(DATA / name, tmp_path / name)
    (tmp_path / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00verify_token")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_results_and_render_without_a_budget(src):
    run = excerpt_sources(["auth.py", "lexer.rs", "blob.bin"], QUERY)
    assert isinstance(run, ExcerptRun)
    assert [(r.label, r.status) for r in run.results] == [
        ("auth.py", "ok"),
        ("lexer.rs", "ok"),
        ("blob.bin", "binary"),
    ]
    assert run.terms[:5] == ("sessionstore", "session", "store", "sweep", "cart")
    assert run.budget is None and run.tokens is None and run.dropped == []
    assert not run.failed
    assert run.notes == ["blob.bin: binary file, skipped"]
    assert [label for label, _ in run.shown] == ["auth.py", "lexer.rs"]
    expected = [render_excerpt(ex, label) for label, ex in run.shown]
    assert run.render() == "\n".join(expected)
    # one file alone is ranked alone: its words' rarity is its own chunks'
    alone = excerpt_sources(["auth.py"], QUERY).shown[0][1]
    assert alone == excerpt_text((DATA / "auth.py").read_bytes(), QUERY, label="auth.py")
    doc = run.as_dict()
    assert "budget" not in doc
    assert doc["files"][-1] == {"path": "blob.bin", "status": "binary"}
    assert doc["files"][0] == excerpt_dict(run.shown[0][1], "auth.py")


def test_budget_fitting_without_the_cli(src):
    ruler = HeuristicRuler()
    opts = ExcerptOptions(window=3)
    names = ["auth.py", "lexer.rs", "cart.ts"]
    full = excerpt_sources(names, QUERY, opts)
    total = ruler.count(full.render())
    run = excerpt_sources(names, QUERY, opts, ruler=ruler, budget=total - 10)
    assert run.tokens == ruler.count(run.render()) <= total - 10
    assert [(d.label, d.kind) for d in run.dropped] == [("lexer.rs", "file")]
    assert [label for label, _ in run.shown] == ["auth.py", "cart.ts"]
    assert run.drop_notes() == [
        "dropped 1 part(s) of 1 file(s)",
        "  dropped lexer.rs: whole file (nothing matched)",
    ]
    tight = excerpt_sources(names, QUERY, opts, ruler=ruler, budget=300)
    assert tight.tokens <= 300
    budget = tight.as_dict()["budget"]
    assert budget["tokens"] == 300 and budget["used"] == tight.tokens
    assert budget["counter"] == "heuristic" and budget["exact"] is False
    assert ("auth.py", "window") in [(d["path"], d["kind"]) for d in budget["dropped"]]
    for _label, ex in tight.shown:
        assert ex.spans[0].kind == "head"  # a kept file keeps its head
    # the results are the files as loaded, whole: the budget changes only what is shown
    assert [r.excerpt for r in tight.results] == [r.excerpt for r in full.results]


def test_the_ruler_is_asked_for_only_when_a_budget_needs_it(src):
    asked = []

    def ruler():
        asked.append(True)
        return HeuristicRuler()

    excerpt_sources(["auth.py"], QUERY, ruler=ruler)
    assert asked == []
    run = excerpt_sources(["auth.py"], QUERY, ruler=ruler, budget=50)
    assert asked == [True] and run.ruler.name == "heuristic"
    default = excerpt_sources(["auth.py"], QUERY, budget=400)  # the default ruler: exact
    assert default.ruler.exact and default.ruler.count(default.render()) <= 400


def test_drop_notes_name_at_most_limit_files(src):
    run = excerpt_sources(ALL, QUERY, ruler=HeuristicRuler(), budget=1)
    assert run.shown == [] and run.tokens == 0
    notes = run.drop_notes(limit=2)
    assert notes[0] == f"dropped {len(run.dropped)} part(s) of 6 file(s)"
    assert len(notes) == 4 and notes[-1] == "  ... and 4 more files"


def test_sort_by_score_keeps_ties_in_the_order_given(src):
    names = ["lexer.rs", "cart.ts", "auth.py", "server.go"]
    run = excerpt_sources(names, QUERY, sort="score")
    scores = {label: ex.score for label, ex in run.shown}
    assert [label for label, _ in run.shown] == sorted(names, key=lambda n: -scores[n])
    assert scores["server.go"] == 0 == scores["lexer.rs"]
    order = [label for label, _ in run.shown]
    assert order.index("lexer.rs") < order.index("server.go")
    with pytest.raises(ValueError):
        excerpt_sources(names, QUERY, sort="name")


def test_unreadable_inputs_are_results_and_on_file_sees_them_in_order(src, store_dir):
    seen: list[tuple[str, str]] = []
    run = excerpt_sources(
        ["gone.py", "blob.bin", str(src), "ctx:nosuch", "cart.ts"],
        QUERY,
        on_file=lambda r: seen.append((r.label, r.status)),
    )
    assert seen == [(r.label, r.status) for r in run.results]
    assert [r.status for r in run.results] == [
        "unreadable",
        "binary",
        "unreadable",
        "unreadable",
        "ok",
    ]
    gone, _blob, directory, handle, _cart = run.results
    assert gone.error == "gone.py: no such file"
    assert gone.exit_status == NotFoundError.exit_status
    assert directory.error == f"{src}: is a directory"
    assert "nosuch" in handle.error and handle.exit_status == ExitStatus.FAILURE
    assert run.failed
    assert [f["status"] for f in run.as_dict()["files"]] == [
        "ok",
        "unreadable",
        "binary",
        "unreadable",
        "unreadable",
    ]
    with pytest.raises(CtxError) as exc:
        gone.raise_error()
    assert str(exc.value) == "gone.py: no such file" and exc.value.exit_status == 1
    FileResult("x", "ok").raise_error()  # not an error: nothing raised


def test_on_file_may_stop_the_run(src):
    loaded = []

    def stop(res):
        loaded.append(res.label)
        res.raise_error()

    with pytest.raises(CtxError, match="gone.py: no such file"):
        excerpt_sources(["auth.py", "gone.py", "cart.ts"], QUERY, on_file=stop)
    assert loaded == ["auth.py", "gone.py"]


def test_find_unreadable_and_its_error(src):
    bad = find_unreadable(["auth.py", "a.py", Input("x", data=b""), "ctx:h", "a.py", str(src)])
    assert bad == {"a.py": "a.py: no such file", str(src): f"{src}: is a directory"}
    assert str(unreadable_error({"a.py": "a.py: no such file"}, hint="h")) == "a.py: no such file"
    many = {f"f{k}.py": f"f{k}.py: no such file" for k in range(12)}
    err = unreadable_error(many, hint="--keep-going excerpts the rest")
    assert isinstance(err, NotFoundError)
    assert str(err) == (
        "12 files cannot be read: f0.py, f1.py, f2.py, f3.py, f4.py, f5.py, f6.py, f7.py, "
        "f8.py, f9.py and 2 more (--keep-going excerpts the rest)"
    )


def test_data_inputs_are_read_when_their_turn_comes(src):
    calls = []

    def later():
        calls.append("read")
        return (DATA / "auth.py").read_bytes()

    results = iter_excerpts([Input("<stdin>", data=later), "cart.ts"], QUERY)
    assert calls == []
    first = next(results)
    assert calls == ["read"] and first.label == "<stdin>" and first.excerpt.matched
    assert next(results).label == "cart.ts"
    # bytes too; with --signatures the label's extension picks the language
    run = excerpt_sources(
        [Input("mem/auth.py", data=(DATA / "auth.py").read_bytes())], QUERY, signatures=True
    )
    ((label, sig),) = run.shown
    assert label == "mem/auth.py" and isinstance(sig, Signatures) and sig.language == "python"


def test_handles_from_a_store_root_or_a_store(src, tmp_path):
    from ctxtools.store import HandleStore

    root = tmp_path / "elsewhere"
    store = HandleStore(root)
    store.put_bytes((DATA / "auth.py").read_bytes(), name="authsrc", session="work")
    direct = excerpt_text((DATA / "auth.py").read_bytes(), QUERY, label="ctx:authsrc")
    for where in (root, str(root), store):
        run = excerpt_sources(["ctx:authsrc"], QUERY, store=where, session="work")
        ((label, ex),) = run.shown
        assert label == "ctx:authsrc" and ex == direct
    other = excerpt_sources(["ctx:authsrc"], QUERY, store=root)  # the default session
    assert other.results[0].status == "unreadable" and "authsrc" in other.results[0].error
    run = excerpt_sources(["ctx:work/authsrc"], QUERY, store=root, signatures=True)
    assert run.shown[0][1].language is None  # a handle's name without an extension


def test_rendered_results_carry_text_only(src):
    results = list(iter_excerpts(["auth.py", "blob.bin"], QUERY, render=True))
    assert results[0].excerpt is None
    assert results[0].text == render_excerpt(
        excerpt_text((DATA / "auth.py").read_bytes(), QUERY, label="auth.py"), "auth.py"
    )
    assert results[1].status == "binary" and results[1].text is None
    (sig,) = iter_excerpts(["server.go"], QUERY, signatures=True, render=True)
    from ctxtools.excerpt import signatures_of
    from ctxtools.retrieval.window import window_query

    data = (DATA / "server.go").read_bytes()
    expected = signatures_of("server.go", data, window_query(QUERY))
    assert sig.text == render_signatures(expected, "server.go")


@pytest.mark.parametrize("render", [False, True])
def test_worker_processes_give_the_same_results(src, render, monkeypatch):
    import ctxtools.excerpt.workers as workers

    monkeypatch.setattr(workers, "CHUNK", 3)  # chunks dealt out to every process
    names = [*ALL, "blob.bin", "gone.py", *ALL]
    one = list(iter_excerpts(names, QUERY, jobs=1, render=render))
    two = list(iter_excerpts(names, QUERY, jobs=2, render=render))
    assert one == two
    assert list(iter_excerpts(names, QUERY, jobs=3, render=render)) == one
    assert list(iter_excerpts(names, QUERY, jobs=9, render=render)) == one
    assert [r.status for r in one].count("ok") == 12
    hidden = list(iter_excerpts(names, QUERY, jobs=1, render=render, show_unmatched=False))
    assert list(iter_excerpts(names, QUERY, jobs=2, render=render, show_unmatched=False)) == hidden
    a = excerpt_sources(names, QUERY, jobs=1, ruler=HeuristicRuler(), budget=2000)
    b = excerpt_sources(names, QUERY, jobs=2, ruler=HeuristicRuler(), budget=2000)
    assert a.as_dict() == b.as_dict() and a.render() == b.render()
    a = excerpt_sources(names, QUERY, jobs=1, unmatched="name")
    b = excerpt_sources(names, QUERY, jobs=2, unmatched="name")
    assert a.as_dict() == b.as_dict() and a.render() == b.render()


def test_files_with_no_match_are_named_or_omitted_on_request(src):
    names = ["lexer.rs", "auth.py", "server.go", "cart.ts", "blob.bin"]
    default = excerpt_sources(names, QUERY)  # the library's default: shown, as before
    assert default.unmatched_mode == "show"
    assert [label for label, _ in default.shown] == ["lexer.rs", "auth.py", "server.go", "cart.ts"]
    assert [(r.label, r.matches, r.matched) for r in default.results] == [
        ("lexer.rs", 0, False),
        ("auth.py", 8, True),
        ("server.go", 0, False),
        ("cart.ts", 3, True),
        ("blob.bin", None, False),
    ]
    assert default.unmatched == ["lexer.rs", "server.go"]
    assert [f.get("matches") for f in default.as_dict()["files"]] == [0, 8, 0, 3, None]
    named = excerpt_sources(names, QUERY, unmatched="name")
    assert [label for label, _ in named.shown] == ["auth.py", "cart.ts"]
    blocks = [render_excerpt(ex, label) for label, ex in named.shown]
    assert named.render() == "\n".join([*blocks, "no match in 2 files:\nlexer.rs\nserver.go\n"])
    doc = named.as_dict()
    assert doc["unmatched"] == ["lexer.rs", "server.go"]
    assert [f["path"] for f in doc["files"]] == ["auth.py", "cart.ts", "blob.bin"]
    omitted = excerpt_sources(names, QUERY, unmatched="omit")
    assert omitted.render() == "\n".join(blocks) and "unmatched" not in omitted.as_dict()
    # signatures count the definitions that match
    (sig,) = excerpt_sources(["auth.py"], QUERY, signatures=True).results
    # class SessionStore; open, close and get (session_id); sweep
    assert sig.matches == 5 and sig.excerpt.matches == 5
    with pytest.raises(ValueError, match="unmatched must be one of"):
        excerpt_sources(names, QUERY, unmatched="list")
    with pytest.raises(ValueError, match="not to signatures"):
        excerpt_sources(names, QUERY, signatures=True, unmatched="name")


def test_a_budget_fits_the_named_list_too(src):
    ruler = HeuristicRuler()
    copies = [f"unmatched_copy_number_{k:03}.rs" for k in range(100)]
    for name in copies:
        shutil.copy(DATA / "lexer.rs", src / name)
    names = ["auth.py", *copies]
    full = excerpt_sources(names, "sweep", unmatched="name")
    assert full.unmatched == copies
    total = ruler.count(full.render())
    # room to spare: everything, as without a budget (fit_budget's estimates are careful)
    run = excerpt_sources(names, "sweep", unmatched="name", ruler=ruler, budget=total * 2)
    assert run.render() == full.render() and run.named is None and run.dropped == []
    # room for the matched file and part of the list: the list is cut, the file is not
    alone = ruler.count(excerpt_sources(["auth.py"], "sweep").render())
    heading = ruler.count(render_unmatched(copies, 0))
    budget = alone * 13 // 10 + heading + 1
    assert budget < total
    cut = excerpt_sources(names, "sweep", unmatched="name", ruler=ruler, budget=budget)
    assert cut.tokens == ruler.count(cut.render()) <= budget
    assert cut.dropped == [] and cut.shown == full.shown
    assert cut.named is not None and 0 < cut.named < 100
    assert cut.render().endswith(
        "\n".join(copies[: cut.named]) + f"\n… and {100 - cut.named} more\n"
    )
    assert cut.drop_notes() == [f"{100 - cut.named} of the 100 files with no match left unnamed"]
    assert cut.as_dict()["unmatched"] == copies  # the budget is the text's
    # too small for the files and the list's heading: nothing at all
    tiny = excerpt_sources(names, "sweep", unmatched="name", ruler=ruler, budget=3)
    assert tiny.render() == "" and tiny.tokens == 0 and not tiny.listed
    assert tiny.drop_notes()[-1] == "  100 of the 100 files with no match left unnamed"


def test_a_worker_failure_is_raised_here_and_no_child_is_left(src, monkeypatch):
    import os

    import ctxtools.excerpt.loader as loader
    import ctxtools.excerpt.workers as workers

    monkeypatch.setattr(workers, "CHUNK", 2)
    monkeypatch.setattr(workers, "SCAN_MIN", 2)
    real_scan = loader.definitions_of
    parent = os.getpid()

    def failing(label, *args, **kw):
        if label.endswith(".ts") and os.getpid() != parent:  # in a child only
            raise ValueError("scanner bug")
        return real_scan(label, *args, **kw)

    forked: list[int] = []
    real_fork = os.fork

    def fork():
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(loader, "definitions_of", failing)
    monkeypatch.setattr(os, "fork", fork)
    names = []
    for k in range(3):  # six files the task reaches, scanned in three chunks of two
        for name in ("auth.py", "cart.ts"):
            copy = f"{k}{name}"
            shutil.copy(DATA / name, src / copy)
            names.append(copy)
    with pytest.raises(ValueError, match="scanner bug"):  # the second chunk, a child's
        list(iter_excerpts([*names, "lexer.rs"], QUERY, jobs=2, render=True))
    assert len(forked) == 1
    rest = [n for n in names if n.endswith(".py")]
    early = iter_excerpts([*rest, "lexer.rs", *rest], QUERY, jobs=3, render=True)
    assert next(early).label == "0auth.py"
    early.close()  # the consumer stops: the children are ended and reaped
    assert len(forked) == 2
    for pid in forked:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_auto_jobs(monkeypatch):
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3}, raising=False)
    assert [auto_jobs(n) for n in (0, 1, 499, 500, 3000)] == [1, 1, 1, 2, 2]
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0}, raising=False)
    assert auto_jobs(3000) == 1


def test_past_the_engines_top_files_a_file_is_cut_by_lines(tmp_path, monkeypatch):
    """As in ctx-pack, the ranking reads chunk by chunk the best FILE_TOP files by their
    words; the others the task reaches are cut by lines (the same BM25), and only the
    files it reads have their definitions scanned."""
    import ctxtools.excerpt.loader as loader
    from ctxtools.retrieval.rank import FILE_TOP

    names = []
    for k in range(2 * FILE_TOP + 100):  # the task's word in half of them: a rare one
        path = tmp_path / f"m{k:04}.py"
        hits = "payload " * (k % 2 == 0) * (1 + (k % 14 == 0))  # some say it twice
        path.write_text(f"import os\n\n\ndef handle_{k}(x):\n    return '{hits}'\n")
        names.append(str(path))
    scanned: list[str] = []
    real = loader.definitions_of

    def counting(label, data):
        scanned.append(label)
        return real(label, data)

    monkeypatch.setattr(loader, "definitions_of", counting)
    results = list(iter_excerpts(names, "payload"))
    assert len(scanned) == FILE_TOP
    matched = [r for r in results if r.matched]
    assert len(matched) == FILE_TOP + 50
    for r in matched:
        [win] = [w for s in r.excerpt.spans for w in s.windows]
        assert win.chunk.startswith("lines ") == (r.label not in scanned), r.label
    twice = {names[k] for k in range(0, len(names), 14)}
    assert twice <= set(scanned)  # the best by their words are read chunk by chunk


# -- a budget too small for a file's head ----------------------------------------------------


def _lines_shown(ex) -> list[int]:
    return [n for n, _ in ex.shown()]


def test_a_head_that_does_not_fit_gives_way_to_the_best_window(src):
    # inventory.py's head is its 15-line module docstring and imports; the task is about
    # ship_order (line 63): with room for the header and that function but not the head
    # too, the function is shown alone (it was: the whole file dropped, or the head alone)
    ruler = HeuristicRuler()
    q = "ship_order customer"
    full = excerpt_sources(["inventory.py"], q, ExcerptOptions(max_windows=1), ruler=ruler)
    (_, ex), = full.shown
    head, win = ex.spans
    assert (head.kind, head.start, head.end, win.kind, win.start) == ("head", 1, 15, "window", 63)
    whole = ruler.count(full.render())
    alone = ruler.count(render_excerpt(ex.without(head), "inventory.py"))
    budget = (whole + alone) // 2
    assert alone < budget < whole
    run = excerpt_sources(["inventory.py"], q, ExcerptOptions(max_windows=1), ruler=ruler,
                          budget=budget)
    (_, cut), = run.shown
    assert [s.kind for s in cut.spans] == ["window"] and cut.spans[0] == win
    assert 1 not in _lines_shown(cut) and 63 in _lines_shown(cut)
    assert run.tokens == ruler.count(run.render()) <= budget
    assert [(d.kind, d.start, d.end) for d in run.dropped] == [("head", 1, 15)]
    assert run.drop_notes() == [
        "dropped 1 part(s) of 1 file(s)",
        "  dropped inventory.py: head 1-15 (the file shown by its windows alone)",
    ]
    assert [(d["kind"], d["start"], d["end"]) for d in run.as_dict()["budget"]["dropped"]] == [
        ("head", 1, 15)
    ]
    # with room for both, the head stays
    roomy = excerpt_sources(["inventory.py"], q, ExcerptOptions(max_windows=1), ruler=ruler,
                            budget=whole)
    assert roomy.shown[0][1].spans == ex.spans and roomy.dropped == []


def test_a_small_file_that_is_all_head_shows_its_best_chunk_alone(tmp_path, monkeypatch):
    # the whole file is its head, which carries the matching function: under a budget too
    # small for the file, the function shown as a window of its own (lines 1-12 left out)
    doc = "".join(f"# {w} notes about the module, kept at its top.\n" for w in "abcdefgh")
    body = "def retry(n):\n    for i in range(n):\n        os.sleep(2 ** i)\n"
    text = doc + "\nimport os\n\n\n" + body
    (tmp_path / "tiny.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    ruler = HeuristicRuler()
    full = excerpt_sources(["tiny.py"], "retry", ruler=ruler)
    (_, ex), = full.shown
    assert [s.kind for s in ex.spans] == ["head"] and ex.spans[0].windows
    whole = ruler.count(full.render())
    run = excerpt_sources(["tiny.py"], "retry", ruler=ruler, budget=whole * 2 // 3)
    (_, cut), = run.shown
    assert _lines_shown(cut) == [13, 14, 15]
    assert run.tokens <= whole * 2 // 3
    assert [(d.kind, d.start, d.end) for d in run.dropped] == [("head", 1, 15)]
    # too small even for that: the file goes, as before
    tiny = excerpt_sources(["tiny.py"], "retry", ruler=ruler, budget=5)
    assert tiny.shown == [] and [d.kind for d in tiny.dropped] == ["file"]


def test_a_window_shown_without_its_head_is_not_reported_dropped(src):
    # the window taken headless stands twice in the fitting's units; it is one shown window
    ruler = HeuristicRuler()
    q = "ship_order return_item customer"
    full = excerpt_sources(["inventory.py"], q, ExcerptOptions(max_windows=3), ruler=ruler)
    (_, ex), = full.shown
    head, best = ex.spans[0], max(ex.windows, key=lambda s: s.score)
    alone = ex.without(head)
    for w in ex.windows:
        if w != best:
            alone = alone.without(w)
    budget = ruler.count(render_excerpt(alone, "inventory.py")) + 4
    assert budget < ruler.count(render_excerpt(ex.without(best), "inventory.py"))
    run = excerpt_sources(["inventory.py"], q, ExcerptOptions(max_windows=3), ruler=ruler,
                          budget=budget)
    (_, cut), = run.shown
    assert best in cut.spans and head not in cut.spans
    shown = {(s.start, s.end) for s in cut.windows}
    dropped = [(d.start, d.end) for d in run.dropped if d.kind == "window"]
    assert ("head", 1, 15) in [(d.kind, d.start, d.end) for d in run.dropped]
    assert not shown & set(dropped) and len(dropped) == len(set(dropped)) == 2
    assert run.tokens == ruler.count(run.render()) <= budget
