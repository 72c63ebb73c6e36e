"""The option tables (ctxtools.options): every option of every command is in its MCP tool
or says why it is the command line's only; the tables and the click commands agree; ctx-pack's
click options, PackRequest's fields and the pack tool are made from one table."""

from __future__ import annotations

import dataclasses
import importlib

import click
import pytest

from ctxtools.mcp.schema import ORDERS, PROGS, TABLES, TOOLS
from ctxtools.options import Opt, call_fields, mcp_properties
from ctxtools.options.pack import MCP_ORDER, PACK
from ctxtools.pack import PackRequest

COMMANDS = sorted(set(PROGS.values()))


def _command(prog: str) -> click.Command:
    return importlib.import_module(f"ctxtools.cli.{prog.removeprefix('ctx-')}").cli


def _tables(prog: str) -> list[tuple[Opt, ...]]:
    return [TABLES[tool] for tool, p in PROGS.items() if p == prog]


def uncovered(command: click.Command, tables: list[tuple[Opt, ...]]) -> list[str]:
    """The options of COMMAND that no table's entry puts in an MCP tool or calls the command
    line's only, with a reason."""
    entries: dict[str, list[Opt]] = {}
    for table in tables:
        for o in table:
            entries.setdefault(o.name, []).append(o)
    return [
        p.name
        for p in command.params
        if not any(o.mcp is not None or (o.cli_only or "").strip() for o in entries.get(p.name, []))
    ]


@pytest.mark.parametrize("prog", COMMANDS)
def test_every_option_is_in_its_tool_or_says_why_not(prog):
    assert uncovered(_command(prog), _tables(prog)) == []


def test_an_option_added_without_an_entry_is_caught():
    command = _command("ctx-pack")
    extra = click.Option(["--shiny"], is_flag=True)
    grown = click.Command("ctx-pack", params=[*command.params, extra])
    assert uncovered(grown, _tables("ctx-pack")) == ["shiny"]
    silent = (*PACK, Opt("shiny", ("--shiny",), cli_only=" "))  # a reason must say something
    assert uncovered(grown, [silent]) == ["shiny"]


@pytest.mark.parametrize("prog", COMMANDS)
def test_no_table_names_an_option_the_command_lacks(prog):
    params = {p.name for p in _command(prog).params}
    for table in _tables(prog):
        stale = [o.name for o in table if o.decl != "stdin" and o.name not in params]
        assert stale == [], prog


@pytest.mark.parametrize("tool", sorted(TABLES))
def test_an_entry_is_in_the_tool_or_the_command_lines_not_both(tool):
    for o in TABLES[tool]:
        assert not (o.mcp is not None and o.cli_only), o.name
    assert TOOLS[tool]["properties"] == mcp_properties(TABLES[tool], ORDERS.get(tool, ()))


# Every command's click options are made from its table (the run tool's is ctx-stash's).
MADE = {prog: tool for tool, prog in PROGS.items() if tool != "run"}


@pytest.mark.parametrize("prog", sorted(MADE))
def test_a_command_declares_its_options_from_its_table_in_its_order(prog):
    table = TABLES[MADE[prog]]
    params = _command(prog).params
    assert [p.name for p in params] == [o.name for o in table if o.decl != "stdin"]
    helps = {p.name: p.help for p in params if isinstance(p, click.Option)}
    for o in table:
        if o.decl == "option" or o.help is not None:
            assert helps[o.name] == o.help, o.name


def test_the_fields_the_pack_table_names_are_pack_request_fields():
    fields = {f.name for f in dataclasses.fields(PackRequest)}
    named = [o.field for o in PACK if o.field is not None]
    assert set(named) <= fields and len(named) == len(set(named))


def test_a_pack_call_fills_the_request_fields_its_table_names():
    args = {"tokens": 5000, "role": "reviewer", "include": ["*.po"], "fill": True, "no_map": True}
    fields = call_fields(PACK, args)
    assert fields == {"tokens": 5000, "role": "reviewer", "include": ["*.po"], "fill": True}
    req = PackRequest(task="t", **fields)
    assert (req.tokens, req.role, req.fill, req.use_map) == (5000, "reviewer", True, True)


def test_the_newer_ctx_pack_options_are_decided():
    by_name = {o.name: o for o in PACK}
    for name in ("split", "copy", "output", "allow_secrets"):
        assert by_name[name].mcp is None and by_name[name].cli_only, name
    assert set(MCP_ORDER) <= {o.mcp_name for o in PACK if o.mcp is not None}


def test_the_tables_import_nothing_of_the_toolkit_but_defaults():
    """--help reads the tables: they must load no library package (start-up cost)."""
    import subprocess
    import sys

    tables = ", ".join(f"ctxtools.options.{t}" for t in ("count", "stash", "read", "excerpt"))
    code = (
        "import sys; before = set(sys.modules); "
        f"import {tables}, ctxtools.options.repomap, ctxtools.options.pack, "
        "ctxtools.options.compact; "
        "print(sorted(m for m in set(sys.modules) - before if m.startswith('ctxtools')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = eval(out.stdout)
    assert [m for m in loaded if not m.startswith("ctxtools.options")] == [
        "ctxtools",
        "ctxtools.defaults",
    ]
