"""Behaviour every console script shares, tested once over [project.scripts]."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ctxtools import __version__

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"])
BIN = Path(sys.executable).parent

# CI runs the tests marked `process` a second time through the installed console scripts as
# real processes (.ci/run). This module is the core of that set: every script's exit
# statuses 0, 1 and 2 and its stdout and stderr.
pytestmark = pytest.mark.process


def test_all_seven_commands_and_the_mcp_server_are_declared():
    assert SCRIPTS == [
        "ctx-compact",
        "ctx-count",
        "ctx-excerpt",
        "ctx-mcp",
        "ctx-pack",
        "ctx-read",
        "ctx-repomap",
        "ctx-stash",
    ]


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_exits_zero_and_shows_usage(script_runner, name):
    result = script_runner.run([name, "--help"])
    assert result.returncode == 0
    assert result.stdout.startswith(f"Usage: {name} ")
    assert result.stderr == ""


@pytest.mark.parametrize("name", SCRIPTS)
def test_version(script_runner, name):
    result = script_runner.run([name, "--version"])
    assert result.returncode == 0
    assert result.stdout == f"{name} {__version__}\n"


@pytest.mark.parametrize("name", SCRIPTS)
def test_unknown_option_is_a_usage_error(script_runner, name):
    result = script_runner.run([name, "--xyzzy"])
    assert result.returncode == 2
    assert result.stderr == (f"{name}: error: no such option '--xyzzy' (see {name} --help)\n")


# A whole-number option of each command, a value click's own checks refuse, and what they say.
BAD_VALUES = {
    "ctx-count": (["--limit", "0"], "invalid value for '--limit': 0 is below the minimum of 1"),
    "ctx-stash": (["--threshold", "-1"], "'--threshold': -1 is below the minimum of 0"),
    "ctx-read": (["--head", "x"], "invalid value for '--head': 'x' is not a whole number"),
    "ctx-excerpt": (["--window", "1.5"], "'--window': '1.5' is not a whole number"),
    "ctx-repomap": (["--tokens", "10"], "'-t' / '--tokens': 10 is below the minimum of 50"),
    "ctx-pack": (["--format", "yaml"], "'yaml' is not one of 'markdown', 'xml', 'json'"),
    "ctx-compact": (["--at", "5"], "invalid value for '--at': '5' is not above 5"),
    "ctx-mcp": (["--inline-max", "0"], "'--inline-max': 0 is below the minimum of 1"),
}
USAGE_LINE = r"^{0}: error: [^\n]+ \((?:[^\n]+; )?see {0} --help\)\n\Z"


def _usage_cases():
    for name in SCRIPTS:
        args, said = BAD_VALUES[name]
        yield name, args, said
        yield name, [args[0]], f"option '{args[0]}' requires an argument"
        typo = {"ctx-compact": "--json-reprt", "ctx-mcp": "--sesion"}.get(name, "--jsn")
        yield name, [typo], "(did you mean "
    for name in ("ctx-read", "ctx-repomap", "ctx-compact"):  # one positional argument
        yield name, ["a", "b"], "got unexpected extra argument (b)"


@pytest.mark.parametrize(("name", "argv", "said"), list(_usage_cases()))
def test_click_usage_errors_are_one_line_with_the_help_hint(script_runner, name, argv, said):
    """Issue 20.7: click's range, type, missing-value, no-such-option and extra-argument
    errors are the toolkit's one line, ``ctx-NAME: error: … (see ctx-NAME --help)``, exit 2
    -- not click's three lines of Usage / Try / Error."""
    import re

    result = script_runner.run([name, *argv])
    assert result.returncode == 2, result.stderr
    assert re.match(USAGE_LINE.format(re.escape(name)), result.stderr), result.stderr
    assert said in result.stderr
    assert "Usage:" not in result.stderr and "Traceback" not in result.stderr


def test_library_usage_errors_point_at_help_too(script_runner):
    """A usage error the library raises (not click) ends the same way, its own hint first."""
    result = script_runner.run(["ctx-pack"])
    assert result.returncode == 2
    assert result.stderr == (
        'ctx-pack: error: no task (give -q/--task "what to do"; -q - reads it from stdin; '
        "see ctx-pack --help)\n"
    )


# A missing input for each filter: bad data, exit 1, one line naming the command. (ctx-mcp
# reports its failures as tool results; tests/cli/test_mcp.py runs it as a process.)
MISSING = {
    "ctx-count": ["NOPE"],
    "ctx-stash": ["NOPE"],
    "ctx-read": ["NOPE"],
    "ctx-excerpt": ["-q", "foo", "NOPE"],
    "ctx-repomap": ["NOPE"],
    "ctx-pack": ["-q", "fix foo", "NOPE"],
    "ctx-compact": ["NOPE"],
}


@pytest.mark.parametrize("name", sorted(MISSING))
def test_a_missing_input_fails_with_one_line_and_exit_1(script_runner, tmp_path, name):
    result = script_runner.run([name, *MISSING[name]], cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"{name}: error: ") and result.stderr.count("\n") == 1
    assert "NOPE" in result.stderr


@pytest.mark.parametrize("name", SCRIPTS)
def test_empty_stdin_is_a_defined_result(script_runner, name):
    from helpers import run_bytes

    result = run_bytes(script_runner, [name], b"")
    assert "Traceback" not in result.stderr
    assert result.returncode in (0, 1, 2)
    if result.returncode != 0:
        # a failure is one line naming the command
        lines = result.stderr.strip().splitlines()
        assert lines and lines[-1].startswith(f"{name}: "), result.stderr


def test_entry_points_run_as_real_processes(tmp_path):
    """Subprocess mode proves the installed console scripts, not just the functions."""
    exe = BIN / "ctx-count"
    assert exe.exists(), f"console script not installed in {BIN}"
    proc = subprocess.run(
        [str(exe), "--heuristic"], input=b"abcdefgh", capture_output=True, check=False
    )
    assert proc.returncode == 0
    assert proc.stdout == b"2\n"


@pytest.mark.parametrize("name", ["ctx-count", "ctx-excerpt", "ctx-read"])
def test_closed_stdout_pipe_exits_quietly(tmp_path, name):
    """`cmd | head -1`: no traceback, no message. The status is 1 when a write met the closed
    pipe; a command whose whole output went out in one write before the reader left sees no
    error and exits 0."""
    exe = BIN / name
    many = tmp_path / "many"
    many.mkdir()
    names = []
    for i in range(3000):
        p = many / f"f{i:04d}.txt"
        p.write_bytes(b"needle line\n" * 3)
        names.append(str(p))
    listing = tmp_path / "list"
    listing.write_text("\n".join(names))
    args = {
        "ctx-count": f"--heuristic --files-from '{listing}'",
        "ctx-excerpt": f"--query needle --files-from '{listing}'",
        "ctx-read": f"--max-chars 50000 --head 3000 < '{listing}'",
    }[name]
    proc = subprocess.run(
        ["bash", "-c", f"set -o pipefail; '{exe}' {args} | head -1"],
        capture_output=True,
        env=dict(os.environ),
        check=False,
    )
    assert proc.stderr == b"", proc.stderr
    assert proc.returncode in (0, 1)
    assert len(proc.stdout.splitlines()) == 1


# --- shared option types and input reading -------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"), [("0", 0.0), ("80", 80.0), ("99.5", 99.5), (" 1e2 ", 100.0)]
)
def test_finite_float_accepts_numbers(value, expected):
    import click

    from ctxtools.cli.types import FiniteFloat

    assert FiniteFloat(min=0, max=100).convert(value, None, None) == expected
    with pytest.raises(click.BadParameter):
        FiniteFloat(min=0, max=99).convert("100", None, None)


@pytest.mark.parametrize("value", ["nan", "-nan", "inf", "Infinity", "-inf", "1e999", "x", ""])
def test_finite_float_refuses_what_is_not_a_finite_number(value):
    import click

    from ctxtools.cli.types import FiniteFloat

    with pytest.raises(click.BadParameter, match="not a"):
        FiniteFloat().convert(value, None, None)


def test_finite_float_refuses_non_finite_floats_too():
    import click

    from ctxtools.cli.types import FiniteFloat

    for value in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(click.BadParameter, match="not a finite number"):
            FiniteFloat().convert(value, None, None)


def test_json_text_replaces_undecodable_bytes_only():
    from ctxtools.fsutil import json_text

    assert json_text("plain/ascii.txt") == "plain/ascii.txt"
    assert json_text("日本/ü.md") == "日本/ü.md"
    assert json_text(os.fsdecode(b"caf\xe9/\xff\xfe.txt")) == "caf\ufffd/\ufffd\ufffd.txt"
    assert json_text("lone \ud800 surrogate") == "lone \ufffd\ufffd\ufffd surrogate"


# --- shared options, declared once (issue 12) ----------------------------------------------

SHARED_FLAGS = (
    "--store",
    "--session",
    "--model",
    "--limit",
    "--encoding",
    "--tokenizer",
    "--max-bytes",
    "--max-entries",
    "--strategy",
    "--keep-going",
    "--jobs",
    "--profiles-file",
    "--memory",
    "--ignore-case",
    "--query",
    "--json",
)


def test_shared_options_are_declared_in_decorators_only():
    """A command file names no shared option in a click.option, nor an option table in an
    entry of its own: they use the factory of cli/decorators.py."""
    import re

    decl = re.compile(r"click\.option\(\s*(?:\"-\w\",\s*)?\"(--[\w-]+)\"")
    found = {}
    for path in sorted((ROOT / "ctxtools" / "cli").glob("*.py")):
        if path.name in ("decorators.py", "retrieval.py"):
            continue
        for flag in decl.findall(path.read_text()):
            if flag in SHARED_FLAGS:
                found.setdefault(flag, []).append(path.name)
    from ctxtools.mcp.schema import TABLES

    for tool, table in TABLES.items():
        for o in table:
            if o.decl == "option" and set(o.flags) & set(SHARED_FLAGS):
                found.setdefault(o.flags[-1], []).append(f"options table {tool}")
    assert found == {}


def _command_options():
    from ctxtools.cli import compact, count, excerpt, pack, read, repomap, stash

    for mod in (compact, count, excerpt, pack, read, repomap, stash):
        for param in mod.cli.params:
            yield mod.__name__.rsplit(".", 1)[1], param


def test_click_defaults_are_the_library_defaults():
    """Every default --help shows for these options is the value in ctxtools.defaults."""
    from ctxtools import defaults

    expected = {
        "session": defaults.SESSION,
        "strategy": defaults.EVICT_STRATEGY,
        "threshold": defaults.THRESHOLD,
        "reserve_system": defaults.RESERVE_SYSTEM,
        "reserve_tools": defaults.RESERVE_TOOLS,
        "reserve_response": defaults.RESERVE_RESPONSE,
        "slack_percent": defaults.SLACK_PERCENT,
        "window": defaults.EXCERPT_WINDOW,
        "max_windows": defaults.EXCERPT_MAX_WINDOWS,
        "max_files": defaults.MAP_MAX_FILES,
        "max_file_size": defaults.MAP_MAX_FILE_SIZE,
        "at": defaults.COMPACT_AT,
        "keep_recent": defaults.KEEP_RECENT,
        "summarizer_timeout": defaults.SUMMARIZER_TIMEOUT,
        "min_ratio": defaults.MIN_RATIO,
        "min_path_share": defaults.MIN_PATH_SHARE,
        "skill_max_expanded": defaults.SKILL_MAX_EXPANDED,
    }
    seen = set()
    for command, param in _command_options():
        if param.name in expected:
            assert param.default == expected[param.name], (command, param.name)
            seen.add(param.name)
        if command == "excerpt" and param.name in ("head", "tail"):
            want = defaults.EXCERPT_HEAD if param.name == "head" else defaults.EXCERPT_TAIL
            assert param.default == want
        if command == "repomap" and param.name == "tokens":
            assert param.default == defaults.MAP_TOKENS
    assert seen == set(expected)


def test_library_defaults_agree_with_ctxtools_defaults():
    """The library modules that keep a value of their own still agree with ctxtools.defaults."""
    from ctxtools import config, defaults, profiles, projections, store
    from ctxtools.compact import accept
    from ctxtools.compact.plan import Options
    from ctxtools.excerpt import ExcerptOptions
    from ctxtools.fsutil import parse_size
    from ctxtools.pack import PackRequest
    from ctxtools.repomap import core
    from ctxtools.store import evict

    assert config.DEFAULT_SESSION == store.DEFAULT_SESSION == defaults.SESSION
    assert tuple(evict.STRATEGIES) == defaults.EVICT_STRATEGIES
    assert projections.MAX_CHARS_DEFAULT == defaults.MAX_CHARS
    assert projections.MAX_CHARS_CEILING == defaults.MAX_CHARS_CEILING
    assert (profiles.RESERVE_SYSTEM, profiles.RESERVE_TOOLS, profiles.RESERVE_RESPONSE) == (
        defaults.RESERVE_SYSTEM,
        defaults.RESERVE_TOOLS,
        defaults.RESERVE_RESPONSE,
    )
    assert profiles.pack_budget(100_000).slack_percent == defaults.SLACK_PERCENT
    ex = ExcerptOptions()
    assert (ex.window, ex.head, ex.max_windows, ex.tail) == (
        defaults.EXCERPT_WINDOW,
        defaults.EXCERPT_HEAD,
        defaults.EXCERPT_MAX_WINDOWS,
        defaults.EXCERPT_TAIL,
    )
    assert core.DEFAULT_TOKENS == defaults.MAP_TOKENS
    assert core.MAX_FILES == defaults.MAP_MAX_FILES
    assert parse_size(defaults.MAP_MAX_FILE_SIZE) == core.MAX_FILE_SIZE
    opts = Options(limit=1000)
    assert (opts.at, opts.keep_recent) == (defaults.COMPACT_AT, defaults.KEEP_RECENT)
    assert opts.summarizer_timeout == accept.DEFAULT_TIMEOUT == defaults.SUMMARIZER_TIMEOUT
    assert opts.min_ratio == accept.DEFAULT_MIN_RATIO == defaults.MIN_RATIO
    assert opts.min_path_share == accept.DEFAULT_MIN_PATH_SHARE == defaults.MIN_PATH_SHARE
    assert PackRequest(task="t").skill_max_expanded == defaults.SKILL_MAX_EXPANDED


def test_defaults_module_imports_nothing():
    """--help reads ctxtools.defaults: it must cost no import beyond itself."""
    code = (
        "import sys; before = set(sys.modules); import ctxtools.defaults; "
        "print(sorted(set(sys.modules) - before))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['ctxtools', 'ctxtools.defaults']"


# --- notes and the ruler ------------------------------------------------------------------


def _run_in_command(func):
    """Run FUNC inside a click command named ctx-test; (exit code, stdout, stderr)."""
    import click
    from click.testing import CliRunner

    @click.command()
    def cmd():
        func()

    result = CliRunner().invoke(cmd, [], prog_name="ctx-test")
    return result.exit_code, result.stdout, result.stderr


def test_warn_prints_each_message_with_the_command_name_and_prefix():
    from ctxtools.cli.outputs import warn

    def body():
        warn("plain")
        warn("a", "b", prefix="note: ")
        warn(*[], prefix="note: ")  # nothing to say: nothing printed

    code, out, err = _run_in_command(body)
    assert (code, out) == (0, "")
    assert err == "ctx-test: plain\nctx-test: note: a\nctx-test: note: b\n"


def test_ruler_from_options_takes_the_options_and_says_its_notes():
    from ctxtools.cli.ruler import ruler_from_options

    opts = {"encoding": "p50k_base", "tokenizer": None, "heuristic": False, "exact": False}
    got = {}

    def body():
        got["fallback"] = ruler_from_options(opts)
        got["given"] = ruler_from_options(opts, encoding="cl100k_base")
        got["quiet"] = ruler_from_options(opts, note_prefix=None)
        got["bare"] = ruler_from_options(opts, note_prefix="")

    code, _out, err = _run_in_command(body)
    assert code == 0
    assert got["fallback"].ruler.name == "heuristic"  # p50k_base is not available offline
    assert got["given"].ruler.name == "cl100k_base" and got["given"].notes == []
    assert got["quiet"].notes == got["fallback"].notes != []
    note = got["fallback"].notes[0]
    assert err == f"ctx-test: note: {note}\nctx-test: {note}\n"


def test_ruler_from_options_exact_refuses_the_fallback():
    from ctxtools.cli.ruler import ruler_from_options
    from ctxtools.errors import CtxError

    opts = {"encoding": "p50k_base", "tokenizer": None, "heuristic": False, "exact": True}
    with pytest.raises(CtxError) as exc:
        ruler_from_options(opts)
    assert exc.value.exit_status == 1


@pytest.mark.parametrize(
    ("value", "expected"), [("512K", 512 * 1024), ("1M", 1 << 20), ("100", 100), (7, 7)]
)
def test_size_parses_sizes(value, expected):
    from ctxtools.cli.types import Size

    assert Size().convert(value, None, None) == expected


@pytest.mark.parametrize("value", ["12Q", "", "-1", "K"])
def test_size_refuses_what_is_not_a_size(value):
    import click

    from ctxtools.cli.types import Size

    with pytest.raises(click.BadParameter) as exc:
        Size().convert(value, None, None)
    assert exc.value.message == f"{value!r} is not a size (e.g. 524288, 512K, 1M)"


@pytest.mark.parametrize(
    ("value", "message"),
    [("5", "'5' is not above 5"), ("nan", "'nan' is not a finite number"), ("101", None)],
)
def test_above_refuses_its_low_bound_and_what_is_past_max(value, message):
    import click

    from ctxtools.cli.types import Above

    with pytest.raises(click.BadParameter) as exc:
        Above(5, 100).convert(value, None, None)
    assert exc.value.message == (message or "'101' is above the maximum of 100")
    assert Above(5, 100).convert("5.5", None, None) == 5.5


# --- one table of short flags (issue 20.6) --------------------------------------------------


def _flag_table() -> dict[str, dict[str, str]]:
    """docs/options.md's short-flag table: {short: {command: long}}."""
    import re

    text = (ROOT / "docs" / "options.md").read_text()
    section = text.split("## Short flags", 1)[1].split("\n## ", 1)[0]
    table: dict[str, dict[str, str]] = {}
    for row in re.findall(r"^\| `(-\w)[^`]*` \|[^|]*\| (.+) \|$", section, re.M):
        short, where = row
        table[short] = {}
        for part in where.split(";"):
            long, commands = part.split(":")
            for command in commands.split(","):
                table[short][command.strip()] = long.strip().strip("`")
    return table


def _declared_short_flags() -> dict[str, dict[str, str]]:
    """The short flags the commands' click definitions show: {short: {command: long}}."""
    import click

    from ctxtools.cli import compact, count, excerpt, mcp, pack, read, repomap, stash

    found: dict[str, dict[str, str]] = {}
    for mod in (compact, count, excerpt, mcp, pack, read, repomap, stash):
        command = mod.cli
        name = "ctx-" + mod.__name__.rsplit(".", 1)[1]
        ctx = click.Context(command, info_name=name, **command.context_settings)
        for param in command.get_params(ctx):
            if not isinstance(param, click.Option) or param.hidden:
                continue
            names = param.opts + param.secondary_opts
            longs = [o for o in names if o.startswith("--")]
            for short in (o for o in names if not o.startswith("--")):
                assert len(longs) == 1, (name, names)  # every short flag has one long name
                assert name not in found.get(short, {}), (name, short)
                found.setdefault(short, {})[name] = longs[0]
    return found


def test_short_flags_are_the_documented_table():
    """Each short flag has one meaning across the toolkit, and docs/options.md says which:
    the table and the commands' click definitions are the same, both ways."""
    table, declared = _flag_table(), _declared_short_flags()
    assert set(table) == set(declared)
    for short in table:
        assert table[short] == declared[short], short
    # one meaning: a short flag's long names are one name, but for -q (the query, which
    # ctx-pack calls its task)
    for short, by_command in declared.items():
        assert len(set(by_command.values())) == (2 if short == "-q" else 1), (short, by_command)
    assert set(declared["-h"]) == set(SCRIPTS)


# --- one table of long options (issue 28.9) -------------------------------------------------


def _long_table() -> dict[str, set[str]]:
    """docs/options.md's table of long options: {first option: {commands}}."""
    import re

    text = (ROOT / "docs" / "options.md").read_text()
    section = text.split("## Long options every command of a kind takes", 1)[1]
    section = section.split("\n## ", 1)[0]
    table = {}
    for first, where in re.findall(r"^\| `(-[-\w]+)[^|]*\|[^|]*\| (.+) \|$", section, re.M):
        if where.startswith("every command but "):
            gone = {c.strip() for c in where.removeprefix("every command but ").split(" and ")}
            table[first] = set(SCRIPTS) - gone
        elif where == "every command":
            table[first] = set(SCRIPTS)
        else:
            table[first] = {c.strip() for c in where.split(",")}
    return table


def _declared_long_options() -> dict[str, set[str]]:
    from ctxtools.cli import compact, count, excerpt, mcp, pack, read, repomap, stash

    found: dict[str, set[str]] = {}
    for mod in (compact, count, excerpt, mcp, pack, read, repomap, stash):
        name = "ctx-" + mod.__name__.rsplit(".", 1)[1]
        for param in mod.cli.params:
            for opt in param.opts:
                found.setdefault(opt, set()).add(name)
    return found


def test_long_options_are_the_documented_table():
    """--json, --model, -o, --copy, --files-from, --exclude and --completion are on exactly the
    commands docs/options.md lists; a command with a budget (--tokens) has --model."""
    table, declared = _long_table(), _declared_long_options()
    assert set(table) == {
        "--json",
        "--model",
        "-o",
        "--copy",
        "--files-from",
        "--exclude",
        "--completion",
    }
    for option, commands in table.items():
        assert declared[option] == commands, option
    assert declared["--tokens"] <= declared["--model"]


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("ctx-repomap", ["."]),
        ("ctx-excerpt", ["-q", "main", "a.py"]),
        ("ctx-read", ["--head", "2"]),
        ("ctx-compact", ["--limit", "1000", "t.json"]),
    ],
)
def test_output_writes_the_same_bytes_stdout_gets_and_refuses_a_directory(
    script_runner, tmp_path, monkeypatch, name, args
):
    """Issue 28.9: -o on every command that writes a document, by ctx-pack's rules."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("def main():\n    return 1\n")
    (tmp_path / "t.json").write_text('[{"role": "user", "content": "hi"}]')
    import io

    def run(*more):
        return script_runner.run([name, *args, *more], stdin=io.StringIO("one\ntwo\nthree\n"))

    plain = run()
    assert plain.returncode == 0, plain.stderr
    to_file = run("-o", "out.txt")
    assert to_file.returncode == 0 and to_file.stdout == ""
    assert (tmp_path / "out.txt").read_text() == plain.stdout
    (tmp_path / "d").mkdir()
    refused = run("-o", "d")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.endswith(f"{name}: error: -o d: cannot write (is a directory)\n")


def test_an_error_leaves_the_output_file_as_it_was(script_runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out.txt").write_text("before\n")
    r = script_runner.run(["ctx-read", "no-such-handle", "-o", "out.txt"])
    assert r.returncode == 1
    assert (tmp_path / "out.txt").read_text() == "before\n"


def test_compact_q_is_quiet_and_says_so(script_runner, tmp_path):
    """-q is --query everywhere else: ctx-compact keeps it for old scripts, never silently."""
    t = tmp_path / "t.json"
    t.write_text('[{"role": "user", "content": "hi"}]')
    r = script_runner.run(["ctx-compact", "--limit", "1000", "-q", str(t)])
    assert r.returncode == 0
    assert r.stderr == (
        "ctx-compact: note: -q is --quiet in ctx-compact only (elsewhere it is --query): "
        "type --quiet\n"
    )
    quiet = script_runner.run(["ctx-compact", "--limit", "1000", "--quiet", str(t)])
    assert quiet.stderr == ""


def test_model_picks_the_encoding_of_repomap_and_excerpt(script_runner, tmp_path):
    (tmp_path / "a.py").write_text("def main():\n    return 1\n")
    import json

    for name, args in (
        ("ctx-repomap", [str(tmp_path)]),
        ("ctx-excerpt", ["-q", "main", "--tokens", "500"]),
    ):
        files = [] if name == "ctx-repomap" else [str(tmp_path / "a.py")]
        r = script_runner.run([name, *args, "--model", "gpt-4o", "--json", *files])
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        counter = doc["counter"] if name == "ctx-repomap" else doc["budget"]["counter"]
        assert counter == "o200k_base", name


def test_ctrl_c_while_the_context_closes_is_interrupted_not_aborted(capsys):
    # A Ctrl-C as the command's context closes (after its work, as its resources are let
    # go) is one line and 130, as anywhere else; click would have said "Aborted" after a
    # blank line.
    import click

    from ctxtools.cli.entry import make_main

    @click.command()
    def late() -> None:
        def interrupt() -> None:
            raise KeyboardInterrupt

        click.get_current_context().call_on_close(interrupt)
        click.echo("done")

    main = make_main(late, "ctx-late")
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 130
    captured = capsys.readouterr()
    assert captured.out == "done\n"
    assert captured.err == "ctx-late: interrupted\n"


@pytest.mark.parametrize(
    ("name", "args", "named"),
    [("ctx-pack", "--task 'where is x' .", "--root ."), ("ctx-repomap", "", ".")],
)
def test_a_removed_working_directory_is_one_line_and_exit_1(tmp_path, name, args, named):
    """The shell's directory was deleted under it (a checkout removed and cloned again): a
    relative path cannot be resolved; the command says so in one line naming it (ctx-pack's
    --root and ctx-repomap's DIRECTORY default to "."), no traceback."""
    gone = tmp_path / "checkout"
    gone.mkdir()
    (gone / "a.py").write_text("def x():\n    return 1\n")
    store = tmp_path / "store"
    proc = subprocess.run(
        ["bash", "-c", f"cd '{gone}' && rm -r '{gone}' && exec '{BIN / name}' {args} </dev/null"],
        capture_output=True,
        env={**os.environ, "CTX_STORE": str(store), "CTX_DEBUG": ""},
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == b""
    said = (
        f"{named}: relative, and the current directory no longer exists "
        "(cd to a directory that does, or give an absolute path)"
    )
    assert proc.stderr == f"{name}: error: {said}\n".encode()
    # nothing written but the ruler's own cache (the encoding's ranks, a derived file)
    written = [p for p in store.rglob("*") if p.is_file()] if store.exists() else []
    assert [p for p in written if "tiktoken" not in p.parts] == []


# A command and arguments that print something, run in a directory holding a.py.
PRINTS = {
    "ctx-count": "a.py",
    "ctx-excerpt": "-q compute a.py",
    "ctx-pack": "--task 'fix compute' .",
    "ctx-repomap": ".",
    "ctx-stash": "--name t a.py",
    "ctx-read": "--help",
    "ctx-compact": "--help",
    "ctx-mcp": "--help",
}


def _run_shell(tmp_path, line: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    work = tmp_path / "w"
    work.mkdir(exist_ok=True)
    (work / "a.py").write_text("def compute(x):\n    return x + 1\n" * 40)
    env = {**os.environ, "CTX_STORE": str(tmp_path / "store"), "CTX_DEBUG": ""}
    return subprocess.run(
        ["bash", "-c", line], cwd=work, stdout=stdout, stderr=subprocess.PIPE, env=env
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("name", sorted(PRINTS))
def test_a_full_stdout_is_one_line_and_exit_1(tmp_path, name):
    """stdout on a full disk (/dev/full refuses every write): one line, status 1."""
    with open("/dev/full", "wb") as full:
        proc = _run_shell(tmp_path, f"exec '{BIN / name}' {PRINTS[name]}", stdout=full)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.decode().splitlines()[-1]
    assert last == f"{name}: error: cannot write to standard output: No space left on device"
    assert b"Traceback" not in proc.stderr


@pytest.mark.parametrize("name", sorted(PRINTS))
def test_a_closed_stdout_is_one_line_and_exit_1(tmp_path, name):
    proc = _run_shell(tmp_path, f"exec '{BIN / name}' {PRINTS[name]} >&-")
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.decode().splitlines()[-1]
    said = "standard output is closed (redirect it to a file or a pipe)"
    assert last == f"{name}: error: {said}"
    assert b"Traceback" not in proc.stderr


@pytest.mark.parametrize("name", ["ctx-compact", "ctx-count", "ctx-stash"])
def test_a_closed_stdin_is_one_line_and_exit_1(tmp_path, name):
    proc = _run_shell(tmp_path, f"exec '{BIN / name}' <&-")
    assert proc.returncode == 1, proc.stderr
    said = "standard input is closed (give a file, or pipe the input in)"
    assert proc.stderr.decode() == f"{name}: error: {said}\n"
    assert proc.stdout == b""


def test_a_closed_stdin_does_not_matter_when_files_are_given(tmp_path):
    proc = _run_shell(tmp_path, f"exec '{BIN / 'ctx-count'}' --heuristic a.py <&-")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().isdigit()


LEAVING = """
import atexit, os, sys
import click
from ctxtools.cli.entry import make_main

MARKS = sys.argv.pop(1)

class Held:
    def __del__(self, _open=open, _path=os.path.join(MARKS, "teardown")):
        _open(_path, "w").close()  # what the interpreter's teardown runs (names bound early)

held = Held()
atexit.register(lambda: open(os.path.join(MARKS, "atexit"), "w").close())

@click.command()
@click.argument("status", type=int)
def demo(status):
    click.echo("x" * 200_000)  # more than any buffer: all of it must arrive
    sys.stderr.write("said\\n")
    return status

main = make_main(demo, "ctx-demo")
if __name__ == "__main__":
    sys.exit(main())
"""


@pytest.mark.parametrize("status", [0, 3])
def test_a_console_script_leaves_without_the_teardown(tmp_path, status):
    """A command's process ends once its output is flushed and its exit handlers have run:
    the interpreter's teardown (freeing every object one by one: 60-100 ms after a Django
    pack) is skipped. Called in-process (a test, a library), the entry point exits as usual."""
    script = tmp_path / "ctx-demo"
    script.write_text(LEAVING)
    marks = tmp_path / "marks"
    marks.mkdir()
    proc = subprocess.run(
        [sys.executable, str(script), str(marks), str(status)], capture_output=True, check=False
    )
    assert proc.returncode == status, proc.stderr
    assert proc.stdout == b"x" * 200_000 + b"\n" and proc.stderr == b"said\n"
    assert sorted(p.name for p in marks.iterdir()) == ["atexit"]  # no teardown ran
    # the same script under another name is no console script of its own: a usual exit
    other = tmp_path / "demo.py"
    other.write_text(LEAVING)
    proc = subprocess.run(
        [sys.executable, str(other), str(marks), str(status)], capture_output=True, check=False
    )
    assert proc.returncode == status and len(proc.stdout) == 200_001
    assert sorted(p.name for p in marks.iterdir()) == ["atexit", "teardown"]


RULER_MISTAKES = [
    (["--tokenizer", "no-such-tokenizer.json"], "tokenizer file not found: no-such-tokenizer.json"),
    (["--exact", "--heuristic"], "--heuristic and --exact contradict each other"),
    (["--encoding", "o300k_base"], "unknown encoding 'o300k_base'"),
]


@pytest.mark.process
@pytest.mark.parametrize("flags,said", RULER_MISTAKES)
@pytest.mark.parametrize(
    "argv",
    [["ctx-excerpt", "README.md", "-q", "install"], ["ctx-read"], ["ctx-count", "README.md"]],
    ids=["excerpt-without-tokens", "read-without-count", "count"],
)
def test_a_mistaken_ruler_option_is_said_even_when_the_run_does_not_count(
    script_runner, argv, flags, said
):
    """ctx-excerpt without --tokens and ctx-read without --count make no ruler: a typo in
    --tokenizer or --encoding, or two flags that contradict, were silently ignored there."""
    root = Path(__file__).resolve().parents[2]
    r = script_runner.run([*argv, *flags], stdin=__import__("io").StringIO("hello\n"), cwd=root)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stdout == ""
    line = r.stderr.strip()
    assert "\n" not in line and line.startswith(f"{argv[0]}: error: {said}")


class _Trickle:
    """A raw stream as ``python -u`` gives stdout: each write takes at most 1,000 bytes,
    and the first one, as a full non-blocking pipe does, none (None)."""

    def __init__(self, sink):
        self.got = bytearray()
        self.calls = 0
        self.sink = sink  # a descriptor that is writable at once, for the wait

    def write(self, data):
        self.calls += 1
        if self.calls == 1:
            return None
        part = bytes(memoryview(data).cast("B")[:1000])
        self.got += part
        return len(part)

    def fileno(self):
        return self.sink.fileno()


def test_a_short_write_is_finished_not_dropped():
    """Under ``python -u`` stdout is the raw file: a write may take part of the bytes and
    say how many. ``Checked`` writes the rest (the rest was lost, with status 0)."""
    from ctxtools.cli.stdio import Checked

    data = bytes(range(256)) * 40
    with open(os.devnull, "wb") as sink:
        raw = _Trickle(sink)
        assert Checked(raw).write(data) == len(data)
    assert bytes(raw.got) == data and raw.calls > 10


def test_under_python_u_a_pipe_closed_midway_is_not_a_success(tmp_path):
    """``PYTHONUNBUFFERED=1 ctx-count --head N big | head -c 10``: the reader goes while a
    1.3 MB write is blocked, the kernel reports the part it took; the command must not
    then exit 0 as if all of it had been written (it did, in silence)."""
    import time

    big = tmp_path / "big.txt"
    big.write_bytes(b"".join(b"%07d abcdefghijklmnopqrstuvwxyz\n" % i for i in range(40_000)))
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "CTX_STORE": str(tmp_path / "store")}
    proc = subprocess.Popen(
        [str(BIN / "ctx-count"), "--head", "1000000", str(big)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    assert proc.stdout.read(10)
    time.sleep(0.5)  # the writer is now blocked inside its one big write
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 1, err
    assert b"Traceback" not in err
