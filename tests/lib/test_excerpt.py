"""The excerpt library: windows, scores, merging, caps, fallbacks, odd bytes, budgets."""

from __future__ import annotations

import io
import random
from dataclasses import replace
from pathlib import Path

import pytest

from ctxtools.analyzer import identifiers_from_query
from ctxtools.excerpt import (
    ExcerptOptions,
    Matcher,
    defined_name,
    excerpt_dict,
    excerpt_file,
    excerpt_file_block,
    excerpt_stream,
    excerpt_text,
    fit_budget,
    render_all,
    render_excerpt,
    render_header,
)
from ctxtools.tokens import HeuristicRuler

DATA = Path(__file__).resolve().parents[1] / "data" / "excerpt"


def spans(ex):
    return [(s.kind, s.start, s.end) for s in ex.spans]


def body_lines(path: Path, first: int, last: int) -> list[str]:
    lines = path.read_text().split("\n")
    return lines[first - 1 : last]


def matching_lines(data: bytes, identifiers) -> list[int]:
    """Every matching line of DATA, from the matcher itself."""
    found: dict = {}
    Matcher(identifiers).scan(data, 1, found)
    return sorted(found)


def excerpt_of(name: str, query: str, **opts):
    return excerpt_text(
        (DATA / name).read_bytes(), identifiers_from_query(query), ExcerptOptions(**opts)
    )


# (file, query, expected spans, the named function's first and last line)
CASES = [
    (
        "auth.py",
        "verify_token rejects expired tokens",
        [("head", 1, 15), ("window", 52, 102)],
        (59, 78),
    ),
    ("server.go", "RetryAfter waits too long", [("head", 1, 15), ("window", 44, 94)], (69, 79)),
    (
        "cart.ts",
        "applyDiscount ignores minimumTotal",
        [("head", 1, 15), ("window", 16, 66)],
        (41, 47),
    ),
    ("lexer.rs", "read_number", [("head", 1, 15), ("window", 19, 95)], (44, 55)),
    ("LruCache.java", "evictEldest", [("head", 1, 15), ("window", 40, 90)], (65, 70)),
    ("inventory.py", "reconcile_stock", [("head", 1, 15), ("window", 227, 274)], (252, 268)),
]


@pytest.mark.parametrize("name, query, expected, body", CASES, ids=[c[0] for c in CASES])
def test_windows_of_real_files_hold_the_named_function(name, query, expected, body):
    ex = excerpt_of(name, query)
    assert spans(ex) == expected
    shown = dict(ex.shown())
    first, last = body
    for n, line in enumerate(body_lines(DATA / name, first, last), start=first):
        assert shown[n] == line, (name, n)
    text = render_excerpt(ex, name)
    width = len(str(ex.line_count)) + 2
    assert f"\n{first:>{width}}│ " in text


def test_head_truncation_would_have_missed_the_function():
    data = (DATA / "inventory.py").read_bytes()
    assert b"def reconcile_stock" not in data[:2800]
    ex = excerpt_text(data, ["reconcile_stock"])
    text = render_excerpt(ex, "inventory.py")
    assert (
        "  252│ def reconcile_stock(ledger: Ledger, counted: dict[str, int]) -> list[Move]:" in text
    )
    assert "  268│     return corrections" in text
    assert ex.matched == ("reconcile_stock",)
    # the definition line weighs double an exact hit
    assert ex.windows[0].score == 6.0


def test_exact_rendering_with_separator_and_gutter():
    ex = excerpt_of("server.go", "ErrLimited", window=1, head=3)
    assert render_excerpt(ex, "server.go") == (
        "==> server.go <== 96 lines; matched: ErrLimited\n"
        "   1│ // Package ratelimit limits requests per client with a token bucket.\n"
        "   2│ package ratelimit\n"
        "   3│ \n"
        "   ⋮\n"
        "  11│ \n"
        "  12│ // ErrLimited is returned when a client has no tokens left.\n"
        '  13│ var ErrLimited = errors.New("rate limited")\n'
        "   ⋮\n"
        "  50│ \n"
        "  51│ // Allow takes one token from the bucket of key, or reports ErrLimited.\n"
        "  52│ func (l *Limiter) Allow(key string) error {\n"
        "   ⋮\n"
        "  62│ \tif b.tokens < 1 {\n"
        "  63│ \t\treturn ErrLimited\n"
        "  64│ \t}\n"
    )


def test_windows_merge_when_they_overlap_or_touch():
    lines = ["x"] * 200
    for n in (40, 91, 160):  # 40±25 = 15..65 and 91±25 = 66..116 touch; 160 stands apart
        lines[n - 1] = "call(marker)"
    ex = excerpt_text("\n".join(lines) + "\n", ["marker"], ExcerptOptions(head=0))
    assert spans(ex) == [("window", 15, 116), ("window", 135, 185)]
    lines[91] = "x"
    lines[92 - 1] = "x"
    lines[93 - 1] = "call(marker)"  # 93±25 = 68..118: one line apart from 15..65 -> separate
    lines[90] = "x"
    ex = excerpt_text("\n".join(lines) + "\n", ["marker"], ExcerptOptions(head=0))
    assert spans(ex) == [("window", 15, 65), ("window", 68, 118), ("window", 135, 185)]
    assert "⋮" in render_excerpt(ex, "f")


def test_at_most_six_windows_the_best_in_file_order():
    # ship_order's definition scores double; every *_summary/check_* line only a part hit
    ex = excerpt_of("inventory.py", "ledger record", window=2)
    windows = ex.windows
    assert len(windows) == 6
    assert [w.start for w in windows] == sorted(w.start for w in windows)
    assert all(len(w) <= 5 for w in windows)
    shown = {n for n, _ in ex.shown()}
    every = matching_lines((DATA / "inventory.py").read_bytes(), ex.matched)
    left = [line for line in every if line not in shown]
    assert ex.omitted_matches == len(left) == 18 and ex.omitted == 16
    assert ex.matches == len(every)
    assert [h.line for h in ex.hits] == [line for line in every if line in shown]
    assert render_excerpt(ex, "inventory.py").startswith(
        "==> inventory.py <== 274 lines; matched: ledger, record; "
        "18 more matching lines not shown (16 more windows)\n"
    )
    # the six shown are the first six chosen when more are allowed
    uncapped = excerpt_of("inventory.py", "ledger record", window=2, max_windows=100)
    assert uncapped.omitted == uncapped.omitted_matches == 0
    assert shown <= {n for n, _ in uncapped.shown()}
    # uncapped, one window falls inside the head and gives the head its score
    assert uncapped.spans[0].score > 0
    # equal scores: the earlier window; "class Ledger" is only a part hit of "ledger" (case)
    two = excerpt_of("inventory.py", "ledger", window=2, max_windows=2)
    assert [(s.start, s.end, s.score) for s in two.windows] == [(251, 255, 3.5), (271, 274, 3.5)]


def marked(n: int, marks: dict[int, str]) -> str:
    """N lines of filler with MARKS (line number -> text) in place."""
    return "".join(marks.get(k, f"x{k} = {k}") + "\n" for k in range(1, n + 1))


def test_a_window_is_the_lines_around_one_chosen_match():
    """Matches 10 lines apart do not chain into one long span: the first window chosen
    shows them all, and a match inside a chosen window starts no other."""
    text = marked(300, {100: "use(marker)", 110: "use(marker)", 120: "use(marker)"})
    ex = excerpt_text(text, ["marker"], ExcerptOptions(head=0))
    assert spans(ex) == [("window", 75, 125)]  # was 75..145: three windows merged
    assert ex.omitted == ex.omitted_matches == 0
    assert ex.windows[0].score == 3.5


def test_windows_are_chosen_best_first():
    text = marked(
        900,
        {
            100: "x = marker",  # 3
            400: "def marker():",  # a definition: 6
            700: "marker()",
            702: "marker()",
            704: "marker()",  # 3 + 0.25 per repeat = 3.5
        },
    )
    opts = ExcerptOptions(head=0, max_windows=1)
    ex = excerpt_text(text, ["marker"], opts)
    assert spans(ex) == [("window", 375, 425)]
    assert (ex.omitted, ex.omitted_matches) == (2, 4)
    assert render_header(ex, "f.py") == (
        "==> f.py <== 900 lines; matched: marker; 4 more matching lines not shown (2 more windows)"
    )
    ex = excerpt_text(text, ["marker"], replace(opts, max_windows=2))
    assert spans(ex) == [("window", 375, 425), ("window", 675, 725)]
    assert (ex.omitted, ex.omitted_matches) == (1, 1)
    ex = excerpt_text(text, ["marker"], replace(opts, max_windows=3))
    assert spans(ex) == [("window", 75, 125), ("window", 375, 425), ("window", 675, 725)]
    assert "not shown" not in render_header(ex, "f.py")


def spread_file(seed: int, lines: int = 2732) -> tuple[bytes, int]:
    """A file of LINES lines where "QuerySet" occurs every 30-50 lines (the shape of
    django/db/models/query.py), with a definition now and then; and its match count."""
    import random

    rnd = random.Random(seed)
    marks: dict[int, str] = {}
    k = rnd.randint(1, 40)
    while k <= lines:
        marks[k] = rnd.choice(
            ["class QuerySet(AltersData):", "    qs = QuerySet(model)", "def f(qs: QuerySet):"]
        )
        k += rnd.randint(30, 50)
    return marked(lines, marks).encode(), len(marks)


@pytest.mark.parametrize("seed", range(5))
def test_the_window_cap_bounds_what_is_shown(seed, tmp_path):
    """Issue 10: with matches 30-50 lines apart, 1,601 of 2,732 lines were shown, because
    the cap applied to merged spans. Now at most 15 + 6 × 51 lines, and the header says
    how many matching lines are left out."""
    data, count = spread_file(seed)
    ex = excerpt_text(data, ["QuerySet"])
    shown = [n for n, _ in ex.shown()]
    assert len(shown) <= 15 + 6 * 51
    assert len(shown) > 15 + 6 * 30  # six windows, merged or not
    left = [line for line in matching_lines(data, ["QuerySet"]) if line not in set(shown)]
    assert ex.matches == count
    assert ex.omitted_matches == len(left) > 0
    head = render_header(ex, "query.py")
    assert f"; {len(left)} more matching lines not shown ({ex.omitted} more windows)" in head
    # the bytes fast path shows the same
    path = tmp_path / "query.py"
    path.write_bytes(data)
    block = excerpt_file_block(str(path), "query.py", Matcher(["QuerySet"]), ExcerptOptions())
    assert block == render_excerpt(ex, "query.py").encode()
    gaps = sum(1 for a, b in zip(ex.spans, ex.spans[1:], strict=False) if b.start > a.end + 1)
    assert block.count(b"\n") == 1 + len(shown) + gaps  # the header, the lines, the ⋮


def _reference_choice(hits, w, keep):
    """The choice rule, done the slow and obvious way: score every candidate afresh."""
    from ctxtools.excerpt.plan import _score_of

    lines = sorted(hits)
    covered: set[int] = set()
    chosen = []
    while len(chosen) < keep:
        best = None
        for c in lines:
            if c in covered:
                continue
            rng = [x for x in lines if c - w <= x <= c + w and x not in covered]
            key = (-_score_of([hits[x] for x in rng]), -sum(hits[c].values()), c)
            if best is None or key < best:
                best = key
        if best is None:
            break
        c = best[2]
        chosen.append(c)
        covered.update(x for x in lines if c - w <= x <= c + w)
    return chosen


def test_window_choice_equals_the_obvious_rule():
    """The lazy, heap-ordered choice (and the sliding first scores) pick exactly what
    re-scoring every candidate after each choice picks, on random dense and sparse hits."""
    import random

    from ctxtools.excerpt.plan import _choose_windows

    rnd = random.Random(5)
    names = ["a", "b", "c"]
    for _ in range(200):
        n = rnd.randint(1, 160)
        density = rnd.choice([0.02, 0.1, 0.5, 1.0])
        hits = {}
        for line in range(1, n + 1):
            if rnd.random() < density:
                hits[line] = {
                    name: rnd.choice([1.0, 2.0, 3.0, 4.0, 6.0, 8.0])
                    for name in rnd.sample(names, rnd.randint(1, 3))
                }
        if not hits:
            continue
        w = rnd.choice([0, 1, 3, 25, rnd.randint(0, 40)])
        keep = rnd.choice([0, 1, 6, 1000])
        got = _choose_windows(sorted(hits), hits, w, keep)
        assert got == _reference_choice(hits, w, keep), (n, w, keep)


def test_tail_when_nothing_matches():
    ex = excerpt_of("lexer.rs", "frobnicate the quux")
    assert spans(ex) == [("head", 1, 15), ("tail", 60, 99)]
    assert ex.matched == ()
    text = render_excerpt(ex, "lexer.rs")
    assert text.startswith("==> lexer.rs <== 99 lines; no match, last 40 lines\n")
    assert "  99│ }\n" in text
    # a short file: head and tail meet, nothing is shown twice
    short = excerpt_text("a\nb\nc\n", ["zzz"], ExcerptOptions(head=2, tail=40))
    assert spans(short) == [("head", 1, 2), ("tail", 3, 3)]


def test_exact_hits_rank_above_part_hits():
    text = "\n".join(
        ["header"] * 3
        + ["ok = verifyJwtToken(t)"]  # part hit of jwt
        + ["x"] * 20
        + ["payload = jwt.decode(t)"]  # exact hit of jwt
        + ["x"] * 20
    )
    ex = excerpt_text(text, ["jwt"], ExcerptOptions(head=0, window=0, max_windows=1))
    assert spans(ex) == [("window", 25, 25)]
    both = excerpt_text(text, ["jwt"], ExcerptOptions(head=0, window=0))
    assert [(s.start, s.score) for s in both.windows] == [(4, 1.0), (25, 3.0)]


def test_case_sensitive_first_and_ignore_case():
    text = "a\nTOKEN = 1\nb\ntoken = 2\n"
    cs = excerpt_text(text, ["token"], ExcerptOptions(head=0, window=0))
    assert [(s.start, s.score) for s in cs.windows] == [(2, 1.0), (4, 3.0)]
    ci = excerpt_text(text, ["token"], ExcerptOptions(head=0, window=0, ignore_case=True))
    assert [(s.start, s.score) for s in ci.windows] == [(2, 3.0), (4, 3.0)]


def test_whole_words_only_and_cross_style_compounds():
    text = "tokens = 1\n\nmytoken = 2\n\nverify_token()\n\nverifyToken()\n\nVerifyTokenError\n"
    ex = excerpt_text(text, ["verify_token"], ExcerptOptions(head=0, window=0))
    assert [(s.start, s.score) for s in ex.windows] == [(5, 3.0), (7, 1.0), (9, 1.0)]
    none = excerpt_text(text, ["token"], ExcerptOptions(head=0, window=0))
    assert [s.start for s in none.windows] == [5, 7, 9]  # not "tokens", not "mytoken"


def test_dotted_paths_match_whole():
    text = "import auth\nauth.jwt.verify(t)\nx.auth.jwt.verify(t)\nverify(t)\n"
    ex = excerpt_text(text, ["auth.jwt.verify"], ExcerptOptions(head=0, window=0))
    assert [(s.start, s.score) for s in ex.windows] == [(2, 4.0)]


def test_distinct_identifiers_count_more_than_repeats():
    a = "\n".join(["x"] * 5 + ["alpha()", "alpha()", "alpha()", "alpha()"] + ["x"] * 5)
    b = "\n".join(["x"] * 5 + ["alpha()", "beta()"] + ["x"] * 5)
    opts = ExcerptOptions(head=0)
    sa = excerpt_text(a, ["alpha", "beta"], opts).windows[0].score
    sb = excerpt_text(b, ["alpha", "beta"], opts).windows[0].score
    assert sb > sa
    assert sa == 3.0 + 0.75 and sb == 6.0


@pytest.mark.parametrize(
    "line, name",
    [
        ("def verify_token(token):", "verify_token"),
        ("    async def open(self):", "open"),
        ("class SessionStore:", "SessionStore"),
        ("func (l *Limiter) Allow(key string) error {", "Allow"),
        ("type Bucket struct {", "Bucket"),
        ("pub(crate) fn tokenize(input: &str) {", "tokenize"),
        ("impl<'a> Lexer<'a> {", "Lexer"),
        ("export const emptyCart = (country: string): Cart => new Cart(country);", "emptyCart"),
        ("  applyDiscount(discount: Discount): boolean {", "applyDiscount"),
        ("    private void evictEldest() {", "evictEldest"),
        ("export default async function handler(req, res) {", "handler"),
        ("    if (node == head) {", None),
        ("        return node.value;", None),
        ("x = verify_token(t)", None),
    ],
)
def test_definition_lines(line, name):
    assert defined_name(line) == name


def test_a_match_inside_the_head_gives_the_head_its_score():
    ex = excerpt_of("auth.py", "CLOCK_SKEW", window=1)
    # line 16 (window 15..17) overlaps the head: clipped to 16..17; line 76 stands apart
    assert spans(ex) == [("head", 1, 15), ("window", 16, 17), ("window", 75, 77)]
    ex = excerpt_of("auth.py", "hmac", window=0, head=15)
    assert ex.spans[0].kind == "head" and ex.spans[0].score > 0
    assert ex.spans[0].identifiers == ("hmac",)


def test_crlf_and_invalid_utf8_keep_line_numbers():
    raw = (DATA / "auth.py").read_bytes()
    crlf = raw.replace(b"\n", b"\r\n")
    plain = excerpt_text(raw, ["verify_token"])
    ex = excerpt_text(crlf, ["verify_token"])
    assert spans(ex) == spans(plain)
    assert dict(ex.shown()) == dict(plain.shown())
    assert render_excerpt(ex, "f") == render_excerpt(plain, "f")
    # invalid UTF-8 on lines before the match, and a form feed (not a line break for us)
    lines = raw.split(b"\n")
    lines[2] = b"A token is \xff\xfe three \xc3 parts\x0cjoined"
    broken = b"\n".join(lines)
    ex = excerpt_text(broken, ["verify_token"])
    assert spans(ex) == spans(plain)
    shown = dict(ex.shown())
    assert shown[3] == "A token is \ufffd\ufffd three \ufffd parts\x0cjoined"
    assert shown[59].startswith("def verify_token(")


def test_str_and_bytes_give_the_same_excerpt():
    raw = (DATA / "cart.ts").read_bytes()
    a = excerpt_text(raw, ["total"])
    b = excerpt_text(raw.decode(), ["total"])
    assert a == b


def test_binary_text_is_flagged():
    ex = excerpt_text(b"\x7fELF\x00\x01\x02 verify_token", ["verify_token"])
    assert ex.binary and ex.spans == ()


def test_empty_text():
    ex = excerpt_text(b"", ["x1"])
    assert ex.line_count == 0 and ex.spans == ()
    assert render_excerpt(ex, "empty") == "==> empty <== 0 lines; empty\n"


def test_no_trailing_newline_counts_the_last_line():
    ex = excerpt_text("a\nb\nlast_line_here", ["last_line_here"], ExcerptOptions(head=1, window=0))
    assert ex.line_count == 3
    assert spans(ex) == [("head", 1, 1), ("window", 3, 3)]


def big_source(copies: int) -> bytes:
    base = (DATA / "inventory.py").read_bytes()
    return base * copies


@pytest.mark.parametrize("block", [64, 1000, 4096, 1 << 20])
def test_streaming_equals_whole_text(block):
    data = big_source(3) + b"x" * 5000 + b" reconcile_stock tail\n" + b"last\n"
    ids = Matcher(["reconcile_stock", "ledger"])
    whole = excerpt_text(data, ids)
    streamed = excerpt_stream(io.BytesIO(data), ids, block=block)
    assert spans(streamed) == spans(whole)
    assert dict(streamed.shown()) == dict(whole.shown())
    assert streamed.line_count == whole.line_count
    assert streamed.matched == whole.matched


def test_large_file_is_streamed_and_matches(tmp_path):
    data = big_source(60)  # about 600 KB
    assert len(data) > 512 * 1024
    path = tmp_path / "big.py"
    path.write_bytes(data)
    ex = excerpt_file(str(path), ["reconcile_stock"])
    assert ex.line_count == 274 * 60
    assert ex == excerpt_text(data, ["reconcile_stock"])
    assert len(ex.windows) == 6 and ex.omitted == 54


def test_one_five_megabyte_line_is_cut(tmp_path):
    head = b'package main\n\nimport "fmt"\n\n'
    giant = b'var blob = "' + b"ab" * (5 * 512 * 1024) + b'" // checksumTable\n'
    tail = b"\nfunc checksumTable() {\n\tfmt.Println(blob)\n}\n"
    path = tmp_path / "blob.go"
    path.write_bytes(head + giant + tail)
    ex = excerpt_file(str(path), ["checksumTable"])
    assert ex.line_count == 9
    shown = dict(ex.shown())
    line5 = shown[5]
    assert line5.startswith('var blob = "abab')
    assert len(line5) < 600
    total_chars = len(giant) - 1
    assert line5.endswith(f"…[+{total_chars - 500} chars]")
    assert shown[7] == "func checksumTable() {"
    assert len(render_excerpt(ex, "blob.go")) < 2000
    # the same through the in-memory path
    again = excerpt_text(path.read_bytes(), ["checksumTable"])
    assert dict(again.shown())[5] == line5


def test_json_form():
    ex = excerpt_of("lexer.rs", "tokenize", window=1)
    d = excerpt_dict(ex, "lexer.rs")
    assert d["path"] == "lexer.rs" and d["lines"] == 99 and d["matched"] == ["tokenize"]
    assert [(s["kind"], s["start"], s["end"]) for s in d["spans"]] == [
        ("head", 1, 15),
        ("window", 91, 93),
    ]
    win = d["spans"][1]
    assert win["identifiers"] == ["tokenize"] and win["score"] == 6.0
    assert win["text"] == (
        "\n"
        "pub fn tokenize(input: &str) -> Result<Vec<Token>, LexError> {\n"
        "    let mut lexer = Lexer::new(input);\n"
    )


def test_deterministic():
    ids = identifiers_from_query("Cart total applyDiscount subtotal money")
    a = render_excerpt(excerpt_text((DATA / "cart.ts").read_bytes(), ids), "cart.ts")
    b = render_excerpt(excerpt_text((DATA / "cart.ts").read_bytes(), list(ids)), "cart.ts")
    assert a == b


# --- budget ------------------------------------------------------------------------------


def _items(query: str, names: list[str], **opts):
    m = Matcher(identifiers_from_query(query))
    o = ExcerptOptions(**opts)
    return [(n, excerpt_text((DATA / n).read_bytes(), m, o)) for n in names]


def test_budget_that_fits_drops_nothing():
    ruler = HeuristicRuler()
    items = _items("verify_token", ["auth.py", "lexer.rs"])
    kept, dropped, used = fit_budget(items, 100_000, ruler.count)
    assert kept == items and dropped == [] and used == ruler.count(render_all(items))


def test_budget_drops_unmatched_files_then_lowest_windows():
    ruler = HeuristicRuler()
    items = _items("verify_token sweep", ["auth.py", "lexer.rs", "cart.ts"], window=3)
    full = ruler.count(render_all(items))
    auth = items[0][1]
    assert [(w.start, w.score) for w in auth.windows] == [(56, 6.0), (86, 3.0), (96, 6.0)]
    # a little less than everything: the files with nothing matched go first, last first
    unmatched = ruler.count(render_excerpt(items[2][1], "cart.ts"))
    kept, dropped, used = fit_budget(items, full - unmatched // 2, ruler.count)
    assert [(d.label, d.kind) for d in dropped] == [("cart.ts", "file")]
    assert [label for label, _ in kept] == ["auth.py", "lexer.rs"]
    assert used <= full - unmatched // 2
    # tighter: both unmatched files, then auth.py's lowest-scoring window: the call at
    # line 89 (3.0) goes before the definitions of verify_token and sweep (6.0 each)
    only_auth = ruler.count(render_excerpt(auth, "auth.py"))
    kept, dropped, used = fit_budget(items, only_auth - 5, ruler.count)
    assert [(d.label, d.kind, d.start) for d in dropped] == [
        ("cart.ts", "file", 0),
        ("lexer.rs", "file", 0),
        ("auth.py", "window", 86),
    ]
    assert used <= only_auth - 5
    ((label, ex),) = kept
    assert label == "auth.py"
    assert [s.kind for s in ex.spans] == ["head", "window", "window"]
    assert ex.omitted == 1
    # the matching line of the dropped window (89) is counted as left out, in the header
    assert (auth.omitted_matches, ex.omitted_matches) == (0, 1)
    assert render_excerpt(ex, "auth.py").startswith(
        "==> auth.py <== 105 lines; matched: verify_token, sweep; "
        "1 more matching line not shown (1 more window)\n"
    )
    # tighter still: windows go, the head stays while a window stays; then the file
    head_only = ruler.count(
        render_excerpt(
            auth.without(auth.windows[0]).without(auth.windows[1]).without(auth.windows[2]),
            "auth.py",
        )
    )
    kept, dropped, used = fit_budget(items, head_only, ruler.count)
    assert [label for label, _ in kept] == ["auth.py"]
    assert [s.kind for s in kept[0][1].spans] == ["head"]
    assert used <= head_only
    kept, dropped, used = fit_budget(items, 5, ruler.count)
    assert kept == [] and used == 0
    assert dropped[-1] == dropped[-1].__class__("auth.py", "file", score=0.0, matched=True)


def test_streamed_and_whole_agree_on_odd_inputs_and_options():
    """Random (seeded) options over the real files, with CRLF, invalid UTF-8, long lines
    and no final newline: the streamed excerpt equals the whole-text one, spans are
    disjoint and in range, and every shown line is the file's line (cut when long)."""
    import random

    files = [p.read_bytes() for p in sorted(DATA.iterdir())]
    files += [spread_file(4, 900)[0], b"verify_token(Cart)\n" * 400]
    rnd = random.Random(7)
    words = ["Token", "token", "ledger", "verify_token", "Cart", "money", "tail", "LexError"]
    words += ["QuerySet"]
    for _ in range(150):
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
            ignore_case=rnd.random() < 0.3,
            max_line_chars=rnd.choice([500, 40, 10]),
        )
        m = Matcher(rnd.sample(words, rnd.randint(1, 4)), opts.ignore_case)
        whole = excerpt_text(data, m, opts)
        streamed = excerpt_stream(io.BytesIO(data), m, opts, block=8192)
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


def test_file_blocks_are_the_rendered_excerpts(tmp_path):
    """excerpt_file_block (ctx-excerpt's path: files with no match rendered straight from
    their bytes) gives exactly render_excerpt's text, on matched and unmatched files with
    CRLF, invalid UTF-8, long lines, no final newline, empty files and odd options."""
    import random

    files = [p.read_bytes() for p in sorted(DATA.iterdir())]
    files += [b"", b"\n", b"one line", b"x\n" * 25_000, b"caf\xc3\xa9\n" * 70]
    files += [b"a\nverify_token\nfoo verify\nlast", b"Cart\n" + b"x\n" * 90 + b"Cart"]
    # many matches: 30-50 lines apart (more windows than the cap), and on every line
    files += [spread_file(3, 900)[0], b"verify_token(Cart)\n" * 400]
    rnd = random.Random(11)
    words = ["Token", "ledger", "verify_token", "Cart", "nothing_here", "absent", "QuerySet"]
    path = tmp_path / "f.txt"
    for k in range(240):
        data = files[k % len(files)]
        if rnd.random() < 0.3:
            data = data.replace(b"\n", b"\r\n")
        if data and rnd.random() < 0.3:
            at = rnd.randrange(len(data))
            data = data[:at] + b"\xff" + b"z" * rnd.randrange(3000) + data[at:]
        if rnd.random() < 0.2:
            data = data.rstrip(b"\n")
        opts = ExcerptOptions(
            window=rnd.randint(0, 30),
            head=rnd.choice([0, 1, 15, rnd.randint(0, 60)]),
            max_windows=rnd.randint(0, 8),
            tail=rnd.choice([0, 1, 40, rnd.randint(0, 80)]),
            ignore_case=rnd.random() < 0.3,
            max_line_chars=rnd.choice([500, 40, 10]),
        )
        m = Matcher(rnd.sample(words, rnd.randint(1, 3)), opts.ignore_case)
        path.write_bytes(data)
        label = rnd.choice(["f.txt", "dir/caf\udcc3.py"])
        block = excerpt_file_block(str(path), label, m, opts)
        expected = render_excerpt(excerpt_file(str(path), m, opts), label)
        assert block == expected.encode("utf-8", "surrogateescape"), (k, opts)


def test_file_block_of_binary_and_large_files(tmp_path):
    m = Matcher(["verify_token"])
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"verify_token\0")
    assert excerpt_file_block(str(binary), "b.bin", m, ExcerptOptions()) is None
    big = tmp_path / "big.py"
    big.write_bytes(b"x = 1\n" * 2000 + b"def verify_token():\n" + b"y = 2\n" * 2000)
    block = excerpt_file_block(str(big), "big.py", m, ExcerptOptions(), large=1000)
    assert block == render_excerpt(excerpt_file(str(big), m), "big.py").encode()
    assert b"2001\xe2\x94\x82 def verify_token():" in block


def test_file_block_of_a_pipe_longer_than_large(tmp_path):
    """A named pipe says size 0 and then holds more than LARGE bytes: what was read is
    excerpted (streamed from memory), the pipe is not opened a second time."""
    import os
    import threading

    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    data = b"x = 1\n" * 500 + b"def verify_token():\n" + b"y = 2\n" * 500

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        block = excerpt_file_block(
            str(fifo), "pipe.py", Matcher(["verify_token"]), ExcerptOptions(), large=1000
        )
    finally:
        writer.join()
    expected = render_excerpt(excerpt_text(data, ["verify_token"]), "pipe.py")
    assert block == expected.encode()


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
        excerpt_file(str(tmp_path / name), ["connect_7"])
        excerpt_file(str(tmp_path / name), ["connect_7"], large=16)
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
        list(iter_excerpts(paths, ["connect_1"], render=render))
    assert "ulimit -n" in str(info.value)
    # An ordinary failure (the file is gone) stays a per-file result.
    monkeypatch.undo()
    fail_opening(monkeypatch, "m0002.py", errno.ENOENT)
    results = list(iter_excerpts(paths, ["connect_1"], render=render))
    assert [r.status for r in results] == ["ok", "ok", "unreadable"]


@pytest.mark.parametrize("seed", range(40))
def test_a_streamed_file_keeps_few_candidates_and_plans_as_a_whole_one(seed):
    """Issue 27, item 13: a streamed file keeps only the best max_windows × (4 × window
    + 1) + 1 candidate windows, not a record a matching line; with many more matching
    lines than that, of every weight and density, the plan is the one made with all of
    them at hand (spans, scores, omitted counts, the hits shown)."""
    rnd = random.Random(seed)
    kinds = [
        "def verify_token(x):",
        "    verify_token(tok)",
        "    ledger.verify_token = 1",
        "class TokenLedger:",
        "    return ledger",
        "    x = VerifyToken()",
        "    pass",
    ]
    lines = []
    for _ in range(rnd.randint(600, 1500)):
        dense = rnd.random() < 0.5
        lines.append(rnd.choice(kinds) if dense or rnd.random() < 0.1 else "    y = 1")
        if rnd.random() < 0.05:
            lines.append("    " + "ledger " * rnd.randint(50, 400))  # cut into pieces
    data = ("\n".join(lines) + "\n").encode()
    opts = ExcerptOptions(
        window=rnd.randint(0, 4),
        head=rnd.randint(0, 20),
        max_windows=rnd.randint(0, 5),
        max_line_chars=100,
    )
    m = Matcher(rnd.choice([["verify_token"], ["ledger", "verify_token"], ["token"]]))
    whole = excerpt_text(data, m, opts)
    assert whole.matches > 2 * (opts.max_windows * (4 * opts.window + 1) + 1)
    assert excerpt_stream(io.BytesIO(data), m, opts, block=rnd.choice([256, 4096])) == whole
