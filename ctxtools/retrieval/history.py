"""The repository's history as evidence: the functions changed by the past commits whose
messages read like the task.

A bug report often says what an earlier commit's message said ("fix the cache key when
the version is set" against "cache: honour the key's version"), and the fix is often in
a function that commit touched. So, when the packed root is inside a git work tree:

1. ``git log`` gives the messages of the last ``N_COMMITS`` non-merge commits under the
   root, one process, no diffs (0.05 s for kafka's 2,000: a pathspec would make git diff
   every commit, so the top of a work tree gets none and a directory below it ``.``);
2. the task's words (``Query.words``, the one analyzer's) are matched against each
   message's words by the engine's BM25 (``terms.bm25``; each message's word counts are
   kept in the store by sha, ``_counted``, so a warm pack tokenizes only new commits); the
   ``CANDIDATES`` best with a positive score go on, a commit without a parent aside (a
   root commit, or a shallow clone's boundary, whose diff is the whole tree);
3. unless the repository is a partial clone (an old diff would come from the network),
   ``git show -U0`` of those over the source files (``SOURCE_GLOBS``) gives the functions
   each touched: the function a hunk header names (git's own function-context drivers
   and ``DRIVERS``, by the attributes file shipped in ``ctxtools/data``; the repository's
   own attributes come first) and the definitions on its changed lines. The ``TOP``
   best that change a source file are kept; one of more than ``MAX_FILES`` files (a
   rename, a reformat, a vendored drop) touches nothing;
4. each touched function ``(path, name)`` gets the commit's score divided by the square
   root of the number of functions the commit touched, summed over the commits;
5. ``apply`` raises each ranked chunk whose (file, last part of its name) was touched by
   ``WEIGHT`` x the best chunk's score x its share of the best touched chunk's sum: at
   most 0.15 of the best chunk's score, so the history orders the chunks the words
   already found and rarely brings one of its own;
6. whatever their messages, the last ``RECENT`` commits' functions are *recent* (a fix
   is often in code changed days before; their diffs are read as in 3, after the
   matching commits' and apart from them, a commit of more than ``MAX_FILES`` source
   files left unread): ``apply`` raises each ranked chunk of a recent function by
   ``RECENT_WEIGHT`` of its own score, so recency orders what the task reached and
   never brings a chunk the task did not.

Chosen on the tuning lists by the twenty-second session's screen (``bench/pack_quality/
history_screen.py``: ``TOP`` 10, ``WEIGHT`` 0.15). Through the engine (``tune.py
--history``), every hunk shown on dev and the three tuning lists at 8k / 16k / 32k: 87 /
110 / 120 of 184 without, 91 / 113 / 121 with. ``RECENT`` 5 and ``RECENT_WEIGHT`` 0.15
were chosen on the same lists (the last 20 commits at 0.3 or 0.6 cost dev two tasks at
16k; the last 5 at 0.15, 0.3, 0.5: 0.15 moved 8 task-budget rows up and 1 down): every
hunk 92 / 113 / 121 without recency, 95 / 114 / 122 with.

7. a task that cites tickets (``Query.refs``: ``#1234``, ``JENKINS-19446``) links to the
   commits whose messages cite one of them too (``analyzer.refs.message_refs``; a ticket
   cited by more than ``REF_MAX_COMMITS`` commits links to none): the ``REF_TOP`` latest
   are read as in 3, and each function they touched is *linked* (the sum, over those
   commits, of one over the square root of the number of functions each touched). The
   engine reads a linked function's file chunk by chunk and raises the function's chunk
   as a stack frame's function is raised (``rank.REF_BONUS``): a commit of the same ticket
   is evidence of its own, where the matching messages' only orders what the words found.

No git, a root outside a work tree, an empty history, a git that fails or takes longer
than ``TIMEOUT`` seconds: no signal, and ``Signal.note`` says why where it is not plain
(a timeout: a note). ``CTX_HISTORY=0`` turns the signal off. Nothing
here prints; the git processes get no stdin, no pager, no optional locks.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

from ctxtools.retrieval.hunks import DRIVERS, defined_name, header_name

N_COMMITS = 2000
TOP = 10
CANDIDATES = 3 * TOP  # the best messages whose diffs are read (a commit of docs alone: none)
MAX_FILES = 40
WEIGHT = 0.15
RECENT = 5  # the last commits whose functions are "recent"
RECENT_WEIGHT = 0.15  # a recent function's chunk gains this share of its own score
REF_TOP = 10  # the latest commits citing the task's tickets whose diffs are read
REF_MAX_COMMITS = 20  # a ticket more commits cite than this links to none of them
TIMEOUT = 10.0  # seconds a git process may take before the signal is given up
MAX_SHOW_BYTES = 64 << 20  # the most of ``git show``'s output read (the rest: not looked at)
# The most of ``git log``'s messages read (the commits past it: not matched): a history of
# huge messages (a changelog pasted into each) costs a second of matching, not a minute.
# 2,000 commits' messages are 0.3 to 2.2 MB in the tuning repositories.
MAX_LOG_BYTES = 4 << 20
# The source files whose diffs are read: the languages the definition scanners name
# functions in (``source.scan.languages``). Each has a function-context driver in
# ``ctxtools/data/history.gitattributes``: git's own, or one of ``DRIVERS``.
SOURCE_EXTS = (
    "py", "pyi", "go", "rs", "java", "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs",
    "c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx", "rb", "rake", "cs", "php", "kt", "kts",
    "swift", "scala")
SOURCE_GLOBS = tuple(f"*.{ext}" for ext in SOURCE_EXTS)
_COMMIT = "\x00commit "  # starts a commit in ``git show``'s output (``--format``)


@dataclass
class Commit:
    sha: str
    subject: str
    score: float


@dataclass
class Signal:
    """What the history says: each touched function's sum, by (path under the root, the
    last part of its name), and the commits it came from (best first)."""

    touched: dict[tuple[str, str], float] = field(default_factory=dict)
    commits: list[Commit] = field(default_factory=list)
    by: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # key -> its commits
    recent: frozenset[tuple[str, str]] = frozenset()  # the last RECENT commits' functions
    note: str | None = None  # why there is no signal, when that is worth saying
    # The functions the commits citing the task's tickets touched (7 of the module's
    # docstring): each one's sum, the commits (latest first), key -> its commits.
    linked: dict[tuple[str, str], float] = field(default_factory=dict)
    linked_commits: list[Commit] = field(default_factory=list)
    linked_by: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    @property
    def linked_files(self) -> frozenset[str]:
        """The files (paths under the root) of the linked functions."""
        return frozenset(path for path, _name in self.linked)


def enabled() -> bool:
    """Whether the history may be read: CTX_HISTORY=0 (or off, no, false) turns it off."""
    from ctxtools.config import switched_on

    return switched_on("CTX_HISTORY")


def last_name(name: str) -> str:
    """The last part of a definition's name (``Class.method`` -> ``method``, ``a::b`` -> ``b``)."""
    return name.rsplit(".", 1)[-1].rsplit("::", 1)[-1]


def parse_messages(out: bytes) -> list[tuple[str, str, str]]:
    """[(sha, subject, message)] of ``git log -z --format=%H %P%n%B`` output, the commits
    without a parent left out."""
    got = []
    for rec in out.split(b"\0"):
        head, _, msg = rec.partition(b"\n")
        shas = head.split()
        if len(shas) < 2:  # no parent (or an empty record): its diff is a whole tree
            continue
        text = msg.decode("utf-8", "replace")
        got.append((shas[0].decode("ascii", "replace"), text.partition("\n")[0], text))
    return got


def message_words(text: str) -> tuple[int, dict[str, int]]:
    """A message's length in words and each word's count (``tokenizer.words``)."""
    from ctxtools.analyzer.tokenizer import words

    ws = words(text)
    return len(ws), dict(Counter(ws))


def best_commits(messages: list[tuple[str, str, str]], query_words, top: int = TOP,
                 counted: list[tuple[int, dict[str, int]]] | None = None) -> list[Commit]:
    """The TOP commits whose messages best match QUERY_WORDS (BM25; ties: the later commit,
    then the sha), those with a positive score only. COUNTED: each message's
    ``message_words`` when known already (the store's memo)."""
    q = set(query_words)
    if not q or not messages:
        return []
    if counted is None:
        counted = [message_words(m) for _s, _subj, m in messages]
    from ctxtools.retrieval.terms import Stats, bm25

    # the query's words as term ids in word order: bm25 sums in id order, so a message's
    # score is one float whatever order a set holds its words in (that follows the
    # process's string hash)
    ids = {w: i for i, w in enumerate(sorted(q))}
    stats = Stats()
    bags = []
    for length, words in counted:
        bag = {ids[w]: words[w] for w in q.intersection(words)}
        stats.add(bag, length)
        bags.append((bag, length))
    weights = [stats.idf(i) for i in range(len(ids))]
    scored = []
    for i, (bag, length) in enumerate(bags):
        if bag:
            scored.append((-bm25(bag, length, weights, stats), i))
    scored.sort()
    return [Commit(messages[i][0], messages[i][1], -s) for s, i in scored[:top] if s < 0]


def _shown(out: bytes) -> list[tuple[str, str]]:
    """(sha, what follows its line) of each commit in ``git show --format=%x00commit %H``
    output (``_show``'s)."""
    text = out.decode("utf-8", "replace")
    return [(sha.strip(), body) for sha, _, body in
            (block.partition("\n") for block in text.split(_COMMIT)[1:])]


def parse_show(out: bytes) -> dict[str, tuple[int, list[tuple[str, str]]]]:
    """sha -> (the files its diff holds, the (path, function name) pairs its hunks touch),
    from ``git show -U0 --format=%x00commit %H`` output; a commit of more than MAX_FILES
    files touches none."""
    got: dict[str, tuple[int, list[tuple[str, str]]]] = {}
    for sha, diff in _shown(out):
        touched: set[tuple[str, str]] = set()
        path, files = None, 0
        for line in diff.split("\n"):
            if line.startswith("+++ "):
                files += 1
                path = line[6:] if line.startswith("+++ b/") else None  # a quoted name: none
            elif line.startswith("@@"):
                if path:
                    name = header_name(line[2:].partition("@@")[2].strip())
                    if name:
                        touched.add((path, name))
            elif path and line[:1] in ("+", "-") and not line.startswith(("+++", "---")):
                name = defined_name(line[1:])
                if name:
                    touched.add((path, name))
        got[sha.strip()] = (files, sorted(touched) if files <= MAX_FILES else [])
    return got


def _git(root: str, args: list[str], limit: int = MAX_SHOW_BYTES) -> bytes | None:
    """``git ARGS``'s stdout run in ROOT, at most LIMIT bytes of it (the process is
    stopped there), or None when git is missing or fails; TimeoutError when it takes
    longer than TIMEOUT (it is stopped)."""
    import subprocess
    import threading

    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_PAGER": "cat", "LC_ALL": "C"}
    try:
        proc = subprocess.Popen(
            ["git", "--no-pager", *args], cwd=root, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return None
    late = threading.Event()

    def too_late() -> None:
        late.set()
        proc.kill()

    timer = threading.Timer(TIMEOUT, too_late)
    timer.daemon = True
    timer.start()
    chunks, size = [], 0
    try:
        while size < limit:
            got = proc.stdout.read1(1 << 20)
            if not got:
                break
            chunks.append(got)
            size += len(got)
        capped = size >= limit
        if capped:
            proc.kill()
        proc.stdout.close()
        code = proc.wait()
    except BaseException:  # Ctrl-C: the child goes too
        proc.kill()
        proc.wait()
        raise
    finally:
        timer.cancel()
    if late.is_set():
        raise TimeoutError
    if code != 0 and not capped:
        return None
    return b"".join(chunks)[:limit]


def _attributes() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "history.gitattributes")


def read_signal(root: str, query_words, store=None, refs=()) -> Signal:
    """The history's signal for a task of QUERY_WORDS citing the tickets REFS
    (``Query.refs``) over the work tree at ROOT (see the module's docstring); an empty
    Signal when there is none. The messages' word counts are kept in STORE (an explicit
    store root, as ``config.store_root`` takes it)."""
    if not enabled() or not (query_words or refs):
        return Signal()
    try:
        return _read(root, query_words, store, tuple(refs))
    except TimeoutError:
        return Signal(note=f"note: the history was not read (git took longer than {TIMEOUT:g} s)")


class Pending:
    """``read_signal`` under way in a thread of its own (its git processes and their
    waits run beside the caller's reading of the files); ``result()`` waits for it."""

    def __init__(self, root: str, query_words, store=None, refs=()):
        import threading

        self._got: Signal | None = None
        self._failed: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(root, tuple(query_words), store, tuple(refs)),
            name="ctx-history", daemon=True)
        self._thread.start()

    def _run(self, root: str, query_words, store, refs) -> None:
        try:
            self._got = read_signal(root, query_words, store, refs)
        except Exception as exc:  # (handed to the caller by result())
            self._failed = exc

    def result(self) -> Signal:
        self._thread.join()
        if self._failed is not None:
            raise self._failed
        return self._got if self._got is not None else Signal()


def _read(root: str, query_words, store, refs: tuple[str, ...] = ()) -> Signal:
    # The messages of the commits under ROOT (a pathspec makes git diff each commit, so
    # at the top of the work tree there is none: 0.035 s against 0.22 s with the source
    # globs on scipy's 2,000), then the diffs of the best few over the source files.
    where = _git(root, ["rev-parse", "--show-prefix", "--git-common-dir"])
    if where is None:
        return Signal()  # not a work tree, no git: nothing to say
    prefix, _, gitdir = where.decode("utf-8", "surrogateescape").partition("\n")
    log = _git(root, ["log", f"-n{N_COMMITS}", "--no-merges", "-z", "--format=%H %P%n%B",
                      "HEAD", "--", *(["."] if prefix.strip() else [])], MAX_LOG_BYTES)
    if log is None:
        return Signal()  # no commit yet
    if len(log) >= MAX_LOG_BYTES:  # the last record is cut short: not matched
        log = log[: log.rfind(b"\0") + 1]
    messages = parse_messages(log)
    counted = _counted(messages, os.path.join(root, gitdir.strip()), store)
    commits = best_commits(messages, query_words, CANDIDATES, counted) if query_words else []
    latest = [sha for sha, _subj, _m in messages[:RECENT]]
    citing = citing_commits(messages, refs)
    if (not commits and not latest and not citing) or _partial_clone(root):
        return Signal()
    shas = list(dict.fromkeys([*(c.sha for c in commits), *(c.sha for c in citing)]))
    by_sha = _functions(root, shas) if shas else {}
    if by_sha is None:
        return Signal()
    recent = _recent(root, latest, by_sha)
    # the TOP best of the commits that change a source file
    commits = [c for c in commits if by_sha.get(c.sha, (0, []))[0]][:TOP]
    touched: dict[tuple[str, str], float] = {}
    by: dict[tuple[str, str], list[int]] = {}
    for i, c in enumerate(commits):
        funcs = by_sha[c.sha][1]
        for path, name in funcs:
            key = (path, last_name(name))
            touched[key] = touched.get(key, 0.0) + c.score / len(funcs) ** 0.5
            if i not in by.setdefault(key, []):
                by[key].append(i)
    linked, linked_commits, linked_by = _linked(citing, by_sha)
    return Signal(touched, commits, by, recent, linked=linked, linked_commits=linked_commits,
                  linked_by=linked_by)


def citing_commits(messages: list[tuple[str, str, str]], refs) -> list[Commit]:
    """The latest ``REF_TOP`` of MESSAGES (latest first) that cite one of the tickets REFS,
    a ticket cited by more than ``REF_MAX_COMMITS`` of them left out (a score of 1 each)."""
    if not refs:
        return []
    from ctxtools.analyzer.refs import message_refs

    wanted = set(refs)
    # (a message is read for its tickets only when it holds one of their numbers)
    numbers = {r.rsplit("-", 1)[-1].lstrip("#") for r in wanted}
    found: list[tuple[str, str, set[str]]] = []
    cited: Counter = Counter()
    for sha, subject, message in messages:
        if not any(n in message for n in numbers):
            continue
        got = message_refs(message) & wanted
        if got:
            found.append((sha, subject, got))
            cited.update(got)
    kept = {r for r in wanted if cited[r] <= REF_MAX_COMMITS}
    return [Commit(sha, subject, 1.0) for sha, subject, got in found if got & kept][:REF_TOP]


def _linked(citing: list[Commit], by_sha: dict):
    """(the linked functions' sums, the commits that touched some, key -> those commits)
    of the CITING commits whose diffs BY_SHA holds (7 of the module's docstring)."""
    linked: dict[tuple[str, str], float] = {}
    commits: list[Commit] = []
    by: dict[tuple[str, str], list[int]] = {}
    for c in citing:
        funcs = by_sha.get(c.sha, (0, []))[1]
        if not funcs:
            continue
        i = len(commits)
        commits.append(c)
        for path, name in funcs:
            key = (path, last_name(name))
            linked[key] = linked.get(key, 0.0) + 1.0 / len(funcs) ** 0.5
            if i not in by.setdefault(key, []):
                by[key].append(i)
    return linked, commits, by


def _show(root: str, shas: list[str], *options: str, config: tuple[str, ...] = ()) -> bytes | None:
    """``git show`` of SHAS over the source files under ROOT, each commit opened by
    ``_COMMIT`` and its sha, with OPTIONS (CONFIG: ``-c`` pairs before the verb)."""
    return _git(root, [*config, "show", *options, "--no-renames", "--relative",
                       "--format=%x00commit %H", *shas, "--", *SOURCE_GLOBS])


def _functions(root: str, shas: list[str]) -> dict[str, tuple[int, list[tuple[str, str]]]] | None:
    """``parse_show`` of SHAS' diffs over the source files, None when git fails."""
    config = ("-c", f"core.attributesFile={_attributes()}",
              *(a for name, pattern in DRIVERS.items()  # (a bench swaps DRIVERS)
                for a in ("-c", f"diff.{name}.xfuncname={pattern}")))
    show = _show(root, shas, "-U0", "--no-color", "--no-ext-diff", "--no-textconv",
                 config=config)
    return None if show is None else parse_show(show)


def _file_counts(out: bytes) -> dict[str, int]:
    """sha -> how many files, from ``git show --name-only --format=%x00commit %H`` output."""
    return {sha: sum(1 for n in names.split("\n") if n) for sha, names in _shown(out)}


def _recent(root: str, latest: list[str], by_sha: dict) -> frozenset[tuple[str, str]]:
    """The functions the LATEST commits touched (those BY_SHA holds already are not read
    again). Read after the matching commits' diffs and apart from them, so that a slow or
    failing read of these loses the recency alone: a git that fails or outlasts TIMEOUT
    gives none."""
    if not latest or not RECENT_WEIGHT:
        return frozenset()
    missing = [sha for sha in latest if sha not in by_sha]
    more: dict = {}
    try:
        if missing:  # a commit of many files touches nothing: its diff is not read
            names = _show(root, missing, "--name-only")
            if names is None:
                return frozenset()
            missing = [sha for sha, n in _file_counts(names).items() if n <= MAX_FILES]
        if missing:
            more = _functions(root, missing)
            if more is None:
                return frozenset()
    except TimeoutError:
        return frozenset()
    return frozenset((path, last_name(name)) for sha in latest
                     for path, name in (by_sha.get(sha) or more.get(sha, (0, [])))[1])


MEMO_KIND = "history-words-v1"


def _counted(messages, gitdir: str, store) -> list[tuple[int, dict[str, int]]]:
    """Each message's ``message_words``: a commit's message never changes, so they are
    kept in the store by sha (``history/words-<key of the repository>.bin``, a memo file)
    and a warm pack counts only the commits it has not seen. The memo is written again,
    holding this log's commits only, when one was new; a damaged or unwritable memo is
    a miss, never an error."""
    from ctxtools import memofile

    try:
        from ctxtools.config import store_root

        name = f"words-{memofile.key(os.path.realpath(gitdir))}.bin"
        path = store_root(store) / "history" / name
    except Exception:  # no usable store: count them all
        return [message_words(m) for _s, _subj, m in messages]
    memo = memofile.load(path, MEMO_KIND).value
    known = memo if isinstance(memo, dict) else {}
    out, new = [], False
    for sha, _subj, m in messages:
        got = known.get(sha)
        if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], dict)):
            got = message_words(m)
            new = True
        out.append(got)
    if new:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            kept = {sha: c for (sha, _s, _m), c in zip(messages, out, strict=True)}
            memofile.save(path, MEMO_KIND, kept)
        except OSError:
            pass
    return out


def _partial_clone(root: str) -> bool:
    """Whether ROOT's repository is a partial clone: reading an old commit's diff would
    fetch its blobs from the network, which a pack never does."""
    got = _git(root, ["config", "--get", "extensions.partialClone"])
    return bool(got and got.strip())


def apply(ranking, signal: Signal, weight: float | None = None) -> int:
    """Raise RANKING's chunks the history touched (see the module's docstring); returns
    how many were raised. Each raised chunk's part is kept in ``doc.history`` (for
    ``--explain``); the files keep their order."""
    weight = WEIGHT if weight is None else weight
    n_recent = _apply_recent(ranking, signal)
    if not signal.touched or not weight:
        return n_recent
    hits = []
    best = 0.0
    for d in ranking.docs:
        for k, ch in enumerate(d.chunks):
            s = d.scores[k]
            best = max(best, s)
            if ch.name:
                x = signal.touched.get((d.label, last_name(ch.name)))
                if x:
                    hits.append((d, k, x))
    top = max((x for _d, _k, x in hits), default=0.0)
    if not hits or best <= 0 or top <= 0:
        return 0
    which: dict[int, tuple] = {}
    for d, k, x in hits:
        part = weight * best * x / top
        _add_part(d, k, part)
        seen = which.setdefault(id(d), (d, set()))[1]
        seen.update(signal.by.get((d.label, last_name(d.chunks[k].name)), ()))
    for d, seen in which.values():
        named = ", ".join(commit_label(signal.commits[i]) for i in sorted(seen)[:3])
        more = f" and {len(seen) - 3} more" if len(seen) > 3 else ""
        d.why.append(f"its functions changed by past commits like the task: {named}{more}")
    return len(hits) + n_recent


def _apply_recent(ranking, signal: Signal) -> int:
    """Raise each ranked chunk of a function the last ``RECENT`` commits touched by
    ``RECENT_WEIGHT`` of its own score (the task's evidence for it: a chunk the task
    does not reach stays at nothing); how many were raised."""
    if not signal.recent or not RECENT_WEIGHT:
        return 0
    raised = 0
    for d in ranking.docs:
        hit = False
        for k, ch in enumerate(d.chunks):
            key = (d.label, last_name(ch.name)) if ch.name else None
            if d.scores[k] <= 0 or key not in signal.recent:
                continue
            _add_part(d, k, RECENT_WEIGHT * d.scores[k])
            raised += 1
            hit = True
        if hit:
            d.why.append(f"its functions changed by the last {RECENT} commits")
    return raised


def _add_part(d, k: int, part: float) -> None:
    """Add PART to chunk K's score and to its history part (``doc.history``, for
    ``--explain``)."""
    d.scores[k] += part
    if not getattr(d, "history", None):
        d.history = [0.0] * len(d.chunks)
    d.history[k] += part


def commit_label(c: Commit) -> str:
    """A commit as --explain names it: its short sha and subject (control characters, a
    terminal's escapes among them, shown as ``?``)."""
    subject = "".join(ch if ch.isprintable() else "?" for ch in c.subject.strip())
    subject = subject if len(subject) <= 60 else subject[:57] + "..."
    return f'{c.sha[:10]} "{subject}"'
