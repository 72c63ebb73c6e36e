"""The projections as a library: slices, ranges, head and tail, grep with context and its
prefilter, JSON views -- on real files (sources in five languages, the JSONPath compliance
suite with its CJK text, an invalid UTF-8 byte), checked against Python's own slicing and
``re``, not against the code's output."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from ctxtools import projections as pj
from ctxtools.errors import CtxError, ExitStatus, InputError, UsageError
from ctxtools.projections.grep import grep_scope
from ctxtools.projections.prefilter import required_literals
from ctxtools.store import HandleStore, open_bytes

DATA = Path(__file__).resolve().parents[1] / "data"
SOURCES = sorted((DATA / "excerpt").iterdir())
CTS = json.loads((DATA / "jsonpath-cts" / "cts.json").read_text(encoding="utf-8"))["tests"]


def _corpus() -> bytes:
    """Real sources, then the compliance suite's text (CJK, escapes), with one line holding
    an invalid UTF-8 byte; an unterminated last line."""
    parts = [p.read_bytes() for p in SOURCES]
    parts.append(b"bad byte \xff here: Error in login\n")
    parts.append((DATA / "jsonpath-cts" / "cts.json").read_bytes()[:200_000])
    return b"".join(parts).rstrip(b"\n")


CORPUS = _corpus()
TEXT = CORPUS.decode("utf-8", "replace")
LINES = TEXT.split("\n")


@pytest.fixture
def payload():
    with open_bytes(CORPUS) as p:
        yield p


def big(**kw):
    return {"max_chars": 50_000, **kw}


# --- line and character views --------------------------------------------------------------


def test_payload_counts_match_the_text(payload):
    assert payload.lines == len(LINES)
    assert payload.chars == len(TEXT)


@pytest.mark.parametrize("spec", ["1-1", "1-40", "120-180", "700-", f"{len(LINES) - 3}-"])
def test_range_is_the_closed_line_range(payload, spec):
    first, last = pj.parse_range(spec)
    stop = len(LINES) if last is None else last
    out = pj.range_view(payload, spec, **big())
    if out.trailer is None:
        want = "\n".join(LINES[first - 1 : stop])
        # the payload's bytes as they are: a newline after each line but the unterminated last
        assert out.body == want + ("\n" if stop < len(LINES) else "")
    else:  # cut: what was shown is a prefix of whole lines, and the next command goes on
        shown = out.body.splitlines()
        assert shown == LINES[first - 1 : first - 1 + len(shown)]
        assert f"--range {first + len(shown)}-" in out.trailer


def test_range_past_the_end_is_clamped_with_a_note(payload):
    out = pj.range_view(payload, f"{len(LINES) - 1}-{len(LINES) + 50}", **big())
    assert out.body == "\n".join(LINES[-2:])
    assert out.notes == [
        f"--range {len(LINES) - 1}-{len(LINES) + 50}: the payload has {len(LINES):,} lines; "
        f"the range is {len(LINES) - 1}-{len(LINES)}"
    ]


def test_range_starting_after_the_end_is_an_error(payload):
    with pytest.raises(InputError, match="starts after the last line") as exc:
        pj.range_view(payload, f"{len(LINES) + 1}-")
    assert exc.value.exit_status == ExitStatus.FAILURE


@pytest.mark.parametrize("bad", ["", "x", "0-3", "9-3", "3-x", "-3"])
def test_bad_range_specs_are_usage_errors(bad):
    with pytest.raises(UsageError) as exc:
        pj.parse_range(bad)
    assert exc.value.exit_status == ExitStatus.USAGE
    assert "--range" in str(exc.value)


@pytest.mark.parametrize("n", [0, 1, 15, 300])
def test_head_and_tail_are_the_first_and_last_lines(payload, n):
    head = pj.head_view(payload, n, **big())
    assert head.body.splitlines() == LINES[:n]
    tail = pj.tail_view(payload, n, **big())
    assert tail.body.splitlines() == (LINES[-n:] if n else [])


def test_numbered_lines_carry_their_real_numbers(payload):
    out = pj.range_view(payload, "250-260", number=True)
    for k, row in enumerate(out.body.splitlines(), start=250):
        number, text = row.split("\t", 1)
        assert int(number) == k and text == LINES[k - 1]


@pytest.mark.parametrize("spec", ["0:200", "1000:1500", "-300:", ":50", "-40:-10", "5:5"])
def test_char_slices_follow_python_slicing(payload, spec):
    a, b = pj.parse_slice(spec)
    out = pj.slice_view(payload, spec, **big())
    assert out.body == TEXT[a:b]
    assert out.trailer is None


def test_char_slice_across_cjk_and_the_invalid_byte(payload):
    start = TEXT.index("bad byte")
    cjk = next(i for i, c in enumerate(TEXT) if "\u4e00" <= c <= "\u9fff")
    for a, b in [(start, start + 30), (cjk - 5, cjk + 5)]:
        assert pj.slice_view(payload, f"{a}:{b}").body == TEXT[a:b]
    assert "\ufffd" in pj.slice_view(payload, f"{start}:{start + 30}").body


@pytest.mark.parametrize("spec", ["0:25", "-10:", "100:140"])
def test_line_slices_follow_python_slicing(payload, spec):
    a, b = pj.parse_slice(spec)
    out = pj.slice_view(payload, spec, unit="lines", **big())
    assert out.body.splitlines() == LINES[a:b]


def test_a_cut_slice_names_the_next_slice(payload):
    out = pj.slice_view(payload, "0:5000", max_chars=1000, nxt=pj.next_for("ctx:log", 1000))
    assert out.body == TEXT[:1000]
    assert out.trailer.endswith("next: ctx-read ctx:log --slice 1000:5000 --max-chars 1000]")


def test_slice_errors(payload):
    with pytest.raises(UsageError, match="--unit 'words'"):
        pj.slice_view(payload, "0:1", unit="words")
    with pytest.raises(UsageError, match="-n numbers lines"):
        pj.slice_view(payload, "0:1", number=True)
    with pytest.raises(UsageError, match="expected A:B"):
        pj.parse_slice("1-2")


@pytest.mark.parametrize("spec", ["5:2", "-3:-5", "0:-0"])
def test_a_slice_whose_end_is_before_its_start_is_a_usage_error(spec):
    # "0:-0" is 0:0, empty by choice: not refused (neither is 5:5)
    if spec == "0:-0":
        assert pj.parse_slice(spec) == (0, 0)
        return
    with pytest.raises(UsageError, match="the end .* is before the start") as exc:
        pj.parse_slice(spec)
    assert exc.value.exit_status == 2


@pytest.mark.parametrize(("spec", "unit", "note"), [
    ("10000000:10000010", "chars", "chars"),
    ("5000000:6000000", "lines", "lines"),
    ("5:-10000000", "lines", "lines"),
])
def test_an_empty_slice_of_a_payload_says_so(payload, spec, unit, note):
    out = pj.slice_view(payload, spec, unit=unit, **big())
    assert out.body == ""
    total = payload.chars if unit == "chars" else payload.lines
    assert out.notes == [f"--slice {spec} selects nothing: the payload has {total:,} {note}"]


def test_a_slice_that_shows_something_has_no_note(payload):
    assert pj.slice_view(payload, "0:10").notes == []
    assert pj.slice_view(payload, "-5:", unit="lines").notes == []


def test_output_text_joins_body_and_trailer():
    assert pj.Output("a\n", "[t]").text() == "a\n[t]\n"
    assert pj.Output("a", "[t]").text() == "a\n[t]\n"
    assert pj.Output("a").text() == "a"


# --- grep ------------------------------------------------------------------------------------


def grep_oracle(pattern: str, context: int, flags: int = 0) -> str:
    """``grep -n -C CONTEXT`` of LINES with Python's re (no long lines in this corpus)."""
    rx = re.compile(pattern, flags)
    hits = [i for i, line in enumerate(LINES) if rx.search(line)]
    wanted: dict[int, str] = {}
    for i in hits:
        for j in range(max(0, i - context), min(len(LINES), i + context + 1)):
            wanted.setdefault(j, "-")
        wanted[i] = ":"
    out, prev = [], None
    for j in sorted(wanted):
        if context and prev is not None and j > prev + 1:
            out.append("--\n")
        out.append(f"{j + 1}{wanted[j]}{LINES[j]}\n")
        prev = j
    return "".join(out)


@pytest.mark.parametrize(
    ("pattern", "context", "icase"),
    [
        (r"def \w+\(", 0, False),
        (r"func|return", 2, False),
        (r"class\s+\w+", 3, False),
        (r"error", 1, True),
        (r"selector.*\$\[", 0, False),
        ("用户|登录|[一-龥]{2}", 1, False),
    ],
)
def test_grep_with_context_is_grep_minus_n_minus_c(payload, pattern, context, icase):
    out = pj.grep_view(payload, pattern, context=context, ignore_case=icase, **big())
    assert out.trailer is None
    assert out.body == grep_oracle(pattern, context, re.IGNORECASE if icase else 0)
    assert out.body  # every pattern above matches something in the corpus


def test_grep_within_a_range_scope(payload):
    out = pj.grep_view(payload, "public ", scope="1-60", **big())
    rows = [int(r.split(":", 1)[0]) for r in out.body.splitlines()]
    assert rows and all(n <= 60 for n in rows)
    assert rows == [i + 1 for i, line in enumerate(LINES[:60]) if "public " in line]
    assert grep_scope(payload, None) == (0, len(LINES), None)
    assert grep_scope(payload, "5-9") == (4, 9, 9)
    assert grep_scope(payload, f"5-{len(LINES) + 9}") == (4, len(LINES), len(LINES) + 9)
    with pytest.raises(InputError, match="starts after the last line"):
        grep_scope(payload, f"{len(LINES) + 1}-")


def test_a_cut_grep_goes_on_where_it_stopped(payload):
    """Following each trailer's next command shows every match once, in order."""
    want = [r for r in grep_oracle(r"\breturn\b", 0).splitlines()]
    got: list[str] = []
    args = ["--grep", r"\breturn\b"]
    scope = None
    for _ in range(200):
        out = pj.grep_view(payload, args[1], scope=scope, max_chars=400)
        got += out.body.splitlines()
        if out.trailer is None:
            break
        nxt = shlex.split(out.trailer.split("next: ", 1)[1].rstrip("]"))
        scope = nxt[nxt.index("--range") + 1]
    assert got == want and len(want) > 10


def test_grep_no_match_and_bad_input(payload):
    out = pj.grep_view(payload, "no such text anywhere")
    assert out.body == "" and out.notes == ["no line matches 'no such text anywhere'"]
    with pytest.raises(UsageError, match="-C -1"):
        pj.grep_view(payload, "x", context=-1)
    with pytest.raises(InputError, match="invalid regex"):
        pj.grep_view(payload, "(unclosed")
    with pytest.raises(CtxError, match="linear-time engine") as exc:
        pj.grep_view(payload, r"(a)\1")
    assert exc.value.exit_status == ExitStatus.FAILURE


def test_a_long_line_is_shown_as_a_window_around_its_match():
    line = "x" * 30_000 + " NEEDLE " + "y" * 30_000
    with open_bytes(f"before\n{line}\nafter\n".encode()) as p:
        out = pj.grep_view(p, "NEEDLE", max_chars=3000, nxt=pj.next_for("ctx:big"))
    assert out.body.startswith("2:\u2026") and "NEEDLE" in out.body
    assert len(out.body) <= 3000
    assert len(out.notes) == 1 and "line 2 has 60,008 chars" in out.notes[0]
    assert "ctx-read ctx:big --slice" in out.notes[0]


# --- the literal prefilter -------------------------------------------------------------------

REAL_PATTERNS = [
    r"def \w+\(",
    r"func\s+\(\w+ \*?\w+\)",
    r"FAILED|Error|panic:",
    r"(self|this)\.\w+ =",
    r"import\s+[\w.]+",
    r"return\s+(nil|None|null)",
    r"[Ee]rror",
    r"selector.*\$\[\?",
    r"\bfn\s+\w+\(",
    r"class\s+[A-Z]\w*",
]


@pytest.mark.parametrize("pattern", REAL_PATTERNS)
@pytest.mark.parametrize("icase", [False, True])
def test_every_matching_line_holds_a_needle(pattern, icase):
    """The prefilter's promise, on the real corpus: a line that matches holds a needle."""
    needles = required_literals(pattern, icase)
    assert needles, pattern  # each of these patterns has a usable literal
    rx = re.compile(pattern, re.IGNORECASE if icase else 0)
    matched = 0
    for line in CORPUS.split(b"\n"):
        if rx.search(line.decode("utf-8", "replace")):
            matched += 1
            hay = line.lower() if icase else line
            assert any(n in hay for n in needles), (pattern, line)
    assert matched


def test_prefilter_picks_the_longest_literal_and_refuses_what_it_cannot_read():
    assert required_literals(r"func\s+\(\w+ \*?\w+\)") == [b"func"]
    assert required_literals(r"(TODO|FIXME|XXX)") == [b"FIXME", b"TODO", b"XXX"]
    assert required_literals(r"[Ee]rror") == [b"rror"]
    assert required_literals(r"\w+") is None
    assert required_literals(r"(?i)Ünïcode", False) is None  # icase needs ASCII needles
    assert required_literals("(unclosed") is None


# --- JSON views ------------------------------------------------------------------------------

VALID = [t for t in CTS if not t.get("invalid_selector")]


@pytest.mark.parametrize("case", VALID[::7], ids=lambda t: t["name"])
def test_jsonpath_view_gives_the_compliance_results(case):
    data = json.dumps(case["document"], ensure_ascii=False).encode()
    with open_bytes(data) as p:
        values = json.loads(pj.jsonpath_view(p, case["selector"], **big()).body)
        paths = json.loads(pj.jsonpath_view(p, case["selector"], paths=True, **big()).body)
    if "result" in case:
        assert values == case["result"]
        assert paths == case["result_paths"]
    else:  # nondeterministic order: one of the given results
        assert values in case["results"]
        assert paths in case["results_paths"]


@pytest.mark.parametrize("case", [t for t in CTS if t.get("invalid_selector")][::9])
def test_an_invalid_selector_fails_before_the_document_is_read(case):
    with open_bytes(b"not json at all") as p, pytest.raises(CtxError) as exc:
        pj.jsonpath_view(p, case["selector"])
    assert exc.value.exit_status == ExitStatus.FAILURE


def test_json_lines_read_as_an_array():
    docs = [t["document"] for t in VALID[:40]]
    data = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs).encode()
    with open_bytes(data) as p:
        assert pj.load_json(p) == docs
        assert json.loads(pj.jsonpath_view(p, "$[3]", **big()).body) == [docs[3]]


def test_a_cut_jsonpath_goes_on_with_skip():
    doc = [t["name"] for t in CTS]
    data = json.dumps(doc, ensure_ascii=False).encode()
    got: list = []
    skip = 0
    with open_bytes(data) as p:
        for _ in range(100):
            out = pj.jsonpath_view(p, "$[*]", skip=skip, max_chars=2000, nxt=pj.next_for("ctx:n"))
            got += json.loads(out.body)
            if out.trailer is None:
                break
            skip = int(out.trailer.rsplit("--skip ", 1)[1].rstrip("]"))
    assert got == doc


def test_bad_json_names_where_it_breaks():
    with open_bytes(b'{"a": [1, 2,, 3]}', label="report") as p, pytest.raises(InputError) as exc:
        pj.load_json(p)
    assert str(exc.value).startswith("report is not valid JSON at line 1, column")
    with open_bytes(b'{"a": 1}\n{"b": \n', label="log") as p, pytest.raises(InputError) as exc:
        pj.load_json(p)
    assert "is not valid JSON" in str(exc.value)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b'{"a":"\xff","b":[1,2]}', "is not valid JSON: the byte 0xff at line 1, byte 7 is"),
        (b'{"a": 1,\n "b": "\xe6\x97"}', "the byte 0xe6 at line 2, byte 8 is not UTF-8"),
        (b'{"a": 1}\n{"b": "x\xfey"}\n', "the byte 0xfe at line 2, byte 9 is not UTF-8"),
    ],
)
def test_json_that_is_not_utf8_names_its_first_bad_byte(data, said):
    # orjson's own words were "at line 1, column 1: str is not valid UTF-8: surrogates not
    # allowed": the wrong place, and how it decodes rather than what is wrong with the input
    with open_bytes(data, label="report") as p, pytest.raises(InputError) as exc:
        pj.load_json(p)
    assert said in str(exc.value) and "surrogates" not in str(exc.value)
    assert exc.value.hint == "--grep or --range read any bytes"


@pytest.mark.parametrize(("data", "said"), [
    (b"", "report is empty: no JSON to query"),
    (b" \n\t\n", "report holds only white space: no JSON to query"),
])
def test_an_empty_payload_says_so_for_jsonpath(data, said):
    # orjson's words were "at line 1, column 1: Input is a zero-length, empty document"
    with open_bytes(data, label="report") as p, pytest.raises(InputError) as exc:
        pj.load_json(p)
    assert str(exc.value) == said


def test_introspect_a_json_payload():
    doc = {"tests": CTS[:3], "description": "cts"}
    with open_bytes(json.dumps(doc).encode()) as p:
        info = pj.introspect(p, "ctx:cts")
    assert info["type"] == "json" and info["top_level_keys"] == ["tests", "description"]
    assert "ctx-read ctx:cts --jsonpath '$.tests'" in info["examples"]
    assert any(u["usage"].startswith("--jsonpath") for u in info["projections"])
    with open_bytes(json.dumps(CTS[:5]).encode()) as p:
        info = pj.introspect(p, "ctx:list")
    assert info["top_level_length"] == 5 and info["element_keys"][0] == "name"
    assert (
        f"ctx-read ctx:list --jsonpath \"\\$[?@.name == '{CTS[0]['name']}']\"" in (info["examples"])
    )


def test_introspect_a_text_payload_offers_no_jsonpath(payload):
    info = pj.introspect(payload, None)
    assert info["lines"] == len(LINES) and info["chars"] == len(TEXT)
    assert not any(u["usage"].startswith("--jsonpath") for u in info["projections"])
    assert info["examples"][0] == "ctx-read --count (on the same stdin, or stash it first)"


# --- ranges read only their blocks; the parsers; the prefilter against Python's re


def test_range_read_does_not_scan(store_dir, monkeypatch):
    st = HandleStore(store_dir)
    lines = [f"line {i} " + "z" * (i % 70) for i in range(400_000)]
    st.put_bytes(("\n".join(lines) + "\n").encode(), name="huge")
    with st.open("huge") as p:
        assert p.size > 16 * (1 << 20)
        touched = []
        real = type(p).block

        def spy(self, i):
            touched.append(i)
            return real(self, i)

        monkeypatch.setattr(type(p), "block", spy)
        out = pj.range_view(p, "300001-300050")
        assert out.body.splitlines() == lines[300_000:300_050]
        assert len(set(touched)) <= 2
        touched.clear()
        out = pj.tail_view(p, 3)
        assert out.body.splitlines() == lines[-3:]
        assert len(set(touched)) <= 2


def test_parse_helpers():
    assert pj.parse_range("3-9") == (3, 9)
    assert pj.parse_range("3-") == (3, None)
    assert pj.parse_slice("-5:") == (-5, None)
    assert pj.resolve_slice(-5, None, 3) == (0, 3)
    assert pj.clamp_max_chars(None) == (12_000, None)
    assert pj.clamp_max_chars(60_000)[0] == 50_000
    assert pj.shell_quote("$.a[?@.b == 'x']") == "\"\\$.a[?@.b == 'x']\""


@pytest.mark.parametrize(
    ("pattern", "icase", "expected"),
    [
        ("FAILED|Error", False, [b"Error", b"FAILED"]),
        ("(FAILED|Error)", False, [b"Error", b"FAILED"]),
        (r"test_\w+ FAILED", False, [b" FAILED"]),
        ("错误", False, ["错误".encode()]),
        ("Error", True, [b"error"]),
        ("(?i)Error", False, [b"error"]),
        ("错误", True, None),
        ("abc.d|xyz", False, [b"abc", b"xyz"]),
        ("a.b|c", False, [b"a", b"c"]),
        (r"[QZ]{3,}[0-9]", False, [b"Q", b"Z"]),
        (r"E\d{4}", False, [b"E"]),
        (r"[0-9]+", False, None),
        (r"[^a]bc", False, [b"bc"]),
        (r"[Ee]rr", True, [b"rr"]),
        (r"\d+", False, None),
        ("x|.*", False, None),
        ("a\\nb", False, None),
        ("(?i:Err)ors", False, [b"ors"]),
    ],
)
def test_required_literals(pattern, icase, expected):
    assert pj.required_literals(pattern, icase) == expected


GREP_TEXT = (
    "INFO start\nERROR one 错误\nerror two\n\nWarn: x\xff\n"
    "tail Error\nFAILED test_a\n日本 ERROR 日本\ncode E123 QZZ9 zq\nlast"
)


@pytest.mark.parametrize(
    ("pattern", "icase"),
    [
        ("ERROR", False),
        ("error", True),
        ("FAILED|Error", False),
        (r"test_\w+", False),
        ("错误|日本", False),
        ("^$", False),
        ("", False),
        ("$", False),
        ("t$", False),
        (r"\w+$", False),
        ("Warn: x$", False),
        (r"\bcode\b", False),
        ("nomatch", False),
        ("a", True),
        (r"[QZ]{2,}[0-9]", False),
        (r"E\d{3}", False),
        (r"[xy]", True),
        ("t", False),
    ],
)
def test_grep_fast_path_equals_plain_regex(pattern, icase, monkeypatch):
    """RE2 on bytes, with or without the literal prefilter, in windows of any size, finds
    the lines Python's re finds on the decoded text."""
    import re

    from ctxtools.projections import regex as grep_mod
    from ctxtools.store import lineindex as store_mod
    from ctxtools.store import open_bytes

    data = GREP_TEXT.encode("utf-8", "surrogateescape") * 50
    lines = data.decode("utf-8", "replace").split("\n")
    py = re.compile(pattern, re.IGNORECASE if icase else 0)
    expected = [(i, line) for i, line in enumerate(lines) if py.search(line)]
    rx = pj.compile_regex(pattern, icase)
    sizes = [
        (grep_mod.GREP_CHUNK, grep_mod.GREP_OVERLAP, store_mod.BLOCK_SIZE, store_mod.STRIDE, 2000),
        (64, 16, 16, 32, 0),
        (23, 5, 7, 9, 3),
    ]
    for chunk, overlap, block, stride, dense in sizes:
        with monkeypatch.context() as m:
            m.setattr(grep_mod, "GREP_CHUNK", chunk)
            m.setattr(grep_mod, "GREP_OVERLAP", overlap)
            m.setattr(grep_mod, "DENSE_NEEDLES", dense)  # 0: the regex alone after one miss
            m.setattr(grep_mod, "PREFILTER_MIN_BYTES", 1)  # short needles prefilter too
            m.setattr(store_mod, "BLOCK_SIZE", block)  # lines straddle many blocks
            m.setattr(store_mod, "STRIDE", stride)
            with open_bytes(data) as p:
                assert list(pj.iter_matching_lines(p, rx)) == expected
            m.setattr(grep_mod, "required_literals", lambda *a: None)
            with open_bytes(data) as p:  # the same through the regex alone
                assert list(pj.iter_matching_lines(p, rx)) == expected
