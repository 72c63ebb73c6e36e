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
  as if it had written it (a link to an issue, a pull request or a commit shows none).

Deterministic, no I/O, linear in the text's length.
"""

from __future__ import annotations

import re


def said(task: str) -> str:
    """TASK with everything the module's docstring names blanked."""
    return without_trailers(without_links(without_comments(task)))


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
# then names; of a link to a page of the host (an issue, a pull request, a commit), no more.
_URL_RE = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`()\[\]{}]+", re.I)
_CODE_HOSTS = frozenset({"github.com", "www.github.com", "gitlab.com", "bitbucket.org",
                         "codeberg.org"})
_FILE_VIEWS = frozenset({"blob", "tree", "raw", "blame", "src"})
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
        for a, b in _link_keeps(url):
            out.append(" " * (a - at))
            out.append(url[a:b])
            at = b
        out.append(" " * (len(url) - at))
        last = start + len(url)
    out.append(task[last:])
    return "".join(out)


def _link_keeps(url: str) -> list[tuple[int, int]]:
    """The (start, end) spans of URL's characters that are kept (``without_links``), in
    order."""
    body = url.index("://") + 3
    slash = url.find("/", body)
    if slash < 0:
        return []
    host = url[body:slash].lower().rsplit("@", 1)[-1].split(":", 1)[0]
    end = len(url)
    hash_at = url.find("#", slash)
    fragment = None
    if hash_at >= 0:
        if not _LINE_ANCHOR_RE.fullmatch(url, hash_at + 1):
            fragment = (hash_at + 1, len(url))
        end = hash_at
    query_at = url.find("?", slash, end)
    if query_at >= 0:
        end = query_at
    start = slash + 1
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
                return project  # an issue, a pull request, a commit: no file
            skip = i + 2  # OWNER/REPO/[-/]VIEW/REF/
        if len(segs) <= skip:
            return project
        return [*project, (start + len("/".join(segs[:skip])) + 1, end)]
    return [(start, end)] + ([fragment] if fragment else [])
