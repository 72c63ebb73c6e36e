"""The scanners' fast paths give exactly what the plain ones give: masking led by the
characters a literal starts with, references counted without re-splitting ASCII words,
the tree-sitter mask kept as bytes."""

from __future__ import annotations

import pytest

from ctxtools.source.scan import common, go, java, js, scan_source
from ctxtools.source.scan.common import Definition, count_references
from ctxtools.source.scan.mask import mask_clike

JAVA = '''
/* a block */ // a line
class A { String s = "x/y\\"z"; char c = '\\''; int d = a / b;
  String t = """
    text "" block
    """; // tail
  int e = x/*inline*/+ 'q'; String u = "unclosed
}
'''
GO = 'package p\n// c\nvar s = `raw\n"q"` + "x\\"y" + \'r\' / 2 /* b */\nvar t = "open\n'
JS = (
    "const r = /a\\/b[/]/g, d = a / b / c; // c\n"
    "const t = `x ${ f('}') + `in ${\"s\"}` } y`; /* b */ const q = 'a\\'b';\n"
    "if (/^[a-z]:/.test(p)) {} const u = `open ${ x"
)


@pytest.mark.parametrize(
    ("module", "text"), [(java, JAVA), (go, GO), (js, JS)], ids=["java", "go", "js"]
)
def test_masking_led_by_first_characters_is_the_plain_search(module, text):
    assert module._LEAD is not None
    for sample in (text, text * 3, text[5:], text + "/"):
        plain = mask_clike(sample, module._MASTER)
        led = mask_clike(sample, module._MASTER, module._LEAD)
        assert led.text == plain.text
        assert led.comments == plain.comments


@pytest.mark.parametrize(("module", "text"), [(java, JAVA), (go, GO), (js, JS)])
def test_every_master_match_starts_where_the_lead_finds(module, text):
    for m in module._MASTER.finditer(text):
        assert module._LEAD.match(text, m.start()), (module.__name__, m.group())


KEYWORDS = frozenset({"if", "return", "int"})


def _plain_counts(masked: bytes, keywords, definitions) -> dict[str, int]:
    """The reference counts by the general (non-ASCII) path, word by word."""
    import re
    from collections import Counter

    counts: Counter[str] = Counter()
    for word in re.findall(r"\w+", masked.decode("utf-8", "replace")):
        if not word[0].isdigit() and word not in keywords:
            counts[word] += 1
    # (the definition sites are taken off as the library does: the fast path under test
    # is the counting of the words, not this step)
    return common._less_definitions(dict(counts), definitions)


@pytest.mark.parametrize(
    "text",
    [
        b"int f(int x) { if (x) return g(x) + 0x1F + 2e3 + f(x); return h_1; }",
        b"int f(int x) { return caf\xc3\xa9(x) + \xe5\x90\x8d\xe5\x89\x8d + f(x); } // \xff",
        b"",
        b"123 456 _ __x x1 1x",
    ],
)
def test_reference_counts_same_on_ascii_and_unicode_paths(text):
    defs = [Definition("function", "f", 1, "int f(int x)"), Definition("function", "h_1", 1, "")]
    got = count_references(text, KEYWORDS, defs)
    assert got == _plain_counts(text, KEYWORDS, defs)
    assert list(got) == list(_plain_counts(text, KEYWORDS, defs))  # the same order
    assert count_references(text.decode("utf-8", "replace"), KEYWORDS, defs) == got
    assert "0x1F" not in got and "x1F" not in got and "int" not in got


def test_treesitter_references_ignore_comments_and_strings():
    pytest.importorskip("tree_sitter_scala")
    text = 'object O {\n  // Hidden in comment\n  val v = "Hidden in string" + Used\n}\n'
    refs = scan_source("a.scala", text).references
    assert refs.get("Used") == 1
    assert "Hidden" not in refs and "comment" not in refs and "string" not in refs


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("class A : public B {\n};\n", "cpp"),  # on the very first line
        ("/* x */\n  template <typename T> struct S;\n", "cpp"),
        ("int f(void);\nnamespace a {\n}\n", "cpp"),
        ("#include <vector>\n", "cpp"),
        ("int f(void); /* template <T> */ int g(void);\n", "c"),  # not at a line's start
        ("/* a class, public */ int x;\nvoid *p = mynullptr;\n", "c"),
        ("/* a class\n   public: ... */ int x;\n", "cpp"),  # (comments are not skipped)
        ("void f(void) noexcept;\n", "cpp"),
        ("void f(void) { return std::move(x); }\n", "cpp"),
        ("void f(void) { return mystd::move(x); }\n", "c"),
        ("// using namespace std is C++\nint x;\n", "c"),
        ("int x;\r\nusing namespace std;\r\n", "cpp"),
    ],
)
def test_header_language_by_each_kind_of_evidence(text, language):
    from ctxtools.source.scan import header_language

    assert header_language(text) == language


@pytest.mark.parametrize(
    ("src", "blanked"),
    [
        (b"int WINAPI f_1(void);", b"int        f_1(void);"),
        (b"LRESULT CALLBACK Wnd_Proc(HWND h);", b"LRESULT          Wnd_Proc(HWND h);"),
        (b"void __stdcall g(int);", b"void           g(int);"),
        (b"int MYWINAPI f_1(void);", b"int MYWINAPI f_1(void);"),  # part of another name
        (b"int f_1(void);", b"int f_1(void);"),
    ],
)
def test_calling_conventions_blanked_for_the_parser(src, blanked):
    from ctxtools.source.scan.tsprep_c import prepare

    assert prepare(src) == blanked


def _chunks_of(order: list, processes: int, chunk: int) -> dict[int, list]:
    """Process -> the items forked_results deals it, for ORDER."""
    dealt: dict[int, list] = {}
    for n, i in enumerate(range(0, len(order), chunk)):
        dealt.setdefault(n % processes, []).extend(order[i : i + chunk])
    return dealt


def test_parallel_scan_deals_this_process_the_cheapest_chunks_when_cpus_are_short():
    from ctxtools.source import scanset

    chunk = scanset.CHUNK
    for count in (1000, 20 * chunk, 7 * chunk + 1):
        jobs = list(range(count, 0, -1))  # dearest first (the cost: the value)
        order = scanset._dealt(jobs, 3, 2)
        assert sorted(order) == sorted(jobs)  # nothing lost, nothing twice
        rest = set(order[len(order) - len(order) % chunk :])  # (last, whoever gets them)
        dealt = {k: [j for j in v if j not in rest] for k, v in _chunks_of(order, 3, chunk).items()}
        assert max(dealt[0]) < min(dealt[1] + dealt[2])  # the cheapest whole chunks
        assert len(dealt[0]) == chunk * len(range(0, count // chunk, 3))
        for k in (1, 2):  # each child still starts with its dearest
            assert dealt[k] == sorted(dealt[k], reverse=True)
    jobs = list(range(1000, 0, -1))
    assert scanset._dealt(jobs, 4, 4) == jobs  # a CPU each: as they were
    assert scanset._dealt(jobs, 3, 8) == jobs
    assert scanset._dealt(jobs[: chunk + 3], 3, 2) == jobs[: chunk + 3]  # two chunks


def test_c_literal_stripping_matches_the_plain_pattern():
    import re

    from ctxtools.source.scan.tsrules_c import _LITERALS

    plain = re.compile(  # one alternation per byte, backtracking: the reference
        rb"//[^\n]*|/\*[^*]*\*+(?:[^/*][^*]*\*+)*/|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.){1,8}'"
    )
    samples = [
        b'char *s = "a\\"b\\\\"; int c = \'\\\'\'; /* x ** y */ f(); // tail\n',
        b'"line\\\ncontinued" "open\n "" \'\' \'\\x41\' \'abcdefghij\'',
        b"/* unterminated ** comment\n int x; /***/ /* * / */ a / b",
        b'"esc at end \\',
    ]
    for src in samples:
        assert _LITERALS.sub(b" ", src) == plain.sub(b" ", src), src
