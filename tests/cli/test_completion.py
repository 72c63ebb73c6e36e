"""Completion that works in the shells as they ship (issue 28.1): every command prints the
toolkit's completion scripts (``--completion SHELL``), and real bash -- with Debian's
bash-completion loaded, as a login shell has it -- and real fish complete from them.
.ci/run installs bash-completion and fish where apt-get is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ctxtools.cli.completion import COMMANDS, SHELLS

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
BASH_COMPLETION = Path("/usr/share/bash-completion/bash_completion")
SCRIPT_NAMES = {"bash": "{name}.bash", "zsh": "_{name}", "fish": "{name}.fish"}

# Complete the words given as the shell would on <Tab>: the function `complete -p` names.
BASH_DRIVER = """
source "$BASH_COMPLETION"
eval "$(ctx-pack --completion bash)"
_complete() {
    COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    local spec fn; spec=$(complete -p "$1"); fn=${spec##*-F }; fn=${fn%% *}
    COMPREPLY=(); "$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf '%s\\n' "${COMPREPLY[@]}"
}
"""


def _env() -> dict[str, str]:
    return {
        "PATH": f"{BIN}:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/tmp"),
        "CTX_STORE": os.environ["CTX_STORE"],
        "BASH_COMPLETION": str(BASH_COMPLETION),
    }


def _bash(*words: str) -> list[str]:
    assert BASH_COMPLETION.is_file(), "needs bash-completion (apt-get install bash-completion)"
    line = " ".join(f"'{w}'" for w in words)
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", BASH_DRIVER + f"_complete {line}\n"],
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.splitlines()


def _fish(line: str) -> list[str]:
    fish = shutil.which("fish")
    assert fish, "needs fish (apt-get install fish)"
    proc = subprocess.run(
        [fish, "--no-config", "-c", f'ctx-pack --completion fish | source; complete -C "{line}"'],
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return [row.split("\t")[0] for row in proc.stdout.splitlines()]


def test_the_list_of_commands_is_the_console_scripts():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert sorted(COMMANDS) == sorted(scripts)


@pytest.mark.parametrize("shell", SHELLS)
def test_completion_prints_the_scripts_of_every_command(script_runner, shell):
    """The same bytes as completions/ (what each command prints under click's protocol),
    whichever command is asked."""
    want = "".join(
        (ROOT / "completions" / SCRIPT_NAMES[shell].format(name=n)).read_text() for n in COMMANDS
    )
    for name in ("ctx-count", "ctx-mcp"):
        result = script_runner.run([name, "--completion", shell])
        assert result.returncode == 0 and result.stderr == ""
        assert result.stdout == want


def test_bash_with_bash_completion_completes_options_models_and_roles():
    assert _bash("ctx-pack", "--rol") == ["--role", "--role-share"]
    assert _bash("ctx-count", "--model", "o3") == ["o3", "o3-mini"]
    roles = _bash("ctx-pack", "--role", "")
    assert {"worker", "reviewer", "architect"} <= set(roles)
    assert "placeholder" not in roles  # issue 28.1: no role a user is not told about


def test_bash_completes_the_store_handles_for_ctx_read(script_runner):
    import io

    stash = script_runner.run(
        ["ctx-stash", "--always", "--name", "build-log"], stdin=io.StringIO("x\n")
    )
    assert stash.returncode == 0, stash.stderr
    assert _bash("ctx-read", "bu") == ["build-log"]


def test_fish_completes_options_and_roles():
    assert _fish("ctx-pack --rol") == ["--role", "--role-share"]
    roles = _fish("ctx-pack --role ")
    assert "worker" in roles and "placeholder" not in roles


def test_an_unknown_shell_is_a_usage_error(script_runner):
    result = script_runner.run(["ctx-count", "--completion", "tcsh"])
    assert result.returncode == 2
    assert "'tcsh' is not one of 'bash', 'zsh', 'fish'" in result.stderr
