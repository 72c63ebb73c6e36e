"""Golden cases: every command run as a real process on files in tests/data/golden, byte for byte.

A case is a directory tests/data/golden/<command>/<case>/ holding

    args     the command's arguments, one a line (UTF-8; no quoting, no shell)
    inputs   (optional) what the run is given, one `DEST <- SOURCE` a line, SOURCE a file or
             directory under tests/data: DEST `-` is stdin (empty without it), any other
             DEST is a path in the run's working directory (a fresh empty directory), so
             arguments name the inputs by relative paths and no output shows the machine's
    stdout   the expected stdout, byte for byte
    stderr   the expected stderr, byte for byte
    status   the expected exit status (one line)

The command is the console script of <command>'s name, run through the installed entry
point with an empty store of its own (CTX_STORE). Adding a case is adding a directory; inputs
that no other test uses live in tests/data/golden/inputs/ (README.md there says where they
come from).

To write the expected files from what the commands print now (then READ them: a golden
file is a claim that the output is right, not a record of what the code did):

    CTX_GOLDEN_UPDATE=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/cli/test_golden.py

CTX_GOLDEN_UPDATE=ctx-read/grep-cjk-log (a case's path under golden/) rewrites that case only.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
GOLDEN = DATA / "golden"
COMMANDS = (
    "ctx-count",
    "ctx-stash",
    "ctx-read",
    "ctx-excerpt",
    "ctx-repomap",
    "ctx-pack",
    "ctx-compact",
)
CASES = sorted(p for p in GOLDEN.glob("ctx-*/*") if p.is_dir())


def _script(name: str) -> str:
    """The installed console script: beside this interpreter, else on PATH."""
    beside = Path(sysconfig.get_path("scripts")) / name
    if beside.is_file():
        return str(beside)
    found = shutil.which(name)
    assert found, f"{name} is not installed (pip install -e '.[test]')"
    return found


def _args(case: Path) -> list[str]:
    text = (case / "args").read_text(encoding="utf-8")
    return text.splitlines()


def _inputs(case: Path) -> list[tuple[str, Path]]:
    manifest = case / "inputs"
    if not manifest.is_file():
        return []
    pairs = []
    for line in manifest.read_text(encoding="utf-8").splitlines():
        if line.strip():
            dest, _, source = (part.strip() for part in line.partition(" <- "))
            assert dest and source, f"{manifest}: not DEST <- SOURCE: {line!r}"
            pairs.append((dest, DATA / source))
    return pairs


def _run(case: Path, tmp_path: Path) -> tuple[bytes, bytes, int]:
    work = tmp_path / "work"
    work.mkdir()
    stdin = b""
    for dest, source in _inputs(case):
        if dest == "-":
            stdin = source.read_bytes()
        elif source.is_dir():
            shutil.copytree(source, work / dest, dirs_exist_ok=True)
        else:
            (work / dest).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, work / dest)
    proc = subprocess.run(
        [_script(case.parent.name), *_args(case)],
        input=stdin,
        capture_output=True,
        cwd=work,
        env=dict(os.environ),  # the conftest fixture's: CTX_STORE in tmp_path, no CTX_* leaks
        timeout=120,
    )
    return proc.stdout, proc.stderr, proc.returncode


def _updating(case: Path) -> bool:
    flag = os.environ.get("CTX_GOLDEN_UPDATE", "")
    rel = case.relative_to(GOLDEN).as_posix()
    return flag == "1" or flag == rel


def _diff(name: str, want: bytes, got: bytes) -> str:
    def lines(b: bytes) -> list[str]:
        return b.decode("utf-8", "backslashreplace").splitlines(keepends=True)

    out = difflib.unified_diff(lines(want), lines(got), f"expected {name}", f"actual {name}")
    text = "".join(line if line.endswith("\n") else line + "\n\\ no newline\n" for line in out)
    return text or f"{name}: the bytes differ only where the text does not show it\n"


def test_every_command_has_golden_cases():
    by_command = {c: [p for p in CASES if p.parent.name == c] for c in COMMANDS}
    assert {c: len(ps) >= 2 for c, ps in by_command.items()} == dict.fromkeys(COMMANDS, True)
    for case in CASES:
        assert case.parent.name in COMMANDS, case
        for name in ("args", "stdout", "stderr", "status"):
            assert (case / name).is_file(), f"{case.relative_to(GOLDEN)} has no {name}"


@pytest.mark.parametrize("case", CASES, ids=[p.relative_to(GOLDEN).as_posix() for p in CASES])
def test_golden(case: Path, tmp_path: Path):
    stdout, stderr, status = _run(case, tmp_path)
    got = {"stdout": stdout, "stderr": stderr, "status": f"{status}\n".encode()}
    if _updating(case):
        for name, data in got.items():
            (case / name).write_bytes(data)
    want = {n: (case / n).read_bytes() if (case / n).is_file() else b"" for n in got}
    differ = [n for n in got if got[n] != want[n]]
    if differ:
        pytest.fail(
            f"{case.relative_to(GOLDEN)}: {', '.join(differ)} differ"
            f" (rewrite with CTX_GOLDEN_UPDATE={case.relative_to(GOLDEN).as_posix()}"
            " and read the result)\n" + "".join(_diff(n, want[n], got[n]) for n in differ),
            pytrace=False,
        )
