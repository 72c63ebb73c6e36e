#!/usr/bin/env python3
"""Generate man/ctx-*.1 and completions/ from the click commands.

    python tools/gen_docs.py            # write into man/ and completions/
    python tools/gen_docs.py --out DIR  # write into DIR/man and DIR/completions (the test)

The man pages carry ctxtools.DOCS_DATE, never today's date, so that the same code gives
the same bytes on any day. Completion scripts are exactly what
``_CTX_COUNT_COMPLETE=bash_source ctx-count`` prints (likewise zsh, fish).
"""

from __future__ import annotations

import argparse
import importlib
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


def generate(out: Path) -> list[Path]:
    from click.shell_completion import get_completion_class
    from click_man.core import write_man_pages

    from ctxtools import DOCS_DATE, __version__

    man_dir = out / "man"
    comp_dir = out / "completions"
    for d in (man_dir, comp_dir):
        d.mkdir(parents=True, exist_ok=True)
    written = []
    for name, target in console_scripts().items():
        cmd = load_command(target)
        if cmd.short_help is None and cmd.help:
            # The man page's NAME line: the docstring's whole first line, not 45 characters.
            cmd.short_help = cmd.help.strip().splitlines()[0].rstrip(".")
        write_man_pages(name, cmd, version=__version__, target_dir=str(man_dir), date=DOCS_DATE)
        written.append(man_dir / f"{name}.1")
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
