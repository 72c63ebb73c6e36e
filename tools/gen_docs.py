#!/usr/bin/env python3
r"""Generate man/ctx-*.1 and completions/ from the click commands.

    python tools/gen_docs.py            # write into man/ and completions/
    python tools/gen_docs.py --out DIR  # write into DIR/man and DIR/completions (the test)

The man pages carry ctxtools.DOCS_DATE, never today's date, so that the same code gives
the same bytes on any day. They are written here from the click objects (NAME, SYNOPSIS,
DESCRIPTION from the docstring, OPTIONS from the help records), as plain roff any man
reader takes: every text line escaped (a leading ``.`` or ``'`` is no macro, ``\`` is
``\e``, ``-`` is ``\-`` so an option is never broken or turned into a hyphen, anything
past ASCII a ``\[uXXXX]`` escape), hyphenation off, and a docstring block marked with
click's ``\b`` (the examples) kept verbatim between ``.nf`` and ``.fi``.

Completion scripts are exactly what ``_CTX_COUNT_COMPLETE=bash_source ctx-count`` prints
(likewise zsh, fish), side by side in completions/ under the names the shells look for:
NAME.bash, _NAME, NAME.fish; the wheel installs each into its shell's directory
(pyproject.toml's data-files).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHELLS = {"bash": "{name}.bash", "zsh": "_{name}", "fish": "{name}.fish"}


def console_scripts() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(sorted(data["project"]["scripts"].items()))


def load_command(target: str):
    module, _, attr = target.partition(":")
    mod = importlib.import_module(module)
    if attr != "main":
        raise SystemExit(f"{target}: entry points must be <module>:main")
    return mod.cli


def complete_var(name: str) -> str:
    return "_" + name.replace("-", "_").upper() + "_COMPLETE"


# --- man pages ------------------------------------------------------------------------------


def roff(text: str) -> str:
    """TEXT as one roff text line: escapes, and never a control line."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\e")
        elif ch == "-":
            out.append("\\-")
        elif ch == "\t" or " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) >= 0xA0:
            out.append(f"\\[u{ord(ch):04X}]")
        # other control characters (click's \b marker) carry no text
    line = "".join(out)
    return "\\&" + line if line.startswith((".", "'")) else line


def _sections(help_text: str) -> tuple[list[str], list[str], list[str]]:
    """The paragraphs of a command's docstring as (DESCRIPTION, EXIT STATUS, EXAMPLES).

    --help shows what comes before click's \\f mark: the summary, a short paragraph, the
    exit statuses, the examples and a pointer to this page; the page holds all of it, the
    long text after the mark in DESCRIPTION, without the pointer to itself."""
    short, _, long = inspect.cleandoc(help_text).partition("\f")
    description, exits, examples = [], [], []
    for para in re.split(r"\n[ \t]*\n", short.strip()):
        if para.startswith("Exit status:"):
            exits.append(para)
        elif para.startswith("\b\nExamples:"):
            examples.append("\b\n" + para.split("\n", 2)[2])
        elif not para.startswith("The manual, man "):
            description.append(para)
    description += [p for p in re.split(r"\n[ \t]*\n", long.strip()) if p]
    return description, exits, examples


def _description(paragraphs: list[str]) -> list[str]:
    lines: list[str] = []
    for para in paragraphs:
        rows = para.split("\n")
        lines.append(".PP")
        if rows[0].strip() == "\b":
            lines.append(".nf")
            lines.extend(roff(row.rstrip()) for row in rows[1:])
            lines.append(".fi")
        else:
            lines.extend(roff(row.strip()) for row in rows if row.strip())
    return lines


def _option_tag(names: str) -> str:
    parts = []
    for name in names.split(", "):
        flag, _, metavar = name.partition(" ")
        tag = f"\\fB{roff(flag)}\\fR"
        parts.append(f"{tag} \\fI{roff(metavar)}\\fR" if metavar else tag)
    return ", ".join(parts)


def man_page(name: str, cmd, version: str, date: str) -> str:
    import click

    ctx = click.Context(cmd, info_name=name)
    summary = inspect.cleandoc(cmd.help).splitlines()[0].rstrip(".")
    lines = [
        f'.TH "{name.upper()}" "1" "{date}" "{version}" "{name} Manual"',
        ".nh",  # no hyphenation: an option or a path is never cut in two
        ".ad l",
        ".SH NAME",
        f"{roff(name)} \\- {roff(summary)}",
        ".SH SYNOPSIS",
        f".B {roff(name)}",
        roff(" ".join(cmd.collect_usage_pieces(ctx))),
    ]
    description, exits, examples = _sections(cmd.help)
    lines += [".SH DESCRIPTION", *_description(description), ".SH OPTIONS"]
    for param in cmd.params:
        if not isinstance(param, click.Option) or param.hidden:
            continue
        names, help_text = param.get_help_record(ctx)
        lines += [".TP", _option_tag(names), roff(help_text or "")]
    if exits:
        lines += [".SH EXIT STATUS", *_description(exits)]
    if examples:
        lines += [".SH EXAMPLES", *_description(examples)]
    return "\n".join(lines) + "\n"


# --- writing --------------------------------------------------------------------------------


def generate(out: Path) -> list[Path]:
    from click.shell_completion import get_completion_class

    from ctxtools import DOCS_DATE, __version__
    from ctxtools.cli.completion import register

    register()  # the toolkit's fish script, as the commands print it
    man_dir = out / "man"
    comp_dir = out / "completions"
    for d in (man_dir, comp_dir):
        d.mkdir(parents=True, exist_ok=True)
    written = []
    for name, target in console_scripts().items():
        cmd = load_command(target)
        page = man_dir / f"{name}.1"
        page.write_text(man_page(name, cmd, __version__, DOCS_DATE), encoding="ascii")
        written.append(page)
        for shell, pattern in SHELLS.items():
            cls = get_completion_class(shell)
            source = cls(cmd, {}, name, complete_var(name)).source()
            path = comp_dir / pattern.format(name=name)
            path.write_text(source, encoding="utf-8")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT, help="root to write man/ and completions/"
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    for path in generate(args.out):
        print(path.relative_to(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
