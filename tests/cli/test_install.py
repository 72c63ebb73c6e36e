"""The install lines the README gives for ctx-mcp work as written (issue 28.2), offline: a
fresh environment sees this one's packages (a .pth), so pip resolves the extra's
requirements from what is installed and downloads nothing."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
OFFLINE = ["--no-index", "--no-build-isolation", "-q"]


def _install_lines() -> list[str]:
    lines = re.findall(r"^(pip install [^#\n]*?)\s*(?:#.*)?$", README, re.M)
    return [line for line in lines if "[mcp]" in line]


def test_the_readme_never_installs_ctxtools_from_an_index():
    """ctxtools is not on PyPI: every line names a path or a git URL."""
    lines = _install_lines()
    assert len(lines) == 2, lines
    for line in lines:
        (target,) = shlex.split(line)[2:]
        assert target.startswith(".[") or " @ git+" in target, line


@pytest.fixture
def clone(tmp_path) -> Path:
    """A git clone of the tracked sources as they are in the work tree."""
    src = tmp_path / "src"
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for rel in filter(None, (t.decode() for t in tracked)):
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "snapshot"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=src, check=True
        )
    return src


def _fresh_env(tmp_path: Path) -> Path:
    """A venv without pip of its own that sees this environment's packages."""
    env = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    py = env / "bin" / "python"
    purelib = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "parent.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return env


@pytest.mark.parametrize("form", ["clone", "git"])
def test_each_readme_install_line_installs_ctx_mcp(tmp_path, clone, form):
    (line,) = [li for li in _install_lines() if ("git+" in li) == (form == "git")]
    words = shlex.split(line)
    if form == "git":
        # pip clones it with git; a file URL with a host, which every pip's parser takes
        words[-1] = words[-1].replace("git+URL", f"git+file://localhost{clone}")
    env = _fresh_env(tmp_path)
    pip = [str(env / "bin" / "python"), "-m", *words[:2], *OFFLINE, *words[2:]]
    subprocess.run(pip, cwd=clone, check=True, capture_output=True)
    installed = env / "bin" / "ctx-mcp"
    assert installed.is_file()
    # the fresh environment's own copy, not this one's, answers
    where = subprocess.run(
        [env / "bin" / "python", "-c", "import ctxtools; print(ctxtools.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(env))
    version = subprocess.run([installed, "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("ctx-mcp ")


@pytest.mark.script_launch_mode("inprocess")  # hides the mcp package from this process
def test_ctx_mcp_without_the_extra_prints_the_command_that_adds_it(script_runner, monkeypatch):
    for name in [m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "ctxtools.mcp"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)
    result = script_runner.run(["ctx-mcp"])
    assert result.returncode == 1
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (spec,) = extra["optional-dependencies"]["mcp"]
    want = spec.replace(" ", "")
    said = result.stderr
    assert said.startswith("ctx-mcp: error: the MCP server needs the mcp package (install it: ")
    command = shlex.split(said.split("(install it: ", 1)[1].rstrip(")\n"))
    assert command[:4] == [sys.executable, "-m", "pip", "install"]
    # the same requirement as the extra, in the order the package metadata writes it
    assert sorted(command[4].removeprefix("mcp").split(",")) == sorted(
        want.removeprefix("mcp").split(",")
    )
