"""The excerpt library: the engine's windows, their scores, caps, fallbacks, odd bytes,
streaming in bounded memory, budgets."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest

from ctxtools.excerpt import (
    Engine,
    ExcerptOptions,
    excerpt_dict,
    excerpt_file,
    excerpt_stream,
    excerpt_text,
    fit_budget,
    render_all,
    render_excerpt,
)
from ctxtools.excerpt.core import excerpt_bytes, source_of
from ctxtools.tokens import HeuristicRuler

DATA = Path(__file__).resolve().parents[1] / "data" / "excerpt"


def spans(ex):
    return [(s.kind, s.start, s.end) for s in ex.spans]


def chunks(ex):
    """The engine's windows EX shows, the most relevant first."""
    wins = [w for s in ex.spans for w in s.windows]
    return [w.chunk for w in sorted(wins, key=lambda w: (-w.score, w.start))]


def body_lines(path: Path, first: int, last: int) -> list[str]:
    lines = path.read_text().split("\n")
    return lines[first - 1 : last]


def excerpt_of(name: str, query: str, **opts):
    return excerpt_text((DATA / name).read_bytes(), query, ExcerptOptions(**opts), label=name)


# (file, task, the chunk shown first: the named definition, its first and last line)
CASES = [
    ("auth.py", "verify_token rejects expired tokens", "verify_token 59-78"),
    ("server.go", "RetryAfter waits too long", "Limiter.RetryAfter 69-79"),
    ("cart.ts", "applyDiscount ignores minimumTotal", "Cart.applyDiscount 41-47"),
    ("lexer.rs", "read_number", "Lexer.read_number 44-55"),
    ("LruCache.java", "evictEldest", "LruCache.evictEldest 65-70"),
    ("inventory.py", "reconcile_stock", "reconcile_stock 252-268"),
]


@pytest.mark.parametrize("name, query, best", CASES, ids=[c[0] for c in CASES])
def test_the_best_window_of_real_files_is_the_named_definition_whole(name, query, best):
    ex = excerpt_of(name, query)
    assert chunks(ex)[0] == best
    assert ex.spans[0].kind == "head" and (ex.spans[0].start, ex.spans[0].end) == (1, 15)
    first, last = (int(x) for x in best.rsplit(" ", 1)[1].split("-"))
    shown = dict(ex.shown())
    for n, line in enumerate(body_lines(DATA / name, first, last), start=first):
        assert shown[n] == line, (name, n)
    # windows in line order, none overlapping, at most --max-windows
    wins = ex.windows
    assert all(a.end < b.start for a, b in zip(wins, wins[1:], strict=False))
    assert 1 <= len(wins) <= 6
    assert f"shown: {best.rsplit(' ', 1)[0]}" in render_excerpt(ex, name).split("\n")[0]


def test_head_truncation_would_have_missed_the_function():
    data = (DATA / "inventory.py").read_bytes()
    assert b"def reconcile_stock" not in data[:2800]
    ex = excerpt_text(data, "reconcile_stock", label="inventory.py")
    text = render_excerpt(ex, "inventory.py")
    assert (
        "252\tdef reconcile_stock(ledger: Ledger, counted: dict[str, int]) -> list[Move]:" in text
    )
    assert "268\t    return corrections" in text
    assert ex.matched == ("reconcile_stock", "reconcile", "stock")
    best = max(ex.windows, key=lambda s: s.score)
    words, pointers, share, callees = best.windows[0].parts
    assert pointers > 0  # its name is the task's: a name pointer, as in ctx-pack
    assert abs(words + pointers + share + callees - best.score) < 1e-9


def test_exact_rendering_with_separator_and_gutter():
    ex = excerpt_of("lexer.rs", "read_number", head=3)
    text = render_excerpt(ex, "lexer.rs")
    assert text.startswith(
        "==> lexer.rs <== 99 lines; matched: read_number, read, number; "
        "shown: Lexer.read_number\n"
        "1\t//! A small lexer for arithmetic expressions: numbers, identifiers, operators, "
        "parens.\n"
        "2\t\n"
        "3\tuse std::fmt;\n"
        "⋮\n"
    )
    assert "\n44\t    fn read_number(&mut self, first: char) -> Token {\n" in text
    assert text.endswith("55\t    }\n")


def test_an_ident_is_an_exact_name_pointer():
    """--ident NAME: the definition named NAME gets the name pointer a task's code-shaped
    name gets, whatever words the task has."""
    from ctxtools.retrieval.window import window_query

    q = window_query(None, ["evictEldest"])
    assert q.names == {"evicteldest": 2.5} and "evict" in q.terms
    ex = excerpt_text((DATA / "LruCache.java").read_bytes(), q, label="LruCache.java")
    best = max((w for s in ex.spans for w in s.windows), key=lambda w: w.score)
    assert best.chunk == "LruCache.evictEldest 65-70" and best.parts[1] > 0
    dotted = window_query("", ["auth.jwt.verify"])
    assert set(dotted.names) == {"auth", "jwt", "verify"}


def test_windows_are_the_best_chunks_down_to_the_floor_at_most_max_windows():
    from ctxtools.retrieval.plan import FLOOR

    ex = excerpt_of("auth.py", "SessionStore sweep expired sessions", max_windows=3)
    wins = [w for s in ex.spans for w in s.windows]
    assert len(wins) == 3 and ex.omitted > 0
    own = [w.parts[0] + w.parts[1] + w.parts[3] for w in wins]
    assert min(own) >= FLOOR * max(own)
    more = excerpt_of("auth.py", "SessionStore sweep expired sessions", max_windows=20)
    assert len(more.windows) == 3 + ex.omitted  # the ones left out were above the floor
    # the three kept are the three best of them
    best3 = sorted((w.score for s in more.spans for w in s.windows), reverse=True)[:3]
    assert sorted((w.score for w in wins), reverse=True) == best3
    none = excerpt_of("auth.py", "SessionStore", max_windows=0)
    assert none.windows == () and none.omitted > 0
    # still a file that matches: its head, and a header that says what was left out
    assert spans(none) == [("head", 1, 15)] and none.matched and none.matches > 0
    assert (
        render_excerpt(none, "auth.py")
        .split("\n")[0]
        .endswith(f"; {none.omitted} more windows above the floor")
    )
    log = excerpt_text(
        b"x\n" * 50 + b"SessionStore\n", "SessionStore", ExcerptOptions(max_windows=0)
    )
    assert spans(log) == [("head", 1, 15)] and log.matched and log.omitted == 1


def test_a_text_without_definitions_windows_its_best_lines():
    lines = [f"filler line number {k}" for k in range(300)]
    lines[49] = "ERROR payment gateway timeout after retry"
    lines[199] = "ERROR payment gateway timeout"
    lines[200] = "payment gateway retry scheduled"
    lines[280] = "gateway"
    data = ("\n".join(lines) + "\n").encode()
    ex = excerpt_text(data, "payment gateway timeout retry", ExcerptOptions(head=2, window=3))
    assert spans(ex) == [("head", 1, 2), ("window", 47, 53), ("window", 197, 203)]
    best = max(ex.windows, key=lambda s: s.score)
    assert (best.start, best.end) == (197, 203)  # two lines of the task's words beat one
    assert ex.windows[0].windows[0].chunk == "lines 47-53"
    # the lone "gateway" at 281 is under the floor: no window
    assert all(not s.start <= 281 <= s.end for s in ex.spans)
    # a window is ±window lines around its line, clipped to the text
    edge = excerpt_text(b"retry\n" + b"x\n" * 10, "retry", ExcerptOptions(head=0, window=3))
    assert spans(edge) == [("window", 1, 4)]


def test_windows_of_a_text_never_overlap_and_merge_when_they_touch():
    lines = ["x"] * 200
    for n in (40, 91, 100, 160):  # 91 and 100 would overlap: 100 starts no window
        lines[n - 1] = "call(marker)"
    data = ("\n".join(lines) + "\n").encode()
    ex = excerpt_text(data, "marker", ExcerptOptions(head=0))
    assert spans(ex) == [("window", 15, 65), ("window", 66, 116), ("window", 135, 185)]
    text = render_excerpt(ex, "t")
    assert "65\tx\n66\tx\n" in text  # adjacent windows show as one run: no ⋮
    assert text.count("⋮") == 1


def test_tail_when_nothing_matches():
    ex = excerpt_of("cart.ts", "frobnicate")
    assert spans(ex) == [("head", 1, 15), ("tail", 28, 67)]
    assert render_excerpt(ex, "cart.ts").startswith(
        "==> cart.ts <== 67 lines; no match, last 40 lines\n"
    )
    assert ex.score == 0 and ex.matched == ()


def test_crlf_and_invalid_utf8_keep_line_numbers():
    raw = (DATA / "auth.py").read_bytes()
    crlf = raw.replace(b"\n", b"\r\n")
    plain = excerpt_text(raw, "verify_token", label="auth.py")
    ex = excerpt_text(crlf, "verify_token", label="auth.py")
    assert spans(ex) == spans(plain)
    assert dict(ex.shown()) == dict(plain.shown())
    assert render_excerpt(ex, "f") == render_excerpt(plain, "f")
    # invalid UTF-8 on lines before the match, and a form feed (not a line break for us)
    lines = raw.split(b"\n")
    lines[2] = b"A token is \xff\xfe three \xc3 parts\x0cjoined"
    broken = b"\n".join(lines)
    ex = excerpt_text(broken, "verify_token", label="auth.py")
    assert spans(ex) == spans(plain)
    shown = dict(ex.shown())
    assert shown[3] == "A token is \ufffd\ufffd three \ufffd parts\x0cjoined"
    assert shown[59].startswith("def verify_token(")


def test_a_log_with_cjk_and_invalid_utf8_windows_around_its_hit_lines():
    """A log (no definitions) in several scripts, with bytes that are not UTF-8 on the
    lines around the hits: the windows are the lines around the hits, by real number."""
    lines = [
        f"2026-12-04 10:{k // 60:02d}:{k % 60:02d} INFO 心跳正常 worker ok" for k in range(400)
    ]
    lines[120] = "2026-12-04 10:02:00 ERROR 数据库连接失败 database connection refused"
    lines[121] = b"\xff\xfe \xe6\x95 broken bytes \xc3(".decode("latin-1")
    lines[300] = "2026-12-04 10:05:00 ERROR データベース接続 connection refused again"
    raw = (
        "\n".join(lines)
        .encode("utf-8")
        .replace(
            "\xff\xfe \xe6\x95 broken bytes \xc3(".encode(), b"\xff\xfe \xe6\x95 broken bytes \xc3("
        )
    )
    assert b"\xff\xfe" in raw
    opts = ExcerptOptions(head=1, window=2)
    ex = excerpt_text(raw, "database connection refused", opts, label="app.log")
    assert spans(ex) == [("head", 1, 1), ("window", 119, 123), ("window", 299, 303)]
    shown = dict(ex.shown())
    assert shown[121].endswith("数据库连接失败 database connection refused")
    assert shown[122] == "\ufffd\ufffd \ufffd broken bytes \ufffd("
    assert shown[301].startswith("2026-12-04 10:05:00 ERROR データベース接続")
    assert ex.matched == ("database", "connection", "refused")
    # streamed in small pieces, scored with the same weights: the same windows
    engine = Engine("database connection refused", [source_of("app.log", raw)])
    streamed = excerpt_stream(io.BytesIO(raw), engine, opts, block=300)
    assert streamed.spans == ex.spans and streamed.lines == ex.lines
    # and the same bytes on reruns
    assert render_excerpt(ex, "app.log") == render_excerpt(
        excerpt_text(raw, "database connection refused", opts, label="app.log"), "app.log"
    )


def test_str_and_bytes_give_the_same_excerpt():
    raw = (DATA / "cart.ts").read_bytes()
    a = excerpt_text(raw, "total", label="cart.ts")
    b = excerpt_text(raw.decode(), "total", label="cart.ts")
    assert a == b


def test_binary_text_is_flagged():
    ex = excerpt_text(b"\x7fELF\x00\x01\x02 verify_token", "verify_token")
    assert ex.binary and ex.spans == ()


def test_empty_text():
    ex = excerpt_text(b"", "x1")
    assert ex.line_count == 0 and ex.spans == ()
    assert render_excerpt(ex, "empty") == "==> empty <== 0 lines; empty\n"


def test_no_trailing_newline_counts_the_last_line():
    ex = excerpt_text("a\nb\nlast_line_here", "last_line_here", ExcerptOptions(head=1, window=0))
    assert ex.line_count == 3
    assert spans(ex) == [("head", 1, 1), ("window", 3, 3)]


def log_text(copies: int) -> bytes:
    """Real lines (the test data's files) as a text without definitions."""
    return b"".join(p.read_bytes() for p in sorted(DATA.iterdir())) * copies


def engine_q():
    from ctxtools.retrieval.window import window_query

    return window_query("database connection refused")


@pytest.mark.parametrize("block", [64, 1000, 4096, 1 << 20])
def test_streaming_equals_whole_text(block):
    """A text read in pieces of any size (bounded memory) is cut as the same text held
    whole and scored in one piece with the same weights."""
    data = log_text(2) + b"x" * 5000 + b" reconcile_stock tail\n" + b"last\n"
    engine = Engine("reconcile_stock ledger")
    whole = excerpt_bytes(engine, data, ExcerptOptions())
    streamed = excerpt_stream(io.BytesIO(data), engine, block=block)
    assert streamed == whole
    assert whole.windows


def test_large_file_is_streamed_in_line_windows(tmp_path):
    data = (DATA / "inventory.py").read_bytes() * 60  # about 600 KB
    assert len(data) > 512 * 1024
    path = tmp_path / "big.py"
    path.write_bytes(data)
    ex = excerpt_file(str(path), "reconcile_stock")
    assert ex.line_count == 274 * 60
    assert ex == excerpt_text(data, "reconcile_stock")
    assert len(ex.windows) == 6 and ex.omitted > 0
    assert all(w.windows[0].chunk.startswith("lines ") for w in ex.windows)


def test_one_five_megabyte_line_is_cut(tmp_path):
    head = b'package main\n\nimport "fmt"\n\n'
    giant = b'var blob = "' + b"ab" * (5 * 512 * 1024) + b'" // checksumTable\n'
    tail = b"\nfunc checksumTable() {\n\tfmt.Println(blob)\n}\n"
    path = tmp_path / "blob.go"
    path.write_bytes(head + giant + tail)
    ex = excerpt_file(str(path), "checksumTable")
    assert ex.line_count == 9
    shown = dict(ex.shown())
    line5 = shown[5]
    assert line5.startswith('var blob = "abab')
    assert len(line5) < 600
    total_chars = len(giant) - 1
    assert line5.endswith(f"…[+{total_chars - 500} chars]")
    assert shown[7] == "func checksumTable() {"
    assert len(render_excerpt(ex, "blob.go")) < 2000


def test_json_form():
    ex = excerpt_of("lexer.rs", "tokenize", window=1)
    d = excerpt_dict(ex, "lexer.rs")
    assert d["path"] == "lexer.rs" and d["lines"] == 99 and d["matched"] == ["tokenize"]
    assert [(s["kind"], s["start"], s["end"]) for s in d["spans"]][-1] == ("window", 92, 99)
    win = d["spans"][-1]
    assert win["terms"] == ["tokenize"]
    [chunk] = win["chunks"]
    assert chunk["chunk"] == "tokenize 92-99" and chunk["score"] == win["score"]
    assert set(chunk) == {"chunk", "score", "words", "pointers", "file", "callees"}
    assert win["text"].startswith(
        "pub fn tokenize(input: &str) -> Result<Vec<Token>, LexError> {\n"
    )
    assert d["score"] == round(ex.score, 3) and d["omitted_windows"] == ex.omitted


def test_deterministic():
    q = "Cart total applyDiscount subtotal money"
    a = render_excerpt(excerpt_of("cart.ts", q), "cart.ts")
    b = render_excerpt(excerpt_of("cart.ts", q), "cart.ts")
    assert a == b


# --- budget ------------------------------------------------------------------------------


def _items(query: str, names: list[str], **opts):
    from ctxtools.excerpt import iter_excerpts

    paths = [str(DATA / n) for n in names]
    res = list(iter_excerpts(paths, query, ExcerptOptions(**opts)))
    return [(n, r.excerpt) for n, r in zip(names, res, strict=True)]


def test_budget_that_fits_drops_nothing():
    ruler = HeuristicRuler()
    items = _items("SessionStore", ["auth.py", "lexer.rs"])
    kept, dropped, used = fit_budget(items, 100_000, ruler.count)
    assert kept == items and dropped == [] and used == ruler.count(render_all(items))


def test_budget_keeps_windows_in_the_engines_order_of_relevance():
    ruler = HeuristicRuler()
    items = _items("SessionStore sweep", ["auth.py", "lexer.rs", "cart.ts"], window=3)
    full = ruler.count(render_all(items))
    auth = items[0][1]
    # a little less than everything: the files with nothing matched go first
    unmatched = ruler.count(render_excerpt(items[2][1], "cart.ts"))
    kept, dropped, used = fit_budget(items, full - unmatched // 2, ruler.count)
    assert ("cart.ts", "file") in [(d.label, d.kind) for d in dropped]
    assert [label for label, _ in kept][0] == "auth.py"
    assert used <= full - unmatched // 2
    # tighter: the least relevant windows of auth.py go; those kept outrank those dropped
    only_auth = ruler.count(render_excerpt(auth, "auth.py"))
    kept, dropped, used = fit_budget(items, only_auth * 2 // 3, ruler.count)
    assert used <= only_auth * 2 // 3
    ((label, ex),) = kept
    assert label == "auth.py" and ex.spans[0].kind == "head"
    gone = [d.score for d in dropped if d.kind == "window"]
    assert gone and ex.omitted == auth.omitted + len(gone)
    assert min(s.score for s in ex.windows) >= min(gone)
    assert max(s.score for s in ex.windows) == max(s.score for s in auth.windows)
    assert "more windows above the floor" in render_excerpt(ex, "auth.py").split("\n")[0]
    kept, dropped, used = fit_budget(items, 5, ruler.count)
    assert kept == [] and used == 0
    assert {d.label for d in dropped} == {"auth.py", "lexer.rs", "cart.ts"}


def test_streamed_and_whole_agree_on_odd_inputs_and_options():
    """Random (seeded) options over the real files read as texts without definitions,
    with CRLF, invalid UTF-8, long lines and no final newline: the streamed excerpt equals
    the whole-text one, spans are disjoint and in range, and every shown line is the
    file's line (cut when long)."""
    files = [p.read_bytes() for p in sorted(DATA.iterdir())]
    files += [b"verify_token(Cart)\n" * 400]
    rnd = random.Random(7)
    words = ["Token", "token", "ledger", "verify_token", "Cart", "money", "tail", "LexError"]
    for _ in range(120):
        data = rnd.choice(files)
        if rnd.random() < 0.3:
            data = data.replace(b"\n", b"\r\n")
        if rnd.random() < 0.3:
            k = rnd.randrange(len(data))
            data = data[:k] + b"\xff" + b"z" * rnd.randrange(3000) + data[k:]
        if rnd.random() < 0.2:
            data = data.rstrip(b"\n")
        opts = ExcerptOptions(
            window=rnd.randint(0, 30),
            head=rnd.randint(0, 20),
            max_windows=rnd.randint(0, 8),
            tail=rnd.randint(0, 50),
            max_line_chars=rnd.choice([500, 40, 10]),
        )
        engine = Engine(" ".join(rnd.sample(words, rnd.randint(1, 4))))
        whole = excerpt_bytes(engine, data, opts)
        streamed = excerpt_stream(io.BytesIO(data), engine, opts, block=rnd.choice([512, 8192]))
        assert streamed == whole
        assert all(a.end < b.start for a, b in zip(whole.spans, whole.spans[1:], strict=False))
        assert all(1 <= s.start <= s.end <= whole.line_count for s in whole.spans)
        assert len(whole.windows) <= opts.max_windows
        raw_lines = data.split(b"\n")
        cut = opts.max_line_chars
        for n, text in whole.shown():
            raw = raw_lines[n - 1].decode("utf-8", "replace").removesuffix("\r")
            if len(raw) <= cut:
                assert text == raw
            else:
                assert text == f"{raw[:cut]}…[+{len(raw) - cut} chars]"


def test_json_text_makes_any_name_encodable():
    import orjson

    from ctxtools.fsutil import json_text

    assert json_text("src/auth.py") == "src/auth.py"
    assert json_text("caf\udce9.py") == "caf\ufffd.py"  # an undecodable byte of a name
    assert json_text("café.py") == "café.py"
    odd = json_text("\ud800x")  # a lone surrogate that stands for no byte
    assert odd.endswith("x") and "\ud800" not in odd
    assert orjson.loads(orjson.dumps([odd])) == [odd]


# --- descriptors and resource limits (issue 21, item 13) -------------------------------------


def test_excerpt_file_holds_no_descriptor_once_it_returns(tmp_path):
    from helpers import many_sources, open_descriptors

    names = many_sources(tmp_path, 60)
    before = open_descriptors()
    for name in names:  # read whole (the common case), and streamed (over LARGE)
        excerpt_file(str(tmp_path / name), "connect_7")
        excerpt_file(str(tmp_path / name), "connect_7", large=16)
    assert open_descriptors() == before


@pytest.mark.parametrize("render", [False, True])
def test_a_file_the_open_file_limit_keeps_out_is_an_error_not_a_skip(tmp_path, monkeypatch, render):
    import errno

    from helpers import fail_opening, many_sources

    from ctxtools.errors import ResourceError
    from ctxtools.excerpt import iter_excerpts

    paths = [str(tmp_path / n) for n in many_sources(tmp_path, 3)]
    fail_opening(monkeypatch, "m0001.py", errno.EMFILE)
    with pytest.raises(ResourceError, match=r"m0001\.py: Too many open files") as info:
        list(iter_excerpts(paths, "connect_1", render=render))
    assert "ulimit -n" in str(info.value)
    # An ordinary failure (the file is gone) stays a per-file result.
    monkeypatch.undo()
    fail_opening(monkeypatch, "m0002.py", errno.ENOENT)
    results = list(iter_excerpts(paths, "connect_1", render=render))
    assert [r.status for r in results] == ["ok", "ok", "unreadable"]


@pytest.mark.parametrize("seed", range(30))
def test_line_windows_keep_few_candidates_and_choose_as_with_all_of_them(seed):
    """A text without definitions keeps only the best max_windows × (4 × window + 1) + 1
    candidate windows, not a record a matching line; with many more matching lines than
    that, of every density, the windows are those chosen with every candidate kept."""
    from ctxtools.retrieval.terms import Terms
    from ctxtools.retrieval.window import LineWindows, mean_window, window_query

    rnd = random.Random(seed)
    kinds = [
        "verify_token(x) failed",
        "    verify_token(tok)",
        "    ledger.verify_token = 1",
        "TokenLedger ledger ledger",
        "    return ledger",
        "    pass",
    ]
    lines = []
    for _ in range(rnd.randint(600, 1500)):
        dense = rnd.random() < 0.5
        lines.append(rnd.choice(kinds) if dense or rnd.random() < 0.1 else "    y = 1")
        if rnd.random() < 0.05:
            lines.append("    " + "ledger " * rnd.randint(50, 400))
    data = ("\n".join(lines) + "\n").encode()
    window, keep = rnd.randint(0, 4), rnd.randint(1, 5)
    q = window_query(rnd.choice(["verify_token", "ledger verify_token", "token"]))
    terms = Terms(list(q.terms))
    weights = [q.terms[t] for t in terms.terms]
    avg = mean_window(data, window)
    block = rnd.choice([256, 4096])

    def run(cap=None):
        lw = LineWindows(terms, weights, window, keep, avg)
        if cap is not None:
            lw.cap = cap
        for piece in excerpt_pieces(data, block):
            lw.add(*piece)
        out = lw.finish()
        return out, len(lw._best)

    (bounded, kept), (full, kept_all) = run(), run(10**9)
    assert bounded[0] == full[0] and bounded[2] == full[2]  # the windows, the line count
    assert bounded[1] <= full[1]  # more above the floor: counted among those kept
    assert kept <= keep * (4 * window + 1) + 1 < kept_all


def excerpt_pieces(data: bytes, block: int):
    from ctxtools.excerpt.source import pieces_of_stream

    return list(pieces_of_stream(io.BytesIO(data), block))


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_a_line_number_costs_little_more_than_one_token(encoding):
    """Every pack and excerpt numbers each line it shows: the number is what a model needs
    to point at a line, and what it costs comes out of the budget for code. On five real
    files of five languages, ``numbered``'s number and tab cost at most 2 tokens a line
    (1.2-1.25; 1.7 where the code is indented with tabs, as Go's is), where the padded
    ``  120│ `` gutter before it cost 4.1-4.6, a fifth of a pack."""
    from ctxtools.quoting import numbered
    from ctxtools.tokens import get_ruler

    count = get_ruler(encoding=encoding, exact=True).ruler.count
    for name in ("inventory.py", "lexer.rs", "server.go", "cart.ts", "LruCache.java"):
        lines = (DATA / name).read_text(encoding="utf-8").splitlines()
        bare = count("\n".join(lines))
        shown = count("\n".join(numbered(n, t) for n, t in enumerate(lines, 1)))
        assert (shown - bare) / len(lines) <= 2.0, (name, (shown - bare) / len(lines))
