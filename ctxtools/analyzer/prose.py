"""What of a task's text is its writer's account of the problem, and what is not: the
parts that are not are blanked (spaces, line breaks kept, so that every other place in the
text stays where it was) before any word, path or frame is read from it (``said``).

* **A commit message's people lines and tools' lines** (``Signed-off-by:``,
  ``Co-authored-by:``, ``Reviewers:`` and their kin; ``git-svn-id:``, ``Change-Id:``,
  ``Reviewed-on:``: ``without_trailers``) name people, addresses and ids, not code (a CI
  job that packs for the last commit hands over its whole message, and ``Reviewers: A
  <a@apache.org>`` made ``apache`` and ``org`` names of the task).
* **A template's Markdown comments** (``<!-- ... -->`` outside code: ``without_comments``)
  are hidden when the text is shown: a pull request's or an issue's body keeps what its
  template asked of the writer ("Does this pull request include a summary of the
  change?"), which is nobody's account of the problem.
* **Where a link points** (``without_links``): its scheme and host, its query string and
  a line anchor; of a code host's link, all but the project it names (its owner and
  repository, as two words) and the path of the file it shows, which the task then names
  as if it had written it, with the line a line anchor points at as a frame's line
  (``src/x.py#L12`` reads as ``src/x.py:12``; a link to an issue, a pull request or a
  commit shows no file).
* **A version report** (``without_reports``): what an issue template's "Versions" or
  "Environment" section holds ("pvlib: 0.9.5", "Python 3.10.4", a ``show_versions()``
  dump, a table of modules and versions) says which releases ran, not where the problem
  is -- and its package names are often the names of a project's own modules (a pydicom
  report's table lists gdcm, jpeg_ls and numpy, the names of three of its pixel-data
  handlers).

Deterministic, no I/O, linear in the text's length.
"""

from __future__ import annotations

import re


def said(task: str) -> str:
    """TASK with everything the module's docstring names blanked."""
    return without_reports(without_trailers(without_links(without_comments(task))))


# The trailers of a commit message that name people (git's, GitHub's, Gerrit's, and
# Kafka's "Reviewers:") or that a tool wrote (git-svn's origin, Gerrit's change id and
# review, Phabricator's revision, Go's and Chromium's bots), each a line of its own. A
# history converted from Subversion ends every message with "git-svn-id: https://svn.
# apache.org/repos/asf/maven/components/trunk@280191 13f79535-...": a repository's name
# and a host made words of every task.
_TRAILER_RE = re.compile(
    r"(?im)^[ \t]*(?:signed-off-by|co-authored-by|reviewed-by|reviewers?|acked-by|tested-by"
    r"|reported-by|suggested-by|helped-by|approved-by|cc|git-svn-id|change-id|reviewed-on"
    r"|differential revision|piperorigin-revid|run-trybot|trybot-result|luci-trybot-result"
    r"|auto-submit|commit-queue)[ \t]*:[^\n]*"
)


def without_trailers(task: str) -> str:
    """TASK with each line of a commit trailer that names people or that a tool wrote
    blanked (spaces, so that every other place stays where it was)."""
    if ":" not in task:
        return task
    return _TRAILER_RE.sub(lambda m: " " * len(m.group()), task)


# A Markdown comment: what an issue or pull-request template tells its writer
# ("<!-- Thank you for contributing! Does this pull request include a summary? -->"),
# hidden when the text is shown. A code span or block comes first where one starts
# earlier: a comment written inside code is code the reporter shows.
# A Markdown code block (to its end when unclosed) or code span: ``query`` reads the code
# a task shows by the same pattern.
CODE_SPAN = r"```.*?(?:```|\Z)|`[^`\n]+`"
_HIDDEN_RE = re.compile(f"({CODE_SPAN})|<!--", re.S)


def without_comments(task: str) -> str:
    """TASK with each Markdown comment outside code blanked (spaces, its line breaks kept,
    so that every other place stays where it was); TASK itself when nothing but comments
    would be left (a task that is about a comment). An unclosed ``<!--`` hides nothing.
    Linear: the end of a comment is looked for once, and none after a first unclosed one."""
    if "<!--" not in task:
        return task
    out, last, pos = [], 0, 0
    while (m := _HIDDEN_RE.search(task, pos)) is not None:
        if m.group(1) is not None:
            pos = m.end()
            continue
        end = task.find("-->", m.end())
        if end < 0:
            break
        end += 3
        out.append(task[last : m.start()])
        out.append("\n".join(" " * len(ln) for ln in task[m.start() : end].split("\n")))
        last = pos = end
    if not out:
        return task
    out.append(task[last:])
    seen = "".join(out)
    return seen if any(c.isalnum() for c in seen) else task


# A link. Where it points (its scheme and host, its query string, a line anchor) is no
# account of the problem: a screenshot's link gave a task "format", "webp", "width" and
# "height" and a hash of 64 hex digits as its words. Of a code host's link what is left is
# the project it names (OWNER and REPO, as two words) and of a link to a file
# (``https://github.com/OWNER/REPO/blob/REF/src/x.py#L12``) the file's path, which the task
# then names, and its line anchor's line, which it names as a frame does; of a link to a
# page of the host (an issue, a pull request, a commit), no more.
_URL_RE = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`()\[\]{}]+", re.I)
_CODE_HOSTS = frozenset({"github.com", "www.github.com", "gitlab.com", "bitbucket.org",
                         "codeberg.org"})
_FILE_VIEWS = frozenset({"blob", "tree", "raw", "blame", "src"})
# Where an issue's screenshots and attachments are uploaded: the path is an id (a number,
# a UUID, "image.png"), never the writer's words, and none of it is kept.
_UPLOAD_HOSTS = frozenset({"user-images.githubusercontent.com", "camo.githubusercontent.com",
                           "private-user-images.githubusercontent.com"})
_LINE_ANCHOR_RE = re.compile(r"L\d+(?:C\d+)?(?:-L?\d+(?:C\d+)?)?|lines?-\d+(?:[:-]\d+)?", re.I)
LINKS = True  # (bench/pack_quality/tune.py screens the engine with it off)


def without_links(task: str) -> str:
    """TASK with the parts of each link that say where it points blanked (``_URL_RE``'s
    comment): its scheme and host, its query string, a line anchor, and of a code host's
    link all but the project and the path of the file it shows. Spaces for the blanked
    characters, so that every other place stays where it was. Linear in TASK's length.
    ``LINKS`` false (a screen's switch) leaves TASK as it is."""
    if not LINKS or "://" not in task:
        return task
    out, last = [], 0
    for m in _URL_RE.finditer(task):
        url = m.group().rstrip(".,;:!?*_~")
        start = m.start()
        out.append(task[last:start])
        at = 0
        keeps, line = _link_keeps(url)
        for a, b in keeps:
            out.append(" " * (a - at))
            out.append(url[a:b])
            at = b
        if line is not None:  # in the place of the anchor, which is longer
            out.append(line)
            at += len(line)
        out.append(" " * (len(url) - at))
        last = start + len(url)
    out.append(task[last:])
    return "".join(out)


def _link_keeps(url: str) -> tuple[list[tuple[int, int]], str | None]:
    """The (start, end) spans of URL's characters that are kept (``without_links``), in
    order; and of a code host's link to a line of a file, ":LINE", written after the
    file's path (the last span), so that the task names the line as a frame does."""
    body = url.index("://") + 3
    slash = url.find("/", body)
    if slash < 0:
        return [], None
    host = url[body:slash].lower().rsplit("@", 1)[-1].split(":", 1)[0]
    end = len(url)
    hash_at = url.find("#", slash)
    fragment = line = None
    if hash_at >= 0:
        anchor = _LINE_ANCHOR_RE.fullmatch(url, hash_at + 1)
        if anchor is None:
            fragment = (hash_at + 1, len(url))
        else:
            line = ":" + re.search(r"\d+", anchor.group()).group()
        end = hash_at
    query_at = url.find("?", slash, end)
    if query_at >= 0:
        end = query_at
    start = slash + 1
    if host in _UPLOAD_HOSTS or (
        host in _CODE_HOSTS and url.startswith("user-attachments/", start)
    ):
        return [], None  # an upload (GitHub's user-attachments/assets/UUID, user-images)
    if host in _CODE_HOSTS or host == "raw.githubusercontent.com":
        segs = url[start:end].split("/", 6)
        # the project (OWNER and REPO, as two words: no path of the task)
        project = [(start, start + len(segs[0]))]
        if len(segs) > 1:
            at = start + len(segs[0]) + 1
            project.append((at, at + len(segs[1])))
        if host == "raw.githubusercontent.com":
            skip = 3  # OWNER/REPO/REF/
        else:
            i = 3 if len(segs) > 2 and segs[2] == "-" else 2  # GitLab's OWNER/REPO/-/
            if len(segs) <= i + 2 or segs[i] not in _FILE_VIEWS:
                return project, None  # an issue, a pull request, a commit: no file
            skip = i + 2  # OWNER/REPO/[-/]VIEW/REF/
        if len(segs) <= skip:
            return project, None
        return [*project, (start + len("/".join(segs[:skip])) + 1, end)], line
    return [(start, end)] + ([fragment] if fragment else []), None


# A version report. A section is one when its heading (a Markdown heading or a line that
# is all bold, outside code) names versions, an environment, a system's information or a
# platform; in it, a line is a version line when it pairs a name with a release number or
# with "not installed" ("pvlib: 0.9.5", "| pydicom | 2.1.0 |", "numpy==1.24", "sqlfluff,
# version 0.6.6", "Python 3.11.2 (main, Mar 23 2023) [GCC 10.2.1]", "2.12.13"). The
# section's version lines are blanked; its heading is its name (astroid's template asks
# for the output of ``print(__pkginfo__.version)`` there, and blanking the heading cost a
# dev task a hunk), and its other lines are the writer's
# ("OS: Linux", "Backend: QtAgg", "The problem is in jsonrep.py at line 227") unless the
# section is a tool's dump (3 or more version lines, at least as many as its other
# "key: value" lines: ``show_versions()``, ``pip list``), whose every "key: value" line and
# rule is the tool's. A heading inside a code block is code, not a heading.
REPORTS = True  # (bench/pack_quality/tune.py screens the engine with it off)
_HEADING_RE = re.compile(
    r"[ \t]{0,3}(?:#{1,6}[ \t]+(?P<h>[^\n]*?)[ \t#]*|\*\*(?P<b>[^*\n]+)\*\*:?[ \t]*)\r?"
)
_REPORT_HEADING_RE = re.compile(
    r"(?i)\b(?:versions?|environment|system[ \t]+info(?:rmation)?|system[ \t]+details"
    r"|platform|installed[ \t]+(?:packages|versions))\b"
)
_FENCE_RE = re.compile(r"[ \t]{0,3}(?:```|~~~)")
_LINE_MARKS = " \t\r>*+-|`'\""
_RELEASE = r"v?\d+(?:\.\d+)+[\w.+\-]*"  # 2.12.13, v1.7.0, 2.8.6-dev0, 1.0.0+
_NOT_THERE_RE = re.compile(
    r"(?i)(?:none|not[ \t]+installed|_?module[ \t]+not[ \t]+found_?|n/a|unknown)"
)
_KEY_VALUE_RE = re.compile(
    r"(?P<k>[A-Za-z_`][\w.()/`\- ]{0,40}?)[ \t]*(?::|\||==?|[ \t]{2,})[ \t]*(?P<v>.+)"
)
_NAMED_RELEASE_RE = re.compile(
    r"(?i)(?:[A-Za-z][\w.\-]*,?[ \t]+){0,2}(?:version[ \t]+)?" + _RELEASE + r"(?P<rest>.*)"
)
_AFTER_RELEASE_RE = re.compile(r"(?:[ \t,;]|\\n|\([^)\n]*\)|\[[^\]\n]*\])*")
_RULE_RE = re.compile(r"[ \t|:+]*(?:[-=_]{3,}[ \t|:+]*)+")


def without_reports(task: str) -> str:
    """TASK with each version report blanked (``_REPORT_HEADING_RE``'s comment): spaces,
    line breaks kept, so that every other place stays where it was. Linear in TASK's
    length; ``REPORTS`` false (a screen's switch) leaves TASK as it is."""
    if not REPORTS or not _REPORT_HEADING_RE.search(task):
        return task
    lines = task.split("\n")
    fenced = False
    section: list[int] | None = None  # the lines of an open report section, its heading first
    for i, line in enumerate(lines):
        if _FENCE_RE.match(line):
            fenced = not fenced
        # (a heading is short: a long line is never tried, so no line costs more than once)
        heading = None if fenced or len(line) > 300 else _HEADING_RE.fullmatch(line)
        if heading is not None:
            if section is not None:
                _blank_report(lines, section)
            text = heading.group("h") if heading.group("h") is not None else heading.group("b")
            section = [i] if _REPORT_HEADING_RE.search(text) else None
        elif section is not None:
            section.append(i)
    if section is not None:
        _blank_report(lines, section)
    return "\n".join(lines)


def _blank_report(lines: list[str], section: list[int]) -> None:
    """Blank SECTION's version lines in LINES (and, when it is a tool's dump, its "key:
    value" lines and rules); SECTION's first line is its heading, kept."""
    releases, pairs, rules = [], [], []
    for i in section[1:]:
        kind = _report_line(lines[i])
        if kind == "release":
            releases.append(i)
        elif kind == "pair":
            pairs.append(i)
        elif kind == "rule":
            rules.append(i)
    if not releases:
        return
    blank = releases
    if len(releases) >= 3 and len(releases) >= len(pairs):
        blank = releases + pairs + rules
    for i in blank:
        lines[i] = " " * len(lines[i].rstrip("\r")) + ("\r" if lines[i].endswith("\r") else "")


def _report_line(line: str) -> str | None:
    """What LINE is in a version report: "release" (a name and its release, or a release
    alone), "pair" (any other short "key: value"), "rule" (a table's or a dump's rule), or
    None (the writer's own text)."""
    if len(line) > 200:
        return None
    if _RULE_RE.fullmatch(line.strip()):
        return "rule"
    text = line.strip(_LINE_MARKS)
    kv = _KEY_VALUE_RE.fullmatch(text)
    if kv is not None:
        value = kv.group("v").strip(_LINE_MARKS)
        if _NOT_THERE_RE.fullmatch(value) or _is_release(value):
            return "release"
        if len(value) <= 80 and len(kv.group("k").split()) <= 4:
            return "pair"
    return "release" if _is_release(text) else None


def _is_release(text: str) -> bool:
    """Whether TEXT is a release, alone or after its name ("2.12.13", "Python 3.11.2
    (main, Mar 23 2023) [GCC 10.2.1]", "python 3.7, pydicom 2.3", "sqlfluff, version
    0.6.6"), or a list of them separated by commas."""
    while True:
        m = _NAMED_RELEASE_RE.fullmatch(text)
        if m is None:
            return False
        rest = m.group("rest")
        tail = _AFTER_RELEASE_RE.match(rest).end()  # what a release may be followed by
        if tail == len(rest):
            return True
        if "," not in rest[:tail]:
            return False
        text = rest[tail:].strip(_LINE_MARKS)
