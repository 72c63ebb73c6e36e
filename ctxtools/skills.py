"""Skills for a pack: which skills a task gets as one-line cards, and which in full.

A skills directory holds one folder per skill, each with a ``SKILL.md`` (``pdf/SKILL.md``),
and may hold a ``SKILL.md`` of its own at the top. ``load_skills(dir)`` reads them; the
contract:

- Front matter (``---`` … ``---``, the YAML subset of ``ctxtools.instructions``) gives
  ``name`` and ``description`` (other keys, such as ``allowed-tools`` or a nested
  ``metadata`` mapping, are passed over unread); the body is the text after it (leading
  blank lines and trailing whitespace dropped). A missing ``name`` is the folder's name
  (the directory's own name for a top-level ``SKILL.md``). A missing or empty
  ``description``: a note, and the skill is kept with an empty description (it can still
  be pinned, named, or matched by its name). No front matter at all: the same, the whole
  file being the body.
- Skipped with a note: unterminated or malformed front matter, a ``name`` that is not
  ``[A-Za-z0-9]``, then letters, digits, ``.``, ``_``, ``-``, ending in a letter or digit (at
  most 128 characters: what ``@skill:NAME`` can spell), a name already taken (names compare
  case-insensitively; the first by path wins), binary files, unreadable files, and a
  ``SKILL.md`` (or skill folder) that resolves outside the skills directory. Hidden folders
  are not looked at.
- A description is made one line (whitespace runs become one space) and cut at
  ``DESCRIPTION_LIMIT`` characters with ``…``; a file over ``SKILL_LIMIT`` bytes is read that
  far, its body cut at a line boundary and ending with a ``[… N bytes of PATH left out]``
  line (noted).
- Skills come back sorted by name (case-insensitively, then as written).

``choose_skills(skills, task)`` decides what a pack shows:

- Score (deterministic, lexical): the task's words and each skill's name and description
  words are read by ``ctxtools.analyzer`` as every command reads a task (the one
  tokenizer and stop list: a compound name and its parts, stop words such as "use" and
  "when" dropped; the task's @-mentions are no words of it) and folded (a crude suffix
  fold so that "tests", "testing" and "test" meet). With N the
  name's words, D the description's other words and T the task's::

      score = 2 × |T ∩ N| / |N|  +  h / (h + 2),   h = |T ∩ D|

  so a skill whose every name word is in the task scores at least 2, and description
  words add at most 1 (1 word 0.33, 2 words 0.5, 4 words 0.67). A skill **matches** when
  its score is above 0 (one shared word); every match is a card, best score first, then
  name.
- Full bodies, at most ``max_expanded`` (default 2):

  * named in the task as ``@skill:NAME`` or pinned: always expanded, first, whatever the
    disclosure and even beyond ``max_expanded`` (an explicit request is never dropped;
    a note says when they exceed it). An unknown name raises ``UnknownSkillError``
    listing the closest names.
  * ``auto`` (default): the remaining slots go to matching skills that earned them, in
    card order: the skill's whole name appears in the task as words in a row
    (``pdf``, ``webapp testing``, ``webapp-testing``, ``webappTesting``), or the score is
    at least ``EXPAND_SCORE`` (2.5: every name word and at least two description words).
  * ``cards``: no other bodies.
  * ``full``: the remaining slots go to every matching skill, in card order.

  ``expanded`` is in card order, then the named/pinned skills that are not cards, in the
  order they were named (mentions first, then pins).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass

from ctxtools.binary import is_binary
from ctxtools.errors import InputError, NotFoundError, UsageError
from ctxtools.fsutil import check_resource, require_directory
from ctxtools.quoting import quote_name

SKILL_FILE = "SKILL.md"
SKILL_LIMIT = 256 << 10  # bytes read from one SKILL.md
DESCRIPTION_LIMIT = 1024  # characters of a card's description
EXPAND_SCORE = 2.5
MATCH_FLOOR = 0.0  # a skill matches when its score is above this
DISCLOSURES = ("auto", "cards", "full")
NAME_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,126}[A-Za-z0-9])?\Z")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: str  # relative to the skills dir, POSIX
    body: str  # the SKILL.md text after front matter


@dataclass
class SkillChoice:
    cards: list[tuple[Skill, float]]  # every skill that matches the task, best score first
    expanded: list[Skill]  # skills whose full body goes in, in card order
    notes: list[str]  # malformed SKILL.md skipped, etc.
    reasons: dict[str, str]  # skill name -> why expanded or carded (for --explain)


class UnknownSkillError(NotFoundError):
    """A pinned or ``@skill:`` name that no loaded skill has."""

    def __init__(self, message: str, *, hint: str | None = None, names: Sequence[str] = ()):
        super().__init__(message, hint=hint)
        self.names = list(names)


# --------------------------------------------------------------------------- loading


def load_skills(skills_dir: str | os.PathLike) -> tuple[list[Skill], list[str]]:
    """The skills under SKILLS_DIR, sorted by name, and notes (see the module's contract)."""
    base = os.fspath(skills_dir)
    require_directory(base, f"skills directory {base}")
    real_base = os.path.realpath(base)
    notes: list[str] = []
    try:
        entries = sorted(os.listdir(real_base))
    except OSError as exc:
        raise InputError(f"skills directory {base}: {exc.strerror or exc}") from None
    rels = [SKILL_FILE] if SKILL_FILE in entries else []
    rels += [f"{e}/{SKILL_FILE}" for e in entries if not e.startswith(".") and e != SKILL_FILE]
    taken: dict[str, str] = {}
    skills: list[Skill] = []
    for rel in rels:
        folder = rel.rsplit("/", 1)[0] if "/" in rel else os.path.basename(real_base)
        skill = _load_one(real_base, rel, folder, notes)
        if skill is None:
            continue
        key = skill.name.casefold()
        if key in taken:
            taker = quote_name(taken[key])
            what = f"{quote_name(rel)}: skill name {skill.name!r}"
            notes.append(f"{what} already taken by {taker}; skipped")
            continue
        taken[key] = rel
        skills.append(skill)
    if not skills and not notes:
        notes.append(f"no {SKILL_FILE} in {base} or its folders")
    skills.sort(key=lambda s: (s.name.casefold(), s.name))
    return skills, notes


def _inside(path: str, root: str) -> bool:
    return path.startswith(root.rstrip(os.sep) + os.sep)


def _load_one(base: str, rel: str, folder: str, notes: list[str]) -> Skill | None:
    path = os.path.join(base, *rel.split("/"))
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        notes.append(f"{quote_name(rel)}: cannot be read ({exc.strerror or exc}); skipped")
        return None
    real = os.path.realpath(path)
    if not _inside(real, base):
        notes.append(f"{quote_name(rel)}: resolves outside the skills directory; skipped")
        return None
    try:
        st = os.stat(real)
        if not stat.S_ISREG(st.st_mode):
            notes.append(f"{quote_name(rel)}: not a regular file; skipped")
            return None
        with open(real, "rb") as fh:
            data = fh.read(SKILL_LIMIT + 1)
    except FileNotFoundError:
        notes.append(f"{quote_name(rel)}: a broken symlink; skipped")
        return None
    except OSError as exc:
        check_resource(exc, real)
        notes.append(f"{quote_name(rel)}: cannot be read ({exc.strerror or exc}); skipped")
        return None
    if is_binary(data):
        notes.append(f"{quote_name(rel)}: binary file; skipped")
        return None
    cut = ""
    if len(data) > SKILL_LIMIT:
        data = data[:SKILL_LIMIT]
        nl = data.rfind(b"\n")
        data = data[: nl + 1] if nl >= 0 else data
        cut = f"[… {st.st_size - len(data):,} bytes of {quote_name(rel)} left out]\n"
        notes.append(f"{quote_name(rel)}: over {SKILL_LIMIT:,} bytes; the body is cut there")
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    return _parse_skill(text, rel, folder, cut, notes)


def _parse_skill(text: str, rel: str, folder: str, cut: str, notes: list[str]) -> Skill | None:
    from ctxtools.instructions.frontmatter import (
        FrontMatterError,
        parse_front_matter,
        split_front_matter,
    )

    lines = text.splitlines(keepends=True)
    fm_lines, taken, error = split_front_matter(lines)
    if error is not None:
        notes.append(f"{quote_name(rel)}: malformed front matter ({error}); skipped")
        return None
    meta: dict[str, str | list[str]] = {}
    if fm_lines is None:
        notes.append(f"{quote_name(rel)}: no front matter; named {folder!r}, no description")
    else:
        try:
            meta = parse_front_matter(fm_lines, ("name", "description"))
        except FrontMatterError as exc:
            notes.append(f"{quote_name(rel)}: malformed front matter ({exc}); skipped")
            return None
    name = meta.get("name", "")
    if not isinstance(name, str):
        notes.append(f"{quote_name(rel)}: malformed front matter (name is a list); skipped")
        return None
    name = name.strip() or folder
    if not NAME_RE.match(name):
        notes.append(
            f"{rel}: skill name {name!r} is not usable as @skill:NAME (letters, digits, "
            "'.', '_', '-'; starting and ending with a letter or digit); skipped"
        )
        return None
    desc = meta.get("description", "")
    if isinstance(desc, list):
        desc = " ".join(desc)
    desc = " ".join(desc.split())
    if not desc and fm_lines is not None:
        notes.append(f"{quote_name(rel)}: no description in front matter; matched by its name only")
    if len(desc) > DESCRIPTION_LIMIT:
        desc = desc[: DESCRIPTION_LIMIT - 1].rstrip() + "…"
        notes.append(f"{quote_name(rel)}: description over {DESCRIPTION_LIMIT} characters; cut")
    body = "".join(lines[taken:]).lstrip("\r\n").rstrip()
    body = body + "\n" + cut if body else cut
    return Skill(name, desc, rel, body)


# --------------------------------------------------------------------------- matching


def _fold(word: str) -> str:
    """A crude suffix fold: tests, testing, tested -> test; files, file -> fil."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) >= 5 and w.endswith("es"):
        w = w[:-2]
    elif len(w) >= 4 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if len(w) >= 6 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) >= 5 and w.endswith("ed"):
        w = w[:-2]
    if len(w) >= 4 and w.endswith("e"):
        w = w[:-1]
    return w


def _terms(text: str) -> dict[str, str]:
    """The words of TEXT (``ctxtools.analyzer``'s), folded, in order, without repeats:
    folded -> as read (lower-cased; the first spelling)."""
    from ctxtools.analyzer.tokenizer import words

    return _folded(words(text))


def _folded(read: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for word in read:
        out.setdefault(_fold(word), word)
    return out


@dataclass(frozen=True)
class _Score:
    score: float
    name_in_task: bool
    shared: tuple[str, ...]  # the shared (folded) words, name words first


def _score(skill: Skill, task_terms: set[str], task_seq: tuple[str, ...]) -> _Score:
    from ctxtools.analyzer.tokenizer import sequence
    from ctxtools.identifiers import contains_parts

    name_terms = _terms(skill.name)
    desc_terms = {f: w for f, w in _terms(skill.description).items() if f not in name_terms}
    name_hits = [name_terms[t] for t in name_terms if t in task_terms]
    desc_hits = [desc_terms[t] for t in desc_terms if t in task_terms]
    score = 0.0
    if name_terms:
        score += 2.0 * len(name_hits) / len(name_terms)
    if desc_hits:
        score += len(desc_hits) / (len(desc_hits) + 2)
    name_in_task = contains_parts(task_seq, sequence(skill.name))
    return _Score(round(score, 6), name_in_task, tuple(name_hits + desc_hits))


def skill_mentions(task: str) -> list[str]:
    """Names in ``@skill:NAME`` mentions of TASK, in order, without repeats (compared
    case-insensitively; the first spelling is kept). Trailing punctuation is not part of
    a name (``@skill:pdf.`` names ``pdf``): the mentions as ``ctxtools.analyzer`` parses
    them."""
    from ctxtools.analyzer import read_task

    out: dict[str, str] = {}
    for name in read_task(task).skill_names:
        out.setdefault(name.casefold(), name)
    return list(out.values())


def _unknown(missing: list[tuple[str, str]], skills: Sequence[Skill]) -> UnknownSkillError:
    import difflib

    folded = {s.name.casefold(): s.name for s in skills}
    hints = []
    for name, _ in missing:
        close = difflib.get_close_matches(name.casefold(), list(folded), n=3, cutoff=0.5)
        if close:
            hints.append(f"closest to {name!r}: {', '.join(folded[c] for c in close)}")
    if not skills:
        hint = "no skills were loaded"
    elif hints:
        hint = "; ".join(hints)
    else:
        shown = ", ".join(s.name for s in skills[:10]) + (", …" if len(skills) > 10 else "")
        hint = f"known skills: {shown}"
    listed = ", ".join(f"{name!r} ({where})" for name, where in missing)
    plural = "s" if len(missing) > 1 else ""
    return UnknownSkillError(
        f"unknown skill{plural} {listed}", hint=hint, names=[n for n, _ in missing]
    )


def choose_skills(
    skills: Sequence[Skill],
    task: str,
    *,
    disclosure: str = "auto",
    pinned: Sequence[str] = (),
    max_expanded: int = 2,
) -> SkillChoice:
    """Cards and full bodies for TASK (see the module's contract)."""
    if disclosure not in DISCLOSURES:
        raise UsageError(
            f"unknown skill disclosure {disclosure!r}", hint=f"one of {', '.join(DISCLOSURES)}"
        )
    if isinstance(max_expanded, bool) or not isinstance(max_expanded, int) or max_expanded < 0:
        raise UsageError(f"max_expanded must be a whole number ≥ 0, not {max_expanded!r}")
    if isinstance(pinned, str):  # one name, not its characters
        pinned = [pinned]
    from ctxtools.analyzer import read_task
    from ctxtools.analyzer.tokenizer import sequence

    explicit = _explicit_skills(skills, task, pinned)
    read = read_task(task)
    task_terms = set(_folded(read.words))
    task_seq = sequence(read.prose)
    scores = {s.name: _score(s, task_terms, task_seq) for s in skills}
    cards = [(s, scores[s.name].score) for s in skills if scores[s.name].score > MATCH_FLOOR]
    cards.sort(key=lambda c: (-c[1], c[0].name.casefold(), c[0].name))

    notes: list[str] = []
    if len(explicit) > max_expanded:
        notes.append(
            f"{len(explicit)} skills named or pinned, over the {max_expanded} to expand: "
            "all of them are expanded"
        )
    chosen, reasons = _expand(cards, scores, explicit, disclosure, max_expanded)
    carded = {s.name for s, _ in cards}
    for name, (_, why) in explicit.items():
        if name not in carded:
            reasons[name] = f"expanded: {why}; no shared words with the task"
    expanded = [s for s, _ in cards if s.name in chosen]
    expanded += [s for name, (s, _) in explicit.items() if name not in carded]
    return SkillChoice(cards, expanded, notes, reasons)


def _explicit_skills(
    skills: Sequence[Skill], task: str, pinned: Sequence[str]
) -> dict[str, tuple[Skill, str]]:
    """The skills named in TASK (``@skill:NAME``) or PINNED, each with why; an
    UnknownSkillError naming every one that is not among SKILLS."""
    by_name = {s.name.casefold(): s for s in skills}
    explicit: dict[str, tuple[Skill, str]] = {}
    missing: list[tuple[str, str]] = []
    for name in skill_mentions(task):
        skill = by_name.get(name.casefold())
        if skill is None:
            missing.append((name, f"@skill:{name} in the task"))
        else:
            explicit.setdefault(skill.name, (skill, f"named in the task (@skill:{name})"))
    for name in pinned:
        name = str(name).strip()
        if not name:
            raise UsageError("an empty skill name was pinned", hint="give a skill's name")
        skill = by_name.get(name.casefold())
        if skill is None:
            if all(name.casefold() != m.casefold() for m, _ in missing):
                missing.append((name, "pinned"))
        else:
            explicit.setdefault(skill.name, (skill, "pinned"))
    if missing:
        raise _unknown(missing, skills)
    return explicit


def _earned(disclosure: str, sc: _Score) -> tuple[bool, str]:
    """Whether a card earns its full body under DISCLOSURE, and why."""
    if disclosure == "cards":
        return False, "disclosure cards"
    if disclosure == "full":
        return True, "disclosure full"
    if sc.name_in_task:
        return True, "its name is in the task"
    if sc.score >= EXPAND_SCORE:
        return True, f"score ≥ {EXPAND_SCORE}"
    return False, f"score below {EXPAND_SCORE}"


def _expand(cards, scores, explicit, disclosure: str, max_expanded: int):
    """(the names expanded, a reason per card): the explicit skills, then the cards that
    earn it, best first, while slots are left."""
    reasons: dict[str, str] = {}
    chosen = set(explicit)
    slots = max(0, max_expanded - len(explicit))
    for skill, score in cards:
        sc = scores[skill.name]
        words = f"shared words: {', '.join(sc.shared)}"
        if skill.name in explicit:
            reasons[skill.name] = f"expanded: {explicit[skill.name][1]}; score {score:.2f}"
            continue
        earned, why = _earned(disclosure, sc)
        if earned and slots > 0:
            slots -= 1
            chosen.add(skill.name)
            reasons[skill.name] = f"expanded: {why}; score {score:.2f} ({words})"
        elif earned:
            reasons[skill.name] = (
                f"card: {why}, but over the {max_expanded} to expand; score {score:.2f} ({words})"
            )
        else:
            reasons[skill.name] = f"card: {why}; score {score:.2f} ({words})"
    return chosen, reasons
