"""ctx-pack: not implemented yet (a later issue)."""

from ctxtools.cli.common import not_implemented

cli, main = not_implemented("ctx-pack", "a later issue")
