"""Man pages and completions are generated from the click commands and must be current."""

from __future__ import annotations

import subprocess
import sys
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
        assert (generated / "completions" / f"_{name}").is_file()  # zsh
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
