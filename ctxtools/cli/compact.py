"""ctx-compact: not implemented yet (issue 6)."""

from ctxtools.cli.common import not_implemented

cli, main = not_implemented("ctx-compact", "issue 6")
