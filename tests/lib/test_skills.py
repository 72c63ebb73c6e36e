"""ctxtools.skills: loading SKILL.md folders, cards for the task, full bodies when earned."""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import pytest

from ctxtools import skills as sk
from ctxtools.errors import ExitStatus, InputError, NotFoundError, UsageError
from ctxtools.skills import (
    Skill,
    UnknownSkillError,
    choose_skills,
    load_skills,
    skill_mentions,
)

SKILLS = {
    "pdf": (
        "---\n"
        "name: pdf\n"
        "description: Extract text and tables from PDF files, fill in PDF forms, merge and\n"
        "  split documents. Use when the user works with PDF files.\n"
        "---\n"
        "\n"
        "# PDF\n\nOpen files with pypdf; tables with pdfplumber.\n"
    ),
    "spreadsheets": (
        "---\n"
        "name: xlsx\n"
        "description: >\n"
        "  Create and edit spreadsheets: formulas, charts,\n"
        "  pivot tables and number formats.\n"
        "---\n"
        "# Spreadsheets\n\nUse openpyxl.\n"
    ),
    "webapp-testing": (
        "---\n"
        'name: "webapp-testing"\n'
        "description: 'Test local web applications with Playwright: screenshots, browser\n"
        "  console logs, and clicking through user flows.'\n"
        "allowed-tools:\n"
        "  - Bash\n"
        "  - Read\n"
        "---\n"
        "# Web app testing\n\nStart the server first.\n"
    ),
    "git-commit": (
        "---\n"
        "name: git-commit\n"
        "description: Write commit messages for staged changes, in the imperative mood.\n"
        "---\n"
        "Run git diff --staged first.\n"
    ),
    "release-notes": (
        "---\n"
        "name: release-notes\n"
        "description: Draft release notes and a changelog entry from merged pull requests.\n"
        "---\n"
        "Group by feature, fix, breaking change.\n"
    ),
}


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def make_skills(root: Path, order: list[str] | None = None) -> Path:
    for folder in order or list(SKILLS):
        write(root, f"{folder}/SKILL.md", SKILLS[folder])
    return root


def tree_digest(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            out[str(p)] = "link" if p.is_symlink() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture
def loaded(tmp_path) -> list[Skill]:
    skills, notes = load_skills(make_skills(tmp_path / "skills"))
    assert notes == []
    return skills


def names(items) -> list[str]:
    return [(i[0] if isinstance(i, tuple) else i).name for i in items]


# --------------------------------------------------------------------------- loading


def test_load_skills_reads_names_descriptions_bodies(loaded):
    assert names(loaded) == ["git-commit", "pdf", "release-notes", "webapp-testing", "xlsx"]
    pdf = loaded[1]
    assert pdf == Skill(
        "pdf",
        "Extract text and tables from PDF files, fill in PDF forms, merge and split "
        "documents. Use when the user works with PDF files.",
        "pdf/SKILL.md",
        "# PDF\n\nOpen files with pypdf; tables with pdfplumber.\n",
    )
    xlsx = loaded[4]
    assert (xlsx.path, xlsx.description) == (
        "spreadsheets/SKILL.md",
        "Create and edit spreadsheets: formulas, charts, pivot tables and number formats.",
    )
    web = loaded[3]
    assert web.description.startswith("Test local web applications with Playwright: ")
    assert "\n" not in web.description


def test_top_level_skill_md_and_folder_names(tmp_path):
    root = tmp_path / "deploy"
    write(root, "SKILL.md", "---\ndescription: Deploy the service to staging.\n---\nSteps.\n")
    write(root, "lint/SKILL.md", "---\ndescription: Run the linters and fix findings.\n---\nx\n")
    write(root, "notes/README.md", "not a skill folder\n")
    write(root, ".hidden/SKILL.md", "---\nname: hidden\ndescription: never seen\n---\n")
    skills, notes = load_skills(root)
    assert [(s.name, s.path) for s in skills] == [("deploy", "SKILL.md"), ("lint", "lint/SKILL.md")]
    assert notes == []


def test_missing_description_and_no_front_matter_are_kept_with_a_note(tmp_path):
    write(tmp_path, "a/SKILL.md", "---\nname: alpha\n---\nalpha body\n")
    write(tmp_path, "b/SKILL.md", "# Beta\n\nNo front matter here.\n")
    skills, notes = load_skills(tmp_path)
    assert [(s.name, s.description, s.body) for s in skills] == [
        ("alpha", "", "alpha body\n"),
        ("b", "", "# Beta\n\nNo front matter here.\n"),
    ]
    assert notes == [
        "a/SKILL.md: no description in front matter; matched by its name only",
        "b/SKILL.md: no front matter; named 'b', no description",
    ]


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("---\nname: open\ndescription: never closed\n", "malformed front matter (no closing"),
        ("---\nname: x\nnot a key line\n---\n", "malformed front matter (line 3 is not"),
        ("---\nname: 'x\n---\n", "malformed front matter (name: unclosed '"),
        ("---\nname: [a, b]\ndescription: d\n---\n", "malformed front matter (name is a list)"),
        ("---\nname: two words\ndescription: d\n---\n", "skill name 'two words' is not usable"),
        ("---\nname: -dash\ndescription: d\n---\n", "skill name '-dash' is not usable"),
        ("---\nname: trailing.\ndescription: d\n---\n", "skill name 'trailing.' is not usable"),
        ("---\nname: x\nname: y\n---\n", "malformed front matter (key 'name' is given twice)"),
    ],
)
def test_malformed_skill_is_skipped_with_a_note(tmp_path, text, note):
    write(tmp_path, "good/SKILL.md", "---\nname: good\ndescription: fine\n---\nok\n")
    write(tmp_path, "bad/SKILL.md", text)
    before = tree_digest(tmp_path)
    skills, notes = load_skills(tmp_path)
    assert names(skills) == ["good"]
    assert len(notes) == 1 and notes[0].startswith("bad/SKILL.md: ")
    assert note in notes[0] and notes[0].endswith("skipped")
    assert tree_digest(tmp_path) == before


def test_other_keys_may_hold_any_yaml(tmp_path):
    write(
        tmp_path,
        "deploy/SKILL.md",
        "---\n"
        "name: deploy\n"
        "metadata:\n"
        "  version: 1.2\n"
        "  owners:\n"
        "    - team: infra\n"
        "      lead: someone\n"
        "allowed-tools:\n"
        "  - name: Bash\n"
        "    mode: ask\n"
        "description: Roll out the service to staging.\n"
        "license: see LICENSE.txt\n"
        "license: twice is not our business\n"
        "---\n"
        "Steps.\n",
    )
    skills, notes = load_skills(tmp_path)
    assert [(s.name, s.description, s.body) for s in skills] == [
        ("deploy", "Roll out the service to staging.", "Steps.\n")
    ]
    assert notes == []


def test_duplicate_names_first_by_path_wins(tmp_path):
    write(tmp_path, "a/SKILL.md", "---\nname: Tool\ndescription: first\n---\n")
    write(tmp_path, "b/SKILL.md", "---\nname: tool\ndescription: second\n---\n")
    skills, notes = load_skills(tmp_path)
    assert [(s.name, s.description) for s in skills] == [("Tool", "first")]
    assert notes == ["b/SKILL.md: skill name 'tool' already taken by a/SKILL.md; skipped"]


def test_binary_links_out_and_odd_entries(tmp_path):
    root = tmp_path / "skills"
    outside = tmp_path / "outside"
    write(outside, "SKILL.md", "---\nname: leak\ndescription: SECRET\n---\nSECRET\n")
    write(outside, "tool/SKILL.md", "---\nname: leak2\ndescription: SECRET\n---\n")
    write(root, "ok/SKILL.md", "---\nname: ok\ndescription: fine\n---\n")
    write(root, "bin/SKILL.md", b"---\nname: bin\n\x00\x01\x02")
    (root / "link").mkdir()
    (root / "link/SKILL.md").symlink_to(outside / "SKILL.md")
    (root / "linked-folder").symlink_to(outside / "tool")
    (root / "dir/SKILL.md").mkdir(parents=True)
    (root / "broken").mkdir()
    (root / "broken/SKILL.md").symlink_to(root / "nowhere.md")
    os.mkfifo(root / "fifo-skill.md")
    (root / "fifo").mkdir()
    os.rename(root / "fifo-skill.md", root / "fifo/SKILL.md")
    skills, notes = load_skills(root)
    assert names(skills) == ["ok"]
    assert notes == [
        "bin/SKILL.md: binary file; skipped",
        "broken/SKILL.md: a broken symlink; skipped",
        "dir/SKILL.md: not a regular file; skipped",
        "fifo/SKILL.md: not a regular file; skipped",
        "link/SKILL.md: resolves outside the skills directory; skipped",
        "linked-folder/SKILL.md: resolves outside the skills directory; skipped",
    ]


def test_unreadable_skill(tmp_path, monkeypatch):
    write(tmp_path, "a/SKILL.md", "---\nname: a\ndescription: d\n---\n")
    write(tmp_path, "b/SKILL.md", "---\nname: b\ndescription: d\n---\n")
    real_open = open

    def fake_open(path, *args, **kw):
        if "/a/" in str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kw)

    monkeypatch.setattr(sk, "open", fake_open, raising=False)
    skills, notes = load_skills(tmp_path)
    assert names(skills) == ["b"]
    assert notes == ["a/SKILL.md: cannot be read (Permission denied); skipped"]


def test_huge_skill_body_is_cut_and_long_description_shortened(tmp_path):
    body = "".join(f"step {i:06d} of a very long procedure\n" for i in range(30_000))
    desc = "word " * 400
    text = f"---\nname: huge\ndescription: {desc}\n---\n{body}"
    write(tmp_path, "huge/SKILL.md", text)
    skills, notes = load_skills(tmp_path)
    (skill,) = skills
    assert len(skill.description) == sk.DESCRIPTION_LIMIT and skill.description.endswith("…")
    size = len(text.encode())
    assert skill.body.endswith(" bytes of huge/SKILL.md left out]\n")
    kept = skill.body[: skill.body.rindex("[…")]
    assert body.startswith(kept) and kept.endswith("\n")
    header = len(text) - len(body)
    left = int(skill.body.rsplit("[… ", 1)[1].split(" ")[0].replace(",", ""))
    assert left == size - header - len(kept)
    assert notes == [
        "huge/SKILL.md: over 262,144 bytes; the body is cut there",
        "huge/SKILL.md: description over 1024 characters; cut",
    ]


def test_cjk_and_invalid_utf8(tmp_path):
    write(
        tmp_path,
        "invoice/SKILL.md",
        "---\nname: invoice\ndescription: 整理 发票 and reconcile invoices\n---\n按月份整理。\n",
    )
    write(tmp_path, "latin/SKILL.md", b"---\nname: latin\ndescription: caf\xe9 menus\n---\n\xff\n")
    skills, notes = load_skills(tmp_path)
    assert notes == []
    assert skills[0].body == "按月份整理。\n"
    assert skills[1].description == "caf\ufffd menus" and skills[1].body == "\ufffd\n"
    choice = choose_skills(skills, "把 发票 都找出来")
    assert names(choice.cards) == ["invoice"]


def test_empty_directory_is_a_note(tmp_path):
    assert load_skills(tmp_path) == ([], [f"no SKILL.md in {tmp_path} or its folders"])


def test_missing_skills_dir(tmp_path):
    with pytest.raises(NotFoundError) as exc:
        load_skills(tmp_path / "none")
    assert str(exc.value) == f"skills directory {tmp_path / 'none'}: no such directory"
    assert exc.value.exit_status == ExitStatus.FAILURE
    assert not (tmp_path / "none").exists()


def test_skills_dir_is_a_file(tmp_path):
    write(tmp_path, "f.md", "x")
    with pytest.raises(InputError) as exc:
        load_skills(tmp_path / "f.md")
    assert str(exc.value) == f"skills directory {tmp_path / 'f.md'}: not a directory"
    assert exc.value.exit_status == ExitStatus.FAILURE


def test_same_result_whatever_the_creation_order(tmp_path):
    rng = random.Random(3)
    results = []
    for k in range(4):
        order = list(SKILLS)
        rng.shuffle(order)
        root = make_skills(tmp_path / f"s{k}", order)
        skills, notes = load_skills(root)
        choice = choose_skills(skills, "split the PDF and test the web app @skill:xlsx")
        shuffled = list(skills)
        rng.shuffle(shuffled)
        again = choose_skills(shuffled, "split the PDF and test the web app @skill:xlsx")
        assert again == choice
        results.append(repr((skills, notes, choice)))
    assert len(set(results)) == 1


# --------------------------------------------------------------------------- choosing


def test_cards_best_score_first_and_name_in_task_expands(loaded):
    choice = choose_skills(loaded, "extract the tables from invoice.pdf")
    assert [(s.name, score) for s, score in choice.cards] == [("pdf", 2.5), ("xlsx", 0.333333)]
    assert names(choice.expanded) == ["pdf"]
    assert choice.reasons == {
        "pdf": "expanded: its name is in the task; score 2.50 (shared words: pdf, extract, tables)",
        "xlsx": "card: score below 2.5; score 0.33 (shared words: tables)",
    }
    assert choice.notes == []


def test_compound_name_in_task_in_any_spelling(loaded):
    for task in ("fix webapp testing flakes", "run webapp-testing", "see webappTesting"):
        choice = choose_skills(loaded, task)
        assert names(choice.expanded) == ["webapp-testing"], task


def test_word_forms_meet(loaded):
    choice = choose_skills(loaded, "tested the screenshot in a browser")
    assert names(choice.cards) == ["webapp-testing"]
    score = choice.cards[0][1]
    assert score == pytest.approx(2 * 1 / 2 + 2 / 4)  # "testing" of two name words; 2 words
    assert choice.expanded == []  # half the name: not earned
    assert "shared words: testing, screenshots, browser" in choice.reasons["webapp-testing"]


def test_high_score_without_the_name_in_a_row_expands(loaded):
    # every name word (commit, git) and two description words, not as "git commit" in a row
    choice = choose_skills(loaded, "commit to git: write the message for staged files")
    assert choice.cards[0][0].name == "git-commit"
    assert choice.cards[0][1] >= sk.EXPAND_SCORE
    assert names(choice.expanded) == ["git-commit"]
    assert choice.reasons["git-commit"].startswith("expanded: score ≥ 2.5; score")


def test_ties_break_by_name(tmp_path):
    for n in ("zeta", "alpha", "mid"):
        write(tmp_path, f"{n}/SKILL.md", f"---\nname: {n}\ndescription: parse yaml files\n---\n")
    skills, _ = load_skills(tmp_path)
    choice = choose_skills(skills, "parse the yaml")
    assert names(choice.cards) == ["alpha", "mid", "zeta"]
    assert len({score for _, score in choice.cards}) == 1


def test_no_identifiers_no_cards(loaded):
    choice = choose_skills(loaded, "please do it now")
    assert (choice.cards, choice.expanded, choice.reasons) == ([], [], {})


def test_mentions_and_pins_always_expand_first(loaded):
    choice = choose_skills(
        loaded, "write release notes, see @skill:git-commit", pinned=["xlsx"], max_expanded=2
    )
    # release-notes earned a body by name, but the two slots went to the named and pinned;
    # a mention is no word of the task, so git-commit's card scores by "write" alone
    assert names(choice.cards)[:2] == ["release-notes", "git-commit"]
    assert set(names(choice.expanded)) == {"git-commit", "xlsx"}
    assert choice.reasons["release-notes"].startswith(
        "card: its name is in the task, but over the 2 to expand"
    )
    assert choice.reasons["git-commit"].startswith(
        "expanded: named in the task (@skill:git-commit)"
    )
    assert choice.reasons["xlsx"] == "expanded: pinned; no shared words with the task"
    # expanded in card order, then the named/pinned that are not cards
    carded = names(choice.cards)
    assert names(choice.expanded) == [n for n in carded if n in {"git-commit", "xlsx"}] + [
        n for n in ("git-commit", "xlsx") if n not in carded
    ]
    assert choice.notes == []


def test_explicit_beyond_max_expanded_is_kept_and_noted(loaded):
    choice = choose_skills(loaded, "@skill:pdf @skill:xlsx", pinned=["git-commit"], max_expanded=1)
    assert sorted(names(choice.expanded)) == ["git-commit", "pdf", "xlsx"]
    assert choice.notes == [
        "3 skills named or pinned, over the 1 to expand: all of them are expanded"
    ]


def test_disclosure_cards_only_explicit_bodies(loaded):
    choice = choose_skills(loaded, "pdf tables and webapp testing", disclosure="cards")
    assert names(choice.cards)[:2] == ["pdf", "webapp-testing"]
    assert choice.expanded == []
    assert choice.reasons["pdf"].startswith("card: disclosure cards;")
    pinned = choose_skills(loaded, "pdf tables", disclosure="cards", pinned=["pdf"])
    assert names(pinned.expanded) == ["pdf"]


def test_disclosure_full_fills_the_slots_in_card_order(loaded):
    task = "draft the changelog and check the spreadsheet formulas and browser logs"
    auto = choose_skills(loaded, task)
    full = choose_skills(loaded, task, disclosure="full")
    assert auto.expanded == []
    assert names(full.cards) == names(auto.cards)
    assert len(full.cards) >= 3
    assert names(full.expanded) == names(full.cards)[:2]
    third = full.cards[2][0].name
    assert full.reasons[third].startswith("card: disclosure full, but over the 2 to expand")
    assert names(choose_skills(loaded, task, disclosure="full", max_expanded=9).expanded) == (
        names(full.cards)
    )


def test_pinned_as_one_string(loaded):
    assert names(choose_skills(loaded, "x", pinned="pdf").expanded) == ["pdf"]


def test_max_expanded_zero(loaded):
    choice = choose_skills(loaded, "extract pdf tables", max_expanded=0)
    assert choice.expanded == [] and names(choice.cards)[0] == "pdf"


def test_mention_names_are_case_insensitive(loaded):
    choice = choose_skills(loaded, "use @skill:PDF here")
    assert names(choice.expanded) == ["pdf"]
    assert choice.reasons["pdf"].startswith("expanded: named in the task (@skill:PDF)")


def test_skill_mentions():
    task = "use @skill:pdf. then @skill:web-app_testing, @skill:PDF again; a@skill:x (@skill:)"
    assert skill_mentions(task) == ["pdf", "web-app_testing"]
    assert skill_mentions("no mentions") == []
    assert skill_mentions("@skill:a.b-c!") == ["a.b-c"]


# --------------------------------------------------------------------------- bad input


def test_unknown_mentioned_skill_lists_the_closest(loaded):
    with pytest.raises(UnknownSkillError) as exc:
        choose_skills(loaded, "fill the form with @skill:pdff")
    assert str(exc.value) == (
        "unknown skill 'pdff' (@skill:pdff in the task) (closest to 'pdff': pdf)"
    )
    assert exc.value.names == ["pdff"]
    assert exc.value.exit_status == ExitStatus.FAILURE
    assert isinstance(exc.value, NotFoundError)


def test_unknown_pinned_and_mentioned_together(loaded):
    with pytest.raises(UnknownSkillError) as exc:
        choose_skills(loaded, "@skill:gitcommit", pinned=["zzz", "pdf"])
    assert str(exc.value) == (
        "unknown skills 'gitcommit' (@skill:gitcommit in the task), 'zzz' (pinned) "
        "(closest to 'gitcommit': git-commit)"
    )
    assert exc.value.names == ["gitcommit", "zzz"]


def test_unknown_skill_without_close_names(loaded):
    with pytest.raises(UnknownSkillError) as exc:
        choose_skills(loaded, "x", pinned=["kubernetes"])
    assert str(exc.value) == (
        "unknown skill 'kubernetes' (pinned) "
        "(known skills: git-commit, pdf, release-notes, webapp-testing, xlsx)"
    )


def test_unknown_skill_when_none_loaded():
    with pytest.raises(UnknownSkillError) as exc:
        choose_skills([], "@skill:pdf")
    assert str(exc.value) == "unknown skill 'pdf' (@skill:pdf in the task) (no skills were loaded)"


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"disclosure": "some"}, "unknown skill disclosure 'some' (one of auto, cards, full)"),
        ({"max_expanded": -1}, "max_expanded must be a whole number ≥ 0, not -1"),
        ({"max_expanded": True}, "max_expanded must be a whole number ≥ 0, not True"),
        ({"pinned": ["  "]}, "an empty skill name was pinned (give a skill's name)"),
    ],
)
def test_bad_arguments(loaded, kw, message):
    with pytest.raises(UsageError) as exc:
        choose_skills(loaded, "pdf", **kw)
    assert str(exc.value) == message
    assert exc.value.exit_status == ExitStatus.USAGE
