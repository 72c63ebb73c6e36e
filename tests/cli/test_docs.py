"""Man pages and completions are generated from the click commands and must be current."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _files(base: Path) -> dict[str, bytes]:
    out = {}
    for sub in ("man", "completions"):
        for p in sorted((base / sub).rglob("*")):
            if p.is_file():
                out[str(p.relative_to(base))] = p.read_bytes()
    return out


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs")
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_docs.py"), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    return out


def test_man_pages_and_completions_are_current(generated):
    fresh = _files(generated)
    committed = _files(ROOT)
    assert sorted(fresh) == sorted(committed), "run: python tools/gen_docs.py"
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"out of date (run python tools/gen_docs.py): {stale}"


def test_every_script_has_a_man_page_and_three_completions(generated):
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    for name in scripts:
        man = (generated / "man" / f"{name}.1").read_text()
        assert man.startswith(f'.TH "{name.upper()}" "1"')
        assert ".SH DESCRIPTION" in man
        assert (generated / "completions" / f"{name}.bash").is_file()
        assert (generated / "completions" / f"_{name}").is_file()
        assert (generated / "completions" / f"{name}.fish").is_file()


def test_bash_completion_matches_what_the_command_prints(generated):
    exe = Path(sys.executable).parent / "ctx-count"
    proc = subprocess.run(
        [str(exe)],
        env={"_CTX_COUNT_COMPLETE": "bash_source", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        check=True,
    )
    assert proc.stdout.decode() == (generated / "completions/ctx-count.bash").read_text()


def test_man_page_date_is_fixed_not_today(generated):
    from ctxtools import DOCS_DATE

    assert f'"{DOCS_DATE}"' in (generated / "man" / "ctx-count.1").read_text().splitlines()[0]


# --- the man pages render (issue 20) -------------------------------------------------------


def _render(page: Path) -> tuple[str, str]:
    """PAGE through groff as man renders it for a terminal: (text, warnings)."""
    groff = shutil.which("groff")
    assert groff, "groff is needed to check the man pages (apt-get install groff-base)"
    proc = subprocess.run(
        [groff, "-man", "-Tutf8", "-ww", "-P-cbou", str(page)],
        capture_output=True,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


def _examples(cmd) -> list[str]:
    """The lines of the help's \b blocks (the examples), as the help text has them."""
    import inspect

    out = []
    for para in re.split(r"\n[ \t]*\n", inspect.cleandoc(cmd.help)):
        rows = para.split("\n")
        if rows[0].strip() == "\b":
            # the "Examples:" heading becomes the man page's EXAMPLES section
            out.extend(row.rstrip() for row in rows[1:] if row.strip() and row != "Examples:")
    return out


# A screen: what --help may print before its options, and in all (issue 28.10: ctx-pack's
# help was 229 lines, its options starting after about 100 lines of prose).
PROSE_LINES = 35
HELP_LINES = 140


def test_help_is_short_and_the_man_page_holds_the_rest():
    """--help: the summary, a short paragraph, the exit statuses, the examples and a
    pointer to the man page, then the options; everything after click's \\f mark (the
    long text) is in the man page, not in --help."""
    import inspect
    import tomllib

    from click.testing import CliRunner

    sys.path.insert(0, str(ROOT / "tools"))
    import gen_docs

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    for name, target in scripts.items():
        cmd = gen_docs.load_command(target)
        shown = CliRunner().invoke(cmd, ["--help"], prog_name=name, terminal_width=80).output
        lines = shown.splitlines()
        prose = lines.index("Options:")
        assert prose <= PROSE_LINES and len(lines) <= HELP_LINES, (name, prose, len(lines))
        assert "Examples:" in [li.strip() for li in lines[:prose]], name
        assert f"The manual, man {name}, has" in shown, name
        long = inspect.cleandoc(cmd.help).partition("\f")[2]
        assert len(long.split()) > 50, name  # the details live on, in the page
        page = " ".join(_render(ROOT / "man" / f"{name}.1")[0].split())
        for para in re.split(r"\n[ \t]*\n", long.strip()):
            if not para.startswith("\b"):
                words = " ".join(para.split())
                assert words[:60] in page.replace("‐", "-"), (name, words[:60])
                assert " ".join(words.split()[:8]) not in " ".join(shown.split()), name


def test_no_user_text_speaks_of_the_seed():
    """The design's reference texts are not the user's: ctx-mcp's help said "the seed's
    rule"."""
    for path in [ROOT / "README.md", *sorted((ROOT / "man").glob("*.1"))]:
        assert "seed" not in path.read_text(encoding="utf-8").lower(), path.name


def test_every_man_page_renders_without_a_warning_and_loses_nothing():
    """groff -ww: every warning is a failure. A line starting with '.' or "'" is text
    (ctx-pack's '.cursorrules,' was read as a macro and lost), the example blocks are
    verbatim (not reflowed, not hyphenated) and no option is broken over two lines."""
    import tomllib

    sys.path.insert(0, str(ROOT / "tools"))
    import gen_docs

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    for name, target in scripts.items():
        page = ROOT / "man" / f"{name}.1"
        text, warnings = _render(page)
        assert warnings == "", f"{page.name}: {warnings}"
        rendered = [line.rstrip() for line in text.splitlines()]
        examples = _examples(gen_docs.load_command(target))
        assert examples, f"{name} has no example block"
        for ex in examples:
            assert any(line.endswith(ex) and line[: -len(ex)].isspace() for line in rendered), (
                f"{name}: example line not rendered verbatim: {ex!r}"
            )
        broken = [line for line in rendered if re.search(r"[A-Za-z]-$", line)]
        assert not broken, f"{name}: hyphenated or broken lines: {broken[:3]}"
        assert "\ufffd" not in text
    pack, _ = _render(ROOT / "man" / "ctx-pack.1")
    assert ".cursorrules," in " ".join(pack.split())
    compact, _ = _render(ROOT / "man" / "ctx-compact.1")
    assert "…" in compact or "→" in compact or "—" in compact  # non-ASCII survives


def test_roff_escapes_what_roff_would_read_as_markup():
    sys.path.insert(0, str(ROOT / "tools"))
    import gen_docs

    assert gen_docs.roff(".cursorrules, .cursor/rules") == r"\&.cursorrules, .cursor/rules"
    assert gen_docs.roff("'paths:' globs") == r"\&'paths:' globs"
    assert gen_docs.roff(r"--grep '\d+' café") == r"\-\-grep '\ed+' caf\[u00E9]"


# --- the wheel installs them where man and the shells look (issue 20) -----------------------

DATA = {
    "share/man/man1/{name}.1": "man/{name}.1",
    "share/bash-completion/completions/{name}.bash": "completions/{name}.bash",
    "share/zsh/site-functions/_{name}": "completions/_{name}",
    "share/fish/vendor_completions.d/{name}.fish": "completions/{name}.fish",
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built offline from a copy of the tracked sources."""
    src = tmp_path_factory.mktemp("src")
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    tops = ("ctxtools", "man", "completions", "pyproject.toml", "README.md")
    for rel in listed:
        if rel.split("/")[0] in tops and (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        + ["--no-index", "-w", str(dist), str(src)],
        check=True,
        capture_output=True,
    )
    (whl,) = dist.glob("ctxtools-*.whl")
    return whl


def test_the_wheel_carries_the_man_pages_and_completions(wheel):
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    with zipfile.ZipFile(wheel) as zf:
        (record,) = [n for n in zf.namelist() if n.endswith(".dist-info/RECORD")]
        listed = {line.split(",")[0] for line in zf.read(record).decode().splitlines()}
        (data,) = {n.split("/")[0] for n in zf.namelist() if ".data/" in n}
        for name in scripts:
            for installed, source in DATA.items():
                member = f"{data}/data/{installed.format(name=name)}"
                assert member in listed, member
                assert zf.read(member) == (ROOT / source.format(name=name)).read_bytes()


def test_pip_install_puts_them_where_man_finds_them(wheel, tmp_path):
    """A fresh venv from the wheel: with its bin/ on PATH, man finds ctx-count(1)."""
    env = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install"]
        + ["-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    for installed in DATA:
        assert (env / installed.format(name="ctx-read")).is_file(), installed
    if shutil.which("man"):
        found = subprocess.run(
            ["man", "-w", "ctx-count"],
            env={
                **{k: v for k, v in os.environ.items() if k != "MANPATH"},
                "PATH": f"{env / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            },
            capture_output=True,
            text=True,
        )
        assert found.stdout.strip() == str(env / "share/man/man1/ctx-count.1")


# --- completions of values only the toolkit knows (issue 20) --------------------------------

BIN = Path(sys.executable).parent


def _complete(prog: str, words: str, shell: str = "bash", **env: str) -> list[str]:
    var = "_" + prog.replace("-", "_").upper() + "_COMPLETE"
    cword = str(len(words.split()) - (0 if words.endswith(" ") else 1))
    if shell == "fish":  # fish passes the word being completed, not its index
        cword = "" if words.endswith(" ") else words.split()[-1]
    proc = subprocess.run(
        [str(BIN / prog)],
        env={**os.environ, var: f"{shell}_complete", "COMP_WORDS": words, "COMP_CWORD": cword}
        | env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if line]


def test_model_role_and_encoding_complete(tmp_path):
    from ctxtools import profiles

    names = [r["name"] for r in profiles.list_profiles()]
    got = _complete("ctx-count", "ctx-count --model gpt-4")
    assert got and got == [f"plain,{n}" for n in names if n.startswith("gpt-4")]
    roles = _complete("ctx-pack", "ctx-pack --role rev")
    assert roles == ["plain,reviewer"]
    assert _complete("ctx-excerpt", "ctx-excerpt --encoding ") == [
        "plain,cl100k_base",
        "plain,deepseek-v4",  # the open models' counters the test extra installs
        "plain,o200k_base",
        "plain,qwen2",
        "plain,qwen3.6",
    ]
    # a profiles file's models and roles come in too
    extra = tmp_path / "p.toml"
    extra.write_text('[models."house-coder"]\ncontext_limit = 65536\n\n[roles]\nhousekeeper = 40\n')
    assert _complete("ctx-count", "ctx-count --model hous", CTX_PROFILES=str(extra)) == [
        "plain,house-coder"
    ]
    assert "plain,housekeeper" in _complete(
        "ctx-count", f"ctx-count --profiles-file {extra} --budget --role h"
    )


def test_ctx_read_completes_the_stored_handles(tmp_path):
    from ctxtools.store import HandleStore

    store = tmp_path / "store"
    st = HandleStore(store)
    st.put_bytes(b"log line\n" * 200, name="tests")
    st.put_bytes(b'{"a": 1}', name="report")
    st.put_bytes(b"other\n", name="theirs", session="other")
    env = {"CTX_STORE": str(store)}
    assert _complete("ctx-read", "ctx-read ", **env) == ["plain,report", "plain,tests"]
    assert _complete("ctx-read", "ctx-read t", **env) == ["plain,tests"]
    assert _complete("ctx-read", "ctx-read ctx:", **env) == [
        "plain,ctx:default/report",
        "plain,ctx:default/tests",
    ]
    assert _complete("ctx-read", "ctx-read --session other ", **env) == ["plain,theirs"]
    assert _complete("ctx-read", "ctx-read ", CTX_STORE=str(tmp_path / "none")) == []


def test_fish_keeps_descriptions_whole():
    """click's fish script split each completion at every comma, cutting descriptions
    ("model, 128,000 tokens") at the first; ours splits the type off once."""
    source = (ROOT / "completions" / "ctx-count.fish").read_text()
    assert 'string split -m 1 "," $completion' in source
    assert 'string split "," $completion' not in source
    lines = _complete("ctx-count", "ctx-count --model gpt-4o", shell="fish")
    kind, rest = lines[0].split(",", 1)  # what fish's split -m 1 does
    assert kind == "plain"
    value, help_text = rest.split("\t")
    assert value == "gpt-4o" and re.fullmatch(r"family, \d{1,3}(,\d{3})+ tokens", help_text)
    proc = subprocess.run(
        [str(BIN / "ctx-count")],
        env={**os.environ, "_CTX_COUNT_COMPLETE": "fish_source"},
        capture_output=True,
        text=True,
    )
    assert proc.stdout == source


# --- the repository's docs stand alone (issue 20) --------------------------------------------


def test_docs_stand_alone_and_their_links_resolve():
    """A clone has nothing beside it: the README and docs/ point only at files of the clone."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert ROOT / "docs" / "DESIGN.md" in pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        # no path that climbs out of the clone, and the design only as the clone's copy
        assert not re.search(r"(?<![\w.])\.\./", text), page.name
        assert set(re.findall(r"[\w./-]*DESIGN\.md", text)) <= {"docs/DESIGN.md", "DESIGN.md"}
        for target in re.findall(r"`((?:docs|ctxtools|tests|tools|bench|examples)/[^`\s]*)`", text):
            path = target.rstrip("/").split("::")[0]
            if any(ch in path for ch in "*<{"):
                continue
            assert (ROOT / path).exists(), f"{page.name} names {target}, which is not in the clone"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    order = readme[readme.index("Reading order") :]
    assert order.index("docs/DESIGN.md") < order.index("docs/ARCHITECTURE.md")


def test_every_command_that_exits_130_on_ctrl_c_says_so_in_its_help():
    # README says every command ends with status 130 on Ctrl-C (tests/cli/test_signals.py
    # sends it); only ctx-read and ctx-mcp said it where a user looks for statuses
    import tomllib

    from click.testing import CliRunner

    sys.path.insert(0, str(ROOT / "tools"))
    import gen_docs

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    for name, target in scripts.items():
        cmd = gen_docs.load_command(target)
        shown = CliRunner().invoke(cmd, ["--help"], prog_name=name, terminal_width=80).output
        statuses = " ".join(shown[shown.index("Exit status:") :].split("\n\n", 1)[0].split())
        assert re.search(r"\b130 (Ctrl-C|after Ctrl-C)", statuses), (name, statuses)
