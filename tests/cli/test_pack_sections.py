"""ctx-pack's sections from real trees: instructions (priority, caps, gating), skills
(cards, earned bodies), @-mentions, and secrets kept out of what goes to a provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import copy_sources, git

# A private key made for this test suite with `openssl genpkey -algorithm ed25519`: it
# guards nothing, and only has to look like the real thing.
PRIVATE_KEY = """-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIBn3u+Yt0vPq0m8Q8Jv3qk2wYH1Zk9y0r5m8a1b2c3d4
-----END PRIVATE KEY-----
"""
AWS_EXAMPLE_KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example access key id


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    copy_sources(root)
    monkeypatch.chdir(root)
    return root


def run(script_runner, *args, ok=True):
    r = script_runner.run(["ctx-pack", *args])
    assert "Traceback" not in r.stderr
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def doc(script_runner, *args) -> dict:
    return json.loads(run(script_runner, *args, "--json").stdout)


# --- instructions --------------------------------------------------------------------------


def test_instruction_files_in_priority_order_with_layering(script_runner, tree):
    (tree / "AGENTS.md").write_text("Root agents: use tabs in Go.\n")
    (tree / "CLAUDE.md").write_text("Claude: answer briefly.\n")
    (tree / ".cursorrules").write_text("Cursor: prefer small functions.\n")
    (tree / ".ctx").mkdir()
    (tree / ".ctx" / "AGENTS.md").write_text("Layered under the root AGENTS.md.\n")
    (tree / ".ctx" / "PROJECT.md").write_text("Project: a warehouse service.\n")
    (tree / "README.md").write_text("Readme text.\n")
    d = doc(script_runner, "-q", "tokenize", "core/lexer.rs", "--tokens", "4000")
    (ins,) = [s for s in d["sections"] if s["name"] == "instructions"]
    labels = [p["label"] for p in ins["parts"]]
    assert labels.index("AGENTS.md") < labels.index("CLAUDE.md") < labels.index(".cursorrules")
    assert labels.index("AGENTS.md") < labels.index(".ctx/AGENTS.md")
    assert "README.md" not in labels
    text = d["text"]
    assert text.index("Root agents") < text.index("Layered under the root")
    d = doc(script_runner, "-q", "tokenize", "core/lexer.rs", "--include-readme")
    assert "Readme text." in d["text"]


def test_a_huge_instructions_file_is_capped(script_runner, tree):
    (tree / "AGENTS.md").write_text("".join(f"Rule {i}: keep it simple.\n" for i in range(50_000)))
    (tree / "CLAUDE.md").write_text("Second file.\n")
    d = doc(script_runner, "-q", "tokenize", "core/lexer.rs", "--tokens", "8000")
    (ins,) = [s for s in d["sections"] if s["name"] == "instructions"]
    start = d["text"].index("## AGENTS.md")
    end = d["text"].index("# Repository map")
    assert len(d["text"][start:end].encode()) < 12_000 + 400  # caps, plus headings
    assert "Rule 0: keep it simple." in d["text"]
    assert "Rule 49999" not in d["text"]
    assert d["tokens"] <= 8000


def test_gating_by_front_matter_and_by_section(script_runner, tree):
    (tree / "AGENTS.md").write_text(
        "Always: run the tests.\n\n"
        "## Web <!-- paths: web/** -->\n\nUse strict TypeScript.\n\n"
        "## Rust <!-- paths: core/**/*.rs -->\n\nNo unwrap in library code.\n"
    )
    (tree / ".cursor" / "rules").mkdir(parents=True)
    (tree / ".cursor" / "rules" / "go.mdc").write_text(
        "---\ndescription: Go rules\nglobs: srv/**/*.go\n---\nReturn errors, never panic.\n"
    )
    text = doc(script_runner, "-q", "tokenize", "core/lexer.rs")["text"]
    assert "Always: run the tests." in text
    assert "No unwrap in library code." in text
    assert "Use strict TypeScript." not in text
    assert "never panic" not in text
    text = doc(script_runner, "-q", "serve", "srv/server.go", "web/cart.ts")["text"]
    assert "Use strict TypeScript." in text and "never panic" in text
    assert "No unwrap" not in text


def test_malformed_front_matter_is_warned_and_the_file_applies(script_runner, tree):
    (tree / "AGENTS.md").write_text("---\npaths: [unclosed\nstill front matter\n")
    r = run(script_runner, "-q", "tokenize", "core/lexer.rs")
    assert "AGENTS.md" in r.stderr and "front matter" in r.stderr
    assert "# Instructions" in r.stdout


# --- skills --------------------------------------------------------------------------------


def make_skills(root: Path) -> Path:
    skills = root / "skills"
    for name, desc, body in [
        ("lexer-debugging", "Debug tokenize errors in the Rust lexer", "Step 1: print tokens.\n"),
        ("go-handlers", "Write HTTP handlers in Go with rate limits", "Use middleware.\n"),
        ("release", "Cut a release of the service", "Tag, build, publish.\n"),
    ]:
        d = skills / name
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {desc}\n---\n{body}")
    return skills


def test_skills_cards_and_earned_bodies(script_runner, tree):
    skills = make_skills(tree)
    d = doc(
        script_runner,
        "-q",
        "debug the tokenize error in the lexer",
        "core/lexer.rs",
        "--skills",
        str(skills),
        "--tokens",
        "6000",
    )
    text = d["text"]
    assert "# Skills" in text
    assert "lexer-debugging" in text
    assert text.index("# Skills") < text.index("# Repository map")
    # named in the task: its body comes in
    d = doc(script_runner, "-q", "cut it @skill:release", "core/lexer.rs", "--skills", str(skills))
    assert "Tag, build, publish." in d["text"]
    # pinned, but cards only for the others
    d = doc(
        script_runner,
        "-q",
        "tokenize",
        "core/lexer.rs",
        "--skills",
        str(skills),
        "--pin-skill",
        "go-handlers",
        "--skill-disclosure",
        "cards",
    )
    assert "Use middleware." in d["text"]


def test_unknown_skill_is_an_error_naming_the_close_ones(script_runner, tree):
    skills = make_skills(tree)
    r = run(
        script_runner, "-q", "do @skill:relase", "core/lexer.rs", "--skills", str(skills), ok=False
    )
    assert r.returncode == 1
    assert "relase" in r.stderr and "release" in r.stderr
    r = run(
        script_runner,
        "-q",
        "do @skill:relase",
        "core/lexer.rs",
        "--skills",
        str(skills),
        "--keep-going",
    )
    assert "relase" in r.stderr
    r = run(script_runner, "-q", "do @skill:release", "core/lexer.rs", ok=False)
    assert r.returncode == 2 and "--skills" in r.stderr


# --- mentions ------------------------------------------------------------------------------


def test_mentions_resolve_files_and_explain_says_how(script_runner, tree):
    r = run(
        script_runner,
        "-q",
        "fix reserve in @inventory.py and see @core/lexer.rs",
        "--explain",
        "--tokens",
        "6000",
    )
    assert "==> src/inventory.py <==" in r.stdout
    assert "==> core/lexer.rs <==" in r.stdout
    assert "mentions" in r.stderr and "@inventory.py" in r.stderr
    d = doc(script_runner, "-q", "fix reserve in @inventory.py")
    (row,) = [f for f in d["files"] if f["path"] == "src/inventory.py"]
    assert row["named"] is True and row["why"] == "@-mention"


def test_an_unresolved_mention_is_a_warning_with_the_closest_names(script_runner, tree):
    r = run(script_runner, "-q", "fix @inventroy.py please", "core/lexer.rs")
    assert "@inventroy.py not resolved" in r.stderr
    assert "inventory.py" in r.stderr


def test_an_ambiguous_mention_says_what_it_took_and_how_to_be_precise(script_runner, tree):
    """Issue 28.6: @base.py matching several files picks one; stderr says which, names the
    others and a mention that would pick another. A precise mention says nothing."""
    for d in ("web/template", "db/models", "forms"):
        (tree / d).mkdir(parents=True)
        (tree / d / "base.py").write_text(f"ORIGIN = {d!r}\n")
    r = run(script_runner, "-q", "fix @base.py", "--tokens", "3000")
    assert r.stderr == (
        "ctx-pack: note: @base.py is ambiguous (3 files named base.py: none used before; "
        "shallowest path); took forms/base.py, not db/models/base.py, web/template/base.py: "
        "write more of the path to choose, e.g. @models/base.py\n"
    )
    r = run(script_runner, "-q", "fix @models/base.py", "--tokens", "3000")
    assert r.stderr == ""
    assert "ORIGIN = 'db/models'" in r.stdout


def test_a_handle_mention_is_packed(script_runner, tree):
    import io

    data = "".join(f"ok {i}\n" for i in range(2000)) + "panic in tokenize: bad char\n"
    r = script_runner.run(
        ["ctx-stash", "--name", "log", "--always"],
        stdin=io.TextIOWrapper(io.BytesIO(data.encode())),
    )
    assert r.returncode == 0, r.stderr
    d = doc(script_runner, "-q", "why does tokenize panic, see @ctx:log")
    assert "panic in tokenize: bad char" in d["text"]


# --- secrets -------------------------------------------------------------------------------


def test_secret_files_are_skipped_even_when_named_and_secrets_redacted(script_runner, tree):
    (tree / ".env").write_text(f"AWS_ACCESS_KEY_ID={AWS_EXAMPLE_KEY}\n")
    (tree / "deploy").mkdir()
    (tree / "deploy" / "id_rsa").write_text(PRIVATE_KEY)
    (tree / "src" / "settings.py").write_text(
        "DEBUG = False\n"
        f'AWS_KEY = "{AWS_EXAMPLE_KEY}"\n'
        f'SIGNING_KEY = """{PRIVATE_KEY}"""\n'
        "def reserve_settings():\n    return DEBUG\n"
    )
    r = run(
        script_runner,
        "-q",
        "reserve settings",
        ".env",
        "deploy/id_rsa",
        "src/settings.py",
        "--explain",
    )
    out = r.stdout
    assert AWS_EXAMPLE_KEY not in out and "BEGIN PRIVATE KEY" not in out
    assert "[secret redacted:" in out
    assert "skipped .env" in r.stderr and "skipped deploy/id_rsa" in r.stderr
    assert "redacted" in r.stderr
    # line numbers stay true after the redaction
    assert "def reserve_settings():" in out
    r = run(script_runner, "-q", "reserve settings", "src/settings.py", "--allow-secrets")
    assert AWS_EXAMPLE_KEY in r.stdout


def test_secrets_in_instructions_and_diffs_are_redacted(script_runner, tree):
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "initial")
    (tree / "AGENTS.md").write_text(f"Deploy with key {AWS_EXAMPLE_KEY}.\n")
    lexer = tree / "core" / "lexer.rs"
    lexer.write_text(lexer.read_text() + f'\n// key: "{AWS_EXAMPLE_KEY}"\n')
    r = run(script_runner, "-q", "review", "--changed")
    assert AWS_EXAMPLE_KEY not in r.stdout
    assert r.stdout.count("[secret redacted:") >= 2


@pytest.mark.process
def test_a_name_that_is_not_utf8_gives_json_not_a_traceback(script_runner, tmp_path):
    """ctx-pack --format json of a tree holding a file whose name has the byte 0xFF ended in
    a traceback (orjson cannot write the lone surrogate the name is held as): the JSON shows
    the byte as U+FFFD, as every command's JSON does, with the name as the text shows it in
    "path_quoted"; the text shows it by the name rule, quoted and escaped (it was the raw
    byte: no UTF-8)."""
    import os

    root = tmp_path / "proj"
    root.mkdir()
    name = os.fsdecode(b"bad\xffname.py")
    (root / name).write_text("def frobnicate_rows():\n    return 1\n", encoding="utf-8")
    r = script_runner.run(["ctx-pack", "-q", "fix frobnicate_rows", "-f", "json", "."], cwd=root)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    doc = json.loads(r.stdout)
    assert [f["path"] for f in doc["files"]] == ["bad\ufffdname.py"]
    assert [f["path_quoted"] for f in doc["files"]] == ['"bad\\377name.py"']
    assert '==> "bad\\377name.py" <==' in doc["text"]
    out = tmp_path / "pack.md"
    plain = script_runner.run(["ctx-pack", "-q", "fix frobnicate_rows", "-o", str(out), "."],
                              cwd=root)  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    assert b'==> "bad\\377name.py" <==' in out.read_bytes() and b"\xff" not in out.read_bytes()
    assert b"1\tdef frobnicate_rows():" in out.read_bytes()


def test_json_output_of_a_string_with_a_byte_that_is_not_utf8():
    from ctxtools.cli.outputs import json_dumps

    assert json_dumps({"bad\udcffkey": ["x\udcfe", 1]}) == (
        '{"bad\ufffdkey":["x\ufffd",1]}\n'.encode()
    )
