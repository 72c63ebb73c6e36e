"""One analyzer: every caller that reads a task -- the repo map's personalisation, the
memory section, the skills, the retrieval engine -- reads the same words from it, and a
document's words are split the same way, so a task word and a document word meet.

Each caller is asked through its own public entry point, with probe documents (a file
path, a memory section, a skill description, the engine's terms) that are one word each:
the words a caller matches are the probes it lights up. The expected words of each task
are the table's, written by hand; the probes also hold words that some reader used to
take (stop words of one list and not another, the words of an @-mention, the parts of a
path that only say where a file was on the reporter's machine).
"""

from __future__ import annotations

import pytest

from ctxtools.analyzer import parse_query, read_task
from ctxtools.analyzer.tokenizer import is_stop, parts, words
from ctxtools.memory import rank_memory
from ctxtools.repomap.rank import personalisation
from ctxtools.retrieval.terms import Terms
from ctxtools.skills import choose_skills, load_skills
from ctxtools.source.scanset import FileScan

TRACE = """Traceback (most recent call last):
  File "/home/ann/venv/lib/python3.11/site-packages/shop/orders.py", line 88, in bulk_create
    self._insert(rows)
ValueError: Cannot use None as a query value
"""

# (task, its words, probe words it must not light up)
TABLE = [
    (
        "Fix HandleStore.put_many crash in src/store/batch.py when the lock times out "
        "— see @README.md",
        {"handlestore", "handle", "store", "put_many", "put", "many", "crash", "src"}
        | {"batch", "lock", "times"},
        {"fix", "see", "out", "when", "readme", "py", "the"},
    ),
    (
        TRACE,
        {"shop", "orders", "bulk_create", "bulk", "create", "_insert", "rows", "valueerror"}
        | {"value", "error", "query"},
        {"traceback", "recent", "call", "file", "line", "home", "ann", "venv", "site"}
        | {"packages", "self", "cannot", "insert"},
    ),
    (
        "修复缓存超时：HandleStore 在 put_many 时崩溃",
        {"修", "复", "缓", "存", "超", "时", "在", "崩", "溃", "handlestore", "handle", "store"}
        | {"put_many", "put", "many"},
        {"的", "the"},
    ),
    ("caching", {"caching"}, {"cachingx"}),
    ("error in the test file", {"error", "test", "file"}, {"the"}),
    ("please", set(), {"please"}),
    # a text of nothing but words a report is phrased in means them (a log searched for
    # FAILED); a request ("fix the bug") still means nothing
    ("FAILED with null", {"failed", "null"}, {"with", "fix"}),
    ("tests/a.py::test_login FAILED", {"tests", "test_login", "test", "login"}, {"failed"}),
    ("fix the bug in it", set(), {"fix", "bug", "the"}),
    # where a link points is no word of the task
    (
        "Stale cache, see https://example.org/shot.png?width=518&height=318",
        {"stale", "cache", "shot", "png"},
        {"example", "org", "width", "height", "https"},
    ),
    # a template's hidden comment is nobody's words, and its @-mention no mention
    (
        "Stale cache <!-- Thank you for contributing! Link the issue, cc @maintainers -->",
        {"stale", "cache"},
        {"thank", "contributing", "link", "issue", "maintainers"},
    ),
    # a version report says which releases ran: its package names are no words
    (
        "Stale cache\n\n**Versions:**\n - ``gdcm``: 2.8.9\n - numpy: _module not found_",
        {"stale", "cache"},
        {"gdcm", "numpy", "module", "found"},
    ),
]


def _repomap_words(task: str, probes: list[str]) -> set[str]:
    """The probes whose file (``PROBE.txt``) the repo map's personalisation favours."""
    scans = [FileScan(f"{p}.txt", None) for p in probes]
    scans.append(FileScan("zzz_unrelated_zzz.txt", None))
    personal, _idents = personalisation(scans, set(), task)
    if personal is None:
        return set()
    base = min(personal)
    return {p for p, w in zip(probes, personal, strict=False) if w > base}


def _memory_words(task: str, probes: list[str], tmp_path, monkeypatch) -> set[str]:
    """The probes whose memory section (its text the probe) scores against TASK."""
    mem = tmp_path / "memory"
    mem.mkdir()
    for i, p in enumerate(probes):
        (mem / f"m{i}.md").write_text(f"{p}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # a section's file name counts: memory/m0.md, no more
    ranking = rank_memory(["memory"], task, method="tfidf", use_cache=False)
    by_file = {s.chunk.file.rsplit("/", 1)[-1]: s.score for s in ranking.chunks}
    return {p for i, p in enumerate(probes) if by_file.get(f"m{i}.md", 0.0) > 0}


def _skills_words(task: str, probes: list[str], tmp_path) -> set[str]:
    """The probes whose skill (its description the probe) is a card for TASK."""
    root = tmp_path / "skills"
    for i, p in enumerate(probes):
        (root / f"k{i}").mkdir(parents=True)
        (root / f"k{i}" / "SKILL.md").write_text(
            f"---\nname: k{i}\ndescription: {p}\n---\nbody\n", encoding="utf-8"
        )
    skills, _notes = load_skills(root)
    cards = {s.name for s, _score in choose_skills(skills, task).cards}
    return {p for i, p in enumerate(probes) if f"k{i}" in cards}


# (ids from the task alone: a set's repr follows the hash seed, which xdist's workers
# need not share, and workers that name a test differently refuse to run)
@pytest.mark.parametrize(("task", "expected", "others"), TABLE, ids=[r[0][:20] for r in TABLE])
def test_every_caller_reads_the_same_words(task, expected, others, tmp_path, monkeypatch):
    probes = sorted(expected | others)
    # the engine is given the task without its mentions, as ctx-pack gives it
    engine = {p for p in probes if p in parse_query(read_task(task).prose).terms}
    assert set(read_task(task).words) == expected
    assert engine == expected, "engine"
    assert _repomap_words(task, probes) == expected, "repo map"
    assert _memory_words(task, probes, tmp_path, monkeypatch) == expected, "memory"
    assert _skills_words(task, probes, tmp_path) == expected, "skills"


@pytest.mark.parametrize("task", [row[0] for row in TABLE])
def test_the_task_is_read_once_and_its_views_agree(task):
    read = read_task(task)
    assert read_task(task) is read
    assert read.query.words == read.words == tuple(words(read.prose))
    assert set(read.tokens) <= set(read.words)
    assert set(read.words) <= set(read.query.terms)  # forms are added, never words lost
    # a stop word is read only from a text with no other word (FAILED, null)
    stops = [w for w in read.words if is_stop(w)]
    assert not stops or len(stops) == len(read.words)


def test_mentions_are_read_with_the_task_and_are_no_words():
    read = read_task("see @README.md and @skill:pdf, then fix @src/x.py:12")
    assert [(m.kind, m.raw) for m in read.mentions] == [
        ("basename", "README.md"),
        ("skill", "skill:pdf"),
        ("path", "src/x.py"),
    ]
    assert read.skill_names == ["pdf"]
    assert read.words == ()


# A commit message as a CI job hands it over (Kafka's and git's trailers, Gerrit's change
# id, git-svn's origin): the people lines and the tools' lines are no part of what the
# task is about.
COMMIT = """MINOR: Fix javadoc warning in StreamsMetric

Fixes: 3f2a91c ("KAFKA-1234: record_latency drops the sensor")
Reviewers: Matthias J. Sax <mjsax@apache.org>, Bill Bejeck <bbejeck@apache.org>
Signed-off-by: Ann Example <ann@example.org>
Co-authored-by: Bo Sample <bo@users.noreply.github.com>
Change-Id: I8f9d0c2e4b7a61f3c0de2b9a8e7f6d5c4b3a2910
git-svn-id: https://svn.apache.org/repos/asf/kafka/streams/trunk@280191 13f79535-47bb-0310
"""


def test_the_people_lines_of_a_commit_message_are_no_words():
    bare = "MINOR: Fix javadoc warning in StreamsMetric\n\n" + COMMIT.splitlines()[2]
    read, plain = read_task(COMMIT), read_task(bare)
    assert read.words == plain.words
    assert read.query.terms == plain.query.terms
    assert read.query.names == plain.query.names
    assert "apache" not in read.query.terms and "matthias" not in read.words
    assert not {"trunk", "repos", "asf", "svn"} & set(read.words)  # the tools' lines
    assert "record_latency" in read.query.names  # the Fixes: line names code: kept
    assert parse_query(COMMIT).terms == read.query.terms  # the engine's own entry too
    # a word "reviewers" in prose is no trailer
    assert "reviewers" in parse_query("the reviewers: list is empty").terms


# A pull request's body as a CI job hands it over: its template's instructions stay in
# it as Markdown comments, hidden when it is shown.
TEMPLATED = """Expose the recursion limit as a config option

<!--
if this PR closes one or more issues, link them with a keyword:
- fixes #xxxx
-->

# Description
<!-- Thank you for improving the project. Describe your change; **provide examples**
if it affects the user experience, and see @CONTRIBUTING.md. -->

Exposes `recursion_limit` under the config.

```html
<!-- a comment in code is code: kept -->
```
"""


def test_a_templates_hidden_comments_are_no_words():
    read = read_task(TEMPLATED)
    for hidden in ("closes", "keyword", "improving", "examples", "experience"):
        assert hidden not in read.words, hidden
        assert hidden not in parse_query(TEMPLATED).terms, hidden
    assert read.mentions == ()  # @CONTRIBUTING.md is inside a comment
    assert {"recursion_limit", "config", "exposes"} <= set(read.words)
    assert "comment" in read.words and "kept" in read.words  # in the code block
    # what is left is where it was: the comments are blanked, not cut out
    assert len(read.prose) == len(TEMPLATED)
    assert read.prose.count("\n") == TEMPLATED.count("\n")
    # an unclosed comment hides nothing (it is not one), and a task that is nothing but
    # a comment is about it
    assert "recursion" in read_task("<!-- recursion limit").words
    assert "recursion" in read_task("<!-- recursion limit -->").words
    assert "recursion" in read_task("`<!-- recursion -->` is shown").words


LINKED = """Nested quotes are reused before Python 3.12

The input at https://github.com/acme/fmt/blob/96b156303b81c5114e8375a6ffd467fb638c3963/src/fmt/string/normalize.py#L707
is invalid (https://github.com/acme/fmt/issues/20774, and the screenshot
![](https://media.example.net/attachments/6011/1442/image0.jpg?ex=69248c21&hm=bc212938013ec4163d7611e8c025ec996591cdb14ae2b0e426917c8c54eb1a5f&format=webp&width=518)).
The mirror shows it too: https://gitlab.com/acme/fmt/-/blob/main/src/fmt/quotes.py#L3-L9.
See https://docs.python.org/3/reference/lexical_analysis.html#formatted-string-literals.
"""


def test_where_a_link_points_is_no_word_and_a_code_hosts_file_link_is_a_path():
    read = read_task(LINKED)
    q = parse_query(LINKED)
    # the host, the query string, a line anchor, a code host's view and revision, and
    # all but the project of a link to an issue: no words, no paths
    for gone in ("https", "github", "gitlab", "blob", "issues", "media", "example",
                 "format", "webp", "width", "l707", "l3", "bc212938013", "docs"):
        assert gone not in read.words, gone
        # ("format" is a term all the same: a form of the page's "formatted")
        assert gone not in q.terms or gone == "format", gone
    assert not [p for p in q.paths if "github" in p or "acme" in p]
    assert "acme" in read.words and "fmt" in read.words  # the project a link names
    # a code host's link to a file names the file, as a path written in the task does
    assert "src/fmt/string/normalize.py" in q.paths
    assert "src/fmt/quotes.py" in q.paths
    # and a line anchor the line, as a frame names it (a range by its first line)
    assert {(f.path, f.line) for f in q.frames} == {
        ("src/fmt/string/normalize.py", 707),
        ("src/fmt/quotes.py", 3),
    }
    assert {"normalize", "quotes"} <= set(read.words)
    # the path and the section of any other page are its words
    assert {"lexical_analysis", "formatted", "literals", "attachments"} <= set(read.words)
    assert len(read.prose) == len(LINKED)  # blanked, not cut out
    # an upload's link (a screenshot, an attachment) is an id: no word, no path
    shot = (
        "It renders blank ![image](https://user-images.githubusercontent.com/7941918/"
        "199145870-1b2cbc4b-e3a7-4f45-8c9a-4b49f3b8c0a5.png), see the log "
        "https://github.com/user-attachments/assets/0f8e3a52-2d41-4c8e-9b8e-1c2f3a4b5c6d"
    )
    assert read_task(shot).words == ("renders", "blank", "image", "log")
    assert not parse_query(shot).paths
    # a link that is only a host leaves nothing; text around links is untouched
    assert read_task("see https://example.org. Then fix the cache").words == ("cache",)


# An issue as its template has it (pydicom's "Your environment" table, pvlib's
# "Versions", a show_versions() dump in a code block): the versions are no account of
# the problem, the writer's lines in and around them are.
REPORTED = """JSON export drops the VR of an empty element

**Describe the bug**
`Dataset.to_json_dict` writes no "vr" for an empty sequence.

```python
# the version I use
release_tag: 1.2.3
```

**Your environment**
module       | version
------       | -------
platform     | macOS-10.15.7-x86_64-i386-64bit
Python       | 3.8.2 (v3.8.2:7b3ab5921f, Feb 24 2020, 17:52:18)  [Clang 6.0]
pydicom      | 2.1.0
gdcm         | _module not found_
jpeg_ls      | _module not found_

The problem is in `jsonrep.py` at line 227.

### Versions
 - python: 3.10.6
 - OS: Linux
 - Backend: QtAgg

### System Information
```text
  Date: Wed Apr 19 20:15:10 2023 UTC
                OS : Linux
           Machine : x86_64
           pyvista : 0.38.5
               vtk : 9.2.6
             numpy : 1.24.2
```
"""


def test_a_version_report_is_no_words_and_the_writers_lines_are():
    read = read_task(REPORTED)
    q = parse_query(REPORTED)
    # the releases and, in a tool's dump, its every "key: value" line and rule
    for gone in (
        "gdcm",
        "jpeg_ls",
        "clang",
        "macos",
        "platform",
        "module",
        "pyvista",
        "vtk",
        "numpy",
        "machine",
        "x86_64",
        "date",
        "apr",
    ):
        assert gone not in read.words, gone
        assert gone not in q.terms, gone
    # the writer's sentence after the table, the headings, and the short "key: value"
    # lines of a section that is no dump
    assert {"jsonrep", "environment", "information", "linux", "backend", "qtagg"} <= set(read.words)
    assert "jsonrep.py" in q.paths
    # a heading inside a code block is code: the line after it is kept
    assert "release_tag" in read.words
    assert {"to_json_dict", "sequence", "empty"} <= set(read.words)
    assert len(read.prose) == len(REPORTED)  # blanked, not cut out
    assert read.prose.count("\n") == REPORTED.count("\n")
    # a release written in the writer's own sentence is no report
    assert "pydicom" in read_task("Since pydicom 2.1.0 the JSON export drops it").words
    # a section named for something else keeps its "key: value" lines
    assert "gdcm" in read_task("### Config\n - gdcm: 2.8.9\n").words


def test_a_document_word_meets_the_task_word():
    """A file's words are split as the task's: compound parts, a CJK run's characters."""
    q = parse_query("修复缓存 HandleStore put_many")
    terms = Terms(list(q.terms))
    doc = "class HandleStore:\n    def putMany(self):  # 缓存，然后\n".encode()
    tf, _n = terms.count(doc)
    counted = {terms.terms[i] for i in tf}
    assert {"handlestore", "handle", "store", "many", "缓", "存"} <= counted
    assert parts("缓存，然后") == ("缓", "存", "然", "后")
    assert parts("verifyJwtToken") == ("verify", "jwt", "token")


def test_the_tickets_a_task_cites_and_what_is_no_ticket():
    from ctxtools.analyzer.refs import message_refs, task_refs

    text = ("[FIXED JENKINS-22001] A simpler fix of JENKINS-19446; a regression from #6807 "
            "and gh-1234 (see bpo-4455, issue 5678 and #6807 again)")
    assert task_refs(text) == ("JENKINS-22001", "JENKINS-19446", "#6807", "#1234", "bpo-4455",
                               "#5678")
    assert parse_query(text).refs == task_refs(text)
    # Standards, encodings, another project's number, a list's item, an entity: none.
    for none in ("UTF-8 and SHA-256 per ISO-8601, RFC-7231, CVE-2021-44228, GPL-3",
                 "numpy/numpy#1234 and pkg.mod#123", "step #12 of 3", "&#1234; x#123",
                 "no ticket here"):
        assert task_refs(none) == (), none
    assert parse_query("no ticket here").refs == ()
    # A commit message also cites a ticket by linking to it.
    assert message_refs("Closes https://github.com/o/r/issues/77 and (#1234)") == {"#77", "#1234"}
    assert message_refs("Merge https://gitlab.com/g/p/-/merge_requests/987") == {"#987"}
    assert message_refs("See https://github.com/o/r/pull/0987 and #0987") == {"#987"}
    # Written in capitals, a message cites as a task does.
    assert task_refs("Fix ISSUE 1234") == ("#1234",)
    assert message_refs("Fix ISSUE 1234") == {"#1234"}


def test_a_ticket_quoted_as_code_or_among_too_many_is_none():
    from ctxtools.analyzer.refs import MAX_REFS, task_refs

    task = "Fails since #4321.\n\n```\nRun #4567 failed\n```\nand `job #7788` too"
    assert parse_query(task).refs == ("#4321",)
    log = " ".join(f"build #{1000 + i} passed" for i in range(MAX_REFS + 1))
    assert task_refs(log) == ()
    assert len(task_refs(" ".join(f"#{1000 + i}" for i in range(MAX_REFS)))) == MAX_REFS


def test_a_cjk_character_by_its_code_point_ranges():
    # is_cjk reads code points (no character class compiled at start-up): each range's
    # ends are in, the code points just outside are not; one character only.
    from ctxtools.analyzer.tokenizer import is_cjk

    for lo, hi in ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF),
                   (0xF900, 0xFAFF)):
        assert is_cjk(chr(lo)) and is_cjk(chr(hi))
        assert not is_cjk(chr(lo - 1)) and not is_cjk(chr(hi + 1))
    assert is_cjk("缓") and is_cjk("キ") and is_cjk("한")
    assert not is_cjk("a") and not is_cjk("é") and not is_cjk("") and not is_cjk("缓存")
