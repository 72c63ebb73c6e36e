"""What several test modules share: the repository's paths, a console-script runner for
binary stdin, files and git for small throwaway repositories, and the real OpenHands
transcripts with a strict validator of what the providers' APIs accept.

Fixtures live in conftest.py; this module holds plain functions and constants, imported as
``from helpers import ...``.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DATA = TESTS / "data"

# --- running a console script with binary stdin -------------------------------------------


@dataclass
class BytesRun:
    """What run_bytes returns in subprocess mode (the fields tests read from RunResult)."""

    returncode: int
    stdout: str
    stderr: str
    success: bool


def run_bytes(script_runner, args, data: bytes | None = None, **kw):
    """Run a console script with binary stdin, in the runner's launch mode.

    In-process: a TextIOWrapper over BytesIO (the command reads its .buffer). As a real
    process: the bytes go to the process as they are (pytest-console-scripts' subprocess
    mode only takes text), and stdout/stderr are decoded with surrogateescape, as the
    in-process runner shows them.
    """
    import io

    payload = data if data is not None else b""
    if getattr(script_runner, "launch_mode", "inprocess") != "subprocess":
        stdin = io.TextIOWrapper(io.BytesIO(payload))
        return script_runner.run(args, stdin=stdin, **kw)
    cmd = list(args)
    cmd[0] = shutil.which(cmd[0]) or cmd[0]
    proc = subprocess.run(
        cmd, input=payload, capture_output=True, cwd=kw.get("cwd"), env=kw.get("env")
    )
    out = proc.stdout.decode("utf-8", "surrogateescape")
    err = proc.stderr.decode("utf-8", "surrogateescape")
    return BytesRun(proc.returncode, out, err, proc.returncode == 0)


# --- files and git --------------------------------------------------------------------------


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Write TEXT (str as UTF-8, or bytes) to ROOT/REL, making its folders."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    return subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    ).stdout


# The small repository of ctx-pack's tests: real sources in five languages (tests/data/excerpt).
SOURCES_DIR = DATA / "excerpt"
SOURCES = {
    "src/auth.py": "auth.py",
    "src/inventory.py": "inventory.py",
    "srv/server.go": "server.go",
    "web/cart.ts": "cart.ts",
    "core/lexer.rs": "lexer.rs",
    "java/LruCache.java": "LruCache.java",
}


def copy_sources(root: Path) -> None:
    """Copy SOURCES into ROOT at their paths in the small repository."""
    for rel, name in SOURCES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SOURCES_DIR / name, root / rel)


def many_sources(root: Path, count: int) -> list[str]:
    """COUNT small real Python modules ROOT/mNNNN.py (each defining connect_N); their names."""
    root.mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(count):
        name = f"m{i:04d}.py"
        (root / name).write_text(
            f"def connect_{i}(host, port):\n    return (host, port + {i})\n\n\n"
            f"class Link{i}:\n    retries = {i % 7}\n"
        )
        names.append(name)
    return names


# Extensionless scripts, told by their #! line (issue 19), and files that only look like one.
SCRIPTS = {
    "bin/deploy": "#!/usr/bin/env ruby\n# Ship a tagged release.\n"
    'def deploy_release(tag)\n  puts "deploying #{tag}"\nend\n',
    "bin/lint": "#!/usr/bin/env -S ruby -w\ndef lint_sources(paths)\n  paths.each { |p| p }\nend\n",
    "scripts/setup": b"#!/bin/bash\r\nset -e\r\nsetup_workspace() {\r\n  mkdir -p build\r\n}\r\n",
    "tools/run": "#!/usr/bin/env python3\nimport sys\n\n\ndef run_pipeline(stages):\n"
    "    return [s for s in stages if s]\n",
}
NOT_SCRIPTS = {
    "bin/blob": b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4,  # a binary
    "bin/selfextract": b"#!/bin/sh\nexit 0\n\x00\x00\x1f\x8b" + bytes(200),  # #! then a NUL
    "NOTES": "def not_code(x):\n    this is a plain text file with no #! line\n",
    "bin/report": "#!/usr/bin/perl\nsub report { return 1; }\n",  # no scanner for Perl
    "notes.txt": "#!/bin/bash\nnot_a_script() { :; }\n",  # an extension: by its name
    ".envrc": "#!/bin/bash\nsecret_setup() { export TOKEN=x; }\n",  # a secret: never opened
}


def write_scripts(root: Path) -> None:
    """SCRIPTS and NOT_SCRIPTS under ROOT."""
    for rel, text in {**SCRIPTS, **NOT_SCRIPTS}.items():
        write(root, rel, text)


# --- resource limits ------------------------------------------------------------------------


def run_with_open_file_limit(args: list[str], limit: int, cwd: Path) -> subprocess.CompletedProcess:
    """Run console script ARGS as a real process whose open-file limit is LIMIT (as under
    ``ulimit -n LIMIT``): text output, never raising on a failure status."""
    import resource

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    import sys

    beside = Path(sys.executable).parent / args[0]  # the console scripts of this environment
    cmd = [str(beside) if beside.exists() else shutil.which(args[0]) or args[0], *args[1:]]
    return subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, preexec_fn=lower, timeout=300
    )


def open_descriptors() -> int:
    """How many file descriptors this process holds (Linux: /proc/self/fd)."""
    return len(os.listdir("/proc/self/fd"))


def fail_opening(monkeypatch, suffix: str, errno_: int) -> None:
    """Make every open of a path ending in SUFFIX (os.open and open alike) fail with
    ERRNO_, as the system does when a limit is reached (EMFILE: too many open files)."""
    import builtins

    def failing(real):
        def opener(path, *args, **kwargs):
            if isinstance(path, str | os.PathLike) and os.fspath(path).endswith(suffix):
                raise OSError(errno_, os.strerror(errno_), os.fspath(path))
            return real(path, *args, **kwargs)

        return opener

    monkeypatch.setattr(os, "open", failing(os.open))
    monkeypatch.setattr(builtins, "open", failing(builtins.open))


def small_cutter(monkeypatch) -> None:
    """Make the tiktoken cutter's reads and runs small (``ctxtools.tokens.runs``' tunables),
    so that texts of some tens of KB are cut into many pieces and every kind of cut (rules,
    runs, windows, moved junctions) falls inside them."""
    from ctxtools.tokens import runs, stream

    monkeypatch.setattr(stream, "READ_BLOCK", 700)
    monkeypatch.setattr(runs, "RUN_PROBE", 128)
    monkeypatch.setattr(runs, "RUN_MARGIN", 64)
    monkeypatch.setattr(runs, "RUN_WINDOW", 1_000)
    monkeypatch.setattr(runs, "LOOKBACK", 200)


# --- endless input --------------------------------------------------------------------------


class Endless(io.RawIOBase):
    """A stream that repeats CHUNK for ever, and fails the test once more than LIMIT bytes
    have been read from it: an input nobody should read to its end."""

    def __init__(self, chunk: bytes, limit: int = 4 << 20):
        self.chunk, self.limit, self.given = chunk, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        assert self.given <= self.limit, f"read {self.given:,} bytes of an endless input"
        n = len(buf)
        data = (self.chunk * (n // len(self.chunk) + 1))[:n]
        buf[:n] = data
        self.given += n
        return n


def endless_stdin(chunk: bytes, limit: int = 4 << 20):
    """A text stdin over an Endless stream of CHUNK (failing past LIMIT bytes), for
    in-process console scripts (they read its ``.buffer``); ``.buffer.raw.given`` says how
    much was read."""
    return io.TextIOWrapper(io.BufferedReader(Endless(chunk, limit)))


# --- the real transcripts -------------------------------------------------------------------

# Three real OpenHands runs (MIT, tests/data/compact/LICENSE-OpenHands).
CORPUS = DATA / "compact" / "openhands-multi-swe-bench-output.jsonl"
_spec = importlib.util.spec_from_file_location(
    "convert_openhands", DATA / "compact" / "convert_openhands.py"
)
convert = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(convert)
RUN_IDS = ["ponylang__ponyc-4588", "ponylang__ponyc-4593", "ponylang__ponyc-4595"]


def build_long(runs: dict[str, list[dict]], copies: int) -> list[dict]:
    """System + first user message of one run, then every run's steps COPIES times over (call
    ids renamed per copy so they stay unique; a user turn between a final answer and the next
    step, as a user would say "go on")."""
    first = runs[RUN_IDS[0]]
    out = [first[0], first[1]]
    for copy in range(copies):
        for r, run_id in enumerate(RUN_IDS):
            for m in runs[run_id][2:]:
                m = json.loads(json.dumps(m))
                if m["role"] == "assistant" and out[-1]["role"] == "assistant":
                    out.append({"role": "user", "content": "Continue with the next task."})
                for c in m.get("tool_calls") or []:
                    c["id"] = f"{c['id']}-{copy}-{r}"
                if m["role"] == "tool":
                    m["tool_call_id"] = f"{m['tool_call_id']}-{copy}-{r}"
                out.append(m)
    return out


# --- a strict validator of transcripts, independent of ctxtools' own code ---------------------
# strict_problems(doc, fmt) lists everything the providers' APIs would reject about a
# transcript document (a list of messages, {"messages": [...]} or a list parsed from JSON
# Lines). tests/lib/test_compact_validator.py checks that it catches what it claims to.

OPENAI_ROLES = {"system", "developer", "user", "assistant", "tool"}


def _messages(doc):
    if isinstance(doc, dict):
        return doc["messages"]
    return doc


def strict_problems(doc, fmt: str) -> list[str]:
    msgs = _messages(doc)
    if not isinstance(msgs, list):
        return ["messages is not a list"]
    if fmt == "openai":
        return _openai(msgs)
    if fmt == "anthropic":
        probs = _anthropic(msgs)
        if isinstance(doc, dict) and "system" in doc:
            system = doc["system"]
            if not isinstance(system, str | list):
                probs.append("top-level system is neither a string nor blocks")
        return probs
    raise ValueError(fmt)


def _openai(msgs: list) -> list[str]:
    probs: list[str] = []
    open_calls: list[str] = []  # calls of the current assistant message still unanswered
    owner = None
    answered: set[str] = set()
    for i, m in enumerate(msgs, 1):
        if not isinstance(m, dict):
            probs.append(f"{i}: not an object")
            continue
        role = m.get("role")
        if role not in OPENAI_ROLES:
            probs.append(f"{i}: unknown role {role!r}")
            continue
        content = m.get("content")
        if role == "tool":
            cid = m.get("tool_call_id")
            if not isinstance(cid, str):
                probs.append(f"{i}: tool message without tool_call_id")
            elif owner is None or cid not in open_calls or cid in answered:
                probs.append(f"{i}: tool message {cid!r} answers no preceding tool call")
            else:
                answered.add(cid)
            if not isinstance(content, str | list):
                probs.append(f"{i}: tool content must be a string or parts")
            continue
        # a non-tool message closes the previous assistant's calls
        if owner is not None:
            missing = [c for c in open_calls if c not in answered]
            if missing:
                probs.append(f"{owner}: tool calls without results: {missing}")
        owner, open_calls, answered = None, [], set()
        if role == "assistant":
            calls = m.get("tool_calls")
            if calls is not None:
                if not isinstance(calls, list) or not calls:
                    probs.append(f"{i}: tool_calls must be a non-empty list")
                    continue
                for c in calls:
                    fn = c.get("function") if isinstance(c, dict) else None
                    if (
                        not isinstance(c, dict)
                        or not isinstance(c.get("id"), str)
                        or not isinstance(fn, dict)
                        or not isinstance(fn.get("name"), str)
                        or not isinstance(fn.get("arguments"), str)
                    ):
                        probs.append(f"{i}: malformed tool call {c!r:.80}")
                        continue
                    open_calls.append(c["id"])
                owner = i
            elif not isinstance(content, str | list):
                probs.append(f"{i}: assistant message without content or tool_calls")
        elif not isinstance(content, str | list):
            probs.append(f"{i}: {role} content must be a string or parts")
    # calls of the very last assistant message may still be running (nothing follows them)
    return probs


def _is_result(b) -> bool:
    return isinstance(b, dict) and b.get("type") == "tool_result"


def _use_ids(msg) -> list:
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list):
        return []
    return [b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]


def _anthropic(msgs: list) -> list[str]:
    probs: list[str] = []
    prev = None
    for i, m in enumerate(msgs, 1):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("user", "assistant"):
            probs.append(f"{i}: role {role!r} is not user/assistant")
            continue
        if i == 1 and role != "user":
            probs.append("1: the first message must be a user turn")
        if prev is not None and prev.get("role") == role:
            probs.append(f"{i}: two {role} turns in a row")
        content = m.get("content")
        if isinstance(content, str):
            blocks = []
        elif isinstance(content, list) and content:
            blocks = content
        else:
            probs.append(f"{i}: content must be a string or a non-empty list of blocks")
            blocks = []
        for b in blocks:
            if not isinstance(b, dict) or not isinstance(b.get("type"), str):
                probs.append(f"{i}: a block without a type")
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        uses = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        if results and role != "user":
            probs.append(f"{i}: tool_result in an assistant turn")
        if uses and role != "assistant":
            probs.append(f"{i}: tool_use in a user turn")
        if results:
            n = len(results)
            if any(not _is_result(b) for b in blocks[:n]):
                probs.append(f"{i}: tool_result blocks must come first")
            prev_ids = _use_ids(prev)
            seen = set()
            for b in results:
                uid = b.get("tool_use_id")
                if uid not in prev_ids or uid in seen:
                    probs.append(f"{i}: tool_result {uid!r} answers no tool_use of the last turn")
                seen.add(uid)
        if prev is not None:
            prev_uses = _use_ids(prev)
            got = {b.get("tool_use_id") for b in results}
            missing = [u for u in prev_uses if u not in got]
            if missing:
                probs.append(f"{i - 1}: tool_use without a result in the next turn: {missing}")
        prev = m
    return probs


# --- the validator's own tests -----------------------------------------------------------


def run_with_tty_stderr(argv, *, env=None, cwd=None, timeout=120):
    """Run ARGV as a real process with stderr on a pseudo-terminal (stdout a pipe, stdin
    /dev/null): (exit status, stdout bytes, what the terminal got). For progress lines,
    which show only when stderr is a terminal."""
    import os
    import pty
    import subprocess

    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
            env=env,
            cwd=cwd,
        )
    finally:
        os.close(slave)
    import threading

    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.read()), daemon=True)
    reader.start()  # stdout must be drained meanwhile, or a big output blocks the command
    seen = bytearray()
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # EIO: every holder of the terminal's other end closed it
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    reader.join(timeout)
    proc.stdout.close()
    return proc.wait(timeout), got[0], bytes(seen)


def children_of(pid: int) -> list[int]:
    """The live children of PID, read from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def ends_by_sigterm(lines: list[str]) -> None:
    """Run LINES as a Python program with SIGTERM's default disposition (after ``import
    signal``) and assert that it ended by SIGTERM -- not by ``exit(143)``, which is what a
    signal sent to itself while blocked gives."""
    import signal
    import sys

    code = "\n".join(["import signal", "signal.signal(signal.SIGTERM, signal.SIG_DFL)", *lines])
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGTERM, proc.stderr
