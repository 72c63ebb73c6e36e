"""Reading a task is linear in its length (issue 27, item 9): the two patterns that were
quadratic in the length of one long word -- dotted names and path.ext:N frames -- start
only where a match can start, and find exactly what they found before."""

from __future__ import annotations

import random
import re

from ctxtools.analyzer import parse_query
from ctxtools.analyzer import query as terms

# The patterns as they were (the specification of what must be found).
OLD_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
OLD_FRAME = re.compile(
    r"((?:[\w.-]+/)*[\w.-]+\.(?:go|rs|c|h|cc|cpp|cxx|hpp|rb|php|swift|cs|ts|tsx|js|jsx"
    r"|mjs|cjs|py|pyx|java|kt|scala|lua|ex|exs|dart)):(\d+)"
)
PIECES = ["a", "Zb", "_", "1", "42", ".", "/", "//", "-", ":", " ", "py", ".go", ".c:", "\n"]
PIECES += [":7", "x.py:12", "é", "(", "~/", "src/", "a.b"]

REAL = [
    'Traceback (most recent call last):\n  File "/srv/app/pkg/views.py", line 12, in get\n'
    "    return self.render()\nValueError: bad value for the field\n",
    "/home/ann/venv/lib/python3.12/site-packages/pkg/mod.py:40: FutureWarning: x\n",
    "panic: boom\n\ngoroutine 1 [running]:\nmain.(*Server).Handle(...)\n\t/src/srv/server.go:88"
    " +0x1d\n",
    "thread 'main' panicked at src/lib.rs:17:5:\n   0: core::panicking::panic\n",
    "fix django.db.models.query.QuerySet.bulk_create in django/db/models/query.py:750",
    "a.py:12b.py:3 and a.py:12/b.py:3 and x.py:1:2 and 9abc.def and a.9b.c",
]


def _random_texts(n: int, seed: int = 27) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 60))) for _ in range(n)]


def test_dotted_names_are_the_ones_the_old_pattern_found():
    for text in REAL + _random_texts(3000):
        old = [(m.group(), m.end()) for m in OLD_DOTTED.finditer(text)]
        new = [(m.group("name"), m.end()) for m in terms._DOTTED_RE.finditer(text)]
        assert new == old, text


def test_frames_are_the_ones_the_old_pattern_found():
    for text in REAL + _random_texts(3000, seed=9):
        old = [(m.span(), m.groups()) for m in OLD_FRAME.finditer(text)]
        new = [(m.span(), m.groups()) for m in terms._any_frames(text)]
        assert new == old, text


def test_a_match_never_starts_inside_a_word_or_a_path():
    # the structure that makes the scans linear: a start inside a run of word (or path)
    # characters is refused at once, where the old patterns scanned the rest of the run
    word = "a" * 5000 + ".b"
    assert terms._DOTTED_RE.match(word, 0) is not None
    assert terms._DOTTED_RE.match(word, 1) is None and OLD_DOTTED.match(word, 1) is not None
    path = "src/" * 1000 + "x.py:1"
    assert terms._ANY_FRAME_START.match(path, 0) is not None
    for start in (1, 4, 5):
        assert terms._ANY_FRAME_START.match(path, start) is None
        assert OLD_FRAME.match(path, start) is not None


def test_a_one_word_task_and_real_tasks_read_as_before():
    q = parse_query("x" * 50_000)
    assert (q.paths, q.frames, q.messages) == ((), (), ())
    q = parse_query(REAL[0] + REAL[4])
    assert "pkg/views.py" in q.paths[0] or any("views.py" in p for p in q.paths)
    assert "django/db/models/query/QuerySet/bulk_create" in q.paths
    assert any(f.path == "django/db/models/query.py" and f.line == 750 for f in q.frames)
