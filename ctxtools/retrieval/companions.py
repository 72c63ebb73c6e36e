"""Files that change together: the companions of a pack's best files, from the history.

A fix of one file often needs another that nothing in the task names and few of its words
reach: the other backend of a pair (``curl_ngtcp2.c`` / ``curl_osslq.c``), a module's OS
extension, the registry that lists a plugin. The history knows them: they are changed in
the same commits. So, for a pack with room for ``ROOM`` tokens of files or more, in the
history's thread (``history.Pending``'s ALSO):

1. ``git log --name-only`` of the last ``history.N_COMMITS`` non-merge commits under the
   root (trees compared, no diff computed; 0.2-0.4 s on kafka, curl, rails) gives each
   commit's files, 2 to ``history.MAX_FILES`` of them (one file alone has no companion; a
   rename or a reformat of many says nothing; a commit without a parent adds them all);
2. ``apply``: a file changed with one of the ``TOP`` best-ranked files A in ``PAIRS``
   commits or more gains ``SHARE`` x its confidence (the share of A's commits that also
   change it, A's counted as at least ``MIN``) x A's score x its role prior, in its file
   score and, as a file's share does, in each chunk's (the chunk's history part in
   ``--explain``); its reasons say which file and how many commits.

Only what the task reached is raised (a file of the ranking), and only for a pack with the
room: at a small budget the companion takes the room of the file the fix is in. Chosen on
the five tuning lists (dev, tune, tune2, tune3, the large list; ``bench/pack_quality/
tune.py --history --variant``): at 32k, SHARE 0.5 moved 6 of 226 fixes up and 2 down, the
large list 0.668 -> 0.689 of a fix's lines (every hunk 48% -> 50%), the others within
0.001; at 8k it cost tune2 0.667 -> 0.620, and 16k was even (the twenty-eighth session's
runs), hence ``ROOM``, between the two. No git, a partial clone (an old tree could come
from the network), a git that fails or outlasts ``history.TIMEOUT``: no companions.
``CTX_HISTORY=0`` turns them off with the rest of the history.
"""

from __future__ import annotations

from collections import Counter

from ctxtools.retrieval import history

ROOM = 24_000  # the tokens of files (and map) a pack needs before it reads companions
TOP = 3  # the best files whose companions rank up
SHARE = 0.5  # a companion gains this share of the top file's score x the confidence
MIN = 3  # a top file's commits counted as at least this many (2 of 2: not sure yet)
PAIRS = 2  # commits that change both before a file counts as a companion


def read_changes(root: str) -> list[frozenset[str]]:
    """The files each of the last ``history.N_COMMITS`` non-merge commits under ROOT
    changed, relative to ROOT, newest first (see the module's docstring); an empty list
    when there is no history to read."""
    try:
        where = history.run_git(root, ["rev-parse", "--show-prefix"])
        if where is None or history.partial_clone(root):
            return []
        out = history.run_git(root, [
            "log", f"-n{history.N_COMMITS}", "--no-merges", "-z", "--name-only",
            "--no-renames", "--relative", "--format=%x01%P", "HEAD", "--",
            *(["."] if where.strip() else [])], history.MAX_LOG_BYTES)
    except TimeoutError:
        return []
    if not out:
        return []
    return parse_changes(out, cut=len(out) >= history.MAX_LOG_BYTES)


def parse_changes(out: bytes, cut: bool = False) -> list[frozenset[str]]:
    """The sets of files of ``git log -z --name-only --format=%x01%P``'s OUT (CUT: the
    output stopped at its limit, so its last record is not counted)."""
    records = out.split(b"\x01")[1:]
    if cut:
        records = records[:-1]
    got = []
    for rec in records:  # PARENTS "\0\n", then NAME "\0" each
        parents, _, names = rec.partition(b"\0")
        if not parents.strip():  # a root commit (or a shallow clone's boundary) adds all
            continue
        files = frozenset(n.decode("utf-8", "surrogateescape")
                          for n in names.removeprefix(b"\n").split(b"\0") if n)
        if 1 < len(files) <= history.MAX_FILES:
            got.append(files)
    return got


def apply(ranking, changes: list[frozenset[str]], file_mix: float) -> int:
    """Raise RANKING's companions of its ``TOP`` best files by CHANGES (see the module's
    docstring; FILE_MIX: the share of a file's score each of its chunks gets, the
    ranking's). The top files are those before any gain; the files are sorted again.
    Returns how many files gained."""
    if not changes or not SHARE:
        return 0
    docs = {d.label: d for d in ranking.docs}
    gains: dict[str, tuple[float, str, int, int]] = {}
    for a in [d for d in ranking.docs[:TOP] if d.score > 0]:
        together: Counter = Counter()
        n_a = 0
        for files in changes:
            if a.label in files:
                n_a += 1
                together.update(f for f in files if f != a.label and f in docs)
        for b, n in together.items():
            gain = SHARE * n / max(n_a, MIN) * a.score
            if n >= PAIRS and gain > gains.get(b, (0.0,))[0]:
                gains[b] = (gain, a.label, n, n_a)
    for b, (gain, a_label, n, n_a) in sorted(gains.items()):
        d = docs[b]
        g = gain * d.prior
        d.score += g
        for k in range(len(d.scores)):
            history.add_part(d, k, file_mix * g)
        d.why.append(f"changed together with {a_label} ({n} of its {n_a} commits)")
    if gains:
        ranking.docs.sort(key=lambda d: (-d.score, d.label))
    return len(gains)
