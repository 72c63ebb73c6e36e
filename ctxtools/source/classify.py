"""What a file is: the toolkit's one answer, asked by every command that lists or chooses files.

Three questions, one function each, so that the repo map, the pack, the token tree,
ctx-excerpt, the memory section and the mentions can never disagree about a file (whether
its bytes are text at all is the question below them, ``ctxtools.binary.is_binary``):

``role(rel)`` and ``is_test(rel)``
    ``test``, ``docs``, ``example``, ``config`` or ``source``, by the path alone. A test is a
    test file, a test helper or test data: a test file name (``test_x.py``, ``x_test.go``,
    ``x.spec.ts``, ``FooTest.java``, ``conftest.py``) anywhere, or a path under a directory
    of tests (``tests/``, ``testing/``, ``testdata/``, ``fixtures/``, ``e2e/``,
    ``__mocks__/`` ...). Between a tests and a docs directory the outer one decides
    (``docs/topics/testing/index.txt`` is docs, ``tests/docs/a.py`` a test).
``listing_skip(rel)``
    Why a directory listing leaves a path out: ``vendored`` (under ``vendor/``,
    ``node_modules/``, ``third_party/`` ...) or ``minified`` (``.min.js`` ...).
``noise_by_name(rel)``, ``content_noise(data)``, ``noise_reason(rel, data)``
    Why a file is no candidate for a pack by default: the listing's reasons, a translation
    catalogue, a lock file, a source map, the root's ``.ctxignore`` (by name); ``binary``,
    ``data`` (a data file over ``DATA_MAX_BYTES``, or over an eighth of it under a fixtures
    directory), ``minified`` (lines over ``MAX_AVG_LINE`` bytes on average) and
    ``generated`` (a generator's mark in the first ``HEAD_LINES`` lines, but not a Django
    migration whose author added operations of their own). The repo map leaves out of its
    scans what ``content_noise`` names.

``banner_lines(data)``
    How many lines a licence banner takes at the top of a file: a comment block opening
    it that names a copyright or a licence, with the blank lines after it (ctx-excerpt's
    head starts after it: 15 lines of licence said nothing of the file).

Nothing is read here: callers pass the bytes they already hold. The rules are data (the
sets below); ``tests/lib/test_classify.py`` holds the table of paths every caller is
checked against.
"""

from __future__ import annotations

from ctxtools.binary import is_binary

MAX_AVG_LINE = 1000  # bytes per line on average over which a file is minified
HEAD_LINES = 5  # the lines a generator's mark is looked for in ...
HEAD_BYTES = 2048  # ... within this many bytes
DATA_MAX_BYTES = 64 * 1024

# -- the rules, as data --------------------------------------------------------------------

VENDOR_DIRS = frozenset(
    {"vendor", "vendors", "node_modules", "third_party", "third-party", "bower_components"}
)
MINIFIED_SUFFIXES = (".min.js", ".min.mjs", ".min.cjs", ".min.css", "-min.js", ".bundle.js")
SOURCE_MAP_SUFFIXES = (".js.map", ".css.map", ".map")
CATALOGUE_SUFFIXES = (".po", ".pot", ".mo")
LOCK_FILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "Pipfile.lock",
        "Cargo.lock",
        "composer.lock",
        "Gemfile.lock",
        "go.sum",
        "uv.lock",
        "pdm.lock",
        "bun.lockb",
        "mix.lock",
        "pubspec.lock",
        "Podfile.lock",
        "flake.lock",
        "packages.lock.json",
        "gradle.lockfile",
    }
)
DATA_EXTS = frozenset(
    {
        ".json",
        ".jsonl",
        ".ndjson",
        ".csv",
        ".tsv",
        ".xml",
        ".yaml",
        ".yml",
        ".dat",
        ".log",
        ".svg",
        ".geojson",
        ".parquet",
    }
)
# Where data is held for tests or programs: a data file there is noise at a smaller size.
DATA_DIRS = frozenset(
    {"fixtures", "fixture", "testdata", "test_data", "__snapshots__", "snapshots", "data"}
)
# Directories whose files are tests, test helpers or test data (lower case).
TEST_DIRS = frozenset(
    {
        "test",
        "tests",
        "testing",
        "spec",
        "specs",
        "e2e",
        "__tests__",
        "__mocks__",
        "__snapshots__",
        "testdata",
        "test_data",
        "test-data",
        "fixtures",
        "fixture",
        "test_utils",
        "testutils",
        "testcases",
        "testsuite",
        "unittests",
        "t",  # git's and Perl's test directory (t/t7400-submodule-basic.sh, t/basic.t)
    }
)
TEST_DIR_SUFFIXES = (".tests", ".test", ".unittests")  # C#'s Foo.Tests/
TEST_PREFIXES = ("test_", "tests_", "test-")
TEST_NAMES = frozenset({"conftest.py", "tests.py"})
TEST_STEM_SUFFIXES = ("_test", "_tests", "_unittest")
TEST_INFIXES = (".test.", ".spec.")  # a.test.ts, a.spec.js, and jest's a.test.tsx.snap
# FooTest.java, FooTests.cs, FooSpec.kt, FooSuite.scala: the case matters (Latest.java is none).
CAMEL_TEST_SUFFIXES = ("Test", "Tests", "Spec", "Suite")
CAMEL_TEST_EXTS = frozenset({".java", ".kt", ".kts", ".cs", ".swift", ".scala", ".php", ".groovy"})
# Bats; Perl's and cram's test scripts; test snapshots (Jest's and Vitest's .snap, and
# Rust's insta, whose .snap files sit in a snapshots/ directory beside the source)
TEST_EXTS = frozenset({".bats", ".t", ".snap", ".pending-snap"})
DOC_DIRS = frozenset({"doc", "docs", "documentation", "man", "site", "website"})
DOC_EXTS = frozenset(
    {".md", ".rst", ".txt", ".adoc", ".asciidoc", ".textile", ".tex", ".html", ".htm"}
)
EXAMPLE_DIRS = frozenset(
    {
        "example",
        "examples",
        "demo",
        "demos",
        "sample",
        "samples",
        "tutorial",
        "tutorials",
        "benchmarks",
        "bench",
        "benchmark",
        "gallery",
        # (not scripts/: a project's build, release and code-generation scripts are its
        # own code, as tools/ and bin/ are; a fix of generate-helpers.js is in one)
    }
)
CONFIG_EXTS = frozenset(
    {".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".conf", ".properties", ".env.example",
     # build files: MSBuild's projects, solutions and their imports; Gradle's; CMake's
     ".vcxproj", ".vcproj", ".csproj", ".fsproj", ".vbproj", ".sln", ".props", ".targets",
     ".filters", ".gradle", ".cmake"}
)
CONFIG_NAMES = frozenset(
    {
        "manifest.in",
        "makefile",
        "gnumakefile",
        "makefile.am",
        "makefile.in",
        "configure.ac",
        "cmakelists.txt",
        "meson.build",
        "meson_options.txt",
        "pom.xml",
        "build.xml",
        "dockerfile",
        "setup.cfg",
        "tox.ini",
        "changelog",
        "changes",
        "history",
        "news",
        "authors",
        "contributors",
        "license",
        "copying",
        "notice",
        "codeowners",
    }
)
ROLES = ("source", "test", "docs", "example", "config")

# A generator's mark, in the first HEAD_LINES lines (case ignored). Deliberate marks
# (``@generated``, ``DO NOT EDIT``, Go's ``Code generated by``), a comment that opens with
# "generated" (``# Generated by Django``, ``// Auto-generated``), and the sentences
# generators write (``This file was automatically generated``, ``auto-generated by X``).
# Prose that merely uses the words (``reports generated by mypy``, ``can be automatically
# generated by matching``) is no mark: a file taken for generated loses its definitions.
_GENERATED_PATTERN = (
    rb"(?im)@generated\b"
    rb"|do not edit"
    rb"|\bcode generated by\b"
    rb"|^\s*(?:[#/*;!%<\"'-]|\(\*)[\s#/*;!%<\"'-]*(?:auto-?|automatically )?generated"
    rb"(?:\s+(?:by|from|with|using|file|code|automatically|on)\b|\s*[.:,;!]|[ \t]*\r?$)"
    rb"|\b(?:this|the) (?:file|module|code|header|source|query|script) (?:(?:is|was|has been) )?"
    rb"(?:auto-?|automatically )?generated\b"
    rb"|\bgenerated (?:automatically )?by (?:automake|autoconf|configure|libtool)\b"
    rb"|\bthis is an? (?:auto-?|automatically )?generated (?:file|module|header)\b"
    rb"|\bauto-?generated (?:by|from|with|using)\b"
)
_generated_re = None
# Django writes "# Generated by Django X on DATE" atop every migration, also the empty one a
# data migration starts as (``makemigrations --empty``), and the line stays when its author
# adds operations: RunPython's functions and RunSQL's statements are written by hand, so a
# migration holding one is source (a fix in a data migration's function is a fix in code).
_DJANGO_MARK = b"# generated by django"
_HAND_OPERATIONS = (b"RunPython(", b"RunSQL(")


def _ext(low: str) -> str:
    dot = low.rfind(".")
    return low[dot:] if dot > 0 else ""


# -- role -----------------------------------------------------------------------------------


def _test_name(name: str, low: str) -> bool:
    if low.startswith(TEST_PREFIXES) or low in TEST_NAMES or ".test." in low or ".spec." in low:
        return True
    dot = low.rfind(".")
    if dot <= 0:
        return low.endswith(TEST_STEM_SUFFIXES)
    ext = low[dot:]
    stem = low[:dot]
    if stem.endswith(TEST_STEM_SUFFIXES) or ext in TEST_EXTS:
        return True
    if stem.endswith("_spec") and ext not in DATA_EXTS and ext not in DOC_EXTS:
        return True  # RSpec, busted; not an api_spec.yaml
    if ext in CAMEL_TEST_EXTS:
        cased = name[:dot]
        return any(cased.endswith(s) and len(cased) > len(s) for s in CAMEL_TEST_SUFFIXES)
    return False


# A directory's say over the files under it (the outermost one that has a say decides).
_DIR_ROLE = {
    **dict.fromkeys(EXAMPLE_DIRS, "example"),
    **dict.fromkeys(DOC_DIRS, "docs"),
    **dict.fromkeys(TEST_DIRS, "test"),
}


def role(rel: str) -> str:
    """``test``, ``docs``, ``example``, ``config`` or ``source`` for REL (``/``-separated,
    relative to the root)."""
    low_rel = rel.lower()
    slash = low_rel.rfind("/")
    low = low_rel[slash + 1 :]
    if _test_name(rel[slash + 1 :], low):
        return "test"
    example = False
    if slash > 0:
        get = _DIR_ROLE.get
        for d in low_rel[:slash].split("/"):
            said = get(d)
            if said is None:
                if "." in d and d.endswith(TEST_DIR_SUFFIXES):
                    return "test"
            elif said != "example":
                return said
            else:
                example = True
    if low in CONFIG_NAMES:  # (by its whole name first: CMakeLists.txt is no document)
        return "config"
    ext = _ext(low)
    if ext in DOC_EXTS:
        return "docs"
    if example:
        return "example"
    if ext in CONFIG_EXTS or low.startswith("."):
        return "config"
    return "source"


def is_test(rel: str) -> bool:
    """Whether REL is a test, a test helper or test data (``role(rel) == "test"``)."""
    return role(rel) == "test"


# -- noise ----------------------------------------------------------------------------------


def listing_skip(rel: str) -> str | None:
    """``vendored`` or ``minified`` when a directory listing leaves REL out, else None."""
    slash = rel.rfind("/")
    if slash >= 0 and not VENDOR_DIRS.isdisjoint(rel[:slash].split("/")):
        return "vendored"
    if rel.lower().endswith(MINIFIED_SUFFIXES):
        return "minified"
    return None


def noise_by_name(rel: str) -> str | None:
    """Why REL is no pack candidate by default, from its path alone (it need not be read)."""
    skip = listing_skip(rel)
    if skip is not None:
        return skip
    name = rel[rel.rfind("/") + 1 :]
    low = name.lower()
    if name == ".ctxignore":
        return "ctxtools configuration"
    if low.endswith(CATALOGUE_SUFFIXES):
        return "translation catalogue"
    if name in LOCK_FILES or low.endswith(".lock"):
        return "lock file"
    if low.endswith(SOURCE_MAP_SUFFIXES):
        return "minified"
    return None


def is_generated(data: bytes) -> bool:
    """Whether a generator's mark is in the first HEAD_LINES lines of DATA (a whole file:
    a Django migration with operations written by hand is not generated)."""
    global _generated_re
    head = data[:HEAD_BYTES]
    cut = -1
    for _ in range(HEAD_LINES):
        cut = head.find(b"\n", cut + 1)
        if cut < 0:
            break
    head = (head[:cut] if cut >= 0 else head).lower()
    if b"generat" not in head and b"do not edit" not in head:
        return False  # every mark holds one of the two: most files end here, in C
    if _generated_re is None:
        import re

        _generated_re = re.compile(_GENERATED_PATTERN)
    if _generated_re.search(head) is None:
        return False
    return not (_DJANGO_MARK in head and any(op in data for op in _HAND_OPERATIONS))


def is_minified(data: bytes) -> bool:
    """Whether DATA (a whole file) has lines of over MAX_AVG_LINE bytes on average."""
    size = len(data)
    if size <= MAX_AVG_LINE:
        return False
    # Enough lines in the first 64 KiB settle it without counting the rest (a big file of
    # ordinary lines); the answer is the whole count's either way. A smaller file is
    # counted whole, once: the pack's ranking asks ``line_breaks`` of it next.
    if size > 1 << 16 and data.count(b"\n", 0, 1 << 16) >= size / MAX_AVG_LINE:
        return False
    lines = line_breaks(data) + (0 if data.endswith(b"\n") else 1)
    return size / max(lines, 1) > MAX_AVG_LINE


_last_breaks: tuple[bytes, int] | None = None  # the last bytes counted, and their count


def line_breaks(data: bytes) -> int:
    """The line feeds in DATA, the last answer remembered: a candidate's bytes are counted
    by ``is_minified``, then by the ranking's ``Source`` when it lets them go -- one count
    of each file, not two (on Django's 4,000 files the second was ~2% of a warm pack)."""
    global _last_breaks
    last = _last_breaks
    if last is not None and last[0] is data:
        return last[1]
    n = data.count(b"\n")
    if len(data) <= 1 << 16:  # (a large file's bytes are not kept alive by the memo)
        _last_breaks = (data, n)
    return n


def content_noise(data: bytes) -> str | None:
    """``binary``, ``minified`` or ``generated`` for a file's whole content DATA, else None:
    what the repo map does not scan."""
    if is_binary(data):
        return "binary"
    if is_minified(data):
        return "minified"
    if is_generated(data):
        return "generated"
    return None


def noise_reason(
    rel: str, data: bytes, size: int | None = None, by_name: bool = True
) -> str | None:
    """Why REL (whole content DATA; SIZE bytes when DATA is only its head) is no pack
    candidate by default, or None. Not BY_NAME: the caller has asked ``noise_by_name``
    already (it said None)."""
    reason = noise_by_name(rel) if by_name else None
    if reason is not None:
        return reason
    size = len(data) if size is None else size
    if is_binary(data):
        return "binary"
    slash = rel.rfind("/")
    if _ext(rel[slash + 1 :].lower()) in DATA_EXTS and size > DATA_MAX_BYTES // 8:
        dirs = rel[:slash].lower().split("/") if slash >= 0 else ()
        if size > DATA_MAX_BYTES or not DATA_DIRS.isdisjoint(dirs):
            return "data"
    if size == len(data) and is_minified(data):
        return "minified"
    if is_generated(data):
        return "generated"
    return None


# -- a licence banner ------------------------------------------------------------------------

BANNER_SCAN_LINES = 200  # a banner longer than this is not looked for to its end
_BANNER_PREFIXES = (b"//", b"#", b"--", b";")  # a block of line comments
_banner_re = None


def banner_lines(data: bytes) -> int:
    """How many lines of DATA's top are a licence banner: a comment block that opens the
    file (``/* ... */``, or lines of ``//``, ``#``, ``--`` or ``;`` comments; not a ``#!``
    line, not a ``#include``) and says "copyright", "licence"/"license" or "SPDX", with the
    blank lines after it; 0 when the file opens otherwise, or the whole file is one."""
    global _banner_re
    lines = data[: 1 << 16].split(b"\n", BANNER_SCAN_LINES)[:BANNER_SCAN_LINES]
    first = lines[0].lstrip()
    if first.startswith(b"/*"):
        end = next((k + 1 for k, ln in enumerate(lines)
                    if b"*/" in (ln if k else first[2:])), 0)
    else:
        prefix = next((p for p in _BANNER_PREFIXES if first.startswith(p)), None)
        if prefix is None or first.startswith(b"#!"):
            return 0
        end = 0
        for ln in lines:
            t = ln.lstrip()
            if not t.startswith(prefix) or (prefix == b"#" and t[1:2].isalpha()):
                break  # (#include, #define, #if: the preprocessor's lines, not comments)
            end += 1
    if not end or end >= len(lines):
        return 0  # no end in sight, or nothing after it
    if _banner_re is None:
        import re

        _banner_re = re.compile(rb"copyright|licen[cs]e|spdx-license-identifier", re.I)
    if _banner_re.search(b"\n".join(lines[:end])) is None:
        return 0
    while end < len(lines) and not lines[end].strip():
        end += 1
    return end if end < len(lines) else 0

