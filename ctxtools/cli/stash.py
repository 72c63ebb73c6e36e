"""ctx-stash: not implemented yet (issue 3)."""

from ctxtools.cli.common import not_implemented

cli, main = not_implemented("ctx-stash", "issue 3")
