"""From a task's text to what a retriever looks for: weighted terms, names, paths,
stack-trace frames and quoted messages.

``parse_query(task)`` reads a bug report, a review request or a one-line task the way an
engineer skims it:

* **terms**: the task's words (``ctxtools.analyzer.words``: the one tokenizer and stop
  list; ``bulk_create`` gives ``bulk_create``, ``bulk``, ``create``), and the other forms
  of its plain words (``caching``: cache, cached) and of versioned names. A term that
  is *code-shaped* -- ``snake_case``, ``CamelCase``, dotted, written in backticks or in a
  code block, followed by ``(`` -- weighs more than a plain English word; how much a term
  finally counts is decided by its rarity in the repository (``ctxtools.retrieval.terms``).
* **phrases**: in a task of plain words (``Query.plain``), two words side by side also
  make a term of the two joined (``path selector``: ``pathselector``), which a name made
  of them counts for (``PathSelector``, and inside a longer one: ``get_path_selector``).
* **names**: the code-shaped identifiers whole, which a definition's own name may equal.
* **paths**: file names and paths the task writes (``django/db/models/query.py``,
  ``query.py``) and dotted module paths (``django.db.models.query``).
* **stems**: the compound words the task writes outside paths (``generate-helpers``,
  ``0187_auto_20230614_0838``, ``MatrixBuild``), lower-cased: a file whose name without
  its extension is one of them is named by the task (``retrieval.pointers.task_hits``).
* **frames**: stack-trace frames of Python, JavaScript, Java, Go and Rust, each a path (as
  the trace wrote it), a line and a function: the strongest pointers a task can hold.
* **messages**: quoted error messages and the last line of a traceback, cut into literal
  fragments to find among the code's string literals.
* **refs**: the tickets the task cites (``#1234``, ``JENKINS-19446``: ``refs.task_refs``),
  which the history's commits may cite too (``retrieval.history``).

What of the text is no account of the problem -- a commit's people lines, a template's
hidden comments, where a link points, a version report -- is read as blank first
(``prose.said``).

Deterministic, no I/O, linear in the task's length.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ctxtools.analyzer.prose import CODE_SPAN, said
from ctxtools.analyzer.refs import task_refs
from ctxtools.analyzer.tokenizer import in_regions, is_stop, slashed, tokens, usable_parts
from ctxtools.identifiers import is_compound, word_forms

CODE_WEIGHT = 2.5  # a code-shaped term against a plain word
PART_WEIGHT = 0.5  # a part of a compound name, against the name whole
FORM_WEIGHT = 0.5  # another form of a plain word (caching: cache, cached), against the word
# Two plain words written side by side ("path selector") also stand for the name they
# make together (``PathSelector``, ``path_selector``, ``getPathSelector``): a term of its
# own, this weight against a word, as rare in the code as that name is; read in tasks of
# plain words only (``Query.plain``). Tuned on dev + tune + the prose tuning list
# (bench/pack_quality/tune.py, 8k/16k/32k): prose list 0 gave 0.425/0.586/0.638, 0.5
# 0.434/0.601/0.668, 1.0 0.450/0.615/0.676, 1.5 0.477/0.593/0.676; dev unchanged at each,
# tune 32k 0.691 -> 0.685. Read in every task, 0.5 cost a dev report full of code its fix.
PHRASE_WEIGHT = 1.0
_PHRASE_GAP = re.compile(r"[ \t-]{1,3}")
MAX_TERMS = 120  # the task's most frequent terms, at most (a pasted log has thousands)
MAX_POINTERS = 200  # paths, and frames, at most: each is matched against every file

# A dotted name (``django.db.models``), as group "name". A match could start at any letter
# of a run of word characters, but one that starts inside a run ends where one from the
# run's first letter would (the run's end): starting only at a run's start (the digits
# before its first letter skipped) keeps the matches and makes the scan linear -- it was
# quadratic in the length of one long word (50,000 characters: over a minute).
_DOTTED_RE = re.compile(
    r"(?<![A-Za-z0-9_])[0-9]*+"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)+)"
)
_CODE_SPAN_RE = re.compile(CODE_SPAN, re.S)
_SOURCE_EXT = [
    "py",
    "pyi",
    "pyx",
    "js",
    "jsx",
    "mjs",
    "cjs",
    "ts",
    "tsx",
    "mts",
    "cts",
    "go",
    "rs",
    "java",
    "kt",
    "kts",
    "scala",
    "swift",
    "c",
    "h",
    "cc",
    "cpp",
    "cxx",
    "hpp",
    "hh",
    "cs",
    "rb",
    "php",
    "lua",
    "sh",
    "bash",
    "zsh",
    "pl",
    "pm",
    "r",
    "m",
    "mm",
    "sql",
    "toml",
    "yaml",
    "yml",
    "json",
    "cfg",
    "ini",
    "rst",
    "md",
    "txt",
    "html",
    "htm",
    "css",
    "scss",
    "vue",
    "svelte",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "clj",
    "dart",
    "jl",
]
_EXT_ALT = "|".join(sorted(_SOURCE_EXT, key=len, reverse=True))
_PATH_RE = re.compile(
    r"(?<![\w/.-])((?:~?/)?(?:[\w.-]+/)*[\w.-]*\w\.(?:" + _EXT_ALT + r"))(?![\w])", re.I
)
_SLASH_PATH_RE = re.compile(r"(?<![\w/.-])((?:~?/)?(?:[\w.-]+/)+[\w.-]+)")

# Stack-trace frames: (regex, path group, line group, function group).
_FRAMES = (
    # Python: File "x/y.py", line 12, in func
    (re.compile(r'File "([^"\n]+)", line (\d+)(?:, in ([\w<>.]+))?'), 1, 2, 3),
    # JavaScript: at func (path:12:5)   /   at path:12:5
    (
        re.compile(
            r"\bat (?:(?:async |new )?([\w$.<>\[\]]+) \()?((?:[A-Za-z]:)?[^\s():]+):(\d+):\d+\)?"
        ),
        2,
        3,
        1,
    ),
    # Java / Kotlin: at com.x.Y.method(Y.java:12)
    (re.compile(r"\bat ([\w$.]+)\(([\w$]+\.(?:java|kt|scala)):(\d+)\)"), 2, 3, 1),
    # Go / Rust / C and anything else: path.ext:12 (Rust's "at src/x.rs:12:5", Python's
    # warnings "x.py:12: FutureWarning" and pytest's "x.py:12: in f" included); read by
    # _any_frames, which starts it only where a match can start (linear time).
    (None, 1, 2, None),
)
# The directories of a path are taken whole (possessive): one given back could never be
# the file's name, which a ':' follows, never a '/'.
_ANY_FRAME = (
    r"((?:[\w.-]++/)*+[\w.-]+\.(?:go|rs|c|h|cc|cpp|cxx|hpp|rb|php|swift|cs|ts|tsx|js|jsx"
    r"|mjs|cjs|py|pyx|java|kt|scala|lua|ex|exs|dart)):(\d+)"
)
_ANY_FRAME_AT = re.compile(_ANY_FRAME)
# A match that starts after a path character, or after one and a '/', extends to a match
# one or two characters earlier, which comes first: no need to try there.
_ANY_FRAME_START = re.compile(r"(?<![\w.-])(?<![\w.-]/)" + _ANY_FRAME)
# A Go frame's function line (pkg.(*T).Method(...)) and a Rust one ("  3: crate::m::f").
# (Each line-anchored pattern opens with "[ \t]*", never "\s*": that crosses line breaks,
# and tried at every line of a run of blank lines -- what a blanked template or report
# leaves -- it read the rest of the run each time, quadratic in its length.)
_GO_FUNC_RE = re.compile(r"^[ \t]*([\w./-]+\.(?:\(\*?\w+\)\.)?\w+)\(.*\)[ \t\r]*$", re.M)
_RUST_FUNC_RE = re.compile(r"^[ \t]*\d+: ([\w:<>]+::\w+)[ \t\r]*$", re.M)
# The message of an exception: "ValueError: text" at a line's start.
_EXC_LINE_RE = re.compile(
    r"^[ \t]*(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Warning|Fault))(?:: (.+))?$", re.M
)
# A quoted string: the quotes at word boundaries, so the apostrophes of "I've" and "it's"
# never pair up into a "message".
_QUOTED_RE = re.compile(
    r"(?<![\w'\"])\"([^\"\n]{8,200})\"(?![\w\"])|(?<![\w'\"])'([^'\n]{8,200})'(?![\w'])"
    r"|“([^”\n]{8,200})”"
)
MIN_QUOTED_WORDS = 3  # a quoted fragment of fewer words is a phrase, not a message
_FRAGMENT_SPLIT_RE = re.compile(r"""['"`]|%[sdrfi]|\{[^}]*\}|\b\d+\b|<[^>]*>|\s{2,}""")
MIN_FRAGMENT = 12


@dataclass(frozen=True)
class Frame:
    """One stack-trace frame: the path as written, its line, its function (or None)."""

    path: str | None
    line: int | None
    function: str | None


@dataclass(frozen=True)
class Query:
    """What a task asks a retriever to find (see the module's docstring)."""

    terms: dict[str, float]  # term -> weight before rarity
    code: frozenset[str]  # the terms that are code-shaped
    names: dict[str, float]  # whole identifiers, lower-cased -> weight
    paths: tuple[str, ...]
    frames: tuple[Frame, ...]
    messages: tuple[str, ...]
    words: tuple[str, ...] = ()  # the task's words (``tokenizer.words``), every occurrence
    prose: frozenset[str] = frozenset()  # the words written as plain words, not parts of names
    scopes: tuple[str, ...] = ()  # what a commit-style subject names first ("tsdb: ...")
    # Plain words read as names only because a full stop follows them ("before saving."):
    # names for the lexical ranking (a sentence may end in one), not for telling a task of
    # plain words from one that names code.
    trailing: frozenset[str] = frozenset()
    # The terms a plain task's side-by-side words made (``pathselector``): two parts side
    # by side inside a longer name count for them (``getPathSelector``), not for others.
    phrases: frozenset[str] = frozenset()
    # The compound words written outside paths, lower-cased, in the task's order: the
    # names of files without their extensions that the task may be naming.
    stems: tuple[str, ...] = ()
    # The tickets the task cites (``refs.task_refs``: ``#1234``, ``JENKINS-19446``): the
    # history's commits that cited them changed the code they are about.
    refs: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.terms or self.paths or self.frames or self.messages)

    @property
    def plain(self) -> bool:
        """A task of plain words: no code-shaped name, path, stack frame or quoted
        message (a word read as a name only because a sentence's full stop follows it,
        "... before saving.", does not count)."""
        return _plain(self.code, self.names, self.paths, self.frames, self.messages,
                      self.trailing)


def _plain(code, names, paths, frames, messages, trailing) -> bool:
    if paths or frames or messages:
        return False
    return all(t in trailing for t in code) and all(n in trailing for n in names)


def _code_shaped(word: str) -> bool:
    core = word.strip("_")
    if "_" in core:
        return True
    if any(c.isdigit() for c in core[1:]) and any(c.isalpha() for c in core):
        return True
    return any(c.isupper() for c in core[1:]) and any(c.islower() for c in core)


def _code_regions(task: str) -> list[tuple[int, int]]:
    return [m.span() for m in _CODE_SPAN_RE.finditer(task)]


def _add(weights: dict[str, float], term: str, w: float) -> None:
    weights[term] = weights.get(term, 0.0) + w


def _word_at(task: str, i: int) -> bool:
    return i < len(task) and (task[i].isalnum() or task[i] == "_")


def _word_terms(task: str) -> tuple:
    """(term -> summed raw weight, code-shaped terms, whole names -> weight, the words
    as ``tokenizer.words`` gives them, the words written as plain prose, the words read
    as names only because a sentence's full stop follows them)."""
    regions = _code_regions(task)
    raw: dict[str, float] = {}
    code: set[str] = set()
    names: dict[str, float] = {}
    forms: dict[str, float] = {}  # other forms of plain words, added unless written
    seen: list[str] = []
    prose: set[str] = set()
    trailing: set[str] = set()  # read as names only because a dot follows them
    written: set[str] = set()  # code-shaped by any other sign
    last: tuple[int, str] | None = None  # (end, word) of the last plain word, for phrases
    phrases: dict[str, float] = {}
    for m in tokens(task):
        word = m.group()
        end = m.end()
        shaped = (
            _code_shaped(word)
            or in_regions(m.start(), regions)
            or task.startswith("(", end)
            or (m.start() > 0 and task[m.start() - 1] == ".")
        )
        low = word.lower()
        ends = False  # a plain word a sentence's full stop follows
        if not shaped and task.startswith(".", end):
            shaped = True
            if not _word_at(task, end + 1):  # "... before saving." ends a sentence
                trailing.add(low)
                ends = True
        elif shaped:
            written.add(low)
        seen.append(low)
        w = CODE_WEIGHT if shaped else 1.0
        _add(raw, low, w)
        if shaped:
            code.add(low)
            if len(low) >= 3:
                names[low] = max(names.get(low, 0.0), w)
            _versioned(low, w, raw, names)
        if is_compound(word):
            for part in usable_parts(word):
                seen.append(part)
                _add(raw, part, w * PART_WEIGHT)
        elif not shaped:
            prose.add(low)
            for form in word_forms(low) if FORM_WEIGHT else ():
                if not is_stop(form):
                    forms[form] = max(forms.get(form, 0.0), FORM_WEIGHT)
        plain = (not shaped or ends) and not is_compound(word) and word.isalpha()
        # (phrases fill only the room the task's own terms leave: once those are
        # MAX_TERMS, none would be kept, and none is collected)
        if (PHRASE_WEIGHT and plain and last is not None and len(raw) < MAX_TERMS
                and _PHRASE_GAP.fullmatch(task, last[0], m.start())):
            _add(phrases, last[1] + low, PHRASE_WEIGHT)
        last = (end, low) if plain else None
    for form, w in forms.items():
        if form not in raw:
            raw[form] = w
    return raw, code, names, seen, prose, frozenset(trailing - written), phrases


def _versioned(low: str, w: float, raw: dict[str, float], names: dict[str, float]) -> None:
    """A name with a version's digits at its end (``PersonName3``, ``urllib2``) also
    stands for the name without them, which is often what the code calls it now."""
    base = low.rstrip("0123456789")
    if base != low and len(base) >= 4 and base[-1] != "_" and not is_stop(base):
        _add(raw, base, w * PART_WEIGHT)
        names[base] = max(names.get(base, 0.0), w * PART_WEIGHT)


def _damp(raw: dict[str, float]) -> dict[str, float]:
    """Repetition counts, but less and less: a term named ten times is not ten times as
    telling as one named once (a traceback repeats its paths)."""
    out = {}
    for term, w in raw.items():
        out[term] = w if w <= CODE_WEIGHT else CODE_WEIGHT * (1.0 + math.log(w / CODE_WEIGHT))
    if len(out) > MAX_TERMS:
        keep = sorted(out, key=lambda t: (-out[t], t))[:MAX_TERMS]
        out = {t: out[t] for t in keep}
    return out


# A subject's leading scope, as commit conventions write it: Go's and the kernel's
# "pkg/sub: message", "a, b: message"; Conventional Commits' "type(scope): message"; numpy's
# and scipy's "BUG: module: message". Kinds of change and tracker keys are no scope.
_KINDS = frozenset(
    "fix fixes fixed bug bugfix feat feature chore docs doc test tests refactor perf build ci "  # noqa: SIM905 (60 words read best as one string)
    "style revert enh maint tst bld api dep rel sty rev wip hotfix release security deps "
    "breaking change update add remove cleanup minor major note todo typ internal".split()
)
_SOURCE_NAME_RE = re.compile(r"\.(?:c|h|cc|cpp|hpp|py|go|rs|js|ts|tsx|java|rb|md|toml|json|ya?ml)$")
_LEAD_RE = re.compile(r"\s*(?:\[[^\]\n]{1,40}\]|[A-Z][A-Z0-9]+-[0-9]+:?)\s*")
_TYPED_RE = re.compile(r"([A-Za-z]+)\(([^()\n]{1,80})\)!?:\s")
_SCOPE_RE = re.compile(r"([\w.*/-]{2,60}(?:\s*,\s*[\w.*/-]{2,60}){0,3}):\s")


def _scopes(task: str) -> tuple[str, ...]:
    """The scopes TASK's first line opens with (``commands: move ...`` gives commands;
    ``fix(toml): ...`` toml; ``BUG: sparse.linalg: ...`` sparse/linalg), as slashed,
    lower-cased paths; () when it opens with none."""
    line = task.lstrip().split("\n", 1)[0]
    for _ in range(3):
        m = _LEAD_RE.match(line)
        if not m or not m.group().strip():
            break
        line = line[m.end():]
    for _ in range(3):  # kinds first: "BUG: stats: ...", "fix(parser)!: ..."
        m = _TYPED_RE.match(line)
        if m:
            raw = m.group(2)
        else:
            m = _SCOPE_RE.match(line)
            if m is None:
                return ()
            raw = m.group(1)
            if raw.lower() in _KINDS:
                line = line[m.end():]
                continue
        out = []
        for part in re.split(r"\s*,\s*", raw):
            part = part.strip("*./-").lower()
            if "/" not in part:  # a dotted module (sparse.linalg), not a file (url.c)
                part = part.replace(".", "/") if not _SOURCE_NAME_RE.search(part) else part
            if part and part not in _KINDS and not part.isdigit():
                out.append(part)
        return tuple(dict.fromkeys(out))
    return ()


def _paths(task: str) -> list[str]:
    task = slashed(task)
    seen: dict[str, None] = {}
    for m in _PATH_RE.finditer(task):
        p = m.group(1).lstrip("./-").rstrip("./")
        if p and not p.startswith("http"):
            seen.setdefault(p, None)
    for m in _SLASH_PATH_RE.finditer(task):
        p = m.group(1).lstrip("./-").rstrip("./")
        if "/" in p and "//" not in p and not p.lower().startswith(("http", "www")):
            seen.setdefault(p, None)
    for m in _DOTTED_RE.finditer(task):
        dotted = m.group("name")
        if dotted.count(".") >= 1 and dotted.split(".")[-1].lower() not in _SOURCE_EXT:
            seen.setdefault(dotted.replace(".", "/"), None)
    return list(seen)


# A compound word as a file's name without its extension would be written: a run of
# letters, digits, ``_`` and ``-`` that is no part of a path, a dotted name or a longer word
# (matched only where such a run starts, so the scan is linear).
_STEM_RE = re.compile(r"(?<![\w./-])([A-Za-z0-9][\w-]*[A-Za-z0-9])(?![\w-]|[./]\w)")
MIN_STEM = 5


def _stems(task: str) -> tuple[str, ...]:
    """The compound words of TASK (``Query.stems``): code-shaped (``snake_case``,
    ``CamelCase``, letters with digits) or joined by hyphens, 5+ characters."""
    out: dict[str, None] = {}
    for m in _STEM_RE.finditer(task):
        word = m.group(1)
        if len(word) < MIN_STEM or not any(c.isalpha() for c in word):
            continue
        if _code_shaped(word) or "-" in word:
            out.setdefault(word.lower(), None)
            if len(out) >= MAX_POINTERS:
                break
    return tuple(out)


def _frames(task: str) -> list[Frame]:
    task = slashed(task)
    out: list[Frame] = []
    seen = set()
    for rx, pg, lg, fg in _FRAMES:
        for m in rx.finditer(task) if rx is not None else _any_frames(task):
            path = m.group(pg)
            line = int(m.group(lg)) if m.group(lg) else None
            func = m.group(fg) if fg else None
            if func:
                func = func.rsplit(".", 1)[-1].strip("<>") or None
                if func in ("module", "lambda", "listcomp", "genexpr", "anonymous"):
                    func = None
            key = (path, line)
            if key in seen:
                continue
            seen.add(key)
            out.append(Frame(path, line, func))
    for rx in (_GO_FUNC_RE, _RUST_FUNC_RE):
        for m in rx.finditer(task):
            func = re.split(r"[.:]+", m.group(1))[-1]
            if func and not is_stop(func):
                out.append(Frame(None, None, func))
    return out


def _any_frames(task: str) -> Iterator[re.Match]:
    """The matches ``re.finditer`` gives of the path.ext:N frame pattern, found in linear
    time: where a match ended, the next is tried at that position and the one after it
    (a position the start rule would wrongly skip: its path characters belong to the match
    before), then searched for from the positions where a match can start."""
    pos, end = 0, len(task)
    while pos <= end:
        m = None
        if pos:  # right after a match: the two positions the start rule cannot judge
            m = _ANY_FRAME_AT.match(task, pos) or (
                _ANY_FRAME_AT.match(task, pos + 1) if pos < end else None
            )
            search_from = pos + 2
        else:
            search_from = 0
        if m is None:
            if search_from > end:
                return
            m = _ANY_FRAME_START.search(task, search_from)
            if m is None:
                return
        yield m
        pos = m.end()  # never empty: a match holds at least "x.c:1"


def _fragments(message: str) -> list[str]:
    return [
        f.strip(" .,:;()[]")
        for f in _FRAGMENT_SPLIT_RE.split(message)
        if len(f.strip(" .,:;()[]")) >= MIN_FRAGMENT and " " in f.strip()
    ]


def _messages(task: str) -> list[str]:
    found: dict[str, None] = {}
    for m in _EXC_LINE_RE.finditer(task):
        if m.group(2):
            for f in _fragments(m.group(2)):
                found.setdefault(f, None)
    for m in _QUOTED_RE.finditer(task):
        text = next(g for g in m.groups() if g)
        for f in _fragments(text):
            if len(f.split()) >= MIN_QUOTED_WORDS:
                found.setdefault(f, None)
    return list(found)[:40]


def _ends(items: list) -> tuple:
    """ITEMS, or of too many (a pasted log of thousands of frames) the first and the last
    ``MAX_POINTERS // 2``: where a trace starts and where it ends (Python's most recent
    call is its last frame) say the most."""
    if len(items) <= MAX_POINTERS:
        return tuple(items)
    half = MAX_POINTERS // 2
    return (*items[:half], *items[-half:])


def parse_query(task: str) -> Query:
    """The query of TASK (see the module's docstring)."""
    return query_of_said(said(task))


def query_of_said(task: str) -> Query:
    """The query of TASK as ``prose.said`` leaves it: ``read_task``'s prose is, and is not
    blanked a second time (linear, but a pasted log's reading is seconds)."""
    raw, code, names, words, prose, trailing, phrases = _word_terms(task)
    frames = _frames(task)
    for fr in frames:
        if fr.function and not is_stop(fr.function):
            low = fr.function.lower()
            names[low] = max(names.get(low, 0.0), CODE_WEIGHT)
            raw[low] = raw.get(low, 0.0) + CODE_WEIGHT
            code.add(low)
    terms = _damp(raw)
    code = frozenset(t for t in code if t in terms)
    paths, frames, messages = _ends(_paths(task)), _ends(frames), tuple(_messages(task))
    made: set[str] = set()
    if _plain(code, names, paths, frames, messages, trailing):
        # Only a task of plain words reads its phrases as names: where the task writes
        # its names, they are the evidence (dev: a report full of code lost its fix's
        # file to "dicom dataset" and "following error" read as names).
        for phrase in sorted(phrases, key=lambda t: (-phrases[t], t)):
            if len(terms) >= MAX_TERMS:
                break  # (the task's own words first: a phrase is an extra reading of two)
            if phrase not in terms:
                terms[phrase] = phrases[phrase]
                made.add(phrase)
    return Query(
        terms=terms,
        code=code,
        names={n: w for n, w in sorted(names.items())},
        paths=paths,
        frames=frames,
        messages=messages,
        words=tuple(words),
        prose=frozenset(prose),
        scopes=_scopes(task),
        trailing=trailing,
        phrases=frozenset(made),
        stems=_stems(task),
        refs=task_refs(task, lambda: _code_regions(task)),
    )
